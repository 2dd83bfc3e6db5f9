"""Spark inputs brought to the driver within the fetch budget: one Arrow collect each, side by side.

What the driver holds it joins in-process (:mod:`faq.insideout.placement`):
a factor, table or edge list fetched once costs one job, where leaving it in
Spark costs jobs at every step over it.  Every fetch is a collect of at most
``limit + 1`` rows (:func:`faq.relation.collect_within`), so an input too large
costs that collect and never more -- and for a scan of local Parquet files
holding more rows than that, a count instead (:func:`faq.relation.file_rows`);
the budget is the session's ``spark.faq.fetchMemory`` (:func:`faq.settings.fetch_memory`).
Each table is recognised once as a :class:`~faq.relation.Relation` (held or in
Spark, and its rows) and fetched by :meth:`~faq.relation.Relation.fetched`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional, Sequence

from faq.factor import Factor
from faq.relation import Relation, distributed, collect_within
from faq.placement_policy import fetch_limit
from faq.insideout.physical import Environment

__all__ = ["FETCH_THREADS", "fetched_all", "fetched_tables", "fetched"]


#: Fetch jobs in flight at once (:func:`fetched_all`): small jobs mostly wait on scheduling and
#: the round trip, which overlap.
FETCH_THREADS = 4


def fetched_all(factors: Mapping[str, Factor], environment: Environment) -> dict[str, Factor]:
    """:func:`fetched` of every factor within the environment's fetch budget
    (:meth:`~faq.insideout.physical.Environment.fetch_rows`), the jobs run side by side (threads; Spark
    schedules them together): a query over dozens of small tables waits for about one job's time, not dozens."""
    from concurrent.futures import ThreadPoolExecutor

    def one(f: Factor) -> Factor:
        return fetched(f, environment.fetch_rows(len(f.variables) + 1))

    pending = {name: f for name, f in factors.items() if not f.relation.held}
    if len(pending) <= 1:
        return {name: one(f) for name, f in factors.items()}
    with ThreadPoolExecutor(min(FETCH_THREADS, len(pending))) as pool:
        done = dict(zip(pending, pool.map(one, pending.values())))
    return {name: done.get(name, f) for name, f in factors.items()}


def fetched_tables(tables: Mapping[str, Any], columns: Mapping[str, Sequence[str]], spark: Any = None,
                   placement: Optional[str] = None) -> dict[str, Any]:
    """``tables`` with each Spark DataFrame brought to the driver as a pandas DataFrame of ``columns[name]``
    when its copy fits the fetch budget (:func:`fetch_memory`), all fetched side by side (one Arrow
    collect each); others (pandas already, too large, ``placement="executors"``) as they are.

    What the driver then holds, it joins in-process: a table fetched once costs one job, where leaving it
    in Spark costs jobs at every step over it.

    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([(1, 2.0), (2, 3.0)], "k long, x double")
    >>> got = fetched_tables({"t": df}, {"t": ["k", "x"]})
    >>> type(got["t"]).__module__.split(".")[0], got["t"]["x"].tolist()
    ('pandas', [2.0, 3.0])
    """
    from concurrent.futures import ThreadPoolExecutor


    pending = {name: df for name, df in tables.items() if distributed(df) and name in columns}
    if not pending:
        return dict(tables)
    session = spark if spark is not None else next(iter(pending.values())).sparkSession
    budget = fetch_limit(session, placement)
    if budget is None:  # the executors were asked for
        return dict(tables)

    def one(name: str) -> Any:
        relation = Relation.of(pending[name], columns[name]).fetched(budget)
        return relation.to_pandas() if relation.held else relation.dataframe

    with ThreadPoolExecutor(min(FETCH_THREADS, len(pending))) as pool:
        done = dict(zip(pending, pool.map(one, pending)))
    return {name: done.get(name, df) for name, df in tables.items()}


def fetched(factor: Factor, limit: int) -> Factor:
    """``factor`` with its rows held on the driver when it has at most ``limit`` rows (one Spark job,
    an Arrow collect, which also counts it), else as it is; a factor held already is returned as it is.

    The fetched rows live in the new factor's :class:`~faq.relation.Relation` (beside the DataFrame
    they came from): the caller's factor is unchanged, and a later call reads its source afresh.
    """
    from faq.joins.local import Table

    if factor.relation.held:
        return factor
    columns = [*factor.variables, factor.value]
    table = collect_within(factor.df, columns, limit)
    if table is None or any(table.column(c).null_count for c in columns):
        return factor  # large, or with nulls the Spark joins leave out: read by Spark
    arrays = {c: Table.column_array(table.column(c)) for c in columns}
    rows = Relation(tuple(columns), data=arrays, dataframe=factor.df)
    return replace(factor, relation=rows)
