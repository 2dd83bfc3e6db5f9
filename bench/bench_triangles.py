"""Triangles and a 4-cycle motif: faq against the Spark SQL a PySpark user writes, inputs from Parquet.

Issue 49's check ("never slower than Spark's own way"): for every graph and job, faq's default
call on ``spark.read.parquet(...)`` against a chain of binary self-joins in Spark SQL on the same
read, in the same Spark session, interleaved run for run.

Graphs
------
``rmatN``: ``tools/gen_rmat.py N 16 --seed 1`` (the same generator as ``/work/shared/tools/gen_rmat.py``,
cached in bench/data as text by :func:`bench.common.rmat_graph`); ``wiki-Vote`` and ``Email-Enron``:
the SNAP graphs of tests/data.  Each edge list is written **once** to ``bench/data/NAME.parquet``
(``src``, ``dst`` bigint: every edge record of the file, self-loops and repeats included, as a user's
edge table holds them); every timed run starts with a fresh ``spark.read.parquet`` of it.

Jobs (faq's public functions; the SQL a user writes for the same answer)
-------------------------------------------------------------------------
``feed-forward``
    ``faq.count_triangles(df, directed=True).count``: ordered triples with a→b, a→c, b→c in the
    simple digraph.  SQL: ``e`` = distinct non-loop edges, ``e1(a,b) ⋈ e2(a,c) ⋈ e3(b,c)``.
``undirected``
    ``faq.count_triangles(df).count``: triangles of the simple undirected graph.  SQL: ``u`` = distinct
    ``(least, greatest)`` pairs of non-loop edges, ``u1(a,b) ⋈ u2(a,c) ⋈ u3(b,c)`` (a < b < c by
    construction).  For wiki-Vote and Email-Enron the count is also checked against SNAP's published
    triangle count (608,389 and 727,044; /work/shared/data/README.md).
``4-cycle``
    ``faq.motifs(df, "(a)->(b); (b)->(c); (c)->(d); (d)->(a)", count=True).count``: bindings of four
    distinct nodes (each directed 4-cycle counted once per rotation, 4 times).  SQL:
    ``e1(a,b) ⋈ e2(b,c) ⋈ e3(c,d) ⋈ e4(d,a)`` with ``a <> c AND b <> d`` (the other pairs differ
    because ``e`` has no self-loops).

Every count of faq must equal Spark SQL's (and SNAP's where listed), or the run fails.

Timing
------
Per (graph, job): one cold run of each side (faq, then SQL), then ``--repeat`` warm rounds of
(faq, SQL) interleaved; medians, min and max of the warm runs, the cold run apart.  For wiki-Vote and
Email-Enron a third side runs in the same rounds: faq given the edge-list **path** (faq's own loader),
for the "Spark input / path" ratio (issue target: within 1.5x).  The faq side's time includes the
user's own ``spark.read.parquet`` (a Spark call: 0.2-0.3 s warm on this machine, ~4 s in a fresh
session); it is also timed alone once a warm round, and ``parquet_over_path_after_read`` is the ratio
without it: what faq adds once the user holds the DataFrame.

A Spark SQL run is limited to ``--timeout`` seconds: it runs in a thread under its own Spark job group,
and when the time is up the group is cancelled (``SparkContext.cancelJobGroup``) and the run recorded
as a lower bound (``"sql_timed_out": true``, seconds = the timeout); once a cold SQL run timed out its
warm runs are skipped.  faq's runs are not limited (they run partly on the driver, which a job-group
cancel would not stop).

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_triangles                            # R-MAT 16, 18, wiki-Vote, Email-Enron
    .venv/bin/python -m bench.bench_triangles --scales 16 --repeat 3
    .venv/bin/python -m bench.bench_triangles --scales 16 18 20         # R-MAT 20 too
    .venv/bin/python -m bench.bench_triangles --scales --jobs undirected --repeat 1   # the real graphs only
    .venv/bin/python -m bench.bench_triangles --scales 16 --real Email-Enron --jobs 4-cycle --repeat 1

Results: ``bench/results/triangles_spark_sql.json`` (``--out``; merged by (graph, job) with rows already
there, so runs of several scales add up), with the command, the faq commit and the load average
(:class:`bench.common.Run`), plus the load average before and after every row; a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

from bench.common import GENERATED, RESULTS, Run, graph_path, log

REAL_GRAPHS = ("wiki-Vote", "Email-Enron")
# SNAP's published undirected triangle counts (/work/shared/data/README.md, graphs/MANIFEST.tsv)
SNAP_TRIANGLES = {"wiki-Vote": 608_389, "Email-Enron": 727_044}
JOBS = ("feed-forward", "undirected", "4-cycle")
CYCLE4 = "(a)->(b); (b)->(c); (c)->(d); (d)->(a)"

SIMPLE = "e AS (SELECT DISTINCT src, dst FROM raw WHERE src <> dst)"
SQL = {
    "feed-forward": f"""
        WITH {SIMPLE}
        SELECT count(*) AS n
        FROM e e1 JOIN e e2 ON e1.src = e2.src
                  JOIN e e3 ON e3.src = e1.dst AND e3.dst = e2.dst""",
    "undirected": """
        WITH u AS (SELECT DISTINCT least(src, dst) AS a, greatest(src, dst) AS b FROM raw WHERE src <> dst)
        SELECT count(*) AS n
        FROM u u1 JOIN u u2 ON u1.a = u2.a
                  JOIN u u3 ON u3.a = u1.b AND u3.b = u2.b""",
    "4-cycle": f"""
        WITH {SIMPLE}
        SELECT count(*) AS n
        FROM e e1 JOIN e e2 ON e2.src = e1.dst
                  JOIN e e3 ON e3.src = e2.dst
                  JOIN e e4 ON e4.src = e3.dst AND e4.dst = e1.src
        WHERE e1.src <> e2.dst AND e1.dst <> e3.dst""",
}


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def edge_parquet(name: str) -> tuple[str, Path]:
    """``bench/data/NAME.parquet`` (src, dst bigint; every record of the edge list), written once."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = graph_path(name)  # rmatN: generated once (bench.common.rmat_graph)
    out = GENERATED / f"{name}.parquet"
    if not out.exists():
        frame = pd.read_csv(text, sep=r"\s+", comment="#", header=None, usecols=[0, 1], names=["src", "dst"],
                            dtype="int64")
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".part")
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), str(partial))
        partial.replace(out)
        log(f"{name}: wrote {len(frame)} edge records to {out}")
    return str(out), text


