"""A plan's steps run in-process, over numpy tables: no Spark call.

What a step placed on the driver runs (:func:`run_step`: its inputs as
:class:`~faq.joins.table.Table` values, joined by
:func:`faq.joins.local.join_local` as the plan's strategy says,
⊕-aggregated, zeros dropped), the relation it leaves (a
:class:`~faq.joins.frame.Frame` whose rows the driver holds: :func:`held_frame`,
the same form a step on the executors leaves, so nothing downstream asks
which kind of step made it), the progress events every step sends
(:class:`StepEvent`), and a whole plan of such steps (:func:`run_in_process`),
which a Spark task may run too
(:mod:`faq.insideout.in_tasks`).  The executor
(:mod:`faq.insideout.executor`) calls these for its in-process steps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

import numpy as np

from faq.events import ProgressEvent
from faq.insideout.placement import stand_in_ran
from faq.joins import VALUE_COLUMN, Aggregation, Frame
from faq.joins.local import Table, join_local
from faq.semirings import Semiring, get_semiring
from faq.semirings.numpy_backend import as_values

if TYPE_CHECKING:
    from faq.insideout.planner import Plan

__all__ = ["StepEvent", "Progress", "held_frame", "run_step", "run_in_process", "as_table", "describe_step"]


@dataclass(frozen=True)
class StepEvent(ProgressEvent):
    """Progress of :func:`execute`: ``kind`` is ``"start"`` or ``"done"`` (graph jobs send a ``"load"`` first)."""

    kind: str
    step: int
    total: int
    description: str
    rows: Optional[int] = None
    seconds: Optional[float] = None
    note: str = ""  # "done": how the step's join ran (strategy, index size, aggregation)


Progress = Callable[[StepEvent], None]


def held_frame(table: Table, note: str = "", *, types: Optional[Mapping[str, str]] = None, session: Any = None,
               make: Optional[Callable[[], Any]] = None) -> Frame:
    """``table`` as a :class:`~faq.joins.frame.Frame` whose rows the driver holds: an in-process step's
    output, or an input atom over rows the driver holds.  Its numpy columns are the table's (no copy);
    ``types`` (Spark SQL types by column, else by numpy kind), ``session`` and ``make`` say how its
    DataFrame is made when a step on the executors first reads it (:class:`~faq.relation.Relation`).

    >>> t = Table(("a",), {"a": np.array([3, 4])}, np.array([1.5, 2.5]))
    >>> f = held_frame(t, "made in-process")
    >>> f.variables, f.note, f.relation.held, f.relation.dtypes()
    (('a',), 'made in-process', True, [('a', 'bigint'), ('__v', 'double')])
    >>> as_table(f, get_semiring("real")).values is t.values     # read back as it was: no copy
    True
    """
    from faq.relation import Relation

    columns = {v: np.asarray(table.keys[v]) for v in table.variables}
    columns[VALUE_COLUMN] = table.values
    relation = Relation.from_arrays(columns, types, session, make)
    return Frame(variables=tuple(table.variables), note=note, relation=relation)


def run_step(
    step: Any,
    total: int,
    relations: Mapping[str, Union[Frame, Table]],
    semiring: Semiring,
    environment: Any,
    progress: Optional[Progress],
) -> tuple[Frame, int]:
    """One step in-process (:mod:`faq.joins.local`): its inputs as numpy tables (held by the driver,
    or fetched: the plan bounded them), joined, ⊕-aggregated and zeros dropped; no Spark job."""
    description = describe_step(step)
    if progress:
        progress(StepEvent("start", step.index, total, description))
    t0 = time.perf_counter()
    inputs = [as_table(relations[r], semiring) for r in step.inputs]
    indicators = [as_table(relations[i.relation], semiring).projection(i.variables) for i in step.indicators]
    plus = semiring if step.aggregate == semiring.name else get_semiring(step.aggregate) if step.eliminated else None
    aggregation = Aggregation(tuple(step.output.variables), plus) if step.eliminated else None
    table, note = join_local(step.strategy, inputs, indicators, semiring, step.attribute_order, aggregation,
                             threads=max(1, environment.parallelism))
    if tuple(table.variables) != tuple(step.output.variables):  # a final product: the plan's column order
        table = Table(tuple(step.output.variables), table.keys, table.values)
    seconds = time.perf_counter() - t0
    if stand_in_ran(seconds, step.strategy):  # the next joins of this process get the compiled loop
        note += "; the next joins take the compiled loop (this kernel took longer than loading it)"
    if progress:
        progress(StepEvent("done", step.index, total, description, table.rows, seconds, note))
    return held_frame(table, note), table.rows


def run_in_process(plan: "Plan", tables: Mapping[str, Table], semiring: Semiring) -> Table:
    """The answer of ``plan``, every step placed on the driver, over ``tables`` (one per atom id,
    ``factor#k``) as a numpy table: no Spark call at all, so a Spark task may run it.

    Raises :class:`~faq.errors.PlanError` when a step is placed on the executors.

    >>> import numpy as np
    >>> from faq.insideout.planner import plan_query
    >>> from faq.semirings import get_semiring
    >>> from faq.insideout.physical import Environment
    >>> from faq.language import parse_query
    >>> query = parse_query("q(a) := r(a, b), s(b)")
    >>> p = plan_query(query, "counting", sizes={"r": 3, "s": 2}, variable_types={"a": "bigint", "b": "bigint"},
    ...          environment=Environment(placement="driver"), held=["r", "s"])
    >>> r = Table(("a", "b"), {"a": np.array([0, 0, 1]), "b": np.array([5, 6, 6])}, np.array([1, 1, 1]))
    >>> s = Table(("b",), {"b": np.array([5, 6])}, np.array([2, 3]))
    >>> out = run_in_process(p, {"r#1": r, "s#2": s}, get_semiring("counting"))
    >>> out.keys["a"].tolist(), out.values.tolist()
    ([0, 1], [5, 3])
    """
    from faq.errors import PlanError

    relations: dict[str, Union[Table, Frame]] = dict(tables)
    for step in plan.steps:
        if step.placement != "driver":
            raise PlanError(reason=f"step {step.index} is placed on the executors: it cannot run in-process")
        held, _ = run_step(step, len(plan.steps), relations, semiring, plan.environment, None)
        relations[step.output.id] = held
        for r in step.inputs:
            relations.pop(r)
    return as_table(relations[plan.result.id], semiring)


def as_table(relation: Union[Frame, Table], semiring: Semiring) -> Table:
    """A relation as a numpy table: a frame from the rows the driver holds (:attr:`Frame.held`: an
    in-process output's are its table's own), else collected (one Spark job; the plan bounded it)."""
    if isinstance(relation, Table):
        return relation
    copy = relation.held
    if copy is not None:
        return Table(relation.variables, {v: copy[v] for v in relation.variables},
                     as_values(semiring, copy[VALUE_COLUMN]))
    arrow = relation.df.select(*relation.variables, VALUE_COLUMN).toArrow()
    return Table.from_arrow(arrow, relation.variables, semiring)


def describe_step(step: Any) -> str:
    return (
        f"eliminate {', '.join(step.eliminated)} (bag {{{', '.join(step.bag)}}}, "
        f"{len(step.inputs)} relation(s), {len(step.indicators)} indicator(s))"
        if step.eliminated
        else f"multiply {len(step.inputs)} relation(s) on the free variables"
    )
