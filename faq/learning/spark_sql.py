"""The cofactor aggregate by Spark SQL operators: the flat join, then one aggregation of count, sums and products.

For tables that are Spark DataFrames, :func:`flat_aggregate` lets Spark join
the tables on the query's shared variables and take, in ONE ``agg``,
``count(*)``, ``Σ x_i`` and ``Σ x_i·x_j`` (``i ≤ j``) over the joined rows --
what a Spark user writes without faq, as Column expressions only (no Python
runs on the executors, nothing but the one aggregate row comes back, and it
works on Spark Connect).  The join is listed (by Spark, in its tasks), so it
pays where the join is about as large as its largest table -- a foreign-key
star -- and not where it is much larger (many-to-many): faq's factorized
plans never list it.  :mod:`faq.learning.costs` prices the two before either
runs.

The semantics are the other paths' (:mod:`faq.learning.features`): a
table's columns named like its atom's variables are its keys (a table used
by several atoms is keyed by its first atom's variables, and lifts its
features in that atom only); a row with a null key joins nothing; a row with
a null (or NaN) feature is left out of the table that lifts it, as the
driver's path does; a key must be an integer column.

Examples
--------
>>> from faq.language import parse_query
>>> from faq.learning.features import Feature
>>> plan = flat_plan(parse_query("count() := l(o, p), o(o), p(p)"), [Feature("l", "q", 0), Feature("p", "s", 1)],
...                  {"l": 2_000_000, "o": 200_000, "p": 20_000})
>>> plan.order, plan.aggregates
(('l', 'o', 'p'), 6)
>>> print(plan)
spark-sql: l(o, p) ⋈ o(o) ⋈ p(p) joined by Spark on o, p, then one aggregation of 6 sums \
(count, 2 sums, 3 sums of products) over the joined rows
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from faq.errors import InvalidArgumentError, UnknownFactorError

if TYPE_CHECKING:
    from faq.learning.features import Feature

__all__ = ["FlatPlan", "flat_plan", "flat_aggregate", "aggregate_count", "table_statistics", "footer_statistics",
           "atom_labels"]


def aggregate_count(features: int) -> int:
    """Sums one row of the flat aggregate takes: the count, ``m`` sums and ``m(m+1)/2`` products.

    >>> aggregate_count(8)   # seven features and a target: 1 + 8 + 36
    45
    """
    return 1 + features + features * (features + 1) // 2


@dataclass(frozen=True)
class FlatPlan:
    """What :func:`flat_aggregate` runs: the atoms joined in ``order``, then one aggregation.

    Attributes
    ----------
    atoms : tuple of str
        The atoms, in the order Spark joins them (``l(o, p)``, ...).
    order : tuple of str
        Their tables, in that order.
    variables : tuple of str
        The variables joined on.
    features : int
        Features aggregated (``m``).
    positions : tuple of int
        The atoms' positions in the query, in that order.
    """

    atoms: tuple[str, ...]
    order: tuple[str, ...]
    variables: tuple[str, ...]
    features: int
    positions: tuple[int, ...] = ()

    @property
    def aggregates(self) -> int:
        """Sums per joined row (:func:`aggregate_count`)."""
        return aggregate_count(self.features)

    def __str__(self) -> str:
        m = self.features
        on = ", ".join(self.variables) or "nothing (a product)"
        return (f"spark-sql: {' ⋈ '.join(self.atoms)} joined by Spark on {on}, then one aggregation of "
                f"{self.aggregates} sums (count, {m} sums, {m * (m + 1) // 2} sums of products) over the joined rows")


def flat_plan(parsed: Any, features: Sequence["Feature"], rows: Optional[Mapping[str, int]] = None) -> FlatPlan:
    """The join order: the atom of the largest table first (by ``rows``; else the query's first), then,
    repeatedly, the first atom sharing a variable with those joined (a product only when none does).

    Starting from the largest table lets Spark stream it and build (or broadcast) the smaller ones.
    """
    atoms = list(parsed.atoms)
    sizes = rows or {}
    first = max(range(len(atoms)), key=lambda k: (sizes.get(atoms[k].factor, 0), -k))
    order, bound = [first], set(atoms[first].variables)
    while len(order) < len(atoms):
        left = [k for k in range(len(atoms)) if k not in order]
        k = next((k for k in left if bound & set(atoms[k].variables)), left[0])
        order.append(k)
        bound |= set(atoms[k].variables)
    shared = [v for v in dict.fromkeys(v for a in atoms for v in a.variables)
              if sum(v in a.variables for a in atoms) > 1]
    return FlatPlan(tuple(str(atoms[k]) for k in order), tuple(atoms[k].factor for k in order), tuple(shared),
                    len(features), tuple(order))


def flat_aggregate(parsed: Any, features: Sequence["Feature"], tables: Mapping[str, Any],
                   rows: Optional[Mapping[str, int]] = None) -> tuple[float, np.ndarray, np.ndarray, FlatPlan]:
    """``(n, Σx, Σxxᵀ)`` of ``features`` over the join, by Spark: the tables joined, then one ``agg``.

    Parameters
    ----------
    parsed : FAQ
        The join (its atoms name the tables).
    features : sequence of Feature
        Numbered ``0 .. m-1``.
    tables : mapping
        Table name -> Spark DataFrame.
    rows : mapping, optional
        Rows per table (estimates), to start the join at the largest.

    Returns
    -------
    (float, numpy.ndarray, numpy.ndarray, FlatPlan)
        The count, the sums ``(m,)``, the products ``(m, m)`` and what ran.

    Examples
    --------
    >>> from faq.language import parse_query
    >>> from faq.learning.features import Feature
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> l = spark.createDataFrame([(1, 2.0), (1, 3.0), (2, 5.0)], "o long, q double")
    >>> o = spark.createDataFrame([(1, 10.0), (2, 20.0)], "o long, a double")
    >>> n, sums, products, _ = flat_aggregate(parse_query("count() := l(o), o(o)"),
    ...                                       [Feature("l", "q", 0), Feature("o", "a", 1)], {"l": l, "o": o})
    >>> n, sums.tolist(), float(products[0, 1])   # 3 joined rows; Σq, Σa; Σ q·a = 2·10 + 3·10 + 5·20
    (3.0, [10.0, 40.0], 150.0)
    """
    plan = flat_plan(parsed, features, rows)
    # A NaN feature makes its sums NaN: only then is the aggregate taken again with the NaN rows left out
    # (as the driver's path leaves them), so the common case pays no test of every value.
    for nan_rows in (False, True):
        count, sums, products = _summed(_joined(parsed, plan, _atom_frames(parsed, features, tables, nan_rows)),
                                        len(features))
        if not (np.isnan(sums).any() or np.isnan(products).any()):
            break
    return count, sums, products, plan


def _joined(parsed: Any, plan: FlatPlan, frames: Sequence[Any]) -> Any:
    """The atoms' frames joined in the plan's order on the variables they share (a product where none)."""
    joined, bound = None, set()
    for k in plan.positions:
        frame = frames[k]
        variables = list(dict.fromkeys(parsed.atoms[k].variables))
        if joined is None:
            joined = frame
        else:
            on = [v for v in variables if v in bound]
            joined = joined.join(frame, on=on, how="inner") if on else joined.crossJoin(frame)
        bound |= set(variables)
    return joined


def _summed(joined: Any, m: int) -> tuple[float, np.ndarray, np.ndarray]:
    """One aggregation of the joined rows: count, ``Σ __f<i>`` and ``Σ __f<i>·__f<j>`` (i ≤ j); one row back."""
    from pyspark.sql import functions as F

    x = [F.col(f"__f{i}") for i in range(m)]
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    row = joined.agg(F.count(F.lit(1)).alias("n"), *[F.sum(x[i]).alias(f"s{i}") for i in range(m)],
                     *[F.sum(x[i] * x[j]).alias(f"q{i}_{j}") for i, j in pairs]).collect()[0]
    sums = np.array([row[f"s{i}"] if row[f"s{i}"] is not None else 0.0 for i in range(m)], dtype=np.float64)
    products = np.zeros((m, m))  # a sum is null over an empty join
    for i, j in pairs:
        value = row[f"q{i}_{j}"]
        products[i, j] = products[j, i] = value if value is not None else 0.0
    return float(row["n"]), sums, products


def _atom_frames(parsed: Any, features: Sequence["Feature"], tables: Mapping[str, Any],
                 nan_rows: bool = True) -> list[Any]:
    """Per atom, its table's rows as ``(variables..., __f<i> for the features it lifts)``, rows with a null key
    or a null lifted feature left out (no test for a column its Parquet footers say has no null), with
    ``nan_rows`` also those with a NaN feature; repeated variables of one atom required equal."""
    from pyspark.sql import functions as F

    from faq.learning.features import check_columns
    from faq.spark import is_dataframe

    lifted_in: dict[str, int] = {}
    for k, atom in enumerate(parsed.atoms):
        lifted_in.setdefault(atom.factor, k)
    out = []
    for k, atom in enumerate(parsed.atoms):
        if atom.factor not in tables:
            raise UnknownFactorError(name=atom.factor, known=list(tables))
        table = tables[atom.factor]
        if not is_dataframe(table):
            raise InvalidArgumentError(argument=atom.factor, value=type(table).__name__,
                                       reason="the Spark SQL aggregate joins Spark DataFrames")
        first = parsed.atoms[lifted_in[atom.factor]]
        if len(first.variables) != len(atom.variables):
            raise InvalidArgumentError(argument=atom.factor, value=str(atom),
                                       reason=f"the table's first atom has {len(first.variables)} variables")
        keys = list(zip(atom.variables, first.variables))  # (variable, the table's column)
        own = [f for f in features if f.table == atom.factor] if lifted_in[atom.factor] == k else []
        schema = table.schema  # once: each look at a classic DataFrame asks the JVM
        check_columns([str(c) for c in schema.names], atom, [c for _, c in keys], own)
        _check_integer_keys(schema, atom, [c for _, c in keys])
        # Every key and feature is tested, even where the Parquet footers count no null: a DataFrame read
        # from them may have replaced a column by an expression (the footers would say nothing of it).
        tested = list(dict.fromkeys([*(c for _, c in keys), *(f.column for f in own)]))
        conditions = [_col(c).isNotNull() for c in tested]
        for f in own if nan_rows else ():  # as the driver's path (pandas' isna): a NaN feature leaves the row out
            conditions.append(~F.isnan(_col(f.column).cast("double")))
        seen: dict[str, str] = {}
        for v, column in keys:  # a variable twice in one atom: the row's two columns must be equal
            if v in seen:
                conditions.append(_col(seen[v]) == _col(column))
            seen.setdefault(v, column)
        kept = table.where(functools.reduce(lambda a, b: a & b, conditions)) if conditions else table
        out.append(kept.select(*[_col(c).cast("bigint").alias(v) for v, c in seen.items()],
                               *[_col(f.column).cast("double").alias(f"__f{f.index}") for f in own]))
    return out


def _col(name: str) -> Any:
    """A column by its exact name (a dot or a space in it is not a struct access)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _check_integer_keys(schema: Any, atom: Any, columns: Sequence[str]) -> None:
    """A join key must be an integer column, as a pandas table's must (a cast would turn text into nulls)."""
    from pyspark.sql.types import IntegralType

    for c in columns:
        kind = schema[c].dataType
        if not isinstance(kind, IntegralType):
            raise InvalidArgumentError(argument=atom.factor, value=c,
                                       reason=f"a join key must be an integer column (found {kind.simpleString()})")


def table_statistics(parsed: Any, tables: Mapping[str, Any]) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Rows per table, and distinct values per ``(atom label, shared variable)`` (:func:`atom_labels`): what
    :func:`faq.learning.costs.join_rows` estimates the flat join's rows from.

    A table that reads local Parquet files is read from their footers, no job: its rows, and for a key
    column ``max - min + 1`` of its values (at most its rows) -- the distinct values of a dense key,
    more for a sparse one, so the join is never estimated larger than such a bound makes it.  The
    others are counted in ONE job (a union of one aggregate each: ``count`` and ``approx_count_distinct``
    of the shared variables' columns, about 5% off).

    >>> from faq.language import parse_query
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> l = spark.createDataFrame([(1, 2.0), (1, 3.0), (2, 5.0)], "o long, q double")
    >>> o = spark.createDataFrame([(1, 10.0), (2, 20.0)], "o long, a double")
    >>> table_statistics(parse_query("count() := l(o), o(o)"), {"l": l, "o": o})
    ({'l': 3, 'o': 2}, {('l', 'o'): 2, ('o', 'o'): 2})
    """
    from pyspark.sql import functions as F

    labels = atom_labels(parsed)
    shared = {v for v in dict.fromkeys(v for a in parsed.atoms for v in a.variables)
              if sum(v in a.variables for a in parsed.atoms) > 1}
    first: dict[str, Any] = {}
    for atom in parsed.atoms:
        first.setdefault(atom.factor, atom)
    wanted: dict[str, dict[str, list[tuple[str, str]]]] = {}  # table -> column -> [(label, variable)]
    for k, atom in enumerate(parsed.atoms):
        for v, column in zip(atom.variables, first[atom.factor].variables):
            if v in shared:
                wanted.setdefault(atom.factor, {}).setdefault(column, []).append((labels[k], v))
    rows: dict[str, int] = {}
    distinct: dict[tuple[str, str], int] = {}
    union, counted = None, []
    for name in dict.fromkeys(a.factor for a in parsed.atoms):
        columns = list(wanted.get(name, {}))
        found = footer_statistics(tables[name], columns)
        if found is None:
            part = tables[name].agg(F.count(F.lit(1)).cast("bigint").alias("n"), F.array(
                *[F.approx_count_distinct(_col(c)).cast("bigint") for c in columns] or [F.lit(0).cast("bigint")]
            ).alias("d")).select(F.lit(len(counted)).alias("i"), "n", "d")
            union = part if union is None else union.unionByName(part)
            counted.append(name)
            continue
        rows[name], spans = found
        for c in columns:
            for key in wanted[name][c]:
                distinct[key] = min(rows[name], spans[c])
    for row in (union.collect() if union is not None else []):
        name = counted[row["i"]]
        rows[name] = int(row["n"])
        for j, c in enumerate(wanted.get(name, {})):
            for key in wanted[name][c]:
                distinct[key] = int(row["d"][j])
    return rows, distinct


def footer_statistics(df: Any, columns: Sequence[str]) -> Optional[tuple[int, dict[str, int]]]:
    """``(rows, {column: max - min + 1})`` from the footers of the local Parquet files ``df`` reads (no
    job); None when it reads anything else, or a column has no integer statistics there.

    >>> footer_statistics(type("Frame", (), {"inputFiles": lambda self: []})(), ["k"]) is None
    True
    """
    import pyarrow.parquet as pq

    from faq.relation import local_files

    files = local_files(df)
    if not files or not all(path.endswith(".parquet") for path in files):
        return None
    rows, low, high = 0, {}, {}
    try:
        for path in files:
            meta = pq.read_metadata(path)
            names = [meta.schema.column(j).path for j in range(meta.num_columns)]
            rows += meta.num_rows
            for c in columns:
                if c not in names:
                    return None
                for g in range(meta.num_row_groups):
                    group = meta.row_group(g)
                    stats = group.column(names.index(c)).statistics
                    if group.num_rows == 0:
                        continue
                    if stats is None or not stats.has_min_max or not isinstance(stats.min, int):
                        return None
                    low[c] = min(low.get(c, stats.min), stats.min)
                    high[c] = max(high.get(c, stats.max), stats.max)
    except (OSError, ValueError):
        return None
    return rows, {c: high[c] - low[c] + 1 if c in low else 0 for c in columns}


def atom_labels(parsed: Any) -> list[str]:
    """A name per atom: its table's, numbered when the query uses the table twice.

    >>> from faq.language import parse_query
    >>> atom_labels(parse_query("count() := e(a, b), e(b, c), n(a)"))
    ['e#1', 'e#2', 'n']
    """
    from faq.learning.features import lifted_name

    tables = [a.factor for a in parsed.atoms]
    return [lifted_name(tables, k).replace("_", "#") if tables.count(tables[k]) > 1 else tables[k]
            for k in range(len(tables))]
