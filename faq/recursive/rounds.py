"""Spark's placement of the semi-naive loop: one iteration, the rounds until nothing improves, a solve.

What :mod:`faq.recursive.seminaive` (one-shot fixpoints) and
:mod:`faq.recursive.spark_maintained` (fixpoints kept current on the
executors) both run: the edge frames partitioned by source and cached
(:func:`prepare_edges`, :func:`edge_stats`), one semi-naive iteration
(:func:`step`: the frontier joined with the edges and ⊕-merged into the state
in one aggregate), the rounds (:func:`iterate`: a local checkpoint per
iteration that counts the improved rows on the way, run by the loop of
:mod:`faq.recursive.core`, which owns the iteration cap and the
Bellman-Ford bound for every placement) and a solve from seeds (:func:`solve`).  Why each
iteration is checkpointed and when the bound is checked: the module notes of
:mod:`faq.recursive.seminaive`.

The column names of every fixpoint frame live here too: ``(src, dst,
weight)`` edges and ``(node, value)`` states; :data:`OLD_VALUE` is a node's
value before an iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from faq.recursive.core import DEFAULT_MAX_ITERATIONS, seminaive_rounds
from faq.scope import Scope
from faq.semirings import Semiring

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "NODE", "VALUE", "SRC", "DST", "WEIGHT", "OLD_VALUE", "DEFAULT_MAX_ITERATIONS", "Progress", "Run",
    "partitions", "reporter", "edge_stats", "is_cached", "prepare_edges", "step", "improves", "iterate",
    "count_nodes", "solve", "source_seed",
]

NODE = "node"
VALUE = "value"
SRC = "src"
DST = "dst"
WEIGHT = "weight"
OLD_VALUE = "_old"  # a node's value before the iteration (null: it had none)
_NEW = "_new"
_IMPROVED = "_improved"


Progress = Callable[[str], None]


def partitions(spark) -> int:
    """The partitions the edges and seeds are spread over: the session's shuffle partitions (8 if unreadable)."""
    try:
        from faq.settings import shuffle_partitions

        return shuffle_partitions(spark)
    except Exception:  # noqa: BLE001 - an unusual setting ("auto"): let Spark decide
        return 8


def reporter(progress: Any) -> Progress:
    """Where the rounds' lines go (:func:`faq.events.notes_to`): a reporter's ``note``, events to a callable."""
    from faq.events import notes_to

    return notes_to(progress)


