"""The :class:`Semiring` value: (D, ⊕, ⊗, 0, 1) declared once, as algebra.

A semiring is its value type, its zero and one, ⊕ and ⊗ as
:class:`~faq.semirings.operations.Operation` values (and ⊖ for a ring),
whether ⊕ is idempotent, and sample values for the law checks.  It holds no
executable code of its own: the backends derive that —
:func:`faq.semirings.spark_backend.columns` (Spark Column expressions) and
:func:`faq.semirings.numpy_backend.numpy_ops` (numpy ufuncs, for the work
done inside tasks and on the driver).  Defining one imports no pyspark and
needs no SparkSession.

A semiring made of built-in operations (``PLUS``, ``TIMES``, ``MIN``,
``MAX``, ``OR``, ``AND``, ``NEGATE``) runs on both backends with nothing more
said.  Where an operation is not a built-in one, give it as a Spark Column
function — ``add`` (with ``sum``, ⊕ as a Spark aggregate, optional), ``mul``,
``neg`` — and, for the numpy fast path, as a ufunc: ``numpy_add``,
``numpy_mul``, ``numpy_neg``.  Without a numpy form the semiring runs on
Spark only (e.g. the broadcast generic join then lists every binding instead
of ⊕-aggregating inside its tasks).

Values here are scalars: :attr:`Semiring.width` is 1.  A ring whose values
are arrays of doubles (moments, the cofactor ring) is an
:class:`~faq.semirings.structured.ArraySemiring`, a subclass with the same
attributes, whose ``width``, ``components`` and ``carrier`` say its shape.

Examples
--------
The log semiring (⊕ = log-sum-exp, ⊗ = +) in a few lines: ⊗ is the built-in
``PLUS``; ⊕ is given to Spark as Column expressions and to numpy as
``np.logaddexp``:

>>> import math
>>> import numpy as np
>>> from pyspark.sql import functions as F
>>> from faq.semirings import PLUS, Semiring
>>> log_semiring = Semiring(
...     name="log",
...     value_type="double",
...     zero=-math.inf,
...     one=0.0,
...     add=lambda a, b: F.when(a == -math.inf, b).when(b == -math.inf, a)
...         .otherwise(F.greatest(a, b) + F.log1p(F.exp(-F.abs(a - b)))),
...     mul=PLUS,
...     sum=lambda x: F.coalesce(F.log(F.sum(F.exp(x))), F.lit(-math.inf)),  # Spark's log(0) is null
...     numpy_add=np.logaddexp,
...     samples=(-math.inf, 0.0, -1.5, 2.0),
... )
>>> log_semiring.is_ring, log_semiring.idempotent, log_semiring.add, log_semiring.mul
(False, False, Operation('log.add'), Operation('plus'))
>>> from faq.semirings.numpy_backend import numpy_ops
>>> numpy_ops(log_semiring).add.__name__
'logaddexp'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from faq.errors import FAQValueError
from faq.semirings.operations import (
    VALUE_TYPES,
    BinaryColumnFn,
    Operation,
    UnaryColumnFn,
    UnaryOperation,
)

if TYPE_CHECKING:
    from pyspark.sql import Column


@dataclass(frozen=True, init=False, repr=False)
class Semiring:
    """A commutative semiring: a value type, zero, one, ⊕ and ⊗ (⊖ for rings).

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"counting"``.
    value_type : {"bigint", "double", "boolean"}
        Spark SQL type of the value column (numpy: int64, float64, bool).
    zero, one : Python scalars
        Additive identity (annihilates ⊗; rows with it are dropped) and
        multiplicative identity.
    add : Operation or (Column, Column) -> Column
        ⊕: a built-in operation value, or the Spark Column function of a
        user-defined one.
    mul : Operation or (Column, Column) -> Column
        ⊗, likewise.
    sum : Column -> Column, optional
        ⊕ as a Spark aggregate over a group, for an ``add`` given as a
        function (without it Spark folds the group's values with ``add``).
        Built-in operations bring their own (``F.sum``, ``F.min``, ...).
    neg : UnaryOperation or Column -> Column, optional
        Additive inverse ⊖: only rings have one.
    idempotent : bool, optional
        ``a ⊕ a = a`` (min, max, ∨); such semirings admit insert-only
        updates.  Taken from ``add`` when it is an Operation; False by
        default for a function.
    samples : tuple
        Values the law checker tries.
    description : str
        One line for listings.
    numpy_add, numpy_mul, numpy_neg : numpy.ufunc, optional
        numpy forms of ⊕ / ⊗ / ⊖ given as functions (binary ufuncs for ⊕ and
        ⊗): with them the semiring gets the numpy fast paths.
    completion : str, optional
        The registered ring that holds these values and their negatives,
        with the same ⊕ and ⊗ (``"integer"`` for ``counting``, ℕ inside ℤ):
        a maintained answer keeps its signed changes there, and a negative
        input value is refused (see :attr:`counts`).

    Attributes
    ----------
    add, mul : Operation
        Always operation values (a function given is wrapped in a
        user-defined :class:`~faq.semirings.operations.Operation` named
        ``"<name>.add"`` / ``"<name>.mul"``).
    neg : UnaryOperation or None

    Examples
    --------
    >>> from faq.semirings import MAX, MIN, Semiring, check_laws
    >>> bottleneck = Semiring("widest", "double", zero=float("-inf"), one=float("inf"), add=MAX, mul=MIN)
    >>> bottleneck.idempotent, check_laws(bottleneck)   # max is idempotent: fixpoints may use it
    (True, [])
    """

    name: str
    value_type: str
    zero: Any
    one: Any
    add: Operation
    mul: Operation
    neg: Optional[UnaryOperation]
    idempotent: bool
    samples: tuple
    description: str
    completion: Optional[str] = None  # a class default: the array and tuple semirings set none

    def __init__(
        self,
        name: str,
        value_type: str,
        zero: Any,
        one: Any,
        add: Union[Operation, BinaryColumnFn],
        mul: Union[Operation, BinaryColumnFn],
        sum: Optional[UnaryColumnFn] = None,
        neg: Union[UnaryOperation, UnaryColumnFn, None] = None,
        idempotent: Optional[bool] = None,
        samples: tuple = (),
        description: str = "",
        *,
        numpy_add: Any = None,
        numpy_mul: Any = None,
        numpy_neg: Any = None,
        completion: Optional[str] = None,
    ) -> None:
        if value_type not in VALUE_TYPES:
            raise FAQValueError(error_class="UNKNOWN_VALUE_TYPE", semiring=name, value_type=value_type,
                                valid=VALUE_TYPES)
        if isinstance(add, Operation):
            _no_forms_for(name, add, "⊕", sum=sum, numpy_add=numpy_add)
            if idempotent is not None and idempotent != add.idempotent:
                raise FAQValueError(error_class="IDEMPOTENCE_CONTRADICTION", semiring=name, idempotent=idempotent,
                                    operation=add.name)
        else:
            add = Operation(f"{name}.add", "⊕", {value_type: zero}, bool(idempotent), add, sum, numpy_add)
        if isinstance(mul, Operation):
            _no_forms_for(name, mul, "⊗", numpy_mul=numpy_mul)
        else:
            mul = Operation(f"{name}.mul", "⊗", {value_type: one}, False, mul, None, numpy_mul)
        if neg is None or isinstance(neg, UnaryOperation):
            _no_forms_for(name, neg, "⊖", numpy_neg=numpy_neg)
        else:
            neg = UnaryOperation(f"{name}.neg", "⊖", neg, numpy_neg)
        fields = dict(
            name=name, value_type=value_type, zero=zero, one=one, add=add, mul=mul, neg=neg,
            idempotent=add.idempotent, samples=tuple(samples), description=description, completion=completion,
        )
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    @property
    def is_ring(self) -> bool:
        """True when ⊕ has inverses (``neg`` is defined)."""
        return self.neg is not None

    @property
    def counts(self) -> bool:
        """True when the values are natural numbers inside a ring (:attr:`completion`), so a negative
        value is malformed and a deletion must be checked against what is there (``counting``)."""
        return self.completion is not None and not self.is_ring

    @property
    def width(self) -> int:
        """Numbers per value: 1 for a scalar semiring (an array ring has more; plans print it per row)."""
        return 1

    @property
    def components(self) -> tuple[str, ...]:
        """Names of a value's components, in storage order: ``("value",)`` for a scalar semiring."""
        return ("value",)

    @property
    def structured(self) -> bool:
        """True when a value is an array of numbers (:class:`~faq.semirings.structured.ArraySemiring`)."""
        return False

    @property
    def element_type(self) -> str:
        """Spark SQL type of one component: the value type itself for a scalar semiring."""
        return self.value_type

    @property
    def carrier(self) -> str:
        """What a value is, for plans and listings: ``"bigint"``, or ``"double[3]"`` for an array ring.

        >>> from faq.semirings import COUNTING
        >>> COUNTING.carrier, COUNTING.width, COUNTING.components
        ('bigint', 1, ('value',))
        """
        return self.value_type

    @property
    def builtin_operations(self) -> bool:
        """True when ⊕, ⊗ (and ⊖) are all built-in operation values: every backend knows them."""
        return all(op.builtin for op in (self.add, self.mul, self.neg) if op is not None)

    def shares_product_with(self, other: "Semiring") -> bool:
        """True when ``other`` has the same ⊗ operation, 0, 1 and value type (mixable aggregates)."""
        return (
            self.mul is other.mul
            and self.value_type == other.value_type
            and _same_scalar(self.zero, other.zero)
            and _same_scalar(self.one, other.one)
        )

    def python_value(self, value: Any) -> Any:
        """Convert a scalar to this semiring's Python type (for results and checks)."""
        kind = VALUE_TYPES[self.value_type]
        return kind(value)

    def __repr__(self) -> str:
        flags = [f for f, on in (("ring", self.is_ring), ("idempotent", self.idempotent)) if on]
        return f"Semiring({self.name!r}, {self.value_type}, zero={self.zero!r}, one={self.one!r}" + (
            f", {'/'.join(flags)})" if flags else ")"
        )


def _no_forms_for(name: str, operation: Any, symbol: str, **forms: Any) -> None:
    """Forms belong to an operation given as a function; an operation value brings its own."""
    given = [key for key, form in forms.items() if form is not None]
    if given:
        raise FAQValueError(error_class="FORMS_OF_OPERATION", semiring=name, forms=given, symbol=symbol,
                            operation=operation)


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
