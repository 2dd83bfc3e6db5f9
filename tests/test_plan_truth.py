"""The plan is the truth: the kernel ``explain`` names for a step is the kernel its join ran.

A generic-join step that ⊕-aggregates inside its tasks names its kernel in the plan (the compiled
loop, the numpy kernel with the reason, or masked sparse products for an in-process triangle);
the executed join's note names the one that ran.  The data fact the planner cannot see -- a
relation with repeated rows -- is the one documented fallback, and these inputs have none.
"""

from __future__ import annotations

import numpy as np
import pytest

from faq.factor import factor_of
from faq.insideout import evaluate, plan_for

QUERIES = {
    "triangles": "count() := edge(a,b), edge(a,c), edge(b,c)",
    "4-cycles (two steps: the second reads a valued intermediate)": "count() := edge(a,b), edge(b,c), edge(c,d), edge(a,d)",
    "4-cliques": "count() := edge(a,b), edge(a,c), edge(a,d), edge(b,c), edge(b,d), edge(c,d)",
}


def kernel_named(text: str) -> str | None:
    """Which kernel a plan line or a join note names (None: the text names none).  The numpy
    kernel's reason may mention the compiled loop ("less than loading the compiled loop"): the
    kernel named first in the text is the one chosen."""
    found = {name: text.find(name) for name in ("compiled loop", "masked sparse products", "numpy kernel")}
    found = {name: at for name, at in found.items() if at >= 0}
    return min(found, key=found.get) if found else None


def small_graph(seed: int = 3, nodes: int = 60, edges: int = 500):
    rng = np.random.default_rng(seed)
    pairs = {(int(a), int(b)) for a, b in zip(rng.integers(0, nodes, edges), rng.integers(0, nodes, edges)) if a < b}
    return factor_of([(a, b, 1) for a, b in sorted(pairs)], ["src", "dst"], "counting")


@pytest.mark.parametrize("placement", ["driver", "executors"])
def test_the_kernel_explain_names_is_the_kernel_that_ran(spark, placement):
    edge = small_graph()
    checked = 0
    for name, query in QUERIES.items():
        plan = plan_for(query, {"edge": edge}, placement=placement)
        with evaluate(query, {"edge": edge}, plan=plan) as result:
            assert len(result.notes) == len(plan.steps)
            for step, note in zip(plan.steps, result.notes):
                planned = kernel_named(step.strategy.describe())
                if planned is None:
                    continue  # a binary step: no kernel to name
                assert kernel_named(note) == planned, (name, step.strategy.describe(), note)
                checked += 1
    assert checked >= len(QUERIES)
