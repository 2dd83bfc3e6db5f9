"""Triangle counting as an FAQ in the counting semiring.

Both jobs answer ``count() := edge(a,b), edge(a,c), edge(b,c)`` with
InsideOut; they differ in the edge relation they feed it:

* **directed** (feed-forward triangles): the simple directed graph — self-loops
  dropped, repeated edges collapsed.  Each ordered triple (a, b, c) with edges
  a→b, a→c and b→c counts once; reciprocal edges are kept, so one set of three
  nodes can hold several feed-forward triangles.
* **undirected**: the simple undirected graph, each edge oriented from the
  endpoint of lower (degree, id) to the higher one.  That orientation is
  acyclic, so every undirected triangle has exactly one feed-forward
  orientation and is counted once; orienting by degree also keeps the 2-paths
  the join builds few (hubs get few out-edges).

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.graphs.triangles import count_triangles
>>> k4 = factor_of([(a, b, 1) for a in range(4) for b in range(4) if a != b], ["src", "dst"])
>>> count_triangles(k4, directed=False).count
4
>>> count_triangles(k4, directed=True).count   # 4 node-triples x 3! orderings
24
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional, Union

from faq.factor import VALUE, Factor
from faq.insideout.executor import Progress, evaluate
from faq.insideout.planner import Plan
from faq.query import parse_query

TRIANGLE_QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"


@dataclass(frozen=True)
class TriangleCount:
    """The answer of a triangle job."""

    count: int
    edges: int
    directed: bool
    seconds: float
    plan: Plan

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``faq triangles --json`` prints)."""
        return {
            "count": self.count,
            "edges": self.edges,
            "directed": self.directed,
            "seconds": round(self.seconds, 3),
            "faqw": str(self.plan.faqw),
            "order": list(self.plan.order),
        }


def simple_directed(edges: Factor) -> Factor:
    """The simple digraph of ``edges``: no self-loops, one row per (src, dst), value 1."""
    from pyspark.sql import functions as F

    src, dst = edges.variables
    df = (
        edges.df.where(F.col(src) != F.col(dst))
        .select(F.col(src).alias("src"), F.col(dst).alias("dst"))
        .distinct()
        .withColumn(VALUE, F.lit(1).cast("bigint"))
    )
    return Factor.from_dataframe(df, ["src", "dst"], "counting", name="edge")


def degree_oriented(edges: Factor) -> Factor:
    """The simple undirected graph of ``edges``, each edge pointing from lower to higher (degree, id)."""
    from pyspark.sql import functions as F

    src, dst = edges.variables
    pairs = (
        edges.df.where(F.col(src) != F.col(dst))
        .select(F.least(src, dst).alias("u"), F.greatest(src, dst).alias("v"))
        .distinct()
    )
    degree = (
        pairs.select(F.col("u").alias("n"))
        .unionAll(pairs.select(F.col("v").alias("n")))
        .groupBy("n")
        .agg(F.count(F.lit(1)).alias("d"))
    )
    du = degree.select(F.col("n").alias("u"), F.col("d").alias("du"))
    dv = degree.select(F.col("n").alias("v"), F.col("d").alias("dv"))
    with_degrees = pairs.join(du, "u").join(dv, "v")
    u_first = (F.col("du") < F.col("dv")) | ((F.col("du") == F.col("dv")) & (F.col("u") < F.col("v")))
    df = with_degrees.select(
        F.when(u_first, F.col("u")).otherwise(F.col("v")).alias("src"),
        F.when(u_first, F.col("v")).otherwise(F.col("u")).alias("dst"),
        F.lit(1).cast("bigint").alias(VALUE),
    )
    return Factor.from_dataframe(df, ["src", "dst"], "counting", name="edge")


def count_triangles(
    edges: Union[Factor, str],
    directed: bool = True,
    *,
    progress: Optional[Progress] = None,
    spark=None,
) -> TriangleCount:
    """Count feed-forward (``directed=True``) or undirected triangles.

    Parameters
    ----------
    edges : Factor or str
        A two-variable factor (its values are ignored) or the path of an edge
        list (read with :func:`faq.io.read_edge_list`).
    directed : bool
    progress : callable, optional
        Receives the executor's step events.

    Returns
    -------
    TriangleCount
    """
    from pyspark import StorageLevel

    started = time.perf_counter()
    if isinstance(edges, str):
        from faq.io import read_edge_list

        edges = read_edge_list(edges, spark=spark)
    graph = simple_directed(edges) if directed else degree_oriented(edges)
    # The prepared edges feed three atoms and the size statistics: build them once.
    graph_df = graph.df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        graph = Factor(graph_df, graph.variables, graph.semiring, graph.value, "edge")
        n_edges = graph.count()
        with evaluate(parse_query(TRIANGLE_QUERY), {"edge": graph}, progress=progress) as result:
            count = int(result.scalar())
            the_plan = result.plan
    finally:
        graph_df.unpersist()
    return TriangleCount(count, n_edges, directed, time.perf_counter() - started, the_plan)
