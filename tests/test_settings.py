"""One reader of the session's ``spark.faq.*`` settings: maintained queries plan with the numbers
one-shot queries use."""

from __future__ import annotations

from faq.incremental.rules import budget_bytes
from faq.placement_policy import for_indexes


def test_maintained_budget_is_the_sessions_in_process_memory(spark):
    spark.conf.set("spark.faq.localMemory", "64k")
    try:
        assert budget_bytes() == 64 << 10
        placement, why = for_indexes("auto", 1 << 20, budget_bytes())
        assert placement == "executors" and "exceed the driver budget of 64 KiB" in why
        assert budget_bytes("2m") == 2 << 20  # an explicit budget= still wins
    finally:
        spark.conf.unset("spark.faq.localMemory")
    assert budget_bytes() > 64 << 10


def test_compaction_is_the_sessions_setting_and_explain_says_it(spark):
    """``spark.faq.compaction`` decides where every index of a maintained query folds its overlay;
    ``explain`` prints it, a batch runs it, and an unknown value is refused before any work."""
    import pytest

    from faq.errors import InvalidArgumentError
    from faq.factor import factor_of
    from faq import maintain
    from faq.incremental.state import ResidentState
    from faq.semirings import INTEGER

    edges = factor_of([(0, 1, 1), (1, 2, 1), (2, 0, 1)], ("src", "dst"), "counting", name="edge")
    spark.conf.set("spark.faq.compaction", "batch")
    try:
        mq = maintain("count() := edge(a,b), edge(b,c), edge(c,a)", {"edge": edges}, placement="driver")
        assert mq.state.relations["edge"].compaction == "batch" and ResidentState(INTEGER).compaction == "batch"
        plan = mq.explain()
        assert plan.compaction == "batch" and "spark.faq.compaction=batch" in str(plan)
        assert "views rebuilt when next read" in str(plan) and plan.to_dict()["compaction"] == "batch"
        mq.close()
        spark.conf.set("spark.faq.compaction", "sometimes")
        with pytest.raises(InvalidArgumentError, match="spark.faq.compaction"):
            maintain("count() := edge(a,b), edge(b,c), edge(c,a)", {"edge": edges}, placement="driver")
    finally:
        spark.conf.unset("spark.faq.compaction")
    assert ResidentState(INTEGER).compaction == "thread"
