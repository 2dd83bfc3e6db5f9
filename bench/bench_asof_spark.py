"""The one-shot as-of join of Spark DataFrames: faq's priced ways against the plain Spark a user writes (issue 49).

Both sides are written once to Parquet and read with ``spark.read.parquet``; a backward as-of join of
``--rows`` × ``--rows`` rows on ``--keys`` keys (int64 times, right times distinct so every way gives the
same rows), its result consumed by one aggregate (count and the sum of the matched prices).  Columns:

* ``faq_default`` -- ``faq.asof_join`` as it comes (the priced choice, :mod:`faq.asof.costs`);
* ``faq_driver`` -- ``placement="driver"`` (fetched, joined in-process, handed back);
* ``faq_executors`` -- ``placement="executors"`` (the cheaper of the per-partition kernel and Spark's window);
* ``faq_kernel_on_executors`` -- the per-partition kernel forced (:func:`faq.asof.on_spark.asof_on_spark`);
* ``spark_window`` -- the baseline: Spark's window formulation written in plain PySpark (:func:`bench.bench_asof.spark_window`), as a user
  writes it (a union, a running ``last(ignorenulls)`` over a window sorted by time), independent of faq.

Every result is checked against pandas.merge_asof's: the same count and the same sum of matched prices.

    python -m bench.bench_asof_spark                            # 1M x 1M, 1,000 keys
    python -m bench.bench_asof_spark --rows 10000000 --repeat 2 # 10M x 10M
    python -m bench.bench_asof_spark --calibrate                # the constants of faq/asof/costs.py

``--calibrate`` times each way of :mod:`faq.asof.costs` alone (:func:`faq.asof.oneshot.run_way`) at
``--calibrate-rows`` (two sizes) and prints the fitted ``fixed + per_cell × cells`` of each (through the
fastest of the warm runs: on a shared machine, the run least disturbed by others' work).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, log, print_summary, seeded_parser


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                      out=str(RESULTS / "asof_spark.json"))
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of each side")
    p.add_argument("--keys", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3, help="warm runs of each way (after one cold run)")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--calibrate", action="store_true", help="fit the constants of faq/asof/costs.py instead")
    p.add_argument("--calibrate-rows", default="100000,1000000", help="the two sizes of --calibrate")
    return p.parse_args(argv)


def sides(rows: int, keys: int, seed: int):
    """Trades and quotes (bench.bench_asof's): quote times distinct, so no way depends on a tie rule."""
    from bench.bench_asof import sides as asof_sides

    return asof_sides(rows, keys, seed)


def written(left, right, directory: Path):
    """Both sides as Parquet files, once; their paths."""
    import pyarrow.parquet as pq

    paths = directory / "left.parquet", directory / "right.parquet"
    pq.write_table(left, paths[0])
    pq.write_table(right, paths[1])
    return paths


def compare(args, record: dict) -> None:
    """faq's ways and the plain-Spark baseline on the same Parquet inputs, each checked against pandas."""
    import faq
    from faq.asof.oneshot import run_way
    from faq.spark import get_session
    from bench.bench_asof import pandas_expected, spark_window

    spark = get_session(master=args.master)
    left, right = sides(args.rows, args.keys, args.seed)
    started = time.perf_counter()
    expected = pandas_expected(left, right)
    log(f"{args.rows:,} x {args.rows:,} rows, {args.keys} keys; pandas oracle {time.perf_counter() - started:.1f} s")
    checksum, matched = float(np.nansum(expected)), int(np.count_nonzero(~np.isnan(expected)))
    tmp = Path(tempfile.mkdtemp(prefix="faq-asof-spark-"))
    lpath, rpath = written(left, right, tmp)
    ldf, rdf = spark.read.parquet(str(lpath)), spark.read.parquet(str(rpath))

    def total(df):
        from pyspark.sql import functions as F

        return tuple(df.agg(F.count("*"), F.count("px"), F.sum("px")).first())

    def check(row) -> None:
        assert row[0] == args.rows and row[1] == matched, f"{row[0]} rows / {row[1]} matched, not {matched}"
        assert abs((row[2] or 0.0) - checksum) <= 1e-6 * max(1.0, abs(checksum)), "the matched prices differ"

    notes = {}
    options = dict(on="time", by=["sym"], direction="backward", allow_exact_matches=True, tolerance=None,
                   how="left", suffixes=("_x", "_y"), right_time=None)

    def faq_join(placement):
        return lambda: total(faq.asof_join(ldf, rdf, on="time", by="sym", placement=placement, progress=lambda e:
                                           notes.__setitem__(placement or "default", e.description)))

    ways = {"faq_default": faq_join(None), "faq_driver": faq_join("driver"), "faq_executors": faq_join("executors"),
            "faq_kernel_on_executors": lambda: total(run_way("executors", ldf, rdf, options)),
            "spark_window": lambda: total(spark_window(ldf, rdf))}
    record["runs"] = taking_turns(ways, args.repeat, check)
    record["plans"] = notes
    record["agreement"] = {"rows": args.rows, "matched": matched, "sum_px": round(checksum, 6),
                           "checked": "every run of every way: count, matched count and sum of px equal pandas'"}
    base = record["runs"]["spark_window"]["median_seconds"]
    record["faq_default_over_spark_window"] = round(record["runs"]["faq_default"]["median_seconds"] / base, 3)


def taking_turns(ways: dict, repeat: int, check) -> dict:
    """Each way once a round, one cold round then ``repeat`` warm ones (a shared machine's load falls on all
    alike), starting one way further on each round (:func:`bench.common.turn_order`: the garbage a driver
    placement's collect leaves falls on each way in turn); every result checked; the warm runs' median, min
    and max a way."""
    import statistics

    from bench.common import turn_order

    seconds = {name: [] for name in ways}
    cold = {}
    for round_ in range(repeat + 1):
        for name in turn_order(ways, round_):
            run = ways[name]
            started = time.perf_counter()
            result = run()
            took = time.perf_counter() - started
            check(result)
            (seconds[name].append(took) if round_ else cold.__setitem__(name, took))
    out = {}
    for name, warm in seconds.items():
        out[name] = {"cold_seconds": round(cold[name], 4), "median_seconds": round(statistics.median(warm), 4),
                     "min_seconds": round(min(warm), 4), "max_seconds": round(max(warm), 4), "runs": len(warm)}
        log(f"  {name}: {out[name]['median_seconds']} s (min {out[name]['min_seconds']}, max {out[name]['max_seconds']})")
    return out


def calibrate(args, record: dict) -> None:
    """Each way alone at two sizes, the ways taking turns (one run of each, ``--repeat`` rounds, after one
    cold round), so a shared machine's load falls on all alike; the line through each way's fastest run,
    per cell (faq/asof/costs.py)."""
    from pyspark.sql import functions as F

    from faq.asof import costs
    from faq.asof.oneshot import run_way
    from faq.spark import get_session

    spark = get_session(master=args.master)
    options = dict(on="time", by=["sym"], direction="backward", allow_exact_matches=True, tolerance=None,
                   how="left", suffixes=("_x", "_y"), right_time=None)
    measured = {way: {} for way in costs.WAYS}
    for rows in (int(s) for s in args.calibrate_rows.split(",")):
        left, right = sides(rows, args.keys, args.seed)
        lpath, rpath = written(left, right, Path(tempfile.mkdtemp(prefix="faq-asof-cal-")))
        ldf, rdf = spark.read.parquet(str(lpath)), spark.read.parquet(str(rpath))
        n = costs.cells(rows, rows, len(ldf.columns), len(rdf.columns), 1)
        seconds = {way: [] for way in costs.WAYS}
        for round_ in range(args.repeat + 1):
            for way in costs.WAYS:
                started = time.perf_counter()
                run_way(way, ldf, rdf, options).agg(F.count("*"), F.sum("px")).first()
                if round_:  # the first round is cold (plans compiled, Python workers started)
                    seconds[way].append(time.perf_counter() - started)
        for way in costs.WAYS:
            measured[way][n] = min(seconds[way])
            log(f"  {way} at {rows:,} x {rows:,} ({n:,.0f} cells): min {min(seconds[way]):.3f} s, "
                f"runs {[round(x, 2) for x in seconds[way]]}")
    fitted = {}
    for way, points in measured.items():
        (n0, s0), (n1, s1) = sorted(points.items())[:2]
        slope = (s1 - s0) / (n1 - n0)
        fitted[way] = {"fixed_seconds": round(s0 - slope * n0, 4), "seconds_per_cell": float(f"{slope:.3g}"),
                       "min_seconds_by_cells": {str(int(k)): round(v, 4) for k, v in points.items()}}
        log(f"  {way}: fixed {fitted[way]['fixed_seconds']} s, {fitted[way]['seconds_per_cell']} s a cell")
    record["calibration"] = fitted


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_asof_spark", argv)
    run["machine"] = {"cores": os.cpu_count(), "master": args.master}
    run["git_rev_parse_head"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                               cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    run["inputs"] = {"rows_each_side": args.rows, "keys": args.keys, "times": "int64, right times distinct",
                     "read_with": "spark.read.parquet", "direction": "backward", "warm_runs": args.repeat}
    if args.calibrate:
        calibrate(args, run.record)
        out = run.save(Path(tempfile.gettempdir()) / "asof_spark_calibration.json")  # for faq/asof/costs.py
        print_summary([(w, f"{v['fixed_seconds']} s + {v['seconds_per_cell']} s/cell")
                       for w, v in run.record["calibration"].items()], {}, out)
        return 0
    compare(args, run.record)
    from faq.asof import costs

    run["cost_model"] = {"fixed_seconds": costs.FIXED_SECONDS, "seconds_per_cell": costs.SECONDS_PER_CELL,
                         "priced_here": {w: round(p.seconds, 3) for w, p in costs.price(
                             args.rows, args.rows, 3, 3, 1).items()}}
    r = run.record
    r["targets_met"] = met = {"faq_default_not_slower_than_spark_window": r["faq_default_over_spark_window"] <= 1.0}
    out = run.save(Path(args.out))
    rows = [(name, f"{v['median_seconds']} s (min {v['min_seconds']}, max {v['max_seconds']})")
            for name, v in r["runs"].items()]
    rows.append(("faq default / Spark window", str(r["faq_default_over_spark_window"])))
    print_summary(rows, met, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
