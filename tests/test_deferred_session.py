"""Commands whose every step runs in-process start no Spark, and load neither PySpark nor pandas nor numba.

Each command runs in a child process (a fresh interpreter is the point), and
the child reports what it loaded.  The same commands with
``--placement executors`` start Spark on first use and give the same answer,
and the plan's choice of kernel for small in-process joins is the one that runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EMAIL = str(ROOT / "tests" / "data" / "email-Eu-core.txt.gz")

# Run a command through faq's entry point, then print which heavy modules the process loaded.
CHILD = """
import json, sys
from faq.cli.entry import main
code = main(sys.argv[1:])
print("LOADED " + json.dumps({m: m in sys.modules for m in ("pyspark", "pandas", "numba")}), flush=True)
sys.exit(code)
"""


def run_child(*argv: str, timeout: float = 600) -> tuple[int, str, dict]:
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
    loaded = {}
    for line in done.stdout.splitlines():
        if line.startswith("LOADED "):
            loaded = json.loads(line[len("LOADED "):])
    return done.returncode, done.stdout + done.stderr, loaded


def test_small_triangle_count_starts_nothing():
    code, output, loaded = run_child("triangles", EMAIL, "--undirected")
    assert code == 0, output
    assert "105461 undirected triangles" in output  # SNAP's published count
    assert "starting Spark" not in output
    assert loaded == {"pyspark": False, "pandas": False, "numba": False}, output


def test_explain_of_a_held_edge_list_starts_nothing_and_names_the_numpy_kernel():
    code, output, loaded = run_child("explain", "count() := E(a,b), E(b,c), E(a,c)", "--factor", f"E={EMAIL}")
    assert code == 0, output
    assert "starting Spark" not in output
    assert "numpy kernel: est. work" in output and "runs in-process on the driver" in output
    assert not loaded["pyspark"], output


def test_the_same_command_on_the_executors_starts_spark_when_first_needed():
    code, output, loaded = run_child("triangles", EMAIL, "--undirected", "--placement", "executors")
    assert code == 0, output
    assert "105461 undirected triangles" in output
    assert "starting Spark" in output and loaded["pyspark"]


def test_the_kernel_explain_names_is_the_one_that_runs(spark):
    import numpy as np

    from faq.factor import factor_of
    from faq.insideout.executor import evaluate
    from faq.language import parse_query

    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 60, 600), rng.integers(0, 60, 600)
    keep = src < dst
    pairs = set(zip(src[keep].tolist(), dst[keep].tolist()))
    edges = factor_of([(a, b, 1) for a, b in sorted(pairs)], ["src", "dst"], spark=spark)
    query = parse_query("count() := edge(a,b), edge(b,c), edge(a,c)")
    with evaluate(query, {"edge": edges}, placement="driver") as result:
        strategy = result.plan.steps[0].strategy
        count = result.scalar()
        notes = result.notes
    brute = sum(1 for a, b in pairs for c in range(60) if (b, c) in pairs and (a, c) in pairs)
    assert count == brute
    if strategy.numpy_kernel:
        assert "numpy kernel: est. work" in strategy.aggregation
        assert "numpy kernel (the plan's choice)" in notes[0]
    else:  # this process loaded the compiled loop earlier (another test): compiled kernels, the oriented count first
        assert strategy.oriented_count and "oriented by degree" in strategy.aggregation
        assert notes[0].startswith("in-process triangle count (oriented by degree")


@pytest.mark.parametrize("master, cores", [("local[3]", 3), ("local-cluster[2,1,1024]", 2), ("yarn", None)])
def test_a_deferred_session_answers_planning_without_starting(master, cores):
    from faq.insideout.binding import session_environment
    from faq.spark import DEFAULT_CONFIG, DeferredSession

    opened = []
    lazy = DeferredSession(lambda: opened.append(master), master=master, settings=DEFAULT_CONFIG)
    lazy.conf.set("spark.faq.placement", "driver")
    if cores is None:  # a cluster manager's cores are not in its URL: planning must ask the session
        assert lazy.cores is None
        return
    env = session_environment(lazy)
    assert (env.parallelism, env.placement, env.connect) == (cores, "driver", False)
    assert not lazy.started and opened == []


# --- the Python API: jobs over data the driver holds start no Spark (issue 51, item 4) --------------

# Run a job from the Python API, then print its answer and whether a SparkSession was ever made.
API_CHILD = """
import json, sys
import faq
answer = eval(sys.argv[1])
spark = sys.modules.get("pyspark.sql.session")
made = spark is not None and spark.SparkSession._instantiatedSession is not None
print("RESULT " + json.dumps({"answer": answer, "pyspark": "pyspark" in sys.modules, "session": made}), flush=True)
"""

TRIANGLE = "count() := edge(a,b), edge(b,c), edge(a,c)"
MOTIF = "(a)->(b); (b)->(c); (a)->(c)"


def run_api_child(expression: str) -> dict:
    done = subprocess.run([sys.executable, "-c", API_CHILD, expression], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("expression, answer", [
    (f"faq.maintain({TRIANGLE!r}, edge=[(1,2),(2,3),(1,3)]).scalar()", 1),
    (f"faq.maintain({TRIANGLE!r}, edge=[(1,2),(2,3)]).scalar()", 0),
    (f"faq.query({TRIANGLE!r}, edge=[(1,2),(2,3),(1,3)]).scalar()", 1),
    (f"faq.query({TRIANGLE!r}, edge=__import__('pandas').DataFrame({{'a':[1,2,1],'b':[2,3,3]}})).scalar()", 1),
    (f"faq.query({TRIANGLE!r}, edge=__import__('pyarrow').table({{'a':[1,2,1],'b':[2,3,3]}})).scalar()", 1),
    (f"faq.query({TRIANGLE!r}, edge={EMAIL!r}).scalar()", 373386),  # self-loops kept (count_triangles drops)
    (f"faq.count_triangles({EMAIL!r}).count", 105461),
    (f"faq.track([(1,2),(2,3),(1,3),(3,1)], {MOTIF!r}).count", 1),
    ("faq.paths([(1,2,1.0),(2,3,2.0),(1,3,5.0)], 1).count()", 3),
])
def test_python_api_jobs_on_held_data_make_no_spark_session(expression, answer):
    result = run_api_child(expression)
    assert result["answer"] == answer
    assert result["session"] is False
    assert result["pyspark"] is False, "nothing in these jobs needs PySpark"


def test_paths_on_held_edges_gives_the_answer_without_spark_and_df_makes_it():
    result = run_api_child("sorted(zip(*[faq.paths([(1,2,1.0),(2,3,2.0),(1,3,5.0)], 1).factor.relation.arrays[c].tolist()"
                           " for c in ('node', 'value')]))")
    assert result["answer"] == [[1, 0.0], [2, 1.0], [3, 3.0]] and not result["session"]
    made = run_api_child("sorted(map(list, faq.paths([(1,2,1.0),(2,3,2.0),(1,3,5.0)], 1).df.collect()))")
    assert made["answer"] == [[1, 0.0], [2, 1.0], [3, 3.0]] and made["session"]  # .df: Spark's DataFrame, made now
