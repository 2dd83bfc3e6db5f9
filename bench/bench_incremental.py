#!/usr/bin/env python3
"""Maintained feed-forward triangle count under edge changes vs recomputation, in one Spark session.

Run from the project root::

    .venv/bin/python bench/bench_incremental.py                    # scale 17, the issue's run
    .venv/bin/python bench/bench_incremental.py --scale 12 --long-batches 50   # a quick check

Graph: ``tools/gen_rmat.py SCALE 16 OUT --seed 1`` (cached in bench/out), as its
simple digraph.  Query: ``count() := edge(a,b), edge(a,c), edge(b,c)`` in the
counting semiring, maintained by :func:`faq.incremental.maintain` (delta rules
through the seeded worst-case optimal join; the state is the edge relation).

Measured, in order:

1. the static job (:func:`faq.graphs.triangles.count_triangles`, directed) on
   the initial graph: time and peak memory (driver JVM + Python workers +
   this process, VmHWM reset before);
2. building the maintained query (its initial count is checked against 1.);
3. ``--batches`` batches of ``--batch-size`` random insertions of absent
   edges, then as many batches of deletions of present edges: latency of
   each ``apply`` (to the new count on the driver); after the last insertion
   batch and the last deletion batch the static job recomputes the count on
   the current graph (timed: the ratio's baseline) and must agree; the peak
   memory during the batches (recomputations excluded; VmHWM reset before
   each phase) is reported against the static job's;
4. ``--long-batches`` batches of ``--long-size`` changes (half insertions,
   half deletions): medians of the first and last hundred latencies.

Results: a table on stdout and JSON in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from bench_wcoj import Memory, graph_path  # noqa: E402

QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"
# Pathway on the same stream, 2 cores, as quoted in issue 4 (not measured here).
QUOTED_PATHWAY_SECONDS = 1.7


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=17)
    p.add_argument("--batches", type=int, default=10, help="insertion batches, then as many deletion batches")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--long-batches", type=int, default=1000)
    p.add_argument("--long-size", type=int, default=10)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "incremental.json"))
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    from pyspark.sql import functions as F

    from faq.factor import Factor
    from faq.graphs.triangles import count_triangles, simple_directed
    from faq.incremental import maintain
    from faq.io import read_edge_list
    from faq.spark import get_session

    spark = get_session(master=args.master, config={"spark.sql.shuffle.partitions": "4",
                                                    "spark.driver.memory": "8g"})
    memory = Memory(spark)
    rng = random.Random(args.seed)
    path = graph_path(f"rmat{args.scale}")
    graph = simple_directed(read_edge_list(str(path), spark=spark))
    edges_df = graph.df.select(F.col(graph.variables[0]).alias("src"), F.col(graph.variables[1]).alias("dst")).cache()
    n_edges = edges_df.count()
    n_ids = 1 << args.scale
    print(f"rmat{args.scale}: {n_edges} edges (simple digraph)", flush=True)

    def static(df) -> tuple[int, float]:
        t0 = time.perf_counter()
        result = count_triangles(Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge"),
                                 directed=True)
        return int(result.count), time.perf_counter() - t0

    memory.reset()
    static_count, static_seconds = static(edges_df)
    static_memory = memory.peaks()
    print(f"static job: {static_count} feed-forward triangles in {static_seconds:.1f} s; memory {static_memory}",
          flush=True)

    memory.reset()
    t0 = time.perf_counter()
    factor = Factor.from_dataframe(edges_df, ["src", "dst"], "counting", value=None, name="edge")
    mq = maintain(QUERY, {"edge": factor})
    build_seconds = time.perf_counter() - t0
    assert mq.scalar() == static_count, (mq.scalar(), static_count)
    print(f"maintained query built in {build_seconds:.1f} s", flush=True)

    # The driver keeps a sample of present edges to delete, and what it inserted (for deletion later).
    present = [tuple(r) for r in edges_df.sample(fraction=min(1.0, 20000 / max(n_edges, 1)), seed=args.seed)
               .limit(20000).collect()]  # at most 20,000 rows
    rng.shuffle(present)
    inserted: set = set()

    def new_edges(k: int) -> list[tuple[int, int]]:
        out = []
        while len(out) < k:
            e = (rng.randrange(n_ids), rng.randrange(n_ids))
            if e[0] != e[1] and e not in inserted and e not in present_set:
                out.append(e)
                inserted.add(e)
        return out

    present_set = set(present)
    absent_check = spark.createDataFrame(list(new_edges(args.batch_size * args.batches)), "src bigint, dst bigint")
    collisions = absent_check.join(edges_df, ["src", "dst"]).count()  # random pairs that happen to be edges
    pool = [tuple(r) for r in absent_check.join(edges_df, ["src", "dst"], "left_anti").collect()]
    print(f"{len(pool)} fresh edges to insert ({collisions} random pairs were edges already, dropped)", flush=True)

    def apply(rows: list[tuple[int, int, int]]) -> float:
        t0 = time.perf_counter()
        mq.apply({"edge": spark.createDataFrame(rows, "src bigint, dst bigint, value bigint")})
        mq.scalar()  # the new count on the driver
        return time.perf_counter() - t0

    latencies = {"insert": [], "delete": []}
    memory.reset()  # the maintained run's peak: batches only, recomputations excluded
    for b in range(args.batches):
        rows = [(s, d, 1) for s, d in pool[b * args.batch_size:(b + 1) * args.batch_size]]
        latencies["insert"].append(apply(rows))
        print(f"insert batch {b + 1}: {latencies['insert'][-1]:.2f} s, count {mq.scalar()}", flush=True)
    peaks = [memory.peaks()]
    current = edges_df.unionByName(spark.createDataFrame(pool[: args.batches * args.batch_size],
                                                         "src bigint, dst bigint"))
    after_inserts, recompute_insert_seconds = static(current)
    assert after_inserts == mq.scalar(), (after_inserts, mq.scalar())
    victims = present[: args.batches * args.batch_size]
    memory.reset()
    for b in range(args.batches):
        rows = [(s, d, -1) for s, d in victims[b * args.batch_size:(b + 1) * args.batch_size]]
        latencies["delete"].append(apply(rows))
        print(f"delete batch {b + 1}: {latencies['delete'][-1]:.2f} s, count {mq.scalar()}", flush=True)
    peaks.append(memory.peaks())
    maintained_memory = {k: max((p[k] for p in peaks if p[k] is not None), default=None) for k in peaks[0]}
    gone = spark.createDataFrame(victims, "src bigint, dst bigint")
    current = current.join(gone, ["src", "dst"], "left_anti")
    after_deletes, recompute_delete_seconds = static(current)
    assert after_deletes == mq.scalar(), (after_deletes, mq.scalar())
    recompute_seconds = statistics.median([recompute_insert_seconds, recompute_delete_seconds])
    median_batch = statistics.median(latencies["insert"] + latencies["delete"])
    print(f"median batch of {args.batch_size}: {median_batch:.2f} s; recompute {recompute_seconds:.1f} s "
          f"({recompute_seconds / median_batch:.1f}x); memory {maintained_memory}", flush=True)

    long = []
    spare = present[args.batches * args.batch_size:]
    for b in range(args.long_batches):
        half = args.long_size // 2
        ins = [(s, d, 1) for s, d in new_edges(args.long_size - half)]
        dels = [(s, d, -1) for s, d in spare[b * half:(b + 1) * half]] if len(spare) >= (b + 1) * half else []
        long.append(apply(ins + dels))
        if (b + 1) % 50 == 0:
            print(f"long batch {b + 1}: median of the last 50 {statistics.median(long[-50:]):.2f} s, "
                  f"count {mq.scalar()}", flush=True)
    # New random edges of the long run were not checked against the graph (a collision only makes a
    # multiplicity 2, which the maintained count and a recount of the same multiset agree on).
    hundred = min(100, len(long))
    first_hundred = statistics.median(long[:hundred]) if long else None
    last_hundred = statistics.median(long[-hundred:]) if long else None
    mq.close()

    result = {
        "command": "python bench/bench_incremental.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "master": args.master},
        "graph": {"scale": args.scale, "edges": n_edges, "feed_forward_triangles": static_count},
        "static": {"seconds": round(static_seconds, 2), "memory": static_memory},
        "maintained": {
            "build_seconds": round(build_seconds, 2),
            "batch_size": args.batch_size,
            "insert_seconds": [round(x, 3) for x in latencies["insert"]],
            "delete_seconds": [round(x, 3) for x in latencies["delete"]],
            "median_batch_seconds": round(median_batch, 3),
            "memory": maintained_memory,
        },
        "recompute_seconds": {"after_inserts": round(recompute_insert_seconds, 2),
                              "after_deletes": round(recompute_delete_seconds, 2)},
        "speedup_vs_recompute": round(recompute_seconds / median_batch, 2),
        "quoted_pathway_seconds": QUOTED_PATHWAY_SECONDS,
        "long_run": {"batches": args.long_batches, "batch_size": args.long_size,
                     "first_hundred_median": first_hundred and round(first_hundred, 3),
                     "last_hundred_median": last_hundred and round(last_hundred, 3)},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    edges_df.unpersist()


if __name__ == "__main__":
    main()
