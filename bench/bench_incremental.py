"""Maintained feed-forward triangle count under edge changes, against recounting, in one run.

Run from the repository root::

    .venv/bin/python -m bench.bench_incremental                  # the issue's run (scales 15, 17, 19)
    .venv/bin/python -m bench.bench_incremental --quick          # scales 10-12, a few minutes' check

Graphs: ``tools/gen_rmat.py SCALE 16 OUT --seed 1`` (generated, cached in bench/data), as
their simple digraph.  Query: ``count() := edge(a,b), edge(a,c), edge(b,c)`` in
the counting semiring, maintained by :func:`faq.incremental.maintain`.  Batches
are given as Python tuples (the engine's cost) and, for a second set of
batches, as Spark DataFrames (what a pipeline reading changes from Spark pays:
one collect job per batch on top).

Measured, in order, on ``local[2]``:

1. **scale 17** -- the static job (:func:`faq.graphs.triangles.triangle_count`,
   directed) on the initial graph: time and peak memory of every process
   (driver JVM, Python workers, this process; VmHWM reset before);
   building the maintained query (driver placement; checked against the
   static count); ``--batches`` batches of ``--batch-size`` inserted absent
   edges, then as many batches deleting present edges, each ``apply`` timed to
   the new count on the driver; after each phase the static job recounts the
   current graph (timed: the ratio's baseline) and must agree;
2. the same batch sizes given as Spark DataFrames (five inserts, five
   deletes), timed the same way;
3. ``--long-batches`` batches of ``--long-size`` changes (half insertions, half
   deletions): medians of the first and last hundred latencies, peak memory of
   all processes against the static job's, and a final recount that must agree;
4. **scales 15 and 19** -- ``--small-batches`` batches of ``--long-size``
   changes each (driver placement): median latency ratio (work independent of
   ``|E|`` means a ratio near 1);
5. **executors placement** -- a child process on ``local-cluster[2,1,2048]``
   (two executor JVMs) runs step 1's batches with ``placement="executors"``.

Results: JSON in ``--out`` (default ``bench/results/incremental.json``, ``incremental_quick.json``
with ``--quick``), with the command, the faq commit and the load average
(:class:`bench.common.Run`), and a summary table on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, ROOT, Memory, Run, graph_path, log, maintained_session, print_summary, seeded_parser

QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"
TARGETS = {"median_batch_seconds": 0.1, "speedup_vs_recount": 60, "executors_median_seconds": 1.0,
           "scale_ratio": 2.0, "long_drift": 1.1, "memory_ratio": 2.0}


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=17)
    p.add_argument("--small-scales", default="15,19", help="scales whose 10-edge batch latencies are compared")
    p.add_argument("--batches", type=int, default=10, help="insertion batches, then as many deletion batches")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--long-batches", type=int, default=1000)
    p.add_argument("--long-size", type=int, default=10)
    p.add_argument("--small-batches", type=int, default=100)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--cluster", default="local-cluster[2,1,2048]", help="master of the executors run ('' skips)")
    p.add_argument("--quick", action="store_true", help="scales 12 (10, 11 compared), fewer batches")
    p.add_argument("--part", choices=["all", "executors"], default="all", help=argparse.SUPPRESS)
    p.add_argument("--executors-only", action="store_true",
                   help="only the executors placement's batches on --cluster (e.g. --batch-size 1000), "
                        "saved with the command and commit to --out (default bench/results/incremental_executors.json)")
    args = p.parse_args(argv)
    if args.quick:
        args.scale, args.small_scales, args.long_batches, args.small_batches = 12, "10,11", 200, 30
        args.cluster = args.cluster and "local-cluster[2,1,1024]"
    if args.out is None and args.executors_only:
        args.out = str(RESULTS / "incremental_executors.json")
    if args.out is None:
        name = "incremental_quick.json" if args.quick else "incremental.json"
        args.out = str(RESULTS / name)
    return args


class Stream:
    """Random changes to a graph: absent edges to insert, present edges to delete (never twice)."""

    def __init__(self, spark, edges_df, n_ids: int, seed: int, wanted_deletes: int) -> None:
        self.rng = random.Random(seed)
        self.n_ids = n_ids
        n_edges = edges_df.count()
        fraction = min(1.0, 2.0 * wanted_deletes / max(n_edges, 1))
        # At most ``wanted_deletes`` rows reach the driver: the edges this run will delete.
        self.present = [tuple(r) for r in edges_df.sample(fraction=fraction, seed=seed).limit(wanted_deletes).collect()]
        self.rng.shuffle(self.present)
        self.taken = 0
        self.inserted: set = set()
        self.spark, self.edges_df = spark, edges_df

    def inserts(self, k: int) -> list[tuple[int, int]]:
        """``k`` random edges that are not in the graph (checked against it with one anti-join)."""
        out: list[tuple[int, int]] = []
        while len(out) < k:
            want = (k - len(out)) * 2
            pairs = set()
            while len(pairs) < want:
                e = (self.rng.randrange(self.n_ids), self.rng.randrange(self.n_ids))
                if e[0] != e[1] and e not in self.inserted:
                    pairs.add(e)
            candidates = self.spark.createDataFrame(sorted(pairs), "src bigint, dst bigint")
            fresh = [tuple(r) for r in candidates.join(self.edges_df, ["src", "dst"], "left_anti").collect()]
            out.extend(fresh[: k - len(out)])
        self.inserted.update(out)
        return out

    def deletes(self, k: int) -> list[tuple[int, int]]:
        if self.taken + k > len(self.present):
            raise RuntimeError(f"the stream sampled {len(self.present)} edges to delete; {self.taken + k} wanted")
        out = self.present[self.taken:self.taken + k]
        self.taken += k
        return out

    def current(self):
        """The graph after the stream's changes, as a DataFrame (for the recount)."""
        added = self.spark.createDataFrame(sorted(self.inserted) or [(0, 0)], "src bigint, dst bigint")
        if not self.inserted:
            added = added.limit(0)
        gone = self.spark.createDataFrame(self.present[: self.taken] or [(0, 0)], "src bigint, dst bigint")
        if not self.taken:
            gone = gone.limit(0)
        return self.edges_df.unionByName(added).join(gone, ["src", "dst"], "left_anti")


