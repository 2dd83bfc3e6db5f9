"""Regression over joins of Spark inputs (issue 49): faq's priced default against the Spark a user writes.

The tables are written once to Parquet and read with ``spark.read.parquet``
in the same session, as users read them.  Two joins:

* ``fk_star``: ``lineitem(orderkey, partkey) ⋈ orders(orderkey) ⋈ part(partkey)``,
  a foreign-key star (every lineitem row names one order and one part; orders
  has ``L/10`` rows, part ``L/100``), seven features (three of lineitem, two
  of orders, two of part) and the target ``lineitem.extendedprice``: the join
  has the fact table's ``L`` rows, and the aggregate is 45 sums;
* ``fk_snowflake`` (``--snowflake-scales``): TPC-H's shape, ``lineitem ⋈ orders ⋈ customer`` and
  ``lineitem ⋈ part`` (orders ``L/4`` rows, customer ``L/40``, part ``L/30``; ``L`` = 6M is scale
  factor 1, the run issue 49 saw grow the driver past 21 GB), seven features;
* ``many_to_many``: ``visits(customer, store) ⋈ stock(store, item)``, each of
  ``M`` rows on ``K`` stores: the join has about ``M²/K`` rows (tens of
  millions from a few hundred thousand), six features and the target.

Per row (the join at a size), each method's median, minimum and maximum of
``--repeat`` warm runs, after one cold run each (reported apart); the warm
runs go in rounds, one run of every method a round, so that the load of the
shared machine falls on every method alike:

* ``faq_default``: ``faq.linear_regression`` with the default placement (the
  priced choice of :mod:`faq.learning.costs`; the chosen plan is recorded);
* ``faq_driver``: ``placement="driver"`` (fetch to the driver, in-process);
* ``faq_executors``: ``placement="executors"`` (the cheaper, as priced, of the plans that leave the largest
  table in Spark: its rows in its own tasks, or Spark SQL's join; the chosen plan is recorded);
* ``spark_sql``: the baseline a user writes -- the same DataFrames joined,
  ``count``, ``sum(x_i)`` and ``sum(x_i * x_j)`` in one aggregation, the
  normal equations solved in numpy;
* ``mllib`` (``--mllib-scale`` only): ``pyspark.ml.regression.LinearRegression(solver="normal")``
  on the joined DataFrame (features assembled by ``VectorAssembler``).

``ratio_*`` are faq's medians over Spark SQL's from the same run; every
method's intercept and coefficients are checked against Spark SQL's
(largest relative difference recorded; the run stops above ``1e-6``, MLlib
``1e-4`` as its solver works on standardised features).

Run from the repository root::

    python -m bench.bench_regression_spark
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import RESULTS, Run, log
from bench.bench_learning import normal_equations

FK_QUERY = "lineitem(orderkey, partkey), orders(orderkey), part(partkey)"
FK_FEATURES = ["lineitem.quantity", "lineitem.discount", "lineitem.tax", "orders.totalprice",
               "orders.shippriority", "part.size", "part.retailprice"]
FK_TARGET = "lineitem.extendedprice"
SF_QUERY = "lineitem(orderkey, partkey), orders(orderkey, custkey), customer(custkey), part(partkey)"
SF_FEATURES = ["lineitem.quantity", "lineitem.discount", "lineitem.tax", "orders.totalprice", "customer.acctbal",
               "part.size", "part.retailprice"]
MM_QUERY = "visits(customer, store), stock(store, item)"
MM_FEATURES = ["visits.spend", "visits.minutes", "visits.age", "stock.price", "stock.weight", "stock.shelf"]
MM_TARGET = "stock.margin"
TOLERANCE = 1e-6
MLLIB_TOLERANCE = 1e-4


# --- data ---------------------------------------------------------------------------------


def _part_and_lineitem(rng: Any, rows: int, n_orders: int, n_part: int) -> tuple[Any, Any, Any, Any]:
    """part, and lineitem's keys and own columns (its target added by the caller); each lineitem row's
    order and part positions."""
    import pandas as pd

    part = pd.DataFrame({"partkey": np.arange(n_part, dtype=np.int64),
                         "size": rng.integers(1, 51, n_part).astype(np.float64),
                         "retailprice": rng.uniform(900.0, 2100.0, n_part)})
    o = rng.integers(0, n_orders, rows)
    p = rng.integers(0, n_part, rows)
    lineitem = pd.DataFrame({"orderkey": o.astype(np.int64), "partkey": p.astype(np.int64),
                             "quantity": rng.integers(1, 51, rows).astype(np.float64),
                             "discount": rng.integers(0, 11, rows) / 100.0,
                             "tax": rng.integers(0, 9, rows) / 100.0})
    return part, lineitem, o, p


def fk_tables(lineitem_rows: int, seed: int = 7) -> dict[str, Any]:
    """The FK star's pandas tables: lineitem of ``L`` rows, orders ``L/10``, part ``L/100``."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_orders, n_part = max(1, lineitem_rows // 10), max(1, lineitem_rows // 100)
    orders = pd.DataFrame({"orderkey": np.arange(n_orders, dtype=np.int64),
                           "totalprice": rng.uniform(100.0, 5e5, n_orders),
                           "shippriority": rng.integers(0, 5, n_orders).astype(np.float64)})
    part, lineitem, o, p = _part_and_lineitem(rng, lineitem_rows, n_orders, n_part)
    lineitem["extendedprice"] = (5.0 + 30.0 * lineitem["quantity"] - 200.0 * lineitem["discount"]
                                 + 80.0 * lineitem["tax"] + 1e-4 * orders["totalprice"].to_numpy()[o]
                                 + 3.0 * orders["shippriority"].to_numpy()[o] + 2.0 * part["size"].to_numpy()[p]
                                 + 0.5 * part["retailprice"].to_numpy()[p] + rng.normal(0.0, 10.0, lineitem_rows))
    return {"lineitem": lineitem, "orders": orders, "part": part}


