"""Deletions and worse weights in maintained fixpoints (trimming on the driver) against oracles.

Random streams of mixed insert / delete batches on small weighted graphs (ties,
zero weights, parallel and repeated pairs, loops, new nodes): after *every*
batch the maintained answer and the batch's change are compared with an
oracle on the current graph -- scipy.sparse.csgraph's Dijkstra and networkx
for shortest paths, a bottleneck Dijkstra written here for widest paths,
networkx descendants for reachability, networkx connected components (smallest
id as the label) for components.  No Spark: edges go in as tuples and
:class:`~faq.io.updates.UpdateBatch` objects.
"""

import heapq
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from faq.errors import StateLockedError
from faq.io.updates import UpdateBatch
from faq.recursive import MaintainedFixpoint
from faq.recursive.trimming import subtrees

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
ZERO = {"boolean": False, "min_plus": math.inf, "max_min": -math.inf}


# --- oracles ------------------------------------------------------------------------------


def shortest(graph, source):
    """Dijkstra on scipy (parallel pairs are merged already; explicit zeros kept as edges)."""
    nodes = sorted({n for pair in graph for n in pair} | {source})
    index = {n: i for i, n in enumerate(nodes)}
    rows, cols, data = [], [], []
    for (u, v), w in graph.items():
        if u != v:
            rows.append(index[u])
            cols.append(index[v])
            data.append(w)
    # csgraph drops explicit zeros of a sparse matrix: a zero weight becomes a tiny one, then rounded
    data = [w if w else 1e-300 for w in data]
    matrix = csr_matrix((data, (rows, cols)), shape=(len(nodes), len(nodes)))
    dist = dijkstra(matrix, directed=True, indices=index[source])
    result = {n: float(round(dist[i], 9)) for n, i in index.items() if np.isfinite(dist[i])}
    # networkx agrees (a second, independent check of the oracle)
    g = nx.DiGraph()
    g.add_node(source)
    g.add_weighted_edges_from((u, v, w) for (u, v), w in graph.items() if u != v)
    assert result == {n: float(d) for n, d in nx.single_source_dijkstra_path_length(g, source).items()}
    return result


def widest(graph, source):
    width = {source: math.inf}
    heap = [(-math.inf, source)]
    done = set()
    out = {}
    for (u, v), w in graph.items():
        if u != v:
            out.setdefault(u, []).append((v, w))
    while heap:
        negative, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, w in out.get(u, ()):
            capacity = min(-negative, w)
            if capacity > width.get(v, -math.inf):
                width[v] = capacity
                heapq.heappush(heap, (-capacity, v))
    return width


def reachable(graph, source):
    g = nx.DiGraph()
    g.add_node(source)
    g.add_edges_from(p for p in graph if p[0] != p[1])
    return {n: True for n in nx.descendants(g, source) | {source}}


def components(graph, nodes):
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(p for p in graph if p[0] != p[1])
    return {n: min(c) for c in nx.connected_components(g) for n in c}


ORACLES = {"boolean": reachable, "min_plus": shortest, "max_min": widest}


def values_of(m):
    table = m.table()
    return dict(zip(table.column("node").to_pylist(), table.column("value").to_pylist()))


def changes_of(change, zero):
    """(node, old, new) of a change; a missing old (NaN / None) and a no-longer-reached new read as ``zero``."""
    out = set()
    for node, old, _version, new in change.rows():
        if old is None or (isinstance(old, float) and math.isnan(old)):
            old = zero
        out.add((node, old, new))
    return out


def expected_changes(before, after, zero):
    return {(n, before.get(n, zero), after.get(n, zero)) for n in set(before) | set(after)
            if before.get(n, zero) != after.get(n, zero)}


# --- streams --------------------------------------------------------------------------------


@st.composite
def streams(draw, low=0):
    """A small weighted digraph and 5 mixed batches: ``+ u v w``, ``- u v`` (often of an existing pair)."""
    n = draw(st.integers(2, 8))
    node = st.integers(0, n - 1)
    weight = st.integers(low, 5)
    edges = draw(st.lists(st.tuples(node, node, weight), max_size=20))
    wider = st.integers(0, n + 1)
    op = st.one_of(
        st.tuples(st.just("+"), wider, wider, weight),
        st.tuples(st.just("-"), wider, wider, st.just(0)),
        st.tuples(st.just("-existing"), st.integers(0, 10**6), st.just(0), st.just(0)),
        st.tuples(st.just("-existing"), st.integers(0, 10**6), st.just(0), st.just(0)),
    )
    batches = draw(st.lists(st.lists(op, max_size=7), min_size=5, max_size=5))
    return n, [(u, v, float(w)) for u, v, w in edges], batches


