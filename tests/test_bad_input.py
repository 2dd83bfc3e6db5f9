"""Bad input at the edges: null keys, values no semiring holds, corrupt or truncated files, malformed edge
lists read by Spark, deltas with the wrong multiplicity column -> a named error, exit code 2, no output.

Each case goes through the API (the class and its parameters) and through
:func:`faq.cli.main` in-process (exit code 2, one line naming the file, nothing
written) where the command line reads it.  The files are tiny and made in
``tmp_path``.  Bad input found without Spark, and the command run as a
process of its own, are tests/test_bad_input_driver.py's.
"""

import gzip
import math
import os

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import faq
from faq import io
from faq.errors import InvalidDeltaError, InvalidFactorValueError, MalformedInputError, NullKeyError
from faq.factor import factor_of
from faq import maintain, track
from tests.helpers import error_lines, run

MTX_HEADER = "%%MatrixMarket matrix coordinate real general\n"


def assert_refused(capsys, tmp_path, argv, out, *fragments):
    """Exit code 2, one error line holding every fragment, and no output (not even a temporary file)."""
    before = set(os.listdir(tmp_path))
    code, _, err = run(capsys, *argv, "--out", out, "-q")
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("faq: error: [") and all(f in lines[0] for f in fragments), lines[0]
    assert not os.path.exists(out) and set(os.listdir(tmp_path)) == before


# --- null keys ---------------------------------------------------------------------------------


