"""Tests of faq.hypergraph: exact fractional edge covers, AGM bounds, elimination orders.

The cover LP is checked against an independent brute force written here: it enumerates
every basic solution of the cover polyhedron in exact Fractions (sympy's LP is not used:
sympy 1.14 returns wrong answers on it, e.g. K4 reported infeasible).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import faq.hypergraph.cover as cover_module
from faq.errors import LPCertificationError, PlanError
from faq.hypergraph import (
    Cover,
    agm_bound,
    choose_order,
    elimination_bags,
    exact_order,
    faqw,
    fractional_edge_cover,
    min_degree_order,
    min_fill_order,
    rho_star,
)

ROOT = Path(__file__).resolve().parents[1]

TRIANGLE = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
CYCLE4 = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}]
K4 = [set(p) for p in itertools.combinations("abcd", 2)]
CYCLE5 = [{"abcde"[i], "abcde"[(i + 1) % 5]} for i in range(5)]
LOOMIS_WHITNEY4 = [set(p) for p in itertools.combinations("abcd", 3)]
CHAIN = [{"i", "j"}, {"j", "k"}, {"k", "l"}]  # A(i,j), B(j,k), D(k,l)


# --- independent reference: enumerate basic solutions ---------------------------------


def _solve_square(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Gauss-Jordan in Fractions; None when singular."""
    k = len(matrix)
    aug = [row[:] + [b] for row, b in zip(matrix, rhs)]
    for c in range(k):
        piv = next((r for r in range(c, k) if aug[r][c] != 0), None)
        if piv is None:
            return None
        aug[c], aug[piv] = aug[piv], aug[c]
        for r in range(k):
            if r != c and aug[r][c] != 0:
                f = aug[r][c] / aug[c][c]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[c])]
    return [aug[r][k] / aug[r][r] for r in range(k)]


def brute_force_cover(edges, bag, costs=None) -> Fraction:
    """min c.x s.t. sum_{S contains v} x_S >= 1 (v in bag), x >= 0, by vertex enumeration.

    A vertex of the polyhedron has a support T of edges and |T| tight cover rows R with
    the square system A[R, T] x_T = 1 non-singular; the minimum of a bounded-below
    linear objective over a pointed polyhedron is attained at one.
    """
    bag = sorted(set(bag))
    costs = [Fraction(1)] * len(edges) if costs is None else [Fraction(c) for c in costs]
    if not bag:
        return Fraction(0)
    cols = [i for i, e in enumerate(edges) if set(e) & set(bag)]
    best = None
    for k in range(1, min(len(bag), len(cols)) + 1):
        for rows in itertools.combinations(bag, k):
            for support in itertools.combinations(cols, k):
                a = [[Fraction(int(v in edges[i])) for i in support] for v in rows]
                sol = _solve_square(a, [Fraction(1)] * k)
                if sol is None or any(t < 0 for t in sol):
                    continue
                x = dict(zip(support, sol))
                if all(sum(t for i, t in x.items() if v in edges[i]) >= 1 for v in bag):
                    val = sum(costs[i] * t for i, t in x.items())
                    best = val if best is None else min(best, val)
    assert best is not None, "every bag vertex is covered, so a vertex exists"
    return best


def check_certificate(edges, bag, costs, cov: Cover) -> None:
    """Re-check, in Fractions, everything an optimality certificate needs."""
    costs = [Fraction(1)] * len(edges) if costs is None else [Fraction(c) for c in costs]
    assert len(cov.weights) == len(edges)
    assert all(w >= 0 for w in cov.weights)
    for v in bag:
        assert sum(w for w, e in zip(cov.weights, edges) if v in e) >= 1
    assert set(cov.dual) == set(bag)
    assert all(y >= 0 for y in cov.dual.values())
    for e, c in zip(edges, costs):
        assert sum(cov.dual[v] for v in e if v in cov.dual) <= c
    primal = sum(c * w for c, w in zip(costs, cov.weights))
    assert primal == sum(cov.dual.values()) == cov.value


