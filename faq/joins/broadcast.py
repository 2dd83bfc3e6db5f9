"""The broadcast strategy of the generic join: one index, shipped once per machine, seeds dealt to tasks.

Each relation becomes a CSR trie of numpy arrays (:mod:`faq.joins.csr`),
written once to a file that Spark ships to each executor and every Python
worker there memory-maps (:mod:`faq.joins.mapped`: one copy per machine, on
classic Spark and Spark Connect alike) -- or, given ``index_dir``, built by the
first worker of each executor from Parquet inputs Spark writes there
(:mod:`faq.joins.executor_index`: the driver holds no row).  The first
attribute's values (seeds) are enumerated from the tries and dealt
round-robin to one task per core (an even share of heavy seeds each), and
each task's seeds are extended to full bindings in vectorised numpy inside
``mapInArrow`` (validation looks candidates up in a trie level: binary
search, then a hash index built once per worker when the level is used
enough -- :meth:`faq.joins.csr.TrieLevel.find`), in pieces of at most
:data:`~faq.joins.kernel.BATCH_ROWS` candidates, depth first, so memory per
task is bounded whatever the output size.  Integer keys only.  Uses the plan
found to read the same data in the same column order (``shared``) are
indexed once.

With ``ops`` (the caller ⊕-aggregates right after, and the semirings have
numpy forms), the tasks emit partial aggregates over the kept variables
instead of bindings (:mod:`faq.joins.partial`), or, when nothing is kept, one
⊕ per task from the compiled loop (:mod:`faq.joins.compiled`).

A strategy layer of the generic join (the map is in :mod:`faq.joins.generic`,
which calls :func:`broadcast_join`): above the numpy kernel
(:mod:`faq.joins.kernel`) and the uses' Spark helpers
(:mod:`faq.joins.uses`).  :func:`expand_partition`, the ``mapInArrow`` body,
runs in Spark's Python workers: it stays a module-level function, which
Spark pickles by reference to this module.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

import numpy as np

from faq.handback import empty_frame
from faq.hypergraph.shares import format_bytes
from faq.joins.compiled import for_tasks
from faq.joins.frame import VALUE_COLUMN, Aggregation
from faq.joins.kernel import BATCH_ROWS, KernelSpec, run_kernel
from faq.joins.task_index import TaskIndex, seed_count
from faq.joins.uses import Use, check_integral, normalised, with_product
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NUMPY_DTYPES, NumpyForm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.scope import Scope

log = logging.getLogger(__name__)

__all__ = ["broadcast_join", "index_on_driver", "expand_partition", "oriented_in_tasks", "oriented_partition",
           "SEED_TASKS_PER_CORE", "ROWS_PER_PARTITION"]

# A broadcast join's tasks per core.  Its seeds are dealt round-robin (task p of P runs seeds p,
# p + P, ...), so every task gets an even share of light and heavy seeds however the key order
# clusters them: SNAP graphs number their hubs together, and contiguous seed ranges gave the
# heaviest of 8 tasks 4.4x the mean work on soc-Slashdot0902 (dealt: 1.03x).  One task per core
# then suffices, and pays Spark's start of a Python task (about 0.1 s here) once.
SEED_TASKS_PER_CORE = 1
# ... but at most one task per this many index rows (tiny joins run as one task).
ROWS_PER_PARTITION = 50_000
#: What the probed workers load in the background before the oriented count's tasks
#: (:func:`faq.workers.ensure_workers`): its kernels, not the compiled loop's.
ORIENTED_WARM = "faq.joins.oriented_triangle:warm_task"


def broadcast_join(
    spark: "SparkSession",
    uses: Sequence[Use],
    groups: list[list[int]],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    aggregate: Optional[Aggregation] = None,
    ops: Optional[NumpyForm] = None,
    index_dir: Optional[str] = None,
    scope: Optional["Scope"] = None,
    oriented: bool = False,
) -> tuple["DataFrame", tuple[str, ...], str]:
    """The broadcast strategy: (DataFrame, its variables, what it did).

    Each group of uses sharing data is indexed once: on the driver, from
    rows it collects or holds (:func:`index_on_driver`), or, given
    ``index_dir``, on the executors from Parquet files Spark writes there
    (:func:`faq.joins.executor_index.index_on_executors`; ``scope`` removes
    them).  The plan bounded the index's size.

    With ``ops`` (numpy ⊗/⊕ for ``aggregate``), each task multiplies the
    values of its bindings and ⊕-combines them per kept key
    (:class:`~faq.joins.partial.PartialAggregate`): the result is partial
    aggregates over ``aggregate.keep``.  Without, every binding is listed
    with each relation's value gathered, and ⊗ is a Spark expression (:func:`~faq.joins.uses.with_product`).

    With ``oriented`` (the plan's :attr:`~faq.insideout.physical.Strategy.oriented_count`: a triangle bag
    over one relation, counted), the tasks run the oriented triangle count first
    (:func:`oriented_in_tasks`); where it declines, the index above.
    """
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    from faq.spark import default_parallelism

    check_integral(uses)
    from faq.prefetch import run_in_background
    from faq.spark_ui import in_thread
    from faq.workers import WARM, ensure_workers

    # The tasks below run Python: the workers are checked once per session (on a fresh one, started: seconds)
    # while the driver gathers and indexes; shipping the index waits for that check (and raises what it found).
    warm = ORIENTED_WARM if oriented else WARM
    probe = run_in_background(in_thread(spark, "checking the workers' Python", lambda: ensure_workers(spark, warm)),
                              label="probe-workers")
    try:
        return _broadcast_join(spark, uses, groups, order, variables, semiring, aggregate, ops, index_dir, scope,
                               oriented)
    finally:
        probe.join()


def _broadcast_join(spark, uses, groups, order, variables, semiring, aggregate, ops, index_dir, scope, oriented):
    """:func:`broadcast_join`'s body, the workers' check under way."""
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    from faq.spark import default_parallelism

    gathered = None  # the rows the driver collects or holds, gathered once for the index it builds
    if oriented and index_dir is None and ops is not None and aggregate is not None and not aggregate.keep:
        gathered = [_gathered(uses[g[0]], semiring) for g in groups]
        counted = oriented_in_tasks(spark, uses, groups, gathered, semiring, ops)
        if counted is not None:
            return counted[0], (), counted[1]
    spec = KernelSpec(groups, order, variables, semiring, aggregate, ops)
    if index_dir is None:
        index = index_on_driver(spark, uses, spec, gathered)
    else:
        from faq.joins.executor_index import index_on_executors

        index = index_on_executors(uses, spec, index_dir, scope)
    value_type = {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType()}[semiring.value_type]
    out = tuple(index.names[: index.keys])
    schema = StructType(
        [StructField(v, LongType()) for v in out] + [StructField(n, value_type) for n in index.names[index.keys:]]
    )
    if index.seeds == 0 or index.rows == 0:
        df = empty_frame(spark, schema.names, schema)
    else:
        seeds = index.rows if index.seeds is None else index.seeds  # the rows bound the seeds
        tasks = max(1, min(seeds, default_parallelism(spark) * SEED_TASKS_PER_CORE,
                           -(-index.rows // ROWS_PER_PARTITION)))
        # One row per task, its number: the task deals itself its seeds (_dealt_seeds).
        df = spark.range(0, tasks, 1, tasks).mapInArrow(
            functools.partial(expand_partition, index=index.handle, seeds=index.seeds, tasks=tasks), schema
        )
    if index.aggregated:
        return df.select(*out, VALUE_COLUMN), out, index.note
    return with_product(df, out, index.gathered, semiring), out, index.note


def index_on_driver(spark: "SparkSession", uses: Sequence[Use], spec: KernelSpec,
                    gathered: Optional[list] = None) -> TaskIndex:
    """The index built on the driver from rows it collects or holds (``gathered``: :func:`_gathered` of each
    group's first use, when the caller has them), shipped as one file per machine."""
    if gathered is None:
        gathered = [_gathered(uses[g[0]], spec.semiring) for g in spec.groups]
    collected = [columns for columns, _ in gathered]
    index_rows = sum(len(keys[0]) for keys, _ in collected)
    kernel, n_seeds, note = spec.build([u.attributes for u in uses], collected)
    shipped = None
    if n_seeds:
        from faq.joins.mapped import ship

        # One file per machine, mapped by every worker (faq.joins.mapped): not one copy per worker
        # as a broadcast variable would be; the same on classic Spark and on Spark Connect.
        shipped = ship(spark, for_tasks(kernel))
    shipped_as = f"{format_bytes(shipped.nbytes)} file, mapped once per machine" if shipped else (
        "no seeds: nothing shipped")
    held = sum(from_driver for _, from_driver in gathered)
    source = "" if not held else "; rows held on the driver, not collected" if held == len(gathered) else (
        f"; {held} of {len(gathered)} relations held on the driver")
    note = f"broadcast index of {index_rows} rows ({shipped_as}{source})" + (f"; {note}" if note else "")
    return TaskIndex(shipped, n_seeds, index_rows, kernel.names, len(kernel.outputs), [i for i, _ in kernel.values],
                     kernel.ops is not None, note)


def oriented_in_tasks(spark: "SparkSession", uses: Sequence[Use], groups: list[list[int]], gathered: list,
                      semiring: Semiring, ops: NumpyForm) -> Optional[tuple["DataFrame", str]]:
    """A triangle bag over one relation counted in the tasks: (one partial count a task, what it did), or None
    where the oriented count declines (:func:`faq.joins.oriented_triangle.oriented_rows`).

    The driver orients the relation's pairs by degree once (``gathered``: the rows it collected or holds,
    which the generic index is built from where this declines) and ships the oriented rows as one file per
    machine (:mod:`faq.joins.mapped`); each task makes the transpose for its own share of middle nodes where it
    runs (:func:`oriented_partition`: shipped, it would triple the file each executor fetches -- 12 bytes a pair
    against 4 -- and cost the driver its build).  Each of one task per core counts the triangles whose middle
    node is its share of the nodes -- the driver's own kernel, where the generic
    index would have the tasks extend wedges through the unoriented middle variable (R-MAT 20: 3-4x the work).
    """
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    from faq.joins.mapped import ship
    from faq.joins.oriented_triangle import oriented_rows
    from faq.joins.table import Table
    from faq.spark import default_parallelism

    value_type = {"bigint": LongType(), "double": DoubleType()}.get(semiring.value_type)
    if len(uses) != 3 or len(groups) != 1 or not all(use.valued for use in uses) or value_type is None:
        return None
    (keys, values), held = gathered[0]
    tables = []
    for use in uses:  # one group: every use reads the same columns in the same order
        column_of = dict(zip(use.attributes, keys))
        tables.append(Table(use.frame.variables, {v: column_of[v] for v in use.frame.variables}, values))
    rows, why = oriented_rows(tables, threads=default_parallelism(spark))
    if rows is None:
        log.info("oriented count in tasks declined: %s", why)
        return None
    tasks = max(1, min(default_parallelism(spark) * SEED_TASKS_PER_CORE, len(rows.indptr) - 1))
    shipped = ship(spark, rows)
    schema = StructType([StructField(VALUE_COLUMN, value_type)])
    df = spark.range(0, tasks, 1, tasks).mapInArrow(
        functools.partial(oriented_partition, index=shipped, tasks=tasks, double=semiring.value_type == "double"),
        schema)
    source = "; rows held on the driver, not collected" if held else ""
    # Worded as the generic index's note ("broadcast index of ...; ⊕ of ... inside tasks onto ()"), then the kernel.
    return df, (f"broadcast index of {rows.pairs} pairs oriented by degree ({format_bytes(shipped.nbytes)} file, "
                f"mapped once per machine{source}); ⊕ of {ops.name.split('/')[-1]} inside tasks onto (); one "
                f"relation's triangles counted by middle node in {tasks} task(s), each transposing its share "
                "(compiled)")


def oriented_partition(batches: Iterator[Any], index: Any, tasks: int, double: bool = False) -> Iterator[Any]:
    """mapInArrow body: task numbers in; each task's count of the triangles whose middle node is its share out
    (as a double for a semiring of doubles summing ones).  A task makes the transpose of the shipped rows for its
    own middle nodes only: the tasks' shares add up to one transpose, made where it is read."""
    import pyarrow as pa

    from faq.joins.oriented_triangle import OrientedIndex, count_part, lower_neighbours

    rows = index.value
    for batch in batches:
        for task in batch.column(0).to_numpy():
            share = OrientedIndex.of(rows, lower_neighbours(rows, 1, int(task), tasks))
            total = count_part(share, int(task), tasks)
            value = pa.array([float(total)] if double else [total], type=pa.float64() if double else pa.int64())
            yield pa.record_batch([value], names=[VALUE_COLUMN])


def _collect(df: "DataFrame", arity: int, valued: bool, semiring: Semiring) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """The rows of a normalised relation as numpy columns.

    This collects the relation to the driver: it *is* the index to be
    broadcast (the plan bounded its size), nothing else is collected.
    """
    from faq.relation import sql_name

    if valued:  # SQL text: one call into Spark
        value = sql_name(VALUE_COLUMN)
        keys = [sql_name(f"__k{i}") for i in range(arity)]
        df = df.selectExpr(*keys, f"CAST({value} AS {semiring.value_type}) AS {value}")
    table = df.toArrow()
    keys = [table.column(i).to_numpy().astype(np.int64, copy=False) for i in range(arity)]
    values = table.column(arity).to_numpy() if valued else None
    return keys, values


def _gathered(use: Use, semiring: Semiring) -> tuple[tuple[list[np.ndarray], Optional[np.ndarray]], bool]:
    """(the use's key columns in attribute order and values, whether the driver held them).

    Rows the driver already holds (:attr:`Frame.held`: an edge list
    read and cleaned there) are taken as they are; others are collected.
    """
    copy = use.frame.held
    if copy is None:
        return _collect(normalised(use), len(use.attributes), use.valued, semiring), False
    keys = [np.asarray(copy[a], dtype=np.int64) for a in use.attributes]
    dtype = NUMPY_DTYPES[semiring.value_type]
    values = np.asarray(copy[VALUE_COLUMN], dtype=dtype) if use.valued else None
    return (keys, values), True


def expand_partition(batches: Iterator[Any], index: Any, seeds: Optional[int], tasks: int) -> Iterator[Any]:
    """mapInArrow body: task numbers in; full bindings, or partial aggregates (``kernel.ops``), of the
    seeds dealt to those tasks out (``seeds`` None: the kernel's own count)."""
    kernel = index.value
    yield from run_kernel(_dealt_seeds(batches, seed_count(kernel) if seeds is None else seeds, tasks), kernel)


def _dealt_seeds(batches: Iterator[Any], seeds: int, tasks: int) -> Iterator[Any]:
    """Arrow batches of the seed ids dealt to the task numbers in ``batches``: task ``p`` of ``tasks``
    gets ``p, p + tasks, p + 2 * tasks, ...`` below ``seeds``, :data:`~faq.joins.kernel.BATCH_ROWS` at a time.

    >>> import pyarrow as pa
    >>> numbers = [pa.record_batch([pa.array([1])], names=["id"])]
    >>> [b.column(0).to_pylist() for b in _dealt_seeds(iter(numbers), seeds=10, tasks=4)]
    [[1, 5, 9]]
    """
    import pyarrow as pa

    for batch in batches:
        for task in batch.column(0).to_numpy():
            ids = np.arange(task, seeds, tasks, dtype=np.int64)
            for low in range(0, len(ids), BATCH_ROWS):
                yield pa.record_batch([pa.array(ids[low:low + BATCH_ROWS])], names=["id"])
