"""Fixpoints with the edges held on the executors and the values on the driver (faq.recursive.executor_edges).

Random graphs (hypothesis) against networkx and the bottleneck Dijkstra of tests/test_recursive.py,
every idempotent semiring of the paths and the components; the cases the round loop must catch
(negative cycles, a source outside the graph, a user's semiring with numpy forms); what is left
behind after the edges close.
"""

from __future__ import annotations

import math
import os

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.errors import NegativeCycleError
from faq.factor import factor_of
from faq.recursive.executor_edges import ExecutorEdges, best_per_target, build_part
from faq.recursive.placed import solve_placed
from faq.recursive.propagate import fixpoint_ops
from faq.semirings import MIN_PLUS, get_semiring
from tests.conftest import examples
from tests.test_recursive import OFFSET, graph_lists, paths_oracle, union_factor, widest_oracle

# 25 drawn cases in all: 6 per path semiring, 7 of components (each a few Spark jobs).
PATHS = settings(max_examples=examples(6), deadline=None, suppress_health_check=list(HealthCheck),
                 derandomize=True)
COMPONENTS = settings(PATHS, max_examples=examples(7))


def held(edges, semiring="min_plus", **kw):
    """Solved with the edges held on the executors (asserted), as {node: value}."""
    with solve_placed(edges, semiring, placement="executors", **kw) as result:
        assert "edges held on the executors" in result.placement_reason, result.placement_reason
        return {int(n): v for n, v in result.df.collect()}


@pytest.mark.parametrize("semiring", ["boolean", "min_plus", "max_min"])
@PATHS
@given(graphs=graph_lists)
def test_random_paths_held_on_the_executors_match_oracles(spark, semiring, graphs):
    """The first graph's node 0 is the source; the other graphs are unreachable (ids apart)."""
    expected = {n: v for n, v in paths_oracle(graphs, semiring).items() if n < OFFSET}
    assert held(union_factor(graphs, semiring, spark), semiring, source=0) == expected


@COMPONENTS
@given(graphs=graph_lists)
def test_random_components_held_on_the_executors_match_networkx(spark, graphs):
    """Every node of an edge (a self-loop's too) labelled with its component's smallest id."""
    g = nx.Graph()
    for i, (_, edges) in enumerate(graphs):
        g.add_edges_from((i * OFFSET + u, i * OFFSET + v) for u, v, _ in edges)
    expected = {n: min(c) for c in nx.connected_components(g) for n in c}
    assert held(union_factor(graphs, "min_plus", spark), components=True) == expected


def test_a_source_outside_the_graph_is_its_only_node(spark):
    edges = factor_of([(1, 2, 1.0)], ["src", "dst"], "min_plus", spark=spark)
    assert held(edges, source=7) == {7: 0.0}


def test_a_negative_cycle_is_reported_by_the_rounds_on_the_driver(spark):
    edges = factor_of([(0, 1, 1.0), (1, 2, -3.0), (2, 0, 1.0)], ["src", "dst"], "min_plus", spark=spark)
    with pytest.raises(NegativeCycleError):
        solve_placed(edges, "min_plus", source=0, placement="executors")


def test_negative_weights_without_a_cycle_match_bellman_ford(spark):
    rows = [(0, 1, 4.0), (0, 2, 1.0), (2, 1, -2.0), (1, 3, 1.0), (2, 3, 5.0)]
    g = nx.DiGraph()
    g.add_weighted_edges_from(rows)
    expected = {n: float(d) for n, d in nx.single_source_bellman_ford_path_length(g, 0).items()}
    assert held(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), source=0) == expected


def test_a_users_semiring_with_numpy_forms_is_held_on_the_executors(spark):
    """A (min, +) of the user's own, with numpy forms: the tasks run its ⊗ and ⊕ (pickled with the rounds)."""
    from pyspark.sql import functions as F

    from faq.semirings import Semiring

    tropical = Semiring("my_min_plus", "double", math.inf, 0.0, add=lambda a, b: F.least(a, b),
                        mul=lambda a, b: a + b, sum=F.min, idempotent=True, numpy_add=np.minimum, numpy_mul=np.add)
    rows = [(0, 1, 2.0), (1, 2, 2.0), (0, 2, 5.0), (2, 3, 1.0)]
    edges = factor_of(rows, ["src", "dst"], get_semiring("min_plus"), spark=spark)
    assert held(edges, tropical, source=0) == {0: 0.0, 1: 2.0, 2: 4.0, 3: 5.0}