@pytest.fixture
def null_csv(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n,3\n4,5\n,6\n")  # two empty fields in column a, the first on line 3
    return path


@pytest.fixture
def null_parquet(tmp_path):
    path = tmp_path / "bad.parquet"
    pd.DataFrame({"a": [1, None, 4], "b": [2, 3, 5]}, dtype="Int64").to_parquet(path)
    return path


@pytest.mark.parametrize("read", [io.read_csv, io.read_factor])
@pytest.mark.usefixtures("spark")
def test_a_null_key_in_a_csv_file_is_refused(null_csv, read):
    with pytest.raises(NullKeyError) as info:
        read(null_csv)
    p = info.value.parameters
    assert (p["path"], p["factor"], p["column"], p["count"]) == (str(null_csv), "bad", "a", 2)
    assert p["row"] == '{"a":null,"b":3}'  # the first such row, in file order
    assert str(null_csv) in str(info.value) and "'a' has 2 null value(s)" in str(info.value)


@pytest.mark.parametrize("read", [io.read_parquet, io.read_factor])
@pytest.mark.usefixtures("spark")
def test_a_null_key_in_a_parquet_file_is_refused(null_parquet, read):
    with pytest.raises(NullKeyError) as info:
        read(null_parquet, variables=["a"], value="b")
    p = info.value.parameters
    assert (p["path"], p["column"], p["count"], p["row"]) == (str(null_parquet), "a", 1, '{"a":null,"b":3}')


@pytest.mark.usefixtures("spark")
def test_a_table_without_null_keys_still_loads(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("a,b,value\n1,2,1\n2,3,4\n")
    assert io.read_csv(path).count() == 2
    relation = tmp_path / "relation.csv"
    relation.write_text("a,b\n1,2\n2,3\n")  # no value column: every row is one
    assert io.read_csv(relation).count() == 2


@pytest.mark.parametrize("table", ["null_csv", "null_parquet"])
@pytest.mark.usefixtures("spark")
def test_a_null_key_on_the_command_line(capsys, tmp_path, request, table):
    path = request.getfixturevalue(table)
    argv = ["query", "p(a) := e(a,b)", "--factor", f"e={path}"]
    assert_refused(capsys, tmp_path, argv, tmp_path / "out.csv", "[NULL_KEY]", str(path), "'a'")


# --- corrupt and truncated files ------------------------------------------------------------------


def truncated_gzip(text: str) -> bytes:
    packed = gzip.compress(text.encode())
    return packed[: len(packed) // 2]


@pytest.fixture
def corrupt_parquet(tmp_path):
    path = tmp_path / "corrupt.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file")
    return path


@pytest.fixture
def truncated_csv_gz(tmp_path):
    path = tmp_path / "truncated.csv.gz"
    path.write_bytes(truncated_gzip("a,b\n" + "".join(f"{i},{i + 1}\n" for i in range(2000))))
    return path


@pytest.mark.parametrize("table, read", [("corrupt_parquet", io.read_parquet), ("truncated_csv_gz", io.read_csv)])
@pytest.mark.usefixtures("spark")
def test_a_corrupt_or_truncated_table_is_malformed_input(request, table, read):
    path = request.getfixturevalue(table)
    with pytest.raises(MalformedInputError) as info:
        read(path)
    assert info.value.parameters["path"] == str(path) and str(path) in str(info.value)
    assert "corrupt or truncated" in info.value.parameters["reason"]


@pytest.mark.usefixtures("spark")
def test_a_truncated_edge_list_is_malformed_input(tmp_path):
    path = tmp_path / "truncated.txt.gz"
    path.write_bytes(truncated_gzip("".join(f"{i} {i + 1}\n" for i in range(2000))))
    with pytest.raises(MalformedInputError) as info:
        io.read_edge_list(path)
    assert info.value.parameters["path"] == str(path) and "truncated" in info.value.parameters["reason"]


@pytest.mark.parametrize("table", ["corrupt_parquet", "truncated_csv_gz"])
@pytest.mark.usefixtures("spark")
def test_a_corrupt_or_truncated_table_on_the_command_line(capsys, tmp_path, request, table):
    path = request.getfixturevalue(table)
    argv = ["query", "p(a) := e(a,b)", "--factor", f"e={path}"]
    assert_refused(capsys, tmp_path, argv, tmp_path / "out.parquet", "[MALFORMED_INPUT]", str(path))


BAD_MATRICES = {  # name -> (content, line_number or None, a fragment of the reason)
    "header.mtx": ("%%MatrixMarket matrix coordinat real general\n2 2 1\n1 1 1.0\n", 1, "header"),
    "truncated.mtx": (MTX_HEADER + "3 3 3\n1 1 1.0\n2 2 2.0\n", None, "Truncated"),
    "value.mtx": (MTX_HEADER + "3 3 2\n1 1 abc\n2 2 2.0\n", 3, "floating-point"),
    "truncated.mtx.gz": (None, None, "truncated"),
}


def write_matrix(tmp_path, name):
    path = tmp_path / name
    text = BAD_MATRICES[name][0]
    if text is None:
        entries = "".join(f"{i % 100 + 1} 1 1.0\n" for i in range(300))
        path.write_bytes(truncated_gzip(MTX_HEADER + "100 100 300\n" + entries))
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(BAD_MATRICES))
def test_a_bad_matrix_market_file_is_malformed_input(tmp_path, name):
    path = write_matrix(tmp_path, name)
    with pytest.raises(MalformedInputError) as info:
        io.read_matrix_market(path)
    _, line, fragment = BAD_MATRICES[name]
    assert info.value.parameters["path"] == str(path) and info.value.parameters.get("line_number") == line
    assert fragment in info.value.parameters["reason"]


def test_a_bad_matrix_market_header_is_malformed_before_any_read(tmp_path):
    with pytest.raises(MalformedInputError):
        io.matrix_shape(write_matrix(tmp_path, "header.mtx"))


@pytest.mark.parametrize("name", ["header.mtx", "truncated.mtx"])
@pytest.mark.usefixtures("spark")
def test_a_bad_matrix_on_the_command_line(capsys, tmp_path, name):
    good = tmp_path / "good.mtx"
    good.write_text(MTX_HEADER + "3 3 1\n1 1 1.0\n")
    path = write_matrix(tmp_path, name)
    argv = ["matrix-chain", good, path]
    assert_refused(capsys, tmp_path, argv, tmp_path / "out.mtx", "[MALFORMED_INPUT]", str(path))


# --- values no semiring holds: null, NaN, a negative count ------------------------------------------

BAD_VALUES = {  # name -> (rows of a, b, value; semiring; problem; count; the first bad row's a)
    "null": ([(1, 2, 1.0), (2, 3, None), (3, 4, None)], "counting", "null", 2, 2),
    "nan": ([(1, 2, 1.5), (2, 3, 2.0), (3, 4, float("nan"))], "real", "NaN", 1, 3),
    "negative": ([(1, 2, 3), (2, 3, -5), (3, 4, 1)], "counting", "negative", 1, 2),
}


def write_values(tmp_path, name: str, suffix: str):
    rows, *_ = BAD_VALUES[name]
    path = tmp_path / f"{name}{suffix}"
    if suffix == ".csv":
        text = "".join(f"{a},{b},{'' if v is None else 'NaN' if v != v else v}\n" for a, b, v in rows)
        path.write_text("a,b,value\n" + text)
    else:  # Arrow keeps a NaN a NaN (pandas would write it as a null)
        value = pa.array([v for _, _, v in rows], pa.int64() if name == "negative" else pa.float64())
        pq.write_table(pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows], "value": value}), path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("name", sorted(BAD_VALUES))
