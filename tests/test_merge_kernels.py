"""The in-process binary join's sort-merge against pandas' merges and a brute force, on random tables.

Since integer keys sort-merge at every size (:func:`faq.joins.merges.binary_kernel`), its matching of
sorted codes (:func:`faq.joins.merges._matches`, :func:`faq.joins.table.in_order`) carries every large
in-process join: keys drawn from narrow ranges (many duplicates, many-to-many), wide ones (the packed
sort declines: ``argsort``; codes by rank), negative and unsigned, inputs already in order or not.
Dense codes (few distinct values for their rows) are addressed directly instead (:mod:`faq.joins.dense`);
every check runs both ways (``addressing``), so the sort keeps its coverage on small random inputs.
No Spark.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.joins.merges import _matches, held_by, merged, sort_merged
from faq.joins.table import Table, in_order
from faq.semirings import COUNTING, REAL
from faq.semirings.numpy_backend import numpy_ops

@contextmanager
def addressing(dense: bool):
    """Dense codes addressed directly (as they run), or every input sorted (no span is dense enough)."""
    import faq.joins.dense as dense_module

    saved = dense_module.MAX_SPAN, dense_module.MIN_ROWS, dense_module.SPAN_PER_ROW
    if dense:  # small random inputs addressed too: any rows, any span within the limit
        dense_module.MIN_ROWS, dense_module.SPAN_PER_ROW = 0, 1 << 30
    else:
        dense_module.MAX_SPAN = 0
    try:
        yield
    finally:
        dense_module.MAX_SPAN, dense_module.MIN_ROWS, dense_module.SPAN_PER_ROW = saved


BOTH_WAYS = pytest.mark.parametrize("dense", [True, False], ids=["addressed", "sorted"])
KEY_RANGES = [(0, 3), (-5, 5), (0, 1000), (-(2**62), 2**62)]


@st.composite
def codes(draw, max_rows: int = 60) -> np.ndarray:
    low, high = draw(st.sampled_from(KEY_RANGES))
    values = draw(st.lists(st.integers(low, high), max_size=max_rows))
    array = np.array(values, dtype=np.int64)
    return np.sort(array) if draw(st.booleans()) else array


@BOTH_WAYS
@settings(max_examples=200, deadline=None)
@given(left=codes(), right=codes())
def test_matches_are_every_equal_pair_once(dense, left, right):
    with addressing(dense):
        i, j = _matches(left, right)
    expected = Counter((a, b) for a in range(len(left)) for b in range(len(right)) if left[a] == right[b])
    assert Counter(zip(i.tolist(), j.tolist())) == expected


@settings(max_examples=200, deadline=None)
@given(codes(max_rows=200))
def test_in_order_sorts_and_its_permutation_is_the_stable_one(values):
    ordered, order = in_order(values)
    assert ordered.tolist() == sorted(values.tolist())
    if order is None:
        assert values.tolist() == ordered.tolist()
    else:  # the stable permutation: ties keep their rows' order (a group's values are ⊕-ed in it)
        assert order.tolist() == np.argsort(values, kind="stable").tolist()


def test_in_order_packs_unsigned_and_large_inputs_exactly():
    rng = np.random.default_rng(3)
    wide = rng.integers(0, 1 << 40, 100_000).astype(np.uint64)  # 17 bits of rows: packed in uint64 still
    ordered, order = in_order(wide)
    assert np.array_equal(ordered, np.sort(wide).astype(np.int64))
    assert np.array_equal(wide[order].astype(np.int64), ordered)
    too_wide = rng.integers(0, 1 << 62, 1000)  # past 64 bits packed: a stable argsort
    ordered, order = in_order(np.concatenate([too_wide, too_wide[:10]]))
    assert np.array_equal(order, np.argsort(np.concatenate([too_wide, too_wide[:10]]), kind="stable"))


@st.composite
def tables(draw) -> list[Table]:
    low, high = draw(st.sampled_from(KEY_RANGES[:3]))
    shapes = draw(st.sampled_from([[("a", "b"), ("b", "c")], [("a", "b"), ("b", "a")], [("a", "b"), ("a", "b")],
                                   [("a",), ("a", "b"), ("b", "c")], [("a", "b"), ("c",)]]))
    out = []
    for variables in shapes:
        rows = draw(st.integers(0, 25))
        keys = {v: np.array(draw(st.lists(st.integers(low, high), min_size=rows, max_size=rows)), dtype=np.int64)
                for v in variables}
        values = np.array(draw(st.lists(st.integers(1, 9), min_size=rows, max_size=rows)), dtype=np.float64)
        out.append(Table(variables, keys, values))
    return out


def _rows(table: Table) -> Counter:
    names = sorted(table.variables)
    return Counter(zip(*(table.keys[v].tolist() for v in names), table.values.tolist()))


@BOTH_WAYS
@settings(max_examples=150, deadline=None)
@given(relations=tables())
def test_sort_merge_equals_the_pandas_merges(dense, relations):
    ops = numpy_ops(REAL)
    with addressing(dense):
        assert _rows(sort_merged(relations, [], ops)) == _rows(merged(relations, [], ops))


@BOTH_WAYS
@settings(max_examples=150, deadline=None)
@given(keys=st.lists(st.tuples(st.integers(-3, 40), st.integers(0, 5)), max_size=60),
       big=st.booleans())
def test_integer_sums_by_key_are_exact_either_way(dense, keys, big):
    """⊕ by key of counts: a weighted count where float64 adds exactly, else the sort; projections alike."""
    from faq.joins.row_arithmetic import aggregate_rows

    a = np.array([k[0] for k in keys], dtype=np.int64)
    b = np.array([k[1] for k in keys], dtype=np.int64)
    values = np.arange(1, len(keys) + 1, dtype=np.int64) * ((1 << 50) + 1 if big else 1)  # past 2^53, not 2^63
    expected = Counter()
    for x, y, v in zip(a.tolist(), b.tolist(), values.tolist()):
        expected[(x, y)] += v
    with addressing(dense):
        (ka, kb), sums = aggregate_rows([a, b], values, numpy_ops(COUNTING))
        projected = Table(("a", "b"), {"a": a, "b": b}, None).projection(["b", "a"])
    assert dict(zip(zip(ka.tolist(), kb.tolist()), sums.tolist())) == dict(expected)
    assert sums.dtype == np.int64 and list(zip(ka.tolist(), kb.tolist())) == sorted(expected)  # in key order
    assert list(zip(projected.keys["b"].tolist(), projected.keys["a"].tolist())) == sorted({(y, x) for x, y in expected})


@pytest.mark.parametrize("semiring", [COUNTING, REAL], ids=lambda s: s.name)
def test_an_indicator_keeps_the_rows_it_holds(semiring):
    ops = numpy_ops(semiring)
    edges = Table(("a", "b"), {"a": np.array([0, 0, 1, 2]), "b": np.array([1, 2, 2, 0])}, None)
    reverse = Table(("b", "a"), {"b": np.array([0, 0, 1, 2]), "a": np.array([1, 2, 2, 0])}, None)
    indicator = edges.projection(["b"])
    assert sorted(indicator.keys["b"].tolist()) == [0, 1, 2]
    joined = sort_merged([edges, reverse], [indicator], ops)
    assert sorted(zip(joined.keys["a"].tolist(), joined.keys["b"].tolist())) == [(0, 2), (2, 0)]
    assert held_by({"b": np.array([5, 2])}, indicator).tolist() == [False, True]
