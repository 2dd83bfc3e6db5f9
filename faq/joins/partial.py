"""Per-task partial aggregates of the broadcast generic join, in numpy.

The broadcast generic join enumerates bindings inside ``mapInArrow`` tasks.
When the executor ⊕-aggregates the product right after the join (an
:class:`~faq.joins.frame.Aggregation`), shipping every binding to the JVM
only to sum it there is wasted work: a task can multiply the values of its
bindings (⊗) and ⊕-combine them per surviving key itself, emitting *partial*
aggregates that Spark then ⊕-combines.  That is only sound when numpy
computes exactly what the semiring's Column expressions compute: the ufuncs
come from :func:`faq.semirings.numpy_backend.numpy_ops` (its table lists the
built-ins' forms and the NaN conventions), which gives them for every
semiring made of built-in operations and for a user-defined one that
declares numpy forms; it returns None for anything else, and the join lists
bindings as before.

Exactness.  Integer partial sums never overflow where Spark would not: the
driver bounds the magnitude of one binding's value (:func:`integer_bound`:
for ⊗ = × the product of each valued relation's largest absolute value;
above ``INT_LIMIT / 2``, or without a bound, it lists bindings instead), and a task adds at most :meth:`PartialAggregate.safe_rows`
rows between :meth:`PartialAggregate.ready` checks and emits its partials as
soon as ``rows × bound`` reaches ``INT_LIMIT / 2``, so every partial is exact and Spark's final
``sum`` (which raises on overflow under ANSI mode) sees what it would have
summed row by row.  Real sums are added in another order than Spark's (as
Spark's own order depends on partitioning).

Examples
--------
>>> import numpy as np
>>> from faq.semirings import COUNTING
>>> from faq.semirings.numpy_backend import numpy_ops
>>> acc = PartialAggregate(numpy_ops(COUNTING), keys=1, span=10)
>>> acc.add([np.array([3, 1, 3])], np.array([2, 5, 7]))
>>> acc.add([np.array([1])], None)             # an unvalued binding counts one
>>> keys, values = acc.drain()
>>> keys[0].tolist(), values.tolist()
([1, 3], [6, 9])
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from faq.semirings.numpy_backend import NumpyForm

# Largest magnitude an int64 partial aggregate may reach (headroom below 2^63).
INT_LIMIT = 1 << 62
#: The compiled loop's guarded total (:func:`faq.joins.compiled.guarded`) moves multiples of
#: ``2 ** GUARD_SHIFT`` (half of :data:`INT_LIMIT`) to a carry: a total within ±2^61 plus one binding's
#: product within ±2^61 never wraps.
GUARD_SHIFT = 61
# A task's buffer of partial aggregates is consolidated above this many rows,
# and emitted when consolidation leaves more than half of it.
FLUSH_ROWS = 1 << 18
# Integer ⊗s whose result is one of its arguments (its magnitude is at most theirs).
_SELECTING = (np.fmin, np.fmax, np.minimum, np.maximum)


def integer_bound(ops: NumpyForm, value_arrays: Sequence[np.ndarray]) -> Optional[int]:
    """Largest possible magnitude of one binding's integer value, or None when none is known.

    ⊗ = ×: Π max |v| (:func:`value_bound`); ⊗ = +: Σ max |v|; ⊗ = min or
    max: the largest max |v|.  The partial sums are then guarded by
    :class:`PartialAggregate` when ⊕ is +, and cannot grow when ⊕ is
    idempotent.  Any other integer ⊗ or ⊕ (user-defined) has no bound here:
    None, and the join lists bindings.
    """
    if not (ops.counts or ops.idempotent):
        return None
    maxima = [max(abs(int(v.min())), abs(int(v.max()))) for v in value_arrays if len(v)]
    if ops.mul is np.multiply:
        return value_bound(value_arrays)
    if ops.mul is np.add:
        return max(sum(maxima), 1)
    if ops.mul in _SELECTING:
        return max(maxima, default=1) or 1
    return None


def value_bound(value_arrays: Sequence[np.ndarray]) -> int:
    """Largest possible magnitude of one binding's ⊗ of integer values: Π max |v| (exact)."""
    bound = 1
    for values in value_arrays:
        if len(values):
            bound *= max(abs(int(values.min())), abs(int(values.max())), 1)
    return bound


