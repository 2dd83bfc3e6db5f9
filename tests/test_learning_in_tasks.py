"""A regression whose largest table stays in Spark, lifted and joined in its own tasks (faq.learning.in_tasks).

Against numpy's least squares on the join pandas materialises, with the
tables given as Spark DataFrames (from Parquet, as users read them), for
``placement="executors"`` and for a table too large to fetch under the
default placement; and the cases that must not split (a table used twice,
two tables too large) against the same oracle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import faq
from faq.learning.in_tasks import CHUNK_ROWS, lift_and_join
from tests.test_learning import FEATURES, QUERY, TARGET, joined, least_squares, tables

pytestmark = pytest.mark.usefixtures("spark")


def parquet(spark, tmp_path, t: dict[str, pd.DataFrame]) -> dict:
    out = {}
    for name, frame in t.items():
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path)
        out[name] = spark.read.parquet(str(path))
    return out


def coefficients(model) -> np.ndarray:
    return np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])


def test_forced_executors_keep_the_largest_table_in_its_tasks(spark, tmp_path):
    t = tables(11, rows=2000)
    given = parquet(spark, tmp_path, t)
    events = []
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="executors",
                                  progress=events.append, **given)
    np.testing.assert_allclose(coefficients(model), least_squares(joined(t), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    assert model.rows == len(joined(t))
    text = str(model.explain())
    assert "lineitem(orderkey, partkey, suppkey): stays in Spark (placement=executors)" in text, text
    assert "runs in-process (in the tasks of lineitem#1" in text and "runs in the tasks of lineitem#1" in text, text
    assert [e.kind for e in events] == ["start", "done"]


def test_a_table_too_large_to_fetch_stays_in_spark_the_others_come_to_the_driver(spark, tmp_path):
    t = tables(12, rows=3000)
    given = parquet(spark, tmp_path, t)
    # About 40 rows of 6 columns fit: partsupp (30 rows) and part (12) are fetched, lineitem is not.
    spark.conf.set("spark.faq.fetchMemory", str(40 * 6 * 8))
    try:
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **given)
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
    np.testing.assert_allclose(coefficients(model), least_squares(joined(t), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    assert "stays in Spark (too large to fetch to the driver)" in str(model.explain())


def test_a_table_used_twice_does_not_split_and_stays_exact(spark, tmp_path):
    rng = np.random.default_rng(7)
    edges = pd.DataFrame({"a": rng.integers(0, 9, 60), "b": rng.integers(0, 9, 60), "w": rng.random(60)})
    nodes = pd.DataFrame({"a": np.arange(9), "h": rng.random(9)})
    given = parquet(spark, tmp_path, {"e": edges, "n": nodes})
    m = faq.covariance("e(a, b), e(b, c), n(a)", ["e.w", "n.h"], placement="executors", **given)
    rows = edges.merge(edges.rename(columns={"a": "b", "b": "c", "w": "w2"}), on="b").merge(nodes, on="a")
    x = rows[["w", "h"]].to_numpy(dtype=float)
    assert m.count == len(rows)
    np.testing.assert_allclose(m.products, x.T @ x, rtol=1e-9)
    assert "stays in Spark" not in str(m.explain())


def test_a_task_takes_its_rows_in_chunks_and_adds_their_aggregates(monkeypatch):
    """lift_and_join, without Spark: rows in batches smaller than a chunk, then larger; the same sum."""
    import pyarrow as pa

    from faq.joins.table import Table
    from faq.learning.features import Feature
    from faq.learning.in_tasks import _task_plan, _TaskSpec
    from faq.language import parse_query
    from faq.semirings import cofactor

    ring = cofactor(2)
    query = parse_query("count() := l(o, p), q(p)")
    shipped = {"q#2": Table(("p",), {"p": np.array([0, 1])}, ring_values(ring, [[1.0], [2.0]], 1))}
    spec = _TaskSpec(ring, (Feature("l", "x", 0),), ("o", "p"), "l#1", _task_plan(query, ring, {"q": 2}, "l#1",
                     "a test"), None)
    batch = pa.record_batch({"o": [1, 2, 3, 4], "p": [0, 1, 1, 5], "__f0": [1.0, 2.0, 3.0, 4.0]})
    expected = [next(lift_and_join(iter([batch]), spec, shipped)).column(0).to_pylist()[0]]
    monkeypatch.setattr("faq.learning.in_tasks.CHUNK_ROWS", 1)
    chunked = [b.column(0).to_pylist()[0] for b in lift_and_join(iter([batch.slice(0, 2), batch.slice(2)]), spec,
                                                                 shipped)]
    np.testing.assert_allclose(chunked, expected)
    # (count, Σx, Σy, Σx², Σxy, Σy²) over the rows joining q: x = 1, 2, 3 with y = 1, 2, 2
    np.testing.assert_allclose(expected[0], [3, 6, 5, 14, 11, 9])
    assert CHUNK_ROWS >= 1


def ring_values(ring, rows, index):
    """The lifts of feature ``index`` of each row (the ring's numpy form)."""
    from faq.learning.features import Feature, row_values

    column = np.array([r[0] for r in rows])
    return row_values(ring, [Feature("q", "y", index)], {"y": column}, len(rows))


def test_a_key_that_is_not_an_integer_is_refused(spark, tmp_path):
    """As from pandas: a join key column of strings is an error that names it, not rows silently dropped."""
    from faq.errors import InvalidArgumentError

    t = tables(13, rows=200)
    t["lineitem"] = t["lineitem"].assign(orderkey=t["lineitem"]["orderkey"].astype(str))
    given = parquet(spark, tmp_path, t)
    with pytest.raises(InvalidArgumentError, match="orderkey.*integer"):
        faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="executors", **given)


