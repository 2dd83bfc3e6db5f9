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

__all__ = ["to_numpy", "int64_array", "arrow_from_numpy", "spark_arrays"]


def to_numpy(column: Any) -> np.ndarray:
    """``column`` (an Arrow ``Array`` or ``ChunkedArray``) as one numpy array (see the module notes)."""
    import pyarrow as pa

    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)) or column.null_count:
        return column.to_numpy(zero_copy_only=False) if isinstance(column, pa.Array) else column.to_numpy()
    dtype = np.dtype(kind.to_pandas_dtype())  # a numpy type: no pandas import
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=dtype.itemsize * c.offset)
             for c in chunks if len(c)]
    if not parts:
        return np.empty(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def int64_array(values: np.ndarray) -> Any:
    """An Arrow int64 array over ``values``' buffer (copied only if it is not contiguous int64)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


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
