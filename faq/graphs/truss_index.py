"""A truss kept current: edges with their levels over a dynamic adjacency, repaired batch by batch.

:class:`TrussIndex` holds a simple undirected graph (dense node codes, edge
ids) with every edge's *level* (trussness − 2) and applies a batch of edge
deletions and insertions to both, touching only what the batch can change;
the loops that do it, and why the result is exact, are
:mod:`faq.graphs.truss_repair`.

Everything the loops read and write lives in a few numpy tables (rows named
in :mod:`faq.graphs.truss_repair`): per edge id its endpoints, level, kept
support and scratch; per node where its sorted neighbour list lies in one
pool, its length and its room.  A list that fills moves to the pool's end
with twice the room; the pool is rebuilt when moves or deleted edges have
wasted much of it (:meth:`TrussIndex.rebuilt`).  Edge ids are not reused
until a rebuild.

Examples
--------
>>> import numpy as np
>>> index = TrussIndex(np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([1, 1, 1]), 4)   # a triangle
>>> report = index.apply(np.array([], dtype=np.int64), np.array([0]), np.array([3]))          # + 0-3
>>> index.levels_of(np.array([0, 1, 2, 3])).tolist()
[1, 1, 1, 0]
>>> report = index.apply(np.array([], dtype=np.int64), np.array([1]), np.array([3]))          # + 1-3: a 4-clique but 2-3
>>> index.levels_of(np.arange(5)).tolist()
[1, 1, 1, 1, 1]
>>> report = index.apply(np.array([], dtype=np.int64), np.array([2]), np.array([3]))          # + 2-3: K4
>>> index.levels_of(np.arange(6)).tolist(), sorted(report.touched.tolist())
([2, 2, 2, 2, 2, 2], [0, 1, 2, 3, 4, 5])
>>> report = index.apply(np.array([5]), np.array([], dtype=np.int64), np.array([], dtype=np.int64))  # - 2-3
>>> index.levels_of(np.arange(5)).tolist()
[1, 1, 1, 1, 1]
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from faq.compiled import COMPILED
from faq.graphs.truss_repair import (
    ALIVE,
    COUNTERS,
    EDGE_ROWS,
    EID,
    EU,
    EV,
    LENGTH,
    NBR,
    ORIG,
    QUEUED,
    ROOM,
    SEEN_BATCH,
    START,
    STEP,
    STEP_N,
    STEP_SEEN,
    SUPPORT_KNOWN,
    TOUCHED,
    TOUCHED_N,
    QUEUE_HEAD,
    QUEUE_SIZE,
    BATCH,
    SETTLED,
    USED,
    WORK,
    X,
    KEPT_ROWS,
    delete_edges,
    insert_edges,
    lookup_edges,
    relink,
    unlink,
)

__all__ = ["TrussIndex", "DecomposedEdges", "BatchReport", "repair_estimate", "warm_up"]

# A neighbour list gets this much room over its length when built (and a moved list twice its length + 4).
SLACK = 0.25
MIN_ROOM = 4
#: A batch's deletions and insertions go to the compiled loops in chunks this large: the clock is read between
#: chunks, and inside one the time left is a work limit (ASSUMED_RATE).
DELETE_CHUNK = 64
INSERT_CHUNK = 32
#: Work units a second assumed per phase: inside a compiled call the clock cannot be read, so the time left
#: becomes a work limit at this rate.  Measured: deletions about 3e8 units/s (R-MAT 18, Email-Enron), insertions among
#: hubs about 1e8, one insertion's rate varying widely; the assumed rates err low, so a call stops early
#: (and the batch is recomputed) rather than late.
ASSUMED_RATE = {"delete": 200_000_000, "insert": 30_000_000}


# --- the index -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchReport:
    """What one :meth:`TrussIndex.apply` did.

    ``touched``: edge ids whose level may differ from before the batch, with
    ``before`` (−1 for an edge the batch inserted); ``inserted`` the new
    edges' ids; ``examined`` the insertion candidates searched; ``work`` the
    list entries scanned for triangles; ``settled`` the h-indexes computed; ``complete``
    False when the search passed its limit and only the first ``put_in``
    insertions were made (:meth:`TrussIndex.undo` takes the batch back).
    """

    touched: np.ndarray
    before: np.ndarray
    inserted: np.ndarray
    deleted: np.ndarray
    examined: int
    complete: bool = True
    put_in: int = 0
    work: int = 0
    settled: int = 0


class TrussIndex:
    """Edges with their levels (trussness − 2) over dense node codes, kept exact under batches (module notes).

    Parameters
    ----------
    u, v : np.ndarray
        The edges' endpoint codes (``u != v``, each pair once); edge ``i`` is ``u[i]-v[i]``.
    levels : np.ndarray
        Each edge's trussness − 2 (from :func:`faq.graphs.truss.truss_decomposition`).
    nodes : int
        Node codes are ``0 .. nodes - 1`` (more may come with insertions).
    """

    def __init__(self, u: np.ndarray, v: np.ndarray, levels: np.ndarray, nodes: int) -> None:
        self._build(np.asarray(u, np.int64), np.asarray(v, np.int64), np.asarray(levels, np.int64), int(nodes))

    def _build(self, u: np.ndarray, v: np.ndarray, levels: np.ndarray, nodes: int) -> None:
        m = len(u)
        self.m = m  # edge ids in use (live and dead)
        self.live = m
        self.C = np.zeros(COUNTERS, dtype=np.int64)
        self.E, self.F = _edge_tables(max(16, m + m // 8))
        self.E[EU, :m], self.E[EV, :m], self.E[X, :m], self.F[ALIVE, :m] = u, v, levels, True
        self.n = nodes
        n_room = max(16, nodes + nodes // 8)
        degree = np.bincount(np.concatenate([u, v]), minlength=n_room).astype(np.int64)
        self.N = np.zeros((3, n_room), dtype=np.int64)
        self.N[LENGTH] = degree
        self.N[ROOM] = degree + (degree * SLACK).astype(np.int64) + MIN_ROOM
        np.cumsum(self.N[ROOM, :-1], out=self.N[START, 1:])
        pool = int(self.N[ROOM].sum())
        self.P = np.zeros((2, pool + pool // 8 + 64), dtype=np.int64)
        self.C[USED] = pool
        ends, others = np.concatenate([u, v]), np.concatenate([v, u])
        ids = np.concatenate([np.arange(m), np.arange(m)])
        order = np.lexsort((others, ends))
        ends, others, ids = ends[order], others[order], ids[order]
        csr = np.zeros(n_room + 1, dtype=np.int64)
        np.cumsum(degree, out=csr[1:])
        at = self.N[START, ends] + (np.arange(len(ends)) - csr[ends])
        self.P[NBR, at], self.P[EID, at] = others, ids
        self.S = np.zeros((5, n_room + 2), dtype=np.int64)
        self.recompute_work = decomposition_work(degree[u], degree[v])

    # -- reading --------------------------------------------------------------------

    @property
    def eu(self) -> np.ndarray:
        """One endpoint code per edge id."""
        return self.E[EU]

    @property
    def ev(self) -> np.ndarray:
        """The other endpoint code per edge id."""
        return self.E[EV]

    @property
    def x(self) -> np.ndarray:
        """The level (trussness − 2) per edge id (meaningful for live edges)."""
        return self.E[X]

    @property
    def alive(self) -> np.ndarray:
        """True per live edge id."""
        return self.F[ALIVE]

    def lookup(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The ids of the edges ``a[i]-b[i]`` (codes), -1 where absent."""
        out = np.empty(len(a), dtype=np.int64)
        lookup_edges(self.N, self.P, np.asarray(a, np.int64), np.asarray(b, np.int64), out)
        return out

    def levels_of(self, ids: np.ndarray) -> np.ndarray:
        """The levels of edges ``ids`` (meaningful for live edges only)."""
        return self.E[X, np.asarray(ids, np.int64)]

    def live_ids(self) -> np.ndarray:
        """The ids of the live edges, ascending."""
        return np.flatnonzero(self.F[ALIVE, : self.m])

    def degrees(self, codes: np.ndarray) -> np.ndarray:
        """The live degree of each node code (0 for -1 or a code past the lists)."""
        codes = np.asarray(codes, np.int64)
        known = (codes >= 0) & (codes < self.n)
        return np.where(known, self.N[LENGTH, np.where(known, codes, 0)], 0)

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.E, self.F, self.N, self.P, self.S)))

    # -- one batch --------------------------------------------------------------------

    def apply(self, deletes: np.ndarray, ins_u: np.ndarray, ins_v: np.ndarray,
              work_limit: Optional[int] = None, time_limit: Optional[float] = None) -> BatchReport:
        """Delete the live edges ``deletes`` (ids), then insert the absent pairs ``ins_u[i]-ins_v[i]`` (codes).

        The caller gives each pair once, present ones only in ``deletes`` and
        absent ones only in the insertions; :meth:`undo` takes the batch back.
        With ``work_limit``, the batch stops once its work (list entries
        scanned for triangles) reaches it, half way if need be (the report is
        then not ``complete`` and the batch must be undone; 0: before the
        first insertion); :attr:`recompute_work` is what a decomposition from
        scratch scans, about.  With ``time_limit`` (seconds) the batch stops
        likewise once that much time has passed: checked between chunks of
        :data:`DELETE_CHUNK` deletions and :data:`INSERT_CHUNK` insertions, and
        inside a compiled call as the work the time left buys at the phase's
        :data:`ASSUMED_RATE`.
        """
        deletes = np.asarray(deletes, np.int64)
        ins_u, ins_v = np.asarray(ins_u, np.int64), np.asarray(ins_v, np.int64)
        self._room_for(ins_u, ins_v)
        C = self.C
        C[BATCH] += 1
        C[STEP] += 1  # a batch starts a step (one stopped half way may not have ended its own)
        C[TOUCHED_N] = C[QUEUE_HEAD] = C[QUEUE_SIZE] = C[STEP_N] = C[WORK] = C[SETTLED] = 0
        limit = np.iinfo(np.int64).max if work_limit is None else int(work_limit)
        started = time.perf_counter()
        deadline = None if time_limit is None else started + float(time_limit)

        def allowed(phase: str) -> int:
            """The work the next call may reach: the limit, and what the time left buys at the phase's assumed
            rate (one that errs low: a call that would need more stops, and the batch is recomputed)."""
            if deadline is None:
                return limit
            left = max(deadline - time.perf_counter(), 0.0)
            return min(limit, int(C[WORK] + left * ASSUMED_RATE[phase]))

        complete = True
        for start in range(0, len(deletes), DELETE_CHUNK):  # each chunk a batch of deletions, settled
            if start and deadline is not None and time.perf_counter() > deadline:
                complete = False
                break
            chunk = deletes[start:start + DELETE_CHUNK]
            if not delete_edges(self.N, self.P, self.E, self.F, C, self.S, chunk, allowed("delete")):
                complete = False
                break
        inserted = np.arange(self.m, self.m + len(ins_u), dtype=np.int64)
        examined = put_in = 0
        if len(inserted):
            self.E[EU, inserted], self.E[EV, inserted] = ins_u, ins_v
            self.F[SUPPORT_KNOWN, inserted] = False
            self.m += len(inserted)
        done = np.zeros(2, dtype=np.int64)
        for start in range(0, len(inserted) if complete else 0, INSERT_CHUNK):
            if deadline is not None and time.perf_counter() > deadline:
                complete = False
                break
            chunk = inserted[start:start + INSERT_CHUNK]
            examined += insert_edges(self.N, self.P, self.E, self.F, C, self.S, chunk, allowed("insert"), done)
            put_in += int(done[0])
            if done[1] or done[0] < len(chunk):
                complete = False
                break
        self.live += put_in - len(deletes)
        touched = self.E[TOUCHED, : C[TOUCHED_N]].copy()
        return BatchReport(touched, self.E[ORIG, touched].copy(), inserted, deletes, int(examined), complete,
                           put_in, int(C[WORK]), int(C[SETTLED]))

    def undo(self, report: BatchReport) -> None:
        """Take back the batch ``report`` describes (the last one applied): links and levels as before."""
        unlink(self.N, self.P, self.E, self.F, report.inserted)
        if len(report.deleted):
            relink(self.N, self.P, self.E, self.F, self.C, report.deleted)
        kept = report.before >= 0
        self.E[X, report.touched[kept]] = report.before[kept]
        self.F[SUPPORT_KNOWN] = False  # the supports seen since may be of the batch's graph
        self.m -= len(report.inserted)
        self.live -= report.put_in - len(report.deleted)

    def _room_for(self, ins_u: np.ndarray, ins_v: np.ndarray) -> None:
        """Grow the edge tables, the node tables and the pool so that the batch's loops never run out."""
        if self.m + len(ins_u) > self.E.shape[1]:
            E, F = _edge_tables(max(2 * self.E.shape[1], self.m + len(ins_u) + 16))
            old = self.E.shape[1]
            E[list(KEPT_ROWS), :old] = self.E[list(KEPT_ROWS)]
            F[:, :old] = self.F
            F[QUEUED] = False
            self.E, self.F = E, F
        if not len(ins_u):
            return
        top = int(max(ins_u.max(), ins_v.max())) + 1
        if top > self.N.shape[1]:
            grown = max(2 * self.N.shape[1], top + 16)
            N = np.zeros((3, grown), dtype=np.int64)
            N[:, : self.N.shape[1]] = self.N
            self.N = N
            self.S = np.zeros((5, grown + 2), dtype=np.int64)
        self.n = max(self.n, top)
        ends, k = np.unique(np.concatenate([ins_u, ins_v]), return_counts=True)
        after = self.N[LENGTH, ends] + k
        moving = after > self.N[ROOM, ends]
        need = int((4 * after[moving] + 8).sum())  # a list may move several times as it doubles
        if self.C[USED] + need > self.P.shape[1]:
            size = max(2 * self.P.shape[1], int(self.C[USED]) + need + 64)
            P = np.zeros((2, size), dtype=np.int64)
            P[:, : self.P.shape[1]] = self.P
            self.P = P

    # -- upkeep -----------------------------------------------------------------------

    def wasteful(self) -> bool:
        """True when dead edge ids or moved lists hold more than the live data (time for :meth:`rebuilt`)."""
        return self.m > 2 * self.live + 1024 or int(self.C[USED]) > 4 * (2 * self.live) + 4096

    def rebuilt(self) -> np.ndarray:
        """Rebuild the lists and renumber the live edges ``0 .. live - 1`` (levels kept); returns the old
        ids in new order (new id ``i`` was ``old[i]``)."""
        old = self.live_ids()
        self._build(self.E[EU, old].copy(), self.E[EV, old].copy(), self.E[X, old].copy(), self.n)
        return old


