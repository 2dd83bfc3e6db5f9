"""What a job's ``progress=`` callable receives: events of one type (docs/design.md, "One API").

Every job reports through ``progress=``, a callable taking a
:class:`ProgressEvent`.  Whatever the job, an event has

* ``kind`` -- ``"start"`` and ``"done"`` of a step or a batch, ``"load"``
  (a graph's edges read), ``"skip"`` (a stream's micro-batch applied
  already), ``"note"`` (a line about what runs);
* ``description`` -- what it is about, in words;
* ``rows`` and ``seconds`` -- on ``"done"`` (and ``"load"``): what it made
  and took; None otherwise.

The kinds of job add their own fields: a query's steps are
:class:`~faq.insideout.in_process.StepEvent` s (``step``, ``total``,
``note``), a maintained answer's batches
:class:`~faq.incremental.change.BatchEvent` s (``version``, ``label``), and
a job's lines :class:`NoteEvent` s.  All are ``ProgressEvent`` s, and their
``str`` is a readable line.

Examples
--------
>>> seen = []
>>> note = notes_to(seen.append)        # where a job's lines go: events for a plain callable
>>> note("as-of join on the driver")
>>> seen, str(seen[0]), isinstance(seen[0], ProgressEvent)
([NoteEvent(kind='note', description='as-of join on the driver')], 'as-of join on the driver', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

__all__ = ["ProgressEvent", "NoteEvent", "Progress", "notes_to"]


class ProgressEvent:
    """The one type every ``progress=`` callable receives (see the module notes).

    Attributes
    ----------
    kind : str
        ``"start"``, ``"done"``, ``"load"``, ``"skip"`` or ``"note"``.
    description : str
        What the event is about.
    rows : int or None
        On ``"done"``: rows made (a step's output, a batch's changed rows).
    seconds : float or None
        On ``"done"``: how long it took.

    Examples
    --------
    >>> import faq
    >>> events = []
    >>> _ = faq.count_triangles([(1, 2), (2, 3), (1, 3)], progress=events.append)
    >>> all(isinstance(e, faq.ProgressEvent) for e in events), [e.kind for e in events]
    (True, ['load', 'start', 'done'])
    """

    kind: str
    description: str
    rows: Optional[int] = None
    seconds: Optional[float] = None

    def __str__(self) -> str:
        done = "" if self.rows is None else f": {self.rows} rows"
        took = "" if self.seconds is None else f" in {self.seconds:.3g} s"
        return f"{self.kind} {self.description}{done}{took}"


@dataclass(frozen=True)
class NoteEvent(ProgressEvent):
    """A line about what a job runs (where it runs, what it read, why it recomputes)."""

    kind: str
    description: str

    def __str__(self) -> str:
        return self.description


Progress = Optional[Callable[[ProgressEvent], None]]


def notes_to(progress: Any) -> Callable[[str], None]:
    """Where a job's lines go: a reporter's ``note`` (the CLI's), a :class:`NoteEvent` to a plain callable,
    nowhere for None."""
    if progress is None:
        return lambda text: None
    note = getattr(progress, "note", None)
    if callable(note):
        return note
    # (a notes function handed on to a part of the job that asks notes_to again passes events through)
    return lambda text: progress(text if isinstance(text, ProgressEvent) else NoteEvent("note", text))
