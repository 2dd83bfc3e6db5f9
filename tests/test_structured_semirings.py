"""Array rings (moments, cofactor(m), user-declared ones): their algebra against brute force, the laws on
random elements, the numpy form against the Spark form.

Most tests are numpy only; those that take the ``spark`` fixture compare the Column forms with the
numpy forms on the same rows.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.errors import FAQValueError, InvalidArgumentError
from faq.semirings import COUNTING, MOMENTS, REAL, ArraySemiring, CofactorRing, check_laws, cofactor
from faq.semirings.numpy_backend import ArrayNumpyForm, NumpyForm, numpy_ops

RINGS = [MOMENTS, cofactor(1), cofactor(2), cofactor(3), cofactor(6)]


def _ids(ring) -> str:
    return ring.name


def _element(ring, draw_floats) -> st.SearchStrategy:
    return st.lists(draw_floats, min_size=ring.width, max_size=ring.width)


FLOATS = st.floats(-8.0, 8.0, allow_nan=False, allow_infinity=False)


def brute_force_cofactor(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(n, Σ rows, Σ row rowᵀ) of an (n, m) matrix: the sum over rows of [1, x, x xᵀ]."""
    return float(len(x)), x.sum(axis=0), x.T @ x


# --- the declaration ---------------------------------------------------------------------------


def test_scalar_semirings_say_width_one():
    for ring in (COUNTING, REAL):
        assert (ring.width, ring.components, ring.structured, ring.carrier, ring.element_type) == (
            1, ("value",), False, ring.value_type, ring.value_type)


def test_moments_is_declared_once_as_an_array_ring():
    assert (MOMENTS.width, MOMENTS.components, MOMENTS.value_type, MOMENTS.carrier) == (
        3, ("count", "sum", "sum_sq"), "array<double>", "double[3]")
    assert MOMENTS.structured and MOMENTS.is_ring and not MOMENTS.idempotent and not MOMENTS.builtin_operations
    assert (MOMENTS.zero, MOMENTS.one) == ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0))
    # (c1,s1,q1)⊗(c2,s2,q2) = (c1c2, c2s1 + c1s2, c2q1 + c1q2 + 2s1s2), read off the formula as terms
    assert MOMENTS.product.describe(MOMENTS.components) == [
        "count = count·count", "sum = count·sum + sum·count", "sum_sq = count·sum_sq + 2·sum·sum + sum_sq·count"]


@pytest.mark.parametrize("m", [1, 2, 3, 5])
def test_cofactor_components_and_width(m):
    ring = cofactor(m)
    assert ring.width == 1 + m + m * (m + 1) // 2
    assert ring.components[: m + 1] == ("count", *(f"s[{j}]" for j in range(m)))
    assert ring.components[m + 1:] == tuple(f"Q[{i},{j}]" for i in range(m) for j in range(i, m))


def test_cofactor_is_cached_and_pickles_as_itself():
    assert cofactor(4) is cofactor(4) and cofactor(4) == cofactor(4) and cofactor(4) != cofactor(3)
    assert pickle.loads(pickle.dumps(cofactor(4))) is cofactor(4)
    assert pickle.loads(pickle.dumps(MOMENTS)) is MOMENTS
    assert cofactor(1) is not MOMENTS and cofactor(1).product == MOMENTS.product  # m = 1: the same algebra
    assert numpy_ops(pickle.loads(pickle.dumps(MOMENTS)), arrays=True) == numpy_ops(MOMENTS, arrays=True)


