"""What kind of table a user handed a job, told in one place.

Every public job takes the tables a PySpark, pandas or Arrow user holds.  Which
kind a value is was decided by each job's own test (a module name here, an
``isinstance`` there, ``hasattr(x, "to_numpy")`` elsewhere), so the kinds a
job accepted differed from job to job.  They are told here, once:

==========  ============================================================================
``spark``   a Spark DataFrame, classic or Spark Connect
``pandas``  a pandas DataFrame
``arrow``   a pyarrow Table, or any other table that exports an Arrow stream
            (``__arrow_c_stream__``: a polars DataFrame, a DuckDB relation, ...)
``path``    a ``str`` or ``os.PathLike``: a file or directory a job reads
``rows``    a list or tuple of Python rows
``other``   anything else (a job says what it expected)
==========  ============================================================================

The order matters: a Spark DataFrame (pyspark 4) and a pandas DataFrame
(pandas 2.2) export Arrow streams too, and keep their own kinds.  Nothing here
imports pyspark, pandas or pyarrow before the value needs it.

:func:`arrow_table` reads an ``arrow`` value into a pyarrow Table (once: a
stream may be read only once); :func:`held_table` is the pandas frame or Arrow
table a driver-held value is, for the jobs that take both; :func:`as_pandas`
and :func:`as_arrow` give one of the two forms, for the jobs that read one.

Examples
--------
>>> import pandas as pd, pyarrow as pa
>>> [input_kind(v) for v in ("edges.txt", [(1, 2)], pd.DataFrame({"a": [1]}), pa.table({"a": [1]}), 3)]
['path', 'rows', 'pandas', 'arrow', 'other']
>>> class Exported:                       # any table speaking the Arrow C stream protocol
...     def __arrow_c_stream__(self, requested_schema=None):
...         return pa.table({"src": [1], "dst": [2]}).__arrow_c_stream__(requested_schema)
>>> input_kind(Exported()), arrow_table(Exported()).column_names
('arrow', ['src', 'dst'])
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

from faq.errors import FAQTypeError

__all__ = ["SPARK", "PANDAS", "ARROW", "PATH", "ROWS", "OTHER", "input_kind", "is_pandas", "arrow_table",
           "held_table", "as_pandas", "as_arrow"]

SPARK, PANDAS, ARROW, PATH, ROWS, OTHER = "spark", "pandas", "arrow", "path", "rows", "other"


def input_kind(value: Any) -> str:
    """The kind of ``value``: one of ``spark``, ``pandas``, ``arrow``, ``path``, ``rows``, ``other`` (module notes).

    >>> input_kind(("a", "b")), input_kind(None)
    ('rows', 'other')
    """
    if isinstance(value, (str, os.PathLike)):
        return PATH
    if isinstance(value, (list, tuple)):
        return ROWS
    if _is_spark(value):
        return SPARK
    if is_pandas(value):
        return PANDAS
    if _is_arrow_table(value) or hasattr(type(value), "__arrow_c_stream__"):
        # Asked of the type: a Spark Connect DataFrame answers any attribute name (told apart above anyway).
        return ARROW
    return OTHER


def is_pandas(value: Any) -> bool:
    """A pandas DataFrame (pandas is not imported to tell).

    >>> import pandas as pd
    >>> is_pandas(pd.DataFrame()), is_pandas({"a": [1]})
    (True, False)
    """
    kind = type(value)
    return kind.__name__ == "DataFrame" and kind.__module__.split(".")[0] == "pandas"


def arrow_table(value: Any, what: str = "the table") -> Any:
    """``value`` (kind ``arrow``) as a pyarrow Table: a Table as it is, another exporter's stream read once.

    >>> import pyarrow as pa
    >>> t = pa.table({"a": [1, 2]})
    >>> arrow_table(t) is t
    True
    >>> arrow_table(pa.chunked_array([[1, 2]]), "edges")
    Traceback (most recent call last):
    ...
    faq.errors.FAQTypeError: [INPUT_TYPE] edges must be a table of named columns ...; got ChunkedArray
    """
    if _is_arrow_table(value):
        return value
    import pyarrow as pa

    try:
        table = pa.table(value)
    except (TypeError, ValueError, pa.ArrowException):
        table = None
    if not isinstance(table, pa.Table):  # an array's stream (a ChunkedArray, a Series) has no column names
        raise FAQTypeError(error_class="INPUT_TYPE", what=what, expected="a table of named columns (an Arrow "
                           "stream of record batches)", found=type(value).__name__)
    return table


def held_table(value: Any, what: str = "the table") -> Optional[Any]:
    """The driver-held table ``value`` is -- a pandas DataFrame as it is, an ``arrow`` value as a pyarrow Table --
    or None for any other kind.

    >>> import pandas as pd
    >>> held_table(pd.DataFrame({"a": [1]})).shape, held_table([(1, 2)])
    ((1, 1), None)
    """
    kind = input_kind(value)
    return value if kind == PANDAS else arrow_table(value, what) if kind == ARROW else None


def as_pandas(value: Any, what: str = "the table") -> Any:
    """``value`` as pandas when it is of kind ``arrow`` (a stream read once); any other kind as given.

    >>> import pyarrow as pa
    >>> type(as_pandas(pa.table({"a": [1]}))).__name__, as_pandas([(1, 2)])
    ('DataFrame', [(1, 2)])
    """
    if input_kind(value) != ARROW:
        return value
    from faq.arrow_arrays import arrow_to_pandas

    return arrow_to_pandas(arrow_table(value, what))


def as_arrow(value: Any, what: str = "the table") -> Any:
    """A driver-held table (:func:`held_table`) as a pyarrow Table: pandas converted (its index left out), an
    ``arrow`` value read; None for any other kind.

    >>> import pandas as pd
    >>> as_arrow(pd.DataFrame({"a": [1]})).column_names, as_arrow([(1, 2)])
    (['a'], None)
    """
    table = held_table(value, what)
    if table is None or not is_pandas(table):
        return table
    import pyarrow as pa

    return pa.Table.from_pandas(table, preserve_index=False)


def _is_arrow_table(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "Table" and kind.__module__.split(".")[0] == "pyarrow"


def _is_spark(value: Any) -> bool:
    if "pyspark" not in sys.modules:  # nothing else can be a Spark DataFrame before pyspark is loaded
        return False
    from faq.spark import is_dataframe

    return is_dataframe(value)
