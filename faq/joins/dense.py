"""Joins and groupings of dense integer codes by direct addressing: no sort where the codes are few.

An in-process step's keys become one non-negative int64 code a row
(:func:`faq.joins.table.key_codes`, offsets from the least key).  Graph ids
and the keys of a message are *dense*: their codes span not much more than
the rows that hold them.  Then an array indexed by code does what a sort
does, reading each row once:

* a join where one side's codes are unique (a message keyed by its
  variables always is) looks each row of the other side up in a table of
  positions (:func:`unique_lookup`) -- the pairs come in the other side's row
  order, so rows already in key order stay so;
* the distinct codes of a projection (an indicator) and the groups of a
  ⊕-aggregation are where a count by code (``np.bincount``) is positive
  (:func:`distinct`), and an integer + per group is a weighted count,
  exact while every partial sum stays below 2^53 (:func:`integer_sums`).

Each applies only within :func:`dense_span`'s limits (at least
:data:`MIN_ROWS` rows, at most :data:`SPAN_PER_ROW` codes a row and
:data:`MAX_SPAN` in all); fewer rows, larger or sparser codes keep the sort
(:func:`faq.joins.table.in_order`).
Measured (``python -m bench.merge_kernels --spark``, R-MAT 18's 3.9M edges):
see that benchmark's JSON.

Examples
--------
>>> import numpy as np
>>> codes = np.arange(2000) % 700
>>> dense_span(codes)                            # 700 codes for 2,000 rows
700
>>> rows, where = unique_lookup(np.array([2, 0, 5]), np.array([5, 5, 1, 2]), 6)
>>> rows.tolist(), where.tolist()               # rows 0, 1 and 3 of the probes match rows 2, 2 and 0
([0, 1, 3], [2, 2, 0])
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from faq.joins.partial import value_bound

__all__ = ["SPAN_PER_ROW", "MIN_ROWS", "MAX_SPAN", "EXACT_FLOAT_SUM", "dense_span", "unique_lookup", "is_unique", "distinct",
           "first_positions", "integer_sums"]

#: Codes a row may span for direct addressing: an array of the span costs about what the rows do.
SPAN_PER_ROW = 4
#: Fewer rows than this are sorted: a sort of a few rows costs less than allocating arrays of their span
#: (a maintained batch of one change joins and groups a handful of rows, many times a second).
MIN_ROWS = 1024
#: The largest span addressed directly: an int64 array of it is 256 MiB.
MAX_SPAN = 1 << 25
#: Integers whose every partial sum stays below this add exactly in float64 (``np.bincount``'s weights).
EXACT_FLOAT_SUM = 2.0 ** 53


def dense_span(*codes: np.ndarray) -> Optional[int]:
    """One past the largest of non-negative int64 ``codes`` (each array non-empty) when they are dense
    enough to address directly, else None.

    >>> dense_span(np.arange(1000), np.arange(24))
    1000
    >>> dense_span(np.array([0, 9])) is None              # two rows: sorted
    True
    >>> dense_span(np.arange(2000) * 5) is None           # 5 codes a row: sorted
    True
    >>> dense_span(np.arange(-1, 2000)) is None           # not an offset code
    True
    """
    if not codes or any(len(c) == 0 or c.dtype.kind not in "iu" for c in codes):
        return None
    if min(int(c.min()) for c in codes) < 0:
        return None
    span = max(int(c.max()) for c in codes) + 1
    rows = sum(len(c) for c in codes)
    return span if rows >= MIN_ROWS and span <= min(MAX_SPAN, SPAN_PER_ROW * rows) else None


def unique_lookup(unique: np.ndarray, probes: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``probes`` whose code is in ``unique`` (codes each at most once, all below ``span``), and
    the row of ``unique`` each matches: a table of positions indexed by code, read once a probe."""
    position = np.full(span, -1, dtype=np.int64)
    position[unique] = np.arange(len(unique), dtype=np.int64)
    found = position[probes]
    rows = np.flatnonzero(found >= 0)
    return rows, found[rows]


def is_unique(codes: np.ndarray, span: int) -> bool:
    """Whether no code occurs twice (a count by code, all below ``span``).

    >>> is_unique(np.array([3, 1, 0]), 4), is_unique(np.array([3, 1, 3]), 4)
    (True, False)
    """
    return len(codes) < 2 or int(np.bincount(codes, minlength=span).max()) <= 1


def distinct(codes: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``codes`` ascending, and a row holding each (a count by code).

    >>> groups, row = distinct(np.array([4, 1, 4, 4]), 5)
    >>> groups.tolist(), np.array([4, 1, 4, 4])[row].tolist()
    ([1, 4], [1, 4])
    """
    groups = np.flatnonzero(np.bincount(codes, minlength=span))
    holder = np.empty(span, dtype=np.int64)
    holder[codes] = np.arange(len(codes), dtype=np.int64)  # any row of a code: they hold the same keys
    return groups, holder[groups]


def first_positions(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct non-negative ``codes`` ascending and where each first occurs: ``np.unique(codes,
    return_index=True)``, by a table of positions where the codes are dense (:func:`dense_span`), else
    by that sort.

    >>> nodes, first = first_positions(np.array([5, 2, 5, 0, 2] * 300))
    >>> nodes.tolist(), first.tolist()
    ([0, 2, 5], [3, 1, 0])
    >>> [a.tolist() for a in first_positions(np.array([7, 3, 7]))]   # three rows: sorted
    [[3, 7], [1, 0]]
    """
    span = dense_span(codes) if len(codes) >= MIN_ROWS else None  # a few rows (a small batch): no min/max first
    if span is None:
        return np.unique(codes, return_index=True)
    first = np.full(span, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    found = np.flatnonzero(first < len(codes))
    return found, first[found]


def integer_sums(codes: np.ndarray, values: np.ndarray, span: int, groups: np.ndarray) -> Optional[np.ndarray]:
    """The int64 sums of ``values`` per code, for the codes ``groups`` (from :func:`distinct`), when float64
    adds them exactly (every partial sum below :data:`EXACT_FLOAT_SUM`); else None.

    >>> integer_sums(np.array([4, 1, 4]), np.array([2, 7, 5]), 5, np.array([1, 4])).tolist()
    [7, 7]
    >>> integer_sums(np.array([0, 0]), np.array([2**60, 2**60]), 1, np.array([0])) is None
    True
    """
    if len(values) == 0:
        return np.zeros(len(groups), dtype=np.int64)
    if value_bound([values]) * len(values) >= EXACT_FLOAT_SUM:  # the largest magnitude, times the rows
        return None
    return np.bincount(codes, weights=values, minlength=span)[groups].astype(np.int64)
