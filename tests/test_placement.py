"""Steps placed on the driver (in-process, no Spark job) against brute force, and the plan's choice.

tests/test_insideout.py runs random FAQs with every step on the executors;
here the same kind of queries run in-process (many more examples: a query
takes milliseconds), plans mixing both placements hand relations across, and
the planner's choice is checked from sizes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from faq.factor import factor_of
from faq.insideout import evaluate, plan_for
from faq.insideout.physical import Environment
from faq.language import make_query
from tests.brute_force import PY_SEMIRINGS, assert_same_answer, brute_force
from tests.strategies import DOMAIN, cyclic_faq, factors_of, random_faq

pytestmark = pytest.mark.usefixtures("spark")

IN_PROCESS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)


def answer(atoms, data, free, semiring, placement, aggregates=()):
    factors = factors_of(atoms, data, semiring)
    query = make_query(atoms, free, semiring=semiring, aggregates=aggregates)
    with evaluate(query, factors, placement=placement) as result:
        got = {tuple(r[:-1]): r[-1] for r in result.factor.df.collect()}
        return got, result.plan, str(query)


def driver_plan_of_checked(case, semiring):
    """Answer a generated case with the driver placement, check it against brute force; the plan that ran."""
    atoms, data, free = case
    got, plan, query = answer(atoms, data, free, semiring, "driver")
    assert_same_answer(got, brute_force(atoms, data, free, semiring, DOMAIN), query)
    return plan


@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
def test_random_faqs_in_process_match_brute_force(semiring):
    @IN_PROCESS
    @given(random_faq(semiring))
    def check(case):
        plan = driver_plan_of_checked(case, semiring)
        assert {s.placement for s in plan.steps} == {"driver"}

    check()


@pytest.mark.parametrize("semiring", ["counting", "real", "min_plus", "boolean", "max_min"])
def test_cyclic_faqs_in_process_run_the_generic_kernel_and_match_brute_force(semiring):
    @IN_PROCESS
    @given(cyclic_faq(semiring))
    def check(case):
        driver_plan_of_checked(case, semiring)

    check()


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cyclic_faq("integer"))
def test_both_placements_give_the_same_answer(case):
    atoms, data, free = case
    driver, _, query = answer(atoms, data, free, "integer", "driver")
    executors, plan, _ = answer(atoms, data, free, "integer", "executors")
    assert {s.placement for s in plan.steps} == {"executors"}
    assert_same_answer(driver, executors, query)


def test_a_plan_that_alternates_placements_hands_relations_across():
    """Step 1 in-process, step 2 on Spark, step 3 in-process: the relations cross both ways."""
    rng = np.random.default_rng(7)
    data = {name: [(int(i), int(j), float(v)) for i, j, v in zip(rng.integers(0, 6, 20), rng.integers(0, 6, 20),
                                                                    rng.integers(1, 4, 20))]
            for name in ("A", "B", "C", "D")}
    atoms = [("A", ["i", "j"]), ("B", ["j", "k"]), ("C", ["k", "l"]), ("D", ["l", "m"])]
    factors = factors_of(atoms, data, "real")
    query = make_query(atoms, ["i", "m"], semiring="real")
    base = plan_for(query, factors, order=["j", "k", "l"])
    placements = ["driver", "executors", "driver"]
    mixed = replace(base, steps=tuple(replace(s, placement=p) for s, p in zip(base.steps, placements)))
    with evaluate(query, factors, plan=mixed) as result:
        got = {tuple(r[:-1]): r[-1] for r in result.factor.df.collect()}
        assert [n.startswith("in-process") for n in result.notes] == [True, False, True]
    assert_same_answer(got, brute_force(atoms, data, ["i", "m"], "real", range(6)), str(query))


def test_string_keys_join_in_process(spark):
    """Keys of any type: the in-process merges join strings as Spark does, and the answer keeps the type."""
    people = spark.createDataFrame([("ann", "bob"), ("bob", "cy"), ("ann", "cy"), ("cy", "dee")], ["a", "b"])
    import faq

    with faq.query("p(x, z) := knows(x, y), knows(y, z)", knows=people) as result:
        assert result.plan.steps[0].placement == "driver"
        assert sorted(map(tuple, result.df.collect())) == [("ann", "cy", 1), ("ann", "dee", 1), ("bob", "dee", 1)]
        assert result.df.schema["x"].dataType.simpleString() == "string"
    with faq.query("t() := knows(x, y), knows(y, z), knows(x, z)", knows=people) as result:
        assert result.scalar() == 1  # ann -> bob -> cy, ann -> cy


def test_the_plan_places_by_size_and_says_why():
    edge = factor_of([(0, 1, 1), (1, 2, 1), (0, 2, 1)], ["s", "t"], "counting")
    text = "count() := e(a,b), e(a,c), e(b,c)"
    small = plan_for(text, {"e": edge}, environment=Environment(placement="auto"))
    assert small.steps[0].placement == "driver"
    assert small.held == ("e",) and small.degrees == {"e": (2, 2)}
    assert "runs in-process on the driver (inputs of 9 rows held on the driver" in str(small)
    tight = plan_for(text, {"e": edge}, environment=Environment(placement="auto", local_memory=64))
    assert tight.steps[0].placement == "executors"
    assert "exceeds the in-process memory 64 B (spark.faq.localMemory)" in tight.steps[0].placement_reason
    assert tight.to_dict()["bags"][0]["placement"] == "executors"


def test_the_product_bound_uses_the_degrees_of_held_factors():
    """A diagonal matrix times a sparse one: the AGM bound N_A·N_B is far above the degree bound."""
    import scipy.sparse

    from faq.io.convert import from_scipy

    a = from_scipy(scipy.sparse.random(500, 500, density=0.02, random_state=1, format="coo"), name="A")
    d = from_scipy(scipy.sparse.identity(500, format="coo"), name="D")
    p = plan_for("C(i, k) := A(i, j), D(j, k)", {"A": a, "D": d}, environment=Environment(placement="auto"))
    (step,) = p.steps
    assert step.estimated_rows == pytest.approx(5000 * 500)  # the AGM bound
    assert step.product_rows <= 5000  # each row of A meets one row of the diagonal
    assert step.placement == "driver"


def test_a_semiring_without_numpy_form_stays_on_the_executors():
    from pyspark.sql import functions as F

    from faq.semirings import Semiring

    no_numpy = Semiring("my_spark_only", "bigint", 0, 1, lambda a, b: a + b, lambda a, b: a * b, F.sum)
    edge = factor_of([(0, 1, 1), (1, 2, 1), (0, 2, 1)], ["s", "t"], no_numpy)
    with evaluate("count() := e(a,b), e(a,c), e(b,c)", {"e": edge}, placement="auto") as result:
        assert result.scalar() == 1
        step = result.plan.steps[0]
        assert step.placement == "executors" and "no numpy ⊗/⊕ for my_spark_only" in step.placement_reason


def test_a_small_dataframe_is_fetched_once_and_runs_in_process(spark):
    """A DataFrame factor the driver does not hold comes over in one job when small; the caller's
    DataFrame carries no record of it afterwards."""
    from faq.factor import Factor

    df = spark.createDataFrame([(0, 1), (1, 2), (0, 2), (2, 3)], "s long, t long")
    edge = Factor.from_dataframe(df, ["s", "t"], "counting")
    with evaluate("count() := e(a,b), e(a,c), e(b,c)", {"e": edge}) as result:
        assert result.scalar() == 1
        assert result.plan.steps[0].placement == "driver"
    assert not edge.relation.held  # the caller's factor: still its DataFrame, nothing held
    spark.conf.set("spark.faq.localRows", "3")
    try:
        with evaluate("count() := e(a,b), e(a,c), e(b,c)", {"e": edge}) as result:
            assert result.scalar() == 1
            assert result.plan.steps[0].placement == "executors"
            assert "exceeds spark.faq.localRows=3" in result.plan.steps[0].placement_reason
    finally:
        spark.conf.unset("spark.faq.localRows")


def test_the_fetch_budget_is_bytes_and_explain_says_so(spark):
    """The fetch is decided by the copy's bytes (``spark.faq.fetchMemory``), not a row count."""
    from faq.factor import Factor

    df = spark.createDataFrame([(0, 1), (1, 2), (0, 2), (2, 3)], "s long, t long")
    edge = Factor.from_dataframe(df, ["s", "t"], "counting")
    spark.conf.set("spark.faq.fetchMemory", "64")  # 4 rows x 3 columns x 8 bytes = 96 bytes: too many
    try:
        with evaluate("count() := e(a,b), e(a,c), e(b,c)", {"e": edge}) as result:
            assert result.scalar() == 1
            step = result.plan.steps[0]
            assert step.placement == "executors"
            assert "(est. 96 B) is not on the driver and exceeds the fetch budget 64 B (spark.faq.fetchMemory)" \
                in step.placement_reason
    finally:
        spark.conf.unset("spark.faq.fetchMemory")


