"""Dense-row sums of triangle-shaped bags (:mod:`faq.joins.dense_rows`) against brute force.

``Σ a(x,y)·b(y,z)·c(x,z)`` must equal a dictionary-based sum for random
relations (hypothesis: repeated rows, self-loops, negative and far-apart
keys, int64 and float64 values, one relation used three times, every
orientation, one thread or two), the declines (too many wedges a row, int64
values too large to bound) must leave the answer to the compiled loop with
a note that says so, and the plan's choice must be what explain prints and
what runs.  No Spark: plans of held factors and in-process steps only.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.insideout.physical import Environment
from faq.insideout.planner import plan_query
from faq.joins import dense_rows
from faq.joins.frame import Aggregation
from faq.joins.local import Table, join_local
from faq.joins.strategy import NamedStrategy
from faq.language import parse_query
from faq.semirings import COUNTING, REAL

PAIRS = (("x", "y"), ("y", "z"), ("x", "z"))


def summed_entries(tables) -> dict:
    """Each table's value per key pair, repeated rows summed, by its pair of variables."""
    entries = {}
    for t in tables:
        u, v = t.variables
        values = np.ones(t.rows, dtype=np.int64) if t.values is None else t.values
        out: dict = {}
        for p, q, w in zip(t.keys[u].tolist(), t.keys[v].tolist(), values.tolist()):
            out[(p, q)] = out.get((p, q), 0) + w
        entries[frozenset(t.variables)] = (t.variables, out)
    return entries


def brute(tables) -> float:
    """The sum by dictionaries over every (x, y, z), repeated rows summed."""
    entries = summed_entries(tables)

    def value(a: str, b: str, binding: dict):
        variables, out = entries[frozenset((a, b))]
        return out.get((binding[variables[0]], binding[variables[1]]), 0)

    nodes = {k for t in tables for v in t.variables for k in t.keys[v].tolist()}
    total = 0
    for x in nodes:
        for y in nodes:
            a = value("x", "y", {"x": x, "y": y})
            if a:
                for z in nodes:
                    total += a * value("y", "z", {"y": y, "z": z}) * value("x", "z", {"x": x, "z": z})
    return total


def draw_relation(draw, n: int, spread: int, floats: bool, most: int) -> tuple:
    """(src, dst, values or None): up to ``most`` rows over ``n`` keys times ``spread``, values in -3..3."""
    m = draw(st.integers(1, most))
    src = np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64) * spread
    dst = np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64) * spread
    if draw(st.booleans()):
        return src, dst, None
    values = draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m))
    return src, dst, np.array(values, dtype=np.float64 if floats else np.int64)


@st.composite
def bags(draw):
    """Three relations over (x, y), (y, z), (x, z), each in a random column order, or one relation's
    arrays used three times; keys small, or far apart and negative (renumbered)."""
    n = draw(st.integers(2, 9))
    spread = draw(st.sampled_from([1, -(10**9)]))
    floats = draw(st.booleans())

    def relation():
        return draw_relation(draw, n, spread, floats, 25)

    shared = draw(st.booleans())
    one = relation()
    tables = []
    for pair in PAIRS:
        src, dst, values = one if shared else relation()
        if values is not None and floats:
            values = values.astype(np.float64)
        u, v = pair if draw(st.booleans()) else pair[::-1]
        tables.append(Table((u, v), {u: src, v: dst}, values))
    return tables, (np.float64 if floats else np.int64)


@settings(max_examples=60, deadline=None)
@given(bags(), st.integers(1, 2))
def test_dense_row_sums_equal_brute_force(bag, threads):
    tables, dtype = bag
    total, note = dense_rows.bag_total(tables, dtype, threads=threads, within=float("inf"))
    assert total is not None and "dense-row sums" in note
    assert total == pytest.approx(brute(tables)) if dtype is np.float64 else int(total) == brute(tables)


