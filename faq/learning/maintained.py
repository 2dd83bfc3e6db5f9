"""A covariance aggregate, and the regression solved from it, kept current as table rows arrive and leave.

:func:`maintain_covariance` lifts every table's features into the cofactor
ring (:mod:`faq.learning.features`) and hands the lifted factors to a
maintained query (:class:`~faq.incremental.MaintainedQuery`).  Because the
cofactor ring has additive inverses, a batch of inserted and deleted rows
is one *signed* delta per table -- each row's lift ``(1, x, xxᵀ)`` times its
multiplicity -- and the same delta rules that keep a triangle count current
update the aggregate ``(n, Σx, Σxxᵀ)``: a changed row of a fact table is
joined with the resident indexes of the other tables (one lookup per
dimension key in a star schema), never with the listed join.  The resident
indexes hold each key's ring value as a row of ``w`` doubles.

A delta of a table is a pandas DataFrame, a Spark DataFrame or an Arrow
table with the table's key columns and feature columns, and optionally a
``diff`` column: the row's multiplicity (``+1`` an insert, the default;
``-1`` a delete; any integer).  Rows with a null key or feature are left
out, as when the model was made; a key that is not a whole number within
int64, a feature that is not a finite number or a ``diff`` that is not a
whole number refuses the batch before anything changes
(:mod:`faq.incremental.batch_check`).  A delete is taken at its word: deleting a
row that was never inserted subtracts its lift all the same (the ring has
no notion of "not there"), as a signed delta of any ring does.

Values are doubles, so an insert followed by the delete of the same row
leaves the aggregate equal to recomputation up to rounding (relative
``1e-12`` or so after many batches), not bit for bit.

Examples
--------
>>> import pandas as pd
>>> import faq
>>> orders = pd.DataFrame({"o": [1, 2, 3], "amount": [10.0, 20.0, 30.0]})
>>> items = pd.DataFrame({"o": [1, 2, 3], "qty": [2.0, 4.5, 7.0]})
>>> m = faq.linear_regression("orders(o), items(o)", target="orders.amount", features=["items.qty"],
...                           orders=orders, items=items, maintained=True)
>>> m.rows, m.version
(3, 0)
>>> change = m.apply(items=pd.DataFrame({"o": [1, 1], "qty": [2.0, 3.0], "diff": [-1, 1]}))
>>> m.version, m.rows, round(m.coefficients["items.qty"], 6)       # (3, 10), (4.5, 20), (7, 30)
(1, 3, 4.897959)
>>> change = m.apply(items=pd.DataFrame({"o": [1], "qty": [3.0], "diff": [-1]}))
>>> m.rows, round(m.intercept, 6), round(m.coefficients["items.qty"], 6)   # (4.5, 20), (7, 30)
(2, 2.0, 4.0)
>>> m.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import numpy as np

from faq.errors import InvalidArgumentError, InvalidDeltaError, StateDirectoryError
from faq.events import Progress
from faq.incremental.durable import Maintained, Versions
from faq.input_kinds import is_pandas
from faq.learning.features import Feature, lifted_factors, lifted_name, row_values
from faq.learning.models import Covariance, LearningPlan, LinearModel, fit_linear
from faq.scope import Owner, Scope
from faq.spark_ui import described

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.incremental.change import Change
    from faq.incremental.maintained import MaintainedQuery
    from faq.language import FAQ

__all__ = ["MaintainedModel", "maintain_covariance", "DIFF_COLUMN"]

#: The optional column of a delta holding each row's multiplicity (+1 insert, -1 delete).
DIFF_COLUMN = "diff"
#: The key of a durable model's manifest annex that says which features, target and tables it was made with.
MODEL_KEY = "model"


class MaintainedModel(Maintained, Owner):
    """``(n, Σx, Σxxᵀ)`` of features over a join, current at :attr:`version`; a regression if a target is named.

    Made by :func:`maintain_covariance` (or ``faq.linear_regression(...,
    maintained=True)``, ``faq.covariance(..., maintained=True)``); reopened
    from a durable state with :meth:`open`.

    Attributes
    ----------
    features : tuple of str
        The aggregate's components (the target last, when there is one).
    target : str or None
    ridge : float
    query : MaintainedQuery
        The maintained FAQ over the cofactor ring (its plan: :meth:`explain`).

    A model is a stream target (:meth:`stream`), with tables for factors
    (``factor="orders"``, or ``factor_column=`` naming each row's table) and
    rows carrying the table's key and feature columns and an optional
    ``diff`` (+1 insert, -1 delete).
    """

    def __init__(self, query: "MaintainedQuery", features: Sequence[Feature], atoms: Sequence[tuple[str, tuple[str, ...]]],
                 target: Optional[str], ridge: float, notes: Sequence[str] = ()) -> None:
        self.scope = Scope()
        self.query = self.scope.adopt(query)
        self._features = tuple(features)
        self.features = tuple(str(f) for f in features)
        self._atoms = tuple((table, tuple(variables)) for table, variables in atoms)
        self.target = target
        self.ridge = float(ridge)
        self.notes = tuple(notes)
        self._fitted: Optional[tuple[int, Optional[LinearModel]]] = None

    WHAT = "a maintained model"

    # -- reading ------------------------------------------------------------------

    def _versions(self) -> Versions:
        """The maintained query's versions: each batch of rows is one of its batches."""
        return self.query.state

    @property
    def progress(self) -> Any:
        """The batch-event callback given as ``progress=`` (None without)."""
        return self.query.progress

    @property
    def delta_names(self) -> list[str]:
        """The tables a batch may change."""
        return list(dict.fromkeys(table for table, _ in self._atoms))

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns a batch of table ``name`` is read from, those it must have): keys and features, ``diff``."""
        keyed_by = next((list(variables) for table, variables in self._atoms if table == name), [])  # its first atom's
        needed = [*keyed_by, *(f.column for f in self._features if f.table == name)]
        return [*needed, DIFF_COLUMN], needed

    @property
    def covariance(self) -> Covariance:
        """The current aggregate, labelled (no Spark job: the driver holds it)."""
        ring = self.query.semiring
        count, sums, products = ring.unpack(self.query.scalar())
        return Covariance(self.features, float(count), sums, products, None, self.notes)

    @property
    def rows(self) -> Any:
        """Rows of the join now (an int: a count)."""
        count = self.covariance.count
        return int(count) if float(count).is_integer() else float(count)

    @property
    def model(self) -> LinearModel:
        """The least-squares model of the current rows (solved once per version)."""
        if self.target is None:
            raise InvalidArgumentError(argument="target", value=None,
                                       reason="the model was made without a target (faq.covariance); "
                                              "use .covariance, or faq.linear_regression(..., maintained=True)")
        if self._fitted is None or self._fitted[0] != self.version:
            self._fitted = (self.version, fit_linear(self.covariance, self.target, self.ridge))
        return self._fitted[1]

    @property
    def intercept(self) -> float:
        return self.model.intercept

    @property
    def coefficients(self) -> dict[str, float]:
        return self.model.coefficients

    @property
    def df(self) -> "DataFrame":
        """The current aggregate ``(n, Σx, Σxxᵀ)``: the maintained query's answer as a DataFrame."""
        return self.query.df

    def explain(self) -> LearningPlan:
        """Where each feature is lifted, then the maintained query's plan: where the indexes live,
        each delta rule's order, sizes."""
        return LearningPlan(self.notes, self.query.explain())

    # -- changing -----------------------------------------------------------------

    @described("maintained model")
    def apply(self, deltas: Optional[Mapping[str, Any]] = None, *, version: Optional[int] = None,
              label: Optional[str] = None, before_commit: Optional[Callable[["Change"], None]] = None,
              **tables: Any) -> "Change":
        """Apply one batch of inserted and deleted rows of any tables; return the aggregate's change.

        Parameters
        ----------
        deltas : mapping table name -> rows
            Each a pandas DataFrame, Spark DataFrame or Arrow table with the
            table's key and feature columns and an optional ``diff`` column
            (multiplicity; default +1).  A ``value`` column instead of ``diff``
            (a maintained query's name) is refused, unless it is a feature
            (:mod:`faq.incremental.multiplicity`).  Tables may also be keywords.
        version : int, optional
            The version this batch makes; a batch for a version reached
            already is refused (:class:`~faq.errors.BatchAlreadyAppliedError`).
        label : str, optional
            A name for the batch, kept with the state.
        before_commit : callable, optional
            Called with the change before the state commits it (see
            :meth:`faq.incremental.maintained.MaintainedQuery.apply`).

        Returns
        -------
        Change
            ``diff`` is the change of ``(n, Σx, Σxxᵀ)`` (upper triangle), one
            row; ``info["dropped"]`` counts, per table, rows left out for a
            null key or feature (absent when none was).
        """
        given = {**(deltas or {}), **tables}
        known = {table for table, _ in self._atoms}
        for name in given:
            if name not in known:
                raise InvalidDeltaError(name, f"the model has no table {name!r} (it has {', '.join(sorted(known))})",
                                        known=sorted(known))
        factor_deltas: dict[str, Any] = {}
        dropped: dict[str, int] = {}
        for position, (table, variables) in enumerate(self._atoms):
            if table not in given:
                continue
            first = next(k for k, (t, _) in enumerate(self._atoms) if t == table)
            keyed_by = self._atoms[first][1]
            own = [f for f in self._features if f.table == table] if first == position else []
            factor_deltas[lifted_name([t for t, _ in self._atoms], position)], dropped[table] = _lifted_delta(
                given[table], table, variables, keyed_by, own, self.query.semiring)
        dropped = {table: n for table, n in dropped.items() if n}

        def with_dropped(change: "Change") -> "Change":
            if dropped:  # said, not silent: rows a regression cannot use
                change.info["dropped"] = dict(dropped)
            return change

        hook = None if before_commit is None else (lambda change: before_commit(with_dropped(change)))
        return with_dropped(self.query.apply(factor_deltas, version=version, label=label, before_commit=hook))

    # -- saving and releasing -----------------------------------------------------

    @classmethod
    def open(cls, path: str, *, progress: Progress = None) -> "MaintainedModel":
        """Reopen a model made with ``state=`` at its last committed version (no Spark needed)."""
        from faq.incremental.maintained import MaintainedQuery
        from faq.incremental.store import restoring

        query = MaintainedQuery.open(path, progress=progress)
        meta = query.annex.get(MODEL_KEY)
        if meta is None:
            query.close()
            raise StateDirectoryError(query.path, "it holds a maintained query, not a maintained model")
        with restoring(query.path):
            features = [Feature(table, column, i) for i, (table, column) in enumerate(meta["features"])]
            atoms = [(table, tuple(variables)) for table, variables in meta["atoms"]]
            return cls(query, features, atoms, meta["target"], float(meta["ridge"]), meta.get("notes", ()))

    def close(self) -> None:
        """Drop the resident indexes (a durable state stays on disk)."""
        self.scope.close()

    def __repr__(self) -> str:
        what = f"target={self.target!r}, " if self.target else ""
        return f"MaintainedModel({len(self.features)} features, {what}version={self.version}, rows={self.rows:g})"


