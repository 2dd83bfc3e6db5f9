"""Where the time of loading an edge list goes: the Spark path stage by stage, and the driver path.

Each stage is timed on its own (every Spark stage is an action over the file,
so the stages' times overlap: the Spark parse runs in the check job *and*
again in the load).  Then both paths end to end, as the triangle jobs use
them: read, clean (self-loops, repeats), for undirected triangles orient by
degree, cache and count.  Rounds alternate the paths, so the load from other
processes on a shared machine weighs on both alike.

Usage (from the repository root)::

    .venv/bin/python -m bench.load_breakdown --scale 17 --rounds 2

Writes ``bench/results/load_breakdown.json`` (:class:`bench.common.Run`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

from bench.common import RESULTS, Run, graph_path, log


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=17)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", default=str(RESULTS / "load_breakdown.json"))
    args = parser.parse_args(argv)

    from faq.graphs.edges import degree_oriented, prepared_graph, simple_directed
    from faq.io import edges as spark_path
    from faq.io import read_edge_list
    from faq.io.local_edges import degree_orient, edges_dataframe, read_edge_arrays, unique_pairs, without_self_loops
    from faq.semirings import get_semiring
    from faq.spark import get_session

    run = Run("load_breakdown", argv)
    path = str(graph_path(f"rmat{args.scale}"))
    spark = get_session(args.master, config={"spark.sql.shuffle.partitions": "8", "spark.driver.memory": "6g"})
    spark.read.text(path).count()  # JVM warm-up, untimed
    rows: list[dict[str, Any]] = []

    def timed(round_: int, stage: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
        rows.append({"round": round_, "stage": stage, "seconds": round(seconds, 3), "load_average": os.getloadavg()[0]})
        log(f"round {round_} {stage}: {seconds:.2f} s")
        return out

    def cached_count(df) -> int:
        df = df.persist()
        try:
            return df.count()
        finally:
            df.unpersist()

    counting = get_semiring("counting")
    src, dst, _ = spark_path._edge_columns(counting, None)
    for r in range(1, args.rounds + 1):
        # The Spark path, stage by stage (each an action over the whole file).
        timed(r, "spark: text read (count)", lambda: spark.read.text(path).count())
        lines = spark_path._data_lines(spark.read.text(path))
        timed(r, "spark: text + trim, comment filter, split (count)", lambda: lines.count())
        timed(r, "spark: + id regex and cast (count)",
              lambda: lines.select(src.alias("s"), dst.alias("d")).where("s is not null and d is not null").count())
        timed(r, "spark: the malformed-line check job", lambda: lines.where(src.isNull() | dst.isNull()).limit(1).collect())
        raw = timed(r, "spark: read_edge_list call (the check job)", lambda: read_edge_list(path, spark=spark, engine="spark"))
        timed(r, "spark: read_edge_list rows (parse, self-loops, distinct; count)", lambda: raw.df.count())
        timed(r, "spark: simple_directed on it (distinct again; count)", lambda: simple_directed(raw).df.count())
        timed(r, "spark: degree_oriented on it (distinct, degrees, 2 joins; count)", lambda: degree_oriented(raw).df.count())
        # The driver path, stage by stage.
        arrays = timed(r, "driver: read_edge_arrays (pyarrow.csv, id regex, cast)", lambda: read_edge_arrays(path))
        pairs = timed(r, "driver: self-loops + unique pairs (numpy)", lambda: unique_pairs(*without_self_loops(*arrays)))
        timed(r, "driver: degree orientation (numpy)", lambda: degree_orient(*arrays))
        df = timed(r, "driver: to Spark (edges_dataframe)", lambda: edges_dataframe(spark, {"src": pairs[0], "dst": pairs[1]}))
        timed(r, "driver: cache + count", lambda: cached_count(df))
        # End to end, as count_triangles loads (directed: simple digraph; undirected: degree-oriented).
        for directed in (True, False):
            kind = "directed" if directed else "undirected"
            timed(r, f"END spark path, {kind}: read + clean{'' if directed else ' + orient'} + cache + count",
                  lambda: cached_count((simple_directed if directed else degree_oriented)(
                      read_edge_list(path, spark=spark, engine="spark")).df))
            timed(r, f"END driver path, {kind}: prepared_graph + cache + count",
                  lambda: cached_count(prepared_graph(path, directed=directed, spark=spark).df))
    run["meta"] = {"graph": f"rmat{args.scale}", "path": path, "master": args.master,
                   "note": "shared 2-core machine: see the load averages"}
    run["rows"] = rows
    print(f"results: {run.save(Path(args.out))}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
