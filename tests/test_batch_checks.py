"""A bad batch is refused before it touches a maintained state (issue 48, item 2).

For every kind of maintained object -- queries, tracked motifs, models,
fixpoints, trusses, as-of joins (view and locked) -- a batch with a column of
the wrong type, NaN, a null, a fractional or out-of-range id, or a bad
multiplicity is an :class:`~faq.errors.InvalidBatchError` naming the relation,
the column, the problem and the first offending row and value; the answer in
memory is unchanged, and a durable state reopens exact and still answers
right after a good batch.  The states that need Spark to be made are made
once per module and reopened from copies (no Spark per test).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from faq.errors import InvalidBatchError, InvalidDeltaError
from faq.incremental import batch_check
from tests.conftest import search_settings

NAN = float("nan")
TRIANGLES = "count() := edge(a,b), edge(b,c), edge(a,c)"


def same(a, b) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def refused(apply, bad, problem, column, row, value, relation="edge"):
    """``apply(bad)`` raises INVALID_BATCH with these parameters; returns the error."""
    with pytest.raises(InvalidBatchError) as caught:
        apply(bad)
    err = caught.value
    assert err.error_class == "INVALID_BATCH" and isinstance(err, InvalidDeltaError)
    p = err.parameters
    assert (p["problem"], p["column"], p["row"], p["relation"]) == (problem, column, row, relation), p
    assert same(p["value"], value), p
    return err


def copy_state(saved, tmp_path, name="state"):
    target = tmp_path / name
    shutil.copytree(saved, target)
    return str(target)


# Edge change rows (src, dst, diff) that every edge target refuses: (id, batch, problem, column, row, value).
EDGE_CASES = [
    ("type", pa.table({"src": ["a", "b"], "dst": [2, 3], "diff": [1, 1]}), "type", "src", 0, "a"),
    ("mixed tuples", [(1, 2, 1), ("a", 3, 1)], "type", "src", 1, "a"),
    ("NaN", pa.table({"src": [1, 2], "dst": [3.0, NAN], "diff": [1, 1]}), "NaN", "dst", 1, NAN),
    ("null", pa.table({"src": [1, 2], "dst": pa.array([3, None], pa.int64()), "diff": [1, 1]}), "null", "dst", 1,
     None),
    ("fraction", pa.table({"src": [1.0, 2.5], "dst": [3, 4], "diff": [1, 1]}), "fraction", "src", 1, 2.5),
    ("range", pa.table({"src": pa.array([1, 2**63], pa.uint64()), "dst": [3, 4], "diff": [1, 1]}), "range", "src",
     1, 2**63),
    ("range tuples", [(1, 2, 1), (2**64, 3, 1)], "range", "src", 1, 2**64),
    ("infinite id", pa.table({"src": [1.0, math.inf], "dst": [3, 4], "diff": [1, 1]}), "range", "src", 1, math.inf),
    ("multiplicity", pa.table({"src": [1, 2], "dst": [3, 4], "diff": [1, 2]}), "multiplicity", "diff", 1, 2),
    ("zero multiplicity", [(1, 2, 1), (2, 3, 0)], "multiplicity", "diff", 1, 0),
]
EDGE_IDS = [c[0] for c in EDGE_CASES]


# --- queries -----------------------------------------------------------------------------------------


def test_the_issue_reproduction_is_refused_and_the_state_reopens_in_a_new_process(spark, tmp_path):
    import faq
    from faq.incremental.maintained import MaintainedQuery

    path = str(tmp_path / "s1")
    q = faq.maintain(TRIANGLES, edge=[(1, 2), (2, 3)], state=path)
    q.apply(edge=[(1, 3, 1)])
    refused(lambda b: q.apply(edge=b), [("a", "b", 1)], "type", "x1", 0, "a")
    refused(lambda b: q.apply(edge=b), [(1, NAN, 1)], "NaN", "x2", 0, NAN)
    assert (q.scalar(), q.version) == (1, 1)
    q.close()
    script = f"from faq.incremental.maintained import MaintainedQuery as M; q = M.open({path!r}); " \
             "print(q.scalar(), q.version)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "1"]
    again = MaintainedQuery.open(path)
    assert again.apply(edge=[(2, 4, 1), (3, 4, 1)]).collect()[0].diff == 1  # 2-3-4 closed
    assert (again.scalar(), again.version) == (2, 2)
    again.close()


def test_a_spark_dataframe_of_string_ids_is_refused(spark, tmp_path):
    import faq
    from faq.incremental.maintained import MaintainedQuery

    path = str(tmp_path / "s")
    with faq.maintain(TRIANGLES, edge=[(1, 2), (2, 3)], state=path) as q:
        bad = spark.createDataFrame([("1", "3", 1)], "x1 string, x2 string, value bigint")
        refused(lambda b: q.apply(edge=b), bad, "type", "x1", 0, "1")
        assert q.version == 0
    with MaintainedQuery.open(path) as again:
        assert again.apply(edge=spark.createDataFrame([(1, 3, 1)], "x1 bigint, x2 bigint, value bigint")) \
            .collect()[0].diff == 1


@pytest.fixture(scope="module")
def saved_query(spark, tmp_path_factory):
    """A durable triangle count over 1->2->3 (count 0, version 0), closed: tests open copies."""
    import faq

    path = tmp_path_factory.mktemp("query") / "state"
    faq.maintain(TRIANGLES, edge=[(1, 2), (2, 3)], state=str(path)).close()
    return path


QUERY_CASES = [
    ("type", [("a", "b", 1)], "type", "x1", 0, "a"),
    ("mixed tuples", [(1, 3, 1), (2, "x", 1)], "type", "x2", 1, "x"),
    ("NaN id", [(1, 3, 1), (1, NAN, 1)], "NaN", "x2", 1, NAN),
    ("null id", [(1, None, 1)], "null", "x2", 0, None),
    ("fraction id", [(1.5, 3, 1)], "fraction", "x1", 0, 1.5),
    ("range id", [(1, 2**63, 1)], "range", "x2", 0, 2**63),
    ("fraction value", [(1, 3, 0.5)], "fraction", "value", 0, 0.5),
    ("NaN value", [(1, 3, NAN)], "NaN", "value", 0, NAN),
    ("a row without its value", [(1, 3, 1), (3, 4)], "null", "value", 1, None),
    ("arrow uint64 id", pa.table({"x1": pa.array([2**64 - 1], pa.uint64()), "x2": [3], "value": [1]}), "range", "x1",
     0, 2**64 - 1),
]


@pytest.mark.parametrize("case", QUERY_CASES, ids=[c[0] for c in QUERY_CASES])
def test_a_maintained_query_refuses_a_bad_batch(saved_query, tmp_path, case):
    from faq.incremental.maintained import MaintainedQuery

    _, bad, problem, column, row, value = case
    path = copy_state(saved_query, tmp_path)
    with MaintainedQuery.open(path) as q:
        q.apply(edge=[(1, 3, 1)])
        err = refused(lambda b: q.apply(edge=b), bad, problem, column, row, value)
        assert err.parameters["target"] == "a maintained query"
        assert (q.scalar(), q.version) == (1, 1)
    with MaintainedQuery.open(path) as again:
        assert (again.scalar(), again.version) == (1, 1)
        again.apply(edge=[(1, 3, -1)])
        assert (again.scalar(), again.version) == (0, 2)


# --- tracked motifs ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_tracker(spark, tmp_path_factory):
    """A durable tracker of triangles a->b, b->c, a->c over 1->2->3 (count 0), closed."""
    import faq

    path = tmp_path_factory.mktemp("tracker") / "state"
    graph = spark.createDataFrame([(1, 2), (2, 3)], "src bigint, dst bigint")
    faq.track(graph, "(a)->(b); (b)->(c); (a)->(c)", state=str(path)).close()
    return path


@pytest.mark.parametrize("case", EDGE_CASES, ids=EDGE_IDS)
def test_a_tracker_refuses_a_bad_batch(saved_tracker, tmp_path, case):
    from faq.graphs.track import MotifTracker

    _, bad, problem, column, row, value = case
    path = copy_state(saved_tracker, tmp_path)
    with MotifTracker.open(path) as tracker:
        assert tracker.apply([(1, 3, 1)]).count == 1
        refused(tracker.apply, bad, problem, column, row, value)
        assert (tracker.count, tracker.version) == (1, 1)
    with MotifTracker.open(path) as again:
        assert (again.count, again.version) == (1, 1)
        assert again.apply(pa.table({"src": [1.0], "dst": [3.0], "diff": [-1]})).count == 0  # whole floats: fine


# --- models ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_model(spark, tmp_path_factory):
    """A durable regression of orders.amount on items.qty over three orders, closed."""
    import faq

    path = tmp_path_factory.mktemp("model") / "state"
    orders = pd.DataFrame({"o": [1, 2, 3], "amount": [10.0, 20.0, 30.0]})
    items = pd.DataFrame({"o": [1, 2, 3], "qty": [2.0, 4.5, 7.0]})
    faq.linear_regression("orders(o), items(o)", target="orders.amount", features=["items.qty"], orders=orders,
                          items=items, maintained=True, state=str(path)).close()
    return path


MODEL_CASES = [
    ("type key", pd.DataFrame({"o": ["a"], "qty": [1.0]}), "type", "o", 0, "a"),
    ("type feature", pd.DataFrame({"o": [1], "qty": ["x"]}), "type", "qty", 0, "x"),
    ("fraction key", pd.DataFrame({"o": [1.5], "qty": [1.0]}), "fraction", "o", 0, 1.5),
    ("range key", pd.DataFrame({"o": [1e30], "qty": [1.0]}), "range", "o", 0, 1e30),
    ("infinite feature", pd.DataFrame({"o": [1], "qty": [math.inf]}), "infinite", "qty", 0, math.inf),
    ("fraction multiplicity", pd.DataFrame({"o": [1], "qty": [2.0], "diff": [0.5]}), "fraction", "diff", 0, 0.5),
    ("arrow range key", pa.table({"o": pa.array([2**64 - 1], pa.uint64()), "qty": [1.0]}), "range", "o", 0,
     2**64 - 1),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_a_maintained_model_refuses_a_bad_batch(saved_model, tmp_path, case):
    from faq.learning.maintained import MaintainedModel

    _, bad, problem, column, row, value = case
    path = copy_state(saved_model, tmp_path)
    with MaintainedModel.open(path) as model:
        before = (model.covariance.count, model.coefficients, model.version)
        refused(lambda b: model.apply(items=b), bad, problem, column, row, value, relation="items")
        assert (model.covariance.count, model.coefficients, model.version) == before
    with MaintainedModel.open(path) as again:
        assert (again.covariance.count, again.coefficients, again.version) == before
        again.apply(items=pd.DataFrame({"o": [1, 1], "qty": [2.0, 3.0], "diff": [-1, 1]}))
        assert round(again.coefficients["items.qty"], 6) == 4.897959  # the docstring's numbers


def test_a_model_still_leaves_out_rows_with_a_null_and_says_so(saved_model, tmp_path):
    """Documented: a null key or feature drops the row (info["dropped"]); it is no refusal."""
    from faq.learning.maintained import MaintainedModel

    with MaintainedModel.open(copy_state(saved_model, tmp_path)) as model:
        change = model.apply(items=pd.DataFrame({"o": [1.0, None], "qty": [3.0, 1.0]}))
        assert change.info["dropped"] == {"items": 1} and model.rows == 4  # order 1 has a second item


# --- fixpoints ---------------------------------------------------------------------------------------


FIXPOINT_CASES = [
    ("type", pa.table({"src": ["a"], "dst": [4], "diff": [1]}), "type", "src", 0, "a"),
    ("NaN id", pa.table({"src": [1, 3], "dst": [4.0, NAN], "diff": [1, 1]}), "NaN", "dst", 1, NAN),
    ("null id", pa.table({"src": [1], "dst": pa.array([None], pa.int64()), "diff": [1]}), "null", "dst", 0, None),
    ("fraction id", pa.table({"src": [1.5], "dst": [4], "diff": [1]}), "fraction", "src", 0, 1.5),
    ("range id", pa.table({"src": pa.array([2**63], pa.uint64()), "dst": [4], "diff": [1]}), "range", "src", 0,
     2**63),
    ("NaN weight", pa.table({"src": [1], "dst": [4], "weight": [NAN], "diff": [1]}), "NaN", "weight", 0, NAN),
    ("fraction diff", pa.table({"src": [1], "dst": [4], "diff": [0.5]}), "fraction", "diff", 0, 0.5),
    ("pandas string id", pd.DataFrame({"src": [1], "dst": ["x"], "diff": [1]}), "type", "dst", 0, "x"),
]


@pytest.mark.parametrize("case", FIXPOINT_CASES, ids=[c[0] for c in FIXPOINT_CASES])
def test_a_maintained_fixpoint_refuses_bad_change_rows(tmp_path, case):
    from faq.recursive.maintained import MaintainedFixpoint

    _, bad, problem, column, row, value = case
    path = str(tmp_path / "paths")
    with MaintainedFixpoint.paths([(1, 2, 5.0), (2, 3, 1.0)], source=1, path=path) as m:
        m.insert([(1, 3, 2.0)])
        before = m.table()
        refused(m.apply, bad, problem, column, row, value)
        assert m.table().equals(before) and m.version == 1
    with MaintainedFixpoint.open(path) as again:
        assert again.table().equals(before) and again.version == 1
        again.apply(pa.table({"src": [3], "dst": [4], "weight": [1.0], "diff": [1]}))
        assert again.value(4) == 3.0


@pytest.mark.parametrize("bad, problem, column, row, value", [
    ([(1, 4, 1.0), ("a", 4, 1.0)], "type", "src", 1, "a"),
    ([(1, 4, NAN)], "NaN", "weight", 0, NAN),
    ([(1, 2**64, 1.0)], "range", "dst", 0, 2**64),
    ([(1, 4.5, 1.0)], "fraction", "dst", 0, 4.5),
])
def test_a_fixpoint_insert_of_bad_tuples_is_refused(bad, problem, column, row, value):
    from faq.recursive.maintained import MaintainedFixpoint

    m = MaintainedFixpoint.paths([(1, 2, 5.0), (2, 3, 1.0)], source=1)
    refused(m.insert, bad, problem, column, row, value)
    refused(m.delete, [(1, 2.5)], "fraction", "dst", 0, 2.5)
    assert m.version == 0 and m.value(3) == 6.0
    assert m.insert([(1, 3, 2.0)]).rows() == [(3, 6.0, 1, 2.0)]


# --- trusses -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", EDGE_CASES, ids=EDGE_IDS)
def test_a_maintained_truss_refuses_a_bad_batch(tmp_path, case):
    from faq.graphs.maintained_truss import MaintainedTruss

    _, bad, problem, column, row, value = case
    path = str(tmp_path / "truss")
    with MaintainedTruss([(1, 2), (2, 3), (1, 3), (3, 4)], path=path) as t:
        t.apply([(1, 4, 1)])
        before = (t.counts, t.table())
        refused(t.apply, bad, problem, column, row, value)
        assert (t.counts, t.table()) == before and t.version == 1
    with MaintainedTruss.open(path) as again:
        assert (again.counts, again.table()) == before and again.version == 1
        again.apply([(2, 4, 1)])
        assert again.counts == {4: 6}


# --- as-of joins -------------------------------------------------------------------------------------


LEFT = pa.table({"t": [1, 5], "k": ["a", "a"], "q": [10, 20]})
RIGHT = pa.table({"t": [0], "k": ["a"], "p": [100.0]})
ASOF_CASES = [
    ("float time", "left", pa.table({"t": [6.5], "k": ["a"], "q": [1]}), "fraction", "t", 0, 6.5),
    ("NaN time", "right", pa.table({"t": [NAN], "k": ["a"], "p": [1.0]}), "NaN", "t", 0, NAN),
    ("string time", "right", pa.table({"t": ["3"], "k": ["a"], "p": [1.0]}), "type", "t", 0, "3"),
    ("int key into string", "right", pa.table({"t": [3], "k": [7], "p": [1.0]}), "type", "k", 0, 7),
    ("range value", "left", pa.table({"t": [6], "k": ["a"], "q": pa.array([2**63], pa.uint64())}), "range", "q", 0,
     2**63),
    ("multiplicity", "left", pa.table({"t": [6], "k": ["a"], "q": [1], "diff": [2]}), "multiplicity", "diff", 0, 2),
]


@pytest.mark.parametrize("mode", ["view", "locked"])
@pytest.mark.parametrize("case", ASOF_CASES, ids=[c[0] for c in ASOF_CASES])
def test_a_maintained_asof_join_refuses_a_bad_batch(tmp_path, mode, case):
    from faq.asof import open_join
    from faq.asof.locked import LockedAsof
    from faq.asof.maintained import MaintainedAsof

    _, side, bad, problem, column, row, value = case
    path = str(tmp_path / "asof")
    join = MaintainedAsof(LEFT, RIGHT, on="t", by="k", path=path) if mode == "view" else \
        LockedAsof(LEFT, RIGHT, on="t", by="k", watermark=2, path=path)
    join.apply(right=pa.table({"t": [2], "k": ["a"], "p": [101.0]}))
    before = join.table()
    refused(lambda b: join.apply(**{side: b}), bad, problem, column, row, value, relation=side)
    assert join.table().equals(before) and join.version == 1 and not getattr(join, "broken", None)
    join.close()
    again = open_join(path)
    assert again.table().equals(before) and again.version == 1
    again.apply(left=pa.table({"t": [6.0], "k": ["a"], "q": [3]}), **({"watermark": 7} if mode == "locked" else {}))
    assert again.table().to_pylist()[-1] == {"t": 6, "k": "a", "q": 3, "p": 101.0}
    again.close()


# --- the checker itself ------------------------------------------------------------------------------


@search_settings(100)
@given(st.lists(st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True)),
                min_size=1, max_size=30))
def test_ids_are_taken_exactly_when_every_one_is_a_whole_int64(values):
    """Python numbers as one Arrow column: accepted iff each is a whole number within int64, and then equal."""
    whole = all(not isinstance(v, float) or (math.isfinite(v) and v == int(v)) for v in values)
    inside = all(-(2**63) <= int(v) < 2**63 for v in values if not isinstance(v, float) or math.isfinite(v))
    try:
        column = batch_check.arrow_column(values, "src", relation="edge", target="a test")
        table = batch_check.check_batch(pa.table({"src": column}), {"src": batch_check.ID}, relation="edge",
                                        target="a test")
    except InvalidBatchError as err:
        assert not (whole and inside)
        bad = values[err.parameters["row"]]
        assert same(float(bad), float(err.parameters["value"])) or bad == err.parameters["value"]
        return
    assert whole and inside
    assert table.column("src").type == pa.int64()
    assert table.column("src").to_pylist() == [int(v) for v in values]


def test_a_batch_of_the_states_own_types_is_not_copied():
    """The check costs nothing when a column already has the state's type (the common batch)."""
    table = pa.table({"src": np.arange(5), "dst": np.arange(5), "diff": np.ones(5, dtype=np.int64)})
    checked = batch_check.check_batch(table, batch_check.edge_spec(), relation="edge", target="a test")
    assert checked is table
