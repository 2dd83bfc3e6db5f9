"""The one-shot as-of match by one merge of both sides sorted by their digits (faq.asof.merge_match,
faq.asof.radix) against the search it replaces for integer times (faq.asof.kernel): the same right row for
every left row, every direction, with and without exact matches and a tolerance, ties and rows without a
key included; the stable digit sort against numpy's; and a whole join above the size where it runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.asof import kernel
from faq.asof.merge_match import merge_match
from faq.asof.radix import radix_order, radix_sort

pytestmark = pytest.mark.skipif(not kernel.COMPILED, reason="numba is not installed")


@st.composite
def sides(draw):
    n_codes = draw(st.integers(1, 4))
    low, high = draw(st.sampled_from([(0, 12), (-6, 6), (-(2**40), 2**40)]))

    def side(max_rows: int, top: int):
        n = draw(st.integers(0, max_rows))
        codes = draw(st.lists(st.integers(-1, top), min_size=n, max_size=n))  # -1 (and a left n_codes): no match
        times = draw(st.lists(st.integers(low, high), min_size=n, max_size=n))
        return np.array(codes, dtype=np.int64), np.array(times, dtype=np.int64)

    return n_codes, side(30, n_codes), side(30, n_codes - 1)


@settings(max_examples=150, deadline=None)
@given(sides(), st.sampled_from([0, 1, 2]), st.booleans(), st.sampled_from([-1.0, 0.0, 3.0]))
def test_the_merge_matches_what_the_search_matches(case, kind, exact, limit):
    n_codes, (left_codes, left_times), (right_codes, right_times) = case
    runs = kernel.sorted_runs(right_codes, right_times, n_codes)
    expected = kernel._match_numpy(runs, left_codes, left_times, kind, exact, limit)
    got = merge_match(left_codes, left_times, right_codes, right_times, n_codes, kind=kind, exact=exact, limit=limit)
    assert np.array_equal(got, expected)


def test_times_that_do_not_pack_into_one_key_are_left_to_the_search():
    codes = np.array([0, 1])
    assert merge_match(codes, np.array([0, 2**62]), codes, np.array([-(2**62), 5]), 2) is None  # span too wide
    assert merge_match(codes, np.array([0.5, 1.0]), codes, np.array([0, 1]), 2) is None  # float times


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**45 - 1), max_size=200), st.integers(0, 3))
def test_the_digit_sort_is_numpys_stable_argsort(values, shift):
    key = np.array(values, dtype=np.int64) >> (shift * 10)  # from wide keys to many ties
    order, sorted_keys = radix_sort(key, 45)
    assert np.array_equal(order, np.argsort(key, kind="stable")) and np.array_equal(sorted_keys, np.sort(key))


def test_the_right_side_sorted_by_digits_on_two_threads_equals_the_comparison_sort(monkeypatch):
    rng = np.random.default_rng(5)
    codes, times = rng.integers(-1, 40, 30_000), rng.integers(0, 60, 30_000)  # many ties
    by_comparison = kernel.sorted_runs(codes, times, 40)
    monkeypatch.setattr(kernel, "_COMPILED_FROM", 0)
    by_digits = kernel.sorted_runs(codes, times, 40)
    monkeypatch.setattr(kernel, "SPLIT_SORT_ROWS", 0)
    monkeypatch.setattr(kernel, "DEFAULT_THREADS", 2)
    by_digits_in_halves = kernel.sorted_runs(codes, times, 40)
    for runs in (by_digits, by_digits_in_halves):
        assert all(np.array_equal(a, b) for a, b in zip(runs, by_comparison))
    assert np.array_equal(radix_order(np.array([3, 1, 3]), 2), [1, 0, 2])


@pytest.mark.parametrize("direction", kernel.DIRECTIONS)
def test_a_join_above_the_merge_size_equals_the_searched_join(monkeypatch, direction):
    from faq.asof import tables

    rng = np.random.default_rng(11)
    n = 120_000  # both sides: 240,000 rows, above MERGE_FROM
    left = pa.table({"t": rng.integers(0, 50_000, n), "k": rng.integers(0, 300, n), "i": np.arange(n)})
    right = pa.table({"t": rng.integers(0, 50_000, n), "k": rng.integers(0, 310, n), "j": np.arange(n)})
    merged = tables.asof_tables(left, right, on="t", by="k", direction=direction, tolerance=40)
    monkeypatch.setattr(tables, "MERGE_FROM", 10**12)
    searched = tables.asof_tables(left, right, on="t", by="k", direction=direction, tolerance=40)
    assert merged.equals(searched) and 0 < merged.column("j").null_count < n
