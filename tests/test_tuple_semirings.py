"""Semirings over tuples that a user declares (faq.semirings.tuples): (probability, paths) for Viterbi with
ties, (distance, hops) for shortest paths with fewest hops, dual numbers as a ring.  Checked against brute
force in queries (in-process and on Spark), in fixpoints (driver and Spark) and maintained under batches.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

import faq
from faq.errors import FAQValueError
from faq.factor import factor_of
from faq.semirings import TupleSemiring, check_laws

pytestmark = pytest.mark.usefixtures("spark")


def _best(a, b):  # the larger probability; paths added on a tie
    return F.when(a[0] > b[0], a).when(a[0] < b[0], b).otherwise(F.array(a[0], a[1] + b[1]))


def _numpy_best(a, b):
    out = np.where((a[:, 0] >= b[:, 0])[:, None], a, b)
    out[:, 1] = np.where(a[:, 0] == b[:, 0], a[:, 1] + b[:, 1], out[:, 1])
    return out


def _lex_min(a, b):  # the shorter distance; on a tie, fewer hops
    return F.when((a[0] < b[0]) | ((a[0] == b[0]) & (a[1] <= b[1])), a).otherwise(b)


def _numpy_lex_min(a, b):
    first = (a[:, 0] < b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] <= b[:, 1]))
    return np.where(first[:, None], a, b)


VITERBI = TupleSemiring(
    "viterbi_ties", ("probability", "paths"), zero=(0.0, 0.0), one=(1.0, 1.0),
    add=_best, mul=lambda a, b: F.array(a[0] * b[0], a[1] * b[1]),
    numpy_add=_numpy_best, numpy_mul=lambda a, b: a * b,
    samples=((0.5, 1.0), (0.5, 2.0), (0.25, 3.0)))
FEWEST_HOPS = TupleSemiring(
    "fewest_hops", ("distance", "hops"), zero=(math.inf, math.inf), one=(0.0, 0.0),
    add=_lex_min, mul=lambda a, b: F.array(a[0] + b[0], a[1] + b[1]),
    numpy_add=_numpy_lex_min, numpy_mul=lambda a, b: a + b, idempotent=True,
    samples=((1.0, 2.0), (1.0, 1.0), (3.0, 0.0)))
DUAL = TupleSemiring(
    "dual", ("re", "eps"), zero=(0.0, 0.0), one=(1.0, 0.0),
    add=lambda a, b: F.array(a[0] + b[0], a[1] + b[1]),
    mul=lambda a, b: F.array(a[0] * b[0], a[0] * b[1] + a[1] * b[0]),
    numpy_add=lambda a, b: a + b,
    numpy_mul=lambda a, b: np.stack([a[:, 0] * b[:, 0], a[:, 0] * b[:, 1] + a[:, 1] * b[:, 0]], axis=1),
    neg=lambda a: F.array(-a[0], -a[1]), numpy_neg=lambda a: -a,
    samples=((1.0, 2.0), (-1.5, 0.5), (3.0, 0.0)))

NODES = st.integers(0, 5)
PROBABILITIES = st.sampled_from([0.25, 0.5, 1.0])  # few values: ties are common


def _two_step_viterbi(edges: dict) -> dict:
    """Brute force of best(a, c) := e(a,b), e(b,c): the best product over b, and how many b reach it."""
    out: dict = {}
    for (a, b), p in edges.items():
        for (b2, c), q in edges.items():
            if b2 == b:
                best, count = out.get((a, c), (0.0, 0))
                if p * q > best:
                    out[(a, c)] = (p * q, 1)
                elif p * q == best:
                    out[(a, c)] = (best, count + 1)
    return out


@pytest.mark.parametrize("ring", [VITERBI, FEWEST_HOPS, DUAL], ids=lambda r: r.name)
def test_the_laws_hold_in_numpy_and_on_spark(ring, spark):
    assert check_laws(ring) == [] and check_laws(ring, spark=spark) == []


def test_a_broken_law_is_found_and_a_missing_form_refused():
    wrong = TupleSemiring("wrong", ("x", "y"), zero=(0.0, 0.0), one=(1.0, 1.0), add=None, mul=None,
                          numpy_add=lambda a, b: a - b, numpy_mul=lambda a, b: a * b, samples=((1.0, 2.0),))
    assert any("commutative" in law or "⊕" in law for law in check_laws(wrong))
    with pytest.raises(FAQValueError, match="numpy form"):
        TupleSemiring("half", ("x",), zero=(0.0,), one=(1.0,), add=None, mul=None, numpy_add=None,
                      numpy_mul=lambda a, b: a * b)


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.tuples(NODES, NODES), PROBABILITIES, max_size=14))
def test_viterbi_with_ties_against_brute_force_in_process(edges):
    e = factor_of([(a, b, (p, 1.0)) for (a, b), p in edges.items()], ["src", "dst"], VITERBI)
    with faq.query("best(a, c) := e(a,b), e(b,c)", e=e, semiring=VITERBI, placement="driver") as result:
        got = {(r[0], r[1]): tuple(r[2]) for r in result.df.collect()}
    assert got == {key: (p, float(n)) for key, (p, n) in _two_step_viterbi(edges).items()}


def test_viterbi_with_ties_on_spark_equals_in_process():
    edges = {(a, b): [0.25, 0.5, 1.0][(a * 7 + b) % 3] for a, b in itertools.product(range(6), repeat=2) if a != b}
    e = factor_of([(a, b, (p, 1.0)) for (a, b), p in edges.items()], ["src", "dst"], VITERBI)
    answers = []
    for placement in ("driver", "executors"):
        with faq.query("best(a, c) := e(a,b), e(b,c)", e=e, semiring=VITERBI, placement=placement) as result:
            assert {s.placement for s in result.plan.steps} == {placement}
            answers.append({(r[0], r[1]): tuple(r[2]) for r in result.df.collect()})
    expected = {key: (p, float(n)) for key, (p, n) in _two_step_viterbi(edges).items()}
    assert answers[0] == answers[1] == expected


def _fewest_hops(weights: dict, source: int) -> dict:
    """Brute force: Bellman-Ford over (distance, hops) compared lexicographically."""
    best = {source: (0.0, 0.0)}
    for _ in range(len(weights) + 1):
        for (a, b), w in weights.items():
            if a in best:
                candidate = (best[a][0] + w, best[a][1] + 1.0)
                if b not in best or candidate < best[b]:
                    best[b] = candidate
    return best


def test_shortest_paths_with_fewest_hops_as_a_fixpoint():
    """An idempotent tuple semiring in a fixpoint: semi-naive rounds on Spark.  The driver's fixpoint
    (compiled, resident) takes scalar semirings only: asked for, it says why it ran on Spark instead."""
    rng = np.random.default_rng(3)
    weights = {(int(a), int(b)): float(rng.integers(1, 4)) for a, b in rng.integers(0, 12, size=(40, 2)) if a != b}
    e = factor_of([(a, b, (w, 1.0)) for (a, b), w in weights.items()], ["src", "dst"], FEWEST_HOPS)
    with faq.paths(e, 0, semiring=FEWEST_HOPS, placement="driver") as result:  # the front door of solve_placed
        got = {r[0]: tuple(r[1]) for r in result.df.collect()}
        assert result.placement == "executors" and "scalar values only" in result.placement_reason
    assert got == _fewest_hops(weights, 0)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.lists(st.tuples(NODES, NODES, st.integers(-2, 3), st.integers(-2, 2)), max_size=5),
                min_size=1, max_size=4))
def test_a_tuple_ring_kept_current_equals_recomputation(batches):
    """Dual numbers (a ring): each batch adds signed values; after every batch the maintained answer
    equals the query answered afresh over the current edges."""
    current: dict = defaultdict(lambda: np.zeros(2))
    current[(0, 1)] += (1.0, 1.0)
    start = [(a, b, tuple(v)) for (a, b), v in current.items()]
    query = "s(a) := e(a,b), e(b,c)"
    with faq.maintain(query, e=factor_of(start, ["src", "dst"], DUAL), semiring=DUAL) as kept:
        for batch in batches:
            rows = [(a, b, (float(x), float(y))) for a, b, x, y in batch]
            kept.apply(e=rows)
            for a, b, value in rows:
                current[(a, b)] += value
            alive = [(a, b, tuple(v)) for (a, b), v in current.items() if np.any(v != 0)]
            with faq.query(query, e=factor_of(alive, ["src", "dst"], DUAL) if alive else
                           factor_of([(0, 0, (0.0, 0.0))], ["src", "dst"], DUAL), semiring=DUAL) as fresh:
                expected = {r[0]: tuple(r[1]) for r in fresh.df.collect()}
            got = {r[0]: tuple(r[1]) for r in kept.df.collect()}
            assert got == expected


# --- the same semirings on a Spark DataFrame, pandas or tuples: one answer (issue 49) -----------------


def _viterbi_inputs(spark, edges: dict, column: str = "value") -> dict:
    rows = [(a, b, [p, 1.0]) for (a, b), p in edges.items()]
    import pandas as pd

    return {
        "spark": spark.createDataFrame(rows, f"src long, dst long, {column} array<double>"),
        "pandas": pd.DataFrame({"src": [r[0] for r in rows], "dst": [r[1] for r in rows], column: [r[2] for r in rows]}),
        "tuples": factor_of([(a, b, tuple(v)) for a, b, v in rows], ["src", "dst"], VITERBI),
    }


def test_a_tuple_semiring_query_on_a_spark_dataframe_equals_pandas_and_tuples(spark):
    edges = {(a, b): [0.25, 0.5, 1.0][(a * 5 + b) % 3] for a, b in itertools.product(range(5), repeat=2) if a != b}
    answers = {}
    for kind, e in _viterbi_inputs(spark, edges).items():
        with faq.query("best(a, c) := e(a,b), e(b,c)", e=e, semiring=VITERBI) as result:
            answers[kind] = {(r[0], r[1]): tuple(r[2]) for r in result.df.collect()}
    expected = {key: (p, float(n)) for key, (p, n) in _two_step_viterbi(edges).items()}
    assert answers["spark"] == answers["pandas"] == answers["tuples"] == expected


def test_a_tuple_semiring_fixpoint_on_a_spark_dataframe_equals_pandas_and_tuples(spark):
    rng = np.random.default_rng(5)
    weights = {(int(a), int(b)): float(rng.integers(1, 4)) for a, b in rng.integers(0, 10, size=(30, 2)) if a != b}
    rows = [(a, b, [w, 1.0]) for (a, b), w in weights.items()]
    import pandas as pd

    inputs = {"spark": spark.createDataFrame(rows, "src long, dst long, weight array<double>"),
              "pandas": pd.DataFrame({"src": [r[0] for r in rows], "dst": [r[1] for r in rows],
                                      "weight": [r[2] for r in rows]}),
              "tuples": [(a, b, tuple(v)) for a, b, v in rows]}
    for kind, e in inputs.items():
        with faq.paths(e, 0, semiring=FEWEST_HOPS) as result:
            got = {r[0]: tuple(r[1]) for r in result.df.collect()}
            # the truth: FEWEST_HOPS declares numpy_add/numpy_mul, but its values are pairs
            assert "has values of 2 numbers: the driver's fixpoint takes scalar values only" in result.placement_reason
            assert "no numpy form" not in result.placement_reason
        assert got == _fewest_hops(weights, 0), kind


def test_a_tuple_semiring_refuses_a_scalar_value_column_with_a_catalog_error(spark):
    from faq.errors import MissingColumnError, ValueTypeMismatchError

    scalar = spark.createDataFrame([(0, 1, 0.5)], "src long, dst long, value double")
    with pytest.raises(ValueTypeMismatchError) as error:
        faq.query("best(a, c) := e(a,b), e(b,c)", e=scalar, semiring=VITERBI)
    assert error.value.error_class == "VALUE_TYPE_MISMATCH"
    assert error.value.parameters == {"factor": "e", "column": "value", "found": "double",
                                      "semiring": "viterbi_ties", "expected": "array<double>"}
    with pytest.raises(ValueTypeMismatchError) as error:
        faq.paths(scalar.withColumnRenamed("value", "weight"), 0, semiring=FEWEST_HOPS)
    assert error.value.parameters["found"] == "double" and error.value.parameters["column"] == "weight"
    with pytest.raises(MissingColumnError) as error:
        faq.paths(spark.createDataFrame([(0, [1.0, 1.0])], "a long, weight array<double>"), 0, semiring=FEWEST_HOPS)
    assert error.value.parameters["column"] == "src"
