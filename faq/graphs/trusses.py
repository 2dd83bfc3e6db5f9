"""``faq.truss``: every edge's trussness, once (:mod:`faq.graphs.truss`) or kept current (:mod:`faq.graphs.maintained_truss`).

Examples
--------
>>> t = truss([(1, 2), (2, 3), (1, 3)], maintained=True)
>>> t.apply([(3, 4, 1)]).info["inserted"], t.counts
(1, {2: 1, 3: 3})
>>> truss([(1, 2), (2, 3), (1, 3)]).counts
{3: 3}
"""

from __future__ import annotations

from typing import Any, Optional

from faq.events import Progress
from faq.spark_ui import described

__all__ = ["truss"]


@described("truss")
def truss(edges: Any, k: Optional[int] = None, *, progress: Progress = None,
          maintained: bool = False, state: Optional[str] = None, work_limit: Optional[int] = None,
          placement: Optional[str] = None, path: Optional[str] = None) -> Any:
    """Every edge's trussness; with ``maintained=True``, kept current under batches of edge changes.

    Parameters
    ----------
    edges : path, Spark or pandas DataFrame (``src``, ``dst``), Arrow table, Factor or tuples
        The graph; read or collected on the driver.
    k : int, optional
        At least 2: the k-truss's edges are what ``table()`` gives by default.
    progress : callable, optional
        Receives a :class:`~faq.events.NoteEvent` after each phase (maintained:
        a :class:`~faq.incremental.change.BatchEvent` per batch).
    maintained : bool
        Return a :class:`~faq.graphs.maintained_truss.MaintainedTruss` that
        keeps every trussness exact under ``apply(changes)`` and ``stream(...)``.
    state : str, optional
        With ``maintained``: keep the state durable in this new or empty directory.
    work_limit : int, optional
        With ``maintained``: the work after which a batch's repair stops and it is recomputed instead.
    placement : {"auto", "driver"}, optional
        A truss runs on the driver (its loops are compiled; Spark DataFrames
        are collected once); "executors" is refused: a truss on Spark is not built.
    path : str, optional
        Deprecated name of ``state``.

    Returns
    -------
    TrussResult, or MaintainedTruss with ``maintained=True``

    Examples
    --------
    >>> import faq
    >>> result = faq.truss([(1, 2), (2, 3), (1, 3), (3, 4)])   # one triangle and a pendant edge
    >>> result.counts, result.max_k
    ({2: 1, 3: 3}, 3)
    >>> with faq.truss([(1, 2), (2, 3)], maintained=True) as kept:
    ...     _ = kept.apply([(1, 3, 1)])                        # closing the triangle
    ...     kept.max_k
    3
    """
    from faq.errors import InvalidArgumentError
    from faq.inputs import state_directory
    from faq.placement_policy import DRIVER, checked

    if placement is not None and checked(placement) not in ("auto", DRIVER):
        raise InvalidArgumentError(argument="placement", value=placement,
                                   reason="a truss runs on the driver; one on the executors is not built")
    path = state_directory(state, path, "faq.truss")
    if maintained:
        from faq.graphs.maintained_truss import MaintainedTruss

        return MaintainedTruss(edges, k, progress=progress, path=path, work_limit=work_limit)
    for name, value in (("state", path), ("work_limit", work_limit)):
        if value is not None:
            raise InvalidArgumentError(argument=name, value=value, reason="applies to a maintained truss only "
                                                                          "(maintained=True)")
    from faq.graphs.truss import truss_decomposition as decomposition

    return decomposition(edges, k, progress=progress)
