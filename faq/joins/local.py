"""A bag join run in-process on the driver: numpy arrays, no Spark job.

Small steps pay more for Spark than for their work: a job per step, a Python
worker to start, an index to ship.  A step the plan places on the driver
(:func:`faq.insideout.physical.choose_placement`) runs here instead, with the
same contract as :func:`faq.joins.join_bag` -- the ⊗-product of the relations,
semi-joined with the indicators, ⊕-aggregated onto the kept variables -- over
:class:`Table` values (numpy columns) rather than DataFrames:

``binary``
    pandas merges in the plan's order, ⊗ of the values in numpy, each
    indicator applied as soon as its variables are joined; any key type.
``broadcast`` / ``partitioned`` / ``shuffle`` (the generic join)
    with integer keys, the broadcast strategy's own kernel
    (:func:`faq.joins.kernel.build_kernel`): the CSR tries built once, the
    seeds dealt round-robin to ``threads`` threads, each running the
    compiled loop (numba, ``nogil``) when the step ⊕-aggregates to one
    value, else the numpy extenders; with other keys, the merges above.

Then :func:`aggregate` ⊕-combines per kept key with the step's ⊕ as a numpy
ufunc (``reduceat``), and zeros are dropped, as the executor's Spark
group-by would.  Only semirings with a numpy form run here
(:func:`faq.semirings.numpy_backend.numpy_ops`); the plan sends the others to
Spark.

Examples
--------
>>> import numpy as np
>>> from faq.joins.local import Table, join_local
>>> from faq.joins.frame import Aggregation
>>> from faq.semirings import COUNTING
>>> e = Table(("a", "b"), {"a": np.array([0, 1, 0]), "b": np.array([1, 2, 2])}, np.ones(3, dtype=np.int64))
>>> def use(x, y):
...     return Table((x, y), {x: e.keys["a"], y: e.keys["b"]}, e.values)
>>> out, note = join_local("broadcast", [use("a", "b"), use("a", "c"), use("b", "c")], [], COUNTING,
...                        ("a", "b", "c"), Aggregation((), COUNTING))
>>> out.values.tolist(), note
([1], 'in-process generic join, index of 9 rows; ⊕ of counting while joining onto (); compiled loop (numba), 2 threads')
>>> paths, note = join_local("binary", [use("a", "b"), use("b", "c")], [], COUNTING, (), Aggregation(("a",), COUNTING))
>>> sorted(zip(paths.keys["a"].tolist(), paths.values.tolist())), note
([(0, 1)], 'in-process binary join (sort-merge)')
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from faq.errors import PlanError
from faq.joins.frame import VALUE_COLUMN, Aggregation
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NumpyForm, as_values, numpy_ops

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: Threads an in-process generic join deals its seeds to when the caller does not say (the
#: cores Spark would use: the plan passes its parallelism).
DEFAULT_THREADS = max(1, min(os.cpu_count() or 1, 8))
#: Seeds per call of the compiled loop: a thread takes them round-robin, so hubs spread evenly.
SEEDS_PER_CALL = 1 << 16
#: Largest input of a binary join done by sorting in numpy; larger ones use pandas' hash merges.  Per
#: join, pandas costs ~20 ms of fixed overhead and numpy's sorts grow faster: measured here, a
#: 37-variable Bayesian network's 30 steps took 0.6 s with pandas and 0.23-0.38 s sorting, while the
#: dwt_2680 cube (25k-row matrices) took 0.29 s with pandas and 0.40 s sorting.
SORT_MERGE_ROWS = 16_384


@dataclass(frozen=True)
class Table:
    """A relation held in-process: a key column per variable and one value column.

    ``values`` is None for an indicator (every row is one).  Rows with equal
    keys may repeat (partial aggregates, an input with duplicate keys); the
    join treats every row as a row, as the Spark joins do.
    """

    variables: tuple[str, ...]
    keys: Mapping[str, np.ndarray]
    values: Optional[np.ndarray]

    @property
    def rows(self) -> int:
        if self.values is not None:
            return len(self.values)
        return len(next(iter(self.keys.values()))) if self.keys else 1

    def projection(self, variables: Sequence[str]) -> "Table":
        """The distinct ``variables``-projection of the rows (an indicator)."""
        codes = key_codes([self.keys[v] for v in variables])
        if codes is not None:
            _, first = np.unique(codes, return_index=True)
            return Table(tuple(variables), {v: np.asarray(self.keys[v])[first] for v in variables}, None)
        frame = self.frame(valued=False)[list(variables)].drop_duplicates()
        return Table(tuple(variables), {v: frame[v].to_numpy() for v in variables}, None)

    def frame(self, valued: bool = True) -> "pd.DataFrame":
        """The rows as a pandas DataFrame (keys, then :data:`VALUE_COLUMN` when ``valued``)."""
        import pandas as pd

        columns: dict[str, Any] = {v: self.keys[v] for v in self.variables}
        if valued and self.values is not None:
            columns[VALUE_COLUMN] = self.values
        if not columns:
            return pd.DataFrame(index=range(self.rows))
        return pd.DataFrame(columns, copy=False)

    @classmethod
    def from_arrow(cls, table: "pa.Table", variables: Sequence[str], semiring: Semiring, valued: bool = True) -> "Table":
        """A table of Arrow columns named as ``variables`` (and :data:`VALUE_COLUMN`), rows with a
        null key or value left out (as the Spark joins leave them), values in ``semiring``'s dtype."""
        import pyarrow.compute as pc

        names = list(variables) + ([VALUE_COLUMN] if valued else [])
        table = table.select(names)
        if any(table.column(n).null_count for n in names):
            keep = None
            for n in names:
                valid = pc.is_valid(table.column(n))
                keep = valid if keep is None else pc.and_(keep, valid)
            table = table.filter(keep)
        keys = {v: cls.column_array(table.column(v)) for v in variables}
        values = None
        if valued:
            values = as_values(semiring, cls.column_array(table.column(VALUE_COLUMN)))
        return cls(tuple(variables), keys, values)

    @staticmethod
    def column_array(column: "pa.ChunkedArray") -> np.ndarray:
        """An Arrow column without nulls as a numpy array (strings and other objects as an object array)."""
        return column.to_numpy(zero_copy_only=False)

    def to_arrow(self, value_name: str = VALUE_COLUMN) -> "pa.Table":
        import pyarrow as pa

        columns = [pa.array(self.keys[v]) for v in self.variables]
        names = list(self.variables)
        if self.values is not None:
            columns.append(pa.array(self.values))
            names.append(value_name)
        return pa.Table.from_arrays(columns, names=names)


