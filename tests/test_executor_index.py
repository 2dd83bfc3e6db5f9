"""The broadcast index built on the executors (faq.joins.executor_index), and where the plan builds it.

Without Spark: the value decisions made from ``[min, max]`` equal those made
from the full arrays (what makes the driver's plan of an executor-built index
exact), the lock that lets one worker per executor build, and the plan's
choice.  With Spark: random FAQs in every semiring through InsideOut with every
broadcast index built on the executors, against brute force; SNAP's triangle
count with the choice made by the driver's budget; the inputs removed with the
join's scope.
"""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.errors import InvalidArgumentError
from faq.insideout.physical import Environment, choose_strategy, index_builder
from faq.joins.task_aggregation import kernel_values
from faq.joins.mapped import build_once
from faq.semirings import get_semiring
from faq.semirings.numpy_backend import numpy_ops
from tests.brute_force import PY_SEMIRINGS

EMAIL_EU_CORE_TRIANGLES = 105461  # SNAP's published count (tests/data/graphs-MANIFEST.tsv)
DATA = os.path.join(os.path.dirname(__file__), "data")


# --- no Spark ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(PY_SEMIRINGS)),
    st.lists(st.one_of(st.none(), st.lists(st.integers(-3, 3), max_size=5)), min_size=1, max_size=3),
    st.booleans(),
)
def test_value_decisions_from_ranges_equal_those_from_the_arrays(name, groups_values, aggregated):
    """kernel_values on [min, max] of each group's values decides exactly as on the values
    themselves: which groups are gathered, whether tasks ⊕-aggregate, the bound, the note."""
    from faq.joins.frame import Aggregation

    ring = get_semiring(name)
    dtype = {"bigint": np.int64, "double": np.float64, "boolean": np.bool_}[ring.value_type]
    values = [None if v is None else np.array(v, dtype=dtype) for v in groups_values]
    ranges = [None if v is None else (v[[int(np.argmin(v)), int(np.argmax(v))]] if len(v) else v) for v in values]
    groups = [[2 * k, 2 * k + 1] for k in range(len(values))]  # two uses per group: the product bound counts both
    aggregate = Aggregation((), ring) if aggregated else None
    ops = numpy_ops(ring) if aggregated else None
    assert kernel_values(ranges, groups, ring, aggregate, ops) == kernel_values(values, groups, ring, aggregate, ops)


def _build_in_process(directory: str, log: str, barrier) -> None:
    def build():
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        return {"built_by": os.getpid(), "keys": np.arange(1000)}

    barrier.wait()
    index = build_once(directory, "shared.bin", build)
    assert index["keys"].sum() == 499500


