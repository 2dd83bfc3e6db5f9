"""Checking a query against its factors and gathering the facts its plan is made from.

Between the pure planner (:mod:`faq.insideout.planner`) and the executor
(:mod:`faq.insideout.executor`) sits what needs the factors but runs no join:

* :func:`bind` checks a query against its factors (names, arities,
  semirings, key types) and gives one :class:`~faq.joins.Frame` per atom;
* :func:`statistics` and :func:`factor_statistics` count rows (and distinct
  values and largest degrees per key column), one Spark job per factor;
* :func:`session_environment` gathers the session's kind, parallelism and
  settings (each read by :mod:`faq.settings`);
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

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from faq.errors import (
    ArityMismatchError,
    SemiringMismatchError,
    UnknownFactorError,
    VariableTypeMismatchError,
)
from faq.factor import Factor
from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.insideout.physical import INTEGRAL_TYPES, Environment
from faq.insideout.placement import compiled_worth_loading
from faq.insideout.planner import Plan, plan_query
from faq.joins import VALUE_COLUMN, Frame
from faq.language import FAQ, parse_query
from faq.relation import sql_name
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    import numpy
    from pyspark.sql import SparkSession

    from faq.joins.local import Table


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
        kinds = dict(factor.dtypes())  # (held rows answer without Spark)
        for column, var in zip(factor.variables, atom.variables):
            found = kinds[column]
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
    types = variable_types(query, factors, semiring)
    return {f"{atom.factor}#{k}": bind_atom(atom, factors[atom.factor], types)
            for k, atom in enumerate(query.atoms, start=1)}


def bind_atom(atom: Any, factor: Factor, types: Mapping[str, str]) -> Frame:
    """One atom's :class:`Frame`: ``factor``'s columns renamed to the atom's variables (see :func:`bind`)."""
    from faq.spark import real_session

    # A step on the executors reads this atom: the Columns it builds need a running session, which may
    # not have started yet (a deferred one, for rows the driver holds).
    real_session(factor.session)
    first_column, repeats = _columns_of(atom, factor)
    held = factor.relation.renamed({**first_column, VALUE_COLUMN: factor.value}) if factor.relation.held else None
    if held is not None and not repeats and factor.relation.dataframe is None:
        return Frame(variables=tuple(first_column), relation=held)  # rows only the driver holds: made when read
    df = factor.df
    # SQL text rather than Columns: one call into Spark for the filter and one for the projection.
    condition = " AND ".join(f"{sql_name(first_column[var])} = {sql_name(column)}" for column, var in repeats)
    if condition:  # repeated variable: keep the diagonal
        df = df.where(condition)
    columns = [
        f"CAST({sql_name(c)} AS BIGINT) AS {sql_name(v)}" if types[v] == "bigint" else f"{sql_name(c)} AS {sql_name(v)}"
        for v, c in first_column.items()
    ]
    projected = df.selectExpr(*columns, f"{sql_name(factor.value)} AS {sql_name(VALUE_COLUMN)}")
    if held is not None and not condition:  # a renaming: the driver's copy still holds its rows
        return Frame(variables=tuple(first_column), relation=replace(held, dataframe=projected))
    return Frame(projected, tuple(first_column))


def held_atom(atom: Any, factor: Factor, semiring: Semiring) -> Optional["Table"]:
    """One atom as a numpy :class:`~faq.joins.local.Table` from the rows the driver holds
    (:attr:`Factor.relation`), as :func:`bind_atom` would give them; None when it holds none.

    No Spark call: an in-process step reads its inputs this way.

    >>> from faq.factor import factor_of
    >>> from faq.language import parse_query
    >>> f = factor_of([(0, 0, 2), (0, 1, 3), (1, 1, 5)], ["x", "y"], "counting")
    >>> table = held_atom(parse_query("q(x) := f(x, x)").atoms[0], f, f.semiring)
    >>> table.variables, table.keys["x"].tolist(), table.values.tolist()
    (('x',), [0, 1], [2, 5])
    """
    import numpy as np

    from faq.joins.local import Table
    from faq.semirings.numpy_backend import as_values

    relation = factor.relation
    if not relation.held:
        return None
    copy = relation.arrays
    first_column, repeats = _columns_of(atom, factor)
    keep = None
    for column, var in repeats:
        same = np.asarray(copy[first_column[var]]) == np.asarray(copy[column])
        keep = same if keep is None else keep & same
    keys = {v: np.asarray(copy[c]) for v, c in first_column.items()}
    values = as_values(semiring, copy[factor.value])
    if keep is not None:
        keys, values = {v: k[keep] for v, k in keys.items()}, values[keep]
    return Table(tuple(first_column), keys, values)


