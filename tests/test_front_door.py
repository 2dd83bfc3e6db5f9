"""``import faq``: every job through the front door, with DataFrames, Factors and paths."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse

import faq
from faq.errors import FAQTypeError, MissingColumnError
from tests.brute_force import brute_force

pytestmark = pytest.mark.usefixtures("spark")

EDGES = [(1, 2), (2, 3), (1, 3), (3, 4), (4, 1), (2, 4), (5, 5), (1, 2)]  # a self-loop and a repeat


@pytest.fixture
def edges(spark):
    return spark.createDataFrame(EDGES, ["src", "dst"])


def undirected_triangles(pairs) -> int:
    g = nx.Graph((a, b) for a, b in pairs if a != b)
    return sum(nx.triangles(g).values()) // 3


class FakeGraphFrame:
    """What GraphFrames offers: .vertices and .edges DataFrames (no dependency on the package)."""

    def __init__(self, edges):
        self.edges = edges
        self.vertices = edges.selectExpr("src AS id").distinct()


def test_triangles_from_a_dataframe_a_graphframe_a_factor_and_a_path(edges, tmp_path):
    expected = undirected_triangles(EDGES)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in EDGES))
    factor = faq.read_edge_list(str(path))
    for given in (edges, FakeGraphFrame(edges), factor, str(path)):
        assert faq.count_triangles(given).count == expected, type(given)
    # one default everywhere: undirected, as the faq command
    directed = faq.count_triangles(edges, directed=True)
    assert directed.directed and directed.count == sum(
        1 for a, b in set(EDGES) for c in range(6) if a != b and (a, c) in set(EDGES) and (b, c) in set(EDGES)
        and c not in (a, b)
    )


def test_query_with_dataframes_and_free_variables(spark):
    weights = spark.createDataFrame([(1, 2, 0.5), (2, 3, 2.0), (1, 3, 4.0)], ["a", "b", "value"])
    with faq.query("q(x, z) := w(x, y), w(y, z)", w=weights) as result:
        got = {(r["x"], r["z"]): r["value"] for r in result.df.collect()}
        assert result.factor.semiring.name == "real"  # from the double value column
    rows = [(1, 2, 0.5), (2, 3, 2.0), (1, 3, 4.0)]
    assert got == brute_force([("w", ["x", "y"]), ("w", ["y", "z"])], {"w": rows}, ["x", "z"], "real", [1, 2, 3])


def test_plan_explain_and_running_that_plan(edges, capsys):
    text = "count() := e(a,b), e(a,c), e(b,c)"
    the_plan = faq.plan(text, e=edges)
    assert isinstance(the_plan, faq.Plan) and the_plan.steps[0].strategy.name == "broadcast"
    explained = faq.explain(text, e=edges)  # a value, printed by whoever wants the text; the repr is one line
    assert explained == the_plan and "strategy broadcast" in str(explained) and "\n" not in repr(explained)
    assert capsys.readouterr().out == ""
    with faq.query(text, e=edges, plan=the_plan) as result:
        assert result.plan is the_plan
        counted = result.scalar()
    # a DataFrame's rows each count one: the repeated edge (1, 2) has value 2
    rows = [(a, b, 1) for a, b in EDGES]
    atoms = [("e", ["a", "b"]), ("e", ["a", "c"]), ("e", ["b", "c"])]
    assert counted == brute_force(atoms, {"e": rows}, [], "counting", range(1, 6))[()] == 4


def test_motifs_count_and_list(edges):
    pattern = "(a)->(b); (b)->(c); !(a)->(c)"
    counted = faq.motifs(edges, pattern, count=True)
    with faq.motifs(edges, pattern) as listing:  # cached until the with ends
        rows = {tuple(r) for r in listing.df.collect()}
        assert listing.rows == len(rows) and listing.df.is_cached
    assert not listing.df.is_cached
    simple = {(a, b) for a, b in EDGES if a != b}
    expected = {(a, b, c) for a, b in simple for b2, c in simple
                if b2 == b and len({a, b, c}) == 3 and (a, c) not in simple}
    assert rows == expected and counted.count == len(expected)


def test_matrix_chain_of_dataframes(spark):
    a = scipy.sparse.random(6, 5, density=0.5, random_state=1, format="coo")
    b = scipy.sparse.random(5, 4, density=0.5, random_state=2, format="coo")

    def frame(m):
        return spark.createDataFrame([(int(i), int(j), float(v)) for i, j, v in zip(m.row, m.col, m.data)],
                                     ["row", "col", "value"])

    with faq.matrix_chain([frame(a), frame(b)]) as product:
        assert product.df.columns == ["row", "col", "value"]
        got = np.zeros((6, 4))
        for r in product.df.collect():
            got[r["row"], r["col"]] = r["value"]
    np.testing.assert_allclose(got, (a @ b).toarray(), rtol=1e-12)


def test_maintain_with_keyword_deltas(spark):
    edge = spark.createDataFrame([(1, 2), (2, 3)], ["src", "dst"])
    triangles = faq.maintain("count() := edge(a,b), edge(b,c), edge(a,c)", edge=edge)
    try:
        assert triangles.scalar() == 0
        change = triangles.apply(edge=[(1, 3, 1)])
        assert change.total == 1 and triangles.scalar() == 1
    finally:
        triangles.close()


def test_paths_and_components_from_dataframes(spark):
    weighted = spark.createDataFrame([(1, 2, 1.5), (2, 3, 1.0), (1, 3, 5.0), (7, 8, 1.0)],
                                     ["src", "dst", "weight"])
    g = nx.DiGraph()
    g.add_weighted_edges_from([(1, 2, 1.5), (2, 3, 1.0), (1, 3, 5.0), (7, 8, 1.0)])
    with faq.shortest_paths(weighted, 1) as dist:
        assert {r[0]: r[1] for r in dist.factor.df.collect()} == nx.single_source_dijkstra_path_length(g, 1)
    with faq.reachability(weighted, 1) as reached:
        assert {r[0] for r in reached.factor.df.collect()} == {1, 2, 3}
    with faq.connected_components(weighted) as components:
        assert {r[0]: r[1] for r in components.factor.df.collect()} == {1: 1, 2: 1, 3: 1, 7: 7, 8: 7}


def test_one_shot_fixpoints_are_solved_on_the_driver_while_they_fit(spark):
    """The same answers on both placements; the result says where it was solved and why."""
    weighted = spark.createDataFrame([(1, 2, 1.5), (2, 3, 1.0), (1, 3, 5.0), (7, 8, 1.0), (9, 9, 2.0)],
                                     ["src", "dst", "weight"])
    answers = {}
    for budget in (None, "100"):  # the session's driver budget, then one no edge index fits
        if budget:
            spark.conf.set("spark.faq.localMemory", budget)
        try:
            with faq.widest_paths(weighted, 1) as widest, faq.connected_components(weighted) as parts:
                where = {widest.placement, parts.placement, widest.to_dict()["placement"]}
                assert where == {"driver" if budget is None else "executors"}, widest.placement_reason
                assert ("exceed" in parts.placement_reason) == (budget is not None)
                answers[budget] = (sorted(map(tuple, widest.df.collect())), sorted(map(tuple, parts.df.collect())))
        finally:
            spark.conf.unset("spark.faq.localMemory")
    assert answers[None] == answers["100"]
    assert answers[None] == ([(1, math.inf), (2, 1.5), (3, 5.0)], [(1, 1), (2, 1), (3, 1), (7, 7), (8, 7), (9, 9)])


def test_bad_inputs_say_what_was_expected(spark):
    with pytest.raises(FAQTypeError, match="GraphFrame"):
        faq.count_triangles(42)
    with pytest.raises(MissingColumnError):
        faq.count_triangles(spark.createDataFrame([(1, 2)], ["a", "b"]))
    with pytest.raises(FAQTypeError, match="row index, a column index"):
        faq.matrix_chain([spark.createDataFrame([(1, 2, 3, 4.0)], ["a", "b", "c", "value"])])


def test_edges_as_pandas_or_arrow_are_counted_on_the_driver():
    """Edges given as a pandas DataFrame or an Arrow table (src, dst) are held on the driver and give the
    same counts as the edge list's path (they were refused: "must be a DataFrame ..., got DataFrame")."""
    import gzip
    from pathlib import Path

    import numpy as np
    import pandas as pd
    import pyarrow as pa

    import faq

    path = Path(__file__).parent / "data" / "email-Eu-core.txt.gz"
    with gzip.open(path, "rt") as handle:
        pairs = np.loadtxt((line for line in handle if not line.startswith("#")), dtype=np.int64, ndmin=2)
    frame = pd.DataFrame({"src": pairs[:, 0], "dst": pairs[:, 1]})
    expected = faq.count_triangles(str(path)).count
    assert expected == 105461  # SNAP's published count
    assert faq.count_triangles(frame).count == expected
    assert faq.count_triangles(pa.Table.from_pandas(frame)).count == expected
    motif = "(a)->(b); (b)->(c); !(a)->(c)"
    assert faq.motifs(frame, motif, count=True).count == faq.motifs(str(path), motif, count=True).count