@pytest.mark.usefixtures("spark")
def test_a_value_no_semiring_holds_is_refused_with_its_row(tmp_path, name, suffix):
    path = write_values(tmp_path, name, suffix)
    _, semiring, problem, count, first = BAD_VALUES[name]
    with pytest.raises(InvalidFactorValueError) as info:
        io.read_factor(path, semiring=semiring)
    p = info.value.parameters
    assert (p["path"], p["factor"], p["column"], p["problem"], p["count"]) == (str(path), name, "value", problem, count)
    assert p["row"].startswith(f'{{"a":{first},')  # the first such row, in file order
    assert str(path) in str(info.value)
    assert ("semiring='integer'" if problem == "negative" else "fill or drop") in str(info.value)


@pytest.mark.usefixtures("spark")
def test_a_negative_value_is_a_value_of_the_integer_ring(tmp_path):
    path = write_values(tmp_path, "negative", ".csv")
    assert sorted(tuple(r) for r in io.read_csv(path, semiring="integer").df.collect()) == [(1, 2, 3), (2, 3, -5),
                                                                                              (3, 4, 1)]


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
@pytest.mark.usefixtures("spark")
def test_a_bad_value_on_the_command_line(capsys, tmp_path, name):
    path = write_values(tmp_path, name, ".csv")
    semiring = BAD_VALUES[name][1]
    argv = ["query", "p(a) := e(a,b)", "--factor", f"e={path}", "--semiring", semiring]
    assert_refused(capsys, tmp_path, argv, tmp_path / "out.csv", "[INVALID_FACTOR_VALUE]", str(path), "'value'",
                   BAD_VALUES[name][2])


# --- malformed edge lists read by Spark ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kw, line_number, reason",
    [
        ("1 2\n2 foo\n", {"engine": "spark"}, 2, "node id 'foo' is not a 64-bit integer"),
        ("1 2\n2 1e12\n", {"engine": "spark"}, 2, "node id '1e12'"),
        (f"1 2\n{2**63} 1\n", {"engine": "spark"}, 2, "64-bit integers run from"),
        ("1 2 3\n2 3 -5\n", {"weight_column": 3}, 2, "weight '-5' in column 3 is negative"),
    ],
)
@pytest.mark.usefixtures("spark")
def test_a_malformed_edge_list_read_by_spark(tmp_path, text, kw, line_number, reason):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(MalformedInputError) as info:
        io.read_edge_list(path, **kw)
    p = info.value.parameters
    assert (p["path"], p["line_number"], p["line"]) == (str(path), line_number, text.split("\n")[line_number - 1])
    assert reason in p["reason"]


@pytest.mark.usefixtures("spark")
def test_a_negative_weight_is_read_by_the_integer_ring(tmp_path):
    path = tmp_path / "signed.txt"
    path.write_text("1 2 3\n2 3 -5\n")
    rows = sorted(tuple(r) for r in io.read_edge_list(path, weight_column=3, semiring="integer").df.collect())
    assert rows == [(1, 2, 3), (2, 3, -5)]


# --- deltas carrying the other multiplicity column -------------------------------------------------------


def assert_wrong_multiplicity(info, expected: str, found: str) -> None:
    err = info.value
    assert err.error_class == "MULTIPLICITY_COLUMN" and isinstance(err, InvalidDeltaError)
    assert (err.parameters["expected"], err.parameters["found"]) == (expected, found)
    assert f"rename {found!r} to {expected!r}" in str(err)


@pytest.mark.usefixtures("spark")
def test_a_maintained_query_refuses_a_diff_column():
    edges = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1)], ["src", "dst"], "counting")
    with maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edges}) as mq:
        with pytest.raises(InvalidDeltaError) as info:
            mq.apply(edge=pd.DataFrame({"src": [1], "dst": [3], "diff": [-1]}))  # a deletion, meant
        assert_wrong_multiplicity(info, "value", "diff")
        assert mq.version == 0 and mq.scalar() == 1  # nothing applied
        mq.apply(edge=pd.DataFrame({"src": [1], "dst": [3], "value": [-1]}))
        assert mq.scalar() == 0


