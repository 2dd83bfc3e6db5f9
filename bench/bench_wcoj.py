"""Generic (worst-case optimal) join vs Spark SQL's binary-join plan, in one Spark session.

Queries, over the simple digraph of each input (self-loops dropped, repeated
edges collapsed):

* ``triangles`` — feed-forward triangles ``(a)->(b); (a)->(c); (b)->(c)``;
* ``cliques4`` — directed 4-cliques ``(a)->(b); (a)->(c); (a)->(d); (b)->(c); (b)->(d); (c)->(d)``.

Methods, each timed from the cached edge table to the count of bindings:

* ``broadcast`` / ``shuffle`` — :func:`faq.joins.generic.generic_join` with
  that strategy (index building, seeds, extension, Arrow transfer and the
  count included), the bag as InsideOut hands it over: one relation per atom;
* ``binary`` — the plan GraphFrames' ``find`` runs: the pattern's terms
  folded left to right as binary joins, written as one Spark SQL statement
  over the same cached edge table, ``count(*)``;
* ``duckdb`` — DuckDB on the same edge file in the same run, when the module
  is importable (skipped with a note otherwise).

Slow methods are cancelled after ``--timeout`` seconds (reported as a lower
bound).  Peak memory: VmHWM of the driver JVM and of the Python workers it
forked, reset before each measurement (``/proc/PID/clear_refs``), plus the
driver Python's own peak (it builds the broadcast index).  The growth
exponent is a least-squares fit of log(time) against log(edges) over the
R-MAT scales.

Usage::

    .venv/bin/python bench/bench_wcoj.py --quick                 # rmat 14, 15
    .venv/bin/python bench/bench_wcoj.py --scales 14 15 16 17 18 --slashdot

Results go to stdout as a table and to ``bench/results/wcoj.json``.
Counts are checked: every method that finishes must agree.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Python workers must run this interpreter (numpy, pyarrow, faq).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import numpy as np  # noqa: E402

from faq.graphs.triangles import simple_directed  # noqa: E402
from faq.io import read_edge_list  # noqa: E402
from faq.joins import VALUE_COLUMN, Frame  # noqa: E402
from faq.joins import generic as generic_module  # noqa: E402
from faq.semirings import COUNTING  # noqa: E402
from faq.spark import get_session  # noqa: E402

SLASHDOT = ROOT.parent / "shared" / "data" / "graphs" / "soc-Slashdot0902.txt.gz"
WORK = ROOT / "bench" / "out"
RESULTS = ROOT / "bench" / "results" / "wcoj.json"

# DuckDB, Kùzu and scipy on rmat17 feed-forward triangles, as quoted in issue 3 (not measured here).
QUOTED_RMAT17 = {"duckdb": 26.8, "kuzu": 15.6, "scipy": 19.7}

PATTERNS = {
    "triangles": [("a", "b"), ("a", "c"), ("b", "c")],
    "cliques4": [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")],
}


def sql_of(pattern: list[tuple[str, str]], table: str, src: str = "src", dst: str = "dst") -> str:
    """GraphFrames' plan: terms folded left to right, each joined on the vertices seen before."""
    where: dict[str, str] = {}
    parts = []
    for k, (x, y) in enumerate(pattern, start=1):
        alias = f"e{k}"
        conditions = []
        for var, column in ((x, src), (y, dst)):
            if var in where:
                conditions.append(f"{alias}.{column} = {where[var]}")
            else:
                where[var] = f"{alias}.{column}"
        if k == 1:
            parts.append(f"FROM {table} AS {alias}")
        elif conditions:
            parts.append(f"JOIN {table} AS {alias} ON " + " AND ".join(conditions))
        else:
            parts.append(f"CROSS JOIN {table} AS {alias}")
    return "SELECT count(*) AS n " + " ".join(parts)


def graph_path(name: str) -> Path:
    """Path of a named graph, generating R-MAT graphs (cached in bench/out) on first use."""
    if name == "slashdot":
        return SLASHDOT
    scale = int(name[4:])
    out = WORK / f"rmat{scale}.txt"
    if not out.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, str(ROOT / "tools" / "gen_rmat.py"), str(scale), "16", str(out), "--seed", "1"],
            check=True,
        )
    return out


# --- memory ---------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


def _hwm_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _reset_hwm(pid: int) -> None:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


