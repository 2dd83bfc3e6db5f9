"""A triangle bag over one set of pairs, counted by degree orientation with the pairs' directions as codes.

The bag ``a(x, y), b(y, z), c(x, z)`` with ⊗ = ×, ⊕ = + and every value one,
whose three atoms read one relation ``E`` -- a set of ordered pairs without
loops, as a graph's cleaned edges are -- sums to the number of ways to put
x, y, z on three distinct nodes so that each atom's pair is a pair of
``E``.  Every such binding lies on a triangle of the undirected graph
underneath, so the sum is a count over those triangles.

Each pair of ``E`` becomes an edge oriented from its lower end to its
higher one in the order of degree (then id), carrying a code of the
directions ``E`` holds it in: 1 from the lower end, 2 towards it, 3 both.
Every node then has few higher neighbours (the orientation that makes
triangle listing fast), and each triangle ``p < q < r`` is found once, at
its middle node ``q``: ``p`` a lower neighbour of ``q``, ``r`` a higher
neighbour of both.  Its three codes index a table of 64 counts made from the
atoms' variables (:func:`code_table`): how many of the six ways of putting
x, y, z on p, q, r give each atom a pair of ``E``.  An undirected triangle
count reads one entry of it; feed-forward triangles (``e(a,b), e(a,c),
e(b,c)``) and directed 3-cycles read others -- one pass serves every
direction.

For each middle ``q`` its higher neighbours are marked in a byte array over
the nodes (their codes); each lower neighbour ``p`` then reads its own row
after ``q`` -- the ``r > q`` it points to -- one byte each, with no search.
The work is the wedges at the lowest node of each triangle,
``Σ_p d⁺(p)·(d⁺(p) − 1) / 2``: at R-MAT 20 (16M pairs) 1.2e9, where marking
at ``p`` would read the wedges through the middle (4.4e9) and the
unoriented feed-forward join those through its middle variable (2.1e10).
R-MAT 20 in one process, two threads: the count 3.7-3.9 s and the
orientation 1.5-2 s, where the generic compiled loop took 17 s
(feed-forward, unoriented) and 21-24 s (undirected, oriented), and
dense-row sums 26 s and 223 s.  The orientation's passes and the count
are dealt to the same threads (by ranges of pairs or rows; the count by
middle nodes taken in turn).

The count is exact: at most six bindings a triangle, in int64.  The kernel
declines (None and why) where its premise fails -- a relation with loops
``(v, v)``, a pair given twice (its multiplicity would count), values other
than one, or three atoms that are not uses of one relation -- and the
caller runs the kernels that take any relation.

Examples
--------
>>> import numpy as np
>>> from faq.joins.table import Table
>>> src, dst = np.array([0, 1, 1, 2, 2]), np.array([1, 0, 2, 0, 3])   # 0 ⇄ 1, 1 → 2 → 0, 2 → 3
>>> e = lambda u, v: Table((u, v), {u: src, v: dst}, None)
>>> oriented_count([e("a", "b"), e("a", "c"), e("b", "c")])          # feed-forward: 1 → 2, 1 → 0, 2 → 0
(1, 'in-process triangle count (oriented by degree, direction codes, compiled): 2 threads')
>>> oriented_count([e("a", "b"), e("b", "c"), e("c", "a")])[0]       # the cycle 0 → 1 → 2 → 0, from each node
3
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from faq.compiled import kernels
from faq.joins.sparse_triangle import node_ids

__all__ = ["oriented_count", "oriented_index", "oriented_rows", "lower_neighbours", "count_part", "OrientedIndex",
           "OrientedRows", "LowerNeighbours", "code_table", "warm_task", "warm_up"]

# A code's bits: the pair held from the lower end to the higher one, and from the higher to the lower.
_UP, _DOWN = 1, 2


def code_table(atoms: Sequence[tuple[str, str]]) -> np.ndarray:
    """The count a triangle adds for each of its 64 code combinations, for a bag whose atoms are ``atoms``.

    A triangle ``p < q < r`` (in the orientation's order) with codes ``c_pq``, ``c_qr``, ``c_pr`` adds
    ``table[c_pq << 4 | c_qr << 2 | c_pr]``: the ways of putting the bag's three variables on p, q, r
    that give every atom ``(u, v)`` a pair ``E`` holds (``u``'s node to ``v``'s).

    >>> t = code_table([("a", "b"), ("a", "c"), ("b", "c")])     # feed-forward
    >>> int(t[1 << 4 | 1 << 2 | 1]), int(t[3 << 4 | 3 << 2 | 3])  # p→q→r, p→r: once; every pair both ways: 6
    (1, 6)
    >>> int(code_table([("a", "b"), ("b", "c"), ("c", "a")])[1 << 4 | 1 << 2 | 2])   # p→q→r→p: 3 rotations
    3
    """
    names = sorted({v for atom in atoms for v in atom})
    table = np.zeros(64, dtype=np.int64)
    for c_pq, c_qr, c_pr in itertools.product(range(4), repeat=3):
        held = set()
        for (low, high), code in (((0, 1), c_pq), ((1, 2), c_qr), ((0, 2), c_pr)):
            if code & _UP:
                held.add((low, high))
            if code & _DOWN:
                held.add((high, low))
        ways = 0
        for placed in itertools.permutations(range(3)):
            at = dict(zip(names, placed))
            ways += all((at[u], at[v]) in held for u, v in atoms)
        table[c_pq << 4 | c_qr << 2 | c_pr] = ways
    return table


def oriented_count(relations: Sequence[Any], threads: int = 2) -> tuple[Optional[int], str]:
    """The bag's sum over one relation's triangles, and a note; None and the reason where it declines.

    Parameters
    ----------
    relations : sequence of Table
        Three tables over the three pairs of three variables (integer keys, ``values`` None or all one),
        each a use of one relation: the same rows in their own column order.
    threads : int
        Threads the nodes are dealt to (the kernel releases the GIL).

    Returns
    -------
    (int, str) or (None, str)
        The count and how it ran; or None and why the kernel does not apply (see the module).

    Examples
    --------
    >>> from faq.joins.table import Table
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> e = lambda u, v: Table((u, v), {u: k4[0], v: k4[1]}, None)
    >>> oriented_count([e("a", "b"), e("b", "c"), e("a", "c")])[0]          # 4·3·2 ordered triples
    24
    >>> loop = lambda u, v: Table((u, v), {u: np.array([0, 1]), v: np.array([0, 2])}, None)
    >>> oriented_count([loop("a", "b"), loop("b", "c"), loop("a", "c")])[1]
    'the relation holds a loop (v, v)'
    """
    index, why = oriented_index(relations, threads)
    if index is None:
        return None, why
    if not index.pairs:
        return 0, "in-process triangle count (oriented by degree, direction codes): the relation is empty"
    threads = max(1, threads)
    total = sum(_each(threads, lambda t: count_part(index, t, threads)))
    return total, f"in-process triangle count (oriented by degree, direction codes, compiled): {threads} threads"


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class OrientedRows:
    """One relation's pairs oriented by degree -- a CSR from each node to its higher neighbours, entries
    ``high << 2 | code`` -- and the bag's table of counts: made once by :func:`oriented_rows`; what the driver
    ships to tasks (:func:`faq.joins.broadcast.oriented_in_tasks`), the transpose made where it is mapped
    (:func:`lower_neighbours`: 12 bytes a pair the file need not carry)."""

    indptr: np.ndarray
    entries: np.ndarray
    table: np.ndarray

    @property
    def pairs(self) -> int:
        """The oriented pairs (each unordered pair once)."""
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.entries.nbytes + self.table.nbytes


@dataclass(frozen=True, eq=False)
class LowerNeighbours:
    """The CSR of :class:`OrientedRows` transposed: each node's lower neighbours ``p`` and where the node stands
    in ``p``'s row (:func:`lower_neighbours`)."""

    low_ptr: np.ndarray
    lower: np.ndarray
    position: np.ndarray


@dataclass(frozen=True, eq=False)
class OrientedIndex:
    """What :func:`count_part` reads: the oriented rows and their transpose (:func:`oriented_index`, or
    :meth:`of` where the two were made apart)."""

    indptr: np.ndarray
    entries: np.ndarray
    low_ptr: np.ndarray
    lower: np.ndarray
    position: np.ndarray
    table: np.ndarray

    @classmethod
    def of(cls, rows: OrientedRows, lower: LowerNeighbours) -> "OrientedIndex":
        return cls(rows.indptr, rows.entries, lower.low_ptr, lower.lower, lower.position, rows.table)

    @property
    def pairs(self) -> int:
        """The oriented pairs (each unordered pair once)."""
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.indptr, self.entries, self.low_ptr, self.lower, self.position, self.table))


