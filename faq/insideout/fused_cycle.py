"""When a 4-cycle summed whole runs as one fused step of dense-row sums, and why.

``count() := e(a, b), e(b, c), e(c, d), e(d, a)`` planned by elimination is
two steps; where its four atoms are held on the driver the planner makes it
one step whose strategy runs :func:`faq.joins.dense_rows.cycle_total`, and
this module says when (:func:`dense_cycle`: the rule and the note ``explain``
prints).

Examples
--------
>>> from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
>>> from faq.insideout.physical import Environment
>>> from faq.insideout.planner import plan_query
>>> from faq.language import parse_query
>>> edges = {"e": RelationStatistics(10**6, (ColumnStatistics(10**5, 300),) * 2)}
>>> wedges = {(i, j): 4e8 for i in range(4) for j in range(i + 1, 4)}
>>> plan = plan_query(parse_query("count() := e(a,b), e(b,c), e(c,d), e(d,a)"), semiring="counting",
...                   environment=Environment(placement="auto"), held=["e"], statistics=edges, pair_rows=wedges)
>>> [s.eliminated for s in plan.steps], plan.steps[0].strategy.aggregation.split("; ")[1]
([('a', 'b', 'c', 'd')], 'dense-row sums over the 4-cycle (compiled): the two steps fused, 8e+08 wedges through two opposite variables (exact, from the histograms), no intermediate held')
"""

from __future__ import annotations

from faq.insideout.physical import integral_bag
from faq.insideout.placement import structured_carrier
from faq.insideout.plan_context import PlanContext
from faq.joins.dense_rows import cycle_order

__all__ = ["DENSE_CYCLE_WEDGES", "dense_cycle"]


def dense_cycle(context: PlanContext) -> str:
    """How a query that is one 4-cycle summed whole runs as one fused step, or "" when it does not.

    ``count() := e(a, b), e(b, c), e(c, d), e(d, a)`` planned by elimination is two steps: the 2-paths
    ``t1(b, d)`` through ``a`` made (a sparse product: up to the wedges through ``a`` rows, 4e8 at
    R-MAT 16, so large it ran in pieces), then joined to the other two atoms.  Fused, each ``b``'s row
    of ``t1`` lives in a dense array only while the 2-paths through ``c`` read it
    (:func:`faq.joins.dense_rows.cycle_total`): the work is the wedges through two opposite
    variables, known here exactly from the held factors' histograms (``pair_rows``), and nothing is
    held but the inputs.  Chosen for four held atoms with integer keys, ⊗ = × and ⊕ = + on numbers,
    no join method or executors placement forced, and at least :data:`DENSE_CYCLE_WEDGES` wedges
    (below that the two small steps cost less than loading the kernel).
    """
    query = context.query
    order = cycle_order([r.variables for r, _ in context.inputs])
    if (query.free or context.join != "auto" or context.environment.placement == "executors"
            or order is None or not all(f in context.held for _, f in context.inputs)
            or integral_bag(query.variables, context.types) is False or len(set(context.aggregate.values())) != 1):
        return ""
    from faq.semirings import get_semiring
    from faq.semirings.numpy_backend import numpy_ops

    times = get_semiring(context.product)
    form = None if structured_carrier(times) else numpy_ops(times, get_semiring(next(iter(context.aggregate.values()))))
    if form is None or not form.sums_products:
        return ""
    # variable -> wedges through it: its two atoms (positions i < j) joined on it
    through = {v: context.pair_rows.get(tuple(context.atoms_with[v])) for v in order}
    v0, v1, v2, v3 = order
    if None in through.values():
        return ""
    wedges = min(through[v1] + through[v3], through[v0] + through[v2])
    if wedges < DENSE_CYCLE_WEDGES:
        return ""
    return (f"dense-row sums over the 4-cycle (compiled): the two steps fused, {wedges:.3g} wedges through two "
            "opposite variables (exact, from the histograms), no intermediate held")


#: Fewest wedges for which a 4-cycle summed whole runs as one fused step (:func:`dense_cycle`): the
#: compiled loop's threshold (:data:`~faq.insideout.placement.SMALL_KERNEL_WORK`), below which small
#: steps cost less than loading a kernel.
DENSE_CYCLE_WEDGES = 3e6
