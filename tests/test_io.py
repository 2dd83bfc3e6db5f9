"""Tests of faq.io on the real files in tests/data and on tiny synthetic files.

Reference numbers come from tests/data/graphs-MANIFEST.tsv and matrices-MANIFEST.tsv
(SNAP's and SuiteSparse's published counts, see tests/data/README.md); matrix
contents are checked against scipy.io.mmread as an independent oracle.
"""

from __future__ import annotations

import csv
import gzip
import os

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from pyspark.sql import functions as F

from faq import io
from faq.errors import (
    InputNotFoundError,
    InvalidArgumentError,
    InvalidFactorValueError,
    MalformedInputError,
    MissingColumnError,
    NotAMatrixError,
    NullKeyError,
    ResultTooLargeError,
    ValueTypeMismatchError,
)
from faq.factor import Factor, factor_of

pytestmark = pytest.mark.usefixtures("spark")

DATA = os.path.join(os.path.dirname(__file__), "data")


def _manifest(name: str) -> dict[str, dict[str, str]]:
    with open(os.path.join(DATA, name), newline="") as handle:
        lines = [line for line in handle if line.strip()]
    header = lines[0].lstrip("# ").rstrip("\n").split("\t")
    rows = csv.DictReader(lines[1:], fieldnames=header, delimiter="\t")
    return {row["file"]: row for row in rows}


GRAPHS = _manifest("graphs-MANIFEST.tsv")
MATRICES = _manifest("matrices-MANIFEST.tsv")
# soc-Slashdot0902 is in the MANIFEST but not copied here (3 MB; benchmarks read ../shared/data).
# Email-Enron's record count is checked by test_snap_undirected_edges, in the same pass as its
# undirected edges (it is the largest file here).
SNAP_TEXT = [
    f
    for f in GRAPHS
    if f.endswith((".txt", ".txt.gz")) and os.path.exists(os.path.join(DATA, f)) and f != "Email-Enron.txt.gz"
]
# Full statistics (distinct pairs and nodes need shuffles) on the smaller files; the larger ones
# get the one-pass statistics only, to keep the test file fast.
FULL_STATS = ["email-Eu-core.txt.gz", "ca-GrQc.txt"]


def rows(factor: Factor) -> list[tuple]:
    return sorted(tuple(r) for r in factor.df.select(*factor.columns()).collect())


def write(tmp_path, name: str, text: str, newline: str = "\n") -> str:
    path = os.path.join(tmp_path, name)
    data = text.replace("\n", newline).encode()
    if name.endswith(".gz"):
        with gzip.open(path, "wb") as handle:
            handle.write(data)
    else:
        with open(path, "wb") as handle:
            handle.write(data)
    return path


# --- real SNAP graphs --------------------------------------------------------


@pytest.mark.parametrize("file", SNAP_TEXT)
def test_snap_counts_match_manifest(file):
    m = GRAPHS[file]
    raw = io.read_edge_list(os.path.join(DATA, file), self_loops="keep", duplicates="keep")
    s, d = F.col("src"), F.col("dst")
    one_pass = [
        F.count("*").alias("records"),
        F.sum((s == d).cast("bigint")).alias("loops"),
        F.min(F.least(s, d)).alias("lo"),
        F.max(F.greatest(s, d)).alias("hi"),
    ]
    if file in FULL_STATS:
        one_pass += [
            F.count_distinct(s, d).alias("pairs"),
            F.count_distinct(F.least(s, d), F.greatest(s, d)).alias("und_incl_loops"),
        ]
    stats = raw.df.agg(*one_pass).first()
    assert stats["records"] == int(m["edge_records"])
    assert stats["loops"] == int(m["self_loops"])
    assert (stats["lo"], stats["hi"]) == (int(m["min_id"]), int(m["max_id"]))
    assert raw.df.schema["src"].dataType.simpleString() == "bigint"
    if file in FULL_STATS:
        assert stats["pairs"] == int(m["distinct_pairs"])
        assert stats["und_incl_loops"] - stats["loops"] == int(m["undirected_edges_no_loops"])
        nodes = raw.df.select(F.explode(F.array(s, d))).distinct().count()
        assert nodes == int(m["nodes"])