# --- rho* on known hypergraphs ---------------------------------------------------------


@pytest.mark.parametrize(
    "edges, bag, expected",
    [
        (TRIANGLE, "abc", Fraction(3, 2)),
        (CYCLE4, "abcd", Fraction(2)),
        (K4, "abcd", Fraction(2)),
        (CYCLE5, "abcde", Fraction(5, 2)),
        (LOOMIS_WHITNEY4, "abcd", Fraction(4, 3)),
        ([{"a", "b", "c"}], "abc", Fraction(1)),
        ([{"a", "b", "c"}], "ab", Fraction(1)),
        (TRIANGLE, "", Fraction(0)),
        (TRIANGLE, "ab", Fraction(1)),
        (CHAIN, "il", Fraction(2)),
    ],
    ids=["triangle", "4-cycle", "K4", "5-cycle", "loomis-whitney", "one-edge", "one-edge-part",
         "empty-bag", "triangle-ab", "chain-free-bag"],
)
def test_rho_star_known_values(edges, bag, expected):
    assert rho_star(edges, set(bag)) == expected
    cov = fractional_edge_cover(edges, set(bag))
    assert cov.value == expected
    assert isinstance(cov.value, Fraction)
    check_certificate(edges, set(bag), None, cov)


def test_k4_explicitly():
    # sympy 1.14's lpmin reports this LP infeasible; ours must certify 2.
    cov = fractional_edge_cover(K4, {"a", "b", "c", "d"})
    assert cov.value == 2
    assert cov.dual == {v: Fraction(1, 2) for v in "abcd"}
    check_certificate(K4, set("abcd"), None, cov)


def test_duplicate_edges_and_irrelevant_edges():
    edges = [{"a", "b"}, {"a", "b"}, {"x", "y"}, {"b", "c"}]
    cov = fractional_edge_cover(edges, {"a", "b", "c"})
    assert cov.value == 2
    assert cov.weights[2] == 0  # misses the bag
    check_certificate(edges, {"a", "b", "c"}, None, cov)


def test_weighted_cover_with_zero_and_float_costs():
    # Zero-cost edges (relations of one row: log 1 = 0) make the LP degenerate.
    cov = fractional_edge_cover(TRIANGLE, {"a", "b", "c"}, costs=[0, 0, 5])
    assert cov.value == 0
    cov = fractional_edge_cover(TRIANGLE, {"a", "b", "c"}, costs=[0.5, 0.25, 1])
    assert cov.value == Fraction(3, 4)  # floats convert exactly
    check_certificate(TRIANGLE, {"a", "b", "c"}, [0.5, 0.25, 1], cov)
    cov = fractional_edge_cover(TRIANGLE, {"a", "b", "c"}, costs=[Fraction(1, 3), 2, 2])
    assert cov.value == Fraction(13, 6)  # all halves: (1/3 + 2 + 2) / 2 < 7/3 integral
    assert cov.value == brute_force_cover(TRIANGLE, "abc", [Fraction(1, 3), 2, 2])


def test_uncovered_vertex_is_a_plan_error():
    with pytest.raises(PlanError) as info:
        rho_star(TRIANGLE, {"a", "z"})
    assert "'z'" in info.value.parameters["reason"]
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"costs": [1, 1]},
        {"costs": [1, -1, 1]},
        {"costs": [1, float("nan"), 1]},
        {"costs": [1, "x", 1]},
    ],
)
def test_bad_costs_are_plan_errors(kwargs):
    with pytest.raises(PlanError):
        fractional_edge_cover(TRIANGLE, {"a", "b"}, **kwargs)


def test_bare_strings_are_rejected():
    with pytest.raises(PlanError):
        rho_star(["ab", "bc"], {"a"})
    with pytest.raises(PlanError):
        rho_star(TRIANGLE, "abc")


