"""Binary joins of in-process tables, in the plan's order: sort-merge in numpy, or pandas merges.

:func:`sort_merged` joins integer keys by matching sorted int64 codes
(:func:`~faq.joins.table.key_codes`), no pandas; :func:`merged` joins keys
of any type with pandas merges.  Both ⊗ the values as they go
(:func:`~faq.joins.row_arithmetic.multiplied`, int64 overflow refused) and
apply each indicator as soon as its variables are joined
(:func:`held_by`: which rows an indicator holds).

Examples
--------
>>> import numpy as np
>>> from faq.semirings import COUNTING
>>> from faq.semirings.numpy_backend import numpy_ops
>>> r = Table(("a", "b"), {"a": np.array([0, 1]), "b": np.array([1, 2])}, np.array([2, 3]))
>>> s = Table(("b", "c"), {"b": np.array([1, 1]), "c": np.array([5, 6])}, np.array([10, 100]))
>>> out = sort_merged([r, s], [], numpy_ops(COUNTING))
>>> out.variables, out.values.tolist()
(('a', 'b', 'c'), [20, 200])
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from faq.joins.frame import VALUE_COLUMN
from faq.joins.row_arithmetic import multiplied
from faq.joins.table import Table, key_codes
from faq.semirings.numpy_backend import NumpyForm


def _matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i, j) with ``left[i] == right[j]`` (int64 codes): an inner join by sorting ``right``.

    >>> i, j = _matches(np.array([3, 1, 3]), np.array([3, 3, 2]))
    >>> list(zip(i.tolist(), j.tolist()))
    [(0, 0), (0, 1), (2, 0), (2, 1)]
    """
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    low = np.searchsorted(ordered, left, side="left")
    counts = np.searchsorted(ordered, left, side="right") - low
    left_rows = np.repeat(np.arange(len(left), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
    return left_rows, order[np.repeat(low, counts) + within]


def _shared_codes(left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray], on: Sequence[str]
                  ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Codes of ``on`` numbered over both sides at once, and whether they are exact (equal exactly
    where the keys are; else equal where the first variable is: too many combinations for int64)."""
    n = len(np.asarray(left[on[0]]))
    codes = key_codes([np.concatenate([np.asarray(left[v]), np.asarray(right[v])]) for v in on])
    exact = codes is not None
    if not exact:
        codes = key_codes([np.concatenate([np.asarray(left[on[0]]), np.asarray(right[on[0]])])])
    return codes[:n], codes[n:], exact


def sort_merged(relations: Sequence[Table], indicators: Sequence[Table], ops: NumpyForm) -> Table:
    """:func:`merged` for integer keys in numpy: each join matches sorted codes (no pandas), each
    indicator keeps the rows whose keys it holds, applied as soon as its variables are joined."""
    keys: dict[str, np.ndarray] = {}
    values: Optional[np.ndarray] = None
    pending = [ind for ind in indicators if ind.variables]
    for r in relations:
        theirs = {v: np.asarray(r.keys[v]) for v in r.variables}
        their_values = r.values if r.values is not None else ops.ones(r.rows)
        if values is None:
            keys, values = theirs, np.asarray(their_values, dtype=ops.dtype)
        else:
            on = [v for v in r.variables if v in keys]
            if on:
                mine, other, exact = _shared_codes(keys, theirs, on)
                i, j = _matches(mine, other)
                if not exact:  # matched on the first variable: keep the pairs equal on all
                    same = np.all([keys[v][i] == theirs[v][j] for v in on], axis=0)
                    i, j = i[same], j[same]
            else:  # no shared variable: a cross product
                i = np.repeat(np.arange(len(values), dtype=np.int64), len(their_values))
                j = np.tile(np.arange(len(their_values), dtype=np.int64), len(values))
            keys = {**{v: k[i] for v, k in keys.items()}, **{v: k[j] for v, k in theirs.items() if v not in keys}}
            values = multiplied(values[i], np.asarray(their_values, dtype=ops.dtype)[j], ops)
        for ind in [ind for ind in pending if set(ind.variables) <= set(keys)]:
            held = held_by(keys, ind)
            keys, values = {v: k[held] for v, k in keys.items()}, values[held]
            pending.remove(ind)
    if values is None:  # no relation: the product is one, on no variable
        values = ops.ones(1)
    product = Table(tuple(keys), keys, values)
    if pending:  # variables no relation holds (the plan makes none): as the merges would
        return merged([product], pending, ops)
    return product


def held_by(keys: Mapping[str, np.ndarray], indicator: Table) -> np.ndarray:
    """Which rows of integer ``keys`` (a column per variable, the indicator's among them) the
    indicator holds: a boolean mask.

    >>> ind = Table(("b",), {"b": np.array([2, 5])}, None)
    >>> held_by({"a": np.array([0, 1, 2]), "b": np.array([5, 3, 2])}, ind).tolist()
    [True, False, True]
    """
    if len(indicator.variables) == 1:  # one column: its values are the codes
        (v,) = indicator.variables
        return np.isin(np.asarray(keys[v]), np.asarray(indicator.keys[v]))
    mine, other, exact = _shared_codes(keys, indicator.keys, indicator.variables)
    if exact:
        return np.isin(mine, other)
    i, j = _matches(mine, other)
    same = np.all([np.asarray(keys[v])[i] == np.asarray(indicator.keys[v])[j] for v in indicator.variables], axis=0)
    held = np.zeros(len(mine), dtype=bool)
    held[i[same]] = True
    return held


def merged(relations: Sequence[Table], indicators: Sequence[Table], ops: NumpyForm) -> Table:
    """The bag's product by pandas merges in the given order, indicators applied once covered."""
    import pandas as pd

    product: Optional[pd.DataFrame] = None
    pending = [ind for ind in indicators if ind.variables]  # (the plan's indicators all have variables)
    for r in relations:
        right = r.frame()
        if r.values is None:
            right[VALUE_COLUMN] = np.full(len(right), ops.one, dtype=ops.dtype)
        if product is None:
            product = right
        else:
            right = right.rename(columns={VALUE_COLUMN: "__w"})
            on = [v for v in r.variables if v in product.columns]
            product = product.merge(right, on=on, how="inner") if on else product.merge(right, how="cross")
            product[VALUE_COLUMN] = multiplied(product[VALUE_COLUMN].to_numpy(), product.pop("__w").to_numpy(), ops)
        covered = [ind for ind in pending if set(ind.variables) <= set(product.columns)]
        for ind in covered:
            product = product.merge(ind.frame(valued=False), on=list(ind.variables), how="inner")
            pending.remove(ind)
    if product is None:  # no relation: the product is one, on no variable
        product = pd.DataFrame({VALUE_COLUMN: np.array([ops.one], dtype=ops.dtype)})
    for ind in pending:  # variables no relation holds: a cross product with the indicator
        product = product.merge(ind.frame(valued=False), how="cross")
    variables = tuple(c for c in product.columns if c != VALUE_COLUMN)
    values = np.asarray(product[VALUE_COLUMN].to_numpy(), dtype=ops.dtype)
    return Table(variables, {v: product[v].to_numpy() for v in variables}, values)
