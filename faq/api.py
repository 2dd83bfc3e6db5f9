"""The front door: every job in one place, taking Spark DataFrames, Factors or paths.

``import faq`` exposes these functions (and the types and readers users need)
without importing the submodules they live in.  Each job accepts its inputs
in the forms a PySpark user has at hand and returns DataFrames or plain
values:

* a **factor** (an argument of :func:`query`, :func:`plan`, :func:`explain`,
  :func:`maintain`) is a :class:`~faq.factor.Factor`, a Spark DataFrame (its
  columns are the variables, and a column named ``value`` holds the values;
  without one every row counts one), or a path read by
  :func:`faq.io.read_factor` (``.csv``, ``.parquet``, ``.mtx``, edge lists);
* a **graph** (:func:`count_triangles`, :func:`motifs`, :func:`track`, the
  path and component jobs) is a DataFrame with ``src`` and ``dst`` columns
  (the convention of GraphFrames), an object with such an ``.edges``
  DataFrame (a GraphFrame; no dependency on the package), a two-variable
  Factor, or an edge-list path;
* a **matrix** (:func:`matrix_chain`) is a DataFrame of row index, column
  index and ``value`` (or a Factor, or a Matrix Market path).

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
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from faq.errors import FAQTypeError
from faq.spark_ui import job

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.factor import Factor
    from faq.graphs.motifs import MotifCount
    from faq.graphs.triangles import TriangleCount
    from faq.incremental.maintained import MaintainedQuery
    from faq.incremental.track import MotifTracker
    from faq.insideout.executor import QueryResult
    from faq.insideout.planner import Plan
    from faq.insideout.staleness import PlanLike
    from faq.recursive.seminaive import FixpointResult
    from faq.semirings import Semiring

FactorLike = Union["Factor", "DataFrame", str, os.PathLike]
GraphLike = Union["Factor", "DataFrame", str, os.PathLike, Any]
SemiringLike = Union[str, "Semiring", None]

VALUE = "value"  # the value column of a factor given as a DataFrame
WEIGHT = "weight"  # the weight column of a graph's edges (shortest and widest paths)
_VALUE_SEMIRINGS = {"double": "real", "float": "real", "boolean": "boolean"}  # default: counting


# --- queries ----------------------------------------------------------------------


def query(text: str, *, semiring: SemiringLike = None, plan: Optional["PlanLike"] = None, progress: Any = None,
          placement: Optional[str] = None, **factors: FactorLike) -> "QueryResult":
    """Answer a query: ``faq.query("count() := edge(a,b), edge(b,c)", edge=df)``.

    Returns a :class:`~faq.insideout.executor.QueryResult`: ``.df`` (the free
    variables and ``value``), ``.scalar()`` for a query without free
    variables, ``.plan``; its cache is released by ``close()`` or ``with``.
    ``plan=`` runs a plan made by :func:`plan` (and perhaps inspected), or a
    kept one: its ``to_dict()``, the JSON ``faq explain --json`` prints, or
    the path of a file holding it.  It runs as it is, without planning; a plan
    made for another query, other key types or sizes beyond its margin
    (twice or half the rows it was made for) raises
    :class:`~faq.errors.StalePlanError` (:mod:`faq.insideout.staleness`).
    ``placement=`` ("auto", "driver" or "executors") overrides the session's
    ``spark.faq.placement``: where the steps run (small ones in-process by default).
    """
    from faq.insideout.executor import evaluate

    with job(f"query {text}"):
        return evaluate(text, _factors(factors, semiring), semiring=semiring, plan=plan, progress=progress,
                        placement=placement)


def plan(text: str, *, semiring: SemiringLike = None, join: str = "auto", **factors: FactorLike) -> "Plan":
    """The plan :func:`query` would run: order, bags, strategies, widths, estimated work.

    Gathers the factors' statistics (one Spark job per factor); nothing else runs.
    """
    from faq.insideout.binding import plan_for

    with job(f"plan {text}"):
        return plan_for(text, _factors(factors, semiring), semiring=semiring, join=join, detailed=True)


def explain(text: str, *, semiring: SemiringLike = None, **factors: FactorLike) -> None:
    """Print the plan of a query (as ``DataFrame.explain`` prints Spark's)."""
    print(plan(text, semiring=semiring, **factors))


def maintain(text: str, *, semiring: SemiringLike = None, path: Optional[str] = None, progress: Any = None,
             **factors: FactorLike) -> "MaintainedQuery":
    """Answer a query and keep it current: ``.apply(edge=[(1, 2, 1)])``, ``.scalar()``, ``.df``.

    See :class:`~faq.incremental.maintained.MaintainedQuery` (``path=`` makes the
    state durable and versioned).
    """
    from faq.incremental.maintained import maintain as _maintain

    with job(f"maintain {text}"):
        return _maintain(text, _factors(factors, semiring), semiring=semiring, path=path, progress=progress)


# --- graphs and matrices ------------------------------------------------------------


def count_triangles(edges: GraphLike, *, directed: bool = False, progress: Any = None) -> "TriangleCount":
    """Count the triangles of a graph (``.count``); ``directed=True`` counts feed-forward ones."""
    from faq.graphs.triangles import count_triangles as _count

    with job("count_triangles"):
        return _count(edges, directed=directed, progress=progress)  # a path: read and cleaned on the driver


def motifs(edges: GraphLike, pattern: str, *, count: bool = False, progress: Any = None
           ) -> Union["DataFrame", "MotifCount"]:
    """The bindings of a motif pattern (GraphFrames' syntax, e.g. ``"(a)->(b); (b)->(c); !(a)->(c)"``).

    ``count=False`` returns the bindings as a cached DataFrame (one column per
    pattern vertex; ``unpersist()`` it when done); ``count=True`` returns a
    :class:`~faq.graphs.motifs.MotifCount` (``.count``) without listing them.
    """
    from faq.graphs.motifs import count_motifs, list_motifs

    with job(f"motifs {pattern}"):
        graph = edge_factor(edges)
        if count:
            return count_motifs(graph, pattern, progress=progress)
        return list_motifs(graph, pattern, progress=progress)


def track(edges: GraphLike, pattern: str, *, path: Optional[str] = None, progress: Any = None) -> "MotifTracker":
    """Count a motif and follow it as edges change: ``.apply([(src, dst, ±1), ...])``, ``.count``."""
    from faq.incremental.track import track as _track

    with job(f"track {pattern}"):
        return _track(edge_factor(edges), pattern, path=path, progress=progress)


def matrix_chain(matrices: Sequence[FactorLike], *, semiring: SemiringLike = "real", method: str = "auto",
                 progress: Any = None) -> "QueryResult":
    """Multiply matrices in a semiring, in the order the planner picks.

    Each matrix is a DataFrame of row index, column index and ``value`` (or a
    Factor, or a Matrix Market path; a path given more than once is read
    once).  The result's ``.df`` has columns ``row``, ``col`` and ``value``;
    release it with ``close()`` or ``with``.
    """
    from faq.graphs.matrix_chain import matrix_chain as _chain

    read: dict[str, "Factor"] = {}  # path -> its factor: a power or a K·M·K chain parses each file once
    factors = []
    for k, m in enumerate(matrices, start=1):
        if isinstance(m, (str, os.PathLike)):
            path = os.fspath(m)
            if path not in read:
                read[path] = _matrix(m, k)
            factors.append(read[path].with_name(f"M{k}"))  # a Factor is immutable: one for several uses
        else:
            factors.append(_matrix(m, k))
    with job(f"matrix_chain of {len(factors)}"):
        return _chain(factors, semiring or "real", method=method, progress=progress)


def shortest_paths(edges: GraphLike, source: int, *, weight: Optional[str] = WEIGHT, progress: Any = None
                   ) -> "FixpointResult":
    """Distances from ``source`` (min, +): the edges' ``weight`` column, else 1 per edge (hops).

    Solved on the driver while the edges fit its budget, else on Spark (:mod:`faq.recursive.placed`).
    """
    from faq.recursive.placed import solve_placed

    with job(f"shortest_paths from {source}"):
        return solve_placed(edge_factor(edges, weight=weight), "min_plus", source=source, progress=progress)


def widest_paths(edges: GraphLike, source: int, *, weight: Optional[str] = WEIGHT, progress: Any = None
                 ) -> "FixpointResult":
    """Bottleneck capacities from ``source`` (max, min) over the edges' ``weight`` column (placed as
    :func:`shortest_paths`)."""
    from faq.recursive.placed import solve_placed

    with job(f"widest_paths from {source}"):
        return solve_placed(edge_factor(edges, weight=weight), "max_min", source=source, progress=progress)


def reachability(edges: GraphLike, source: int, *, progress: Any = None) -> "FixpointResult":
    """The nodes reachable from ``source`` (∨, ∧) (placed as :func:`shortest_paths`)."""
    from faq.recursive.placed import solve_placed

    with job(f"reachability from {source}"):
        return solve_placed(edge_factor(edges), "boolean", source=source, progress=progress)


def connected_components(edges: GraphLike, *, progress: Any = None) -> "FixpointResult":
    """Each node's component, labelled by its smallest node id (edge directions ignored; placed as
    :func:`shortest_paths`)."""
    from faq.recursive.placed import solve_placed

    with job("connected_components"):
        return solve_placed(edge_factor(edges), components=True, progress=progress)


# --- inputs -------------------------------------------------------------------------


def as_factor(value: FactorLike, name: str = "factor", semiring: SemiringLike = None) -> "Factor":
    """A :class:`~faq.factor.Factor` from a Factor, a DataFrame (Spark or pandas) or a path (see the module notes).

    A DataFrame's ``value`` column (if any) holds the values; its semiring is
    ``semiring``, else ``real`` for double values, ``boolean`` for booleans and
    ``counting`` otherwise.  A pandas DataFrame's rows stay held on the
    driver, where steps over them run in-process.

    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([(1, 2, 0.5)], ["a", "b", "value"])
    >>> f = as_factor(df, "w")
    >>> f.variables, f.semiring.name, f.name
    (('a', 'b'), 'real', 'w')
    """
    from faq.factor import Factor

    if isinstance(value, Factor):
        return value if semiring is None else value.with_semiring(semiring)
    if isinstance(value, (str, os.PathLike)):
        from faq.io import read_factor

        extra = {} if semiring is None else {"semiring": semiring}
        return read_factor(value, name=name, **extra)
    if type(value).__module__.startswith("pandas") and type(value).__name__ == "DataFrame":
        # A table on the driver already: it stays held there (steps over it run in-process).
        from faq.io.convert import from_pandas

        kind = value[VALUE].dtype.kind if VALUE in value.columns else None
        ring = semiring or {"f": "real", "b": "boolean"}.get(kind, "counting")
        return from_pandas(value, value=VALUE if kind else None, semiring=ring, name=name)
    df = _dataframe(value, "factor " + repr(name))
    columns = list(df.columns)
    if VALUE in columns:
        kind = dict(df.dtypes)[VALUE]
        ring = semiring or _VALUE_SEMIRINGS.get(kind, "counting")
        return Factor.from_dataframe(df, [c for c in columns if c != VALUE], ring, value=VALUE, name=name)
    return Factor.from_dataframe(df, columns, semiring or "counting", value=None, name=name)


def edge_factor(edges: GraphLike, weight: Optional[str] = None) -> "Factor":
    """The edges of a graph as a ``src``/``dst`` factor (:func:`faq.graphs.edges.edge_factor`)."""
    from faq.graphs.edges import edge_factor as _edge_factor

    return _edge_factor(edges, weight=weight)


def _factors(given: dict, semiring: SemiringLike) -> dict[str, "Factor"]:
    return {name: as_factor(value, name, semiring) for name, value in given.items()}


def _matrix(value: FactorLike, k: int) -> "Factor":
    """A two-variable factor from a matrix DataFrame (row, column, value), a Factor or a path."""
    from faq.factor import Factor

    if isinstance(value, (Factor, str, os.PathLike)):
        return as_factor(value, f"M{k}")
    df = _dataframe(value, f"matrix {k}")
    keys = [c for c in df.columns if c != VALUE]
    if len(keys) != 2:
        raise FAQTypeError(error_class="MATRIX_COLUMNS", index=k, columns=df.columns, value=VALUE,
                           argument=f"matrix {k}", found=list(df.columns))
    return as_factor(df, f"M{k}", None if VALUE in df.columns else "real")


def _dataframe(value: Any, what: str) -> "DataFrame":
    """``value`` as a Spark DataFrame, or a clear error."""
    from faq.spark import is_dataframe

    if is_dataframe(value):
        return value
    raise FAQTypeError(error_class="INPUT_TYPE", what=what, expected="a DataFrame, a Factor or a path",
                       found=type(value).__name__, argument=what)
