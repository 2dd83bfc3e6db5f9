"""Semi-naive fixpoints over idempotent semirings on Spark.

A *linear recursive rule* over a binary factor ``edge(x, y)`` (docs/design.md,
"Monoid fixpoints")::

    value(y) := seed(y)
    value(y) := ⊕_x value(x) ⊗ edge(x, y)

has, when ⊕ is idempotent (min, max, ∨), one value per node as its state.
Semi-naive evaluation joins only the *frontier* -- the nodes whose value
improved in the last iteration -- with the edges:

1. candidates(y) = ⊕_x frontier(x) ⊗ edge(x, y)  (one join, one ⊕-aggregate);
2. a candidate *improves* y when ``new ⊕ old != old`` (strictly better);
3. the improved rows are merged into the state and are the next frontier.

It stops when the frontier is empty.  The instances:

==================  ==========  =========================  =====================
query               semiring    edge value                 seed
==================  ==========  =========================  =====================
reachability        boolean     true                       source: true
shortest paths      min_plus    weight (length)            source: 0
widest paths        max_min     capacity                   source: +inf
components          min_label   0 (⊗ is +, so identity)    every node: its id
==================  ==========  =========================  =====================

Spark habits (docs/design.md): every step is a Column expression; the only
values brought to the driver are scalars (the frontier's row count per
iteration, a node count, one example row for an error).  Each iteration's
result -- state and frontier flag in one table -- is local-checkpointed, and
the previous one released (its blocks unpersisted).  The checkpoint cuts the
lineage at *every* iteration, not every few: the next state and the next
frontier both read the previous result, so without a cut the plan tree would
double with each iteration (it is a DAG, but Spark analyses it as a tree).
The checkpoint is the one Spark action of an iteration, and it counts the
improved rows on the way (``DataFrame.observe``), so the frontier's size
needs no job of its own.

**Termination.**  ``max_iterations`` (default 10 000) caps the iterations
and raises :class:`~faq.errors.FixpointNotConvergedError`.
**Negative cycles.**  After iteration *k* every value is at least as good as
the best walk of at most *k* edges from a seed, and every value is the value
of some walk.  Without a cycle that improves values (a negative cycle in
min_plus), the best values are those of simple paths, of at most *n* − 1
edges for *n* nodes, so iteration *n* improves nothing.  Hence: when the
frontier is still non-empty after iteration ``k >= n``, a value-improving
cycle is reachable, and :class:`~faq.errors.NegativeCycleError` is
raised (the Bellman-Ford bound).  A cycle can only improve values when some
edge value ``w`` is better than ``one`` (``w ⊕ 1 != 1``: a negative weight in
min_plus); the job that caches the edges also counts such edges, and only
then are the nodes counted (once) and the bound checked.  In boolean, max_min
and component labels no edge is better than ``one``, so no check is needed:
their values only improve within a finite set.

Examples
--------
>>> from faq.factor import factor_of
>>> edges = factor_of([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0), (4, 1, 1.0)], ["src", "dst"], "min_plus")
>>> with shortest_paths_on_spark(edges, source=1) as result:
...     sorted(map(tuple, result.factor.df.collect()))
[(1, 0.0), (2, 4.0), (3, 5.0)]
>>> with components_on_spark(edges) as result:
...     sorted(map(tuple, result.factor.df.collect()))
[(1, 1), (2, 1), (3, 1), (4, 1)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, Union

from faq.errors import FAQValueError, NotIdempotentError
from faq.events import Progress
from faq.factor import Factor
from faq.recursive.rounds import (  # the column names and the rounds, named where every fixpoint reads them
    DEFAULT_MAX_ITERATIONS,
    DST,
    NODE,
    SRC,
    VALUE,
    WEIGHT,
    edge_stats,
    is_cached,
    prepare_edges,
    reporter,
    solve,
    source_seed,
)
from faq.semirings import MIN_LABEL, Semiring, get_semiring
from faq.results import Answer, Explanation
from faq.scope import Owner, Scope
from faq.spark import is_dataframe

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PATH_SEMIRINGS = ("boolean", "min_plus", "max_min")

#: What modules of faq.recursive read from here (the column names come from :mod:`faq.recursive.rounds`).
__all__ = [
    "NODE", "VALUE", "SRC", "DST", "WEIGHT", "DEFAULT_MAX_ITERATIONS", "PATH_SEMIRINGS", "MIN_LABEL",
    "FixpointResult", "check_semiring", "check_binary", "check_iterations", "edge_frame", "abs_weights",
    "fixpoint", "paths_on_spark", "reachability_on_spark", "shortest_paths_on_spark", "widest_paths_on_spark", "symmetric_edges", "node_frame",
    "components_on_spark",
]

#: The name bench/bench_sssp.py imports (faq.recursive.rounds.prepare_edges).
_prepare_edges = prepare_edges


# --- results ------------------------------------------------------------------------


@dataclass(repr=False)
class FixpointResult(Owner, Answer):
    """The answer of a fixpoint: one row per node that has a (non-zero) value.

    ``factor`` has the variable ``node`` and the value column ``value``.  Solved
    on Spark, its DataFrame is cached, owned by :attr:`scope`: call
    :meth:`close` (or use the result as a context manager) when done.  Solved
    on the driver (:mod:`faq.recursive.placed`), it is built from the driver's
    rows and holds no cache; closing it is harmless.
    """

    factor: Factor
    iterations: int
    seconds: float
    edges: int = 0
    scope: Scope = field(default_factory=Scope, repr=False)
    #: Where it was solved: ``"executors"`` (Spark rounds) or ``"driver"`` (:mod:`faq.recursive.placed`), and why.
    placement: str = "executors"
    placement_reason: str = "semi-naive rounds on Spark"

    @property
    def df(self) -> "DataFrame":
        """The ``(node, value)`` DataFrame."""
        return self.factor.df

    @property
    def plan(self) -> Explanation:
        """What ran: the semiring, where and why, the rounds to the fixpoint."""
        return Explanation(f"fixpoint in {self.factor.semiring.name} (semi-naive rounds)",
                           (f"placement: {self.placement} ({self.placement_reason})", f"edges: {self.edges}",
                            f"iterations: {self.iterations}", f"seconds: {self.seconds:.3g}"))

    def summary(self) -> str:
        """Semiring, iterations, placement and seconds (the one-line ``repr``)."""
        return (f"semiring={self.factor.semiring.name!r}, iterations={self.iterations}, "
                f"placement={self.placement!r}, seconds={self.seconds:.3g}")

    def count(self) -> int:
        """Number of nodes with a value (a Spark job, unless the driver holds them)."""
        return self.factor.count()

    def to_dict(self) -> dict:
        return {
            "semiring": self.factor.semiring.name,
            "iterations": self.iterations,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "placement": self.placement,
            "placement_reason": self.placement_reason,
        }


# --- helpers --------------------------------------------------------------------


def check_semiring(semiring: Union[str, Semiring]) -> Semiring:
    semiring = get_semiring(semiring)
    if not semiring.idempotent:
        raise NotIdempotentError(semiring=semiring.name)
    return semiring


def check_binary(edges: Factor) -> None:
    if not isinstance(edges, Factor):
        raise FAQValueError(error_class="EDGES_NOT_A_FACTOR", type=type(edges).__name__, argument="edges")
    if len(edges.variables) != 2:
        raise FAQValueError(
            error_class="EDGES_ARITY", name=edges.name, count=len(edges.variables),
            argument="edges",
            variables=list(edges.variables),
        )


def edge_frame(edges: Factor, semiring: Semiring) -> "DataFrame":
    """``edges`` as a ``(src, dst, weight)`` DataFrame with values in ``semiring``.

    Values are cast to the semiring's type (a counting factor's 1 becomes
    1.0 in min_plus -- hop counts -- and true in boolean); edges whose value
    is the semiring's zero (no edge) or null are dropped.  Parallel edges are
    kept: the ⊕-aggregate of each iteration merges them.
    """
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    check_binary(edges)
    u, v = edges.variables
    weight = F.col(edges.value)
    if edges.semiring.value_type != semiring.value_type or edges.semiring.name != semiring.name:
        weight = weight.cast(semiring.value_type)
    df = edges.df.select(
        F.col(u).cast("bigint").alias(SRC), F.col(v).cast("bigint").alias(DST), weight.alias(WEIGHT)
    )
    return df.where(
        F.col(SRC).isNotNull() & F.col(DST).isNotNull() & F.col(WEIGHT).isNotNull()
        & ~spark_columns(semiring).is_zero(F.col(WEIGHT))
    )


def abs_weights(edges: Factor) -> Factor:
    """The same edges with every value replaced by its absolute value.

    For signed graphs such as soc-sign-bitcoinotc (``src,dst,rating,time``,
    ratings −10..+10): shortest and widest paths need lengths/capacities, and a
    negative rating would make min_plus meaningless (negative cycles) -- the
    *strength* of a rating, ``|rating|``, is what the tests and the benchmark
    use as a weight and as a capacity.  Parallel edges are ⊕-merged *after*
    taking the absolute value (read the file with ``duplicates="keep"`` so the
    loader does not merge the signed values first).

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> f = abs_weights(factor_of([(1, 2, -3.0), (2, 3, 2.0), (1, 2, 1.0)], ["src", "dst"], "min_plus"))
    >>> sorted(map(tuple, f.df.collect()))
    [(1, 2, 1.0), (2, 3, 2.0)]
    """
    from pyspark.sql import functions as F

    check_binary(edges)
    return edges.with_semiring(edges.semiring, convert=lambda c: F.abs(c)).normalize()


# --- the semi-naive loop ----------------------------------------------------------


# --- the generic fixpoint ----------------------------------------------------------


def _seed_frame(seeds: Union[Factor, "DataFrame"], semiring: Semiring) -> "DataFrame":
    """Seeds as ``(node, value)``: ⊕-merged per node, zeros dropped."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    if isinstance(seeds, Factor):
        if len(seeds.variables) != 1:
            raise FAQValueError(error_class="SEEDS_ARITY", name=seeds.name, count=len(seeds.variables),
                                argument="seeds")
        df = seeds.df.select(F.col(seeds.variables[0]).alias(NODE), F.col(seeds.value).alias(VALUE))
    else:
        df = seeds.select(F.col(NODE), F.col(VALUE))
    df = df.select(F.col(NODE).cast("bigint").alias(NODE), F.col(VALUE).cast(semiring.value_type).alias(VALUE))
    ops = spark_columns(semiring)
    df = df.where(F.col(NODE).isNotNull() & F.col(VALUE).isNotNull() & ~ops.is_zero(F.col(VALUE)))
    return df.groupBy(NODE).agg(ops.sum(F.col(VALUE)).alias(VALUE))


