"""Learning over joins (issue #25): ``faq.linear_regression`` against materialising the join.

The data are TPC-H shaped and synthetic (numpy, seeded per scale): ``lineitem``
of ``L`` rows (orderkey, partkey, suppkey, quantity, discount, extendedprice),
``partsupp`` of about ``L/8`` rows with (partkey, suppkey) unique (supplycost)
and ``part`` of about ``L/30`` rows (size).  Every lineitem row names an
existing (partkey, suppkey) of partsupp, so the join
``lineitem(orderkey, partkey, suppkey), partsupp(partkey, suppkey), part(partkey)``
has ``L`` rows.  The target ``extendedprice`` is a linear combination of
quantity, discount, supplycost and size plus Gaussian noise.

Measured per scale, in one process, each against the baseline of the same run:

1. ``faq_pandas_driver``: ``faq.linear_regression`` of pandas tables,
   ``placement="driver"`` (in-process: one cofactor FAQ, the join never listed);
2. ``pandas_lstsq`` (baseline A): ``merge`` of the three tables, then
   ``numpy.linalg.lstsq`` with an intercept on the materialised join;
3. ``faq_spark_executors``: ``faq.linear_regression`` of Spark DataFrames
   (created and cached before timing), ``placement="executors"``;
4. ``spark_sql`` (baseline B): the same cached DataFrames joined and the
   sufficient statistics (count, sums, sums of products: ``F.sum`` of column
   products) taken in one aggregation, then the normal equations solved in
   numpy, as a Spark user would without faq.

3 and 4 run only at the scales of ``--spark-scales`` (Spark is slow on this
machine).  Every figure is the median of ``--repeat`` warm runs with the
minimum and maximum beside it; the first (cold) run is reported apart.  Every
answer (intercept and coefficients) must equal baseline A's to ``1e-6``
relative, or the run stops.  ``ratio_*`` are faq's median over the
baseline's median from the same run.  ``faq_driver_split`` times one extra
in-process run in its phases (lifting the tables into the ring, the FAQ, the
solve).

``--dataset housing`` runs the static benchmark of issue #25 instead, on the
Housing star join of :mod:`faq.learning.datasets` (six relations on
``postcode``; ``--scales`` are its scales, about ``s`` rows per postcode in
four relations, so the join is tens to hundreds of times its input).  The
regression is ``housing_task()``'s: seven features and the target, a
cofactor aggregate of 45 numbers.  In one process, methods 1, 3 and 4 at every
scale first, with no JVM running (faq plans with a session that would start
Spark only if something needed it; the record says whether it did), then a
``local[*]`` Spark session and method 2 at ``--spark-scales``:

1. ``faq_driver``: ``faq.linear_regression`` of the pandas tables,
   ``placement="driver"`` (the join is never listed);
2. ``spark_sql``: the tables as cached Spark DataFrames (made and counted
   before timing) in temporary views, one Spark SQL statement joining them
   and taking ``COUNT(*)``, ``SUM(x_i)`` and ``SUM(x_i * x_j)`` (i ≤ j) of
   the eight columns over the joined rows, the normal equations solved in
   numpy (``--spark-scales`` chooses the scales it runs at);
3. ``duckdb``: the same SQL text in DuckDB over the registered pandas tables
   (in-memory database, its default threads);
4. ``pandas_lstsq``: the join listed with pandas merges (of the used columns
   only), then ``numpy.linalg.lstsq`` with an intercept: the answer every
   other method is checked against (largest relative difference per
   coefficient, printed and recorded; the run stops above ``1e-6``).

Cold run and ``--repeat`` warm runs each (``--spark-repeat`` for Spark SQL,
``--pandas-repeat`` for the oracle); ``speedup_vs_*`` is the baseline's
warm median over faq's, from the same run; ``targets`` says whether faq is
≥ 10× faster than Spark SQL and ≥ 2× faster than DuckDB at each scale.

Run from the repository root::

    python -m bench.bench_learning --out bench/results/learning.json
    python -m bench.bench_learning --dataset housing --scales 6 10 14 --out bench/results/learning_housing.json
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import Run, cold_and_warm, log

QUERY = "lineitem(orderkey, partkey, suppkey), partsupp(partkey, suppkey), part(partkey)"
FEATURES = ["lineitem.quantity", "lineitem.discount", "partsupp.supplycost", "part.size"]
TARGET = "lineitem.extendedprice"
TRUE_WEIGHTS = {"intercept": 5.0, "quantity": 30.0, "discount": -200.0, "supplycost": 0.5, "size": 2.0}
TOLERANCE = 1e-6


# --- data ---------------------------------------------------------------------------------


def tables(lineitem_rows: int, seed: int) -> dict[str, Any]:
    """The three TPC-H-shaped pandas tables at one scale (deterministic in ``seed``)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_part = max(1, lineitem_rows // 30)
    n_partsupp = max(n_part, lineitem_rows // 8)
    part = pd.DataFrame({"partkey": np.arange(n_part, dtype=np.int64),
                         "size": rng.integers(1, 51, n_part).astype(np.float64)})
    k = np.arange(n_partsupp, dtype=np.int64)  # (partkey, suppkey) unique: the k-th supplier of a part
    partsupp = pd.DataFrame({"partkey": k % n_part, "suppkey": k // n_part,
                             "supplycost": rng.uniform(1.0, 1000.0, n_partsupp)})
    pick = rng.integers(0, n_partsupp, lineitem_rows)  # each lineitem names an existing partsupp row
    lineitem = pd.DataFrame({
        "orderkey": rng.integers(0, max(1, lineitem_rows // 4), lineitem_rows).astype(np.int64),
        "partkey": partsupp["partkey"].to_numpy()[pick],
        "suppkey": partsupp["suppkey"].to_numpy()[pick],
        "quantity": rng.integers(1, 51, lineitem_rows).astype(np.float64),
        "discount": rng.integers(0, 11, lineitem_rows) / 100.0,
    })
    w = TRUE_WEIGHTS
    lineitem["extendedprice"] = (w["intercept"] + w["quantity"] * lineitem["quantity"].to_numpy()
                                 + w["discount"] * lineitem["discount"].to_numpy()
                                 + w["supplycost"] * partsupp["supplycost"].to_numpy()[pick]
                                 + w["size"] * part["size"].to_numpy()[lineitem["partkey"].to_numpy()]
                                 + rng.normal(0.0, 10.0, lineitem_rows))
    return {"lineitem": lineitem, "partsupp": partsupp, "part": part}


# --- the four methods: each returns (intercept, coefficients in FEATURES order, join rows) -------------


def with_faq(given: dict[str, Any], placement: str) -> tuple[np.ndarray, float]:
    import faq

    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement=placement, **given)
    return np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]]), float(model.rows)


