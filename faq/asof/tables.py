"""A one-shot as-of join of two Arrow tables in-process: keys coded, times made numbers, the match, the rows.

:func:`asof_tables` is ``pandas.merge_asof`` over :class:`pyarrow.Table`
values, with one difference: a null ``by`` key matches nothing (as in SQL and
in the Spark paths, :mod:`faq.asof.on_spark` and :mod:`faq.asof.spark_window`), where pandas
pairs nulls with nulls.  Neither side needs to be sorted; the result keeps
the left side's row order.

* **Keys** (``by``): both sides' columns dictionary-encoded together, one
  code per distinct key (:func:`key_codes`); one integer key of few values
  is its value less the least (:func:`offset_codes`); a key with a null is ``-1``.
* **Times** (``on``): integers, floats, dates, timestamps and durations are
  compared as numbers (timestamps in one unit); other orderable types
  (strings, booleans) by their rank among both sides' values
  (:func:`time_numbers`).  A null time matches nothing.
* **The match**: :mod:`faq.asof.kernel` (sorted runs per key, a binary search
  per left row).
* **The rows**: left's columns, then right's columns other than ``on`` and
  ``by``, a column present on both sides suffixed as pandas suffixes it
  (``_x``, ``_y``); ``right_time=`` adds the matched right time.

Examples
--------
>>> import pyarrow as pa
>>> trades = pa.table({"time": [1, 4, 0, 9], "sym": ["a", "a", "b", "b"], "qty": [5, 7, 1, 2]})
>>> quotes = pa.table({"time": [1, 3, 2], "sym": ["a", "a", "b"], "px": [10.0, 11.0, 20.0]})
>>> asof_tables(trades, quotes, on="time", by="sym").to_pydict()
{'time': [1, 4, 0, 9], 'sym': ['a', 'a', 'b', 'b'], 'qty': [5, 7, 1, 2], 'px': [10.0, 11.0, None, 20.0]}
>>> asof_tables(trades, quotes, on="time", by="sym", direction="forward", how="inner").column("px").to_pylist()
[10.0, 20.0]
"""

from __future__ import annotations

import datetime
import os
from typing import Any, Optional, Sequence, Union

import numpy as np

from faq.arrow_arrays import int64_array, null_mask, to_numpy
from faq.asof.kernel import COMPILED, DIRECTION_CODES, DIRECTIONS, match, sorted_runs, wide_times
from faq.errors import (
    ColumnClashError,
    InputNotFoundError,
    ColumnRoleError,
    ColumnTypeMismatchError,
    InvalidArgumentError,
    InvalidJoinTypeError,
    MissingColumnError,
    TimeTypeError,
)

__all__ = ["asof_tables", "key_codes", "offset_codes", "time_numbers", "HOW", "SUFFIXES", "DIFF", "result_names",
           "joined_rows", "check_compatible", "tolerance_number", "read_table", "check_arguments", "key_list"]

HOW = ("left", "inner")
SUFFIXES = ("_x", "_y")
#: The column of a change row (of a side, or of the answer): +1 insert, -1 delete.
DIFF = "diff"

Keys = Union[str, Sequence[str], None]

#: Rows of both sides from which a join of integer times merges them (:mod:`faq.asof.merge_match`); smaller
#: joins search (:mod:`faq.asof.kernel`), which needs no compiled sort.
MERGE_FROM = 200_000


