"""The first two integer fields of every line of a large edge list's text, parsed by a compiled loop on two threads.

A large edge list is most of a fresh triangle count's load: R-MAT 20's 16M
lines cost Arrow's CSV reader, the scan that makes sure Arrow's integer parser
may be trusted with them (:func:`faq.io.local_edges.read_edge_arrays`), and the
copy of Arrow's chunks into numpy.  This loop reads the bytes once, straight
into two ``int64`` arrays, on a thread per core (each its own range of whole
lines; the loop holds no GIL).

It accepts only the plain shape and gives up on anything else, so the checked
path keeps the last word on every other file: a line is ``fields`` fields of an
optional ``-`` and 1 to 19 digits that fit ``int64``, separated by one
``delimiter``, ended by ``\\n`` or ``\\r\\n`` (the last line may have neither);
empty lines are skipped.  Any other byte, an empty field, a field too long, a
line of another width: :func:`int_pairs` returns None and the caller reads the
file as before.  On the files it takes, its ids are Arrow's (the tests compare
them on random texts).

Numba is loaded only for a text worth it (:data:`MIN_BYTES`), or where it is
loaded already: importing it and readying its target costs a fresh process
seconds, far more than Arrow's read of a small file.

Examples
--------
>>> import numpy as np
>>> src, dst = int_pairs(np.frombuffer(b"1 2 9\\n\\n-3 40 7\\r\\n5 6 0", dtype=np.uint8), " ", 3, force=True)
>>> src.tolist(), dst.tolist()
([1, -3, 5], [2, 40, 6])
>>> int_pairs(np.frombuffer(b"1 2\\n3 x\\n", dtype=np.uint8), " ", 2, force=True) is None
True
>>> [a.tolist() for a in int_pairs(np.frombuffer(b"", dtype=np.uint8), " ", 2, force=True)]
[[], []]
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

__all__ = ["MIN_BYTES", "THREADS", "int_pairs", "warm_up"]

#: Texts from this size are parsed here (numba's import and start pay for themselves), smaller ones only
#: where numba is loaded already.
MIN_BYTES = 32 << 20

#: Threads the lines are dealt to (each a range of whole lines).
THREADS = 2

_FAILED = -1  # the loop's answer for a text it does not take


def _count_lines(text, low, high):  # pragma: no cover - compiled
    """Line breaks in ``text[low:high]``, plus one for a last line without one: an upper bound of the rows."""
    count = 0
    for i in range(low, high):
        if text[i] == 10:
            count += 1
    if high > low and text[high - 1] != 10:
        count += 1
    return count


def _parse(text, low, high, delimiter, fields, src, dst, at):  # pragma: no cover - compiled
    """The rows of ``text[low:high]`` (whole lines) into ``src[at:]``, ``dst[at:]``: how many, or a code < 0."""
    row = at
    i = low
    limit = 922337203685477580  # (2**63 - 1) // 10: one more digit on a larger value overflows
    while i < high:
        c = text[i]
        if c == 10:  # an empty line
            i += 1
            continue
        if c == 13 and i + 1 < high and text[i + 1] == 10:
            i += 2
            continue
        for field in range(fields):
            negative = False
            if i < high and text[i] == 45:  # '-'
                negative = True
                i += 1
            start = i
            value = 0
            while i < high:
                d = text[i] - 48
                if d < 0 or d > 9:
                    break
                if value > limit or (value == limit and d > (8 if negative else 7)):
                    return _FAILED  # beyond int64 (-2**63 itself wraps to itself below: int64 arithmetic)
                value = value * 10 + d
                i += 1
            if i == start or i - start > 19:  # empty, a lone '-', or longer than the Spark path's ids
                return _FAILED
            if field == 0:
                src[row] = -value if negative else value
            elif field == 1:
                dst[row] = -value if negative else value
            if field < fields - 1:  # a separator next
                if i >= high or text[i] != delimiter:
                    return _FAILED
                i += 1
            elif i < high:  # the line's end next
                if text[i] == 13:
                    i += 1
                if i >= high or text[i] != 10:
                    return _FAILED
                i += 1
        row += 1
    return row - at


def _kernels() -> tuple:
    from faq.compiled import kernels

    return kernels(_count_lines, _parse)


def _line_ranges(text: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """``parts`` ranges of whole lines covering ``text``: each cut just after a line break."""
    cuts = [0]
    for k in range(1, parts):
        at = max(cuts[-1], len(text) * k // parts)
        breaks = np.flatnonzero(text[at:at + (1 << 16)] == 10)  # lines are short: the next break is near
        if len(breaks) == 0:
            break  # a line longer than that is no edge list's: one range fewer
        cuts.append(at + int(breaks[0]) + 1)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def int_pairs(text: np.ndarray, delimiter: str, fields: int, *, force: bool = False
              ) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """The first two fields of every line of ``text`` as ``int64`` arrays, or None when ``text`` is not of the
    plain shape (module notes) -- or is too small to be worth numba (unless ``force``) -- or numba is missing.

    Parameters
    ----------
    text : numpy.ndarray of uint8
        An edge list's data lines (its header and leading comments cut off).
    delimiter : str
        The one-byte field separator.
    fields : int
        How many fields every line has (at least 2).
    force : bool
        Parse a small text too.
    """
    from faq.compiled import COMPILED

    if not COMPILED or fields < 2 or len(delimiter.encode()) != 1:
        return None
    if not force and len(text) < MIN_BYTES and "numba" not in sys.modules:
        return None
    count, parse = _kernels()
    ranges = _line_ranges(text, THREADS if len(text) >= 1 << 20 else 1)
    if not ranges:  # no byte at all: no line
        return np.empty(0, np.int64), np.empty(0, np.int64)
    with ThreadPoolExecutor(len(ranges)) as pool:
        bounds = list(pool.map(lambda r: int(count(text, r[0], r[1])), ranges))
        offsets = np.concatenate(([0], np.cumsum(bounds)))
        src = np.empty(int(offsets[-1]), dtype=np.int64)
        dst = np.empty(int(offsets[-1]), dtype=np.int64)
        separator = ord(delimiter)
        rows = list(pool.map(lambda k: int(parse(text, ranges[k][0], ranges[k][1], separator, fields, src, dst,
                                                 int(offsets[k]))), range(len(ranges))))
    if any(r < 0 for r in rows):
        return None
    if sum(rows) == len(src):  # no empty line: the arrays as written
        return src, dst
    keep = np.concatenate([np.arange(o, o + r) for o, r in zip(offsets[:-1], rows)])
    return src[keep], dst[keep]


def warm_up() -> bool:
    """Compile the loops into numba's cache (``python -m faq.io.int_pairs``), checked on a small text; False
    without numba.

    >>> warm_up() in (True, False)
    True
    """
    from faq.compiled import COMPILED

    if not COMPILED:
        return False
    got = int_pairs(np.frombuffer(b"1 2\n3 -4\n", dtype=np.uint8), " ", 2, force=True)
    return got is not None and [a.tolist() for a in got] == [[1, 3], [2, -4]]


if __name__ == "__main__":
    from faq.compiled import warm_main

    warm_main("faq.io.int_pairs", "faq: edge-list parser compiled",
              "faq: numba is not installed; edge lists are read by Arrow", "the edge-list parser")
