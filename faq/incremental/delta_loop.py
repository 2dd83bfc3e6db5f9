"""The compiled loop of :mod:`faq.incremental.rule_kernel` (numba; imported only when a rule runs it).

One delta rule, seeded by a batch's rows, ⊕-aggregated to one value.  The
relations a rule reads are each several runs (base, frozen overlay levels,
older and recent changes, the batch: :mod:`faq.incremental.index`), and a
key's value is the ⊕ of its rows in the runs.  By distributivity the rule's
total is the ⊕ over every *combination* of one run per relation of the join
over those runs alone, so the loop takes, per seed row, the runs holding
the seed's bound keys and walks their combinations; each combination is
the static compiled loop's depth-first join (:mod:`faq.joins.compiled_loop`):
per prefix the extender with the smallest segment proposes, the others
validate each candidate by a galloping search resuming where the previous
one ended.

The tries are the resident indexes' own (no copy): a level's ``comp`` holds
``parent * span + value``, sorted, with CSR ``offsets`` per parent, so a
search within a parent's segment looks for the composite key.  They come as
rows of ``(address, length)`` (``comp`` at row ``level_at[r, k, j]``, its
``offsets`` the next row; values, per read and run or none when every value
is one, in a second table), viewed in place with ``numba.carray``.  That is
the one unsafe step here: the caller (:func:`faq.incremental.rule_kernel.aggregate_rule`)
holds every array, C-contiguous and of the stated type, for the whole call.
A tuple of arrays indexed at run time was the first form; numba spills the
whole tuple to the stack at every such index, which cost about a
microsecond per combination of runs, more than the join's own work on
small segments.

At the last depth the loop ⊕-sums, over the candidates every validator
holds, the ⊗ of the values of the relations extended there (one for a
relation without values) and ⊗-multiplies that sum into the prefix's
product once: exact where ⊗ distributes over ⊕, as in every semiring with
these codes (a ⊕ of × walks every binding).  Two segments of comparable
sizes are merged linearly; a small one against a large one gallops.

Operations are codes, as in the static loop: 0 +, 1 ×, 2 min, 3 max.

>>> import numpy as np
>>> comp = np.array([5, 7, 12, 13], dtype=np.int64)
>>> int(first_at_least(comp, 0, 0, 4, 8)), int(first_at_least(comp, 0, 2, 4, 13))
(2, 3)
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

from faq.compiled import compiled
from faq.joins.compiled_loop import apply_operation, first_at_least
from faq.joins.partial import GUARD_SHIFT

_GUARD_HALF = 1 << GUARD_SHIFT

# The helpers run per combination of runs and per candidate, where a call's overhead would show:
# they are compiled into their callers.
_jit = compiled
_inlined = functools.partial(compiled, inline=True)


@intrinsic
def _pointer(typingctx, address, like):
    """The address ``address`` as a pointer to numbers of ``like``'s type."""
    signature = types.CPointer(like)(types.int64, like)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(like)))

    return signature, codegen


@_inlined
def _int64s(arrays, i):
    """Array ``i`` of ``arrays`` (rows of address and length: see the module notes), as int64."""
    return numba.carray(_pointer(arrays[i, 0], np.int64(0)), arrays[i, 1])


@_inlined
def _numbers(values, i, like):
    """Value array ``i`` of ``values`` (rows of address and length), of ``like``'s type."""
    return numba.carray(_pointer(values[i, 0], like), values[i, 1])


@_inlined
def _open(d, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth, cursor, high, position, end,
          proposer):
    """Enter depth ``d``: each extender's segment under its read's node; the smallest proposes (False: empty)."""
    for r in range(nodes.shape[1]):  # a loop: a slice assignment within one array copies through a temporary
        nodes[d + 1, r] = nodes[d, r]
    best, best_count = -1, -1
    for e in range(depth_start[d], depth_start[d + 1]):
        r = ext_read[e]
        offsets = _int64s(arrays, level_at[r, choice[r], ext_depth[e]] + 1)
        p = nodes[d, r]
        cursor[e] = offsets[p]
        high[e] = offsets[p + 1]
        count = high[e] - cursor[e]
        if best < 0 or count < best_count:
            best, best_count = e, count
    if best_count <= 0:
        return False
    position[d] = cursor[best]
    end[d] = high[best]
    proposer[d] = best
    return True


