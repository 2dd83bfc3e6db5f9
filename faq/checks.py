"""The checks every input path shares: node ids that are 64-bit integers, weights that are numbers.

One checker per idea, used wherever rows arrive on the driver (tuples, pandas,
Arrow, a Parquet edge list, a batch of changes), so that every job refuses
the same values with the same catalog error instead of truncating, dropping
or wrapping them:

* :func:`node_ids` -- an id column as ``int64``.  Integers of any width in
  the 64-bit range pass; a float passes only when it is whole (``2.0`` is
  node 2: a pandas column of ids with a missing value becomes float); a
  fractional or infinite float, a string, a boolean or an integer beyond the
  range is ``NODE_ID_VALUES``, and a null, ``None`` or NaN is ``NULL_KEY``,
  each naming the column, the first bad row and how many there are;
* :func:`number_weights` -- a weight column as ``float64``; NaN or a null is
  ``INVALID_FACTOR_VALUE`` (``±inf`` are numbers: a semiring may hold them).

Both are vectorised (numpy): only an ``object`` column (mixed Python values)
is looked at value by value, and only after numpy could not type it, to name
the first bad one.

Examples
--------
>>> node_ids([1, 2.0, 3], "edges", "src").tolist()
[1, 2, 3]
>>> node_ids([1, 1.5], "edges", "src")
Traceback (most recent call last):
...
faq.errors.FAQValueError: [NODE_ID_VALUES] edges: column 'src' has 1 value(s) that are no node id (the first, \
in row 1: 1.5, not a whole number); node ids are 64-bit integers (a float only when whole, e.g. 2.0): fix or drop \
those rows
>>> number_weights([1, float("inf")], "edge", "weight").tolist()
[1.0, inf]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from faq.errors import FAQValueError, InvalidFactorValueError, NullKeyError

__all__ = ["node_ids", "node_id", "id_problem", "number_weights", "pair_ids", "INT64_MIN", "INT64_MAX"]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_TWO_63 = float(2**63)  # the first float beyond int64 (every float below it converts exactly)


def node_ids(values: Any, source: str, column: str) -> np.ndarray:
    """``values`` (a list, numpy array, pandas Series or Arrow array) as ``int64`` node ids, or a catalog error.

    Parameters
    ----------
    values : array-like
    source : str
        What the column belongs to, as errors name it (``"the edges table"``).
    column : str

    Raises
    ------
    NullKeyError
        A null, ``None`` or NaN; ``row`` is ``"row <i>"`` of the first (0-based).
    FAQValueError
        ``NODE_ID_VALUES``: a fractional or infinite float, a string, a boolean, an
        integer beyond the 64-bit range.
    """
    array = _numpy(values)
    kind = array.dtype.kind
    if kind == "i":
        return array.astype(np.int64, copy=False)
    if kind == "u":
        _refuse(array > INT64_MAX, array, source, column, "beyond the 64-bit range")
        return array.astype(np.int64)
    if kind == "f":
        _refuse_missing(np.isnan(array), source, column)
        _refuse(~np.isfinite(array), array, source, column, "not a finite number")
        _refuse(np.floor(array) != array, array, source, column, "not a whole number")
        _refuse((array < -_TWO_63) | (array >= _TWO_63), array, source, column, "beyond the 64-bit range")
        return array.astype(np.int64)
    if kind == "O" and len(array):
        python = array.tolist()
        typed = np.array(python)  # numpy types a column of Python ints, floats (or strings) by itself
        if typed.dtype.kind in "iuf" and not any(type(v) is bool for v in python):  # True would pass as 1
            return node_ids(typed, source, column)
        _refuse_missing(np.fromiter((_missing(v) for v in array), bool, len(array)), source, column)
        _refuse(np.fromiter((id_problem(v) is not None for v in array), bool, len(array)), array, source, column, None)
        return np.array([int(v) for v in array], dtype=np.int64)  # whole floats among ints (numpy kept object)
    if len(array) == 0:
        return np.zeros(0, dtype=np.int64)
    reason = "a boolean" if kind == "b" else "a string" if kind in "US" else f"of type {array.dtype}"
    _refuse(np.ones(len(array), bool), array, source, column, reason)
    raise AssertionError("unreachable")  # pragma: no cover - _refuse raised


def number_weights(values: Any, factor: str, column: str) -> np.ndarray:
    """``values`` as ``float64`` weights, or ``INVALID_FACTOR_VALUE`` for a null or NaN (``row``: ``"row <i>"``)."""
    array = _numpy(values)
    try:
        numbers = array.astype(np.float64)
    except (TypeError, ValueError):  # strings, None among numbers (the error path: value by value)
        python = array.tolist()
        numbers = np.array([_float_or_nan(v) for v in python], dtype=np.float64)
        text = ~np.array([v is None or isinstance(v, (int, float)) for v in python], bool)
        if text.any():
            i = int(np.flatnonzero(text)[0])
            raise InvalidFactorValueError(factor=factor, column=column, problem="non-numeric", count=int(text.sum()),
                                          row=f"row {i}: {python[i]!r}")
    nan = np.isnan(numbers)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        problem = "null" if array.dtype.kind == "O" and array[i] is None else "NaN"
        raise InvalidFactorValueError(factor=factor, column=column, problem=problem, count=int(nan.sum()),
                                      row=f"row {i}")
    return numbers


def node_id(value: Any, argument: str) -> int:
    """One node id given as an argument (a path's source): an integer in the 64-bit range (a whole float or
    the text of an integer too), else ``INVALID_NODE_ID`` naming ``argument``.

    >>> node_id(3.0, "source"), node_id("7", "--source")
    (3, 7)
    """
    candidate = value
    if isinstance(value, str):
        try:
            candidate = int(value)
        except ValueError:
            pass
    if _missing(candidate) or id_problem(candidate) is not None:
        raise FAQValueError(error_class="INVALID_NODE_ID", argument=argument, value=value)
    return int(candidate)


def pair_ids(rows: Any, source: str) -> tuple[np.ndarray, np.ndarray]:
    """The (src, dst) ids of rows ``(src, dst, ...)`` given as Python tuples, checked column by column.

    >>> [a.tolist() for a in pair_ids([(1, 2), (2.0, 3, 0.5)], "edges")]
    [[1, 2], [2, 3]]
    """
    rows = [tuple(row) for row in rows]
    short = next((row for row in rows if len(row) < 2), None)
    if short is not None:
        raise FAQValueError(error_class="MALFORMED_EDGE", row=short, argument=source)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return node_ids([row[0] for row in rows], source, "src"), node_ids([row[1] for row in rows], source, "dst")


# --- helpers ------------------------------------------------------------------------------------------


def _numpy(values: Any) -> np.ndarray:
    """A 1-d numpy array of ``values``: Arrow nulls become None (object) or NaN (floats), pandas' NA None."""
    if hasattr(values, "to_numpy") and type(values).__module__.split(".")[0] == "pyarrow":
        return np.asarray(values.to_numpy(zero_copy_only=False))
    if hasattr(values, "dtype") and str(values.dtype) in ("Int8", "Int16", "Int32", "Int64", "UInt64", "Float64",
                                                          "string"):
        return np.asarray(values.to_numpy(dtype=object, na_value=None))  # pandas' nullable types
    if isinstance(values, (list, tuple)):  # Python values, typed by node_ids (True is no 1 there)
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array
    return np.asarray(values)


