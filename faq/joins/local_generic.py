"""The generic join's kernel run in-process on integer keys, its seeds dealt to threads.

:func:`generic_local` builds the broadcast strategy's own kernel
(:func:`faq.joins.kernel.build_kernel`): the CSR tries built once, the seeds
dealt round-robin to ``threads`` threads, each running the compiled loop
(numba, ``nogil``) when the step ⊕-aggregates to one value, else the numpy
extenders.  :mod:`faq.joins.local` calls it for a generic-join step whose
keys are all integers.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

import numpy as np

from faq.joins.frame import VALUE_COLUMN, Aggregation
from faq.joins.row_arithmetic import multiplied
from faq.joins.table import Table, variables_of
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NumpyForm, numpy_ops

#: Seeds per call of the compiled loop: a thread takes them round-robin, so hubs spread evenly.
SEEDS_PER_CALL = 1 << 16


def generic_local(
    relations: Sequence[Table],
    indicators: Sequence[Table],
    semiring: Semiring,
    attribute_order: Sequence[str],
    aggregate: Optional[Aggregation],
    shared: Optional[Sequence[Sequence[int]]],
    threads: int,
    compiled: bool = True,
) -> tuple[Table, str]:
    """The generic join's kernel over integer keys, its seeds dealt to ``threads`` threads.

    Parameters
    ----------
    relations, indicators : sequence of Table
        The step's relations and (unvalued, distinct) indicators, every key an integer.
    semiring : Semiring
        The query's (⊗).
    attribute_order : sequence of str
        The plan's attribute order (completed to a connected order if it misses variables).
    aggregate : Aggregation, optional
        ⊕ onto ``aggregate.keep`` while enumerating; None lists every binding.
    shared : sequence of sequence of int, optional
        Uses (relations, then indicators) that read one index.
    threads : int
        Threads the seeds are dealt to (at most one per seed).
    compiled : bool
        The compiled loop may run where it qualifies.

    Returns
    -------
    (Table, str)
        The product (⊕-aggregated when ``aggregate`` is given; rows may repeat a key) and a note
        for the step's report.
    """
    import pyarrow as pa

    from faq.arrow_arrays import int64_array, to_numpy
    from faq.hypergraph.acyclic import attribute_order as connected_order
    from faq.joins.kernel import build_kernel, run_kernel
    from faq.joins.task_index import seed_count
    from faq.joins.uses import index_groups

    everything = [*relations, *indicators]
    variables = variables_of(relations, indicators)
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
            values = multiplied(values, np.asarray(columns[f"__g{i}"], dtype=times.dtype), times)
    out = Table(out_vars, keys, values)
    return _constant_factors(out, relations, indicators, times), f"{note}, {threads} threads"


def _compiled_total(kernel: Any, seeds: int, threads: int) -> Any:
    """The compiled loop over every seed, ``threads`` threads taking seeds round-robin (``nogil``)."""
    from faq.errors import IntegerOverflowError
    from faq.joins.compiled import aggregate_seeds, for_tasks, guarded
    from faq.joins.row_arithmetic import INT_LIMIT

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
    if guarded(kernel):  # exact Python ints from the loop: the sum must fit int64 (as the numpy path checks)
        total = sum(parts)
        if not -INT_LIMIT - 1 <= total <= INT_LIMIT:
            raise IntegerOverflowError(operation="⊕", semiring=ops.name.split("/")[-1], where="aggregation")
        return total
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
            values = multiplied(values, np.full(len(values), constant, dtype=ops.dtype), ops)
    return Table(out.variables, out.keys, values)
