"""Maintained fixpoints as Structured Streaming targets (faq.recursive.maintained + faq.incremental.streaming).

Change files (``src, dst, weight, diff``: +1 inserts or sets a pair's weight,
-1 deletes it) land in a directory; a file stream (one file a micro-batch)
feeds a durable maintained fixpoint.  Checked against networkx on the edges
the files leave: shortest distances from the source, connected components
(min node id per component, every node seen staying a node).  A crash after
the state committed a micro-batch and a restart from the same checkpoint
with the reopened state applies every micro-batch once (the re-delivered one
is reported as skipped), and the sink holds one file per version.
"""

from __future__ import annotations

import os
import random
import warnings
from pathlib import Path

import networkx as nx
import pandas as pd
import pyarrow as pa
import pytest

from faq.errors import BatchAlreadyAppliedError, InvalidDeltaError
from faq.recursive import MaintainedFixpoint
from tests.helpers import crash_after, csv_stream, stream_until_crash, write_change_files

pytestmark = pytest.mark.usefixtures("spark")

SCHEMA = "src bigint, dst bigint, weight double, diff int"


def edge_batches(seed: int, files: int, rows: int, nodes: int = 16, initial: int = 30, weighted: bool = True):
    """Initial edges {pair: weight} and ``files`` batches of (src, dst, weight, diff); a pair at most once a batch."""
    rng = random.Random(seed)
    current: dict[tuple[int, int], float] = {}
    while len(current) < initial:
        a, b = rng.sample(range(nodes), 2)
        current[(a, b)] = float(rng.randint(1, 9)) if weighted else 1.0
    start = dict(current)
    batches = []
    for _ in range(files):
        batch, touched = [], set()
        while len(batch) < rows:
            if current and rng.random() < 0.4:
                pair = rng.choice(sorted(current))
                if pair in touched:
                    continue
                del current[pair]
                batch.append((*pair, None, -1))
            else:
                pair = tuple(rng.sample(range(nodes + 4), 2))  # new nodes arrive too
                if pair in touched:
                    continue
                weight = float(rng.randint(1, 9)) if weighted else 1.0
                current[pair] = weight  # an insert of a present pair sets its weight
                batch.append((*pair, weight, 1))
            touched.add(batch[-1][:2])
        batches.append(batch)
    return start, batches, current


def write_files(directory: Path, batches) -> None:
    write_change_files(directory, "src,dst,weight,diff",
                       ("".join(f"{a},{b},{'' if w is None else w},{d}\n" for a, b, w, d in batch) for batch in batches))


def file_stream(spark, directory: Path):
    return csv_stream(spark, directory, SCHEMA)


def answer(m: MaintainedFixpoint) -> dict[int, float]:
    table = m.table().to_pydict()
    return dict(zip(table["node"], table["value"]))


def distances(edges: dict, source: int) -> dict[int, float]:
    graph = nx.DiGraph()
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in edges.items())
    if source not in graph:
        return {source: 0.0}
    return {n: float(d) for n, d in nx.single_source_dijkstra_path_length(graph, source).items()}


def components(edges: dict, nodes: set) -> dict[int, int]:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return {n: min(part) for part in nx.connected_components(graph) for n in part}


def test_a_stream_of_change_files_keeps_shortest_paths_exact(spark, tmp_path):
    start, batches, final = edge_batches(seed=4, files=4, rows=8)
    write_files(tmp_path / "in", batches)
    m = MaintainedFixpoint.paths([(a, b, w) for (a, b), w in start.items()], source=0, semiring="min_plus",
                                 path=str(tmp_path / "state"))
    before = answer(m)
    assert before == distances(start, 0)
    query = m.stream(file_stream(spark, tmp_path / "in"), checkpoint=str(tmp_path / "checkpoint"),
                     sink=str(tmp_path / "sink"), trigger={"availableNow": True})
    query.awaitTermination()
    assert query.exception() is None
    assert answer(m) == distances(final, 0)  # deletions trimmed and re-derived, insertions propagated
    assert m.version == len(batches)
    assert [label.rsplit(" ", 1)[1] for label in m.labels] == ["0", "1", "2", "3"]

    # the sink: one file per version, rows (node, old, version, diff = the new value); the last diff of a
    # node is its value now (inf: no longer reached)
    assert sorted(os.listdir(tmp_path / "sink")) == [f"version-{v:010d}.parquet" for v in range(1, 5)]
    sunk = spark.read.parquet(str(tmp_path / "sink")).toPandas().sort_values("version")
    assert set(sunk.columns) == {"node", "old", "version", "diff"}
    last = sunk.groupby("node")["diff"].last().to_dict()
    now = distances(final, 0)
    assert last == {n: now.get(n, float("inf")) for n in last}
    m.close()

    reopened = MaintainedFixpoint.open(str(tmp_path / "state"))  # the durable state holds the same answer
    assert answer(reopened) == distances(final, 0) and reopened.labels == m.labels
    reopened.close()


