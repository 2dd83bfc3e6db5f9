"""A truss kept current: every edge's trussness under batches of edge insertions and deletions.

``faq.truss(edges, maintained=True)`` returns a :class:`MaintainedTruss`.
Each :meth:`~MaintainedTruss.apply` of edge changes answers with a
:class:`~faq.incremental.change.Change` whose rows are a change stream of
``(src, dst, trussness)`` rows: an edge whose trussness went from 3 to 4 is
the row with 3 retracted (``diff`` −1) and the row with 4 added (+1); an
edge deleted retracts its row, an edge inserted adds one.

How a batch runs
----------------
The graph is the simple undirected graph of the edges, as for
:func:`~faq.graphs.truss.truss_decomposition`: ``(1, 2)`` and ``(2, 1)`` are one edge,
self-loops are ignored, inserting a present edge or deleting an absent one
changes nothing, and within a batch the last operation on an edge wins (by
its ``seq`` column; without one, an edge both inserted and deleted in one
batch is refused as ambiguous).  The effective changes then go to the
:class:`~faq.graphs.truss_index.TrussIndex` on the driver (no Spark job):

1. the deletions at once, then settling from the partners of their triangles;
2. the insertions one at a time: the new edge's bound, the edges that may
   rise with it (a search over triangles, pruned by support), raised by one,
   then settling (why this is exact: :mod:`faq.graphs.truss_repair`).

The work of a batch is bounded.  Work is counted as the neighbour-list
entries read to find triangles (a binary search's steps counted), which is
also what a decomposition from scratch does
(:func:`~faq.graphs.truss_index.decomposition_work` estimates it).  A batch
whose work reaches :attr:`MaintainedTruss.work_limit` (default a quarter of
a decomposition's reads: the repair's reads are scattered, so that is about
a decomposition's time), or whose repair has taken
:attr:`MaintainedTruss.time_limit` (the last decomposition's seconds), is
taken back and the trussness is recomputed from scratch on the new edges
instead, with the same change reported (``info["recomputed"]``), so a
batch costs at most about two decompositions.  Before any of that, a batch whose repair is
guessed from its pairs' degrees to cost more than a decomposition
(:func:`~faq.graphs.truss_index.repair_estimate` above :data:`ESTIMATE_FRACTION` of a
decomposition's work) is recomputed without trying (``info["estimate"]``; not with an explicit
``work_limit``, which alone decides then).  After a batch fell back,
batches at least as large go straight to recomputing (one decomposition),
and every eighth tries the repair again (``info["repair_tried"]``).
Batches that are a large part of a small graph, and insertions that close
many triangles among hubs (a social or e-mail graph's edges coming back),
can need this fallback.  ``explain()`` says what the last batch did.

After a recomputed batch the state is the decomposition's edges and levels as plain arrays in pair
order (:class:`~faq.graphs.truss_index.DecomposedEdges`): a batch recomputed reads only those, and
merges its insertions into them without a sort, so the neighbour lists a repair needs are built only
when a later batch tries one (a new or reopened truss builds them at once).  Building them for every
recomputed batch made such a batch cost 1.25-2x a decomposition from scratch
(``bench/bench_truss_maintained.py`` under churn: ca-GrQc 27 ms against 13 ms, wiki-Vote 0.33 s
against 0.27 s).  It still costs more than one: 0.5-0.9x its time, the rest being the batch's own
reading, node codes and change rows (a few ms on ca-GrQc, 30-50 ms on Email-Enron).

Known limit: an insertion raises and settles every edge its search cannot
rule out; the order-based maintenance of Zhang and Yu (SIGMOD 2019) keeps
a peeling order to rule out far more, and is not built.  The benchmark
``bench/bench_truss_maintained.py`` measures where that matters.

Then the commit, as for every maintained object
(:class:`~faq.incremental.durable.Maintained`): ``before_commit`` (a
stream's sink), the durable save (with ``path=``: the batch's effective
edge changes as a delta file of the ``edge`` relation; reopening reads the
edges and decomposes them again), the version and its label.  An error
before the save takes the batch back.

Examples
--------
>>> from faq.graphs.maintained_truss import MaintainedTruss
>>> t = MaintainedTruss([(1, 2), (2, 3), (1, 3), (3, 4)])      # a triangle and a tail
>>> t.counts
{2: 1, 3: 3}
>>> change = t.apply([(1, 4, 1), (2, 4, 1)])                     # (src, dst, diff): now a 4-clique
>>> t.counts, t.version
({4: 6}, 1)
>>> sorted(r for r in change.rows() if r[0] == 3)               # (src, dst, trussness, version, diff)
[(3, 4, 2, 1, -1), (3, 4, 4, 1, 1)]
>>> t.apply([(2, 4, -1)]).info["deleted"], t.counts
(1, {3: 5})
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import numpy as np

from faq.incremental.change import BatchEvent, Change
from faq.incremental.durable import Maintained, Versions
from faq.scope import Owner, Scope
from faq.results import Explanation
from faq.spark_ui import described

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from faq.graphs.truss import TrussResult

__all__ = ["MaintainedTruss", "effective_pairs"]

SRC, DST, DIFF, SEQ, TRUSSNESS = "src", "dst", "diff", "seq", "trussness"
EDGE = "edge"
# A batch may do this fraction of a decomposition's estimated reads before it is recomputed instead: the
# repair's reads are scattered (about 4x the time of a decomposition's, measured on Email-Enron), so a
# quarter is about a decomposition's time.
WORK_FRACTION = 0.25
MIN_WORK = 100_000
# ... and, unless a work limit is given, this fraction of the last decomposition's seconds (the work
# estimate is rough where hubs make lookups slow; the clock is not).
TIME_FRACTION = 1.0
MIN_SECONDS = 0.02  # below this, timer noise (a first call loading compiled code) would decide
# After a batch fell back, batches at least as large are recomputed at once; every this many the repair
# is tried again.
RETRY_EVERY = 8
# A batch whose repair estimate (faq.graphs.truss_index.repair_estimate) passes this fraction of a
# decomposition's work is recomputed without trying the repair.  On the SNAP graphs of
# bench/bench_truss_maintained.py (1,000-edge batches, the repair let run to the end) the batches whose
# repair read more than a quarter of a decomposition's work estimated 0.028-0.25 of it; those whose
# repair paid (p2p-Gnutella31, Email-Enron's uniform insertions) 0.003-0.020.
ESTIMATE_FRACTION = 0.025
MIN_ESTIMATE = 10_000  # below this a repair costs well under a millisecond: tried whatever the graph's size


def effective_pairs(src: np.ndarray, dst: np.ndarray, diff: np.ndarray,
                    seq: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The last operation on each undirected pair: ``(low, high, diff)``, one row a pair, sorted by pair.

    Self-loops are dropped.  With ``seq`` the operation of the largest
    ``seq`` wins; without it, a pair both inserted and deleted is refused.

    >>> [a.tolist() for a in effective_pairs(np.array([2, 1, 3]), np.array([1, 2, 3]), np.array([1, 1, 1]), None)]
    [[1], [2], [1]]
    >>> effective_pairs(np.array([1, 2]), np.array([2, 1]), np.array([1, -1]), None)
    Traceback (most recent call last):
    ...
    faq.errors.InvalidDeltaError: [INVALID_DELTA] ...
    """
    from faq.errors import InvalidDeltaError
    from faq.incremental.rows import last_operations

    keep = src != dst
    low, high, diff, clash = last_operations(np.minimum(src, dst)[keep], np.maximum(src, dst)[keep], diff[keep],
                                             None if seq is None else seq[keep])
    if clash is not None:
        raise InvalidDeltaError(EDGE, f"edge {clash[0]} - {clash[1]} is both inserted and deleted; add a seq "
                                      "column to order the operations", edge=clash)
    return low, high, diff


