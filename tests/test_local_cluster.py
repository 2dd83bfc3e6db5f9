"""Real executor JVMs: ``local-cluster[2,1,1024]`` in one child process for both checks of this file.

A process holds one SparkContext and the suite's is ``local[2]``, so the cluster runs in a child
(tests/local_cluster_job.py), started once: its driver and two executor JVMs are most of each
check's time.  The child runs the partitioned-join check (tests/partitioned_cluster_job.py, from
tests/test_partitioned.py) and then the learning check (tests/learning_cluster_job.py, from
tests/test_learning_maintained.py), each reported on its own: a check that raised fails only its
test, with the child's traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tests.test_learning import FEATURES, TARGET, joined, least_squares, tables

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
EMAIL_EU_CORE_TRIANGLES = 105461  # SNAP's published count (tests/data/graphs-MANIFEST.tsv)
SEED = 61  # the learning check's tables (tests/test_learning.py's tables(SEED))


@pytest.fixture(scope="module")
def cluster() -> dict:
    """``{"partitioned": ..., "learning": ...}``: what each check of the child found (or its error)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "local_cluster_job.py"),
                          str(DATA / "email-Eu-core.txt.gz"), "300k", str(SEED)],
                         capture_output=True, text=True, env=env, timeout=1200)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def found_by(cluster: dict, check: str) -> dict:
    found = cluster[check]
    assert "error" not in found, f"the {check} check raised in the child:\n{found.get('error')}"
    return found


# --- the partitioned join: chosen without forcing, exact (tests/test_partitioned.py) ----------


def test_local_cluster_chooses_partitioned_when_the_index_cannot_fit(cluster):
    """Two executor JVMs (local-cluster[2,1,1024]) and ``spark.faq.indexMemory=300k``: the
    oriented email-Eu-core index (16,064 rows, about 502 KiB estimated for the compiled loop the
    count runs) does not fit, so the plan
    picks the partitioned strategy by itself, with a grid whose cell fits the budget, and the
    count is SNAP's; with 256m it broadcasts (a mapped index file both executors fetch), and
    the count is SNAP's again; with a 100 KiB driver budget the index is built on the executors
    and the count is SNAP's once more.  Runs in a child process (one SparkContext per process; the suite's
    session stays as it is)."""
    found = found_by(cluster, "partitioned")
    assert found["master"] == "local-cluster[2,1,1024]" and found["executors"] == 2
    strategy = found["strategy"]
    assert found["index_memory"] == 300 * 1024
    assert strategy["name"] == "partitioned" and "exceeds the index memory" in strategy["reason"]
    assert strategy["index_bytes"] > found["index_memory"] >= strategy["task_bytes"]
    assert strategy["cells"] > 1 and "grid a=" in found["explain"]
    assert found["count"] == EMAIL_EU_CORE_TRIANGLES
    # With room for the index: broadcast, the index file fetched by both executors and mapped.
    assert found["broadcast_strategy"]["name"] == "broadcast" and found["broadcast_strategy"]["index_dir"] is None
    assert found["broadcast_count"] == EMAIL_EU_CORE_TRIANGLES
    # A driver budget below the index: built on the executors (each executor JVM's workers build
    # their own copy from the Parquet inputs), exact again.
    built = found["built_strategy"]
    assert built["name"] == "broadcast" and built["index_dir"], built
    assert "exceeds the driver index memory" in built["reason"]
    assert found["built_count"] == EMAIL_EU_CORE_TRIANGLES


# --- learning over joins on the executors (tests/test_learning_maintained.py) ------------------


@pytest.mark.usefixtures("spark")  # the in-process moments query's factors are made for a session
def test_on_a_local_cluster_static_and_maintained_equal_least_squares(cluster):
    """Real executor JVMs (``local-cluster[2,1,1024]``, in a child process: one SparkContext per
    process): the regression with lineitem lifted and joined in its own tasks, and a maintained model
    after a batch of deletes, both equal numpy's least squares on the join; a moments query run in
    partitioned cells on the executors equals the same query in-process."""
    found = found_by(cluster, "learning")
    assert found["master"] == "local-cluster[2,1,1024]" and found["static_in_tasks"]
    assert found["cell_strategies"] == ["partitioned"]
    from faq.insideout import evaluate
    from tests.learning_cluster_job import moments_factors, moments_query

    with evaluate(moments_query(), moments_factors(), placement="driver") as result:
        expected = sorted([row[0], *row[1]] for row in result.df.collect())
    np.testing.assert_allclose(found["cells"], expected, rtol=1e-12)

    from tests.learning_cluster_job import fixpoint_rows

    graph = nx.DiGraph()
    for u, v, w in fixpoint_rows():
        if not graph.has_edge(u, v) or graph[u][v]["weight"] > w:
            graph.add_edge(u, v, weight=w)
    assert found["distances_held"]
    assert found["distances"] == sorted([n, float(d)] for n, d in nx.single_source_dijkstra_path_length(graph, 0).items())
    t = tables(SEED)
    np.testing.assert_allclose(found["static"], least_squares(joined(t), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    after = {**t, "lineitem": t["lineitem"].iloc[10:]}
    assert found["maintained_rows"] == len(joined(after))
    np.testing.assert_allclose(found["maintained"], least_squares(joined(after), FEATURES, TARGET),
                               rtol=1e-7, atol=1e-7)
