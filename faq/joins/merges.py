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

Which of the in-process binary join's kernels a step runs -- the sparse matrix
product (:mod:`faq.joins.sparse_product`), :func:`sort_merged` or
:func:`merged` -- is :func:`binary_kernel`'s choice, from facts known before
the step runs (the plan makes it: :func:`faq.insideout.placement.merge_kernel`).
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np

from faq.joins.dense import dense_span, is_unique, unique_lookup
from faq.joins.frame import VALUE_COLUMN
from faq.joins.row_arithmetic import multiplied
from faq.joins.table import Table, in_order, key_codes, offset_codes
from faq.semirings.numpy_backend import NumpyForm

#: Integer keys are joined by sorting in numpy at every size: sorted int64 codes matched by binary
#: searches of sorted probes (:func:`_matches`) beat pandas' hash merges from 25K rows to 4M in one
#: run here -- a 2M x 2M many-to-many join 1.10 s against 1.98 s, 3.9M edges against their reverse
#: 0.29 s against 1.92 s (``python -m bench.merge_kernels``, bench/results/merge_kernels.json).
#: Pandas joins keys that are not integers.

#: The in-process binary join's kernels (:func:`binary_kernel`), each with the words its step's note
#: and ``explain`` use: ``in-process binary join (<words>)``.
BINARY_KERNELS = {
    "sparse-product": "sparse product, scipy",
    "sort-merge": "sort-merge",
    "pandas-merge": "pandas merges",
}


def binary_note(kernel: str) -> str:
    """The step's note for a binary join run by ``kernel`` (a :data:`BINARY_KERNELS` name).

    >>> binary_note("sort-merge")
    'in-process binary join (sort-merge)'
    """
    return f"in-process binary join ({BINARY_KERNELS[kernel]})"


def without_private(relations: Sequence[Sequence[str]], indicators: Sequence[Sequence[str]],
                    keep: Sequence[str]) -> list[tuple[str, ...]]:
    """Each relation's variables without its *private* ones: not kept, in no other relation or indicator.

    ⊕ distributes over ⊗, so a binary step that ⊕-aggregates may sum them out
    of their relation before the join (:mod:`faq.joins.local`).

    >>> without_private([("o", "p"), ("p",)], [], ())
    [('p',), ('p',)]
    >>> without_private([("i", "j"), ("j", "k")], [], ("i", "k"))
    [('i', 'j'), ('j', 'k')]
    """
    out = []
    for n, r in enumerate(relations):
        others = {v for m, t in enumerate(relations) if m != n for v in t} | {v for t in indicators for v in t}
        out.append(tuple(v for v in r if v in keep or v in others))
    return out


def product_shape(relations: Sequence[Sequence[str]], indicators: Sequence[Sequence[str]],
                  keep: Sequence[str]) -> str:
    """Why a step's variables are not a sparse matrix product A(i, j)·B(j, k) ⊕-summed onto (i, k)
    (:mod:`faq.joins.sparse_product`); "" when they are.

    Two relations over two variables each, sharing one, ``keep`` the other
    two; each indicator within one relation's variables or within ``keep``.

    >>> product_shape([("i", "j"), ("k", "j")], [("j",), ("i", "k")], ("i", "k"))
    ''
    >>> product_shape([("i", "j"), ("j", "k")], [], ("i",))
    'not A(i, j)·B(j, k) summed over j onto (i, k)'
    >>> product_shape([("i", "j"), ("j", "k")], [("i", "j", "k")], ("i", "k"))
    'an indicator over i, j, k is within neither matrix nor the output'
    """
    if len(relations) != 2 or len(keep) != 2 or keep[0] == keep[1] or any(
            len(r) != 2 or len(set(r)) != 2 for r in relations):
        return "not A(i, j)·B(j, k) summed over j onto (i, k)"
    first, second = (set(r) for r in relations)
    if len(first & second) != 1 or first ^ second != set(keep):
        return "not A(i, j)·B(j, k) summed over j onto (i, k)"
    for ind in (set(i) for i in indicators if i):
        if not (ind <= first or ind <= second or ind <= set(keep)):
            return f"an indicator over {', '.join(sorted(ind))} is within neither matrix nor the output"
    return ""


