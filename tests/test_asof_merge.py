"""The one-shot as-of match by one merge a key of both sides in runs by (key, time) (faq.asof.merge_match,
faq.radix) against the search it replaces for integer times (faq.asof.kernel): the same right row for
every left row, every direction, with and without exact matches and a tolerance, ties and rows without a
key included; the runs against numpy's stable sort; and a whole join above the size where it runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.asof import kernel
from faq.asof.merge_match import merge_match
from faq.radix import code_time_runs

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


def test_times_whose_span_int64_does_not_hold_are_left_to_the_search():
    codes = np.array([0, 1])
    assert merge_match(codes, np.array([0, 2**62]), codes, np.array([-(2**62), 5]), 2) is None  # span 2**63
    assert merge_match(codes, np.array([0, 2**63], dtype=np.uint64), codes, np.array([1, 5]), 2) is None
    assert merge_match(codes, np.array([0.5, 1.0]), codes, np.array([0, 1]), 2) is None  # float times


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 5), st.integers(0, 2**45 - 1)), max_size=300), st.integers(0, 4))
def test_runs_by_code_and_time_are_numpys_stable_sort(rows, shift):
    codes = np.array([c for c, _ in rows], dtype=np.int64)
    times = np.array([t for _, t in rows], dtype=np.int64) >> (shift * 11)  # from wide times to many ties
    starts, order, ordered = code_time_runs(codes, times, 5)  # code 5: beyond the codes, dropped
    keep = np.flatnonzero((codes >= 0) & (codes < 5))
    expected = keep[np.lexsort((times[keep], codes[keep]))]  # lexsort is stable: ties in row order
    assert np.array_equal(order, expected) and np.array_equal(ordered, times[expected])
    assert np.array_equal(np.diff(starts), np.bincount(codes[keep], minlength=5))


def test_the_right_side_in_runs_of_the_compiled_sort_equals_the_comparison_sort(monkeypatch):
    rng = np.random.default_rng(5)
    codes, times = rng.integers(-1, 40, 30_000), rng.integers(0, 60, 30_000)  # many ties
    by_comparison = kernel.sorted_runs(codes, times, 40)
    monkeypatch.setattr(kernel, "_COMPILED_FROM", 0)
    by_digits = kernel.sorted_runs(codes, times, 40)
    assert all(np.array_equal(a, b) for a, b in zip(by_digits, by_comparison))


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


def test_timestamps_string_keys_and_nulls_above_the_merge_size_equal_the_searched_join(monkeypatch):
    import datetime

    from faq.asof import tables

    rng = np.random.default_rng(2)
    n = 120_000
    start = np.datetime64("2026-01-01T00:00:00", "us")

    def side(name: str) -> pa.Table:
        times = pa.array(start + rng.integers(0, 10**9, n).astype("timedelta64[us]"), mask=rng.random(n) < 0.01)
        keys = pa.array([None if r < 0.01 else f"s{k}" for r, k in zip(rng.random(n), rng.integers(0, 500, n))])
        return pa.table({"t": times, "k": keys, name: np.arange(n)})

    left, right = side("i"), side("j")
    for direction in kernel.DIRECTIONS:
        options = dict(on="t", by="k", direction=direction, allow_exact_matches=direction != "forward",
                       tolerance=datetime.timedelta(seconds=3))
        merged = tables.asof_tables(left, right, **options)
        with monkeypatch.context() as patched:
            patched.setattr(tables, "MERGE_FROM", 10**12)
            searched = tables.asof_tables(left, right, **options)
        assert merged.equals(searched) and 0 < merged.column("j").null_count < n


def test_the_merge_kernels_load_in_the_background_only_for_files_large_enough_to_merge(tmp_path):
    import pyarrow.parquet as pq

    from faq.asof import warm

    small, large, text = tmp_path / "small.parquet", tmp_path / "large.parquet", tmp_path / "large.csv"
    pq.write_table(pa.table({"time": np.arange(10)}), small)
    pq.write_table(pa.table({"time": np.zeros(150_000, dtype=np.int64)}), large)
    text.write_text("time\n" + "0\n" * 1_000_000)   # 2 MB: at most 125,000 rows of a key and a time
    assert warm.likely_rows(str(small)) == 10 and warm.likely_rows(str(large)) == 150_000
    assert warm.merge_in_background([str(small), str(small)]) is None
    assert warm.merge_in_background([str(large)]) is None   # 150,000 rows: the join searches
    thread = warm.merge_in_background([str(large), str(text)])   # 150,000 + 125,000 guessed: it merges
    assert thread is not None
    thread.join(timeout=120)
    from faq.asof import merge_match

    assert merge_match._merged.signatures   # loaded (or compiled) on that thread, for int64 arrays
