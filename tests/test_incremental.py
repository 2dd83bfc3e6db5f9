"""Maintained queries: after every batch the answer equals recomputation, and the changes add up.

The random update streams run in both placements: many examples with the
indexes on the driver (``placement="driver"``: a batch runs no Spark job) and
a few with them on the executors (Spark jobs); the counts scale with the
hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.errors import (
    BatchAlreadyAppliedError,
    InvalidDeltaError,
    NegativeCountError,
    NonMonotoneDeltaError,
    NotMaintainableError,
    VersionGapError,
)
from faq.factor import factor_of
from faq import maintain
from faq.incremental import MaintainedQuery
from faq.incremental.state import ANSWER
from faq.language import make_query
from tests.brute_force import PY_SEMIRINGS, assert_same_answer, brute_force, same_value
from tests.conftest import examples, search_settings
from tests.strategies import DOMAIN, INF, factors_of, random_faq

pytestmark = pytest.mark.usefixtures("spark")

# Examples per random stream test in the suite: indexes on the executors (Spark jobs), on the driver.
SPARK = 4
IN_PROCESS = 10

# No shrinking: each example starts Spark jobs, and shrinking one failure takes minutes.
STREAM = search_settings(SPARK, HealthCheck.function_scoped_fixture)

# Non-zero values a ring delta may carry (zero rows would change nothing).
RING_DELTAS = {"integer": [-2, -1, 1, 2, 3], "real": [-1.5, -0.5, 0.5, 1.0, 2.25]}


def answer_dict(mq: MaintainedQuery, in_process: bool = False) -> dict:
    """{key: value} of the answer: through :meth:`~MaintainedQuery.answer`'s DataFrame, or (``in_process``)
    the rows it is made from, read on the driver without a Spark call."""
    if in_process:
        table = mq.state.table(ANSWER)
        return {tuple(r[:-1]): r[-1] for r in zip(*(c.to_pylist() for c in table.columns))}
    return {tuple(r[:-1]): r[-1] for r in mq.answer().df.collect()}


def check_answer(mq, atoms, data, free, semiring, in_process=False):
    expected = brute_force(atoms, data, free, semiring, DOMAIN)
    assert_same_answer(answer_dict(mq, in_process), expected)
    return expected


def deltas_of(batch, data, semiring, in_process=False):
    """The batch's rows as delta factors, with the arity of the factor's rows in ``data``; or
    (``in_process``) as the tuples themselves, which a batch reads without a Spark job."""
    if in_process:
        return batch
    arity = {n: len(rows[0]) - 1 for n, rows in data.items()}
    return {n: factor_of(rows, [f"c{i}" for i in range(arity[n])], semiring) for n, rows in batch.items()}


def merged(rows, semiring):
    add = PY_SEMIRINGS[semiring][0]
    out: dict = {}
    for *key, value in rows:
        out[tuple(key)] = add(out[tuple(key)], value) if tuple(key) in out else value
    return out


@st.composite
def ring_batches(draw, data, semiring, n_batches=3):
    """Batches of signed deltas: inserts, deletes of existing rows, value changes, repeats of one key."""
    batches = []
    for _ in range(n_batches):
        batch = {}
        for name, rows in data.items():
            if not draw(st.booleans()):
                continue
            arity = len(rows[0]) - 1 if rows else None
            if arity is None:
                continue
            keys = draw(st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), min_size=1, max_size=4))
            batch[name] = [(*k, draw(st.sampled_from(RING_DELTAS[semiring]))) for k in keys]
        batches.append(batch)
    return batches


PLACEMENTS = ["driver", "executors"]
# (placement, examples): the random streams' placements and how many examples each runs.
STREAM_PLACEMENTS = [("driver", IN_PROCESS), ("executors", SPARK)]


@st.composite
def improving_batches(draw, data, semiring, n_batches=3):
    """Insert-only batches that improve values: smaller (min_plus) or True (boolean)."""
    state = {n: merged(rows, semiring) for n, rows in data.items()}
    batches = []
    for _ in range(n_batches):
        batch = {}
        for name, rows in data.items():
            arity = len(rows[0]) - 1
            keys = draw(st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), min_size=1, max_size=3,
                                 unique=True))
            chosen = []
            for key in keys:
                old = state[name].get(key)
                if semiring == "boolean":
                    new = True
                    if old:
                        continue
                else:
                    new = draw(st.sampled_from([-2.0, 0.0, 1.0, 3.5]))
                    if old is not None and new >= old:
                        continue
                chosen.append((*key, new))
                state[name][key] = new
            if chosen:
                batch[name] = chosen
        batches.append(batch)
    return batches


@contextmanager
def maintained_example(case, semiring: str, placement: str, filler):
    """A random case maintained with ``placement``: ``(mq, atoms, data, free, local)``.

    A factor without rows gets one row of zeros valued ``filler`` (a query needs every factor);
    ``local``: tuples in and answers read on the driver, no Spark job an example (placement driver).
    """
    atoms, data, free = case
    data = {n: list(rows) or [(*(0,) * len(next(vs for f, vs in atoms if f == n)), filler)] for n, rows in data.items()}
    with maintain(make_query(atoms, free, semiring=semiring), factors_of(atoms, data, semiring),
                  placement=placement) as mq:
        assert mq.placement == placement and mq.placement_reason
        yield mq, atoms, data, free, placement == "driver"


def signed_stream(mq, batches, atoms, data, free, semiring: str, local: bool) -> None:
    """Ring batches (inserts and deletes as signed values): after each, the answer is brute force's and
    the change rows are the answer's differences; over the stream they sum to last minus first."""
    before = first = check_answer(mq, atoms, data, free, semiring, local)
    total: dict = {}
    for batch in batches:
        change = mq.apply(deltas_of(batch, data, semiring, local)).collect()
        for n, rows in batch.items():
            data[n].extend(rows)
        after = check_answer(mq, atoms, data, free, semiring, local)
        diffs = {tuple(r[:-2]): r[-1] for r in change}
        assert all(r["version"] == mq.version for r in change)
        for key in set(before) | set(after):
            expected = after.get(key, 0) - before.get(key, 0)
            assert same_value(diffs.get(key, 0), expected, rel=1e-9) or abs(expected) < 1e-9, key
        for key, d in diffs.items():
            total[key] = total.get(key, 0) + d
        before = after
    for key in set(first) | set(before):
        expected = before.get(key, 0) - first.get(key, 0)
        assert same_value(total.get(key, 0), expected, rel=1e-9) or abs(expected) < 1e-9, key


