"""A maintained object reopened from its state directory, by the kind its manifest names.

Every maintained object saves a ``kind`` in its state's manifest
(:mod:`faq.incremental.store`); :func:`open_state` reopens it with that
class's own ``open`` (which takes no writer's lock: a reader never blocks the
writer).  The Spark data source (:mod:`faq.data_source`) and its change
reader (:mod:`faq.data_stream`) both start here, so neither imports the other
for it.

Examples
--------
>>> KINDS
('query', 'motif', 'truss', 'asof', 'fixpoint')
"""

from __future__ import annotations

from typing import Any

from faq.errors import StateDirectoryError

__all__ = ["KINDS", "open_state"]

#: The kinds of state :func:`open_state` reopens.
KINDS = ("query", "motif", "truss", "asof", "fixpoint")


def open_state(path: str) -> Any:
    """The maintained object saved in ``path``, reopened by its own class (no lock taken).

    Raises
    ------
    StateDirectoryError
        No state there, one of a kind the source does not read, or a fixpoint kept on the executors.
    """
    from faq.incremental.store import Store

    meta = Store(path).manifest()
    kind = meta.get("kind")
    if kind == "query":
        from faq.incremental.maintained import MaintainedQuery

        return MaintainedQuery.open(path)
    if kind == "motif":
        from faq.graphs.track import MotifTracker

        return MotifTracker.open(path)
    if kind == "truss":
        from faq.graphs.maintained_truss import MaintainedTruss

        return MaintainedTruss.open(path)
    if kind == "asof":  # a view or a locked join, as it was saved
        from faq.asof.oneshot import open_join

        return open_join(path)
    if kind == "fixpoint":
        from faq.placement_policy import EXECUTORS
        from faq.recursive.maintained import MaintainedFixpoint

        if meta.get("placement") == EXECUTORS:  # its data is read back by Spark: not from inside a task
            raise StateDirectoryError(path, "it holds a fixpoint kept on the executors, which Spark reads back itself: "
                                            "use MaintainedFixpoint.open(path).df")
        return MaintainedFixpoint.open(path)
    raise StateDirectoryError(path, f"it holds a {kind!r} state; the faq data source reads {', '.join(KINDS)} "
                                    "states (reopen this one with its own open())")