def test_bad_declarations_are_refused():
    with pytest.raises(InvalidArgumentError) as info:
        cofactor(0)
    assert info.value.parameters["argument"] == "m"
    with pytest.raises(FAQValueError):  # a⊗0 ≠ 0: not bilinear
        ArraySemiring("affine", ("x",), one=(1.0,), mul=lambda a, b: (a[0] * b[0] + a[0],))
    with pytest.raises(FAQValueError):  # a[0]·a[0]
        ArraySemiring("square", ("x",), one=(1.0,), mul=lambda a, b: (a[0] * a[0] * b[0],))
    with pytest.raises(FAQValueError):  # not + − × ÷
        ArraySemiring("maxish", ("x",), one=(1.0,), mul=lambda a, b: (max(a[0], b[0]),))
    with pytest.raises(FAQValueError):  # wrong number of components
        ArraySemiring("short", ("x", "y"), one=(1.0, 0.0), mul=lambda a, b: (a[0] * b[0],))
    with pytest.raises(FAQValueError):
        ArraySemiring("dup", ("x", "x"), one=(1.0, 0.0), mul=lambda a, b: (a[0] * b[0], a[1] * b[1]))
    with pytest.raises(FAQValueError):
        MOMENTS.python_value([1.0, 2.0])
    with pytest.raises(InvalidArgumentError):
        cofactor(2).lift(2, [1.0])
    with pytest.raises(FAQValueError):
        cofactor(2).unpack([1.0, 2.0, 3.0])


def test_a_ring_with_a_wrong_one_breaks_its_laws():
    wrong = ArraySemiring("wrong_one", ("c", "s"), one=(1.0, 1.0),
                          mul=lambda a, b: (a[0] * b[0], a[0] * b[1] + a[1] * b[0]))
    broken = check_laws(wrong)
    assert broken and all("a⊗1 = a" in v for v in broken)
    dual = ArraySemiring("dual", ("c", "s"), one=(1.0, 0.0), mul=lambda a, b: (a[0] * b[0], a[0] * b[1] + a[1] * b[0]))
    assert check_laws(dual) == []


# --- laws -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ring", RINGS, ids=_ids)
def test_laws_hold_on_the_default_samples(ring):
    assert len(ring.samples) >= 3
    assert check_laws(ring) == []


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_laws_hold_on_random_elements(data):
    ring = data.draw(st.sampled_from(RINGS[:4]))
    samples = [data.draw(_element(ring, FLOATS)) for _ in range(3)]
    assert check_laws(ring, samples=samples) == []


@settings(max_examples=25, deadline=None)
@given(x=st.lists(FLOATS, min_size=1, max_size=4), y=st.lists(FLOATS, min_size=1, max_size=4))
def test_the_inverse_cancels_a_lifted_row(x, y):
    """A delete is ⊕ of ⊖ of what was inserted: the sum returns to zero."""
    ops = numpy_ops(cofactor(2), arrays=True)
    ring = cofactor(2)
    rows = ops.mul(ring.lift(0, x[: len(y)]), ring.lift(1, y[: len(x)]))
    total = ops.add(ops.sum(rows), ops.neg(ops.sum(rows)))
    assert ops.is_zero(total[None, :]).all()


# --- the numpy form against brute force ---------------------------------------------------------------


def test_numpy_ops_only_to_callers_that_ask():
    assert numpy_ops(MOMENTS) is None and numpy_ops(cofactor(2)) is None
    ops = numpy_ops(MOMENTS, arrays=True)
    assert isinstance(ops, ArrayNumpyForm) and isinstance(ops, NumpyForm)
    assert (ops.width, ops.value_shape, ops.add, ops.neg, ops.dtype) == (3, (3,), np.add, np.negative, np.float64)
    assert ops.one.tolist() == [1.0, 0.0, 0.0] and not ops.one.flags.writeable
    assert numpy_ops(COUNTING, arrays=True) == numpy_ops(COUNTING)  # scalars: the same form as before
    assert numpy_ops(MOMENTS, cofactor(1), arrays=True) is None  # ⊗ differs: not one query's