def join_local(
    strategy: str,
    relations: Sequence[Table],
    indicators: Sequence[Table],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    aggregate: Optional[Aggregation] = None,
    shared: Optional[Sequence[Sequence[int]]] = None,
    threads: int = DEFAULT_THREADS,
    in_kernel: bool = True,
    compiled: bool = True,
    sparse: bool = False,
) -> tuple[Table, str]:
    """One step's bag joined in-process: (the step's output, how it ran).

    Parameters
    ----------
    strategy : str
        The plan's strategy name: ``"binary"`` merges; the generic join's
        names run its kernel where keys are integers.
    relations, indicators : sequence of Table
        As :func:`faq.joins.join_bag` takes them (indicators unvalued and
        distinct).
    semiring : Semiring
        The query's (⊗).
    attribute_order : sequence of str
        The generic join's attribute order.
    aggregate : Aggregation, optional
        ⊕ onto ``aggregate.keep`` (None: the step's product, ⊕-combined per
        key in ``semiring``, as the executor does for a final product).
    shared : sequence of sequence of int, optional
        Uses (relations, then indicators) that read one index.
    threads : int
        Threads the generic join's seeds are dealt to.
    in_kernel : bool
        The generic join's kernel ⊕-aggregates while it enumerates (the
        plan's :attr:`~faq.insideout.physical.Strategy.aggregate_in_tasks`);
        False lists every binding first.
    compiled : bool
        The compiled loop may run the kernel where it qualifies; False: the
        numpy kernel (the plan's :attr:`~faq.insideout.physical.Strategy.numpy_kernel`).
    sparse : bool
        A triangle-shaped bag summed to one value by masked sparse products
        (:mod:`faq.joins.sparse_triangle`; the plan's
        :attr:`~faq.insideout.physical.Strategy.sparse_kernel`); where int64
        values are too large to bound, the numpy kernel, which checks every sum.

    Returns
    -------
    (Table, str)
        Keys per kept variable (no repeats) and their ⊕-aggregated values,
        zeros left out; and a note for the step's report.
    """
    plus = aggregate.semiring if aggregate is not None else semiring
    arrays = bool(getattr(semiring, "structured", False))  # an array ring: values are (rows, w) arrays
    ops = numpy_ops(semiring, plus, arrays=True) if arrays else numpy_ops(semiring, plus)
    if ops is None:
        raise PlanError(reason=f"no numpy ⊗/⊕ for {semiring.name}/{plus.name}: the step cannot run in-process")
    keep = tuple(aggregate.keep) if aggregate is not None else _variables(relations, indicators)
    if strategy == "binary" and aggregate is not None and not ops.integral:
        relations = _private_summed(relations, indicators, keep, ops)
    integral = all(np.asarray(t.keys[v]).dtype.kind in "iu" for t in (*relations, *indicators) for v in t.variables)
    matrices = sparse_product(relations, indicators, keep, ops) if strategy == "binary" and integral else None
    if matrices is not None:  # A(i,j)·B(j,k) ⊕-summed over j: already one row per key
        (keys, values), note = matrices, "in-process binary join (sparse product, scipy)"
    else:
        sums_products = ops.add is np.add and ops.mul is np.multiply and not keep and not indicators
        total = _sparse_total(relations, ops) if sparse and sums_products and strategy != "binary" and integral \
            else None
        if total is not None:
            product = Table((), {}, np.asarray([total], dtype=ops.dtype))
            note = "in-process triangle join (masked sparse products, scipy)"
        elif strategy != "binary" and integral and any(r.variables for r in relations):
            product, note = _generic(relations, indicators, semiring, attribute_order,
                                     aggregate if in_kernel else None, shared, threads, compiled and not sparse)
            if sparse:  # int64 values too large for unchecked sums: the numpy kernel checks each
                note = f"masked sparse products: int64 values too large to bound, {note}"
        elif integral and (arrays or all(t.rows <= SORT_MERGE_ROWS for t in (*relations, *indicators))):
            # (a pandas column holds one number a row: array values are merged in numpy at any size)
            product, note = _sort_merged(relations, indicators, ops), "in-process binary join (sort-merge)"
        else:
            product, note = _merged(relations, indicators, ops), "in-process binary join (pandas merges)"
        keys, values = aggregate_rows([product.keys[v] for v in keep], product.values, ops)
        if ops.integral and ops.add is np.add:
            _check_sums(product, keep, values, semiring)
    nonzero = ~ops.is_zero(values)
    if not nonzero.all():
        keys, values = [k[nonzero] for k in keys], values[nonzero]
    return Table(keep, dict(zip(keep, keys)), values), note


