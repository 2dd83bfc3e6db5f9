"""Incremental maintenance: delta factors, exactly-once delta rules, durable state.

See :mod:`faq.incremental.maintained` (maintained queries),
:mod:`faq.incremental.rules` (the delta rules), :mod:`faq.incremental.streaming`
(Structured Streaming as the source of changes) and :mod:`faq.incremental.calculus` (differentiate
and integrate; the as-of join is :mod:`faq.asof`); :func:`~faq.incremental.change.change_stream`
makes the changes of any maintained object one change stream the calculus takes.
"""

from faq.incremental.calculus import differentiate, integrate
from faq.incremental.change import BatchEvent, Change, change_stream
from faq.incremental.maintained import MaintainedQuery
from faq.incremental.streaming import stream

__all__ = [
    "BatchEvent",
    "Change",
    "MaintainedQuery",
    "change_stream",
    "differentiate",
    "integrate",
    "stream",
]


#: Names that moved to the job that uses them; still found here, with a warning, for code of earlier rounds.
_MOVED = {"MotifTracker": "faq.graphs.track", "MotifChange": "faq.graphs.track"}


def __getattr__(name: str):  # noqa: ANN202 - PEP 562
    """``faq.incremental.MotifTracker`` of earlier rounds: now :class:`faq.graphs.track.MotifTracker`."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    import warnings

    warnings.warn(f"faq.incremental.{name} moved to {_MOVED[name]}.{name} (faq.graphs.{name})",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(_MOVED[name]), name)
