"""The partitioned (HyperCube / Shares) generic join: its grid, the planner's choice by bytes, exactness.

Pure tests of :func:`faq.hypergraph.shares.shares` and of the strategy choice run
without Spark; the join itself is checked against brute force and binary joins
in tests/test_generic_join.py (every strategy) and here on a real graph, and
on ``local-cluster[2,1,1024]`` (in a child process: tests/partitioned_cluster_job.py)
with an index budget the index cannot fit.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faq.errors import InvalidArgumentError
from faq.insideout.physical import (
    BYTES_PER_INDEX_ROW,
    JOIN_METHODS,
    Environment,
    choose_strategy,
)
from faq.settings import INDEX_MEMORY_FRACTION, parse_size
from faq.hypergraph.shares import COMPILED_BYTES_PER_INDEX_ROW, grid_for, shares, task_rows

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TRIANGLE = [("a", "b"), ("a", "c"), ("b", "c")]
EMAIL_EU_CORE_TRIANGLES = 105461  # SNAP's published count (tests/data/graphs-MANIFEST.tsv)


# --- shares (pure) -----------------------------------------------------------------


@pytest.mark.parametrize("tasks", [1, 2, 5, 8, 16, 27, 64, 100])
def test_shares_product_at_most_tasks_and_optimal(tasks):
    """Π shares ≤ tasks, and no share vector within the bound holds fewer rows per cell."""
    rows = [300, 100, 50]
    s = shares(["a", "b", "c"], TRIANGLE, rows, tasks)
    assert math.prod(s.values()) <= tasks and all(v >= 1 for v in s.values())
    best = min(
        task_rows(TRIANGLE, rows, {"a": x, "b": y, "c": z})
        for x in range(1, tasks + 1) for y in range(1, tasks + 1) for z in range(1, tasks + 1)
        if x * y * z <= tasks
    )
    assert task_rows(TRIANGLE, rows, s) == best


@pytest.mark.parametrize("tasks,expected", [(8, 2), (27, 3), (64, 4), (125, 5)])
def test_triangle_on_equal_sizes_gets_equal_shares(tasks, expected):
    assert shares(["a", "b", "c"], TRIANGLE, [1000] * 3, tasks) == {"a": expected, "b": expected, "c": expected}


def test_triangle_shares_are_even_when_the_cube_root_is_not_whole():
    s = shares(["a", "b", "c"], TRIANGLE, [1000] * 3, 16)
    assert sorted(s.values()) == [2, 2, 4]


def test_a_variable_in_no_relation_gets_share_one():
    s = shares(["a", "b", "z"], [("a", "b")], [10], 16)
    assert s["z"] == 1 and s["a"] * s["b"] == 16


def test_a_larger_relation_gets_its_variables_split_more():
    """R(a,b) much larger than S(b,c): the grid splits a and b, not c."""
    s = shares(["a", "b", "c"], [("a", "b"), ("b", "c")], [10_000, 10], 16)
    assert s["c"] == 1 and s["a"] * s["b"] == 16


def test_many_variables_fall_back_to_a_greedy_search():
    """A 5-clique's 10 relations over 5 variables on 4096 cells: beyond the exhaustive limit,
    the greedy search still keeps Π ≤ tasks and splits every variable."""
    variables = ["a", "b", "c", "d", "e"]
    relations = [(x, y) for i, x in enumerate(variables) for y in variables[i + 1:]]
    s = shares(variables, relations, [1000] * len(relations), 4096)
    assert math.prod(s.values()) <= 4096 and min(s.values()) >= 2


def test_grid_grows_until_a_cell_fits_the_budget():
    index_bytes = 3 * 16_000 * BYTES_PER_INDEX_ROW
    for budget in (index_bytes, index_bytes / 4, index_bytes / 10):
        grid = grid_for(["a", "b", "c"], TRIANGLE, [16_000] * 3, budget, parallelism=2)
        assert grid.bytes_per_task <= budget and grid.cells >= 2
    huge = grid_for(["a", "b", "c"], TRIANGLE, [1e12] * 3, 1e3, parallelism=2)
    assert huge.cells <= 1024 and huge.bytes_per_task > 1e3  # capped: the plan says it does not fit


# --- the planner's choice (pure) ----------------------------------------------------


def uses(rows):
    return [(vs, rows) for vs in TRIANGLE]


def test_broadcast_while_the_index_fits_the_index_memory():
    env = Environment(parallelism=2, index_memory=10_000 * BYTES_PER_INDEX_ROW)
    fits = choose_strategy("generic", 10_000, True, env, uses(10_000))
    assert fits.name == "broadcast" and fits.index_bytes == 10_000 * BYTES_PER_INDEX_ROW
    over = choose_strategy("generic", 10_001, True, env, uses(10_001))
    assert over.name == "partitioned" and "exceeds the index memory" in over.reason
    assert over.task_bytes <= env.index_memory and over.cells == math.prod(s for _, s in over.shares)
    # The explain line and the JSON form show the grid, the cells and the per-task estimate.
    assert "grid a=" in over.describe() and f"({over.cells} cells)" in over.describe()
    d = over.to_dict()
    assert d["grid"] == dict(over.shares) and d["cells"] == over.cells and d["task_bytes"] == over.task_bytes


def test_the_kernel_sets_the_bytes_per_row_that_decide_broadcast():
    """A count compiles (no hash tables: COMPILED_BYTES_PER_INDEX_ROW a row) and broadcasts an index
    that the numpy kernel (BYTES_PER_INDEX_ROW a row, with its hash tables) could not hold; the
    same triangle keeping ``a`` runs numpy and is partitioned under the same budget."""
    from faq.insideout.planner import plan_query
    from faq.language import parse_query

    rows = 10_000
    env = Environment(parallelism=2, index_memory=rows * (BYTES_PER_INDEX_ROW + COMPILED_BYTES_PER_INDEX_ROW) // 2)
    types = dict.fromkeys("abc", "bigint")
    counted = plan_query(parse_query("q() := edge(a, b), edge(a, c), edge(b, c)"), semiring="counting",
                   sizes={"edge": rows}, variable_types=types, environment=env)
    step = next(s for s in counted.steps if s.strategy.name != "binary")
    assert step.strategy.name == "broadcast" and step.strategy.aggregation.endswith("compiled loop (numba)")
    assert step.strategy.index_bytes == rows * COMPILED_BYTES_PER_INDEX_ROW < env.index_memory
    by_a = plan_query(parse_query("q(a) := edge(a, b), edge(a, c), edge(b, c)"), semiring="counting",
                sizes={"edge": rows}, variable_types=types, environment=env)
    step = next(s for s in by_a.steps if s.strategy.name != "binary")
    assert step.strategy.name == "partitioned" and "numpy kernel" in step.strategy.aggregation
    assert step.strategy.index_bytes == rows * BYTES_PER_INDEX_ROW > env.index_memory
    assert step.strategy.task_bytes <= env.index_memory


def test_non_integer_keys_over_the_budget_shuffle():
    env = Environment(parallelism=2, index_memory=1000)
    assert choose_strategy("generic", 10_000, False, env, uses(10_000)).name == "shuffle"
    forced = choose_strategy("generic_partitioned", 10, False, env, uses(10))
    assert forced.name == "shuffle" and "needs integer keys" in forced.reason


def test_forced_partitioned_and_forced_broadcast():
    env = Environment(parallelism=4, index_memory=1000)
    assert "generic_partitioned" in JOIN_METHODS
    forced = choose_strategy("generic_partitioned", 10, True, env, uses(10))
    assert forced.name == "partitioned" and forced.reason == "forced" and forced.cells >= 2
    # A forced broadcast ignores the byte budget (as it ignores the automatic row limit).
    assert choose_strategy("generic_broadcast", 10_000, True, env, uses(10_000)).name == "broadcast"


def test_unknown_sizes_broadcast_and_forced_partitioned_uses_the_parallelism():
    env = Environment(parallelism=8, index_memory=1000)
    assert choose_strategy("generic", None, True, env, uses(math.inf)).name == "broadcast"
    forced = choose_strategy("generic_partitioned", None, True, env, uses(math.inf))
    assert forced.name == "partitioned" and forced.cells == 8 and forced.task_bytes is None


def test_parse_size():
    assert parse_size("600k") == 600 * 1024 and parse_size("1G") == 1 << 30 and parse_size("1024", "m") == 1 << 30
    with pytest.raises(InvalidArgumentError) as caught:
        parse_size("lots")
    assert caught.value.parameters["argument"] == "size"


def test_session_environment_reads_the_budget(spark):
    from faq.insideout.binding import session_environment

    spark.conf.set("spark.faq.indexMemory", "600k")
    try:
        assert session_environment(spark).index_memory == 600 * 1024
    finally:
        spark.conf.unset("spark.faq.indexMemory")
    # Without it, on a local master (executors on this machine): half the memory the JVM heaps leave,
    # shared by the index's mapped copy and one addition per worker, never less than a quarter of the
    # driver's heap (the test session: 3g; a Connect server started by faq: 4g); on a cluster a quarter
    # of the executors' memory.
    import os

    from faq.spark import default_parallelism

    master = spark.conf.get("spark.master", "")
    local = master.startswith("local[") or master == "local"
    memory = parse_size(spark.conf.get("spark.driver.memory" if local else "spark.executor.memory", "1g"), "m")
    by_heap = int(INDEX_MEMORY_FRACTION * memory)
    if local:
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        by_machine = int(0.5 * max(0, machine - memory) / (1 + default_parallelism(spark)))
        assert session_environment(spark).index_memory == max(by_heap, by_machine)
    elif not master.startswith("local"):
        assert session_environment(spark).index_memory == by_heap


# --- exact on a real graph ------------------------------------------------------------


def test_published_triangle_count_through_the_forced_partitioned_join(spark):
    """email-Eu-core: SNAP's undirected triangle count with the join step forced to partitioned."""
    from dataclasses import replace

    from faq.graphs.edges import degree_oriented, edge_factor
    from faq.graphs.triangles import TRIANGLE_QUERY
    from faq.insideout import evaluate

    graph = degree_oriented(edge_factor(str(DATA / "email-Eu-core.txt.gz")))
    graph = replace(graph, name="edge")
    with evaluate(TRIANGLE_QUERY, {"edge": graph}, join="generic_partitioned") as result:
        strategy = result.plan.steps[0].strategy
        assert strategy.name == "partitioned" and strategy.cells >= 2
        assert result.notes[0].startswith("partitioned grid")
        assert result.scalar() == EMAIL_EU_CORE_TRIANGLES


