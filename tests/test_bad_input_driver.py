"""Bad input found on the driver, without Spark: a catalog error, exit code 2, before any session exists.

The ``faq`` command runs as a subprocess (``python -m faq``): no Spark session
exists in it, and none starts for these inputs, which is the case the
in-process tests (run beside the test session) cannot see -- a Spark Column
built before a session exists failed with a bare ``AssertionError``.  Each
case checks the exit code (2), one line on stderr naming the error class, the
file and the line, and that ``--out`` left nothing behind.  The library cases
run without the ``spark`` fixture: conftest.py's guard fails a test that
reaches Spark.  Only the last test starts Spark (in its subprocess): an edge
list of the irregular shape goes to the Spark path, whose error must be the same.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from faq import io
from faq.errors import InvalidFactorValueError, MalformedInputError
from faq.graphs.edges import prepared_graph
from faq.io.local_edges import line_problem

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
RANGE = f"64-bit integers run from {INT64_MIN} to {INT64_MAX}"

#: name -> (text, line number, the line, a fragment of the reason)
BAD_EDGE_LISTS = {
    "word.txt": ("1 2\n2 foo\n", 2, "2 foo", "node id 'foo' is not a 64-bit integer"),
    "exponent.txt": ("# ids\n1 2\n2 1e12\n", 3, "2 1e12", "node id '1e12' is not a 64-bit integer"),
    "over.txt": (f"1 2\n2 {2**63}\n", 2, f"2 {2**63}", RANGE),
    "under.txt": (f"1,2\n{INT64_MIN - 1},2\n", 2, f"{INT64_MIN - 1},2", RANGE),
    "one_field.txt": ("1\t2\n2\t3\n7\n", 3, "7", "expected at least 2 fields"),
    "decimal.txt": ("1 2\n3.5 1\n", 2, "3.5 1", "node id '3.5'"),
}


def faq_command(*argv, cwd) -> tuple[int, str, str]:
    """``python -m faq ARGV`` in a fresh process: (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FAQ_DEBUG", "SPARK_REMOTE", "FAQ_REMOTE")}
    done = subprocess.run([sys.executable, "-m", "faq", *map(str, argv)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def assert_refused(tmp_path, argv, error_class, *fragments) -> str:
    """Exit code 2, one stderr line ``faq: error: [CLASS] ...`` holding every fragment, nothing written."""
    before = set(os.listdir(tmp_path))
    code, out, err = faq_command(*argv, "-q", cwd=tmp_path)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, (code, err)
    assert lines[0].startswith(f"faq: error: [{error_class}] "), lines[0]
    assert all(f in lines[0] for f in fragments), (lines[0], fragments)
    assert set(os.listdir(tmp_path)) == before, "bad input left a file behind"
    return lines[0]


def write_edges(tmp_path, name: str) -> str:
    path = tmp_path / name
    path.write_text(BAD_EDGE_LISTS[name][0])
    return str(path)


# --- malformed edge lists ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BAD_EDGE_LISTS))
def test_a_malformed_edge_list_is_refused_by_the_library_without_spark(tmp_path, name):
    path = write_edges(tmp_path, name)
    _, line_number, line, reason = BAD_EDGE_LISTS[name]
    for read in (io.read_edge_list, io.read_factor, lambda p: prepared_graph(p, directed=False)):
        with pytest.raises(MalformedInputError) as info:
            read(path)
        p = info.value.parameters
        assert (p["path"], p["line_number"], p["line"]) == (path, line_number, line)
        assert reason in p["reason"]


@pytest.mark.parametrize("name", sorted(BAD_EDGE_LISTS))
def test_a_malformed_edge_list_on_the_command_line(tmp_path, name):
    path = write_edges(tmp_path, name)
    _, line_number, line, reason = BAD_EDGE_LISTS[name]
    assert_refused(tmp_path, ["triangles", path], "MALFORMED_INPUT", f"{path}, line {line_number}: ", reason,
                   repr(line))


@pytest.mark.parametrize("name", ["word.txt", "over.txt"])
def test_a_malformed_edge_list_leaves_no_output(tmp_path, name):
    path = write_edges(tmp_path, name)
    out = tmp_path / "out.csv"
    assert_refused(tmp_path, ["query", "p(a) := e(a,b)", "--factor", f"e={path}", "--out", out], "MALFORMED_INPUT",
                   path, f"line {BAD_EDGE_LISTS[name][1]}")
    assert not out.exists()


def test_a_long_bad_line_is_clipped(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("1 2\n2 " + "x" * 5000 + "\n")
    line = assert_refused(tmp_path, ["triangles", path], "MALFORMED_INPUT", "line 2")
    assert len(line) < 400 and "..." in line


def test_ids_over_the_whole_int64_range_are_valid(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_text(f"{INT64_MAX} {INT64_MIN}\n{INT64_MIN} 1000000000000\n1000000000000 {INT64_MAX}\n")
    code, out, err = faq_command("triangles", path, "-q", cwd=tmp_path)
    assert code == 0 and out.startswith(f"{path}: 1 undirected triangles"), err
    src, dst = io.local_edges.read_edge_arrays(str(path))
    assert src.tolist() == [INT64_MAX, INT64_MIN, 10**12] and dst.tolist() == [INT64_MIN, 10**12, INT64_MAX]


def test_a_negative_count_in_an_edge_list_is_a_malformed_line():
    """The Spark path's weight check, in its Python twin (the Spark path itself: test_bad_input.py)."""
    assert "is negative" in line_problem("1 2 -5", 3, "bigint", counts=True)
    assert line_problem("1 2 -5", 3, "bigint", counts=False) is None  # the integer ring takes it


# --- update files cut short ----------------------------------------------------------------------


@pytest.fixture
def cut_updates(tmp_path):
    folder = tmp_path / "updates"
    folder.mkdir()
    (folder / "001.txt").write_text("+ 1 2\n- 2 3\n")
    (folder / "002.txt").write_text("+ 3 4\n+ 123 4")  # the writer stopped inside '+ 123 45'
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n3 1\n")
    return graph, folder


def test_a_cut_last_line_of_an_update_file_is_refused(cut_updates):
    _, folder = cut_updates
    path = str(folder / "002.txt")
    with pytest.raises(MalformedInputError) as info:
        io.read_batch(path)
    p = info.value.parameters
    assert (p["path"], p["line_number"], p["line"]) == (path, 2, "+ 123 4")
    assert "no line break" in p["reason"]
    with pytest.raises(MalformedInputError):
        io.read_updates(folder)


@pytest.mark.parametrize("text", ["+ 1 2\n# the end", "+ 1 2\n\n   ", "+ 1 2\r"])
def test_a_last_line_without_data_needs_no_line_break(tmp_path, text):
    path = tmp_path / "b.txt"
    path.write_bytes(text.encode())
    assert io.read_batch(path).inserts == ((1, 2, None),)


@pytest.mark.parametrize("command", ["components", "track"])
def test_a_cut_update_file_on_the_command_line(cut_updates, tmp_path, command):
    graph, folder = cut_updates
    argv = {"components": ["components", graph, "--updates", folder, "--out", tmp_path / "out.csv"],
            "track": ["track", "(a)->(b)", graph, folder]}[command]
    assert_refused(tmp_path, argv, "MALFORMED_INPUT", str(folder / "002.txt"), "line 2", "no line break")


# --- values a semiring does not hold, from driver objects ------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: io.from_pandas(pd.DataFrame({"a": [1, 2], "value": [3, -5]}), name="t"),
        lambda: io.from_numpy(np.array([[1, -5], [0, 2]]), semiring="counting", name="t"),
    ],
)
def test_a_negative_count_from_the_driver_is_refused(make):
    with pytest.raises(InvalidFactorValueError) as info:
        make()
    p = info.value.parameters
    assert (p["factor"], p["column"], p["problem"], p["count"]) == ("t", "value", "negative", 1)
    assert "semiring='integer'" in str(info.value)


# --- the Spark path, in a process where no session exists ------------------------------------------


def test_an_irregular_malformed_edge_list_goes_to_spark_and_is_refused_the_same(tmp_path):
    """A run of blanks is not the driver path's shape: Spark reads the file, in a process that had no
    session (the Columns must be built after it starts), and names the same line (starts Spark: ~20 s)."""
    path = tmp_path / "irregular.txt"
    path.write_text("1 2\n2  3\n3 foo\n")
    assert io.local_edges.read_edge_arrays(str(path)) is None
    out = tmp_path / "out.csv"
    assert_refused(tmp_path, ["query", "p(a) := e(a,b)", "--factor", f"e={path}", "--out", out], "MALFORMED_INPUT",
                   f"{path}, line 3: node id 'foo' is not a 64-bit integer: '3 foo'")
