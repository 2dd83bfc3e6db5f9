"""Fetches to the driver (faq.insideout.fetching): within the budget, or nothing moved.

A scan of local Parquet files holding more rows than the budget is counted
(one job, no rows moved) rather than collected up to the budget to learn that
it is too large; a filtered scan that fits is still fetched.
"""

from __future__ import annotations

import pandas as pd
import pytest

from faq.relation import collect_within, file_rows

pytestmark = pytest.mark.usefixtures("spark")


@pytest.fixture
def parquet(spark, tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"k": range(1000), "x": [float(i) for i in range(1000)]}).to_parquet(path)
    return spark.read.parquet(str(path))


def test_a_scan_larger_than_the_budget_moves_no_row(parquet, monkeypatch):
    assert file_rows(parquet) == 1000
    limits = []
    original = type(parquet).limit
    monkeypatch.setattr(type(parquet), "limit", lambda self, n: limits.append(n) or original(self, n))
    assert collect_within(parquet, ["k", "x"], 100) is None
    assert limits == []  # no collect of 101 rows to learn it: the files' footers and a count said so


def test_a_filtered_scan_that_fits_is_fetched(parquet):
    small = parquet.where("k < 50")
    table = collect_within(small, ["k", "x"], 100)
    assert table is not None and sorted(table.column("k").to_pylist()) == list(range(50))
    assert collect_within(parquet, ["k"], 1000).num_rows == 1000


def test_frames_made_in_memory_have_no_file_estimate(spark):
    df = spark.createDataFrame([(1, 2.0)], "k long, x double")
    assert file_rows(df) is None
    assert collect_within(df, ["k"], 5).num_rows == 1
