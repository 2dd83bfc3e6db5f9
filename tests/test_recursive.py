"""Recursive semiring queries (faq.recursive) against independent oracles.

Oracles: networkx (``descendants`` for reachability, Dijkstra / Bellman-Ford
for shortest paths, ``connected_components``) and a bottleneck Dijkstra written
here for widest paths.  Real graphs: SNAP wiki-Vote, p2p-Gnutella31 and
soc-sign-bitcoinotc (|rating| as length and as capacity); random graphs from
hypothesis.  Spark is slow per job, so the random graphs of one example are
solved together as one disjoint union (one source per graph), and examples
through Spark are few; the same random unions are solved many more times by a
maintained fixpoint on the driver (no Spark job).  The counts scale with the
hypothesis profile (tests/conftest.py).
"""

import heapq
import json
import math
import os
import random
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.errors import (
    FAQError,
    FixpointNotConvergedError,
    MalformedInputError,
    NegativeCycleError,
    NotIdempotentError,
    StateDirectoryError,
)
from faq.factor import factor_of
from faq.io import read_edge_list
from faq.recursive import (
    MIN_LABEL,
    MaintainedFixpoint,
    abs_weights,
    components_on_spark,
    fixpoint,
    read_batch,
    read_updates,
    reachability_on_spark,
    shortest_paths_on_spark,
    widest_paths_on_spark,
)
from tests.conftest import examples

DATA = Path(__file__).resolve().parent / "data"
WIKI = DATA / "wiki-Vote.txt.gz"  # 7,115 nodes, 103,689 directed edges
GNUTELLA = DATA / "p2p-Gnutella31.txt.gz"  # 62,586 nodes, 147,892 directed edges
BITCOIN = DATA / "soc-sign-bitcoinotc.csv.gz"  # src,dst,rating,time; ratings -10..+10

# Sources with a large reachable set (found once with networkx; see the assertions).
WIKI_SOURCE = 457  # reaches 2,320 nodes, eccentricity 4
GNUTELLA_SOURCE = 62098  # reaches 60,826 nodes, eccentricity 20
BITCOIN_SOURCE = 1810  # reaches 5,849 nodes


# --- oracles --------------------------------------------------------------------------


def load_nx(path, weighted=False, merge=min):
    """A networkx DiGraph of a SNAP edge list; loops dropped; parallel edges merged with ``merge``."""
    import gzip

    graph = nx.DiGraph()
    with gzip.open(path, "rt") as handle:
        for line in handle:
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.replace(",", " ").split()
            u, v = int(fields[0]), int(fields[1])
            if u == v:
                continue
            w = abs(float(fields[2])) if weighted else 1.0
            if graph.has_edge(u, v):
                w = merge(w, graph[u][v]["weight"])
            graph.add_edge(u, v, weight=w)
    return graph


def widest_oracle(graph, source):
    """Bottleneck (max-min) Dijkstra: the widest-path capacity of every node reachable from ``source``."""
    width = {source: math.inf}
    heap = [(-math.inf, source)]
    done = set()
    while heap:
        negative, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, data in graph[u].items():
            w = min(-negative, data["weight"])
            if w > width.get(v, -math.inf):
                width[v] = w
                heapq.heappush(heap, (-w, v))
    return width


def components_oracle(graph, nodes=()):
    undirected = nx.Graph()
    undirected.add_nodes_from(graph.nodes)
    undirected.add_nodes_from(nodes)
    undirected.add_edges_from(graph.edges)
    return {n: min(c) for c in nx.connected_components(undirected) for n in c}


def answer(result):
    """``{node: value}`` of a fixpoint result (or a factor), with floats."""
    factor = getattr(result, "factor", result)
    return {int(r[0]): r[1] for r in factor.df.collect()}


def floats(mapping):
    return {k: float(v) for k, v in mapping.items()}


# --- real graphs ------------------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_reachability_and_components_wiki_vote():
    graph = load_nx(WIKI)
    expected = nx.descendants(graph, WIKI_SOURCE) | {WIKI_SOURCE}
    assert len(expected) == 2320
    edges = read_edge_list(WIKI)
    with reachability_on_spark(edges, WIKI_SOURCE) as result:
        got = answer(result)
    assert set(got) == expected and all(v is True for v in got.values())
    with components_on_spark(edges) as result:
        got = answer(result)
        assert result.factor.semiring is MIN_LABEL
    assert got == components_oracle(graph)
    assert len(set(got.values())) == 24


@pytest.mark.usefixtures("spark")
def test_shortest_paths_gnutella_unit_weights():
    """Hop counts (the loader's counting 1 becomes a length of 1.0); keys are the reachable set."""
    graph = load_nx(GNUTELLA)
    expected = floats(nx.single_source_dijkstra_path_length(graph, GNUTELLA_SOURCE))
    assert len(expected) == 60826
    with shortest_paths_on_spark(read_edge_list(GNUTELLA), GNUTELLA_SOURCE) as result:
        assert answer(result) == expected
        assert result.iterations == int(max(expected.values())) + 1  # the last one improves nothing


