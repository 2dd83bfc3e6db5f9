"""Structured Streaming as the source of a maintained query's changes (faq.incremental.streaming).

Change files land in a directory; a file stream (one file a micro-batch)
feeds a maintained query or model through ``foreachBatch``.  Checked
against independent recounts: brute-force triangles per node over the
union of all changes, and numpy least squares over the join of the net
rows.  A crash after the state committed a micro-batch (the progress
callback raises on the batch's "done" event) and a restart from the same
checkpoint with the reopened state applies every change once and reports
the re-delivered micro-batch as skipped.
"""

from __future__ import annotations

import os
import random
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import faq
from faq.errors import InvalidArgumentError, InvalidDeltaError, MissingColumnError
from faq.factor import factor_of
from faq import maintain
from faq.incremental import MaintainedQuery, stream
from faq.learning import MaintainedModel
from tests.helpers import csv_stream as helpers_csv_stream
from tests.helpers import crash_after, in_stream_order, stream_until_crash, write_change_files

pytestmark = pytest.mark.usefixtures("spark")

QUERY = "t(a) := edge(a,b), edge(b,c), edge(a,c)"  # triangles per first node, counting
SCHEMA = "src bigint, dst bigint, value bigint"


def per_node(edges: Counter) -> dict[int, int]:
    """Σ_{b,c} m(a,b)·m(b,c)·m(a,c) per a, by brute force over the multiset (the oracle)."""
    out: dict[int, list[int]] = {}
    for (a, b), m in edges.items():
        if m:
            out.setdefault(a, []).append(b)
    counts: Counter = Counter()
    for (a, b), m_ab in edges.items():
        for c in out.get(b, ()):
            counts[a] += m_ab * edges[(b, c)] * edges.get((a, c), 0)
    return {a: n for a, n in counts.items() if n}


def changes(seed: int, files: int, rows: int, nodes: int = 14, initial: int = 40):
    """Initial edges and ``files`` batches of inserts (+1) and deletes (-1) of present edges."""
    rng = random.Random(seed)
    current = Counter()
    while len(current) < initial:
        a, b = rng.sample(range(nodes), 2)
        current[(a, b)] = 1
    start = Counter(current)
    batches = []
    for _ in range(files):
        batch = []
        for _ in range(rows):
            present = [e for e, m in current.items() if m > 0]
            if present and rng.random() < 0.4:
                e = rng.choice(present)
                current[e] -= 1
                batch.append((*e, -1))
            else:
                e = tuple(rng.sample(range(nodes), 2))
                current[e] += 1
                batch.append((*e, 1))
        batches.append(batch)
    return start, batches, current


def write_csv(directory: Path, batches) -> None:
    write_change_files(directory, "src,dst,value", ("".join(f"{a},{b},{v}\n" for a, b, v in batch) for batch in batches))


def csv_stream(spark, directory: Path):
    return helpers_csv_stream(spark, directory, SCHEMA)


def answer_of(mq: MaintainedQuery) -> dict[int, int]:
    table = mq.state.table("__answer").to_pydict()
    return {a: v for a, v in zip(table["a"], table["value"]) if v}


def initial_query(start: Counter, **options) -> MaintainedQuery:
    edge = factor_of([(a, b, m) for (a, b), m in start.items()], ["src", "dst"], "counting")
    return maintain(QUERY, {"edge": edge}, **options)


def test_a_stream_of_change_files_keeps_the_answer_exact(spark, tmp_path):
    start, batches, final = changes(seed=1, files=4, rows=12)
    write_csv(tmp_path / "in", batches)
    events = []
    mq = initial_query(start, path=str(tmp_path / "state"), progress=events.append)
    before = answer_of(mq)

    checked = []

    def after_each(event):  # after every micro-batch: the answer equals a recount of the current edges
        events.append(event)
        if event.kind == "done":
            edges = mq.state.table("edge").to_pydict()
            current = Counter({(a, b): m for a, b, m in zip(edges["src"], edges["dst"], edges["value"])})
            checked.append(answer_of(mq) == per_node(current))

    mq.progress = after_each
    query = mq.stream(csv_stream(spark, tmp_path / "in"), checkpoint=str(tmp_path / "checkpoint"),
                      sink=str(tmp_path / "sink"), trigger={"availableNow": True})
    query.awaitTermination()
    assert query.exception() is None
    assert answer_of(mq) == per_node(final)
    assert mq.version == len(batches) and checked == [True] * len(batches)
    assert [label.rsplit(" ", 1)[1] for label in mq.state.labels] == ["0", "1", "2", "3"]
    assert [e.kind for e in events if e.kind != "start"] == ["done"] * len(batches)

    # the sink: one file per version; the diffs per node add up to the answer's change
    sunk = spark.read.parquet(str(tmp_path / "sink")).toPandas()
    assert sorted(sunk["version"].unique()) == [1, 2, 3, 4]
    total = sunk.groupby("a")["diff"].sum().to_dict()
    expected = {a: per_node(final).get(a, 0) - before.get(a, 0) for a in {*before, *per_node(final)}}
    assert {a: d for a, d in total.items() if d} == {a: d for a, d in expected.items() if d}
    mq.close()


