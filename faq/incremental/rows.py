"""Keyed rows and their runs: the values a resident index is made of, and the merges between them.

A relation's rows, one per key, as dense key codes and values
(:class:`KeyedRows`); the column order an index keeps them in (:class:`View`)
and a CSR trie of them in that order (:func:`build_run`); lookups across
several runs whose values ⊕-combine per key (:func:`lookup_runs`); and the
merges that fold one run into another (:func:`merge_rows`, :func:`combined`,
:func:`assigned`).  :mod:`faq.incremental.index` keeps a relation current
with them and :mod:`faq.incremental.compaction` folds its overlay into a
new base with them; neither is needed to read this module.

Examples
--------
>>> import numpy as np
>>> from faq.semirings import INTEGER
>>> from faq.semirings.numpy_backend import numpy_ops
>>> ops = numpy_ops(INTEGER)
>>> a = merge_rows([np.array([0, 1]), np.array([1, 2])], None, ops)
>>> b = merge_rows([np.array([1, 2]), np.array([2, 0])], np.array([-1, 1]), ops)
>>> both = combined(a, b, ops)                      # 1->2 cancels
>>> list(zip(*[k.tolist() for k in both.keys])), both.values.tolist()
([(0, 1), (2, 0)], [1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.joins.csr import Trie, TrieLevel, build_trie, lexicographic_order, lexicographically_sorted, sorted_search
from faq.semirings.numpy_backend import NumpyForm

__all__ = ["View", "KeyedRows", "empty_rows", "merge_rows", "build_run", "find_rows", "lookup_runs", "combined",
           "merge_into", "assigned", "last_operations"]

@dataclass(frozen=True)
class View:
    """How an index holds a relation: the relation's columns ``order`` (positions), in trie order.

    ``equal`` lists groups of columns that must hold the same value (an atom
    with a repeated variable, ``f(x, x)``, reads only the diagonal); the
    first column of a group is the one ``order`` names.
    """

    order: tuple[int, ...]
    equal: tuple[tuple[int, ...], ...] = ()

    def describe(self, columns: Sequence[str]) -> str:
        """The view in the relation's column names, e.g. ``(dst, src)``."""
        text = "(" + ", ".join(columns[i] for i in self.order) + ")"
        if self.equal:
            text += " where " + ", ".join(" = ".join(columns[i] for i in g) for g in self.equal)
        return text


@dataclass(frozen=True)
class KeyedRows:
    """Rows of a relation: one code array per column (relation order) and their values (None: all one)."""

    keys: tuple[np.ndarray, ...]
    values: Optional[np.ndarray]

    def __len__(self) -> int:
        if self.keys:
            return len(self.keys[0])
        return 0 if self.values is None else len(self.values)

    @property
    def nbytes(self) -> int:
        return int(sum(k.nbytes for k in self.keys) + (0 if self.values is None else self.values.nbytes))

    def values_or_ones(self, ops: NumpyForm) -> np.ndarray:
        if self.values is not None:
            return self.values
        return ops.ones(len(self))

    def take(self, rows: np.ndarray) -> "KeyedRows":
        return KeyedRows(tuple(k[rows] for k in self.keys), None if self.values is None else self.values[rows])

    def project(self, view: View) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
        """The rows of ``view``: its columns (equal groups enforced) and their values."""
        rows = self
        if view.equal:
            mask = np.ones(len(self), dtype=bool)
            for group in view.equal:
                for other in group[1:]:
                    mask &= self.keys[group[0]] == self.keys[other]
            rows = self.take(np.flatnonzero(mask))
        return [rows.keys[i] for i in view.order], rows.values


def empty_rows(arity: int, ops: NumpyForm) -> KeyedRows:
    return KeyedRows(tuple(np.zeros(0, dtype=np.int64) for _ in range(arity)), ops.zeros(0))