@pytest.fixture(scope="module")
def bitcoin_nx():
    return load_nx(BITCOIN, weighted=True, merge=min), load_nx(BITCOIN, weighted=True, merge=max)


def bitcoin_paths(solve, semiring: str) -> dict:
    """``solve`` (shortest or widest paths) from :data:`BITCOIN_SOURCE` with |rating| as the edge weight."""
    edges = abs_weights(read_edge_list(BITCOIN, semiring=semiring, weight_column=3, duplicates="keep"))
    with solve(edges, BITCOIN_SOURCE) as result:
        return answer(result)


@pytest.mark.usefixtures("spark")
def test_shortest_paths_bitcoin_abs_rating(bitcoin_nx):
    shortest, _ = bitcoin_nx
    got = bitcoin_paths(shortest_paths_on_spark, "min_plus")
    expected = floats(nx.single_source_dijkstra_path_length(shortest, BITCOIN_SOURCE))
    assert len(expected) == 5849
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[n], expected[n]) for n in expected)


@pytest.mark.usefixtures("spark")
def test_widest_paths_bitcoin_abs_rating(bitcoin_nx):
    _, widest = bitcoin_nx
    assert bitcoin_paths(widest_paths_on_spark, "max_min") == widest_oracle(widest, BITCOIN_SOURCE)


def test_abs_weights_merges_after_abs(spark):
    f = factor_of([(1, 2, -5.0), (1, 2, 3.0), (2, 3, -1.0)], ["src", "dst"], "min_plus")
    assert sorted(map(tuple, abs_weights(f).df.collect())) == [(1, 2, 3.0), (2, 3, 1.0)]


# --- random graphs (hypothesis) ---------------------------------------------------------

OFFSET = 100  # node ids of the i-th graph: i*OFFSET + 0..n-1


@st.composite
def small_graph(draw):
    """(n, edges): up to 7 nodes; weights 0..5 (zeros included); parallel edges and loops allowed."""
    n = draw(st.integers(1, 7))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node, st.integers(0, 5)), max_size=14))
    return n, edges


graph_lists = st.lists(small_graph(), min_size=1, max_size=5)


def union_factor(graphs, semiring, spark):
    """The graphs as one factor (boolean: every edge true, whatever its weight)."""
    rows = [
        (i * OFFSET + u, i * OFFSET + v, 1.0 if semiring == "boolean" else float(w))
        for i, (_, edges) in enumerate(graphs)
        for u, v, w in edges
    ]
    return factor_of(rows, ["src", "dst"], semiring, spark=spark)


def per_graph_nx(graphs, merge):
    out = []
    for i, (n, edges) in enumerate(graphs):
        g = nx.DiGraph()
        g.add_nodes_from(i * OFFSET + k for k in range(n))
        for u, v, w in edges:
            if u == v:
                continue
            a, b = i * OFFSET + u, i * OFFSET + v
            w = float(w)
            if g.has_edge(a, b):
                w = merge(w, g[a][b]["weight"])
            g.add_edge(a, b, weight=w)
        out.append(g)
    return out


def seeds_of(graphs, semiring, spark):
    one = {"boolean": True, "min_plus": 0.0, "max_min": math.inf}[semiring]
    return factor_of([(i * OFFSET, one) for i in range(len(graphs))], ["node"], semiring, spark=spark)


# Examples per random-union test in the suite: solved with Spark jobs (fixpoint, connected_components),
# and by a maintained fixpoint on the driver.
SPARK = 3
IN_PROCESS = 10
SETTINGS = settings(max_examples=examples(SPARK), deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=True)
IN_PROCESS_SETTINGS = settings(SETTINGS, max_examples=examples(IN_PROCESS))


def union_rows(graphs, semiring):
    """The graphs' edges as tuples ``(src, dst[, weight])`` with the ids union_factor gives them."""
    return [
        (i * OFFSET + u, i * OFFSET + v) if semiring == "boolean" else (i * OFFSET + u, i * OFFSET + v, float(w))
        for i, (_, edges) in enumerate(graphs)
        for u, v, w in edges
    ]


def paths_oracle(graphs, semiring):
    """{node: value} from each graph's source (its node 0), by networkx / the bottleneck Dijkstra."""
    merge = max if semiring == "max_min" else min
    expected = {}
    for i, g in enumerate(per_graph_nx(graphs, merge)):
        source = i * OFFSET
        if semiring == "boolean":
            expected.update({n: True for n in nx.descendants(g, source) | {source}})
        elif semiring == "min_plus":
            expected.update(floats(nx.single_source_dijkstra_path_length(g, source)))
        else:
            expected.update(widest_oracle(g, source))
    return expected


def union_nodes(graphs):
    return [i * OFFSET + k for i, (n, _) in enumerate(graphs) for k in range(n)]


def union_components_oracle(graphs):
    expected = {}
    for g in per_graph_nx(graphs, min):
        expected.update(components_oracle(g))
    return expected


