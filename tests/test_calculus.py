"""Calculus of change streams: differentiate and integrate; and the as-of join as Spark's window.

The as-of join left the calculus for :mod:`faq.asof` (:func:`faq.asof.spark_window.asof_window`, one way
``faq.asof_join`` runs on Spark DataFrames); its tests of old stay here, checked against
``pandas.merge_asof(..., direction="backward")`` on a hand-made example and on random data
(tests/test_asof_window.py checks every direction and option).
"""

from __future__ import annotations

import datetime as dt
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.errors import (
    AlreadyDifferentiatedError,
    ColumnClashError,
    ColumnRoleError,
    ColumnTypeMismatchError,
    DiffTypeError,
    FAQError,
    InvalidJoinTypeError,
    MissingColumnError,
    NotDifferentiatedError,
    TimeTypeError,
)
from faq.asof.spark_window import asof_window
from faq.incremental.calculus import differentiate, integrate

FEW = settings(
    derandomize=True,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

LEFT_SCHEMA = "k1 int, k2 string, time bigint, v bigint"
RIGHT_SCHEMA = "k1 int, k2 string, time bigint, v bigint, p bigint"
LEFT_COLUMNS = ["k1", "k2", "time", "v"]
RIGHT_COLUMNS = ["k1", "k2", "time", "v", "p"]
LEFT_DTYPES = {"k1": "int64", "k2": "object", "time": "int64", "v": "int64"}
RIGHT_DTYPES = {"k1": "int64", "k2": "object", "time": "int64", "v": "int64", "p": "float64"}


# --- helpers ------------------------------------------------------------------------------


def window_join(left, right, on=None, time="time", **options):
    """The old calculus signature (keys ``on``, time ``time``) over :func:`faq.asof.spark_window.asof_window`."""
    return asof_window(left, right, time, on, **options)


def _norm(x):
    """One form for a cell from Spark or pandas: None for null/NaN, float for numbers."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if x is pd.NaT:
        return None
    if isinstance(x, pd.Timestamp):
        return x.to_pydatetime()
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if hasattr(x, "item"):  # numpy scalars
        return _norm(x.item())
    return x


def _sorted_rows(rows):
    rows = [tuple(_norm(x) for x in row) for row in rows]
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def _pandas_frame(rows, columns, dtypes):
    return pd.DataFrame(rows, columns=columns).astype(dtypes).sort_values("time", kind="stable")


def _expected(left_rows, right_rows, *, by, allow_exact_matches=True):
    """Columns and sorted rows of pandas.merge_asof on the standard left/right schemas."""
    left_pd = _pandas_frame(left_rows, LEFT_COLUMNS, LEFT_DTYPES)
    right_pd = _pandas_frame(right_rows, RIGHT_COLUMNS, RIGHT_DTYPES)
    merged = pd.merge_asof(
        left_pd, right_pd, on="time", by=by, direction="backward", allow_exact_matches=allow_exact_matches
    )
    return list(merged.columns), _sorted_rows(merged.itertuples(index=False, name=None))


def _actual(joined):
    return joined.columns, _sorted_rows(tuple(r) for r in joined.collect())


# --- as-of join vs pandas ---------------------------------------------------------------------

HAND_LEFT = [
    (1, "a", 0, 100),  # before any right row of its keys
    (1, "a", 2, 101),  # exact match at time 2
    (1, "a", 3, 102),  # between right rows at 2 and 5
    (1, "a", 9, 103),  # after the last right row
    (1, "b", 2, 104),  # other second key: its right row comes later
    (1, "b", 7, 105),
    (2, "a", 4, 106),  # right row with a null value column
    (3, "a", 5, 107),  # keys with no right rows at all
    (1, "a", 2, 108),  # duplicate left time: both match
]
HAND_RIGHT = [
    (1, "a", 2, 10, 1000),
    (1, "a", 5, 11, 1001),
    (1, "b", 6, 12, 1002),
    (2, "a", 1, 13, None),
    (2, "b", 0, 14, 1004),  # keys with no left rows
]


@pytest.mark.parametrize("allow_exact_matches", [True, False])
def test_asof_join_matches_pandas_hand_made(spark, allow_exact_matches):
    left = spark.createDataFrame(HAND_LEFT, LEFT_SCHEMA)
    right = spark.createDataFrame(HAND_RIGHT, RIGHT_SCHEMA)
    joined = window_join(left, right, on=["k1", "k2"], time="time", allow_exact_matches=allow_exact_matches)
    expected = _expected(
        HAND_LEFT,
        HAND_RIGHT,
        by=["k1", "k2"],
        allow_exact_matches=allow_exact_matches,
    )
    assert joined.columns == ["k1", "k2", "time", "v_x", "v_y", "p"]
    rows = joined.collect()
    assert (joined.columns, _sorted_rows(rows)) == expected
    if allow_exact_matches:
        by_v = {r["v_x"]: (r["v_y"], r["p"]) for r in rows}
        assert by_v[100] == (None, None)
        assert by_v[101] == by_v[108] == (10, 1000)
        assert by_v[102] == (10, 1000)
        assert by_v[103] == (11, 1001)
        assert by_v[104] == (None, None)
        assert by_v[106] == (13, None)
        assert by_v[107] == (None, None)


def test_asof_join_timestamps_and_inner(spark):
    """Orders locked to the price at their time; timestamps; how="inner"; suffixes."""
    t = lambda h, m: dt.datetime(2024, 3, 1, h, m)  # noqa: E731
    orders = [("ibm", t(9, 59), 5), ("ibm", t(10, 0), 7), ("ibm", t(10, 7), 1), ("aapl", t(10, 1), 3)]
    prices = [("ibm", t(10, 0), 101.0), ("ibm", t(10, 5), 103.5), ("aapl", t(9, 0), 180.0)]
    cols_o, cols_p = ["sym", "time", "qty"], ["sym", "time", "price"]
    left = spark.createDataFrame(orders, "sym string, time timestamp, qty int")
    right = spark.createDataFrame(prices, "sym string, time timestamp, price double")
    joined = window_join(left, right, on="sym", how="inner", right_time="priced_at")
    left_pd = pd.DataFrame(orders, columns=cols_o).sort_values("time")
    right_pd = pd.DataFrame(prices, columns=cols_p).sort_values("time")
    merged = pd.merge_asof(left_pd, right_pd, on="time", by="sym", direction="backward").dropna(subset=["price"])
    assert joined.columns == ["sym", "time", "qty", "price", "priced_at"]
    rows = joined.collect()
    assert _sorted_rows(tuple(r)[:4] for r in rows) == _sorted_rows(merged.itertuples(index=False, name=None))
    priced_at = {(r["sym"], r["time"]): r["priced_at"] for r in rows}
    assert priced_at == {("ibm", t(10, 0)): t(10, 0), ("ibm", t(10, 7)): t(10, 5), ("aapl", t(10, 1)): t(9, 0)}


@st.composite
def asof_case(draw):
    keys = st.tuples(st.integers(0, 2), st.sampled_from(["a", "b"]))
    times = st.integers(0, 12)
    left = draw(
        st.lists(st.tuples(keys, times, st.integers(-50, 50)), min_size=1, max_size=12).map(
            lambda rows: [(k1, k2, t, v) for (k1, k2), t, v in rows]
        )
    )
    # Unique (keys, time) on the right: pandas breaks ties by row order, which Spark has not.
    right = draw(
        st.dictionaries(
            st.tuples(keys, times),
            st.tuples(st.integers(-50, 50), st.one_of(st.none(), st.integers(0, 9))),
            max_size=12,
        )
    )
    right_rows = [(k1, k2, t, v, p) for ((k1, k2), t), (v, p) in right.items()]
    return left, right_rows, draw(st.booleans())


@FEW
@given(asof_case())
def test_asof_join_matches_pandas_random(spark, case):
    left_rows, right_rows, allow_exact_matches = case
    left = spark.createDataFrame(left_rows, LEFT_SCHEMA)
    right = spark.createDataFrame(right_rows, RIGHT_SCHEMA)
    joined = window_join(left, right, on=["k1", "k2"], allow_exact_matches=allow_exact_matches)
    expected = _expected(
        left_rows,
        right_rows,
        by=["k1", "k2"],
        allow_exact_matches=allow_exact_matches,
    )
    assert _actual(joined) == expected


def test_asof_join_without_keys(spark):
    left_rows = [(0, 1), (3, 2), (7, 3)]
    right_rows = [(1, 10), (3, 11), (8, 12)]
    left = spark.createDataFrame(left_rows, "time bigint, a bigint")
    right = spark.createDataFrame(right_rows, "time bigint, b bigint")
    merged = pd.merge_asof(
        pd.DataFrame(left_rows, columns=["time", "a"]), pd.DataFrame(right_rows, columns=["time", "b"]), on="time"
    )
    assert _actual(window_join(left, right)) == (["time", "a", "b"], _sorted_rows(merged.itertuples(index=False)))


# --- locked rows: later right changes revise nothing --------------------------------------------


def test_later_right_changes_do_not_revise_joined_rows(spark):
    orders = spark.createDataFrame([("x", 1, 10), ("x", 5, 20), ("x", 9, 30)], "sym string, time int, qty int")
    prices = spark.createDataFrame([("x", 0, 1.0), ("x", 4, 2.0)], "sym string, time int, price double")
    before = {r["time"]: r["price"] for r in window_join(orders, prices, on="sym").collect()}
    assert before == {1: 1.0, 5: 2.0, 9: 2.0}
    # A price change at time 7: a maintained view of orders ⋈ prices would reprice every
    # order; the as-of join leaves the orders at 1 and 5 as they were.
    changed = prices.unionByName(spark.createDataFrame([("x", 7, 3.0)], prices.schema))
    after = {r["time"]: r["price"] for r in window_join(orders, changed, on="sym").collect()}
    assert after == {1: 1.0, 5: 2.0, 9: 3.0}
    assert {t: after[t] for t in (1, 5)} == {t: before[t] for t in (1, 5)}


def test_ties_broken_by_the_values(spark):
    left = spark.createDataFrame([("x", 5)], "sym string, time int")
    right = spark.createDataFrame(
        [("x", 3, 1, 7.0), ("x", 3, 2, 5.0), ("x", 1, 9, 99.0)], "sym string, time int, seq int, price double"
    )
    # Right's other columns in order (seq, then price); the last row wins.
    assert window_join(left, right, on="sym").collect()[0]["price"] == 5.0


# --- differentiate / integrate --------------------------------------------------------------------


def test_differentiate_makes_blips_with_t_plus_between_times(spark):
    stream = spark.createDataFrame(
        [("a", 1.5, 2), ("b", 1.0, 1), ("a", 2.0, -1)], "item string, t double, d int"
    )
    blips = differentiate(stream, time="t", diff="d")
    assert blips.columns == ["item", "t", "d", "__tick"]
    rows = [tuple(r) for r in blips.orderBy("t", "__tick").collect()]
    # t⁺ = (t, 1) sorts after t = (t, 0) and before the next time.
    assert rows == [
        ("b", 1.0, 1, 0),
        ("b", 1.0, -1, 1),
        ("a", 1.5, 2, 0),
        ("a", 1.5, -2, 1),
        ("a", 2.0, -1, 0),
        ("a", 2.0, 1, 1),
    ]


def test_differentiate_timestamps(spark):
    t0 = dt.datetime(2024, 1, 1, 12, 0)
    stream = spark.createDataFrame([(7, t0, 3.5)], "id int, time timestamp, diff double")
    assert sorted(tuple(r) for r in differentiate(stream, tick="tk").collect()) == [(7, t0, -3.5, 1), (7, t0, 3.5, 0)]


@settings(derandomize=True, max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 5), st.integers(-3, 3)), max_size=8))
def test_integrate_differentiate_is_identity(spark, rows):
    stream = spark.createDataFrame(rows, "item string, time int, diff int")
    blips = differentiate(stream)
    back = integrate(blips)
    assert back.columns == stream.columns
    assert _sorted_rows(back.collect()) == _sorted_rows(rows)
    # Every change becomes a blip: itself at tick 0 and its retraction at tick 1.
    halves = [tuple(r) for r in blips.collect()]
    assert _sorted_rows(h[:3] for h in halves if h[3] == 0) == _sorted_rows(rows)
    assert _sorted_rows((i, t, -d) for i, t, d, tick in halves if tick == 1) == _sorted_rows(rows)


# --- errors -------------------------------------------------------------------------------------


def test_errors_of_differentiate_and_integrate(spark):
    stream = spark.createDataFrame([("a", 1, 1)], "item string, time int, diff int")
    with pytest.raises(MissingColumnError) as info:
        differentiate(stream, time="ts")
    assert info.value.parameters["column"] == "ts"
    with pytest.raises(DiffTypeError) as info:
        differentiate(stream, diff="item")
    assert info.value.parameters == {"source": "differentiate", "column": "item", "found": "string"}
    with pytest.raises(ColumnRoleError):
        differentiate(stream, time="diff")
    with pytest.raises(AlreadyDifferentiatedError) as info:
        differentiate(differentiate(stream))
    assert info.value.parameters == {"column": "__tick"}
    with pytest.raises(NotDifferentiatedError) as info:
        integrate(stream)
    assert info.value.parameters["available"] == ["item", "time", "diff"]
    arrays = spark.createDataFrame([([1], 1)], "time array<int>, diff int")
    with pytest.raises(TimeTypeError) as info:
        differentiate(arrays)
    assert info.value.parameters["found"] == "array<int>"
    assert isinstance(info.value, (FAQError, TypeError))


def test_errors_of_asof_join(spark):
    left = spark.createDataFrame([("x", 1, 1)], "sym string, time int, v int")
    right = spark.createDataFrame([("x", 0, 2)], "sym string, time int, v int")
    with pytest.raises(MissingColumnError) as info:
        window_join(left, right, on="venue")
    assert info.value.parameters["source"] == "asof_join left"
    with pytest.raises(MissingColumnError) as info:
        window_join(left, right.withColumnRenamed("time", "ts"), on="sym")
    assert info.value.parameters["source"] == "asof_join right"
    with pytest.raises(ColumnTypeMismatchError) as info:
        window_join(left, right.withColumn("time", right["time"].cast("string")), on="sym")
    assert info.value.parameters == {"column": "time", "role": "time", "left": "int", "right": "string"}
    with pytest.raises(ColumnTypeMismatchError) as info:
        window_join(left, right.withColumn("sym", right["time"]), on="sym")
    assert info.value.parameters["role"] == "key"
    with pytest.raises(ColumnClashError) as info:
        window_join(left, right, on="sym", suffixes=("", None))
    assert info.value.parameters["column"] == "v"
    with pytest.raises(ColumnClashError):
        window_join(left, right, on="sym", right_time="sym")
    with pytest.raises(ColumnRoleError):
        window_join(left, right, on=["sym", "time"])
    with pytest.raises(InvalidJoinTypeError) as info:
        window_join(left, right, on="sym", how="right")
    assert info.value.parameters == {"how": "right", "valid": ["left", "inner"]}
    assert isinstance(info.value, ValueError)
