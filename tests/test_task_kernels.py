"""The broadcast task's kernels without Spark: the numpy kernel (listing and ⊕ inside the task) and
the compiled one (:mod:`faq.joins.compiled`) against brute force on random small graphs."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.joins import Aggregation
from faq.joins import compiled
from faq.joins.compiled import AVAILABLE, aggregate_seeds, compilable
from faq.joins.kernel import build_kernel, run_kernel
from faq.semirings import get_semiring
from faq.semirings.numpy_backend import numpy_ops
from tests.brute_force import PY_SEMIRINGS, same_value

PATTERNS = {
    "triangle": [("a", "b"), ("b", "c"), ("a", "c")],
    "cycle": [("a", "b"), ("b", "c"), ("c", "a")],
    "clique4": [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")],
    "path3": [("a", "b"), ("b", "c"), ("c", "d")],
}
# Semirings with a compiled form (+, ×, min, max over int64 or float64).
SEMIRINGS = ("counting", "real", "min_plus", "max_plus", "max_min")

graphs = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), st.integers(1, 9)), min_size=1, max_size=60)


def kernel_for(edges, pattern, semiring_name, aggregate):
    """The broadcast kernel of ``pattern`` over ``edges`` (src, dst, weight; simple, no loops)."""
    semiring = get_semiring(semiring_name)
    src, dst, weight = (np.array(c) for c in zip(*edges))
    values = weight.astype(np.float64) if semiring.value_type == "double" else weight.astype(np.int64)
    order = list(dict.fromkeys(v for pair in pattern for v in pair))
    groups: dict[bool, list[int]] = {}
    collected, attributes = [], []
    for i, (x, y) in enumerate(pattern):
        forward = order.index(x) < order.index(y)
        attributes.append((x, y) if forward else (y, x))
        if forward not in groups:
            groups[forward] = []
            collected.append(([src, dst] if forward else [dst, src], values))
        groups[forward].append(i)
    ops = numpy_ops(semiring) if aggregate else None
    kernel, seeds, _ = build_kernel(attributes, list(groups.values()), collected, order, order, semiring,
                                    Aggregation((), semiring) if aggregate else None, ops)
    return kernel, seeds, order, semiring


def brute(edges, pattern, semiring_name):
    add, mul, zero, one = PY_SEMIRINGS[semiring_name]
    weight = {(s, d): w for s, d, w in edges}
    order = list(dict.fromkeys(v for pair in pattern for v in pair))
    nodes = sorted({n for s, d, _ in edges for n in (s, d)})
    total = zero
    for binding in itertools.product(nodes, repeat=len(order)):
        at = dict(zip(order, binding))
        if all((at[x], at[y]) in weight for x, y in pattern):
            product = one
            for x, y in pattern:
                product = mul(product, weight[(at[x], at[y])])
            total = add(total, product)
    return total


def simple(edges):
    """One weight per (src, dst), no self-loops (what the kernels index: no repeated rows)."""
    kept = {(s, d): w for s, d, w in edges if s != d}
    return [(s, d, w) for (s, d), w in sorted(kept.items())]


def numpy_total(kernel, seeds, semiring):
    ids = pa.RecordBatch.from_arrays([pa.array(np.arange(seeds, dtype=np.int64))], names=["id"])
    ops = numpy_ops(semiring)
    if seeds == 0:
        return np.asarray(ops.zero)
    parts = [b.column(0).to_numpy() for b in run_kernel(iter([ids]), kernel)]
    return ops.add.reduce(np.concatenate(parts)) if parts else ops.zero


@settings(max_examples=40, deadline=None, derandomize=True)
@given(graphs, st.sampled_from(sorted(PATTERNS)), st.sampled_from(SEMIRINGS))
def test_task_kernels_equal_brute_force(edges, pattern_name, semiring_name):
    edges = simple(edges)
    if not edges:
        return
    pattern = PATTERNS[pattern_name]
    expected = brute(edges, pattern, semiring_name)
    kernel, seeds, _, semiring = kernel_for(edges, pattern, semiring_name, aggregate=True)
    assert same_value(numpy_total(kernel, seeds, semiring).item(), expected)
    ok, why = compilable(kernel)
    assert ok == AVAILABLE, why  # valued int64 sums too: the loop keeps them exact with a carry
    if ok:
        assert same_value(plain(aggregate_seeds(kernel, np.arange(seeds))), expected)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), min_size=20, max_size=130),
       st.sampled_from(sorted(PATTERNS)), st.sampled_from(SEMIRINGS))
def test_compiled_counts_equal_brute_force(pairs, pattern_name, semiring_name):
    """Every value the semiring's one: no value is gathered and the compiled loop's last depth counts
    its candidates (bitmap lookups, deferred pairs, a galloping merge, the general loop).  Again with
    a buffer of one deferred pair, so that every deferral is settled at once, mid-loop."""
    one = PY_SEMIRINGS[semiring_name][3]
    edges = simple([(s, d, one) for s, d in pairs])
    if not edges:
        return
    pattern = PATTERNS[pattern_name]
    kernel, seeds, _, semiring = kernel_for(edges, pattern, semiring_name, aggregate=True)
    assert kernel.values == []  # ⊗ by one: nothing to gather
    if compilable(kernel)[0]:
        expected = brute(edges, pattern, semiring_name)
        assert same_value(aggregate_seeds(kernel, np.arange(seeds)).item(), expected)
        with mock.patch.object(compiled, "DEFER_PAIRS", 1):
            assert same_value(aggregate_seeds(kernel, np.arange(seeds)).item(), expected)


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("defer_pairs", [1, 3, compiled.DEFER_PAIRS])
def test_compiled_triangles_defer_the_pairs_whose_staying_segment_is_smaller(defer_pairs):
    """Hubs pointing at hubs: for most edges a→b the segment edge(a, ·) is smaller than edge(b, ·),
    so the last depth defers the pair and settles it by b's bitmap.  Counts as networkx does."""
    import networkx as nx

    graph = nx.gnm_random_graph(60, 700, seed=3, directed=True)
    edges = [(s, d, 1) for s, d in graph.edges()]
    kernel, seeds, _, _ = kernel_for(edges, PATTERNS["triangle"], "counting", aggregate=True)
    # Feed-forward triangles a→b, b→c, a→c: for each edge a→c, the b with a→b→c.
    adjacency = nx.to_numpy_array(graph, nodelist=range(60), dtype=np.int64)
    expected = int(((adjacency @ adjacency) * adjacency).sum())
    with mock.patch.object(compiled, "DEFER_PAIRS", defer_pairs):
        assert aggregate_seeds(kernel, np.arange(seeds)).item() == expected


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("pattern_name", sorted(PATTERNS))
def test_compiled_counts_with_keys_wider_than_int32(pattern_name):
    """Keys spread past 2^31: the compiled loop's local keys stay int64 (and the bitmap is off, the
    span being wider than MARK_MAX_SPAN); the count is brute force's, as with dense keys."""
    from faq.joins.compiled import local_keys

    rng = np.random.default_rng(7)
    dense = simple([(int(s), int(d), 1) for s, d in rng.integers(0, 12, size=(90, 2))])
    wide = [(s * 2**33 + 5, d * 2**33 + 5, v) for s, d, v in dense]
    counts = []
    for edges in (dense, wide):
        kernel, seeds, _, _ = kernel_for(edges, PATTERNS[pattern_name], "counting", aggregate=True)
        assert compilable(kernel)[0]
        levels = [e.level for level in kernel.extenders for e in level]
        wide_keys = kernel.encoding.span > 2**31
        assert local_keys(levels, kernel.encoding.span).dtype == (np.int64 if wide_keys else np.int32)
        counts.append(aggregate_seeds(kernel, np.arange(seeds)).item())
    assert kernel.encoding.span > 2**31
    assert counts[0] == counts[1] == brute(wide, PATTERNS[pattern_name], "counting")