def test_a_restart_after_a_crash_applies_every_change_once(spark, tmp_path):
    start, batches, final = changes(seed=2, files=4, rows=10)
    write_csv(tmp_path / "in", batches)
    state, checkpoint, sink = (str(tmp_path / n) for n in ("state", "checkpoint", "sink"))

    mq = initial_query(start, path=state, progress=crash_after(2))
    stream_until_crash(mq, csv_stream(spark, tmp_path / "in"), checkpoint, sink)

    events = []
    reopened = MaintainedQuery.open(state, progress=events.append)
    assert reopened.version == 2  # committed, though Spark did not commit micro-batch 1
    assert sorted(os.listdir(sink)) == ["version-0000000001.parquet", "version-0000000002.parquet"]  # before it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no sink file is missing: each was written before its commit
        query = reopened.stream(csv_stream(spark, tmp_path / "in"), checkpoint=checkpoint, sink=sink,
                                trigger={"availableNow": True})
        query.awaitTermination()
    assert query.exception() is None
    assert len(os.listdir(sink)) == len(batches)
    skipped = [e for e in events if e.kind == "skip"]
    assert len(skipped) == 1 and skipped[0].version == 2 and skipped[0].label.endswith(" batch 1")
    assert "micro-batch 1 was applied already (version 2)" in skipped[0].description
    assert reopened.version == len(batches)  # no version twice
    assert answer_of(reopened) == per_node(final)  # no change twice
    reopened.close()
    assert answer_of(MaintainedQuery.open(state)) == per_node(final)


def _wait_until_gone(group: int, seconds: float = 30.0) -> None:
    """Until no process of the process group ``group`` is left (the killed JVM exits a moment later)."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError(f"process group {group} still alive {seconds} s after SIGKILL")


CHILD_STREAM = """
import sys, time
from faq.incremental import MaintainedQuery
from faq.spark import get_session
state, source, checkpoint, sink = sys.argv[1:5]
spark = get_session(master="local[1]")
mq = MaintainedQuery.open(state, progress=lambda e: e.kind == "done" and print("version", e.version, flush=True))
changes = (spark.readStream.schema("src bigint, dst bigint, value bigint").option("header", True)
           .option("maxFilesPerTrigger", 1).csv(source))
