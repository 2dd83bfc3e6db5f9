"""The physical half of a plan: how each bag is joined, where its index lives, what runs in tasks.

The planner (:mod:`faq.insideout.planner`) calls :func:`choose_strategy` for
every step, so a :class:`~faq.insideout.planner.Plan` holds every decision
the executor will carry out: nothing is decided again at run time, and
``explain`` prints exactly what will run.  Pure Python: the facts come in as
values (factor sizes and key types from the caller, the session's kind and
parallelism as an :class:`Environment`), so plans can be made, printed and
tested without Spark.

A bag joined by the generic (worst-case optimal) join runs one of three
strategies:

``broadcast``
    each relation becomes a CSR trie built on the driver, written to one
    file that every executor machine receives once and its Python workers
    memory-map (:mod:`faq.joins.mapped`; classic Spark and Spark Connect
    alike); tasks extend seeds in numpy or the compiled loop.  An index
    larger than the driver's budget (:attr:`Environment.driver_index_memory`)
    is built on the executors instead, from Parquet inputs Spark writes
    where they can read them (:func:`index_builder`,
    :mod:`faq.joins.executor_index`).  Needs integer
    keys; chosen automatically when the estimated index fits the memory an
    executor's index may use, :attr:`Environment.index_memory`.  No row
    limit: the index's bytes against the executor's memory decide, at the
    bytes per row of the kernel the tasks run
    (:func:`faq.joins.task_aggregation.task_aggregation`:
    :data:`BYTES_PER_INDEX_ROW` for the numpy kernel and its hash tables,
    :data:`~faq.hypergraph.shares.COMPILED_BYTES_PER_INDEX_ROW` for the compiled loop).
``partitioned``
    HyperCube / Shares (:mod:`faq.joins.partitioned`): the bag's variables
    hashed onto a grid of cells, each cell joining its share of the rows
    with the broadcast strategy's kernel.  Chosen for integer keys when the
    broadcast index does not fit; the grid is the one of fewest cells (at
    least the parallelism) whose estimated per-cell index fits
    :attr:`Environment.index_memory` (:func:`faq.hypergraph.shares.grid_for`).
``shuffle``
    DataFrame joins, attribute at a time (count / propose / validate as
    joins); any key type, any size.  Its intermediate tables are bounded by
    running the seeds (the first attribute's values) in batches, hashed
    apart, each batch materialised (and ⊕-aggregated when the step
    aggregates) before the next: :func:`shuffle_batches` sizes them from the
    estimated largest table against the index memory of every task.

Uses of one factor in the same column order share one index
(:func:`shared_indexes`), and a broadcast join that is ⊕-aggregated right
after it multiplies and ⊕-combines inside its tasks when numpy computes the
semirings exactly (:func:`faq.joins.task_aggregation.task_aggregation`).

Every step, whatever its strategy, also has a placement, and an in-process
step its kernel: :mod:`faq.insideout.placement`.

Examples
--------
>>> env = Environment(parallelism=2)
>>> choose_strategy("generic", index_rows=3000, integral=True, environment=env).name
'broadcast'
>>> s = choose_strategy("generic", index_rows=3e7, integral=True, environment=env)
>>> s.name, s.reason
('partitioned', 'index of 3e+07 rows (~1.79 GiB) exceeds the index memory 256 MiB')
>>> choose_strategy("generic", index_rows=3e7, integral=False, environment=env).name
'shuffle'
>>> choose_strategy("generic_broadcast", index_rows=10, integral=False, environment=env).reason
'forced broadcast needs integer keys: shuffle instead'

By bytes: an index of 5,000 rows (~312 KiB) against 64 KiB an executor's index may use.

>>> small = Environment(parallelism=2, index_memory=64 * 1024)
>>> triangle = [(("a", "b"), 5000), (("a", "c"), 5000), (("b", "c"), 5000)]
>>> s = choose_strategy("generic", 5000, True, small, uses=triangle)
>>> s.name, s.reason
('partitioned', 'index of 5e+03 rows (~312 KiB) exceeds the index memory 64 KiB')
>>> s.describe()
'strategy partitioned (index of 5e+03 rows (~312 KiB) exceeds the index memory 64 KiB); grid a=4 × b=4 × c=4 (64 cells), est. 938 rows / 58.6 KiB per task'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from faq.hypergraph.shares import BYTES_PER_INDEX_ROW, Grid, format_bytes, grid_for
from faq.relation import fetch_rows  # what a fetch budget holds (the Relation's own rule)
from faq.settings import (  # the defaults of a plan's Environment (faq.settings reads the settings)
    DEFAULT_FETCH_MEMORY,
    DEFAULT_INDEX_MEMORY,
    DEFAULT_LOCAL_MEMORY,
    DEFAULT_LOCAL_ROWS,
    INDEX_DIR_CONF,
)

# Requested bag-join methods: the planner's "auto" picks binary joins for acyclic bags and
# "generic" for cyclic ones; "generic_shuffle" / "generic_broadcast" / "generic_partitioned"
# force a strategy.
JOIN_METHODS = ("binary", "generic", "generic_shuffle", "generic_broadcast", "generic_partitioned")
# What a step runs.
STRATEGIES = ("binary", "broadcast", "shuffle", "partitioned")

#: Bytes a row of an in-process step's tables takes at most: keys and value as numpy columns, and
#: pandas' merge and group-by working copies beside them.
LOCAL_BYTES_PER_ROW = 64


@dataclass(frozen=True)
class Environment:
    """Where a plan will run, as far as its physical choices depend on it.

    Attributes
    ----------
    connect : bool
        A Spark Connect session.
    parallelism : int
        Tasks that keep every core busy.
    index_memory : int
        Bytes one index may use on an executor (:data:`~faq.settings.INDEX_MEMORY_CONF`,
        else from the machine's memory where the executors run on this
        machine, :data:`~faq.settings.INDEX_MEMORY_FRACTION` of the executor's memory on
        a cluster; see :func:`faq.settings.index_memory`).  An automatic
        broadcast needs its estimated index within it; a partitioned join's
        grid is sized so that a cell's index fits it.
    driver_index_memory : int
        Bytes the driver may give to building one broadcast index
        (:data:`~faq.settings.DRIVER_INDEX_MEMORY_CONF`, else the driver's local memory,
        :func:`faq.settings.driver_index_memory`).  A broadcast index above it is built on
        the executors, where ``index_dir`` allows.
    index_dir : str or None
        A directory the executors can read, where Spark writes the inputs of
        an index built on the executors (:data:`~faq.settings.INDEX_DIR_CONF`; by default
        the driver's scratch directory on a ``local`` or ``local-cluster``
        master, whose executors share the driver's file system; None
        elsewhere: every index is built on the driver).
    index_build : {"auto", "driver", "executors"}
        :data:`~faq.settings.INDEX_BUILD_CONF`: where broadcast indexes are built ("auto":
        by ``driver_index_memory``).
    placement : {"", "auto", "driver", "executors"}
        :data:`~faq.settings.PLACEMENT_CONF`: where steps run ("auto": by size,
        :func:`faq.placement_policy.choose`).  A plan made without a session's facts
        (``""``) runs on the executors and says nothing of it; a session's
        default is "auto".
    local_memory : int
        Bytes an in-process step may use on the driver
        (:data:`~faq.settings.LOCAL_MEMORY_CONF`).
    fetch_memory : int
        Most bytes of an input the driver fetches (one Arrow collect) to run
        steps in-process (:data:`~faq.settings.FETCH_MEMORY_CONF`, default
        :data:`~faq.settings.FETCH_MEMORY_FRACTION` of ``local_memory``); an input is
        estimated at 8 bytes a column a row.  Inputs it holds already have no
        limit but ``local_memory``.
    local_rows : int
        When set (:data:`~faq.settings.LOCAL_ROWS_CONF`), also the most rows of an input the
        driver fetches; 0: the byte budget alone decides.
    compiled_loaded : bool
        The compiled loop is loaded in this process already (numba imported,
        its kernels read from the cache), or a kernel run in its place has
        already cost as much as loading it: a new process pays
        :data:`COMPILED_LOAD_SECONDS` to load it (:func:`in_process_kernel`,
        :func:`~faq.insideout.placement.stand_in_ran`).
    check_workers : bool
        Probe the workers' Python before the first job that runs faq's tasks
        there (``spark.faq.checkWorkers``: :data:`~faq.settings.CHECK_CONF`, default true;
        :func:`faq.workers.ensure_workers`).
    in_tasks : {"auto", "always", "never"}
        :data:`~faq.settings.IN_TASKS_CONF`: when a plan may run in the tasks of its one
        factor left in Spark (:func:`faq.insideout.in_tasks.task_atom`).
    """

    connect: bool = False
    parallelism: int = 2
    index_memory: int = DEFAULT_INDEX_MEMORY
    driver_index_memory: int = DEFAULT_INDEX_MEMORY
    index_dir: Optional[str] = None
    index_build: str = "auto"
    placement: str = ""
    local_memory: int = DEFAULT_LOCAL_MEMORY
    fetch_memory: int = DEFAULT_FETCH_MEMORY
    local_rows: int = DEFAULT_LOCAL_ROWS
    compiled_loaded: bool = False
    check_workers: bool = True
    in_tasks: str = "auto"

    def fetch_rows(self, columns: int) -> int:
        """Most rows of a ``columns``-column input the driver fetches (:attr:`fetch_memory`, :attr:`local_rows`).

        >>> Environment(fetch_memory=1600).fetch_rows(2), Environment(fetch_memory=1600, local_rows=50).fetch_rows(2)
        (100, 50)
        """
        rows = fetch_rows(self.fetch_memory, columns)
        return min(rows, self.local_rows) if self.local_rows else rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "connect": self.connect,
            "parallelism": self.parallelism,
            "index_memory": self.index_memory,
            "driver_index_memory": self.driver_index_memory,
            "index_dir": self.index_dir,
            "index_build": self.index_build,
            "placement": self.placement,
            "local_memory": self.local_memory,
            "fetch_memory": self.fetch_memory,
            "local_rows": self.local_rows,
            "compiled_loaded": self.compiled_loaded,
            "check_workers": self.check_workers,
            "in_tasks": self.in_tasks,
        }


@dataclass(frozen=True)
class Strategy:
    """How one step's bag is joined (a field of :class:`~faq.insideout.planner.Step`).

    Attributes
    ----------
    name : {"binary", "broadcast", "shuffle", "partitioned"}
    reason : str
        Why, in words (shown by ``explain``).
    index_rows : float or None
        Rows of all relations of the bag, the broadcast index's size
        (estimated for intermediate relations; None when sizes are unknown).
    index_bytes : float or None
        The broadcast index's estimated bytes (the kernel's bytes per row:
        :attr:`faq.joins.task_aggregation.TaskAggregation.bytes_per_row`).
    shares : tuple of (str, int)
        Partitioned joins: the grid, share per variable (1: not split).
    cells : int
        Partitioned joins: the grid's cells (``Π shares``).
    task_rows, task_bytes : float or None
        Partitioned joins: estimated input rows and index bytes per cell.
        Shuffle joins in batches: the estimated rows and bytes of a batch's
        largest intermediate table.
    batches : int
        Shuffle joins: the seeds run in this many batches (1: all at once).
    index_dir : str or None
        Broadcast joins: the index is built on the executors, from inputs
        Spark writes under this directory (:mod:`faq.joins.executor_index`);
        None: on the driver.
    shared : tuple of tuple of int
        Generic joins: groups of uses (relations, then indicators, in the
        step's order) that read one index.
    aggregate_in_tasks : bool
        Broadcast joins: multiply and ⊕-combine inside the tasks, returning
        partial aggregates (the executor's group-by combines them).
    aggregation : str
        What the tasks do with the product, or why they list every binding.
    numpy_kernel : bool
        The plan chose the numpy kernel over the compiled loop
        (:func:`in_process_kernel`; the reason is in ``aggregation``).
    sparse_kernel : bool
        The plan chose masked sparse products (:mod:`faq.joins.sparse_triangle`)
        over the compiled loop for a triangle-shaped bag
        (:func:`in_process_triangle_kernel`; the reason is in ``aggregation``).
    dense_rows : bool
        The plan chose dense-row sums (:mod:`faq.joins.dense_rows`) over the
        compiled loop for a triangle-shaped bag with large inputs, where their
        wedges are few for the inputs' rows (:func:`in_process_dense_rows`;
        the rule and the fallback are in ``aggregation``).
    oriented_count : bool
        The plan chose, for a triangle-shaped bag the compiled loop or dense-row
        sums would run, one relation's triangles counted by degree orientation
        first (:mod:`faq.joins.oriented_triangle`), where the step finds its
        three atoms read one set of pairs without loops -- in-process, or, for
        a broadcast step on the executors, in the tasks from one oriented index
        the driver ships (:func:`faq.joins.broadcast.oriented_in_tasks`).
    binary_kernel : str or None
        A step run in-process by merges (a binary step, or a generic one whose
        keys are not integers): the kernel the plan chose,
        ``"sparse-product"``, ``"sort-merge"`` or ``"pandas-merge"``
        (:func:`faq.joins.merges.binary_kernel`,
        :func:`~faq.insideout.placement.merge_kernel`); None: none chosen
        (a step on the executors, or the generic join's kernel).
    binary_reason : str
        Why the plan chose ``binary_kernel``, in words.
    """

    name: str
    reason: str
    index_rows: Optional[float] = None
    shared: tuple[tuple[int, ...], ...] = ()
    aggregate_in_tasks: bool = False
    aggregation: str = ""
    index_bytes: Optional[float] = None
    shares: tuple[tuple[str, int], ...] = ()
    cells: int = 0
    task_rows: Optional[float] = None
    task_bytes: Optional[float] = None
    batches: int = 1
    index_dir: Optional[str] = None
    numpy_kernel: bool = False
    sparse_kernel: bool = False
    dense_rows: bool = False
    oriented_count: bool = False
    binary_kernel: Optional[str] = None
    binary_reason: str = ""

    @property
    def grid(self) -> Optional[Grid]:
        """The partitioned join's grid (None for the other strategies)."""
        if self.name != "partitioned" or not self.shares:
            return None
        return Grid(self.shares, self.cells, self.task_rows or 0.0, self.task_bytes or 0.0)

    def describe(self, in_process: bool = False) -> str:
        """One line for ``explain`` (``in_process``: the step runs on the driver, its index read there).

        A binary step run in-process is its merges (:meth:`merges`).
        """
        if self.name == "binary" and self.binary_kernel is not None:
            return self.merges()
        parts = [f"strategy {self.name} ({self.reason})"]
        if in_process and self.index_bytes is not None:
            parts.append(f"index est. {format_bytes(self.index_bytes)} built and read in-process")
        elif self.name == "broadcast":
            size = f"est. {format_bytes(self.index_bytes)} " if self.index_bytes is not None else ""
            built = "built on the driver" if self.index_dir is None else (
                f"built on the executors from Parquet under {self.index_dir}")
            parts.append(f"index {size}{built}, in one file per machine, mapped by its workers")
        if self.grid is not None and not in_process:
            parts.append(self.grid.describe())
        if self.name == "shuffle" and self.batches > 1:
            size = "" if self.task_rows is None else (
                f", est. {self.task_rows:.3g} rows / {format_bytes(self.task_bytes)} largest table per batch")
            parts.append(f"seeds in {self.batches} batches{size}")
        if self.shared and any(len(g) > 1 for g in self.shared) and self.name != "partitioned":
            parts.append(f"{sum(map(len, self.shared))} uses read {len(self.shared)} index(es)")
        if self.aggregation:
            parts.append(self.aggregation)
        if self.binary_kernel is not None:
            parts.append(self.merges())
        return "; ".join(parts)

    def merges(self) -> str:
        """The in-process merges the plan chose, as the step's note will name them, and why ("": none).

        >>> Strategy("binary", "", binary_kernel="sort-merge", binary_reason="integer keys").merges()
        'in-process binary join (sort-merge): integer keys'
        """
        if self.binary_kernel is None:
            return ""
        from faq.joins.merges import binary_note

        why = f": {self.binary_reason}" if self.binary_reason else ""
        return f"{binary_note(self.binary_kernel)}{why}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reason": self.reason,
            "index_rows": _finite(self.index_rows),
            "shared_indexes": [list(g) for g in self.shared],
            "aggregate_in_tasks": self.aggregate_in_tasks,
            "aggregation": self.aggregation,
            "index_bytes": _finite(self.index_bytes),
            "grid": {v: s for v, s in self.shares},
            "cells": self.cells,
            "task_rows": _finite(self.task_rows),
            "task_bytes": _finite(self.task_bytes),
            "batches": self.batches,
            "index_dir": self.index_dir,
        }


def choose_strategy(
    method: str,
    index_rows: Optional[float],
    integral: Optional[bool],
    environment: Environment,
    uses: Sequence[tuple[Sequence[str], float]] = (),
    bytes_per_row: float = BYTES_PER_INDEX_ROW,
) -> Strategy:
    """The strategy of a bag joined with ``method`` (a :data:`JOIN_METHODS` name).

    Parameters
    ----------
    method : str
        ``"binary"``, ``"generic"`` (broadcast when the index fits, else
        partitioned for integer keys, else shuffle), or one of
        ``"generic_broadcast"``, ``"generic_shuffle"`` and
        ``"generic_partitioned"`` (forced; a forced broadcast or partitioned
        join still falls back to shuffle where it cannot run, and says so).
    index_rows : float or None
        Rows of the bag's relations (None: unknown, taken to fit).
    integral : bool or None
        Every key of the bag is an integer (None: unknown, taken to be).
    environment : Environment
    uses : sequence of (variables, rows)
        Each relation and indicator of the bag with its (estimated) rows:
        the partitioned join's grid is sized from them (rows unknown: taken
        as equal).
    bytes_per_row : float
        The index's bytes per row in the kernel the tasks will run
        (:data:`BYTES_PER_INDEX_ROW` for the numpy kernel and its hash
        tables, :data:`COMPILED_BYTES_PER_INDEX_ROW` for the compiled loop;
        :func:`~faq.joins.task_aggregation.task_aggregation` says which).
    """
    if method == "binary":
        return Strategy("binary", "")
    if method == "generic_shuffle":
        return Strategy("shuffle", "forced")
    index_bytes = None if index_rows is None else index_rows * bytes_per_row
    if method == "generic_partitioned":
        if integral is False:
            return Strategy("shuffle", "forced partitioned needs integer keys: shuffle instead", index_rows)
        return partitioned_strategy("forced", index_rows, index_bytes, environment, uses, bytes_per_row)
    forced = method == "generic_broadcast"
    refusal = _broadcast_refusal(index_rows, integral, environment, forced, bytes_per_row)
    if refusal:
        if forced:
            return Strategy("shuffle", f"forced broadcast {refusal}: shuffle instead", index_rows, index_bytes=index_bytes)
        if integral is not False:
            return partitioned_strategy(refusal, index_rows, index_bytes, environment, uses, bytes_per_row)
        return Strategy("shuffle", refusal, index_rows, index_bytes=index_bytes)
    size = "sizes unknown" if index_rows is None else f"index of {index_rows:.3g} rows"
    index_dir, where = index_builder(index_bytes, environment)
    reason = ("forced, " + size if forced else size) + (f"; {where}" if where else "")
    return Strategy("broadcast", reason, index_rows, index_bytes=index_bytes, index_dir=index_dir)


def index_builder(index_bytes: Optional[float], environment: Environment) -> tuple[Optional[str], str]:
    """Where a broadcast index is built: (the executors' input directory, or None for the driver; why).

    On the executors when the session says so (:data:`~faq.settings.INDEX_BUILD_CONF`), or
    when the estimated index exceeds the driver's budget; only where the
    executors can read a directory the driver names (``index_dir``).

    >>> index_builder(1e9, Environment(driver_index_memory=1 << 20, index_dir="/shared"))
    ('/shared', 'built on the executors: ~954 MiB exceeds the driver index memory 1 MiB')
    >>> index_builder(1e9, Environment(driver_index_memory=1 << 20))
    (None, 'built on the driver: ~954 MiB exceeds the driver index memory 1 MiB, but no directory the executors can read is known (set spark.faq.indexDir)')
    >>> index_builder(1e3, Environment(index_dir="/shared"))
    (None, '')
    """
    env = environment
    if env.index_build == "driver":
        return None, "built on the driver: spark.faq.indexBuild=driver"
    if env.index_build == "executors":
        why = "spark.faq.indexBuild=executors"
    elif index_bytes is not None and index_bytes > env.driver_index_memory:
        why = f"~{format_bytes(index_bytes)} exceeds the driver index memory {format_bytes(env.driver_index_memory)}"
    else:
        return None, ""
    if env.index_dir is None:
        return None, f"built on the driver: {why}, but no directory the executors can read is known (set {INDEX_DIR_CONF})"
    return env.index_dir, f"built on the executors: {why}"


#: Bytes of a row of the shuffle strategy's intermediate tables (keys, value, Spark's row overhead).
SHUFFLE_BYTES_PER_ROW = BYTES_PER_INDEX_ROW
#: Most batches a shuffle join's seeds are split into (each batch is a full pass of Spark jobs).
MAX_SHUFFLE_BATCHES = 64


def shuffle_batches(largest_rows: Optional[float], environment: Environment) -> Strategy:
    """A shuffle strategy whose seeds run in batches, so that a batch's largest table fits the tasks' memory.

    The budget is :attr:`Environment.index_memory` for each of the
    ``parallelism`` tasks; ``largest_rows`` (the most proposals any
    attribute makes, from the plan's work estimate, else the bag's size
    estimate; None: unknown) at :data:`SHUFFLE_BYTES_PER_ROW` a row is split
    evenly, in at most :data:`MAX_SHUFFLE_BATCHES` batches.

    >>> env = Environment(parallelism=2, index_memory=1 << 20)
    >>> s = shuffle_batches(1e5, env)
    >>> s.batches, s.describe()
    (4, 'strategy shuffle (); seeds in 4 batches, est. 2.5e+04 rows / 1.53 MiB largest table per batch')
    >>> shuffle_batches(1e3, env).batches, shuffle_batches(None, env).batches
    (1, 1)
    """
    if largest_rows is None or not math.isfinite(largest_rows) or largest_rows <= 0:
        return Strategy("shuffle", "")
    budget = environment.index_memory * max(1, environment.parallelism)
    batches = min(MAX_SHUFFLE_BATCHES, max(1, math.ceil(largest_rows * SHUFFLE_BYTES_PER_ROW / budget)))
    if batches == 1:
        return Strategy("shuffle", "")
    rows = largest_rows / batches
    return Strategy("shuffle", "", task_rows=rows, task_bytes=rows * SHUFFLE_BYTES_PER_ROW, batches=batches)


def partitioned_strategy(
    reason: str,
    index_rows: Optional[float],
    index_bytes: Optional[float],
    env: Environment,
    uses: Sequence[tuple[Sequence[str], float]],
    bytes_per_row: float,
) -> Strategy:
    """A partitioned strategy whose grid's cell index fits ``env.index_memory`` (as far as it can)."""
    relation_variables = [tuple(vs) for vs, _ in uses if vs]
    rows = [r for vs, r in uses if vs]
    if not relation_variables:
        return Strategy("partitioned", reason, index_rows, index_bytes=index_bytes)
    if any(r is None or not math.isfinite(r) for r in rows):
        rows = [1.0] * len(rows)  # sizes unknown: relations taken as equal, the grid of `parallelism` cells
        budget = math.inf
    else:
        budget = env.index_memory
    variables = list(dict.fromkeys(v for vs in relation_variables for v in vs))
    grid = grid_for(variables, relation_variables, rows, budget, env.parallelism, bytes_per_row=bytes_per_row)
    if budget is math.inf:
        task_rows = task_bytes = None
    else:
        task_rows, task_bytes = grid.rows_per_task, grid.bytes_per_task
        if task_bytes > budget:
            reason += f"; even {grid.cells} cells exceed the index memory {format_bytes(budget)}"
    return Strategy("partitioned", reason, index_rows, index_bytes=index_bytes, shares=grid.shares,
                    cells=grid.cells, task_rows=task_rows, task_bytes=task_bytes)


def _broadcast_refusal(
    rows: Optional[float], integral: Optional[bool], env: Environment, forced: bool, bytes_per_row: float
) -> Optional[str]:
    """Why the broadcast strategy cannot (or, unforced, should not) run; None if it can."""
    if integral is False:
        return "needs integer keys" if forced else "keys are not all integers"
    if rows is None:
        return None
    if not forced and rows * bytes_per_row > env.index_memory:
        return (f"index of {rows:.3g} rows (~{format_bytes(rows * bytes_per_row)}) exceeds the index memory "
                f"{format_bytes(env.index_memory)}")
    return None


def shared_indexes(keys: Sequence[Optional[Any]]) -> tuple[tuple[int, ...], ...]:
    """Group uses whose data and column order are the same (equal, non-None ``keys``).

    Examples
    --------
    >>> shared_indexes([("edge", (0, 1)), ("edge", (0, 1)), ("edge", (1, 0)), None])
    ((0, 1), (2,), (3,))
    """
    groups: dict[Any, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(("use", i) if key is None else key, []).append(i)
    return tuple(tuple(g) for g in sorted(groups.values()))


def _finite(value: Optional[float]) -> Optional[float]:
    return value if value is None or math.isfinite(value) else None


def integral_bag(variables: Sequence[str], types: Mapping[str, str]) -> Optional[bool]:
    """True when every variable's type is an integer type, None when a type is unknown.

    >>> integral_bag(["a", "b"], {"a": "bigint", "b": "int"}), integral_bag(["a"], {"a": "string"})
    (True, False)
    """
    if any(v not in types for v in variables):
        return None
    return all(types[v] in INTEGRAL_TYPES for v in variables)


# Spark SQL type names of integer key columns (the broadcast index encodes them as int64).
INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
