"""How one bag's product is computed.

A bag join takes the relations of one InsideOut step (as :class:`Frame` s),
the indicator projections to semi-join with, and the semiring; it returns the
⊗-product of the relations over the union of their variables.  The InsideOut
executor calls :func:`join_bag`, which runs the strategy the plan names; when
the product is ⊕-aggregated right away it passes an :class:`Aggregation`, which
a join may use to return partial aggregates instead of every binding.
"""

from faq.joins.frame import VALUE_COLUMN, Aggregation, Frame
from faq.joins.binary import binary_join
from faq.joins.generic import generic_join
from faq.joins.dispatch import join_bag

__all__ = ["Aggregation", "Frame", "VALUE_COLUMN", "binary_join", "generic_join", "join_bag"]