def with_pandas(t: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Baseline A: the materialised join, least squares with an intercept."""
    rows = t["lineitem"].merge(t["partsupp"], on=["partkey", "suppkey"]).merge(t["part"], on="partkey")
    x = np.column_stack([np.ones(len(rows))] + [rows[f.split(".")[1]].to_numpy() for f in FEATURES])
    y = rows[TARGET.split(".")[1]].to_numpy()
    return np.linalg.lstsq(x, y, rcond=None)[0], float(len(rows))


def with_spark_sql(given: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Baseline B: a Spark join and one aggregation of the sufficient statistics, solved in numpy."""
    from pyspark.sql import functions as F

    rows = given["lineitem"].join(given["partsupp"], ["partkey", "suppkey"]).join(given["part"], "partkey")
    columns = [f.split(".")[1] for f in FEATURES] + [TARGET.split(".")[1]]
    m = len(columns)
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    aggregates = ([F.count(F.lit(1)).alias("n")] + [F.sum(c).alias(f"s{i}") for i, c in enumerate(columns)]
                  + [F.sum(F.col(columns[i]) * F.col(columns[j])).alias(f"q{i}_{j}") for i, j in pairs])
    got = rows.agg(*aggregates).collect()[0]
    n = float(got["n"])
    sums = np.array([got[f"s{i}"] for i in range(m)], dtype=np.float64)
    products = np.empty((m, m))
    for i, j in pairs:
        products[i, j] = products[j, i] = got[f"q{i}_{j}"]
    return normal_equations(n, sums, products), n


def normal_equations(n: float, sums: np.ndarray, products: np.ndarray) -> np.ndarray:
    """Intercept and coefficients from ``(n, Σx, Σxxᵀ)`` of the features and the target (last), by lstsq."""
    p = len(sums) - 1
    gram = np.empty((p + 1, p + 1))
    gram[0, 0] = n
    gram[0, 1:] = gram[1:, 0] = sums[:p]
    gram[1:, 1:] = products[:p, :p]
    moment = np.concatenate([[sums[p]], products[:p, p]])
    return np.linalg.lstsq(gram, moment, rcond=None)[0]


# --- timing ---------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, list[float]]:
    """(the cold run's result, its seconds, the warm runs' seconds); every run must agree exactly."""
    return cold_and_warm(fn, repeat, agrees)


def agrees(again: tuple[np.ndarray, float], value: tuple[np.ndarray, float]) -> None:
    """Exit unless a warm run's (coefficients, rows) agree with the cold run's (within TOLERANCE)."""
    if not (np.array_equal(again[0], value[0]) and again[1] == value[1]):
        relative = float(np.max(np.abs(again[0] - value[0]) / np.abs(value[0])))
        if relative > TOLERANCE:
            raise SystemExit(f"warm run disagrees with the cold one: {again} vs {value}")


def summary(times: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(times), 4), "min": round(min(times), 4),
            "max": round(max(times), 4), "runs": len(times)}


