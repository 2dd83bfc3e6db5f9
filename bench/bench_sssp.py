"""Single-source shortest paths: insert-only batches on the maintained fixpoint (a resident index on the
driver) against recomputation from scratch with the Spark semi-naive fixpoint, in one run.

Run from the repository root::

    .venv/bin/python -m bench.bench_sssp                  # scale 18 (262,144 ids, ~3.9M edges)
    .venv/bin/python -m bench.bench_sssp --scale 12       # a quick check
    .venv/bin/python -m bench.bench_sssp --static --out bench/results/sssp.json   # also (a) vs (b) below

Graph: ``tools/gen_rmat.py SCALE 16 OUT --seed 1`` (R-MAT, Graph500 parameters,
duplicates and loops removed; generated, cached in bench/data), every edge weighted 1..1000
by a seeded hash of ``(src, dst)`` (``1 + pmod(xxhash64(src, dst, seed), 1000)``,
a Column expression).  Source: the node with the most out-edges.

Measured, in one run and one SparkSession:

* the maintained fixpoint (:class:`~faq.recursive.MaintainedFixpoint`):
  building it (a count and one collect of the edges, the first answer solved
  on the driver), then ``--batches`` batches of ``--batch-size`` inserted
  edges each (seeded random endpoints among the node ids, weights 1..1000;
  pairs already in the graph are skipped, so no batch is a worsening update);
  each batch's latency is timed;
* recomputation from scratch with the Spark fixpoint
  (:func:`~faq.recursive.shortest_paths_on_spark`) on the current edges -- the cached
  original edges plus a DataFrame of every edge inserted so far (parallel
  edges are ⊕-merged by the fixpoint) -- ``--recomputes`` times, evenly
  spread over the batches, the last one after the last batch.  Each time
  includes caching the edges, as a from-scratch run must.  Each recomputed
  answer is compared with the maintained one (collected; exact equality: the
  weights are integers);
* the ratio median recompute / median batch (target: at least 50).

With ``--static``, first (a) ``shortest_paths`` against (b) the
straightforward DataFrame loop (every round joins *all* current proposals
with *all* edges; lineage cut with the same checkpoint), as in the earlier
results (bench/results/sssp.json).

Results: a table on stdout (progress on stderr) and JSON in ``--out`` (default
``bench/results/sssp_incremental.json``) with the exact command, the faq commit
and the load average (:class:`bench.common.Run`).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import GENERATED, RESULTS, Run, log, rmat_graph, seeded_parser

TARGET_RATIO = 50


def parse_args(argv=None):
    p = seeded_parser(seed=1, out=str(RESULTS / "sssp_incremental.json"),
                      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=18, help="log2 of the number of node ids (default 18)")
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=10)
    p.add_argument("--recomputes", type=int, default=3, help="recomputations from scratch on Spark (at least 2)")
    p.add_argument("--static", action="store_true", help="also run (a) semi-naive vs (b) the all-proposals loop")
    p.add_argument("--repeat", type=int, default=1, help="with --static: run (a) and (b) this many times")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--graph-dir", default=str(GENERATED),
                   help="where the R-MAT file is kept (default bench/data, git-ignored)")
    args = p.parse_args(argv)
    if args.recomputes < 2:
        p.error("--recomputes must be at least 2 (a median of one run says little)")
    return args


def naive_sssp(spark, edges, source: int, log):
    """(b): all proposals ⋈ all edges, ∪ old proposals, groupBy min, until a round changes nothing."""
    from pyspark.sql import functions as F

    from faq.scope import Scope

    scope = Scope()  # one frontier's checkpoint at a time; the answer is handed to the caller
    dist = scope.checkpoint(spark.createDataFrame([(source, 0.0)], "node bigint, dist double"))
    rounds = 0
    while True:
        t0 = time.perf_counter()
        proposals = dist.join(edges, F.col("node") == F.col("src")).select(
            F.col("dst").alias("node"), (F.col("dist") + F.col("weight")).alias("dist")
        )
        new = scope.checkpoint(dist.unionByName(proposals).groupBy("node").agg(F.min("dist").alias("dist")))
        old = dist.withColumnRenamed("dist", "old")
        changed = new.join(old, "node", "left").where(F.col("old").isNull() | (F.col("dist") < F.col("old"))).count()
        rounds += 1
        scope.release(dist)
        dist = new
        log(f"  (b) round {rounds}: {changed} changed ({time.perf_counter() - t0:.1f} s)")
        if changed == 0:
            return scope.hand_over(dist), rounds


def _free(df) -> None:
    from faq.spark import release

    release(df)


def same_answer(a, b) -> int:
    """Rows where two (node, value) Spark tables differ (full outer join, null-safe)."""
    from pyspark.sql import functions as F

    x = a.select(F.col("node"), F.col(a.columns[1]).alias("x"))
    y = b.select(F.col("node"), F.col(b.columns[1]).alias("y"))
    return x.join(y, "node", "full").where(~F.col("x").eqNullSafe(F.col("y"))).count()


def differing(maintained, scratch_df) -> int:
    """Nodes whose value differs between the maintained answer (driver) and a recomputed one (collected)."""
    mine = maintained.table()
    theirs = scratch_df.select("node", "value").orderBy("node").toArrow()  # the answer: one row per reached node
    a_nodes, a_values = mine.column("node").to_numpy(), mine.column("value").to_numpy()
    b_nodes, b_values = theirs.column("node").to_numpy(), theirs.column("value").to_numpy()
    _, in_a, in_b = np.intersect1d(a_nodes, b_nodes, assume_unique=True, return_indices=True)
    only_one_side = len(a_nodes) + len(b_nodes) - 2 * len(in_a)
    return only_one_side + int(np.sum(a_values[in_a] != b_values[in_b]))


def existing_pairs(path: str, n_ids: int) -> np.ndarray:
    """Sorted ``src * n + dst`` of the graph file's edges (to draw inserted pairs that are new)."""
    import pandas as pd

    table = pd.read_csv(path, sep=r"\s+", header=None, comment="#", usecols=[0, 1], dtype=np.int64,
                        engine="c")
    return np.unique(table[0].to_numpy() * n_ids + table[1].to_numpy())


