"""Learning over joins (faq.learning): every answer against numpy on the materialised join.

The tables are random, small and TPC-H shaped (lineitem, partsupp, part);
the oracle merges them with pandas and runs numpy's least squares, means
and covariance on the joined rows.  Both placements (in-process on the
driver, Spark on the executors) must give the same answers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import faq
from faq.errors import FAQValueError, InvalidArgumentError, UnknownFactorError
from faq.insideout.plans import IN_TASKS

pytestmark = pytest.mark.usefixtures("spark")  # the factors are made for a session (none starts in-process)

QUERY = "lineitem(orderkey, partkey, suppkey), partsupp(partkey, suppkey), part(partkey)"
FEATURES = ["lineitem.quantity", "lineitem.discount", "partsupp.supplycost", "part.size"]
TARGET = "lineitem.extendedprice"


def tables(seed: int, rows: int = 300) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    part = pd.DataFrame({"partkey": np.arange(12), "size": rng.integers(1, 50, 12).astype(float),
                         "brand": [f"b{i % 3}" for i in range(12)]})  # a column no one asks for: ignored
    partsupp = pd.DataFrame({"partkey": rng.integers(0, 14, 30), "suppkey": rng.integers(0, 4, 30),
                             "supplycost": rng.random(30) * 100})  # keys may repeat; some parts have none
    lineitem = pd.DataFrame({"orderkey": rng.integers(0, 80, rows), "partkey": rng.integers(0, 14, rows),
                             "suppkey": rng.integers(0, 4, rows), "quantity": rng.integers(1, 50, rows).astype(float),
                             "discount": rng.random(rows) * 0.1})
    lineitem["extendedprice"] = 3 + 2 * lineitem.quantity - 40 * lineitem.discount + rng.normal(0, 1, rows)
    return {"lineitem": lineitem, "partsupp": partsupp, "part": part}


def joined(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return t["lineitem"].merge(t["partsupp"], on=["partkey", "suppkey"]).merge(t["part"], on="partkey")


def least_squares(rows: pd.DataFrame, features: list[str], target: str, ridge: float = 0.0) -> np.ndarray:
    x = np.column_stack([np.ones(len(rows))] + [rows[f.split(".")[1]].to_numpy() for f in features])
    y = rows[target.split(".")[1]].to_numpy()
    penalty = ridge * np.diag([0.0] + [1.0] * len(features))
    return np.linalg.lstsq(x.T @ x + penalty, x.T @ y, rcond=None)[0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_regression_in_process_equals_least_squares_on_the_join(seed):
    t = tables(seed)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="driver", **t)
    rows = joined(t)
    expected = least_squares(rows, FEATURES, TARGET)
    assert model.rows == len(rows) > 0
    got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7)
    assert [s.placement for s in model.plan.steps] == ["driver"] * len(model.plan.steps)


def test_regression_on_the_executors_and_from_spark_dataframes(spark):
    t = tables(4)
    given = {name: spark.createDataFrame(df) for name, df in t.items()}
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="executors", **given)
    rows = joined(t)
    got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, least_squares(rows, FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    # The largest table stays in Spark and every task of it runs the plan (faq.learning.in_tasks).
    assert all(s.placement_reason.startswith(IN_TASKS) for s in model.plan.steps), model.plan


def test_spark_dataframes_that_fit_are_fetched_and_fitted_in_process(spark):
    """The default placement fetches each table (its keys and features) through Arrow and runs in-process;
    with nothing fetched (spark.faq.fetchMemory=0) the same model comes from Spark."""
    t = tables(5)
    given = {name: spark.createDataFrame(df) for name, df in t.items()}
    expected = least_squares(joined(t), FEATURES, TARGET)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **given)
    got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7)
    assert {s.placement for s in model.plan.steps} == {"driver"}
    spark.conf.set("spark.faq.fetchMemory", "0")
    try:
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **given)
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
    got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7)


def test_covariance_and_moments_equal_numpy_on_the_join():
    t = tables(5)
    rows = joined(t)
    aggregate = faq.covariance(QUERY, FEATURES, **t)
    x = np.column_stack([rows[f.split(".")[1]].to_numpy() for f in FEATURES])
    assert aggregate.count == len(rows)
    np.testing.assert_allclose(aggregate.sums, x.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(aggregate.products, x.T @ x, rtol=1e-10)
    np.testing.assert_allclose(aggregate.covariance(ddof=1), np.cov(x, rowvar=False), rtol=1e-8, atol=1e-8)
    assert list(aggregate.to_pandas().columns) == FEATURES
    m = faq.moments(QUERY, "part.size", **t)
    assert m.count == len(rows)
    assert m.mean == pytest.approx(rows["size"].mean())
    assert m.variance(ddof=1) == pytest.approx(rows["size"].var(ddof=1))


def test_a_static_model_reports_its_steps():
    """progress= of a model that is not maintained receives each step's start and end (it was refused)."""
    events = []
    t = tables(8)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, progress=events.append, **t)
    assert [e.kind for e in events] == ["start", "done"] * len(model.plan.steps)
    assert events[-1].rows == 1 and events[-1].seconds >= 0
    kinds = []
    faq.moments(QUERY, "part.size", progress=lambda e: kinds.append(e.kind), **t)
    assert kinds and kinds[-1] == "done"
    with pytest.raises(InvalidArgumentError, match="state"):
        faq.linear_regression(QUERY, target=TARGET, features=FEATURES, state="somewhere", **t)


