"""The as-of join as Spark's window (faq.asof.spark_window) against pandas.merge_asof, and the priced choice
of where a one-shot as-of join of Spark DataFrames runs (faq.asof.costs, faq.asof.oneshot)."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

import faq
from faq.asof import costs
from faq.asof.spark_window import asof_window, unsupported
from faq.errors import InvalidArgumentError
from tests.conftest import search_settings

pytestmark = pytest.mark.usefixtures("spark")

LEFT_SCHEMA = "t long, k string, k2 int, i long"
RIGHT_SCHEMA = "k string, k2 int, t long, v double, w long, j long"


@st.composite
def cases(draw):
    """Small sides with equal right times per key (ties), nulls in right's values and left's keys, and
    every option the window form covers."""
    n = draw(st.integers(0, 12))
    left = [(draw(st.integers(0, 12)), draw(st.sampled_from(["a", "b", None])), draw(st.integers(0, 1)), i)
            for i in range(n)]
    m = draw(st.integers(0, 14))
    right = [(draw(st.sampled_from(["a", "b", "c"])), draw(st.integers(0, 1)), draw(st.integers(0, 12)),
              draw(st.one_of(st.none(), st.sampled_from([1.0, 2.0]))), draw(st.one_of(st.none(), st.integers(0, 2))),
              j) for j in range(m)]
    direction = draw(st.sampled_from(["backward", "forward", "nearest"]))
    exact = draw(st.booleans())
    return left, right, direction, exact, draw(st.sampled_from([None, 0, 2])), draw(st.sampled_from(["left", "inner"]))


def _oracle(left_rows, right_rows, direction, exact, tolerance, how) -> dict:
    """pandas.merge_asof's match per left row id (the right id, or None), right sorted by (time, value
    columns) nulls first: the window form's documented tie rule."""
    left = pd.DataFrame(left_rows, columns=["t", "k", "k2", "i"]).astype({"t": "int64", "k2": "int64"})
    right = pd.DataFrame(right_rows, columns=["k", "k2", "t", "v", "w", "j"]).astype(
        {"t": "int64", "k2": "int64", "v": "float64", "w": "float64", "j": "int64"})
    right = right.sort_values(["t", "v", "w", "j"], na_position="first", kind="stable")
    out = pd.merge_asof(left.sort_values("t", kind="stable"), right, on="t", by=["k", "k2"], direction=direction,
                        allow_exact_matches=exact, tolerance=tolerance)
    found = {int(r.i): (None if math.isnan(r.j) else int(r.j)) for r in out.itertuples()}
    if how == "inner":
        found = {i: j for i, j in found.items() if j is not None}
    return found


@search_settings(30, HealthCheck.function_scoped_fixture)
@given(cases())
def test_window_equals_pandas_merge_asof(spark, case):
    _check_against_pandas(spark, case)


@search_settings(10, HealthCheck.function_scoped_fixture)
@given(cases())
def test_right_rows_carried_flat_equal_pandas_too(spark, case):
    """Up to ``FLAT_VALUES`` value columns, right's row rides through the window as flat columns and null
    flags instead of one struct: the same rows (here with the limit raised to the cases' 3 values)."""
    from faq.asof import spark_window

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(spark_window, "FLAT_VALUES", 3)
        _check_against_pandas(spark, case)


def _check_against_pandas(spark, case) -> None:
    left_rows, right_rows, direction, exact, tolerance, how = case
    left = spark.createDataFrame(left_rows, LEFT_SCHEMA)
    right = spark.createDataFrame(right_rows, RIGHT_SCHEMA)
    joined = asof_window(left, right, "t", ["k", "k2"], direction=direction, allow_exact_matches=exact,
                         tolerance=tolerance, how=how, right_time="rt")
    assert joined.columns == ["t", "k", "k2", "i", "v", "w", "j", "rt"]
    rows = joined.collect()
    assert {r["i"]: r["j"] for r in rows} == _oracle(left_rows, right_rows, direction, exact, tolerance, how)
    by_id = {j: (t, v, w) for _, _, t, v, w, j in right_rows}
    for r in rows:  # the matched row's own values and time, nulls kept
        assert (r["rt"], r["v"], r["w"]) == (by_id[r["j"]] if r["j"] is not None else (None, None, None))