@pytest.mark.usefixtures("spark")
def test_a_maintained_model_refuses_a_value_column():
    edges = pd.DataFrame({"a": [1, 2, 2], "b": [2, 3, 4], "w": [1.0, 2.0, 3.0]})
    with faq.covariance("edges(a, b)", ["edges.w"], maintained=True, edges=edges) as model:
        with pytest.raises(InvalidDeltaError) as info:
            model.apply(edges=pd.DataFrame({"a": [1], "b": [2], "w": [1.0], "value": [-1]}))
        assert_wrong_multiplicity(info, "diff", "value")
        assert model.version == 0 and model.rows == 3
        model.apply(edges=pd.DataFrame({"a": [1], "b": [2], "w": [1.0], "diff": [-1]}))
        assert model.rows == 2
    named = pd.DataFrame({"a": [1, 2], "b": [2, 3], "value": [1.0, 2.0]})  # a feature named value is data
    with faq.covariance("t(a, b)", ["t.value"], maintained=True, t=named) as model:
        model.apply(t=pd.DataFrame({"a": [5], "b": [6], "value": [4.0]}))
        assert model.rows == 3


@pytest.mark.usefixtures("spark")
def test_a_tracked_motif_refuses_a_value_column():
    edges = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting")
    with track(edges, "(a)->(b); (b)->(c)") as tracker:
        deleting = {"src": [1], "dst": [2], "value": [-1]}
        for batch in ({"edge": pa.table(deleting)}, pd.DataFrame(deleting)):  # a stream's form, and apply's
            with pytest.raises(InvalidDeltaError) as info:
                tracker.apply(batch)
            assert_wrong_multiplicity(info, "diff", "value")
        assert tracker.version == 0 and tracker.count == 1


# --- issue 48: no silent wrong answer, no raw error -------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_paths_refuse_a_nan_weight_and_a_weight_column_that_is_not_there():
    with pytest.raises(InvalidFactorValueError) as info:
        faq.paths([(1, 2, float("nan")), (2, 3, 5.0)], 1)
    assert (info.value.parameters["problem"], info.value.parameters["row"]) == ("NaN", "row 0")
    for edges in ([(1, 2), (2, 3)], pd.DataFrame({"src": [1, 2], "dst": [2, 3]})):
        with pytest.raises(faq.errors.MissingColumnError) as info:
            faq.paths(edges, 1, weight="w")
        assert info.value.parameters["column"] == "w"
    with pytest.raises(faq.errors.FAQValueError) as info:
        faq.paths([("a", "b", 1.0)], 1)
    assert info.value.error_class == "NODE_ID_VALUES" and info.value.parameters["value"] == "a"
    with pytest.raises(faq.errors.FAQValueError) as info:
        faq.paths([(1, 2, 1.0)], 2**70)
    assert info.value.error_class == "INVALID_NODE_ID"


@pytest.mark.parametrize("ids", [(1, float("nan")), (None, 2)])
def test_a_missing_id_in_a_one_shot_graph_job_is_refused(ids):
    for job in (faq.count_triangles, faq.truss, lambda e: faq.motifs(e, "(a)->(b)"), lambda e: faq.paths(e, 1)):
        with pytest.raises(NullKeyError):
            job([ids, (1, 2), (2, 3)])


@pytest.mark.usefixtures("spark")
def test_a_parquet_edge_list_is_read_as_parquet_by_every_graph_job(tmp_path):
    """By its extension or, under any other name, by its magic bytes."""
    for name in ("g.parquet", "g.txt", "g"):
        path = tmp_path / name
        pq.write_table(pa.table({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 4]}), path)
        assert faq.count_triangles(str(path)).count == 1
        assert faq.truss(str(path)).counts == {2: 1, 3: 3}
        assert sorted(map(tuple, faq.io.read_edge_list(path).df.collect())) == [(1, 2, 1), (2, 3, 1), (3, 1, 1),
                                                                                 (3, 4, 1)]
    pq.write_table(pa.table({"src": [1.0, 1.5], "dst": [2, 3]}), tmp_path / "bad.parquet")
    with pytest.raises(faq.errors.FAQValueError) as info:
        faq.count_triangles(str(tmp_path / "bad.parquet"))
    assert info.value.error_class == "NODE_ID_VALUES" and info.value.parameters["row"] == 1


def test_an_asof_csv_cut_inside_its_last_line_is_refused(capsys, tmp_path):
    left, right = tmp_path / "t.csv", tmp_path / "q.csv"
    left.write_text("time,sym,qty\n1,a,5\n3,b,7\n")
    right.write_text("time,sym,px\n1,a,10\n2,b,1")  # '2,b,12' cut to '2,b,1'
    with pytest.raises(MalformedInputError) as info:
        faq.asof_join(str(left), str(right), on="time", by="sym")
    p = info.value.parameters
    assert (p["path"], p["line_number"], p["line"]) == (str(right), 3, "2,b,1") and "no line break" in p["reason"]
    code, _, err = run(capsys, "asof", left, right, "--on", "time", "--by", "sym", "-q")
    assert code == 2 and error_lines(err)[0].startswith("faq: error: [MALFORMED_INPUT] ") and "line 3" in err
    right.write_text("time,sym,px\n1,a,10\n2,b,12\n")  # the same rows, whole
    assert faq.asof_join(str(left), str(right), on="time", by="sym")["px"].tolist() == [10, 12]


