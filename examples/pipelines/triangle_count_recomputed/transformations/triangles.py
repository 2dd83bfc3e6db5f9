"""The triangle count of a graph given as a stream of edge changes, recomputed by a materialized view."""

import os

from pyspark import pipelines as dp

CHANGES = os.path.abspath(spark.conf.get("triangles.changes", "changes"))  # noqa: F821 (set by spark-pipelines)


@dp.table(comment="Edge changes as they arrive: src, dst, diff (+1 insert, -1 delete), one JSON line each")
def edge_changes():
    return spark.readStream.schema("src bigint, dst bigint, diff bigint").json(CHANGES)  # noqa: F821


@dp.materialized_view(comment="The undirected triangles of the edges present now, counted from all changes")
def triangles_recomputed():
    return spark.sql("""
        WITH edges AS (                       -- the graph now: undirected, simple
            SELECT LEAST(src, dst) AS s, GREATEST(src, dst) AS d
            FROM edge_changes WHERE src <> dst
            GROUP BY LEAST(src, dst), GREATEST(src, dst) HAVING SUM(diff) > 0)
        SELECT COUNT(*) AS triangles
        FROM edges e1 JOIN edges e2 ON e1.d = e2.s JOIN edges e3 ON e3.s = e1.s AND e3.d = e2.d
    """)  # noqa: F821