def test_rounds_follow_the_frontier_and_the_files_go_with_the_edges(spark):
    """One job a round; the parts are files built once by the executors, removed when the edges close."""
    frame = spark.createDataFrame([(i, i + 1, 1.0) for i in range(50)], "src long, dst long, weight double")
    with ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS), parts=1) as edges:
        assert len(edges.domain) == 51 and edges.rows == 50 and edges.parts == 1
        frontier = edges.domain.lookup(np.array([10, 20]))
        values = np.full(len(edges.domain), np.inf)
        values[frontier] = [0.0, 5.0]
        edges.hops_after = None  # one hop: the frontier's out-edges only
        src, dst, best = edges.proposals(frontier, values)
        assert sorted(zip(edges.domain.decode(dst).tolist(), best.tolist(), edges.domain.decode(src).tolist())) == [
            (11, 1.0, 10), (21, 6.0, 20)]
        edges.hops_after = 0  # hops within the part, pruned by the values: the chains 10 -> 11 -> ... and 20 -> ...
        values[edges.domain.lookup(np.array([15]))] = 2.0  # known already, better than 10 + 5 hops
        src, dst, best = edges.proposals(frontier, values)
        found = dict(zip(edges.domain.decode(dst).tolist(), best.tolist()))
        # a hop stops where the driver's value is better (15): the rest of that chain is 15's to improve
        assert found == {**{n: n - 10.0 for n in range(11, 15)}, **{n: n - 15.0 for n in range(21, 51)}}
        assert edges.rounds == 2
        paths = edges.paths
        assert all(os.path.exists(p) for p in paths)
    assert not any(os.path.exists(os.path.dirname(p)) for p in paths)


