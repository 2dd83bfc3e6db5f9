"""InsideOut plans as values: bags, widths, indicators, join choice — no Spark needed."""

import json
from fractions import Fraction

import pytest

from faq.errors import PlanError
from faq.hypergraph.acyclic import attribute_order, is_acyclic
from faq.insideout import plan_query
from faq.language import make_query, parse_query

TRIANGLE = parse_query("count() := edge(a,b), edge(a,c), edge(b,c)")
CHAIN = parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)")


@pytest.mark.parametrize(
    "edges, expected",
    [
        ([{"a", "b"}, {"b", "c"}, {"c", "d"}], True),
        ([{"a", "b", "c"}, {"a", "b"}, {"b", "c"}, {"a", "c"}], True),  # covered by one edge
        ([{"a", "b"}, {"a", "c"}, {"b", "c"}], False),
        ([{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}], False),
        ([{"a"}], True),
        ([], True),
    ],
)
def test_gyo_acyclicity(edges, expected):
    assert is_acyclic(edges) is expected


def test_attribute_order_keeps_each_attribute_constrained():
    edges = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"a", "d"}]
    order = attribute_order(edges)
    for k in range(1, len(order)):
        assert any(order[k] in e and set(order[:k]) & e for e in edges)


def test_triangle_plan_is_one_cyclic_bag():
    p = plan_query(TRIANGLE, semiring="counting", sizes={"edge": 1000})
    assert p.faqw == Fraction(3, 2)
    assert len(p.steps) == 1  # the pure aggregations after the join are folded in
    step = p.steps[0]
    assert set(step.eliminated) == {"a", "b", "c"}
    assert step.join_reason.startswith("cyclic")
    assert step.estimated_rows == pytest.approx(1000**1.5)


def test_chain_plan_indicator_and_free_bag():
    p = plan_query(CHAIN, semiring="real", sizes={"A": 10, "B": 10, "D": 10}, method="exact")
    assert p.order == ("j", "k")
    first = p.steps[0]
    assert set(first.inputs) == {"A#1", "B#2"}
    assert [(i.relation, i.variables) for i in first.indicators] == [("D#3", ("k",))]
    assert first.join_method == "binary" and first.join_reason == "acyclic bag"
    assert p.free_rho_star == 2 and p.faqw == 2
    assert p.result.variables == ("i", "l")


def test_plan_serialises_to_json():
    d = plan_query(CHAIN, semiring="real").to_dict()
    text = json.dumps(d)
    assert json.loads(text)["faqw"] == "2"
    assert {"order", "faqw", "bags"} <= set(d)


@pytest.mark.parametrize("method", ["exact", "min_fill", "min_degree"])
def test_every_method_gives_a_valid_plan(method):
    p = plan_query(parse_query("q(a) := r(a,b), s(b,c), t(c,d), u(d,b)"), semiring="counting", method=method)
    assert sorted(p.order) == ["b", "c", "d"]
    assert p.steps[-1].output.variables == ("a",)


def test_given_order_is_checked():
    assert plan_query(CHAIN, semiring="real", order=["k", "j"]).order == ("k", "j")
    with pytest.raises(PlanError):
        plan_query(CHAIN, semiring="real", order=["j"])


def test_mixed_aggregates_keep_their_precedence():
    q = make_query([("f", "xy"), ("g", "yz")], free=[], semiring="real", aggregates={"x": "max_product"})
    for method in ("exact", "min_fill", "min_degree"):
        p = plan_query(q, method=method)
        assert p.order[-1] == "x"  # the outer max is eliminated last
    with pytest.raises(PlanError):
        plan_query(q, order=["x", "y", "z"])


def test_unknown_join_method():
    with pytest.raises(PlanError):
        plan_query(TRIANGLE, semiring="counting", join="nested_loops")


def test_plan_prints_bags_widths_and_joins():
    text = str(plan_query(TRIANGLE, semiring="counting", sizes={"edge": 10}))
    assert "faqw 3/2" in text and "ρ* 3/2" in text and "edge#1(a, b)" in text


# --- statistics and the generic join's estimated work ---------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from faq.hypergraph.statistics import (  # noqa: E402
    ColumnStatistics,
    RelationProfile,
    RelationStatistics,
    estimate_generic_join_work,
)


