"""The maintained as-of join as a durable, streamable maintained object: reopened after any batch it is the
join that was saved (both modes, snapshots rewritten as the batches since grow); a batch whose commit fails
is taken back; each micro-batch of a Structured Streaming source is applied once."""

from __future__ import annotations

import random

import pandas as pd
import pyarrow as pa
import pytest

import faq
from faq.asof.locked import LockedAsof
from faq.asof.maintained import MaintainedAsof
from faq.errors import BatchAlreadyAppliedError, InvalidArgumentError, StateDirectoryError
from tests.helpers import arrow_rows as table
from tests.helpers import in_stream_order

LEFT = pa.schema([("t", pa.int64()), ("k", pa.string()), ("q", pa.int64())])
RIGHT = pa.schema([("t", pa.int64()), ("k", pa.string()), ("p", pa.int64())])


def random_batches(rng, left, right, count, left_deletions=True):
    """(left change rows, right change rows) batches: inserts at any time, deletions of present rows (none of the
    left side's with ``left_deletions`` False: a locked join drops late left rows, which are then not there)."""
    left, right = list(left), list(right)
    out = []
    for b in range(count):
        new_left = [(rng.randrange(60), rng.choice("ab"), 100 + b) for _ in range(rng.randrange(3))]
        new_right = [(rng.randrange(60), rng.choice("ab"), 100 + b) for _ in range(rng.randrange(3))]
        gone_left = [left.pop(rng.randrange(len(left)))] if left and left_deletions and rng.random() < 0.5 else []
        gone_right = [right.pop(rng.randrange(len(right)))] if right and rng.random() < 0.5 else []
        left += new_left
        right += new_right
        out.append((table(gone_left + new_left, LEFT, [-1] * len(gone_left) + [1] * len(new_left)),
                    table(gone_right + new_right, RIGHT, [-1] * len(gone_right) + [1] * len(new_right)),
                    rng.randrange(4)))
    return out


@pytest.mark.parametrize("mode", ["view", "locked"])
def test_reopened_after_every_batch_it_is_the_join_that_was_saved(tmp_path, mode):
    rng = random.Random(11)
    left = [(rng.randrange(60), rng.choice("ab"), i) for i in range(20)]
    right = [(rng.randrange(60), rng.choice("ab"), i) for i in range(20)]
    path = str(tmp_path / "state")
    options = dict(on="t", by="k", maintained=True, mode=mode, path=path)
    if mode == "locked":
        options.update(watermark=10, lateness=5)
    live = faq.asof_join(table(left, LEFT), table(right, RIGHT), **options)
    twin = faq.asof_join(table(left, LEFT), table(right, RIGHT), **{**options, "path": None})  # never saved
    watermark = 10
    for number, (dl, dr, step) in enumerate(random_batches(rng, left, right, 40, mode == "view"), start=1):  # > 32 files: snapshots
        extra = {}
        if mode == "locked" and number % 3 == 0:
            watermark += step
            extra = {"watermark": watermark}
        live.apply(left=dl, right=dr, label=f"{number:03d}", **extra)
        twin.apply(left=dl, right=dr, **extra)
        if number % 7 == 0 or number == 40:
            live.close()
            live = faq.asof.open_join(path)
            assert type(live) is (LockedAsof if mode == "locked" else MaintainedAsof)
            assert live.table().to_pylist() == twin.table().to_pylist(), number
            assert live.version == number and live.labels[-1] == f"{number:03d}"
            if mode == "locked":
                assert (live.watermark, live.late_rows, live.ignored_deletions) == \
                    (twin.watermark, twin.late_rows, twin.ignored_deletions)
    with pytest.raises(BatchAlreadyAppliedError):
        live.apply(left=table([], LEFT), version=40)
    live.close()


