"""The maintained as-of join (view mode) against recomputation after every batch: random inserts and deletes
on both sides, out-of-order times, ties, null keys, every direction (hypothesis); and the change of each batch
turns the old answer into the new one."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.asof.kernel import DIRECTIONS
from faq.asof.maintained import MaintainedAsof
from faq.asof.tables import asof_tables
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


def table(items, schema, diff=None):
    columns = list(zip(*items)) if items else [[] for _ in schema]
    data = {f.name: pa.array(list(c), f.type) for f, c in zip(schema, columns)}
    if diff is not None:
        data["diff"] = pa.array(diff, pa.int64())
    return pa.table(data)


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
