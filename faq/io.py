"""Loaders and exporters: SNAP edge lists, Matrix Market, CSV, Parquet, pandas, numpy, scipy.

Every loader returns a :class:`~faq.factor.Factor` in listing representation:
variable columns, then one value column, one row per entry whose value is not
the semiring's zero.  Graph and matrix variables are ``bigint``.

* Edge lists are read by Spark and parsed with Column expressions (no Python
  row UDF, no collect of the data).  Malformed lines are found with one Spark
  job; only when one exists is the file scanned in Python for its line number.
* Matrix Market files and numpy / scipy / pandas objects are small: they are
  read on the driver and shipped to Spark as one pandas DataFrame (Arrow).
* Exporters collect the factor to the driver, so they are for small results
  only; writers never leave a half-written target behind.

Examples
--------
>>> import os, tempfile
>>> from faq import io
>>> tmp = tempfile.TemporaryDirectory()
>>> path = os.path.join(tmp.name, "g.txt")
>>> _ = open(path, "w").write("# a comment\\n1\\t2\\r\\n2 3\\n3,1\\n")
>>> edges = io.read_edge_list(path)
>>> edges.variables, edges.semiring.name
(('src', 'dst'), 'counting')
>>> io.to_pandas(edges).values.tolist()
[[1, 2, 1], [2, 3, 1], [3, 1, 1]]
>>> tmp.cleanup()
"""

from __future__ import annotations

import glob
import gzip
import bz2
import os
import re
import shutil
import tempfile
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from faq.errors import (
    FAQValueError,
    InputNotFoundError,
    InvalidArgumentError,
    InvalidFactorValueError,
    MalformedInputError,
    MissingColumnError,
    NotAMatrixError,
    NullKeyError,
    ResultTooLargeError,
    ValueTypeMismatchError,
)
from faq.factor import VALUE, Factor
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = [
    "read_edge_list",
    "read_matrix_market",
    "matrix_shape",
    "read_csv",
    "read_parquet",
    "read_factor",
    "from_pandas",
    "from_numpy",
    "from_scipy",
    "to_pandas",
    "to_scipy",
    "write_matrix_market",
    "write_table",
]

PathLike = Union[str, "os.PathLike[str]"]

# Column names, named once.
SRC, DST = "src", "dst"
ROW, COL = "i", "j"
_LINE = "_line"  # the raw text of a line (after trimming), kept for error messages
_FIELDS = "_fields"

SELF_LOOP_OPTIONS = ("drop", "keep")
DUPLICATE_OPTIONS = ("collapse", "sum", "keep")

# Edge-list syntax.  The same patterns serve Spark (Java regex) and the Python
# error-path scan, so both agree on which line is bad.  Whitespace is ASCII
# whitespace only (Java's \s; Python's \s with re.ASCII).
_WS = r"[ \t\r\f\x0B]"
_TRIM_RE = rf"^{_WS}+|{_WS}+$"
_SEPARATOR_RE = r"[ \t\r\f\x0B,]+"  # any run of tabs, spaces and commas
_COMMENT_PREFIXES = ("#", "%")
_INT_RE = r"[+-]?[0-9]{1,19}"
_FLOAT_RE = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity)"
_BOOL_WORDS = ("true", "false")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# --- helpers -----------------------------------------------------------------


def _session(spark: "SparkSession | None") -> "SparkSession":
    if spark is not None:
        return spark
    from faq.spark import get_session

    return get_session()


def _is_local(path: str) -> bool:
    """True for a plain local path (no URI scheme other than file:)."""
    return "://" not in path or path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def _check_exists(path: str) -> None:
    """Raise InputNotFoundError for a missing local path (globs and URIs are left to Spark)."""
    if _is_local(path) and not glob.has_magic(path) and not os.path.exists(_local(path)):
        raise InputNotFoundError(path=path)


def _spark_read(path: str, read):
    """Run a Spark reader, turning Spark's PATH_NOT_FOUND into InputNotFoundError."""
    from pyspark.errors import AnalysisException

    _check_exists(path)
    try:
        return read(path)
    except AnalysisException as exc:
        if (exc.getCondition() or "") == "PATH_NOT_FOUND":
            raise InputNotFoundError(path=path) from None
        raise


