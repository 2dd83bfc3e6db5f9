"""Arrow columns as numpy arrays, read from their buffers.

pyarrow's own ``to_numpy`` imports pandas the first time it runs (0.5-0.7 s
on this project's machines), which a small command -- a triangle count of a
16k-edge graph, an explain -- would spend on nothing else.  A column of a
fixed-width numeric type without nulls is one buffer per chunk: numpy reads
it in place (read-only, as Arrow's zero-copy ``to_numpy`` gives it).  Other
columns (nulls, booleans, strings) go through Arrow's ``to_numpy``.

Examples
--------
>>> import pyarrow as pa
>>> column = pa.chunked_array([pa.array([1, 2, 3]).slice(1), pa.array([4])])
>>> to_numpy(column).tolist(), to_numpy(pa.array([0.5, 1.5])).dtype.name
([2, 3, 4], 'float64')
>>> to_numpy(pa.array([], pa.int64())).tolist(), to_numpy(pa.chunked_array([], pa.int32())).dtype.name
([], 'int32')
>>> int64_array(np.arange(3)).to_pylist()     # and back, as pa.array would (which imports pandas too)
[0, 1, 2]
>>> arrow_from_numpy(np.array([0.5, 2.0])).type, arrow_from_numpy(np.array([True])).to_pylist()
(DataType(double), [True])
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_numpy", "null_mask", "int64_array", "arrow_from_numpy", "spark_arrays", "arrow_to_pandas"]


def to_numpy(column: Any, fill: Any = None) -> np.ndarray:
    """``column`` (an Arrow ``Array`` or ``ChunkedArray``) as one numpy array (see the module notes); with
    ``fill``, a numeric column's nulls read as ``fill`` (Arrow's ``fill_null`` imports pandas too).

    >>> import pyarrow as pa
    >>> to_numpy(pa.array([1, None, 3]), fill=-1).tolist(), to_numpy(pa.array([0.5, None]), fill=np.nan).tolist()
    ([1, -1, 3], [0.5, nan])
    """
    import pyarrow as pa

    kind = column.type
    numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
    if numeric and column.null_count and fill is not None:
        nulls = null_mask(column)
        values = _buffers(column, np.dtype(kind.to_pandas_dtype())).copy()  # (a null's slot holds anything)
        values[nulls] = fill
        return values
    if not numeric or column.null_count:
        return column.to_numpy(zero_copy_only=False) if isinstance(column, pa.Array) else column.to_numpy()
    return _buffers(column, np.dtype(kind.to_pandas_dtype()))  # a numpy type: no pandas import


def _buffers(column: Any, dtype: np.dtype) -> np.ndarray:
    """A fixed-width numeric column's values read in place from its data buffers (nulls' slots as stored)."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [np.zeros(len(c), dtype=dtype) if c.buffers()[1] is None else
             np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=dtype.itemsize * c.offset)
             for c in chunks if len(c)]
    if not parts:
        return np.empty(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def null_mask(column: Any) -> np.ndarray:
    """True where ``column`` (an Arrow ``Array`` or ``ChunkedArray``) is null, read from its validity bitmaps.

    >>> import pyarrow as pa
    >>> null_mask(pa.chunked_array([pa.array([1, None, 3]).slice(1), pa.array([None], pa.int64())])).tolist()
    [True, False, True]
    >>> null_mask(pa.array([None, None])).tolist(), null_mask(pa.array([1.5])).tolist()
    ([True, True], [False])
    """
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = []
    for chunk in chunks:
        if not chunk.null_count:
            parts.append(np.zeros(len(chunk), dtype=bool))
        elif pa.types.is_null(chunk.type) or chunk.null_count == len(chunk):
            parts.append(np.ones(len(chunk), dtype=bool))
        else:
            bits = np.unpackbits(np.frombuffer(chunk.buffers()[0], dtype=np.uint8), bitorder="little")
            parts.append(bits[chunk.offset:chunk.offset + len(chunk)] == 0)
    if not parts:
        return np.zeros(0, dtype=bool)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def int64_array(values: np.ndarray, valid: Any = None) -> Any:
    """An Arrow int64 array over ``values``' buffer (copied only if it is not contiguous int64); where the
    boolean array ``valid`` is False, null.

    >>> int64_array(np.array([4, -1, 6]), valid=np.array([True, False, True])).to_pylist()
    [4, None, 6]
    """
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    bitmap = None
    if valid is not None and not np.all(valid):
        bitmap = pa.py_buffer(np.packbits(np.asarray(valid, dtype=bool), bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), len(values), [bitmap, pa.py_buffer(values)])


def arrow_from_numpy(values: np.ndarray) -> Any:
    """An Arrow array of a numpy array: numbers over their buffer, anything else through ``pa.array``.

    A 2-D ``(n, w)`` numeric array (an array ring's values) becomes a
    fixed-size list array of ``n`` lists of ``w`` numbers.

    >>> arrow_from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]])).to_pylist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    import pyarrow as pa

    values = np.asarray(values)
    if values.ndim == 2 and values.dtype.kind in "iuf":
        return pa.FixedSizeListArray.from_arrays(arrow_from_numpy(values.reshape(-1)), values.shape[1])
    if values.dtype.kind not in "iuf" or values.ndim != 1:
        return pa.array(values)
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def spark_arrays(values: np.ndarray) -> Any:
    """An ``(n, w)`` array of doubles (an array ring's values) as the Arrow column Spark reads as
    ``array<double>`` (its ``containsNull=False`` form: a list of non-null ``element`` items).

    >>> column = spark_arrays(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> column.to_pylist(), str(column.type)
    ([[1.0, 2.0], [3.0, 4.0]], 'list<element: double not null>')
    """
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.float64)
    rows, width = (values.shape[0], values.shape[1]) if values.ndim == 2 else (len(values), 0)
    offsets = pa.array(np.arange(0, rows * width + 1, max(width, 1), dtype=np.int32)[: rows + 1])
    kind = pa.list_(pa.field("element", pa.float64(), nullable=False))
    return pa.ListArray.from_arrays(offsets, arrow_from_numpy(values.reshape(-1)), type=kind)


def arrow_to_pandas(table: Any) -> Any:
    """``table.to_pandas()``, except that an integer column holding a null becomes pandas' nullable integer
    of its width (``Int64``), where Arrow alone makes it float64: a join key read from Spark (``long``,
    nullable) stays an integer key, and a large id keeps its digits.

    >>> import pyarrow as pa
    >>> frame = arrow_to_pandas(pa.table({"o": [1, None, 3], "p": [1, 2, 3], "q": [0.5, None, 1.5]}))
    >>> [str(t) for t in frame.dtypes], frame["o"].dropna().tolist()
    (['Int64', 'int64', 'float64'], [1, 3])
    """
    import pyarrow as pa

    frame = table.to_pandas()
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_integer(column.type) and column.null_count:
            frame[name] = column.to_pandas(types_mapper={column.type: _nullable_integer(column.type)}.get)
    return frame


def _nullable_integer(kind: Any) -> Any:
    """pandas' nullable dtype of the Arrow integer type ``kind`` (``int32`` -> ``Int32``, ``uint8`` -> ``UInt8``)."""
    import pandas as pd

    return pd.api.types.pandas_dtype(str(kind).replace("uint", "UInt").replace("int", "Int"))
