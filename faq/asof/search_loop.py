"""The compiled as-of search of :mod:`faq.asof.kernel` (numba; imported only when a search runs compiled).

:func:`search` runs :func:`~faq.asof.search_step.one_match` for every left row.
Both are module-level functions, so numba's on-disk cache finds them again
in the next process: compiled inside a function instead, the search held its
helper in a closure, and numba wrote a new cache entry in every process
instead of reading the last one (two compiles a process, and a cache
directory that only grew).

>>> import numpy as np
>>> out = np.empty(1, dtype=np.int64)
>>> search(np.array([0, 2]), np.array([1.0, 3.0]), np.array([0, 1]), np.ones(1, dtype=bool), False,
...        np.array([0]), np.array([2.0]), 0, True, -1.0, out)
>>> out.tolist()                              # backward from 2.0: the right row at time 1.0
[0]
"""

from __future__ import annotations

from faq.asof.search_step import one_match  # not faq.asof.kernel, which imports this module
from faq.compiled import compiled  # numba's njit with faq's options: cached on disk, the GIL released

__all__ = ["search", "one"]

# numba's cache of ``search`` is keyed on this file alone, yet holds ``one_match`` compiled into it: a change
# to one_match (faq/asof/search_step.py) must come with a change here, or a warmed cache keeps the old search.
# (Last: issue 50, one_match searches only the bounds its direction reads, without branches; before: issue 49,
# one_match moved from faq/asof/kernel.py to break the import circle.)
one = compiled(one_match)


@compiled
def search(starts, rtimes, order, alive, check_alive, codes, times, kind, exact, limit, out):  # pragma: no cover
    """``out[i]``: the right row matching left row ``i`` (code ``codes[i]``, time ``times[i]``), or -1."""
    n_codes = len(starts) - 1
    for i in range(len(codes)):
        out[i] = one(starts, rtimes, order, alive, check_alive, n_codes, codes[i], times[i], kind, exact, limit)

