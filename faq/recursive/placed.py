"""One-shot fixpoints placed as maintained ones are: on the driver while the edges fit its budget.

:func:`faq.shortest_paths`, :func:`faq.widest_paths`, :func:`faq.reachability`
and :func:`faq.connected_components` answer once.  On Spark every semi-naive
round is a few jobs -- about a second a round on this machine whatever the
graph's size, so four edges took 2.5 s -- while the same rounds on a resident
index take milliseconds.  So :func:`solve_placed` decides as
:class:`~faq.recursive.maintained.MaintainedFixpoint` does, from the edges'
estimated index size (:func:`~faq.recursive.maintained.fixpoint_index_bytes`)
and the driver's budget (:func:`~faq.incremental.rules.budget_bytes`, the
setting one-shot queries read):

* ``"driver"``: the edges are collected (one job, after the count), the
  fixpoint solved on the driver by the maintained fixpoint's propagation,
  and the answer handed back as a Spark DataFrame built from the driver's
  rows (not cached: nothing to release);
* ``"executors"``: the semi-naive rounds of :mod:`faq.recursive.seminaive`.

The answer is the same :class:`~faq.recursive.seminaive.FixpointResult`
either way; its ``placement`` and ``placement_reason`` say where it was
solved and why.

Examples
--------
>>> from faq.factor import factor_of
>>> edges = factor_of([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0)], ["src", "dst"], "min_plus")
>>> with solve_placed(edges, "min_plus", source=1) as result:
...     sorted(map(tuple, result.df.collect())), result.placement
([(1, 0.0), (2, 4.0), (3, 5.0)], 'driver')
"""

from __future__ import annotations

import time
from typing import Any, Optional, Union

import pyarrow as pa

from faq.factor import Factor
from faq.incremental.rules import DRIVER, EXECUTORS, budget_bytes, choose_placement
from faq.recursive.edge_input import edge_table, row_count
from faq.recursive.propagate import fixpoint_ops
from faq.recursive.seminaive import DST, MIN_LABEL, SRC, WEIGHT, FixpointResult, check_semiring

__all__ = ["solve_placed"]


def solve_placed(edges: Factor, semiring: Any = "min_plus", *, source: Optional[int] = None,
                 components: bool = False, progress: Any = None, placement: str = "auto",
                 budget: Optional[Union[int, str]] = None) -> FixpointResult:
    """Paths from ``source`` (or connected components) on the driver or on Spark (module notes).

    Parameters
    ----------
    edges : Factor
        Two variables; its values are the weights (ignored for reachability and components).
    semiring : str or Semiring
        ``boolean``, ``min_plus`` or ``max_min`` (or another idempotent one); ignored for components.
    source : int, optional
        Paths from this node (``None`` with ``components=True``).
    components : bool
        Connected components instead of paths.
    progress : callable or Reporter, optional
        Notes while solving.
    placement : {"auto", "driver", "executors"}
    budget : int or str, optional
        The driver's budget (default: the session's ``spark.faq.localMemory``).
    """
    from faq.recursive import seminaive
    from faq.recursive.maintained import MaintainedFixpoint, fixpoint_index_bytes

    semiring = MIN_LABEL if components else check_semiring(semiring)
    started = time.perf_counter()
    if fixpoint_ops(semiring) is None:
        where, reason = EXECUTORS, f"semiring {semiring.name!r} has no numpy form"
    else:
        where, reason = choose_placement(fixpoint_index_bytes(row_count(edges), components), budget_bytes(budget),
                                         placement)
    if where == EXECUTORS:
        result = seminaive.connected_components(edges, progress=progress) if components else \
            seminaive.paths(edges, source, semiring, progress=progress)
    else:
        # Collected once here: handed the Factor, the maintained fixpoint would count its rows again.
        src, dst, weight = edge_table(edges)
        collected = pa.table({SRC: src, DST: dst, WEIGHT: weight})
        with MaintainedFixpoint(collected, semiring, source=source, components=components, progress=progress,
                                placement=DRIVER) as solved:
            result = FixpointResult(factor=solved.state.with_name(f"{edges.name}*"),
                                    iterations=solved.initial_iterations, seconds=0.0, edges=solved.edge_rows)
    result.seconds = time.perf_counter() - started
    result.placement, result.placement_reason = where, reason
    return result