STAR_QUERY = "lineitem(orderkey, partkey), orders(orderkey, custkey), customer(custkey), part(partkey)"
STAR_FEATURES = ["lineitem.quantity", "orders.totalprice", "customer.acctbal", "part.size"]


def star_tables(seed: int, rows: int = 400) -> dict[str, pd.DataFrame]:
    """A snowflake whose looked-up keys are each held once; some line items join no order, one part is missing,
    one line item has a null feature, one order a null feature."""
    rng = np.random.default_rng(seed)
    orders = pd.DataFrame({"orderkey": np.arange(0, 120, 2), "custkey": rng.integers(0, 25, 60),
                           "totalprice": rng.random(60) * 1000})
    orders.loc[3, "totalprice"] = None  # a null feature: the order joins nothing
    customer = pd.DataFrame({"custkey": np.arange(0, 25), "acctbal": rng.normal(0, 100, 25)})
    part = pd.DataFrame({"partkey": np.delete(np.arange(40), 7), "size": rng.integers(1, 50, 39).astype(float)})
    lineitem = pd.DataFrame({"orderkey": rng.integers(0, 130, rows), "partkey": rng.integers(0, 40, rows),
                             "quantity": rng.integers(1, 50, rows).astype(float)})
    lineitem["extendedprice"] = 5 + 2 * lineitem.quantity + rng.normal(0, 1, rows)
    lineitem.loc[5, "quantity"] = None
    return {"lineitem": lineitem, "orders": orders, "customer": customer, "part": part}


