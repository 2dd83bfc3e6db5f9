"""Random malformations of every input kind, through every command: a catalog error (exit 2) or the right answer.

Each probe writes one malformed input -- an edge list (text, ``.gz``, Parquet,
Parquet under a ``.txt`` name), an as-of CSV or batch file, a Matrix Market
file, a weight column -- runs a ``faq`` command on it in-process
(:func:`faq.cli.entry.main`, milliseconds a probe: no Python start) and
checks the outcome:

* exit 0 and the answer of an oracle that parses the input by the documented
  rules (a small Python twin: :func:`oracle_edges`), or
* exit 2 and one line ``faq: error: [CLASS] ...`` whose CLASS is in the catalog
  -- and exit 2 whenever the oracle says the input is malformed (no silent
  wrong answer);
* never exit 1, never a traceback.

The library takes the same malformations as Python objects (tuples, pandas,
Arrow) and must raise a :class:`~faq.errors.FAQError` or answer right.  The
generator is seeded (:data:`SEED`): a failure names its probe and replays.
The commands that run on the driver (``truss``, ``asof``) get most probes
(an irregular edge list still goes to Spark's parser, so the truss test holds
the session); the commands that run Spark steps get fewer.  Each test prints
how many probes it made and that none ended outside the catalog.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import random
import re
from collections import Counter
from typing import Callable, Optional

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import faq
from faq.cli.entry import main
from faq.errors import ERROR_CLASSES, FAQError

SEED = 48
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INT = re.compile(r"[+-]?[0-9]{1,19}")
_ERROR = re.compile(r"^faq: error: \[([A-Z_]+)\] ")

#: Tokens a malformation puts where a node id was: each either an id (the oracle takes it) or not.
TOKENS = ["x", "1.5", "2.0", "nan", "inf", "-inf", "1e3", str(2**63), str(INT64_MIN - 1), str(INT64_MAX), "0x1F",
          "", "--1", "+5", "٣", "1_000", "None", "\x00", "007"]


class Probes:
    """Runs and judges probes; counts them by outcome (printed at the end of a test)."""

    def __init__(self) -> None:
        self.outcomes: Counter = Counter()

    def cli(self, *argv) -> tuple[int, str, str]:
        """``faq ARGV -q`` in this process: (exit code, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in argv] + ["-q"])
            except SystemExit as exc:  # argparse's own exits
                code = exc.code if isinstance(exc.code, int) else 2
        return code, out.getvalue(), err.getvalue()

    def judge(self, what: str, code: int, err: str, valid: Optional[bool]) -> Optional[str]:
        """Exit 0, or exit 2 with a catalog class; exit 2 when ``valid`` is False.  The error class (or None)."""
        assert "Traceback" not in err, (what, err)
        assert code in (0, 2), (what, code, err)
        if code == 0:
            assert valid is not False, f"{what}: malformed input answered (a silent wrong answer)"
            self.outcomes["answered"] += 1
            return None
        lines = [line for line in err.splitlines() if line.startswith("faq: error:")]
        assert len(lines) == 1, (what, err)
        found = _ERROR.match(lines[0])
        assert found and found.group(1) in ERROR_CLASSES, (what, lines[0])
        self.outcomes[found.group(1)] += 1
        return found.group(1)

    def library(self, what: str, call: Callable[[], object], expected: Callable[[object], bool]) -> None:
        """A library call raises an FAQError, or returns what ``expected`` accepts."""
        try:
            result = call()
        except FAQError as exc:
            self.outcomes[exc.error_class] += 1
            return
        assert expected(result), (what, result)
        self.outcomes["answered"] += 1

    def report(self, name: str) -> None:
        total = sum(self.outcomes.values())
        print(f"\n{name}: {total} probes, none outside the catalog: {dict(self.outcomes)}")


# --- the oracle: an edge list parsed by the documented rules -----------------------------------------