@_inlined
def _held(d, value, e, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth, cursor, high, span):
    """Whether every extender of depth ``d`` but ``e`` holds ``value`` (their nodes set in ``nodes[d + 1]``);
    -1 when one has nothing left at or above it (no later candidate can hold)."""
    for o in range(depth_start[d], depth_start[d + 1]):
        if o == e:
            continue
        r = ext_read[o]
        comp = _int64s(arrays, level_at[r, choice[r], ext_depth[o]])
        key = nodes[d, r] * span + value
        at = first_at_least(comp, 0, cursor[o], high[o], key)
        cursor[o] = at
        if at >= high[o]:
            return -1
        if comp[at] != key:
            return 0
        nodes[d + 1, r] = at
    return 1


@_inlined
def _distinct_ok(x, distinct, p, value):
    """Whether ``value`` bound at position ``p`` differs from every earlier variable it must differ from."""
    for q in range(distinct.shape[0]):
        if distinct[q, 1] == p and x[distinct[q, 0]] == value:
            return False
    return True


@_inlined
def _product(start, nodes_row, choice, values, value_at, skip, depth_start, ext_read, mul):
    """⊗ of ``start`` and the value of every valued read's run at the read's node in ``nodes_row``,
    but for the reads extended at depth ``skip`` (none when negative)."""
    product = start
    for r in range(value_at.shape[0]):
        v = value_at[r, choice[r]]
        if v < 0:
            continue
        skipped = False
        if skip >= 0:
            for e in range(depth_start[skip], depth_start[skip + 1]):
                skipped = skipped or ext_read[e] == r
        if not skipped:
            product = apply_operation(mul, product, _numbers(values, v, start)[nodes_row[r]])
    return product


@_inlined
def _pair_value(one, mine, my_values, k, theirs, their_values, at, mul):
    """⊗ of the two last-depth values of a match: entry ``k`` of the proposer's values and ``at`` of the
    validator's (one for a side without values, ``mine`` / ``theirs`` negative)."""
    value = one
    if mine >= 0:
        value = apply_operation(mul, value, my_values[k])
    if theirs >= 0:
        value = apply_operation(mul, value, their_values[at])
    return value


@_inlined
def _guarded(total, carry, guard):
    """Move the multiples of 2^61 of an int64 running sum to ``carry`` (exact past int64)."""
    if guard and (total > _GUARD_HALF or total < -_GUARD_HALF):
        moved = total // _GUARD_HALF
        carry[0] += np.int64(moved)
        total -= moved * _GUARD_HALF
    return total


