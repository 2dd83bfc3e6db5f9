"""Motifs: the pattern parser, inclusion–exclusion, counts and listings against independent oracles.

* a brute-force enumerator written here (itertools over vertex tuples) on small random digraphs
  from hypothesis;
* numpy / networkx on email-Eu-core (SNAP): feed-forward triangles sum((A·A)∘A), directed 3-cycle
  bindings trace(A³), SNAP's 105,461 undirected triangles; on its subgraph of ids < 100 also directed
  4-cycles (networkx simple_cycles), 4-cliques, diamonds and induced 2-paths;
* the inclusion–exclusion decomposition against the enumerator, in plain Python (no Spark).

Spark jobs dominate the time, so the random graphs (several per hypothesis example) and the
email subgraph run as one disjoint union: every pattern tested is connected, so its count on the
union is the sum of the counts on the parts, and its bindings on the random part are the union of
the bindings per graph.  That runs once through Spark; smaller random unions are counted more
times in-process (an edge-list file the driver reads, every step on the driver: no Spark job).
The counts scale with the hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from faq.errors import FAQTypeError, FAQValueError, MotifPatternError
from faq.factor import factor_of
from faq.graphs import count_motifs, list_motifs, motifs
from faq.graphs.pattern import inclusion_exclusion, parse_pattern
from faq.io import read_edge_list
from tests.conftest import search_settings
from tests.helpers import run

DATA = Path(__file__).parent / "data"
EMAIL = DATA / "email-Eu-core.txt.gz"  # SNAP: 105,461 undirected triangles
SUBGRAPH_IDS = 100  # email-Eu-core restricted to ids < 100: 1,224 edges

FF = "(a)->(b); (a)->(c); (b)->(c)"
CYCLE3 = "(a)->(b); (b)->(c); (c)->(a)"
CYCLE4 = "(a)->(b); (b)->(c); (c)->(d); (d)->(a)"
CLIQUE4 = "(a)->(b); (a)->(c); (a)->(d); (b)->(c); (b)->(d); (c)->(d)"
DIAMOND = "(a)->(b); (a)->(c); (b)->(d); (c)->(d)"
INDUCED_2PATH = "(a)->(b); (b)->(c); !(a)->(c); !(c)->(a); !(b)->(a); !(c)->(b)"
OPEN_TRIAD = "(a)-(b); (b)-(c); !(a)-(c)"
WALK2 = "(a)->(b); (b)->(c); allow a=c"
MIXED = "(b)<-[e]-(a); (b)-(c); (c)-[]->(d); !(c)->(b); allow a=d"  # edge forms, negation, allow

# The same motifs written out for the enumerator, independently of the parser:
# (vertices, positive edges, negated edges, pairs allowed to coincide); an edge is
# (u, v, directed).
SPECS = {
    FF: ("abc", [("a", "b", 1), ("a", "c", 1), ("b", "c", 1)], [], []),
    CYCLE3: ("abc", [("a", "b", 1), ("b", "c", 1), ("c", "a", 1)], [], []),
    CYCLE4: ("abcd", [("a", "b", 1), ("b", "c", 1), ("c", "d", 1), ("d", "a", 1)], [], []),
    CLIQUE4: ("abcd", [(u, v, 1) for u, v in itertools.combinations("abcd", 2)], [], []),
    DIAMOND: ("abcd", [("a", "b", 1), ("a", "c", 1), ("b", "d", 1), ("c", "d", 1)], [], []),
    INDUCED_2PATH: (
        "abc",
        [("a", "b", 1), ("b", "c", 1)],
        [("a", "c", 1), ("c", "a", 1), ("b", "a", 1), ("c", "b", 1)],
        [],
    ),
    OPEN_TRIAD: ("abc", [("a", "b", 0), ("b", "c", 0)], [("a", "c", 0)], []),
    WALK2: ("abc", [("a", "b", 1), ("b", "c", 1)], [], [("a", "c")]),
    # (the columns follow the pattern's first appearances: b, a, c, d)
    MIXED: ("bacd", [("a", "b", 1), ("b", "c", 0), ("c", "d", 1)], [("c", "b", 1)], [("a", "d")]),
}


# --- the independent oracle -----------------------------------------------------------


def simple(edges):
    """The simple digraph of raw (u, v) pairs: no loops, no repeats."""
    return {(u, v) for u, v in edges if u != v}


def brute_force(nodes, edges, spec) -> set[tuple]:
    """Every binding of ``spec`` in the simple digraph ``edges``, by enumerating vertex tuples."""
    vertices, positive, negated, allowed = spec
    allowed = {frozenset(p) for p in allowed}

    def has(x, y, directed):
        return (x, y) in edges or (not directed and (y, x) in edges)

    found = set()
    for values in itertools.product(sorted(nodes), repeat=len(vertices)):
        b = dict(zip(vertices, values))
        if any(
            b[u] == b[v] for u, v in itertools.combinations(vertices, 2) if frozenset((u, v)) not in allowed
        ):
            continue
        if all(has(b[u], b[v], d) for u, v, d in positive) and not any(has(b[u], b[v], d) for u, v, d in negated):
            found.add(values)
    return found


def homomorphisms(nodes, edges, query) -> int:
    """Assignments of an FAQ's variables to nodes where every edge/sym atom holds."""
    variables = query.variables
    either = edges | {(v, u) for u, v in edges}
    total = 0
    for values in itertools.product(sorted(nodes), repeat=len(variables)):
        b = dict(zip(variables, values))
        if all((b[x], b[y]) in (edges if atom.factor == "edge" else either)
               for atom in query.atoms for x, y in [atom.variables]):
            total += 1
    return total


