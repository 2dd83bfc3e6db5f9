"""The generic (worst-case optimal) join against binary joins and brute force.

Every strategy runs on every case: ``shuffle`` (DataFrame joins),
``broadcast`` (numpy tries per partition) and ``partitioned`` (HyperCube grid,
numpy tries per cell).  The random cases run a few times as Spark jobs and
more times in-process (placement ``"driver"``: the same kernel on the driver,
no Spark job); the counts scale with the hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from faq.factor import factor_of
from faq.insideout import evaluate
from faq.io import read_edge_list
from faq.joins import VALUE_COLUMN, Aggregation, Frame, binary_join
from faq.joins import kernel as generic_module  # BATCH_ROWS: the kernel's piece size
from faq.joins import partial as partial_module
from faq.errors import PlanError
from faq.insideout import Environment, plan_for
from faq.joins.generic import generic_join
from faq.language import make_query
from faq.scope import Scope
from faq.semirings import Semiring, get_semiring
from faq.semirings.spark_backend import columns as spark_columns
from tests.brute_force import PY_SEMIRINGS, assert_same_answer, brute_force
from tests.conftest import examples
from tests.helpers import log_add
from tests.strategies import DOMAIN, INF, VALUES, cyclic_faq, factors_of, nontrivial_faq

pytestmark = pytest.mark.usefixtures("spark")

STRATEGIES = ("shuffle", "broadcast", "partitioned")

# Examples per random test in the suite: through Spark jobs (FEW, ONE: also tests/test_generic_join_semirings.py's)
# and in-process.
SPARK = 2
IN_PROCESS = 10

FEW = settings(
    max_examples=examples(SPARK),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
    derandomize=True,
)


ONE = settings(FEW, max_examples=examples(1))
MANY = settings(FEW, max_examples=examples(IN_PROCESS))


def frame(rows, variables, semiring="counting"):
    """A Frame over ``variables`` from tuples ``(*key, value)``."""
    f = factor_of(rows, [f"c{i}" for i in range(len(variables))], semiring)
    columns = [f"c{i} AS {v}" for i, v in enumerate(variables)] + [f"value AS {VALUE_COLUMN}"]
    return Frame(f.df.selectExpr(*columns), tuple(variables))


def indicator(rows, variables):
    f = factor_of([(*r, 1) for r in rows], [f"c{i}" for i in range(len(variables))])
    return Frame(f.df.selectExpr(*[f"c{i} AS {v}" for i, v in enumerate(variables)]).distinct(), tuple(variables))


def rows_of(out: Frame, variables, semiring="counting"):
    """{key in ``variables`` order: sorted list of values}, zero values left out."""
    zero = get_semiring(semiring).zero
    got: dict[tuple, list] = {}
    for r in out.df.select(*variables, VALUE_COLUMN).collect():
        if r[-1] is not None and r[-1] != zero:
            got.setdefault(tuple(r[:-1]), []).append(r[-1])
    return {k: sorted(v) for k, v in got.items()}


def check_against_binary(relations, indicators, semiring="counting", order=()):
    """Every strategy gives binary_join's rows (as multisets per key)."""
    ring = get_semiring(semiring)
    expected_frame = binary_join(relations, indicators, ring)
    variables = expected_frame.variables
    expected = rows_of(expected_frame, variables, semiring)
    for strategy in STRATEGIES:
        out = generic_join(relations, indicators, ring, order, strategy=strategy)
        assert set(out.variables) == set(variables)
        assert out.note.startswith(strategy), out.note
        got = rows_of(out, variables, semiring)
        assert got == expected, (strategy, got, expected)
    return expected


# --- random FAQs, every semiring, through InsideOut with the join forced ------


def run_with_join(atoms, data, free, semiring, join):
    factors = factors_of(atoms, data, semiring)
    query = make_query(atoms, free, semiring=semiring)
    with evaluate(query, factors, join=join) as result:
        assert all(s.join_method == join for s in result.plan.steps)
        rows = result.factor.df.collect()
    return {tuple(r[:-1]): r[-1] for r in rows}


def check_faq(case, semiring, joins):
    atoms, data, free = case
    expected = brute_force(atoms, data, free, semiring, DOMAIN)
    for join in joins:
        got = run_with_join(atoms, data, free, semiring, join)
        assert_same_answer(got, expected, join, atoms)


