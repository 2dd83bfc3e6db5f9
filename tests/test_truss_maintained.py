"""The maintained truss against recomputation after every batch (hypothesis: random graphs, random batches of
insertions and deletions with repeats, reversed pairs, self-loops and seq), its change stream integrated
back, the recompute fallback, a SNAP graph against networkx, durability and bad batches."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq
from faq.errors import BatchAlreadyAppliedError, InvalidDeltaError, MissingColumnError, StateDirectoryError
from faq.graphs.maintained_truss import MaintainedTruss
from faq.graphs.truss import truss_decomposition

DATA = Path(__file__).parent / "data"


def rows_of(table) -> dict:
    return {(s, d): k for s, d, k in zip(*(table.column(c).to_pylist() for c in ("src", "dst", "trussness")))}


def integrate(before: dict, change) -> dict:
    """The (src, dst, trussness) rows after adding the change's rows with their signs."""
    after = dict(before)
    for src, dst, k, _version, diff in change.rows():
        if diff < 0:
            assert after.pop((src, dst)) == k, (src, dst)
    for src, dst, k, _version, diff in change.rows():
        if diff > 0:
            assert (src, dst) not in after, (src, dst)
            after[(src, dst)] = k
    return after


def simple(edges) -> set:
    return {(min(u, v), max(u, v)) for u, v in edges if u != v}


nodes = st.integers(0, 12)
batches = st.lists(st.lists(st.tuples(nodes, nodes, st.sampled_from([1, -1])), max_size=14), min_size=1,
                   max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(nodes, nodes), max_size=40), batches, st.one_of(st.just(10**12), st.integers(0, 80)))
def test_every_batch_equals_recomputation(edges, history, work_limit):
    """A small work limit stops batches half way (in deletions or insertions): undone, then recomputed.
    (A work limit turns the default time limit off: a slow machine cannot make a batch fall back here.)"""
    maintained = MaintainedTruss(edges, work_limit=work_limit)
    current = simple(edges)
    rows = rows_of(maintained.table())
    for number, batch in enumerate(history, start=1):
        with_seq = [(s, d, diff, i) for i, (s, d, diff) in enumerate(batch)]  # the last operation wins
        change = maintained.apply(with_seq)
        for s, d, diff in batch:
            if s != d:
                (current.add if diff > 0 else current.discard)((min(s, d), max(s, d)))
        expected = rows_of(truss_decomposition(sorted(current)).table()) if current else {}
        assert rows_of(maintained.table()) == expected, number
        rows = integrate(rows, change)
        assert rows == expected, number
        assert change.version == maintained.version == number
        if work_limit == 10**12:
            assert not change.info["recomputed"]


def test_a_snap_graph_under_batches_equals_networkx():
    path = DATA / "ca-GrQc.txt"
    maintained = faq.truss(str(path), maintained=True, work_limit=10**12)  # incremental, however long
    raw = pd.read_csv(path, sep=r"\s+", comment="#", header=None).to_numpy()
    current = simple((int(u), int(v)) for u, v in raw)
    rng = np.random.default_rng(7)
    held = sorted(current)
    for _ in range(3):
        present = sorted(current)
        deletes = [present[i] for i in rng.choice(len(present), 150, replace=False)]
        inserts = [held[i] for i in rng.choice(len(held), 150, replace=False) if held[i] not in current]
        change = maintained.apply([(s, d, -1) for s, d in deletes] + [(s, d, 1) for s, d in inserts])
        assert not change.info["recomputed"]
        current = (current - set(deletes)) | set(inserts)
    graph = nx.Graph(sorted(current))
    result = maintained.table()
    for k in (3, 5, maintained.max_k):
        assert simple(zip(*(maintained.table(k).column(c).to_pylist() for c in ("src", "dst")))) == \
            {(min(u, v), max(u, v)) for u, v in nx.k_truss(graph, k).edges()}, k
    assert result.num_rows == len(current)


def test_without_seq_an_edge_both_inserted_and_deleted_is_refused_and_nothing_changes():
    maintained = MaintainedTruss([(1, 2), (2, 3), (1, 3)])
    with pytest.raises(InvalidDeltaError, match="both inserted and deleted"):
        maintained.apply([(1, 4, 1), (4, 1, -1)])
    assert maintained.version == 0 and maintained.counts == {3: 3}


@pytest.mark.parametrize("batch, error, match", [
    (pd.DataFrame({"src": [1], "dst": [4], "diff": [2]}), InvalidDeltaError, "diff must be"),
    (pd.DataFrame({"src": [1], "dst": [None], "diff": [1]}), InvalidDeltaError, "null 'dst'"),
    (pd.DataFrame({"source": [1], "dst": [4]}), MissingColumnError, "src"),
    ({"edges": [(1, 4, 1)]}, InvalidDeltaError, "only 'edge'"),
])
def test_bad_batches_are_refused_by_name(batch, error, match):
    maintained = MaintainedTruss([(1, 2), (2, 3), (1, 3)])
    with pytest.raises(error, match=match):
        maintained.apply(batch)
    assert maintained.version == 0