@pytest.mark.parametrize(
    "file, duplicates",
    [("ca-GrQc.txt", "collapse"), ("email-Eu-core.txt.gz", "collapse"), ("Email-Enron.txt.gz", "sum")],
)
def test_snap_undirected_edges(file, duplicates):
    """undirected=True, loops dropped: SNAP's undirected edge count is the rows with src < dst.

    With duplicates="sum" every non-loop record adds 1 to both directions, so the values
    also add up to 2 * (records - loops): the record count is checked in the same pass.
    """
    m = GRAPHS[file]
    f = io.read_edge_list(os.path.join(DATA, file), undirected=True, duplicates=duplicates)
    stats = f.df.agg(
        F.count("*").alias("rows"),
        F.sum((F.col("src") < F.col("dst")).cast("bigint")).alias("forward"),
        F.sum((F.col("src") == F.col("dst")).cast("bigint")).alias("loops"),
        F.max("value").alias("max_value"),
        F.sum("value").alias("total"),
    ).first()
    und = int(m["undirected_edges_no_loops"])
    assert (stats["forward"], stats["rows"], stats["loops"]) == (und, 2 * und, 0)
    if duplicates == "collapse":
        assert stats["max_value"] == 1
    else:
        assert stats["total"] == 2 * (int(m["edge_records"]) - int(m["self_loops"]))


def test_ca_grqc_published_edge_counts():
    # Current SNAP page: 14,496 undirected edges including the 12 loops (file header: 28,980 lines).
    path = os.path.join(DATA, "ca-GrQc.txt")
    with_loops = io.read_edge_list(path, self_loops="keep", undirected=True)
    assert with_loops.df.where("src <= dst").count() == 14_496


def test_bitcoin_weighted_csv_edge_list():
    path = os.path.join(DATA, "soc-sign-bitcoinotc.csv.gz")
    f = io.read_factor(path, format="edges", weight_column=3, semiring="integer", duplicates="keep")
    stats = f.df.agg(
        F.count("*").alias("n"),
        F.min("value").alias("lo"),
        F.max("value").alias("hi"),
        F.sum((F.col("value") > 0).cast("bigint")).alias("positive"),
        F.min("src").alias("min_src"),
    ).first()
    assert stats["n"] == int(GRAPHS["soc-sign-bitcoinotc.csv.gz"]["edge_records"]) == 35_592
    assert (stats["lo"], stats["hi"]) == (-10, 10)
    assert round(100 * stats["positive"] / stats["n"], 2) == 89.99
    assert f.df.schema["value"].dataType.simpleString() == "bigint"


# --- edge-list quirks (synthetic) -------------------------------------------


def test_comments_blank_lines_separators_crlf(tmp_path):
    text = (
        "# SNAP header\n"
        "% matrix-market style comment\n"
        "\n"
        "   \n"
        "1\t2\n"
        "  2 3  \n"
        "3,4\n"
        "4 ,\t 5\n"
        "5\t6\textra fields are ignored\n"
    )
    expected = [(1, 2, 1), (2, 3, 1), (3, 4, 1), (4, 5, 1), (5, 6, 1)]
    assert rows(io.read_edge_list(write(tmp_path, "lf.txt", text))) == expected
    assert rows(io.read_edge_list(write(tmp_path, "crlf.txt.gz", text, "\r\n"))) == expected
    assert rows(io.read_edge_list(write(tmp_path, "cr.txt", text, "\r"))) == expected


def test_non_contiguous_and_large_ids_kept(tmp_path):
    path = write(tmp_path, "ids.txt", "1000000000000 7\n7 -3\n9223372036854775807 0\n")
    f = io.read_edge_list(path, variables=("a", "b"), name="big")
    assert f.variables == ("a", "b") and f.name == "big"
    assert rows(f) == [(7, -3, 1), (1000000000000, 7, 1), (9223372036854775807, 0, 1)]


def test_default_name_is_file_stem():
    assert io.read_edge_list(os.path.join(DATA, "wiki-Vote.txt.gz")).name == "wiki-Vote"


def test_self_loops_option(tmp_path):
    path = write(tmp_path, "loops.txt", "1 1\n1 2\n2 2\n")
    assert rows(io.read_edge_list(path)) == [(1, 2, 1)]
    assert rows(io.read_edge_list(path, self_loops="keep")) == [(1, 1, 1), (1, 2, 1), (2, 2, 1)]


