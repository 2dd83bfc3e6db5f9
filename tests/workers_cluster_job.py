"""Child process of tests/test_workers.py: executors whose Python lacks faq, then the same executors on a shipped environment.

Run as ``python tests/workers_cluster_job.py ARCHIVE BARE_PYTHON GRAPH``: starts
``local-cluster[1,1,1024]`` with ``PYSPARK_PYTHON=BARE_PYTHON`` (a Python of the
driver's version without faq, numpy, pyarrow or numba) and
``spark.archives=ARCHIVE#environment`` (made by :func:`faq.workers.pack_environment`),
counts the undirected triangles of GRAPH from a Spark DataFrame (which must
fail with the probe's ``WORKER_ENVIRONMENT`` error, before any work), then
sets ``spark.sql.execution.pyspark.python=./environment/bin/python`` and
counts again.  Prints one JSON line: the error, both probe reports, the
count and the seconds each step took.  A process holds one SparkContext and
the suite's is ``local[2]``, so this session lives here, started and
stopped by this script; its executor's work directory (with the unpacked
environment, about 650 MB) is removed at the end.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time


def main(archive: str, bare_python: str, graph: str) -> None:
    os.environ["PYSPARK_PYTHON"] = bare_python  # what a session built outside faq's venv gets
    import faq
    from faq.errors import WorkerEnvironmentError
    from faq.spark import get_session, stop_session
    from faq.workers import PYTHON_CONF, ensure_workers

    started = time.perf_counter()
    spark = get_session(master="local-cluster[1,1,1024]", config={
        "spark.archives": f"{archive}#environment",
        "spark.faq.placement": "executors",  # the join runs in the executors' Python, not in-process
        "spark.driver.memory": "1g",
        "spark.sql.shuffle.partitions": "2",
    })
    out: dict = {"master": spark.conf.get("spark.master"), "start_seconds": _since(started)}
    work = os.path.join(_spark_home(), "work", spark.conf.get("spark.app.id"))
    try:
        edges = spark.read.csv(graph, sep=" ", schema="src long, dst long")
        began = time.perf_counter()
        try:
            faq.count_triangles(edges)
            out["error"] = None
        except WorkerEnvironmentError as error:
            out["error"] = {"class": type(error).__name__, "error_class": error.error_class,
                            "executable": error.parameters["executable"], "problems": error.parameters["problems"],
                            "message": str(error)}
        out["bare_seconds"] = _since(began)
        spark.conf.set(PYTHON_CONF, "./environment/bin/python")
        began = time.perf_counter()
        out["shipped"] = dataclasses.asdict(ensure_workers(spark))
        out["probe_seconds"] = _since(began)
        began = time.perf_counter()
        result = faq.count_triangles(edges)
        out["count"] = result.count
        out["strategies"] = [s.strategy.name for s in result.plan.steps]
        out["placements"] = [s.placement for s in result.plan.steps]
        out["count_seconds"] = _since(began)
    finally:
        stop_session()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 2)


def _spark_home() -> str:
    """Where local-cluster's workers keep their work directories (``$SPARK_HOME/work``)."""
    from pyspark.find_spark_home import _find_spark_home

    return os.environ.get("SPARK_HOME") or _find_spark_home()


if __name__ == "__main__":
    main(*sys.argv[1:4])
