"""A foreign-key star on the driver: the join gathered by key lookups and summed as one matrix product.

When the join is a chain of foreign keys from one table (the *fact*) -- each
other table looked up by the variables it shares with those before it, a key
it holds once: ``lineitem(o, p), orders(o), part(p)`` with ``orderkey``
unique in orders and ``partkey`` in part, or a snowflake
``lineitem(o, p), orders(o, c), customer(c)`` -- the join has at most the
fact's rows: each fact row meets at most one row of every other table.  Then
factorizing buys nothing -- no variable is summed out before a join shrinks
anything -- and the ring's 45-double products per key cost far more than the
flat sums.  This plan instead finds each fact row's partner rows (a direct
table for dense keys, else binary search on sorted keys), keeps the fact rows
that have all of them (the inner join), gathers the feature columns into one
``n × m`` matrix ``X`` and takes ``(n, Σx, XᵀX)`` with one BLAS product: the
work DuckDB or Spark SQL do for the same sums, without listing the join as rows.

:func:`star_plan` decides from the query alone (the shape); :func:`star_aggregate`
checks the data (integer keys, each other table's key unique) and returns
None whenever the shape or the data do not allow the plan, so the caller
runs the factorized plan instead.  Rows with a null key or feature are
dropped from their table first, as the factorized plan drops them
(:mod:`faq.learning.features`).

Examples
--------
>>> import pandas as pd
>>> from faq.language import parse_query
>>> from faq.learning.features import parse_features
>>> q = parse_query("count() := items(o, p), orders(o), parts(p)")
>>> str(star_plan(q, {"items": 5, "orders": 2, "parts": 2}))
"in-process foreign-key star: items(o, p)'s rows, looked up in orders(o) by o, parts(p) by p (keys each table holds once), then one matrix product over the joined rows"
>>> tables = {"items": pd.DataFrame({"o": [1, 1, 2, 2, 9], "p": [1, 2, 1, 2, 1], "q": [1.0, 2.0, 3.0, 4.0, 5.0]}),
...           "orders": pd.DataFrame({"o": [1, 2], "w": [10.0, 20.0]}),
...           "parts": pd.DataFrame({"p": [1, 2], "s": [0.5, 1.5]})}
>>> f = parse_features(["items.q", "orders.w", "parts.s"], {a.factor: a.variables for a in q.atoms})
>>> count, sums, products, plan, notes = star_aggregate(q, f, tables)
>>> count, sums.tolist()              # order 9 is in no order: its item does not join
(4, [10.0, 60.0, 4.0])
>>> star_aggregate(q, f, {**tables, "orders": pd.DataFrame({"o": [1, 1, 2], "w": [1.0, 2.0, 3.0]})}) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from faq.input_kinds import is_pandas

__all__ = ["StarPlan", "star_plan", "star_aggregate", "BLOCK_ROWS"]

#: Joined rows gathered and multiplied at once: the block of features (rows x features doubles) stays in the
#: processor's cache and no array the size of the join is made (a 6M-row snowflake's was 336 MB).
BLOCK_ROWS = 1 << 16


@dataclass(frozen=True)
class StarPlan:
    """What :func:`star_aggregate` runs: the fact atom's rows, each other atom looked up by its key.

    Attributes
    ----------
    fact : str
        The atom of the largest table (``items(o, p)``): every joined row is one of its rows.
    lookups : tuple of str
        The other atoms, in the order they are looked up, each by the variables it shares with
        those before it (:attr:`keys`): a key its table must hold once.
    keys : tuple of tuple of str
        Per lookup, its key variables.
    positions : tuple of int
        The fact's position in the query, then the lookups'.
    """

    fact: str
    lookups: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    positions: tuple[int, ...]
    #: What the answer's per-table notes are, as ``explain`` heads them (nothing is lifted into a ring).
    notes_header = "rows dropped, per table:"

    def __str__(self) -> str:
        looked = ", ".join(f"{a} by {', '.join(k)}" for a, k in zip(self.lookups, self.keys))
        return (f"in-process foreign-key star: {self.fact}'s rows, looked up in {looked} (keys each table holds "
                "once), then one matrix product over the joined rows")


def star_plan(parsed: Any, rows: Optional[Mapping[str, int]] = None) -> Optional[StarPlan]:
    """The lookups of ``parsed``'s atoms from the largest table's (by ``rows``; else the first), or None:
    a table in two atoms, a variable repeated in an atom, an atom of no variable, or atoms not connected.

    From the fact, each next atom is the first sharing a variable with those before it, looked up by
    the variables it shares (a star, or a snowflake: ``lineitem(o, p), orders(o, c), customer(c)``).
    """
    atoms = list(parsed.atoms)
    tables = [a.factor for a in atoms]
    if len(atoms) < 2 or len(set(tables)) != len(tables):
        return None
    if any(len(set(a.variables)) != len(a.variables) or not a.variables for a in atoms):
        return None
    sizes = rows or {}
    fact = max(range(len(atoms)), key=lambda k: (sizes.get(tables[k], 0), -k))
    order, keys, bound = [fact], [], set(atoms[fact].variables)
    while len(order) < len(atoms):
        k = next((k for k in range(len(atoms)) if k not in order and bound & set(atoms[k].variables)), None)
        if k is None:
            return None  # a product of unconnected parts: not a lookup
        order.append(k)
        keys.append(tuple(v for v in atoms[k].variables if v in bound))
        bound |= set(atoms[k].variables)
    return StarPlan(str(atoms[fact]), tuple(str(atoms[k]) for k in order[1:]), tuple(keys), tuple(order))


def star_aggregate(parsed: Any, features: Sequence[Any], tables: Mapping[str, Any],
                   rows: Optional[Mapping[str, int]] = None, started: Optional[Callable[[StarPlan], None]] = None
                   ) -> Optional[tuple[int, np.ndarray, np.ndarray, StarPlan, tuple[str, ...]]]:
    """``(n, Σx, Σxxᵀ, plan, notes)`` of ``features`` over the star join of pandas ``tables``, or None when the
    plan does not apply (:func:`star_plan`; a key not an integer; a looked-up key held twice).

    ``notes`` say how many rows of a table had a null key or feature and were dropped.  ``started`` is
    called once the data allow the plan (every key looked up), before the gather and the product.
    """
    plan = star_plan(parsed, rows)
    if plan is None or not all(is_pandas(tables.get(a.factor)) for a in parsed.atoms):
        return None
    frames, notes = _frames([parsed.atoms[k] for k in plan.positions], features, tables)
    if frames is None:
        return None
    fact = parsed.atoms[plan.positions[0]]
    if any(len(f) == 0 for f in frames.values()):  # nothing joins
        m = len(features)
        return 0, np.zeros(m), np.zeros((m, m)), plan, tuple(notes)
    values = {v: frames[fact.factor][v].to_numpy() for v in fact.variables}  # per fact row, each bound variable
    keep = np.ones(len(frames[fact.factor]), dtype=bool)
    partners: dict[str, np.ndarray] = {}
    for k, key in zip(plan.positions[1:], plan.keys):
        frame = frames[parsed.atoms[k].factor]
        found = _looked_up([frame[v].to_numpy() for v in key], [values[v] for v in key])
        if found is None:
            return None
        keep &= found >= 0
        partners[parsed.atoms[k].factor] = at = np.maximum(found, 0)  # a row without a partner: dropped below
        for v in parsed.atoms[k].variables:
            values.setdefault(v, frame[v].to_numpy()[at])
    if started is not None:
        started(plan)
    rows = np.flatnonzero(keep)
    columns = [(frames[f.table][f.column].to_numpy(dtype=np.float64), None if f.table == fact.factor
                else partners[f.table], f.index) for f in features]
    m = len(features)
    sums, products = np.zeros(m), np.zeros((m, m))
    x = np.empty((min(len(rows), BLOCK_ROWS), m))
    with np.errstate(over="ignore"):  # an overflow is inf: fit_linear refuses it (MOMENTS_NOT_FINITE)
        for start in range(0, len(rows), BLOCK_ROWS):  # a block of the joined rows at a time: x stays in cache
            at = rows[start:start + BLOCK_ROWS]
            block = x[:len(at)]
            for column, partner, index in columns:
                np.take(column, at if partner is None else partner[at], out=block[:, index])
            sums += block.sum(axis=0)
            products += block.T @ block
    return len(rows), sums, products, plan, tuple(notes)


def _frames(atoms: Sequence[Any], features: Sequence[Any], tables: Mapping[str, Any]) -> tuple[Optional[dict], list]:
    """Each atom's table cut to its keys and features, rows with a null among them dropped (and noted); None
    when a column is missing (the factorized plan says which) or a key is not an integer."""
    frames, notes = {}, []
    for atom in atoms:
        used = list(dict.fromkeys([*atom.variables, *(f.column for f in features if f.table == atom.factor)]))
        if not set(used) <= set(tables[atom.factor].columns):
            return None, notes
        frame = tables[atom.factor][used]
        complete = ~frame.isna().any(axis=1).to_numpy()
        if not complete.all():
            notes.append(f"{atom.factor}: {int((~complete).sum()):,} rows with a null key or feature dropped")
            frame = frame[complete]
        if any(frame[v].dtype.kind not in "iu" for v in atom.variables):
            return None, notes
        frames[atom.factor] = frame
    return frames, notes


def _looked_up(table: Sequence[np.ndarray], wanted_columns: Sequence[np.ndarray]) -> Optional[np.ndarray]:
    """Per wanted key (the key columns, row by row), the position of the ``table`` row holding it (-1:
    none); None when ``table`` holds a key twice (not a lookup: the factorized plan handles it)."""
    own, wanted = _codes(table, wanted_columns)
    if not len(own):
        return np.full(len(wanted), -1, dtype=np.int64)
    low, high = int(own.min()), int(own.max())
    if high - low <= 4 * len(own) + 1024:  # dense keys (surrogate ids): a direct table, one gather per row
        slots = np.full(high - low + 1, -1, dtype=np.int64)
        slots[own - low] = np.arange(len(own))
        if int((slots >= 0).sum()) != len(own):
            return None  # a key held twice
        inside = (wanted >= low) & (wanted <= high)
        return np.where(inside, slots[np.clip(wanted - low, 0, high - low)], -1)
    order = np.argsort(own, kind="stable")
    ordered = own[order]
    if bool((ordered[1:] == ordered[:-1]).any()):
        return None
    at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
    return np.where(ordered[at] == wanted, order[at], -1)


def _codes(own: Sequence[np.ndarray], wanted: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One int64 key per row for a key of one or more integer columns, the same for equal keys on both sides."""
    if len(own) == 1:
        return np.asarray(own[0], dtype=np.int64), np.asarray(wanted[0], dtype=np.int64)
    both = np.column_stack([np.concatenate([a, b]).astype(np.int64) for a, b in zip(own, wanted)])
    _, codes = np.unique(both, axis=0, return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    return codes[:len(own[0])], codes[len(own[0]):]


