"""Maintained models (faq.learning.maintained): after every batch, equal to recomputation.

A random stream of inserts and deletes into every table of a TPC-H shaped
join (deletes drawn from the rows present, so hubs and repeated keys are
hit); after each batch the maintained aggregate ``(n, Σx, Σxxᵀ)`` must equal
numpy on the join materialised with pandas, and the coefficients numpy's
least squares on it.  Durability, a self-join, Spark DataFrames and bad
deltas are checked too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import faq
from faq.errors import (
    BatchAlreadyAppliedError,
    FAQValueError,
    InvalidArgumentError,
    InvalidDeltaError,
    StateDirectoryError,
)
from faq.learning import MaintainedModel

from tests.test_learning import FEATURES, QUERY, TARGET, joined, least_squares, tables

pytestmark = pytest.mark.usefixtures("spark")  # the factors are made for a session (none starts in-process)

KEYS = {"lineitem": ["orderkey", "partkey", "suppkey"], "partsupp": ["partkey", "suppkey"], "part": ["partkey"]}


def aggregate_of(rows: pd.DataFrame, names: list[str]) -> tuple[float, np.ndarray, np.ndarray]:
    x = np.column_stack([rows[n.split(".")[1]].to_numpy(dtype=float) for n in names]) if len(rows) else \
        np.zeros((0, len(names)))
    return float(len(rows)), x.sum(axis=0), x.T @ x


def random_batch(rng: np.random.Generator, current: dict[str, pd.DataFrame], template: dict[str, pd.DataFrame],
                 size: int) -> dict[str, pd.DataFrame]:
    """Inserts (new rows like the template's) and deletes (rows present now) for a random subset of tables."""
    batch = {}
    for name in rng.permutation(list(current))[: rng.integers(1, len(current) + 1)]:
        now = current[name]
        deletes = now.sample(n=min(len(now), int(rng.integers(0, size + 1))), random_state=int(rng.integers(1 << 30)))
        inserts = template[name].sample(n=int(rng.integers(0, size + 1)), replace=True,
                                        random_state=int(rng.integers(1 << 30))).copy()
        numeric = [c for c in inserts.columns if c not in KEYS[name] and inserts[c].dtype.kind == "f"]
        for c in numeric:  # new values, so an insert is not a copy of a deleted row
            inserts[c] = np.round(inserts[c].to_numpy() * rng.uniform(0.5, 1.5, len(inserts)), 3)
        batch[name] = pd.concat([deletes.assign(diff=-1), inserts.assign(diff=1)], ignore_index=True)
    return batch


def applied(current: pd.DataFrame, delta: pd.DataFrame) -> pd.DataFrame:
    """The table after a delta: deletes remove one copy each of an equal row, inserts add."""
    out = current.copy()
    for _, row in delta[delta["diff"] < 0].iterrows():
        values = row.drop("diff")
        match = np.flatnonzero((out[values.index] == values.to_numpy()).all(axis=1).to_numpy())
        out = out.drop(out.index[match[0]])
    inserts = delta[delta["diff"] > 0].drop(columns="diff")
    return pd.concat([out, inserts], ignore_index=True)


@pytest.mark.parametrize("seed", [11, 12])
def test_a_random_stream_equals_recomputation_after_every_batch(seed):
    rng = np.random.default_rng(seed)
    template = tables(seed, rows=150)
    current = {name: df.copy() for name, df in template.items()}
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **current)
    names = [*FEATURES, TARGET]
    try:
        for version in range(1, 9):
            batch = random_batch(rng, current, template, size=6)
            change = model.apply(batch)
            current = {name: applied(df, batch[name]) if name in batch else df for name, df in current.items()}
            rows = joined(current)
            count, sums, products = aggregate_of(rows, names)
            aggregate = model.covariance
            assert model.version == change.version == version
            assert aggregate.count == count
            np.testing.assert_allclose(aggregate.sums, sums, rtol=1e-9, atol=1e-6)
            np.testing.assert_allclose(aggregate.products, products, rtol=1e-9, atol=1e-6)
            if count > len(names) + 1:
                got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
                np.testing.assert_allclose(got, least_squares(rows, FEATURES, TARGET), rtol=1e-7, atol=1e-7)
        # the same aggregate as the static path on the final tables
        static = faq.covariance(QUERY, names, **current)
        np.testing.assert_allclose(model.covariance.products, static.products, rtol=1e-9, atol=1e-6)
    finally:
        model.close()