@pytest.mark.parametrize("semiring", ["boolean", "min_plus", "max_min"])
@SETTINGS
@given(graphs=graph_lists)
def test_random_paths_match_oracles(spark, semiring, graphs):
    """Disconnected graphs, zero weights, parallel edges and loops; one source per graph, solved together."""
    edges = union_factor(graphs, semiring, spark)
    with fixpoint(edges, seeds_of(graphs, semiring, spark)) as result:
        assert answer(result) == paths_oracle(graphs, semiring)


@pytest.mark.parametrize("semiring", ["boolean", "min_plus", "max_min"])
@IN_PROCESS_SETTINGS
@given(graphs=graph_lists)
def test_random_paths_in_process_match_oracles(semiring, graphs):
    """The same unions on the driver (tuples in, no Spark): a maintained fixpoint per graph's source,
    each over the whole union (the other graphs unreachable); their answers together are the oracle's."""
    rows = union_rows(graphs, semiring)
    got = {}
    for i in range(len(graphs)):
        m = MaintainedFixpoint.paths(rows, i * OFFSET, semiring, placement="driver")
        assert m.placement == "driver"
        found = values_of(m)
        assert not got.keys() & found.keys()  # nothing crosses between the graphs
        got.update(found)
    assert got == paths_oracle(graphs, semiring)


@SETTINGS
@given(graphs=graph_lists)
def test_random_components_match_networkx(spark, graphs):
    """Single nodes (given through ``nodes``) are components of their own."""
    nodes = union_nodes(graphs)
    with components_on_spark(union_factor(graphs, "min_plus", spark), nodes=nodes) as result:
        assert answer(result) == union_components_oracle(graphs)


@IN_PROCESS_SETTINGS
@given(graphs=graph_lists)
def test_random_components_in_process_match_networkx(graphs):
    """The same unions on the driver: a maintained fixpoint of the components (tuples in, no Spark)."""
    m = MaintainedFixpoint.components(union_rows(graphs, "min_plus"), nodes=union_nodes(graphs), placement="driver")
    assert m.placement == "driver"
    assert values_of(m) == union_components_oracle(graphs)


# --- termination, negative cycles, limits ------------------------------------------------


def test_long_path_runs_past_fifty_iterations(spark):
    """52 iterations: the lineage is cut every iteration, so neither the plans nor the stack grow."""
    n = 52
    edges = factor_of([(i, i + 1, 1.0) for i in range(n - 1)], ["src", "dst"], "min_plus", spark=spark)
    with shortest_paths_on_spark(edges, 0) as result:
        assert result.iterations == n
        assert answer(result) == {i: float(i) for i in range(n)}


def test_iteration_cap_raises(spark):
    edges = factor_of([(i, i + 1, 1.0) for i in range(6)], ["src", "dst"], "min_plus", spark=spark)
    with pytest.raises(FixpointNotConvergedError) as info:
        shortest_paths_on_spark(edges, 0, max_iterations=3)
    assert info.value.parameters == {"iterations": 3, "frontier": 1, "max_iterations": 3}


def test_negative_weights_without_cycle_match_bellman_ford(spark):
    rows = [(0, 1, 4.0), (0, 2, 1.0), (2, 1, -2.0), (1, 3, -1.0), (2, 3, 5.0), (3, 4, -3.0)]
    graph = nx.DiGraph()
    graph.add_weighted_edges_from(rows)
    with shortest_paths_on_spark(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), 0) as result:
        assert answer(result) == floats(nx.single_source_bellman_ford_path_length(graph, 0))


def test_negative_cycle_is_reported_not_looped_on(spark):
    rows = [(0, 1, 1.0), (1, 2, 1.0), (2, 1, -3.0), (2, 3, 1.0), (5, 6, 1.0)]
    edges = factor_of(rows, ["src", "dst"], "min_plus", spark=spark)
    with pytest.raises(NegativeCycleError) as info:
        shortest_paths_on_spark(edges, 0)
    params = info.value.parameters
    assert params["semiring"] == "min_plus" and params["nodes"] == 6
    assert params["iterations"] == 6 and params["frontier"] >= 1 and params["example"] in (1, 2, 3)
    assert isinstance(info.value, ValueError) and isinstance(info.value, FAQError)


def test_not_idempotent_semiring_is_refused(spark):
    edges = factor_of([(0, 1, 1)], ["src", "dst"], "counting", spark=spark)
    with pytest.raises(NotIdempotentError) as info:
        fixpoint(edges, factor_of([(0, 1)], ["node"], "counting", spark=spark))
    assert info.value.parameters == {"semiring": "counting"}


# --- maintained fixpoints -----------------------------------------------------------------


def random_rows(seed, nodes, count, low=1, high=9):
    rng = random.Random(seed)
    return [(rng.randrange(nodes), rng.randrange(nodes), float(rng.randint(low, high))) for _ in range(count)]


def nx_of(rows, merge=min, nodes=()):
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for u, v, w in rows:
        if u != v:
            g.add_edge(u, v, weight=merge(w, g[u][v]["weight"]) if g.has_edge(u, v) else w)
    return g


def change_set(before, after):
    """(node, old, new) for every node whose value differs (old None when it had none)."""
    return {(n, before.get(n), after[n]) for n in after if before.get(n) != after[n]}


def missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def changes_of(change):
    """(node, old, new) of a Change (columns node, old, version, diff); a missing old (NaN / None) is None."""
    assert change.names == ["node", "old", "version", "diff"]
    return {(node, None if missing(old) else old, new) for node, old, version, new in change.rows()}


def values_of(m):
    """The maintained answer ``{node: value}``, read on the driver."""
    table = m.table()
    return dict(zip(table.column("node").to_pylist(), table.column("value").to_pylist()))


def test_maintained_shortest_paths_equal_recomputation(spark):
    rows = random_rows(1, 30, 60)
    source = rows[0][0]
    repeat = rows[2][:2]
    best = min(w for u, v, w in rows if (u, v) == repeat)
    batches = [
        # new edges, a parallel pair inside the batch, a brand-new node 100
        [(source, 100, 2.0), (100, 7, 1.0), (100, 7, 5.0), (3, 100, 1.0)],
        # a shorter weight for an existing edge, an unchanged repeat, a zero weight
        [(rows[1][0], rows[1][1], 0.5), (*repeat, best), (7, 8, 0.0)],
        # reach a separate part: 200 -> 201 -> 202 hanging off node 8
        [(201, 202, 1.0), (8, 200, 3.0), (200, 201, 1.0)],
    ]
    current = list(rows)
    with MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), source) as m:
        assert m.placement == "driver" and m.version == 0
        before = floats(nx.single_source_dijkstra_path_length(nx_of(current), source))
        assert answer(m.state) == before  # the Spark factor of the answer
        for version, batch in enumerate(batches, start=1):
            current += batch
            after = floats(nx.single_source_dijkstra_path_length(nx_of(current), source))
            with m.insert(batch) as changes:
                assert changes_of(changes) == change_set(before, after)
                assert len(changes) == len(change_set(before, after))
                assert changes.version == version == m.version and changes.count == len(after)
                assert changes.to_dict()["changed"] == len(changes) and not changes.info["recomputed"]
            assert values_of(m) == after and answer(m.state) == after
            before = after
        assert m.edges.df.count() == m.edge_rows == len({(u, v) for u, v, _ in current})
        changes = m.recompute()  # from scratch on the driver: nothing differs, and no new version
        assert len(changes) == 0 and changes.info["recomputed"] and m.version == len(batches)


def test_maintained_deletions_and_worsening_are_incremental(spark, tmp_path):
    """A worse weight and a deletion are trimmed and re-derived on the driver (no recomputation)."""
    rows = [(0, 1, 2.0), (1, 2, 2.0), (0, 2, 9.0), (2, 3, 1.0)]
    with MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), 0) as m:
        with m.insert([(1, 2, 5.0)]) as changes:  # longer than 2.0: 2 and 3 hang from it
            assert not changes.info["recomputed"] and changes.info["trimmed"] == 2
            assert changes_of(changes) == {(2, 4.0, 7.0), (3, 5.0, 8.0)}
        with m.delete([(1, 2)]) as changes:
            assert changes.info["deleted"] == 1 and changes_of(changes) == {(2, 7.0, 9.0), (3, 8.0, 10.0)}
        m.insert([(1, 2, 2.0)])
        batch_file = tmp_path / "001.txt"
        batch_file.write_text("# one insert, one delete\n+ 3 4 1\n\n- 0 1\n")
        # deletions first, then insertions
        with m.apply(read_batch(batch_file)) as changes:
            assert not changes.info["recomputed"] and changes.info["deleted"] == 1
            # node 1 is no longer reached: its diff is the zero (inf); 4 is new
            assert changes_of(changes) == {(1, 2.0, math.inf), (2, 4.0, 9.0), (3, 5.0, 10.0), (4, None, 11.0)}
        expected = floats(nx.single_source_dijkstra_path_length(nx_of([(1, 2, 2.0), (0, 2, 9.0), (2, 3, 1.0), (3, 4, 1.0)]), 0))
        assert values_of(m) == expected and m.version == 4 and m.labels[-1] == "001.txt"
        with m.insert([(0, 2, 12.0)], recompute=True) as changes:  # asked for: recomputed from scratch
            assert changes.info["recomputed"]
        assert values_of(m) == {0: 0.0, 2: 12.0, 3: 13.0, 4: 14.0}
        # the edges the recomputation left are the index now: an improvement is incremental again
        with m.insert([(0, 3, 1.0)]) as changes:
            assert not changes.info["recomputed"] and changes_of(changes) == {(3, 13.0, 1.0), (4, 14.0, 2.0)}


def test_maintained_negative_cycle_leaves_answer_unchanged(spark):
    rows = [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]
    with MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), 0) as m:
        with pytest.raises(NegativeCycleError) as info:
            m.insert([(2, 1, -5.0)])
        assert info.value.parameters["semiring"] == "min_plus" and info.value.parameters["example"] in (1, 2, 3)
        assert values_of(m) == {0: 0.0, 1: 1.0, 2: 2.0, 3: 3.0} and m.version == 0
        # the edge was not added either: a harmless negative edge now works
        with m.insert([(0, 3, -1.0)]) as changes:
            assert changes_of(changes) == {(3, 3.0, -1.0)}