def _private_summed(relations: Sequence[Table], indicators: Sequence[Table], keep: Sequence[str],
                   ops: NumpyForm) -> list[Table]:
    """Each relation with its *private* variables ⊕-summed out before the join.

    A variable the step eliminates that occurs in one relation only (no
    other relation or indicator reads it) can be summed out of that relation
    first: ⊕ distributes over ⊗, and no other factor depends on it.  A fact
    table joined to its dimensions on some of its keys then enters the join
    with one row per key it shares, not one per fact -- for an array ring's
    wide values, the difference between ⊗-ing every fact row and ⊗-ing its
    groups.  Integer semirings are left alone (their sums are checked for
    overflow on the product, :func:`_check_sums`).

    >>> from faq.semirings import REAL
    >>> f = Table(("o", "p"), {"o": np.array([1, 2, 3]), "p": np.array([7, 7, 8])}, np.array([1.0, 2.0, 4.0]))
    >>> g = Table(("p",), {"p": np.array([7, 8])}, np.array([10.0, 100.0]))
    >>> [(t.variables, t.values.tolist()) for t in _private_summed([f, g], [], (), numpy_ops(REAL))]
    [(('p',), [3.0, 4.0]), (('p',), [10.0, 100.0])]
    """
    out = []
    for i, r in enumerate(relations):
        others = {v for j, t in enumerate(relations) if j != i for v in t.variables}
        others |= {v for t in indicators for v in t.variables}
        private = [v for v in r.variables if v not in keep and v not in others]
        if not private or r.rows < 2:
            out.append(r)
            continue
        remaining = tuple(v for v in r.variables if v not in private)
        values = r.values if r.values is not None else ops.ones(r.rows)
        keys, summed = aggregate_rows([r.keys[v] for v in remaining], values, ops)
        out.append(Table(remaining, dict(zip(remaining, keys)), summed))
    return out


