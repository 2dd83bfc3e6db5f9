"""A batch merged into a resident relation's recent level, trie by trie, in one compiled pass a view.

A single change's rules read the recent level with the batch merged in
(:meth:`faq.incremental.index.ResidentRelation.new_runs`), and the commit
keeps that level and its tries.  Merging the rows, then sorting them again
for each view's trie, cost three compiled calls and a sort of the level per
batch (a view other than the rows' own order).  Here each view's trie of the
level is merged with the batch's rows in that view's order instead: both are
sorted already, so one linear pass writes the new trie (and, for the
identity view, the new rows), with no sort and one call a view.

Two key columns, values added with ``+`` (plain int64 or float64 numbers):
the runs :func:`faq.incremental.rows.build_run` indexes compiled.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.rows import View, build_run, merge_rows
>>> from faq.semirings import INTEGER
>>> from faq.semirings.numpy_backend import numpy_ops
>>> ops = numpy_ops(INTEGER)
>>> level = merge_rows([np.array([0, 1, 2]), np.array([1, 2, 0])], np.array([1, 1, -1]), ops)
>>> batch = merge_rows([np.array([1, 3]), np.array([2, 0])], np.array([-1, 1]), ops)   # 1->2 cancels
>>> tries, rows = merged_level(level, {View((1, 0)): build_run(level, View((1, 0)), ops)}, batch,
...                            [View((0, 1)), View((1, 0))], ops)
>>> [k.tolist() for k in rows.keys], rows.values.tolist()
([[0, 2, 3], [1, 0, 0]], [1, -1, 1])
>>> tries[View((1, 0))].levels[0].comp.tolist()          # by dst: 0, then 1
[0, 1]
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.incremental.rows import KeyedRows, View
from faq.joins.csr import Trie, TrieLevel
from faq.semirings.numpy_backend import NumpyForm

__all__ = ["merged_level", "fits"]


def _merge_trie(top, offsets, bottom, values, valued, first, second, added, zero, one, span,
                out_top, out_offsets, out_bottom, out_values, out_first, out_second):  # pragma: no cover - numba
    """A two-level trie (``top``; ``offsets``, ``bottom``: ``parent * span + second``; ``values`` unless
    ``valued`` is False) with sorted rows ``first``, ``second`` (valued ``added``) merged in: values of
    a key in both added, a sum equal to ``zero`` dropped.  Writes the new trie to the ``out_`` arrays
    (room for both) and its rows to ``out_first``, ``out_second``.  Returns (parents, rows, whether
    every value is ``one``)."""
    parents = len(top)
    m = len(first)
    p = i = j = k = 0
    q = -1  # the last parent written
    last = -1
    a0 = a1 = 0
    all_one = True
    while p < parents or j < m:
        if p < parents and i >= offsets[p + 1]:  # this parent's entries are done
            p += 1
            continue
        if p < parents:
            a0, a1 = top[p], bottom[i] - p * span
        take_old = j >= m or (p < parents and (a0 < first[j] or (a0 == first[j] and a1 < second[j])))
        if take_old:
            f, s = a0, a1
            v = values[i] if valued else one
            i += 1
        elif p < parents and a0 == first[j] and a1 == second[j]:
            f, s = a0, a1
            v = (values[i] if valued else one) + added[j]
            i += 1
            j += 1
            if v == zero:
                continue
        else:
            f, s, v = first[j], second[j], added[j]
            j += 1
        if q < 0 or f != last:
            q += 1
            out_top[q] = f
            out_offsets[q] = k
            last = f
        out_bottom[k] = q * span + s
        out_values[k] = v
        out_first[k] = f
        out_second[k] = s
        all_one = all_one and v == one
        k += 1
    out_offsets[q + 1] = k
    return q + 1, k, all_one


def _kernel():
    from faq.compiled import kernels

    return kernels(_merge_trie)[0]


def fits(ops: NumpyForm, view: View, level: KeyedRows, batch: KeyedRows) -> bool:
    """Whether ``batch`` merges into ``level``'s trie in ``view`` here: two key columns, no equal
    groups, plain numbers added with numpy's +."""
    return (len(view.order) == 2 and not view.equal and len(level.keys) == 2 and len(batch.keys) == 2
            and ops.add is np.add and not ops.value_shape and np.dtype(ops.dtype).kind in "if")


