"""Semi-naive fixpoints over idempotent semirings on Spark.

A *linear recursive rule* over a binary factor ``edge(x, y)`` (DESIGN.md §3,
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

Spark habits (DESIGN.md §4): every step is a Column expression; the only
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
>>> with shortest_paths(edges, source=1) as result:
...     sorted(map(tuple, result.factor.df.collect()))
[(1, 0.0), (2, 4.0), (3, 5.0)]
>>> with connected_components(edges) as result:
...     sorted(map(tuple, result.factor.df.collect()))
[(1, 1), (2, 1), (3, 1), (4, 1)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, Union

from faq.errors import FAQValueError, FixpointNotConvergedError, NegativeCycleError, NotIdempotentError
from faq.factor import Factor
from faq.semirings import MIN_LABEL, Semiring, get_semiring
from faq.semirings.operations import INT64_MAX
from faq.scope import Owner, Scope
from faq.spark import is_dataframe

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

# Column names, named once.
NODE = "node"
VALUE = "value"
SRC = "src"
DST = "dst"
WEIGHT = "weight"
_NEW = "_new"
_OLD = "_old"
_IMPROVED = "_improved"

DEFAULT_MAX_ITERATIONS = 10_000

PATH_SEMIRINGS = ("boolean", "min_plus", "max_min")

Progress = Callable[[str], None]


# --- results ------------------------------------------------------------------------


@dataclass
class FixpointResult(Owner):
    """The answer of a fixpoint: one row per node that has a (non-zero) value.

    ``factor`` has the variable ``node`` and the value column ``value``; its
    DataFrame is cached, owned by :attr:`scope`: call :meth:`close` (or use
    the result as a context manager) when done.
    """

    factor: Factor
    iterations: int
    seconds: float
    edges: int = 0
    scope: Scope = field(default_factory=Scope, repr=False)

    @property
    def df(self) -> "DataFrame":
        """The ``(node, value)`` DataFrame."""
        return self.factor.df

    def count(self) -> int:
        """Number of nodes with a value (a Spark job)."""
        return self.factor.df.count()

    def to_dict(self) -> dict:
        return {
            "semiring": self.factor.semiring.name,
            "iterations": self.iterations,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
        }


# --- helpers --------------------------------------------------------------------


def _storage():
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def _partitions(spark) -> int:
    try:
        return max(1, int(spark.conf.get("spark.sql.shuffle.partitions")))
    except Exception:  # noqa: BLE001 - an unusual setting ("auto"): let Spark decide
        return 8


def _reporter(progress: Any) -> Progress:
    """``progress`` may be None, a callable taking a line, or an object with ``note``."""
    if progress is None:
        return lambda text: None
    note = getattr(progress, "note", None)
    return note if callable(note) else progress


def check_semiring(semiring: Union[str, Semiring]) -> Semiring:
    semiring = get_semiring(semiring)
    if not semiring.idempotent:
        raise NotIdempotentError(semiring=semiring.name)
    return semiring


def check_binary(edges: Factor) -> None:
    if not isinstance(edges, Factor):
        raise FAQValueError(
            f"edges must be a Factor (e.g. from faq.io.read_edge_list), not {type(edges).__name__}",
            argument="edges",
        )
    if len(edges.variables) != 2:
        raise FAQValueError(
            f"edges {edges.name!r} must have 2 variables (source, target), not {len(edges.variables)}",
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


def _edge_stats(frame: "DataFrame", semiring: Semiring) -> tuple[int, int]:
    """(edges, edges whose value is better than ``one``) -- one job, which also fills the cache."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    row = frame.agg(
        F.count(F.lit(1)).alias("n"),
        F.count(F.when(ops.add(F.col(WEIGHT), ops.one()) != ops.one(), 1)).alias("improving"),
    ).first()
    return int(row["n"]), int(row["improving"])


def _is_cached(df: "DataFrame") -> bool:
    """True when the caller persisted ``df`` (then it is used as it is: no repartition, no second cache)."""
    try:
        level = df.storageLevel
    except Exception:  # noqa: BLE001 - e.g. Spark Connect: treat as not cached
        return False
    return bool(level.useMemory or level.useDisk)


