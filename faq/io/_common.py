"""What the loaders and writers of :mod:`faq.io` share: the session, paths, argument checks, zeros.

Examples
--------
>>> default_name("data/wiki-Vote.txt.gz")
'wiki-Vote'
>>> [format_of(p) for p in ("t.csv.gz", "out.parquet/", "a.mtx", "g.txt")]
['csv', 'parquet', 'mtx', 'edges']
>>> from faq.scratch import scratch_path
>>> path = scratch_path("g.dat")
>>> with open(path, "wb") as f:
...     _ = f.write(b"PAR1\x15\x04")
>>> format_of(path)   # Parquet's magic bytes, whatever the name
'parquet'
"""

from __future__ import annotations

import glob
import os
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Sequence, TypeVar, Union

from faq.errors import (FAQRuntimeError, InputNotFoundError, InvalidArgumentError, MalformedInputError,
                        MissingColumnError)
from faq.factor import VALUE

if TYPE_CHECKING:
    import pyarrow
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


def driver_session(spark: "SparkSession | None") -> "SparkSession | DeferredSession":
    """``spark``, or the session for rows the driver holds (:func:`faq.spark.session_for_driver_data`): a
    deferred one unless a session runs, so Spark starts only if a step needs the rows as a DataFrame."""
    if spark is not None:
        return spark
    from faq.spark import session_for_driver_data

    return session_for_driver_data()


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


def client_path(path: str) -> str:
    """``path`` as Spark must be given it: a relative local path made absolute here, on the client.

    Spark resolves a relative path against its driver's working directory: a Spark Connect server's,
    where a file of the same name may be another file.  A URI (``hdfs://...``, ``file:...``) is kept.

    >>> client_path("g.txt") == os.path.join(os.getcwd(), "g.txt"), client_path("s3a://b/g.txt")
    (True, 's3a://b/g.txt')
    """
    return path if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", path) else os.path.abspath(path)


def spark_read(path: str, read: Callable[[str], T]) -> T:
    """Run a Spark reader on :func:`client_path` of ``path``, turning Spark's PATH_NOT_FOUND into
    InputNotFoundError (naming ``path`` as given)."""
    from pyspark.errors import AnalysisException

    check_exists(path)
    try:
        return read(client_path(path))
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
    """The format of a path, one of :data:`FORMATS`: by its extension, else a local file starting with
    Parquet's magic bytes is ``parquet`` (a Parquet file is never read as text), else ``edges``.

    The one place a path's format is recognised: every job that takes a path asks here.
    """
    lower = path.lower().rstrip("/")
    if lower.endswith((".csv", ".csv.gz", ".csv.bz2")):
        return "csv"
    if lower.endswith(".parquet") or lower.endswith(".parq"):
        return "parquet"
    if lower.endswith((".mtx", ".mtx.gz", ".mtx.bz2")):
        return "mtx"
    return "parquet" if _starts_with(path, PARQUET_MAGIC) else "edges"


#: The first (and last) four bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"


def _starts_with(path: str, magic: bytes) -> bool:
    """Whether ``path`` is a local regular file whose first bytes are ``magic`` (False when unreadable)."""
    local = local_path(path)
    if not is_local(path) or not os.path.isfile(local):
        return False
    try:
        with open(local, "rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


#: Why a text file whose last line has no line break is refused (update batches, as-of tables): it may be a
#: write cut short -- ``2,b,12`` cut to ``2,b,1`` still parses, as another row.
CUT_LAST_LINE = ("the file ends inside this line (no line break after it), so it may be a write cut short; end "
                 "the file with a line break (write files whole: under a '.' name, then rename them)")
_TAIL = 1 << 16  # bytes searched back from the end for the last line


def whole_text(path: str) -> "pyarrow.Buffer":
    """A local text file's bytes (``.gz``, ``.bz2`` decompressed), refused when its last line lacks a line break.

    A last line that is blank needs none.  Edge lists are exempt (SNAP files often end without one, and
    an edge list is read whole, not appended to); a table or a batch is refused (:data:`CUT_LAST_LINE`).

    Raises
    ------
    MalformedInputError
        The cut line, with its 1-based number; or a corrupt compressed file.
    """
    import numpy as np
    import pyarrow as pa

    try:
        data = pa.input_stream(local_path(path), compression="detect").read_buffer()
    except (OSError, pa.ArrowException) as exc:
        raise MalformedInputError(path=path, reason=f"the file is corrupt or truncated ({exc}); replace it with a "
                                                    "complete copy") from None
    tail = bytes(memoryview(data)[-_TAIL:])
    if not tail or tail[-1:] in (b"\n", b"\r"):
        return data
    line = tail[tail.rfind(b"\n") + 1:].decode("utf-8", errors="replace")
    if not line.strip():
        return data
    number = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10)) + 1  # the error path only
    raise MalformedInputError(path=path, line_number=number, line=line, reason=CUT_LAST_LINE)


#: The operating system's refusals to write that the user can act on (the catalog's ``WRITE_FAILED``).
WRITE_ERRNOS = ("ENOSPC", "EROFS", "EACCES", "EDQUOT", "EPERM")


def write_error(exc: OSError, path: "str | None" = None) -> "FAQRuntimeError | None":
    """``WRITE_FAILED`` naming the path for a full disk, a read-only filesystem or a denied write, else None.

    >>> import errno
    >>> write_error(OSError(errno.ENOSPC, "No space left on device", "out.csv")).parameters["errno_name"]
    'ENOSPC'
    >>> write_error(OSError(errno.EPIPE, "Broken pipe")) is None
    True
    """
    import errno as errnos

    number = exc.errno if exc.errno is not None else _arrow_errno(str(exc))
    name = errnos.errorcode.get(number or 0, "")
    if name not in WRITE_ERRNOS:
        return None
    where = exc.filename if exc.filename is not None else path
    return FAQRuntimeError(error_class="WRITE_FAILED", path=os.fspath(where) if where is not None else "the output",
                           reason=exc.strerror or os.strerror(number), errno_name=name)


def _arrow_errno(message: str) -> "int | None":
    """The errno Arrow writes into its messages (``... [errno 28] No space left on device``), if any."""
    found = re.search(r"\[errno (\d+)\]", message)
    return int(found.group(1)) if found else None


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
