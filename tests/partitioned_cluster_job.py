"""Child process of tests/test_partitioned.py: triangles on ``local-cluster[2,1,1024]`` with a tiny index budget.

Run as ``python tests/partitioned_cluster_job.py GRAPH INDEX_MEMORY``; prints one JSON line: the
count, the plan's strategy of the join step (name, reason, grid, per-task estimate, explain line)
and the master.  A process holds one SparkContext and the suite's is ``local[2]``, so the
cluster session lives here, started and stopped by this script.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(graph: str, index_memory: str) -> None:
    sys.path.insert(0, str(ROOT))
    from faq.graphs.triangles import triangle_count
    from faq.spark import get_session, stop_session

    spark = get_session(master="local-cluster[2,1,1024]", config={
        "spark.faq.indexMemory": index_memory,  # the index (about 502 KiB) cannot fit
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "1g",
        # The executors' Python workers import this checkout's faq.
        "spark.executorEnv.PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    })
    try:
        # Both executor JVMs registered before the plan reads the parallelism: on a busy machine the
        # second one can take tens of seconds to come up.
        deadline = time.monotonic() + 240
        while _executors(spark) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        result = triangle_count(graph)
        step = next(s for s in result.plan.steps if s.strategy.name != "binary")
        print(json.dumps({
            "count": result.count,
            "seconds": round(result.seconds, 1),
            "master": spark.sparkContext.master,
            "executors": _executors(spark),
            "strategy": step.strategy.to_dict(),
            "explain": step.strategy.describe(),
            "index_memory": result.plan.environment.index_memory,
            **_broadcast(spark, graph),
        }))
    finally:
        stop_session()


def _executors(spark) -> int:
    """Executors registered with the driver (its own block manager left out)."""
    return spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


def _broadcast(spark, graph: str) -> dict:
    """The same count with room for the index: the broadcast strategy, its index file fetched by
    both executor JVMs from the driver and mapped by their Python workers; then with a 100 KiB
    driver budget, the index built on the executors."""
    from faq.graphs.triangles import triangle_count

    spark.conf.set("spark.faq.indexMemory", "256m")
    result = triangle_count(graph)
    step = next(s for s in result.plan.steps if s.strategy.name != "binary")
    # A driver too small for the index: built on the executors, each from the Parquet inputs.
    spark.conf.set("spark.faq.driverIndexMemory", "100k")
    built = triangle_count(graph)
    built_step = next(s for s in built.plan.steps if s.strategy.name != "binary")
    return {"broadcast_count": result.count, "broadcast_strategy": step.strategy.to_dict(),
            "built_count": built.count, "built_strategy": built_step.strategy.to_dict()}


if __name__ == "__main__":
    main(*sys.argv[1:3])
