"""The ``faq`` command cold (its own Spark) and warm (``--remote`` to a ``faq serve`` server).

Every command that starts its own Spark spends ~15 s before any work; with a
server started once by ``faq serve``, later commands connect to it instead.
This measures, in one run, wall-clock seconds of whole commands (a new
process each time, as a user types them):

* ``faq triangles tests/data/email-Eu-core.txt.gz`` (SNAP: 105,461 undirected
  triangles; every run's count is checked against it), and
* ``faq explain 'count() := edge(a,b), edge(a,c), edge(b,c)' --factor edge=<same file>``,

cold (median of ``--repeat`` runs) and warm (the first command after the
server started, then the median of ``--repeat`` more), plus the server's own
start.  Targets (issue #11): warm triangles ≤ 3 s, warm explain ≤ 2 s.

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_cli                # results in bench/results/bench_cli.json
    .venv/bin/python -m bench.bench_cli --repeat 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Optional

from bench.common import TEST_DATA, Run, log

GRAPH = TEST_DATA / "email-Eu-core.txt.gz"
SNAP_TRIANGLES = 105_461
TRIANGLES = ["triangles", str(GRAPH), "--json", "-q"]
EXPLAIN = ["explain", "count() := edge(a,b), edge(a,c), edge(b,c)", "--factor", f"edge={GRAPH}", "--json", "-q"]
TARGETS = {"triangles_warm_s": 3.0, "explain_warm_s": 2.0}


def faq(args: list[str], remote: Optional[str] = None) -> tuple[dict, float]:
    """Run ``python -m faq ARGS`` (with ``--remote``); its JSON output and wall seconds."""
    command = [sys.executable, "-m", "faq", *args] + (["--remote", remote] if remote else [])
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout), seconds


def check(kind: str, output: dict) -> None:
    if kind == "triangles" and output["count"] != SNAP_TRIANGLES:
        raise RuntimeError(f"triangles counted {output['count']}, SNAP publishes {SNAP_TRIANGLES}")
    if kind == "explain" and str(output["faqw"]) != "3/2":
        raise RuntimeError(f"the triangle's plan has faqw {output['faqw']}, not 3/2")


def timings(kind: str, args: list[str], repeat: int, remote: Optional[str]) -> list[float]:
    out = []
    for _ in range(repeat):
        output, seconds = faq(args, remote)
        check(kind, output)
        out.append(round(seconds, 3))
        log(f"{kind} {'warm' if remote else 'cold'}: {seconds:.2f} s")
    return out


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--port", type=int, default=15077)
    args = parser.parse_args(argv)
    run = Run("bench_cli", argv)
    commands = {"triangles": TRIANGLES, "explain": EXPLAIN}
    cold = {kind: timings(kind, cmd, args.repeat, None) for kind, cmd in commands.items()}
    t0 = time.perf_counter()
    started = subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(args.port), "--json"],
                             capture_output=True, text=True)
    serve_seconds = time.perf_counter() - t0
    if started.returncode != 0:
        raise RuntimeError(f"faq serve failed: {started.stderr.strip()}")
    remote = json.loads(started.stdout)["url"]
    log(f"server at {remote} in {serve_seconds:.1f} s")
    try:
        first = {kind: timings(kind, cmd, 1, remote)[0] for kind, cmd in commands.items()}
        warm = {kind: timings(kind, cmd, args.repeat, remote) for kind, cmd in commands.items()}
    finally:
        subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(args.port), "--stop"],
                       capture_output=True, text=True)
    summary = {}
    for kind in commands:
        summary[f"{kind}_cold_s"] = median(cold[kind])
        summary[f"{kind}_warm_first_s"] = first[kind]
        summary[f"{kind}_warm_s"] = median(warm[kind])
        summary[f"{kind}_speedup"] = round(median(cold[kind]) / median(warm[kind]), 2)
    run["graph"] = str(GRAPH.relative_to(TEST_DATA.parent.parent))
    run["serve_start_s"] = round(serve_seconds, 3)
    run["cold_s"] = cold
    run["warm_first_s"] = first
    run["warm_s"] = warm
    run["summary"] = summary
    run["targets"] = {k: {"target": v, "measured": summary[k], "met": summary[k] <= v} for k, v in TARGETS.items()}
    path = run.save()
    print(json.dumps(summary, indent=2))
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
