"""Child process of tests/test_local_cluster.py: one ``local-cluster[2,1,1024]`` for both cluster checks.

Run as ``python tests/local_cluster_job.py GRAPH INDEX_MEMORY SEED``: starts the cluster once (its
driver and two executor JVMs are most of each check's time), runs
:func:`tests.partitioned_cluster_job.run` (triangles of GRAPH with the index budget INDEX_MEMORY,
which that run unsets when it ends) and then :func:`tests.learning_cluster_job.run` (learning over
the joins of tables seeded SEED), and prints one JSON line ``{"partitioned": ..., "learning": ...}``.
A check that raises gives ``{"error": traceback}`` in its place and the other still runs, so each
test fails or passes on its own half.  A process holds one SparkContext and the suite's is
``local[2]``, so the cluster session lives here, started and stopped by this script.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(graph: str, index_memory: str, seed: str) -> None:
    sys.path.insert(0, str(ROOT))
    from faq.spark import get_session, stop_session
    from tests import learning_cluster_job, partitioned_cluster_job

    spark = get_session(master="local-cluster[2,1,1024]", config=partitioned_cluster_job.CLUSTER_CONFIG)
    out = {}
    try:
        for name, run in (("partitioned", lambda: partitioned_cluster_job.run(spark, graph, index_memory)),
                          ("learning", lambda: learning_cluster_job.run(spark, seed))):
            try:
                out[name] = run()
            except Exception:  # noqa: BLE001 -- reported to that half's test, which fails on it
                out[name] = {"error": traceback.format_exc()}
    finally:
        stop_session()
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:4])
