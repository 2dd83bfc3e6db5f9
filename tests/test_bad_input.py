"""Bad input at the edges: null keys, corrupt or truncated files -> a named error, exit code 2, no output.

Each case goes through the API (the class and its parameters) and through
:func:`faq.cli.main` in-process (exit code 2, one line naming the file, nothing
written).  The files are tiny and made in ``tmp_path``.
"""

import gzip
import os

import pandas as pd
import pytest

from faq import io
from faq.errors import MalformedInputError, NullKeyError
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
    path.write_text("a,b,value\n1,2,\n2,3,4\n")  # a null *value* is validate()'s business, not a key
    assert io.read_csv(path).count() == 2


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
