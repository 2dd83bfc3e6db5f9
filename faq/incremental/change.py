"""The change a batch made: one row per output key that changed, with the version and the diff.

Every maintained thing — a maintained query, a tracked motif, a maintained
fixpoint — answers a batch with a :class:`Change`: the output keys that
changed (free variables, pattern vertices, nodes), the ``version`` the batch
made and the ``diff`` (the signed change in a ring; the new value in an
idempotent semiring; +1 / −1 for a binding that appeared / disappeared).

A change is held on the driver as numpy columns (a batch's change is small
and the resident engine computes it there); :attr:`Change.df` makes a Spark
DataFrame of it on first use, :meth:`Change.to_pandas` a pandas one, and
:meth:`Change.collect` returns Spark ``Row`` s as ``df.collect()`` would,
without a Spark job.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.change import Change
>>> c = Change(("x",), (np.array([3, 1]),), np.array([2, -1]), version=4)
>>> c.collect()
[Row(x=3, version=4, diff=2), Row(x=1, version=4, diff=-1)]
>>> len(c), c.total
(2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from faq.events import ProgressEvent
from faq.scope import Owner, Scope

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

VERSION = "version"
DIFF = "diff"


@dataclass(frozen=True)
class BatchEvent(ProgressEvent):
    """Progress of one batch of anything maintained: ``kind`` is ``"start"``, ``"done"``, or ``"skip"`` (a micro-batch of a stream applied already: :mod:`faq.incremental.streaming`).

    ``version`` is the version the batch makes, ``label`` its name (a file),
    ``description`` what runs; a ``"done"`` event has the number of output
    ``rows`` that changed and the ``seconds`` the batch took.
    :class:`faq.progress.Reporter` prints these.
    """

    kind: str
    version: int
    description: str
    rows: Optional[int] = None
    seconds: Optional[float] = None
    label: str = ""


@dataclass
class Change(Owner):
    """What one batch changed (see the module notes).

    A change lives on the driver; its :attr:`df` is a local relation that
    holds no cache, so ``close()`` (or ``with``) only drops it.

    Attributes
    ----------
    columns : tuple of str
        The key columns.
    keys : tuple of np.ndarray
        One array per key column (decoded values).
    diff : np.ndarray
    version : int
    seconds : float
        Time the batch took.
    extra : dict of str -> np.ndarray
        More columns per row, shown after the keys (e.g. a fixpoint's ``old`` value).
    count : optional
        A running total after the batch (a motif's number of bindings).
    info : dict
        Per-batch facts for reports (rows of the batch, rules run, ...).
    types : dict of str -> str
        Spark SQL types of the columns (for :attr:`df`); guessed from numpy when missing.
    """

    columns: tuple[str, ...]
    keys: tuple[np.ndarray, ...]
    diff: np.ndarray
    version: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    count: Optional[Any] = None
    info: dict = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)
    _df: Optional["DataFrame"] = field(default=None, repr=False)
    scope: Scope = field(default_factory=Scope, repr=False)

    def __len__(self) -> int:
        return len(self.diff)

    @property
    def names(self) -> list[str]:
        """All column names, in table order."""
        return [*self.columns, *self.extra, VERSION, DIFF]

    @property
    def total(self) -> Any:
        """Σ diff (a motif's change in the number of bindings; a scalar query's change)."""
        if self.diff.ndim > 1:  # an array ring's values: Σ per component
            return self.diff.sum(axis=0).tolist()
        return self.diff.sum().item() if len(self.diff) else 0

    delta = total  # a tracked motif's name for it

    def sorted_rows(self, limit: Optional[int] = None) -> list[dict]:
        """Rows as dicts, ordered by diff then keys (disappeared first), at most ``limit``."""
        table = self.to_pandas().sort_values([DIFF, *self.columns], kind="stable")
        if limit is not None:
            table = table.head(limit)
        return [{k: _scalar(v) for k, v in row.items()} for row in table.to_dict("records")]

    def to_pandas(self):
        """The rows as a pandas DataFrame."""
        import pandas as pd

        data = {c: k for c, k in zip(self.columns, self.keys)}
        data.update(self.extra)
        data[VERSION] = np.full(len(self.diff), self.version, dtype=np.int64)
        data[DIFF] = list(self.diff) if self.diff.ndim > 1 else self.diff  # an array ring: one array per row
        return pd.DataFrame(data, columns=self.names)

    def rows(self) -> list[tuple]:
        """The rows as plain tuples (Python scalars)."""
        columns = [*self.keys, *self.extra.values(), np.full(len(self.diff), self.version), self.diff]
        return list(zip(*[_python(c) for c in columns])) if len(self.diff) else []

    def collect(self) -> list:
        """The rows as Spark ``Row`` s (no Spark job: the change is on the driver)."""
        from pyspark.sql import Row

        names = self.names
        return [Row(**dict(zip(names, r))) for r in self.rows()]

    @property
    def df(self) -> "DataFrame":
        """The rows as a Spark DataFrame (made on first use; a local relation, nothing cached)."""
        if self._df is None:
            from faq.handback import local_frame
            from faq.spark import get_session

            schema = ", ".join(f"`{n}` {self._type(n)}" for n in self.names)
            self._df = local_frame(get_session(), self.rows(), self.names, schema)
        return self._df

    bindings = df  # a tracked motif's name for the same rows

    def show(self, n: int = 20) -> None:
        """Print the rows as Spark's ``show`` does."""
        self.df.show(n)

    def _repr_html_(self) -> str:
        """Version, Σ diff, count, time and at most 10 rows, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from faq.display import pretty, summary

        pretty(summary(self), printer, cycle)

    def to_dict(self) -> dict:
        """Version, rows, seconds and the batch facts (for JSON reports)."""
        out = {"version": self.version, "changed": len(self), "seconds": round(self.seconds, 3)}
        if self.count is not None:
            out["count"] = self.count
        out.update(self.info)
        return out

    def _type(self, name: str) -> str:
        if name in self.types:
            return self.types[name]
        if name == VERSION:
            return "bigint"
        column = self.diff if name == DIFF else (self.extra[name] if name in self.extra
                                                 else self.keys[self.columns.index(name)])
        kind = np.asarray(column).dtype.kind
        return {"i": "bigint", "u": "bigint", "f": "double", "b": "boolean"}.get(kind, "string")

    def close(self) -> None:
        """Drop the local DataFrame (nothing on Spark to free)."""
        super().close()
        self._df = None


def change_stream(changes: Any) -> "pa.Table":
    """Changes of any maintained object as one change stream: the data columns, ``version`` (the time) and ``diff``.

    A :class:`Change` (a maintained query's, motif's, fixpoint's, model's or
    truss's), an as-of join's :class:`~faq.asof.maintained.AsofChange`, or an
    iterable of them in version order.  The result is what
    :func:`faq.incremental.calculus.differentiate` and ``integrate`` take
    (``time="version"``), in-process as an Arrow table (``spark.createDataFrame``
    of it for Spark).

    >>> a = Change(("x",), (np.array([3, 1]),), np.array([1, -1]), version=1)
    >>> b = Change(("x",), (np.array([1]),), np.array([1]), version=2)
    >>> change_stream([a, b]).to_pydict()
    {'x': [3, 1, 1], 'version': [1, 1, 2], 'diff': [1, -1, 1]}
    """
    import pyarrow as pa

    parts = [changes] if hasattr(changes, "version") else list(changes)
    tables = []
    for change in parts:
        if isinstance(change, Change):
            table = pa.Table.from_pandas(change.to_pandas(), preserve_index=False)
        else:  # an as-of join's change: its joined rows and diff; the version put before the diff
            rows = change.table()
            at = rows.column_names.index(DIFF)
            table = rows.add_column(at, VERSION, pa.array(np.full(rows.num_rows, change.version, dtype=np.int64)))
        tables.append(table)
    if not tables:
        return pa.table({VERSION: pa.array([], pa.int64()), DIFF: pa.array([], pa.int64())})
    return pa.concat_tables(tables, promote_options="default")


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _python(column: np.ndarray) -> list:
    """A numpy column as Python scalars (None for NaN-free object columns passes through)."""
    return np.asarray(column).tolist()
