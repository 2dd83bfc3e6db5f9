"""Where work runs: one policy for one-shot steps, maintained indexes, fixpoints and models.

Every piece of faq's work runs either in-process on the driver (no Spark
job; numpy and the compiled loop) or on the executors (Spark jobs): a
one-shot query's step (:func:`faq.insideout.placement.place_steps`), a
maintained query's or model's indexes (:mod:`faq.incremental.maintained`),
a fixpoint's edges and answer (:mod:`faq.recursive.maintained`,
:mod:`faq.recursive.placed`).  They all decide with :func:`choose`, in this
order:

1. work with no numpy form (a semiring without ``numpy_add=``/``numpy_mul=``)
   runs on the executors, whatever was asked;
2. a placement asked for (the argument ``placement=``, else
   ``spark.faq.placement``) is taken;
3. work of unknown size runs on the executors;
4. an input the driver does not hold already must be worth moving: its copy
   within the fetch budget (one Arrow collect; ``spark.faq.fetchMemory``),
   and its rows within ``spark.faq.localRows`` where that is set;
5. the estimated footprint (an index, the joined rows) must fit the driver's
   budget (``spark.faq.localMemory``, or a maintained object's ``budget=``);

otherwise the driver.  The answer is a :class:`Placement`: where, and the
reason :meth:`explain` methods print.

Examples
--------
A maintained object's indexes (:func:`for_indexes`):

>>> for_indexes("auto", 3 << 20, 1 << 30)
Placement(where='driver', reason='indexes 3 MiB within the driver budget of 1 GiB')
>>> for_indexes("auto", 3 << 30, 1 << 30).reason
'indexes 3 GiB exceed the driver budget of 1 GiB'
>>> for_indexes("executors", 3 << 20, 1 << 30).reason
'requested; indexes 3 MiB'
>>> for_indexes("driver", 3 << 20, 1 << 30, no_numpy="semiring 'log' has no numpy form")
Placement(where='executors', reason="semiring 'log' has no numpy form")
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Sequence

from faq.hypergraph.shares import BYTES_PER_INDEX_ROW, format_bytes
from faq.relation import BYTES_PER_COLUMN  # one price of a fetched column: the Relation's
from faq.settings import (
    AUTO,
    DRIVER,
    EXECUTORS,
    PLACEMENTS,
    checked,
    driver_index_memory,
    fetch_memory,
    index_build,
    index_memory,
    placement_setting,
    requested,
    requested_placement,
)

__all__ = ["requested", "requested_placement", "PLACEMENTS", "AUTO", "DRIVER", "EXECUTORS", "BYTES_PER_COLUMN", "Input", "Placement", "checked",
           "choose", "for_indexes", "fetch_limit", "index_fetch_limit"]



class Input(NamedTuple):
    """One input of a piece of work, as :func:`choose` sees it.

    ``rows`` is its (estimated) rows, ``inf`` when unknown; ``held`` says the
    driver holds its rows already (an input it loaded, or an earlier
    in-process step's output); ``columns`` its variables and value (what a
    fetch moves, :data:`BYTES_PER_COLUMN` each a row).
    """

    rows: float
    held: bool
    columns: int = 3

    @property
    def bytes(self) -> float:
        """What fetching it moves (:data:`BYTES_PER_COLUMN` a column a row), as :attr:`faq.relation.Relation.bytes`."""
        return self.rows * self.columns * BYTES_PER_COLUMN


class Placement(NamedTuple):
    """Where a piece of work runs (``"driver"`` or ``"executors"``) and why."""

    where: str
    reason: str


def choose(
    requested: str,
    footprint: Optional[float],
    budget: float,
    *,
    inputs: Sequence[Input] = (),
    fetch_budget: float = math.inf,
    local_rows: int = 0,
    no_numpy: str = "",
    what: str = "est.",
    budget_name: str = "the in-process memory",
    budget_setting: str = "",
    requested_by: str = "requested",
) -> Placement:
    """Where a piece of work runs, by the rules of the module notes, and why.

    Parameters
    ----------
    requested : {"auto", "driver", "executors", ""}
        What was asked (checked with :func:`checked`); ``""``: nothing is
        known of the session (a plan made without one), the executors, as
        every step ran before placement existed.
    footprint : float or None
        Estimated bytes the work holds on the driver (None: unknown).
    budget : float
        Bytes it may hold there.
    inputs : sequence of Input or :class:`~faq.relation.Relation`
        What it reads (``rows``, ``bytes``), and whether the driver holds it
        (``held``; rule 4).
    fetch_budget, local_rows
        Rule 4's limits (``spark.faq.fetchMemory``, ``spark.faq.localRows``;
        0: no row cap).
    no_numpy : str
        Why the work has no numpy form ("" when it has one).
    what, budget_name, budget_setting, requested_by
        Words of the reason: what the footprint is, what the budget is and
        the setting that sets it, who asked for a placement.

    Examples
    --------
    A one-shot step's inputs (rule 4) and footprint (rule 5):

    >>> GiB = 1 << 30
    >>> choose("auto", 8e3, GiB, inputs=[Input(50, False), Input(80, False)], fetch_budget=24_000)
    Placement(where='driver', reason='inputs of 130 rows, est. 7.81 KiB within the in-process memory 1 GiB')
    >>> choose("auto", 6.4e7, GiB, inputs=[Input(2e6, True)]).reason
    'inputs of 2e+06 rows held on the driver, est. 61 MiB within the in-process memory 1 GiB'
    >>> choose("auto", 1e5, GiB, inputs=[Input(5000, False)], fetch_budget=24_000).reason
    'an input of 5e+03 rows (est. 117 KiB) is not on the driver and exceeds the fetch budget 23.4 KiB (spark.faq.fetchMemory)'
    >>> choose("auto", 1e5, GiB, inputs=[Input(500, False)], local_rows=100).reason
    'an input of 500 rows is not on the driver and exceeds spark.faq.localRows=100'
    >>> choose("auto", 1.3e10, GiB, inputs=[Input(2e8, True)], budget_setting="spark.faq.localMemory").reason
    'est. 12.1 GiB exceeds the in-process memory 1 GiB (spark.faq.localMemory)'
    >>> choose("auto", None, GiB)
    Placement(where='executors', reason='sizes unknown')
    >>> choose("executors", None, GiB, requested_by="spark.faq.placement=executors")
    Placement(where='executors', reason='spark.faq.placement=executors')
    >>> choose("", 1e3, GiB)                      # no session's facts: the executors, as before placement
    Placement(where='executors', reason='')
    >>> choose("driver", 5e9, GiB, what="indexes").reason   # asked for: taken, sizes said
    'requested; indexes 4.66 GiB, budget 1 GiB'
    """
    if requested:
        checked(requested)
    if no_numpy:
        return Placement(EXECUTORS, no_numpy)
    if requested == "":
        return Placement(EXECUTORS, "")
    sized = footprint is not None and math.isfinite(footprint)
    if requested != AUTO:
        if not sized:
            return Placement(requested, requested_by)
        also = f", budget {format_bytes(budget)}" if requested == DRIVER else ""
        return Placement(requested, f"{requested_by}; {what} {format_bytes(footprint)}{also}")
    if not sized or any(not math.isfinite(i.rows) for i in inputs):
        return Placement(EXECUTORS, "sizes unknown")
    for i in inputs:
        if i.held:
            continue
        if local_rows and i.rows > local_rows:
            return Placement(EXECUTORS, f"an input of {i.rows:.3g} rows is not on the driver and exceeds "
                                        f"spark.faq.localRows={local_rows}")
        copy = i.bytes
        if copy > fetch_budget:
            return Placement(EXECUTORS, f"an input of {i.rows:.3g} rows (est. {format_bytes(copy)}) is not on the "
                                        f"driver and exceeds the fetch budget {format_bytes(fetch_budget)} "
                                        f"(spark.faq.fetchMemory)")
    if footprint > budget:
        plural = what.endswith("s")  # "indexes exceed", "est. ... exceeds"
        verb = "exceed" if plural else "exceeds"
        setting = f" ({budget_setting})" if budget_setting else ""
        return Placement(EXECUTORS, f"{what} {format_bytes(footprint)} {verb} {budget_name} "
                                    f"{format_bytes(budget)}{setting}")
    head = ""
    if inputs:
        held = " held on the driver" if all(i.held for i in inputs) else ""
        head = f"inputs of {sum(i.rows for i in inputs):.3g} rows{held}, "
    return Placement(DRIVER, f"{head}{what} {format_bytes(footprint)} within {budget_name} {format_bytes(budget)}")



def fetch_limit(spark: Any, placement: Optional[str] = None) -> Optional[int]:
    """Bytes of an input the driver may fetch to run its work in-process (rule 4), or None when no
    input may come: the executors were asked for (``placement=``, else ``spark.faq.placement``).

    Every fetch to the driver -- factors, tables, edges -- asks this, so a forced placement is
    honoured in one place.

    >>> from faq.spark import session_for_driver_data
    >>> spark = session_for_driver_data()
    >>> fetch_limit(spark, "executors") is None, fetch_limit(spark, "driver") == fetch_memory(spark)
    (True, True)
    """
    if (placement or placement_setting(spark)) == EXECUTORS:
        return None
    return fetch_memory(spark)


def index_fetch_limit(spark: Any, columns: int = 2) -> Optional[int]:
    """Bytes of a relation's ``columns`` integer columns the driver may fetch for a broadcast index it
    builds itself, when the executors were asked for (:func:`fetch_limit` is None); None when indexes
    are built on the executors (``spark.faq.indexBuild=executors``).

    The executors' tasks of a broadcast join read an index the driver builds from every row of the
    relation (:func:`faq.joins.broadcast.index_on_driver`): the rows come to the driver either way.
    Up to the index both budgets allow -- the driver's (``spark.faq.driverIndexMemory``) and an
    executor's (``spark.faq.indexMemory``), at :data:`~faq.hypergraph.shares.BYTES_PER_INDEX_ROW`
    a row -- they may come before Spark has cleaned them (duplicates, self-loops, orientation), to
    be cleaned in numpy where they arrive, rather than after Spark jobs that shuffle every row.

    >>> from faq.spark import session_for_driver_data
    >>> spark = session_for_driver_data()
    >>> index_fetch_limit(spark) > 0
    True
    """
    if index_build(spark) == EXECUTORS:
        return None
    rows = min(driver_index_memory(spark), index_memory(spark)) / BYTES_PER_INDEX_ROW
    return int(rows * columns * BYTES_PER_COLUMN)


def for_indexes(requested: Optional[str], index_bytes: float, budget: float, no_numpy: str = "") -> Placement:
    """Where a maintained object's indexes live: :func:`choose` with their estimated bytes.

    A maintained query, model or fixpoint reads no input it must fetch: its
    indexes are built from the rows once, on the driver or the executors.
    ``requested=None`` is ``"auto"`` (no ``placement=`` given).
    """
    return choose(AUTO if requested is None else requested, index_bytes, budget, no_numpy=no_numpy, what="indexes",
                  budget_name="the driver budget of")
