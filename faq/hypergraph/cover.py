"""Exact fractional edge covers: rho*, the AGM bound, with a certified LP solver.

The fractional edge cover of a bag ``B`` in a hypergraph with edges ``S`` and costs ``c_S``
is the linear program::

    minimise   sum_S c_S x_S
    subject to sum_{S contains v} x_S >= 1   for every v in B
               x >= 0

Its dual is the fractional vertex packing::

    maximise   sum_{v in B} y_v
    subject to sum_{v in S & B} y_v <= c_S   for every edge S
               y >= 0

We solve the *dual* with a small exact simplex: its right-hand side ``c`` is non-negative,
so the origin is a feasible basis and no phase 1 is needed (phase 1 is exactly where
sympy 1.14's ``linprog`` goes wrong on zero right-hand sides; it reports K4 as infeasible).
The primal is read off the final tableau (the shadow prices), and the pair is *certified*:
primal feasible, dual feasible, equal objectives -- which by weak duality proves both optimal.
Any failure raises :class:`~faq.errors.LPCertificationError` instead of returning a guess.

The simplex is integer-preserving (Edmonds/Bareiss pivoting): the tableau holds integers
over one common denominator, so it is exact and much faster than a tableau of ``Fraction``.
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational
from typing import Iterable, Sequence, Union

from faq.errors import LPCertificationError, PlanError
from faq.hypergraph.hypergraph import normalize_bag, normalize_edges

__all__ = ["Cover", "fractional_edge_cover", "rho_star", "agm_bound", "agm_cover", "greedy_cover", "bound_of_log"]

Number = Union[Fraction, int, float]


@dataclass(frozen=True)
class Cover:
    """An optimal fractional edge cover of a bag, with its dual certificate.

    Attributes
    ----------
    value : Fraction
        The optimal cost ``sum_S c_S x_S`` (equal to ``sum_v y_v``).
    weights : tuple of Fraction
        ``x_S`` per edge, in the order the edges were given (0 for edges missing the bag).
    dual : dict of str to Fraction
        ``y_v`` per bag vertex (an optimal fractional vertex packing).

    Examples
    --------
    >>> c = fractional_edge_cover([{"a", "b"}, {"a", "c"}, {"b", "c"}], {"a", "b", "c"})
    >>> c.value, c.weights
    (Fraction(3, 2), (Fraction(1, 2), Fraction(1, 2), Fraction(1, 2)))
    """

    value: Fraction
    weights: tuple[Fraction, ...]
    dual: dict[str, Fraction]


def _to_fraction(c: Number, index: int) -> Fraction:
    # Exact conversion: Fraction(float) keeps every bit, so the LP over log-costs is the
    # LP over the very floats the caller gave.
    if isinstance(c, bool) or not isinstance(c, (Rational, float)):
        raise PlanError(reason=f"cost of edge {index} is {c!r}; costs must be numbers")
    if isinstance(c, float) and not math.isfinite(c):
        raise PlanError(reason=f"cost of edge {index} is {c!r}; costs must be finite")
    f = Fraction(c)
    if f < 0:
        # A negative cost makes the cover LP unbounded (take x_S to infinity).
        raise PlanError(reason=f"cost of edge {index} is {c!r}; costs must be >= 0")
    return f


def _solve_packing(rows: list[list[int]], rhs: list[int]) -> tuple[list[int], list[int], int]:
    """Maximise ``sum(y)`` s.t. ``rows @ y <= rhs``, ``y >= 0``, for integers ``rhs >= 0``.

    Exact simplex on a condensed (Tucker) tableau with integer-preserving pivoting, as in
    lrs: every entry is an integer over one common denominator ``d > 0``, and the
    divisions by the previous pivot are exact. Bland's rule (lowest variable index enters;
    lowest index leaves on ratio ties) rules out cycling on degenerate vertices, which
    zero costs produce.

    Returns ``(y, x, d)``: numerators of the packing ``y`` per column, of the shadow
    prices ``x`` per row (the primal cover) and their common denominator.
    """
    m, n = len(rows), len(rows[0])
    tab = [row + [b] for row, b in zip(rows, rhs)]  # row i: slack_i + a_i . y_N = b_i
    obj = [-1] * n + [0]  # z - sum(y) = 0; a negative entry can still improve z
    nonbasic = list(range(n))  # variable ids: y_j is j, the slack of row i is n + i
    basis = [n + i for i in range(m)]
    d = 1
    while True:
        s = -1
        for j in range(n):
            if obj[j] < 0 and (s < 0 or nonbasic[j] < nonbasic[s]):
                s = j
        if s < 0:
            break  # no improving column: optimal
        r = -1
        for i in range(m):
            a = tab[i][s]
            if a <= 0:
                continue
            if r < 0:
                r = i
                continue
            # compare b_i / a with b_r / a_r (entries share d > 0, so cross-multiply)
            lhs = tab[i][n] * tab[r][s]
            rhs_ = tab[r][n] * a
            if lhs < rhs_ or (lhs == rhs_ and basis[i] < basis[r]):
                r = i
        if r < 0:
            raise LPCertificationError(
                problem="fractional vertex packing",
                detail="the packing LP is unbounded, so some bag vertex is in no edge",
            )
        p = tab[r][s]
        prow = tab[r]
        for i in range(m):
            if i == r:
                continue
            row = tab[i]
            f = row[s]
            if f:
                new = [(row[j] * p - f * prow[j]) // d for j in range(n + 1)]
            else:
                new = [row[j] * p // d for j in range(n + 1)]
            new[s] = -f
            tab[i] = new
        f = obj[s]
        obj = [(obj[j] * p - f * prow[j]) // d for j in range(n + 1)]
        obj[s] = -f
        prow[s] = d
        d = p
        basis[r], nonbasic[s] = nonbasic[s], basis[r]
    y = [0] * n
    for i, var in enumerate(basis):
        if var < n:
            y[var] = tab[i][n]
    x = [0] * m
    for j, var in enumerate(nonbasic):
        if var >= n:
            x[var - n] = obj[j]
    return y, x, d


def _bits(mask: int) -> list[int]:
    """Positions of the set bits of ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(frozen=True)
