"""The as-of match in numpy and numba: for each left row, the right row valid at its time.

Rows are given as dense key *codes* (one int per distinct ``by`` key, ``-1``
for a key with a null, which never matches) and int64 or float64 *times*.
:func:`sorted_runs` sorts the right side by (code, time) -- stable, so rows
with equal code and time keep their order -- and records each code's run;
:func:`match` then finds, per left row, by binary search in its code's run:

``backward``
    the last right row with time ≤ t (< t with ``allow_exact_matches=False``);
``forward``
    the first right row with time ≥ t (> t without exact matches);
``nearest``
    the closer of the two; at equal distance the backward one.

These are ``pandas.merge_asof``'s rules, ties included: among right rows
sharing key and time, backward takes the last in the right side's order and
forward the first.  ``tolerance`` (optional) drops a match further than it.
A left row with a null time (NaN) or a null key matches nothing.

The search is compiled with numba when it is installed (one loop, no array
per row); the numpy fallback does the same searches per code.

Examples
--------
>>> import numpy as np
>>> right_codes, right_times = np.array([0, 0, 1, 0]), np.array([1, 3, 2, 3])
>>> runs = sorted_runs(right_codes, right_times, 2)
>>> runs.order.tolist(), runs.starts.tolist()
([0, 1, 3, 2], [0, 3, 4])
>>> left_codes, left_times = np.array([0, 0, 1, 1, -1]), np.array([2, 3, 1, 9, 5])
>>> match(runs, left_codes, left_times).tolist()          # right row per left row (-1: none)
[0, 3, -1, 2, -1]
>>> match(runs, left_codes, left_times, direction="forward").tolist()
[1, 1, 2, -1, -1]
>>> match(runs, left_codes, left_times, allow_exact_matches=False).tolist()
[0, 0, -1, 2, -1]
"""

from __future__ import annotations

import importlib.util
import os
from typing import NamedTuple, Optional

import numpy as np

from faq.asof.search_step import one_match

__all__ = ["DIRECTIONS", "DIRECTION_CODES", "Runs", "sorted_runs", "match", "COMPILED", "warm_up", "one_match", "compiled_search"]

DIRECTIONS = ("backward", "forward", "nearest")
#: Each direction as the compiled search takes it.
DIRECTION_CODES = {"backward": 0, "forward": 1, "nearest": 2}

#: Whether the search runs compiled (numba installed).
COMPILED = importlib.util.find_spec("numba") is not None
#: Threads the compiled search is dealt to (the cores this process may use, at most 8).
DEFAULT_THREADS = max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


class Runs(NamedTuple):
    """The right side sorted by (code, time): ``order`` (right row ids in that order), ``times``
    (their times, in that order) and ``starts`` (code ``c``'s run is ``starts[c]:starts[c + 1]``)."""

    order: np.ndarray
    times: np.ndarray
    starts: np.ndarray