def test_certification_failure_raises(monkeypatch):
    # A solver that claims a wrong optimum must be caught by the certificate.
    def wrong(rows, rhs):
        return [0] * len(rows[0]), [0] * len(rows), 1

    monkeypatch.setattr(cover_module, "_solve_packing", wrong)
    cover_module._solved.cache_clear()  # solved before by another test: remembered, not solved again
    with pytest.raises(LPCertificationError) as info:
        rho_star(TRIANGLE, {"a", "b", "c"})
    assert info.value.parameters["problem"].startswith("fractional edge cover")
    assert "covered only" in info.value.parameters["detail"]


# --- random hypergraphs against the brute force ----------------------------------------

VERTICES = "abcdef"


@st.composite
def hypergraph_and_bag(draw, weighted=False):
    edges = draw(
        st.lists(
            st.sets(st.sampled_from(VERTICES), min_size=1, max_size=4), min_size=1, max_size=6
        )
    )
    covered = sorted(set().union(*edges))
    bag = draw(st.sets(st.sampled_from(covered)))
    costs = None
    if weighted:
        costs = draw(st.lists(st.integers(0, 6), min_size=len(edges), max_size=len(edges)))
    return edges, bag, costs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hypergraph_and_bag())
def test_random_rho_star_matches_brute_force(case):
    edges, bag, _ = case
    cov = fractional_edge_cover(edges, bag)
    check_certificate(edges, bag, None, cov)
    assert cov.value == brute_force_cover(edges, bag)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hypergraph_and_bag(weighted=True))
def test_random_weighted_cover_matches_brute_force(case):
    edges, bag, costs = case
    cov = fractional_edge_cover(edges, bag, costs)
    check_certificate(edges, bag, costs, cov)
    assert cov.value == brute_force_cover(edges, bag, costs)


# --- AGM bound -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 10, 1000, 10**6])
def test_agm_triangle_is_n_to_the_three_halves(n):
    assert agm_bound(TRIANGLE, [n, n, n], {"a", "b", "c"}) == pytest.approx(n**1.5, rel=1e-9)


def test_agm_mixed_sizes_and_edge_cases():
    # |R|=|S|=10^6, |T|=10^4: the fractional cover (1/2,1/2,1/2) gives 10^8 < 10^10.
    assert agm_bound(TRIANGLE, [10**6, 10**6, 10**4], {"a", "b", "c"}) == pytest.approx(1e8)
    assert agm_bound(TRIANGLE, [10, 0, 10], {"a", "b", "c"}) == 0.0
    assert agm_bound(TRIANGLE, [1, 1, 1], {"a", "b", "c"}) == 1.0
    assert agm_bound(TRIANGLE, [5, 5, 5], set()) == 1.0
    assert agm_bound(CHAIN, [100, 7, 100], {"i", "l"}) == pytest.approx(10**4)
    with pytest.raises(PlanError):
        agm_bound(TRIANGLE, [1, 2], {"a"})
    with pytest.raises(PlanError):
        agm_bound(TRIANGLE, [1, -2, 3], {"a"})


# --- elimination bags and faqw ---------------------------------------------------------


def test_elimination_bags_triangle():
    bags = elimination_bags(TRIANGLE, ["a", "b", "c"])
    assert bags == [frozenset("abc"), frozenset("bc"), frozenset("c")]
    assert faqw(TRIANGLE, ["a", "b", "c"], []) == Fraction(3, 2)


def test_elimination_bags_matrix_chain():
    assert elimination_bags(CHAIN, ["j", "k"]) == [frozenset("ijk"), frozenset("ikl")]
    # rho*({i,j,k}) = rho*({i,k,l}) = 2, and the free bag {i,l} needs A and D: 2.
    assert faqw(CHAIN, ["j", "k"], {"i", "l"}) == 2
    assert faqw(CHAIN, ["k", "j"], {"i", "l"}) == 2
    # The free bag counts even when the eliminated bags are small.
    assert faqw([{"i", "j"}, {"j", "k"}], ["j"], {"i", "k"}) == 2
    assert faqw([{"i", "j"}], [], {"i", "j"}) == 1


