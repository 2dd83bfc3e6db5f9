"""The compiled loops that keep every edge's trussness exact as edges come and go (:mod:`faq.graphs.truss_index`).

Why the repair is exact
-----------------------
Write ``H(x)(e)`` for the h-index of the values ``min(x(f), x(g))`` over the
triangles ``(e, f, g)`` of the current graph: the largest ``h`` such that at
least ``h`` of them are ``>= h``.  An edge's *level* is its trussness − 2;
the levels ``t`` satisfy ``t = H(t)``, and more usefully:

* any ``x`` with ``x <= H(x)`` everywhere is ``<= t`` (the edges with
  ``x >= h`` form a subgraph whose every edge closes ``h`` triangles in it,
  so they are in the (h+2)-truss);
* so from any upper bound ``x >= t``, repeating ``x(e) <- min(x(e), H(x)(e))``
  over the edges where it may change ends exactly at ``t`` (each step keeps
  ``x >= t`` because ``H`` is monotone, and it stops where ``x <= H(x)``).

:func:`_settle` runs that loop over a work queue.  An edge whose value drops
from ``old`` to ``h`` puts back on the queue a triangle partner ``f`` only
when ``h < x(f) <= min(old, x(g))``: only then did ``f`` count that triangle
at its own level and no longer does.  Sariyüce, Seshadhri and Pinar (VLDB
2018) compute decompositions by this iteration from the supports; here it
starts from the old answer, so the work is local:

* **deletions** (a batch at once): the old levels are an upper bound of the
  new ones (a subgraph's trusses are smaller), and only the partners of the
  deleted edges' triangles can be above their new ``H``: they start the queue;
* **an insertion** ``e0`` (one at a time): no other edge's trussness rises
  by more than one (a k-truss of the new graph without ``e0`` loses one
  triangle an edge, so it lies in the old (k−1)-truss), and the edges at
  level ``k`` that rise form, with ``e0``, a set joined by triangles of the
  new (k+3)-truss (else the old graph would hold them at ``k + 1``
  already).  :func:`insert_edges` searches for them from ``e0`` (levels
  below ``e0``'s bound only; the candidate set of Huang et al., SIGMOD
  2014), passing over an edge whose *support at its level* (triangles with
  both partners at or above it) is at most ``k``, and over one with at most
  ``k`` triangles of *viable* partners (above ``k``, or at ``k`` with support
  above ``k``): an edge that rises has ``k + 1`` triangles of edges that are
  all viable.  The candidates are raised by one, ``e0`` gets the h-index of
  its triangles' values plus one, and the loop settles -- re-queuing only
  edges of this insertion: the others keep their levels, which are final.

Supports at a level are kept per edge and forgotten (:func:`_end_step`)
when a change near the edge can alter them: the edge's level, a partner's
level, a triangle gained or lost.

The work of a batch is counted as the neighbour-list entries read to find
triangles (``C[WORK]``: both lists of a merge, a binary search's steps for
each entry of the shorter list); a limit stops a batch half way, to be undone
(:meth:`~faq.graphs.truss_index.TrussIndex.undo`) and recomputed instead.

Known limit: the search still examines many edges that do not rise where
large groups of edges share a level (dense social graphs): the order-based
maintenance of Zhang and Yu (SIGMOD 2019), which keeps a peeling order to
rule them out, is not built.
"""

from __future__ import annotations

from faq.compiled import compiled as _compiled
# The merge of two neighbour lists is used up to this ratio of their lengths; beyond it, binary search.
MERGE_RATIO = 8


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
# pool slots used, work done (list entries scanned for triangles: what a batch costs), h-indexes computed.
TOUCHED_N, QUEUE_HEAD, QUEUE_SIZE, STEP_N, STEP, BATCH, STAMP, USED, WORK, SETTLED = range(10)
COUNTERS = 10
# Rows of the node-sized scratch S: h-index counts, two triangle lists (the second for supports).
CNT, PF, PG, PF2, PG2 = range(5)