def check(name: str, scale: int, got: tuple[np.ndarray, float], expected: tuple[np.ndarray, float]) -> float:
    """The largest relative difference of intercept and coefficients from the baseline's; loud if too big."""
    if got[1] != expected[1]:
        raise SystemExit(f"{name} at {scale}: the join has {got[1]} rows, the baseline says {expected[1]}")
    error = float(np.max(np.abs(got[0] - expected[0]) / np.maximum(np.abs(expected[0]), 1e-300)))
    if not error <= TOLERANCE:
        raise SystemExit(f"{name} at {scale}: coefficients {got[0].tolist()} differ from the baseline's "
                         f"{expected[0].tolist()} by {error:.3g} relative (> {TOLERANCE})")
    return error


def driver_split(t: dict[str, Any], query: str = QUERY, features: list[str] = FEATURES,
                 target: str = TARGET, spark: Any = None) -> dict[str, Any]:
    """One in-process run timed in its phases: lifting the tables, the FAQ, the solve."""
    from faq.insideout.executor import evaluate
    from faq.learning import _parsed
    from faq.learning.features import lifted_factors, parse_features
    from faq.learning.models import Covariance, fit_linear
    from faq.semirings import cofactor

    t0 = time.perf_counter()
    parsed, atoms = _parsed(query)
    chosen = parse_features([*features, target], atoms)
    ring = cofactor(len(chosen))
    query, factors, lifted = lifted_factors(parsed, chosen, ring, t, spark)
    t1 = time.perf_counter()
    with evaluate(query, factors, semiring=ring, placement="driver") as result:
        value = result.scalar()
        plan, notes = result.plan, [n for n in result.notes if n]
    t2 = time.perf_counter()
    count, sums, products = ring.unpack(value)
    fit_linear(Covariance(tuple(map(str, chosen)), float(count), sums, products, plan), str(chosen[-1]))
    t3 = time.perf_counter()
    return {"lift_seconds": round(t1 - t0, 4), "faq_seconds": round(t2 - t1, 4), "solve_seconds": round(t3 - t2, 4),
            "ring_width": ring.width, "lifted": [item.describe(ring.width) for item in lifted], "notes": notes,
            "steps": [{"placement": s.placement, "join_method": getattr(s, "join_method", None)} for s in plan.steps]}


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover
        return ""


