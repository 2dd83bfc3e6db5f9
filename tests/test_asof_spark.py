"""The as-of join of Spark DataFrames: per key partition on the executors and fetched to the driver, both
equal to the in-process join (hypothesis, every direction) and to pandas.merge_asof."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq
from faq.asof.kernel import DIRECTIONS
from faq.asof.on_spark import asof_on_spark
from faq.asof.tables import asof_tables

pytestmark = pytest.mark.usefixtures("spark")


@st.composite
def sides(draw):
    """Right times distinct per key (Spark has no row order to break ties by); left times anything."""
    n = draw(st.integers(0, 20))
    left = pd.DataFrame({"t": draw(st.lists(st.integers(0, 15), min_size=n, max_size=n)),
                         "k": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)),
                         "i": range(n)})
    pairs = draw(st.sets(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 15)), max_size=20))
    right = pd.DataFrame({"k": [k for k, _ in pairs], "t": [t for _, t in pairs], "j": range(len(pairs))})
    return left, right, draw(st.sampled_from(DIRECTIONS)), draw(st.booleans()), \
        draw(st.sampled_from([None, 3])), draw(st.sampled_from(["left", "inner"]))


def _pairs(rows) -> dict:
    return {int(r["i"]): (None if r["j"] is None or r["j"] != r["j"] else int(r["j"])) for r in rows}


@settings(max_examples=25, deadline=None)
@given(sides())
def test_per_partition_equals_in_process(spark, case):
    left, right, direction, exact, tolerance, how = case
    options = dict(direction=direction, allow_exact_matches=exact, tolerance=tolerance, how=how)
    left_schema = pa.schema([("t", pa.int64()), ("k", pa.string()), ("i", pa.int64())])
    right_schema = pa.schema([("k", pa.string()), ("t", pa.int64()), ("j", pa.int64())])
    expected = asof_tables(pa.Table.from_pandas(left, schema=left_schema, preserve_index=False),
                           pa.Table.from_pandas(right, schema=right_schema, preserve_index=False),
                           on="t", by="k", **options)
    ldf = spark.createDataFrame(left, "t long, k string, i long")
    rdf = spark.createDataFrame(right, "k string, t long, j long")
    got = asof_on_spark(ldf, rdf, "t", ["k"], partitions=3, **options).collect()
    assert _pairs(r.asDict() for r in got) == _pairs(expected.to_pylist())


@pytest.mark.parametrize("placement", ["driver", "executors"])
def test_asof_join_of_spark_dataframes_equals_pandas(spark, tmp_path, placement):
    rng = np.random.default_rng(7)
    left = pd.DataFrame({"time": rng.integers(0, 1000, 400), "sym": rng.choice(list("abcde"), 400),
                         "qty": rng.integers(1, 9, 400)})
    right = pd.DataFrame({"time": rng.permutation(1000)[:300], "sym": rng.choice(list("abcde"), 300),
                          "px": rng.random(300)})
    left.to_parquet(tmp_path / "l.parquet")
    right.to_parquet(tmp_path / "r.parquet")
    notes = []
    got = faq.asof_join(spark.read.parquet(str(tmp_path / "l.parquet")), spark.read.parquet(str(tmp_path / "r.parquet")),
                        on="time", by="sym", direction="nearest", placement=placement, progress=notes.append)
    assert notes[0].kind == "note" and notes[0].description.startswith(f"as-of join on the {placement}")
    expected = pd.merge_asof(left.sort_values("time", kind="stable"), right.sort_values("time", kind="stable"),
                             on="time", by="sym", direction="nearest")
    key = ["time", "sym", "qty"]
    got = got.toPandas().sort_values(key + ["px"]).reset_index(drop=True)
    expected = expected.sort_values(key + ["px"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got[key + ["px"]], expected[key + ["px"]], check_dtype=False)


def test_per_partition_keys_of_two_types_and_timestamps_meet_as_in_process(spark):
    """The flat union spreads each row by its own side's key: an int key on the left and a bigint on the right
    (two keys, one null) still meet in one partition; timestamp times and a string value cross as they are."""
    import datetime as dt

    t = lambda m: dt.datetime(2024, 3, 1, 10, m)  # noqa: E731
    left = pd.DataFrame({"at": [t(m) for m in (1, 5, 9, 12, 3)], "k": [1, 1, 2, None, 2], "c": ["x", "y", "x", "y", "z"],
                         "i": range(5)})
    right = pd.DataFrame({"c": ["x", "y", "x", "y"], "at": [t(m) for m in (0, 4, 8, 2)], "k": [1, 1, 2, 2],
                          "label": ["p", None, "r", "s"], "j": range(4)})
    ldf = spark.createDataFrame(left, "at timestamp, k int, c string, i long")
    rdf = spark.createDataFrame(right, "c string, at timestamp, k bigint, label string, j long")
    got = asof_on_spark(ldf, rdf, "at", ["k", "c"], partitions=3, right_time="matched_at").collect()
    expected = asof_tables(pa.Table.from_pandas(left.astype({"k": "Int64"}), preserve_index=False),
                           pa.Table.from_pandas(right, preserve_index=False), on="at", by=["k", "c"],
                           right_time="matched_at")
    assert _pairs(r.asDict() for r in got) == _pairs(expected.to_pylist()) == {0: 0, 1: 1, 2: 2, 3: None, 4: None}
    labels = {r["i"]: (r["label"], r["matched_at"]) for r in got}
    assert labels[0] == ("p", t(0)) and labels[1] == (None, t(4)) and labels[2] == ("r", t(8))


def test_a_small_pair_of_spark_frames_is_joined_on_the_driver(spark):
    trades = spark.createDataFrame([(1, "a", 5), (4, "a", 7)], "time long, sym string, qty long")
    quotes = pd.DataFrame({"time": [0, 3], "sym": ["a", "a"], "px": [1.0, 2.0]})  # a pandas side beside Spark
    notes = []
    got = faq.asof_join(trades, quotes, on="time", by="sym", progress=notes.append)
    assert "on the driver" in notes[0].description and sorted(map(tuple, got.collect())) == [(1, "a", 5, 1.0), (4, "a", 7, 2.0)]


def test_differentiate_in_process_equals_spark(spark):
    from faq.incremental.calculus import differentiate

    stream = pd.DataFrame({"item": ["a", "b", "a"], "time": [1, 3, 2], "diff": [1, 2, -1]})
    in_process = differentiate(stream)
    on_spark = differentiate(spark.createDataFrame(stream)).toPandas()
    key = ["item", "time", "__tick"]
    pd.testing.assert_frame_equal(in_process.sort_values(key).reset_index(drop=True),
                                  on_spark.sort_values(key).reset_index(drop=True), check_dtype=False)