def _prepare_edges(df: "DataFrame", spark, scope: Scope, sort: bool = False) -> "DataFrame":
    """Partition the edges by source (so the frontier join never moves them) and cache them in ``scope``.

    ``sort``: also sort each partition by source, so a filter ``src IN (...)``
    skips most cached batches (their min/max statistics); maintained
    fixpoints look up the existing edges of each batch that way.
    """
    df = df.repartition(_partitions(spark), SRC)
    if sort:
        df = df.sortWithinPartitions(SRC)
    return scope.persist(df)


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


def _step(
    state: "DataFrame", frontier: "DataFrame", parts: Sequence["DataFrame"], semiring: Semiring
) -> "DataFrame":
    """One semi-naive iteration: ``(node, value, _old, _improved)`` for every node.

    The candidates ``⊕_x frontier(x) ⊗ edge(x, y)`` and the state rows go
    through one ⊕-aggregate per node (a single shuffle, with map-side partial
    aggregation): ``value = old ⊕ candidates``, and the node improved when
    it had no value (``old`` null) or ``value != old`` -- strictly better,
    since ⊕ is idempotent.
    """
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    pieces = [
        state.select(F.col(NODE), F.col(VALUE).alias(_NEW), F.col(VALUE).alias(_OLD))
    ]
    for part in parts:
        pieces.append(
            frontier.join(part, F.col(NODE) == F.col(SRC)).select(
                F.col(DST).alias(NODE),
                ops.mul(F.col(VALUE), F.col(WEIGHT)).alias(_NEW),
                F.lit(None).cast(semiring.value_type).alias(_OLD),
            )
        )
    rows = pieces[0]
    for piece in pieces[1:]:
        rows = rows.unionByName(piece)
    # ``old`` is the one state row's value (null when the node had none): max ignores nulls.
    grouped = rows.groupBy(NODE).agg(ops.sum(F.col(_NEW)).alias(VALUE), F.max(F.col(_OLD)).alias(_OLD))
    value, old = F.col(VALUE), F.col(_OLD)
    improved = value.isNotNull() & ~ops.is_zero(value) & (old.isNull() | (value != old))
    return grouped.select(NODE, VALUE, _OLD, F.coalesce(improved, F.lit(False)).alias(_IMPROVED))


def _improves(semiring: Semiring, new: "Column", old: "Column") -> "Column":
    """``new`` is strictly better than ``old`` under the idempotent ⊕ (null old: no value yet)."""
    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    return new.isNotNull() & ~ops.is_zero(new) & (old.isNull() | (ops.add(new, old) != old))


@dataclass
class _Run:
    """What one call of :func:`_iterate` produced."""

    state: "DataFrame"  # (node, value)
    scope: Scope  # what backs ``state`` and, when kept, ``frontiers``
    iterations: int
    frontiers: list  # (node, value, _old) per iteration, when kept (maintained fixpoints)
    backing: Optional["DataFrame"] = None  # the one resource in ``scope`` behind ``state`` (None: none)


def _iterate(
    state: "DataFrame",
    frontier: "DataFrame",
    frontier_rows: Optional[int],
    parts: Sequence["DataFrame"],
    semiring: Semiring,
    *,
    first_parts: Optional[Sequence["DataFrame"]] = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    node_count: Optional[Callable[[], int]],
    progress: Progress,
    keep_frontiers: bool = False,
) -> _Run:
    """Semi-naive iterations from ``frontier`` until nothing improves.

    ``state`` and ``frontier`` (a subset of the state, values already merged)
    belong to the caller and are never released here; of what this function
    checkpoints, everything is released except what backs the returned state
    (and, with ``keep_frontiers``, the frontiers).  ``first_parts`` replaces
    ``parts`` in the first iteration only (a maintained fixpoint's first step
    follows the new edges alone).  ``frontier_rows=None`` means unknown:
    iterate at least once.  ``node_count`` (None when no cycle can improve
    values) is called once, and the Bellman-Ford bound checked against it.
    """
    from pyspark.sql import functions as F

    iterations = 0
    scope = Scope()
    current = None  # the checkpoint behind the current state
    frontiers: list = []
    nodes: Optional[int] = None
    with scope.closing_on_error():
        while frontier_rows is None or frontier_rows > 0:
            if iterations >= max_iterations:
                raise FixpointNotConvergedError(
                    iterations=iterations, frontier=int(frontier_rows or 0), max_iterations=max_iterations
                )
            started = time.perf_counter()
            use = first_parts if (iterations == 0 and first_parts is not None) else parts
            # One action: the checkpoint (which cuts the lineage) counts the improved rows on the way.
            merged, seen = scope.checkpoint_observed(_step(state, frontier, use, semiring),
                                                     {"improved": F.count(F.when(F.col(_IMPROVED), 1))})
            frontier_rows = int(seen["improved"])
            new_frontier = merged.where(F.col(_IMPROVED)).select(NODE, VALUE, _OLD)
            iterations += 1
            if not keep_frontiers:
                scope.release(current)  # kept frontiers read it (None the first time: nothing)
            current = merged
            if keep_frontiers:
                frontiers.append(new_frontier)
            state, frontier = merged.select(NODE, VALUE), new_frontier
            progress(
                f"iteration {iterations}: {frontier_rows} value(s) improved "
                f"({time.perf_counter() - started:.1f} s)"
            )
            if frontier_rows and node_count is not None:
                if nodes is None:
                    nodes = node_count()
                if iterations >= nodes:
                    example = frontier.select(NODE).first()  # one row
                    raise NegativeCycleError(
                        semiring=semiring.name,
                        iterations=iterations,
                        nodes=nodes,
                        frontier=int(frontier_rows),
                        example=None if example is None else example[0],
                    )
    return _Run(state=state, scope=scope, iterations=iterations, frontiers=frontiers, backing=current)