def test_one_worker_builds_the_others_map(tmp_path):
    """Four processes asking for the same index at once: one builds it (the lock), all map it."""
    log = str(tmp_path / "builds.txt")
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(4)
    workers = [context.Process(target=_build_in_process, args=(str(tmp_path), log, barrier)) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert len(open(log).read().split()) == 1
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


def test_the_plan_builds_on_the_executors_when_the_driver_budget_is_exceeded():
    """By bytes against the driver's budget, only where the executors can read a directory;
    forced either way by spark.faq.indexBuild; explain says where."""
    shared = Environment(index_memory=1 << 30, driver_index_memory=1 << 20, index_dir="/shared")
    big = choose_strategy("generic", 1e5, True, shared)
    assert big.name == "broadcast" and big.index_dir == "/shared"
    assert "built on the executors from Parquet under /shared" in big.describe()
    assert "exceeds the driver index memory 1 MiB" in big.reason
    small = choose_strategy("generic", 100, True, shared)
    assert small.index_dir is None and "built on the driver" in small.describe()
    nowhere = choose_strategy("generic", 1e5, True, Environment(index_memory=1 << 30, driver_index_memory=1 << 20))
    assert nowhere.index_dir is None and "set spark.faq.indexDir" in nowhere.reason
    forced = Environment(index_dir="/shared", index_build="executors")
    assert index_builder(10, forced) == ("/shared", "built on the executors: spark.faq.indexBuild=executors")
    assert index_builder(1e12, Environment(index_dir="/shared", index_build="driver"))[0] is None
    assert big.to_dict()["index_dir"] == "/shared" and shared.to_dict()["index_dir"] == "/shared"


# --- with Spark -------------------------------------------------------------------


@pytest.fixture
def build_on_executors(spark):
    spark.conf.set("spark.faq.indexBuild", "executors")
    yield spark
    spark.conf.unset("spark.faq.indexBuild")


@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
def test_random_faqs_with_indexes_built_on_the_executors(semiring, build_on_executors):
    """Random cyclic FAQs, every step a generic join broadcast with its index built on the
    executors (listing, or ⊕ inside the tasks): brute force's answer."""
    from tests.strategies import cyclic_faq
    from tests.test_generic_join import ONE, check_faq

    @ONE
    @given(cyclic_faq(semiring))
    def check(case):
        check_faq(case, semiring, ("generic_broadcast",))

    check()


def test_snap_count_with_the_index_built_on_the_executors(spark):
    """email-Eu-core's triangles with a 100 KiB driver budget: the plan builds the index on
    the executors by itself, explain says so, and the count is SNAP's; the Parquet inputs
    are gone once the result is closed."""
    from faq.graphs.triangles import triangle_count
    from faq.scratch import scratch_directory

    before = set(os.listdir(scratch_directory()))
    spark.conf.set("spark.faq.driverIndexMemory", "100k")
    try:
        result = triangle_count(os.path.join(DATA, "email-Eu-core.txt.gz"))
    finally:
        spark.conf.unset("spark.faq.driverIndexMemory")
    step = next(s for s in result.plan.steps if s.strategy.name != "binary")
    assert step.strategy.name == "broadcast" and step.strategy.index_dir == scratch_directory()
    assert "exceeds the driver index memory 100 KiB" in step.strategy.reason
    assert "built on the executors" in step.strategy.describe()
    assert result.count == EMAIL_EU_CORE_TRIANGLES
    assert not [p for p in set(os.listdir(scratch_directory())) - before if p.startswith("faq-index-inputs-")]


def test_the_session_settings_of_where_an_index_is_built(spark):
    """An unknown spark.faq.indexBuild is refused by name; a relative spark.faq.indexDir is the
    driver's (the workers would read it against their own directories); a URI is kept."""
    from faq.insideout.binding import session_environment

    spark.conf.set("spark.faq.indexBuild", "gpu")
    try:
        with pytest.raises(InvalidArgumentError, match="spark.faq.indexBuild='gpu': expected one of auto, driver"):
            session_environment(spark)
    finally:
        spark.conf.unset("spark.faq.indexBuild")
    for given, expected in (("inputs/here", os.path.abspath("inputs/here")), ("s3://bucket/x", "s3://bucket/x"),
                            ("file:/tmp/x", "file:/tmp/x")):
        spark.conf.set("spark.faq.indexDir", given)
        try:
            assert session_environment(spark).index_dir == expected
        finally:
            spark.conf.unset("spark.faq.indexDir")


def test_empty_and_repeated_relations_built_on_the_executors(spark):
    """No rows: an empty result without a task.  Repeated rows (a multiset, the compiled loop's
    fallback to numpy decided on the executor): each repeat counted, as on the driver."""
    from faq.joins import VALUE_COLUMN, Aggregation, Frame
    from faq.joins.generic import generic_join
    from faq.scratch import scratch_directory
    from faq.scope import Scope
    from tests.test_generic_join import frame, rows_of

    ring = get_semiring("counting")
    empty = frame([], ("a", "b"))
    assert generic_join([empty, frame([(1, 2, 1)], ("b", "c"))], [], ring, index_dir=scratch_directory()).df.count() == 0
    edges = spark.createDataFrame([(1, 2, 1), (1, 2, 1), (2, 3, 1), (1, 3, 1)], f"x long, y long, {VALUE_COLUMN} long")
    relations = [Frame(edges.selectExpr(f"x AS {p}", f"y AS {q}", VALUE_COLUMN), (p, q))
                 for p, q in (("a", "b"), ("b", "c"), ("a", "c"))]
    for index_dir in (None, scratch_directory()):
        with Scope() as scope:
            out = generic_join(relations, [], ring, ("a", "b", "c"), aggregate=Aggregation((), ring),
                               index_dir=index_dir, scope=scope)
            assert rows_of(out, ()) == {(): [2]}, (index_dir, out.note)  # (1, 2) twice as edge(a, b)
            listed = generic_join(relations, [], ring, ("a", "b", "c"), index_dir=index_dir, scope=scope)
            assert rows_of(listed, ("a", "b", "c")) == {(1, 2, 3): [1, 1]}, (index_dir, listed.note)


def test_a_directory_that_cannot_be_written_is_refused_by_name(spark, tmp_path):
    """An index directory the driver cannot write (here a file): IndexDirectoryError naming it and
    the settings that fix it, before any Spark job; nothing is left behind, nor when a later
    group's write fails."""
    from faq.errors import IndexDirectoryError
    from faq.joins.generic import generic_join
    from tests.test_generic_join import frame

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    ring = get_semiring("counting")
    relations = [frame([(1, 2, 1)], ("a", "b")), frame([(2, 3, 1)], ("b", "c"))]
    with pytest.raises(IndexDirectoryError, match="spark.faq.indexDir") as info:
        generic_join(relations, [], ring, index_dir=str(blocker))
    assert info.value.parameters["path"] == str(blocker)
    assert os.listdir(tmp_path) == ["a-file"]
    # A write that fails after the first group's (a key that raises when computed): the inputs are removed.
    from faq.joins import VALUE_COLUMN, Frame

    failing = Frame(spark.range(3).selectExpr("id AS b", "CAST(raise_error('boom') AS BIGINT) AS c",
                                              f"1L AS {VALUE_COLUMN}"), ("b", "c"))
    with pytest.raises(Exception, match="boom"):
        generic_join([relations[0], failing], [], ring, index_dir=str(tmp_path))
    assert os.listdir(tmp_path) == ["a-file"]