class DecomposedEdges:
    """A decomposition's edges and levels as plain arrays in pair order: :class:`TrussIndex`'s reading
    side, without the neighbour lists a repair needs (:meth:`indexed` builds them).

    A batch that is recomputed reads only this much of the old state -- which edges the batch names,
    every live edge with its level -- and leaves a new decomposition, so holding that as these arrays
    spares building lists no repair may read (between two tries of the repair, every batch is
    recomputed: :mod:`faq.graphs.maintained_truss`).  Edge ``i`` is the ``i``-th pair in
    ``(low code, high code)`` order; :meth:`indexed` keeps those ids.

    >>> edges = DecomposedEdges(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([1, 1, 1]), 3)
    >>> edges.lookup(np.array([2, 0, 0]), np.array([1, 2, 3])).tolist()    # 2-1 is edge 2; 0-3 is absent
    [2, 1, -1]
    >>> index = edges.indexed()
    >>> index.lookup(np.array([2]), np.array([1])).tolist(), index.levels_of(np.arange(3)).tolist()
    ([2], [1, 1, 1])
    """

    def __init__(self, u: np.ndarray, v: np.ndarray, levels: np.ndarray, nodes: int) -> None:
        u, v = np.asarray(u, np.int64), np.asarray(v, np.int64)
        self.eu, self.ev = np.minimum(u, v), np.maximum(u, v)
        self.x = np.asarray(levels, np.int64)
        self.n = max(int(nodes), 1)
        self.keys = self.eu * np.int64(self.n) + self.ev
        if len(self.keys) > 1 and not bool(np.all(self.keys[1:] > self.keys[:-1])):
            order = np.argsort(self.keys, kind="stable")  # (a decomposition's output comes in order)
            self.eu, self.ev, self.x, self.keys = self.eu[order], self.ev[order], self.x[order], self.keys[order]
        self.m = self.live = len(self.keys)
        self.alive = np.ones(self.m, dtype=bool)
        self._work: Optional[int] = None
        self._degree: Optional[np.ndarray] = None

    @property
    def recompute_work(self) -> int:
        """:func:`decomposition_work` of these edges (found when first asked: a batch recomputed asks not)."""
        if self._work is None:
            self._work = decomposition_work(self.degrees(self.eu), self.degrees(self.ev))
        return self._work

    def lookup(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The ids of the edges ``a[i]-b[i]`` (codes), -1 where absent."""
        a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
        low, high = np.minimum(a, b), np.maximum(a, b)
        out = np.full(len(a), -1, dtype=np.int64)
        known = high < self.n  # a code past the decomposition's nodes is in none of its edges
        if self.m and known.any():
            keys = low[known] * np.int64(self.n) + high[known]
            at = np.minimum(np.searchsorted(self.keys, keys), self.m - 1)
            out[known] = np.where(self.keys[at] == keys, at, -1)
        return out

    def levels_of(self, ids: np.ndarray) -> np.ndarray:
        """The levels of edges ``ids``."""
        return self.x[np.asarray(ids, np.int64)]

    def live_ids(self) -> np.ndarray:
        """Every edge id, ascending (none is dead)."""
        return np.arange(self.m, dtype=np.int64)

    def degrees(self, codes: np.ndarray) -> np.ndarray:
        """The degree of each node code (0 for -1 or a code past the decomposition's nodes)."""
        if self._degree is None:
            self._degree = np.bincount(np.concatenate([self.eu, self.ev]), minlength=self.n)
        codes = np.asarray(codes, np.int64)
        known = (codes >= 0) & (codes < self.n)
        return np.where(known, self._degree[np.where(known, codes, 0)], 0)

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.eu, self.ev, self.x, self.keys, self.alive)))

    def wasteful(self) -> bool:
        """Never (no list holds dead edges or moved room)."""
        return False

    def indexed(self) -> TrussIndex:
        """The :class:`TrussIndex` of these edges and levels, edge ids kept (for a repair)."""
        return TrussIndex(self.eu, self.ev, self.x, self.n)


