"""Test-wide fixtures: one SparkSession for the tests that ask for it, and a guard for those that don't.

Spark is opt-in.  A test that needs it requests the session-scoped ``spark``
fixture -- as an argument, or for a whole module with
``pytestmark = pytest.mark.usefixtures("spark")`` -- and everything else
(planner, hypergraph, language, semiring algebra) runs without a JVM.  The
session is small on purpose: ``local[2]``, 4 shuffle partitions, no UI
(``FAQ_TEST_MASTER`` picks another master, ``FAQ_TEST_REMOTE=sc://host:port``
makes it a Spark Connect client, as tests/test_connect.py does in a child).

Doctests in ``faq/`` get the same session when their module (or the doctest
itself) is listed in :data:`SPARK_DOCTESTS`; the others run without Spark.

A test that forgets to request Spark fails loudly: while it runs, conftest
replaces :func:`faq.spark.get_session` -- the one place faq starts or finds a
session -- by a guard raising :class:`SparkNotRequested`, instead of letting it
start a second session with faq's default settings.  The guard exists only in
the test process; faq itself is unchanged.  (A test that reaches an already
running session without ``get_session`` -- a pyspark Column function, the
CLI's own look-up of the active session -- is not caught here; it fails when
run alone, with pyspark's "no active SparkContext" error or this guard.)
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Iterator

import pytest
from _pytest.doctest import DoctestItem

import faq.spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Options for every JVM of the test run -- the test session's, a Connect server's, a local cluster's
#: executors', a notebook's -- through the ``java`` launcher's ``$JDK_JAVA_OPTIONS`` (set here unless the
#: environment sets it).  The suite runs thousands of tiny jobs on two cores, where C2's compilations
#: and the parallel collector's threads cost more CPU than they save: with C1 only and the serial
#: collector the test session's JVM used about half the CPU seconds on the same tests.  Semantics
#: are Java's either way; the benchmarks run with the JVM's defaults.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("JDK_JAVA_OPTIONS", JVM_OPTIONS)
# Plans are priced with the cost models' constants as fitted, not this machine's calibration
# (faq.calibration, stored by python -m faq.warm): the choices the tests check must not depend on the
# machine.  tests/test_calibration.py reads and writes calibrations at paths of its own.
os.environ["FAQ_CALIBRATION"] = ""

TEST_CONFIG = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.memory": "3g",
}

# Doctests that need Spark, by module (exact name) or by doctest (its full name); every other
# doctest runs without it, as a pure module's should.  A Spark doctest missing here fails with
# SparkNotRequested naming this list (or, for a bare Column, pyspark's "no active SparkContext").
# tests/test_spark_opt_in.py runs pure tests and the doctests of pure modules (hypergraph, language,
# planner, semirings, ...) in a fresh process and checks that no JVM started.
SPARK_DOCTESTS = frozenset({
    "faq",  # the front door's example builds a DataFrame
    "faq.api",
    "faq.factor",
    "faq.graphs.edges",
    "faq.inputs",
    "faq.handback",  # hands tables to a session
    "faq.events.ProgressEvent",  # its example counts triangles (a session for the factor)
    "faq.graphs.matrix_chain",
    "faq.graphs.motifs",
    "faq.graphs.triangles",
    "faq.incremental.calculus",
    "faq.incremental.executors",
    "faq.learning", "faq.learning.maintained",  # its example runs a regression (the factors are made for a session)
    "faq.incremental.maintained",
    "faq.incremental.streaming",  # its example runs a file stream
    "faq.graphs.track",
    "faq.insideout.binding",
    "faq.insideout.executor",
    "faq.insideout.fetching",
    "faq.relation",  # its example fetches a Spark DataFrame
    "faq.learning.spark_sql",  # its examples join two Spark DataFrames
    "faq.asof.spark_window", "faq.asof.oneshot",  # their examples join Spark DataFrames
    "faq.recursive.executor_edges", "faq.recursive.resident_rounds",
    "faq.recursive.held_solve",
    "faq.asof.on_spark",
    "faq.io",
    "faq.io.convert",
    "faq.data_source",  # its examples maintain a triangle count and read it with spark.read
    "faq.io.edges",
    "faq.io.local_edges",
    "faq.io.matrix_market",
    "faq.io.tables",
    "faq.io.writers",
    "faq.joins.binary",
    "faq.joins.executor_index",
    "faq.joins.generic",
    "faq.joins.partitioned",
    "faq.recursive.placed",
    "faq.recursive.seminaive",
    "faq.recursive.spark_maintained",
    "faq.scope",
    "faq.semirings.spark_backend",
    "faq.spark.checkpoint_observed",
    "faq.spark.get_session", "faq.spark.use_session",
    "faq.semirings.tuples.TupleSemiring",  # its example runs a query  # the rest of faq.spark's doctests only ask for the Java version
    "faq.workers.ensure_workers",  # the rest of faq.workers' doctests compare made-up reports
    "faq.graphs.truss_spark",  # its example decomposes a Spark DataFrame on the executors
})


class SparkNotRequested(RuntimeError):
    """Raised by faq.spark.get_session during a test that did not request the ``spark`` fixture."""


_get_session = faq.spark.get_session  # the real one, for the fixture
_spark_allowed = False  # True while a test that requested Spark runs (set per test below)


@functools.wraps(_get_session)  # its signature and docstring: what the public-API test reads
def _guarded_get_session(*args: Any, **kwargs: Any):
    if not _spark_allowed:
        raise SparkNotRequested(
            "this test reached faq.spark.get_session() without requesting the `spark` fixture "
            "(conftest.py): add a `spark` argument, or `pytestmark = pytest.mark.usefixtures(\"spark\")` "
            "to the module -- or, for a doctest, add its module to conftest.SPARK_DOCTESTS"
        )
    return _get_session(*args, **kwargs)


# Installed at import, before any test module imports faq: faq's own modules import get_session
# inside functions, from the module attribute, so they all see the guard.
faq.spark.get_session = _guarded_get_session


def _doctest_needs_spark(item: pytest.Item) -> bool:
    if not isinstance(item, DoctestItem):
        return False
    module = item.dtest.globs.get("__name__")  # the doctest runs in a copy of its module's namespace
    return module in SPARK_DOCTESTS or item.name in SPARK_DOCTESTS


def _requests_spark(item: pytest.Item) -> bool:
    return "spark" in getattr(item, "fixturenames", ()) or _doctest_needs_spark(item)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "spark: the test uses the Spark session (set by conftest.py from the fixtures it requests)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what uses Spark, so that ``pytest -m "not spark"`` runs the rest without a JVM."""
    for item in items:
        if _requests_spark(item):
            item.add_marker(pytest.mark.spark)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Open the guard for the setup, call and teardown of a test that requested Spark."""
    global _spark_allowed
    _spark_allowed = _requests_spark(item)
    try:
        return (yield)
    finally:
        _spark_allowed = False


@pytest.fixture(scope="session")
def spark() -> Iterator["SparkSession"]:
    """The one SparkSession of the test run; stopped at the end.

    ``FAQ_TEST_REMOTE=sc://host:port`` runs the tests as a Spark Connect client
    of that server instead (tests/test_connect.py does so in a child process:
    a process runs either classic or Connect PySpark).
    """
    remote = os.environ.get("FAQ_TEST_REMOTE")
    if remote:
        session = _get_session(remote=remote, config={"spark.sql.shuffle.partitions": "4"})
    else:
        session = _get_session(master=os.environ.get("FAQ_TEST_MASTER", "local[2]"), config=TEST_CONFIG)
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_for_doctests(request: pytest.FixtureRequest) -> None:
    """Doctests cannot take fixture arguments: give those that need Spark the test session."""
    if _doctest_needs_spark(request.node):
        request.getfixturevalue("spark")