def bench_scale(spark: Any, scale: int, repeat: int, spark_repeat: int, on_spark: bool) -> dict[str, Any]:
    t = tables(scale, seed=scale % 1_000_003)
    record: dict[str, Any] = {"lineitem_rows": scale, "partsupp_rows": len(t["partsupp"]), "part_rows": len(t["part"])}

    expected, cold, warm = timed(lambda: with_pandas(t), repeat)
    record["join_rows"] = int(expected[1])
    record["pandas_lstsq"] = {"cold": round(cold, 4), **summary(warm)}
    record["answer"] = dict(zip(["intercept", *FEATURES], map(float, expected[0])))
    log(f"{scale}: pandas merge + lstsq {record['pandas_lstsq']['median']} s ({record['join_rows']} joined rows)")

    got, cold, warm = timed(lambda: with_faq(t, "driver"), repeat)
    record["faq_pandas_driver"] = {"cold": round(cold, 4), **summary(warm),
                                   "relative_error": check("faq driver", scale, got, expected)}
    record["ratio_faq_driver_to_pandas"] = round(statistics.median(warm) / record["pandas_lstsq"]["median"], 2)
    log(f"{scale}: faq driver {record['faq_pandas_driver']['median']} s "
        f"(x{record['ratio_faq_driver_to_pandas']} pandas)")
    record["faq_driver_split"] = driver_split(t)
    log(f"{scale}: faq driver split {record['faq_driver_split']['lift_seconds']} s lift, "
        f"{record['faq_driver_split']['faq_seconds']} s FAQ, {record['faq_driver_split']['solve_seconds']} s solve")

    if on_spark:
        given = {name: spark.createDataFrame(df).cache() for name, df in t.items()}
        for df in given.values():
            df.count()
        try:
            got, cold, warm_b = timed(lambda: with_spark_sql(given), spark_repeat)
            record["spark_sql"] = {"cold": round(cold, 4), **summary(warm_b),
                                   "relative_error": check("spark sql", scale, got, expected)}
            log(f"{scale}: spark sql {record['spark_sql']['median']} s")
            got, cold, warm = timed(lambda: with_faq(given, "executors"), spark_repeat)
            record["faq_spark_executors"] = {"cold": round(cold, 4), **summary(warm),
                                             "relative_error": check("faq executors", scale, got, expected)}
            record["ratio_faq_executors_to_spark_sql"] = round(statistics.median(warm) / statistics.median(warm_b), 2)
            log(f"{scale}: faq executors {record['faq_spark_executors']['median']} s "
                f"(x{record['ratio_faq_executors_to_spark_sql']} spark sql)")
        finally:
            for df in given.values():
                df.unpersist()
    return record


# --- the Housing star join (issue #25's static benchmark) -------------------------------------------


def housing_sql(task: Any) -> tuple[str, list[str]]:
    """One SQL statement (Spark SQL and DuckDB alike): the join and the cofactor sums of the task's columns."""
    from faq.learning.datasets import RELATIONS

    columns = [name.split(".")[1] for name in [*task.features, task.target]]
    m = len(columns)
    terms = ["COUNT(*) AS n"] + [f"SUM({c}) AS s{i}" for i, c in enumerate(columns)]
    terms += [f"SUM({columns[i]} * {columns[j]}) AS q{i}_{j}" for i in range(m) for j in range(i, m)]
    joins = " ".join(f"JOIN {name} USING (postcode)" for name in RELATIONS[1:])
    return f"SELECT {', '.join(terms)} FROM {RELATIONS[0]} {joins}", columns