def limited(spark, fn: Callable[[], int], timeout: float) -> tuple[Optional[int], float, bool]:
    """``fn()`` in a thread under its own job group, cancelled after ``timeout`` s: (value, seconds, timed out)."""
    from pyspark import InheritableThread

    sc = spark.sparkContext
    group = f"bench-sql-{uuid.uuid4().hex[:8]}"
    box: dict[str, Any] = {}

    def target() -> None:
        sc.setJobGroup(group, "bench_triangles Spark SQL baseline", interruptOnCancel=True)
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 -- reported below
            box["error"] = exc

    t0 = time.perf_counter()
    thread = InheritableThread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        sc.cancelJobGroup(group)
        thread.join(120)
        log(f"  Spark SQL cancelled after {timeout} s")
        return None, float(timeout), True
    seconds = time.perf_counter() - t0
    if "error" in box:
        raise box["error"]
    return box["value"], seconds, False


def stats(cold: Optional[float], warm: list[float]) -> dict[str, Optional[float]]:
    r = lambda x: None if x is None else round(x, 3)  # noqa: E731
    return {"median": r(statistics.median(warm)) if warm else None, "min": r(min(warm)) if warm else None,
            "max": r(max(warm)) if warm else None, "cold": r(cold), "warm_runs": [r(x) for x in warm]}