def oriented_index(relations: Sequence[Any], threads: int = 2) -> tuple[Optional[OrientedIndex], str]:
    """The :class:`OrientedIndex` of the bag (``relations`` as :func:`oriented_count` takes them), or None and
    why the kernel does not apply.

    >>> import numpy as np
    >>> from faq.joins.table import Table
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> e = lambda u, v: Table((u, v), {u: k4[0], v: k4[1]}, None)
    >>> index, _ = oriented_index([e("a", "b"), e("b", "c"), e("a", "c")])
    >>> index.pairs, count_part(index, 0, 2) + count_part(index, 1, 2)   # 6 pairs; the two parts add up to 24
    (6, 24)
    """
    rows, why = oriented_rows(relations, threads)
    if rows is None:
        return None, why
    return OrientedIndex.of(rows, lower_neighbours(rows, threads)), ""


def oriented_rows(relations: Sequence[Any], threads: int = 2) -> tuple[Optional[OrientedRows], str]:
    """The bag's :class:`OrientedRows`, or None and why the kernel does not apply (see the module).

    >>> import numpy as np
    >>> from faq.joins.table import Table
    >>> src, dst = np.array([0, 0, 1, 1, 2, 3]), np.array([1, 2, 2, 3, 3, 0])   # K4, each pair one way
    >>> feed_forward = (("a", "b"), ("a", "c"), ("b", "c"))
    >>> rows, _ = oriented_rows([Table((u, v), {u: src, v: dst}, None) for u, v in feed_forward])
    >>> rows.pairs, rows.indptr.tolist()          # each pair once, in its lower end's row
    (6, [0, 3, 5, 6, 6])
    >>> index = OrientedIndex.of(rows, lower_neighbours(rows))
    >>> sum(count_part(index, t, 3) for t in range(3))   # feed-forward: 0 → 1 → 2 and 1 → 2 → 3
    2
    """
    why = _not_one_set(relations)
    if why:
        return None, why
    first = relations[0]
    src, dst = (np.asarray(first.keys[v]) for v in first.variables)
    table = code_table([tuple(t.variables) for t in relations])
    if len(src) == 0:
        return OrientedRows(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), table), ""
    if bool(np.any(src == dst)):
        return None, "the relation holds a loop (v, v)"
    nodes, (src, dst) = node_ids([src, dst])
    if nodes >= 2**29:  # node ids are kept in int32 entries beside a 2-bit code
        return None, f"{nodes} nodes: more than the int32 entries hold"
    threads = max(1, threads)
    rank = _degree_rank(src, dst, nodes).astype(np.int32)  # nodes < 2**29
    rank_src, rank_dst = rank[src], rank[dst]
    low, high = np.minimum(rank_src, rank_dst), np.maximum(rank_src, rank_dst)
    code = np.where(rank_src < rank_dst, _UP, _DOWN).astype(np.uint8)
    del rank, rank_src, rank_dst
    indptr, entries, repeated = _oriented(low, high, code, nodes, threads)
    del low, high, code
    if repeated:
        return None, "the relation holds a pair twice (its multiplicity would count)"
    return OrientedRows(indptr, entries, table), ""