def test_null_and_nan_times_match_nothing(spark):
    left = spark.createDataFrame([(1.0, "a"), (None, "a"), (float("nan"), "a"), (5.0, None)], "t double, k string")
    right = spark.createDataFrame([(0.5, "a", 1), (float("nan"), "a", 2), (None, "a", 3)], "t double, k string, x long")
    for direction in ("backward", "forward", "nearest"):
        got = {(r["t"] if r["t"] is None or r["t"] == r["t"] else "nan", r["k"]): r["x"]
               for r in asof_window(left, right, "t", "k", direction=direction).collect()}
        assert got == {(1.0, "a"): 1 if direction != "forward" else None, (None, "a"): None, ("nan", "a"): None,
                       (5.0, None): None}


def test_timestamps_dates_and_timedelta_tolerance(spark):
    t = lambda h, m: dt.datetime(2024, 3, 1, h, m)  # noqa: E731
    left = spark.createDataFrame([("x", t(10, 0)), ("x", t(10, 9))], "k string, t timestamp")
    right = spark.createDataFrame([("x", t(9, 58), 1.0), ("x", t(10, 5), 2.0)], "k string, t timestamp, p double")
    got = asof_window(left, right, "t", "k", tolerance=dt.timedelta(minutes=3))
    assert sorted((r["t"], r["p"]) for r in got.collect()) == [(t(10, 0), 1.0), (t(10, 9), None)]
    got = asof_window(left, right, "t", "k", direction="nearest", tolerance=pd.Timedelta("4min"), right_time="at")
    assert sorted((r["t"], r["at"]) for r in got.collect()) == [(t(10, 0), t(9, 58)), (t(10, 9), t(10, 5))]
    days = spark.createDataFrame([(dt.date(2024, 3, 10),)], "t date")
    quotes = spark.createDataFrame([(dt.date(2024, 3, 8), 1), (dt.date(2024, 3, 13), 2)], "t date, q long")
    assert [r["q"] for r in asof_window(days, quotes, "t", direction="nearest").collect()] == [1]
    assert [r["q"] for r in asof_window(days, quotes, "t", tolerance=dt.timedelta(days=1)).collect()] == [None]
    with pytest.raises(InvalidArgumentError):
        asof_window(days, quotes, "t", tolerance=2)  # dates take a timedelta, as pandas'


def test_suffixes_keys_on_time_alone_and_ties_rule(spark):
    left = spark.createDataFrame([(5, 1)], "t long, v long")
    right = spark.createDataFrame([(3, 7), (3, 9), (3, 8), (6, 1)], "t long, v long")
    back = asof_window(left, right, "t", suffixes=("_l", "_r")).collect()
    assert back[0].asDict() == {"t": 5, "v_l": 1, "v_r": 9}  # ties: the one that sorts last by value
    ahead = asof_window(left.withColumn("t", left["t"] - 3), right, "t", direction="forward").collect()
    assert ahead[0]["v_y"] == 7  # forward: the one that sorts first


def test_what_the_window_form_refuses():
    from pyspark.sql.types import LongType, StringType, TimestampNTZType

    assert unsupported("nearest", False, None, LongType(), LongType()) is None
    assert unsupported("nearest", True, None, StringType(), StringType()) is not None
    assert unsupported("backward", True, 3, TimestampNTZType(), TimestampNTZType()) is not None
    assert unsupported("backward", False, None, StringType(), StringType()) is None
    assert unsupported("forward", False, 1.5, LongType(), LongType()) is None


# --- the priced choice --------------------------------------------------------------------------


def test_prices_grow_with_rows_and_the_cheapest_is_chosen():
    small, large = costs.price(1_000, 1_000, 3, 3), costs.price(2_000_000, 2_000_000, 3, 3)
    for name in ("driver", "executors", "spark-window"):
        assert large[name].seconds > small[name].seconds > 0
    chosen = costs.cheapest(large)
    assert chosen == min(large, key=lambda n: large[n].seconds)
    # Spark's window is what a user writes: at large sizes faq's choice is priced below it -- the per-partition
    # kernel, measured faster than the window at 1M and 10M rows a side (faq/asof/costs.py).
    assert large[chosen].seconds <= large["spark-window"].seconds
    assert chosen == "executors"


