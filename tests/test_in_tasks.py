"""A plan run in the tasks of its one large factor (faq.insideout.in_tasks), against brute force.

The factor that stays in Spark is a plain Spark DataFrame with nothing
fetched (``spark.faq.fetchMemory=0``); the others are held on the driver
(``factor_of``).  Random FAQs of tests/strategies.py in several semirings
(``spark.faq.inTasks=always``: by default only an array ring's plan runs in
tasks, where it measured faster), the large factor one used by a single
atom: every answer equals the brute-force evaluator's, and the plan says
where it ran.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.factor import Factor, factor_of
from faq.insideout import evaluate
from faq.insideout.plans import Plan
from faq.language import make_query
from faq.semirings import get_semiring
from tests.brute_force import assert_same_answer, brute_force
from tests.conftest import examples
from tests.strategies import DOMAIN, nontrivial_faq

pytestmark = pytest.mark.usefixtures("spark")

SEMIRINGS = ["counting", "real", "min_plus", "boolean", "max_product"]


@pytest.fixture
def nothing_fetched(spark):
    spark.conf.set("spark.faq.fetchMemory", "0")
    spark.conf.set("spark.faq.inTasks", "always")
    yield
    spark.conf.unset("spark.faq.fetchMemory")
    spark.conf.unset("spark.faq.inTasks")


def in_spark(spark, name, rows, arity, semiring) -> Factor:
    """A factor whose rows only Spark has (nothing held on the driver)."""
    ring = get_semiring(semiring)
    columns = [f"c{i}" for i in range(arity)]
    ddl = ", ".join([*(f"{c} bigint" for c in columns), f"value {ring.value_type}"])
    return Factor(df=spark.createDataFrame([tuple(r) for r in rows], ddl), variables=tuple(columns),
                  semiring=ring, value="value", name=name)


@st.composite
def case_with_one_large(draw):
    semiring = draw(st.sampled_from(SEMIRINGS))
    atoms, data, free = draw(nontrivial_faq(semiring))
    once = [name for name in data if [a for a, _ in atoms].count(name) == 1]
    if not once:
        return None
    return semiring, atoms, data, free, draw(st.sampled_from(once))


def answer(spark, semiring, atoms, data, free, large):
    arity = {name: len(vs) for name, vs in atoms}
    factors = {name: factor_of(rows, [f"c{i}" for i in range(arity[name])], semiring, name=name)
               for name, rows in data.items() if name != large}
    factors[large] = in_spark(spark, large, data[large], arity[large], semiring)
    with evaluate(make_query(atoms, free, semiring=semiring), factors) as result:
        got = {tuple(row[:-1]): row[-1] for row in result.df.collect()}
        return got, result.plan


def test_random_faqs_in_the_tasks_of_their_large_factor_equal_brute_force(spark, nothing_fetched):
    ran = []

    @settings(max_examples=examples(30), deadline=None, derandomize=True)
    @given(case_with_one_large())
    def check(case):
        if case is None:
            return
        semiring, atoms, data, free, large = case
        got, plan = answer(spark, semiring, atoms, data, free, large)
        assert_same_answer(got, brute_force(atoms, data, free, semiring, DOMAIN), semiring, atoms, large)
        if plan.steps:
            position = [a for a, _ in atoms].index(large) + 1
            assert plan.in_tasks == f"{large}#{position}", plan
            ran.append(semiring)

    check()
    assert len(ran) >= examples(25) * 0.8, ran


def test_the_plan_names_the_atom_and_reads_back(spark, nothing_fetched):
    atoms = [("fact", ["a", "b"]), ("dim", ["a"]), ("other", ["b"])]
    data = {"fact": [(0, 1, 2.0), (1, 1, 3.0), (2, 0, 1.0), (1, 2, 4.0)], "dim": [(0, 1.0), (1, 2.0)],
            "other": [(1, 0.5), (2, 1.0)]}
    got, plan = answer(spark, "real", atoms, data, ["a"], "fact")
    assert got == pytest.approx(brute_force(atoms, data, ["a"], "real", DOMAIN))
    text = str(plan)
    assert "runs in the tasks of fact#1" in text and "runs in-process (in the tasks of fact#1" in text, text
    assert Plan.from_dict(plan.to_dict()) == plan


def test_a_factor_used_twice_runs_its_steps_as_before(spark, nothing_fetched):
    atoms = [("e", ["a", "b"]), ("e", ["b", "c"]), ("n", ["a"])]
    data = {"e": [(0, 1, 1), (1, 2, 1), (2, 0, 1)], "n": [(0, 2), (1, 1)]}
    got, plan = answer(spark, "counting", atoms, data, [], "e")
    assert got == brute_force(atoms, data, [], "counting", DOMAIN) == {(): 3}  # paths 0-1-2 (n 2), 1-2-0 (n 1)
    assert plan.in_tasks == "" and {s.placement for s in plan.steps} == {"executors"}


def test_by_default_only_an_array_rings_plan_runs_in_tasks(spark):
    """spark.faq.inTasks=auto (the default): a scalar semiring's steps run as Spark jobs (faster there),
    an array ring's plan in the tasks of its large factor; "never" keeps the steps."""
    from faq.semirings import MOMENTS

    spark.conf.set("spark.faq.fetchMemory", "0")
    try:
        atoms = [("fact", ["a", "b"]), ("dim", ["a"])]
        data = {"fact": [(0, 1, 2.0), (1, 1, 3.0), (2, 0, 1.0)], "dim": [(0, 1.0), (1, 2.0)]}
        got, plan = answer(spark, "real", atoms, data, ["b"], "fact")
        assert plan.in_tasks == "" and got == pytest.approx(brute_force(atoms, data, ["b"], "real", DOMAIN))
        fact = Factor(df=spark.createDataFrame([(0, 1, [1.0, 2.0, 4.0]), (1, 1, [1.0, 3.0, 9.0])],
                                               "c0 bigint, c1 bigint, value array<double>"),
                      variables=("c0", "c1"), semiring=MOMENTS, value="value", name="fact")
        dim = factor_of([(0, (1.0, 0.0, 0.0)), (1, (2.0, 1.0, 1.0))], ["c0"], MOMENTS, name="dim")
        query = make_query(atoms, ["b"], semiring="moments")
        with evaluate(query, {"fact": fact, "dim": dim}) as result:
            assert result.plan.in_tasks == "fact#1"
            in_tasks = sorted([row[0], *row[1]] for row in result.df.collect())
        # (1,2,4)⊗(1,0,0) ⊕ (1,3,9)⊗(2,1,1) = (1,2,4) ⊕ (2, 1·1+2·3, 1·1+2·9+2·3·1) = (3, 9, 29)
        assert in_tasks == [[1, 3.0, 9.0, 29.0]]
        spark.conf.set("spark.faq.inTasks", "never")
        with evaluate(query, {"fact": fact, "dim": dim}) as result:
            assert result.plan.in_tasks == ""
            assert sorted([row[0], *row[1]] for row in result.df.collect()) == in_tasks
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
        spark.conf.unset("spark.faq.inTasks")


