"""One-shot as-of joins: faq in-process against pandas and DuckDB, and from Spark DataFrames against Spark's ways.

Issue 40's targets, every baseline in the same run:

1. **In-process**, ``--rows`` × ``--rows`` (default 5M × 5M) on ``--keys`` (1,000) keys, int64 times:
   ``faq.asof.tables.asof_tables`` on Arrow tables (the join and its sort, not reading) against
   ``pandas.merge_asof`` (its two sorts included, as pandas needs sorted sides) and DuckDB's
   ``ASOF JOIN`` on the same Arrow tables with 2 threads and polars' ``join_asof`` with its two sorts (when
   they are installed: ``make bench-deps``).  Target: faq within DuckDB's and polars' time.
2. **From Spark DataFrames** (``spark.read.parquet`` of the same rows, ``--spark-rows`` each, default 1M):
   ``faq.asof_join`` with the default placement, forced to the driver and forced to the executors
   (per key partition, :mod:`faq.asof.on_spark`), against Spark's window way
   (a plain-Spark window query written in :func:`bench.bench_asof.spark_window`, independent of faq;
   bench/bench_asof_spark.py compares faq's priced ways with it in more detail); and, at ``--ps-rows`` each (default 10,000: it is
   slow, a correlated subquery -- 50,000 rows did not finish in 10 minutes here), ``pyspark.pandas.merge_asof``
   beside ``faq.asof_join`` on the same rows. Target: faq ≥ 10× faster than ``pyspark.pandas.merge_asof``.

3. **Maintained** (``--maintained-rows`` per side, default 5M: a 10M-row history): ``--batches`` batches
   of 1,000 changes (450 quote inserts, 50 quote deletions, 500 trade inserts; 10% of the inserts late,
   at a random time of the history, the rest at the advancing present) through
   ``faq.asof_join(..., maintained=True)``; median, p99 and max a batch, changes a second, against
   recomputing the one-shot join over the rows present. Targets: median ≤ 10 ms, ≥ 100,000 changes/s,
   ≥ 100× faster than recomputing.

Every result is checked: the matched right values equal pandas' row for row (in-process), the Spark
results' sums of matched values equal pandas' (a checksum over every row), and the maintained answer
after the last batch equals the recomputation row for row.

    python -m bench.bench_asof                      # 5M x 5M in-process, 1M x 1M from Parquet
    python -m bench.bench_asof --rows 1000000 --spark-rows 200000 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, log, print_summary, seeded_parser, timed_checked


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                      out=str(RESULTS / "asof.json"))
    p.add_argument("--rows", type=int, default=5_000_000, help="rows of each side, in-process")
    p.add_argument("--keys", type=int, default=1000)
    p.add_argument("--spark-rows", type=int, default=1_000_000, help="rows of each side from Parquet (0 skips)")
    p.add_argument("--ps-rows", type=int, default=10_000, help="rows of each side for pyspark.pandas.merge_asof")
    p.add_argument("--maintained-rows", type=int, default=5_000_000, help="rows of each side's history (0 skips)")
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--skip-one-shot", action="store_true", help="only the maintained part")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--master", default="local[2]")
    return p.parse_args(argv)


def sides(rows: int, keys: int, seed: int):
    """Trades and quotes: times in [0, 10 rows), keys uniform, one value column each.  Quote times are
    distinct (Spark has no row order to break ties by, so the Spark results are checked without ties;
    the in-process join matches pandas on ties too: tests/test_asof.py)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    left = pa.table({"time": rng.integers(0, 10 * rows, rows), "sym": rng.integers(0, keys, rows),
                     "qty": rng.integers(1, 100, rows)})
    right = pa.table({"time": rng.permutation(np.arange(rows) * 10 + rng.integers(0, 10, rows)), "sym": rng.integers(0, keys, rows),
                      "px": rng.random(rows)})
    return left, right


def pandas_expected(left, right) -> np.ndarray:
    """pandas.merge_asof's matched prices in left's order (NaN: no match), and its seconds."""
    import pandas as pd

    lp = left.to_pandas()
    lp["__i"] = np.arange(len(lp))
    out = pd.merge_asof(lp.sort_values("time", kind="stable"), right.to_pandas().sort_values("time", kind="stable"),
                        on="time", by="sym")
    px = np.full(len(lp), np.nan)
    px[out["__i"].to_numpy()] = out["px"].to_numpy()
    return px


