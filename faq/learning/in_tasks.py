"""A learning aggregate whose largest table stays in Spark: lifted and joined inside that table's own tasks.

When a regression's (or covariance's) tables are Spark DataFrames and one of
them is too large to fetch to the driver -- or the placement is
``"executors"`` -- that table is neither lifted into the ring by Spark nor
shuffled.  The other tables are fetched and lifted on the driver, shipped
once to every machine as one memory-mapped file
(:func:`faq.joins.mapped.ship`), and each task of the large table
(``mapInArrow`` over its partitions, as Spark read them) lifts its rows in
numpy (:func:`faq.learning.features.row_values`) and runs the *whole*
in-process plan over them and the shipped tables
(:func:`faq.insideout.in_process.run_in_process`: the kernels a step on the
driver runs), in chunks of at most :data:`CHUNK_ROWS` rows.  Each task
returns one partial aggregate -- a row of the ring's width -- and the
driver ⊕-combines them.

Why it is exact: the large table is used by one atom, so every row of the
join holds exactly one of its rows, and ⊗ distributes over ⊕: the
aggregate over the join is the ⊕, over any split of the large table's rows,
of the aggregates over the join of each part with the other tables.  (A
table used by two atoms, or mixed aggregates, would not split so: those
queries take the steps on the executors instead.)

Why it is fast: Spark building an array of ``w`` doubles per row, grouping
and shuffling those arrays cost more than the join (1M TPC-H-shaped rows,
cofactor of width 21: 1.7 s to lift in Spark against 0.5 s to scan the raw
columns, ``bench.bench_learning_executors``); here Spark only scans the raw
key and feature columns, and the rows never leave the task that read them.

The choice (:func:`choose`) and what runs (:class:`TaskJoin`, printed by the
model's ``explain``) are made before any task runs.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from faq.events import Progress

if TYPE_CHECKING:
    from faq.insideout.planner import Plan
    from faq.joins.table import Table
    from faq.learning.features import Feature
    from faq.semirings.structured import ArraySemiring

__all__ = ["CHUNK_ROWS", "TaskJoin", "choose", "aggregate_in_tasks", "lift_and_join", "star_in_tasks",
           "star_chunks"]

#: Rows a task lifts and joins at once: a task's partition is taken in chunks of about this many rows,
#: each chunk's partial aggregate ⊕-combined into the task's (memory per task bounded by the chunk).
CHUNK_ROWS = 1 << 20


@dataclass(frozen=True)
class TaskJoin:
    """How a learning aggregate runs inside the tasks of its largest table.

    Attributes
    ----------
    table : str
        The table that stays in Spark (its atom is :attr:`atom`).
    atom : str
        Its atom, e.g. ``lineitem(orderkey, partkey, suppkey)``.
    shipped : tuple of (str, int)
        The other atoms, lifted on the driver, and their keys after ⊕-combining.
    shipped_bytes : int
        Bytes of those tables as shipped to every machine.
    reason : str
        Why the table stays in Spark.

    >>> print(TaskJoin("l", "l(a, b)", (("p(b)", 10),), 960, "placement=executors").describe())
    l(a, b): stays in Spark (placement=executors): lifted and joined in its own tasks by the plan below, \