def in_process_answer(query, factors, join):
    """{key: value} of ``query`` with every step in-process and joined by ``join``, read from the
    driver's copy of the answer (no Spark job); and the steps' notes."""
    with evaluate(query, factors, join=join, placement="driver") as result:
        assert all(s.placement == "driver" and s.join_method == join for s in result.plan.steps), result.plan
        held = result.factor.relation.arrays
        assert held is not None  # the answer was made in-process
        rows = zip(*(held[c].tolist() for c in result.factor.columns()))
        return {tuple(r[:-1]): r[-1] for r in rows}, list(result.notes)


def test_random_bags_agree_with_binary_join():
    """All atoms of a random FAQ as one bag: the generic join's rows are binary_join's."""
    from faq.insideout.binding import bind

    semiring = "real"
    ring = get_semiring(semiring)

    @FEW
    @given(nontrivial_faq(semiring))
    def check(case):
        atoms, data, free = case
        factors = factors_of(atoms, data, semiring)
        frames = list(bind(make_query(atoms, free, semiring=semiring), factors, ring).values())
        check_against_binary(frames, [], semiring)

    check()


def test_random_bags_in_process_agree_with_binary_join_and_brute_force():
    """In-process: a random FAQ with every variable free (its atoms one bag, nothing summed away),
    joined by the generic join's kernel and by the binary merges, both equal to brute force."""
    semiring = "real"

    @MANY
    @given(nontrivial_faq(semiring))
    def check(case):
        atoms, data, _ = case
        every = list(dict.fromkeys(v for _, vs in atoms for v in vs))
        query = make_query(atoms, every, semiring=semiring)
        factors = factors_of(atoms, data, semiring)
        expected = brute_force(atoms, data, every, semiring, DOMAIN)
        generic, notes = in_process_answer(query, factors, "generic")
        assert all(n.startswith("in-process") for n in notes), notes
        assert_same_answer(generic, expected, "in-process generic", atoms)
        binary, _ = in_process_answer(query, factors, "binary")
        assert_same_answer(binary, expected, "in-process binary", atoms)

    check()


# --- ⊕-aggregation inside the broadcast tasks -------------------------------------


def aggregated_rows(out: Frame, keep, ring) -> dict:
    """{key: ⊕ of the rows' values} over ``keep`` (zeros left out): what the executor's group-by makes."""
    from pyspark.sql import functions as F

    grouped = out.df.groupBy(*keep) if keep else out.df.groupBy()
    rows = grouped.agg(spark_columns(ring).sum(F.col(VALUE_COLUMN)).alias("__s")).collect()
    zero = ring.zero
    return {tuple(r[:-1]): r[-1] for r in rows if r[-1] is not None and r[-1] != zero}


def log_semiring() -> Semiring:
    """The log semiring (log-sum-exp, +) as a user defines it: Spark Column functions for ⊕, ⊗
    and ⊕'s aggregate, and the numpy forms declared beside them."""
    from pyspark.sql import functions as F

    def log_sum(x):
        return F.coalesce(F.log(F.sum(F.exp(x))), F.lit(-INF))  # Spark's log(0) is null

    return Semiring("log", "double", -INF, 0.0, log_add, lambda a, b: a + b, log_sum,
                    samples=(-INF, 0.0, -1.5, 2.0), numpy_add=np.logaddexp, numpy_mul=np.add)


def py_log_add(a: float, b: float) -> float:
    """log(e^a + e^b) in plain Python, for the brute-force evaluator."""
    if a == -INF or b == -INF:
        return max(a, b)
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


