"""A semiring's operations as Spark Column expressions.

:func:`columns` derives, from a :class:`~faq.semirings.base.Semiring`'s
algebra, everything a query plan needs on Spark: ⊕ as a binary Column
operation and as an aggregate over a group, ⊗, ⊖ for rings, and literals of
the value type.  Every form is a Column expression evaluated inside Spark's
engine (no row-at-a-time Python UDF).

=========  ======================  ==================
operation  binary                  aggregate (as ⊕)
=========  ======================  ==================
PLUS       ``a + b``               ``F.sum``
TIMES      ``a * b``               fold (see below)
MIN        ``F.least``             ``F.min``
MAX        ``F.greatest``          ``F.max``
OR         ``a | b``               ``F.bool_or``
AND        ``a & b``               ``F.bool_and``
NEGATE     ``-a``
=========  ======================  ==================

``F.least`` / ``F.min`` skip NaN and ``F.greatest`` / ``F.max`` return it:
Spark orders NaN as the largest double (the numpy backend follows).

A user-defined operation brings its own Column function (``Operation.spark``)
and, for ⊕, optionally its aggregate (``Operation.spark_aggregate``).
Without an aggregate, ⊕ over a group is the *fold*
``aggregate(collect_list(x), zero, ⊕)``: exact, still a Column expression,
but it gathers each group's values into one array, so a native aggregate is
faster where there is one.

Examples
--------
>>> from pyspark.sql import functions as F
>>> from faq.semirings import MIN_PLUS
>>> from faq.spark import get_session
>>> spark = get_session()
>>> ops = columns(MIN_PLUS)
>>> df = spark.createDataFrame([(1, 3.0, 4.0), (1, 0.5, float("inf"))], "g long, a double, b double")
>>> df.select(ops.add("a", "b").alias("min"), ops.mul(F.col("a"), F.col("b")).alias("plus")).collect()
[Row(min=3.0, plus=7.0), Row(min=0.5, plus=inf)]
>>> df.groupBy("g").agg(ops.sum(F.col("a")).alias("s")).collect()
[Row(g=1, s=0.5)]
>>> df.where(~ops.is_zero(F.col("b"))).count()
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from pyspark.sql import Column
from pyspark.sql import functions as F

from faq.errors import FAQTypeError
from faq.semirings.base import Semiring
from faq.semirings.operations import AND, MAX, MIN, NEGATE, OR, PLUS, TIMES
from faq.semirings.operations import BinaryColumnFn, Operation, UnaryColumnFn, UnaryOperation

ColumnOrName = Union[Column, str]

_BINARY: dict[Operation, BinaryColumnFn] = {
    PLUS: lambda a, b: a + b,
    TIMES: lambda a, b: a * b,
    MIN: F.least,
    MAX: F.greatest,
    OR: lambda a, b: a | b,
    AND: lambda a, b: a & b,
}
# TIMES has no exact native aggregate (F.product is a double): it folds like a user-defined ⊕.
_AGGREGATE: dict[Operation, UnaryColumnFn] = {
    PLUS: F.sum,
    MIN: F.min,
    MAX: F.max,
    OR: F.bool_or,
    AND: F.bool_and,
}
_UNARY: dict[UnaryOperation, UnaryColumnFn] = {NEGATE: lambda a: -a}


@dataclass(frozen=True)
class SparkColumns:
    """A semiring's operations as functions building Spark Columns.

    ``add``, ``mul``, ``neg`` (None unless a ring) take Columns or column
    names; ``sum`` is ⊕ over a group (use it in ``groupBy(...).agg``).
    """

    semiring: Semiring
    add_columns: BinaryColumnFn
    mul_columns: BinaryColumnFn
    sum_column: UnaryColumnFn
    neg_column: Optional[UnaryColumnFn]

    def add(self, a: ColumnOrName, b: ColumnOrName) -> Column:
        """``a ⊕ b``."""
        return self.add_columns(_col(a), _col(b))

    def mul(self, a: ColumnOrName, b: ColumnOrName) -> Column:
        """``a ⊗ b``."""
        return self.mul_columns(_col(a), _col(b))

    def sum(self, values: ColumnOrName) -> Column:
        """⊕ of a group's values, as an aggregate expression."""
        return self.sum_column(_col(values))

    @property
    def neg(self) -> Optional[Callable[[ColumnOrName], Column]]:
        """``⊖a`` for a ring, None otherwise."""
        if self.neg_column is None:
            return None
        return lambda a: self.neg_column(_col(a))

    def lit(self, value: Any) -> Column:
        """A literal of the semiring's value type."""
        return F.lit(value).cast(self.semiring.value_type)

    def zero(self) -> Column:
        """The additive identity as a Column."""
        return self.lit(self.semiring.zero)

    def one(self) -> Column:
        """The multiplicative identity as a Column."""
        return self.lit(self.semiring.one)

    def is_zero(self, value: ColumnOrName) -> Column:
        """A boolean Column: ``value`` equals the zero."""
        return _col(value) == self.zero()


def columns(semiring: Semiring) -> SparkColumns:
    """The Spark forms of ``semiring``'s operations.

    Built-in operations map to the table above; a user-defined one brings
    its Column function.  Raises :class:`~faq.errors.FAQTypeError` when an
    operation has no Spark form.
    """
    add = binary(semiring.add)
    if semiring.add in _AGGREGATE:
        total = _AGGREGATE[semiring.add]
    elif semiring.add.spark_aggregate is not None:
        total = semiring.add.spark_aggregate
    else:
        total = _fold(add, lambda: F.lit(semiring.zero).cast(semiring.value_type))
    neg = None
    if semiring.neg is not None:
        neg = _UNARY.get(semiring.neg, semiring.neg.spark)
        if neg is None:
            raise _no_spark_form(semiring.neg)
    return SparkColumns(semiring, add, binary(semiring.mul), total, neg)


def binary(operation: Operation) -> BinaryColumnFn:
    """The Column function of a binary operation."""
    form = _BINARY.get(operation)
    form = form if form is not None else operation.spark
    if form is None:
        raise _no_spark_form(operation)
    return form


def _fold(add: BinaryColumnFn, zero: Callable[[], Column]) -> UnaryColumnFn:
    """⊕ over a group as ``aggregate(collect_list(x), zero, ⊕)`` (nulls are skipped, as by F.sum)."""
    return lambda values: F.aggregate(F.collect_list(values), zero(), add)


def _col(value: ColumnOrName) -> Column:
    return F.col(value) if isinstance(value, str) else value


def _no_spark_form(operation: Any) -> FAQTypeError:
    return FAQTypeError(
        f"operation {operation!r} has no Spark form: give it as a function of Columns "
        "(Semiring(add=..., mul=..., neg=...))",
        operation=getattr(operation, "name", repr(operation)),
    )
