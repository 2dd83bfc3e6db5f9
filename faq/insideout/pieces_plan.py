"""A plan run in pieces: one variable's values split into ranges, each range a plan of its own.

When every factor of a query is held on the driver but a step's estimated
intermediate exceeds the in-process memory (``spark.faq.localMemory``), moving
the whole join to Spark costs far more than the driver would: the directed
4-cycle count on R-MAT 16 (955K edges) did not finish in 15 minutes as Spark
steps, while its 2-paths, 4.0e8 of them, fit the driver a range at a time.
:mod:`faq.insideout.pieces` then splits one variable ``v``'s values into
ranges (:attr:`Pieces.cuts`), restricts every atom holding ``v`` to a range,
and plans each restricted query as its own in-process plan.  The answer is
the ⊕ of the pieces' answers when ``v`` is summed by the query's one ⊕
(distributivity: the ranges partition ``v``'s values, so each binding is
counted in exactly one piece), or their concatenation when ``v`` is free.

This module holds the value the plan carries (:attr:`Plan.pieces
<faq.insideout.plans.Plan.pieces>`), printed by ``explain`` and kept by
``to_dict``; the choice and the run are in :mod:`faq.insideout.pieces`.

Examples
--------
>>> p = Pieces("a", (100, 200), (1, 4), (), (0.4, 0.3, 0.3), "est. 24.2 GiB")
>>> p.ranges()
['a < 100', '100 ≤ a < 200', 'a ≥ 200']
>>> print("\\n".join(p.lines()))
  runs in 3 pieces over a (est. 24.2 GiB): atoms 1, 4 restricted to a range of a each, every piece in-process; answers ⊕-combined
    piece 1: a < 100, est. 40% of the split rows
    piece 2: 100 ≤ a < 200, est. 30% of the split rows
    piece 3: a ≥ 200, est. 30% of the split rows
>>> Pieces.from_dict(p.to_dict(), plan_of=None) == p
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

__all__ = ["Pieces"]


@dataclass(frozen=True)
class Pieces:
    """How a plan runs in pieces: the variable split, its ranges, and each range's own plan
    (its fields are what ``explain`` prints and ``to_dict`` keeps).

    Attributes
    ----------
    variable : str
        The variable whose values are split.
    cuts : tuple of int
        Ascending cut points: piece ``i`` holds ``cuts[i-1] ≤ v < cuts[i]``
        (the first has no lower end, the last no upper one), so the pieces
        cover every value.
    atoms : tuple of int
        The atoms (1-based, as ``factor#k``) restricted to a piece's range.
    plans : tuple of Plan
        Each piece's plan, over the restricted atoms (renamed
        ``factor__column``, one name per restricted column of a factor).
    shares : tuple of float
        Each piece's estimated share of the split rows (the rows of the largest
        step through each value of ``variable``).
    reason : str
        Why the whole plan does not run in-process at once.
    free : bool
        ``variable`` is free: pieces' answers are concatenated, not ⊕-combined.
    """

    variable: str
    cuts: tuple[int, ...]
    atoms: tuple[int, ...]
    plans: tuple[Any, ...]
    shares: tuple[float, ...]
    reason: str
    free: bool = False

    def ranges(self) -> list[str]:
        """Each piece's range of :attr:`variable`, as text."""
        v, cuts = self.variable, self.cuts
        if not cuts:
            return [f"every {v}"]
        middle = [f"{lo} ≤ {v} < {hi}" for lo, hi in zip(cuts, cuts[1:])]
        return [f"{v} < {cuts[0]}", *middle, f"{v} ≥ {cuts[-1]}"]

    def lines(self) -> list[str]:
        """What ``explain`` prints for the pieces (the first piece's plan follows, from the caller)."""
        combine = "answers concatenated (the split variable is free)" if self.free else "answers ⊕-combined"
        atoms = ", ".join(map(str, self.atoms))
        lines = [f"  runs in {len(self.shares)} pieces over {self.variable} ({self.reason}): atoms {atoms} "
                 f"restricted to a range of {self.variable} each, every piece in-process; {combine}"]
        for i, (text, share) in enumerate(zip(self.ranges(), self.shares), start=1):
            lines.append(f"    piece {i}: {text}, est. {share:.0%} of the split rows")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (the pieces' plans by their own ``to_dict``)."""
        return {"variable": self.variable, "cuts": list(self.cuts), "atoms": list(self.atoms),
                "plans": [p.to_dict() for p in self.plans], "shares": list(self.shares), "reason": self.reason,
                "free": self.free}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], plan_of: Optional[Callable[[Mapping[str, Any]], Any]]) -> "Pieces":
        """The pieces :meth:`to_dict` wrote; ``plan_of`` reads a piece's plan (``Plan.from_dict``)."""
        plans = tuple(plan_of(p) for p in d["plans"]) if plan_of is not None else ()
        return cls(str(d["variable"]), tuple(int(c) for c in d["cuts"]), tuple(int(a) for a in d["atoms"]), plans,
                   tuple(float(s) for s in d["shares"]), str(d["reason"]), bool(d.get("free", False)))