def _default_name(path: str) -> str:
    """``data/wiki-Vote.txt.gz`` -> ``wiki-Vote``."""
    base = os.path.basename(path.rstrip("/")) or path
    for ext in (".gz", ".bz2"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    stem, ext = os.path.splitext(base)
    return stem or base


def _check_choice(argument: str, value: str, valid: Sequence[str]) -> None:
    if value not in valid:
        raise InvalidArgumentError(argument, value, f"must be one of {', '.join(valid)}")


def _check_variables(variables: Sequence[str], arity: int | None = None) -> tuple[str, ...]:
    variables = tuple(variables)
    if arity is not None and len(variables) != arity:
        raise InvalidArgumentError("variables", variables, f"needs exactly {arity} names")
    if len(set(variables)) != len(variables):
        raise InvalidArgumentError("variables", variables, "names must be distinct")
    if VALUE in variables:
        raise InvalidArgumentError("variables", variables, f"{VALUE!r} is the value column's name")
    return variables


def _drop_zeros(df: "DataFrame", semiring: Semiring, value: str = VALUE) -> "DataFrame":
    """Drop rows whose value is the semiring's zero; keep nulls so validate() can report them."""
    from pyspark.sql import functions as F

    v = F.col(value)
    return df.where(~semiring.is_zero(v) | v.isNull())


# --- SNAP edge lists ---------------------------------------------------------


def _value_of_token(token: "Column", semiring: Semiring) -> "Column":
    """Parse a weight token as the semiring's value type; null when it is not one."""
    from pyspark.sql import functions as F

    if semiring.value_type == "bigint":
        return F.when(token.rlike(f"^{_INT_RE}$"), token.try_cast("bigint"))
    number = F.when(token.rlike(f"^(?:{_FLOAT_RE})$"), token.try_cast("double"))
    if semiring.value_type == "double":
        return number
    word = F.lower(token)
    return F.when(word.isin(*_BOOL_WORDS), word == F.lit("true")).otherwise(number != F.lit(0.0))


def _python_line_problem(line: str, weight_column: int | None, value_type: str) -> str | None:
    """Why a (trimmed, non-comment) line is malformed, or None: the Python twin of the Spark checks."""
    fields = re.split(_SEPARATOR_RE, line)
    if len(fields) < 2:
        return f"expected at least 2 fields (source and target node ids), found {len(fields)}"
    for token in fields[:2]:
        if not re.fullmatch(_INT_RE, token) or not _INT64_MIN <= int(token) <= _INT64_MAX:
            return f"node id {token!r} is not a 64-bit integer"
    if weight_column is not None:
        if len(fields) < weight_column:
            return f"no weight in column {weight_column} (the line has {len(fields)} fields)"
        token = fields[weight_column - 1]
        if value_type == "bigint":
            ok = bool(re.fullmatch(_INT_RE, token)) and _INT64_MIN <= int(token) <= _INT64_MAX
            kind = "64-bit integer"
        elif value_type == "double":
            ok, kind = bool(re.fullmatch(_FLOAT_RE, token)), "number"
        else:
            ok = token.lower() in _BOOL_WORDS or bool(re.fullmatch(_FLOAT_RE, token))
            kind = "boolean (true/false) or number"
        if not ok:
            return f"weight {token!r} in column {weight_column} is not a {kind}"
    return None


def _open_text(path: str):
    """Open a local text file the way Hadoop's codecs pick it: by extension."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def _local_files(path: str) -> list[str]:
    """The data files Spark would read for a local path, glob or directory, in name order."""
    local = _local(path)
    matches = sorted(glob.glob(local)) if glob.has_magic(local) else [local]
    files: list[str] = []
    for m in matches:
        if os.path.isdir(m):
            for root, dirs, names in os.walk(m):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                files += [os.path.join(root, n) for n in sorted(names) if not n.startswith((".", "_"))]
        else:
            files.append(m)
    return files


def _find_malformed_line(path: str, weight_column: int | None, value_type: str, spark_line: str) -> MalformedInputError:
    """Error path only: scan the file in Python for the first bad line and its 1-based number."""
    if _is_local(path):
        for file in _local_files(path):
            with _open_text(file) as handle:
                # Universal newlines split on \n, \r\n and \r, as Hadoop's line reader does.
                for number, raw in enumerate(handle, start=1):
                    line = re.sub(_TRIM_RE, "", raw.rstrip("\r\n"))
                    if not line or line.startswith(_COMMENT_PREFIXES):
                        continue
                    problem = _python_line_problem(line, weight_column, value_type)
                    if problem:
                        text = raw.rstrip("\r\n")
                        return MalformedInputError(path=file, line_number=number, line=text, reason=problem)
    # Remote input (or a disagreement between the scans): report the line Spark found, number unknown (0).
    problem = _python_line_problem(spark_line, weight_column, value_type) or "cannot parse the line"
    return MalformedInputError(path=path, line_number=0, line=spark_line, reason=problem + " (line number unknown)")


def read_edge_list(
    path: PathLike,
    *,
    spark: "SparkSession | None" = None,
    variables: Sequence[str] = (SRC, DST),
    semiring: Union[str, Semiring] = "counting",
    weight_column: int | None = None,
    self_loops: str = "drop",
    duplicates: str = "collapse",
    undirected: bool = False,
    name: str | None = None,
) -> Factor:
    """Read a SNAP-style edge list into a binary factor.

    One edge per line: source id, target id, then optional fields.  Lines
    starting with ``#`` or ``%`` and blank lines are skipped; fields are
    separated by any run of tabs, spaces and commas; CRLF and ``.gz`` /
    ``.bz2`` files are fine.  Node ids are 64-bit integers kept as they are
    (they need not be contiguous).  ``path`` may also be a directory or a
    glob, as for Spark's text reader.

    Parameters
    ----------
    path : str or path-like
    spark : SparkSession, optional
        Defaults to :func:`faq.spark.get_session`.
    variables : pair of str
        Names of the source and target columns (``bigint``).
    semiring : str or Semiring
        Semiring of the values.
    weight_column : int, optional
        1-based column holding each edge's value (e.g. 3 for
        ``src,dst,rating,time``).  Without it every edge has the semiring's
        one.  Integers for counting/integer, numbers (``inf`` allowed) for
        double semirings, ``true``/``false`` or a number (non-zero is true)
        for boolean.  Edges whose value is the semiring's zero are dropped
        (a factor lists only non-zero entries).
    self_loops : {"drop", "keep"}
        ``"drop"`` (default) removes edges ``u -> u``: triangle and motif
        counts are defined on simple graphs, and SNAP's published counts
        ignore loops too (email-Eu-core has 642 of them).
    duplicates : {"collapse", "sum", "keep"}
        ``"collapse"`` (default): one row per (src, dst) with value one, a
        simple graph.  With ``weight_column`` the repeated weights of a pair
        must be combined by some rule, and the rule is ⊕ (so ``"collapse"``
        equals ``"sum"`` there).  ``"sum"``: ⊕-merge the values of equal
        pairs (multiplicities in the counting semiring).  ``"keep"``: rows as
        read.
    undirected : bool
        Add the reverse of every edge (not of self-loops) before duplicates
        are handled, so an undirected edge listed once or in both directions
        gives both directions once under ``"collapse"``.
    name : str, optional
        Factor name; default is the file name without extensions.

    Returns
    -------
    Factor
        Columns ``(*variables, "value")``.

    Raises
    ------
    InputNotFoundError
        ``path`` does not exist.
    MalformedInputError
        A line has fewer than 2 fields, a non-integer id, or a missing or
        unparsable weight; ``line_number`` is 1-based.
    InvalidArgumentError
        An option has a value it does not accept.

    Notes
    -----
    Loading runs one Spark job (a scan for malformed lines, which stops at
    the first); the Factor's DataFrame itself is lazy.  A ``.gz`` file is read
    by a single task (gzip cannot be split); the first shuffle spreads it.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "g.txt")
    >>> _ = open(path, "w").write("1 2\\n2 1\\n2 2\\n2 3\\n")
    >>> read_edge_list(path).count()
    3
    >>> f = read_edge_list(path, undirected=True)
    >>> sorted(tuple(r) for r in f.df.collect())
    [(1, 2, 1), (2, 1, 1), (2, 3, 1), (3, 2, 1)]
    >>> tmp.cleanup()
    """
    from pyspark.sql import functions as F

    path = os.fspath(path)
    spark = _session(spark)
    semiring = get_semiring(semiring)
    variables = _check_variables(variables, arity=2)
    _check_choice("self_loops", self_loops, SELF_LOOP_OPTIONS)
    _check_choice("duplicates", duplicates, DUPLICATE_OPTIONS)
    is_column_number = isinstance(weight_column, int) and not isinstance(weight_column, bool)
    if weight_column is not None and (not is_column_number or weight_column < 3):
        raise InvalidArgumentError(
            "weight_column", weight_column, "must be a 1-based column number >= 3 (columns 1 and 2 hold the node ids)"
        )
    name = name or _default_name(path)

    text = _spark_read(path, spark.read.text)  # one string column "value"; handles .gz
    line = F.regexp_replace(F.col("value"), _TRIM_RE, "")
    lines = text.select(line.alias(_LINE))
    is_data = (F.col(_LINE) != F.lit("")) & ~F.col(_LINE).rlike("^[" + "".join(_COMMENT_PREFIXES) + "]")
    parsed = lines.where(is_data).select(_LINE, F.split(F.col(_LINE), _SEPARATOR_RE).alias(_FIELDS))

    def node(i: int) -> "Column":
        token = F.get(F.col(_FIELDS), i)  # null when the line is shorter (no ANSI error)
        return F.when(token.rlike(f"^{_INT_RE}$"), token.try_cast("bigint"))

    src, dst = node(0), node(1)
    if weight_column is None:
        value = semiring.one_col()
        bad = src.isNull() | dst.isNull()
    else:
        value = _value_of_token(F.get(F.col(_FIELDS), weight_column - 1), semiring)
        bad = src.isNull() | dst.isNull() | value.isNull()

    # The one validation job: stops at the first bad row, else scans the file once.
    first_bad = parsed.where(bad).select(_LINE).limit(1).collect()  # at most 1 row
    if first_bad:
        raise _find_malformed_line(path, weight_column, semiring.value_type, first_bad[0][0])

    u, v = variables
    edges = parsed.select(src.alias(u), dst.alias(v), value.alias(VALUE))
    if self_loops == "drop":
        edges = edges.where(F.col(u) != F.col(v))
    if weight_column is not None:
        edges = _drop_zeros(edges, semiring)
    if undirected:
        reverse = edges.where(F.col(u) != F.col(v)).select(F.col(v).alias(u), F.col(u).alias(v), F.col(VALUE))
        edges = edges.unionByName(reverse)
    if duplicates == "collapse" and weight_column is None:
        edges = edges.select(u, v).distinct().select(u, v, semiring.one_col().alias(VALUE))
    elif duplicates in ("collapse", "sum"):
        edges = edges.groupBy(u, v).agg(semiring.sum(F.col(VALUE)).alias(VALUE))
        edges = _drop_zeros(edges, semiring)  # e.g. +3 and -3 in the integer ring
    return Factor(df=edges, variables=variables, semiring=semiring, value=VALUE, name=name)


# --- driver-side arrays (Matrix Market, numpy, scipy, pandas) ---------------


def _coerce_values(values: np.ndarray, semiring: Semiring, factor: str, column: str = VALUE) -> np.ndarray:
    """Convert a numpy array of values to the semiring's type, or raise ValueTypeMismatchError."""
    values = np.asarray(values)
    kind = values.dtype.kind
    found = str(values.dtype)
    if kind not in "biuf":
        raise ValueTypeMismatchError(
            factor=factor, column=column, found=found, semiring=semiring.name, expected=semiring.value_type
        )
    if semiring.value_type == "boolean":
        if kind == "f" and np.isnan(values).any():
            nans = int(np.isnan(values).sum())
            raise InvalidFactorValueError(factor=factor, column=column, problem="NaN", count=nans)
        return values != 0  # non-zero means true
    if semiring.value_type == "bigint":
        if kind == "f":
            finite = np.isfinite(values)
            if not finite.all() or not np.array_equal(values, np.round(values)):
                raise ValueTypeMismatchError(
                    factor=factor,
                    column=column,
                    found=f"{found} with non-integer values",
                    semiring=semiring.name,
                    expected="bigint",
                )
        return values.astype(np.int64)
    values = values.astype(np.float64)
    nans = int(np.isnan(values).sum())
    if nans:
        raise InvalidFactorValueError(factor=factor, column=column, problem="NaN", count=nans)
    return values