@st.composite
def digraph(draw, max_nodes=8):
    """(n, raw edges): each ordered pair (self-loops included) present or not, plus a repeated edge."""
    n = draw(st.integers(2, max_nodes))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    edges = [(i // n, i % n) for i, bit in enumerate(bits) if bit]
    return n, edges + edges[:1]


def union(graphs, offset=0):
    """Disjoint union: node v of graph g becomes offset + 10·g + v. Returns (raw edges, [(nodes, simple edges)])."""
    raw, parts = [], []
    for g, (n, edges) in enumerate(graphs):
        base = offset + 10 * g
        shifted = [(base + u, base + v) for u, v in edges]
        raw += shifted
        parts.append(({base + v for v in range(n)}, simple(shifted)))
    return raw, parts


def edge_factor(raw):
    return factor_of([(u, v, 1) for u, v in raw], ["src", "dst"], "counting", name="edges")


def rows_of(df):
    return [tuple(r) for r in df.collect()]


# --- parsing (no Spark) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(a)->(b)",
        "(b)<-(a)",
        "(a)-[e]->(b)",
        "(a)-[]->(b)",
        "(b)<-[e]-(a)",
        "  ( a ) -> ( b ) ; ",
        "(a) -[ e ]-> (b)",
    ],
)
def test_edge_forms(text):
    p = parse_pattern(text)
    assert [(e.src, e.dst, e.directed, e.negated) for e in p.edges] == [("a", "b", True, False)]


def test_pattern_structure():
    p = parse_pattern("(a)-(b); (c)<-(b); !(a)-[x]-(c); !(c)->(a); allow a=b=c, a=c")
    assert p.vertices == ("a", "b", "c")
    assert [(e.src, e.dst, e.directed, e.negated) for e in p.edges] == [
        ("a", "b", False, False),
        ("b", "c", True, False),
        ("a", "c", False, True),
        ("c", "a", True, True),
    ]
    assert p.allowed == {frozenset("ab"), frozenset("bc"), frozenset("ac")}
    assert p.distinct_pairs == ()
    assert str(p) == "(a)-(b); (b)->(c); !(a)-(c); !(c)->(a); allow a=b, a=c, b=c"
    assert str(parse_pattern(str(p))) == str(p)  # printing is a fixed point


def test_distinct_pairs_and_query():
    assert parse_pattern(FF).distinct_pairs == ()
    assert parse_pattern(CLIQUE4).distinct_pairs == ()
    assert parse_pattern(CYCLE4).distinct_pairs == (("a", "c"), ("b", "d"))
    assert parse_pattern(WALK2).distinct_pairs == ()
    assert not parse_pattern(FF).needs_filters and parse_pattern(INDUCED_2PATH).needs_filters
    q = parse_pattern("(a)->(b); (a)-(b); (b)-(c); (c)-(b); (a)->(b)").query()
    assert str(q) == "motif(a, b, c) := edge(a, b), sym(b, c)"  # repeated / implied atoms dropped
    assert parse_pattern(FF).query(free=False).free == ()


def _error(text):
    with pytest.raises(MotifPatternError) as info:
        parse_pattern(text)
    assert isinstance(info.value, FAQValueError) and isinstance(info.value, ValueError)
    assert info.value.parameters["text"] == text
    return info.value.parameters["position"], info.value.parameters["reason"]