def oracle_edges(data: bytes) -> Optional[list[tuple[int, int]]]:
    """The (src, dst) rows of an edge list by the module notes of faq.io.edges, or None when malformed."""
    text = data.decode("utf-8", errors="replace")
    text = text[1:] if text.startswith("\ufeff") else text  # Hadoop's line reader skips a UTF-8 byte order mark
    rows = []
    for raw in re.split(r"\r\n|\r|\n", text):
        line = re.sub(r"^[ \t\r\f\x0b]+|[ \t\r\f\x0b]+$", "", raw)
        if not line or line.startswith(("#", "%")):
            continue
        fields = re.split(r"[ \t\r\f\x0b,]+", line)
        if len(fields) < 2 or not all(_INT.fullmatch(f) and INT64_MIN <= int(f) <= INT64_MAX for f in fields[:2]):
            return None
        rows.append((int(fields[0]), int(fields[1])))
    return rows


def triangles(rows: list[tuple[int, int]]) -> int:
    """Undirected triangles of the simple graph of ``rows``."""
    adjacent: dict[int, set] = {}
    for u, v in rows:
        if u != v:
            adjacent.setdefault(u, set()).add(v)
            adjacent.setdefault(v, set()).add(u)
    return sum(len(adjacent[u] & adjacent[v]) for u in adjacent for v in adjacent[u] if u < v) // 3


def random_graph(rng: random.Random) -> list[tuple[int, int]]:
    nodes = rng.sample(range(-5, 40), 7)
    return [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(6, 16))]


def mutated_edge_list(rng: random.Random, rows: list[tuple[int, int]]) -> tuple[str, bytes]:
    """One random malformation of an edge list: (its name, its bytes)."""
    lines = [f"{u}{rng.choice([' ', chr(9), ','])}{v}" for u, v in rows]
    kind = rng.choice(["token", "token", "cut", "one_field", "extra", "blanks", "comment", "crlf", "bom", "binary",
                       "empty", "weights"])
    if kind == "token" and lines:
        i = rng.randrange(len(lines))
        fields = re.split(r"[ \t,]", lines[i])
        fields[rng.randrange(2)] = rng.choice(TOKENS)
        lines[i] = " ".join(fields)
    elif kind == "cut":
        text = "\n".join(lines).encode()
        return kind, text[: rng.randrange(len(text) + 1)]
    elif kind == "one_field" and lines:
        lines[rng.randrange(len(lines))] = str(rng.randint(0, 9))
    elif kind == "extra":
        lines = [f"{line} {rng.randint(0, 9)} z" for line in lines]
    elif kind == "blanks":
        lines = [f"  {line.replace(' ', '   ')}\t" for line in lines]
    elif kind == "comment" and lines:
        lines.insert(rng.randrange(len(lines)), rng.choice(["# mid", "% mid", "", "   "]))
    elif kind == "crlf":
        return kind, ("\r\n".join(lines) + "\r\n").encode()
    elif kind == "bom":
        return kind, b"\xef\xbb\xbf" + "\n".join(lines).encode()
    elif kind == "binary":
        return kind, bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == "empty":
        return kind, rng.choice([b"", b"# nothing\n", b"\n\n"])
    elif kind == "weights":
        lines = [f"{line} {rng.choice(['1', '2.5', 'nan', 'inf', '-1', 'x'])}" for line in lines]
    return kind, ("\n".join(lines) + rng.choice(["\n", ""])).encode()


def parquet_edges(rng: random.Random, rows: list[tuple[int, int]], path: str) -> Optional[list[tuple[int, int]]]:
    """A Parquet edge list, ids sometimes floats (whole or not, NaN), sometimes strings; the oracle's rows or None."""
    src = [u for u, _ in rows]
    dst = [v for _, v in rows]
    kind = rng.choice(["int", "whole_float", "fraction", "nan", "string", "null"])
    if kind == "whole_float":
        src = [float(u) for u in src]
    elif kind == "fraction":
        src[rng.randrange(len(src))] += 0.5
    elif kind == "nan":
        src = [float(u) for u in src]
        src[rng.randrange(len(src))] = math.nan
    elif kind == "string":
        src = [str(u) for u in src]
    table = pa.table({"src": pa.array(src), "dst": pa.array(dst, pa.int64())})
    if kind == "null":
        table = table.set_column(0, "src", pa.array([None] + src[1:], pa.int64()))
    pq.write_table(table, path)
    return rows if kind in ("int", "whole_float") else None