def _nonzero_mask(values: np.ndarray, semiring: Semiring) -> np.ndarray:
    """Entries that are not the semiring's zero (0 for +/×, +inf for min_plus, False for ∨/∧)."""
    return values != np.asarray(semiring.zero, dtype=values.dtype)


def _ship(pdf: "pd.DataFrame", variables: Sequence[str], semiring: Semiring, spark, name: str) -> Factor:
    """Send driver-side index/value columns to Spark (Arrow) as a factor."""
    ddl = ", ".join([*(f"`{v}` bigint" for v in variables), f"`{VALUE}` {semiring.value_type}"])
    df = _session(spark).createDataFrame(pdf, ddl)
    return Factor(df=df, variables=tuple(variables), semiring=semiring, value=VALUE, name=name)


def _coo_to_factor(
    coo, variables: Sequence[str], semiring: Semiring, spark, name: str, pattern: bool = False
) -> Factor:
    """A scipy COO matrix -> factor: drop stored semiring zeros; ⊕-merge repeated entries in Spark."""
    import pandas as pd

    rows, cols = np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64)
    if pattern:
        values = np.full(rows.shape, semiring.one, dtype=_numpy_type(semiring))
    else:
        values = _coerce_values(coo.data, semiring, name)
    keep = _nonzero_mask(values, semiring)
    rows, cols, values = rows[keep], cols[keep], values[keep]
    pdf = pd.DataFrame({variables[0]: rows, variables[1]: cols, VALUE: values})
    factor = _ship(pdf, variables, semiring, spark, name)
    # Repeated (i, j) entries are rare; merge them with the semiring's own ⊕
    # (scipy's sum_duplicates would use + whatever the semiring).
    n_cols = int(cols.max()) + 1 if cols.size else 1
    if rows.size and np.unique(rows * n_cols + cols).size < rows.size:
        factor = factor.normalize()
    return factor