def test_a_graph_given_as_a_dataframe_is_fetched_and_cleaned_on_the_driver(spark, tmp_path):
    """wiki-Vote (103,689 edges, over the old 100,000-row threshold) from Parquet: its ids come to the
    driver in one Arrow collect and the count runs in-process, equal to the path's and to the Spark path's."""
    import faq
    from faq.graphs.edges import prepared_graph
    from faq.io.local_edges import read_edge_arrays
    path = str(Path(__file__).parent / "data" / "wiki-Vote.txt.gz")
    src, dst = read_edge_arrays(path)
    spark.createDataFrame([(int(s), int(d)) for s, d in zip(src, dst)], "src long, dst long") \
        .write.parquet(str(tmp_path / "wiki"))
    edges = spark.read.parquet(str(tmp_path / "wiki"))
    expected = faq.count_triangles(path, directed=True).count
    fetched = faq.count_triangles(edges, directed=True)
    assert fetched.count == expected
    assert all(step.placement == "driver" for step in fetched.plan.steps)
    assert prepared_graph(edges, directed=False).relation.held
    spark.conf.set("spark.faq.fetchMemory", "0")  # nothing fetched: cleaned and counted by Spark
    try:
        assert not prepared_graph(edges, directed=True).relation.held
        assert faq.count_triangles(edges, directed=True).count == expected
    finally:
        spark.conf.unset("spark.faq.fetchMemory")


