"""The plan is the truth: the kernel ``explain`` names for a step is the kernel its join ran.

A generic-join step that ⊕-aggregates inside its tasks names its kernel in the plan (the compiled
loop, the numpy kernel with the reason, masked sparse products or one relation's triangles oriented by
degree for an in-process triangle);
the executed join's note names the one that ran.  The data fact the planner cannot see -- a
relation with repeated rows -- is the one documented fallback, and these inputs have none.

An in-process binary step names its merges in the plan too (a sparse matrix product, sort-merge or
pandas merges, :attr:`~faq.insideout.physical.Strategy.binary_kernel`), and its note names the one
that ran.  Their one fallback -- a sparse product whose int64 sums the data does not bound -- says
so in the note ("plan said ...; ran ... because ...").
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
    found = {name: text.find(name) for name in ("compiled loop", "masked sparse products", "numpy kernel",
                                                 "oriented by degree")}
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


# --- the in-process binary join's kernel: sparse product, sort-merge or pandas merges ----------------

MERGES = ("sparse product", "sort-merge", "pandas merges")


def merges_named(text: str) -> str | None:
    """Which in-process binary join kernel a plan line or a join note names first (None: none)."""
    found = {name: text.find(name) for name in MERGES}
    found = {name: at for name, at in found.items() if at >= 0}
    return min(found, key=found.get) if found else None


def run_in_process(query: str, factors: dict) -> list[tuple[str, str]]:
    """(kernel explain names, kernel the step's note names) for every step of ``query`` run in-process."""
    plan = plan_for(query, factors, placement="driver")
    pairs = []
    with evaluate(query, factors, plan=plan) as result:
        assert len(result.notes) == len(plan.steps)
        for step, note in zip(plan.steps, result.notes):
            assert step.placement == "driver" and step.strategy.binary_kernel is not None, str(plan)
            explained = step.strategy.describe(in_process=True)
            assert explained in str(plan)  # explain prints the line that names the kernel
            pairs.append((merges_named(explained), merges_named(note)))
            assert "plan said" not in note, note
    return pairs


def test_a_matrix_chain_runs_the_sparse_products_explain_names(spark):
    rng = np.random.default_rng(7)
    factors = {name: factor_of([(int(i), int(j), float(rng.integers(1, 9))) for i, j in
                                {(a, b) for a, b in rng.integers(0, 40, (200, 2))}], list(cols), "real", name=name)
               for name, cols in (("A", "ij"), ("B", "jk"), ("D", "kl"))}
    pairs = run_in_process("C(i,l) := A(i,j), B(j,k), D(k,l)", factors)
    assert pairs == [("sparse product", "sparse product")] * len(pairs) and len(pairs) == 2


def test_a_path_with_integer_keys_runs_the_sort_merge_explain_names(spark):
    pairs = run_in_process("q(a) := e(a,b), e(b,c)", {"e": small_graph()})
    assert pairs and all(p == ("sort-merge", "sort-merge") for p in pairs), pairs


def test_string_keys_run_the_pandas_merges_explain_names(spark):
    import pandas as pd

    from faq.io import from_pandas

    edges = pd.DataFrame({"src": ["x", "y", "y", "z"], "dst": ["y", "z", "w", "w"]})
    e = from_pandas(edges, value=None, semiring="counting", name="e")
    pairs = run_in_process("q(a) := e(a,b), e(b,c)", {"e": e})
    assert pairs and all(p == ("pandas merges", "pandas merges") for p in pairs), pairs
    # a cyclic bag over string keys: the generic join needs integers, so its strategy runs merges too
    pairs = run_in_process(QUERIES["triangles"], {"edge": e})
    assert pairs == [("pandas merges", "pandas merges")]


def test_integer_keys_sort_merge_at_every_size_and_unknown_sizes():
    """Sizes no longer choose pandas: integer keys of any estimated size, or of sizes unknown, sort-merge."""
    from faq.joins.merges import binary_kernel

    for rows in ([10, 10], [5e6, 2e7], [float("inf"), 3]):
        kernel, why = binary_kernel([("a", "b"), ("b", "c")], [], ("a",), rows, True)
        assert kernel == "sort-merge" and why.startswith("integer keys"), (rows, why)
    assert binary_kernel([("a", "b"), ("b", "c")], [], ("a",), [5e6, 5e6], False)[0] == "pandas-merge"


def test_a_sparse_product_the_data_refuses_says_so_in_its_note(spark):
    """The one fallback: int64 sums the plan cannot bound.  The note names the kernel that ran first,
    then what the plan said and why it did not run."""
    big = 2**61
    a = factor_of([(0, 1, big), (0, 2, big)], ["i", "j"], "integer", name="A")
    b = factor_of([(1, 5, 2), (2, 5, 2)], ["j", "k"], "integer", name="B")
    query = "C(i,k) := A(i,j), B(j,k)"
    plan = plan_for(query, {"A": a, "B": b}, placement="driver")
    (step,) = plan.steps
    assert step.strategy.binary_kernel == "sparse-product"
    from faq.errors import IntegerOverflowError

    with pytest.raises(IntegerOverflowError):  # the merges check every ⊕: 2·2^62 does not fit
        with evaluate(query, {"A": a, "B": b}, plan=plan) as result:
            result.notes
    # |a|·|b| summed reaches 2^62: no proof the product cannot wrap, so the merges give the exact 2^62
    a, b = (factor_of(rows, cols, "integer", name=n) for rows, cols, n in
            (([(0, 1, big)], ["i", "j"], "A"), ([(1, 2, 2)], ["j", "k"], "B")))
    plan = plan_for(query, {"A": a, "B": b}, placement="driver")
    assert plan.steps[0].strategy.binary_kernel == "sparse-product"
    with evaluate(query, {"A": a, "B": b}, plan=plan) as result:
        (note,) = result.notes
        assert [tuple(r) for r in result.factor.df.collect()] == [(0, 2, 2**62)]
    assert merges_named(note) == "sort-merge" and "plan said sparse product" in note, note
    assert "not bounded below 2^62" in note, note
