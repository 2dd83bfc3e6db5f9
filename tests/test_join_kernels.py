"""The numpy pieces of the broadcast generic join, without Spark: hash-index
validation against binary search, and per-task partial aggregation against
plain Python reductions, for every built-in semiring."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.joins import csr
from faq.joins.csr import HashIndex, TrieLevel
from faq.joins.partial import INT_LIMIT, PartialAggregate, integer_bound, value_bound
from faq.semirings import MIN_LABEL, PLUS, Semiring, builtin_semirings, get_semiring
from faq.semirings.numpy_backend import numpy_ops
from tests.brute_force import PY_SEMIRINGS, same_value
from tests.strategies import VALUES

QUICK = settings(max_examples=60, deadline=None, derandomize=True)

keys_strategy = st.lists(st.integers(0, (1 << 62) - 1), max_size=200, unique=True).map(
    lambda xs: np.array(sorted(xs), dtype=np.int64)
)


def by_search(comp: np.ndarray, keys: np.ndarray) -> dict[int, int]:
    """row of keys -> position in comp, by binary search (the reference)."""
    if len(comp) == 0:
        return {}
    low = np.minimum(np.searchsorted(comp, keys), len(comp) - 1)
    return {int(r): int(low[r]) for r in np.flatnonzero(comp[low] == keys)}


@QUICK
@given(keys_strategy, st.lists(st.integers(0, 400), max_size=300), st.sampled_from([1, 2, 4]))
def test_hash_index_finds_what_binary_search_finds(comp, picks, slots_per_entry):
    """Present keys (with their positions) and absent ones, in tables of every load."""
    rng = np.random.default_rng(len(picks))
    absent = rng.integers(0, 1 << 62, size=len(picks))
    keys = np.array([comp[p % len(comp)] if len(comp) and p % 3 else absent[i] for i, p in enumerate(picks)],
                    dtype=np.int64)
    index = HashIndex(comp, slots_per_entry)
    rows, positions = index.find(keys)
    assert dict(zip(rows.tolist(), positions.tolist())) == by_search(comp, keys)
    rows_only, none = index.find(keys, positions=False)
    assert none is None and sorted(rows_only.tolist()) == sorted(rows.tolist())


def test_hash_index_on_colliding_runs():
    """Dense consecutive keys and multiples of a power of two: long probe runs, no wrap-around."""
    for comp in (np.arange(5000, dtype=np.int64), np.arange(0, 1 << 40, 1 << 28, dtype=np.int64)):
        index = HashIndex(comp, 1)
        keys = np.concatenate([comp, comp + 1, comp[::7] * 3])
        rows, positions = index.find(keys)
        assert dict(zip(rows.tolist(), positions.tolist())) == by_search(comp, keys)
        assert index.keys[-1] == -1  # the table ends with an empty slot


def test_trie_level_switches_to_a_hash_index_after_enough_lookups(monkeypatch):
    comp = np.arange(0, 3000, 3, dtype=np.int64)
    level = TrieLevel(comp, np.array([0, len(comp)]))
    keys = np.arange(0, 600, dtype=np.int64)
    results = []
    for _ in range(3):  # 600, 1200 (> 1000 entries: hashed from here on), 1800 lookups
        rows, positions = level.find(keys)
        results.append(dict(zip(rows.tolist(), positions.tolist())))
    assert level in csr._HASHES
    assert results[0] == results[1] == results[2] == by_search(comp, keys)
    small = TrieLevel(comp, np.array([0, len(comp)]))
    monkeypatch.setattr(csr, "HASH_MAX_SLOTS", 10)  # too big for a table: binary search only
    for _ in range(3):
        assert dict(zip(*(a.tolist() for a in small.find(keys)))) == results[0]
    assert small not in csr._HASHES


# --- partial aggregates ----------------------------------------------------------------


@pytest.mark.parametrize("semiring", [s.name for s in builtin_semirings()])
def test_numpy_ops_exist_for_builtin_operations_and_declared_forms_only(semiring):
    ring = get_semiring(semiring)
    assert numpy_ops(ring, ring) is not None
    lookalike = dataclasses.replace(ring)  # same name and operation values, not the registered instance
    assert numpy_ops(lookalike, lookalike) == numpy_ops(ring, ring)  # the operations decide, not the instance
    columns_only = Semiring(ring.name, ring.value_type, ring.zero, ring.one, lambda a, b: a, lambda a, b: a)
    assert numpy_ops(columns_only, columns_only) is None  # Column functions without numpy forms
    assert numpy_ops(get_semiring("real"), get_semiring("max_product")) is not None  # marginal-MAP mix
    assert numpy_ops(get_semiring("real"), get_semiring("min_plus")) is None  # ⊗ differs


LOG_ADD = (lambda a, b: b if a == -math.inf else a if b == -math.inf
           else max(a, b) + math.log1p(math.exp(-abs(a - b))))


def test_partial_aggregate_of_a_user_defined_semiring_with_numpy_forms():
    """A user-defined ⊕ (log-sum-exp, neither + nor idempotent): k unvalued bindings are
    worth one ⊕ … ⊕ one = log k, valued ones are ⊕-combined with the declared ufunc."""
    log = Semiring("log", "double", -math.inf, 0.0, add=lambda a, b: a, mul=PLUS, numpy_add=np.logaddexp)
    ops = numpy_ops(log)
    assert (ops.add, ops.mul, ops.counts, ops.idempotent) == (np.logaddexp, np.add, False, False)
    partial = PartialAggregate(ops, 1, span=4, flush_rows=2)
    partial.add([np.array([0, 0, 0, 1])], None)
    partial.add([np.array([1, 2])], np.array([1.5, -math.inf]))
    keys, values = partial.drain()
    expected = {0: math.log(3), 1: LOG_ADD(0.0, 1.5), 2: -math.inf}
    assert keys[0].tolist() == [0, 1, 2]
    for key, value in zip(keys[0].tolist(), values.tolist()):
        assert same_value(value, expected[key]), (key, value)


def test_integer_bound_follows_the_product():
    """×: Π max|v|; +: Σ max|v| (component labels); a user-defined integer ⊗: no bound."""
    values = [np.array([-(1 << 40), 7]), np.array([3, -5])]
    assert integer_bound(numpy_ops(get_semiring("integer")), values) == value_bound(values) == 5 << 40
    assert integer_bound(numpy_ops(MIN_LABEL), values) == (1 << 40) + 5
    custom = Semiring("xor", "bigint", 0, 1, lambda a, b: a, lambda a, b: a,
                      numpy_add=np.bitwise_xor, numpy_mul=np.bitwise_and)
    assert integer_bound(numpy_ops(custom), values) is None


def sample_values(semiring: str, n: int, rng) -> np.ndarray:
    pool = VALUES[semiring]
    return np.array([pool[i] for i in rng.integers(0, len(pool), n)])


@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
@pytest.mark.parametrize("n_keys", [0, 1, 2])
def test_partial_aggregate_equals_python_reduction(semiring, n_keys):
    """Rows added in pieces (with valued and unvalued pieces, and tiny flushes) drain to
    partials whose ⊕ per key is the Python ⊕ of the products of each row's values."""
    ring = get_semiring(semiring)
    add, mul, zero, one = PY_SEMIRINGS[semiring]
    ops = numpy_ops(ring, ring)
    rng = np.random.default_rng(n_keys)
    partial = PartialAggregate(ops, n_keys, span=4, flush_rows=8)
    expected: dict[tuple, object] = {}
    drained: dict[tuple, object] = {}

    def fold(target, key, value):
        target[key] = add(target[key], value) if key in target else value

    for piece in range(12):
        n = int(rng.integers(0, 9))
        keys = [rng.integers(0, 4, n) for _ in range(n_keys)]
        if piece % 3 == 0:
            values, py = None, [one] * n
        else:
            a, b = sample_values(semiring, n, rng), sample_values(semiring, n, rng)
            values = ops.mul(a.astype(ops.dtype), b.astype(ops.dtype))
            py = [mul(x.item(), y.item()) for x, y in zip(a, b)]
        for r in range(n):
            fold(expected, tuple(int(k[r]) for k in keys), py[r])
        partial.add(keys, values, n)
        if partial.ready() or piece % 5 == 4:
            out_keys, out_values = partial.drain()
            for r in range(len(out_values)):
                fold(drained, tuple(int(k[r]) for k in out_keys), out_values[r].item())
    out_keys, out_values = partial.drain()
    for r in range(len(out_values)):
        fold(drained, tuple(int(k[r]) for k in out_keys), out_values[r].item())
    assert set(drained) == set(expected)
    for key, value in expected.items():
        assert same_value(drained[key], value), (key, drained[key], value)
    assert partial.empty()


