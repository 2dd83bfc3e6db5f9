"""Generic (worst-case optimal) join vs Spark SQL's binary-join plan and DuckDB, in one run.

Queries, over the simple digraph of each input (self-loops dropped, repeated
edges collapsed):

* ``triangles`` — feed-forward triangles ``(a)->(b); (a)->(c); (b)->(c)``;
* ``cliques4`` — directed 4-cliques ``(a)->(b); (a)->(c); (a)->(d); (b)->(c); (b)->(d); (c)->(d)``.

Methods, each timed from the cached edge table to the count of bindings:

* ``broadcast`` — :func:`faq.joins.generic.generic_join`, broadcast strategy,
  told (as InsideOut's executor tells it) that the product is summed to a
  scalar: each task counts in numpy and ships one partial sum (index
  building, seeds, extension and the final sum included);
* ``broadcast_listing`` — the same strategy listing every binding to Spark,
  which sums them (what ``broadcast`` did before aggregation in the tasks);
* ``shuffle`` — the shuffle strategy (DataFrame joins), bindings summed by Spark;
* ``binary`` — the plan GraphFrames' ``find`` runs: the pattern's terms
  folded left to right as binary joins, written as one Spark SQL statement
  over the same cached edge table, ``count(*)``;
* ``job`` — triangles only: the user's call, ``faq.count_triangles(path,
  directed=True)`` on the edge file, timed by its own clock (``seconds``,
  ``load_seconds`` of them): the driver load path, and the broadcast index
  built from the rows the driver holds (no collect; :attr:`faq.factor.Factor.relation`);
* ``duckdb`` — DuckDB (``pip install -e '.[bench]'``) on the same edge file
  in the same run, 2 threads: ``seconds`` covers loading, de-duplication and
  the query, ``query_seconds`` the query alone (skipped with a note when
  DuckDB is not importable);
* ``graphblas`` — SuiteSparse:GraphBLAS (python-graphblas, ``bench`` extra),
  triangles only, 2 threads: the file read with ``pyarrow.csv``, the simple
  digraph A built (repeats ignored by ``from_coo``, diagonal dropped), then the feed-forward
  count ``A.mxm(A, plus_pair).new(mask=A.S).reduce_scalar()``: Σ over edges
  a→c of the 2-paths a→b→c.  ``load_seconds`` and ``query_seconds`` apart,
  ``seconds`` both.

faq's own load is timed too, per graph: the edge file read, cleaned (self-loops,
repeats) and cached as the Spark methods use it, by the driver path
(``read_edge_list``'s ``engine="auto"``: :func:`faq.graphs.edges.prepared_graph`)
and, unless ``--load-engine auto``, by the Spark path as before
(``simple_directed(read_edge_list(path, engine="spark"))``).  Each row gives
``load_seconds`` (the driver path) and ``load_seconds_spark``; the broadcast
row adds ``end_to_end_seconds`` = load + join, faq's answer to GraphBLAS's
``seconds``.

Slow methods are cancelled after ``--timeout`` seconds (reported as a lower
bound).  ``--repeat N`` runs each method N times and reports the median.
Peak memory: VmHWM of the driver JVM and of the Python workers it forked,
reset before each measurement (``/proc/PID/clear_refs``), plus the driver
Python's own peak (it builds the broadcast index); and ``machine_pss_peak_mb``,
the peak of the summed proportional set size of all of them, sampled every
0.2 s (bench.common.machine_pss_mb, PeakSampler): the machine's memory with shared pages
(the index file every worker maps) counted once.  A broadcast row's
``join_note`` gives the index file's size.

A method that timed out on a graph is not run on the larger graphs of the
same query (a ``skipped`` row says so); DuckDB's query is interrupted at
``--timeout`` too.  The growth exponent is a
least-squares fit of log(time) against log(edges) over the R-MAT scales.

``--kernel`` runs no Spark: it times the broadcast kernel itself (one task,
one thread, every seed) in four variants — listing or aggregating, binary
search or hash-index validation — interleaved, best of ``--repeat``, and
writes ``bench/results/wcoj_kernel.json``.

Graphs: R-MAT at ``--scales`` (``tools/gen_rmat.py N 16 --seed 1``, cached in
bench/data) and, with ``--enron``, SNAP email-Enron from tests/data -- the
real graph, in place of soc-Slashdot0902, which was read from outside the
checkout (``--slashdot`` before).

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_wcoj --quick                 # rmat 14, 15
    .venv/bin/python -m bench.bench_wcoj --scales 14 15 16 17 18 --enron
    .venv/bin/python -m bench.bench_wcoj --kernel --scales 12 13 14 --queries triangles

Results go to stdout as a table and to ``bench/results/wcoj.json`` (``--kernel``:
``wcoj_kernel.json``; ``--out``), with the command, the faq commit and the load
average (:class:`bench.common.Run`).
Counts are checked: every method that finishes must agree.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import numpy as np

from bench.common import RESULTS as RESULTS_DIR
from bench.common import SNAP_GRAPH, Memory, PeakSampler, Run, graph_path, log, machine_pss_mb
from faq.graphs.edges import simple_directed
from faq.io import read_edge_list
from faq.joins import VALUE_COLUMN, Aggregation, Frame
from faq.joins import generic as generic_module
from faq.joins import kernel as kernel_module
from faq.semirings import COUNTING
from faq.spark import get_session

RESULTS = RESULTS_DIR / "wcoj.json"
KERNEL_RESULTS = RESULTS_DIR / "wcoj_kernel.json"

# DuckDB, Kùzu and scipy on rmat17 feed-forward triangles, as quoted in issue 3 (not measured here).
QUOTED_RMAT17 = {"duckdb": 26.8, "kuzu": 15.6, "scipy": 19.7}

# Spark methods timed through faq.joins.generic (see generic_count).
GENERIC_METHODS = ("broadcast", "broadcast_executors", "broadcast_listing", "shuffle")
METHODS = (*GENERIC_METHODS, "job", "binary", "duckdb", "graphblas")
# Methods that load the edge file themselves and time it on their own clock.
SELF_LOADING = ("job", "duckdb", "graphblas")
# Methods run outside Spark on the edge file, timing their own load.
LOCAL_METHODS = ("duckdb", "graphblas")

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


def generic_count(edges_df, pattern, method: str) -> tuple[int, str]:
    """(count, the join's note): bindings counted with the generic join as InsideOut's executor
    runs it: the join, then ⊕ (sum).

    ``broadcast`` is told the product is summed to a scalar (it aggregates
    inside its tasks); ``broadcast_executors`` too, with its index built on
    the executors from Parquet inputs (:mod:`faq.joins.executor_index`) rather
    than on the driver; ``broadcast_listing`` and ``shuffle`` list every binding
    and Spark sums them.  Every use reads the edge table in the attribute
    order (``(a, b)``, ``(a, c)``, ... with ``a < b < c``), so they share one
    index, as the planner decides for InsideOut
    (:func:`faq.insideout.physical.shared_indexes`).
    """
    from pyspark.sql import functions as F

    from faq.scratch import scratch_directory
    from faq.scope import Scope

    strategy = "broadcast" if method.startswith("broadcast") else method
    aggregate = Aggregation((), COUNTING) if method in ("broadcast", "broadcast_executors") else None
    index_dir = scratch_directory() if method == "broadcast_executors" else None
    frames = [Frame(edges_df.toDF(x, y, VALUE_COLUMN), (x, y)) for x, y in pattern]
    order = list(dict.fromkeys(v for p in pattern for v in p))
    shared = [list(range(len(pattern)))] if all(order.index(x) < order.index(y) for x, y in pattern) else None
    with Scope() as scope:  # removes the executors' Parquet inputs
        out = generic_module.generic_join(frames, [], COUNTING, order, strategy=strategy, aggregate=aggregate,
                                          shared=shared, index_dir=index_dir, scope=scope)
        if aggregate is not None and "⊕" not in out.note:
            raise RuntimeError(f"asked to aggregate in the tasks, but: {out.note}")
        total = out.df.agg(F.sum(VALUE_COLUMN)).first()[0]
    return int(total or 0), out.note


def job_count(path: Path, pattern) -> tuple[Optional[int], str, float, float]:
    """(count, the join's note, seconds, load seconds): ``faq.count_triangles(path, directed=True)``, its own clock."""
    import faq
    from faq.insideout.executor import StepEvent

    if pattern != PATTERNS["triangles"]:
        return None, "job: triangles only", 0.0, 0.0
    events: list = []
    result = faq.count_triangles(str(path), directed=True, progress=events.append)
    notes = [e.note for e in events if isinstance(e, StepEvent) and e.kind == "done" and e.note]
    return result.count, "; ".join(notes), result.seconds, result.load_seconds


def _delimiter(path: Path) -> str:
    """The column separator of an edge list (tab or space), from its first data line."""
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                return "\\t" if "\t" in line else " "
    return " "


def duckdb_count(path: Path, pattern, timeout: float = math.inf) -> tuple[int | None, float | None, float | None, str]:
    """(count, seconds, query seconds, note): DuckDB on the same file, 2 threads, in memory.

    ``seconds`` covers loading the edge list, dropping self-loops and repeated
    edges, and the query (GraphFrames' plan as SQL; DuckDB plans it itself);
    ``query seconds`` the query alone.  A query still running ``timeout``
    seconds after the start is interrupted: count None, ``seconds`` the time
    until then (a lower bound), note ``"timed out"``.
    """
    try:
        import duckdb
    except ImportError:
        return None, None, None, "duckdb not importable (pip install -e '.[bench]'): skipped"
    con = duckdb.connect()
    try:
        con.execute("PRAGMA threads=2")
        con.execute("SET enable_progress_bar = false")
        t0 = time.perf_counter()
        delimiter = _delimiter(path)
        con.execute(
            f"CREATE TABLE e AS SELECT DISTINCT column0 AS src, column1 AS dst "
            f"FROM read_csv('{path}', delim='{delimiter}', header=false, comment='#', "
            f"columns={{'column0':'BIGINT','column1':'BIGINT'}}, auto_detect=false) "
            f"WHERE column0 <> column1"
        )
        t1 = time.perf_counter()
        timer = threading.Timer(max(0.0, timeout - (t1 - t0)), con.interrupt) if math.isfinite(timeout) else None
        if timer is not None:
            timer.start()
        try:
            n = con.execute(sql_of(pattern, "e")).fetchone()[0]
        except duckdb.InterruptException:
            return None, time.perf_counter() - t0, None, "timed out"
        finally:
            if timer is not None:
                timer.cancel()
        t2 = time.perf_counter()
    finally:
        con.close()
    return int(n), t2 - t0, t2 - t1, f"DuckDB {duckdb.__version__}, 2 threads, load + distinct + query"


def graphblas_count(path: Path, pattern, threads: int = 2) -> tuple[int | None, float | None, float | None, str]:
    """(count, load seconds, count seconds, note): SuiteSparse:GraphBLAS on the same file, feed-forward triangles.

    Load: ``pyarrow.csv`` (multi-threaded; ``#`` comment lines first, as SNAP's
    and R-MAT's files have them), then the simple digraph A: repeated edges
    merged by ``from_coo`` (a scalar value: duplicates are ignored), self-loops dropped by ``offdiag``.
    Count: Σ_{a→c ∈ A} (A·A)[a, c] under plus_pair, masked by A's structure.
    """
    if pattern != PATTERNS["triangles"]:
        return None, None, None, "graphblas: triangles only"
    try:
        import graphblas as gb
    except ImportError:
        return None, None, None, "python-graphblas not importable (pip install -e '.[bench]'): skipped"
    import pyarrow as pa
    import pyarrow.csv as pcsv

    gb.ss.config["nthreads"] = threads
    t0 = time.perf_counter()
    skip = 0
    opener = __import__("gzip").open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            if line.strip() and not line.startswith(("#", "%")):
                break
            skip += 1
    delimiter = "\t" if _delimiter(path) == "\\t" else " "
    table = pcsv.read_csv(
        pa.input_stream(str(path), compression="detect"),
        read_options=pcsv.ReadOptions(column_names=["s", "d"], skip_rows=skip),
        parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"s": pa.int64(), "d": pa.int64()}, include_columns=["s", "d"]),
    )
    src, dst = table.column(0).to_numpy(), table.column(1).to_numpy()
    n = int(max(src.max(), dst.max())) + 1
    a = gb.Matrix.from_coo(src, dst, 1, dtype="INT64", nrows=n, ncols=n)  # a scalar value: repeats ignored
    a = gb.select.offdiag(a).new()
    a.wait()
    t1 = time.perf_counter()
    count = a.mxm(a, gb.semiring.plus_pair).new(mask=a.S).reduce_scalar().new().value
    t2 = time.perf_counter()
    version = ".".join(map(str, gb.ss.about["library_version"]))
    return int(count), t1 - t0, t2 - t1, (
        f"SuiteSparse:GraphBLAS {version} (python-graphblas {gb.__version__}), {threads} threads, "
        "load (pyarrow.csv + from_coo + offdiag) + masked plus_pair A·A"
    )


