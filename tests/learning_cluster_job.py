"""Child process of tests/test_learning_maintained.py: learning over joins on ``local-cluster[2,1,1024]``.

Run as ``python tests/learning_cluster_job.py SEED``: starts two executor JVMs,
makes the TPC-H shaped tables of tests/test_learning.py as Spark DataFrames,
fits the regression with the largest table kept in Spark (lifted and joined
in its own tasks: faq.learning.in_tasks), runs a moments query whose steps
are partitioned cells on the executors, shortest paths with the edges held on
the executors (faq.recursive.executor_edges), then a maintained model of the same tables and one
batch of deletes; prints one JSON line with both coefficient vectors, the
join's rows, the steps' placements and the master.  A process holds one
SparkContext and the suite's is ``local[2]``, so this session lives here.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(seed: str) -> None:
    sys.path.insert(0, str(ROOT))
    import faq
    from faq.spark import get_session, stop_session
    from tests.test_learning import FEATURES, QUERY, TARGET, tables

    spark = get_session(master="local-cluster[2,1,1024]", config={
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "1g",
        "spark.executorEnv.PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    })
    try:
        t = tables(int(seed))
        given = {name: spark.createDataFrame(df) for name, df in t.items()}
        static = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="executors", **given)
        # An array ring's steps on the executors: partitioned cells running the in-process merges.
        from faq.insideout import evaluate
        from faq.insideout.plans import IN_TASKS

        with evaluate(moments_query(), moments_factors(), placement="executors") as result:
            cells = sorted([row[0], *row[1]] for row in result.df.collect())
            cell_strategies = sorted({s.strategy.name for s in result.plan.steps})
        # A fixpoint with its edges held on the executors (parts built by the executors' Python), the
        # values on the driver: one job a round.
        from faq.recursive.placed import solve_placed

        with solve_placed(fixpoint_edges(spark), "min_plus", source=0, placement="executors") as paths:
            distances = sorted(map(list, paths.df.collect()))
            held = "edges held on the executors" in paths.placement_reason
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **given)
        model.apply(lineitem=spark.createDataFrame(t["lineitem"].head(10).assign(diff=-1)))
        print(json.dumps({
            "master": spark.sparkContext.master,
            "static": [static.intercept, *[static.coefficients[f] for f in FEATURES]],
            "static_rows": static.rows,
            "placements": sorted({s.placement for s in static.plan.steps}),
            "static_in_tasks": all(s.placement_reason.startswith(IN_TASKS) for s in static.plan.steps),
            "cells": cells,
            "cell_strategies": cell_strategies,
            "maintained": [model.intercept, *[model.coefficients[f] for f in FEATURES]],
            "maintained_rows": model.rows,
            "distances": distances,
            "distances_held": held,
        }))
        model.close()
    finally:
        stop_session()


def moments_factors() -> dict:
    """A factor of the moments ring (count, sum, sum of squares per row), for :func:`moments_query`."""
    from faq.factor import factor_of
    from faq.semirings import MOMENTS

    rows = [(i % 5, (i * 3) % 7, [1.0, float(i), float(i * i)]) for i in range(40)]
    return {"e": factor_of(rows, ["c0", "c1"], MOMENTS, name="e")}


def fixpoint_rows() -> list:
    """A weighted digraph of 60 nodes (seeded), for the fixpoint held on the executors."""
    import random

    rng = random.Random(5)
    return [(rng.randrange(60), rng.randrange(60), float(rng.randint(1, 9))) for _ in range(240)]


def fixpoint_edges(spark):
    from faq.factor import factor_of

    return factor_of(fixpoint_rows(), ["src", "dst"], "min_plus", spark=spark)


def moments_query():
    from faq.language import make_query

    return make_query([("e", ["a", "b"]), ("e", ["b", "c"])], ["a"], semiring="moments")


if __name__ == "__main__":
    main(sys.argv[1])
