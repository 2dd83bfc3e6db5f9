"""Motif tracking: which bindings of a pattern appear and disappear as edges change.

:func:`track` keeps a motif (:mod:`faq.graphs.pattern` patterns: directed and
undirected edges, negations, distinct vertices) over a changing graph.  Each
batch of edge inserts and deletes (:meth:`MotifTracker.apply`) returns a
:class:`~faq.incremental.change.Change`: the bindings that appeared (``diff``
+1) and disappeared (−1), and the running count.

How it runs
-----------
The graph is the simple digraph of the edges (self-loops ignored, an insert
of a present edge or a delete of a missing one changes nothing); within a
batch the last operation on an edge wins.  A binding's indicator is a
product over the pattern's edge terms: ``E(u, v)`` for a positive term,
``1 − E(u, v)`` for a negated one (``E`` the simple digraph, or its symmetric
closure for an undirected term), times "u ≠ v" for distinct vertices.  The
exactly-once delta rules of :mod:`faq.incremental.rules` hold for any such
product, per binding: for each term whose relation changed, a rule seeds the
generic join with ``ΔE`` (``−ΔE`` for a negated term) and binds the other
vertices through the positive terms, terms before it reading the new graph
and after it the old one; negations and distinctness are validate-only
filters (:mod:`faq.incremental.engine`).  Summing the rules per binding
gives +1, −1 or 0: each instance that changed is reported once, however
many of its edges the batch touched.  The graph (and its symmetric closure,
when the pattern has an undirected edge) are resident indexes on the driver
(:mod:`faq.incremental.index`): a batch costs its edges times the degrees
they reach, and runs no Spark job.  Counting the pattern at the start is a
Spark job (:func:`~faq.graphs.motifs.count_motifs`), except over no edges.

With ``path=`` the state is durable as for maintained queries
(:mod:`faq.incremental.store`); :meth:`MotifTracker.open` reopens it.

Examples
--------
>>> from faq import track
>>> from faq.spark import get_session
>>> spark = get_session()
>>> graph = spark.createDataFrame([(1, 2), (2, 3)], ["src", "dst"])
>>> tracker = track(graph, "(a)->(b); (b)->(c); !(a)->(c)")   # induced 2-paths
>>> tracker.count
1
>>> change = tracker.apply([(1, 3, 1), (3, 4, 1)])             # (src, dst, diff) rows
>>> sorted(change.rows())   # 1->2->3 closed; 1->3->4 and 2->3->4 new
[(1, 2, 3, 1, -1), (1, 3, 4, 1, 1), (2, 3, 4, 1, 1)]
>>> change.delta, change.count, tracker.version
(1, 2, 1)
>>> tracker.close()
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

import numpy as np

from faq.graphs.motifs import count_motifs
from faq.graphs.pattern import Pattern, parse_pattern
from faq.incremental.change import BatchEvent, Change
from faq.incremental.durable import Maintained
from faq.incremental.engine import RuleRun, run_rules
from faq.incremental.index import KeyedRows, ResidentRelation, merge_rows
from faq.incremental.rows import last_operations
from faq.incremental.multiplicity import check_multiplicity
from faq.incremental.rules import DeltaQuery, Term, plan_rules, views_needed
from faq.incremental.state import ResidentState, to_arrow
from faq.incremental.store import Store, restoring
from faq.scope import Owner
from faq.semirings import INTEGER
from faq.results import Explanation, count_frame
from faq.spark_ui import described

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SRC, DST, DIFF, SEQ = "src", "dst", "diff", "seq"
EDGE, SYM = "edge", "sym"
COUNT = "__count"

MotifChange = Change  # what MotifTracker.apply returns (the one change type)


def _python(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _edge_changes(changes: Any) -> Any:
    """A batch given as deltas by relation (``{"edge": rows}``, as a stream gives them): its edge rows,
    with ``diff`` +1 where the rows lack it; anything else as it is."""
    if not isinstance(changes, Mapping):
        return changes
    from faq.errors import InvalidDeltaError

    unknown = [name for name in changes if name != EDGE]
    if unknown:
        raise InvalidDeltaError(unknown[0], f"a tracked motif changes only {EDGE!r}, not {unknown[0]!r}",
                                known=[EDGE])
    rows = changes.get(EDGE)
    if rows is None:
        return []
    if hasattr(rows, "column_names"):  # a 'value' column where 'diff' is meant is refused, not taken as inserts
        check_multiplicity(rows.column_names, DIFF, factor=EDGE, target="a tracked motif", data=(SRC, DST, SEQ))
    if hasattr(rows, "column_names") and DIFF not in rows.column_names:  # an Arrow table of inserts
        import pyarrow as pa

        rows = rows.append_column(DIFF, pa.array(np.ones(rows.num_rows, dtype=np.int64)))
    return rows


class MotifTracker(Maintained, Owner):
    """A pattern, the current simple digraph, and the current number of bindings.

    Parameters
    ----------
    edges : Factor, DataFrame with src/dst columns, or edge-list path
        The initial graph.
    pattern : str or Pattern
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` per batch.
    path : str, optional
        Keep the state durable in this directory (see the module notes).

    A tracker is a stream target (:meth:`stream`): rows ``src``, ``dst`` and
    optionally ``diff`` (+1 insert, -1 delete; +1 when absent) and ``seq``.
    """

    KIND, WHAT = "motif", "a tracked motif"

    def __init__(self, edges, pattern: Union[str, Pattern], *, progress: Optional[Callable[[BatchEvent], None]] = None,
                 path: Optional[str] = None, _restored: Optional[tuple[ResidentState, dict]] = None) -> None:
        self.pattern = parse_pattern(pattern)
        self.progress = progress
        self.undirected = any(not e.directed for e in self.pattern.edges)
        self.last_rules: list[RuleRun] = []
        terms = tuple(Term(EDGE if e.directed else SYM, (e.src, e.dst), e.negated) for e in self.pattern.edges)
        columns = {EDGE: (SRC, DST), SYM: (SRC, DST)}
        self.delta_query = DeltaQuery(terms, self.pattern.vertices, self.pattern.distinct_pairs, columns)
        self.rules = plan_rules(self.delta_query)
        if _restored is not None:
            self.state, meta = _restored
            self.count = int(meta["count"])
        else:
            from faq.graphs.edges import edge_factor, simple_directed

            if path is not None:
                Store(path).check_new()  # a path that cannot hold the state is refused before any work

            graph = simple_directed(edge_factor(edges))
            s, d = graph.variables
            held = graph.relation.arrays  # edges the driver holds: no Spark
            if held is not None:
                import pyarrow as pa

                table = pa.table({SRC: held[s], DST: held[d]})
            else:
                from pyspark.sql import functions as F

                table = graph.df.select(F.col(s).cast("bigint").alias(SRC),
                                        F.col(d).cast("bigint").alias(DST)).toArrow()
            self.state = ResidentState(INTEGER)
            edge = self.state.add(EDGE, (SRC, DST), table, None)
            if self.undirected:
                self._add_symmetric(edge)
            # no edges, no binding: nothing to count (and no Spark session to start for it)
            self.count = count_motifs(graph, self.pattern).count if table.num_rows else 0
        for name, views in views_needed(self.rules).items():
            for view in views:
                self.state.relations[name].register(view)
        if path is not None and _restored is None:
            self.state.attach(path, self._manifest())

    @property
    def df(self) -> "DataFrame":
        """The current count as a one-row DataFrame (column ``count``)."""
        return count_frame("count", self.count)

    @property
    def plan(self) -> Explanation:
        """What :meth:`explain` returns."""
        return self.explain()

    def explain(self) -> Explanation:
        """The pattern, the edges held, the delta rules a batch runs, where the state is."""
        edges = self.state.relations[EDGE].base_rows + self.state.relations[EDGE].overlay_rows
        closure = " and its symmetric closure" if self.undirected else ""
        return Explanation(f"tracked motif {self.pattern}: {self.count:,} binding(s), version {self.version}", (
            f"edges: about {edges:,} rows of the simple digraph{closure} held on the driver; no Spark job a batch",
            *(f"delta rule: {rule.describe(self.delta_query)}" for rule in self.rules),
            "state: " + ("in memory only" if self.path is None else f"saved in {self.path}")))

    def __repr__(self) -> str:
        return f"MotifTracker(pattern={str(self.pattern)!r}, count={self.count}, version={self.version})"

    def _add_symmetric(self, edge: ResidentRelation) -> None:
        rows = edge.current()
        keys = [np.concatenate([rows.keys[0], rows.keys[1]]), np.concatenate([rows.keys[1], rows.keys[0]])]
        both = merge_rows(keys, np.ones(len(keys[0]), dtype=np.int64), self.state.ops)
        ones = KeyedRows(both.keys, None)  # a pair listed both ways merges to 2: the closure is 0/1
        self.state.relations[SYM] = ResidentRelation(SYM, (SRC, DST), ones, self.state.ops)
        self.state.key_types[SYM] = dict(self.state.key_types[EDGE])

    @property
    def delta_names(self) -> list[str]:
        """What a batch changes: the one relation ``edge``."""
        return [EDGE]

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns a batch of edge changes is read from, those it must have).

        ``diff`` is +1 (insert) or -1 (delete), +1 when a stream's rows lack it;
        ``seq`` orders operations on one edge.
        """
        return [SRC, DST, DIFF, SEQ], [SRC, DST]

    # -- one batch ------------------------------------------------------------------

    @described("tracked motif")
    def apply(self, changes: Any, *, version: Optional[int] = None, label: Optional[str] = None,
              before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """Apply a batch of edge changes: ``src``, ``dst``, ``diff`` (+1 insert, −1 delete).

        ``changes`` is a Spark DataFrame, pandas, an Arrow table or tuples
        ``(src, dst, diff[, seq])``.  An optional ``seq`` column orders
        operations on one edge (the last wins); without it, an edge both
        inserted and deleted in one batch is refused as ambiguous.  A batch
        whose ids are not integers (strings, NaN, fractions, beyond int64),
        with a null, or a ``diff`` other than ±1 is refused before anything
        changes (:class:`~faq.errors.InvalidBatchError`, :mod:`faq.incremental.batch_check`).
        ``version``, ``label`` and ``before_commit`` as for
        :meth:`~faq.incremental.maintained.MaintainedQuery.apply`.
        """
        started = time.perf_counter()
        target = self._next_version(version)
        edge_batch = self._effective(_edge_changes(changes))
        batches = {EDGE: edge_batch}
        if self.undirected:
            batches[SYM] = self._symmetric_batch(edge_batch)
        stats: list[RuleRun] = []
        keys, values = run_rules(self.rules, self.state.relations, batches, self.state.ops, len(self.state.domain),
                                 stats)
        self.last_rules = stats
        delta = int(values.sum()) if len(values) else 0
        decoded = tuple(self.state.domain.decode(k) for k in keys)
        info = {"delta": delta, "edges_changed": len(edge_batch), "rules": len(stats),
                "bindings": sum(s.bindings for s in stats)}
        change = Change(self.pattern.vertices, decoded, values.astype(np.int64), target,
                        time.perf_counter() - started, count=self.count + delta, info=info,
                        types={v: "bigint" for v in self.pattern.vertices} | {DIFF: "bigint"})

        def merge() -> None:
            for name, batch in batches.items():
                self.state.relations[name].commit(batch)
            self.count += delta

        self._commit(target, label, change=change, before_commit=before_commit, merge=merge,
                     save=lambda labels: self.state.save(target, self._manifest(self.count + delta), batches, labels))
        change.seconds = time.perf_counter() - started
        self._emit(BatchEvent("done", target, f"{len(edge_batch)} edge change(s) through {len(stats)} delta rule(s), "
                              f"{sum(s.bindings for s in stats)} binding(s) reached", len(values), change.seconds,
                              label or ""))
        return change

    def _effective(self, changes: Any) -> KeyedRows:
        """The batch as ±1 rows (codes) that really change the simple digraph, one per edge."""
        from faq.errors import InvalidDeltaError, MissingColumnError

        table = to_arrow(changes, (SRC, DST, DIFF), what="the edge changes", relation=EDGE, target=self.WHAT)
        if isinstance(changes, (list, tuple)) and "value" in table.column_names:  # tuples (src, dst, diff, seq)
            table = table.rename_columns([SEQ if c == "value" else c for c in table.column_names])
        check_multiplicity(table.column_names, DIFF, factor=EDGE, target="a tracked motif", data=(SRC, DST, SEQ))
        for c in (SRC, DST, DIFF):
            if c not in table.column_names:
                raise MissingColumnError(column=c, available=table.column_names, source="the edge changes")
        from faq.incremental import batch_check

        # ids integral int64, diff +1 / -1, seq numbers: before any id is encoded (a bad one is refused, not dropped)
        table = batch_check.check_batch(table, batch_check.edge_spec(), relation=EDGE, target=self.WHAT)
        src, dst, diff = (table.column(c).to_numpy() for c in (SRC, DST, DIFF))
        keep = src != dst  # a self-loop is no edge of the simple digraph
        seq = np.asarray(table.column(SEQ).to_numpy(zero_copy_only=False))[keep] if SEQ in table.column_names \
            else None
        src, dst, diff = src[keep], dst[keep], diff[keep]  # int64: checked
        ops = self.state.ops
        domain = self.state.domain
        s, d = domain.encode(src), domain.encode(dst)
        if len(s) == 0:
            return KeyedRows((s, d), np.zeros(0, dtype=np.int64))
        # the last operation on an edge wins (by seq), or every operation on it must agree
        s, d, diff, clash = last_operations(s, d, diff, seq)
        if clash is not None:
            edge = tuple(_python(domain.decode(np.array([code]))[0]) for code in clash)
            raise InvalidDeltaError(EDGE, f"edge {edge[0]} -> {edge[1]} is both inserted and deleted; "
                                          "add a seq column to order the operations", edge=edge)
        present, _ = self.state.relations[EDGE].lookup((s, d))
        after = (diff > 0).astype(np.int64)
        change = after - present.astype(np.int64)
        live = np.flatnonzero(change != 0)
        return merge_rows([s[live], d[live]], change[live], ops)

    def _symmetric_batch(self, edge_batch: KeyedRows) -> KeyedRows:
        """Δ of the symmetric closure for the pairs the edge batch touched."""
        ops = self.state.ops
        s, d = edge_batch.keys
        a = np.concatenate([s, d])
        b = np.concatenate([d, s])
        pairs = merge_rows([a, b], None, ops)
        a, b = pairs.keys
        edge = self.state.relations[EDGE]
        old = edge.lookup((a, b))[0] | edge.lookup((b, a))[0]
        new = edge.lookup((a, b), edge_batch)[0] | edge.lookup((b, a), edge_batch)[0]
        change = new.astype(np.int64) - old.astype(np.int64)
        live = np.flatnonzero(change != 0)
        return KeyedRows((a[live], b[live]), change[live])

    # -- saving -------------------------------------------------------------------

    def _manifest(self, count: Optional[int] = None) -> dict[str, Any]:
        return {"kind": self.KIND, "pattern": str(self.pattern), "count": self.count if count is None else count}

    @classmethod
    def open(cls, path: str, *, progress: Optional[Callable[[BatchEvent], None]] = None) -> "MotifTracker":
        """Reopen a tracker saved with ``state=`` at its last committed version (no Spark needed)."""
        cls._saved_manifest(path)
        with restoring(path):
            state, meta = ResidentState.load(path, INTEGER)
            return cls(None, meta["pattern"], progress=progress, _restored=(state, meta))

    # -- releasing ------------------------------------------------------------------

    def close(self) -> None:
        """Drop the resident indexes (they live on the driver: nothing on Spark to free; a saved state stays on disk)."""
        self.state.settle(report=False)
        self._release_store()
        self.state.relations = {}
