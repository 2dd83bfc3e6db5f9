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
* ``"executors"``: the edges held on the executors, partitioned, each
  round over the frontier with the values on the driver
  (:mod:`faq.recursive.executor_edges`; on a local master every round of the
  solve answered by the tasks of one job that stay for them,
  :mod:`faq.recursive.resident_rounds`), where the semiring has a numpy form,
  the nodes fit the driver's budget and the executors can read a directory
  the driver names; else the Spark SQL rounds of
  :mod:`faq.recursive.seminaive` (``rounds="spark"`` asks for them: the
  baseline of bench/bench_fixpoint_placements.py).

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

from faq.errors import InvalidArgumentError
from faq.events import Progress
from faq.factor import Factor
from faq.incremental.rules import budget_bytes
from faq.placement_policy import DRIVER, EXECUTORS, for_indexes
from faq.recursive.edge_files import EdgeScan, edge_scan
from faq.recursive.edge_input import edge_table, row_count
from faq.recursive.propagate import fixpoint_ops, no_fixpoint_form
from faq.recursive.seminaive import DST, MIN_LABEL, SRC, WEIGHT, FixpointResult, check_semiring

__all__ = ["solve_placed", "ROUNDS"]

#: How the rounds of a fixpoint on the executors run (:func:`solve_placed`).
ROUNDS = ("auto", "one-hop", "job-per-round", "spark")


def solve_placed(edges: Factor, semiring: Any = "min_plus", *, source: Optional[int] = None,
                 components: bool = False, progress: Progress = None, placement: str = "auto",
                 budget: Optional[Union[int, str]] = None, rounds: str = "auto") -> FixpointResult:
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
    rounds : {"auto", "one-hop", "job-per-round", "spark"}
        On the executors: ``"auto"`` holds the edges there and runs each round over the frontier, hop
        after hop within each part (:mod:`faq.recursive.executor_edges`), every round answered by the
        tasks of one job that stay for the solve (:mod:`faq.recursive.resident_rounds`, on a local
        master), where the semiring has a numpy form and the nodes fit the budget; ``"one-hop"`` the same,
        one hop a round; ``"job-per-round"`` the same, one Spark job a round; ``"spark"`` always runs the
        Spark SQL rounds (:mod:`faq.recursive.rounds`).  The last three are baselines.
    """
    if rounds not in ROUNDS:
        raise InvalidArgumentError(argument="rounds", value=rounds, reason=f"expected one of {', '.join(ROUNDS)}")
    from faq.recursive import seminaive
    from faq.recursive.maintained import MaintainedFixpoint, fixpoint_index_bytes

    semiring = MIN_LABEL if components else check_semiring(semiring)
    started = time.perf_counter()
    no_numpy = no_fixpoint_form(semiring)
    scan = edge_scan(edges)  # local Parquet files: their rows known from the footers, no count job
    rows = scan.rows if scan is not None else row_count(edges)
    where, reason = for_indexes(placement, fixpoint_index_bytes(rows, components), budget_bytes(budget), no_numpy)
    result = None
    if where == EXECUTORS and fixpoint_ops(semiring) is not None and rounds != "spark":
        result, reason = _solve_held(edges, semiring, source, components, progress, budget_bytes(budget), reason,
                                     hops=rounds != "one-hop", scan=scan, resident=rounds != "job-per-round")
    if where == EXECUTORS and result is None:  # no numpy form, nodes over the budget, or no shared directory
        result = seminaive.components_on_spark(edges, progress=progress) if components else \
            seminaive.paths_on_spark(edges, source, semiring, progress=progress)
    elif where == DRIVER:
        # Collected once here: handed the Factor, the maintained fixpoint would count its rows again.
        # null values: no edge, as on the executors; the files found above read, not looked for again
        src, dst, weight = edge_table(edges, valued=not components, scan=scan)
        collected = pa.table({SRC: src, DST: dst, WEIGHT: weight})
        with MaintainedFixpoint(collected, semiring, source=source, components=components, progress=progress,
                                placement=DRIVER) as solved:
            result = FixpointResult(factor=solved.state.with_name(f"{edges.name}*"),
                                    iterations=solved.initial_iterations, seconds=0.0, edges=solved.edge_rows)
    result.seconds = time.perf_counter() - started
    result.placement, result.placement_reason = where, reason
    return result


def _solve_held(edges: Factor, semiring: Any, source: Optional[int], components: bool, progress: Progress, budget: int,
                reason: str, hops: bool = True, scan: Optional[EdgeScan] = None, resident: bool = True
                ) -> tuple[Optional[FixpointResult], str]:
    """The fixpoint with the edges held on the executors and the values on the driver
    (:mod:`faq.recursive.held_solve`); None, with why, where that cannot run (then the Spark rounds)."""
    from faq.recursive.held_solve import answer_frame, solve_held
    from faq.recursive.seminaive import NODE, VALUE, edge_frame, symmetric_edges

    # loops kept for components: a loop names a node that has no other edge
    frame = symmetric_edges(edges, loops=True) if components else edge_frame(edges, semiring)
    answer, how = solve_held(frame, semiring, source=source, components=components, budget=budget,
                             progress=progress, hops=hops, scan=scan, resident=resident)
    if answer is None:
        return None, f"{reason}; {how}: Spark rounds"
    name = f"{edges.name}-components" if components else f"{edges.name}*"
    factor = Factor(df=answer_frame(edges.session, answer, semiring), variables=(NODE,), semiring=semiring,
                    value=VALUE, name=name)
    return FixpointResult(factor=factor, iterations=answer.iterations, seconds=0.0, edges=answer.edges), f"{reason}; {how}"