def star_joined(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = t["lineitem"].dropna().merge(t["orders"].dropna(), on="orderkey").merge(t["customer"], on="custkey")
    return rows.merge(t["part"], on="partkey")


@pytest.mark.parametrize("seed, read", [(21, "files"), (22, "spark")])
def test_a_foreign_key_star_is_looked_up_and_summed_flat_in_its_tasks(spark, tmp_path, seed, read):
    """The driver's flat star, run in lineitem's own tasks, against least squares on pandas' merge: the tasks
    reading shares of lineitem's Parquet file, or (a filter: no bare scan) the rows Spark gives them."""
    t = star_tables(seed)
    given = parquet(spark, tmp_path, t)
    if read == "spark":
        given["lineitem"] = given["lineitem"].where("partkey >= 0")  # every row: the same join, not a bare scan
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")  # several tasks, each with its own partial
    try:
        model = faq.linear_regression(STAR_QUERY, target=TARGET, features=STAR_FEATURES, placement="executors",
                                      **given)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    rows = star_joined(t)
    expected = least_squares(rows, STAR_FEATURES, TARGET)
    np.testing.assert_allclose([model.intercept, *[model.coefficients[f] for f in STAR_FEATURES]], expected,
                               rtol=1e-8, atol=1e-8)
    assert model.rows == len(rows)
    text = "\n".join(model.covariance.notes)
    assert "lineitem(orderkey, partkey): stays in Spark (placement=executors): looked up and summed flat" in text, text
    assert "orders(orderkey, custkey) (60 rows)" in text, text  # shipped as rows
    how = "tasks reading a share of its 1 Parquet file(s)" if read == "files" else "its rows as Spark reads them"
    assert how in text, text


def test_a_star_whose_lookup_key_repeats_runs_the_ring_in_the_tasks(spark, tmp_path):
    """A customer held twice is no lookup: the ring's plan runs in the tasks instead, as exact."""
    t = star_tables(23)
    t["customer"] = pd.concat([t["customer"], t["customer"].iloc[[4]]], ignore_index=True)
    given = parquet(spark, tmp_path, t)
    model = faq.linear_regression(STAR_QUERY, target=TARGET, features=STAR_FEATURES, placement="executors", **given)
    rows = star_joined(t)
    np.testing.assert_allclose([model.intercept, *[model.coefficients[f] for f in STAR_FEATURES]],
                               least_squares(rows, STAR_FEATURES, TARGET), rtol=1e-8, atol=1e-8)
    text = "\n".join(model.covariance.notes)
    # (the price guessed a star from the distinct keys; the run checks them exactly)
    assert "stays in Spark (placement=executors): lifted and joined in its own tasks" in text, text
    assert "summed flat in its own tasks" not in text, text


def test_a_star_task_takes_its_rows_in_chunks_and_adds_them(monkeypatch):
    """star_chunks, without Spark: the same packed sum in one chunk and in chunks of one row."""
    import pyarrow as pa

    from faq.language import parse_query
    from faq.learning.features import parse_features
    from faq.learning.in_tasks import _StarSpec, star_chunks
    from faq.semirings import cofactor

    parsed = parse_query("count() := l(o, p), q(p)")
    features = parse_features(["l.x", "q.y"], {a.factor: a.variables for a in parsed.atoms})
    spec = _StarSpec(cofactor(2), parsed, tuple(features), "l", {"l": 10, "q": 2}, None)
    shipped = {"q": {"p": np.array([0, 1]), "y": np.array([1.0, 2.0])}}
    batch = pa.record_batch({"o": [1, 2, 3, 4], "p": [0, 1, 1, 5], "x": [1.0, 2.0, 3.0, 4.0]})
    whole = next(star_chunks(iter([batch]), spec, shipped)).column(0).to_pylist()[0]
    monkeypatch.setattr("faq.learning.in_tasks.CHUNK_ROWS", 1)
    chunked = [b.column(0).to_pylist()[0] for b in star_chunks(iter([batch.slice(0, 2), batch.slice(2)]), spec,
                                                               shipped)]
    # (count, Σx, Σy, Σx², Σxy, Σy²) over the rows joining q: x = 1, 2, 3 with y = 1, 2, 2
    np.testing.assert_allclose(whole, [3, 6, 5, 14, 11, 9])
    np.testing.assert_allclose(chunked, [whole])
