"""The built-in semirings and the registry by name.

=============  =======  ========  ==========  ==========  =========================
name           values   ⊕         ⊗           zero, one   used for
=============  =======  ========  ==========  ==========  =========================
counting       bigint   +         ×           0, 1        counting (ℕ): triangles
integer        bigint   +         ×           0, 1        ℤ, a ring: signed deltas
real           double   +         ×           0, 1        matrix products, marginals
boolean        boolean  ∨         ∧           F, T        joins, reachability, SAT
min_plus       double   min       +           +∞, 0       shortest paths (tropical)
max_plus       double   max       +           −∞, 0       longest paths, MAP in logs
max_product    double   max       ×           0, 1        Viterbi / MAP (values ≥ 0)
max_min        double   max       min         −∞, +∞      widest (bottleneck) paths
min_max        double   min       max         +∞, −∞      minimax paths
=============  =======  ========  ==========  ==========  =========================

Each is made of built-in operations (:mod:`faq.semirings.operations`), so
both backends run it.  :data:`MIN_LABEL` (min, + on bigint; zero 2⁶³−1,
one 0), the labels of connected components, is defined here too but kept
out of the registry.

Examples
--------
>>> from faq.semirings import get_semiring, semiring_names
>>> get_semiring("min-plus").zero
inf
>>> get_semiring("tropical").name
'min_plus'
>>> "counting" in semiring_names()
True
>>> get_semiring("max_min").add, get_semiring("max_min").mul
(Operation('max'), Operation('min'))
"""

from __future__ import annotations

from typing import Optional, Union

from faq.errors import UnknownSemiringError
from faq.semirings.base import Semiring
from faq.semirings.operations import (
    AND,
    BIGINT,
    BOOLEAN as BOOL,
    DOUBLE,
    INF,
    MAX,
    MIN,
    NEGATE,
    OR,
    PLUS,
    TIMES,
)

COUNTING = Semiring(
    "counting", BIGINT, 0, 1, PLUS, TIMES,
    samples=(0, 1, 2, 7), description="natural numbers (+, ×): counting", completion="integer",
)
INTEGER = Semiring(
    "integer", BIGINT, 0, 1, PLUS, TIMES, neg=NEGATE,
    samples=(0, 1, -1, 3, -7), description="integers (+, ×), a ring: signed counts and deltas",
)
REAL = Semiring(
    "real", DOUBLE, 0.0, 1.0, PLUS, TIMES, neg=NEGATE,
    samples=(0.0, 1.0, -3.0, 0.5, 2.5), description="real numbers (+, ×), a ring: matrix products, marginals",
)
BOOLEAN = Semiring(
    "boolean", BOOL, False, True, OR, AND,
    samples=(False, True), description="booleans (∨, ∧): joins, reachability, satisfiability",
)
MIN_PLUS = Semiring(
    "min_plus", DOUBLE, INF, 0.0, MIN, PLUS,
    samples=(INF, 0.0, 1.5, -2.0, 7.0), description="tropical (min, +): shortest paths",
)
MAX_PLUS = Semiring(
    "max_plus", DOUBLE, -INF, 0.0, MAX, PLUS,
    samples=(-INF, 0.0, 1.5, -2.0, 7.0), description="arctic (max, +): longest paths, MAP in log space",
)
# zero is 0, not max's identity −∞: the values are non-negative.
MAX_PRODUCT = Semiring(
    "max_product", DOUBLE, 0.0, 1.0, MAX, TIMES,
    samples=(0.0, 1.0, 0.25, 0.5, 3.0), description="Viterbi (max, ×) on non-negative values: MAP inference",
)
MAX_MIN = Semiring(
    "max_min", DOUBLE, -INF, INF, MAX, MIN,
    samples=(-INF, INF, 0.0, 2.0, -1.0), description="bottleneck (max, min): widest paths",
)
MIN_MAX = Semiring(
    "min_max", DOUBLE, INF, -INF, MIN, MAX,
    samples=(-INF, INF, 0.0, 2.0, -1.0), description="minimax (min, max): paths minimising the largest step",
)