def test_pricing_honours_what_is_allowed():
    priced = costs.price(2_000_000, 2_000_000, 3, 3, driver="exceeds the fetch budget",
                         window="a distance in time of string times")
    assert costs.cheapest(priced) == "executors"
    assert "exceeds the fetch budget" in costs.describe(priced, "executors")
    unknown = costs.price(math.inf, math.inf, 3, 3, driver="sizes unknown")
    assert costs.cheapest(unknown) == "executors"  # per row the cheaper, when nothing is known
    assert costs.cheapest(costs.price(math.inf, math.inf, 3, 3, driver="sizes unknown",
                                      executors="refused")) == "spark-window"


def test_the_plan_shows_the_priced_alternatives(spark, tmp_path):
    rng = np.random.default_rng(3)
    left = pd.DataFrame({"time": rng.integers(0, 1000, 300), "sym": rng.choice(list("abc"), 300)})
    right = pd.DataFrame({"time": rng.permutation(1000)[:200], "sym": rng.choice(list("abc"), 200),
                          "px": rng.random(200)})
    left.to_parquet(tmp_path / "l.parquet")
    right.to_parquet(tmp_path / "r.parquet")
    ldf, rdf = (spark.read.parquet(str(tmp_path / n)) for n in ("l.parquet", "r.parquet"))
    expected = pd.merge_asof(left.sort_values("time"), right.sort_values("time"), on="time", by="sym")
    total = float(np.nansum(expected["px"]))
    for placement in (None, "driver", "executors"):
        notes = []
        got = faq.asof_join(ldf, rdf, on="time", by="sym", placement=placement, progress=notes.append)
        text = notes[0].description
        assert "spark-window: est" in text and "executors (per-partition kernel): est" in text and "chosen" in text
        if placement == "driver":
            assert text.startswith("as-of join on the driver") and "chosen driver" in text
        if placement == "executors":
            assert "chosen driver" not in text
        assert got.count() == 300
        assert abs(float(np.nansum(got.toPandas()["px"])) - total) < 1e-9


@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_every_way_gives_the_same_rows(spark, direction):
    """Right times distinct per key: the three priced ways agree (the ties rule is the only difference)."""
    from faq.asof import costs
    from faq.asof.oneshot import run_way

    rng = np.random.default_rng(11)
    left = spark.createDataFrame(pd.DataFrame({"t": rng.integers(0, 60, 50), "k": rng.choice(list("ab"), 50),
                                               "i": np.arange(50)}))
    right = spark.createDataFrame(pd.DataFrame({"t": rng.permutation(60)[:30], "k": rng.choice(list("ab"), 30),
                                                "j": np.arange(30)}))
    options = dict(on="t", by=["k"], direction=direction, allow_exact_matches=False, tolerance=5, how="left",
                   suffixes=("_x", "_y"), right_time="rt")
    got = {way: sorted(map(tuple, run_way(way, left, right, options).collect())) for way in costs.WAYS}
    assert got["spark-window"] == got["executors"] == got["driver"]


def test_small_joins_go_to_the_driver_large_ones_to_the_kernel_on_the_executors():
    """The shipped constants (faq/asof/costs.py): a job's start-up decides small joins, the rate large ones."""
    assert costs.cheapest(costs.price(10_000, 10_000, 3, 3)) == "driver"
    assert costs.cheapest(costs.price(1_000_000, 1_000_000, 3, 3)) == "executors"
    assert costs.cheapest(costs.price(1_000_000, 1_000_000, 3, 3, executors="refused")) == "spark-window"
    assert costs.cheapest(costs.price(1_000_000, 1_000_000, 3, 3, window="refused")) == "executors"


def test_options_the_window_does_not_do_run_the_kernel(spark):
    t = lambda m: dt.datetime(2024, 3, 1, 10, m)  # noqa: E731
    left = spark.createDataFrame([("x", t(5)), ("x", t(30))], "k string, t timestamp_ntz")
    right = spark.createDataFrame([("x", t(3), 1.0)], "k string, t timestamp_ntz, p double")
    notes = []
    got = faq.asof_join(left, right, on="t", by="k", tolerance=dt.timedelta(minutes=5), placement="executors",
                        progress=notes.append)
    assert sorted((r["t"], r["p"]) for r in got.collect()) == [(t(5), 1.0), (t(30), None)]
    text = notes[0].description
    assert "spark-window: not run (a distance in time of timestamp_ntz times)" in text
    assert text.endswith("chosen executors") and "driver: not run (placement=executors)" in text