def _sparse_total(relations: Sequence[Table], ops: NumpyForm) -> Any:
    """The triangle bag's sum by masked sparse products, or None (int64 values too large to bound)."""
    from faq.joins.sparse_triangle import bag_total

    return bag_total(relations, ops.dtype)


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
    rows, (i,) = _compact_codes(a_keys[first])
    shared, (j_a, j_b) = _compact_codes(a_keys[j], b_keys[j])
    cols, (k,) = _compact_codes(b_keys[last])
    left = _csr(i, j_a, a_values, (len(rows), len(shared)))
    right = _csr(j_b, k, b_values, (len(shared), len(cols)))
    if ops.integral and not _fits_int64(left, right):
        return None
    product = left @ right  # scipy's SpGEMM leaves out exact zeros (as the step must); columns unsorted
    out_rows = np.repeat(np.arange(product.shape[0], dtype=np.int64), np.diff(product.indptr))
    keys = {first: rows[out_rows], last: cols[product.indices]}
    values = np.asarray(product.data, dtype=ops.dtype)
    for ind in after:
        held = _held_by(keys, ind)
        keys, values = {v: c[held] for v, c in keys.items()}, values[held]
    return [keys[first], keys[last]], values


def _product_sides(relations: Sequence[Table], keep: Sequence[str], ops: NumpyForm
                   ) -> Optional[tuple[Table, Table, str]]:
    """(A, B, j) when the relations are A(keep[0], j) and B(j, keep[1]) (columns in either order)
    with integer keys, (+, ×) over float or int values; else None."""
    if not (ops.add is np.add and ops.mul is np.multiply and np.dtype(ops.dtype).kind in "fi"):
        return None
    if len(relations) != 2 or len(keep) != 2 or keep[0] == keep[1]:
        return None
    first, second = relations
    if any(len(r.variables) != 2 or len(set(r.variables)) != 2 for r in relations):
        return None
    shared = set(first.variables) & set(second.variables)
    if len(shared) != 1 or set(first.variables) ^ set(second.variables) != set(keep):
        return None
    a, b = (first, second) if keep[0] in first.variables else (second, first)
    (j,) = shared
    kinds = {np.asarray(r.keys[v]).dtype.kind for r in relations for v in r.variables}
    if not kinds <= set("iu") or np.result_type(np.asarray(a.keys[j]), np.asarray(b.keys[j])).kind not in "iu":
        return None  # other keys, or int64 with uint64 (numpy would compare them as floats)
    return a, b, j


