"""The in-process as-of join against pandas.merge_asof: random data with ties, duplicate times and null
keys, every direction (hypothesis), and the cases pandas and faq treat differently on purpose."""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.asof.kernel import DIRECTIONS
from faq.asof.tables import asof_tables
from faq.errors import ColumnClashError, ColumnRoleError, ColumnTypeMismatchError, InvalidArgumentError, \
    InvalidJoinTypeError, MissingColumnError

KEYS = st.sampled_from(["a", "b", "c", None])


def frames(draw, name: str, value: str) -> pd.DataFrame:
    n = draw(st.integers(0, 25))
    times = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    k1 = draw(st.lists(KEYS, min_size=n, max_size=n))
    k2 = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return pd.DataFrame({"t": np.array(times, dtype=np.int64), "k1": pd.array(k1, dtype=object),
                         "k2": np.array(k2, dtype=np.int64), value: np.arange(n, dtype=np.int64) + (100 if name == "r" else 0)})


@st.composite
def cases(draw):
    left, right = frames(draw, "l", "i"), frames(draw, "r", "j")
    by = draw(st.sampled_from([[], ["k1"], ["k2"], ["k1", "k2"]]))  # k2 alone: one integer key, offset codes
    return left, right, by, draw(st.sampled_from(DIRECTIONS)), draw(st.booleans()), \
        draw(st.sampled_from([None, 0, 2])), draw(st.sampled_from(["left", "inner"]))


def oracle(left: pd.DataFrame, right: pd.DataFrame, by, direction, exact, tolerance, how) -> dict:
    """pandas.merge_asof, with faq's rule for null keys (they match nothing): left row i -> right j or None."""
    null_right = right[by].isna().any(axis=1) if by else pd.Series(False, index=right.index)
    null_left = left[by].isna().any(axis=1) if by else pd.Series(False, index=left.index)
    ls = left[~null_left].sort_values("t", kind="stable")
    rs = right[~null_right].sort_values("t", kind="stable")
    matched: dict = {i: None for i in left["i"]}
    if len(ls) and len(rs):
        out = pd.merge_asof(ls, rs.drop(columns=[c for c in ("k1", "k2") if c not in by]), on="t",
                            by=by or None, direction=direction, allow_exact_matches=exact, tolerance=tolerance)
        for i, j in zip(out["i"], out["j"]):
            matched[int(i)] = None if pd.isna(j) else int(j)
    if how == "inner":
        matched = {i: j for i, j in matched.items() if j is not None}
    return matched


@settings(max_examples=200, deadline=None)
@given(cases())
def test_as_pandas_merge_asof(case):
    left, right, by, direction, exact, tolerance, how = case
    got = asof_tables(pa.Table.from_pandas(left, preserve_index=False),
                      pa.Table.from_pandas(right.drop(columns=[c for c in ("k1", "k2") if c not in by]),
                                           preserve_index=False),
                      on="t", by=by, direction=direction, allow_exact_matches=exact, tolerance=tolerance, how=how)
    pairs = dict(zip(got.column("i").to_pylist(), got.column("j").to_pylist()))
    assert pairs == oracle(left, right, by, direction, exact, tolerance, how)
    assert got.column("i").to_pylist() == [i for i in left["i"] if i in pairs]  # the left side's order


def test_columns_as_pandas_names_them():
    left = pd.DataFrame({"time": [1, 5], "sym": ["a", "a"], "v": [1, 2]})
    right = pd.DataFrame({"time": [0, 3], "sym": ["a", "a"], "v": [10, 11], "w": [0.5, 1.5]})
    got = asof_tables(pa.Table.from_pandas(left), pa.Table.from_pandas(right), on="time", by="sym",
                      right_time="quoted").to_pandas()
    expected = pd.merge_asof(left, right, on="time", by="sym")
    assert list(got.columns) == list(expected.columns) + ["quoted"]
    pd.testing.assert_frame_equal(got.drop(columns="quoted"), expected)
    assert got["quoted"].tolist() == [0, 3]


def test_timestamps_with_a_timedelta_tolerance_and_a_date_side():
    t = pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:05", "2026-01-01 11:00"])
    left = pd.DataFrame({"time": t, "sym": ["x", "x", "x"]})
    right = pd.DataFrame({"time": pd.to_datetime(["2026-01-01 09:58", "2026-01-01 10:04"]), "sym": ["x", "x"],
                          "px": [1.0, 2.0]})
    got = asof_tables(pa.Table.from_pandas(left), pa.Table.from_pandas(right), on="time", by="sym",
                      tolerance=datetime.timedelta(minutes=5)).to_pandas()
    expected = pd.merge_asof(left, right, on="time", by="sym", tolerance=pd.Timedelta("5min"))
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert got["px"].isna().tolist() == [False, False, True]


