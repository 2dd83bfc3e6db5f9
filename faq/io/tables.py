"""Tables of rows as factors: CSV and Parquet read by Spark, and :func:`read_factor` by extension.

A table's columns are the factor's variables and (optionally) a value
column; without a value column every row is the semiring's one (a relation).
Writing a factor as a table is :func:`faq.io.writers.write_table`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

from faq.errors import InvalidArgumentError, MissingColumnError, NullKeyError
from faq.factor import VALUE, Factor
from faq.io._common import (
    FORMATS,
    PathLike,
    check_variables,
    default_name,
    drop_zeros,
    format_of,
    malformed_if_unreadable,
    resolve_value,
    session,
    spark_columns,
    spark_read,
)
from faq.io.edges import read_edge_list
from faq.io.matrix_market import read_matrix_market
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_ROW_ID = "__faq_row_id"  # the order of rows in the file, for the first row with a null key


def read_csv(
    path: PathLike,
    *,
    variables: Sequence[str] | None = None,
    value: str | None = VALUE,
    semiring: Union[str, Semiring] = "counting",
    spark: "SparkSession | None" = None,
    name: str | None = None,
    validate: bool = False,
) -> Factor:
    """Read a CSV file with a header row (plain or ``.gz``) into a factor.

    Read by Spark with ``header`` and ``inferSchema`` (one pass over the file
    to infer types), then one more pass checks the variable columns for nulls
    (an empty field): a null key would join like any other key.

    Parameters
    ----------
    path : str or path-like
        A file, a directory of part files, or a glob.
    variables : sequence of str, optional
        Default: every column but the value column.
    value : str or None
        Value column.  ``None``, or a missing column named exactly
        ``"value"``, makes every row one (a relation).  Any other missing name
        raises :class:`~faq.errors.MissingColumnError`.
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default: the file name without extensions.
    validate : bool
        Also run :meth:`Factor.validate` (one more Spark job) for null / NaN
        values.

    Raises
    ------
    InputNotFoundError
    MissingColumnError
        A named variable or value column is not in the file.
    NullKeyError
        A variable column holds a null; ``path``, ``column``, ``count`` and the
        first such ``row`` (JSON) are in its parameters.
    MalformedInputError
        Spark cannot read the file: corrupt, or a truncated ``.gz``.

    Notes
    -----
    Integer variable columns are widened to ``bigint``; for a boolean
    semiring a numeric value column means ``value != 0``; rows whose value is
    the semiring's zero are dropped; repeated keys are kept.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> f = read_csv(scratch_path("r.csv", "a,b\\n1,2\\n2,3\\n"))
    >>> f.variables, f.value, f.count()
    (('a', 'b'), 'value', 2)
    """
    reader = session(spark).read
    return _load_table(os.fspath(path), lambda p: reader.csv(p, header=True, inferSchema=True),
                       variables, value, semiring, name, validate)


def read_parquet(
    path: PathLike,
    *,
    variables: Sequence[str] | None = None,
    value: str | None = VALUE,
    semiring: Union[str, Semiring] = "counting",
    spark: "SparkSession | None" = None,
    name: str | None = None,
    validate: bool = False,
) -> Factor:
    """Read Parquet (a file or a Spark output directory) into a factor.

    Same parameters and rules as :func:`read_csv`; the column types come
    from the Parquet schema.

    Returns
    -------
    Factor

    Raises
    ------
    InputNotFoundError, MissingColumnError, NullKeyError, MalformedInputError, ValueTypeMismatchError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> from faq.io import scratch_path, write_table
    >>> p = scratch_path("t.parquet")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> [tuple(r) for r in read_parquet(p).df.collect()]
    [(1, 2, 5)]
    """
    return _load_table(os.fspath(path), session(spark).read.parquet, variables, value, semiring, name, validate)


def read_factor(path: PathLike, *, format: str | None = None, **kw: Any) -> Factor:
    """Read a factor, choosing the loader by the file extension.

    ``.csv``/``.csv.gz`` -> :func:`read_csv`; ``.parquet`` (file or
    directory) -> :func:`read_parquet`; ``.mtx``/``.mtx.gz`` ->
    :func:`read_matrix_market`; anything else (``.txt``, ``.tsv``,
    ``.edges``, ``.gz``) -> :func:`read_edge_list`.  ``format`` (one of
    ``"csv"``, ``"parquet"``, ``"mtx"``, ``"edges"``) overrides the guess,
    e.g. for a header-less CSV edge list such as SNAP's
    ``soc-sign-bitcoinotc.csv.gz`` (``format="edges"``).  Other keywords go to
    the loader.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> read_factor(scratch_path("g.edges", "1 2\\n")).variables
    ('src', 'dst')
    """
    path = os.fspath(path)
    fmt = format or format_of(path)
    if fmt not in FORMATS:
        raise InvalidArgumentError("format", format, f"must be one of {', '.join(FORMATS)}")
    loader = {"csv": read_csv, "parquet": read_parquet, "mtx": read_matrix_market, "edges": read_edge_list}[fmt]
    return loader(path, **kw)


# --- helpers -------------------------------------------------------------------------------


def _load_table(
    path: str,
    read: Callable[[str], "DataFrame"],
    variables: Sequence[str] | None,
    value: str | None,
    semiring: Union[str, Semiring],
    name: str | None,
    validate: bool,
) -> Factor:
    """What read_csv and read_parquet share: read, check the columns and the keys, build the factor."""
    semiring = get_semiring(semiring)
    name = name or default_name(path)
    with malformed_if_unreadable(path):  # Spark reads the file here (a schema, then the null-key check)
        df = spark_read(path, read)
        variables, value = _factor_columns(df.columns, variables, value, path)
        _raise_on_null_keys(df, variables, value, name, path)
    factor = _table_factor(df, variables, value, semiring, name)
    return factor.validate() if validate else factor


def _factor_columns(
    columns: Sequence[str], variables: Sequence[str] | None, value: str | None, source: str
) -> tuple[tuple[str, ...], str | None]:
    """The variable columns (default: all but the value column) and the value column (None: a relation)."""
    value = resolve_value(value, columns, source)
    variables = check_variables([c for c in columns if c != value] if variables is None else variables)
    for v in variables:
        if v not in columns:
            raise MissingColumnError(column=v, available=list(columns), source=source)
    return variables, value


def _raise_on_null_keys(
    df: "DataFrame", variables: Sequence[str], value: str | None, name: str, path: str
) -> None:
    """Raise NullKeyError if a variable column holds a null (an empty CSV field, a Parquet null).

    A null key would join like any other key and give a wrong answer, so it is
    refused at load.  The check is one Spark aggregate (one row back: a null
    count per variable column, which for Parquet reads only those columns);
    only when it finds nulls does a second job look up the first such row.
    """
    from pyspark.sql import functions as F

    if not variables:
        return
    counts = df.agg(*[F.count_if(F.col(v).isNull()).alias(f"nulls{i}") for i, v in enumerate(variables)]).first()
    for i, v in enumerate(variables):
        if counts[f"nulls{i}"]:
            row = _first_row_with_null(df, v, [*variables, *([value] if value is not None else [])])
            raise NullKeyError(factor=name, column=v, count=int(counts[f"nulls{i}"]), path=path, row=row)


def _first_row_with_null(df: "DataFrame", column: str, shown: Sequence[str]) -> str:
    """Error path only: the first row (in file order) whose ``column`` is null, as JSON of the ``shown`` columns.

    File order is a row id that follows the partitions, then the position within each.
    """
    from pyspark.sql import functions as F

    rows = df.select(*shown, F.monotonically_increasing_id().alias(_ROW_ID)).where(F.col(column).isNull())
    row_text = F.to_json(F.struct(*shown), {"ignoreNullFields": "false"})  # the null shows as null
    return rows.agg(F.min_by(row_text, F.col(_ROW_ID))).first()[0]  # one row


def _table_factor(
    df: "DataFrame", variables: tuple[str, ...], value: str | None, semiring: Semiring, name: str
) -> Factor:
    """The factor of a table: bigint integer keys, the value column (or the semiring's one), no zeros."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    # Integer variables become bigint so they join with graph and matrix factors.
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    keys = [
        F.col(v).cast("bigint").alias(v) if isinstance(df.schema[v].dataType, integral) else F.col(v) for v in variables
    ]
    if value is None:
        df = df.select(*keys, spark_columns(semiring).one().alias(VALUE))
    else:
        v = F.col(value)
        if semiring.value_type == "boolean" and isinstance(df.schema[value].dataType, T.NumericType):
            v = v != F.lit(0)  # non-zero means true
        df = df.select(*keys, v.alias(VALUE))
    factor = Factor.from_dataframe(df, variables, semiring, VALUE, name=name)
    return replace(factor, df=drop_zeros(factor.df, semiring))