def load(spark, scale: int):
    from pyspark.sql import functions as F

    from faq.graphs.edges import simple_directed
    from faq.io import read_edge_list

    graph = simple_directed(read_edge_list(str(graph_path(f"rmat{scale}")), spark=spark))
    df = graph.df.select(F.col(graph.variables[0]).alias("src"), F.col(graph.variables[1]).alias("dst")).cache()
    return df, df.count()


def edge_factor(df):
    from faq.factor import Factor

    return Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")


def recount(df) -> tuple[int, float]:
    """The static job on ``df``: (feed-forward triangles, seconds)."""
    from faq.graphs.triangles import triangle_count

    t0 = time.perf_counter()
    count = int(triangle_count(edge_factor(df), directed=True).count)
    return count, time.perf_counter() - t0


def timed_apply(mq, rows, spark=None) -> float:
    """Seconds to apply one batch and read the new count (rows as tuples, or a DataFrame if ``spark``)."""
    t0 = time.perf_counter()
    batch = spark.createDataFrame(rows, "src bigint, dst bigint, value bigint") if spark is not None else rows
    mq.apply(edge=batch)
    mq.scalar()
    return time.perf_counter() - t0


def signed(inserts, deletes) -> list[tuple[int, int, int]]:
    return [(s, d, 1) for s, d in inserts] + [(s, d, -1) for s, d in deletes]


def build(df, placement: str):
    """The maintained query over the edges ``df`` with its indexes at ``placement``, and its build seconds."""
    from faq import maintain

    t0 = time.perf_counter()
    mq = maintain(QUERY, {"edge": edge_factor(df)}, placement=placement)
    return mq, time.perf_counter() - t0


def checked(mq, stream) -> float:
    """Recount the stream's current graph, which must agree with the maintained count: the recount's seconds."""
    count, seconds = recount(stream.current())
    assert count == mq.scalar(), (count, mq.scalar())
    return seconds


