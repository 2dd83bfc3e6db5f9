"""Compact sorted indexes (CSR tries) of relations, as numpy arrays.

A relation ``R(r1, ..., rk)`` whose attributes are listed in the join's
attribute order is indexed as a *trie* of ``k`` levels.  Level ``j`` holds
the distinct prefixes ``(r1 .. rj)`` (all rows at the last level, so
repeated keys keep their multiplicity), sorted, each entry pointing to its
parent entry at level ``j - 1`` (the root, entry 0, for level 1).  A level is
stored as two arrays:

* ``comp``: ``parent * span + value`` per entry: sorted, since entries are
  sorted by (parent, value).  One ``np.searchsorted`` over it finds a value
  *inside one parent's segment* for a whole vector of (parent, value) pairs —
  the validation of many candidates at once;
* ``offsets``: CSR offsets, the entries of parent ``p`` are
  ``comp[offsets[p]:offsets[p + 1]]`` — the count and proposal of a prefix.

Keys are encoded as small non-negative integers (shifted by the minimum, or
ranks in a sorted dictionary when the range is too wide for ``parent * span``
to fit in 64 bits), so ``span`` is the size of the key domain.

Examples
--------
>>> import numpy as np
>>> from faq.joins.csr import build_encoding, build_trie
>>> src, dst = np.array([3, 1, 1, 2]), np.array([1, 2, 3, 3])
>>> enc = build_encoding([src, dst], max_rows=4)
>>> trie = build_trie([enc.encode(src), enc.encode(dst)], enc.span)
>>> [enc.decode(trie.levels[0].comp).tolist(), trie.levels[0].offsets.tolist()]
[[1, 2, 3], [0, 3]]
>>> trie.levels[1].offsets.tolist()          # children of 1, of 2, of 3
[0, 2, 3, 4]
>>> trie.levels[1].values(np.arange(4), enc.span).tolist()   # encoded dst of (1,2) (1,3) (2,3) (3,1)
[1, 2, 2, 0]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

# ``parent * span + value`` must stay below this (int64 with headroom).
_COMPOSITE_LIMIT = 1 << 62


@dataclass(frozen=True)
class Encoding:
    """Maps key values (int64) to ``0 .. span - 1`` and back.

    ``dictionary`` is None for a shift by ``low``; otherwise the sorted
    distinct values, a key's code being its rank.
    """

    low: int
    span: int
    dictionary: Optional[np.ndarray] = None

    def encode(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.int64)
        if self.dictionary is None:
            return values - np.int64(self.low)
        return np.searchsorted(self.dictionary, values).astype(np.int64)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        if self.dictionary is None:
            return codes + np.int64(self.low)
        return self.dictionary[codes]


def build_encoding(columns: Sequence[np.ndarray], max_rows: int) -> Encoding:
    """An encoding of every value in ``columns`` that keeps ``parent * span + value`` in int64.

    ``max_rows`` bounds the number of parents of any trie level.
    """
    non_empty = [c for c in columns if len(c)]
    if not non_empty:
        return Encoding(0, 1)
    low = min(int(c.min()) for c in non_empty)
    high = max(int(c.max()) for c in non_empty)
    span = high - low + 1
    if span * (max_rows + 1) < _COMPOSITE_LIMIT:
        return Encoding(low, span)
    dictionary = np.unique(np.concatenate([np.asarray(c, dtype=np.int64) for c in non_empty]))
    if len(dictionary) * (max_rows + 1) >= _COMPOSITE_LIMIT:  # pragma: no cover - > 2^31 keys and rows
        raise OverflowError("key domain and relation too large for a 64-bit composite index")
    return Encoding(0, len(dictionary), dictionary)


@dataclass(frozen=True)
class TrieLevel:
    """One level of a trie: sorted ``parent * span + value`` and CSR offsets per parent."""

    comp: np.ndarray
    offsets: np.ndarray
    duplicates: bool = False

    @property
    def size(self) -> int:
        return len(self.comp)

    def values(self, positions: np.ndarray, span: int) -> np.ndarray:
        """The encoded values at ``positions`` (entries of this level)."""
        # parent of an entry = the segment it lies in
        parents = np.searchsorted(self.offsets, positions, side="right") - 1
        return self.comp[positions] - parents * np.int64(span)


@dataclass(frozen=True)
class Trie:
    """The index of one relation: ``levels[j]`` maps prefixes of length j to the next attribute.

    ``values`` (if any) are the relation's semiring values aligned with the
    last level (its entries are the sorted rows).
    """

    levels: tuple[TrieLevel, ...]
    values: Optional[np.ndarray] = None
    rows: int = 0
    nbytes: int = field(default=0, compare=False)


def build_trie(columns: Sequence[np.ndarray], span: int, values: Optional[np.ndarray] = None) -> Trie:
    """Sort ``columns`` (encoded keys, first attribute first) and build the trie levels.

    ``values`` (aligned with the rows) are reordered along.
    """
    k = len(columns)
    if k == 0:
        raise ValueError("a trie needs at least one column")
    n = len(columns[0])
    order = np.lexsort(tuple(columns[::-1])) if n else np.zeros(0, dtype=np.int64)
    cols = [np.ascontiguousarray(c[order], dtype=np.int64) for c in columns]
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
    parent_of_row = np.zeros(n, dtype=np.int64)
    n_parents = 1
    span64 = np.int64(span)
    levels = []
    for j, c in enumerate(cols):
        changed = np.empty(n, dtype=bool)
        if n:
            changed[0] = True
            np.not_equal(c[1:], c[:-1], out=changed[1:])
        new = new | changed
        if j < k - 1:
            entries = np.flatnonzero(new)
            parents = parent_of_row[entries]
            comp = parents * span64 + c[entries]
            ids = np.cumsum(new, dtype=np.int64) - 1
            duplicates = False
        else:
            parents = parent_of_row
            comp = parents * span64 + c
            ids = np.arange(n, dtype=np.int64)
            duplicates = bool(n) and not bool(new.all())
        offsets = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(np.bincount(parents, minlength=n_parents), out=offsets[1:])
        levels.append(TrieLevel(comp, offsets, duplicates))
        parent_of_row = ids
        n_parents = len(comp)
    sorted_values = None if values is None else np.ascontiguousarray(np.asarray(values)[order])
    nbytes = sum(level.comp.nbytes + level.offsets.nbytes for level in levels)
    nbytes += 0 if sorted_values is None else sorted_values.nbytes
    return Trie(tuple(levels), sorted_values, n, nbytes)