def test_indexes_on_the_executors_keep_the_same_model(spark):
    """placement='executors': the bases are broadcast, each batch is one Spark job whose tasks run the
    delta rules over array values; after every batch, equal to the driver placement's model and to
    least squares on the listed join (classic Spark: broadcast variables)."""
    rng = np.random.default_rng(91)
    template = tables(91, rows=120)
    current = {name: df.copy() for name, df in template.items()}
    remote = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True,
                                   placement="executors", **current)
    local = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True,
                                  placement="driver", **current)
    assert remote.explain().plan.placement == "executors" and local.explain().plan.placement == "driver"
    try:
        for _ in range(3):
            batch = random_batch(rng, current, template, size=5)
            remote.apply(batch)
            local.apply(batch)
            current = {name: applied(df, batch[name]) if name in batch else df for name, df in current.items()}
            np.testing.assert_allclose(remote.covariance.products, local.covariance.products, rtol=1e-12)
            got = np.array([remote.intercept, *[remote.coefficients[f] for f in FEATURES]])
            np.testing.assert_allclose(got, least_squares(joined(current), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    finally:
        remote.close()
        local.close()


def test_a_batch_runs_the_delta_rules_not_a_recount():
    t = tables(21, rows=120)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **t)
    plan = str(model.explain())
    assert "cofactor(5)" in plan and "driver" in plan
    assert "lineitem(orderkey, partkey, suppkey): lifts lineitem.quantity, lineitem.discount, " \
           "lineitem.extendedprice; 120 rows" in plan and "of 21 doubles" in plan
    change = model.apply(lineitem=t["lineitem"].head(3).assign(diff=1))
    # three lineitem rows seed the lineitem rule; the other tables' indexes are looked up
    assert change.info["rows"] == len({tuple(r) for r in t["lineitem"].head(3)[KEYS["lineitem"]].to_numpy()})
    assert change.info["rules"] == 1 and model.query.last_rules[0].seeds == change.info["rows"]
    assert np.asarray(change.diff).shape == (1, model.query.semiring.width)
    assert model.covariance.count == len(joined({**t, "lineitem": pd.concat([t["lineitem"], t["lineitem"].head(3)])}))
    model.close()


def test_a_durable_model_reopens_and_refuses_a_batch_twice(tmp_path):
    t = tables(31, rows=100)
    path = str(tmp_path / "model")
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, state=path, **t)
    first = t["lineitem"].head(5).assign(diff=-1)
    model.apply(lineitem=first, version=1)
    before = model.coefficients
    model.close()

    reopened = MaintainedModel.open(path)
    assert reopened.version == 1 and reopened.target == TARGET
    assert reopened.coefficients == pytest.approx(before, rel=1e-12)
    with pytest.raises(BatchAlreadyAppliedError):
        reopened.apply(lineitem=first, version=1)
    reopened.apply(lineitem=first.assign(diff=1), version=2)   # back to the original tables
    expected = least_squares(joined(t), FEATURES, TARGET)
    got = np.array([reopened.intercept, *[reopened.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7)
    reopened.close()
    with pytest.raises(StateDirectoryError):
        MaintainedModel.open(str(tmp_path))


def test_a_table_joined_twice_takes_its_delta_in_both_atoms():
    # edges(a, b), edges(b, c): paths of length two; the feature counts once per path
    edges = pd.DataFrame({"a": [1, 2, 2, 3], "b": [2, 3, 4, 4], "w": [1.0, 2.0, 3.0, 4.0]})
    query = "edges(a, b), edges(b, c)"
    model = faq.covariance(query, ["edges.w"], maintained=True, edges=edges)

    def expected(e: pd.DataFrame):
        paths = e.merge(e.rename(columns={"a": "b", "b": "c", "w": "w2"}), on="b")
        return len(paths), paths["w"].sum(), (paths["w"] ** 2).sum()

    assert (model.covariance.count, *model.covariance.sums, *model.covariance.products.ravel()) == \
        pytest.approx(expected(edges))
    delta = pd.DataFrame({"a": [4, 1], "b": [5, 2], "w": [5.0, 1.0], "diff": [1, -1]})
    model.apply(edges=delta)
    after = pd.concat([edges.iloc[1:], delta.iloc[:1].drop(columns="diff")], ignore_index=True)
    assert (model.covariance.count, *model.covariance.sums, *model.covariance.products.ravel()) == \
        pytest.approx(expected(after))
    model.close()


def test_tables_given_as_spark_dataframes(spark):
    t = tables(41, rows=80)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True,
                                  **{name: spark.createDataFrame(df) for name, df in t.items()})
    delta = t["lineitem"].head(4).assign(diff=-1)
    model.apply(lineitem=spark.createDataFrame(delta))
    rows = joined({**t, "lineitem": t["lineitem"].iloc[4:]})
    got = np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])
    np.testing.assert_allclose(got, least_squares(rows, FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    model.close()


def test_bad_deltas_say_what_is_wrong_and_change_nothing():
    t = tables(51, rows=60)
    model = faq.covariance(QUERY, FEATURES, maintained=True, **t)
    before = model.covariance.products.copy()
    with pytest.raises(InvalidDeltaError, match="no table 'orders'"):
        model.apply(orders=t["lineitem"].head(1))
    with pytest.raises(InvalidDeltaError, match="no column 'discount'"):
        model.apply(lineitem=t["lineitem"].head(2).drop(columns="discount"))
    with pytest.raises(InvalidDeltaError, match="multiplicities"):
        model.apply(lineitem=t["lineitem"].head(2).assign(diff=0.5))
    with_null = t["lineitem"].head(3).assign(diff=1)
    with_null.loc[with_null.index[0], "quantity"] = np.nan
    change = model.apply(lineitem=with_null)
    assert change.info["dropped"] == {"lineitem": 1} and model.version == 1
    nullable = with_null.assign(diff=-1).astype({"orderkey": "Int64", "partkey": "Int64", "quantity": "Float64"})
    nullable.loc[nullable.index[1], "partkey"] = pd.NA   # pandas' nullable columns, with NA
    change = model.apply(lineitem=nullable)               # and back: NA rows dropped, the others read as numbers
    assert change.info["dropped"] == {"lineitem": 2}
    model.apply(lineitem=with_null.iloc[1:2].assign(diff=-1))
    with pytest.raises(InvalidArgumentError, match="without a target"):
        model.coefficients
    assert model.version == 3
    np.testing.assert_allclose(model.covariance.products, before, rtol=1e-12)
    model.close()
    with pytest.raises(FAQValueError, match="placement"):
        faq.covariance(QUERY, FEATURES, maintained=True, placement="nowhere", **t)
    with pytest.raises(InvalidArgumentError, match="maintained=True"):
        faq.covariance(QUERY, FEATURES, state="/tmp/nowhere", **t)


def test_on_a_local_cluster_static_and_maintained_equal_least_squares():
    """Real executor JVMs (``local-cluster[2,1,1024]``, in a child process: one SparkContext per
    process): the regression with lineitem lifted and joined in its own tasks, and a maintained model
    after a batch of deletes, both equal numpy's least squares on the join; a moments query run in
    partitioned cells on the executors equals the same query in-process."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(root / "tests" / "learning_cluster_job.py"), "61"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["master"] == "local-cluster[2,1,1024]" and found["static_in_tasks"]
    assert found["cell_strategies"] == ["partitioned"]
    from faq.insideout import evaluate
    from tests.learning_cluster_job import moments_factors, moments_query

    with evaluate(moments_query(), moments_factors(), placement="driver") as result:
        expected = sorted([row[0], *row[1]] for row in result.df.collect())
    np.testing.assert_allclose(found["cells"], expected, rtol=1e-12)
    import networkx as nx

    from tests.learning_cluster_job import fixpoint_rows

    graph = nx.DiGraph()
    for u, v, w in fixpoint_rows():
        if not graph.has_edge(u, v) or graph[u][v]["weight"] > w:
            graph.add_edge(u, v, weight=w)
    assert found["distances_held"]
    assert found["distances"] == sorted([n, float(d)] for n, d in nx.single_source_dijkstra_path_length(graph, 0).items())
    t = tables(61)
    np.testing.assert_allclose(found["static"], least_squares(joined(t), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    after = {**t, "lineitem": t["lineitem"].iloc[10:]}
    assert found["maintained_rows"] == len(joined(after))
    np.testing.assert_allclose(found["maintained"], least_squares(joined(after), FEATURES, TARGET),
                               rtol=1e-7, atol=1e-7)


def test_maintain_takes_a_factor_of_an_array_ring_directly():
    """faq.maintain with moments values: after every random signed batch, the answer per key equals a
    brute-force ⊕ over the listed join (⊗ of moments written out by hand)."""
    from faq.factor import factor_of
    from faq import maintain
    from faq.semirings import MOMENTS

    rng = np.random.default_rng(81)

    def product(u, v):  # (c, s, q) ⊗ (c', s', q') of the moments ring
        return np.array([u[0] * v[0], u[1] * v[0] + u[0] * v[1], u[2] * v[0] + u[0] * v[2] + 2 * u[1] * v[1]])

    def lift(x):
        return [1.0, float(x), float(x) ** 2]

    r = {(int(a), int(b)): np.array(lift(rng.integers(-3, 4))) for a, b in rng.integers(0, 5, (12, 2))}
    s = {int(b): np.array(lift(rng.integers(-3, 4))) for b in rng.integers(0, 5, 4)}
    maintained = maintain("q(a) := r(a, b), s(b)", {
        "r": factor_of([(a, b, tuple(v)) for (a, b), v in r.items()], ["a", "b"], MOMENTS),
        "s": factor_of([(b, tuple(v)) for b, v in s.items()], ["b"], MOMENTS)})

    def brute() -> dict:
        out: dict = {}
        for (a, b), v in r.items():
            if b in s:
                out[a] = out.get(a, np.zeros(3)) + product(v, s[b])
        return {a: v for a, v in out.items() if np.any(v != 0)}

    def answer() -> dict:
        rows = maintained.answer().df.collect()
        return {row["a"]: np.array(row["value"]) for row in rows}

    for _ in range(6):
        delta_r = [(int(a), int(b), tuple(np.array(lift(rng.integers(-3, 4))) * rng.choice([-1, 1])))
                   for a, b in rng.integers(0, 5, (3, 2))]
        delta_s = [(int(b), tuple(lift(rng.integers(-3, 4)))) for b in rng.integers(0, 5, 1)]
        maintained.apply(r=delta_r, s=delta_s)
        for a, b, v in delta_r:
            r[(a, b)] = r.get((a, b), np.zeros(3)) + np.array(v)
        for b, v in delta_s:
            s[b] = s.get(b, np.zeros(3)) + np.array(v)
        expected, got = brute(), answer()
        assert set(got) == set(expected)
        for a in expected:
            np.testing.assert_allclose(got[a], expected[a], atol=1e-9)
    maintained.close()