def test_int64_guard_emits_partials_before_they_could_overflow():
    ring = get_semiring("integer")
    ops = numpy_ops(ring, ring)
    big = np.array([1 << 59] * 4, dtype=np.int64)
    bound = value_bound([big])
    assert bound == 1 << 59
    partial = PartialAggregate(ops, 0, span=1, bound=bound)
    assert partial.safe_rows() == 4  # 4 · 2^59 = 2^61 = INT_LIMIT / 2
    total = 0
    for _ in range(5):
        partial.add([], big[: partial.safe_rows()], partial.safe_rows())
        assert partial.ready()
        (_, values) = partial.drain()
        assert abs(int(values[0])) < INT_LIMIT
        total += int(values[0])
    assert total == 20 * (1 << 59)  # > 2^63: only the partials fit in int64, exactly
    assert value_bound([np.array([-(1 << 40)]), np.array([3, -5])]) == 5 << 40


@QUICK
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=40),
       st.randoms(use_true_random=False))
def test_trie_of_sorted_rows_equals_trie_of_shuffled_rows(rows, random):
    """build_trie skips its sort for rows already in order: the trie is the same either way."""
    rows = sorted(rows)
    values = np.arange(len(rows), dtype=np.int64)
    shuffled = list(range(len(rows)))
    random.shuffle(shuffled)
    columns = [np.array(c, dtype=np.int64) for c in zip(*rows)]
    assert csr.lexicographically_sorted(columns)
    mixed = [c[shuffled] for c in columns]
    in_order, out_of_order = csr.build_trie(columns, 7, values), csr.build_trie(mixed, 7, values[shuffled])
    for a, b in zip(in_order.levels, out_of_order.levels):
        assert np.array_equal(a.comp, b.comp) and np.array_equal(a.offsets, b.offsets)
        assert a.duplicates == b.duplicates
    # Rows repeat among the triples: their values may come in either order, but as one multiset per row.
    key = lambda trie: sorted(zip(trie.levels[-1].comp.tolist(), trie.values.tolist()))
    assert key(in_order) == key(out_of_order)
    mixed_rows = list(zip(*[c.tolist() for c in mixed]))
    assert csr.lexicographically_sorted(mixed) == (mixed_rows == sorted(mixed_rows))


