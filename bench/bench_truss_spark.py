"""Truss decomposition of a Spark DataFrame on the driver against on the executors, same run, same answers.

p2p-Gnutella31 (tests/data) is written to Parquet once and read with ``spark.read.parquet``; then
``faq.truss(df, placement=...)`` runs ``--repeat`` times each way, interleaved:

* **driver** -- the edges collected once (Arrow), supports and peeling in compiled loops
  (:mod:`faq.graphs.truss`);
* **executors** -- triangles listed by Spark joins and the local h-index iteration to its fixpoint, a job a
  round (:mod:`faq.graphs.truss_spark`).

Each timing is the call (its result materialised: the driver's arrays, the executors' checkpoints); the
answers -- every edge's trussness -- are compared after, outside the clock.  The machine's load is
recorded (shared machines: a figure measured under load says so).

    python -m bench.bench_truss_spark
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import GENERATED, RESULTS, TEST_DATA, Run, load_average, log, print_summary

GRAPH = "p2p-Gnutella31.txt.gz"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", default=GRAPH, help="an edge list in tests/data (default: %(default)s)")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default=str(RESULTS / "truss_spark.json"))
    return p.parse_args(argv)


def parquet_edges(spark: Any, graph: str) -> Any:
    """The graph's edge list as Parquet (written once under bench/data), read back by Spark."""
    import pandas as pd

    from faq.io.local_edges import read_edge_arrays

    path = GENERATED / f"{graph.split('.')[0]}.parquet"
    if not path.exists():
        src, dst = read_edge_arrays(str(TEST_DATA / graph))
        GENERATED.mkdir(parents=True, exist_ok=True)
        spark.createDataFrame(pd.DataFrame({"src": src, "dst": dst})).write.parquet(str(path))
    return spark.read.parquet(str(path))


def rows_of(result: Any) -> list:
    """Every (src, dst, trussness) of a result, sorted (the driver's from its arrays, the executors' collected)."""
    if hasattr(result, "arrow"):
        table = result.arrow()
        return sorted(zip(*(table.column(c).to_pylist() for c in ("src", "dst", "trussness"))))
    return sorted(map(tuple, result.table().toPandas().itertuples(index=False, name=None)))


def one(df: Any, placement: str) -> tuple[Any, float]:
    import faq

    t0 = time.perf_counter()
    result = faq.truss(df, placement=placement)
    return result, time.perf_counter() - t0


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_truss_spark", argv)
    from faq.spark import get_session

    spark = get_session(master=args.master)
    df = parquet_edges(spark, args.graph)
    run["graph"], run["edge_records"] = args.graph, df.count()
    seconds: dict[str, list[float]] = {"driver": [], "executors": []}
    phases: dict[str, list[dict[str, float]]] = {p: [] for p in seconds}  # each run's own clocks
    answers: dict[str, list] = {}
    facts: dict[str, Any] = {}
    for i in range(args.repeat):
        for placement in seconds:  # interleaved: the same load for both
            result, took = one(df, placement)
            seconds[placement].append(took)
            phases[placement].append({name: round(x, 3) for name, x in result.seconds.items()})
            log(f"run {i + 1} {placement}: {took:.2f} s (load {load_average()})")
            if placement not in answers:
                answers[placement] = rows_of(result)
                facts[placement] = {"plan": str(result.explain()), "counts": result.counts, "max_k": result.max_k,
                                    **getattr(result, "facts", {})}
            result.close()
    same = answers["driver"] == answers["executors"]
    run["edges"] = len(answers["driver"])
    run["answers_equal"] = same
    run["placements"] = {p: {"median_seconds": round(statistics.median(s), 3), "seconds": [round(x, 3) for x in s],
                             "phases": phases[p], **facts[p]} for p, s in seconds.items()}
    run["executors_over_driver"] = round(statistics.median(seconds["executors"]) /
                                         statistics.median(seconds["driver"]), 2)
    out = run.save(Path(args.out))
    print_summary([(p, f"{v['median_seconds']} s (runs {v['seconds']})") for p, v in run.record["placements"].items()],
                  {"answers equal": same}, out)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
