"""Run an InsideOut :class:`~faq.insideout.planner.Plan` on Spark, exactly as it says.

:func:`evaluate` is the entry point: it checks the query against the factors,
gathers their sizes and plans (:func:`faq.insideout.binding.plan_for`) — or
takes a plan the caller made and inspected (``plan=``) — and :func:`execute`
runs it.  The executor decides nothing: where each step runs, its join
strategy, attribute order, shared indexes and whether aggregation runs inside
the tasks are the plan's (:attr:`~faq.insideout.planner.Step.placement`,
:class:`~faq.insideout.physical.Strategy`).  A step placed on the driver runs
in-process over numpy tables (:func:`faq.joins.local.join_local`, no Spark
job); a step on the executors is dispatched by :func:`faq.joins.join_bag` and
its output materialised (persisted and counted) before the next starts, which
gives honest progress reports and measured sizes.  Relations cross between the
two as the steps need; every cache is released when the result is (see
:class:`QueryResult`).  A plan that names :attr:`~faq.insideout.plans.Plan.in_tasks`
runs every step inside the tasks of that atom's Spark scan instead
(:mod:`faq.insideout.in_tasks`: one job); the in-process step runner is
:mod:`faq.insideout.in_process`.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.insideout import evaluate, plan_for
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> triangles = "count() := edge(a,b), edge(a,c), edge(b,c)"
>>> with evaluate(triangles, {"edge": edge}) as result:   # numpy's kernel, or compiled ones where numba is loaded
...     result.scalar(), result.plan.steps[0].placement, result.notes[0].startswith("in-process")
(1, 'driver', True)
>>> with evaluate(triangles, {"edge": edge}, placement="executors") as result:
...     result.scalar(), result.notes[0]
(1, "broadcast index of 4 pairs oriented by degree (... file, mapped once per machine...); ⊕ of counting inside tasks onto (); one relation's triangles counted by middle node in ... task(s), each transposing its share (compiled)")
>>> shuffled = plan_for(triangles, {"edge": edge}, join="generic_shuffle", placement="executors")
>>> with evaluate(triangles, {"edge": edge}, plan=shuffled) as result:
...     result.scalar(), result.notes[0]
(1, 'shuffle')
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from faq.errors import ScopeClosedError
from faq.factor import VALUE, Factor
from faq.relation import Relation, sql_name
from faq.insideout.binding import (
    bind_atom,
    held_atom,
    plan_for,
    query_semiring,
    session_environment,
    variable_types,
)
from faq.insideout.fetching import fetched_all
from faq.insideout.in_process import Progress, StepEvent, as_table, describe_step, held_frame, run_step
from faq.insideout.pipelining import note as pipelining_note, pipelined
from faq.insideout.planner import Plan
from faq.insideout.staleness import PlanLike, check_query, check_rows, check_types, factor_rows, load_plan
from faq.parquet_scan import bare_scan
from faq.results import Answer
from faq.spark_ui import step as spark_step
from faq.joins import VALUE_COLUMN, Aggregation, Frame, join_bag
from faq.joins.combine import combined_in_arrow
from faq.joins.local import Table
from faq.semirings.numpy_backend import as_values
from faq.language import FAQ, parse_query
from faq.placement_policy import checked
from faq.scope import Owner, Scope
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(repr=False)
class QueryResult(Owner, Answer):
    """The answer of a query, its plan and what running it measured.

    The answer's DataFrame is cached, owned by :attr:`scope`; call
    :meth:`close` (or use the result as a context manager) when done with it.
    An answer made in-process is held by the driver (:attr:`held`): its
    DataFrame is made when first asked for, and :meth:`scalar` runs no Spark
    call at all.
    """

    _factor: Optional[Factor]
    plan: Plan
    step_rows: list[int] = field(default_factory=list)
    seconds: float = 0.0
    scope: Scope = field(default_factory=Scope, repr=False)
    notes: list[str] = field(default_factory=list)  # per step: how its join ran
    held: Optional[Table] = field(default=None, repr=False)  # the answer, when the last step ran in-process
    _make: Optional[Callable[[], Factor]] = field(default=None, repr=False)

    @property
    def factor(self) -> Factor:
        """The answer as a :class:`~faq.factor.Factor` (free variables and ``value``)."""
        if self._factor is None:
            self._factor = self._make()
        return self._factor

    @factor.setter
    def factor(self, value: Factor) -> None:  # a job reshaping its answer (faq.graphs.matrix_chain)
        self._factor = value

    @property
    def df(self) -> "DataFrame":
        """The answer as a DataFrame: the free variables and ``value`` (cached until :meth:`close`)."""
        return self.factor.df

    def scalar(self) -> Any:
        """The value of a query without free variables."""
        if self._factor is None and isinstance(self._make, _Answer) and not self.held.variables:
            semiring, values = self._make.semiring, self.held.values  # held in-process: no Spark call
            if len(values) == 0:
                return semiring.zero
            return semiring.python_value(values[0].item() if values.ndim == 1 else values[0])  # a row: an array ring's
        return self.factor.scalar()

    @property
    def rows(self) -> int:
        """The answer's rows: known when the last step counted them, else counted now (one job over the
        cached answer, which that job fills) and kept.

        An answer left in Spark is not counted by :func:`~faq.api.query` (a job Spark SQL would not run
        before the caller's own); :meth:`summary` and the notebook view say ``?`` until
        this is read.

        >>> import faq
        >>> result = faq.query("q(a) := e(a,b)", e=[(1, 2), (1, 3), (2, 3)])   # held: counted in-process
        >>> result.rows, result.rows_known
        (2, 2)

        Raises :class:`~faq.errors.ScopeClosedError` when the rows are not known and the result is closed
        (its cache, and what its plan reads, released: count before :meth:`close`).
        """
        if not self.step_rows or self.step_rows[-1] < 0:
            if self.scope.closed:
                raise ScopeClosedError(resource="the count of an answer not counted before close()")
            counted = self.factor.count()
            self.step_rows = [*self.step_rows[:-1], counted] if self.step_rows else [counted]
        return self.step_rows[-1]

    @property
    def rows_known(self) -> Optional[int]:
        """The answer's rows if known without a Spark job (else None)."""
        return self.step_rows[-1] if self.step_rows and self.step_rows[-1] >= 0 else None

    def summary(self) -> str:
        """The query, the answer's rows (``?`` when not counted yet) and the seconds it took (the one-line
        ``repr``: runs no job)."""
        rows = self.rows_known
        return f"{self.plan.query!r}, rows={'?' if rows is None else rows}, seconds={self.seconds:.3g}"

    def _repr_html_(self) -> str:
        """Value or bounded preview, time and plan facts, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from faq.display import pretty, summary

        pretty(summary(self), printer, cycle)


def execute(
    plan: Plan,
    frames: Mapping[str, Frame],
    semiring: Semiring,
    progress: Optional[Progress] = None,
    spark: Optional["SparkSession"] = None,
) -> QueryResult:
    """Run ``plan`` over the bound ``frames`` (from :func:`~faq.insideout.binding.bind`; an atom
    whose rows the driver holds as a held frame, :func:`~faq.insideout.in_process.held_frame`).

    A step the plan places on the driver runs in-process (:mod:`faq.joins.local`,
    no Spark job); a step on the executors as Spark jobs; relations cross
    between them as the steps need.

    Returns a :class:`QueryResult` whose factor has the free variables as
    columns (in the query's order) and a ``value`` column.
    """
    started = time.perf_counter()
    # Every relation is a Frame: in Spark, or held by the driver (an input it holds, an in-process output).
    relations: dict[str, Frame] = dict(frames)
    step_rows: list[int] = []
    notes: list[str] = []
    scope = Scope()
    spark = spark if spark is not None else _session_of(frames)
    steps = plan.steps
    if plan.pieces is not None and plan.pieces.plans:
        # Each piece of one variable's range in-process, the answers combined (faq.insideout.pieces).
        from faq.insideout.pieces import run_pieces

        table, notes = run_pieces(plan, frames, semiring, progress)
        out_value = VALUE if VALUE not in plan.free else "__value"
        make = _Answer(spark, table, plan, semiring, out_value)
        step_rows = [-1] * (len(plan.steps) - 1) + [table.rows]  # -1: the unsplit steps did not run
        return QueryResult(None, plan, step_rows, time.perf_counter() - started, scope, notes, table, make)
    if plan.in_tasks and plan.steps and plan.in_tasks in relations and not relations[plan.in_tasks].relation.held:
        # Every step in the tasks of the one atom left in Spark (faq.insideout.in_tasks): one job.
        from faq.insideout.in_tasks import run_in_tasks

        with scope.closing_on_error(), spark_step(spark, f"the plan in the tasks of {plan.in_tasks}"):
            answer, rows, note = run_in_tasks(plan, relations, semiring, scope, progress)
        relations, steps = {plan.result.id: answer}, ()
        step_rows = [-1] * (len(plan.steps) - 1) + [rows]  # -1: a step inside the tasks is not counted
        notes = [note] * len(plan.steps)
    handed = pipelined(plan) if steps else {}  # steps whose plan the next step reads, unmaterialised
    consumed: list = []
    with scope.closing_on_error():
        for step in steps:
            if step.placement == "driver":
                held, rows = run_step(step, len(plan.steps), relations, semiring, plan.environment, progress)
                relations[step.output.id] = _typed(held, spark, plan, semiring)
                notes.append(held.note)
            else:
                described = describe_step(step)  # what progress says and what Spark's UI shows
                with spark_step(spark, f"step {step.index} of {len(plan.steps)}, {described}"):
                    frame, rows = _run_step(step, len(plan.steps), relations, frames, semiring, scope, progress,
                                            described, handed.get(step.index), final=step is steps[-1])
                relations[step.output.id] = frame
                notes.append(frame.note)
            step_rows.append(rows)
            # Consumed intermediates are no longer needed once a step materialised what reads them: released
            # then (inputs are not ours; a pipelined step's plan still reads its inputs' caches).
            consumed += [relations.pop(r) for r in step.inputs]
            if step.index not in handed and rows >= 0:  # (an uncounted answer's plan still reads them)
                for done in consumed:
                    if done.relation.dataframe is not None:
                        scope.release(done.relation.dataframe)  # (held rows own no cache)
                consumed = []
    out_value = VALUE if VALUE not in plan.free else "__value"
    result = relations[plan.result.id]
    if result.relation.held:  # the answer the driver holds: its DataFrame made when first asked for
        table = as_table(result, semiring)
        make = _Answer(spark, table, plan, semiring, out_value)
        return QueryResult(None, plan, step_rows, time.perf_counter() - started, scope, notes, table, make)
    rows = result.relation.renamed({**{v: v for v in plan.free}, out_value: VALUE_COLUMN})
    factor = Factor(relation=rows, variables=tuple(plan.free), semiring=semiring, value=out_value, name="result")
    return QueryResult(factor, plan, step_rows, time.perf_counter() - started, scope, notes)


def _run_step(
    step: Any,
    total: int,
    relations: Mapping[str, Frame],
    inputs_of_query: Mapping[str, Frame],
    semiring: Semiring,
    scope: Scope,
    progress: Optional[Progress],
    description: str,
    reader: Optional[int] = None,
    final: bool = False,
) -> tuple[Frame, int]:
    """One step: join its bag as its strategy says, ⊕-aggregate, drop zeros, persist and count
    (a step onto no variable: collect its one row, or none, into a local relation; a step pipelined into
    step ``reader``: neither, :mod:`faq.insideout.pipelining`; the ``final`` step, the answer: persisted
    but not counted, so the caller's first job computes and caches it, as Spark SQL's one job would).

    Returns the step's output (persisted in ``scope``; its ``note`` says how the join ran) and its rows
    (-1 when not counted).
    """
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
            if out_vars and (reader is not None or final):
                # Not materialised here: the reader's plan reads this one (one Spark query), or the answer is
                # cached by the caller's first job and counted when asked. What the join made for it (a
                # checkpoint, index files) lives as long as the result, not the step.
                df, rows = (df if reader is not None else scope.persist(df)), -1
                scope.take_over(join_scope)
            elif out_vars:
                df = scope.persist(df)
                rows = df.count()
            else:  # at most one row: one job brings it to the driver, which holds it from then on
                held = [row[0] for row in df.collect()]
        if held is not None:
            df, rows = _held_scalar(product.relation.spark_session, held, semiring), len(held)
    if progress:
        progress(StepEvent("done", step.index, total, description, None if rows < 0 else rows,
                           time.perf_counter() - t0, product.note if reader is None else pipelining_note(reader)))
    return Frame(variables=out_vars, note=product.note, relation=Relation.of(df, (*out_vars, VALUE_COLUMN))), rows


@dataclass(frozen=True)
class _Answer:
    """Makes an in-process answer's Factor (a local DataFrame the driver holds) when first asked."""

    spark: "SparkSession"
    table: Table
    plan: Plan
    semiring: Semiring
    value: str

    def __call__(self) -> Factor:
        rows = _held_rows(self.spark, self.table, self.plan, self.semiring, value_name=self.value)
        return Factor(relation=rows, variables=tuple(self.plan.free), semiring=self.semiring, value=self.value,
                      name="result")


def _typed(frame: Frame, spark: "SparkSession", plan: Plan, semiring: Semiring) -> Frame:
    """An in-process step's output typed as the plan's variables, so that the DataFrame a later step on
    the executors makes of it (when it first reads it; never otherwise) has the keys' Spark types."""
    rows = _held_rows(spark, as_table(frame, semiring), plan, semiring, value_name=VALUE_COLUMN,
                      variables=frame.variables)
    return Frame(variables=frame.variables, note=frame.note, relation=rows)


def _held_rows(
    spark: "SparkSession", table: Table, plan: Plan, semiring: Semiring, value_name: str,
    variables: Optional[Sequence[str]] = None,
) -> Relation:
    """A table the driver holds as a Relation (keys typed as the plan's variables, then the value as
    ``value_name``): reading it back runs no job, and Spark gets the rows (:attr:`Relation.frame`)
    only when a job needs them."""
    variables = tuple(plan.free if variables is None else variables)
    known = {"bigint", "double", "boolean", "string"}
    types = {v: plan.variable_types[v] for v in variables if plan.variable_types.get(v) in known}
    columns = {v: np.asarray(table.keys[v]) for v in variables}
    columns[value_name] = as_values(semiring, table.values)
    types[value_name] = semiring.value_type
    return Relation.from_arrays(columns, types, spark)


def _session_of(frames: Mapping[str, Frame]) -> "SparkSession":
    """The session of the first input in Spark, else faq's (the driver holds every input)."""
    for frame in frames.values():
        if not frame.relation.held:
            return frame.relation.spark_session
    from faq.spark import get_session

    return get_session()


def _combined_in_spark(
    product: Frame, step: Any, aggregation: Optional[Aggregation], semiring: Semiring,
    inputs_of_query: Mapping[str, Frame],
) -> "DataFrame":
    """The step's output from the join's product in Spark: ⊕-combined onto the step's variables
    (duplicate keys merged when an input atom reached the output unaggregated), zeros dropped."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns, sql_forms

    out_vars = step.output.variables
    if aggregation is not None and product.combined:  # one row per key already (the partitioned cells)
        df = product.df.select(*out_vars, VALUE_COLUMN)
    elif aggregation is not None:
        # An array ring's partials by its numpy ⊕ (Spark SQL adds arrays a row at a time); else Spark's group-by.
        arrays = combined_in_arrow(product.df, aggregation.keep, aggregation.semiring) if semiring.structured else None
        df = arrays if arrays is not None else aggregation.combine(product.df)
    elif any(r in inputs_of_query for r in step.inputs):
        df = Aggregation(tuple(out_vars), semiring).combine(product.df)
    else:
        df = product.df.select(*out_vars, VALUE_COLUMN)
    forms = sql_forms(semiring)
    if forms is not None:  # one call into Spark (module notes of faq.semirings.spark_backend)
        return df.where(forms.nonzero(sql_name(VALUE_COLUMN)))
    value = F.col(VALUE_COLUMN)
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
    is_zero = np.all(np.asarray(total) == np.asarray(semiring.zero)) if semiring.structured else total == semiring.zero
    return [] if is_zero else [total]


def _held_scalar(spark: "SparkSession", held: list, semiring: Semiring) -> Relation:
    """A step's output onto no variable (``held``: its value, or none) as rows the driver holds: no cache
    to own, reading it runs no job, and a DataFrame is made only if a later step on Spark reads it."""
    return Relation.from_arrays({VALUE_COLUMN: as_values(semiring, held)}, {VALUE_COLUMN: semiring.value_type}, spark)


def evaluate(
    query: Union[FAQ, str],
    factors: Mapping[str, Factor],
    *,
    semiring: Union[str, Semiring, None] = None,
    method: str = "auto",
    order: Optional[list[str]] = None,
    join: str = "auto",
    progress: Optional[Progress] = None,
    plan: Optional[PlanLike] = None,
    task_aggregation: bool = True,
    placement: Optional[str] = None,
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
        Elimination-order search (see :func:`faq.insideout.planner.plan_query`).
    order : list of str, optional
        A fixed elimination order.
    join : str
        Bag-join method (``"auto"`` lets the planner choose per bag).
    progress : callable, optional
        Receives a :class:`StepEvent` as each step starts and ends.
    plan : Plan, dict or path, optional
        Run this plan (made by :func:`~faq.insideout.binding.plan_for` or
        :func:`~faq.insideout.planner.plan_query`, and perhaps inspected; or kept:
        its ``to_dict()``, what ``faq explain --json`` prints, or a file
        holding it, :func:`~faq.insideout.staleness.load_plan`) instead of
        planning; ``method``, ``order``, ``join``, ``task_aggregation`` and
        ``placement`` are then not used.  It must fit: made for this query
        and semiring, these key types, and factor sizes within its margin
        (:mod:`faq.insideout.staleness`), else
        :class:`~faq.errors.StalePlanError`.
    task_aggregation : bool
        Let broadcast joins ⊕-aggregate inside their tasks (False lists
        every binding; the plan records the choice).
    placement : {"auto", "driver", "executors"}, optional
        Where steps run (default: the session's ``spark.faq.placement``,
        "auto": small steps in-process on the driver, others as Spark jobs;
        :func:`faq.placement_policy.choose`).

    Returns
    -------
    QueryResult
        Use it as a context manager, or call ``close()``, to free its cache.
    """
    if isinstance(query, str):
        query = parse_query(query)
    ring = query_semiring(query, factors, semiring)
    if plan is not None:  # a plan given: read (if kept) and checked against the query before any job
        plan = load_plan(plan)
        check_query(plan, query, ring.name)
    # A factor used by several atoms is read once and kept while the query runs; the
    # answer is materialised (or failed) when the scope closes.
    with Scope() as inputs:
        kept = dict(factors)
        spark = next(iter(factors.values())).session if factors else None
        environment = session_environment(spark) if spark is not None and plan is None else None
        if environment is not None and placement is not None:
            environment = replace(environment, placement=checked(placement))
        fetch = environment if plan is None else plan.environment if plan.environment.placement else None
        if fetch is not None and fetch.placement != "executors":
            # Small factors come to the driver in one job each (which also counts them), so that
            # steps over them run in-process (the plan decides; a large factor stays in Spark).
            kept.update(fetched_all({n: kept[n] for n in query.factor_names if n in kept}, fetch))
        for name in _used_twice(query):
            # (A DataFrame the caller cached already is left alone, and not released by us.)
            # A bare scan of local Parquet files is read again as fast as a cache would be: not cached.
            if name in kept and not kept[name].relation.held and not _is_cached(kept[name].df) \
                    and not bare_scan(kept[name].df, kept[name].columns()):
                kept[name] = kept[name].with_df(inputs.persist(kept[name].df))
        frames = _bound(query, kept, ring)  # every check, before any Spark job
        if plan is None:
            # One factor left in Spark, too large to fetch: the whole plan may run in its tasks.
            split = _task_split(query, kept, ring, environment) if fetch is not None else None
            planned = environment if split is None else replace(environment, placement="driver", parallelism=1)
            plan = plan_for(query, kept, semiring=ring, method=method, order=order, join=join,
                            task_aggregation=task_aggregation, environment=planned)
            if split is not None and plan.steps:
                from faq.insideout.in_tasks import plan_in_tasks

                plan = plan_in_tasks(plan, *split)
        else:
            _check_fit(plan, query, kept, ring)
        return execute(plan, frames, ring, progress, spark=spark)


def _task_split(query: FAQ, factors: Mapping[str, Factor], semiring: Semiring, environment: Any
                ) -> Optional[tuple[str, str]]:
    """The atom whose tasks should run the whole plan, and why (:func:`faq.insideout.in_tasks.task_atom`)."""
    from faq.insideout.in_tasks import task_atom

    in_spark = {n for n in query.factor_names if n in factors and not factors[n].relation.held}
    if environment is None or len(in_spark) != 1:
        return None
    return task_atom(query, in_spark, semiring, variable_types(query, factors, semiring), environment)


def _check_fit(plan: Plan, query: FAQ, factors: Mapping[str, Factor], semiring: Semiring) -> None:
    """Refuse a given plan made for other key types, or for sizes beyond its margin (the rows counted
    as cheaply as they are known: :func:`~faq.insideout.staleness.factor_rows`)."""
    check_types(plan, variable_types(query, factors, semiring))
    rows, capped = factor_rows(plan, {n: factors[n] for n in query.factor_names if n in factors})
    check_rows(plan, rows, capped)


def _bound(query: FAQ, factors: Mapping[str, Factor], semiring: Semiring) -> dict[str, Frame]:
    """:func:`~faq.insideout.binding.bind`'s frames, except that an atom over a factor the driver
    holds is a held frame of its table (its DataFrame made only if a step on the executors reads it)."""
    types = variable_types(query, factors, semiring)
    frames: dict[str, Frame] = {}
    for k, atom in enumerate(query.atoms, start=1):
        factor = factors[atom.factor]
        table = held_atom(atom, factor, semiring)
        if table is None:
            frames[f"{atom.factor}#{k}"] = bind_atom(atom, factor, types)
            continue
        made = functools.partial(_bound_frame, atom, factor, types)
        typed = {v: types[v] for v in table.variables if v in types}
        frames[f"{atom.factor}#{k}"] = held_frame(table, types={**typed, VALUE_COLUMN: semiring.value_type},
                                                  session=factor.session, make=made)
    return frames


def _bound_frame(atom: Any, factor: Factor, types: Mapping[str, str]) -> "DataFrame":
    return bind_atom(atom, factor, types).df


def _used_twice(query: FAQ) -> list[str]:
    names = [atom.factor for atom in query.atoms]
    return [name for name in dict.fromkeys(names) if names.count(name) > 1]




def _is_cached(df) -> bool:
    level = df.storageLevel
    return bool(level.useMemory or level.useDisk)