def in_process(args, record: dict) -> None:
    import pandas as pd

    from faq.asof.tables import asof_tables

    left, right = sides(args.rows, args.keys, args.seed)
    log(f"in-process: {args.rows:,} x {args.rows:,} rows, {args.keys} keys")
    started = time.perf_counter()
    expected = pandas_expected(left, right)
    log(f"  pandas oracle: {time.perf_counter() - started:.2f} s")

    def same(px) -> None:
        got = np.asarray(px, dtype=np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(expected)) and np.array_equal(
            got[~np.isnan(got)], expected[~np.isnan(expected)]), "faq differs from pandas.merge_asof"

    record["faq_in_process"] = timed_checked(
        lambda: asof_tables(left, right, on="time", by="sym").column("px").to_numpy(zero_copy_only=False),
        args.repeat, same, "faq asof_tables (Arrow in, Arrow out)")
    lp, rp = left.to_pandas(), right.to_pandas()

    def pandas_join():
        return pd.merge_asof(lp.sort_values("time", kind="stable"), rp.sort_values("time", kind="stable"),
                             on="time", by="sym")

    record["pandas_merge_asof"] = timed_checked(pandas_join, args.repeat, lambda out: None,
                                                "pandas merge_asof (with its sorts)")
    try:
        import duckdb
    except ImportError:
        record["duckdb"] = {"skipped": "duckdb is not installed (make bench-deps)"}
        return
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    con.register("l", left)
    con.register("r", right)
    query = "SELECT l.time, l.sym, l.qty, r.px FROM l ASOF LEFT JOIN r ON l.sym = r.sym AND l.time >= r.time"

    def duck():
        return con.sql(query).to_arrow_table()  # no extra copy (DuckDB's advice)

    def duck_same(table) -> None:
        assert table.num_rows == args.rows
        got = np.nan_to_num(np.asarray(table.column("px").to_numpy(zero_copy_only=False), dtype=np.float64))
        assert abs(got.sum() - np.nansum(expected)) <= 1e-6 * max(1.0, abs(np.nansum(expected))), "duckdb differs"

    record["duckdb"] = timed_checked(duck, args.repeat, duck_same, "DuckDB ASOF JOIN (2 threads, Arrow out)")
    record["duckdb"]["version"] = duckdb.__version__
    _polars(args, record, left, right, expected)


def _polars(args, record: dict, left, right, expected: np.ndarray) -> None:
    """polars' ``join_asof`` (backward, by key) on the same Arrow tables, its two sorts included (it needs
    both sides sorted by time), when polars is installed (``make bench-deps``)."""
    try:
        import polars as pl
    except ImportError:
        record["polars"] = {"skipped": "polars is not installed (make bench-deps)"}
        return
    lpl, rpl = pl.from_arrow(left), pl.from_arrow(right)

    def polars_join():
        return lpl.sort("time").join_asof(rpl.sort("time"), on="time", by="sym", strategy="backward")

    def polars_same(frame) -> None:
        assert frame.height == args.rows
        got = frame.get_column("px").fill_null(0.0).to_numpy()
        assert abs(got.sum() - np.nansum(expected)) <= 1e-6 * max(1.0, abs(np.nansum(expected))), "polars differs"

    record["polars"] = timed_checked(polars_join, args.repeat, polars_same, "polars join_asof (with its sorts)")
    record["polars"]["version"] = pl.__version__


