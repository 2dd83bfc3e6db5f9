"""Elimination orders for InsideOut: bags, faqw, greedy and exact orders.

InsideOut eliminates bound variables one at a time, innermost first.  Eliminating ``v``
takes the current hyperedges that contain ``v`` (``∂(v)``), whose union is the bag
``U``, and replaces them with the single hyperedge ``U - {v}``.  The width of an order is

    faqw(σ) = max( max_k rho*(U_k), rho*(F) )

where rho* is always taken against the ORIGINAL hyperedges (the factors themselves, as in
Abo Khamis, Ngo and Rudra, PODS 2016) and ``F`` is the set of free variables, which are
never eliminated.

``blocks`` express aggregates that do not commute (Σ and max in marginal-MAP): a partition
of the bound variables into consecutive groups in elimination order; every variable of
``blocks[0]`` goes before any of ``blocks[1]``, and so on.

networkx and these orders
-------------------------
The primal graph is a :class:`networkx.Graph` (:func:`~faq.hypergraph.primal_graph`), and
networkx has two greedy treewidth heuristics, ``treewidth_min_fill_in`` and
``treewidth_min_degree`` (:mod:`networkx.algorithms.approximation.treewidth`). What they
compute, against ours:

* **min-fill: the same.** networkx scans the vertices by degree (a stable sort over the
  graph's insertion order, which :func:`primal_graph` makes name order) and takes the
  first of least fill-in: the rule (fill, degree, name) of :func:`min_fill_order`. When
  every variable is bound and there is one block, our order *is* networkx's elimination
  sequence, vertex for vertex, continued in name order inside the clique where networkx
  stops; so the widths (largest elimination clique - 1) are equal. tests/test_hypergraph.py
  checks both on random hypergraphs. We still run our own loop because networkx's public
  functions return a tree decomposition, not an order (the per-step heuristic is not public
  API), and because they eliminate every vertex: they cannot leave the free variables in
  the graph uneliminated or keep the blocks of different ⊕s apart, which is what
  :func:`choose_order` needs for any query with free variables or mixed aggregates.
* **min-degree: not the same.** Both take a vertex of least degree, but networkx breaks
  ties by a heap counter: a vertex whose degree was updated later loses, and the update
  order is the iteration order of a set of strings, which changes with ``PYTHONHASHSEED``.
  Its order (and so the plan) would change from run to run; on random hypergraphs of 5-14
  variables, one run found a different width on 3 in 3,000 and a different faqw on 56.
  :func:`min_degree_order` breaks ties by name, as the tests rely on.
* **exact: networkx has none.** :func:`exact_order` minimises faqw (ρ* of every bag, not
  its size) and then the AGM-weighted cost from factor sizes; no networkx function
  weighs bags by fractional edge covers or sizes.

The elimination loop itself works on the primal graph as a dict of sets
(:func:`~faq.hypergraph.hypergraph.primal_adjacency`), as networkx's heuristics do
internally: editing an nx.Graph in place made min-fill about 5x slower (measured on
random graphs of 60 and 200 variables), and planning then imports no networkx.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Callable, Iterable, Optional, Sequence

from faq.errors import PlanError
from faq.hypergraph.cover import agm_masks, checked_sizes, name_masks, solve_cover
from faq.hypergraph.hypergraph import normalize_bag, normalize_edges, primal_adjacency

__all__ = [
    "elimination_bags",
    "faqw",
    "min_degree_order",
    "min_fill_order",
    "exact_order",
    "choose_order",
    "order_method",
    "choose_order_noted",
    "min_fill_noted",
    "FILL_WORK",
    "EXACT_MAX_VARS",
    "EXACT_MAX_ATOMS",
    "ORDER_METHODS",
]

#: ``choose_order(method="auto")`` searches exactly up to this many bound variables.
EXACT_MAX_VARS = 12
#: ... and up to this many atoms (hyperedges): every bag the search weighs solves a cover LP over
#: the atoms meeting it, so a query of a few bound variables and thousands of atoms would take
#: minutes.  Above either limit "auto" takes the greedy min-fill order (:func:`order_method`).
EXACT_MAX_ATOMS = 64
#: Steps (members of neighbourhoods walked) min-fill may spend counting fill-in before it orders the rest by
#: degree (:func:`min_fill_noted`): about two seconds; a 2,000-atom chain, star or grid needs under 15 million.
FILL_WORK = 100_000_000
#: The methods :func:`choose_order` accepts.
ORDER_METHODS = ("auto", "exact", "min_fill", "min_degree")
#: Relation size assumed by :func:`exact_order` when no statistics are given.
DEFAULT_SIZE = 1000


def checked_order(order: Sequence[str], what: str = "the elimination order") -> list[str]:
    """A list of distinct variable names, or PlanError."""
    if isinstance(order, (str, bytes)):
        raise PlanError(reason=f"{what} must be a sequence of variable names, not {order!r}")
    out = list(order)
    for v in out:
        if not isinstance(v, str):
            raise PlanError(reason=f"{what} holds {v!r}; variable names must be strings")
    seen: set[str] = set()
    dups = sorted({v for v in out if v in seen or seen.add(v)})  # one pass: list.count per name is quadratic
    if dups:
        raise PlanError(reason=f"{what} lists {', '.join(map(repr, dups))} more than once")
    return out


def _check_blocks(bound: Sequence[str], blocks: Sequence[Sequence[str]] | None) -> list[list[str]]:
    """Validate ``bound`` and ``blocks``; return the non-empty blocks, each sorted by name."""
    bound_list = checked_order(bound, "the bound variables")
    bound_set = set(bound_list)
    if blocks is None:
        return [sorted(bound_set)] if bound_set else []
    if isinstance(blocks, (str, bytes)):
        raise PlanError(reason=f"blocks must be a sequence of groups of variables, not {blocks!r}")
    out: list[list[str]] = []
    seen: set[str] = set()
    for k, block in enumerate(blocks):
        group = normalize_bag(block, f"block {k}")
        again = group & seen
        if again:
            shown = ", ".join(map(repr, sorted(again)))
            raise PlanError(reason=f"variable(s) {shown} are in more than one block")
        extra = group - bound_set
        if extra:
            raise PlanError(
                reason=f"block {k} holds {', '.join(map(repr, sorted(extra)))}, which are not bound"
            )
        seen |= group
        if group:
            out.append(sorted(group))
    missing = bound_set - seen
    if missing:
        raise PlanError(
            reason=f"bound variable(s) {', '.join(map(repr, sorted(missing)))} are in no block; "
            "blocks must partition the bound variables"
        )
    return out


def elimination_bags(edges: Sequence[Iterable[str]], order: Sequence[str]) -> list[frozenset[str]]:
    """The bags ``U_k`` InsideOut forms when it eliminates variables in ``order``.

    For each ``v`` in turn: ``∂(v)`` is the set of current hyperedges containing ``v``,
    ``U`` their union; they are replaced by the hyperedge ``U - {v}``. A variable in no
    current edge gets ``U = {v}``.

    Parameters
    ----------
    edges : sequence of iterables of str
        The original hyperedges.
    order : sequence of str
        Variables to eliminate, first eliminated first.

    Returns
    -------
    list of frozenset of str
        ``U_k`` for each step.

    Raises
    ------
    PlanError
        If ``order`` repeats a variable.

    Examples
    --------
    >>> chain = [{"i", "j"}, {"j", "k"}, {"k", "l"}]
    >>> [sorted(u) for u in elimination_bags(chain, ["j", "k"])]
    [['i', 'j', 'k'], ['i', 'k', 'l']]
    """
    current = [set(e) for e in normalize_edges(edges)]
    bags: list[frozenset[str]] = []
    for v in checked_order(order):
        touching = [e for e in current if v in e]
        if not touching:
            bags.append(frozenset({v}))
            continue
        union: set[str] = set().union(*touching)
        bags.append(frozenset(union))
        current = [e for e in current if v not in e]
        current.append(union - {v})  # the new factor ⊕_v ⊗ ∂(v)
    return bags


def faqw(edges: Sequence[Iterable[str]], order: Sequence[str], free: Iterable[str]) -> Fraction:
    """FAQ-width of an elimination order: ``max(max_k rho*(U_k), rho*(free))``.

    rho* is computed against the original hyperedges, not the intermediate ones.

    Parameters
    ----------
    edges, order
        As :func:`elimination_bags`: the original hyperedges and the bound variables.
    free : iterable of str
        The free variables (their bag counts; an empty free set contributes 0).

    Returns
    -------
    Fraction
        The width, exactly.

    Raises
    ------
    PlanError
        If ``order`` repeats a variable or eliminates a free one, or some variable is in
        no edge.

    Examples
    --------
    >>> chain = [{"i", "j"}, {"j", "k"}, {"k", "l"}]
    >>> faqw(chain, ["j", "k"], {"i", "l"})
    Fraction(2, 1)
    >>> faqw([{"a", "b"}, {"a", "c"}, {"b", "c"}], ["a", "b", "c"], [])
    Fraction(3, 2)
    """
    es = normalize_edges(edges)
    free_set = normalize_bag(free, "free variables")
    clash = free_set & set(checked_order(order))
    if clash:
        raise PlanError(
            reason=f"free variable(s) {', '.join(map(repr, sorted(clash)))} are in the "
            "elimination order; free variables are never eliminated"
        )
    ones = [Fraction(1)] * len(es)

    def rho(bag: frozenset[str]) -> Fraction:
        masks, full, names = name_masks(es, bag)
        return solve_cover(masks, full, ones, names).value

    cache: dict[frozenset[str], Fraction] = {}
    width = rho(free_set)
    for bag in elimination_bags(es, order):
        if bag not in cache:  # the same bag recurs often (e.g. along a path)
            cache[bag] = rho(bag)
        width = max(width, cache[bag])
    return width


def _greedy_order(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None,
    score: Callable[[dict[str, set[str]], str], tuple[tuple[int, ...], int]],
    budget: float = math.inf,
) -> tuple[list[str], Optional[int]]:
    """The greedy order by ``score`` (a variable's key and the work of computing it), and how many
    variables it had ordered when the work passed ``budget`` and it went on by degree (None: never)."""
    groups = _check_blocks(bound, blocks)
    # The elimination graph is the primal graph as a dict of sets (as networkx's own treewidth
    # heuristics make one): set algebra on it is ~5x faster than editing an nx.Graph, and
    # building it needs no networkx import.
    graph = primal_adjacency(edges)
    for group in groups:
        for v in group:
            graph.setdefault(v, set())  # a bound variable in no edge is isolated
    order: list[str] = []
    spent, switched = 0, None

    def rate(u: str) -> tuple[int, ...]:
        nonlocal spent
        key, work = score(graph, u)
        spent += work
        return key

    for group in groups:
        # Lowest (score, name) goes next, as a scan over the remaining variables would pick, but
        # from a heap: eliminating v changes the score of few variables (_rescored), and a scan
        # per step made planning quadratic (a 1,000-atom chain took seconds, 10,000 minutes).
        # A heap entry is stale once its variable's score changed; stale entries are skipped.
        current = {u: rate(u) for u in group}
        heap = [(s, u) for u, s in current.items()]
        heapq.heapify(heap)
        while current:
            if spent > budget and switched is None:  # fill-in grew too costly to count: by degree from here
                score, switched = _degree, len(order)
                current = {u: rate(u) for u in current}
                heap = [(s, u) for u, s in current.items()]
                heapq.heapify(heap)
            s, v = heapq.heappop(heap)
            if current.get(v) != s:
                continue
            del current[v]
            nbrs = graph.pop(v)
            for a in nbrs:
                graph[a].discard(v)
                graph[a] |= nbrs - {a}  # eliminating v makes its neighbours a clique
            order.append(v)
            for u in _rescored(graph, nbrs):
                if u in current:
                    new = rate(u)
                    if new != current[u]:
                        current[u] = new
                        heapq.heappush(heap, (new, u))
    return order, switched


def _rescored(graph: dict[str, set[str]], nbrs: set[str]) -> set[str]:
    """The variables whose score may change when a variable with neighbours ``nbrs`` is eliminated.

    Its neighbours (their neighbourhoods changed), and every variable with two or more neighbours
    among them: only those can gain an edge between two of their neighbours (the fill added is
    between ``nbrs``), which changes their fill-in. Nobody else's degree or fill changes.
    """
    touched = set(nbrs)
    if len(nbrs) >= 2:
        seen: set[str] = set()
        for a in nbrs:
            for u in graph[a]:
                if u not in nbrs:
                    if u in seen:
                        touched.add(u)
                    seen.add(u)
    return touched


def _degree(graph: dict[str, set[str]], v: str) -> tuple[tuple[int, ...], int]:
    return (len(graph[v]),), 1


def _fill_then_degree(graph: dict[str, set[str]], v: str) -> tuple[tuple[int, ...], int]:
    nbrs = graph[v]
    # Each neighbour a misses |nbrs - N(a) - {a}| others; every missing pair is counted twice.
    # (Counted as |nbrs| - |nbrs & N(a)| - 1: the intersection walks the smaller set, so a hub's
    # fill costs its degree, not its degree squared.)  The work: the members those walks visit.
    n = len(nbrs)
    fill, work = 0, 0
    for a in nbrs:
        other = graph[a]
        fill += n - len(nbrs & other) - 1
        work += min(n, len(other))
    return (fill // 2, n), work


def min_degree_order(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
) -> list[str]:
    """Greedy min-degree elimination order of the bound variables.

    Repeatedly eliminates the bound variable (of the current block) with the fewest
    neighbours in the primal graph, joining its neighbours into a clique. Free variables
    (those not in ``bound``) stay in the graph but are never eliminated.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges.
    bound : sequence of str
        The variables to eliminate.
    blocks : sequence of sequences of str, optional
        A partition of ``bound`` into groups in elimination order; each group is
        eliminated entirely before the next. ``None`` means one group.

    Returns
    -------
    list of str
        The order, first eliminated first. Ties go to the smallest name.

    Raises
    ------
    PlanError
        If ``bound`` repeats a variable or ``blocks`` is not a partition of it.

    Examples
    --------
    >>> star = [{"c", "x"}, {"c", "y"}, {"c", "z"}]
    >>> min_degree_order(star, ["c", "x", "y", "z"])
    ['x', 'y', 'c', 'z']
    >>> min_degree_order(star, ["c", "x"], blocks=[["c"], ["x"]])
    ['c', 'x']
    """
    return _greedy_order(edges, bound, blocks, _degree)[0]


def min_fill_order(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
) -> list[str]:
    """Greedy min-fill elimination order of the bound variables.

    Repeatedly eliminates the bound variable (of the current block) whose elimination
    adds the fewest new edges to the primal graph; ties go to the smaller degree, then to
    the smaller name. Free variables are never eliminated. Parameters, result and errors
    are those of :func:`min_degree_order`; only the choice of the next variable differs.

    Examples
    --------
    >>> cycle4 = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}]
    >>> min_fill_order(cycle4, ["a", "b", "c", "d"])
    ['a', 'b', 'c', 'd']
    >>> min_fill_order([{"i", "j"}, {"j", "k"}, {"k", "l"}], ["j", "k"])
    ['j', 'k']
    """
    return min_fill_noted(edges, bound, blocks)[0]


def min_fill_noted(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
) -> tuple[list[str], str]:
    """:func:`min_fill_order`, and why it finished by degree ("" when it did not).

    Counting a variable's fill-in walks its neighbours' neighbourhoods: on a dense elimination
    graph (2,000 random ternary atoms) the count took minutes.  After :data:`FILL_WORK` members
    walked, the remaining variables go by least degree (then name), as :func:`min_degree_order`.
    """
    order, switched = _greedy_order(edges, bound, blocks, _fill_then_degree, FILL_WORK)
    if switched is None:
        return order, ""
    return order, (f"min-degree after the first {switched} of {len(order)} variables: counting fill-in passed "
                   f"{FILL_WORK:,} steps")


class _ExactSearch:
    """The dynamic programme behind :func:`exact_order`, over sets of eliminated variables.

    A variable is one bit of an int (bit ``i`` is ``names[i]``, so ascending bits are name
    order and ties resolve to the smaller name); a state ``done`` is the mask of the
    variables eliminated so far. Every quantity is memoised per mask: a state is reached by
    many orders, which is what makes the search exponential in the variables only once.
    """

    def __init__(
        self, edges: Sequence[frozenset[str]], groups: list[list[str]], sizes: Sequence[float]
    ) -> None:
        bound_set = {v for g in groups for v in g}
        self.names = sorted(set().union(*edges) | bound_set) if edges else sorted(bound_set)
        bit = {v: 1 << i for i, v in enumerate(self.names)}
        self.adjacent = {bit[v]: 0 for v in self.names}
        for v, nbrs in primal_adjacency(edges).items():
            self.adjacent[bit[v]] = sum(bit[u] for u in nbrs)
        self.edge_masks = [sum(bit[v] for v in e) for e in edges]
        self.block_masks = [sum(bit[v] for v in g) for g in groups]
        self.full = sum(self.block_masks)
        self.sizes = sizes
        self._ones = [Fraction(1)] * len(edges)
        self._bags: dict[tuple[int, int], int] = {}
        self._widths: dict[int, Fraction] = {}
        self._costs: dict[int, float] = {}
        free_bag = sum(bit[v] for v in self.names if v not in bound_set)
        # Once every bound variable is gone, what remains to pay for is the free bag.
        self._least_width: dict[int, Fraction] = {self.full: self.width(free_bag)}
        self._least_cost: dict[int, float] = {self.full: 0.0}
        self.target = Fraction(0)

    def candidates(self, done: int) -> list[int]:
        """The variables that may go next: the rest of the first unfinished block."""
        for block in self.block_masks:
            rest = block & ~done
            if rest:
                return [b for b in (1 << i for i in range(len(self.names))) if b & rest]
        return []

    def bag(self, done: int, v: int) -> int:
        """The bag of eliminating ``v`` after ``done``: ``v`` and the remaining variables
        reachable from it through eliminated ones."""
        key = (done, v)
        if key not in self._bags:
            seen, stack = v, [v]
            while stack:
                u = stack.pop()
                new = self.adjacent[u] & ~seen
                seen |= new
                while new:
                    b = new & -new
                    new ^= b
                    if b & done:
                        stack.append(b)
            self._bags[key] = seen & ~done
        return self._bags[key]

    def width(self, bag: int) -> Fraction:
        """rho* of ``bag`` against the original edges."""
        if bag not in self._widths:
            self._widths[bag] = solve_cover(self.edge_masks, bag, self._ones, self.names).value
        return self._widths[bag]

    def cost(self, bag: int) -> float:
        """The AGM bound of ``bag`` from the relation sizes."""
        if bag not in self._costs:
            self._costs[bag] = agm_masks(
                self.edge_masks, self.sizes, bag, self.names, self.width(bag)
            )
        return self._costs[bag]

    def least_width(self, done: int) -> Fraction:
        """Phase 1: the least max-width of the remaining steps from ``done`` (min-max)."""
        if done not in self._least_width:
            self._least_width[done] = min(
                max(self.width(self.bag(done, v)), self.least_width(done | v))
                for v in self.candidates(done)
            )
        return self._least_width[done]

    def least_cost(self, done: int) -> float:
        """Phase 2: the least total cost from ``done`` using only steps of width at most
        :attr:`target` (a sum DP)."""
        if done not in self._least_cost:
            best = math.inf
            for v in self.candidates(done):
                u = self.bag(done, v)
                if self.width(u) <= self.target:
                    best = min(best, self.cost(u) + self.least_cost(done | v))
            self._least_cost[done] = best
        return self._least_cost[done]

    def cheapest_step(self, done: int) -> int:
        """The next variable of a cheapest order of the optimal width, from ``done``."""
        choice, choice_cost = 0, math.inf
        for v in self.candidates(done):
            u = self.bag(done, v)
            if self.width(u) > self.target:
                continue
            total = self.cost(u) + self.least_cost(done | v)
            # A relative tolerance keeps float noise from beating the name tie-break.
            if total < choice_cost - 1e-12 * max(1.0, abs(choice_cost)) or choice == 0:
                if total < math.inf:
                    choice, choice_cost = v, total
        if choice == 0:  # cannot happen: phase 1 proved an order of this width exists
            raise PlanError(reason="exact order search found no order of the optimal width")
        return choice

    def order(self) -> list[str]:
        """Least faqw first, then least cost among orders of that width."""
        self.target = self.least_width(0)
        self.least_cost(0)
        order: list[str] = []
        done = 0
        while done != self.full:
            step = self.cheapest_step(done)
            order.append(self.names[step.bit_length() - 1])
            done |= step
        return order


def exact_order(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
    sizes: Sequence[int] | None = None,
    max_vars: int = EXACT_MAX_VARS,
) -> list[str]:
    """Optimal elimination order: least faqw, then least estimated cost.

    Dynamic programming over the set of eliminated variables (the bag of eliminating
    ``v`` after the set ``S`` depends only on ``S`` and ``v``: it is ``v`` plus every
    remaining variable reachable from ``v`` through eliminated ones). First the least
    faqw (exact, including the free bag) is found; then, among orders of that width, the
    one with least ``sum_k agm_bound(edges, sizes, U_k)``. Ties go to the order that
    eliminates smaller names first.

    Parameters
    ----------
    edges, bound, blocks
        As :func:`min_degree_order`.
    sizes : sequence of int, optional
        Rows per edge's relation, for the cost estimate (default 1000 each).
    max_vars : int, optional
        Refuse (PlanError) when there are more bound variables than this.

    Returns
    -------
    list of str
        The order, first eliminated first: of least faqw, then of least estimated cost.

    Raises
    ------
    PlanError
        If there are too many bound variables, ``bound``/``blocks``/``sizes`` are invalid,
        or a bound variable is in no edge.

    Examples
    --------
    >>> chain = [{"i", "j"}, {"j", "k"}, {"k", "l"}]
    >>> exact_order(chain, ["j", "k"])
    ['j', 'k']
    >>> exact_order(chain, ["j", "k"], sizes=[1000, 1, 10])
    ['k', 'j']
    """
    es = normalize_edges(edges)
    groups = _check_blocks(bound, blocks)
    n_bound = sum(len(g) for g in groups)
    if n_bound > max_vars:
        raise PlanError(
            reason=f"exact order search is limited to {max_vars} bound variables, the query "
            f"has {n_bound}; use method='min_fill'"
        )
    sz = [DEFAULT_SIZE] * len(es) if sizes is None else checked_sizes(sizes, len(es))
    if n_bound == 0:
        return []
    return _ExactSearch(es, groups, sz).order()


def order_method(n_bound: int, n_edges: int, method: str = "auto") -> tuple[str, str]:
    """The method :func:`choose_order` runs for ``method``, and why "auto" took a greedy one.

    ``"auto"`` is the exact search up to :data:`EXACT_MAX_VARS` bound variables and
    :data:`EXACT_MAX_ATOMS` atoms, min-fill above; the reason (empty otherwise) names the
    limit passed, for the plan to show.

    Examples
    --------
    >>> order_method(3, 3)
    ('exact', '')
    >>> order_method(999, 1000)
    ('min_fill', "greedy min-fill order: 999 bound variables > 12, the exact search's limit")
    >>> order_method(5, 100)
    ('min_fill', "greedy min-fill order: 100 atoms > 64, the exact search's limit")
    >>> order_method(999, 1000, "min_degree")
    ('min_degree', '')
    """
    if method != "auto":
        return method, ""
    over = (f"{n_bound} bound variables > {EXACT_MAX_VARS}" if n_bound > EXACT_MAX_VARS
            else f"{n_edges} atoms > {EXACT_MAX_ATOMS}" if n_edges > EXACT_MAX_ATOMS else "")
    if over:
        return "min_fill", f"greedy min-fill order: {over}, the exact search's limit"
    return "exact", ""


def choose_order(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
    sizes: Sequence[int] | None = None,
    method: str = "auto",
) -> list[str]:
    """Pick an elimination order of the bound variables by the named method.

    Parameters
    ----------
    edges, bound, blocks
        As :func:`min_degree_order`.
    sizes : sequence of int, optional
        Rows per edge's relation (used by the exact search only).
    method : {"auto", "exact", "min_fill", "min_degree"}
        ``"auto"`` searches exactly when there are at most 12 bound variables and 64 atoms
        and uses min-fill otherwise (:func:`order_method`).

    Returns
    -------
    list of str
        The order the chosen method returns, first eliminated first.

    Raises
    ------
    PlanError
        On an unknown method, or whatever the chosen method raises.

    Examples
    --------
    >>> tri = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
    >>> choose_order(tri, ["a", "b"])
    ['a', 'b']
    >>> choose_order(tri, ["a", "b"], method="min_degree")
    ['a', 'b']
    """
    return choose_order_noted(edges, bound, blocks, sizes, method)[0]


def choose_order_noted(
    edges: Sequence[Iterable[str]],
    bound: Sequence[str],
    blocks: Sequence[Sequence[str]] | None = None,
    sizes: Sequence[int] | None = None,
    method: str = "auto",
) -> tuple[list[str], str]:
    """:func:`choose_order`, and what it did less exactly than asked, for a plan to show: "auto" over
    the exact search's limits (:func:`order_method`), min-fill going on by degree
    (:func:`min_fill_noted`); "" when neither.

    >>> choose_order_noted([{"a", "b"}], ["a"])
    (['a'], '')
    """
    if method not in ORDER_METHODS:
        raise PlanError(
            reason=f"unknown order method {method!r}; use one of {', '.join(ORDER_METHODS)}"
        )
    note = ""
    if method == "auto":
        method, note = order_method(len(checked_order(bound, "the bound variables")), len(edges))
    if method == "exact":
        return exact_order(edges, bound, blocks, sizes), note
    if method == "min_degree":
        return min_degree_order(edges, bound, blocks), note
    order, switched = min_fill_noted(edges, bound, blocks)
    return order, "; ".join(n for n in (note, switched) if n)