@_jit
def aggregate_rule(seeds, seed_values, seed_nodes, arrays, values, level_at, value_at, runs, depth_start, ext_read,
                   ext_depth, distinct, span, add, mul, zero, one, factor, unit, guard, carry, reached,
                   merge_ratio):
    """Long because: one compiled loop -- per seed, per combination of runs, depth first over the
    rule's remaining attributes with an explicit stack.

    ``seeds`` (n, W) holds the seed's W variables (rule positions 0..W-1) and
    ``seed_values`` their values; read ``r`` has ``runs[r]`` runs, and
    ``seed_nodes[r, k, s]`` is the node of seed ``s``'s keys in run ``k`` (the
    root where the seed binds none of the read's attributes; -1 where the run
    lacks them); depth ``d`` (position ``W + d``) is extended by extenders
    ``depth_start[d]:depth_start[d+1]`` (read ``ext_read[e]``, its level
    ``ext_depth[e]``).  ``distinct`` rows are position pairs (a < b) that must
    differ.  At the last depth a validator's segment at most ``merge_ratio``
    times the proposer's is merged linearly, a longer one galloped.  Returns
    the ⊕ total (with ``carry[0] · 2^61`` when ``guard``); ``reached[0]``
    counts the bindings.
    """
    n, width = seeds.shape
    reads = runs.shape[0]
    depths = depth_start.shape[0] - 1
    max_runs = level_at.shape[1]
    x = np.zeros(width + depths, dtype=np.int64)
    holds = np.zeros((reads, max_runs), dtype=np.bool_)
    choice = np.zeros(reads, dtype=np.int64)
    nodes = np.zeros((depths + 1, reads), dtype=np.int64)
    extenders = depth_start[depths]
    cursor = np.zeros(max(extenders, 1), dtype=np.int64)
    high = np.zeros(max(extenders, 1), dtype=np.int64)
    position = np.zeros(max(depths, 1), dtype=np.int64)
    end = np.zeros(max(depths, 1), dtype=np.int64)
    proposer = np.zeros(max(depths, 1), dtype=np.int64)
    total = zero
    # ⊗ distributes over ⊕ (× over +; +, ×, min or max over min or max, as the semirings with these
    # codes have it): the last depth is ⊕-summed in one tight loop and ⊗-multiplied into its prefix
    # once.  Otherwise (a ⊕ of ×, + over +) every binding is walked.
    distributes = (add == 0 and mul == 1) or add >= 2
    for s in range(n):
        for w in range(width):
            x[w] = seeds[s, w]
        clash = False
        for q in range(distinct.shape[0]):
            if distinct[q, 1] < width and x[distinct[q, 0]] == x[distinct[q, 1]]:
                clash = True
        if clash:
            continue
        # The runs holding the seed's keys, per read (seed_nodes: their nodes, -1 where absent).
        missing = False
        for r in range(reads):
            any_run = False
            for k in range(runs[r]):
                holds[r, k] = seed_nodes[r, k, s] >= 0
                any_run = any_run or holds[r, k]
            if not any_run:
                missing = True
                break
        if missing:
            continue
        start = apply_operation(mul, seed_values[s], factor) if not unit else seed_values[s]
        for r in range(reads):
            k = 0
            while not holds[r, k]:
                k += 1
            choice[r] = k
        while True:
            for r in range(reads):
                nodes[0, r] = seed_nodes[r, choice[r], s]
            if depths == 0:  # the seed binds every variable: one binding
                product = _product(start, nodes[0], choice, values, value_at, -1, depth_start, ext_read, mul)
                total = apply_operation(add, total, product)
                total = _guarded(total, carry, guard)
                reached[0] += 1
            elif _open(0, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth, cursor, high, position,
                       end, proposer):
                d = 0
                while d >= 0:
                    if d == depths - 1 and distributes:
                        # The last depth at once: prefix ⊗ (⊕ of the last depth's values), by distributivity.
                        found, local = _sum_last(d, x, nodes, choice, arrays, values, level_at, value_at,
                                                 depth_start, ext_read, ext_depth, cursor, high, position, end,
                                                 proposer, distinct, width, span, add, mul, zero, one, merge_ratio)
                        if found > 0:
                            prefix = _product(start, nodes[d], choice, values, value_at, d, depth_start, ext_read,
                                              mul)
                            total = _guarded(apply_operation(add, total, apply_operation(mul, prefix, local)),
                                             carry, guard)
                            reached[0] += found
                        d -= 1
                        continue
                    if position[d] >= end[d]:  # this depth is done: back to the one above
                        d -= 1
                        continue
                    k, e = position[d], proposer[d]
                    position[d] = k + 1
                    r = ext_read[e]
                    value = _int64s(arrays, level_at[r, choice[r], ext_depth[e]])[k] - nodes[d, r] * span
                    if not _distinct_ok(x, distinct, width + d, value):
                        continue
                    nodes[d + 1, r] = k
                    held = _held(d, value, e, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth,
                                 cursor, high, span)
                    if held < 0:
                        position[d] = end[d]
                        continue
                    if held == 0:
                        continue
                    x[width + d] = value
                    if d == depths - 1:
                        product = _product(start, nodes[d + 1], choice, values, value_at, -1, depth_start,
                                           ext_read, mul)
                        total = apply_operation(add, total, product)
                        total = _guarded(total, carry, guard)
                        reached[0] += 1
                    elif _open(d + 1, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth, cursor, high,
                               position, end, proposer):
                        d += 1
            # The next combination of runs holding the seed (an odometer over the reads).
            r = 0
            while r < reads:
                k = choice[r] + 1
                while k < runs[r] and not holds[r, k]:
                    k += 1
                if k < runs[r]:
                    choice[r] = k
                    break
                k = 0
                while not holds[r, k]:
                    k += 1
                choice[r] = k
                r += 1
            if r == reads:
                break
    return total