def maintain_covariance(parsed: "FAQ", features: Sequence[Feature], tables: Mapping[str, Any], *,
                        target: Optional[str] = None, ridge: float = 0.0, path: Optional[str] = None,
                        progress: Progress = None, placement: str = "auto", spark: Any = None) -> MaintainedModel:
    """A :class:`MaintainedModel` of ``features`` over the join ``parsed`` of ``tables``.

    ``placement`` says where the resident indexes live: ``"driver"``,
    ``"executors"`` (their bases broadcast, one Spark job a batch; classic
    Spark only) or ``"auto"`` (the driver while they fit its budget), as for
    any maintained query (:class:`~faq.incremental.MaintainedQuery`).  With
    ``path=`` the state is durable and :meth:`MaintainedModel.open` reopens it.
    """
    from faq.incremental.maintained import MaintainedQuery
    from faq.semirings import cofactor

    ring = cofactor(len(features))
    query, factors, lifted = lifted_factors(parsed, features, ring, tables, spark)
    notes = tuple(item.describe(ring.width) for item in lifted)
    atoms = [(atom.factor, tuple(atom.variables)) for atom in parsed.atoms]
    # what the model is made of, kept in the query's manifest (one commit point, one checksum)
    annex = {MODEL_KEY: {"features": [[f.table, f.column] for f in features], "atoms": [[t, list(v)] for t, v in atoms],
                         "target": target, "ridge": float(ridge), "notes": list(notes)}}
    maintained = MaintainedQuery(query, factors, semiring=ring, path=path, progress=progress, placement=placement,
                                 _annex=annex)
    return MaintainedModel(maintained, features, atoms, target, ridge, notes)