def test_a_failed_commit_takes_the_batch_back():
    maintained = MaintainedTruss([(1, 2), (2, 3), (1, 3), (3, 4)])
    before = rows_of(maintained.table())

    def sink(change):
        raise OSError("disk full")

    with pytest.raises(OSError):
        maintained.apply([(1, 4, 1), (2, 4, 1), (1, 2, -1)], before_commit=sink)
    assert rows_of(maintained.table()) == before and maintained.version == 0
    maintained.apply([(1, 4, 1), (2, 4, 1)])
    assert maintained.counts == {4: 6}


def test_durable_state_reopens_at_its_version(tmp_path):
    state = str(tmp_path / "state")
    maintained = faq.truss([(1, 2), (2, 3), (1, 3)], maintained=True, state=state, k=3)
    maintained.apply(pd.DataFrame({"src": [3, 4], "dst": [4, 1]}), label="001.txt")  # inserts, no diff column
    maintained.apply([(2, 4, 1), (1, 2, -1)], label="002.txt")
    expected = rows_of(maintained.table())
    with pytest.raises(BatchAlreadyAppliedError):
        maintained.apply([(5, 6, 1)], version=2)
    maintained.close()
    reopened = MaintainedTruss.open(state)
    assert rows_of(reopened.table()) == expected
    assert reopened.version == 2 and reopened.labels == ["001.txt", "002.txt"] and reopened.k == 3
    reopened.apply([(1, 2, 1)])
    reopened.close()
    assert MaintainedTruss.open(state).counts == {4: 6}
    with pytest.raises(StateDirectoryError):
        faq.truss([(1, 2)], maintained=True, state=state)


def test_after_a_fallback_batches_as_large_are_recomputed_at_once_and_the_repair_is_retried():
    from faq.graphs.maintained_truss import RETRY_EVERY

    edges = [(a, b) for a in range(8) for b in range(a + 1, 8)]  # K8: every deletion cascades
    maintained = MaintainedTruss(edges, work_limit=1)
    first = maintained.apply([(0, 1, -1), (2, 3, -1)])
    assert first.info["repair_tried"] and first.info["recomputed"]
    tried = [maintained.apply([(a, b, -diff), (c, d, -diff)]).info["repair_tried"]
             for diff, (a, b, c, d) in zip([-1, 1] * RETRY_EVERY, [(0, 1, 2, 3)] * (2 * RETRY_EVERY))]
    assert tried[:RETRY_EVERY] == [False] * RETRY_EVERY and tried[RETRY_EVERY]  # the ninth tries again
    small = maintained.apply([(4, 5, -1)])  # smaller than the batch that fell back: repaired (or tried)
    assert small.info["repair_tried"]
    assert rows_of(maintained.table()) == rows_of(truss_decomposition(sorted(set(edges) - {(0, 1), (2, 3), (4, 5)})).table())
    assert "recomputed at once" in str(maintained.explain())


def test_a_batch_whose_repair_is_estimated_dear_is_recomputed_without_trying():
    """Half of 1,000 changes deleting ca-GrQc's edges and half bringing held-out ones back (the benchmark's
    churn, whose repair reads ~7x a decomposition's work) is recomputed at once; a batch of two
    uniformly drawn pairs is repaired; both equal a decomposition of the edges they leave."""
    from faq.graphs.truss import undirected_edges

    src, dst = undirected_edges(str(DATA / "ca-GrQc.txt"))
    rng = np.random.default_rng(3)
    held = rng.random(len(src)) < 0.10
    present = sorted(zip(src[~held].tolist(), dst[~held].tolist()))
    maintained = MaintainedTruss(list(present))
    deletes = [present[i] for i in rng.choice(len(present), 500, replace=False)]
    inserts = list(zip(src[held].tolist(), dst[held].tolist()))[:500]
    churn = maintained.apply([(a, b, -1) for a, b in deletes] + [(a, b, 1) for a, b in inserts])
    assert not churn.info["repair_tried"] and churn.info["recomputed"], churn.info
    edges = (set(present) - set(deletes)) | set(inserts)
    assert rows_of(maintained.table()) == rows_of(truss_decomposition(sorted(edges)).table())
    nodes = np.unique(np.concatenate([src, dst]))
    pairs = [(int(a), int(b)) for a, b in rng.choice(nodes, (40, 2)) if a != b and (min(a, b), max(a, b)) not in edges]
    small = maintained.apply([(a, b, 1) for a, b in pairs[:2]])
    assert small.info["repair_tried"] and not small.info["recomputed"], small.info
    edges |= {(min(a, b), max(a, b)) for a, b in pairs[:2]}
    assert rows_of(maintained.table()) == rows_of(truss_decomposition(sorted(edges)).table())


