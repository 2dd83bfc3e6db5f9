"""What the joins read of a plan step's strategy: one value, passed whole to either runner.

The planner chooses a step's strategy (``Strategy`` of
:mod:`faq.insideout.physical`) and hands it, whole, to the runner of the
step's placement: :func:`faq.joins.join_bag` on the executors,
:func:`faq.joins.local.join_local` in-process.  The joins never import the
planner (the plan may import the joins, not the reverse), so they read it
through :class:`JoinStrategy`, the fields both runners need.  Callers with no
plan -- a partitioned cell, a test -- name a strategy and the choices they
make with :class:`NamedStrategy`.

Examples
--------
>>> NamedStrategy("broadcast").aggregate_in_tasks      # a plain strategy ⊕-aggregates while it joins
True
>>> as_strategy("binary")
NamedStrategy(name='binary', aggregate_in_tasks=True, shared=(), shares=(), batches=1, index_dir=None, binary_kernel=None, numpy_kernel=False, sparse_kernel=False, dense_rows=False, oriented_count=False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol, Union

__all__ = ["JoinStrategy", "NamedStrategy", "as_strategy"]


class JoinStrategy(Protocol):
    """What the runners read of a plan step's strategy (the planner's ``Strategy`` has these fields).

    ``name`` is ``"binary"``, ``"broadcast"``, ``"partitioned"`` or
    ``"shuffle"``; the rest are the generic join's arguments of the same
    meaning (:func:`~faq.joins.generic.generic_join`):
    ``aggregate_in_tasks`` decided by the planner
    (:func:`~faq.joins.task_aggregation.task_aggregation`), ``shared`` index
    groups, ``shares`` the partitioned grid as (variable, share) pairs,
    ``batches`` of the shuffle strategy, ``index_dir`` of the broadcast one,
    ``binary_kernel`` the merges a step runs (an in-process binary step, or a
    partitioned strategy's cells over an array ring), ``numpy_kernel`` the
    plan's choice of the numpy kernel over the compiled loop,
    ``sparse_kernel`` its choice of masked sparse products for an in-process
    triangle (:mod:`faq.joins.sparse_triangle`), ``dense_rows`` its choice of
    dense-row sums for one with large inputs (:mod:`faq.joins.dense_rows`),
    ``oriented_count`` its choice of one relation's oriented triangle count
    (:mod:`faq.joins.oriented_triangle`) before either or the loop.
    """

    name: str
    aggregate_in_tasks: bool
    shared: tuple[tuple[int, ...], ...]
    shares: tuple[tuple[str, int], ...]
    batches: int
    index_dir: Optional[str]
    binary_kernel: Optional[str]
    numpy_kernel: bool
    sparse_kernel: bool
    dense_rows: bool
    oriented_count: bool


@dataclass(frozen=True)
class NamedStrategy:
    """A strategy given by its name and the choices of a caller without a plan (the fields of :class:`JoinStrategy`)."""

    name: str
    aggregate_in_tasks: bool = True
    shared: tuple[tuple[int, ...], ...] = ()
    shares: tuple[tuple[str, int], ...] = ()
    batches: int = 1
    index_dir: Optional[str] = None
    binary_kernel: Optional[str] = None
    numpy_kernel: bool = False
    sparse_kernel: bool = False
    dense_rows: bool = False
    oriented_count: bool = False


def as_strategy(strategy: Union[str, JoinStrategy]) -> JoinStrategy:
    """``strategy`` itself, or a :class:`NamedStrategy` of that name."""
    return NamedStrategy(strategy) if isinstance(strategy, str) else strategy
