"""A factor that changes: a cached base plus a short log of cached deltas.

A maintained query keeps each input factor as a :class:`RelationState`:
the rows of the base (materialised once) and the rows of the deltas applied
since (each small, materialised when it arrives).  The factor's value at a
key is the ⊕ of its rows there, so a join over ``base ∪ log`` gives exactly
what a join over the merged factor gives (⊗ distributes over ⊕): nothing is
rewritten per batch.  Every few batches the log is merged into one delta
(:data:`LOG_MERGE_AT`), and once the log holds a fraction of the base
(:data:`COMPACT_FRACTION`) it is folded into a new base: memory stays linear
in the factor, lineage short, and old caches are released.

States are values: :meth:`RelationState.with_delta` returns a new state and
leaves the old one usable (delta rules read both at once).  Which caches
may be released is decided by the owner through :meth:`RelationState.frames`.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.incremental.state import RelationState
>>> from faq.semirings import INTEGER
>>> edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "integer")
>>> old = RelationState.of(edge.df, ("src", "dst"), "value", INTEGER)
>>> delta = factor_of([(2, 3, -1), (3, 1, 1)], ["src", "dst"], "integer").df
>>> new = old.with_delta(*old.normalise(delta, "value"))
>>> sorted(map(tuple, new.merged().collect()))
[(1, 2, 1), (3, 1, 1)]
>>> old.rows_in_log, new.rows_in_log
(0, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING, Optional, Sequence

from faq.joins.frame import VALUE_COLUMN
from faq.spark import release as release_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring

# Merge the log into one delta once it holds this many deltas.
LOG_MERGE_AT = 8
# Fold the log into the base once it holds this fraction of the base's rows.
COMPACT_FRACTION = 0.10


@dataclass(frozen=True)
class RelationState:
    """A factor as ``base ∪ log``: variables columns plus :data:`VALUE_COLUMN`.

    Attributes
    ----------
    variables : tuple of str
        The factor's key columns.
    semiring : Semiring
        How rows of one key combine (⊕); a ring for signed deltas.
    base : DataFrame
        Materialised rows (one per key after compaction).
    base_rows : int
        Rows in ``base``.
    log : tuple of DataFrame
        Materialised deltas applied since, oldest first.
    log_rows : tuple of int
        Rows of each log entry.
    """

    variables: tuple[str, ...]
    semiring: "Semiring"
    base: "DataFrame"
    base_rows: int
    log: tuple = ()
    log_rows: tuple = ()
    # DataFrames this state made and may release (not the caller's input).
    owned: tuple = field(default=(), compare=False)

    @classmethod
    def of(cls, df: "DataFrame", variables: Sequence[str], value: str, semiring: "Semiring",
           *, materialise: bool = True) -> "RelationState":
        """The state of a factor's rows (merged per key and materialised unless told otherwise)."""
        from pyspark.sql import functions as F

        variables = tuple(variables)
        rows = df.select(*variables, F.col(value).cast(semiring.value_type).alias(VALUE_COLUMN))
        if not materialise:
            return cls(variables, semiring, rows, -1)
        base = _materialise(_merge(rows, variables, semiring))
        return cls(variables, semiring, base, base.count(), owned=(base,))

    # -- reading ------------------------------------------------------------------

    def rows(self) -> "DataFrame":
        """``base ∪ log``: several rows per key possible; their ⊕ is the value."""
        return reduce(lambda a, b: a.unionByName(b), self.log, self.base)

    def merged(self) -> "DataFrame":
        """One row per key with a non-zero value (an aggregation: use for output, not in rules)."""
        return _merge(self.rows(), self.variables, self.semiring) if self.log else self.base

    def lookup(self, keys: "DataFrame") -> "DataFrame":
        """The merged values at ``keys`` (a small DataFrame of key columns); absent keys left out."""
        from pyspark.sql import functions as F

        hit = self.rows().join(F.broadcast(keys.select(*self.variables).distinct()), list(self.variables),
                               "left_semi")
        return _merge(hit, self.variables, self.semiring)

    @property
    def rows_in_log(self) -> int:
        return sum(self.log_rows)

    def frames(self) -> tuple:
        """Every cached DataFrame this state reads (for the owner to release what a newer state dropped)."""
        return self.owned

    # -- changing ---------------------------------------------------------------

    def normalise(self, delta: "DataFrame", value: str, keep_zeros: bool = False) -> tuple["DataFrame", int]:
        """A delta's rows merged per key (⊕), materialised (lineage cut), and their number.

        Zero sums are dropped unless ``keep_zeros`` (where a zero means "delete", not "no change").
        A small delta comes back as a local relation (:func:`faq.spark.materialise_small`).
        """
        from pyspark.sql import functions as F

        from faq.spark import materialise_small

        rows = delta.select(*self.variables, F.col(value).cast(self.semiring.value_type).alias(VALUE_COLUMN))
        return materialise_small(_merge(rows, self.variables, self.semiring, keep_zeros))

    def with_delta(self, delta: "DataFrame", rows: Optional[int] = None) -> "RelationState":
        """The state after ``delta`` (materialised rows as :meth:`normalise` returns them)."""
        n = delta.count() if rows is None else rows
        if n == 0:
            return self
        state = RelationState(self.variables, self.semiring, self.base, self.base_rows,
                              (*self.log, delta), (*self.log_rows, n), (*self.owned, delta))
        return state._tidied()

    def assigned(self, delta: "DataFrame") -> "RelationState":
        """The state where ``delta``'s keys take its values (zero: the key goes), compacted.

        For recomputation in a semiring without inverses, where a delta row
        sets a value rather than adding to it.
        """
        from pyspark.sql import functions as F

        kept = self.merged().join(F.broadcast(delta.select(*self.variables)), list(self.variables), "left_anti")
        value = F.col(VALUE_COLUMN)
        rows = kept.unionByName(delta.where(~self.semiring.is_zero(value)))
        base = _materialise(rows)
        return RelationState(self.variables, self.semiring, base, base.count(), owned=(base,))

    def _tidied(self) -> "RelationState":
        if self.base_rows >= 0 and self.rows_in_log > max(COMPACT_FRACTION * self.base_rows, 1000):
            return self.compacted()
        if len(self.log) >= LOG_MERGE_AT:
            merged = _materialise(_merge(reduce(lambda a, b: a.unionByName(b), self.log), self.variables,
                                         self.semiring).coalesce(1))
            n = merged.count()
            kept = tuple(d for d in self.owned if not any(d is x for x in self.log))
            return RelationState(self.variables, self.semiring, self.base, self.base_rows,
                                 (merged,) if n else (), (n,) if n else (), (*kept, merged))
        return self

    def compacted(self) -> "RelationState":
        """The log folded into a new base (one row per key); the old caches become unowned."""
        base = _materialise(_merge(self.rows(), self.variables, self.semiring))
        return RelationState(self.variables, self.semiring, base, base.count(), owned=(base,))


def release(old: Sequence[RelationState], kept: Sequence[RelationState]) -> None:
    """Unpersist the caches of ``old`` states that no state in ``kept`` reads any more."""
    alive = [d for s in kept for d in s.frames()]
    for s in old:
        for d in s.frames():
            if not any(d is a for a in alive):
                release_frame(d)


def _merge(rows: "DataFrame", variables: Sequence[str], semiring: "Semiring",
           keep_zeros: bool = False) -> "DataFrame":
    from pyspark.sql import functions as F

    value = F.col(VALUE_COLUMN)
    merged = rows.groupBy(*variables).agg(semiring.sum(value).alias(VALUE_COLUMN))
    return merged.where(value.isNotNull() if keep_zeros else value.isNotNull() & ~semiring.is_zero(value))


def _materialise(df: "DataFrame") -> "DataFrame":
    """Cut the lineage (a local checkpoint without nested constraints) and keep the rows cached."""
    from faq.spark import checkpoint

    return checkpoint(df)
