"""Run an InsideOut :class:`~faq.insideout.planner.Plan` on Spark, exactly as it says.

:func:`evaluate` is the entry point: it checks the query against the factors,
gathers their sizes and plans (:func:`faq.insideout.binding.plan_for`) — or
takes a plan the caller made and inspected (``plan=``) — and :func:`execute`
runs it.  The executor decides nothing: each step's join strategy, attribute
order, shared indexes and whether aggregation runs inside the tasks are the
plan's (:class:`~faq.insideout.physical.Strategy`), dispatched by
:func:`faq.joins.join_bag`.  Each step's output is materialised (persisted and
counted) before the next starts, which gives honest progress reports and
measured sizes; every cache is released when the result is (see
:class:`QueryResult`).

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.insideout import evaluate, plan_for
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> triangles = "count() := edge(a,b), edge(a,c), edge(b,c)"
>>> with evaluate(triangles, {"edge": edge}) as result:
...     result.scalar(), result.notes[0]
(1, 'broadcast index of 4 rows (... file, mapped once per machine); ⊕ of counting inside tasks onto (); compiled loop (numba)')
>>> shuffled = plan_for(triangles, {"edge": edge}, join="generic_shuffle")
>>> with evaluate(triangles, {"edge": edge}, plan=shuffled) as result:
...     result.scalar(), result.notes[0]
(1, 'shuffle')
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

import numpy as np

from faq.driver_copy import keep_driver_copy, project_driver_copy
from faq.errors import PlanError
from faq.factor import VALUE, Factor
from faq.insideout.binding import bind, plan_for, query_semiring
from faq.insideout.planner import Plan
from faq.joins import VALUE_COLUMN, Aggregation, Frame, join_bag
from faq.language import FAQ, parse_query
from faq.scope import Owner, Scope
from faq.semirings import Semiring, get_semiring
from faq.semirings.numpy_backend import NUMPY_DTYPES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class StepEvent:
    """Progress of :func:`execute`: ``kind`` is ``"start"`` or ``"done"`` (graph jobs send a ``"load"`` first)."""

    kind: str
    step: int
    total: int
    description: str
    rows: Optional[int] = None
    seconds: Optional[float] = None
    note: str = ""  # "done": how the step's join ran (strategy, index size, aggregation)


Progress = Callable[[StepEvent], None]


@dataclass
class QueryResult(Owner):
    """The answer of a query, its plan and what running it measured.

    The answer's DataFrame is cached, owned by :attr:`scope`; call
    :meth:`close` (or use the result as a context manager) when done with it.
    """

    factor: Factor
    plan: Plan
    step_rows: list[int] = field(default_factory=list)
    seconds: float = 0.0
    scope: Scope = field(default_factory=Scope, repr=False)
    notes: list[str] = field(default_factory=list)  # per step: how its join ran

    @property
    def df(self) -> "DataFrame":
        """The answer as a DataFrame: the free variables and ``value`` (cached until :meth:`close`)."""
        return self.factor.df

    def scalar(self) -> Any:
        """The value of a query without free variables."""
        return self.factor.scalar()

    def _repr_html_(self) -> str:
        """Value or bounded preview, time and plan facts, for notebooks (:mod:`faq.display`)."""
        from faq.display import result_html

        return result_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from faq.display import pretty, summary

        pretty(summary(self), printer, cycle)


def execute(
    plan: Plan,
    frames: Mapping[str, Frame],
    semiring: Semiring,
    progress: Optional[Progress] = None,
) -> QueryResult:
    """Run ``plan`` over the bound ``frames`` (from :func:`~faq.insideout.binding.bind`).

    Returns a :class:`QueryResult` whose factor has the free variables as
    columns (in the query's order) and a ``value`` column.
    """
    from pyspark.sql import functions as F

    started = time.perf_counter()
    relations: dict[str, Frame] = dict(frames)
    step_rows: list[int] = []
    notes: list[str] = []
    scope = Scope()
    with scope.closing_on_error():
        for step in plan.steps:
            frame, rows = _run_step(step, len(plan.steps), relations, frames, semiring, scope, progress)
            step_rows.append(rows)
            notes.append(frame.note)
            # Consumed intermediates are no longer needed: release them now (inputs are not ours).
            for r in step.inputs:
                scope.release(relations.pop(r).df)
            relations[step.output.id] = frame
    result_frame = relations[plan.result.id]
    out_value = VALUE if VALUE not in plan.free else "__value"
    out_df = result_frame.df.select(*plan.free, F.col(VALUE_COLUMN).alias(out_value))
    if not plan.free:  # a scalar the last step holds on the driver stays held (Factor.scalar runs no job)
        project_driver_copy(out_df, result_frame.df, {out_value: VALUE_COLUMN})
    factor = Factor(df=out_df, variables=tuple(plan.free), semiring=semiring, value=out_value, name="result")
    return QueryResult(factor, plan, step_rows, time.perf_counter() - started, scope, notes)


def _run_step(
    step: Any,
    total: int,
    relations: Mapping[str, Frame],
    inputs_of_query: Mapping[str, Frame],
    semiring: Semiring,
    scope: Scope,
    progress: Optional[Progress],
) -> tuple[Frame, int]:
    """One step: join its bag as its strategy says, ⊕-aggregate, drop zeros, persist and count
    (a step onto no variable: collect its one row, or none, into a local relation).

    Returns the step's output (persisted in ``scope``; its ``note`` says how the join ran) and its rows.
    """
    description = (
        f"eliminate {', '.join(step.eliminated)} (bag {{{', '.join(step.bag)}}}, "
        f"{len(step.inputs)} relation(s), {len(step.indicators)} indicator(s))"
        if step.eliminated
        else f"multiply {len(step.inputs)} relation(s) on the free variables"
    )
    if progress:
        progress(StepEvent("start", step.index, total, description))
    t0 = time.perf_counter()
    inputs = [relations[r] for r in step.inputs]
    indicators = [
        Frame(relations[i.relation].df.select(*i.variables).distinct(), i.variables) for i in step.indicators
    ]
    out_vars = step.output.variables
    # The join is told what follows it: when the plan says so it ⊕-aggregates while it
    # enumerates and returns partial aggregates over out_vars (the group-by below combines them).
    # The step's ⊕ is the query's own semiring (which need not be registered) or a registered one.
    plus = semiring if step.aggregate == semiring.name else get_semiring(step.aggregate) if step.eliminated else None
    aggregation = Aggregation(tuple(out_vars), plus) if step.eliminated else None
    # What the join materialises for its product lives until the step's output is materialised.
    with Scope() as join_scope:
        product = join_bag(step.strategy, inputs, indicators, semiring, step.attribute_order, aggregation,
                           join_scope)
        held = _combined_on_driver(product, aggregation, semiring)
        if held is None:
            df = _combined_in_spark(product, step, aggregation, semiring, inputs_of_query)
            if out_vars:
                df = scope.persist(df)
                rows = df.count()
            else:  # at most one row: one job brings it to the driver, which holds it from then on
                held = [row[0] for row in df.collect()]
        if held is not None:
            df, rows = _held_scalar(product.df.sparkSession, held, semiring), len(held)
    if progress:
        progress(StepEvent("done", step.index, total, description, rows, time.perf_counter() - t0, product.note))
    return Frame(df, out_vars, product.note), rows


def _combined_in_spark(
    product: Frame, step: Any, aggregation: Optional[Aggregation], semiring: Semiring,
    inputs_of_query: Mapping[str, Frame],
) -> "DataFrame":
    """The step's output from the join's product in Spark: ⊕-combined onto the step's variables
    (duplicate keys merged when an input atom reached the output unaggregated), zeros dropped."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    value = F.col(VALUE_COLUMN)
    out_vars = step.output.variables
    if aggregation is not None:
        df = aggregation.combine(product.df)
    elif any(r in inputs_of_query for r in step.inputs):
        df = product.df.groupBy(*out_vars).agg(spark_columns(semiring).sum(value).alias(VALUE_COLUMN))
    else:
        df = product.df.select(*out_vars, VALUE_COLUMN)
    return df.where(value.isNotNull() & ~spark_columns(semiring).is_zero(value))


def _combined_on_driver(product: Frame, aggregation: Optional[Aggregation], semiring: Semiring) -> Optional[list]:
    """The step's value when the join returned a few partial aggregates onto no variable
    (:attr:`Frame.task_partials`): ⊕-combined on the driver, ``[value]``, or ``[]`` for zero.

    None otherwise, or when the ⊕ has no exact driver form: the step then combines in Spark, a
    group-by whose shuffle stage costs more than the collect of a few rows.
    """
    if aggregation is None or aggregation.keep or not product.task_partials:
        return None
    partials = [row[0] for row in product.df.select(VALUE_COLUMN).collect()]  # one or so per task
    total = aggregation.combine_values(partials, semiring)
    if total is None:
        return None
    return [] if total == semiring.zero else [total]


def _held_scalar(spark: "SparkSession", held: list, semiring: Semiring) -> "DataFrame":
    """A step's output onto no variable (``held``: its value, or none) as a local relation whose
    rows the driver holds (:mod:`faq.driver_copy`): no cache to own, and reading it runs no job."""
    df = spark.createDataFrame([(v,) for v in held], f"{VALUE_COLUMN} {semiring.value_type}")
    return keep_driver_copy(df, {VALUE_COLUMN: np.array(held, dtype=NUMPY_DTYPES[semiring.value_type])})


def evaluate(
    query: Union[FAQ, str],
    factors: Mapping[str, Factor],
    *,
    semiring: Union[str, Semiring, None] = None,
    method: str = "auto",
    order: Optional[list[str]] = None,
    join: str = "auto",
    progress: Optional[Progress] = None,
    plan: Optional[Plan] = None,
    task_aggregation: bool = True,
) -> QueryResult:
    """Answer ``query`` over ``factors`` with InsideOut.

    Parameters
    ----------
    query : FAQ or str
        A query value or its text form.
    factors : mapping name -> Factor
    semiring : str or Semiring, optional
        Defaults to the query's, else its factors' semiring.
    method : str
        Elimination-order search (see :func:`faq.insideout.planner.plan`).
    order : list of str, optional
        A fixed elimination order.
    join : str
        Bag-join method (``"auto"`` lets the planner choose per bag).
    progress : callable, optional
        Receives a :class:`StepEvent` as each step starts and ends.
    plan : Plan, optional
        Run this plan (made by :func:`~faq.insideout.binding.plan_for` or
        :func:`~faq.insideout.planner.plan`, and perhaps inspected) instead of
        planning; ``method``, ``order``, ``join`` and ``task_aggregation``
        are then not used.  It must be a plan of this query and semiring.
    task_aggregation : bool
        Let broadcast joins ⊕-aggregate inside their tasks (False lists
        every binding; the plan records the choice).

    Returns
    -------
    QueryResult
        Use it as a context manager, or call ``close()``, to free its cache.
    """
    if isinstance(query, str):
        query = parse_query(query)
    ring = query_semiring(query, factors, semiring)
    if plan is not None:
        _check_plan(plan, query, ring)
    # A factor used by several atoms is read once and kept while the query runs; the
    # answer is materialised (or failed) when the scope closes.
    with Scope() as inputs:
        kept = dict(factors)
        for name in _used_twice(query):
            # (A DataFrame the caller cached already is left alone, and not released by us.)
            if name in factors and not _is_cached(factors[name].df):
                kept[name] = replace(factors[name], df=inputs.persist(factors[name].df))
        frames = bind(query, kept, ring)  # every check, before any Spark job
        if plan is None:
            plan = plan_for(query, kept, semiring=ring, method=method, order=order, join=join,
                            task_aggregation=task_aggregation)
        return execute(plan, frames, ring, progress)


def _used_twice(query: FAQ) -> list[str]:
    names = [atom.factor for atom in query.atoms]
    return [name for name in dict.fromkeys(names) if names.count(name) > 1]


def _check_plan(plan: Plan, query: FAQ, semiring: Semiring) -> None:
    """Refuse a plan made for another query or semiring."""
    if plan.query != str(query):
        raise PlanError(reason=f"the plan is for {plan.query!r}, not for {str(query)!r}")
    if plan.semiring != semiring.name:
        raise PlanError(reason=f"the plan runs in semiring {plan.semiring!r}, but the query's is {semiring.name!r}")


def _is_cached(df) -> bool:
    level = df.storageLevel
    return bool(level.useMemory or level.useDisk)
