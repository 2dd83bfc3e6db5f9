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

Examples
--------
>>> from faq.semirings import get_semiring, semiring_names
>>> get_semiring("min-plus").zero
inf
>>> get_semiring("tropical").name
'min_plus'
>>> "counting" in semiring_names()
True
"""

from __future__ import annotations

import math
from typing import Union

from pyspark.sql import functions as F

from faq.errors import UnknownSemiringError
from faq.semirings.base import Semiring

INF = math.inf

COUNTING = Semiring(
    name="counting",
    value_type="bigint",
    zero=0,
    one=1,
    add=lambda a, b: a + b,
    mul=lambda a, b: a * b,
    sum=F.sum,
    product="times.bigint",
    samples=(0, 1, 2, 7),
    description="natural numbers (+, ×): counting",
)

INTEGER = Semiring(
    name="integer",
    value_type="bigint",
    zero=0,
    one=1,
    add=lambda a, b: a + b,
    mul=lambda a, b: a * b,
    sum=F.sum,
    neg=lambda a: -a,
    product="times.bigint",
    samples=(0, 1, -1, 3, -7),
    description="integers (+, ×), a ring: signed counts and deltas",
)

REAL = Semiring(
    name="real",
    value_type="double",
    zero=0.0,
    one=1.0,
    add=lambda a, b: a + b,
    mul=lambda a, b: a * b,
    sum=F.sum,
    neg=lambda a: -a,
    product="times.double",
    samples=(0.0, 1.0, -3.0, 0.5, 2.5),
    description="real numbers (+, ×), a ring: matrix products, marginals",
)

BOOLEAN = Semiring(
    name="boolean",
    value_type="boolean",
    zero=False,
    one=True,
    add=lambda a, b: a | b,
    mul=lambda a, b: a & b,
    sum=F.bool_or,
    idempotent=True,
    product="and.boolean",
    samples=(False, True),
    description="booleans (∨, ∧): joins, reachability, satisfiability",
)

MIN_PLUS = Semiring(
    name="min_plus",
    value_type="double",
    zero=INF,
    one=0.0,
    add=F.least,
    mul=lambda a, b: a + b,
    sum=F.min,
    idempotent=True,
    product="plus.double",
    samples=(INF, 0.0, 1.5, -2.0, 7.0),
    description="tropical (min, +): shortest paths",
)

MAX_PLUS = Semiring(
    name="max_plus",
    value_type="double",
    zero=-INF,
    one=0.0,
    add=F.greatest,
    mul=lambda a, b: a + b,
    sum=F.max,
    idempotent=True,
    product="plus.double",
    samples=(-INF, 0.0, 1.5, -2.0, 7.0),
    description="arctic (max, +): longest paths, MAP in log space",
)

MAX_PRODUCT = Semiring(
    name="max_product",
    value_type="double",
    zero=0.0,
    one=1.0,
    add=F.greatest,
    mul=lambda a, b: a * b,
    sum=F.max,
    idempotent=True,
    product="times.double",
    samples=(0.0, 1.0, 0.25, 0.5, 3.0),
    description="Viterbi (max, ×) on non-negative values: MAP inference",
)

MAX_MIN = Semiring(
    name="max_min",
    value_type="double",
    zero=-INF,
    one=INF,
    add=F.greatest,
    mul=F.least,
    sum=F.max,
    idempotent=True,
    product="min.double",
    samples=(-INF, INF, 0.0, 2.0, -1.0),
    description="bottleneck (max, min): widest paths",
)

MIN_MAX = Semiring(
    name="min_max",
    value_type="double",
    zero=INF,
    one=-INF,
    add=F.least,
    mul=F.greatest,
    sum=F.min,
    idempotent=True,
    product="max.double",
    samples=(-INF, INF, 0.0, 2.0, -1.0),
    description="minimax (min, max): paths minimising the largest step",
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
    """Add ``semiring`` to the registry under its name.

    Raises ``ValueError`` if the name is taken and ``replace`` is False.
    """
    key = _normalise(semiring.name)
    if key in _REGISTRY and not replace:
        raise ValueError(f"a semiring named {semiring.name!r} is registered already")
    _REGISTRY[key] = semiring
    return semiring


def get_semiring(name: Union[str, Semiring]) -> Semiring:
    """Look up a semiring by name (case, ``-`` and aliases tolerated).

    A :class:`Semiring` passes through unchanged.  An unknown name raises
    :class:`~faq.errors.UnknownSemiringError`, which lists the valid names.
    """
    if isinstance(name, Semiring):
        return name
    key = _normalise(str(name))
    key = ALIASES.get(key, key)
    try:
        return _REGISTRY[key]
    except KeyError:
        raise UnknownSemiringError(name=str(name), valid=semiring_names()) from None


def semiring_names() -> list[str]:
    """Names of the registered semirings, sorted."""
    return sorted(_REGISTRY)


def builtin_semirings() -> list[Semiring]:
    """The nine built-in semirings, in the order of the table above."""
    return list(BUILTINS)


def _normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


BUILTINS = (COUNTING, INTEGER, REAL, BOOLEAN, MIN_PLUS, MAX_PLUS, MAX_PRODUCT, MAX_MIN, MIN_MAX)
for _s in BUILTINS:
    register(_s)
