"""Errors of recursive (fixpoint) queries and of maintained fixpoints.

Each class keeps what went wrong in :attr:`~faq.errors.FAQError.parameters`.

Examples
--------
>>> err = NonMonotoneUpdateError(kind="deletion", count=2, example=(1, 2), semiring="min_plus")
>>> err.parameters["kind"], isinstance(err, ValueError)
('deletion', True)
>>> print(FixpointNotConvergedError(iterations=5, frontier=3, max_iterations=5))
[FIXPOINT_NOT_CONVERGED] the fixpoint did not converge in 5 iterations (max_iterations=5); 3 value(s) still improved in the last one; raise max_iterations
"""

from __future__ import annotations

from typing import Any

from faq.errors import FAQRuntimeError, FAQTypeError, FAQValueError
from faq.incremental.errors import NonMonotoneUpdateError  # noqa: F401 - one class for everything maintained


class NotIdempotentError(FAQTypeError):
    """A fixpoint needs a semiring whose ⊕ is idempotent (min, max, ∨)."""

    error_class = "NOT_IDEMPOTENT"

    def __init__(self, semiring: str) -> None:
        super().__init__(
            f"semi-naive fixpoints keep one value per node and need an idempotent ⊕ "
            f"(e.g. boolean, min_plus, max_min); {semiring!r} is not idempotent",
            semiring=semiring,
        )


class FixpointNotConvergedError(FAQRuntimeError):
    """Values still improved after ``max_iterations`` iterations."""

    error_class = "FIXPOINT_NOT_CONVERGED"

    def __init__(self, iterations: int, frontier: int, max_iterations: int) -> None:
        super().__init__(
            f"the fixpoint did not converge in {iterations} iterations (max_iterations={max_iterations}); "
            f"{frontier} value(s) still improved in the last one; raise max_iterations",
            iterations=iterations,
            frontier=frontier,
            max_iterations=max_iterations,
        )


class NegativeCycleError(FAQValueError):
    """Values kept improving past the Bellman-Ford bound: a cycle that improves them forever.

    In ``min_plus`` that is a cycle of negative total weight reachable from the
    seeds.  ``example`` is a node whose value was still improving (it lies on
    or after such a cycle).
    """

    error_class = "NEGATIVE_CYCLE"

    def __init__(self, semiring: str, iterations: int, nodes: int, frontier: int, example: Any = None) -> None:
        what = "a negative cycle" if semiring == "min_plus" else "a cycle that improves values without end"
        at = f" (e.g. node {example})" if example is not None else ""
        super().__init__(
            f"{what} is reachable: {frontier} value(s){at} still improved after {iterations} iterations "
            f"on a graph of {nodes} nodes, where shortest paths need at most {max(nodes - 1, 0)}; "
            "remove the cycle or make its weights non-negative",
            semiring=semiring,
            iterations=iterations,
            nodes=nodes,
            frontier=frontier,
            example=example,
        )


class UnknownNodeError(FAQValueError, KeyError):
    """A node named by the caller (e.g. the source of paths) is not in the graph."""

    error_class = "UNKNOWN_NODE"

    def __init__(self, node: Any, graph: str, role: str = "source") -> None:
        super().__init__(
            f"{role} node {node} does not occur in {graph}; check the node id",
            node=node,
            graph=graph,
            role=role,
        )

    __str__ = Exception.__str__