def snowflake_tables(lineitem_rows: int, seed: int = 13) -> dict[str, Any]:
    """TPC-H's shape at scale factor ``L / 6M``: lineitem ``L`` rows, orders ``L/4``, customer ``L/40``, part
    ``L/30`` (6M, 1.5M, 150K, 200K at scale factor 1); lineitem names an order and a part, an order a customer."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_orders, n_customers, n_part = (max(1, lineitem_rows // d) for d in (4, 40, 30))
    customer = pd.DataFrame({"custkey": np.arange(n_customers, dtype=np.int64),
                             "acctbal": rng.uniform(-999.0, 9999.0, n_customers)})
    orders = pd.DataFrame({"orderkey": np.arange(n_orders, dtype=np.int64),
                           "custkey": rng.integers(0, n_customers, n_orders).astype(np.int64),
                           "totalprice": rng.uniform(100.0, 5e5, n_orders)})
    part, lineitem, o, p = _part_and_lineitem(rng, lineitem_rows, n_orders, n_part)
    c = orders["custkey"].to_numpy()[o]
    lineitem["extendedprice"] = (5.0 + 30.0 * lineitem["quantity"] - 200.0 * lineitem["discount"]
                                 + 80.0 * lineitem["tax"] + 1e-4 * orders["totalprice"].to_numpy()[o]
                                 + 0.01 * customer["acctbal"].to_numpy()[c] + 2.0 * part["size"].to_numpy()[p]
                                 + 0.5 * part["retailprice"].to_numpy()[p] + rng.normal(0.0, 10.0, lineitem_rows))
    return {"lineitem": lineitem, "orders": orders, "customer": customer, "part": part}


def mm_tables(rows: int, stores: int, seed: int = 11) -> dict[str, Any]:
    """The many-to-many join's pandas tables: ``rows`` visits and ``rows`` stock rows over ``stores`` stores."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    visits = pd.DataFrame({"customer": rng.integers(0, rows, rows).astype(np.int64),
                           "store": rng.integers(0, stores, rows).astype(np.int64),
                           "spend": rng.uniform(0.0, 100.0, rows), "minutes": rng.uniform(1.0, 90.0, rows),
                           "age": rng.integers(18, 90, rows).astype(np.float64)})
    stock = pd.DataFrame({"store": rng.integers(0, stores, rows).astype(np.int64),
                          "item": rng.integers(0, rows, rows).astype(np.int64),
                          "price": rng.uniform(1.0, 50.0, rows), "weight": rng.uniform(0.1, 5.0, rows),
                          "shelf": rng.integers(0, 6, rows).astype(np.float64)})
    stock["margin"] = 1.0 + 0.2 * stock["price"] - 0.5 * stock["weight"] + rng.normal(0.0, 1.0, rows)
    return {"visits": visits, "stock": stock}