def edge_stats(frame: "DataFrame", semiring: Semiring) -> tuple[int, int]:
    """(edges, edges whose value is better than ``one``) -- one job, which also fills the cache."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    row = frame.agg(
        F.count(F.lit(1)).alias("n"),
        F.count(F.when(ops.add(F.col(WEIGHT), ops.one()) != ops.one(), 1)).alias("improving"),
    ).first()
    return int(row["n"]), int(row["improving"])


def is_cached(df: "DataFrame") -> bool:
    """True when the caller persisted ``df`` (then it is used as it is: no repartition, no second cache)."""
    try:
        level = df.storageLevel
    except Exception:  # noqa: BLE001 - e.g. Spark Connect: treat as not cached
        return False
    return bool(level.useMemory or level.useDisk)


def prepare_edges(df: "DataFrame", spark, scope: Scope, sort: bool = False) -> "DataFrame":
    """Partition the edges by source (so the frontier join never moves them) and cache them in ``scope``.

    ``sort``: also sort each partition by source, so a filter ``src IN (...)``
    skips most cached batches (their min/max statistics); maintained
    fixpoints look up the existing edges of each batch that way.
    """
    df = df.repartition(partitions(spark), SRC)
    if sort:
        df = df.sortWithinPartitions(SRC)
    return scope.persist(df)


def step(
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
        state.select(F.col(NODE), F.col(VALUE).alias(_NEW), F.col(VALUE).alias(OLD_VALUE))
    ]
    for part in parts:
        pieces.append(
            frontier.join(part, F.col(NODE) == F.col(SRC)).select(
                F.col(DST).alias(NODE),
                ops.mul(F.col(VALUE), F.col(WEIGHT)).alias(_NEW),
                F.lit(None).cast(semiring.value_type).alias(OLD_VALUE),
            )
        )
    rows = pieces[0]
    for piece in pieces[1:]:
        rows = rows.unionByName(piece)
    # ``old`` is the one state row's value (null when the node had none): max ignores nulls.
    grouped = rows.groupBy(NODE).agg(ops.sum(F.col(_NEW)).alias(VALUE), F.max(F.col(OLD_VALUE)).alias(OLD_VALUE))
    value, old = F.col(VALUE), F.col(OLD_VALUE)
    improved = value.isNotNull() & ~ops.is_zero(value) & (old.isNull() | (value != old))
    return grouped.select(NODE, VALUE, OLD_VALUE, F.coalesce(improved, F.lit(False)).alias(_IMPROVED))


def improves(semiring: Semiring, new: "Column", old: "Column") -> "Column":
    """``new`` is strictly better than ``old`` under the idempotent ⊕ (null old: no value yet)."""
    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    return new.isNotNull() & ~ops.is_zero(new) & (old.isNull() | (ops.add(new, old) != old))


@dataclass
class Run:
    """What one call of :func:`iterate` produced."""

    state: "DataFrame"  # (node, value)
    scope: Scope  # what backs ``state`` and, when kept, ``frontiers``
    iterations: int
    frontiers: list  # (node, value, _old) per iteration, when kept (maintained fixpoints)
    backing: Optional["DataFrame"] = None  # the one resource in ``scope`` behind ``state`` (None: none)


def iterate(
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
) -> Run:
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

    scope = Scope()
    current = None  # the checkpoint behind the current state
    frontiers: list = []

    def one_round(k: int) -> int:
        """Round ``k`` on Spark: one action, the checkpoint (which cuts the lineage) counting the improved rows."""
        nonlocal state, frontier, current
        use = first_parts if (k == 0 and first_parts is not None) else parts
        merged, seen = scope.checkpoint_observed(step(state, frontier, use, semiring),
                                                 {"improved": F.count(F.when(F.col(_IMPROVED), 1))})
        if not keep_frontiers:
            scope.release(current)  # kept frontiers read it (None the first time: nothing)
        current = merged
        state, frontier = merged.select(NODE, VALUE), merged.where(F.col(_IMPROVED)).select(NODE, VALUE, OLD_VALUE)
        if keep_frontiers:
            frontiers.append(frontier)
        return int(seen["improved"])

    def example() -> Any:
        row = frontier.select(NODE).first()  # one row
        return None if row is None else row[0]

    with scope.closing_on_error():
        iterations = seminaive_rounds(one_round, frontier=frontier_rows, max_iterations=max_iterations,
                                      node_count=node_count, semiring=semiring.name, example=example,
                                      progress=progress).iterations
    return Run(state=state, scope=scope, iterations=iterations, frontiers=frontiers, backing=current)


def count_nodes(parts: Sequence["DataFrame"], seeds: Optional["DataFrame"] = None) -> int:
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


def solve(
    spark,
    parts: Sequence["DataFrame"],
    seeds: "DataFrame",
    semiring: Semiring,
    *,
    max_iterations: int,
    progress: Progress,
    may_cycle: bool = True,
) -> Run:
    """From-scratch semi-naive evaluation; ``parts`` are prepared (cached) edge frames.

    ``may_cycle``: some edge is better than ``one`` (see :func:`edge_stats`),
    so the Bellman-Ford bound is checked.
    """
    with Scope() as scope:
        seeds = scope.persist(seeds.repartition(partitions(spark), NODE))
        rows = seeds.count()
        progress(f"{rows} seed value(s)")
        run = iterate(
            seeds,
            seeds,
            rows,
            parts,
            semiring,
            max_iterations=max_iterations,
            node_count=(lambda: count_nodes(parts, seeds)) if may_cycle else None,
            progress=progress,
        )
        if run.iterations == 0:  # nothing to propagate: the seeds are the answer
            run.scope.adopt(scope.hand_over(seeds))
            run.backing = seeds
    return run


def source_seed(spark, source: int, semiring: Semiring) -> "DataFrame":
    """The seed of single-source paths: one row ``(source, one)``.

    Raises
    ------
    FAQValueError
        ``source`` is not an integer node id.
    """
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    from faq.checks import node_id

    source = node_id(source, "source")
    return spark.range(1).select(F.lit(source).cast("bigint").alias(NODE), spark_columns(semiring).one().alias(VALUE))


