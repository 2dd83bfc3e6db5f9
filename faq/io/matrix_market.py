"""Matrix Market files (``.mtx``, ``.mtx.gz``), read on the driver with :mod:`scipy.io`.

Matrices here are small and sparse: the file is read by
:func:`scipy.io.mmread` and shipped to Spark as one pandas DataFrame (by
:func:`~faq.io.convert.from_scipy` or :func:`~faq.io.convert.from_numpy`).
Writing is :func:`faq.io.writers.write_matrix_market`.
"""

from __future__ import annotations

import gzip
import os
import re
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar, Union

import numpy as np

from faq.errors import MalformedInputError
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


def matrix_shape(path: PathLike) -> tuple[int, int]:
    """The (rows, cols) of a Matrix Market file, read from its header only.

    Parameters
    ----------
    path : str or path-like
        ``.mtx`` or ``.mtx.gz``.

    Returns
    -------
    tuple of int

    Raises
    ------
    InputNotFoundError
    MalformedInputError
        The header is not a Matrix Market header.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> p = scratch_path("a.mtx", "%%MatrixMarket matrix coordinate real general\\n3 4 1\\n1 2 5.0\\n")
    >>> matrix_shape(p)
    (3, 4)
    """
    import scipy.io

    path = os.fspath(path)
    check_exists(path)
    rows, cols = _scipy_read(scipy.io.mminfo, path)[:2]
    return int(rows), int(cols)


def read_matrix_market(
    path: PathLike,
    *,
    spark: "SparkSession | None" = None,
    semiring: Union[str, Semiring] = "real",
    variables: Sequence[str] = (ROW, COL),
    name: str | None = None,
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

    Raises
    ------
    InputNotFoundError
    MalformedInputError
        A bad header, a bad entry (``line_number`` when scipy names it), fewer entries than
        the header says, or a truncated ``.gz``.
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
    field = _scipy_read(scipy.io.mminfo, path)[4]
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