def _semijoined(table: Table, indicators: Sequence[Table], ops: NumpyForm) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``table``'s key columns and values (in ``ops``' dtype; ones if unvalued), only the rows every
    one of ``indicators`` (each over some of its variables) holds."""
    keys = {v: np.asarray(table.keys[v]) for v in table.variables}
    values = np.full(table.rows, ops.one, dtype=ops.dtype) if table.values is None else \
        np.asarray(table.values, dtype=ops.dtype)
    for ind in indicators:
        held = _held_by(keys, ind)
        if not held.all():
            keys, values = {v: c[held] for v, c in keys.items()}, values[held]
    return keys, values


#: Key columns whose span (max - min + 1) is at most this many times their rows, plus
#: :data:`LOOKUP_SLACK`, are numbered through a lookup table (linear time) instead of a sort.
LOOKUP_SPAN_PER_ROW = 4
LOOKUP_SLACK = 1 << 12


def _compact_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct values of integer ``columns`` together (sorted), and each column's codes into
    them (int64): a monotone numbering, so code order is key order.

    >>> values, (a, b) = _compact_codes(np.array([7, 3, 7]), np.array([10, 3]))
    >>> values.tolist(), a.tolist(), b.tolist()
    ([3, 7, 10], [1, 0, 1], [2, 0])
    >>> values, (a,) = _compact_codes(np.array([2**40, -5, 2**40]))   # a wide span: by sorting
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


def _variables(relations: Sequence[Table], indicators: Sequence[Table]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for r in (*relations, *indicators) for v in r.variables))


def aggregate_rows(keys: Sequence[np.ndarray], values: np.ndarray, ops: NumpyForm) -> tuple[list[np.ndarray], np.ndarray]:
    """``values`` ⊕-combined per key (rows of ``keys``): (one row per distinct key, its ⊕).

    >>> from faq.semirings import MIN_PLUS
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
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_codes[1:] != sorted_codes[:-1])))
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


def _check_sums(product: Table, keep: Sequence[str], sums: np.ndarray, semiring: Semiring) -> None:
    """Refuse int64 ⊕-sums that wrapped: exact Python sums of the group's magnitudes bound them."""
    magnitude = np.abs(product.values.astype(np.float64))
    if len(magnitude) == 0 or float(magnitude.sum()) < 2.0 ** 62:
        return  # no group can reach 2^63
    _, exact = aggregate_rows([product.keys[v] for v in keep], product.values.astype(object),
                              _ObjectSum())
    if any(not -INT_LIMIT - 1 <= int(v) <= INT_LIMIT for v in exact):
        from faq.errors import IntegerOverflowError

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


def _multiplied(a: np.ndarray, b: np.ndarray, ops: NumpyForm) -> np.ndarray:
    """``a ⊗ b``; int64 products that would overflow are refused, as Spark's ANSI arithmetic refuses them."""
    out = ops.mul(a, b)
    if ops.integral and ops.mul is np.multiply and len(out):
        wide = np.abs(a.astype(np.float64) * b.astype(np.float64))
        if float(wide.max()) >= 2.0 ** 62:
            exact = [int(x) * int(y) for x, y in zip(a.tolist(), b.tolist())]
            if any(not -INT_LIMIT - 1 <= v <= INT_LIMIT for v in exact):
                from faq.errors import IntegerOverflowError

                raise IntegerOverflowError(operation="⊗", semiring=ops.name.split("/")[0], where="join")
    return out