def test_null_times_and_keys_match_nothing_and_strings_order_as_times():
    left = pa.table({"t": pa.array([1, None, 3], pa.int64()), "k": ["a", "a", None]})
    right = pa.table({"t": pa.array([0, None], pa.int64()), "k": ["a", "a"], "v": [1, 2]})
    assert asof_tables(left, right, on="t", by="k").column("v").to_pylist() == [1, None, None]
    days = asof_tables(pa.table({"d": ["2026-01-03", "2026-01-01"]}), pa.table({"d": ["2026-01-02"], "v": [7]}),
                       on="d")
    assert days.column("v").to_pylist() == [7, None]


def test_bad_arguments_are_refused_by_name():
    t = pa.table({"time": [1], "k": ["a"], "v": [1]})
    with pytest.raises(MissingColumnError, match="no column 'sym'"):
        asof_tables(t, t, on="time", by="sym")
    with pytest.raises(ColumnRoleError):
        asof_tables(t, t, on="time", by="time")
    with pytest.raises(InvalidJoinTypeError):
        asof_tables(t, t, on="time", how="outer")
    with pytest.raises(InvalidArgumentError, match="direction"):
        asof_tables(t, t, on="time", direction="sideways")
    with pytest.raises(ColumnTypeMismatchError):
        asof_tables(t, pa.table({"time": ["x"], "k": ["a"]}), on="time")
    with pytest.raises(ColumnClashError):
        asof_tables(pa.table({"time": [1], "v_x": [1], "v": [2]}), t, on="time", suffixes=("_x", ""))


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_the_compiled_threaded_search_equals_numpys_on_a_large_input(direction):
    from faq.asof import kernel

    if not kernel.COMPILED:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    n = 300_000  # above the size from which the compiled search runs, in two threads
    right_codes, right_times = rng.integers(0, 50, n), rng.integers(0, 10 * n, n)
    left_codes, left_times = rng.integers(-1, 50, n), rng.integers(0, 10 * n, n)
    runs = kernel.sorted_runs(right_codes, right_times, 50)
    got = kernel.match(runs, left_codes, left_times, direction=direction, tolerance=1000, threads=2)
    expected = kernel._match_numpy(runs, left_codes, left_times, kernel.DIRECTION_CODES[direction], True, 1000.0)
    assert np.array_equal(got, expected) and (got >= 0).sum() > n // 4


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.integers(-5, 5), st.integers(-3, 3)), max_size=20))
def test_differentiate_and_integrate_in_process_round_trip(rows):
    from faq.incremental.calculus import differentiate, integrate

    stream = pd.DataFrame(rows, columns=["item", "time", "diff"]).astype({"time": "int64", "diff": "int64"})
    blips = differentiate(stream)
    assert len(blips) == 2 * len(stream) and blips["diff"].sum() == 0  # every change and its retraction
    assert blips.groupby("__tick")["diff"].sum().get(1, 0) == -stream["diff"].sum()
    pd.testing.assert_frame_equal(integrate(blips).reset_index(drop=True), stream)
    arrow = differentiate(pa.Table.from_pandas(stream, preserve_index=False))
    assert isinstance(arrow, pa.Table) and integrate(arrow).equals(pa.Table.from_pandas(stream, preserve_index=False))


def test_runs_sorted_in_two_halves_on_two_threads_equal_one_sort(monkeypatch):
    """The right side's sort by (key, time) split at the middle code and sorted on two threads gives the same
    runs as one sort, ties (equal key and time) in the right side's row order either way."""
    from faq.asof import kernel

    rng = np.random.default_rng(8)
    codes, times = rng.integers(-1, 40, 20_000), rng.integers(0, 60, 20_000)  # many ties, some rows without a key
    one = kernel.sorted_runs(codes, times, 40)
    monkeypatch.setattr(kernel, "SPLIT_SORT_ROWS", 0)
    monkeypatch.setattr(kernel, "DEFAULT_THREADS", 2)
    two = kernel.sorted_runs(codes, times, 40)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    ordered = one.order[np.lexsort((one.order, times[one.order], codes[one.order]))]
    assert np.array_equal(one.order, ordered)  # (code, time), then row: stable