query = mq.stream(changes, checkpoint=checkpoint, sink=sink, trigger={"processingTime": "0 seconds"})
print("started", flush=True)
query.awaitTermination()
"""


def test_a_streaming_process_killed_with_sigkill_restarts_and_applies_every_change_once(spark, tmp_path):
    """A real crash: the streaming process is killed with SIGKILL between micro-batches or inside one;
    restarted from its checkpoint with the reopened state, every change counts once."""
    import signal
    import subprocess
    import sys

    start, batches, final = changes(seed=9, files=8, rows=10)
    write_csv(tmp_path / "in", batches)
    state, checkpoint, sink = (str(tmp_path / n) for n in ("state", "checkpoint", "sink"))
    initial_query(start, path=state).close()
    # Its own process group: the kill takes the child's JVM too, as a crash of the machine would (a JVM
    # outliving its Python would go on running the stream's triggers against the same checkpoint).
    child = subprocess.Popen([sys.executable, "-c", CHILD_STREAM, state, str(tmp_path / "in"), checkpoint, sink],
                             cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        seen = 0
        for line in child.stdout:  # killed once it has committed three versions: mid-stream
            if line.startswith("version"):
                seen = int(line.split()[1])
                if seen >= 3:
                    break
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        _wait_until_gone(child.pid)
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
    assert seen >= 3
    reopened = MaintainedQuery.open(state)
    killed_at = reopened.version
    assert 3 <= killed_at < len(batches)  # it stopped mid-stream, at a committed version
    query = reopened.stream(csv_stream(spark, tmp_path / "in"), checkpoint=checkpoint, sink=sink,
                            trigger={"availableNow": True})
    query.awaitTermination()
    assert query.exception() is None
    # One file a micro-batch, except where the kill fell after Spark's file source logged the next file and
    # before its offset log did: the restart's first micro-batch then reads that file with the one after
    # (tests/test_data_sink.py's killed writer says how this was seen).  So the versions are the files or
    # one fewer, each micro-batch id applied once and in order, and the answer -- which a micro-batch
    # applied twice or skipped would change -- every change counted once.
    ids = [int(label.rsplit(" ", 1)[1]) for label in reopened.state.labels]
    assert reopened.version == len(ids) and len(batches) - 1 <= len(ids) <= len(batches), ids
    assert ids == sorted(set(ids)) and ids[0] == 0, ids
    assert answer_of(reopened) == per_node(final)
    # The sink: every version's file (written before each commit, so the kill left none missing), and
    # the diffs add up to the answer's whole change.
    assert sorted(os.listdir(sink)) == [f"version-{v:010d}.parquet" for v in range(1, reopened.version + 1)]
    sunk = spark.read.parquet(sink).toPandas()
    before = per_node(start)
    total = {a: d for a, d in sunk.groupby("a")["diff"].sum().to_dict().items() if d}
    assert total == {a: d for a in {*before, *per_node(final)}
                     if (d := per_node(final).get(a, 0) - before.get(a, 0))}
    reopened.close()


def test_a_bad_delta_stops_the_stream_with_the_catalog_error(spark, tmp_path):
    edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting")
    mq = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge})
    write_csv(tmp_path / "in", [[(1, 3, 1)], [(5, 6, -1)]])  # the second deletes an edge that is not there
    query = mq.stream(csv_stream(spark, tmp_path / "in"), checkpoint=str(tmp_path / "checkpoint"),
                      trigger={"availableNow": True})
    with pytest.raises(Exception, match=r"\[NEGATIVE_COUNT\] factor 'edge'"):
        query.awaitTermination()
    assert "[NEGATIVE_COUNT]" in str(query.exception())
    assert mq.version == 1 and mq.scalar() == 1  # the first micro-batch stays; the bad one changed nothing
    mq.close()


def test_a_file_without_a_column_is_a_clear_error(spark, tmp_path):
    edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting")
    mq = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge})
    directory = tmp_path / "in"
    directory.mkdir()
    pd.DataFrame({"src": [1], "value": [1]}).to_parquet(directory / "no-dst.parquet")  # no dst column
    changes_df = spark.readStream.schema(SCHEMA).parquet(str(directory))
    query = stream(mq, changes_df, checkpoint=str(tmp_path / "checkpoint"), trigger={"availableNow": True})
    with pytest.raises(Exception, match=r"\[INVALID_DELTA\] delta for factor 'edge': micro-batch 0 has 1 row\(s\) "
                                        r"with a null 'dst'"):
        query.awaitTermination()
    assert mq.version == 0

    # a stream whose schema lacks a column is refused before it starts
    with pytest.raises(MissingColumnError, match="no column 'dst'") as caught:
        mq.stream(spark.readStream.schema("src bigint, value bigint").parquet(str(directory)),
                  checkpoint=str(tmp_path / "other"))
    assert caught.value.parameters["column"] == "dst"
    with pytest.raises(InvalidArgumentError, match="streaming DataFrame"):
        mq.stream(spark.createDataFrame([(1, 2)], "src bigint, dst bigint"), checkpoint=str(tmp_path / "x"))
    with pytest.raises(InvalidDeltaError, match="no factor 'node'"):
        mq.stream(changes_df, checkpoint=str(tmp_path / "x"), factor="node")
    mq.close()


def test_a_maintained_model_follows_a_stream_of_rows_of_two_tables(spark, tmp_path):
    rng = np.random.default_rng(3)
    orders = pd.DataFrame({"o": np.arange(20), "amount": rng.normal(50, 10, 20).round(2)})
    items = pd.DataFrame({"o": rng.integers(0, 20, 30), "qty": rng.integers(1, 9, 30).astype(float)})
    model = faq.linear_regression("orders(o), items(o)", target="orders.amount", features=["items.qty"],
                                  orders=orders, items=items, maintained=True, path=str(tmp_path / "state"))
    net_orders, net_items = orders.copy(), items.copy()
    files = []
    for i in range(3):  # new orders and items, and deleted items (rows that are there)
        new_orders = pd.DataFrame({"o": np.arange(20 + 3 * i, 23 + 3 * i), "amount": rng.normal(60, 5, 3).round(2)})
        new_items = pd.DataFrame({"o": rng.integers(0, 23 + 3 * i, 6), "qty": rng.integers(1, 9, 6).astype(float)})
        gone = net_items.sample(3, random_state=i)
        net_orders = pd.concat([net_orders, new_orders], ignore_index=True)
        net_items = pd.concat([net_items.drop(gone.index), new_items], ignore_index=True)
        files.append(pd.concat([new_orders.assign(table="orders", diff=1), new_items.assign(table="items", diff=1),
                                gone.assign(table="items", diff=-1)], ignore_index=True))
    directory = tmp_path / "in"
    directory.mkdir()
    for i, frame in enumerate(files):
        frame[["table", "o", "amount", "qty", "diff"]].to_csv(directory / f"{i}.csv", index=False)
    in_stream_order(directory / f"{i}.csv" for i in range(len(files)))
    schema = "table string, o bigint, amount double, qty double, diff bigint"
    changes_df = spark.readStream.schema(schema).option("header", True).option("maxFilesPerTrigger", 1) \
        .csv(str(directory))
    query = model.stream(changes_df, checkpoint=str(tmp_path / "checkpoint"), factor_column="table",
                         trigger={"availableNow": True})
    query.awaitTermination()
    assert model.version == 3 and isinstance(model, MaintainedModel)

    joined = net_orders.merge(net_items, on="o")  # the oracle: least squares on the listed join
    x = np.column_stack([np.ones(len(joined)), joined["qty"]])
    (intercept, slope), *_ = np.linalg.lstsq(x, joined["amount"].to_numpy(), rcond=None)
    assert model.rows == len(joined)
    assert model.intercept == pytest.approx(intercept, rel=1e-9)
    assert model.coefficients["items.qty"] == pytest.approx(slope, rel=1e-9)
    reopened = MaintainedModel.open(str(tmp_path / "state"))
    assert reopened.version == 3 and reopened.coefficients["items.qty"] == pytest.approx(slope, rel=1e-9)
    reopened.close()
    model.close()


CONNECT_CLIENT = r"""
import json, os, sys, time
from collections import Counter
import pandas as pd
from faq.factor import factor_of
from faq import maintain
from faq.incremental import MaintainedQuery
from faq.spark import get_session

