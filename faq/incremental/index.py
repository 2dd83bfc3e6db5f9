"""Resident indexes: a relation kept current as a sorted base plus a small sorted overlay.

A delta rule seeded by |Δ| rows costs |Δ| times the degrees it touches only
if the relations it reads are *already indexed* in its attribute orders
(docs/design.md, "Resident indexes").  :class:`ResidentRelation` keeps one relation that way,
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
* a batch, before it is merged, is a third run of the same shape -- or, for
  the delta rules, already merged into the recent level
  (:meth:`ResidentRelation.new_runs`): the level the commit then keeps, so
  its tries are built once, for the batch's new state and the next batch's old one.

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
* a relation's ``compaction`` (the session's ``spark.faq.compaction``, which
  :class:`~faq.incremental.state.ResidentState` gives each relation it holds)
  says where the fold runs; ``"batch"`` restores the old way (folded in the
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

import threading
from typing import Mapping, Optional, Sequence

import numpy as np

from faq.errors import CompactionFailedError
from faq.incremental.compaction import DEFAULT_MODE, Compaction, warm_tries
from faq.incremental.rows import (  # re-exported: the index's callers name them from here
    KeyedRows,
    View,
    assigned,
    build_run,
    combined,
    empty_rows,
    find_rows,
    lookup_runs,
    merge_into,
    merge_rows,
)
from faq.incremental.level_merge import fits, merged_level
from faq.joins.csr import Trie, lexicographically_sorted
from faq.semirings.numpy_backend import NumpyForm

__all__ = ["ResidentRelation", "View", "KeyedRows", "empty_rows", "merge_rows", "build_run", "find_rows",
           "lookup_runs", "combined", "merge_into", "assigned"]

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
#: A base trie of at least this many rows gets its levels hashed in a background thread when built
#: (:func:`faq.joins.csr.warm_hash`): a batch of thousands of changes then probes hashes, 4-7x
#: faster than binary searches into a large level; smaller bases are searched as fast.
WARM_ROWS = 1 << 14




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

    Attributes
    ----------
    compaction : str
        Where the overlay is folded into the base (:mod:`faq.incremental.compaction`):
        "thread", "process", "inline" or "batch"; the holding
        :class:`~faq.incremental.state.ResidentState` sets it from the session.
    """

    def __init__(self, name: str, columns: Sequence[str], base: KeyedRows, ops: NumpyForm) -> None:
        self.compaction = DEFAULT_MODE
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
        self._nonnegative: Optional[bool] = None  # no value below zero (:meth:`nonnegative`), once known
        # The recent level a batch makes (:meth:`new_runs`): (batch, recent level before, after, its tries).
        self._pending: Optional[tuple[KeyedRows, KeyedRows, KeyedRows, dict[View, Trie]]] = None

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
            if part == "base" and trie.rows >= WARM_ROWS:  # hashed beside the batches, as a compaction's are
                threading.Thread(target=warm_tries, args=([trie],), name=f"faq-hash-{self.name}", daemon=True).start()
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

    def new_runs(self, view: View, batch: KeyedRows) -> list[Trie]:
        """What a rule reading the state after ``batch`` reads: :meth:`runs` with the batch merged into
        the recent level -- the level :meth:`commit` then keeps, tries and all.

        The same rows as ``runs(view, build_run(batch, view, ops))`` (a key's value is the ⊕ of its rows
        in the runs), one run fewer, and no trie of the batch is built: the level's tries are built
        once, for this batch's new state and the next batch's old one.
        """
        pending = self._pending
        if pending is None or pending[0] is not batch or pending[1] is not self.recent:
            pending = self._pending = self._merged(batch)
        out = [self.run(view, "base")]
        out += [self._frozen_run(k, view) for k in range(len(self.frozen))]
        if len(self.older):
            out.append(self.run(view, "older"))
        rows, tries = pending[2], pending[3]
        if len(rows):
            trie = tries.get(view)
            if trie is None:
                trie = tries[view] = build_run(rows, view, self.ops)
            out.append(trie)
        return out

    def _merged(self, batch: KeyedRows) -> tuple[KeyedRows, KeyedRows, KeyedRows, dict[View, Trie]]:
        """The pending level of :meth:`new_runs`: (batch, recent level, the two merged, its tries by view).

        Two-column runs of plain numbers merge the batch into each view's trie of the recent level in
        one linear pass (:mod:`faq.incremental.level_merge`: no sort); others merge the rows, and each
        view's trie is built when first read.
        """
        views = [view for view in self.views if fits(self.ops, view, self.recent, batch)]
        if views and views[0] == self.views[0] and lexicographically_sorted(batch.keys, strictly=True):
            tries, rows = merged_level(self.recent, self._runs["recent"], batch, views, self.ops)
            return batch, self.recent, rows, tries
        return batch, self.recent, self._combined(self.recent, batch), {}

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

    def scalar_total(self) -> object:
        """A relation without columns: its current value (the ⊕ of its levels' rows, as :meth:`current`
        merges them), or None when it holds none or the zero."""
        values = [r.values_or_ones(self.ops) for r in (self.base, *self.frozen, self.older, self.recent) if len(r)]
        if not values:
            return None
        total = np.asarray(self.ops.sum(values[0] if len(values) == 1 else np.concatenate(values)),
                           dtype=self.ops.dtype)[None]
        return None if self.ops.is_zero(total)[0] else total[0]

    def nonnegative(self) -> bool:
        """Whether no key's current value is below zero: found once (an O(rows) pass), then kept while
        only checked batches are committed (a maintained count refuses one taking a value below zero),
        and found again after :meth:`replace`.  Numeric values only."""
        if self._nonnegative is None:
            rows = self.current()
            self._nonnegative = rows.values is None or not len(rows) or bool(np.min(rows.values) >= 0)
        return self._nonnegative

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
        into the base if it outgrew its limit -- where :attr:`compaction`
        says (module notes) -- unless ``compact`` is False (the owner of a
        released base does it).
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
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] is batch and pending[1] is self.recent:  # merged by new_runs
            self.recent, self._runs["recent"] = pending[2], pending[3]
        else:
            self.recent = self._combined(self.recent, batch)
            self._runs["recent"] = {}
        if len(self.recent) > max(RECENT_MAX_ROWS, RECENT_BATCHES * len(batch)):
            self.older, self.recent = self._combined(self.older, self.recent), empty_rows(self.arity, self.ops)
            self._runs["older"], self._runs["recent"] = {}, {}
        if compact and not self.released and self.needs_compaction():
            if self.compaction == "batch":
                self.compact()
            else:
                self.compact_in_background()

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
        self._compaction = Compaction(self.name, self.base, self.frozen, views, self.ops, dict(self._runs["base"]),
                                      mode=self.compaction)

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
        self._nonnegative = self._pending = None
        self.base = rows
        self.older = self.recent = empty_rows(self.arity, self.ops)
        self.frozen, self._frozen_runs = [], []
        self._runs = {"base": {}, "older": {}, "recent": {}}
        self.compactions += 1

    def assign(self, batch: KeyedRows) -> None:
        """Set the keys of ``batch`` to its values (the zero removes a key): for recomputation."""
        self.replace(assigned(self.current(), batch, self.ops))
