"""``faq.truss``: every edge's trussness, once -- on the driver (:mod:`faq.graphs.truss`) or, for a Spark DataFrame
too large to fetch, on the executors (:mod:`faq.graphs.truss_spark`) -- or kept current
(:mod:`faq.graphs.maintained_truss`).

Examples
--------
>>> t = truss([(1, 2), (2, 3), (1, 3)], maintained=True)
>>> t.apply([(3, 4, 1)]).info["inserted"], t.counts
(1, {2: 1, 3: 3})
>>> truss([(1, 2), (2, 3), (1, 3)]).counts
{3: 3}
"""

from __future__ import annotations

import os
from typing import Any, Optional

from faq.events import Progress
from faq.spark_ui import described

__all__ = ["truss", "placed"]

SRC, DST = "src", "dst"


@described("truss")
def truss(edges: Any, k: Optional[int] = None, *, progress: Progress = None,
          maintained: bool = False, state: Optional[str] = None, work_limit: Optional[int] = None,
          placement: Optional[str] = None, path: Optional[str] = None) -> Any:
    """Every edge's trussness; with ``maintained=True``, kept current under batches of edge changes.

    Parameters
    ----------
    edges : path, Spark or pandas DataFrame (``src``, ``dst``), Arrow table, Factor or tuples
        The graph; read or collected on the driver.
    k : int, optional
        At least 2: the k-truss's edges are what ``table()`` gives by default.
    progress : callable, optional
        Receives a :class:`~faq.events.NoteEvent` after each phase (maintained:
        a :class:`~faq.incremental.change.BatchEvent` per batch).
    maintained : bool
        Return a :class:`~faq.graphs.maintained_truss.MaintainedTruss` that
        keeps every trussness exact under ``apply(changes)`` and ``stream(...)``.
    state : str, optional
        With ``maintained``: keep the state durable in this new or empty directory.
    work_limit : int, optional
        With ``maintained``: the work after which a batch's repair stops and it is recomputed instead.
    placement : {"auto", "driver", "executors"}, optional
        Where a Spark DataFrame's truss runs: "driver" collects the edges once
        and peels them in compiled loops; "executors" computes it in Spark
        (:mod:`faq.graphs.truss_spark`); "auto" (default, else
        ``spark.faq.placement``) the driver when the edges fit its fetch budget
        (``spark.faq.fetchMemory``), else the executors.  Other inputs (paths,
        pandas, Arrow, tuples) and maintained trusses run on the driver.
    path : str, optional
        Deprecated name of ``state``.

    Returns
    -------
    TrussResult (its ``table()`` a Spark DataFrame when the edges were one), SparkTrussResult when the
    executors ran it, or MaintainedTruss with ``maintained=True``; ``explain()`` says where it ran and why.

    Examples
    --------
    >>> import faq
    >>> result = faq.truss([(1, 2), (2, 3), (1, 3), (3, 4)])   # one triangle and a pendant edge
    >>> result.counts, result.max_k
    ({2: 1, 3: 3}, 3)
    >>> with faq.truss([(1, 2), (2, 3)], maintained=True) as kept:
    ...     _ = kept.apply([(1, 3, 1)])                        # closing the triangle
    ...     kept.max_k
    3
    """
    from faq.errors import InvalidArgumentError
    from faq.inputs import state_directory
    from faq.placement_policy import EXECUTORS, checked

    if placement is not None:
        checked(placement)
    path = state_directory(state, path, "faq.truss")
    if maintained:
        if placement == EXECUTORS:
            raise InvalidArgumentError(argument="placement", value=placement,
                                       reason="a maintained truss runs on the driver")
        from faq.graphs.maintained_truss import MaintainedTruss

        return MaintainedTruss(edges, k, progress=progress, path=path, work_limit=work_limit)
    for name, value in (("state", path), ("work_limit", work_limit)):
        if value is not None:
            raise InvalidArgumentError(argument=name, value=value, reason="applies to a maintained truss only "
                                                                          "(maintained=True)")
    from faq.graphs.truss import checked_k

    k = checked_k(k)  # refused before anything is read or fetched
    return _run(edges, k, progress, placement)


