"""A truss kept current: a dynamic adjacency and the h-index repair loop, in compiled code.

:class:`TrussIndex` holds a simple undirected graph (dense node codes, edge
ids) with every edge's *level* (trussness − 2) and applies a batch of edge
deletions and insertions to both, touching only what the batch can change.

Why the repair is exact
-----------------------
Write ``H(x)(e)`` for the h-index of the values ``min(x(f), x(g))`` over the
triangles ``(e, f, g)`` of the current graph: the largest ``h`` such that at
least ``h`` of them are ``>= h``.  The levels are the one vector ``t`` with
``t = H(t)`` that lies below the supports, and more usefully:

* any ``x`` with ``x <= H(x)`` everywhere is ``<= t`` (the edges with
  ``x >= h`` form a subgraph whose every edge closes ``h`` triangles in it,
  so they are in the (h+2)-truss);
* so from any upper bound ``x >= t``, repeating ``x(e) <- min(x(e), H(x)(e))``
  over the edges where it may change ends exactly at ``t`` (each step keeps
  ``x >= t`` because ``H`` is monotone, and it stops where ``x <= H(x)``).

:func:`settle` runs that loop over a work queue: an edge whose value drops
to ``h`` puts back on the queue its triangle partners ``f, g`` when both are
above ``h`` (only then did one of their triangle values drop, and only then
can it matter to them).  Sariyüce, Seshadhri and Pinar (VLDB 2018) compute
decompositions by this iteration from the supports; here it starts from the
old answer, so the work is local:

* **deletions** (a batch at once): the old levels are an upper bound of the
  new ones (a subgraph's trusses are smaller), and only the partners of the
  deleted edges' triangles can be above their new ``H``: they start the queue;
* **an insertion** ``e0`` (one at a time): no other edge's trussness rises
  by more than one (a k-truss of the new graph without ``e0`` loses one
  triangle an edge, so it lies in the old (k−1)-truss), and an edge ``f`` at
  level ``k`` can rise only if it is joined to ``e0`` by a chain of
  triangles, each of edges at level ``>= k``, through edges at level ``k``
  that each close at least ``k + 1`` such triangles (the edges that rise to
  ``k + 1`` with ``e0`` form such a chain, or the old graph would hold them
  at ``k + 1`` already).  :func:`insert_edges` finds those *candidates* by a
  search from ``e0`` (levels below ``e0``'s bound only), raises them by one,
  gives ``e0`` the h-index of its triangles' old values plus one, and
  settles.  This is the candidate set of Huang et al. (SIGMOD 2014) with the
  pruning by support Zhang and Yu (SIGMOD 2019) use.

The adjacency is one pool of sorted neighbour lists with room to grow (a
list that fills moves to the pool's end with twice the room; the pool is
rebuilt when moves or deleted edges have wasted much of it).  Edge ids are
not reused until a rebuild.  Every loop is compiled with numba (cached on
disk; ``make`` warms it); without numba they run as Python, slowly.

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

import importlib.util
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = ["TrussIndex", "BatchReport", "warm_up"]

COMPILED = importlib.util.find_spec("numba") is not None
# A neighbour list gets this much room over its length when built (and a moved list twice its length + MIN_ROOM).
SLACK = 0.25
MIN_ROOM = 4
# The merge of two neighbour lists is used up to this ratio of their lengths; beyond it, binary search.
MERGE_RATIO = 8


def _compiled(function: Callable) -> Callable:
    if COMPILED:
        import numba

        return numba.njit(cache=True, nogil=True)(function)
    return function  # pragma: no cover - numba is a dependency


# --- the tables the loops share ----------------------------------------------------------------
#
# Everything the compiled loops read and write lives in six numpy tables, so each loop takes a few of
# them instead of thirty arrays.  Rows of the int64 edge table E (a column per edge id):
EU, EV, X, SUPPORT, ORIG, SEEN_BATCH, STEP_ORIG, STEP_SEEN, TOUCHED, STEP_LIST, QUEUE, SEEN, STACK, CANDIDATES = \
    range(14)
EDGE_ROWS = 14
# Rows of the bool edge table F: live edges, edges on the queue, edges whose SUPPORT is current.
ALIVE, QUEUED, SUPPORT_KNOWN = range(3)
# Rows of the node table N: where a node's sorted list starts in the pool, its length, its room.
START, LENGTH, ROOM = range(3)
# Rows of the pool P: neighbour, edge id.
NBR, EID = range(2)
# The counters C: touched edges, queue head and size, edges changed in the step, step, batch, search stamp,
# pool slots used, work done (list entries scanned for triangles: what a batch costs).
TOUCHED_N, QUEUE_HEAD, QUEUE_SIZE, STEP_N, STEP, BATCH, STAMP, USED, WORK = range(9)
COUNTERS = 9
# Rows of the node-sized scratch S: h-index counts, two triangle lists (the second for supports).
CNT, PF, PG, PF2, PG2 = range(5)

# E's rows that are state (kept when E grows); the others are scratch.
_KEPT_ROWS = (EU, EV, X, SUPPORT, ORIG, SEEN_BATCH, STEP_ORIG, STEP_SEEN, SEEN)


# --- the compiled loops ------------------------------------------------------------------------


@_compiled
def _find(N, P, a, b):
    """Position of ``b`` in node ``a``'s sorted list, or -1."""
    lo = N[START, a]
    end = lo + N[LENGTH, a]
    hi = end
    while lo < hi:
        mid = (lo + hi) >> 1
        if P[NBR, mid] < b:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and P[NBR, lo] == b:
        return lo
    return -1


