"""Fixtures shared by test modules: small input files the ``faq`` commands read.

(The Spark session and its guard are in the repository's conftest.py; helpers
in tests/helpers.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def edge_csv(tmp_path) -> Path:
    """A CSV edge table with header a,b. Rows 4; column a holds 1 (twice), 2, 3; column b holds 2, 3 (twice), 4."""
    path = tmp_path / "e.csv"
    path.write_text("a,b\n1,2\n2,3\n1,3\n3,4\n")
    return path
