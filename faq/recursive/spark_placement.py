"""The executors placement of a maintained fixpoint: edges and answer cached on Spark.

:class:`ExecutorsFixpoint` is the :class:`~faq.recursive.holders.FixpointHolder`
of a :class:`~faq.recursive.maintained.MaintainedFixpoint` whose edges do
not fit the driver's budget (or whose semiring has no numpy form): it starts
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
(:meth:`ExecutorsFixpoint._reload`); the batch is then not applied, as on
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
from faq.incremental.durable import Versions
from faq.incremental.store import SparkRows, Store
from faq.placement_policy import EXECUTORS
from faq.io.updates import UpdateBatch
from faq.recursive.edge_input import edge_table
from faq.recursive.fixpoint_state import ANSWER, EDGE
from faq.recursive.holders import OLD, FixpointOwner
from faq.recursive.seminaive import DST, NODE, SRC, VALUE, WEIGHT, check_binary
from faq.scope import Owner, Scope
from faq.spark import is_dataframe

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.recursive.spark_maintained import SparkChanges, SparkFixpoint

__all__ = ["ExecutorsFixpoint"]


class ExecutorsFixpoint(Owner):
    """A maintained fixpoint's edges and answer held on Spark (module notes).

    Parameters
    ----------
    owner : FixpointOwner
        The problem, and the hooks a batch calls back (commit, events, manifest, inputs).
    edges, nodes
        The initial edges and extra nodes (as for the owner); or
    restored : (Store, dict), optional
        A state saved on the executors and its manifest, read back by Spark.
    """

    where = EXECUTORS
    inserts = "semi-naive rounds from the delta as Spark jobs"
    writer = "written by Spark"
    #: How the executors placement takes a deletion or a worse weight.
    deletions = ("recompute (the executors placement has no trimming: the fixpoint is solved again, with the "
                 "edges held on the executors where the nodes fit the budget)")

    def __init__(self, owner: FixpointOwner, edges: Any = None, nodes: Any = None, *,
                 restored: Optional[tuple[Store, dict]] = None) -> None:
        self.owner = owner
        self.semiring, self.name, self.reason = owner.semiring, owner.name, owner.placement_reason
        self.scope = Scope()  # the Spark fixpoint (its cached edges and answer)
        self.versions = Versions()  # in memory, with the store when there is one
        self.spark: Optional["SparkFixpoint"] = None
        if restored is not None:
            self._restore(*restored)
        else:
            self._start(edges, nodes)

    def _start(self, edges: Any, nodes: Any, *, answer: Any = None, initial_iterations: int = 0) -> None:
        """The Spark fixpoint over ``edges``: solved, or continuing from a saved ``answer``."""
        from faq.recursive.spark_maintained import SparkFixpoint

        owner = self.owner
        factor = self._factor_of(edges)
        self.spark = self.scope.adopt(SparkFixpoint(
            factor, self.semiring, source=owner.source, components=owner.components, nodes=nodes,
            default_weight=None if owner.components else owner.default_weight,
            max_iterations=owner.max_iterations, progress=owner._note, answer=answer,
            initial_iterations=initial_iterations, budget=owner.budget,
        ))
        self.initial_iterations = self.spark.initial_iterations

    # -- the holder's interface (faq.recursive.holders) -----------------------------------

    @property
    def size(self) -> int:
        return self.spark.state.df.count()

    @property
    def edge_rows(self) -> int:
        return self.spark.edge_rows

    def table(self) -> "pa.Table":
        return self.spark.state.df.orderBy(NODE).toArrow()

    def head(self, n: int) -> list[tuple]:
        return [tuple(r) for r in self.spark.state.df.orderBy(NODE).limit(n).collect()]  # at most n rows

    def value(self, node: int) -> Any:
        from pyspark.sql import functions as F

        row = self.spark.state.df.where(F.col(NODE) == int(node)).first()  # one row
        return None if row is None else row[VALUE]

    @property
    def state(self) -> Factor:
        return self.spark.state

    @property
    def edges(self) -> Factor:
        return self.spark.edges

    def recompute(self, started: float) -> Change:
        with self.spark.recompute() as changes:
            return self._change(changes, self.owner.version, "recompute", started)

    # -- durable state (module notes) ----------------------------------------------------

    def attach(self, path: str) -> None:
        """Keep the executors' state in ``path`` (which must hold none): version 0, edges and answer as bases."""
        store = Store(path)
        store.create()  # refuses a state already there, or a directory holding files of the user's
        try:
            store.save(0, {**self.owner._manifest(), "labels": []}, self._bases(self.spark.state.df.count()))
        except BaseException:
            store.release()
            raise
        self.versions.store = store

    def _bases(self, answer_rows: int) -> dict:
        """The current edges and answer as new base files (Spark writes them)."""
        spark = self.spark
        return {EDGE: ("base", SparkRows(spark.edges.df, spark.edge_rows)),
                ANSWER: ("base", SparkRows(spark.state.df, answer_rows))}

    def _save(self, target: int, labels: list, changes: "SparkChanges", answer_rows: int) -> None:
        """Commit version ``target`` of a durable executors state: the batch's deltas, or new bases."""
        from pyspark.sql import functions as F

        store = self.versions.store
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
            writes = self._bases(answer_rows)
        store.save(target, {**self.owner._manifest(), "labels": labels}, writes)

    def _restore(self, store: Store, meta: dict) -> None:
        """A state saved on the executors, read back by Spark: edges ⊕-merged per pair, the saved answer."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns
        from faq.spark import get_session

        spark = get_session()
        value_type = self.semiring.value_type
        self.name = meta.get("name", "edges")
        self.reason = "reopened from a state saved on the executors"
        edges = spark.read.schema(f"{SRC} bigint, {DST} bigint, {WEIGHT} {value_type}").parquet(*store.files(EDGE))
        edges = edges.groupBy(SRC, DST).agg(spark_columns(self.semiring).sum(F.col(WEIGHT)).alias(WEIGHT))
        answer = spark.read.schema(f"{NODE} bigint, {VALUE} {value_type}").parquet(*store.files(ANSWER))
        self._start(edges, None, answer=answer, initial_iterations=int(meta.get("initial_iterations") or 0))
        versions = self.versions
        versions.version, versions.labels, versions.store = int(meta["version"]), list(meta.get("labels", [])), store

    def _reload(self) -> None:
        """Go back to the saved version after a failed commit (module notes): the Spark answer read again."""
        store = self.versions.store
        self.scope.release(self.spark)
        self._restore(store, store.committed())

    def batch(self, inserts: Any, deletes: Any, *, recompute: bool, target: int, label: str,
              update: Optional[UpdateBatch], started: float,
              before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """One batch on Spark; deletions and worse weights recompute there (no trimming on Spark).

        The Spark answer changes before ``before_commit`` is called (it has no
        durable state: the commit is the version's); a batch applied again
        changes nothing more, for its insertions set pairs and its deletions
        remove them.
        """
        recompute = True  # SparkFixpoint recomputes only when the batch is not monotone
        spark, owner = self.spark, self.owner
        owner._emit(BatchEvent("start", target, "on Spark", label=label))
        if update is None and inserts is not None and deletes is not None:  # rows of both kinds: one update batch
            update = _update_batch(label, inserts, deletes)
        if update is not None:
            changes = spark.apply(update, recompute=recompute)
        elif deletes is not None:
            changes = spark.delete(deletes, recompute=recompute, name=label)
        else:
            changes = spark.insert(inserts if inserts is not None else [], recompute=recompute, name=label)
        with changes:  # the changed rows stay cached until the version is saved
            change = self._change(changes, target, label, started)
            try:
                owner._commit(target, label, change=change, before_commit=before_commit,
                              save=lambda labels: self._save(target, labels, changes, change.count))
            except BaseException:
                if self.versions.store is not None:
                    self._reload()  # the saved version is the truth (module notes)
                raise
        owner._emit(BatchEvent("done", target, "on Spark", len(change), change.seconds, label))
        return change

    def _change(self, changes: "SparkChanges", target: int, label: str, started: float) -> Change:
        """A Spark batch's changed rows, collected (they are the batch's output), as a :class:`Change`.

        ``changes`` stays open: its owner closes it.
        """
        import pyarrow as pa
        from pyspark.sql import functions as F

        table = changes.df.select(NODE, OLD, "new").orderBy(NODE).toArrow()
        count = self.spark.state.df.agg(F.count(F.lit(1))).first()[0]
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
        return Change((NODE,), (keys,), new, target, time.perf_counter() - started, extra={OLD: old},
                      count=int(count), info=info, types=types)

    def _factor_of(self, edges: Any) -> Factor:
        if isinstance(edges, Factor):
            check_binary(edges)
            return edges
        from faq.spark import get_session

        if is_dataframe(edges):
            df = edges
        else:
            src, dst, weight = self.owner._arrays(edges, initial=True)
            import pandas as pd

            df = get_session().createDataFrame(pd.DataFrame({SRC: src, DST: dst, WEIGHT: weight}))
        wcol = WEIGHT if WEIGHT in df.columns else (VALUE if VALUE in df.columns else None)
        if wcol is None:
            from pyspark.sql import functions as F

            df = df.withColumn(WEIGHT, F.lit(self.owner.default_weight).cast(self.semiring.value_type))
            wcol = WEIGHT
        return Factor(df=df, variables=(SRC, DST), semiring=self.semiring, value=wcol, name=self.name)


def _update_batch(name: str, inserts: Any, deletes: Any) -> UpdateBatch:
    """Edges-like insertions and deletions as one :class:`UpdateBatch` (a missing weight: None)."""
    src, dst, weight = edge_table(inserts)
    rows = tuple((int(s), int(d), None if np.isnan(w) else float(w)) for s, d, w in zip(src, dst, weight))
    gone_src, gone_dst, _ = edge_table(deletes)
    return UpdateBatch(name, rows, tuple((int(s), int(d)) for s, d in zip(gone_src, gone_dst)))