def merge_rows(keys: Sequence[np.ndarray], values: Optional[np.ndarray], ops: NumpyForm,
               drop_zeros: bool = True) -> KeyedRows:
    """One row per key (sorted), values ⊕-combined; rows whose value is the zero dropped unless told."""
    keys = [np.asarray(k, dtype=np.int64) for k in keys]
    n = len(keys[0]) if keys else (0 if values is None else len(values))
    if not keys:  # a scalar relation: at most one row
        total = ops.sum(values)[None] if values is not None and len(values) else None
        if total is None or (drop_zeros and ops.is_zero(total)[0]):
            return KeyedRows((), ops.zeros(0))
        return KeyedRows((), np.asarray(total, dtype=ops.dtype))
    if n == 0:
        return KeyedRows(tuple(keys), None if values is None else np.asarray(values, dtype=ops.dtype))
    if n == 1:  # a single change: one row, sorted already (copies, as the gathers below make)
        if values is None:
            return KeyedRows(tuple(k.copy() for k in keys), None)
        values = np.array(values, dtype=ops.dtype)
        if drop_zeros and ops.is_zero(values)[0]:
            return KeyedRows(tuple(k[:0].copy() for k in keys), values[:0])
        return KeyedRows(tuple(k.copy() for k in keys), values)
    order = lexicographic_order(keys, SPAN)  # two key columns: one packed int64 sort
    sorted_keys = [k[order] for k in keys]
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for k in sorted_keys:
        new[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(new)
    out_keys = tuple(k[starts] for k in sorted_keys)
    if values is None:
        if len(starts) == n:
            return KeyedRows(out_keys, None)
        values = ops.ones(n)
    merged = ops.segment_sum(np.asarray(values, dtype=ops.dtype)[order], starts)
    rows = KeyedRows(out_keys, merged)
    if drop_zeros:
        live = ~ops.is_zero(merged)
        if not live.all():
            rows = rows.take(np.flatnonzero(live))
    return rows


#: Up to this many rows, a two-column run is merged (:func:`combined`) and indexed (:func:`build_run`) in
#: one compiled call each (:func:`_pair_kernels`): a resident relation's recent level is merged with and
#: indexed for every batch, and numpy's dozen calls a step cost more than the rows do.
SMALL_RUN_ROWS = 1 << 13


def _merge_pairs(a0, a1, av, b0, b1, bv, zero, o0, o1, ov):  # pragma: no cover - compiled (numba)
    """Two runs of (key, key) rows, each sorted with one row a key, as one, written to ``o0``, ``o1``,
    ``ov`` (room for both; made by the caller: arrays a compiled function returns are boxed at a cost):
    values added, zeros dropped.  Returns the rows written."""
    n, m = len(a0), len(b0)
    i = j = k = 0
    while i < n or j < m:
        if j >= m or (i < n and (a0[i] < b0[j] or (a0[i] == b0[j] and a1[i] < b1[j]))):
            o0[k], o1[k], ov[k] = a0[i], a1[i], av[i]
            i += 1
            k += 1
        elif i >= n or b0[j] < a0[i] or (b0[j] == a0[i] and b1[j] < a1[i]):
            o0[k], o1[k], ov[k] = b0[j], b1[j], bv[j]
            j += 1
            k += 1
        else:
            v = av[i] + bv[j]
            if v != zero:
                o0[k], o1[k], ov[k] = a0[i], a1[i], v
                k += 1
            i += 1
            j += 1
    return k


def _pair_trie(first, second, values, one, span, top, bottom, offsets, sorted_values):  # pragma: no cover
    """A two-level trie of (key, key) rows, compiled (numba), written to the caller's arrays of ``n`` (and
    ``offsets``, ``n + 1``) entries: the first level's entries in ``top``, the second level's entries
    and offsets in ``bottom`` and ``offsets``, the values in trie order.  Returns (the first level's
    entries, whether every value is ``one``, whether a row repeats)."""
    n = len(first)
    packed = first * span + second
    ordered = True
    for i in range(1, n):
        if packed[i] < packed[i - 1]:
            ordered = False
            break
    order = np.arange(n) if ordered else np.argsort(packed)
    parents = 0
    for i in range(n):
        if i == 0 or first[order[i]] != first[order[i - 1]]:
            parents += 1
    all_one = True
    repeated = False
    p = -1
    for i in range(n):
        r = order[i]
        if i == 0 or first[r] != first[order[i - 1]]:
            p += 1
            top[p] = first[r]
            offsets[p] = i
        bottom[i] = p * span + second[r]
        sorted_values[i] = values[r]
        all_one = all_one and values[r] == one
        repeated = repeated or (i > 0 and bottom[i] == bottom[i - 1])
    offsets[parents] = n
    return parents, all_one, repeated


def _pair_kernels() -> tuple:
    """(:func:`_merge_pairs`, :func:`_pair_trie`) compiled, once a process (numba is imported on first use)."""
    from faq.compiled import kernels

    return kernels(_merge_pairs, _pair_trie)


def _pairs_fit(ops: NumpyForm, *runs: KeyedRows) -> bool:
    """Whether runs of rows take the compiled two-column path: two key columns, plain numbers added
    with numpy's +, at most :data:`SMALL_RUN_ROWS` rows."""
    return (ops.add is np.add and not ops.value_shape and np.dtype(ops.dtype).kind in "if"
            and all(len(r.keys) == 2 and len(r) <= SMALL_RUN_ROWS for r in runs))


def build_run(rows: KeyedRows, view: View, ops: NumpyForm) -> Trie:
    """The trie of ``rows`` in ``view`` (values aligned; None when every value is one)."""
    if len(rows) > 1 and not view.equal and len(view.order) == 2 and _pairs_fit(ops, rows):
        first, second = (np.asarray(rows.keys[i], dtype=np.int64) for i in view.order)
        values = rows.values_or_ones(ops)
        n = len(first)
        top, bottom = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        offsets, sorted_values = np.empty(n + 1, dtype=np.int64), np.empty(n, dtype=ops.dtype)
        parents, all_one, repeated = _pair_kernels()[1](
            first, second, np.asarray(values, dtype=ops.dtype), np.asarray(ops.one, dtype=ops.dtype)[()],
            np.int64(SPAN), top, bottom, offsets, sorted_values)
        top, offsets = top[:parents].copy(), offsets[:parents + 1].copy()
        levels = (TrieLevel(top, np.array([0, parents], dtype=np.int64), False, False),
                  TrieLevel(bottom, offsets, repeated, False))
        sorted_values = None if all_one else sorted_values
        nbytes = top.nbytes * 2 + bottom.nbytes + offsets.nbytes + (0 if all_one else sorted_values.nbytes)
        return Trie(levels, sorted_values, len(bottom), nbytes)
    columns, values = rows.project(view)
    if values is not None and len(values) and np.all(values == ops.one):
        values = None
    return build_trie(columns, SPAN, values, hashable=False)


def find_rows(trie: Trie, columns: Sequence[np.ndarray],
              first: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the keys ``columns`` (trie order) present in ``trie``, and their last-level entries.

    ``first``, if given, is the first level's direct index (per key code its
    position, -1 where absent: :func:`faq.incremental.rule_kernel.first_positions`),
    read instead of searching that level.
    """
    n = len(columns[0])
    rows = np.arange(n, dtype=np.int64)
    nodes = np.zeros(n, dtype=np.int64)
    levels, columns = trie.levels, list(columns)
    if first is not None:
        keys = np.asarray(columns[0], dtype=np.int64)
        at = np.full(n, -1, dtype=np.int64)
        inside = np.flatnonzero(keys < len(first))
        at[inside] = first[keys[inside]]
        rows = np.flatnonzero(at >= 0)
        nodes = at[rows]
        levels, columns = levels[1:], columns[1:]
    for level, column in zip(levels, columns):
        if len(rows) == 0 or level.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        found, entries = level.find(nodes * np.int64(SPAN) + column[rows], positions=True)
        rows, nodes = rows[found], entries
    return rows, nodes


def lookup_runs(runs: Sequence[Trie], columns: Sequence[np.ndarray], ops: NumpyForm) -> tuple[np.ndarray, np.ndarray]:
    """The merged value (⊕ over the runs) at each key of ``columns``; present = not the zero."""
    n = len(columns[0]) if columns else 0
    if 0 < n <= FEW_KEYS:
        return _lookup_few(runs, columns, ops)
    merged = ops.zeros(n)
    for trie in runs:
        if trie.rows == 0 or n == 0:
            continue
        rows, entries = find_rows(trie, columns)
        values = ops.ones(len(rows)) if trie.values is None else trie.values[entries]
        merged[rows] = ops.add(merged[rows], values)
    return ~ops.is_zero(merged), merged


#: Most keys :func:`lookup_runs` looks up one at a time (a search a level with Python ints): a single
#: change's deletion is checked for a few µs a run, where the vectorized path's calls cost tens.
FEW_KEYS = 4


def _lookup_few(runs: Sequence[Trie], columns: Sequence[np.ndarray], ops: NumpyForm) -> tuple[np.ndarray, np.ndarray]:
    """:func:`lookup_runs` of a few keys, key by key (the same searches: each level's ``parent * span + key``)."""
    keys = [np.asarray(c, dtype=np.int64).tolist() for c in columns]
    n = len(keys[0])
    merged = ops.zeros(n)
    span = int(SPAN)
    for trie in runs:
        if trie.rows == 0:
            continue
        for row in range(n):
            node = 0
            for level, column in zip(trie.levels, keys):
                comp = level.comp
                wanted = node * span + column[row]
                at = int(comp.searchsorted(wanted))
                if at >= len(comp) or comp[at] != wanted:
                    node = -1
                    break
                node = at
            if node >= 0:
                value = ops.ones(1)[0] if trie.values is None else trie.values[node]
                merged[row] = ops.add(merged[row], value)
    return ~ops.is_zero(merged), merged


def combined(first: KeyedRows, second: KeyedRows, ops: NumpyForm) -> KeyedRows:
    """Two runs as one: one row per key, values ⊕-combined, zeros dropped.

    When both are runs (sorted, one row per key, as :func:`merge_rows` makes
    them) -- an overlay folded into its base, a batch into the overlay --
    ``second`` is merged in place of a re-sort: its keys are found in
    ``first`` by binary search, matched
    values ⊕-added, new rows inserted where they sort.  That keeps a
    compaction at a few copies of the base instead of a sort and a ``reduceat``
    of every row (costly for an array ring's ``w`` numbers per row).

    >>> from faq.semirings import INTEGER
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> ops = numpy_ops(INTEGER)
    >>> base = merge_rows([np.arange(0, 20, 2)], np.ones(10, dtype=np.int64), ops)
    >>> rows = combined(base, merge_rows([np.array([3, 4, 6])], np.array([5, -1, 2]), ops), ops)
    >>> rows.keys[0].tolist(), rows.values.tolist()                  # key 4 cancelled, 3 inserted
    ([0, 2, 3, 6, 8, 10, 12, 14, 16, 18], [1, 1, 5, 3, 1, 1, 1, 1, 1, 1])
    """
    if first.keys and len(first) and len(second) and lexicographically_sorted(second.keys, strictly=True):
        if _pairs_fit(ops, first, second):  # a recent level and a batch: one compiled merge
            dtype, size = np.dtype(ops.dtype), len(first) + len(second)
            keys0, keys1, values = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, dtype)
            rows = _pair_kernels()[0](
                *(np.asarray(k, dtype=np.int64) for k in first.keys), np.asarray(first.values_or_ones(ops), dtype),
                *(np.asarray(k, dtype=np.int64) for k in second.keys), np.asarray(second.values_or_ones(ops), dtype),
                np.asarray(ops.zero, dtype=dtype)[()], keys0, keys1, values)
            if rows < size:  # cancelled keys: the rows kept, in arrays of their own size
                keys0, keys1, values = keys0[:rows].copy(), keys1[:rows].copy(), values[:rows].copy()
            return KeyedRows((keys0, keys1), values)
        return merge_into(first, second, ops)
    keys = [np.concatenate([a, b]) for a, b in zip(first.keys, second.keys)]
    values = np.concatenate([first.values_or_ones(ops), second.values_or_ones(ops)])
    return merge_rows(keys, values, ops)


def merge_into(first: KeyedRows, second: KeyedRows, ops: NumpyForm) -> KeyedRows:
    """:func:`combined` of a small sorted run ``second`` into a large one ``first``, without sorting."""
    position, found = _search(first.keys, second.keys)
    values = first.values_or_ones(ops)
    added = second.values_or_ones(ops)
    hit = np.flatnonzero(found)
    at = position[hit]  # non-decreasing: second is sorted
    updated = ops.add(values[at], added[hit])
    cancelled = ops.is_zero(updated)
    gone, at, updated = at[cancelled], at[~cancelled], updated[~cancelled]  # cancelled keys are dropped
    keys = list(first.keys)
    # One new array for the values (a base's (rows, w) values are the costly copy): deletion and
    # insertion each make one, and without either a copy is made; the updated rows are written last.
    if len(gone):
        keys = [np.delete(k, gone) for k in keys]
        values = np.delete(values, gone, axis=0)
        at = at - np.searchsorted(gone, at)
    new = np.flatnonzero(~found)
    if len(new):
        where = position[new] - np.searchsorted(gone, position[new])  # positions after the deletions
        keys = [np.insert(k, where, s[new]) for k, s in zip(keys, second.keys)]
        values = np.insert(values, where, added[new], axis=0)
        at = at + np.searchsorted(where, at, side="right")
    elif not len(gone):
        values = values.copy()
    values[at] = updated
    return KeyedRows(tuple(keys), values)


def _search(sorted_keys: Sequence[np.ndarray], keys: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``keys``, where it sorts in the run ``sorted_keys`` and whether it is there.

    Column by column: the prefix so far is the dense rank of the run's
    distinct prefixes, so ``rank · SPAN + code`` stays sorted and fits int64
    (ranks and codes are below ``2^31``).  A row whose prefix is missing keeps
    the position where that prefix would sort.
    """
    n, m = len(sorted_keys[0]), len(keys[0])
    span = np.int64(SPAN)
    if len(sorted_keys) == 2 and n:  # (code, code) packs into one sorted int64: one search, no ranks
        composite = sorted_keys[0].astype(np.int64, copy=False) * span + sorted_keys[1]
        wanted = np.asarray(keys[0], dtype=np.int64) * span + np.asarray(keys[1], dtype=np.int64)
        position = np.asarray(sorted_search(composite, wanted), dtype=np.int64)
        inside = np.flatnonzero(position < n)
        alive = np.zeros(m, dtype=bool)
        alive[inside] = composite[position[inside]] == wanted[inside]
        return position, alive
    rank_first = np.zeros(n, dtype=np.int64)
    rank_keys = np.zeros(m, dtype=np.int64)
    position = np.zeros(m, dtype=np.int64)
    alive = np.ones(m, dtype=bool)  # rows whose prefix so far is in the run
    for run_column, column in zip(sorted_keys, keys):
        composite = rank_first * span + run_column
        wanted = rank_keys * span + np.asarray(column, dtype=np.int64)
        left = sorted_search(composite, wanted[alive], side="left")
        rows = np.flatnonzero(alive)
        position[rows] = left
        inside = left < n
        hit = np.zeros(len(rows), dtype=bool)
        hit[inside] = composite[left[inside]] == wanted[rows[inside]]
        alive[rows[~hit]] = False
        changed = np.empty(n, dtype=bool)
        if n:
            changed[0] = True
            np.not_equal(composite[1:], composite[:-1], out=changed[1:])
        rank_first = np.cumsum(changed, dtype=np.int64) - 1
        rank_keys[rows[hit]] = rank_first[left[hit]]
    return position, alive


def assigned(rows: KeyedRows, batch: KeyedRows, ops: NumpyForm) -> KeyedRows:
    """``rows`` where ``batch``'s keys take its values (the zero removes a key); one row per key."""
    if not rows.keys and not batch.keys:  # a scalar
        value = batch.values_or_ones(ops)[-1:] if len(batch) else rows.values_or_ones(ops)
        return merge_rows((), value, ops)
    if len(batch) == 0:
        return rows
    trie = build_trie(list(batch.keys), SPAN, None, hashable=False)
    hit, _ = find_rows(trie, list(rows.keys))
    mask = np.ones(len(rows), dtype=bool)
    mask[hit] = False
    kept = rows.take(np.flatnonzero(mask))
    keys = [np.concatenate([k, b]) for k, b in zip(kept.keys, batch.keys)]
    values = np.concatenate([kept.values_or_ones(ops), batch.values_or_ones(ops)])
    return merge_rows(keys, values, ops)


def last_operations(first: np.ndarray, second: np.ndarray, diff: np.ndarray,
                    seq: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[tuple]]:
    """The last operation on each pair ``(first[i], second[i])`` of a batch of change rows.

    With ``seq`` the operation of the largest ``seq`` wins; without it, every
    operation on a pair must agree.  Returns the pairs (sorted) with their
    ``diff``, one row a pair, and the first pair whose operations disagree
    without ``seq`` (the caller says so), else None.

    >>> [a.tolist() for a in last_operations(np.array([2, 1, 2]), np.array([3, 1, 3]), np.array([1, 1, 1]))[:3]]
    [[1, 2], [1, 3], [1, 1]]
    >>> last_operations(np.array([2, 2]), np.array([3, 3]), np.array([1, -1]))[3]
    (2, 3)
    >>> last_operations(np.array([2, 2]), np.array([3, 3]), np.array([1, -1]), seq=np.array([5, 4]))[2].tolist()
    [1]
    """
    if len(first) == 0:
        return first, second, diff, None
    order = np.lexsort((seq if seq is not None else diff, second, first))
    first, second, diff = first[order], second[order], diff[order]
    last = np.ones(len(first), dtype=bool)
    last[:-1] = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    clash = None
    if seq is None:  # sorted by diff within a pair: its first and last operations differ on a clash
        opening = np.ones(len(first), dtype=bool)
        opening[1:] = last[:-1]
        disagree = np.flatnonzero(diff[opening] != diff[last])
        if len(disagree):
            at = np.flatnonzero(opening)[disagree[0]]
            clash = (first[at].item(), second[at].item())
    return first[last], second[last], diff[last], clash