def written(spark: Any, frames: dict[str, Any], directory: Path) -> dict[str, Any]:
    """Each pandas table written once to Parquet, read back with ``spark.read.parquet``."""
    out = {}
    for name, frame in frames.items():
        path = directory / f"{name}.parquet"
        if not path.exists():
            frame.to_parquet(path, index=False)
        out[name] = spark.read.parquet(str(path))
    return out


# --- the methods: each returns (intercept and coefficients in the features' order, join rows) ----------------


def with_faq(given: dict[str, Any], query: str, features: list[str], target: str,
             placement: str | None) -> tuple[np.ndarray, float, tuple[str, ...]]:
    import faq

    model = faq.linear_regression(query, target=target, features=features, placement=placement, **given)
    notes = tuple(n for n in model.covariance.notes if n.startswith(("priced: ", "chosen ")))
    return np.array([model.intercept, *[model.coefficients[f] for f in features]]), float(model.rows), notes


def joined(given: dict[str, Any], query: str) -> Any:
    """The tables joined as a user writes it: ``a.join(b, shared columns)`` in the query's order."""
    from faq.language import parse_query

    atoms = parse_query("count() := " + query).atoms
    rows, bound = given[atoms[0].factor], set(atoms[0].variables)
    for atom in atoms[1:]:
        rows = rows.join(given[atom.factor], [v for v in atom.variables if v in bound])
        bound |= set(atom.variables)
    return rows


def with_spark_sql(given: dict[str, Any], query: str, features: list[str], target: str) -> tuple[np.ndarray, float]:
    """The baseline a user writes: a Spark join, one aggregation of count, sums and sums of products,
    the normal equations solved in numpy."""
    from pyspark.sql import functions as F

    columns = [f.split(".")[1] for f in features] + [target.split(".")[1]]
    m = len(columns)
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    got = joined(given, query).agg(F.count(F.lit(1)).alias("n"), *[F.sum(c).alias(f"s{i}") for i, c in enumerate(columns)],
                                   *[F.sum(F.col(columns[i]) * F.col(columns[j])).alias(f"q{i}_{j}")
                                     for i, j in pairs]).collect()[0]
    sums = np.array([got[f"s{i}"] for i in range(m)], dtype=np.float64)
    products = np.empty((m, m))
    for i, j in pairs:
        products[i, j] = products[j, i] = got[f"q{i}_{j}"]
    return normal_equations(float(got["n"]), sums, products), float(got["n"])


