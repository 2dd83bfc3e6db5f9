"""InsideOut against the brute-force evaluator, on random small FAQs.

The random queries run twice: a few examples with every step on the executors
(``placement="executors"``), as Spark jobs, and many more with every step
in-process (``placement="driver"``: no Spark job, milliseconds an example);
tests/test_placement.py runs more in-process queries and mixes placements.
The counts scale with the hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.factor import factor_of
from faq.insideout import evaluate, plan_query
from faq.language import make_query, parse_query
from faq.semirings import semiring_names
from tests.brute_force import PY_SEMIRINGS, assert_same_answer, brute_force
from tests.conftest import examples
from tests.strategies import DOMAIN, factors_of, random_faq

# Every test but the plan's and the registry's runs InsideOut on Spark.
pytestmark = pytest.mark.usefixtures("spark")

# Examples per random test in the suite: through Spark jobs, and in-process.
SPARK = 4
IN_PROCESS = 10
PLACEMENTS = [("executors", SPARK), ("driver", IN_PROCESS)]

PROPERTY = settings(
    max_examples=examples(SPARK),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)


def answer_rows(result) -> dict:
    """{key: value} of an answer: read from the driver's copy when the last step ran in-process (no
    Spark job), else collected."""
    held = result.factor.relation.arrays
    if held is None:
        return {tuple(r[:-1]): r[-1] for r in result.df.collect()}
    return {tuple(r[:-1]): r[-1] for r in zip(*(held[c].tolist() for c in result.factor.columns()))}


def run_and_compare(atoms, data, free, semiring, aggregates=(), method="auto", placement="executors"):
    factors = factors_of(atoms, data, semiring)
    query = make_query(atoms, free, semiring=semiring, aggregates=aggregates)
    with evaluate(query, factors, method=method, placement=placement) as result:
        got = answer_rows(result)
        placed = {s.placement for s in result.plan.steps}
    expected = brute_force(atoms, data, free, semiring, DOMAIN, aggregates)
    assert_same_answer(got, expected, str(query))
    return placed


@pytest.mark.parametrize("placement, n", PLACEMENTS)
@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
def test_random_faqs_match_brute_force(semiring, placement, n):
    @settings(PROPERTY, max_examples=examples(n))
    @given(random_faq(semiring))
    def check(case):
        atoms, data, free = case
        assert run_and_compare(atoms, data, free, semiring, placement=placement) == {placement}

    check()


@pytest.mark.parametrize("placement, n", PLACEMENTS)
def test_marginal_map_keeps_aggregate_precedence(placement, n):
    """max over some variables of Σ over the rest (sum and max share ×)."""

    @settings(PROPERTY, max_examples=examples(n))
    @given(random_faq("max_product"), st.data())
    def check(case, data):
        atoms, rows, free = case
        bound = [v for v in dict.fromkeys(v for _, vs in atoms for v in vs) if v not in free]
        maxed = data.draw(st.lists(st.sampled_from(bound), unique=True, max_size=len(bound)) if bound else st.just([]))
        aggregates = [(v, "max_product") for v in maxed]
        assert run_and_compare(atoms, rows, free, "real", aggregates, placement=placement) == {placement}

    check()


def test_marginal_map_differs_from_swapped_order():
    """max_y Σ_z ≠ Σ_z max_y here, and the engine gives the former."""
    f = [(0, 0, 1.0), (0, 1, 1.0), (1, 0, 3.0)]  # f(y, z)
    atoms = [("f", ["y", "z"])]
    run_and_compare(atoms, {"f": f}, [], "real", [("y", "max_product")])
    expected = brute_force(atoms, {"f": f}, [], "real", DOMAIN, [("y", "max_product")])
    assert expected == {(): 3.0}  # max(1+1, 3) — while Σ_z max_y would be 3 + 1 = 4


def test_every_builtin_semiring_is_covered():
    assert set(PY_SEMIRINGS) == set(semiring_names())


def test_cyclic_query_joins_on_every_shared_variable():
    """A 4-cycle: joining only on variables common to all participants would overcount."""
    edges = [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 0, 1), (0, 2, 1)]
    atoms = [("e", ["a", "b"]), ("e", ["b", "c"]), ("e", ["c", "d"]), ("e", ["d", "a"])]
    for method in ("exact", "min_fill", "min_degree"):
        factors = {"e": factor_of(edges, ["s", "t"], "counting")}
        with evaluate(make_query(atoms, []), factors, method=method) as result:
            got = result.scalar()
        assert got == brute_force(atoms, {"e": edges}, [], "counting", range(4))[()]


def test_repeated_variable_in_an_atom_keeps_the_diagonal():
    f = factor_of([(0, 0, 2), (0, 1, 3), (1, 1, 5)], ["x", "y"], "counting")
    with evaluate(parse_query("q(x) := f(x, x)"), {"f": f}) as result:
        assert sorted(map(tuple, result.factor.df.collect())) == [(0, 2), (1, 5)]


def test_an_atom_bound_on_the_executors_reads_odd_column_names_and_keeps_the_diagonal(spark):
    """Binding writes its projection and diagonal filter as SQL text (one call into Spark): column names
    with a dot, a backtick or a space are names, not paths; an int key is widened to bigint."""
    from faq.factor import Factor

    rows = [(0, 0, 2), (0, 1, 3), (1, 1, 5), (2, 0, 7)]
    df = spark.createDataFrame(rows, "`a.b` int, `odd``name` int, `the value` bigint")
    f = Factor.from_dataframe(df, ["a.b", "odd`name"], value="the value", semiring="counting")
    with evaluate("q(x) := f(x, x)", {"f": f}, placement="executors") as result:
        assert sorted(map(tuple, result.df.collect())) == [(0, 2), (1, 5)]
        assert dict(result.df.dtypes)["x"] == "bigint"
    with evaluate("q(x) := f(x, y), f(y, z)", {"f": f}, placement="executors") as result:
        expected = {}
        for x, y, v in rows:
            for y2, _, w in rows:
                if y2 == y:
                    expected[x] = expected.get(x, 0) + v * w
        assert dict(map(tuple, result.df.collect())) == expected


def test_scalar_of_an_empty_answer_is_zero():
    f = factor_of([(0, 1, 1)], ["x", "y"], "counting")
    with evaluate(parse_query("q() := f(a, b), f(b, a)"), {"f": f}) as result:
        assert result.scalar() == 0


@pytest.mark.parametrize("semiring, in_tasks", [("counting", True), ("counting", False), ("min_plus", True),
                                                ("boolean", False)])
def test_a_scalar_is_held_on_the_driver_however_it_was_combined(semiring, in_tasks):
    """The last step onto no variable: partial aggregates ⊕-combined on the driver (in_tasks) or
    by Spark's group-by, then held (no job to read it); zero (no triangle) is no row."""
    triangle_and_tail = [(0, 1, 2), (1, 2, 3), (0, 2, 4), (2, 3, 5), (3, 4, 6)]
    if semiring == "boolean":
        triangle_and_tail = [(s, t, True) for s, t, _ in triangle_and_tail]
    expected = brute_force([("e", ["a", "b"]), ("e", ["b", "c"]), ("e", ["a", "c"])],
                           {"e": triangle_and_tail}, [], semiring, range(5))[()]
    for edges, want, rows in ((triangle_and_tail, expected, 1), (triangle_and_tail[3:], None, 0)):
        factors = {"e": factor_of(edges, ["s", "t"], semiring)}
        with evaluate("q() := e(a,b), e(b,c), e(a,c)", factors, join="generic_broadcast",
                      task_aggregation=in_tasks, placement="executors") as result:
            assert result.step_rows == [rows]
            assert result.factor.relation.held and result.factor.relation.rows == rows
            zero = result.factor.semiring.zero
            assert result.scalar() == (zero if want is None else want)
            assert ("inside tasks" in result.notes[-1]) == in_tasks