def lower_neighbours(rows: OrientedRows, threads: int = 1, part: int = 0, parts: int = 1) -> LowerNeighbours:
    """The transpose of ``rows``' CSR (its arrays may be read-only, as a mapped file's are): a counting pass and
    a scatter, each dealt to ``threads`` threads by ranges of rows.

    With ``parts`` > 1, only the lists of the nodes ``part`` modulo ``parts``: what
    ``count_part(index, part, parts)`` reads -- the tasks of a shipped index each make their own share.

    >>> import numpy as np
    >>> from faq.joins.table import Table
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> rows, _ = oriented_rows([Table((u, v), {u: k4[0], v: k4[1]}, None) for u, v in (("a", "b"), ("b", "c"),
    ...                                                                                  ("a", "c"))])
    >>> lower_neighbours(rows).low_ptr.tolist(), lower_neighbours(rows, part=1, parts=2).low_ptr.tolist()
    ([0, 0, 1, 3, 6], [0, 0, 1, 1, 4])
    >>> sum(count_part(OrientedIndex.of(rows, lower_neighbours(rows, part=t, parts=2)), t, 2) for t in range(2))
    24
    """
    nodes = len(rows.indptr) - 1
    if not rows.pairs:
        return LowerNeighbours(np.zeros(nodes + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                               np.zeros(0, dtype=np.int64))
    return LowerNeighbours(*_lower(rows.indptr, rows.entries, max(1, threads), part, max(1, parts)))


def count_part(index: OrientedIndex, part: int, parts: int) -> int:
    """The sum over the triangles whose middle node is ``part`` modulo ``parts`` (the parts add up to the
    bag's sum; the arrays may be read-only, as a mapped file's are)."""
    if not index.pairs:
        return 0
    return int(_count_kernel()(index.indptr, index.entries, index.low_ptr, index.lower, index.position, index.table,
                               part, parts))


def _not_one_set(relations: Sequence[Any]) -> str:
    """Why the bag is not three uses of one unit-valued relation ("" when it is)."""
    if len(relations) != 3 or any(len(t.variables) != 2 for t in relations):
        return "not three atoms of two variables"
    first = relations[0]
    rows = [tuple(np.asarray(t.keys[v]) for v in t.variables) for t in relations]
    for table, (a, b) in zip(relations, rows):
        if table.values is not None and not bool(np.all(np.asarray(table.values) == 1)):
            return "values other than one"
        if not all(x is y or (len(x) == len(y) and np.array_equal(x, y)) for x, y in zip((a, b), rows[0])):
            return "its atoms read different relations"
    if len({frozenset(t.variables) for t in relations}) != 3 or len(set(first.variables)) != 2:
        return "not a triangle of three variables"
    return ""


def _degree_rank(src: np.ndarray, dst: np.ndarray, nodes: int) -> np.ndarray:
    """Each node's position in the order of degree (pairs it is an end of), then id."""
    degree = np.bincount(src, minlength=nodes) + np.bincount(dst, minlength=nodes)
    rank = np.empty(nodes, dtype=np.int64)
    rank[np.argsort(degree, kind="stable")] = np.arange(nodes, dtype=np.int64)
    return rank


def _oriented(low, high, code, nodes, threads):
    """The pairs (ranks ``low < high``, direction ``code``) as a CSR from lower to higher rank, each entry
    ``high << 2 | code`` (int32: one stream for the count to read), each row in order, codes OR-ed where a
    pair is held both ways; and whether a pair (with one direction) was given twice.

    A counting pass puts each pair in its lower end's row, then each row is sorted in place and its
    repeats merged, then the rows are packed: each pass dealt to ``threads`` threads by ranges of
    pairs or of rows (one thread took 10 s of R-MAT 22's 65M pairs).
    """
    counts, scatter, sort_rows, gather = _kernels()[:4]
    spans = _spans(len(low), threads)
    per_thread = _each(threads, lambda t: counts(low, spans[t], spans[t + 1], nodes))
    starts = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.sum(per_thread, axis=0), out=starts[1:])
    fills = np.cumsum([starts[:-1], *per_thread[:-1]], axis=0)  # where each thread's pairs of a row begin
    packed = np.empty(len(low), dtype=np.int64)
    _each(threads, lambda t: scatter(low, high, code, spans[t], spans[t + 1], fills[t], packed))
    rows = [int(v) for v in np.searchsorted(starts, _spans(len(low), threads), side="right") - 1]
    rows[0], rows[-1] = 0, nodes
    kept = np.zeros(nodes, dtype=np.int64)
    repeated = any(_each(threads, lambda t: sort_rows(starts, packed, rows[t], rows[t + 1], kept)))
    indptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(kept, out=indptr[1:])
    entries = np.empty(int(indptr[-1]), dtype=np.int32)
    _each(threads, lambda t: gather(starts, packed, indptr, rows[t], rows[t + 1], entries))
    return indptr, entries, repeated


