"""Prefix extenders: count / propose / validate, and :func:`extend` composing them.

The generic join binds one attribute at a time.  For each attribute, every
relation holding it is an *extender*: given prefixes (bindings of the earlier
attributes) it can

* ``count`` — say, per prefix, how many values it would propose;
* ``propose`` — extend each prefix by each value it holds for the attribute;
* ``validate`` — keep the extended prefixes whose new value it also holds.

:func:`extend` asks every extender to count, lets the one with the fewest
candidates propose for each prefix and the others validate, so the work per
prefix is its smallest proposal (Ngo et al.'s generic join; BiGJoin's
count/propose/intersect dataflow).  It only speaks to extenders and to a
*backend* that knows how prefixes are held; two are here:

* :class:`ArrayBackend` / :class:`TrieExtender`: prefixes are numpy arrays
  (a :class:`Chunk`), relations are :class:`~faq.joins.csr.Trie` levels; used
  per partition by the broadcast strategy.  Work is split so no piece
  proposes more than ``max_rows`` candidates, which bounds memory.
* :class:`FrameBackend` / :class:`FrameExtender`: prefixes are a DataFrame;
  count is a join with a per-key degree table, the choice of proposer is a
  Column expression (``least``/``when``), propose is a join and validate a
  semi-join (or a join carrying ⊗ when the relation becomes fully bound) —
  the shuffle strategy.

A new kind of relation plugs in by implementing the three methods for a backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Iterator, Optional, Protocol, Sequence

import numpy as np

from faq.joins.csr import TrieLevel
from faq.joins.frame import VALUE_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring


class Extender(Protocol):
    """A relation that constrains the attribute being bound."""

    def count(self, prefix: Any) -> Any:
        """How many candidates this relation holds per prefix (backend's form)."""

    def propose(self, prefix: Any) -> Any:
        """``prefix`` extended by every candidate this relation holds."""

    def validate(self, candidates: Any) -> Any:
        """The extended prefixes whose new value this relation holds."""


class Backend(Protocol):
    """How prefixes are held: choose the proposer per prefix, select, union."""

    def choose(self, prefix: Any, extenders: Sequence[Extender]) -> Iterator[Any]:
        """Count with every extender; yield pieces of prefixes, each with its proposer chosen."""

    def chosen(self, piece: Any, index: int) -> Optional[Any]:
        """The prefixes of ``piece`` whose proposer is extender ``index`` (None: none)."""

    def union(self, parts: Sequence[Any], template: Any) -> Any:
        """The union of extended prefixes (``template``: a prefix, for an empty union)."""


def extend(prefix: Any, extenders: Sequence[Extender], backend: Backend) -> Iterator[Any]:
    """Bind the next attribute: yield the extended prefixes, piece by piece.

    For each prefix the extender with the fewest candidates proposes and all
    others validate.
    """
    for piece in backend.choose(prefix, extenders):
        parts = []
        for i, proposer in enumerate(extenders):
            chosen = backend.chosen(piece, i)
            if chosen is None:
                continue
            candidates = proposer.propose(chosen)
            for j, other in enumerate(extenders):
                if j != i:
                    candidates = other.validate(candidates)
            parts.append(candidates)
        yield backend.union(parts, piece)


# --- numpy: prefixes as arrays, relations as tries ---------------------------


@dataclass
class Chunk:
    """Prefixes as arrays: ``bound[i]`` the (encoded) value of the i-th attribute,
    ``nodes[r]`` relation r's trie entry at its last bound level (0, the root, before)."""

    bound: np.ndarray  # (attributes bound, rows) int64
    nodes: np.ndarray  # (relations, rows) int64
    choice: Optional[np.ndarray] = None

    @property
    def rows(self) -> int:
        return self.bound.shape[1]

    def take(self, index: np.ndarray) -> "Chunk":
        return Chunk(self.bound[:, index], self.nodes[:, index])


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows with ranges [start, start + length): (row of each element, position)."""
    total = int(lengths.sum())
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    if total == 0:
        return rows, np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    # position = start of its row + rank inside the row
    positions = np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)
    return rows, positions


class TrieExtender:
    """Relation ``slot`` at one trie level: its entries under each prefix's node."""

    def __init__(self, slot: int, level: TrieLevel, span: int) -> None:
        self.slot = slot
        self.level = level
        self.span = np.int64(span)

    def count(self, chunk: Chunk) -> np.ndarray:
        nodes = chunk.nodes[self.slot]
        offsets = self.level.offsets
        return offsets[nodes + 1] - offsets[nodes]

    def propose(self, chunk: Chunk) -> Chunk:
        nodes = chunk.nodes[self.slot]
        offsets = self.level.offsets
        starts = offsets[nodes]
        rows, positions = _ranges(starts, offsets[nodes + 1] - starts)
        values = self.level.comp[positions] - nodes[rows] * self.span
        new_nodes = chunk.nodes[:, rows]
        new_nodes[self.slot] = positions
        return Chunk(np.vstack([chunk.bound[:, rows], values[None, :]]), new_nodes)

    def validate(self, chunk: Chunk) -> Chunk:
        if chunk.rows == 0:
            return chunk
        comp = self.level.comp
        if len(comp) == 0:
            return chunk.take(np.zeros(0, dtype=np.int64))
        keys = chunk.nodes[self.slot] * self.span + chunk.bound[-1]
        low = np.searchsorted(comp, keys, side="left")
        if not self.level.duplicates:
            found = comp[np.minimum(low, len(comp) - 1)] == keys
            kept = chunk.take(np.flatnonzero(found))
            kept.nodes[self.slot] = low[found]
            return kept
        high = np.searchsorted(comp, keys, side="right")
        rows, positions = _ranges(low, high - low)
        kept = chunk.take(rows)
        kept.nodes[self.slot] = positions
        return kept


class ArrayBackend:
    """Numpy prefixes; pieces propose at most ``max_rows`` candidates (one prefix may exceed it)."""

    def __init__(self, max_rows: int = 1 << 16) -> None:
        self.max_rows = max_rows

    def choose(self, chunk: Chunk, extenders: Sequence[TrieExtender]) -> Iterator[Chunk]:
        if chunk.rows == 0:
            return
        counts = np.stack([e.count(chunk) for e in extenders])
        if len(extenders) == 1:
            choice = np.zeros(chunk.rows, dtype=np.int64)
            smallest = counts[0]
        else:
            choice = np.argmin(counts, axis=0)
            smallest = np.take_along_axis(counts, choice[None, :], axis=0)[0]
        live = smallest > 0
        if not live.all():
            keep = np.flatnonzero(live)
            chunk, choice, smallest = chunk.take(keep), choice[keep], smallest[keep]
        if chunk.rows == 0:
            return
        work = np.cumsum(smallest)
        if work[-1] <= self.max_rows:
            chunk.choice = choice
            yield chunk
            return
        group = (work - 1) // self.max_rows
        cuts = np.flatnonzero(np.diff(group)) + 1
        for index in np.split(np.arange(chunk.rows), cuts):
            piece = chunk.take(index)
            piece.choice = choice[index]
            yield piece

    def chosen(self, piece: Chunk, index: int) -> Optional[Chunk]:
        rows = np.flatnonzero(piece.choice == index)
        if len(rows) == 0:
            return None
        if len(rows) == piece.rows:
            return Chunk(piece.bound, piece.nodes)
        return piece.take(rows)

    def union(self, parts: Sequence[Chunk], template: Chunk) -> Chunk:
        if not parts:
            k, r = template.bound.shape[0] + 1, template.nodes.shape[0]
            return Chunk(np.zeros((k, 0), dtype=np.int64), np.zeros((r, 0), dtype=np.int64))
        if len(parts) == 1:
            return parts[0]
        return Chunk(np.hstack([p.bound for p in parts]), np.hstack([p.nodes for p in parts]))


# --- DataFrames: BiGJoin-style count / propose / validate with joins --------

_CHOICE = "__choice"
_RIGHT_VALUE = "__w"


def _count_column(i: int) -> str:
    return f"__count{i}"


class FrameExtender:
    """One relation constraining ``attribute`` given its earlier attributes ``key``.

    ``relation`` has columns ``key + (attribute,)`` (plus :data:`VALUE_COLUMN`
    when ``last``: the relation becomes fully bound here and its value is
    multiplied in; otherwise the relation is its distinct projection).
    ``valued`` False: the relation is an indicator (value one).
    """

    def __init__(
        self,
        relation: "DataFrame",
        key: Sequence[str],
        attribute: str,
        last: bool,
        valued: bool,
        semiring: "Semiring",
    ) -> None:
        self.relation = relation
        self.key = list(key)
        self.attribute = attribute
        self.last = last
        self.valued = valued and last
        self.semiring = semiring

    def count(self, prefix: "DataFrame") -> "DataFrame":
        """A degree table: ``key`` columns and ``__count`` (one row, no key, when ``key`` is empty)."""
        from pyspark.sql import functions as F

        rel = self.relation
        if self.key:
            return rel.groupBy(*self.key).agg(F.count(F.lit(1)).alias("__count"))
        return rel.agg(F.count(F.lit(1)).alias("__count"))

    def _join(self, prefix: "DataFrame", on: Sequence[str], how: str) -> "DataFrame":
        from pyspark.sql import functions as F

        if self.valued:
            right = self.relation.withColumnRenamed(VALUE_COLUMN, _RIGHT_VALUE)
        else:
            right = self.relation.select(*self.key, self.attribute)
        joined = prefix.join(right, on=list(on), how=how) if on else prefix.crossJoin(right)
        if not self.valued:
            return joined
        columns = [c for c in prefix.columns if c != VALUE_COLUMN]
        if self.attribute not in columns:
            columns.append(self.attribute)
        product = self.semiring.mul(F.col(VALUE_COLUMN), F.col(_RIGHT_VALUE)).alias(VALUE_COLUMN)
        return joined.select(*columns, product)

    def propose(self, prefix: "DataFrame") -> "DataFrame":
        return self._join(prefix, self.key, "inner")

    def validate(self, candidates: "DataFrame") -> "DataFrame":
        on = self.key + [self.attribute]
        if self.valued:
            return self._join(candidates, on, "inner")
        return candidates.join(self.relation.select(*on), on=on, how="left_semi")


class FrameBackend:
    """DataFrame prefixes.  With several extenders the counted prefix is
    materialised (``localCheckpoint``): every proposer's branch reads it, and
    lineage stays short level after level."""

    def __init__(self) -> None:
        self.checkpoints: list["DataFrame"] = []

    def choose(self, prefix: "DataFrame", extenders: Sequence[FrameExtender]) -> Iterator["DataFrame"]:
        from pyspark.sql import functions as F

        if len(extenders) == 1:
            yield prefix
            return
        counted = prefix
        names = []
        for i, e in enumerate(extenders):
            degrees = e.count(prefix).withColumnRenamed("__count", _count_column(i))
            counted = counted.join(degrees, on=e.key, how="inner") if e.key else counted.crossJoin(degrees)
            names.append(_count_column(i))
        smallest = F.least(*[F.col(n) for n in names])
        choice = F.when(F.col(names[0]) == smallest, F.lit(0))
        for i, n in enumerate(names[1:], start=1):
            choice = choice.when(F.col(n) == smallest, F.lit(i))
        counted = counted.withColumn(_CHOICE, choice).drop(*names)
        counted = counted.localCheckpoint(eager=True)
        self.checkpoints.append(counted)
        yield counted

    def chosen(self, piece: "DataFrame", index: int) -> Optional["DataFrame"]:
        from pyspark.sql import functions as F

        if _CHOICE not in piece.columns:
            return piece if index == 0 else None
        return piece.where(F.col(_CHOICE) == index).drop(_CHOICE)

    def union(self, parts: Sequence["DataFrame"], template: "DataFrame") -> "DataFrame":
        return reduce(lambda a, b: a.unionByName(b), parts)
