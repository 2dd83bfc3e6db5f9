"""Maintained queries on real data, and durable state (save, reopen, interrupted applies)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from faq.errors import BatchAlreadyAppliedError, StateDirectoryError
from faq.factor import Factor, factor_of
from faq.graphs.edges import simple_directed
from faq import maintain
from faq.incremental import MaintainedQuery
from faq.insideout import evaluate
from faq.io import read_edge_list, read_matrix_market

DATA = Path(__file__).parent / "data"
CLIQUE4 = "count() := edge(a,b), edge(a,c), edge(a,d), edge(b,c), edge(b,d), edge(c,d)"
TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"


def simple_graph(spark, name: str):
    graph = simple_directed(read_edge_list(str(DATA / name)))
    df = graph.df.selectExpr(f"{graph.variables[0]} AS src", f"{graph.variables[1]} AS dst").cache()
    return df, sorted(tuple(r) for r in df.collect())


def static_count(spark, query: str, edges: list) -> int:
    factor = Factor.from_dataframe(spark.createDataFrame(edges, "src bigint, dst bigint"), ["src", "dst"],
                                   "counting", value=None, name="edge")
    with evaluate(query, {"edge": factor}) as result:
        return result.scalar()


@pytest.mark.parametrize("name, query", [("email-Eu-core.txt.gz", TRIANGLE),
                                         ("p2p-Gnutella31.txt.gz", CLIQUE4)])
def test_graph_counts_follow_inserts_and_deletes(spark, name, query):
    df, edges = simple_graph(spark, name)
    rng = random.Random(3)
    factor = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    nodes = sorted({u for e in edges for u in e})
    current = set(edges)
    with maintain(query, {"edge": factor}) as mq:
        assert mq.scalar() == static_count(spark, query, edges)
        for _ in range(2):
            deletes = rng.sample(sorted(current), 25)
            inserts = set()
            while len(inserts) < 25:
                e = (rng.choice(nodes), rng.choice(nodes))
                if e[0] != e[1] and e not in current:
                    inserts.add(e)
            rows = [(u, v, -1) for u, v in deletes] + [(u, v, 1) for u, v in sorted(inserts)]
            before = mq.scalar()
            change = mq.apply({"edge": spark.createDataFrame(rows, "src bigint, dst bigint, value bigint")})
            current = (current - set(deletes)) | inserts
            expected = static_count(spark, query, sorted(current))
            assert mq.scalar() == expected
            assert sum(r.diff for r in change.collect()) == expected - before
    df.unpersist()


def test_matrix_product_follows_value_changes(spark):
    a = read_matrix_market(str(DATA / "bcsstk21.mtx"))
    b = read_matrix_market(str(DATA / "bcsstm21.mtx"))
    a_np = sp.csr_matrix(scipy.io.mmread(str(DATA / "bcsstk21.mtx"))).toarray()
    b_np = sp.csr_matrix(scipy.io.mmread(str(DATA / "bcsstm21.mtx"))).toarray()
    rows, cols = a.variables
    query = "C(i, k) := A(i, j), B(j, k)"
    rng = np.random.default_rng(5)

    def check(mq):
        got = np.zeros_like(a_np)
        for r in mq.answer().df.collect():
            got[r[0], r[1]] = r[2]  # read_matrix_market numbers rows and columns from 0
        expected = a_np @ b_np
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())

    with maintain(query, {"A": a, "B": b}) as mq:
        check(mq)
        for _ in range(2):
            # change existing entries of A (the delta is the difference), add new ones, delete some of B
            nz = np.argwhere(a_np != 0)
            pick = nz[rng.choice(len(nz), 30, replace=False)]
            new_values = rng.normal(size=30)
            delta_a = [(int(i), int(j), float(v - a_np[i, j])) for (i, j), v in zip(pick, new_values)]
            for (i, j), v in zip(pick, new_values):
                a_np[i, j] = v
            nzb = np.argwhere(b_np != 0)
            gone = nzb[rng.choice(len(nzb), 10, replace=False)]
            delta_b = [(int(i), int(j), float(-b_np[i, j])) for i, j in gone]
            for i, j in gone:
                b_np[i, j] = 0.0
            mq.apply({"A": factor_of(delta_a, [rows, cols], "real"), "B": factor_of(delta_b, [rows, cols], "real")})
            check(mq)


def test_durable_state_reopens_and_refuses_a_batch_twice(spark, tmp_path):
    path = str(tmp_path / "state")
    edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "counting")
    with maintain(TRIANGLE, {"edge": edge}, state=path) as mq:
        mq.apply({"edge": factor_of([(1, 3, 1)], ["src", "dst"], "counting")}, version=1)
        assert mq.scalar() == 1
    with pytest.raises(StateDirectoryError):
        maintain(TRIANGLE, {"edge": edge}, state=path)  # a state is there: reopen it instead
    with MaintainedQuery.open(path) as again:
        assert (again.version, again.scalar()) == (1, 1)
        with pytest.raises(BatchAlreadyAppliedError):
            again.apply({"edge": factor_of([(1, 3, 1)], ["src", "dst"], "counting")}, version=1)
        again.apply({"edge": factor_of([(0, 1, 1), (0, 2, 1)], ["src", "dst"], "counting")}, version=2)
        assert again.scalar() == 2
    with MaintainedQuery.open(path) as third:
        assert (third.version, third.scalar()) == (2, 2)
        assert sorted(map(tuple, third.factor("edge").df.collect())) == [
            (0, 1, 1), (0, 2, 1), (1, 2, 1), (1, 3, 1), (2, 3, 1)]


@pytest.mark.parametrize("where", ["rules", "commit"])
def test_an_interrupted_apply_leaves_the_previous_version(spark, tmp_path, monkeypatch, where):
    import faq.incremental.maintained as maintained_module
    import faq.incremental.store as store_module

    path = str(tmp_path / "state")
    edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1)], ["src", "dst"], "counting")
    mq = maintain(TRIANGLE, {"edge": edge}, state=path)
    mq.apply({"edge": factor_of([(3, 4, 1)], ["src", "dst"], "counting")})

    def fail(*args, **kwargs):
        raise RuntimeError("injected failure")

    if where == "rules":
        monkeypatch.setattr(maintained_module, "run_rules", fail)
    else:  # the data files are written, the manifest is not replaced
        monkeypatch.setattr(store_module.os, "replace", fail)
    with pytest.raises(RuntimeError, match="injected"):
        mq.apply({"edge": factor_of([(2, 4, 1), (1, 4, 1)], ["src", "dst"], "counting")})
    monkeypatch.undo()
    # The object and the saved state are both still at version 1.
    assert (mq.version, mq.scalar()) == (1, 1)
    mq.close()
    with MaintainedQuery.open(path) as again:
        assert (again.version, again.scalar()) == (1, 1)
        # it goes on from there; the writer's recovery sweeps what the failed apply wrote (reading deletes nothing)
        again.apply({"edge": factor_of([(2, 4, 1), (1, 4, 1)], ["src", "dst"], "counting")}, version=2)
        named = {f for entry in again.store.manifest()["relations"].values() for f in entry["files"]}
        assert set(os.listdir(os.path.join(path, "data"))) == named
        assert again.scalar() == 4
