"""Choose the bag-join implementation a plan step names.

Examples
--------
>>> from faq.joins.dispatch import JOIN_METHODS
>>> sorted(JOIN_METHODS)
['binary', 'generic', 'generic_broadcast', 'generic_shuffle']
"""

from __future__ import annotations

from typing import Callable, Sequence

from faq.errors import PlanError
from faq.joins.binary import binary_join
from faq.joins.frame import Frame
from faq.joins.generic import generic_join
from faq.semirings import Semiring

# (relations, indicators, semiring, attribute_order) -> product
BagJoin = Callable[[Sequence[Frame], Sequence[Frame], Semiring, Sequence[str]], Frame]


def _generic(strategy: str) -> BagJoin:
    def join(relations, indicators, semiring, attribute_order=()):
        return generic_join(relations, indicators, semiring, attribute_order, strategy=strategy)

    join.__name__ = f"generic_join_{strategy}"
    return join


# One entry per join method.  "generic" is the worst-case optimal join with
# its strategy chosen from sizes (or forced: faq.joins.generic.set_generic_strategy).
JOIN_METHODS: dict[str, BagJoin] = {
    "binary": binary_join,
    "generic": _generic("auto"),
    "generic_shuffle": _generic("shuffle"),
    "generic_broadcast": _generic("broadcast"),
}


def join_bag(
    method: str,
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
) -> Frame:
    """Run the bag join ``method`` (a key of :data:`JOIN_METHODS`).

    ``attribute_order`` is the planner's order for attribute-at-a-time joins
    (empty for binary joins).
    """
    try:
        implementation = JOIN_METHODS[method]
    except KeyError:
        raise PlanError(reason=f"unknown join method {method!r}; known: {', '.join(JOIN_METHODS)}") from None
    return implementation(relations, indicators, semiring, attribute_order)
