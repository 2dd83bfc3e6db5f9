"""The public jobs as a Spark Connect client (run by tests/test_connect.py in a child process).

Not collected by the suite itself (the name does not start with ``test_``):
tests/test_connect.py starts a server with ``faq serve`` and runs this file
with ``FAQ_TEST_REMOTE`` set, so conftest's ``spark`` fixture is a Connect
client and every ``get_session()`` of faq answers it.  Any path that still
touched ``sparkContext``, an RDD or the JVM would fail here (a Connect
session has none of them).  Answers are checked against the same oracles
as the classic tests: SNAP's counts, networkx, scipy.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from faq.spark import is_connect

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.skipif(not os.environ.get("FAQ_TEST_REMOTE"), reason="needs FAQ_TEST_REMOTE (a server)")


def test_the_session_is_connect_and_has_no_spark_context(spark):
    from faq.spark import get_session

    assert is_connect(spark) and get_session() is spark
    with pytest.raises(Exception):
        spark.sparkContext  # noqa: B018 - what Connect lacks, and why faq must not need it


def test_triangles_equal_snap_counts(spark):
    from faq.graphs import triangle_count
    from faq.io import read_edge_list

    edges = read_edge_list(str(DATA / "email-Eu-core.txt.gz"))
    assert is_connect(edges.df.sparkSession)
    assert triangle_count(edges, directed=False).count == 105461  # SNAP's published count


def test_partitioned_join_chosen_by_the_index_budget(spark):
    """A budget the index cannot fit: the plan picks the partitioned strategy (no broadcast
    variable, so Connect runs it as classic Spark does) and the count is SNAP's."""
    from dataclasses import replace

    from faq.graphs.edges import degree_oriented, edge_factor
    from faq.graphs.triangles import TRIANGLE_QUERY
    from faq.insideout import evaluate

    graph = replace(degree_oriented(edge_factor(str(DATA / "email-Eu-core.txt.gz"))), name="edge")
    spark.conf.set("spark.faq.indexMemory", "300k")  # the index: ~502 KiB
    spark.conf.set("spark.faq.placement", "executors")  # (in-process, the default, it would run on the client)
    try:
        with evaluate(TRIANGLE_QUERY, {"edge": graph}) as result:
            assert result.plan.steps[0].strategy.name == "partitioned"
            assert result.notes[0].startswith("partitioned grid")
            assert result.scalar() == 105461
    finally:
        spark.conf.unset("spark.faq.indexMemory")
        spark.conf.unset("spark.faq.placement")


def test_index_built_on_the_executors(spark, tmp_path):
    """spark.faq.indexDir (a directory the server's executors read: this machine's, the server
    being local) and indexBuild=executors: Spark writes the index's inputs, the server's
    workers build the index, the count is SNAP's, and the inputs are gone once the result is closed."""
    from dataclasses import replace

    from faq.graphs.edges import degree_oriented, edge_factor
    from faq.graphs.triangles import TRIANGLE_QUERY
    from faq.insideout import evaluate

    graph = replace(degree_oriented(edge_factor(str(DATA / "email-Eu-core.txt.gz"))), name="edge")
    spark.conf.set("spark.faq.indexDir", str(tmp_path))
    spark.conf.set("spark.faq.indexBuild", "executors")
    spark.conf.set("spark.faq.placement", "executors")
    try:
        with evaluate(TRIANGLE_QUERY, {"edge": graph}) as result:
            assert result.plan.steps[0].strategy.index_dir == str(tmp_path)
            assert "built on the executors" in result.notes[0], result.notes
            assert result.scalar() == 105461
    finally:
        spark.conf.unset("spark.faq.indexDir")
        spark.conf.unset("spark.faq.indexBuild")
        spark.conf.unset("spark.faq.placement")
    assert not os.listdir(tmp_path)


def test_query_and_motif_count_equal_networkx(spark):
    from faq.factor import factor_of
    from faq.graphs.motifs import motifs
    from faq.insideout import evaluate

    graph = nx.read_edgelist(str(DATA / "ca-GrQc.txt"), comments="#", create_using=nx.DiGraph, nodetype=int)
    graph.remove_edges_from(list(nx.selfloop_edges(graph)))
    edges = factor_of([(u, v, 1) for u, v in graph.edges], ["src", "dst"], "counting")
    assert is_connect(edges.df.sparkSession)
    with evaluate("count() := edge(a,b), edge(b,c)", {"edge": edges}) as result:
        assert result.scalar() == sum(graph.in_degree(b) * graph.out_degree(b) for b in graph)
    feed_forward = sum(1 for a, b in graph.edges for c in graph.successors(b) if graph.has_edge(a, c))
    assert motifs(edges, "(a)->(b); (a)->(c); (b)->(c)", count=True).count == feed_forward