def _count_nodes(parts: Sequence["DataFrame"], seeds: Optional["DataFrame"] = None) -> int:
    """Distinct nodes among the edges' endpoints (and the seeds): one aggregate."""
    from pyspark.sql import functions as F

    ends = None
    for part in parts:
        piece = part.select(F.col(SRC).alias(NODE)).unionByName(part.select(F.col(DST).alias(NODE)))
        ends = piece if ends is None else ends.unionByName(piece)
    if seeds is not None:
        ends = seeds.select(NODE) if ends is None else ends.unionByName(seeds.select(NODE))
    if ends is None:
        return 0
    return int(ends.agg(F.count_distinct(F.col(NODE))).first()[0])


# --- the generic fixpoint ----------------------------------------------------------


def _seed_frame(seeds: Union[Factor, "DataFrame"], semiring: Semiring) -> "DataFrame":
    """Seeds as ``(node, value)``: ⊕-merged per node, zeros dropped."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    if isinstance(seeds, Factor):
        if len(seeds.variables) != 1:
            raise FAQValueError(
                f"seeds {seeds.name!r} must have 1 variable (the node), not {len(seeds.variables)}",
                argument="seeds",
            )
        df = seeds.df.select(F.col(seeds.variables[0]).alias(NODE), F.col(seeds.value).alias(VALUE))
    else:
        df = seeds.select(F.col(NODE), F.col(VALUE))
    df = df.select(F.col(NODE).cast("bigint").alias(NODE), F.col(VALUE).cast(semiring.value_type).alias(VALUE))
    ops = spark_columns(semiring)
    df = df.where(F.col(NODE).isNotNull() & F.col(VALUE).isNotNull() & ~ops.is_zero(F.col(VALUE)))
    return df.groupBy(NODE).agg(ops.sum(F.col(VALUE)).alias(VALUE))


def _solve(
    spark,
    parts: Sequence["DataFrame"],
    seeds: "DataFrame",
    semiring: Semiring,
    *,
    max_iterations: int,
    progress: Progress,
    may_cycle: bool = True,
) -> _Run:
    """From-scratch semi-naive evaluation; ``parts`` are prepared (cached) edge frames.

    ``may_cycle``: some edge is better than ``one`` (see :func:`_edge_stats`),
    so the Bellman-Ford bound is checked.
    """
    with Scope() as scope:
        seeds = scope.persist(seeds.repartition(_partitions(spark), NODE))
        rows = seeds.count()
        progress(f"{rows} seed value(s)")
        run = _iterate(
            seeds,
            seeds,
            rows,
            parts,
            semiring,
            max_iterations=max_iterations,
            node_count=(lambda: _count_nodes(parts, seeds)) if may_cycle else None,
            progress=progress,
        )
        if run.iterations == 0:  # nothing to propagate: the seeds are the answer
            run.scope.adopt(scope.hand_over(seeds))
            run.backing = seeds
    return run


def fixpoint(
    edges: Factor,
    seeds: Union[Factor, "DataFrame"],
    *,
    semiring: Union[str, Semiring, None] = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Any = None,
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
    spark = edges.df.sparkSession
    report = _reporter(progress)
    started = time.perf_counter()
    cached = _is_cached(edges.df)
    with Scope() as edges_scope:  # the prepared edges, released after the run
        frame = edge_frame(edges, semiring) if cached else _prepare_edges(edge_frame(edges, semiring), spark,
                                                                          edges_scope)
        edge_rows, improving = _edge_stats(frame, semiring)
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
    progress: Progress,
    name: str,
    edge_rows: int,
    started: float,
) -> FixpointResult:
    """:func:`_solve`, returned as the :class:`FixpointResult` (factor ``name``) that owns the run."""
    run = _solve(
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
            f"max_iterations must be a positive integer, not {max_iterations!r}",
            argument="max_iterations",
            value=max_iterations,
        )


def _source_seed(spark, source: int, semiring: Semiring) -> "DataFrame":
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    if isinstance(source, bool) or not isinstance(source, int):
        try:
            source = int(source)
        except (TypeError, ValueError):
            raise FAQValueError(f"source must be an integer node id, not {source!r}", argument="source") from None
    return spark.range(1).select(F.lit(source).cast("bigint").alias(NODE), spark_columns(semiring).one().alias(VALUE))


# --- the instances -----------------------------------------------------------------


def paths(
    edges: Factor,
    source: int,
    semiring: Union[str, Semiring] = "min_plus",
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Any = None,
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
    spark = edges.df.sparkSession
    return fixpoint(
        edges,
        _source_seed(spark, source, semiring),
        semiring=semiring,
        max_iterations=max_iterations,
        progress=progress,
    )


def reachability(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Nodes reachable from ``source`` (boolean semiring): rows ``(node, true)``."""
    return paths(edges, source, "boolean", **kw)


