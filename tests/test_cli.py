"""The ``faq`` command.

Most tests call :func:`faq.cli.main` in-process (``tests.helpers.run``): those
whose command starts Spark request the ``spark`` fixture and share the test
run's SparkSession, the others show that bad input fails before Spark starts.
One test runs the real console entry in a subprocess, with its own Spark, to
check what a user sees on stdout and stderr.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

from faq import cli
from faq.cli import queries
from faq.semirings import semiring_names
from tests.helpers import error_lines, run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
EMAIL = DATA / "email-Eu-core.txt.gz"  # SNAP: 105,461 undirected triangles

TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"


@pytest.fixture
def small_graph(tmp_path):
    """Undirected triangles {1,2,3} and {1,3,4}; one feed-forward triangle (1,2,3).

    Also a self-loop, a repeated edge, a comment and CRLF, which the loader ignores.
    """
    path = tmp_path / "small.txt"
    path.write_text("# a small graph\r\n1 2\r\n2 3\r\n1 3\r\n3 4\r\n4 1\r\n2 2\r\n1\t2\r\n")
    return path


# --- triangles ----------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_triangles_json(capsys, small_graph):
    code, out, err = run(capsys, "triangles", small_graph, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert {"count", "edges", "seconds"} <= set(result)
    assert result["count"] == 2 and result["edges"] == 5 and result["directed"] is False
    assert result["faqw"] == "3/2"
    # progress goes to stderr, step by step
    assert re.search(r"^\[faq\] step 1/\d+: eliminate a", err, re.M), err
    assert re.search(r"^\[faq\] step (\d+)/\1 done: 1 rows in [\d.]+ s$", err, re.M), err


@pytest.mark.usefixtures("spark")
def test_triangles_directed_human_output(capsys, small_graph):
    code, out, err = run(capsys, "triangles", small_graph, "--directed", "--quiet")
    assert code == 0, err
    assert out.splitlines()[0] == f"{small_graph}: 1 feed-forward (directed) triangles"
    assert err == ""  # --quiet: no progress


def test_help_says_undirected_is_the_default(capsys):
    assert cli.main(["triangles", "--help"]) == 0
    out = capsys.readouterr().out
    assert "undirected graph once (the default)" in " ".join(out.split())


# --- matrix-chain ---------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_matrix_chain_matches_scipy(capsys, tmp_path):
    paths = [DATA / "bcsstk21.mtx", DATA / "bcsstm21.mtx", DATA / "bcsstk21.mtx"]
    out_path = tmp_path / "kmk.mtx"
    code, out, err = run(capsys, "matrix-chain", *paths, "--out", out_path, "--json", "-q")
    assert code == 0, err
    summary = json.loads(out)
    assert {"order", "estimated_rows", "faqw", "nnz", "seconds"} <= set(summary)
    assert sorted(summary["order"]) == ["i1", "i2"] and summary["shape"] == [3600, 3600]
    assert summary["estimated_rows"] > 0

    k, m = (scipy.sparse.csr_array(scipy.io.mmread(p)) for p in paths[:2])  # independent of faq.io
    expected = (k @ m @ k).toarray()
    got = scipy.sparse.csr_array(scipy.io.mmread(out_path))
    assert got.shape == (3600, 3600) and got.nnz == summary["nnz"]
    assert np.abs(got.toarray() - expected).max() <= 1e-9 * np.abs(expected).max()


@pytest.mark.usefixtures("spark")
def test_matrix_chain_boolean_semiring(capsys, tmp_path):
    a = tmp_path / "a.mtx"
    b = tmp_path / "b.mtx"
    scipy.io.mmwrite(a, scipy.sparse.coo_array(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])))
    scipy.io.mmwrite(b, scipy.sparse.coo_array(np.array([[0.0, 5.0], [1.0, 0.0], [0.0, 0.0]])))
    out_path = tmp_path / "ab.mtx"
    code, out, err = run(capsys, "matrix-chain", a, b, "--out", out_path, "--semiring", "boolean", "-q")
    assert code == 0, err
    assert "nnz 1" in out
    got = scipy.io.mmread(out_path)
    assert got.shape == (2, 2) and got.toarray().astype(bool).tolist() == [[False, True], [False, False]]


@pytest.mark.usefixtures("spark")
def test_matrix_chain_dimension_mismatch(capsys, tmp_path):
    a = tmp_path / "a.mtx"
    scipy.io.mmwrite(a, scipy.sparse.coo_array(np.eye(2)))
    code, out, err = run(capsys, "matrix-chain", a, DATA / "bcsstm21.mtx", "--out", tmp_path / "o.mtx", "-q")
    assert code == 2 and out == ""
    [line] = error_lines(err)
    assert line.startswith("faq: error:") and "inner dimensions" in line
    assert not (tmp_path / "o.mtx").exists()


# --- query and explain ------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_query_free_variable_to_csv(capsys, edge_csv, tmp_path):
    out_path = tmp_path / "paths.csv"
    code, out, err = run(capsys, "query", "p(a) := e(a,b), e(b,c)", "--factor", f"e={edge_csv}", "--out", out_path)
    assert code == 0, err
    assert out.strip() == f"wrote 2 rows to {out_path}"
    lines = out_path.read_text().splitlines()
    # 2-paths a->b->c: from 1 via 2 (to 3) and via 3 (to 4): 2; from 2 via 3: 1
    assert lines[0] == "a,value" and sorted(lines[1:]) == ["1,2", "2,1"]


@pytest.mark.usefixtures("spark")
def test_query_prints_table_and_json(capsys, edge_csv):
    code, out, err = run(capsys, "query", "p(a) := e(a,b), e(b,c)", "-f", f"e={edge_csv}", "-q")
    assert code == 0, err
    assert out.split() == ["a", "value", "1", "2", "2", "1", "(2", "rows)"]
    code, out, err = run(capsys, "query", "p(a) := e(a,b), e(b,c)", "-f", f"e={edge_csv}", "--json", "-q")
    result = json.loads(out)
    assert result["rows"] == 2 and result["preview"] == [{"a": 1, "value": 2}, {"a": 2, "value": 1}]
    assert {"seconds", "plan"} <= set(result) and result["plan"]["free"] == ["a"]


@pytest.mark.usefixtures("spark")
def test_query_scalar_in_another_semiring(capsys, edge_csv):
    code, out, err = run(capsys, "query", TRIANGLE, "-f", f"edge={edge_csv}", "--json", "-q")
    assert code == 0, err
    assert json.loads(out)["value"] == 1
    # shortest path weight of the triangle pattern: each edge weighs one (0.0) in min_plus
    code, out, err = run(capsys, "query", TRIANGLE, "-f", f"edge={edge_csv}", "--semiring", "tropical", "-q")
    assert code == 0, err
    assert out.strip() == "0.0"


@pytest.mark.usefixtures("spark")
def test_explain_json(capsys, edge_csv):
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "--json", "--method", "exact")
    assert code == 0, err
    result = json.loads(out)
    assert {"order", "faqw", "bags"} <= set(result)
    assert result["faqw"] == "3/2" and result["sizes"] == {"edge": 4}
    assert result["bags"][0]["rho_star"] == "3/2"


@pytest.mark.usefixtures("spark")
def test_explain_text(capsys, edge_csv):
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "-q")
    assert code == 0, err
    assert out.startswith("plan for count() := edge(a, b)") and "faqw 3/2" in out and "ρ* 3/2" in out


# --- errors: one line, no traceback ---------------------------------------------------


def assert_one_error_line(err, *fragments):
    assert "Traceback" not in err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("faq: error:")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_unknown_semiring(capsys, edge_csv):
    code, out, err = run(capsys, "query", TRIANGLE, "-f", f"edge={edge_csv}", "--semiring", "nosuch")
    assert code == 2 and out == ""
    assert_one_error_line(err, "'nosuch'", ", ".join(semiring_names()))


@pytest.mark.usefixtures("spark")
def test_malformed_edge_file(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# comment\n1 2\n2 3\n3 x\n")
    code, out, err = run(capsys, "triangles", bad)
    assert code == 2 and out == ""
    assert_one_error_line(err, "line 4", str(bad))


def test_missing_file(capsys, tmp_path):
    missing = tmp_path / "nope.txt"
    code, out, err = run(capsys, "triangles", missing)
    assert code == 2
    assert_one_error_line(err, str(missing))
    code, out, err = run(capsys, "query", TRIANGLE, "-f", f"edge={missing}")
    assert code == 2
    assert_one_error_line(err, str(missing))


def test_bad_query_text(capsys, edge_csv):
    code, out, err = run(capsys, "query", "count() := edge(a,b) edge(b,c)", "-f", f"edge={edge_csv}")
    assert code != 0 and out == ""
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("faq: error: [QUERY_PARSE]") and "position 21" in first


@pytest.mark.usefixtures("spark")
def test_query_errors_from_binding(capsys, edge_csv):
    code, out, err = run(capsys, "query", "count() := edge(a,b,c)", "-f", f"edge={edge_csv}")
    assert code == 2
    assert_one_error_line(err, "ARITY_MISMATCH")
    code, out, err = run(capsys, "explain", TRIANGLE, "-f", f"other={edge_csv}")
    assert code == 2
    assert_one_error_line(err, "edge")


def test_missing_output_folder(capsys, edge_csv, tmp_path):
    out_path = tmp_path / "no" / "such" / "out.csv"
    code, out, err = run(capsys, "query", "p(a) := e(a,b)", "-f", f"e={edge_csv}", "--out", out_path, "-q")
    assert code == 2
    assert_one_error_line(err, "does not exist")


@pytest.mark.usefixtures("spark")
def test_system_and_spark_errors_are_one_line(capsys, edge_csv, tmp_path, monkeypatch):
    from pyspark.errors import AnalysisException

    import faq.io

    def denied(factor, path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(faq.io, "write_table", denied)
    out_path = tmp_path / "out.csv"
    code, out, err = run(capsys, "query", "p(a) := e(a,b)", "-f", f"e={edge_csv}", "--out", out_path, "-q")
    assert code == 2  # a write the system refuses is the catalog's WRITE_FAILED, naming the path
    assert_one_error_line(err, f"[WRITE_FAILED] {out_path}: cannot write (Permission denied)")

    def broken(factor, path):
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(faq.io, "write_table", broken)
    code, out, err = run(capsys, "query", "p(a) := e(a,b)", "-f", f"e={edge_csv}", "--out", out_path, "-q")
    assert code == 1  # any other system failure: one line, exit 1
    assert_one_error_line(err, "OSError: Input/output error", str(out_path))

    def spark_fails(*args, **kwargs):
        raise AnalysisException(message="[SOMETHING] Spark could not do it.\nJVM stacktrace:\n\tat org.apache...")

    monkeypatch.setattr(faq.io, "read_factor", spark_fails)
    code, out, err = run(capsys, "query", "p(a) := e(a,b)", "-f", f"e={edge_csv}", "-q")
    assert code == 1
    line = assert_one_error_line(err, "[SOMETHING] Spark could not do it.")
    assert "JVM" not in line


@pytest.mark.usefixtures("spark")
def test_spark_failure_is_one_line(capsys, tmp_path):
    """A failure inside a Spark job (ANSI overflow in the counting semiring) -> exit 1, one line."""
    big = tmp_path / "big.csv"
    big.write_text("a,b,value\n1,2,9223372036854775807\n2,3,2\n")
    code, out, err = run(capsys, "query", "p() := e(a,b), e(b,c)", "-f", f"e={big}", "-q", "--placement", "executors")
    assert code == 1 and out == ""
    assert_one_error_line(err, "ARITHMETIC_OVERFLOW")
    assert "stacktrace" not in err and "\tat " not in err


@pytest.mark.usefixtures("spark")
def test_an_overflow_in_process_is_refused_too(capsys, tmp_path):
    """The same overflow in an in-process step (the default for small inputs): a catalog error,
    exit 2, one line -- never a wrapped-around count."""
    big = tmp_path / "big.csv"
    big.write_text("a,b,value\n1,2,9223372036854775807\n2,3,2\n")
    code, out, err = run(capsys, "query", "p() := e(a,b), e(b,c)", "-f", f"e={big}", "-q")
    assert code == 2 and out == ""
    assert_one_error_line(err, "INTEGER_OVERFLOW")
    sums = tmp_path / "sums.csv"  # each product fits; their sum does not
    sums.write_text("a,b,value\n1,2,9223372036854775807\n1,3,9223372036854775807\n")
    code, out, err = run(capsys, "query", "p() := e(a,b)", "-f", f"e={sums}", "-q")
    assert code == 2 and out == ""
    assert_one_error_line(err, "INTEGER_OVERFLOW")


def test_usage_errors_exit_2(capsys, edge_csv):
    assert cli.main(["matrix-chain", str(DATA / "bcsstm21.mtx")]) == 2  # --out is required
    assert cli.main(["query", TRIANGLE, "--factor", "edge"]) == 2  # not NAME=PATH
    assert cli.main(["triangles", "g.txt", "--directed", "--undirected"]) == 2
    assert cli.main([]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.usefixtures("spark")
def test_interrupt_exits_130(capsys, small_graph, monkeypatch):
    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(queries, "run_triangles", interrupted)
    code, out, err = run(capsys, "triangles", small_graph)
    assert code == 130
    assert_one_error_line(err, "interrupted")


# --- the real console entry ------------------------------------------------------------


def test_console_entry_subprocess(tmp_path):
    """What a user sees: JSON on stdout, progress on stderr, no Spark chatter."""
    exe = Path(sys.executable).parent / "faq"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "faq"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("FAQ_SPARK_VERBOSE", None)
    env.pop("FAQ_DEBUG", None)
    proc = subprocess.run(
        [*command, "triangles", str(EMAIL), "--json", "--master", "local[2]"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # Spark must not leave files (spark-warehouse, derby.log) in the checkout
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # stdout is exactly one JSON object
    assert result["count"] == 105461
    for noise in ("WARN", "INFO", "Traceback", "Exception"):
        assert noise not in proc.stderr, proc.stderr
    assert all(line.startswith("[faq]") for line in proc.stderr.splitlines()), proc.stderr


@pytest.mark.usefixtures("spark")
def test_explain_maintained_shows_placement_views_and_rules(capsys):
    query = "count() := edge(a,b), edge(a,c), edge(b,c)"
    code, out, err = run(capsys, "explain", query, "-f", f"edge={EMAIL}", "--maintained", "--json", "-q")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["placement"] == "driver" and plan["mode"].startswith("signed")
    (edge,) = plan["relations"]
    assert edge["views"] == ["(src, dst)", "(dst, src)"] and edge["rows"] > 20_000
    assert len(plan["rules"]) == 3 and all(r.startswith("Δedge") for r in plan["rules"])
    # a budget below the index size moves the indexes to the executors (and says why)
    code, out, err = run(capsys, "explain", query, "-f", f"edge={EMAIL}", "--maintained", "--budget", "64k", "-q")
    assert code == 0, err
    assert "indexes on the executors" in out and "exceed the driver budget of 64 KiB" in out
    code, out, err = run(capsys, "explain", query, "-f", f"edge={EMAIL}", "--maintained", "--budget", "lots", "-q")
    assert code == 2 and "budget" in err


@pytest.mark.usefixtures("spark")
def test_placement_flag_sets_the_setting_for_one_command_only(capsys, spark, edge_csv):
    """``--placement`` is the command's ``placement=`` (faq.settings.requested): it wins over the session's
    ``spark.faq.placement`` while the command runs and leaves the session's setting (or none) as it was."""
    from faq.settings import PLACEMENT_CONF

    spark.conf.set(PLACEMENT_CONF, "driver")
    try:
        code, out, _ = run(capsys, "explain", "p() := e(a,b)", "-f", f"e={edge_csv}", "--placement", "executors",
                           "-q")
        assert code == 0 and "executors" in out and "placement driver" not in out, out
        assert spark.conf.get(PLACEMENT_CONF) == "driver"
    finally:
        spark.conf.unset(PLACEMENT_CONF)
    code, _, _ = run(capsys, "query", "p() := e(a,b)", "-f", f"e={edge_csv}", "--placement", "executors", "-q")
    assert code == 0 and spark.conf.get(PLACEMENT_CONF, None) is None