class MaintainedTruss(Maintained, Owner):
    """Every edge's trussness, kept exact under batches of edge changes (see the module notes).

    Parameters
    ----------
    edges : path, Spark or pandas DataFrame (``src``, ``dst``), Arrow table, Factor or tuples
        The initial graph (read as :func:`faq.graphs.truss.truss_decomposition` reads it).
    k : int, optional
        The k :meth:`table` keeps by default.
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` per batch.
    path : str, optional
        Keep the state durable in this new or empty directory; :meth:`open` reopens it.
    work_limit : int, optional
        The work (list entries read) after which a batch stops and is
        recomputed instead (default a quarter of a decomposition's reads, at
        least 100,000; 0: every batch with an insertion is recomputed).

    A maintained truss is a stream target (:meth:`stream`): rows ``src``,
    ``dst`` and optionally ``diff`` (+1 insert, −1 delete; +1 when absent) and ``seq``.
    """

    KIND, WHAT = "truss", "a maintained truss"

    def __init__(self, edges: Any, k: Optional[int] = None, *,
                 progress: Optional[Callable[[BatchEvent], None]] = None, path: Optional[str] = None,
                 work_limit: Optional[int] = None, _restored: Optional[tuple[Any, dict]] = None) -> None:
        from faq.errors import InvalidArgumentError
        from faq.graphs.truss import truss_decomposition

        if k is not None and (not isinstance(k, (int, np.integer)) or k < 2):
            raise InvalidArgumentError(argument="k", value=k, reason="a truss has k >= 2")
        if work_limit is not None and (not isinstance(work_limit, (int, np.integer)) or work_limit < 0):
            raise InvalidArgumentError(argument="work_limit", value=work_limit, reason="must be a count >= 0")
        self.k = None if k is None else int(k)
        self.progress = progress
        self._work_limit = work_limit
        self._fell_back_at: Optional[int] = None  # the smallest batch (changes) the repair fell back on
        self._skipped = 0  # batches recomputed at once since the repair was last tried
        self.record = Versions()
        self.scope = Scope()  # nothing on Spark to hold; ``with`` and close() as on every result
        self.last: dict[str, Any] = {}
        if _restored is None and path is not None:
            from faq.incremental.store import Store

            Store(path).check_new()  # a path that cannot hold the state is refused before any work
        started = time.perf_counter()
        result = truss_decomposition(edges)
        self.decomposition_seconds = result.seconds["supports"] + result.seconds["peel"]
        self._hold(result)
        self.initial_seconds = time.perf_counter() - started
        if _restored is not None:
            store, meta = _restored
            self.record.store, self.record.version = store, int(meta["version"])
            self.record.labels = list(meta.get("labels", []))
        elif path is not None:
            self._attach(path)

    def _hold(self, result: "TrussResult") -> None:
        """Hold the decomposition ``result`` (node codes from a fresh domain) with the repair's lists built
        now, as a repaired batch reads them: built in the first batch instead, they made it ten times the
        next ones (p2p-Gnutella31: 83-110 ms against 9 ms)."""
        from faq.graphs.truss_index import DecomposedEdges
        from faq.incremental.domain import KeyDomain

        nodes = np.unique(np.concatenate([result.src, result.dst]))
        self.domain = KeyDomain(nodes)
        u, v = np.searchsorted(nodes, result.src), np.searchsorted(nodes, result.dst)
        self.index = DecomposedEdges(u, v, result.trussness - 2, len(nodes)).indexed()

    def _versions(self) -> Versions:
        return self.record

    # -- reading ----------------------------------------------------------------------

    @property
    def work_limit(self) -> int:
        """The work (list entries read) a batch's repair may do before it is recomputed instead (module notes)."""
        if self._work_limit is not None:
            return int(self._work_limit)
        return max(MIN_WORK, int(WORK_FRACTION * self.index.recompute_work))

    @property
    def time_limit(self) -> Optional[float]:
        """Seconds a batch's repair may take before it is recomputed instead: about one decomposition's
        (the last one measured); None when a ``work_limit`` was given (then the limit is the work alone)."""
        if self._work_limit is not None:
            return None
        return max(TIME_FRACTION * self.decomposition_seconds, MIN_SECONDS)

    @property
    def edges(self) -> int:
        """The number of edges now."""
        return int(self.index.live)

    def table(self, k: Optional[int] = None) -> "pa.Table":
        """``(src, dst, trussness)`` of every edge now, ``src < dst``, sorted; with ``k`` (default the one
        given) only the k-truss's edges."""
        import pyarrow as pa

        ids = self.index.live_ids()
        a, b = self.domain.decode(self.index.eu[ids]), self.domain.decode(self.index.ev[ids])
        src, dst = np.minimum(a, b), np.maximum(a, b)
        trussness = self.index.x[ids] + 2
        k = self.k if k is None else k
        keep = np.ones(len(ids), dtype=bool) if k is None else trussness >= k
        src, dst, trussness = src[keep], dst[keep], trussness[keep]
        order = np.lexsort((dst, src))
        return pa.table({SRC: src[order], DST: dst[order], TRUSSNESS: trussness[order]})

    def to_pandas(self, k: Optional[int] = None) -> Any:
        return self.table(k).to_pandas()

    @property
    def df(self) -> "DataFrame":
        """:meth:`table` as a Spark DataFrame (:func:`faq.handback.spark_frame`)."""
        from faq.handback import spark_frame
        from faq.spark import get_session

        return spark_frame(get_session(), self.table())

    @property
    def counts(self) -> dict[int, int]:
        """Edges per trussness now."""
        values, counts = np.unique(self.index.x[self.index.live_ids()] + 2, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts)}

    @property
    def max_k(self) -> int:
        """The largest trussness now (0 without edges)."""
        ids = self.index.live_ids()
        return int(self.index.x[ids].max()) + 2 if len(ids) else 0

    def explain(self) -> Explanation:
        """Where the state is, how a batch runs, and what the last batch did."""
        title = (f"maintained truss: {self.edges:,} edges on {len(self.domain):,} node(s), largest trussness "
                 f"{self.max_k}; held on the driver ({self.index.nbytes / 2**20:.1f} MiB), no Spark job a batch")
        lines = ["deletions: removed at once, then the levels of their triangles' partners settled (h-index "
                 "repair)",
                 "insertions: one at a time, the edges that may rise searched, raised and settled",
                 self._budget(),
                 "state: " + ("in memory only" if self.path is None else f"saved in {self.path}")]
        if self.last:
            how = "repaired" if not self.last.get("recomputed") else \
                "recomputed after the repair passed its budget" if self.last.get("repair_tried") else "recomputed"
            lines.append(f"last batch: {how}, {self.last['inserted']} inserted, {self.last['deleted']} deleted, "
                         f"{self.last['changed']} edge(s) changed trussness, {self.last['work']:,} reads in the "
                         f"repair, {self.last['seconds']:.3f} s")
        return Explanation(title, tuple(lines))

    def _budget(self) -> str:
        """The explain line of when a batch is recomputed instead of repaired."""
        line = (f"budget: a repair that reads {self.work_limit:,} list entries (a decomposition reads about "
                f"{self.index.recompute_work:,})")
        if self.time_limit is not None:
            line += f" or takes {self.time_limit:.3f} s (the last decomposition's time)"
        line += (" is undone and the batch recomputed; one whose repair is estimated (from its pairs' degrees) "
                 f"above {ESTIMATE_FRACTION:g} of a decomposition's reads is recomputed without trying"
                 if self._work_limit is None else " is undone and the batch recomputed")
        if self._fell_back_at is not None:
            line += (f"; batches of {self._fell_back_at:,} changes or more are recomputed at once (one fell back), "
                     f"the repair tried again every {RETRY_EVERY}")
        return line

    def __repr__(self) -> str:
        return f"MaintainedTruss(edges={self.edges}, max_k={self.max_k}, version={self.version})"

    # -- what a batch changes (the stream's view) -------------------------------------

    @property
    def delta_names(self) -> list[str]:
        """What a batch changes: the one relation ``edge``."""
        return [EDGE]

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns a batch of edge changes is read from, those it must have)."""
        return [SRC, DST, DIFF, SEQ], [SRC, DST]

    # -- one batch ----------------------------------------------------------------------

    @described("maintained truss")
    def apply(self, changes: Any, *, version: Optional[int] = None, label: Optional[str] = None,
              before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """Apply a batch of edge changes: ``src``, ``dst``, ``diff`` (+1 insert, −1 delete), optional ``seq``.

        Parameters
        ----------
        changes : Spark DataFrame, pandas, Arrow table, tuples ``(src, dst, diff[, seq])``, or ``{"edge": rows}``
            A Spark DataFrame is collected (one Spark job); the rest need no Spark.
        version : int, optional
            The version this batch makes (``self.version + 1``); a version
            applied already raises :class:`~faq.errors.BatchAlreadyAppliedError`.
        label : str, optional
            The version's label (a batch file's name).
        before_commit : callable, optional
            Called with the change before the state commits it (a stream's sink).

        Returns
        -------
        Change
            Rows ``(src, dst, trussness, version, diff)``: the rows retracted and added.
        """
        started = time.perf_counter()
        target = self._next_version(version)
        low, high, diff = self._batch_pairs(changes)
        a_codes = self.domain.lookup(low)
        b_codes = self.domain.lookup(high)
        ids = self.index.lookup(a_codes, b_codes)
        deletes = ids[(diff < 0) & (ids >= 0)]
        adding = np.flatnonzero((diff > 0) & (ids < 0))
        ins_a = self.domain.encode(low[adding]) if len(adding) else np.zeros(0, np.int64)
        ins_b = self.domain.encode(high[adding]) if len(adding) else np.zeros(0, np.int64)
        index = self.index
        size = len(deletes) + len(adding)
        tried = self._fell_back_at is None or size < self._fell_back_at or self._skipped >= RETRY_EVERY
        from faq.graphs.truss_index import DecomposedEdges, repair_estimate

        estimate = repair_estimate(index.degrees(np.concatenate([index.eu[deletes], ins_a])),
                                   index.degrees(np.concatenate([index.ev[deletes], ins_b])))
        if self._work_limit is None and estimate > max(MIN_ESTIMATE, ESTIMATE_FRACTION * index.recompute_work):
            tried = False  # decided before starting: the repair would cost more than a decomposition

        if tried and isinstance(index, DecomposedEdges):  # a repair reads the lists (edge ids kept)
            index = self.index = index.indexed()
        report = index.apply(deletes, ins_a, ins_b, work_limit=self.work_limit, time_limit=self.time_limit) \
            if tried else None
        recomputed = report is None or not report.complete
        try:
            if recomputed:
                if report is not None:
                    index.undo(report)
                change, new_index = self._recomputed(deletes, ins_a, ins_b, target)
            else:
                change, new_index = self._incremental(report, target), index
            changed = int(np.count_nonzero(change.diff > 0)) - len(adding)
            info = {"inserted": len(adding), "deleted": len(deletes), "changed": changed,
                    "examined": report.examined if report else 0, "work": report.work if report else 0,
                    "settled": report.settled if report else 0,
                    "recomputed": recomputed, "repair_tried": tried, "estimate": estimate}
            change.info.update(info)
            change.seconds = time.perf_counter() - started
            delta = (np.concatenate([low[adding], self.domain.decode(index.eu[deletes])]),
                     np.concatenate([high[adding], self.domain.decode(index.ev[deletes])]),
                     np.concatenate([np.ones(len(adding), np.int64), -np.ones(len(deletes), np.int64)]))
            self._commit(target, label, change=change, before_commit=before_commit,
                         save=lambda labels: self._save(target, labels, delta, new_index))
        except BaseException:
            if not recomputed:
                index.undo(report)
            raise
        self._learn(size, tried, recomputed)
        self.index = new_index
        if self.index.wasteful():
            self.index.rebuilt()
        change.seconds = time.perf_counter() - started
        self.last = {**info, "seconds": change.seconds}
        self._emit(BatchEvent("done", target, f"{len(adding)} insertion(s), {len(deletes)} deletion(s), "
                              f"{changed} trussness change(s)" + (" (recomputed)" if recomputed else ""),
                              len(change), change.seconds, label or ""))
        return change

    def _learn(self, size: int, tried: bool, recomputed: bool) -> None:
        """Remember from which batch size the repair falls back (module notes), and when to try it again."""
        if not tried:
            self._skipped += 1
            return
        self._skipped = 0
        if recomputed:
            self._fell_back_at = size if self._fell_back_at is None else min(self._fell_back_at, size)
        elif self._fell_back_at is not None and size >= self._fell_back_at:
            self._fell_back_at = size + 1  # the repair did it at this size after all

    def _batch_pairs(self, changes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The batch's effective operations by pair (:func:`effective_pairs`), columns checked."""
        import pyarrow as pa

        from faq.errors import InvalidDeltaError, MissingColumnError
        from faq.incremental.multiplicity import check_multiplicity
        from faq.incremental.state import to_arrow

        if isinstance(changes, Mapping):  # {"edge": rows}, as a stream gives them
            unknown = [name for name in changes if name != EDGE]
            if unknown:
                raise InvalidDeltaError(unknown[0], f"a maintained truss changes only {EDGE!r}, not {unknown[0]!r}",
                                        known=[EDGE])
            changes = changes.get(EDGE, [])
        table = to_arrow(changes, (SRC, DST, DIFF), what="the edge changes", relation=EDGE, target=self.WHAT)
        if isinstance(changes, (list, tuple)) and "value" in table.column_names:  # tuples (src, dst, diff, seq)
            table = table.rename_columns([SEQ if c == "value" else c for c in table.column_names])
        check_multiplicity(table.column_names, DIFF, factor=EDGE, target=self.WHAT, data=(SRC, DST, SEQ))
        if DIFF not in table.column_names:  # rows of insertions
            table = table.append_column(DIFF, pa.array(np.ones(table.num_rows, dtype=np.int64)))
        for c in (SRC, DST):
            if c not in table.column_names:
                raise MissingColumnError(column=c, available=table.column_names, source="the edge changes")
        from faq.incremental import batch_check

        # ids integral int64, diff +1 / -1, no null: before any id is encoded or the index touched
        table = batch_check.check_batch(table, batch_check.edge_spec(), relation=EDGE, target=self.WHAT)
        src, dst, diff = (table.column(c).to_numpy() for c in (SRC, DST, DIFF))
        seq = np.asarray(table.column(SEQ).to_numpy(zero_copy_only=False)) if SEQ in table.column_names else None
        return effective_pairs(src, dst, diff, seq)

    def _incremental(self, report: Any, target: int) -> Change:
        """The change of an incremental batch: every touched edge whose trussness differs, deleted and new ones."""
        index = self.index
        touched, before = report.touched, report.before
        old_rows = (before >= 0) & (index.x[touched] != before) & index.alive[touched]
        new_rows = old_rows | (before < 0)
        # a deleted edge retracts its level from before the batch: an earlier chunk of deletions may have
        # lowered it before it went (then it is among the touched, with that level)
        gone_levels = index.x[report.deleted].copy()
        if len(touched) and len(report.deleted):
            order = np.argsort(touched)
            at = np.minimum(np.searchsorted(touched[order], report.deleted), len(touched) - 1)
            hit = touched[order][at] == report.deleted
            gone_levels[hit] = before[order][at[hit]]
        out_ids = np.concatenate([touched[old_rows], report.deleted, touched[new_rows]])
        levels = np.concatenate([before[old_rows], gone_levels, index.x[touched[new_rows]]])
        signs = np.concatenate([-np.ones(int(old_rows.sum()) + len(report.deleted), np.int64),
                                np.ones(int(new_rows.sum()), np.int64)])
        return self._change(index, out_ids, levels, signs, target)

    def _recomputed(self, deletes: np.ndarray, ins_a: np.ndarray, ins_b: np.ndarray,
                    target: int) -> tuple[Change, Any]:
        """The batch by decomposing the new edges from scratch: the change and the new edges with their
        levels (not yet held; the repair's lists are built only if a later batch tries a repair)."""
        from faq.graphs.truss import decompose
        from faq.graphs.truss_index import DecomposedEdges

        old = self.index
        n = np.int64(max(len(self.domain), 1))  # pair keys low * n + high: in (low, high) order
        ids = old.live_ids()
        old_keys = np.minimum(old.eu[ids], old.ev[ids]) * n + np.maximum(old.eu[ids], old.ev[ids])
        old_levels = old.x[ids]
        gone = np.zeros(old.m, dtype=bool)
        gone[deletes] = True
        kept = old_keys[~gone[ids]]
        added = np.sort(np.minimum(ins_a, ins_b) * n + np.maximum(ins_a, ins_b))
        if isinstance(old, DecomposedEdges):  # its pairs come in order: the insertions merged in, no sort
            keys = np.insert(kept, np.searchsorted(kept, added), added)
        else:
            keys = np.sort(np.concatenate([kept, added]))
        result = decompose(keys // n, keys % n)
        self.decomposition_seconds = result.seconds["supports"] + result.seconds["peel"]
        new = DecomposedEdges(result.src, result.dst, result.trussness - 2, len(self.domain))
        # old rows and new rows by pair key; those in both with the same level cancel (new keys are sorted)
        new_levels = result.trussness - 2
        same_new = np.zeros(len(keys), dtype=bool)
        same = np.zeros(len(old_keys), dtype=bool)
        if len(keys):
            at = np.minimum(np.searchsorted(keys, old_keys), len(keys) - 1)
            same = (keys[at] == old_keys) & (new_levels[at] == old_levels)
            same_new[at[same]] = True
        keys, levels = np.concatenate([old_keys[~same], keys[~same_new]]), \
            np.concatenate([old_levels[~same], new_levels[~same_new]])
        signs = np.concatenate([-np.ones(int((~same).sum()), np.int64), np.ones(int((~same_new).sum()), np.int64)])
        a, b = self.domain.decode(keys // n), self.domain.decode(keys % n)
        return self._rows(np.minimum(a, b), np.maximum(a, b), levels, signs, target), new

    def _change(self, index: Any, ids: np.ndarray, levels: np.ndarray, signs: np.ndarray, target: int) -> Change:
        a, b = self.domain.decode(index.eu[ids]), self.domain.decode(index.ev[ids])
        return self._rows(np.minimum(a, b), np.maximum(a, b), levels, signs, target)

    def _rows(self, src: np.ndarray, dst: np.ndarray, levels: np.ndarray, signs: np.ndarray, target: int) -> Change:
        order = np.lexsort((signs, dst, src))
        return Change((SRC, DST), (src[order], dst[order]), signs[order], target,
                      extra={TRUSSNESS: (levels[order] + 2).astype(np.int64)},
                      types={SRC: "bigint", DST: "bigint", TRUSSNESS: "bigint", "diff": "bigint"})

    # -- saving --------------------------------------------------------------------------

    def _attach(self, path: str) -> None:
        """Start keeping the state in ``path`` (new or empty): the current edges as the base."""
        from faq.incremental.store import Store

        store = Store(path)
        store.create()
        try:
            table = self.table(k=2)
            store.save(self.version, self._meta(self.labels), {EDGE: ("base", table.select([SRC, DST]))})
        except BaseException:
            store.release()
            raise
        self.record.store = store

    def _meta(self, labels: list[str]) -> dict[str, Any]:
        return {"kind": self.KIND, "k": self.k, "labels": list(labels)}

    def _save(self, target: int, labels: list[str], delta: tuple[np.ndarray, ...], new_index: Any) -> None:
        """Commit ``target``: the batch's effective edge changes as a delta, or all edges as a new base."""
        import pyarrow as pa

        store = self.record.store
        if store is None:
            return
        src, dst, diff = delta
        if store.wants_rebase(EDGE, len(src)):
            ids = new_index.live_ids()
            a, b = self.domain.decode(new_index.eu[ids]), self.domain.decode(new_index.ev[ids])
            write = ("base", pa.table({SRC: np.minimum(a, b), DST: np.maximum(a, b)}))
        else:
            write = ("delta", pa.table({SRC: src, DST: dst, DIFF: diff}))
        store.save(target, self._meta(labels), {EDGE: write})

    @classmethod
    def open(cls, path: str, *, progress: Optional[Callable[[BatchEvent], None]] = None,
             work_limit: Optional[int] = None) -> "MaintainedTruss":
        """Reopen a truss saved with ``state=`` at its last committed version (the edges are decomposed again;
        no Spark).

        Raises
        ------
        StateDirectoryError
            No saved state in ``path``, or one of another kind.
        """
        import pyarrow as pa

        from faq.incremental.store import Store, restoring

        cls._saved_manifest(path)
        store = Store(path)
        with restoring(store.path):
            meta, tables = store.load()
            parts = tables.get(EDGE, [])
            edges = _folded_edges(parts) if parts else pa.table({SRC: pa.array([], pa.int64()),
                                                                DST: pa.array([], pa.int64())})
            store.committed()
            return cls(edges, meta.get("k"), progress=progress, work_limit=work_limit, _restored=(store, meta))

    # -- releasing ------------------------------------------------------------------------

    def close(self) -> None:
        """Release the writer's lock of a durable state (the index lives on the driver: nothing on Spark)."""
        self._release_store()
        super().close()


def _folded_edges(parts: list["pa.Table"]) -> "pa.Table":
    """The edges a base and its deltas leave: the last operation on each pair wins (the base's are inserts)."""
    import pyarrow as pa

    src = np.concatenate([np.asarray(p.column(SRC).to_numpy(zero_copy_only=False), np.int64) for p in parts])
    dst = np.concatenate([np.asarray(p.column(DST).to_numpy(zero_copy_only=False), np.int64) for p in parts])
    diff = np.concatenate([np.asarray(p.column(DIFF).to_numpy(zero_copy_only=False), np.int64)
                           if DIFF in p.column_names else np.ones(p.num_rows, np.int64) for p in parts])
    low, high, last = effective_pairs(src, dst, diff, np.arange(len(src)))
    keep = last > 0
    return pa.table({SRC: low[keep], DST: high[keep]})
