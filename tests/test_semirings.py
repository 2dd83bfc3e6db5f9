"""Semirings without Spark: laws of every built-in (numpy forms), the registry, user-defined semirings.

The Column forms on Spark are tested in tests/test_semirings_spark.py.
"""

import math

import numpy as np
import pytest
from pyspark.sql import functions as F

from faq.errors import FAQTypeError, FAQValueError, UnknownSemiringError
from faq.semirings import (
    MIN,
    MIN_LABEL,
    PLUS,
    TIMES,
    Semiring,
    builtin_semirings,
    check_laws,
    get_semiring,
    semiring_names,
)
from faq.semirings.numpy_backend import numpy_ops
from tests.helpers import log_add


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


def test_bad_value_type_is_rejected():
    with pytest.raises(ValueError):
        Semiring("x", "string", "", "", lambda a, b: a, lambda a, b: a, F.max)


def test_semirings_are_made_of_operation_values():
    """⊕ and ⊗ are operation values with their identities: the built-ins' zero and one are them
    (max_product aside: its values are non-negative, so its zero is 0, not max's −∞)."""
    for ring in builtin_semirings():
        assert ring.builtin_operations and ring.idempotent == ring.add.idempotent
        assert ring.one == ring.mul.identity(ring.value_type)
        if ring.name != "max_product":
            assert ring.zero == ring.add.identity(ring.value_type)
    assert (get_semiring("min_plus").add, get_semiring("min_plus").mul) == (MIN, PLUS)
    with pytest.raises(FAQValueError):
        TIMES.identity("boolean")


def test_min_label_is_min_plus_on_bigint_outside_the_registry():
    assert (MIN_LABEL.add, MIN_LABEL.mul, MIN_LABEL.value_type) == (MIN, PLUS, "bigint")
    assert (MIN_LABEL.zero, MIN_LABEL.one) == (2**63 - 1, 0)
    assert "min_label" not in semiring_names() and MIN_LABEL not in builtin_semirings()
    form = numpy_ops(MIN_LABEL)
    assert (form.add, form.mul, form.dtype, form.zero) == (np.fmin, np.add, np.int64, 2**63 - 1)
    from faq.recursive import MIN_LABEL as used_by_components

    assert used_by_components is MIN_LABEL


def test_forms_must_fit_the_operations():
    with pytest.raises(FAQTypeError):  # reduce / reduceat / at are needed: a ufunc
        Semiring("log", "double", -math.inf, 0.0, add=log_add, mul=PLUS, numpy_add=lambda a, b: np.logaddexp(a, b))
    with pytest.raises(FAQValueError):  # PLUS brings its own forms
        Semiring("x", "double", 0.0, 1.0, add=PLUS, mul=TIMES, numpy_add=np.add)
    with pytest.raises(FAQValueError):  # min is idempotent
        Semiring("x", "double", math.inf, 0.0, add=MIN, mul=PLUS, idempotent=False)
    columns_only = Semiring("c", "bigint", 0, 1, lambda a, b: a + b, lambda a, b: a * b, F.sum)
    assert numpy_ops(columns_only) is None
    with pytest.raises(FAQValueError):
        check_laws(columns_only, backend="numpy")


def test_built_in_operations_unpickle_as_themselves():
    """Backends know built-ins by identity, so a semiring shipped to an executor keeps its forms."""
    import pickle

    ring = pickle.loads(pickle.dumps(get_semiring("integer")))
    assert ring == get_semiring("integer") and ring.builtin_operations
    assert numpy_ops(ring) == numpy_ops(get_semiring("integer"))