def total_mb(peaks: dict) -> int:
    """JVM + Python workers (summed) + this process."""
    return sum(v for k, v in peaks.items() if k != "python_workers_peak_mb" and v is not None)


# --- the parts ----------------------------------------------------------------------


def main_run(args, spark) -> dict:
    memory = Memory(spark)
    df, n_edges = load(spark, args.scale)
    log(f"rmat{args.scale}: {n_edges} edges (simple digraph)")
    memory.reset()
    static_count, static_seconds = recount(df)
    static_memory = memory.peaks()
    log(f"static job: {static_count} feed-forward triangles in {static_seconds:.1f} s; memory {static_memory}")

    mq, build_seconds = build(df, "driver")
    plan = mq.explain()
    assert mq.scalar() == static_count, (mq.scalar(), static_count)
    log(f"maintained query built in {build_seconds:.1f} s ({plan.placement}, "
        f"{plan.bytes / 2**20:.0f} MiB of indexes estimated)")

    stream = Stream(spark, df, 1 << args.scale, args.seed,
                    args.batches * args.batch_size + 5 * args.batch_size + args.long_batches * args.long_size)
    latencies: dict[str, list[float]] = {"insert": [], "delete": []}
    memory.reset()
    fresh = stream.inserts(args.batches * args.batch_size)
    for b in range(args.batches):
        chunk = fresh[b * args.batch_size:(b + 1) * args.batch_size]
        latencies["insert"].append(timed_apply(mq, signed(chunk, [])))
    log(f"{args.batches} insert batches of {args.batch_size}: median {statistics.median(latencies['insert']) * 1e3:.1f} ms")
    recount_inserts = checked(mq, stream)
    for b in range(args.batches):
        latencies["delete"].append(timed_apply(mq, signed([], stream.deletes(args.batch_size))))
    log(f"{args.batches} delete batches of {args.batch_size}: median {statistics.median(latencies['delete']) * 1e3:.1f} ms")
    recount_deletes = checked(mq, stream)
    median_batch = statistics.median(latencies["insert"] + latencies["delete"])
    recount_seconds = statistics.median([recount_inserts, recount_deletes])
    log(f"median batch {median_batch * 1e3:.1f} ms; recount {recount_seconds:.1f} s: "
        f"{recount_seconds / median_batch:.0f}x")

    fresh = stream.inserts(5 * args.batch_size)
    frames = [timed_apply(mq, signed(fresh[b * args.batch_size:(b + 1) * args.batch_size], []), spark)
              for b in range(5)]
    frames += [timed_apply(mq, signed([], stream.deletes(args.batch_size)), spark) for _ in range(5)]
    log(f"the same batches as Spark DataFrames: median {statistics.median(frames) * 1e3:.0f} ms")

    long: list[float] = []
    half = args.long_size // 2
    fresh = stream.inserts(args.long_batches * (args.long_size - half))
    memory.reset()  # the long run's peak: its batches only
    for b in range(args.long_batches):
        chunk = fresh[b * (args.long_size - half):(b + 1) * (args.long_size - half)]
        long.append(timed_apply(mq, signed(chunk, stream.deletes(half))))
        if (b + 1) % 200 == 0:
            log(f"long run, batch {b + 1}: median of the last 200 {statistics.median(long[-200:]) * 1e3:.1f} ms")
    long_memory = memory.peaks()
    checked(mq, stream)
    hundred = min(100, len(long))
    first, last = statistics.median(long[:hundred]), statistics.median(long[-hundred:])
    log(f"{args.long_batches} batches of {args.long_size}: first hundred {first * 1e3:.2f} ms, "
        f"last hundred {last * 1e3:.2f} ms; memory {long_memory}")
    mq.close()
    df.unpersist()
    return {
        "graph": {"scale": args.scale, "edges": n_edges, "feed_forward_triangles": static_count},
        "static": {"seconds": round(static_seconds, 2), "memory": static_memory,
                   "memory_total_mb": total_mb(static_memory)},
        "maintained": {
            "placement": plan.placement,
            "estimated_index_bytes": plan.bytes,
            "build_seconds": round(build_seconds, 2),
            "batch_size": args.batch_size,
            "insert_seconds": [round(x, 4) for x in latencies["insert"]],
            "delete_seconds": [round(x, 4) for x in latencies["delete"]],
            "median_batch_seconds": round(median_batch, 4),
            "dataframe_batch_seconds": [round(x, 3) for x in frames],
            "dataframe_median_batch_seconds": round(statistics.median(frames), 3),
        },
        "recount_seconds": {"after_inserts": round(recount_inserts, 2), "after_deletes": round(recount_deletes, 2)},
        "speedup_vs_recount": round(recount_seconds / median_batch, 1),
        "speedup_vs_recount_dataframe_batches": round(recount_seconds / statistics.median(frames), 1),
        "long_run": {"batches": args.long_batches, "batch_size": args.long_size,
                     "first_hundred_median_seconds": round(first, 5),
                     "last_hundred_median_seconds": round(last, 5),
                     "drift": round(last / first, 3),
                     "memory": long_memory, "memory_total_mb": total_mb(long_memory),
                     "memory_ratio_to_static": round(total_mb(long_memory) / total_mb(static_memory), 2),
                     "checked_against_recount": True},
    }


