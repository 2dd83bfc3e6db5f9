"""Truss decomposition: every edge's trussness, by triangle supports and peeling, in-process.

The *k-truss* of a simple undirected graph is its largest subgraph in which
every edge lies in at least ``k - 2`` triangles of the subgraph; an edge's
*trussness* is the largest ``k`` whose k-truss holds it (2 for an edge in no
triangle).  :func:`truss` computes every edge's trussness in three steps,
each a compiled loop (numba) over numpy arrays:

1. **supports** -- each edge's triangle count, by enumerating every triangle
   once over the degree-ordered orientation (the worst-case optimal order the
   triangle count uses: each edge from its endpoint of lower (degree, id),
   out-lists intersected by a merge);
2. **peeling** (Wang & Cheng, VLDB 2012) -- edges kept in buckets by support
   (a bin sort, O(1) a move); the edge of least support is removed at level
   ``support + 2``, and each triangle it closed with two live edges lowers
   their supports (not below the current level);
3. the triangles of a removed edge are found by walking the lower-degree
   endpoint's live neighbours and looking each up in the other's sorted
   list: O(min degree · log) a removal.

Edges are cleaned as for triangles: direction, self-loops and repeats
dropped.  The answer is exact against ``networkx.k_truss`` for every ``k``
(tests).

Examples
--------
>>> t = truss_decomposition([(1, 2), (2, 3), (1, 3), (3, 4), (1, 4), (4, 5)])   # two triangles sharing 1-3, a tail
>>> sorted(zip(*(t.table().column(c).to_pylist() for c in ("src", "dst", "trussness"))))
[(1, 2, 3), (1, 3, 3), (1, 4, 3), (2, 3, 3), (3, 4, 3), (4, 5, 2)]
>>> t.max_k, t.table(k=3).num_rows
(3, 5)
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from faq.compiled import COMPILED, kernels
from faq.events import Progress, notes_to
from faq.results import Answer, Explanation

__all__ = ["truss_decomposition", "decompose", "TrussResult", "checked_k", "supports", "peel", "undirected_edges",
           "warm_up"]

SRC, DST, TRUSSNESS = "src", "dst", "trussness"


class TrussResult(Answer):
    """Every edge's trussness (:func:`truss`): ``table(k=None)`` (Arrow, or a Spark DataFrame when the edges
    were one), ``arrow``, ``to_pandas``, ``df``, ``max_k``, ``counts``, ``plan`` and ``explain()`` (what ran:
    where and why, the phases and their seconds)."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, trussness: np.ndarray, k: Optional[int],
                 seconds: dict[str, float], *, session: Any = None, reason: str = "") -> None:
        self.src, self.dst, self.trussness, self.k, self.seconds = src, dst, trussness, k, seconds
        # the session of a Spark DataFrame given as the edges: the result's table is one too
        self.session, self.reason = session, reason

    @property
    def max_k(self) -> int:
        """The largest trussness (2 when there is no triangle, 0 for no edge)."""
        return int(self.trussness.max(initial=0))

    @property
    def counts(self) -> dict[int, int]:
        """Edges per trussness."""
        values, counts = np.unique(self.trussness, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts)}

    def table(self, k: Optional[int] = None) -> Any:
        """``(src, dst, trussness)``, ``src < dst``, in the input's kind: a Spark DataFrame when the edges were
        one (:attr:`df`), else Arrow; with ``k`` (default the one given to :func:`truss`) only the k-truss's
        edges."""
        return self.arrow(k) if self.session is None else self._spark_table(k)

    def arrow(self, k: Optional[int] = None) -> Any:
        """:meth:`table` as Arrow, whatever the input was."""
        import pyarrow as pa

        k = self.k if k is None else k
        keep = slice(None) if k is None else self.trussness >= k
        return pa.table({SRC: self.src[keep], DST: self.dst[keep], TRUSSNESS: self.trussness[keep]})

    def to_pandas(self, k: Optional[int] = None) -> Any:
        return self.arrow(k).to_pandas()

    @property
    def df(self) -> Any:
        """:meth:`table` as a Spark DataFrame."""
        return self._spark_table(None)

    def _spark_table(self, k: Optional[int]) -> Any:
        """:meth:`arrow` as a Spark DataFrame of the input's session (else faq's)."""
        from faq.spark import get_session

        from faq.handback import spark_frame

        return spark_frame(self.session if self.session is not None else get_session(), self.arrow(k))

    @property
    def plan(self) -> Explanation:
        """What ran: edges, the largest k, and each phase's seconds (supports, peeling)."""
        phases = tuple(f"{name}: {value:.3g} s" for name, value in self.seconds.items())
        where = (f"placement: driver ({self.reason})",) if self.reason else ()
        return Explanation("truss decomposition on the driver: each edge's triangle support, then peeling "
                           "(compiled loops)",
                           (*where, f"edges: {len(self.src)}", f"largest k: {self.max_k}", f"k: {self.k}", *phases))

    def summary(self) -> str:
        """Edges, the largest k and k (the one-line ``repr``)."""
        return f"edges={len(self.src)}, max_k={self.max_k}, k={self.k}"