def _lifted_delta(rows: Any, table: str, variables: Sequence[str], keyed_by: Sequence[str],
                  features: Sequence[Feature], ring: Any) -> tuple[Any, int]:
    """A table's changed rows as a delta of its lifted factor -- keys and ``value`` = lift × multiplicity
    (Arrow) -- and how many rows were left out for a null key or feature."""
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy
    from faq.factor import VALUE
    from faq.incremental.multiplicity import check_multiplicity
    from faq.incremental.state import to_arrow

    needed = [*keyed_by, *(f.column for f in features)]
    pandas = is_pandas(rows)
    if pandas:  # read in place: no Arrow table for a batch given as pandas
        names = [str(c) for c in rows.columns]
    else:
        arrow = to_arrow(rows, list(keyed_by), what=f"the delta of {table!r}")
        names = list(arrow.column_names)
    missing = [c for c in needed if c not in names]
    if missing:
        raise InvalidDeltaError(table, f"it has no column {missing[0]!r} (it has {', '.join(names)})",
                                missing=missing)
    # 'value' (a maintained query's name) where 'diff' is meant would make every row an insertion: refused.
    check_multiplicity(names, DIFF_COLUMN, factor=table, target="a maintained model", data=needed)
    wanted = [*dict.fromkeys(needed), *([DIFF_COLUMN] if DIFF_COLUMN in names else [])]
    if pandas:
        frame = rows[wanted]
        complete = ~frame.isna().any(axis=1).to_numpy()  # NaN, None and pandas' NA alike
        if not complete.all():
            frame = frame[complete]
        data = {c: _pandas_column(frame[c]) for c in wanted}
    else:
        data = {c: _arrow_column(arrow.column(c)) for c in wanted}
        complete = np.ones(arrow.num_rows, dtype=bool)
        for column in data.values():
            if column.dtype == object or column.dtype.kind == "f":
                complete &= ~_isnull(column)
        if not complete.all():
            data = {c: column[complete] for c, column in data.items()}
    dropped = int(len(complete) - complete.sum())
    data = _checked_rows(data, table, keyed_by, features)
    keys = {v: data[c] for v, c in zip(variables, keyed_by)}
    values = row_values(ring, features, {f.column: data[f.column] for f in features}, int(complete.sum()))
    if DIFF_COLUMN in data:
        values = values * data[DIFF_COLUMN].astype(np.float64)[:, None]
    return pa.table({**{v: arrow_from_numpy(k) for v, k in keys.items()}, VALUE: arrow_from_numpy(values)}), dropped


