"""The cofactor aggregate by Spark SQL operators (faq.learning.spark_sql) and the priced choice (faq.learning.costs).

The flat plan -- Spark joins the tables, one aggregation of count, sums and
sums of products -- against two independent answers: faq's in-process plan
on the same tables as pandas (the join never listed) and numpy's least
squares on the join pandas materialises; on a foreign-key star, on a
many-to-many join, and on random small tables (hypothesis).  The chooser's
prices are tested as a pure function of given sizes (no timing here), and
end to end: the notes name every plan's price and the choice, and
``placement="driver"`` is honoured.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import faq
from faq.errors import InvalidArgumentError
from faq.language import parse_query
from faq.learning import costs
from faq.learning.features import parse_features
from faq.learning.spark_sql import flat_aggregate
from tests.conftest import search_settings

pytestmark = pytest.mark.usefixtures("spark")

STAR = "lineitem(orderkey, partkey), orders(orderkey), part(partkey)"
STAR_FEATURES = ["lineitem.quantity", "lineitem.discount", "orders.totalprice", "part.size"]
STAR_TARGET = "lineitem.price"
MANY = "visits(customer, store), stock(store, item)"
MANY_FEATURES = ["visits.spend", "stock.price", "stock.weight"]
MANY_TARGET = "visits.minutes"


def star_tables(seed: int, rows: int = 400) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    orders = pd.DataFrame({"orderkey": np.arange(40), "totalprice": rng.uniform(10, 1000, 40)})
    part = pd.DataFrame({"partkey": np.arange(12), "size": rng.integers(1, 50, 12).astype(float)})
    lineitem = pd.DataFrame({"orderkey": rng.integers(0, 44, rows), "partkey": rng.integers(0, 12, rows),
                             "quantity": rng.integers(1, 50, rows).astype(float), "discount": rng.random(rows)})
    lineitem["price"] = 3 + 2 * lineitem.quantity - 4 * lineitem.discount + rng.normal(0, 1, rows)
    return {"lineitem": lineitem, "orders": orders, "part": part}


def many_tables(seed: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    visits = pd.DataFrame({"customer": rng.integers(0, 50, 120), "store": rng.integers(0, 6, 120),
                           "spend": rng.random(120) * 100, "minutes": rng.random(120) * 60})
    stock = pd.DataFrame({"store": rng.integers(0, 6, 90), "item": rng.integers(0, 30, 90),
                          "price": rng.random(90) * 20, "weight": rng.random(90)})
    return {"visits": visits, "stock": stock}


def parquet(spark, tmp_path, t: dict[str, pd.DataFrame]) -> dict:
    out = {}
    for name, frame in t.items():
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        out[name] = spark.read.parquet(str(path))
    return out


def flat(query: str, names: list[str], frames: dict) -> tuple[float, np.ndarray, np.ndarray]:
    parsed = parse_query("count() := " + query)
    atoms: dict = {}
    for a in parsed.atoms:
        atoms.setdefault(a.factor, a.variables)
    count, sums, products, _ = flat_aggregate(parsed, parse_features(names, atoms), frames)
    return count, sums, products


def lstsq(rows: pd.DataFrame, features: list[str], target: str) -> np.ndarray:
    x = np.column_stack([np.ones(len(rows))] + [rows[f.split(".")[1]].to_numpy() for f in features])
    return np.linalg.lstsq(x, rows[target.split(".")[1]].to_numpy(), rcond=None)[0]


def coefficients(model, features: list[str]) -> np.ndarray:
    return np.array([model.intercept, *[model.coefficients[f] for f in features]])


def only_spark_sql(monkeypatch) -> None:
    """Prices that make the flat plan the cheapest whatever the sizes (the other plans' fixed costs huge)."""
    monkeypatch.setattr(costs, "DRIVER_SECONDS", 1e6)
    monkeypatch.setattr(costs, "READ_FIXED_SECONDS", 1e6)  # tables read from their Parquet files too
    monkeypatch.setattr(costs, "TASK_JOB_SECONDS", 1e6)


@pytest.mark.parametrize("case", ["star", "many"])
def test_the_flat_aggregate_equals_the_in_process_one_and_least_squares_on_the_join(spark, tmp_path, case):
    if case == "star":
        t, query, features, target = star_tables(1), STAR, STAR_FEATURES, STAR_TARGET
        rows = t["lineitem"].merge(t["orders"], on="orderkey").merge(t["part"], on="partkey")
    else:
        t, query, features, target = many_tables(2), MANY, MANY_FEATURES, MANY_TARGET
        rows = t["visits"].merge(t["stock"], on="store")
    names = [*features, target]
    count, sums, products = flat(query, names, parquet(spark, tmp_path, t))
    in_process = faq.covariance(query, names, placement="driver", **t)
    assert count == in_process.count == len(rows) > 0
    np.testing.assert_allclose(sums, in_process.sums, rtol=1e-10)
    np.testing.assert_allclose(products, in_process.products, rtol=1e-10)
    x = rows[[n.split(".")[1] for n in names]].to_numpy()
    np.testing.assert_allclose(products, x.T @ x, rtol=1e-10)


@pytest.mark.parametrize("case", ["star", "many"])
def test_a_regression_priced_to_spark_sql_gives_least_squares_on_the_join(spark, tmp_path, monkeypatch, case):
    if case == "star":
        t, query, features, target = star_tables(3), STAR, STAR_FEATURES, STAR_TARGET
        rows = t["lineitem"].merge(t["orders"], on="orderkey").merge(t["part"], on="partkey")
    else:
        t, query, features, target = many_tables(4), MANY, MANY_FEATURES, MANY_TARGET
        rows = t["visits"].merge(t["stock"], on="store")
    only_spark_sql(monkeypatch)
    events = []
    model = faq.linear_regression(query, target, features, progress=events.append, **parquet(spark, tmp_path, t))
    np.testing.assert_allclose(coefficients(model, features), lstsq(rows, features, target), rtol=1e-7, atol=1e-7)
    assert model.rows == len(rows)
    text = str(model.explain())
    assert "chosen spark-sql" in text and "joined by Spark on" in text, text
    assert [e.kind for e in events] == ["start", "done"]
    reference = faq.linear_regression(query, target, features, placement="driver", **t)
    np.testing.assert_allclose(coefficients(model, features), coefficients(reference, features), rtol=1e-9)


def test_the_notes_price_every_plan_and_name_the_choice(spark, tmp_path):
    t = star_tables(5)
    model = faq.linear_regression(STAR, STAR_TARGET, STAR_FEATURES, **parquet(spark, tmp_path, t))
    notes = [n for n in model.covariance.notes if n.startswith(("priced:", "chosen"))]
    assert [n.split(":")[1].strip() for n in notes[:3]] == ["driver", "in-tasks", "spark-sql"], notes
    assert all(" est " in n for n in notes[:3]), notes
    assert notes[3].startswith("chosen "), notes
    assert "priced: spark-sql: est" in str(model.explain())


def test_placement_driver_is_honoured_whatever_the_prices(spark, tmp_path, monkeypatch):
    only_spark_sql(monkeypatch)
    t = star_tables(6)
    model = faq.linear_regression(STAR, STAR_TARGET, STAR_FEATURES, placement="driver", **parquet(spark, tmp_path, t))
    assert not any(n.startswith(("priced", "chosen")) for n in model.covariance.notes)
    from faq.learning.star import StarPlan

    # A foreign-key star held by the driver runs flat in-process (faq.learning.star); any other plan, in steps.
    assert isinstance(model.plan, StarPlan) or {s.placement for s in model.plan.steps} == {"driver"}
    rows = t["lineitem"].merge(t["orders"], on="orderkey").merge(t["part"], on="partkey")
    np.testing.assert_allclose(coefficients(model, STAR_FEATURES), lstsq(rows, STAR_FEATURES, STAR_TARGET),
                               rtol=1e-7, atol=1e-7)


def test_placement_executors_chooses_between_the_plans_on_the_executors(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(costs, "TASK_JOB_SECONDS", 1e6)  # in tasks priced out: spark-sql, never the driver
    t = many_tables(7)
    model = faq.covariance(MANY, MANY_FEATURES, placement="executors", **parquet(spark, tmp_path, t))
    notes = "\n".join(model.notes)
    assert "chosen spark-sql (placement=executors: the cheaper of the plans on the executors)" in notes, notes
    assert "priced: driver: est" in notes  # priced, though not allowed
    assert model.count == len(t["visits"].merge(t["stock"], on="store"))


def test_nulls_are_left_out_as_on_the_driver_and_text_keys_refused(spark, tmp_path, monkeypatch):
    t = star_tables(8, rows=60)
    t["lineitem"].loc[:3, "discount"] = np.nan
    t["lineitem"]["orderkey"] = t["lineitem"]["orderkey"].astype("Int64")
    t["lineitem"].loc[10:12, "orderkey"] = pd.NA
    names = [*STAR_FEATURES, STAR_TARGET]
    count, sums, products = flat(STAR, names, parquet(spark, tmp_path, t))
    expected = faq.covariance(STAR, names, placement="driver", **t)
    assert count == expected.count
    np.testing.assert_allclose(products, expected.products, rtol=1e-10)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = {**t, "part": t["part"].assign(partkey=t["part"]["partkey"].astype(str))}
    with pytest.raises(InvalidArgumentError, match="partkey.*integer"):
        flat(STAR, names, parquet(spark, bad_dir, bad))



@pytest.mark.parametrize("placement", [None, "driver"])
def test_an_integer_key_with_nulls_fetched_from_spark_stays_a_key(spark, tmp_path, placement):
    """A nullable ``long`` key read by Spark comes to the driver through Arrow, whose pandas conversion
    made it float64: the fetched table was then refused ("a join key must be an integer column") though
    the same Parquet ran on the executors.  Fetched, it must give the pandas tables' answer."""
    t = star_tables(8, rows=60)
    t["lineitem"]["orderkey"] = t["lineitem"]["orderkey"].astype("Int64")
    t["lineitem"].loc[10:12, "orderkey"] = pd.NA
    names = [*STAR_FEATURES, STAR_TARGET]
    got = faq.covariance(STAR, names, placement=placement, **parquet(spark, tmp_path, t))
    expected = faq.covariance(STAR, names, placement="driver", **t)
    assert got.count == expected.count
    np.testing.assert_allclose(got.products, expected.products, rtol=1e-10)
    assert any("3 rows with a null key or feature dropped" in n for n in got.notes), got.notes

# --- random small tables: the flat plan against the in-process one --------------------------------------

QUERIES = {
    "r(a, b), s(b, c)": (["r.x", "s.y"], ["r", "s"]),
    "r(a, b), s(b, c), u(c)": (["r.x", "s.y", "u.z"], ["r", "s", "u"]),
    "r(a, b), r(b, c), u(a)": (["r.x", "u.z"], ["r", "u"]),  # a table joined twice lifts its features once
    "r(a, b), s(a, b)": (["s.y", "r.x"], ["r", "s"]),
}


@st.composite
def small_tables(draw):
    query = draw(st.sampled_from(sorted(QUERIES)))
    keys = st.integers(0, 3)
    values = st.one_of(st.floats(-10, 10, allow_nan=False, width=32), st.none())
    out = {}
    for name, (k1, k2, value) in {"r": ("a", "b", "x"), "s": ("b", "c", "y"), "u": ("c", None, "z")}.items():
        n = draw(st.integers(0, 7))
        frame = {k1: draw(st.lists(keys, min_size=n, max_size=n))}
        if k2:
            frame[k2] = draw(st.lists(keys, min_size=n, max_size=n))
        frame[value] = draw(st.lists(values, min_size=n, max_size=n))
        out[name] = pd.DataFrame({c: pd.array(v, dtype="int64" if c != value else "float64") for c, v in frame.items()})
    if "u(a)" in query:
        out["u"] = out["u"].rename(columns={"c": "a"})
    if "s(a, b)" in query:
        out["s"] = out["s"].rename(columns={"b": "a", "c": "b"})
    return query, out


@given(small_tables())
@search_settings(25)
def test_random_small_joins_flat_equals_in_process(spark, case):
    query, t = case
    names, used = QUERIES[query]
    frames = {n: spark.createDataFrame(t[n], ", ".join(f"{c} {'bigint' if c != t[n].columns[-1] else 'double'}"
                                                          for c in t[n].columns)) for n in used}
    count, sums, products = flat(query, names, frames)
    expected = faq.covariance(query, names, placement="driver", **{n: t[n] for n in used})
    assert count == expected.count
    np.testing.assert_allclose(sums, expected.sums, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(products, expected.products, rtol=1e-9, atol=1e-9)


# --- the prices: a pure function of given sizes ------------------------------------------------------------


def star_sizes(lineitem: int, fits: bool = True) -> costs.Sizes:
    return costs.Sizes((costs.TableSize("lineitem", lineitem, 8, 4, fits=fits),
                        costs.TableSize("orders", lineitem // 10, 3, 2), costs.TableSize("part", lineitem // 100, 3, 2)),
                       float(lineitem), 8, 2, "lineitem")


def test_a_foreign_key_star_of_spark_inputs_is_priced_to_spark_sql():
    prices = costs.priced(star_sizes(2_000_000))
    assert costs.chosen(prices).plan == "spark-sql"
    assert prices[2].seconds < prices[0].seconds and prices[2].seconds < prices[1].seconds
    lines = costs.price_lines(prices, costs.chosen(prices))
    assert lines[2].startswith("priced: spark-sql: est ") and "join 2.0M rows × 45 sums" in lines[2], lines
    assert lines[-1] == "chosen spark-sql"


def test_a_many_to_many_join_far_larger_than_its_inputs_is_priced_to_a_factorized_plan():
    sizes = costs.Sizes((costs.TableSize("visits", 200_000, 5, 3, keys=1000), costs.TableSize("stock", 200_000, 6, 4,
                                                                                              keys=1000)),
                        200_000 * 200_000 / 1000, 7, 2, "visits")
    prices = costs.priced(sizes)
    assert costs.chosen(prices).plan in ("driver", "in-tasks")
    assert prices[2].seconds > 5 * costs.chosen(prices).seconds
    assert costs.chosen(prices, ["in-tasks", "spark-sql"]).plan == "in-tasks"  # placement="executors"


def test_a_plan_that_cannot_run_is_never_chosen():
    sizes = star_sizes(2_000_000, fits=False)
    prices = costs.priced(sizes)
    assert math.isinf(prices[0].seconds) and "does not fit" in prices[0].describe()
    assert costs.chosen(prices).plan != "driver"
    no_split = costs.priced(costs.Sizes(sizes.tables, sizes.join_rows, 8, 2, None))
    assert math.isinf(no_split[1].seconds)


def test_join_rows_is_exact_for_foreign_keys_and_uniform_many_to_many():
    star = [("l", ("o", "p")), ("o", ("o",)), ("p", ("p",))]
    assert costs.join_rows(star, {"l": 1000, "o": 100, "p": 10}, {("o", "o"): 100, ("p", "p"): 10}) == 1000
    t = many_tables(9)
    exact = len(t["visits"].merge(t["stock"], on="store"))
    d = {("visits", "store"): t["visits"].store.nunique(), ("stock", "store"): t["stock"].store.nunique()}
    estimate = costs.join_rows([("visits", ("customer", "store")), ("stock", ("store", "item"))],
                               {"visits": 120, "stock": 90}, d)
    assert 0.7 * exact <= estimate <= 1.3 * exact
    # a table joined to nothing: the product
    assert costs.join_rows([("a", ("x",)), ("b", ("y",))], {"a": 3, "b": 4}, {}) == 12


def test_sizes_come_from_parquet_footers_or_one_counting_job(spark, tmp_path):
    from faq.learning.spark_sql import table_statistics

    t = many_tables(10)
    parsed = parse_query("count() := " + MANY)
    from_files = table_statistics(parsed, parquet(spark, tmp_path, t))
    counted = table_statistics(parsed, {n: spark.createDataFrame(f) for n, f in t.items()})
    assert from_files[0] == counted[0] == {"visits": 120, "stock": 90}
    exact = {("visits", "store"): t["visits"].store.nunique(), ("stock", "store"): t["stock"].store.nunique()}
    assert counted[1] == exact  # approx_count_distinct is exact this small
    spans = {("visits", "store"): int(np.ptp(t["visits"].store)) + 1, ("stock", "store"): int(np.ptp(t["stock"].store)) + 1}
    assert from_files[1] == spans


def test_a_nan_feature_leaves_its_row_out_as_on_the_driver(spark):
    """Spark keeps NaN apart from null: the flat plan, seeing NaN sums, takes the aggregate again without
    the NaN rows -- the driver's path (pandas' isna) leaves them out."""
    r = pd.DataFrame({"a": [1, 1, 2, 3], "x": [1.0, float("nan"), 2.0, 4.0]})
    s = pd.DataFrame({"a": [1, 2, 2, 3], "y": [0.5, float("nan"), 3.0, 1.0]})
    frames = {"r": spark.createDataFrame(list(r.itertuples(index=False)), "a bigint, x double"),
              "s": spark.createDataFrame(list(s.itertuples(index=False)), "a bigint, y double")}
    assert frames["r"].where("isnan(x)").count() == 1  # a NaN in Spark, not a null
    count, sums, products = flat("r(a), s(a)", ["r.x", "s.y"], frames)
    expected = faq.covariance("r(a), s(a)", ["r.x", "s.y"], placement="driver", r=r, s=s)
    assert count == expected.count == 3
    np.testing.assert_allclose(sums, expected.sums)
    np.testing.assert_allclose(products, expected.products)


def test_a_column_replaced_after_a_parquet_read_is_still_tested_for_nulls(spark, tmp_path):
    """The footers of the files a DataFrame reads say nothing of a column the DataFrame replaced by an
    expression: its nulls must still leave their rows out (a footer-based shortcut once let them in,
    3 rows and Σa = 40 where 2 rows and Σa = 30 are right)."""
    from pyspark.sql import functions as F

    from faq.learning.features import Feature

    pd.DataFrame({"o": [1, 1, 2], "q": [2.0, 3.0, 5.0]}).to_parquet(tmp_path / "l.parquet")
    l = spark.read.parquet(str(tmp_path / "l.parquet"))
    l = l.withColumn("q", F.when(F.col("q") == 3.0, F.lit(None)).otherwise(F.col("q")))
    o = spark.createDataFrame([(1, 10.0), (2, 20.0)], "o long, a double")
    n, sums, _, _ = flat_aggregate(parse_query("count() := l(o), o(o)"),
                                   [Feature("l", "q", 0), Feature("o", "a", 1)], {"l": l, "o": o})
    assert (n, sums.tolist()) == (2.0, [7.0, 30.0])
