"""The executors placement of a maintained fixpoint: edges and answer cached on Spark.

:class:`SparkPlacement` is the part of
:class:`~faq.recursive.maintained.MaintainedFixpoint` that runs when the edges
do not fit the driver's budget (or the semiring has no numpy form): it starts
a :class:`~faq.recursive.spark_maintained.SparkFixpoint`, hands it every
batch and turns its changed rows into the one
:class:`~faq.incremental.change.Change` type.  Insertions are incremental
there (semi-naive rounds as Spark jobs); deletions and worsening updates are
*recomputed* from scratch (with the edges held on the executors and the
values on the driver where that can run: :mod:`faq.recursive.held_solve`) --
the trimming of :mod:`faq.recursive.trimming` runs on the driver placement
only.

Durable state on the executors
------------------------------
With ``path=`` the edges and the answer are kept in a
:class:`~faq.incremental.store.Store` whose data Spark writes (Parquet
directories; no edge or value passes through the driver): version 0 writes
both as bases; an incremental batch writes its added edges and its changed
values ``(node, new)`` as deltas, which ⊕-merge on reopening (values only
improve between recomputations, so the ⊕ per node is the latest value); a
recomputed batch, or deltas grown past the store's rebase threshold, writes
new bases.  The manifest (labels, version) is the commit point, as for every
state.  :meth:`~faq.recursive.maintained.MaintainedFixpoint.open` reads the
files back with Spark and continues without solving again.

Unlike the driver placement, the Spark answer changes *before* the save (a
batch's rounds build it).  So if the sink (``before_commit``) or the save
fails, the fixpoint goes back to the saved version by reading it again
(:meth:`SparkPlacement._reload_spark`); the batch is then not applied, as on
the driver.  Without ``path=`` a failed batch keeps the Spark answer, which
is harmless: applying the batch again changes nothing more (its insertions
set pairs, its deletions remove them).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from faq.factor import Factor
from faq.incremental.change import BatchEvent, Change
from faq.placement_policy import EXECUTORS
from faq.incremental.store import SparkRows, Store
from faq.io.updates import UpdateBatch
from faq.recursive.edge_input import edge_table
from faq.recursive.fixpoint_state import ANSWER, EDGE
from faq.recursive.seminaive import DST, NODE, SRC, VALUE, WEIGHT, check_binary
from faq.spark import is_dataframe

if TYPE_CHECKING:
    from faq.recursive.spark_maintained import SparkChanges

__all__ = ["SparkPlacement", "OLD"]

OLD = "old"


class SparkPlacement:
    """Methods of :class:`~faq.recursive.maintained.MaintainedFixpoint` for the executors placement (a mixin)."""

    #: How the executors placement takes a deletion or a worse weight.
    SPARK_DELETIONS = ("recompute (the executors placement has no trimming: the fixpoint is solved again, with the "
                       "edges held on the executors where the nodes fit the budget)")

    def _start_spark(self, edges: Any, nodes: Any, *, answer: Any = None, initial_iterations: int = 0) -> None:
        """The Spark fixpoint over ``edges``: solved, or continuing from a saved ``answer``."""
        from faq.recursive.spark_maintained import SparkFixpoint

        factor = self._spark_factor(edges)
        self._spark = self.scope.adopt(SparkFixpoint(
            factor, self.semiring, source=self.source, components=self.components, nodes=nodes,
            default_weight=None if self.components else self.default_weight,
            max_iterations=self.max_iterations, progress=self._note, answer=answer,
            initial_iterations=initial_iterations, budget=self.budget,
        ))
        self.initial_iterations = self._spark.initial_iterations
        self.resident = None

    # -- durable state (module notes) ----------------------------------------------------

    def _attach_spark(self, path: str) -> None:
        """Keep the executors' state in ``path`` (which must hold none): version 0, edges and answer as bases."""
        store = Store(path)
        store.create()  # refuses a state already there, or a directory holding files of the user's
        try:
            store.save(0, {**self._manifest(), "labels": []}, self._spark_bases(self._spark.state.df.count()))
        except BaseException:
            store.release()
            raise
        self._spark_versions.store = store

    def _spark_bases(self, answer_rows: int) -> dict:
        """The current edges and answer as new base files (Spark writes them)."""
        spark = self._spark
        return {EDGE: ("base", SparkRows(spark.edges.df, spark.edge_rows)),
                ANSWER: ("base", SparkRows(spark.state.df, answer_rows))}

    def _save_spark(self, target: int, labels: list, changes: "SparkChanges", answer_rows: int) -> None:
        """Commit version ``target`` of a durable executors state: the batch's deltas, or new bases."""
        from pyspark.sql import functions as F

        store = self._spark_versions.store
        if store is None:
            return
        writes: dict = {}
        if not changes.recomputed:
            if changes.added is not None and changes.inserted:
                writes[EDGE] = ("delta", SparkRows(changes.added, changes.inserted))
            if changes.count:
                new_values = changes.df.select(NODE, F.col("new").alias(VALUE))
                writes[ANSWER] = ("delta", SparkRows(new_values, changes.count))
        if changes.recomputed or any(store.wants_rebase(name, rows.rows) for name, (_, rows) in writes.items()):
            writes = self._spark_bases(answer_rows)
        store.save(target, {**self._manifest(), "labels": labels}, writes)

    def _restore_spark(self, store: Store, meta: dict) -> None:
        """A state saved on the executors, read back by Spark: edges ⊕-merged per pair, the saved answer."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns
        from faq.spark import get_session

        spark = get_session()
        value_type = self.semiring.value_type
        self.name = meta.get("name", "edges")
        self.placement, self.placement_reason = EXECUTORS, "reopened from a state saved on the executors"
        edges = spark.read.schema(f"{SRC} bigint, {DST} bigint, {WEIGHT} {value_type}").parquet(*store.files(EDGE))
        edges = edges.groupBy(SRC, DST).agg(spark_columns(self.semiring).sum(F.col(WEIGHT)).alias(WEIGHT))
        answer = spark.read.schema(f"{NODE} bigint, {VALUE} {value_type}").parquet(*store.files(ANSWER))
        self._start_spark(edges, None, answer=answer, initial_iterations=int(meta.get("initial_iterations") or 0))
        versions = self._spark_versions
        versions.version, versions.labels, versions.store = int(meta["version"]), list(meta.get("labels", [])), store

    def _reload_spark(self) -> None:
        """Go back to the saved version after a failed commit (module notes): the Spark answer read again."""
        store = self._spark_versions.store
        self.scope.release(self._spark)
        self._restore_spark(store, store.committed())

    def _spark_batch(self, inserts: Any, deletes: Any, target: int, label: str,
                     batch: Optional[UpdateBatch], started: float,
                     before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """One batch on Spark; deletions and worse weights recompute there (no trimming on Spark).

        The Spark answer changes before ``before_commit`` is called (it has no
        durable state: the commit is the version's); a batch applied again
        changes nothing more, for its insertions set pairs and its deletions
        remove them.
        """
        recompute = True  # SparkFixpoint recomputes only when the batch is not monotone
        spark = self._spark
        self._emit(BatchEvent("start", target, "on Spark", label=label))
        if batch is None and inserts is not None and deletes is not None:  # rows of both kinds: one update batch
            batch = _update_batch(label, inserts, deletes)
        if batch is not None:
            changes = spark.apply(batch, recompute=recompute)
        elif deletes is not None:
            changes = spark.delete(deletes, recompute=recompute, name=label)
        else:
            changes = spark.insert(inserts if inserts is not None else [], recompute=recompute, name=label)
        with changes:  # the changed rows stay cached until the version is saved
            change = self._from_spark(changes, target, label, started)
            try:
                self._commit(target, label, change=change, before_commit=before_commit,
                             save=lambda labels: self._save_spark(target, labels, changes, change.count))
            except BaseException:
                if self._spark_versions.store is not None:
                    self._reload_spark()  # the saved version is the truth (module notes)
                raise
        self._emit(BatchEvent("done", target, "on Spark", len(change), change.seconds, label))
        return change

    def _from_spark(self, changes: "SparkChanges", target: int, label: str, started: float) -> Change:
        """A Spark batch's changed rows, collected (they are the batch's output), as a :class:`Change`.

        ``changes`` stays open: its owner closes it.
        """
        import pyarrow as pa
        from pyspark.sql import functions as F

        table = changes.df.select(NODE, OLD, "new").orderBy(NODE).toArrow()
        count = self._spark.state.df.agg(F.count(F.lit(1))).first()[0]
        keys = np.asarray(table.column(NODE).to_numpy(zero_copy_only=False), dtype=np.int64)
        old = table.column(OLD)
        # NaN stands for "no value" in a float column only; booleans and labels get None
        old = np.asarray(old.to_numpy(zero_copy_only=False)) if old.type.equals(pa.float64()) or not old.null_count \
            else np.array(old.to_pylist(), dtype=object)
        new = table.column("new")
        if new.null_count:  # a node no longer reached: the zero
            import pyarrow.compute as pc

            new = pc.fill_null(new, self.semiring.zero)
        new = np.asarray(new.to_numpy(zero_copy_only=False))
        info = {"batch": label, "iterations": changes.iterations, "inserted": changes.inserted,
                "deleted": changes.deleted, "trimmed": 0, "recomputed": changes.recomputed}
        types = {NODE: "bigint", OLD: self.semiring.value_type, "diff": self.semiring.value_type}
        self._factor = None
        return Change((NODE,), (keys,), new, target, time.perf_counter() - started, extra={OLD: old},
                      count=int(count), info=info, types=types)

    def _spark_factor(self, edges: Any) -> Factor:
        if isinstance(edges, Factor):
            check_binary(edges)
            return edges
        from faq.spark import get_session

        if is_dataframe(edges):
            df = edges
        else:
            src, dst, weight = self._arrays(edges, initial=True)
            import pandas as pd

            df = get_session().createDataFrame(pd.DataFrame({SRC: src, DST: dst, WEIGHT: weight}))
        wcol = WEIGHT if WEIGHT in df.columns else (VALUE if VALUE in df.columns else None)
        if wcol is None:
            from pyspark.sql import functions as F

            df = df.withColumn(WEIGHT, F.lit(self.default_weight).cast(self.semiring.value_type))
            wcol = WEIGHT
        return Factor(df=df, variables=(SRC, DST), semiring=self.semiring, value=wcol, name=self.name)



def _update_batch(name: str, inserts: Any, deletes: Any) -> UpdateBatch:
    """Edges-like insertions and deletions as one :class:`UpdateBatch` (a missing weight: None)."""
    src, dst, weight = edge_table(inserts)
    rows = tuple((int(s), int(d), None if np.isnan(w) else float(w)) for s, d, w in zip(src, dst, weight))
    gone_src, gone_dst, _ = edge_table(deletes)
    return UpdateBatch(name, rows, tuple((int(s), int(d)) for s, d in zip(gone_src, gone_dst)))
