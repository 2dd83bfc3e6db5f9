"""Rows the driver holds, handed to Spark as a DataFrame: a local Parquet file where Spark can read one.

A job that ran in-process and was given Spark hands its answer back as a Spark
DataFrame.  ``spark.createDataFrame`` of an Arrow table ships the rows through
the gateway into the JVM as a local relation, and every query the caller then
runs over it reads JVM rows one by one.  Measured on this 2-core machine (one
process, the same 1M-row × 4-column as-of join result, load 4; a scratch
breakdown, the figures in ``docs/internals.md``): ``createDataFrame`` 0.9–1.1 s
and one aggregate over it 4.2–4.4 s, against writing it with pyarrow 0.24–0.30 s,
``spark.read.parquet`` 0.16–0.41 s (its schema inferred: a job; given, as here, none)
and the same aggregate 0.36–0.69 s.  At 100K
rows × 3 columns ``createDataFrame`` took 0.19 s and the file 0.04 s; at 10K rows
and fewer the two cost the same, so small tables stay local relations (no file).

:func:`spark_frame` so writes the table to a Parquet file in a temporary
directory of this process and returns ``spark.read.schema(...).parquet(path)``
(the schema given, so Spark opens no footer: no job) when

* the session is classic and its master local (``local[*]``,
  ``local-cluster``): Spark's tasks run on this machine and read this
  process's files.  Spark Connect (the server may be elsewhere) and cluster
  managers get ``createDataFrame``;
* the table has at least :data:`MIN_CELLS` cells (rows × columns);
* every column is of a type Parquet carries to Spark unchanged (signed
  integers, floats, booleans, strings, dates, time-zone-aware timestamps) and
  every name is one Spark's Parquet reader takes, once (case-insensitively).

Anything else goes through ``createDataFrame`` of pandas or Arrow -- never of a Python list: classic
PySpark makes that (and an empty pandas frame) an RDD of Python rows, so every read of it starts
Python worker tasks; no rows are an empty Arrow table (:func:`empty_frame`), Python rows go through
pandas (:func:`local_frame`).  An empty answer's ``.df.collect()`` took 0.27 s that way, 0.04 s this
(``bench/bench_small_frames.py``).  The files stay
until the process exits (a few bytes a cell): a DataFrame derived from the
answer may read them at any later time, so no earlier owner may delete them.

Examples
--------
>>> import pyarrow as pa
>>> from faq.spark import get_session
>>> spark = get_session()
>>> big = pa.table({"k": pa.array(range(60_000)), "x": pa.array([0.5] * 60_000)})
>>> df = spark_frame(spark, big)
>>> file_backed(df), df.dtypes, df.count()
(True, [('k', 'bigint'), ('x', 'double')], 60000)
>>> file_backed(spark_frame(spark, big.slice(0, 10))), spark_frame(spark, big.slice(0, 10)).count()
(False, 10)
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from typing import Any, Optional, Sequence

__all__ = ["MIN_CELLS", "ROW_GROUP_ROWS", "spark_frame", "created_frame", "empty_frame", "local_frame",
           "parquet_readable", "file_backed", "hands_back_as_file", "local_master"]

#: Tables of fewer cells stay local relations (``createDataFrame``): the same price at 10K rows.
MIN_CELLS = 100_000

#: Rows a Parquet row group holds: Spark splits a file between tasks only at row-group boundaries
#: (one 1M-row group would leave a 2M-row table in one or two partitions).
ROW_GROUP_ROWS = 1 << 17

#: A column name Spark's Parquet reader takes (none of the characters it once refused).
_NAME = re.compile(r"^[^ ,;{}()\n\t=]+$")

_lock = threading.Lock()
_directory: Optional[str] = None  # made on first use, removed at exit


def parquet_readable(table: Any) -> bool:
    """True when every column of the Arrow ``table`` reads back into Spark as it was written.

    >>> import pyarrow as pa
    >>> parquet_readable(pa.table({"a": [1], "b": ["x"], "c": [True], "d": [1.5]}))
    True
    >>> parquet_readable(pa.table({"a": pa.array([1], pa.uint64())}))   # Spark has no unsigned type
    False
    >>> parquet_readable(pa.table({"a": [1], "A": [2]}))                 # one name to Spark
    False
    """
    import pyarrow.types as t

    names = [name.lower() for name in table.column_names]
    if len(set(names)) != len(names) or not all(_NAME.match(name) for name in names):
        return False
    for field in table.schema:
        kind = field.type
        plain = (t.is_signed_integer(kind) or (t.is_floating(kind) and kind.bit_width in (32, 64))
                 or t.is_boolean(kind) or t.is_string(kind) or t.is_large_string(kind) or t.is_date32(kind))
        # A time-zone-aware microsecond timestamp is an instant in Parquet too; a naive one would read as
        # TIMESTAMP_NTZ, a nanosecond one not at all.
        if not (plain or (t.is_timestamp(kind) and kind.tz is not None and kind.unit == "us")):
            return False
    return True


def spark_frame(spark: Any, table: Any, schema: Optional[str] = None, *, min_cells: int = MIN_CELLS) -> Any:
    """The Arrow ``table`` as a DataFrame of ``spark``: read from a local Parquet file when Spark can
    read it (see the module notes), else ``createDataFrame``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        A real session (classic or Connect).
    table : pyarrow.Table
    schema : str, optional
        A DDL schema the DataFrame must have; ``createDataFrame`` takes it as given (an empty table
        too), the file is read with the Spark schema of the table (which its types decide).
    min_cells : int
        The fewest cells written to a file (:data:`MIN_CELLS`; 0: every table Spark can read from one).

    Returns
    -------
    pyspark.sql.DataFrame
    """
    if _via_file(spark, table, schema, min_cells):
        import pyarrow.parquet as pq

        path = _fresh_path()
        pq.write_table(table, path, compression="snappy", row_group_size=ROW_GROUP_ROWS)
        ddl = schema or ", ".join(f"`{f.name}` {_ddl_type(f.type)}" for f in table.schema)
        return spark.read.schema(ddl).parquet("file://" + path)
    return created_frame(spark, table, schema)


def created_frame(spark: Any, table: Any, schema: Optional[str] = None) -> Any:
    """The Arrow ``table`` as a local relation of ``spark`` (``createDataFrame``, no file), with ``schema``
    when given (the table's own types else): what :func:`spark_frame` makes where no file is written.

    >>> import pyarrow as pa
    >>> from faq.spark import get_session
    >>> created_frame(get_session(), pa.table({"k": [1, 2]}), "k double").collect()
    [Row(k=1.0), Row(k=2.0)]
    """
    if schema is None:
        return spark.createDataFrame(table)
    if table.num_rows == 0:
        return empty_frame(spark, table.column_names, schema)
    return spark.createDataFrame(table.to_pandas(), schema)


def empty_frame(spark: Any, names: Sequence[str], schema: Any) -> Any:
    """A DataFrame of no rows with ``schema`` (DDL or a ``StructType``; its columns ``names``): a local
    relation made from an empty Arrow table, not from ``[]``.

    Classic PySpark makes ``createDataFrame([], schema)`` (and an empty pandas frame) from an RDD of
    Python rows, so every query over it starts Python workers: 0.17-0.22 s a collect against
    0.02-0.04 s here (scratch, warm, this machine).  Arrow's null-typed columns cast to any type
    (numbers, strings, timestamps, arrays, structs), nullable as ``createDataFrame`` makes them.

    >>> from faq.spark import get_session
    >>> df = empty_frame(get_session(), ["k", "value"], "k bigint, value array<double>")
    >>> df.dtypes, df.collect()
    ([('k', 'bigint'), ('value', 'array<double>')], [])
    """
    import pyarrow as pa

    return spark.createDataFrame(pa.table({name: pa.nulls(0) for name in names}), schema)


def local_frame(spark: Any, rows: Sequence[tuple], names: Sequence[str], schema: Any) -> Any:
    """Python ``rows`` (tuples in the order of ``names``) as a local relation with ``schema``.

    Through pandas and Arrow (PySpark's own conversion, which falls back to its row path for a value
    Arrow cannot take), not ``createDataFrame(rows)``: classic PySpark makes that from an RDD, so
    every query over it starts Python workers (see :func:`empty_frame`).

    >>> from faq.spark import get_session
    >>> df = local_frame(get_session(), [(1, 2.5), (2, 0.5)], ["k", "value"], "k bigint, value double")
    >>> df.collect()
    [Row(k=1, value=2.5), Row(k=2, value=0.5)]
    """
    if len(rows) == 0:
        return empty_frame(spark, names, schema)
    import pandas as pd

    return spark.createDataFrame(pd.DataFrame.from_records(list(rows), columns=list(names)), schema)


def file_backed(df: Any) -> bool:
    """True when ``df`` reads one of this process's hand-back files (its input files, no job).

    >>> from faq.spark import get_session
    >>> file_backed(get_session().range(3))
    False
    """
    try:
        files = df.inputFiles()
    except Exception:  # noqa: BLE001 -- a plan without files (a local relation on Connect)
        return False
    inside = _directory is not None and os.path.join(_directory, "")
    return bool(inside) and bool(files) and all(
        f.removeprefix("file://").removeprefix("file:").startswith(inside) for f in files)


#: The Spark SQL types a Parquet file carries back unchanged (:func:`parquet_readable`'s, as Spark names them).
_PLAIN_SPARK_TYPES = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string",
                                "date", "timestamp"})


def hands_back_as_file(spark: Any, dtypes: Sequence[tuple[str, str]], rows: float) -> bool:
    """Whether rows of these Spark ``dtypes`` would be handed back through a file (:func:`spark_frame`),
    asked before they exist: a plan prices the trip back with it.

    >>> from faq.spark import get_session
    >>> hands_back_as_file(get_session(), [("k", "bigint"), ("x", "double")], 1e6)
    True
    >>> hands_back_as_file(get_session(), [("v", "array<double>")], 1e6), hands_back_as_file(get_session(), [("k", "bigint")], 10)
    (False, False)
    """
    names = [name.lower() for name, _ in dtypes]
    return (rows * max(len(dtypes), 1) >= MIN_CELLS and len(set(names)) == len(names)
            and all(_NAME.match(name) and kind in _PLAIN_SPARK_TYPES for name, kind in dtypes)
            and local_master(spark))


def local_master(spark: Any) -> bool:
    """True for a classic session whose master is local (``local[*]``, ``local-cluster``): its tasks run on
    this machine and read this process's files.

    >>> from faq.spark import get_session
    >>> local_master(get_session())
    True
    """
    from faq.settings import setting
    from faq.spark import is_connect

    return not is_connect(spark) and (setting(spark, "spark.master") or "").startswith("local")


def _via_file(spark: Any, table: Any, schema: Optional[str], min_cells: int) -> bool:
    """Whether :func:`spark_frame` writes a file: a local classic master, enough cells, plain types, and
    (with ``schema``) the schema the table's own types give."""
    if table.num_rows * max(table.num_columns, 1) < min_cells or not parquet_readable(table):
        return False
    if schema is not None and _normal(schema) != _normal(", ".join(
            f"`{f.name}` {_ddl_type(f.type)}" for f in table.schema)):
        return False  # the caller's types differ from the table's: createDataFrame converts
    return local_master(spark)


def _normal(ddl: str) -> str:
    return re.sub(r"\s+", " ", ddl.replace("`", "").replace("long", "bigint")).strip().lower()


def _ddl_type(kind: Any) -> str:
    """The Spark SQL type a plain Arrow type reads back as from Parquet (:func:`parquet_readable`)."""
    import pyarrow.types as t

    if t.is_integer(kind):
        return {8: "tinyint", 16: "smallint", 32: "int"}.get(kind.bit_width, "bigint")
    if t.is_floating(kind):
        return "float" if kind.bit_width == 32 else "double"
    if t.is_boolean(kind):
        return "boolean"
    if t.is_date32(kind):
        return "date"
    if t.is_timestamp(kind):
        return "timestamp"
    return "string"


def _fresh_path() -> str:
    """A new file path in this process's hand-back directory (made on first use, removed at exit)."""
    global _directory
    with _lock:
        if _directory is None:
            _directory = tempfile.mkdtemp(prefix="faq-handback-")
            atexit.register(shutil.rmtree, _directory, True)
        fd, path = tempfile.mkstemp(suffix=".parquet", dir=_directory)
        os.close(fd)
        return path