def test_user_defined_semiring_with_numpy_forms_aggregates_inside_tasks(monkeypatch):
    """A user-defined semiring that declares numpy forms gets the in-task aggregation: the
    join's note says ⊕ ran inside the tasks, and the result is brute force's (random cyclic
    FAQs, and a triangle whose values are all one, so its bindings are unvalued: each key's
    value is one ⊕ ... ⊕ one = log of its count)."""
    from faq.insideout.binding import bind

    log = log_semiring()
    monkeypatch.setitem(PY_SEMIRINGS, "log", (py_log_add, lambda a, b: a + b, -INF, 0.0))
    monkeypatch.setitem(VALUES, "log", [-INF, 0.0, 0.5, -1.0, 2.0])

    def aggregated_in_tasks(frames, keep):
        out = generic_join(frames, [], log, (), strategy="broadcast", aggregate=Aggregation(keep, log))
        assert out.note.startswith("broadcast") and "; ⊕ of log inside tasks" in out.note, out.note
        return aggregated_rows(out, keep, log)

    @FEW
    @given(cyclic_faq("log"))
    def check(case):
        atoms, data, free = case
        expected = brute_force(atoms, data, free, "log", DOMAIN)
        factors = factors_of(atoms, data, log)
        frames = list(bind(make_query(atoms, free), factors, log).values())
        assert_same_answer(aggregated_in_tasks(frames, tuple(free)), expected, "aggregated")

    check()

    # In-process (no Spark job): the generic join's kernel ⊕-aggregates with the declared numpy forms.
    @MANY
    @given(cyclic_faq("log"))
    def check_in_process(case):
        atoms, data, free = case
        expected = brute_force(atoms, data, free, "log", DOMAIN)
        got, notes = in_process_answer(make_query(atoms, free), factors_of(atoms, data, log), "generic")
        assert all(n.startswith("in-process") for n in notes), notes
        assert_same_answer(got, expected, "in-process", atoms)

    check_in_process()

    ones = [(a, b, 0.0) for a, b, _ in TRIANGLE_EDGES]
    rels = edge_frames(ones, [("a", "b"), ("a", "c"), ("b", "c")], log)
    atoms = [("e", ["a", "b"]), ("e", ["a", "c"]), ("e", ["b", "c"])]
    expected = brute_force(atoms, {"e": ones}, ["a"], "log", range(4))
    assert_same_answer(expected, {(0,): math.log(3), (1,): 0.0, (2,): math.log(2)}, "brute force")  # 3, 1, 2 triangles
    assert_same_answer(aggregated_in_tasks(rels, ("a",)), expected, "unvalued")


def test_executor_passes_the_aggregation_and_can_list_instead():
    """Through InsideOut: the triangle count (a scalar) and per-vertex counts (a free
    variable) come from partial aggregates, and equal the listing path's."""
    rng = np.random.default_rng(11)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 25, size=(200, 2)) if a != b})
    edge = factor_of([(a, b, 1) for a, b in pairs], ["src", "dst"], "counting", name="edge")
    answers = {}
    for aggregate_in_tasks in (True, False):
        for text in ("count() := edge(a,b), edge(a,c), edge(b,c)", "q(b) := edge(a,b), edge(a,c), edge(b,c)"):
            with evaluate(text, {"edge": edge}, join="generic_broadcast", task_aggregation=aggregate_in_tasks) as result:
                answers[aggregate_in_tasks, text] = sorted(map(tuple, result.factor.df.collect()))
                planned = result.plan.steps[0].strategy.aggregation  # the plan's decision ...
                ran = result.notes[0]  # ... and what the join reports it did
            assert planned.startswith("⊕") if aggregate_in_tasks else "task aggregation is off" in planned
            assert ("⊕" in ran) == aggregate_in_tasks, ran
    brute = sum(1 for a, b in pairs for c in range(25) if (a, c) in set(pairs) and (b, c) in set(pairs))
    assert answers[True, "count() := edge(a,b), edge(a,c), edge(b,c)"] == [(brute,)]
    for text in ("count() := edge(a,b), edge(a,c), edge(b,c)", "q(b) := edge(a,b), edge(a,c), edge(b,c)"):
        assert answers[True, text] == answers[False, text]


def test_user_defined_semiring_and_overflowing_values_list_bindings():
    """No numpy kernel for a user-defined semiring without numpy forms; int64 partial sums that
    could overflow: both list every binding (the decision says why) and stay exact."""
    from pyspark.sql import functions as F

    custom = Semiring("my_counting", "bigint", 0, 1, lambda a, b: a + b, lambda a, b: a * b, F.sum)
    rels = edge_frames(TRIANGLE_EDGES, [("a", "b"), ("a", "c"), ("b", "c")])
    out = generic_join(rels, [], custom, ("a", "b", "c"), strategy="broadcast", aggregate=Aggregation(("a",), custom))
    assert "needs numpy_add=/numpy_mul=" in out.note
    assert out.variables == ("a", "b", "c")
    assert aggregated_rows(out, ("a",), custom) == {(0,): 3, (1,): 1, (2,): 2}  # 0→1→2, 0→1→3, 0→2→3; 1→2→3; 2→3→0, 2→0→3

    big = 1 << 31  # a 2-path's value is 2^62: above INT_LIMIT / 2, so a sum of two could overflow
    r = frame([(0, 1, big), (0, 2, big)], ["a", "b"], "integer")
    t = frame([(1, 5, big), (2, 5, big)], ["b", "c"], "integer")
    integer = get_semiring("integer")
    out = generic_join([r, t], [], integer, ("a", "b", "c"), strategy="broadcast",
                       aggregate=Aggregation(("a", "b"), integer))
    assert "overflow" in out.note
    assert aggregated_rows(out, ("a", "b"), integer) == {(0, 1): 1 << 62, (0, 2): 1 << 62}