def test_many_rows_on_two_threads_equal_the_loop():
    """Rows dealt to two threads (past the one-thread cut-off) give the compiled loop's sum."""
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 400, 40_000), rng.integers(0, 400, 40_000)
    values = rng.integers(1, 4, 40_000)
    tables = [Table((u, v), {u: src, v: dst}, values) for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
    total, note = dense_rows.bag_total(tables, np.int64, threads=2, within=float("inf"))
    assert "2 threads" in note
    loop, loop_note = join_local(NamedStrategy("broadcast"), tables, [], COUNTING, ("a", "b", "c"),
                                 Aggregation((), COUNTING), threads=2)
    assert "dense-row" not in loop_note
    assert int(total) == int(loop.values[0])


def test_too_many_wedges_a_row_declines_and_the_loop_runs(monkeypatch):
    k = np.array([(i, j) for i in range(6) for j in range(6) if i != j]).T  # K6: 150 wedges, 90 rows
    tables = [Table((u, v), {u: k[0], v: k[1]}, None) for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
    total, why = dense_rows.bag_total(tables, np.int64, within=1.0)
    assert total is None and why == "its 150 wedges through a are more than 1 a row of its 90 rows of input"
    monkeypatch.setattr(dense_rows, "WEDGES_PER_ROW", 1.0)  # the default the step runs by
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True), tables, [], COUNTING, ("a", "b", "c"),
                           Aggregation((), COUNTING), threads=1)
    assert note.startswith("dense-row sums declined (its 150 wedges") and "generic join" in note
    assert out.values.tolist() == [6 * 5 * 4]


def test_the_step_runs_dense_rows_when_the_plan_says_so():
    k = np.array([(i, j) for i in range(5) for j in range(5) if i != j]).T
    tables = [Table((u, v), {u: k[0], v: k[1]}, np.full(k.shape[1], 0.5)) for u, v in (("a", "b"), ("c", "b"), ("a", "c"))]
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True), tables, [], REAL, ("a", "b", "c"),
                           Aggregation((), REAL), threads=2)
    assert note.startswith("in-process triangle join (dense-row sums, compiled)")
    assert out.values.tolist() == pytest.approx([5 * 4 * 3 * 0.125])


def test_int64_values_too_large_to_bound_decline():
    big = [Table((u, v), {u: np.array([0, 1, 0]), v: np.array([1, 2, 2])}, np.array([2**20] * 3))
           for u, v in (("a", "b"), ("b", "c"), ("a", "c"))]
    total, why = dense_rows.bag_total(big, np.int64)
    assert total is None and why == "int64 values too large to bound its sums below 2^62"
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True), big, [], COUNTING, ("a", "b", "c"),
                           Aggregation((), COUNTING), threads=1)
    assert note.startswith("dense-row sums declined (int64 values too large")
    assert out.values.tolist() == [2**60]  # one term, exact by the loop's checked sums


def test_an_empty_input_sums_to_zero():
    empty = Table(("a", "b"), {"a": np.array([], dtype=np.int64), "b": np.array([], dtype=np.int64)}, None)
    full = Table(("b", "c"), {"b": np.array([1]), "c": np.array([2])}, None)
    total, _ = dense_rows.bag_total([empty, full, Table(("a", "c"), {"a": np.array([0]), "c": np.array([2])}, None)],
                                    np.int64)
    assert int(total) == 0


def test_the_plan_chooses_dense_rows_for_large_held_inputs_and_explain_says_so():
    query = parse_query("count() := edge(a,b), edge(a,c), edge(b,c)")
    large = {"edge": RelationStatistics(8 * 10**6, (ColumnStatistics(10**6, 500),) * 2)}
    plan = plan_query(query, semiring="counting", environment=Environment(placement="auto"), held=["edge"],
                      statistics=large)
    assert plan.steps[0].placement == "driver" and plan.steps[0].strategy.dense_rows
    assert "dense-row sums (compiled) where their wedges are at most 64 a row" in str(plan).replace("\n", " ")
    small = {"edge": RelationStatistics(10**5, (ColumnStatistics(10**3, 500),) * 2)}
    plan = plan_query(query, semiring="counting", environment=Environment(placement="auto"), held=["edge"],
                      statistics=small)
    assert not plan.steps[0].strategy.dense_rows  # small inputs: the loop, or masked products, as before