def test_the_command_keeps_the_trussness_through_batch_files_and_resumes_from_its_state(tmp_path):
    import json
    import subprocess
    import sys

    graph = tmp_path / "g.txt"
    graph.write_text("# a triangle and a tail\n1 2\n2 3\n1 3\n3 4\n")
    updates = tmp_path / "updates"
    updates.mkdir()
    (updates / "001.txt").write_text("+ 1 4\n+ 2 4\n")        # a 4-clique
    (updates / "002.txt").write_text("- 1 2\n# a comment\n")
    state, out = tmp_path / "state", tmp_path / "t.parquet"

    def faq(*argv):
        return subprocess.run([sys.executable, "-m", "faq", "truss", *argv], capture_output=True, text=True,
                              timeout=120)

    done = faq(str(graph), "--updates", str(updates), "--state", str(state), "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["batch"] for line in lines[:3]] == [None, "001.txt", "002.txt"]
    assert lines[1]["changed"] == 4 and lines[1]["max_k"] == 4 and lines[2]["max_k"] == 3
    assert lines[-1]["edges_per_trussness"] == {"3": 5} and lines[-1]["version"] == 2
    assert pd.read_parquet(out)["trussness"].tolist() == [3] * 5

    (updates / "003.txt").write_text("+ 1 2\n")
    again = faq(str(graph), "--updates", str(updates), "--state", str(state))
    assert again.returncode == 0, again.stderr
    assert "resumed at version 2" in again.stdout and "batch 003.txt: +1 -0 edges, 5 edges changed" in again.stdout
    assert MaintainedTruss.open(str(state)).counts == {4: 6}

    bad = faq(str(graph), "--follow")
    assert bad.returncode == 2 and "--updates" in bad.stderr
    (updates / "004.txt").write_text("+ 1 x\n")
    bad = faq(str(graph), "--updates", str(updates))
    assert bad.returncode == 2 and "004.txt" in bad.stderr


def test_changes_of_maintained_objects_are_one_change_stream_the_calculus_takes():
    from collections import Counter

    from faq.incremental.calculus import differentiate, integrate
    from faq.incremental.change import change_stream

    maintained = MaintainedTruss([(1, 2), (2, 3), (1, 3), (3, 4)])
    start = Counter(rows_of(maintained.table()).items())
    changes = [maintained.apply(batch) for batch in ([(1, 4, 1), (2, 4, 1)], [(1, 2, -1)], [(5, 1, 1), (5, 4, 1)])]
    stream = change_stream(changes)
    assert stream.column_names == ["src", "dst", "trussness", "version", "diff"]
    assert integrate(differentiate(stream, time="version"), time="version").equals(stream)
    total = Counter(start)  # integrating the stream over all versions gives the answer now
    for src, dst, k, _, diff in zip(*(stream.column(c).to_pylist() for c in stream.column_names)):
        total[((src, dst), k)] += diff
    assert +total == Counter(rows_of(maintained.table()).items())

    asof = faq.asof_join(pd.DataFrame({"time": [1, 4], "qty": [5, 7]}), pd.DataFrame({"time": [0], "px": [1.0]}),
                         on="time", maintained=True)
    late = asof.apply(right=pd.DataFrame({"time": [2], "px": [2.0]}))
    assert change_stream(late).to_pydict() == {"time": [4, 4], "qty": [7, 7], "px": [1.0, 2.0], "version": [1, 1],
                                               "diff": [-1, 1]}


def test_a_batch_of_more_deletions_than_a_chunk_retracts_each_edge_at_its_level_before_the_batch():
    from faq.graphs.truss_index import DELETE_CHUNK

    edges = [(a, b) for a in range(14) for b in range(a + 1, 14)]  # K14: 91 edges at trussness 14
    maintained = MaintainedTruss(edges, work_limit=10**12)
    before = rows_of(maintained.table())
    gone = edges[: DELETE_CHUNK + 10]  # the first chunk lowers the levels of edges the second deletes
    change = maintained.apply([(a, b, -1) for a, b in gone] + [(20, 21, 1)])
    assert not change.info["recomputed"]
    assert rows_of(maintained.table()) == rows_of(truss_decomposition(sorted(set(edges) - set(gone)) + [(20, 21)]).table())
    assert integrate(before, change) == rows_of(maintained.table())
