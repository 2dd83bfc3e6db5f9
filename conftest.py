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
    """The one SparkSession of the test run; stopped at the end."""
    session = get_session(master=os.environ.get("FAQ_TEST_MASTER", "local[2]"), config=TEST_CONFIG)
    yield session
    session.stop()