def test_maintained_iteration_cap_leaves_answer_unchanged():
    """No Spark at all: edges given as tuples."""
    m = MaintainedFixpoint.paths([(0, 1, 1.0), (1, 2, 1.0)], 0, max_iterations=3)
    with pytest.raises(FixpointNotConvergedError) as info:
        m.insert([(2, 3, 1.0), (3, 4, 1.0), (4, 5, 1.0)])
    assert info.value.parameters == {"iterations": 3, "frontier": 1, "max_iterations": 3}
    assert values_of(m) == {0: 0.0, 1: 1.0, 2: 2.0} and m.version == 0 and m.edge_rows == 2
    assert changes_of(m.insert([(2, 3, 1.0)])) == {(3, None, 3.0)}


def test_maintained_widest_paths(spark):
    rows = random_rows(2, 20, 40)
    source = rows[0][0]
    current = list(rows)
    with MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "max_min", spark=spark), source, "max_min") as m:
        before = widest_oracle(nx_of(current, max), source)
        assert values_of(m) == before
        batch = [(rows[1][0], rows[1][1], 50.0), (source, 300, 4.0), (300, rows[3][1], 8.0)]  # wider, new
        current += batch
        after = widest_oracle(nx_of(current, max), source)
        with m.insert(batch) as changes:
            assert changes_of(changes) == change_set(before, after)
        assert values_of(m) == after
        narrower = (rows[1][0], rows[1][1], 1.0)  # narrower than 50: the pair's capacity is set to 1
        with m.insert([narrower]) as changes:
            assert not changes.info["recomputed"]
        current = [r for r in current if r[:2] != narrower[:2]] + [narrower]
        assert values_of(m) == widest_oracle(nx_of(current, max), source)


def test_maintained_components(spark):
    rows = [(1, 2, 1.0), (2, 3, 1.0), (10, 11, 1.0), (20, 21, 1.0), (21, 22, 1.0)]
    current = [(u, v) for u, v, _ in rows]
    with MaintainedFixpoint.components(factor_of(rows, ["src", "dst"], "counting", spark=spark), nodes=[30]) as m:
        g = nx_of([(u, v, 1.0) for u, v in current], nodes=[30])
        before = components_oracle(g)
        assert answer(m.state) == before
        for batch in ([(22, 11), (40, 41)], [(11, 3), (30, 41), (2, 1)], [(50, 50)]):  # 50: a loop-only node
            current += batch
            after = components_oracle(nx_of([(u, v, 1.0) for u, v in current], nodes=[30, *(u for u, _ in current)]))
            with m.insert(batch) as changes:
                assert changes_of(changes) == change_set(before, after)
            assert values_of(m) == after
            before = after


def test_maintained_reachability(spark):
    rows = [(0, 1, 1.0), (1, 2, 1.0), (5, 6, 1.0)]
    with MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "counting", spark=spark), 0, "boolean") as m:
        assert values_of(m) == {0: True, 1: True, 2: True}
        with m.insert([(2, 5), (0, 1)]) as changes:  # (0, 1) exists: no change
            assert changes_of(changes) == {(5, None, True), (6, None, True)}
            assert changes.info["inserted"] == 1


@st.composite
def graph_and_batches(draw):
    """A small weighted digraph (loops, parallel edges, zero weights) and 3 insert batches over more nodes."""
    n = draw(st.integers(1, 8))
    edge = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 6))
    edges = draw(st.lists(edge, max_size=16))
    wider = st.tuples(st.integers(0, n + 2), st.integers(0, n + 2), st.integers(0, 6))
    batches = draw(st.lists(st.lists(wider, max_size=6), min_size=3, max_size=3))
    return n, [(u, v, float(w)) for u, v, w in edges], [[(u, v, float(w)) for u, v, w in b] for b in batches]


def path_oracle(semiring, rows, source):
    if semiring == "boolean":
        g = nx_of(rows)
        g.add_node(source)
        return {n: True for n in nx.descendants(g, source) | {source}}
    if semiring == "min_plus":
        g = nx_of(rows)
        g.add_node(source)
        return floats(nx.single_source_dijkstra_path_length(g, source))
    g = nx_of(rows, max)
    g.add_node(source)
    return widest_oracle(g, source)


def worse_pairs(semiring, current, batch):
    """Pairs whose batch value (⊕ of the batch's rows) is worse than the current one (the oracle's view)."""
    if semiring == "boolean":
        return set()
    better = min if semiring == "min_plus" else max
    merged, now = {}, {}
    for u, v, w in batch:
        merged[(u, v)] = better(w, merged.get((u, v), w))
    for u, v, w in current:
        now[(u, v)] = better(w, now.get((u, v), w))
    return {p for p, w in merged.items() if p in now and better(w, now[p]) != w}


# Maintained fixpoints built from tuples run on the driver only (no Spark): more examples are cheap.
DRIVER_SETTINGS = settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck),
                           derandomize=True)


