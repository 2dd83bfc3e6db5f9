"""Matrix Market files (``.mtx``, ``.mtx.gz``), read on the driver with :mod:`scipy.io`.

Matrices here are small and sparse: the file is read by
:func:`scipy.io.mmread` and shipped to Spark as one pandas DataFrame (by
:func:`~faq.io.convert.from_scipy` or :func:`~faq.io.convert.from_numpy`).
Writing is :func:`faq.io.writers.write_matrix_market`.

The header's sizes are checked against a memory budget (:data:`MATRIX_MAX_BYTES`,
1 GiB; ``max_bytes=``) before anything is read or allocated: scipy allocates the
arrays the header declares up front, and a product is written through a
compressed (CSR) form with one offset per row, so a three-line file declaring
3e8 rows took 2.4 GB and one declaring 1e12 a raw ``MemoryError``.  Over the
budget, :class:`~faq.errors.MatrixTooLargeError` names the file, the sizes, the
bytes needed and the budget (:func:`matrix_bytes`).
"""

from __future__ import annotations

import gzip
import os
import re
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar, Union

import numpy as np

from faq.errors import MalformedInputError, MatrixTooLargeError
from faq.factor import Factor
from faq.io._common import COL, ROW, PathLike, check_exists, check_variables, default_name
from faq.io.convert import from_numpy, from_scipy
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")

# What scipy.io raises for a file it cannot parse (a bad header, a bad or missing entry: ValueError,
# "Line N: ..." when it knows the line) and for a truncated or non-gzip ".gz" (EOFError, BadGzipFile).
_UNPARSABLE = (ValueError, EOFError, gzip.BadGzipFile)
_SCIPY_LINE = re.compile(r"^Line (\d+): (.*)$", re.S)

#: Most bytes the arrays of one matrix may take on the driver (:func:`matrix_bytes`): 1 GiB, far above
#: the matrices this reader is for (SuiteSparse's bcsstk21: 3,600 rows, 0.3 MB), far below a matrix
#: that would exhaust a laptop's memory.  ``max_bytes=`` raises it.
MATRIX_MAX_BYTES = 1 << 30
# Bytes per stored entry of a coordinate matrix: its row and column (int64 once in faq) and its value.
_INDEX_BYTES = 8
_VALUE_BYTES = {"complex": 16}  # other fields: 8 (float64 or int64; a pattern gets the semiring's one)


def matrix_bytes(rows: int, cols: int, entries: int, layout: str, field: str, symmetry: str) -> tuple[int, str]:
    """The bytes a matrix with this Matrix Market header takes in memory, and what they hold.

    A dense (``array``) matrix holds every value.  A sparse (``coordinate``) one holds a row, a
    column and a value per stored entry (twice the declared entries when symmetric storage is
    expanded) and, compressed (CSR or CSC, as scipy converts it and a product is written), one
    offset per row or column.

    Examples
    --------
    >>> matrix_bytes(3, 4, 1, "coordinate", "real", "general")
    (64, '1 stored entries × 24 bytes and 5 offsets × 8 bytes')
    >>> matrix_bytes(300_000_000, 300_000_000, 1, "coordinate", "real", "general")[0]
    2400000032
    >>> matrix_bytes(1000, 1000, 1_000_000, "array", "real", "general")
    (8000000, 'a dense 1,000×1,000 array of 8-byte values')
    """
    value = _VALUE_BYTES.get(field, 8)
    if layout == "array":
        return rows * cols * value, f"a dense {rows:,}×{cols:,} array of {value}-byte values"
    stored = entries if symmetry == "general" else 2 * entries
    offsets = max(rows, cols) + 1
    per_entry = 2 * _INDEX_BYTES + value
    return (stored * per_entry + offsets * _INDEX_BYTES,
            f"{stored:,} stored entries × {per_entry} bytes and {offsets:,} offsets × {_INDEX_BYTES} bytes")


def _header(path: str, max_bytes: int) -> tuple:
    """The file's header (scipy's ``mminfo``: rows, cols, entries, format, field, symmetry), or
    MatrixTooLargeError when its arrays would take more than ``max_bytes``."""
    import scipy.io

    info = _scipy_read(scipy.io.mminfo, path)
    rows, cols, entries, layout, field, symmetry = info
    needed, what = matrix_bytes(int(rows), int(cols), int(entries), layout, field, symmetry)
    if needed > max_bytes:
        raise MatrixTooLargeError(path=path, rows=int(rows), cols=int(cols), entries=int(entries),
                                  needed_bytes=needed, budget_bytes=int(max_bytes), what=what)
    return info