@_compiled
def _link(N, P, C, a, b, e):
    """Put ``b`` (edge ``e``) into ``a``'s sorted list; a full list moves to the pool's end first."""
    n = N[LENGTH, a]
    if n == N[ROOM, a]:
        grown = 2 * n + 4
        s = C[USED]
        C[USED] = s + grown
        old = N[START, a]
        for i in range(n):
            P[NBR, s + i] = P[NBR, old + i]
            P[EID, s + i] = P[EID, old + i]
        N[START, a] = s
        N[ROOM, a] = grown
    s = N[START, a]
    lo, hi = s, s + n
    while lo < hi:
        mid = (lo + hi) >> 1
        if P[NBR, mid] < b:
            lo = mid + 1
        else:
            hi = mid
    i = s + n
    while i > lo:
        P[NBR, i] = P[NBR, i - 1]
        P[EID, i] = P[EID, i - 1]
        i -= 1
    P[NBR, lo] = b
    P[EID, lo] = e
    N[LENGTH, a] = n + 1


@_compiled
def _unlink(N, P, a, b):
    """Take ``b`` out of ``a``'s sorted list (it must be there)."""
    p = _find(N, P, a, b)
    end = N[START, a] + N[LENGTH, a] - 1
    for i in range(p, end):
        P[NBR, i] = P[NBR, i + 1]
        P[EID, i] = P[EID, i + 1]
    N[LENGTH, a] -= 1


@_compiled
def _triangles(N, P, C, a, b, pf, pg):
    """The triangles on the pair ``a, b``: their other two edges into ``pf`` and ``pg``; how many.

    Merges the two lists when their lengths are within MERGE_RATIO, else
    binary-searches the longer for each node of the shorter.
    """
    if N[LENGTH, a] > N[LENGTH, b]:
        a, b = b, a
    count = 0
    C[WORK] += N[LENGTH, a]
    p, pe = N[START, a], N[START, a] + N[LENGTH, a]
    q, qe = N[START, b], N[START, b] + N[LENGTH, b]
    if N[LENGTH, b] <= MERGE_RATIO * N[LENGTH, a]:
        C[WORK] += N[LENGTH, b]
        while p < pe and q < qe:
            x, y = P[NBR, p], P[NBR, q]
            if x < y:
                p += 1
            elif y < x:
                q += 1
            else:
                pf[count] = P[EID, p]
                pg[count] = P[EID, q]
                count += 1
                p += 1
                q += 1
        return count
    for i in range(p, pe):
        j = _find(N, P, b, P[NBR, i])
        if j >= 0:
            pf[count] = P[EID, i]
            pg[count] = P[EID, j]
            count += 1
    return count


