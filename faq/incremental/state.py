"""The resident state of anything maintained: relations, their key domain, version, durable store.

A maintained query, a tracked motif and a maintained fixpoint all keep the
same kind of state: a few relations as resident indexes
(:class:`~faq.incremental.index.ResidentRelation`) whose keys share one
:class:`~faq.incremental.domain.KeyDomain`, a version, the labels of the
batches applied (so a resumed run can skip them), and optionally a
:class:`~faq.incremental.store.Store` on disk.  :class:`ResidentState`
holds them and converts between the outside (Spark DataFrames, pandas,
Arrow tables, lists of tuples — raw key values) and the inside (codes).

Saving writes, per changed relation, only its merged batch as a delta file
(or a new base when the store asks for one), then commits the manifest;
opening reads the files with pyarrow and rebuilds the indexes.  Neither
needs Spark.

Examples
--------
>>> import pyarrow as pa
>>> from faq.incremental.state import ResidentState
>>> from faq.semirings import INTEGER
>>> state = ResidentState(INTEGER)
>>> edge = state.add("edge", ("src", "dst"), pa.table({"src": [10, 20], "dst": [20, 30], "v": [1, 1]}), "v")
>>> batch = state.rows("edge", pa.table({"src": [30], "dst": [10], "v": [1]}), "v")
>>> edge.commit(batch)
>>> state.table("edge").to_pylist()
[{'src': 10, 'dst': 20, 'value': 1}, {'src': 20, 'dst': 30, 'value': 1}, {'src': 30, 'dst': 10, 'value': 1}]
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from faq.incremental.domain import KeyDomain
from faq.incremental.durable import Versions
from faq.incremental.index import KeyedRows, ResidentRelation, merge_rows
from faq.arrow_arrays import arrow_from_numpy
from faq.semirings.numpy_backend import NumpyForm, as_values, numpy_ops
from faq.spark import is_dataframe

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.semirings import Semiring

VALUE = "value"  # the value column of saved tables and outputs
ANSWER = "__answer"  # the relation holding a maintained query's answer


def value_ops(semiring: "Semiring") -> Optional[NumpyForm]:
    """⊗/⊕/zero of ``semiring`` in numpy, or None.

    Only for semirings made of built-in operations: the delta rules take
    signed changes with numpy's own − (``-values``, ``after - before``), which
    is a user-defined ring's ⊖ only by chance.  Others are recomputed.  An
    array ring (moments, cofactor) qualifies: its ⊕ and ⊖ are componentwise
    ``np.add`` / ``np.negative`` by construction, and the indexes hold its
    values as ``(rows, w)`` arrays through the shape-generic calls of
    :class:`~faq.semirings.numpy_backend.NumpyForm`.

    >>> from faq.semirings import INTEGER, cofactor
    >>> value_ops(INTEGER).name, value_ops(cofactor(2)).value_shape
    ('integer/integer', (6,))
    """
    if semiring.structured:
        return numpy_ops(semiring, arrays=True) if semiring.is_ring else None
    return numpy_ops(semiring) if semiring.builtin_operations else None


class ResidentState(Versions):
    """Relations kept as resident indexes over one key domain (see the module notes), at a version.

    Its version, labels and store are the :class:`~faq.incremental.durable.Versions`
    record its owner (a :class:`~faq.incremental.durable.Maintained`) reads.

    Parameters
    ----------
    semiring : Semiring
        The semiring the relations' values combine in (a ring for signed
        changes: counting is kept in ``integer``).
    compaction : str, optional
        Where its relations fold their overlays into their bases
        (:mod:`faq.incremental.compaction`); default the session's
        ``spark.faq.compaction`` (:func:`~faq.settings.compaction_mode`,
        read without starting Spark).
    """

    #: The numpy form of the values the relations hold (a subclass whose values are only assigned, never
    #: subtracted, may take more semirings: :class:`~faq.recursive.fixpoint_state.FixpointState`).
    value_form = staticmethod(value_ops)

    def __init__(self, semiring: "Semiring", compaction: Optional[str] = None) -> None:
        if compaction is None:
            from faq.settings import compaction_mode
            from faq.spark import session_for_driver_data

            compaction = compaction_mode(session_for_driver_data())
        self.compaction = compaction
        ops = self.value_form(semiring)
        if ops is None:  # callers check first; see faq.incremental.maintained
            raise ValueError(f"semiring {semiring.name!r} has no numpy form")
        super().__init__()  # version 0, no labels, no store
        self.semiring = semiring
        self.ops: NumpyForm = ops
        self.domain = KeyDomain(np.zeros(0, dtype=np.int64))
        self.relations: dict[str, ResidentRelation] = {}
        self.key_types: dict[str, dict[str, str]] = {}
        self.remote = None  # an ExecutorIndexes holding the released bases (faq.incremental.executors)

    # -- relations ------------------------------------------------------------------

    def add(self, name: str, columns: Sequence[str], table: "pa.Table", value: Optional[str],
            key_types: Optional[Mapping[str, str]] = None) -> ResidentRelation:
        """A relation from a table of raw keys (columns ``columns``) and ``value`` (None: all one)."""
        self.key_types[name] = dict(key_types or _arrow_types(table, columns))
        relation = ResidentRelation.build(name, columns, self.rows(name, table, value, columns), self.ops)
        self.hold(name, relation)
        return relation

    def hold(self, name: str, relation: ResidentRelation) -> None:
        """Keep ``relation`` as ``name``, compacting where this state's relations do."""
        relation.compaction = self.compaction
        self.relations[name] = relation

    def rows(self, name: str, table: "pa.Table", value: Optional[str] = VALUE,
             columns: Optional[Sequence[str]] = None, merge: bool = True, keep_zeros: bool = False) -> KeyedRows:
        """A table's rows as codes of the domain (new key values get new codes), merged per key.

        Rows with a null key are left out (a null never joins).  ``keep_zeros``
        keeps keys whose merged value is the zero (a deletion in an idempotent
        semiring).
        """
        columns = list(columns if columns is not None else self.relations[name].columns)
        table = _without_null_keys(table, columns)
        raw = [_column(table, c) for c in columns]
        values = None
        if value is not None and value in table.column_names:
            values = as_values(self.semiring, table.column(value)) if self.semiring.structured else \
                _column(table, value).astype(self.ops.dtype, copy=False)
        return self.coded(raw, values, merge, keep_zeros)

    def coded(self, raw: Sequence[np.ndarray], values: Optional[np.ndarray], merge: bool = True,
              keep_zeros: bool = False) -> KeyedRows:
        """Key columns of raw values (numpy, no nulls) and their values (the state's dtype, None: all
        one) as rows of codes (new key values get new codes), merged per key as :meth:`rows` merges."""
        # A few integer keys: every column in one call (new values numbered as column by column numbers them).
        if len(raw) > 1 and len(raw[0]) <= 64 and all(c.dtype == raw[0].dtype for c in raw) \
                and raw[0].dtype.kind in "iu":
            codes, n = self.domain.encode(np.concatenate(raw)), len(raw[0])
            keys = [codes[i * n:(i + 1) * n] for i in range(len(raw))]
        else:
            keys = [self.domain.encode(c) for c in raw]
        if not merge:
            return KeyedRows(tuple(keys), values)
        return merge_rows(keys, values, self.ops, drop_zeros=not keep_zeros)

    def current(self, name: str) -> KeyedRows:
        """The current rows of ``name`` (read back from the executors when its base lives there)."""
        relation = self.relations[name]
        return self.remote.current(name) if relation.released else relation.current()

    def after(self, name: str, batch: KeyedRows) -> KeyedRows:
        """The rows of ``name`` once ``batch`` is merged in (nothing changes here)."""
        relation = self.relations[name]
        if not relation.released:
            return relation.after(batch)
        current = self.current(name)
        keys = [np.concatenate([c, b]) for c, b in zip(current.keys, batch.keys)]
        values = np.concatenate([current.values_or_ones(self.ops), batch.values_or_ones(self.ops)])
        return merge_rows(keys, values, self.ops)

    def commit(self, name: str, batch: KeyedRows) -> None:
        """Merge ``batch`` into ``name``; a released base is compacted (and shipped) by the executors' owner."""
        relation = self.relations[name]
        relation.commit(batch, compact=not relation.released)
        if relation.released and relation.needs_compaction():
            self.remote.compact(name)

    def replace(self, name: str, rows: KeyedRows) -> None:
        """Make ``rows`` the base of ``name`` (empty overlay), shipping it again if it lives on the executors."""
        released = self.relations[name].released
        self.relations[name].replace(rows)
        if released:
            self.remote.ship([name])

    def table(self, name: str, rows: Optional[KeyedRows] = None, value: str = VALUE) -> "pa.Table":
        """``rows`` (default: the current rows of ``name``) as an Arrow table of raw keys and ``value``."""
        import pyarrow as pa

        relation = self.relations[name]
        rows = self.current(name) if rows is None else rows
        data = {c: self.domain.decode(k) for c, k in zip(relation.columns, rows.keys)}
        data[value] = arrow_from_numpy(rows.values_or_ones(self.ops))
        return pa.table(data)

    def spark_schema(self, name: str, value: str = VALUE) -> str:
        """DDL of ``name``'s rows as :meth:`table` gives them (key types as they came in)."""
        types = self.key_types.get(name, {})
        columns = [f"`{c}` {types.get(c, 'bigint')}" for c in self.relations[name].columns]
        return ", ".join([*columns, f"`{value}` {self.semiring.value_type}"])

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.relations.values()) + self.domain.nbytes

    def settle(self, report: bool = True) -> None:
        """Finish every relation's compaction in flight (:meth:`ResidentRelation.settle`).

        ``report`` False passes over a failed compaction (the rows are intact
        either way): for saving and closing, which need the rows, not the new base.
        """
        from faq.errors import CompactionFailedError

        for relation in self.relations.values():
            try:
                relation.settle()
            except CompactionFailedError:
                if report:
                    raise

    # -- durability -----------------------------------------------------------------

    def attach(self, path: str | os.PathLike, meta: Mapping[str, Any]) -> None:
        """Start keeping the state in ``path`` (must not hold a state): saves the current version."""
        from faq.incremental.store import Store

        store = Store(path)
        store.create()  # refuses a state already there, or a directory holding files of the user's
        try:
            self.settle(report=False)  # a compaction in flight finishes first (its rows are saved either way)
            store.save(self.version, self._meta(meta), {n: ("base", self.table(n)) for n in self.relations})
        except BaseException:
            store.release()
            raise
        self.store = store

    def save(self, version: int, meta: Mapping[str, Any], batches: Mapping[str, KeyedRows],
             labels: Sequence[str], replaced: Optional[Mapping[str, KeyedRows]] = None) -> None:
        """Commit ``version`` with each changed relation's batch, and ``replaced`` relations' new rows.

        Called *before* the batch is merged in memory (the manifest is the
        commit point); the store decides per relation between a delta file
        and a new base (written from the rows after the batch).
        """
        if self.store is None:
            return
        writes = {name: ("base", self.table(name, rows)) for name, rows in (replaced or {}).items()}
        for name, batch in batches.items():
            if not len(batch):
                continue
            if self.store.wants_rebase(name, len(batch)):
                writes[name] = ("base", self.table(name, self.after(name, batch)))
            else:
                writes[name] = ("delta", self.table(name, batch))
        self.store.save(version, self._meta(meta, labels), writes)

    def _meta(self, meta: Mapping[str, Any], labels: Optional[Sequence[str]] = None) -> dict[str, Any]:
        return {**meta, "semiring_state": self.semiring.name, "labels": list(self.labels if labels is None else labels),
                "columns": {n: list(r.columns) for n, r in self.relations.items()},
                "key_types": self.key_types}

    @classmethod
    def load(cls, path: str | os.PathLike, semiring: "Semiring") -> tuple["ResidentState", dict[str, Any]]:
        """The state saved in ``path`` at its committed version, and its manifest."""
        from faq.compiled import COMPILED, start_numba
        from faq.incremental.store import Store, restoring
        from faq.prefetch import run_in_background

        if COMPILED:  # the first batch needs numba (1-3 s to start): started while the files are read and
            run_in_background(start_numba, label="start-numba")  # indexed, its digit sort indexes them too
        store = Store(path)
        meta, tables = store.load()
        state = cls(semiring)
        with restoring(store.path):
            for name, parts in tables.items():
                columns = meta["columns"][name]
                state.key_types[name] = dict(meta["key_types"].get(name, {}))
                state.hold(name, state.loaded_relation(name, columns, parts))
            state.version = int(meta["version"])
            state.labels = list(meta.get("labels", []))
        state.store = store
        return state, meta

    def loaded_relation(self, name: str, columns: Sequence[str], parts: Sequence["pa.Table"]) -> ResidentRelation:
        """Relation ``name`` from its saved files: the base, then the deltas merged as they were when applied."""
        import pyarrow as pa

        relation = ResidentRelation(name, columns, self.rows(name, parts[0], VALUE, columns), self.ops)
        relation.compaction = self.compaction
        if len(parts) > 1:
            relation.commit(self.rows(name, pa.concat_tables(parts[1:]), VALUE, columns, keep_zeros=True))
        return relation


