"""Tables of rows as factors: CSV and Parquet read by Spark, and :func:`read_factor` by extension.

A table's columns are the factor's variables and (optionally) a value
column; without a value column every row is the semiring's one (a relation).
Writing a factor as a table is :func:`faq.io.writers.write_table`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence, Union

from faq.errors import InvalidArgumentError, MissingColumnError
from faq.factor import VALUE, Factor
from faq.io._common import (
    FORMATS,
    PathLike,
    check_variables,
    default_name,
    drop_zeros,
    format_of,
    resolve_value,
    session,
    spark_read,
)
from faq.io.edges import read_edge_list
from faq.io.matrix_market import read_matrix_market
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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

    Read by Spark with ``header`` and ``inferSchema`` (one extra pass over
    the file to infer types).

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
        Also run :meth:`Factor.validate` (one Spark job) for null keys and
        null / NaN values.

    Notes
    -----
    Integer variable columns are widened to ``bigint``; for a boolean
    semiring a numeric value column means ``value != 0``; rows whose value is
    the semiring's zero are dropped; repeated keys are kept.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "r.csv")
    >>> _ = open(p, "w").write("a,b\\n1,2\\n2,3\\n")
    >>> f = read_csv(p)
    >>> f.variables, f.value, f.count()
    (('a', 'b'), 'value', 2)
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    spark = session(spark)
    name = name or default_name(path)
    df = spark_read(path, lambda p: spark.read.csv(p, header=True, inferSchema=True))
    return _table_factor(df, variables, value, semiring, name, path, validate)


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
    InputNotFoundError, MissingColumnError, ValueTypeMismatchError

    Examples
    --------
    >>> import os, tempfile
    >>> from faq.factor import factor_of
    >>> from faq.io import write_table
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "t.parquet")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> [tuple(r) for r in read_parquet(p).df.collect()]
    [(1, 2, 5)]
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    spark = session(spark)
    name = name or default_name(path)
    df = spark_read(path, spark.read.parquet)
    return _table_factor(df, variables, value, semiring, name, path, validate)


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
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "g.edges")
    >>> _ = open(p, "w").write("1 2\\n")
    >>> read_factor(p).variables
    ('src', 'dst')
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    fmt = format or format_of(path)
    if fmt not in FORMATS:
        raise InvalidArgumentError("format", format, f"must be one of {', '.join(FORMATS)}")
    loader = {"csv": read_csv, "parquet": read_parquet, "mtx": read_matrix_market, "edges": read_edge_list}[fmt]
    return loader(path, **kw)


# --- helpers -------------------------------------------------------------------------------


def _table_factor(
    df: "DataFrame",
    variables: Sequence[str] | None,
    value: str | None,
    semiring: Union[str, Semiring],
    name: str,
    source: str,
    validate: bool,
) -> Factor:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    semiring = get_semiring(semiring)
    columns = df.columns
    value = resolve_value(value, columns, source)
    if variables is None:
        variables = [c for c in columns if c != value]
    variables = check_variables(variables)
    for v in variables:
        if v not in columns:
            raise MissingColumnError(column=v, available=columns, source=source)
    # Integer variables become bigint so they join with graph and matrix factors.
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    keys = [
        F.col(v).cast("bigint").alias(v) if isinstance(df.schema[v].dataType, integral) else F.col(v) for v in variables
    ]
    if value is None:
        df = df.select(*keys, semiring.one_col().alias(VALUE))
    else:
        v = F.col(value)
        if semiring.value_type == "boolean" and isinstance(df.schema[value].dataType, T.NumericType):
            v = v != F.lit(0)  # non-zero means true
        df = df.select(*keys, v.alias(VALUE))
    factor = Factor.from_dataframe(df, variables, semiring, VALUE, name=name)
    factor = replace(factor, df=drop_zeros(factor.df, semiring))
    return factor.validate() if validate else factor
