"""The generic join's numpy kernel, built and run without Spark: what every broadcast task and partitioned cell does.

:func:`build_kernel` turns the relations' key columns (numpy) into a
:class:`~faq.joins.task_index.Kernel`: one CSR trie per index group
(:mod:`faq.joins.csr`), an extender per relation and attribute
(:mod:`faq.joins.extenders`), and the seeds (the first attribute's values)
in a fixed random order, so that hubs spread over the tasks.
:func:`run_kernel` extends seed ids to full bindings, attribute at a time
(count / propose / validate), depth first in pieces of at most
:data:`BATCH_ROWS` candidates, so memory is bounded whatever the output size;
it emits Arrow batches of bindings with the values to gather, or, when the
kernel ⊕-aggregates (``kernel.ops``), partial aggregates per kept key
(:mod:`faq.joins.partial`), or one ⊕ per task from the compiled loop
(:mod:`faq.joins.compiled`).

A layer of the generic join (the map is in :mod:`faq.joins.generic`): the
strategies above build and ship it (:mod:`faq.joins.broadcast`,
:mod:`faq.joins.executor_index`, :mod:`faq.joins.partitioned`), as do the
in-process join (:mod:`faq.joins.local`) and the numba warm-up
(:mod:`faq.joins.warm`); beneath it sit the kernel value
(:mod:`faq.joins.task_index`) and the decision of what it does with values
(:mod:`faq.joins.task_aggregation`).  The functions here run inside Spark's
Python workers: they stay module-level functions (Spark pickles them by
reference) and import no Spark.

Examples
--------
>>> import pyarrow as pa
>>> from faq.semirings import COUNTING
>>> src, dst = np.array([0, 1, 0, 2]), np.array([1, 2, 2, 3])     # one triangle 0→1→2, 0→2
>>> kernel, seeds, _ = build_kernel([("a", "b"), ("b", "c"), ("a", "c")], [[0, 1, 2]], [([src, dst], None)],
...                                 ["a", "b", "c"], ["a", "b", "c"], COUNTING)
>>> ids = pa.record_batch([pa.array(np.arange(seeds))], names=["id"])
>>> [b.to_pylist() for b in run_kernel(iter([ids]), kernel)]
[[{'a': 0, 'b': 1, 'c': 2}]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from faq.joins import partial as partial_aggregates
from faq.joins.compiled import aggregate_seeds, compilable, compiled_form, guarded, int64_parts
from faq.joins.csr import Trie, build_encoding, build_trie, combine_repeated_rows
from faq.joins.extenders import ArrayBackend, Chunk, TrieExtender, complete, extend
from faq.joins.frame import Aggregation
from faq.joins.partial import PartialAggregate
from faq.joins.task_aggregation import kernel_values
from faq.joins.task_index import Kernel, output_names
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NumpyForm

__all__ = ["BATCH_ROWS", "KernelSpec", "build_kernel", "run_kernel"]

# Largest number of candidates a piece of prefixes may propose (per task, per level).
BATCH_ROWS = 1 << 16


def build_kernel(
    attributes: Sequence[tuple[str, ...]],
    groups: Sequence[Sequence[int]],
    collected: Sequence[tuple[list[np.ndarray], Optional[np.ndarray]]],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    aggregate: Optional[Aggregation] = None,
    ops: Optional[NumpyForm] = None,
    compiled: bool = True,
) -> tuple[Kernel, int, str]:
    """The generic join's index, seeds and plan, in numpy (no Spark): (kernel, seeds, note).

    Parameters
    ----------
    attributes : sequence of tuple of str
        Per use (relation or indicator), its attributes in ``order``.
    groups, collected :
        Uses sharing one index, and each group's key columns (in its
        attribute order) and values (None for indicators).
    order : sequence of str
        The attribute order.
    variables : sequence of str
        The product's variables (output columns when listing).
    semiring : Semiring
    aggregate, ops :
        With ``ops`` (numpy ⊗/⊕ for ``aggregate``), the kernel's tasks
        ⊕-combine per ``aggregate.keep`` instead of listing bindings.
    compiled : bool
        False: the numpy extenders even where the compiled loop qualifies
        (the plan chose them; its note says why).

    Returns
    -------
    (kernel, seeds, note)
        ``kernel.ops`` is None when listing (``note`` says why when an
        aggregation was asked for), ``seeds`` the number of first-attribute
        values; run :func:`run_kernel` on seed ids ``0 .. seeds - 1``.
    """
    encoding = build_encoding([c for keys, _ in collected for c in keys], max(len(k[0]) for k, _ in collected))
    given_ops = ops
    kept_values, ops, bound, note = kernel_values([v for _, v in collected], groups, semiring, aggregate, ops)
    group_tries = [build_trie([encoding.encode(k) for k in keys], encoding.span, values if kept else None)
                   for (keys, values), kept in zip(collected, kept_values)]
    repeating = [n for n, trie in enumerate(group_tries) if trie.levels[-1].duplicates]
    if repeating and compiled and compiled_form(ops, aggregate.keep if aggregate is not None else ())[0]:
        # The compiled loop searches trie levels without repeated entries: a relation's repeated
        # rows join as one row valued by their ⊕ (exact by distributivity).  Only those relations
        # are read again, so a build without repeated rows costs and holds what it did.
        combined = {n: combine_repeated_rows([encoding.encode(k) for k in collected[n][0]], collected[n][1],
                                             encoding.span, ops.add, ops.one) for n in repeating}
        values = [combined[n][1] if n in combined else v for n, (_, v) in enumerate(collected)]
        decided = kernel_values(values, groups, semiring, aggregate, given_ops)
        if decided[1] is not None:  # else the ⊕ of repeats passes the int64 bound: numpy keeps every row
            kept_values, ops, bound, note = decided
            for n, (keys, combined_values) in combined.items():
                group_tries[n] = build_trie(keys, encoding.span, combined_values if kept_values[n] else None)
    tries: dict[int, Trie] = {}
    value_of: dict[int, np.ndarray] = {}
    for g, trie in zip(groups, group_tries):
        for i in g:
            tries[i] = trie
            if trie.values is not None:
                value_of[i] = trie.values
    value_uses = sorted(value_of)

    # One list of extenders per attribute: every use holding it, at its level for it.  A use's
    # trie entry is read later only at its next attribute, or to gather its values at the end.
    levels = [
        [
            TrieExtender(
                i,
                tries[i].levels[attrs.index(x)],
                encoding.span,
                position,
                keeps_node=x != attrs[-1] or i in value_of,
            )
            for i, attrs in enumerate(attributes)
            if x in attrs
        ]
        for position, x in enumerate(order)
    ]
    # Seeds: the first attribute's values, enumerated on the driver from the tries.
    root = Chunk({}, 1)
    pieces = [p for p in extend(root, levels[0], ArrayBackend(max_rows=1 << 62)) if p.rows]
    n_seeds = sum(p.rows for p in pieces)
    # Hubs spread over the tasks: seeds in a fixed random order.
    permutation = np.random.default_rng(0).permutation(n_seeds)
    seed_columns = {
        key: np.ascontiguousarray(np.concatenate([p.columns[key] for p in pieces])[permutation])
        for key in (pieces[0].columns if pieces else {})
        if key == ("a", 0) or key[0] == "n"
    }
    out, names = output_names(aggregate if ops is not None else None, variables, value_uses)
    kernel = Kernel(
        extenders=levels[1:],
        seeds=seed_columns,
        encoding=encoding,
        outputs=[list(order).index(v) for v in out],
        values=[(i, value_of[i]) for i in value_uses],
        names=names,
        batch_rows=BATCH_ROWS,
        ops=ops,
        bound=bound,
        flush_rows=partial_aggregates.FLUSH_ROWS,
    )
    if ops is not None and not compiled:
        note += "; numpy kernel (the plan's choice)"
    elif ops is not None:
        kernel.compiled, why = compilable(kernel)
        note += "; compiled loop (numba)" if kernel.compiled else f"; numpy kernel: {why}"
    return kernel, n_seeds, note


@dataclass(frozen=True)
class KernelSpec:
    """What a broadcast index's kernel is built for, beyond its rows: the arguments of
    :func:`~faq.joins.kernel.build_kernel` that the driver's build and an executor's share.

    Each field is the parameter of ``build_kernel`` by that name: the groups
    of uses sharing one index, the attribute order, the product's variables,
    the semiring, and (with numpy ``ops``) the aggregation the tasks do.
    The executors' build receives it pickled, with ``ops`` as decided from
    the observed value ranges.

    Examples
    --------
    >>> from faq.semirings import get_semiring
    >>> spec = KernelSpec([[0]], ["a"], ["a"], get_semiring("counting"))
    >>> kernel, seeds, note = spec.build([("a",)], [([np.array([1, 2, 5], dtype=np.int64)], None)])
    >>> seeds, list(kernel.names)
    (3, ['a'])
    """

    groups: Sequence[Sequence[int]]
    order: Sequence[str]
    variables: Sequence[str]
    semiring: Semiring
    aggregate: Optional[Aggregation] = None
    ops: Optional[NumpyForm] = None

    def build(
        self, attributes: Sequence[tuple[str, ...]], collected: Sequence[tuple[list[np.ndarray], Optional[np.ndarray]]]
    ) -> tuple[Any, int, str]:
        """:func:`~faq.joins.kernel.build_kernel` of the uses' ``attributes`` and the groups' ``collected``
        rows: (kernel, seeds, note)."""
        return build_kernel(attributes, self.groups, collected, self.order, self.variables, self.semiring,
                            self.aggregate, self.ops)


def run_kernel(batches: Iterator[Any], kernel: Kernel) -> Iterator[Any]:
    """Arrow batches of seed ids (column 0) in; Arrow batches of bindings or partial aggregates out.

    What each broadcast task and each partitioned cell runs (also callable without Spark, e.g. by
    a benchmark or the in-process join).
    """
    if kernel.compiled:
        yield from _compiled_partition(batches, kernel)
        return
    if kernel.ops is not None:
        yield from _aggregate_partition(batches, kernel)
        return
    backend = ArrayBackend(kernel.batch_rows)
    buffered: list[list[np.ndarray]] = []
    rows = 0
    for seeds in _seed_chunks(batches, kernel):
        for leaf in complete(seeds, 0, kernel.extenders, backend):
            buffered.append(_output_columns(leaf, kernel))
            rows += leaf.rows
            if rows >= kernel.batch_rows:
                yield _to_arrow(buffered, kernel)
                buffered, rows = [], 0
    if buffered:
        yield _to_arrow(buffered, kernel)


def _seed_chunks(batches: Iterator[Any], kernel: Kernel) -> Iterator[Chunk]:
    from faq.arrow_arrays import to_numpy

    for batch in batches:
        ids = to_numpy(batch.column(0))  # not Arrow's to_numpy: that imports pandas (0.5 s in a new process)
        if len(ids):
            yield Chunk({key: column[ids] for key, column in kernel.seeds.items()}, len(ids))


def _aggregate_partition(batches: Iterator[Any], kernel: Kernel) -> Iterator[Any]:
    """Bindings ⊗-multiplied and ⊕-combined per kept key in numpy; partial aggregates out."""
    ops = kernel.ops
    backend = ArrayBackend(kernel.batch_rows)
    partial = PartialAggregate(ops, len(kernel.outputs), kernel.encoding.span, kernel.bound, kernel.flush_rows)
    step = partial.safe_rows()
    for seeds in _seed_chunks(batches, kernel):
        for leaf in complete(seeds, 0, kernel.extenders, backend):
            keys = [leaf.get(("a", p)) for p in kernel.outputs]
            values = None
            for i, gathered in kernel.values:
                v = gathered[leaf.get(("n", i))]
                values = v if values is None else ops.mul(values, v)
            for low in range(0, leaf.rows, step):
                high = min(low + step, leaf.rows)
                whole = low == 0 and high == leaf.rows
                partial.add(
                    [k if whole else k[low:high] for k in keys],
                    None if values is None else (values if whole else values[low:high]),
                    high - low,
                )
                if partial.ready():
                    yield _partial_batch(partial, kernel)
    if not partial.empty():
        yield _partial_batch(partial, kernel)


def _compiled_partition(batches: Iterator[Any], kernel: Kernel) -> Iterator[Any]:
    """The partition's seeds ⊕-aggregated to one value by the compiled loop; one row out (none without seeds)."""
    import pyarrow as pa

    ops, total = kernel.ops, None
    from faq.arrow_arrays import to_numpy

    exact = guarded(kernel)  # the loop returns exact Python ints: added exactly, emitted as int64 parts
    for batch in batches:
        ids = to_numpy(batch.column(0))  # not Arrow's to_numpy: that imports pandas (0.5 s in a new process)
        if len(ids):
            part = aggregate_seeds(kernel, ids)
            total = part if total is None else (total + part if exact else ops.add(total, part))
    if total is not None:
        rows = int64_parts(total) if exact else [total]
        yield pa.RecordBatch.from_arrays([pa.array(rows, type=pa.int64() if exact else None)], names=kernel.names)


def _partial_batch(partial: PartialAggregate, kernel: Kernel) -> Any:
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy

    keys, values = partial.drain()
    columns = [arrow_from_numpy(kernel.encoding.decode(k)) for k in keys] + [arrow_from_numpy(values)]
    return pa.RecordBatch.from_arrays(columns, names=kernel.names)


def _output_columns(leaf: Chunk, kernel: Kernel) -> list[np.ndarray]:
    """Decoded keys of the output variables and gathered values, for the rows of ``leaf``."""
    columns = [kernel.encoding.decode(leaf.get(("a", p))) for p in kernel.outputs]
    columns += [values[leaf.get(("n", i))] for i, values in kernel.values]
    return columns


def _to_arrow(parts: list[list[np.ndarray]], kernel: Kernel) -> Any:
    import pyarrow as pa

    columns = parts[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*parts)]
    return pa.RecordBatch.from_arrays([pa.array(c) for c in columns], names=kernel.names)