url, root = sys.argv[1], sys.argv[2]
spark = get_session(remote=url)
edge = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting", spark=spark)
tri = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge}, state=root + "/state")
os.makedirs(root + "/changes")
files = [{"src": [1, 2], "dst": [3, 4], "value": [1, 1]}, {"src": [2, 4], "dst": [4, 5], "value": [-1, 1]},
         {"src": [3, 1], "dst": [5, 4], "value": [1, 1]}]

def run():
    changes = spark.readStream.schema("src bigint, dst bigint, value bigint").option("maxFilesPerTrigger", 1) \
        .parquet(root + "/changes")
    query = tri.stream(changes, checkpoint=root + "/checkpoint", trigger={"availableNow": True})
    query.awaitTermination()
    return MaintainedQuery.open(root + "/state")

for i, rows in enumerate(files[:2]):
    pd.DataFrame(rows).to_parquet(f"{root}/changes/{i}.parquet")
    os.utime(f"{root}/changes/{i}.parquet", (time.time() - 10 + i,) * 2)  # oldest first, as the source takes them
first = run()
# a crash after the state committed micro-batch 1 but before Spark did: Spark re-delivers it
os.remove(root + "/checkpoint/commits/1")
os.remove(root + "/checkpoint/commits/.1.crc")
pd.DataFrame(files[2]).to_parquet(f"{root}/changes/2.parquet")
final = run()
print(json.dumps({"first": [first.version, first.scalar()], "final": [final.version, final.scalar()],
                  "labels": [label.rsplit(" ", 1)[1] for label in final.state.labels]}))