def test_a_restart_applies_no_micro_batch_twice_for_components(spark, tmp_path):
    start, batches, final = edge_batches(seed=7, files=4, rows=6, nodes=12, initial=10, weighted=False)
    write_files(tmp_path / "in", batches)
    state, checkpoint, sink = (str(tmp_path / n) for n in ("state", "checkpoint", "sink"))
    nodes = {n for pair in start for n in pair} | {n for b in batches for row in b if row[3] > 0 for n in row[:2]}

    m = MaintainedFixpoint.components(list(start), path=state, progress=crash_after(2))
    stream_until_crash(m, file_stream(spark, tmp_path / "in"), checkpoint, sink)

    events = []
    reopened = MaintainedFixpoint.open(state, progress=events.append)
    assert reopened.version == 2  # committed, though Spark did not commit micro-batch 1
    assert len(os.listdir(sink)) == 2  # each written before its commit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no sink file is missing
        query = reopened.stream(file_stream(spark, tmp_path / "in"), checkpoint=checkpoint, sink=sink,
                                trigger={"availableNow": True})
        query.awaitTermination()
    assert query.exception() is None
    skipped = [e for e in events if getattr(e, "kind", None) == "skip"]
    assert len(skipped) == 1 and skipped[0].version == 2 and skipped[0].label.endswith(" batch 1")
    assert reopened.version == len(batches)  # no version twice
    assert [label.rsplit(" ", 1)[1] for label in reopened.labels] == ["0", "1", "2", "3"]
    assert answer(reopened) == components(final, nodes)
    assert len(os.listdir(sink)) == len(batches)
    reopened.close()
    assert answer(MaintainedFixpoint.open(state)) == components(final, nodes)


def test_change_rows_apply_as_one_version_with_the_version_check(tmp_path):
    """No Spark: apply({"edge": rows}) takes inserts and deletes in one version; seq orders a pair's operations."""
    m = MaintainedFixpoint.paths([(1, 2, 5.0), (2, 3, 1.0)], source=1, path=str(tmp_path / "state"))
    seen = []
    rows = pa.table({"src": [1, 1, 1, 3], "dst": [2, 3, 3, 4], "weight": [None, 9.0, 2.0, 1.0],
                     "diff": [-1, 1, 1, 1], "seq": [0, 1, 2, 3]})
    change = m.apply({"edge": rows}, label="mixed", before_commit=seen.append)
    assert sorted(answer(m).items()) == [(1, 0.0), (3, 2.0), (4, 3.0)]  # 1->2 gone; 1->3 set to 2 (its last)
    assert seen == [change] and change.version == 1 and m.labels == ["mixed"]
    rows_out = sorted(change.rows())  # (node, old, version, diff): 2 no longer reached, 4 new (old NaN)
    assert [(n, v, d) for n, _, v, d in rows_out] == [(2, 1, float("inf")), (3, 1, 2.0), (4, 1, 3.0)]
    assert [o for _, o, _, _ in rows_out][:2] == [5.0, 6.0] and rows_out[2][1] != rows_out[2][1]
    with pytest.raises(BatchAlreadyAppliedError):
        m.apply(pd.DataFrame({"src": [4], "dst": [5], "diff": [1]}), version=1)

    def refuse(change):
        raise RuntimeError("the sink failed")

    with pytest.raises(RuntimeError, match="the sink failed"):  # a failed sink: nothing committed
        m.apply(pd.DataFrame({"src": [4], "dst": [5], "diff": [1]}), before_commit=refuse)
    assert m.version == 1 and m.value(5) is None
    assert MaintainedFixpoint.open(str(tmp_path / "state")).version == 1
    with pytest.raises(InvalidDeltaError, match="changes only 'edge'"):
        m.apply({"node": rows})
    assert m.delta_names == ["edge"] and m.delta_columns("edge")[1] == ["src", "dst"]
    m.close()


def test_change_rows_on_the_executors_placement(spark):
    """Above the budget the answer lives on Spark: change rows with inserts and deletes are one update batch."""
    edges = [(1, 2, 5.0), (2, 3, 1.0), (1, 4, 1.0)]
    m = MaintainedFixpoint.paths(edges, source=1, placement="executors")
    assert m.placement == "executors"
    seen = []
    rows = pd.DataFrame({"src": [1, 4, 1], "dst": [2, 3, 5], "weight": [None, 2.0, 7.0], "diff": [-1, 1, 1]})
    change = m.apply(rows, label="mixed", before_commit=seen.append)
    final = {(2, 3): 1.0, (1, 4): 1.0, (4, 3): 2.0, (1, 5): 7.0}
    assert answer(m) == distances(final, 1)  # 2 no longer reached, 3 through 4
    assert seen == [change] and m.version == 1 and m.labels == ["mixed"]
    m.close()
