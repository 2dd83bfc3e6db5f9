"""The driver load path of edge lists (faq.io.local_edges) against the Spark path and a Python reference.

The driver path may refuse a file (it then falls back to Spark); it must never
accept a file and read it differently.  So: on the real files in tests/data it
accepts and equals an independent Python parse and the Spark path; on files
with the quirks it cannot split by one separator, or with ids Arrow would take
but the Spark path rejects, it refuses, and ``read_edge_list`` gives the Spark
path's rows or error.
"""

from __future__ import annotations

import gzip
import os
import re
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest

from faq import io
from faq.errors import MalformedInputError
from faq.graphs.edges import degree_oriented, prepared_graph, simple_directed
from faq.graphs.triangles import triangle_count
from faq.insideout.executor import StepEvent
from faq.io import local_edges
from faq.io.local_edges import degree_orient, read_edge_arrays, unique_pairs, without_self_loops

DATA = os.path.join(os.path.dirname(__file__), "data")
SNAP_FILES = sorted(f for f in os.listdir(DATA) if f.endswith((".txt", ".txt.gz", ".csv.gz")))


def python_edges(path: str) -> list[tuple[int, int]]:
    """A reference parse in plain Python: every data line's first two fields, in file order."""
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt", newline=None) as handle:
        for raw in handle:
            line = raw.strip(" \t\r\n\f\v")
            if not line or line.startswith(("#", "%")):
                continue
            fields = re.split(r"[ \t\r\f\v,]+", line)
            out.append((int(fields[0]), int(fields[1])))
    return out


def write(tmp_path, name: str, text: str, newline: str = "\n") -> str:
    path = os.path.join(tmp_path, name)
    data = text.replace("\n", newline).encode()
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "wb") as handle:
        handle.write(data)
    return path


def rows(factor) -> list[tuple]:
    return sorted(tuple(r) for r in factor.df.select(*factor.columns()).collect())


# --- no Spark: the reader and the numpy cleaning ---------------------------------------------


@pytest.mark.parametrize("file", SNAP_FILES)
def test_real_files_equal_a_python_parse(file):
    path = os.path.join(DATA, file)
    arrays = read_edge_arrays(path)
    assert arrays is not None, "the SNAP files are of the regular shape: the driver path must take them"
    src, dst = arrays
    assert src.dtype == np.int64 and dst.dtype == np.int64
    assert list(zip(src.tolist(), dst.tolist())) == python_edges(path)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("name", ["g.txt", "g.txt.gz", "g.txt.bz2"])
def test_header_comments_blank_lines_and_line_ends(tmp_path, name, newline):
    text = "# SNAP header\n% another\n\n1\t2\tx\n\n2\t3\ty\n3\t1\tmore fields are ignored\n"
    if name.endswith(".bz2"):
        import bz2

        path = os.path.join(tmp_path, name)
        with bz2.open(path, "wb") as handle:
            handle.write(text.replace("\n", newline).encode())
    else:
        path = write(tmp_path, name, text, newline)
    src, dst = read_edge_arrays(path)
    assert list(zip(src.tolist(), dst.tolist())) == [(1, 2), (2, 3), (3, 1)]


def test_commas_and_wide_ids(tmp_path):
    path = write(tmp_path, "w.csv", "1000000000000,7\n7,-3\n9223372036854775807,-9223372036854775808\n")
    src, dst = read_edge_arrays(path)
    assert src.tolist() == [1000000000000, 7, 9223372036854775807]
    assert dst.tolist() == [7, -3, -9223372036854775808]


@pytest.mark.parametrize("text", ["1 0000000000000000001\n-1234567890123456789 2\n", "7 -0\n007 1\n"])
def test_the_unchecked_parse_and_the_checked_one_agree(tmp_path, text):
    """19-digit ids, a sign, leading zeros: read as plain integers (short lines) or checked as strings."""
    from faq.io import local_edges
    from faq.io.local_edges import _plain_integers

    expected = [tuple(int(x) for x in line.split()) for line in text.splitlines()]
    src, dst = read_edge_arrays(write(tmp_path, "ok.txt", text))
    assert list(zip(src.tolist(), dst.tolist())) == expected
    first = text.splitlines()[0]
    short = all(len(line) <= 21 for line in text.splitlines())
    for piece in (local_edges._SCAN_BYTES, 4):  # a line across pieces is measured whole
        with mock.patch.object(local_edges, "_SCAN_BYTES", piece):
            assert _plain_integers(pa.py_buffer(text.encode()), " ") == short
            assert _plain_integers(pa.py_buffer((first + "\n").encode()), " ")


