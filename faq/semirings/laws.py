"""Check the semiring laws of a :class:`Semiring` on sample values, on a backend.

The laws are stated once (:func:`law_pairs`, over any values the operations
accept) and evaluated on every triple of sample values with a backend's own
forms, so what is checked is exactly what that backend runs:

* ``backend="numpy"`` — the ufuncs of :mod:`faq.semirings.numpy_backend`,
  on arrays: no Spark.  The default when the semiring has a numpy form
  (every built-in does).
* ``backend="spark"`` — the Column expressions of
  :mod:`faq.semirings.spark_backend`, in one Spark job, plus a check that ⊕
  as an aggregate agrees with binary ⊕.  The default for a semiring given
  as Column functions only, or when a ``spark`` session is passed.

Array rings (:class:`~faq.semirings.structured.ArraySemiring`) are checked
the same way, on ``(rows, w)`` arrays (numpy) or ``array<double>`` columns
(Spark): a law holds on a row when every component does, within
:data:`REL_TOL` of the row's largest magnitude (an array's components can
differ by orders of magnitude, and a component that cancels to ~0 is still
right if the error is small against the rest).  Their default samples are
reproducible random elements and lifts (the ring's ``samples``).

Examples
--------
>>> from faq.semirings import get_semiring, check_laws
>>> check_laws(get_semiring("max_min"))                     # numpy, no Spark
[]
>>> check_laws(get_semiring("max_product"), samples=[-1.0, 2.0])[:1]
['a⊕0 = a fails for a=-1.0, b=-1.0, c=-1.0']
>>> from faq.semirings import MOMENTS, cofactor
>>> check_laws(MOMENTS), check_laws(cofactor(3), samples=[[1.5] * 10, [-0.5] * 10])
([], [])
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Optional, Sequence

from faq.errors import FAQValueError, SemiringLawError
from faq.semirings.base import Semiring
from faq.semirings.structured import ARRAY_DOUBLE

# Relative tolerance for double-valued semirings (floating-point + is not associative).
REL_TOL = 1e-9
# At most this many violating triples are reported.
MAX_REPORTED = 50
BACKENDS = ("numpy", "spark")


def law_pairs(
    a: Any, b: Any, c: Any, add: Callable, mul: Callable, zero: Any, one: Any,
    neg: Optional[Callable] = None, idempotent: bool = False,
) -> dict[str, tuple[Any, Any]]:
    """Each law's two sides over values ``a``, ``b``, ``c`` (Columns, arrays, ...): {law: (lhs, rhs)}.

    ⊕ and ⊗ associative and commutative; 0 and 1 identities; 0 annihilates
    ⊗; ⊗ distributes over ⊕; ``a ⊕ neg(a) = 0`` for rings; ``a ⊕ a = a``
    when idempotent.
    """
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
    if neg is not None:
        laws["a⊕neg(a) = 0"] = (add(a, neg(a)), zero)
    if idempotent:
        laws["a⊕a = a"] = (add(a, a), a)
    return laws


def check_laws(
    semiring: Semiring, samples: Sequence[Any] | None = None, spark=None, *, backend: Optional[str] = None
) -> list[str]:
    """Return the laws ``semiring`` breaks on ``samples`` (an empty list if none).

    Parameters
    ----------
    semiring : Semiring
    samples : sequence, optional
        Values to try; the semiring's own ``samples`` plus 0 and 1 by default.
    spark : SparkSession, optional
        For the Spark backend; defaults to :func:`faq.spark.get_session`.
        Passing one selects that backend unless ``backend`` says otherwise.
    backend : {"numpy", "spark"}, optional
        Whose forms to check (see the module notes).

    Returns
    -------
    list of str
        One line per law broken, naming the law and the values that break it.

    Examples
    --------
    >>> from faq.semirings import MAX, PLUS, Semiring, get_semiring
    >>> check_laws(get_semiring("min_plus"))
    []
    >>> wrong = Semiring("max_plus_wrong", "double", zero=0.0, one=0.0, add=MAX, mul=PLUS,
    ...                  samples=(-1.0, 2.0))   # max's identity is -inf, not 0
    >>> check_laws(wrong)[0]
    'a⊕0 = a fails for a=-1.0, b=-1.0, c=-1.0'
    """
    from faq.semirings.numpy_backend import numpy_ops

    if backend is None:
        backend = "spark" if spark is not None or numpy_ops(semiring, arrays=True) is None else "numpy"
    if backend not in BACKENDS:
        raise FAQValueError(error_class="UNKNOWN_BACKEND", backend=backend, valid=BACKENDS)
    values = list(samples if samples is not None else semiring.samples)
    if semiring.structured:  # arrays, lists or tuples of components: compare as tuples of floats
        values = [semiring.python_value(v) for v in values]
    for special in (semiring.zero, semiring.one):
        if not any(_same(special, v) for v in values):
            values.append(special)
    triples = [tuple(semiring.python_value(x) for x in t) for t in itertools.product(values, repeat=3)]
    if backend == "numpy":
        return _numpy_violations(semiring, triples)
    return _spark_violations(semiring, triples, values, spark)


def assert_laws(
    semiring: Semiring, samples: Sequence[Any] | None = None, spark=None, *, backend: Optional[str] = None
) -> None:
    """Raise :class:`~faq.errors.SemiringLawError` if any law fails."""
    violations = check_laws(semiring, samples, spark, backend=backend)
    if violations:
        raise SemiringLawError(semiring=semiring.name, violations=violations)


def _numpy_violations(semiring: Semiring, triples: list[tuple]) -> list[str]:
    """The laws on arrays of every triple, with the numpy forms (⊕'s aggregate is its ``reduce``: nothing apart)."""
    import numpy as np

    from faq.semirings.numpy_backend import numpy_ops

    ops = numpy_ops(semiring, arrays=True)
    if ops is None:
        raise FAQValueError(error_class="NO_NUMPY_FORM", semiring=semiring.name)
    a, b, c = (np.array([t[i] for t in triples], dtype=ops.dtype) for i in range(3))
    with np.errstate(all="ignore"):  # inf − inf and the like are values to compare, not errors
        laws = law_pairs(a, b, c, ops.add, ops.mul, ops.zero, ops.one, ops.neg, semiring.idempotent)
        broken = {law: ~_close(*sides) for law, sides in laws.items()}
    violations = []
    for row in np.flatnonzero(np.any(np.array(list(broken.values())), axis=0))[:MAX_REPORTED]:
        x, y, z = triples[row]
        violations += [f"{law} fails for a={x!r}, b={y!r}, c={z!r}" for law, bad in broken.items() if bad[row]]
    return violations


def _close(lhs: Any, rhs: Any) -> Any:
    """Per row: equal (NaN equals NaN), or within :data:`REL_TOL` for floats (infinities exactly).

    Scalar values compare elementwise; a row of an array ring's ``(n, w)``
    values is close when every component is, against the row's largest
    magnitude.
    """
    import numpy as np

    lhs, rhs = np.broadcast_arrays(np.asarray(lhs), np.asarray(rhs))
    if lhs.dtype.kind != "f":
        return lhs == rhs
    scale = np.maximum(np.abs(lhs), np.abs(rhs))
    if lhs.ndim > 1:  # an array ring: one tolerance per row, from its largest finite magnitude
        finite = np.where(np.isfinite(scale), scale, 0.0)
        scale = np.broadcast_to(finite.max(axis=-1, keepdims=True), scale.shape)
    close = np.abs(lhs - rhs) <= REL_TOL * np.maximum(1.0, scale)
    same = (lhs == rhs) | (np.isnan(lhs) & np.isnan(rhs)) | (np.isfinite(lhs) & np.isfinite(rhs) & close)
    return same if lhs.ndim <= 1 else np.all(same, axis=tuple(range(1, lhs.ndim)))


def _spark_violations(semiring: Semiring, triples: list[tuple], values: list, spark) -> list[str]:
    """The laws with the Column expressions in one job, and ⊕'s aggregate against binary ⊕."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from faq.semirings.spark_backend import columns
    from faq.spark import get_session

    spark = spark or get_session()
    ops = columns(semiring)
    if semiring.structured:
        spark_type = T.ArrayType(T.DoubleType(), False)
        triples = [tuple(list(x) for x in t) for t in triples]  # Spark takes an array as a list
    else:
        spark_type = {"bigint": T.LongType(), "double": T.DoubleType(), "boolean": T.BooleanType()}[
            semiring.value_type
        ]
    schema = T.StructType([T.StructField(n, spark_type, False) for n in ("a", "b", "c")])
    df = spark.createDataFrame(triples, schema)

    a, b, c = F.col("a"), F.col("b"), F.col("c")
    laws = law_pairs(a, b, c, ops.add, ops.mul, ops.zero(), ops.one(), ops.neg, semiring.idempotent)
    checks = [
        F.when(_equal(lhs, rhs, semiring.value_type), F.lit(None)).otherwise(F.lit(law))
        for law, (lhs, rhs) in laws.items()
    ]
    failing = df.select("a", "b", "c", F.array_compact(F.array(*checks)).alias("broken")).where(
        F.size("broken") > 0
    )
    violations = [
        f"{law} fails for a={r['a']!r}, b={r['b']!r}, c={r['c']!r}"
        for r in failing.limit(MAX_REPORTED).collect()  # bounded
        for law in r["broken"]
    ]

    # The aggregate must agree with binary ⊕ on every pair.
    pair_rows = [tuple(semiring.python_value(x) for x in t) for t in itertools.product(values, repeat=2)]
    if semiring.structured:
        pair_rows = [tuple(list(x) for x in t) for t in pair_rows]
    group_schema = T.StructType([T.StructField("g", T.LongType()), T.StructField("x", spark_type)])
    pairs = spark.createDataFrame([(i, x) for i, pq in enumerate(pair_rows) for x in pq], group_schema)
    agg = pairs.groupBy("g").agg(ops.sum(F.col("x")).alias("s"))
    expected = spark.createDataFrame(
        [(i, p, q) for i, (p, q) in enumerate(pair_rows)],
        T.StructType(
            [T.StructField("g", T.LongType()), T.StructField("p", spark_type), T.StructField("q", spark_type)]
        ),
    )
    bad = (
        agg.join(expected, "g")
        .where(~_equal(F.col("s"), ops.add(F.col("p"), F.col("q")), semiring.value_type))
        .limit(20)
        .collect()
    )
    violations += [f"aggregate ⊕ of [{r['p']!r}, {r['q']!r}] is {r['s']!r}, not a⊕b" for r in bad]
    return violations


def _equal(lhs, rhs, value_type: str):
    """Null-safe Column equality; within :data:`REL_TOL` for doubles (infinities exactly)."""
    from pyspark.sql import functions as F

    exact = lhs.eqNullSafe(rhs)
    if value_type == ARRAY_DOUBLE:  # every component close, against the row's largest magnitude
        scale = F.greatest(F.lit(1.0), F.array_max(F.transform(F.concat(lhs, rhs), F.abs)))
        close = F.forall(F.zip_with(lhs, rhs, lambda x, y: F.abs(x - y) <= F.lit(REL_TOL) * scale), lambda ok: ok)
        return exact | F.coalesce(close & (F.size(lhs) == F.size(rhs)), F.lit(False))
    if value_type != "double":
        return exact
    close = F.abs(lhs - rhs) <= F.lit(REL_TOL) * F.greatest(F.lit(1.0), F.abs(lhs), F.abs(rhs))
    return exact | F.coalesce(close, F.lit(False))


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y
