"""InsideOut: plan (pure Python) and execute (Spark) Functional Aggregate Queries.

The planner half imports no Spark; the executor names are loaded on first use,
so ``from faq.insideout import plan`` works where pyspark is absent.

Examples
--------
>>> from faq.insideout import plan
>>> from faq.query import parse_query
>>> plan(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting").faqw
Fraction(3, 2)
"""

from typing import Any

from faq.insideout.planner import Indicator, Plan, Relation, Step, plan

_EXECUTOR_NAMES = ("QueryResult", "StepEvent", "bind", "evaluate", "execute", "statistics")

__all__ = ["plan", "Plan", "Step", "Relation", "Indicator", *_EXECUTOR_NAMES]


def __getattr__(name: str) -> Any:
    if name in _EXECUTOR_NAMES:
        from faq.insideout import executor as _executor

        return getattr(_executor, name)
    raise AttributeError(f"module 'faq.insideout' has no attribute {name!r}")
