"""DataFrames whose rows the driver also holds, as numpy columns.

The fast load path (:func:`faq.graphs.edges.prepared_graph`) reads and
cleans an edge list in numpy on the driver, then hands it to Spark.  The
broadcast join (:mod:`faq.joins.broadcast`) builds its index on the driver
from the same rows.  Without a record that the driver already has them,
the rows would go numpy → Spark → ``toArrow`` → numpy, and every row count
would be a Spark job.  This module is that record: :func:`keep_driver_copy`
notes a DataFrame's columns as arrays, :func:`driver_copy` finds them, and
:func:`project_driver_copy` carries them to a row-wise renaming of the
DataFrame (a ``select`` of plain columns).

A DataFrame is immutable, so the record, an attribute of the DataFrame object, can
never go stale; it is dropped when the object is.  A DataFrame derived any
other way (a filter, a join, a cast that changes values) has no record, and
its users fall back to Spark.  Only the code that built a DataFrame from
arrays may call :func:`keep_driver_copy`: the columns must hold exactly the
DataFrame's rows (in any order).

Examples
--------
>>> import numpy as np
>>> from faq.spark import get_session
>>> spark = get_session()
>>> df = keep_driver_copy(spark.createDataFrame([(1, 2), (2, 3)], "src long, dst long"),
...                       {"src": np.array([1, 2]), "dst": np.array([2, 3])})
>>> rows_held(df)
2
>>> renamed = project_driver_copy(df.select(df.dst.alias("b")), df, {"b": "dst"})
>>> driver_copy(renamed)["b"].tolist()
[2, 3]
>>> driver_copy(df.where("src > 1")) is None        # not a renaming: no copy
True
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import numpy as np

from faq.errors import DriverCopyError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["keep_driver_copy", "driver_copy", "rows_held", "project_driver_copy", "held_dataframe",
           "HeldDataFrame", "renamed"]

#: The attribute of a DataFrame object that holds its driver copy: the record travels with the
#: DataFrame (and so with the Factor holding it) and goes when it goes -- no module-wide table.
COPY_ATTRIBUTE = "_faq_driver_copy"


def keep_driver_copy(df: "DataFrame", columns: Mapping[str, np.ndarray], check: bool = True) -> "DataFrame":
    """Record that the driver holds ``df``'s rows as ``columns`` (one array per column); returns ``df``.

    ``check=False`` skips comparing the names with ``df.columns``, which on
    Spark Connect is a round trip carrying the DataFrame's plan -- with a
    local relation of the rows in it (:func:`project_driver_copy` knows them).

    Raises
    ------
    ValueError
        When the arrays differ in length or do not name exactly ``df``'s columns.
    """
    if check and sorted(columns) != sorted(df.columns):
        raise DriverCopyError(expected=df.columns, found=columns)
    if len({len(c) for c in columns.values()}) > 1:
        raise DriverCopyError(error_class="DRIVER_COPY_LENGTHS", lengths={k: len(c) for k, c in columns.items()})
    # Set in the object's own __dict__: a Connect DataFrame's __getattr__ would ask the server for a column.
    vars(df)[COPY_ATTRIBUTE] = MappingProxyType({name: np.asarray(c) for name, c in columns.items()})
    return df


def driver_copy(df: "DataFrame") -> Optional[Mapping[str, np.ndarray]]:
    """``df``'s columns as the driver holds them (read-only mapping), or None."""
    try:
        return vars(df).get(COPY_ATTRIBUTE)
    except TypeError:  # an object without a __dict__ holds no copy
        return None


def rows_held(df: "DataFrame") -> Optional[int]:
    """The number of rows of ``df`` when the driver holds them (no Spark job), else None."""
    copy = driver_copy(df)
    if copy is None:
        return None
    return len(next(iter(copy.values()))) if copy else 0


def project_driver_copy(projected: "DataFrame", source: "DataFrame", renames: Mapping[str, str]) -> "DataFrame":
    """Carry ``source``'s driver copy to ``projected``, whose column ``new`` is ``source``'s ``renames[new]``.

    ``projected`` must be a row-wise selection of plain columns of
    ``source`` (renamed, perhaps repeated); nothing is recorded when
    ``source`` has no copy.  Returns ``projected``.
    """
    copy = driver_copy(source)
    if copy is not None:
        keep_driver_copy(projected, {new: copy[old] for new, old in renames.items()}, check=False)
    return projected


# --- DataFrames made only when Spark needs them ------------------------------------------------

#: Spark SQL type of a column held as a numpy array of each kind (anything else: string).
_SPARK_TYPES = {"i": "bigint", "u": "bigint", "f": "double", "b": "boolean", "M": "timestamp"}