def _merged_trie(trie: Optional[Trie], first: np.ndarray, second: np.ndarray, added: np.ndarray,
                 ops: NumpyForm) -> tuple[Trie, np.ndarray, np.ndarray, np.ndarray]:
    """``trie`` (None: empty) with the sorted rows merged in: (the trie, its rows' first and second
    keys in its order, its values)."""
    from faq.incremental.trie_rows import remember_rows

    dtype = np.dtype(ops.dtype)
    if trie is None or trie.rows == 0:
        top = offsets = bottom = np.zeros(0, dtype=np.int64)
        values, valued = np.zeros(0, dtype=dtype), False
    else:
        top, offsets = trie.levels[0].comp, trie.levels[1].offsets
        bottom, valued = trie.levels[1].comp, trie.values is not None
        values = trie.values if valued else np.zeros(0, dtype=dtype)
    size = len(bottom) + len(first)
    # One allocation: top, offsets, bottom, the rows' keys, the first level's offsets (its rows' addresses
    # follow from the block's: the loop's table of the trie costs no call a row).
    block = np.empty((6, size + 1), dtype=np.int64)
    out_values = np.empty(size, dtype=dtype)
    parents, rows, all_one = _kernel()(
        top, offsets, bottom, values.astype(dtype, copy=False), valued, first, second, added,
        np.asarray(ops.zero, dtype=dtype)[()], np.asarray(ops.one, dtype=dtype)[()], np.int64(SPAN),
        block[0], block[1], block[2], out_values, block[3], block[4])
    block[5, 0], block[5, 1] = 0, parents
    levels = (TrieLevel(block[0, :parents], block[5, :2], False, False),
              TrieLevel(block[2, :rows], block[1, :parents + 1], False, False))
    out_values = out_values[:rows]
    kept = None if all_one else out_values
    nbytes = 8 * (2 * parents + 2 * rows + 3) + (0 if kept is None else out_values.nbytes)
    trie = Trie(levels, kept, rows, nbytes)
    at, stride = block.__array_interface__["data"][0], 8 * (size + 1)
    remember_rows(trie, [(at, parents), (at + 5 * stride, 2), (at + 2 * stride, rows), (at + stride, parents + 1)],
                  None if kept is None else (out_values.__array_interface__["data"][0], rows))
    return trie, block[3, :rows], block[4, :rows], out_values


def merged_level(level: KeyedRows, tries: Mapping[View, Trie], batch: KeyedRows, views: Sequence[View],
                 ops: NumpyForm) -> tuple[dict[View, Trie], KeyedRows]:
    """``batch`` (one row a key, sorted) merged into ``level`` (the same), and the merged level's trie
    in each of ``views`` (:func:`fits` for each; the first the identity view ``(0, 1)``).

    ``tries`` holds ``level``'s tries by view; a view missing there is built first.  Returns (the
    tries by view, the merged rows): what :func:`~faq.incremental.rows.combined` and
    :func:`~faq.incremental.rows.build_run` make, with the same rows and values.
    """
    from faq.incremental.rows import build_run

    dtype = np.dtype(ops.dtype)
    keys = [np.asarray(k, dtype=np.int64) for k in batch.keys]
    added = np.asarray(batch.values_or_ones(ops), dtype=dtype)
    out: dict[View, Trie] = {}
    rows = None
    for view in views:
        first, second = keys[view.order[0]], keys[view.order[1]]
        values = added
        if view.order != (0, 1) and len(first) > 1:  # the batch in this view's order
            order = np.argsort(first * np.int64(SPAN) + second, kind="stable")
            first, second, values = first[order], second[order], added[order]
        old = tries.get(view)
        if old is None and len(level):
            old = build_run(level, view, ops)
        trie, a, b, merged = _merged_trie(old, first, second, values, ops)
        out[view] = trie
        if view.order == (0, 1):
            rows = KeyedRows((a, b), merged)
    assert rows is not None, "the identity view comes first"
    return out, rows