def test_placement_settings_are_checked(spark):
    from faq.errors import InvalidArgumentError

    edge = factor_of([(0, 1, 1)], ["s", "t"], "counting")
    with pytest.raises(InvalidArgumentError) as caught:
        evaluate("count() := e(a,b)", {"e": edge}, placement="gpu")
    assert caught.value.parameters["argument"] == "placement"
    spark.conf.set("spark.faq.placement", "elsewhere")
    try:
        with pytest.raises(InvalidArgumentError) as caught:
            evaluate("count() := e(a,b)", {"e": edge})
        assert caught.value.parameters["argument"] == "spark.faq.placement"
    finally:
        spark.conf.unset("spark.faq.placement")


def test_an_array_rings_rows_count_at_their_width():
    """A ring join of 45 doubles a row (a regression's cofactor ring) is priced at its width: 2M rows
    fit a 1 GiB driver as counts but not as ring values, which once drove the driver's Python past
    21 GB on the scale-factor-1 TPC-H regression (issue 49)."""
    from faq.insideout.physical import Strategy
    from faq.insideout.placement import step_footprint, step_placement
    from faq.placement_policy import Input

    env = Environment(placement="auto", local_memory=1 << 30, fetch_memory=1 << 40)
    scalar = step_footprint(Strategy("binary", ""), 2e6, 2e6, False)
    ring = step_footprint(Strategy("binary", ""), 2e6, 2e6, False, width=45)
    assert ring == 12 * scalar
    assert step_placement([Input(2e6, True)], scalar, "", env)[0] == "driver"
    where, why = step_placement([Input(2e6, True)], ring, "", env)
    assert where == "executors" and "exceeds" in why, why