def key_list(by: Keys) -> list[str]:
    """``by`` as a list of column names."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def asof_tables(
    left: Any,
    right: Any,
    on: str = "time",
    by: Keys = None,
    *,
    direction: str = "backward",
    allow_exact_matches: bool = True,
    tolerance: Any = None,
    how: str = "left",
    suffixes: tuple[Optional[str], Optional[str]] = SUFFIXES,
    right_time: Optional[str] = None,
) -> Any:
    """Join each row of ``left`` with the row of ``right`` valid at its time (module notes).

    Parameters
    ----------
    left, right : pyarrow.Table
    on : str
        The time column of both sides.
    by : str or sequence of str, optional
        Key columns both sides have; rows match only with equal keys.
    direction : {"backward", "forward", "nearest"}
        The last right row at or before the left time, the first at or
        after it, or the closer of the two (backward at equal distance).
    allow_exact_matches : bool
        Whether a right row at exactly the left time matches.
    tolerance : number or timedelta, optional
        The largest distance in time of a match.
    how : {"left", "inner"}
        Keep left rows without a match (nulls on the right), or drop them.
    suffixes : pair of str or None
        For a column present on both sides (not ``on`` or ``by``).
    right_time : str, optional
        A column of this name holds the matched right row's time.

    Returns
    -------
    pyarrow.Table
    """
    import pyarrow as pa

    keys = key_list(by)
    check_arguments(left.column_names, right.column_names, on, keys, direction, how)
    left_names, right_values, right_names = result_names(left.column_names, right.column_names, on, keys,
                                                        suffixes, right_time)
    for c in [*keys, on]:
        check_compatible(c, "key" if c != on else "time", left.schema.field(c).type, right.schema.field(c).type)
    left_keys, right_keys = [left.column(k) for k in keys], [right.column(k) for k in keys]
    offsets = offset_codes(left_keys, right_keys)
    left_codes, right_codes, n_codes = offsets if offsets is not None else key_codes(
        left_keys, right_keys, left.num_rows, right.num_rows)
    left_times, right_times, scale = time_numbers(left.column(on), right.column(on), on)
    left_times, right_times = wide_times(left_times, right_times)  # a distance never wraps at the extremes
    left_codes[_nulls(left.column(on))] = -1
    right_codes[_nulls(right.column(on))] = -1
    limit = tolerance_number(tolerance, scale, on)
    matched = None
    if COMPILED and left.num_rows + right.num_rows >= MERGE_FROM:  # both sides sorted and merged, integer times
        from faq.asof.merge_match import merge_match  # (imports numba: only for a join this large)

        matched = merge_match(left_codes, left_times, right_codes, right_times, n_codes,
                              kind=DIRECTION_CODES[direction], exact=bool(allow_exact_matches),
                              limit=-1.0 if limit is None else float(limit))
    if matched is None:  # the right side sorted, each left row searched
        runs = sorted_runs(right_codes, right_times, n_codes)
        matched = match(runs, left_codes, left_times, direction=direction, allow_exact_matches=allow_exact_matches,
                        tolerance=limit)
    if how == "inner":
        kept = np.flatnonzero(matched >= 0)
        left, matched = left.take(pa.array(kept)), matched[kept]
    return joined_rows(left, right, matched, (left_names, right_values, right_names), on, right_time)


def joined_rows(left: Any, right: Any, matched: np.ndarray, names: tuple[list[str], list[str], list[str]], on: str,
                right_time: Optional[str]) -> Any:
    """The result's rows: ``left``'s rows with the rows of ``right`` that ``matched`` names (-1: nulls), under
    the names :func:`result_names` gave."""
    import pyarrow as pa

    left_names, right_values, right_names = names
    indices = int64_array(matched, valid=np.asarray(matched) >= 0)  # (pa.array of numpy would import pandas)
    columns = {n: left.column(c) for c, n in zip(left.column_names, left_names)}
    for c, n in zip(right_values, right_names):
        columns[n] = right.column(c).take(indices)
    if right_time is not None:
        columns[right_time] = right.column(on).take(indices)
    return pa.table(columns)


def check_arguments(left_columns: Sequence[str], right_columns: Sequence[str], on: str, keys: Sequence[str],
                    direction: str, how: str) -> None:
    """The checks every as-of join makes before it reads a row."""
    if how not in HOW:
        raise InvalidJoinTypeError(how=how, valid=HOW)
    if direction not in DIRECTIONS:
        raise InvalidArgumentError(argument="direction", value=direction,
                                   reason=f"expected one of {', '.join(DIRECTIONS)}")
    if on in keys:
        raise ColumnRoleError(source="asof_join", column=on, roles=["key", "time"])
    for side, columns in (("asof_join left", left_columns), ("asof_join right", right_columns)):
        for c in [*keys, on]:
            if c not in columns:
                raise MissingColumnError(column=c, available=list(columns), source=side)


def result_names(left_columns: Sequence[str], right_columns: Sequence[str], on: str, keys: Sequence[str],
                 suffixes: tuple[Optional[str], Optional[str]], right_time: Optional[str]
                 ) -> tuple[list[str], list[str], list[str]]:
    """(left's names in the result, right's value columns, their names): pandas' suffixes on a clash.

    >>> result_names(["time", "sym", "v"], ["time", "sym", "v", "w"], "time", ["sym"], ("_x", "_y"), None)
    (['time', 'sym', 'v_x'], ['v', 'w'], ['v_y', 'w'])
    """
    right_values = [c for c in right_columns if c not in keys and c != on]
    left_suffix, right_suffix = (s or "" for s in suffixes)
    clash = set(right_values) & set(left_columns)
    left_names = [c + left_suffix if c in clash else c for c in left_columns]
    right_names = [c + right_suffix if c in clash else c for c in right_values]
    seen: set[str] = set()
    for n in [*left_names, *right_names, *([right_time] if right_time is not None else [])]:
        if n in seen:
            raise ColumnClashError(column=n, suffixes=(left_suffix, right_suffix))
        seen.add(n)
    return left_names, right_values, right_names


def key_codes(left: Sequence[Any], right: Sequence[Any], n_left: int, n_right: int
              ) -> tuple[np.ndarray, np.ndarray, int]:
    """One dense code per distinct key of both sides (``-1``: a null in the key), and how many codes.

    >>> import pyarrow as pa
    >>> l, r, n = key_codes([pa.chunked_array([["a", None, "b"]])], [pa.chunked_array([["b", "a"]])], 3, 2)
    >>> l.tolist(), r.tolist(), n
    ([0, -1, 1], [1, 0], 2)
    """
    import pyarrow as pa

    if not left:
        return np.zeros(n_left, dtype=np.int64), np.zeros(n_right, dtype=np.int64), 1
    combined: Optional[np.ndarray] = None
    null = np.zeros(n_left + n_right, dtype=bool)
    width = 1
    for a, b in zip(left, right):
        if pa.types.is_null(a.type):  # a side of nulls only (or no rows) takes the other's type
            a = a.cast(b.type)
        kind = a.type
        encoded = pa.chunked_array([*a.chunks, *b.cast(kind).chunks], type=kind).combine_chunks().dictionary_encode()
        indices = encoded.indices  # dense codes in order of first appearance (a hash, no sort)
        null |= null_mask(indices)
        codes = np.asarray(to_numpy(indices, fill=0), dtype=np.int64)
        if combined is None:
            combined, width = codes, max(len(encoded.dictionary), 1)
            continue
        size = max(len(encoded.dictionary), 1)
        if width >= (1 << 62) // size:  # keep the mixed radix in int64: make the codes so far dense first
            combined, width = _dense(combined)
        combined, width = combined * size + codes, width * size
    if len(left) > 1:
        combined, width = _dense(combined)
    combined = combined.copy() if len(left) == 1 else combined
    combined[null] = -1
    return combined[:n_left], combined[n_left:], width


#: The widest span of one integer key's values :func:`offset_codes` numbers directly, per row of both sides.
OFFSET_SPAN_PER_ROW = 4


def offset_codes(left: Sequence[Any], right: Sequence[Any]) -> Optional[tuple[np.ndarray, np.ndarray, int]]:
    """:func:`key_codes` for one integer key whose values span at most :data:`OFFSET_SPAN_PER_ROW` codes a
    row of both sides: each value less the least of both sides (``-1``: a null), and the span; else None.

    No hash and no copy of both sides together: on 5M + 5M rows of 1,000 keys the dictionary codes took
    0.17-0.29 s, these 0.02 s (scratch, this machine).  A code no row holds is an empty run: the match
    never finds it.

    >>> import pyarrow as pa
    >>> l, r, n = offset_codes([pa.chunked_array([[7, None, 5]])], [pa.chunked_array([[5, 9]])])
    >>> l.tolist(), r.tolist(), n
    ([2, -1, 0], [0, 4], 5)
    >>> offset_codes([pa.chunked_array([[0, 10**9]])], [pa.chunked_array([[1]])]) is None   # too sparse
    True
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(left) != 1 or not (pa.types.is_integer(left[0].type) and pa.types.is_integer(right[0].type)):
        return None
    extremes = [pc.min_max(c).as_py() for c in (left[0], right[0])]  # (nulls left out)
    lows = [e["min"] for e in extremes if e["min"] is not None]
    if not lows:
        return None
    low, high = min(lows), max(e["max"] for e in extremes if e["max"] is not None)
    span = high - low + 1
    if span > OFFSET_SPAN_PER_ROW * max(1, len(left[0]) + len(right[0])) or span >= 1 << 31:
        return None
    out = []
    for values in (left[0], right[0]):
        codes = np.asarray(to_numpy(values, fill=low), dtype=np.int64) - low
        if values.null_count:
            codes[null_mask(values)] = -1
        out.append(codes)
    return out[0], out[1], span