def _spans(total: int, threads: int) -> list[int]:
    """``threads`` + 1 bounds cutting ``range(total)`` into nearly equal spans."""
    return [total * t // threads for t in range(threads + 1)]


def _each(threads: int, run: Any) -> list:
    """``run(t)`` for each thread number, on that many threads (the kernels release the GIL)."""
    if threads == 1:
        return [run(0)]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))


def _low_counts(low, first, last, nodes):  # pragma: no cover - compiled
    """How many of the pairs ``first .. last - 1`` each node is the lower end of."""
    counts = np.zeros(nodes, dtype=np.int64)
    for k in range(first, last):
        counts[low[k]] += 1
    return counts


def _scatter(low, high, code, first, last, fill, packed):  # pragma: no cover - compiled
    """Pairs ``first .. last - 1`` into their lower end's row, from ``fill`` on, as ``high << 2 | code``."""
    for k in range(first, last):
        v = low[k]
        packed[fill[v]] = (np.int64(high[k]) << 2) | code[k]
        fill[v] += 1


def _sort_rows(starts, packed, first, last, kept):  # pragma: no cover - compiled
    """Rows ``first .. last - 1`` sorted in place, each pair once (codes OR-ed) at its row's start, ``kept``
    the entries left a row; whether a pair with one direction came twice."""
    repeated = False
    for v in range(first, last):
        row = packed[starts[v]:starts[v + 1]]
        row.sort()
        n, last_high = 0, -1
        for j in range(len(row)):
            h = row[j] >> 2
            if h == last_high:
                repeated |= (row[n - 1] & row[j] & 3) != 0
                row[n - 1] |= row[j] & 3
            else:
                row[n] = row[j]
                n += 1
                last_high = h
        kept[v] = n
    return repeated