def test_tiny_flushes_emit_several_partials_per_key(monkeypatch):
    """Partial aggregates flushed every few rows: several rows per key, combined exactly."""
    rng = np.random.default_rng(5)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 30, size=(300, 2)) if a != b})
    edges = [(a, b, float(1 + (a * b) % 3)) for a, b in pairs]
    rels = edge_frames(edges, [("a", "b"), ("a", "c"), ("b", "c")], "real")
    ring = get_semiring("real")
    expected = aggregated_rows(generic_join(rels, [], ring, ("a", "b", "c"), strategy="broadcast"), ("c",), ring)
    monkeypatch.setattr(generic_module, "BATCH_ROWS", 5)
    monkeypatch.setattr(partial_module, "FLUSH_ROWS", 2)
    out = generic_join(rels, [], ring, ("a", "b", "c"), strategy="broadcast", aggregate=Aggregation(("c",), ring))
    assert out.df.count() > len(expected)  # several partials per key
    assert_same_answer(aggregated_rows(out, ("c",), ring), expected, "flushed")


# --- bags -----------------------------------------------------------------------

TRIANGLE_EDGES = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1), (1, 3, 1), (0, 3, 1), (3, 0, 1), (2, 0, 1)]


def edge_frames(edges, pairs, semiring="counting"):
    return [frame(edges, p, semiring) for p in pairs]


def test_triangle():
    rels = edge_frames(TRIANGLE_EDGES, [("a", "b"), ("a", "c"), ("b", "c")])
    expected = check_against_binary(rels, [], order=("a", "b", "c"))
    assert len(expected) == 6


