"""One reader of the session's ``spark.faq.*`` settings: maintained queries plan with the numbers
one-shot queries use."""

from __future__ import annotations

from faq.incremental.rules import budget_bytes, choose_placement


def test_maintained_budget_is_the_sessions_in_process_memory(spark):
    spark.conf.set("spark.faq.localMemory", "64k")
    try:
        assert budget_bytes() == 64 << 10
        placement, why = choose_placement(1 << 20, budget_bytes())
        assert placement == "executors" and "exceed the driver budget of 64.0 KB" in why
        assert budget_bytes("2m") == 2 << 20  # an explicit budget= still wins
    finally:
        spark.conf.unset("spark.faq.localMemory")
    assert budget_bytes() > 64 << 10
