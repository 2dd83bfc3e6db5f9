"""Run an InsideOut :class:`~faq.insideout.planner.Plan` on Spark.

:func:`evaluate` is the entry point: it checks the query against the factors
(:func:`bind`), gathers sizes, plans, and runs the plan.  Each step's output is
materialised (persisted and counted) before the next starts, which gives
honest progress reports and measured sizes; every cache is released when the
result is (see :class:`QueryResult`).

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.insideout import evaluate
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> with evaluate("count() := edge(a,b), edge(a,c), edge(b,c)", {"edge": edge}) as result:
...     result.scalar()
1
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Union

from faq.errors import (
    ArityMismatchError,
    SemiringMismatchError,
    UnknownFactorError,
    VariableTypeMismatchError,
)
from faq.factor import VALUE, Factor
from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.insideout.planner import Plan, plan as make_plan
from faq.joins import VALUE_COLUMN, Aggregation, Frame, join_bag
from faq.query import FAQ, parse_query
from faq.semirings import Semiring, get_semiring

_INTEGRAL = {"tinyint", "smallint", "int", "bigint"}


@dataclass(frozen=True)
class StepEvent:
    """Progress of :func:`execute`: ``kind`` is ``"start"`` or ``"done"``."""

    kind: str
    step: int
    total: int
    description: str
    rows: Optional[int] = None
    seconds: Optional[float] = None


Progress = Callable[[StepEvent], None]


@dataclass
class QueryResult:
    """The answer of a query, its plan and what running it measured.

    The answer's DataFrame is cached; call :meth:`unpersist` (or use the
    result as a context manager) when done with it.
    """

    factor: Factor
    plan: Plan
    step_rows: list[int] = field(default_factory=list)
    seconds: float = 0.0
    _cached: list[Any] = field(default_factory=list, repr=False)

    def scalar(self) -> Any:
        """The value of a query without free variables."""
        return self.factor.scalar()

    def unpersist(self) -> None:
        """Release every cache the evaluation holds."""
        for df in self._cached:
            df.unpersist()
        self._cached.clear()

    def __enter__(self) -> "QueryResult":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unpersist()


def query_semiring(query: FAQ, factors: Mapping[str, Factor], semiring: Union[str, Semiring, None] = None) -> Semiring:
    """The semiring a query runs in: given, the query's own, or its factors'."""
    if semiring is not None:
        return get_semiring(semiring)
    if query.semiring is not None:
        return get_semiring(query.semiring)
    first = query.atoms[0].factor
    if first not in factors:
        raise UnknownFactorError(name=first, known=list(factors))
    return factors[first].semiring


def bind(query: FAQ, factors: Mapping[str, Factor], semiring: Semiring) -> dict[str, Frame]:
    """Check ``query`` against ``factors``; return one :class:`Frame` per atom.

    The frame of atom ``k`` (1-based) is keyed ``"{factor}#{k}"``, its columns
    renamed to the atom's variables (an atom repeating a variable, ``f(x, x)``,
    keeps the rows with equal columns).  Integer key columns are widened to
    bigint so that int and bigint ids join.

    Raises
    ------
    UnknownFactorError, ArityMismatchError, SemiringMismatchError,
    VariableTypeMismatchError
    """
    from pyspark.sql import functions as F

    for agg_var, agg_name in query.aggregates:
        agg = get_semiring(agg_name)
        if not agg.shares_product_with(semiring):
            raise SemiringMismatchError(what=f"the aggregate of {agg_var!r}", expected=semiring.name, found=agg.name)
    types: dict[str, dict[str, str]] = {}
    for atom in query.atoms:
        if atom.factor not in factors:
            raise UnknownFactorError(name=atom.factor, known=list(factors))
        factor = factors[atom.factor]
        if len(factor.variables) != len(atom.variables):
            raise ArityMismatchError(factor=atom.factor, expected=len(factor.variables), found=len(atom.variables))
        if factor.semiring.name != semiring.name:
            raise SemiringMismatchError(what=f"factor {atom.factor!r}", expected=semiring.name, found=factor.semiring.name)
        schema = factor.df.schema
        for column, var in zip(factor.variables, atom.variables):
            found = schema[column].dataType.simpleString()
            types.setdefault(var, {})[f"{atom.factor}.{column}"] = "bigint" if found in _INTEGRAL else found
    for var, by_column in types.items():
        if len(set(by_column.values())) > 1:
            raise VariableTypeMismatchError(variable=var, types=by_column)

    frames: dict[str, Frame] = {}
    for k, atom in enumerate(query.atoms, start=1):
        factor = factors[atom.factor]
        df = factor.df
        first_column: dict[str, str] = {}
        condition = None
        for column, var in zip(factor.variables, atom.variables):
            if var in first_column:  # repeated variable: keep the diagonal
                same = F.col(first_column[var]) == F.col(column)
                condition = same if condition is None else condition & same
            else:
                first_column[var] = column
        if condition is not None:
            df = df.where(condition)
        columns = [
            F.col(c).cast("bigint").alias(v) if types[v][f"{atom.factor}.{c}"] == "bigint" else F.col(c).alias(v)
            for v, c in first_column.items()
        ]
        frames[f"{atom.factor}#{k}"] = Frame(
            df.select(*columns, F.col(factor.value).alias(VALUE_COLUMN)), tuple(first_column)
        )
    return frames


def execute(
    plan: Plan,
    frames: Mapping[str, Frame],
    semiring: Semiring,
    progress: Optional[Progress] = None,
) -> QueryResult:
    """Run ``plan`` over the bound ``frames`` (from :func:`bind`).

    Returns a :class:`QueryResult` whose factor has the free variables as
    columns (in the query's order) and a ``value`` column.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    started = time.perf_counter()
    relations: dict[str, Frame] = dict(frames)
    cached: dict[str, Any] = {}
    step_rows: list[int] = []
    total = len(plan.steps)
    for step in plan.steps:
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
            Frame(relations[i.relation].df.select(*i.variables).distinct(), i.variables)
            for i in step.indicators
        ]
        out_vars = step.output.variables
        value = F.col(VALUE_COLUMN)
        # The join is told what follows it: it may ⊕-aggregate while it enumerates
        # and return partial aggregates over out_vars (the group-by below combines them).
        aggregation = Aggregation(tuple(out_vars), get_semiring(step.aggregate)) if step.eliminated else None
        product = join_bag(step.join_method, inputs, indicators, semiring, step.attribute_order, aggregation)
        if step.eliminated:
            aggregate = aggregation.semiring
            grouped = product.df.groupBy(*out_vars) if out_vars else product.df.groupBy()
            df = grouped.agg(spark_columns(aggregate).sum(value).alias(VALUE_COLUMN))
        elif any(r in frames for r in step.inputs):
            # An input atom reached the output unaggregated: merge duplicate keys.
            df = product.df.groupBy(*out_vars).agg(spark_columns(semiring).sum(value).alias(VALUE_COLUMN))
        else:
            df = product.df.select(*out_vars, VALUE_COLUMN)
        df = df.where(value.isNotNull() & ~spark_columns(semiring).is_zero(value))
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        rows = df.count()
        cached[step.output.id] = df
        step_rows.append(rows)
        # Consumed intermediates are no longer needed: release them now.
        for r in step.inputs:
            if r in cached:
                cached.pop(r).unpersist()
            relations.pop(r, None)
        relations[step.output.id] = Frame(df, out_vars)
        if progress:
            progress(StepEvent("done", step.index, total, description, rows, time.perf_counter() - t0))

    result_frame = relations[plan.result.id]
    out_value = VALUE if VALUE not in plan.free else "__value"
    out_df = result_frame.df.select(*plan.free, F.col(VALUE_COLUMN).alias(out_value))
    factor = Factor(df=out_df, variables=tuple(plan.free), semiring=semiring, value=out_value, name="result")
    return QueryResult(factor, plan, step_rows, time.perf_counter() - started, list(cached.values()))


