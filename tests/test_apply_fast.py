"""The small-batch apply path (issue 50, items 1 and 2): exact against a recount after every batch.

A batch's compiled rules run in one call of the loop (:func:`faq.incremental.rule_kernel.aggregate_rules`,
small tries read through one scratch buffer), rules reading the new state read the batch merged into the
recent level (:meth:`faq.incremental.index.ResidentRelation.new_runs`, the level the commit then keeps),
and a counting batch looks up only its deletions.  These tests drive those paths -- single changes,
batches past the loop's few-seed limit, cancelling rows, a compaction held in flight, refused batches --
and compare every answer with a recount in Python.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from faq import maintain
from faq.errors import NegativeCountError
from faq.factor import factor_of
from tests.conftest import search_settings

pytestmark = pytest.mark.usefixtures("spark")

TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"
PATH2 = "count() := edge(a,b), edge(b,c)"
NODES = 9


def recount(query: str, edges: dict) -> float:
    """The query's value over ``edges`` ({(u, v): multiplicity or weight}), by brute force."""
    total = 0
    for (a, b), x in edges.items():
        for (b2, c), y in edges.items():
            if b2 != b:
                continue
            if query == PATH2:
                total += x * y
            elif (a, c) in edges:
                total += x * edges[(a, c)] * y
    return total


def small_overlay(monkeypatch, hold: bool) -> None:
    """Overlay limits small enough for a few batches to fill the recent level, move it to the older one
    and start compactions (held in flight with ``hold``)."""
    import faq.incremental.compaction as compaction_module
    import faq.incremental.index as index_module

    monkeypatch.setattr(index_module, "OVERLAY_MIN_ROWS", 12)
    monkeypatch.setattr(index_module, "RECENT_MAX_ROWS", 4)
    monkeypatch.setattr(compaction_module, "HOLD", hold)


@st.composite
def streams(draw):
    """Initial edges with multiplicities, and batches of (u, v, ±k) rows that keep every count >= 0."""
    start = {}
    for _ in range(draw(st.integers(0, 25))):
        u, v = draw(st.integers(0, NODES - 1)), draw(st.integers(0, NODES - 1))
        start[(u, v)] = start.get((u, v), 0) + draw(st.integers(1, 2))
    counts = dict(start)
    batches = []
    for _ in range(draw(st.integers(1, 6))):
        rows = []
        for _ in range(draw(st.sampled_from([1, 1, 2, 5, 40]))):  # 40 rows: past the loop's few seeds
            u, v = draw(st.integers(0, NODES - 1)), draw(st.integers(0, NODES - 1))
            have = counts.get((u, v), 0)
            change = draw(st.sampled_from([-1, 1, 2])) if have else draw(st.sampled_from([1, 2]))
            counts[(u, v)] = have + change
            rows.append((u, v, change))
        batches.append(rows)
    return start, batches


@pytest.mark.parametrize("query", [TRIANGLE, PATH2])
@pytest.mark.parametrize("hold", [False, True])
@given(case=streams())
@search_settings(12, HealthCheck.function_scoped_fixture)
def test_random_batches_equal_a_recount_after_every_batch(monkeypatch, query, hold, case):
    start, batches = case
    small_overlay(monkeypatch, hold)
    edge = factor_of([(u, v, k) for (u, v), k in sorted(start.items())], ["src", "dst"], "counting")
    counts = {e: k for e, k in start.items() if k}
    with maintain(query, {"edge": edge}, placement="driver") as mq:
        assert mq.scalar() == recount(query, counts)
        for rows in batches:
            before = mq.scalar()
            change = mq.apply(edge=rows)
            for u, v, k in rows:
                counts[(u, v)] = counts.get((u, v), 0) + k
            counts = {e: k for e, k in counts.items() if k}
            expected = recount(query, counts)
            assert mq.scalar() == expected
            assert sum(r["diff"] for r in change.collect()) == expected - before


def test_single_changes_through_compactions_equal_a_recount(monkeypatch):
    """Hundreds of one-row batches (inserts and deletes) while the overlay fills, moves and is folded."""
    small_overlay(monkeypatch, False)
    rng = random.Random(3)
    present = {(rng.randrange(30), rng.randrange(30)) for _ in range(120)}
    present = {e: 1 for e in present if e[0] != e[1]}
    edge = factor_of([(u, v, 1) for u, v in sorted(present)], ["src", "dst"], "counting")
    with maintain(TRIANGLE, {"edge": edge}, placement="driver") as mq:
        for k in range(300):
            e = (rng.randrange(30), rng.randrange(30))
            if e[0] == e[1]:
                continue
            if e in present:
                del present[e]
                mq.apply(edge=[(*e, -1)])
            else:
                present[e] = 1
                mq.apply(edge=[(*e, 1)])
            if k % 25 == 0:
                assert mq.scalar() == recount(TRIANGLE, present)
        assert mq.scalar() == recount(TRIANGLE, present)
        assert mq.state.relations["edge"].compactions >= 1


