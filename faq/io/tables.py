"""Tables of rows as factors: CSV and Parquet, on the driver or by Spark, and :func:`read_factor` by extension.

A table's columns are the factor's variables and (optionally) a value
column; without a value column every row is the semiring's one (a relation).
Writing a factor as a table is :func:`faq.io.writers.write_table`.

A local file whose size fits the driver's fetch budget (``spark.faq.fetchMemory``)
is read with pyarrow into a factor held on the driver (:func:`_read_on_driver`):
no Spark job, and steps over it run in-process.  Anything else -- a glob,
a URI, a large file, columns of other types, or a table with a bad row -- is
read by Spark as before, with the same answer and the same errors.

Loading checks the rows in the one Spark job it runs anyway (an aggregate of
counts): a null key (:class:`~faq.errors.NullKeyError`), and a value no
semiring holds -- null, NaN, or a negative count under ``counting`` -- is
refused (:class:`~faq.errors.InvalidFactorValueError` naming the file, the
column and the first such row).  There is no option to drop or zero such
rows: a null is neither the semiring's zero nor its one, so any reading of
it changes the answer silently, and a file is fixed once where it is made
(``fillna``/``dropna``), whereas a stream, which cannot be re-read, has
``stream(..., nulls="drop")``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

from faq.errors import InvalidArgumentError, InvalidFactorValueError, MissingColumnError, NullKeyError
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
    from pyspark.sql import Column, DataFrame, SparkSession

_ROW_ID = "__faq_row_id"  # the order of rows in the file, for the first bad row


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

    Read on the driver with pyarrow when it is one local file within the
    fetch budget (module notes); else by Spark with ``header`` and
    ``inferSchema`` (one pass over the file to infer types), then one more
    pass checks the variable columns for nulls
    (an empty field): a null key would join like any other key; and the value
    column for nulls, NaN and (under ``counting``) negative numbers.

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
        Also run :meth:`Factor.validate` (one more Spark job; the load checks
        keys and values already).

    Returns
    -------
    Factor

    Raises
    ------
    InputNotFoundError
    MissingColumnError
        A named variable or value column is not in the file.
    NullKeyError
        A variable column holds a null; ``path``, ``column``, ``count`` and the
        first such ``row`` (JSON) are in its parameters.
    InvalidFactorValueError
        The value column holds a null, a NaN, or (``counting``) a negative
        number; ``problem`` (``"null"``, ``"NaN"``, ``"negative"``), ``path``,
        ``column``, ``count`` and the first such ``row`` (JSON) say which.
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
    path = os.fspath(path)
    held = _read_on_driver(path, "csv", variables, value, semiring, name, spark)
    if held is not None:
        return held.validate() if validate else held
    reader = session(spark).read
    return _load_table(path, lambda p: reader.csv(p, header=True, inferSchema=True),
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

    Same rules as :func:`read_csv`; the column types come from the Parquet
    schema.

    Parameters
    ----------
    path : str or path-like
        A Parquet file or a directory of part files.
    variables : sequence of str, optional
        Default: every column but the value column.
    value : str or None
        Value column (``None``: every row counts one).
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default: the file name without extensions.
    validate : bool
        Also run :meth:`Factor.validate`.

    Returns
    -------
    Factor

    Raises
    ------
    InputNotFoundError, MissingColumnError, NullKeyError, InvalidFactorValueError, MalformedInputError,
    ValueTypeMismatchError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> from faq.io import scratch_path, write_table
    >>> p = scratch_path("t.parquet")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> [tuple(r) for r in read_parquet(p).df.collect()]
    [(1, 2, 5)]
    """
    path = os.fspath(path)
    held = _read_on_driver(path, "parquet", variables, value, semiring, name, spark)
    if held is not None:
        return held.validate() if validate else held
    return _load_table(path, session(spark).read.parquet, variables, value, semiring, name, validate)


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

    Parameters
    ----------
    path : str or path-like
    format : {"csv", "parquet", "mtx", "edges"}, optional
        Overrides the guess from the extension.
    **kw
        The loader's keywords (``variables``, ``value``, ``semiring``, ``spark``, ``name`` ...).

    Returns
    -------
    Factor

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

#: Arrow types a table read on the driver may have (else Spark reads it: its type inference decides).
_DRIVER_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float", "double", "bool",
                 "string", "large_string")
#: A compressed file's size on disk times this: its rows' bytes, roughly (for the fetch budget).
_GZ_RATIO = 4


