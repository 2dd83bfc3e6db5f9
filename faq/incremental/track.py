"""Motif tracking: which bindings of a pattern appear and disappear as edges change.

:func:`track` keeps a motif (:mod:`faq.graphs.motifs` patterns: directed and
undirected edges, negations, distinct vertices) over a changing graph.  Each
batch of edge inserts and deletes (:meth:`MotifTracker.apply`) returns the
bindings that appeared (``diff`` +1) and disappeared (−1), and the running
count.

How it runs
-----------
The graph is the simple digraph of the edges (self-loops ignored, an insert
of a present edge or a delete of a missing one changes nothing); within a
batch the last operation on an edge wins.  A binding's indicator is a
product over the pattern's edge terms: ``E(u, v)`` for a positive term,
``1 − E(u, v)`` for a negated one (``E`` the simple digraph, or its symmetric
closure for an undirected term).  The exactly-once delta rules of
:mod:`faq.incremental.rules` hold for any product, per binding: for each term
``i`` whose relation changed, a rule seeds the join with ``ΔE`` (``−ΔE`` for a
negated term), binds the other vertices through the positive terms
(:func:`~faq.joins.seeded.seeded_join`, the worst-case optimal join), terms
before ``i`` reading the new graph and after ``i`` the old one, multiplies by
the negated terms (anti-joins) and filters distinctness.  Summing the rules
per binding gives +1, −1 or 0: each instance that changed is reported once,
however many of its edges the batch touched.

Examples
--------
>>> from faq.incremental.track import track
>>> from faq.spark import get_session
>>> spark = get_session()
>>> graph = spark.createDataFrame([(1, 2), (2, 3)], ["src", "dst"])
>>> tracker = track(graph, "(a)->(b); (b)->(c); !(a)->(c)")   # induced 2-paths
>>> tracker.count
1
>>> change = tracker.apply(spark.createDataFrame([(1, 3, 1), (3, 4, 1)], ["src", "dst", "diff"]))
>>> sorted(map(tuple, change.bindings.collect()))   # 1->2->3 closed; 1->3->4 and 2->3->4 new
[(1, 2, 3, 1, -1), (1, 3, 4, 1, 1), (2, 3, 4, 1, 1)]
>>> change.delta, change.count, tracker.version
(1, 2, 1)
>>> tracker.close()
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from faq.factor import Factor
from faq.graphs.motifs import Pattern, count_motifs, parse_pattern
from faq.incremental.rules import atom_frame
from faq.incremental.state import RelationState, release
from faq.joins.frame import VALUE_COLUMN, Frame
from faq.semirings import INTEGER

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SRC, DST, DIFF, VERSION = "src", "dst", "diff", "version"
EDGE, SYM = "edge", "sym"


@dataclass
class MotifChange:
    """What one batch did: the bindings that changed, and the counts.

    ``bindings`` has one column per pattern vertex, ``version`` and ``diff``
    (+1 appeared, −1 disappeared); it is cached until the tracker's next
    batch.
    """

    bindings: "DataFrame"
    delta: int
    count: int
    version: int
    seconds: float
    edges_changed: int
    rules: int

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "delta": self.delta, "count": self.count,
                "seconds": round(self.seconds, 3), "edges_changed": self.edges_changed, "rules": self.rules}


def track(edges: Union[Factor, "DataFrame", str, os.PathLike], pattern: Union[str, Pattern], *,
          progress: Optional[Callable[[str], None]] = None) -> "MotifTracker":
    """Count ``pattern`` in the graph and keep following it (see :class:`MotifTracker`)."""
    return MotifTracker(edges, pattern, progress=progress)


class MotifTracker:
    """A pattern, the current simple digraph, and the current number of bindings.

    Parameters
    ----------
    edges : Factor, DataFrame with src/dst columns, or edge-list path
        The initial graph.
    pattern : str or Pattern
    progress : callable, optional
        Receives one line of text per delta rule.
    """

    def __init__(self, edges, pattern: Union[str, Pattern], *, progress: Optional[Callable[[str], None]] = None):
        from pyspark.sql import functions as F

        from faq.graphs.motifs import _edge_factor
        from faq.graphs.triangles import simple_directed

        self.pattern = parse_pattern(pattern)
        self.progress = progress
        graph = simple_directed(_edge_factor(edges, None))
        self.edge = RelationState.of(
            graph.df.select(F.col(graph.variables[0]).alias(SRC), F.col(graph.variables[1]).alias(DST),
                            F.lit(1).cast("bigint").alias("value")), (SRC, DST), "value", INTEGER)
        self.undirected = any(not e.directed for e in self.pattern.edges)
        self.sym = RelationState.of(_symmetric(self.edge.base), (SRC, DST), VALUE_COLUMN, INTEGER) \
            if self.undirected else None
        current = Factor(df=self.edge.base, variables=(SRC, DST), semiring=_counting(), value=VALUE_COLUMN,
                         name=EDGE)
        self.count = count_motifs(current, self.pattern).count
        self.version = 0
        self._change: Optional["DataFrame"] = None

    # -- one batch ------------------------------------------------------------------

    def apply(self, changes: "DataFrame") -> MotifChange:
        """Apply a batch of edge changes: ``src``, ``dst``, ``diff`` (+1 insert, −1 delete).

        An optional ``seq`` column orders operations on one edge (the last
        wins); without it, an edge both inserted and deleted in one batch is
        refused as ambiguous.
        """
        from pyspark.sql import functions as F

        from faq.spark import checkpoint, release as release_frame

        started = time.perf_counter()
        target = self.version + 1
        scratch: list = []
        made: list[RelationState] = []
        inputs: list = []
        try:
            delta = checkpoint(self._effective(changes))
            inputs.append(delta)  # becomes part of the new states' logs (released with them)
            n_changed = delta.count()
            new_edge = self.edge.with_delta(delta, n_changed)
            made.append(new_edge)
            deltas = {EDGE: delta if n_changed else None}
            new_sym = self.sym
            if self.sym is not None and n_changed:
                sym_delta = checkpoint(self._sym_delta(delta, new_edge))
                inputs.append(sym_delta)
                new_sym = self.sym.with_delta(sym_delta)
                made.append(new_sym)
                deltas[SYM] = sym_delta if new_sym is not self.sym else None
            old = {EDGE: self.edge, SYM: self.sym}
            new = {EDGE: new_edge, SYM: new_sym}
            parts = self._rules(deltas, old, new, scratch)
            columns = list(self.pattern.vertices)
            if parts:
                union = reduce(lambda a, b: a.unionByName(b), parts)
                summed = union.groupBy(*columns).agg(F.sum(VALUE_COLUMN).alias(DIFF)).where(F.col(DIFF) != 0)
            else:
                spark = self.edge.base.sparkSession
                summed = spark.createDataFrame([], ", ".join(f"{c} bigint" for c in columns) + f", {DIFF} bigint")
            bindings = checkpoint(summed.select(*columns, F.lit(target).alias(VERSION), DIFF))
            row = bindings.agg(F.sum(DIFF).alias("d")).first()
            delta_count = int(row["d"] or 0)
        except BaseException:
            release(made, [self.edge] + ([self.sym] if self.sym else []))
            for df in scratch + inputs:
                release_frame(df)
            raise
        kept = [new_edge] + ([new_sym] if new_sym else [])
        release([self.edge] + ([self.sym] if self.sym else []), kept)
        owned = [f for state in kept for f in state.frames()]
        for df in scratch + [d for d in inputs if not any(d is f for f in owned)]:
            release_frame(df)
        if self._change is not None:
            release_frame(self._change)
        self._change = bindings
        self.edge, self.sym, self.version = new_edge, new_sym, target
        self.count += delta_count
        return MotifChange(bindings, delta_count, self.count, target, time.perf_counter() - started, n_changed,
                           len(parts))

    def _effective(self, changes: "DataFrame") -> "DataFrame":
        """The batch as ±1 rows that really change the simple digraph (one per edge)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        from faq.errors import MissingColumnError
        from faq.incremental.errors import InvalidDeltaError

        for c in (SRC, DST, DIFF):
            if c not in changes.columns:
                raise MissingColumnError(column=c, available=changes.columns, source="the edge changes")
        rows = changes.where((F.col(SRC) != F.col(DST)) & F.col(DIFF).isin(1, -1))
        rows = rows.select(F.col(SRC).cast("bigint").alias(SRC), F.col(DST).cast("bigint").alias(DST),
                           F.col(DIFF).cast("bigint").alias(DIFF),
                           *([F.col("seq")] if "seq" in changes.columns else []))
        if "seq" in changes.columns:
            last = Window.partitionBy(SRC, DST).orderBy(F.col("seq").desc())
            wanted = rows.withColumn("__rank", F.row_number().over(last)).where(F.col("__rank") == 1)
        else:
            wanted = rows.groupBy(SRC, DST).agg(F.max(DIFF).alias(DIFF), F.min(DIFF).alias("__low"))
            clash = wanted.where(F.col(DIFF) != F.col("__low")).select(SRC, DST).first()
            if clash is not None:
                raise InvalidDeltaError(EDGE, f"edge {clash[0]} -> {clash[1]} is both inserted and deleted; "
                                              "add a seq column to order the operations", edge=tuple(clash))
        present = self.edge.lookup(wanted.select(SRC, DST)).select(SRC, DST, F.lit(1).alias("__present"))
        joined = wanted.join(present, [SRC, DST], "left")
        now = F.coalesce(F.col("__present"), F.lit(0))
        after = F.when(F.col(DIFF) > 0, 1).otherwise(0)
        return joined.where(after != now).select(SRC, DST, (after - now).cast("bigint").alias(VALUE_COLUMN))

    def _sym_delta(self, delta: "DataFrame", new_edge: RelationState) -> "DataFrame":
        """Δ of the symmetric closure for the pairs the edge delta touched."""
        from pyspark.sql import functions as F

        pairs = delta.select(SRC, DST).unionByName(delta.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
        pairs = pairs.distinct()
        both = pairs.unionByName(pairs.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))

        def present(state: RelationState, name: str) -> "DataFrame":
            hit = state.lookup(both).where(F.col(VALUE_COLUMN) > 0)
            either = hit.select(SRC, DST).unionByName(hit.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
            return either.distinct().withColumn(name, F.lit(1))

        joined = pairs.join(present(self.edge, "__old"), [SRC, DST], "left").join(
            present(new_edge, "__new"), [SRC, DST], "left")
        d = F.coalesce(F.col("__new"), F.lit(0)) - F.coalesce(F.col("__old"), F.lit(0))
        return joined.where(d != 0).select(SRC, DST, d.cast("bigint").alias(VALUE_COLUMN)).coalesce(1)

    def _rules(self, deltas, old, new, scratch: list) -> list["DataFrame"]:
        """One DataFrame of (vertices, ±value) per delta rule (see the module notes)."""
        from pyspark.sql import functions as F

        from faq.joins.seeded import seeded_join
        from faq.spark import checkpoint

        terms = list(self.pattern.edges)
        parts = []
        for i, term in enumerate(terms):
            rel = EDGE if term.directed else SYM
            seed_rows = deltas.get(rel)
            if seed_rows is None:
                continue
            started = time.perf_counter()

            def state_of(j: int):
                states = new if j < i else old
                return states[EDGE if terms[j].directed else SYM]

            seed = atom_frame(seed_rows, (SRC, DST), (term.src, term.dst))
            if term.negated:  # Δ(1 − E) = −ΔE
                seed = Frame(seed.df.select(*seed.variables, (-F.col(VALUE_COLUMN)).alias(VALUE_COLUMN)),
                             seed.variables)
            positives = [atom_frame(state_of(j).rows(), (SRC, DST), (t.src, t.dst))
                         for j, t in enumerate(terms) if j != i and not t.negated]
            joined = seeded_join(seed, positives, INTEGER, keep=scratch).df
            for u, v in self.pattern.distinct_pairs:
                joined = joined.where(F.col(u) != F.col(v))
            if any(t.negated for j, t in enumerate(terms) if j != i):
                joined = checkpoint(joined, eager=False)  # read twice per negation: cut the plan
                scratch.append(joined)
            for j, t in enumerate(terms):
                if j != i and t.negated:
                    present = state_of(j).lookup(
                        joined.select(F.col(t.src).alias(SRC), F.col(t.dst).alias(DST))
                    ).where(F.col(VALUE_COLUMN) > 0)
                    joined = joined.join(present.select(F.col(SRC).alias(t.src), F.col(DST).alias(t.dst)),
                                         [t.src, t.dst], "left_anti")
            parts.append(joined.select(*self.pattern.vertices, VALUE_COLUMN))
            if self.progress:
                self.progress(f"delta rule for term {i + 1} ({term}) planned in {time.perf_counter() - started:.2f} s")
        return parts

    # -- releasing ------------------------------------------------------------------

    def close(self) -> None:
        """Release every cache the tracker holds."""
        from faq.spark import release as release_frame

        release([self.edge] + ([self.sym] if self.sym else []), [])
        if self._change is not None:
            release_frame(self._change)
            self._change = None

    def __enter__(self) -> "MotifTracker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _symmetric(df: "DataFrame") -> "DataFrame":
    from pyspark.sql import functions as F

    both = df.select(SRC, DST).unionByName(df.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
    return both.distinct().withColumn(VALUE_COLUMN, F.lit(1).cast("bigint"))


def _counting():
    from faq.semirings import get_semiring

    return get_semiring("counting")