def with_mllib(given: dict[str, Any], query: str, features: list[str], target: str) -> tuple[np.ndarray, float]:
    """MLlib's least squares by the normal equations on the joined DataFrame (no penalty)."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression

    columns = [f.split(".")[1] for f in features]
    rows = VectorAssembler(inputCols=columns, outputCol="features").transform(joined(given, query))
    model = LinearRegression(solver="normal", featuresCol="features", labelCol=target.split(".")[1],
                             regParam=0.0).fit(rows)
    return np.array([model.intercept, *model.coefficients.toArray()]), float(model.summary.totalIterations or 0)


# --- timing ---------------------------------------------------------------------------------------


def timed(methods: dict[str, Callable[[], Any]], repeats: dict[str, int]) -> tuple[dict[str, Any], dict[str, dict]]:
    """Each method's cold run (its result kept), then warm rounds in turn -- one run of every method per
    round, so a change of the machine's load (it is shared) falls on all alike: per method the cold
    seconds and the warm runs' median, min and max."""
    values, cold, warm = {}, {}, {name: [] for name in methods}
    for name, fn in methods.items():
        log(f"  {name}: cold run")
        t0 = time.perf_counter()
        values[name] = fn()
        cold[name] = time.perf_counter() - t0
    for round_ in range(max(repeats.values(), default=0)):
        for name, fn in methods.items():
            if round_ < repeats[name]:
                t0 = time.perf_counter()
                fn()
                warm[name].append(time.perf_counter() - t0)
    return values, {name: {"cold": round(cold[name], 3), "median": round(statistics.median(times), 3),
                           "min": round(min(times), 3), "max": round(max(times), 3), "runs": len(times)}
                    for name, times in warm.items()}


