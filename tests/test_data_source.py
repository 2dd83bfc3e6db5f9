"""The ``faq`` Spark data source (faq/io/data_source.py): ``spark.read.format("faq").load(STATE)``.

Each read is compared exactly with the answer of the object reopened by its own ``open`` (and, for
the triangle count, with the count networkx gives).  One Spark Connect client runs in a subprocess
(a Python process holds either a classic or a Connect session; this one holds the suite's classic).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

import faq
from faq.asof.oneshot import open_join
from faq.errors import InvalidArgumentError, StateDirectoryError
from faq.graphs.maintained_truss import MaintainedTruss
from faq.graphs import MotifTracker
from faq.incremental import MaintainedQuery

ROOT = Path(__file__).resolve().parent.parent
TRIANGLES = "count() := edge(a,b), edge(b,c), edge(a,c)"
EDGES = [(1, 2), (2, 3), (1, 3), (3, 4), (2, 4), (4, 5), (1, 5)]


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def arrow_rows(table) -> list[tuple]:
    return sorted(zip(*table.to_pydict().values()))


@pytest.fixture(scope="module")
def source(spark):
    faq.register_data_source(spark)
    faq.register_data_source(spark)  # idempotent
    return spark


@pytest.fixture()
def triangles(tmp_path):
    """A maintained triangle count at version 2, on disk."""
    t = faq.maintain(TRIANGLES, edge=EDGES, state=str(tmp_path / "triangles"))
    t.apply(edge=[(1, 4, 1)], version=1)
    t.apply(edge=[(3, 5, 1), (2, 3, -1)], version=2)
    yield t
    t.close()


def test_a_maintained_query_reads_as_its_answer(source, triangles):
    df = source.read.format("faq").load(triangles.path)
    assert df.schema.simpleString() == "struct<value:bigint>"
    reopened = MaintainedQuery.open(triangles.path)
    assert rows(df) == [(reopened.scalar(),)] == [(triangles.scalar(),)]
    reopened.close()
    graph = nx.Graph([(1, 2), (1, 3), (3, 4), (2, 4), (4, 5), (1, 5), (1, 4), (3, 5)])
    assert triangles.scalar() == sum(nx.triangles(graph).values()) // 3


def test_free_variables_are_columns_with_their_types(source, tmp_path):
    edges = pd.DataFrame({"src": ["a", "b", "b", "c"], "dst": ["b", "c", "d", "d"]})
    degree = faq.maintain("deg(a) := edge(a,b)", edge=edges, state=str(tmp_path / "degree"))
    degree.apply(edge=pd.DataFrame({"src": ["a", "d"], "dst": ["c", "a"], "value": [1, 1]}), version=1)
    df = source.read.format("faq").load(degree.path)
    assert df.schema.simpleString() == "struct<a:string,value:bigint>"
    assert rows(df) == rows(MaintainedQuery.open(degree.path).df) == [("a", 2), ("b", 2), ("c", 1), ("d", 1)]
    assert rows(df.where("value > 1")) == [("a", 2), ("b", 2)]  # a DataFrame like any other
    degree.close()


def test_a_tracker_reads_as_its_count(source, tmp_path):
    tracker = faq.track(EDGES, "(a)->(b); (b)->(c); (a)->(c)", state=str(tmp_path / "motif"))
    tracker.apply([(1, 4, 1)], version=1)
    df = source.read.format("faq").load(tracker.path)
    reopened = MotifTracker.open(tracker.path)
    assert df.schema.simpleString() == "struct<count:bigint>"
    assert rows(df) == [(reopened.count,)] == [(tracker.count,)]
    reopened.close()
    tracker.close()


def test_a_truss_reads_as_its_edges_and_trussness(source, tmp_path):
    truss = faq.truss(EDGES, maintained=True, state=str(tmp_path / "truss"))
    df = source.read.format("faq").load(truss.path)
    reopened = MaintainedTruss.open(truss.path)
    assert df.columns == ["src", "dst", "trussness"]
    assert rows(df) == arrow_rows(reopened.table()) == arrow_rows(truss.table())
    reopened.close()
    truss.close()


def test_an_asof_join_reads_as_its_joined_rows(source, tmp_path):
    trades = pd.DataFrame({"time": [1, 5, 9], "sym": ["a", "b", "a"], "qty": [1.0, 2.0, 3.0]})
    quotes = pd.DataFrame({"time": [0, 0, 4], "sym": ["a", "b", "a"], "px": [10.0, 20.0, 11.0]})
    view = faq.asof_join(trades, quotes, on="time", by="sym", maintained=True, state=str(tmp_path / "asof"))
    view.apply(right=pd.DataFrame({"time": [8], "sym": ["a"], "px": [12.0], "diff": [1]}))
    df = source.read.format("faq").load(view.path)
    reopened = open_join(view.path)
    assert df.columns == reopened.table().column_names
    assert rows(df) == arrow_rows(reopened.table()) == arrow_rows(view.table())
    assert (9, "a", 3.0, 12.0) in rows(df.select("time", "sym", "qty", "px"))
    reopened.close()
    view.close()


def test_the_version_option_reads_the_version_the_state_holds(source, triangles):
    reader = source.read.format("faq").option("version", 2)
    assert rows(reader.load(triangles.path)) == [(triangles.scalar(),)]
    with pytest.raises(Exception, match="STATE_DIRECTORY.*holds version 2 only: version 1 is no longer kept"):
        source.read.format("faq").option("version", 1).load(triangles.path).collect()
    with pytest.raises(Exception, match="STATE_DIRECTORY.*has no version 3 yet: it is at version 2"):
        source.read.format("faq").option("version", "3").load(triangles.path).collect()


def test_a_read_never_takes_the_writers_lock(source, triangles):
    """The writer holds its state (it committed versions 1 and 2) and goes on committing after a read."""
    assert rows(source.read.format("faq").load(triangles.path)) == [(triangles.scalar(),)]
    triangles.apply(edge=[(2, 3, 1)], version=3)
    assert rows(source.read.format("faq").load(triangles.path)) == [(triangles.scalar(),)]


def test_errors_name_the_path_and_the_option(source, tmp_path):
    with pytest.raises(Exception, match="STATE_DIRECTORY.*no saved state here"):
        source.read.format("faq").load(str(tmp_path / "nothing")).collect()
    with pytest.raises(Exception, match="STATE_DIRECTORY.*no saved state here"):
        source.read.format("faq").option("changes", "true").load(str(tmp_path)).collect()
    with pytest.raises(Exception, match="INVALID_ARGUMENT.*colour"):
        source.read.format("faq").option("colour", "red").load(str(tmp_path)).collect()
    with pytest.raises(Exception, match="INVALID_ARGUMENT.*version='-1'"):
        source.read.format("faq").option("version", -1).load(str(tmp_path)).collect()


def test_the_errors_are_faqs_own_in_process(tmp_path):
    from faq.data_source import answer_table, read_options

    with pytest.raises(StateDirectoryError, match="no saved state here"):
        answer_table(str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="path"):
        read_options({})


CONNECT_CLIENT = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    import faq

    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    faq.register_data_source(spark)
    out = {}
    for name, path in json.loads(sys.argv[1]).items():
        out[name] = [list(r) for r in spark.read.format("faq").load(path).collect()]
    try:
        spark.read.format("faq").option("version", 99).load(sys.argv[2]).collect()
    except Exception as exc:
        out["error"] = str(exc)
    root = sys.argv[3]  # the sink, a batch read of changes and a stream of them, run by the server's Python
    sink = (spark.readStream.schema("src bigint, dst bigint, value bigint").option("maxFilesPerTrigger", 1)
            .parquet(root + "/in").writeStream.format("faq").option("state", root + "/state")
            .option("query", "count() := edge(a,b), edge(b,c), edge(a,c)").option("keepChanges", 10)
            .option("checkpointLocation", root + "/ck").trigger(availableNow=True).start())
    sink.awaitTermination()
    out["sunk"] = [list(r) for r in spark.read.format("faq").load(root + "/state").collect()]
    out["changes"] = sorted(list(r) for r in
                            spark.read.format("faq").option("changes", "true").load(root + "/state").collect())
    follow = (spark.readStream.format("faq").option("changes", "true").load(root + "/state").writeStream
              .format("memory").queryName("changes").trigger(availableNow=True).start())
    follow.awaitTermination()
    out["streamed"] = sorted(list(r) for r in spark.table("changes").collect())
    print("RESULT " + json.dumps(out))
    spark.stop()
""")


