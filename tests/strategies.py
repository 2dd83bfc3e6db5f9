"""Hypothesis strategies shared by the test modules: random small FAQs over a small domain.

A drawn case is ``(atoms, data, free)`` as :func:`tests.brute_force.brute_force`
takes it: atoms ``[(factor name, [variables])]``, ``data[name]`` rows
``(*key, value)`` with keys from :data:`DOMAIN` and values from
:data:`VALUES` (per semiring, zero included), and the free variables.
:func:`factors_of` turns a case into the library's factors (that needs Spark).

Used by tests/test_insideout.py, tests/test_generic_join.py,
tests/test_incremental.py and tests/test_join_kernels.py.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

INF = math.inf
DOMAIN = (0, 1, 2)

# Values each semiring's factors may hold (zero included: zero rows must not matter).  A test may add
# a user-defined semiring's pool for its duration (monkeypatch.setitem).
VALUES: dict[str, list] = {
    "counting": [0, 1, 2, 3],
    "integer": [-2, -1, 0, 1, 2],
    "real": [0.0, 0.5, 1.0, 2.0, -1.5],
    "boolean": [False, True],
    "min_plus": [INF, 0.0, 1.0, 2.5, -1.0],
    "max_plus": [-INF, 0.0, 1.0, 2.5, -1.0],
    "max_product": [0.0, 0.5, 1.0, 2.0],
    "max_min": [-INF, INF, 0.0, 2.0, -1.0],
    "min_max": [INF, -INF, 0.0, 2.0, -1.0],
}


@st.composite
def random_faq(draw, semiring: str):
    """A random query: ≤5 variables, ≤4 atoms of arity ≤3, random data and free variables."""
    n_vars = draw(st.integers(1, 5))
    variables = [f"v{i}" for i in range(n_vars)]
    n_atoms = draw(st.integers(1, 4))
    atoms = []
    factor_arity: dict[str, int] = {}
    for k in range(n_atoms):
        # Sometimes reuse a factor (a relation used twice, like edge in a triangle).
        reuse = [f for f in factor_arity] if factor_arity else []
        if reuse and draw(st.booleans()) and draw(st.booleans()):
            name = draw(st.sampled_from(reuse))
        else:
            name = f"f{k}"
            factor_arity[name] = draw(st.integers(1, 3))
        atoms.append((name, [draw(st.sampled_from(variables)) for _ in range(factor_arity[name])]))
    used = list(dict.fromkeys(v for _, vs in atoms for v in vs))
    free = draw(st.lists(st.sampled_from(used), unique=True, max_size=len(used)))
    data = {}
    for name, arity in factor_arity.items():
        keys = draw(st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), max_size=8))
        data[name] = [(*key, draw(st.sampled_from(VALUES[semiring]))) for key in keys]
    return atoms, data, free


def nontrivial_faq(semiring: str):
    """random_faq with at least two atoms and no empty factor (the first derandomized
    examples of random_faq are a single empty atom, which joins nothing)."""
    return random_faq(semiring).filter(lambda case: len(case[0]) >= 2 and all(case[1].values()))


@st.composite
def cyclic_faq(draw, semiring: str):
    """A triangle or 4-cycle (some atoms sharing one factor) with random data and free variables."""
    shape = draw(st.sampled_from(["triangle", "cycle4", "triangle+ternary"]))
    if shape == "triangle":
        atoms = [("e", ["x", "y"]), ("e", ["y", "z"]), ("g", ["x", "z"])]
    elif shape == "cycle4":
        atoms = [("e", ["w", "x"]), ("e", ["x", "y"]), ("g", ["y", "z"]), ("g", ["z", "w"])]
    else:
        atoms = [("t", ["x", "y", "z"]), ("e", ["x", "y"]), ("g", ["y", "z"]), ("g", ["x", "z"])]
    arity = {name: len(vs) for name, vs in atoms}
    data = {}
    for name, k in arity.items():
        keys = draw(st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * k), min_size=3, max_size=9))
        data[name] = [(*key, draw(st.sampled_from(VALUES[semiring]))) for key in keys]
    used = list(dict.fromkeys(v for _, vs in atoms for v in vs))
    free = draw(st.lists(st.sampled_from(used), unique=True, max_size=2))
    return atoms, data, free


def factors_of(atoms, data, semiring: Any) -> dict:
    """The factors of a drawn case, named as in its atoms, key columns ``c0, c1, ...`` (needs Spark).

    ``semiring`` is a name or a :class:`~faq.semirings.Semiring`.
    """
    from faq.factor import factor_of  # here: importing this module stays Spark-free

    arity = {name: len(vs) for name, vs in atoms}
    return {name: factor_of(rows, [f"c{i}" for i in range(arity[name])], semiring, name=name)
            for name, rows in data.items()}
