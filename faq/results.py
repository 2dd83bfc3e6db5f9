"""The shape every job's answer has: ``.df``, ``.plan``, ``explain()``, ``close()`` and ``with``, a short repr.

A user who has met one faq result has met them all
(docs/design.md, "One API"):

* ``.df`` -- the answer as a Spark DataFrame (a count's is one row);
* ``.plan`` -- what ran, as a value: a :class:`~faq.insideout.planner.Plan`,
  a :class:`Plans` of several, or an :class:`Explanation` for jobs that are
  not one query (fixpoints, trusses, as-of joins);
* ``explain()`` -- that plan value; its ``str`` is its text, so ``print``
  shows it and a notebook shows it as the value of a cell;
* ``close()`` and ``with`` -- release what the answer holds (nothing, for
  a count);
* ``repr`` -- one short line (:meth:`Answer.summary`), never a dump.

:class:`Answer` gives the last three to a result class that has ``plan``,
``df`` and ``summary``.

Examples
--------
>>> facts = Explanation("k-truss", ("edges: 3", "largest k: 3"))
>>> print(facts)
k-truss
  edges: 3
  largest k: 3
>>> facts
Explanation('k-truss', 2 line(s))
>>> class Count(Answer):
...     plan = facts
...     def summary(self):
...         return "count=1"
>>> with Count() as answer:
...     answer, answer.explain() is facts
(Count(count=1), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "Explanation", "Plans", "count_frame"]


@dataclass(frozen=True)
class Explanation:
    """What a job that is not one query did or will do: a title and lines; its ``str`` is the text."""

    title: str
    lines: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "\n".join([self.title, *(f"  {line}" for line in self.lines)])

    def __repr__(self) -> str:
        return f"Explanation({self.title!r}, {len(self.lines)} line(s))"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("..." if cycle else str(self))

    def to_dict(self) -> dict:
        """JSON-ready: the title and the lines."""
        return {"title": self.title, "lines": list(self.lines)}


class Plans(tuple):
    """The plans of a job that ran several queries (a motif counted by inclusion–exclusion)."""

    def __str__(self) -> str:
        return "\n\n".join(str(plan) for plan in self)

    def __repr__(self) -> str:
        return f"Plans({len(self)} plan(s))"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("..." if cycle else str(self))


def count_frame(column: str, value: int) -> Any:
    """A one-row Spark DataFrame of a count (the ``.df`` of a count's answer), made when asked."""
    import pyarrow as pa

    from faq.spark import get_session, real_session

    # From Arrow: a local relation (a list of rows would be an RDD, its reads Python worker tasks).
    return real_session(get_session()).createDataFrame(pa.table({column: pa.array([int(value)], pa.int64())}))


class Answer:
    """Mixin: ``explain()``, ``close()`` and ``with``, and a one-line ``repr`` from :meth:`summary`.

    A class that holds Spark resources mixes in :class:`faq.scope.Owner`
    before this one, so its ``close`` releases them.  A dataclass using it
    sets ``repr=False`` (else the generated repr, plan and all, wins).
    """

    plan: Any

    def explain(self) -> Any:
        """The plan value of what ran; ``print`` it for the text."""
        return self.plan

    def close(self) -> None:
        """Release what this answer holds (nothing, unless a subclass says otherwise)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def summary(self) -> str:
        """The inside of the one-line ``repr``."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary()})"
