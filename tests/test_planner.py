"""InsideOut plans as values: bags, widths, indicators, join choice — no Spark needed."""

import json
from fractions import Fraction

import pytest

from faq.errors import PlanError
from faq.hypergraph.acyclic import attribute_order, is_acyclic
from faq.insideout import plan
from faq.query import make_query, parse_query

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
    p = plan(TRIANGLE, semiring="counting", sizes={"edge": 1000})
    assert p.faqw == Fraction(3, 2)
    assert len(p.steps) == 1  # the pure aggregations after the join are folded in
    step = p.steps[0]
    assert set(step.eliminated) == {"a", "b", "c"}
    assert step.join_reason.startswith("cyclic")
    assert step.estimated_rows == pytest.approx(1000**1.5)


def test_chain_plan_indicator_and_free_bag():
    p = plan(CHAIN, semiring="real", sizes={"A": 10, "B": 10, "D": 10}, method="exact")
    assert p.order == ("j", "k")
    first = p.steps[0]
    assert set(first.inputs) == {"A#1", "B#2"}
    assert [(i.relation, i.variables) for i in first.indicators] == [("D#3", ("k",))]
    assert first.join_method == "binary" and first.join_reason == "acyclic bag"
    assert p.free_rho_star == 2 and p.faqw == 2
    assert p.result.variables == ("i", "l")


def test_plan_serialises_to_json():
    d = plan(CHAIN, semiring="real").to_dict()
    text = json.dumps(d)
    assert json.loads(text)["faqw"] == "2"
    assert {"order", "faqw", "bags"} <= set(d)


@pytest.mark.parametrize("method", ["exact", "min_fill", "min_degree"])
def test_every_method_gives_a_valid_plan(method):
    p = plan(parse_query("q(a) := r(a,b), s(b,c), t(c,d), u(d,b)"), semiring="counting", method=method)
    assert sorted(p.order) == ["b", "c", "d"]
    assert p.steps[-1].output.variables == ("a",)


def test_given_order_is_checked():
    assert plan(CHAIN, semiring="real", order=["k", "j"]).order == ("k", "j")
    with pytest.raises(PlanError):
        plan(CHAIN, semiring="real", order=["j"])


def test_mixed_aggregates_keep_their_precedence():
    q = make_query([("f", "xy"), ("g", "yz")], free=[], semiring="real", aggregates={"x": "max_product"})
    for method in ("exact", "min_fill", "min_degree"):
        p = plan(q, method=method)
        assert p.order[-1] == "x"  # the outer max is eliminated last
    with pytest.raises(PlanError):
        plan(q, order=["x", "y", "z"])


def test_unknown_join_method():
    with pytest.raises(PlanError):
        plan(TRIANGLE, semiring="counting", join="nested_loops")


def test_plan_prints_bags_widths_and_joins():
    text = str(plan(TRIANGLE, semiring="counting", sizes={"edge": 10}))
    assert "faqw 3/2" in text and "ρ* 3/2" in text and "edge#1(a, b)" in text
