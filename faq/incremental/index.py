"""Resident indexes: a relation kept current as a sorted base plus a small sorted overlay.

A delta rule seeded by |Δ| rows costs |Δ| times the degrees it touches only
if the relations it reads are *already indexed* in its attribute orders
(DESIGN.md §7).  :class:`ResidentRelation` keeps one relation that way,
between batches, in the process that runs the rules:

* the **base**: one row per key (codes of a :class:`~faq.incremental.domain.KeyDomain`
  and the value), immutable, indexed once per :class:`View` (a column order,
  e.g. forward ``(src, dst)`` and reverse ``(dst, src)`` of a graph) as a
  CSR :class:`~faq.joins.csr.Trie`;
* the **overlay**: the changes merged in since, one row per key (the signed
  change in a ring, the improved value in an idempotent semiring), sorted
  and indexed per view the same way, in two levels: the *older* changes and
  the *recent* ones (at most :data:`RECENT_MAX_ROWS`, or :data:`RECENT_BATCHES`
  times the batch for larger batches), so that merging a batch in costs the
  recent level's size, not the whole overlay's;
* a batch, before it is merged, is a third run of the same shape.

A key's value is the ⊕ of its rows in the runs; joins read the runs as one
relation (:class:`~faq.joins.extenders.RunsExtender`), so the *old* view of
a relation (before the batch) is ``[base, overlay]`` and the *new* one
``[base, overlay, batch]``: the exactly-once delta rules need both, and
neither is a copy.  :meth:`ResidentRelation.commit` merges a batch into the
recent level; when that outgrows :data:`RECENT_MAX_ROWS` it is merged into
the older level, and once the overlay holds :data:`COMPACT_FRACTION` of the
base (or :data:`OVERLAY_MAX_ROWS` rows) it is folded into a new base: LSM
style, each merge's cost amortised over the batches that filled its level.

Compaction does not stop the batches
------------------------------------
Folding the overlay into the base costs O(base) -- a merge of the rows and a
trie per view -- and done inside the batch that fills the overlay that batch
took about a hundred times the median (R-MAT 17: 0.7 s against 6 ms).  Three
ways were open: (a) build the new base in the background and swap it in
between batches; (b) tiered merging, a bounded slice per batch; (c) a base
partitioned by key range, rebuilt a partition at a time.  (b) and (c) bound
each batch's share but every batch pays it, and (c) would change the trie
layout every reader walks (a partition's parent numbering shifts every later
one).  (a) keeps the layout, costs the batches nothing while a core is
free, and needs no new invariant for the rules, so it is the one taken
(:mod:`faq.incremental.compaction`):

* :meth:`ResidentRelation.compact_in_background` *freezes* the overlay's two
  levels (they are never written again; their tries are kept) and starts a
  :class:`~faq.incremental.compaction.Compaction` of ``base ⊕ frozen``;
  new batches go to fresh levels, so the runs a rule reads are ``[base,
  frozen levels, older, recent]`` (+ the batch for the new state): the same
  multiset of rows, each key's value still the ⊕ over the runs, and the
  old/new views of the exactly-once rules stay what they were;
* the job runs in a thread (or a forked process; the module notes of
  :mod:`faq.incremental.compaction` weigh the two); each view whose old trie
  exists is *merged* with the overlay's rows in that view's order instead of
  sorted again -- a few copies of the base, no sort, so the job also holds
  the GIL only in short stretches (a sort of every row held it for tens of
  milliseconds at a time, which the batches then waited for);
* the result is swapped in by :meth:`ResidentRelation.commit` once done --
  between two batches, never during one -- or by :meth:`ResidentRelation.settle`,
  which waits (saving to a new directory, closing, tests, and a second
  compaction falling due before the first is done);
* :data:`BACKGROUND_COMPACTION` = False restores the old way (folded in the
  batch, views rebuilt when next read): the benchmarks' baseline.

A failed job (e.g. out of memory) changes nothing: the frozen levels are
folded back into the overlay and :meth:`ResidentRelation.settle` raises
:class:`~faq.errors.CompactionFailedError`.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.index import KeyedRows, ResidentRelation, View
>>> from faq.semirings.numpy_backend import numpy_ops
>>> from faq.semirings import INTEGER
>>> ops = numpy_ops(INTEGER)
>>> edges = ResidentRelation.build("edge", ("src", "dst"),
...     KeyedRows((np.array([0, 1, 0]), np.array([1, 2, 2])), None), ops)
>>> reverse = View((1, 0))
>>> edges.register(reverse)
>>> edges.commit(KeyedRows((np.array([1, 2]), np.array([2, 0])), np.array([-1, 1])))   # delete 1->2, add 2->0
>>> present, values = edges.lookup((np.array([1, 2, 0]), np.array([2, 0, 1])))
>>> present.tolist(), values.tolist()
([False, True, True], [0, 1, 1])
>>> [run.rows for run in edges.runs(reverse)]     # base and overlay, as the rules read them
[3, 2]
>>> edges.overlay_rows, edges.overlay.keys[0].tolist()      # one overlay: older and recent changes merged
(2, [1, 2])
>>> sorted(zip(*[c.tolist() for c in edges.current().keys]))
[(0, 1), (0, 2), (2, 0)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from faq.errors import CompactionFailedError
from faq.incremental.compaction import Compaction
from faq.incremental.domain import SPAN
from faq.joins.csr import Trie, build_trie, lexicographically_sorted
from faq.semirings.numpy_backend import NumpyForm

# The overlay is folded into the base once it holds this fraction of the base's rows ...
COMPACT_FRACTION = 0.10
# ... or this many rows (the overlay's per-batch upkeep is proportional to its size) ...
OVERLAY_MAX_ROWS = 1 << 16
# ... but never below this many (a tiny base would otherwise compact on every batch).
OVERLAY_MIN_ROWS = 1024
# The recent level holds at most this many rows before it is merged into the older one: a batch's
# merge then costs at most this, and the older level's merge happens once per this many changed keys.
RECENT_MAX_ROWS = 1024
# ... or this many batches of the size just merged, so batches larger than the limit (1,000 changed rows of a
# fact table) do not pay the older level's merge every time.
RECENT_BATCHES = 4
# Fold the overlay into the base in a thread, between batches (module notes); False: inside the batch that
# fills it, every view rebuilt when next read (the stop-the-world way, kept as the benchmarks' baseline).
BACKGROUND_COMPACTION = True


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
    order = np.lexsort(tuple(keys[::-1]))
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


def build_run(rows: KeyedRows, view: View, ops: NumpyForm) -> Trie:
    """The trie of ``rows`` in ``view`` (values aligned; None when every value is one)."""
    columns, values = rows.project(view)
    if values is not None and len(values) and np.all(values == ops.one):
        values = None
    return build_trie(columns, SPAN, values, hashable=False)


def find_rows(trie: Trie, columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the keys ``columns`` (trie order) present in ``trie``, and their last-level entries."""
    n = len(columns[0])
    rows = np.arange(n, dtype=np.int64)
    nodes = np.zeros(n, dtype=np.int64)
    for level, column in zip(trie.levels, columns):
        if len(rows) == 0 or level.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        found, entries = level.find(nodes * np.int64(SPAN) + column[rows], positions=True)
        rows, nodes = rows[found], entries
    return rows, nodes