# E's rows that are state (kept when E grows); the others are scratch.
KEPT_ROWS = (EU, EV, X, SUPPORT, ORIG, SEEN_BATCH, STEP_ORIG, STEP_SEEN, SEEN)


# --- the compiled loops ------------------------------------------------------------------------


@_compiled
def search_steps(n):
    """The steps of a binary search in ``n`` entries, and one: ``1 + ceil(log2(n))``, the work unit of a lookup."""
    steps = 1
    while n > 1:
        n = (n + 1) >> 1
        steps += 1
    return steps


@_compiled
def _lower_bound(P, lo, hi, b):
    """The first position in ``lo .. hi`` of the sorted pool whose neighbour is not below ``b``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if P[NBR, mid] < b:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_compiled
def _find(N, P, a, b):
    """Position of ``b`` in node ``a``'s sorted list, or -1."""
    end = N[START, a] + N[LENGTH, a]
    at = _lower_bound(P, N[START, a], end, b)
    if at < end and P[NBR, at] == b:
        return at
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
    lo = _lower_bound(P, s, s + n, b)
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
    p, pe = N[START, a], N[START, a] + N[LENGTH, a]
    q, qe = N[START, b], N[START, b] + N[LENGTH, b]
    if N[LENGTH, b] <= MERGE_RATIO * N[LENGTH, a]:
        C[WORK] += N[LENGTH, a] + N[LENGTH, b]
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
    C[WORK] += N[LENGTH, a] * search_steps(N[LENGTH, b])
    for i in range(p, pe):
        j = _find(N, P, b, P[NBR, i])
        if j >= 0:
            pf[count] = P[EID, i]
            pg[count] = P[EID, j]
            count += 1
    return count


@_compiled
def _h_index(cnt, top):
    """The largest ``h <= top`` with at least ``h`` values ``>= h``, where ``cnt[v]`` counts the values
    equal to ``v`` (capped at ``top``); ``cnt`` is cleared for the next use."""
    h = top
    total = 0
    while h > 0:
        total += cnt[h]
        if total >= h:
            break
        h -= 1
    for i in range(top + 1):
        cnt[i] = 0
    return h


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
        C[SETTLED] += 1
        n = _triangles(N, P, C, E[EU, e], E[EV, e], pf, pg)
        for i in range(n):
            cnt[min(E[X, pf[i]], E[X, pg[i]], old)] += 1
        h = _h_index(cnt, old)
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
def _insertion_bound(E, F, cnt, pf, pg, n):
    """A new edge's bound: the h-index of its ``n`` triangles' values (in ``pf``, ``pg``) with every other
    edge one higher.  Its partners have a triangle more, so their supports are forgotten here, before the
    search reads them."""
    for i in range(n):
        F[SUPPORT_KNOWN, pf[i]] = False
        F[SUPPORT_KNOWN, pg[i]] = False
        cnt[min(E[X, pf[i]] + 1, E[X, pg[i]] + 1, n)] += 1
    return _h_index(cnt, n)


@_compiled
def insert_edges(N, P, E, F, C, S, ins, limit, done):
    """Put the edges ``ins`` in one at a time: bound, candidates, raise, settle (module notes).

    The search for candidates at level ``k`` passes over an edge whose
    support at its level is at most ``k`` (it cannot rise), and over one
    with at most ``k`` triangles of *viable* partners (:func:`_viable`): an
    edge that rises has ``k + 1`` triangles in the new (k+3)-truss, whose
    edges are all viable.  Stops before an insertion once the batch's work
    (``C[WORK]``, list entries scanned) reached ``limit`` (at once for a
    ``limit`` of 0) or once it is reached in a search or a settling;
    ``done[0]`` is the number put in, ``done[1]`` 1 when one stopped half way.  Returns
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
        bound = _insertion_bound(E, F, cnt, pf, pg, n)
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
            if C[WORK] >= limit:  # a search can be long: stop inside it too (the batch is undone)
                done[1] = 1
                return examined
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
