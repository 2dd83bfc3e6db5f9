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

* :class:`ArrayBackend`: prefixes are numpy arrays (a :class:`Chunk`).  Its
  extenders are :class:`TrieExtender` (a relation as one
  :class:`~faq.joins.csr.Trie`: the broadcast strategy's static join, per
  partition), :class:`RunsExtender` (a relation as several sorted runs, LSM
  style: the resident indexes of maintained queries, whose base, overlay and
  batch are runs of one relation) and :class:`FilterExtender` (a predicate
  that only validates: negated edges, distinct vertices).  Work is split so
  no piece proposes more than ``max_rows`` candidates, which bounds memory;
  :func:`complete` drives prefixes through every remaining attribute, depth
  first.  A delta rule is this same join started from the delta's rows
  instead of the first attribute's values.
* :class:`FrameBackend` / :class:`FrameExtender`: prefixes are a DataFrame;
  count is a join with a per-key degree table, the choice of proposer is a
  Column expression (``least``/``when``), propose is a join and validate a
  semi-join (or a join carrying ⊗ when the relation becomes fully bound) —
  the shuffle strategy.

A new kind of relation plugs in by implementing the three methods for a backend.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any, Iterator, Optional, Protocol, Sequence

import numpy as np

from faq.joins.csr import TrieLevel, sorted_search
from faq.joins.frame import VALUE_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from faq.scope import Scope
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
    """How prefixes are held: how counts choose a proposer, how proposals and validations combine."""

    def choose(self, prefix: Any, extenders: Sequence[Extender]) -> Iterator[Any]:
        """Count with every extender; yield pieces of prefixes, each prefix with its proposer chosen."""

    def propose(self, piece: Any, extenders: Sequence[Extender]) -> Any:
        """Each prefix of ``piece`` extended by its chosen extender's candidates."""

    def validate(self, proposals: Any, extenders: Sequence[Extender]) -> Any:
        """The proposals every other extender validates (one combined result)."""


def extend(prefix: Any, extenders: Sequence[Extender], backend: Backend) -> Iterator[Any]:
    """Bind the next attribute: yield the extended prefixes, piece by piece.

    Every extender counts, for each prefix the one with the fewest candidates
    proposes, and the others validate.
    """
    for piece in backend.choose(prefix, extenders):
        yield backend.validate(backend.propose(piece, extenders), extenders)


# --- numpy: prefixes as arrays, relations as tries ---------------------------


Key = tuple  # ("a", i): the i-th attribute's codes; ("n", r): relation r's trie entry


class Chunk:
    """Prefixes, factorised: the columns made at this level, the others reached
    through ``parent`` (row of each prefix in ``up``, the chunk it extends).

    Columns are ``("a", i)`` (codes of the i-th attribute) and ``("n", r)``
    (relation r's trie entry at its last bound level; missing: the root).
    Extending never copies earlier columns: a candidate is its new value,
    the proposer's entry and a parent row; columns of earlier levels are
    gathered (and cached) only where an extender or the output needs them.
    """

    __slots__ = ("columns", "rows", "parent", "up", "choice")

    def __init__(
        self,
        columns: dict,
        rows: int,
        parent: Optional[np.ndarray] = None,
        up: Optional["Chunk"] = None,
    ) -> None:
        self.columns = columns
        self.rows = rows
        self.parent = parent
        self.up = up
        self.choice: Optional[np.ndarray] = None

    def get(self, key: Key) -> Optional[np.ndarray]:
        """Column ``key`` aligned with the rows (None if no level made it)."""
        column = self.columns.get(key)
        if column is None and self.up is not None:
            above = self.up.get(key)
            if above is not None:
                column = self.columns[key] = above[self.parent]
        return column

    def take(self, index: np.ndarray) -> "Chunk":
        """The rows ``index`` (own and cached columns are copied, earlier ones stay above)."""
        parent = None if self.parent is None else self.parent[index]
        return Chunk({k: v[index] for k, v in self.columns.items()}, len(index), parent, self.up)


def _positions(starts: np.ndarray, lengths: np.ndarray, total: int) -> np.ndarray:
    """Concatenated ranges [start, start + length), one per row."""
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


