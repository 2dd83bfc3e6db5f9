"""Plans run in pieces (faq.insideout.pieces): one variable's values split into ranges, each piece planned and
run in-process, the answers ⊕-combined (or concatenated when the variable is free).

Checked against numpy's matrix powers on random digraphs (hypothesis), in several semirings, summed and free
split variables; and the choice itself: a plan whose step exceeds a small in-process memory over held factors
is split, printed so, and exact.
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.factor import factor_of
from faq.insideout import pieces
from faq.insideout.binding import plan_for
from faq.insideout.executor import evaluate
from faq.insideout.physical import Environment
from faq.language import parse_query

CYCLE = "count() := e(a, b), e(b, c), e(c, d), e(d, a)"
CYCLE_AT = "q(a) := e(a, b), e(b, c), e(c, d), e(d, a)"
PATHS_FROM = "q(a, c) := e(a, b), e(b, c)"

digraphs = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 3)), min_size=1, max_size=40)


def _matrix(edges, n=10):
    a = np.zeros((n, n), dtype=np.int64)
    for s, d, w in edges:
        a[s, d] += w  # repeated rows of a factor are ⊕-summed, as the join treats every row
    return a


def _split(text, factors, variable, k):
    """The driver's plan for ``text`` with pieces over ``variable`` in ``k`` ranges (None: fewer values)."""
    query = parse_query(text)
    env = Environment(placement="driver")
    whole = plan_for(query, factors, environment=env, split=False)
    atoms = tuple(i for i, atom in enumerate(query.atoms, start=1) if variable in atom.variables)
    weights = pieces._weights(query, factors, atoms, variable)
    found = pieces._planned(whole, query, factors, variable, atoms, weights, k,
                            lambda q, f: plan_for(q, f, environment=env, order=whole.order, split=False))
    return None if found is None else replace(whole, pieces=found)


def _answer(result):
    table = result.held
    keys = list(zip(*(np.asarray(table.keys[v]).tolist() for v in table.variables))) or [()]
    return dict(zip(keys, np.asarray(table.values).tolist()))


def test_cut_points_cover_every_value():
    values, weights = np.arange(10), np.ones(10)
    cuts = pieces.cut_points(values, weights, 4)
    assert len(cuts) == 3 and list(cuts) == sorted(cuts)
    owner = [sum(pieces.in_range(values, cuts, p)[i] for p in range(len(cuts) + 1)) for i in range(10)]
    assert owner == [1] * 10  # every value in exactly one piece
    assert pieces.cut_points(values[:1], weights[:1], 4) == ()


@pytest.mark.usefixtures("spark")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=digraphs, k=st.integers(2, 5), variable=st.sampled_from("abcd"))
def test_summed_variable_split_is_exact(edges, k, variable):
    factors = {"e": factor_of(edges, ["src", "dst"], "counting", name="e")}
    plan = _split(CYCLE, factors, variable, k)
    if plan is None:  # too few distinct values to cut
        return
    a = _matrix(edges)
    with evaluate(CYCLE, factors, plan=plan) as result:
        assert int(result.scalar()) == int(np.trace(np.linalg.matrix_power(a, 4)))
        assert len(result.notes) == len(plan.pieces.plans)


@pytest.mark.usefixtures("spark")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=digraphs, k=st.integers(2, 4), text=st.sampled_from([CYCLE_AT, PATHS_FROM]),
       variable=st.sampled_from("abc"))
def test_free_and_summed_splits_keep_every_key(edges, k, text, variable):
    factors = {"e": factor_of(edges, ["src", "dst"], "counting", name="e")}
    plan = _split(text, factors, variable, k)
    if plan is None:
        return
    a = _matrix(edges)
    if text == CYCLE_AT:
        power = np.linalg.matrix_power(a, 4)
        expected = {(i,): int(power[i, i]) for i in range(10) if power[i, i]}
    else:
        power = a @ a
        expected = {(i, j): int(power[i, j]) for i in range(10) for j in range(10) if power[i, j]}
    assert plan.pieces.free == (variable in parse_query(text).free)
    with evaluate(text, factors, plan=plan) as result:
        assert _answer(result) == expected


@pytest.mark.usefixtures("spark")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.floats(0.5, 4.0)), min_size=1,
                      max_size=30), k=st.integers(2, 4))