with p(b) (10 keys) shipped once per machine (960 B); one partial aggregate per task, ⊕-combined on the driver
    """

    table: str
    atom: str
    shipped: tuple[tuple[str, int], ...]
    shipped_bytes: int
    reason: str
    #: A foreign-key star (:mod:`faq.learning.star`): the rows looked up and summed flat in the tasks, the
    #: others shipped as rows (``shipped`` counts rows), nothing lifted into the ring.
    flat: bool = False
    #: How the flat star's tasks read the fact's rows (its files in shares, or as Spark gives them).
    read: str = ""

    def describe(self) -> str:
        from faq.hypergraph.shares import format_bytes

        unit = "rows" if self.flat else "keys"
        others = ", ".join(f"{atom} ({keys} {unit})" for atom, keys in self.shipped) or "nothing else"
        how = (f"looked up and summed flat in its own tasks ({self.read}; foreign-key star: one matrix product per "
               "chunk of rows)" if self.flat else "lifted and joined in its own tasks by the plan below")
        return (f"{self.atom}: stays in Spark ({self.reason}): {how}, with {others} shipped once per machine "
                f"({format_bytes(self.shipped_bytes)}); one partial aggregate per task, ⊕-combined on the driver")


def choose(parsed: Any, tables: Mapping[str, Any], columns: Mapping[str, Sequence[str]], spark: Any,
           placement: Optional[str], priced: Optional[tuple[str, str]] = None
           ) -> Optional[tuple[str, dict[str, Any], str]]:
    """The table that stays in Spark, ``tables`` with every other one fetched (pandas), and why; None when
    the aggregate should run as before (everything on the driver, or steps on the executors).

    After :func:`~faq.insideout.fetching.fetched_tables`, the tables still in Spark are those too large
    to fetch (or all of them with ``placement="executors"``).  One of them may stay: the largest (by
    the bytes of the files they read, else one counting job, when several are left), when it is used
    by one atom whose variables are distinct, and every other fits the memory one index may use on
    an executor (the shipped tables are such an index).  ``placement="driver"`` never splits, nor
    ``spark.faq.inTasks=never``.  ``priced`` -- (the table, why), from :mod:`faq.learning.costs` --
    names the table that stays, chosen by price before any table was fetched.
    """
    from faq.arrow_arrays import arrow_to_pandas
    from faq.insideout.binding import row_counts, session_environment
    from faq.settings import placement_setting
    from faq.insideout.fetching import FETCH_THREADS
    from faq.relation import collect_within, distributed
    from faq.relation import BYTES_PER_COLUMN

    in_spark = [n for n, t in tables.items() if n in columns and distributed(t)]
    if not in_spark:
        return None
    session = spark if spark is not None else tables[in_spark[0]].sparkSession
    chosen = placement or placement_setting(session)
    if chosen == "driver":
        return None
    environment = session_environment(session)
    if environment.in_tasks == "never":  # spark.faq.inTasks=never: the steps run as the placement says
        return None
    if priced is not None:
        big, reason = priced
    elif len(in_spark) == 1 and chosen != "executors":
        big, reason = in_spark[0], "too large to fetch to the driver"
    else:
        spark_tables = {n: tables[n] for n in in_spark}
        size = _file_bytes(spark_tables) or row_counts(spark_tables)
        big = max(in_spark, key=lambda n: (size[n], n))
        reason = "placement=executors" if chosen == "executors" else "the largest table, too large to fetch"
    atoms = [a for a in parsed.atoms if a.factor == big]
    if len(atoms) != 1 or len(set(atoms[0].variables)) != len(atoms[0].variables):
        return None

    def fetch(name: str) -> Any:
        wanted = list(dict.fromkeys(columns[name]))
        limit = environment.index_memory // max(1, len(wanted) * BYTES_PER_COLUMN)
        return collect_within(tables[name], wanted, limit)

    others = [n for n in in_spark if n != big]
    with ThreadPoolExecutor(max(1, min(FETCH_THREADS, len(others)))) as pool:  # side by side, as fetched_tables
        got = dict(zip(others, pool.map(fetch, others)))
    if any(table is None for table in got.values()):  # two large tables: the steps go to the executors instead
        return None
    return big, {**tables, **{n: arrow_to_pandas(table) for n, table in got.items()}}, reason


def _file_bytes(tables: Mapping[str, Any]) -> Optional[dict[str, int]]:
    """Bytes of the local files each Spark DataFrame reads (no job), to tell the largest; None when one
    reads no file, or one that is not local (then rows are counted)."""
    import os

    from faq.relation import local_files

    out = {}
    for name, df in tables.items():
        files = local_files(df)
        if files is None:
            return None
        try:
            out[name] = sum(os.path.getsize(path) for path in files)
        except OSError:
            return None
    return out


@dataclass(frozen=True)
class _TaskSpec:
    """What every task needs besides its rows (pickled into the function)."""

    ring: Any
    features: tuple[Any, ...]  # the large table's own features, read from columns __f0, __f1, ...
    variables: tuple[str, ...]  # its atom's variables, the key columns
    atom_id: str
    plan: Any
    shipped: Any  # MappedIndex of {atom id: Table}


def aggregate_in_tasks(parsed: Any, features: Sequence["Feature"], ring: "ArraySemiring", tables: Mapping[str, Any],
                       big: str, reason: str, spark: Any, progress: Progress = None
                       ) -> tuple[list[float], "Plan", tuple[str, ...]]:
    """The aggregate's value (a list of the ring's width), the plan every task runs, and the notes.

    ``tables`` hold every table but ``big`` on the driver (:func:`choose`).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DoubleType, StructField, StructType

    from faq.insideout.binding import held_atom
    from faq.insideout.in_process import StepEvent
    from faq.joins.mapped import ship
    from faq.learning.features import lifted_factors
    from faq.semirings.numpy_backend import numpy_ops

    k_big = next(k for k, a in enumerate(parsed.atoms) if a.factor == big)
    big_atom = parsed.atoms[k_big]
    flat = star_in_tasks(parsed, features, ring, tables, big, reason, progress)
    if flat is not None:
        return flat
    others = {n: t for n, t in tables.items() if n != big}
    # Lift the other tables on the driver (the large one is lifted in its tasks; here its columns are checked).
    query, factors, lifted = lifted_factors(parsed, features, ring, {**others, big: tables[big]}, spark,
                                            skip=(k_big,))
    shipped: dict[str, Table] = {}
    for k, atom in enumerate(query.atoms):
        if k != k_big:
            shipped[f"{atom.factor}#{k + 1}"] = held_atom(atom, factors[atom.factor], ring)
    plan = _task_plan(query, ring, {query.atoms[k].factor: shipped[f"{query.atoms[k].factor}#{k + 1}"].rows
                                    for k in range(len(query.atoms)) if k != k_big},
                      f"{query.atoms[k_big].factor}#{k_big + 1}", reason)
    handle = ship(tables[big].sparkSession, shipped)
    own = tuple(f for f in features if f.table == big)
    spec = _TaskSpec(ring, own, tuple(big_atom.variables), f"{query.atoms[k_big].factor}#{k_big + 1}", plan, handle)
    frame = tables[big]
    _check_integer_keys(frame, big_atom)
    kept = frame.select(*[F.col(v).cast("bigint").alias(v) for v in big_atom.variables],
                        *[F.col(f.column).cast("double").alias(f"__f{i}") for i, f in enumerate(own)])
    for name in kept.columns:  # a row with a null key or feature joins nothing and lifts nothing
        kept = kept.where(F.col(name).isNotNull())
    schema = StructType([StructField("value", ArrayType(DoubleType(), containsNull=False))])
    task = TaskJoin(big, str(big_atom), tuple((item.atom, item.keys) for k, item in enumerate(lifted) if k != k_big),
                    handle.nbytes, reason)
    description = f"lift and join {big_atom} in its tasks"
    if progress:
        progress(StepEvent("start", 1, 1, description))
    t0 = time.perf_counter()
    partials = [row[0] for row in kept.mapInArrow(_task_function(spec), schema).collect()]  # one row per task
    value = numpy_ops(ring, arrays=True).sum(np.asarray(partials, dtype=np.float64).reshape(-1, ring.width))
    if progress:
        progress(StepEvent("done", 1, 1, description, 1, time.perf_counter() - t0, task.describe()))
    notes = tuple(item.describe(ring.width) for k, item in enumerate(lifted) if k != k_big) + (task.describe(),)
    return value.tolist(), plan, notes