def test_a_growing_partial_aggregate_is_consolidated_a_logarithmic_number_of_times(monkeypatch):
    """Many pieces of mostly distinct keys, never drained (a maintained batch's bindings): the buffer is
    consolidated when the rows added since the last consolidation outnumber what it left, so the sorts
    stay few (once every flush_rows rows, re-sorting everything, was quadratic), and the drained ⊕ per
    key is numpy's."""
    ops = numpy_ops(get_semiring("counting"), get_semiring("counting"))
    rng = np.random.default_rng(7)
    partial = PartialAggregate(ops, 2, span=1 << 20, flush_rows=64)
    consolidations = []
    original = PartialAggregate._consolidate
    monkeypatch.setattr(PartialAggregate, "_consolidate",
                        lambda self: (consolidations.append(self._buffered), original(self)))
    pieces = [rng.integers(0, 3000, (2, 50)) for _ in range(400)]  # 20,000 rows, keys mostly distinct
    for keys in pieces:
        partial.add([keys[0], keys[1]], None, 50)
    assert len(consolidations) <= 12, len(consolidations)  # every 64 rows would be ~300
    out_keys, out_values = partial.drain()
    every = np.concatenate(pieces, axis=1)
    unique, counts = np.unique(every[0] * (1 << 20) + every[1], return_counts=True)
    got = out_keys[0] * (1 << 20) + out_keys[1]
    order = np.argsort(got)
    assert np.array_equal(got[order], unique) and np.array_equal(np.asarray(out_values)[order], counts)


@QUICK
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=300), st.sampled_from([41, 5000]))
def test_two_key_columns_put_in_order_by_digits_equal_numpys_stable_sort(rows, span):
    from faq.compiled import COMPILED

    first = np.array([a for a, _ in rows], dtype=np.int64)
    second = np.array([b for _, b in rows], dtype=np.int64)
    expected = np.lexsort((second, first))   # stable: equal keys in row order
    with pytest.MonkeyPatch.context() as patched:   # (one context an example: hypothesis reruns the body)
        patched.setattr(csr, "RADIX_FROM", 1)
        patched.setattr(csr, "RADIX_IMPORT_FROM", 1)
        assert csr._radix_pays(max(len(rows), 1), span) == COMPILED
        assert np.array_equal(csr.lexicographic_order([first, second], span), expected)