@pytest.mark.parametrize("semiring", ["boolean", "min_plus"])  # max_min's zero (-inf) is dropped by the same test
def test_edges_in_parquet_files_are_read_by_the_tasks_and_match_networkx(spark, tmp_path, semiring):
    """``spark.read.parquet`` of local files: the executors' tasks read equal shares of the row groups
    themselves (and the driver placement the whole files); a row with a null weight, or a weight that is the
    semiring's zero, is no edge, as in Spark's frame -- all three placements agree with networkx."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from faq.factor import Factor
    from faq.recursive.edge_files import edge_scan

    rng = np.random.default_rng(3)
    n = 1500
    src, dst = rng.integers(0, 150, n), rng.integers(0, 150, n)
    weight = rng.integers(0, 3, n).astype(float)  # 0.0: boolean's zero (false); few distinct: few rounds
    weight[::53] = math.inf if semiring == "min_plus" else -math.inf  # the zero of min_plus, of max_min
    nulls = np.arange(n) % 41 == 0
    for k in range(2):  # two files of several row groups each
        half = slice(k * n // 2, (k + 1) * n // 2)
        pq.write_table(pa.table({"src": src[half], "dst": dst[half], "weight": pa.array(weight[half], mask=nulls[half])}),
                       str(tmp_path / f"part-{k}.parquet"), row_group_size=300)
    s = get_semiring(semiring)
    g = nx.DiGraph()
    for u, v, w, null in zip(src.tolist(), dst.tolist(), weight.tolist(), nulls.tolist()):
        w = bool(w) if semiring == "boolean" else w
        if null or w == s.zero or u == v:
            continue
        merged = (max if semiring == "max_min" else min)(w, g[u][v]["weight"]) if g.has_edge(u, v) else w
        g.add_edge(u, v, weight=merged)
    source = int(src[0])
    if semiring == "boolean":
        expected = {v: True for v in nx.descendants(g, source) | {source}}
    elif semiring == "min_plus":
        expected = {v: float(d) for v, d in nx.single_source_dijkstra_path_length(g, source).items()}
    else:
        expected = widest_oracle(g, source)

    def factor():
        return Factor(df=spark.read.parquet(str(tmp_path)), variables=("src", "dst"), semiring=get_semiring("min_plus"),
                      value="weight", name="g")

    scan = edge_scan(factor())
    assert scan is not None and scan.rows == n and len(scan.files) == 2
    assert [sum(hi - lo for _, _, lo, hi in share) for share in scan.shares(4)] == [375] * 4
    with solve_placed(factor(), semiring, source=source, placement="executors") as result:
        assert "read from their Parquet files by the tasks" in result.placement_reason, result.placement_reason
        assert {int(k): v for k, v in result.df.collect()} == expected
    with solve_placed(factor(), semiring, source=source, placement="driver") as result:
        assert {int(k): v for k, v in result.df.collect()} == expected
    if semiring == "boolean":  # components: every row with both ends, whatever its weight (null, zero), both ways
        u = nx.Graph()
        u.add_edges_from(zip(src.tolist(), dst.tolist()))
        labels = {v: min(c) for c in nx.connected_components(u) for v in c}
        for where in ("executors", "driver"):
            with solve_placed(factor(), components=True, placement=where) as result:
                assert {int(k): v for k, v in result.df.collect()} == labels
                assert where == "driver" or "read from their Parquet files" in result.placement_reason
    filtered = Factor(df=spark.read.parquet(str(tmp_path)).where("src >= 0"), variables=("src", "dst"),
                      semiring=get_semiring("min_plus"), value="weight", name="g")
    assert edge_scan(filtered) is None  # Spark's rows are not the files' rows: they go through Spark (tests above)
    mixed = tmp_path / "mixed"  # files whose ends differ in width: Spark reads them, pyarrow would not concatenate
    mixed.mkdir()
    pq.write_table(pa.table({"src": pa.array([1], pa.int32()), "dst": pa.array([2], pa.int32()), "weight": [1.0]}),
                   str(mixed / "a.parquet"))
    pq.write_table(pa.table({"src": [2], "dst": [3], "weight": [1.0]}), str(mixed / "b.parquet"))
    assert edge_scan(Factor(df=spark.read.parquet(str(mixed / "a.parquet"), str(mixed / "b.parquet")),
                            variables=("src", "dst"), semiring=get_semiring("min_plus"), value="weight")) is None


def test_no_edges_hold_no_parts(spark):
    frame = spark.createDataFrame([], "src long, dst long, weight double")
    with ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS)) as edges:
        assert edges.parts == 0 and len(edges.domain) == 0
        assert [len(a) for a in edges.proposals(np.array([0]), np.zeros(1))] == [0, 0, 0]


def test_the_spark_rounds_stay_available_as_the_baseline(spark):
    edges = factor_of([(0, 1, 1.0), (1, 2, 1.0)], ["src", "dst"], "min_plus", spark=spark)
    with solve_placed(edges, "min_plus", source=0, placement="executors", rounds="spark") as result:
        assert "edges held" not in result.placement_reason
        assert sorted(map(tuple, result.df.collect())) == [(0, 0.0), (1, 1.0), (2, 2.0)]


@pytest.mark.parametrize("semiring", ["boolean", "min_plus", "max_min", "min_label"])
@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(rows=st.lists(st.tuples(st.integers(0, 12), st.integers(-3, 3), st.integers(0, 99)), max_size=40))
def test_best_per_target_is_each_targets_sum_and_its_first_winner(semiring, rows):
    """The dense ⊕.at form against a loop over the rows: per target, the ⊕ of its proposals and the source
    of the first proposal equal to it (ties are common: values from a handful)."""
    from faq.semirings import MIN_LABEL

    ops = fixpoint_ops(MIN_LABEL if semiring == "min_label" else get_semiring(semiring))
    targets = np.array([t for t, _, _ in rows], dtype=np.int64)
    proposals = np.array([v for _, v, _ in rows]).astype(ops.dtype)
    sources = np.array([s for _, _, s in rows], dtype=np.int64)
    expected: dict[int, tuple] = {}
    for t, v, s in zip(targets.tolist(), proposals.tolist(), sources.tolist()):
        best = v if t not in expected else ops.add(expected[t][0], v).item()
        expected[t] = (best, expected.get(t, (None, None))[1])
    for t in expected:  # the first source whose proposal equals the target's ⊕
        expected[t] = (expected[t][0], next(s for tt, v, s in zip(targets.tolist(), proposals.tolist(),
                                                                     sources.tolist()) if tt == t and v == expected[t][0]))
    got, best, winners = best_per_target(targets, proposals, sources, ops)
    assert got.tolist() == sorted(expected)
    assert list(zip(best.tolist(), winners.tolist())) == [expected[t] for t in sorted(expected)]
    if len(targets):  # a size beyond the largest target answers the same
        assert best_per_target(targets, proposals, sources, ops, int(targets.max()) + 5)[0].tolist() == got.tolist()


def test_best_per_target_keeps_a_winning_source_per_target():
    ops = fixpoint_ops(get_semiring("max_min"))
    targets, best, sources = best_per_target(np.array([2, 2, 9]), np.array([3.0, 7.0, 1.0]), np.array([5, 6, 7]), ops)
    assert targets.tolist() == [2, 9] and best.tolist() == [7.0, 1.0] and sources.tolist() == [6, 7]


def test_a_maintained_fixpoint_above_the_budget_solves_and_recomputes_with_held_edges(spark):
    """Edges over the budget, nodes within it: the first answer and each recomputation (a deletion) hold
    the edges on the executors; insertions stay incremental Spark rounds.  networkx after every batch."""
    from faq.recursive import MaintainedFixpoint
    from tests.test_recursive import floats, nx_of, values_of

    current = {(a, a + 1): 9.0 for a in range(9)}
    current.update({(0, 5): 20.0, (2, 7): 30.0})
    notes: list[str] = []
    edges = factor_of([(a, b, w) for (a, b), w in current.items()], ["src", "dst"], "min_plus", spark=spark)
    # the index (~1.9 KB) exceeds 1,000 bytes; 10 nodes' values (480 bytes) do not
    with MaintainedFixpoint.paths(edges, 0, budget=1000, progress=notes.append) as m:
        assert m.placement == "executors"
        assert any("edges held on the executors" in str(n) for n in notes), notes

        def oracle():
            return floats(nx.single_source_dijkstra_path_length(nx_of([(a, b, w) for (a, b), w in current.items()]), 0))

        assert values_of(m) == oracle()
        notes.clear()
        del current[(2, 3)]
        change = m.delete([(2, 3)])
        assert change.info["recomputed"] and any("edges held on the executors" in str(n) for n in notes), notes
        assert values_of(m) == oracle()
        current[(1, 6)] = 1.0
        m.insert([(1, 6, 1.0)])
        assert values_of(m) == oracle()
    with MaintainedFixpoint.components(edges, nodes=[100], budget=1000) as comps:
        assert values_of(comps) == {**{n: 0 for n in range(10)}, 100: 100}


def test_a_part_of_dense_ids_is_built_as_one_of_sparse_ids():
    """Ids spanning few more than the edges are coded by a mask (no sort); shifted below zero they are sorted:
    the same nodes (shifted back), the same trie."""
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 3000, 5000), rng.integers(0, 3000, 5000)
    weight = rng.integers(1, 9, 5000).astype(float)
    ops = fixpoint_ops(MIN_PLUS)
    dense, shifted = build_part(src, dst, weight, ops), build_part(src - 10**12, dst - 10**12, weight, ops)
    assert np.array_equal(dense["nodes"], shifted["nodes"] + 10**12)
    assert np.array_equal(dense["nodes"], np.unique(np.concatenate([src, dst])))
    frontier = np.arange(len(dense["nodes"]))
    for a, b in zip(*(out_edges_of(part["trie"], frontier, ops) for part in (dense, shifted))):
        assert np.array_equal(a, b)


def out_edges_of(trie, frontier, ops):
    from faq.recursive.propagate import out_edges

    return out_edges([trie], frontier, ops)