def _numpy_type(semiring: Semiring):
    return {"bigint": np.int64, "double": np.float64, "boolean": np.bool_}[semiring.value_type]


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

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "a.mtx")
    >>> _ = open(p, "w").write("%%MatrixMarket matrix coordinate real general\\n3 4 1\\n1 2 5.0\\n")
    >>> matrix_shape(p)
    (3, 4)
    >>> tmp.cleanup()
    """
    import scipy.io

    path = os.fspath(path)
    _check_exists(path)
    rows, cols = scipy.io.mminfo(path)[:2]
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

    The file is read on the driver with :func:`scipy.io.mmread` (matrices here
    are small and sparse) and shipped to Spark as one pandas DataFrame.
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
    ValueTypeMismatchError
        Complex values, or non-integer values for a bigint semiring.
    InvalidFactorValueError
        A NaN value.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "a.mtx")
    >>> _ = open(p, "w").write("%%MatrixMarket matrix coordinate real symmetric\\n2 2 2\\n1 1 4.0\\n2 1 0.5\\n")
    >>> sorted(tuple(r) for r in read_matrix_market(p).df.collect())
    [(0, 0, 4.0), (0, 1, 0.5), (1, 0, 0.5)]
    >>> tmp.cleanup()
    """
    import scipy.io
    import scipy.sparse

    path = os.fspath(path)
    _check_exists(path)
    semiring = get_semiring(semiring)
    variables = _check_variables(variables, arity=2)
    name = name or _default_name(path)
    field = scipy.io.mminfo(path)[4]
    matrix = scipy.io.mmread(path)  # expands symmetric storage, keeps explicit zeros
    if not scipy.sparse.issparse(matrix):  # an "array" (dense) file
        return from_numpy(np.asarray(matrix), variables=variables, semiring=semiring, spark=spark, name=name)
    return _coo_to_factor(scipy.sparse.coo_matrix(matrix), variables, semiring, spark, name, pattern=field == "pattern")


