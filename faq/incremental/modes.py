"""How a maintained query takes a batch, by its semiring: signed, monotone, or recomputed.

:func:`delta_mode` decides (the module notes of :mod:`faq.incremental.maintained`):

``signed`` (rings, and ``counting`` kept inside ℤ)
    a delta row adds its signed value; ``counting`` multiplicities must stay
    at least 0 (:class:`~faq.errors.NegativeCountError`);
``monotone`` (an idempotent ⊕: ``min_plus``, ``boolean``, ``max_min`` ...)
    a delta row sets its key's value and must improve it; a deletion (the
    zero) or a worsening is refused (:class:`~faq.errors.NonMonotoneUpdateError`)
    unless the batch is recomputed;
``recompute``
    anything else: only ``apply(..., recompute=True)``.

:class:`DeltaChecks` is the part of :class:`~faq.incremental.MaintainedQuery`
that checks a batch against the current values before anything changes (a
mixin: it reads ``mode``, ``semiring``, ``ops`` and ``state``).

>>> from faq.language import parse_query
>>> from faq.semirings import get_semiring
>>> q = parse_query("count() := edge(a,b), edge(b,c)")
>>> delta_mode(q, get_semiring("counting")), delta_mode(q, get_semiring("min_plus"))
(('signed', ''), ('monotone', ''))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from faq.errors import NegativeCountError, NonMonotoneUpdateError
from faq.incremental.index import KeyedRows
from faq.incremental.state import value_ops
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from faq.language import FAQ

__all__ = ["SIGNED", "MONOTONE", "RECOMPUTE", "delta_mode", "state_semiring", "DeltaChecks", "python_value"]

# How a semiring's deltas are taken (see the module notes).
SIGNED, MONOTONE, RECOMPUTE = "signed", "monotone", "recompute"


def state_semiring(ring: Semiring) -> Semiring:
    """The semiring a maintained answer's values and signed changes are kept in: the completion's ring
    for counts (``counting`` in ``integer``: :attr:`~faq.semirings.Semiring.completion`), else ``ring``.

    >>> state_semiring(get_semiring("counting")).name, state_semiring(get_semiring("min_plus")).name
    ('integer', 'min_plus')
    """
    return ring if ring.completion is None else get_semiring(ring.completion)


def delta_mode(query: "FAQ", ring: Semiring) -> tuple[str, str]:
    """(mode, why not maintainable) for a query over ``ring`` (see the module notes)."""
    mixed = any(get_semiring(s).name != ring.name for _, s in query.aggregates)
    if mixed:
        return RECOMPUTE, "its aggregates mix several ⊕ (they do not commute with deltas)"
    state = state_semiring(ring)
    if value_ops(state) is None:
        return RECOMPUTE, f"semiring {ring.name!r} has no numpy form the resident indexes take (built-in operations)"
    if ring.is_ring or ring.counts:
        return SIGNED, ""
    if ring.idempotent:
        return MONOTONE, ""
    return RECOMPUTE, f"semiring {ring.name!r} has neither inverses nor an idempotent ⊕"



class DeltaChecks:
    """Methods of :class:`~faq.incremental.MaintainedQuery` that check a batch before it runs (a mixin)."""

    @property
    def _looks_up(self) -> bool:
        """Whether a batch must be compared with the current values (counting: deletions; idempotent: all)."""
        return self.mode == MONOTONE or self.semiring.counts

    def _refuse_deletions(self, name: str, batch: KeyedRows) -> None:
        """In an idempotent semiring a row whose value is the zero deletes its key: refused (no lookup needed)."""
        deletion = np.flatnonzero(batch.values_or_ones(self.ops) == self.ops.zero)
        if len(deletion):
            raise NonMonotoneUpdateError(factor=name, kind="deletion", count=len(deletion),
                                         example=self._example(batch.keys, deletion[0]), semiring=self.semiring.name)

    def _checked(self, name: str, batch: KeyedRows, looked: Optional[tuple[np.ndarray, np.ndarray]]) -> KeyedRows:
        """Refuse what the mode cannot take; in monotone mode keep only rows that change a value.

        ``looked`` is (present, current value) per batch row, or None when the
        mode needs no comparison (a ring other than counting).
        """
        if looked is None or not len(batch):
            return batch
        present, before = looked
        new = batch.values_or_ones(self.ops)
        if self.mode == SIGNED:  # counting: multiplicities stay >= 0
            bad = np.flatnonzero(before + new < 0)
            if len(bad):
                raise NegativeCountError(factor=name, count=len(bad), example=self._example(batch.keys, bad[0]))
            return batch
        worse = np.flatnonzero(present & (self.ops.add(before, new) != new))
        if len(worse):
            raise NonMonotoneUpdateError(factor=name, kind="worsening", count=len(worse),
                                         example=self._example(batch.keys, worse[0]), semiring=self.semiring.name)
        changes = ~present | (new != before)
        return batch if changes.all() else batch.take(np.flatnonzero(changes))

    def _checked_here(self, name: str, batch: KeyedRows) -> KeyedRows:
        """:meth:`_checked` with the current values looked up in this process (the indexes on the driver).

        In counting only a row with a negative value can take a multiplicity below zero when the stored
        ones are at least 0 (every batch was checked so; the initial rows are checked once:
        :meth:`~faq.incremental.index.ResidentRelation.nonnegative`), so only those rows are looked
        up, and a batch of insertions none.
        """
        if not self._looks_up or not len(batch):
            return batch
        relation = self.state.relations[name]
        if self.mode != SIGNED or not relation.nonnegative():
            return self._checked(name, batch, relation.lookup(batch.keys))
        new = batch.values_or_ones(self.ops)
        rows = np.flatnonzero(new < 0)
        if len(rows):
            _, before = relation.lookup([k[rows] for k in batch.keys])
            bad = rows[before + new[rows] < 0]
            if len(bad):
                raise NegativeCountError(factor=name, count=len(bad), example=self._example(batch.keys, bad[0]))
        return batch

    def _example(self, keys, row: int) -> tuple:
        return tuple(python_value(self.state.domain.decode(k[row:row + 1])[0]) for k in keys)


def python_value(value: Any) -> Any:
    """A numpy scalar as the Python value (anything else as it is)."""
    return value.item() if hasattr(value, "item") else value
