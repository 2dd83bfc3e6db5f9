"""The query hypergraph: fractional edge covers (rho*, AGM) and elimination orders.

Pure Python -- this package never imports Spark, so plans can be built, printed and
tested without a Spark session. The primal graph is a networkx graph; matplotlib (for
:func:`draw_hypergraph`) is imported only when something is drawn.

Examples
--------
>>> from faq.hypergraph import rho_star, faqw, choose_order
>>> tri = [{"a", "b"}, {"a", "c"}, {"b", "c"}]
>>> rho_star(tri, {"a", "b", "c"})
Fraction(3, 2)
>>> order = choose_order(tri, ["a", "b", "c"])
>>> order, faqw(tri, order, free=[])
(['a', 'b', 'c'], Fraction(3, 2))
"""

from faq.hypergraph import cover, draw, hypergraph, orders
from faq.hypergraph.cover import (
    Cover,
    agm_bound,
    agm_cover,
    bound_of_log,
    fractional_edge_cover,
    greedy_cover,
    rho_star,
)
from faq.hypergraph.draw import draw_hypergraph
from faq.hypergraph.hypergraph import (
    hypergraph_variables,
    normalize_bag,
    normalize_edges,
    primal_graph,
)
from faq.hypergraph.statistics import (
    ColumnStatistics,
    RelationProfile,
    RelationStatistics,
    WorkEstimate,
    estimate_generic_join_work,
)
from faq.hypergraph.orders import (
    EXACT_MAX_ATOMS,
    EXACT_MAX_VARS,
    FILL_WORK,
    ORDER_METHODS,
    choose_order,
    choose_order_noted,
    elimination_bags,
    exact_order,
    faqw,
    min_degree_order,
    min_fill_noted,
    min_fill_order,
    order_method,
)

# Each submodule lists its public names once; the package re-exports them all.
__all__ = list(cover.__all__)
__all__ += orders.__all__
__all__ += hypergraph.__all__
__all__ += draw.__all__
__all__ += [
    "ColumnStatistics",
    "RelationStatistics",
    "RelationProfile",
    "WorkEstimate",
    "estimate_generic_join_work",
]