def resolve(batch, graph):
    """An UpdateBatch of ``batch`` (``-existing k`` picks the k-th current pair) and the graph after it."""
    pairs = sorted(graph)
    inserts, deletes = [], []
    for kind, a, b, w in batch:
        if kind == "+":
            inserts.append((a, b, float(w)))
        elif kind == "-":
            deletes.append((a, b))
        elif pairs:
            deletes.append(pairs[a % len(pairs)])
    after = dict(graph)
    for pair in deletes:  # deletions first, then insertions (which set their pair's weight)
        after.pop(pair, None)
    merged = {}
    for u, v, w in inserts:
        merged[(u, v)] = w if (u, v) not in merged else merged[(u, v)]
        merged[(u, v)] = min(merged[(u, v)], w) if semiring_of_batch[0] == "min_plus" else max(merged[(u, v)], w)
    after.update(merged)
    return UpdateBatch("b", inserts=tuple(inserts), deletes=tuple(deletes)), after


semiring_of_batch = ["min_plus"]  # how a batch merges parallel insertions of one pair (set per test)


def initial_graph(rows, semiring):
    graph = {}
    for u, v, w in rows:
        if semiring == "min_plus":
            graph[(u, v)] = min(w, graph.get((u, v), math.inf))
        else:
            graph[(u, v)] = max(w, graph.get((u, v), -math.inf))
    return graph


def undirected(graph):
    """Components: a pair and its reverse are one edge."""
    return {tuple(sorted(p)): 1.0 for p in graph if p[0] != p[1]}


# --- tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("semiring", ["min_plus", "max_min", "boolean"])
@SETTINGS
@given(case=streams())
def test_random_paths_with_deletions_match_oracles(semiring, case):
    semiring_of_batch[0] = semiring
    n, rows, batches = case
    m = MaintainedFixpoint.paths(rows, 0, semiring)
    graph = initial_graph(rows, semiring)
    oracle = ORACLES[semiring]
    assert values_of(m) == oracle(graph, 0)
    assert "trimming" in str(m.explain()) and str(m.explain()).endswith("state: in memory only")
    for batch in batches:
        update, graph = resolve(batch, graph)
        before = values_of(m)
        change = m.apply(update)
        expected = oracle(graph, 0)
        assert values_of(m) == expected
        assert changes_of(change, ZERO[semiring]) == expected_changes(before, expected, ZERO[semiring])
        assert not change.info["recomputed"] and change.info["trimmed"] >= 0
        assert m.edge_rows == len(graph)
    assert m.recompute().rows() == []  # nothing differs from a solve from scratch


@SETTINGS
@given(case=streams())
def test_random_components_with_deletions_match_networkx(case):
    semiring_of_batch[0] = "max_min"  # any: component edges carry no weight
    n, rows, batches = case
    nodes = set(range(n))
    m = MaintainedFixpoint.components(rows, nodes=sorted(nodes))
    graph = undirected(initial_graph(rows, "max_min"))
    assert values_of(m) == components(graph, nodes)
    for batch in batches:
        update, _ = resolve([(k, a, b, w) if k != "-existing" else (k, a, b, w) for k, a, b, w in batch], graph)
        # components: a deletion removes the pair both ways; an insertion adds it (loops add the node)
        for u, v in update.deletes:
            graph.pop(tuple(sorted((u, v))), None)
        for u, v, _w in update.inserts:
            nodes |= {u, v}
            if u != v:
                graph[tuple(sorted((u, v)))] = 1.0
        before = values_of(m)
        change = m.apply(update)
        expected = components(graph, nodes)
        assert values_of(m) == expected
        assert changes_of(change, None) == expected_changes(before, expected, None)
        assert not change.info["recomputed"]
        assert m.edge_rows == 2 * len(graph)


