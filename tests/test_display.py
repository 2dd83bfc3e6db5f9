"""Rich notebook display (faq/display.py): each repr shows the key facts, and never too many rows.

Plans, triangle and motif counts and changes are built here without Spark;
a query result needs one (its preview is a bounded job on the cached answer).
"""

import numpy as np

from faq.display import PREVIEW_ROWS
from faq.graphs.motifs import MotifCount
from faq.graphs.triangles import TriangleCount
from faq.incremental.change import Change
from faq.insideout.planner import plan_query
from faq.language import parse_query

TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"


def _triangle_plan():
    return plan_query(parse_query(TRIANGLE), semiring="counting", sizes={"edge": 16064})


class _Printer:
    """Collects what ``_repr_pretty_`` prints (IPython's RepresentationPrinter, in brief)."""

    def __init__(self):
        self.out = ""

    def text(self, s):
        self.out += s


def test_plan_html_has_one_row_per_step_and_the_key_facts():
    chain = plan_query(parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)"), semiring="real",
                 sizes={"A": 100, "B": 100, "D": 100}, method="exact")
    html = chain._repr_html_()
    assert html.count("<tr>") == 1 + len(chain.steps) + 1  # header, steps, free bag
    for fact in ("plan for C(i, l) := A(i, j), B(j, k), D(k, l)", "semiring <b>real</b>", "j, k (exact)",
                 "faqw <b>2</b>", "{i, j, k}", "j (⊕ real)", "binary (acyclic bag)", "≤ 1e+04", "t1(i, k)",
                 "π{k} D#3", "ρ*", "est. rows", "strategy", "N_A*N_B"):
        assert fact in html, fact
    assert "title=" not in html  # binary joins need no reason


def test_plan_html_shows_the_strategy_and_escapes():
    p = _triangle_plan()
    html = p._repr_html_()
    assert "3/2" in html and "N_edge^(3/2)" in html
    assert "generic (cyclic bag)" in html and ">broadcast</span>" in html
    assert 'title="strategy broadcast' in html  # the reason, as a tooltip
    assert "edge#1(a, b) ⋈ edge#2(a, c) ⋈ edge#3(b, c)" in html
    assert "<b>plan for count() := edge(a, b), edge(a, c), edge(b, c)</b>" in html
    assert "Õ(N^(3/2) + |output|)" in html


def test_plan_pretty_is_the_printed_plan():
    p = _triangle_plan()
    printer = _Printer()
    p._repr_pretty_(printer, False)
    assert printer.out == str(p)


def test_triangle_count_html():
    t = TriangleCount(count=105461, edges=16064, directed=False, seconds=1.234, plan=_triangle_plan())
    html = t._repr_html_()
    for fact in ("undirected triangle count", "105,461", "16,064", "1.23 s", "faqw <b>3/2</b>", "a, b, c"):
        assert fact in html, fact
    printer = _Printer()
    t._repr_pretty_(printer, False)
    assert printer.out.startswith("TriangleCount(count=105461, edges=16064, directed=False") and "\n" not in printer.out


def test_motif_count_html():
    m = MotifCount(count=42, pattern="(a)->(b); (b)->(c); (c)->(a)", strategy="direct", terms=1, edges=7,
                   seconds=0.5, plans=(_triangle_plan(),))
    html = m._repr_html_()
    for fact in ("motif (a)-&gt;(b); (b)-&gt;(c); (c)-&gt;(a)", "count <b>42</b>", "direct", "FAQs <b>1</b>",
                 "edges <b>7</b>", "0.5 s", "3/2"):
        assert fact in html, fact


def test_change_html_bounds_its_rows():
    n = 3 * PREVIEW_ROWS
    keys = (np.arange(n), np.arange(n) + 100)
    diff = np.array([1, -1] * (n // 2))
    change = Change(("a", "b"), keys, diff, version=7, seconds=0.01, count=1234)
    html = change._repr_html_()
    for fact in ("version <b>7</b>", f"rows changed <b>{n}</b>", "Σ diff <b>0</b>", "count <b>1,234</b>",
                 f"first {PREVIEW_ROWS} of {n} rows", "<th", ">diff<"):
        assert fact in html, fact
    assert html.count("<tr>") == 1 + PREVIEW_ROWS
    printer = _Printer()
    change._repr_pretty_(printer, False)
    assert printer.out == "Change(version=7, rows=30, total=0, count=1234, seconds=0.01)"
    empty = Change(("a",), (np.array([], dtype=np.int64),), np.array([], dtype=np.int64), version=1)
    assert "rows changed <b>0</b>" in empty._repr_html_() and "<table" not in empty._repr_html_()


def test_query_result_html_previews_a_bounded_cached_answer(spark):
    import faq

    edges = spark.createDataFrame([(i, i + 1) for i in range(40)], ["src", "dst"])
    with faq.query("paths(a, c) := e(a,b), e(b,c)", e=edges) as result:
        html = result._repr_html_()
        assert "rows <b>39</b>" in html and f"first {PREVIEW_ROWS} of 39 rows" in html
        assert html.count("<tr>") == 1 + PREVIEW_ROWS and "<th" in html and ">value<" in html
        assert "semiring <b>counting</b>" in html and "faqw <b>" in html
        printer = _Printer()
        result._repr_pretty_(printer, False)
        assert printer.out.startswith("QueryResult('paths(a, c) := e(a, b), e(b, c)', rows=39")
    assert "(closed: no preview)" in result._repr_html_()  # nothing recomputed after close
    with faq.query("count() := e(a,b), e(b,c)", e=edges) as total:
        assert "value <b>39</b>" in total._repr_html_()
    assert "value <b>(closed)</b>" in total._repr_html_()