def matrix_shape(path: PathLike, *, max_bytes: int = MATRIX_MAX_BYTES) -> tuple[int, int]:
    """The (rows, cols) of a Matrix Market file, read from its header only.

    Parameters
    ----------
    path : str or path-like
        ``.mtx`` or ``.mtx.gz``.
    max_bytes : int
        The memory budget the header's sizes are checked against (:func:`matrix_bytes`).

    Returns
    -------
    tuple of int

    Raises
    ------
    InputNotFoundError
    MalformedInputError
        The header is not a Matrix Market header.
    MatrixTooLargeError
        The matrix it declares would take more than ``max_bytes``.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> p = scratch_path("a.mtx", "%%MatrixMarket matrix coordinate real general\\n3 4 1\\n1 2 5.0\\n")
    >>> matrix_shape(p)
    (3, 4)
    """
    path = os.fspath(path)
    check_exists(path)
    rows, cols = _header(path, max_bytes)[:2]
    return int(rows), int(cols)


def read_matrix_market(
    path: PathLike,
    *,
    spark: "SparkSession | None" = None,
    semiring: Union[str, Semiring] = "real",
    variables: Sequence[str] = (ROW, COL),
    name: str | None = None,
    max_bytes: int = MATRIX_MAX_BYTES,
) -> Factor:
    """Read a Matrix Market file (``.mtx``, ``.mtx.gz``) into a binary factor.

    Symmetric (and skew/hermitian) storage is expanded to both triangles;
    indices become 0-based; a ``pattern`` matrix gets the semiring's one;
    stored entries equal to the semiring's zero (explicit zeros, for
    real/counting) are dropped.  For a boolean semiring every non-zero
    becomes true.  Use :func:`matrix_shape` for the dimensions (a factor does
    not keep empty trailing rows).

    Parameters
    ----------
    path : str or path-like
    spark : SparkSession, optional
    semiring : str or Semiring
        ``"real"`` by default; a bigint semiring needs integer values.
    variables : pair of str
        Row and column variable names (``bigint``).
    name : str, optional
        Default: the file name without extensions.
    max_bytes : int
        The memory budget the header's sizes are checked against before the file is
        read (:data:`MATRIX_MAX_BYTES`, 1 GiB; :func:`matrix_bytes`).

    Returns
    -------
    Factor
        Row and column variables (0-based) and ``value``.

    Raises
    ------
    InputNotFoundError
    MalformedInputError
        A bad header, a bad entry (``line_number`` when scipy names it), fewer entries than
        the header says, or a truncated ``.gz``.
    MatrixTooLargeError
        The header declares a matrix that would take more than ``max_bytes``.
    ValueTypeMismatchError
        Complex values, or non-integer values for a bigint semiring.
    InvalidFactorValueError
        A NaN value.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> p = scratch_path("a.mtx", "%%MatrixMarket matrix coordinate real symmetric\\n2 2 2\\n1 1 4.0\\n2 1 0.5\\n")
    >>> sorted(tuple(r) for r in read_matrix_market(p).df.collect())
    [(0, 0, 4.0), (0, 1, 0.5), (1, 0, 0.5)]
    """
    import scipy.io
    import scipy.sparse

    path = os.fspath(path)
    check_exists(path)
    semiring = get_semiring(semiring)
    variables = check_variables(variables, arity=2)
    name = name or default_name(path)
    field = _header(path, max_bytes)[4]  # before mmread, which allocates what the header declares
    matrix = _scipy_read(scipy.io.mmread, path)  # expands symmetric storage, keeps explicit zeros
    if not scipy.sparse.issparse(matrix):  # an "array" (dense) file
        return from_numpy(np.asarray(matrix), variables=variables, semiring=semiring, spark=spark, name=name)
    return from_scipy(matrix, variables, semiring, spark, name, pattern=field == "pattern")


def _scipy_read(read: Callable[[str], T], path: str) -> T:
    """Run a scipy.io reader on ``path``, turning its complaint about the file into MalformedInputError."""
    try:
        return read(path)
    except _UNPARSABLE as exc:
        detail = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        if isinstance(exc, ValueError):
            at_line = _SCIPY_LINE.match(detail)
            if at_line:
                reason = f"not a valid Matrix Market file: {at_line.group(2)}"
                raise MalformedInputError(path=path, line_number=int(at_line.group(1)), reason=reason) from None
            raise MalformedInputError(path=path, reason=f"not a valid Matrix Market file: {detail}") from None
        reason = f"the compressed file is corrupt or truncated ({detail}); replace it with a complete copy"
        raise MalformedInputError(path=path, reason=reason) from None
