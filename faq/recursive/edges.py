"""The edges of a maintained fixpoint: a resident index that also takes deletions.

A :class:`~faq.incremental.index.ResidentRelation` in an idempotent semiring
only ⊕-merges: its overlay can make an edge better, never remove it.
:class:`EdgeRelation` adds :meth:`~EdgeRelation.remove`, in time proportional
to the removed edges and the (small) overlay, never to the base:

* an edge of the **base** is marked *dead*: its value becomes the semiring's
  zero in the base rows and in every trie of the base already built (forward
  ``(src, dst)``, reverse ``(dst, src)``).  :func:`~faq.recursive.propagate.out_edges`
  skips dead edges and a lookup ⊕-merges the zero away, so a dead edge is
  absent to every reader; the rows are dropped at the next compaction (which
  dead rows also trigger);
* an edge of the **overlay** (its older or recent level) is marked dead the
  same way, in that level's rows and tries: no trie is rebuilt in the batch.

Compaction runs in the batch that needs it (never in the background: a
snapshot folded in a thread would miss removals made meanwhile).

A changed weight (a worsening update) is a removal followed by an insertion
(:meth:`~faq.incremental.index.ResidentRelation.commit` of the new value).
:meth:`remove` returns what :meth:`restore` needs to undo it, so a batch that
fails later leaves the edges as they were.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.index import KeyedRows, View
>>> from faq.recursive.propagate import fixpoint_ops, out_edges
>>> from faq.semirings import MIN_PLUS
>>> ops = fixpoint_ops(MIN_PLUS)
>>> edges = EdgeRelation.build("edge", ("src", "dst"),
...     KeyedRows((np.array([0, 0, 1]), np.array([1, 2, 2])), np.array([1.0, 5.0, 1.0])), ops)
>>> edges.commit(KeyedRows((np.array([2]), np.array([0])), np.array([3.0])))
>>> undo = edges.remove((np.array([0, 2]), np.array([2, 0])))      # one base edge, one overlay edge
>>> sorted(zip(*[c.tolist() for c in edges.current().keys]))
[(0, 1), (1, 2)]
>>> at, dst, weight = out_edges(edges.runs(View((0, 1))), np.array([0, 2]), ops)
>>> dst.tolist(), weight.tolist()                                    # 0 -> 2 is dead, 2 -> 0 gone
([1], [1.0])
>>> edges.restore(undo)
>>> sorted(zip(*[c.tolist() for c in edges.current().keys]))
[(0, 1), (0, 2), (1, 2), (2, 0)]
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from faq.incremental.index import (
    COMPACT_FRACTION,
    OVERLAY_MIN_ROWS,
    KeyedRows,
    ResidentRelation,
    View,
    find_rows,
)

__all__ = ["EdgeRelation", "FORWARD", "REVERSE"]

FORWARD = View((0, 1))  # what propagation reads: out-edges
REVERSE = View((1, 0))  # what re-seeding a trimmed node reads: in-edges


class EdgeRelation(ResidentRelation):
    """A :class:`ResidentRelation` of edges ``(src, dst) -> weight`` with :meth:`remove` (module notes)."""

    dead = 0  # rows (base or overlay) marked dead since the last compaction

    def remove(self, keys: Sequence[np.ndarray]) -> list:
        """Remove the edges ``keys`` (code columns, relation order; absent ones are ignored).

        Returns the undo record :meth:`restore` takes.
        """
        ops = self.ops
        if getattr(self, "_compaction", None) is not None:  # never in flight here (see below); be sure
            self.settle()
        keys = [np.asarray(k, dtype=np.int64) for k in keys]
        undo: list = [("dead", self.dead)]
        if not len(keys[0]):
            return undo
        # Every part alike (base, then the overlay's levels): identity-view entries are the part's
        # rows (sorted, one row per key); a removed row gets the zero there and in the part's
        # tries already built.  Marking, not filtering, the overlay too: filtering rebuilt its
        # tries in every batch that deleted an overlay edge (most batches once it held ~20k rows).
        for part in ("base", "older", "recent"):
            level = getattr(self, part)
            if not len(level):
                continue
            rows, entries = find_rows(self.run(self.views[0], part), keys)
            if not len(entries):
                continue
            values = level.values
            if values is None:  # every weight one (boolean, components): dead rows need a value
                values = ops.ones(len(level))
                setattr(self, part, KeyedRows(level.keys, values))
            live = values[entries] != ops.zero
            entries, rows = entries[live], rows[live]
            undo.append((part, level, entries, values[entries].copy()))
            values[entries] = ops.zero
            self.dead += len(entries)
            for view, trie in list(self._runs[part].items()):
                self._runs[part][view] = self._killed(trie, view, [k[rows] for k in keys])
        return undo

    def _killed(self, trie, view: View, keys: list[np.ndarray]):
        """``trie`` (a base trie in ``view``) with the edges ``keys`` given the zero."""
        ops = self.ops
        _, entries = find_rows(trie, [keys[i] for i in view.order])
        values = trie.values
        if values is None:
            values = ops.ones(trie.rows if trie.rows else len(trie.levels[-1].comp))
            trie = dataclasses.replace(trie, values=values)
        values[entries] = ops.zero
        return trie

    def restore(self, undo: list) -> None:
        """Undo a :meth:`remove` (every part's rows as they were; its tries rebuilt when next read)."""
        for record in reversed(undo):
            if record[0] == "dead":
                self.dead = record[1]
                continue
            part, level, entries, old = record
            current = getattr(self, part)
            if current.values is not None:
                current.values[entries] = old
            setattr(self, part, level)  # the level before remove (its values None where it had none)
            self._runs[part] = {}  # rebuilt from the rows when next read

    # -- dead rows: never read back, dropped by a compaction, which they also trigger -----

    def current(self) -> KeyedRows:
        rows = super().current()
        if self.dead and rows.values is not None:
            live = rows.values != self.ops.zero
            if not live.all():
                rows = rows.take(np.flatnonzero(live))
        return rows

    def needs_compaction(self) -> bool:
        if self.dead > max(COMPACT_FRACTION * self.base_rows, OVERLAY_MIN_ROWS):
            return True
        return super().needs_compaction()

    def replace(self, rows: KeyedRows) -> None:
        super().replace(rows)
        self.dead = 0

    def compact_in_background(self) -> None:
        """Compact now, not in a thread: a thread would fold a snapshot of the base and overlay that
        later removals (dead marks written in place) do not reach."""
        self.compact()

    def compact_if_needed(self) -> None:
        """Fold the overlay and drop dead rows when either outgrew its limit."""
        if self.needs_compaction():
            self.compact()