def test_a_failed_commit_takes_the_batch_back(tmp_path):
    trades = pd.DataFrame({"time": [1, 4], "sym": ["a", "a"], "qty": [5, 7]})
    quotes = pd.DataFrame({"time": [0], "sym": ["a"], "px": [1.0]})
    view = faq.asof_join(trades, quotes, on="time", by="sym", maintained=True)

    def failing(change):
        raise OSError("disk full")

    batch = {"left": pd.DataFrame({"time": [2, 1], "sym": ["a", "a"], "qty": [9, 5], "diff": [1, -1]}),
             "right": pd.DataFrame({"time": [3, 0], "sym": ["a", "a"], "px": [2.0, 1.0], "diff": [1, -1]})}
    before = view.table().to_pylist()
    with pytest.raises(OSError):
        view.apply(batch, before_commit=failing)
    assert view.table().to_pylist() == before and view.version == 0
    view.apply(batch)
    assert [(r["time"], r["px"]) for r in view.table().to_pylist()] == [(4, 2.0), (2, None)]

    # locked: taken back by reopening its state; without a state it refuses further batches
    durable = faq.asof_join(trades, quotes, on="time", by="sym", maintained=True, mode="locked", watermark=0,
                            path=str(tmp_path / "locked"))
    with pytest.raises(OSError):
        durable.apply(right=pd.DataFrame({"time": [3], "sym": ["a"], "px": [2.0]}), watermark=5,
                      before_commit=failing)
    assert durable.version == 0 and durable.table().num_rows == 0 and durable.watermark == 0
    durable.apply(right=pd.DataFrame({"time": [3], "sym": ["a"], "px": [2.0]}), watermark=5)
    assert durable.to_pandas()["px"].tolist() == [1.0, 2.0]
    durable.close()
    memory = faq.asof_join(trades, quotes, on="time", by="sym", maintained=True, mode="locked", watermark=0)
    with pytest.raises(OSError):
        memory.apply(right=pd.DataFrame({"time": [3], "sym": ["a"], "px": [2.0]}), before_commit=failing)
    with pytest.raises(InvalidArgumentError, match="failed half way"):
        memory.apply(right=pd.DataFrame({"time": [3], "sym": ["a"], "px": [2.0]}))


def test_state_directories_are_checked(tmp_path):
    trades = pd.DataFrame({"time": [1], "sym": ["a"], "qty": [5]})
    quotes = pd.DataFrame({"time": [0], "sym": ["a"], "px": [1.0]})
    (tmp_path / "mine.txt").write_text("a file of the user's")
    with pytest.raises(StateDirectoryError, match="not empty"):
        faq.asof_join(trades, quotes, on="time", by="sym", maintained=True, state=str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="maintained"):
        faq.asof_join(trades, quotes, on="time", by="sym", state=str(tmp_path / "x"))
    faq.truss([(1, 2)], maintained=True, state=str(tmp_path / "truss")).close()
    with pytest.raises(StateDirectoryError, match="truss"):
        MaintainedAsof.open(str(tmp_path / "truss"))
    with pytest.raises(StateDirectoryError, match="truss"):
        faq.asof.open_join(str(tmp_path / "truss"))
    faq.asof_join(trades, quotes, on="time", by="sym", maintained=True, mode="locked", state=str(tmp_path / "l")).close()
    with pytest.raises(StateDirectoryError, match="locked as-of join, not a view"):
        MaintainedAsof.open(str(tmp_path / "l"))
    assert isinstance(LockedAsof.open(str(tmp_path / "l")), LockedAsof)


def test_a_stream_of_both_sides_applies_each_micro_batch_once(spark, tmp_path):
    import pyarrow.parquet as pq

    trades = pd.DataFrame({"time": [1, 5, 9], "sym": ["a", "b", "a"], "qty": [1, 2, 3]})
    quotes = pd.DataFrame({"time": [0, 0], "sym": ["a", "b"], "px": [10.0, 20.0]})
    path, inbox, checkpoint = str(tmp_path / "state"), tmp_path / "in", str(tmp_path / "checkpoint")
    inbox.mkdir()
    # one file a micro-batch; a row's side in 'side'; columns of the other side null
    files = [
        pd.DataFrame({"side": ["right", "left"], "time": [4, 6], "sym": ["a", "a"], "qty": [None, 4.0],
                      "px": [11.0, None], "diff": [1, 1]}),
        pd.DataFrame({"side": ["right"], "time": [0], "sym": ["b"], "qty": [None], "px": [20.0], "diff": [-1]}),
    ]
    schema = "side string, time long, sym string, qty double, px double, diff long"

    view = faq.asof_join(trades.astype({"qty": float}), quotes, on="time", by="sym", maintained=True, state=path)
    expected = faq.asof_join(trades.astype({"qty": float}), quotes, on="time", by="sym", maintained=True)
    for number, frame in enumerate(files):
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), str(inbox / f"{number:03d}.parquet"))
        parts = {side: rows.drop(columns=["side", "px" if side == "left" else "qty"])
                 for side, rows in frame.groupby("side")}
        expected.apply(parts)
    in_stream_order(inbox / f"{number:03d}.parquet" for number in range(len(files)))

    def run():
        source = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(inbox))
        query = view.stream(source, checkpoint=checkpoint, factor_column="side",
                            trigger={"availableNow": True})
        query.awaitTermination()
        assert query.exception() is None

    run()
    assert view.version == 2 and view.table().to_pylist() == expected.table().to_pylist()
    run()  # the same checkpoint again: nothing new, nothing applied twice
    assert view.version == 2
    view.close()
    again = MaintainedAsof.open(path)
    assert again.table().to_pylist() == expected.table().to_pylist()
    again.close()