def levels_of(p):
    (step,) = p.steps
    return [
        (lv.attribute, lv.proposer, round(lv.prefixes, 6), round(lv.work, 6), round(lv.bound, 6))
        for lv in step.work.levels
    ]


def test_triangle_work_estimate_by_hand():
    """edge: 100 rows, 50 distinct sources and targets, at most 30 rows per vertex.

    a: 50 seeds.  b: edge#1 proposes 100/50 = 2 per a (edge#3 would propose all 50 sources):
    50·2 = 100, all kept (edge#3 holds 50 of the 50 values).  c: both propose 2 per prefix:
    100·2 = 200.  Bounds: AGM of {a} is 50, of {a,b} 100 (edge#1's rows), of {a,b,c} 100^1.5 = 1000
    (the degree bound 100·30 is weaker).
    """
    stats = {"edge": RelationStatistics(100, (ColumnStatistics(50, 30), ColumnStatistics(50, 30)))}
    p = plan_query(TRIANGLE, semiring="counting", statistics=stats)
    assert p.sizes == {"edge": 100}
    assert levels_of(p) == [
        ("a", "edge#1", 1, 50, 50), ("b", "edge#1", 50, 100, 100), ("c", "edge#2", 100, 200, 1000)
    ]
    work = p.steps[0].work
    assert work.total == pytest.approx(350) and work.bound == pytest.approx(1150)


def test_work_estimate_from_row_counts_only_assumes_dense_relations():
    """Without column statistics a binary relation of 100 rows is taken as a 10 × 10 square:
    the estimate reaches the AGM bound 1000 at the last attribute; bounds use rows only."""
    p = plan_query(TRIANGLE, semiring="counting", sizes={"edge": 100})
    assert levels_of(p) == [
        ("a", "edge#1", 1, 10, 100), ("b", "edge#1", 10, 100, 100), ("c", "edge#2", 100, 1000, 1000)
    ]


def test_no_work_estimate_for_binary_joins_or_without_statistics():
    assert plan_query(TRIANGLE, semiring="counting").steps[0].work is None
    p = plan_query(CHAIN, semiring="real", sizes={"A": 10, "B": 10, "D": 10}, method="exact")
    assert all(s.join_method == "binary" and s.work is None for s in p.steps)
    forced = plan_query(CHAIN, semiring="real", sizes={"A": 10, "B": 10, "D": 10}, method="exact", join="generic")
    first = forced.steps[0]
    assert {lv.attribute for lv in first.work.levels} == {"i", "j", "k"}
    assert "πD#3" in {r for lv in first.work.levels for r in lv.relations}  # the indicator constrains k


def test_work_estimate_is_printed_and_serialised():
    stats = {"edge": RelationStatistics(100, (ColumnStatistics(50, 30), ColumnStatistics(50, 30)))}
    p = plan_query(TRIANGLE, semiring="counting", statistics=stats)
    text = str(p)
    assert "generic-join work (est.): Σ smallest proposals ≈ 350 (≤ 1.15e+03)" in text
    d = json.loads(json.dumps(p.to_dict()))
    work = d["bags"][0]["generic_join_work"]
    assert work["total"] == 350 and work["bound"] == 1150 and "uniform" in work["assumptions"]
    assert [lv["proposer"] for lv in work["levels"]] == ["edge#1", "edge#1", "edge#2"]
    assert d["statistics"]["edge"] == {"rows": 100, "columns": [{"distinct": 50, "max_degree": 30}] * 2}
    assert plan_query(TRIANGLE, semiring="counting").to_dict()["bags"][0]["generic_join_work"] is None


def real_work(relations, order):
    """Σ over prefixes of the smallest candidate count, per attribute, by enumeration
    (prefixes are kept when every relation's projection holds them, as the generic join validates)."""
    prefixes = [dict()]
    out = []
    for k, x in enumerate(order):
        bound = order[:k]
        holding = [(vs, rows) for vs, rows in relations if x in vs]
        work, following = 0, []
        for p in prefixes:
            candidates = []
            for vs, rows in holding:
                key = [v for v in vs if v in bound]
                index = [vs.index(v) for v in key]
                candidates.append({r[vs.index(x)] for r in rows if all(r[i] == p[v] for i, v in zip(index, key))})
            work += min(len(c) for c in candidates)
            following += [{**p, x: value} for value in set.intersection(*candidates)]
        out.append(work)
        prefixes = following
    return out