def statistics(query: FAQ, factors: Mapping[str, Factor]) -> dict[str, int]:
    """Row counts of the factors a query uses (one Spark job per factor)."""
    return {name: factors[name].count() for name in query.factor_names if name in factors}


def factor_statistics(query: FAQ, factors: Mapping[str, Factor]) -> dict[str, RelationStatistics]:
    """Rows and, per key column, distinct values and largest degree: one Spark job per factor.

    The plain numbers the planner's estimates need
    (:mod:`faq.hypergraph.statistics`).  A factor's key columns are unpivoted
    into (column, value) pairs, counted per pair, then per column: the number
    of pairs is the distinct count, the largest pair count the most rows
    sharing one value; one ``collect`` of one row per column.

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> from faq.query import parse_query
    >>> edge = factor_of([(1, 2, 1), (1, 3, 1), (2, 3, 1)], ["src", "dst"], "counting")
    >>> factor_statistics(parse_query("count() := edge(a,b), edge(b,c)"), {"edge": edge})["edge"]
    RelationStatistics(rows=3, columns=(ColumnStatistics(distinct=2, max_degree=2), ColumnStatistics(distinct=2, max_degree=2)))
    """
    from pyspark.sql import functions as F

    out: dict[str, RelationStatistics] = {}
    for name in query.factor_names:
        if name not in factors:
            continue
        factor = factors[name]
        columns = list(factor.variables)
        if not columns:
            out[name] = RelationStatistics(factor.count(), ())
            continue
        schema = factor.df.schema
        integral = all(schema[c].dataType.simpleString() in _INTEGRAL for c in columns)
        kind = "bigint" if integral else "string"
        pairs = factor.df.select(
            F.explode(
                F.array(*[F.struct(F.lit(i).alias("i"), F.col(c).cast(kind).alias("v")) for i, c in enumerate(columns)])
            ).alias("p")
        ).select("p.i", "p.v")
        per_value = pairs.groupBy("i", "v").agg(F.count(F.lit(1)).alias("n"))
        per_column = per_value.groupBy("i").agg(
            F.count(F.lit(1)).alias("distinct"), F.max("n").alias("max_degree"), F.sum("n").alias("rows")
        )
        found = {r["i"]: r for r in per_column.collect()}
        rows = int(found[0]["rows"]) if found else 0
        out[name] = RelationStatistics(
            rows,
            tuple(
                ColumnStatistics(int(found[i]["distinct"]), int(found[i]["max_degree"])) if i in found
                else ColumnStatistics(0, 0)
                for i in range(len(columns))
            ),
        )
    return out


