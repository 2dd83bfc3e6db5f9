"""A stable argsort of non-negative int64 keys by their bits (least significant digit first), compiled.

The as-of join sorts its right side by (key code, time), both packed into one
int64 (:func:`faq.asof.kernel.sorted_runs`), and needs the sort stable: right
rows sharing key and time keep their order (pandas' rule for ties).  A
comparison sort is not stable at numpy's speed, so the order it gave had its
ties put back in row order afterwards.  Sorting by digits is stable by
construction and linear: one pass counts every digit's values, then one pass
a digit moves the rows (:data:`DIGIT_BITS` bits each, only as many digits as
the largest key has bits, and a digit all rows share is skipped).

Examples
--------
>>> import numpy as np
>>> key = np.array([5, 3, 5, 0, 3, 9])
>>> radix_order(key, 4).tolist()                  # ties (5, 5 and 3, 3) keep their positions' order
[3, 1, 4, 0, 2, 5]
>>> radix_order(np.array([1 << 40, 1, 1 << 20]), 41).tolist()
[1, 2, 0]
>>> radix_order(np.zeros(3, dtype=np.int64), 0).tolist()
[0, 1, 2]
"""

from __future__ import annotations

import numpy as np

from faq.compiled import compiled

__all__ = ["DIGIT_BITS", "radix_order", "radix_sort"]

#: The most bits of one digit: 4,096 counters (32 KB) stay in the first-level cache while a pass moves the
#: rows.  A key of ``b`` bits takes ``ceil(b / 12)`` digits of equal width (36 bits: 3 passes of 12).
DIGIT_BITS = 12


@compiled
def _digit_counts(key, digits, bits):  # pragma: no cover - compiled
    """The starting position of every value of every digit (one read of the keys for all digits)."""
    radix = 1 << bits
    mask = radix - 1
    starts = np.zeros((digits, radix + 1), dtype=np.int64)
    for i in range(len(key)):
        k = key[i]
        for d in range(digits):
            starts[d, ((k >> (d * bits)) & mask) + 1] += 1
    for d in range(digits):
        for v in range(radix):
            starts[d, v + 1] += starts[d, v]
    return starts


@compiled
def _radix_order(key, digits, bits):  # pragma: no cover - compiled
    n = len(key)
    starts = _digit_counts(key, digits, bits)
    mask = (1 << bits) - 1
    order = np.arange(n)
    keys = key.copy()
    moved_order = np.empty(n, dtype=np.int64)
    moved_keys = np.empty(n, dtype=np.int64)
    for d in range(digits):
        position = starts[d]
        shift = d * bits
        first = (keys[0] >> shift) & mask
        if position[first + 1] - position[first] == n:  # every row has this digit's value: no move
            continue
        for i in range(n):
            k = keys[i]
            v = (k >> shift) & mask
            p = position[v]
            position[v] = p + 1
            moved_order[p] = order[i]
            moved_keys[p] = k
        order, moved_order = moved_order, order
        keys, moved_keys = moved_keys, keys
    return order, keys


def radix_sort(key: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(order, key[order])``: the positions of ``key`` (non-negative int64, each below ``2**bits``) in
    ascending order of key, equal keys in ascending position (``np.argsort(key, kind="stable")``), and the
    keys so sorted -- in ``ceil(bits / DIGIT_BITS)`` linear passes.

    >>> order, keys = radix_sort(np.array([7, 2, 7, 1]), 3)
    >>> order.tolist(), keys.tolist()
    ([3, 1, 0, 2], [1, 2, 7, 7])
    """
    key = np.ascontiguousarray(key, dtype=np.int64)
    digits = max(0, -(-int(bits) // DIGIT_BITS))
    if digits == 0 or len(key) < 2:
        return np.arange(len(key), dtype=np.int64), key.copy()
    return _radix_order(key, digits, -(-int(bits) // digits))


def radix_order(key: np.ndarray, bits: int) -> np.ndarray:
    """The positions of ``key`` (non-negative int64, each below ``2**bits``) in ascending order of key;
    equal keys in ascending position: :func:`radix_sort`'s order."""
    return radix_sort(key, bits)[0]
