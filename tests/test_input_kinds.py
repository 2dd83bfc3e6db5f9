"""Input kinds told apart once (faq.input_kinds): a table that only exports an Arrow stream -- as a polars
DataFrame or a DuckDB relation does -- is taken by every job that takes an Arrow table, with the same answer,
checked against independent oracles (networkx, pandas.merge_asof, numpy's least squares)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import faq
from faq.errors import FAQTypeError
from faq.input_kinds import ARROW, PANDAS, PATH, ROWS, SPARK, arrow_table, held_table, input_kind

DATA = "tests/data/email-Eu-core.txt.gz"


class Exported:
    """A table known to faq only by the Arrow C stream protocol (no pyarrow or pandas type): what a polars
    DataFrame, a DuckDB relation or a nanoarrow stream is to faq.  ``reads`` counts the streams taken."""

    def __init__(self, table: pa.Table):
        self._table, self.reads = table, 0

    def __arrow_c_stream__(self, requested_schema=None):
        self.reads += 1
        return self._table.__arrow_c_stream__(requested_schema)


def _edges() -> pa.Table:
    src, dst = np.loadtxt(DATA, dtype=np.int64, unpack=True)
    return pa.table({"src": src, "dst": dst})


def test_each_kind_is_told_apart_and_the_native_kinds_win_over_their_own_arrow_streams(spark):
    table = pa.table({"src": [1], "dst": [2]})
    frame = table.to_pandas()
    assert hasattr(frame, "__arrow_c_stream__")  # pandas >= 2.2 exports a stream, and stays pandas
    df = spark.createDataFrame(frame)
    assert [input_kind(v) for v in (df, frame, table, Exported(table), "x.txt", [(1, 2)], 7)] == \
        [SPARK, PANDAS, ARROW, ARROW, PATH, ROWS, "other"]
    assert held_table(df) is None and held_table(frame) is frame and held_table(table) is table


def test_a_stream_is_read_once_and_an_array_stream_is_refused_by_name():
    exported = Exported(pa.table({"a": [1, 2]}))
    assert arrow_table(exported).column("a").to_pylist() == [1, 2] and exported.reads == 1
    with pytest.raises(FAQTypeError, match=r"\[INPUT_TYPE\] edges must be a table of named columns.*got ChunkedArray"):
        faq.count_triangles(pa.chunked_array([[1, 2]]))


def test_graph_jobs_take_an_exported_table_with_the_oracles_answers():
    edges = _edges()
    graph = nx.Graph((u, v) for u, v in zip(*(edges.column(c).to_pylist() for c in ("src", "dst"))) if u != v)
    expected = sum(nx.triangles(graph).values()) // 3
    assert faq.count_triangles(Exported(edges)).count == expected == faq.count_triangles(DATA).count
    reader = pa.RecordBatchReader.from_batches(edges.schema, edges.to_batches(max_chunksize=5000))
    assert faq.count_triangles(reader).count == expected  # pyarrow's own one-shot stream
    truss = faq.truss(Exported(edges))
    assert truss.counts == faq.truss(edges).counts
    assert max(nx.core_number(nx.Graph(graph)).values()) + 1 >= truss.max_k  # a k-truss is a (k-1)-core


def test_shortest_paths_from_an_exported_weighted_table_equal_networkx(spark):
    table = pa.table({"src": [1, 1, 2, 3, 4], "dst": [2, 3, 3, 4, 1], "weight": [4.0, 1.0, 1.0, 2.0, 1.0]})
    graph = nx.DiGraph()
    graph.add_weighted_edges_from(zip(*(table.column(c).to_pylist() for c in ("src", "dst", "weight"))))
    with faq.shortest_paths(Exported(table), source=1) as result:
        assert {r[0]: r[1] for r in result.factor.df.collect()} == nx.single_source_dijkstra_path_length(graph, 1)


def test_a_query_factor_and_a_maintained_batch_take_exported_tables(spark):
    rows = pa.table({"a": [1, 2, 2, 3], "b": [2, 3, 4, 4], "value": [1.0, 2.0, 3.0, 4.0]})
    with faq.query("q(a) := e(a,b), e(b,c)", e=Exported(rows)) as result:
        got = {r[0]: r[1] for r in result.df.collect()}
    frame = rows.to_pandas()
    joined = frame.merge(frame, left_on="b", right_on="a", suffixes=("", "_2"))
    expected = (joined["value"] * joined["value_2"]).groupby(joined["a"]).sum().to_dict()
    assert got == pytest.approx(expected)
    def two_paths(pairs):  # brute force over every pair of edges
        return sum(1 for (_, b) in pairs for (c, _) in pairs if b == c)

    pairs = list(zip(rows.column("a").to_pylist(), rows.column("b").to_pylist()))
    with faq.maintain("count() := e(a,b), e(b,c)", e=Exported(rows.select(["a", "b"]))) as kept:
        before = kept.scalar()
        kept.apply(e=Exported(pa.table({"a": [4], "b": [1], "value": [1]})))
        assert (before, kept.scalar()) == (two_paths(pairs), two_paths(pairs + [(4, 1)])) == (3, 6)


def test_the_asof_join_and_a_regression_take_exported_tables():
    left = pa.table({"time": [1, 5, 9], "sym": ["a", "b", "a"]})
    right = pa.table({"time": [0, 4, 8], "sym": ["a", "b", "a"], "px": [10.0, 20.0, 30.0]})
    joined = faq.asof_join(Exported(left), Exported(right), on="time", by="sym")
    assert isinstance(joined, pa.Table)
    expected = pd.merge_asof(left.to_pandas(), right.to_pandas(), on="time", by="sym")
    assert joined.column("px").to_pylist() == expected["px"].tolist()

    rng = np.random.default_rng(7)
    orders = pa.table({"o": np.arange(50), "x": rng.normal(size=50)})
    lines = pa.table({"o": rng.integers(0, 50, 400), "y": rng.normal(size=400)})
    model = faq.linear_regression("l(o), r(o)", "l.y", ["r.x"], l=Exported(lines), r=Exported(orders))
    flat = lines.to_pandas().merge(orders.to_pandas(), on="o")
    design = np.column_stack([np.ones(len(flat)), flat["x"]])
    coefficients = np.linalg.lstsq(design, flat["y"], rcond=None)[0]
    assert np.allclose([model.intercept_, *model.coef_], coefficients)
    probe = pa.table({"x": [0.0, 1.0], "y": [1.0, 2.0]})
    assert np.allclose(model.predict(Exported(probe)), coefficients[0] + coefficients[1] * np.array([0.0, 1.0]))
    once = pa.RecordBatchReader.from_batches(probe.schema, probe.to_batches())  # read once, used twice inside
    assert model.score(once, "y") == pytest.approx(model.score(probe.to_pandas(), "y"))