@pytest.mark.parametrize("semiring", ["boolean", "min_plus", "max_min"])
@DRIVER_SETTINGS
@given(case=graph_and_batches())
def test_random_maintained_paths_match_networkx_after_every_batch(semiring, case):
    """Driver only (tuples in, no Spark); a worse weight sets its pair's value (trimmed, re-derived)."""
    n, rows, batches = case
    m = MaintainedFixpoint.paths(rows, 0, semiring)
    current = list(rows)
    assert values_of(m) == path_oracle(semiring, current, 0)
    for batch in batches:
        worse = worse_pairs(semiring, current, batch)
        expected_before = values_of(m)
        change = m.insert(batch)
        current = [r for r in current if r[:2] not in worse] + batch
        expected = path_oracle(semiring, current, 0)
        assert values_of(m) == expected
        if not worse:
            assert changes_of(change) == change_set(expected_before, expected)


@DRIVER_SETTINGS
@given(case=graph_and_batches())
def test_random_maintained_components_match_networkx_after_every_batch(case):
    n, rows, batches = case
    nodes = list(range(n))
    m = MaintainedFixpoint.components(rows, nodes=nodes)
    current = list(rows)
    ends = set(nodes)
    assert values_of(m) == components_oracle(nx_of(current, nodes=ends))
    for batch in batches:
        before = values_of(m)
        change = m.insert(batch)
        current += batch
        ends |= {u for u, _, _ in batch} | {v for _, v, _ in batch}
        expected = components_oracle(nx_of(current, nodes=ends))
        assert values_of(m) == expected
        assert changes_of(change) == change_set(before, expected)


def test_maintained_on_real_graphs_match_networkx(spark, bitcoin_nx):
    """wiki-Vote: reachability and components; soc-sign-bitcoinotc: shortest paths (|rating|), batch after batch."""
    rng = random.Random(7)
    graph = load_nx(WIKI)
    nodes = sorted(graph.nodes)
    edges = read_edge_list(WIKI)
    with MaintainedFixpoint.paths(edges, WIKI_SOURCE, "boolean") as reach, MaintainedFixpoint.components(edges) as comps:
        assert len(values_of(reach)) == 2320 and values_of(comps) == components_oracle(graph)
        for _ in range(2):
            batch = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(20)] + [(rng.choice(nodes), 10**6 + rng.randrange(5))]
            reach.insert(batch)
            comps.insert(batch)
            graph.add_edges_from((u, v) for u, v in batch if u != v)
            assert set(values_of(reach)) == nx.descendants(graph, WIKI_SOURCE) | {WIKI_SOURCE}
            assert values_of(comps) == components_oracle(graph)
    shortest, _ = bitcoin_nx
    shortest = shortest.copy()
    edges = abs_weights(read_edge_list(BITCOIN, semiring="min_plus", weight_column=3, duplicates="keep"))
    targets = sorted(shortest.nodes)
    with MaintainedFixpoint.paths(edges, BITCOIN_SOURCE) as m:
        for _ in range(2):
            batch = []
            for _ in range(15):  # new pairs only (an existing pair might get a worse weight)
                u, v = rng.choice(targets), rng.choice(targets)
                if u != v and not shortest.has_edge(u, v):
                    batch.append((u, v, float(rng.randint(1, 10))))
            m.insert(batch)
            shortest.add_weighted_edges_from(batch)
            got, expected = values_of(m), floats(nx.single_source_dijkstra_path_length(shortest, BITCOIN_SOURCE))
            assert got.keys() == expected.keys() and all(math.isclose(got[n], expected[n]) for n in expected)


def test_maintained_batches_run_no_spark_job(spark, monkeypatch, tmp_path):
    """Once built, batches and reads of the answer on the driver never touch Spark."""
    from pyspark.sql import DataFrame, SparkSession

    rows = random_rows(3, 40, 80)
    m = MaintainedFixpoint.paths(factor_of(rows, ["src", "dst"], "min_plus", spark=spark), rows[0][0])

    def refuse(*args, **kwargs):
        raise AssertionError("a Spark call during a batch")

    for name in ("collect", "count", "toArrow", "toPandas", "first", "take"):
        monkeypatch.setattr(DataFrame, name, refuse)
    monkeypatch.setattr(SparkSession, "createDataFrame", refuse)
    (tmp_path / "b.txt").write_text("+ 1 2 0.5\n+ 2 41 1\n")
    m.insert([(1, 3, 1.0), (3, 40, 2.0)])
    m.apply(read_batch(tmp_path / "b.txt"))
    m.delete([(1, 3)], recompute=True)
    assert m.version == 3 and m.size == len(values_of(m))


