"""Exact join rows of held relations (faq.insideout.held_joins) and the plans they tighten.

Oracles: a brute-force count of matching row pairs, and the product rows a plan reports against
the rows of the join made by hand.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq
from faq.factor import factor_of
from faq.insideout.held_joins import joined_rows, pair_rows, value_histogram
from faq.language import parse_query

values = st.lists(st.one_of(st.integers(-5, 5), st.integers(-2**62, 2**62)), max_size=40)


@settings(max_examples=100, deadline=None)
@given(values, values)
def test_joined_rows_equal_brute_force(left, right):
    expected = sum(1 for x, y in itertools.product(left, right) if x == y)
    got = joined_rows(value_histogram(np.array(left, dtype=np.int64)), value_histogram(np.array(right, dtype=np.int64)))
    assert got == expected


@settings(max_examples=100, deadline=None)
@given(values)
def test_histogram_counts_every_value(column):
    keys, counts = value_histogram(np.array(column, dtype=np.int64))
    assert dict(zip(keys.tolist(), counts.tolist())) == {v: column.count(v) for v in set(column)}
    assert keys.tolist() == sorted(set(column))


@pytest.mark.usefixtures("spark")
def test_pair_rows_of_a_cycle_query():
    rows = [(1, 2, 1), (2, 3, 1), (3, 1, 1), (1, 3, 1), (3, 4, 1), (4, 1, 1)]
    edge = factor_of(rows, ["s", "t"])
    query = parse_query("count() := edge(a, b), edge(b, c), edge(c, d), edge(d, a)")
    found = pair_rows(query, {"edge": edge}, ["edge"])
    # Atoms sharing one variable: neighbours around the cycle (edge(a, b) and edge(c, d) share none).
    assert set(found) == {(0, 1), (1, 2), (2, 3), (0, 3)}
    two_paths = sum(1 for (_, t, _), (s, _, _) in itertools.product(rows, rows) if t == s)
    assert found[0, 1] == found[1, 2] == found[2, 3] == found[0, 3] == two_paths


@pytest.mark.usefixtures("spark")
def test_a_hub_no_longer_sends_a_two_path_step_to_the_executors():
    """One hub with 300 in- and 300 out-edges and 3,000 light edges: the degree bound of the 2-paths
    is rows × 300, the exact count 300 × 300 + the light paths; the plan's product rows are exact."""
    hub = 0
    ins = [(i, hub, 1) for i in range(1, 301)]
    outs = [(hub, i, 1) for i in range(301, 601)]
    light = [(1000 + i, 1000 + (i + 1) % 3000, 1) for i in range(3000)]
    rows = ins + outs + light
    edge = factor_of(rows, ["src", "dst"])
    plan = faq.plan("count(a, c) := edge(a, b), edge(b, c)", edge=edge)
    two_paths = sum(1 for (_, t, _), (s, _, _) in itertools.product(ins + outs, ins + outs) if t == s) + 3000
    assert plan.steps[0].product_rows == two_paths
    assert two_paths < len(rows) * 300  # what the degrees alone bound it by
    with faq.query("count(a, c) := edge(a, b), edge(b, c)", edge=edge) as answer:
        assert answer.df.count() == two_paths  # every 2-path has distinct ends here


def test_a_sparse_product_step_is_placed_by_its_output_not_its_product():
    """A matrix product in (+, ×) holds its inputs and its output (scipy sums each row as it goes): a
    million-row A(i, j)·B(j, k) over 10 values of i and k joins 1e11 products onto at most 100 keys,
    so it runs on the driver; its product bound alone would send it to the executors."""
    from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
    from faq.insideout.physical import Environment
    from faq.insideout.planner import plan_query

    skewed = RelationStatistics(10**6, (ColumnStatistics(10, 10**5), ColumnStatistics(10, 10**5)))
    env = Environment(placement="auto", local_memory=1 << 30)
    plan = plan_query(parse_query("q(i,k) := A(i,j), B(j,k)"), semiring="counting", environment=env,
                      held=["A", "B"], statistics={"A": skewed, "B": skewed})
    (step,) = plan.steps
    assert step.product_rows >= 1e11 and step.placement == "driver"
    assert step.strategy.binary_kernel == "sparse-product"
    merged = plan_query(parse_query("q(i,k) := A(i,j), B(j,k)"), semiring="min_plus", environment=env,
                        held=["A", "B"], statistics={"A": skewed, "B": skewed})
    assert merged.steps[0].placement == "executors"  # merges list the product before ⊕: too large