def test_one_api_every_input_kind_and_the_result_shape(tmp_path):
    """The rules of docs/design.md, "One API": each graph job takes Spark, pandas, Arrow, tuples and
    paths with the same answer; factors in a mapping may be named like keywords; placement= is
    everywhere and honoured; state= keeps a maintained answer (path=, its old name, warns); every
    result has .df, .plan, explain() (a value), close()/with and a one-line repr."""
    import warnings

    import pandas as pd
    import pyarrow as pa

    spark = faq.get_session()
    rows = [(1, 2), (2, 3), (1, 3), (3, 4)]
    frame = pd.DataFrame(rows, columns=["src", "dst"])
    path = tmp_path / "edges.txt"
    path.write_text("# a comment line\n" + "\n".join(f"{a}\t{b}" for a, b in rows) + "\n")
    kinds = {"spark": spark.createDataFrame(frame), "pandas": frame, "arrow": pa.Table.from_pandas(frame),
             "tuples": rows, "path": str(path)}
    for kind, edges in kinds.items():
        assert faq.count_triangles(edges).count == 1, kind
        assert faq.motifs(edges, "(a)->(b); (b)->(c)", count=True).count == 3, kind  # 1-2-3, 2-3-4, 1-3-4
        with faq.shortest_paths(edges, 1, placement="driver") as paths:
            assert dict(map(tuple, paths.df.collect())) == {1: 0.0, 2: 1.0, 3: 1.0, 4: 2.0}, kind
        if kind != "path":  # a factor's path is read by its suffix (.txt: an edge list)
            assert faq.query("count() := e(a,b), e(b,c)", e=edges).scalar() == 3, kind
    assert faq.query("count() := plan(a,b), progress(b,c)", {"plan": rows, "progress": rows}).scalar() == 3
    with pytest.raises(faq.FAQError, match="both"):
        faq.query("count() := e(a,b)", {"e": rows}, e=rows)

    # placement= reaches the plan, and a wrong one is refused by name
    assert {s.placement for s in faq.plan("count() := e(a,b), e(b,c)", e=rows, placement="executors").steps} == \
        {"executors"}
    with pytest.raises(faq.FAQError, match="placement"):
        faq.count_triangles(rows, placement="gpu")

    with faq.maintain("count() := e(a,b), e(b,c)", e=rows, state=str(tmp_path / "kept")) as kept:
        assert kept.apply(e=[(3, 1, 1)]).version == 1 and kept.path == str(tmp_path / "kept")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        faq.track(rows, "(a)->(b)", path=str(tmp_path / "old")).close()
    assert any(issubclass(w.category, DeprecationWarning) and "state=" in str(w.message) for w in caught)

    results = [faq.query("count() := e(a,b), e(b,c)", e=rows), faq.count_triangles(rows),
               faq.motifs(rows, "(a)->(b)", count=True), faq.motifs(rows, "(a)->(b)"),
               faq.track(rows, "(a)->(b)"), faq.shortest_paths(rows, 1), faq.truss(rows),
               faq.maintain("count() := e(a,b)", e=rows), faq.truss(rows, maintained=True)]
    for result in results:
        with result:
            plan = result.explain()
            assert plan is not None and str(plan) and str(result.plan) == str(plan), type(result)
            assert "\n" not in repr(result) and len(repr(result)) < 200, repr(result)
            assert result.df.count() >= 1, type(result)


def test_every_job_reports_events_of_one_type(tmp_path):
    """progress= receives ProgressEvents from every kind of job: steps of a query, batches of a maintained
    answer, the lines of a truss, an as-of join and a fixpoint (they were strings)."""
    import pandas as pd

    rows = [(1, 2), (2, 3), (1, 3), (3, 4)]
    events = []
    faq.query("count() := e(a,b), e(b,c)", e=rows, progress=events.append)
    faq.count_triangles(rows, progress=events.append)
    faq.truss(rows, progress=events.append)
    faq.shortest_paths(rows, 1, progress=events.append).close()
    faq.asof_join(pd.DataFrame({"t": [2], "k": [1]}), pd.DataFrame({"t": [1], "k": [1], "p": [5.0]}), on="t", by="k",
                  progress=events.append)
    with faq.maintain("count() := e(a,b)", e=rows, progress=events.append) as kept:
        kept.apply(e=[(4, 5, 1)])
    kinds = {type(event).__name__ for event in events}
    assert all(isinstance(event, faq.ProgressEvent) for event in events), [type(e) for e in events]
    assert {"StepEvent", "BatchEvent", "NoteEvent"} <= kinds
    assert all(isinstance(event.kind, str) and isinstance(event.description, str) and str(event) for event in events)
