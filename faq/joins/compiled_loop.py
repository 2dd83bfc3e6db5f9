"""The compiled loop of :mod:`faq.joins.compiled` (numba; imported only by tasks that run it).

Depth first over the attributes with an explicit stack: per prefix, the
extender with the fewest entries proposes its sorted candidates, the others
validate each by a galloping search resuming where the previous one ended
(``comp`` holds each level's values within their parent's segment, int32
where the keys allow: :func:`faq.joins.compiled.local_keys`);
the leaf ⊗-multiplies the relations' values and ⊕-adds them to the total.
A count (no value gathered) stops one depth early: :func:`_count_last`
counts the last depth's candidates in one tight loop, and where one of two
extenders keeps its segment while the depth above varies (a triangle's
``edge(a, c)`` as ``b`` runs) that segment is marked in a bitmap (a bit a
key) once and the other's entries are looked up in it.  Where the staying
segment is the smaller, the pair is deferred instead: :func:`_settle` later
takes the deferred pairs grouped by the other segment, marks that one and
looks the staying one's entries up, so each intersection costs its smaller
side in lookups and no search.
Operations are codes: 0 +, 1 ×, 2 min, 3 max.  Compiled once per machine
(numba's on-disk cache), not once per Spark worker.

>>> import numpy as np
>>> comp = np.array([1, 3, 5, 7], dtype=np.int64)
>>> [int(first_at_least(comp, 0, 0, 4, key)) for key in (0, 3, 4, 8)]     # first position holding >= key
[0, 1, 2, 4]
"""

from __future__ import annotations

import numpy as np

from faq.compiled import compiled
from faq.joins.partial import GUARD_SHIFT

_jit = compiled  # faq's one way to compile a loop (on-disk cache: each Spark worker would compile again)


@_jit
def apply_operation(code, a, b):
    """``a op b`` for an operation code (0 +, 1 ×, 2 min, 3 max); the delta rules' loop uses it too."""
    if code == 0:
        return a + b
    if code == 1:
        return a * b
    if code == 2:
        return min(a, b)
    return max(a, b)


