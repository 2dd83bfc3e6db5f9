"""The in-process binary join's two merge kernels on the same tables: numpy sort-merge against pandas.

:func:`faq.joins.merges.binary_kernel` joins integer keys by sorting at every size; this is the
measurement behind that rule.  Each row joins the same two tables with
:func:`~faq.joins.merges.sort_merged` and :func:`~faq.joins.merges.merged` (pandas hash merges),
best of ``--repeat`` runs each, and checks that both give the same rows and the same ⊕ of values:

* ``chain`` -- ``A(i, j) ⋈ B(j, k)``, random keys (many-to-many on ``j``);
* ``same keys`` -- ``A(i, j) ⋈ C(i, j)``, random keys (both sides on both variables);
* ``edges ⋈ reverse`` -- an R-MAT graph's edges ``e(a, b) ⋈ e(b, a)`` read from its Parquet file
  (the 4-cycle's inclusion-exclusion terms join exactly this), and ``node ⋈ e(b, c)`` on ``b``.

With ``--spark``, queries whose steps are these joins, as a user runs them: ``faq.query`` on
``spark.read.parquet`` of the same edges -- the default placement (fetched to the driver, joined
in-process) and ``placement="executors"`` (the rows stay in Spark, as for data the driver cannot hold)
-- against the Spark SQL a user writes for the same number, in the same session, interleaved, answers
checked equal: one cold round (recorded apart as ``cold``), then ``--repeat`` warm rounds, whose medians
the ratios compare (``--queries`` picks some of them by number, from 1):

* ``count() := e(a,b), e(b,a)`` -- reciprocated edges (SQL: a self-join on both columns, ``count(*)``);
* ``count() := e(a,b), e(b,c), e(c,b)`` -- 2-paths whose second edge is reciprocated;
* ``q(a) := e(a,b), e(b,c)`` summed -- 2-paths from each node (SQL: out-degrees joined to the edges,
  summed per node, then over the nodes).

Usage::

    .venv/bin/python -m bench.merge_kernels --scale 18 --out bench/results/merge_kernels.json
    .venv/bin/python -m bench.merge_kernels --scale 18 --spark --queries 1 3 --repeat 5   # without the slow SQL
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import RESULTS, Run, interleaved_rounds, log


def _best(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    best, out = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
    return out, best


def _row(name: str, rows: int, tables: list, repeat: int) -> dict[str, Any]:
    from faq.joins.merges import merged, sort_merged
    from faq.semirings import REAL
    from faq.semirings.numpy_backend import numpy_ops

    ops = numpy_ops(REAL)
    sort_out, sort_s = _best(lambda: sort_merged(tables, [], ops), repeat)
    pandas_out, pandas_s = _best(lambda: merged(tables, [], ops), repeat)
    same = len(sort_out.values) == len(pandas_out.values) and np.isclose(sort_out.values.sum(), pandas_out.values.sum())
    if not same:
        raise AssertionError(f"{name}: sort-merge and pandas disagree")
    row = {"join": name, "rows_per_input": rows, "output_rows": len(sort_out.values), "sort_merge_s": round(sort_s, 4),
           "pandas_s": round(pandas_s, 4), "pandas_over_sort_merge": round(pandas_s / sort_s, 2)}
    log(f"{name:>18} {rows:>9,} rows: sort-merge {sort_s:.4f} s, pandas {pandas_s:.4f} s ({row['output_rows']:,} out)")
    return row


QUERIES = (  # (faq query, Spark SQL over the view e(src, dst) giving the same number)
    ("count() := e(a,b), e(b,a)", "SELECT count(*) FROM e x JOIN e y ON x.src = y.dst AND x.dst = y.src"),
    ("count() := e(a,b), e(b,c), e(c,b)",
     "SELECT count(*) FROM e x JOIN e y ON x.dst = y.src JOIN e z ON z.src = y.dst AND z.dst = y.src"),
    ("q(a) := e(a,b), e(b,c)",  # per node a (as faq's answer is), then summed over them
     "SELECT sum(v) FROM (SELECT x.src, sum(d.n) AS v FROM e x JOIN (SELECT src, count(*) AS n FROM e GROUP BY src) d "
     "ON x.dst = d.src GROUP BY x.src)"),
)


def _queries(parquet: str, repeat: int, chosen: list[int]) -> list[dict[str, Any]]:
    """Each of :data:`QUERIES` by faq (default placement, and ``placement="executors"``: the rows stay in
    Spark, as for data the driver cannot hold) and by Spark SQL on ``spark.read.parquet(parquet)``, same
    session, interleaved."""
    import faq
    from faq.spark import get_session

    spark = get_session()
    rows = []
    for text, sql in [q for number, q in enumerate(QUERIES, 1) if number in chosen]:
        def by_faq(placement: str) -> int:
            with faq.query(text, e=spark.read.parquet(parquet), placement=placement) as result:
                if text.startswith("count"):
                    return int(result.scalar())
                return int(result.df.agg({"value": "sum"}).collect()[0][0])

        def by_sql() -> int:
            spark.read.parquet(parquet).createOrReplaceTempView("e")
            return int(spark.sql(sql).collect()[0][0])

        sides = {"faq_seconds": lambda: by_faq("auto"), "faq_executors_seconds": lambda: by_faq("executors"),
                 "spark_sql_seconds": by_sql}
        runs, cold, answer = interleaved_rounds(sides, repeat)  # the first round cold
        sql_median = float(np.median(runs["spark_sql_seconds"]))
        row = {"query": text, "sql": sql, "answer": answer, "cold": cold, **runs,
               "faq_over_sql_median": round(float(np.median(runs["faq_seconds"])) / sql_median, 3),
               "faq_executors_over_sql_median": round(float(np.median(runs["faq_executors_seconds"])) / sql_median, 3)}
        log(f"{text}: " + ", ".join(f"{name} {values}" for name, values in runs.items()))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=18, help="R-MAT scale of the edges joined with their reverse")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also faq.query on spark.read.parquet against Spark SQL")
    parser.add_argument("--queries", type=int, nargs="+", default=list(range(1, len(QUERIES) + 1)),
                        help="with --spark: the queries to run, by number from 1 (default all)")
    parser.add_argument("--out", default=str(RESULTS / "merge_kernels.json"))
    args = parser.parse_args(argv)
    from faq.joins.table import Table

    run = Run("merge_kernels", argv)
    rng = np.random.default_rng(1)
    rows = []
    for n, keys in ((25_000, 2_680), (200_000, 20_000), (1_000_000, 1_000_000), (2_000_000, 200_000)):
        def table(a: str, b: str) -> Table:
            return Table((a, b), {a: rng.integers(0, keys, n), b: rng.integers(0, keys, n)}, rng.random(n))
        rows.append(_row("chain", n, [table("i", "j"), table("j", "k")], args.repeat))
        rows.append(_row("same keys", n, [table("i", "j"), table("i", "j")], args.repeat))
    import pyarrow.parquet as pq

    from bench.bench_triangles import edge_parquet

    edges = pq.read_table(edge_parquet(f"rmat{args.scale}")[0])  # written once from the generated edge list
    src, dst = (np.asarray(c) for c in (edges.column(0).to_numpy(), edges.column(1).to_numpy()))
    ones = np.ones(len(src))
    forward, reverse = Table(("a", "b"), {"a": src, "b": dst}, ones), Table(("b", "a"), {"b": src, "a": dst}, ones)
    rows.append(_row(f"rmat{args.scale} edges ⋈ reverse", len(src), [forward, reverse], args.repeat))
    nodes = Table(("b",), {"b": np.unique(src)}, None)
    out_edges = Table(("b", "c"), {"b": src, "c": dst}, ones)
    rows.append(_row(f"rmat{args.scale} node ⋈ e(b,c)", len(src), [nodes, out_edges], args.repeat))
    run["rows"] = rows
    if args.spark:
        run["queries_from_parquet"] = _queries(edge_parquet(f"rmat{args.scale}")[0], args.repeat, args.queries)
    run["sort_merge_never_slower"] = all(r["pandas_over_sort_merge"] >= 1.0 for r in rows)
    log(f"wrote {run.save(Path(args.out))}")


if __name__ == "__main__":
    main()