def test_maintained_durable_reopen_and_versions(tmp_path):
    from faq.errors import BatchAlreadyAppliedError, StateDirectoryError, VersionGapError

    rows = random_rows(4, 25, 50)
    source = rows[0][0]
    folder = tmp_path / "state"
    m = MaintainedFixpoint.paths(rows, source, path=str(folder))
    m.insert([(source, 90, 1.0), (90, 91, 1.0)], version=1, label="001.txt")
    m.insert([(91, 3, 0.5)], version=2, label="002.txt")
    expected, edge_rows = values_of(m), m.edge_rows
    m.close()
    events = []
    again = MaintainedFixpoint.open(folder, progress=events.append)
    assert values_of(again) == expected and again.version == 2 and again.labels == ["001.txt", "002.txt"]
    assert again.source == source and again.semiring.name == "min_plus" and again.edge_rows == edge_rows
    with pytest.raises(BatchAlreadyAppliedError) as info:
        again.insert([(91, 4, 0.1)], version=2)
    assert info.value.parameters == {"version": 2, "current": 2}
    with pytest.raises(VersionGapError):
        again.insert([(91, 4, 0.1)], version=4)
    change = again.insert([(91, 4, 0.1)], version=3, label="003.txt")
    assert [(e.kind, e.version, e.label) for e in events] == [("start", 3, "003.txt"), ("done", 3, "003.txt")]
    assert events[-1].rows == len(change) > 0 and events[-1].seconds >= 0
    again.delete([(source, 90)], recompute=True, version=4, label="004.txt")  # a recomputation: new bases
    current = rows + [(source, 90, 1.0), (90, 91, 1.0), (91, 3, 0.5), (91, 4, 0.1)]
    current = [r for r in current if r[:2] != (source, 90)]
    graph = nx_of(current)
    graph.add_node(source)
    oracle = floats(nx.single_source_dijkstra_path_length(graph, source))
    assert values_of(again) == oracle
    third = MaintainedFixpoint.open(folder)
    assert values_of(third) == oracle and third.version == 4 and third.labels[-1] == "004.txt"
    # components keep their labels through a reopen too
    comps = MaintainedFixpoint.components([(5, 6), (7, 8)], path=str(tmp_path / "comps"))
    comps.insert([(6, 7)])
    assert values_of(MaintainedFixpoint.open(tmp_path / "comps")) == {5: 5, 6: 5, 7: 5, 8: 5}
    with pytest.raises(StateDirectoryError):
        MaintainedFixpoint.open(tmp_path / "nothing")
    with pytest.raises(StateDirectoryError):  # a state is there already
        MaintainedFixpoint.paths(rows, source, path=str(folder))


def test_above_the_budget_the_answer_stays_on_spark_exact_and_durable(spark, tmp_path, monkeypatch):
    """A budget below the index size keeps edges and answer on Spark, with the same Change type; with path=
    Spark writes them and open() reads them back and goes on.

    After every batch (insertions, deletions, worse weights; by insert, apply and delete) the answer and
    the Change rows equal networkx's on the current edges, and so does the state reopened from the
    directory; enough deltas fold into new bases; a sink that fails rolls the fixpoint back to the saved
    version.
    """
    import faq.incremental.store as store_module

    monkeypatch.setattr(store_module, "MAX_DELTA_FILES", 1)  # a second delta file is a rebase instead
    current = {(a, a + 1): 9.0 for a in range(9)}  # 0 -> 1 -> ... -> 9
    current.update({(0, 5): 20.0, (2, 7): 30.0})
    folder = str(tmp_path / "state")
    edges = factor_of([(a, b, w) for (a, b), w in current.items()], ["src", "dst"], "min_plus", spark=spark)
    m = MaintainedFixpoint.paths(edges, 0, budget=64, path=folder)
    assert m.placement == "executors" and "exceed the driver budget" in m.placement_reason
    explained = str(m.explain())
    assert "deletions: recompute" in explained and "state: saved in" in explained and "(written by Spark)" in explained

    def oracle():
        graph = nx_of([(a, b, w) for (a, b), w in current.items()])
        return floats(nx.single_source_dijkstra_path_length(graph, 0))

    def frame(deletes, inserts):
        return pd.DataFrame({"src": [p[0] for p in deletes] + [r[0] for r in inserts],
                             "dst": [p[1] for p in deletes] + [r[1] for r in inserts],
                             "weight": [None] * len(deletes) + [r[2] for r in inserts],
                             "diff": [-1] * len(deletes) + [1] * len(inserts)})

    # (how, deletions, insertions): improving insertions make deltas; a deletion or a worse weight recomputes
    batches = [("insert", [], [(0, 3, 1.0), (3, 8, 2.0)]), ("apply", [(0, 3)], [(1, 4, 3.0), (0, 5, 25.0)]),
               ("insert", [], [(0, 6, 2.0)]), ("apply", [], [(0, 9, 1.0), (9, 2, 1.0)]), ("delete", [(9, 2)], [])]
    assert values_of(m) == oracle()
    for k, (how, deletes, inserts) in enumerate(batches):
        if k == 3:  # a reopened state (a base and a delta) continues: what it reads back is the answer
            m.close()
            m = MaintainedFixpoint.open(folder)
            assert m.placement == "executors" and m.version == 3 and m.labels == ["b0", "b1", "b2"]
            assert values_of(m) == oracle()
        before = oracle()
        for pair in deletes:
            del current[pair]
        for a, b, w in inserts:
            current[(a, b)] = w  # an insertion sets the pair's weight (a worse one too)
        if how == "insert":
            change = m.insert(inserts, version=k + 1, label=f"b{k}")
        elif how == "delete":
            change = m.delete(deletes, label=f"b{k}")
        else:  # change rows (pandas), as a stream gives them
            change = m.apply(frame(deletes, inserts), label=f"b{k}")
        after = oracle()
        assert values_of(m) == after and change.version == m.version == k + 1, k
        assert changes_of(change) == {(n, before.get(n), after.get(n, math.inf)) for n in set(before) | set(after)
                                      if before.get(n) != after.get(n)}, k
        assert change.info["recomputed"] == bool(deletes), k  # b1 also worsens (0, 5)
        if k == 3:
            saved = json.loads((tmp_path / "state" / "manifest.json").read_text())
            # batch 2 made deltas (read back by open); batch 3's would be beyond MAX_DELTA_FILES: new bases
            assert all(e["files"] == [e["files"][0]] and e["files"][0].startswith(f"{name}-v4-base-")
                       for name, e in saved["relations"].items()), saved
    saved = json.loads((tmp_path / "state" / "manifest.json").read_text())
    assert saved["version"] == 5 and saved["placement"] == "executors"
    for entry in saved["relations"].values():
        assert all((tmp_path / "state" / "data" / f).is_dir() for f in entry["files"])  # written by Spark

    def failing_sink(change):
        raise RuntimeError("the sink failed")

    with pytest.raises(RuntimeError, match="the sink failed"):  # nothing committed, the answer rolled back
        m.apply(pd.DataFrame({"src": [0], "dst": [11], "weight": [0.5], "diff": [1]}), before_commit=failing_sink)
    assert m.version == 5 and values_of(m) == oracle()
    m.close()
    again = MaintainedFixpoint.open(folder)
    assert again.version == 5 and values_of(again) == oracle()
    assert sorted(os.listdir(tmp_path / "state" / "data")) == sorted(
        f for e in saved["relations"].values() for f in e["files"])  # nothing half-written is left
    again.close()
    with pytest.raises(StateDirectoryError):  # a state is there already
        MaintainedFixpoint.paths([(0, 1, 1.0)], 0, placement="executors", path=folder)


