"""Exact row counts of two held relations joined on one variable, from their degree histograms.

A join's product rows decide where a step runs (:attr:`faq.insideout.plans.Step.product_rows`,
:func:`faq.insideout.placement.place_steps`).  Without more than each relation's rows and largest
degree, the bound of two relations joined on ``v`` is ``rows × largest degree`` -- on Email-Enron's
2-paths 367,662 × 1,383 = 5.1e8 rows, where there are 5.2e7 (a hub's degree is far above the
typical one).  For relations the driver holds, the exact count is one pass over each key column:
``Σ_k deg_R(k) · deg_S(k)`` (the degrees of value ``k`` of ``v`` in ``R`` and in ``S``), so the planner
is given it (:func:`pair_rows`) for every pair of atoms that share exactly one variable.

Examples
--------
>>> import numpy as np
>>> keys, counts = value_histogram(np.array([3, 1, 3, 3, 7]))
>>> keys.tolist(), counts.tolist()
([1, 3, 7], [1, 3, 1])
>>> joined_rows(value_histogram(np.array([1, 1, 2])), value_histogram(np.array([1, 2, 2, 5])))
4
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

if TYPE_CHECKING:
    from faq.factor import Factor
    from faq.language import FAQ

__all__ = ["value_histogram", "dense_histogram", "column_histogram", "joined_rows", "pair_rows", "atom_column"]

Histogram = tuple[np.ndarray, np.ndarray]  # (distinct values ascending, how many rows hold each)

# A cache: each held relation's column histograms, made once and kept while the relation lives (the
# pieces of one plan, planned one by one, read the same unrestricted relations).
_HISTOGRAMS: "weakref.WeakKeyDictionary[Any, dict[str, Histogram]]" = weakref.WeakKeyDictionary()


def column_histogram(relation: Any, column: str) -> Optional[Histogram]:
    """:func:`value_histogram` of a column of a held :class:`~faq.relation.Relation`, counted once per
    relation object; None when the column's values are not integers.

    >>> from faq.relation import Relation
    >>> r = Relation.from_arrays({"a": np.array([5, 5, 7]), "x": np.array([0.5, 1.5, 0.5])})
    >>> column_histogram(r, "a")[1].tolist(), column_histogram(r, "a") is column_histogram(r, "a")
    ([2, 1], True)
    >>> column_histogram(r, "x") is None
    True
    """
    known = _HISTOGRAMS.setdefault(relation, {})
    if column not in known:
        values = np.asarray(relation.arrays[column])
        known[column] = value_histogram(values) if values.dtype.kind in "iu" else None
    return known[column]


def value_histogram(values: np.ndarray) -> Histogram:
    """The distinct values of an integer column (ascending) and how many rows hold each.

    Counted with ``bincount`` when the values span at most four times their
    number (one pass), else sorted (``numpy.unique``).
    """
    values = np.asarray(values)
    if not len(values):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    dense = dense_histogram(values)
    return dense if dense is not None else np.unique(values, return_counts=True)


def dense_histogram(values: np.ndarray) -> Optional[Histogram]:
    """:func:`value_histogram` of a non-empty integer column by one ``bincount``, or None when its values
    span more than four times their number (the counts array would dwarf the column).

    >>> dense_histogram(np.array([4, 2, 4])), dense_histogram(np.array([0, 10**9]))
    ((array([2, 4]), array([1, 2])), None)
    """
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * len(values):
        return None
    counts = np.bincount(values - low if low else values)
    keys = np.flatnonzero(counts)
    return keys + low, counts[keys]


def joined_rows(left: Histogram, right: Histogram) -> int:
    """Rows of the equi-join of two columns given by their histograms: Σ over shared values of the product."""
    _, i, j = np.intersect1d(left[0], right[0], assume_unique=True, return_indices=True)
    return int(np.dot(left[1][i].astype(np.float64), right[1][j].astype(np.float64)))


def pair_rows(query: "FAQ", factors: Mapping[str, "Factor"], held: Sequence[str]) -> dict[tuple[int, int], int]:
    """For each pair of atoms over ``held`` factors sharing exactly one variable (integer keys, no
    variable repeated in either atom), the exact rows of their join on it, keyed by atom positions.

    Each factor column's histogram is made once, however many atoms read it (:func:`column_histogram`).
    """
    atoms = [(k, a) for k, a in enumerate(query.atoms)
             if a.factor in held and len(set(a.variables)) == len(a.variables)]
    found: dict[tuple[int, int], int] = {}
    for x, (i, left) in enumerate(atoms):
        for j, right in atoms[x + 1:]:
            shared = set(left.variables) & set(right.variables)
            if len(shared) != 1:
                continue
            (v,) = shared
            sides = [column_histogram(factors[atom.factor].relation, atom_column(factors[atom.factor], atom, v))
                     for atom in (left, right)]
            if sides[0] is not None and sides[1] is not None:
                found[i, j] = joined_rows(sides[0], sides[1])
    return found


def atom_column(factor: Any, atom: Any, variable: str) -> str:
    """The factor's column an atom binds to ``variable`` (its first, if the atom repeats it)."""
    return factor.variables[list(atom.variables).index(variable)]