def binary_kernel(
    relations: Sequence[Sequence[str]],
    indicators: Sequence[Sequence[str]],
    keep: Sequence[str],
    rows: Sequence[float],
    integral: Optional[bool],
    arrays: bool = False,
    sums_products: bool = False,
) -> tuple[str, str]:
    """Which kernel an in-process binary join runs (a :data:`BINARY_KERNELS` name), and why.

    From facts known before the step runs: its relations' and indicators'
    variables (the relations' after private sums, :func:`without_private`),
    ``keep``, the (estimated) ``rows`` of every relation and indicator (inf:
    unknown), whether every key is an integer (None: unknown, taken to be),
    whether the values are an array ring's (``arrays``), and whether ⊗ and ⊕
    are × and + over int64 or float64 (``sums_products``).

    ``"sparse-product"`` for a matrix-product shape (:func:`product_shape`)
    in (+, ×) with integer keys; else ``"sort-merge"`` for integer keys (at
    any size: the sorted codes' matches beat pandas' hash merges from 25K
    rows to millions), or array values (a pandas column holds one number a
    row); else ``"pandas-merge"``.  ``rows`` are kept for the note.

    Examples
    --------
    >>> binary_kernel([("i", "j"), ("j", "k")], [], ("i", "k"), [9e4, 9e4], True, sums_products=True)
    ('sparse-product', '(i, j)·(j, k) ⊕-summed over j with + and ×, integer keys')
    >>> binary_kernel([("a", "b"), ("b", "c")], [], ("a",), [100, 2e5], True)
    ('sort-merge', 'integer keys, inputs of est. ≤ 2e+05 rows')
    >>> binary_kernel([("i", "j"), ("j", "k")], [], ("i", "k"), [10, 10], False, sums_products=True)
    ('pandas-merge', 'keys are not all integers')
    """
    if integral is not False and sums_products and not arrays and not product_shape(relations, indicators, keep):
        (j,) = set(relations[0]) & set(relations[1])
        return "sparse-product", f"({keep[0]}, {j})·({j}, {keep[1]}) ⊕-summed over {j} with + and ×, integer keys"
    if integral is False:
        return "pandas-merge", "keys are not all integers"
    if arrays:
        return "sort-merge", "array values (a pandas column holds one number a row)"
    largest = max(rows, default=0.0)
    if not math.isfinite(largest):
        return "sort-merge", "integer keys, input sizes unknown"
    return "sort-merge", f"integer keys, inputs of est. ≤ {largest:.3g} rows"


