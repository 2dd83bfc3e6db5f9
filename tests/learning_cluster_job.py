"""Child process of tests/test_learning_maintained.py: learning over joins on ``local-cluster[2,1,1024]``.

Run as ``python tests/learning_cluster_job.py SEED``: starts two executor JVMs,
makes the TPC-H shaped tables of tests/test_learning.py as Spark DataFrames,
fits the regression with every step on the executors (the cofactor ring as
Spark Column expressions), then a maintained model of the same tables and one
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
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **given)
        model.apply(lineitem=spark.createDataFrame(t["lineitem"].head(10).assign(diff=-1)))
        print(json.dumps({
            "master": spark.sparkContext.master,
            "static": [static.intercept, *[static.coefficients[f] for f in FEATURES]],
            "static_rows": static.rows,
            "placements": sorted({s.placement for s in static.plan.steps}),
            "maintained": [model.intercept, *[model.coefficients[f] for f in FEATURES]],
            "maintained_rows": model.rows,
        }))
        model.close()
    finally:
        stop_session()


if __name__ == "__main__":
    main(sys.argv[1])
