"""DataFrames whose rows the driver also holds, as numpy columns.

The fast load path (:func:`faq.graphs.edges.prepared_graph`) reads and
cleans an edge list in numpy on the driver, then hands it to Spark.  The
broadcast join (:mod:`faq.joins.generic`) builds its index on the driver
from the same rows.  Without a record that the driver already has them,
the rows would go numpy → Spark → ``toArrow`` → numpy, and every row count
would be a Spark job.  This module is that record: :func:`keep_driver_copy`
notes a DataFrame's columns as arrays, :func:`driver_copy` finds them, and
:func:`project_driver_copy` carries them to a row-wise renaming of the
DataFrame (a ``select`` of plain columns).

A DataFrame is immutable, so the record, keyed by the DataFrame object, can
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

import weakref
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Optional

import numpy as np

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["keep_driver_copy", "driver_copy", "rows_held", "project_driver_copy"]

# id(DataFrame) -> its columns; an entry leaves with its DataFrame (weakref.finalize).
_COPIES: dict[int, Mapping[str, np.ndarray]] = {}


def keep_driver_copy(df: "DataFrame", columns: Mapping[str, np.ndarray]) -> "DataFrame":
    """Record that the driver holds ``df``'s rows as ``columns`` (one array per column); returns ``df``.

    Raises
    ------
    ValueError
        When the arrays differ in length or do not name exactly ``df``'s columns.
    """
    if sorted(columns) != sorted(df.columns):
        raise ValueError(f"a driver copy needs exactly the columns {df.columns}, got {sorted(columns)}")
    if len({len(c) for c in columns.values()}) > 1:
        raise ValueError("the columns of a driver copy differ in length")
    key = id(df)
    if key not in _COPIES:
        weakref.finalize(df, _COPIES.pop, key, None)
    _COPIES[key] = MappingProxyType({name: np.asarray(c) for name, c in columns.items()})
    return df


def driver_copy(df: "DataFrame") -> Optional[Mapping[str, np.ndarray]]:
    """``df``'s columns as the driver holds them (read-only mapping), or None."""
    return _COPIES.get(id(df))


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
        keep_driver_copy(projected, {new: copy[old] for new, old in renames.items()})
    return projected
