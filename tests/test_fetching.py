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


# --- a bare scan of local Parquet files is read by pyarrow (faq.parquet_scan), anything else by Spark ---

def _no_spark_collect(monkeypatch, frame_type):
    """Make any collect through Spark fail, so a fetch that succeeds read the files itself."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("collected through Spark")
    monkeypatch.setattr(frame_type, "toArrow", refuse)


def test_a_bare_scan_is_read_by_pyarrow_exactly_as_spark_reads_it(spark, tmp_path, monkeypatch):
    from faq.parquet_scan import read_scan

    path = str(tmp_path / "parts")
    spark.createDataFrame([(i, i * 0.5, f"v{i}", i % 2 == 0) for i in range(500)],
                          "k long, x double, s string, b boolean").repartition(3).write.parquet(path)
    df = spark.read.parquet(path)
    expected = df.select("x", "k", "s", "b").toArrow()
    _no_spark_collect(monkeypatch, type(df))
    table = collect_within(df, ["x", "k", "s", "b"], 500)  # columns in another order than the files'
    assert table.column_names == ["x", "k", "s", "b"]
    key = lambda t: sorted(zip(*(t.column(c).to_pylist() for c in t.column_names)))  # noqa: E731
    assert key(table) == key(expected)
    assert read_scan(df, ["k"], 499) is None  # more rows than the limit: not read


@pytest.mark.parametrize("change", ["filter", "alias", "limit", "timestamp", "cast"])
def test_anything_but_a_bare_scan_of_plain_columns_is_left_to_spark(spark, tmp_path, change):
    from faq.parquet_scan import read_scan

    path = str(tmp_path / "t.parquet")
    spark.createDataFrame(pd.DataFrame({"k": range(20), "t": pd.date_range("2026-01-01", periods=20, freq="h")}),
                          "k long, t timestamp").coalesce(1).write.parquet(path)
    df = spark.read.parquet(path)
    changed = {"filter": lambda: df.where("k > 3"), "alias": lambda: df.selectExpr("k * 2 AS k"),
               "limit": lambda: df.limit(5), "timestamp": lambda: df, "cast": lambda: df.selectExpr("CAST(k AS INT) AS k")}
    columns = ["t"] if change == "timestamp" else ["k"]
    assert read_scan(changed[change](), columns, 100) is None
    fetched = collect_within(changed[change](), columns, 100)  # still fetched, through Spark
    assert fetched.num_rows == {"filter": 16, "limit": 5}.get(change, 20)


def test_a_partitioned_directory_is_left_to_spark(spark, tmp_path):
    from faq.parquet_scan import read_scan

    path = str(tmp_path / "by_part")
    spark.createDataFrame([(i, i % 3) for i in range(30)], "k long, p int").write.partitionBy("p").parquet(path)
    df = spark.read.parquet(path)
    assert read_scan(df, ["k", "p"], 100) is None  # p lives in the directory names, not the files
    assert sorted(collect_within(df, ["k", "p"], 100).column("k").to_pylist()) == list(range(30))


@pytest.mark.parametrize("semiring", ["counting", "real", "boolean", "tropical"])
def test_a_factor_without_values_over_a_scan_is_read_by_pyarrow_its_constant_made_here(spark, tmp_path, monkeypatch,
                                                                                     semiring):
    """A factor made from keys alone adds ``one`` as a constant column (``1 AS value``): still a bare scan."""
    import faq
    from faq.inputs import as_factor

    path = str(tmp_path / "e.parquet")
    edges = [(i, (i * 7) % 40) for i in range(40)]
    spark.createDataFrame(edges, "src long, dst long").coalesce(1).write.parquet(path)
    factor = as_factor(spark.read.parquet(path), "e", semiring)
    expected = factor.df.toArrow()
    _no_spark_collect(monkeypatch, type(factor.df))
    table = collect_within(factor.df, factor.columns(), 100)
    assert table is not None
    assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in expected.schema]
    assert sorted(zip(*table.to_pydict().values())) == sorted(zip(*expected.to_pydict().values()))
    if semiring == "counting":  # and a query over it answers exactly, no collect through Spark
        assert faq.query("count() := e(a,b), e(b,c)", e=factor).scalar() == sum(
            1 for a, b in edges for b2, c in edges if b == b2)


def test_a_constant_of_another_type_than_numbers_is_left_to_spark(spark, tmp_path):
    from pyspark.sql import functions as F

    from faq.parquet_scan import bare_scan

    path = str(tmp_path / "k.parquet")
    spark.createDataFrame([(1,), (2,)], "k long").write.parquet(path)
    df = spark.read.parquet(path)
    assert bare_scan(df.select("k", F.lit(1).alias("one")), ["k", "one"])
    assert not bare_scan(df.select("k", F.lit("1").alias("s")), ["k", "s"])  # a string '1' prints as 1
    assert not bare_scan(df.select("k", (F.col("k") + 1).alias("j")), ["k", "j"])
