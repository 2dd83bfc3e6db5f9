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

Validation (is ``parent * span + value`` an entry?) is a binary search of
``comp`` (``np.searchsorted``) until a level has answered as many lookups as
it has entries; from then on the level answers through a :class:`HashIndex`
built once, lazily, in the process that validates (an open-addressing table
of at most :data:`HASH_MAX_SLOTS` slots, about four per entry): one or two
random reads per key instead of ~log2(entries), measured 1.5-2x faster on the
R-MAT scale 12-14 triangle workload (``bench/bench_wcoj.py --kernel``).

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

import sys
import weakref
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

# ``parent * span + value`` must stay below this (int64 with headroom).
_COMPOSITE_LIMIT = 1 << 62
# Hash tables of a level have a power of two >= HASH_SLOTS_PER_ENTRY * entries slots ...
HASH_SLOTS_PER_ENTRY = 4
# ... and at most this many (8 bytes each, plus 4 per slot when positions are needed);
# larger levels keep binary search.
HASH_MAX_SLOTS = 1 << 24
# Fibonacci hashing: the top bits of key * 2^64 / golden ratio.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_EMPTY = np.int64(-1)


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


class HashIndex:
    """Membership (and position) of int64 keys in a sorted array, by linear probing.

    Keys are the non-negative composites of a :class:`TrieLevel`; the table
    is built in one pass: slots are the top ``bits`` bits of ``key * φ⁻¹ 2⁶⁴``;
    keys sorted by slot take the next free slot (``position = max(slot,
    previous position + 1)``, a running maximum), so no probe ever wraps
    around: the table is extended past ``2**bits`` by the longest run and ends
    with an empty slot.

    Parameters
    ----------
    comp : np.ndarray
        Distinct non-negative int64 keys (a level's ``comp``).
    slots_per_entry : int
        Load control: ``2**bits >= slots_per_entry * len(comp)``.

    Examples
    --------
    >>> import numpy as np
    >>> index = HashIndex(np.array([3, 10, 11, 40], dtype=np.int64))
    >>> rows, entries = index.find(np.array([11, 5, 40, 3, 12], dtype=np.int64))
    >>> sorted(zip(rows.tolist(), entries.tolist()))   # key row -> entry of comp
    [(0, 2), (2, 3), (3, 0)]
    """

    def __init__(self, comp: np.ndarray, slots_per_entry: int = HASH_SLOTS_PER_ENTRY) -> None:
        comp = np.ascontiguousarray(comp, dtype=np.int64)
        bits = max(4, int(slots_per_entry * max(len(comp), 1) - 1).bit_length())
        self.shift = np.uint64(64 - bits)
        self._comp = comp  # shared with the level, not copied
        at, order = self._placement()
        size = max(1 << bits, int(at[-1]) + 1 if len(at) else 0) + 1  # last slot stays empty
        self.keys = np.full(size, _EMPTY, dtype=np.int64)
        self.keys[at] = comp[order]
        self._entries: Optional[np.ndarray] = None

    def _placement(self) -> tuple[np.ndarray, np.ndarray]:
        """(slot of each key in slot order, that order): linear probing without wrap-around."""
        home = self.slot(self._comp)
        order = np.argsort(home, kind="stable")
        home = home[order]
        rank = np.arange(len(home), dtype=np.int64)
        at = np.maximum.accumulate(home - rank) + rank if len(home) else rank
        return at, order

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + (0 if self._entries is None else self._entries.nbytes)

    def slot(self, keys: np.ndarray) -> np.ndarray:
        """Home slot of each key."""
        return ((keys.view(np.uint64) * _GOLDEN) >> self.shift).view(np.int64)

    def entries(self) -> np.ndarray:
        """Per slot, the position in ``comp`` of the key it holds (built on first use)."""
        if self._entries is None:
            at, order = self._placement()  # recomputed: most tables never need positions
            dtype = np.int32 if len(order) < (1 << 31) else np.int64
            entries = np.zeros(len(self.keys), dtype=dtype)
            entries[at] = order
            self._entries = entries
        return self._entries

    def find(self, keys: np.ndarray, positions: bool = True) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """Rows of ``keys`` that are present (in no particular order) and, if asked, their positions in ``comp``."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        slots = self.slot(keys)
        held = self.keys[slots]
        equal = held == keys
        hit = np.flatnonzero(equal)
        probing = np.flatnonzero(~equal & (held != _EMPTY))
        if len(probing) == 0:
            return hit, (self.entries()[slots[hit]] if positions else None)
        rows, found = [hit], [slots[hit]]
        while len(probing):
            nxt = slots[probing] + 1
            held = self.keys[nxt]
            wanted = keys[probing]
            match = held == wanted
            rows.append(probing[match])
            found.append(nxt[match])
            going = ~match & (held != _EMPTY)
            probing = probing[going]
            slots[probing] = nxt[going]
        row = np.concatenate(rows)
        return row, (self.entries()[np.concatenate(found)].astype(np.int64, copy=False) if positions else None)


#: Fewest keys a resident level (``hashable=False``) looks up in its warmed hash (:func:`warm_hash`):
#: for fewer, binary search is as fast (0.03 against 0.04 ms for 50 keys into 2M entries; the hash
#: is 4.6x faster at 1,000 keys and 6.7x at 10,000).
HASH_MIN_KEYS = 128


#: Fewest entries a level needs for :func:`warm_hash` to hash it.
WARM_MIN_ENTRIES = 1 << 14


def warm_hash(level: "TrieLevel", min_entries: Optional[int] = None) -> bool:
    """Build ``level``'s hash index (with positions) now, so :meth:`TrieLevel.find` uses it from then on.

    For a resident index's base levels, in the background (a compaction's
    fold, after a first build): built inside a batch it would stall that
    batch.  Levels of fewer than ``min_entries`` (:data:`WARM_MIN_ENTRIES`) entries, with repeated
    entries, or above :data:`HASH_MAX_SLOTS` slots keep binary search.
    Returns whether a hash index was built.

    >>> level = TrieLevel(np.arange(0, 40, 2, dtype=np.int64), np.array([0, 20]), hashable=False)
    >>> warm_hash(level, min_entries=1)
    True
    >>> rows, entries = level.find(np.arange(200, dtype=np.int64) % 41)   # >= HASH_MIN_KEYS keys: the hash
    >>> sorted(set(entries.tolist())) == list(range(20))
    True
    """
    comp = level.comp
    min_entries = WARM_MIN_ENTRIES if min_entries is None else min_entries
    if level.duplicates or len(comp) < min_entries or HASH_SLOTS_PER_ENTRY * len(comp) > HASH_MAX_SLOTS:
        return False
    if _HASHES.get(level) is None:
        index = HashIndex(comp)
        index.entries()  # positions too: a batch's validators need them
        _HASHES[level] = index  # published whole: a reader sees no index or a complete one
    return True


#: Above this many keys, :func:`sorted_search` sorts them before searching.
SORTED_SEARCH_KEYS = 256


def sorted_search(haystack: np.ndarray, keys: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted(haystack, keys, side)``, with many keys searched in sorted order.

    numpy's binary search starts each key from the last one's bounds when the
    keys ascend; random keys into a large level miss the cache at every step.
    Sorting a few thousand keys first makes the search 2.5-5x faster on a
    4M-entry level (10 -> 4 ms for 5,000 keys; 114 -> 21 ms for 50,000):
    most of a maintained batch's join is such searches into the base.

    >>> sorted_search(np.array([1, 3, 5, 7]), np.array([6, 0, 3])).tolist()
    [3, 0, 1]
    """
    keys = np.asarray(keys)
    if len(keys) <= SORTED_SEARCH_KEYS:
        return np.searchsorted(haystack, keys, side=side)
    order = np.argsort(keys, kind="stable")
    found = np.empty(len(keys), dtype=np.intp)
    found[order] = np.searchsorted(haystack, keys[order], side=side)
    return found