@_compiled
def _touch(E, C, e, value):
    """Remember ``e``'s value before the batch and before the step (once each)."""
    if E[SEEN_BATCH, e] != C[BATCH]:
        E[SEEN_BATCH, e] = C[BATCH]
        E[ORIG, e] = value
        E[TOUCHED, C[TOUCHED_N]] = e
        C[TOUCHED_N] += 1
    if E[STEP_SEEN, e] != C[STEP]:
        E[STEP_SEEN, e] = C[STEP]
        E[STEP_ORIG, e] = value
        E[STEP_LIST, C[STEP_N]] = e
        C[STEP_N] += 1


@_compiled
def _push(E, F, C, e):
    """Append ``e`` to the ring queue unless it is on it."""
    if not F[QUEUED, e]:
        F[QUEUED, e] = True
        E[QUEUE, (C[QUEUE_HEAD] + C[QUEUE_SIZE]) % E.shape[1]] = e
        C[QUEUE_SIZE] += 1


@_compiled
def _settle(N, P, E, F, C, S, within_step, limit):
    """``x(e) <- min(x(e), H(x)(e))`` over the queue until it is empty (module notes); False when the batch's
    work reached ``limit`` first (the queue is then emptied, the levels half settled: the batch is undone).

    ``within_step``: only edges this step touched are queued again (after an
    insertion the other edges keep their levels, which are final already, so
    they stay at most their h-index whatever the candidates do).
    """
    cnt, pf, pg = S[CNT], S[PF], S[PG]
    while C[QUEUE_SIZE] > 0:
        if C[WORK] >= limit:
            while C[QUEUE_SIZE] > 0:
                F[QUEUED, E[QUEUE, C[QUEUE_HEAD]]] = False
                C[QUEUE_HEAD] = (C[QUEUE_HEAD] + 1) % E.shape[1]
                C[QUEUE_SIZE] -= 1
            return False
        e = E[QUEUE, C[QUEUE_HEAD]]
        C[QUEUE_HEAD] = (C[QUEUE_HEAD] + 1) % E.shape[1]
        C[QUEUE_SIZE] -= 1
        F[QUEUED, e] = False
        old = E[X, e]
        if old == 0 or not F[ALIVE, e]:
            continue
        n = _triangles(N, P, C, E[EU, e], E[EV, e], pf, pg)
        for i in range(n):
            cnt[min(E[X, pf[i]], E[X, pg[i]], old)] += 1
        h = old
        total = 0
        while h > 0:
            total += cnt[h]
            if total >= h:
                break
            h -= 1
        for i in range(old + 1):
            cnt[i] = 0
        if h < old:
            _touch(E, C, e, old)
            E[X, e] = h
            for i in range(n):
                f, g = pf[i], pg[i]
                xf, xg = E[X, f], E[X, g]
                # f counted this triangle at its level (min(old, xg) >= xf) and no longer does (h < xf)
                if h < xf <= min(old, xg) and (not within_step or E[STEP_SEEN, f] == C[STEP]):
                    _push(E, F, C, f)
                if h < xg <= min(old, xf) and (not within_step or E[STEP_SEEN, g] == C[STEP]):
                    _push(E, F, C, g)
    return True