def difference(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest relative difference of intercept and coefficients."""
    return float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)))


def bench_join(spark: Any, name: str, given: dict[str, Any], spec: tuple[str, list[str], str], args: argparse.Namespace,
               mllib: bool) -> dict[str, Any]:
    """One row: every method timed, checked against Spark SQL's coefficients."""
    query, features, target = spec
    record: dict[str, Any] = {"join": name, "tables_rows": {n: given[n].count() for n in given}}
    methods: dict[str, Callable[[], Any]] = {
        "spark_sql": lambda: with_spark_sql(given, query, features, target),
        "faq_default": lambda: with_faq(given, query, features, target, None),
        "faq_driver": lambda: with_faq(given, query, features, target, "driver"),
        "faq_executors": lambda: with_faq(given, query, features, target, "executors"),
    }
    repeats = {"spark_sql": args.repeat, "faq_default": args.repeat, "faq_driver": args.driver_repeat,
               "faq_executors": args.repeat}
    if mllib:
        methods["mllib"] = lambda: with_mllib(given, query, features, target)
        repeats["mllib"] = args.repeat
    log(f"{name}: {', '.join(methods)}")
    values, times = timed(methods, repeats)
    record.update(times)
    expected, rows = values["spark_sql"]
    record["join_rows"] = int(rows)
    agreement = {}
    for method in methods:
        if method == "spark_sql":
            continue
        if method.startswith("faq") and values[method][1] != rows:
            raise SystemExit(f"{name} {method}: {values[method][1]} joined rows, Spark SQL says {rows}")
        agreement[method] = difference(values[method][0], expected)
        record[f"ratio_{method}_vs_spark_sql"] = round(record[method]["median"] / record["spark_sql"]["median"], 3)
    record["faq_default_plan"] = list(values["faq_default"][2])
    record["faq_executors_plan"] = list(values["faq_executors"][2])
    record["ratio_faq_executors_vs_faq_driver"] = round(record["faq_executors"]["median"]
                                                        / record["faq_driver"]["median"], 3)
    record["coefficients_vs_spark_sql"] = {k: float(f"{v:.3g}") for k, v in agreement.items()}
    record["coefficients_agree"] = all(v <= (MLLIB_TOLERANCE if k == "mllib" else TOLERANCE) for k, v in agreement.items())
    if not record["coefficients_agree"]:
        raise SystemExit(f"{name}: coefficients disagree with Spark SQL's: {agreement}")
    record["intercept_and_coefficients"] = [round(float(c), 9) for c in expected]
    # The driver's peak so far (this process: the generated pandas tables included) against the budget
    # of in-process work (spark.faq.localMemory): issue 49's memory check.
    import resource

    from faq.settings import local_memory

    record["driver_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    record["local_memory_bytes"] = int(local_memory(spark))
    log(f"{name}: {record}")
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fk-scales", type=int, nargs="*", default=[300_000, 2_000_000], help="lineitem rows")
    parser.add_argument("--snowflake-scales", type=int, nargs="*", default=[],
                        help="lineitem rows of the TPC-H-shaped snowflake (6000000: scale factor 1)")
    parser.add_argument("--mm", type=int, nargs=2, default=[100_000, 1000], metavar=("ROWS", "STORES"),
                        help="rows of each many-to-many table, and stores they share (0 0: not run)")
    parser.add_argument("--mllib-scale", type=int, default=300_000, help="the FK scale MLlib runs at (0: none)")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per method")
    parser.add_argument("--driver-repeat", type=int, default=3, help="warm runs of faq placement=driver")
    parser.add_argument("--master", default="local[*]", help="e.g. local-cluster[2,1,2048]: executors in JVMs of their own")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import faq

    run = Run("bench_regression_spark", argv)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=RESULTS.parent.parent)
    run["git_rev_parse_head"] = head.stdout.strip()  # the tree may hold uncommitted changes: "commit" says "+"
    spark = faq.get_session(master=args.master)
    run["inputs"] = {"fk_query": FK_QUERY, "fk_features": FK_FEATURES, "fk_target": FK_TARGET, "fk_scales": args.fk_scales,
                     "snowflake_query": SF_QUERY, "snowflake_features": SF_FEATURES,
                     "snowflake_scales": args.snowflake_scales, "mm_query": MM_QUERY, "mm_features": MM_FEATURES, "mm_target": MM_TARGET,
                     "mm_rows_stores": args.mm, "format": "Parquet, read with spark.read.parquet in the same session",
                     "repeat": args.repeat, "driver_repeat": args.driver_repeat, "master": args.master}
    rows = []
    with tempfile.TemporaryDirectory(prefix="regression_spark_") as directory:
        for scale in args.fk_scales:
            where = Path(directory) / f"fk{scale}"
            where.mkdir()
            given = written(spark, fk_tables(scale), where)
            rows.append(bench_join(spark, f"fk_star_{scale}", given, (FK_QUERY, FK_FEATURES, FK_TARGET), args,
                                   mllib=scale == args.mllib_scale))
        for scale in args.snowflake_scales:
            where = Path(directory) / f"sf{scale}"
            where.mkdir()
            given = written(spark, snowflake_tables(scale), where)
            rows.append(bench_join(spark, f"fk_snowflake_{scale}", given, (SF_QUERY, SF_FEATURES, FK_TARGET), args,
                                   mllib=False))
        if args.mm[0] > 0:
            where = Path(directory) / "mm"
            where.mkdir()
            given = written(spark, mm_tables(*args.mm), where)
            rows.append(bench_join(spark, f"many_to_many_{args.mm[0]}x{args.mm[1]}", given,
                                   (MM_QUERY, MM_FEATURES, MM_TARGET), args, mllib=False))
    run["rows"] = rows
    print(f"{'join':<28}{'rows':>12}{'spark_sql':>11}{'faq':>9}{'driver':>9}{'executors':>11}{'faq/sql':>9}"
          f"{'exec/sql':>9}  chosen (default; executors)")
    for r in rows:
        chosen = [next((n for n in r.get(f"faq_{k}_plan", []) if n.startswith("chosen")), "")
                  for k in ("default", "executors")]
        print(f"{r['join']:<28}{r['join_rows']:>12}{r['spark_sql']['median']:>11}{r['faq_default']['median']:>9}"
              f"{r['faq_driver']['median']:>9}{r['faq_executors']['median']:>11}"
              f"{r['ratio_faq_default_vs_spark_sql']:>9}{r['ratio_faq_executors_vs_spark_sql']:>9}  {'; '.join(chosen)}")
    path = run.save(Path(args.out) if args.out else RESULTS / "regression_spark.json")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