class Memory:
    """Peak RSS of the driver JVM, its Python workers and this process."""

    def __init__(self, spark) -> None:
        self.jvm = spark.sparkContext._gateway.proc.pid

    def reset(self) -> None:
        for pid in [self.jvm, os.getpid(), *_descendants(self.jvm)]:
            _reset_hwm(pid)

    def peaks(self) -> dict:
        workers = [_hwm_mb(p) for p in _descendants(self.jvm)]
        workers = [w for w in workers if not math.isnan(w)]
        return {
            "jvm_peak_mb": round(_hwm_mb(self.jvm)),
            "python_workers_peak_mb": round(max(workers)) if workers else None,
            "python_workers_sum_peak_mb": round(sum(workers)) if workers else None,
            "driver_python_peak_mb": round(_hwm_mb(os.getpid())),
        }


# --- methods --------------------------------------------------------------------


def run_with_timeout(spark, fn, timeout: float):
    """(result, seconds, timed_out): Spark jobs still running after ``timeout`` are cancelled."""
    sc = spark.sparkContext
    group = f"bench-{time.time_ns()}"
    sc.setJobGroup(group, "bench", interruptOnCancel=True)
    timer = threading.Timer(timeout, lambda: sc.cancelJobGroup(group))
    timer.start()
    t0 = time.perf_counter()
    try:
        result = fn()
        return result, time.perf_counter() - t0, False
    except Exception as exc:  # cancelled (or failed: reported)
        elapsed = time.perf_counter() - t0
        if elapsed >= timeout * 0.99:
            return None, elapsed, True
        raise RuntimeError(f"run failed after {elapsed:.1f}s: {exc}") from exc
    finally:
        timer.cancel()
        sc.setLocalProperty("spark.jobGroup.id", None)


def generic_count(edges_df, pattern, strategy: str) -> int:
    frames = [Frame(edges_df.toDF(x, y, VALUE_COLUMN), (x, y)) for x, y in pattern]
    order = list(dict.fromkeys(v for p in pattern for v in p))
    out = generic_module.generic_join(frames, [], COUNTING, order, strategy=strategy)
    decision = generic_module.last_decision()
    if decision.strategy != strategy:
        raise RuntimeError(f"asked for {strategy}, ran {decision.strategy}: {decision.reason}")
    return out.df.count()


def duckdb_count(path: Path, pattern) -> tuple[int | None, float | None, str]:
    try:
        import duckdb
    except ImportError:
        return None, None, "duckdb not importable in this environment: skipped"
    con = duckdb.connect()
    con.execute("PRAGMA threads=2")
    t0 = time.perf_counter()
    con.execute(
        f"CREATE TABLE e AS SELECT DISTINCT column0 AS src, column1 AS dst "
        f"FROM read_csv('{path}', delim=' ', header=false, comment='#', columns={{'column0':'BIGINT','column1':'BIGINT'}}) "
        f"WHERE column0 <> column1"
    )
    n = con.execute(sql_of(pattern, "e")).fetchone()[0]
    return int(n), time.perf_counter() - t0, "DuckDB, 2 threads, load + distinct + query"


