"""A maintained answer's changes (faq/incremental/change_log.py, faq/data_stream.py): kept with each commit, read in batch
with ``option("changes", "true")`` and as a stream with ``spark.readStream``.

Every read is compared with the library's own changes (what ``apply`` returned) and with the answer:
the changes of a state whose log starts at an empty answer sum, per key, to the answer (pandas).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import faq
from faq.incremental.change_log import CHANGES, keep_changes, kept_versions, read_changes
from faq.data_source import answer_table
from faq.data_stream import change_options
from faq.errors import InvalidArgumentError, StateDirectoryError
from faq.incremental.change import change_stream

DEGREES = "deg(a) := edge(a,b)"
BATCHES = [[(1, 2, 1), (1, 3, 1), (2, 3, 1)], [(3, 1, 1), (1, 2, -1)], [(4, 1, 1), (4, 2, 1)], [(2, 3, -1)],
           [(5, 1, 1)]]


@pytest.fixture(scope="module")
def source(spark):
    faq.register_data_source(spark)
    return spark


def rows(table_or_df) -> list[tuple]:
    if hasattr(table_or_df, "collect"):
        return sorted(tuple(r) for r in table_or_df.collect())
    return sorted(zip(*table_or_df.to_pydict().values()))


@pytest.fixture()
def degrees(tmp_path):
    """A degree query with a change log of 3 versions, 5 batches applied: (the query, each apply's change).

    ``query.answers[v]`` is the answer the library read right after version ``v`` committed.
    """
    query = faq.maintain(DEGREES, edge=pd.DataFrame({"src": [7], "dst": [8]}), state=str(tmp_path / "deg"))
    keep_changes(query.path, retain=3)
    query.answers = [answer_table(query.path)]
    changes = []
    for batch in BATCHES:
        changes.append(query.apply(edge=pd.DataFrame(batch, columns=["src", "dst", "value"])))
        query.answers.append(answer_table(query.path))
    yield query, changes
    query.close()


def degree_oracle(batches) -> list[tuple]:
    """pandas: out-degrees of the multiset of edges {7->8} plus the batches' signed rows."""
    edges = pd.DataFrame([(7, 8, 1), *[r for b in batches for r in b]], columns=["src", "dst", "value"])
    degree = edges.groupby("src")["value"].sum()
    return sorted((int(k), int(v)) for k, v in degree.items() if v)


def test_an_earlier_version_is_read_back_while_its_changes_are_kept(source, degrees):
    query, _ = degrees
    for version in (2, 3, 4, 5):  # the log keeps 3, 4, 5: the answers of 2 to 5 are exact
        df = source.read.format("faq").option("version", version).load(query.path)
        assert rows(df) == rows(query.answers[version]) == degree_oracle(BATCHES[:version])
        assert rows(answer_table(query.path, version=version)) == rows(query.answers[version])
    with pytest.raises(Exception, match="STATE_DIRECTORY.*holds version 5 only: version 1 is no longer kept"):
        source.read.format("faq").option("version", 1).load(query.path).collect()


def test_earlier_counts_of_a_tracker_and_what_cannot_be_undone(tmp_path):
    tracker = faq.track([(1, 2), (2, 3)], "(a)-(b); (b)-(c); (a)-(c)", state=str(tmp_path / "t"))
    keep_changes(tracker.path, retain=10)
    counts = [tracker.count]
    for batch in ([(1, 3, 1)], [(3, 4, 1), (2, 4, 1)], [(1, 2, -1)]):
        tracker.apply(batch)
        counts.append(tracker.count)
    earlier = [answer_table(tracker.path, version=v).to_pydict() for v in range(4)]
    assert [e["count"][0] for e in earlier] == counts == [0, 6, 12, 6]  # 6 bindings a triangle
    assert [e["triangles"][0] for e in earlier] == [0, 1, 2, 1]
    tracker.close()
    real = faq.maintain(DEGREES, edge=[(1, 2)], semiring="real", state=str(tmp_path / "real"))
    keep_changes(real.path)
    real.apply(edge=[(1, 3, 0.5)])
    with pytest.raises(StateDirectoryError, match="version 0 is no longer kept"):  # doubles: not exact
        answer_table(real.path, version=0)
    real.close()


def test_each_commit_keeps_its_change_and_the_retention_drops_old_ones(degrees):
    query, changes = degrees
    assert kept_versions(query.path) == [3, 4, 5]
    for change in changes[2:]:
        assert rows(read_changes(query.path, change.version, change.version)) == rows(change_stream(change))
    with pytest.raises(StateDirectoryError, match="change of version 2 is not kept.*versions 3 to 5"):
        read_changes(query.path, 2, 5)
    with pytest.raises(InvalidArgumentError, match="retain"):
        keep_changes(query.path, retain=0)


def test_a_batch_read_of_changes(source, degrees):
    query, changes = degrees
    read = source.read.format("faq").option("changes", "true")
    df = read.load(query.path)
    assert df.columns == ["a", "version", "diff"]
    assert rows(df) == rows(change_stream(changes[2:]))
    ranged = read.option("startingVersion", 4).option("endingVersion", 4).load(query.path)
    assert rows(ranged) == rows(change_stream(changes[3]))
    with pytest.raises(Exception, match="STATE_DIRECTORY.*change of version 1 is not kept"):
        read.option("startingVersion", 1).load(query.path).collect()
    with pytest.raises(Exception, match="STATE_DIRECTORY.*has no version 9 yet"):
        read.option("endingVersion", 9).load(query.path).collect()


def test_a_state_without_a_log_says_how_to_keep_one(source, tmp_path):
    query = faq.maintain(DEGREES, edge=[(1, 2)], state=str(tmp_path / "plain"))
    with pytest.raises(Exception, match="STATE_DIRECTORY.*keeps no change log.*keep_changes"):
        source.read.format("faq").option("changes", "true").load(query.path).collect()
    with pytest.raises(Exception, match="INVALID_ARGUMENT.*changes.*option"):
        source.readStream.format("faq").load(query.path).writeStream.format("noop").start().awaitTermination()
    query.close()


def test_the_options_of_a_read_of_changes():
    assert change_options({"path": "s", "changes": "true"}).first == "earliest"
    assert change_options({"path": "s", "changes": "true", "startingVersion": "latest"}).first == "latest"
    with pytest.raises(InvalidArgumentError, match="startingVersion"):
        change_options({"path": "s", "startingVersion": "soon"})
    with pytest.raises(InvalidArgumentError, match="version"):
        change_options({"path": "s", "version": "1"})


def run_to_parquet(spark, path: str, out: Path, checkpoint: Path, **options) -> pd.DataFrame:
    reader = spark.readStream.format("faq").option("changes", "true")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (reader.load(path).writeStream.format("parquet").option("path", str(out))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    return spark.read.parquet(str(out))


def test_a_stream_of_changes_reads_each_version_once(source, degrees, tmp_path):
    query, changes = degrees
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    got = run_to_parquet(source, query.path, out, checkpoint)
    assert rows(got.select("a", "version", "diff")) == rows(change_stream(changes[2:]))
    more = [query.apply(edge=pd.DataFrame([(6, 1, 1), (6, 2, 1)], columns=["src", "dst", "value"]))]
    more.append(query.apply(edge=pd.DataFrame([(3, 1, -1)], columns=["src", "dst", "value"])))
    got = run_to_parquet(source, query.path, out, checkpoint)  # restarted: versions 6 and 7 only, once
    assert rows(got.select("a", "version", "diff")) == rows(change_stream([*changes[2:], *more]))
    latest = run_to_parquet(source, query.path, tmp_path / "out2", tmp_path / "ck2", startingVersion="latest")
    assert latest.count() == 0


def test_a_sink_with_a_log_feeds_a_stream_whose_changes_sum_to_the_answer(source, tmp_path):
    """changes -> faq sink (keepChanges) -> state -> readStream of changes: Σ diff per key is the answer."""
    folder = tmp_path / "in"
    folder.mkdir()
    for i, batch in enumerate(BATCHES):
        pd.DataFrame(batch, columns=["src", "dst", "value"]).to_parquet(folder / f"b{i}.parquet", index=False)
    state = str(tmp_path / "state")
    sink = (source.readStream.schema("src bigint, dst bigint, value bigint").option("maxFilesPerTrigger", 1)
            .parquet(str(folder)).writeStream.format("faq").option("state", state).option("query", DEGREES)
            .option("keepChanges", 100).option("checkpointLocation", str(tmp_path / "ck-sink"))
            .trigger(availableNow=True).start())
    sink.awaitTermination()
    assert kept_versions(state) == [1, 2, 3, 4, 5] and (Path(state) / CHANGES).is_dir()
    got = run_to_parquet(source, state, tmp_path / "out", tmp_path / "ck-read").toPandas()
    summed = got.groupby("a")["diff"].sum()
    answer = source.read.format("faq").load(state).toPandas().set_index("a")["value"]
    edges = pd.DataFrame([r for b in BATCHES for r in b], columns=["src", "dst", "value"])
    oracle = edges.groupby("src")["value"].sum()
    oracle = oracle[oracle != 0]
    assert summed[summed != 0].sort_index().to_dict() == answer.sort_index().to_dict() == oracle.to_dict()


def test_a_truss_log_takes_its_columns_from_its_first_kept_change(tmp_path):
    from faq.data_stream import change_schema

    truss = faq.truss([(1, 2), (2, 3)], maintained=True, state=str(tmp_path / "truss"))
    keep_changes(truss.path, retain=5)
    with pytest.raises(StateDirectoryError, match="none is kept yet"):
        change_schema(truss.path)
    change = truss.apply([(1, 3, 1)])  # closes a triangle: every edge's trussness 2 -> 3
    assert change_schema(truss.path) == "`src` bigint, `dst` bigint, `trussness` bigint, `version` bigint, `diff` bigint"
    assert rows(read_changes(truss.path, 1, 1)) == rows(change_stream(change))
    with pytest.raises(StateDirectoryError, match="version 0 is no longer kept"):  # a truss is not undone
        answer_table(truss.path, version=0)
    truss.close()
