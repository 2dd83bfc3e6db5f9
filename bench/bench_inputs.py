"""Graph jobs from the inputs users have: a library path against a Spark DataFrame from ``spark.read.parquet``.

Issue 39's target: a job given a Spark DataFrame (or a path through the
library) within 1.5x the same job given what the driver reads itself.  For
each graph and job -- directed (feed-forward) and undirected triangles, and
a motif count -- in one warm process:

* ``path``: the edge list's path through the library (read and cleaned on
  the driver, as the CLI reads it): the reference;
* ``dataframe``: the same edges as a Spark DataFrame read from Parquet, with
  the default placement (its ids fetched to the driver through Arrow when
  they fit ``spark.faq.fetchMemory``);
* ``dataframe, read apart``: the same, each run's frame read by ``spark.read.parquet`` before its
  clock starts: faq's own time on a DataFrame the user holds (Spark's read of a small file -- listing
  it and reading its schema -- took 0.14-0.24 s here, as much as the whole job from the path);
* ``dataframe, no fetch``: the same DataFrame with ``spark.faq.fetchMemory=0``
  (nothing fetched: the Spark-side clean-up and the steps on the executors,
  as every DataFrame input ran before the fetch budget): the baseline.

And a regression over a join (``faq.linear_regression`` of the synthetic
TPC-H-shaped lineitem, partsupp and part of :mod:`bench.bench_learning`,
``--regression-rows`` lineitem rows): the tables as pandas frames (the
reference), as Spark DataFrames read from Parquet (default placement: each
fetched through Arrow when it fits), and the same with nothing fetched.

And a Bayesian network's marginal (Asia, ``tests/data/asia.json``: the
marginal of its last variable, sum-product) from its conditional tables
given as CSV paths to ``faq.query`` (read on the driver when they fit),
against the same tables as pandas frames, and the paths with nothing fetched
(read by Spark).

Every answer is checked equal to the path's (the regression's and the
marginal's to 1e-6).  Each figure is the median of
``--repeat`` warm runs with the minimum and maximum; the first (cold) run of
each is reported apart.

Run from the repository root::

    python -m bench.bench_inputs --out bench/results/inputs.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from bench.common import GENERATED, Run, graph_path, log

JOBS = {
    "triangles (directed)": lambda faq, edges: faq.count_triangles(edges, directed=True).count,
    "triangles (undirected)": lambda faq, edges: faq.count_triangles(edges).count,
    "motif (a)->(b); (b)->(c); !(a)->(c)": lambda faq, edges: faq.motifs(
        edges, "(a)->(b); (b)->(c); !(a)->(c)", count=True).count,
}


def timed(fn: Callable[..., Any], repeat: int, given: Optional[Callable[[], Any]] = None) -> dict[str, Any]:
    """The cold run and ``repeat`` warm runs of ``fn``: seconds and the (equal) answer.  With ``given``,
    each run calls ``fn(given())``, ``given`` made afresh before the clock starts (a DataFrame the user
    read already: its ``spark.read.parquet`` is Spark's time, not the job's)."""
    def once() -> tuple[Any, float]:
        argument = () if given is None else (given(),)
        started = time.perf_counter()
        return fn(*argument), time.perf_counter() - started

    answer, cold = once()
    warm = []
    for _ in range(repeat):
        again, seconds = once()
        warm.append(seconds)
        # a count is exact; a regression's figures may differ in their last digits with Spark's sum order
        assert again == answer or (isinstance(answer, tuple) and np.allclose(again, answer, rtol=1e-6)), (again, answer)
    return {"answer": answer, "cold_seconds": round(cold, 4), "median_seconds": round(statistics.median(warm), 4),
            "min_seconds": round(min(warm), 4), "max_seconds": round(max(warm), 4)}


def parquet_of(spark: Any, path: str, name: str) -> str:
    """The edge list as a Parquet file of ``src``, ``dst`` (written once, in bench/data)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from faq.io.local_edges import read_edge_arrays

    out = GENERATED / f"{name}-edges.parquet"
    if not out.exists():
        src, dst = read_edge_arrays(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"src": np.asarray(src), "dst": np.asarray(dst)}), out)
    return str(out)


def regression(faq: Any, spark: Any, rows: int, repeat: int) -> dict[str, Any]:
    """The regression from pandas frames, from Parquet DataFrames (fetched), and with nothing fetched."""
    from bench.bench_learning import FEATURES, QUERY, TARGET, tables

    frames = tables(rows, 1)
    paths = {}
    for name, frame in frames.items():
        paths[name] = str(GENERATED / f"regression-{rows}-{name}.parquet")
        if not Path(paths[name]).exists():
            Path(paths[name]).parent.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(paths[name])

    def fit(given: dict[str, Any]) -> tuple:
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **given)
        return (round(model.intercept, 6), *(round(model.coefficients[f], 6) for f in model.coefficients))

    log(f"regression over {rows} lineitem rows")
    row: dict[str, Any] = {"graph": f"TPC-H shaped, {rows} lineitem rows", "job": "linear_regression"}
    row["pandas"] = timed(lambda: fit(frames), repeat)
    row["dataframe"] = timed(lambda: fit({n: spark.read.parquet(p) for n, p in paths.items()}), repeat)
    spark.conf.set("spark.faq.fetchMemory", "0")
    try:
        row["dataframe, no fetch"] = timed(lambda: fit({n: spark.read.parquet(p) for n, p in paths.items()}), repeat)
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
    reference = np.array(row["pandas"]["answer"])
    for kind in ("dataframe", "dataframe, no fetch"):
        assert np.allclose(row[kind]["answer"], reference, rtol=1e-6), (kind, row[kind]["answer"], reference)
    row["dataframe / pandas"] = round(row["dataframe"]["median_seconds"] / row["pandas"]["median_seconds"], 2)
    row["no fetch / dataframe"] = round(row["dataframe, no fetch"]["median_seconds"]
                                        / row["dataframe"]["median_seconds"], 2)
    log(f"  pandas {row['pandas']['median_seconds']:.3f} s, dataframe {row['dataframe']['median_seconds']:.3f} s "
        f"({row['dataframe / pandas']}x), no fetch {row['dataframe, no fetch']['median_seconds']:.3f} s")
    return row