def test_ties_and_zero_weights_keep_a_forest():
    """Zero-weight cycles and equal-length alternatives: a deletion keeps the other derivation."""
    rows = [(0, 1, 1.0), (0, 2, 1.0), (1, 3, 0.0), (2, 3, 0.0), (3, 1, 0.0), (1, 2, 0.0), (2, 1, 0.0)]
    m = MaintainedFixpoint.paths(rows, 0)
    assert values_of(m) == {0: 0.0, 1: 1.0, 2: 1.0, 3: 1.0}
    parents = m.holder._parent
    assert len(subtrees(parents, np.flatnonzero(parents == -1))) == len(parents)  # every node under a root
    change = m.delete([(0, 1)])
    assert values_of(m) == {0: 0.0, 1: 1.0, 2: 1.0, 3: 1.0} and len(change) == 0
    change = m.delete([(0, 2)])
    assert values_of(m) == {0: 0.0} and change.info["deleted"] == 1 and change.info["trimmed"] == 3
    change = m.insert([(0, 3, 2.0)])
    assert values_of(m) == {0: 0.0, 1: 2.0, 2: 2.0, 3: 2.0}


def test_worse_weight_is_a_deletion_and_an_insertion():
    m = MaintainedFixpoint.paths([(0, 1, 1.0), (1, 2, 1.0), (0, 2, 5.0)], 0)
    change = m.insert([(0, 1, 10.0)])  # worse: 1 and 2 are trimmed, 2 comes back through 0 -> 2
    assert values_of(m) == {0: 0.0, 1: 10.0, 2: 5.0}
    assert changes_of(change, math.inf) == {(1, 1.0, 10.0), (2, 2.0, 5.0)}
    assert change.info["trimmed"] == 2 and not change.info["recomputed"] and change.info["inserted"] == 1
    assert m.edge_rows == 3
    wide = MaintainedFixpoint.paths([(0, 1, 9.0), (1, 2, 9.0)], 0, "max_min")
    wide.insert([(1, 2, 3.0)])  # narrower
    assert values_of(wide) == {0: math.inf, 1: 9.0, 2: 3.0}


def test_negative_weights_recompute_and_say_so():
    m = MaintainedFixpoint.paths([(0, 1, 4.0), (1, 2, -2.0), (0, 2, 3.0)], 0)
    assert "deletions: recompute" in str(m.explain())
    change = m.delete([(1, 2)])
    assert change.info["recomputed"] and values_of(m) == {0: 0.0, 1: 4.0, 2: 3.0}
    assert "trimming" in str(m.explain())  # no edge better than one is left: trimming again
    change = m.delete([(0, 2)])
    assert not change.info["recomputed"] and values_of(m) == {0: 0.0, 1: 4.0}


def test_recompute_flag_still_recomputes():
    m = MaintainedFixpoint.paths([(0, 1, 1.0), (1, 2, 1.0)], 0)
    change = m.delete([(0, 1)], recompute=True)
    assert change.info["recomputed"] and values_of(m) == {0: 0.0}


def test_deleting_absent_pairs_and_unknown_nodes_changes_nothing():
    m = MaintainedFixpoint.paths([(0, 1, 1.0)], 0)
    change = m.delete([(1, 0), (5, 6), (0, 7)])
    assert len(change) == 0 and change.info["deleted"] == 0 and m.version == 1 and m.edge_rows == 1


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(case=streams(low=1))
def test_durable_state_reopened_continues_with_deletions(tmp_path_factory, case):
    semiring_of_batch[0] = "min_plus"
    n, rows, batches = case
    folder = tmp_path_factory.mktemp("state") / "s"
    m = MaintainedFixpoint.paths(rows, 0, path=str(folder))
    graph = initial_graph(rows, "min_plus")
    for i, batch in enumerate(batches):
        update, graph = resolve(batch, graph)
        m.apply(update, version=i + 1)
        if i % 2 == 1:  # reopen: the answer as saved, the parents rebuilt, deletions still exact
            m.close()
            m = MaintainedFixpoint.open(folder)
            assert m.version == i + 1 and m.edge_rows == len(graph)
        assert values_of(m) == shortest(graph, 0)
    again = MaintainedFixpoint.open(folder)
    assert values_of(again) == shortest(graph, 0) and again.edge_rows == len(graph)


