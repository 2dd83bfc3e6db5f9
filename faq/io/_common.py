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
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar, Union

from faq.errors import InputNotFoundError, InvalidArgumentError, MissingColumnError
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
    return df.where(~semiring.is_zero(v) | v.isNull())