def spark_window(left, right):
    """The baseline a Spark user writes: both sides in one union, a running ``last(ignorenulls)`` of the
    quote's price over a window by key sorted by time (quotes before trades at equal times: exact matches)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    union = left.select("time", "sym", "qty", F.lit(None).cast("double").alias("px"), F.lit(1).alias("side")) \
        .unionByName(right.select("time", "sym", F.lit(None).cast("long").alias("qty"), "px", F.lit(0).alias("side")))
    running = Window.partitionBy("sym").orderBy("time", "side").rowsBetween(Window.unboundedPreceding, 0)
    return union.withColumn("px", F.last("px", ignorenulls=True).over(running)).where("side = 1").drop("side")


def from_spark(args, record: dict) -> None:
    import pyarrow.parquet as pq

    from faq.spark import get_session

    import faq

    spark = get_session(master=args.master)
    left, right = sides(args.spark_rows, args.keys, args.seed + 1)
    expected = pandas_expected(left, right)
    checksum = float(np.nansum(expected))
    tmp = Path(tempfile.mkdtemp(prefix="faq-asof-"))
    pq.write_table(left, tmp / "left.parquet")
    pq.write_table(right, tmp / "right.parquet")
    ldf, rdf = spark.read.parquet(str(tmp / "left.parquet")), spark.read.parquet(str(tmp / "right.parquet"))
    log(f"from Parquet: {args.spark_rows:,} x {args.spark_rows:,} rows")

    def total(df) -> float:
        from pyspark.sql import functions as F

        return df.agg(F.sum("px"), F.count("*")).first()

    def check(row) -> None:
        assert row[1] == args.spark_rows, f"{row[1]} rows, not {args.spark_rows}"
        assert abs((row[0] or 0.0) - checksum) <= 1e-6 * max(1.0, abs(checksum)), "the matched prices differ"

    runs = record.setdefault("spark", {"rows": args.spark_rows, "master": args.master})
    for name, placement in (("faq_default", None), ("faq_driver", "driver"), ("faq_executors", "executors")):
        runs[name] = timed_checked(lambda p=placement: total(faq.asof_join(ldf, rdf, on="time", by="sym", placement=p)),
                                   args.repeat, check, f"faq.asof_join placement={placement or 'default'}")
    runs["spark_window"] = timed_checked(lambda: total(spark_window(ldf, rdf)), args.repeat, check,
                                         "plain Spark window (bench.bench_asof.spark_window)")
    small(args, record, spark, tmp)


def small(args, record: dict, spark, tmp: Path) -> None:
    """pyspark.pandas.merge_asof and faq.asof_join (default placement) on the same ``--ps-rows`` rows."""
    import pyarrow.parquet as pq
    import pyspark.pandas as ps

    import faq

    rows = args.ps_rows
    left, right = sides(rows, args.keys, args.seed + 2)
    expected = float(np.nansum(pandas_expected(left, right)))
    pq.write_table(left, tmp / "small_left.parquet")
    pq.write_table(right, tmp / "small_right.parquet")
    log(f"pyspark.pandas beside faq: {rows:,} x {rows:,} rows from Parquet")

    def check(row) -> None:
        assert row[1] == rows and abs((row[0] or 0.0) - expected) <= 1e-6 * max(1.0, abs(expected)), "differs"

    def total(df):
        from pyspark.sql import functions as F

        return df.agg(F.sum("px"), F.count("*")).first()

    def ps_join():
        pl, pr = (ps.read_parquet(str(tmp / n)) for n in ("small_left.parquet", "small_right.parquet"))
        return total(ps.merge_asof(pl.sort_values("time"), pr.sort_values("time"), on="time", by="sym").to_spark())

    ldf, rdf = (spark.read.parquet(str(tmp / n)) for n in ("small_left.parquet", "small_right.parquet"))
    runs = record.setdefault("small", {"rows": rows})
    runs["faq_default"] = timed_checked(lambda: total(faq.asof_join(ldf, rdf, on="time", by="sym")), args.repeat,
                                        check, "faq.asof_join (default placement)")
    runs["pyspark_pandas_merge_asof"] = timed_checked(ps_join, max(1, args.repeat - 1), check,
                                                      "pyspark.pandas.merge_asof")


def maintained(args, record: dict) -> None:
    import pyarrow as pa

    import faq
    from faq.asof.tables import asof_tables

    rows, keys = args.maintained_rows, args.keys
    rng = np.random.default_rng(args.seed + 3)
    left, right = sides(rows, keys, args.seed + 3)
    log(f"maintained: a history of {rows:,} + {rows:,} rows, {args.batches} batches of 1,000 changes")
    started = time.perf_counter()
    view = faq.asof_join(left, right, on="time", by="sym", maintained=True)
    build = time.perf_counter() - started
    gone = rng.choice(rows, 50 * args.batches, replace=False)  # history quotes deleted, 50 a batch
    right_inserts, left_inserts, seconds = [], [], []
    for b in range(args.batches):
        present = 10 * rows + 1000 * b

        def fresh(n, value):
            late = rng.random(n) < 0.1
            times = np.where(late, rng.integers(0, 10 * rows, n), present + rng.integers(0, 1000, n))
            return pa.table({"time": times, "sym": rng.integers(0, keys, n), value: value_column(value, n)})

        def value_column(value, n):
            return rng.random(n) if value == "px" else rng.integers(1, 100, n)

        quotes, trades = fresh(450, "px"), fresh(500, "qty")
        deleted = right.take(pa.array(gone[50 * b:50 * (b + 1)]))
        right_batch = pa.concat_tables([deleted.append_column("diff", pa.array(np.full(50, -1))),
                                        quotes.append_column("diff", pa.array(np.ones(450, dtype=np.int64)))])
        left_batch = trades.append_column("diff", pa.array(np.ones(500, dtype=np.int64)))
        t0 = time.perf_counter()
        view.apply(left=left_batch, right=right_batch)
        seconds.append(time.perf_counter() - t0)
        right_inserts.append(quotes)
        left_inserts.append(trades)
    keep = np.ones(rows, dtype=bool)
    keep[gone] = False
    current_right = pa.concat_tables([right.filter(pa.array(keep)), *right_inserts])
    current_left = pa.concat_tables([left, *left_inserts])
    t0 = time.perf_counter()
    expected = asof_tables(current_left, current_right, on="time", by="sym")
    recompute = time.perf_counter() - t0
    got = view.table()
    assert got.num_rows == expected.num_rows and got.column("px").equals(expected.column("px")) and \
        got.column("time").equals(expected.column("time")), "the maintained answer differs from the recomputation"
    ordered = sorted(seconds)
    median = statistics.median(seconds)
    record["maintained"] = {
        "history_rows": 2 * rows, "batch_changes": 1000, "late_share": 0.1, "batches": args.batches,
        "build_seconds": round(build, 3), "median_seconds": round(median, 5),
        "p99_seconds": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 5),
        "max_seconds": round(ordered[-1], 5), "first_batch_seconds": round(seconds[0], 5),
        "changes_per_second": round(1000 * len(seconds) / sum(seconds)),
        "changes_per_second_at_median": round(1000 / median),
        "recompute_seconds": round(recompute, 3), "recompute_over_median": round(recompute / median, 1),
        "checked_against_recomputation": True,
    }
    log(f"  median {median * 1e3:.2f} ms a batch (max {ordered[-1] * 1e3:.0f} ms), recompute {recompute:.2f} s")


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_asof", argv)
    run["machine"] = {"cores": os.cpu_count()}
    if not args.skip_one_shot:
        in_process(args, run.record)
        if args.spark_rows:
            from_spark(args, run.record)
    if args.maintained_rows:
        maintained(args, run.record)
    r = run.record
    met = {}
    if "maintained" in r:
        m = r["maintained"]
        met["maintained_median_10ms"] = m["median_seconds"] <= 0.010
        met["maintained_100k_changes_per_second"] = m["changes_per_second"] >= 100_000
        met["maintained_100x_recompute"] = m["recompute_over_median"] >= 100
    if "median_seconds" in r.get("duckdb", {}):
        met["in_process_within_duckdb"] = r["faq_in_process"]["median_seconds"] <= r["duckdb"]["median_seconds"]
        r["faq_over_duckdb"] = round(r["faq_in_process"]["median_seconds"] / r["duckdb"]["median_seconds"], 2)
    if "median_seconds" in r.get("polars", {}):
        met["in_process_within_polars"] = r["faq_in_process"]["median_seconds"] <= r["polars"]["median_seconds"]
        r["faq_over_polars"] = round(r["faq_in_process"]["median_seconds"] / r["polars"]["median_seconds"], 2)
    if "faq_in_process" in r:
        r["faq_over_pandas"] = round(r["faq_in_process"]["median_seconds"] / r["pandas_merge_asof"]["median_seconds"],
                                     3)
    if "small" in r:
        s = r["small"]
        ps_seconds = s["pyspark_pandas_merge_asof"]["median_seconds"]
        s["pyspark_pandas_over_faq"] = round(ps_seconds / s["faq_default"]["median_seconds"], 1)
        met["spark_10x_pyspark_pandas"] = ps_seconds >= 10 * s["faq_default"]["median_seconds"]
    r["targets_met"] = met
    out = run.save(Path(args.out))
    rows = []
    if "faq_in_process" in r:
        rows += [("faq in-process", f"{r['faq_in_process']['median_seconds']} s"),
                 ("pandas merge_asof", f"{r['pandas_merge_asof']['median_seconds']} s")]
    if "maintained" in r:
        rows += [("maintained batch (median)", f"{r['maintained']['median_seconds']} s"),
                 ("recompute", f"{r['maintained']['recompute_seconds']} s")]
    if "median_seconds" in r.get("duckdb", {}):
        rows.append(("DuckDB ASOF JOIN", f"{r['duckdb']['median_seconds']} s"))
    if "median_seconds" in r.get("polars", {}):
        rows.append(("polars join_asof", f"{r['polars']['median_seconds']} s"))
    for part in ("spark", "small"):
        for name, value in r.get(part, {}).items():
            if isinstance(value, dict) and "median_seconds" in value:
                rows.append((f"{part}: {name}", f"{value['median_seconds']} s"))
    print_summary(rows, met, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