def test_durable_components_reopened_with_deletions(tmp_path):
    m = MaintainedFixpoint.components([(1, 2), (2, 3), (3, 4), (5, 6)], path=str(tmp_path / "c"))
    m.delete([(2, 3)])
    reopened = MaintainedFixpoint.open(tmp_path / "c")  # reading while m is the writer
    assert values_of(reopened) == {1: 1, 2: 1, 3: 3, 4: 3, 5: 5, 6: 5}
    with pytest.raises(StateLockedError):  # one writer at a time: m still holds the state
        reopened.apply(UpdateBatch("x", inserts=((4, 1, None),), deletes=((5, 6),)))
    m.close()
    reopened.apply(UpdateBatch("x", inserts=((4, 1, None),), deletes=((5, 6),)))
    assert values_of(reopened) == {1: 1, 2: 1, 3: 1, 4: 1, 5: 5, 6: 6}
    assert values_of(MaintainedFixpoint.open(tmp_path / "c")) == values_of(reopened)


@pytest.mark.parametrize("levels", ["older", "compact"])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(case=streams())
def test_deletions_across_index_levels_and_compactions(levels, case):
    """Removals of edges in the base, the overlay's older and recent levels, and after compactions."""
    import faq.incremental.index as index
    import faq.recursive.edges as edges

    semiring_of_batch[0] = "min_plus"
    n, rows, batches = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index, "RECENT_MAX_ROWS", 1)  # every batch moves the recent level into the older one
        patch.setattr(index, "RECENT_BATCHES", 1)
        if levels == "compact":  # and every batch compacts (overlay rows or dead rows past the limit)
            patch.setattr(index, "OVERLAY_MAX_ROWS", 1)
            patch.setattr(edges, "OVERLAY_MIN_ROWS", 0)
            patch.setattr(edges, "COMPACT_FRACTION", 0.0)
        m = MaintainedFixpoint.paths(rows, 0)
        graph = initial_graph(rows, "min_plus")
        for batch in batches:
            update, graph = resolve(batch, graph)
            m.apply(update)
            assert values_of(m) == shortest(graph, 0) and m.edge_rows == len(graph)
            current = m.holder.resident.relations["edge"].current()
            assert len(current) == len(graph)


@pytest.mark.parametrize("semiring", ["min_plus", "boolean"])
def test_a_failed_batch_of_deletions_in_base_and_overlay_leaves_the_edges_as_they_were(semiring):
    """Deletions mark dead rows in the base and the overlay in place; a batch that fails before its
    commit undoes every mark, and the same deletions then apply."""
    m = MaintainedFixpoint.paths([(0, 1, 1.0), (1, 2, 1.0), (0, 3, 4.0)], 0, semiring)
    m.insert([(3, 2, 1.0), (2, 4, 1.0)])  # these two live in the overlay
    before, edges_before = values_of(m), sorted(zip(*[c.tolist() for c in m.holder.resident.relations["edge"].current().keys]))

    def refuse(change):
        raise RuntimeError("the sink failed")

    with pytest.raises(RuntimeError, match="the sink failed"):
        m.apply(UpdateBatch("x", deletes=((2, 4), (1, 2))), before_commit=refuse)
    edge = m.holder.resident.relations["edge"]
    assert values_of(m) == before and m.version == 1
    assert sorted(zip(*[c.tolist() for c in edge.current().keys])) == edges_before and edge.dead == 0
    m.apply(UpdateBatch("y", deletes=((2, 4), (1, 2))))
    graph = {(0, 1): 1.0, (0, 3): 4.0, (3, 2): 1.0}
    expected = shortest(graph, 0) if semiring == "min_plus" else {n: True for n in (0, 1, 2, 3)}
    assert values_of(m) == expected and m.edge_rows == 3
    m.apply(UpdateBatch("z", inserts=((2, 4, 1.0),)))  # a dead overlay row comes back
    assert values_of(m)[4] == (6.0 if semiring == "min_plus" else True)


@pytest.mark.parametrize("rounds", [0, 1, 8])
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_subtrees_are_the_descendants_in_the_forest(rounds, data):
    """Marked rounds, the sorted-children walk, and the two together: networkx's descendants."""
    import faq.recursive.trimming as trimming

    n = data.draw(st.integers(1, 40))
    parents = np.array([data.draw(st.integers(-1, i - 1)) if i else -1 for i in range(n)], dtype=np.int64)
    roots = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=5)), dtype=np.int64)
    forest_graph = nx.DiGraph()
    forest_graph.add_nodes_from(range(n))
    forest_graph.add_edges_from((int(p), i) for i, p in enumerate(parents) if p >= 0)
    expected = sorted({int(r) for r in roots} | {d for r in roots for d in nx.descendants(forest_graph, int(r))})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trimming, "MARK_ROUNDS", rounds)
        assert subtrees(parents, roots).tolist() == expected