def key_codes(keys: Sequence[np.ndarray]) -> Optional[np.ndarray]:
    """One int64 per row, equal exactly where the rows of integer ``keys`` are equal (None for
    keys of other types, or when the columns' distinct values are too many to combine).

    >>> key_codes([np.array([5, 7, 5]), np.array([1, 1, 1])]).tolist()
    [0, 1, 0]
    """
    code: Optional[np.ndarray] = None
    span = 1
    for k in keys:
        k = np.asarray(k)
        if k.dtype.kind not in "iub":
            return None
        values, inverse = np.unique(k, return_inverse=True)
        if span * max(1, len(values)) >= 1 << 62:
            return None
        inverse = inverse.astype(np.int64).reshape(-1)
        code = inverse if code is None else code * len(values) + inverse
        span *= max(1, len(values))
    return code


def _matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i, j) with ``left[i] == right[j]`` (int64 codes): an inner join by sorting ``right``.

    >>> i, j = _matches(np.array([3, 1, 3]), np.array([3, 3, 2]))
    >>> list(zip(i.tolist(), j.tolist()))
    [(0, 0), (0, 1), (2, 0), (2, 1)]
    """
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    low = np.searchsorted(ordered, left, side="left")
    counts = np.searchsorted(ordered, left, side="right") - low
    left_rows = np.repeat(np.arange(len(left), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
    return left_rows, order[np.repeat(low, counts) + within]


def _shared_codes(left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray], on: Sequence[str]
                  ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Codes of ``on`` numbered over both sides at once, and whether they are exact (equal exactly
    where the keys are; else equal where the first variable is: too many combinations for int64)."""
    n = len(np.asarray(left[on[0]]))
    codes = key_codes([np.concatenate([np.asarray(left[v]), np.asarray(right[v])]) for v in on])
    exact = codes is not None
    if not exact:
        codes = key_codes([np.concatenate([np.asarray(left[on[0]]), np.asarray(right[on[0]])])])
    return codes[:n], codes[n:], exact


def _sort_merged(relations: Sequence[Table], indicators: Sequence[Table], ops: NumpyForm) -> Table:
    """:func:`_merged` for integer keys in numpy: each join matches sorted codes (no pandas), each
    indicator keeps the rows whose keys it holds, applied as soon as its variables are joined."""
    keys: dict[str, np.ndarray] = {}
    values: Optional[np.ndarray] = None
    pending = [ind for ind in indicators if ind.variables]
    for r in relations:
        theirs = {v: np.asarray(r.keys[v]) for v in r.variables}
        their_values = r.values if r.values is not None else ops.ones(r.rows)
        if values is None:
            keys, values = theirs, np.asarray(their_values, dtype=ops.dtype)
        else:
            on = [v for v in r.variables if v in keys]
            if on:
                mine, other, exact = _shared_codes(keys, theirs, on)
                i, j = _matches(mine, other)
                if not exact:  # matched on the first variable: keep the pairs equal on all
                    same = np.all([keys[v][i] == theirs[v][j] for v in on], axis=0)
                    i, j = i[same], j[same]
            else:  # no shared variable: a cross product
                i = np.repeat(np.arange(len(values), dtype=np.int64), len(their_values))
                j = np.tile(np.arange(len(their_values), dtype=np.int64), len(values))
            keys = {**{v: k[i] for v, k in keys.items()}, **{v: k[j] for v, k in theirs.items() if v not in keys}}
            values = _multiplied(values[i], np.asarray(their_values, dtype=ops.dtype)[j], ops)
        for ind in [ind for ind in pending if set(ind.variables) <= set(keys)]:
            held = _held_by(keys, ind)
            keys, values = {v: k[held] for v, k in keys.items()}, values[held]
            pending.remove(ind)
    if values is None:  # no relation: the product is one, on no variable
        values = ops.ones(1)
    product = Table(tuple(keys), keys, values)
    if pending:  # variables no relation holds (the plan makes none): as the merges would
        return _merged([product], pending, ops)
    return product