# --- conversions ---------------------------------------------------------------------


def _column(table: "pa.Table", name: str) -> np.ndarray:
    column = table.column(name)
    array = column.to_numpy() if column.num_chunks <= 1 else column.combine_chunks().to_numpy(zero_copy_only=False)
    if array.dtype.kind in "iu" and array.dtype != np.int64:
        array = array.astype(np.int64)
    return array


def _without_null_keys(table: "pa.Table", columns: Sequence[str]) -> "pa.Table":
    import pyarrow.compute as pc

    if all(table.column(c).null_count == 0 for c in columns):
        return table
    mask = None
    for c in columns:
        valid = pc.is_valid(table.column(c))
        mask = valid if mask is None else pc.and_(mask, valid)
    return table.filter(mask)


_ARROW_TO_SPARK = {"int64": "bigint", "int32": "int", "int16": "smallint", "int8": "tinyint", "string": "string",
                   "large_string": "string", "double": "double", "bool": "boolean"}


def _arrow_types(table: "pa.Table", columns: Sequence[str]) -> dict[str, str]:
    return {c: _ARROW_TO_SPARK.get(str(table.schema.field(c).type), "bigint") for c in columns}


def to_arrow(data: Any, columns: Sequence[str], *, what: str = "the data", relation: Optional[str] = None,
             target: str = "a maintained state") -> "pa.Table":
    """Rows given as a Spark DataFrame, a Factor, pandas, an Arrow table (any Arrow stream) or tuples, as an Arrow
    table.

    Tuples are taken by position: ``columns``, then an optional value (a
    row without it where others have one: a null value, refused by the
    batch check).  Tuples Arrow cannot type by column (``1`` and ``"a"``, an
    int beyond int64) are an :class:`~faq.errors.InvalidBatchError` naming
    ``relation`` and ``target``.  A Spark DataFrame is collected (one Spark
    job): batches are meant to be small; pass pandas or tuples to keep Spark
    out of a batch entirely.
    """
    import pyarrow as pa

    from faq.errors import FAQTypeError

    from faq.factor import Factor

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, Factor):
        if data.relation.held:  # rows the driver holds: no Spark
            return pa.table({c: a if a.ndim == 1 else list(a) for c, a in data.relation.arrays.items()})
        data = data.df
    # Before any duck typing: a Spark Connect DataFrame answers every attribute name with a Column.
    if is_dataframe(data):
        return data.toArrow()
    from faq.input_kinds import as_arrow

    table = as_arrow(data, what)  # pandas, or any table exporting an Arrow stream (polars, ...)
    if table is not None:
        return table
    try:
        rows = [tuple(r) for r in data]
    except TypeError:
        raise FAQTypeError(error_class="ROWS_TYPE", what=what, type=type(data).__name__, argument=what) from None
    width = len(columns)
    if not rows:
        return pa.table({c: pa.array([], pa.int64()) for c in columns})
    lengths = {len(r) for r in rows}
    if not lengths <= {width, width + 1}:
        raise FAQTypeError(error_class="ROWS_WIDTH", what=what, width=width, lengths=sorted(lengths), argument=what)
    from faq.incremental.batch_check import arrow_table

    return arrow_table(rows, [*columns, VALUE] if width + 1 in lengths else list(columns),
                       relation=relation or what, target=target)


def arrow_values(table: "pa.Table", ops) -> np.ndarray:
    """The value column of ``table`` as numpy in ``ops``' dtype (an array ring's list column as ``(n, w)``)."""
    if table.num_rows == 0:
        return ops.zeros(0)
    column = table.column(VALUE).combine_chunks()
    if ops.value_shape:  # an array ring: a list column
        return np.asarray(column.flatten(), dtype=ops.dtype).reshape(-1, *ops.value_shape)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=ops.dtype)


def cast_arrow_values(table: "pa.Table", value_type: str) -> "pa.Table":
    """``table`` with its value column cast to ``value_type`` (bigint, double, boolean; others as they are)."""
    import pyarrow as pa

    if value_type not in ("bigint", "double", "boolean"):  # an array ring's list: read by as_values
        return table

    target = {"bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}[value_type]
    index = table.column_names.index(VALUE)
    column = table.column(VALUE)
    if column.type == target:
        return table
    if pa.types.is_boolean(target) or pa.types.is_boolean(column.type) or pa.types.is_floating(target):
        column = column.cast(target)
    else:
        column = column.cast(target, safe=False)
    return table.set_column(index, VALUE, column)
