"""One relation's triangles counted by degree orientation (:mod:`faq.joins.oriented_triangle`) against brute force,
networkx and SNAP's published count; and the step running it where the plan chose the triangle kernels."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from faq.joins.local import join_local
from faq.joins.oriented_triangle import code_table, oriented_count
from faq.joins.strategy import NamedStrategy
from faq.joins.table import Table
from faq.semirings import COUNTING
from faq.joins.frame import Aggregation

DATA = Path(__file__).parent / "data"
TRIANGLES = [("a", "b"), ("b", "c"), ("a", "c")]


def brute_force(pairs: set, atoms: list) -> int:
    """Σ over every binding of the three variables to nodes of the product of the atoms' indicators."""
    nodes = sorted({v for p in pairs for v in p})
    names = sorted({v for atom in atoms for v in atom})
    total = 0
    for placed in itertools.product(nodes, repeat=3):
        at = dict(zip(names, placed))
        total += all((at[u], at[v]) in pairs for u, v in atoms)
    return total


def uses(src: np.ndarray, dst: np.ndarray, atoms: list, values=None) -> list[Table]:
    return [Table((u, v), {u: src, v: dst}, values) for u, v in atoms]


@st.composite
def relation_and_atoms(draw):
    """A set of ordered pairs without loops (some held both ways), and a triangle's atoms in any orientation."""
    n = draw(st.integers(3, 9))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1]),
                         max_size=40))
    flips = draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    atoms = [(v, u) if flip else (u, v) for (u, v), flip in zip(TRIANGLES, flips)]
    return pairs, draw(st.permutations(atoms))


@given(relation_and_atoms(), st.integers(1, 3))
@settings(max_examples=examples(150), deadline=None)
def test_every_orientation_of_the_atoms_equals_brute_force(case, threads):
    pairs, atoms = case
    ordered = sorted(pairs)
    src = np.array([p[0] for p in ordered], dtype=np.int64)
    dst = np.array([p[1] for p in ordered], dtype=np.int64)
    total, note = oriented_count(uses(src, dst, atoms), threads=threads)
    assert total == brute_force(pairs, atoms)
    assert total == 0 and not pairs or "oriented by degree" in note


def test_the_code_table_counts_the_ways_a_triangle_holds_the_atoms():
    feed_forward = code_table(TRIANGLES)
    assert feed_forward[1 << 4 | 1 << 2 | 1] == 1          # p→q, q→r, p→r
    assert feed_forward[1 << 4 | 1 << 2 | 2] == 0          # p→q→r→p is a cycle
    assert code_table([("a", "b"), ("b", "c"), ("c", "a")])[1 << 4 | 1 << 2 | 2] == 3
    assert all(code_table(TRIANGLES)[i] == 0 for i in range(64) if i & 3 == 0)   # no pair (p, r): nothing


def test_loops_repeats_values_and_different_relations_decline():
    src, dst = np.array([0, 1, 0]), np.array([1, 2, 2])
    assert oriented_count(uses(np.array([0, 1, 1]), np.array([1, 1, 2]), TRIANGLES))[1] == \
        "the relation holds a loop (v, v)"
    assert oriented_count(uses(np.array([0, 0, 1, 0]), np.array([1, 1, 2, 2]), TRIANGLES))[1] == \
        "the relation holds a pair twice (its multiplicity would count)"
    assert oriented_count(uses(src, dst, TRIANGLES, np.array([1, 2, 1])))[1] == "values other than one"
    other = [*uses(src, dst, TRIANGLES[:2]), Table(("a", "c"), {"a": dst, "c": src}, None)]
    assert oriented_count(other)[1] == "its atoms read different relations"
    # a pair held both ways is one edge with code 3, not a repeat
    both = oriented_count(uses(np.array([0, 1, 1, 0]), np.array([1, 0, 2, 2]), TRIANGLES))[0]
    assert both == brute_force({(0, 1), (1, 0), (1, 2), (0, 2)}, TRIANGLES) == 2


def _snap_pairs(name: str) -> tuple[np.ndarray, np.ndarray]:
    with gzip.open(DATA / name, "rt") as lines:
        rows = np.array([line.split() for line in lines if not line.startswith("#")], dtype=np.int64)
    keep = rows[:, 0] != rows[:, 1]
    pairs = np.unique(rows[keep], axis=0)
    return pairs[:, 0], pairs[:, 1]


def test_email_enron_undirected_equals_snap_and_directed_equals_networkx():
    src, dst = _snap_pairs("Email-Enron.txt.gz")
    undirected = np.unique(np.sort(np.stack([src, dst], axis=1), axis=1), axis=0)
    total, _ = oriented_count(uses(undirected[:, 0], undirected[:, 1], TRIANGLES))
    assert total == 727_044  # SNAP's published triangle count of Email-Enron
    wiki_src, wiki_dst = _snap_pairs("wiki-Vote.txt.gz")
    graph = nx.DiGraph(zip(wiki_src.tolist(), wiki_dst.tolist()))
    feed_forward = sum(len(set(graph.successors(a)) & set(graph.successors(b)))
                       for a, b in graph.edges())  # a→b, a→c, b→c: c among both a's and b's successors
    assert oriented_count(uses(wiki_src, wiki_dst, TRIANGLES))[0] == feed_forward