def _dense(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """``codes`` renumbered 0, 1, ... in order of first appearance (Arrow's hash), and how many."""
    import pyarrow as pa

    encoded = int64_array(codes).dictionary_encode()
    return np.asarray(to_numpy(encoded.indices), dtype=np.int64), max(len(encoded.dictionary), 1)


_NUMERIC_KINDS = "iuf"


def time_numbers(left: Any, right: Any, on: str) -> tuple[np.ndarray, np.ndarray, Optional[str]]:
    """Both sides' times as numpy numbers one can compare (nulls as 0: the caller drops them), and the
    timestamp unit they are in (None for plain numbers and ranks).

    >>> import pyarrow as pa
    >>> l, r, unit = time_numbers(pa.chunked_array([["b", "a"]]), pa.chunked_array([["c", "a"]]), "t")
    >>> l.tolist(), r.tolist(), unit          # strings: ranks among both sides' values
    ([1, 0], [2, 0], None)
    """
    import pyarrow as pa

    if pa.types.is_null(left.type):
        left = left.cast(right.type)
    elif pa.types.is_null(right.type):
        right = right.cast(left.type)
    kind = left.type
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_duration(kind) or \
            pa.types.is_time(kind):
        unit = "ns"
        target = pa.timestamp(unit) if not pa.types.is_duration(kind) and not pa.types.is_time(kind) \
            else pa.duration(unit) if pa.types.is_duration(kind) else pa.time64(unit)
        values = [_int64(c.cast(target)) for c in (left, right)]
        return values[0], values[1], unit
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        float_kind = pa.types.is_floating(kind) or pa.types.is_floating(right.type) or pa.types.is_decimal(kind)
        target = pa.float64() if float_kind else pa.int64()
        try:
            return _numbers(left.cast(target)), _numbers(right.cast(target)), None
        except pa.ArrowInvalid:  # an integer beyond 2**53 against float times: no exact comparison
            raise ColumnTypeMismatchError(column=on, role="time", left=f"{left.type} (compared as double)",
                                          right=f"{right.type}, with a value a double does not hold exactly"
                                          ) from None
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or \
            pa.types.is_boolean(kind):
        both = pa.chunked_array([*left.chunks, *right.cast(kind).chunks], type=kind)
        values = np.asarray(both.fill_null(_blank(kind)).to_numpy(zero_copy_only=False))  # nulls: dropped later
        _, ranks = np.unique(values, return_inverse=True)
        ranks = ranks.astype(np.int64)
        return ranks[:len(left)], ranks[len(left):], None
    raise TimeTypeError(source="asof_join", column=on, found=str(kind))


def _blank(kind: Any) -> Any:
    import pyarrow as pa

    return False if pa.types.is_boolean(kind) else (b"" if pa.types.is_binary(kind) else "")


def _numbers(column: Any) -> np.ndarray:
    import pyarrow as pa

    floating = pa.types.is_floating(column.type)
    return np.asarray(to_numpy(column, fill=np.nan if floating else 0), dtype=np.float64 if floating else np.int64)


def _int64(column: Any) -> np.ndarray:
    import pyarrow as pa

    return np.asarray(to_numpy(column.cast(pa.int64()), fill=0), dtype=np.int64)


def _nulls(column: Any) -> np.ndarray:
    return null_mask(column)


def tolerance_number(tolerance: Any, unit: Optional[str], on: str) -> Optional[float]:
    """A tolerance in the times' numbers: timedeltas in the timestamp unit (ns)."""
    if tolerance is None:
        return None
    if isinstance(tolerance, (datetime.timedelta, np.timedelta64)) or hasattr(tolerance, "to_timedelta64"):
        nanoseconds = np.timedelta64(tolerance if not hasattr(tolerance, "to_timedelta64")
                                     else tolerance.to_timedelta64(), "ns").astype(np.int64)
        return float(nanoseconds)
    value = float(tolerance)
    if value < 0:
        raise InvalidArgumentError(argument="tolerance", value=tolerance, reason="a tolerance must not be negative")
    return value


def check_compatible(column: str, role: str, left: Any, right: Any) -> None:
    """Both sides' types of a key or time column must compare: numbers with numbers, times with times."""
    import pyarrow as pa

    def family(t: Any) -> str:
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            return "number"
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            return "time"
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return "string"
        return str(t)

    if family(left) != family(right) and not pa.types.is_null(left) and not pa.types.is_null(right):
        raise ColumnTypeMismatchError(column=column, role=role, left=str(left), right=str(right))


def read_table(data: Any) -> Any:
    """An Arrow table of a pandas frame, an Arrow table, a path (Parquet by extension or magic bytes; else CSV
    with a header) or a Spark DataFrame (collected: one job); its column names distinct.

    A CSV file whose last line has no line break is refused (it may be cut short:
    :func:`faq.io._common.whole_text`), as are rows of another width and a column of mixed types.

    >>> read_table({"t": [1, 2]}).num_rows
    2
    """
    import pyarrow as pa

    from faq.errors import FAQTypeError
    from faq.input_kinds import ARROW, PANDAS, PATH, SPARK, arrow_table, input_kind

    kind = input_kind(data)
    if kind == ARROW:  # an Arrow table, or another table's Arrow stream (polars, ...)
        table = arrow_table(data, "an as-of input")
    elif kind == SPARK:
        table = data.toArrow()
    elif kind == PATH:
        table = _read_path(os.fspath(data))
    elif isinstance(data, dict) or kind == PANDAS:
        names = list(map(str, data.keys() if isinstance(data, dict) else data.columns))
        _check_distinct(names, "the columns of an as-of input")
        try:
            table = pa.table(data) if isinstance(data, dict) else pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # a column of mixed types, e.g. ints and strings
            raise FAQTypeError(error_class="INPUT_TYPE", what="an as-of input", expected="columns of one type "
                               "each", found=" ".join(map(str, exc.args))) from None
    else:
        raise InvalidArgumentError(argument="left/right", value=type(data).__name__,
                                   reason="expected a pandas DataFrame, an Arrow table (or a table exporting an "
                                   "Arrow stream, e.g. polars), a Spark DataFrame or a path")
    _check_distinct(table.column_names, "the columns of an as-of input")
    return table


def _read_path(path: str) -> Any:
    """A Parquet file or directory, else a CSV file with a header: refused (MalformedInputError) when unreadable."""
    import pyarrow as pa

    from faq.errors import MalformedInputError
    from faq.io._common import format_of, whole_text

    if not os.path.exists(path):
        raise InputNotFoundError(path=path)
    try:
        if format_of(path) == "parquet" or os.path.isdir(path):
            import pyarrow.parquet as pq

            if os.path.isdir(path):  # a directory of parts (Spark writes these): Arrow's dataset reader
                return pq.read_table(path)
            return pq.ParquetFile(path).read()  # one file: no import of pyarrow.dataset (and pandas), ~0.6 s
        import pyarrow.csv as pcsv

        return pcsv.read_csv(pa.BufferReader(whole_text(path)))
    except (pa.ArrowException, OSError) as exc:  # a row of another width, a corrupt Parquet file
        raise MalformedInputError(path=path, reason=f"not a table faq can read ({' '.join(map(str, exc.args))})"
                                  ) from None


def _check_distinct(names: Sequence[str], what: str) -> None:
    from faq.errors import FAQTypeError

    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise FAQTypeError(error_class="INPUT_TYPE", what=what, expected="distinct names",
                           found=f"columns {list(names)} ({', '.join(map(repr, twice))} more than once)")