@_inlined
def _sum_last(d, x, nodes, choice, arrays, values, level_at, value_at, depth_start, ext_read, ext_depth, cursor,
              high, position, end, proposer, distinct, width, span, add, mul, zero, one, merge_ratio):
    """(bindings, ⊕ of their last-depth values) over the proposer's candidates at the last depth ``d``
    that every other extender holds; a binding's last-depth value is the ⊗ of the values of the
    reads extended at ``d`` (one for a read without values)."""
    e = proposer[d]
    r = ext_read[e]
    comp = _int64s(arrays, level_at[r, choice[r], ext_depth[e]])
    base = nodes[d, r] * span
    found = 0
    local = zero
    constrained = False  # a variable the candidates must differ from
    for q in range(distinct.shape[0]):
        if distinct[q, 1] == width + d:
            constrained = True
    if depth_start[d + 1] - depth_start[d] == 2 and not constrained:
        # One validator (a triangle's last edge): a galloping merge of the two segments.
        o = depth_start[d] if depth_start[d] != e else depth_start[d] + 1
        ro = ext_read[o]
        other = _int64s(arrays, level_at[ro, choice[ro], ext_depth[o]])
        shift = nodes[d, ro] * span - base
        at, top = cursor[o], high[o]
        mine, theirs = value_at[r, choice[r]], value_at[ro, choice[ro]]
        my_values, their_values = _numbers(values, max(mine, 0), zero), _numbers(values, max(theirs, 0), zero)
        if top - at <= merge_ratio * (end[d] - position[d]):
            # Segments of comparable sizes: a linear merge, whose steps the processor predicts (a
            # galloping search mispredicts about every other step).
            k, last = position[d], end[d]
            while k < last and at < top:
                mine_key, their_key = comp[k] + shift, other[at]
                if mine_key == their_key:
                    found += 1
                    local = apply_operation(add, local,
                                            _pair_value(one, mine, my_values, k, theirs, their_values, at, mul))
                k += mine_key <= their_key
                at += their_key <= mine_key
            return found, local
        for k in range(position[d], end[d]):
            key = comp[k] + shift
            at = first_at_least(other, 0, at, top, key)
            if at >= top:
                break
            if other[at] == key:
                found += 1
                local = apply_operation(add, local,
                                        _pair_value(one, mine, my_values, k, theirs, their_values, at, mul))
                at += 1
        return found, local
    for k in range(position[d], end[d]):
        value = comp[k] - base
        if not _distinct_ok(x, distinct, width + d, value):
            continue
        nodes[d + 1, r] = k
        held = _held(d, value, e, nodes, choice, arrays, level_at, depth_start, ext_read, ext_depth, cursor, high,
                     span)
        if held < 0:
            break
        if held > 0:
            found += 1
            product = one
            for q in range(depth_start[d], depth_start[d + 1]):
                v = value_at[ext_read[q], choice[ext_read[q]]]
                if v >= 0:
                    product = apply_operation(mul, product, _numbers(values, v, zero)[nodes[d + 1, ext_read[q]]])
            local = apply_operation(add, local, product)
    return found, local