def statistics_of(rows, arity):
    columns = []
    for i in range(arity):
        counts = {}
        for r in rows:
            counts[r[i]] = counts.get(r[i], 0) + 1
        columns.append(ColumnStatistics(len(counts), max(counts.values(), default=0)))
    return RelationStatistics(len(rows), tuple(columns))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=40),
    st.sampled_from(["triangle", "cycle4", "clique4"]),
)
def test_work_bound_holds_on_random_graphs(edges, shape):
    """With exact statistics the upper bound is never below the real Σ of smallest proposals."""
    pattern = {
        "triangle": [("a", "b"), ("a", "c"), ("b", "c")],
        "cycle4": [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")],
        "clique4": [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")],
    }[shape]
    rows = sorted(edges)
    stats = statistics_of(rows, 2)
    order = list(dict.fromkeys(v for e in pattern for v in e))
    profiles = [RelationProfile.of(f"e{i}", e, stats) for i, e in enumerate(pattern)]
    estimate = estimate_generic_join_work(profiles, order)
    real = real_work([(e, rows) for e in pattern], order)
    for level, truth in zip(estimate.levels, real):
        assert truth <= level.bound * (1 + 1e-9), (shape, level, truth)
        assert level.work <= level.bound * (1 + 1e-9)


# --- symbolic costs: each bag's AGM bound Π N_f^x and the runtime Õ(N^faqw + |output|) ---

import math  # noqa: E402

import sympy  # noqa: E402

from faq.hypergraph import agm_bound, rho_star  # noqa: E402
from faq.hypergraph.symbolic import size_symbol  # noqa: E402

CYCLE4 = parse_query("count() := e(a,b), e(b,c), e(c,d), e(d,a)")
N = sympy.Symbol("N", positive=True)
OUTPUT = sympy.Symbol("|output|", nonnegative=True)


def agm_lines(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("AGM bound")]


def test_triangle_costs_n_to_the_three_halves():
    p = plan_query(TRIANGLE, semiring="counting", sizes={"edge": 1000})
    (step,) = p.steps
    assert p.agm_expression(step) == size_symbol("edge") ** sympy.Rational(3, 2)
    assert step.cover == (("edge#1", Fraction(1, 2)), ("edge#2", Fraction(1, 2)), ("edge#3", Fraction(1, 2)))
    assert p.runtime_expression() == N ** sympy.Rational(3, 2) + OUTPUT
    text = str(p)
    assert agm_lines(text) == ["AGM bound N_edge^(3/2); fractional edge cover edge#1 1/2, edge#2 1/2, edge#3 1/2"]
    assert text.splitlines()[-1] == "  runtime Õ(N^(3/2) + |output|), N = rows of the largest factor (1e+03)"
    d = json.loads(json.dumps(p.to_dict()))
    assert d["bags"][0]["agm_expression"] == "N_edge^(3/2)"
    assert d["bags"][0]["cover"] == {"edge#1": "1/2", "edge#2": "1/2", "edge#3": "1/2"}
    assert d["runtime"] == "Õ(N^(3/2) + |output|)"
    assert d["free_cover"] == {} and d["free_agm_expression"] == "1"


def test_four_cycle_costs_n_squared_in_every_bag():
    p = plan_query(CYCLE4, semiring="counting")
    assert p.faqw == 2 and len(p.steps) >= 2
    for step in p.steps:
        assert p.agm_expression(step) == size_symbol("e") ** 2
    assert agm_lines(str(p))[0].startswith("AGM bound N_e^2; ")
    assert str(p).splitlines()[-1] == "  runtime Õ(N^2 + |output|), N = rows of the largest factor"
    assert p.runtime_expression() == N**2 + OUTPUT


def test_chain_costs_follow_the_sizes():
    """Bag {i, j, k} is covered by A and, for k, by B or D: the cheaper one is in the bound."""
    a, b, d = (size_symbol(f) for f in "ABD")
    small_b = plan_query(CHAIN, semiring="real", sizes={"A": 100, "B": 10, "D": 1000}, method="exact")
    small_d = plan_query(CHAIN, semiring="real", sizes={"A": 100, "B": 1000, "D": 10}, method="exact")
    assert small_b.order == small_d.order == ("j", "k")
    assert small_b.agm_expression(small_b.steps[0]) == a * b
    assert small_d.agm_expression(small_d.steps[0]) == a * d
    for p in (small_b, small_d):
        assert p.agm_expression(p.steps[1]) == a * d  # bag {i, k, l}
        assert p.agm_expression() == a * d  # free bag {i, l}
        assert p.runtime_expression() == N**2 + OUTPUT
    assert agm_lines(str(small_d)) == [
        "AGM bound N_A*N_D; fractional edge cover A#1 1, D#3 1",
        "AGM bound N_A*N_D; fractional edge cover A#1 1, D#3 1",
        "AGM bound N_A*N_D; fractional edge cover A#1 1, D#3 1",
    ]
    assert str(small_d).splitlines()[-1].endswith("N = rows of the largest factor (1e+03)")


def test_matrix_chain_of_four_and_a_loomis_whitney_bag():
    p = plan_query(parse_query("C(i,m) := A(i,j), B(j,k), D(k,l), E(l,m)"), semiring="real")
    assert p.faqw == 2 and all(sum(w for _, w in s.cover) == s.rho_star for s in p.steps)
    lw = plan_query(parse_query("count() := r(a,b,c), s(a,b,d), t(a,c,d), u(b,c,d)"), semiring="counting")
    assert lw.faqw == Fraction(4, 3)
    third = sympy.Rational(1, 3)
    assert lw.agm_expression(lw.steps[0]) == sympy.Mul(*(size_symbol(f) ** third for f in "rstu"))
    assert "N_r^(1/3)*N_s^(1/3)*N_t^(1/3)*N_u^(1/3)" in str(lw)
    assert "runtime Õ(N^(4/3) + |output|)" in str(lw)


@st.composite
def sized_query(draw):
    """Up to 5 atoms over a..f; factor names repeat (same arity), sizes 1..10^5, some free."""
    variables = "abcdef"
    atoms = draw(st.lists(st.sets(st.sampled_from(variables), min_size=1, max_size=3), min_size=1, max_size=5))
    atoms = [(f"r{len(vs)}{draw(st.integers(0, 1))}", sorted(vs)) for vs in atoms]
    used = sorted({v for _, vs in atoms for v in vs})
    free = draw(st.lists(st.sampled_from(used), unique=True, max_size=2))
    sizes = {f: draw(st.integers(1, 10**5)) for f, _ in atoms}
    return make_query(atoms, free=free, semiring="counting"), sizes


@settings(max_examples=80, deadline=None, derandomize=True)
@given(sized_query())
def test_agm_expression_at_the_sizes_is_the_estimate(case):
    """Each bag's Π N_f^x, evaluated at the factor sizes, is its estimated rows (the AGM bound);
    each cover covers its bag; without sizes the exponents add up to ρ*."""
    q, sizes = case
    p = plan_query(q, sizes=sizes)
    edges = [set(r.variables) for r, _ in p.inputs]
    at_sizes = {size_symbol(f): n for f, n in sizes.items()}
    bags = [(s.bag, s.cover, s, s.estimated_rows) for s in p.steps]
    bags.append((p.free, p.free_cover, None, agm_bound(edges, [sizes[f] for _, f in p.inputs], set(p.free))))
    for bag, cover, step, estimate in bags:
        weight = dict(cover)
        for v in bag:
            assert sum(weight.get(r.id, 0) for r, _ in p.inputs if v in r.variables) >= 1
        value = float(p.agm_expression(step).subs(at_sizes))
        assert value == pytest.approx(estimate, rel=1e-9)
    bare = plan_query(q)
    for s in bare.steps:
        assert sum(w for _, w in s.cover) == s.rho_star == rho_star(edges, set(s.bag))
    assert sum(w for _, w in bare.free_cover) == bare.free_rho_star
    assert p.runtime_expression() - OUTPUT == N ** sympy.Rational(p.faqw.numerator, p.faqw.denominator)