def test_elimination_of_unmentioned_variable_and_errors():
    assert elimination_bags(TRIANGLE, ["z"]) == [frozenset({"z"})]
    with pytest.raises(PlanError):
        elimination_bags(TRIANGLE, ["a", "a"])
    with pytest.raises(PlanError):
        faqw(CHAIN, ["j", "k", "i"], {"i", "l"})  # a free variable in the order
    with pytest.raises(PlanError):
        faqw(TRIANGLE, ["z"], [])  # 'z' is in no factor: no cover


def _reachability_bag(edges, done, v):
    """Reference for the exact search: v plus variables reachable through eliminated ones."""
    adj = {}
    for e in edges:
        for u in e:
            adj.setdefault(u, set()).update(set(e) - {u})
    seen, stack = {v}, [v]
    while stack:
        for w in adj.get(stack.pop(), ()):
            if w not in seen:
                seen.add(w)
                if w in done:
                    stack.append(w)
    return frozenset(seen - set(done))


@settings(max_examples=60, deadline=None)
@given(hypergraph_and_bag(), st.randoms(use_true_random=False))
def test_bags_match_reachability(case, rnd):
    edges, _, _ = case
    order = sorted(set().union(*edges))
    rnd.shuffle(order)
    bags = elimination_bags(edges, order)
    for k, v in enumerate(order):
        assert bags[k] == _reachability_bag(edges, order[:k], v)


# --- orders ----------------------------------------------------------------------------


def _respects_blocks(order, blocks):
    pos = {v: i for i, v in enumerate(order)}
    for earlier, later in zip(blocks, blocks[1:]):
        if earlier and later and max(pos[v] for v in earlier) > min(pos[v] for v in later):
            return False
    return True


def test_greedy_orders_simple():
    assert min_fill_order(CHAIN, ["j", "k"]) == ["j", "k"]
    assert min_degree_order(CHAIN, ["j", "k"]) == ["j", "k"]
    assert min_fill_order(TRIANGLE, ["c", "b", "a"]) == ["a", "b", "c"]
    assert min_fill_order(TRIANGLE, []) == []
    # a bound variable in no factor is isolated, so greedy eliminates it first
    assert min_degree_order(TRIANGLE, ["a", "z"]) == ["z", "a"]


@pytest.mark.parametrize("method", ["auto", "exact", "min_fill", "min_degree"])
def test_blocks_are_respected(method):
    # marginal-MAP style: sum out k before maxing out j, although j would go first
    assert choose_order(CHAIN, ["j", "k"], blocks=[["k"], ["j"]], method=method) == ["k", "j"]
    edges = CYCLE5 + [{"a", "c"}]
    blocks = [["d", "b"], ["e"], ["a", "c"]]
    order = choose_order(edges, ["a", "b", "c", "d", "e"], blocks=blocks, method=method)
    assert sorted(order) == list("abcde")
    assert _respects_blocks(order, blocks)


@pytest.mark.parametrize(
    "bound, blocks",
    [
        (["j", "k"], [["j"]]),  # k in no block
        (["j", "k"], [["j", "k"], ["k"]]),  # k twice
        (["j", "k"], [["j", "k", "i"]]),  # i is not bound
        (["j", "j"], None),  # duplicate bound variable
    ],
)
def test_bad_blocks_are_plan_errors(bound, blocks):
    for method in ["exact", "min_fill", "min_degree"]:
        with pytest.raises(PlanError):
            choose_order(CHAIN, bound, blocks=blocks, method=method)


