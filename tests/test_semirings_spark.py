"""Semirings on Spark: the Column forms of the built-ins and of user-defined semirings pass the laws
and agree with the numpy forms.  (The Spark-free half is tests/test_semirings.py.)"""

import math

import numpy as np
import pytest
from pyspark.sql import functions as F

from faq.errors import SemiringLawError
from faq.semirings import PLUS, Semiring, assert_laws, builtin_semirings, check_laws
from faq.semirings.numpy_backend import numpy_ops
from faq.semirings.spark_backend import columns
from tests.helpers import log_add

pytestmark = pytest.mark.usefixtures("spark")


@pytest.mark.parametrize("semiring", builtin_semirings(), ids=lambda s: s.name)
def test_builtin_semiring_spark_forms_pass_the_laws(semiring):
    assert check_laws(semiring, backend="spark") == []


def test_numpy_and_spark_forms_agree(spark):
    """⊕, ⊗ and ⊕ as an aggregate give the same values on both backends for every pair of
    sample values of every built-in (NaN included for doubles: Spark orders it as the
    largest double, so min skips it and max returns it; numpy's fmin / maximum do the same)."""
    for ring in builtin_semirings():
        values = list(dict.fromkeys([*ring.samples, ring.zero, ring.one]))
        if ring.value_type == "double":
            values.append(math.nan)
        pairs = [(i, p, q) for i, (p, q) in enumerate((p, q) for p in values for q in values)]
        ops = columns(ring)
        df = spark.createDataFrame(pairs, f"i long, p {ring.value_type}, q {ring.value_type}")
        on_spark = {
            r["i"]: (r["add"], r["mul"])
            for r in df.select("i", ops.add("p", "q").alias("add"), ops.mul("p", "q").alias("mul")).collect()
        }
        stacked = df.select("i", F.explode(F.array("p", "q")).alias("x"))
        summed = {r["i"]: r["s"] for r in stacked.groupBy("i").agg(ops.sum("x").alias("s")).collect()}
        form = numpy_ops(ring)
        p = np.array([t[1] for t in pairs], dtype=form.dtype)
        q = np.array([t[2] for t in pairs], dtype=form.dtype)
        in_numpy = zip(form.add(p, q).tolist(), form.mul(p, q).tolist(), form.add.reduce(np.stack([p, q])).tolist())
        for (i, x, y), (add, mul, total) in zip(pairs, in_numpy):
            got = (*on_spark[i], summed[i])
            assert all(_same(g, e) for g, e in zip(got, (add, mul, total))), (ring.name, x, y, got, (add, mul, total))


def test_sql_text_forms_equal_the_column_forms(spark):
    """The SQL text the executor writes for a built-in (``sql_forms``: ⊗, ⊕ over a group, the nonzero
    filter, the one) gives what the Column forms give, on every pair of sample values (NaN, ±inf, the
    zero and the one included); a semiring without a text form (an array ring, a user's ⊕) has none."""
    from faq.relation import sql_name
    from faq.semirings import MOMENTS
    from faq.semirings.spark_backend import sql_forms

    for ring in builtin_semirings():
        forms, ops = sql_forms(ring), columns(ring)
        assert forms is not None, ring.name
        values = list(dict.fromkeys([*ring.samples, ring.zero, ring.one]))
        if ring.value_type == "double":
            values.append(math.nan)
        pairs = [(i, p, q) for i, (p, q) in enumerate((p, q) for p in values for q in values)]
        df = spark.createDataFrame(pairs, f"i long, p {ring.value_type}, q {ring.value_type}")
        nonzero = F.col("p").isNotNull() & ~ops.is_zero("p")
        product = forms.mul(sql_name("p"), sql_name("q"))
        by_row = df.select("i", ops.mul("p", "q").alias("m"), F.expr(product).alias("mt"),
                           nonzero.alias("n"), F.expr(forms.nonzero("p")).alias("nt"),
                           ops.one().alias("o"), F.expr(forms.one).alias("ot"))
        stacked = df.select("i", F.explode(F.array("p", "q")).alias("x"))
        sums = stacked.groupBy("i").agg(ops.sum("x").alias("s"), F.expr(f"{forms.sum('x')} AS st"))
        got = by_row.join(sums, "i").collect()  # one job a semiring: the suite's time
        assert len(got) == len(pairs), ring.name
        pairs_of_forms = (("mt", "m"), ("nt", "n"), ("ot", "o"), ("st", "s"))  # (text, Columns)
        for r in got:
            assert all(_same(r[text], r[column]) for text, column in pairs_of_forms), (ring.name, r)
    assert sql_forms(MOMENTS) is None
    assert sql_forms(Semiring("log2", "double", zero=-math.inf, one=0.0, add=lambda a, b: F.greatest(a, b),
                              mul=PLUS, sum=F.max)) is None


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def test_user_defined_log_semiring_passes_the_laws():
    log = Semiring(
        name="log",
        value_type="double",
        zero=-math.inf,
        one=0.0,
        add=lambda a, b: F.when(a == -math.inf, b).when(b == -math.inf, a)
        .otherwise(F.greatest(a, b) + F.log1p(F.exp(-F.abs(a - b)))),
        mul=lambda a, b: a + b,
        sum=lambda x: F.coalesce(F.log(F.sum(F.exp(x))), F.lit(-math.inf)),  # Spark's log(0) is null
        samples=(-math.inf, 0.0, -1.5, 2.0),
    )
    assert check_laws(log) == []


def test_law_checker_catches_a_broken_semiring():
    # (max, +) with the wrong zero: 0 is not the identity of max over negatives.
    broken = Semiring(
        name="broken",
        value_type="double",
        zero=0.0,
        one=0.0,
        add=F.greatest,
        mul=lambda a, b: a + b,
        sum=F.max,
        samples=(-1.0, 2.0),
    )
    violations = check_laws(broken)
    assert any("a⊕0 = a" in v for v in violations)
    assert any("a⊗0 = 0" in v for v in violations)
    with pytest.raises(SemiringLawError) as info:
        assert_laws(broken)
    assert info.value.parameters["semiring"] == "broken"


def test_law_checker_catches_a_wrong_aggregate():
    # (+, ×) on integers whose aggregate is max: it does not agree with binary +.
    wrong = Semiring("wrong_sum", "bigint", 0, 1, add=lambda a, b: a + b, mul=lambda a, b: a * b, sum=F.max,
                     samples=(1, 2))
    assert any("aggregate" in v for v in check_laws(wrong))


def test_user_defined_semiring_with_numpy_forms_passes_the_laws_on_both_backends():
    """⊕ given as a Column function with its ufunc, ⊗ the built-in PLUS; no ``sum``: Spark folds a
    group's values with ⊕ (the law checker compares that aggregate with binary ⊕)."""
    log = Semiring("log", "double", -math.inf, 0.0, add=log_add, mul=PLUS, numpy_add=np.logaddexp,
                   samples=(-math.inf, 0.0, -1.5, 2.0))
    assert numpy_ops(log).add is np.logaddexp and not log.builtin_operations
    assert check_laws(log) == []  # numpy
    assert check_laws(log, backend="spark") == []
