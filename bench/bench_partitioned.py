"""Undirected triangles through each generic-join strategy, in one run: broadcast, partitioned, shuffle.

Each method answers ``count() := edge(a,b), edge(a,c), edge(b,c)`` on the
degree-oriented simple graph (what ``faq triangles`` counts) through the
planner and executor (:func:`faq.insideout.evaluate`), the join step forced to
one strategy; the clock runs from the cached oriented edge table to the count
(planning, its row count, the join and the final sum).  Methods:

* ``broadcast`` — ``join="generic_broadcast"``;
* ``partitioned`` — ``join="generic_partitioned"`` with the session's index
  memory (a grid of as many cells as the parallelism when the index fits);
* ``partitioned@SIZE`` — ``join="generic"`` (not forced) with
  ``spark.faq.indexMemory=SIZE`` (``--small-budget``): the planner picks the
  partitioned strategy by itself and sizes the grid so a cell fits SIZE;
* ``shuffle`` — ``join="generic_shuffle"``.

Every count must agree (and equal SNAP's published count when the graph is
in tests/data/graphs-MANIFEST.tsv).

Usage (from the repository root)::

    python -m bench.bench_partitioned --graph email-Eu-core
    python -m bench.bench_partitioned --graph rmat14 --repeat 3

Results: a table on stdout and ``bench/results/partitioned.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional

from bench.common import RESULTS, TEST_DATA, Run, graph_path, log, median_seconds


def published_count(path: Path) -> Optional[int]:
    """SNAP's undirected triangle count of a graph in tests/data (None for others)."""
    manifest = TEST_DATA / "graphs-MANIFEST.tsv"
    with manifest.open() as f:
        rows = csv.DictReader((line for line in f if not line.startswith("# ") or "file" in line), delimiter="\t")
        for row in rows:
            if (row.get("# file") or row.get("file")) == path.name:
                return int(row["undirected_triangles"])
    return None


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graph", default="email-Eu-core", help="rmatN or a graph of tests/data (default: %(default)s)")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--repeat", type=int, default=1, help="runs per method, median reported")
    p.add_argument("--small-budget", default="600k", help="spark.faq.indexMemory of the partitioned@SIZE method")
    p.add_argument("--methods", nargs="+", default=["broadcast", "partitioned", "partitioned@", "shuffle"])
    p.add_argument("--out", type=Path, default=RESULTS / "partitioned.json")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    from faq.graphs.edges import degree_oriented, edge_factor
    from faq.graphs.triangles import TRIANGLE_QUERY
    from faq.insideout import evaluate
    from faq.scope import Scope
    from faq.spark import get_session

    args = parse_args(argv)
    run = Run("bench_partitioned", argv)
    path = graph_path(args.graph)
    spark = get_session(master=args.master, config={"spark.sql.shuffle.partitions": "4"})
    expected = published_count(path)
    rows = []
    with Scope() as scope:
        graph = degree_oriented(edge_factor(str(path)))
        graph = replace(graph, df=scope.persist(graph.df), name="edge")
        edges = graph.count()
        log(f"{path.name}: {edges} oriented edges; published triangles {expected}")
        for method in args.methods:
            budget = args.small_budget if method == "partitioned@" else None
            join = {"broadcast": "generic_broadcast", "partitioned": "generic_partitioned",
                    "partitioned@": "generic", "shuffle": "generic_shuffle"}[method]
            label = f"partitioned@{budget}" if budget else method
            seen: dict = {}

            def once() -> int:
                if budget:
                    spark.conf.set("spark.faq.indexMemory", budget)
                try:
                    with evaluate(TRIANGLE_QUERY, {"edge": graph}, join=join) as result:
                        seen["strategy"] = result.plan.steps[0].strategy
                        seen["note"] = result.notes[0]
                        return int(result.scalar())
                finally:
                    if budget:
                        spark.conf.unset("spark.faq.indexMemory")

            count, seconds = median_seconds(once, args.repeat)
            strategy = seen["strategy"]
            rows.append({"method": label, "count": count, "seconds": round(seconds, 2),
                         "strategy": strategy.name, "explain": strategy.describe(), "ran": seen["note"]})
            log(f"{label}: {count} in {seconds:.2f} s -- {strategy.describe()}")
    counts = {r["count"] for r in rows}
    agree = len(counts) == 1 and (expected is None or counts == {expected})
    run["graph"] = path.name
    run["edges"] = edges
    run["published_count"] = expected
    run["master"] = args.master
    run["repeat"] = args.repeat
    run["methods"] = rows
    run["counts_agree"] = agree
    saved = run.save(args.out)
    print(f"\n{run.record['command']}  ({path.name}, {edges} oriented edges, master {args.master}, "
          f"load {run.record['load_average_start']} -> {run.record['load_average_end']})")
    width = max(len(r["method"]) for r in rows)
    for r in rows:
        print(f"  {r['method']:<{width}}  {r['seconds']:8.2f} s  count {r['count']}  [{r['explain']}]")
    print(f"counts agree{' with the published count' if expected else ''}: {agree}; written to {saved}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
