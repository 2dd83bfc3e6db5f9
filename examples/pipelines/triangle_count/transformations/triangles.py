"""The triangle count of a graph given as a stream of edge changes, kept current by faq's sink.

``spark-pipelines run`` imports this file with ``spark`` set to the pipeline's session and the
working directory set to the spec's.  Paths come from the spec's ``configuration``.
"""

import os

from pyspark import pipelines as dp

from faq.pipelines import maintained_sink

CHANGES = os.path.abspath(spark.conf.get("triangles.changes", "changes"))  # noqa: F821 (set by spark-pipelines)
STATE = os.path.abspath(spark.conf.get("triangles.state", "state"))  # noqa: F821


@dp.table(comment="Edge changes as they arrive: src, dst, diff (+1 insert, -1 delete), one JSON line each")
def edge_changes():
    return spark.readStream.schema("src bigint, dst bigint, diff bigint").json(CHANGES)  # noqa: F821


# The faq data source registered with this session, the state made (an empty graph) if there is none,
# a sink `triangle_count` keeping the undirected triangle count, and a flow from edge_changes into it.
maintained_sink("triangle_count", source="edge_changes", job="triangles", state=STATE, keep_changes=1000,
                spark=spark)  # noqa: F821


@dp.materialized_view(comment="faq's answer: count (6 bindings a triangle) and triangles")
def triangles():
    return spark.read.format("faq").load(STATE)  # noqa: F821


@dp.table(comment="faq's changes of the answer, by version: the bindings (a, b, c) added (diff +1) or removed (-1)")
def triangle_changes():
    return spark.readStream.format("faq").option("changes", "true").load(STATE)  # noqa: F821
