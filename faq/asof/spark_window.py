"""The as-of match as Spark's own operators: one sort of both sides by key and time, a running window.

Spark's window formulation of an as-of join, the one a Spark user writes:
both sides in one union -- left's columns flat, right's values (and time, where
a distance needs it) flat too, beside the key and time columns and a side flag --
partitioned by the ``by`` keys and sorted by ``(time, side, right's value
columns)``; on each left row a running ``last(value, ignorenulls)`` of each
right column and of a long flagging the right row's nulls: the latest right row
before it, or, over the reversed order, the earliest after it, whole (a null
value stays null, not an earlier row's).  Past :data:`FLAT_VALUES` value columns
(one) right's row rides as one struct instead.  One shuffle and one sort (two for
``nearest``), Column expressions only: no Python UDF,
no RDD, nothing collected, so it runs on Spark Connect as on a classic
session.  :mod:`faq.asof.oneshot` prices it beside the in-process kernel
(:mod:`faq.asof.on_spark`, the driver) and runs it where it is cheapest.

What it covers, exactly as ``pandas.merge_asof``
-------------------------------------------------
The side flag puts the right rows of a left row's own time before it (exact
matches) or after it, in both orders: ``backward`` carries ``last(ignorenulls)``
over the rows up to the left row sorted by time, ``forward`` the same over
the rows sorted by time descending -- a frame that ends at the current row,
which Spark keeps as a running value (a frame to the partition's end it
recomputes for every row: quadratic in a key's rows).

* ``backward``, ``forward`` and ``nearest`` (both, the closer taken, the
  backward one at equal distance; two sorts of the one shuffle), with and
  without exact matches;
* ``tolerance`` and ``nearest`` for numeric, date and timestamp times (the
  distance computed exactly: integers as decimals, timestamps in
  microseconds, dates as their UTC midnights as the kernel takes them; a
  timedelta tolerance for dates and timestamps);
* ``how``, ``suffixes`` and ``right_time`` as :func:`faq.asof.tables.asof_tables`;
  a null key or time matches nothing, NaN times too.

Not covered (:func:`unsupported` says why; :mod:`faq.asof.oneshot` then runs the
kernel): a distance (``tolerance``, ``nearest``) of string, boolean, binary or
``timestamp_ntz`` times, or between times of two families (a date and a
number).

Ties: a rule of its own, deterministic
--------------------------------------
pandas takes, among right rows with the same key and time, the last in the
right side's row order (backward) or the first (forward).  A Spark DataFrame
has no row order: the per-partition kernel takes Spark's order of arrival,
which a shuffle does not fix.  A sort can only order by values, so this form
orders such ties by right's other (orderable) columns, in their order, nulls
first: backward takes the row that sorts last, forward (and nearest's forward
candidate) the row that sorts first.  That is ``pandas.merge_asof`` on the
right side sorted by ``(on, value columns)`` -- one of the orders the kernel
could see, and the same answer every run.  Where right times are distinct
per key, every placement gives the same rows.

Examples
--------
>>> from faq.spark import get_session
>>> spark = get_session()
>>> trades = spark.createDataFrame([(1, "a", 5), (4, "a", 7), (0, "b", 1)], "t int, k string, q int")
>>> quotes = spark.createDataFrame([(1, "a", 1.0), (3, "a", 2.0), (2, "b", 3.0)], "t int, k string, p float")
>>> sorted(map(tuple, asof_window(trades, quotes, "t", ["k"]).collect()))
[(0, 'b', 1, None), (1, 'a', 5, 1.0), (4, 'a', 7, 2.0)]
>>> forward = asof_window(trades, quotes, "t", ["k"], direction="forward")
>>> sorted(map(tuple, forward.collect()))
[(0, 'b', 1, 3.0), (1, 'a', 5, 1.0), (4, 'a', 7, None)]
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Sequence

from faq.asof.tables import Keys, check_arguments, key_list, result_names, tolerance_number
from faq.errors import ColumnTypeMismatchError, InvalidArgumentError, TimeTypeError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["asof_window", "unsupported"]

_SIDE, _RIGHT, _MATCH = "__faq_asof_side", "__faq_asof_right", "__faq_asof_match"
_BACK, _AHEAD = "__faq_asof_back", "__faq_asof_ahead"
_MICROS_A_DAY = 86_400_000_000


def unsupported(direction: str, allow_exact_matches: bool, tolerance: Any, left_time: "DataType",
                right_time: "DataType") -> Optional[str]:
    """Why the window form cannot run these options (None: it can), in words for a plan.

    Parameters
    ----------
    direction, allow_exact_matches, tolerance
        As :func:`asof_window` takes them.
    left_time, right_time : pyspark.sql.types.DataType
        The types of the two sides' time columns.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from pyspark.sql.types import LongType, StringType
    >>> unsupported("backward", False, 5, LongType(), LongType()) is None
    True
    >>> unsupported("nearest", False, None, LongType(), LongType()) is None
    True
    >>> unsupported("forward", True, 3, StringType(), StringType())
    'a distance in time of string times'
    """
    if direction == "nearest" or tolerance is not None:
        for kind in (left_time, right_time):
            if _distance_kind(kind) is None:
                return f"a distance in time of {kind.simpleString()} times"
        if _family(left_time) != _family(right_time):
            return f"a distance between {left_time.simpleString()} and {right_time.simpleString()} times"
    return None


def asof_window(
    left: "DataFrame",
    right: "DataFrame",
    on: str,
    by: Keys = None,
    *,
    direction: str = "backward",
    allow_exact_matches: bool = True,
    tolerance: Any = None,
    how: str = "left",
    suffixes: tuple[Optional[str], Optional[str]] = ("_x", "_y"),
    right_time: Optional[str] = None,
) -> "DataFrame":
    """The as-of join of two Spark DataFrames as one Spark sort and window (module notes).

    Parameters
    ----------
    left, right : pyspark.sql.DataFrame
        Both have the ``on`` and ``by`` columns.
    on : str
        The time column.
    by : str or sequence of str, optional
        Key columns; a null key matches nothing.
    direction, allow_exact_matches, tolerance, how, suffixes, right_time
        As :func:`faq.asof.tables.asof_tables`; the combinations
        :func:`unsupported` names are refused.

    Returns
    -------
    pyspark.sql.DataFrame
        Left's columns, right's value columns (suffixed on a clash), then
        ``right_time``; nothing runs until it is used.

    Raises
    ------
    InvalidArgumentError
        Options the window form does not cover (:func:`unsupported`).
    MissingColumnError, ColumnRoleError, InvalidJoinTypeError, ColumnClashError
        As :func:`faq.asof.tables.asof_tables`.
    ColumnTypeMismatchError, TimeTypeError
        A key or time column of types that do not compare; a time column that is not a scalar.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> left = spark.createDataFrame([(2, "x"), (6, "x")], ["t", "k"])
    >>> right = spark.createDataFrame([(1, "x", 1.0), (5, "x", 2.0)], ["t", "k", "v"])
    >>> nearest = asof_window(left, right, "t", "k", direction="nearest", right_time="at")
    >>> sorted(map(tuple, nearest.collect()))
    [(2, 'x', 1.0, 1), (6, 'x', 2.0, 5)]
    >>> asof_window(left, right, "t", "k", tolerance=0, how="inner").count()
    0
    """
    from pyspark.sql import functions as F

    keys = key_list(by)
    check_arguments(left.columns, right.columns, on, keys, direction, how)
    left_names, right_values, right_names = result_names(left.columns, right.columns, on, keys, suffixes, right_time)
    left_type, right_type = _checked_types(left, right, keys, on)
    why = unsupported(direction, allow_exact_matches, tolerance, left_type, right_type)
    if why is not None:
        raise InvalidArgumentError(argument="tolerance" if tolerance is not None else "direction",
                                   value=tolerance if tolerance is not None else direction,
                                   reason=f"the Spark window form does not do {why}; faq.asof_join runs the kernel")
    with_time = direction == "nearest" or tolerance is not None or right_time is not None
    carried, sources, matches = _carried(left, right, keys, on, direction, allow_exact_matches, with_time)
    lefts = carried.where(F.col(_SIDE) == _left_side(direction, allow_exact_matches))
    if matches:  # the matched rows made for the left rows alone, after the window
        lefts = lefts.withColumns(matches)
    t = _col(sources[left.columns.index(on)])  # the left row's time, of left's own type
    usable = t.isNotNull()
    if _is_float(left_type):
        usable = usable & ~F.isnan(t)
    match = F.when(usable, _pick(t, on, direction, (left_type, right_type), tolerance)).alias(_MATCH)
    lefts = lefts.select(*[_col(c) for c in dict.fromkeys(sources)], match)
    if how == "inner":
        lefts = lefts.where(F.col(_MATCH).isNotNull())
    columns = [_col(s).cast(left.schema[c].dataType).alias(n) for c, s, n in zip(left.columns, sources, left_names)]
    columns += [F.col(_MATCH)[c].alias(n) for c, n in zip(right_values, right_names)]
    if right_time is not None:
        columns.append(F.col(_MATCH)[on].alias(right_time))
    return lefts.select(*columns)


def _checked_types(left: "DataFrame", right: "DataFrame", keys: Sequence[str], on: str
                   ) -> tuple["DataType", "DataType"]:
    """Both sides' time types, after checking that keys and times compare (numbers with numbers, moments
    with moments, else one type) and that the times are scalars."""
    from pyspark.sql import types as T

    moments = (T.DateType, T.TimestampType, T.TimestampNTZType)
    for c in [*keys, on]:
        a, b = left.schema[c].dataType, right.schema[c].dataType
        same = a.simpleString() == b.simpleString() or isinstance(a, T.NullType) or isinstance(b, T.NullType)
        numbers = isinstance(a, T.NumericType) and isinstance(b, T.NumericType)
        if not (same or numbers or (isinstance(a, moments) and isinstance(b, moments))):
            raise ColumnTypeMismatchError(column=c, role="time" if c == on else "key", left=a.simpleString(),
                                          right=b.simpleString())
    for side, kind in (("asof_join left", left.schema[on].dataType), ("asof_join right", right.schema[on].dataType)):
        if isinstance(kind, (T.ArrayType, T.MapType, T.StructType)) or kind.typeName() == "variant":
            raise TimeTypeError(source=side, column=on, found=kind.simpleString())
    return left.schema[on].dataType, right.schema[on].dataType


def _left_side(direction: str, exact: bool) -> int:
    """The side flag of left rows: right rows of the same time sort before them (so the frame up to the
    left row holds them, in either direction's order) exactly when exact matches count."""
    return 1 if exact else 0


def _to_here(window: Any) -> Any:
    """``window``'s rows from the partition's first to the current one."""
    from pyspark.sql import Window

    return window.rowsBetween(Window.unboundedPreceding, Window.currentRow)


def _carried(left: "DataFrame", right: "DataFrame", keys: Sequence[str], on: str, direction: str,
             exact: bool, with_time: bool) -> tuple["DataFrame", list[str], dict[str, "Column"]]:
    """The union of both sides, sorted per key by (time, side, right's values), each row with the right row
    carried to it backward (``_BACK``) and/or forward (``_AHEAD``), as the direction needs; where each left
    column is in it; and the Columns that make ``_BACK``/``_AHEAD`` of a left row from what was carried
    (applied after the left rows are picked out; empty when the carried columns are those structs).

    Left's columns stay flat (the keys and time shared with right's, where their types agree; the others
    under names of their own).  Right's row -- its values, and its time when ``with_time`` (a distance or
    ``right_time`` needs it) -- must arrive whole: a null value must not be skipped as ``ignorenulls``
    skips the left rows' nulls.  Up to :data:`FLAT_VALUES` values it is carried flat (:func:`_flat_row`):
    a running last of each value and of one long whose bits flag the right row's nulls, the struct built
    afterwards for the left rows alone; beyond that as one struct per row.  Ties of equal times are
    ordered by right's (orderable) values, nulls first, compared only where key, time and side are equal:
    no sort key of its own to shuffle.  (Measured at 1M x 1M, calm: each of a time field and a sort key of
    its own cost about 15% of the join; carrying the struct through the sort about 10%, scratch runs.)
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    left_side = _left_side(direction, exact)
    values = [c for c in right.columns if c not in keys and c != on]
    with_time = with_time or not values  # a row of no fields would carry nothing to tell a match by
    shared = [*keys, on]
    sources = [c if c in shared and left.schema[c].dataType == right.schema[c].dataType else f"__faq_asof_l{i}"
               for i, c in enumerate(left.columns)]
    own = [(c, s) for c, s in zip(left.columns, sources) if c != s]
    usable = F.lit(True)
    for c in shared:
        usable = usable & _col(c).isNotNull()
    if _is_float(right.schema[on].dataType):
        usable = usable & ~F.isnan(_col(on))  # pandas and the kernel: a NaN time matches nothing
    row = (_flat_row if len(values) <= FLAT_VALUES else _struct_row)(right, on, values, with_time)
    lefts = left.select(*[_col(c) for c in shared], *[_col(c).alias(s) for c, s in own],
                        F.lit(left_side).alias(_SIDE), *row.left_nulls)
    rights = right.where(usable).select(*[_col(c) for c in shared],
                                        *[F.lit(None).cast(left.schema[c].dataType).alias(s) for c, s in own],
                                        F.lit(1 - left_side).alias(_SIDE), *row.right_columns)
    is_right = F.col(_SIDE) == 1 - left_side
    by_key = Window.partitionBy(*[_col(c) for c in keys])
    carried = [*[_col(c) for c in shared], *[_col(s) for _, s in own], F.col(_SIDE)]
    # Both directions carry over a frame that ends at the row (Spark keeps a running value; a frame to the
    # partition's end is recomputed for every row): forward is backward over the reversed order.
    if direction != "forward":
        up = by_key.orderBy(_col(on).asc_nulls_first(), F.col(_SIDE), *[c.asc_nulls_first() for c in row.ties])
        carried += row.lasts(_to_here(up), _BACK, is_right)
    if direction != "backward":
        down = by_key.orderBy(_col(on).desc_nulls_last(), F.col(_SIDE),  # right's values reversed too: the first
                              *[c.desc_nulls_last() for c in row.ties])  # of equal times comes last
        carried += row.lasts(_to_here(down), _AHEAD, is_right)
    names = [name for name, wanted in ((_BACK, direction != "forward"), (_AHEAD, direction != "backward")) if wanted]
    return lefts.unionByName(rights).select(*carried), sources, {name: row.match(name) for name in row.built(names)}


#: Right value columns carried flat (:func:`_flat_row`) at most; more ride as one struct.  Measured at 1M x 1M
#: (scratch, same process): one value column flat 2.81 s against the struct's 3.17 s (a plain-Spark window
#: 2.63 s); eight value columns flat 5.50 s against 3.67 s -- a running last a column costs more than one
#: struct.  Two to seven are not measured: the struct, as before.  (At most 62: the flags are one long's bits.)
FLAT_VALUES = 1


class _CarriedRow(NamedTuple):
    """How right's row rides through the union and the window: its columns on left rows (nulls) and on
    right rows, the columns ordering ties, the running lasts over a window (named from ``_BACK`` or
    ``_AHEAD``), and the match struct of a left row made from them (``built``: the names that need it)."""

    left_nulls: list
    right_columns: list
    ties: list
    lasts: Callable[[Any, str, "Column"], list]
    match: Callable[[str], "Column"]
    built: Callable[[list[str]], list[str]]


def _struct_row(right: "DataFrame", on: str, values: list[str], with_time: bool) -> _CarriedRow:
    """Right's row as one struct column: the running last of it is the match itself."""
    from pyspark.sql import functions as F

    struct = F.struct(*([_col(on)] if with_time else []), *[_col(c) for c in values])
    kind = right.select(struct.alias(_RIGHT)).schema[_RIGHT].dataType
    if all(_orderable(right.schema[c].dataType) for c in values):
        ties = [F.col(_RIGHT)]
    else:  # a map among the values: the struct does not sort, its orderable fields do
        ties = [F.col(_RIGHT)[c] for c in values if _orderable(right.schema[c].dataType)]
    return _CarriedRow(
        [F.lit(None).cast(kind).alias(_RIGHT)], [struct.alias(_RIGHT)], ties,
        lambda window, name, is_right: [F.last(F.col(_RIGHT), ignorenulls=True).over(window).alias(name)],
        lambda name: F.col(name), lambda names: [])


def _flat_row(right: "DataFrame", on: str, values: list[str], with_time: bool) -> _CarriedRow:
    """Right's row as flat columns (right's time as ``_RIGHT`` when ``with_time``, value ``i`` as
    ``{_RIGHT}{i}``); over a window, the last non-null of each and the last right row's null flags (bit
    ``i``: value ``i`` is null; never null on a right row, so null exactly when no right row came yet).
    A value of the match is its last non-null one unless the match's flag says null: the last right row's
    own value either way."""
    from pyspark.sql import functions as F

    named = [(f"{_RIGHT}{i}", c) for i, c in enumerate(values)]
    timed = [(_RIGHT, on)] if with_time else []
    left_nulls = [F.lit(None).cast(right.schema[c].dataType).alias(n) for n, c in [*timed, *named]]
    right_columns = [_col(c).alias(n) for n, c in [*timed, *named]]
    ties = [F.col(n) for n, c in named if _orderable(right.schema[c].dataType)]
    flags = F.lit(0).cast("long")
    for i, (n, _) in enumerate(named):
        flags = flags + F.when(F.col(n).isNull(), F.lit(1 << i).cast("long")).otherwise(F.lit(0).cast("long"))

    def lasts(window: Any, name: str, is_right: "Column") -> list:
        out = [F.last(F.when(is_right, flags), ignorenulls=True).over(window).alias(f"{name}_nulls")]
        return out + [F.last(F.col(n), ignorenulls=True).over(window).alias(f"{name}{n}") for n, _ in [*timed, *named]]

    def match(name: str) -> "Column":
        nulls = F.col(f"{name}_nulls")
        fields = [F.col(f"{name}{n}").alias(c) for n, c in timed]
        fields += [F.when(F.shiftright(nulls, i) % 2 == 0, F.col(f"{name}{n}")).alias(c)
                   for i, (n, c) in enumerate(named)]
        return F.when(nulls.isNotNull(), F.struct(*fields))

    return _CarriedRow(left_nulls, right_columns, ties, lasts, match, lambda names: names)


def _pick(t: "Column", on: str, direction: str, types: tuple["DataType", "DataType"],
          tolerance: Any) -> "Column":
    """The matched right row of each left row: the direction's candidate (nearest: the closer, backward at
    equal distance), null when further than ``tolerance``."""
    from pyspark.sql import functions as F

    if direction == "backward":
        match = F.col(_BACK)
    elif direction == "forward":
        match = F.col(_AHEAD)
    else:
        back, ahead = F.col(_BACK), F.col(_AHEAD)
        closer = (_number(ahead[on], types) - _number(t, types)) < (_number(t, types) - _number(back[on], types))
        match = F.when(back.isNull(), ahead).when(ahead.isNull(), back).when(closer, ahead).otherwise(back)
    if tolerance is None:
        return match
    limit = _limit(tolerance, types, on)
    found = _number(match[on], types)
    distance = F.greatest(found - _number(t, types), _number(t, types) - found)
    return F.when(distance <= limit, match)


def _limit(tolerance: Any, types: tuple["DataType", "DataType"], on: str) -> "Column":
    """The tolerance in the numbers :func:`_number` makes: a timedelta in microseconds for moments."""
    from pyspark.sql import functions as F

    nanoseconds = tolerance_number(tolerance, "ns", on)  # also refuses a negative tolerance
    moments = _family(types[0]) in ("micros", "days")
    timedelta = isinstance(tolerance, datetime.timedelta) or hasattr(tolerance, "to_timedelta64")
    if moments and not timedelta:
        raise InvalidArgumentError(argument="tolerance", value=tolerance,
                                   reason="a tolerance of date or timestamp times is a timedelta")
    if moments:
        return F.lit(nanoseconds / 1000.0)
    if timedelta:
        raise InvalidArgumentError(argument="tolerance", value=tolerance,
                                   reason="a timedelta tolerance is for date or timestamp times")
    return F.lit(float(nanoseconds))


def _number(column: "Column", types: tuple["DataType", "DataType"]) -> "Column":
    """A time as a number a distance is exact in: doubles as doubles, integers and decimals as
    decimal(38, scale), dates and timestamps as microseconds (decimal: no overflow)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kinds = {_distance_kind(t) for t in types}
    if "double" in kinds:
        return column.cast("double")
    if "micros" in kinds:
        return F.unix_micros(column).cast("decimal(38,0)")
    if "days" in kinds:  # a date as its UTC midnight, as the kernel takes it (no time zone, no DST)
        return F.unix_date(column).cast("decimal(38,0)") * F.lit(_MICROS_A_DAY)
    scale = max((t.scale for t in types if isinstance(t, T.DecimalType)), default=0)
    return column.cast(f"decimal(38,{scale})")


def _distance_kind(kind: "DataType") -> Optional[str]:
    """How a distance between times of this type is computed: "double", "exact" (integers, decimals),
    "micros" (timestamps), "days" (dates), or None (no distance)."""
    from pyspark.sql import types as T

    if isinstance(kind, (T.FloatType, T.DoubleType)):
        return "double"
    if isinstance(kind, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.DecimalType)):
        return "exact"
    if isinstance(kind, T.DateType):
        return "days"
    if isinstance(kind, T.TimestampType) and not isinstance(kind, T.TimestampNTZType):
        return "micros"
    return None


def _family(kind: "DataType") -> Optional[str]:
    """Numbers, dates or timestamps: a distance is between times of one family."""
    found = _distance_kind(kind)
    return "number" if found in ("double", "exact") else found


def _is_float(kind: "DataType") -> bool:
    from pyspark.sql import types as T

    return isinstance(kind, (T.FloatType, T.DoubleType))


def _orderable(kind: "DataType") -> bool:
    """Whether Spark sorts by a column of this type (maps and variants it cannot)."""
    from pyspark.sql import types as T

    if isinstance(kind, T.MapType) or kind.typeName() == "variant":
        return False
    if isinstance(kind, T.ArrayType):
        return _orderable(kind.elementType)
    if isinstance(kind, T.StructType):
        return all(_orderable(f.dataType) for f in kind.fields)
    return True


def _col(name: str) -> "Column":
    """A column by its exact name (dots and backticks not interpreted)."""
    from pyspark.sql import functions as F

    from faq.relation import sql_name

    return F.col(sql_name(name))