def _columns_of(atom: Any, factor: Factor) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(variable -> the factor column holding it first, (column, variable) of each repeat)."""
    first_column: dict[str, str] = {}
    repeats: list[tuple[str, str]] = []
    for column, var in zip(factor.variables, atom.variables):
        if var in first_column:
            repeats.append((column, var))
        else:
            first_column[var] = column
    return first_column, repeats


def statistics(query: FAQ, factors: Mapping[str, Factor]) -> dict[str, int]:
    """Row counts of the factors a query uses: those the driver holds without a job, the others in one
    Spark job (a union of one count per factor: a job's fixed cost is paid once, not per factor).

    >>> from faq.factor import factor_of
    >>> from faq.language import parse_query
    >>> edge = factor_of([(1, 2, 1), (1, 3, 1), (2, 3, 1)], ["src", "dst"], "counting")
    >>> statistics(parse_query("count() := edge(a,b), edge(b,c)"), {"edge": edge})
    {'edge': 3}
    """
    names = [name for name in query.factor_names if name in factors]
    relations = {name: factors[name].relation for name in names}
    counts = {name: int(r.rows) if r.held else _scanned_rows(factors[name]) for name, r in relations.items()}
    missing = [name for name in names if counts[name] is None]
    if len(missing) == 1:
        counts[missing[0]] = factors[missing[0]].count()
    elif missing:
        counts.update(row_counts({name: factors[name].df for name in missing}))
    return counts


def _scanned_rows(factor: Factor) -> Optional[int]:
    """The rows of a factor that is a bare scan of local Parquet files (:func:`faq.parquet_scan.bare_scan`):
    its files' footers say them exactly, no job; else None."""
    from faq.parquet_scan import bare_scan, file_rows

    return file_rows(factor.df) if bare_scan(factor.df, factor.columns()) else None


def row_counts(frames: Mapping[str, Any]) -> dict[str, int]:
    """Rows of each Spark DataFrame, in one job: a union of one count each (one row per frame collected).

    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> row_counts({"a": spark.range(3), "b": spark.range(5)})
    {'a': 3, 'b': 5}
    """
    from pyspark.sql import functions as F

    names = list(frames)
    union = None
    for i, name in enumerate(names):
        part = frames[name].agg(F.count(F.lit(1)).alias("n")).select(F.lit(i).alias("i"), "n")
        union = part if union is None else union.unionByName(part)
    return {names[row["i"]]: int(row["n"]) for row in union.collect()}


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
    out: dict[str, RelationStatistics] = {}
    for name in query.factor_names:
        if name not in factors:
            continue
        factor = factors[name]
        columns = list(factor.variables)
        if not columns:
            out[name] = RelationStatistics(factor.count(), ())
            continue
        held = _held_statistics(factor)
        if held is not None:  # the driver holds the rows: counted in numpy, no job
            out[name] = held
            continue
        from pyspark.sql import functions as F  # here: statistics of held factors load no PySpark

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


def _held_statistics(factor: Factor) -> Optional[RelationStatistics]:
    """:func:`factor_statistics` of a factor whose rows the driver holds, from its arrays (None: not held)."""
    relation = factor.relation
    if not relation.held:
        return None
    from faq.insideout.held_joins import column_histogram

    copy, rows = relation.arrays, int(relation.rows)
    columns = []
    for c in factor.variables:
        histogram = column_histogram(relation, c)  # integer keys: counted once per relation
        counts = histogram[1] if histogram is not None else value_counts(copy[c])
        columns.append(ColumnStatistics(int(len(counts)), int(counts.max()) if len(counts) else 0))
    return RelationStatistics(rows, tuple(columns))


def session_environment(spark: "SparkSession") -> Environment:
    """The facts of ``spark`` a plan's physical choices depend on.

    Kind (Spark Connect or classic), parallelism, and the memory one index
    may use on an executor: the session's ``spark.faq.indexMemory`` (bytes,
    or a Spark size such as ``"256m"``) when set, else from the memory that
    holds it (:func:`index_memory`).

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> spark.conf.set("spark.faq.indexMemory", "3m")
    >>> session_environment(spark).index_memory
    3145728
    >>> spark.conf.unset("spark.faq.indexMemory")
    """
    from faq import settings
    from faq.spark import default_parallelism, is_connect

    connect = is_connect(spark)
    in_process = settings.local_memory(spark)
    return Environment(connect=connect, parallelism=default_parallelism(spark),
                       index_memory=settings.index_memory(spark),
                       driver_index_memory=settings.driver_index_memory(spark),
                       index_dir=settings.index_dir(spark, connect), index_build=settings.index_build(spark),
                       placement=settings.placement_setting(spark), local_memory=in_process,
                       fetch_memory=settings.fetch_memory(spark, in_process), local_rows=settings.local_rows(spark),
                       compiled_loaded=compiled_worth_loading(),
                       check_workers=settings.check_workers(spark), in_tasks=settings.in_tasks(spark))


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
    placement: Optional[str] = None,
    split: bool = True,
) -> Plan:
    """The plan :func:`~faq.insideout.executor.evaluate` would run, made from the factors' facts.

    Checks the query against the factors (no job), counts their rows (one job
    per factor; with ``detailed``, also distinct values and largest degree
    per key column, which give the generic join's estimated work -- counted
    in numpy either way for a factor the driver holds, up to
    :data:`DEGREE_ROWS` rows, so a plan run and its ``explain`` agree), and reads
    the key types and the session; see :func:`faq.insideout.planner.plan_query`
    for the other parameters.  ``environment`` overrides the session's
    facts (tests lower the index limits with it); ``placement`` ("auto",
    "driver", "executors") overrides its :attr:`~faq.insideout.physical.Environment.placement`.
    ``split``: a plan whose steps exceed the driver's memory over factors it holds may run in
    pieces (:mod:`faq.insideout.pieces`, each in the whole plan's elimination order, whose steps the
    split shrinks); False plans the query whole.
    """
    if isinstance(query, str):
        query = parse_query(query)
    ring = query_semiring(query, factors, semiring)
    types = variable_types(query, factors, ring)
    stats = factor_statistics(query, factors) if detailed else {}
    sizes = None if detailed else statistics(query, factors)
    spark = next(iter(factors.values())).session if factors else None
    if environment is None:
        environment = (session_environment(spark) if spark is not None
                       else Environment(compiled_loaded=compiled_worth_loading()))  # (no session: its defaults)
    if placement is not None:
        from faq.placement_policy import checked

        checked(placement)
        environment = replace(environment, placement=placement)
    relations = {name: factors[name].relation for name in query.factor_names if name in factors}
    held = [name for name, relation in relations.items() if relation.held]
    counted = [name for name in held if relations[name].rows <= DEGREE_ROWS]
    if not detailed:  # the driver's rows give the detailed statistics in numpy, no job: plan as explain does
        stats = {name: st for name in counted if (st := _held_statistics(factors[name])) is not None}
    degrees = {name: tuple(c.max_degree for c in stats[name].columns) if name in stats else held_degrees(factors[name])
               for name in counted}
    from faq.insideout.held_joins import pair_rows
    from faq.joins.dense_rows import cycle_order

    # A 4-cycle's fused step is chosen on its exact wedges (fused_cycle.dense_cycle): counted at any size.
    paired = held if cycle_order([a.variables for a in query.atoms]) is not None else counted
    whole = plan_query(query, semiring=ring, sizes=sizes, method=method, order=order, join=join, statistics=stats,
                       variable_types=types, environment=environment, task_aggregation=task_aggregation,
                       held=held, degrees={name: d for name, d in degrees.items() if d is not None},
                       pair_rows=pair_rows(query, factors, paired))
    if not split or join != "auto":  # a forced join method runs where it says: no pieces
        return whole
    from faq.insideout.pieces import split_plan

    return split_plan(whole, query, factors, ring, environment, lambda piece, piece_factors: plan_for(
        piece, piece_factors, semiring=ring, method=method, order=order or whole.order, join=join, detailed=detailed,
        task_aggregation=task_aggregation, environment=environment, split=False))


