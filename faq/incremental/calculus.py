"""Calculus of change streams: differentiate, integrate, and the as-of join built on them.

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
* :func:`asof_join` joins each left row with the right row valid at the left
  row's time -- for the same keys, the right row with the greatest time at or
  before it -- like ``pandas.merge_asof(left, right, on=time, by=keys,
  direction="backward")``.

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

The as-of join deliberately breaks view maintenance
---------------------------------------------------
Read the as-of join as ``differentiate → join → integrate``.  Differentiate the
left stream (say orders): each order exists only at its own instant ``t`` and
is retracted at ``t⁺``.  Join that blip with the right side (say prices) as it
stands at ``t`` -- the latest price at or before ``t`` for the order's keys.
Then integrate: drop the retraction half, keeping the joined row.

Because the order was retracted at ``t⁺``, a price change at any later time
meets no order row: the join's delta for it is empty, and the joined rows
already produced are **never revised**.  A maintained view of the ordinary
join ``orders ⋈ prices`` would retract the order's old pairing and insert the
new one; the as-of join deliberately does not maintain its joined rows that
way.  That is what an as-of join means: an order placed at 10:00 is locked to
the price at 10:00, a historical fact, and repricing it when the price moves
at 10:05 would be wrong.  Callers that keep an as-of join result as a view
must therefore only *add* joined rows for new left rows; changes to the right
side affect only left rows that come after them.

Examples
--------
>>> from faq.spark import get_session
>>> spark = get_session()
>>> orders = spark.createDataFrame([("ibm", 1, 10), ("ibm", 5, 20)], ["sym", "time", "qty"])
>>> prices = spark.createDataFrame([("ibm", 0, 100.0), ("ibm", 3, 101.0)], ["sym", "time", "price"])
>>> asof_join_window(orders, prices, on="sym").orderBy("time").show()
+---+----+---+-----+
|sym|time|qty|price|
+---+----+---+-----+
|ibm|   1| 10|100.0|
|ibm|   5| 20|101.0|
+---+----+---+-----+
<BLANKLINE>

A later price change (99.0 at time 2) does not reprice the order at time 1:

>>> later = prices.union(spark.createDataFrame([("ibm", 2, 99.0)], prices.schema))
>>> asof_join_window(orders, later, on="sym").where("time = 1").collect()
[Row(sym='ibm', time=1, qty=10, price=100.0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from faq.errors import (
    AlreadyDifferentiatedError,
    ColumnClashError,
    ColumnRoleError,
    ColumnTypeMismatchError,
    DiffTypeError,
    InvalidJoinTypeError,
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
HOW = ("left", "inner")
SUFFIXES = ("_x", "_y")

# Internal column names of asof_join's union (never visible in its result).
_LEFT = "__faq_asof_left"
_RIGHT = "__faq_asof_right"
_SIDE = "__faq_asof_side"
_MATCH = "__faq_asof_match"

Keys = Union[str, Sequence[str], None]


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


def _is_orderable(dt: "DataType") -> bool:
    """Whether Spark can sort by a column of this type (maps and variants cannot)."""
    from pyspark.sql import types as T

    if isinstance(dt, T.MapType) or dt.typeName() == "variant":
        return False
    if isinstance(dt, T.ArrayType):
        return _is_orderable(dt.elementType)
    if isinstance(dt, T.StructType):
        return all(_is_orderable(f.dataType) for f in dt.fields)
    return True


def _compatible(a: "DataType", b: "DataType") -> bool:
    """Whether Spark compares and unions the two types without surprises."""
    from pyspark.sql import types as T

    if a.simpleString() == b.simpleString():
        return True
    if isinstance(a, T.NumericType) and isinstance(b, T.NumericType):
        return True
    moments = (T.DateType, T.TimestampType, T.TimestampNTZType)
    return isinstance(a, moments) and isinstance(b, moments)


def _key_list(on: Keys) -> list[str]:
    if on is None:
        return []
    if isinstance(on, str):
        return [on]
    return list(dict.fromkeys(on))


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
    its later retraction -- which is how :func:`asof_join` locks its rows.

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


# --- as-of join -------------------------------------------------------------------------


def asof_join_window(
    left: "DataFrame",
    right: "DataFrame",
    on: Keys = None,
    time: str = TIME,
    *,
    how: str = "left",
    allow_exact_matches: bool = True,
    suffixes: tuple[Optional[str], Optional[str]] = SUFFIXES,
    tiebreak: Keys = None,
    right_time: Optional[str] = None,
) -> "DataFrame":
    """Join each left row with the right row valid at its time, never revised later.

    For each left row, the matched right row has the same values in the key
    columns ``on`` and the greatest ``time`` at or before the left row's time
    (strictly before with ``allow_exact_matches=False``).  This is
    ``pandas.merge_asof(left, right, on=time, by=on, direction="backward")``
    on Spark.  The joined rows are locked at the left row's time: a right row
    added later (at a later time) does not revise them; see the module
    docstring for why this deliberately breaks view maintenance.

    Parameters
    ----------
    left, right : pyspark.sql.DataFrame
        Both hold the key columns and the time column.
    on : str or sequence of str, optional
        Key columns (pandas' ``by``); ``None`` or ``[]`` joins on time alone
        (then all rows are ordered in one Spark task: fine for small data).
    time : str
        The time column of both sides (pandas' ``on``).  Rename a side's
        column first if the names differ.
    how : {"left", "inner"}
        ``"left"`` keeps left rows without a match, with nulls in the right
        columns; ``"inner"`` drops them.
    allow_exact_matches : bool
        Whether a right row at exactly the left row's time matches.
    suffixes : pair of str or None
        Added to the names of non-key columns present on both sides (left,
        right), as pandas does; ``None`` or ``""`` leaves that side's name.
    tiebreak : str or sequence of str, optional
        Right columns that order right rows sharing keys and time: the row
        that sorts last wins (pandas takes the last in row order, which Spark
        does not have).  Default: all of right's other (orderable) columns,
        in order, so the result is deterministic.
    right_time : str, optional
        If given, add a column of this name holding the matched right row's
        time (null without a match).

    Returns
    -------
    pyspark.sql.DataFrame
        Left's columns, then right's columns other than keys and time (then
        ``right_time``), like pandas.  One row per left row (``how="left"``)
        or per matched left row (``how="inner"``).

    Raises
    ------
    MissingColumnError
        A key, time or tiebreak column is missing.
    ColumnTypeMismatchError
        A key or time column has incompatible types on the two sides.
    TimeTypeError
        The time column is not an orderable scalar.
    ColumnRoleError
        The time column is also a key.
    ColumnClashError
        Two result columns would have the same name.
    InvalidJoinTypeError
        ``how`` is not ``"left"`` or ``"inner"``.

    Notes
    -----
    Nulls: right rows with a null key or time never match; left rows with a
    null key or time get no match (pandas refuses null times).  Right rows
    whose other columns are null do match (the result then holds those
    nulls).

    Implementation: one union of both sides, partitioned by the keys and
    sorted by ``(time, side)`` -- at equal times right rows sort before left
    rows (after them with ``allow_exact_matches=False``), the ``t`` versus
    ``t⁺`` of :func:`differentiate` -- and a running ``last(ignorenulls)``
    window that carries the latest right row forward to each left row.  One
    shuffle and sort, no Python UDF, nothing collected.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> trades = spark.createDataFrame(
    ...     [(1, "a", 5), (4, "a", 7), (0, "b", 1), (9, "b", 2)], ["time", "sym", "v"])
    >>> quotes = spark.createDataFrame(
    ...     [(1, "a", 10), (3, "a", 11), (2, "b", 20)], ["time", "sym", "v"])
    >>> asof_join_window(trades, quotes, on="sym", right_time="quoted").orderBy("sym", "time").show()
    +----+---+---+----+------+
    |time|sym|v_x| v_y|quoted|
    +----+---+---+----+------+
    |   1|  a|  5|  10|     1|
    |   4|  a|  7|  11|     3|
    |   0|  b|  1|NULL|  NULL|
    |   9|  b|  2|  20|     2|
    +----+---+---+----+------+
    <BLANKLINE>
    >>> asof_join_window(trades, quotes, on="sym", how="inner", allow_exact_matches=False).count()
    2
    """
    if how not in HOW:
        raise InvalidJoinTypeError(how=how, valid=HOW)
    keys = _key_list(on)
    right_types = _check_asof_sides(left, right, keys, time)
    right_values = [c for c in right.columns if c not in keys and c != time]
    if tiebreak is None:
        ties = [c for c in right_values if _is_orderable(right_types[c])]
    else:
        ties = _key_list(tiebreak)
        _require(right, ties, "asof_join tiebreak")
    left_names, right_names = _asof_names(left.columns, right_values, suffixes, right_time)

    # At equal times, the side sorting first is seen by the other: right before left
    # when exact matches count (the right change at t, the left row "at t⁺").
    left_side, right_side = (1, 0) if allow_exact_matches else (0, 1)
    carried = _carry_right_rows(left, right, keys, time, ties, left_side, right_side)
    matched = carried.where(_col(_SIDE) == left_side)
    if how == "inner":
        matched = matched.where(_col(_MATCH).isNotNull())
    columns = [_col(_LEFT)[c].alias(n) for c, n in zip(left.columns, left_names)]
    columns += [_col(_MATCH)[c].alias(n) for c, n in zip(right_values, right_names)]
    if right_time is not None:
        columns.append(_col(_MATCH)[time].alias(right_time))
    return matched.select(*columns)


def _check_asof_sides(
    left: "DataFrame", right: "DataFrame", keys: list[str], time: str
) -> dict[str, "DataType"]:
    """Check :func:`asof_join`'s key and time columns on both sides; return right's column types."""
    if time in keys:
        raise ColumnRoleError(source="asof_join_window", column=time, roles=["key", "time"])
    _require(left, [*keys, time], "asof_join left")
    _require(right, [*keys, time], "asof_join right")
    left_types, right_types = _types(left), _types(right)
    for side, types in (("asof_join left", left_types), ("asof_join right", right_types)):
        if not _is_time_type(types[time]):
            raise TimeTypeError(source=side, column=time, found=types[time].simpleString())
    for c, role in [*((k, "key") for k in keys), (time, "time")]:
        if not _compatible(left_types[c], right_types[c]):
            raise ColumnTypeMismatchError(
                column=c, role=role, left=left_types[c].simpleString(), right=right_types[c].simpleString()
            )
    return right_types


def _asof_names(
    left_columns: Sequence[str],
    right_values: Sequence[str],
    suffixes: tuple[Optional[str], Optional[str]],
    right_time: Optional[str],
) -> tuple[list[str], list[str]]:
    """The result names of left's columns and right's value columns, as pandas names them: a
    non-key column on both sides gets the side's suffix. ColumnClashError if two coincide."""
    left_suffix, right_suffix = (s or "" for s in suffixes)
    clash = set(right_values) & set(left_columns)
    left_names = [c + left_suffix if c in clash else c for c in left_columns]
    right_names = [c + right_suffix if c in clash else c for c in right_values]
    names = left_names + right_names + ([right_time] if right_time is not None else [])
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ColumnClashError(column=n, suffixes=(left_suffix, right_suffix))
        seen.add(n)
    return left_names, right_names


def _carry_right_rows(
    left: "DataFrame",
    right: "DataFrame",
    keys: Sequence[str],
    time: str,
    ties: Sequence[str],
    left_side: int,
    right_side: int,
) -> "DataFrame":
    """Both sides in one union, ``(_SIDE, _LEFT, _MATCH)``: each row as a struct of its side,
    and on every row the latest right row at or before it in its key partition (the running
    ``last(ignorenulls)`` over ``(time, side, ties)``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    left_row = F.struct(*[_col(c) for c in left.columns])
    right_row = F.struct(*[_col(c) for c in right.columns])
    left_type = left.select(left_row.alias(_LEFT)).schema[_LEFT].dataType
    right_type = right.select(right_row.alias(_RIGHT)).schema[_RIGHT].dataType
    usable = F.lit(True)
    for c in [*keys, time]:
        usable = usable & _col(c).isNotNull()
    lefts = left.select(
        *[_col(c) for c in keys],
        _col(time),
        F.lit(left_side).alias(_SIDE),
        left_row.alias(_LEFT),
        F.lit(None).cast(right_type).alias(_RIGHT),
    )
    rights = right.where(usable).select(
        *[_col(c) for c in keys],
        _col(time),
        F.lit(right_side).alias(_SIDE),
        F.lit(None).cast(left_type).alias(_LEFT),
        right_row.alias(_RIGHT),
    )
    window = (
        Window.partitionBy(*[_col(c) for c in keys])
        .orderBy(_col(time).asc_nulls_first(), _col(_SIDE), *[_col(_RIGHT)[c].asc_nulls_first() for c in ties])
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    # Left rows with a null time sort first in their partition, before every
    # (non-null-timed) right row, so they carry no match.
    return lefts.unionByName(rights).select(
        _col(_SIDE),
        _col(_LEFT),
        F.last(_col(_RIGHT), ignorenulls=True).over(window).alias(_MATCH),
    )