def from_numpy(
    array: Any,
    variables: Sequence[str] | None = None,
    semiring: Union[str, Semiring] = "real",
    spark: "SparkSession | None" = None,
    name: str | None = None,
) -> Factor:
    """A dense n-d array as a factor: one row per entry that is not the semiring's zero.

    Parameters
    ----------
    array : array-like
        Its entries are semiring values; entries equal to the semiring's zero
        (0 for real/counting, +inf for min_plus, ...) are left out.
    variables : sequence of str, optional
        One name per axis; default ``i, j, k, ...``.
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"array"``.

    Raises
    ------
    InvalidFactorValueError
        A NaN entry.
    ValueTypeMismatchError
        Non-integer entries for a bigint semiring, or a non-numeric array.

    Examples
    --------
    >>> import numpy as np
    >>> f = from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> f.variables, sorted(tuple(r) for r in f.df.collect())
    (('i', 'j'), [(0, 1, 2.0), (1, 0, 3.0)])
    """
    import pandas as pd

    array = np.asarray(array)
    semiring = get_semiring(semiring)
    if variables is None:
        if array.ndim > 18:
            raise InvalidArgumentError("array", f"{array.ndim}-d array", "name the variables of arrays over 18-d")
        variables = tuple(chr(ord("i") + k) for k in range(array.ndim))
    variables = _check_variables(variables, arity=array.ndim)
    name = name or "array"
    values = _coerce_values(array, semiring, name)
    mask = _nonzero_mask(values, semiring)
    if array.ndim == 0:  # a scalar: a factor with no variables (numpy refuses nonzero() on 0-d)
        columns = {VALUE: values.reshape(1)[mask.reshape(1)]}
    else:
        index = np.nonzero(mask)
        columns = {v: idx.astype(np.int64) for v, idx in zip(variables, index)}
        columns[VALUE] = values[mask]
    return _ship(pd.DataFrame(columns), variables, semiring, spark, name)


def from_scipy(
    matrix: Any,
    variables: Sequence[str] = (ROW, COL),
    semiring: Union[str, Semiring] = "real",
    spark: "SparkSession | None" = None,
    name: str | None = None,
) -> Factor:
    """A scipy sparse matrix (or array) as a factor over its stored entries.

    Stored entries equal to the semiring's zero (explicit zeros, for
    real/counting) are dropped; repeated (i, j) entries are ⊕-merged.

    Parameters
    ----------
    matrix : scipy.sparse matrix or array (any format), 2-d
    variables : pair of str
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"matrix"``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.coo_matrix(([5.0, 0.0], ([0, 1], [1, 0])), shape=(2, 2))  # one explicit zero
    >>> sorted(tuple(r) for r in from_scipy(m).df.collect())
    [(0, 1, 5.0)]
    """
    import scipy.sparse

    semiring = get_semiring(semiring)
    variables = _check_variables(variables, arity=2)
    coo = scipy.sparse.coo_matrix(matrix)
    return _coo_to_factor(coo, variables, semiring, spark, name or "matrix")


