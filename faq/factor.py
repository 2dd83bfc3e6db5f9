"""Factors in listing representation: a DataFrame of (variables..., value) rows.

A :class:`Factor` is immutable: a Spark DataFrame, the ordered names of its
variable columns, the name of its value column and the semiring the values
live in.  One row per non-zero entry; :meth:`Factor.normalize` ⊕-merges rows
with equal keys and drops zeros.

Examples
--------
>>> from faq.spark import get_session
>>> from faq.factor import Factor
>>> spark = get_session()
>>> df = spark.createDataFrame([(1, 2, 3), (1, 2, 4), (2, 3, 0)], ["i", "j", "value"])
>>> f = Factor.from_dataframe(df, ["i", "j"], "counting").normalize()
>>> sorted(map(tuple, f.df.collect()))
[(1, 2, 7)]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from faq.errors import (
    InvalidArgumentError,
    InvalidFactorValueError,
    MissingColumnError,
    NullKeyError,
    ValueTypeMismatchError,
)
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.relation import Relation

VALUE = "value"

# Spark types a value column may be cast from, per semiring value type, without
# losing meaning (an int column is fine for a bigint or double semiring).
_CASTABLE = {
    "bigint": {"tinyint", "smallint", "int", "bigint"},
    "double": {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"},
    "boolean": {"boolean"},
    # a TupleSemiring's (or an array ring's) values: one array of numbers a row
    "array<double>": {f"array<{t}>" for t in ("tinyint", "smallint", "int", "bigint", "float", "double")},
}


@dataclass(frozen=True, init=False)
class Factor:
    """An immutable factor ψ_S in listing representation.

    Parameters
    ----------
    df : pyspark.sql.DataFrame, optional
        Holds at least the variable columns and the value column.
    variables : tuple of str
        Names of the variable columns, in order (the factor's arity).
    semiring : Semiring
        The semiring of the values.
    value : str
        Name of the value column (default ``"value"``).
    name : str
        Used in messages.
    relation : Relation, optional
        The rows instead of ``df``: held on the driver (numpy columns, the
        DataFrame made only when a step needs Spark) or distributed
        (:class:`faq.relation.Relation`).  ``df``, when given, wins.

    Notes
    -----
    Build factors with :meth:`from_dataframe` (which checks the schema and
    casts the value column) or with the loaders of :mod:`faq.io`.  The
    factor keeps its rows as a :class:`~faq.relation.Relation`
    (:attr:`relation`); :attr:`df` is its Spark DataFrame.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([(1, 2, 0.5), (2, 3, 2.0)], ["i", "j", "w"])
    >>> f = Factor.from_dataframe(df, ["i", "j"], "real", value="w", name="W")
    >>> f.variables, f.value, f.semiring.name, f.count()
    (('i', 'j'), 'w', 'real', 2)
    """

    relation: "Relation"
    variables: tuple[str, ...]
    semiring: Semiring
    value: str = VALUE
    name: str = "factor"

    def __init__(self, df: Any = None, variables: Sequence[str] = (), semiring: Any = None, value: str = VALUE,
                 name: str = "factor", *, relation: "Relation | None" = None) -> None:
        from faq.relation import Relation

        variables = tuple(variables)
        if df is not None:  # dataclasses.replace(factor, df=...) passes the old relation too: df wins
            relation = Relation.of(df, (*variables, value))
        elif relation is None:
            raise InvalidArgumentError(argument="df", value=None, reason="a factor needs a DataFrame or a Relation")
        elif relation.columns != (*variables, value):
            relation = Relation.of(relation, (*variables, value))
        for attribute, given in (("relation", relation), ("variables", variables),
                                 ("semiring", get_semiring(semiring)), ("value", value), ("name", name)):
            object.__setattr__(self, attribute, given)

    @property
    def df(self) -> "DataFrame":
        """The rows as a Spark DataFrame (held rows: made on the first call, in the session they name)."""
        return self.relation.frame

    @property
    def session(self) -> Any:
        """The session of the factor's rows (no Spark call, nor a start, for rows the driver holds)."""
        return self.relation.spark_session

    def dtypes(self) -> list[tuple[str, str]]:
        """``(column, Spark SQL type)`` of the variables and the value (no Spark call when held)."""
        return self.relation.dtypes()

    def with_df(self, df: "DataFrame") -> "Factor":
        """The same factor over the rows of ``df`` (same columns)."""
        from faq.relation import Relation

        return replace(self, relation=Relation.of(df, self.columns()))

    # -- construction -------------------------------------------------------

    @classmethod
    def from_dataframe(
        cls,
        df: "DataFrame",
        variables: Sequence[str],
        semiring: Union[str, Semiring] = "counting",
        value: str | None = VALUE,
        name: str = "factor",
        validate: bool = False,
    ) -> "Factor":
        """Make a factor from a DataFrame, checking its columns.

        Parameters
        ----------
        df : DataFrame
        variables : sequence of str
            Variable column names.
        semiring : str or Semiring
        value : str or None
            Value column.  ``None`` means every row has the value ``one``
            (a plain relation); a missing column named ``"value"`` is treated
            the same way.
        name : str
        validate : bool
            Also scan the data once for null keys and null/NaN values
            (:meth:`validate`).

        Raises
        ------
        MissingColumnError
            A variable or value column is not in ``df``.
        ValueTypeMismatchError
            The value column cannot hold the semiring's values.
        """
        from pyspark.sql import functions as F

        from faq.relation import sql_name
        from faq.semirings.spark_backend import columns as spark_columns, sql_forms

        semiring = get_semiring(semiring)
        variables = tuple(variables)
        columns = df.columns
        for v in variables:
            if v not in columns:
                raise MissingColumnError(column=v, available=columns, source=f"factor {name!r}")
        if value is None or (value == VALUE and value not in columns):
            value = VALUE if VALUE not in variables else "__value"
            forms = sql_forms(semiring)
            if forms is not None:  # SQL text: one call into Spark where Columns make one or more each
                df = df.selectExpr(*map(sql_name, variables), f"{forms.one} AS {sql_name(value)}")
            else:
                df = df.select(*[F.col(sql_name(v)) for v in variables], spark_columns(semiring).one().alias(value))
        elif value not in columns:
            raise MissingColumnError(column=value, available=columns, source=f"factor {name!r}")
        else:
            found = df.schema[value].dataType.simpleString()
            base = found.split("(")[0]
            if base not in _CASTABLE.get(semiring.value_type, {semiring.value_type}):
                raise ValueTypeMismatchError(
                    factor=name, column=value, found=found, semiring=semiring.name, expected=semiring.value_type
                )
            # SQL text: names, not paths (a dot or backtick in a name), and one call into Spark
            df = df.selectExpr(*map(sql_name, variables),
                               f"CAST({sql_name(value)} AS {semiring.value_type}) AS {sql_name(value)}")
        factor = cls(df=df, variables=variables, semiring=semiring, value=value, name=name)
        return factor.validate() if validate else factor

    def validate(self) -> "Factor":
        """Scan the data once; raise on null keys or null / NaN values.

        Returns the factor itself, so calls chain.

        Raises
        ------
        NullKeyError, InvalidFactorValueError
        """
        from pyspark.sql import functions as F

        checks = [F.sum(F.col(v).isNull().cast("bigint")).alias(f"k{i}") for i, v in enumerate(self.variables)]
        checks.append(F.sum(F.col(self.value).isNull().cast("bigint")).alias("null_value"))
        if self.semiring.value_type == "double":
            checks.append(F.sum(F.isnan(F.col(self.value)).cast("bigint")).alias("nan_value"))
        row = self.df.agg(*checks).first()  # one row of counts
        for i, v in enumerate(self.variables):
            if row[f"k{i}"]:
                raise NullKeyError(factor=self.name, column=v, count=int(row[f"k{i}"]))
        if row["null_value"]:
            raise InvalidFactorValueError(
                factor=self.name, column=self.value, problem="null", count=int(row["null_value"])
            )
        if self.semiring.value_type == "double" and row["nan_value"]:
            raise InvalidFactorValueError(
                factor=self.name, column=self.value, problem="NaN", count=int(row["nan_value"])
            )
        return self

    # -- transformations ----------------------------------------------------

    def normalize(self) -> "Factor":
        """⊕-merge rows with equal keys and drop rows whose value is zero."""
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns as spark_columns

        ops = spark_columns(self.semiring)
        value = F.col(self.value)
        if self.variables:
            merged = self.df.groupBy(*self.variables).agg(ops.sum(value).alias(self.value))
        else:
            merged = self.df.agg(ops.sum(value).alias(self.value))
        merged = merged.where(~ops.is_zero(F.col(self.value)) & F.col(self.value).isNotNull())
        return self.with_df(merged)

    def rename(self, variables: Sequence[str]) -> "Factor":
        """The same factor with its variable columns renamed, in order."""

        variables = tuple(variables)
        if len(variables) != len(self.variables):
            from faq.errors import InvalidArgumentError

            raise InvalidArgumentError(argument="variables", value=variables,
                                       reason=f"rename needs {len(self.variables)} names, got {len(variables)}")
        renames = {**dict(zip(variables, self.variables)), self.value: self.value}
        return replace(self, relation=self.relation.renamed(renames), variables=variables)  # held stays held

    def with_semiring(self, semiring: Union[str, Semiring], convert=None) -> "Factor":
        """Reinterpret the values in another semiring.

        Parameters
        ----------
        semiring : str or Semiring
        convert : Column -> Column, optional
            Maps a value to the new semiring; default is a cast to its type.
        """
        from pyspark.sql import functions as F

        from faq.relation import Relation

        semiring = get_semiring(semiring)
        new_value = convert(F.col(self.value)) if convert else F.col(self.value).cast(semiring.value_type)
        df = self.df.select(*self.variables, new_value.cast(semiring.value_type).alias(self.value))
        return replace(self, relation=Relation.of(df, self.columns()), semiring=semiring)

    def with_name(self, name: str) -> "Factor":
        """The same factor under another name."""
        return replace(self, name=name)

    # -- small results ------------------------------------------------------

    def count(self) -> int:
        """Number of rows: a Spark job, unless the driver holds the rows (:attr:`relation`)."""
        relation = self.relation
        return int(relation.rows) if relation.held else self.df.count()

    def scalar(self) -> Any:
        """The value of a factor with no variables (zero when it has no row).

        Raises :class:`~faq.errors.InvalidArgumentError` (a ``ValueError``) for
        factors with variables, or with several rows.
        """
        from faq.errors import InvalidArgumentError

        if self.variables:
            raise InvalidArgumentError(argument="factor", value=self.name,
                                       reason=f"it has variables {self.variables}; it is not a scalar")
        relation = self.relation
        if relation.held and self.value in relation.columns:  # held on the driver: no Spark job
            rows = [(v,) for v in relation.arrays[self.value][:2].tolist()]
        else:
            rows = self.df.select(self.value).limit(2).collect()  # at most 2 rows
        if not rows:
            return self.semiring.zero
        if len(rows) > 1:
            raise InvalidArgumentError(argument="factor", value=self.name,
                                       reason="it has several rows; normalize it first")
        return self.semiring.python_value(rows[0][0])

    def columns(self) -> list[str]:
        """Variable columns then the value column."""
        return [*self.variables, self.value]

    def __repr__(self) -> str:
        return (
            f"Factor({self.name!r}, variables={self.variables}, value={self.value!r}, "
            f"semiring={self.semiring.name!r})"
        )


def factor_of(
    data: Iterable[tuple],
    variables: Sequence[str],
    semiring: Union[str, Semiring] = "counting",
    name: str = "factor",
    spark=None,
) -> Factor:
    """Build a small factor from Python tuples ``(x1, ..., xk, value)``.

    Handy in notebooks and tests; the rows stay held on the driver.

    Parameters
    ----------
    data : iterable of tuples
        ``(x1, ..., xk, value)``: integer keys, then a value of the semiring
        (a tuple of numbers for an array ring).
    variables : sequence of str
        The k variable names.
    semiring : str or Semiring
    name : str
    spark : SparkSession, optional

    Returns
    -------
    Factor

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> f = factor_of([(0, 1, 2.0), (1, 2, 3.0)], ["i", "j"], "real", name="A")
    >>> f.variables, f.semiring.name
    (('i', 'j'), 'real')
    >>> factor_of([(0, (1.0, 2.0, 4.0))], ["i"], "moments").semiring.width    # an array ring's values
    3
    """
    from faq.spark import get_session

    spark = spark or get_session()
    semiring = get_semiring(semiring)
    variables = tuple(variables)
    rows = [tuple(r) for r in data]
    typed = [(*(int(x) for x in r[:-1]), semiring.python_value(r[-1])) for r in rows]
    # The driver has the rows: steps over this factor run in-process without a Spark call, and
    # the DataFrame is made when Spark first needs it (faq.relation.Relation.from_arrays).
    import numpy as np

    from faq.relation import Relation
    from faq.semirings.numpy_backend import as_values

    if len({len(r) for r in typed}) > 1 or (typed and len(typed[0]) != len(variables) + 1):
        raise InvalidArgumentError(argument="data", value=f"rows of {sorted({len(r) for r in typed})} values",
                                   reason=f"each row holds {len(variables)} keys and a value")
    columns = {v: np.array([r[i] for r in typed], dtype=np.int64) for i, v in enumerate(variables)}
    columns[VALUE] = as_values(semiring, [r[-1] for r in typed])  # (rows, w) for an array ring
    rows = Relation.from_arrays(columns, {**{v: "bigint" for v in variables}, VALUE: semiring.value_type}, spark)
    return Factor(relation=rows, variables=variables, semiring=semiring, value=VALUE, name=name)