"""


@pytest.fixture(scope="module")
def connect_server():
    """A Spark Connect server (faq serve) for the batch function to run in, stopped at the end."""
    import socket

    from faq.cli import server as serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = serve.start(port, master="local[2]")
    try:
        yield state
    finally:
        serve.stop(port)


def test_on_spark_connect_the_server_applies_each_micro_batch_once(connect_server, tmp_path):
    """The batch function runs in the server's Python and reopens the durable state there."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.run([sys.executable, "-c", CONNECT_CLIENT, connect_server["url"], str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # 1-2, 2-3, 3-4; +1-3, +2-4: 2 triangles; -2-4, +4-5: 1; +3-5, +1-4: 1-2-3, 1-3-4, 3-4-5
    brute = Counter({(1, 2): 1, (2, 3): 1, (3, 4): 1, (1, 3): 1, (4, 5): 1, (3, 5): 1, (1, 4): 1})
    assert result["first"] == [2, 1]
    assert result["final"] == [3, sum(per_node(brute).values())]
    assert result["labels"] == ["0", "1", "2"]  # micro-batch 1 re-delivered, skipped


CONNECT_FIXPOINT_CLIENT = r"""
import json, os, sys, time
import pandas as pd
from faq.recursive import MaintainedFixpoint
from faq.spark import get_session

url, root = sys.argv[1], sys.argv[2]
spark = get_session(remote=url)
m = MaintainedFixpoint.paths([(0, 1, 4.0), (1, 2, 4.0), (2, 3, 4.0)], source=0, placement="executors",
                             path=root + "/state")
os.makedirs(root + "/changes")
files = [{"src": [0, 2], "dst": [2, 4], "weight": [1.0, 1.0], "diff": [1, 1]},
         {"src": [0, 3], "dst": [2, 5], "weight": [None, 2.0], "diff": [-1, 1]},
         {"src": [0], "dst": [5], "weight": [1.0], "diff": [1]}]

def run(target):
    changes = spark.readStream.schema("src bigint, dst bigint, weight double, diff bigint") \
        .option("maxFilesPerTrigger", 1).parquet(root + "/changes")
    query = target.stream(changes, checkpoint=root + "/checkpoint", trigger={"availableNow": True})
    query.awaitTermination()
    return MaintainedFixpoint.open(root + "/state")

for i, rows in enumerate(files[:2]):
    pd.DataFrame(rows).to_parquet(f"{root}/changes/{i}.parquet")
    os.utime(f"{root}/changes/{i}.parquet", (time.time() - 10 + i,) * 2)  # oldest first, as the source takes them
first = run(m)
os.remove(root + "/checkpoint/commits/1")
os.remove(root + "/checkpoint/commits/.1.crc")
pd.DataFrame(files[2]).to_parquet(f"{root}/changes/2.parquet")
final = run(first)
table = final.table().to_pydict()
print(json.dumps({"first": first.version, "final": final.version, "placement": final.placement,
                  "labels": [label.rsplit(" ", 1)[1] for label in final.labels],
                  "answer": dict(zip(map(str, table["node"]), table["value"]))}))
"""


def test_on_spark_connect_a_fixpoint_on_the_executors_streams_once(connect_server, tmp_path):
    """A maintained fixpoint kept on the executors: the server's batch function reopens the state Spark
    wrote, applies each micro-batch once (one re-delivered after a lost Spark commit is skipped), exact."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.run([sys.executable, "-c", CONNECT_FIXPOINT_CLIENT, connect_server["url"], str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # 0-1-2-3 (4 each); +0->2 (1), +2->4 (1); -0->2, +3->5 (2); +0->5 (1): shortest distances from 0
    assert result["placement"] == "executors" and result["first"] == 2 and result["final"] == 3
    assert result["labels"] == ["0", "1", "2"]  # micro-batch 1 re-delivered, skipped
    assert result["answer"] == {"0": 0.0, "1": 4.0, "2": 8.0, "3": 12.0, "4": 9.0, "5": 1.0}
