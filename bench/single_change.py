"""Single-change and 1,000-change ``apply`` on maintained R-MAT 17 triangles: two faq checkouts, interleaved.

Issue 50, items 1 and 2 (a single change: median ≤ 0.1 ms, p99 ≤ 0.5 ms in-process; ≥ 200,000 changes
a second in 1,000-change batches).  Run from the repository
root, with a copy of the baseline's ``faq`` package (e.g. ``git archive HEAD faq | tar -x -C /tmp/base``)::

    .venv/bin/python -m bench.single_change --before /tmp/base --rounds 2

Each round runs the baseline, then this checkout, each in a fresh process (:func:`one`, the checkout's ``faq`` first on the path): the query,
stream and timing are :mod:`bench.profile_single_change`'s (:mod:`bench.bench_tail`'s ``QUERY``,
``Changes`` and ``timed_apply``; ``placement="driver"``, background compaction), ``--warmup`` untimed
single changes, then ``--timed`` timed ones, then ``--batches`` batches of ``--batch-size`` changes (half
deletions, Arrow tables as :mod:`bench.bench_tail` makes them; the first five untimed).  Each apply is timed
by the wall clock and by the thread's CPU clock (``time.thread_time``: on a shared machine the wall clock
also counts the time other processes held the core).  Interleaving puts both checkouts under the same
load (the load averages of every run are kept).  Each process checks that the count after the stream is
the same for both.  Results: ``bench/results/single_change.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, held_graph, log, maintained_session, seeded_parser


def one(args) -> dict:
    """Build, warm up and time single changes with the ``faq`` this process imports: the timings' summary."""
    import faq
    from bench.bench_tail import QUERY, Changes, arrow, compaction, timed_apply
    from faq.incremental.maintained import MaintainedQuery

    maintained_session()
    graph, held = held_graph(f"rmat{args.scale}")
    compaction(True)
    mq = MaintainedQuery(QUERY, {"edge": graph}, placement="driver")
    relation = mq.state.relations["edge"]
    changes = Changes(held["src"], held["dst"], args.seed)
    seconds: list[float] = []
    cpu: list[float] = []
    load = os.getloadavg()[0]
    for _ in range(args.warmup + args.timed):
        s, d, v = changes.batch(1)
        started = time.thread_time()
        timed_apply(mq, relation, [(int(s[0]), int(d[0]), int(v[0]))], seconds, [])
        cpu.append(time.thread_time() - started)
    a = np.asarray(seconds[args.warmup:]) * 1e3
    c = np.asarray(cpu[args.warmup:]) * 1e3
    batch_seconds: list[float] = []
    batch_cpu: list[float] = []
    for _ in range(args.batches + 5):
        table = arrow(*changes.batch(args.batch_size))
        started = time.thread_time()
        timed_apply(mq, relation, table, batch_seconds, [])
        batch_cpu.append(time.thread_time() - started)
    b, bc = np.asarray(batch_seconds[5:]), np.asarray(batch_cpu[5:])
    count = mq.scalar()
    mq.close()
    return {"faq": faq.__file__, "median_ms": round(float(np.median(a)), 4),
            "p99_ms": round(float(np.percentile(a, 99)), 4), "mean_ms": round(float(a.mean()), 4),
            "cpu_median_ms": round(float(np.median(c)), 4), "cpu_p99_ms": round(float(np.percentile(c, 99)), 4),
            "batch_median_ms": round(float(np.median(b)) * 1e3, 3),
            "batch_p99_ms": round(float(np.percentile(b, 99)) * 1e3, 3),
            "changes_per_second": round(args.batch_size / float(np.median(b))),
            "cpu_batch_median_ms": round(float(np.median(bc)) * 1e3, 3),
            "cpu_changes_per_second": round(args.batch_size / float(np.median(bc))),
            "count_after": int(count), "load_averages": [round(load, 2), round(os.getloadavg()[0], 2)]}


def run_in(path: str, args) -> dict:
    """:func:`one` in a fresh process importing ``faq`` from ``path`` first (the repository's bench after)."""
    code = ("import sys, json; sys.path[:0] = [%r, %r]; from bench.single_change import one, parse_args; "
            "print('RESULT ' + json.dumps(one(parse_args(%r))))"
            % (path, os.getcwd(), ["--seed", str(args.seed), "--warmup", str(args.warmup), "--timed", str(args.timed),
                                   "--scale", str(args.scale), "--batches", str(args.batches),
                                   "--batch-size", str(args.batch_size)]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"the run from {path} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                      out=str(RESULTS / "single_change.json"))
    p.add_argument("--before", help="a directory holding the baseline's faq package")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--scale", type=int, default=17)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--timed", type=int, default=400)
    p.add_argument("--batches", type=int, default=40, help="timed batches of --batch-size changes after the singles")
    p.add_argument("--batch-size", type=int, default=1000)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("single_change", argv)
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for k in range(args.rounds):
        for side, path in (("before", args.before), ("after", os.getcwd())):
            started = time.perf_counter()
            runs[side].append(run_in(path, args))
            log(f"round {k + 1} {side}: {runs[side][-1]} ({time.perf_counter() - started:.0f} s)")
    counts = {r["count_after"] for side in runs.values() for r in side}
    run["exact"] = len(counts) == 1
    run["runs"] = runs
    for side, rows in runs.items():  # the median over rounds of each run's figure
        for figure in ("median_ms", "p99_ms", "cpu_median_ms", "batch_median_ms", "batch_p99_ms",
                       "changes_per_second", "cpu_changes_per_second"):
            run[f"{side}_{figure}"] = round(float(np.median([r[figure] for r in rows])), 4)
    log(f"results in {run.save(Path(args.out))}")
    return 0 if run.record["exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
