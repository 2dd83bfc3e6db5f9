"""Truss decomposition on the executors (faq.graphs.truss_spark) against the driver's decomposition and
networkx.k_truss: a SNAP graph from tests/data, corner cases, random graphs (hypothesis); the placement
faq.truss chooses for a Spark DataFrame, and the result's kind (a Spark DataFrame for a Spark input)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from pyspark.sql import DataFrame as SparkDataFrame

import faq
from faq.errors import InvalidArgumentError, NullKeyError
from faq.graphs.truss import TrussResult, truss_decomposition
from faq.graphs.truss_spark import SparkTrussResult, spark_truss
from faq.io.local_edges import read_edge_arrays
from tests.conftest import search_settings

DATA = Path(__file__).parent / "data"
SCHEMA = "src long, dst long"
FETCH = "spark.faq.fetchMemory"


def rows(result) -> list:
    """A result's (src, dst, trussness) rows, sorted, whatever its kind."""
    table = result.table() if isinstance(result, SparkTrussResult) else result.arrow()
    if isinstance(table, SparkDataFrame):
        return sorted(map(tuple, table.collect()))
    return sorted(zip(*(table.column(c).to_pylist() for c in ("src", "dst", "trussness"))))


def driver_rows(edges) -> list:
    return rows(truss_decomposition(list(edges)))


def networkx_truss(edges, k) -> set:
    graph = nx.Graph()
    graph.add_edges_from((u, v) for u, v in edges if u != v)
    return {(min(u, v), max(u, v)) for u, v in nx.k_truss(graph, k).edges()}


def assert_matches_networkx(got: list, edges, ks) -> None:
    for k in ks:
        assert {(u, v) for u, v, t in got if t >= k} == networkx_truss(edges, k), k


@contextlib.contextmanager
def fetch_budget(spark, value: str):
    """``spark.faq.fetchMemory`` set for the block, restored after."""
    before = spark.conf.get(FETCH, None)
    spark.conf.set(FETCH, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(FETCH)
        else:
            spark.conf.set(FETCH, before)


def test_a_snap_graph_equals_the_driver_and_networkx(spark):
    src, dst = read_edge_arrays(str(DATA / "ca-GrQc.txt"))
    edges = list(zip(src[:3000].tolist(), dst[:3000].tolist()))
    with faq.truss(spark.createDataFrame(pd.DataFrame(edges, columns=["src", "dst"])), placement="executors") as t:
        assert isinstance(t, SparkTrussResult)
        got = rows(t)
        assert got == driver_rows(edges)
        assert_matches_networkx(got, edges, {3, (t.max_k + 3) // 2, t.max_k, t.max_k + 1})
        assert sum(t.counts.values()) == len(got) and t.max_k == max(r[2] for r in got)
        assert "placement: executors (requested (placement='executors'))" in str(t.explain())


def test_corner_cases(spark):
    # repeats, both directions and self-loops; two triangles and a tail (ids 11-15); negative and large ids
    together = [(1, 2), (2, 1), (1, 2), (2, 3), (3, 1), (3, 3), (1, 3), (4, 4),
                (11, 12), (12, 13), (11, 13), (13, 14), (11, 14), (14, 15), (-5, 2**40), (2**40, 7), (7, -5)]
    cases = {"no triangle": [(1, 2), (2, 3), (3, 4), (4, 1)], "several at once": together, "empty": []}
    for name, edges in cases.items():
        with spark_truss(spark.createDataFrame(edges, SCHEMA)) as t:
            got = rows(t)
            assert got == driver_rows(edges), name
            assert_matches_networkx(got, edges, range(2, t.max_k + 2))
            assert t.max_k == max((r[2] for r in got), default=0) and t.counts == truss_decomposition(edges).counts
    assert driver_rows([(3, 3)]) == []


@search_settings(25, HealthCheck.function_scoped_fixture)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30))
def test_random_graphs_equal_the_driver_and_networkx(spark, edges):
    with spark_truss(spark.createDataFrame(edges, SCHEMA)) as t:
        got = rows(t)
    assert got == driver_rows(edges)
    assert_matches_networkx(got, edges, range(3, max((r[2] for r in got), default=2) + 2))


def test_the_result_follows_the_input_kind(spark):
    edges = [(1, 2), (2, 3), (3, 1), (3, 4)]
    df = spark.createDataFrame(edges, SCHEMA)
    on_driver = faq.truss(df, k=3)
    assert isinstance(on_driver, TrussResult) and isinstance(on_driver.table(), SparkDataFrame)
    assert sorted(map(tuple, on_driver.table().collect())) == [(1, 2, 3), (1, 3, 3), (2, 3, 3)]
    assert on_driver.table(2).count() == 4 and on_driver.arrow().num_rows == 3 and len(on_driver.to_pandas(2)) == 4
    assert "placement: driver (4 edge rows fetched within the fetch budget" in str(on_driver.explain())
    assert faq.truss(edges).table().num_rows == 4  # tuples: Arrow, as before
    with faq.truss(df, k=3, placement="executors") as executors:
        assert isinstance(executors.table(), SparkDataFrame) and executors.table().count() == 3
        assert executors.table(2).count() == 4 and executors.df.count() == 3
        assert sorted(executors.to_pandas()["trussness"]) == [3, 3, 3]
        assert executors.counts == {2: 1, 3: 3} and executors.max_k == 3
        assert "max_k=3" in repr(executors)


def test_auto_runs_on_the_executors_when_the_edges_exceed_the_fetch_budget(spark, tmp_path):
    edges = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 1)]
    spark.createDataFrame(edges, SCHEMA).write.parquet(str(tmp_path / "g.parquet"))
    df = spark.read.parquet(str(tmp_path / "g.parquet"))
    with fetch_budget(spark, "32"):  # two edges' ids
        with faq.truss(df) as t:
            assert isinstance(t, SparkTrussResult) and t.counts == {3: 5}
            assert "the edges, 5 rows (parquet footers), exceed the fetch budget 32 B" in str(t.explain())
        with faq.truss(spark.createDataFrame(edges, SCHEMA)) as t:  # size unknown: learnt by the fetch
            assert isinstance(t, SparkTrussResult)
            assert "more than 2 rows (the fetch stopped there), exceed the fetch budget" in str(t.explain())
        with pytest.raises(InvalidArgumentError, match="fit the fetch budget"):  # the driver asked for: as before
            faq.truss(df, placement="driver")
    fits = faq.truss(df)
    assert isinstance(fits, TrussResult) and rows(fits) == driver_rows(edges)
    forced = faq.truss(df, placement="driver")
    assert isinstance(forced, TrussResult) and "requested (placement='driver')" in str(forced.explain())


def test_other_inputs_run_on_the_driver_and_bad_ones_are_refused(spark):
    edges = [(1, 2), (2, 3), (3, 1)]
    local = faq.truss(edges, placement="executors")
    assert isinstance(local, TrussResult)
    assert "the edges are a list, not a Spark DataFrame (executors asked for)" in str(local.explain())
    with pytest.raises(NullKeyError, match="null"):
        spark_truss(spark.createDataFrame([(1, None), (2, 3)], SCHEMA))
    with pytest.raises(InvalidArgumentError, match="integers"):
        spark_truss(spark.createDataFrame([("a", "b")], "src string, dst string"))
    with pytest.raises(InvalidArgumentError, match="k >= 2"):
        faq.truss(spark.createDataFrame(edges, SCHEMA), k=1, placement="executors")
    with pytest.raises(InvalidArgumentError, match="maintained truss runs on the driver"):
        faq.truss(edges, maintained=True, placement="executors")