# --- the Spark-free commands: truss and asof ----------------------------------------------------------


@pytest.mark.usefixtures("spark")  # an edge list of irregular shape is parsed by Spark (faq.io.edges)
def test_fuzz_truss_and_edge_lists(tmp_path):
    """``faq truss`` and ``faq.truss`` on malformed edge lists (text, gzip, Parquet, tuples, pandas): the driver
    reads most; an irregular one goes to Spark's parser."""
    rng, probes = random.Random(SEED), Probes()
    for n in range(36):
        rows = random_graph(rng)
        path = str(tmp_path / f"g{n}{rng.choice(['.txt', '.tsv', '', '.edges'])}")
        if n % 6 == 5:  # Parquet, under a .parquet name or a text one (found by its magic bytes)
            path = str(tmp_path / f"g{n}{rng.choice(['.parquet', '.txt'])}")
            expected = parquet_edges(rng, rows, path)
            kind = "parquet"
        else:
            kind, data = mutated_edge_list(rng, rows)
            if n % 7 == 3:
                path += ".gz"
                data = gzip.compress(data)[: None if rng.random() < 0.7 else -5]  # sometimes cut short
            with open(path, "wb") as f:
                f.write(data)
            expected = oracle_edges(data) if not path.endswith(".gz") else _gz_oracle(data)
        code, out, err = probes.cli("truss", path, "--json")
        what = f"probe {n} ({kind}): faq truss {path}"
        if probes.judge(what, code, err, expected is not None) is None:
            assert _truss_answer(out) == _truss_truth(expected), (what, out)
    for n in range(30):  # the same malformations as Python objects
        rows = random_graph(rng)
        bad = [list(r) for r in rows]
        bad[rng.randrange(len(bad))][rng.randrange(2)] = rng.choice([1.5, 2.0, math.nan, None, "a", 2**64, -(2**63),
                                                                     True, float("inf")])
        given = rng.choice([lambda b: [tuple(r) for r in b], lambda b: pd.DataFrame(b, columns=["src", "dst"])])(bad)
        probes.library(f"truss of {bad}", lambda: faq.truss(given), lambda r: _is_truss_of(r, bad))
    probes.report("truss and edge lists")


def _gz_oracle(data: bytes) -> Optional[list[tuple[int, int]]]:
    try:
        return oracle_edges(gzip.decompress(data))
    except (OSError, EOFError):
        return None


def _truss_answer(out: str) -> tuple[int, int]:
    import json

    summary = json.loads(out.strip().splitlines()[-1])
    return summary["edges"], summary.get("max_k", summary.get("largest"))


def _truss_truth(rows: list[tuple[int, int]]) -> tuple[int, int]:
    result = faq.truss(rows)  # tuples of ints: the trusted input path
    return len(result.src), result.max_k


def _is_truss_of(result, rows) -> bool:
    """An answer for ``rows`` is right only if every id was an id (whole floats, ints in range)."""
    if any(isinstance(x, bool) or (isinstance(x, float) and not x.is_integer()) or x is None or isinstance(x, str)
           for r in rows for x in r):
        return False
    clean = [(int(u), int(v)) for u, v in rows]
    return (len(result.src), result.max_k) == _truss_truth(clean)


ASOF_LEFT = "time,sym,qty\n1,a,5\n3,b,7\n6,a,1\n"
ASOF_RIGHT = "time,sym,px\n0,a,10\n2,b,12\n5,a,11\n"


