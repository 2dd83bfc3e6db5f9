"""How one bag's product is computed.

A bag join takes the relations of one InsideOut step (as :class:`Frame` s),
the indicator projections to semi-join with, and the semiring; it returns the
⊗-product of the relations over the union of their variables.  The InsideOut
executor calls :func:`join_bag`, which runs the strategy the plan names; when
the product is ⊕-aggregated right away it passes an :class:`Aggregation`, which
a join may use to return partial aggregates instead of every binding.
"""

from faq._lazy import lazy_exports

# Imported on first use: the pure modules (csr, compiled, partial) load without the Spark joins.
_EXPORTS = {
    "VALUE_COLUMN": "faq.joins.frame",
    "Aggregation": "faq.joins.frame",
    "Frame": "faq.joins.frame",
    "binary_join": "faq.joins.binary",
    "generic_join": "faq.joins.generic",
    "join_bag": "faq.joins.dispatch",
}

__all__ = ["Aggregation", "Frame", "VALUE_COLUMN", "binary_join", "generic_join", "join_bag"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