def test_choose_order_errors():
    with pytest.raises(PlanError) as info:
        choose_order(CHAIN, ["j", "k"], method="fastest")
    assert "fastest" in info.value.parameters["reason"]
    with pytest.raises(PlanError):
        exact_order(CHAIN, ["j", "k"], max_vars=1)
    with pytest.raises(PlanError):
        exact_order(CHAIN, ["j", "k"], sizes=[1, 2])
    with pytest.raises(PlanError):
        exact_order(TRIANGLE, ["a", "z"])  # 'z' is in no factor


def test_auto_switches_to_min_fill_above_twelve():
    names = [f"v{i:02d}" for i in range(16)]
    path = [{names[i], names[i + 1]} for i in range(15)]
    assert choose_order(path, names[:14]) == min_fill_order(path, names[:14])
    with pytest.raises(PlanError):
        exact_order(path, names[:14])


def test_exact_order_uses_sizes():
    # cost of [j,k] is |A| min(|B|,|D|) + |A||D|; of [k,j] is |D| min(|A|,|B|) + |A||D|
    assert exact_order(CHAIN, ["j", "k"], sizes=[10, 1, 1000]) == ["j", "k"]
    assert exact_order(CHAIN, ["j", "k"], sizes=[1000, 1, 10]) == ["k", "j"]


def test_exact_order_prefers_width_over_cost():
    # 4-cycle with a pendant free variable: any order has faqw 2 here, and the exact
    # search must never return worse than greedy.
    edges = CYCLE4 + [{"d", "e"}]
    order = exact_order(edges, ["a", "b", "c", "d"])
    assert faqw(edges, order, {"e"}) <= faqw(edges, min_fill_order(edges, list("abcd")), {"e"})


def _brute_force_orders(edges, bound, blocks, sizes):
    free = set().union(*edges) - set(bound)
    best = None
    for perm in itertools.permutations(bound):
        if blocks and not _respects_blocks(list(perm), blocks):
            continue
        w = faqw(edges, perm, free)
        c = sum(agm_bound(edges, sizes, u) for u in elimination_bags(edges, perm))
        if best is None or w < best[0] or (w == best[0] and c < best[1]):
            best = (w, c)
    return best


@st.composite
def query(draw):
    edges, _, _ = draw(hypergraph_and_bag())
    variables = sorted(set().union(*edges))
    bound = draw(st.lists(st.sampled_from(variables), unique=True, max_size=5))
    sizes = draw(st.lists(st.integers(1, 10**4), min_size=len(edges), max_size=len(edges)))
    blocks = None
    if bound and draw(st.booleans()):
        cut = draw(st.integers(0, len(bound)))
        blocks = [bound[:cut], bound[cut:]]
    return edges, bound, blocks, sizes


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query())
def test_exact_order_is_optimal_and_no_worse_than_greedy(q):
    edges, bound, blocks, sizes = q
    free = set().union(*edges) - set(bound)
    order = exact_order(edges, bound, blocks=blocks, sizes=sizes)
    assert sorted(order) == sorted(bound)
    if blocks:
        assert _respects_blocks(order, blocks)
    width = faqw(edges, order, free)
    for greedy in (min_fill_order, min_degree_order):
        g = greedy(edges, bound, blocks)
        assert sorted(g) == sorted(bound)
        if blocks:
            assert _respects_blocks(g, blocks)
        assert width <= faqw(edges, g, free)
    best_w, best_c = _brute_force_orders(edges, bound, blocks, sizes)
    assert width == best_w
    cost = sum(agm_bound(edges, sizes, u) for u in elimination_bags(edges, order))
    assert cost == pytest.approx(best_c, rel=1e-9)


def test_orders_are_deterministic_and_ignore_edge_order():
    edges = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}, {"a", "c", "e"}, {"e", "f"}]
    bound = ["a", "b", "c", "d", "e"]
    methods = ["exact", "min_fill", "min_degree"]
    reference = {m: choose_order(edges, bound, method=m) for m in methods}
    rnd = random.Random(7)
    for _ in range(5):
        shuffled, shuffled_bound = edges[:], bound[:]
        rnd.shuffle(shuffled)
        rnd.shuffle(shuffled_bound)
        for m, expected in reference.items():
            assert choose_order(shuffled, shuffled_bound, method=m) == expected


