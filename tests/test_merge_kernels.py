"""The in-process binary join's sort-merge against pandas' merges and a brute force, on random tables.

Since integer keys sort-merge at every size (:func:`faq.joins.merges.binary_kernel`), its matching of
sorted codes (:func:`faq.joins.merges._matches`, :func:`faq.joins.table.in_order`) carries every large
in-process join: keys drawn from narrow ranges (many duplicates, many-to-many), wide ones (the packed
sort declines: ``argsort``; codes by rank), negative and unsigned, inputs already in order or not.
No Spark.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.joins.merges import _matches, held_by, merged, sort_merged
from faq.joins.table import Table, in_order
from faq.semirings import COUNTING, REAL
from faq.semirings.numpy_backend import numpy_ops

KEY_RANGES = [(0, 3), (-5, 5), (0, 1000), (-(2**62), 2**62)]


@st.composite
def codes(draw, max_rows: int = 60) -> np.ndarray:
    low, high = draw(st.sampled_from(KEY_RANGES))
    values = draw(st.lists(st.integers(low, high), max_size=max_rows))
    array = np.array(values, dtype=np.int64)
    return np.sort(array) if draw(st.booleans()) else array


@settings(max_examples=200, deadline=None)
@given(codes(), codes())
def test_matches_are_every_equal_pair_once(left, right):
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


@settings(max_examples=150, deadline=None)
@given(tables())
def test_sort_merge_equals_the_pandas_merges(relations):
    ops = numpy_ops(REAL)
    assert _rows(sort_merged(relations, [], ops)) == _rows(merged(relations, [], ops))


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
