"""A plan run inside the tasks of its one large factor: the other atoms shipped, partial answers ⊕-combined.

When every factor of a query but one is on the driver (held, or fetched
within the budget) and that one is too large to fetch, its rows need not
move at all: the other atoms' tables are shipped once to every machine (one
memory-mapped file, :func:`faq.joins.mapped.ship`), and each task of the
large factor's own scan (``mapInArrow``) runs the *whole* plan in-process
over its rows and the shipped tables
(:func:`faq.insideout.in_process.run_in_process`: the kernels a step on the
driver runs), in chunks of at most :data:`CHUNK_ROWS` rows.  The tasks'
answers are partial: the driver ⊕-combines a scalar's, and a query with
free variables has its partial rows combined per key by the semiring's numpy
⊕ (:func:`faq.joins.combine.combined_in_arrow`).  One Spark job over data that
never leaves the task that read it, plus that combine.

Exact when the large factor is used by one atom and every bound variable is
aggregated with the query's own ⊕: each binding of the join then holds
exactly one row of the large factor, and ⊗ distributes over ⊕, so the
aggregate over the join is the ⊕, over any split of that factor's rows, of
the aggregates over each part joined with the other atoms.
:func:`task_atom` checks that, and the planner's facts: the plan made for it
has every step in-process and names the atom (:attr:`Plan.in_tasks
<faq.insideout.plans.Plan.in_tasks>`, printed by ``explain``).

Examples
--------
>>> from faq.insideout.physical import Environment
>>> from faq.language import parse_query
>>> from faq.semirings import get_semiring
>>> query = parse_query("q(c) := fact(a, b, c), dim(a), other(b)")
>>> types = {"a": "bigint", "b": "bigint", "c": "bigint"}
>>> task_atom(query, {"fact"}, get_semiring("real"), types, Environment(placement="auto", in_tasks="always"))
('fact#1', 'fact is too large to fetch to the driver; the other atoms are held there')
>>> task_atom(query, {"fact"}, get_semiring("real"), types, Environment(placement="auto"))  # auto: array rings
>>> task_atom(query, {"fact"}, get_semiring("moments"), types, Environment(placement="auto"))[0]
'fact#1'
>>> task_atom(parse_query("q() := e(a, b), e(b, c)"), {"e"}, get_semiring("moments"), {},
...           Environment(placement="auto"))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

import numpy as np

from faq.events import Progress


if TYPE_CHECKING:
    from faq.insideout.planner import Plan
    from faq.joins.table import Table
    from faq.language import FAQ
    from faq.scope import Scope
    from faq.semirings import Semiring

__all__ = ["CHUNK_ROWS", "task_atom", "plan_in_tasks", "run_in_tasks", "chunks", "answer_chunks"]

#: Rows a task answers at once: its rows are taken in chunks of about this many, each chunk's answer
#: ⊕-combined into the task's (memory per task bounded by a chunk, whatever its partition's size).
CHUNK_ROWS = 1 << 20

#: Spark key types a task's partial answer may carry, as Arrow types (others: the steps run on the executors).
_ARROW_TYPES = {"bigint": "int64", "int": "int32", "smallint": "int16", "tinyint": "int8", "double": "float64",
                "float": "float32", "string": "string", "boolean": "bool"}


def task_atom(query: "FAQ", in_spark: set[str], semiring: "Semiring", types: Mapping[str, str],
              environment: Any) -> Optional[tuple[str, str]]:
    """The atom (relation id ``factor#k``) whose tasks should run the whole plan, and why; None when none.

    ``in_spark`` are the query's factors still in Spark after fetching (the
    others are held on the driver).  One must be left, under the
    ``"auto"`` placement (a forced placement runs its steps where it says),
    used by one atom, with every bound variable aggregated by the query's
    ⊕ (no other aggregate), a numpy form for the semiring, and free
    variables of types a partial answer can carry.

    Where it pays (``spark.faq.inTasks``, :attr:`Environment.in_tasks
    <faq.insideout.physical.Environment.in_tasks>`): by default ("auto")
    for an array ring only.  Measured (``python -m bench.bench_in_tasks``):
    a scalar sum over a 1M-row Parquet fact table took 1.4-1.8 s in its tasks
    against 0.6-0.8 s as Spark SQL steps (the tasks pay Spark's transfer of
    the rows to Python; Spark's generated code sums scalars at scan speed),
    while a regression's cofactor ring took 1.2 s in its tasks against
    15 s as Spark joins of arrays (``bench.bench_learning_executors``).
    "always" takes any semiring with a numpy form, "never" none.
    """
    from faq.semirings.numpy_backend import numpy_ops

    if environment.placement != "auto" or len(in_spark) != 1 or environment.in_tasks == "never":
        return None
    arrays = bool(getattr(semiring, "structured", False))
    if environment.in_tasks == "auto" and not arrays:
        return None
    (name,) = in_spark
    positions = [k for k, atom in enumerate(query.atoms, start=1) if atom.factor == name]
    if len(positions) != 1 or any(agg != semiring.name for _, agg in query.aggregates):
        return None
    if (numpy_ops(semiring, semiring, arrays=True) if arrays else numpy_ops(semiring)) is None:
        return None
    if any(types.get(v) not in _ARROW_TYPES for v in query.free):
        return None
    return f"{name}#{positions[0]}", f"{name} is too large to fetch to the driver; the other atoms are held there"


def plan_in_tasks(plan: "Plan", atom: str, reason: str) -> "Plan":
    """``plan`` (made with every step in-process) to run in the tasks of ``atom``: the plan names it and
    every step says where it runs."""
    from faq.insideout.plans import IN_TASKS

    where = f"{IN_TASKS}{atom}, each over its own rows and the other atoms shipped to it: {reason}"
    return replace(plan, in_tasks=atom, steps=tuple(replace(s, placement_reason=where) for s in plan.steps))


@dataclass(frozen=True)
class _Spec:
    """What every task needs besides its rows (pickled into the function)."""

    plan: Any
    semiring: Any
    atom: str
    variables: tuple[str, ...]  # the atom's columns in its frame (its distinct variables)
    shipped: Any  # MappedIndex of {relation id: Table}


def run_in_tasks(plan: "Plan", relations: Mapping[str, Any], semiring: "Semiring", scope: "Scope",
                 progress: Progress = None) -> tuple[Any, int, str]:
    """The answer of ``plan`` run in the tasks of :attr:`Plan.in_tasks`: (a ``Frame`` the driver holds for
    a query without free variables, else one persisted in ``scope``; its rows; a note).

    ``relations`` are the executor's frames: the large atom's in Spark, every other's held by the driver.
    """
    from faq.insideout.in_process import StepEvent, as_table, held_frame
    from faq.joins.combine import combined_in_arrow
    from faq.joins.frame import VALUE_COLUMN, Aggregation, Frame
    from faq.joins.mapped import ship
    from faq.joins.partitioned import spark_value_type
    from faq.joins.table import Table

    big = relations[plan.in_tasks]
    shipped = {r: as_table(held, semiring) for r, held in relations.items() if r != plan.in_tasks}
    handle = ship(big.df.sparkSession, shipped)
    spec = _Spec(plan, semiring, plan.in_tasks, tuple(big.variables), handle)
    free = tuple(plan.free)
    note = (f"in the tasks of {plan.in_tasks}: the plan run in-process over each task's rows and "
            f"{', '.join(shipped) or 'no other atom'} shipped once per machine ({handle.nbytes} bytes)")
    description = f"the plan in the tasks of {plan.in_tasks}"
    if progress:
        progress(StepEvent("start", 1, 1, description))
    t0 = time.perf_counter()
    from pyspark.sql import types as T

    spark_types = {"bigint": T.LongType, "int": T.IntegerType, "smallint": T.ShortType, "tinyint": T.ByteType,
                   "double": T.DoubleType, "float": T.FloatType, "string": T.StringType, "boolean": T.BooleanType}
    fields = [T.StructField(v, spark_types[plan.variable_types[v]]()) for v in free]
    fields.append(T.StructField(VALUE_COLUMN, spark_value_type(semiring)))
    out = big.df.select(*big.variables, VALUE_COLUMN).mapInArrow(_task_function(spec), T.StructType(fields))
    if not free:
        partials = [row[0] for row in out.collect()]  # one row per task, or none
        total = Aggregation((), semiring).combine_values(partials, semiring)
        if total is None:  # an exact integer ⊕ past int64 (the only way a numpy form returns none here)
            from faq.errors import IntegerOverflowError

            raise IntegerOverflowError(operation="⊕", semiring=semiring.name,
                                       where="sum of the tasks' partial answers")
        zero = np.all(np.asarray(total) == np.asarray(semiring.zero))
        values = np.asarray([] if zero else [total])
        table = Table((), {}, values if not semiring.structured else values.reshape(-1, semiring.width))
        result: Any = held_frame(table, note)
        rows = table.rows
    else:
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        value = F.col(VALUE_COLUMN)  # partials of several tasks may ⊕ to zero (real, integer): dropped, as steps do
        combined = combined_in_arrow(out, free, semiring).where(~spark_columns(semiring).is_zero(value))
        df = scope.persist(combined)
        rows = df.count()
        result = Frame(df, free, note)
    if progress:
        progress(StepEvent("done", 1, 1, description, rows, time.perf_counter() - t0, note))
    return result, rows, note


def _task_function(spec: _Spec) -> Any:
    """The ``mapInArrow`` body for ``spec``: a partition's rows in, its partial answer out."""
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from answer_chunks(batches, spec)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def chunks(batches: Iterator[Any], rows: int) -> Iterator[Any]:
    """Arrow batches gathered into tables of at least ``rows`` rows (the last may be fewer; none if empty).

    >>> import pyarrow as pa
    >>> batch = pa.record_batch({"a": [1, 2, 3]})
    >>> [t.num_rows for t in chunks(iter([batch, batch, batch]), 5)]
    [6, 3]
    """
    import pyarrow as pa

    pending: list[Any] = []
    count = 0
    for batch in batches:
        if batch.num_rows:
            pending.append(batch)
            count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(pending)
            pending, count = [], 0
    if pending:
        yield pa.Table.from_batches(pending)


def answer_chunks(batches: Iterator[Any], spec: _Spec, shipped: Optional[Mapping[str, "Table"]] = None
                  ) -> Iterator[Any]:
    """One task (no Spark): each chunk of its rows answered by the plan with the shipped tables; a batch of
    the free variables and the value per chunk (a query without free variables: one ⊕ for the task).

    ``shipped`` are the other atoms' tables (default: read from the shipped file).
    """
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy, spark_arrays
    from faq.insideout.in_process import run_in_process
    from faq.joins.frame import VALUE_COLUMN
    from faq.joins.table import Table
    from faq.semirings.numpy_backend import numpy_ops

    tables = spec.shipped.value if shipped is None else shipped
    plan, semiring = spec.plan, spec.semiring
    arrays = bool(semiring.structured)
    ops = numpy_ops(semiring, semiring, arrays=True) if arrays else numpy_ops(semiring)
    total = None
    for table in chunks(batches, CHUNK_ROWS):
        rows = Table.from_arrow(table, spec.variables, semiring)
        out = run_in_process(plan, {**tables, spec.atom: rows}, semiring)
        if not out.rows:
            continue
        if not plan.free:  # one row: the chunk's ⊕ (integers added exactly, checked against int64 below)
            part = int(out.values[0]) if ops.integral else np.asarray(out.values)[0]
            total = part if total is None else (total + part if ops.integral else ops.add(total, part))
            continue
        keys = [pa.array(np.asarray(out.keys[v])).cast(_ARROW_TYPES[plan.variable_types[v]]) for v in plan.free]
        values = spark_arrays(out.values) if arrays else arrow_from_numpy(np.asarray(out.values))
        yield pa.RecordBatch.from_arrays([*keys, values], names=[*plan.free, VALUE_COLUMN])
    if total is not None:
        if ops.integral and not -(2**63) <= total < 2**63:
            from faq.errors import IntegerOverflowError

            raise IntegerOverflowError(operation="⊕", semiring=semiring.name, where="sum of a task's chunks")
        value = spark_arrays(np.asarray(total)[None, :]) if arrays else arrow_from_numpy(np.asarray([total]))
        yield pa.RecordBatch.from_arrays([value], names=[VALUE_COLUMN])