@pytest.mark.parametrize(
    "text, position, reason",
    [
        ("", 0, "empty pattern"),
        ("  ; ;", 0, "empty pattern"),
        ("(a)->(b) (b)->(c)", 9, "expected ';' between terms"),
        ("(a)->(b);; (b)->(c)", 9, "expected an edge"),
        ("(a)->", 5, "expected '('"),
        ("(a)=>(b)", 3, "expected an edge: '->', '<-' or '-'"),
        ("(a)->(b", 7, "expected ')'"),
        ("(1a)->(b)", 1, "expected a vertex name"),
        ("(__a)->(b)", 1, "reserved"),
        ("()->(b)", 1, "anonymous vertex"),
        ("(a)-[e->(b)", 6, "expected ']'"),
        ("(a)-[e]>(b)", 7, "'->' or '-' after ']'"),
        ("(a)->(b); !(a)->(c)", 17, "vertex 'c' is on no positive edge"),
        ("!(a)->(b)", 0, "no positive edge"),
        ("(a)->(b); (b)->(b)", 10, "to itself"),
        ("(a)->(b); allow a=z", 18, "which is on no edge"),
        ("(a)->(b); allow a", 17, "expected '='"),
        ("(a)->(b); ! allow a=b", 12, "expected '(' after '!'"),
        ("a->b", 0, "expected an edge such as '(a)->(b)'"),
    ],
)
def test_pattern_errors(text, position, reason):
    found_position, found_reason = _error(text)
    assert found_position == position, found_reason
    assert reason in found_reason


def test_pattern_error_message_points_at_the_problem():
    with pytest.raises(MotifPatternError) as info:
        parse_pattern("(a)->(b) (b)->(c)")
    assert str(info.value).splitlines() == [
        "[MOTIF_PATTERN] expected ';' between terms at position 9",
        "  (a)->(b) (b)->(c)",
        "           ^",
    ]
    with pytest.raises(FAQTypeError):
        parse_pattern(42)


def test_inclusion_exclusion_terms():
    # C4: hom(C4) - 2·hom(two reciprocal pairs at one vertex) + hom(reciprocal pair)
    terms = inclusion_exclusion(CYCLE4)
    assert [c for c, _ in terms] == [1, -2, 1]
    assert [len(q.variables) for _, q in terms] == [4, 3, 2]
    assert [(c, len(q.atoms)) for c, q in inclusion_exclusion(FF)] == [(1, 3)]
    with pytest.raises(FAQValueError):
        inclusion_exclusion(INDUCED_2PATH, max_events=2)


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(digraph(max_nodes=6))
def test_inclusion_exclusion_matches_brute_force(graph):
    """Σ coefficient × hom(term) is the number of bindings, for every motif (plain Python)."""
    n, raw = graph
    nodes, edges = set(range(n)), simple(raw)
    for text, spec in SPECS.items():
        expected = len(brute_force(nodes, edges, spec))
        assert sum(c * homomorphisms(nodes, edges, q) for c, q in inclusion_exclusion(text)) == expected, text


# --- Spark: random graphs and a real subgraph against the enumerator and numpy ---------------------


def email_matrix(limit=None) -> np.ndarray:
    """Dense 0/1 adjacency of email-Eu-core's simple digraph, read with numpy (not faq)."""
    with gzip.open(EMAIL, "rt") as f:
        e = np.loadtxt(f, dtype=np.int64, ndmin=2)[:, :2]
    e = e[e[:, 0] != e[:, 1]]
    if limit is not None:
        e = e[(e[:, 0] < limit) & (e[:, 1] < limit)]
    n = int(e.max()) + 1 if limit is None else limit
    a = np.zeros((n, n), dtype=np.int64)
    a[e[:, 0], e[:, 1]] = 1
    return a


@pytest.fixture(scope="module")
def subgraph():
    """email-Eu-core on ids < 100: its raw edges and numpy / networkx counts of the motifs."""
    a = email_matrix(SUBGRAPH_IDS)
    n = len(a)
    graph = nx.DiGraph([(int(u), int(v)) for u, v in zip(*np.nonzero(a))])
    # Directed 4-cycles: networkx lists each simple cycle once; a cycle has 4 bindings (rotations).
    cycles4 = sum(1 for c in nx.simple_cycles(graph, length_bound=4) if len(c) == 4)
    # 4-cliques a->b, a->c, a->d, b->c, b->d, c->d: for each edge a->b, edges among common out-neighbours.
    out = [np.flatnonzero(a[i]) for i in range(n)]
    cliques = sum(
        int(a[np.ix_(c, c)].sum()) for i in range(n) for j in out[i] for c in [np.intersect1d(out[i], out[j])]
    )
    # Diamonds: ordered pairs of distinct middles b != c on the 2-paths a -> . -> d, a != d.
    paths = a @ a
    np.fill_diagonal(paths, 0)
    diamonds = int((paths * (paths - 1)).sum())
    # Induced 2-paths: one-way edges a->b and b->c, no edge at all between a and c.
    one_way = a * (1 - a.T)
    apart = (a == 0) & (a.T == 0)
    np.fill_diagonal(apart, False)
    induced = int(((one_way @ one_way) * apart).sum())
    counts = {
        FF: int(((a @ a) * a).sum()),
        CYCLE3: int(np.trace(a @ a @ a)),  # each directed 3-cycle is 3 bindings (rotations)
        CYCLE4: 4 * cycles4,
        CLIQUE4: cliques,
        DIAMOND: diamonds,
        INDUCED_2PATH: induced,
    }
    assert counts == {FF: 8_137, CYCLE3: 7_722, CYCLE4: 98_180, CLIQUE4: 49_151, DIAMOND: 103_544,
                      INDUCED_2PATH: 388}
    return [(int(u), int(v)) for u, v in zip(*np.nonzero(a))], counts


