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
>>> from faq.graphs.triangles import triangle_count
>>> k4 = factor_of([(a, b, 1) for a in range(4) for b in range(4) if a != b], ["src", "dst"])
>>> triangle_count(k4, directed=False).count
4
>>> triangle_count(k4, directed=True).count   # 4 node-triples x 3! orderings
24
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from faq.graphs.edges import GraphLike, prepared_graph
from faq.insideout.executor import Progress, StepEvent, evaluate
from faq.insideout.planner import Plan
from faq.language import parse_query
from faq.prefetch import import_in_background
from faq.results import Answer, count_frame
from faq.scope import Scope

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

TRIANGLE_QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"


@dataclass(frozen=True, repr=False)
class TriangleCount(Answer):
    """The answer of a triangle job: ``.count``, ``.plan``, ``explain()``, ``.df`` (one row)."""

    count: int
    edges: int
    directed: bool
    seconds: float
    plan: Plan
    # Of ``seconds``: reading, cleaning, orienting and caching the edges (the rest is the join).
    load_seconds: Optional[float] = None

    @property
    def join_seconds(self) -> Optional[float]:
        """The time after loading: planning, the join and the count."""
        return None if self.load_seconds is None else self.seconds - self.load_seconds

    @property
    def df(self) -> "DataFrame":
        """The count as a one-row DataFrame (column ``count``)."""
        return count_frame("count", self.count)

    def summary(self) -> str:
        """The count, edges, direction, seconds and width (the one-line ``repr``)."""
        return (f"count={self.count}, edges={self.edges}, directed={self.directed}, seconds={self.seconds:.3g}, "
                f"faqw={self.plan.faqw}")

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``faq triangles --json`` prints)."""
        return {
            "count": self.count,
            "edges": self.edges,
            "directed": self.directed,
            "seconds": round(self.seconds, 3),
            "load_seconds": None if self.load_seconds is None else round(self.load_seconds, 3),
            "join_seconds": None if self.join_seconds is None else round(self.join_seconds, 3),
            "faqw": str(self.plan.faqw),
            "order": list(self.plan.order),
        }

    def _repr_html_(self) -> str:
        """The count, edges, time and width, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        from faq.display import pretty, summary

        pretty(summary(self), printer, cycle)


def triangle_count(
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
        Receives a ``"load"`` event (the edges read, cleaned and cached or held on the driver: rows and
        seconds), then the executor's step events.

    Returns
    -------
    TriangleCount
        ``seconds`` in all; ``load_seconds`` of them reading and preparing the
        edges, ``join_seconds`` the rest.
    """
    started = time.perf_counter()
    if isinstance(edges, (str, os.PathLike)):
        # The in-process kernel of a mid-sized count needs scipy.sparse (faq.joins.sparse_triangle):
        # its import overlaps reading the file.
        import_in_background("scipy.sparse")
    # A path the driver can read is cleaned and oriented in numpy (prepared_graph).
    graph = prepared_graph(edges, directed, spark=spark)
    # The prepared edges feed three atoms and the size statistics: build them once.
    with Scope() as scope:
        if not graph.relation.held:  # else the driver holds the edges (Factor.relation): nothing to cache
            graph = graph.with_df(scope.persist(graph.df))
        graph = replace(graph, name="edge")
        n_edges = graph.count()  # Spark runs the load (parse, clean, orient) here, unless the driver did
        load_seconds = time.perf_counter() - started
        if progress is not None:
            what = "feed-forward" if directed else "degree-oriented undirected"
            progress(StepEvent("load", 0, 0, f"{what} edges", rows=n_edges, seconds=load_seconds))
        with evaluate(parse_query(TRIANGLE_QUERY), {"edge": graph}, progress=progress) as result:
            count = int(result.scalar())
            the_plan = result.plan
    return TriangleCount(count, n_edges, directed, time.perf_counter() - started, the_plan, load_seconds)