def test_exact_order_twelve_variables_is_fast():
    names = [f"v{i:02d}" for i in range(14)]
    grid = [{names[r * 3 + c], names[r * 3 + c + 1]} for r in range(4) for c in range(2)]
    grid += [{names[r * 3 + c], names[(r + 1) * 3 + c]} for r in range(3) for c in range(3)]
    cycle = [{names[i], names[(i + 1) % 12]} for i in range(12)]
    for edges in (grid, cycle):
        start = time.process_time()
        order = exact_order(edges, names[:12])
        elapsed = time.process_time() - start
        assert faqw(edges, order, []) <= faqw(edges, min_fill_order(edges, names[:12]), [])
        assert elapsed < 5.0  # typically well under a second


# --- purity ----------------------------------------------------------------------------


def test_hypergraph_does_not_import_pyspark():
    code = "import faq.hypergraph, sys; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


# --- networkx: the primal graph, and its heuristics against ours -----------------------

import networkx as nx  # noqa: E402
from networkx.algorithms.approximation import treewidth as nx_treewidth  # noqa: E402

from faq.hypergraph import primal_graph  # noqa: E402


def test_primal_graph_is_a_networkx_graph():
    g = primal_graph([{"b", "c", "a"}, {"c", "d"}, {"e"}, {"a", "b"}])
    assert isinstance(g, nx.Graph) and not g.is_directed()
    assert list(g) == ["a", "b", "c", "d", "e"]  # name order: deterministic iteration
    assert sorted(map(sorted, g.edges)) == [["a", "b"], ["a", "c"], ["b", "c"], ["c", "d"]]
    assert g.degree["e"] == 0 and nx.number_of_selfloops(g) == 0
    assert primal_graph([]).number_of_nodes() == 0


def _networkx_min_fill_sequence(graph):
    """The vertices networkx's min-fill heuristic eliminates, in order, and its width."""
    chosen = []

    def recording(graph_dict):
        v = nx_treewidth.min_fill_in_heuristic(graph_dict)
        if v is not None:
            chosen.append(v)
        return v

    width, _ = nx_treewidth.treewidth_decomp(graph, recording)
    return chosen, width


@st.composite
def bigger_hypergraph(draw):
    names = "abcdefghij"
    return draw(
        st.lists(st.sets(st.sampled_from(names), min_size=1, max_size=4), min_size=1, max_size=9)
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bigger_hypergraph())
def test_min_fill_is_networkx_min_fill_when_everything_is_bound(edges):
    """The claim of faq/hypergraph/orders.py: with every variable bound and one block, our
    min-fill order is networkx's elimination sequence, then name order inside the clique
    where networkx stops; and the widths agree (networkx's public treewidth_min_fill_in)."""
    variables = sorted(set().union(*edges))
    ours = min_fill_order(edges, variables)
    graph = primal_graph(edges)
    theirs, width = _networkx_min_fill_sequence(graph)
    assert ours[: len(theirs)] == theirs
    rest = ours[len(theirs):]
    assert rest and rest == sorted(rest)  # networkx stops at a clique (one vertex at least)
    bags = elimination_bags(edges, ours)
    assert bags[len(theirs)] == frozenset(rest)  # what is left is that clique
    assert nx_treewidth.treewidth_min_fill_in(graph)[0] == width == max(len(b) for b in bags) - 1


