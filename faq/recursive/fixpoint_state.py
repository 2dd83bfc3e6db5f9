"""The resident state of a maintained fixpoint: edges and answer whose saved deltas are *assignments*.

:class:`FixpointState` is a :class:`~faq.incremental.state.ResidentState`
with three differences:

* a delta file of a relation *sets* its keys to its values, the zero
  removing a key (a deleted edge, a node no longer reached), and deltas
  apply in order: the last one per key wins (:func:`last_per_key`).  In an
  idempotent semiring the ⊕-merge of the generic state cannot undo an edge
  or make a value worse; before deletions were maintained every delta held
  new pairs and strict improvements only, for which setting and ⊕-merging
  agree -- so states saved then open the same way;
* the answer's current rows are read from the maintained value array
  (:attr:`FixpointState.answer_rows`), which changes in place, rather than from
  an overlay of its own;
* unknown key values are added to the domain in bulk (reopening encodes
  every edge).

The edge relation is an :class:`~faq.recursive.edges.EdgeRelation` (it
takes removals).  Parents (:mod:`faq.recursive.trimming`) are not saved:
reopening rebuilds them from the answer (:func:`~faq.recursive.trimming.forest`).

Examples
--------
>>> import numpy as np
>>> from faq.recursive.propagate import fixpoint_ops
>>> from faq.semirings import MIN_PLUS
>>> deltas = [KeyedRows((np.array([1, 2]),), np.array([5.0, 1.0])), KeyedRows((np.array([1]),), np.array([np.inf]))]
>>> rows = last_per_key(deltas, fixpoint_ops(MIN_PLUS))
>>> rows.keys[0].tolist(), rows.values.tolist()           # 1 was removed by the second delta
([1, 2], [inf, 1.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN, KeyDomain
from faq.incremental.index import KeyedRows, ResidentRelation, assigned
from faq.incremental.state import VALUE, ResidentState
from faq.recursive.edges import EdgeRelation
from faq.recursive.propagate import fixpoint_ops
from faq.semirings.numpy_backend import NumpyForm

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EDGE", "ANSWER", "FixpointState", "last_per_key", "save_replaced"]

EDGE, ANSWER = "edge", "answer"  # the state's relations
# Above this many unknown key values, new codes are added in one vectorised step (KeyDomain.encode
# adds them one by one: right for a batch, slow for reopening a state of millions of edges).
_BULK_CODES = 4096


class FixpointState(ResidentState):
    """The state of a maintained fixpoint (module notes)."""

    #: Values are assigned, never subtracted: a user's semiring with numpy forms is held as built-ins are.
    value_form = staticmethod(fixpoint_ops)

    #: The answer's rows ``(node,) -> value``, read from the maintained values (set by the owner).
    answer_rows: Optional[Callable[[], KeyedRows]] = None

    def rows(self, name: str, table: "pa.Table", value: Optional[str] = VALUE, columns: Any = None,
             merge: bool = True, keep_zeros: bool = False) -> KeyedRows:
        columns = list(columns if columns is not None else self.relations[name].columns)
        if all(table.column(c).null_count == 0 for c in columns):
            self.domain = _with_values(self.domain, [np.asarray(table.column(c).to_numpy()) for c in columns])
        return super().rows(name, table, value, columns, merge, keep_zeros)

    def current(self, name: str) -> KeyedRows:
        if name == ANSWER and self.answer_rows is not None:
            return self.answer_rows()
        return super().current(name)

    def after(self, name: str, batch: KeyedRows) -> KeyedRows:
        """The rows of ``name`` once the assignments of ``batch`` are made (the zero removes a key)."""
        return assigned(self.current(name), batch, self.ops)

    def loaded_relation(self, name: str, columns: Sequence[str], parts: Sequence["pa.Table"]) -> ResidentRelation:
        """Relation ``name`` from its saved files: the base, its deltas assigned in order (module notes)."""
        rows = self.rows(name, parts[0], VALUE, columns)
        if len(parts) > 1:
            deltas = [self.rows(name, t, VALUE, columns, keep_zeros=True) for t in parts[1:]]
            rows = assigned(rows, last_per_key(deltas, self.ops), self.ops)
        kind = EdgeRelation if name == EDGE else ResidentRelation
        return kind(name, columns, rows, self.ops)


def last_per_key(batches: Sequence[KeyedRows], ops: NumpyForm) -> KeyedRows:
    """One row per key, sorted: the value of the last batch holding the key (zeros kept)."""
    batches = [b for b in batches if len(b)]
    if not batches:
        return KeyedRows((), None)
    if len(batches) == 1:
        return batches[0]
    keys = [np.concatenate(c) for c in zip(*(b.keys for b in batches))]
    values = np.concatenate([b.values_or_ones(ops) for b in batches])
    order = np.arange(len(values), dtype=np.int64)  # later batches come later
    sort = np.lexsort((order, *keys[::-1]))
    keys = [k[sort] for k in keys]
    # a row is the last of its key unless the next row has the same key
    same = np.ones(len(values) - 1, dtype=bool)
    for k in keys:
        same &= k[1:] == k[:-1]
    last = np.ones(len(values), dtype=bool)
    last[:-1] = ~same
    return KeyedRows(tuple(k[last] for k in keys), values[sort][last])


def save_replaced(state: ResidentState, version: int, meta: dict, rows: dict, labels: list) -> None:
    """Commit ``version`` with relations whose rows were replaced (a recomputation): whole new bases."""
    state.save(version, meta, {}, labels, replaced=rows)


def _with_values(domain: KeyDomain, columns: list[np.ndarray]) -> KeyDomain:
    """``domain`` with the unknown values of ``columns`` appended when they are many (codes kept)."""
    import pandas as pd

    parts = [np.asarray(c) for c in columns if len(c)]
    if not parts:
        return domain
    values = np.concatenate(parts)
    domain.fold()  # lookups below are then one vectorised hash probe
    unknown = values[domain.lookup(values) < 0]
    if len(unknown) < _BULK_CODES:
        return domain
    known = domain.values()
    added = np.asarray(pd.unique(unknown))
    if len(known) + len(added) >= SPAN:  # pragma: no cover - 2^31 distinct nodes
        raise OverflowError("more than 2^31 distinct node ids in one maintained fixpoint")
    return KeyDomain(np.concatenate([known, added.astype(known.dtype, copy=False)]) if len(known) else added)
