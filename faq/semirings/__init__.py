"""Semirings: (D, ⊕, ⊗, 0, 1) declared as algebra, a registry, law checks.

=================================  =============================================
module                             what it holds
=================================  =============================================
:mod:`~faq.semirings.operations`   ⊕ / ⊗ / ⊖ as named operation values
:mod:`~faq.semirings.base`         :class:`Semiring`: value type, 0, 1, ⊕, ⊗
:mod:`~faq.semirings.structured`   :class:`ArraySemiring`: values of w doubles
:mod:`~faq.semirings.tuples`       :class:`TupleSemiring`: w doubles, any ⊕ and ⊗
:mod:`~faq.semirings.rings`        :data:`MOMENTS`, :func:`cofactor` (array rings)
:mod:`~faq.semirings.builtins`     the built-in semirings and the registry
:mod:`~faq.semirings.laws`         law checks on sample values
:mod:`~faq.semirings.spark_backend`  ``columns(semiring)``: Spark Columns
:mod:`~faq.semirings.numpy_backend`  ``numpy_ops(semiring)``: numpy ufuncs
=================================  =============================================

Importing this package loads no pyspark; the two backends are imported by
the code that runs them.

Examples
--------
>>> from faq.semirings import get_semiring
>>> s = get_semiring("boolean")
>>> s.zero, s.one, s.idempotent, s.is_ring
(False, True, True, False)
>>> s.add, s.mul
(Operation('or'), Operation('and'))

Rings whose values are arrays of doubles, e.g. (count, sum, sum of squares):

>>> from faq.semirings import MOMENTS, cofactor
>>> MOMENTS.width, MOMENTS.components, MOMENTS.is_ring, cofactor(4).width
(3, ('count', 'sum', 'sum_sq'), True, 15)
"""

from faq.semirings.base import Semiring
from faq.semirings.builtins import (
    BOOLEAN,
    COUNTING,
    INTEGER,
    MAX_MIN,
    MAX_PLUS,
    MAX_PRODUCT,
    MIN_LABEL,
    MIN_MAX,
    MIN_PLUS,
    REAL,
    builtin_semirings,
    get_semiring,
    register,
    semiring_names,
)
from faq.semirings.laws import assert_laws, check_laws
from faq.semirings.rings import MOMENTS, CofactorRing, cofactor
from faq.semirings.structured import ArraySemiring, BilinearProduct
from faq.semirings.tuples import TupleSemiring
from faq.semirings.operations import AND, MAX, MIN, NEGATE, OR, PLUS, TIMES, Operation, UnaryOperation

__all__ = [
    "Semiring",
    "ArraySemiring",
    "TupleSemiring",
    "BilinearProduct",
    "CofactorRing",
    "MOMENTS",
    "cofactor",
    "Operation",
    "UnaryOperation",
    "PLUS",
    "TIMES",
    "MIN",
    "MAX",
    "OR",
    "AND",
    "NEGATE",
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
    "MIN_LABEL",
]