# --- local-cluster: chosen without forcing, exact -------------------------------------


def test_local_cluster_chooses_partitioned_when_the_index_cannot_fit():
    """Two executor JVMs (local-cluster[2,1,1024]) and ``spark.faq.indexMemory=300k``: the
    oriented email-Eu-core index (16,064 rows, about 502 KiB estimated for the compiled loop the
    count runs) does not fit, so the plan
    picks the partitioned strategy by itself, with a grid whose cell fits the budget, and the
    count is SNAP's; with 256m it broadcasts (a mapped index file both executors fetch), and
    the count is SNAP's again; with a 100 KiB driver budget the index is built on the executors
    and the count is SNAP's once more.  Runs in a child process (one SparkContext per process; the suite's
    session stays as it is)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "partitioned_cluster_job.py"),
                          str(DATA / "email-Eu-core.txt.gz"), "300k"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["master"] == "local-cluster[2,1,1024]" and found["executors"] == 2
    strategy = found["strategy"]
    assert found["index_memory"] == 300 * 1024
    assert strategy["name"] == "partitioned" and "exceeds the index memory" in strategy["reason"]
    assert strategy["index_bytes"] > found["index_memory"] >= strategy["task_bytes"]
    assert strategy["cells"] > 1 and "grid a=" in found["explain"]
    assert found["count"] == EMAIL_EU_CORE_TRIANGLES
    # With room for the index: broadcast, the index file fetched by both executors and mapped.
    assert found["broadcast_strategy"]["name"] == "broadcast" and found["broadcast_strategy"]["index_dir"] is None
    assert found["broadcast_count"] == EMAIL_EU_CORE_TRIANGLES
    # A driver budget below the index: built on the executors (each executor JVM's workers build
    # their own copy from the Parquet inputs), exact again.
    built = found["built_strategy"]
    assert built["name"] == "broadcast" and built["index_dir"], built
    assert "exceeds the driver index memory" in built["reason"]
    assert found["built_count"] == EMAIL_EU_CORE_TRIANGLES
