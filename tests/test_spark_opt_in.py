"""Spark is opt-in in the test suite: pure tests and doctests run without a JVM.

A child process runs a selection of pure test modules and doctests with
pytest (the repository's conftest.py included) and then reports whether
PySpark ever started its JVM.  Two independent signs, both required absent:

* ``pyspark.SparkContext._gateway`` -- classic PySpark (and a local Spark
  Connect server) starts the JVM only through ``launch_gateway``, which
  stores the gateway there for the life of the process, even after the
  session stops;
* a ``java`` process among the child's descendants (the JVM outlives a
  stopped session until the Python process exits), read from ``/proc``.

The first does not depend on the platform; the second does not depend on
PySpark's internals.  Only the selection runs in the child (a few seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Pure tests and doctests, as a user would select them; none requests the `spark` fixture.
PURE_SELECTION = [
    "tests/test_query.py",
    "tests/test_semirings.py",
    "faq/hypergraph",
    "faq/language.py",
    "faq/insideout/planner.py",
    "faq/insideout/physical.py",
    "faq/errors",
    "faq/semirings/base.py",
    "faq/semirings/laws.py",
]

# Runs pytest on sys.argv[1:], then prints one JSON line: pytest's exit code, and the two signs of a JVM.
CHILD = r"""
import json, os, sys
import pytest

code = int(pytest.main(["-q", *sys.argv[1:]]))

gateway = False
if "pyspark" in sys.modules:
    from pyspark import SparkContext
    gateway = SparkContext._gateway is not None

def descendants(root):
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    # pid (comm) state ppid ...: comm may hold spaces, so split after its closing ')'
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        todo += kids
    return found

java = []
if os.path.isdir("/proc"):
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0].decode(errors="replace")) == "java":
            java.append(pid)

print(json.dumps({"pytest": code, "gateway": gateway, "java": java}))
"""


def run_child(selection: list[str]) -> tuple[dict, str]:
    """Run pytest on ``selection`` in a fresh interpreter -> (the child's report, its output)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("FAQ_TEST_REMOTE", "FAQ_REMOTE", "SPARK_REMOTE"):  # a classic run, whatever this one is
        env.pop(name, None)
    child = subprocess.run([sys.executable, "-c", CHILD, *selection], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    lines = child.stdout.strip().splitlines()
    assert lines, child.stderr[-3000:]
    return json.loads(lines[-1]), child.stdout + child.stderr


def test_pure_tests_and_doctests_start_no_jvm():
    report, output = run_child(PURE_SELECTION)
    assert report["pytest"] == 0, output[-6000:]
    assert " passed" in output and "deselected" not in output and "skipped" not in output, output[-2000:]
    assert report == {"pytest": 0, "gateway": False, "java": []}, output[-2000:]


def test_a_test_without_the_fixture_cannot_start_spark():
    """get_session -- directly, or inside faq (a factor needs a session) -- raises instead of starting one."""
    import faq.spark
    from faq.factor import factor_of

    for start in (faq.spark.get_session, lambda: factor_of([(1, 2, 1)], ["src", "dst"], "counting")):
        with pytest.raises(RuntimeError, match="without requesting the `spark` fixture") as info:
            start()
        assert type(info.value).__name__ == "SparkNotRequested"