def test_min_degree_is_ours_because_networkx_ties_follow_string_hashes():
    """networkx's min-degree order depends on PYTHONHASHSEED (its ties follow the iteration
    order of a set of strings); ours is the same under every seed."""
    code = (
        "import json, networkx as nx\n"
        "from networkx.algorithms.approximation import treewidth as tw\n"
        "from faq.hypergraph import primal_graph, min_degree_order, min_fill_order\n"
        "edges = [{'b', 'e', 'h'}, {'a', 'd', 'f'}]\n"
        "g = primal_graph(edges); h = tw.MinDegreeHeuristic(g); seq = []\n"
        "def pick(d):\n"
        "    v = h.best_node(d)\n"
        "    seq.append(v)\n"
        "    return v\n"
        "tw.treewidth_decomp(g, pick)\n"
        "names = sorted(g)\n"
        "print(json.dumps([seq, min_degree_order(edges, names), min_fill_order(edges, names)]))\n"
    )
    runs = []
    for seed in ("1", "4"):
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout))
    (nx_1, ours_1, fill_1), (nx_4, ours_4, fill_4) = runs
    assert nx_1 != nx_4  # networkx: ['a', 'f', 'd', None] vs ['a', 'd', 'f', None]
    assert ours_1 == ours_4 == ["a", "d", "f", "b", "e", "h"]
    assert fill_1 == fill_4


# --- drawing (matplotlib on the Agg backend) -------------------------------------------

from faq.errors import MissingDependencyError  # noqa: E402
from faq.hypergraph import draw_hypergraph  # noqa: E402


@pytest.fixture
def agg():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def _nodes(ax):
    """gid -> number of node markers drawn (one point per variable)."""
    return {c.get_gid(): len(c.get_offsets()) for c in ax.collections if c.get_gid()}


def test_draw_returns_axes_with_one_node_per_variable(agg):
    from matplotlib.axes import Axes

    edges = CYCLE5 + [{"a", "c", "f"}]
    ax = draw_hypergraph(edges, order=["b", "c", "d"], free=["a", "e"])
    assert isinstance(ax, Axes)
    assert _nodes(ax) == {"eliminated": 3, "free": 2, "other": 1}  # f: neither
    labels = {t.get_text() for t in ax.texts}
    assert {"b\n1", "c\n2", "d\n3", "a\nfree", "e\nfree", "f"} <= labels
    # no order: every variable drawn plain, once
    assert _nodes(draw_hypergraph(TRIANGLE)) == {"other": 3}


def test_draw_on_given_axes_with_edge_names(agg):
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    out = draw_hypergraph(CHAIN, order=["j", "k"], free=["i", "l"], names=["A", "B", "D"], ax=ax, title="chain")
    assert out is ax and ax.get_title() == "chain"
    assert {"A", "B", "D"} <= {t.get_text() for t in ax.texts}


def test_plan_draw_numbers_the_plans_order(agg):
    from faq.insideout.planner import plan_query
    from faq.language import parse_query

    p = plan_query(parse_query("q(a) := r(a,b,c), s(c,d), t(d,e), u(e,b)"), semiring="counting")
    ax = p.draw()
    assert _nodes(ax) == {"eliminated": 4, "free": 1}
    numbered = {t.get_text() for t in ax.texts}
    assert {f"{v}\n{k}" for k, v in enumerate(p.order, start=1)} <= numbered
    assert ax.get_title() == p.query


def test_draw_checks_its_arguments(agg):
    with pytest.raises(PlanError):
        draw_hypergraph(CHAIN, order=["j", "j"])
    with pytest.raises(PlanError):
        draw_hypergraph(CHAIN, order=["j", "i"], free=["i"])
    with pytest.raises(PlanError):
        draw_hypergraph(CHAIN, names=["A"])


def test_draw_without_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib...` fail
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(MissingDependencyError) as info:
        draw_hypergraph(TRIANGLE)
    assert isinstance(info.value, ImportError)
    assert info.value.parameters == {"package": "matplotlib", "extra": "notebook", "feature": "drawing a query"}
    assert "pip install 'faq[notebook]'" in str(info.value)


def test_importing_hypergraph_and_planner_loads_no_matplotlib_sympy_or_pyspark():
    code = (
        "import sys, faq.hypergraph, faq.insideout.planner\n"
        "loaded = [m for m in ('pyspark', 'matplotlib', 'sympy') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