def fixpoint(
    edges: Factor,
    seeds: Union[Factor, "DataFrame"],
    *,
    semiring: Union[str, Semiring, None] = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Progress = None,
) -> FixpointResult:
    """The least fixpoint of ``value(y) = seed(y) ⊕ ⊕_x value(x) ⊗ edge(x, y)``.

    Parameters
    ----------
    edges : Factor
        Two variables (source, target); its values are the edge values, cast
        to ``semiring`` if it is another one.  Parallel edges are ⊕-merged.
        The edges are cached (partitioned by source) for the run and released
        after it -- unless ``edges.df`` is persisted already, e.g. to answer
        several queries on one graph: then it is used as it is.
    seeds : Factor or DataFrame
        A factor with one variable, or a DataFrame with columns ``node`` and
        ``value``.
    semiring : str or Semiring, optional
        Default: the semiring of ``edges``.  Must be idempotent.
    max_iterations : int
        Raise :class:`FixpointNotConvergedError` when values still improve
        after this many iterations.
    progress : callable or Reporter, optional
        Gets one line per iteration (``Reporter.note`` works, as does a Reporter).

    Returns
    -------
    FixpointResult
        One row per node with a non-zero value.

    Raises
    ------
    NotIdempotentError, FixpointNotConvergedError, NegativeCycleError
    """
    semiring = check_semiring(semiring if semiring is not None else edges.semiring)
    check_iterations(max_iterations)
    spark = edges.session
    report = reporter(progress)
    started = time.perf_counter()
    cached = is_cached(edges.df)
    with Scope() as edges_scope:  # the prepared edges, released after the run
        frame = edge_frame(edges, semiring) if cached else prepare_edges(edge_frame(edges, semiring), spark,
                                                                          edges_scope)
        edge_rows, improving = edge_stats(frame, semiring)
        report(f"{edge_rows} edge(s) {'(cached by the caller)' if cached else 'cached'}")
        return _solve_result(
            spark,
            [frame],
            _seed_frame(seeds, semiring),
            semiring,
            may_cycle=improving > 0,
            max_iterations=max_iterations,
            progress=report,
            name=f"{edges.name}*",
            edge_rows=edge_rows,
            started=started,
        )