def test_matrix_chain_equals_scipy(spark):
    import scipy.io

    from faq.graphs import chain_product
    from faq.io import read_matrix_market, to_scipy

    k = scipy.io.mmread(str(DATA / "bcsstk21.mtx")).tocsr()
    m = scipy.io.mmread(str(DATA / "bcsstm21.mtx")).tocsr()
    expected = (m @ k).toarray()
    chain = [read_matrix_market(str(DATA / f)) for f in ("bcsstm21.mtx", "bcsstk21.mtx")]
    with chain_product(chain, "real") as result:
        got = to_scipy(result.factor, shape=expected.shape).toarray()
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_maintained_query_with_tuple_and_dataframe_batches(spark):
    from faq.factor import factor_of
    from faq import maintain

    start = [(1, 2), (2, 3), (3, 4), (1, 4)]
    edge = factor_of([(u, v, 1) for u, v in start], ["src", "dst"], "counting")
    with maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge}) as triangles:
        assert triangles.scalar() == 0
        # a->b, b->c, a->c: 1-2-3, 1-2-4, 1-3-4, 2-3-4 once (1,3) and (2,4) exist
        assert triangles.apply(edge=[(1, 3, 1), (2, 4, 1)]).total == 4
        batch = spark.createDataFrame([(1, 3, -1)], "src bigint, dst bigint, value bigint")
        change = triangles.apply(edge=batch)
        assert is_connect(change.df.sparkSession)
        edges = {(1, 2), (2, 3), (3, 4), (1, 4), (2, 4)}
        expected = sum(1 for a, b in edges for c in range(1, 5) if (b, c) in edges and (a, c) in edges)
        assert triangles.scalar() == expected


def test_fixpoint_equals_networkx(spark):
    from faq.io import read_edge_list
    from faq.recursive import reachability_on_spark

    path = str(DATA / "email-Eu-core.txt.gz")
    graph = nx.read_edgelist(path, comments="#", create_using=nx.DiGraph, nodetype=int)
    with reachability_on_spark(read_edge_list(path), 0) as result:
        reached = {int(r[0]) for r in result.factor.df.select(result.factor.variables[0]).collect()}
    assert reached == nx.descendants(graph, 0) | {0}


def test_fixpoint_with_edges_held_on_the_executors(spark, tmp_path):
    """With spark.faq.indexDir the server's workers build the parts and run the rounds (TaskContext,
    mapInArrow, a cached frame); without it the Spark SQL rounds run, saying why.  Both equal networkx."""
    from faq.io import read_edge_list
    from faq.recursive.placed import solve_placed

    path = str(DATA / "email-Eu-core.txt.gz")
    graph = nx.read_edgelist(path, comments="#", create_using=nx.DiGraph, nodetype=int)
    expected = {n: float(d) for n, d in nx.single_source_shortest_path_length(graph, 0).items()}
    spark.conf.set("spark.faq.indexDir", str(tmp_path))
    try:
        with solve_placed(read_edge_list(path), "min_plus", source=0, placement="executors") as result:
            assert "edges held on the executors" in result.placement_reason, result.placement_reason
            assert {int(n): v for n, v in result.df.collect()} == expected
    finally:
        spark.conf.unset("spark.faq.indexDir")
    assert not os.listdir(tmp_path)
    with solve_placed(read_edge_list(path), "min_plus", source=0, placement="executors") as result:
        assert "set spark.faq.indexDir" in result.placement_reason
        assert {int(n): v for n, v in result.df.collect()} == expected


def test_progress_on_connect(spark):
    """The stage monitor reads Connect's progress handler (no status tracker on Connect)."""
    import io

    from faq.progress import Reporter

    out = io.StringIO()
    with Reporter(stream=out, interval=0.1) as reporter:
        reporter.watch(spark)
        assert spark.range(0, 2_000_000, 1, 4).selectExpr("sum(id * id)").collect()[0][0] > 0
    assert "Traceback" not in out.getvalue()