# --- a 4-cycle summed whole: the two steps fused -------------------------------------------------

CYCLE = (("w", "x"), ("x", "y"), ("y", "z"), ("z", "w"))


def cycle_brute(tables) -> float:
    """``Σ a(w,x)·b(x,y)·c(y,z)·d(z,w)`` over every binding, by dictionaries (repeated rows summed)."""
    entries = summed_entries(tables)

    def value(pair, binding):
        variables, out = entries[frozenset(pair)]
        return out.get((binding[variables[0]], binding[variables[1]]), 0)

    nodes = sorted({k for t in tables for v in t.variables for k in t.keys[v].tolist()})
    total = 0
    for w in nodes:
        for x in nodes:
            first = value(("w", "x"), {"w": w, "x": x})
            if not first:
                continue
            for y in nodes:
                second = first * value(("x", "y"), {"x": x, "y": y})
                if second:
                    for z in nodes:
                        b = {"w": w, "x": x, "y": y, "z": z}
                        total += second * value(("y", "z"), b) * value(("z", "w"), b)
    return total


@st.composite
def cycles(draw):
    """Four relations over the pairs of a 4-cycle, each in a random column order and atom order, or one
    relation's arrays used four times; keys small, or far apart and negative (renumbered)."""
    n = draw(st.integers(2, 7))
    spread = draw(st.sampled_from([1, -(10**9)]))
    floats = draw(st.booleans())
    shared = draw(st.booleans())
    one = draw_relation(draw, n, spread, floats, 20)
    tables = []
    for pair in CYCLE:
        src, dst, values = one if shared else draw_relation(draw, n, spread, floats, 20)
        u, v = pair if draw(st.booleans()) else pair[::-1]
        tables.append(Table((u, v), {u: src, v: dst}, values))
    return draw(st.permutations(tables)), (np.float64 if floats else np.int64)


@settings(max_examples=60, deadline=None)
@given(cycles(), st.integers(1, 2))
def test_four_cycle_sums_equal_brute_force(bag, threads):
    tables, dtype = bag
    total, note = dense_rows.cycle_total(tables, dtype, threads=threads)
    assert total is not None and "4-cycle join (dense-row sums" in note
    assert total == pytest.approx(cycle_brute(tables)) if dtype is np.float64 else int(total) == cycle_brute(tables)


def test_four_cycles_on_two_threads_equal_the_loop_and_the_step_runs_them():
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 300, 20_000), rng.integers(0, 300, 20_000)
    tables = [Table((u, v), {u: src, v: dst}, None) for u, v in CYCLE]
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True), tables, [], COUNTING, ("w", "x", "y", "z"),
                           Aggregation((), COUNTING), threads=2)
    assert note.startswith("in-process 4-cycle join (dense-row sums, compiled)") and "2 threads" in note
    loop, loop_note = join_local(NamedStrategy("broadcast"), tables, [], COUNTING, ("w", "x", "y", "z"),
                                 Aggregation((), COUNTING), threads=2)
    assert "dense-row" not in loop_note and int(out.values[0]) == int(loop.values[0])
    a = np.zeros((300, 300), dtype=np.int64)
    np.add.at(a, (src, dst), 1)
    assert int(out.values[0]) == int(np.trace(np.linalg.matrix_power(a, 4)))  # closed 4-walks