def test_duplicates_option(tmp_path):
    path = write(tmp_path, "dups.txt", "1 2\n1 2\n1 2\n2 3\n")
    assert rows(io.read_edge_list(path)) == [(1, 2, 1), (2, 3, 1)]
    assert rows(io.read_edge_list(path, duplicates="sum")) == [(1, 2, 3), (2, 3, 1)]
    assert rows(io.read_edge_list(path, duplicates="keep")) == [(1, 2, 1)] * 3 + [(2, 3, 1)]
    boolean = io.read_edge_list(path, semiring="boolean", duplicates="sum")
    assert rows(boolean) == [(1, 2, True), (2, 3, True)]


def test_undirected_option(tmp_path):
    # 1-2 is listed both ways, 2-3 once, 3-3 is a loop.
    path = write(tmp_path, "und.txt", "1 2\n2 1\n2 3\n3 3\n")
    assert rows(io.read_edge_list(path, undirected=True)) == [(1, 2, 1), (2, 1, 1), (2, 3, 1), (3, 2, 1)]
    summed = io.read_edge_list(path, undirected=True, duplicates="sum", self_loops="keep")
    assert rows(summed) == [(1, 2, 2), (2, 1, 2), (2, 3, 1), (3, 2, 1), (3, 3, 1)]
    kept = io.read_edge_list(path, undirected=True, duplicates="keep")
    assert len(rows(kept)) == 6


def test_weight_column(tmp_path):
    path = write(tmp_path, "w.csv", "1,2,4,1289241911.7\n1,2,-1,0\n2,3,0,0\n3,1,5,0\n")
    integer = io.read_edge_list(path, weight_column=3, semiring="integer")
    # collapse with weights ⊕-merges (here +); the zero-weight edge is dropped
    assert rows(integer) == [(1, 2, 3), (3, 1, 5)]
    assert rows(io.read_edge_list(path, weight_column=3, semiring="integer", duplicates="sum")) == rows(integer)
    kept = io.read_edge_list(path, weight_column=3, semiring="integer", duplicates="keep")
    assert rows(kept) == [(1, 2, -1), (1, 2, 4), (3, 1, 5)]
    tropical = io.read_edge_list(path, weight_column=3, semiring="min_plus")
    assert rows(tropical) == [(1, 2, -1.0), (2, 3, 0.0), (3, 1, 5.0)]
    boolean = io.read_edge_list(path, weight_column=3, semiring="boolean")
    assert rows(boolean) == [(1, 2, True), (3, 1, True)]


def test_weights_cancel_in_a_ring(tmp_path):
    path = write(tmp_path, "cancel.txt", "1 2 3\n1 2 -3\n2 3 1\n")
    assert rows(io.read_edge_list(path, weight_column=3, semiring="integer")) == [(2, 3, 1)]


def test_weight_inf_and_boolean_words(tmp_path):
    path = write(tmp_path, "inf.txt", "1 2 inf\n2 3 -Infinity\n3 4 1.5e2\n")
    assert rows(io.read_edge_list(path, weight_column=3, semiring="max_plus")) == [
        (1, 2, float("inf")),
        (3, 4, 150.0),
    ]
    words = write(tmp_path, "words.txt", "1 2 true\n2 3 FALSE\n3 4 0.5\n")
    assert rows(io.read_edge_list(words, weight_column=3, semiring="boolean")) == [(1, 2, True), (3, 4, True)]


@pytest.mark.parametrize(
    "text, kw, line_number, reason",
    [
        ("# c\n\n1 2\n3\n4 5\n", {}, 4, "expected at least 2 fields"),
        ("1 2\n% c\nx 2\n", {}, 3, "node id 'x'"),
        ("1 2\n1.5 2\n", {}, 2, "node id '1.5'"),
        ("1 2\n99999999999999999999 1\n", {}, 2, "64-bit"),
        ("1 2 3\n2 3\n", {"weight_column": 3}, 2, "no weight in column 3"),
        ("1 2 3\n2 3 abc\n", {"weight_column": 3, "semiring": "real"}, 2, "weight 'abc'"),
        ("1 2 3\n2 3 nan\n", {"weight_column": 3, "semiring": "real"}, 2, "weight 'nan'"),
        ("1 2 3\n2 3 2.5\n", {"weight_column": 3, "semiring": "counting"}, 2, "64-bit integer"),
    ],
)
def test_malformed_line(tmp_path, text, kw, line_number, reason):
    path = write(tmp_path, "bad.txt", text, "\r\n")
    with pytest.raises(MalformedInputError) as info:
        io.read_edge_list(path, **kw)
    p = info.value.parameters
    assert (p["path"], p["line_number"]) == (path, line_number)
    assert reason in p["reason"]
    assert p["line"] == text.split("\n")[line_number - 1]


