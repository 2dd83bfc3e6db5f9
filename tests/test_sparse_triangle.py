"""Masked sparse products for triangle-shaped bags (:mod:`faq.joins.sparse_triangle`) against brute force.

``Σ a(x,y)·b(y,z)·c(x,z)`` must equal a dictionary-based count: random
relations (distinct or one relation used three times, unit or integer or
float values, repeated rows, self-loops, negative and far-apart keys), the
one-product encoding for one relation of unit values, the int64 bound, and
the plan's choice: ``explain`` names the kernel, and the step's note says it
ran (or, for int64 values too large to bound, that the numpy kernel did).
Spark only for the last tests (a session's plan).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import faq.joins.sparse_triangle as st
from faq.insideout.physical import Environment
from faq.insideout.placement import SMALL_KERNEL_WORK, SPARSE_KERNEL_WORK, in_process_triangle_kernel
from faq.joins.frame import Aggregation
from faq.joins.local import Table, join_local
from faq.joins.strategy import NamedStrategy
from faq.semirings import COUNTING, REAL

DATA = Path(__file__).parent / "data"


def brute(a, b, c) -> int:
    """The sum by dictionaries, repeated rows summed."""
    def entries(r) -> dict:
        out: dict = {}
        values = np.ones(len(r[0]), dtype=np.int64) if r[2] is None else r[2]
        for x, y, w in zip(r[0].tolist(), r[1].tolist(), values.tolist()):
            out[(x, y)] = out.get((x, y), 0) + w
        return out

    ea, eb, ec = entries(a), entries(b), entries(c)
    after: dict = {}
    for (y, z), w in eb.items():
        after.setdefault(y, []).append((z, w))
    return sum(wa * wb * ec.get((x, z), 0) for (x, y), wa in ea.items() for z, wb in after.get(y, []))


def relation(rng, n: int, m: int, valued: bool, spread: int = 1, loops: bool = True):
    src, dst = rng.integers(-2, n, m) * spread, rng.integers(-2, n, m) * spread
    if not loops:
        src, dst = src[src != dst], dst[src != dst]
    return src, dst, (rng.integers(-4, 5, len(src)) if valued else None)


@pytest.mark.parametrize("seed", range(40))
def test_random_relations_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 14)), int(rng.integers(1, 50))
    spread = 10**6 if seed % 5 == 0 else 1  # far-apart keys are renumbered
    a = relation(rng, n, m, seed % 2 == 0, spread)
    same = seed % 3 == 0
    b = a if same else relation(rng, n, m, seed % 4 == 0, spread)
    c = a if same else relation(rng, n, m, False, spread)
    expected = brute(a, b, c)
    assert int(st.triangle_total(a, b, c, np.int64)) == expected
    assert float(st.triangle_total(a, b, c, np.float64)) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(30))
def test_one_relation_of_unit_values_runs_one_encoded_product(monkeypatch, seed):
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(2, 40)), int(rng.integers(1, 300))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keys = np.unique(src * n + dst)  # distinct rows: every entry one
    edge = (keys // n, keys % n, None)
    calls = []
    encoded = st._one_relation_count
    monkeypatch.setattr(st, "_one_relation_count", lambda *args: calls.append(1) or encoded(*args))
    assert int(st.triangle_total(edge, edge, edge, np.int64)) == brute(edge, edge, edge)
    assert calls == [1]


def test_a_repeated_row_is_not_a_unit_entry():
    edge = (np.array([0, 0, 0, 1]), np.array([1, 1, 2, 2]), None)  # 0→1 twice: 2 paths 0→1→2 closed by 0→2
    assert int(st.triangle_total(edge, edge, edge, np.int64)) == 2 == brute(edge, edge, edge)


def test_snap_graph_count():
    from faq.io.local_edges import read_edge_arrays, unique_pairs, without_self_loops

    src, dst = unique_pairs(*without_self_loops(*read_edge_arrays(str(DATA / "email-Eu-core.txt.gz"))))
    edge = (src, dst, None)
    assert int(st.triangle_total(edge, edge, edge, np.int64)) == 373386  # feed-forward: as the compiled loop


def test_int64_values_too_large_to_bound_go_to_the_numpy_kernel_which_checks_every_sum():
    big = (np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([2**20] * 3))  # one term, 2^60: the bound says no
    assert st.triangle_total(big, big, big, np.int64) is None
    tables = [Table((u, v), {u: big[0], v: big[1]}, big[2]) for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
    out, note = join_local(NamedStrategy("broadcast", sparse_kernel=True), tables, [], COUNTING, ("a", "b", "c"),
                           Aggregation((), COUNTING), threads=1)
    assert note.startswith("masked sparse products: int64 values too large to bound") and "numpy kernel" in note
    assert out.values.tolist() == [2**60]


def test_the_step_runs_as_masked_products_in_either_column_order():
    src, dst, w = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0]), np.array([1.5, 2.0, 3.0, 4.0])
    uses = [("a", "b"), ("c", "a"), ("b", "c")]  # a→b, c→a, b→c over the same edges
    tables = [Table((u, v), {u: src, v: dst}, w) for u, v in uses]
    out, note = join_local(NamedStrategy("broadcast", sparse_kernel=True), tables, [], REAL, ("a", "b", "c"),
                           Aggregation((), REAL), threads=1)
    assert note == "in-process triangle join (masked sparse products, scipy)"
    edges = {(s, d): x for s, d, x in zip(src.tolist(), dst.tolist(), w.tolist())}
    nodes = range(3)
    expected = sum(edges.get((a, b), 0) * edges.get((c, a), 0) * edges.get((b, c), 0)
                   for a in nodes for b in nodes for c in nodes)
    assert out.values.tolist() == pytest.approx([expected])


def test_the_plan_chooses_by_work_when_the_loop_is_not_loaded():
    env = Environment()
    assert not in_process_triangle_kernel(SMALL_KERNEL_WORK / 2, env)[0]  # the numpy kernel's size
    assert in_process_triangle_kernel(SMALL_KERNEL_WORK, env)[0]
    assert not in_process_triangle_kernel(SPARSE_KERNEL_WORK, env)[0]
    assert not in_process_triangle_kernel(SMALL_KERNEL_WORK, Environment(compiled_loaded=True))[0]


def test_the_kernel_explain_names_is_the_one_that_runs(spark, monkeypatch):
    import faq.insideout.placement as placement
    from faq.factor import factor_of
    from faq.insideout.binding import plan_for
    from faq.insideout.executor import evaluate
    from faq.language import parse_query

    monkeypatch.setattr(placement, "SMALL_KERNEL_WORK", 0.0)  # a small graph in the masked products' range
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 60, 900), rng.integers(0, 60, 900)
    pairs = sorted(set(zip(src.tolist(), dst.tolist())) - {(v, v) for v in range(60)})
    edges = factor_of([(a, b, 1) for a, b in pairs], ["src", "dst"], spark=spark)
    query = parse_query("count() := edge(a,b), edge(a,c), edge(b,c)")
    env = Environment(parallelism=2, placement="driver")  # a fresh process's facts: the loop is not loaded
    explained = plan_for(query, {"edge": edges}, detailed=True, environment=env)
    assert explained.steps[0].strategy.sparse_kernel
    assert "masked sparse products (scipy): est. work" in str(explained)
    with evaluate(query, {"edge": edges}, plan=explained) as result:
        count = result.scalar()
        notes = result.notes
    edge = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), None)
    assert count == brute(edge, edge, edge)
    assert notes[0] == "in-process triangle join (masked sparse products, scipy)"


def test_a_stand_in_that_cost_the_load_gives_the_next_joins_the_loop(spark, monkeypatch):
    """Rent or buy: a join run as masked products for at least the loop's load cost makes every later plan of
    the process take the compiled loop; a cheaper one changes nothing; the note says so where it happened."""
    import sys
    import threading

    import faq.insideout.placement as placement
    from faq.factor import factor_of
    from faq.insideout.binding import plan_for, session_environment
    from faq.insideout.executor import evaluate
    from faq.language import parse_query

    monkeypatch.setattr(placement, "_STAND_IN_PAID", threading.Event())  # this process's fact, fresh
    monkeypatch.delitem(sys.modules, "faq.joins.compiled_loop", raising=False)
    monkeypatch.setattr(placement, "SMALL_KERNEL_WORK", 0.0)  # a small graph in the masked products' range
    sparse = NamedStrategy("broadcast", sparse_kernel=True)
    assert not placement.stand_in_ran(placement.COMPILED_LOAD_SECONDS / 2, sparse)
    assert not session_environment(spark).compiled_loaded
    rng = np.random.default_rng(4)
    pairs = sorted(set(zip(rng.integers(0, 50, 600).tolist(), rng.integers(0, 50, 600).tolist())))
    edges = factor_of([(a, b, 1) for a, b in pairs if a != b], ["src", "dst"], spark=spark)
    query = parse_query("count() := edge(a,b), edge(a,c), edge(b,c)")
    env = Environment(parallelism=2, placement="driver")
    plan = plan_for(query, {"edge": edges}, environment=env)
    assert plan.steps[0].strategy.sparse_kernel
    monkeypatch.setattr(placement, "COMPILED_LOAD_SECONDS", 0.0)  # this small join "cost" the load
    with evaluate(query, {"edge": edges}, plan=plan) as result:
        first = result.scalar()
        assert "the next joins take the compiled loop" in result.notes[0]
    assert session_environment(spark).compiled_loaded
    warm = Environment(parallelism=2, placement="driver", compiled_loaded=placement.compiled_worth_loading())
    again = plan_for(query, {"edge": edges}, environment=warm)
    assert not again.steps[0].strategy.sparse_kernel and not again.steps[0].strategy.numpy_kernel
    with evaluate(query, {"edge": edges}, plan=again) as result:
        assert result.scalar() == first


def test_a_fresh_command_plans_as_explain_does_and_runs_the_masked_products(tmp_path):
    """Held edges get their statistics in numpy (no job), so the run's plan is explain's; a fresh
    ``faq triangles`` of a mid-sized graph loads no numba."""
    import subprocess
    import sys

    rng = np.random.default_rng(5)
    n = 1000
    src, dst = rng.integers(0, n, 80000), rng.integers(0, n, 80000)
    path = tmp_path / "g.txt"
    np.savetxt(path, np.column_stack([src, dst]), fmt="%d", delimiter="\t")
    child = ("import json, sys; from faq.cli.entry import main; code = main(sys.argv[1:]); "
             "print('NUMBA', 'numba' in sys.modules); sys.exit(code)")

    def run(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-c", child, *argv], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    explained = run("explain", "count() := edge(a,b), edge(a,c), edge(b,c)", "--factor", f"edge={path}")
    assert "masked sparse products (scipy): est. work" in explained, explained
    counted = run("triangles", str(path), "--directed", "--json")
    assert "NUMBA False" in counted
    keep = src != dst
    keys = np.unique(src[keep] * n + dst[keep])
    edge = (keys // n, keys % n, None)
    assert f'"count": {brute(edge, edge, edge)}' in counted