def from_pandas(
    pdf: "pd.DataFrame",
    variables: Sequence[str] | None = None,
    value: str | None = VALUE,
    semiring: Union[str, Semiring] = "counting",
    spark: "SparkSession | None" = None,
    name: str | None = None,
) -> Factor:
    """A pandas DataFrame (small, on the driver) as a factor.

    Parameters
    ----------
    pdf : pandas.DataFrame
    variables : sequence of str, optional
        Default: every column but the value column.
    value : str or None
        Value column.  ``None``, or a missing column named exactly
        ``"value"``, makes every row one (a relation).
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"pandas"``.

    Notes
    -----
    Nulls are checked on the driver (the data is there already); integer
    variable columns become ``bigint``; rows whose value is the semiring's
    zero are dropped; repeated keys are kept (``Factor.normalize`` merges).

    Raises
    ------
    MissingColumnError, NullKeyError, InvalidFactorValueError, ValueTypeMismatchError

    Examples
    --------
    >>> import pandas as pd
    >>> f = from_pandas(pd.DataFrame({"a": [1, 2], "b": [3, 4], "value": [2, 0]}))
    >>> f.variables, [tuple(r) for r in f.df.collect()]
    (('a', 'b'), [(1, 3, 2)])
    """
    semiring = get_semiring(semiring)
    name = name or "pandas"
    source = f"factor {name!r}"
    columns = [str(c) for c in pdf.columns]
    pdf = pdf.set_axis(columns, axis=1)
    value = _resolve_value(value, columns, source)
    if variables is None:
        variables = [c for c in columns if c != value]
    variables = _check_variables(variables)
    for v in variables:
        if v not in columns:
            raise MissingColumnError(column=v, available=columns, source=source)
        nulls = int(pdf[v].isna().sum())
        if nulls:
            raise NullKeyError(factor=name, column=v, count=nulls)
    out = {v: (pdf[v].astype(np.int64) if pdf[v].dtype.kind in "iu" else pdf[v]) for v in variables}
    if value is None:
        values = np.full(len(pdf), semiring.one, dtype=_numpy_type(semiring))
    else:
        raw = pdf[value]
        nulls = int(raw.isna().sum())
        if nulls:
            problem = "NaN" if raw.dtype.kind == "f" else "null"
            raise InvalidFactorValueError(factor=name, column=value, problem=problem, count=nulls)
        values = _coerce_values(raw.to_numpy(), semiring, name, column=value)
    import pandas as pd

    frame = pd.DataFrame(out).reset_index(drop=True)
    frame[VALUE] = values
    frame = frame[_nonzero_mask(values, semiring)]
    df = _session(spark).createDataFrame(frame) if len(frame) else _empty_frame(spark, frame, semiring)
    df = df.select(*variables, df[VALUE].cast(semiring.value_type).alias(VALUE))
    return Factor(df=df, variables=variables, semiring=semiring, value=VALUE, name=name)


def _empty_frame(spark, frame: "pd.DataFrame", semiring: Semiring) -> "DataFrame":
    """An empty DataFrame with a schema (Arrow cannot type empty object columns)."""
    types = {"i": "bigint", "u": "bigint", "b": "boolean", "f": "double"}
    ddl = ", ".join(
        f"`{c}` {semiring.value_type if c == VALUE else types.get(frame[c].dtype.kind, 'string')}"
        for c in frame.columns
    )
    return _session(spark).createDataFrame([], ddl)


def _resolve_value(value: str | None, columns: Sequence[str], source: str) -> str | None:
    """None when rows are a relation; raise if an explicitly named value column is missing."""
    if value is None or value in columns:
        return value
    if value == VALUE:
        return None  # the default name, absent: a relation
    raise MissingColumnError(column=value, available=list(columns), source=source)


# --- CSV / Parquet -----------------------------------------------------------


def _table_factor(
    df: "DataFrame",
    variables: Sequence[str] | None,
    value: str | None,
    semiring: Union[str, Semiring],
    name: str,
    source: str,
    validate: bool,
) -> Factor:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    semiring = get_semiring(semiring)
    columns = df.columns
    value = _resolve_value(value, columns, source)
    if variables is None:
        variables = [c for c in columns if c != value]
    variables = _check_variables(variables)
    for v in variables:
        if v not in columns:
            raise MissingColumnError(column=v, available=columns, source=source)
    # Integer variables become bigint so they join with graph and matrix factors.
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    keys = [
        F.col(v).cast("bigint").alias(v) if isinstance(df.schema[v].dataType, integral) else F.col(v) for v in variables
    ]
    if value is None:
        df = df.select(*keys, semiring.one_col().alias(VALUE))
    else:
        v = F.col(value)
        if semiring.value_type == "boolean" and isinstance(df.schema[value].dataType, T.NumericType):
            v = v != F.lit(0)  # non-zero means true
        df = df.select(*keys, v.alias(VALUE))
    factor = Factor.from_dataframe(df, variables, semiring, VALUE, name=name)
    factor = replace(factor, df=_drop_zeros(factor.df, semiring))
    return factor.validate() if validate else factor


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

    Read by Spark with ``header`` and ``inferSchema`` (one extra pass over
    the file to infer types).

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
        Also run :meth:`Factor.validate` (one Spark job) for null keys and
        null / NaN values.

    Notes
    -----
    Integer variable columns are widened to ``bigint``; for a boolean
    semiring a numeric value column means ``value != 0``; rows whose value is
    the semiring's zero are dropped; repeated keys are kept.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "r.csv")
    >>> _ = open(p, "w").write("a,b\\n1,2\\n2,3\\n")
    >>> f = read_csv(p)
    >>> f.variables, f.value, f.count()
    (('a', 'b'), 'value', 2)
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    spark = _session(spark)
    name = name or _default_name(path)
    df = _spark_read(path, lambda p: spark.read.csv(p, header=True, inferSchema=True))
    return _table_factor(df, variables, value, semiring, name, path, validate)


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

    Same parameters and rules as :func:`read_csv`; the column types come
    from the Parquet schema.

    Returns
    -------
    Factor

    Raises
    ------
    InputNotFoundError, MissingColumnError, ValueTypeMismatchError

    Examples
    --------
    >>> import os, tempfile
    >>> from faq.factor import factor_of
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "t.parquet")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> [tuple(r) for r in read_parquet(p).df.collect()]
    [(1, 2, 5)]
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    spark = _session(spark)
    name = name or _default_name(path)
    df = _spark_read(path, spark.read.parquet)
    return _table_factor(df, variables, value, semiring, name, path, validate)


