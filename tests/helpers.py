"""Helpers shared by test modules: the ``faq`` command run in-process, the motif-bindings oracle, the log semiring's ⊕,
change files and streams, and a crash of a streaming process.

``run(capsys, *argv)`` calls :func:`faq.cli.main` in this process, so a command
that needs Spark finds the test session -- the test must request the ``spark``
fixture (conftest.py) -- and one that fails on bad input before Spark starts
runs without it.  Shared fixtures (files the commands read) are in
tests/conftest.py; hypothesis strategies in tests/strategies.py.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable

import pytest

from faq import cli
from faq.graphs.pattern import parse_pattern


def run(capsys, *argv) -> tuple[int, str, str]:
    """main(argv) -> (exit code, stdout, stderr)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    """stderr without progress lines."""
    return [line for line in err.splitlines() if line.strip() and not line.startswith("[faq]")]


# The vertices the motif oracle enumerates: graphs given to it must use these ids.
NODES = range(6)


def bindings(edges: set, pattern) -> set:
    """Every binding of ``pattern`` in the digraph ``edges`` by enumeration: the independent oracle
    of motif tracking (tests/test_track.py, tests/test_track_cli.py)."""
    p = parse_pattern(pattern)
    und = {(u, v) for u, v in edges} | {(v, u) for u, v in edges}
    found = set()
    for values in itertools.product(NODES, repeat=len(p.vertices)):
        b = dict(zip(p.vertices, values))
        if any(b[u] == b[v] for u, v in itertools.combinations(p.vertices, 2) if frozenset((u, v)) not in p.allowed):
            continue
        ok = True
        for e in p.edges:
            has = (b[e.src], b[e.dst]) in (edges if e.directed else und)
            if has == e.negated:
                ok = False
                break
        if ok:
            found.add(values)
    return found


def log_add(a, b):
    """⊕ of the log semiring (log-sum-exp) as a user writes it: a function of two Spark Columns."""
    from pyspark.sql import functions as F  # here: importing this module stays Spark-free

    hi, lo = F.greatest(a, b), F.least(a, b)
    return F.when(lo == F.lit(-math.inf), hi).otherwise(hi + F.log1p(F.exp(lo - hi)))


def bare_python(directory) -> str:
    """The interpreter of a fresh virtual environment without pip in ``directory``: the driver's Python
    without faq, numpy, pyarrow or numba (a Spark worker's Python that lacks faq's dependencies)."""
    import venv
    from pathlib import Path

    venv.EnvBuilder(symlinks=True, with_pip=False).create(Path(directory))
    return str(Path(directory) / "bin" / "python")


def write_change_files(directory, header: str, rows_text) -> None:
    """One CSV file per batch of change rows in ``directory`` (``header`` first, then each batch's
    lines from ``rows_text``), as a Structured Streaming file source wants them: written under a
    hidden name and renamed into place (whole files only), with increasing modification times
    (the source takes files oldest first)."""
    import os
    import time
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    texts = list(rows_text)
    start = time.time() - len(texts)
    for i, rows in enumerate(texts):
        temporary = directory.parent / f".{directory.name}-{i}.tmp"
        temporary.write_text(header + "\n" + rows)
        final = directory / f"changes-{i:03d}.csv"
        temporary.replace(final)
        os.utime(final, (start + i, start + i))


def arrow_rows(items, schema, diff=None):
    """An Arrow table of ``items`` (tuples in ``schema``'s order), with a ``diff`` column when given."""
    import pyarrow as pa

    columns = list(zip(*items)) if items else [[] for _ in schema]
    data = {f.name: pa.array(list(c), f.type) for f, c in zip(schema, columns)}
    if diff is not None:
        data["diff"] = pa.array(diff, pa.int64())
    return pa.table(data)


def in_stream_order(paths) -> None:
    """Give ``paths`` increasing modification times, a second apart and in the past: a Structured
    Streaming file source takes files oldest first, and files written within one clock tick would
    otherwise come in the directory's order (on CI, a deletion once arrived before its insertion)."""
    import os
    import time

    paths = list(paths)
    start = time.time() - len(paths) - 1
    for i, path in enumerate(paths):
        os.utime(path, (start + i, start + i))


def csv_stream(spark, directory, schema: str):
    """A Structured Streaming CSV source over ``directory``: a header line, one file a micro-batch."""
    return spark.readStream.schema(schema).option("header", True).option("maxFilesPerTrigger", 1).csv(str(directory))


class Crash(RuntimeError):
    """The process dying: raised by a :func:`crash_after` progress callback."""


def crash_after(version: int) -> Callable[[Any], None]:
    """A progress callback that raises :class:`Crash` on the ``"done"`` event of ``version``: the state
    has committed that micro-batch, Spark has not (a process that dies between the two)."""
    def progress(event) -> None:
        if getattr(event, "kind", None) == "done" and event.version == version:  # (a fixpoint also sends notes)
            raise Crash(f"the process died after the state committed micro-batch {version - 1}")

    return progress


def stream_until_crash(maintained: Any, changes: Any, checkpoint: str, sink: str) -> None:
    """``maintained.stream`` of the files ``changes`` holds now (trigger ``availableNow``), made with a
    :func:`crash_after` callback, until the :class:`Crash`; then ``maintained`` is closed, leaving
    what a dead process leaves: its durable state, Spark's checkpoint and the sink."""
    query = maintained.stream(changes, checkpoint=checkpoint, sink=sink, trigger={"availableNow": True})
    with pytest.raises(Exception, match="the process died after"):
        query.awaitTermination()
    maintained.close()


# --- batch files of a changing graph, and their counts (the crash and fault-injection tests) -----------


def feed_forward(edges: set, n: int) -> int:
    """Feed-forward triangles of a simple digraph: Σ (A² ∘ A), by scipy (the oracle)."""
    import numpy as np
    import scipy.sparse as sp

    if not edges:
        return 0
    src, dst = (np.array(c, dtype=np.int64) for c in zip(*edges))
    a = sp.csr_matrix((np.ones(len(src), dtype=np.int64), (src, dst)), shape=(n, n))
    return int((a @ a).multiply(a).sum())


def change_files(initial: set, folder: Any, batches: int, rows: int, deleted: float, seed: int) -> tuple[list, list]:
    """``batches`` Parquet files of ``rows`` changes each (``src``, ``dst``, ``value`` ±1) to the simple digraph
    ``initial``: a fraction ``deleted`` deletions of present edges, the rest new edges; and the feed-forward
    triangle count of the graph before the first file and after each (scipy)."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 1 + max(max(e) for e in initial)
    rng = random.Random(seed)
    present, graphs, files = set(initial), [set(initial)], []
    for k in range(1, batches + 1):
        deletes = rng.sample(sorted(present), int(rows * deleted))
        inserts: set = set()
        while len(inserts) < rows - len(deletes):
            e = (rng.randrange(n), rng.randrange(n))
            if e[0] != e[1] and e not in present:
                inserts.add(e)
        changes = [(u, v, -1) for u, v in deletes] + [(u, v, 1) for u, v in sorted(inserts)]
        present = (present - set(deletes)) | inserts
        graphs.append(set(present))
        files.append(folder / f"{k:03d}.parquet")
        pq.write_table(pa.table({c: [r[i] for r in changes] for i, c in enumerate(("src", "dst", "value"))}),
                       files[-1])
    return files, [feed_forward(g, n) for g in graphs]
