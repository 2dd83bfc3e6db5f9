"""A step that is a sparse matrix product, A(i, j) ⊗ B(j, k) ⊕-summed over j, run by :mod:`scipy.sparse`.

:func:`sparse_product` recognises the step (two relations over two
variables each, ⊗ = ×, ⊕ = +, integer keys), numbers each variable's keys
compactly (:func:`compact_codes`), builds CSR arrays and multiplies them.
int64 products run only where a bound proves they cannot wrap; otherwise,
and for any other step, it returns None and the merges
(:mod:`faq.joins.merges`) run instead.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from faq.joins.merges import held_by, product_shape
from faq.joins.table import Table
from faq.semirings.numpy_backend import NumpyForm


def sparse_product(
    relations: Sequence[Table], indicators: Sequence[Table], keep: Sequence[str], ops: NumpyForm
) -> Optional[tuple[list[np.ndarray], np.ndarray]]:
    """A step that is a sparse matrix product, computed by :mod:`scipy.sparse`; None for any other step.

    The step must be A(i, j) ⊗ B(j, k) ⊕-aggregated over j onto ``keep`` =
    (i, k) (in either order, each relation's columns in either order), with
    ⊗ = ``np.multiply``, ⊕ = ``np.add`` over float64 or int64 values, and
    integer keys.  Each variable's keys are numbered compactly (the shared
    one over both relations), so the matrices' shapes follow the number of
    distinct keys, never their magnitude.  Indicators within one relation's
    variables filter that relation first; one over (i, k) filters the result.
    Rows with repeated keys stay separate terms, as in the merges.

    Integer products are exact in scipy but wrap on overflow without a
    word, so for int64 the path runs only when ``Σ_j |a_ij|·|b_jk|`` (which
    bounds every ⊗, every partial ⊕-sum and every result) is below 2^62;
    otherwise it returns None and the merges, which check every ⊗ and ⊕
    exactly (:class:`~faq.errors.IntegerOverflowError`), run instead.

    Parameters
    ----------
    relations : sequence of Table
        The step's relations (two, each over two variables, for a product).
    indicators : sequence of Table
        The step's indicators (unvalued, distinct rows).
    keep : sequence of str
        The step's output variables.
    ops : NumpyForm
        ⊗ of the query's semiring and ⊕ of the step's aggregate.

    Returns
    -------
    (list of numpy.ndarray, numpy.ndarray) or None
        The keys per variable of ``keep`` (one row per key, by ``keep[0]``
        in order; within it, in no particular order) and their values,
        exact zeros left out; None when the step is not such a product.

    Examples
    --------
    >>> from faq.semirings import MIN_PLUS, REAL
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> a = Table(("i", "j"), {"i": np.array([0, 0, 7]), "j": np.array([10, 20, 10])}, np.array([1.0, 2.0, 3.0]))
    >>> b = Table(("k", "j"), {"k": np.array([5, 5]), "j": np.array([10, 20])}, np.array([4.0, 0.5]))
    >>> keys, values = sparse_product([a, b], [], ("i", "k"), numpy_ops(REAL))
    >>> keys[0].tolist(), keys[1].tolist(), values.tolist()   # (0,5): 1·4 + 2·0.5; (7,5): 3·4
    ([0, 7], [5, 5], [5.0, 12.0])
    >>> sparse_product([a, b], [], ("i", "k"), numpy_ops(MIN_PLUS)) is None   # not (+, ×)
    True
    """
    sides = _product_sides(relations, keep, ops)
    if sides is None:
        return None
    (a, b, j) = sides
    inside: tuple[list[Table], list[Table]] = ([], [])
    after = []
    for ind in (ind for ind in indicators if ind.variables):  # (as the merges: none on no variable)
        seen = set(ind.variables)
        if seen <= set(a.variables) or seen <= set(b.variables):
            inside[0 if seen <= set(a.variables) else 1].append(ind)
        elif seen <= set(keep):
            after.append(ind)
        else:
            return None
    (a_keys, a_values), (b_keys, b_values) = _semijoined(a, inside[0], ops), _semijoined(b, inside[1], ops)
    first, last = keep
    if len(a_values) == 0 or len(b_values) == 0:
        return [a_keys[first][:0], b_keys[last][:0]], np.empty(0, dtype=ops.dtype)
    rows, (i,) = compact_codes(a_keys[first])
    shared, (j_a, j_b) = compact_codes(a_keys[j], b_keys[j])
    cols, (k,) = compact_codes(b_keys[last])
    left = _csr(i, j_a, a_values, (len(rows), len(shared)))
    right = _csr(j_b, k, b_values, (len(shared), len(cols)))
    if ops.integral and not _fits_int64(left, right):
        return None
    product = left @ right  # scipy's SpGEMM leaves out exact zeros (as the step must); columns unsorted
    out_rows = np.repeat(np.arange(product.shape[0], dtype=np.int64), np.diff(product.indptr))
    keys = {first: rows[out_rows], last: cols[product.indices]}
    values = np.asarray(product.data, dtype=ops.dtype)
    for ind in after:
        held = held_by(keys, ind)
        keys, values = {v: c[held] for v, c in keys.items()}, values[held]
    return [keys[first], keys[last]], values


def _product_sides(relations: Sequence[Table], keep: Sequence[str], ops: NumpyForm
                   ) -> Optional[tuple[Table, Table, str]]:
    """(A, B, j) when the relations are A(keep[0], j) and B(j, keep[1]) (columns in either order)
    with integer keys, (+, ×) over float or int values; else None."""
    if not ops.sums_products:
        return None
    if product_shape([r.variables for r in relations], [], keep):
        return None
    first, second = relations
    shared = set(first.variables) & set(second.variables)
    a, b = (first, second) if keep[0] in first.variables else (second, first)
    (j,) = shared
    kinds = {np.asarray(r.keys[v]).dtype.kind for r in relations for v in r.variables}
    if not kinds <= set("iu") or np.result_type(np.asarray(a.keys[j]), np.asarray(b.keys[j])).kind not in "iu":
        return None  # other keys, or int64 with uint64 (numpy would compare them as floats)
    return a, b, j


def declined(relations: Sequence[Table], indicators: Sequence[Table], keep: Sequence[str], ops: NumpyForm) -> str:
    """Why :func:`sparse_product` returned None for this step, in words (for the step's note).

    >>> from faq.semirings import COUNTING
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> a = Table(("i", "j"), {"i": np.array([0]), "j": np.array([1])}, np.array([2**61]))
    >>> b = Table(("j", "k"), {"j": np.array([1]), "k": np.array([2])}, np.array([2]))
    >>> declined([a, b], [], ("i", "k"), numpy_ops(COUNTING))
    'its int64 products are not bounded below 2^62 (the merges check every ⊗ and ⊕)'
    >>> s = Table(("j", "k"), {"j": np.array(["1"]), "k": np.array(["2"])}, np.array([2]))
    >>> declined([a, s], [], ("i", "k"), numpy_ops(COUNTING))
    'its keys are not all integers'
    """
    if not ops.sums_products:
        return f"⊗/⊕ of {ops.name} are not × and + over numbers"
    shape = product_shape([r.variables for r in relations], [i.variables for i in indicators], keep)
    if shape:
        return f"its tables are {shape}"
    kinds = {np.asarray(t.keys[v]).dtype.kind for t in relations for v in t.variables}
    if not kinds <= set("iu"):
        return "its keys are not all integers"
    if _product_sides(relations, keep, ops) is None:
        return "its keys mix int64 and uint64"
    return "its int64 products are not bounded below 2^62 (the merges check every ⊗ and ⊕)"


def _semijoined(table: Table, indicators: Sequence[Table], ops: NumpyForm) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``table``'s key columns and values (in ``ops``' dtype; ones if unvalued), only the rows every
    one of ``indicators`` (each over some of its variables) holds."""
    keys = {v: np.asarray(table.keys[v]) for v in table.variables}
    values = np.full(table.rows, ops.one, dtype=ops.dtype) if table.values is None else \
        np.asarray(table.values, dtype=ops.dtype)
    for ind in indicators:
        held = held_by(keys, ind)
        if not held.all():
            keys, values = {v: c[held] for v, c in keys.items()}, values[held]
    return keys, values


#: Key columns whose span (max - min + 1) is at most this many times their rows, plus
#: :data:`LOOKUP_SLACK`, are numbered through a lookup table (linear time) instead of a sort.
LOOKUP_SPAN_PER_ROW = 4
LOOKUP_SLACK = 1 << 12


def compact_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct values of integer ``columns`` together (sorted), and each column's codes into
    them (int64): a monotone numbering, so code order is key order.

    >>> values, (a, b) = compact_codes(np.array([7, 3, 7]), np.array([10, 3]))
    >>> values.tolist(), a.tolist(), b.tolist()
    ([3, 7, 10], [1, 0, 1], [2, 0])
    >>> values, (a,) = compact_codes(np.array([2**40, -5, 2**40]))   # a wide span: by sorting
    >>> values.tolist(), a.tolist()
    ([-5, 1099511627776], [1, 0, 1])
    """
    columns = tuple(np.asarray(c) for c in columns)
    dtype = np.result_type(*columns)
    rows = sum(len(c) for c in columns)
    low = min(int(c.min()) for c in columns if len(c))
    high = max(int(c.max()) for c in columns if len(c))
    if high - low < LOOKUP_SPAN_PER_ROW * rows + LOOKUP_SLACK:
        offsets = [(c - np.asarray(low, dtype=c.dtype)).astype(np.intp) for c in columns]
        present = np.zeros(high - low + 1, dtype=bool)
        for o in offsets:
            present[o] = True
        if present.all():  # the keys are low, low + 1, ...: their offsets are the codes
            return np.arange(low, high + 1).astype(dtype), [o.astype(np.int64, copy=False) for o in offsets]
        rank = np.cumsum(present, dtype=np.int64) - 1
        return (np.flatnonzero(present) + low).astype(dtype), [rank[o] for o in offsets]
    values, inverse = np.unique(np.concatenate(columns).astype(dtype, copy=False), return_inverse=True)
    inverse = inverse.astype(np.int64).reshape(-1)
    bounds = np.cumsum([len(c) for c in columns])[:-1]
    return values, np.split(inverse, bounds)


def _csr(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> Any:
    """A CSR array of (row, col, value) triples, repeated positions kept as separate entries (the
    product counts each; coo's ``tocsr`` would sum them first).

    Its arrays are new: scipy methods that merge repeats (``abs``, ``sum``, ``sort_indices``) write
    into the data array, which must never be the caller's (a held input is shared by queries).
    """
    import scipy.sparse

    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    if len(rows) and not bool(np.all(rows[1:] >= rows[:-1])):
        # numpy's stable sort of 16-bit integers is a radix sort: 2-5x faster than on int64 codes
        order = np.argsort(rows.astype(np.uint16) if shape[0] <= 1 << 16 else rows, kind="stable")
        values, cols = values[order], cols[order]
    else:  # in order already (a previous product's rows are): copies, not views
        values, cols = values.copy(), cols.copy()
    return scipy.sparse.csr_array((values, cols, indptr), shape=shape)


def _fits_int64(left: Any, right: Any) -> bool:
    """Whether ``Σ_j |a_ij|·|b_jk|`` stays below 2^62 for every (i, k): then no ⊗, partial ⊕-sum or
    result of ``left @ right`` can wrap in int64 (float64 rounding is far inside the factor 2)."""
    import scipy.sparse

    limit = 2.0 ** 62
    # |A| and |B| built from the arrays (scipy's abs() would merge repeated entries in place first)
    a, b = (scipy.sparse.csr_array((np.abs(m.data.astype(np.float64)), m.indices, m.indptr), shape=m.shape)
            for m in (left, right))
    row_sums = np.bincount(np.repeat(np.arange(a.shape[0]), np.diff(a.indptr)), weights=a.data)
    if float(row_sums.max(initial=0.0)) * float(b.data.max(initial=0.0)) < limit:
        return True  # each term's |b_jk| is at most max |B|: a bound without a product
    return float((a @ b).data.max(initial=0.0)) < limit