def faq_placement(answer: Any) -> dict[str, Any]:
    """What faq chose: the strategy (motifs), each plan's join kinds and where each step ran."""
    text = answer.explain() if callable(getattr(answer, "explain", None)) else ""
    lines = [line.strip() for line in str(text).splitlines()]
    steps = [line.split(" (")[0] for line in lines if line.startswith("runs ")]
    joins = [line[line.index("["):line.index("]") + 1] for line in lines if line.startswith("join ") and "[" in line]
    out = {"explain_first_line": lines[0] if lines else None, "steps_run": steps, "joins": joins}
    if hasattr(answer, "strategy"):
        out["strategy"] = answer.strategy
        out["terms"] = answer.terms
    for attr in ("load_seconds",):
        value = getattr(answer, attr, None)
        out[attr] = None if value is None else round(value, 3)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="*", default=[16, 18], help="R-MAT scales (edge factor 16, seed 1)")
    parser.add_argument("--real", nargs="*", default=list(REAL_GRAPHS), choices=REAL_GRAPHS,
                        help="SNAP graphs of tests/data to run (default both; --real with no name: none)")
    parser.add_argument("--no-real", dest="real", action="store_const", const=[], help="R-MAT graphs only")
    parser.add_argument("--jobs", nargs="+", default=list(JOBS), choices=JOBS)
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per side (after one cold run)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a Spark SQL run is cancelled")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS / "triangles_spark_sql.json")
    parser.add_argument("--fresh", action="store_true", help="overwrite --out instead of merging rows into it")
    args = parser.parse_args(argv)

    import faq
    from faq.spark import get_session

    run = Run("bench_triangles", argv)
    spark = get_session(args.master, config={"spark.sql.shuffle.partitions": "8"})
    graphs = list(args.real) + [f"rmat{s}" for s in args.scales]
    # the real graphs first: small, and they carry the path/Parquet comparison

    def faq_job(job: str, edges: Any) -> Any:
        if job == "4-cycle":
            return faq.motifs(edges, CYCLE4, count=True)
        return faq.count_triangles(edges, directed=(job == "feed-forward"))

    rows = []
    for name in graphs:
        parquet, text = edge_parquet(name)
        records = spark.read.parquet(parquet).count()
        log(f"{name}: {records} edge records, {parquet}")
        for job in args.jobs:
            load_before = loadavg()
            log(f"{name} {job}: load {load_before}")

            def run_faq(job=job) -> tuple[int, Any]:
                answer = faq_job(job, spark.read.parquet(parquet))
                return int(answer.count), answer

            def run_path(job=job) -> tuple[int, Any]:
                answer = faq_job(job, str(text))
                return int(answer.count), answer

            def run_sql(job=job) -> int:
                spark.read.parquet(parquet).createOrReplaceTempView("raw")
                return int(spark.sql(SQL[job]).first()["n"])

            def timed(fn):
                t0 = time.perf_counter()
                value = fn()
                return value, time.perf_counter() - t0

            sides = {"faq": run_faq, **({"faq_path": run_path} if name in REAL_GRAPHS else {})}
            cold: dict[str, float] = {}
            warm: dict[str, list[float]] = {k: [] for k in [*sides, "sql"]}
            counts: dict[str, set] = {k: set() for k in [*sides, "sql"]}
            answers: dict[str, Any] = {}
            sql_cold: Optional[float] = None
            sql_timed_out = False
            reads: list[float] = []  # spark.read.parquet alone, the user's own call inside run_faq
            for round_ in range(args.repeat + 1):
                if round_ > 0 and "faq_path" in sides:
                    reads.append(timed(lambda: spark.read.parquet(parquet))[1])
                for side, fn in sides.items():
                    (count, answer), seconds = timed(fn)
                    counts[side].add(count)
                    answers[side] = answer
                    if round_ == 0:
                        cold[side] = seconds
                    else:
                        warm[side].append(seconds)
                    log(f"  {side} {'cold' if round_ == 0 else 'warm'}: {seconds:.3f} s, count {count}")
                if sql_timed_out and round_ > 0:
                    continue
                n, seconds, out_of_time = limited(spark, run_sql, args.timeout)
                if out_of_time:
                    sql_timed_out = True
                    if round_ == 0:
                        sql_cold = seconds
                    else:
                        warm["sql"].append(seconds)
                    continue
                counts["sql"].add(n)
                if round_ == 0:
                    sql_cold = seconds
                else:
                    warm["sql"].append(seconds)
                log(f"  sql {'cold' if round_ == 0 else 'warm'}: {seconds:.3f} s, count {n}")

            for side, seen in counts.items():
                if len(seen) > 1:
                    raise RuntimeError(f"{name} {job}: {side}'s runs disagree: {sorted(seen)}")
            faq_count = next(iter(counts["faq"]))
            for side in sides:
                if counts[side] != {faq_count}:
                    raise RuntimeError(f"{name} {job}: faq from Parquet counted {faq_count}, {side} {counts[side]}")
            checked = []
            if counts["sql"]:
                if counts["sql"] != {faq_count}:
                    raise RuntimeError(f"{name} {job}: faq counted {faq_count}, Spark SQL {counts['sql']}")
                checked.append("spark_sql")
            if job == "undirected" and name in SNAP_TRIANGLES:
                if faq_count != SNAP_TRIANGLES[name]:
                    raise RuntimeError(f"{name}: faq counted {faq_count} triangles, SNAP publishes {SNAP_TRIANGLES[name]}")
                checked.append("snap_published")

            answer = answers["faq"]
            faq_s = stats(cold["faq"], warm["faq"])
            sql_s = stats(sql_cold, warm["sql"])
            row: dict[str, Any] = {
                "graph": name, "job": job, "edge_records": records, "edges": int(answer.edges), "count": faq_count,
                "checked_against": checked,
                "faq_seconds": faq_s, "spark_sql_seconds": sql_s, "sql_timed_out": sql_timed_out,
                "faq_over_sql": (round(faq_s["median"] / sql_s["median"], 3)
                                 if faq_s["median"] and sql_s["median"] else None),
                "faq_over_sql_cold": round(faq_s["cold"] / sql_s["cold"], 3) if sql_s["cold"] else None,
                "faq_placement": faq_placement(answer),
            }
            if sql_timed_out:
                row["note"] = f"Spark SQL cancelled at the {args.timeout:g} s timeout: its seconds are a lower bound"
            if "faq_path" in sides:
                path_s = stats(cold["faq_path"], warm["faq_path"])
                row["faq_path_seconds"] = path_s
                row["parquet_over_path"] = round(faq_s["median"] / path_s["median"], 3) if warm["faq"] else None
                # What faq adds once the user has a DataFrame: the run less the median spark.read.parquet.
                row["read_parquet_seconds"] = stats(None, reads)
                row["parquet_over_path_after_read"] = (
                    round((faq_s["median"] - statistics.median(reads)) / path_s["median"], 3) if reads else None)
                row["faq_path_placement"] = faq_placement(answers["faq_path"])
            row["command"] = run.record["command"]
            row["load_before"] = load_before
            row["load_after"] = loadavg()
            rows.append(row)
            print(json.dumps(row), flush=True)
            save(run, args, spark, rows)  # after every row: a run cut short keeps what it measured

    saved = save(run, args, spark, rows)
    print_table(json.loads(saved.read_text())["rows"])
    print(f"results: {saved}")
    spark.stop()
    return 0