_FORMATS = ("csv", "parquet", "mtx", "edges")


def _format_of(path: str) -> str:
    lower = path.lower().rstrip("/")
    if lower.endswith((".csv", ".csv.gz", ".csv.bz2")):
        return "csv"
    if lower.endswith(".parquet"):
        return "parquet"
    if lower.endswith((".mtx", ".mtx.gz", ".mtx.bz2")):
        return "mtx"
    return "edges"


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

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "g.edges")
    >>> _ = open(p, "w").write("1 2\\n")
    >>> read_factor(p).variables
    ('src', 'dst')
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    fmt = format or _format_of(path)
    if fmt not in _FORMATS:
        raise InvalidArgumentError("format", format, f"must be one of {', '.join(_FORMATS)}")
    loader = {"csv": read_csv, "parquet": read_parquet, "mtx": read_matrix_market, "edges": read_edge_list}[fmt]
    return loader(path, **kw)


# --- exporters (small results only) -------------------------------------------


def to_pandas(factor: Factor, max_rows: int = 10_000_000) -> "pd.DataFrame":
    """Collect a factor to a pandas DataFrame (for small results only).

    Counts the rows first (one Spark job) and refuses more than
    ``max_rows``.  Columns: variables, then the value; rows sorted by the
    variables, so the output is deterministic.

    Parameters
    ----------
    factor : Factor
    max_rows : int
        Largest number of rows to bring to the driver.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ResultTooLargeError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> to_pandas(factor_of([(2, 1.5), (1, 3.0)], ["x"], "real")).values.tolist()
    [[1.0, 3.0], [2.0, 1.5]]
    """
    rows = factor.count()
    if rows > max_rows:
        raise ResultTooLargeError(factor=factor.name, rows=rows, max_rows=max_rows)
    pdf = factor.df.select(*factor.columns()).toPandas()  # bounded by max_rows
    if factor.variables and len(pdf):
        pdf = pdf.sort_values(list(factor.variables), kind="stable").reset_index(drop=True)
    return pdf


def to_scipy(factor: Factor, shape: tuple[int, int] | None = None, max_rows: int = 10_000_000):
    """A 2-variable factor as a ``scipy.sparse.csr_array`` (for small results only).

    Repeated keys are ⊕-merged first (:meth:`Factor.normalize`, in Spark),
    since scipy would add them whatever the semiring.  Boolean factors give
    a bool matrix.  Mind that scipy reads absent entries as 0, which is the
    semiring's zero only for +/× semirings.

    Parameters
    ----------
    factor : Factor
        Two variables holding non-negative integers (row, column).
    shape : (int, int), optional
        Default: (max row index + 1, max column index + 1).
    max_rows : int
        As in :func:`to_pandas`.

    Raises
    ------
    NotAMatrixError, ResultTooLargeError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> to_scipy(factor_of([(0, 1, 2.0), (1, 0, 3.0)], ["i", "j"], "real")).toarray().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    import scipy.sparse

    if len(factor.variables) != 2:
        raise NotAMatrixError(factor=factor.name, reason=f"it has {len(factor.variables)} variable(s)")
    for v in factor.variables:
        kind = factor.df.schema[v].dataType.simpleString()
        if kind not in ("tinyint", "smallint", "int", "bigint"):
            raise NotAMatrixError(factor=factor.name, reason=f"variable {v!r} is {kind}, not an integer")
    pdf = to_pandas(factor.normalize(), max_rows=max_rows)
    i, j = (pdf[v].to_numpy(dtype=np.int64) for v in factor.variables)
    values = pdf[factor.value].to_numpy(dtype=_numpy_type(factor.semiring))
    if i.size and (i.min() < 0 or j.min() < 0):
        raise NotAMatrixError(factor=factor.name, reason="it has negative indices")
    if shape is None:
        shape = (int(i.max()) + 1 if i.size else 0, int(j.max()) + 1 if j.size else 0)
    elif i.size and (i.max() >= shape[0] or j.max() >= shape[1]):
        raise NotAMatrixError(
            factor=factor.name, reason=f"index ({int(i.max())}, {int(j.max())}) is outside shape {tuple(shape)}"
        )
    return scipy.sparse.csr_array((values, (i, j)), shape=tuple(shape))


def _temp_beside(path: str, suffix: str = ".tmp") -> str:
    """A fresh name in the target's folder (so the final move is an atomic rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=suffix, dir=folder)
    os.close(fd)
    return tmp