def solved(row: Any, m: int) -> tuple[np.ndarray, float]:
    """Intercept and coefficients from ``(n, s0.., q0_0..)`` of ``m`` columns, the target last (numpy)."""
    values = list(row)
    n = float(values[0])
    sums = np.array(values[1:1 + m], dtype=np.float64)
    products = np.empty((m, m))
    k = 1 + m
    for i in range(m):
        for j in range(i, m):
            products[i, j] = products[j, i] = values[k]
            k += 1
    return normal_equations(n, sums, products), n


def housing_faq(t: dict[str, Any], task: Any, spark: Any = None) -> tuple[np.ndarray, float]:
    import faq

    model = faq.linear_regression(task.query, target=task.target, features=list(task.features),
                                  placement="driver", spark=spark, **t)
    return np.array([model.intercept, *[model.coefficients[f] for f in task.features]]), float(model.rows)


def housing_pandas(t: dict[str, Any], task: Any) -> tuple[np.ndarray, float]:
    """The join listed with pandas merges (only the columns used), then least squares with an intercept."""
    from faq.learning.datasets import materialise

    used: dict[str, list[str]] = {name: ["postcode"] for name in t}
    for name in [*task.features, task.target]:
        table, column = name.split(".")
        used[table].append(column)
    rows = materialise({name: df[used[name]] for name, df in t.items()})
    x = np.column_stack([np.ones(len(rows))] + [rows[f.split(".")[1]].to_numpy() for f in task.features])
    y = rows[task.target.split(".")[1]].to_numpy()
    return np.linalg.lstsq(x, y, rcond=None)[0], float(len(rows))


def timed_method(name: str, scale: int, fn: Callable[[], Any], repeat: int,
                 expected: tuple[np.ndarray, float] | None) -> tuple[dict[str, Any], Any]:
    """A method's cold run and warm runs, its answer checked against ``expected`` (when given)."""
    got, cold, warm = timed(fn, repeat)
    figures: dict[str, Any] = {"cold": round(cold, 4), **summary(warm)}
    if expected is not None:
        figures.update(agreement(name, scale, got, expected))
    log(f"housing {scale}: {name} median {figures['median']} s (cold {figures['cold']} s)"
        + (f", relative error {figures['relative_error']:.2e} (largest per coefficient "
           f"{figures['relative_error_per_coefficient']:.2e})" if expected is not None else ""))
    return figures, got


def agreement(name: str, scale: int, got: tuple[np.ndarray, float],
              expected: tuple[np.ndarray, float]) -> dict[str, float]:
    """How far an answer is from the oracle's: ``‖Δθ‖∞ / ‖θ‖∞`` (must be ≤ TOLERANCE) and per coefficient.

    Three of the housing coefficients are truly 0 and come out small (~1e-2), so their own relative
    difference measures the summation order of sums of millions of terms more than the method; the norm-wise
    figure decides, the per-coefficient one is recorded beside it.
    """
    if got[1] != expected[1]:
        raise SystemExit(f"{name} at {scale}: the join has {got[1]} rows, the oracle says {expected[1]}")
    delta = np.abs(got[0] - expected[0])
    norm = float(np.max(delta) / np.max(np.abs(expected[0])))
    each = float(np.max(delta / np.maximum(np.abs(expected[0]), 1e-300)))
    if not norm <= TOLERANCE:
        raise SystemExit(f"{name} at {scale}: coefficients {got[0].tolist()} differ from the oracle's "
                         f"{expected[0].tolist()} by {norm:.3g} relative (> {TOLERANCE})")
    return {"relative_error": norm, "relative_error_per_coefficient": each}