def test_weighted_sums_in_the_reals_read_values_through_the_scratch_buffer():
    """Valued runs (weights, not ones) of small tries are read from the loop's scratch buffer."""
    rng = random.Random(8)
    weights = {(rng.randrange(8), rng.randrange(8)): rng.choice([0.5, 1.5, 2.0]) for _ in range(30)}
    edge = factor_of([(u, v, w) for (u, v), w in sorted(weights.items())], ["src", "dst"], "real")
    query = "sum() := edge(a,b), edge(a,c), edge(b,c)"
    with maintain(query, {"edge": edge}, placement="driver") as mq:
        for _ in range(15):
            rows = [(rng.randrange(8), rng.randrange(8), rng.choice([-0.5, 0.25, 1.0]))
                    for _ in range(rng.choice([1, 3]))]
            mq.apply(edge=rows)
            for u, v, w in rows:
                weights[(u, v)] = weights.get((u, v), 0.0) + w
            assert np.isclose(mq.scalar(), recount(TRIANGLE, weights))


def test_a_refused_deletion_changes_nothing_and_the_next_batch_is_exact():
    """A deletion below zero is refused before any change (its merged recent level is not kept)."""
    edge = factor_of([(0, 1, 1), (1, 2, 1), (0, 2, 1)], ["src", "dst"], "counting")
    with maintain(TRIANGLE, {"edge": edge}, placement="driver") as mq:
        with pytest.raises(NegativeCountError):
            mq.apply(edge=[(0, 1, -2)])
        assert (mq.scalar(), mq.version) == (1, 0)
        with pytest.raises(NegativeCountError):
            mq.apply(edge=[(5, 6, -1), (0, 1, 1)])  # a deletion of a missing row, beside an insertion
        assert (mq.scalar(), mq.version) == (1, 0)
        mq.apply(edge=[(0, 1, 1)])
        assert mq.scalar() == 2
        mq.apply(edge=[(0, 1, -2)])
        assert mq.scalar() == 0


def test_a_negative_initial_count_is_still_refused_below_zero():
    """Only deletions are looked up once every count is known to be >= 0; a factor given with a negative
    count is checked row by row as before."""
    edge = factor_of([(1, 2, -3), (2, 3, 1)], ["src", "dst"], "counting")
    with maintain(PATH2, {"edge": edge}, placement="driver") as mq:
        with pytest.raises(NegativeCountError):
            mq.apply(edge=[(1, 2, 1)])
        mq.apply(edge=[(1, 2, 3)])
        assert mq.scalar() == 0


@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), m=st.integers(1, 30), real=st.booleans())
@search_settings(60)
def test_compiled_merges_and_tries_equal_numpy_s(seed, n, m, real):
    """The compiled two-column merge and trie (small runs) give the rows and levels numpy's give."""
    from faq.incremental.domain import SPAN
    from faq.incremental.rows import View, build_run, combined, merge_into, merge_rows
    from faq.joins.csr import build_trie
    from faq.semirings import INTEGER, REAL
    from faq.semirings.numpy_backend import numpy_ops

    ops = numpy_ops(REAL if real else INTEGER)
    rng = np.random.default_rng(seed)

    def rows(k):
        return merge_rows([rng.integers(0, 8, k), rng.integers(0, 8, k)],
                          rng.choice([-1, 1, 2], k).astype(ops.dtype), ops)

    first, second = rows(n), rows(m)
    if not len(first) or not len(second):
        return
    both, expected = combined(first, second, ops), merge_into(first, second, ops)
    assert [k.tolist() for k in both.keys] == [k.tolist() for k in expected.keys]
    assert both.values.tolist() == expected.values.tolist()
    for view in (View((0, 1)), View((1, 0))):
        if len(both) < 2:
            continue
        trie = build_run(both, view, ops)
        values = None if np.all(both.values == ops.one) else both.values
        numpy_trie = build_trie([both.keys[i] for i in view.order], SPAN, values, hashable=False)
        for mine, theirs in zip(trie.levels, numpy_trie.levels):
            assert mine.comp.tolist() == theirs.comp.tolist() and mine.offsets.tolist() == theirs.offsets.tolist()
        assert (trie.values is None) == (numpy_trie.values is None)
        assert trie.values is None or trie.values.tolist() == numpy_trie.values.tolist()