class HeldDataFrame:
    """A DataFrame of rows the driver holds, made (``createDataFrame``) only when first used.

    A factor made from Python, pandas, numpy or scipy data, or from an edge
    list the driver read, needs no Spark DataFrame while its steps run
    in-process: creating one costs a round trip to the JVM (tens of
    milliseconds each, for dozens of small factors) and, on Spark Connect,
    ships the rows with the plan.  This stands in for it: its session,
    columns and schema are known without Spark; any other attribute makes
    the DataFrame once and answers from it, so every DataFrame method works.
    :func:`faq.spark.is_dataframe` counts it as one; the driver's copy
    (:func:`driver_copy`) is recorded under it.
    """

    def __init__(self, spark: Any, columns: Mapping[str, np.ndarray], types: Mapping[str, str],
                 make: Optional[Callable[[], "DataFrame"]] = None) -> None:
        self.__dict__["_spark"] = spark
        self.__dict__["_columns"] = dict(columns)
        self.__dict__["_types"] = dict(types)
        self.__dict__["_make"] = make
        self.__dict__["_df"] = None

    @property
    def sparkSession(self) -> Any:  # noqa: N802 - DataFrame's name
        return self._spark

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    @property
    def schema(self) -> Any:
        from pyspark.sql.types import (
            ArrayType,
            BooleanType,
            DoubleType,
            LongType,
            StringType,
            StructField,
            StructType,
            TimestampType,
        )

        kinds = {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType(), "string": StringType(),
                 "timestamp": TimestampType(), "array<double>": ArrayType(DoubleType(), False)}  # an array ring's
        return StructType([StructField(c, kinds[self._types[c]]) for c in self._columns])

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        return [(c, self._types[c]) for c in self._columns]

    def materialized(self) -> "DataFrame":
        """The Spark DataFrame of the rows (made on the first call)."""
        if self._df is None and self._make is not None:
            self.__dict__["_df"] = self._make()
        if self._df is None:
            import pandas as pd

            ddl = ", ".join(f"`{c}` {self._types[c]}" for c in self._columns)
            # An array ring's values are (rows, w): a column of one array per row.
            frame = pd.DataFrame({c: list(a) if np.ndim(a) == 2 else np.asarray(a) for c, a in self._columns.items()},
                                 copy=False)
            rows = len(frame)
            self.__dict__["_df"] = self._spark.createDataFrame(frame, ddl) if rows else (
                self._spark.createDataFrame([], ddl))
        return self._df

    def __getattr__(self, name: str) -> Any:
        return getattr(self.materialized(), name)

    def __getitem__(self, item: Any) -> Any:
        return self.materialized()[item]

    def __repr__(self) -> str:
        shown = ", ".join(f"{c}: {t}" for c, t in self.dtypes)
        return f"DataFrame[{shown}] (held on the driver{'' if self._df is None else ', made'})"


def held_dataframe(spark: Any, columns: Mapping[str, np.ndarray], types: Optional[Mapping[str, str]] = None,
                   make: Optional[Callable[[], "DataFrame"]] = None) -> HeldDataFrame:
    """A :class:`HeldDataFrame` of ``columns`` (typed by ``types``, else by their numpy kinds), its
    rows recorded as the driver's copy; ``make`` makes the DataFrame when Spark needs it (default:
    ``createDataFrame`` of the columns).

    >>> import numpy as np
    >>> from faq.spark import get_session
    >>> df = held_dataframe(get_session(), {"a": np.array([1, 2]), "value": np.array([0.5, 1.5])})
    >>> rows_held(df), df.columns, [f.dataType.simpleString() for f in df.schema]
    (2, ['a', 'value'], ['bigint', 'double'])
    >>> sorted(map(tuple, df.collect()))       # Spark's DataFrame, made now
    [(1, 0.5), (2, 1.5)]
    """
    types = dict(types or {})
    for name, array in columns.items():
        types.setdefault(name, _SPARK_TYPES.get(np.asarray(array).dtype.kind, "string"))
    df = HeldDataFrame(spark, columns, types, make)
    keep_driver_copy(df, columns)
    return df


def renamed(df: Any, renames: Mapping[str, str]) -> Any:
    """``df``'s columns ``renames[new]`` as ``new`` (a row-wise renaming): held rows stay held, with no
    Spark call; else a ``select`` that keeps the driver's copy (:func:`project_driver_copy`)."""
    if isinstance(df, HeldDataFrame):
        types = dict(df.dtypes)
        return held_dataframe(df.sparkSession, {new: df._columns[old] for new, old in renames.items()},
                              {new: types[old] for new, old in renames.items()})
    from pyspark.sql import functions as F

    projected = df.select(*[F.col(old).alias(new) for new, old in renames.items()])
    return project_driver_copy(projected, df, renames)
