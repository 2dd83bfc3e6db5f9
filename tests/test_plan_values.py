"""A plan is a value you can keep: it reads back equal from its dictionary and from JSON, runs as it
is when given back (``faq.query(plan=)``, ``evaluate(plan=)``, ``faq query --plan``), and a plan that
no longer fits (another query, other key types, sizes beyond its margin) is refused with STALE_PLAN."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import faq
from faq.errors import InputNotFoundError, PlanError, StalePlanError
from faq.factor import Factor, factor_of
from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.insideout import Environment, Plan, evaluate, plan_query, plan_for
from faq.insideout.staleness import SIZE_MARGIN, load_plan
from faq.language import FAQ, make_query, parse_query
from tests.helpers import error_lines, run

TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"
TRIANGLE_EDGES = [(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1), (2, 4, 1), (4, 5, 1)]
EDGE_STATS = {"edge": RelationStatistics(100, (ColumnStatistics(50, 30), ColumnStatistics(50, 30)))}
AUTO = Environment(placement="auto")

# (name, query, plan_query() keywords): the shapes and options a plan is made with, made without Spark.
PLANS = [
    ("triangle", TRIANGLE, {"semiring": "counting"}),
    ("triangle-statistics", TRIANGLE, {"semiring": "counting", "statistics": EDGE_STATS}),
    ("triangle-partitioned", TRIANGLE, {"semiring": "counting", "sizes": {"edge": 10**7},
                                        "environment": Environment(index_memory=1 << 20)}),
    ("triangle-shuffle-batches", TRIANGLE, {"semiring": "counting", "sizes": {"edge": 10**7}, "join": "generic_shuffle",
                                            "environment": Environment(index_memory=1 << 16)}),
    ("triangle-in-process", TRIANGLE, {"semiring": "counting", "sizes": {"edge": 1000}, "environment": AUTO,
                                       "held": ["edge"], "degrees": {"edge": (5, 5)}, "statistics": EDGE_STATS}),
    ("triangle-sparse-kernel", TRIANGLE, {"semiring": "counting", "environment": AUTO, "held": ["edge"],
                                          "statistics": {"edge": RelationStatistics(10**5, (ColumnStatistics(10**3, 500),) * 2)}}),
    ("triangle-dense-rows", TRIANGLE, {"semiring": "counting", "environment": AUTO, "held": ["edge"],
                                       "statistics": {"edge": RelationStatistics(8 * 10**6, (ColumnStatistics(10**6, 500),) * 2)}}),
    ("triangle-string-keys", TRIANGLE, {"semiring": "counting", "sizes": {"edge": 10**7},
                                        "variable_types": {"a": "string", "b": "string", "c": "string"}}),
    ("path", "q(a) := e(a,b), e(b,c)", {"semiring": "counting", "sizes": {"e": 50}}),
    ("matrix-chain", "C(i,l) := A(i,j), B(j,k), D(k,l)", {"semiring": "real", "sizes": {"A": 100, "B": 10, "D": 1000},
                                                         "method": "exact"}),
    ("matrix-chain-4", "C(i,m) := A(i,j), B(j,k), D(k,l), E(l,m)", {"semiring": "min_plus", "sizes": {"A": 5, "B": 50}}),
    ("four-cycle", "count() := e(a,b), e(b,c), e(c,d), e(d,a)", {"semiring": "counting", "sizes": {"e": 400}}),
    ("four-clique", "count() := e(a,b), e(a,c), e(a,d), e(b,c), e(b,d), e(c,d)", {"semiring": "counting"}),
    ("partial-sizes", "q(a) := e(a,b), f(b,c), g(c,a)", {"semiring": "counting", "sizes": {"e": 10}}),
    ("marginal", "p(x) := f(x,y), g(y,z), h(z)", {"semiring": "real", "sizes": {"f": 4, "g": 4, "h": 2}}),
    ("map-then-sum", make_query([("f", "xy"), ("g", "yz")], ["x"], semiring="real", aggregates={"y": "max_product"}),
     {"semiring": "real"}),
    ("diagonal", "q(x) := f(x, x), g(x, y)", {"semiring": "boolean", "sizes": {"f": 3, "g": 9}}),
    ("product-of-free", "q(x, y) := f(x), g(y)", {"semiring": "counting"}),
    ("structured-moments", "q(g) := x(g,a), y(a,b), z(b,g)", {"semiring": "moments", "sizes": {"x": 10, "y": 10, "z": 10}}),
    ("no-task-aggregation", TRIANGLE, {"semiring": "counting", "task_aggregation": False, "sizes": {"edge": 30}}),
    # in-process binary joins: the plan names their kernel (sparse product, sort-merge, pandas merges)
    ("matrix-chain-in-process", "C(i,l) := A(i,j), B(j,k), D(k,l)",
     {"semiring": "real", "sizes": {"A": 100, "B": 100, "D": 100}, "environment": AUTO}),
    ("path-in-process", "q(a) := e(a,b), e(b,c)", {"semiring": "counting", "sizes": {"e": 50}, "environment": AUTO}),
    ("path-in-process-string-keys", "q(a) := e(a,b), e(b,c)",
     {"semiring": "counting", "sizes": {"e": 50}, "environment": AUTO,
      "variable_types": {"a": "string", "b": "string", "c": "string"}}),
]


def _query(text) -> FAQ:
    return text if isinstance(text, FAQ) else parse_query(text)


#: Test modules whose queries are planned here too.
PLANNING_TESTS = ("test_planner.py", "test_insideout.py", "test_placement.py", "test_generic_join.py",
                  "test_partitioned.py", "test_explain_work.py", "test_errors.py", "test_cli.py")


def _queries_planned_by_the_tests() -> list[FAQ]:
    """Every query text written in the planning and execution tests (string constants that parse)."""
    import ast

    found: dict[str, FAQ] = {}
    for name in PLANNING_TESTS:
        source = (Path(__file__).parent / name).read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":=" in node.value:
                try:
                    query = parse_query(node.value)
                except ValueError:  # a test of bad input
                    continue
                found.setdefault(str(query), query)
    return list(found.values())


def assert_round_trip(p: Plan) -> None:
    assert Plan.from_dict(p.to_dict()) == p
    text = json.dumps(p.to_dict(), allow_nan=False)  # plain JSON: infinities are written as text
    again = Plan.from_dict(json.loads(text))
    assert again == p and str(again) == str(p) and again.to_dict() == p.to_dict()


# --- round trip ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, options", PLANS, ids=[p[0] for p in PLANS])
def test_round_trip_of_representative_plans(name, text, options):
    assert_round_trip(plan_query(_query(text), **options))


@pytest.mark.parametrize("query", _queries_planned_by_the_tests(), ids=str)
@pytest.mark.parametrize("sizes", [None, 1000])
def test_round_trip_of_the_queries_the_planner_tests_plan(query, sizes):
    semiring = query.semiring or "counting"
    given = None if sizes is None else {name: sizes for name in query.factor_names}
    assert_round_trip(plan_query(query, semiring=semiring, sizes=given))


def test_the_representative_plans_cover_the_physical_choices():
    plans = [plan_query(_query(text), **options) for _, text, options in PLANS]
    steps = [s for p in plans for s in p.steps]
    assert {s.strategy.name for s in steps} >= {"binary", "broadcast", "partitioned", "shuffle"}
    assert {s.placement for s in steps} == {"driver", "executors"}
    assert any(s.strategy.batches > 1 for s in steps) and any(s.strategy.sparse_kernel for s in steps)
    assert any(s.strategy.dense_rows for s in steps) and any(s.strategy.oriented_count for s in steps)
    assert {s.strategy.binary_kernel for s in steps} == {None, "sparse-product", "sort-merge", "pandas-merge"}
    assert any(s.work is not None and s.work.total == float("inf") for s in steps)  # unknown sizes survive


def test_the_dictionary_names_its_format_and_holds_what_running_needs():
    p = plan_query(parse_query(TRIANGLE), semiring="counting", task_aggregation=False)
    d = p.to_dict()
    assert (d["format"], d["version"]) == ("faq.plan", 1)
    assert d["task_aggregation"] is False and d["atom_columns"] == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert {"numpy_kernel", "sparse_kernel", "dense_rows", "oriented_count", "binary_kernel",
            "binary_reason"} <= set(d["bags"][0]["strategy"])


@pytest.mark.parametrize("bad", [{"format": "faq.plan", "version": 2}, {"rows": 1}, [1, 2],
                                 {"format": "faq.plan", "version": 1, "query": "q() := e(a)"}])
def test_what_is_not_a_plan_is_refused(bad):
    with pytest.raises(PlanError, match="not a plan this faq can read"):
        Plan.from_dict(bad)


def test_load_plan_reads_files_wrappers_and_text(tmp_path):
    p = plan_query(parse_query(TRIANGLE), semiring="counting", sizes={"edge": 10})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"rows": 1, "value": 3, "plan": p.to_dict()}))  # what `faq query --json` prints
    assert load_plan(path) == p and load_plan(str(path)) == p and load_plan(json.dumps(p.to_dict())) == p
    with pytest.raises(InputNotFoundError):
        load_plan(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("plan for count() := ...")
    with pytest.raises(PlanError, match="not JSON"):
        load_plan(tmp_path / "bad.json")


# --- running a kept plan -----------------------------------------------------------------------


# (query, factors as (rows, columns, semiring)): answered in-process from rows the driver holds.
RUNS = [
    (TRIANGLE, {"edge": (TRIANGLE_EDGES, ["src", "dst"], "counting")}),
    ("q(a) := e(a,b), e(b,c)", {"e": (TRIANGLE_EDGES, ["src", "dst"], "counting")}),
    ("C(i,l) := A(i,j), B(j,l)", {"A": ([(0, 0, 2.0), (0, 1, 1.0), (1, 1, 3.0)], ["r", "c"], "real"),
                                   "B": ([(0, 0, 1.0), (1, 0, 4.0), (1, 1, 0.5)], ["r", "c"], "real")}),
    ("p(x) := f(x,y), g(y,z), h(z)", {"f": ([(0, 0, 0.3), (0, 1, 0.7), (1, 0, 0.6), (1, 1, 0.4)], ["x", "y"], "real"),
                                      "g": ([(0, 0, 0.9), (0, 1, 0.1), (1, 1, 1.0)], ["y", "z"], "real"),
                                      "h": ([(0, 0.5), (1, 2.0)], ["z"], "real")}),
    ("d(c) := e(a,b), e(b,c)", {"e": ([(1, 2, 1.0), (2, 3, 2.0), (1, 3, 5.0), (3, 4, 1.0)], ["s", "t"], "min_plus")}),
    ("count() := e(a,b), e(b,c), e(c,d), e(d,a)", {"e": (TRIANGLE_EDGES, ["src", "dst"], "counting")}),
]


def _factors(spec) -> dict[str, Factor]:
    return {name: factor_of(rows, columns, ring, name=name) for name, (rows, columns, ring) in spec.items()}


def _answer(result) -> object:
    if not result.plan.free:
        return result.scalar()
    return sorted(tuple(r) for r in result.df.collect())


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize("text, spec", RUNS, ids=[r[0] for r in RUNS])
def test_a_kept_plan_gives_the_answer_of_planning_afresh(tmp_path, text, spec):
    factors = _factors(spec)
    made = plan_for(text, factors, detailed=True)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(made.to_dict()))
    with evaluate(text, factors) as fresh:
        expected = _answer(fresh)
    for given in (made, made.to_dict(), path, str(path)):
        with evaluate(text, factors, plan=given) as result:
            assert result.plan == made
            assert _answer(result) == expected


@pytest.mark.usefixtures("spark")
def test_faq_query_runs_a_kept_plan_of_pandas_factors(tmp_path):
    edges = pd.DataFrame(TRIANGLE_EDGES, columns=["src", "dst", "value"])
    made = faq.plan(TRIANGLE, edge=edges)
    (tmp_path / "p.json").write_text(json.dumps(made.to_dict()))
    with faq.query(TRIANGLE, edge=edges) as fresh, faq.query(TRIANGLE, plan=tmp_path / "p.json", edge=edges) as kept:
        assert kept.scalar() == fresh.scalar() == 2 and kept.plan == made


# --- stale plans --------------------------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_a_plan_for_another_query_semiring_or_aggregate_is_refused():
    factors = _factors(RUNS[0][1])
    made = plan_for(TRIANGLE, factors).to_dict()
    with pytest.raises(StalePlanError) as info:
        evaluate("count() := edge(a,b), edge(b,c)", factors, plan=made)
    assert info.value.parameters["what"] == "atoms" and "re-run faq explain" in str(info.value)
    with pytest.raises(StalePlanError) as info:
        evaluate("q(a) := edge(a,b), edge(a,c), edge(b,c)", factors, plan=made)
    assert info.value.parameters["what"] == "free variables"
    with pytest.raises(StalePlanError) as info:
        evaluate(TRIANGLE, factors, plan=made, semiring="boolean")
    assert info.value.parameters == {"what": "semiring", "planned": "counting", "found": "boolean"}
    summed = plan_query(parse_query("q(x) := f(x,y), g(y,z)"), semiring="real")
    maxed = make_query([("f", "xy"), ("g", "yz")], ["x"], semiring="real", aggregates={"y": "max_product"})
    f = factor_of([(0, 0, 1.0)], ["a", "b"], "real")
    with pytest.raises(StalePlanError) as info:
        evaluate(maxed, {"f": f, "g": f}, plan=summed)
    assert info.value.parameters["what"] == "aggregates"


@pytest.mark.usefixtures("spark")
def test_sizes_beyond_the_margin_are_refused_within_it_run():
    small = factor_of(TRIANGLE_EDGES, ["src", "dst"], "counting")  # 6 rows
    made = plan_for(TRIANGLE, {"edge": small})
    ring = [(i, (i + 1) % 10, 1) for i in range(10)]  # 10 rows: within ×2 of 6
    with evaluate(TRIANGLE, {"edge": factor_of(ring, ["src", "dst"], "counting")}, plan=made) as result:
        assert result.scalar() == 0
    many = [(i, i + 1, 1) for i in range(13)]  # 13 rows: beyond 2 × 6
    with pytest.raises(StalePlanError) as info:
        evaluate(TRIANGLE, {"edge": factor_of(many, ["src", "dst"], "counting")}, plan=made)
    assert info.value.parameters == {"what": "rows of factor 'edge'", "planned": 6, "found": 13,
                                     "margin": SIZE_MARGIN}
    with pytest.raises(StalePlanError, match="the plan is for 6, not for 2 "):
        evaluate(TRIANGLE, {"edge": factor_of(TRIANGLE_EDGES[:2], ["src", "dst"], "counting")}, plan=made)


@pytest.mark.usefixtures("spark")
def test_a_factor_in_spark_is_counted_up_to_the_margin_only(spark):
    made = plan_query(parse_query(TRIANGLE), semiring="counting", sizes={"edge": 5})
    df = spark.createDataFrame([(i, i + 1) for i in range(1000)], "src bigint, dst bigint")
    edge = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    with pytest.raises(StalePlanError) as info:
        evaluate(TRIANGLE, {"edge": edge}, plan=made)
    assert info.value.parameters["found"] == "more than 10"


@pytest.mark.usefixtures("spark")
def test_a_plan_made_for_other_key_types_is_refused(spark):
    ints = factor_of(TRIANGLE_EDGES, ["src", "dst"], "counting")
    made = plan_for(TRIANGLE, {"edge": ints})
    df = spark.createDataFrame([(str(a), str(b)) for a, b, _ in TRIANGLE_EDGES], "src string, dst string")
    names = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    with pytest.raises(StalePlanError) as info:
        evaluate(TRIANGLE, {"edge": names}, plan=made)
    assert info.value.parameters["planned"] == "bigint" and info.value.parameters["found"] == "string"


def test_a_plan_without_sizes_fits_any_sizes():
    from faq.insideout.staleness import check_rows

    check_rows(plan_query(parse_query(TRIANGLE), semiring="counting"), {"edge": 10**9})


# --- the command line ---------------------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_explain_json_to_a_file_then_query_with_the_plan(capsys, tmp_path, edge_csv):
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "--json")
    assert code == 0, err
    saved = tmp_path / "plan.json"
    saved.write_text(out)
    code, fresh, err = run(capsys, "query", TRIANGLE, "--factor", f"edge={edge_csv}", "--json")
    assert code == 0, err
    code, kept, err = run(capsys, "query", TRIANGLE, "--factor", f"edge={edge_csv}", "--plan", saved, "--json")
    assert code == 0, err
    assert json.loads(kept)["value"] == json.loads(fresh)["value"]
    assert Plan.from_dict(json.loads(kept)["plan"]) == Plan.from_dict(json.loads(out))
    wrapper = tmp_path / "answer.json"  # `faq query --json` holds the plan it ran: it can be given back too
    wrapper.write_text(fresh)
    code, again, err = run(capsys, "query", TRIANGLE, "--factor", f"edge={edge_csv}", "--plan", wrapper, "-q")
    assert code == 0, err
    assert again.strip() == str(json.loads(fresh)["value"])


@pytest.mark.usefixtures("spark")
def test_the_command_refuses_a_stale_plan_with_exit_code_2(capsys, tmp_path, edge_csv):
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "--json")
    saved = tmp_path / "plan.json"
    saved.write_text(out)
    code, out, err = run(capsys, "query", "count() := edge(a,b), edge(b,c)", "--factor", f"edge={edge_csv}",
                         "--plan", saved)
    assert code == 2 and "[STALE_PLAN]" in err and "re-run faq explain" in err
    bigger = tmp_path / "big.csv"
    bigger.write_text("a,b\n" + "".join(f"{i},{i + 1}\n" for i in range(20)))
    code, out, err = run(capsys, "query", TRIANGLE, "--factor", f"edge={bigger}", "--plan", saved)
    assert code == 2 and any("[STALE_PLAN]" in line and "rows of factor 'edge'" in line for line in error_lines(err))
    code, out, err = run(capsys, "query", TRIANGLE, "--factor", f"edge={edge_csv}", "--plan", tmp_path / "none.json")
    assert code == 2 and "INPUT_NOT_FOUND" in err


# --- the split modules --------------------------------------------------------------------------


def test_the_planner_modules_are_short_and_the_old_imports_work():
    import faq.insideout.plans as plans
    import faq.insideout.planner as planner

    assert planner.Plan is plans.Plan and planner.Step is plans.Step and faq.insideout.Plan is plans.Plan
    for module in (planner, plans):
        assert len(Path(module.__file__).read_text(encoding="utf-8").splitlines()) <= 650


def test_reading_and_checking_a_plan_loads_no_pyspark():
    import subprocess
    import sys

    code = ("import sys, faq.insideout.staleness, faq.insideout.plans; "
            "assert not any(m.startswith('pyspark') for m in sys.modules), 'pyspark loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)