def repair_estimate(du: np.ndarray, dv: np.ndarray) -> int:
    """A batch's repair work, guessed before it starts from the degrees of its pairs' ends: the sum of
    each pair's smaller degree, squared (a deletion settles the partners of its triangles, an insertion
    searches from the smaller end's neighbours into theirs).  Compared with :func:`decomposition_work`
    it tells the batches whose repair would cost more than a decomposition (:mod:`faq.graphs.maintained_truss`).

    >>> repair_estimate(np.array([1, 3]), np.array([2, 2]))   # 1 * 1 + 2 * 2
    5
    """
    smaller = np.minimum(np.asarray(du, np.int64), np.asarray(dv, np.int64))
    return int((smaller * smaller).sum())


def decomposition_work(du: np.ndarray, dv: np.ndarray) -> int:
    """About what a decomposition from scratch reads, in the repair's work units: its peeling looks each
    edge's shorter list up in the longer one (entries times search steps), its supports merge lists about
    as much again.

    >>> decomposition_work(np.array([1, 2]), np.array([2, 4]))   # 2 * (1 * (2 + 1) + 2 * (2 + 2))
    22
    """
    if not len(du):
        return 0
    low, high = np.minimum(du, dv), np.maximum(du, dv)
    steps = 2 + np.ceil(np.log2(np.maximum(high, 1))).astype(np.int64)
    return int(2 * (low * steps).sum())


