"""Delta rules in the compiled loop: equal to the numpy join and to brute force, and the plan says which ran.

Random delta queries (2-4 terms over up to four variables, repeated
variables, a nullary relation, a pair of variables that must differ) over
resident relations with a base, overlay levels and a batch: the rules' ⊕ in
the compiled loop (:mod:`faq.incremental.delta_loop`) equals the numpy
join's, and in the integer ring both equal Q(after) − Q(before) by brute
force over every assignment.  No Spark.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.incremental.engine import run_rules
from faq.incremental.index import KeyedRows, ResidentRelation, merge_rows
from faq.incremental import rule_kernel
from faq.incremental.rule_kernel import COMPILED, NUMPY, rule_kernels
from faq.incremental.rules import DeltaQuery, Term, plan_rules, views_needed
from faq.joins.compiled import AVAILABLE
from faq.semirings import get_semiring
from faq.semirings.numpy_backend import numpy_ops
from tests.conftest import examples

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")

VARIABLES = "abcd"
DOMAIN = 4
# Values of base rows and of changes per semiring (a ring's changes are signed).
BASE_VALUES = {"integer": [1, 2, 3], "real": [0.5, 1.25, 2.0], "min_plus": [0.5, 1.0, 3.0]}
CHANGE_VALUES = {"integer": [-2, -1, 1, 2], "real": [-1.5, 0.5, 2.25], "min_plus": [0.25, 2.0, 4.0]}


@st.composite
def delta_cases(draw, semiring: str):
    """(query, {relation: arity}, base rows, overlay batches, the batch): rows as {key: value}."""
    arity = {"R": draw(st.integers(1, 3)), "S": draw(st.integers(1, 2)), "C": 0}
    terms = []
    for _ in range(draw(st.integers(2, 4))):
        name = draw(st.sampled_from(["R", "R", "S", "C"]))
        terms.append(Term(name, tuple(draw(st.sampled_from(VARIABLES)) for _ in range(arity[name]))))
    if not any(t.variables for t in terms):
        terms.append(Term("R", tuple(VARIABLES[:arity["R"]])))
    used = sorted({v for t in terms for v in t.variables})
    distinct = ()
    if len(used) >= 2 and draw(st.booleans()):
        a, b = draw(st.lists(st.sampled_from(used), min_size=2, max_size=2, unique=True))
        distinct = ((a, b),)
    query = DeltaQuery(tuple(terms), (), distinct)
    names = sorted({t.relation for t in terms})

    def rows(values, most):
        out = {}
        for name in names:
            keys = draw(st.lists(st.tuples(*[st.integers(0, DOMAIN - 1)] * arity[name]), max_size=most))
            out[name] = {k: draw(st.sampled_from(values)) for k in keys}
        return out

    base = rows(BASE_VALUES[semiring], 12)
    overlays = [rows(CHANGE_VALUES[semiring], 4) for _ in range(draw(st.integers(0, 2)))]
    batch = rows(CHANGE_VALUES[semiring], 5)
    return query, arity, base, overlays, batch


def keyed(rows: dict, arity: int, ops) -> KeyedRows:
    keys = list(rows)
    columns = [np.array([k[i] for k in keys], dtype=np.int64) for i in range(arity)]
    values = np.array([rows[k] for k in keys], dtype=ops.dtype)
    return merge_rows(columns, values, ops)


def resident(query, arity, base, overlays, ops) -> dict:
    """The relations as the maintained state holds them: a base, each overlay batch committed on top."""
    rules = plan_rules(query)
    relations = {}
    for name, rows in base.items():
        relation = ResidentRelation.build(name, tuple(f"c{i}" for i in range(arity[name])),
                                          keyed(rows, arity[name], ops), ops)
        for view in views_needed(rules).get(name, []):
            if view.order:  # a nullary relation is read as its one value, not through an index
                relation.register(view)
        for overlay in overlays:
            change = keyed(overlay[name], arity[name], ops)
            if len(change):
                relation.commit(change, compact=False)
        relations[name] = relation
    return relations


def brute_force(query, state: dict) -> int:
    """Σ over every assignment of the query's variables of the ⊗ (×) of its terms' values (integer ring)."""
    used = sorted({v for t in query.terms for v in t.variables})
    total = 0
    for values in itertools.product(range(DOMAIN), repeat=len(used)):
        at = dict(zip(used, values))
        if any(at[a] == at[b] for a, b in query.distinct):
            continue
        product = 1
        for term in query.terms:
            product *= state[term.relation].get(tuple(at[v] for v in term.variables), 0)
        total += product
    return total


def summed(*parts: dict) -> dict:
    out: dict = {}
    for part in parts:
        for key, value in part.items():
            out[key] = out.get(key, 0) + value
    return out


@pytest.mark.parametrize("semiring, seeds_found, merge_ratio", [
    ("integer", "loop", 8), ("integer", "numpy", 0), ("integer", "direct", 8), ("real", "direct", 0),
    ("min_plus", "loop", 8), ("min_plus", "numpy", 0), ("integer", "loop, threads", 8), ("integer", "numpy, threads", 0)])
def test_compiled_rules_equal_the_numpy_join_and_brute_force(semiring, seeds_found, merge_ratio, monkeypatch):
    """``seeds_found``: where the seeds' keys are looked up in the runs -- by the loop (a few seeds, as
    here), in numpy, or in numpy through every first level's direct index (else only large ones');
    ", threads": every batch's seeds split between three threads, as large batches' are (integer
    totals summed exactly); ``merge_ratio``: 8 merges the last depth's segments here (they are short),
    0 gallops."""
    ops = numpy_ops(get_semiring(semiring))
    monkeypatch.setattr(rule_kernel, "MERGE_RATIO", merge_ratio)
    if seeds_found.endswith("threads"):
        monkeypatch.setattr(rule_kernel, "SPLIT_SEEDS", 1)
        monkeypatch.setattr(rule_kernel, "SEED_THREADS", 3)
    if not seeds_found.startswith("loop"):
        monkeypatch.setattr(rule_kernel, "FEW_SEEDS", 0)
    if seeds_found == "direct":
        monkeypatch.setattr(rule_kernel, "DIRECT_MIN_ENTRIES", 1)

    @settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(delta_cases(semiring))
    def check(case):
        query, arity, base, overlays, batch = case
        rules = plan_rules(query)
        kernels = rule_kernels(rules, ops)
        assert all(k.compiled for k in kernels), kernels
        relations = resident(query, arity, base, overlays, ops)
        batches = {name: keyed(rows, arity[name], ops) for name, rows in batch.items() if rows}
        stats: list = []
        compiled = run_rules(rules, relations, batches, ops, DOMAIN, stats, kernels=kernels)[1]
        numpy = run_rules(rules, relations, batches, ops, DOMAIN)[1]
        assert {s.kernel for s in stats} <= {COMPILED}
        assert len(compiled) == len(numpy)
        np.testing.assert_allclose(compiled, numpy, rtol=1e-9)
        if semiring == "integer":
            before = {n: summed(base[n], *(o[n] for o in overlays)) for n in base}
            after = {n: summed(before[n], batch[n]) for n in base}
            expected = brute_force(query, after) - brute_force(query, before)
            assert (int(compiled[0]) if len(compiled) else 0) == expected

    check()


def test_the_plan_names_the_kernel_of_each_rule_and_that_one_runs(spark):
    from faq.factor import factor_of
    from faq import maintain

    edges = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
    with maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edges}, placement="driver") as count:
        planned = count.explain().kernels
        assert planned == (COMPILED,) * 3
        assert "; compiled loop" in str(count.explain())
        assert count.apply(edge=[(1, 3, 1)]).collect()[0]["diff"] == 1
        assert tuple(r.kernel for r in count.last_rules) == planned
    with maintain("per(a) := edge(a,b), edge(b,c), edge(a,c)", {"edge": edges}, placement="driver") as keyed_query:
        planned = keyed_query.explain().kernels
        assert all(k.startswith(NUMPY) for k in planned), planned
        keyed_query.apply(edge=[(1, 3, 1)])
        assert {r.kernel for r in keyed_query.last_rules} == {NUMPY}
