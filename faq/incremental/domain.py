"""Dense codes for key values that stay the same for the life of a maintained state.

Resident indexes (:mod:`faq.incremental.index`) store keys as small
non-negative integers, so a trie level can hold ``parent * span + code``
(:mod:`faq.joins.csr`).  A static join encodes its keys once; a maintained
state sees new key values in every batch (a new node, a new matrix row), and
its indexes must not be re-encoded for them.  :class:`KeyDomain` therefore
hands out codes in order of first appearance: a code, once given, never
changes, and a new value gets the next free code.

Lookups are hash based (``pandas.Index.get_indexer``) over the values known
when the domain was last *folded*, plus a small dict for the values added
since; :meth:`KeyDomain.fold` merges the two (at compaction time), so the
work per batch is proportional to the batch, not to the domain.  Any
hashable key type works (integers, strings); integers stay ``int64``.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.domain import KeyDomain
>>> d = KeyDomain.of([np.array([30, 10, 20]), np.array([10, 40])])
>>> d.encode(np.array([40, 10, 99])).tolist()      # codes in order of first appearance; 99 is new
[3, 1, 4]
>>> d.decode(np.array([4, 2])).tolist()
[99, 20]
>>> d.lookup(np.array([77, 30])).tolist()          # lookup never adds: -1 for unknown
[-1, 0]
>>> len(d)
5
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

# Codes must stay below this so that ``parent * SPAN + code`` fits in int64 (see faq.joins.csr).
SPAN = 1 << 31
# Above this many new values in one call they are numbered with one vectorised factorize, not a loop.
BULK_VALUES = 64
#: Up to this many values, :meth:`KeyDomain.lookup` probes the hash table value by value.
FEW_VALUES = 8
# Values added since the last fold beyond which they are folded into the hashed index: at least this many,
# else 32·sqrt(folded values) -- a batch's lookups of added values cost O(added) (a small index rebuilt when
# values were added), a fold O(all values); the square root balances the two over batches.
FOLD_VALUES = 4096


class KeyDomain:
    """Value <-> code dictionary; codes are positions in first-appearance order (see the module notes).

    Parameters
    ----------
    values : np.ndarray
        Distinct values, in code order (code ``i`` is ``values[i]``).
    """

    def __init__(self, values: np.ndarray) -> None:
        import pandas as pd

        self._folded = pd.Index(values)
        self._values = np.asarray(values)
        self._added: dict[Any, int] = {}
        self._added_index = None  # the added values hashed (pd.Index), rebuilt after an add
        self._added_values: list = []
        self._decode_cache: np.ndarray | None = None

    @classmethod
    def of(cls, columns: Sequence[np.ndarray]) -> "KeyDomain":
        """A domain of the distinct values of ``columns`` (in order of first appearance)."""
        import pandas as pd

        parts = [np.asarray(c) for c in columns if len(c)]
        if not parts:
            return cls(np.zeros(0, dtype=np.int64))
        values = pd.unique(np.concatenate(parts))
        return cls(np.asarray(values))

    def __len__(self) -> int:
        return len(self._values) + len(self._added_values)

    @property
    def dtype(self) -> np.dtype:
        return self._values.dtype

    @property
    def nbytes(self) -> int:
        """Approximate memory of the dictionary (values plus the hash table)."""
        return int(self._values.nbytes * 3 + 64 * len(self._added_values))

    def lookup(self, values: np.ndarray) -> np.ndarray:
        """Codes of ``values``; -1 where a value is unknown (nothing is added)."""
        values = np.asarray(values)
        if len(values) == 0:
            return np.zeros(0, dtype=np.int64)
        if len(values) <= FEW_VALUES and values.dtype.kind in "iu" and self._values.dtype.kind in "iu":
            return self._lookup_few(values)
        codes = np.asarray(self._folded.get_indexer(values), dtype=np.int64)
        if self._added:
            missing = np.flatnonzero(codes < 0)
            if len(missing):
                if self._added_index is None:
                    import pandas as pd

                    self._added_index = pd.Index(self._added_array())
                # added values have the codes after the folded ones, in order
                where = np.asarray(self._added_index.get_indexer(values[missing]), dtype=np.int64)
                codes[missing] = np.where(where >= 0, len(self._values) + where, -1)
        return codes

    def _lookup_few(self, values: np.ndarray) -> np.ndarray:
        """:meth:`lookup` of a handful of values: one hash probe each (``get_indexer`` costs ~70 us of
        set-up a call, most of a single change's lookup)."""
        codes = np.empty(len(values), dtype=np.int64)
        for i, value in enumerate(values.tolist()):  # integer keys (the caller checked): Python ints
            try:
                codes[i] = self._folded.get_loc(value)  # the folded values are distinct: one position
            except KeyError:
                codes[i] = self._added.get(value, -1)  # added values carry their codes past the folded ones
        return codes

    def _added_array(self) -> np.ndarray:
        added = np.asarray(self._added_values)
        return np.asarray(self._added_values, dtype=object) if added.dtype.kind in "USO" else added

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Codes of ``values``; unknown values get new codes."""
        codes = self.lookup(values)
        missing = np.flatnonzero(codes < 0)
        if len(missing) > BULK_VALUES:  # many new values (a first load, a large batch): numbered at once
            self._add_new(np.asarray(values)[missing], codes, missing)
        elif len(missing):
            values = np.asarray(values)
            for i in missing:
                v = _scalar(values[i])
                code = self._added.get(v)
                if code is None:
                    code = len(self)
                    if code >= SPAN:  # pragma: no cover - 2^31 distinct keys
                        raise OverflowError("more than 2^31 distinct key values in one maintained state")
                    self._added[v] = code
                    self._added_values.append(v)
                    self._decode_cache = self._added_index = None
                codes[i] = code
        if len(self._added_values) > max(FOLD_VALUES, 32 * math.isqrt(len(self._values))):
            self.fold()  # keep lookups vectorised: values outside the hashed index are looked up one by one
        return codes

    def _add_new(self, new: np.ndarray, codes: np.ndarray, where: np.ndarray) -> None:
        """Give values absent from the domain codes ``len(self) ...`` in order of first appearance."""
        import pandas as pd

        inverse, fresh = pd.factorize(new)
        start = len(self)
        if start + len(fresh) > SPAN:  # pragma: no cover - 2^31 distinct keys
            raise OverflowError("more than 2^31 distinct key values in one maintained state")
        plain = fresh.tolist()  # Python scalars: dict keys hash as the one-by-one path's do
        self._added.update(zip(plain, range(start, start + len(plain))))
        self._added_values.extend(plain)
        self._decode_cache = self._added_index = None
        codes[where] = start + np.asarray(inverse, dtype=np.int64)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Values of ``codes``."""
        codes = np.asarray(codes, dtype=np.int64)
        if not self._added_values:
            return self._values[codes]
        if self._decode_cache is None:
            added = np.asarray(self._added_values)
            if added.dtype.kind in "USO":  # strings stay Python objects, as the hashed index holds them
                added = np.asarray(self._added_values, dtype=object)
            if len(self._values) and added.dtype != self._values.dtype:
                kinds = {added.dtype.kind, self._values.dtype.kind}
                common = self._values.dtype if kinds <= set("iu") else object
                added, base = added.astype(common), self._values.astype(common)
            else:
                base = self._values if len(self._values) else self._values.astype(added.dtype)
            self._decode_cache = np.concatenate([base, added])
        return self._decode_cache[codes]

    def fold(self) -> None:
        """Merge the values added since the last fold into the hashed dictionary (codes unchanged)."""
        if not self._added_values:
            return
        import pandas as pd

        self._values = self.decode(np.arange(len(self), dtype=np.int64))
        self._folded = pd.Index(self._values)
        self._added, self._added_values, self._decode_cache, self._added_index = {}, [], None, None

    def values(self) -> np.ndarray:
        """Every value, in code order."""
        return self.decode(np.arange(len(self), dtype=np.int64))


def _scalar(value: Any) -> Any:
    """A numpy scalar as a plain Python value (dict keys must hash alike)."""
    return value.item() if hasattr(value, "item") else value
