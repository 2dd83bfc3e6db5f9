"""A durable maintained query killed with SIGKILL while applying batches reopens at a committed version.

A child process (no Spark: a saved state reopens from its Parquet files)
applies large batches to a state directory; the test kills it with SIGKILL
at several moments, reopens the state, checks the version and the answer
against an independent recount (scipy), re-applies the batches it did not
commit and checks the final answer again.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from faq.factor import Factor
from faq.graphs.edges import simple_directed
from faq import maintain
from faq.incremental import MaintainedQuery
from faq.io import read_edge_list
from tests.helpers import change_files

DATA = Path(__file__).parent / "data"
QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"
BATCHES = 5
BATCH_ROWS = 20_000

CHILD = r"""
import os, sys
import pyarrow.parquet as pq
from faq.incremental import MaintainedQuery
state, files = sys.argv[1], sys.argv[2:]
mq = MaintainedQuery.open(state)
print("open", mq.version, flush=True)
for version, path in enumerate(files, start=1):
    if version > mq.version:
        mq.apply({"edge": pq.read_table(path)}, version=version, label=os.path.basename(path))
        print("applied", version, flush=True)
"""


def start_child(state: Path, files: list[Path]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(state), *map(str, files)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    line = child.stdout.readline()
    assert line.startswith("open"), (line, child.stderr.read() if child.poll() is not None else "")
    return child


def test_sigkill_during_applies_leaves_a_committed_version(spark, tmp_path):
    graph = simple_directed(read_edge_list(str(DATA / "email-Eu-core.txt.gz")))
    df = graph.df.selectExpr(f"{graph.variables[0]} AS src", f"{graph.variables[1]} AS dst")
    initial = {tuple(r) for r in df.collect()}
    # large batches: a quarter deletions of present edges, the rest new edges
    files, counts = change_files(initial, tmp_path, BATCHES, BATCH_ROWS, deleted=0.25, seed=5)

    initial_state = tmp_path / "initial"
    factor = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    maintain(QUERY, {"edge": factor}, state=str(initial_state)).close()

    # A full run, timed, to place the kills inside the applies.
    timed = tmp_path / "timed"
    shutil.copytree(initial_state, timed)
    child = start_child(timed, files)
    started = time.perf_counter()
    assert child.wait(timeout=600) == 0, child.stderr.read()
    total = time.perf_counter() - started
    with MaintainedQuery.open(str(timed)) as done:
        assert (done.version, done.scalar()) == (BATCHES, counts[-1])

    seen = set()
    for fraction in (0.1, 0.35, 0.6, 0.85):
        state = tmp_path / f"killed-{fraction}"
        shutil.copytree(initial_state, state)
        child = start_child(state, files)
        time.sleep(fraction * total)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        with MaintainedQuery.open(str(state)) as again:  # reopen: a committed version, its exact answer
            version = again.version
            seen.add(version)
            assert 0 <= version <= BATCHES
            assert again.scalar() == counts[version], (fraction, version)
            for k in range(version + 1, BATCHES + 1):  # re-apply what was not committed: exact again
                again.apply({"edge": pq.read_table(files[k - 1])}, version=k)
                assert again.scalar() == counts[k]
            if again.store.is_writer:  # what the killed apply wrote is swept by the next writer (not by reading)
                named = {f for entry in again.store.manifest()["relations"].values() for f in entry["files"]}
                assert set(os.listdir(state / "data")) == named
    assert len(seen) >= 2, seen  # the kills landed at different points of the run