def test_generic_calls_on_a_scalar_form_are_its_ufuncs():
    ops = numpy_ops(REAL)
    v = np.array([1.0, 2.0, 0.0, 4.0])
    starts = np.array([0, 1, 3])
    assert ops.segment_sum(v, starts).tolist() == np.add.reduceat(v, starts).tolist()
    assert ops.sum(v) == 7.0 and ops.sum(np.array([])) == 0.0
    assert ops.is_zero(v).tolist() == [False, False, True, False]
    assert (ops.width, ops.value_shape, ops.ones(2).tolist()) == (1, (), [1.0, 1.0])
    acc = np.zeros(2)
    ops.add_at(acc, np.array([0, 0, 1]), np.array([1.0, 2.0, 3.0]))
    assert acc.tolist() == [3.0, 3.0]


def _moments_by_formula(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (c1, s1, q1), (c2, s2, q2) = a.T, b.T
    return np.stack([c1 * c2, c2 * s1 + c1 * s2, c2 * q1 + c1 * q2 + 2 * s1 * s2], axis=1)


def _cofactor_by_formula(ring: CofactorRing, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(c1c2, c2s1 + c1s2, c2Q1 + c1Q2 + s1s2ᵀ + s2s1ᵀ) on full matrices, packed back."""
    c1, s1, Q1 = ring.unpack(a)
    c2, s2, Q2 = ring.unpack(b)
    outer = np.einsum("ni,nj->nij", s1, s2)
    Q = c2[:, None, None] * Q1 + c1[:, None, None] * Q2 + outer + outer.transpose(0, 2, 1)
    return ring.pack(c1 * c2, c2[:, None] * s1 + c1[:, None] * s2, Q)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_numpy_product_equals_the_formula(data):
    n = data.draw(st.integers(0, 5))
    for ring in (MOMENTS, cofactor(3)):
        a = np.array([data.draw(_element(ring, FLOATS)) for _ in range(n)]).reshape(n, ring.width)
        b = np.array([data.draw(_element(ring, FLOATS)) for _ in range(n)]).reshape(n, ring.width)
        got = numpy_ops(ring, arrays=True).mul(a, b)
        assert got.shape == (n, ring.width)
        if ring is MOMENTS:
            expected = _moments_by_formula(a, b)
        else:
            expected = _cofactor_by_formula(ring, a, b) if n else np.zeros((0, ring.width))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 12), m=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_cofactor_of_rows_equals_brute_force(rows, m, seed):
    """⊕ over rows of ⊗_j lift(j, x_j) = (n, Σx, Σxxᵀ)."""
    x = np.random.default_rng(seed).normal(size=(rows, m)).round(3)
    ring = cofactor(m)
    ops = numpy_ops(ring, arrays=True)
    lifted = ops.ones(rows)
    for j in range(m):
        lifted = ops.mul(lifted, ring.lift(j, x[:, j]))
    c, s, Q = ring.unpack(ops.sum(lifted))
    n, sums, products = brute_force_cofactor(x)
    assert c == n
    np.testing.assert_allclose(s, sums, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Q, products, rtol=1e-12, atol=1e-12)


def _keys_and_starts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    firsts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return order, sorted_keys[firsts], firsts


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_r=st.integers(1, 10), n_s=st.integers(1, 10))
def test_moments_of_a_join_equal_moments_of_the_materialised_join(seed, n_r, n_s):
    """R(k, x) ⋈ S(k, y): moments of x over the join, ⊕ pushed past S (InsideOut), equal moments listed.

    Per key: (⊕ of R's lifted x) ⊗ (⊕ of S's ones), then ⊕ over keys; against (|J|, Σx, Σx²) of the
    listed join.  Also the cofactor ring with x lifted in R and y in S against [1, v, vvᵀ] summed.
    """
    rng = np.random.default_rng(seed)
    r_keys, r_x = rng.integers(0, 4, n_r), rng.normal(size=n_r).round(2)
    s_keys, s_y = rng.integers(0, 4, n_s), rng.normal(size=n_s).round(2)
    joined = [(x, y) for k, x in zip(r_keys, r_x) for k2, y in zip(s_keys, s_y) if k == k2]
    jx = np.array([p[0] for p in joined])
    jy = np.array([p[1] for p in joined])

    def per_key(keys, values, ops):
        order, distinct, starts = _keys_and_starts(keys)
        return dict(zip(distinct.tolist(), ops.segment_sum(values[order], starts)))

    ops = numpy_ops(MOMENTS, arrays=True)
    left = per_key(r_keys, MOMENTS.lift(0, r_x), ops)
    right = per_key(s_keys, ops.ones(n_s), ops)
    shared = sorted(set(left) & set(right))
    answer = ops.sum(np.array([ops.mul(left[k], right[k]) for k in shared]).reshape(-1, 3))
    np.testing.assert_allclose(answer, [len(jx), jx.sum(), (jx**2).sum()], rtol=1e-12, atol=1e-12)

    ring = cofactor(2)
    ops = numpy_ops(ring, arrays=True)
    left = per_key(r_keys, ring.lift(0, r_x), ops)
    right = per_key(s_keys, ring.lift(1, s_y), ops)
    answer = ops.sum(np.array([ops.mul(left[k], right[k]) for k in shared]).reshape(-1, ring.width))
    c, s, Q = ring.unpack(answer)
    n, sums, products = brute_force_cofactor(np.column_stack([jx, jy]).reshape(-1, 2))
    assert c == n
    np.testing.assert_allclose(s, sums, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Q, products, rtol=1e-12, atol=1e-12)


def test_repeated_one_and_segments_of_an_array_form():
    ops = numpy_ops(cofactor(2), arrays=True)
    assert ops.repeated_one(np.array([3, 1])).tolist() == [[3.0] + [0.0] * 5, [1.0] + [0.0] * 5]
    values = cofactor(2).lift(1, np.array([1.0, 2.0, 3.0]))
    assert ops.segment_sum(values, np.array([0, 1])).tolist() == [
        [1.0, 0.0, 1.0, 0.0, 0.0, 1.0], [2.0, 0.0, 5.0, 0.0, 0.0, 13.0]]
    assert ops.segment_sum(values, np.array([], dtype=np.intp)).shape == (0, 6)
    acc = ops.zeros(2)
    ops.add_at(acc, np.array([1, 1]), values[:2])
    assert acc[1].tolist() == [2.0, 0.0, 3.0, 0.0, 0.0, 5.0] and ops.is_zero(acc).tolist() == [True, False]
    assert ops.sum(np.empty((0, 6))).tolist() == [0.0] * 6


def test_as_values_reads_what_the_engine_holds():
    import pyarrow as pa

    from faq.semirings.numpy_backend import as_values

    rows = [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0], [2.0, 0.0, 1.0]]
    expected = np.array(rows)
    chunked = pa.chunked_array([pa.array(rows[:1]), pa.array(rows[1:])])
    objects = np.empty(3, dtype=object)  # as pandas holds an array column
    for i, r in enumerate(rows):
        objects[i] = np.array(r)
    for given in (rows, [tuple(r) for r in rows], expected, objects,
                  pa.array(rows), chunked, pa.array([[0.0] * 3] + rows).slice(1)):
        np.testing.assert_array_equal(as_values(MOMENTS, given), expected)
    assert as_values(COUNTING, [1, 2]).dtype == np.int64  # scalars: as before
    for bad in ([[1.0, 2.0]], [rows[0], None], pa.array([rows[0], None]), pa.array([[1.0, 2.0]]), [[1.0, 2.0], [1.0]]):
        with pytest.raises(FAQValueError):
            as_values(MOMENTS, bad)


def test_unpack_and_pack_are_inverse_on_rows():
    ring = cofactor(3)
    rows = np.random.default_rng(1).normal(size=(4, ring.width))
    c, s, Q = ring.unpack(rows)
    assert c.shape == (4,) and s.shape == (4, 3) and Q.shape == (4, 3, 3)
    assert np.array_equal(Q, Q.transpose(0, 2, 1))
    np.testing.assert_array_equal(ring.pack(c, s, Q), rows)


# --- the Spark form against the numpy form ------------------------------------------------------------


def _pairs(ring, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, ring.width)).round(3), rng.normal(size=(n, ring.width)).round(3)


@pytest.mark.parametrize("ring", [MOMENTS, cofactor(3), cofactor(6)], ids=_ids)  # 3, 10: per component; 28: HOFs
def test_spark_forms_equal_numpy_forms(spark, ring):
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import NARROW_WIDTH, columns

    a, b = _pairs(ring, 12, seed=ring.width)
    a[3] = 0.0  # a zero row: is_zero must see it
    groups = np.arange(12) % 3
    df = spark.createDataFrame(
        [(int(g), i, x.tolist(), y.tolist()) for i, (g, x, y) in enumerate(zip(groups, a, b))],
        "g long, i long, a array<double>, b array<double>",
    )
    cols = columns(ring)
    ops = numpy_ops(ring, arrays=True)
    rows = sorted(df.select(
        "i", cols.mul("a", "b").alias("mul"), cols.add("a", "b").alias("add"), cols.neg("a").alias("neg"),
        cols.is_zero("a").alias("zero"), cols.is_zero(cols.add("a", cols.neg("a"))).alias("cancels"),
    ).collect())
    np.testing.assert_allclose(np.array([r["mul"] for r in rows]), ops.mul(a, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array([r["add"] for r in rows]), ops.add(a, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.array([r["neg"] for r in rows]), ops.neg(a))
    assert [r["zero"] for r in rows] == ops.is_zero(a).tolist() and all(r["cancels"] for r in rows)

    # ⊕ as an aggregate in a groupBy, against segment_sum over the same groups
    summed = dict(df.groupBy("g").agg(cols.sum(cols.mul("a", "b")).alias("s")).select("g", "s").collect())
    order = np.argsort(groups, kind="stable")
    expected = ops.segment_sum(ops.mul(a, b)[order], np.array([0, 4, 8]))
    np.testing.assert_allclose(np.array([summed[g] for g in range(3)]), expected, rtol=1e-12, atol=1e-12)

    # literals, lifts, components
    first = df.where("i = 0").select(cols.one().alias("one"), cols.zero().alias("zero"), *cols.components("a")).first()
    assert (tuple(first["one"]), tuple(first["zero"])) == (ring.one, ring.zero)
    assert [first[name] for name in ring.components] == a[0].tolist()
    lifted = df.orderBy("i").select(cols.lift(ring.features - 1, F.col("i") * 0.5).alias("v"))
    lifts = [r["v"] for r in lifted.collect()]
    np.testing.assert_array_equal(np.array(lifts), ring.lift(ring.features - 1, np.arange(12) * 0.5))
    assert (ring.width > NARROW_WIDTH) == (ring is cofactor(6))  # both Spark paths are exercised


@pytest.mark.parametrize("ring", [MOMENTS, cofactor(6)], ids=_ids)
def test_spark_forms_pass_the_laws(spark, ring):
    samples = None if ring is MOMENTS else ring.samples[:3]  # 125 triples of 28 components is plenty
    assert check_laws(ring, samples=samples, backend="spark") == []


def test_spark_law_check_sees_a_wrong_one(spark):
    wrong = ArraySemiring("wrong_one_spark", ("c", "s"), one=(1.0, 1.0),
                          mul=lambda a, b: (a[0] * b[0], a[0] * b[1] + a[1] * b[0]))
    broken = check_laws(wrong, backend="spark")
    assert broken and any("a⊗1 = a" in v for v in broken)


def test_aggregate_of_an_empty_group_is_null(spark):
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns

    df = spark.createDataFrame([(1, None), (2, [1.0, 2.0, 4.0])], "g long, v array<double>")
    cols = columns(MOMENTS)
    got = dict(df.groupBy("g").agg(cols.sum("v").alias("s")).collect())
    assert got == {1: None, 2: [1.0, 2.0, 4.0]}
    assert df.where(F.col("v").isNotNull() & ~cols.is_zero("v")).count() == 1
