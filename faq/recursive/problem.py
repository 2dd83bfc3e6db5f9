"""What a maintained fixpoint answers: paths from a source, or connected components.

:class:`~faq.recursive.maintained.MaintainedFixpoint` (the resident index on the driver)
and :class:`~faq.recursive.spark_maintained.SparkFixpoint` (the executors) keep the same
answer in two places. :class:`FixpointProblem` is the part they share: the checked
definition of the problem (semiring, source or components, the weight an edge given
without one gets, the rounds allowed) and the constructors :meth:`~FixpointProblem.paths`
and :meth:`~FixpointProblem.components` that name it.

Examples
--------
>>> class Problem(FixpointProblem):
...     def __init__(self, edges, semiring="min_plus", *, source=None, components=False,
...                  nodes=None, default_weight=None):
...         self._define(semiring, source, components, default_weight, max_iterations=10)
>>> p = Problem.paths([], source=1)
>>> p.semiring.name, p.source, p.default_weight, p.describe()
('min_plus', 1, 1.0, 'paths from 1 (min_plus)')
>>> Problem.components([]).describe(), Problem.components([]).default_weight
('components', 0)
"""

from __future__ import annotations

from typing import Any, Optional, TypeVar

from faq.errors import FAQValueError
from faq.recursive.seminaive import MIN_LABEL, check_iterations, check_semiring
from faq.semirings import Semiring

__all__ = ["FixpointProblem"]

_P = TypeVar("_P", bound="FixpointProblem")


class FixpointProblem:
    """The problem a maintained fixpoint answers, checked once (a mixin).

    A subclass calls :meth:`_define` from its ``__init__``, whose signature takes
    ``(edges, semiring, *, source, components, nodes, default_weight, max_iterations,
    ...)`` as :class:`~faq.recursive.maintained.MaintainedFixpoint` documents them.

    Attributes
    ----------
    semiring : Semiring
        :data:`~faq.recursive.seminaive.MIN_LABEL` for components.
    source : int or None
        The source node of paths (None for components).
    components : bool
        Connected components rather than paths.
    default_weight : Any
        The value of an inserted edge given without one: ``one`` of min-label for
        components, True for boolean, else the given weight or 1.0 (the hop count an
        unweighted edge list gives).
    max_iterations : int
        Rounds per batch before :class:`~faq.errors.FixpointNotConvergedError`.
    """

    # (``components`` is the classmethod on the class and the flag on an instance.)
    semiring: Semiring
    source: Optional[int]
    default_weight: Any
    max_iterations: int

    def _define(
        self,
        semiring: Any,
        source: Any,
        components: bool,
        default_weight: Optional[float],
        max_iterations: int,
    ) -> None:
        """Check and keep the problem's definition (FAQValueError on a bad one)."""
        check_iterations(max_iterations)
        if components == (source is not None):
            raise FAQValueError(error_class="SOURCE_OR_COMPONENTS", argument="source")
        self.components = components
        self.semiring = MIN_LABEL if components else check_semiring(semiring)
        self.source = None if components else _node_id(source)
        self.max_iterations = max_iterations
        if components:
            self.default_weight = MIN_LABEL.one
        elif self.semiring.value_type == "boolean":
            self.default_weight = True
        else:
            self.default_weight = 1.0 if default_weight is None else float(default_weight)

    @classmethod
    def paths(cls: type[_P], edges: Any, source: int, semiring: Any = "min_plus", **kw: Any) -> _P:
        """Maintained reachability / shortest / widest paths from ``source``."""
        return cls(edges, semiring, source=source, **kw)  # type: ignore[call-arg]

    @classmethod
    def components(cls: type[_P], edges: Any, nodes: Any = None, **kw: Any) -> _P:
        """Maintained connected components (value = smallest node id of the component)."""
        return cls(edges, MIN_LABEL, components=True, nodes=nodes, **kw)  # type: ignore[call-arg]

    def describe(self) -> str:
        """``"components"`` or ``"paths from <source> (<semiring>)"``, for reprs and notes."""
        return "components" if self.components else f"paths from {self.source} ({self.semiring.name})"


def _node_id(source: Any) -> int:
    """``source`` as an int node id, or FAQValueError (a bool, a fraction or beyond 64 bits is not a node id)."""
    from faq.checks import node_id

    return node_id(source, "source")