def small_batches(args, spark, scale: int) -> dict:
    df, n_edges = load(spark, scale)
    mq, build_seconds = build(df, "driver")
    stream = Stream(spark, df, 1 << scale, args.seed, args.small_batches * args.long_size)
    half = args.long_size // 2
    fresh = stream.inserts(args.small_batches * (args.long_size - half))
    step = args.long_size - half
    seconds = [timed_apply(mq, signed(fresh[b * step:(b + 1) * step], stream.deletes(half)))
               for b in range(args.small_batches)]
    checked(mq, stream)
    median = statistics.median(seconds)
    log(f"rmat{scale} ({n_edges} edges, built in {build_seconds:.1f} s): {args.small_batches} batches of "
        f"{args.long_size}, median {median * 1e3:.2f} ms")
    mq.close()
    df.unpersist()
    return {"scale": scale, "edges": n_edges, "build_seconds": round(build_seconds, 2), "batches": args.small_batches,
            "batch_size": args.long_size, "median_batch_seconds": round(median, 5), "checked_against_recount": True}


def executors_run(args, spark) -> dict:
    """Step 1's batches with the base indexes on the executors (child process, its own session)."""
    df, n_edges = load(spark, args.scale)
    mq, build_seconds = build(df, "executors")
    plan = mq.explain()
    stream = Stream(spark, df, 1 << args.scale, args.seed, args.batches * args.batch_size)
    fresh = stream.inserts(args.batches * args.batch_size)
    seconds = [timed_apply(mq, signed(fresh[b * args.batch_size:(b + 1) * args.batch_size], []))
               for b in range(args.batches)]
    seconds += [timed_apply(mq, signed([], stream.deletes(args.batch_size))) for _ in range(args.batches)]
    recount_seconds = checked(mq, stream)
    median = statistics.median(seconds)
    warm = sorted(seconds[1:])  # the first batch also starts the executors' Python workers
    log(f"executors ({args.cluster}): built in {build_seconds:.1f} s, median batch of {args.batch_size} "
        f"{median * 1e3:.0f} ms; recount {recount_seconds:.1f} s")
    mq.close()
    return {"master": args.cluster, "placement": plan.placement, "edges": n_edges,
            "build_seconds": round(build_seconds, 2), "batch_seconds": [round(x, 3) for x in seconds],
            "median_batch_seconds": round(median, 3), "first_batch_seconds": round(seconds[0], 3),
            "warm_p99_seconds": round(warm[min(len(warm) - 1, int(0.99 * len(warm)))], 3),
            "warm_max_seconds": round(warm[-1], 3), "batch_size": args.batch_size,
            "recount_seconds": round(recount_seconds, 2),
            "checked_against_recount": True}


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.part == "executors":
        spark = maintained_session(args.cluster)
        Path(args.out).write_text(json.dumps(executors_run(args, spark)))
        return 0
    if args.executors_only:
        run = Run("bench_incremental", argv)
        spark = maintained_session(args.cluster)
        run["targets"] = {"median_batch_seconds": 0.5, "note": "issue 39: a maintained triangle count's "
                          "1,000-change batch on the executors"}
        run["executors"] = result = executors_run(args, spark)
        run["targets_met"] = {"median_batch_seconds": result["median_batch_seconds"] <= 0.5}
        spark.stop()
        log(f"saved {run.save(Path(args.out))}")
        return 0

    started = time.perf_counter()
    run = Run("bench_incremental", argv)
    load_average = os.getloadavg()
    spark = maintained_session(args.master)
    result = run.record  # command, commit, cpus, load_average_start; the rest below, in the file's old layout
    result.update({"machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                               "master": args.master, "load_average_at_start": [round(x, 2) for x in load_average]},
                   "targets": TARGETS})
    result["main"] = main_run(args, spark)
    scales = [int(s) for s in args.small_scales.split(",") if s]
    result["scales"] = [small_batches(args, spark, s) for s in scales]
    if len(result["scales"]) == 2:
        a, b = result["scales"]
        result["scale_ratio"] = round(b["median_batch_seconds"] / a["median_batch_seconds"], 2)
    spark.stop()

    if args.cluster:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "executors.json"
            child = [sys.executable, "-m", "bench.bench_incremental", "--part", "executors",
                     "--scale", str(args.scale), "--batches", str(args.batches), "--batch-size", str(args.batch_size),
                     "--seed", str(args.seed), "--cluster", args.cluster, "--out", str(out)]
            done = subprocess.run(child, cwd=ROOT)  # from the root, as this module runs
            result["executors"] = json.loads(out.read_text()) if done.returncode == 0 else \
                {"master": args.cluster, "failed": f"exit code {done.returncode} (see the log above)"}

    m = result["main"]
    met = {
        "median_batch_seconds": m["maintained"]["median_batch_seconds"] <= TARGETS["median_batch_seconds"],
        "speedup_vs_recount": m["speedup_vs_recount"] >= TARGETS["speedup_vs_recount"],
        "long_drift": m["long_run"]["drift"] <= TARGETS["long_drift"],
        "memory_ratio": m["long_run"]["memory_ratio_to_static"] <= TARGETS["memory_ratio"],
    }
    if "scale_ratio" in result:
        met["scale_ratio"] = result["scale_ratio"] <= TARGETS["scale_ratio"]
    if "median_batch_seconds" in result.get("executors", {}):
        met["executors_median_seconds"] = result["executors"]["median_batch_seconds"] <= TARGETS["executors_median_seconds"]
    result["targets_met"] = met
    result["total_seconds"] = round(time.perf_counter() - started, 1)
    out = run.save(Path(args.out))

    rows = [
        (f"rmat{args.scale} edges", f"{m['graph']['edges']}"),
        ("static count (directed triangles)", f"{m['static']['seconds']:.1f} s"),
        ("maintained: build (driver indexes)", f"{m['maintained']['build_seconds']:.1f} s"),
        (f"batch of {args.batch_size} (tuples), median", f"{m['maintained']['median_batch_seconds'] * 1e3:.1f} ms"),
        ("recount / batch", f"{m['speedup_vs_recount']:.0f}x"),
        (f"batch of {args.batch_size} (Spark DataFrame), median",
         f"{m['maintained']['dataframe_median_batch_seconds'] * 1e3:.0f} ms"),
        (f"{args.long_batches} batches of {args.long_size}: last/first hundred", f"{m['long_run']['drift']:.2f}"),
        ("memory, all processes: long run / static", f"{m['long_run']['memory_ratio_to_static']:.2f}"),
    ]
    if "scale_ratio" in result:
        rows.append((f"batch of {args.long_size}: rmat{scales[1]} / rmat{scales[0]}", f"{result['scale_ratio']:.2f}"))
    if "median_batch_seconds" in result.get("executors", {}):
        rows.append((f"executors ({args.cluster}), median batch", f"{result['executors']['median_batch_seconds']:.2f} s"))
    print_summary(rows, met, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