def test_malformed_line_in_gzip(tmp_path):
    path = write(tmp_path, "bad.txt.gz", "# h\n1 2\n2 3\n3\t;\n")
    with pytest.raises(MalformedInputError) as info:
        io.read_edge_list(path)
    assert info.value.parameters["line_number"] == 4


def test_missing_files():
    for loader in (io.read_edge_list, io.read_csv, io.read_parquet, io.read_matrix_market, io.matrix_shape):
        with pytest.raises(InputNotFoundError) as info:
            loader("/no/such/dir/file.txt")
        assert info.value.parameters["path"] == "/no/such/dir/file.txt"
    with pytest.raises(FileNotFoundError):  # also the built-in type
        io.read_factor("/no/such/file.csv")


def test_invalid_options(tmp_path):
    path = write(tmp_path, "g.txt", "1 2\n")
    cases = [
        ({"self_loops": "remove"}, "self_loops"),
        ({"duplicates": "merge"}, "duplicates"),
        ({"weight_column": 2}, "weight_column"),
        ({"variables": ("a",)}, "variables"),
        ({"variables": ("a", "a")}, "variables"),
    ]
    for kw, argument in cases:
        with pytest.raises(InvalidArgumentError) as info:
            io.read_edge_list(path, **kw)
        assert info.value.parameters["argument"] == argument


# --- Matrix Market -----------------------------------------------------------


def _oracle(file: str) -> sp.csr_matrix:
    """scipy's own reading: symmetric expanded, explicit zeros dropped."""
    m = sp.csr_matrix(scipy.io.mmread(os.path.join(DATA, file)))
    m.eliminate_zeros()
    return m


@pytest.mark.parametrize("file", list(MATRICES))
def test_matrix_market_nnz_and_shape(file):
    m = MATRICES[file]
    path = os.path.join(DATA, file)
    f = io.read_matrix_market(path)
    assert f.count() == int(m["nnz(P)"]) == _oracle(file).nnz
    assert io.matrix_shape(path) == (int(m["rows"]), int(m["cols"]))
    assert f.variables == ("i", "j")
    assert [f.df.schema[c].dataType.simpleString() for c in f.columns()] == ["bigint", "bigint", "double"]


def test_matrix_market_published_values():
    assert io.read_matrix_market(os.path.join(DATA, "bcsstk21.mtx")).count() == 26_600
    assert io.read_matrix_market(os.path.join(DATA, "bcsstm13.mtx")).count() == 21_943 - 762 == 21_181
    dwt = io.read_matrix_market(os.path.join(DATA, "dwt_2680.mtx"))
    assert dwt.df.agg(F.count("*"), F.min("value"), F.max("value")).first() == (25_026, 1.0, 1.0)


def test_matrix_market_equals_scipy_oracle():
    f = io.read_matrix_market(os.path.join(DATA, "bcsstm13.mtx"), name="M13")
    expected = _oracle("bcsstm13.mtx")
    got = io.to_scipy(f, shape=expected.shape)
    assert got.shape == expected.shape
    assert abs(got - expected).max() == 0
    assert f.name == "M13"


def test_matrix_market_boolean_and_counting(tmp_path):
    b = io.read_matrix_market(os.path.join(DATA, "bcsstm13.mtx"), semiring="boolean")
    assert b.df.agg(F.count("*"), F.bool_and("value")).first() == (21_181, True)
    assert io.read_matrix_market(os.path.join(DATA, "dwt_2680.mtx"), semiring="counting").count() == 25_026
    with pytest.raises(ValueTypeMismatchError):
        io.read_matrix_market(os.path.join(DATA, "bcsstk21.mtx"), semiring="counting")
    path = write(tmp_path, "int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 7\n2 1 -2\n")
    assert rows(io.read_matrix_market(path, semiring="integer", variables=("r", "c"))) == [(0, 2, 7), (1, 0, -2)]


