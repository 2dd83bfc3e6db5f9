"""The front door: every query and graph job in one place, taking what users hold.

``import faq`` exposes these functions (and the types and readers users need)
without importing the submodules they live in.  They follow one set of rules
(docs/design.md, "One API"):

* **inputs** -- a factor, graph or matrix may be a Spark or pandas
  DataFrame, an Arrow table, rows of tuples, a Factor or a path
  (:mod:`faq.inputs`, :func:`faq.graphs.edges.edge_factor`); factors come by
  name (``e=edges``) or in a mapping after the query text, where a name
  would collide with a keyword (``faq.query(text, {"plan": df})``);
* **keywords** mean the same everywhere: ``placement=`` ("auto", "driver",
  "executors": where the work runs; default the session's
  ``spark.faq.placement``), ``progress=`` (a callable receiving the job's
  events), ``state=`` (the directory a maintained answer is kept in);
* **results** have one shape: ``.df``, ``.plan``, ``explain()`` (the plan
  value, whose ``str`` is its text), ``close()`` and ``with``, a short
  ``repr``.

Graphs are undirected by default everywhere (``directed=False``), as the
``faq`` command counts them.

Examples
--------
>>> import faq
>>> spark = faq.get_session()
>>> edges = spark.createDataFrame([(1, 2), (2, 3), (1, 3), (3, 4)], ["src", "dst"])
>>> faq.count_triangles(edges).count
1
>>> with faq.query("paths(a) := e(a,b), e(b,c)", e=edges) as two_paths:
...     sorted(map(tuple, two_paths.df.collect()))
[(1, 2), (2, 1)]
>>> m = spark.createDataFrame([(0, 0, 2.0), (0, 1, 1.0), (1, 1, 3.0)], ["row", "col", "value"])
>>> with faq.matrix_chain([m, m]) as product:
...     sorted(map(tuple, product.df.collect()))
[(0, 0, 4.0), (0, 1, 5.0), (1, 1, 9.0)]
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from faq.events import Progress
from faq.inputs import FactorLike, SemiringLike, factors_of, matrix_factor, query_text, state_directory
from faq.spark_ui import described  # every public job: its name in Spark's UI, its placement= in force

if TYPE_CHECKING:
    from faq.factor import Factor
    from faq.graphs.edges import GraphLike
    from faq.graphs.triangles import TriangleCount
    from faq.incremental.maintained import MaintainedQuery
    from faq.graphs.track import MotifTracker
    from faq.insideout.executor import QueryResult
    from faq.insideout.planner import Plan
    from faq.insideout.staleness import PlanLike
    from faq.recursive.seminaive import FixpointResult

__all__ = ["query", "plan", "explain", "maintain", "count_triangles", "track", "matrix_chain", "shortest_paths",
           "widest_paths", "reachability", "paths", "connected_components"]

WEIGHT = "weight"  # the weight column of a graph's edges (shortest and widest paths)


# --- queries ----------------------------------------------------------------------


@described("query {text}")
def query(text: str, factors: Optional[Mapping[str, FactorLike]] = None, /, *, semiring: SemiringLike = None,
          plan: Optional["PlanLike"] = None, placement: Optional[str] = None, progress: Progress = None,
          **named: FactorLike) -> "QueryResult":
    """Answer a functional aggregate query over its factors.

    Parameters
    ----------
    text : str
        The query, e.g. ``"count() := e(a,b), e(b,c), e(a,c)"``: a head with
        the free variables, ``:=``, and atoms naming factors.
    factors : mapping, optional
        Factors by name, for names that are keywords here (``plan``,
        ``semiring``, ``placement``, ``progress``); the others may come as
        keyword arguments too.
    semiring : str or Semiring, optional
        Default: the factors' own (``counting`` for tables without values).
    plan : Plan, dict or path, optional
        Run this plan (from :func:`plan`, its ``to_dict()``, the JSON
        ``faq explain --json`` prints, or a file of it) as it is, without
        planning; a plan made for another query, other key types or sizes
        beyond its margin raises :class:`~faq.errors.StalePlanError`.
    placement : {"auto", "driver", "executors"}, optional
        Where the steps run (default: the session's ``spark.faq.placement``,
        "auto": small steps in-process on the driver).
    progress : callable, optional
        Receives a :class:`~faq.events.ProgressEvent` (here a
        :class:`~faq.insideout.executor.StepEvent`) as each step starts and ends.
    **named
        The factors: Spark or pandas DataFrames, Arrow tables, rows of
        tuples, Factors or paths (:mod:`faq.inputs`).

    Returns
    -------
    QueryResult
        ``.df`` (the free variables and ``value``), ``.scalar()`` for a
        query without free variables, ``.rows`` (an answer left in Spark is
        counted when first asked, not by ``query``), ``.plan``, ``explain()``;
        its cache is released by ``close()`` or ``with``.

    Examples
    --------
    >>> import faq
    >>> edges = [(1, 2), (2, 3), (1, 3)]
    >>> faq.query("count() := e(a,b), e(b,c), e(a,c)", e=edges).scalar()
    1
    >>> faq.query("count() := plan(a,b)", {"plan": edges}).scalar()   # a factor named like a keyword
    3
    """
    from faq.insideout.executor import evaluate

    return evaluate(query_text(text), factors_of(factors, named, semiring), semiring=semiring, plan=plan,
                    progress=progress, placement=placement)


@described("plan {text}")
def plan(text: str, factors: Optional[Mapping[str, FactorLike]] = None, /, *, semiring: SemiringLike = None,
         join: str = "auto", placement: Optional[str] = None, **named: FactorLike) -> "Plan":
    """The plan :func:`query` would run: order, bags, strategies, placements, widths, estimated work.

    Parameters
    ----------
    text : str
        The query.
    factors : mapping, optional
        Factors by name (see :func:`query`).
    semiring : str or Semiring, optional
    join : str
        The join strategy to plan with ("auto": the planner's choice).
    placement : {"auto", "driver", "executors"}, optional
        Where the steps would run.
    **named
        The factors, any input kind (see :func:`query`).

    Returns
    -------
    Plan
        A frozen value: ``str(plan)`` is the text :func:`explain` shows,
        ``plan.to_dict()`` its JSON; :func:`query` runs it with ``plan=``.

    Notes
    -----
    Gathers the factors' statistics (one Spark job per factor held in
    Spark); nothing else runs.

    Examples
    --------
    >>> import faq
    >>> p = faq.plan("count() := e(a,b), e(b,c), e(a,c)", e=[(1, 2), (2, 3), (1, 3)])
    >>> len(p.steps), p.steps[0].placement
    (1, 'driver')
    """
    from faq.insideout.binding import plan_for

    return plan_for(query_text(text), factors_of(factors, named, semiring), semiring=semiring, join=join,
                    detailed=True, placement=placement)


def explain(text: str, factors: Optional[Mapping[str, FactorLike]] = None, /, *, semiring: SemiringLike = None,
            placement: Optional[str] = None, **named: FactorLike) -> "Plan":
    """The plan of a query, as a value whose text shows at a prompt (``print`` it in a script).

    Parameters
    ----------
    text : str
        The query.
    factors : mapping, optional
        Factors by name (see :func:`query`).
    semiring : str or Semiring, optional
    placement : {"auto", "driver", "executors"}, optional
    **named
        The factors, any input kind.

    Returns
    -------
    Plan
        What :func:`plan` returns; ``str`` of it is the text.

    Examples
    --------
    >>> import faq
    >>> print(faq.explain("count() := e(a,b), e(b,c)", e=[(1, 2), (2, 3)]))  # doctest: +ELLIPSIS
    plan for count() := e(a, b), e(b, c)
      semiring counting; order a, b, c (auto); faqw 1...
      step 2: eliminate b, c with ⊕ of counting; bag {b, c}, ρ* 1, est. ≤ 2 rows...
    """
    return plan(text, factors, semiring=semiring, placement=placement, **named)


@described("maintain {text}")
def maintain(text: str, factors: Optional[Mapping[str, FactorLike]] = None, /, *, semiring: SemiringLike = None,
             state: Optional[str] = None, placement: Optional[str] = None, budget: Optional[Union[int, str]] = None,
             progress: Progress = None, path: Optional[str] = None, **named: FactorLike) -> "MaintainedQuery":
    """Answer a query and keep the answer current as its factors change.

    Parameters
    ----------
    text : str
        The query.
    factors : mapping, optional
        Factors by name (see :func:`query`).
    semiring : str or Semiring, optional
    state : str, optional
        A new or empty directory to keep the state in, durable and
        versioned: :meth:`~faq.incremental.maintained.MaintainedQuery.open`
        reopens it.
    placement : {"auto", "driver", "executors"}, optional
        Where the indexes live and batches run ("auto": by their size
        against the driver's budget).
    budget : int or str, optional
        The driver's memory budget for the indexes (``"2g"``).
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` per batch.
    path : str, optional
        Deprecated name of ``state``.
    **named
        The factors, any input kind.

    Returns
    -------
    MaintainedQuery
        ``apply(e=[(src, dst, ±1), ...])`` returns the answer's
        :class:`~faq.incremental.change.Change`; ``.scalar()``, ``.df``,
        ``explain()``, ``stream(...)``, ``close()``.

    Examples
    --------
    >>> import faq
    >>> with faq.maintain("count() := e(a,b), e(b,c), e(a,c)", e=[(1, 2), (2, 3)]) as triangles:
    ...     change = triangles.apply(e=[(1, 3, 1)])     # insert 1→3: one triangle
    ...     triangles.scalar(), change.version
    (1, 1)
    """
    from faq.incremental.maintained import MaintainedQuery

    state = state_directory(state, path, "faq.maintain")
    return MaintainedQuery(query_text(text), factors_of(factors, named, semiring), semiring=semiring, path=state,
                           progress=progress, placement=placement or "auto", budget=budget)


# --- graphs and matrices ------------------------------------------------------------


@described("count_triangles")
def count_triangles(edges: "GraphLike", *, directed: bool = False, placement: Optional[str] = None,
                    progress: Progress = None) -> "TriangleCount":
    """Count the triangles of a graph.

    Parameters
    ----------
    edges : graph
        A Spark or pandas DataFrame or Arrow table with ``src`` and ``dst``,
        a GraphFrame, a two-variable Factor, an edge-list path or rows of
        ``(src, dst)``; self-loops and repeated edges are ignored.
    directed : bool
        False (default): triangles of the undirected graph; True:
        feed-forward triangles a→b, b→c, a→c.
    placement : {"auto", "driver", "executors"}, optional
    progress : callable, optional
        Receives the load and step events.

    Returns
    -------
    TriangleCount
        ``.count``, ``.plan``, ``.seconds``, ``explain()``.

    Examples
    --------
    >>> import faq
    >>> faq.count_triangles([(1, 2), (2, 3), (3, 1), (3, 4)]).count
    1
    """
    from faq.graphs.triangles import triangle_count as _count

    return _count(edges, directed=directed, progress=progress)  # a path: read and cleaned on the driver


@described("track {pattern}")
def track(edges: "GraphLike", pattern: str, *, state: Optional[str] = None, placement: Optional[str] = None,
          progress: Progress = None, path: Optional[str] = None) -> "MotifTracker":
    """Count a motif and keep the count current as edges change.

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`.
    pattern : str
        A motif in GraphFrames' syntax (``"(a)->(b); (b)->(c); !(a)->(c)"``);
        the pattern's vertices bind distinct nodes (see :func:`faq.motifs`).
    state : str, optional
        A new or empty directory to keep the state in.
    placement : {"auto", "driver", "executors"}, optional
        Where the first count runs; batches run on the driver.
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` per batch.
    path : str, optional
        Deprecated name of ``state``.

    Returns
    -------
    MotifTracker
        ``apply([(src, dst, ±1), ...])``, ``.count``, ``explain()``, ``close()``.

    Examples
    --------
    >>> import faq
    >>> with faq.track([(1, 2), (2, 3)], "(a)->(b); (b)->(c)") as paths:
    ...     _ = paths.apply([(3, 4, 1)])
    ...     paths.count
    2
    """
    from faq.graphs.edges import edge_factor
    from faq.graphs.track import MotifTracker

    state = state_directory(state, path, "faq.track")
    return MotifTracker(edge_factor(edges), pattern, path=state, progress=progress)


@described(lambda arguments: f"matrix_chain of {len(arguments['matrices'])}")
def matrix_chain(matrices: Sequence[FactorLike], *, semiring: SemiringLike = "real", method: str = "auto",
                 placement: Optional[str] = None, progress: Progress = None) -> "QueryResult":
    """Multiply matrices in a semiring, in the order the planner picks.

    Parameters
    ----------
    matrices : sequence
        Each a table (Spark or pandas DataFrame, Arrow) of row index, column
        index and ``value``, a Factor, or a Matrix Market path (a path given
        more than once is read once).
    semiring : str or Semiring
        Default ``real``; ``min_plus`` gives shortest path products.
    method : str
        "auto" (the planner's order), or "dp" / "greedy" / "left".
    placement : {"auto", "driver", "executors"}, optional
    progress : callable, optional

    Returns
    -------
    QueryResult
        ``.df`` with columns ``row``, ``col`` and ``value``; ``close()`` or ``with``.

    Examples
    --------
    >>> import faq, pandas as pd
    >>> m = pd.DataFrame({"row": [0, 0], "col": [0, 1], "value": [2.0, 1.0]})
    >>> with faq.matrix_chain([m, m]) as product:
    ...     sorted(map(tuple, product.df.collect()))
    [(0, 0, 4.0), (0, 1, 2.0)]
    """
    from faq.graphs.matrix_chain import chain_product as _chain

    read: dict[str, "Factor"] = {}  # path -> its factor: a power or a K·M·K chain parses each file once
    factors = []
    for k, m in enumerate(matrices, start=1):
        if isinstance(m, (str, os.PathLike)):
            path = os.fspath(m)
            if path not in read:
                read[path] = matrix_factor(m, k)
            factors.append(read[path].with_name(f"M{k}"))  # a Factor is immutable: one for several uses
        else:
            factors.append(matrix_factor(m, k))
    return _chain(factors, semiring or "real", method=method, progress=progress)


@described("shortest_paths from {source}")
def shortest_paths(edges: "GraphLike", source: int, *, weight: Optional[str] = WEIGHT,
                   placement: Optional[str] = None, progress: Progress = None) -> "FixpointResult":
    """Distances from ``source`` in the (min, +) semiring.

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`; directed.
    source : int
    weight : str, optional
        The edges' weight column (rows: the third element); without one
        each edge weighs 1 (hops).  Negative weights are allowed; a
        reachable negative cycle raises :class:`~faq.errors.NegativeCycleError`.
    placement : {"auto", "driver", "executors"}, optional
        "auto": on the driver while the edges fit its budget, else on Spark.
    progress : callable, optional

    Returns
    -------
    FixpointResult
        ``.df`` (``node``, ``value``), ``.plan``, ``explain()``, ``close()``.

    Examples
    --------
    >>> import faq
    >>> with faq.shortest_paths([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 9.0)], 1) as d:
    ...     sorted(map(tuple, d.df.collect()))
    [(1, 0.0), (2, 4.0), (3, 5.0)]
    """
    return _fixpoint(edges, weight, "min_plus", source, placement, progress)


@described("widest_paths from {source}")
def widest_paths(edges: "GraphLike", source: int, *, weight: Optional[str] = WEIGHT,
                 placement: Optional[str] = None, progress: Progress = None) -> "FixpointResult":
    """Bottleneck capacities from ``source`` in the (max, min) semiring.

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`; directed.
    source : int
    weight : str, optional
        The edges' capacity column (rows: the third element).
    placement : {"auto", "driver", "executors"}, optional
    progress : callable, optional

    Returns
    -------
    FixpointResult

    Examples
    --------
    >>> import faq
    >>> with faq.widest_paths([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 2.0)], 1) as w:
    ...     sorted(map(tuple, w.df.collect()))
    [(1, inf), (2, 4.0), (3, 2.0)]
    """
    return _fixpoint(edges, weight, "max_min", source, placement, progress)


@described("reachability from {source}")
def reachability(edges: "GraphLike", source: int, *, placement: Optional[str] = None,
                 progress: Progress = None) -> "FixpointResult":
    """The nodes reachable from ``source`` in the (∨, ∧) semiring.

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`; directed.
    source : int
    placement : {"auto", "driver", "executors"}, optional
    progress : callable, optional

    Returns
    -------
    FixpointResult

    Examples
    --------
    >>> import faq
    >>> with faq.reachability([(1, 2), (2, 3), (4, 1)], 1) as r:
    ...     sorted(row.node for row in r.df.collect())
    [1, 2, 3]
    """
    return _fixpoint(edges, None, "boolean", source, placement, progress)


@described("connected_components")
def connected_components(edges: "GraphLike", *, placement: Optional[str] = None,
                         progress: Progress = None) -> "FixpointResult":
    """Each node's component, labelled by its smallest node id (edge directions ignored).

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`.
    placement : {"auto", "driver", "executors"}, optional
    progress : callable, optional

    Returns
    -------
    FixpointResult

    Examples
    --------
    >>> import faq
    >>> with faq.connected_components([(1, 2), (3, 4), (2, 5)]) as c:
    ...     sorted(map(tuple, c.df.collect()))
    [(1, 1), (2, 1), (3, 3), (4, 3), (5, 1)]
    """
    return _fixpoint(edges, None, None, None, placement, progress)


@described("paths from {source}")
def paths(edges: "GraphLike", source: int, *, semiring: SemiringLike = "min_plus", weight: Optional[str] = WEIGHT,
          placement: Optional[str] = None, progress: Progress = None) -> "FixpointResult":
    """Path values from ``source`` in any idempotent semiring: the least fixpoint of
    ``value(y) = one(y = source) ⊕ ⊕_x value(x) ⊗ edge(x, y)``.

    :func:`shortest_paths`, :func:`widest_paths` and :func:`reachability` are
    this in (min, +), (max, min) and (∨, ∧); a semiring of your own (a
    :class:`~faq.semirings.Semiring` or :class:`~faq.semirings.TupleSemiring`
    whose ⊕ is idempotent) gives other path problems.

    Parameters
    ----------
    edges : graph
        Any input kind of :func:`count_triangles`; directed.  For a tuple
        semiring, a Factor whose values are the semiring's (``faq.factor_of``).
    source : int
    semiring : str or Semiring
        Idempotent ⊕ (``a ⊕ a = a``): :class:`~faq.errors.NotIdempotentError` otherwise.
    weight : str, optional
        The edges' weight column, for a table.
    placement : {"auto", "driver", "executors"}, optional
        "auto": on the driver while the edges fit its budget, else on Spark.
        The driver's fixpoint takes scalar values: a tuple semiring's runs on
        Spark, and ``placement_reason`` says so.
    progress : callable, optional

    Returns
    -------
    FixpointResult
        ``.df`` (``node``, ``value``), ``.plan``, ``explain()``, ``close()``.

    Examples
    --------
    >>> import faq
    >>> with faq.paths([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 9.0)], 1, semiring="max_min") as widest:
    ...     sorted(map(tuple, widest.df.collect()))
    [(1, inf), (2, 4.0), (3, 9.0)]
    """
    return _fixpoint(edges, weight, semiring, source, placement, progress)


def _tuple_weighted(edges: Any, weight: Optional[str], semiring: SemiringLike) -> Optional["Factor"]:
    """The edges as a Factor whose values are ``semiring``'s tuples (one array of numbers a row, in column
    ``weight``) when ``semiring`` has such values and the edges are a Spark, pandas or Arrow table or rows of
    ``(src, dst, tuple)``; else None (:func:`faq.graphs.edges.edge_factor` reads scalar weights)."""
    from faq.semirings import get_semiring

    ring = None if semiring is None else get_semiring(semiring)
    if ring is None or not ring.structured or weight is None:
        return None
    from faq.factor import Factor, factor_of
    from faq.graphs.edges import DST, EDGE, SRC
    from faq.input_kinds import ARROW, PANDAS, ROWS, SPARK, as_pandas, input_kind

    kind = input_kind(edges)
    if kind == ROWS:
        return factor_of(edges, [SRC, DST], ring, name=EDGE)
    if kind in (PANDAS, ARROW):
        edges = as_pandas(edges, "the edges")
        if weight not in edges.columns:
            return None
        from faq.inputs import tuple_rows_factor

        _check_ends([str(c) for c in edges.columns], "the edges table")
        return tuple_rows_factor(edges, [SRC, DST], weight, ring, EDGE)
    if kind != SPARK or weight not in edges.columns:
        return None
    from faq.graphs.edges import integral_ids

    _check_ends(list(edges.columns), "the edges DataFrame")
    return Factor.from_dataframe(integral_ids(edges).select(SRC, DST, weight), [SRC, DST], ring, value=weight,
                                 name=EDGE)


def _check_ends(columns: list, source: str) -> None:
    """``MISSING_COLUMN`` unless ``columns`` has ``src`` and ``dst``."""
    from faq.errors import MissingColumnError
    from faq.graphs.edges import DST, SRC

    for column in (SRC, DST):
        if column not in columns:
            raise MissingColumnError(column=column, available=columns, source=source)


def _fixpoint(edges: Any, weight: Optional[str], semiring: SemiringLike, source: Optional[int],
              placement: Optional[str], progress: Progress) -> "FixpointResult":
    """A placed fixpoint: paths from ``source`` in ``semiring``, or components when it is None."""
    from faq.graphs.edges import edge_factor
    from faq.placement_policy import checked
    from faq.recursive.placed import solve_placed

    graph = _tuple_weighted(edges, weight, semiring) or edge_factor(edges, weight=weight)
    where = checked(placement) if placement is not None else "auto"
    if semiring is None:
        return solve_placed(graph, components=True, progress=progress, placement=where)
    return solve_placed(graph, semiring, source=source, progress=progress, placement=where)