def _read_on_driver(path: str, fmt: str, variables: Sequence[str] | None, value: str | None,
                    semiring: Union[str, Semiring], name: str | None, spark: Any) -> Factor | None:
    """The table as a factor held on the driver -- read with pyarrow, no Spark job -- or None for Spark to read.

    Read here when the path is one local file (a Parquet directory too) whose size fits the driver's fetch
    budget (``spark.faq.fetchMemory``) and the session lets steps run in-process; the columns must be of
    plain types (integers, floats, booleans, strings: what Spark's CSV inference gives too; an empty CSV
    field is null, as for Spark).  A table with a null key or a value no semiring holds goes to Spark, whose
    load names the first bad row (:func:`_raise_on_bad_rows`): the errors are the same either way.
    """
    from faq.io._common import is_local, local_path

    if not is_local(path) or any(ch in path for ch in "*?["):
        return None
    local = local_path(path)
    if not (os.path.isfile(local) or (fmt == "parquet" and os.path.isdir(local))):
        return None
    spark = _driver_session(spark)
    from faq.placement_policy import fetch_limit

    limit = fetch_limit(spark)
    if limit is None or _size_on_disk(local) > limit:
        return None
    table = _arrow_table(local, fmt)
    if table is None or any(str(t) not in _DRIVER_TYPES for t in table.schema.types):
        return None
    semiring = get_semiring(semiring)
    variables, value = _factor_columns(table.column_names, variables, value, path)
    if any(table.column(v).null_count for v in variables) or _bad_values(table, value, semiring):
        return None  # Spark's load names the first bad row
    from faq.io.convert import from_pandas

    frame = table.select([*variables, *([value] if value else [])]).to_pandas()
    if value is not None and semiring.value_type == "boolean" and frame[value].dtype.kind in "iuf":
        frame[value] = frame[value] != 0  # non-zero means true, as the Spark load reads it
    return from_pandas(frame, list(variables), value, semiring, spark, name or default_name(path))


def _driver_session(spark: Any) -> Any:
    if spark is not None:
        return spark
    from faq.spark import session_for_driver_data

    return session_for_driver_data()


def _size_on_disk(local: str) -> int:
    if os.path.isdir(local):
        return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(local) for f in files)
    size = os.path.getsize(local)
    return size * _GZ_RATIO if local.endswith((".gz", ".bz2")) else size


def _arrow_table(local: str, fmt: str) -> Any:
    """The file as an Arrow table, or None when pyarrow cannot read it (Spark then reads it, and says why)."""
    import pyarrow as pa

    try:
        if fmt == "csv":
            import pyarrow.csv as pcsv

            return pcsv.read_csv(local, convert_options=pcsv.ConvertOptions(
                strings_can_be_null=True, null_values=[""], true_values=["true", "True", "TRUE"],
                false_values=["false", "False", "FALSE"]))
        import pyarrow.parquet as pq

        return pq.read_table(local)
    except (pa.ArrowException, OSError, ValueError):
        return None


def _bad_values(table: Any, value: str | None, semiring: Semiring) -> bool:
    """Whether the value column holds a null, a NaN or (under ``counting``) a negative number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if value is None:
        return False
    column = table.column(value)
    if column.null_count:
        return True
    if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
        return True
    numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
    return bool(semiring.counts and numeric and len(column) and pc.min(column).as_py() < 0)



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
    with malformed_if_unreadable(path):  # Spark reads the file here (a schema, then the keys' and values' check)
        df = spark_read(path, read)
        variables, value = _factor_columns(df.columns, variables, value, path)
        _raise_on_bad_rows(df, variables, value, semiring, name, path)
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


def _raise_on_bad_rows(
    df: "DataFrame", variables: Sequence[str], value: str | None, semiring: Semiring, name: str, path: str
) -> None:
    """Raise NullKeyError for a null key (an empty CSV field, a Parquet null), InvalidFactorValueError for a
    null, NaN or (under ``counting``) negative value.

    A null key would join like any other key, and a null or NaN value has no
    meaning in any semiring (Spark's sum skips a null, numpy's makes NaN), so
    each is refused at load.  The check is one Spark aggregate (one row back:
    counts per column; for Parquet it reads only those columns); only when it
    finds a bad row does a second job look up the first one.
    """
    from pyspark.sql import functions as F

    checks = {f"nulls{i}": F.col(v).isNull() for i, v in enumerate(variables)}
    problems = _value_problems(df, value, semiring)
    checks.update(problems)
    if not checks:
        return
    counts = df.agg(*[F.count_if(bad).alias(label) for label, bad in checks.items()]).first()
    shown = [*variables, *([value] if value is not None else [])]
    for i, v in enumerate(variables):
        if counts[f"nulls{i}"]:
            row = _first_row_where(df, F.col(v).isNull(), shown)
            raise NullKeyError(factor=name, column=v, count=int(counts[f"nulls{i}"]), path=path, row=row)
    for problem, bad in problems.items():
        if counts[problem]:
            raise InvalidFactorValueError(factor=name, column=value, problem=problem, count=int(counts[problem]),
                                          path=path, row=_first_row_where(df, bad, shown))


def _value_problems(df: "DataFrame", value: str | None, semiring: Semiring) -> dict[str, "Column"]:
    """The conditions that make a value no value of ``semiring``, by the name of the problem."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if value is None:
        return {}
    v = F.col(value)
    kind = df.schema[value].dataType
    problems = {"null": v.isNull()}
    if isinstance(kind, (T.FloatType, T.DoubleType)):
        problems["NaN"] = F.isnan(v)
    if semiring.counts and isinstance(kind, T.NumericType):
        problems["negative"] = v < F.lit(0)
    return problems


def _first_row_where(df: "DataFrame", bad: "Column", shown: Sequence[str]) -> str:
    """Error path only: the first row (in file order) where ``bad`` holds, as JSON of the ``shown`` columns.

    File order is a row id that follows the partitions, then the position within each.
    """
    from pyspark.sql import functions as F

    rows = df.select(*shown, F.monotonically_increasing_id().alias(_ROW_ID)).where(bad)
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
