"""A fixpoint solved from scratch with its edges held on the executors and its values on the driver.

The from-scratch solve both Spark-side users share: the one-shot fixpoints
placed on the executors (:func:`faq.recursive.placed.solve_placed`) and the
maintained fixpoint above the driver's budget
(:class:`~faq.recursive.spark_maintained.SparkFixpoint`: its first answer and
every recomputation, which deletions need there).  The edges go to the
executors once (:class:`~faq.recursive.executor_edges.ExecutorEdges`), the
round loop of :mod:`faq.recursive.core` runs on the driver over a dense value
array (:func:`~faq.recursive.propagate.propagate`), each round over the
frontier answered by the tasks of one job that stay for the whole solve
(:mod:`faq.recursive.resident_rounds`; on a local master) or else by one job
a round.

:func:`solve_held` answers None, with the reason, where this cannot run: a
semiring without numpy forms, no directory the executors can read
(``spark.faq.indexDir``), or more nodes than the driver's budget holds
(:data:`~faq.recursive.executor_edges.NODE_BYTES` each).  The caller then runs
the Spark SQL rounds (:mod:`faq.recursive.rounds`).

Examples
--------
>>> from faq.spark import get_session
>>> from faq.semirings import MIN_PLUS
>>> frame = get_session().createDataFrame([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0)], "src long, dst long, weight double")
>>> answer, how = solve_held(frame, MIN_PLUS, source=1, budget=1 << 30)
>>> sorted(zip(answer.ids.tolist(), answer.values.tolist())), how.startswith("edges held on the executors")
([(1, 0.0), (2, 4.0), (3, 5.0)], True)
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from faq.events import Progress
from faq.recursive.core import DEFAULT_MAX_ITERATIONS
from faq.recursive.seminaive import NODE, VALUE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.recursive.edge_files import EdgeScan

    from faq.semirings import Semiring

__all__ = ["HeldAnswer", "solve_held", "answer_frame"]


@dataclass(frozen=True)
class HeldAnswer:
    """The nodes with a value (``ids``, ``values``), the rounds run, and how the edges were held."""

    ids: np.ndarray
    values: np.ndarray
    iterations: int
    edges: int
    parts: int
    jobs: int


def solve_held(frame: "DataFrame", semiring: "Semiring", *, source: Optional[int] = None, components: bool = False,
               extra_nodes: Optional[np.ndarray] = None, budget: int, progress: Progress = None, hops: bool = True,
               max_iterations: int = DEFAULT_MAX_ITERATIONS, scan: Optional["EdgeScan"] = None,
               resident: bool = True) -> tuple[Optional[HeldAnswer], str]:
    """Paths from ``source`` (or, ``components``, min labels) over ``frame`` (``src``, ``dst``, ``weight``;
    for components both directions already); ``(answer, how)``, or ``(None, why not)`` (module notes).

    ``extra_nodes`` (components): nodes that are their own component unless an edge joins them to another.
    ``hops=False`` makes each round one hop (a baseline).  ``scan``: the same rows as ``frame``, in local Parquet
    files the executors read themselves (:func:`faq.recursive.edge_files.edge_scan`; for components, the rows
    of the factor, each taken both ways).  ``resident``: every
    round answered by the tasks of one job that stay for the solve (:mod:`faq.recursive.resident_rounds`, on
    a local master); ``False``, or where they cannot all start, one job a round (a baseline).
    """
    from faq.settings import index_dir
    from faq.recursive.executor_edges import NODE_BYTES, ExecutorEdges
    from faq.recursive.propagate import fixpoint_ops
    from faq.recursive.resident_rounds import ResidentRounds, resident_slots
    from faq.recursive.rounds import reporter
    from faq.spark import is_connect

    ops = fixpoint_ops(semiring)
    if ops is None:
        from faq.recursive.propagate import no_fixpoint_form

        return None, no_fixpoint_form(semiring)
    spark = frame.sparkSession
    directory = index_dir(spark, is_connect(spark))
    if directory is None:
        return None, "no directory the executors can read is known (set spark.faq.indexDir)"
    note = reporter(progress)
    with ExecutorEdges.write(frame, ops, value_type=semiring.value_type, directory=directory, scan=scan,
                             symmetric=components) as held:
        nodes = len(held.domain)
        if nodes * NODE_BYTES > budget:
            return None, f"{nodes} nodes need ~{nodes * NODE_BYTES >> 20} MiB on the driver, over its budget"
        note(f"{held.rows} edge(s) held on the executors in {held.parts} part(s); {nodes} node(s) on the driver")
        if not hops:
            held.hops_after = None
        domain = held.domain
        values = np.full(nodes, ops.zero, dtype=ops.dtype)
        slots = resident_slots(spark) if resident else None
        staying = ResidentRounds.start(held, slots=slots) if slots else None
        with staying if staying is not None else contextlib.nullcontext():
            solved, frontier, first_job = _rounds(held, values, ops, semiring, source, components, max_iterations,
                                                  note)
        codes = np.flatnonzero(values != ops.zero)
        ids, found = domain.decode(codes).astype(np.int64, copy=False), values[codes]
        if not components and not len(frontier):  # a source with no edge: itself alone
            ids, found = np.array([source], dtype=np.int64), np.array([ops.one], dtype=ops.dtype)
        if components and extra_nodes is not None and len(extra_nodes):
            alone = np.setdiff1d(np.asarray(extra_nodes, dtype=np.int64), ids)  # no edge: a component of its own
            ids, found = np.concatenate([ids, alone]), np.concatenate([found, alone.astype(ops.dtype)])
        within = (f"hops within each part from round {held.hops_after + 1} on" if hops and not held.improving
                  else "one hop a round")
        jobs = (f"{held.rounds} round(s) answered by the tasks of one job, which stay for them"
                if staying is not None else f"{held.rounds} job(s) over the frontier")
        answer = HeldAnswer(ids, found, first_job + solved.iterations, held.rows, held.parts,
                            1 if staying is not None else held.rounds)
    read = ", read from their Parquet files by the tasks" if scan is not None else ""
    how = f"edges held on the executors ({answer.parts} parts{read}), values on the driver: {jobs}, {within}"
    return answer, how


def _rounds(held: Any, values: np.ndarray, ops: Any, semiring: "Semiring", source: Optional[int], components: bool,
            max_iterations: int, note: Any) -> tuple[Any, np.ndarray, int]:
    """The round loop over ``held`` (``values`` updated in place): what
    :func:`~faq.recursive.propagate.propagate` found, the first frontier, and the rounds before the loop
    (components' labels: one)."""
    from faq.recursive.propagate import NO_NODES, propagate, relax

    domain, nodes, first_job = held.domain, len(held.domain), 0
    if components:
        values[:] = domain.decode(np.arange(nodes, dtype=np.int64))  # every node labelled with its id
        # the first round: every node proposes its label (nothing to send); then from what improved
        _, dst, best = held.proposals(NO_NODES, values, labels=True)
        frontier, first_job = relax(values, dst, best, ops), 1
    else:
        frontier = domain.lookup(np.array([source], dtype=np.int64))
        frontier = frontier[frontier >= 0]
        values[frontier] = ops.one
    solved = propagate(values, [held], ops, frontier=frontier, nodes=nodes if held.improving else None,
                       max_iterations=max_iterations, semiring=semiring.name, record=False,
                       example=lambda c: int(domain.decode(np.array([c]))[0]), progress=note)
    return solved, frontier, first_job


def answer_frame(spark: Any, answer: HeldAnswer, semiring: "Semiring") -> "DataFrame":
    """The answer as a ``(node, value)`` Spark DataFrame made from the driver's rows (not cached)."""
    import pandas as pd
    import pyarrow as pa

    from faq.handback import empty_frame, spark_frame

    schema = f"{NODE} bigint, {VALUE} {semiring.value_type}"
    if getattr(answer.values, "dtype", None) is not None and answer.values.dtype.kind in "biuf":  # plain values
        return spark_frame(spark, pa.table({NODE: pa.array(answer.ids), VALUE: pa.array(answer.values)}), schema)
    if len(answer.ids) == 0:
        return empty_frame(spark, [NODE, VALUE], schema)
    return spark.createDataFrame(pd.DataFrame({NODE: answer.ids, VALUE: answer.values}), schema)