def test_fuzz_asof_tables_and_batches(tmp_path):
    """``faq asof`` on malformed CSV tables and batch files, and ``faq.asof_join`` on malformed frames."""
    rng, probes = random.Random(SEED + 1), Probes()
    left = tmp_path / "left.csv"
    left.write_text(ASOF_LEFT)
    base = faq.asof_join(pd.read_csv(io.StringIO(ASOF_LEFT)), pd.read_csv(io.StringIO(ASOF_RIGHT)), on="time",
                         by="sym")
    for n in range(50):
        kind, text, same = _mutated_csv(rng, ASOF_RIGHT)
        right, out = tmp_path / f"right{n}.csv", tmp_path / f"out{n}.parquet"
        right.write_bytes(text)
        code, _, err = probes.cli("asof", left, right, "--on", "time", "--by", "sym", "--out", out)
        probes.judge(f"probe {n} ({kind}): faq asof", code, err, False if same is False else None)
        if code == 0 and same:
            assert pd.read_parquet(out).equals(base), (kind, text)
    good = tmp_path / "right.csv"
    good.write_text(ASOF_RIGHT)
    for n in range(20):  # batch files of --updates
        kind, text, same = _mutated_csv(rng, "side,time,sym,qty,px\nright,4,a,,13\nleft,7,b,2,\n")
        folder = tmp_path / f"updates{n}"
        folder.mkdir()
        (folder / "001.csv").write_bytes(text)
        code, out, err = probes.cli("asof", left, good, "--on", "time", "--by", "sym",
                                    "--updates", folder)
        probes.judge(f"batch probe {n} ({kind})", code, err, False if same is False else None)
    frames = [pd.DataFrame({"time": [1, "a"], "sym": ["a", "a"]}), pd.DataFrame([[1, 2]], columns=["time", "time"]),
              pd.DataFrame({"time": [1.5, math.nan], "sym": [None, "a"]}), pd.DataFrame({"sym": ["a"]}),
              pd.DataFrame({"time": [INT64_MIN, INT64_MAX], "sym": ["a", "a"]})]
    for frame in frames:
        probes.library(f"asof_join of {list(frame.columns)}", lambda: faq.asof_join(
            frame, pd.DataFrame({"time": [0, INT64_MAX], "sym": ["a", "a"], "px": [1.0, 2.0]}), on="time", by="sym",
            tolerance=10), lambda r: isinstance(r, pd.DataFrame))
    probes.report("as-of tables and batches")


def _mutated_csv(rng: random.Random, text: str) -> tuple[str, bytes, Optional[bool]]:
    """(kind, bytes, same): same is True when the table is the original, False when it must be refused."""
    lines = text.splitlines()
    kind = rng.choice(["cut", "short_row", "long_row", "token", "dup_header", "blank_end", "crlf", "empty",
                       "header_only", "binary", "no_newline"])
    if kind == "cut":
        return kind, text.encode()[: rng.randrange(len(lines[0]) + 2, len(text) - 1)], False
    if kind == "short_row":
        lines[1] = ",".join(lines[1].split(",")[:-1])
        return kind, ("\n".join(lines) + "\n").encode(), False
    if kind == "long_row":
        lines[-1] += ",9"
        return kind, ("\n".join(lines) + "\n").encode(), False
    if kind == "token":
        i = rng.randrange(1, len(lines))
        fields = lines[i].split(",")
        fields[rng.randrange(len(fields))] = rng.choice(TOKENS[:12])
        lines[i] = ",".join(fields)
        return kind, ("\n".join(lines) + "\n").encode(), None
    if kind == "dup_header":
        lines[0] = lines[0].replace("sym", "time")
        return kind, ("\n".join(lines) + "\n").encode(), False
    if kind == "blank_end":
        return kind, (text + "\n  ").encode(), text.startswith("time")
    if kind == "crlf":
        return kind, text.replace("\n", "\r\n").encode(), text.startswith("time")
    if kind == "empty":
        return kind, b"", False
    if kind == "header_only":
        return kind, (lines[0] + "\n").encode(), None
    if kind == "binary":
        return kind, bytes(rng.randrange(256) for _ in range(40)), None
    return kind, text.rstrip("\n").encode(), False  # no_newline: the last line may be cut


# --- the commands that run Spark steps -----------------------------------------------------------------