def truss_decomposition(edges: Any, k: Optional[int] = None, *, progress: Progress = None) -> TrussResult:
    """Every edge's trussness (module notes); ``k``: the k-truss's edges by default in :meth:`TrussResult.table`.

    ``faq.truss`` is :func:`faq.graphs.trusses.truss`, which also keeps a truss
    current (``maintained=True``).

    Parameters
    ----------
    edges : path, Spark or pandas DataFrame (``src``, ``dst``), Arrow table, Factor or tuples
        The graph; read or collected on the driver.
    k : int, optional
        At least 2.
    progress : callable, optional
        Receives a note after each step, with its seconds.
    """
    from faq.spark import is_dataframe

    k = checked_k(k)
    started = time.perf_counter()
    src, dst = undirected_edges(edges)
    result = decompose(src, dst, progress=progress)
    result.seconds = {"load": time.perf_counter() - started - sum(result.seconds.values()), **result.seconds}
    result.k = k
    if is_dataframe(edges):  # the answer's table is of the input's kind
        result.session = edges.sparkSession
    return result


def checked_k(k: Any) -> Optional[int]:
    """``k`` as an int (None stays None), or ``INVALID_ARGUMENT`` unless an integer of at least 2.

    >>> checked_k(np.int64(3)), checked_k(None)
    (3, None)
    """
    from faq.errors import InvalidArgumentError

    if k is not None and (not isinstance(k, (int, np.integer)) or k < 2):
        raise InvalidArgumentError(argument="k", value=k, reason="a truss has k >= 2")
    return None if k is None else int(k)


def decompose(src: np.ndarray, dst: np.ndarray, *, progress: Progress = None) -> TrussResult:
    """Every edge's trussness of a graph given as the arrays of :func:`undirected_edges` (``src < dst``, no
    repeats): supports, then peeling (module notes).

    >>> decompose(np.array([1, 1, 2]), np.array([2, 3, 3])).trussness.tolist()
    [3, 3, 3]
    """
    note = notes_to(progress)  # lines to a reporter, NoteEvents to a plain callable
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    graph = _Graph(src, dst)
    support = supports(graph)
    seconds["supports"] = time.perf_counter() - t0
    note(f"{len(src):,} edges, {int(support.sum()) // 3:,} triangles ({seconds['supports']:.2f} s)")
    t0 = time.perf_counter()
    trussness = peel(graph, support)
    seconds["peel"] = time.perf_counter() - t0
    note(f"peeled: max trussness {int(trussness.max(initial=0))} ({seconds['peel']:.2f} s)")
    return TrussResult(src, dst, trussness, None, seconds)


def undirected_edges(edges: Any) -> tuple[np.ndarray, np.ndarray]:
    """The simple undirected graph of ``edges``: ``(src, dst)`` with ``src < dst``, sorted, no repeats.

    >>> [a.tolist() for a in undirected_edges([(2, 1), (1, 2), (3, 3), (2, 3)])]
    [[1, 2], [2, 3]]
    """
    from faq.io.local_edges import unique_pairs, without_self_loops

    src, dst = _edge_arrays(edges)
    low, high = without_self_loops(np.minimum(src, dst), np.maximum(src, dst))
    return unique_pairs(low, high)


