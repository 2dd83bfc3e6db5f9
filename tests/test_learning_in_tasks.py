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
