"""Limits with a message (issue 38, item 4): a query's size, the planner's work, what an error quotes,
and the memory a Matrix Market header asks for.

Large queries are planned with named inexact fallbacks (a greedy order, greedy covers, fewer
indicators) and very large ones are refused up front; a parse error quotes a window of the text;
a matrix whose arrays would not fit the budget is refused from its header.  No timing is asserted:
the plans say which fallback they took, and the 1,000-atom chain is run to its answer.  Pure
Python and child ``faq`` processes; no Spark session (the CLI runs the chain's steps in-process).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from faq import io
from faq.errors import MalformedInputError, MatrixTooLargeError, QueryParseError, QueryTooLargeError
from faq.hypergraph import greedy_cover, orders, rho_star
from faq.insideout import bags
from faq.insideout.planner import MAX_STEP_INDICATORS, Plan, plan_query
from faq.io.matrix_market import MATRIX_MAX_BYTES
from faq.language import MAX_ARITY, MAX_ATOMS, MAX_QUERY_CHARS, MAX_VARIABLES, make_query, parse_query

MTX_HEADER = "%%MatrixMarket matrix coordinate real general\n"


def chain(n: int) -> str:
    """``Q(x0,xn) := R(x0,x1), ..., R(x{n-1},xn)``: n atoms, n - 1 bound variables."""
    return f"Q(x0,x{n}) := " + ", ".join(f"R(x{i},x{i + 1})" for i in range(n))


def faq_cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The ``faq`` command in a child process (its own exit code and streams)."""
    env = {**os.environ, "FAQ_SPARK_VERBOSE": ""}
    return subprocess.run([sys.executable, "-m", "faq", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=env)


# --- planning a large query: greedy, and the plan says so --------------------------------------------


def test_a_1000_atom_chain_is_planned_greedily_and_the_plan_says_so():
    the_plan = plan_query(parse_query(chain(1000)), semiring="counting", sizes={"R": 1000})
    assert the_plan.method == "auto" and len(the_plan.order) == 999
    assert the_plan.limits[0] == "greedy min-fill order: 999 bound variables > 12, the exact search's limit"
    assert the_plan.limits[1] == ("AGM bound of the full join: greedy cover: 1000 distinct atom intersections > 64 "
                                  "(an upper bound)")
    shown = str(the_plan).splitlines()
    assert shown[2] == f"  limit: {the_plan.limits[0]}" and shown[3] == f"  limit: {the_plan.limits[1]}"
    assert all(not s.greedy_cover for s in the_plan.steps)  # its bags are small: exact LPs
    assert Plan.from_dict(json.loads(json.dumps(the_plan.to_dict()))) == the_plan


def test_a_small_query_is_planned_exactly_and_names_no_limit():
    the_plan = plan_query(parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)"), semiring="real", sizes={"A": 10, "B": 20, "D": 30})
    assert the_plan.limits == () and not any(s.greedy_cover for s in the_plan.steps)
    assert "limit:" not in str(the_plan) and the_plan.to_dict()["limits"] == []


def test_a_plan_written_before_limits_reads_back():
    d = plan_query(parse_query(chain(3)), semiring="counting").to_dict()
    del d["limits"]
    for bag in d["bags"]:
        del bag["greedy_cover"]
    assert Plan.from_dict(d).limits == ()


def test_a_1000_atom_chain_runs_to_its_answer_on_the_command_line(tmp_path):
    """R is the cycle 0 -> 1 -> ... -> 6 -> 0: one path of 1,000 edges from each node, to node + 1000 mod 7."""
    edges = tmp_path / "cycle.txt"
    edges.write_text("".join(f"{i} {(i + 1) % 7}\n" for i in range(7)))
    done = faq_cli("query", chain(1000), "--factor", f"R={edges}", "--json", "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    rows = sorted((r["x0"], r["x1000"], r["value"]) for r in out["preview"])
    assert out["rows"] == 7 and rows == [(i, (i + 1000) % 7, 1) for i in range(7)]
    assert out["plan"]["limits"][0].startswith("greedy min-fill order: 999 bound variables > 12")
    explained = faq_cli("explain", chain(1000), "--factor", f"R={edges}", "-q")
    assert explained.returncode == 0 and "  limit: greedy min-fill order: 999 bound variables" in explained.stdout


def test_a_bag_over_the_exact_lp_limit_gets_a_greedy_cover_that_bounds_from_above(monkeypatch):
    query = parse_query(chain(30))
    sizes = {"R": 1000}
    exact = plan_query(query, semiring="counting", sizes=sizes)
    monkeypatch.setattr(bags, "EXACT_COVER_ROWS", 2)
    greedy = plan_query(query, semiring="counting", sizes=sizes)
    assert greedy.order == exact.order and exact.limits[1:] == ()
    cut = [s for s in greedy.steps if s.greedy_cover]
    assert cut and all(re.fullmatch(r"greedy cover: \d+ distinct atom intersections > 2", s.greedy_cover) for s in cut)
    for g, e in zip(greedy.steps, exact.steps):  # a greedy cover is integral: never below the optimum
        assert g.rho_star >= e.rho_star and g.estimated_rows >= e.estimated_rows * (1 - 1e-9)
    assert greedy.agm_bound >= exact.agm_bound * (1 - 1e-9)
    assert any(n.startswith("steps ") and "greedy cover (upper bounds)" in n for n in greedy.limits)
    assert "ρ* ≤ " in str(greedy)


def test_min_fill_goes_on_by_degree_once_counting_fill_in_costs_too_much(monkeypatch):
    grid = [{f"v{i}_{j}", f"v{i}_{j + 1}"} for i in range(6) for j in range(5)]
    grid += [{f"v{i}_{j}", f"v{i + 1}_{j}"} for i in range(5) for j in range(6)]
    bound = sorted(set().union(*grid))
    assert orders.min_fill_noted(grid, bound) == (orders.min_fill_order(grid, bound), "")
    monkeypatch.setattr(orders, "FILL_WORK", 0)  # passed by the first variable's fill-in
    order, note = orders.min_fill_noted(grid, bound)
    assert order == orders.min_degree_order(grid, bound)
    assert note == "min-degree after the first 0 of 36 variables: counting fill-in passed 0 steps"
    query = make_query([("R", tuple(sorted(e))) for e in grid])
    assert plan_query(query, semiring="counting").limits[0] == (
        "greedy min-fill order: 36 bound variables > 12, the exact search's limit; " + note)


@pytest.mark.parametrize("seed", range(20))
def test_a_greedy_cover_covers_the_bag_and_is_at_least_rho_star(seed):
    import random

    rng = random.Random(seed)
    names = [f"v{i}" for i in range(rng.randint(2, 12))]
    edges = [set(rng.sample(names, rng.randint(1, 3))) for _ in range(rng.randint(1, 15))]
    bag = set().union(*edges)
    cover = greedy_cover(edges, bag)
    assert all(w in (0, 1) for w in cover.weights)
    assert set().union(*(e for e, w in zip(edges, cover.weights) if w)) == bag
    assert cover.value == sum(cover.weights) >= rho_star(edges, bag)


def test_a_variable_in_many_atoms_keeps_one_indicator_per_factor_and_projection():
    """A star: every step semi-joins with every other atom holding c; one factor, one projection: one indicator."""
    star = make_query([("R", ("c", f"x{i}")) for i in range(200)], free=["c"])
    the_plan = plan_query(star, semiring="counting", sizes={"R": 100})
    # Over the limit (the first steps: 199 others hold c) one indicator stands for them all; the last
    # steps have the limit or fewer, all kept.
    assert len(the_plan.steps[0].indicators) == 1
    assert max(len(s.indicators) for s in the_plan.steps) <= MAX_STEP_INDICATORS
    assert not any("indicators cut" in n for n in the_plan.limits)
    few = plan_query(make_query([("R", ("c", f"x{i}")) for i in range(20)], free=["c"]), semiring="counting")
    assert max(len(s.indicators) for s in few.steps) == 19  # within the limit: all kept, as before


def test_a_star_of_distinct_factors_cuts_indicators_and_keeps_its_answer(tmp_path):
    n = MAX_STEP_INDICATORS + 16
    atoms = [(f"R{i}", ("c", f"x{i}")) for i in range(n)]
    the_plan = plan_query(make_query(atoms, free=["c"]), semiring="counting")
    assert max(len(s.indicators) for s in the_plan.steps) == MAX_STEP_INDICATORS
    assert any(n.startswith(f"indicators cut to the first {MAX_STEP_INDICATORS} in ") for n in the_plan.limits)
    edges = tmp_path / "path.txt"
    edges.write_text("0 1\n1 2\n")  # nodes 0 and 1 have one out-edge each, node 2 none
    text = "Q(c) := " + ", ".join(f"R{i}(c,x{i})" for i in range(n))
    factors = [a for i in range(n) for a in ("--factor", f"R{i}={edges}")]
    done = faq_cli("query", text, *factors, "--json", "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted((r["c"], r["value"]) for r in json.loads(done.stdout)["preview"]) == [(0, 1), (1, 1)]


# --- refused up front ---------------------------------------------------------------------------------


def test_a_query_of_10000_atoms_is_refused():
    with pytest.raises(QueryTooLargeError) as info:
        parse_query(chain(10_000))
    assert info.value.parameters == {"what": "atoms", "size": 10_000, "limit": MAX_ATOMS}
    assert "10,000 atoms; faq plans queries of at most 2,000" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_2mb_query_text_is_refused_before_it_is_read():
    text = "Q() := " + "R(a,b), " * 250_000
    assert len(text) > 2_000_000
    with pytest.raises(QueryTooLargeError) as info:
        parse_query(text)
    assert info.value.parameters == {"what": "characters", "size": len(text), "limit": MAX_QUERY_CHARS}
    assert len(str(info.value)) < 300


def test_made_queries_are_held_to_the_same_limits():
    with pytest.raises(QueryTooLargeError) as info:
        make_query([("R", (f"x{i}", f"x{i + 1}")) for i in range(MAX_ATOMS + 1)])
    assert info.value.parameters["what"] == "atoms"
    with pytest.raises(QueryTooLargeError) as info:
        make_query([("R", tuple(f"v{i}" for i in range(MAX_ARITY + 1)))])
    assert info.value.parameters == {"what": "variables in its atom 1 (R)", "size": MAX_ARITY + 1,
                                     "limit": MAX_ARITY}
    with pytest.raises(QueryTooLargeError) as info:
        make_query([("R", tuple(f"v{i}_{j}" for j in range(4))) for i in range(MAX_VARIABLES // 4 + 1)])
    assert info.value.parameters == {"what": "distinct variables", "size": MAX_VARIABLES + 4,
                                     "limit": MAX_VARIABLES}
    assert len(make_query([("R", (f"x{i}", f"x{i + 1}")) for i in range(MAX_ATOMS)]).atoms) == MAX_ATOMS


def test_a_query_over_the_limit_on_the_command_line_exits_2():
    done = faq_cli("explain", chain(MAX_ATOMS + 1), "--factor", "R=/nonexistent.txt")
    assert done.returncode == 2
    assert done.stderr.startswith("faq: error: [QUERY_TOO_LARGE] the query has 2,001 atoms")


# --- what an error quotes -------------------------------------------------------------------------


def test_a_parse_error_deep_in_a_long_query_quotes_a_window_with_the_caret_in_place():
    text = chain(50_000)
    cut = text.index(", ", 500_000)
    text = text[:cut] + "  " + text[cut + 2:]  # a comma missing between two atoms
    with pytest.raises(QueryParseError) as info:
        parse_query(text)
    position = info.value.parameters["position"]
    assert position == cut + 2 and text[position] == "R" and info.value.parameters["text"] == text
    message = str(info.value)
    assert len(message) < 400
    first, shown, caret = message.splitlines()
    assert first == f"[QUERY_PARSE] expected ',' between atoms at position {position}"
    assert shown.startswith("  …") and shown.endswith("…") and len(shown) <= 2 + 200 + 2
    column = caret.index("^")
    assert caret == " " * column + "^" and shown[column] == "R"
    assert shown[column - 3:column + 6] == text[position - 3:position + 6]


def test_a_short_query_is_quoted_whole_as_before():
    with pytest.raises(QueryParseError) as info:
        parse_query("count() := edge(a,b) edge(b,c)")
    assert str(info.value).splitlines()[1:] == ["  count() := edge(a,b) edge(b,c)", "                       ^"]


def test_a_line_break_in_a_query_keeps_the_caret_under_its_character():
    with pytest.raises(QueryParseError) as info:
        parse_query("q(a) :=\n  e(a,b)\n  e(b,c)")
    _, shown, caret = str(info.value).splitlines()
    assert shown[caret.index("^")] == "e" and "\n" not in shown


# --- Matrix Market headers against the memory budget -------------------------------------------------


@pytest.fixture
def huge_matrices(tmp_path):
    paths = {}
    for name, n in (("3e8.mtx", 300_000_000), ("1e12.mtx", 10**12)):
        paths[name] = tmp_path / name
        paths[name].write_text(MTX_HEADER + f"{n} {n} 1\n1 1 1.0\n")
    return paths


@pytest.mark.parametrize("name, n", [("3e8.mtx", 300_000_000), ("1e12.mtx", 10**12)])
def test_a_matrix_too_large_for_memory_is_refused_from_its_header(huge_matrices, name, n):
    path = huge_matrices[name]
    for read in (io.matrix_shape, io.read_matrix_market):  # read_matrix_market: refused before any Spark work
        with pytest.raises(MatrixTooLargeError) as info:
            read(path)
        p = info.value.parameters
        assert (p["path"], p["rows"], p["cols"], p["entries"]) == (str(path), n, n, 1)
        assert p["needed_bytes"] == 24 + (n + 1) * 8 and p["budget_bytes"] == MATRIX_MAX_BYTES
        assert isinstance(info.value, MalformedInputError)
        assert str(path) in str(info.value) and "1,073,741,824 bytes (1 GiB)" in str(info.value)
    assert io.matrix_shape(huge_matrices["3e8.mtx"], max_bytes=10**10) == (300_000_000, 300_000_000)


@pytest.mark.parametrize("header, needed", [
    ("%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n", 24 * 10**12 + 32),
    ("%%MatrixMarket matrix array real general\n100000 100000\n", 8 * 10**10),
    ("%%MatrixMarket matrix coordinate complex symmetric\n10 10 100000000\n", 2 * 10**8 * 32 + 88),
])
def test_declared_entries_and_dense_arrays_count_too(tmp_path, header, needed):
    path = tmp_path / "m.mtx"
    path.write_text(header + "1 1 1.0\n")
    with pytest.raises(MatrixTooLargeError) as info:
        io.matrix_shape(path)
    assert info.value.parameters["needed_bytes"] == needed


@pytest.mark.parametrize("name", ["3e8.mtx", "1e12.mtx"])
def test_a_matrix_too_large_on_the_command_line_exits_2_before_spark(tmp_path, huge_matrices, name):
    path, out = huge_matrices[name], tmp_path / "out.mtx"
    for argv in (("matrix-chain", path, path, "--out", out), ("query", "p(a) := M(a,b)", "--factor", f"M={path}")):
        done = faq_cli(*argv)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"faq: error: [MATRIX_TOO_LARGE] {path}: the header declares")
        assert not out.exists()
