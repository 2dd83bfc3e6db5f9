"""Run the bag join a plan step's strategy names: the executor's one call into :mod:`faq.joins`.

The strategy was chosen by the planner (``Strategy`` of
:mod:`faq.insideout.physical`); this module only dispatches on its name and
hands its decisions to the join as values.  It reads them through
:class:`~faq.joins.strategy.JoinStrategy`, which says which fields a strategy
must have: the joins never import the planner (the plan may import the
joins, not the reverse).  The in-process runner,
:func:`faq.joins.local.join_local`, takes the same value whole.

Examples
--------
>>> from faq.joins.dispatch import RUNNERS
>>> sorted(RUNNERS)
['binary', 'broadcast', 'partitioned', 'shuffle']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

from faq.errors import PlanError
from faq.joins.binary import binary_join
from faq.joins.frame import Aggregation, Frame
from faq.joins.generic import generic_join
from faq.joins.strategy import JoinStrategy
from faq.semirings import Semiring

if TYPE_CHECKING:
    from faq.scope import Scope


def _binary(relations, indicators, semiring, strategy, attribute_order, aggregate, scope) -> Frame:
    return binary_join(relations, indicators, semiring)


def _generic(relations, indicators, semiring, strategy, attribute_order, aggregate, scope) -> Frame:
    if strategy.aggregate_in_tasks is None and aggregate is not None and strategy.name != "shuffle":
        # The plan decides what the tasks do with the product (generic_join would re-decide it).
        raise PlanError(reason=f"the {strategy.name} strategy has no aggregate_in_tasks: the plan must decide "
                               "whether its tasks ⊕-aggregate (faq.joins.task_aggregation.task_aggregation)")
    return generic_join(
        relations, indicators, semiring, attribute_order, strategy=strategy.name, aggregate=aggregate,
        aggregate_in_tasks=strategy.aggregate_in_tasks, shared=strategy.shared or None, scope=scope,
        grid=dict(strategy.shares) or None, batches=strategy.batches, index_dir=strategy.index_dir,
        binary_kernel=strategy.binary_kernel if strategy.name == "partitioned" else None,
        compiled=not strategy.numpy_kernel, oriented=strategy.oriented_count,
    )


# Strategy name -> how it runs.  Binary joins return the full product, which the
# executor's group-by aggregates; the generic join may return partial aggregates
# (when the strategy says aggregate_in_tasks), which the same group-by combines.
RUNNERS: dict[str, Callable[..., Frame]] = {
    "binary": _binary, "broadcast": _generic, "partitioned": _generic, "shuffle": _generic,
}


def join_bag(
    strategy: JoinStrategy,
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    aggregate: Optional[Aggregation] = None,
    scope: Optional["Scope"] = None,
) -> Frame:
    """Join one bag as ``strategy`` says.

    ``attribute_order`` is the plan's order for attribute-at-a-time joins
    (empty for binary joins); ``aggregate`` is what the caller does with the
    product right after (see :class:`~faq.joins.frame.Aggregation`);
    ``scope`` takes what the join materialises for its result (closed by the
    caller once the result is materialised).
    """
    try:
        run = RUNNERS[strategy.name]
    except KeyError:
        raise PlanError(reason=f"unknown join strategy {strategy.name!r}; known: {', '.join(RUNNERS)}") from None
    return run(relations, indicators, semiring, strategy, attribute_order, aggregate, scope)
