"""Test-wide fixtures: one SparkSession for the whole run (doctests included).

The session is small on purpose: ``local[2]``, 4 shuffle partitions, no UI.
"""

import os

import pytest

from faq.spark import get_session

TEST_CONFIG = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.memory": "3g",
}


@pytest.fixture(scope="session", autouse=True)
def spark():
    """The one SparkSession of the test run; stopped at the end.

    ``FAQ_TEST_REMOTE=sc://host:port`` runs the tests as a Spark Connect client
    of that server instead (tests/test_connect.py does so in a child process:
    a process runs either classic or Connect PySpark).
    """
    remote = os.environ.get("FAQ_TEST_REMOTE")
    if remote:
        session = get_session(remote=remote, config={"spark.sql.shuffle.partitions": "4"})
    else:
        session = get_session(master=os.environ.get("FAQ_TEST_MASTER", "local[2]"), config=TEST_CONFIG)
    yield session
    session.stop()