# Counted, with the way auto counts them (one aggregate, a signed sum of aggregates, the listing).
COUNTED = {
    FF: "direct",
    CYCLE3: "direct",
    CYCLE4: "inclusion_exclusion",
    CLIQUE4: "direct",
    DIAMOND: "inclusion_exclusion",
    INDUCED_2PATH: "listing",
}
# Listed: every kind of filter (distinctness, directed and undirected negation, allow) and every edge
# form; unfiltered listings are run by the command's tests.
LISTED = [CYCLE4, INDUCED_2PATH, OPEN_TRIAD, MIXED]
OFFSET = 1000  # random graphs' ids start here, above the subgraph's
PLACEMENT = "spark.faq.placement"  # where one-shot steps run (faq.insideout.physical.PLACEMENT_CONF)


# Examples in the suite: the union with the email subgraph through Spark, and smaller unions in-process.
SPARK = 1
IN_PROCESS = 10


# Each Spark run is dozens of jobs, so: one example, made of 4 to 8 random digraphs, run as one
# disjoint union together with the email subgraph (every pattern here is connected, so a count on
# the union is the sum of the counts of its parts).  Hypothesis's first example is the trivial one:
# `assume` skips it.  No shrinking.
@pytest.mark.usefixtures("spark")
@search_settings(SPARK, HealthCheck.filter_too_much)
@given(graphs=st.lists(digraph(), min_size=4, max_size=8))
def test_counts_and_listings_against_brute_force_and_numpy(subgraph, graphs):
    from pyspark.sql import functions as F

    raw, parts = union(graphs, OFFSET)
    assume(sum(len(e) for _, e in parts) >= 40)
    real_edges, real_counts = subgraph
    edges = edge_factor(real_edges + raw)

    def enumerated(text):
        return set().union(*(brute_force(nodes, e, SPECS[text]) for nodes, e in parts))

    for text, strategy in COUNTED.items():
        result = count_motifs(edges, text)
        expected = real_counts[text] + len(enumerated(text))
        assert (result.count, result.strategy) == (expected, strategy), (text, real_counts[text])
    for text in LISTED:
        listing = list_motifs(edges, text)
        try:
            assert listing.columns == list(SPECS[text][0])
            rows = listing.count()
            assert rows == listing.distinct().count(), f"duplicate bindings for {text}"
            if text in real_counts:  # listing equals counting
                assert rows == real_counts[text] + len(enumerated(text)), text
            first = listing.columns[0]
            random_part = rows_of(listing.where(F.col(first) >= OFFSET))
        finally:
            listing.unpersist()
        assert sorted(random_part) == sorted(enumerated(text)), text


@search_settings(IN_PROCESS, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture)
@given(graphs=st.lists(digraph(max_nodes=6), min_size=2, max_size=4))
def test_counts_in_process_against_brute_force(spark, tmp_path, graphs):
    """Every motif counted with every step on the driver (``spark.faq.placement=driver``), the union
    given as an edge-list file the driver reads: no Spark job.  The patterns auto lists to count
    (negations everywhere) are counted by inclusion–exclusion here; the listing runs on Spark above."""
    raw, parts = union(graphs, OFFSET)
    assume(raw)
    path = tmp_path / f"union{len(list(tmp_path.iterdir()))}.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in raw))
    before = spark.conf.get(PLACEMENT, None)
    spark.conf.set(PLACEMENT, "driver")
    try:
        for text, spec in SPECS.items():
            strategy = "inclusion_exclusion" if COUNTED.get(text) == "listing" else "auto"
            result = count_motifs(str(path), text, strategy=strategy)
            assert {s.placement for p in result.plans for s in p.steps} == {"driver"}, text
            expected = len(set().union(*(brute_force(nodes, e, spec) for nodes, e in parts)))
            assert result.count == expected, text
            if strategy == "auto" and text in COUNTED:
                assert result.strategy == COUNTED[text], text
    finally:
        if before is None:
            spark.conf.unset(PLACEMENT)
        else:
            spark.conf.set(PLACEMENT, before)