def _held_by(keys: Mapping[str, np.ndarray], indicator: Table) -> np.ndarray:
    """Which rows of integer ``keys`` (a column per variable, the indicator's among them) the
    indicator holds: a boolean mask.

    >>> ind = Table(("b",), {"b": np.array([2, 5])}, None)
    >>> _held_by({"a": np.array([0, 1, 2]), "b": np.array([5, 3, 2])}, ind).tolist()
    [True, False, True]
    """
    if len(indicator.variables) == 1:  # one column: its values are the codes
        (v,) = indicator.variables
        return np.isin(np.asarray(keys[v]), np.asarray(indicator.keys[v]))
    mine, other, exact = _shared_codes(keys, indicator.keys, indicator.variables)
    if exact:
        return np.isin(mine, other)
    i, j = _matches(mine, other)
    same = np.all([np.asarray(keys[v])[i] == np.asarray(indicator.keys[v])[j] for v in indicator.variables], axis=0)
    held = np.zeros(len(mine), dtype=bool)
    held[i[same]] = True
    return held


def _merged(relations: Sequence[Table], indicators: Sequence[Table], ops: NumpyForm) -> Table:
    """The bag's product by pandas merges in the given order, indicators applied once covered."""
    import pandas as pd

    product: Optional[pd.DataFrame] = None
    pending = [ind for ind in indicators if ind.variables]  # (the plan's indicators all have variables)
    for r in relations:
        right = r.frame()
        if r.values is None:
            right[VALUE_COLUMN] = np.full(len(right), ops.one, dtype=ops.dtype)
        if product is None:
            product = right
        else:
            right = right.rename(columns={VALUE_COLUMN: "__w"})
            on = [v for v in r.variables if v in product.columns]
            product = product.merge(right, on=on, how="inner") if on else product.merge(right, how="cross")
            product[VALUE_COLUMN] = _multiplied(product[VALUE_COLUMN].to_numpy(), product.pop("__w").to_numpy(), ops)
        covered = [ind for ind in pending if set(ind.variables) <= set(product.columns)]
        for ind in covered:
            product = product.merge(ind.frame(valued=False), on=list(ind.variables), how="inner")
            pending.remove(ind)
    if product is None:  # no relation: the product is one, on no variable
        product = pd.DataFrame({VALUE_COLUMN: np.array([ops.one], dtype=ops.dtype)})
    for ind in pending:  # variables no relation holds: a cross product with the indicator
        product = product.merge(ind.frame(valued=False), how="cross")
    variables = tuple(c for c in product.columns if c != VALUE_COLUMN)
    values = np.asarray(product[VALUE_COLUMN].to_numpy(), dtype=ops.dtype)
    return Table(variables, {v: product[v].to_numpy() for v in variables}, values)


