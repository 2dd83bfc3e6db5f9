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

from faq.hypergraph.cover import Cover, agm_bound, agm_cover, fractional_edge_cover, rho_star
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
    EXACT_MAX_VARS,
    ORDER_METHODS,
    choose_order,
    elimination_bags,
    exact_order,
    faqw,
    min_degree_order,
    min_fill_order,
)

__all__ = [
    "Cover",
    "fractional_edge_cover",
    "rho_star",
    "agm_bound",
    "agm_cover",
    "elimination_bags",
    "faqw",
    "min_degree_order",
    "min_fill_order",
    "exact_order",
    "choose_order",
    "EXACT_MAX_VARS",
    "ORDER_METHODS",
    "normalize_edges",
    "normalize_bag",
    "hypergraph_variables",
    "primal_graph",
    "draw_hypergraph",
    "ColumnStatistics",
    "RelationStatistics",
    "RelationProfile",
    "WorkEstimate",
    "estimate_generic_join_work",
]