def test_matrix_market_gz_and_read_factor(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 2.5\n3 2 1\n"
    path = write(tmp_path, "a.mtx.gz", text)
    assert io.matrix_shape(path) == (3, 3)
    assert rows(io.read_factor(path)) == [(0, 0, 2.5), (2, 1, 1.0)]


# --- CSV / Parquet / pandas ----------------------------------------------------


def test_read_csv_value_rules(tmp_path):
    path = write(tmp_path, "r.csv", "a,b,w\n1,2,0.5\n2,3,1.5\n")
    relation = io.read_csv(path)  # no "value" column: every row is one
    assert relation.variables == ("a", "b", "w") and relation.semiring.name == "counting"
    weighted = io.read_csv(path, value="w", semiring="real")
    assert weighted.variables == ("a", "b") and rows(weighted) == [(1, 2, 0.5), (2, 3, 1.5)]
    assert rows(io.read_csv(path, variables=["b"], value=None)) == [(2, 1), (3, 1)]
    with pytest.raises(MissingColumnError) as info:
        io.read_csv(path, value="weight")
    assert info.value.parameters["column"] == "weight" and info.value.parameters["available"] == ["a", "b", "w"]
    with pytest.raises(MissingColumnError):
        io.read_csv(path, variables=["a", "z"], value="w", semiring="real")
    assert relation.df.schema["a"].dataType.simpleString() == "bigint"  # widened from int


def test_read_csv_nulls_and_nan(tmp_path):
    nulls = write(tmp_path, "nulls.csv", "a,value\n1,2\n,3\n")
    with pytest.raises(NullKeyError) as info:
        io.read_csv(nulls).validate()
    assert info.value.parameters["column"] == "a" and info.value.parameters["count"] == 1
    with pytest.raises(NullKeyError):
        io.read_csv(nulls, validate=True)
    nan = write(tmp_path, "nan.csv", "a,value\n1,NaN\n2,1.0\n")
    with pytest.raises(InvalidFactorValueError) as info:
        io.read_csv(nan, semiring="real", validate=True)
    assert info.value.parameters["problem"] == "NaN"


def test_read_csv_drops_zero_values(tmp_path):
    path = write(tmp_path, "z.csv", "x,value\n1,0\n2,4\n")
    assert rows(io.read_csv(path)) == [(2, 4)]
    assert rows(io.read_csv(path, semiring="boolean")) == [(2, True)]


def test_from_pandas(tmp_path):
    pdf = pd.DataFrame({"x": [3, 1, 2], "y": ["c", "a", "b"], "value": [1.5, 2.0, 0.0]})
    f = io.from_pandas(pdf, semiring="real")
    assert f.variables == ("x", "y")
    out = io.to_pandas(f)
    assert list(out.columns) == ["x", "y", "value"]
    assert out.values.tolist() == [[1, "a", 2.0], [3, "c", 1.5]]
    relation = io.from_pandas(pdf[["x", "y"]])
    assert rows(relation) == [(1, "a", 1), (2, "b", 1), (3, "c", 1)]
    with pytest.raises(MissingColumnError):
        io.from_pandas(pdf, value="w")
    with pytest.raises(NullKeyError):
        io.from_pandas(pd.DataFrame({"x": [1.0, None], "value": [1, 2]}))
    with pytest.raises(InvalidFactorValueError) as info:
        io.from_pandas(pd.DataFrame({"x": [1, 2], "value": [1.0, np.nan]}), semiring="real")
    assert info.value.parameters["problem"] == "NaN"
    assert io.from_pandas(pdf.iloc[:0], semiring="real").count() == 0


def test_validate_null_key_and_nan_value(spark):
    df = spark.createDataFrame([(1, 1.0), (None, 2.0)], "a bigint, value double")
    with pytest.raises(NullKeyError):
        Factor.from_dataframe(df, ["a"], "real").validate()
    df = spark.createDataFrame([(1, float("nan"))], "a bigint, value double")
    with pytest.raises(InvalidFactorValueError):
        Factor.from_dataframe(df, ["a"], "real").validate()


# --- numpy / scipy -------------------------------------------------------------


def test_from_numpy_round_trip():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 3, size=(4, 5)).astype(float)
    f = io.from_numpy(a)
    assert f.count() == np.count_nonzero(a)
    assert np.array_equal(io.to_scipy(f, shape=a.shape).toarray(), a)
    cube = rng.integers(0, 2, size=(2, 3, 4))
    g = io.from_numpy(cube, semiring="counting")
    assert g.variables == ("i", "j", "k")
    out = io.to_pandas(g)
    back = np.zeros_like(cube)
    back[out["i"], out["j"], out["k"]] = out["value"]
    assert np.array_equal(back, cube)
    assert io.from_numpy(np.zeros((2, 2))).count() == 0
    assert io.from_numpy(np.float64(2.5)).scalar() == 2.5  # 0-d: a factor with no variables
    with pytest.raises(InvalidFactorValueError):
        io.from_numpy(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueTypeMismatchError):
        io.from_numpy(np.array([0.5]), semiring="counting")