def test_ridge_penalises_the_coefficients_not_the_intercept():
    t = tables(6)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, ridge=25.0, **t)
    expected = least_squares(joined(t), FEATURES, TARGET, ridge=25.0)
    np.testing.assert_allclose([model.intercept, *model.coefficients.values()], expected, rtol=1e-7, atol=1e-7)


def test_a_feature_that_is_a_join_key_and_a_table_joined_twice_count_once():
    rng = np.random.default_rng(7)
    edges = pd.DataFrame({"a": rng.integers(0, 9, 40), "b": rng.integers(0, 9, 40), "w": rng.random(40)})
    nodes = pd.DataFrame({"a": np.arange(9), "h": rng.random(9)})
    m = faq.covariance("e(a, b), e2(b, c), n(a)", ["n.a", "e.w", "n.h"], e=edges, e2=edges.rename(columns={"a": "b", "b": "c"}), n=nodes)
    rows = edges.merge(edges.rename(columns={"a": "b", "b": "c", "w": "w2"}), on="b").merge(nodes, on="a")
    x = rows[["a", "w", "h"]].to_numpy(dtype=float)
    assert m.count == len(rows)
    np.testing.assert_allclose(m.products, x.T @ x, rtol=1e-10)
    # the same table in two atoms: its features are lifted in the first only
    twice = faq.covariance("e(a, b), e(b, c)", ["e.w"], e=edges)
    rows2 = edges.merge(edges.rename(columns={"a": "b", "b": "c", "w": "w2"}), on="b")
    assert twice.count == len(rows2)
    assert twice.sums[0] == pytest.approx(rows2["w"].sum())


def test_a_cyclic_join_runs_binary_joins_and_stays_exact():
    rng = np.random.default_rng(8)
    r = pd.DataFrame({"a": rng.integers(0, 6, 30), "b": rng.integers(0, 6, 30), "x": rng.random(30)})
    s = pd.DataFrame({"b": rng.integers(0, 6, 30), "c": rng.integers(0, 6, 30)})
    u = pd.DataFrame({"a": rng.integers(0, 6, 30), "c": rng.integers(0, 6, 30), "y": rng.random(30)})
    m = faq.covariance("r(a, b), s(b, c), u(a, c)", ["r.x", "u.y"], r=r, s=s, u=u)
    rows = r.merge(s, on="b").merge(u, on=["a", "c"])
    x = rows[["x", "y"]].to_numpy()
    assert m.count == len(rows)
    np.testing.assert_allclose(m.products, x.T @ x, rtol=1e-10)
    assert all(step.join_method == "binary" for step in m.plan.steps)


def test_nulls_are_dropped_and_said():
    t = tables(9)
    t["lineitem"].loc[:4, "discount"] = np.nan
    m = faq.covariance(QUERY, ["lineitem.discount"], **t)
    rows = joined(t).dropna(subset=["discount"])
    assert m.count == len(rows)
    assert any("5 rows with a null key or feature dropped" in n for n in m.notes)


def test_bad_input_says_what_is_wrong():
    t = tables(10)
    with pytest.raises(InvalidArgumentError, match="table.column"):
        faq.covariance(QUERY, ["quantity"], **t)
    with pytest.raises(UnknownFactorError):
        faq.covariance(QUERY, ["orders.quantity"], **t)
    with pytest.raises(InvalidArgumentError, match="no column 'qty'"):
        faq.covariance(QUERY, ["lineitem.qty"], **t)
    with pytest.raises(InvalidArgumentError, match="variable 'suppkey'"):
        faq.covariance(QUERY, ["lineitem.quantity"], **{**t, "partsupp": t["partsupp"].drop(columns="suppkey")})
    empty = {**t, "part": t["part"].iloc[:0]}
    with pytest.raises(FAQValueError, match="empty"):
        faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **empty)
    assert faq.covariance(QUERY, FEATURES, **empty).count == 0


def test_explain_shows_where_each_feature_is_lifted_and_the_width():
    t = tables(6)
    text = str(faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="driver", **t).explain())
    assert text.startswith("lifted into the ring, per table:")
    assert "partsupp(partkey, suppkey): lifts partsupp.supplycost; 30 rows -> " in text
    assert "keys of 21 doubles" in text and "semiring cofactor(5)" in text
    assert "values are double[21] arrays" in text  # why the plan joins these binary