def housing_in_process(scale: int, postcodes: int, repeat: int, pandas_repeat: int, lazy: Any) -> dict[str, Any]:
    """One scale's in-process figures (pandas oracle, faq, DuckDB); no JVM runs while they are taken."""
    import duckdb

    from faq.learning.datasets import housing, housing_task, join_size

    task = housing_task()
    t = housing(scale, seed=0, postcodes=postcodes)
    inputs = sum(len(df) for df in t.values())
    joined = join_size(t)
    record: dict[str, Any] = {"scale": scale, "postcodes": postcodes, "rows": {n: len(df) for n, df in t.items()},
                              "input_rows": inputs, "join_rows": joined,
                              "listing_ratio": round(joined / inputs, 1)}
    log(f"housing {scale}: {inputs} input rows, {joined} joined rows ({record['listing_ratio']}x)")
    sql, columns = housing_sql(task)

    record["pandas_lstsq"], expected = timed_method("pandas_lstsq", scale, lambda: housing_pandas(t, task),
                                                    pandas_repeat, None)
    record["answer"] = dict(zip(["intercept", *task.features], map(float, expected[0])))
    record["faq_driver"], _ = timed_method("faq_driver", scale, lambda: housing_faq(t, task, lazy), repeat, expected)
    record["faq_driver_split"] = driver_split(t, task.query, list(task.features), task.target, lazy)

    con = duckdb.connect()
    for name, df in t.items():
        con.register(name, df)
    record["duckdb_threads"] = con.execute("SELECT current_setting('threads')").fetchone()[0]
    record["duckdb"], _ = timed_method("duckdb", scale, lambda: solved(con.execute(sql).fetchone(), len(columns)),
                                       repeat, expected)
    con.close()
    return record


def housing_spark_sql(spark: Any, record: dict[str, Any], spark_repeat: int) -> None:
    """Spark SQL's figure at ``record``'s scale (the tables made again from the same seed), into ``record``."""
    from faq.learning.datasets import housing, housing_task

    task = housing_task()
    scale = record["scale"]
    t = housing(scale, seed=0, postcodes=record["postcodes"])
    sql, columns = housing_sql(task)
    expected = (np.array([record["answer"][k] for k in ["intercept", *task.features]]), float(record["join_rows"]))
    given = {name: spark.createDataFrame(df).cache() for name, df in t.items()}
    for name, df in given.items():
        df.count()
        df.createOrReplaceTempView(name)
    try:
        record["spark_sql"], _ = timed_method(
            "spark_sql", scale, lambda: solved(spark.sql(sql).collect()[0], len(columns)), spark_repeat, expected)
    finally:
        for name, df in given.items():
            spark.catalog.dropTempView(name)
            df.unpersist()


def housing_ratios(record: dict[str, Any]) -> None:
    """faq's speed-ups over each baseline (their warm medians over faq's) and the issue's two targets."""
    faq_median = record["faq_driver"]["median"]
    on_spark = isinstance(record.get("spark_sql"), dict)
    for name in ["pandas_lstsq", "duckdb"] + (["spark_sql"] if on_spark else []):
        record[f"speedup_vs_{name}"] = round(record[name]["median"] / faq_median, 1)
        record[f"ratio_faq_to_{name}"] = round(faq_median / record[name]["median"], 4)
    record["targets"] = {"faq >= 2x faster than duckdb": record["speedup_vs_duckdb"] >= 2.0,
                         **({"faq >= 10x faster than spark_sql": record["speedup_vs_spark_sql"] >= 10.0}
                            if on_spark else {})}
    log(f"housing {record['scale']}: faq is {record['speedup_vs_duckdb']}x faster than duckdb"
        + (f", {record['speedup_vs_spark_sql']}x than spark sql" if on_spark else "")
        + f", {record['speedup_vs_pandas_lstsq']}x than pandas")


