"""``faq asof`` on the command line: the join of two files without Spark, its output written whole or not
at all, and bad input refused with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest


def faq(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "faq", *argv], capture_output=True, text=True, timeout=120)


@pytest.fixture()
def files(tmp_path):
    trades = pd.DataFrame({"time": [1, 4, 0, 9], "sym": ["a", "a", "b", "b"], "qty": [5, 7, 1, 2]})
    quotes = pd.DataFrame({"time": [1, 3, 2], "sym": ["a", "a", "b"], "px": [10.0, 11.0, 20.0]})
    trades.to_csv(tmp_path / "trades.csv", index=False)
    quotes.to_parquet(tmp_path / "quotes.parquet")
    return tmp_path, trades, quotes


def test_the_join_is_pandas_merge_asof_and_written_to_parquet(files):
    tmp, trades, quotes = files
    out = tmp / "joined.parquet"
    done = faq("asof", str(tmp / "trades.csv"), str(tmp / "quotes.parquet"), "--on", "time", "--by", "sym",
               "--direction", "nearest", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["rows"] == 4 and summary["matched"] == 4 and summary["out"] == str(out)
    expected = pd.merge_asof(trades.sort_values("time"), quotes.sort_values("time"), on="time", by="sym",
                             direction="nearest")
    got = pd.read_parquet(out).sort_values("time").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected.reset_index(drop=True), check_dtype=False)
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_a_preview_without_out(files):
    tmp, _, _ = files
    done = faq("asof", str(tmp / "trades.csv"), str(tmp / "quotes.parquet"), "--on", "time", "--by", "sym")
    assert done.returncode == 0, done.stderr
    assert "4 rows, 3 matched (backward)" in done.stdout and "px" in done.stdout


@pytest.mark.parametrize("argv, message", [
    (["--on", "when"], "no column 'when'"),
    (["--on", "time", "--by", "ticker"], "no column 'ticker'"),
    (["--on", "time", "--out", "joined.json"], "OUTPUT_SUFFIX"),
])
def test_bad_input_exits_2_and_writes_nothing(files, argv, message):
    tmp, _, _ = files
    done = faq("asof", str(tmp / "trades.csv"), str(tmp / "quotes.parquet"), *argv)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert sorted(p.name for p in tmp.iterdir()) == ["quotes.parquet", "trades.csv"]


def test_a_missing_file_exits_2(tmp_path):
    done = faq("asof", str(tmp_path / "nope.csv"), str(tmp_path / "nope.parquet"), "--on", "time")
    assert done.returncode == 2 and "no such file" in done.stderr


def test_batch_files_keep_the_join_current_resume_from_the_state_and_write_each_change(files):
    tmp, trades, quotes = files
    updates, state, changes = tmp / "updates", tmp / "state", tmp / "changes"
    updates.mkdir()
    # a late quote for a (reprices the trade at 4), a new trade for b, a quote of b deleted
    pd.DataFrame({"side": ["right", "left", "right"], "time": [4, 10, 2], "sym": ["a", "b", "b"],
                  "qty": [None, 3, None], "px": [12.0, None, 20.0], "diff": [1, 1, -1]}) \
        .to_csv(updates / "001.csv", index=False)
    args = ["asof", str(tmp / "trades.csv"), str(tmp / "quotes.parquet"), "--on", "time", "--by", "sym",
            "--updates", str(updates), "--state", str(state), "--changes", str(changes), "--json"]
    done = faq(*args)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[1]["batch"] == "001.csv" and lines[1]["change_rows"] == {"left": 1, "right": 2}
    change = pd.read_parquet(changes / "version-1.parquet")
    assert sorted(zip(change["time"], change["sym"], change["px"].fillna(-1), change["diff"])) == [
        (4, "a", 11.0, -1), (4, "a", 12.0, 1), (9, "b", -1.0, 1), (9, "b", 20.0, -1), (10, "b", -1.0, 1)]

    pd.DataFrame({"side": ["left"], "time": [10], "sym": ["b"], "qty": [3], "diff": [-1]}) \
        .to_parquet(updates / "002.parquet")
    again = faq(*args[:-1])  # resumed: 001 skipped, 002 applied
    assert again.returncode == 0, again.stderr
    assert "resumed at version 1" in again.stdout and "batch 002.parquet: +0 -1 joined rows" in again.stdout

    (updates / "003.csv").write_text("time,sym,px\n5,a,1.0\n")  # no side column
    bad = faq(*args)
    assert bad.returncode == 2 and "side" in bad.stderr
    bad = faq("asof", str(tmp / "trades.csv"), str(tmp / "quotes.parquet"), "--on", "time", "--follow")
    assert bad.returncode == 2 and "--updates" in bad.stderr