def sorted_runs(codes: np.ndarray, times: np.ndarray, n_codes: int) -> Runs:
    """The right rows with a code (≥ 0) and a time (not NaN), sorted stably by (code, time).

    Integer times of large sides (compiled) by a counting pass by code, then each run by its times'
    digits (:func:`faq.radix.code_time_runs`); smaller ones whose span times the codes fits int64
    as one key ``code * span + time`` (numpy's quicksort, then rows of equal key put back in the right
    side's order: :func:`_in_row_order`); others by ``np.lexsort``.  Every way, equal (code, time) rows
    keep their order.
    """
    codes = np.asarray(codes, dtype=np.int64)
    times = np.asarray(times)
    if COMPILED and times.dtype.kind in "iu" and len(times) >= _COMPILED_FROM:
        from faq.radix import code_time_runs

        runs = code_time_runs(codes, times, n_codes)  # a counting pass by code, each run by its times' digits
        if runs is not None:
            starts, order, ordered = runs
            return Runs(order, ordered.astype(times.dtype, copy=False), starts)
    usable = codes >= 0
    if times.dtype.kind == "f":
        usable &= ~np.isnan(times)
    rows = np.flatnonzero(usable)
    c, t = codes[rows], times[rows]
    counts = np.bincount(c, minlength=n_codes)  # the rows of each code: the runs' lengths (any order)
    local = None
    if t.dtype.kind in "iu" and len(rows):
        low = int(t.min())
        span = int(t.max()) - low + 1
        if n_codes * span < (1 << 62):
            key = c * span + (t.astype(np.int64) - low)
            local = _in_row_order(_argsort_by_halves(key, c, counts, DEFAULT_THREADS, SPLIT_SORT_ROWS), key)
    if local is None:
        local = np.lexsort((t, c))
    order = rows[local]
    starts = np.zeros(n_codes + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return Runs(order, times[order], starts)


#: Rows from which :func:`_argsort_by_halves` sorts the two halves of the codes on two threads.
SPLIT_SORT_ROWS = 1_000_000


def _argsort_by_halves(key: np.ndarray, codes: np.ndarray, counts: np.ndarray, threads: int = DEFAULT_THREADS,
                       min_rows: int = SPLIT_SORT_ROWS) -> np.ndarray:
    """``np.argsort(key)`` (unstable) for a key that grows with ``codes`` (``counts``: the rows of each code):
    the rows of the lower codes and those
    of the higher ones (about half the rows each) sorted on two threads -- numpy's sort holds no GIL -- and
    put one after the other.  5M rows on 1,000 codes: 0.35 s in one sort, 0.26 s so (scratch, 2 cores).
    Fewer than ``min_rows`` rows, or one thread: one sort.

    >>> key = np.array([25, 3, 14, 12, 1]); codes = key // 10
    >>> counts = np.bincount(codes, minlength=3)
    >>> key[_argsort_by_halves(key, codes, counts, threads=2, min_rows=0)].tolist() == sorted(key.tolist())
    True
    """
    if threads < 2 or len(key) < min_rows:
        return np.argsort(key)
    from concurrent.futures import ThreadPoolExecutor

    below = np.cumsum(counts)
    middle = int(np.searchsorted(below, len(codes) // 2)) + 1  # codes < middle: about half the rows
    lower = codes < middle
    halves = (np.flatnonzero(lower), np.flatnonzero(~lower))
    with ThreadPoolExecutor(2) as pool:
        return np.concatenate(list(pool.map(lambda rows: rows[np.argsort(key[rows])], halves)))


def _in_row_order(order: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``order`` (an unstable sort of ``key``) with each run of equal keys in increasing position: stable.

    >>> _in_row_order(np.array([2, 0, 1, 3]), np.array([5, 5, 5, 7])).tolist()
    [0, 1, 2, 3]
    """
    sorted_key = key[order]
    tie = sorted_key[1:] == sorted_key[:-1]
    if not tie.any():
        return order
    grouped = np.zeros(len(order), dtype=bool)
    grouped[1:] |= tie
    grouped[:-1] |= tie
    where = np.flatnonzero(grouped)
    group = np.cumsum(np.concatenate([[True], ~tie]))[where]  # one id per run of equal keys
    rows = order[where]
    order = order.copy()
    order[where] = rows[np.lexsort((rows, group))]
    return order


def wide_times(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' int64 times, as order-preserving uint64 (``x + 2**63``) when their span exceeds int64.

    A distance between two int64 times can wrap (``2**63 - 1 - (-2**63)`` is -1 in int64): a tolerance of 10
    would then match the extremes.  Shifted to uint64, the larger minus the smaller (as the search takes
    it) is exact.  Times of a narrower span, and floats, are returned as they are (no copy).

    >>> l, r = wide_times(np.array([-2**63]), np.array([2**63 - 1]))
    >>> l.dtype.name, int(r[0] - l[0])
    ('uint64', 18446744073709551615)
    """
    if left.dtype != np.int64 or right.dtype != np.int64 or not (len(left) and len(right)):
        return left, right
    low = min(int(left.min()), int(right.min()))
    high = max(int(left.max()), int(right.max()))
    if high - low <= np.iinfo(np.int64).max:
        return left, right
    flip = np.uint64(1 << 63)
    return left.view(np.uint64) ^ flip, right.view(np.uint64) ^ flip


def match(runs: Runs, codes: np.ndarray, times: np.ndarray, *, direction: str = "backward",
          allow_exact_matches: bool = True, tolerance: Optional[float] = None,
          threads: int = DEFAULT_THREADS) -> np.ndarray:
    """For each left row (``codes``, ``times``), the right row it matches (an id of the right side), or -1.

    ``threads`` share the compiled search (large inputs).
    """
    codes = np.asarray(codes, dtype=np.int64)
    times = np.asarray(times)
    kind = DIRECTION_CODES[direction]
    if runs.times.dtype != times.dtype:  # one type for the search (ints and floats: float64)
        common = np.result_type(runs.times.dtype, times.dtype)
        runs = runs._replace(times=runs.times.astype(common))
        times = times.astype(common)
    limit = -1.0 if tolerance is None else float(tolerance)
    if COMPILED and len(codes) >= _COMPILED_FROM:
        runs = Runs(*(np.require(a, requirements=["C", "W"]) for a in runs))  # one signature a time type
        codes, times = (np.require(a, requirements=["C", "W"]) for a in (codes, times))
        return _match_compiled(runs, codes, times, kind, bool(allow_exact_matches), limit, threads)
    return _match_numpy(runs, codes, times, kind, bool(allow_exact_matches), limit)


def _match_compiled(runs: Runs, codes: np.ndarray, times: np.ndarray, kind: int, exact: bool, limit: float,
                    threads: int) -> np.ndarray:
    """The compiled search over the left rows taken by code (each code's run stays in cache while its
    rows search it: a stable counting sort, O(n)), dealt to ``threads`` threads (the loop holds no GIL)."""
    n_codes = len(runs.starts) - 1
    small = np.int16 if n_codes < (1 << 15) else np.int32 if n_codes < (1 << 31) else np.int64
    by_code = np.argsort(np.clip(codes, -1, n_codes).astype(small), kind="stable")  # radix sort for int16
    # Gathered into order first: searching the rows where they are (a scattered read and write a row) was
    # 1.5-2x slower (scratch, 5M rows) -- a plain gather keeps many reads in flight, the searches do not.
    sorted_codes, sorted_times = codes[by_code], times[by_code]
    found = np.empty(len(codes), dtype=np.int64)
    search = compiled_search()
    bounds = np.linspace(0, len(codes), max(1, min(threads, len(codes) // 100_000 or 1)) + 1).astype(np.int64)
    spans = list(zip(bounds[:-1], bounds[1:]))

    def one(span: tuple[int, int]) -> None:
        a, b = span
        search(runs.starts, runs.times, runs.order, _NO_MASK, False, sorted_codes[a:b], sorted_times[a:b], kind, exact,
               limit, found[a:b])

    if len(spans) == 1:
        one(spans[0])
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(spans)) as pool:
            list(pool.map(one, spans))
    out = np.empty(len(codes), dtype=np.int64)
    out[by_code] = found
    return out


#: Left rows from which the compiled search pays for loading numba (a cached compile: ~0.3 s a process).
_COMPILED_FROM = 200_000


def _match_numpy(runs: Runs, codes: np.ndarray, times: np.ndarray, kind: int, exact: bool,
                 limit: float) -> np.ndarray:
    """The same searches, per code with ``np.searchsorted`` (for small inputs or without numba)."""
    out = np.full(len(codes), -1, dtype=np.int64)
    n_codes = len(runs.starts) - 1
    valid = (codes >= 0) & (codes < n_codes)
    if times.dtype.kind == "f":
        valid &= ~np.isnan(times)
    rows = np.flatnonzero(valid)
    if not len(rows):
        return out
    rows = rows[np.argsort(codes[rows], kind="stable")]
    bounds = np.searchsorted(codes[rows], np.arange(n_codes + 1))
    for c in np.flatnonzero(np.diff(bounds)):
        mine = rows[bounds[c]:bounds[c + 1]]
        lo, hi = runs.starts[c], runs.starts[c + 1]
        if lo == hi:
            continue
        segment, t = runs.times[lo:hi], times[mine]
        back = np.searchsorted(segment, t, side="right" if exact else "left") - 1
        ahead = np.searchsorted(segment, t, side="left" if exact else "right")
        back_ok, ahead_ok = back >= 0, ahead < (hi - lo)
        if kind == 0:
            pick, ok = back, back_ok
        elif kind == 1:
            pick, ok = ahead, ahead_ok
        else:
            with np.errstate(over="ignore"):  # in the times' own type (exact: no float rounding of uint64 gaps)
                back_gap = t - segment[np.maximum(back, 0)]
                ahead_gap = segment[np.minimum(ahead, hi - lo - 1)] - t
            # an int64 gap beyond 2**63 - 1 wraps negative: then it is the larger (as in one_match)
            nearer = np.where((back_gap < 0) == (ahead_gap < 0), back_gap <= ahead_gap, back_gap >= 0)
            use_back = back_ok & (~ahead_ok | nearer)
            pick, ok = np.where(use_back, back, ahead), back_ok | ahead_ok
        if limit >= 0:
            chosen = segment[np.clip(pick, 0, hi - lo - 1)]
            with np.errstate(over="ignore"):  # the larger minus the smaller: wraps negative only beyond 2**63 - 1
                gap = np.where(chosen >= t, chosen - t, t - chosen)
            ok &= (gap <= limit) & ~((gap < 0) & (limit < _TWO_63))
        out[mine[ok]] = runs.order[lo + pick[ok]]
    return out


_TWO_63 = 9.223372036854775807e18  # a tolerance from here on takes every distance an int64 can hold


def compiled_search():
    """:func:`~faq.asof.search_step.one_match` over every left row, compiled
    (:func:`faq.asof.search_loop.search`, imported on first use -- it imports numba -- and cached on
    disk): ``search(starts, rtimes, order, alive, check_alive, codes, times,
    kind, exact, limit, out)``."""
    from faq.asof.search_loop import search

    return search


_NO_MASK = np.ones(1, dtype=bool)  # ``alive`` where nothing is dead (not read: check_alive is False)


def warm_up() -> list[str]:
    """Compile the search for int64 and float64 times into numba's cache (``make`` runs it once through
    :mod:`faq.asof.warm`), each
    checked against the numpy search; the time types compiled (empty without numba).

    >>> warm_up() in ([], ["float64", "int64"])
    True
    """
    if not COMPILED:
        return []
    done = []
    for dtype in (np.float64, np.int64):
        codes, times = np.array([0, 0, 1]), np.array([1, 3, 2], dtype=dtype)
        runs = sorted_runs(codes, times, 2)
        left_codes, left_times = np.array([0, 1, 0]), np.array([2, 5, 0], dtype=dtype)
        for kind in DIRECTIONS:
            out = np.empty(3, dtype=np.int64)
            compiled_search()(runs.starts, runs.times, runs.order, _NO_MASK, False, left_codes, left_times, DIRECTION_CODES[kind],
                              True, -1.0, out)
            expected = _match_numpy(runs, left_codes, left_times, DIRECTION_CODES[kind], True, -1.0)
            if not np.array_equal(out, expected):
                raise AssertionError(f"the compiled as-of search differs from numpy ({kind}, {dtype.__name__})")
        done.append(np.dtype(dtype).name)
    return sorted(done)