def test_from_numpy_semiring_zero():
    inf = np.inf
    d = np.array([[0.0, 2.0], [inf, 0.0]])  # distances: +inf means no edge in (min, +)
    assert rows(io.from_numpy(d, semiring="min_plus")) == [(0, 0, 0.0), (0, 1, 2.0), (1, 1, 0.0)]
    assert rows(io.from_numpy(np.array([True, False]), semiring="boolean")) == [(0, True)]


def test_from_scipy_round_trip():
    m = sp.random(30, 20, density=0.1, format="csr", random_state=3)
    m.data[:2] = 0.0  # explicit zeros are dropped
    f = io.from_scipy(m, variables=("r", "c"))
    assert f.count() == m.nnz - 2
    assert abs(io.to_scipy(f, shape=m.shape) - m).max() == 0


def test_from_scipy_merges_repeated_entries_with_the_semirings_sum():
    coo = sp.coo_matrix(([3.0, 1.0, 2.0], ([0, 0, 1], [0, 0, 1])), shape=(2, 2))
    assert rows(io.from_scipy(coo)) == [(0, 0, 4.0), (1, 1, 2.0)]
    assert rows(io.from_scipy(coo, semiring="min_plus")) == [(0, 0, 1.0), (1, 1, 2.0)]


# --- exporters -----------------------------------------------------------------


def test_to_pandas_max_rows():
    f = factor_of([(i, 1) for i in range(5)], ["x"], name="five")
    with pytest.raises(ResultTooLargeError) as info:
        io.to_pandas(f, max_rows=4)
    assert info.value.parameters == {"factor": "five", "rows": 5, "max_rows": 4}
    assert len(io.to_pandas(f, max_rows=5)) == 5


def test_to_scipy_errors():
    with pytest.raises(NotAMatrixError):
        io.to_scipy(factor_of([(0, 0, 0, 1)], ["a", "b", "c"]))
    with pytest.raises(NotAMatrixError):
        io.to_scipy(factor_of([(-1, 0, 1)], ["a", "b"]))
    with pytest.raises(NotAMatrixError):
        io.to_scipy(factor_of([(5, 0, 1)], ["a", "b"]), shape=(2, 2))
    merged = io.to_scipy(factor_of([(0, 1, 2), (0, 1, 3)], ["a", "b"]))
    assert merged.shape == (1, 2) and merged[0, 1] == 5


def test_write_matrix_market_round_trip(tmp_path):
    source = os.path.join(DATA, "bcsstm21.mtx")
    f = io.read_matrix_market(source)
    out = os.path.join(tmp_path, "copy")  # no extension: must not gain ".mtx"
    io.write_matrix_market(f, out, shape=io.matrix_shape(source))
    assert os.listdir(tmp_path) == ["copy"]
    assert io.matrix_shape(out) == (3600, 3600)
    assert abs(sp.csr_matrix(scipy.io.mmread(out)) - _oracle("bcsstm21.mtx")).max() == 0
    back = io.read_matrix_market(out)
    assert rows(back) == rows(f)
    pattern = io.read_edge_list(write(tmp_path, "g.txt", "0 1\n1 2\n"), semiring="boolean")
    io.write_matrix_market(pattern, os.path.join(tmp_path, "p.mtx"))
    assert scipy.io.mminfo(os.path.join(tmp_path, "p.mtx"))[4] == "pattern"
    counts = factor_of([(0, 1, 3)], ["i", "j"], "counting")
    io.write_matrix_market(counts, os.path.join(tmp_path, "c.mtx"))
    assert rows(io.read_matrix_market(os.path.join(tmp_path, "c.mtx"), semiring="counting")) == [(0, 1, 3)]