def improving_stream(mq, batches, atoms, data, free, semiring: str, local: bool) -> None:
    """Insert-only improving batches: after each, the answer is brute force's and the change rows are
    exactly the keys whose value changed, with their new values."""
    before = check_answer(mq, atoms, data, free, semiring, local)
    for batch in batches:
        change = {tuple(r[:-2]): r[-1] for r in mq.apply(deltas_of(batch, data, semiring, local)).collect()}
        for n, rows in batch.items():
            data[n].extend(rows)
        after = check_answer(mq, atoms, data, free, semiring, local)
        changed = {k: v for k, v in after.items() if k not in before or not same_value(before[k], v)}
        assert set(change) == set(changed), (change, changed)
        for key, value in changed.items():
            assert same_value(change[key], value)
        before = after


@pytest.mark.parametrize("placement, n", STREAM_PLACEMENTS)
@pytest.mark.parametrize("semiring", ["integer", "real", "min_plus", "boolean"])
def test_random_update_streams(semiring, placement, n):
    """Random FAQs kept through random batch streams, checked against brute force after every batch:
    signed inserts and deletes in the rings (integer, real), improving inserts in the idempotent
    semirings (min_plus, boolean)."""
    ring = semiring in RING_DELTAS

    @settings(STREAM, max_examples=examples(n))
    @given(random_faq(semiring), st.data())
    def check(case, stream):
        filler = RING_DELTAS[semiring][0] if ring else PY_SEMIRINGS[semiring][3]
        with maintained_example(case, semiring, placement, filler) as (mq, atoms, data, free, local):
            if ring:
                signed_stream(mq, stream.draw(ring_batches(data, semiring)), atoms, data, free, semiring, local)
            else:
                improving_stream(mq, stream.draw(improving_batches(data, semiring)), atoms, data, free, semiring,
                                 local)

    check()


# --- hand-made cases ---------------------------------------------------------------

TRIANGLE = "count() := edge(a,b), edge(b,c), edge(a,c)"


def edges(rows, semiring="counting"):
    return factor_of([(s, d, v) for s, d, v in rows], ["src", "dst"], semiring)