@_jit
def find_seeds(seeds, arrays, level_at, runs, attrs, seed_levels, span, seed_nodes):
    """Fill ``seed_nodes[r, k, s]``: the node of seed ``s``'s keys in run ``k`` of read ``r`` (the
    root when the seed binds none of the read's attributes), -1 where the run lacks them.

    A search per key and level: for a few seeds, cheaper than numpy's calls per run; many seeds
    are found in numpy (:func:`faq.incremental.rule_kernel.aggregate_rule`).
    """
    for r in range(runs.shape[0]):
        for k in range(runs[r]):
            empty = len(_int64s(arrays, level_at[r, k, 0])) == 0
            for s in range(seeds.shape[0]):
                node = 0
                good = not empty
                for j in range(seed_levels[r] if good else 0):
                    at = level_at[r, k, j]
                    comp = _int64s(arrays, at)
                    offsets = _int64s(arrays, at + 1)
                    low, top = offsets[node], offsets[node + 1]
                    key = node * span + seeds[s, attrs[r, j]]
                    found = first_at_least(comp, 0, low, top, key)
                    if found >= top or comp[found] != key:
                        good = False
                        break
                    node = found
                seed_nodes[r, k, s] = node if good else -1


@_jit
def aggregate_rules(rule_rows, seeds, seed_values, seed_nodes, arrays, values, level_at, value_at, runs, attrs,
                    seed_levels, depth_start, ext_read, ext_depth, distinct, span, add, mul, zero, one, factors, units,
                    guard, few, carry, reached, totals, merge_ratio):
    """:func:`aggregate_rule` of several rules in one call: a batch's rules cost one dispatch into the
    loop, not two a rule (numba checks every argument's type at each call from Python).

    Row ``i`` of ``rule_rows`` holds rule ``i``'s slices of the concatenated arrays: reads
    ``[0]:[1]``, seeds ``[2]:[3]``, depth starts ``[4]:[5]``, extenders ``[6]:[7]``, distinct
    pairs ``[8]:[9]``, and its seed width ``[10]``.  With ``few`` the seeds' nodes are found here
    (:func:`find_seeds`), else the caller found them.  ``totals[i]``, ``carry[i]`` and
    ``reached[i]`` receive rule ``i``'s result.
    """
    # Each rule's slices are copied (a few small arrays): a slice is typed as of any layout, and with
    # the loop indexing them per candidate 1,000-change batches ran slower (31-32 ms against 20-23 ms,
    # one interleaved run at load 8).
    for i in range(rule_rows.shape[0]):
        r0, r1, s0, s1 = rule_rows[i, 0], rule_rows[i, 1], rule_rows[i, 2], rule_rows[i, 3]
        d0, d1, e0, e1 = rule_rows[i, 4], rule_rows[i, 5], rule_rows[i, 6], rule_rows[i, 7]
        q0, q1, w = rule_rows[i, 8], rule_rows[i, 9], rule_rows[i, 10]
        mine = np.ascontiguousarray(seeds[s0:s1, :w])
        nodes = np.ascontiguousarray(seed_nodes[r0:r1, :, s0:s1])
        levels = np.ascontiguousarray(level_at[r0:r1])
        read_runs = np.ascontiguousarray(runs[r0:r1])
        if few:
            find_seeds(mine, arrays, levels, read_runs, np.ascontiguousarray(attrs[r0:r1]),
                       np.ascontiguousarray(seed_levels[r0:r1]), span, nodes)
        rule_carry = np.zeros(1, dtype=np.int64)
        rule_reached = np.zeros(1, dtype=np.int64)
        totals[i] = aggregate_rule(mine, np.ascontiguousarray(seed_values[s0:s1]), nodes, arrays, values, levels,
                                   np.ascontiguousarray(value_at[r0:r1]), read_runs,
                                   np.ascontiguousarray(depth_start[d0:d1]), np.ascontiguousarray(ext_read[e0:e1]),
                                   np.ascontiguousarray(ext_depth[e0:e1]), np.ascontiguousarray(distinct[q0:q1]), span,
                                   add, mul, zero, one, factors[i], units[i], guard, rule_carry, rule_reached,
                                   merge_ratio)
        carry[i] = rule_carry[0]
        reached[i] = rule_reached[0]
