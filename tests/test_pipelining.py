"""Steps on the executors handed to the next one unmaterialised (faq.insideout.pipelining), exactly.

A step whose output only the next step reads, both on the executors, is not persisted or counted:
the next step's plan reads its plan, one Spark query.  The answers stay exact, ``explain`` and
``step_rows`` say which steps were pipelined, and a step that only aggregates one input runs without
its indicators (named in its reason).
"""

from __future__ import annotations

from collections import Counter

import pytest

import faq
from faq.errors import ScopeClosedError

pytestmark = pytest.mark.usefixtures("spark")

EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 1), (1, 0), (4, 2)]


def _two_paths_from_each_node() -> dict[int, int]:
    out = Counter()
    for a, b in EDGES:
        out[a] += sum(1 for b2, _ in EDGES if b2 == b)
    return {a: n for a, n in out.items() if n}


def test_a_pipelined_step_gives_the_same_answer_and_says_so(spark):
    edges = spark.createDataFrame(EDGES, "src long, dst long")
    events = []
    with faq.query("q(a) := e(a,b), e(b,c)", e=edges, placement="executors", progress=events.append) as result:
        answer = {int(r["a"]): int(r["value"]) for r in result.df.collect()}
        explained = str(result.explain())
        assert answer == _two_paths_from_each_node()
        assert result.step_rows[0] == -1 and result.rows == len(answer)
    assert "pipelined into step 2" in explained
    assert "left out: a group-by of e#" in explained  # the indicator a distinct and a join would cost
    done = [e for e in events if e.kind == "done"]
    assert done[0].rows is None and done[0].note.startswith("pipelined into step 2")


def test_a_plan_with_every_step_materialised_gives_the_same_answer(spark, monkeypatch):
    from faq.insideout import executor

    monkeypatch.setattr(executor, "pipelined", lambda plan: {})
    edges = spark.createDataFrame(EDGES, "src long, dst long")
    with faq.query("q(a) := e(a,b), e(b,c)", e=edges, placement="executors") as result:
        assert {int(r["a"]): int(r["value"]) for r in result.df.collect()} == _two_paths_from_each_node()
        assert result.step_rows[0] > 0  # counted: materialised


def test_an_output_read_twice_or_by_the_driver_is_materialised():
    from faq.insideout.pipelining import pipelined_steps
    from faq.insideout.plans import Indicator, Relation, Step

    def step(i, inputs, out, placement="executors", indicators=()):
        return Step(i, ("x",), "sum", ("x",), inputs, indicators, Relation(out, ("a",)), 1, None,
                    placement=placement, placement_reason="requested")

    read_twice = [step(1, ("e#1",), "t1"), step(2, ("t1",), "t2", indicators=(Indicator("t1", ("a",)),))]
    assert pipelined_steps(read_twice) == {}
    long_chain = [step(i, (f"t{i - 1}",), f"t{i}") for i in range(1, 7)]
    assert pipelined_steps(long_chain) == {1: 2, 2: 3, 3: 4, 5: 6}  # at most 3 in a row, then one materialised


def test_the_answer_is_cached_by_the_callers_first_job_and_counted_only_when_asked(spark):
    """The last step's output is persisted but not counted inside ``faq.query`` (the job Spark SQL would
    not run): ``step_rows``, progress and the summary say so until ``rows`` counts it once."""
    edges = spark.createDataFrame(EDGES, "src long, dst long")
    events = []
    with faq.query("q(a) := e(a,b), e(b,c)", e=edges, placement="executors", progress=events.append) as result:
        assert result.step_rows[-1] == -1 and result.rows_known is None and "rows=?" in result.summary()
        assert [e.rows for e in events if e.kind == "done"] == [None, None]
        answer = {int(r["a"]): int(r["value"]) for r in result.df.collect()}
        assert answer == _two_paths_from_each_node()
        assert result.rows == len(answer) == result.rows_known and f"rows={len(answer)}" in result.summary()
    closed = faq.query("q(a) := e(a,b), e(b,c)", e=edges, placement="executors")
    closed.close()
    with pytest.raises(ScopeClosedError):  # counting would need what close() released
        closed.rows


@pytest.mark.parametrize("join", ["generic_broadcast", "generic_shuffle"])
def test_an_uncounted_answer_keeps_what_its_join_made_until_the_result_closes(spark, join):
    """A generic join's index (broadcast) or batch checkpoints (shuffle) are read by the answer's plan,
    which runs at the caller's first job: they are released with the result, not with the step."""
    from faq.factor import factor_of
    from faq.insideout import Environment, evaluate, plan_for

    edge = factor_of([(a, b, 1) for a, b in EDGES], ["src", "dst"], "counting", name="e")
    expected = Counter(a for a, b in EDGES for a2, c in EDGES if a2 == a and (b, c) in EDGES)
    text = "q(a) := e(a,b), e(a,c), e(b,c)"
    environment = Environment(parallelism=1, index_memory=64) if join == "generic_shuffle" else None
    plan = plan_for(text, {"e": edge}, join=join, environment=environment, placement="executors")
    assert plan.steps[-1].strategy.name == join.split("_")[1] and plan.steps[-1].output.variables == ("a",)
    with evaluate(text, {"e": edge}, plan=plan) as result:
        assert result.step_rows[-1] == -1
        assert {int(r["a"]): int(r["value"]) for r in result.df.collect()} == dict(expected)
        assert result.rows == len(expected)
