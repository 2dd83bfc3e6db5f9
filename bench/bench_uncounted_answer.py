"""An answer left in Spark, counted inside ``faq.query`` or not: the same process, Spark SQL beside it.

Run from the repository root (one process, ``local[*]``; R-MAT 18 is written to ``bench/data`` if missing)::

    .venv/bin/python -m bench.bench_uncounted_answer
    .venv/bin/python -m bench.bench_uncounted_answer --repeat 7 --out bench/results/uncounted_answer.json

The query is the 2-paths from each node, ``q(a) := e(a,b), e(b,c)``, over ``spark.read.parquet`` of
R-MAT 18 with ``placement="executors"``; the caller sums the answer's ``value`` (one job), as
:mod:`bench.merge_kernels` does.  Three sides, interleaved, one cold round then ``--repeat`` warm ones:

* ``faq``: this tree (the last step persisted, not counted: the caller's job fills the cache);
* ``faq_counted``: the same code with the last step counted before ``faq.query`` returns, as it was
  before (``_run_step``'s ``final`` forced off);
* ``spark_sql``: the same number in Spark SQL over the same Parquet (:data:`bench.merge_kernels.QUERIES`).

Every side's answer is checked equal.  Results: JSON with the command, the commit, the load average,
each side's runs and medians, and the ratios to Spark SQL.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any, Callable

from bench.common import RESULTS, Run, interleaved_rounds, log

QUERY = "q(a) := e(a,b), e(b,c)"


def sides(parquet: str) -> dict[str, Callable[[], int]]:
    """The three ways, each returning the summed answer."""
    import faq
    from bench.merge_kernels import QUERIES
    from faq.insideout import executor
    from faq.spark import get_session

    spark = get_session()
    sql = dict(QUERIES)[QUERY]
    as_it_is = executor._run_step

    def counted(*args: Any, **kwargs: Any) -> Any:
        return as_it_is(*args, **{**kwargs, "final": False})

    def by_faq(run_step: Callable) -> int:
        executor._run_step = run_step
        try:
            with faq.query(QUERY, e=spark.read.parquet(parquet), placement="executors") as result:
                return int(result.df.agg({"value": "sum"}).collect()[0][0])
        finally:
            executor._run_step = as_it_is

    def by_sql() -> int:
        spark.read.parquet(parquet).createOrReplaceTempView("e")
        return int(spark.sql(sql).collect()[0][0])

    return {"faq": lambda: by_faq(as_it_is), "faq_counted": lambda: by_faq(counted), "spark_sql": by_sql}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", default=str(RESULTS / "uncounted_answer.json"))
    args = parser.parse_args(argv)
    from bench.bench_triangles import edge_parquet

    run = Run("bench_uncounted_answer", argv)
    ways = sides(str(edge_parquet(f"rmat{args.scale}")[0]))
    runs, cold, answer = interleaved_rounds(ways, args.repeat)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    run["inputs"] = {"query": QUERY, "graph": f"R-MAT {args.scale}, spark.read.parquet", "placement": "executors",
                     "caller": "result.df.agg(sum(value)).collect()", "answer": answer}
    run["cold"], run["runs"], run["medians"] = cold, runs, medians
    run["over_spark_sql"] = {name: round(medians[name] / medians["spark_sql"], 3) for name in ("faq", "faq_counted")}
    for name, values in runs.items():
        log(f"{name}: median {medians[name]:.3f} s {values}")
    log(f"over Spark SQL: {run.record['over_spark_sql']}")
    log(f"wrote {run.save(Path(args.out))}")


if __name__ == "__main__":
    main()
