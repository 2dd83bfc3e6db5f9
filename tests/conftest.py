"""Fixtures shared by test modules: small input files the ``faq`` commands read; hypothesis profiles.

(The Spark session and its guard are in the repository's conftest.py; helpers
in tests/helpers.py.)

Hypothesis profiles
-------------------
The random (hypothesis) tests size their runs with :func:`examples`: a test
says ``@settings(max_examples=examples(SPARK))`` with the count it runs in the
suite, and the loaded profile scales it.

``default``
    What the suite runs (``make test``): every count as written -- property
    tests check their oracle on 10 or more examples run in-process (placement
    ``"driver"``: no Spark job, milliseconds an example) and on a few (1-6)
    that go through Spark jobs.
``thorough``
    Ten times as many examples everywhere, the Spark path included (and 1000
    for a test that sets no count), for benchmark runs and maintainers:
    ``make thorough``, or ``pytest --hypothesis-profile thorough`` (hypothesis'
    pytest option), or ``FAQ_HYPOTHESIS_PROFILE=thorough`` in the environment.

The scale is the loaded profile's ``max_examples`` over the default's (100),
so a profile registered elsewhere scales the same way.  A test whose examples
are slow (Spark jobs, brute-force oracles) takes :func:`search_settings`: the
same scaled count, and no shrinking.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

#: Hypothesis' own max_examples: a profile's scale is its max_examples over this.
DEFAULT_EXAMPLES = 100
#: Examples per test under the ``thorough`` profile, relative to the suite's.
THOROUGH_SCALE = 10
PROFILE_ENV = "FAQ_HYPOTHESIS_PROFILE"

settings.register_profile("default", max_examples=DEFAULT_EXAMPLES)
settings.register_profile("thorough", max_examples=THOROUGH_SCALE * DEFAULT_EXAMPLES)
# The environment's choice; hypothesis' --hypothesis-profile (loaded after this import) overrides it.
if os.environ.get(PROFILE_ENV):
    settings.load_profile(os.environ[PROFILE_ENV])


def examples(n: int) -> int:
    """``n`` examples scaled by the loaded hypothesis profile (``default``: ``n``; ``thorough``: ``10 n``).

    Read when a test module is imported -- after the profile is loaded -- as ``@settings(max_examples=...)``.
    """
    return max(1, n * settings().max_examples // DEFAULT_EXAMPLES)


def search_settings(n: int, *health_checks: HealthCheck) -> settings:
    """Settings of a test whose examples are slow: a search of ``examples(n)`` examples that does not shrink.

    The examples are the same every run (``derandomize``, which also means no
    example database), there is no deadline, and a failure is reported as
    found: shrinking it would rerun the slow examples for minutes.

    Parameters
    ----------
    n : int
        Examples in the suite, scaled by the loaded profile (:func:`examples`).
    *health_checks : HealthCheck
        Suppressed besides ``too_slow`` (e.g. ``function_scoped_fixture``, ``filter_too_much``).

    Returns
    -------
    hypothesis.settings
        To decorate the test with, or to derive other settings from.
    """
    return settings(
        max_examples=examples(n),
        deadline=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, *health_checks],
    )


@pytest.fixture
def edge_csv(tmp_path) -> Path:
    """A CSV edge table with header a,b. Rows 4; column a holds 1 (twice), 2, 3; column b holds 2, 3 (twice), 4."""
    path = tmp_path / "e.csv"
    path.write_text("a,b\n1,2\n2,3\n1,3\n3,4\n")
    return path