def _gather(starts, packed, indptr, first, last, entries):  # pragma: no cover - compiled
    """Rows ``first .. last - 1``'s kept entries packed from ``indptr`` on."""
    for v in range(first, last):
        at = starts[v]
        for j in range(indptr[v], indptr[v + 1]):
            entries[j] = packed[at]
            at += 1


def _lower(indptr, entries, threads, part=0, parts=1):
    """Each node's lower neighbours ``p`` (``q`` in ``N⁺(p)``) and the position of ``q`` in ``p``'s row, for the
    nodes ``q`` that are ``part`` modulo ``parts`` (the others' lists left empty): the CSR transposed by a
    counting pass and a scatter, each dealt to ``threads`` threads by ranges of rows."""
    counts, scatter = kernels(_high_counts, _transposed)  # a task transposing a shipped index loads these alone
    nodes = len(indptr) - 1
    rows = [int(v) for v in np.searchsorted(indptr, _spans(len(entries), threads), side="right") - 1]
    rows[0], rows[-1] = 0, nodes
    per_thread = _each(threads, lambda t: counts(indptr, entries, rows[t], rows[t + 1], nodes))
    if parts > 1:
        others = np.arange(nodes) % parts != part
        for c in per_thread:
            c[others] = 0
    low_ptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.sum(per_thread, axis=0), out=low_ptr[1:])
    fills = np.cumsum([low_ptr[:-1], *per_thread[:-1]], axis=0)
    lower = np.empty(int(low_ptr[-1]), dtype=np.int32)
    position = np.empty(int(low_ptr[-1]), dtype=np.int64)
    _each(threads, lambda t: scatter(indptr, entries, rows[t], rows[t + 1], fills[t], lower, position, part, parts))
    return low_ptr, lower, position


def _high_counts(indptr, entries, first, last, nodes):  # pragma: no cover - compiled
    """How many entries of rows ``first .. last - 1`` point to each node."""
    counts = np.zeros(nodes, dtype=np.int64)
    for k in range(indptr[first], indptr[last]):
        counts[entries[k] >> 2] += 1
    return counts