def warm_up(spark, methods) -> None:
    """One untimed run of each Spark method on a small random graph (JVM JIT, Python workers)."""
    rng = np.random.default_rng(0)
    pairs = np.unique(rng.integers(0, 2000, size=(20000, 2)), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    df = spark.createDataFrame([(int(a), int(b), 1) for a, b in pairs], "src bigint, dst bigint, value bigint")
    df = df.persist()
    df.count()
    df.createOrReplaceTempView("e")
    pattern = PATTERNS["triangles"]
    counts = set()
    for method in methods:
        if method == "binary":
            counts.add(int(spark.sql(sql_of(pattern, "e")).first()["n"]))
        elif method in ("broadcast", "shuffle"):
            counts.add(generic_count(df, pattern, method))
    df.unpersist()
    if len(counts) > 1:
        raise RuntimeError(f"warm-up: methods disagree: {counts}")


def fit_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(edges)."""
    points = [(e, s) for e, s in points if s and s > 0]
    if len(points) < 2:
        return None
    x = np.log([e for e, _ in points])
    y = np.log([s for _, s in points])
    return float(np.polyfit(x, y, 1)[0])


def write_results(args, spark, rows: list, fits: dict, notes: list) -> Path:
    meta = {
        "command": "python bench/bench_wcoj.py " + " ".join(sys.argv[1:]),
        "master": args.master,
        "cores": os.cpu_count(),
        "spark": spark.version,
        "load_average_at_write": os.getloadavg(),
        "timeout_seconds": args.timeout,
        "batch_rows": generic_module.BATCH_ROWS,
        "quoted_rmat17_triangles_seconds": QUOTED_RMAT17,
        "notes": notes,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "rows": rows, "growth_exponents": fits}, indent=2) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[14, 15, 16, 17, 18])
    parser.add_argument("--slashdot", action="store_true", help="also soc-Slashdot0902")
    parser.add_argument("--quick", action="store_true", help="scales 14 and 15, triangles and 4-cliques")
    parser.add_argument("--queries", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--methods", nargs="+", default=["broadcast", "shuffle", "binary", "duckdb"])
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a Spark run is cancelled")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up run (JIT, Python workers)")
    args = parser.parse_args()
    if args.quick:
        args.scales = [14, 15]

    spark = get_session(
        args.master,
        config={"spark.sql.shuffle.partitions": "8", "spark.driver.memory": args.driver_memory},
    )
    memory = Memory(spark)
    if not args.no_warmup:
        warm_up(spark, args.methods)
    graphs = [f"rmat{s}" for s in args.scales] + (["slashdot"] if args.slashdot else [])
    rows = []
    notes = []
    for name in graphs:
        path = graph_path(name)
        raw = read_edge_list(str(path), spark=spark)
        prepared = simple_directed(raw)
        cached = prepared.df.select("src", "dst", prepared.value).persist()
        n_edges = cached.count()
        cached.createOrReplaceTempView("e")
        for query in args.queries:
            pattern = PATTERNS[query]
            results = {}
            for method in args.methods:
                row = {"graph": name, "query": query, "edges": n_edges, "method": method}
                if method == "duckdb":
                    n, seconds, note = duckdb_count(path, pattern)
                    if n is None:
                        if note not in notes:
                            notes.append(note)
                        continue
                    row.update(count=n, seconds=round(seconds, 2), note=note)
                else:
                    if method == "binary":
                        fn = lambda: int(spark.sql(sql_of(pattern, "e")).first()["n"])  # noqa: E731
                    else:
                        fn = lambda m=method: generic_count(cached, pattern, m)  # noqa: E731
                    memory.reset()
                    n, seconds, timed_out = run_with_timeout(spark, fn, args.timeout)
                    row.update(count=n, seconds=round(seconds, 2), timed_out=timed_out, **memory.peaks())
                results[method] = row
                rows.append(row)
                print(json.dumps(row), flush=True)
                write_results(args, spark, rows, {}, notes)  # progress: complete rows so far
            counts = {m: r["count"] for m, r in results.items() if r.get("count") is not None}
            if len(set(counts.values())) > 1:
                raise RuntimeError(f"{name} {query}: methods disagree: {counts}")
            base = results.get("binary")
            for m, r in results.items():
                if base and m != "binary" and r.get("seconds"):
                    ratio = base["seconds"] / r["seconds"]
                    r["speedup_vs_binary"] = round(ratio, 2)
                    r["speedup_is_lower_bound"] = bool(base.get("timed_out"))
        cached.unpersist()

    fits = {}
    for query in args.queries:
        for method in args.methods:
            points = [
                (r["edges"], r["seconds"])
                for r in rows
                if r["query"] == query and r["method"] == method and r["graph"].startswith("rmat")
                and not r.get("timed_out")
            ]
            fits[f"{query}/{method}"] = fit_exponent(points)

    out = write_results(args, spark, rows, fits, notes)
    print()
    header = f"{'graph':9} {'query':9} {'edges':>9} {'method':9} {'count':>12} {'seconds':>9} {'xbinary':>8} {'JVM MB':>7} {'py MB':>7}"
    print(header)
    for r in rows:
        seconds = f"{'>' if r.get('timed_out') else ''}{r['seconds']}"
        speed = r.get("speedup_vs_binary")
        speed = "" if speed is None else f"{'≥' if r.get('speedup_is_lower_bound') else ''}{speed}"
        count = "" if r.get("count") is None else r["count"]
        print(
            f"{r['graph']:9} {r['query']:9} {r['edges']:>9} {r['method']:9} {count:>12} {seconds:>9} {speed:>8} "
            f"{r.get('jvm_peak_mb') or '':>7} {r.get('python_workers_peak_mb') or '':>7}"
        )
    print()
    for key, value in fits.items():
        if value is not None:
            print(f"growth exponent (time ~ edges^k) {key}: k = {value:.2f}")
    for note in notes:
        print("note:", note)
    print(f"results: {out}")
    spark.stop()


if __name__ == "__main__":
    main()
