"""What the loaders and writers of :mod:`faq.io` share: the session, paths, argument checks, zeros.

Examples
--------
>>> default_name("data/wiki-Vote.txt.gz")
'wiki-Vote'
>>> [format_of(p) for p in ("t.csv.gz", "out.parquet/", "a.mtx", "g.txt")]
['csv', 'parquet', 'mtx', 'edges']
"""

from __future__ import annotations

import glob
import os
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Sequence, TypeVar, Union

from faq.errors import InputNotFoundError, InvalidArgumentError, MalformedInputError, MissingColumnError
from faq.factor import VALUE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.semirings import Semiring

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T")

# Column names of matrices (row, column), named once.
ROW, COL = "i", "j"

#: The file formats :func:`format_of` tells apart (``read_factor(format=...)``).
FORMATS = ("csv", "parquet", "mtx", "edges")


def spark_columns(semiring: "Semiring"):
    """``semiring``'s Spark Column forms (:func:`faq.semirings.spark_backend.columns`), imported when first
    needed: reading a file the driver holds loads no PySpark."""
    from faq.semirings.spark_backend import columns

    return columns(semiring)


def session(spark: "SparkSession | None") -> "SparkSession":
    """``spark``, or the session of :func:`faq.spark.get_session`."""
    if spark is not None:
        return spark
    from faq.spark import get_session

    return get_session()


# --- paths -----------------------------------------------------------------------------------


def is_local(path: str) -> bool:
    """True for a plain local path (no URI scheme other than ``file:``)."""
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> str:
    """The path without its ``file://`` scheme."""
    return path[len("file://") :] if path.startswith("file://") else path


def check_exists(path: str) -> None:
    """Raise InputNotFoundError for a missing local path (globs and URIs are left to Spark)."""
    if is_local(path) and not glob.has_magic(path) and not os.path.exists(local_path(path)):
        raise InputNotFoundError(path=path)


def spark_read(path: str, read: Callable[[str], T]) -> T:
    """Run a Spark reader, turning Spark's PATH_NOT_FOUND into InputNotFoundError."""
    from pyspark.errors import AnalysisException

    check_exists(path)
    try:
        return read(path)
    except AnalysisException as exc:
        if (exc.getCondition() or "") == "PATH_NOT_FOUND":
            raise InputNotFoundError(path=path) from None
        raise


# Spark's error condition (and its sub-conditions) for a file it cannot read: corrupt,
# truncated, or not of its format.  Only this one is turned into MalformedInputError.
FAILED_READ_FILE = "FAILED_READ_FILE"


@contextmanager
def malformed_if_unreadable(path: str) -> Iterator[None]:
    """Turn Spark's failure to read a file (a corrupt Parquet file, a truncated ``.gz``) into MalformedInputError.

    Every other failure propagates as it is.  Spark reads the file at the
    read call (when it infers a schema) or at the first job; wrap both.
    """
    try:
        yield
    except _spark_failures() as exc:
        failure = _failed_read(exc)
        if failure is None:
            raise
        file, cause = failure
        given = os.path.abspath(local_path(path)).rstrip("/")
        what = "the file" if not file or os.path.abspath(file).rstrip("/") == given else file  # a part file
        reason = f"{what} is corrupt or truncated ({cause}); replace it with a complete copy"
        raise MalformedInputError(path=path, reason=reason) from None


def _spark_failures() -> tuple[type[BaseException], ...]:
    """The exception types Spark's failures arrive as: PySpark's, and py4j's for an unconverted Java one."""
    from pyspark.errors import PySparkException

    try:
        from py4j.protocol import Py4JJavaError
    except ImportError:  # a Spark Connect client without py4j
        return (PySparkException,)
    return (PySparkException, Py4JJavaError)


def _failed_read(exc: BaseException) -> tuple[str, str] | None:
    """The file Spark could not read and why, or None when ``exc`` is another failure."""
    java = getattr(exc, "java_exception", None)  # classic PySpark leaves SparkException unconverted
    if java is None:  # a PySparkException (Spark Connect, or a converted one)
        condition = exc.getCondition() or ""  # type: ignore[attr-defined]
        file = (exc.getMessageParameters() or {}).get("path", "")  # type: ignore[attr-defined]
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        cause = re.sub(r"^\[[A-Z_.]+\] | SQLSTATE: \w+$", "", text)  # the condition is prefixed once, below
    else:
        from py4j.protocol import Py4JError

        try:
            condition = java.getCondition() or ""
            file = java.getMessageParameters().get("path") or ""
            inner = java.getCause()
            cause = (inner.getMessage() or inner.toString()) if inner is not None else java.getMessage()
        except Py4JError:  # not a SparkThrowable: no condition to check
            return None
    if condition.split(".")[0] != FAILED_READ_FILE:
        return None
    cause = " ".join(f"{condition}: {cause}".split())
    if len(cause) > 250:  # Java messages can be long; the first words say what happened
        cause = cause[:247] + "..."
    return _spark_file(str(file)), cause


def _spark_file(uri: str) -> str:
    """``file:///tmp/a%20b.parquet`` (as Spark names a file) -> ``/tmp/a b.parquet``."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def default_name(path: str) -> str:
    """A factor's default name: the file name without its extensions."""
    base = os.path.basename(path.rstrip("/")) or path
    for ext in (".gz", ".bz2"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    stem, ext = os.path.splitext(base)
    return stem or base


def format_of(path: str) -> str:
    """The format a path's extension names, one of :data:`FORMATS` (``edges`` for anything else)."""
    lower = path.lower().rstrip("/")
    if lower.endswith((".csv", ".csv.gz", ".csv.bz2")):
        return "csv"
    if lower.endswith(".parquet"):
        return "parquet"
    if lower.endswith((".mtx", ".mtx.gz", ".mtx.bz2")):
        return "mtx"
    return "edges"


# --- arguments -------------------------------------------------------------------------------


def check_choice(argument: str, value: str, valid: Sequence[str]) -> None:
    """Raise InvalidArgumentError unless ``value`` is one of ``valid``."""
    if value not in valid:
        raise InvalidArgumentError(argument, value, f"must be one of {', '.join(valid)}")


def check_variables(variables: Sequence[str], arity: int | None = None) -> tuple[str, ...]:
    """Distinct variable names (``arity`` of them, if given), none of them the value column's."""
    variables = tuple(variables)
    if arity is not None and len(variables) != arity:
        raise InvalidArgumentError("variables", variables, f"needs exactly {arity} names")
    if len(set(variables)) != len(variables):
        raise InvalidArgumentError("variables", variables, "names must be distinct")
    if VALUE in variables:
        raise InvalidArgumentError("variables", variables, f"{VALUE!r} is the value column's name")
    return variables


def resolve_value(value: str | None, columns: Sequence[str], source: str) -> str | None:
    """The value column, or None when rows are a relation; raise if an explicitly named one is missing."""
    if value is None or value in columns:
        return value
    if value == VALUE:
        return None  # the default name, absent: a relation
    raise MissingColumnError(column=value, available=list(columns), source=source)


# --- values ----------------------------------------------------------------------------------


def drop_zeros(df: "DataFrame", semiring: "Semiring", value: str = VALUE) -> "DataFrame":
    """Drop rows whose value is the semiring's zero; keep nulls so validate() can report them."""
    from pyspark.sql import functions as F

    v = F.col(value)
    return df.where(~spark_columns(semiring).is_zero(v) | v.isNull())
