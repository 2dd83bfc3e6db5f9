"""A Spark Declarative Pipeline with a ``faq`` sink (examples/pipelines/triangle_count), run by ``spark-pipelines``.

The example's definitions file runs unchanged; the spec is rewritten with this test's temporary
paths.  ``spark-pipelines --remote`` runs it against one Spark Connect server started here (one JVM
for the three runs, its catalog -- Spark's in-memory one -- kept between them): a first batch of
edge changes, a second (inserts and deletes), then ``--refresh`` of the views that read faq's
answer and its changes.  After each run faq's answer is checked against networkx's triangle count
of the graph so far; the views against the final count.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "pipelines" / "triangle_count"
CLI = Path(sys.executable).parent / "spark-pipelines"

pytestmark = pytest.mark.skipif(not CLI.exists() and shutil.which("spark-pipelines") is None,
                                reason="the spark-pipelines command (pyspark 4.1+) is not installed")

SERVER = textwrap.dedent("""
    import sys, time
    from pyspark.sql import SparkSession
    port, warehouse = sys.argv[1], sys.argv[2]
    (SparkSession.builder.master("local[2]").appName("faq-pipeline-test")
     .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
     .config("spark.connect.grpc.binding.address", "127.0.0.1")
     .config("spark.connect.grpc.binding.port", port)
     .config("spark.sql.warehouse.dir", warehouse)
     .config("spark.sql.shuffle.partitions", "2")
     .config("spark.ui.enabled", "false")
     .getOrCreate())
    print("ready", flush=True)
    while True:
        time.sleep(60)
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Spark Connect server (its own process, the pipelines' JVM) at ``sc://127.0.0.1:PORT``; stopped at the end."""
    root = tmp_path_factory.mktemp("server")
    port = _free_port()
    log = open(root / "server.log", "w")
    process = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(root / "warehouse")], stdout=log,
                               stderr=subprocess.STDOUT, env=_env(), cwd=str(root))
    try:
        deadline = time.monotonic() + 300
        while "ready" not in (root / "server.log").read_text() and time.monotonic() < deadline:
            assert process.poll() is None, (root / "server.log").read_text()[-3000:]
            time.sleep(0.5)
        assert "ready" in (root / "server.log").read_text(), "the Connect server did not start"
        yield {"url": f"sc://127.0.0.1:{port}", "warehouse": root / "warehouse"}
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _pipeline(tmp_path: Path) -> Path:
    """The example, its spec's paths made absolute in ``tmp_path``."""
    folder = tmp_path / "pipeline"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    spec = (folder / "spark-pipeline.yml").read_text()
    spec = re.sub(r"(?m)^storage: .*$", f"storage: {(tmp_path / 'storage').as_uri()}", spec)
    assert f"storage: {(tmp_path / 'storage').as_uri()}" in spec
    (folder / "spark-pipeline.yml").write_text(spec)
    (folder / "changes").mkdir()
    return folder


def _run(server: dict, folder: Path, *refresh: str) -> str:
    command = [str(CLI), "--remote", server["url"], "run", "--spec", str(folder / "spark-pipeline.yml")]
    if refresh:
        command += ["--refresh", ",".join(refresh)]
    run = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=str(folder), timeout=600)
    assert run.returncode == 0 and "Run is COMPLETED" in run.stdout + run.stderr, \
        (run.stdout[-4000:] + run.stderr[-6000:])
    return run.stdout + run.stderr


def _batches(seed: int = 51) -> list[list[tuple[int, int, int]]]:
    """Two batches of edge changes on 40 nodes: 220 inserts; then 40 of them deleted and 60 new ones."""
    rng = random.Random(seed)
    pairs = sorted({(min(a, b), max(a, b)) for a, b in ((rng.randrange(40), rng.randrange(40)) for _ in range(900))
                    if a != b})
    rng.shuffle(pairs)
    first, later = pairs[:220], pairs[220:280]
    deleted = rng.sample(first, 40)
    return [[(s, d, 1) for s, d in first], [(s, d, -1) for s, d in deleted] + [(s, d, 1) for s, d in later]]


def _triangles(batches) -> int:
    edges: set = set()
    for batch in batches:
        for s, d, diff in batch:
            (edges.add if diff > 0 else edges.discard)((s, d))
    return sum(nx.triangles(nx.Graph(sorted(edges))).values()) // 3


def _bindings(batches) -> set:
    edges: set = set()
    for batch in batches:
        for s, d, diff in batch:
            (edges.add if diff > 0 else edges.discard)((s, d))
    graph = nx.Graph(sorted(edges))
    found = set()
    for a, b, c in (t for t in nx.enumerate_all_cliques(graph) if len(t) == 3):
        found |= {(a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)}
    return found


def _write(folder: Path, name: str, batch) -> None:
    lines = [json.dumps({"src": s, "dst": d, "diff": diff}) for s, d, diff in batch]
    (folder / "changes" / name).write_text("\n".join(lines) + "\n")


def test_the_example_pipeline_keeps_the_triangle_count_across_runs(server, tmp_path):
    from faq.data_source import answer_table

    folder = _pipeline(tmp_path)
    state = folder / "state"
    batches = _batches()
    _write(folder, "0001.json", batches[0])
    out = _run(server, folder)
    assert "Flow triangle_count_flow has COMPLETED" in out
    first = answer_table(str(state)).to_pydict()
    assert first["triangles"] == [_triangles(batches[:1])] and first["count"] == [6 * first["triangles"][0]]

    _write(folder, "0002.json", batches[1])
    _run(server, folder)
    final = _triangles(batches)
    assert answer_table(str(state)).to_pydict() == {"count": [6 * final], "triangles": [final]}
    from faq.graphs import MotifTracker

    tracker = MotifTracker.open(str(state))
    assert tracker.version == 2  # one micro-batch a run, each applied once
    tracker.close()

    _run(server, folder, "triangles", "triangle_changes")  # the views, after the sink's flow
    view = pd.read_parquet(server["warehouse"] / "triangles")
    assert view.to_dict("list") == {"count": [6 * final], "triangles": [final]}
    changes = pd.read_parquet(server["warehouse"] / "triangle_changes")  # bindings (a, b, c) added or removed
    assert sorted(changes["version"].unique()) == [1, 2]
    net = changes.groupby(["a", "b", "c"])["diff"].sum()
    assert set(net[net != 0].unique()) == {1}  # the changes add up to the final bindings: 6 a triangle
    assert set(net[net > 0].index) == _bindings(batches)