@_jit
def first_at_least(comp, base, low, high, key):
    """First position in ``comp[base + low : base + high]`` (sorted) holding at least ``key``.

    Galloping from ``low``: keys come in increasing order (a proposer's
    candidates are sorted), so each search starts where the last one ended
    and costs the log of the distance moved, not of the segment.
    """
    step = 1
    while low + step < high and comp[base + low + step - 1] < key:
        low += step
        step <<= 1
    high = min(high, low + step)
    while low < high:
        middle = (low + high) >> 1
        if comp[base + middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


#: The fewest entries of a staying segment worth deferring (:func:`_count_last`): one is one search.
DEFER_MIN_ENTRIES = 2
_PACKED = 1 << 31  # a deferred pair packs two parents below this into one non-negative int64

# The guarded total (``aggregate``'s ``guard``) moves its multiples of 2^61 to a carry: |total| <= 2^61
# and one binding's |product| <= 2^61 (faq.joins.partial.INT_LIMIT // 2) never sum past 2^63.
_GUARD_HALF = 1 << GUARD_SHIFT

# What _seek returns when the key is missing: before the segment's end, or past it.
_MISSING, _PAST_END = -1, -2


@_jit
def _seek(o, value, parent, cursor, ext_level, comp, comp_start, offsets, offsets_start):
    """Validator ``o``: the position of ``value`` in its segment (its cursor moved there), else
    :data:`_MISSING`, or :data:`_PAST_END` when the segment holds nothing at or above it."""
    high = offsets[offsets_start[ext_level[o]] + parent[o] + 1]
    at = first_at_least(comp, comp_start[ext_level[o]], cursor[o], high, value)
    cursor[o] = at
    if at >= high:
        return _PAST_END
    if comp[comp_start[ext_level[o]] + at] != value:
        return _MISSING
    return at


@_jit
def _open(d, node, parent, cursor, position, end, proposer, depth_start, ext_slot, ext_level, offsets,
          offsets_start):
    """Enter depth ``d``: every extender's segment under the prefix; the smallest proposes (False: empty)."""
    node[d, :] = node[d - 1, :]
    best, best_count = -1, -1
    for e in range(depth_start[d - 1], depth_start[d]):
        p = node[d - 1, ext_slot[e]]
        base = offsets_start[ext_level[e]]
        count = offsets[base + p + 1] - offsets[base + p]
        parent[e] = p
        cursor[e] = offsets[base + p]
        if best < 0 or count < best_count:
            best, best_count = e, count
    if best_count <= 0:
        return False
    base = offsets_start[ext_level[best]]
    position[d] = offsets[base + parent[best]]
    end[d] = offsets[base + parent[best] + 1]
    proposer[d] = best
    return True


@_jit
def aggregate(seed_nodes, depth_start, ext_slot, ext_level, comp, comp_start, offsets, offsets_start, span,
          values, values_start, value_slot, add, mul, zero, one, mark_ext, defer_pairs, guard, carry):
    """Long because: one compiled loop, depth first over the attributes, with an explicit stack.

    ``guard`` (int64 ⊕ = + of valued bindings, each of magnitude at most 2^61): the total is kept
    exact as ``carry[0] · 2^61 + total`` -- whenever the running total leaves ±2^61 its multiple of
    2^61 moves to ``carry`` -- so no partial sum can wrap (the numpy kernel's per-flush guard, here).
    """
    depths = len(depth_start) - 1
    node = np.zeros((depths + 1, seed_nodes.shape[1]), dtype=np.int64)
    parent = np.zeros(len(ext_slot), dtype=np.int64)
    cursor = np.zeros(len(ext_slot), dtype=np.int64)  # where each validator's next search starts
    position = np.zeros(depths + 1, dtype=np.int64)
    end = np.zeros(depths + 1, dtype=np.int64)
    proposer = np.zeros(depths + 1, dtype=np.int64)
    total = zero
    # A count (no value to gather; ⊕ is +, min or max): the last depth counts its candidates in one tight loop.
    counted = len(value_slot) == 0 and add != 1
    # The last depth's extender whose segment stays while its siblings vary, marked in a bitmap.
    words = (span + 63) >> 6 if counted and mark_ext >= 0 else 0
    mark = np.zeros(words, dtype=np.uint64)
    marked = np.full(1, -1, dtype=np.int64)  # the parent whose segment ``mark`` holds
    # Pairs of segments whose intersection _count_last left to _settle, which marks the other one.
    deferred = np.empty(defer_pairs if words else 0, dtype=np.int64)
    pending = np.zeros(1, dtype=np.int64)
    swapped = np.zeros(words, dtype=np.uint64)
    other = depth_start[depths - 1] if depth_start[depths - 1] != mark_ext else depth_start[depths - 1] + 1
    for s in range(seed_nodes.shape[0]):
        node[0, :] = seed_nodes[s, :]
        if not _open(1, node, parent, cursor, position, end, proposer, depth_start, ext_slot, ext_level, offsets,
                     offsets_start):
            continue
        d = 1
        while d >= 1:
            if position[d] >= end[d]:
                d -= 1
                continue
            k = position[d]
            position[d] += 1
            e = proposer[d]
            value = comp[comp_start[ext_level[e]] + k]
            node[d, ext_slot[e]] = k
            held = True
            for o in range(depth_start[d - 1], depth_start[d]):
                if o == e:
                    continue
                at = _seek(o, value, parent, cursor, ext_level, comp, comp_start, offsets, offsets_start)
                if at < 0:
                    held = False
                    break
                node[d, ext_slot[o]] = at
            if not held:
                continue
            if d == depths:  # reached only when the last level is enumerated (values to gather)
                product = one
                for q in range(len(value_slot)):
                    product = apply_operation(mul, product, values[values_start[q] + node[d, value_slot[q]]])
                total = apply_operation(add, total, product)
                if guard and (total > _GUARD_HALF or total < -_GUARD_HALF):
                    moved = total // _GUARD_HALF  # floor: what is left is in [0, 2^61) (int64 only: guard)
                    carry[0] += np.int64(moved)
                    total -= moved * _GUARD_HALF
            elif _open(d + 1, node, parent, cursor, position, end, proposer, depth_start, ext_slot, ext_level, offsets,
                       offsets_start):
                if d + 1 == depths and counted:
                    found = _count_last(depths, parent, cursor, position, end, proposer, depth_start, ext_level,
                                        comp, comp_start, offsets, offsets_start, mark_ext, mark, marked,
                                        deferred, pending)
                    if found > 0:
                        total = apply_operation(add, total, one * found if add == 0 else one)
                    if pending[0] == len(deferred) > 0:
                        total = _settle(total, deferred, pending, ext_level[mark_ext], ext_level[other], comp,
                                        comp_start, offsets, offsets_start, swapped, add, one)
                else:
                    d += 1
    if pending[0] > 0:
        total = _settle(total, deferred, pending, ext_level[mark_ext], ext_level[other], comp, comp_start,
                        offsets, offsets_start, swapped, add, one)
    return total


@_jit
def _count_last(d, parent, cursor, position, end, proposer, depth_start, ext_level, comp, comp_start, offsets,
                offsets_start, mark_ext, mark, marked, deferred, pending):
    """How many of the proposer's candidates at the last depth ``d`` every other extender holds.

    The leaf's tight loop when no value is gathered (a count): the same
    galloping validation as the depth-first loop, with no stack and no
    per-binding product.  Where the extender that stays (``mark_ext``)
    validates, its segment is marked in ``mark`` once per parent and
    candidates are looked up there (one load each, no search).
    """
    e = proposer[d]
    first, last = depth_start[d - 1], depth_start[d]
    proposed = comp_start[ext_level[e]]
    found = 0
    if last - first == 2:  # one validator (a triangle's last level)
        o = first if e != first else first + 1
        if mark_ext >= 0 and e != mark_ext:  # the validator stays: look the candidates up in its bitmap
            _mark(mark_ext, parent, ext_level, comp, comp_start, offsets, offsets_start, mark, marked)
            return _count_bits(mark, comp, proposed, position[d], end[d])
        if (mark_ext >= 0 and end[d] - position[d] >= DEFER_MIN_ENTRIES and len(deferred)
                and parent[o] < _PACKED and parent[e] < _PACKED):
            # The staying segment is the smaller: searching the other for each of its entries costs
            # most of a triangle count on skewed graphs.  Defer the pair; _settle marks the other.
            deferred[pending[0]] = (parent[o] << 32) | parent[e]
            pending[0] += 1
            return 0
        # Else a galloping merge of the two segments.
        held = comp_start[ext_level[o]]
        at, high = cursor[o], offsets[offsets_start[ext_level[o]] + parent[o] + 1]
        for k in range(position[d], end[d]):
            key = comp[proposed + k]
            at = first_at_least(comp, held, at, high, key)
            if at >= high:
                break
            if comp[held + at] == key:
                found += 1
                at += 1
        return found
    looked_up = mark_ext >= 0 and e != mark_ext  # that validator answers from the bitmap
    if looked_up:
        _mark(mark_ext, parent, ext_level, comp, comp_start, offsets, offsets_start, mark, marked)
    for k in range(position[d], end[d]):
        value = comp[proposed + k]
        if looked_up and not _has(mark, value):
            continue
        held = True
        for o in range(first, last):
            if o == e or (looked_up and o == mark_ext):
                continue
            at = _seek(o, value, parent, cursor, ext_level, comp, comp_start, offsets, offsets_start)
            if at == _PAST_END:
                return found  # this validator has nothing left at or above the candidates to come
            if at < 0:
                held = False
                break
        if held:
            found += 1
    return found


@_jit
def _mark(m, parent, ext_level, comp, comp_start, offsets, offsets_start, mark, marked):
    """``mark`` holds the values of extender ``m``'s segment under its parent (the old one's cleared)."""
    level = ext_level[m]
    held, base = comp_start[level], offsets_start[level]
    p = parent[m]
    if marked[0] == p:
        return
    if marked[0] >= 0:
        q = marked[0]
        _clear_bits(mark, comp, held, offsets[base + q], offsets[base + q + 1])
    _set_bits(mark, comp, held, offsets[base + p], offsets[base + p + 1])
    marked[0] = p


@_jit
def _set_bits(mark, comp, held, start, stop):
    """Set the bits of ``comp[held + start : held + stop]`` in ``mark`` (64 keys a word)."""
    for k in range(start, stop):
        v = comp[held + k]
        mark[v >> 6] |= np.uint64(1) << np.uint64(v & 63)


@_jit
def _clear_bits(mark, comp, held, start, stop):
    """Clear what :func:`_set_bits` set for the same entries (whole words: only they were set)."""
    for k in range(start, stop):
        mark[comp[held + k] >> 6] = 0


@_jit
def _has(mark, v):
    """Whether key ``v`` is set in ``mark``."""
    return (mark[v >> 6] >> np.uint64(v & 63)) & np.uint64(1) != 0


@_jit
def _count_bits(mark, comp, held, start, stop):
    """How many of ``comp[held + start : held + stop]`` are set in ``mark``."""
    found = 0
    for k in range(start, stop):
        v = comp[held + k]
        found += np.int64((mark[v >> 6] >> np.uint64(v & 63)) & np.uint64(1))
    return found


@_jit
def _settle(total, deferred, pending, s_level, v_level, comp, comp_start, offsets, offsets_start, mark, add, one):
    """⊕ into ``total`` the counts of the pairs :func:`_count_last` deferred; none are left pending.

    Each pair packs (the varying extender's parent << 32 | the staying
    one's).  Sorted, the pairs come grouped by the varying segment, which is
    marked once per group; the staying segment's entries are looked up.
    """
    keys = np.sort(deferred[:pending[0]])
    pending[0] = 0
    s_held, s_base = comp_start[s_level], offsets_start[s_level]
    v_held, v_base = comp_start[v_level], offsets_start[v_level]
    current = -1
    for key in keys:
        v, s = key >> 32, key & 0xFFFFFFFF
        if v != current:
            if current >= 0:
                _clear_bits(mark, comp, v_held, offsets[v_base + current], offsets[v_base + current + 1])
            _set_bits(mark, comp, v_held, offsets[v_base + v], offsets[v_base + v + 1])
            current = v
        found = _count_bits(mark, comp, s_held, offsets[s_base + s], offsets[s_base + s + 1])
        if found > 0:
            total = apply_operation(add, total, one * found if add == 0 else one)
    if current >= 0:
        _clear_bits(mark, comp, v_held, offsets[v_base + current], offsets[v_base + current + 1])
    return total