def faq_load(spark, path: Path, engine: str):
    """(cached simple digraph, edges, seconds): faq reading, cleaning and caching the edge file.

    ``auto``: :func:`faq.graphs.edges.prepared_graph` (the driver path where it
    applies); ``spark``: ``simple_directed(read_edge_list(path, engine="spark"))``,
    the load before the driver path existed.
    """
    from faq.graphs.edges import prepared_graph

    t0 = time.perf_counter()
    if engine == "auto":
        prepared = prepared_graph(str(path), directed=True, spark=spark)
    else:
        prepared = simple_directed(read_edge_list(str(path), spark=spark, engine="spark"))
    cached = prepared.df.select("src", "dst", prepared.value).persist()
    n_edges = cached.count()
    return cached, n_edges, time.perf_counter() - t0


# --- kernel micro-benchmark (numpy only, one process, no Spark) --------------------------


def load_simple_digraph(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) of the simple digraph of an edge-list file, in numpy."""
    import pandas as pd

    table = pd.read_csv(path, sep=r"\s+", comment="#", header=None, usecols=[0, 1], dtype=np.int64, engine="c")
    pairs = table.to_numpy()
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.unique(pairs, axis=0)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def kernel_variants() -> dict:
    """name -> (aggregate in tasks, hash-index validation, compiled loop)."""
    return {
        "listing+searchsorted": (False, False, False),  # the strategy before task aggregation
        "listing+hash": (False, True, False),
        "aggregate+searchsorted": (True, False, False),
        "aggregate+hash": (True, True, False),
        "aggregate+compiled": (True, False, True),  # faq/joins/compiled.py (numba)
    }


def kernel_time(src: np.ndarray, dst: np.ndarray, pattern, aggregate: bool, hashed: bool,
                compiled: bool = False) -> tuple[int, float]:
    """(count, seconds) of one broadcast task running every seed of ``pattern`` over the edges.

    The index (tries, seeds) is built outside the timing, as on the driver;
    the hash indexes are built inside it, as in the tasks.
    """
    import pyarrow as pa

    from faq.joins import Aggregation, csr
    from faq.semirings.numpy_backend import numpy_ops

    order = list(dict.fromkeys(v for p in pattern for v in p))
    attributes, groups, collected = [], {}, []
    for x, y in pattern:
        forward = order.index(x) < order.index(y)
        attributes.append((x, y) if forward else (y, x))
        key = "forward" if forward else "reverse"
        if key not in groups:
            groups[key] = []
            collected.append(([src, dst] if forward else [dst, src], np.ones(len(src), dtype=np.int64)))
        groups[key].append(len(attributes) - 1)
    group_list = list(groups.values())
    keep = Aggregation((), COUNTING)
    ops = numpy_ops(COUNTING, COUNTING) if aggregate else None
    saved = csr.HASH_MAX_SLOTS
    csr.HASH_MAX_SLOTS = saved if hashed else 0
    try:
        kernel, seeds, _ = kernel_module.build_kernel(
            attributes, group_list, collected, order, order, COUNTING, keep if aggregate else None, ops
        )
        kernel.compiled = kernel.compiled and compiled  # the numpy variants run numpy
        if compiled:  # numba compiles (or loads its cache) outside the timing
            from faq.joins.compiled import aggregate_seeds

            aggregate_seeds(kernel, np.arange(min(seeds, 1)))
        ids = pa.RecordBatch.from_arrays([pa.array(np.arange(seeds, dtype=np.int64))], names=["id"])
        t0 = time.perf_counter()
        count = 0
        for batch in kernel_module.run_kernel(iter([ids]), kernel):
            count += int(batch.column(0).to_numpy().sum()) if aggregate else batch.num_rows
        return count, time.perf_counter() - t0
    finally:
        csr.HASH_MAX_SLOTS = saved


def graph_names(args) -> list[str]:
    """The R-MAT scales' names, then the SNAP graph with ``--enron``."""
    return [f"rmat{s}" for s in args.scales] + ([SNAP_GRAPH] if args.enron else [])