def _refuse_missing(missing: np.ndarray, source: str, column: str) -> None:
    if missing.any():
        raise NullKeyError(factor=source, column=column, count=int(missing.sum()),
                           row=f"row {int(np.flatnonzero(missing)[0])}")


def _refuse(bad: np.ndarray, array: np.ndarray, source: str, column: str, reason: Any) -> None:
    """Raise ``NODE_ID_VALUES`` for the first True of ``bad`` (``reason`` None: ask :func:`id_problem`)."""
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    value = array[i].item() if hasattr(array[i], "item") else array[i]
    raise FAQValueError(error_class="NODE_ID_VALUES", source=source, column=column, count=int(bad.sum()), row=i,
                        value=value, reason=reason or id_problem(value))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or type(value).__name__ == "NAType"


def id_problem(value: Any) -> Any:
    """Why a Python value is no node id, or None when it is one.

    >>> id_problem(2.0), id_problem(2.5), id_problem("7"), id_problem(2**63)
    (None, 'not a whole number', 'a string', 'beyond the 64-bit range')
    """
    if isinstance(value, (bool, np.bool_)):
        return "a boolean"
    if isinstance(value, (int, np.integer)):
        return None if INT64_MIN <= int(value) <= INT64_MAX else "beyond the 64-bit range"
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return "not a finite number"
        if not float(value).is_integer():
            return "not a whole number"
        return None if -_TWO_63 <= value < _TWO_63 else "beyond the 64-bit range"
    return "a string" if isinstance(value, (str, bytes)) else f"of type {type(value).__name__}"


def _float_or_nan(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