@_compiled
def _support(N, P, E, F, C, S, f):
    """How many triangles of ``f`` have both other edges at ``f``'s level or above (kept until a change near
    ``f`` forgets it: :func:`_end_step`)."""
    if not F[SUPPORT_KNOWN, f]:
        k = E[X, f]
        pf, pg = S[PF2], S[PG2]
        n = _triangles(N, P, C, E[EU, f], E[EV, f], pf, pg)
        count = 0
        for i in range(n):
            if E[X, pf[i]] >= k and E[X, pg[i]] >= k:
                count += 1
        E[SUPPORT, f] = count
        F[SUPPORT_KNOWN, f] = True
    return E[SUPPORT, f]


@_compiled
def _end_step(N, P, E, F, C, S):
    """Forget the supports a step may have changed: of each edge whose level changed (or that is new), and of
    its triangles' partners."""
    pf, pg = S[PF], S[PG]
    for i in range(C[STEP_N]):
        e = E[STEP_LIST, i]
        if F[ALIVE, e] and E[X, e] == E[STEP_ORIG, e]:
            continue
        F[SUPPORT_KNOWN, e] = False
        if F[ALIVE, e]:
            n = _triangles(N, P, C, E[EU, e], E[EV, e], pf, pg)
            for j in range(n):
                F[SUPPORT_KNOWN, pf[j]] = False
                F[SUPPORT_KNOWN, pg[j]] = False
    C[STEP_N] = 0
    C[STEP] += 1


@_compiled
def delete_edges(N, P, E, F, C, S, dels, limit):
    """Take the edges ``dels`` out, then settle from their triangles' partners; False when the work reached
    ``limit`` first (:func:`_settle`).

    Each edge's triangles are read just before it goes: a triangle of two
    deleted edges is seen by the first, so its third edge is queued (a deleted
    edge queued that way is passed over) and its support forgotten.
    """
    pf, pg = S[PF], S[PG]
    for e in dels:
        n = _triangles(N, P, C, E[EU, e], E[EV, e], pf, pg)
        for i in range(n):
            f, g = pf[i], pg[i]
            F[SUPPORT_KNOWN, f] = False
            F[SUPPORT_KNOWN, g] = False
            if E[X, f] <= min(E[X, e], E[X, g]):  # f counted this triangle at its level
                _push(E, F, C, f)
            if E[X, g] <= min(E[X, e], E[X, f]):
                _push(E, F, C, g)
        F[ALIVE, e] = False
        F[SUPPORT_KNOWN, e] = False
        _unlink(N, P, E[EU, e], E[EV, e])
        _unlink(N, P, E[EV, e], E[EU, e])
    settled = _settle(N, P, E, F, C, S, False, limit)
    _end_step(N, P, E, F, C, S)
    return settled


@_compiled
def _viable(N, P, E, F, C, S, p, k):
    """Can ``p`` be in a k-level edge's triangles of the (k+3)-truss after the insertion?  Above ``k``, or at
    ``k`` with enough support to rise itself."""
    return E[X, p] > k or (E[X, p] == k and _support(N, P, E, F, C, S, p) >= k + 1)


