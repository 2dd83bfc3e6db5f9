"""The semi-naive loop of every fixpoint, wherever its state lives: rounds until nothing improves.

A fixpoint is solved the same way by each placement: a *round* joins the
frontier (the nodes whose values improved last round) with the edges,
⊕-merges the proposals into the state, and the nodes that improved are the
next frontier.  A placement says how one round runs:

* the **driver** (:func:`faq.recursive.propagate.propagate`): numpy over the
  resident tries, values in a dense array;
* **Spark** (:func:`faq.recursive.rounds.iterate`): one checkpointed
  aggregate a round, the state a DataFrame.

Everything around the round is here, once, so the placements cannot
disagree on it: the iteration cap (:class:`~faq.errors.FixpointNotConvergedError`
before a round beyond ``max_iterations``), the progress line of each round,
and the Bellman-Ford bound (values still improving in round ``n`` of an
``n``-node graph: a cycle keeps improving them,
:class:`~faq.errors.NegativeCycleError`).  Deletions (trimming,
:mod:`faq.recursive.trimming`) re-seed a frontier and run this same loop.

Examples
--------
A round that halves its frontier, on no data at all:

>>> frontier = [8]
>>> def one_round(iteration):
...     frontier[0] //= 2
...     return frontier[0]
>>> lines = []
>>> seminaive_rounds(one_round, frontier=8, max_iterations=10, progress=lines.append).iterations
4
>>> lines[0].startswith("iteration 1: 4 value(s) improved")
True

The cap and the bound are the loop's, whatever the placement:

>>> seminaive_rounds(lambda i: 1, frontier=1, max_iterations=3)
Traceback (most recent call last):
...
faq.errors.FixpointNotConvergedError: [FIXPOINT_NOT_CONVERGED] ...
>>> seminaive_rounds(lambda i: 1, frontier=1, node_count=lambda: 2, semiring="min_plus", example=lambda: 7)
Traceback (most recent call last):
...
faq.errors.NegativeCycleError: [NEGATIVE_CYCLE] ...
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from faq.errors import FixpointNotConvergedError, NegativeCycleError

__all__ = ["DEFAULT_MAX_ITERATIONS", "Rounds", "seminaive_rounds"]

#: Rounds a fixpoint may take unless told otherwise (each placement's default).
DEFAULT_MAX_ITERATIONS = 10_000


@dataclass(frozen=True)
class Rounds:
    """What :func:`seminaive_rounds` did: the rounds run and the last frontier's size (0: converged)."""

    iterations: int
    frontier: int


def seminaive_rounds(
    one_round: Callable[[int], int],
    *,
    frontier: Optional[int],
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    node_count: Optional[Callable[[], int]] = None,
    semiring: str = "",
    example: Callable[[], Any] = lambda: None,
    progress: Optional[Callable[[str], None]] = None,
) -> Rounds:
    """Run ``one_round(k)`` (k = 0, 1, ...) until it improves nothing; the loop's checks around each.

    Parameters
    ----------
    one_round : callable
        Runs round ``k`` of the placement and returns how many values
        improved (the next frontier's size).
    frontier : int or None
        The first frontier's size; None: unknown, run at least one round.
    max_iterations : int
        :class:`FixpointNotConvergedError` before a round beyond it.
    node_count : callable, optional
        The graph's node count, asked once, when a round still improves
        something: the Bellman-Ford bound (None: no cycle can improve values).
    semiring : str
        Named in the negative-cycle error.
    example : callable
        A node of the current frontier, for the negative-cycle error.
    progress : callable, optional
        Gets ``"iteration k: n value(s) improved (s)"`` after each round.
    """
    iterations = 0
    nodes: Optional[int] = None
    while frontier is None or frontier > 0:
        if iterations >= max_iterations:
            raise FixpointNotConvergedError(iterations=iterations, frontier=int(frontier or 0),
                                            max_iterations=max_iterations)
        started = time.perf_counter()
        frontier = int(one_round(iterations))
        iterations += 1
        if progress is not None:
            progress(f"iteration {iterations}: {frontier} value(s) improved ({time.perf_counter() - started:.2f} s)")
        if frontier and node_count is not None:
            if nodes is None:
                nodes = node_count()
            if iterations >= nodes:
                raise NegativeCycleError(semiring=semiring, iterations=iterations, nodes=nodes, frontier=frontier,
                                         example=example())
    return Rounds(iterations, int(frontier or 0))
