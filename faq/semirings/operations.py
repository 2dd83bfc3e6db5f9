"""The operations semirings are made of: named ⊕ / ⊗ / ⊖ values, no backend.

An :class:`Operation` is a binary operation on semiring values named once —
``PLUS``, ``TIMES``, ``MIN``, ``MAX``, ``OR``, ``AND`` — with its identity
element per value type and whether it is idempotent.  It says *what* is
computed, not *how*: the backends (:mod:`faq.semirings.spark_backend`,
:mod:`faq.semirings.numpy_backend`) each map the built-in operations to
their own executable forms, as ibis keeps typed operation nodes apart from
the engines that run them.

A user-defined operation carries its forms itself: ``spark`` (a function of
two Columns), ``spark_aggregate`` (⊕ over a group) and ``numpy`` (a binary
ufunc).  Operations compare by identity, so a user-defined one never passes
for a built-in one, whatever its name.

==========  ======  ==========================  ==========  ===========
operation   symbol  identity (bigint, double)    boolean     idempotent
==========  ======  ==========================  ==========  ===========
PLUS        +       0, 0.0                      —           no
TIMES       ×       1, 1.0                      —           no
MIN         min     2⁶³−1, +∞                   —           yes
MAX         max     −2⁶³, −∞                    —           yes
OR          ∨       —                           False       yes
AND         ∧       —                           True        yes
==========  ======  ==========================  ==========  ===========

``NEGATE`` (a :class:`UnaryOperation`) is the additive inverse of the rings
(``integer``, ``real``).

Examples
--------
>>> from faq.semirings.operations import MIN, PLUS
>>> MIN.identity("double"), MIN.identity("bigint"), MIN.idempotent
(inf, 9223372036854775807, True)
>>> PLUS.identity("bigint"), PLUS.builtin
(0, True)
>>> MIN
Operation('min')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from faq.errors import FAQTypeError, FAQValueError

if TYPE_CHECKING:  # Spark is only needed when a backend calls the functions.
    from pyspark.sql import Column

BinaryColumnFn = Callable[["Column", "Column"], "Column"]
UnaryColumnFn = Callable[["Column"], "Column"]

#: Spark SQL value types a semiring may hold, and their Python counterparts.
VALUE_TYPES = {"bigint": int, "double": float, "boolean": bool}
BIGINT, DOUBLE, BOOLEAN = "bigint", "double", "boolean"

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
INF = math.inf


class _KnownByIdentity:
    """What both kinds of operation share: built-ins are known by identity, also after pickling."""

    name: str

    @property
    def builtin(self) -> bool:
        """True for the operation values of this module (the backends know their forms)."""
        return any(self is op for op in BUILTIN_OPERATIONS)

    def __reduce__(self) -> tuple:
        # A built-in unpickles (e.g. on an executor) as the same value, which backends look up by identity.
        if self.builtin:
            return _builtin_operation, (self.name,)
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@dataclass(frozen=True, eq=False, repr=False)
class Operation(_KnownByIdentity):
    """A named binary operation on semiring values (a ⊕ or a ⊗).

    Parameters
    ----------
    name : str
        What it is called (``"plus"``); user-defined ones are named after
        their semiring (``"log.add"``).
    symbol : str
        How listings write it.
    identities : mapping value type -> value
        The identity element on each value type it is defined on.
    idempotent : bool
        ``a op a = a`` (min, max, ∨, ∧).
    spark : (Column, Column) -> Column, optional
        The Spark form of a user-defined operation (built-ins: None).
    spark_aggregate : Column -> Column, optional
        The operation folded over a group, as a Spark aggregate, when it is a
        user-defined ⊕ (None: Spark folds the group's values with ``spark``).
    numpy : numpy.ufunc, optional
        The numpy form of a user-defined operation: a binary ufunc (its
        ``reduce`` / ``reduceat`` / ``at`` are used).
    """

    name: str
    symbol: str = ""
    identities: Mapping[str, Any] = field(default_factory=dict)
    idempotent: bool = False
    spark: Optional[BinaryColumnFn] = None
    spark_aggregate: Optional[UnaryColumnFn] = None
    numpy: Any = None

    def __post_init__(self) -> None:
        _check_ufunc(self.name, self.numpy, inputs=2)

    def identity(self, value_type: str) -> Any:
        """The identity element on ``value_type`` (``a op e = a``)."""
        try:
            return self.identities[value_type]
        except KeyError:
            raise FAQValueError(error_class="UNDEFINED_OPERATION", operation=self.name, value_type=value_type,
                                domains=self.identities) from None


@dataclass(frozen=True, eq=False, repr=False)
class UnaryOperation(_KnownByIdentity):
    """A named unary operation on semiring values: the additive inverse ⊖ of a ring.

    ``spark`` and ``numpy`` are the forms of a user-defined one, as for
    :class:`Operation`.
    """

    name: str
    symbol: str = ""
    spark: Optional[UnaryColumnFn] = None
    numpy: Any = None

    def __post_init__(self) -> None:
        _check_ufunc(self.name, self.numpy, inputs=1)


def _check_ufunc(name: str, form: Any, inputs: int) -> None:
    """A numpy form must be a ufunc of ``inputs`` arguments: callers use its ufunc methods.

    A tuple semiring's row forms (:mod:`faq.semirings.tuples`) have those
    methods too, and say so with ``row_form``.
    """
    if form is None:
        return
    import numpy as np

    ufunc_like = isinstance(form, np.ufunc) or getattr(form, "row_form", False)
    if not ufunc_like or form.nin != inputs:
        raise FAQTypeError(error_class="NOT_A_UFUNC", operation=name, inputs=inputs, form=repr(form))


PLUS = Operation("plus", "+", {BIGINT: 0, DOUBLE: 0.0})
TIMES = Operation("times", "×", {BIGINT: 1, DOUBLE: 1.0})
MIN = Operation("min", "min", {BIGINT: INT64_MAX, DOUBLE: INF}, idempotent=True)
MAX = Operation("max", "max", {BIGINT: INT64_MIN, DOUBLE: -INF}, idempotent=True)
OR = Operation("or", "∨", {BOOLEAN: False}, idempotent=True)
AND = Operation("and", "∧", {BOOLEAN: True}, idempotent=True)
NEGATE = UnaryOperation("negate", "−")

BUILTIN_OPERATIONS = (PLUS, TIMES, MIN, MAX, OR, AND, NEGATE)


def _builtin_operation(name: str) -> Any:
    """The built-in operation called ``name`` (how pickled built-ins come back)."""
    return next(op for op in BUILTIN_OPERATIONS if op.name == name)