def test_the_step_runs_the_oriented_count_first_where_the_plan_chose_the_triangle_kernels():
    k = np.array([(i, j) for i in range(6) for j in range(6) if i != j]).T   # K6, every pair both ways
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True, oriented_count=True), uses(k[0], k[1], TRIANGLES), [], COUNTING,
                           ("a", "b", "c"), Aggregation((), COUNTING), threads=2)
    assert note.startswith("in-process triangle count (oriented by degree") and out.values.tolist() == [6 * 5 * 4]
    loops = np.array([0, 0, 1]), np.array([0, 1, 2])
    out, note = join_local(NamedStrategy("broadcast", dense_rows=True, oriented_count=True), uses(*loops, TRIANGLES), [], COUNTING,
                           ("a", "b", "c"), Aggregation((), COUNTING), threads=1)
    assert note.startswith("one relation's triangles declined (the relation holds a loop (v, v)): ")
    assert out.values.tolist() == [brute_force({(0, 0), (0, 1), (1, 2)}, TRIANGLES)]


def test_the_plan_chooses_the_oriented_count_for_three_atoms_of_one_factor_and_explain_says_so():
    from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
    from faq.insideout.physical import Environment
    from faq.insideout.planner import plan_query
    from faq.insideout.plans import strategy_dict, strategy_of
    from faq.language import parse_query

    edges = RelationStatistics(2 * 10**6, (ColumnStatistics(10**5, 500),) * 2)
    for rows, dense in ((2 * 10**6, False), (8 * 10**6, True)):   # the loop's size, and dense-row sums' size
        statistics = {"edge": RelationStatistics(rows, edges.columns)}
        plan = plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting",
                          environment=Environment(placement="auto", compiled_loaded=True), held=["edge"],
                          statistics=statistics)
        strategy = plan.steps[0].strategy
        assert strategy.oriented_count and strategy.dense_rows == dense, str(plan)
        assert "one relation's triangles oriented by degree" in str(plan).replace("\n", " ")
        assert strategy_of(strategy_dict(strategy)) == strategy
    two = {"e": edges, "f": edges}   # two factors: no one relation to orient
    plan = plan_query(parse_query("count() := e(a,b), f(a,c), e(b,c)"), semiring="counting",
                      environment=Environment(placement="auto", compiled_loaded=True), held=["e", "f"],
                      statistics=two)
    assert not plan.steps[0].strategy.oriented_count and "oriented by degree" not in str(plan)


def test_a_real_semiring_over_ones_counts_the_same_and_other_values_fall_back():
    from faq.semirings import REAL

    k = np.array([(i, j) for i in range(5) for j in range(5) if i != j]).T
    strategy = NamedStrategy("broadcast", oriented_count=True)
    ones = uses(k[0], k[1], TRIANGLES, np.ones(k.shape[1]))
    out, note = join_local(strategy, ones, [], REAL, ("a", "b", "c"), Aggregation((), REAL), threads=2)
    assert note.startswith("in-process triangle count (oriented by degree") and out.values.tolist() == [60.0]
    halves = uses(k[0], k[1], TRIANGLES, np.full(k.shape[1], 0.5))
    out, note = join_local(strategy, halves, [], REAL, ("a", "b", "c"), Aggregation((), REAL), threads=2)
    assert note.startswith("one relation's triangles declined (values other than one)")
    assert out.values.tolist() == pytest.approx([60 * 0.125])


def test_on_the_executors_the_tasks_count_the_oriented_triangles_and_explain_says_so(spark, caplog):
    """A broadcast step placed on the executors counts one relation's triangles in its tasks from the oriented
    index the driver ships (faq.joins.broadcast.oriented_in_tasks): the same counts as networkx and SNAP."""
    import logging

    import faq

    src, dst = _snap_pairs("Email-Enron.txt.gz")
    edges = spark.createDataFrame(np.stack([src, dst], axis=1).tolist(), ["src", "dst"])
    graph = nx.DiGraph(zip(src.tolist(), dst.tolist()))
    feed_forward = sum(len(set(graph.successors(a)) & set(graph.successors(b))) for a, b in graph.edges())
    with caplog.at_level(logging.INFO, logger="faq.joins.generic"):
        directed = faq.count_triangles(edges, directed=True, placement="executors")
        undirected = faq.count_triangles(edges, placement="executors")
    assert directed.count == feed_forward and undirected.count == 727_044  # SNAP's published count
    ran = [r.getMessage() for r in caplog.records if "oriented by degree" in r.getMessage()]
    assert len(ran) == 2 and "counted by middle node" in ran[0], [r.getMessage() for r in caplog.records]
    step = directed.plan.steps[0]
    assert step.placement == "executors" and step.strategy.oriented_count
    assert "counted in the tasks" in str(directed.plan).replace("\n", " ")


def test_on_the_executors_values_other_than_one_fall_back_to_the_generic_index(spark, caplog):
    """Where the oriented count declines (a factor valued 2), the tasks run the generic index: brute force's sum."""
    import logging

    import faq

    pairs = {(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (3, 0)}
    edges = spark.createDataFrame([(a, b, 2) for a, b in sorted(pairs)], ["src", "dst", "value"])
    with caplog.at_level(logging.INFO, logger="faq.joins.broadcast"):
        result = faq.query("count() := e(a,b), e(b,c), e(a,c)", e=edges, placement="executors")
    assert result.scalar() == 8 * brute_force(pairs, TRIANGLES)  # each binding's product 2·2·2
    assert any("declined: values other than one" in r.getMessage() for r in caplog.records)
    assert result.plan.steps[0].strategy.oriented_count