def _solve_result(
    spark,
    parts: Sequence["DataFrame"],
    seeds: "DataFrame",
    semiring: Semiring,
    *,
    may_cycle: bool,
    max_iterations: int,
    progress: "Callable[[str], None]",  # the job's notes (faq.recursive.rounds.reporter)
    name: str,
    edge_rows: int,
    started: float,
) -> FixpointResult:
    """:func:`solve`, returned as the :class:`FixpointResult` (factor ``name``) that owns the run."""
    run = solve(
        spark,
        parts,
        seeds,
        semiring,
        max_iterations=max_iterations,
        progress=progress,
        may_cycle=may_cycle,
    )
    factor = Factor(df=run.state, variables=(NODE,), semiring=semiring, value=VALUE, name=name)
    return FixpointResult(
        factor=factor,
        iterations=run.iterations,
        seconds=time.perf_counter() - started,
        edges=edge_rows,
        scope=run.scope,
    )


def check_iterations(max_iterations: int) -> None:
    if not isinstance(max_iterations, int) or isinstance(max_iterations, bool) or max_iterations < 1:
        raise FAQValueError(
            error_class="MAX_ITERATIONS",
            argument="max_iterations",
            value=max_iterations,
        )


# --- the instances -----------------------------------------------------------------


def paths_on_spark(
    edges: Factor,
    source: int,
    semiring: Union[str, Semiring] = "min_plus",
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Progress = None,
) -> FixpointResult:
    """Single-source path values: reachability, shortest or widest paths.

    ``value(source) = one``; ``value(y) = ⊕_x value(x) ⊗ edge(x, y)``.

    Parameters
    ----------
    edges : Factor
        Directed edges (two variables).  Their values are cast to
        ``semiring``: a counting factor's 1 is a weight of 1.0 in min_plus
        (hop counts), a capacity of 1.0 in max_min, true in boolean.
    source : int
        The source node (it need not occur in ``edges``; then it is the only
        node with a value).
    semiring : {"boolean", "min_plus", "max_min"} or another idempotent one

    Returns
    -------
    FixpointResult
        Rows ``(node, value)`` for the nodes reachable from ``source`` (the
        source included, with the semiring's one: true, 0.0, +inf).
    """
    semiring = check_semiring(semiring)
    check_binary(edges)
    spark = edges.session
    return fixpoint(
        edges,
        source_seed(spark, source, semiring),
        semiring=semiring,
        max_iterations=max_iterations,
        progress=progress,
    )


