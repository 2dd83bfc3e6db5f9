"""Semirings: laws of every built-in, the registry, user-defined semirings."""

import math

import pytest
from pyspark.sql import functions as F

from faq.errors import SemiringLawError, UnknownSemiringError
from faq.semirings import Semiring, assert_laws, builtin_semirings, check_laws, get_semiring, semiring_names


@pytest.mark.parametrize("semiring", builtin_semirings(), ids=lambda s: s.name)
def test_builtin_semiring_laws_hold(semiring):
    assert check_laws(semiring) == []


def test_ring_flags():
    rings = {s.name for s in builtin_semirings() if s.is_ring}
    idempotent = {s.name for s in builtin_semirings() if s.idempotent}
    assert rings == {"integer", "real"}
    assert idempotent == {"boolean", "min_plus", "max_plus", "max_product", "max_min", "min_max"}


def test_unknown_semiring_lists_valid_names():
    with pytest.raises(UnknownSemiringError) as info:
        get_semiring("tropicle")
    assert info.value.parameters["name"] == "tropicle"
    assert "min_plus" in info.value.parameters["valid"]
    assert "min_plus" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_aliases_and_spelling():
    assert get_semiring("Min-Plus").name == "min_plus"
    assert get_semiring("viterbi").name == "max_product"
    assert set(semiring_names()) >= {"counting", "integer", "real", "boolean", "min_plus", "max_plus",
                                     "max_product", "max_min", "min_max"}


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
    wrong = Semiring(
        name="wrong_sum",
        value_type="bigint",
        zero=0,
        one=1,
        add=lambda a, b: a + b,
        mul=lambda a, b: a * b,
        sum=F.max,  # does not agree with binary +
        samples=(1, 2),
    )
    assert any("aggregate" in v for v in check_laws(wrong))


def test_bad_value_type_is_rejected():
    with pytest.raises(ValueError):
        Semiring("x", "string", "", "", lambda a, b: a, lambda a, b: a, F.max)
