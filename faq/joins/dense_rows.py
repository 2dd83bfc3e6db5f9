"""A triangle-shaped bag summed to one value row by row, each row of its mask held in a dense array.

The bag ``a(x, y), b(y, z), c(x, z)``, ⊗ = × and ⊕ = + over int64 or
float64, every variable summed away, is

    Σ_x Σ_{y ∈ a(x, ·)} a(x, y) · Σ_{z ∈ b(y, ·)} b(y, z) · c(x, z).

For each ``x`` the row ``c(x, ·)`` is scattered into a dense array over the
nodes; every 2-path ``x → y → z`` then costs one multiply-add and one read
of that array, with no index to build, no intersection and no product
materialised (Gustavson's sparse accumulator, used here as a mask).  The
work is the wedges through ``y``, ``Σ_y deg_a(y) · deg_b(y)``, plus the
rows: of the three variables the one with the fewest wedges is the middle.

That is cheap exactly when the wedges are few for the inputs' size -- a
4-cycle's second step in pieces (:mod:`faq.insideout.pieces`): its mask the
2-paths ``t1(b, d)`` of one range of ``b``, tens of millions of rows, its
wedges about as many.  The compiled loop would sort that mask into an index
first (3-9 s a piece at R-MAT 16); these sums take 0.5-1.5 s.  A graph's
degree-oriented triangle count has a few dozen wedges an edge (faster here
too); a feed-forward one, unoriented, has hundreds through the hubs
(R-MAT 17: 1.1e9 for 1.9M edges), where the loop's intersections are
faster: :func:`bag_total` declines when the wedges pass
:data:`WEDGES_PER_ROW` a row of input, and the caller runs the loop.

A 4-cycle ``a(w, x), b(x, y), c(y, z), d(z, w)`` summed whole runs the same
way without its intermediate (:func:`cycle_total`): for each row ``x`` its
2-paths through one middle are summed into a dense row over the opposite
variable, which its 2-paths through the other middle then read -- the
plan's two steps (the 2-paths ``t1(x, z)`` made, then joined to the other
two atoms) fused, so its work is the wedges through the two middles and
nothing is held but the inputs and a dense row a thread.  R-MAT 18's
directed 4-cycle (2.9e9 wedges a middle) took 19 s this way, where its
plan in 102 pieces took 335 s.

int64 sums are exact unless they wrap: the sums run only when a bound on
every partial sum is below :data:`~faq.joins.sparse_triangle.INT64_SAFE`
(for a 4-cycle: its dense rows bounded before, its total checked after).

Examples
--------
>>> import numpy as np
>>> from faq.joins.table import Table
>>> src, dst = np.array([0, 0, 1, 2, 0]), np.array([1, 2, 2, 3, 3])   # 0→1→2, 0→2; 0→2→3, 0→3
>>> e = lambda u, v: Table((u, v), {u: src, v: dst}, None)
>>> total, note = bag_total([e("a", "b"), e("b", "c"), e("a", "c")], np.dtype(np.int64))
>>> int(total), note
(2, 'in-process triangle join (dense-row sums, compiled): 3 wedges through b, 2 threads')
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

import numpy as np

from faq.compiled import kernels
from faq.joins.sparse_triangle import INT64_SAFE, node_ids

__all__ = ["WEDGES_PER_ROW", "bag_total", "cycle_order", "cycle_total", "wedges", "warm_up"]

#: Most wedges a row of input for which the dense-row sums run; above it the compiled loop runs.  Measured
#: on two threads, the same bag both ways in one process: a 4-cycle's second step in pieces at R-MAT 16,
#: 2.4 wedges a row, 1.5 s against the loop's 8.9 s; an undirected, degree-oriented triangle count of
#: R-MAT 17, 30 a row, 0.9 s against 1.3 s, and of R-MAT 20, 52 a row, 10.1 s against 15.6 s; a
#: feed-forward count of R-MAT 17, 188 a row, 2.5 s against 1.1 s.  Their ratio grows with the wedges
#: a row (0.0125 · wedges a row in both triangle counts): even at about 80.
WEDGES_PER_ROW = 64.0


def wedges(left: np.ndarray, right: np.ndarray, nodes: int, degrees: Optional[dict] = None) -> int:
    """The 2-paths through a middle variable: ``Σ_y`` (rows of one relation at y) · (rows of the other at y).

    ``degrees`` keeps each array's counts by its identity, for uses of one relation that pass the same arrays.

    >>> wedges(np.array([1, 1, 2]), np.array([1, 2, 2, 2]), 3)   # 2·1 + 1·3
    5
    """
    degrees = {} if degrees is None else degrees
    for ids in (left, right):
        if id(ids) not in degrees:
            degrees[id(ids)] = (ids, np.bincount(ids, minlength=nodes))  # the array kept: its id stays its own
    return int(np.dot(degrees[id(left)][1], degrees[id(right)][1]))


def bag_total(relations: Sequence[Any], dtype: Any, threads: int = 2,
              within: Optional[float] = None) -> tuple[Any, str]:
    """``Σ a(x, y)·b(y, z)·c(x, z)`` of a triangle-shaped bag, and a note; None (and why) when declined.

    Parameters
    ----------
    relations : sequence of Table
        Three tables over the three pairs of three variables (integer keys;
        ``values`` None for all ones), in any order and orientation.
        Repeated rows are summed, as ⊕ = + distributes over them.
    dtype : numpy dtype or type
        int64 or float64: the values' and the sum's type.
    threads : int
        Threads the rows are dealt to (the kernel releases the GIL).
    within : float, optional
        The most wedges a row of input (default :data:`WEDGES_PER_ROW`).

    Returns
    -------
    (numpy scalar, str) or (None, str)
        The sum and how it ran; or None and the reason it declined (too
        many wedges for the inputs, or int64 values large enough that a
        partial sum could wrap): the caller runs the compiled loop then.

    Examples
    --------
    >>> from faq.joins.table import Table
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> e = lambda u, v: Table((u, v), {u: k4[0], v: k4[1]}, None)
    >>> int(bag_total([e("a", "b"), e("b", "c"), e("a", "c")], np.dtype(np.int64))[0])   # 4·3·2 ordered triples
    24
    >>> bag_total([e("a", "b"), e("b", "c"), e("a", "c")], np.dtype(np.int64), within=0.5)[1]   # K4: one wedge a row
    'its 36 wedges through a are more than 0.5 a row of its 36 rows of input'
    """
    dtype = np.dtype(dtype)
    within = WEDGES_PER_ROW if within is None else within
    names = sorted(set().union(*(t.variables for t in relations)))
    if any(t.rows == 0 for t in relations):
        return dtype.type(0), "in-process triangle join (dense-row sums, compiled): an input is empty"
    by_pair = {frozenset(t.variables): t for t in relations}
    nodes, column = _columns(relations)
    degrees: dict = {}

    def through(y: str) -> int:
        x, z = (v for v in names if v != y)
        return wedges(column[frozenset((x, y)), y], column[frozenset((y, z)), y], nodes, degrees)

    counts = {y: through(y) for y in names}
    middle = min(names, key=lambda y: counts[y])
    rows = sum(t.rows for t in relations)
    if counts[middle] > within * max(rows, 1):
        return None, (f"its {counts[middle]} wedges through {middle} are more than {within:g} a row of its "
                      f"{rows} rows of input")
    x, z = (v for v in names if v != middle)
    parts = [_csr(column, by_pair[frozenset(p)], p, nodes, dtype)
             for p in ((x, middle), (middle, z), (x, z))]
    if dtype.kind == "i" and not _int64_safe(parts, counts[middle]):
        return None, "int64 values too large to bound its sums below 2^62"
    total = _dealt(parts, nodes, counts[middle], dtype, max(1, threads))
    return total, (f"in-process triangle join (dense-row sums, compiled): {counts[middle]} wedges through "
                   f"{middle}, {max(1, threads)} threads")


def cycle_order(uses: Sequence[Sequence[str]]) -> Optional[tuple[str, str, str, str]]:
    """The variables ``(v0, v1, v2, v3)`` of four binary uses over the pairs ``v0v1, v1v2, v2v3, v3v0``
    (four distinct variables, each pair once), or None when they are not a 4-cycle.

    >>> cycle_order([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    ('a', 'b', 'c', 'd')
    >>> cycle_order([("a", "b"), ("c", "d"), ("b", "c"), ("a", "d")])
    ('a', 'b', 'c', 'd')
    >>> cycle_order([("a", "b"), ("b", "c"), ("c", "a"), ("a", "d")]) is None   # a triangle and a tail
    True
    """
    pairs = {frozenset(u) for u in uses if len(u) == 2 and u[0] != u[1]}
    names = sorted(frozenset().union(*pairs)) if pairs else []
    if len(uses) != 4 or len(pairs) != 4 or len(names) != 4:
        return None
    if any(sum(v in p for p in pairs) != 2 for v in names):  # every variable in two pairs: one 4-cycle
        return None
    first = names[0]
    second = min(v for p in pairs if first in p for v in p if v != first)
    third = next(v for p in pairs if second in p for v in p if v not in (first, second))
    fourth = next(v for v in names if v not in (first, second, third))
    return first, second, third, fourth


def cycle_total(relations: Sequence[Any], dtype: Any, threads: int = 2) -> tuple[Any, str]:
    """``Σ a(w, x)·b(x, y)·c(y, z)·d(z, w)`` of a 4-cycle bag, and a note; None (and why) when declined.

    Of the two ways to pair the opposite variables, the one with fewer
    wedges through its two middles: for each row variable ``x``, its 2-paths
    through one middle summed per end ``z`` into a dense row, then each of
    its 2-paths through the other middle reads that row (the nodes written are
    listed, and zeroed once read, so no read needs a test).  Declines only int64
    values whose sums could pass 2^62 (bounded before for the dense rows,
    checked after for the total, in float64 beside it).

    Parameters
    ----------
    relations : sequence of Table
        Four tables over the pairs of a 4-cycle of variables (:func:`cycle_order`),
        in any order and orientation (integer keys; ``values`` None for all ones).
    dtype : numpy dtype or type
        int64 or float64.
    threads : int
        Threads the rows are dealt to, by their wedges.

    Examples
    --------
    >>> from faq.joins.table import Table
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> e = lambda u, v: Table((u, v), {u: k4[0], v: k4[1]}, None)
    >>> total, note = cycle_total([e("a", "b"), e("b", "c"), e("c", "d"), e("d", "a")], np.dtype(np.int64))
    >>> int(total)   # closed 4-walks of K4: trace(A^4) = 3^4 + 3·(-1)^4
    84
    >>> note
    'in-process 4-cycle join (dense-row sums, compiled): rows of a, its 2-paths through b (36 wedges) summed into a dense row of c and read by those through d (36); 2 threads'
    """
    dtype = np.dtype(dtype)
    order = cycle_order([t.variables for t in relations])
    if order is None:
        from faq.errors import PlanError

        raise PlanError(reason=f"dense-row 4-cycle sums need the four pairs of a 4-cycle, not "
                               f"{[t.variables for t in relations]}")
    if any(t.rows == 0 for t in relations):
        return dtype.type(0), "in-process 4-cycle join (dense-row sums, compiled): an input is empty"
    by_pair = {frozenset(t.variables): t for t in relations}
    nodes, column = _columns(relations, by_degree=True)
    degrees: dict = {}

    def through(middle: str, x: str, z: str) -> int:
        return wedges(column[frozenset((x, middle)), middle], column[frozenset((middle, z)), middle], nodes, degrees)

    v0, v1, v2, v3 = order
    options = [((v0, v2), (v1, v3)), ((v1, v3), (v2, v0))]  # (rows x, dense z), (middle 1, middle 2)
    (x, z), (m1, m2) = min(options, key=lambda o: through(o[1][0], *o[0]) + through(o[1][1], *o[0]))
    w1, w2 = through(m1, x, z), through(m2, x, z)
    parts = [_csr(column, by_pair[frozenset(p)], p, nodes, dtype) for p in ((x, m1), (m1, z), (x, m2), (m2, z))]
    if dtype.kind == "i" and not _rows_bounded(parts, w1):
        return None, "int64 values too large to bound its dense rows below 2^62"
    signed = dtype.kind == "i" and any(v.size and v.min() < 0 for _, _, v in parts)
    total, absolute = _cycle_dealt(parts, nodes, w1 + w2, dtype, max(1, threads), signed)
    if dtype.kind == "i" and not absolute < INT64_SAFE / 2:
        return None, "int64 sums that could pass 2^62"
    return total, (f"in-process 4-cycle join (dense-row sums, compiled): rows of {x}, its 2-paths through {m1} "
                   f"({w1} wedges) summed into a dense row of {z} and read by those through {m2} ({w2}); "
                   f"{max(1, threads)} threads")


def _columns(relations: Sequence[Any], by_degree: bool = False) -> tuple[int, dict]:
    """The number of nodes, and each relation's columns as node ids by (its pair of variables,
    variable); ``by_degree``: numbered by falling degree (:func:`_by_degree`)."""
    nodes, ids = node_ids([np.asarray(t.keys[v]) for t in relations for v in t.variables])
    if by_degree:
        ids = _by_degree(ids, nodes)
    position = iter(ids)
    return nodes, {(frozenset(t.variables), v): next(position) for t in relations for v in t.variables}


def _by_degree(ids: list[np.ndarray], nodes: int) -> list[np.ndarray]:
    """The node ids renumbered by falling degree (entries in every array), each distinct array once.

    The dense rows are read at random: with the busiest nodes first their entries share cache lines
    (R-MAT ids are a random permutation).  R-MAT 18's 4-cycle: 8.8 s against 10.5 s unordered.

    >>> [a.tolist() for a in _by_degree([np.array([2, 2, 0]), np.array([1, 2])], 3)]
    [[0, 0, 1], [2, 0]]
    """
    distinct = list({id(a): a for a in ids}.values())
    degree = sum(np.bincount(a, minlength=nodes) for a in distinct)
    rank = np.empty(nodes, dtype=np.int64)
    rank[np.argsort(-degree, kind="stable")] = np.arange(nodes)
    renumbered = {id(a): rank[a] for a in distinct}
    return [renumbered[id(a)] for a in ids]


def _rows_bounded(parts: list, wedge_count: int) -> bool:
    """Whether a dense row's int64 sums stay below :data:`INT64_SAFE`, and each term read from it
    (its value times the reading row's sum over it and that 2-path's first value) too."""
    def largest(values: np.ndarray) -> float:
        return float(np.abs(values).max()) if values.size else 0.0

    (_, _, a), (_, _, b), (_, _, c), (starts, _, d) = parts
    row = largest(a) * largest(b) * max(wedge_count, 1)
    longest = float(np.diff(starts).max(initial=0))
    return row * largest(c) * largest(d) * max(longest, 1.0) < INT64_SAFE / 2


def _cycle_dealt(parts: list, nodes: int, wedge_count: int, dtype: np.dtype, threads: int,
                 signed: bool) -> tuple[Any, float]:
    """The 4-cycle's sum (and a bound on its partial sums' absolute values) over rows dealt to
    ``threads`` contiguous ranges of about equal wedges."""
    (s1, c1, v1), (s2, c2, v2), (s3, c3, v3), (s4, c4, v4) = parts
    row_work = 1 + _row_totals(np.diff(s2)[c1], s1) + _row_totals(np.diff(s4)[c3], s3)
    cuts = np.searchsorted(np.cumsum(row_work), np.linspace(0, row_work.sum(), threads + 1)[1:-1])
    bounds = [0, *cuts.tolist(), nodes]
    run = _kernels()[2]

    def part(k: int) -> tuple[Any, float]:
        return run(bounds[k], bounds[k + 1], s1, c1, v1, s2, c2, v2, s3, c3, v3, s4, c4, v4, signed,
                   np.zeros(nodes, dtype=dtype), np.zeros(nodes, dtype=np.uint8), np.empty(nodes + 1, dtype=np.int64))

    if threads == 1 or wedge_count < (1 << 16):
        bounds, threads = [0, nodes], 1
    with ThreadPoolExecutor(threads) as pool:
        sums = list(pool.map(part, range(threads)))
    return dtype.type(sum(t for t, _ in sums)), float(sum(a for _, a in sums))


def _csr(column: dict, table: Any, pair: tuple[str, str], nodes: int, dtype: np.dtype) -> tuple:
    """``table`` as compressed rows over ``pair`` (row variable first): (starts, columns, values)."""
    key = frozenset(table.variables)
    rows, cols = column[key, pair[0]], column[key, pair[1]]
    values = np.ones(len(rows), dtype=dtype) if table.values is None else np.asarray(table.values, dtype=dtype)
    starts = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=nodes), out=starts[1:])
    out_cols, out_values = _kernels()[0](rows, cols, values, starts)
    return starts, out_cols, out_values


def _int64_safe(parts: list, wedge_count: int) -> bool:
    """Whether every int64 partial sum stays below :data:`INT64_SAFE`: a wedge's term is at most
    max|a| · max|b| · (a mask row's absolute sum), and there are ``wedge_count`` of them."""
    def largest(values: np.ndarray) -> float:
        return float(np.abs(values).max()) if values.size else 0.0

    (_, _, a), (_, _, b), (starts, _, c) = parts
    row_sums = _row_totals(np.abs(c).astype(np.float64), starts)
    bound = largest(a) * largest(b) * float(row_sums.max(initial=0.0)) * max(wedge_count, 1)
    return bound < INT64_SAFE / 2  # a float bound: room for its rounding


def _dealt(parts: list, nodes: int, wedge_count: int, dtype: np.dtype, threads: int) -> Any:
    """The sums over rows dealt to ``threads`` contiguous ranges of about equal work."""
    (ls, lc, lv), (rs, rc, rv), (ms, mc, mv) = parts
    row_work = np.diff(ms) + _row_totals(np.diff(rs)[lc], ls)  # the mask's row, then the wedges from x
    cuts = np.searchsorted(np.cumsum(row_work), np.linspace(0, row_work.sum(), threads + 1)[1:-1])
    bounds = [0, *cuts.tolist(), nodes]
    run = _kernels()[1]

    def part(k: int) -> Any:
        return run(bounds[k], bounds[k + 1], ls, lc, lv, rs, rc, rv, ms, mc, mv, np.zeros(nodes, dtype=dtype))

    if threads == 1 or wedge_count < (1 << 16):
        return dtype.type(run(0, nodes, ls, lc, lv, rs, rc, rv, ms, mc, mv, np.zeros(nodes, dtype=dtype)))
    with ThreadPoolExecutor(threads) as pool:
        return dtype.type(sum(pool.map(part, range(threads))))


def _row_totals(per_entry: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each row's sum of ``per_entry`` (one number an entry of compressed rows ``starts``).

    >>> _row_totals(np.array([1, 2, 3]), np.array([0, 2, 2, 3])).tolist()
    [3, 0, 3]
    """
    cumulative = np.concatenate(([0], np.cumsum(per_entry)))
    return cumulative[starts[1:]] - cumulative[starts[:-1]]


def _scatter(rows, cols, values, starts):  # pragma: no cover - compiled
    """Rows in order of their row id (a counting sort): the columns and values, placed by ``starts``."""
    out_cols = np.empty(len(cols), dtype=np.int64)
    out_values = np.empty(len(values), dtype=values.dtype)
    place = starts[:-1].copy()
    for i in range(len(rows)):
        p = place[rows[i]]
        out_cols[p] = cols[i]
        out_values[p] = values[i]
        place[rows[i]] = p + 1
    return out_cols, out_values


def _rows_total(low, high, ls, lc, lv, rs, rc, rv, ms, mc, mv, dense):  # pragma: no cover - compiled
    """Σ over rows x in [low, high) of Σ_{y, z} l(x, y)·r(y, z)·m(x, z), m's row x scattered into ``dense``."""
    total = dense.dtype.type(0)
    for x in range(low, high):
        if ms[x] == ms[x + 1] or ls[x] == ls[x + 1]:
            continue
        for k in range(ms[x], ms[x + 1]):
            dense[mc[k]] += mv[k]  # repeated mask rows add up
        for j in range(ls[x], ls[x + 1]):
            y = lc[j]
            inner = dense.dtype.type(0)
            for k in range(rs[y], rs[y + 1]):
                inner += rv[k] * dense[rc[k]]
            total += lv[j] * inner
        for k in range(ms[x], ms[x + 1]):
            dense[mc[k]] = 0
    return total


def _cycle_rows(low, high, s1, c1, v1, s2, c2, v2, s3, c3, v3, s4, c4, v4, signed,
                dense, seen, touched):  # pragma: no cover - compiled
    """Σ over rows x in [low, high) of Σ_z (Σ_{m1} 1(x, m1)·2(m1, z)) · (Σ_{m2} 3(x, m2)·4(m2, z)), and
    a float64 bound on its partial sums' absolute values (the caller's check that int64 sums did not
    wrap: with ``signed`` values each term's absolute value, else the sums themselves).

    ``dense`` is all zeros between rows: x's first sums are written into it, the nodes written listed
    in ``touched`` (``seen`` says which are listed: each written at the list's end without a branch,
    kept by moving the end, so the list has one slot more than the nodes), read by its second
    2-paths without a test, and zeroed again."""
    total = dense.dtype.type(0)
    absolute = 0.0
    for x in range(low, high):
        if s1[x] == s1[x + 1] or s3[x] == s3[x + 1]:
            continue
        listed = 0
        for j in range(s1[x], s1[x + 1]):
            m = c1[j]
            first = v1[j]
            for k in range(s2[m], s2[m + 1]):
                z = c2[k]
                touched[listed] = z
                listed += 1 - seen[z]
                seen[z] = 1
                dense[z] += first * v2[k]
        for j in range(s3[x], s3[x + 1]):
            m = c3[j]
            inner = dense.dtype.type(0)
            if signed:
                inner_absolute = 0.0
                for k in range(s4[m], s4[m + 1]):
                    value = dense[c4[k]]
                    inner += v4[k] * value
                    inner_absolute += abs(float(v4[k]) * float(value))
            else:
                for k in range(s4[m], s4[m + 1]):
                    inner += v4[k] * dense[c4[k]]
                inner_absolute = abs(float(inner))
            total += v3[j] * inner
            absolute += abs(float(v3[j])) * inner_absolute
        for i in range(listed):
            dense[touched[i]] = 0
            seen[touched[i]] = 0
    return total, absolute


def _kernels() -> tuple:
    """The counting sort, the triangle's and the 4-cycle's row sums, compiled on first use
    (:func:`faq.compiled.kernels`)."""
    return kernels(_scatter, _rows_total, _cycle_rows)


def warm_up() -> list[str]:
    """Compile (or load from numba's cache) the kernels for int64 and float64 values; the dtypes done.

    >>> warm_up()
    ['float64', 'int64']
    """
    from faq.joins.table import Table

    done = []
    for dtype in (np.dtype(np.float64), np.dtype(np.int64)):
        src, dst = np.array([0, 0, 1]), np.array([1, 2, 2])
        values = np.ones(3, dtype=dtype)
        tables = [Table((u, v), {u: src, v: dst}, values) for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
        total, _ = bag_total(tables, dtype, threads=1)
        assert total == 1, total
        cycle = [Table((u, v), {u: src, v: dst}, values) for u, v in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"))]
        total, _ = cycle_total(cycle, dtype, threads=1)
        assert total == 0, total
        done.append(str(dtype))
    return sorted(done)


if __name__ == "__main__":
    import sys

    from faq.joins import dense_rows as package  # compiled under the package's name, which later imports use

    try:
        print(f"faq: dense-row sums compiled for {', '.join(package.warm_up())}")
        from faq.joins import oriented_triangle  # the other triangle kernel the plan may choose before these

        print(f"faq: the oriented triangle count compiled ({len(oriented_triangle.warm_up())} kernels)")
    except Exception as error:  # noqa: BLE001 - setup goes on; the first use compiles instead
        print(f"faq: could not compile the triangle kernels ahead of use ({error})", file=sys.stderr)
    sys.exit(0)