def main_housing(args: argparse.Namespace, argv: list[str] | None) -> None:
    """Long because it records the run's settings: the in-process phase at every scale, then Spark SQL's."""
    import duckdb

    import faq
    from faq.learning.datasets import NOISE_SD, housing_task
    from faq.spark import DeferredSession

    task = housing_task()
    spark_scales = args.scales if args.spark_scales is None else args.spark_scales
    record = Run("bench_learning", argv)
    record["uptime_start"] = uptime()
    record["dataset"] = "housing (faq.learning.datasets.housing, seed 0)"
    record["query"] = task.query
    record["features"] = list(task.features)
    record["target"] = task.target
    record["true_weights"] = task.weights
    record["noise_sd"] = NOISE_SD
    record["ring_width"] = 1 + (len(task.features) + 1) + (len(task.features) + 1) * (len(task.features) + 2) // 2
    record["sql"] = housing_sql(task)[0]
    record["tolerance"] = TOLERANCE
    record["order"] = ("every scale's in-process figures first (pandas, faq, DuckDB: no JVM running), then Spark "
                       "SQL's at --spark-scales in a local[*] session started after them")
    on_spark = [s for s in args.scales if s in spark_scales]
    record["spark_scales"] = on_spark
    skipped = [s for s in args.scales if s not in spark_scales]
    if skipped:
        record["spark_sql_skipped_at_scales"] = skipped
    record["versions"] = {"duckdb": duckdb.__version__, "numpy": np.__version__}
    # faq plans with a session that starts Spark only if something needs it: in-process, nothing does
    lazy = DeferredSession(lambda: faq.get_session(master="local[*]"), master="local[*]")
    results: list[dict[str, Any]] = []
    record["scales"] = results
    for scale in args.scales:
        results.append(housing_in_process(scale, args.postcodes, args.repeat, args.pandas_repeat, lazy))
    record["faq_started_spark"] = lazy.started
    if on_spark:
        t0 = time.perf_counter()
        spark = faq.get_session(master="local[*]")
        record["session_start_seconds"] = round(time.perf_counter() - t0, 2)
        record["spark"] = {"master": spark.sparkContext.master, "version": spark.version,
                           **{k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions",
                                                              "spark.sql.autoBroadcastJoinThreshold",
                                                              "spark.driver.memory")}}
        for item in results:
            if item["scale"] in spark_scales:
                housing_spark_sql(spark, item, args.spark_repeat)
    for item in results:
        if item["scale"] not in spark_scales:
            item["spark_sql"] = "skipped (not in --spark-scales)"
        housing_ratios(item)
    record["uptime_end"] = uptime()
    default = Path("bench/results/learning_housing.json")
    path = record.save(Path(args.out) if args.out is not None else default)
    log(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=["tpch", "housing"], default="tpch",
                        help="tpch: the 1:1 TPC-H-like join (default); housing: the Housing star join")
    parser.add_argument("--scales", type=int, nargs="*", default=None,
                        help="lineitem rows per scale (tpch; default 10000 100000 1000000), or the Housing "
                             "scales (rows per postcode; default 6 10 14)")
    parser.add_argument("--spark-scales", type=int, nargs="*", default=None,
                        help="the scales at which the Spark methods run (tpch default 10000 100000; "
                             "housing default: every scale)")
    parser.add_argument("--postcodes", type=int, default=1000, help="housing: distinct postcodes")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per in-process figure")
    parser.add_argument("--spark-repeat", type=int, default=3, help="warm runs per Spark figure")
    parser.add_argument("--pandas-repeat", type=int, default=2,
                        help="housing: warm runs of the pandas oracle (it lists the join: tens of seconds)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.dataset == "housing":
        args.scales = args.scales or [6, 10, 14]
        main_housing(args, argv)
        return
    args.scales = args.scales or [10_000, 100_000, 1_000_000]
    args.spark_scales = [10_000, 100_000] if args.spark_scales is None else args.spark_scales

    record = Run("bench_learning", argv)
    record["uptime_start"] = uptime()
    record["query"] = QUERY
    record["features"] = FEATURES
    record["target"] = TARGET
    record["tolerance"] = TOLERANCE
    record["spark_scales"] = [s for s in args.scales if s in args.spark_scales]

    import faq

    t0 = time.perf_counter()
    spark = faq.get_session()
    record["session_start_seconds"] = round(time.perf_counter() - t0, 2)
    results: list[dict[str, Any]] = []
    record["scales"] = results
    for scale in args.scales:
        results.append(bench_scale(spark, scale, args.repeat, args.spark_repeat, scale in args.spark_scales))
    record["uptime_end"] = uptime()
    path = record.save(None if args.out is None else Path(args.out))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
