"""The (address, length) rows of a trie's arrays, kept per trie while it lives.

The compiled delta loop (:mod:`faq.incremental.rule_kernel`) reads tries by
their arrays' addresses; an address costs 1-2 µs to take, and a base's tries
are read by every batch until the next compaction, a recent level's by the two
batches that read it.  So the rows are kept here by the trie's id, each entry
with a weak reference to its trie whose callback drops the entry when the trie
goes (before its id can be reused).  :mod:`faq.incremental.level_merge`, which
makes a merged trie's arrays and knows their addresses, records them as it
makes them.

>>> import numpy as np
>>> from faq.joins.csr import Trie, TrieLevel
>>> level = TrieLevel(np.array([1, 2], dtype=np.int64), np.array([0, 1, 2], dtype=np.int64))
>>> trie = Trie((level,), np.array([1.0, 2.0]))
>>> remember_rows(trie, [(10, 2), (20, 3)], (30, 2))
>>> remembered(trie)
([(10, 2), (20, 3)], (30, 2))
>>> forget(trie), remembered(trie)
(([(10, 2), (20, 3)], (30, 2)), None)
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from faq.joins.csr import Trie

__all__ = ["Rows", "remember_rows", "remembered", "forget"]

#: A trie's rows: its levels' (comp, then offsets) and its values' (None without values).
Rows = tuple[list[tuple[int, int]], Optional[tuple[int, int]]]

_KEPT: dict[int, tuple[Any, list, Optional[tuple[int, int]]]] = {}  # a cache: by id(trie), with a weak reference


def remember_rows(trie: "Trie", rows: list[tuple[int, int]], value_row: Optional[tuple[int, int]]) -> None:
    """Keep ``trie``'s rows until it is freed: valid only if they point into the trie's own arrays."""
    key = id(trie)
    _KEPT[key] = (weakref.ref(trie, lambda _, key=key: _KEPT.pop(key, None)), rows, value_row)


def remembered(trie: "Trie") -> Optional[Rows]:
    """The rows kept for ``trie``, or None."""
    kept = _KEPT.get(id(trie))
    return (kept[1], kept[2]) if kept is not None and kept[0]() is trie else None


def forget(trie: "Trie") -> Optional[Rows]:
    """Drop the rows kept for ``trie``; what was kept, or None."""
    kept = _KEPT.pop(id(trie), None)
    return (kept[1], kept[2]) if kept is not None and kept[0]() is trie else None
