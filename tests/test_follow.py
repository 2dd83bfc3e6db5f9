"""Changes as they land: ``faq track --follow`` over a watched directory, a tracked motif fed by a
Structured Streaming query, and both killed with SIGKILL mid-stream and restarted.

Every count is checked against the brute-force motif oracle (tests/helpers.py
``bindings``) on the graph after the batches applied; a restart must end with
every batch applied exactly once (the state's labels name each file or
micro-batch once).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from faq import track
from faq.graphs.track import MotifTracker
from tests.helpers import NODES, bindings, in_stream_order, run

pytestmark = pytest.mark.usefixtures("spark")

PATTERN = "(a)->(b); (a)->(c); (b)->(c)"
ROOT = Path(__file__).resolve().parents[1]


def batches(seed: int, count: int, size: int = 4):
    """An initial simple digraph on NODES and ``count`` batches of (src, dst, diff) changes that each
    flip edges (insert an absent one, delete a present one), with the graph after each batch."""
    rng = random.Random(seed)
    nodes = list(NODES)
    graph = {tuple(rng.sample(nodes, 2)) for _ in range(8)}
    initial = set(graph)
    out, graphs = [], []
    for _ in range(count):
        batch = {}
        while len(batch) < size:
            edge = tuple(rng.sample(nodes, 2))
            batch[edge] = -1 if edge in graph else 1
        for edge, diff in batch.items():
            (graph.discard if diff < 0 else graph.add)(edge)
        out.append([(*e, d) for e, d in batch.items()])
        graphs.append(set(graph))
    return initial, out, graphs


def write_graph(path: Path, edges) -> Path:
    path.write_text("# initial graph\n" + "".join(f"{a} {b}\n" for a, b in sorted(edges)))
    return path


def land(folder: Path, name: str, batch) -> None:
    """A batch file written under a hidden name and renamed into place (whole or absent)."""
    text = "".join(f"{'+' if d > 0 else '-'} {a} {b}\n" for a, b, d in batch)
    hidden = folder / f".{name}.part"
    hidden.write_text(text)
    hidden.replace(folder / name)


def test_follow_applies_files_as_they_land(capsys, tmp_path):
    initial, changes, graphs = batches(seed=3, count=5)
    graph = write_graph(tmp_path / "g.txt", initial)
    updates = tmp_path / "updates"
    updates.mkdir()
    land(updates, "001.txt", changes[0])  # present at the start

    def writer():
        for k in range(1, len(changes)):
            time.sleep(0.4)
            land(updates, f"{k + 1:03d}.txt", changes[k])

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        code, out, err = run(capsys, "track", PATTERN, graph, updates, "--json", "--count-only", "--follow",
                             "--poll", "0.05", "--idle-exit", "2")
    finally:
        thread.join()
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["count"] == len(bindings(initial, PATTERN))
    assert [x["batch"] for x in lines[1:]] == [f"{k:03d}.txt" for k in range(1, len(changes) + 1)]
    assert [x["count"] for x in lines[1:]] == [len(bindings(g, PATTERN)) for g in graphs]
    assert "following" in err
    assert "stopped following" in err and "4 batch file(s) applied" in err


def test_follow_refuses_a_file_landing_out_of_order(capsys, tmp_path):
    initial, changes, _ = batches(seed=4, count=2)
    graph = write_graph(tmp_path / "g.txt", initial)
    updates = tmp_path / "updates"
    updates.mkdir()
    land(updates, "002.txt", changes[0])

    def writer():
        time.sleep(0.5)
        land(updates, "001.txt", changes[1])  # sorts before the file applied already

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        code, out, err = run(capsys, "track", PATTERN, graph, updates, "--count-only", "--follow", "--poll", "0.05",
                             "--idle-exit", "3")
    finally:
        thread.join()
    assert code == 2 and "STATE_DIRECTORY" in err and "not the first" in err


def test_follow_options_are_checked_before_spark(capsys, tmp_path):
    graph = write_graph(tmp_path / "g.txt", {(1, 2)})
    (tmp_path / "u").mkdir()
    code, _, err = run(capsys, "track", PATTERN, graph, tmp_path / "u", "--idle-exit", "2")
    assert code == 2 and "--idle-exit" in err and "only applies with --follow" in err
    code, _, err = run(capsys, "track", PATTERN, graph, tmp_path / "u", "--follow", "--poll", "0")
    assert code == 2 and "--poll" in err


def test_follow_killed_with_sigkill_resumes_and_applies_every_file_once(capsys, tmp_path):
    initial, changes, graphs = batches(seed=5, count=8)
    graph = write_graph(tmp_path / "g.txt", initial)
    updates, state = tmp_path / "updates", tmp_path / "state"
    updates.mkdir()
    track(str(graph), PATTERN, state=str(state)).close()  # the state the child reopens (no initial count there)
    child = subprocess.Popen(
        [sys.executable, "-m", "faq", "track", PATTERN, str(graph), str(updates), "--state", str(state), "--json",
         "--count-only", "--follow", "--poll", "0.05", "--quiet"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert json.loads(child.stdout.readline())["resumed"] is True  # following now
        seen = []
        for k in range(3):
            land(updates, f"{k + 1:03d}.txt", changes[k])
            seen.append(json.loads(child.stdout.readline()))
        assert [x["count"] for x in seen] == [len(bindings(g, PATTERN)) for g in graphs[:3]]
        land(updates, "004.txt", changes[3])
        land(updates, "005.txt", changes[4])
        time.sleep(0.02)  # the child may be inside a batch: the kill lands wherever it is
        os.killpg(child.pid, signal.SIGKILL)  # the child and its JVM, as a crash would
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
        child.stderr.close()
    with MotifTracker.open(str(state)) as reopened:  # a committed version, exact
        version = reopened.version
        assert 3 <= version <= 5
        assert reopened.count == len(bindings(graphs[version - 1], PATTERN))
    for k in range(5, len(changes)):
        land(updates, f"{k + 1:03d}.txt", changes[k])
    code, out, err = run(capsys, "track", PATTERN, graph, updates, "--state", state, "--json", "--count-only",
                         "--follow", "--poll", "0.05", "--idle-exit", "0.5")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["skipped"] == version
    assert [x["batch"] for x in lines[1:]] == [f"{k:03d}.txt" for k in range(version + 1, len(changes) + 1)]
    assert lines[-1]["count"] == len(bindings(graphs[-1], PATTERN))
    with MotifTracker.open(str(state)) as final:
        assert final.labels == [f"{k:03d}.txt" for k in range(1, len(changes) + 1)]  # each file once


def test_a_tracked_motif_follows_a_structured_stream(spark, tmp_path):
    initial, changes, graphs = batches(seed=6, count=4)
    folder = tmp_path / "in"
    folder.mkdir()
    for k, batch in enumerate(changes):
        pd.DataFrame(batch, columns=["src", "dst", "diff"]).to_parquet(folder / f"part-{k:03d}.parquet")
    in_stream_order(folder / f"part-{k:03d}.parquet" for k in range(len(changes)))
    edges = spark.createDataFrame(sorted(initial), "src bigint, dst bigint")
    tracker = track(edges, PATTERN, state=str(tmp_path / "state"))
    stream = (spark.readStream.schema("src bigint, dst bigint, diff bigint").option("maxFilesPerTrigger", 1)
              .parquet(str(folder)))
    query = tracker.stream(stream, checkpoint=str(tmp_path / "checkpoint"), trigger={"availableNow": True})
    query.awaitTermination()
    assert query.exception() is None
    assert tracker.version == len(changes) and all(label.startswith("stream ") for label in tracker.labels)
    assert tracker.count == len(bindings(graphs[-1], PATTERN))
    tracker.close()
    assert os.path.isdir(tmp_path / "checkpoint")


def test_components_follow_files_as_they_land(capsys, tmp_path):
    """faq components --updates DIR --follow: deletions and insertions landing while it runs, exact after
    each against networkx."""
    import networkx as nx

    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n4 5\n")
    updates = tmp_path / "updates"
    updates.mkdir()
    plan = [("001.txt", "- 2 3\n+ 3 4\n"), ("002.txt", "+ 6 7\n- 4 5\n"), ("003.txt", "- 1 2\n+ 1 7\n")]
    land_text = lambda name, text: ((updates / f".{name}").write_text(text), (updates / f".{name}").replace(updates / name))
    land_text(*plan[0])

    def writer():
        for name, text in plan[1:]:
            time.sleep(0.4)
            land_text(name, text)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        code, out, err = run(capsys, "components", graph, "--updates", updates, "--state", tmp_path / "state",
                             "--json", "--follow", "--poll", "0.05", "--idle-exit", "2")
    finally:
        thread.join()
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["batch"] for x in lines[1:]] == ["001.txt", "002.txt", "003.txt"]
    g = nx.Graph([(1, 2), (2, 3), (4, 5)])
    for name, text in plan:  # the final partition, from networkx on the final graph
        for line in text.splitlines():
            sign, a, b = line.split()
            (g.add_edge if sign == "+" else g.remove_edge)(int(a), int(b))
    expected = {frozenset(c) for c in nx.connected_components(g)}
    from faq.recursive.maintained import MaintainedFixpoint

    with MaintainedFixpoint.open(str(tmp_path / "state")) as reopened:
        table = reopened.table().to_pydict()
        assert reopened.labels == ["001.txt", "002.txt", "003.txt"]
    got: dict[int, set] = {}
    for node, label in zip(table["node"], table["value"]):
        got.setdefault(label, set()).add(node)
    assert {frozenset(c) for c in got.values()} == expected