def test_four_cycle_in_every_attribute_order():
    edges = [(0, 1, 2), (1, 2, 1), (2, 3, 3), (3, 0, 1), (0, 2, 1), (2, 0, 5), (1, 0, 1)]
    rels = edge_frames(edges, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    for order in [("b", "d", "a", "c"), ()]:
        check_against_binary(rels, [], order=order)


def test_k4_directed_four_cliques():
    rng = np.random.default_rng(3)
    edges = sorted({(int(a), int(b)) for a, b in rng.integers(0, 9, size=(45, 2)) if a != b})
    edges = [(a, b, 1) for a, b in edges]
    pairs = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    expected = check_against_binary(edge_frames(edges, pairs), [], order=("a", "b", "c", "d"))
    present = {(a, b) for a, b, _ in edges}
    brute = sum(
        1
        for a in range(9) for b in range(9) for c in range(9) for d in range(9)
        if all(p in present for p in [(a, b), (a, c), (a, d), (b, c), (b, d), (c, d)])
    )
    assert sum(len(v) for v in expected.values()) == brute > 0


def test_ternary_relation_with_binary_ones_and_values():
    r = frame([(0, 1, 2, 2.0), (0, 1, 3, 0.5), (1, 2, 0, 3.0), (0, 2, 2, 1.5)], ["a", "b", "c"], "real")
    s = frame([(1, 2, 4.0), (2, 0, 2.0), (1, 3, -1.0), (2, 2, 1.0)], ["b", "c"], "real")
    t = frame([(2, 7, 1.0), (0, 8, 2.0), (2, 9, 0.5)], ["c", "d"], "real")
    for order in [("a", "b", "c", "d"), ("d", "c", "b", "a")]:
        check_against_binary([r, s, t], [], "real", order)


def test_repeated_relation_and_duplicate_keys():
    """A relation used twice multiplies twice; repeated keys keep their multiplicity."""
    r = frame([(0, 1, 2), (0, 1, 3), (1, 1, 5), (1, 2, 7)], ["a", "b"])
    s = frame([(1, 4), (1, 6), (2, 1)], ["b"])
    expected = check_against_binary([r, r, s], [], order=("b", "a"))
    assert expected[(0, 1)] == sorted(x * y * z for x in (2, 3) for y in (2, 3) for z in (4, 6))


def test_indicators_semi_join():
    rels = edge_frames(TRIANGLE_EDGES, [("a", "b"), ("b", "c")])
    inds = [indicator([(0, 2), (1, 3)], ("a", "c")), indicator([(0,), (1,), (5,)], ("a",))]
    expected = check_against_binary(rels, inds, order=("a", "b", "c"))
    assert {k[0] for k in expected} <= {0, 1}


@pytest.mark.parametrize("which", [0, 2])
def test_empty_relation_gives_empty_join(which):
    rels = edge_frames(TRIANGLE_EDGES, [("a", "b"), ("a", "c"), ("b", "c")])
    rels[which] = frame([], rels[which].variables)
    assert check_against_binary(rels, []) == {}


def test_attribute_only_in_one_relation_and_disconnected_parts():
    r = frame([(0, 1, 2), (1, 2, 3)], ["a", "b"])
    s = frame([(1, 10, 5), (1, 11, 7), (2, 12, 1)], ["b", "x"])  # x only here
    u = frame([(4, 2), (6, 3)], ["y"])  # a cross product
    check_against_binary([r, s, u], [], order=("a", "b", "x", "y"))
    check_against_binary([r, s, u], [], order=("x", "y"))  # completed by the join itself


def test_boolean_and_min_plus_values():
    e = [(0, 1, True), (1, 2, True), (0, 2, False), (2, 0, True), (1, 0, True), (0, 0, True)]
    check_against_binary(edge_frames(e, [("a", "b"), ("b", "c"), ("c", "a")], "boolean"), [], "boolean")
    w = [(0, 1, 1.5), (1, 2, -2.0), (2, 0, 0.25), (0, 2, INF), (2, 1, 3.0)]
    check_against_binary(edge_frames(w, [("a", "b"), ("b", "c"), ("c", "a")], "min_plus"), [], "min_plus")


def test_large_integer_and_negative_keys_use_a_dictionary():
    big = 2**62
    e = [(-big, 5, 1), (5, big, 1), (-big, big, 1), (big, -big, 1), (5, -big, 1)]
    expected = check_against_binary(edge_frames(e, [("a", "b"), ("a", "c"), ("b", "c")]), [])
    assert (-big, 5, big) in expected


def test_string_keys_fall_back_to_shuffle(spark):
    """A forced broadcast on string keys is planned as shuffle, with the reason; run directly,
    the broadcast strategy refuses string keys with a clear error."""
    from faq.factor import Factor

    df = spark.createDataFrame([("x", "y", 1), ("y", "z", 1), ("x", "z", 1)], "a string, b string, value bigint")
    edge = Factor.from_dataframe(df, ["a", "b"], "counting", name="edge")
    text = "q(a,b,c) := edge(a,b), edge(a,c), edge(b,c)"
    the_plan = plan_for(text, {"edge": edge}, join="generic_broadcast")
    decision = the_plan.steps[0].strategy
    assert the_plan.steps[0].join_method == "generic_broadcast" and decision.name == "shuffle"
    assert "integer keys" in decision.reason
    with evaluate(text, {"edge": edge}, plan=the_plan) as result:
        assert [tuple(x) for x in result.factor.df.collect()] == [("x", "y", "z", 1)]
    frame_ = Frame(df.withColumnRenamed("value", VALUE_COLUMN), ("a", "b"))
    with pytest.raises(PlanError, match="integer keys"):
        generic_join([frame_], [], get_semiring("counting"), ("a", "b"), strategy="broadcast")


def test_strategy_from_size_limits_and_forcing():
    """The plan broadcasts small integer relations, partitions them when the index exceeds the
    index memory (a forced broadcast runs anyway: no row limit), and shuffles or partitions when
    told; each runs as planned."""
    edge = factor_of(TRIANGLE_EDGES, ["s", "t"], "counting", name="edge")
    text = "count() := edge(a,b), edge(a,c), edge(b,c)"
    small = Environment(index_memory=100)
    cases = [
        ("auto", Environment(), "broadcast", "index of 8 rows"),
        ("auto", small, "partitioned", "exceeds the index memory"),
        ("generic_partitioned", Environment(), "partitioned", "forced"),
        ("generic_broadcast", small, "broadcast", "forced"),
        ("generic_shuffle", Environment(), "shuffle", "forced"),
    ]
    counts = set()
    for join, environment, strategy, reason in cases:
        the_plan = plan_for(text, {"edge": edge}, join=join, environment=environment)
        decision = the_plan.steps[0].strategy
        assert decision.name == strategy and reason in decision.reason, (join, decision)
        with evaluate(text, {"edge": edge}, plan=the_plan) as result:
            assert result.notes[0].startswith(strategy)
            counts.add(result.scalar())
    assert len(counts) == 1


def test_shuffle_in_batches_lists_every_binding_once():
    """Seeds hashed into batches, each checkpointed: the union is binary_join's listing."""
    rng = np.random.default_rng(3)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 12, size=(60, 2)) if a != b})
    rels = edge_frames([(a, b, 1) for a, b in pairs], [("a", "b"), ("a", "c"), ("b", "c")])
    expected = rows_of(binary_join(rels, [], get_semiring("counting")), ("a", "b", "c"))
    with Scope() as scope:
        out = generic_join(rels, [], get_semiring("counting"), ("a", "b", "c"), strategy="shuffle", scope=scope,
                           batches=4)
        assert out.note == "shuffle, seeds in 4 batches by hash of a; every binding listed"
        assert rows_of(out, ("a", "b", "c")) == expected and expected
    with pytest.raises(PlanError, match="needs a scope"):
        generic_join(rels, [], get_semiring("counting"), ("a", "b", "c"), strategy="shuffle", batches=2)


