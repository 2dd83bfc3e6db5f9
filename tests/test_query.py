"""The query value and its text form."""

import pytest

from faq.errors import PlanError, QueryParseError, UnknownVariableError
from faq.language import FAQ, Atom, make_query, parse_query


def test_parse_triangle():
    q = parse_query("count() := edge(a,b), edge(a,c), edge(b,c)")
    assert q.name == "count"
    assert q.free == ()
    assert q.atoms == (Atom("edge", ("a", "b")), Atom("edge", ("a", "c")), Atom("edge", ("b", "c")))
    assert q.factor_names == ("edge",)


def test_parse_matrix_chain_and_datalog_arrow():
    q = parse_query("C(i,l) :- A(i,j), B(j,k), D(k,l)")
    assert q.free == ("i", "l") and q.bound == ("j", "k")
    assert str(q) == "C(i, l) := A(i, j), B(j, k), D(k, l)"
    assert parse_query(str(q)) == q


@pytest.mark.parametrize(
    "text, position",
    [
        ("count() = edge(a,b)", 8),
        ("count() := edge(a,b) edge(b,c)", 21),
        ("count() := edge(a,", 18),
        ("count( := edge(a)", 7),
        ("() := e(a)", 0),
    ],
)
def test_parse_errors_point_at_the_problem(text, position):
    with pytest.raises(QueryParseError) as info:
        parse_query(text)
    assert info.value.parameters["position"] == position
    assert info.value.parameters["text"] == text


def test_free_variable_in_no_factor():
    with pytest.raises(UnknownVariableError) as info:
        parse_query("q(z) := e(a,b)")
    assert info.value.parameters == {"variable": "z", "role": "free", "known": ["a", "b"]}


def test_aggregate_blocks_keep_precedence():
    q = make_query([("f", "xyz")], free=["x"], semiring="real", aggregates=[("y", "max_product")])
    # z (Σ, inner) is eliminated before y (max, outer).
    assert q.blocks("real") == [("real", ("z",)), ("max_product", ("y",))]
    with pytest.raises(PlanError):
        make_query([("f", "xy")], free=["x"], aggregates=[("x", "max_product")])


def test_reserved_variable_names():
    with pytest.raises(PlanError):
        FAQ((Atom("f", ("__v",)),))
