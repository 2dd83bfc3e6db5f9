"""A regression over a join with its steps on the executors (issue 39): cells running our kernels, against
Spark's own ways and the in-process path, from the inputs users have.

The tables are :mod:`bench.bench_learning`'s TPC-H-shaped lineitem,
partsupp and part (``--rows`` lineitem rows each scale), written once to
Parquet and read with ``spark.read.parquet`` for every run.  Measured in one
process (``--master``: ``local[*]``, or ``local-cluster[2,1,2048]`` for
executor JVMs apart from the driver), each figure the median of
``--repeat`` warm runs with the minimum and maximum (the cold run apart):

``pandas``
    ``faq.linear_regression`` of the tables as pandas frames (in-process on
    the driver): the reference the issue's 2× target is set against;
``executors_in_tasks``
    ``faq.linear_regression(placement="executors")`` from the Parquet
    DataFrames: lineitem stays in Spark, lifted and joined in its own tasks
    with the other two tables shipped to every machine
    (:mod:`faq.learning.in_tasks`);
``executors_cells``
    the lifted query's steps on the executors (lifted by Spark, then every
    step shuffled into partitioned cells, each running the in-process
    merges on Arrow batches: :func:`faq.insideout.placement.array_cells`),
    what a query the in-task path does not take runs;
``executors_spark_joins``
    the same with ``join="binary"``: the step as Spark SQL binary joins whose
    arrays of doubles Spark multiplies and sums (the executors' path before
    this round, kept as the baseline);
``spark_sql``
    Spark SQL's own way: the three DataFrames joined and the sufficient
    statistics (count, sums, sums of products) taken in one aggregation,
    the normal equations solved in numpy (:func:`bench.bench_learning.with_spark_sql`);
``default``
    the Parquet DataFrames with the default placement (fetched through Arrow
    when they fit the fetch budget, then in-process).

Two joins: ``fk`` (lineitem to partsupp on partkey and suppkey, then part:
the join has lineitem's rows) and ``m2m`` (lineitem to partsupp on partkey
alone, partsupp's supplier renamed ``supp2``: every lineitem row meets every
supplier of its part, a join about 3.75 times lineitem, which Spark SQL
lists and faq never does).

Every answer (intercept and coefficients) is checked against pandas' merge
and least squares to 1e-6 relative.  Ratios are medians of the same run.

Run from the repository root::

    python -m bench.bench_learning_executors --out bench/results/learning_executors.json
    python -m bench.bench_learning_executors --master 'local-cluster[2,1,2048]' \\
        --out bench/results/learning_executors_cluster.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.bench_learning import FEATURES, QUERY, TARGET, TOLERANCE, tables, with_pandas, with_spark_sql
from bench.common import GENERATED, Run, log, timed_checked


QUERIES = {"fk": QUERY, "m2m": "lineitem(orderkey, partkey, suppkey), partsupp(partkey, supp2), part(partkey)"}


def m2m_tables(frames: dict[str, Any]) -> dict[str, Any]:
    """The tables of the ``m2m`` join: partsupp's supplier column renamed, so it joins on partkey alone."""
    return {**frames, "partsupp": frames["partsupp"].rename(columns={"suppkey": "supp2"})}


def m2m_least_squares(frames: dict[str, Any]) -> np.ndarray:
    """Least squares on the ``m2m`` join pandas lists (the oracle)."""
    rows = frames["lineitem"].merge(frames["partsupp"], on="partkey").merge(frames["part"], on="partkey")
    x = np.column_stack([np.ones(len(rows))] + [rows[f.split(".")[1]].to_numpy() for f in FEATURES])
    return np.linalg.lstsq(x, rows[TARGET.split(".")[1]].to_numpy(), rcond=None)[0]


def with_spark_sql_m2m(given: dict[str, Any]) -> np.ndarray:
    """Spark SQL's way on the ``m2m`` join: the join listed, the sufficient statistics summed, numpy solves."""
    from pyspark.sql import functions as F

    rows = given["lineitem"].join(given["partsupp"], "partkey").join(given["part"], "partkey")
    columns = [f.split(".")[1] for f in FEATURES] + [TARGET.split(".")[1]]
    m = len(columns)
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    got = rows.agg(F.count(F.lit(1)).alias("n"), *[F.sum(c).alias(f"s{i}") for i, c in enumerate(columns)],
                   *[F.sum(F.col(columns[i]) * F.col(columns[j])).alias(f"q{i}_{j}") for i, j in pairs]).collect()[0]
    sums = np.array([got[f"s{i}"] for i in range(m)], dtype=np.float64)
    products = np.empty((m, m))
    for i, j in pairs:
        products[i, j] = products[j, i] = got[f"q{i}_{j}"]
    from bench.bench_learning import normal_equations

    return normal_equations(float(got["n"]), sums, products)


