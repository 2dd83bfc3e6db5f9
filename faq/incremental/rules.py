"""Exactly-once delta rules: ΔQ = Σ_i Q(R_1′ … R_{i−1}′, ΔR_i, R_{i+1} … R_n).

Number the atoms of a query 1..n (a factor used three times, as ``edge`` in
a triangle, is three atoms).  When several change at once, the change of the
answer is a sum of one *rule* per changed atom: atom ``i`` takes its delta,
the atoms before it their **new** state and the atoms after it their **old**
state.  Expanding ``Π_j (R_j ⊕ ΔR_j)`` by distributivity and grouping the
terms by the last atom that takes its delta gives exactly these rules, each
term once, so updates of one batch that together form a new triangle
produce it once, not three times.  The identity holds per binding, in any
semiring: in a ring ``R′ = R + ΔR`` and the sum is the signed change; in an
idempotent semiring (min, max, ∨) ``R′ = R ⊕ ΔR`` for improving updates and
the new answer is ``old ⊕ ΔQ``.

Each rule is a join *seeded* by its delta: :func:`faq.joins.seeded.seeded_join`
(the worst-case optimal join, attribute at a time) when the query's
hypergraph is cyclic, InsideOut with binary joins when it is acyclic (where
they are optimal and aggregate early).  Nothing but the input factors is
kept between batches.

Examples
--------
>>> from faq.incremental.rules import rule_plan
>>> for rule in rule_plan([False, True, True]):   # atoms 2 and 3 changed
...     print(rule)
Δ#2 with new: [1] old: [3]
Δ#3 with new: [1, 2] old: []
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Optional, Sequence

from faq.joins.frame import VALUE_COLUMN, Frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.query import FAQ
    from faq.semirings import Semiring


@dataclass(frozen=True)
class Rule:
    """One delta rule: atom ``seed`` (0-based) takes its delta; ``new``/``old`` list the others' states."""

    seed: int
    new: tuple[int, ...]
    old: tuple[int, ...]

    def __str__(self) -> str:
        return (f"Δ#{self.seed + 1} with new: {[i + 1 for i in self.new]} "
                f"old: {[i + 1 for i in self.old]}")


def rule_plan(changed: Sequence[bool]) -> list[Rule]:
    """The rules for atoms whose ``changed`` flag is set: earlier atoms new, later old."""
    n = len(changed)
    rules = []
    for i in range(n):
        if changed[i]:
            rules.append(Rule(i, tuple(range(i)), tuple(range(i + 1, n))))
    return rules


def atom_frame(rows: "DataFrame", columns: Sequence[str], atom_variables: Sequence[str]) -> Frame:
    """A factor's rows (``columns`` + :data:`VALUE_COLUMN`) as an atom's :class:`Frame`.

    Columns are renamed to the atom's variables; a repeated variable
    (``f(x, x)``) keeps the diagonal.
    """
    from pyspark.sql import functions as F

    first: dict[str, str] = {}
    condition = None
    for column, var in zip(columns, atom_variables):
        if var in first:
            same = F.col(first[var]) == F.col(column)
            condition = same if condition is None else condition & same
        else:
            first[var] = column
    df = rows if condition is None else rows.where(condition)
    return Frame(df.select(*[F.col(c).alias(v) for v, c in first.items()], VALUE_COLUMN), tuple(first))


def aggregate_rules(
    query: "FAQ",
    rules: Sequence[tuple[Frame, Sequence[Frame]]],
    semiring: "Semiring",
    cyclic: bool,
    keep: list,
) -> list["DataFrame"]:
    """Each (seed, others) rule's contribution to ΔQ: free-variable columns and :data:`VALUE_COLUMN`.

    Cyclic rules run through the seeded worst-case optimal join and share
    their Spark jobs; acyclic ones through InsideOut (:func:`_insideout_rule`).
    ``keep`` receives every cache made, for the caller to release once the
    contributions have been consumed.
    """
    from pyspark.sql import functions as F

    if not cyclic:
        return [_insideout_rule(query, seed, others, semiring, keep) for seed, others in rules]
    from faq.joins.seeded import seeded_joins

    out = []
    for joined in seeded_joins(rules, semiring, keep):
        grouped = joined.df.groupBy(*query.free) if query.free else joined.df.groupBy()
        out.append(grouped.agg(semiring.sum(F.col(VALUE_COLUMN)).alias(VALUE_COLUMN)))
    return out


def _insideout_rule(query: "FAQ", seed: Frame, others: Sequence[Frame], semiring: "Semiring",
                    keep: list) -> "DataFrame":
    """One acyclic rule answered by InsideOut (binary joins, early aggregation)."""
    from pyspark.sql import functions as F

    from faq.factor import Factor
    from faq.insideout.executor import evaluate
    from faq.query import FAQ, Atom

    frames = [seed, *others]
    factors = {
        f"rule{k}": Factor(df=f.df, variables=f.variables, semiring=semiring, value=VALUE_COLUMN, name=f"rule{k}")
        for k, f in enumerate(frames)
    }
    rule = FAQ(tuple(Atom(f"rule{k}", f.variables) for k, f in enumerate(frames)), query.free, query.name,
               semiring.name)
    result = evaluate(rule, factors, semiring=semiring)
    keep.extend(result._cached)
    return result.factor.df.select(*query.free, F.col(result.factor.value).alias(VALUE_COLUMN))


def sum_contributions(parts: Sequence["DataFrame"], free: Sequence[str], semiring: "Semiring") -> "DataFrame":
    """⊕ of the rules' contributions per free-variable key, zeros dropped."""
    from pyspark.sql import functions as F

    union = reduce(lambda a, b: a.unionByName(b), parts)
    value = F.col(VALUE_COLUMN)
    grouped = union.groupBy(*free) if free else union.groupBy()
    summed = grouped.agg(semiring.sum(value).alias(VALUE_COLUMN))
    return summed.where(value.isNotNull() & ~semiring.is_zero(value))


def seed_frame(delta: "DataFrame", columns: Sequence[str], atom_variables: Sequence[str],
               negate: Optional["Semiring"] = None) -> Frame:
    """The seed of a rule: the delta's rows as the atom's frame (values negated when ``negate`` is a ring)."""
    from pyspark.sql import functions as F

    frame = atom_frame(delta, columns, atom_variables)
    if negate is None:
        return frame
    return Frame(frame.df.select(*frame.variables, negate.neg(F.col(VALUE_COLUMN)).alias(VALUE_COLUMN)),
                 frame.variables)