def test_an_asof_batch_file_with_a_short_row_is_malformed_input(capsys, tmp_path):
    left, right, updates = tmp_path / "t.csv", tmp_path / "q.csv", tmp_path / "updates"
    left.write_text("time,sym,qty\n1,a,5\n")
    right.write_text("time,sym,px\n1,a,10\n")
    updates.mkdir()
    (updates / "001.csv").write_text("side,time,sym,px\nright,4,a\n")
    code, _, err = run(capsys, "asof", left, right, "--on", "time", "--by", "sym", "--updates", updates, "-q")
    assert code == 2 and "[MALFORMED_INPUT]" in err and "001.csv" in err


@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
def test_an_asof_tolerance_does_not_wrap_at_the_int64_extremes(direction):
    left = pd.DataFrame({"time": [2**63 - 1, 5, -(2**63)]})
    right = pd.DataFrame({"time": [-(2**63), 2**63 - 1], "px": [10.0, 20.0]})
    joined = faq.asof_join(left, right, on="time", direction=direction, tolerance=10)
    assert joined["px"].tolist()[0] == 20.0 and math.isnan(joined["px"].tolist()[1])
    assert joined["px"].tolist()[2] == 10.0
    untied = faq.asof_join(left, right, on="time", direction="nearest")["px"].tolist()
    assert untied == [20.0, 20.0, 10.0]  # 5 is 2**63 + 5 after -2**63 but 2**63 - 6 before 2**63 - 1
    with faq.asof_join(left, right, on="time", direction=direction, tolerance=10, maintained=True) as view:
        kept = view.table().to_pandas().sort_values("time")["px"].tolist()  # the maintained join's search
    assert kept[0] == 10.0 and math.isnan(kept[1]) and kept[2] == 20.0


@pytest.mark.parametrize("frame, fragment", [
    (pd.DataFrame({"time": [1, "a"], "px": [1.0, 2.0]}), "one type"),
    (pd.DataFrame([[1, 2.0]], columns=["time", "time"]), "'time' more than once"),
])
def test_a_mixed_or_duplicate_asof_column_is_an_input_type_error(frame, fragment):
    with pytest.raises(faq.errors.FAQTypeError) as info:
        faq.asof_join(pd.DataFrame({"time": [1]}), frame, on="time")
    assert info.value.error_class == "INPUT_TYPE" and fragment in str(info.value)


@pytest.mark.parametrize("number, name", [(28, "ENOSPC"), (30, "EROFS")])
def test_a_refused_write_is_a_catalog_error_naming_the_path(capsys, tmp_path, monkeypatch, number, name):
    left = tmp_path / "t.csv"
    left.write_text("time,v\n1,2\n")
    out = tmp_path / "out.csv"

    def refuse(*args, **kwargs):
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(pcsv, "write_csv", refuse)
    code, _, err = run(capsys, "asof", left, left, "--on", "time", "--out", out, "-q")
    lines = error_lines(err)
    assert code == 2 and lines[0].startswith(f"faq: error: [WRITE_FAILED] {out}: cannot write"), lines
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    from faq.io._common import write_error

    assert write_error(OSError(number, os.strerror(number), "/s/x")).parameters == {
        "path": "/s/x", "reason": os.strerror(number), "errno_name": name}


def test_the_command_line_source_beyond_64_bits_is_refused(capsys, tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n")
    code, _, err = run(capsys, "paths", graph, "--source", "99999999999999999999", "-q")
    assert code == 2 and error_lines(err)[0].startswith("faq: error: [INVALID_NODE_ID] --source")


@pytest.mark.usefixtures("spark")
def test_a_source_whose_edges_weigh_infinity_is_still_a_node(capsys, tmp_path):
    """An edge of weight inf is min_plus's zero, no edge; its source is a node of the graph all the same."""
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 inf\n1 2 1.0\n")
    code, out, err = run(capsys, "paths", graph, "--source", "0", "-q")
    assert code == 0 and "1 node(s) reached from 0" in out, (out, err)
