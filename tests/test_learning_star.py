"""The in-process foreign-key star (faq.learning.star): the same answer as least squares on the listed join.

The star path runs whenever the driver holds the tables and one table holds every join variable with the
others looked up by unique keys; otherwise (a key held twice, a shape that is not a star) the factorized
plan runs.  Checked against numpy on the join listed by pandas merges (an independent oracle), on random
stars with missing partners, nulls and multi-column keys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import faq
from faq.language import parse_query
from faq.learning.features import parse_features
from faq.learning.star import star_aggregate, star_plan


def _oracle(items, orders, parts, names):
    rows = items.merge(orders, on="o").merge(parts, on=["p", "v"]).dropna()
    x = rows[[n.split(".")[1] for n in names]].to_numpy(dtype=float)
    return len(rows), x.sum(axis=0), x.T @ x


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 60), st.booleans(), st.booleans())
def test_random_stars_equal_the_listed_join(seed, n, sparse_keys, nulls):
    rng = np.random.default_rng(seed)
    spread = 10**9 if sparse_keys else 1  # sparse keys: binary search; dense: the direct table
    o_keys = rng.choice(40, size=rng.integers(1, 20), replace=False) * spread
    parts = pd.DataFrame([(p, v) for p in range(5) for v in range(3) if rng.random() < 0.7] or [(0, 0)],
                         columns=["p", "v"])
    parts["s"] = rng.normal(size=len(parts))
    orders = pd.DataFrame({"o": o_keys, "w": rng.normal(size=len(o_keys))})
    items = pd.DataFrame({"o": rng.choice(45, size=n) * spread, "p": rng.integers(0, 6, n),
                          "v": rng.integers(0, 3, n), "q": rng.normal(size=n)})
    if nulls:
        items.loc[rng.random(n) < 0.2, "q"] = np.nan
    q = parse_query("count() := items(o, p, v), orders(o), parts(p, v)")
    names = ["items.q", "orders.w", "parts.s"]
    f = parse_features(names, {a.factor: a.variables for a in q.atoms})
    got = star_aggregate(q, f, {"items": items, "orders": orders, "parts": parts})
    assert got is not None
    count, sums, products = _oracle(items, orders, parts, names)
    assert got[0] == count
    np.testing.assert_allclose(got[1], sums, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got[2], products, rtol=1e-9, atol=1e-9)
    assert bool(got[4]) == bool(nulls and items["q"].isna().any())  # a note says rows were dropped


def test_a_key_held_twice_is_not_a_star_and_the_factorized_plan_answers():
    items = pd.DataFrame({"o": [1, 1, 2], "q": [1.0, 2.0, 3.0]})
    orders = pd.DataFrame({"o": [1, 1, 2], "w": [5.0, 6.0, 7.0]})  # order 1 twice: each item joins two rows
    q = parse_query("count() := items(o), orders(o)")
    f = parse_features(["items.q", "orders.w"], {"items": ("o",), "orders": ("o",)})
    assert star_aggregate(q, f, {"items": items, "orders": orders}) is None
    c = faq.covariance("items(o), orders(o)", ["items.q", "orders.w"], items=items, orders=orders,
                       placement="driver")
    rows = items.merge(orders, on="o")
    assert c.count == len(rows) == 5
    np.testing.assert_allclose(c.sums, rows[["q", "w"]].sum().to_numpy())


def test_shapes_that_are_not_stars():
    assert star_plan(parse_query("count() := a(x), b(y)")) is None             # a product: not connected
    assert star_plan(parse_query("count() := a(x, y), a(y, z)")) is None       # a table used twice
    assert star_plan(parse_query("count() := a(x, x), b(x)")) is None          # a repeated variable
    plan = star_plan(parse_query("count() := d(x), f(x, y), e(y)"), {"f": 100, "d": 5, "e": 5})
    assert plan.fact == "f(x, y)" and plan.positions == (1, 0, 2)


def test_a_snowflake_is_looked_up_through_its_chain():
    rng = np.random.default_rng(5)
    customer = pd.DataFrame({"c": np.arange(0, 40, 2), "a": rng.normal(size=20)})   # odd customers missing
    orders = pd.DataFrame({"o": np.arange(30) * 1_000_003, "c": rng.integers(0, 40, 30), "w": rng.normal(size=30)})
    items = pd.DataFrame({"o": rng.integers(0, 32, 500) * 1_000_003, "p": rng.integers(0, 9, 500),
                          "q": rng.normal(size=500)})
    parts = pd.DataFrame({"p": np.arange(8), "s": rng.normal(size=8)})
    q = parse_query("count() := items(o, p), orders(o, c), customer(c), parts(p)")
    names = ["items.q", "orders.w", "customer.a", "parts.s"]
    f = parse_features(names, {a.factor: a.variables for a in q.atoms})
    given = {"items": items, "orders": orders, "customer": customer, "parts": parts}
    count, sums, products, plan, _ = star_aggregate(q, f, given)
    assert plan.keys == (("o",), ("c",), ("p",))
    rows = items.merge(orders, on="o").merge(customer, on="c").merge(parts, on="p")
    x = rows[["q", "w", "a", "s"]].to_numpy()
    assert count == len(rows) > 0
    np.testing.assert_allclose(sums, x.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(products, x.T @ x, rtol=1e-10)


def test_the_regression_reports_the_star_plan():
    rng = np.random.default_rng(3)
    orders = pd.DataFrame({"o": np.arange(50), "w": rng.normal(size=50)})
    items = pd.DataFrame({"o": rng.integers(0, 60, 400), "q": rng.normal(size=400)})  # some orders missing
    items["y"] = 2.0 + 3.0 * items["q"] + rng.normal(scale=0.01, size=400)
    m = faq.linear_regression("items(o), orders(o)", "items.y", ["items.q", "orders.w"],
                              items=items, orders=orders, placement="driver")
    rows = items.merge(orders, on="o")
    x = np.column_stack([np.ones(len(rows)), rows["q"], rows["w"]])
    expected = np.linalg.lstsq(x, rows["y"].to_numpy(), rcond=None)[0]
    np.testing.assert_allclose([m.intercept, m.coefficients["items.q"], m.coefficients["orders.w"]], expected,
                               rtol=1e-8, atol=1e-10)
    assert m.rows == len(rows)
    assert "foreign-key star" in str(m.explain())


def test_progress_reports_the_star_as_one_step():
    events = []
    orders = pd.DataFrame({"o": [1, 2], "w": [1.0, 2.0]})
    items = pd.DataFrame({"o": [1, 1, 2, 3], "q": [1.0, 2.0, 3.0, 4.0]})
    c = faq.covariance("items(o), orders(o)", ["items.q", "orders.w"], items=items, orders=orders,
                       placement="driver", progress=events.append)
    assert c.count == 3
    assert [(e.kind, e.step, e.total) for e in events] == [("start", 1, 1), ("done", 1, 1)]
    assert events[1].rows == 3 and "foreign-key star" in events[1].note

