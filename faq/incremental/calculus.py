"""Calculus of change streams: differentiate and integrate.

A *change stream* is a Spark DataFrame of data columns plus a time column and
a diff column (by default ``time`` and ``diff``; every function takes them as
keywords).  A row ``(d, t, r)`` says "at time ``t`` the multiplicity of ``d``
changes by ``r``".  The changes every maintained object answers its batches
with are such a stream, the version as the time
(:func:`faq.incremental.change.change_stream`: ``time="version"``), and
pandas frames and Arrow tables are taken in-process as Spark DataFrames are
by Spark.

* :func:`differentiate` turns each change into a *blip*: the row ``(d, t, r)``
  and its retraction ``(d, t⁺, −r)`` at the instant just after ``t``.  After
  differentiation a row exists at exactly one instant.
* :func:`integrate` drops the retraction halves, giving back the original
  changes: ``integrate(differentiate(s)) == s`` (as multisets of rows).

There is no as-of join here: :func:`faq.asof_join` (:mod:`faq.asof`) joins
each left row with the right row valid at its time, for every input kind --
on Spark DataFrames by Spark's own sort and window
(:mod:`faq.asof.spark_window`) or by faq's kernel, whichever is priced
cheaper -- and kept current (``maintained=True``), including the locked mode
that never revises a joined row (:mod:`faq.asof.locked`).

Representing t⁺
---------------
``t⁺`` is not a value of the time type (there is no "next" timestamp or
double, and adding an epsilon would collide with real times).  Instead
:func:`differentiate` adds an integer *tick* column (``__tick`` by default):
``0`` on the change at ``t`` and ``1`` on its retraction, which stands for
``t⁺``.  Instants are ordered lexicographically by ``(time, tick)``, so
``(t, 1)`` sorts after ``(t, 0)`` and before ``(t', 0)`` for every later
``t' > t`` -- for any orderable time type (integers, doubles, dates,
timestamps, strings), since the time value itself is never computed with.
Order a differentiated stream with ``orderBy(time, tick)``.

Blips are how a join locks its rows: differentiate the left stream (say
orders), so each order exists only at its own instant ``t`` and is retracted
at ``t⁺``; join it with the right side as it stands at ``t``; integrate.  A
right change at a later time meets no order row, and the joined rows are
never revised -- the locked as-of join (:mod:`faq.asof.locked`).

Examples
--------
>>> from faq.spark import get_session
>>> spark = get_session()
>>> s = spark.createDataFrame([("a", 1, 1)], ["item", "time", "diff"])
>>> integrate(differentiate(s)).collect()
[Row(item='a', time=1, diff=1)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from faq.errors import (
    AlreadyDifferentiatedError,
    ColumnRoleError,
    DiffTypeError,
    MissingColumnError,
    NotDifferentiatedError,
    TimeTypeError,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

TIME = "time"
DIFF = "diff"
TICK = "__tick"


# --- helpers ----------------------------------------------------------------------------


def _col(name: str) -> "Column":
    """A column reference by exact name (dots and backticks are not interpreted)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _types(df: "DataFrame") -> dict[str, "DataType"]:
    return {f.name: f.dataType for f in df.schema.fields}


def _require(df: "DataFrame", columns: Sequence[str], source: str) -> None:
    for c in columns:
        if c not in df.columns:
            raise MissingColumnError(column=c, available=df.columns, source=source)


def _is_time_type(dt: "DataType") -> bool:
    from pyspark.sql import types as T

    scalar = (
        T.NumericType,
        T.DateType,
        T.TimestampType,
        T.TimestampNTZType,
        T.StringType,
        T.BooleanType,
        T.BinaryType,
        T.DayTimeIntervalType,
        T.YearMonthIntervalType,
    )
    return isinstance(dt, scalar)


def _check_stream(stream: "DataFrame", time: str, diff: str, source: str) -> None:
    if time == diff:
        raise ColumnRoleError(source=source, column=time, roles=["time", "diff"])
    _require(stream, [time, diff], source)
    types = _types(stream)
    if not _is_time_type(types[time]):
        raise TimeTypeError(source=source, column=time, found=types[time].simpleString())
    from pyspark.sql import types as T

    if not isinstance(types[diff], T.NumericType):
        raise DiffTypeError(source=source, column=diff, found=types[diff].simpleString())


# --- differentiate / integrate -----------------------------------------------------------


def differentiate(
    stream: "DataFrame", *, time: str = TIME, diff: str = DIFF, tick: str = TICK
) -> "DataFrame":
    """Turn each change into a blip: the change at ``t`` and its retraction at ``t⁺``.

    Parameters
    ----------
    stream : pyspark.sql.DataFrame, pandas.DataFrame or pyarrow.Table
        A change stream: data columns, a time column and a numeric diff
        column.  A Spark stream is differentiated by Spark; pandas and Arrow
        in-process, into the same kind (the same rows, each row followed by
        its retraction).
    time, diff : str
        Names of the time and diff columns.
    tick : str
        Name of the tick column to add; must not exist in ``stream``.

    Returns
    -------
    pyspark.sql.DataFrame
        ``stream``'s columns plus ``tick`` (int): for every input row, the row
        itself with tick ``0`` and a copy with tick ``1`` (standing for
        ``t⁺``, see the module docstring) and diff ``−diff``.  Twice as many
        rows; the input is read once.

    Raises
    ------
    MissingColumnError
        ``time`` or ``diff`` is not a column.
    TimeTypeError, DiffTypeError
        The time column is not an orderable scalar, or the diff column not numeric.
    AlreadyDifferentiatedError
        ``stream`` already has a ``tick`` column.
    ColumnRoleError
        ``time == diff``.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> s = spark.createDataFrame([("a", 1, 1), ("b", 3, 2)], ["item", "time", "diff"])
    >>> differentiate(s).orderBy("time", "__tick").show()
    +----+----+----+------+
    |item|time|diff|__tick|
    +----+----+----+------+
    |   a|   1|   1|     0|
    |   a|   1|  -1|     1|
    |   b|   3|   2|     0|
    |   b|   3|  -2|     1|
    +----+----+----+------+
    <BLANKLINE>
    """
    if not _is_spark(stream):
        return _differentiated_table(stream, time, diff, tick)
    from pyspark.sql import functions as F

    _check_stream(stream, time, diff, "differentiate")
    if tick in stream.columns:
        raise AlreadyDifferentiatedError(column=tick)
    ticked = stream.withColumn(tick, F.explode(F.array(F.lit(0), F.lit(1))))
    t = _col(tick)
    d = _col(diff)
    return ticked.select(
        *[(F.when(t == 0, d).otherwise(-d).alias(diff) if c == diff else _col(c)) for c in stream.columns],
        t,
    )


