"""Truss decomposition against networkx.k_truss: random graphs for every k (hypothesis), a SNAP graph from
tests/data, and every input kind (tuples, pandas, a path; Spark DataFrames with the spark fixture)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq
from faq.errors import InvalidArgumentError
from faq.graphs.truss import truss_decomposition

DATA = Path(__file__).parent / "data"


def edge_set(table) -> set:
    return set(zip(table.column("src").to_pylist(), table.column("dst").to_pylist()))


def networkx_truss(edges, k) -> set:
    graph = nx.Graph()
    graph.add_edges_from((u, v) for u, v in edges if u != v)
    return {(min(u, v), max(u, v)) for u, v in nx.k_truss(graph, k).edges()}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=45))
def test_every_k_truss_equals_networkx(edges):
    result = truss_decomposition(edges)
    for k in range(2, result.max_k + 2):
        assert edge_set(result.table(k)) == networkx_truss(edges, k), k


def test_a_snap_graph_equals_networkx():
    path = DATA / "email-Eu-core.txt.gz"
    result = truss_decomposition(str(path))
    raw = pd.read_csv(path, sep=r"\s+", comment="#", header=None).to_numpy()
    edges = [(int(u), int(v)) for u, v in raw]
    assert result.table().num_rows == len({(min(u, v), max(u, v)) for u, v in edges if u != v})
    for k in (result.max_k, (result.max_k + 2) // 2, 4):
        assert edge_set(result.table(k)) == networkx_truss(edges, k), k
    assert sum(result.counts.values()) == result.table().num_rows


def test_input_kinds_agree(tmp_path):
    edges = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 1), (4, 5)]
    (tmp_path / "g.txt").write_text("# a comment\n" + "".join(f"{u}\t{v}\n" for u, v in edges))
    frame = pd.DataFrame(edges, columns=["src", "dst"])
    tables = [truss_decomposition(x).table() for x in (edges, frame, str(tmp_path / "g.txt"))]
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])
    assert faq.truss(edges, k=3).table().num_rows == 5
    with pytest.raises(InvalidArgumentError, match="k >= 2"):
        truss_decomposition(edges, k=1)


def test_a_spark_dataframe(spark):
    df = spark.createDataFrame([(1, 2), (2, 3), (3, 1), (3, 4)], "src long, dst long")
    result = faq.truss(df)
    assert result.counts == {2: 1, 3: 3}
    assert sorted(map(tuple, result.df.collect())) == [(1, 2, 3), (1, 3, 3), (2, 3, 3), (3, 4, 2)]


def test_the_command_line(tmp_path):
    import json
    import subprocess
    import sys

    out = tmp_path / "t4.parquet"
    done = subprocess.run([sys.executable, "-m", "faq", "truss", str(DATA / "email-Eu-core.txt.gz"), "--k", "4",
                           "--out", str(out), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    expected = truss_decomposition(str(DATA / "email-Eu-core.txt.gz"))
    assert summary["max_k"] == expected.max_k and summary["truss_edges"] == expected.table(4).num_rows
    assert pd.read_parquet(out)["trussness"].min() >= 4
    bad = subprocess.run([sys.executable, "-m", "faq", "truss", str(DATA / "email-Eu-core.txt.gz"), "--k", "1"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "k >= 2" in bad.stderr
