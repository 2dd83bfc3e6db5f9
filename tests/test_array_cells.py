"""An array ring's steps on the executors: partitioned cells running the in-process merges.

Every step of a query in an array ring placed on the executors is shuffled
into the cells of a HyperCube grid, and each cell joins and ⊕-aggregates its
rows with :func:`faq.joins.local.join_local`, the kernel a step on the driver
runs (:func:`faq.insideout.placement.array_cells`); partial aggregates are
combined by the ring's numpy ⊕ per partition
(:func:`faq.joins.combine.combined_in_arrow`).  Checked on random FAQs in the
moments ring (``(count, sum, sum of squares)``) against a brute-force
evaluator with the ring's operations written out here in plain Python, on
both placements, and against the Spark binary joins the executors ran
before (``join="binary"``).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.factor import factor_of
from faq.insideout import evaluate
from faq.language import make_query
from faq.semirings import MOMENTS
from tests.conftest import examples
from tests.strategies import DOMAIN, cyclic_faq, nontrivial_faq

pytestmark = pytest.mark.usefixtures("spark")

ZERO, ONE = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)
# Moments of small integers: exact in doubles, zero included (its rows must not matter).
POOL = [ZERO, ONE, (1.0, 2.0, 4.0), (2.0, 1.0, 3.0), (1.0, -1.0, 1.0), (3.0, 0.0, 2.0)]


def plus(a, b):
    return tuple(x + y for x, y in zip(a, b))


def times(a, b):
    """(count, sum, squares) of the pairs: counts multiply, sums and squares spread over the other side."""
    (c1, s1, q1), (c2, s2, q2) = a, b
    return (c1 * c2, c1 * s2 + c2 * s1, c1 * q2 + c2 * q1 + 2 * s1 * s2)


def brute_force(atoms, data, free):
    """{free assignment: value} by enumerating every assignment over :data:`DOMAIN`, zeros left out."""
    tables = {}
    for name, rows in data.items():
        table = {}
        for *key, value in rows:
            table[tuple(key)] = plus(table.get(tuple(key), ZERO), value)
        tables[name] = table
    variables = list(dict.fromkeys(v for _, vs in atoms for v in vs))
    bound = [v for v in variables if v not in free]
    out = {}
    for fixed in itertools.product(DOMAIN, repeat=len(free)):
        total = ZERO
        for rest in itertools.product(DOMAIN, repeat=len(bound)):
            assignment = {**dict(zip(free, fixed)), **dict(zip(bound, rest))}
            value = ONE
            for name, vs in atoms:
                value = times(value, tables[name].get(tuple(assignment[v] for v in vs), ZERO))
            total = plus(total, value)
        if total != ZERO:
            out[fixed] = total
    return out


@st.composite
def moments_case(draw):
    """A random FAQ's atoms and free variables (tests/strategies.py), its data re-valued in the moments ring."""
    atoms, data, free = draw(st.one_of(nontrivial_faq("counting"), cyclic_faq("counting")))
    valued = {name: [(*row[:-1], draw(st.sampled_from(POOL))) for row in rows] for name, rows in data.items()}
    return atoms, valued, free


def answer(atoms, data, free, **options):
    arity = {name: len(vs) for name, vs in atoms}
    factors = {name: factor_of([(*r[:-1], list(r[-1])) for r in rows], [f"c{i}" for i in range(arity[name])],
                               MOMENTS, name=name) for name, rows in data.items()}
    with evaluate(make_query(atoms, free, semiring="moments"), factors, **options) as result:
        got = {tuple(row[:-1]): tuple(row[-1]) for row in result.df.collect()}
        return got, result.plan, list(result.notes)


def same(got, expected):
    assert set(got) == set(expected), (got, expected)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-9), (key, got[key], value)


def test_random_faqs_in_cells_equal_brute_force_and_the_driver():
    """At least 25 random FAQs (acyclic and cyclic) run on the executors, cell by cell, and in-process."""
    ran = []

    @settings(max_examples=examples(25), deadline=None, derandomize=True)
    @given(moments_case())
    def check(case):
        atoms, data, free = case
        expected = brute_force(atoms, data, free)
        cells, plan, notes = answer(atoms, data, free, placement="executors")
        same(cells, expected)
        for step, note in zip(plan.steps, notes):
            if step.bag:
                assert step.strategy.name == "partitioned" and step.strategy.binary_kernel, step.strategy
                assert "each cell runs the in-process binary join" in note, note
        same(answer(atoms, data, free, placement="driver")[0], expected)
        ran.append(any(step.bag for step in plan.steps))

    check()
    assert sum(ran) >= examples(25) * 0.8, ran  # (hypothesis may stop early on duplicates)


def test_partials_across_cells_are_combined_and_final_cells_are_not():
    """A step whose split variable is summed away leaves partial aggregates in several cells (combined by
    the ring's numpy ⊕ per partition); one that keeps it is final. Both against the Spark binary joins."""
    atoms = [("e", ["a", "b"]), ("e", ["b", "c"])]
    rows = [(i % 3, (i * 2) % 3, POOL[1 + i % 5]) for i in range(9)]
    data, free = {"e": rows}, ["a"]
    expected = brute_force(atoms, data, free)
    got, plan, notes = answer(atoms, data, free, placement="executors")
    same(got, expected)
    shares = [dict(s.strategy.shares) for s in plan.steps]
    assert any(s.get("b", 1) > 1 for s in shares), shares  # b is split, and summed away in one step
    spark_joins, plan, _ = answer(atoms, data, free, placement="executors", join="binary")
    same(spark_joins, expected)
    assert {s.strategy.name for s in plan.steps} == {"binary"}


def test_the_plan_says_what_each_cell_runs():
    atoms = [("e", ["a", "b"]), ("g", ["b"])]
    data = {"e": [(0, 1, POOL[2]), (1, 2, POOL[3])], "g": [(1, POOL[4]), (2, POOL[2])]}
    _, plan, notes = answer(atoms, data, [], placement="executors")
    text = str(plan)
    assert "strategy partitioned (values are double[3] arrays: each cell joins them in-process)" in text, text
    assert "in-process binary join (sort-merge)" in text, text
    assert all(s.placement == "executors" for s in plan.steps)
