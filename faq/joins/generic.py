"""Worst-case optimal bag join: attribute at a time, count / propose / validate.

:func:`generic_join` has the contract of :func:`~faq.joins.binary.binary_join`
(the ⊗-product of the relations over the union of their variables, one row
per binding and per combination of rows, semi-joined with the indicators) but
binds one attribute at a time, in the planner's ``attribute_order``.  For each
attribute every relation holding it is an extender
(:mod:`faq.joins.extenders`): for each prefix binding all of them *count*
their candidates, the one with the fewest *proposes*, the others *validate*.
A relation's value is multiplied in (⊗) when its last attribute is bound;
indicators take part as relations whose value is one.  Work is Σ over
prefixes of the smallest proposal, never the Σ deg² of a chain of binary
joins, so a triangle costs O(N^1.5) (Ngo, Porat, Ré, Rudra; Veldhuizen;
BiGJoin, Ammar et al. VLDB 2018).

Three physical strategies, a module each; which one a step runs is the
plan's decision (``choose_strategy`` of :mod:`faq.insideout.physical`),
carried out here as given:

``"broadcast"`` (:mod:`faq.joins.broadcast`)
    One index of CSR tries, shipped once per machine (or built on the
    executors, :mod:`faq.joins.executor_index`); the seeds are dealt to one
    ``mapInArrow`` task per core, each running the numpy kernel.  Integer
    keys only.
``"partitioned"`` (:mod:`faq.joins.partitioned`)
    HyperCube / Shares: the variables are hashed onto a grid of cells, each
    cell runs the same kernel on its own rows (``applyInArrow``).  Memory
    per task is a fraction of the input; one shuffle.  Integer keys only.
``"shuffle"`` (:mod:`faq.joins.shuffle`)
    DataFrames only, as in BiGJoin; any key type; memory is Spark's.

When listing bindings, the ⊗ of the values is a Spark Column expression of
the semiring (the broadcast strategy gathers each relation's value per output
row and multiplies in Spark), so every semiring, built in or user defined,
gives exactly what binary joins give.

When the caller ⊕-aggregates the product right away (``aggregate=``, an
:class:`~faq.joins.frame.Aggregation`: the InsideOut executor passes the
step's output variables and aggregate), the broadcast strategy does not list
bindings at all for semirings with numpy forms (every built-in; a user-defined
one that declares them): each task multiplies the values
in numpy and ⊕-combines them per kept key (:mod:`faq.joins.partial`), so a
triangle count ships one number per task instead of every triangle.  The
result is then partial aggregates over the kept variables, which the caller's
group-by combines.  When nothing is kept (a count), the task runs the compiled
loop of :mod:`faq.joins.compiled` instead of the numpy extenders, where it
can.  Whether the tasks aggregate is the plan's decision
(``aggregate_in_tasks``, made by
:func:`faq.joins.task_aggregation.task_aggregation`); a caller without a plan
may leave it to this function, which decides it the same way.  User-defined
semirings without a numpy form, and the shuffle strategy, list bindings as
before.  The returned Frame's ``note`` says which happened (int64 partial sums
that could overflow are listed instead, a guard only the data can decide).

The modules, top down, each importing only those beneath it (none imports
:mod:`faq.insideout`: the planner hands its decisions down as values, and
:mod:`faq.joins.dispatch` reads them off the plan's strategy)::

    generic            generic_join: the attribute order, the uses, the strategy the plan named
    broadcast          the broadcast strategy: one index per machine, seeds dealt to tasks (Spark)
    executor_index     the broadcast index built on the executors (Spark)
    partitioned        the partitioned strategy: HyperCube cells (Spark)
    shuffle            the shuffle strategy: DataFrame joins only (Spark)
    kernel             the numpy kernel built and run: what tasks and cells run (no Spark)
    task_aggregation   whether tasks ⊕-aggregate: without data (the plan), then from the values
    compiled           the compiled loop (numba) a kernel may run
    task_index         the Kernel value, and the TaskIndex that ships it to the tasks
    uses               a relation as the strategies read it (Spark Columns)
    extenders, csr, partial, mapped, frame: the pieces

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.joins import Frame, VALUE_COLUMN
>>> from faq.joins.generic import generic_join
>>> from faq.semirings import COUNTING
>>> edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1)]
>>> def use(a, b):
...     f = factor_of(edges, ["s", "t"], "counting")
...     return Frame(f.df.selectExpr(f"s AS {a}", f"t AS {b}", f"value AS {VALUE_COLUMN}"), (a, b))
>>> out = generic_join([use("a", "b"), use("a", "c"), use("b", "c")], [], COUNTING, ["a", "b", "c"],
...                    strategy="broadcast")
>>> sorted(map(tuple, out.df.collect()))
[(0, 1, 2, 1)]
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from faq.errors import PlanError
from faq.joins.broadcast import broadcast_join
from faq.joins.frame import VALUE_COLUMN, Aggregation, Frame
from faq.joins.partitioned import partitioned_join
from faq.joins.shuffle import shuffle_in_batches, shuffle_join
from faq.joins.task_aggregation import task_aggregation
from faq.joins.uses import Use, index_groups
from faq.semirings import Semiring
from faq.semirings.numpy_backend import numpy_ops

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from faq.scope import Scope

__all__ = ["STRATEGIES", "generic_join"]

log = logging.getLogger(__name__)

STRATEGIES = ("shuffle", "broadcast", "partitioned")


def generic_join(
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    strategy: str = "broadcast",
    aggregate: Optional[Aggregation] = None,
    aggregate_in_tasks: Optional[bool] = None,
    shared: Optional[Sequence[Sequence[int]]] = None,
    scope: Optional["Scope"] = None,
    grid: Optional[Mapping[str, int]] = None,
    batches: int = 1,
    index_dir: Optional[str] = None,
    binary_kernel: Optional[str] = None,
    compiled: bool = True,
    oriented: bool = False,
) -> Frame:
    """⊗-product of ``relations``, semi-joined with ``indicators``, attribute at a time.

    Parameters
    ----------
    relations : sequence of Frame
        Any arities; a relation may appear several times (its value is then
        multiplied in several times, as in binary joins).
    indicators : sequence of Frame
        De-duplicated projections (variable columns only) to semi-join with.
    semiring : Semiring
        Supplies ⊗ (as Column expressions) and its one.
    attribute_order : sequence of str
        Order in which attributes are bound (the plan's: each attribute after
        the first shares a relation with an earlier one).  Variables it
        misses are appended in a connected order; unknown ones are ignored.
    strategy : {"broadcast", "shuffle", "partitioned"}
        See the module notes; the broadcast and partitioned strategies need
        integer keys (a :class:`~faq.errors.PlanError` otherwise).
    aggregate : Aggregation, optional
        The caller ⊕-aggregates the product onto ``aggregate.keep`` right away.
    aggregate_in_tasks : bool, optional
        Broadcast strategy: ⊕-aggregate inside the tasks and return partial
        aggregates over ``aggregate.keep``.  The plan decides it
        (:func:`faq.joins.task_aggregation.task_aggregation`; the executor's
        :func:`~faq.joins.dispatch.join_bag` passes the plan's answer); None
        decides it here the same way.
    shared : sequence of sequence of int, optional
        Groups of positions in ``relations + indicators`` that hold the same
        data in the same column order (the plan's
        ``Strategy.shared``): one index each.
        None: one index per use.
    scope : Scope, optional
        Owns what the result reads and the join had to materialise (the
        shuffle strategy's checkpoints); the caller closes it once it has
        materialised the result.  None: nothing is released.
    grid : mapping of str to int, optional
        The partitioned strategy's shares per variable (None: sized here).
    batches : int
        The shuffle strategy: run the seeds (values of the first attribute)
        in this many batches, hashed apart, each materialised before the
        next -- and ⊕-aggregated onto ``aggregate.keep`` when ``aggregate`` is
        given and ``aggregate_in_tasks`` is not False.  Needs ``scope``.
    index_dir : str, optional
        The broadcast strategy: build the index on the executors, from
        Parquet files Spark writes under this directory (which the executors
        must be able to read; ``scope``, when given, removes them), not on
        the driver (:mod:`faq.joins.executor_index`).  None: on the driver.
    binary_kernel : str, optional
        The partitioned strategy: the merges each cell runs (the plan's
        :attr:`~faq.insideout.physical.Strategy.binary_kernel`; an array
        ring's bag is joined so).  None: the generic join's kernel.
    compiled : bool
        The partitioned strategy: cells that ⊕-aggregate may run the
        compiled loop (False: the numpy kernel, the plan's choice).
    oriented : bool
        The broadcast strategy: a triangle bag over one relation, counted,
        runs the oriented triangle count in the tasks where it applies
        (:func:`~faq.joins.broadcast.oriented_in_tasks`; the plan's
        :attr:`~faq.insideout.physical.Strategy.oriented_count`).

    Returns
    -------
    Frame
        Columns: the relations' variables (first appearance order) and
        :data:`VALUE_COLUMN` — or, when aggregated, ``aggregate.keep`` and
        :data:`VALUE_COLUMN` holding partial ⊕-aggregates (several rows per
        key possible: ⊕-combine them).  Rows with a null key or value are
        left out.  ``note`` says how the product was made.
    """
    from pyspark.sql import functions as F

    from faq.hypergraph.acyclic import attribute_order as connected_order
    from faq.semirings.spark_backend import columns as spark_columns

    if strategy not in STRATEGIES:
        raise PlanError(reason=f"unknown generic-join strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    everything = (*relations, *indicators)
    variables = tuple(dict.fromkeys(v for r in everything for v in r.variables))
    edges = [r.variables for r in everything if r.variables]
    given = [v for v in dict.fromkeys(attribute_order) if v in variables]
    order = tuple(given) if set(given) == set(variables) else tuple(connected_order(edges, first=given))
    position = {v: i for i, v in enumerate(order)}
    kept = [k for k, r in enumerate(everything) if r.variables]
    uses = [
        Use(everything[k], tuple(sorted(everything[k].variables, key=position.__getitem__)), k < len(relations))
        for k in kept
    ]
    spark = _spark_of(relations, indicators)
    out, ops, combined = variables, None, False
    if not uses:
        df, note = spark.range(1).select(spark_columns(semiring).one().alias(VALUE_COLUMN)), "no variables"
    elif strategy in ("broadcast", "partitioned"):
        in_tasks, why = aggregate_in_tasks, "every binding listed: the plan says so"
        if in_tasks is None:  # no plan decided it: decide as the planner would
            in_tasks, why, _ = task_aggregation(semiring, aggregate and aggregate.semiring,
                                                aggregate.keep if aggregate else (), variables)
        arrays = bool(semiring.structured)  # an array ring's numpy form takes (n, w) values
        ops = numpy_ops(semiring, aggregate.semiring, arrays=arrays) if in_tasks and aggregate is not None else None
        if strategy == "broadcast":
            df, out, note = broadcast_join(spark, uses, index_groups(shared, kept), order, variables, semiring,
                                           aggregate, ops, index_dir, scope, oriented)
        else:
            df, out, note, combined = partitioned_join(spark, uses, order, variables, semiring, grid, aggregate,
                                                       ops, binary_kernel, compiled)
        if aggregate is not None and ops is None:
            note += f"; {why}"
    elif batches > 1:
        per_batch = aggregate if aggregate_in_tasks is not False else None
        df, out, note = shuffle_in_batches(spark, uses, order, variables, semiring, scope, batches, per_batch)
    else:
        df, note = shuffle_join(spark, uses, order, variables, semiring, scope), "shuffle"
    log.info("generic join: %s, attributes %s", note, ", ".join(order))
    variables = out

    # Relations and indicators without variables: a constant factor, a non-emptiness test.
    for r in relations:
        if not r.variables:
            other = r.df.select(F.col(VALUE_COLUMN).alias("__z"))
            df = df.crossJoin(other).select(
                *variables, spark_columns(semiring).mul(F.col(VALUE_COLUMN), F.col("__z")).alias(VALUE_COLUMN)
            )
    for ind in indicators:
        if not ind.variables:
            df = df.crossJoin(ind.df.limit(1).select(F.lit(1).alias("__one"))).drop("__one")
    # Partial aggregates onto no variable: about one row per task (Frame.task_partials).
    task_partials = ops is not None and not out
    combined = combined and all(r.variables for r in relations)  # a constant factor multiplied in keeps it so
    return Frame(df.select(*variables, VALUE_COLUMN), variables, note, task_partials and not combined, combined)


def _spark_of(relations: Sequence[Frame], indicators: Sequence[Frame]) -> "SparkSession":
    """The session of the first relation or indicator (none: the default session)."""
    for r in (*relations, *indicators):
        return r.relation.spark_session
    from faq.spark import get_session

    return get_session()