class _Solution:
    """A certified cover LP solution in integers: ``x = x_num / d``, ``y = y_num / (d*scale)``."""

    x_num: list[int]  # per edge
    y_num: list[int]  # per bag vertex, in ``columns`` order
    columns: list[int]  # bit positions of the bag vertices, ascending
    d: int
    scale: int

    @property
    def value(self) -> Fraction:
        return Fraction(sum(self.y_num), self.d * self.scale)


def _certify(
    inter: Sequence[int],
    costs: Sequence[Fraction],
    sol: _Solution,
    names: Sequence[str],
) -> None:
    """Check primal and dual feasibility and equal objectives of ``sol``.

    Primal feasible + dual feasible + equal objectives prove both optimal (weak duality).
    The check runs on the integer numerators over their common denominators, so it is
    exact. ``inter[i]`` is edge i's intersection with the bag as a bitmask over ``names``.
    """
    d, scale = sol.d, sol.scale

    def fail(detail: str) -> None:
        bag = ", ".join(names[k] for k in sol.columns)
        raise LPCertificationError(problem=f"fractional edge cover of bag {{{bag}}}", detail=detail)

    if d <= 0 or scale <= 0:
        fail(f"non-positive denominator d={d}, scale={scale}")
    if any(t < 0 for t in sol.x_num):
        fail(f"negative cover weight among {[Fraction(t, d) for t in sol.x_num]}")
    covered = dict.fromkeys(sol.columns, 0)
    for mask, t in zip(inter, sol.x_num):
        if t:
            for k in _bits(mask):
                covered[k] += t
    for k, total in covered.items():
        if total < d:  # sum of x_S over S containing v must be >= 1
            fail(f"vertex {names[k]!r} is covered only {Fraction(total, d)}")
    if any(t < 0 for t in sol.y_num):
        fail(f"negative packing value among {sol.y_num}")
    y_at = dict(zip(sol.columns, sol.y_num))
    dd = d * scale
    for i, (mask, c) in enumerate(zip(inter, costs)):
        load = sum(y_at[k] for k in _bits(mask))
        # load / (d * scale) <= c  <=>  load * c.den <= c.num * d * scale
        if load * c.denominator > c.numerator * dd:
            fail(f"packing overloads edge {i}: {Fraction(load, dd)} > cost {c}")
    primal = sum((c * t for c, t in zip(costs, sol.x_num) if t), Fraction(0)) / d
    if primal != sol.value:
        fail(f"primal value {primal} != dual value {sol.value}")


