"""Check the semiring laws of a :class:`Semiring` on sample values, in Spark.

The laws are evaluated with the semiring's own Column expressions on every
triple of sample values, in one Spark job, so what is checked is exactly what
queries will run.

Examples
--------
>>> from faq.semirings import get_semiring, check_laws
>>> check_laws(get_semiring("max_min"))
[]
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

from faq.errors import SemiringLawError
from faq.semirings.base import Semiring

# Relative tolerance for double-valued semirings (floating-point + is not associative).
REL_TOL = 1e-9


def check_laws(semiring: Semiring, samples: Sequence[Any] | None = None, spark=None) -> list[str]:
    """Return the laws ``semiring`` breaks on ``samples`` (an empty list if none).

    Checks: ⊕ and ⊗ associative and commutative; 0 and 1 identities; 0
    annihilates ⊗; ⊗ distributes over ⊕; the ⊕ aggregate agrees with binary ⊕;
    ``a ⊕ neg(a) = 0`` for rings; ``a ⊕ a = a`` when flagged idempotent.

    Parameters
    ----------
    semiring : Semiring
    samples : sequence, optional
        Values to try; the semiring's own ``samples`` plus 0 and 1 by default.
    spark : SparkSession, optional
        Defaults to :func:`faq.spark.get_session`.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from faq.spark import get_session

    spark = spark or get_session()
    values = list(samples if samples is not None else semiring.samples)
    for special in (semiring.zero, semiring.one):
        if not any(_same(special, v) for v in values):
            values.append(special)
    spark_type = {"bigint": T.LongType(), "double": T.DoubleType(), "boolean": T.BooleanType()}[
        semiring.value_type
    ]
    schema = T.StructType([T.StructField(n, spark_type, False) for n in ("a", "b", "c")])
    rows = [tuple(semiring.python_value(x) for x in t) for t in itertools.product(values, repeat=3)]
    df = spark.createDataFrame(rows, schema)

    a, b, c = F.col("a"), F.col("b"), F.col("c")
    add, mul, zero, one = semiring.add, semiring.mul, semiring.zero_col(), semiring.one_col()
    laws = {
        "(a⊕b)⊕c = a⊕(b⊕c)": (add(add(a, b), c), add(a, add(b, c))),
        "(a⊗b)⊗c = a⊗(b⊗c)": (mul(mul(a, b), c), mul(a, mul(b, c))),
        "a⊕b = b⊕a": (add(a, b), add(b, a)),
        "a⊗b = b⊗a": (mul(a, b), mul(b, a)),
        "a⊕0 = a": (add(a, zero), a),
        "a⊗1 = a": (mul(a, one), a),
        "a⊗0 = 0": (mul(a, zero), zero),
        "a⊗(b⊕c) = (a⊗b)⊕(a⊗c)": (mul(a, add(b, c)), add(mul(a, b), mul(a, c))),
    }
    if semiring.neg is not None:
        laws["a⊕neg(a) = 0"] = (add(a, semiring.neg(a)), zero)
    if semiring.idempotent:
        laws["a⊕a = a"] = (add(a, a), a)

    checks = [
        F.when(_equal(lhs, rhs, semiring.value_type), F.lit(None)).otherwise(F.lit(law))
        for law, (lhs, rhs) in laws.items()
    ]
    failing = df.select("a", "b", "c", F.array_compact(F.array(*checks)).alias("broken")).where(
        F.size("broken") > 0
    )
    violations = [
        f"{law} fails for a={r['a']!r}, b={r['b']!r}, c={r['c']!r}"
        for r in failing.limit(50).collect()  # bounded: at most 50 rows
        for law in r["broken"]
    ]

    # The aggregate must agree with binary ⊕ on every pair.
    pair_rows = [tuple(semiring.python_value(x) for x in t) for t in itertools.product(values, repeat=2)]
    group_schema = T.StructType([T.StructField("g", T.LongType()), T.StructField("x", spark_type)])
    pairs = spark.createDataFrame([(i, x) for i, pq in enumerate(pair_rows) for x in pq], group_schema)
    agg = pairs.groupBy("g").agg(semiring.sum(F.col("x")).alias("s"))
    expected = spark.createDataFrame(
        [(i, p, q) for i, (p, q) in enumerate(pair_rows)],
        T.StructType(
            [T.StructField("g", T.LongType()), T.StructField("p", spark_type), T.StructField("q", spark_type)]
        ),
    )
    bad = (
        agg.join(expected, "g")
        .where(~_equal(F.col("s"), add(F.col("p"), F.col("q")), semiring.value_type))
        .limit(20)
        .collect()
    )
    violations += [f"aggregate ⊕ of [{r['p']!r}, {r['q']!r}] is {r['s']!r}, not a⊕b" for r in bad]
    return violations


def assert_laws(semiring: Semiring, samples: Sequence[Any] | None = None, spark=None) -> None:
    """Raise :class:`~faq.errors.SemiringLawError` if any law fails."""
    violations = check_laws(semiring, samples, spark)
    if violations:
        raise SemiringLawError(semiring=semiring.name, violations=violations)


def _equal(lhs, rhs, value_type: str):
    """Null-safe equality; within :data:`REL_TOL` for doubles (infinities exactly)."""
    from pyspark.sql import functions as F

    exact = lhs.eqNullSafe(rhs)
    if value_type != "double":
        return exact
    close = F.abs(lhs - rhs) <= F.lit(REL_TOL) * F.greatest(F.lit(1.0), F.abs(lhs), F.abs(rhs))
    return exact | F.coalesce(close, F.lit(False))


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y