def _transposed(indptr, entries, first, last, fill, lower, position, part, parts):  # pragma: no cover - compiled
    """Rows ``first .. last - 1``'s entries into their higher end's list, from ``fill`` on (the higher ends
    ``part`` modulo ``parts`` only)."""
    for p in range(first, last):
        for k in range(indptr[p], indptr[p + 1]):
            q = entries[k] >> 2
            if parts > 1 and q % parts != part:
                continue
            lower[fill[q]] = p
            position[fill[q]] = k
            fill[q] += 1


def _count(indptr, entries, low_ptr, lower, position, table, first, step):  # pragma: no cover - compiled
    """Σ of ``table`` over the triangles whose middle node is ``first, first + step, ...``.

    For a middle ``q`` its higher neighbours are marked (their codes); each lower neighbour ``p`` then
    reads the entries of its row after ``q`` (the ``r > q`` of ``N⁺(p)``): the work is the wedges at the
    lowest node, ``Σ_p d⁺(p)·(d⁺(p) - 1) / 2``, 3.6x fewer than the wedges through the middle at R-MAT 20.
    """
    nodes = len(indptr) - 1
    mark = np.zeros(nodes, dtype=np.uint8)
    total = 0
    for q in range(first, nodes, step):
        start, stop = indptr[q], indptr[q + 1]
        if stop == start or low_ptr[q + 1] == low_ptr[q]:
            continue
        for k in range(start, stop):
            mark[entries[k] >> 2] = entries[k] & 3
        for i in range(low_ptr[q], low_ptr[q + 1]):
            p, k = lower[i], position[i]
            pq = np.int64(entries[k] & 3) << 4
            for j in range(k + 1, indptr[p + 1]):
                e = entries[j]
                total += table[pq | (np.int64(mark[e >> 2]) << 2) | (e & 3)]
        for k in range(start, stop):
            mark[entries[k] >> 2] = 0
    return total


def _kernels() -> tuple:
    return kernels(_low_counts, _scatter, _sort_rows, _gather, _high_counts, _transposed) + (_count_kernel(),)


def _count_kernel():
    """The count alone: a task that counts its share from a shipped index loads no other kernel."""
    return kernels(_count)[0]


def warm_task() -> None:
    """Load what a task counting from a shipped index runs -- its transpose's and the count's kernels at a mapped
    file's read-only signature -- from numba's cache (a Spark worker, in the background after
    :func:`faq.workers.probe_workers`: :data:`faq.joins.broadcast.ORIENTED_WARM`).

    >>> warm_task()
    """
    rows = OrientedRows(np.array([0, 1, 1], dtype=np.int64), np.array([1 << 2 | _UP], dtype=np.int32),
                        code_table([("a", "b"), ("b", "c"), ("a", "c")]))
    for array in (rows.indptr, rows.entries, rows.table):
        array.flags.writeable = False
    count_part(OrientedIndex.of(rows, lower_neighbours(rows, 1, 1, 2)), 1, 2)


def warm_up() -> list[str]:
    """Compile (or load) the kernels on a small graph (``python -m faq.warm``)."""
    from faq.joins.table import Table

    src, dst = np.array([0, 0, 1, 1]), np.array([1, 2, 2, 0])
    e = [Table((u, v), {u: src, v: dst}, None) for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
    oriented_count(e, threads=1)
    oriented_count(e, threads=2)
    rows, _ = oriented_rows(e, threads=1)
    for array in (rows.indptr, rows.entries, rows.table):
        array.flags.writeable = False  # the tasks read a mapped file's arrays: numba compiles that signature apart
    lower_neighbours(rows, threads=1, part=1, parts=2)  # a task's share, from a mapped file's read-only arrays
    count_part(OrientedIndex.of(rows, lower_neighbours(rows, threads=1)), 0, 1)
    return [f"faq.joins.oriented_triangle.{f.__name__}"
            for f in (_low_counts, _scatter, _sort_rows, _gather, _high_counts, _transposed, _count)]

