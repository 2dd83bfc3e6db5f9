"""Checking a query against its factors and gathering the facts its plan is made from.

Between the pure planner (:mod:`faq.insideout.planner`) and the executor
(:mod:`faq.insideout.executor`) sits what needs the factors but runs no join:

* :func:`bind` checks a query against its factors (names, arities,
  semirings, key types) and gives one :class:`~faq.joins.Frame` per atom;
* :func:`statistics` and :func:`factor_statistics` count rows (and distinct
  values and largest degrees per key column), one Spark job per factor;
* :func:`session_environment` reads the session's kind and parallelism;
* :func:`plan_for` puts them together into a :class:`~faq.insideout.planner.Plan`
  holding every decision, which ``evaluate(..., plan=...)`` then runs as it is.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.insideout.binding import plan_for
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1)], ["src", "dst"], "counting")
>>> p = plan_for("count() := edge(a,b), edge(a,c), edge(b,c)", {"edge": edge})
>>> p.steps[0].strategy.name, p.steps[0].strategy.reason, p.variable_types["a"]
('broadcast', 'index of 3 rows', 'bigint')
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Union

from faq.driver_copy import project_driver_copy
from faq.errors import (
    ArityMismatchError,
    InvalidArgumentError,
    SemiringMismatchError,
    UnknownFactorError,
    VariableTypeMismatchError,
)
from faq.factor import Factor
from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.insideout.physical import INTEGRAL_TYPES, Environment
from faq.insideout.planner import Plan, plan
from faq.joins import VALUE_COLUMN, Frame
from faq.language import FAQ, parse_query
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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


def variable_types(query: FAQ, factors: Mapping[str, Factor], semiring: Semiring) -> dict[str, str]:
    """Check ``query`` against ``factors`` and return each variable's key type.

    Integer types are widened to ``bigint`` (int and bigint ids join).  No
    Spark job runs: only schemas are read.

    Raises
    ------
    UnknownFactorError, ArityMismatchError, SemiringMismatchError,
    VariableTypeMismatchError
    """
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
            types.setdefault(var, {})[f"{atom.factor}.{column}"] = "bigint" if found in INTEGRAL_TYPES else found
    for var, by_column in types.items():
        if len(set(by_column.values())) > 1:
            raise VariableTypeMismatchError(variable=var, types=by_column)
    return {var: next(iter(by_column.values())) for var, by_column in types.items()}


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

    types = variable_types(query, factors, semiring)
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
            F.col(c).cast("bigint").alias(v) if types[v] == "bigint" else F.col(c).alias(v)
            for v, c in first_column.items()
        ]
        projected = df.select(*columns, F.col(factor.value).alias(VALUE_COLUMN))
        if condition is None:  # a renaming of the factor's rows: the driver's copy, if any, still holds them
            project_driver_copy(projected, df, {**first_column, VALUE_COLUMN: factor.value})
        frames[f"{atom.factor}#{k}"] = Frame(projected, tuple(first_column))
    return frames


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
    >>> from faq.language import parse_query
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
        integral = all(schema[c].dataType.simpleString() in INTEGRAL_TYPES for c in columns)
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


def session_environment(spark: "SparkSession") -> Environment:
    """The facts of ``spark`` a plan's physical choices depend on.

    Kind (Spark Connect or classic), parallelism, and the memory one index
    may use on an executor: the session's ``spark.faq.indexMemory`` (bytes,
    or a Spark size such as ``"256m"``) when set, else
    :data:`~faq.insideout.physical.INDEX_MEMORY_FRACTION` of
    ``spark.executor.memory`` (default 1g) -- of ``spark.driver.memory`` on
    a ``local[...]`` master, whose one executor is the driver.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> spark.conf.set("spark.faq.indexMemory", "3m")
    >>> session_environment(spark).index_memory
    3145728
    >>> spark.conf.unset("spark.faq.indexMemory")
    """
    from faq.spark import default_parallelism, is_connect

    connect = is_connect(spark)
    return Environment(connect=connect, parallelism=default_parallelism(spark), index_memory=index_memory(spark),
                       driver_index_memory=driver_index_memory(spark), index_dir=index_dir(spark, connect),
                       index_build=index_build(spark))


def _setting(spark: "SparkSession", key: str) -> Optional[str]:
    try:
        return spark.conf.get(key, None)
    except Exception:  # noqa: BLE001 - a Connect server may refuse to show a static setting
        return None


def index_memory(spark: "SparkSession") -> int:
    """Bytes one index may use on an executor of ``spark`` (see :func:`session_environment`)."""
    from faq.insideout.physical import INDEX_MEMORY_CONF, INDEX_MEMORY_FRACTION, parse_size

    given = _setting(spark, INDEX_MEMORY_CONF)
    if given:
        return parse_size(given)
    master = _setting(spark, "spark.master") or ""
    key = "spark.driver.memory" if master.startswith("local[") or master == "local" else "spark.executor.memory"
    memory = parse_size(_setting(spark, key) or "1g", default_unit="m")  # Spark reads a bare number as MiB
    return int(INDEX_MEMORY_FRACTION * memory)


def driver_index_memory(spark: "SparkSession") -> int:
    """Bytes the driver of ``spark`` may give to building one broadcast index (see :func:`session_environment`)."""
    from faq.insideout.physical import DRIVER_INDEX_MEMORY_CONF, INDEX_MEMORY_FRACTION, parse_size

    given = _setting(spark, DRIVER_INDEX_MEMORY_CONF)
    if given:
        return parse_size(given)
    return int(INDEX_MEMORY_FRACTION * parse_size(_setting(spark, "spark.driver.memory") or "1g", default_unit="m"))


def index_dir(spark: "SparkSession", connect: bool) -> Optional[str]:
    """A directory the executors of ``spark`` can read, for the inputs of an index built there.

    ``spark.faq.indexDir`` when set; else, for a classic session on a
    ``local`` or ``local-cluster`` master (executors on this machine), the
    driver's scratch directory; else None (a Connect server or a cluster
    may not see this machine's files).
    """
    from faq.insideout.physical import INDEX_DIR_CONF

    given = _setting(spark, INDEX_DIR_CONF)
    if given:
        # A relative path would be read against each worker's own directory: make it the driver's.
        return given if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", given) else os.path.abspath(given)
    if not connect and (_setting(spark, "spark.master") or "").startswith("local"):
        from faq.io.scratch import scratch_directory

        return scratch_directory()
    return None


def index_build(spark: "SparkSession") -> str:
    """``spark.faq.indexBuild``: "auto" (default), "driver" or "executors"; anything else is refused."""
    from faq.insideout.physical import INDEX_BUILD_CONF, INDEX_BUILDS

    given = (_setting(spark, INDEX_BUILD_CONF) or "auto").strip().lower()
    if given not in INDEX_BUILDS:
        raise InvalidArgumentError(argument=INDEX_BUILD_CONF, value=given, reason=f"expected one of {', '.join(INDEX_BUILDS)}")
    return given


def plan_for(
    query: Union[FAQ, str],
    factors: Mapping[str, Factor],
    *,
    semiring: Union[str, Semiring, None] = None,
    method: str = "auto",
    order: Optional[Sequence[str]] = None,
    join: str = "auto",
    detailed: bool = False,
    task_aggregation: bool = True,
    environment: Optional[Environment] = None,
) -> Plan:
    """The plan :func:`~faq.insideout.executor.evaluate` would run, made from the factors' facts.

    Checks the query against the factors (no job), counts their rows (one job
    per factor; with ``detailed``, also distinct values and largest degree
    per key column, which give the generic join's estimated work), and reads
    the key types and the session; see :func:`faq.insideout.planner.plan`
    for the other parameters.  ``environment`` overrides the session's
    facts (tests lower the index limits with it).
    """
    if isinstance(query, str):
        query = parse_query(query)
    ring = query_semiring(query, factors, semiring)
    types = variable_types(query, factors, ring)
    stats = factor_statistics(query, factors) if detailed else {}
    sizes = None if detailed else statistics(query, factors)
    spark = next(iter(factors.values())).df.sparkSession if factors else None
    if environment is None:
        environment = session_environment(spark) if spark is not None else Environment()
    return plan(query, semiring=ring, sizes=sizes, method=method, order=order, join=join, statistics=stats,
                variable_types=types, environment=environment, task_aggregation=task_aggregation)