# Hash indexes built for levels in this process (never pickled with the level).
_HASHES: "weakref.WeakKeyDictionary[TrieLevel, HashIndex]" = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class TrieLevel:
    """One level of a trie: sorted ``parent * span + value`` and CSR offsets per parent.

    Levels compare by identity (their arrays are large); :meth:`find` keeps a
    count of the keys it has looked up, to decide when a hash index pays.
    """

    comp: np.ndarray
    offsets: np.ndarray
    duplicates: bool = False
    # False: always binary search (resident indexes answer a few keys per batch; a table would be
    # a one-time spike of build time and memory for no gain).
    hashable: bool = True
    _lookups: list = field(default_factory=lambda: [0], repr=False)

    @property
    def size(self) -> int:
        return len(self.comp)

    @property
    def hashed(self) -> bool:
        """Whether this process holds a hash index of the level (built by :meth:`find` or :func:`warm_hash`)."""
        return _HASHES.get(self) is not None

    def find(self, keys: np.ndarray, positions: bool = True) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """Rows of ``keys`` (composites) that are entries of this level, and their entries.

        For a level without repeated entries.  Binary search until the level
        has answered as many keys as it has entries, then a lazily built
        :class:`HashIndex` (when it has at most :data:`HASH_MAX_SLOTS` slots);
        the rows come in no particular order.

        >>> level = TrieLevel(np.array([2, 5, 9], dtype=np.int64), np.array([0, 3]))
        >>> rows, entries = level.find(np.array([9, 4, 2], dtype=np.int64))
        >>> rows.tolist(), entries.tolist()
        ([0, 2], [2, 0])
        """
        comp = self.comp
        if len(keys) == 0 or len(comp) == 0:
            return np.zeros(0, dtype=np.int64), (np.zeros(0, dtype=np.int64) if positions else None)
        index = _HASHES.get(self)
        if index is not None and not self.hashable and len(keys) < HASH_MIN_KEYS:
            index = None  # a resident level's hash (warm_hash) pays from a few hundred keys; a handful search
        if index is None and self.hashable:
            self._lookups[0] += len(keys)
            if self._lookups[0] > len(comp) and HASH_SLOTS_PER_ENTRY * len(comp) <= HASH_MAX_SLOTS:
                index = _HASHES[self] = HashIndex(comp)
        if index is not None:
            return index.find(keys, positions)
        low = sorted_search(comp, keys)
        np.minimum(low, len(comp) - 1, out=low)
        rows = np.flatnonzero(comp[low] == keys)
        return rows, (low[rows] if positions else None)

    def values(self, positions: np.ndarray, span: int) -> np.ndarray:
        """The encoded values at ``positions`` (entries of this level)."""
        # parent of an entry = the segment it lies in
        parents = sorted_search(self.offsets, positions, side="right") - 1
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