def with_faq(given: dict[str, Any], placement: str = "auto", join: str = "", query: str = QUERY) -> np.ndarray:
    """Intercept and coefficients of ``faq.linear_regression``; with ``join`` given, of the lifted query's
    steps (lifted by Spark, then evaluated with that join method: "auto" runs cells on the executors)."""
    import faq

    if not join:
        model = faq.linear_regression(query, target=TARGET, features=FEATURES, placement=placement, **given)
        return np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    from faq.insideout.executor import evaluate
    from faq.learning import _parsed
    from faq.learning.features import lifted_factors, parse_features
    from faq.learning.models import Covariance, fit_linear
    from faq.semirings import cofactor

    parsed, atoms = _parsed(query)
    chosen = parse_features([*FEATURES, TARGET], atoms)
    ring = cofactor(len(chosen))
    query, factors, _ = lifted_factors(parsed, chosen, ring, given, None)
    with evaluate(query, factors, semiring=ring, placement=placement, join=join) as result:
        kind = "binary" if join == "binary" else "partitioned"
        assert {s.strategy.name for s in result.plan.steps} == {kind}, result.plan
        count, sums, products = ring.unpack(result.scalar())
        plan = result.plan
    model = fit_linear(Covariance(tuple(map(str, chosen)), float(count), sums, products, plan), str(chosen[-1]))
    return np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])


def timed(fn: Callable[[], np.ndarray], repeat: int, expected: np.ndarray, name: str) -> dict[str, Any]:
    """The cold run and ``repeat`` warm runs of ``fn``, each answer checked against ``expected``."""
    errors = []

    def check(got: np.ndarray) -> None:
        error = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)))
        if not error <= TOLERANCE:
            raise SystemExit(f"{name}: {got.tolist()} differs from least squares {expected.tolist()} by {error:.3g}")
        errors.append(error)

    return {**timed_checked(fn, repeat, check, name), "relative_error": max(errors)}


def bench_rows(spark: Any, rows: int, repeat: int, spark_joins_up_to: int, join: str = "fk") -> dict[str, Any]:
    frames = tables(rows, seed=rows % 1_000_003)
    query = QUERIES[join]
    if join == "m2m":
        frames = m2m_tables(frames)
    paths = {}
    for name, frame in frames.items():
        paths[name] = GENERATED / f"learning-executors-{join}-{rows}-{name}.parquet"
        if not paths[name].exists():
            paths[name].parent.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(paths[name])

    def parquet() -> dict[str, Any]:
        return {name: spark.read.parquet(str(path)) for name, path in paths.items()}

    expected = with_pandas(frames)[0] if join == "fk" else m2m_least_squares(frames)
    log(f"{join} join, {rows} lineitem rows")
    record: dict[str, Any] = {"join": join, "query": query, "lineitem_rows": rows,
                              "partsupp_rows": len(frames["partsupp"]), "part_rows": len(frames["part"])}
    record["pandas"] = timed(lambda: with_faq(frames, "driver", query=query), repeat, expected, "pandas, in-process")
    record["executors_in_tasks"] = timed(lambda: with_faq(parquet(), "executors", query=query), repeat, expected,
                                         "Parquet, executors, lineitem in its tasks")
    record["executors_cells"] = timed(lambda: with_faq(parquet(), "executors", "auto", query), repeat, expected,
                                      "Parquet, executors, steps in cells")
    if rows <= spark_joins_up_to:
        record["executors_spark_joins"] = timed(lambda: with_faq(parquet(), "executors", "binary", query), repeat,
                                                expected, "Parquet, executors, Spark binary joins")
    sql = (lambda: with_spark_sql(parquet())[0]) if join == "fk" else (lambda: with_spark_sql_m2m(parquet()))
    record["spark_sql"] = timed(sql, repeat, expected, "Parquet, Spark SQL")
    record["default"] = timed(lambda: with_faq(parquet(), query=query), repeat, expected, "Parquet, default placement")
    median = {k: v["median_seconds"] for k, v in record.items() if isinstance(v, dict)}
    record["in_tasks / pandas"] = round(median["executors_in_tasks"] / median["pandas"], 2)
    record["spark_sql / in_tasks"] = round(median["spark_sql"] / median["executors_in_tasks"], 2)
    record["cells / pandas"] = round(median["executors_cells"] / median["pandas"], 2)
    record["spark_sql / cells"] = round(median["spark_sql"] / median["executors_cells"], 2)
    if "executors_spark_joins" in median:
        record["spark_joins / cells"] = round(median["executors_spark_joins"] / median["executors_cells"], 2)
        record["spark_joins / in_tasks"] = round(median["executors_spark_joins"] / median["executors_in_tasks"], 2)
    record["default / pandas"] = round(median["default"] / median["pandas"], 2)
    return record


def main(argv: Any = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, nargs="+", default=[300_000, 1_000_000])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--master", default="local[*]")
    p.add_argument("--spark-joins-up-to", type=int, default=1_000_000,
                   help="run the Spark binary joins baseline up to this many lineitem rows")
    p.add_argument("--joins", nargs="+", default=["fk", "m2m"], choices=sorted(QUERIES))
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    from faq.spark import get_session

    spark = get_session(master=args.master, config={"spark.driver.memory": "6g"})
    run = Run("bench_learning_executors", argv)
    run["master"] = args.master
    run["results"] = [bench_rows(spark, rows, args.repeat, args.spark_joins_up_to, join)
                      for join in args.joins for rows in args.rows]
    log(f"wrote {run.save(args.out)}")


if __name__ == "__main__":
    main()