def test_empty_and_comment_only_files(tmp_path):
    for text in ("", "# only a comment\n", "\n\n"):
        src, dst = read_edge_arrays(write(tmp_path, "e.txt", text))
        assert len(src) == len(dst) == 0


@pytest.mark.parametrize(
    "text",
    [
        "1 2\n  2 3  \n",  # blanks around a line: Spark trims them
        "1 2\n2  3\n",  # a run of separators
        "1\t2\n2 3\n",  # another separator
        "1 2\n# a comment in the middle\n2 3\n",
        "1 2\n   \n2 3\n",  # a line of blanks
        "1 2\n+2 3\n",  # valid for Spark; Arrow's cast refuses the sign, so Spark reads it
        "\ufeff1 2\n",  # a byte-order mark is part of the first id for Spark
        " 1 2\n",
        "1 2\n2 \n",  # an empty field: Arrow and Spark split it differently
        "1 2\n2\t3\n",
        "1\t2\n2 x\t3\n",  # malformed, but Arrow's first field holds a blank: Spark reports it
    ],
)
def test_irregular_files_are_left_to_spark(tmp_path, text):
    assert read_edge_arrays(write(tmp_path, "odd.txt", text)) is None


@pytest.mark.parametrize(
    "text, line_number, reason",
    [
        ("1 2\n2 0x1F\n", 2, "node id '0x1F' is not a 64-bit integer"),  # Arrow's integer parser takes hex
        ("1 2\n00000000000000000001 2\n", 2, "at most 19 digits"),  # Arrow takes it, the Spark path does not
        ("1 2\n99999999999999999999 1\n", 2, "64-bit integers run from"),
        ("1 2\n9223372036854775808 1\n", 2, "64-bit integers run from -9223372036854775808 to 9223372036854775807"),
        ("1 2\n1e12 1\n", 2, "node id '1e12' is not a 64-bit integer"),
        ("# h\n1 2\n3\n", 3, "expected at least 2 fields"),
        ("1 2\n3\t\n", 2, "expected at least 2 fields"),  # one field once the line is trimmed
        ('"1" 2\n', 1, "node id '\"1\"'"),  # quotes are characters, not quoting
        # Plain digits and '-' (the unchecked int64 parse) that are still not ids:
        ("1 2\n2 -\n", 2, "node id '-'"),
        ("1 2\n5-3 1\n", 2, "node id '5-3'"),
        ("1,2\n2,foo,x\n", 2, "node id 'foo'"),  # more fields than the first line: the Spark path's error too
    ],
)
def test_malformed_lines_are_reported_without_spark(tmp_path, text, line_number, reason):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(MalformedInputError) as info:
        read_edge_arrays(path)
    p = info.value.parameters
    assert (p["path"], p["line_number"], p["line"]) == (path, line_number, text.split("\n")[line_number - 1])
    assert reason in p["reason"]


def test_uris_globs_directories_and_large_files_are_left_to_spark(tmp_path, monkeypatch):
    path = write(tmp_path, "g.txt", "1 2\n")
    assert read_edge_arrays("file://" + path) is not None
    assert read_edge_arrays("hdfs://namenode/g.txt") is None
    assert read_edge_arrays(os.path.join(tmp_path, "*.txt")) is None
    assert read_edge_arrays(str(tmp_path)) is None
    assert read_edge_arrays(os.path.join(tmp_path, "missing.txt")) is None
    monkeypatch.setattr(local_edges, "MAX_BYTES", 2)
    assert read_edge_arrays(path) is None


def test_truncated_gzip_is_left_to_spark(tmp_path):
    path = write(tmp_path, "g.txt.gz", "1 2\n" * 1000)
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 2)
    assert read_edge_arrays(path) is None


def test_unique_pairs_and_orientation_equal_python():
    rng = np.random.default_rng(7)
    for low, high in ((0, 50), (-(2**62), 2**62)):  # packed keys, then the lexsort branch
        pool = rng.integers(low, high, size=40)
        src, dst = rng.choice(pool, 500), rng.choice(pool, 500)
        u, v = unique_pairs(*without_self_loops(src, dst))
        assert list(zip(u.tolist(), v.tolist())) == sorted({(a, b) for a, b in zip(src.tolist(), dst.tolist()) if a != b})
        pairs = {(min(a, b), max(a, b)) for a, b in zip(src.tolist(), dst.tolist()) if a != b}
        degree: dict[int, int] = {}
        for a, b in pairs:
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        expected = sorted((a, b) if (degree[a], a) < (degree[b], b) else (b, a) for a, b in pairs)
        assert sorted(zip(*(x.tolist() for x in degree_orient(src, dst)))) == expected