def lexicographically_sorted(columns: Sequence[np.ndarray], strictly: bool = False) -> bool:
    """Whether the rows of ``columns`` (first column first) are in non-decreasing lexicographic order
    (``strictly``: increasing, so no row repeats).

    >>> import numpy as np
    >>> lexicographically_sorted([np.array([1, 1, 2]), np.array([5, 7, 0])])
    True
    >>> lexicographically_sorted([np.array([1, 1, 2]), np.array([7, 5, 0])])
    False
    >>> lexicographically_sorted([np.array([1, 1]), np.array([5, 5])], strictly=True)
    False
    """
    if len(columns[0]) < 2:
        return True
    tied = np.ones(len(columns[0]) - 1, dtype=bool)  # rows equal so far on the columns seen
    for c in columns:
        c = np.asarray(c)
        if np.any(tied & (c[1:] < c[:-1])):
            return False
        tied &= c[1:] == c[:-1]
        if not tied.any():
            return True
    return not strictly


def lexicographic_order(columns: Sequence[np.ndarray], span: int) -> np.ndarray:
    """The stable order sorting rows by ``columns`` (first attribute first).

    Two columns of keys in ``[0, span)`` with ``span² ≤ 2^62`` (every encoding here) are packed into
    one int64 and sorted once, about 3x faster than ``np.lexsort`` over the two.

    >>> lexicographic_order([np.array([2, 1, 2, 1]), np.array([0, 5, 0, 3])], span=8).tolist()
    [3, 1, 0, 2]
    """
    if (len(columns) == 2 and len(columns[0]) and span <= 1 << 31
            and all(0 <= c.min() and c.max() < span for c in map(np.asarray, columns))):
        if _radix_pays(len(columns[0]), span):  # a counting pass by the first column, a digit sort of each run
            from faq.radix import code_time_runs

            return code_time_runs(columns[0], columns[1], span)[1]
        return np.argsort(np.asarray(columns[0], dtype=np.int64) * np.int64(span) + columns[1], kind="stable")
    return np.lexsort(tuple(columns[::-1]))