def solve_cover(
    masks: Sequence[int], bag: int, costs: Sequence[Fraction], names: Sequence[str]
) -> _Solution:
    """Solve and certify the cover LP of ``bag``; edges and bag are bitmasks over ``names``.

    Input is trusted (validated by the public functions): costs are Fractions >= 0.
    A plan asks the same LPs many times over (each bag's ρ*, AGM bound and cover): the
    certified solutions are remembered (:func:`_solved`).
    """
    return _solved(tuple(masks), bag, tuple(costs), tuple(names))


@functools.lru_cache(maxsize=4096)
def _solved(masks: tuple[int, ...], bag: int, costs: tuple[Fraction, ...], names: tuple[str, ...]) -> _Solution:
    inter = [m & bag for m in masks]
    reach = 0
    for m in inter:
        reach |= m
    if reach != bag:
        uncovered = [names[k] for k in _bits(bag & ~reach)]
        raise PlanError(
            reason=f"no fractional edge cover: variable(s) {', '.join(map(repr, uncovered))} "
            "appear in no factor"
        )
    columns = _bits(bag)
    if not columns:
        return _Solution([0] * len(masks), [], [], 1, 1)

    # Keep one row per distinct intersection (the cheapest, then the first), and drop
    # rows dominated by a superset row that costs no more: their packing constraint is
    # implied. Fewer rows make the simplex faster; certification still checks every edge.
    cheapest: dict[int, int] = {}
    for i, m in enumerate(inter):
        if m and (m not in cheapest or costs[i] < costs[cheapest[m]]):
            cheapest[m] = i
    kept = sorted(
        i
        for m, i in cheapest.items()
        if not any(
            o != m and m & ~o == 0 and costs[j] <= costs[i] for o, j in cheapest.items()
        )
    )

    # Scale the costs to integers so the tableau stays integral.
    scale = 1
    for i in kept:
        den = costs[i].denominator
        scale = scale * den // math.gcd(scale, den)
    rows = [[inter[i] >> k & 1 for k in columns] for i in kept]
    rhs = [costs[i].numerator * (scale // costs[i].denominator) for i in kept]
    y_num, x_kept, d = _solve_packing(rows, rhs)

    x_num = [0] * len(masks)
    for i, t in zip(kept, x_kept):
        x_num[i] = t
    sol = _Solution(x_num, y_num, columns, d, scale)
    _certify(inter, costs, sol, names)
    return sol


def name_masks(
    edges: Sequence[frozenset[str]], bag_set: frozenset[str]
) -> tuple[list[int], int, list[str]]:
    """Bitmasks of the edges' intersections with the bag, over the sorted bag names."""
    names = sorted(bag_set)  # deterministic column order
    bit = {v: 1 << k for k, v in enumerate(names)}
    masks = [sum(bit[v] for v in e if v in bit) for e in edges]
    return masks, (1 << len(names)) - 1, names


def _cover(
    edges: Sequence[frozenset[str]], bag_set: frozenset[str], costs: Sequence[Fraction]
) -> Cover:
    """The cover LP on already-validated input (edges normalised, costs >= 0 Fractions)."""
    masks, bag, names = name_masks(edges, bag_set)
    sol = solve_cover(masks, bag, costs, names)
    return Cover(
        value=sol.value,
        weights=tuple(Fraction(t, sol.d) for t in sol.x_num),
        dual={names[k]: Fraction(t, sol.d * sol.scale) for k, t in zip(sol.columns, sol.y_num)},
    )


def fractional_edge_cover(
    edges: Sequence[Iterable[str]],
    bag: Iterable[str],
    costs: Sequence[Number] | None = None,
) -> Cover:
    """Minimum-cost fractional edge cover of ``bag``, exact and certified.

    Solves ``min sum_S c_S x_S`` subject to ``sum_{S contains v} x_S >= 1`` for every
    ``v`` in ``bag`` and ``x >= 0``, in exact rational arithmetic, by an exact simplex on
    the dual (vertex packing). The answer is certified by checking primal feasibility,
    dual feasibility and equal objectives.

    Parameters
    ----------
    edges : sequence of iterables of str
        Hyperedges (one per factor occurrence; duplicates allowed). Only edges that
        intersect the bag matter; the others get weight 0.
    bag : iterable of str
        The variables to cover.
    costs : sequence of Fraction, int or float, optional
        ``c_S`` per edge (default 1 each). Floats are converted exactly. Costs of 0 are
        allowed (a relation with one row costs ``log 1 = 0``); negative costs are not.

    Returns
    -------
    Cover
        The optimal value, the weight per edge and the dual packing per bag vertex.

    Raises
    ------
    PlanError
        If a bag vertex is in no edge (no cover exists), or the costs are invalid.
    LPCertificationError
        If the solution fails its optimality certificate (never expected).

    Examples
    --------
    >>> cycle4 = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}]
    >>> fractional_edge_cover(cycle4, {"a", "b", "c", "d"}).value
    Fraction(2, 1)
    >>> fractional_edge_cover(cycle4, {"a", "b"}, costs=[3, 1, 1, 1]).value
    Fraction(2, 1)
    >>> fractional_edge_cover(cycle4, []).value
    Fraction(0, 1)
    """
    es = normalize_edges(edges)
    bag_set = normalize_bag(bag)
    if costs is None:
        cs = [Fraction(1)] * len(es)
    else:
        cs = [_to_fraction(c, i) for i, c in enumerate(costs)]
        if len(cs) != len(es):
            raise PlanError(reason=f"{len(cs)} costs given for {len(es)} edges")
    return _cover(es, bag_set, cs)


def rho_star(edges: Sequence[Iterable[str]], bag: Iterable[str]) -> Fraction:
    """Fractional edge cover number rho*(bag): the cover LP with unit costs.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges.
    bag : iterable of str
        The variables to cover.

    Returns
    -------
    Fraction
        The exact optimum (0 for an empty bag).

    Raises
    ------
    PlanError
        If a bag vertex is in no edge.

    Examples
    --------
    >>> rho_star([{"a", "b"}, {"a", "c"}, {"b", "c"}], {"a", "b", "c"})
    Fraction(3, 2)
    >>> k4 = [{u, v} for u in "abcd" for v in "abcd" if u < v]
    >>> rho_star(k4, set("abcd"))
    Fraction(2, 1)
    """
    es = normalize_edges(edges)
    masks, full, names = name_masks(es, normalize_bag(bag))
    return solve_cover(masks, full, [Fraction(1)] * len(es), names).value


def agm_bound(edges: Sequence[Iterable[str]], sizes: Sequence[int], bag: Iterable[str]) -> float:
    """AGM bound on the join over ``bag``: the least ``prod_S |S|^{x_S}`` over covers x.

    Computed as ``exp`` of the cover LP with costs ``log |S|``. It is an estimate of the
    largest possible intermediate over the bag, hence a float.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges.
    sizes : sequence of int
        Number of rows of each edge's relation (same order as ``edges``).
    bag : iterable of str
        The variables of the intermediate.

    Returns
    -------
    float
        The bound; 0.0 if a relation meeting the bag is empty, 1.0 for an empty bag.

    Raises
    ------
    PlanError
        If sizes do not match the edges, are negative, or a bag vertex is in no edge.

    Examples
    --------
    >>> tri = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
    >>> round(agm_bound(tri, [100, 100, 100], {"a", "b", "c"}))
    1000
    >>> round(agm_bound(tri, [100, 100, 1], {"a", "b", "c"}), 6)
    100.0
    """
    es = normalize_edges(edges)
    return _agm(es, checked_sizes(sizes, len(es)), normalize_bag(bag))


def agm_cover(edges: Sequence[Iterable[str]], sizes: Sequence[int], bag: Iterable[str]) -> Cover:
    """The fractional edge cover that gives the AGM bound: least ``sum_S x_S log|S|``.

    :func:`agm_bound` is ``prod_S |S|^{x_S}`` over this cover (unless a relation meeting
    the bag is empty: then the bound is 0 whatever the cover). Its weights are the
    exponents of the bound as a formula in the sizes (:mod:`faq.hypergraph.symbolic`).
    The LP is the one :func:`agm_bound` solves, with costs ``log |S|`` converted exactly
    (a relation of at most one row costs 0), solved and certified as in
    :func:`fractional_edge_cover`.

    Parameters
    ----------
    edges, sizes, bag
        As :func:`agm_bound`.

    Returns
    -------
    Cover
        ``value`` is the natural log of the bound; ``weights`` the exponent per edge.

    Raises
    ------
    PlanError
        As :func:`agm_bound`.

    Examples
    --------
    >>> tri = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
    >>> agm_cover(tri, [100, 100, 100], {"a", "b", "c"}).weights
    (Fraction(1, 2), Fraction(1, 2), Fraction(1, 2))
    >>> c = agm_cover(tri, [10, 1000, 1], {"a", "b", "c"})  # 10^1 * 1^1 < (10*1000*1)^(1/2)
    >>> c.weights, round(math.exp(c.value), 6), round(agm_bound(tri, [10, 1000, 1], {"a", "b", "c"}), 6)
    ((Fraction(1, 1), Fraction(0, 1), Fraction(1, 1)), 10.0, 10.0)
    """
    es = normalize_edges(edges)
    sz = checked_sizes(sizes, len(es))
    return _cover(es, normalize_bag(bag), _log_costs(sz))


def checked_sizes(sizes: Sequence[float], n_edges: int) -> list[float]:
    """The sizes as a list, or PlanError unless there is one count >= 0 per edge."""
    sz = list(sizes)
    if len(sz) != n_edges:
        raise PlanError(reason=f"{len(sz)} sizes given for {n_edges} edges")
    for i, s in enumerate(sz):
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not s >= 0:
            raise PlanError(reason=f"size of edge {i} is {s!r}; sizes must be counts >= 0")
    return sz


def _log_costs(sizes: Sequence[float]) -> list[Fraction]:
    """``log |S|`` per edge as exact Fractions of the floats; 0 for at most one row."""
    # log of a count >= 1 is >= 0, so the LP has non-negative costs.
    return [Fraction(math.log(s)) if s > 1 else Fraction(0) for s in sizes]


def _agm(edges: Sequence[frozenset[str]], sizes: Sequence[float], bag_set: frozenset[str]) -> float:
    """:func:`agm_bound` on already-validated input."""
    masks, bag, names = name_masks(edges, bag_set)
    return agm_masks(masks, sizes, bag, names, None)


def agm_masks(
    masks: Sequence[int],
    sizes: Sequence[float],
    bag: int,
    names: Sequence[str],
    rho: Fraction | None,
) -> float:
    """AGM bound of ``bag`` (bitmasks over ``names``); ``rho`` is rho*(bag) if known."""
    relevant = {s for m, s in zip(masks, sizes) if m & bag}
    if 0 in relevant:
        # An empty relation meeting the bag empties the join (0^x = 0 with x > 0).
        return 0.0
    if len(relevant) <= 1:
        # All relations meeting the bag have one size N: the LP is log N times rho*.
        size = relevant.pop() if relevant else 1
        if size <= 1:
            return 1.0
        if rho is None:
            rho = solve_cover(masks, bag, [Fraction(1)] * len(masks), names).value
        return bound_of_log(math.log(size) * float(rho))
    return bound_of_log(solve_cover(masks, bag, _log_costs(sizes), names).value)


def bound_of_log(log_bound: Number) -> float:
    """``exp(log_bound)``, or ``inf`` past the float range: the AGM bound of a long join (a chain of
    300 relations of 1,000 rows is 1000^150) is an estimate, not a reason to fail planning.

    >>> round(bound_of_log(math.log(100)), 9), bound_of_log(1e6)
    (100.0, inf)
    """
    try:
        return math.exp(float(log_bound))
    except OverflowError:
        return math.inf


def greedy_cover(
    edges: Sequence[Iterable[str]], bag: Iterable[str], sizes: Sequence[int] | None = None
) -> Cover:
    """An integral edge cover of ``bag``, chosen greedily: an upper bound on the optimal cover.

    For bags too large for the exact LP (:func:`fractional_edge_cover`, whose exact simplex
    grows super-linearly with the edges meeting the bag): repeatedly take the edge of least
    cost per bag vertex it newly covers (ties: the first edge), until every vertex is covered.
    Its value is at least the optimum, so ``exp`` of it (with ``sizes``) still bounds the join
    from above, only less tightly than the AGM bound; it is at most ``H(k)`` times the
    optimum for edges of ``k`` bag vertices.  Costs are 1 each, or ``log |S|`` with ``sizes``
    (as :func:`agm_cover`).  There is no dual certificate: ``dual`` is empty.

    Raises
    ------
    PlanError
        If a bag vertex is in no edge, or ``sizes`` are invalid.

    Examples
    --------
    >>> tri = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
    >>> greedy_cover(tri, {"a", "b", "c"}).value  # rho* is 3/2
    Fraction(2, 1)
    >>> round(bound_of_log(greedy_cover(tri, {"a", "b", "c"}, [10, 1000, 1]).value), 6)
    10.0
    """
    es = normalize_edges(edges)
    bag_set = normalize_bag(bag)
    costs = [Fraction(1)] * len(es) if sizes is None else _log_costs(checked_sizes(sizes, len(es)))
    weights = [float(c) for c in costs]  # ratios in floats: a heuristic needs no exact arithmetic
    uncovered = set(bag_set)
    missing = uncovered.difference(*es)
    if missing:
        raise PlanError(
            reason=f"no fractional edge cover: variable(s) {', '.join(map(repr, sorted(missing)))} "
            "appear in no factor"
        )
    # Lazy greedy: an edge's cost per new vertex only grows as the cover grows, so an entry whose
    # ratio is still current when it comes off the heap is the least.
    heap = [(weights[i] / len(e & bag_set), i) for i, e in enumerate(es) if e & bag_set]
    heapq.heapify(heap)
    chosen = [False] * len(es)
    while uncovered:
        ratio, i = heapq.heappop(heap)
        new = len(es[i] & uncovered)
        if not new:
            continue
        if weights[i] / new != ratio:
            heapq.heappush(heap, (weights[i] / new, i))
            continue
        chosen[i] = True
        uncovered -= es[i]
    return Cover(
        value=sum((c for c, x in zip(costs, chosen) if x), Fraction(0)),
        weights=tuple(Fraction(int(x)) for x in chosen),
        dual={},
    )