class TrieExtender:
    """Relation ``slot`` binding attribute ``attribute`` with one trie level.

    ``keeps_node`` False: validation does not record the relation's entry
    (a lookup saved) — only when nothing reads it later, i.e. the relation
    has no later attribute and its values are not gathered.
    """

    def __init__(self, slot: int, level: TrieLevel, span: int, attribute: int, keeps_node: bool = True) -> None:
        self.slot = slot
        self.level = level
        self.span = np.int64(span)
        self.node_key = ("n", slot)
        self.value_key = ("a", attribute)
        self.keeps_node = keeps_node

    def _nodes(self, chunk: Chunk) -> Optional[np.ndarray]:
        return chunk.get(self.node_key)

    def count(self, chunk: Chunk) -> np.ndarray:
        offsets = self.level.offsets
        nodes = self._nodes(chunk)
        if nodes is None:  # nothing of this relation bound yet: all of its level
            return np.full(chunk.rows, offsets[1] - offsets[0], dtype=np.int64)
        return offsets[nodes + 1] - offsets[nodes]

    def propose(self, chunk: Chunk, rows: Optional[np.ndarray] = None) -> Chunk:
        """Rows ``rows`` (default all) of ``chunk`` extended by this relation's values."""
        if rows is None:
            rows = np.arange(chunk.rows, dtype=np.int64)
        offsets = self.level.offsets
        nodes = self._nodes(chunk)
        nodes = np.zeros(len(rows), dtype=np.int64) if nodes is None else nodes[rows]
        starts = offsets[nodes]
        lengths = offsets[nodes + 1] - starts
        total = int(lengths.sum())
        positions = _positions(starts, lengths, total)
        values = self.level.comp[positions] - np.repeat(nodes * self.span, lengths)
        columns = {self.value_key: values, self.node_key: positions}
        return Chunk(columns, total, np.repeat(rows, lengths), chunk)

    def validate(self, chunk: Chunk) -> Chunk:
        comp = self.level.comp
        if chunk.rows == 0 or len(comp) == 0:
            return chunk.take(np.zeros(0, dtype=np.int64))
        keys = chunk.get(self.value_key)
        nodes = self._nodes(chunk)
        if nodes is not None:
            keys = nodes * self.span + keys
        if not self.level.duplicates:
            found, entries = self.level.find(keys, positions=self.keeps_node)
            kept = chunk.take(found)
            if entries is not None:
                kept.columns[self.node_key] = entries
            return kept
        low = sorted_search(comp, keys, side="left")
        lengths = sorted_search(comp, keys, side="right") - low
        kept = chunk.take(np.repeat(np.arange(chunk.rows, dtype=np.int64), lengths))
        kept.columns[self.node_key] = _positions(low, lengths, kept.rows)
        return kept


