"""Which steps on the executors hand their output to the next step unmaterialised: one Spark query, as SQL runs.

A step on the executors ends by persisting its output and counting it (one
job, a cache): what the next steps read, and the rows ``explain`` and progress
report.  Where the output's only reader is the very next step, on the
executors too, that job and cache buy nothing -- the next step's Spark plan
can read the step's plan itself, and Spark runs both as one query with its
whole-stage code generation, as it runs the same join written in Spark SQL.
Measured (scratch, ``q(a) := e(a,b), e(b,c)`` on R-MAT 18 from
``spark.read.parquet``, ``placement="executors"``, warm): 2.8-3.3 s with each
step materialised, 1.96 s with the first handed over, Spark SQL 1.0-1.4 s.

So a step is *pipelined* into its reader when all of these hold:

* it and the next step run on the executors, placed there by a session's
  facts (a plan made without them -- no placement reason -- runs as planned,
  each step materialised), and it has output variables (a step onto no
  variable collects its one value to the driver);
* its output is read by the next step alone, once, as an input (an
  indicator reads it again: a second scan of an unmaterialised plan);
* fewer than :data:`MAX_PIPELINED` steps before it were pipelined in a row
  (a long chain of unmaterialised plans is a long lineage for Spark to plan).

The last step is never pipelined: the answer is persisted, filled by the
caller's first job and counted only when asked (``QueryResult.rows``).  A
pipelined step reports no rows (``step_rows`` -1, progress "pipelined into
step k"); ``explain`` prints which (the text of :class:`faq.insideout.plans.Plan`
reads :func:`pipelined` as the executor does).

Examples
--------
>>> from faq.insideout.plans import Relation, Step
>>> def step(i, inputs, out, placement="executors", indicators=()):
...     return Step(i, ("x",), "sum", ("x",), inputs, indicators, Relation(out, ("a",)), 1, None,
...                 placement=placement, placement_reason="requested")
>>> steps = [step(1, ("e#1",), "t1"), step(2, ("t1", "e#2"), "t2"), step(3, ("t2",), "t3")]
>>> pipelined_steps(steps)
{1: 2, 2: 3}
>>> pipelined_steps([step(1, ("e#1",), "t1"), step(2, ("t1",), "t2", placement="driver")])   # read in-process
{}
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

__all__ = ["MAX_PIPELINED", "pipelined_steps", "pipelined", "note"]

#: Steps handed over unmaterialised in a row, at most; the next one is materialised (persisted, counted).
MAX_PIPELINED = 3


def pipelined_steps(steps: Sequence[Any]) -> dict[int, int]:
    """Each pipelined step's index and the index of the step that reads its plan (module notes); ``steps`` are
    :class:`faq.insideout.plans.Step` values (not imported here: the plan's ``explain`` imports this module)."""
    reads = Counter(r for s in steps for r in (*s.inputs, *(i.relation for i in s.indicators)))
    out: dict[int, int] = {}
    run = 0
    for step, reader in zip(steps, steps[1:]):
        handed = (step.placement == "executors" and reader.placement == "executors" and step.output.variables
                  and bool(step.placement_reason and reader.placement_reason)
                  and reads[step.output.id] == 1 and step.output.id in reader.inputs and run < MAX_PIPELINED)
        if handed:
            out[step.index] = reader.index
        run = run + 1 if handed else 0
    return out


def pipelined(plan: Any) -> dict[int, int]:
    """:func:`pipelined_steps` of a plan its executor runs step by step (none for a plan run in pieces or in
    the tasks of one atom: their steps run in-process)."""
    if plan.in_tasks or (plan.pieces is not None and plan.pieces.plans):
        return {}
    return pipelined_steps(plan.steps)


def note(reader: int) -> str:
    """What ``explain`` and progress say of a step pipelined into step ``reader``.

    >>> note(3)
    'pipelined into step 3: not materialised, its rows not counted (one Spark query with it)'
    """
    return f"pipelined into step {reader}: not materialised, its rows not counted (one Spark query with it)"
