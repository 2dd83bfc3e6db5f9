"""The maintained as-of join (view mode) against recomputation after every batch: random inserts and deletes
on both sides, out-of-order times, ties, null keys, every direction (hypothesis); and the change of each batch
turns the old answer into the new one."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.asof.kernel import DIRECTIONS
from faq.asof.maintained import MaintainedAsof
from faq.asof.tables import asof_tables
from tests.helpers import arrow_rows as table
from faq.errors import InvalidDeltaError

LEFT = pa.schema([("t", pa.int64()), ("k", pa.string()), ("q", pa.int64())])
RIGHT = pa.schema([("t", pa.int64()), ("k", pa.string()), ("p", pa.int64())])

rows = st.tuples(st.integers(0, 12), st.sampled_from(["a", "b", None]), st.integers(0, 3))


@st.composite
def histories(draw):
    left = draw(st.lists(rows, max_size=12))
    right = draw(st.lists(rows, max_size=12))
    batches = []
    for _ in range(draw(st.integers(1, 5))):
        batches.append((draw(st.lists(rows, max_size=5)), draw(st.lists(rows, max_size=5)),
                        draw(st.lists(st.integers(0, 50), max_size=3)), draw(st.lists(st.integers(0, 50), max_size=3))))
    options = dict(direction=draw(st.sampled_from(DIRECTIONS)), allow_exact_matches=draw(st.booleans()),
                   tolerance=draw(st.sampled_from([None, 3])), how=draw(st.sampled_from(["left", "inner"])))
    return left, right, batches, options


def recomputed(left, right, options):
    return asof_tables(table(left, LEFT), table(right, RIGHT), on="t", by="k", **options)


def bag(t) -> Counter:
    return Counter(tuple(r.values()) for r in t.to_pylist())


def remove_last(items, row):
    i = len(items) - 1 - items[::-1].index(row)
    del items[i]


@settings(max_examples=150, deadline=None)
@given(histories())
def test_view_equals_recomputation_after_every_batch(history):
    left, right, batches, options = history
    view = MaintainedAsof(table(left, LEFT), table(right, RIGHT), on="t", by="k", **options)
    assert view.table().to_pylist() == recomputed(left, right, options).to_pylist()
    for new_left, new_right, gone_left, gone_right in batches:
        dead_left = [left[i % len(left)] for i in gone_left] if left else []
        dead_right = [right[i % len(right)] for i in gone_right] if right else []
        dead_left = [r for i, r in enumerate(dead_left) if dead_left[:i].count(r) < left.count(r)]
        dead_right = [r for i, r in enumerate(dead_right) if dead_right[:i].count(r) < right.count(r)]
        before = bag(view.table())
        change = view.apply(left=table(dead_left + new_left, LEFT, [-1] * len(dead_left) + [1] * len(new_left)),
                            right=table(dead_right + new_right, RIGHT,
                                        [-1] * len(dead_right) + [1] * len(new_right)))
        for r in dead_left:
            remove_last(left, r)
        for r in dead_right:
            remove_last(right, r)
        left += new_left
        right += new_right
        expected = recomputed(left, right, options)
        assert view.table().to_pylist() == expected.to_pylist()  # the left side's order too
        after = Counter(before)
        for r in change.table().to_pylist():
            d = r.pop("diff")
            after[tuple(r.values())] += d
        assert +after == bag(expected) and all(v >= 0 for v in after.values())


def test_a_deletion_of_a_row_not_there_changes_nothing():
    view = MaintainedAsof(table([(1, "a", 1)], LEFT), table([(0, "a", 9)], RIGHT), on="t", by="k")
    with pytest.raises(InvalidDeltaError, match="matches no row"):
        view.apply(right=table([(0, "a", 9), (5, "a", 7)], RIGHT, [-1, -1]))
    assert view.version == 0 and view.table().column("p").to_pylist() == [9]
    with pytest.raises(InvalidDeltaError, match="diff"):
        view.apply(left=table([(1, "a", 1)], LEFT, [2]))


def test_many_batches_past_the_overlay_bound_stay_exact(monkeypatch):
    import random

    from faq.asof import side

    monkeypatch.setattr(side, "OVERLAY_MAX_ROWS", 8)  # compactions every few batches
    rng = random.Random(5)
    left = [(rng.randrange(100), rng.choice("abc"), i) for i in range(30)]
    right = [(rng.randrange(100), rng.choice("abc"), i) for i in range(30)]
    view = MaintainedAsof(table(left, LEFT), table(right, RIGHT), on="t", by="k", direction="nearest")
    for b in range(40):
        new = [(rng.randrange(100), rng.choice("abc"), 100 + b)]
        gone = [right[rng.randrange(len(right))]]
        view.apply(right=table(gone + new, RIGHT, [-1, 1]))
        remove_last(right, gone[0])
        right += new
        assert view.table().to_pylist() == recomputed(left, right, {"direction": "nearest"}).to_pylist()


def test_the_front_door_returns_a_maintained_view_from_spark_dataframes(spark):
    import pandas as pd

    import faq

    trades = spark.createDataFrame([(1, "a", 5), (4, "a", 7)], "time long, sym string, qty long")
    quotes = spark.createDataFrame([(0, "a", 1.0)], "time long, sym string, px double")
    view = faq.asof_join(trades, quotes, on="time", by="sym", maintained=True)
    change = view.apply(right=pd.DataFrame({"time": [3], "sym": ["a"], "px": [2.0]}))
    assert sorted(zip(change.to_pandas()["px"], change.to_pandas()["diff"])) == [(1.0, -1), (2.0, 1)]
    assert view.to_pandas()["px"].tolist() == [1.0, 2.0]


# --- locked mode: against its definition ------------------------------------------------------------------


@st.composite
def locked_histories(draw):
    left = draw(st.lists(rows, max_size=10))
    right = draw(st.lists(rows, max_size=10))
    batches = [(draw(st.lists(rows, max_size=4)), draw(st.lists(rows, max_size=4)),
                draw(st.lists(st.integers(0, 50), max_size=2)), draw(st.lists(st.integers(0, 50), max_size=2)),
                draw(st.integers(0, 4))) for _ in range(draw(st.integers(1, 5)))]
    options = dict(allow_exact_matches=draw(st.booleans()), tolerance=draw(st.sampled_from([None, 3])),
                   how=draw(st.sampled_from(["left", "inner"])))
    return left, right, batches, draw(st.integers(0, 12)), options


def sealed_rows(ready, right, options) -> list[dict]:
    """The definition: each row joined with the right side as it stands now (the one-shot join)."""
    if not ready:
        return []
    return asof_tables(table(ready, LEFT), table(right, RIGHT), on="t", by="k", **options).to_pylist()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(locked_histories())
def test_locked_rows_are_joined_with_the_right_side_as_the_watermark_passes_them(monkeypatch, history):
    # (the patch is the same for every example: the fixture not being reset between them is harmless)
    from faq.asof import locked as locked_module
    from faq.asof.locked import LockedAsof

    monkeypatch.setattr(locked_module, "DROP_EVERY", 0)  # drop unreachable right rows after every batch
    left, right, batches, watermark, options = history
    view = LockedAsof(table(left, LEFT), table(right, RIGHT), on="t", by="k", watermark=watermark, **options)
    ready = [r for r in left if r[0] <= watermark]
    pending = [r for r in left if r[0] > watermark]
    sealed = list(zip(ready, sealed_rows(ready, right, {**options, "how": "left"})))  # (left row, joined row)

    def answer():
        rows = [j for _, j in sealed]
        return [j for j in rows if options["how"] == "left" or j["p"] is not None]

    assert view.table().to_pylist() == answer()
    late = ignored = 0
    for new_left, new_right, gone_left, gone_right, step in batches:
        present = pending + [l for l, _ in sealed]
        dead_left = [present[i % len(present)] for i in gone_left] if present else []
        dead_left = [r for i, r in enumerate(dead_left) if dead_left[:i].count(r) < present.count(r)]
        dead_right = [right[i % len(right)] for i in gone_right] if right else []
        dead_right = [r for i, r in enumerate(dead_right) if dead_right[:i].count(r) < right.count(r)]
        expected_change = []
        for r in dead_right:
            if r[0] > watermark:  # behind the watermark the right history is sealed: skipped
                remove_last(right, r)
            else:
                ignored += 1
        right += new_right
        for r in dead_left:
            if r[0] > watermark:
                remove_last(pending, r)
            else:
                i = max(j for j, (l, _) in enumerate(sealed) if l == r)
                expected_change.append({**sealed[i][1], "diff": -1})
                del sealed[i]
        for r in new_left:
            if r[0] <= watermark:
                late += 1
            else:
                pending.append(r)
        watermark += step
        ready = [r for r in pending if r[0] <= watermark]
        pending = [r for r in pending if r[0] > watermark]
        joined = sealed_rows(ready, right, {**options, "how": "left"})
        sealed += list(zip(ready, joined))
        expected_change += [{**j, "diff": 1} for j in joined]
        if options["how"] == "inner":
            expected_change = [j for j in expected_change if j["p"] is not None]
        change = view.apply(left=table(dead_left + new_left, LEFT, [-1] * len(dead_left) + [1] * len(new_left)),
                            right=table(dead_right + new_right, RIGHT, [-1] * len(dead_right) + [1] * len(new_right)),
                            watermark=watermark)
        assert change.table().to_pylist() == expected_change
        assert view.table().to_pylist() == answer() and view.late_rows == late
        assert view.ignored_deletions == ignored


def test_locked_mode_bounds_the_right_side_by_the_watermark():
    from faq.asof.locked import LockedAsof

    quotes = [(t, "a", t) for t in range(100)]
    view = LockedAsof(table([(150, "a", 1)], LEFT), table(quotes, RIGHT), on="t", by="k", watermark=0)
    assert view.drop_unreachable() == 0
    view.apply(right=table([(120, "a", 7)], RIGHT), watermark=110)  # everything before 99 is unreachable now
    assert view.drop_unreachable() == 99 and len(view.right.alive_ids()) == 2
    change = view.apply(watermark=200)
    assert change.table().to_pylist() == [{"t": 150, "k": "a", "q": 1, "p": 7, "diff": 1}]
    with pytest.raises(Exception, match="backward only"):
        LockedAsof(table([], LEFT), table([], RIGHT), on="t", by="k", direction="forward")


def test_a_maintained_join_on_the_executors_is_refused_by_name():
    import faq
    from faq.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="held on the driver"):
        faq.asof_join(table([], LEFT), table([], RIGHT), on="t", by="k", maintained=True, placement="executors")
