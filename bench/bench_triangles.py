"""Triangle job vs Spark SQL's 3-way self-join, in one Spark session.

The baseline is the plan GraphFrames' ``find("(a)-[]->(b); (a)-[]->(c); (b)-[]->(c)")``
runs: the pattern's terms folded left to right as binary joins, written here
as one Spark SQL statement over the same cached edge table.  Both sides count
feed-forward triangles of the simple digraph (``directed``); the undirected
job is also timed against the same SQL over its degree-oriented edges.

Usage::

    .venv/bin/python bench/bench_triangles.py                 # rmat 14, 16 and soc-Slashdot0902
    .venv/bin/python bench/bench_triangles.py --graphs rmat14 --repeat 1

Results go to stdout as a table and to ``bench/results/triangles.json``.
Every count is checked: faq and SQL must agree, or the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from faq.factor import Factor  # noqa: E402
from faq.graphs.edges import degree_oriented, simple_directed  # noqa: E402
from faq.graphs.triangles import count_triangles  # noqa: E402
from faq.io import read_edge_list  # noqa: E402
from faq.spark import get_session  # noqa: E402

SLASHDOT = ROOT.parent / "shared" / "data" / "graphs" / "soc-Slashdot0902.txt.gz"
WORK = ROOT / "bench" / "out"

SQL = """
SELECT count(*) AS n
FROM e AS e1
JOIN e AS e2 ON e1.src = e2.src
JOIN e AS e3 ON e1.dst = e3.src AND e2.dst = e3.dst
"""


def graph_path(name: str) -> Path:
    """Path of a named graph, generating R-MAT graphs on first use."""
    if name == "slashdot":
        return SLASHDOT
    if name.startswith("rmat"):
        scale = int(name[4:])
        out = WORK / f"rmat{scale}.txt"
        if not out.exists():
            WORK.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [sys.executable, str(ROOT / "tools" / "gen_rmat.py"), str(scale), "16", str(out), "--seed", "1"],
                check=True,
            )
        return out
    raise SystemExit(f"unknown graph {name!r}: use rmatN or slashdot")


def timed(fn, repeat: int) -> tuple[int, float]:
    """Run ``fn`` ``repeat`` times; return its (checked equal) result and the median seconds."""
    results, times = set(), []
    for _ in range(repeat):
        t0 = time.perf_counter()
        results.add(fn())
        times.append(time.perf_counter() - t0)
    if len(results) != 1:
        raise RuntimeError(f"runs disagree: {results}")
    return results.pop(), statistics.median(times)


def sql_count(spark, edges: Factor) -> int:
    edges.df.select("src", "dst").createOrReplaceTempView("e")
    return int(spark.sql(SQL).first()["n"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", nargs="+", default=["rmat14", "rmat16", "slashdot"])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    spark = get_session(args.master, config={"spark.sql.shuffle.partitions": "8"})
    rows = []
    for name in args.graphs:
        path = graph_path(name)
        raw = read_edge_list(str(path), spark=spark)
        for directed in (True, False):
            prepared = simple_directed(raw) if directed else degree_oriented(raw)
            cached = prepared.df.persist()
            edges = Factor(cached, prepared.variables, prepared.semiring, prepared.value, "edge")
            n_edges = edges.count()  # materialise the cache before timing
            faq_count, faq_s = timed(lambda: count_triangles(edges, directed=True).count, args.repeat)
            sql_n, sql_s = timed(lambda: sql_count(spark, edges), args.repeat)
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

    out = ROOT / "bench" / "results" / "triangles.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": "python bench/bench_triangles.py " + " ".join(sys.argv[1:]),
        "master": args.master,
        "repeat": args.repeat,
        "cores": os.cpu_count(),
        "spark": spark.version,
    }
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    print()
    print(f"{'graph':10} {'job':30} {'edges':>9} {'triangles':>11} {'faq s':>7} {'SQL s':>7} {'SQL/faq':>7}")
    for r in rows:
        print(
            f"{r['graph']:10} {r['job']:30} {r['edges']:>9} {r['triangles']:>11} "
            f"{r['faq_seconds']:>7} {r['spark_sql_seconds']:>7} {r['speedup_vs_sql']:>7}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
