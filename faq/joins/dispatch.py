"""Choose the bag-join implementation a plan step names.

Examples
--------
>>> from faq.joins.dispatch import JOIN_METHODS
>>> sorted(JOIN_METHODS)
['binary', 'generic', 'generic_broadcast', 'generic_shuffle']
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from faq.errors import PlanError
from faq.joins.binary import binary_join
from faq.joins.frame import Aggregation, Frame
from faq.joins.generic import generic_join
from faq.semirings import Semiring

# (relations, indicators, semiring, attribute_order) -> product
BagJoin = Callable[[Sequence[Frame], Sequence[Frame], Semiring, Sequence[str]], Frame]
# The same, also told how the product is aggregated (keyword ``aggregate``):
# it may return partial aggregates over ``aggregate.keep`` (see Aggregation).
AggregatingBagJoin = Callable[..., Frame]


def _generic(strategy: str) -> AggregatingBagJoin:
    def join(
        relations: Sequence[Frame],
        indicators: Sequence[Frame],
        semiring: Semiring,
        attribute_order: Sequence[str] = (),
        aggregate: Optional[Aggregation] = None,
    ) -> Frame:
        return generic_join(relations, indicators, semiring, attribute_order, strategy=strategy, aggregate=aggregate)

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
# Methods that accept ``aggregate=``; the others are called as plain BagJoins
# (and return the full product, which the caller aggregates just the same).
AGGREGATING_METHODS = frozenset({"generic", "generic_shuffle", "generic_broadcast"})


def join_bag(
    method: str,
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    aggregate: Optional[Aggregation] = None,
) -> Frame:
    """Run the bag join ``method`` (a key of :data:`JOIN_METHODS`).

    ``attribute_order`` is the planner's order for attribute-at-a-time joins
    (empty for binary joins).  ``aggregate``, when the caller ⊕-aggregates
    the product onto fewer variables right away, is passed to the methods in
    :data:`AGGREGATING_METHODS`; the result then has either the product's
    variables or exactly ``aggregate.keep`` (partial aggregates), and the
    caller's ``groupBy(keep)`` ⊕-aggregation is right for both.
    """
    try:
        implementation = JOIN_METHODS[method]
    except KeyError:
        raise PlanError(reason=f"unknown join method {method!r}; known: {', '.join(JOIN_METHODS)}") from None
    if aggregate is not None and method in AGGREGATING_METHODS:
        return implementation(relations, indicators, semiring, attribute_order, aggregate=aggregate)
    return implementation(relations, indicators, semiring, attribute_order)
