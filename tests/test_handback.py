"""faq.handback: a table handed to Spark through a local Parquet file reads back as createDataFrame makes it."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from faq.handback import file_backed, parquet_readable, spark_frame

pytestmark = pytest.mark.usefixtures("spark")

ROWS = 50


def _columns() -> dict[str, pa.Array]:
    """One column of every type the file carries, each with a null."""
    n = ROWS
    ints = [None if i == 3 else i - 20 for i in range(n)]
    return {
        "i8": pa.array(ints, pa.int8()), "i16": pa.array(ints, pa.int16()), "i32": pa.array(ints, pa.int32()),
        "i64": pa.array([None if i == 4 else (i - 25) * 10**15 for i in range(n)], pa.int64()),
        "f32": pa.array([None if i == 5 else i / 4 for i in range(n)], pa.float32()),
        "f64": pa.array([None if i == 6 else (i - 7) / 3 for i in range(n)], pa.float64()),
        "flag": pa.array([None if i == 7 else i % 3 == 0 for i in range(n)]),
        "name": pa.array([None if i == 8 else f"n{i}é" for i in range(n)]),
        "day": pa.array([None if i == 9 else dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)]),
        "at": pa.array([None if i == 10 else dt.datetime(2021, 3, 4, 5, 6, 7, i, tzinfo=dt.timezone.utc)
                        for i in range(n)], pa.timestamp("us", tz="UTC")),
    }


def _rows(df) -> list:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def test_every_plain_type_reads_back_as_created(spark):
    table = pa.table(_columns())
    handed = spark_frame(spark, table, min_cells=0)
    created = spark.createDataFrame(table)
    assert file_backed(handed) and not file_backed(created)
    assert handed.dtypes == created.dtypes
    assert _rows(handed) == _rows(created)


def test_a_given_schema_matching_the_table_reads_from_the_file(spark):
    table = pa.table({"k": pa.array(range(ROWS)), "v": pa.array([i / 2 for i in range(ROWS)])})
    df = spark_frame(spark, table, "k bigint, v double", min_cells=0)
    assert file_backed(df) and df.dtypes == [("k", "bigint"), ("v", "double")]
    assert sorted(map(tuple, df.collect())) == [(i, i / 2) for i in range(ROWS)]


@pytest.mark.parametrize("table, schema", [
    (pa.table({"a b": pa.array(range(ROWS))}), None),  # a name Parquet once refused
    (pa.table({"t": pa.array([dt.datetime(2020, 1, 1)] * ROWS, pa.timestamp("us"))}), None),  # naive
    (pa.table({"t": pa.array([dt.datetime(2020, 1, 1)] * ROWS, pa.timestamp("ns", tz="UTC"))}), None),
    (pa.table({"k": pa.array(range(ROWS))}), "k double"),  # the caller's type differs: converted
    (pa.table({"v": pa.array([[1.0, 2.0]] * ROWS)}), None),  # an array ring's values
])
def test_anything_else_is_created_as_before(spark, table, schema):
    df = spark_frame(spark, table, schema, min_cells=0)
    expected = spark.createDataFrame(table) if schema is None else spark.createDataFrame(table.to_pandas(), schema)
    assert not file_backed(df)
    assert df.dtypes == expected.dtypes and _rows(df) == _rows(expected)


def test_empty_and_small_tables_stay_local_relations(spark):
    empty = pa.table({"k": pa.array([], pa.int64())})
    assert spark_frame(spark, empty, "k bigint").count() == 0
    assert not file_backed(spark_frame(spark, pa.table({"k": pa.array(range(ROWS))})))  # under MIN_CELLS


def test_readable_types_are_what_the_file_carries():
    assert parquet_readable(pa.table(_columns()))
    assert not parquet_readable(pa.table({"h": pa.array([1.0], pa.float16())}))


def test_a_large_held_relation_becomes_a_file_backed_frame_and_a_small_one_a_local_relation(spark):
    import numpy as np

    from faq.relation import Relation

    big = Relation.from_arrays({"k": np.arange(60_000), "v": np.arange(60_000) / 4}, session=spark)
    small = Relation.from_arrays({"k": np.arange(5), "v": np.arange(5) / 4}, session=spark)
    assert file_backed(big.frame) and not file_backed(small.frame)
    assert big.frame.dtypes == small.frame.dtypes == [("k", "bigint"), ("v", "double")]
    assert big.frame.agg({"v": "sum"}).first()[0] == np.arange(60_000).sum() / 4
    assert sorted(map(tuple, small.frame.collect())) == [(i, i / 4) for i in range(5)]


def _scans_an_rdd(df) -> bool:
    """True when ``df``'s plan reads an RDD of Python rows (every read then runs Python worker tasks)."""
    return "ExistingRDD" in df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("schema", ["k bigint, value double", "k string, value array<double>",
                                    "k bigint, value struct<x:double,n:bigint>", "k timestamp, value boolean"])
def test_no_rows_of_any_type_are_a_local_relation(spark, schema):
    from faq.handback import empty_frame

    df = empty_frame(spark, ["k", "value"], schema)
    assert df.schema == spark.createDataFrame([], schema).schema  # the types and nullability Spark's own way gives
    assert df.collect() == [] and not _scans_an_rdd(df)


def test_small_answers_handed_to_spark_never_scan_python_rows(spark):
    """The frames a user reads from small held answers: an empty query answer, a batch's change (rows and
    none), a count, rows given as tuples with a schema: local relations, the rows as they should be."""
    import pandas as pd

    import faq
    from faq.handback import local_frame

    with faq.query("q(a) := r(a,b), s(b)", r=pd.DataFrame({"a": [1], "b": [2]}), s=pd.DataFrame({"b": [3]})) as answer:
        assert answer.df.collect() == [] and not _scans_an_rdd(answer.df)
    paths = faq.maintain("q(a) := e(a,b), e(b,c)", e=[(1, 2), (2, 3), (3, 4)])
    changed, unchanged = paths.apply(e=[(1, 3, 1)]).df, paths.apply(e=[(7, 8, 1), (7, 8, -1)]).df
    paths.close()
    assert [tuple(r)[:2] for r in changed.collect()] == [(1, 1)] and unchanged.collect() == []
    with faq.count_triangles([(1, 2), (2, 3), (1, 3)]) as count:
        assert count.df.collect()[0]["count"] == 1
    given = local_frame(spark, [(1, (0.5, 2.0))], ["k", "value"], "k bigint, value array<double>")
    assert given.collect()[0]["value"] == [0.5, 2.0]
    assert not any(map(_scans_an_rdd, [changed, unchanged, count.df, given]))
