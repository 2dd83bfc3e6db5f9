"""A declarative pipeline rerun after 1,000 edge changes: faq's sink against a recomputing materialized view (issue 51).

Two Spark Declarative Pipelines, shipped in examples/pipelines/, read the same change files (JSON
lines ``src, dst, diff``) into a streaming table ``edge_changes``:

* ``faq`` -- examples/pipelines/triangle_count: a ``faq`` sink keeps the undirected triangle count
  (:func:`faq.pipelines.maintained_sink`, ``job="triangles"``) from an append flow; its views are
  refreshed after the run (``--refresh triangles,triangle_changes``: Spark orders no flow after a sink);
* ``materialized view`` -- examples/pipelines/triangle_count_recomputed: a ``@dp.materialized_view``
  counting the triangles of the edges present now in Spark SQL, recomputed on every run.

The first run loads the graph (every edge inserted); the second, timed as the rerun, applies
``--changes`` changes (half deletions of present edges, half insertions of absent ones).  Both
answers must be the same after each run.  Each pipeline runs with ``spark-pipelines --remote``
against a Spark Connect server of its own (one JVM for its runs, started first, not timed), so the
figures are the runs' own: the command's wall seconds, and each flow's seconds from the run's
events (printed to the second).

    python -m bench.bench_pipelines --graph wiki-Vote            # modest: SNAP wiki-Vote (tests/data)
    python -m bench.bench_pipelines --graph rmat16 --state-from-graph   # ~1M edges (tools/gen_rmat.py)

Loading a large graph through the sink is one ``apply`` of every edge into the empty graph, which lists
every binding (94M on R-MAT 16): ``--state-from-graph`` makes the state with ``faq.track`` first
(timed apart), as a user with the graph at hand would.
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
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.common import RESULTS, ROOT, Run, graph_path, load_average, log, print_summary, seeded_parser

EXAMPLES = ROOT / "examples" / "pipelines"
CLI = Path(sys.executable).parent / "spark-pipelines"
SERVER = """
import sys, time
from pyspark.sql import SparkSession
port, warehouse, memory = sys.argv[1], sys.argv[2], sys.argv[3]
(SparkSession.builder.master("local[2]").appName("bench-pipelines")
 .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
 .config("spark.connect.grpc.binding.address", "127.0.0.1").config("spark.connect.grpc.binding.port", port)
 .config("spark.sql.warehouse.dir", warehouse).config("spark.driver.memory", memory)
 .config("spark.ui.enabled", "false").getOrCreate())
print("ready", flush=True)
while True:
    time.sleep(60)
"""
EVENT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d): Flow '?([\w.`]+?)'? (?:is RUNNING|has COMPLETED)", re.M)
STEP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d): (Loading pipeline spec|Registering graph elements|Starting run|"
                  r"Run is COMPLETED)", re.M)


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, out=str(RESULTS / "pipelines.json"))
    p.add_argument("--graph", default="wiki-Vote",
                   help="rmatN, a graph of tests/data (bench.common.graph_path) or an edge list's path")
    p.add_argument("--changes", type=int, default=1000, help="edge changes before the timed rerun")
    p.add_argument("--memory", default="3g", help="each server's spark.driver.memory")
    p.add_argument("--timeout", type=int, default=3600, help="seconds a run may take")
    p.add_argument("--without-changes", action="store_true",
                   help="drop the example's table of faq's changes (and the state's change log): the answer only")
    p.add_argument("--state-from-graph", action="store_true",
                   help="make faq's state from the graph first (faq.track, timed apart), so the faq pipeline's load "
                        "run finds every edge present and its sink applies no change; without it the load is one "
                        "apply of every edge into the empty graph, listing every binding")
    return p.parse_args(argv)


def undirected_edges(name: str) -> list[tuple[int, int]]:
    """The graph's simple undirected edges (src < dst, no loops, no duplicates)."""
    import pandas as pd

    path = Path(name) if Path(name).is_file() else graph_path(name)
    frame = pd.read_csv(path, sep=r"\s+", comment="#", header=None, usecols=[0, 1], names=["a", "b"])
    frame = frame[frame.a != frame.b]
    pairs = set(zip(frame[["a", "b"]].min(axis=1).tolist(), frame[["a", "b"]].max(axis=1).tolist()))
    return sorted(pairs)


def changes_of(edges: list[tuple[int, int]], n: int, seed: int) -> list[tuple[int, int, int]]:
    """``n`` changes: ``n // 2`` present edges deleted, the rest absent pairs inserted (no pair twice)."""
    rng = random.Random(seed)
    present = set(edges)
    deleted = rng.sample(edges, n // 2)
    nodes = sorted({v for e in edges for v in e})
    inserted: set = set()
    while len(inserted) < n - n // 2:
        a, b = rng.sample(nodes, 2)
        pair = (min(a, b), max(a, b))
        if pair not in present:
            inserted.add(pair)
    return [(s, d, -1) for s, d in deleted] + [(s, d, 1) for s, d in sorted(inserted)]


def write_changes(folder: Path, name: str, rows) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / name, "w") as out:
        for s, d, diff in rows:
            out.write(json.dumps({"src": s, "dst": d, "diff": diff}) + "\n")


