"""Triangle job vs Spark SQL's 3-way self-join, in one Spark session.

The baseline is the plan GraphFrames' ``find("(a)-[]->(b); (a)-[]->(c); (b)-[]->(c)")``
runs: the pattern's terms folded left to right as binary joins, written here
as one Spark SQL statement over the same cached edge table.  Both sides count
feed-forward triangles of the simple digraph (``directed``); the undirected
job is also timed against the same SQL over its degree-oriented edges.

Graphs: ``rmatN`` is generated (``tools/gen_rmat.py N 16 --seed 1``, cached in
bench/data); any other name is a graph of tests/data (``Email-Enron``: SNAP
email-Enron, the default real graph -- it replaced soc-Slashdot0902, which was
read from outside the checkout; ``wiki-Vote``, ...).

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_triangles                 # rmat 14, 16 and Email-Enron
    .venv/bin/python -m bench.bench_triangles --graphs rmat14 --repeat 1 --out /tmp/triangles.json

Results go to stdout as a table and to ``bench/results/triangles.json`` (``--out``),
with the command, the faq commit and the load average (:class:`bench.common.Run`).
Every count is checked: faq and SQL must agree, or the run fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

from bench.common import RESULTS, SNAP_GRAPH, Run, graph_path, log, median_seconds
from faq.factor import Factor
from faq.graphs.edges import degree_oriented, simple_directed
from faq.graphs.triangles import triangle_count
from faq.io import read_edge_list
from faq.spark import get_session

SQL = """
SELECT count(*) AS n
FROM e AS e1
JOIN e AS e2 ON e1.src = e2.src
JOIN e AS e3 ON e1.dst = e3.src AND e2.dst = e3.dst
"""


def sql_count(spark, edges: Factor) -> int:
    edges.df.select("src", "dst").createOrReplaceTempView("e")
    return int(spark.sql(SQL).first()["n"])


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", nargs="+", default=["rmat14", "rmat16", SNAP_GRAPH],
                        help="rmatN (generated) or graphs of tests/data by name")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS / "triangles.json")
    args = parser.parse_args(argv)
    run = Run("bench_triangles", argv)

    spark = get_session(args.master, config={"spark.sql.shuffle.partitions": "8"})
    rows = []
    for name in args.graphs:
        path = graph_path(name)
        log(f"{name}: {path}")
        raw = read_edge_list(str(path), spark=spark)
        for directed in (True, False):
            prepared = simple_directed(raw) if directed else degree_oriented(raw)
            cached = prepared.df.persist()
            edges = Factor(cached, prepared.variables, prepared.semiring, prepared.value, "edge")
            n_edges = edges.count()  # materialise the cache before timing
            faq_count, faq_s = median_seconds(lambda: triangle_count(edges, directed=True).count, args.repeat)
            sql_n, sql_s = median_seconds(lambda: sql_count(spark, edges), args.repeat)
            cached.unpersist()
            if faq_count != sql_n:
                raise RuntimeError(f"{name}: faq counted {faq_count}, Spark SQL {sql_n}")
            row = {
                "graph": name,
                "job": "feed-forward" if directed else "undirected (degree-oriented)",
                "edges": n_edges,
                "triangles": faq_count,
                "faq_seconds": round(faq_s, 2),
                "spark_sql_seconds": round(sql_s, 2),
                "speedup_vs_sql": round(sql_s / faq_s, 2),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)

    run["meta"] = {"master": args.master, "repeat": args.repeat, "cores": run.record["cpus"], "spark": spark.version}
    run["rows"] = rows
    out = run.save(args.out)
    print()
    print(f"{'graph':10} {'job':30} {'edges':>9} {'triangles':>11} {'faq s':>7} {'SQL s':>7} {'SQL/faq':>7}")
    for r in rows:
        print(
            f"{r['graph']:10} {r['job']:30} {r['edges']:>9} {r['triangles']:>11} "
            f"{r['faq_seconds']:>7} {r['spark_sql_seconds']:>7} {r['speedup_vs_sql']:>7}"
        )
    print(f"results: {out}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
