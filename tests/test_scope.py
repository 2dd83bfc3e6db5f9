"""One owner of Spark resources: the Scope, and the results that hold one."""

from __future__ import annotations

import pytest

from faq.factor import factor_of
from faq.insideout import evaluate
from faq.scope import Scope

pytestmark = pytest.mark.usefixtures("spark")


def cached(df) -> bool:
    return bool(df.storageLevel.useMemory or df.storageLevel.useDisk)


def test_release_hand_over_take_over_and_close(spark):
    outer, inner = Scope(), Scope()
    a, b, c = (outer.persist(spark.range(n)) for n in (3, 4, 5))
    d = inner.persist(spark.range(6))
    assert all(cached(x) for x in (a, b, c, d)) and len(outer) == 3
    outer.release(b)  # early, by its owner
    outer.release(spark.range(1))  # not ours: left alone
    assert not cached(b) and len(outer) == 2
    kept = outer.hand_over(c)  # someone else's now
    outer.take_over(inner)  # a part's resources join the whole's
    assert len(inner) == 0 and outer.owns(d)
    outer.close()
    outer.close()  # twice: nothing more
    assert not cached(a) and not cached(d) and cached(kept)
    kept.unpersist()
    with pytest.raises(RuntimeError, match="closed"):
        outer.adopt(spark.range(1))


def test_nested_scopes_and_callbacks_close_newest_first(spark):
    order = []
    with Scope() as outer:
        child = outer.adopt(Scope())
        child.callback(lambda: order.append("child"))
        outer.callback(lambda: order.append("outer"))
    assert order == ["outer", "child"]  # newest first


def test_closing_on_error_releases_only_on_error(spark):
    scope = Scope()
    with scope.closing_on_error():
        kept = scope.persist(spark.range(3))
    assert cached(kept)
    with pytest.raises(ZeroDivisionError):
        with scope.closing_on_error():
            scope.persist(spark.range(4))
            1 / 0
    assert not cached(kept) and len(scope) == 0


def test_a_failing_query_leaves_nothing_cached(spark, monkeypatch):
    """The second step of a two-step plan fails: the first step's output and the shared input
    were persisted by their scopes and are released; a successful run's result owns its cache."""
    from faq.insideout import executor
    from faq.scope import Scope as RealScope

    persisted = []

    class Recording(RealScope):
        def persist(self, df, level=None):
            out = super().persist(df, level)
            persisted.append(out)
            return out

    monkeypatch.setattr(executor, "Scope", Recording)
    edge = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting", name="edge")
    text = "q(a) := edge(a,b), edge(b,c), edge(c,d)"
    with evaluate(text, {"edge": edge}, placement="executors") as result:  # (in-process, nothing is cached)
        assert len(result.plan.steps) >= 2
        assert sorted(map(tuple, result.df.collect())) == [(1, 1)]
        assert cached(result.df) or any(cached(p) for p in persisted)
    assert not any(cached(p) for p in persisted)

    calls = {"n": 0}
    real = executor.join_bag

    def failing_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("the second step fails")
        return real(*args, **kwargs)

    monkeypatch.setattr(executor, "join_bag", failing_second)
    # Every step materialised (none pipelined into the next: faq.insideout.pipelining), so the first step's
    # cache exists when the second fails, and must be released.
    monkeypatch.setattr(executor, "pipelined", lambda plan: {})
    persisted.clear()
    with pytest.raises(RuntimeError, match="second step"):
        evaluate(text, {"edge": edge}, placement="executors")
    assert persisted and not any(cached(p) for p in persisted)