def _matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i, j) with ``left[i] == right[j]`` (int64 codes): an inner join of sorted codes.

    Both sides are put in order (:func:`~faq.joins.table.in_order`: nothing to do for codes already
    ascending, as a relation's rows from the driver's CSR are) and matched by binary searches of one
    sorted array in the other, which read both sequentially: searching unsorted probes costs a cache
    miss a probe (R-MAT 18's 3.9M edges against their reverse: 3.2 s, sorted 0.16 s).  The pairs
    come in the order of the keys -- except where the codes are dense and one side's are unique (a
    message's keys): that side is addressed directly (:func:`faq.joins.dense.unique_lookup`, no sort) and
    the pairs come in the other side's row order.

    >>> i, j = _matches(np.array([3, 1, 3]), np.array([3, 3, 2]))
    >>> sorted(zip(i.tolist(), j.tolist()))
    [(0, 0), (0, 1), (2, 0), (2, 1)]
    >>> i, j = _matches(np.array([4, 2, 9]), np.array([9, 4, 7]))   # unique keys: one search
    >>> sorted(zip(i.tolist(), j.tolist()))
    [(0, 1), (2, 0)]
    """
    span = dense_span(left, right)
    if span is not None:  # few codes: one side's unique codes addressed directly, the other read once
        if is_unique(right, span):
            return unique_lookup(right, left, span)
        if is_unique(left, span):
            right_rows, left_rows = unique_lookup(left, right, span)
            return left_rows, right_rows
    ordered, order = in_order(right)
    probes, probe_order = in_order(left)
    low = np.searchsorted(ordered, probes, side="left")
    if len(ordered) < 2 or bool(np.all(ordered[1:] != ordered[:-1])):  # unique keys: a match or none
        hit = np.flatnonzero(ordered[np.minimum(low, len(ordered) - 1)] == probes) if len(ordered) else low[:0]
        left_rows, right_rows = hit, low[hit]
    else:
        counts = np.searchsorted(ordered, probes, side="right") - low
        left_rows = np.repeat(np.arange(len(probes), dtype=np.int64), counts)
        starts = np.cumsum(counts) - counts
        within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        right_rows = np.repeat(low, counts) + within
    left_rows = left_rows if probe_order is None else probe_order[left_rows]
    return left_rows.astype(np.int64, copy=False), (right_rows if order is None else order[right_rows])


def _shared_codes(left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray], on: Sequence[str]
                  ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Codes of ``on`` numbered over both sides at once, and whether they are exact (equal exactly
    where the keys are; else equal where the first variable is: too many combinations for int64).

    Each side's codes are its columns' offsets from the least value of both sides (no copy of the
    two sides together) where the ranges allow, else ranks over both sides (:func:`key_codes`).

    >>> l, r, exact = _shared_codes({"a": np.array([5, 7]), "b": np.array([1, 2])},
    ...                             {"a": np.array([7, 9]), "b": np.array([2, 1])}, ["a", "b"])
    >>> l.tolist(), r.tolist(), exact
    ([0, 5], [5, 8], True)
    """
    mine, theirs = [np.asarray(left[v]) for v in on], [np.asarray(right[v]) for v in on]
    if all(k.dtype.kind in "iu" and len(k) for k in (*mine, *theirs)):
        bounds = [(min(int(a.min()), int(b.min())), max(int(a.max()), int(b.max()))) for a, b in zip(mine, theirs)]
        if math.prod(high - low + 1 for low, high in bounds) < 1 << 62:
            return offset_codes(mine, bounds), offset_codes(theirs, bounds), True
    n = len(mine[0])
    codes = key_codes([np.concatenate([a, b]) for a, b in zip(mine, theirs)])
    exact = codes is not None
    if not exact:
        codes = key_codes([np.concatenate([mine[0], theirs[0]])])
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


def _inner(left: "pd.DataFrame", right: "pd.DataFrame", on: list[str]) -> "pd.DataFrame":
    """``left ⋈ right`` on ``on`` by pandas, on one int64 code where ``on`` is several integer columns
    (:func:`~faq.joins.table.key_codes`) rather than pandas numbering the columns' combinations itself:
    the term ``edge(a,b), edge(b,c), edge(c,b), edge(b,a)`` of R-MAT 18's 4-cycle count took 6.5 s
    against 7.1 s (hashing the one code is most of what is left).

    >>> import pandas as pd
    >>> l = pd.DataFrame({"a": [1, 1, 2], "b": [5, 6, 5], "x": [10, 20, 30]})
    >>> _inner(l, pd.DataFrame({"b": [5, 5], "a": [2, 1], "y": [7, 8]}), ["a", "b"]).values.tolist()
    [[1, 5, 10, 8], [2, 5, 30, 7]]
    """
    n = len(left)
    codes = key_codes([np.concatenate([left[v].to_numpy(), right[v].to_numpy()]) for v in on]) if len(on) > 1 else None
    if codes is None:
        return left.merge(right, on=on, how="inner")
    keyed_left = left.assign(__key=codes[:n])
    keyed_right = right.drop(columns=on).assign(__key=codes[n:])
    return keyed_left.merge(keyed_right, on="__key", how="inner").drop(columns="__key")


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
            product = _inner(product, right, on) if on else product.merge(right, how="cross")
            product[VALUE_COLUMN] = multiplied(product[VALUE_COLUMN].to_numpy(), product.pop("__w").to_numpy(), ops)
        covered = [ind for ind in pending if set(ind.variables) <= set(product.columns)]
        for ind in covered:
            product = _inner(product, ind.frame(valued=False), list(ind.variables))
            pending.remove(ind)
    if product is None:  # no relation: the product is one, on no variable
        product = pd.DataFrame({VALUE_COLUMN: np.array([ops.one], dtype=ops.dtype)})
    for ind in pending:  # variables no relation holds: a cross product with the indicator
        product = product.merge(ind.frame(valued=False), how="cross")
    variables = tuple(c for c in product.columns if c != VALUE_COLUMN)
    values = np.asarray(product[VALUE_COLUMN].to_numpy(), dtype=ops.dtype)
    return Table(variables, {v: product[v].to_numpy() for v in variables}, values)
