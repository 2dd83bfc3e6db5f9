"""Folding a small run into a large one (faq.incremental.index.combined) equals the concatenating merge.

The binary-search merge serves compactions and overlay merges of maintained
queries; it must give exactly the rows (keys, ⊕-combined values, cancelled
keys dropped) that sorting the concatenation and ``merge_rows`` give, in
scalar semirings and an array ring, for keys of one to three columns.
"""

from __future__ import annotations

import numpy as np
import pytest

from faq.incremental.rows import KeyedRows, combined, merge_into, merge_rows
from faq.semirings import INTEGER, MIN_PLUS, cofactor
from faq.semirings.numpy_backend import numpy_ops


def ops_of(ring):
    return numpy_ops(ring, arrays=True) if ring.structured else numpy_ops(ring)


def random_run(rng, ring, ops, arity, rows):
    keys = [rng.integers(0, 6, rows) for _ in range(arity)]
    if ring.structured:
        values = rng.integers(-2, 3, (rows, ops.width)).astype(float)
    elif ring is MIN_PLUS:
        values = rng.integers(0, 5, rows).astype(float)
    else:
        values = rng.integers(-2, 3, rows)
    return merge_rows(keys, values, ops)


@pytest.mark.parametrize("ring", [INTEGER, MIN_PLUS, cofactor(2)], ids=lambda r: r.name)
@pytest.mark.parametrize("arity", [1, 2, 3])
def test_binary_search_merge_equals_sorting_the_concatenation(ring, arity):
    ops = ops_of(ring)
    rng = np.random.default_rng(arity)
    for _ in range(60):
        first = random_run(rng, ring, ops, arity, int(rng.integers(1, 300)))
        second = random_run(rng, ring, ops, arity, int(rng.integers(1, 40)))
        if not len(first) or not len(second):
            continue
        fast = merge_into(first, second, ops)
        keys = [np.concatenate([a, b]) for a, b in zip(first.keys, second.keys)]
        expected = merge_rows(keys, np.concatenate([first.values, second.values]), ops)
        assert all(np.array_equal(a, b) for a, b in zip(fast.keys, expected.keys))
        assert np.array_equal(fast.values, expected.values)


def test_an_unsorted_second_run_takes_the_sorting_path():
    ops = numpy_ops(INTEGER)
    first = merge_rows([np.arange(100)], np.ones(100, dtype=np.int64), ops)
    unsorted = KeyedRows((np.array([7, 3]),), np.array([1, 1]))  # not a run: must not be binary-searched
    rows = combined(first, unsorted, ops)
    assert rows.values[[3, 7]].tolist() == [2, 2] and len(rows) == 100