# --- update files (no Spark) -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("+ 1 2\n* 3 4\n", 2, "expected"),
        ("+ 1\n", 1, "expected"),
        ("# c\n+ 1 x 3\n", 2, "node id"),
        ("+ 1 2 abc\n", 1, "weight"),
        ("+ 1 2 nan\n", 1, "weight"),
        ("+ 1 2 3 4\n", 1, "expected"),
    ],
)
def test_read_batch_reports_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "b.txt"
    path.write_text(text)
    with pytest.raises(MalformedInputError) as info:
        read_batch(path)
    assert info.value.parameters["line_number"] == line and info.value.parameters["path"] == str(path)
    assert reason in info.value.parameters["reason"]


def test_read_batch_weights_and_order(tmp_path):
    (tmp_path / "b2.txt").write_text("+ 5 6\n")
    (tmp_path / "b1.txt").write_text("# first\n\n+ 1 2 3.5\r\n- 2 3\n+\t4,5 inf\n")
    (tmp_path / ".hidden").write_text("garbage\n")
    first, second = read_updates(tmp_path)
    assert first.name == "b1.txt" and second.name == "b2.txt"
    assert first.inserts == ((1, 2, 3.5), (4, 5, math.inf)) and first.deletes == ((2, 3),)
    assert first.insert_lines == (3, 5) and first.delete_lines == (4,)
    with pytest.raises(MalformedInputError) as info:
        read_batch(tmp_path / "b2.txt", weighted=True)
    assert "missing weight" in info.value.parameters["reason"]


def test_a_users_semiring_with_numpy_forms_is_solved_and_maintained_on_the_driver():
    """A user-defined (min, +) with numpy forms runs in-process (it ran as Spark rounds before), equal to
    networkx's Dijkstra after the initial solve and after a batch with a deletion."""
    import numpy as np
    from pyspark.sql import functions as F

    from faq.io.updates import UpdateBatch
    from faq.recursive import maintain_paths
    from faq.semirings import Semiring

    tropical = Semiring("users_min_plus", "double", math.inf, 0.0, add=lambda a, b: F.least(a, b),
                        mul=lambda a, b: a + b, sum=F.min, idempotent=True, numpy_add=np.minimum,
                        numpy_mul=np.add)
    rows = random_rows(7, 25, 70)
    graph = nx.DiGraph()
    for u, v, w in rows:
        if not graph.has_edge(u, v) or w < graph[u][v]["weight"]:
            graph.add_edge(u, v, weight=w)
    source = rows[0][0]
    with maintain_paths(rows, source, tropical) as m:
        assert m.placement == "driver", m.placement_reason
        assert values_of(m) == pytest.approx(nx.single_source_dijkstra_path_length(graph, source))
        u, v, _ = rows[0]
        m.apply(UpdateBatch("b", inserts=(), deletes=((u, v),)))
        graph.remove_edge(u, v)
        assert values_of(m) == pytest.approx(nx.single_source_dijkstra_path_length(graph, source))