def test_listing_keeps_every_relation_entry_when_a_proposer_group_empties():
    """Regression: a 4-clique listed (5, 15, 6, 6) — c = d, no edge (6, 6) — because an emptied
    proposer group dropped the (c, d) relation's entry from the union of groups."""
    src = [0, 0, 1, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 7, 7, 7, 8, 8, 9, 9, 9, 10, 11, 12, 13, 13, 14, 14, 15]
    dst = [4, 6, 14, 10, 15, 2, 5, 10, 7, 9, 14, 6, 15, 2, 8, 10, 11, 1, 3, 1, 12, 15, 0, 5, 2, 6, 8, 3, 12, 6]
    edges = [(s, d, 1) for s, d in zip(src, dst)]
    kernel, seeds, order, _ = kernel_for(edges, PATTERNS["clique4"], "counting", aggregate=False)
    ids = pa.RecordBatch.from_arrays([pa.array(np.arange(seeds, dtype=np.int64))], names=["id"])
    listed = [row for batch in run_kernel(iter([ids]), kernel) for row in batch.to_pylist()]
    assert listed == [] == [b for b in itertools.permutations(range(16), 4) if brute_binding(edges, b)]


def plain(value):
    """A numpy scalar or an exact Python int (the guarded loop's total) as a Python number."""
    return value.item() if hasattr(value, "item") else value


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_compiled_valued_sums_stay_exact_past_int64():
    """Triangles of a complete DAG on 20 nodes, every edge 2^20: each triangle is worth 2^60 (within
    the 2^61 bound a binding may have), 1,140 of them sum to ~2^70.  The compiled loop's total is
    exact; a task emits it as int64 parts, as the numpy kernel emits its flushed partials."""
    big = 1 << 20
    edges = [(a, b, big) for a in range(20) for b in range(a + 1, 20)]
    kernel, seeds, _, semiring = kernel_for(edges, PATTERNS["triangle"], "counting", aggregate=True)
    assert compilable(kernel) == (True, "") and compiled.guarded(kernel)
    exact = brute(edges, PATTERNS["triangle"], "counting")
    assert exact == 1140 << 60 > 1 << 63
    assert aggregate_seeds(kernel, np.arange(seeds)) == exact
    ids = pa.RecordBatch.from_arrays([pa.array(np.arange(seeds, dtype=np.int64))], names=["id"])
    rows = [v for batch in run_kernel(iter([ids]), kernel) for v in batch.column(0).to_pylist()]
    assert sum(rows) == exact and all(abs(v) <= 1 << 62 for v in rows) and len(rows) > 1
    numpy_kernel, _, _ = build_kernel(*_kernel_args(edges), compiled=False)
    assert not numpy_kernel.compiled
    partials = [v for batch in run_kernel(iter([ids]), numpy_kernel) for v in batch.column(batch.num_columns - 1).to_pylist()]
    assert sum(partials) == exact