def test_write_matrix_market_failure_leaves_nothing(tmp_path):
    f = factor_of([(5, 0, 1.0)], ["i", "j"], "real")
    with pytest.raises(NotAMatrixError):
        io.write_matrix_market(f, os.path.join(tmp_path, "a.mtx"), shape=(2, 2))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("ext", [".csv", ".csv.gz", ".parquet"])
def test_write_table_round_trip(tmp_path, ext):
    f = factor_of([(2, 1, 0.25), (1, 3, 4.0)], ["u", "v"], "real", name="T")
    path = os.path.join(tmp_path, "t" + ext)
    io.write_table(f, path)
    assert os.listdir(tmp_path) == ["t" + ext]  # no temporary left over
    back = io.read_factor(path, semiring="real")
    assert back.variables == ("u", "v")
    assert rows(back) == rows(f)
    assert [back.df.schema[c].dataType.simpleString() for c in back.columns()] == ["bigint", "bigint", "double"]
    if ext != ".csv.gz":
        io.write_table(factor_of([(7, 7, 1.0)], ["u", "v"], "real"), path)  # replaces the target
        assert rows(io.read_factor(path, semiring="real")) == [(7, 7, 1.0)]
        assert os.listdir(tmp_path) == ["t" + ext]


def test_write_table_csv_text_and_empty(tmp_path):
    path = os.path.join(tmp_path, "b.csv")
    io.write_table(factor_of([(1, True)], ["x"], "boolean"), path)
    assert open(path).read() == "x,value\n1,true\n"
    empty = factor_of([], ["x", "y"], "counting")
    io.write_table(empty, path)
    assert open(path).read() == "x,y,value\n"


def test_write_table_failure_leaves_nothing(tmp_path, spark):
    # The division fails inside the Spark job (ANSI mode), after the write has begun.
    df = spark.range(3).select(F.col("id").alias("x"), (F.lit(1) / (F.col("id") - 1)).alias("value"))
    bad = Factor.from_dataframe(df, ["x"], "real")
    for name in ("t.csv", "t.parquet"):
        with pytest.raises(Exception):
            io.write_table(bad, os.path.join(tmp_path, name))
        assert os.listdir(tmp_path) == []
    with pytest.raises(InvalidArgumentError):
        io.write_table(bad, os.path.join(tmp_path, "t.json"))
    assert os.listdir(tmp_path) == []


def test_read_factor_dispatch(tmp_path):
    edges = write(tmp_path, "g.tsv", "1\t2\n")
    assert io.read_factor(edges).variables == ("src", "dst")
    csv_path = write(tmp_path, "r.csv.gz", "a,value\n1,2\n")
    assert rows(io.read_factor(csv_path)) == [(1, 2)]
    with pytest.raises(InvalidArgumentError):
        io.read_factor(edges, format="json")


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_a_table_that_fits_is_read_on_the_driver_as_spark_reads_it(spark, tmp_path, suffix):
    """A local CSV or Parquet file within the fetch budget is read with pyarrow (held on the driver, no Spark
    job); its factor equals the one Spark's reader makes (spark.faq.fetchMemory=0): types, zeros dropped,
    booleans, strings; an empty key field is a null key either way."""
    frame = pd.DataFrame({"a": [1, 2, 3, 4], "s": ["x", "y", "x", "z"], "value": [0.5, 0.0, 2.0, 1.5]})
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False, compression="gzip" if suffix.endswith(".gz") else None)
    held = io.read_factor(path, semiring="real")
    spark.conf.set("spark.faq.fetchMemory", "0")
    try:
        by_spark = io.read_factor(path, semiring="real")
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
    assert held.relation.held and held.relation.rows == 3 and not by_spark.relation.held
    assert held.variables == by_spark.variables and dict(held.df.dtypes) == dict(by_spark.df.dtypes)
    rows = lambda f: sorted(map(tuple, f.df.collect()), key=str)  # noqa: E731
    assert rows(held) == rows(by_spark)
    flags = tmp_path / "flags.csv"
    flags.write_text("a,value\n1,2\n2,0\n3,1\n")  # a boolean factor: non-zero means true
    assert sorted(map(tuple, io.read_csv(flags, semiring="boolean").df.collect())) == [(1, True), (3, True)]
    empty = tmp_path / "empty.csv"
    empty.write_text("a,s,value\n1,x,1.0\n2,,2.0\n")
    with pytest.raises(NullKeyError):
        io.read_csv(empty, semiring="real")