@dataclass(frozen=True)
class _StarSpec:
    """What every task of a flat star needs besides its rows (pickled into the function)."""

    ring: Any
    parsed: Any
    features: tuple[Any, ...]
    fact: str  # the table whose rows the tasks read
    rows: Mapping[str, int]  # per table, for the star's plan: the fact the largest
    shipped: Any  # MappedIndex of {table: {column: array}}


def star_in_tasks(parsed: Any, features: Sequence["Feature"], ring: "ArraySemiring", tables: Mapping[str, Any],
                  big: str, reason: str, progress: Progress = None
                  ) -> Optional[tuple[list[float], Any, tuple[str, ...]]]:
    """The aggregate of a foreign-key star whose fact table ``big`` stays in Spark, looked up and summed flat in
    its tasks (:mod:`faq.learning.star`'s plan on each chunk of rows, the other tables shipped as rows once per
    machine); None when the join is not such a star, or the others' keys do not allow it (a key held twice, a
    key not an integer): then the ring's plan runs in the tasks.

    The driver's own flat plan, run where the rows are: each task returns ``(n, Σx, Σxxᵀ)`` of its rows, packed
    as the ring's value, and the driver adds them (the ring's ⊕).  Exact as the ring's split is: every joined
    row holds exactly one fact row.
    """
    import pandas as pd

    from faq.insideout.in_process import StepEvent
    from faq.joins.mapped import ship
    from faq.learning.star import star_aggregate, star_plan

    others = {n: t for n, t in tables.items() if n != big}
    if not all(isinstance(t, pd.DataFrame) for t in others.values()):
        return None
    rows = {**{n: len(t) for n, t in others.items()}, big: sum(len(t) for t in others.values()) + 1}
    plan = star_plan(parsed, rows)
    if plan is None or plan.positions[0] != next(k for k, a in enumerate(parsed.atoms) if a.factor == big):
        return None
    fact = parsed.atoms[plan.positions[0]]
    own = [f for f in features if f.table == big]
    probe = pd.DataFrame({**{v: np.zeros(1, dtype=np.int64) for v in fact.variables},
                          **{f.column: np.zeros(1) for f in own if f.column not in fact.variables}})
    if star_aggregate(parsed, features, {**others, big: probe}, rows) is None:  # the others' keys, checked here
        return None
    used = {n: list(dict.fromkeys([*next(a for a in parsed.atoms if a.factor == n).variables,
                                   *(f.column for f in features if f.table == n)])) for n in others}
    handle = ship(tables[big].sparkSession, {n: {c: others[n][c].to_numpy() for c in used[n]} for n in others})
    frame = tables[big]
    _check_integer_keys(frame, fact)
    spec = _StarSpec(ring, parsed, tuple(features), big, rows, handle)
    read, kept = _fact_rows(frame, fact, own, spec)
    task = TaskJoin(big, str(fact), tuple((str(a), len(others[a.factor])) for a in parsed.atoms if a.factor != big),
                    handle.nbytes, reason, flat=True, read=read)
    description = f"look up and sum {fact} in its tasks"
    if progress:
        progress(StepEvent("start", 1, 1, description))
    t0 = time.perf_counter()
    partials = [row[0] for row in kept.collect()]  # one row per task
    value = np.asarray(partials, dtype=np.float64).reshape(-1, ring.width).sum(axis=0)
    if progress:
        progress(StepEvent("done", 1, 1, description, 1, time.perf_counter() - t0, task.describe()))
    return value.tolist(), plan, (task.describe(),)