def _run(edges: Any, k: Optional[int], progress: Progress, placement: Optional[str]) -> Any:
    """The truss where :func:`placed` puts it, with where and why in its plan."""
    import time

    from faq.graphs.truss import truss_decomposition
    from faq.placement_policy import EXECUTORS

    started = time.perf_counter()
    where, fetched = placed(edges, placement)
    fetch_seconds = time.perf_counter() - started
    if where.where == EXECUTORS:
        from faq.graphs.truss_spark import spark_truss

        return spark_truss(edges, k, progress=progress, reason=where.reason)
    result = truss_decomposition(edges if fetched is None else fetched, k, progress=progress)
    if fetched is not None:  # the edges' own session: the table is a Spark DataFrame as they were
        result.session = edges.sparkSession
        result.seconds = {"fetch": fetch_seconds, **result.seconds}
    result.reason = where.reason
    return result


def placed(edges: Any, placement: Optional[str] = None) -> tuple[Any, Any]:
    """Where the truss of ``edges`` runs, and why (a :class:`~faq.placement_policy.Placement`); and the edges
    the driver fetched to decide (Arrow or pandas), else None.

    Only a Spark DataFrame whose rows the driver does not hold may run on the executors: when asked for
    (``placement=``, else ``spark.faq.placement``), or, on "auto", when its ``src`` and ``dst`` do not fit the
    fetch budget (``spark.faq.fetchMemory``; ``spark.faq.localRows`` when set).  Fitting is learnt by the
    fetch itself (:meth:`faq.relation.Relation.fetched`: one collect of at most the rows that fit, plus one;
    a count first when Parquet footers say the files hold more): the driver then runs on those rows.

    >>> placed([(1, 2)])[0]
    Placement(where='driver', reason='the edges are a list, not a Spark DataFrame')
    """
    from faq.placement_policy import AUTO, DRIVER, EXECUTORS, Placement, fetch_limit
    from faq.settings import placement_setting
    from faq.spark import is_dataframe

    if not is_dataframe(edges):
        kind = "path" if isinstance(edges, (str, os.PathLike)) else type(edges).__name__
        why = f"the edges are a {kind}, not a Spark DataFrame"
        asked = placement == EXECUTORS
        return Placement(DRIVER, f"{why}{' (executors asked for)' if asked else ''}"), None
    from faq.relation import Relation

    spark = edges.sparkSession
    asked = placement or placement_setting(spark)  # placement= wins (faq.spark_ui.described)
    by = f"placement={asked!r}" if placement else f"spark.faq.placement={asked}"
    if asked != AUTO:
        return Placement(asked, f"requested ({by})"), None
    relation = Relation.of(edges, [SRC, DST])
    if relation.held:
        return Placement(DRIVER, "the edges are held on the driver"), None
    if not _fetchable(edges):
        return Placement(DRIVER, "the edges are not integer src, dst columns (as the driver reads them)"), None
    limit = _fetch_bytes(spark, fetch_limit(spark))
    fetched = relation.fetched(limit)
    if fetched.held:
        rows = fetched.data if hasattr(fetched.data, "column_names") else fetched.to_pandas()  # Arrow, else pandas
        return Placement(DRIVER, f"{fetched.rows:,} edge rows fetched within the fetch budget "
                                 f"{_bytes(limit)} (spark.faq.fetchMemory)"), rows
    return Placement(EXECUTORS, _too_large(relation, limit)), None


def _fetchable(edges: Any) -> bool:
    """True when ``edges`` has one integer ``src`` and one ``dst``: what the driver's fetch reads."""
    from faq.insideout.physical import INTEGRAL_TYPES

    kinds = edges.dtypes
    return all(sum(1 for name, kind in kinds if name == c and kind in INTEGRAL_TYPES) == 1 and
               sum(1 for name, _ in kinds if name == c) == 1 for c in (SRC, DST))


def _fetch_bytes(spark: Any, limit: int) -> int:
    """The fetch budget in bytes, within ``spark.faq.localRows`` rows of two columns when that is set."""
    from faq.relation import BYTES_PER_COLUMN
    from faq.settings import local_rows

    rows = local_rows(spark)
    return min(limit, rows * 2 * BYTES_PER_COLUMN) if rows else limit


def _too_large(relation: Any, limit: int) -> str:
    """Why the executors run it: the edges (rows, or at least the rows the fetch stopped at) exceed the budget."""
    import math

    from faq.relation import fetch_rows

    rows = relation.rows
    known = f"{rows:,.0f} rows ({relation.source}" if math.isfinite(rows) else \
        f"more than {fetch_rows(limit, 2):,} rows (the fetch stopped there"
    return f"the edges, {known}), exceed the fetch budget {_bytes(limit)} (spark.faq.fetchMemory)"


def _bytes(n: float) -> str:
    from faq.hypergraph.shares import format_bytes

    return format_bytes(n)