def integrate(
    stream: "DataFrame", *, time: str = TIME, diff: str = DIFF, tick: str = TICK
) -> "DataFrame":
    """Drop the retraction halves (tick ``1``, i.e. ``t⁺``) of a differentiated stream.

    ``integrate(differentiate(s))`` has the same rows as ``s``.  Applied after
    a join, it keeps each joined row as it was at its own instant and never
    its later retraction -- which is how a join locks its rows (module notes).

    Parameters
    ----------
    stream : pyspark.sql.DataFrame, pandas.DataFrame or pyarrow.Table
        A differentiated stream (the output of :func:`differentiate`, possibly
        filtered or joined since); pandas and Arrow are integrated in-process.
    time, diff : str
        Names of the time and diff columns (checked to exist).
    tick : str
        Name of the tick column, which is removed.

    Returns
    -------
    pyspark.sql.DataFrame
        The rows with tick ``0``, without the tick column.

    Raises
    ------
    NotDifferentiatedError
        ``stream`` has no ``tick`` column.
    MissingColumnError, TimeTypeError, DiffTypeError, ColumnRoleError
        As for :func:`differentiate`.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> s = spark.createDataFrame([("a", 1, 1), ("b", 3, 2)], ["item", "time", "diff"])
    >>> integrate(differentiate(s)).orderBy("time").show()
    +----+----+----+
    |item|time|diff|
    +----+----+----+
    |   a|   1|   1|
    |   b|   3|   2|
    +----+----+----+
    <BLANKLINE>
    """
    if not _is_spark(stream):
        return _integrated_table(stream, time, diff, tick)
    _check_stream(stream, time, diff, "integrate")
    if tick not in stream.columns:
        raise NotDifferentiatedError(column=tick, available=stream.columns)
    return stream.where(_col(tick) == 0).select(*[_col(c) for c in stream.columns if c != tick])


# --- the same in-process: pandas frames and Arrow tables ----------------------------------------


def _is_spark(stream: Any) -> bool:
    from faq.spark import is_dataframe

    return is_dataframe(stream)


def _checked_table(stream: Any, time: str, diff: str, source: str) -> tuple[Any, bool]:
    """``stream`` as an Arrow table (and whether it came as pandas), its time and diff columns checked as
    :func:`_check_stream` checks a Spark stream's."""
    import pyarrow as pa

    from_pandas = not isinstance(stream, pa.Table)
    table = pa.Table.from_pandas(stream, preserve_index=False) if from_pandas else stream
    if time == diff:
        raise ColumnRoleError(source=source, column=time, roles=["time", "diff"])
    for c in (time, diff):
        if c not in table.column_names:
            raise MissingColumnError(column=c, available=table.column_names, source=source)
    kind = table.schema.field(time).type
    if pa.types.is_nested(kind) or pa.types.is_null(kind):
        raise TimeTypeError(source=source, column=time, found=str(kind))
    if not (pa.types.is_integer(table.schema.field(diff).type) or pa.types.is_floating(table.schema.field(diff).type)):
        raise DiffTypeError(source=source, column=diff, found=str(table.schema.field(diff).type))
    return table, from_pandas


def _differentiated_table(stream: Any, time: str, diff: str, tick: str) -> Any:
    """:func:`differentiate` in-process: each row, then its retraction (tick 1, diff negated), side by side."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table, from_pandas = _checked_table(stream, time, diff, "differentiate")
    if tick in table.column_names:
        raise AlreadyDifferentiatedError(column=tick)
    n = table.num_rows
    doubled = table.take(pa.array(np.repeat(np.arange(n, dtype=np.int64), 2)))
    ticks = np.tile(np.array([0, 1], dtype=np.int32), n)
    d = doubled.column(diff)
    signed = pc.if_else(pa.array(ticks == 0), d, pc.negate(d))
    out = doubled.set_column(doubled.column_names.index(diff), diff, signed).append_column(tick, pa.array(ticks))
    return out.to_pandas() if from_pandas else out


def _integrated_table(stream: Any, time: str, diff: str, tick: str) -> Any:
    """:func:`integrate` in-process: the rows with tick 0, without the tick column."""
    import pyarrow.compute as pc

    table, from_pandas = _checked_table(stream, time, diff, "integrate")
    if tick not in table.column_names:
        raise NotDifferentiatedError(column=tick, available=table.column_names)
    out = table.filter(pc.equal(table.column(tick), 0)).drop_columns([tick])
    return out.to_pandas() if from_pandas else out