@_compiled
def insert_edges(N, P, E, F, C, S, ins, limit, done):
    """Put the edges ``ins`` in one at a time: bound, candidates, raise, settle (module notes).

    The search for candidates at level ``k`` passes over an edge whose
    support at its level is at most ``k`` (it cannot rise), and over one
    with at most ``k`` triangles of *viable* partners (:func:`_viable`): an
    edge that rises has ``k + 1`` triangles in the new (k+3)-truss, whose
    edges are all viable.  Stops before an insertion once the batch's work
    (``C[WORK]``, list entries scanned) reached ``limit`` (at once for a
    ``limit`` of 0) or once it is reached in a settling; ``done[0]`` is the
    number put in, ``done[1]`` 1 when a settling stopped half way.  Returns
    the candidates examined.
    """
    cnt, pf, pg = S[CNT], S[PF], S[PG]
    examined = 0
    done[0] = 0
    for e0 in ins:
        if C[WORK] >= limit:
            break
        done[0] += 1
        a, b = E[EU, e0], E[EV, e0]
        _link(N, P, C, a, b, e0)
        _link(N, P, C, b, a, e0)
        F[ALIVE, e0] = True
        _touch(E, C, e0, -1)
        n = _triangles(N, P, C, a, b, pf, pg)
        # e0's bound: the h-index of its triangles' values with every other edge one higher; its partners
        # have a triangle more, so their supports are forgotten now, before the search reads them
        for i in range(n):
            F[SUPPORT_KNOWN, pf[i]] = False
            F[SUPPORT_KNOWN, pg[i]] = False
            cnt[min(E[X, pf[i]] + 1, E[X, pg[i]] + 1, n)] += 1
        bound = n
        total = 0
        while bound > 0:
            total += cnt[bound]
            if total >= bound:
                break
            bound -= 1
        for i in range(n + 1):
            cnt[i] = 0
        E[X, e0] = bound
        C[STAMP] += 1
        mark = C[STAMP]
        top = 0
        for i in range(n):
            f, g = pf[i], pg[i]
            for side in range(2):
                if E[X, f] < bound and E[X, g] >= E[X, f] and E[SEEN, f] != mark:
                    E[SEEN, f] = mark
                    E[STACK, top] = f
                    top += 1
                f, g = g, f
        found = 0
        while top > 0:
            top -= 1
            f = E[STACK, top]
            k = E[X, f]
            examined += 1
            if _support(N, P, E, F, C, S, f) < k + 1:
                continue  # f cannot rise, nor carry a chain
            m = _triangles(N, P, C, E[EU, f], E[EV, f], pf, pg)
            strong = 0
            for i in range(m):
                if _viable(N, P, E, F, C, S, pf[i], k) and _viable(N, P, E, F, C, S, pg[i], k):
                    strong += 1
            if strong < k + 1:
                continue
            E[CANDIDATES, found] = f
            found += 1
            for i in range(m):
                g, h = pf[i], pg[i]
                if _viable(N, P, E, F, C, S, g, k) and _viable(N, P, E, F, C, S, h, k):
                    for side in range(2):
                        if E[X, g] == k and E[SEEN, g] != mark:
                            E[SEEN, g] = mark
                            E[STACK, top] = g
                            top += 1
                        g = h
        for j in range(found):
            f = E[CANDIDATES, j]
            _touch(E, C, f, E[X, f])
            E[X, f] += 1
            _push(E, F, C, f)
        _push(E, F, C, e0)
        settled = _settle(N, P, E, F, C, S, True, limit)
        _end_step(N, P, E, F, C, S)
        if not settled:
            done[1] = 1
            break
    return examined


@_compiled
def lookup_edges(N, P, a, b, out):
    """``out[i]``: the id of the edge ``a[i]-b[i]``, or -1 (codes beyond the index: -1)."""
    n_nodes = N.shape[1]
    for i in range(len(a)):
        if a[i] < 0 or b[i] < 0 or a[i] >= n_nodes or b[i] >= n_nodes:
            out[i] = -1
            continue
        p = _find(N, P, a[i], b[i])
        out[i] = P[EID, p] if p >= 0 else -1


@_compiled
def relink(N, P, E, F, C, ids):
    """Put the edges ``ids`` back into the lists (undoing a deletion)."""
    for e in ids:
        _link(N, P, C, E[EU, e], E[EV, e], e)
        _link(N, P, C, E[EV, e], E[EU, e], e)
        F[ALIVE, e] = True


@_compiled
def unlink(N, P, E, F, ids):
    """Take the edges ``ids`` out of the lists (undoing an insertion)."""
    for e in ids:
        if F[ALIVE, e]:
            _unlink(N, P, E[EU, e], E[EV, e])
            _unlink(N, P, E[EV, e], E[EU, e])
            F[ALIVE, e] = False