#: Connected-component labels: ⊕ = min, ⊗ = + on bigint, zero = 2⁶³−1 (min's identity); edges
#: carry ``one`` (0), so a label crosses an edge unchanged.  Not in the registry: its values are
#: node ids, not general-purpose values, and registering it would add it to
#: :func:`semiring_names` (the names the CLI offers); :func:`faq.recursive.components_on_spark`
#: uses it.  ⊗ is only ever applied with ``one`` there (edges carry 0), so + never meets the
#: zero; on other values the zero does not annihilate (2⁶³−1 + 1 overflows) and the law checker
#: says so.
MIN_LABEL = Semiring(
    "min_label", BIGINT, MIN.identity(BIGINT), 0, MIN, PLUS,
    samples=(0, 1, 5, 42), description="(min, +) on 64-bit integers: connected-component labels (edges carry 0)",
)

_REGISTRY: dict[str, Semiring] = {}

# Other names people use for the same semirings.
ALIASES = {
    "natural": "counting",
    "count": "counting",
    "int": "integer",
    "sum_product": "real",
    "bool": "boolean",
    "tropical": "min_plus",
    "arctic": "max_plus",
    "viterbi": "max_product",
    "bottleneck": "max_min",
    "widest": "max_min",
}


def register(semiring: Semiring, *, replace: bool = False) -> Semiring:
    """Add ``semiring`` to the registry under its name, so queries and the CLI can name it.

    Parameters
    ----------
    semiring : Semiring
    replace : bool
        Replace a registered semiring of the same name.

    Returns
    -------
    Semiring
        ``semiring`` itself.

    Raises
    ------
    InvalidArgumentError
        The name is taken and ``replace`` is False.

    Examples
    --------
    >>> from faq.semirings import MAX, MIN, Semiring
    >>> mine = register(Semiring("my_min_max", "double", zero=float("inf"), one=float("-inf"), add=MIN, mul=MAX),
    ...                 replace=True)
    >>> get_semiring("my-min-max") is mine   # case and '-' tolerated
    True
    >>> _ = _REGISTRY.pop("my_min_max")      # (the doctest leaves the registry as it was)
    """
    key = _normalise(semiring.name)
    if key in _REGISTRY and not replace:
        from faq.errors import InvalidArgumentError

        raise InvalidArgumentError(argument="semiring", value=semiring.name,
                                   reason="a semiring of this name is registered already; pass replace=True to "
                                          "replace it")
    _REGISTRY[key] = semiring
    return semiring


def get_semiring(name: Union[str, Semiring]) -> Semiring:
    """Look up a semiring by name (case, ``-`` and aliases tolerated).

    Parameters
    ----------
    name : str or Semiring
        A :class:`Semiring` passes through unchanged.

    Returns
    -------
    Semiring

    Raises
    ------
    UnknownSemiringError
        An unknown name; the message lists the valid names.

    Examples
    --------
    >>> ring = get_semiring("min-plus")
    >>> ring.name, ring.zero, ring.one
    ('min_plus', inf, 0.0)
    """
    if isinstance(name, Semiring):
        return name
    key = _normalise(str(name))
    key = ALIASES.get(key, key)
    try:
        return _REGISTRY[key]
    except KeyError:
        ring = _array_ring(key)
        if ring is not None:
            return ring
        raise UnknownSemiringError(name=str(name), valid=semiring_names()) from None


def _array_ring(key: str) -> Optional[Semiring]:
    """The built-in array rings by the names they print: ``moments`` and ``cofactor(m)``.

    Kept out of the registry (``cofactor`` is a family), but found by name,
    so a saved maintained state or a command line can name them.

    >>> get_semiring("cofactor(3)").width, get_semiring("moments").components
    (10, ('count', 'sum', 'sum_sq'))
    """
    import re

    from faq.semirings.rings import MOMENTS, cofactor

    if key == "moments":
        return MOMENTS
    match = re.fullmatch(r"cofactor\((\d+)\)", key)
    if match and int(match.group(1)) >= 1:
        return cofactor(int(match.group(1)))
    return None


def semiring_names() -> list[str]:
    """Names of the registered semirings, sorted.

    Returns
    -------
    list of str

    Examples
    --------
    >>> "min_plus" in semiring_names() and "counting" in semiring_names()
    True
    """
    return sorted(_REGISTRY)


def builtin_semirings() -> list[Semiring]:
    """The nine built-in semirings, in the order of the table above."""
    return list(BUILTINS)


def _normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


BUILTINS = (COUNTING, INTEGER, REAL, BOOLEAN, MIN_PLUS, MAX_PLUS, MAX_PRODUCT, MAX_MIN, MIN_MAX)
for _s in BUILTINS:
    register(_s)