def test_updates_that_form_a_triangle_together_count_once():
    with maintain(TRIANGLE, {"edge": edges([(8, 9, 1)])}) as mq:
        assert mq.scalar() == 0
        change = mq.apply({"edge": edges([(1, 2, 1), (2, 3, 1), (1, 3, 1)])}).collect()
        assert [(r.version, r.diff) for r in change] == [(1, 1)]
        assert mq.scalar() == 1
        # Deleting two of its edges in one batch removes it once.
        change = mq.apply({"edge": edges([(1, 2, -1), (2, 3, -1)], "integer")}).collect()
        assert [(r.version, r.diff) for r in change] == [(2, -1)]
        assert mq.scalar() == 0


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_counting_refuses_deleting_a_missing_row_and_keeps_its_version(placement):
    with maintain(TRIANGLE, {"edge": edges([(1, 2, 1), (2, 3, 1), (1, 3, 1)])}, placement=placement) as mq:
        with pytest.raises(NegativeCountError) as err:
            mq.apply({"edge": edges([(5, 6, -1)], "integer")})
        assert err.value.parameters["count"] == 1 and err.value.parameters["example"] == (5, 6)
        assert mq.version == 0 and mq.scalar() == 1


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_min_plus_refuses_deletions_and_worsening_unless_recomputing(placement):
    dist = factor_of([(1, 2, 5.0), (2, 3, 1.0)], ["s", "t"], "min_plus")
    query = "d(x, z) := w(x, y), w(y, z)"
    with maintain(query, {"w": dist}, placement=placement) as mq:
        assert answer_dict(mq) == {(1, 3): 6.0}
        with pytest.raises(NonMonotoneDeltaError) as err:
            mq.apply({"w": factor_of([(1, 2, 7.0)], ["s", "t"], "min_plus")})
        assert err.value.parameters["kind"] == "worsening" and err.value.parameters["example"] == (1, 2)
        with pytest.raises(NonMonotoneDeltaError) as err:
            mq.apply({"w": factor_of([(2, 3, INF)], ["s", "t"], "min_plus")})
        assert err.value.parameters["kind"] == "deletion"
        assert mq.version == 0 and answer_dict(mq) == {(1, 3): 6.0}
        # An improvement is taken; an equal value changes nothing.
        change = mq.apply({"w": factor_of([(1, 2, 2.0), (2, 3, 1.0)], ["s", "t"], "min_plus")}).collect()
        assert [(r.x, r.z, r.diff) for r in change] == [(1, 3, 3.0)]
        # Recomputation takes a worsening (the value is set).
        change = mq.apply({"w": factor_of([(1, 2, 9.0)], ["s", "t"], "min_plus")}, recompute=True).collect()
        assert [(r.x, r.z, r.version, r.diff) for r in change] == [(1, 3, 2, 10.0)]
        assert answer_dict(mq) == {(1, 3): 10.0}


def test_versions_refuse_a_batch_twice_and_a_gap():
    with maintain(TRIANGLE, {"edge": edges([(1, 2, 1)])}) as mq:
        mq.apply({"edge": edges([(2, 3, 1)])}, version=1)
        with pytest.raises(BatchAlreadyAppliedError) as err:
            mq.apply({"edge": edges([(2, 3, 1)])}, version=1)
        assert err.value.parameters == {"version": 1, "current": 1}
        with pytest.raises(VersionGapError):
            mq.apply({"edge": edges([(1, 3, 1)])}, version=3)
        assert mq.scalar() == 0
        mq.apply({"edge": edges([(1, 3, 1)])}, version=2)
        assert mq.scalar() == 1


def test_bad_deltas_raise_named_errors():
    with maintain(TRIANGLE, {"edge": edges([(1, 2, 1)])}) as mq:
        with pytest.raises(InvalidDeltaError) as err:
            mq.apply({"nodes": edges([(1, 2, 1)])})
        assert err.value.parameters["known"] == ["edge"]
        with pytest.raises(InvalidDeltaError):
            mq.apply({"edge": factor_of([(1, 1)], ["x"], "counting")})
        assert mq.version == 0