def _generic(
    relations: Sequence[Table],
    indicators: Sequence[Table],
    semiring: Semiring,
    attribute_order: Sequence[str],
    aggregate: Optional[Aggregation],
    shared: Optional[Sequence[Sequence[int]]],
    threads: int,
    compiled: bool = True,
) -> tuple[Table, str]:
    """The generic join's kernel over integer keys, its seeds dealt to ``threads`` threads."""
    import pyarrow as pa

    from faq.arrow_arrays import int64_array, to_numpy
    from faq.hypergraph.acyclic import attribute_order as connected_order
    from faq.joins.kernel import build_kernel, run_kernel
    from faq.joins.task_index import seed_count
    from faq.joins.uses import index_groups

    everything = [*relations, *indicators]
    variables = _variables(relations, indicators)
    given = [v for v in dict.fromkeys(attribute_order) if v in variables]
    edges = [t.variables for t in everything if t.variables]
    order = tuple(given) if set(given) == set(variables) else tuple(connected_order(edges, first=given))
    position = {v: i for i, v in enumerate(order)}
    kept = [k for k, t in enumerate(everything) if t.variables]
    attributes = [tuple(sorted(everything[k].variables, key=position.__getitem__)) for k in kept]
    groups = index_groups(shared, kept)
    collected = []
    for g in groups:
        table = everything[kept[g[0]]]
        collected.append(([np.asarray(table.keys[a], dtype=np.int64) for a in attributes[g[0]]],
                          table.values if kept[g[0]] < len(relations) else None))
    ops = numpy_ops(semiring, aggregate.semiring) if aggregate is not None else None
    kernel, seeds, why = build_kernel(attributes, groups, collected, order, variables, semiring, aggregate, ops,
                                      compiled=compiled)
    rows = sum(len(keys[0]) for keys, _ in collected)
    threads = max(1, min(threads, seeds))
    why = why.replace(" inside tasks ", " while joining ")  # no tasks here: the kernel runs in-process
    note = f"in-process generic join, index of {rows} rows" + (f"; {why}" if why else "")
    if kernel.compiled:
        total = _compiled_total(kernel, seeds, threads)
        keys: dict[str, np.ndarray] = {}
        values = np.asarray([] if total is None else [total], dtype=kernel.ops.dtype)
        out = Table((), keys, values)
        return _constant_factors(out, relations, indicators, ops or numpy_ops(semiring)), f"{note}, {threads} threads"

    def batches(ids: np.ndarray):
        for low in range(0, len(ids), SEEDS_PER_CALL):
            yield pa.record_batch([int64_array(ids[low:low + SEEDS_PER_CALL])], names=["id"])

    def run(task: int) -> list:
        return list(run_kernel(batches(np.arange(task, seeds, threads, dtype=np.int64)), kernel))

    n_seeds = seed_count(kernel)
    with ThreadPoolExecutor(threads) as pool:
        parts = [b for found in pool.map(run, range(threads)) if n_seeds for b in found]
    names = kernel.names
    if parts:
        table = pa.Table.from_batches(parts)
        columns = {n: to_numpy(table.column(n)) for n in names}
    else:
        columns = {n: np.empty(0, dtype=np.int64) for n in names}
    out_vars = tuple(names[: len(kernel.outputs)])
    keys = {v: np.asarray(columns[v], dtype=np.int64) for v in out_vars}
    times = numpy_ops(semiring)
    if kernel.ops is not None:
        values = np.asarray(columns[VALUE_COLUMN], dtype=times.dtype)
    else:
        values = np.full(len(columns[names[0]]) if names else 0, times.one, dtype=times.dtype)
        for i, _ in kernel.values:
            values = _multiplied(values, np.asarray(columns[f"__g{i}"], dtype=times.dtype), times)
    out = Table(out_vars, keys, values)
    return _constant_factors(out, relations, indicators, times), f"{note}, {threads} threads"


def _compiled_total(kernel: Any, seeds: int, threads: int) -> Any:
    """The compiled loop over every seed, ``threads`` threads taking seeds round-robin (``nogil``)."""
    from faq.joins.compiled import aggregate_seeds, for_tasks

    ops = kernel.ops
    if seeds == 0:
        return None
    kernel = for_tasks(kernel)  # its flat arrays built once, before the threads read them

    def run(task: int) -> Any:
        return aggregate_seeds(kernel, np.arange(task, seeds, threads, dtype=np.int64))

    if threads == 1:
        parts = [run(0)]
    else:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(run, range(threads)))
    total = parts[0]
    for p in parts[1:]:
        total = ops.add(total, p)
    return total


def _constant_factors(out: Table, relations: Sequence[Table], indicators: Sequence[Table], ops: NumpyForm) -> Table:
    """Relations without variables (scalars) multiply every row; an empty one empties the product."""
    values = out.values
    for r in relations:
        if not r.variables:
            constant = r.values[0] if r.values is not None and len(r.values) else None
            if constant is None:
                return Table(out.variables, {v: k[:0] for v, k in out.keys.items()}, values[:0])
            values = _multiplied(values, np.full(len(values), constant, dtype=ops.dtype), ops)
    return Table(out.variables, out.keys, values)