@pytest.mark.usefixtures("spark")
def test_fuzz_spark_commands(tmp_path):
    """triangles, motif, paths, components, query, explain, matrix-chain, track on malformed inputs."""
    rng, probes = random.Random(SEED + 2), Probes()
    for n in range(12):
        rows = random_graph(rng)
        kind, data = mutated_edge_list(rng, rows)
        path = tmp_path / f"g{n}.txt"
        path.write_bytes(data)
        expected = oracle_edges(data)
        command = ["triangles", "motif", "components", "query", "explain", "track"][n % 6]
        argv = {"triangles": ["triangles", path], "motif": ["motif", "(a)->(b); (b)->(c)", path, "--count"],
                "components": ["components", path], "query": ["query", "count() := e(a,b), e(b,c)", "--factor",
                                                               f"e={path}"],
                "explain": ["explain", "count() := e(a,b)", "--factor", f"e={path}"],
                "track": ["track", "(a)->(b)", path, tmp_path]}[command]
        code, out, err = probes.cli(*argv)
        what = f"probe {n} ({kind}): faq {command}"
        probes.judge(what, code, err, expected is not None)
        if code == 0 and command == "triangles":
            assert out.split(": ")[1].startswith(f"{triangles(expected)} undirected"), (what, out)
    for n in range(6):  # weights of faq paths
        weight = rng.choice(["1", "2.5", "nan", "inf", "x", "", "1e308", "-0"])
        path = tmp_path / f"w{n}.txt"
        path.write_text(f"1 2 {weight}\n2 3 1.0\n")
        code, out, err = probes.cli("paths", path, "--source", rng.choice(["1", "3", str(2**64), "-1"]))
        probes.judge(f"paths with weight {weight!r}", code, err, False if weight in ("nan", "x") else None)
    for n, text in enumerate(_bad_matrices()):
        path = tmp_path / f"m{n}.mtx"
        path.write_text(text)
        code, out, err = probes.cli("matrix-chain", path, path, "--out", tmp_path / f"product{n}.mtx")
        probes.judge(f"matrix {text!r}", code, err, None)
    probes.report("Spark commands")


def _bad_matrices() -> list[str]:
    header = "%%MatrixMarket matrix coordinate real general\n"
    return [header + "2 2 1\n1 1 2.0\n", header + "2 2 2\n1 1 2.0\n", header + "2 2 1\n3 1 2.0\n",
            header + "2 2 1\n1 1 x\n", header + "-2 2 1\n", header + "2 2 1\n1 1 nan\n", "%%MatrixMarket\n",
            header + "2 2 1\n1 1 2.0"]


# --- the reproductions of the issue ----------------------------------------------------------------------


def test_the_library_reproductions_are_refused():
    """Issue 48's library cases, each a catalog error with its parameters (no Spark)."""
    with pytest.raises(FAQError) as info:
        faq.truss([(1.0, 2.0), (1.5, 2.0), (1.0, 1.5)])
    assert info.value.error_class == "NODE_ID_VALUES"
    assert (info.value.parameters["column"], info.value.parameters["row"], info.value.parameters["value"]) == \
        ("src", 1, 1.5)
    assert faq.truss([(1.0, 2.0), (2.0, 3.0), (1, 3)]).max_k == 3  # whole floats are the ids they name
    for ids, error_class in [(("a", "b"), "NODE_ID_VALUES"), ((math.nan, 1), "NULL_KEY"), ((None, 1), "NULL_KEY"),
                             ((2**64, 1), "NODE_ID_VALUES")]:
        with pytest.raises(FAQError) as info:
            faq.truss([ids, (1, 2)])
        assert info.value.error_class == error_class, ids
    with pytest.raises(FAQError) as info:
        faq.query(123)
    assert info.value.error_class == "INPUT_TYPE"


def test_ridge_and_overflowing_features_are_refused_before_lapack(capfd):
    houses = pd.DataFrame({"k": [1, 1, 1], "x": [1.0, 2.0, 3.0], "y": [2.0, 4.1, 6.2]})
    with pytest.raises(FAQError) as info:
        faq.linear_regression("t(k)", "t.y", ["t.x"], t=houses, ridge=float("inf"))
    assert info.value.error_class == "INVALID_ARGUMENT" and info.value.parameters["argument"] == "ridge"
    huge = houses.assign(x=[1e200, 2e200, 3e200])
    with pytest.raises(FAQError) as info:
        faq.linear_regression("t(k)", "t.y", ["t.x"], t=huge)
    assert info.value.error_class == "MOMENTS_NOT_FINITE"
    assert "DLASCL" not in capfd.readouterr().err  # LAPACK was not called
