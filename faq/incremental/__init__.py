"""Incremental maintenance: delta factors, exactly-once delta rules, motif tracking, durable state.

See :mod:`faq.incremental.maintained` (maintained queries),
:mod:`faq.incremental.rules` (the delta rules), :mod:`faq.incremental.streaming`
(Structured Streaming as the source of changes), :mod:`faq.incremental.track`
(motif change streams) and :mod:`faq.incremental.calculus` (differentiate,
integrate and the as-of join); :func:`~faq.incremental.change.change_stream`
makes the changes of any maintained object one change stream the calculus takes.
"""

from faq.incremental.calculus import asof_join_window, differentiate, integrate
from faq.incremental.change import BatchEvent, Change, change_stream
from faq.incremental.maintained import MaintainedQuery
from faq.incremental.streaming import stream
from faq.incremental.track import MotifChange, MotifTracker

__all__ = [
    "BatchEvent",
    "Change",
    "MaintainedQuery",
    "MotifChange",
    "MotifTracker",
    "asof_join_window",
    "change_stream",
    "differentiate",
    "integrate",
    "stream",
]
