"""Edges in Spark under a forced executors placement: cleaned where the broadcast index is built.

The executors' tasks of a broadcast join read an index the driver builds from every edge, so the
edges of ``spark.read.parquet`` come to the driver as they are and are cleaned there in numpy
(faq.graphs.edges._fetched_ids, faq.placement_policy.index_fetch_limit) -- unless the index is built
on the executors (``spark.faq.indexBuild=executors``), where Spark cleans them.  Either way the
count is SNAP's / networkx's.
"""

from __future__ import annotations

import os

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faq.graphs.triangles import triangle_count
from faq.insideout.executor import StepEvent
from faq.io.local_edges import read_edge_arrays

pytestmark = pytest.mark.usefixtures("spark")

DATA = os.path.join(os.path.dirname(__file__), "data")
CA_GRQC_TRIANGLES = 48260  # SNAP's published count (tests/data/graphs-MANIFEST.tsv)


@pytest.fixture(scope="module")
def messy_edges(tmp_path_factory):
    """ca-GrQc's edges with every tenth one repeated and 50 self-loops added, as a Parquet file."""
    src, dst = read_edge_arrays(os.path.join(DATA, "ca-GrQc.txt"))
    loops = np.unique(src)[:50]
    src = np.concatenate([src, src[::10], loops])
    dst = np.concatenate([dst, dst[::10], loops])
    path = str(tmp_path_factory.mktemp("edges") / "ca-GrQc.parquet")
    pq.write_table(pa.table({"src": src, "dst": dst}), path)
    return path, src, dst


def _counted(spark, path, directed, **conf):
    """(count, the join step's notes) of ``path`` read by Spark, placement executors and ``conf`` set."""
    settings = {"spark.faq.placement": "executors", **conf}
    for key, value in settings.items():
        spark.conf.set(key, value)
    events = []
    try:
        result = triangle_count(spark.read.parquet(path), directed=directed, progress=events.append)
    finally:
        for key in settings:
            spark.conf.unset(key)
    notes = [e.note for e in events if isinstance(e, StepEvent) and e.kind == "done"]
    return result.count, " ".join(notes)


@pytest.mark.parametrize("directed", [False, True])
def test_executors_placement_cleans_fetched_edges_on_the_driver(spark, messy_edges, directed):
    path, src, dst = messy_edges
    count, notes = _counted(spark, path, directed)
    assert "rows held on the driver, not collected" in notes and "broadcast index" in notes
    if directed:  # every undirected edge is listed both ways: each triangle is 6 feed-forward ones
        digraph = nx.DiGraph(zip(src.tolist(), dst.tolist()))
        digraph.remove_edges_from(nx.selfloop_edges(digraph))
        assert count == 6 * CA_GRQC_TRIANGLES == sum(nx.triangles(digraph.to_undirected()).values()) * 2
    else:
        assert count == CA_GRQC_TRIANGLES


@pytest.mark.parametrize("directed", [False, True])
def test_an_index_built_on_the_executors_leaves_the_cleaning_to_spark(spark, messy_edges, directed):
    path, _, _ = messy_edges
    count, notes = _counted(spark, path, directed, **{"spark.faq.indexBuild": "executors"})
    assert "held on the driver" not in notes
    assert count == (6 if directed else 1) * CA_GRQC_TRIANGLES