def evaluate(
    query: Union[FAQ, str],
    factors: Mapping[str, Factor],
    *,
    semiring: Union[str, Semiring, None] = None,
    method: str = "auto",
    order: Optional[list[str]] = None,
    join: str = "auto",
    progress: Optional[Progress] = None,
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

    Returns
    -------
    QueryResult
        Use it as a context manager, or call ``unpersist()``, to free its cache.
    """
    from pyspark import StorageLevel

    if isinstance(query, str):
        query = parse_query(query)
    ring = query_semiring(query, factors, semiring)
    bind(query, factors, ring)  # check everything before any Spark work
    # A factor used by several atoms is read once and kept while the query runs.
    uses: dict[str, int] = {}
    for atom in query.atoms:
        uses[atom.factor] = uses.get(atom.factor, 0) + 1
    # (A DataFrame the caller cached already is left alone, and not unpersisted by us.)
    shared = {
        name: factors[name].df.persist(StorageLevel.MEMORY_AND_DISK)
        for name, n in uses.items()
        if n > 1 and not _is_cached(factors[name].df)
    }
    try:
        kept = {**factors, **{n: replace(factors[n], df=df) for n, df in shared.items()}}
        sizes = statistics(query, kept)
        the_plan = make_plan(query, semiring=ring.name, sizes=sizes, method=method, order=order, join=join)
        result = execute(the_plan, bind(query, kept, ring), ring, progress)
    finally:
        # The answer is materialised (or failed); the shared inputs are not needed any more.
        for df in shared.values():
            df.unpersist()
    return result


def _is_cached(df) -> bool:
    level = df.storageLevel
    return bool(level.useMemory or level.useDisk)