def shortest_paths(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Shortest-path lengths from ``source`` (min_plus): rows ``(node, distance)``.

    Negative weights are allowed; a reachable negative cycle raises
    :class:`~faq.errors.NegativeCycleError`.
    """
    return paths(edges, source, "min_plus", **kw)


def widest_paths(edges: Factor, source: int, **kw: Any) -> FixpointResult:
    """Widest (bottleneck) path capacities from ``source`` (max_min): rows ``(node, width)``."""
    return paths(edges, source, "max_min", **kw)


def symmetric_edges(edges: Factor) -> "DataFrame":
    """Both directions of every edge, loops dropped, as ``(src, dst, weight=0)`` (component labels)."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    frame = edge_frame(edges.with_semiring("counting", convert=lambda c: F.lit(1)), get_semiring("counting"))
    both = frame.select(SRC, DST).unionByName(frame.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
    return both.where(F.col(SRC) != F.col(DST)).distinct().select(SRC, DST, spark_columns(MIN_LABEL).one().alias(WEIGHT))


def node_frame(edges: Factor, nodes: Union["DataFrame", Iterable[int], None] = None) -> "DataFrame":
    """Distinct nodes ``(node)`` of ``edges`` (self-loops count), plus ``nodes`` if given."""
    from pyspark.sql import functions as F

    check_binary(edges)
    u, v = edges.variables
    ends = edges.df.select(F.col(u).cast("bigint").alias(NODE)).unionByName(
        edges.df.select(F.col(v).cast("bigint").alias(NODE))
    )
    if nodes is not None:
        spark = edges.df.sparkSession
        if not is_dataframe(nodes):
            nodes = spark.createDataFrame([(int(n),) for n in nodes], f"{NODE} bigint")
        ends = ends.unionByName(nodes.select(F.col(nodes.columns[0]).cast("bigint").alias(NODE)))
    return ends.where(F.col(NODE).isNotNull()).distinct()


def connected_components(
    edges: Factor,
    *,
    nodes: Union["DataFrame", Iterable[int], None] = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Any = None,
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
    spark = edges.df.sparkSession
    report = _reporter(progress)
    started = time.perf_counter()
    with Scope() as edges_scope:  # the symmetric edges, released after the run
        frame = _prepare_edges(symmetric_edges(edges), spark, edges_scope)
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