def test_the_plan_sizes_shuffle_batches_from_the_index_memory(spark):
    """String keys shuffle; with little index memory the plan runs the seeds in batches, explain says
    how many, and the count is the one-batch count."""
    from faq.factor import Factor

    rows = [(str(a), str(b), 1) for a, b, _ in TRIANGLE_EDGES]
    edge = Factor.from_dataframe(spark.createDataFrame(rows, "s string, t string, value bigint"), ["s", "t"],
                                 "counting", name="edge")
    text = "count() := edge(a,b), edge(a,c), edge(b,c)"
    whole = plan_for(text, {"edge": edge})
    # 512 bytes: three batches (128 made twelve, each a few seconds of Spark stages, for the same check).
    tight = plan_for(text, {"edge": edge}, environment=Environment(parallelism=1, index_memory=512))
    assert whole.steps[0].strategy.batches == 1
    batches = tight.steps[0].strategy.batches
    assert 1 < batches <= 64
    assert f"seeds in {batches} batches" in str(tight) and "per batch onto ()" in str(tight)
    answers = []
    for the_plan in (whole, tight):
        with evaluate(text, {"edge": edge}, plan=the_plan) as result:
            answers.append(result.scalar())
            note = result.notes[0]
    assert f"seeds in {batches} batches" in note
    assert answers[0] == answers[1] == 6


def test_a_plan_for_another_query_is_refused():
    edge = factor_of(TRIANGLE_EDGES, ["s", "t"], "counting", name="edge")
    the_plan = plan_for("count() := edge(a,b), edge(b,c)", {"edge": edge})
    with pytest.raises(PlanError, match="the plan is for"):
        evaluate("count() := edge(a,b), edge(a,c), edge(b,c)", {"edge": edge}, plan=the_plan)


def test_small_batches_bound_pieces(monkeypatch):
    """With tiny pieces the depth-first extension still finds every binding once."""
    rng = np.random.default_rng(7)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 30, size=(300, 2)) if a != b})
    edges = [(a, b, 1) for a, b in pairs]
    monkeypatch.setattr(generic_module, "BATCH_ROWS", 5)
    check_against_binary(edge_frames(edges, [("a", "b"), ("a", "c"), ("b", "c")]), [], order=("a", "b", "c"))


# --- real graphs ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["email-Eu-core.txt.gz", "wiki-Vote.txt.gz"])
def test_feed_forward_triangles_on_real_graphs(name):
    """Counts equal scipy's Σ (A ∘ A·A) and, for each strategy, the binary plan's answer."""
    import scipy.sparse as sp
    from pyspark.sql import functions as F

    edges = read_edge_list(f"tests/data/{name}")
    pdf = edges.df.select("src", "dst").toPandas()
    n = int(max(pdf.src.max(), pdf.dst.max())) + 1
    a = sp.csr_matrix((np.ones(len(pdf)), (pdf.src, pdf.dst)), shape=(n, n))
    expected = int((a.multiply(a @ a)).sum())
    df = edges.df.select("src", "dst", F.col(edges.value).alias(VALUE_COLUMN))
    rels = [
        Frame(df.toDF(x, y, VALUE_COLUMN), (x, y)) for x, y in [("a", "b"), ("a", "c"), ("b", "c")]
    ]
    ring = get_semiring("counting")
    binary = binary_join(rels, [], ring).df.agg(F.sum(VALUE_COLUMN)).first()[0]
    assert binary == expected
    for strategy in STRATEGIES:
        out = generic_join(rels, [], ring, ("a", "b", "c"), strategy=strategy)
        assert out.df.agg(F.sum(VALUE_COLUMN), F.count(F.lit(1))).first() == (expected, expected)
