"""Bag join by binary hash joins in the planned order.

Each join equates *every* variable the accumulated relation shares with the
next one (joining on fewer, e.g. only the variables all participants share,
gives wrong answers on cyclic queries), and multiplies the values with ⊗.
Indicator projections are applied as left-semi joins as soon as the
accumulated relation holds all of their variables, so intermediates stay small.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.joins import Frame, VALUE_COLUMN, binary_join
>>> from faq.semirings import COUNTING
>>> def frame(f):
...     return Frame(f.df.withColumnRenamed("value", VALUE_COLUMN), f.variables)
>>> r = frame(factor_of([(1, 2, 2), (1, 3, 1)], ["a", "b"], "counting"))
>>> s = frame(factor_of([(2, 5, 3)], ["b", "c"], "counting"))
>>> out = binary_join([r, s], [], COUNTING)
>>> out.variables, sorted(map(tuple, out.df.collect()))
(('a', 'b', 'c'), [(1, 2, 5, 6)])
"""

from __future__ import annotations

from typing import Sequence

from faq.joins.frame import VALUE_COLUMN, Frame
from faq.joins.uses import product_of
from faq.semirings import Semiring

_RIGHT_VALUE = "__v_right"


def binary_join(
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
) -> Frame:
    """⊗-product of ``relations`` (joined in the given order), semi-joined with ``indicators``.

    Parameters
    ----------
    relations : sequence of Frame
        Joined left to right; the planner orders them so each shares
        variables with the ones before it where it can.
    indicators : sequence of Frame
        Supports to semi-join with; their ``df`` holds only variable columns
        (already projected and de-duplicated).
    semiring : Semiring
        Supplies ⊗.
    attribute_order : sequence of str
        Unused: binary joins follow the order of ``relations``.
    """
    pending = list(indicators)
    acc = relations[0]
    acc, pending = _apply_indicators(acc, pending)
    for nxt in relations[1:]:
        shared = [v for v in acc.variables if v in nxt.variables]
        right = nxt.df.withColumnRenamed(VALUE_COLUMN, _RIGHT_VALUE)
        if shared:
            joined = acc.df.join(right, on=shared, how="inner")
        else:
            joined = acc.df.crossJoin(right)
        variables = acc.variables + tuple(v for v in nxt.variables if v not in acc.variables)
        acc = Frame(product_of(joined, variables, [VALUE_COLUMN, _RIGHT_VALUE], semiring), variables)
        acc, pending = _apply_indicators(acc, pending)
    # Indicators whose variables are never all present cannot filter; the
    # planner only emits indicators inside the bag, so this is empty.
    return acc


def _apply_indicators(acc: Frame, pending: list[Frame]) -> tuple[Frame, list[Frame]]:
    left = []
    df = acc.df
    for ind in pending:
        if set(ind.variables) <= set(acc.variables):
            df = df.join(ind.df, on=list(ind.variables), how="left_semi")
        else:
            left.append(ind)
    return Frame(df, acc.variables), left