def test_mixed_aggregates_need_recompute():
    f = factor_of([(0, 1, 0.5), (1, 1, 2.0)], ["x", "y"], "real")
    query = make_query([("f", "xy")], [], semiring="real", aggregates={"y": "max_product"})
    with maintain(query, {"f": f}) as mq:
        with pytest.raises(NotMaintainableError):
            mq.apply({"f": factor_of([(0, 0, 1.0)], ["x", "y"], "real")})
        mq.apply({"f": factor_of([(0, 0, 3.0)], ["x", "y"], "real")}, recompute=True)
        # max_y Σ_x f: y=0 -> 3.0, y=1 -> 2.5
        assert same_value(mq.scalar(), 3.0)


def test_long_streams_keep_no_caches_and_compact_the_overlay(spark, monkeypatch):
    """Many small batches: no Spark cache is made per batch, and the overlay is folded into the base."""
    import random

    import faq.incremental.index as index_module

    monkeypatch.setattr(index_module, "OVERLAY_MIN_ROWS", 8)  # compact often on this small graph
    rng = random.Random(11)
    edges_rows = {(rng.randrange(40), rng.randrange(40)) for _ in range(200)}
    start = factor_of([(u, v, 1) for u, v in sorted(edges_rows) if u != v], ["src", "dst"], "counting")
    present = {(u, v) for u, v in edges_rows if u != v}

    def persistent() -> int:
        return spark.sparkContext._jsc.getPersistentRDDs().size()

    with maintain(TRIANGLE, {"edge": start}) as mq:
        before = persistent()
        overlays = []
        for k in range(20):
            rows = []
            for _ in range(3):
                e = (rng.randrange(40), rng.randrange(40))
                if e[0] == e[1]:
                    continue
                if e in present:
                    present.discard(e)
                    rows.append((*e, -1))
                else:
                    present.add(e)
                    rows.append((*e, 1))
            if rows:
                mq.apply({"edge": rows})
            relation = mq.state.relations["edge"]
            # the levels since the last freeze (a compaction in flight holds the frozen ones as well)
            overlays.append(relation.overlay_rows - sum(len(level) for level in relation.frozen))
            expected = sum(1 for (a, b) in present for c in range(40) if (b, c) in present and (a, c) in present)
            assert mq.scalar() == expected
        assert persistent() == before
        assert mq.state.relations["edge"].compactions >= 2
        assert max(overlays) <= max(8, int(0.1 * len(present)) + 3), overlays


def test_a_durable_query_reopens_exactly_while_a_compaction_is_in_flight(tmp_path, monkeypatch):
    """With ``path=``: batches keep committing while a compaction is held in flight; ``open`` of the
    directory then, and ``save`` to a new one, give the same count as a recount; ``settle`` swaps it in."""
    import random

    import faq.incremental.compaction as compaction_module
    import faq.incremental.index as index_module

    monkeypatch.setattr(index_module, "OVERLAY_MIN_ROWS", 6)
    monkeypatch.setattr(index_module, "RECENT_MAX_ROWS", 2)
    monkeypatch.setattr(compaction_module, "HOLD", True)  # a compaction stays in flight until settled
    rng = random.Random(5)
    present = {(u, v) for u, v in {(rng.randrange(12), rng.randrange(12)) for _ in range(40)} if u != v}
    start = factor_of([(u, v, 1) for u, v in sorted(present)], ["src", "dst"], "counting")

    def recount() -> int:
        return sum(1 for (a, b) in present for c in range(12) if (a, c) in present and (b, c) in present)

    mq = maintain(TRIANGLE, {"edge": start}, state=str(tmp_path / "state"))
    relation = mq.state.relations["edge"]
    reopened = 0
    for k in range(12):
        rows = []
        for _ in range(3):
            e = (rng.randrange(12), rng.randrange(12))
            if e[0] != e[1] and e not in {(r[0], r[1]) for r in rows}:
                rows.append((*e, -1 if e in present else 1))
                (present.discard if e in present else present.add)(e)
        mq.apply({"edge": rows})
        assert mq.scalar() == recount()
        if relation.compacting and reopened < 2:
            again = MaintainedQuery.open(str(tmp_path / "state"))
            assert again.scalar() == recount() and again.version == mq.version
            again.close()
            reopened += 1
    assert reopened >= 1
    assert relation.compacting  # still held: save() to a new directory settles it first
    mq.save(str(tmp_path / "copy"))
    assert not relation.compacting and relation.compactions >= 1
    assert MaintainedQuery.open(str(tmp_path / "copy")).scalar() == recount()
    mq.close()
