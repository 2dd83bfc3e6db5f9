"""The one-shot as-of match as one merge of both sides sorted by (key code, time), compiled.

:func:`faq.asof.kernel.match` searches the right side's run of each left
row's key: two binary searches a row, each level a read the processor cannot
guess.  Where the times are integers and both sides' (code, time) pairs pack
into one int64 -- ``code * span + (time - low)``, with ``low`` and ``span``
taken over both sides -- both sides are sorted by that key
(:func:`faq.asof.radix.radix_sort`: stable, linear) and walked once
together: a left row's backward match is the last right key at or below its
own (below, without exact matches), its forward match the first at or above
it, each kept only within the left key's code (``[code * span, (code + 1) *
span)``).  The same rules as the search (pandas' ``merge_asof``): among right
rows of equal key and time, backward takes the last in the right side's
order and forward the first -- the stable sort keeps them in that order --
and nearest the closer of the two, backward at equal distance; ``limit``
(a tolerance, ``-1``: none) drops a match further away.

:func:`merge_match` answers None where it does not apply (float times, keys
that do not pack), and the caller searches.

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

__all__ = ["merge_match", "MERGE_FROM", "warm_up"]

#: Rows of both sides from which the merge runs (smaller joins: the search, which needs no compiled sort).
MERGE_FROM = 200_000


@compiled
def _merged(lkeys, rkeys, rorder, span, kind, exact, limit, out):  # pragma: no cover - compiled
    """``out[j]``: the right row matching the left row of sorted key ``lkeys[j]``, or -1 (module notes)."""
    m = len(rkeys)
    after = 0  # backward: the first right key above the left key (at or above it, without exact matches)
    ahead = 0  # forward: the first right key at or above the left key (above it, without exact matches)
    for j in range(len(lkeys)):
        k = lkeys[j]
        first = k - k % span  # the left key's code's first key
        pick = -1
        if kind != 1:
            if exact:
                while after < m and rkeys[after] <= k:
                    after += 1
            else:
                while after < m and rkeys[after] < k:
                    after += 1
            if after > 0 and rkeys[after - 1] >= first:
                pick = after - 1
        if kind != 0:
            if exact:
                while ahead < m and rkeys[ahead] < k:
                    ahead += 1
            else:
                while ahead < m and rkeys[ahead] <= k:
                    ahead += 1
            if ahead < m and rkeys[ahead] < first + span:
                if pick < 0 or rkeys[ahead] - k < k - rkeys[pick]:  # nearest: backward at equal distance
                    pick = ahead
        if pick >= 0 and limit >= 0:
            gap = rkeys[pick] - k if rkeys[pick] >= k else k - rkeys[pick]
            if gap > limit:
                pick = -1
        out[j] = rorder[pick] if pick >= 0 else -1


def merge_match(left_codes: np.ndarray, left_times: np.ndarray, right_codes: np.ndarray, right_times: np.ndarray,
                n_codes: int, *, kind: int = 0, exact: bool = True, limit: float = -1.0) -> Optional[np.ndarray]:
    """For each left row, the right row it matches (an id of the right side), or -1 -- what
    :func:`faq.asof.kernel.match` answers -- by one merge; None for float times or keys that do not pack.

    ``kind``: 0 backward, 1 forward, 2 nearest; codes below 0 (a null key or time) or from ``n_codes`` on
    match nothing.
    """
    from faq.asof.radix import radix_sort

    if left_times.dtype.kind not in "iu" or right_times.dtype.kind not in "iu" or not n_codes:
        return None
    out = np.full(len(left_codes), -1, dtype=np.int64)
    sides = []
    for codes, times in ((left_codes, left_times), (right_codes, right_times)):
        codes, times = np.asarray(codes, dtype=np.int64), np.asarray(times)
        valid = (codes >= 0) & (codes < n_codes)
        if valid.all():  # (no copy of a side whose every row has a key and a time)
            sides.append((None, codes, times))
        else:
            rows = np.flatnonzero(valid)
            sides.append((rows, codes[rows], times[rows]))
    if not len(sides[0][1]) or not len(sides[1][1]):
        return out
    low = min(int(t.min()) for _, _, t in sides)
    span = max(int(t.max()) for _, _, t in sides) - low + 1
    if n_codes * span >= (1 << 62):
        return None
    bits = (n_codes * span - 1).bit_length()
    def sorted_side(side: tuple) -> tuple:
        rows, c, t = side
        return (rows, *radix_sort(c * span + (t.astype(np.int64) - low), bits))

    if len(left_codes) + len(right_codes) >= MERGE_FROM:  # each side on a thread of its own (no GIL held)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            (left_rows, left_order, lkeys), (right_rows, right_order, rkeys) = list(pool.map(sorted_side, sides))
    else:
        (left_rows, left_order, lkeys), (right_rows, right_order, rkeys) = map(sorted_side, sides)
    found = np.empty(len(lkeys), dtype=np.int64)
    right_ids = right_order if right_rows is None else right_rows[right_order]
    _merged(lkeys, rkeys, right_ids, span, int(kind), bool(exact), float(limit), found)
    out[left_order if left_rows is None else left_rows[left_order]] = found
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
