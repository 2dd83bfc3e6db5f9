"""The rows a piece of work reads: held by the driver, or distributed in Spark.

Before a job decides where to run, it must know three things of each input:
does the driver hold its rows already, how many are there, and what would
moving them cost.  A :class:`Relation` is that answer, made once per input
by :meth:`Relation.of` and read by the placement policy
(:func:`faq.placement_policy.choose` asks ``held``, ``rows`` and ``bytes``)
and by the fetch to the driver (:meth:`Relation.fetched`):

* **held** -- numpy columns on the driver: a pandas frame, an Arrow table, a
  mapping of arrays, rows faq made (:meth:`Relation.from_arrays`: a graph it
  loaded, an in-process output, a factor of tuples), perhaps with the Spark
  DataFrame of the same rows beside them.  ``rows`` is exact; nothing moves
  to run it in-process, and the DataFrame (:attr:`Relation.frame`) is made
  only when a step needs Spark.
* **distributed** -- a Spark DataFrame.  ``rows`` is estimated without a
  Spark job: from the footers of the local Parquet files it scans
  (:func:`file_rows`, an upper bound), else unknown (``inf``).  Fetching it
  is one Arrow collect of at most ``limit + 1`` rows (:func:`collect_within`),
  so an input too large costs that collect and never more.

Examples
--------
>>> import pandas as pd
>>> r = Relation.of(pd.DataFrame({"k": [1, 2, 3], "x": [0.5, 1.5, 2.5]}))
>>> r.held, r.rows, r.bytes, r.describe()
(True, 3, 48, '3 rows held on the driver (48 B)')
>>> from faq.spark import get_session
>>> d = Relation.of(get_session().createDataFrame([(1, 2.0), (2, 3.0)], "k long, x double"))
>>> d.held, d.rows, d.describe()
(False, inf, 'rows unknown, in Spark')
>>> f = d.fetched(limit_bytes=1 << 20)            # one Arrow collect: now held
>>> f.held, f.rows, sorted(f.arrays["x"].tolist())
(True, 2, [2.0, 3.0])
>>> d.fetched(limit_bytes=16).held                # more than 16 bytes: stays in Spark
False
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from faq.arrow_arrays import arrow_to_pandas
from faq.parquet_scan import file_rows, local_files, read_scan

__all__ = ["Relation", "BYTES_PER_COLUMN", "fetch_rows", "distributed", "collect_within", "file_rows", "local_files"]

#: Bytes a column of an input takes a row (int64 or double ids and values): what a fetch moves.
BYTES_PER_COLUMN = 8


def fetch_rows(budget: float, columns: int) -> int:
    """Rows of a ``columns``-column input whose copy fits ``budget`` bytes (:data:`BYTES_PER_COLUMN` a column a row).

    >>> fetch_rows(1600, 2)
    100
    """
    return int(budget // (BYTES_PER_COLUMN * max(columns, 1)))


@dataclass(frozen=True, eq=False)
class Relation:
    """An input's rows, held on the driver (``data``) or distributed (``dataframe``), and their size.

    Make one with :meth:`of` (recognise a value), :meth:`from_arrays` (rows the
    driver made), or directly with both ``data`` and ``dataframe`` for a
    DataFrame whose rows the driver also holds (an in-process output Spark
    was given).  ``rows`` is exact when held, else an estimate (``inf`` when
    unknown), learnt on first use; ``source`` says how (``"held"``,
    ``"parquet footers"``, ``"unknown"``).  Asking ``held``, ``columns`` or
    :meth:`dtypes` of a held relation costs nothing: its Spark DataFrame
    (:attr:`frame`) is made only when a step needs Spark.

    Compared by identity: two relations are the same rows only if they are
    the same object (arrays have no cheap equality).
    """

    columns: tuple[str, ...]
    data: Any = field(default=None, repr=False)  # held: an Arrow table or a mapping of numpy columns
    dataframe: Any = field(default=None, repr=False)  # the Spark DataFrame, when one exists already
    #: Spark SQL types of held columns by name (``"bigint"``, ``"double"``, ``"array<double>"``...):
    #: what :attr:`frame` makes and :meth:`dtypes` answers without Spark.
    types: Optional[Mapping[str, str]] = field(default=None, repr=False)
    session: Any = field(default=None, repr=False)  # where to make the DataFrame (None: a driver-data session)
    make: Optional[Callable[[], Any]] = field(default=None, repr=False)  # makes the DataFrame, when not the rows'

    @classmethod
    def from_arrays(cls, columns: Mapping[str, Any], types: Optional[Mapping[str, str]] = None,
                    session: Any = None, make: Optional[Callable[[], Any]] = None) -> "Relation":
        """Rows the driver holds as numpy ``columns`` (2-d for an array ring's values), typed by ``types``
        (else by their numpy kinds); ``make`` makes the DataFrame when Spark needs it (default:
        ``createDataFrame`` of the columns in ``session``).

        >>> r = Relation.from_arrays({"a": np.array([1, 2]), "value": np.array([0.5, 1.5])})
        >>> r.held, r.rows, r.dtypes()
        (True, 2, [('a', 'bigint'), ('value', 'double')])
        """
        arrays = {name: np.asarray(c) for name, c in columns.items()}
        if len({len(c) for c in arrays.values()}) > 1:
            from faq.errors import HeldColumnsError

            raise HeldColumnsError(lengths={k: len(c) for k, c in arrays.items()})
        typed = dict(types or {})
        for name, array in arrays.items():
            typed.setdefault(name, _spark_type(array))
        return cls(tuple(arrays), data=arrays, types=typed, session=session, make=make)

    @functools.cached_property
    def _size(self) -> tuple[float, str]:
        """Rows and how they are known, found on first use (a held relation's at once; a distributed
        one's from its Parquet footers, a call to Spark but no job)."""
        if hasattr(self.data, "num_rows"):  # Arrow
            return self.data.num_rows, "held"
        if self.data is not None:
            first = next(iter(self.data.values()), None)
            return (0 if first is None else len(first)), "held"
        stored = file_rows(self.dataframe)
        return (math.inf, "unknown") if stored is None else (stored, "parquet footers")

    @property
    def rows(self) -> float:
        """Rows: exact when held, else an upper bound from Parquet footers, else ``inf``."""
        return self._size[0]

    @property
    def source(self) -> str:
        """How :attr:`rows` is known: ``"held"``, ``"parquet footers"`` or ``"unknown"``."""
        return self._size[1]

    @property
    def held(self) -> bool:
        """True when the driver holds the rows (running in-process moves nothing)."""
        return self.data is not None

    @property
    def arrays(self) -> Optional[Mapping[str, np.ndarray]]:
        """The held rows as numpy columns (None when distributed)."""
        return None if self.data is None else _arrays(self.data, self.columns)

    @functools.cached_property
    def frame(self) -> Any:
        """The rows as a Spark DataFrame: the one given, else made now (once) from the held rows."""
        if self.dataframe is not None:
            return self.dataframe
        if self.make is not None:
            return self.make()
        from faq.spark import real_session

        return _created(real_session(self.spark_session), self.arrays, self.dtypes())

    @property
    def spark_session(self) -> Any:
        """The session the rows' DataFrame lives (or will live) in; no Spark call for held rows."""
        if self.dataframe is not None:
            return self.dataframe.sparkSession
        if self.session is not None:
            return self.session
        from faq.spark import session_for_driver_data

        return session_for_driver_data()

    def dtypes(self) -> list[tuple[str, str]]:
        """``(column, Spark SQL type)`` of :attr:`columns`: held rows answer without Spark."""
        if self.types is not None and all(c in self.types for c in self.columns):
            return [(c, self.types[c]) for c in self.columns]
        if self.held and self.dataframe is None:
            return [(c, _spark_type(a)) for c, a in self.arrays.items()]
        kinds = dict(self.dataframe.dtypes)  # (a frame may lack a column named: an indicator has no value)
        return [(c, kinds[c]) for c in self.columns if c in kinds]

    def schema(self) -> Any:
        """:meth:`dtypes` as a Spark ``StructType`` (no Spark call for held rows)."""
        from pyspark.sql import types as T

        if self.dataframe is not None:  # Spark's own types (a fetched relation's too)
            return T.StructType([f for f in self.dataframe.schema if f.name in self.columns])
        # The types held columns have (an array ring's values hold no null element); else a string.
        kinds = {"bigint": T.LongType(), "int": T.IntegerType(), "double": T.DoubleType(), "float": T.FloatType(),
                 "boolean": T.BooleanType(), "string": T.StringType(), "timestamp": T.TimestampType(),
                 "date": T.DateType(), "array<double>": T.ArrayType(T.DoubleType(), False)}
        return T.StructType([T.StructField(c, kinds.get(t, T.StringType())) for c, t in self.dtypes()])

    def renamed(self, renames: Mapping[str, str]) -> "Relation":
        """Columns ``renames[new]`` as ``new`` (a row-wise renaming, perhaps repeating a column): held rows
        stay held with no Spark call; distributed ones become a ``select``.

        >>> r = Relation.from_arrays({"a": np.array([1, 2]), "v": np.array([3, 4])}).renamed({"x": "a", "value": "v"})
        >>> r.columns, r.arrays["x"].tolist(), r.held
        (('x', 'value'), [1, 2], True)
        """
        if self.held:
            arrays, kinds = self.arrays_of(renames.values()), dict(self.dtypes_of(renames.values()))
            frame = self.dataframe  # the DataFrame beside the rows, renamed only if a step needs it
            make = None if frame is None else functools.partial(_select, frame, dict(renames))
            return Relation(tuple(renames), data={new: arrays[old] for new, old in renames.items()},
                            types={new: kinds[old] for new, old in renames.items()}, session=self.session,
                            make=make)
        return Relation(tuple(renames), dataframe=_select(self.dataframe, renames))

    def arrays_of(self, names: Any) -> dict[str, np.ndarray]:
        """The held columns ``names`` (any of the held data's, not only :attr:`columns`)."""
        return _arrays(self.data, list(names))

    def dtypes_of(self, names: Any) -> list[tuple[str, str]]:
        """:meth:`dtypes` of the columns ``names`` (any of the rows', not only :attr:`columns`)."""
        return replace(self, columns=tuple(dict.fromkeys(names))).dtypes()

    def to_pandas(self) -> Any:
        """The held rows as a pandas DataFrame (Arrow's own conversion: nulls, strings and dates as pandas
        reads them from Parquet), except that an integer column with a null stays integer (pandas' ``Int64``)
        where Arrow would make it float64: a join key read from Spark (``long``, nullable) stays a key.

        Examples
        --------
        >>> import pyarrow as pa
        >>> held = Relation(("o", "q"), data=pa.table({"o": [1, None, 3], "q": [0.5, 1.5, None]}))
        >>> [str(t) for t in held.to_pandas().dtypes]
        ['Int64', 'float64']
        """
        if hasattr(self.data, "to_pandas"):
            return arrow_to_pandas(self.data)
        import pandas as pd

        return pd.DataFrame(dict(self.data), copy=False)

    @property
    def width(self) -> int:
        """The columns a fetch moves."""
        return len(self.columns)

    @property
    def bytes(self) -> float:
        """The rows' size as numpy columns (:data:`BYTES_PER_COLUMN` a column a row); ``inf`` when unknown."""
        return self.rows * self.width * BYTES_PER_COLUMN if math.isfinite(self.rows) else math.inf

    def describe(self) -> str:
        """One line for a plan: how many rows, where, and how the count is known."""
        from faq.hypergraph.shares import format_bytes

        if self.held:
            return f"{self.rows:,} rows held on the driver ({format_bytes(self.bytes)})"
        if not math.isfinite(self.rows):
            return "rows unknown, in Spark"
        return f"≤ {self.rows:,.0f} rows in Spark ({self.source}; {format_bytes(self.bytes)} to fetch)"

    @classmethod
    def of(cls, value: Any, columns: Optional[Sequence[str]] = None) -> "Relation":
        """Recognise ``value``: a Relation (its ``columns``), a Spark DataFrame (distributed), a pandas
        DataFrame, an Arrow table, or a mapping of column name to array.  ``columns``: the ones the work
        reads (default: all).  No Spark job runs, and no Spark call when ``columns`` is given."""
        from faq.spark import is_dataframe

        if isinstance(value, Relation):  # the same object when the columns agree: its DataFrame, if made, kept
            names = value.columns if columns is None else tuple(dict.fromkeys(columns))
            return value if names == value.columns else replace(value, columns=names)
        if is_dataframe(value):
            names = tuple(value.columns) if columns is None else tuple(dict.fromkeys(columns))
            return cls(names, dataframe=value)
        arrays = _arrays(value, columns)
        return cls(tuple(arrays), data=value if hasattr(value, "to_pandas") else arrays)

    def fetched(self, limit_bytes: float) -> "Relation":
        """This relation held on the driver when its rows fit ``limit_bytes`` (one Arrow collect of at
        most the rows that fit, plus one), else itself; a held one is returned as it is.  An estimate
        over the limit is not trusted alone (Parquet footers bound a filtered scan from above):
        :func:`collect_within` counts before it moves anything."""
        if self.held:
            return self
        table = collect_within(self.dataframe, self.columns, fetch_rows(limit_bytes, self.width))
        if table is None:
            return self
        return Relation(self.columns, data=table, dataframe=self.dataframe)


#: Spark SQL type of a column held as a numpy array of each kind (anything else: string).
_SPARK_TYPES = {"i": "bigint", "u": "bigint", "f": "double", "b": "boolean", "M": "timestamp"}


def _spark_type(array: np.ndarray) -> str:
    """The Spark SQL type of a held column: by its numpy kind; 2-d (an array ring's values) an array."""
    if np.ndim(array) == 2:
        return "array<double>"
    return _SPARK_TYPES.get(array.dtype.kind, "string")


def sql_name(name: str) -> str:
    """``name`` as a Spark SQL identifier (backquoted): a projection written as ``selectExpr`` strings is one
    call into Spark where Column objects are several each (classic PySpark: a py4j round trip apiece).

    >>> sql_name("a"), sql_name("odd`name"), sql_name("a.b")
    ('`a`', '`odd``name`', '`a.b`')
    """
    return "`" + name.replace("`", "``") + "`"


def _select(df: Any, renames: Mapping[str, str]) -> Any:
    return df.selectExpr(*[f"{sql_name(old)} AS {sql_name(new)}" for new, old in renames.items()])


def _created(session: Any, arrays: Mapping[str, np.ndarray], dtypes: Sequence[tuple[str, str]]) -> Any:
    """A DataFrame of held columns, typed: a local Parquet file where Spark reads one
    (:func:`faq.handback.spark_frame`), else ``createDataFrame`` (an array ring's 2-d values: a column of
    one array a row)."""
    import pandas as pd

    from faq.handback import empty_frame, hands_back_as_file, spark_frame

    ddl = ", ".join(f"`{c}` {t}" for c, t in dtypes)
    rows = len(next(iter(arrays.values()))) if arrays else 0
    if rows == 0:
        return empty_frame(session, [c for c, _ in dtypes], ddl)
    # (a small frame, or one Spark cannot read from a file, goes straight to createDataFrame: no Arrow copy)
    if all(np.ndim(a) == 1 and a.dtype.kind in "biuf" for a in arrays.values()) \
            and hands_back_as_file(session, dtypes, rows):
        import pyarrow as pa

        return spark_frame(session, pa.table({c: pa.array(a) for c, a in arrays.items()}), ddl)
    frame = pd.DataFrame({c: list(a) if np.ndim(a) == 2 else np.asarray(a) for c, a in arrays.items()}, copy=False)
    return session.createDataFrame(frame, ddl)


def distributed(value: Any) -> bool:
    """True for a Spark DataFrame or a Relation whose rows the driver does not hold, asked without a call
    to Spark.

    >>> import pandas as pd
    >>> distributed(pd.DataFrame({"k": [1]}))
    False
    """
    from faq.spark import is_dataframe

    return (isinstance(value, Relation) and not value.held) or is_dataframe(value)


def _arrays(value: Any, columns: Optional[Sequence[str]]) -> dict[str, np.ndarray]:
    """Numpy columns of a pandas frame, an Arrow table or a mapping (the ``columns`` named, in order)."""
    if hasattr(value, "column_names") and hasattr(value, "column"):  # Arrow
        from faq.arrow_arrays import to_numpy

        names = list(dict.fromkeys(columns)) if columns is not None else list(value.column_names)
        return {c: to_numpy(value.column(c)) for c in names}
    if hasattr(value, "to_numpy") and hasattr(value, "columns"):  # pandas
        names = list(dict.fromkeys(columns)) if columns is not None else [str(c) for c in value.columns]
        return {c: value[c].to_numpy() for c in names}
    if isinstance(value, Mapping):
        names = list(dict.fromkeys(columns)) if columns is not None else list(value)
        return {c: np.asarray(value[c]) for c in names}
    from faq.errors import InvalidArgumentError

    raise InvalidArgumentError(argument="relation", value=type(value).__name__,
                               reason="expected a Spark or pandas DataFrame, an Arrow table or a mapping of arrays")


def collect_within(df: Any, columns: Sequence[str], limit: int) -> Optional[Any]:
    """``df``'s ``columns`` as one Arrow table when it has at most ``limit`` rows, else None.

    One Spark job, a collect of at most ``limit + 1`` rows: a frame too large costs that collect, never
    more (what every fetch to the driver -- factors, tables, edges -- is made of).  No job when ``df``
    is a bare scan of local Parquet files: pyarrow reads them (:func:`faq.parquet_scan.read_scan`).

    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([(1,), (2,), (3,)], "k long")
    >>> collect_within(df, ["k"], 3).num_rows, collect_within(df, ["k"], 2)
    (3, None)
    """
    if limit <= 0:
        return None
    files = local_files(df)
    stored = file_rows(df, files) if files else None
    read = read_scan(df, columns, limit, files, stored)  # a bare scan of local Parquet files: pyarrow reads them
    if read is not None:
        return read
    if stored is not None and stored > limit and df.count() > limit:
        return None  # its Parquet files hold more rows than the budget, and so does the frame: nothing moved
    table = df.select(*columns).limit(limit + 1).toArrow()
    return None if table.num_rows > limit else table