def _fact_rows(frame: Any, fact: Any, own: Sequence[Any], spec: _StarSpec) -> tuple[str, Any]:
    """How the tasks read the fact's rows, and the DataFrame of their partials (one row a task).

    Where the fact is a bare scan of local Parquet files with numeric features, each of one task per core
    reads an equal share of the files' rows with pyarrow (:func:`faq.parquet_scan.file_shares`): Spark's
    conversion of the rows into Arrow batches for the Python workers was most of the tasks' time.  Else the
    tasks read the rows Spark gives them (nulls dropped by Spark, keys cast to bigint, features to double).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DoubleType, StructField, StructType

    from faq.parquet_scan import file_shares
    from faq.spark import default_parallelism

    schema = StructType([StructField("value", ArrayType(DoubleType(), containsNull=False))])
    columns = list(dict.fromkeys([*fact.variables, *(f.column for f in own)]))
    numeric = all(dict(frame.dtypes).get(f.column) in _NUMERIC for f in own)
    scan = file_shares(frame, columns) if numeric else None
    if scan is not None:
        tasks = max(1, default_parallelism(frame.sparkSession))
        ranged = frame.sparkSession.range(0, tasks, 1, tasks)
        return (f"each of {tasks} tasks reading a share of its {len(scan.files)} Parquet file(s)",
                ranged.mapInArrow(_star_function(spec, scan, tasks), schema))
    kept = frame.select(*[F.col(v).cast("bigint").alias(v) for v in fact.variables],
                        *[F.col(c).cast("double").alias(c) for c in dict.fromkeys(f.column for f in own)
                          if c not in fact.variables])
    for name in kept.columns:  # a row with a null key or feature joins nothing (as the driver's star drops it)
        kept = kept.where(F.col(name).isNotNull())
    return "its rows as Spark reads them", kept.mapInArrow(_star_function(spec), schema)


#: Spark SQL types a feature read from the files by pyarrow may have (numbers, gathered as doubles).
_NUMERIC = frozenset({"bigint", "int", "smallint", "tinyint", "double", "float"})


def _star_function(spec: _StarSpec, scan: Any = None, tasks: int = 1) -> Any:
    """The ``mapInArrow`` body of a flat star: a partition's rows in, its packed ``(n, Σx, Σxxᵀ)`` out; given
    ``scan`` (:class:`faq.parquet_scan.FileShares`), task numbers in, each task reading its share of the fact's
    files (rows with a null dropped, as Spark's path drops them)."""
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if scan is None:
            yield from star_chunks(batches, spec)
            return
        for batch in batches:
            for task in batch.column(0).to_numpy():
                yield from star_chunks(iter(scan.read_share(int(task), tasks).drop_null().to_batches()), spec)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def star_chunks(batches: Iterator[Any], spec: _StarSpec, shipped: Optional[Mapping[str, Any]] = None
                ) -> Iterator[Any]:
    """One task of a flat star (no Spark): its rows in chunks, each looked up and summed
    (:func:`faq.learning.star.star_aggregate`), the sum of the chunks' packed values out.

    ``shipped`` are the other tables' columns (default: read from the shipped file).
    """
    import pandas as pd

    from faq.arrow_arrays import spark_arrays
    from faq.errors import InvalidArgumentError
    from faq.insideout.in_tasks import chunks
    from faq.learning.star import star_aggregate

    columns = spec.shipped.value if shipped is None else shipped
    others = {n: pd.DataFrame(dict(c), copy=False) for n, c in columns.items()}
    total: Optional[np.ndarray] = None
    for chunk in chunks(batches, CHUNK_ROWS):
        found = star_aggregate(spec.parsed, spec.features, {**others, spec.fact: chunk.to_pandas()}, spec.rows)
        if found is None:  # the driver checked the others' keys: a fact key column must have changed type
            raise InvalidArgumentError(argument=spec.fact, value=chunk.schema.names,
                                       reason="its rows no longer join as a foreign-key star")
        part = spec.ring.pack(*found[:3])
        total = part if total is None else total + part
    if total is not None:
        import pyarrow as pa

        yield pa.RecordBatch.from_arrays([spark_arrays(total[None, :])], names=["value"])


def _check_integer_keys(frame: Any, atom: Any) -> None:
    """Refuse a key column that is not an integer, as a pandas table's is refused (a cast would make nulls)."""
    from pyspark.sql.types import IntegralType

    from faq.errors import InvalidArgumentError

    for v in atom.variables:
        kind = frame.schema[v].dataType
        if not isinstance(kind, IntegralType):
            raise InvalidArgumentError(argument=atom.factor, value=v,
                                       reason=f"a join key must be an integer column (found {kind.simpleString()})")


def _task_plan(query: Any, ring: Any, sizes: Mapping[str, int], atom: str, reason: str) -> "Plan":
    """The in-process plan each task of ``atom`` (a relation id) runs: every step on the driver (the
    task's process), one thread (the tasks are the parallelism), the large table's rows per task unknown."""
    from faq.insideout.in_tasks import plan_in_tasks
    from faq.insideout.physical import Environment
    from faq.insideout.planner import plan_query

    types = {v: "bigint" for a in query.atoms for v in a.variables}
    environment = Environment(placement="driver", parallelism=1)
    made = plan_query(query, ring, sizes=dict(sizes), variable_types=types, environment=environment,
                      held=[a.factor for a in query.atoms])
    return plan_in_tasks(made, atom, reason)


def _task_function(spec: _TaskSpec) -> Any:
    """The ``mapInArrow`` body for ``spec``: a partition's raw rows in, its partial aggregate out."""
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from lift_and_join(batches, spec)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def lift_and_join(batches: Iterator[Any], spec: _TaskSpec, shipped: Optional[Mapping[str, "Table"]] = None
                  ) -> Iterator[Any]:
    """One task (no Spark): its rows in chunks, each lifted and joined, the ⊕ of the chunks' aggregates out.

    ``shipped`` are the other atoms' tables (default: read from the shipped file).
    """
    from faq.arrow_arrays import spark_arrays
    from faq.insideout.in_tasks import chunks

    tables = spec.shipped.value if shipped is None else shipped
    total: Optional[np.ndarray] = None
    for chunk in chunks(batches, CHUNK_ROWS):
        part = _chunk(chunk, spec, tables)
        total = part if total is None else total + part
    if total is not None:
        import pyarrow as pa

        yield pa.RecordBatch.from_arrays([spark_arrays(total[None, :])], names=["value"])


def _chunk(table: Any, spec: _TaskSpec, shipped: Mapping[str, "Table"]) -> np.ndarray:
    """The aggregate of the join of ``table``'s rows (an Arrow table, lifted here) with the shipped tables:
    the ring's width."""
    from faq.arrow_arrays import to_numpy
    from faq.insideout.in_process import run_in_process
    from faq.joins.table import Table
    from faq.learning.features import row_values
    from faq.semirings.numpy_backend import numpy_ops

    keys = {v: np.asarray(to_numpy(table.column(v)), dtype=np.int64) for v in spec.variables}
    columns = {f.column: to_numpy(table.column(f"__f{i}")) for i, f in enumerate(spec.features)}
    values = row_values(spec.ring, spec.features, columns, table.num_rows)
    out = run_in_process(spec.plan, {**shipped, spec.atom_id: Table(spec.variables, keys, values)}, spec.ring)
    ops = numpy_ops(spec.ring, arrays=True)
    return np.asarray(ops.sum(np.asarray(out.values, dtype=np.float64).reshape(-1, spec.ring.width)))

