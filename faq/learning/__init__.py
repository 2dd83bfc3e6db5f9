"""Learning over joins: moments, covariance matrices and linear regression as one FAQ each.

The tables stay as they are; a feature is named ``"table.column"`` and lifted
into the degree-2 cofactor ring in the table that holds it
(:mod:`faq.learning.features`); InsideOut ⊕-aggregates every join variable
away, so the join is never listed; :mod:`faq.learning.models` turns the
aggregate ``(n, Σx, Σxxᵀ)`` into answers.  ``faq.covariance``,
``faq.moments`` and ``faq.linear_regression`` are these functions.

==========================  =====================================================
:func:`covariance`          ``(n, Σx, Σxxᵀ)`` of features over the join, labelled
:func:`moments`             count, mean and variance of one value over the join
:func:`linear_regression`   least squares with an intercept (optional ridge)
``maintained=True``         either kept current as rows arrive and leave
                            (:class:`MaintainedModel`, :mod:`.maintained`)
==========================  =====================================================

Tables that are Spark DataFrames the driver does not hold are priced first
(:mod:`faq.learning.costs`, from their Parquet footers or one counting job):
fetched to the driver and joined in-process, the largest kept in Spark and
joined in its own tasks (:mod:`.in_tasks`), or joined by Spark and summed in
one aggregation (:mod:`.spark_sql`: the flat join, which pays for a
foreign-key join and not where the join is far larger than its tables).  The
cheapest runs; ``explain()`` lists every price and the choice.
``placement="driver"`` fetches without pricing; ``placement="executors"``
chooses between the two plans on the executors.

Examples
--------
>>> import pandas as pd
>>> import faq
>>> orders = pd.DataFrame({"o": [1, 2, 3], "amount": [10.0, 20.0, 30.0]})
>>> items = pd.DataFrame({"o": [1, 1, 2, 3, 3], "qty": [2.0, 2.0, 4.5, 7.0, 7.0]})   # amount = 2 + 4·qty
>>> m = faq.linear_regression("orders(o), items(o)", target="orders.amount", features=["items.qty"],
...                           orders=orders, items=items)
>>> round(m.intercept, 6), round(m.coefficients["items.qty"], 6), m.rows
(2.0, 4.0, 5)
>>> faq.moments("orders(o), items(o)", "orders.amount", orders=orders, items=items).mean   # per joined row
20.0
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Sequence, Union

from faq.events import Progress
from faq.learning.maintained import MaintainedModel
from faq.learning.models import Covariance, LinearModel, Moments, check_ridge, fit_linear, moments_of
from faq.spark_ui import described

__all__ = ["covariance", "moments", "linear_regression", "Covariance", "Moments", "LinearModel", "MaintainedModel"]


@described("covariance")
def covariance(query: str, features: Sequence[str], *, placement: Optional[str] = None, spark: Any = None,
               maintained: bool = False, state: Optional[str] = None, progress: Progress = None,
               path: Optional[str] = None, **tables: Any) -> Union[Covariance, MaintainedModel]:
    """``(n, Σx, Σxxᵀ)`` of ``features`` over the rows of the join ``query`` of ``tables``.

    Parameters
    ----------
    query : str
        The join: ``"lineitem(orderkey, partkey), part(partkey)"`` (a head,
        ``q() := ...``, may be given; every variable is aggregated away).
    features : sequence of str
        ``"table.column"`` names.
    placement : {"auto", "driver", "executors"}, optional
        Where the steps run (default: the session's ``spark.faq.placement``).
    spark : SparkSession, optional
        The session for tables given as pandas (default: the one faq uses).
    maintained : bool
        Return a :class:`MaintainedModel` whose ``apply(table=rows)`` takes
        inserted and deleted rows (:mod:`faq.learning.maintained`).
    state : str, optional
        With ``maintained``: keep the state durable in this directory.
    progress : callable, optional
        Receives the FAQ's step events as each step starts and ends
        (:class:`~faq.insideout.executor.StepEvent`); with ``maintained``,
        each batch's start and end events.
    path : str, optional
        Deprecated name of ``state``.
    **tables
        Each table of the query by name: a pandas or Spark DataFrame whose
        columns named like the atom's variables are its join keys (an Arrow
        table, or another table exporting an Arrow stream such as a polars
        DataFrame, is read as pandas: :mod:`faq.input_kinds`).

    Returns
    -------
    Covariance, or MaintainedModel with ``maintained=True``

    Examples
    --------
    >>> import faq, pandas as pd
    >>> houses = pd.DataFrame({"postcode": [1, 1, 2, 2, 3], "size": [70.0, 90.0, 60.0, 120.0, 80.0],
    ...                        "price": [250.0, 292.0, 251.0, 369.0, 330.0]})
    >>> areas = pd.DataFrame({"postcode": [1, 2, 3], "income": [30.0, 45.0, 60.0]})
    >>> c = faq.covariance("houses(postcode), areas(postcode)", ["houses.size", "areas.income"],
    ...                    houses=houses, areas=areas)
    >>> c.count, c.sums.tolist()               # five rows of the join: one per house
    (5, [420.0, 210.0])
    """
    from faq.inputs import state_directory
    from faq.learning.features import parse_features

    path = state_directory(state, path, "faq.covariance")
    parsed, atoms = _parsed(query)
    chosen = parse_features(features, atoms)
    if maintained:
        return _maintained(parsed, chosen, tables, None, 0.0, placement, spark, path, progress)
    _static_only(path)
    return _aggregate(parsed, chosen, tables, placement, spark, progress)


@described("moments")
def moments(query: str, value: str, *, placement: Optional[str] = None, spark: Any = None,
            progress: Progress = None, **tables: Any) -> Moments:
    """Count, sum and sum of squares of ``value`` (``"table.column"``) over the rows of the join.

    Parameters
    ----------
    query : str
        The join (see :func:`covariance`).
    value : str
        ``"table.column"``.
    placement : {"auto", "driver", "executors"}, optional
    spark : SparkSession, optional
    progress : callable, optional
        Receives the step events (:class:`~faq.insideout.executor.StepEvent`).
    **tables
        Each table of the query by name.

    Returns
    -------
    Moments
        ``.count``, ``.sum``, ``.sum_sq``, ``.mean``, ``.variance(ddof=0)``.

    Examples
    --------
    >>> import faq, pandas as pd
    >>> houses = pd.DataFrame({"postcode": [1, 1, 2, 2, 3], "size": [70.0, 90.0, 60.0, 120.0, 80.0],
    ...                        "price": [250.0, 292.0, 251.0, 369.0, 330.0]})
    >>> areas = pd.DataFrame({"postcode": [1, 2, 3], "income": [30.0, 45.0, 60.0]})
    >>> m = faq.moments("houses(postcode), areas(postcode)", "houses.price", houses=houses, areas=areas)
    >>> m.count, m.mean
    (5, 298.4)
    """
    from faq.learning.features import parse_features

    parsed, atoms = _parsed(query)
    chosen = parse_features([value], atoms)
    aggregate = _aggregate(parsed, chosen, tables, placement, spark, progress)
    return moments_of(str(chosen[0]), [aggregate.count, aggregate.sums[0], aggregate.products[0, 0]],
                      aggregate.plan, aggregate.notes)


@described("linear_regression")
def linear_regression(query: str, target: str, features: Sequence[str], *, ridge: float = 0.0,
                      placement: Optional[str] = None, spark: Any = None, maintained: bool = False,
                      state: Optional[str] = None, progress: Progress = None, path: Optional[str] = None,
                      **tables: Any) -> Union[LinearModel, MaintainedModel]:
    """Least squares of ``target`` on ``features`` with an intercept, over the rows of the join.

    Equal to least squares on the materialised join (every row of the join
    one observation), computed from one cofactor aggregate: the join is
    never listed.  ``ridge`` (λ ≥ 0) penalises the coefficients' squares.

    Parameters
    ----------
    query : str
        The join (see :func:`covariance`).
    target : str
        ``"table.column"`` of the value predicted.
    features : sequence of str
        ``"table.column"`` names.
    ridge : float
        λ ≥ 0; the intercept is not penalised.
    placement : {"auto", "driver", "executors"}, optional
    spark : SparkSession, optional
    maintained : bool
        Return a :class:`MaintainedModel`, kept current by
        ``apply(table=rows)`` (:mod:`faq.learning.maintained`).
    state : str, optional
        With ``maintained``: keep the state durable in this directory.
    progress : callable, optional
        Receives the step events of the aggregate
        (:class:`~faq.insideout.executor.StepEvent`), or a maintained
        model's batch events.
    path : str, optional
        Deprecated name of ``state``.
    **tables
        Each table of the query by name.

    Returns
    -------
    LinearModel, or MaintainedModel with ``maintained=True``
        scikit-learn's shape: ``coef_``, ``intercept_``, ``predict``,
        ``score`` (R²), ``standard_errors()``, ``ridge_path(alphas)``.

    Examples
    --------
    >>> import faq, pandas as pd
    >>> houses = pd.DataFrame({"postcode": [1, 1, 2, 2, 3], "size": [70.0, 90.0, 60.0, 120.0, 80.0],
    ...                        "price": [250.0, 292.0, 251.0, 369.0, 330.0]})
    >>> areas = pd.DataFrame({"postcode": [1, 2, 3], "income": [30.0, 45.0, 60.0]})
    >>> model = faq.linear_regression("houses(postcode), areas(postcode)", "houses.price",
    ...                               ["houses.size", "areas.income"], houses=houses, areas=areas)
    >>> model.coef_.round(3).tolist(), round(model.intercept_, 3), round(model.score(), 4)
    ([1.924, 1.874], 58.054, 0.9889)
    """
    from faq.inputs import state_directory
    from faq.learning.features import parse_features

    path = state_directory(state, path, "faq.linear_regression")
    check_ridge(ridge)  # before any aggregate is computed
    parsed, atoms = _parsed(query)
    listed = [features] if isinstance(features, str) else list(features)
    chosen = parse_features([*listed, target], atoms, roles=["features"] * len(listed) + ["target"])
    if maintained:
        return _maintained(parsed, chosen, tables, str(chosen[-1]), ridge, placement, spark, path, progress)
    _static_only(path)
    return fit_linear(_aggregate(parsed, chosen, tables, placement, spark, progress), str(chosen[-1]), ridge)


def _maintained(parsed: Any, features: Sequence[Any], tables: dict, target: Optional[str], ridge: float,
                placement: Optional[str], spark: Any, path: Optional[str], progress: Progress) -> MaintainedModel:
    from faq.learning.maintained import maintain_covariance

    return maintain_covariance(parsed, features, _held_as_pandas(tables), target=target, ridge=ridge, path=path,
                               progress=progress, placement=placement or "auto", spark=spark)


def _held_as_pandas(tables: dict) -> dict:
    """The tables with each Arrow one (any Arrow stream: :mod:`faq.input_kinds`) as the pandas frame the
    driver's learning steps read; Spark and pandas frames as given.

    >>> import pyarrow as pa
    >>> type(_held_as_pandas({"l": pa.table({"o": [1]})})["l"]).__name__
    'DataFrame'
    """
    from faq.input_kinds import as_pandas

    return {name: as_pandas(table, f"table {name!r}") for name, table in tables.items()}


def _static_only(path: Optional[str]) -> None:
    """``path`` belongs to a maintained model: refused without ``maintained=True``."""
    from faq.errors import InvalidArgumentError

    if path is not None:
        raise InvalidArgumentError(argument="state", value=path, reason="only a maintained model "
                                   "(maintained=True) keeps a state")


def _parsed(query: str) -> tuple[Any, dict[str, tuple[str, ...]]]:
    from faq.language import parse_query

    text = query if (":=" in query or ":-" in query) else f"count() := {query}"
    parsed = parse_query(text)
    atoms: dict[str, tuple[str, ...]] = {}
    for atom in parsed.atoms:
        atoms.setdefault(atom.factor, atom.variables)
    return parsed, atoms


def _aggregate(parsed: Any, features: Sequence[Any], tables: dict, placement: Optional[str],
               spark: Any, progress: Progress = None) -> Covariance:
    from faq.insideout.fetching import fetched_tables
    from faq.insideout.executor import evaluate
    from faq.learning.features import lifted_factors
    from faq.learning.in_tasks import aggregate_in_tasks, choose
    from faq.semirings import cofactor

    ring = cofactor(len(features))
    tables = _held_as_pandas(tables)
    needed = {atom.factor: [*atom.variables] for atom in parsed.atoms}
    for feature in features:
        needed.setdefault(feature.table, []).append(feature.column)
    # Spark inputs the driver does not hold: the plans are priced before any runs (faq.learning.costs).
    priced = _priced(parsed, features, tables, needed, spark, placement)
    lines: tuple[str, ...] = priced.lines if priced else ()
    if priced and priced.plan == "spark-sql":
        return _flat(parsed, features, tables, priced.rows, lines, progress)
    # Spark DataFrames that fit come to the driver first (one Arrow collect each, side by side): lifted
    # there, the aggregate runs in-process as it does for pandas tables.
    in_tasks = priced is not None and priced.plan == "in-tasks"
    if not in_tasks:
        tables = fetched_tables(tables, needed, spark, placement)
    # A table still in Spark (too large to fetch, or placement="executors") may stay there, lifted and
    # joined in its own tasks against the others shipped to every machine (faq.learning.in_tasks).
    forced = (priced.big, priced.stays) if in_tasks and priced and priced.big else None
    split = choose(parsed, tables, needed, spark, placement, forced)
    if split is None and in_tasks:  # it could not split after all (others too large to ship): as before
        split = choose(parsed, fetched_tables(tables, needed, spark, placement), needed, spark, placement)
    if split is not None:
        big, tables, reason = split
        value, plan, notes = aggregate_in_tasks(parsed, features, ring, tables, big, reason, spark, progress)
        count, sums, products = ring.unpack(value)
        return Covariance(tuple(str(f) for f in features), float(count), sums, products, plan, lines + notes)
    star = _star(parsed, features, tables, priced.rows if priced else None, progress)
    if star is not None:  # a foreign-key star held by the driver: looked up and summed flat (faq.learning.star)
        count, sums, products, plan, notes = star
        return Covariance(tuple(str(f) for f in features), float(count), sums, products, plan, lines + notes)
    query, factors, lifted = lifted_factors(parsed, features, ring, tables, spark)
    with evaluate(query, factors, semiring=ring, placement=placement, progress=progress) as result:
        value = result.scalar()
        plan = result.plan
        notes = tuple(item.describe(ring.width) for item in lifted) + tuple(n for n in result.notes if n)
    if value is None:  # an empty join: the ring's zero
        value = [0.0] * ring.width
    count, sums, products = ring.unpack(value)
    return Covariance(tuple(str(f) for f in features), float(count), sums, products, plan, lines + notes)


def _star(parsed: Any, features: Sequence[Any], tables: dict, rows: Optional[dict], progress: Progress) -> Any:
    """:func:`faq.learning.star.star_aggregate`, its one step reported to ``progress`` once the keys allowed it
    (a star that falls back to the factorized plan reports nothing: that plan reports its own steps)."""
    import time

    from faq.insideout.in_process import StepEvent
    from faq.learning.star import star_aggregate

    description = "foreign-key lookups and one matrix product, in-process"
    t0 = time.perf_counter()

    def started(plan: Any) -> None:
        if progress is not None:
            progress(StepEvent("start", 1, 1, description))

    found = star_aggregate(parsed, features, tables, rows, started)
    if found is not None and progress is not None:
        progress(StepEvent("done", 1, 1, description, found[0], time.perf_counter() - t0, str(found[3])))
    return found


def _flat(parsed: Any, features: Sequence[Any], tables: dict, rows: dict, lines: tuple[str, ...],
          progress: Progress) -> Covariance:
    """The aggregate by Spark SQL operators: the flat join and one aggregation (faq.learning.spark_sql)."""
    import time

    from faq.insideout.in_process import StepEvent
    from faq.learning.spark_sql import flat_aggregate

    description = "join and aggregate by Spark SQL"
    if progress:
        progress(StepEvent("start", 1, 1, description))
    t0 = time.perf_counter()
    count, sums, products, plan = flat_aggregate(parsed, features, tables, rows)
    if progress:
        progress(StepEvent("done", 1, 1, description, 1, time.perf_counter() - t0, str(plan)))
    return Covariance(tuple(str(f) for f in features), count, sums, products, plan, lines)


def _priced(parsed: Any, features: Sequence[Any], tables: dict, needed: dict, spark: Any,
            placement: Optional[str]) -> Optional["_Priced"]:
    """The plan chosen by price (:mod:`faq.learning.costs`), or None when nothing is priced: a table is
    pandas or held by the driver, or ``placement="driver"``.

    The sizes come from the Parquet files' footers where the tables read local Parquet, else from one
    counting job (:func:`faq.learning.spark_sql.table_statistics`); the join is never run to price it.
    """
    from dataclasses import replace

    from faq.calibration import current as current_calibration
    from faq.calibration import describe as describe_calibration
    from faq.insideout.binding import session_environment
    from faq.learning import costs
    from faq.learning.spark_sql import atom_labels, table_statistics
    from faq.relation import distributed
    from faq.settings import placement_setting

    names = list(needed)
    if not names or not all(n in tables and distributed(tables[n]) for n in names):
        return None
    session = spark if spark is not None else tables[names[0]].sparkSession
    chosen = placement or placement_setting(session)
    if chosen == "driver":
        return None
    environment = session_environment(session)
    rows, distinct = table_statistics(parsed, tables)
    sizes = _sizes(parsed, features, needed, rows, distinct, environment, session, tables)
    labels = atom_labels(parsed)
    sizes = replace(sizes, join_rows=costs.join_rows([(labels[k], a.variables) for k, a in enumerate(parsed.atoms)],
                                                     {labels[k]: rows[a.factor] for k, a in enumerate(parsed.atoms)},
                                                     distinct))
    allowed: Optional[list[str]] = ["in-tasks", "spark-sql"] if chosen == "executors" else None
    if sizes.big is not None and environment.in_tasks == "always":  # spark.faq.inTasks=always: in tasks
        allowed = ["in-tasks"]
    calibration = current_calibration()
    sizes = replace(sizes, scales=calibration.scales())
    prices = costs.priced(sizes)
    best = costs.chosen(prices, allowed)
    stays = ("placement=executors" if chosen == "executors" else "too large to fetch to the driver"
             if math.isinf(prices[0].seconds) else "cheaper than fetching it, as priced")
    lines = (*costs.price_lines(prices, best, _why(chosen, allowed)), f"priced with {describe_calibration(calibration)}")
    return _Priced(best.plan, lines, rows, sizes.big, stays)


class _Priced(NamedTuple):
    """The choice of :func:`_priced`."""

    plan: str  # "driver", "in-tasks" or "spark-sql"
    lines: tuple[str, ...]  # every plan's price and the choice, for the notes
    rows: dict  # rows per table
    big: Optional[str]  # the table the in-tasks plan keeps in Spark
    stays: str  # why, as the plan says it


def _why(placement: str, allowed: Optional[Sequence[str]]) -> str:
    if allowed == ["in-tasks"]:
        return "spark.faq.inTasks=always"
    return "placement=executors: the cheaper of the plans on the executors" if placement == "executors" else "cheapest"


def _sizes(parsed: Any, features: Sequence[Any], needed: dict, rows: dict, distinct: dict, environment: Any,
           session: Any, frames: dict) -> Any:
    """The sizes the plans are priced by (:class:`faq.learning.costs.Sizes`; the join's rows not yet
    estimated): per table its rows, columns read, features lifted, keys on its shared variables, whether
    the driver may fetch it and whether it reads it from its files; the largest table as the in-tasks
    plan's, when that plan may keep it in Spark; the fact table of a foreign-key star (:func:`_star_fact`)."""
    from faq.relation import BYTES_PER_COLUMN
    from faq.learning import costs
    from faq.learning.spark_sql import atom_labels
    from faq.parquet_scan import bare_scan
    from faq.relation import fetch_rows
    from faq.settings import fetch_memory

    keys: dict[str, int] = {}
    for label, atom in zip(atom_labels(parsed), parsed.atoms):  # the first atom of a table lifts it
        spans = [d for (at, _), d in distinct.items() if at == label]
        keys.setdefault(atom.factor, min(rows[atom.factor], math.prod(spans)) if spans else 1)

    names = list(needed)
    budget = fetch_memory(session)
    columns = {n: len(dict.fromkeys(needed[n])) for n in names}
    big = max(names, key=lambda n: (rows[n], n))
    atoms = [a for a in parsed.atoms if a.factor == big]
    # As faq.learning.in_tasks.choose: one atom with distinct variables, and the others fit an index.
    others_fit = all(rows[n] <= environment.index_memory // max(1, columns[n] * BYTES_PER_COLUMN)
                     for n in names if n != big)
    splits = (len(atoms) == 1 and len(set(atoms[0].variables)) == len(atoms[0].variables) and others_fit
              and environment.in_tasks != "never")
    # files: a bare scan of local Parquet files, which the driver (when it fits) or a task (its share) reads.
    tables = tuple(costs.TableSize(n, rows[n], columns[n], sum(f.table == n for f in features), keys.get(n),
                                   rows[n] <= fetch_rows(budget, columns[n]),
                                   bare_scan(frames[n], list(dict.fromkeys(needed[n]))))
                   for n in names)
    return costs.Sizes(tables, float("nan"), len(features), max(1, environment.parallelism), big if splits else None,
                       _star_fact(parsed, rows, distinct))


def _star_fact(parsed: Any, rows: dict, distinct: dict) -> Optional[str]:
    """The fact table when the join is a foreign-key star (:func:`faq.learning.star.star_plan`) whose
    looked-up tables each hold their one key variable (a variable shared with the tables before) about once
    per row (its distinct values, from the
    footers' spans or counted, at least 95% of its rows); else None.  The run checks the keys exactly
    and joins factorized if one is held twice: the price is a guess, the answer is not."""
    from faq.learning.spark_sql import atom_labels
    from faq.learning.star import star_plan

    plan = star_plan(parsed, rows)
    if plan is None:
        return None
    labels = atom_labels(parsed)
    for k, key in zip(plan.positions[1:], plan.keys):
        if len(key) != 1 or distinct.get((labels[k], key[0]), 0) < 0.95 * rows[parsed.atoms[k].factor]:
            return None
    return parsed.atoms[plan.positions[0]].factor