def write_matrix_market(factor: Factor, path: PathLike, shape: tuple[int, int] | None = None) -> None:
    """Write a 2-variable factor as a Matrix Market file (for small results only).

    Uses :func:`to_scipy` and :func:`scipy.io.mmwrite` (general symmetry;
    a boolean factor is written as a ``pattern`` matrix).  The file is
    written to a temporary name in the same folder, then renamed, so a
    failure leaves nothing half-written.

    Parameters
    ----------
    factor : Factor
        Two variables holding non-negative integer indices (0-based; the file
        is 1-based, as the format requires).
    path : str or path-like
        Written as given (no ``.mtx`` is added).
    shape : (int, int), optional
        Default: max index + 1 per variable.

    Raises
    ------
    NotAMatrixError, ResultTooLargeError

    Examples
    --------
    >>> import os, tempfile
    >>> from faq.factor import factor_of
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "a.mtx")
    >>> write_matrix_market(factor_of([(0, 1, 2.0)], ["i", "j"], "real"), p, shape=(2, 2))
    >>> matrix_shape(p)
    (2, 2)
    >>> tmp.cleanup()
    """
    import scipy.io

    path = os.fspath(path)
    matrix = to_scipy(factor, shape=shape)
    field = "pattern" if factor.semiring.value_type == "boolean" else None
    if factor.semiring.value_type == "bigint":
        field = "integer"
    tmp = _temp_beside(path)
    try:
        with open(tmp, "wb") as handle:  # a file object: mmwrite does not rename or add ".mtx"
            scipy.io.mmwrite(
                handle, matrix, comment=f" factor {factor.name!r} written by faq", field=field, symmetry="general"
            )
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_table(factor: Factor, path: PathLike) -> None:
    """Write a factor as one CSV file (with header) or a Parquet directory.

    ``.csv`` (or ``.csv.gz``): Spark writes a single part file
    (``coalesce(1)``, so for small results only) into a temporary directory
    beside the target; the part file is then moved to ``path``.
    ``.parquet``: Spark writes a directory under a temporary name, which is
    then renamed to ``path``.  Columns: variables, then the value.  An
    existing target is replaced; on any failure it is left as it was and
    temporary files are removed.  Paths are local to the driver.

    Parameters
    ----------
    factor : Factor
    path : str or path-like

    Raises
    ------
    InvalidArgumentError
        ``path`` ends neither in ``.csv``/``.csv.gz`` nor ``.parquet``.

    Examples
    --------
    >>> import os, tempfile
    >>> from faq.factor import factor_of
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = os.path.join(tmp.name, "t.csv")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> open(p).read()
    'a,b,value\\n1,2,5\\n'
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    fmt = _format_of(path)
    if fmt not in ("csv", "parquet") or path.lower().endswith(".bz2"):
        raise InvalidArgumentError("path", path, "write_table writes .csv, .csv.gz or .parquet")
    df = factor.df.select(*factor.columns())
    folder = os.path.dirname(os.path.abspath(path))
    tmp_dir = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        out = os.path.join(tmp_dir, "out")
        if fmt == "csv":
            gz = path.lower().endswith(".gz")
            writer = df.coalesce(1).write.option("header", True)
            if gz:
                writer = writer.option("compression", "gzip")
            writer.csv(out)
            parts = sorted(p for p in os.listdir(out) if p.startswith("part-"))
            if len(parts) != 1:  # coalesce(1) gives one; never guess among several
                raise FAQValueError(f"Spark wrote {len(parts)} part files for {path!r}, expected 1", path=path)
            os.replace(os.path.join(out, parts[0]), path)
        else:
            df.write.parquet(out)
            if os.path.lexists(path):
                # A rename cannot replace a non-empty directory: move the old target aside,
                # move the new one in, and put the old one back if that fails.
                old = os.path.join(tmp_dir, "old")
                os.replace(path, old)
                try:
                    os.replace(out, path)
                except BaseException:
                    os.replace(old, path)
                    raise
            else:
                os.replace(out, path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