class Server:
    """A Spark Connect server in its own process (started and stopped here), for one pipeline's runs."""

    def __init__(self, root: Path, memory: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.warehouse = root / "warehouse"
        self.log = open(root / "server.log", "w")
        self.process = subprocess.Popen([sys.executable, "-c", SERVER, str(self.port), str(self.warehouse), memory],
                                        stdout=self.log, stderr=subprocess.STDOUT, env=env(), cwd=str(root))
        while "ready" not in (root / "server.log").read_text():
            if self.process.poll() is not None:
                raise SystemExit((root / "server.log").read_text()[-3000:])
            time.sleep(0.5)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def env() -> dict:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}


def pipeline(example: str, root: Path, changes: Path, state: Path, without_changes: bool = False) -> Path:
    """A copy of the example whose spec names this run's storage, change folder and state.

    ``without_changes`` cuts the definitions file's last table (``triangle_changes``) and its change log.
    """
    folder = root / example
    shutil.copytree(EXAMPLES / example, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if without_changes:
        definitions = folder / "transformations" / "triangles.py"
        text = definitions.read_text()
        text = text[:text.index("@dp.table(comment=\"faq's changes")].rstrip() + "\n"
        definitions.write_text(text.replace(" keep_changes=1000,", ""))
    spec = folder / "spark-pipeline.yml"
    text = re.sub(r"(?m)^storage: .*$", f"storage: {(root / 'storage').as_uri()}", spec.read_text())
    text = text.replace("triangles.changes: changes", f"triangles.changes: {changes}")
    spec.write_text(text.replace("triangles.state: state", f"triangles.state: {state}"))
    return spec


def run_pipeline(server: Server, spec: Path, timeout: int, *refresh: str) -> dict:
    """One ``spark-pipelines run``: its wall seconds and each flow's seconds (RUNNING to COMPLETED, to the second)."""
    command = [str(CLI), "--remote", f"sc://127.0.0.1:{server.port}", "run", "--spec", str(spec)]
    if refresh:
        command += ["--refresh", ",".join(refresh)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env(), cwd=str(spec.parent), timeout=timeout)
    wall = time.perf_counter() - start
    out = done.stdout + done.stderr
    if done.returncode != 0 or "Run is COMPLETED" not in out:
        raise SystemExit(f"{' '.join(command)} failed:\n{out[-6000:]}")
    began: dict = {}
    flows: dict = {}
    for stamp, flow, event in ((m.group(1), m.group(2).split(".")[-1], m.group(0)) for m in EVENT.finditer(out)):
        at = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
        if event.endswith("RUNNING"):
            began[flow] = at
        elif flow in began:
            flows[flow] = (at - began[flow]).total_seconds()
    steps = {m.group(2): datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") for m in STEP.finditer(out)}
    between = {"start_and_session": ("Loading pipeline spec", "Registering graph elements"),
               "registration": ("Registering graph elements", "Starting run"), "run": ("Starting run", "Run is COMPLETED")}
    return {"wall_seconds": round(wall, 2), "flow_seconds": flows,
            "step_seconds": {k: (steps[b] - steps[a]).total_seconds() for k, (a, b) in between.items()
                             if a in steps and b in steps}}


def faq_pipeline(root: Path, changes: Path, changed: list, args) -> dict:
    """The faq pipeline's load and rerun (each: the run, then its views refreshed); its answers."""
    from faq.data_source import answer_table

    state = root / "state"
    spec = pipeline("triangle_count", root, changes, state, args.without_changes)
    views = ("triangles",) if args.without_changes else ("triangles", "triangle_changes")
    runs: dict = {}
    if args.state_from_graph:
        runs["state_from_graph"] = state_from_graph(state, args.graph)
        log(f"faq state made from the graph: {runs['state_from_graph']}")
    server = Server(root, args.memory)
    try:
        for name, batch in (("load", 0), ("rerun", 1)):
            if batch:
                write_changes(changes, "0002.json", changed)
            loaded = run_pipeline(server, spec, args.timeout)
            refreshed = run_pipeline(server, spec, args.timeout, *views)
            answer = answer_table(str(state)).to_pydict()["triangles"][0]
            runs[name] = {"run": loaded, "refresh_views": refreshed, "triangles": answer,
                          "seconds": round(loaded["wall_seconds"] + refreshed["wall_seconds"], 2)}
            log(f"faq pipeline {name}: {runs[name]}")
        return runs
    finally:
        server.stop()


def state_from_graph(state: Path, graph: str) -> dict:
    """faq's state made from the graph's edges before the pipeline runs (``faq.track`` of the sink's pattern).

    The count is WCOJ's (one Spark session of this process); the sink then finds the state and keeps it.
    """
    import numpy as np
    import pyarrow as pa

    import faq
    from faq.data_sink import TRIANGLES

    edges = np.array(undirected_edges(graph), dtype=np.int64)
    started = time.perf_counter()
    tracker = faq.track(pa.table({"src": edges[:, 0], "dst": edges[:, 1]}), TRIANGLES, state=str(state))
    count = tracker.count
    tracker.close()
    return {"seconds": round(time.perf_counter() - started, 2), "bindings": count, "how": "faq.track(..., state=)"}


def recomputing_pipeline(root: Path, changes: Path, changed: list, args) -> dict:
    """The materialized view pipeline's load and rerun; its answers."""
    import pyarrow.parquet as pq

    spec = pipeline("triangle_count_recomputed", root, changes, root / "unused")
    server = Server(root, args.memory)
    try:
        runs = {}
        for name in ("load", "rerun"):
            if name == "rerun":
                write_changes(changes, "0002.json", changed)
            timed = run_pipeline(server, spec, args.timeout)
            answer = pq.read_table(server.warehouse / "triangles_recomputed").to_pydict()["triangles"][0]
            runs[name] = {"run": timed, "triangles": answer, "seconds": timed["wall_seconds"]}
            log(f"materialized view {name}: {runs[name]}")
        return runs
    finally:
        server.stop()


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_pipelines", argv)
    edges = undirected_edges(args.graph)
    changed = changes_of(edges, args.changes, args.seed)
    run["inputs"] = {"graph": args.graph, "undirected_edges": len(edges), "changes": args.changes,
                     "deleted": args.changes // 2, "inserted": args.changes - args.changes // 2, "seed": args.seed,
                     "change_files": "JSON lines src, dst, diff", "master": "local[2]", "server_memory": args.memory,
                     "faq_pipeline": "examples/pipelines/triangle_count" + (" without triangle_changes and its change "
                                                                             "log" if args.without_changes else ""),
                     "materialized_view_pipeline": "examples/pipelines/triangle_count_recomputed",
                     "faq_state": "made from the graph first (faq.track), the load run's inserts all present"
                     if args.state_from_graph else "made by the load run (every edge inserted into the empty graph)"}
    with tempfile.TemporaryDirectory(prefix="bench-pipelines-") as tmp:
        results = {}
        for name, runner in (("faq", faq_pipeline), ("materialized_view", recomputing_pipeline)):
            root = Path(tmp) / name
            changes = root / "changes"
            write_changes(changes, "0001.json", [(s, d, 1) for s, d in edges])
            run[f"load_average_before_{name}"] = load_average()
            results[name] = runner(root, changes, changed, args)
    summarize(run, results, args, len(edges))
    return 0


def summarize(run: Run, results: dict, args, edges: int) -> None:
    """The rerun's figures from both pipelines' runs (after checking their answers agree), saved and printed."""
    run["runs"] = results
    for step in ("load", "rerun"):
        if results["faq"][step]["triangles"] != results["materialized_view"][step]["triangles"]:
            raise SystemExit(f"different answers after the {step}: {results}")
    faq_rerun, mv_rerun = results["faq"]["rerun"], results["materialized_view"]["rerun"]
    sink_flow = faq_rerun["run"]["flow_seconds"].get("triangle_count_flow")
    view_flow = mv_rerun["run"]["flow_seconds"].get("triangles_recomputed")
    faq_run = faq_rerun["run"]["step_seconds"].get("run", 0) + faq_rerun["refresh_views"]["step_seconds"].get("run", 0)
    mv_run = mv_rerun["run"]["step_seconds"].get("run")
    run["rerun"] = {"faq_seconds": faq_rerun["seconds"], "materialized_view_seconds": mv_rerun["seconds"],
                    "speedup": round(mv_rerun["seconds"] / faq_rerun["seconds"], 2),
                    "faq_run_step_seconds": faq_run, "materialized_view_run_step_seconds": mv_run,
                    "run_step_speedup": round(mv_run / max(faq_run, 1.0), 2) if mv_run else None,
                    "faq_sink_flow_seconds": sink_flow, "materialized_view_flow_seconds": view_flow,
                    "flow_speedup": round(view_flow / max(sink_flow, 1.0), 2) if view_flow and sink_flow is not None
                    else None, "triangles": faq_rerun["triangles"]}
    r = run.record["rerun"]
    run["targets_met"] = met = {"rerun_50x_faster": r["speedup"] >= 50, "same_answer": True}
    out = run.save(Path(args.out))
    print_summary([("graph", f"{args.graph}: {edges:,} undirected edges, {args.changes} changes"),
                   ("faq rerun (run + views refresh)", f"{r['faq_seconds']} s (sink flow {sink_flow} s)"),
                   ("materialized view rerun", f"{r['materialized_view_seconds']} s (view flow {view_flow} s)"),
                   ("runs proper (Starting run .. COMPLETED)", f"faq {faq_run} s, view {mv_run} s"),
                   ("speedup (wall / runs proper / flows)",
                    f"{r['speedup']}x / {r['run_step_speedup']}x / {r['flow_speedup']}x"),
                   ("triangles", str(r["triangles"]))], met, out)


if __name__ == "__main__":
    sys.exit(main())
