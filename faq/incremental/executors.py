"""Resident indexes on the executors: the base shipped once, one Spark job per batch.

When a maintained query's indexes exceed the driver's budget
(:func:`faq.placement_policy.for_indexes`), :class:`ExecutorIndexes`
keeps the *base* of every relation on the executors and only the small
parts on the driver:

* the base tries of every view are broadcast once (and again after each
  compaction); a Python worker deserialises them on first use and keeps
  them for every later batch (workers are reused);
* the base rows stay on the executors as a checkpointed DataFrame of codes,
  read back only to compact or to save a new base;
* the driver keeps the key dictionary, the overlay (bounded by
  :data:`~faq.incremental.index.OVERLAY_MAX_ROWS`) and the answer.

A batch is **one Spark job**: ``range(tasks).mapInArrow(...)``.  Each task
receives the rules, the overlay and the batch (small) in its closure,
reads the base from the broadcast, looks up the batch's keys (task 0
reports the current values, for the driver's checks), and runs its share of
the rules' seeds with the same engine the driver placement uses
(:func:`faq.incremental.engine.run_rules`); the driver ⊕-combines the
partial results.  Nothing is committed before the driver has checked the
batch, so a refused batch changes nothing.

Limits, plainly: building a base's tries happens on the driver (when the
query is made, reopened or compacted), so the driver's *peak* memory is
still the index's size for that moment; between batches it holds only the
overlay.  Broadcast variables are a classic-Spark feature: on Spark
Connect this placement is not available (yet).

Examples
--------
>>> from faq.factor import factor_of
>>> from faq import maintain
>>> edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting")
>>> q = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge}, placement="executors")
>>> q.explain().placement
'executors'
>>> q.apply(edge=[(1, 3, 1)]).collect()          # one Spark job: the rules ran in the tasks
[Row(version=1, diff=1)]
>>> q.close()
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from faq.handback import created_frame
from faq.incremental.index import KeyedRows, ResidentRelation, View, combined, merge_rows
from faq.spark import default_parallelism, is_connect
from faq.joins.csr import Trie
from faq.semirings.numpy_backend import NumpyForm
from faq.scope import Owner, Scope
from faq.workers import ensure_workers

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.incremental.rule_kernel import RuleKernel
    from faq.incremental.rules import DeltaRule
    from faq.incremental.state import ResidentState

OUT, CHECK = 0, 1  # row kinds a task emits: partial results, and the batch's current values (task 0)


class ExecutorIndexes(Owner):
    """The base of each relation of ``state`` on the executors (see the module notes).

    Parameters
    ----------
    spark : SparkSession
        A classic session (broadcast variables).
    state : ResidentState
        Its relations ``names`` have their bases built; they are shipped and
        released from the driver.
    names : sequence of str
        The relations to place on the executors (not the answer).
    tasks : int, optional
        Tasks per batch (default: the session's default parallelism).
    """

    def __init__(self, spark: "SparkSession", state: "ResidentState", names: Sequence[str],
                 tasks: Optional[int] = None) -> None:
        from faq.errors import FAQTypeError

        if is_connect(spark):
            raise FAQTypeError(error_class="EXECUTOR_INDEXES_ON_CONNECT", argument="placement")
        ensure_workers(spark)  # each batch's tasks run faq's Python on the workers: check once that they can
        self.spark = spark
        self.state = state
        self.scope = Scope()  # the broadcast of the base tries and each relation's checkpointed base rows
        self.names = list(names)
        self.tasks = int(tasks or default_parallelism(spark))
        self._broadcast: Any = None
        self._tries: dict[str, dict[View, Trie]] = {}
        self._frames: dict[str, "DataFrame"] = {}
        self._rows: dict[str, int] = {}
        self.bytes: dict[str, int] = {}  # per relation, the bytes of its base tries on each executor
        self.shipped = 0
        self.ship(self.names)

    # -- the base ---------------------------------------------------------------------

    def ship(self, names: Sequence[str]) -> None:
        """Broadcast the base tries of ``names`` (built on the driver) and release the driver's copies."""
        for name in names:
            relation = self.state.relations[name]
            self._tries[name] = relation.base_tries()
            self.bytes[name] = sum(t.nbytes for t in self._tries[name].values())
            rows = relation.base
            table = _codes_table(rows, relation.columns, self.state.semiring.value_type, self.state.ops)
            old = self._frames.get(name)
            schema = _codes_schema(relation.columns, self.state.semiring.value_type)
            self._frames[name] = self.scope.checkpoint(
                created_frame(self.spark, table, schema)
            )
            self.scope.release(old)
            self._rows[name] = len(rows)
            relation.release_base(len(rows))
        old_broadcast = self._broadcast
        # Classic Spark only (refused on Connect above): the one optional fast path using the SparkContext.
        broadcast = self.spark.sparkContext.broadcast(dict(self._tries))
        self._broadcast = self.scope.adopt(broadcast, release=lambda: _destroy(broadcast))
        self._tries = {}  # the broadcast holds them; the driver keeps nothing of the base
        self.scope.release(old_broadcast)
        self.shipped += 1

    def base_rows(self, name: str) -> KeyedRows:
        """The base rows of ``name``, read back from the executors (for a compaction or a new base file)."""
        relation = self.state.relations[name]
        table = self._frames[name].toArrow()
        keys = tuple(np.asarray(table.column(f"k{i}").to_numpy(), dtype=np.int64) for i in range(relation.arity))
        values = _values_of(table.column("v"), self.state.semiring, self.state.ops)
        return KeyedRows(keys, values)

    def current(self, name: str) -> KeyedRows:
        """Current rows of ``name`` (base from the executors ⊕ the driver's overlay)."""
        relation = self.state.relations[name]
        base, overlay = self.base_rows(name), relation.overlay
        return combined(base, overlay, relation.ops) if len(overlay) else base

    def compact(self, name: str) -> None:
        """Fold the overlay of ``name`` into a new base and ship it."""
        relation = self.state.relations[name]
        relation.replace(self.current(name))
        self.ship([name])

    # -- a batch ----------------------------------------------------------------------

    def run(self, rules: Sequence["DeltaRule"], batches: Mapping[str, KeyedRows], monotone: bool,
            n_keys: int, kernels: Optional[Sequence["RuleKernel"]] = None,
            ) -> tuple[list[np.ndarray], np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
        """Run a batch's rules in one Spark job: (output keys, values, per relation (present, current values)).

        ``kernels``: the plan's kernel of each rule (:mod:`faq.incremental.rule_kernel`), run by the tasks.

        ``monotone``: tasks seed only the rows that change a value (the
        driver refuses worsening rows from the returned current values).
        """
        from pyspark.sql.types import (
            ArrayType,
            BooleanType,
            DoubleType,
            IntegerType,
            LongType,
            StructField,
            StructType,
        )

        state = self.state
        value_type = state.semiring.value_type
        names = sorted(batches)
        bundle = {
            "rules": tuple(rules),
            "kernels": None if kernels is None else tuple(kernels),
            "relations": {n: (state.relations[n].columns, state.relations[n].overlay) for n in self.names},
            "batches": {n: batches[n] for n in names},
            "order": names,
            "ops": state.ops,
            "monotone": monotone,
            "tasks": self.tasks,
            "n_keys": n_keys,
            "key_span": len(state.domain),
            "value_type": value_type,
        }
        value = ArrayType(DoubleType(), False) if state.semiring.structured else \
            {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType()}[value_type]
        schema = StructType([StructField("kind", IntegerType()), StructField("rel", IntegerType()),
                             StructField("row", LongType()), StructField("present", BooleanType()),
                             *[StructField(f"k{i}", LongType()) for i in range(n_keys)], StructField("v", value)])
        df = self.spark.range(0, self.tasks, 1, self.tasks).mapInArrow(
            functools.partial(_task, broadcast=self._broadcast, bundle=bundle), schema)
        table = df.toArrow()  # the batch's one job
        kind = np.asarray(table.column("kind").to_numpy())
        values = _values_of(table.column("v"), state.semiring, state.ops)
        out = np.flatnonzero(kind == OUT)
        keys = [np.asarray(table.column(f"k{i}").to_numpy(), dtype=np.int64)[out] for i in range(n_keys)]
        merged = merge_rows(keys, values[out], state.ops) if n_keys else \
            merge_rows((), values[out], state.ops)
        checks = {}
        check = np.flatnonzero(kind == CHECK)
        rel = np.asarray(table.column("rel").to_numpy())[check]
        row = np.asarray(table.column("row").to_numpy())[check]
        present = np.asarray(table.column("present").to_numpy(zero_copy_only=False))[check]
        for i, name in enumerate(names):
            mine = np.flatnonzero(rel == i)
            order = np.argsort(row[mine])
            checks[name] = (present[mine][order].astype(bool), values[check][mine][order])
        return list(merged.keys), merged.values_or_ones(state.ops), checks

    def close(self) -> None:
        """Destroy the broadcast and release the base rows' checkpoints (:attr:`scope`)."""
        super().close()
        self._broadcast, self._frames = None, {}


def _destroy(broadcast: Any) -> None:
    try:
        broadcast.destroy()
    except Exception:  # noqa: BLE001 - a stopped session has nothing left to free
        pass


def _codes_schema(columns: Sequence[str], value_type: str) -> str:
    return ", ".join([*(f"k{i} bigint" for i in range(len(columns))), f"v {value_type}"])


def _codes_table(rows: KeyedRows, columns: Sequence[str], value_type: str, ops: NumpyForm):
    import pyarrow as pa

    data = {f"k{i}": k for i, k in enumerate(rows.keys)}
    data["v"] = _value_array(rows.values_or_ones(ops))
    return pa.table(data)


def _value_array(values: np.ndarray) -> Any:
    """Values as an Arrow column: numbers, or for an array ring a list column (what Spark's array<double> reads)."""
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy

    values = np.asarray(values)
    if values.ndim == 2:
        return arrow_from_numpy(values).cast(pa.list_(pa.float64()))
    return pa.array(values)


def _values_of(column: Any, semiring: Any, ops: NumpyForm) -> np.ndarray:
    """A value column read back from Spark: ``(n,)`` numbers, or ``(n, w)`` for an array ring."""
    from faq.semirings.numpy_backend import as_values

    if semiring.structured:
        return as_values(semiring, column)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=ops.dtype)


def _task(batches: Iterator[Any], broadcast: Any, bundle: dict) -> Iterator[Any]:
    """mapInArrow body: task ids in; partial results (and, in task 0, the batch's current values) out."""
    tries = broadcast.value  # deserialised once per Python worker, reused by later batches
    ops = bundle["ops"]
    relations = {name: ResidentRelation.of_runs(name, columns, tries[name], overlay, ops)
                 for name, (columns, overlay) in bundle["relations"].items()}
    for record_batch in batches:
        for task in record_batch.column(0).to_numpy():
            yield from _task_rows(int(task), relations, bundle)


def _task_rows(task: int, relations: Mapping[str, ResidentRelation], bundle: dict) -> Iterator[Any]:
    from faq.incremental.engine import run_rules

    ops = bundle["ops"]
    n_keys = bundle["n_keys"]
    effective = {}
    for i, name in enumerate(bundle["order"]):
        batch = bundle["batches"][name]
        present, before = relations[name].lookup(batch.keys)
        if task == 0:  # the driver checks the batch against these
            n = len(batch)
            yield _record(CHECK, i, np.arange(n, dtype=np.int64), present,
                          [np.zeros(n, dtype=np.int64)] * n_keys, before, bundle["value_type"])
        if bundle["monotone"]:  # only rows that change a value (worsening ones are refused by the driver)
            new = batch.values_or_ones(ops)
            keep = ~present | ((ops.add(before, new) == new) & (new != before))
            batch = batch.take(np.flatnonzero(keep))
        effective[name] = batch
    keys, values = run_rules(bundle["rules"], relations, effective, ops, bundle["key_span"],
                             part=(task, bundle["tasks"]), kernels=bundle["kernels"])
    n = len(values)
    if n:
        yield _record(OUT, -1, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), keys, values,
                      bundle["value_type"])


def _record(kind: int, rel: int, rows: np.ndarray, present: np.ndarray, keys: Sequence[np.ndarray],
            values: np.ndarray, value_type: str) -> Any:
    import pyarrow as pa

    n = len(rows)
    columns = [pa.array(np.full(n, kind, dtype=np.int32)), pa.array(np.full(n, rel, dtype=np.int32)),
               pa.array(rows), pa.array(np.asarray(present, dtype=bool)), *[pa.array(k) for k in keys],
               _value_array(values)]
    names = ["kind", "rel", "row", "present", *[f"k{i}" for i in range(len(keys))], "v"]
    return pa.RecordBatch.from_arrays(columns, names=names)