def _edge_arrays(edges: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` ids on the driver: tuples, pandas and Arrow as they are, a local edge list read in numpy
    (no Spark), anything else through :func:`faq.graphs.edges.edge_factor` (collected within the fetch budget)."""
    import os

    from faq.input_kinds import PATH, ROWS, input_kind

    kind = input_kind(edges)
    if kind == ROWS:
        from faq.checks import pair_ids

        return pair_ids(edges, "truss edges")
    if kind == PATH:
        from faq.io.local_edges import read_edge_arrays

        arrays = read_edge_arrays(os.fspath(edges))  # None: not a local file Spark-free reading takes
        if arrays is not None:
            return arrays
    columns = _frame_columns(edges)
    if columns is not None:
        return columns
    from faq.graphs.edges import edge_factor, fetched_edge_arrays

    arrays = fetched_edge_arrays(edge_factor(edges))
    if arrays is None:
        from faq.errors import InvalidArgumentError

        raise InvalidArgumentError(argument="edges", value=type(edges).__name__,
                                   reason="the truss runs on the driver: the edges must have integer ids and fit "
                                          "the fetch budget (spark.faq.fetchMemory)")
    return arrays


def _frame_columns(edges: Any) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """A pandas frame's or an Arrow table's (any Arrow stream's: :mod:`faq.input_kinds`) ``src`` and ``dst``
    (checked: :func:`faq.checks.node_ids`), else None."""
    from faq.input_kinds import held_table, is_pandas

    edges = held_table(edges, "edges")
    if edges is None:
        return None
    if is_pandas(edges):
        return _checked_columns(edges, list(map(str, edges.columns)), edges.__getitem__)
    return _checked_columns(edges, edges.column_names, edges.column)


def _checked_columns(edges: Any, names: list, column: Any) -> tuple[np.ndarray, np.ndarray]:
    from faq.checks import node_ids
    from faq.errors import MissingColumnError

    for c in ("src", "dst"):
        if c not in names or names.count(c) > 1:
            raise MissingColumnError(column=c, available=names, source="truss edges (one column of each name)")
    return node_ids(column("src"), "truss edges", "src"), node_ids(column("dst"), "truss edges", "dst")


class _Graph:
    """Dense node ids, the degree-ordered out-lists (CSR) and the full sorted adjacency, with edge ids."""

    def __init__(self, src: np.ndarray, dst: np.ndarray) -> None:
        m = len(src)
        u, v = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        low = min(int(u.min()), int(v.min())) if m else 0
        high = max(int(u.max()), int(v.max())) if m else -1
        if low >= 0 and high < 2 * (2 * m) + 1024:  # ids dense enough to be the node numbers (no sort)
            n = high + 1
        else:
            nodes, codes = np.unique(np.concatenate([u, v]), return_inverse=True)
            n, u, v = len(nodes), codes[:m].astype(np.int64), codes[m:].astype(np.int64)
        degree = np.bincount(np.concatenate([u, v]), minlength=n)
        first = (degree[u] < degree[v]) | ((degree[u] == degree[v]) & (u < v))
        a, b = np.where(first, u, v), np.where(first, v, u)  # oriented: a before b
        ids = np.arange(m, dtype=np.int64)
        self.out_starts, self.out_nodes, self.out_edges = _csr(a, b, ids, n)
        ends = np.concatenate([u, v])
        self.adj_starts, self.adj_nodes, self.adj_edges = _csr(ends, np.concatenate([v, u]),
                                                               np.concatenate([ids, ids]), n)
        self.u, self.v, self.m = u, v, m


def _csr(rows: np.ndarray, cols: np.ndarray, ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lists by row, each sorted by column (one sort of a packed key: a lexsort of two columns costs ~2x)."""
    order = np.argsort(rows * np.int64(n) + cols) if n < 2**31 else np.lexsort((cols, rows))
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=starts[1:])
    return starts, cols[order].astype(np.int64), ids[order]


def supports(graph: _Graph) -> np.ndarray:
    """Each edge's triangle count (module notes, step 1)."""
    support = np.zeros(graph.m, dtype=np.int64)
    _kernels()[0](graph.out_starts, graph.out_nodes, graph.out_edges, support)
    return support


def peel(graph: _Graph, support: np.ndarray) -> np.ndarray:
    """Each edge's trussness from its support (module notes, steps 2 and 3)."""
    trussness = np.zeros(graph.m, dtype=np.int64)
    if graph.m:
        _kernels()[1](graph.adj_starts, graph.adj_nodes, graph.adj_edges, graph.u, graph.v, support.copy(),
                      trussness)
    return trussness


def _count_triangles(out_starts, out_nodes, out_edges, support):  # the loop numba compiles
    n = len(out_starts) - 1
    for a in range(n):
        for i in range(out_starts[a], out_starts[a + 1]):
            b = out_nodes[i]
            ab = out_edges[i]
            # merge out(a) after b's position with out(b): common w close a triangle a-b-w
            p, q = out_starts[a], out_starts[b]
            pe, qe = out_starts[a + 1], out_starts[b + 1]
            while p < pe and q < qe:
                x, y = out_nodes[p], out_nodes[q]
                if x < y:
                    p += 1
                elif y < x:
                    q += 1
                else:
                    support[ab] += 1
                    support[out_edges[p]] += 1
                    support[out_edges[q]] += 1
                    p += 1
                    q += 1


def _peel(adj_starts, adj_nodes, adj_edges, u, v, support, trussness):  # the loop numba compiles
    m = len(support)
    top = 0
    for e in range(m):
        if support[e] > top:
            top = support[e]
    # bin sort of the edges by support: bins[s] starts at bin_start[s] in ``order``; pos[e] is e's place
    counts = np.zeros(top + 2, dtype=np.int64)
    for e in range(m):
        counts[support[e]] += 1
    bin_start = np.zeros(top + 2, dtype=np.int64)
    total = 0
    for s in range(top + 1):
        bin_start[s] = total
        total += counts[s]
    bin_start[top + 1] = total
    fill = bin_start.copy()
    order = np.empty(m, dtype=np.int64)
    pos = np.empty(m, dtype=np.int64)
    for e in range(m):
        s = support[e]
        order[fill[s]] = e
        pos[e] = fill[s]
        fill[s] += 1
    alive = np.ones(m, dtype=np.bool_)
    level = 0
    for i in range(m):
        e = order[i]
        s = support[e]
        if s > level:
            level = s
        trussness[e] = level + 2
        alive[e] = False
        a, b = u[e], v[e]
        if adj_starts[a + 1] - adj_starts[a] > adj_starts[b + 1] - adj_starts[b]:
            a, b = b, a  # walk the smaller list, look up in the larger
        for j in range(adj_starts[a], adj_starts[a + 1]):
            e1 = adj_edges[j]
            if not alive[e1]:
                continue
            w = adj_nodes[j]
            lo, hi = adj_starts[b], adj_starts[b + 1]
            while lo < hi:
                mid = (lo + hi) >> 1
                if adj_nodes[mid] < w:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == adj_starts[b + 1] or adj_nodes[lo] != w:
                continue
            e2 = adj_edges[lo]
            if not alive[e2]:
                continue
            for f in (e1, e2):
                sf = support[f]
                if sf > level:  # move f to the front of its bin, then into the bin below
                    first = bin_start[sf]
                    g = order[first]
                    pf = pos[f]
                    order[first], order[pf] = f, g
                    pos[f], pos[g] = first, pf
                    bin_start[sf] += 1
                    support[f] = sf - 1


def _kernels() -> tuple:
    """The two loops, compiled on first use (numba caches them on disk; :func:`faq.compiled.kernels`)."""
    return kernels(_count_triangles, _peel)


def warm_up() -> bool:
    """Compile the two loops into numba's cache (``make`` runs ``python -m faq.graphs.truss`` once), checked
    on two triangles sharing an edge; False without numba.

    >>> warm_up() in (True, False)
    True
    """
    if not COMPILED:
        return False
    result = truss_decomposition([(1, 2), (2, 3), (1, 3), (3, 4), (1, 4)])
    if result.counts != {3: 5}:
        raise AssertionError(f"the compiled truss loops are wrong: {result.counts}")
    return True


if __name__ == "__main__":
    from faq.compiled import warm_main

    warm_main("faq.graphs.truss", "faq: truss loops compiled",
              "faq: numba is not installed; the truss runs in Python", "the truss loops")