#: Rows from which two columns of keys are put in order by :mod:`faq.radix` (3-3.5x numpy's stable argsort of
#: the packed keys: 1.8M rows of 46,000 codes 0.08 s against 0.29 s, 10M of 1M codes 0.85 s against 2.6 s,
#: the same order; scratch, this 2-core machine) -- where numba is loaded already; numba's import and the
#: kernel's load (~0.5 s) pay for themselves from :data:`RADIX_IMPORT_FROM` rows.
RADIX_FROM = 100_000
RADIX_IMPORT_FROM = 3_000_000
#: Most codes a row the counting pass may count (its array has one entry a code).
RADIX_CODES_PER_ROW = 4


def _radix_pays(rows: int, span: int) -> bool:
    from faq.compiled import COMPILED

    return (COMPILED and rows >= RADIX_FROM and span <= RADIX_CODES_PER_ROW * rows + (1 << 16)
            and ("numba" in sys.modules or rows >= RADIX_IMPORT_FROM))


def combine_repeated_rows(columns: Sequence[np.ndarray], values: Optional[np.ndarray], span: int,
                          add: np.ufunc, one: object) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """The rows of ``columns`` sorted, each distinct row once with the ⊕ (``add``) of its rows' values.

    Exact for any ⊕-aggregate of a join: by distributivity a repeated row's
    terms ``v1 ⊗ rest ⊕ v2 ⊗ rest`` are ``(v1 ⊕ v2) ⊗ rest``, so a relation
    whose rows repeat joins as its distinct rows valued by the ⊕ of their
    values (``one`` each without ``values``).  Without repeated rows the
    values come back as given (None stays None); the rows come back sorted,
    so :func:`build_trie` does not sort them again.

    >>> import numpy as np
    >>> cols, values = combine_repeated_rows([np.array([2, 1, 2]), np.array([0, 5, 0])], None, 8, np.add, 1)
    >>> [c.tolist() for c in cols], values.tolist()
    ([[1, 2], [5, 0]], [1, 2])
    >>> cols, values = combine_repeated_rows([np.array([1, 2])], np.array([3.0, 4.0]), 8, np.minimum, 0.0)
    >>> [c.tolist() for c in cols], values.tolist()
    ([[1, 2]], [3.0, 4.0])
    """
    n = len(columns[0])
    order = None if lexicographically_sorted(columns) else lexicographic_order(columns, span)
    cols = [np.asarray(c) if order is None else np.asarray(c)[order] for c in columns]
    if n < 2:
        return cols, values
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in cols:
        new[1:] |= c[1:] != c[:-1]
    sorted_values = None if values is None else (np.asarray(values) if order is None else np.asarray(values)[order])
    if new.all():
        return cols, sorted_values
    starts = np.flatnonzero(new)
    if sorted_values is None:
        sorted_values = np.full(n, one, dtype=np.asarray(one).dtype)
    return [c[starts] for c in cols], add.reduceat(sorted_values, starts)