def test_min_plus_split_takes_the_least_over_pieces(edges, k):
    factors = {"e": factor_of(edges, ["src", "dst"], "min_plus", name="e")}
    text = "q(a, c) := e(a, b), e(b, c)"
    plan = _split(text, factors, "b", k)
    if plan is None:
        return
    best: dict = {}
    for s, b, w in edges:
        for b2, d, w2 in edges:
            if b2 == b:
                best[s, d] = min(best.get((s, d), np.inf), w + w2)
    with evaluate(text, factors, plan=plan) as result:
        got = _answer(result)
    assert got.keys() == best.keys()
    assert all(got[key] == pytest.approx(best[key]) for key in best)


@pytest.mark.usefixtures("spark")
def test_a_plan_over_the_memory_is_split_and_printed():
    rng = np.random.default_rng(7)
    hubs = [(0, int(d), 1) for d in range(1, 200)] + [(int(s), 0, 1) for s in range(1, 200)]
    rest = [(int(s), int(d), 1) for s, d in rng.integers(0, 200, size=(600, 2)) if s != d]
    edges = hubs + rest
    factors = {"e": factor_of(edges, ["src", "dst"], "counting", name="e")}
    query = parse_query(CYCLE)
    whole = plan_for(query, factors, environment=Environment(placement="auto", local_memory=1 << 20), split=False)
    assert any(s.placement == "executors" for s in whole.steps)  # the 2-paths through the hub: > 1 MiB
    split = plan_for(query, factors, environment=Environment(placement="auto", local_memory=1 << 20))
    assert split.pieces is not None and len(split.pieces.plans) >= 2
    assert all(s.placement == "driver" for p in split.pieces.plans for s in p.steps)
    text = str(split)
    assert f"runs in {len(split.pieces.plans)} pieces over {split.pieces.variable}" in text
    assert "piece 1's plan" in text
    html = split._repr_html_()  # a notebook shows the pieces and the first piece's steps, not the unsplit ones
    assert f"in {len(split.pieces.plans)} pieces over {split.pieces.variable}" in html and "e__" in html
    from faq.insideout.plans import Plan

    assert Plan.from_dict(split.to_dict()) == split  # kept and read back, pieces included
    a = np.zeros((200, 200), dtype=np.int64)
    for s, d, w in edges:
        a[s, d] += w
    with evaluate(CYCLE, factors, plan=split) as result:
        assert int(result.scalar()) == int(np.trace(np.linalg.matrix_power(a, 4)))


@pytest.mark.usefixtures("spark")
def test_mixed_aggregates_split_only_a_free_variable():
    factors = {"e": factor_of([(0, 1, 0.5), (1, 2, 2.0)], ["src", "dst"], "real", name="e")}
    query = parse_query("q(a) := e(a, b), e(b, c)")
    query = replace(query, aggregates=(("c", "max_product"),))
    whole = plan_for(query, factors, environment=Environment(placement="driver"), split=False)
    largest = replace(whole.steps[0], placement="executors")
    names = [v for _, v, _ in pieces._candidates(replace(whole, steps=(largest, *whole.steps[1:])), query)]
    assert set(names) <= {"a"}


@pytest.mark.usefixtures("spark")
def test_a_restricted_factor_never_takes_a_callers_name():
    edges = [(0, 1, 1), (1, 2, 1), (2, 0, 1), (2, 3, 1), (3, 0, 1)]
    other = [(5, 5, 7)]  # a factor the caller named as a restricted one would be
    factors = {"e": factor_of(edges, ["src", "dst"], "counting", name="e"),
               "e__src": factor_of(other, ["x", "y"], "counting", name="e__src")}
    query = parse_query(CYCLE)
    piece_query, piece_factors = pieces._restricted(query, factors, (1, 2), "b", (2,), 0)
    assert piece_factors["e__src"] is factors["e__src"]
    assert {atom.factor for atom in piece_query.atoms} >= {"e__dst", "e__src_"}
    assert piece_factors["e__src_"].relation.rows == 2  # the rows of e with src < 2


@pytest.mark.usefixtures("spark")
def test_int64_sums_across_pieces_are_checked():
    from faq.errors import IntegerOverflowError

    big = 2 ** 62  # each piece's sum fits int64; the two together do not
    factors = {"e": factor_of([(0, 0, big), (1, 0, big)], ["src", "dst"], "counting", name="e"),
               "g": factor_of([(0, 1)], ["x"], "counting", name="g")}
    text = "count() := e(a, b), g(b)"
    plan = _split(text, factors, "a", 2)
    assert plan is not None and len(plan.pieces.plans) == 2
    with pytest.raises(IntegerOverflowError):
        evaluate(text, factors, plan=plan).scalar()