# --- the index -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchReport:
    """What one :meth:`TrussIndex.apply` did.

    ``touched``: edge ids whose level may differ from before the batch, with
    ``before`` (−1 for an edge the batch inserted); ``inserted`` the new
    edges' ids; ``examined`` the insertion candidates searched; ``work`` the
    list entries scanned for triangles; ``complete``
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


class TrussIndex:
    """Edges with their levels (trussness − 2) over dense node codes, kept exact under batches (module notes).

    Parameters
    ----------
    u, v : np.ndarray
        The edges' endpoint codes (``u != v``, each pair once); edge ``i`` is ``u[i]-v[i]``.
    levels : np.ndarray
        Each edge's trussness − 2 (from :func:`faq.graphs.truss.truss`).
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
        # a decomposition scans each edge's shorter list about twice (supports, then peeling)
        self.recompute_work = int(2 * np.minimum(degree[u], degree[v]).sum()) if m else 0

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

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.E, self.F, self.N, self.P, self.S)))

    # -- one batch --------------------------------------------------------------------

    def apply(self, deletes: np.ndarray, ins_u: np.ndarray, ins_v: np.ndarray,
              work_limit: Optional[int] = None) -> BatchReport:
        """Delete the live edges ``deletes`` (ids), then insert the absent pairs ``ins_u[i]-ins_v[i]`` (codes).

        The caller gives each pair once, present ones only in ``deletes`` and
        absent ones only in the insertions; :meth:`undo` takes the batch back.
        With ``work_limit``, the batch stops once its work (list entries
        scanned for triangles) reaches it, half way if need be (the report is
        then not ``complete`` and the batch must be undone; 0: before the
        first insertion); :attr:`recompute_work` is what a decomposition from
        scratch scans, about.
        """
        deletes = np.asarray(deletes, np.int64)
        ins_u, ins_v = np.asarray(ins_u, np.int64), np.asarray(ins_v, np.int64)
        self._room_for(ins_u, ins_v)
        C = self.C
        C[BATCH] += 1
        C[STEP] += 1  # a batch starts a step (one stopped half way may not have ended its own)
        C[TOUCHED_N] = C[QUEUE_HEAD] = C[QUEUE_SIZE] = C[STEP_N] = C[WORK] = 0
        limit = np.iinfo(np.int64).max if work_limit is None else int(work_limit)
        complete = True
        if len(deletes):
            complete = bool(delete_edges(self.N, self.P, self.E, self.F, C, self.S, deletes, limit))
        inserted = np.arange(self.m, self.m + len(ins_u), dtype=np.int64)
        examined = 0
        done = np.zeros(2, dtype=np.int64)
        if len(inserted):
            self.E[EU, inserted], self.E[EV, inserted] = ins_u, ins_v
            self.F[SUPPORT_KNOWN, inserted] = False
            self.m += len(inserted)
            if complete:
                examined = insert_edges(self.N, self.P, self.E, self.F, C, self.S, inserted, limit, done)
        put_in = int(done[0])
        complete = complete and put_in == len(inserted) and not done[1]
        self.live += put_in - len(deletes)
        touched = self.E[TOUCHED, : C[TOUCHED_N]].copy()
        return BatchReport(touched, self.E[ORIG, touched].copy(), inserted, deletes, int(examined), complete,
                           put_in, int(C[WORK]))

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
            E[list(_KEPT_ROWS), :old] = self.E[list(_KEPT_ROWS)]
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
    import sys

    from faq.graphs import truss_index as package  # compiled under the package's name, which later imports use

    try:
        print("faq: truss repair loops compiled" if package.warm_up() else "faq: numba is not installed; the truss "
              "repair runs in Python")
    except Exception as error:  # noqa: BLE001 - setup goes on; the first maintained truss compiles instead
        print(f"faq: could not compile the truss repair loops ahead of use ({error})", file=sys.stderr)
    sys.exit(0)