# --- Spark: the whole of email-Eu-core against numpy and SNAP ------------------------------------------


@pytest.fixture(scope="module")
def email(spark):  # read into the session: every test taking this fixture uses Spark
    return read_edge_list(EMAIL)


def test_email_directed_triangles(email):
    a = email_matrix()
    assert motifs(email, FF, count=True).count == int(((a @ a) * a).sum()) == 373_386
    # Every directed 3-cycle a->b->c->a is 3 bindings (its rotations): trace(A³).
    assert motifs(email, CYCLE3, count=True).count == int(np.trace(a @ a @ a)) == 347_700


def test_email_undirected_triangles(email):
    # SNAP's 105,461 undirected triangles: on the symmetric closure each has 3! bindings.
    result = count_motifs(email, "(a)-(b); (b)-(c); (c)-(a)")
    assert (result.count, result.strategy, result.edges) == (6 * 105_461, "direct", 24_929)


def test_edges_from_dataframe_and_bad_arguments(spark):
    df = spark.createDataFrame([(1, 2), (2, 3), (3, 1), (1, 1)], ["src", "dst"])
    assert motifs(df, CYCLE3, count=True).count == 3
    with pytest.raises(FAQValueError):
        count_motifs(df, FF, strategy="fastest")
    with pytest.raises(FAQValueError):  # a negation needs a filter: no single aggregate
        count_motifs(df, "(a)->(b); !(b)->(a)", strategy="direct")
    with pytest.raises(FAQTypeError):
        motifs(42, FF)
    with pytest.raises(MotifPatternError):  # checked before any Spark work
        motifs(df, "(a)->(b); !(a)->(c)")


# --- the command ------------------------------------------------------------------------------


def run_motif(capsys, *argv):
    """``faq motif ARGV`` in-process (it shares the test run's SparkSession) -> (exit code, stdout, stderr)."""
    return run(capsys, "motif", *argv)


@pytest.fixture
def small_graph(tmp_path):
    """Feed-forward triangles (1,2,3) and (3,4,1); a self-loop and a repeated edge, ignored."""
    path = tmp_path / "small.txt"
    path.write_text("# small\n1 2\n2 3\n1 3\n3 1\n3 4\n4 1\n2 2\n1 2\n")
    return path


@pytest.mark.usefixtures("spark")
def test_cli_count_json(capsys, small_graph):
    code, out, err = run_motif(capsys, FF, small_graph, "--count", "--json", "--quiet")
    assert code == 0, err
    result = json.loads(out)
    assert result["count"] == 2 and result["strategy"] == "direct" and result["edges"] == 6
    assert isinstance(result["seconds"], float) and result["pattern"] == FF


@pytest.mark.usefixtures("spark")
def test_cli_listing_preview_and_out(capsys, small_graph, tmp_path):
    code, out, err = run_motif(capsys, "(a)->(b); (b)->(c); !(a)->(c)", small_graph, "--quiet")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{small_graph}: 6 bindings of (a)->(b); (b)->(c); !(a)->(c)"
    assert lines[1].split() == ["a", "b", "c"]
    assert [tuple(map(int, line.split())) for line in lines[2:]] == [
        (1, 3, 4), (2, 3, 1), (2, 3, 4), (3, 1, 2), (4, 1, 2), (4, 1, 3)
    ]
    target = tmp_path / "found.csv"
    code, out, err = run_motif(capsys, CYCLE3, small_graph, "--out", target, "--json", "--quiet")
    assert code == 0, err
    assert json.loads(out)["count"] == 6
    assert sorted(target.read_text().splitlines()) == ["1,2,3", "1,3,4", "2,3,1", "3,1,2", "3,4,1", "4,1,3", "a,b,c"]


def test_cli_errors(capsys, small_graph, tmp_path):
    code, out, err = run_motif(capsys, "(a)->(b) (b)->(c)", small_graph)
    assert code == 2 and "expected ';' between terms at position 9" in err and out == ""
    code, out, err = run_motif(capsys, FF, tmp_path / "missing.txt", "--count")
    assert code == 2 and "no such file" in err
    code, out, err = run_motif(capsys, FF, small_graph, "--out", tmp_path / "x.txt")
    assert code == 2 and ".parquet" in err