class RunsExtender:
    """Relation ``slot`` stored as several sorted runs (tries over the same attributes), at one depth.

    The relation is the multiset union of its runs: a key may have a row in
    several runs, and its value is the ⊕ of them (a resident index's base,
    overlay and batch: :mod:`faq.incremental.index`).  Each prefix row stays
    in one run once the relation's first attribute is bound (column
    ``("r", slot)``), so every row of every run is reached exactly once and a
    ⊕ over the bindings gives the join of the merged relation (⊗ distributes
    over ⊕).  At ``depth`` 0 nothing of the relation is bound yet: a value
    present in two runs gives two prefix rows, one per run.  Runs must not
    hold a key twice (they are merged per key).

    Parameters
    ----------
    slot : int
        Identifies the relation's columns in a :class:`Chunk`.
    levels : sequence of TrieLevel
        Per run, its trie's level at ``depth``.
    span : int
        Composite span of the tries (``parent * span + code``).
    attribute : int
        Position of the attribute being bound.
    depth : int
        Index of that attribute among the relation's.
    """

    def __init__(self, slot: int, levels: Sequence[TrieLevel], span: int, attribute: int, depth: int) -> None:
        self.slot = slot
        self.levels = list(levels)
        self.span = np.int64(span)
        self.node_key = ("n", slot)
        self.run_key = ("r", slot)
        self.value_key = ("a", attribute)
        self.depth = depth

    def _groups(self, chunk: Chunk, rows: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(run, rows of that run, their nodes) for the given prefix rows (depth > 0)."""
        nodes = chunk.get(self.node_key)[rows]
        runs = chunk.get(self.run_key)[rows]
        for r in range(len(self.levels)):
            mine = np.flatnonzero(runs == r)
            if len(mine):
                yield r, rows[mine], nodes[mine]

    def count(self, chunk: Chunk) -> np.ndarray:
        if self.depth == 0:
            total = sum(int(level.offsets[1] - level.offsets[0]) for level in self.levels)
            return np.full(chunk.rows, total, dtype=np.int64)
        counts = np.zeros(chunk.rows, dtype=np.int64)
        for r, rows, nodes in self._groups(chunk, np.arange(chunk.rows, dtype=np.int64)):
            offsets = self.levels[r].offsets
            counts[rows] = offsets[nodes + 1] - offsets[nodes]
        return counts

    def propose(self, chunk: Chunk, rows: Optional[np.ndarray] = None) -> Chunk:
        """Rows ``rows`` (default all) of ``chunk`` extended by every run's values."""
        if rows is None:
            rows = np.arange(chunk.rows, dtype=np.int64)
        if self.depth == 0:
            groups = [(r, rows, np.zeros(len(rows), dtype=np.int64)) for r in range(len(self.levels))]
        else:
            groups = list(self._groups(chunk, rows))
        values, positions, runs, parents = [], [], [], []
        for r, mine, nodes in groups:
            level = self.levels[r]
            starts = level.offsets[nodes]
            lengths = level.offsets[nodes + 1] - starts
            total = int(lengths.sum())
            at = _positions(starts, lengths, total)
            values.append(level.comp[at] - np.repeat(nodes * self.span, lengths))
            positions.append(at)
            runs.append(np.full(total, r, dtype=np.int8))
            parents.append(np.repeat(mine, lengths))
        columns = {self.value_key: _concat(values), self.node_key: _concat(positions), self.run_key: _concat(runs, np.int8)}
        parent = _concat(parents)
        return Chunk(columns, len(parent), parent, chunk)

    def validate(self, chunk: Chunk) -> Chunk:
        # No early return for an empty chunk: later levels and the leaf read its run columns.
        keys = chunk.get(self.value_key)
        everything = np.arange(chunk.rows, dtype=np.int64)
        if self.depth == 0:
            groups = [(r, everything, np.zeros(chunk.rows, dtype=np.int64)) for r in range(len(self.levels))]
        else:
            groups = list(self._groups(chunk, everything))
        kept, entries, runs = [], [], []
        for r, mine, nodes in groups:
            level = self.levels[r]
            if level.size == 0:
                continue
            found, at = level.find(nodes * self.span + keys[mine], positions=True)
            kept.append(mine[found])
            entries.append(at)
            runs.append(np.full(len(found), r, dtype=np.int8))
        out = chunk.take(_concat(kept))
        out.columns[self.node_key] = _concat(entries)
        out.columns[self.run_key] = _concat(runs, np.int8)
        return out


def _concat(parts: Sequence[np.ndarray], dtype=np.int64) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


# Count reported by extenders that never propose (larger than any real count).
NEVER_PROPOSES = np.iinfo(np.int64).max


class FilterExtender:
    """A predicate on bound attributes that only validates: it never proposes.

    ``keep(chunk)`` returns a boolean mask over the chunk's rows (rows it
    keeps).  Used for what is not a semiring product of listed relations:
    a negated edge (no such edge in the graph) and distinct pattern vertices.
    """

    def __init__(self, keep, name: str = "filter") -> None:
        self.keep = keep
        self.name = name

    def count(self, chunk: Chunk) -> np.ndarray:
        return np.full(chunk.rows, NEVER_PROPOSES, dtype=np.int64)

    def propose(self, chunk: Chunk, rows: Optional[np.ndarray] = None) -> Chunk:  # pragma: no cover - guarded
        raise AssertionError(f"{self.name} only validates; an attribute needs a relation to propose it")

    def validate(self, chunk: Chunk) -> Chunk:
        if chunk.rows == 0:
            return chunk
        mask = self.keep(chunk)
        return chunk if mask.all() else chunk.take(np.flatnonzero(mask))


def complete(chunk: Chunk, level: int, extenders: Sequence[Sequence[Any]], backend: "ArrayBackend") -> Iterator[Chunk]:
    """Extend ``chunk`` through the attributes ``level ..`` (one list of extenders each), depth first.

    Yields full bindings piece by piece, so memory stays bounded by the
    backend's ``max_rows`` per level whatever the output size.
    """
    if level == len(extenders):
        yield chunk
        return
    for extended in extend(chunk, extenders[level], backend):
        if extended.rows:
            yield from complete(extended, level + 1, extenders, backend)


class ArrayBackend:
    """Numpy prefixes; pieces propose at most ``max_rows`` candidates (one prefix may exceed it)."""

    def __init__(self, max_rows: int = 1 << 16) -> None:
        self.max_rows = max_rows

    def choose(self, chunk: Chunk, extenders: Sequence[TrieExtender]) -> Iterator[Chunk]:
        if chunk.rows == 0:
            return
        counts = [e.count(chunk) for e in extenders]
        if len(extenders) == 1:
            choice = np.zeros(chunk.rows, dtype=np.int64)
            smallest = counts[0]
        else:
            stacked = np.stack(counts)
            choice = np.argmin(stacked, axis=0)
            smallest = np.take_along_axis(stacked, choice[None, :], axis=0)[0]
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

    def propose(self, piece: Chunk, extenders: Sequence[TrieExtender]) -> list[tuple[int, Chunk]]:
        if len(extenders) == 1:
            return [(0, extenders[0].propose(piece))]
        proposals = []
        for i, proposer in enumerate(extenders):
            rows = np.flatnonzero(piece.choice == i)
            if len(rows):
                proposals.append((i, proposer.propose(piece, rows)))
        return proposals

    def validate(self, proposals: list[tuple[int, Chunk]], extenders: Sequence[TrieExtender]) -> Chunk:
        parts = []
        for i, candidates in proposals:
            for j, other in enumerate(extenders):
                if j != i:
                    candidates = other.validate(candidates)
            parts.append(candidates)
        return self.union(parts)

    @staticmethod
    def union(parts: Sequence[Chunk]) -> Chunk:
        """Concatenate chunks extending the same chunk (their common columns)."""
        # An empty part may lack columns a validation would have made (validate returns early on
        # no rows): intersecting with it would drop a relation's entry at this level, and a later
        # level would read the stale entry of an earlier level instead.
        parts = [p for p in parts if p.rows] or parts[:1]
        if len(parts) == 1:
            return parts[0]
        keys = set(parts[0].columns).intersection(*(p.columns for p in parts[1:]))
        columns = {k: np.concatenate([p.columns[k] for p in parts]) for k in keys}
        parent = np.concatenate([p.parent for p in parts])
        return Chunk(columns, len(parent), parent, parts[0].up)


# --- DataFrames: BiGJoin-style count / propose / validate with joins --------

_CHOICE = "__choice"
_KEY = "__key"
_CANDIDATE = "__candidate"
_RIGHT_VALUE = "__w"


def _count_column(i: int) -> str:
    return f"__count{i}"


class FrameExtender:
    """One relation constraining ``attribute`` given its earlier attributes ``key``.

    ``relation`` has columns ``key + (attribute,)``, plus :data:`VALUE_COLUMN`
    when ``valued`` (the relation becomes fully bound here, its value is
    multiplied in and its repeated rows kept).  Otherwise it is a distinct
    projection, or an indicator (value one).
    """

    def __init__(
        self,
        relation: "DataFrame",
        key: Sequence[str],
        attribute: str,
        valued: bool,
        semiring: "Semiring",
        counted: Optional["DataFrame"] = None,
    ) -> None:
        self.relation = relation
        self.counted = counted
        self.key = list(key)
        self.attribute = attribute
        self.valued = valued
        self.semiring = semiring

    def count(self, prefix: "DataFrame") -> "DataFrame":
        """A degree table: ``key`` columns and ``__count`` (one row when ``key`` is empty).

        Counted on ``counted`` (the relation's rows, before de-duplication, if
        given): a count only steers the choice of proposer, and one
        aggregation is cheaper than a distinct and an aggregation.
        """
        from pyspark.sql import functions as F

        rows = self.counted if self.counted is not None else self.relation
        grouped = rows.groupBy(*self.key) if self.key else rows.groupBy()
        return grouped.agg(F.count(F.lit(1)).alias("__count"))

    def proposals(self) -> "DataFrame":
        """The distinct (key, attribute) pairs this relation proposes from."""
        columns = [*self.key, self.attribute]
        return self.relation.select(*columns).distinct() if self.valued else self.relation.select(*columns)

    def propose(self, prefix: "DataFrame") -> "DataFrame":
        """Every prefix extended by this relation's values (with ⊗ and repeats when ``valued``)."""
        return self._join(prefix, self.key)

    def validate(self, candidates: "DataFrame") -> "DataFrame":
        """Candidates this relation holds (an inner join carrying ⊗ when ``valued``, else a semi-join)."""
        on = [*self.key, self.attribute]
        if self.valued:
            return self._join(candidates, on)
        return candidates.join(self.relation.select(*on), on=on, how="left_semi")

    def _join(self, prefix: "DataFrame", on: Sequence[str]) -> "DataFrame":
        from faq.joins.uses import product_of

        if not self.valued:
            right = self.relation.select(*self.key, self.attribute)
            return prefix.join(right, on=list(on), how="inner") if on else prefix.crossJoin(right)
        right = self.relation.withColumnRenamed(VALUE_COLUMN, _RIGHT_VALUE)
        joined = prefix.join(right, on=list(on), how="inner") if on else prefix.crossJoin(right)
        columns = [c for c in prefix.columns if c != VALUE_COLUMN]
        if self.attribute not in columns:
            columns.append(self.attribute)
        return product_of(joined, columns, [VALUE_COLUMN, _RIGHT_VALUE], self.semiring)


class FrameBackend:
    """DataFrame prefixes, one piece per attribute (Spark's shuffles spill: memory is bounded).

    With several extenders, count joins the prefixes with each degree table
    and the proposer is a Column expression; all proposers then propose in
    *one* join: the prefix's key for its proposer (an array of its key
    columns, tagged with the proposer) against the union of the proposers'
    tagged (key, value) pairs.  Every extender then validates (the proposer's
    own check passes trivially, and for a relation becoming fully bound it is
    the join that multiplies its value in).  The plan stays linear: no branch
    per proposer, nothing recomputed.

    A piece it must materialise (proposers with keys of different types) is
    checkpointed in ``scope``, the caller's: the result reads it, so it lives
    until the caller has materialised the result (None: never released).
    """

    def __init__(self, scope: Optional["Scope"] = None) -> None:
        self.scope = scope

    def choose(self, prefix: "DataFrame", extenders: Sequence[FrameExtender]) -> Iterator["DataFrame"]:
        from pyspark.sql import functions as F

        if len(extenders) == 1 or prefix.columns == [VALUE_COLUMN]:
            # One extender, or the empty prefix (a single binding): the first proposes.
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
        yield counted.withColumn(_CHOICE, choice).drop(*names)

    def propose(self, piece: "DataFrame", extenders: Sequence[FrameExtender]) -> tuple["DataFrame", Optional[int]]:
        """The proposals and, when one extender proposed them all, its index."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, LongType

        if _CHOICE not in piece.columns:
            return extenders[0].propose(piece), 0
        schema = piece.schema
        key_types = {schema[k].dataType for e in extenders for k in e.key}
        if len(key_types) > 1:
            # Keys of different types cannot share one array column: one join per proposer.
            piece = self.scope.checkpoint(piece) if self.scope is not None else piece.localCheckpoint(eager=True)
            parts = []
            for i, e in enumerate(extenders):
                chosen = piece.where(F.col(_CHOICE) == i).drop(_CHOICE)
                # distinct candidates only: the validation below multiplies values in
                pairs = e.proposals()
                parts.append(chosen.join(pairs, on=e.key, how="inner") if e.key else chosen.crossJoin(pairs))
            return reduce(lambda a, b: a.unionByName(b), parts), None
        element = key_types.pop() if key_types else LongType()

        def key_array(e: FrameExtender) -> "Column":
            if not e.key:
                return F.array().cast(ArrayType(element))
            return F.array(*[F.col(k) for k in e.key])

        key_of = None
        for i, e in enumerate(extenders):
            key = key_array(e)
            key_of = F.when(F.col(_CHOICE) == i, key) if key_of is None else key_of.when(F.col(_CHOICE) == i, key)
        left = piece.withColumn(_KEY, key_of)
        table = reduce(
            lambda a, b: a.unionByName(b),
            [
                e.proposals().select(
                    F.lit(i).alias(_CHOICE),
                    key_array(e).alias(_KEY),
                    F.col(e.attribute).alias(_CANDIDATE),
                )
                for i, e in enumerate(extenders)
            ],
        )
        attribute = extenders[0].attribute
        joined = left.join(table, on=[_CHOICE, _KEY], how="inner")
        return joined.drop(_CHOICE, _KEY).withColumnRenamed(_CANDIDATE, attribute), None

    def validate(self, proposals: tuple["DataFrame", Optional[int]], extenders: Sequence[FrameExtender]) -> "DataFrame":
        candidates, proposer = proposals
        for j, e in enumerate(extenders):
            if j != proposer:
                candidates = e.validate(candidates)
        return candidates
