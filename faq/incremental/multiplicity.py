"""The names a delta's multiplicity column goes by, and the check that a delta uses the one its reader reads.

A delta row says how many times its row is inserted (or deleted, below
zero).  Two names are in use, each for its own reason, and both stay:

* ``value`` -- a maintained query's factor delta (:mod:`faq.incremental.maintained`):
  a delta is a factor, whose value column is ``value`` (or the factor's own
  value column); in a ring it is the signed change, e.g. ``+1`` / ``-1`` in
  ``counting``;
* ``diff`` -- every delta of *rows* rather than factor values: a maintained
  model's table rows (:mod:`faq.learning.maintained`), a tracked motif's edge
  changes (:mod:`faq.graphs.track`), a maintained fixpoint's edge
  changes (:mod:`faq.recursive.maintained`, where ``value`` is a name of the
  edge's *weight*), and a change's output (:class:`~faq.incremental.change.Change`).

A delta that lacks the name its reader reads but carries the other one is a
mistake that would otherwise pass silently: the reader would take every row
as one insertion (a model's delete rows would be added).  So every reader
calls :func:`check_multiplicity`, which refuses it, naming the column
expected (:class:`~faq.errors.InvalidDeltaError`, entry
``MULTIPLICITY_COLUMN``).  A column of that name that the reader reads as
data (a feature named ``value``, a key named ``diff``) is no mistake.

Examples
--------
>>> check_multiplicity(["a", "b", "diff"], "diff", factor="sales", target="a maintained model")
>>> check_multiplicity(["a", "b", "value"], "diff", factor="sales", target="a maintained model")
Traceback (most recent call last):
...
faq.errors.InvalidDeltaError: [MULTIPLICITY_COLUMN] delta for 'sales': a maintained model reads each row's ...
>>> check_multiplicity(["a", "value"], "diff", factor="sales", target="a maintained model", data=["value"])
"""

from __future__ import annotations

from typing import Iterable, Optional

from faq.errors import InvalidDeltaError

__all__ = ["MULTIPLICITY_NAMES", "check_multiplicity"]

#: Every name a delta's multiplicity column goes by (see the module notes).
MULTIPLICITY_NAMES = ("diff", "value")


def check_multiplicity(columns: Iterable[str], expected: str, *, factor: str, target: str,
                       data: Iterable[str] = (), meaning: Optional[str] = None,
                       default: Optional[str] = None) -> None:
    """Refuse a delta that lacks its multiplicity column ``expected`` but carries another known name of one.

    Parameters
    ----------
    columns : iterable of str
        The delta's columns.
    expected : str
        The column the reader takes each row's multiplicity (or value) from.
    factor : str
        The factor or table the delta changes (for the message).
    target : str
        What reads it, e.g. ``"a maintained model"`` (for the message).
    data : iterable of str
        Columns the reader reads as data (keys, features, weights): never a wrong multiplicity.
    meaning, default : str, optional
        What ``expected`` holds, and what a row counts as without it (for the message).

    Raises
    ------
    InvalidDeltaError
        Entry ``MULTIPLICITY_COLUMN``; ``expected`` and ``found`` name the two columns.
    """
    columns = set(columns)
    if expected in columns:
        return
    data = set(data)
    found = next((name for name in MULTIPLICITY_NAMES if name != expected and name in columns and name not in data),
                 None)
    if found is None:
        return
    extra = {k: v for k, v in (("meaning", meaning), ("default", default)) if v is not None}
    raise InvalidDeltaError(error_class="MULTIPLICITY_COLUMN", factor=factor, expected=expected, found=found,
                            target=target, **extra)