def _kernel_args(edges):
    """:func:`build_kernel`'s arguments for the triangle pattern over ``edges`` in counting."""
    semiring = get_semiring("counting")
    src, dst, weight = (np.array(c) for c in zip(*edges))
    return ([("a", "b"), ("b", "c"), ("a", "c")], [[0, 1, 2]], [([src, dst], weight.astype(np.int64))],
            ["a", "b", "c"], ["a", "b", "c"], semiring, Aggregation((), semiring), numpy_ops(semiring))


def brute_binding(edges, binding):
    present = {(s, d) for s, d, _ in edges}
    a, b, c, d = binding
    return all(p in present for p in [(a, b), (a, c), (a, d), (b, c), (b, d), (c, d)])


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_what_the_compiled_kernel_does_not_take():
    edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1)]
    listing, _, _, _ = kernel_for(edges, PATTERNS["triangle"], "counting", aggregate=False)
    assert compilable(listing) == (False, "the tasks do not ⊕-aggregate to one value")
    valued, seeds, _, _ = kernel_for([(0, 1, 5), (1, 2, 1), (0, 2, 1)], PATTERNS["triangle"], "counting",
                                     aggregate=True)
    assert compilable(valued) == (True, "") and compiled.guarded(valued)  # valued int64 sums: guarded, not refused
    assert aggregate_seeds(valued, np.arange(seeds)) == 5


def brute_rows(edges, pattern, semiring_name):
    """The bag-semantics aggregate: every choice of one row per pattern edge is its own term."""
    add, mul, zero, one = PY_SEMIRINGS[semiring_name]
    rows: dict[tuple[int, int], list] = {}
    for s, d, w in edges:
        rows.setdefault((s, d), []).append(w)
    order = list(dict.fromkeys(v for pair in pattern for v in pair))
    nodes = sorted({n for s, d, _ in edges for n in (s, d)})
    total = zero
    for binding in itertools.product(nodes, repeat=len(order)):
        at = dict(zip(order, binding))
        chosen = [rows.get((at[x], at[y]), []) for x, y in pattern]
        for weights in itertools.product(*chosen):
            product = one
            for w in weights:
                product = mul(product, w)
            total = add(total, product)
    return total


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 4)), min_size=1, max_size=30),
       st.sampled_from(sorted(PATTERNS)), st.sampled_from(SEMIRINGS), st.booleans())
def test_repeated_rows_run_compiled_and_equal_every_row_choice(rows, pattern_name, semiring_name, weighted):
    """A relation with repeated rows (a multigraph): the compiled loop runs it -- the build ⊕-combines
    the repeats, which the plan knows before running -- and its total, like the numpy kernel's
    (which keeps every row), is the ⊕ over every choice of one row per pattern edge."""
    one = PY_SEMIRINGS[semiring_name][3]
    edges = [(s, d, w if weighted else one) for s, d, w in rows if s != d]
    if not edges:
        return
    pattern = PATTERNS[pattern_name]
    expected = brute_rows(edges, pattern, semiring_name)
    kernel, seeds, _, semiring = kernel_for(edges, pattern, semiring_name, aggregate=True)
    assert compilable(kernel) == (AVAILABLE, "" if AVAILABLE else "numba is not installed")
    if AVAILABLE:
        assert same_value(plain(aggregate_seeds(kernel, np.arange(seeds))), expected)
    with mock.patch.object(compiled, "AVAILABLE", False):  # the numpy kernel, every row kept
        numpy_kernel, seeds, _, semiring = kernel_for(edges, pattern, semiring_name, aggregate=True)
    assert not numpy_kernel.compiled
    assert same_value(numpy_total(numpy_kernel, seeds, semiring).item(), expected)