# --- with Spark: the same rows as the Spark path -----------------------------------------------


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"self_loops": "keep"},
        {"undirected": True},
        {"duplicates": "keep"},
        {"duplicates": "sum", "undirected": True, "self_loops": "keep"},
        {"semiring": "boolean", "duplicates": "sum"},
        {"semiring": "real", "variables": ("a", "b")},
    ],
)
def test_read_edge_list_engines_agree(tmp_path, options):
    path = os.path.join(DATA, "email-Eu-core.txt.gz")  # 25,571 records, 642 self-loops
    fast, spark = (io.read_edge_list(path, engine=e, **options) for e in ("auto", "spark"))
    assert fast.variables == spark.variables and fast.semiring == spark.semiring and fast.name == spark.name
    assert fast.df.dtypes == spark.df.dtypes
    assert rows(fast) == rows(spark)
    small = write(tmp_path, "d.txt", "1 2\n1 2\n2 1\n3 3\n2 3\n")
    assert rows(io.read_edge_list(small, engine="auto", **options)) == rows(io.read_edge_list(small, engine="spark", **options))


@pytest.mark.usefixtures("spark")
def test_fallback_keeps_the_spark_paths_rows_and_errors(tmp_path):
    odd = write(tmp_path, "odd.txt", "# h\n  1 2  \n2\t 3\n% c\n+3,1\n")
    assert read_edge_arrays(odd) is None
    assert rows(io.read_edge_list(odd)) == [(1, 2, 1), (2, 3, 1), (3, 1, 1)]
    for text, number in (("1 2\r\n2 0x1F\r\n", 2), ("# h\n1 2\n00000000000000000001 2\n", 3)):
        path = write(tmp_path, "bad.txt", text)
        with pytest.raises(MalformedInputError) as info:
            io.read_edge_list(path)
        assert (info.value.parameters["path"], info.value.parameters["line_number"]) == (path, number)


@pytest.mark.usefixtures("spark")
def test_prepared_graph_equals_the_spark_functions():
    path = os.path.join(DATA, "ca-GrQc.txt")  # tab-separated, CRLF, a 4-line header, self-loops
    raw = io.read_edge_list(path, engine="spark")
    assert rows(prepared_graph(path, directed=True)) == rows(simple_directed(raw))
    assert rows(prepared_graph(path, directed=False)) == rows(degree_oriented(raw))


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize("directed", [True, False])
def test_the_held_rows_are_the_rows_spark_reads(directed):
    """prepared_graph keeps its arrays (Factor.relation): the very rows of its DataFrame, counted without Spark."""
    graph = prepared_graph(os.path.join(DATA, "ca-GrQc.txt"), directed=directed)
    copy = graph.relation.arrays
    held = sorted(zip(*(copy[c].tolist() for c in graph.columns())))
    assert held == rows(graph) and graph.count() == len(held) == graph.relation.rows
    some = graph.df.where(f"src > {int(np.median(copy['src']))}")  # the DataFrame Spark reads: the same rows
    assert 0 < some.count() < graph.count()


@pytest.mark.usefixtures("spark")
def test_the_broadcast_index_is_built_from_the_held_rows():
    """On the executors (a broadcast index) as in-process (the default here), the index is built
    from the rows the driver read, never collected back from Spark."""
    from faq.spark import get_session

    events = []
    spark = get_session()
    spark.conf.set("spark.faq.placement", "executors")
    try:
        result = triangle_count(os.path.join(DATA, "ca-GrQc.txt"), directed=True, progress=events.append)
    finally:
        spark.conf.unset("spark.faq.placement")
    notes = [e.note for e in events if isinstance(e, StepEvent) and e.kind == "done"]
    assert any("rows held on the driver, not collected" in n for n in notes), notes
    # The SNAP file lists both directions of every undirected edge: each triangle is 6 feed-forward ones.
    assert result.count == 6 * 48260


@pytest.mark.usefixtures("spark")
def test_count_triangles_reports_load_apart():
    events = []
    result = triangle_count(os.path.join(DATA, "ca-GrQc.txt"), progress=events.append)
    assert result.count == 48260  # SNAP's published count (graphs-MANIFEST.tsv)
    load = [e for e in events if isinstance(e, StepEvent) and e.kind == "load"]
    assert len(load) == 1 and load[0].rows == result.edges == 14484
    assert events[0] is load[0]  # before the join's steps
    assert 0 < result.load_seconds <= result.seconds
    assert result.join_seconds == pytest.approx(result.seconds - result.load_seconds)
    summary = result.to_dict()
    assert {"load_seconds", "join_seconds"} <= set(summary)