def build_trie(columns: Sequence[np.ndarray], span: int, values: Optional[np.ndarray] = None,
               hashable: bool = True) -> Trie:
    """Sort ``columns`` (encoded keys, first attribute first) and build the trie levels.

    ``values`` (aligned with the rows) are reordered along; ``hashable`` is
    passed to every :class:`TrieLevel`.
    """
    k = len(columns)
    if k == 0:
        raise ValueError("a trie needs at least one column")
    n = len(columns[0])
    if n == 1:  # one row (a single change): an entry per level under parent 0, nothing to sort
        one = np.array([0, 1], dtype=np.int64)
        levels = tuple(TrieLevel(np.array([c[0]], dtype=np.int64), one, False, hashable) for c in columns)
        single = None if values is None else np.ascontiguousarray(np.asarray(values)[:1])
        return Trie(levels, single, 1, 24 * k + (0 if single is None else single.nbytes))
    # Rows often arrive sorted (the driver's cleaned edge lists): one pass saves the sort and the gathers.
    order = None if lexicographically_sorted(columns) else lexicographic_order(columns, span)
    cols = [np.ascontiguousarray(c if order is None else c[order], dtype=np.int64) for c in columns]
    if k == 2 and 1 < n <= SMALL_TRIE_ROWS:
        return _two_levels(cols, span, values if values is None or order is None else np.asarray(values)[order],
                           hashable)
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
        levels.append(TrieLevel(comp, offsets, duplicates, hashable))
        parent_of_row = ids
        n_parents = len(comp)
    sorted_values = None if values is None else np.ascontiguousarray(np.asarray(values) if order is None
                                                                     else np.asarray(values)[order])
    nbytes = sum(level.comp.nbytes + level.offsets.nbytes for level in levels)
    nbytes += 0 if sorted_values is None else sorted_values.nbytes
    return Trie(tuple(levels), sorted_values, n, nbytes)


#: Up to this many rows, a two-column trie is built by :func:`_two_levels` (a resident overlay's level is
#: rebuilt per batch: half of :func:`build_trie`'s numpy calls go).
SMALL_TRIE_ROWS = 1 << 16


def _two_levels(cols: Sequence[np.ndarray], span: int, values: Optional[np.ndarray], hashable: bool) -> Trie:
    """:func:`build_trie` of two sorted int64 columns of at least two rows (``values`` in their order).

    The first level's parent is the root, so its entries are the first column's distinct values, and
    the second level's offsets are where each of them starts (rows are sorted), then the row count.

    >>> trie = _two_levels([np.array([1, 1, 4]), np.array([2, 5, 2])], 8, None, True)
    >>> [level.comp.tolist() for level in trie.levels], trie.levels[1].offsets.tolist()
    ([[1, 4], [2, 5, 10]], [0, 2, 3])
    """
    first, second = cols
    n = len(first)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(first[1:], first[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    parents = np.cumsum(new, dtype=np.int64)
    parents -= 1
    new[1:] |= second[1:] != second[:-1]  # now: the row differs from the one before it
    top = TrieLevel(first[starts], np.array([0, len(starts)], dtype=np.int64), False, hashable)
    bottom = TrieLevel(parents * np.int64(span) + second, np.append(starts, n).astype(np.int64, copy=False),
                       not bool(new.all()), hashable)
    values = None if values is None else np.ascontiguousarray(values)
    nbytes = sum(level.comp.nbytes + level.offsets.nbytes for level in (top, bottom))
    return Trie((top, bottom), values, n, nbytes + (0 if values is None else values.nbytes))
