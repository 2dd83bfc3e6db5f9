"""A bag join run in-process on the driver: numpy arrays, no Spark job.

Small steps pay more for Spark than for their work: a job per step, a Python
worker to start, an index to ship.  A step the plan places on the driver
(:func:`faq.insideout.placement.step_placement`) runs here instead, with the
same contract as :func:`faq.joins.join_bag` -- the ⊗-product of the relations,
semi-joined with the indicators, ⊕-aggregated onto the kept variables -- over
:class:`Table` values (numpy columns) rather than DataFrames:

``binary``
    merges in the plan's order (:mod:`faq.joins.merges`), ⊗ of the values in numpy, each
    indicator applied as soon as its variables are joined; any key type.  The
    plan names the kernel (:attr:`~faq.insideout.physical.Strategy.binary_kernel`):
    a sparse matrix product (:mod:`faq.joins.sparse_product`), sort-merge or
    pandas merges; this module runs it and decides nothing, except where a
    fact only the data shows rules it out (:func:`merges_to_run`: the note
    then says "plan said ...; ran ... because ...").
``broadcast`` / ``partitioned`` / ``shuffle`` (the generic join)
    with integer keys, the broadcast strategy's own kernel
    (:func:`faq.joins.kernel.build_kernel`): the CSR tries built once, the
    seeds dealt round-robin to ``threads`` threads, each running the
    compiled loop (numba, ``nogil``) when the step ⊕-aggregates to one
    value, else the numpy extenders (:mod:`faq.joins.local_generic`); with
    other keys, the merges above.

Then :func:`~faq.joins.row_arithmetic.aggregate_rows` ⊕-combines per kept
key with the step's ⊕ as a numpy ufunc (``reduceat``), and zeros are
dropped, as the executor's Spark group-by would.  Only semirings with a
numpy form run here (:func:`faq.semirings.numpy_backend.numpy_ops`); the
plan sends the others to Spark.

This module runs a step as the plan says (:func:`join_local`); the parts live
next to it: the :class:`~faq.joins.table.Table` value
(:mod:`faq.joins.table`), the merges (:mod:`faq.joins.merges`), the sparse
matrix product (:mod:`faq.joins.sparse_product`), the threaded generic join
(:mod:`faq.joins.local_generic`), ⊕ per key and int64 overflow checks
(:mod:`faq.joins.row_arithmetic`).  Their public names are importable from
here too, as they were before the split.

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
from typing import Any, Optional, Sequence, Union

import numpy as np

from faq.errors import PlanError
from faq.joins.frame import Aggregation
from faq.joins.local_generic import SEEDS_PER_CALL, generic_local
from faq.joins.merges import (
    BINARY_KERNELS,
    binary_kernel,
    binary_note,
    merged,
    sort_merged,
    without_private,
)
from faq.joins.row_arithmetic import INT_LIMIT, aggregate_rows, check_sums
from faq.joins.sparse_product import LOOKUP_SLACK, LOOKUP_SPAN_PER_ROW, declined, sparse_product
from faq.joins.strategy import JoinStrategy, as_strategy
from faq.joins.table import Table, key_codes, variables_of
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NumpyForm, numpy_ops

__all__ = [
    "DEFAULT_THREADS", "join_local", "merges_to_run",
    # re-exported: they lived here before the split, and callers import them from here
    "INT_LIMIT", "LOOKUP_SLACK", "LOOKUP_SPAN_PER_ROW", "SEEDS_PER_CALL", "Table", "aggregate_rows", "key_codes",
    "sparse_product",
]

#: Threads an in-process generic join deals its seeds to when the caller does not say (the
#: cores Spark would use: the plan passes its parallelism).
DEFAULT_THREADS = max(1, min(os.cpu_count() or 1, 8))


def join_local(
    strategy: Union[str, JoinStrategy],
    relations: Sequence[Table],
    indicators: Sequence[Table],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    aggregate: Optional[Aggregation] = None,
    threads: int = DEFAULT_THREADS,
) -> tuple[Table, str]:
    """One step's bag joined in-process: (the step's output, how it ran).

    Parameters
    ----------
    strategy : JoinStrategy or str
        The plan step's strategy, whole (:class:`~faq.joins.strategy.JoinStrategy`),
        or a name (:class:`~faq.joins.strategy.NamedStrategy`'s defaults).
        ``"binary"`` merges; the generic join's names run its kernel where
        keys are integers.  Of its fields this runner reads:

        * ``shared`` -- uses (relations, then indicators) that read one index;
        * ``aggregate_in_tasks`` -- the generic join's kernel ⊕-aggregates
          while it enumerates; False lists every binding first;
        * ``numpy_kernel`` -- the numpy kernel rather than the compiled loop;
        * ``dense_rows`` -- a triangle-shaped bag with large inputs summed to
          one value by dense-row sums (:mod:`faq.joins.dense_rows`), where
          its wedges are few for its rows, or a 4-cycle summed whole the
          same way (its two steps fused); else the compiled loop;
        * ``oriented_count`` -- a triangle-shaped bag whose atoms read one
          set of pairs without loops, counted by degree orientation
          (:mod:`faq.joins.oriented_triangle`) before dense-row sums or the
          compiled loop;
        * ``sparse_kernel`` -- a triangle-shaped bag summed to one value by
          masked sparse products (:mod:`faq.joins.sparse_triangle`); where
          int64 values are too large to bound, the numpy kernel, which checks
          every sum;
        * ``binary_kernel`` -- the merges the plan chose for a step that runs
          them (a binary step, or a generic one whose keys are not
          integers): a name of :data:`~faq.joins.merges.BINARY_KERNELS`.
          None: no plan named one; :func:`~faq.joins.merges.binary_kernel`'s
          rule picks one from the tables (:func:`merges_to_run`).
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
    threads : int
        Threads the generic join's seeds are dealt to.

    Returns
    -------
    (Table, str)
        Keys per kept variable (no repeats) and their ⊕-aggregated values,
        zeros left out; and a note for the step's report.
    """
    strategy = as_strategy(strategy)
    plus = aggregate.semiring if aggregate is not None else semiring
    arrays = bool(getattr(semiring, "structured", False))  # an array ring: values are (rows, w) arrays
    ops = numpy_ops(semiring, plus, arrays=True) if arrays else numpy_ops(semiring, plus)
    if ops is None:
        raise PlanError(reason=f"no numpy ⊗/⊕ for {semiring.name}/{plus.name}: the step cannot run in-process")
    keep = tuple(aggregate.keep) if aggregate is not None else variables_of(relations, indicators)
    if strategy.name == "binary" and aggregate is not None and not ops.integral:
        relations = _private_summed(relations, indicators, keep, ops)
    integral = all(np.asarray(t.keys[v]).dtype.kind in "iu" for t in (*relations, *indicators) for v in t.variables)
    matrices = None
    binary_kernel = strategy.binary_kernel
    if strategy.name != "binary" and integral and any(r.variables for r in relations):
        product, note = _generic(relations, indicators, semiring, ops, keep, attribute_order,
                                 aggregate if strategy.aggregate_in_tasks else None, strategy.shared or None,
                                 threads, not strategy.numpy_kernel, strategy.sparse_kernel,
                                 strategy.dense_rows, strategy.oriented_count)
    else:
        kernel, note = merges_to_run(binary_kernel, relations, indicators, keep, ops, integral, arrays)
        if kernel == "sparse-product":
            matrices = sparse_product(relations, indicators, keep, ops)
            if matrices is None:  # the product declined on the data: the merges the data allows
                kernel, note = merges_to_run(binary_kernel, relations, indicators, keep, ops, integral, arrays,
                                             declined(relations, indicators, keep, ops))
        if matrices is None:
            product = sort_merged(relations, indicators, ops) if kernel == "sort-merge" else \
                merged(relations, indicators, ops)
    if matrices is not None:  # A(i,j)·B(j,k) ⊕-summed over j: already one row per key
        keys, values = matrices
    else:
        keys, values = aggregate_rows([product.keys[v] for v in keep], product.values, ops)
        if ops.integral and ops.add is np.add:
            check_sums(product, keep, values, semiring)
    nonzero = ~ops.is_zero(values)
    if not nonzero.all():
        keys, values = [k[nonzero] for k in keys], values[nonzero]
    return Table(keep, dict(zip(keep, keys)), values), note


def merges_to_run(
    planned: Optional[str],
    relations: Sequence[Table],
    indicators: Sequence[Table],
    keep: Sequence[str],
    ops: NumpyForm,
    integral: bool,
    arrays: bool,
    refused: str = "",
) -> tuple[str, str]:
    """The merges a step runs, a :data:`~faq.joins.merges.BINARY_KERNELS` name, and the step's note.

    The ``planned`` kernel, as the plan named it.  This is the one place it
    is not: where a fact only the data shows rules it out -- a sparse product
    that ``refused`` (why, :func:`~faq.joins.sparse_product.declined`: its
    int64 sums not bounded below 2^62, or keys that are not integers where
    the plan knew no types), or sort-merge on keys that are not integers --
    the merges :func:`~faq.joins.merges.binary_kernel` picks from the tables
    run, and the note says so: ``plan said X; ran Y because Z``.  With no
    plan (``planned`` None: a caller of :func:`join_local` without one, or a
    plan kept before plans named the kernel) the same rule picks one from
    the tables, silently.

    Examples
    --------
    >>> from faq.semirings import REAL
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> a = Table(("i", "j"), {"i": np.array([0]), "j": np.array([1])}, np.array([2.0]))
    >>> b = Table(("j", "k"), {"j": np.array([1]), "k": np.array([2])}, np.array([3.0]))
    >>> merges_to_run("sort-merge", [a, b], [], ("i", "k"), numpy_ops(REAL), True, False)
    ('sort-merge', 'in-process binary join (sort-merge)')
    >>> merges_to_run(None, [a, b], [], ("i", "k"), numpy_ops(REAL), True, False)
    ('sparse-product', 'in-process binary join (sparse product, scipy)')
    >>> merges_to_run("sparse-product", [a, b], [], ("i", "k"), numpy_ops(REAL), True, False, "its keys mix int64 and uint64")[1]
    'in-process binary join (sort-merge): plan said sparse product, scipy; ran sort-merge because its keys mix int64 and uint64'
    """
    by_data = binary_kernel([t.variables for t in relations], [t.variables for t in indicators], keep,
                            [t.rows for t in (*relations, *indicators)], integral, arrays,
                            ops.sums_products and not refused)[0]
    if planned is None:
        return by_data, binary_note(by_data)
    # The one fallback from the plan: a fact only the data shows rules the planned kernel out.
    if planned == "sparse-product" and refused:
        why = refused
    elif planned == "sort-merge" and not integral:
        why = "its keys are not all integers"
    else:
        return planned, binary_note(planned)
    return by_data, (f"{binary_note(by_data)}: plan said {BINARY_KERNELS[planned]}; ran {BINARY_KERNELS[by_data]} "
                     f"because {why}")


def _generic(relations: Sequence[Table], indicators: Sequence[Table], semiring: Semiring, ops: NumpyForm,
             keep: Sequence[str], attribute_order: Sequence[str], aggregate: Optional[Aggregation],
             shared: Optional[Sequence[Sequence[int]]], threads: int, compiled: bool, sparse: bool,
             dense: bool = False, oriented: bool = False) -> tuple[Table, str]:
    """The generic join's product in-process (integer keys): a triangle's sum over one relation by degree
    orientation (``oriented``), a triangle's or a 4-cycle's sum by dense-row sums (``dense``) or masked sparse
    products (``sparse``), else the threaded kernel (:func:`~faq.joins.local_generic.generic_local`)."""
    sums_products = ops.add is np.add and ops.mul is np.multiply and not keep and not indicators
    declined = ""
    if oriented and sums_products and len(relations) == 3:  # a count: exact in float64 below 2^53 too
        from faq.joins.oriented_triangle import oriented_count

        total, note = oriented_count(relations, threads)
        if total is not None:
            return Table((), {}, np.asarray([total], dtype=ops.dtype)), note
        declined = f"one relation's triangles declined ({note}): "
    if dense and sums_products:
        from faq.joins.dense_rows import bag_total, cycle_order, cycle_total

        four = cycle_order([t.variables for t in relations]) is not None  # a 4-cycle summed whole
        total, note = (cycle_total if four else bag_total)(relations, ops.dtype, threads)
        if total is not None:
            return Table((), {}, np.asarray([total], dtype=ops.dtype)), declined + note
        declined += f"dense-row sums declined ({note}): "
    total = _sparse_total(relations, ops) if sparse and sums_products else None
    if total is not None:
        product = Table((), {}, np.asarray([total], dtype=ops.dtype))
        return product, "in-process triangle join (masked sparse products, scipy)"
    product, note = generic_local(relations, indicators, semiring, attribute_order, aggregate, shared, threads,
                                  compiled and not sparse)
    if sparse:  # int64 values too large for unchecked sums: the numpy kernel checks each
        note = f"masked sparse products: int64 values too large to bound, {note}"
    return product, declined + note


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
    overflow on the product, :func:`~faq.joins.row_arithmetic.check_sums`).

    >>> from faq.semirings import REAL
    >>> f = Table(("o", "p"), {"o": np.array([1, 2, 3]), "p": np.array([7, 7, 8])}, np.array([1.0, 2.0, 4.0]))
    >>> g = Table(("p",), {"p": np.array([7, 8])}, np.array([10.0, 100.0]))
    >>> [(t.variables, t.values.tolist()) for t in _private_summed([f, g], [], (), numpy_ops(REAL))]
    [(('p',), [3.0, 4.0]), (('p',), [10.0, 100.0])]
    """
    out = []
    kept = without_private([r.variables for r in relations], [t.variables for t in indicators], keep)
    for r, remaining in zip(relations, kept):
        if remaining == tuple(r.variables):  # (the plan sums out the same: the kernel's shape is its fact)
            out.append(r)
            continue
        values = r.values if r.values is not None else ops.ones(r.rows)
        keys, summed = aggregate_rows([r.keys[v] for v in remaining], values, ops)
        out.append(Table(remaining, dict(zip(remaining, keys)), summed))
    return out


def _sparse_total(relations: Sequence[Table], ops: NumpyForm) -> Any:
    """The triangle bag's sum by masked sparse products, or None (int64 values too large to bound)."""
    from faq.joins.sparse_triangle import bag_total

    return bag_total(relations, ops.dtype)