def _checked_rows(data: Mapping[str, np.ndarray], table: str, keyed_by: Sequence[str],
                  features: Sequence[Feature]) -> dict[str, np.ndarray]:
    """The complete rows' columns checked (:mod:`faq.incremental.batch_check`): integer keys within int64,
    finite features, whole-number multiplicities -- keys as int64."""
    import pyarrow as pa

    from faq.incremental import batch_check

    finite = batch_check.Expect("real", "finite numbers (features)", finite=True)
    spec = {**{f.column: finite for f in features}, **{c: batch_check.ID for c in keyed_by},
            DIFF_COLUMN: batch_check.COUNT}
    arrow = pa.table({c: batch_check.arrow_column(v, c, relation=table, target=MaintainedModel.WHAT)
                      for c, v in data.items()})
    checked = batch_check.check_batch(arrow, spec, relation=table, target=MaintainedModel.WHAT)
    return {c: checked.column(c).to_numpy() for c in data}


def _pandas_column(series: Any) -> np.ndarray:
    """A pandas column without missing values as numpy: a nullable integer or float column
    (``Int64``, ``Float64``) as int64 or float64, not as objects."""
    kind = getattr(series.dtype, "kind", "O")
    if kind in "iu":
        return series.to_numpy(dtype=np.int64)
    if kind == "f":
        return series.to_numpy(dtype=np.float64)
    return series.to_numpy()


def _arrow_column(column: Any) -> np.ndarray:
    """An Arrow column as numpy; nulls as NaN (numbers) or None (others), dropped by the caller."""
    import pyarrow as pa

    from faq.arrow_arrays import to_numpy

    if column.null_count and pa.types.is_integer(column.type):
        column = column.cast(pa.float64())  # an integer column with nulls: NaN marks them
    return np.asarray(to_numpy(column))


def _isnull(column: np.ndarray) -> np.ndarray:
    if column.dtype.kind == "f":
        return np.isnan(column)
    return np.array([v is None or (isinstance(v, float) and v != v) for v in column], dtype=bool)