def test_a_spark_connect_session_reads_the_same_answers(source, triangles, tmp_path):
    """... and runs the sink (faq/data_sink.py) and both reads of changes (faq/data_stream.py) on the server."""
    tracker = faq.track(EDGES, "(a)->(b); (b)->(c); (a)->(c)", state=str(tmp_path / "motif"))
    truss = faq.truss(EDGES, maintained=True, state=str(tmp_path / "truss"))
    paths = {"triangles": triangles.path, "motif": tracker.path, "truss": truss.path}
    (tmp_path / "sink" / "in").mkdir(parents=True)
    batches = [EDGES[:4], EDGES[4:]]
    for i, batch in enumerate(batches):
        pd.DataFrame([(s, d, 1) for s, d in batch], columns=["src", "dst", "value"]).to_parquet(
            tmp_path / "sink" / "in" / f"{i}.parquet", index=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", CONNECT_CLIENT, json.dumps(paths), triangles.path,
                          str(tmp_path / "sink")], capture_output=True, text=True, env=env, timeout=600,
                         cwd=str(tmp_path))
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stdout[-3000:] + run.stderr[-5000:]
    got = json.loads(lines[-1][len("RESULT "):])
    assert got["triangles"] == [[triangles.scalar()]]
    assert got["motif"] == [[tracker.count]]
    assert sorted(map(tuple, got["truss"])) == arrow_rows(truss.table())
    assert "STATE_DIRECTORY" in got["error"] and "has no version 99 yet" in got["error"]
    counts = [faq.count_triangles(EDGES[:4]).count, faq.count_triangles(EDGES).count]
    assert got["sunk"] == [[counts[1]]] == [[sum(nx.triangles(nx.Graph(EDGES)).values()) // 3]]
    expected = [[version, diff] for version, diff in ((1, counts[0]), (2, counts[1] - counts[0])) if diff]
    assert got["changes"] == got["streamed"] == expected
    tracker.close()
    truss.close()


def test_a_maintained_model_reads_as_its_aggregate(source, tmp_path):
    """A model's state is a maintained query's: the read is its aggregate (n, Σx, Σxxᵀ) as the query holds it."""
    from faq.learning import MaintainedModel

    houses = pd.DataFrame({"postcode": [1, 1, 2, 2], "size": [70.0, 90.0, 60.0, 120.0],
                           "price": [250.0, 292.0, 251.0, 369.0]})
    areas = pd.DataFrame({"postcode": [1, 2], "income": [30.0, 45.0]})
    model = faq.linear_regression("houses(postcode), areas(postcode)", target="houses.price",
                                  features=["houses.size"], houses=houses, areas=areas, maintained=True,
                                  state=str(tmp_path / "model"))
    model.apply(houses=pd.DataFrame({"postcode": [1], "size": [80.0], "price": [270.0], "diff": [1]}))
    df = source.read.format("faq").load(str(tmp_path / "model"))
    reopened = MaintainedModel.open(str(tmp_path / "model"))
    assert rows(df) == rows(reopened.df) == rows(model.df)
    assert df.schema == reopened.df.schema
    reopened.close()
    model.close()


def test_a_fixpoint_on_the_driver_reads_as_its_values(source, tmp_path):
    from faq.recursive import MaintainedFixpoint, maintain_paths

    paths = maintain_paths(EDGES, 1, "min_plus", path=str(tmp_path / "paths"))
    paths.apply(pd.DataFrame({"src": [1], "dst": [4], "weight": [1.0], "diff": [1]}))
    df = source.read.format("faq").load(str(tmp_path / "paths"))
    reopened = MaintainedFixpoint.open(str(tmp_path / "paths"))
    assert df.columns == ["node", "value"]
    assert rows(df) == arrow_rows(reopened.table()) == arrow_rows(paths.table())
    assert dict(rows(df))[4] == 1.0
    reopened.close()
    paths.close()


def test_a_trackers_answer_is_read_from_its_manifest_without_reopening_it(tmp_path, monkeypatch):
    import pyarrow as pa

    import faq.data_source as data_source
    from faq.data_source import answer_table

    empty = pa.table({"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64())})
    tracker = MotifTracker(empty, "(a)-(b); (b)-(c); (a)-(c)", path=str(tmp_path / "t"))   # the sink's triangles
    tracker.apply([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1), (2, 4, 1)])
    tracker.close()

    def no_reopening(path):
        raise AssertionError("reopened")

    with monkeypatch.context() as patched:
        patched.setattr(data_source, "open_state", no_reopening)
        read = answer_table(str(tmp_path / "t")).to_pydict()
        assert answer_table(str(tmp_path / "t"), version=1).to_pydict() == read
    reopened = MotifTracker.open(str(tmp_path / "t"))
    assert read == {"count": [reopened.count], "triangles": [reopened.count // 6]} == {"count": [12], "triangles": [2]}
    reopened.close()
    with pytest.raises(StateDirectoryError, match="has no version 2 yet: it is at version 1"):
        answer_table(str(tmp_path / "t"), version=2)   # another version: through the reopened state's checks