def reachability_on_spark(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Nodes reachable from ``source`` (boolean semiring): rows ``(node, true)``."""
    return paths_on_spark(edges, source, "boolean", **kw)


def shortest_paths_on_spark(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Shortest-path lengths from ``source`` (min_plus): rows ``(node, distance)``.

    Negative weights are allowed; a reachable negative cycle raises
    :class:`~faq.errors.NegativeCycleError`.
    """
    return paths_on_spark(edges, source, "min_plus", **kw)


def widest_paths_on_spark(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Widest (bottleneck) path capacities from ``source`` (max_min): rows ``(node, width)``."""
    return paths_on_spark(edges, source, "max_min", **kw)


def symmetric_edges(edges: Factor, loops: bool = False) -> "DataFrame":
    """Both directions of every edge, as ``(src, dst, weight=0)`` (component labels); self-loops dropped
    unless ``loops`` (a loop never changes a label, but it names a node that has no other edge)."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    frame = edge_frame(edges.with_semiring("counting", convert=lambda c: F.lit(1)), get_semiring("counting"))
    both = frame.select(SRC, DST).unionByName(frame.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
    if not loops:
        both = both.where(F.col(SRC) != F.col(DST))
    return both.distinct().select(SRC, DST, spark_columns(MIN_LABEL).one().alias(WEIGHT))


def node_frame(edges: Factor, nodes: Union["DataFrame", Iterable[int], None] = None) -> "DataFrame":
    """Distinct nodes ``(node)`` of ``edges`` (self-loops count), plus ``nodes`` if given."""
    from pyspark.sql import functions as F

    check_binary(edges)
    u, v = edges.variables
    ends = edges.df.select(F.col(u).cast("bigint").alias(NODE)).unionByName(
        edges.df.select(F.col(v).cast("bigint").alias(NODE))
    )
    if nodes is not None:
        spark = edges.session
        if not is_dataframe(nodes):
            import pyarrow as pa

            nodes = spark.createDataFrame(pa.table({NODE: pa.array([int(n) for n in nodes], pa.int64())}))
        ends = ends.unionByName(nodes.select(F.col(nodes.columns[0]).cast("bigint").alias(NODE)))
    return ends.where(F.col(NODE).isNotNull()).distinct()


def components_on_spark(
    edges: Factor,
    *,
    nodes: Union["DataFrame", Iterable[int], None] = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Progress = None,
) -> FixpointResult:
    """Connected components of the undirected graph of ``edges``: min label propagation.

    Every node starts with its own id; labels cross edges in both directions
    (⊗ = identity) and each node keeps the minimum (⊕ = min), so the value of
    a node is the smallest node id of its component.  Edge values and
    directions are ignored.

    Parameters
    ----------
    edges : Factor
        Two variables.  Self-loops add their node (a node with no other edge
        is a component of its own).
    nodes : DataFrame (first column) or iterable of int, optional
        Extra nodes, e.g. isolated ones.

    Returns
    -------
    FixpointResult
        Rows ``(node, label)`` for every node, in :data:`MIN_LABEL`.
    """
    from pyspark.sql import functions as F

    check_binary(edges)
    check_iterations(max_iterations)
    spark = edges.session
    report = reporter(progress)
    started = time.perf_counter()
    with Scope() as edges_scope:  # the symmetric edges, released after the run
        frame = prepare_edges(symmetric_edges(edges), spark, edges_scope)
        edge_rows = frame.count()  # fills the cache; labels cannot cycle (edges carry one)
        report(f"{edge_rows} directed edge(s) cached (both directions)")
        seeds = node_frame(edges, nodes).select(F.col(NODE), F.col(NODE).alias(VALUE))
        return _solve_result(
            spark,
            [frame],
            seeds,
            MIN_LABEL,
            may_cycle=False,
            max_iterations=max_iterations,
            progress=report,
            name=f"{edges.name}-components",
            edge_rows=edge_rows,
            started=started,
        )
