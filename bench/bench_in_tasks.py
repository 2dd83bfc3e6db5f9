"""A query whose one large factor is too large to fetch: the plan in its tasks, against the other ways.

The query sums a TPC-H-shaped fact table against a dimension, grouped by
supplier, in the ``real`` semiring::

    revenue(suppkey) := lineitem(orderkey, partkey, suppkey), part(partkey)

``lineitem``'s value is its extended price, ``part``'s a weight per part
(:func:`bench.bench_learning.tables`' data, ``--rows`` lineitem rows).  In
one warm process (``local[*]``, 2 cores), each figure the median of
``--repeat`` warm runs with the minimum and maximum:

``pandas``
    both tables as pandas frames: the plan in-process on the driver (the reference);
``in_tasks``
    lineitem from ``spark.read.parquet`` with a fetch budget it exceeds
    (``spark.faq.fetchMemory``, ``--fetch-memory``) and part as pandas, with
    ``spark.faq.inTasks=always``: the plan runs in lineitem's tasks
    (``Plan.in_tasks``, :mod:`faq.insideout.in_tasks`);
``auto``
    the same with the default ``spark.faq.inTasks=auto``, which keeps a
    scalar semiring's steps as Spark jobs (this benchmark is why);
``executors``
    the same inputs with ``placement="executors"``: every step as Spark jobs,
    as a factor too large to fetch ran before;
``fetched``
    lineitem from Parquet with the default budget (it fits: fetched through Arrow, then in-process);
``spark_sql``
    Spark's own way: the Parquet lineitem joined with part (a Spark
    DataFrame of the pandas frame) and ``groupBy(suppkey).agg(sum(price * weight))``.

Every answer is checked against the pandas reference (1e-9 relative per
supplier).

Run from the repository root::

    python -m bench.bench_in_tasks --out bench/results/in_tasks.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable


from bench.bench_learning import tables
from bench.common import GENERATED, Run, log, timed_checked

QUERY = "revenue(suppkey) := lineitem(orderkey, partkey, suppkey), part(partkey)"


def frames(rows: int) -> dict[str, Any]:
    """lineitem (keys, value = extended price) and part (partkey, value = a weight), as pandas."""
    t = tables(rows, seed=rows % 1_000_003)
    lineitem = t["lineitem"][["orderkey", "partkey", "suppkey"]].assign(value=t["lineitem"]["extendedprice"])
    part = t["part"][["partkey"]].assign(value=1.0 + t["part"]["size"] / 50.0)
    return {"lineitem": lineitem, "part": part}


def answer(result: Any) -> dict[int, float]:
    return {int(r[0]): float(r[1]) for r in result.df.collect()}


def timed(fn: Callable[[], dict], repeat: int, expected: dict, name: str) -> dict[str, Any]:
    """The cold run and ``repeat`` warm runs of ``fn``, each answer equal to ``expected`` (1e-9 per key)."""

    def check(got: dict) -> None:
        assert set(got) == set(expected), (name, len(got), len(expected))
        worst = max(abs(got[k] - v) / max(1.0, abs(v)) for k, v in expected.items())
        assert worst <= 1e-9, (name, worst)

    return timed_checked(fn, repeat, check, name)


def bench_rows(spark: Any, rows: int, repeat: int, fetch_memory: str) -> dict[str, Any]:
    import faq
    from pyspark.sql import functions as F

    data = frames(rows)
    path = GENERATED / f"in-tasks-lineitem-{rows}.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        data["lineitem"].to_parquet(path)
    log(f"{rows} lineitem rows")
    record: dict[str, Any] = {"lineitem_rows": rows, "part_rows": len(data["part"]), "query": QUERY}

    def run(lineitem: Any, placement: Any = None) -> dict:
        with faq.query(QUERY, semiring="real", placement=placement, lineitem=lineitem, part=data["part"]) as result:
            record.setdefault("plans", {})[placement or "auto"] = result.plan.in_tasks or ",".join(
                sorted({s.placement for s in result.plan.steps}))
            return answer(result)

    expected = run(data["lineitem"])
    record["pandas"] = timed(lambda: run(data["lineitem"]), repeat, expected, "pandas, in-process")
    spark.conf.set("spark.faq.fetchMemory", fetch_memory)
    try:
        spark.conf.set("spark.faq.inTasks", "always")
        record["in_tasks"] = timed(lambda: run(spark.read.parquet(str(path))), repeat, expected,
                                   f"Parquet too large to fetch ({fetch_memory}): in lineitem's tasks")
        record["plan_in_tasks"] = record["plans"]["auto"]
        spark.conf.unset("spark.faq.inTasks")
        record["auto"] = timed(lambda: run(spark.read.parquet(str(path))), repeat, expected,
                               f"Parquet too large to fetch ({fetch_memory}), spark.faq.inTasks=auto")
        record["plan_auto"] = record["plans"]["auto"]
        record["executors"] = timed(lambda: run(spark.read.parquet(str(path)), "executors"), repeat, expected,
                                    "Parquet, placement=executors: steps as Spark jobs")
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
        spark.conf.unset("spark.faq.inTasks")
    record["fetched"] = timed(lambda: run(spark.read.parquet(str(path))), repeat, expected,
                              "Parquet, default budget: fetched")
    part = spark.createDataFrame(data["part"]).withColumnRenamed("value", "weight")

    def spark_sql() -> dict:
        lineitem = spark.read.parquet(str(path))
        grouped = lineitem.join(part, "partkey").groupBy("suppkey").agg(
            F.sum(F.col("value") * F.col("weight")).alias("value"))
        return {int(r[0]): float(r[1]) for r in grouped.collect()}

    record["spark_sql"] = timed(spark_sql, repeat, expected, "Spark SQL join + groupBy")
    median = {k: v["median_seconds"] for k, v in record.items() if isinstance(v, dict) and "median_seconds" in v}
    record["in_tasks / pandas"] = round(median["in_tasks"] / median["pandas"], 2)
    record["executors / in_tasks"] = round(median["executors"] / median["in_tasks"], 2)
    record["spark_sql / in_tasks"] = round(median["spark_sql"] / median["in_tasks"], 2)
    record.pop("plans")
    return record


def main(argv: Any = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--fetch-memory", default="8m", help="spark.faq.fetchMemory for the in_tasks run")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    from faq.spark import get_session

    spark = get_session()
    run = Run("bench_in_tasks", argv)
    run["results"] = [bench_rows(spark, rows, args.repeat, args.fetch_memory) for rows in args.rows]
    log(f"wrote {run.save(args.out)}")


if __name__ == "__main__":
    main()
