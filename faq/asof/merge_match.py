"""The one-shot as-of match as one merge of both sides sorted by (key code, time), compiled.

:func:`faq.asof.kernel.match` searches the right side's run of each left
row's key: two binary searches a row, each level a read the processor cannot
guess.  Where the times are integers, both sides are put in runs by (code,
time) (:func:`faq.radix.code_time_runs`: stable, linear) and each
code's left run is walked once beside its right run: a left row's backward
match is the last right time at or below its own (below, without exact
matches), its forward match the first at or above it.  The same rules as the
search (pandas' ``merge_asof``): among right
rows of equal key and time, backward takes the last in the right side's
order and forward the first -- the stable sort keeps them in that order --
and nearest the closer of the two, backward at equal distance; ``limit``
(a tolerance, ``-1``: none) drops a match further away.

:func:`merge_match` answers None where it does not apply (float times, times
whose span int64 does not hold), and the caller searches.

Examples
--------
>>> import numpy as np
>>> right_codes, right_times = np.array([0, 0, 1, 0]), np.array([1, 3, 2, 3])
>>> left_codes, left_times = np.array([0, 0, 1, 1, -1]), np.array([2, 3, 1, 9, 5])
>>> merge_match(left_codes, left_times, right_codes, right_times, 2).tolist()    # backward
[0, 3, -1, 2, -1]
>>> merge_match(left_codes, left_times, right_codes, right_times, 2, kind=1).tolist()   # forward
[1, 1, 2, -1, -1]
>>> merge_match(left_codes, left_times, right_codes, right_times, 2, exact=False).tolist()
[0, 0, -1, 2, -1]
>>> merge_match(left_codes, left_times.astype(float), right_codes, right_times, 2) is None   # floats: search
True
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from faq.compiled import compiled

__all__ = ["merge_match", "TWO_THREADS_FROM", "warm_up"]

#: Rows of both sides from which each side is put in runs on a thread of its own.
TWO_THREADS_FROM = 200_000


@compiled
def _merged(lstarts, ltimes, rstarts, rtimes, rorder, kind, exact, limit, out):  # pragma: no cover - compiled
    """``out[j]``: the right row matching the left row at ``j`` of the left runs, or -1 (module notes): each
    code's left run walked once beside its right run."""
    for c in range(len(lstarts) - 1):
        lo, hi = rstarts[c], rstarts[c + 1]
        after = lo  # backward: the first right time above the left time (at or above it, without exact matches)
        ahead = lo  # forward: the first right time at or above the left time (above it, without exact matches)
        for j in range(lstarts[c], lstarts[c + 1]):
            t = ltimes[j]
            pick = -1
            if kind != 1:
                if exact:
                    while after < hi and rtimes[after] <= t:
                        after += 1
                else:
                    while after < hi and rtimes[after] < t:
                        after += 1
                if after > lo:
                    pick = after - 1
            if kind != 0:
                if exact:
                    while ahead < hi and rtimes[ahead] < t:
                        ahead += 1
                else:
                    while ahead < hi and rtimes[ahead] <= t:
                        ahead += 1
                if ahead < hi and (pick < 0 or rtimes[ahead] - t < t - rtimes[pick]):  # nearest: backward on a tie
                    pick = ahead
            if pick >= 0 and limit >= 0:
                gap = rtimes[pick] - t if rtimes[pick] >= t else t - rtimes[pick]
                if gap > limit:
                    pick = -1
            out[j] = rorder[pick] if pick >= 0 else -1


def merge_match(left_codes: np.ndarray, left_times: np.ndarray, right_codes: np.ndarray, right_times: np.ndarray,
                n_codes: int, *, kind: int = 0, exact: bool = True, limit: float = -1.0) -> Optional[np.ndarray]:
    """For each left row, the right row it matches (an id of the right side), or -1 -- what
    :func:`faq.asof.kernel.match` answers -- by one merge a code; None for float times or times whose
    span int64 does not hold.

    ``kind``: 0 backward, 1 forward, 2 nearest; codes below 0 (a null key or time) or from ``n_codes`` on
    match nothing.
    """
    from faq.radix import code_time_runs

    if left_times.dtype.kind not in "iu" or right_times.dtype.kind not in "iu" or not n_codes:
        return None
    if not len(left_times) or not len(right_times):
        return np.full(len(left_codes), -1, dtype=np.int64)
    low = min(int(left_times.min()), int(right_times.min()))
    high = max(int(left_times.max()), int(right_times.max()))
    if high - low > np.iinfo(np.int64).max or high > np.iinfo(np.int64).max:
        return None  # (a difference of two times would wrap, or a uint64 time is not an int64)

    def runs(side: tuple) -> tuple:
        return code_time_runs(side[0], side[1], n_codes)

    sides = ((left_codes, left_times), (right_codes, right_times))
    if len(left_codes) + len(right_codes) >= TWO_THREADS_FROM:  # each side on a thread of its own (no GIL held)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            (lstarts, lorder, ltimes), (rstarts, rorder, rtimes) = list(pool.map(runs, sides))
    else:
        (lstarts, lorder, ltimes), (rstarts, rorder, rtimes) = map(runs, sides)
    found = np.empty(len(lorder), dtype=np.int64)
    _merged(lstarts, ltimes, rstarts, rtimes, rorder, int(kind), bool(exact), float(limit), found)
    out = np.full(len(left_codes), -1, dtype=np.int64)
    out[lorder] = found
    return out

def warm_up() -> bool:
    """Compile the merge and the digit sort into numba's cache (:mod:`faq.asof.warm`), checked on the
    module's example for every direction; False without numba.

    >>> warm_up() in (True, False)
    True
    """
    from faq.compiled import COMPILED

    if not COMPILED:
        return False
    codes, times = np.array([0, 0, 1, 0]), np.array([1, 3, 2, 3])
    left_codes, left_times = np.array([0, 0, 1, 1, -1]), np.array([2, 3, 1, 9, 5])
    for kind, expected in ((0, [0, 3, -1, 2, -1]), (1, [1, 1, 2, -1, -1]), (2, [0, 3, 2, 2, -1])):
        got = merge_match(left_codes, left_times, codes, times, 2, kind=kind)
        if got is None or got.tolist() != expected:
            raise AssertionError(f"the compiled as-of merge differs from its example (kind {kind}): {got}")
    return True
