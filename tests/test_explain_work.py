"""``faq explain`` shows the statistics it gathered and, per bag joined by the generic
join, the estimated work (Σ of smallest proposals per attribute, with an upper bound)."""

from __future__ import annotations

import json

import pytest

from faq.factor import Factor, factor_of
from faq.insideout.binding import factor_statistics
from faq.hypergraph.statistics import ColumnStatistics, RelationStatistics
from faq.language import parse_query
from tests.helpers import run

pytestmark = pytest.mark.usefixtures("spark")

TRIANGLE = "count() := edge(a,b), edge(a,c), edge(b,c)"


def test_factor_statistics_in_one_job_per_factor(spark):
    edge = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
    names = spark.createDataFrame([("x", 1.0), ("y", 2.0), ("x", 3.0)], "name string, value double")
    label = Factor.from_dataframe(names, ["name"], "real", name="label")  # string keys
    stats = factor_statistics(parse_query("q() := edge(a,b), label(c)"), {"edge": edge, "label": label})
    assert stats["edge"] == RelationStatistics(4, (ColumnStatistics(3, 2), ColumnStatistics(3, 2)))
    assert stats["label"] == RelationStatistics(3, (ColumnStatistics(2, 2),))
    empty = factor_of([], ["src", "dst"], "counting")
    assert factor_statistics(parse_query("q() := e(a,b)"), {"e": empty})["e"] == RelationStatistics(
        0, (ColumnStatistics(0, 0), ColumnStatistics(0, 0))
    )


def test_explain_text_shows_the_generic_join_work(capsys, edge_csv):
    """By hand: a: 3 sources; b: 3 · 4/3 = 4 (AGM of {a,b}: 4); c: 4 · 4/3 ≈ 5.33, bounded by
    the AGM bound 4^1.5 = 8 and by 4 prefixes × largest degree 2 = 8."""
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "-q")
    assert code == 0, err
    assert "[generic: cyclic bag; attributes a, b, c]" in out
    assert "generic-join work (est.): Σ smallest proposals ≈ 12.3 (≤ 15): a 3 [edge#1], b 4 [edge#1], c 5.33 [edge#2]" in out


def test_explain_json_has_statistics_and_work(capsys, edge_csv):
    code, out, err = run(capsys, "explain", TRIANGLE, "--factor", f"edge={edge_csv}", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["sizes"] == {"edge": 4}
    assert result["statistics"] == {"edge": {"rows": 4, "columns": [{"distinct": 3, "max_degree": 2}] * 2}}
    work = result["bags"][0]["generic_join_work"]
    assert work["order"] == ["a", "b", "c"]
    assert work["total"] == pytest.approx(12 + 1 / 3, rel=1e-5) and work["bound"] == pytest.approx(15)
    assert [(lv["attribute"], lv["proposer"]) for lv in work["levels"]] == [
        ("a", "edge#1"), ("b", "edge#1"), ("c", "edge#2"),
    ]
    assert work["levels"][2]["agm"] == pytest.approx(8)
    assert "uniform degrees" in work["assumptions"]


def test_explain_acyclic_plan_has_no_work_estimate(capsys, edge_csv):
    code, out, err = run(capsys, "explain", "q(a) := edge(a,b), edge(b,c)", "--factor", f"edge={edge_csv}", "--json")
    assert code == 0, err
    assert all(bag["join_method"] == "binary" and bag["generic_join_work"] is None for bag in json.loads(out)["bags"])
