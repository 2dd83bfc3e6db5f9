"""Arithmetic over the rows of in-process tables: ⊕ per key, and int64 ⊗ and ⊕ checked for overflow.

:func:`aggregate_rows` ⊕-combines values per key with the step's ⊕ as a
numpy ufunc (``reduceat``); an array ring's componentwise sums take a
sparse product instead of a sort.  :func:`multiplied` and
:func:`check_sums` refuse int64 products and sums that wrapped
(:class:`~faq.errors.IntegerOverflowError`), as Spark's ANSI arithmetic
refuses them, so an in-process step and a Spark step fail alike.

Examples
--------
>>> import numpy as np
>>> from faq.semirings import COUNTING
>>> from faq.semirings.numpy_backend import numpy_ops
>>> multiplied(np.array([2, 3]), np.array([5, 7]), numpy_ops(COUNTING)).tolist()
[10, 21]
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from faq.errors import IntegerOverflowError
from faq.joins.dense import dense_span, distinct, integer_sums
from faq.joins.partial import value_bound
from faq.joins.table import Table, key_codes, sorted_groups
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NumpyForm


def aggregate_rows(keys: Sequence[np.ndarray], values: np.ndarray, ops: NumpyForm) -> tuple[list[np.ndarray], np.ndarray]:
    """``values`` ⊕-combined per key (rows of ``keys``): (one row per distinct key, its ⊕).

    >>> from faq.semirings import MIN_PLUS
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> keys, values = aggregate_rows([np.array(["x", "y", "x"])], np.array([3.0, 1.0, 2.0]), numpy_ops(MIN_PLUS))
    >>> keys[0].tolist(), values.tolist()
    (['x', 'y'], [2.0, 1.0])
    """
    values = np.asarray(values, dtype=ops.dtype)
    if not keys:
        return [], ops.sum(values)[None] if len(values) else values[:0]
    if len(values) == 0:
        return [np.asarray(k) for k in keys], values
    if getattr(ops, "value_shape", ()) and ops.add is np.add:  # an array ring's componentwise sums: no sort of the wide rows
        summed = _summed_by_key(keys, values)
        if summed is not None:
            return summed
    codes = key_codes(keys)
    if codes is None:  # keys of other types: pandas numbers the groups
        import pandas as pd

        codes = pd.DataFrame({i: k for i, k in enumerate(keys)}, copy=False).groupby(
            list(range(len(keys))), sort=False, dropna=False).ngroup().to_numpy()
    span = dense_span(codes) if getattr(ops, "integral", False) and ops.add is np.add else None
    if span is not None:  # few codes: an integer + per group is a weighted count, no sort (faq.joins.dense)
        groups, holder = distinct(codes, span)
        sums = integer_sums(codes, values, span, groups)
        if sums is not None:
            return [np.asarray(k)[holder] for k in keys], sums
    order, starts = sorted_groups(codes)  # stable: a group's values are ⊕-ed in their rows' order
    if order is None:  # the rows were in key order already
        return [np.asarray(k)[starts] for k in keys], ops.segment_sum(values, starts)
    firsts = order[starts]
    return [np.asarray(k)[firsts] for k in keys], ops.segment_sum(values[order], starts)


def _summed_by_key(keys: Sequence[np.ndarray], values: np.ndarray) -> Optional[tuple[list[np.ndarray], np.ndarray]]:
    """:func:`aggregate_rows` of ``(n, w)`` rows under componentwise +, without sorting the rows.

    The integer keys become one int64 per row (``Σ (k - min)·span``, exact
    while the spans' product stays below 2^62, else None); one ``np.unique``
    of those numbers the groups in key order, and a sparse (groups × rows)
    0/1 matrix times the rows sums each group reading every row once --
    where the general path sorts the keys column by column, then gathers the
    ``w`` numbers of every row into key order before summing.

    >>> keys, sums = _summed_by_key([np.array([3, 1, 3]), np.array([0, 5, 0])], np.arange(6.0).reshape(3, 2))
    >>> [k.tolist() for k in keys], sums.tolist()
    ([[1, 3], [5, 0]], [[2.0, 3.0], [4.0, 6.0]])
    """
    from scipy import sparse

    columns = [np.asarray(k) for k in keys]
    if any(k.dtype.kind not in "iu" for k in columns):
        return None
    lows = [int(k.min()) for k in columns]
    spans = [int(k.max()) - low + 1 for k, low in zip(columns, lows)]
    if float(np.prod([float(x) for x in spans])) >= 2.0 ** 62:
        return None
    code = np.zeros(len(values), dtype=np.int64)
    for k, low, span in zip(columns, lows, spans):
        code *= span
        code += k.astype(np.int64, copy=False) - low
    groups, inverse = np.unique(code, return_inverse=True)
    n = len(code)
    summing = sparse.csr_matrix((np.ones(n), (inverse.reshape(-1), np.arange(n))), shape=(len(groups), n))
    sums = np.ascontiguousarray(summing @ np.asarray(values, dtype=np.float64))
    out = []
    for k, low, span in zip(reversed(columns), reversed(lows), reversed(spans)):  # decode, last column first
        out.append((groups % span + low).astype(k.dtype, copy=False))
        groups = groups // span
    return out[::-1], sums


#: The largest magnitude an int64 sum may reach without overflow.
INT_LIMIT = (1 << 63) - 1


def check_sums(product: Table, keep: Sequence[str], sums: np.ndarray, semiring: Semiring) -> None:
    """Refuse int64 ⊕-sums that wrapped: exact Python sums of the group's magnitudes bound them."""
    magnitude = np.abs(product.values.astype(np.float64))
    if len(magnitude) == 0 or float(magnitude.sum()) < 2.0 ** 62:
        return  # no group can reach 2^63
    _, exact = aggregate_rows([product.keys[v] for v in keep], product.values.astype(object),
                              _ObjectSum())
    if any(not -INT_LIMIT - 1 <= int(v) <= INT_LIMIT for v in exact):
        raise IntegerOverflowError(operation="⊕", semiring=semiring.name, where="aggregation")


class _ObjectSum:
    """Exact integer sums (Python ints) in :func:`aggregate_rows`'s shape."""

    dtype = object
    zero = 0

    @staticmethod
    def sum(values):
        return np.array(sum(values, 0), dtype=object)

    @staticmethod
    def segment_sum(values, starts):
        bounds = list(starts) + [len(values)]
        return np.array([sum(values[a:b]) for a, b in zip(bounds, bounds[1:])], dtype=object)


def multiplied(a: np.ndarray, b: np.ndarray, ops: NumpyForm) -> np.ndarray:
    """``a ⊗ b``; int64 products that would overflow are refused, as Spark's ANSI arithmetic refuses them."""
    out = ops.mul(a, b)
    if ops.integral and ops.mul is np.multiply and len(out) and value_bound([a, b]) >= 1 << 62:
        wide = np.abs(a.astype(np.float64) * b.astype(np.float64))  # the extremes may not meet: row by row
        if float(wide.max()) >= 2.0 ** 62:
            exact = [int(x) * int(y) for x, y in zip(a.tolist(), b.tolist())]
            if any(not -INT_LIMIT - 1 <= v <= INT_LIMIT for v in exact):
                raise IntegerOverflowError(operation="⊗", semiring=ops.name.split("/")[0], where="join")
    return out