def kernel_benchmark(args, run: Run) -> None:
    """Time the broadcast kernel's variants on each graph, interleaved, best of ``--repeat``."""
    rows = []
    for name in graph_names(args):
        src, dst = load_simple_digraph(graph_path(name))
        for query in args.queries:
            times: dict[str, list[float]] = {v: [] for v in kernel_variants()}
            counts = {}
            for _ in range(args.repeat):
                for variant, (aggregate, hashed, compiled) in kernel_variants().items():
                    counts[variant], seconds = kernel_time(src, dst, PATTERNS[query], aggregate, hashed, compiled)
                    times[variant].append(seconds)
            if len(set(counts.values())) > 1:
                raise RuntimeError(f"{name} {query}: kernel variants disagree: {counts}")
            base = min(times["listing+searchsorted"])
            for variant, ts in times.items():
                row = {
                    "graph": name, "query": query, "edges": len(src), "variant": variant,
                    "count": counts[variant], "best_seconds": round(min(ts), 4),
                    "median_seconds": round(float(np.median(ts)), 4),
                    "speedup_vs_listing_searchsorted": round(base / min(ts), 2),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    run["meta"] = {"what": "one broadcast task (single thread) over all seeds, numpy only; best of --repeat, interleaved"}
    run["rows"] = rows
    print(f"results: {run.save(Path(args.out))}")


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
        elif method in GENERIC_METHODS:
            counts.add(generic_count(df, pattern, method)[0])
    df.unpersist()
    if "job" in methods:  # the user's call reads a file: the same graph, written as an edge list
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("".join(f"{a}\t{b}\n" for a, b in pairs))
        counts.add(job_count(Path(handle.name), pattern)[0])
        Path(handle.name).unlink()
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


def write_results(args, spark, run: Run, rows: list, fits: dict, notes: list) -> Path:
    """Write the rows so far (the file is rewritten after every query, so a cut run keeps its rows)."""
    run["meta"] = {
        "master": args.master,
        "cores": run.record["cpus"],
        "spark": spark.version,
        "timeout_seconds": args.timeout,
        "batch_rows": kernel_module.BATCH_ROWS,
        "quoted_rmat17_triangles_seconds": QUOTED_RMAT17,
        "notes": notes,
    }
    run["rows"] = rows
    run["growth_exponents"] = fits
    return run.save(Path(args.out))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[14, 15, 16, 17, 18])
    parser.add_argument("--enron", action="store_true", help=f"also SNAP email-Enron (tests/data/{SNAP_GRAPH})")
    parser.add_argument("--quick", action="store_true", help="scales 14 and 15, triangles and 4-cliques")
    parser.add_argument("--queries", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a Spark run is cancelled")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument(
        "--load-engine", choices=["both", "auto", "spark"], default="both",
        help="faq's load of each graph: the driver path (auto), the Spark path, or both timed (the driver "
        "path's result is used; default %(default)s)",
    )
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up run (JIT, Python workers)")
    parser.add_argument(
        "--kernel", action="store_true",
        help="no Spark: time one broadcast task's numpy kernel (listing vs aggregating, binary search vs hash)",
    )
    parser.add_argument(
        "--repeat", type=int, default=None,
        help="runs per method, in rounds of every method in turn: the median is reported "
        "(default 1; --kernel: 3, the best is reported)",
    )
    args = parser.parse_args(argv)
    run = Run("bench_wcoj", argv)
    if args.quick:
        args.scales = [14, 15]
    if args.repeat is None:
        args.repeat = 3 if args.kernel else 1
    if args.kernel:
        if args.out == str(RESULTS):
            args.out = str(KERNEL_RESULTS)
        kernel_benchmark(args, run)
        return 0

    spark = get_session(
        args.master,
        config={"spark.sql.shuffle.partitions": "8", "spark.driver.memory": args.driver_memory},
    )
    memory = Memory(spark)
    jvm = memory.jvm
    # (query, method) that timed out on a smaller graph: not run on the larger ones.
    gave_up: dict[tuple[str, str], str] = {}
    if not args.no_warmup:
        warm_up(spark, args.methods)
    graphs = graph_names(args)
    rows = []
    notes = []
    for name in graphs:
        path = graph_path(name)
        loads: dict[str, float] = {}
        if args.load_engine in ("both", "spark"):
            cached, n_edges, loads["spark"] = faq_load(spark, path, "spark")
            if args.load_engine == "both":
                cached.unpersist()
        if args.load_engine in ("both", "auto"):
            cached, n_edges, loads["auto"] = faq_load(spark, path, "auto")
        log(f"[{name}] faq load: " + ", ".join(f"{k} {v:.2f} s" for k, v in loads.items()))
        cached.createOrReplaceTempView("e")
        for query in args.queries:
            pattern = PATTERNS[query]
            runs: dict[str, list[float]] = {m: [] for m in args.methods}
            info: dict[str, dict] = {m: {} for m in args.methods}
            stopped: set[str] = set()
            # Rounds of every method in turn (not all runs of one method, then the next):
            # load from other processes then weighs on every method alike.
            for method in args.methods:
                if (query, method) in gave_up:
                    stopped.add(method)
                    info[method]["skipped"] = f"timed out on {gave_up[query, method]}, a smaller graph"
            for round_ in range(args.repeat):
                for method in args.methods:
                    if method in stopped:
                        continue
                    if method in LOCAL_METHODS:
                        if method == "duckdb":
                            n, seconds, query_seconds, note = duckdb_count(path, pattern, args.timeout)
                            if note == "timed out":
                                info[method].update(count=None, timed_out=True)
                                stopped.add(method)
                                gave_up[query, method] = name
                                runs[method].append(seconds)
                                log(f"[{name} {query}] round {round_ + 1}: {method} timed out after {seconds:.0f} s")
                                continue
                        else:
                            n, load_seconds, query_seconds, note = graphblas_count(path, pattern)
                            seconds = None if n is None else load_seconds + query_seconds
                            if n is not None:
                                info[method].setdefault("load_runs", []).append(load_seconds)
                        if n is None:
                            if note not in notes:
                                notes.append(note)
                            stopped.add(method)
                            continue
                        info[method].setdefault("query_runs", []).append(query_seconds)
                        info[method].update(count=n, note=note)
                    else:
                        if method == "job":
                            if pattern != PATTERNS["triangles"]:
                                stopped.add(method)
                                continue
                            fn = lambda: job_count(path, pattern)  # noqa: E731
                        elif method == "binary":
                            fn = lambda: int(spark.sql(sql_of(pattern, "e")).first()["n"])  # noqa: E731
                        else:
                            fn = lambda m=method: generic_count(cached, pattern, m)  # noqa: E731
                        memory.reset()
                        with PeakSampler(lambda: {"pss": machine_pss_mb(jvm)}) as machine:
                            found, seconds, timed_out = run_with_timeout(spark, fn, args.timeout)
                        peaks = {**memory.peaks(), "machine_pss_peak_mb": round(machine.peaks["pss"])}
                        if method == "job" and found is not None:  # its own clock, load included
                            n, join_note, seconds, own_load = found
                            info[method].setdefault("load_runs", []).append(own_load)
                        else:
                            n, join_note = found if isinstance(found, tuple) else (found, None)
                        if join_note:
                            info[method]["join_note"] = join_note
                        for key, value in peaks.items():
                            old = info[method].get(key)
                            info[method][key] = value if old is None or value is None else max(old, value)
                        info[method].update(count=n, timed_out=timed_out)
                        if timed_out:
                            stopped.add(method)
                            gave_up[query, method] = name
                    runs[method].append(seconds)
                    log(f"[{name} {query}] round {round_ + 1}: {method} {seconds:.2f} s")
            results = {}
            for method in args.methods:
                if not runs[method]:
                    if info[method].get("skipped"):
                        rows.append({"graph": name, "query": query, "edges": n_edges, "method": method,
                                     "count": None, "seconds": None, "skipped": info[method]["skipped"]})
                    continue
                extra = dict(info[method])
                query_runs = extra.pop("query_runs", None)
                load_runs = extra.pop("load_runs", None)
                timed_out = extra.get("timed_out", False)
                seconds = runs[method][-1] if timed_out else float(np.median(runs[method]))
                row = {"graph": name, "query": query, "edges": n_edges, "method": method,
                       "count": extra.pop("count"), "seconds": round(seconds, 2), **extra}
                if query_runs:
                    row["query_seconds"] = round(float(np.median(query_runs)), 2)
                if load_runs:
                    row["load_seconds"] = round(float(np.median(load_runs)), 2)
                if method == "job" and not timed_out:
                    row["end_to_end_seconds"] = row["seconds"]
                if method not in SELF_LOADING:  # faq's load of this graph, once per graph (see faq_load)
                    if "auto" in loads:
                        row["load_seconds"] = round(loads["auto"], 2)
                    if "spark" in loads:
                        row["load_seconds_spark"] = round(loads["spark"], 2)
                    if not timed_out and loads:
                        row["end_to_end_seconds"] = round(seconds + loads.get("auto", loads.get("spark")), 2)
                if len(runs[method]) > 1:
                    row["runs_seconds"] = [round(r, 2) for r in runs[method]]
                results[method] = row
                rows.append(row)
                print(json.dumps(row), flush=True)
            counts = {m: r["count"] for m, r in results.items() if r.get("count") is not None}
            if len(set(counts.values())) > 1:
                raise RuntimeError(f"{name} {query}: methods disagree: {counts}")
            base = results.get("binary")
            for m, r in results.items():
                if base and m != "binary" and r.get("seconds"):
                    ratio = base["seconds"] / r["seconds"]
                    r["speedup_vs_binary"] = round(ratio, 2)
                    r["speedup_is_lower_bound"] = bool(base.get("timed_out"))
            listing, aggregated = results.get("broadcast_listing"), results.get("broadcast")
            if listing and aggregated and aggregated.get("seconds") and not listing.get("timed_out"):
                aggregated["speedup_vs_broadcast_listing"] = round(listing["seconds"] / aggregated["seconds"], 2)
            write_results(args, spark, run, rows, {}, notes)  # progress: complete rows so far
        cached.unpersist()

    fits = {}
    for query in args.queries:
        for method in args.methods:
            for key, suffix in (("seconds", ""), ("end_to_end_seconds", " end-to-end")):
                points = [
                    (r["edges"], r[key])
                    for r in rows
                    if r["query"] == query and r["method"] == method and r["graph"].startswith("rmat")
                    and not r.get("timed_out") and r.get(key)
                ]
                if points or not suffix:
                    fits[f"{query}/{method}{suffix}"] = fit_exponent(points)

    out = write_results(args, spark, run, rows, fits, notes)
    print()
    header = (
        f"{'graph':9} {'query':9} {'edges':>9} {'method':17} {'count':>12} {'seconds':>9} {'xbinary':>8} "
        f"{'xlisting':>8} {'JVM MB':>7} {'py MB':>7} {'PSS MB':>7} {'load s':>7} {'e2e s':>7}"
    )
    print(header)
    for r in rows:
        seconds = "skipped" if r.get("skipped") else f"{'>' if r.get('timed_out') else ''}{r['seconds']}"
        speed = r.get("speedup_vs_binary")
        speed = "" if speed is None else f"{'≥' if r.get('speedup_is_lower_bound') else ''}{speed}"
        listing = r.get("speedup_vs_broadcast_listing") or ""
        count = "" if r.get("count") is None else r["count"]
        print(
            f"{r['graph']:9} {r['query']:9} {r['edges']:>9} {r['method']:17} {count:>12} {seconds:>9} {speed:>8} "
            f"{listing:>8} {r.get('jvm_peak_mb') or '':>7} {r.get('python_workers_peak_mb') or '':>7} "
            f"{r.get('machine_pss_peak_mb') or '':>7} "
            f"{r.get('load_seconds') or '':>7} {r.get('end_to_end_seconds') or '':>7}"
        )
    print()
    for key, value in fits.items():
        if value is not None:
            print(f"growth exponent (time ~ edges^k) {key}: k = {value:.2f}")
    for note in notes:
        print("note:", note)
    print(f"results: {out}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
