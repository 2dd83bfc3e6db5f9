"""Semirings: (D, ⊕, ⊗, 0, 1) as Spark Column operations, a registry, law checks.

Examples
--------
>>> from faq.semirings import get_semiring
>>> s = get_semiring("boolean")
>>> s.zero, s.one, s.idempotent, s.is_ring
(False, True, True, False)
"""

from faq.semirings.base import Semiring
from faq.semirings.builtins import (
    BOOLEAN,
    COUNTING,
    INTEGER,
    MAX_MIN,
    MAX_PLUS,
    MAX_PRODUCT,
    MIN_MAX,
    MIN_PLUS,
    REAL,
    builtin_semirings,
    get_semiring,
    register,
    semiring_names,
)
from faq.semirings.laws import assert_laws, check_laws

__all__ = [
    "Semiring",
    "get_semiring",
    "register",
    "semiring_names",
    "builtin_semirings",
    "check_laws",
    "assert_laws",
    "COUNTING",
    "INTEGER",
    "REAL",
    "BOOLEAN",
    "MIN_PLUS",
    "MAX_PLUS",
    "MAX_PRODUCT",
    "MAX_MIN",
    "MIN_MAX",
]