def test_learning_over_a_join_of_server_tables(spark):
    """The cofactor ring as Column expressions on the server, then a maintained model whose indexes
    live in this client: both equal numpy's least squares on the join materialised with pandas."""
    import faq
    from tests.test_learning import FEATURES, QUERY, TARGET, joined, least_squares, tables

    t = tables(71)
    given = {name: spark.createDataFrame(df) for name, df in t.items()}
    spark.conf.set("spark.faq.placement", "executors")
    try:
        static = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, **given)
    finally:
        spark.conf.unset("spark.faq.placement")
    np.testing.assert_allclose([static.intercept, *[static.coefficients[f] for f in FEATURES]],
                               least_squares(joined(t), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **given)
    model.apply(lineitem=t["lineitem"].head(7).assign(diff=-1))
    after = {**t, "lineitem": t["lineitem"].iloc[7:]}
    np.testing.assert_allclose([model.intercept, *[model.coefficients[f] for f in FEATURES]],
                               least_squares(joined(after), FEATURES, TARGET), rtol=1e-7, atol=1e-7)
    model.close()


def test_steps_in_cells_and_a_plan_in_the_tasks_of_its_large_factor(spark):
    """On the server's executors: an array ring's steps in partitioned cells (the in-process merges in
    each), and a query whose one Spark factor runs the whole plan in its tasks -- both equal to the
    same queries answered in-process from the same rows."""
    from faq.factor import Factor, factor_of
    from faq.insideout import evaluate
    from faq.language import make_query
    from faq.semirings import MOMENTS, get_semiring

    rows = [(i % 5, (i * 3) % 7, [1.0, float(i), float(i * i)]) for i in range(40)]
    moments = {"e": factor_of(rows, ["c0", "c1"], MOMENTS, name="e")}
    query = make_query([("e", ["a", "b"]), ("e", ["b", "c"])], ["a"], semiring="moments")
    answers = {}
    for placement in ("executors", "driver"):
        with evaluate(query, moments, placement=placement) as result:
            answers[placement] = sorted([row[0], *row[1]] for row in result.df.collect())
            assert result.rows == len(answers[placement])  # (on the executors: counted when asked, not before)
            if placement == "executors":
                assert {s.strategy.name for s in result.plan.steps} == {"partitioned"}, result.plan
    np.testing.assert_allclose(answers["executors"], answers["driver"], rtol=1e-12)

    real = get_semiring("real")
    fact = [(i % 6, i % 4, float(i % 5) + 0.5) for i in range(60)]
    dims = {"dim": factor_of([(a, 1.0 + a) for a in range(6)], ["c0"], real, name="dim"),
            "other": factor_of([(b, 2.0 - 0.25 * b) for b in range(4)], ["c0"], real, name="other")}
    text = make_query([("fact", ["a", "b"]), ("dim", ["a"]), ("other", ["b"])], ["b"], semiring="real")
    big = Factor(df=spark.createDataFrame(fact, "c0 bigint, c1 bigint, value double"), variables=("c0", "c1"),
                 semiring=real, value="value", name="fact")
    spark.conf.set("spark.faq.fetchMemory", "0")
    spark.conf.set("spark.faq.inTasks", "always")  # a scalar semiring: by default its steps run as Spark jobs
    try:
        with evaluate(text, {**dims, "fact": big}) as result:
            in_tasks = sorted(map(tuple, result.df.collect()))
            assert result.plan.in_tasks == "fact#1", result.plan
    finally:
        spark.conf.unset("spark.faq.fetchMemory")
        spark.conf.unset("spark.faq.inTasks")
    held = factor_of([(a, b, v) for a, b, v in fact], ["c0", "c1"], real, name="fact")
    with evaluate(text, {**dims, "fact": held}, placement="driver") as result:
        expected = sorted(map(tuple, result.df.collect()))
    np.testing.assert_allclose(in_tasks, expected, rtol=1e-12)


def test_spark_ui_tags_name_the_query_and_step(spark):
    """On Connect a step's Spark jobs carry a session tag naming the query and the step (the commas
    Spark refuses in a tag written as ';'); the tag is gone after the step."""
    import faq

    edges = spark.createDataFrame([(1, 2), (2, 3), (1, 3), (3, 4)], ["src", "dst"])
    seen = []
    result = faq.query("count() := e(a,b), e(b,c), e(a,c)", e=edges, placement="executors",
                       progress=lambda event: seen.append((event.kind, sorted(spark.getTags()))))
    assert result.scalar() == 1
    expected = "faq query count() := e(a;b); e(b;c); e(a;c): step 1 of 1; eliminate a; b; c"
    assert [kind for kind, _ in seen] == ["start", "done"]
    assert all(any(tag.startswith(expected) for tag in tags) for _, tags in seen), seen
    assert not any(tag.startswith("faq") for tag in spark.getTags())
