"""What a fresh session's first Python tasks cost before any of faq's work: Spark starting its Python workers.

Run from the repository root (one fresh session per ``--rounds``, each its own process)::

    .venv/bin/python -m bench.worker_start
    .venv/bin/python -m bench.worker_start --master 'local-cluster[2,1,2048]' --rounds 2 \\
        --out bench/results/worker_start_cluster.json

In each fresh session, one after the other: a job of JVM tasks only (``sum(id)`` over a two-partition
range: the executors' first tasks), the same again, a job of a plain Python UDF (Spark starts each
executor's Python daemon and forks its workers: no faq code runs in them), the same again, then faq's
workers' probe (:func:`faq.workers.probe_workers`) twice.  The first Python job's time less the second's is
what any Python task pays once per session -- what :mod:`bench.executor_breakdown`'s fresh rows include
and the driver placement does not.  Results: JSON with the command, the commit, the load average and each
round's seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

from bench.common import RESULTS, Run, log

STEPS = ("session", "jvm_job", "jvm_job_again", "python_udf", "python_udf_again", "faq_probe", "faq_probe_again")


def one_session(master: str) -> dict[str, float]:
    """The seconds of each of :data:`STEPS` in this process's fresh session."""
    started = time.perf_counter()
    from pyspark.sql import functions as F

    from faq.spark import get_session
    from faq.workers import probe_workers

    spark = get_session(master=master)
    out = {"session": time.perf_counter() - started}

    def timed(name: str, run: Callable[[], Any]) -> None:
        t = time.perf_counter()
        run()
        out[name] = round(time.perf_counter() - t, 3)

    plain = F.udf(lambda x: x, "long", useArrow=False)
    for suffix in ("", "_again"):
        timed("jvm_job" + suffix, lambda: spark.range(0, 2, 1, 2).selectExpr("sum(id)").collect())
    for suffix in ("", "_again"):
        timed("python_udf" + suffix, lambda: spark.range(0, 2, 1, 2).select(plain("id")).collect())
    for suffix in ("", "_again"):
        timed("faq_probe" + suffix, lambda: probe_workers(spark))
    out["session"] = round(out["session"], 3)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--master", default="local-cluster[2,1,2048]")
    p.add_argument("--rounds", type=int, default=2, help="fresh sessions, each in its own process")
    p.add_argument("--out", default=str(RESULTS / "worker_start.json"))
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one session, JSON out
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one_session(args.master)))
        return 0
    run = Run("worker_start", argv)
    rounds = []
    for r in range(args.rounds):
        child = subprocess.run([sys.executable, "-m", "bench.worker_start", "--one", "--master", args.master],
                               capture_output=True, text=True, check=True)
        rounds.append(json.loads(child.stdout.strip().splitlines()[-1]))
        log(f"round {r + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in rounds[-1].items()))
    run["master"] = args.master
    run["rounds"] = rounds
    median = {k: statistics.median(r[k] for r in rounds) for k in STEPS}
    run["median"] = median
    run["python_start_once"] = round(median["python_udf"] - median["python_udf_again"], 3)
    log(f"wrote {run.save(Path(args.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
