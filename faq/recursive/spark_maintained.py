"""Maintained fixpoints on Spark: the placement above the driver's index budget.

:class:`~faq.recursive.maintained.MaintainedFixpoint` keeps its edges and its
answer on the driver while they fit the index budget
(:func:`faq.incremental.rules.budget_bytes`); above it, it delegates to
:class:`SparkFixpoint`, which keeps both on the executors and runs every batch
as Spark jobs.  With an idempotent ⊕ an inserted edge -- or a shorter weight in
min_plus, a wider capacity in max_min -- can only *improve* values (docs/design.md,
"Monoid fixpoints").  So a batch of insertions restarts the semi-naive
iteration from the delta alone:

1. the batch is ⊕-merged per pair and compared with the edges already there:
   a pair whose new value is *worse* than the current one (a longer weight, a
   narrower capacity) is a *worsening update*, and any edge in a ``-`` line
   is a *deletion*; both raise
   :class:`~faq.errors.NonMonotoneUpdateError` unless
   ``recompute=True`` is given, which recomputes from scratch (the batch's
   deletions apply first, then its insertions; an insertion of an existing
   pair replaces its value);
2. the *effective* edges (new pairs and strict improvements) seed the
   frontier: the current values of their sources, propagated through these
   edges only (older edges have propagated those values already);
3. semi-naive iterations over all edges follow, from the values that improved;
4. the changed rows ``(node, old, new)`` are returned (``old`` is null for a
   node that had no value).

A from-scratch solve -- the first answer, and a recomputation (deletions,
worsening updates, ``recompute()``) -- holds the edges on the executors and
the values on the driver, a round over the frontier answered by tasks that
stay for the solve (:mod:`faq.recursive.held_solve`), where that can run (numpy forms, a
directory the executors read, nodes within the driver's budget); else it
runs the Spark SQL rounds.  The answer is cached on Spark either way.

Nothing is committed until a batch has been processed completely: an error
(a non-monotone update, a negative cycle, the iteration cap) leaves the
maintained answer as it was.

The edge set is kept as cached parts: the *base* (the initial edges,
partitioned by source) and the *added* edges (one small checkpoint per batch,
merged into one every few batches), so a batch never rewrites the base.
Parallel edges across parts are fine: every join ⊕-merges them.  Each
Spark action of a batch (the comparison with the existing edges, each
iteration, the changed rows) is a local checkpoint that counts what it needs
on the way (``DataFrame.observe``): about 17 Spark jobs per batch.

Examples
--------
>>> from faq.factor import factor_of
>>> edges = factor_of([(1, 2, 5.0), (2, 3, 1.0)], ["src", "dst"], "min_plus")
>>> with SparkFixpoint(edges, "min_plus", source=1) as m:
...     changes = m.insert([(1, 3, 2.0), (3, 4, 1.0)])
...     sorted(map(tuple, changes.df.collect()))
[(3, 6.0, 2.0), (4, None, 3.0)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Optional, Union

from faq.errors import NonMonotoneUpdateError
from faq.events import Progress
from faq.factor import Factor
from faq.io.updates import UpdateBatch
from faq.scope import Owner, Scope
from faq.recursive.edge_input import checked_edges, edge_dataframe
from faq.recursive.holders import OLD  # the column of a node's value before the batch
from faq.recursive.problem import FixpointProblem
from faq.recursive.rounds import (
    DEFAULT_MAX_ITERATIONS,
    DST,
    NODE,
    OLD_VALUE,
    SRC,
    VALUE,
    WEIGHT,
    count_nodes,
    Run,
    edge_stats,
    improves,
    iterate,
    partitions,
    prepare_edges,
    reporter,
    solve,
    source_seed,
)
from faq.recursive.seminaive import check_binary, edge_frame, node_frame, symmetric_edges

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

NEW = "new"
_OLD_WEIGHT = "_old_weight"
_NEW_WEIGHT = "_new_weight"
MAX_LITERAL_SOURCES = 10_000  # a driver-side batch with at most this many sources is looked up by 'src IN'.
_WORSE = "_worse"
MAX_ADDED_PARTS = 8  # per-batch parts of added edges kept apart before they are merged
_BETTER = "_better"

EdgesLike = Union[Factor, "DataFrame", Iterable[tuple]]


# --- what a batch changed ------------------------------------------------------------


@dataclass
class SparkChanges(Owner):
    """The rows a batch changed: ``df`` has ``(node, old, new)``; ``old`` is null for a new value.

    ``df`` is cached, owned by :attr:`scope`: :meth:`close` it (or use ``with``) when done.
    """

    df: "DataFrame"
    count: int
    seconds: float
    iterations: int
    inserted: int = 0
    deleted: int = 0
    recomputed: bool = False
    batch: str = ""
    scope: Scope = field(default_factory=Scope, repr=False)
    #: The edges an incremental batch added ``(src, dst, weight)``: new pairs and strict improvements,
    #: backed by the fixpoint until its next batch (None: none, or the batch was recomputed).
    added: Optional["DataFrame"] = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {
            "batch": self.batch,
            "changed": self.count,
            "seconds": round(self.seconds, 3),
            "iterations": self.iterations,
            "inserted": self.inserted,
            "deleted": self.deleted,
            "recomputed": self.recomputed,
        }


# --- the maintained fixpoint -----------------------------------------------------------


class SparkFixpoint(FixpointProblem, Owner):
    """A fixpoint answer (paths from a source, or connected components) kept current.

    Build one with :meth:`paths` or :meth:`components`; feed it batches with
    :meth:`insert` or :meth:`apply`; read the answer from :attr:`state`.
    Call :meth:`close` (or use ``with``) to release its caches: everything it
    holds is in :attr:`scope` (the base edges, the added parts' checkpoints,
    and the child scope behind the current answer, replaced per batch).

    Parameters
    ----------
    edges : Factor
        The initial edges (two variables).
    semiring, source, components, nodes, default_weight, max_iterations
        As for :class:`~faq.recursive.maintained.MaintainedFixpoint`.
    progress
        As for :func:`~faq.recursive.seminaive.fixpoint`.
    answer : DataFrame, optional
        A saved answer ``(node, value)`` (rows of one node ⊕-merged) to
        continue from, instead of solving one: a reopened durable state.
    initial_iterations : int
        The first answer's iterations, when ``answer`` is given.
    """

    def __init__(
        self,
        edges: Factor,
        semiring: Any = "min_plus",
        *,
        source: Optional[int] = None,
        components: bool = False,
        nodes: Any = None,
        default_weight: Optional[float] = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        progress: Progress = None,
        answer: Optional["DataFrame"] = None,
        initial_iterations: int = 0,
        budget: Optional[int] = None,
    ) -> None:
        from pyspark.sql import functions as F

        check_binary(edges)
        self._define(semiring, source, components, default_weight, max_iterations)
        self._progress = reporter(progress)
        self._spark = edges.session
        self._budget = budget  # the driver's for the values of a from-scratch solve (None: the session's)
        self.name = edges.name
        self._known_sources: Optional[list] = None
        self._insert_sources: Optional[list] = None  # sources of the last insert frame, if on the driver
        self._added_parts: list = []  # (checkpoint in self.scope, (src, dst, weight) frame) per batch
        self.scope = Scope()
        self.batches = 0
        started = time.perf_counter()
        frame = symmetric_edges(edges) if components else edge_frame(edges, self.semiring)
        with self.scope.closing_on_error():
            self._base = prepare_edges(frame, self._spark, self.scope, sort=True)
            rows, improving = edge_stats(self._base, self.semiring)
            self._may_cycle = improving > 0  # some edge better than one: a cycle could improve values
            self._progress(f"{rows} edge(s) cached")
            if answer is not None:  # a saved answer (a reopened state): nothing to solve
                run = self._restored_answer(answer)
            else:
                seeds = node_frame(edges, nodes).select(F.col(NODE), F.col(NODE).alias(VALUE)) if components \
                    else source_seed(self._spark, self.source, self.semiring)
                run = self._solve(self._base, seeds)
        self._state = run.state
        self._state_scope = self.scope.adopt(run.scope)  # replaced, and closed, by each new answer
        self.initial_iterations = run.iterations if answer is None else initial_iterations
        self.initial_seconds = time.perf_counter() - started
        self.edge_rows = rows

    def _solve(self, base: "DataFrame", seeds: "DataFrame", may_cycle: Optional[bool] = None) -> Run:
        """The answer from scratch over the cached ``base`` edges: with the edges held on the executors and
        the values on the driver where that can run (:mod:`faq.recursive.held_solve`), else Spark rounds."""
        from pyspark.sql import functions as F

        from faq.incremental.rules import budget_bytes
        from faq.recursive.held_solve import answer_frame, solve_held
        from faq.semirings.spark_backend import columns as spark_columns

        frame = base.select(SRC, DST, WEIGHT)
        if self.components:  # every seed a node of the parts: a loop, which never changes a label
            frame = frame.unionByName(seeds.select(F.col(NODE).alias(SRC), F.col(NODE).alias(DST),
                                                   spark_columns(self.semiring).one().alias(WEIGHT)))
        answer, how = solve_held(frame, self.semiring, source=self.source, components=self.components,
                                 budget=budget_bytes(self._budget), progress=self._progress,
                                 max_iterations=self.max_iterations)
        if answer is None:
            self._progress(f"{how}: Spark rounds")
            return solve(self._spark, [base], seeds, self.semiring, max_iterations=self.max_iterations,
                         progress=self._progress, may_cycle=self._may_cycle if may_cycle is None else may_cycle)
        self._progress(how)
        scope = Scope()
        with scope.closing_on_error():
            state = scope.persist(answer_frame(self._spark, answer, self.semiring)
                                  .repartition(partitions(self._spark), NODE))
            state.count()
        return Run(state=state, scope=scope, iterations=answer.iterations, frontiers=[], backing=state)

    def _restored_answer(self, answer: "DataFrame") -> Run:
        """A saved answer as the current one: its rows ⊕-merged per node (a base and improvements), cached."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        scope = Scope()
        merged = answer.groupBy(NODE).agg(spark_columns(self.semiring).sum(F.col(VALUE)).alias(VALUE))
        state = scope.persist(merged.repartition(partitions(self._spark), NODE))
        with scope.closing_on_error():
            self._progress(f"{state.count()} saved value(s) cached")
        return Run(state=state, scope=scope, iterations=0, frontiers=[], backing=state)

    # -- constructors: paths() and components() (FixpointProblem) ----------------------

    # -- reading ------------------------------------------------------------------------

    @property
    def state(self) -> Factor:
        """The current answer: a factor ``(node) -> value`` (cached; do not unpersist it)."""
        return Factor(df=self._state, variables=(NODE,), semiring=self.semiring, value=VALUE, name=f"{self.name}*")

    @property
    def edges(self) -> Factor:
        """The current edge set ``(src, dst) -> weight`` (for components: both directions)."""
        return Factor(df=self._edges_union(), variables=(SRC, DST), semiring=self.semiring, value=WEIGHT, name=self.name)

    def _added_union(self) -> Optional["DataFrame"]:
        out = None
        for _, frame in self._added_parts:
            out = frame if out is None else out.unionByName(frame)
        return out

    def _parts(self) -> list:
        added = self._added_union()
        return [self._base] + ([added] if added is not None else [])

    def _edges_union(self) -> "DataFrame":
        parts = self._parts()
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out

    # -- updates ------------------------------------------------------------------------

    def insert(self, edges: EdgesLike, *, recompute: bool = False, name: str = "") -> SparkChanges:
        """Insert edges (new pairs, shorter weights, wider capacities); return the changed rows.

        Raises :class:`NonMonotoneUpdateError` (kind ``"worsening"``) when an
        existing edge would get a worse value, unless ``recompute=True``.
        """
        return self._apply(self._insert_frame(edges), None, recompute=recompute, name=name)

    def delete(self, edges: EdgesLike, *, recompute: bool = False, name: str = "") -> SparkChanges:
        """Delete edges: raises :class:`NonMonotoneUpdateError` unless ``recompute=True``."""
        return self._apply(None, self._delete_frame(edges), recompute=recompute, name=name)

    def apply(self, batch: UpdateBatch, *, recompute: bool = False) -> SparkChanges:
        """Apply an :class:`UpdateBatch` (e.g. from :func:`read_batch`).

        A batch with deletions raises :class:`NonMonotoneUpdateError` naming
        its file and line, before any work, unless ``recompute=True``.
        """
        if batch.deletes and not recompute:
            raise NonMonotoneUpdateError(
                kind="deletion",
                count=len(batch.deletes),
                example=batch.deletes[0],
                semiring=self.semiring.name,
                where=batch.where("deletion"),
            )
        ins = self._insert_frame(batch.inserts) if batch.inserts else None
        dels = self._delete_frame(batch.deletes) if batch.deletes else None
        return self._apply(ins, dels, recompute=recompute, name=batch.name, batch=batch)

    def recompute(self) -> SparkChanges:
        """Recompute the answer from scratch on the current edges (returns what differs: nothing)."""
        return self._recompute(None, None, name="recompute", started=time.perf_counter())

    # -- internals -------------------------------------------------------------------------

    def _frame(self, edges: EdgesLike, with_weight: bool) -> "DataFrame":
        """Any edges-like input as ``(src, dst, weight)`` in the semiring (weight null if absent)."""
        edges = checked_edges(edges, target="a fixpoint on Spark")  # before any job or cached part changes
        df, self._known_sources = edge_dataframe(edges, self.semiring, self.components, self._spark)
        return df

    def _insert_frame(self, edges: EdgesLike) -> "DataFrame":
        """Inserted edges: default weights filled in, zeros dropped (symmetric for components).

        Not ⊕-merged here: the comparison with the existing edges merges them.
        """
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        df = self._frame(edges, with_weight=True)
        self._insert_sources = self._known_sources
        s = self.semiring
        ops = spark_columns(s)
        if self.components or s.value_type == "boolean":
            weight = ops.one()
        else:
            weight = F.coalesce(F.col(WEIGHT), F.lit(self.default_weight).cast(s.value_type))
        df = df.select(SRC, DST, weight.alias(WEIGHT))
        if self.components:
            df = df.unionByName(df.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST), F.col(WEIGHT)))
            df = df.where(F.col(SRC) != F.col(DST))
        return df.where(F.col(SRC).isNotNull() & F.col(DST).isNotNull() & ~ops.is_zero(F.col(WEIGHT)))

    def _delete_frame(self, edges: EdgesLike) -> "DataFrame":
        from pyspark.sql import functions as F

        df = self._frame(edges, with_weight=False).select(SRC, DST)
        if self.components:
            df = df.unionByName(df.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
        return df.where(F.col(SRC).isNotNull() & F.col(DST).isNotNull()).distinct()

    def _apply(
        self,
        ins: Optional["DataFrame"],
        dels: Optional["DataFrame"],
        *,
        recompute: bool,
        name: str,
        batch: Optional[UpdateBatch] = None,
    ) -> SparkChanges:
        """One batch: deletions are refused or recomputed; insertions are compared with the
        edges there and, when all are monotone, propagated from the effective ones."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        started = time.perf_counter()
        name = name or f"batch {self.batches + 1}"
        if dels is not None:
            if not recompute:
                self._refuse_deletions(dels)
            return self._recompute(ins, dels, name=name, started=started)
        if ins is None:
            return self._no_change(name, started)
        ops = spark_columns(self.semiring)
        self._compact_added()
        # One action: the comparison is checkpointed (the effective edges become a part of the
        # edge set from it) and counted on the way.
        batch_scope = Scope()  # the comparison's checkpoint: kept only as a part of the edge set
        cmp, counts = batch_scope.checkpoint_observed(self._compare(ins), {
            "worse": F.count(F.when(F.col(_WORSE), 1)),
            "better": F.count(F.when(F.col(_BETTER), 1)),
            "improving": F.count(F.when(F.col(_BETTER) & (ops.add(F.col(WEIGHT), ops.one()) != ops.one()), 1)),
        })
        with batch_scope:
            worse, better = int(counts["worse"]), int(counts["better"])
            may_cycle = self._may_cycle or int(counts["improving"]) > 0
            if worse:
                if not recompute:
                    row = cmp.where(F.col(_WORSE)).first()
                    example = (row[SRC], row[DST], row[_OLD_WEIGHT], row[WEIGHT])
                    raise NonMonotoneUpdateError(
                        kind="worsening",
                        count=worse,
                        example=example,
                        semiring=self.semiring.name,
                        where=batch.where("insertion", example) if batch is not None else "",
                    )
                return self._recompute(ins, None, name=name, started=started)
            if not better:
                return self._no_change(name, started)
            effective = cmp.where(F.col(_BETTER)).select(SRC, DST, WEIGHT)
            changes = self._incremental(effective, better, name=name, started=started, may_cycle=may_cycle)
            # The checkpoint now backs a part of the edges (merged with the others only when the next
            # batch adds one: until then ``changes.added`` reads it, e.g. to save it).
            self._added_parts.append((self.scope.adopt(batch_scope.hand_over(cmp)), effective))
            self.edge_rows += better  # rows of the parts (an improved pair has a row in each)
            changes.added = effective
            return changes

    def _refuse_deletions(self, dels: "DataFrame") -> None:
        """NonMonotoneUpdateError (kind ``"deletion"``) when ``dels`` holds a row (one count job)."""
        deleted = dels.count()
        if deleted:
            first = dels.first()
            raise NonMonotoneUpdateError(
                kind="deletion", count=deleted, example=(first[SRC], first[DST]), semiring=self.semiring.name
            )

    def _compare(self, ins: "DataFrame") -> "DataFrame":
        """Each inserted pair ``(src, dst, weight)`` with its current weight ``_old_weight`` and
        the flags ``_worse`` (⊕ with the current keeps the current) and ``_better`` (an improvement
        or a new pair): a lazy frame."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        s = self.semiring
        ops = spark_columns(s)
        known = self._insert_sources
        # Each inserted pair: its new value (the batch's ⊕) and its current one (the ⊕ of its
        # parallel edges in every part), in one aggregate.  When the batch came from the driver,
        # the existing edges are found with a filter 'src IN (...)', which skips most cached
        # batches of the (sorted) base, and everything runs in one task without a shuffle.
        null = F.lit(None).cast(s.value_type)
        rows = ins.select(SRC, DST, F.col(WEIGHT).alias(_NEW_WEIGHT), null.alias(_OLD_WEIGHT))
        for part in self._parts():
            if known is not None and len(known) <= MAX_LITERAL_SOURCES:
                found = part.where(F.col(SRC).isin(known))
            else:
                found = part.join(F.broadcast(ins.select(SRC, DST).distinct()), [SRC, DST], "left_semi")
            rows = rows.unionByName(found.select(SRC, DST, null.alias(_NEW_WEIGHT), F.col(WEIGHT).alias(_OLD_WEIGHT)))
        if known is not None and len(known) <= MAX_LITERAL_SOURCES:
            rows = rows.coalesce(1)  # a few rows: one partition, so the aggregate needs no shuffle
        merged = rows.groupBy(SRC, DST).agg(
            ops.sum(F.col(_NEW_WEIGHT)).alias(WEIGHT), ops.sum(F.col(_OLD_WEIGHT)).alias(_OLD_WEIGHT)
        )
        new, old = F.col(WEIGHT), F.col(_OLD_WEIGHT)
        return merged.where(new.isNotNull()).select(
            SRC,
            DST,
            WEIGHT,
            _OLD_WEIGHT,
            F.coalesce(old.isNotNull() & (ops.add(new, old) != new), F.lit(False)).alias(_WORSE),
            F.coalesce(improves(s, new, old), F.lit(False)).alias(_BETTER),
        )

    def _compact_added(self) -> None:
        """Merge the per-batch added parts into one when they are many (fewer joins per iteration).

        Called before a batch adds its part, so the last batch's part stays
        readable (:attr:`SparkChanges.added`) until the next batch.
        """
        if len(self._added_parts) < MAX_ADDED_PARTS:
            return
        merged = self.scope.checkpoint(self._added_union().coalesce(1))
        for backing, _ in self._added_parts:
            self.scope.release(backing)
        self._added_parts = [(merged, merged)]

    def _no_change(self, name: str, started: float) -> SparkChanges:
        from faq.handback import empty_frame

        empty = empty_frame(self._spark, [NODE, OLD, NEW],
                            f"{NODE} bigint, {OLD} {self.semiring.value_type}, {NEW} {self.semiring.value_type}")
        return self._batch_done(empty, 0, name=name, started=started, iterations=0)

    def _batch_done(
        self,
        df: "DataFrame",
        count: int,
        *,
        name: str,
        started: float,
        iterations: int,
        inserted: int = 0,
        deleted: int = 0,
        recomputed: bool = False,
        scope: Optional[Scope] = None,
    ) -> SparkChanges:
        """Count the batch and return its changed rows ``df`` (owned by ``scope``) as :class:`SparkChanges`."""
        self.batches += 1
        return SparkChanges(
            df=df,
            count=count,
            seconds=time.perf_counter() - started,
            iterations=iterations,
            inserted=inserted,
            deleted=deleted,
            recomputed=recomputed,
            batch=name,
            scope=scope if scope is not None else Scope(),
        )

    def _incremental(
        self, effective: "DataFrame", inserted: int, *, name: str, started: float, may_cycle: bool
    ) -> SparkChanges:
        from pyspark.sql import functions as F

        s = self.semiring
        state0 = self._state
        with Scope() as batch:  # what only this batch needs: released at the end, whatever happens
            new_nodes = None
            state1 = state0
            if self.components:  # endpoints never seen: a node of their own, labelled with their id
                new_nodes = batch.persist(
                    effective.select(F.col(SRC).alias(NODE))
                    .distinct()
                    .join(state0, NODE, "left_anti")
                    .select(F.col(NODE), F.col(NODE).alias(VALUE))
                )
                state1 = state0.unionByName(new_nodes)
            sources = effective.select(F.col(SRC).alias(NODE)).distinct()
            frontier0 = state1.join(sources, NODE, "left_semi")
            parts = self._parts() + [effective]
            run = iterate(
                state1,
                frontier0,
                None,
                parts,
                s,
                first_parts=[effective],
                max_iterations=self.max_iterations,
                node_count=(lambda: count_nodes(parts, state1)) if may_cycle else None,
                progress=self._progress,
                keep_frontiers=True,
            )
            # The new answer's backing gets a scope of its own; the frontiers' checkpoints stay in
            # the run's, which the batch releases once the changes are computed from them.
            answer = Scope()
            answer.adopt(run.scope.hand_over(run.backing))
            batch.adopt(run.scope)
            with answer.closing_on_error():
                changes, changes_scope, count = self._changed_rows(run.frontiers, new_nodes)
        # Commit (the caller adds the effective edges to the edge set).
        self._replace_answer(run.state, answer)
        self._may_cycle = may_cycle
        return self._batch_done(
            changes, count, name=name, started=started, iterations=run.iterations, inserted=inserted,
            scope=changes_scope,
        )

    def _changed_rows(self, frontiers: list, new_nodes: Optional["DataFrame"]) -> tuple["DataFrame", Scope, int]:
        """The rows a batch changed, ``(node, old, new)``: checkpointed, the scope that owns them, their count.

        Values only improve, so a node's new value is the ⊕ of its frontier
        values and its old value the ``_old`` of the first frontier it appears in.
        """
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        s = self.semiring
        touched = [
            f.select(NODE, F.col(VALUE), F.col(OLD_VALUE), F.lit(i).alias("_iteration"))
            for i, f in enumerate(frontiers, start=1)
        ]
        if new_nodes is not None:
            touched.append(
                new_nodes.select(
                    NODE, F.col(VALUE), F.lit(None).cast(s.value_type).alias(OLD_VALUE), F.lit(0).alias("_iteration")
                )
            )
        changed = touched[0]
        for t in touched[1:]:
            changed = changed.unionByName(t)
        scope = Scope()
        df, seen = scope.checkpoint_observed(
            changed.groupBy(NODE).agg(
                F.min_by(F.col(OLD_VALUE), F.col("_iteration")).alias(OLD),
                spark_columns(s).sum(F.col(VALUE)).alias(NEW),
            ),
            {"rows": F.count(F.lit(1))},
        )
        return df, scope, int(seen["rows"])

    def _replace_answer(self, state: "DataFrame", backing: Scope) -> None:
        """Make ``state`` (backed by ``backing``) the answer, releasing what backed the previous one."""
        self.scope.release(self._state_scope)
        self._state, self._state_scope = state, self.scope.adopt(backing)

    def _recompute(self, ins: Optional["DataFrame"], dels: Optional["DataFrame"], *, name: str, started: float) -> SparkChanges:
        """Apply deletions, then insertions (replacing existing pairs), and solve from scratch."""
        from pyspark.sql import functions as F

        s = self.semiring
        edges = self._edges_union()
        deleted = 0
        if dels is not None:
            deleted = dels.count()
            edges = edges.join(F.broadcast(dels), [SRC, DST], "left_anti")
        inserted = 0
        if ins is not None:
            edges = edges.join(F.broadcast(ins.select(SRC, DST)), [SRC, DST], "left_anti").unionByName(ins)
        rebuilt = Scope()  # the new base edges, then the new answer's backing and the changes
        with rebuilt.closing_on_error():
            base = prepare_edges(edges, self._spark, rebuilt, sort=True)
            rows, improving = edge_stats(base, s)
            if ins is not None:
                inserted = ins.count()
            self._progress(f"recomputing from scratch on {rows} edge(s)")
            if self.components:
                nodes = self._state.select(NODE)
                if ins is not None:
                    nodes = nodes.unionByName(ins.select(F.col(SRC).alias(NODE)))
                seeds = nodes.distinct().select(F.col(NODE), F.col(NODE).alias(VALUE))
            else:
                seeds = source_seed(self._spark, self.source, s)
            run = self._solve(base, seeds, may_cycle=improving > 0)
            answer = rebuilt.adopt(run.scope)
            old_s = self._state.select(NODE, F.col(VALUE).alias(OLD))
            new_s = run.state.select(NODE, F.col(VALUE).alias(NEW))
            changes_scope = Scope()
            changes = changes_scope.persist(
                old_s.join(new_s, NODE, "full").where(~F.col(OLD).eqNullSafe(F.col(NEW))).select(NODE, OLD, NEW)
            )
            with changes_scope.closing_on_error():
                count = changes.count()
        # Commit: the new base and answer replace everything the old ones held.
        for backing, _ in self._added_parts:
            self.scope.release(backing)
        self.scope.release(self._base)
        self._base, self._added_parts = self.scope.adopt(rebuilt.hand_over(base)), []
        self.edge_rows = rows
        self._replace_answer(run.state, rebuilt.hand_over(answer))
        self._may_cycle = improving > 0
        return self._batch_done(
            changes, count, name=name, started=started, iterations=run.iterations, inserted=inserted,
            deleted=deleted, recomputed=True, scope=changes_scope,
        )

    # -- lifetime: close() (Owner) releases self.scope ------------------------------------

    def __repr__(self) -> str:
        return f"SparkFixpoint({self.name!r}, {self.describe()}, batches={self.batches})"