def test_a_tasks_chunks_add_exactly_and_refuse_an_int64_overflow(monkeypatch):
    """answer_chunks without Spark: the chunks' integer answers added exactly; past int64, an error."""
    import numpy as np
    import pyarrow as pa

    from faq.errors import IntegerOverflowError
    from faq.insideout.in_tasks import _Spec, answer_chunks, plan_in_tasks
    from faq.insideout.physical import Environment
    from faq.insideout.planner import plan_query
    from faq.joins.table import Table
    from faq.language import parse_query

    query = parse_query("q() := f(a, b), g(b)")
    made = plan_query(query, "counting", sizes={"f": 4, "g": 2}, variable_types={"a": "bigint", "b": "bigint"},
                environment=Environment(placement="driver", parallelism=1), held=["f", "g"])
    made = plan_in_tasks(made, "f#1", "a test")
    spec = _Spec(made, get_semiring("counting"), "f#1", ("a", "b"), None)
    shipped = {"g#2": Table(("b",), {"b": np.array([0, 1])}, np.array([2, 3]))}

    def rows(values):
        return pa.record_batch({"a": list(range(len(values))), "b": [0, 1] * (len(values) // 2), "__v": values})

    monkeypatch.setattr("faq.insideout.in_tasks.CHUNK_ROWS", 2)
    batches = [rows([1, 1]), rows([5, 7])]
    out = list(answer_chunks(iter(batches), spec, shipped))
    assert [b.column(0).to_pylist() for b in out] == [[1 * 2 + 1 * 3 + 5 * 2 + 7 * 3]]
    huge = 2**61  # each chunk's answer 2^62 fits int64; their sum 2^63 does not
    with pytest.raises(IntegerOverflowError, match="chunks"):
        list(answer_chunks(iter([rows([huge, 0]), rows([huge, 0])]), spec, shipped))


def test_partials_that_cancel_across_tasks_leave_no_zero_row(spark, nothing_fetched):
    """In the integer ring, a key's rows in two tasks may add up to zero: the answer leaves that key out."""
    atoms = [("fact", ["a", "b"]), ("dim", ["a"])]
    data = {"fact": [(0, 1, 2), (1, 1, -2), (2, 0, 3)], "dim": [(0, 1), (1, 1), (2, 1)]}
    ring = get_semiring("integer")
    fact = Factor(df=spark.createDataFrame(data["fact"], "c0 bigint, c1 bigint, value bigint").repartition(3, "c0"),
                  variables=("c0", "c1"), semiring=ring, value="value", name="fact")
    dim = factor_of(data["dim"], ["c0"], ring, name="dim")
    with evaluate(make_query(atoms, ["b"], semiring="integer"), {"fact": fact, "dim": dim}) as result:
        assert result.plan.in_tasks == "fact#1"
        got = {tuple(row[:-1]): row[-1] for row in result.df.collect()}
    assert got == brute_force(atoms, data, ["b"], "integer", DOMAIN) == {(0,): 3}