def test_disconnected_free_variables_form_a_product():
    f = factor_of([(0, 2), (1, 3)], ["x"], "counting")
    g = factor_of([(5, 7)], ["y"], "counting")
    with evaluate(parse_query("q(x, y) := f(x), g(y)"), {"f": f, "g": g}) as result:
        assert sorted(map(tuple, result.factor.df.collect())) == [(0, 5, 14), (1, 5, 21)]


def test_steps_are_materialised_and_released(spark):
    edges = factor_of([(0, 1, 1), (1, 2, 1), (0, 2, 1)], ["s", "t"], "counting")
    before = len(spark.sparkContext._jsc.getPersistentRDDs())
    result = evaluate("count() := e(a,b), e(a,c), e(b,c)", {"e": edges})
    assert result.scalar() == 1
    assert len(result.step_rows) == len(result.plan.steps)
    result.close()
    assert len(spark.sparkContext._jsc.getPersistentRDDs()) == before


def test_plan_is_spark_free_value():
    p1 = plan_query(parse_query("count() := e(a,b), e(a,c), e(b,c)"), semiring="counting", sizes={"e": 10})
    p2 = plan_query(parse_query("count() := e(a,b), e(a,c), e(b,c)"), semiring="counting", sizes={"e": 10})
    assert p1 == p2
    assert str(p1.faqw) == "3/2"
    assert p1.to_dict()["bags"][0]["rho_star"] == "3/2"


def test_an_unregistered_user_defined_semiring_runs_through_evaluate():
    """A semiring made in a notebook and never registered: the plan names its ⊕ by the
    semiring's name, and the executor takes it from the query (not from the registry)."""
    from pyspark.sql import functions as F

    from faq.semirings import Semiring, semiring_names

    mine = Semiring("my_unregistered_count", "bigint", 0, 1, lambda a, b: a + b, lambda a, b: a * b, F.sum)
    assert mine.name not in semiring_names()
    edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1), (1, 3, 1)]
    edge = factor_of(edges, ["s", "t"], mine, name="edge")
    with evaluate("count() := edge(a,b), edge(a,c), edge(b,c)", {"edge": edge}) as result:
        assert result.scalar() == 2  # 0→1→2 and 1→2→3