def save(run: Run, args: argparse.Namespace, spark: Any, rows: list[dict]) -> Path:
    """Write ``rows`` to ``--out``, merged by (graph, job) with the rows of earlier runs there (unless ``--fresh``)."""
    out = args.out
    merged = rows
    if out.exists() and not args.fresh:
        try:
            old = json.loads(out.read_text())
            keys = {(r["graph"], r["job"]) for r in rows}
            merged = [r for r in old.get("rows", []) if (r["graph"], r["job"]) not in keys] + rows
            earlier = old.get("earlier_commands", [])
            if old.get("command") != run.record["command"] or old.get("load_average_start") != run.record["load_average_start"]:
                earlier = earlier + [{k: old.get(k) for k in ("command", "commit", "load_average_start",
                                                              "load_average_end")}]
            run["earlier_commands"] = earlier
        except (ValueError, KeyError):
            merged = rows
    run["meta"] = {"master": args.master, "repeat": args.repeat, "timeout_seconds": args.timeout,
                   "cores": run.record["cpus"], "spark": spark.version,
                   "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
                   "sql": {job: " ".join(SQL[job].split()) for job in JOBS}}
    run["rows"] = merged
    return run.save(out)


def print_table(rows: list[dict]) -> None:
    def fmt(x: Optional[float], lower: bool = False) -> str:
        return "-" if x is None else (">" if lower else "") + f"{x:.2f}"

    print()
    print(f"{'graph':12} {'job':12} {'edges':>9} {'count':>14} {'faq s':>8} {'(cold)':>8} {'SQL s':>9} "
          f"{'(cold)':>9} {'faq/SQL':>8} {'path s':>7} {'pq/path':>7}  load")
    for r in rows:
        f, s = r["faq_seconds"], r["spark_sql_seconds"]
        lower = r.get("sql_timed_out", False)
        ratio = r["faq_over_sql"] if r["faq_over_sql"] is not None else (
            round(f["cold"] / s["cold"], 3) if s.get("cold") else None)
        path = r.get("faq_path_seconds", {}).get("median")
        print(f"{r['graph']:12} {r['job']:12} {r['edges']:>9} {r['count']:>14} {fmt(f['median']):>8} "
              f"{fmt(f['cold']):>8} {fmt(s['median'], lower):>9} {fmt(s['cold'], lower):>9} "
              f"{('<' if lower else '') + fmt(ratio):>8} {fmt(path):>7} {fmt(r.get('parquet_over_path')):>7}  "
              f"{r['load_before'][0]}-{r['load_after'][0]}")


if __name__ == "__main__":
    sys.exit(main())
