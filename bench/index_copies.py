"""How many copies of the broadcast index a machine holds: the mapped file against a broadcast variable.

One run, one graph, the same kernel (feed-forward triangles, ⊕ to a count, the
compiled loop) shipped two ways to the same ``local[2]`` session's Python
workers:

* ``mapped`` — what the broadcast strategy does (:mod:`faq.joins.mapped`): one
  file per machine, memory-mapped by every worker;
* ``broadcast_variable`` — a Spark broadcast variable of the same object (what
  the strategy did before): each worker unpickles a private copy.

Each way runs in a session of its own, after an untimed warm-up job that ships
a three-edge kernel the same way (the workers exist and have loaded numba and
the compiled loop).  Before the job and
while it runs, a thread samples every 0.1 s the Python workers'
``/proc/PID/smaps_rollup``; each row gives the rise of the workers' summed
``Anonymous`` memory (their private heaps: an unpickled copy lands there, a
mapped file does not) and of their summed proportional set size (``Pss``:
every page, a page mapped by n processes counted 1/n in each), peak during the
job minus the level before it.  Over the index file's size:
``anonymous_rise_over_index`` is about one per worker for private copies and
about none for the mapping; ``pss_rise_over_index`` is the copies the
machine's workers hold (plus their working arrays).

Usage::

    .venv/bin/python -m bench.index_copies --graph rmat19 --out bench/results/index_copies.json
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, PeakSampler, Run, descendants, graph_path, log, proc_mb


def _workers(jvm: int) -> list[int]:
    out = []
    for pid in descendants(jvm):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"pyspark" in f.read():
                    out.append(pid)
        except OSError:
            pass
    return out


def _levels(jvm: int) -> dict:
    """The Python workers' summed Anonymous, Pss and Rss, MiB."""
    fields = ("Anonymous", "Pss", "Rss")
    rolls = [proc_mb(p, "smaps_rollup", fields) for p in _workers(jvm)]
    return {key: sum(r.get(key, 0.0) for r in rolls) for key in fields}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="rmat19")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    run = Run("index_copies", argv)

    from pyspark.sql.types import LongType, StructField, StructType

    from faq.io.local_edges import read_edge_arrays, unique_pairs, without_self_loops
    from faq.joins import Aggregation
    from faq.joins.compiled import for_tasks
    from faq.joins.broadcast import expand_partition
    from faq.joins.kernel import build_kernel
    from faq.joins.mapped import ship
    from faq.semirings import COUNTING
    from faq.semirings.numpy_backend import numpy_ops
    from faq.spark import get_session, stop_session

    src, dst = read_edge_arrays(str(graph_path(args.graph)))
    src, dst = unique_pairs(*without_self_loops(src, dst))
    ones = np.ones(len(src), dtype=np.int64)
    pattern = [("a", "b"), ("a", "c"), ("b", "c")]
    kernel, seeds, note = build_kernel(pattern, [[0, 1, 2]], [([src, dst], ones)], ["a", "b", "c"],
                                       ["a", "b", "c"], COUNTING, Aggregation((), COUNTING), numpy_ops(COUNTING))
    kernel = for_tasks(kernel)
    triangle = [np.array([0, 0, 1]), np.array([1, 2, 2])]
    tiny, tiny_seeds, _ = build_kernel(pattern, [[0, 1, 2]], [(triangle, np.ones(3, dtype=np.int64))],
                                       ["a", "b", "c"], ["a", "b", "c"], COUNTING, Aggregation((), COUNTING),
                                       numpy_ops(COUNTING))
    tiny = for_tasks(tiny)
    schema = StructType([StructField("__value", LongType())])
    rows = []
    index_mb = 0.0
    for way in ("broadcast_variable", "mapped"):
        # A session of its own per way: fresh Python workers, nothing left from the other way.
        spark = get_session("local[2]", config={"spark.driver.memory": "6g"})
        jvm = spark.sparkContext._gateway.proc.pid
        # Warm-up, the same way with a tiny kernel: the workers exist and have loaded numba and the
        # compiled loop before sampling starts, so the rise is the index and the task's arrays.
        for k, n in ((tiny, tiny_seeds), (kernel, seeds)):
            index = ship(spark, k) if way == "mapped" else spark.sparkContext.broadcast(k)
            df = spark.range(0, 8, 1, 8).mapInArrow(
                functools.partial(expand_partition, index=index, seeds=n, tasks=8), schema)
            if k is tiny:
                df.groupBy().sum("__value").first()
        if way == "mapped":
            index_mb = index.nbytes / 2**20
        t0 = time.perf_counter()
        with PeakSampler(lambda: _levels(jvm), interval=0.1) as sampler:
            total = df.groupBy().sum("__value").first()[0]
        seconds = time.perf_counter() - t0
        rise = {key: round(sampler.peaks[key] - sampler.before[key]) for key in sampler.before}
        rows.append({"way": way, "count": int(total), "seconds": round(seconds, 2), "workers": len(_workers(jvm)),
                     "anonymous_rise_mb": rise["Anonymous"], "pss_rise_mb": rise["Pss"],
                     "rss_rise_mb": rise["Rss"]})
        log(f"{way}: {rows[-1]}")
        stop_session()
    for r in rows:
        r["index_mb"] = round(index_mb, 1)
        r["anonymous_rise_over_index"] = round(r["anonymous_rise_mb"] / index_mb, 2)
        r["pss_rise_over_index"] = round(r["pss_rise_mb"] / index_mb, 2)
    if len({r["count"] for r in rows}) != 1:
        raise RuntimeError(f"counts disagree: {rows}")
    run["graph"] = args.graph
    run["edges"] = int(len(src))
    run["kernel"] = note
    run["rows"] = rows
    print(f"results: {run.save(Path(args.out) if args.out else RESULTS / 'index_copies.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
