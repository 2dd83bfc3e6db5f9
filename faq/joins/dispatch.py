"""Choose the bag-join implementation a plan step names.

Examples
--------
>>> from faq.joins.dispatch import JOIN_METHODS
>>> sorted(JOIN_METHODS)
['binary']
"""

from __future__ import annotations

from typing import Callable, Sequence

from faq.errors import PlanError
from faq.joins.binary import binary_join
from faq.joins.frame import Frame
from faq.semirings import Semiring

BagJoin = Callable[[Sequence[Frame], Sequence[Frame], Semiring], Frame]

# One entry per join method; the worst-case optimal join plugs in here.
JOIN_METHODS: dict[str, BagJoin] = {"binary": binary_join}


def join_bag(method: str, relations: Sequence[Frame], indicators: Sequence[Frame], semiring: Semiring) -> Frame:
    """Run the bag join ``method`` (a key of :data:`JOIN_METHODS`)."""
    try:
        implementation = JOIN_METHODS[method]
    except KeyError:
        raise PlanError(reason=f"unknown join method {method!r}; known: {', '.join(JOIN_METHODS)}") from None
    return implementation(relations, indicators, semiring)
