"""InsideOut: plan (pure Python) and execute (Spark) Functional Aggregate Queries.

The planner half imports no Spark; the executor names are loaded on first use,
so ``from faq.insideout import plan_query`` works where pyspark is absent.

Examples
--------
>>> from faq.insideout import plan_query
>>> from faq.language import parse_query
>>> plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting").faqw
Fraction(3, 2)
"""

from faq._lazy import lazy_exports
from faq.insideout.physical import Environment, Strategy
from faq.insideout.planner import Indicator, Plan, Relation, Step, plan_query

# Names whose modules import the factor and join layers (and Spark when called): loaded on first use.
_LAZY = {
    "QueryResult": "executor", "StepEvent": "executor", "evaluate": "executor", "execute": "executor",
    "bind": "binding", "plan_for": "binding", "statistics": "binding", "factor_statistics": "binding",
}

__all__ = ["plan_query", "Plan", "Step", "Relation", "Indicator", "Environment", "Strategy", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {name: f"{__name__}.{module}" for name, module in _LAZY.items()})