def static_comparison(args, spark, edges, cached, source, log) -> dict:
    """(a) shortest_paths vs (b) the all-proposals loop, alternating when repeated."""
    from faq.factor import factor_of
    from faq.recursive import shortest_paths_on_spark
    from faq.recursive.seminaive import DST, SRC, WEIGHT, _prepare_edges
    from faq.scope import Scope
    from pyspark.sql import functions as F

    tiny_scope = Scope()
    tiny = factor_of([(i, (i * 7 + 1) % 50, float(1 + i % 9)) for i in range(200)], ["src", "dst"], "min_plus",
                     spark=spark)
    tiny_cached = _prepare_edges(tiny.df.select(F.col("src").alias(SRC), F.col("dst").alias(DST),
                                                F.col("value").alias(WEIGHT)), spark, tiny_scope)
    warm, _ = naive_sssp(spark, tiny_cached, 0, lambda s: None)
    _free(warm)
    tiny_scope.close()
    a_runs, b_runs, semi, diff, rounds = [], [], None, None, None
    for _ in range(max(1, args.repeat)):
        if semi is not None:
            semi.close()
        t = time.perf_counter()
        semi = shortest_paths_on_spark(edges, source, progress=lambda s: log(f"  (a) {s}"))
        semi_rows = semi.count()
        a_runs.append(time.perf_counter() - t)
        log(f"(a) semi-naive: {a_runs[-1]:.1f} s, {semi.iterations} iterations, {semi_rows} nodes reached")
        t = time.perf_counter()
        naive, rounds = naive_sssp(spark, cached, source, log)
        b_runs.append(time.perf_counter() - t)
        diff = same_answer(semi.df, naive)
        log(f"(b) all-proposals loop: {b_runs[-1]:.1f} s, {rounds} rounds; rows differing from (a): {diff}")
        _free(naive)
    out = {
        "semi_naive": {"seconds": round(statistics.median(a_runs), 2), "runs": [round(x, 2) for x in a_runs],
                       "iterations": semi.iterations, "reached": semi_rows},
        "naive": {"seconds": round(statistics.median(b_runs), 2), "runs": [round(x, 2) for x in b_runs],
                  "rounds": rounds, "differing_rows": diff},
    }
    out["speedup_a_over_b"] = round(out["naive"]["seconds"] / out["semi_naive"]["seconds"], 2)
    semi.close()
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    from pyspark.sql import functions as F

    from faq.factor import Factor, factor_of
    from faq.io import read_edge_list
    from faq.recursive import MaintainedFixpoint, shortest_paths_on_spark
    from faq.recursive.seminaive import DST, SRC, WEIGHT, _prepare_edges
    from faq.scope import Scope
    from faq.spark import get_session

    run = Run("bench_sssp", argv)
    t0 = time.perf_counter()
    path = str(rmat_graph(args.scale, args.edge_factor, args.seed, Path(args.graph_dir)))
    log(f"graph {path} ready in {time.perf_counter() - t0:.1f} s")
    spark = get_session(master=args.master)
    master = spark.conf.get("spark.master")
    log(f"Spark {spark.version}, {master}, {spark.conf.get('spark.sql.shuffle.partitions')} shuffle partitions")

    raw = read_edge_list(path, spark=spark, semiring="min_plus", duplicates="keep")
    weight = (F.pmod(F.xxhash64(F.col("src"), F.col("dst"), F.lit(args.seed)), F.lit(1000)) + 1).cast("double")
    weighted = raw.df.select("src", "dst", weight.alias("value"))
    edges_scope = Scope()  # the cached, partitioned edges every run below reads
    cached = _prepare_edges(weighted.select(F.col("src").alias(SRC), F.col("dst").alias(DST),
                                            F.col("value").alias(WEIGHT)), spark, edges_scope)
    m_edges = cached.count()
    source = cached.groupBy(SRC).count().orderBy(F.desc("count"), SRC).first()[SRC]  # one row
    log(f"{m_edges} edges; source {source}")
    edges = Factor(df=cached, variables=(SRC, DST), semiring=raw.semiring, value=WEIGHT, name=f"rmat{args.scale}")

    results = run.record  # command, commit, cpus, load_average_start; the rest below, in the file's old layout
    results.update({
        "scale": args.scale,
        "edge_factor": args.edge_factor,
        "seed": args.seed,
        "edges": m_edges,
        "source": int(source),
        "master": master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "spark": spark.version,
    })

    # Warm-up (JVM JIT, Python imports): both paths once on a small graph, untimed.
    tiny = factor_of([(i, (i * 7 + 1) % 50, float(1 + i % 9)) for i in range(200)], ["src", "dst"], "min_plus",
                     spark=spark)
    with shortest_paths_on_spark(tiny, 0):
        pass
    warm = MaintainedFixpoint.paths(tiny, 0)
    warm.insert([(3, 60, 1.0)])
    warm.close()
    log("warm-up done")

    if args.static:
        results.update(static_comparison(args, spark, edges, cached, source, log))

    # The maintained fixpoint: edges and answer on the driver.
    t = time.perf_counter()
    maintained = MaintainedFixpoint.paths(edges, source, "min_plus", progress=lambda s: None)
    init_seconds = time.perf_counter() - t
    index_bytes = maintained.holder.resident.nbytes  # edges (rows and trie), answer and node dictionary, measured
    log(f"maintained: built in {init_seconds:.1f} s ({maintained.placement}: {maintained.placement_reason}); "
        f"{maintained.size} nodes reached, {maintained.initial_iterations} rounds")

    n_ids = 1 << args.scale
    known = existing_pairs(path, n_ids)
    rng = random.Random(args.seed)
    inserted: list[tuple] = []
    seen: set = set()

    def new_batch() -> list:
        batch = []
        while len(batch) < args.batch_size:
            u, v = rng.randrange(n_ids), rng.randrange(n_ids)
            key = u * n_ids + v
            at = int(np.searchsorted(known, key))
            if u == v or (at < len(known) and known[at] == key) or key in seen:
                continue  # a pair already there could get a worse weight: a batch here is insert-only
            seen.add(key)
            batch.append((u, v, float(rng.randint(1, 1000))))
        return batch

    every = args.batches / args.recomputes
    recompute_at = sorted({max(1, round(every * (k + 1))) for k in range(args.recomputes)})
    latencies, changed, rounds, recomputes = [], [], [], []
    for b in range(1, args.batches + 1):
        batch = new_batch()
        t = time.perf_counter()
        change = maintained.insert(batch, label=f"batch {b}")
        seconds = time.perf_counter() - t
        inserted += batch
        latencies.append(seconds)
        changed.append(len(change))
        rounds.append(change.info["iterations"])
        line = f"batch {b}: {len(change)} changed in {seconds * 1000:.1f} ms ({change.info['iterations']} rounds)"
        if b in recompute_at:
            added = spark.createDataFrame(inserted, f"{SRC} bigint, {DST} bigint, {WEIGHT} double")
            current = Factor(df=cached.unionByName(added), variables=(SRC, DST), semiring=raw.semiring, value=WEIGHT,
                             name="current")
            t = time.perf_counter()
            scratch = shortest_paths_on_spark(current, source)
            scratch.count()
            r_seconds = time.perf_counter() - t
            diff = differing(maintained, scratch.df)
            recomputes.append({"after_batch": b, "seconds": round(r_seconds, 2), "iterations": scratch.iterations,
                               "differing_nodes": diff})
            scratch.close()
            line += f"; recompute on Spark {r_seconds:.1f} s ({scratch.iterations} iterations), differing nodes {diff}"
            if diff:
                log("ERROR: maintained answer differs from recomputation")
        log(line)
    reached = maintained.size
    maintained.close()
    edges_scope.close()

    median_batch = statistics.median(latencies)
    median_recompute = statistics.median(r["seconds"] for r in recomputes)
    ratio = median_recompute / median_batch
    last = recomputes[-1]
    results["maintained"] = {
        "build_seconds": round(init_seconds, 2),
        "initial_rounds": maintained.initial_iterations,
        "placement": maintained.placement,
        "placement_reason": maintained.placement_reason,
        "index_bytes": index_bytes,
        "reached_after_last_batch": reached,
        "batches": args.batches,
        "batch_size": args.batch_size,
        "batch_seconds": [round(x, 5) for x in latencies],
        "changed": changed,
        "rounds": rounds,
        "median_batch_seconds": round(median_batch, 5),
        "p90_batch_seconds": round(float(np.percentile(latencies, 90)), 5),
        "max_batch_seconds": round(max(latencies), 5),
        "mean_first_10": round(statistics.mean(latencies[:10]), 5),
        "mean_last_10": round(statistics.mean(latencies[-10:]), 5),
    }
    results["recompute"] = {
        "runs": recomputes,
        "median_seconds": round(median_recompute, 2),
    }
    results["recompute_over_batch"] = round(ratio, 1)
    results["target_ratio"] = TARGET_RATIO
    results["target_met"] = ratio >= TARGET_RATIO
    results["equal_after_last_batch"] = last["after_batch"] == args.batches and last["differing_nodes"] == 0
    results["total_seconds"] = round(time.perf_counter() - t0, 1)

    run.save(Path(args.out))

    mt = results["maintained"]
    rows = [("graph", f"R-MAT scale {args.scale}, {m_edges} edges, weights 1..1000, source {source}")]
    if args.static:
        rows += [("(a) semi-naive, stable answer", f"{results['semi_naive']['seconds']:.1f} s"),
                 ("(b) all-proposals loop", f"{results['naive']['seconds']:.1f} s"),
                 ("speedup (b)/(a)", f"{results['speedup_a_over_b']:.2f}x")]
    rows += [
        ("maintained: build (collect + solve)", f"{mt['build_seconds']:.1f} s"),
        ("resident index on the driver", f"{index_bytes / 2**20:.0f} MiB"),
        (f"batch of {args.batch_size} edges, median", f"{mt['median_batch_seconds'] * 1000:.2f} ms"),
        ("batch p90 / max", f"{mt['p90_batch_seconds'] * 1000:.2f} / {mt['max_batch_seconds'] * 1000:.2f} ms"),
        ("recompute on Spark, median", f"{median_recompute:.1f} s ({len(recomputes)} runs)"),
        ("recompute / batch", f"{ratio:.0f}x (target {TARGET_RATIO}x: {'met' if results['target_met'] else 'MISSED'})"),
        ("equal to recomputation after the last batch", str(results["equal_after_last_batch"])),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