def _edge_tables(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty edge tables E and F for ``capacity`` edge ids (no batch or step seen yet)."""
    E = np.zeros((EDGE_ROWS, capacity), dtype=np.int64)
    E[[SEEN_BATCH, STEP_SEEN]] = -1
    return E, np.zeros((3, capacity), dtype=np.bool_)


def warm_up() -> bool:
    """Compile the loops into numba's cache (``make`` runs ``python -m faq.graphs.truss_index``), checked on
    a 4-clique built and taken apart; False without numba.

    >>> warm_up() in (True, False)
    True
    """
    if not COMPILED:
        return False
    index = TrussIndex(np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([1, 1, 1]), 3)
    index.apply(np.zeros(0, np.int64), np.array([0, 1, 2]), np.array([3, 3, 3]))
    if index.levels_of(np.arange(6)).tolist() != [2] * 6:
        raise AssertionError("the compiled truss repair is wrong on insertion")
    report = index.apply(np.array([5]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    index.undo(report)
    index.rebuilt()
    if index.lookup(np.array([2]), np.array([3])).tolist() != [5]:
        raise AssertionError("the compiled truss repair is wrong on undo")
    return True


if __name__ == "__main__":
    from faq.compiled import warm_main

    warm_main("faq.graphs.truss_index", "faq: truss repair loops compiled",
              "faq: numba is not installed; the truss repair runs in Python", "the truss repair loops")