#: Most rows of a held factor whose statistics :func:`plan_for` counts (in numpy, no job; each column's
#: histogram once per relation, :func:`~faq.insideout.held_joins.column_histogram`): ~0.1 s at R-MAT 18's
#: 3.9M edges, whose 4-cycle's pieces need the unrestricted atoms' domains to fit.
DEGREE_ROWS = 8_000_000


def held_degrees(factor: Factor) -> Optional[tuple[int, ...]]:
    """The most rows sharing one value of each key column of a factor the driver holds (None: not held).

    >>> from faq.factor import factor_of
    >>> held_degrees(factor_of([(1, 2, 1), (1, 3, 1), (2, 3, 1)], ["src", "dst"]))
    (2, 2)
    """
    relation = factor.relation
    if not relation.held:
        return None
    copy = relation.arrays
    return tuple(int(value_counts(copy[v]).max()) if len(copy[v]) else 0 for v in factor.variables)


def value_counts(values: "numpy.ndarray") -> "numpy.ndarray":
    """How many times each distinct non-null value of ``values`` occurs (in no particular order).

    Integers over a range of at most four times their number are counted
    with ``bincount`` (one pass); others as pandas does (a hash table), which
    is imported only then -- its import costs a small command 0.5 s.

    >>> import numpy as np
    >>> sorted(value_counts(np.array([5, 3, 5, 5])).tolist()), sorted(value_counts(np.array([1e9, 2, 1e9])).tolist())
    ([1, 3], [1, 2])
    >>> sorted(value_counts(np.array(["a", None, "a"], dtype=object)).tolist())
    [2]
    """
    from faq.insideout.held_joins import dense_histogram

    if values.dtype.kind in "iu" and len(values):
        dense = dense_histogram(values)
        if dense is not None:
            return dense[1]
    import pandas as pd

    return pd.Series(values).value_counts(sort=False, dropna=True).to_numpy()