class PartialAggregate:
    """⊕-combines (keys, value) rows of one task; :meth:`drain` hands out the partials.

    Parameters
    ----------
    ops : NumpyForm
    keys : int
        Number of key columns (0: one scalar).
    span : int
        Key codes lie in ``0 .. span - 1`` (a composite ``Σ code·spanʲ`` is
        used for grouping when it fits in int64; otherwise a lexicographic sort).
    bound : int
        Magnitude bound of one row's value (integer semirings; see the module notes).
    flush_rows : int, optional
        Buffered rows above which the buffer is consolidated (default :data:`FLUSH_ROWS`).
    """

    def __init__(self, ops: NumpyForm, keys: int, span: int, bound: int = 1, flush_rows: Optional[int] = None) -> None:
        self.ops = ops
        self.n_keys = keys
        self.span = max(int(span), 1)
        self.composite = self.span ** max(keys, 1) < INT_LIMIT
        self.bound = max(int(bound), 1)
        self.flush_rows = FLUSH_ROWS if flush_rows is None else flush_rows
        self._keys: list[list[np.ndarray]] = []
        self._values: list[np.ndarray] = []
        self._buffered = 0
        self._consolidated = 0  # rows the last consolidation left (the first part of the buffer)
        self._scalar: Optional[Any] = None
        self._rows = 0  # rows folded in since the last drain (overflow guard)

    # -- adding ---------------------------------------------------------------

    def add(self, keys: Sequence[np.ndarray], values: Optional[np.ndarray], rows: Optional[int] = None) -> None:
        """Fold in rows: ``keys`` (one code array per key column), ``values`` (None: each worth one)."""
        n = len(values) if values is not None else (len(keys[0]) if keys else int(rows or 0))
        if n == 0:
            return
        self._rows += n
        if self.n_keys == 0:
            part = self._reduce_all(values, n)
            self._scalar = part if self._scalar is None else self.ops.add(self._scalar, part)
            return
        grouped_keys, grouped = self._group(list(keys), values)
        self._keys.append(grouped_keys)
        self._values.append(grouped)
        self._buffered += len(grouped)
        # Consolidated when the rows added since the last consolidation outnumber flush_rows and what it
        # left: a buffer that only grows (many distinct keys, nothing drained) is then sorted a
        # logarithmic number of times, not once every flush_rows rows (quadratic: a 100K-edge batch of
        # a maintained triangle count spent 40 s re-sorting its 3.5M bindings).
        if self._buffered - self._consolidated > max(self.flush_rows, self._consolidated):
            self._consolidate()

    def ready(self) -> bool:
        """True when the partials should be emitted now: a full buffer, or the int64 guard."""
        if self.ops.integral and self._rows * self.bound >= INT_LIMIT // 2:
            return True
        return self._buffered > self.flush_rows // 2

    def safe_rows(self) -> int:
        """Most rows one :meth:`add` may take between :meth:`ready` checks (the int64 guard)."""
        return max(1, (INT_LIMIT // 2) // self.bound) if self.ops.integral else 1 << 62

    def empty(self) -> bool:
        return self._scalar is None and not self._values

    def drain(self) -> tuple[list[np.ndarray], np.ndarray]:
        """The partial aggregates so far (key columns, values), and a fresh start."""
        if self.n_keys == 0:
            values = self.ops.zeros(0) if self._scalar is None else np.array([self._scalar], dtype=self.ops.dtype)
            self._scalar, self._rows = None, 0
            return [], values
        self._consolidate()
        if self._values:
            keys, values = self._keys[0], self._values[0]
        else:
            keys, values = [np.zeros(0, dtype=np.int64) for _ in range(self.n_keys)], self.ops.zeros(0)
        self._keys, self._values, self._buffered, self._rows, self._consolidated = [], [], 0, 0, 0
        return keys, values

    # -- internals ------------------------------------------------------------

    def _reduce_all(self, values: Optional[np.ndarray], n: int) -> Any:
        ops = self.ops
        if values is None:
            return ops.repeated_one(np.array([n]))[0]
        return ops.add.reduce(np.asarray(values, dtype=ops.dtype))

    def _group(self, keys: list[np.ndarray], values: Optional[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
        """One row per distinct key, ⊕ of its values (values None: each row worth one)."""
        ops = self.ops
        n = len(keys[0])
        if self.composite:
            code = keys[0].astype(np.int64, copy=True)
            for column in keys[1:]:
                code *= self.span
                code += column
            order = np.argsort(code, kind="stable")
            sorted_code = code[order]
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(sorted_code[1:], sorted_code[:-1], out=new[1:])
        else:
            order = np.lexsort(tuple(keys[::-1]))
            new = np.zeros(n, dtype=bool)
            new[0] = True
            for column in keys:
                c = column[order]
                new[1:] |= c[1:] != c[:-1]
        starts = np.flatnonzero(new)
        first = order[starts]
        grouped_keys = [np.asarray(column)[first] for column in keys]
        if values is None:
            grouped = ops.repeated_one(np.diff(np.append(starts, n)))
        else:
            grouped = ops.add.reduceat(np.asarray(values, dtype=ops.dtype)[order], starts)
        return grouped_keys, grouped

    def _consolidate(self) -> None:
        if len(self._values) <= 1:
            return
        keys = [np.concatenate([k[j] for k in self._keys]) for j in range(self.n_keys)]
        values = np.concatenate(self._values)
        grouped_keys, grouped = self._group(keys, values)
        self._keys, self._values, self._buffered = [grouped_keys], [grouped], len(grouped)
        self._consolidated = len(grouped)
