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

**Array rings** (:class:`~faq.semirings.structured.ArraySemiring`) hold an
``array<double>`` of ``w`` components; :func:`columns` gives them an
:class:`ArrayColumns` with the same calls (``add``, ``mul``, ``sum``,
``neg``, ``zero``, ``one``, ``is_zero``), so callers need not tell them
apart, and ``lift`` / ``components`` besides:

============  ==============================================  ==============================
operation     up to :data:`NARROW_WIDTH` components            wider
============  ==============================================  ==============================
⊕             ``F.array(a[0] + b[0], ...)``                     ``F.zip_with(a, b, +)``
⊗             ``F.array(Σ coef·a[i]·b[j], ...)`` per component  ``F.transform`` over the terms
⊕ aggregate   ``F.array(F.sum(x[0]), ...)`` (null if no rows)   the same
⊖             ``F.array(-a[0], ...)``                           ``F.transform(a, -)``
is zero       ``a = array(0.0, ...)`` (``-0.0`` equals ``0.0``)  the same
============  ==============================================  ==============================

Per-component expressions are compiled by whole-stage codegen and are the
fastest while they are few; above that the generated method outgrows what
the JVM compiles (HotSpot leaves methods over 8,000 bytes of bytecode
interpreted), and the higher-order functions, evaluated per element, win.
Measured here, ⊗ of 300K pairs on 2 cores, per component vs higher-order:
moments (w = 3) 0.46 s vs 0.57 s, cofactor(5) (w = 21) 1.6 s vs 2.5 s,
cofactor(6) (w = 28) 6.3 s vs 3.9 s, cofactor(10) (w = 66) 15.3 s vs 5.1 s
(⊕ per component at w = 66: 13.6 s vs 4.0 s with ``zip_with``).  All are
plain Column functions: they run on Spark Connect.

**As SQL text.**  For a semiring whose ⊕ and ⊗ are built-in operations on numbers or
booleans, :func:`sql_forms` gives ⊗, ⊕ over a group, the nonzero filter and the one as
Spark SQL strings: the same expressions, but a projection or filter written as one
``selectExpr``/``where`` string is one call into Spark, where classic PySpark makes a
py4j round trip for each Column it builds (and, since 4.0, several more to record
each call site).  The executor, the bag joins and a factor's constant value use them;
array rings and user operations keep their Columns.

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

An array ring: lift a column, ⊗ two values, ⊕ a group, test for zero:

>>> from faq.semirings import MOMENTS
>>> ops = columns(MOMENTS)
>>> xs = spark.createDataFrame([(1, 2.0), (1, 3.0), (2, None)], "g long, x double")
>>> lifted = xs.select("g", ops.lift(0, "x").alias("v"))
>>> lifted.groupBy("g").agg(ops.sum("v").alias("v")).orderBy("g").collect()
[Row(g=1, v=[2.0, 5.0, 13.0]), Row(g=2, v=None)]
>>> lifted.select(ops.mul("v", "v").alias("p"), ops.is_zero(ops.add("v", ops.neg("v"))).alias("z")).first()
Row(p=[1.0, 4.0, 16.0], z=True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from pyspark.sql import Column
from pyspark.sql import functions as F

from faq.errors import FAQTypeError
from faq.semirings.base import Semiring
from faq.semirings.operations import AND, MAX, MIN, NEGATE, OR, PLUS, TIMES
from faq.semirings.operations import BinaryColumnFn, Operation, UnaryColumnFn, UnaryOperation

if TYPE_CHECKING:
    from faq.semirings.structured import ArraySemiring

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
    its Column function; an array ring gets :class:`ArrayColumns`.  Raises
    :class:`~faq.errors.FAQTypeError` when an operation has no Spark form.
    """
    if semiring.structured:
        return array_columns(semiring)
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


#: Built-in ⊕/⊗ as Spark SQL text (``{}`` the operands) and ⊕ over a group as its SQL aggregate: the
#: same expressions as :data:`_BINARY` and :data:`_AGGREGATE`, written as text (see :class:`SqlForms`).
_SQL_BINARY: dict[Operation, str] = {
    PLUS: "({} + {})", TIMES: "({} * {})", MIN: "least({}, {})", MAX: "greatest({}, {})",
    OR: "({} OR {})", AND: "({} AND {})",
}
_SQL_AGGREGATE: dict[Operation, str] = {PLUS: "sum", MIN: "min", MAX: "max", OR: "bool_or", AND: "bool_and"}
_SQL_DOUBLES = {float("inf"): "Infinity", float("-inf"): "-Infinity"}  # as Spark reads them from a string


@dataclass(frozen=True)
class SqlForms:
    """A semiring's ⊗, ⊕ over a group and zero test as Spark SQL text, for built-in operations.

    The same expressions :class:`SparkColumns` builds, as text: a projection or a filter written as
    one ``selectExpr``/``where`` string is one call into Spark, where classic PySpark makes a py4j
    round trip for every Column it builds (and more for each call site it records). Operands are
    SQL expressions (quote names with :func:`faq.relation.sql_name`).

    >>> from faq.semirings import COUNTING, MIN_PLUS
    >>> forms = sql_forms(COUNTING)
    >>> forms.mul("`x`", "`y`"), forms.sum("`v`"), forms.nonzero("`v`")
    ('(`x` * `y`)', 'sum(`v`)', '(`v` IS NOT NULL AND NOT (`v` = CAST(0 AS BIGINT)))')
    >>> sql_forms(MIN_PLUS).zero
    "CAST('Infinity' AS DOUBLE)"
    >>> from faq.spark import get_session
    >>> get_session().range(3).selectExpr(f"{forms.sum('id')} AS s").first().s
    3
    """

    mul_template: str
    aggregate: str
    zero: str  #: the zero as a SQL literal
    one: str  #: the one as a SQL literal

    def mul(self, a: str, b: str) -> str:
        """``a ⊗ b``."""
        return self.mul_template.format(a, b)

    def sum(self, values: str) -> str:
        """⊕ of a group's ``values``, an aggregate expression."""
        return f"{self.aggregate}({values})"

    def nonzero(self, value: str) -> str:
        """True where ``value`` is neither null nor the zero."""
        return f"({value} IS NOT NULL AND NOT ({value} = {self.zero}))"


def sql_forms(semiring: Semiring) -> Optional[SqlForms]:
    """``semiring``'s :class:`SqlForms` when its ⊕ and ⊗ are built-in operations with a native
    aggregate and its value type a number or boolean; else None (the caller builds Columns)."""
    if semiring.structured or semiring.mul not in _SQL_BINARY or semiring.add not in _SQL_AGGREGATE:
        return None
    zero, one = _sql_literal(semiring.zero, semiring.value_type), _sql_literal(semiring.one, semiring.value_type)
    if zero is None or one is None:
        return None
    return SqlForms(_SQL_BINARY[semiring.mul], _SQL_AGGREGATE[semiring.add], zero, one)


def _sql_literal(value: Any, value_type: str) -> Optional[str]:
    """``value`` of ``value_type`` as a Spark SQL literal (None for a NaN or another type).

    >>> _sql_literal(float("-inf"), "double"), _sql_literal(7, "bigint"), _sql_literal(True, "boolean")
    ("CAST('-Infinity' AS DOUBLE)", 'CAST(7 AS BIGINT)', 'true')
    """
    if value_type == "boolean":
        return "true" if value else "false"
    if value_type == "bigint":
        return f"CAST({int(value)} AS BIGINT)"
    if value_type == "double" and not math.isnan(value):
        return f"CAST('{_SQL_DOUBLES.get(value, repr(float(value)))}' AS DOUBLE)"  # repr: the exact double
    return None


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


#: Widest array ring whose operations are built as one expression per component (see the module notes).
NARROW_WIDTH = 24


@dataclass(frozen=True)
class ArrayColumns(SparkColumns):
    """An array ring's operations as functions building ``array<double>`` Columns.

    The calls of :class:`SparkColumns`, plus :meth:`lift` (a number column
    into the ring) and :meth:`components` (a value spread into named
    columns, for display).

    Examples
    --------
    >>> from faq.semirings import cofactor
    >>> from faq.spark import get_session
    >>> ops = columns(cofactor(2))
    >>> df = get_session().createDataFrame([(1.0, 2.0)], "x0 double, x1 double")
    >>> v = ops.mul(ops.lift(0, "x0"), ops.lift(1, "x1"))
    >>> df.select(v.alias("v")).first().v                   # (1, (x0, x1), upper triangle of vvᵀ)
    [1.0, 1.0, 2.0, 1.0, 2.0, 4.0]
    >>> df.select(*ops.components(v)).columns[:3]
    ['count', 's[0]', 's[1]']
    >>> df.select(ops.one().alias("one"), ops.is_zero(ops.zero()).alias("z")).first()
    Row(one=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], z=True)
    """

    def lit(self, value: Any) -> Column:
        """A literal value: ``w`` numbers."""
        return F.array(*[F.lit(x) for x in self.semiring.python_value(value)])

    def is_zero(self, value: ColumnOrName) -> Column:
        """A boolean Column: every component is 0 (``-0.0`` too; null for a null value)."""
        return _col(value) == self.zero()

    def lift(self, feature: int, values: ColumnOrName) -> Column:
        """Numbers of feature ``feature`` as ring values (a null number gives a null value).

        >>> from faq.semirings import MOMENTS
        >>> from faq.spark import get_session
        >>> get_session().range(2).select(columns(MOMENTS).lift(0, F.col("id") + 1).alias("v")).collect()
        [Row(v=[1.0, 1.0, 1.0]), Row(v=[1.0, 2.0, 4.0])]
        """
        ring = self.semiring
        ring.check_feature(feature)
        x = _col(values).cast("double")
        parts = [p if isinstance(p, Column) else F.lit(float(p)) for p in ring.lifting(feature, x)]
        return F.when(x.isNotNull(), F.array(*parts))

    def components(self, value: ColumnOrName) -> list[Column]:
        """One Column per component, named after it (``count``, ``s[0]``, ...).

        >>> from faq.semirings import MOMENTS
        >>> from faq.spark import get_session
        >>> get_session().range(1).select(*columns(MOMENTS).components(columns(MOMENTS).one())).first()
        Row(count=1.0, sum=0.0, sum_sq=0.0)
        """
        value = _col(value)
        return [value[i].alias(name) for i, name in enumerate(self.semiring.components)]


def array_columns(ring: "ArraySemiring") -> ArrayColumns:
    """The Spark forms of an array ring (``columns(ring)`` calls this): see the module notes.

    >>> from faq.semirings import MOMENTS, cofactor
    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])], "a array<double>, b array<double>")
    >>> df.select(columns(MOMENTS).mul("a", "b").alias("p")).first().p   # (c1c2, c2s1 + c1s2, c2q1 + c1q2 + 2s1s2)
    [4.0, 13.0, 38.0]
    >>> wide = cofactor(6)                                   # 28 components: higher-order functions
    >>> one = columns(wide).one()
    >>> get_session().range(1).select(columns(wide).mul(one, one).alias("p")).first().p == list(wide.one)
    True
    """
    width = ring.width
    if getattr(ring, "product", None) is None:  # a TupleSemiring: ⊕, ⊗ (and ⊖) as declared
        return _tuple_columns(ring)
    if width <= NARROW_WIDTH:
        add = lambda a, b: F.array(*[a[i] + b[i] for i in range(width)])  # noqa: E731
        neg = lambda a: F.array(*[-a[i] for i in range(width)])  # noqa: E731
        mul = _product_per_component(ring)
    else:
        add = lambda a, b: F.zip_with(a, b, lambda x, y: x + y)  # noqa: E731
        neg = lambda a: F.transform(a, lambda x: -x)  # noqa: E731
        mul = _product_over_terms(ring)

    def total(values: Column) -> Column:
        # Null when the group has no value, as F.sum: the engine drops null values.
        return F.when(F.count(values) > 0, F.array(*[F.sum(values[i]) for i in range(width)]))

    return ArrayColumns(ring, add, mul, total, neg)


def _tuple_columns(ring: Semiring) -> ArrayColumns:
    """A tuple semiring's declared Column functions; ⊕ over a group folds its values with ⊕ (null for none)."""
    for operation in (ring.add, ring.mul, ring.neg):
        if operation is not None and operation.spark is None:
            raise _no_spark_form(operation)
    add = ring.add.spark
    zero = lambda: F.array(*[F.lit(x) for x in ring.zero])  # noqa: E731
    fold = _fold(add, zero)

    def total(values: Column) -> Column:
        return F.when(F.count(values) > 0, fold(values))

    return ArrayColumns(ring, add, ring.mul.spark, total, None if ring.neg is None else ring.neg.spark)


def _product_per_component(ring: "ArraySemiring") -> BinaryColumnFn:
    """⊗ as ``F.array`` of one sum of products per component."""

    def mul(a: Column, b: Column) -> Column:
        parts = []
        for terms in ring.product.by_component:
            products = [a[i] * b[j] if c == 1.0 else F.lit(c) * (a[i] * b[j]) for i, j, c in terms]
            parts.append(reduce(lambda x, y: x + y, products) if products else F.lit(0.0))
        return F.array(*parts)

    return mul


def _product_over_terms(ring: "ArraySemiring") -> BinaryColumnFn:
    """⊗ as higher-order functions over the terms, held in literal arrays.

    ``terms[k]`` lists the indices ``t`` of component ``k``'s terms (empty for
    a component with none: ``aggregate`` then gives 0); each adds
    ``coef[t] · a[left[t]] · b[right[t]]``.
    """
    product = ring.product
    left = F.array(*[F.lit(i) for i in product.left])
    right = F.array(*[F.lit(j) for j in product.right])
    coef = F.array(*[F.lit(c) for c in product.coef])
    runs: list[list[int]] = [[] for _ in range(product.width)]
    for t, k in enumerate(product.out):
        runs[k].append(t)
    terms = F.array(*[F.array(*[F.lit(t) for t in run]).cast("array<int>") for run in runs])

    def mul(a: Column, b: Column) -> Column:
        def component(run: Column) -> Column:
            return F.aggregate(
                run, F.lit(0.0), lambda acc, t: acc + coef[t] * F.get(a, left[t]) * F.get(b, right[t])
            )

        return F.transform(terms, component)

    return mul


def _col(value: ColumnOrName) -> Column:
    return F.col(value) if isinstance(value, str) else value


def _no_spark_form(operation: Any) -> FAQTypeError:
    return FAQTypeError(error_class="NO_SPARK_FORM", operation=getattr(operation, "name", repr(operation)),
                        form=repr(operation))