def lookup_runs(runs: Sequence[Trie], columns: Sequence[np.ndarray], ops: NumpyForm) -> tuple[np.ndarray, np.ndarray]:
    """The merged value (⊕ over the runs) at each key of ``columns``; present = not the zero."""
    n = len(columns[0]) if columns else 0
    merged = ops.zeros(n)
    for trie in runs:
        if trie.rows == 0 or n == 0:
            continue
        rows, entries = find_rows(trie, columns)
        values = ops.ones(len(rows)) if trie.values is None else trie.values[entries]
        merged[rows] = ops.add(merged[rows], values)
    return ~ops.is_zero(merged), merged


class ResidentRelation:
    """One relation as a sorted base plus a sorted overlay, indexed per registered view (module notes).

    Parameters
    ----------
    name : str
    columns : tuple of str
        Column names, for messages and ``explain``.
    base : KeyedRows
        One row per key, sorted (:func:`merge_rows` makes it so).
    ops : NumpyForm
        ⊕ (merging rows of one key), ⊗'s one and the zero, in numpy.
    """

    def __init__(self, name: str, columns: Sequence[str], base: KeyedRows, ops: NumpyForm) -> None:
        self.name = name
        self.columns = tuple(columns)
        self.arity = len(self.columns)
        self.ops = ops
        self.base = base
        self.older = empty_rows(self.arity, ops)   # the overlay's two levels (module notes)
        self.recent = empty_rows(self.arity, ops)
        self.views: list[View] = [View(tuple(range(self.arity)))] if self.arity else []
        self._runs: dict[str, dict[View, Trie]] = {"base": {}, "older": {}, "recent": {}}
        # Overlay levels frozen for the compaction in flight (oldest first), and their tries per view.
        self.frozen: list[KeyedRows] = []
        self._frozen_runs: list[dict[View, Trie]] = []
        self._compaction: Optional[Compaction] = None
        self.compaction_error: Optional[CompactionFailedError] = None
        self.compactions = 0

    @classmethod
    def build(cls, name: str, columns: Sequence[str], rows: KeyedRows, ops: NumpyForm) -> "ResidentRelation":
        """A relation from any rows (merged per key, zeros dropped)."""
        return cls(name, columns, merge_rows(rows.keys, rows.values, ops), ops)

    @classmethod
    def of_runs(cls, name: str, columns: Sequence[str], base: Mapping[View, Trie], overlay: KeyedRows,
                ops: NumpyForm) -> "ResidentRelation":
        """A relation read through base tries built elsewhere (an executor's copy) and an overlay.

        It answers :meth:`runs` and :meth:`lookup` for the views in ``base``
        (the first must be the identity view); it holds no base rows, so it
        is not committed to or compacted (the driver does that).
        """
        relation = cls(name, columns, empty_rows(len(columns), ops), ops)
        relation.views = list(base)
        relation._runs["base"] = dict(base)
        relation.older = overlay
        return relation

    def base_tries(self) -> dict[View, Trie]:
        """The base's trie of every registered view (built if needed): what an executor receives."""
        return {view: self.run(view, "base") for view in self.views}

    def release_base(self, rows: int) -> None:
        """Drop the base's rows and tries from this process (another holds them); remember their number."""
        self.base = empty_rows(self.arity, self.ops)
        self._runs["base"] = {}
        self._released_rows = rows

    # -- views ----------------------------------------------------------------------

    def register(self, view: View) -> None:
        """Keep an index in ``view`` (built now, and after a compaction when first read)."""
        if view not in self.views:
            self.views.append(view)
        self.run(view, "base")

    def run(self, view: View, part: str) -> Trie:
        """The trie of a part (``"base"``, ``"older"``, ``"recent"``) in ``view``, built on first use."""
        cache = self._runs[part]
        trie = cache.get(view)
        if trie is None:
            trie = cache[view] = build_run(getattr(self, part), view, self.ops)
        return trie

    def _frozen_run(self, k: int, view: View) -> Trie:
        cache = self._frozen_runs[k]
        trie = cache.get(view)
        if trie is None:
            trie = cache[view] = build_run(self.frozen[k], view, self.ops)
        return trie

    def runs(self, view: View, batch: Optional[Trie] = None) -> list[Trie]:
        """What a rule reads: base and overlay (the old state), plus ``batch`` (the new one).

        While a compaction is in flight the overlay is its frozen levels, then the levels since.
        """
        out = [self.run(view, "base")]
        out += [self._frozen_run(k, view) for k in range(len(self.frozen))]
        out += [self.run(view, part) for part in ("older", "recent") if len(getattr(self, part))]
        if batch is not None and batch.rows:
            out.append(batch)
        return out

    # -- reading --------------------------------------------------------------------

    @property
    def base_rows(self) -> int:
        return getattr(self, "_released_rows", None) or len(self.base)

    @property
    def overlay(self) -> KeyedRows:
        """The changes since the base, one row per key (every level merged: O(overlay), for saving)."""
        levels = [rows for rows in (*self.frozen, self.older, self.recent) if len(rows)]
        if not levels:
            return self.older
        merged = levels[0]
        for rows in levels[1:]:
            merged = self._combined(merged, rows)
        return merged

    @property
    def overlay_rows(self) -> int:
        """Rows in the overlay's levels, frozen ones included (a key changed in two counts twice)."""
        return sum(len(rows) for rows in self.frozen) + len(self.older) + len(self.recent)

    @property
    def nbytes(self) -> int:
        """Bytes of the rows and of every built trie."""
        tries = [t for cache in (*self._runs.values(), *self._frozen_runs) for t in cache.values()]
        rows = [self.base, *self.frozen, self.older, self.recent]
        return sum(r.nbytes for r in rows) + sum(t.nbytes for t in tries)

    def lookup(self, keys: Sequence[np.ndarray], batch: Optional[KeyedRows] = None) -> tuple[np.ndarray, np.ndarray]:
        """Current (merged) values at ``keys`` (relation column order): (present mask, values).

        With ``batch``, the value after it is merged in.
        """
        if self.arity == 0:
            rows = [self.base, *self.frozen, self.older, self.recent] + ([batch] if batch is not None else [])
            values = [r.values_or_ones(self.ops) for r in rows if len(r)]
            total = self.ops.sum(np.concatenate(values)) if values else self.ops.zeros(1)[0]
            total = np.asarray(total, dtype=self.ops.dtype)[None]
            return ~self.ops.is_zero(total), total
        identity = self.views[0]
        extra = None if batch is None or not len(batch) else build_run(batch, identity, self.ops)
        return lookup_runs(self.runs(identity, extra), list(keys), self.ops)

    def current(self) -> KeyedRows:
        """Every row with a non-zero value, one per key (an O(base) merge: for output and saving)."""
        if not self.overlay_rows:
            return self.base
        return self._combined(self.base, self.overlay)

    def after(self, batch: KeyedRows) -> KeyedRows:
        """The current rows with ``batch`` merged in (one row per key; nothing changes here)."""
        current = self.current()
        if not len(batch):
            return current
        keys = [np.concatenate([c, b]) for c, b in zip(current.keys, batch.keys)]
        values = np.concatenate([current.values_or_ones(self.ops), batch.values_or_ones(self.ops)])
        return merge_rows(keys, values, self.ops)

    def _combined(self, first: KeyedRows, second: KeyedRows) -> KeyedRows:
        return combined(first, second, self.ops)

    # -- changing -------------------------------------------------------------------

    @property
    def released(self) -> bool:
        """True when the base lives in another process (executors): this one holds only the overlay."""
        return getattr(self, "_released_rows", None) is not None

    def commit(self, batch: KeyedRows, compact: bool = True) -> None:
        """Merge a batch (one row per key, as :func:`merge_rows` gives) into the overlay.

        A compaction that finished since the last batch is swapped in first
        (between two batches, never during one).  The overlay is then folded
        into the base if it outgrew its limit -- in the background unless
        :data:`BACKGROUND_COMPACTION` is False -- unless ``compact`` is False
        (the owner of a released base does it).
        """
        if self._compaction is not None and self._compaction.done():
            try:
                self._swap()
            except CompactionFailedError as error:  # the rows are intact; settle() reports it
                self.compaction_error = error
        if not len(batch):
            return
        if self.arity == 0:
            self.older = merge_rows((), np.concatenate([self.older.values_or_ones(self.ops),
                                                        batch.values_or_ones(self.ops)]), self.ops,
                                    drop_zeros=False)
            return
        # A ring's overlay keeps no zero rows (they change nothing); an idempotent one keeps none either.
        self.recent = self._combined(self.recent, batch)
        self._runs["recent"] = {}
        if len(self.recent) > max(RECENT_MAX_ROWS, RECENT_BATCHES * len(batch)):
            self.older, self.recent = self._combined(self.older, self.recent), empty_rows(self.arity, self.ops)
            self._runs["older"], self._runs["recent"] = {}, {}
        if compact and not self.released and self.needs_compaction():
            if BACKGROUND_COMPACTION:
                self.compact_in_background()
            else:
                self.compact()

    def needs_compaction(self) -> bool:
        """Whether the overlay's levels since the last freeze outgrew their limit (module notes)."""
        limit = min(max(COMPACT_FRACTION * self.base_rows, OVERLAY_MIN_ROWS), OVERLAY_MAX_ROWS)
        return len(self.older) + len(self.recent) > limit

    def compact(self) -> None:
        """Fold the overlay into a new base now (each registered view rebuilt when next read)."""
        self.replace(self.current())

    def compact_in_background(self) -> None:
        """Freeze the overlay's levels and fold them into a new base in a thread (:mod:`faq.incremental.compaction`).

        Until the result is swapped in (:meth:`commit` after it is done, or
        :meth:`settle`) the relation reads ``[base, frozen levels, levels
        since]``: the same rows.  A compaction still in flight is finished
        first (the second one folds its result).
        """
        if self._compaction is not None:
            try:
                self._swap()
            except CompactionFailedError as error:  # a commit must not fail for it: settle() reports it
                self.compaction_error = error
        levels = [("older", self.older), ("recent", self.recent)]
        self.frozen = [rows for _, rows in levels if len(rows)]
        self._frozen_runs = [self._runs[part] for part, rows in levels if len(rows)]
        self.older = self.recent = empty_rows(self.arity, self.ops)
        self._runs["older"], self._runs["recent"] = {}, {}
        # The views read so far get their new tries now; any other is built when first read, as before.
        views = [view for view in self.views if view in self._runs["base"]]
        self._compaction = Compaction(self.name, self.base, self.frozen, views, self.ops, dict(self._runs["base"]))

    @property
    def compacting(self) -> bool:
        """Whether a compaction is in flight (its result not swapped in yet)."""
        return self._compaction is not None

    def settle(self) -> None:
        """Wait for the compaction in flight, if any, and swap its result in (saving, closing, tests).

        Raises
        ------
        CompactionFailedError
            The compaction failed (now or in the background since the last
            settle): the relation holds every row still, its overlay folded
            back into one level, and the next compaction starts afresh.
        """
        error, self.compaction_error = self.compaction_error, None
        if self._compaction is not None:
            self._swap()
        if error is not None:
            raise error

    def _swap(self) -> None:
        """Make the finished compaction's result the base; the levels frozen for it go."""
        job, self._compaction = self._compaction, None
        try:
            rows, tries = job.result()
        except CompactionFailedError:
            # The frozen levels stay readable: fold them back into the overlay's older level.
            self.older = self.overlay
            self.recent = empty_rows(self.arity, self.ops)
            self.frozen, self._frozen_runs = [], []
            self._runs["older"], self._runs["recent"] = {}, {}
            raise
        self.base = rows
        self._runs["base"] = dict(tries)
        self.frozen, self._frozen_runs = [], []
        self.compactions += 1

    def replace(self, rows: KeyedRows) -> None:
        """Make ``rows`` (one row per key) the base, with an empty overlay.

        Each view's index is rebuilt when a rule first reads it: a relation
        whose views no rule of the coming batches reads (a fact table whose
        dimensions do not change) does not pay for sorting them again.  A
        compaction in flight is waited for and dropped (``rows`` supersede it).
        """
        if self._compaction is not None:
            job, self._compaction = self._compaction, None
            try:
                job.result()
            except Exception:  # superseded anyway: its inputs are part of ``rows``
                pass
        self._released_rows = None
        self.base = rows
        self.older = self.recent = empty_rows(self.arity, self.ops)
        self.frozen, self._frozen_runs = [], []
        self._runs = {"base": {}, "older": {}, "recent": {}}
        self.compactions += 1

    def assign(self, batch: KeyedRows) -> None:
        """Set the keys of ``batch`` to its values (the zero removes a key): for recomputation."""
        self.replace(assigned(self.current(), batch, self.ops))


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
        return _merged_into(first, second, ops)
    keys = [np.concatenate([a, b]) for a, b in zip(first.keys, second.keys)]
    values = np.concatenate([first.values_or_ones(ops), second.values_or_ones(ops)])
    return merge_rows(keys, values, ops)


def _merged_into(first: KeyedRows, second: KeyedRows, ops: NumpyForm) -> KeyedRows:
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
    rank_first = np.zeros(n, dtype=np.int64)
    rank_keys = np.zeros(m, dtype=np.int64)
    position = np.zeros(m, dtype=np.int64)
    alive = np.ones(m, dtype=bool)  # rows whose prefix so far is in the run
    span = np.int64(SPAN)
    for run_column, column in zip(sorted_keys, keys):
        composite = rank_first * span + run_column
        wanted = rank_keys * span + np.asarray(column, dtype=np.int64)
        left = np.searchsorted(composite, wanted[alive], side="left")
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
