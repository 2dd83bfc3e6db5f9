"""One left row's as-of match: the step :mod:`faq.asof.kernel` runs per row, plain Python that numba compiles.

Here, apart from both its users, so that neither imports the other:
:mod:`faq.asof.kernel` (the numpy search, and the pure-Python step of the
maintained join, :mod:`faq.asof.side`, when numba is missing) imports it,
and :mod:`faq.asof.search_loop` compiles it into its loop -- the loop module
imports numba and this file, never the kernel.  numba's cache of the loop
is keyed on faq/asof/search_loop.py alone: a change here must come with a
change there (its comment says so), or a warmed cache keeps the old step.

Examples
--------
>>> import numpy as np
>>> starts, rtimes, order = np.array([0, 2]), np.array([1.0, 3.0]), np.array([0, 1])
>>> int(one_match(starts, rtimes, order, None, False, 1, 0, 2.0, 0, True, -1.0))     # backward from 2.0
0
>>> int(one_match(starts, rtimes, order, None, False, 1, 0, 2.0, 1, True, -1.0))     # forward from 2.0
1
"""

from __future__ import annotations

__all__ = ["one_match"]


def one_match(starts, rtimes, order, alive, check_alive, n_codes, c, t, kind, exact, limit):
    """One left row's match (a right row id, or -1): a binary search in its code's run (two for nearest), then the
    direction's pick.  With ``check_alive`` rows whose ``alive[id]`` is False are stepped over (the
    maintained join's dead rows, :mod:`faq.asof.side`).  The body of the compiled loop (:func:`faq.asof.kernel.compiled_search`)."""
    if c < 0 or c >= n_codes or t != t:  # a null key or a NaN time
        return -1
    lo, hi = starts[c], starts[c + 1]
    if lo == hi:
        return -1
    # lower: the first index with rtimes >= t; upper: the first with rtimes > t. Only the bounds the
    # direction reads are searched: backward reads upper (lower without exact matches), forward the other.
    # Each search halves the run without a branch on the data (the select compiles to a conditional move: a
    # mispredicted branch a level cost more than the comparison), ending on one row.
    lower = lo
    upper = hi
    if kind == 2 or (kind == 0) != exact:
        base, n = lo, hi - lo
        while n > 1:
            half = n >> 1
            base = base + half if rtimes[base + half] < t else base
            n -= half
        lower = base + 1 if rtimes[base] < t else base
    if kind == 2 or (kind == 0) == exact:
        base, n = (lower, hi - lower) if kind == 2 else (lo, hi - lo)
        if n > 0:
            while n > 1:
                half = n >> 1
                base = base + half if rtimes[base + half] <= t else base
                n -= half
            upper = base + 1 if rtimes[base] <= t else base
    back = upper - 1 if exact else lower - 1
    ahead = lower if exact else upper
    if check_alive:
        while kind != 1 and back >= lo and not alive[order[back]]:
            back -= 1
        while kind != 0 and ahead < hi and not alive[order[ahead]]:
            ahead += 1
    if kind == 0:
        pick = back if back >= lo else -1
    elif kind == 1:
        pick = ahead if ahead < hi else -1
    else:
        pick = -1
        if back >= lo:
            pick = back
        if ahead < hi and pick < 0:
            pick = ahead
        elif ahead < hi:
            after, before = rtimes[ahead], rtimes[back]
            if (after >= 0) == (t >= 0) and (before >= 0) == (t >= 0):  # one sign: no difference can overflow
                closer = after - t < t - before
            else:  # an int64 difference could overflow (and overflow is undefined when compiled): in doubles
                closer = float(after) - float(t) < float(t) - float(before)
            if closer:
                pick = ahead
    if pick < 0:
        return -1
    if limit >= 0:
        found = rtimes[pick]
        if (found >= 0) == (t >= 0):  # one sign (always for uint64 times, wide_times): exact, no overflow
            far = (found - t if found >= t else t - found) > limit
        else:  # an int64 difference could overflow (undefined when compiled): in doubles, exact below 2**53
            far = abs(float(found) - float(t)) > limit
        if far:
            return -1
    return order[pick]