def test_four_cycle_int64_sums_that_could_wrap_decline():
    def cycle(values):
        return [Table((u, v), {u: np.array([0]), v: np.array([0])}, np.array([big])) for (u, v), big in
                zip(CYCLE, values)]

    total, why = dense_rows.cycle_total(cycle([2**40, 2**40, 1, 1]), np.int64)
    assert total is None and why == "int64 values too large to bound its dense rows below 2^62"
    # each term is bounded (2^58), but their sum is 2^62: the float64 beside the sum says so
    k, hub, spokes = 16, np.zeros(16, dtype=np.int64), np.arange(16)
    tables = [Table(("w", "x"), {"w": hub, "x": spokes}, np.full(k, 2**14)),
              Table(("x", "y"), {"x": spokes, "y": hub}, np.full(k, 2**14)),
              Table(("y", "z"), {"y": hub, "z": spokes}, np.full(k, 2**14)),
              Table(("z", "w"), {"z": spokes, "w": hub}, np.full(k, 2**12))]
    total, why = dense_rows.cycle_total(tables, np.int64)
    assert total is None and why == "int64 sums that could pass 2^62"
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True), tables, [], COUNTING, ("w", "x", "y", "z"),
                           Aggregation((), COUNTING), threads=1)
    assert note.startswith("dense-row sums declined (int64 sums that could pass 2^62)")
    assert int(out.values[0]) == k * k * 2**54  # the loop's checked sums: exact


def _cycle_plan(wedges: float, **kwargs):
    query = parse_query(kwargs.pop("query", "count() := e(a,b), e(b,c), e(c,d), e(d,a)"))
    stats = {"e": RelationStatistics(10**6, (ColumnStatistics(10**5, 300),) * 2)}
    pairs = {(i, j): wedges for i in range(4) for j in range(i + 1, 4)}
    return plan_query(query, semiring=kwargs.pop("semiring", "counting"),
                      environment=Environment(placement=kwargs.pop("placement", "auto")),
                      held=kwargs.pop("held", ["e"]), statistics=stats, pair_rows=pairs, **kwargs)


def test_the_plan_fuses_a_large_held_four_cycle_into_one_step_and_explain_says_so():
    plan = _cycle_plan(4e8)
    (step,) = plan.steps
    assert step.eliminated == ("a", "b", "c", "d") and step.placement == "driver" and step.strategy.dense_rows
    assert "dense-row sums over the 4-cycle (compiled): the two steps fused, 8e+08 wedges" in str(plan)
    assert type(plan).from_dict(plan.to_dict()) == plan


@pytest.mark.parametrize("change", [
    {"wedges": 1e5},                                   # small: two steps cost less than loading the kernel
    {"placement": "executors"},                        # forced onto Spark
    {"held": []},                                      # the rows are not on the driver
    {"query": "q(a) := e(a,b), e(b,c), e(c,d), e(d,a)"},  # a free variable
    {"semiring": "min_plus"},                          # ⊕ is not +
    {"join": "generic"},                               # a forced join method
])
def test_the_plan_keeps_its_elimination_steps_where_the_fused_cycle_does_not_apply(change):
    change = dict(change)
    plan = _cycle_plan(change.pop("wedges", 4e8), **change)
    assert len(plan.steps) >= 2 and not any(s.strategy.dense_rows and len(s.eliminated) == 4 for s in plan.steps)


@pytest.mark.usefixtures("spark")
def test_a_motif_count_runs_the_fused_cycle_and_equals_the_matrix_count():
    """wiki-Vote's directed 4-cycles (9e6 wedges: fused) against numpy: closed 4-walks less the walks
    that repeat a node (trace(A^4) - 2 Σ r² + Σ r, r the reciprocated edges at each node)."""
    import gzip
    from pathlib import Path

    import faq

    path = Path(__file__).parent / "data" / "wiki-Vote.txt.gz"
    with gzip.open(path, "rt") as f:
        edges = np.array([line.split() for line in f if not line.startswith("#")], dtype=np.int64)
    edges = np.unique(edges[edges[:, 0] != edges[:, 1]], axis=0)
    result = faq.motifs(str(path), "(a)->(b); (b)->(c); (c)->(d); (d)->(a)", count=True)
    assert "dense-row sums over the 4-cycle" in str(result.plans[0])
    import scipy.sparse as sp

    n = int(edges.max()) + 1
    a = sp.csr_matrix((np.ones(len(edges), dtype=np.int64), (edges[:, 0], edges[:, 1])), shape=(n, n))
    a2 = a @ a
    closed = int(a2.multiply(a2.T).sum())
    r = np.asarray(a.multiply(a.T).sum(axis=1)).ravel()
    assert result.count == closed - 2 * int((r * r).sum()) + int(r.sum())
