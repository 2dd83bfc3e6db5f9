"""Motifs: list and count the bindings of a small directed pattern in a graph.

Patterns (their syntax and semantics, the parser, inclusion–exclusion) are
:mod:`faq.graphs.pattern`; this module runs them.

How it runs
-----------
The positive edges are one FAQ over the counting semiring, one atom per
edge: ``edge(u, v)`` (the simple digraph) or ``sym(u, v)`` (its symmetric
closure, for undirected edges); InsideOut plans it (binary joins on acyclic
bags, the worst-case optimal join on cyclic ones once it is available).
Distinctness and negation are not semiring products, so:

* **listing** answers the FAQ with every vertex free, then filters
  (``u != v``) and anti-joins (negations) the bindings;
* **counting** adds no filter when none is needed: two vertices joined by a
  positive edge are distinct anyway (no self-loops), so e.g. a triangle or a
  4-clique is one FAQ with no free variable (``direct``).  Otherwise
  counting either counts the filtered listing (``listing``) or uses
  inclusion–exclusion over the filters (``inclusion_exclusion``)::

      #{no bad event} = Σ_{S ⊆ events} (-1)^{|S|} #{every event in S}

  where an event is "u = v" (merge u and v in the pattern) or "the negated
  edge exists" (add it as a positive atom); each term is an FAQ with no free
  variable, and isomorphic terms are evaluated once.  A 4-cycle is then
  hom(C4) − 2·hom(two reciprocal pairs at one vertex) + hom(reciprocal pair),
  all aggregates: no binding is ever materialised.  ``auto`` uses
  inclusion–exclusion when it needs at most :data:`AUTO_MAX_TERMS` FAQs,
  else the listing.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.graphs.motifs import count_motifs
>>> edges = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 1, 1)], ["src", "dst"])
>>> count_motifs(edges, "(a)->(b); (b)->(c); !(a)->(c)").count   # 2-paths without a shortcut
2
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from faq.errors import InvalidArgumentError
from faq.factor import VALUE, Factor
from faq.graphs.pattern import EDGE, MAX_EVENTS, SYM, Pattern, inclusion_exclusion, parse_pattern
from faq.language import FAQ
from faq.results import Answer, Plans, count_frame
from faq.spark_ui import described
from faq.scope import Owner, Scope
from faq.semirings import get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.graphs.edges import GraphLike
    from faq.insideout.executor import Progress

__all__ = ["motifs", "count_motifs", "list_motifs", "MotifCount", "MotifBindings", "STRATEGIES", "AUTO_MAX_TERMS"]

SRC, DST = "src", "dst"

STRATEGIES = ("auto", "direct", "inclusion_exclusion", "listing")
# ``auto`` counts by inclusion–exclusion when it needs at most this many FAQs.
AUTO_MAX_TERMS = 8


# --- running ------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class MotifCount(Answer):
    """The answer of :func:`count_motifs`: ``.count``, ``.plan``, ``explain()``, ``.df`` (one row)."""

    count: int
    pattern: str
    strategy: str  # "direct", "inclusion_exclusion" or "listing"
    terms: int  # FAQs evaluated
    edges: int  # edges of the simple digraph
    seconds: float
    plans: tuple = field(default=(), repr=False)  # the Plan of each FAQ evaluated
    load_seconds: Optional[float] = None  # of ``seconds``: reading, cleaning and caching the edges

    @property
    def plan(self) -> Any:
        """The plan of the one query evaluated, or :class:`~faq.results.Plans` of the several."""
        return self.plans[0] if len(self.plans) == 1 else Plans(self.plans)

    @property
    def df(self) -> "DataFrame":
        """The count as a one-row DataFrame (column ``count``)."""
        return count_frame("count", self.count)

    def summary(self) -> str:
        """The count, pattern, strategy and seconds (the one-line ``repr``)."""
        return f"count={self.count}, pattern={self.pattern!r}, strategy={self.strategy!r}, seconds={self.seconds:.3g}"

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``faq motif --count --json`` prints)."""
        return {
            "pattern": self.pattern,
            "count": self.count,
            "strategy": self.strategy,
            "terms": self.terms,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "load_seconds": None if self.load_seconds is None else round(self.load_seconds, 3),
            "faqw": [str(p.faqw) for p in self.plans],
        }

    def _repr_html_(self) -> str:
        """The count, strategy, edges and time, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)


@dataclass(repr=False)
class MotifBindings(Owner, Answer):
    """The bindings of a motif, one row each (:func:`motifs` without ``count``), cached until :meth:`close`."""

    df: "DataFrame"  # one column per pattern vertex, no duplicate rows
    pattern: str
    rows: int
    seconds: float
    plan: Any
    scope: Scope

    def summary(self) -> str:
        """The pattern, rows and seconds (the one-line ``repr``)."""
        return f"pattern={self.pattern!r}, rows={self.rows}, seconds={self.seconds:.3g}"


class _Graph(Owner):
    """The simple digraph (and, on demand, its symmetric closure), cached in :attr:`scope` while a job runs."""

    def __init__(self, edges: Union[Factor, "DataFrame", str, os.PathLike], spark=None,
                 progress: Optional["Progress"] = None) -> None:
        from faq.graphs.edges import prepared_graph
        from faq.insideout.executor import StepEvent

        started = time.perf_counter()
        self.scope = Scope()
        self._sym: Optional[Factor] = None
        with self.scope.closing_on_error():
            # A path the driver can read is cleaned in numpy (prepared_graph); Spark runs its load here.
            self.edge = self._persist(prepared_graph(edges, directed=True, spark=spark))
            self._rows: Optional[int] = self.edge.count()
        self.load_seconds = time.perf_counter() - started
        if progress is not None:
            progress(StepEvent("load", 0, 0, "simple directed edges", rows=self._rows, seconds=self.load_seconds))

    @property
    def rows(self) -> int:
        if self._rows is None:
            self._rows = self.edge.count()
        return self._rows

    @property
    def sym(self) -> Factor:
        from pyspark.sql import functions as F

        if self._sym is None:
            held = self.edge.relation.arrays
            if held is not None:  # the driver holds the edges: both directions in numpy, held too
                self._sym = _symmetric_held(held, self.edge.relation.session)
                return self._sym
            df = self.edge.df
            both = df.select(SRC, DST).unionByName(df.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
            sym = both.distinct().withColumn(VALUE, F.lit(1).cast("bigint"))
            self._sym = self._persist(Factor.from_dataframe(sym, [SRC, DST], "counting", name=SYM))
        return self._sym

    def _persist(self, factor: Factor) -> Factor:
        if factor.relation.held:  # held on the driver: no cache (and the copy stays with it)
            return factor
        return factor.with_df(self.scope.persist(factor.df))

    def factors(self, query: FAQ) -> dict[str, Factor]:
        return {name: (self.edge if name == EDGE else self.sym) for name in query.factor_names}

    def relation(self, directed: bool) -> Factor:
        return self.edge if directed else self.sym


def _symmetric_held(edges: Any, spark: Any) -> Factor:
    """Both directions of the held simple digraph ``edges`` (numpy columns), as a held factor."""
    import numpy as np

    src, dst = np.asarray(edges[SRC], dtype=np.int64), np.asarray(edges[DST], dtype=np.int64)
    pairs = np.unique(np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])], axis=1), axis=0)
    ones = np.ones(len(pairs), dtype=np.int64)
    from faq.relation import Relation

    rows = Relation.from_arrays({SRC: pairs[:, 0], DST: pairs[:, 1], VALUE: ones}, session=spark)
    return Factor(relation=rows, variables=(SRC, DST), semiring=get_semiring("counting"), value=VALUE, name=SYM)


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise InvalidArgumentError("strategy", strategy, f"must be one of {', '.join(STRATEGIES)}")


def _bindings(graph: _Graph, pattern: Pattern, progress) -> tuple["DataFrame", Any]:
    """The filtered bindings (lazy) and the QueryResult whose cache they read."""
    from pyspark.sql import functions as F

    from faq.insideout.executor import evaluate

    query = pattern.query(free=True)
    result = evaluate(query, graph.factors(query), progress=progress)
    with result.scope.closing_on_error():
        df = result.factor.df.select(*pattern.vertices)
        condition = None
        for u, v in pattern.distinct_pairs:
            differ = F.col(u) != F.col(v)
            condition = differ if condition is None else condition & differ
        if condition is not None:
            df = df.where(condition)
        for e in pattern.negated:
            rel = graph.relation(e.directed).df
            df = df.join(rel.select(F.col(SRC).alias(e.src), F.col(DST).alias(e.dst)), [e.src, e.dst], "left_anti")
        return df.select(*pattern.vertices), result


def list_motifs(
    edges: Union[Factor, "DataFrame", str, os.PathLike],
    pattern: Union[str, Pattern],
    *,
    progress: Optional["Progress"] = None,
    spark=None,
) -> "DataFrame":
    """Every binding of ``pattern`` in the graph, one row each, one column per pattern vertex.

    Parameters
    ----------
    edges : Factor, DataFrame or path
        A two-variable factor (values ignored), a DataFrame with ``src`` and
        ``dst`` columns (GraphFrames' convention), or an edge-list file read
        with :func:`faq.io.read_edge_list`.  Self-loops and repeated edges
        are ignored.
    pattern : str or Pattern
    progress : callable, optional
        Receives the executor's step events.

    Returns
    -------
    DataFrame
        Columns ``pattern.vertices``; no duplicate rows.  It is computed once
        and **cached** (memory and disk), never collected: call
        ``.unpersist()`` when done with it.
    """
    listing = Scope()  # the returned DataFrame's cache, handed over to the caller
    df, _, _ = _listed(edges, parse_pattern(pattern), progress, spark, listing)
    return listing.hand_over(df)


def count_motifs(
    edges: Union[Factor, "DataFrame", str, os.PathLike],
    pattern: Union[str, Pattern],
    *,
    strategy: str = "auto",
    progress: Optional["Progress"] = None,
    spark=None,
) -> MotifCount:
    """Count the bindings of ``pattern`` (the rows :func:`list_motifs` would return).

    Parameters
    ----------
    edges, pattern, progress
        As for :func:`list_motifs`.
    strategy : {"auto", "direct", "inclusion_exclusion", "listing"}
        ``direct``: one FAQ with no free variable (only when the pattern needs
        no filter: no negation, every non-allowed pair joined by a positive
        edge).  ``inclusion_exclusion``: a signed sum of such FAQs.
        ``listing``: count the filtered listing.  ``auto``: ``direct`` when
        possible, else inclusion–exclusion if it needs at most
        :data:`AUTO_MAX_TERMS` FAQs, else listing.

    Returns
    -------
    MotifCount
    """
    from faq.insideout.executor import evaluate

    _check_strategy(strategy)
    started = time.perf_counter()
    pattern = parse_pattern(pattern)
    terms: Optional[list[tuple[int, FAQ]]] = None
    if strategy == "direct" and pattern.needs_filters:
        raise InvalidArgumentError(
            "strategy", strategy,
            "the pattern needs distinctness or negation filters; use 'inclusion_exclusion' or 'listing'",
        )
    if strategy in ("auto", "direct", "inclusion_exclusion"):
        events = len(pattern.distinct_pairs) + len(pattern.negated)
        if strategy == "inclusion_exclusion" or events <= MAX_EVENTS:
            terms = inclusion_exclusion(pattern)
        if strategy == "auto" and terms is not None and len(terms) > AUTO_MAX_TERMS:
            terms = None
    with _Graph(edges, spark, progress) as graph:
        plans: list = []
        if terms is None:
            used = "listing"
            df, result = _bindings(graph, pattern, progress)
            with result:
                total = df.count()  # an aggregate; nothing is collected
                plans.append(result.plan)
            n_terms = 1
        else:
            used = "direct" if not pattern.needs_filters else "inclusion_exclusion"
            total = 0
            for coef, query in terms:
                with evaluate(query, graph.factors(query), progress=progress) as result:
                    total += coef * int(result.scalar())
                    plans.append(result.plan)
            n_terms = len(terms)
        # The planner's statistics counted the edges already (when a query used them).
        n_edges = next((p.sizes[EDGE] for p in plans if EDGE in p.sizes), None)
        if n_edges is None:
            n_edges = graph.rows
    return MotifCount(int(total), str(pattern), used, n_terms, n_edges, time.perf_counter() - started, tuple(plans),
                      graph.load_seconds)


@described("motifs")
def motifs(
    edges: "GraphLike",
    pattern: Union[str, Pattern],
    *,
    count: bool = False,
    strategy: str = "auto",
    placement: Optional[str] = None,
    progress: Optional["Progress"] = None,
) -> Union[MotifBindings, MotifCount]:
    """Find (default) or count (``count=True``) the bindings of a motif pattern.

    Parameters
    ----------
    edges : graph
        A Spark or pandas DataFrame or Arrow table with ``src`` and ``dst``,
        a GraphFrame, a two-variable Factor, an edge-list path or rows of
        ``(src, dst)``; self-loops and repeated edges are ignored.
    pattern : str or Pattern
        GraphFrames' motif syntax: ``(a)->(b)`` an edge, ``!(a)->(c)`` no
        such edge, ``;`` between terms.  Unlike GraphFrames, the pattern's
        vertices bind **distinct** nodes, as motif counts in network science
        do (a 2-path ``(a)->(b); (b)->(c)`` does not bind a=c on a 2-cycle);
        ``allow a=c`` as a term lets two be equal, ``allow a=b=c`` all
        three (GraphFrames' semantics; :mod:`faq.graphs.pattern`).
    count : bool
        False: list the bindings; True: count them without listing.
    strategy : {"auto", "direct", "inclusion_exclusion", "listing"}
        How to count (``count=True`` only; see :func:`count_motifs`).
    placement : {"auto", "driver", "executors"}, optional
        Where the steps run (default: the session's ``spark.faq.placement``).
    progress : callable, optional
        Receives the load and step events.

    Returns
    -------
    MotifBindings or MotifCount
        Bindings: ``.df`` (one column per pattern vertex, cached until
        ``close()`` or the end of a ``with``), ``.rows``, ``.plan``.
        A count: ``.count``, ``.plan``.

    Examples
    --------
    >>> import faq
    >>> g = [(1, 2), (2, 3), (1, 3), (3, 1)]
    >>> faq.motifs(g, "(a)->(b); (a)->(c); (b)->(c)", count=True).count
    1
    >>> with faq.motifs(g, "(a)->(b); (b)->(c); !(a)->(c)") as found:
    ...     sorted(map(tuple, found.df.collect()))
    [(2, 3, 1), (3, 1, 2)]
    """
    if not count and strategy != "auto":
        raise InvalidArgumentError("strategy", strategy, "applies to counting only (count=True)")
    if count:  # placement= is in force here (faq.spark_ui.described)
        return count_motifs(edges, pattern, strategy=strategy, progress=progress)
    started = time.perf_counter()
    pattern = parse_pattern(pattern)
    listing = Scope()
    df, rows, plan = _listed(edges, pattern, progress, None, listing)
    return MotifBindings(df, str(pattern), rows, time.perf_counter() - started, plan, listing)


def _listed(edges: Any, pattern: Pattern, progress: Any, spark: Any, listing: Scope) -> tuple["DataFrame", int, Any]:
    """The bindings of ``pattern``, persisted in ``listing`` and counted; their rows; the plan that found them."""
    with _Graph(edges, spark, progress) as graph:
        df, result = _bindings(graph, pattern, progress)
        with result, listing.closing_on_error():
            df = listing.persist(df)
            rows = df.count()  # materialise before the caches it reads are released
            return df, rows, result.plan
