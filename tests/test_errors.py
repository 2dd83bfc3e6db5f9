"""Bad input raises named error classes with parameters, before any Spark work is wasted."""

import pytest

from faq.errors import (
    ArityMismatchError,
    FAQError,
    InvalidFactorValueError,
    MissingColumnError,
    NullKeyError,
    SemiringMismatchError,
    UnknownFactorError,
    UnknownSemiringError,
    UnknownVariableError,
    ValueTypeMismatchError,
    VariableTypeMismatchError,
)
from faq.factor import Factor, factor_of
from faq.insideout import evaluate
from faq.language import make_query, parse_query


@pytest.fixture
def edge():
    return factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting", name="edge")


def test_unknown_factor(edge):
    with pytest.raises(UnknownFactorError) as info:
        evaluate("q() := edge(a,b), path(b,c)", {"edge": edge})
    assert info.value.parameters == {"name": "path", "known": ["edge"]}


def test_arity_mismatch(edge):
    with pytest.raises(ArityMismatchError) as info:
        evaluate("q() := edge(a,b,c)", {"edge": edge})
    assert info.value.parameters == {"factor": "edge", "expected": 2, "found": 3}


def test_free_variable_in_no_factor(edge):
    with pytest.raises(UnknownVariableError) as info:
        evaluate("q(z) := edge(a,b)", {"edge": edge})
    assert info.value.parameters["variable"] == "z"


def test_unknown_semiring(edge):
    with pytest.raises(UnknownSemiringError):
        evaluate("q() := edge(a,b)", {"edge": edge}, semiring="sumproduct")


def test_semiring_mismatch_between_factors(edge):
    weights = factor_of([(1, 2, 0.5)], ["src", "dst"], "real", name="w")
    with pytest.raises(SemiringMismatchError) as info:
        evaluate("q() := edge(a,b), w(a,b)", {"edge": edge, "w": weights})
    assert info.value.parameters == {"what": "factor 'w'", "expected": "counting", "found": "real"}


def test_aggregate_that_does_not_share_the_product(edge):
    query = make_query([("edge", "ab")], [], semiring="counting", aggregates={"a": "min_plus"})
    with pytest.raises(SemiringMismatchError):
        evaluate(query, {"edge": edge})


def test_variable_type_mismatch_between_factors(spark, edge):
    names = spark.createDataFrame([("x", "y")], "src string, dst string")
    labels = Factor.from_dataframe(names, ["src", "dst"], "counting", value=None, name="labels")
    with pytest.raises(VariableTypeMismatchError) as info:
        evaluate("q() := edge(a,b), labels(b,c)", {"edge": edge, "labels": labels})
    assert info.value.parameters["variable"] == "b"
    assert set(info.value.parameters["types"].values()) == {"bigint", "string"}


def test_int_and_bigint_keys_join(spark, edge):
    small = spark.createDataFrame([(2, 3)], "src int, dst int")
    f = Factor.from_dataframe(small, ["src", "dst"], "counting", value=None, name="f")
    with evaluate("q() := edge(a,b), f(b,c)", {"edge": edge, "f": f}) as result:
        assert result.scalar() == 1


def test_missing_value_column(spark):
    df = spark.createDataFrame([(1, 2, 3)], ["i", "j", "w"])
    with pytest.raises(MissingColumnError) as info:
        Factor.from_dataframe(df, ["i", "j"], "real", value="weight")
    assert info.value.parameters["column"] == "weight"
    with pytest.raises(MissingColumnError):
        Factor.from_dataframe(df, ["i", "k"], "real", value="w")


def test_value_type_that_does_not_fit(spark):
    df = spark.createDataFrame([(1, "a")], ["i", "value"])
    with pytest.raises(ValueTypeMismatchError) as info:
        Factor.from_dataframe(df, ["i"], "real")
    assert info.value.parameters["found"] == "string"


def test_null_key_and_nan_value(spark):
    nulls = spark.createDataFrame([(1, 1.0), (None, 2.0)], "i bigint, value double")
    with pytest.raises(NullKeyError) as info:
        Factor.from_dataframe(nulls, ["i"], "real", validate=True)
    assert info.value.parameters == {"factor": "factor", "column": "i", "count": 1}
    nans = spark.createDataFrame([(1, float("nan"))], "i bigint, value double")
    with pytest.raises(InvalidFactorValueError) as info:
        Factor.from_dataframe(nans, ["i"], "real", name="p", validate=True)
    assert info.value.parameters["problem"] == "NaN"


def test_errors_are_faq_errors_and_builtin_types():
    err = UnknownVariableError(variable="z", role="free", known=["a"])
    assert isinstance(err, FAQError) and isinstance(err, ValueError) and isinstance(err, KeyError)
    assert str(err).startswith("[UNKNOWN_VARIABLE]")


def test_parse_error_is_raised_before_evaluation(edge):
    with pytest.raises(FAQError):
        evaluate(parse_query("q() := edge(a b)"), {"edge": edge})