def network_marginal(faq: Any, spark: Any, repeat: int) -> dict[str, Any]:
    """Asia's last variable's marginal from CSV paths, from pandas frames, and from paths read by Spark."""
    from bench.bench_small import asia, faq_tables

    tables = faq_tables(asia())
    folder = GENERATED / "asia-csv"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, frame in tables.items():
        paths[name] = str(folder / f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    last = list(tables.values())[-1].columns[-2]
    joint = ", ".join(f"{name}({', '.join(t.columns[:-1])})" for name, t in tables.items())
    text = f"answer({last}) := {joint}"

    def marginal(given: dict[str, Any]) -> tuple:
        with faq.query(text, semiring="real", **given) as result:
            frame = result.df.toPandas().sort_values(last)
        return tuple(round(float(v), 9) for v in frame["value"])

    log(f"asia: {text}")
    row: dict[str, Any] = {"graph": "asia (8 CSV tables)", "job": f"marginal of {last}"}
    row["path"] = timed(lambda: marginal(paths), repeat)
    row["pandas"] = timed(lambda: marginal(tables), repeat)
    spark.conf.set("spark.faq.fetchMemory", "0")
    try:
        row["path, no fetch"] = timed(lambda: marginal(paths), repeat)
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
    for kind in ("pandas", "path, no fetch"):
        assert np.allclose(row[kind]["answer"], row["path"]["answer"], rtol=1e-6), (kind, row[kind]["answer"])
    row["path / pandas"] = round(row["path"]["median_seconds"] / row["pandas"]["median_seconds"], 2)
    log(f"  path {row['path']['median_seconds']:.3f} s, pandas {row['pandas']['median_seconds']:.3f} s, "
        f"no fetch {row['path, no fetch']['median_seconds']:.3f} s")
    return row


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", default=["wiki-Vote", "Email-Enron"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--regression-rows", type=int, default=300_000,
                        help="lineitem rows of the regression (0: skip it)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import faq
    from faq.spark import get_session

    run = Run("bench_inputs", argv)
    spark = get_session()
    results = []
    for name in args.graphs:
        path = str(graph_path(name))
        parquet = parquet_of(spark, path, name)
        for job, fn in JOBS.items():
            row: dict[str, Any] = {"graph": name, "job": job}
            log(f"{name}: {job}")
            row["path"] = timed(lambda: fn(faq, path), args.repeat)
            row["dataframe"] = timed(lambda: fn(faq, spark.read.parquet(parquet)), args.repeat)
            # the same, the frame read before the clock: faq's own time on a DataFrame the user holds
            row["dataframe, read apart"] = timed(lambda df: fn(faq, df), args.repeat,
                                                 given=lambda: spark.read.parquet(parquet))
            spark.conf.set("spark.faq.fetchMemory", "0")
            try:
                row["dataframe, no fetch"] = timed(lambda: fn(faq, spark.read.parquet(parquet)), args.repeat)
            finally:
                spark.conf.unset("spark.faq.fetchMemory")
            answers = {kind: row[kind]["answer"] for kind in ("path", "dataframe", "dataframe, read apart",
                                                              "dataframe, no fetch")}
            assert len(set(answers.values())) == 1, answers
            reference = row["path"]["median_seconds"]
            row["dataframe / path"] = round(row["dataframe"]["median_seconds"] / reference, 2)
            row["dataframe read apart / path"] = round(row["dataframe, read apart"]["median_seconds"] / reference, 2)
            row["no fetch / dataframe"] = round(row["dataframe, no fetch"]["median_seconds"]
                                                / row["dataframe"]["median_seconds"], 2)
            log(f"  path {reference:.3f} s, dataframe {row['dataframe']['median_seconds']:.3f} s "
                f"({row['dataframe / path']}x; read apart {row['dataframe, read apart']['median_seconds']:.3f} s, "
                f"{row['dataframe read apart / path']}x), no fetch {row['dataframe, no fetch']['median_seconds']:.3f} s")
            results.append(row)
    results.append(network_marginal(faq, spark, args.repeat))
    if args.regression_rows:
        results.append(regression(faq, spark, args.regression_rows, args.repeat))
    run["results"] = results
    saved = run.save(Path(args.out) if args.out else None)
    log(f"wrote {saved}")


if __name__ == "__main__":
    main()
