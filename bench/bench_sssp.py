#!/usr/bin/env python3
"""Single-source shortest paths on Spark: semi-naive fixpoint vs the conventional DataFrame loop,
then insert-only batches against recomputation.

Run from the project root::

    .venv/bin/python bench/bench_sssp.py                 # scale 18 (262,144 ids, ~4M edges)
    .venv/bin/python bench/bench_sssp.py --scale 12      # a quick check

Graph: ``tools/gen_rmat.py SCALE 16 OUT --seed 1`` (R-MAT, Graph500 parameters,
duplicates and loops removed), every edge weighted 1..1000 by a seeded hash of
``(src, dst)`` (``1 + pmod(xxhash64(src, dst, seed), 1000)``, a Column
expression: the same weights in every run and for both implementations).
Source: the node with the most out-edges.

Measured, in one run and one SparkSession:

(a) ``faq.recursive.shortest_paths``: semi-naive -- only the values that
    improved (the frontier) are joined with the edges; one value per node.
(b) the straightforward DataFrame loop: every round joins *all* current
    (node, distance) proposals with *all* edges, unions the old proposals,
    reduces with ``groupBy(node).min``, and stops when a round changes nothing
    (a join of the new table with the old one, counted).  Its lineage is cut
    every round too, with the same local checkpoint as (a)
    (:func:`faq.recursive.seminaive.checkpoint`), or it would slow down and
    overflow the stack.

(b) is handed the cached, source-partitioned edges; (a)'s time includes
caching its own copy of them (one shuffle), so the comparison is conservative.
Both must give the same answer (checked).  Then a :class:`~faq.recursive.MaintainedFixpoint` takes
``--batches`` batches of ``--batch-size`` new edges (seeded random endpoints among
the node ids, weights 1..1000); each batch's latency is timed, and every
``--recompute-every``-th batch the answer is also recomputed from scratch with
``shortest_paths`` on the current edges (recomputation is slow, so not after every
batch; its time includes caching the edges again, as a from-scratch run must) and
compared with the maintained one.  Results: a table on stdout and JSON in
``--out`` (default ``bench/results/sssp.json``).
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
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=18, help="log2 of the number of node ids (default 18)")
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=10)
    p.add_argument("--recompute-every", type=int, default=10, help="recompute from scratch every N-th batch")
    p.add_argument("--skip-naive", action="store_true", help="do not run (b)")
    p.add_argument("--repeat", type=int, default=1, help="run (a) and (b) this many times, alternating; report medians")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--graph-dir", default=os.path.join(ROOT, "build", "bench"), help="where the R-MAT file is kept (default build/bench, git-ignored)")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "sssp.json"))
    return p.parse_args(argv)


def rmat_file(args) -> str:
    os.makedirs(args.graph_dir, exist_ok=True)
    path = os.path.join(args.graph_dir, f"rmat-{args.scale}-{args.edge_factor}-seed{args.seed}.txt")
    if not os.path.exists(path):
        tmp = path + ".tmp"
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "tools", "gen_rmat.py"), str(args.scale), str(args.edge_factor), tmp,
             "--seed", str(args.seed)],
            check=True,
        )
        os.replace(tmp, path)
    return path


def naive_sssp(spark, edges, source: int, log):
    """(b): all proposals ⋈ all edges, ∪ old proposals, groupBy min, until a round changes nothing."""
    from pyspark.sql import functions as F

    from faq.recursive.seminaive import checkpoint

    dist = checkpoint(spark.createDataFrame([(source, 0.0)], "node bigint, dist double"))
    rounds = 0
    while True:
        t0 = time.perf_counter()
        proposals = dist.join(edges, F.col("node") == F.col("src")).select(
            F.col("dst").alias("node"), (F.col("dist") + F.col("weight")).alias("dist")
        )
        new = checkpoint(dist.unionByName(proposals).groupBy("node").agg(F.min("dist").alias("dist")))
        old = dist.withColumnRenamed("dist", "old")
        changed = new.join(old, "node", "left").where(F.col("old").isNull() | (F.col("dist") < F.col("old"))).count()
        rounds += 1
        _free(dist)
        dist = new
        log(f"  (b) round {rounds}: {changed} changed ({time.perf_counter() - t0:.1f} s)")
        if changed == 0:
            return dist, rounds


def _free(df) -> None:
    from faq.recursive.seminaive import _release

    _release(df)


def same_answer(a, b) -> int:
    """Rows where two (node, value) tables differ (full outer join, null-safe)."""
    from pyspark.sql import functions as F

    x = a.select(F.col("node"), F.col(a.columns[1]).alias("x"))
    y = b.select(F.col("node"), F.col(b.columns[1]).alias("y"))
    return x.join(y, "node", "full").where(~F.col("x").eqNullSafe(F.col("y"))).count()


def main(argv=None) -> int:
    args = parse_args(argv)
    from pyspark.sql import functions as F

    from faq.factor import Factor
    from faq.io import read_edge_list
    from faq.recursive import MaintainedFixpoint, shortest_paths
    from faq.recursive.seminaive import DST, SRC, WEIGHT, _prepare_edges, _release
    from faq.spark import get_session

    def log(text):
        print(text, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    path = rmat_file(args)
    log(f"graph {path} ready in {time.perf_counter() - t0:.1f} s")
    spark = get_session(master=args.master)
    log(f"Spark {spark.version}, {spark.sparkContext.master}, {spark.conf.get('spark.sql.shuffle.partitions')} shuffle partitions")

    raw = read_edge_list(path, spark=spark, semiring="min_plus", duplicates="keep")
    weight = (F.pmod(F.xxhash64(F.col("src"), F.col("dst"), F.lit(args.seed)), F.lit(1000)) + 1).cast("double")
    weighted = raw.df.select("src", "dst", weight.alias("value"))
    edges = Factor(df=weighted, variables=("src", "dst"), semiring=raw.semiring, name=f"rmat{args.scale}")
    cached = _prepare_edges(weighted.select(F.col("src").alias(SRC), F.col("dst").alias(DST), F.col("value").alias(WEIGHT)), spark)
    stats = cached.agg(F.count("*").alias("m"), F.count_distinct("src").alias("sources")).first()
    source = cached.groupBy(SRC).count().orderBy(F.desc("count"), SRC).first()[SRC]  # one row
    m_edges = int(stats["m"])
    log(f"{m_edges} edges; source {source}")
    edges = Factor(df=cached, variables=(SRC, DST), semiring=raw.semiring, value=WEIGHT, name=edges.name)

    results: dict = {
        "command": "python bench/bench_sssp.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "scale": args.scale,
        "edge_factor": args.edge_factor,
        "seed": args.seed,
        "edges": m_edges,
        "source": int(source),
        "master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "spark": spark.version,
    }

    # Warm-up (JVM JIT, Python imports): both loops once on a small graph, untimed.
    from faq.factor import factor_of

    tiny = factor_of([(i, (i * 7 + 1) % 50, float(1 + i % 9)) for i in range(200)], ["src", "dst"], "min_plus", spark=spark)
    with shortest_paths(tiny, 0):
        pass
    tiny_cached = _prepare_edges(tiny.df.select(F.col("src").alias(SRC), F.col("dst").alias(DST), F.col("value").alias(WEIGHT)), spark)
    warm, _ = naive_sssp(spark, tiny_cached, 0, lambda s: None)
    _free(warm)
    _release(tiny_cached)
    log("warm-up done")

    # (a) and (b), alternating when repeated (the machine may be shared: medians are reported).
    a_runs, b_runs, semi = [], [], None
    for rep in range(max(1, args.repeat)):
        if semi is not None:
            semi.unpersist()
        t = time.perf_counter()
        semi = shortest_paths(edges, source, progress=lambda s: log(f"  (a) {s}"))
        semi_rows = semi.count()
        a_runs.append(time.perf_counter() - t)
        log(f"(a) semi-naive: {a_runs[-1]:.1f} s, {semi.iterations} iterations, {semi_rows} nodes reached")
        if not args.skip_naive:
            t = time.perf_counter()
            naive, rounds = naive_sssp(spark, cached, source, log)
            b_runs.append(time.perf_counter() - t)
            diff = same_answer(semi.df, naive)
            log(f"(b) all-proposals loop: {b_runs[-1]:.1f} s, {rounds} rounds; rows differing from (a): {diff}")
            _free(naive)
            if diff:
                log("ERROR: (a) and (b) disagree")
    a_seconds = statistics.median(a_runs)
    results["semi_naive"] = {"seconds": round(a_seconds, 2), "runs": [round(x, 2) for x in a_runs],
                             "iterations": semi.iterations, "reached": semi_rows}
    if b_runs:
        b_seconds = statistics.median(b_runs)
        results["naive"] = {"seconds": round(b_seconds, 2), "runs": [round(x, 2) for x in b_runs], "rounds": rounds,
                            "differing_rows": diff}
        results["speedup_a_over_b"] = round(b_seconds / a_seconds, 2)
    semi.unpersist()

    # Maintained: batches of new edges.
    rng = random.Random(args.seed)
    n_ids = 1 << args.scale
    t = time.perf_counter()
    maintained = MaintainedFixpoint.paths(edges, source, "min_plus")
    init_seconds = time.perf_counter() - t
    log(f"maintained: initial solve {init_seconds:.1f} s")
    latencies, changed, recomputes = [], [], []
    for b in range(1, args.batches + 1):
        batch = [(rng.randrange(n_ids), rng.randrange(n_ids), float(rng.randint(1, 1000))) for _ in range(args.batch_size)]
        t = time.perf_counter()
        with maintained.insert(batch, name=f"batch {b}") as changes:
            n_changed = changes.count
        seconds = time.perf_counter() - t
        latencies.append(seconds)
        changed.append(n_changed)
        line = f"batch {b}: {n_changed} changed in {seconds:.2f} s"
        if args.recompute_every and b % args.recompute_every == 0:
            t = time.perf_counter()
            scratch = shortest_paths(maintained.edges, source)
            scratch.count()
            r_seconds = time.perf_counter() - t
            diff = same_answer(maintained.state.df, scratch.df)
            scratch.unpersist()
            recomputes.append({"batch": b, "seconds": round(r_seconds, 2), "iterations": scratch.iterations,
                               "differing_rows": diff})
            line += f"; recompute {r_seconds:.1f} s ({scratch.iterations} iterations), differing rows {diff}"
            if diff:
                log("ERROR: maintained answer differs from recomputation")
        log(line)
    maintained.close()
    _release(cached)

    first, last = latencies[:10], latencies[-10:]
    nan = float("nan")
    median_batch = statistics.median(latencies) if latencies else float("nan")
    median_recompute = statistics.median(r["seconds"] for r in recomputes) if recomputes else float("nan")
    results["maintained"] = {
        "initial_seconds": round(init_seconds, 2),
        "batches": args.batches,
        "batch_size": args.batch_size,
        "batch_seconds": [round(x, 3) for x in latencies],
        "changed": changed,
        "median_batch_seconds": round(median_batch, 3),
        "mean_first_10": round(statistics.mean(first), 3) if first else nan,
        "mean_last_10": round(statistics.mean(last), 3) if last else nan,
        "recompute_every": args.recompute_every,
        "recomputes": recomputes,
        "median_recompute_seconds": round(median_recompute, 2),
        "recompute_over_batch": round(median_recompute / median_batch, 1) if latencies and recomputes else None,
    }
    results["total_seconds"] = round(time.perf_counter() - t0, 1)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=2)

    mt = results["maintained"]
    rows = [
        ("graph", f"R-MAT scale {args.scale}, {m_edges} edges, weights 1..1000, source {source}"),
        ("(a) semi-naive, stable answer", f"{a_seconds:.1f} s ({semi.iterations} iterations"
         + (f", median of {len(a_runs)})" if len(a_runs) > 1 else ")")),
    ]
    if "naive" in results:
        rows.append(("(b) all-proposals loop", f"{results['naive']['seconds']:.1f} s ({results['naive']['rounds']} rounds"
                     + (f", median of {len(b_runs)})" if len(b_runs) > 1 else ")")))
        rows.append(("speedup (b)/(a)", f"{results['speedup_a_over_b']:.2f}x"))
    rows.append(("maintained: initial solve", f"{mt['initial_seconds']:.1f} s"))
    if latencies:
        rows += [
            (f"batch of {args.batch_size} edges, median", f"{mt['median_batch_seconds']:.2f} s"),
            ("first 10 batches, mean", f"{mt['mean_first_10']:.2f} s"),
            ("last 10 batches, mean", f"{mt['mean_last_10']:.2f} s"),
        ]
    if recomputes:
        rows += [
            ("recompute from scratch, median", f"{mt['median_recompute_seconds']:.1f} s ({len(recomputes)} runs)"),
            ("recompute / batch", f"{mt['recompute_over_batch']}x"),
            ("recomputations equal to maintained", str(all(r["differing_rows"] == 0 for r in recomputes))),
        ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
