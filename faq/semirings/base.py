"""The :class:`Semiring` value: (D, ⊕, ⊗, 0, 1) as Spark Column operations.

A semiring is defined by Python functions that build Spark ``Column``
expressions, so every operation runs inside Spark's engine (no row-at-a-time
Python UDF).  Defining one needs no SparkSession: the functions are only
called when a query is executed.

Examples
--------
The log semiring (⊕ = log-sum-exp, ⊗ = +), defined in a few lines:

>>> import math
>>> from pyspark.sql import functions as F
>>> from faq.semirings import Semiring
>>> log_semiring = Semiring(
...     name="log",
...     value_type="double",
...     zero=-math.inf,
...     one=0.0,
...     add=lambda a, b: F.when(a == -math.inf, b).when(b == -math.inf, a)
...         .otherwise(F.greatest(a, b) + F.log1p(F.exp(-F.abs(a - b)))),
...     mul=lambda a, b: a + b,
...     sum=lambda x: F.coalesce(F.log(F.sum(F.exp(x))), F.lit(-math.inf)),  # Spark's log(0) is null
...     samples=(-math.inf, 0.0, -1.5, 2.0),
... )
>>> log_semiring.is_ring, log_semiring.idempotent
(False, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:  # Spark is only needed when the functions are called.
    from pyspark.sql import Column

BinaryOp = Callable[["Column", "Column"], "Column"]
UnaryOp = Callable[["Column"], "Column"]

# Spark SQL value types a semiring may hold, and their Python counterparts.
VALUE_TYPES = {"bigint": int, "double": float, "boolean": bool}


@dataclass(frozen=True)
class Semiring:
    """A commutative semiring whose operations are Spark Column expressions.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"counting"``.
    value_type : {"bigint", "double", "boolean"}
        Spark SQL type of the value column.
    zero, one : Python scalars
        Additive identity (annihilates ⊗; rows with it are dropped) and
        multiplicative identity.
    add : (Column, Column) -> Column
        Binary ⊕.
    mul : (Column, Column) -> Column
        Binary ⊗.
    sum : Column -> Column
        ⊕ as a Spark aggregate over a group (``F.sum``, ``F.min``, ...).
    neg : Column -> Column, optional
        Additive inverse, for rings only.
    idempotent : bool
        ``a ⊕ a = a`` (min, max, ∨); such semirings admit insert-only updates.
    product : str
        Identifies ⊗ together with ``zero``, ``one`` and ``value_type``.
        Aggregates of one query (e.g. Σ and max in marginal-MAP) must share it.
    samples : tuple
        Values the law checker tries.
    description : str
        One line for listings.
    """

    name: str
    value_type: str
    zero: Any
    one: Any
    add: BinaryOp
    mul: BinaryOp
    sum: UnaryOp
    neg: Optional[UnaryOp] = None
    idempotent: bool = False
    product: str = ""
    samples: tuple = field(default=())
    description: str = ""

    def __post_init__(self) -> None:
        if self.value_type not in VALUE_TYPES:
            raise ValueError(
                f"semiring {self.name!r}: value_type must be one of {sorted(VALUE_TYPES)}, "
                f"not {self.value_type!r}"
            )
        if not self.product:
            object.__setattr__(self, "product", f"{self.name}.mul")

    @property
    def is_ring(self) -> bool:
        """True when ⊕ has inverses (``neg`` is defined)."""
        return self.neg is not None

    def lit(self, value: Any) -> "Column":
        """A literal Column of this semiring's value type."""
        from pyspark.sql import functions as F

        return F.lit(value).cast(self.value_type)

    def zero_col(self) -> "Column":
        """The additive identity as a Column."""
        return self.lit(self.zero)

    def one_col(self) -> "Column":
        """The multiplicative identity as a Column."""
        return self.lit(self.one)

    def is_zero(self, value: "Column") -> "Column":
        """A boolean Column: ``value`` equals the semiring's zero."""
        return value == self.zero_col()

    def shares_product_with(self, other: "Semiring") -> bool:
        """True when ``other`` has the same ⊗, 0, 1 and value type (mixable aggregates)."""
        return (
            self.product == other.product
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


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
