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
from dataclasses import dataclass, replace
from typing import Optional

from faq.factor import Factor
from faq.graphs.edges import GraphLike, degree_oriented, edge_factor, simple_directed
from faq.insideout.executor import Progress, evaluate
from faq.insideout.planner import Plan
from faq.language import parse_query
from faq.scope import Scope

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

    def _repr_html_(self) -> str:
        """The count, edges, time and width, for notebooks (:mod:`faq.display`)."""
        from faq.display import triangles_html

        return triangles_html(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        from faq.display import pretty, summary

        pretty(summary(self), printer, cycle)


def count_triangles(
    edges: GraphLike,
    directed: bool = False,
    *,
    progress: Optional[Progress] = None,
    spark=None,
) -> TriangleCount:
    """Count undirected (the default) or feed-forward (``directed=True``) triangles.

    Parameters
    ----------
    edges : DataFrame, GraphFrame-like, Factor or path
        A DataFrame with ``src`` and ``dst`` columns, an object with such an
        ``.edges`` DataFrame, a two-variable factor (its values are ignored)
        or the path of an edge list (:func:`faq.graphs.edges.edge_factor`).
    directed : bool
        False (the default, as the ``faq`` command): each triangle of the
        simple undirected graph once; True: feed-forward triangles.
    progress : callable, optional
        Receives the executor's step events.

    Returns
    -------
    TriangleCount
    """
    started = time.perf_counter()
    raw = edge_factor(edges, spark=spark)
    graph = simple_directed(raw) if directed else degree_oriented(raw)
    # The prepared edges feed three atoms and the size statistics: build them once.
    with Scope() as scope:
        graph = replace(graph, df=scope.persist(graph.df), name="edge")
        n_edges = graph.count()
        with evaluate(parse_query(TRIANGLE_QUERY), {"edge": graph}, progress=progress) as result:
            count = int(result.scalar())
            the_plan = result.plan
    return TriangleCount(count, n_edges, directed, time.perf_counter() - started, the_plan)
