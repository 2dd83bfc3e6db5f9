"""Which kernel runs each delta rule, decided with the plan, and the compiled one's call.

A delta rule (:mod:`faq.incremental.rules`) runs in one of two kernels:

* the **compiled loop** (:mod:`faq.incremental.delta_loop`, numba): per seed
  row and per combination of the runs holding it, a depth-first join over
  the resident tries as they are -- no array allocated per prefix, no copy
  of the base.  For rules that ⊕-aggregate to one value (a maintained
  count, a partition function), without negated terms, in a semiring whose
  ⊗ and ⊕ are among +, ×, min, max over int64 or float64;
* the **numpy join** (:mod:`faq.incremental.engine`): the generic join over
  arrays of prefixes, for everything (keyed answers, negated terms, any
  semiring).

:func:`rule_kernels` decides per rule, once, from the rule and the semiring
alone (no data); ``explain`` prints the choice and its reason, and
:func:`faq.incremental.engine.run_rules` runs what it says.

:func:`aggregate_rules` prepares the compiled loop's call for every compiled
rule of a batch at once (one call: numba checks each argument's type at a
call from Python, which cost more than a single change's join): the seeds'
keys found in every run (by the loop itself for a few seeds, else in numpy,
a large first level through a direct index), and every trie level as an
(address, length) row the loop reads in place (kept per trie while it lives:
a base's rows are made once per compaction).  For a few seeds the tables of
each run list are kept too, by the tries in it (a batch's old state reads
the lists its new state read the batch before), and assembled in Python
lists: a single change's tables are a few dozen numbers, for which numpy's
calls cost more than the numbers.

Tried and left out: dealing a large batch's seeds to two threads (the loop
holds no GIL) ran a batch's rules 1.6x faster alone, but 1.0-1.2x inside a
maintained query, whose process shares the second core; a bitmap of a
validator's segment reused from seed to seed was slower than merging.

Examples
--------
>>> from faq.incremental.rules import DeltaQuery, Term, plan_rules
>>> from faq.semirings import COUNTING, get_semiring
>>> from faq.semirings.numpy_backend import numpy_ops
>>> triangle = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("b", "c")), Term("edge", ("a", "c"))), ())
>>> [str(k) for k in rule_kernels(plan_rules(triangle), numpy_ops(COUNTING))]
['compiled loop', 'compiled loop', 'compiled loop']
>>> per_node = DeltaQuery(triangle.terms, ("a",))
>>> str(rule_kernels(plan_rules(per_node), numpy_ops(COUNTING))[0])
'numpy join (the answer keeps variables: one row per key)'
"""

from __future__ import annotations

import itertools
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.incremental.rows import find_rows
from faq.incremental.trie_rows import remember_rows, remembered
from faq.joins.compiled import OPERATION_CODES, AVAILABLE

if TYPE_CHECKING:
    from faq.incremental.rules import DeltaRule, Read
    from faq.joins.csr import Trie, TrieLevel
    from faq.semirings.numpy_backend import NumpyForm

COMPILED, NUMPY = "compiled loop", "numpy join"

#: Largest ratio of a validator's segment to the proposer's that the loop's last depth merges
#: linearly (a merge's steps are predictable; a galloping search mispredicts about every other
#: step); past it, each candidate gallops (a search costs the log of the distance it skips).
#: R-MAT 17's three triangle rules, a batch of 1,000 hub-heavy changes, warm, best of 9 interleaved:
#: 17.4 ms at 4 and 8, 18.1 at 16, 19.2 galloping only, 20.7 at 64.
MERGE_RATIO = 8

#: Most seed rows whose keys the compiled loop finds itself (a search each); more are found in numpy.
FEW_SEEDS = 32

#: Fewest seed rows a batch's compiled rules split between :data:`SEED_THREADS` threads (each seeds its
#: share of every rule; integer totals, summed exactly).  Below it one thread: a thread's start costs
#: more than a small batch's loop.
SPLIT_SEEDS = 256

#: Threads a large batch's compiled rules run in: the machine's cores (at most 8).
SEED_THREADS = max(1, min(os.cpu_count() or 1, 8))

#: Most runs one relation is read as: the base, two frozen overlay levels (a compaction in flight),
#: the older and recent changes, and the batch (:meth:`faq.incremental.index.ResidentRelation.runs`).
MAX_RUNS = 6


@dataclass(frozen=True)
class RuleKernel:
    """The kernel of one delta rule: :data:`COMPILED` or :data:`NUMPY`, and why numpy."""

    kind: str
    reason: str = ""

    @property
    def compiled(self) -> bool:
        return self.kind == COMPILED

    def __str__(self) -> str:
        return self.kind + (f" ({self.reason})" if self.reason else "")


def rule_kernel(rule: "DeltaRule", ops: Optional["NumpyForm"]) -> RuleKernel:
    """The kernel that runs ``rule`` in the semiring ``ops`` (see the module notes).

    >>> from faq.incremental.rules import DeltaQuery, Term, plan_rules
    >>> from faq.semirings import COUNTING
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> motif = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("b", "c")), Term("edge", ("a", "c"), True)), ())
    >>> str(rule_kernel(plan_rules(motif)[0], numpy_ops(COUNTING)))
    'numpy join (a negated term is checked in numpy)'
    """
    if not AVAILABLE:
        return RuleKernel(NUMPY, "numba is not installed")
    if (ops is None or ops.add not in OPERATION_CODES or ops.mul not in OPERATION_CODES
            or np.dtype(ops.dtype).kind not in "if"):
        return RuleKernel(NUMPY, f"no compiled form of {getattr(ops, 'name', 'this semiring')}")
    if rule.outputs:
        return RuleKernel(NUMPY, "the answer keeps variables: one row per key")
    if any(read.negated and read.attributes for read in rule.reads):
        return RuleKernel(NUMPY, "a negated term is checked in numpy")
    return RuleKernel(COMPILED)


def rule_kernels(rules: Sequence["DeltaRule"], ops: Optional["NumpyForm"]) -> tuple[RuleKernel, ...]:
    """:func:`rule_kernel` of every rule, in order."""
    return tuple(rule_kernel(rule, ops) for rule in rules)


#: Fewest entries a trie's first level needs for a direct index (:func:`first_positions`); a smaller
#: one is searched (it stays in cache).
DIRECT_MIN_ENTRIES = 1 << 12

# Direct indexes of large first levels, per level: built once, dropped with the level (a base's lives
# until its next compaction).
_DIRECT: "weakref.WeakKeyDictionary[TrieLevel, np.ndarray]" = weakref.WeakKeyDictionary()


def first_positions(level: "TrieLevel") -> np.ndarray:
    """Per key code ``v``, the position of ``v`` in a trie's first level, or -1.

    A first level's entries are key codes, dense below the key domain's size,
    so one gather finds a batch's keys (a hashed or binary search of a large
    base level costs several cache misses a key).

    >>> from faq.joins.csr import build_trie
    >>> trie = build_trie([np.array([2, 2, 5]), np.array([0, 1, 0])], span=8)
    >>> first_positions(trie.levels[0]).tolist()
    [-1, -1, 0, -1, -1, 1]
    """
    direct = _DIRECT.get(level)
    if direct is None:
        comp = level.comp
        direct = np.full(int(comp[-1]) + 1 if len(comp) else 0, -1, dtype=np.int64)
        direct[comp] = np.arange(len(comp), dtype=np.int64)
        _DIRECT[level] = direct
    return direct


def _find_keys(trie: "Trie", columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~faq.incremental.rows.find_rows`, a large first level read through its direct index."""
    first = trie.levels[0]
    return find_rows(trie, columns, first_positions(first) if first.size >= DIRECT_MIN_ENTRIES else None)


def _address(array: np.ndarray) -> tuple[int, int]:
    return array.__array_interface__["data"][0], len(array)


def _table(rows: list[tuple[int, int]]) -> np.ndarray:
    """The rows as the loop's (m, 2) int64 table (one row of zeros when there are none)."""
    return np.array(rows, dtype=np.int64).reshape(-1, 2) if rows else np.zeros((1, 2), dtype=np.int64)


@dataclass(frozen=True)
class _Plan:
    """What a rule's loop reads that no batch changes (built once per rule and semiring form)."""

    rule: Any  # the rule itself: the cache is keyed by its id, checked against it
    ops: Any
    reads: list
    bound: list  # per read, the seed positions it holds (its leading attributes)
    levels: int
    attrs: np.ndarray
    seed_levels: np.ndarray
    depth_start: np.ndarray
    ext_read: np.ndarray
    ext_depth: np.ndarray
    distinct: np.ndarray


# Plans by id of the rule: a dataclass's hash walks every field, a dict probe by id costs nothing.
_PLANS: dict[int, _Plan] = {}


def _plan(rule: "DeltaRule", ops: "NumpyForm") -> _Plan:
    """The rule's :class:`_Plan` (cached: a single change's apply would rebuild these arrays per rule)."""
    plan = _PLANS.get(id(rule))
    if plan is not None and plan.rule is rule and plan.ops is ops:
        return plan
    reads = [read for read in rule.reads if read.attributes]
    width = rule.seed_width
    levels = max((len(read.attributes) for read in reads), default=1)
    attrs = np.zeros((len(reads), levels), dtype=np.int64)
    for r, read in enumerate(reads):
        attrs[r, :len(read.attributes)] = read.attributes
    # Depth d binds position width + d; its extenders are the reads holding that position.
    depth_start, ext_read, ext_depth = [0], [], []
    for d in range(len(rule.order) - width):
        for r, read in enumerate(reads):
            if width + d in read.attributes:
                ext_read.append(r)
                ext_depth.append(read.attributes.index(width + d))
        depth_start.append(len(ext_read))
    bound = [[p for p in read.attributes if p < width] for read in reads]
    plan = _Plan(rule, ops, reads, bound, levels, attrs, np.array([len(b) for b in bound], dtype=np.int64),
                 np.array(depth_start, dtype=np.int64), np.array(ext_read, dtype=np.int64),
                 np.array(ext_depth, dtype=np.int64), np.array(rule.distinct, dtype=np.int64).reshape(-1, 2))
    if len(_PLANS) > 4096:  # rules of queries long gone
        _PLANS.clear()
    _PLANS[id(rule)] = plan
    return plan


def aggregate_rule(rule: "DeltaRule", seed_columns: Sequence[np.ndarray], seed_values: np.ndarray,
                   runs: Callable[["Read"], list["Trie"]], factor: Any, ops: "NumpyForm") -> tuple[Any, int]:
    """⊕ over the bindings of ``rule`` seeded by the rows ``seed_columns`` (valued ``seed_values``),
    each binding's value ⊗ ``factor``: (the total, a numpy scalar or, past int64, a Python int;
    the bindings reached).

    ``runs(read)`` gives the tries ``read`` reads (old or new state).  The
    rule must run compiled (:func:`rule_kernel`).  One rule of :func:`aggregate_rules`.
    """
    return aggregate_rules([(rule, seed_columns, seed_values, factor)], runs, ops)[0]


def _trie_rows(trie: "Trie", dtype: np.dtype, held: list) -> tuple[list[tuple[int, int]], Optional[tuple[int, int]]]:
    """(address, length) rows of ``trie``'s levels (comp, then offsets) and of its values (None without
    values); copies of arrays not of the loop's types go to ``held`` (then the rows are not kept)."""
    kept = remembered(trie)  # faq.incremental.trie_rows: made once per trie
    if kept is not None and (trie.values is None or trie.values.dtype == dtype):
        return kept
    copied = len(held)
    rows = []
    for level in trie.levels:
        for array in (level.comp, level.offsets):
            if array.dtype != np.int64 or not array.flags.c_contiguous:  # not how resident tries are built
                array = np.ascontiguousarray(array, dtype=np.int64)
                held.append(array)
            rows.append(_address(array))
    value_row = None
    if trie.values is not None:
        values = trie.values
        if values.dtype != dtype or not values.flags.c_contiguous:
            values = np.ascontiguousarray(values, dtype=dtype)
            held.append(values)
        value_row = _address(values)
    if len(held) == copied:  # rows into the trie's own arrays: valid while it lives
        remember_rows(trie, rows, value_row)
    return rows, value_row


@dataclass(frozen=True)
class _Group:
    """What the loop reads of a batch's compiled rules that no batch changes: their plans' arrays,
    concatenated, and per rule its slices of them (:func:`faq.incremental.delta_loop.aggregate_rules`)."""

    rules: tuple
    ops: Any
    plans: tuple
    n_reads: int
    levels: int
    width: int
    rule_rows: np.ndarray  # the seed slices (columns 2 and 3) are the batch's: filled per call
    attrs: np.ndarray
    seed_levels: np.ndarray
    depth_start: np.ndarray
    ext_read: np.ndarray
    ext_depth: np.ndarray
    distinct: np.ndarray


_GROUPS: dict[tuple[int, ...], _Group] = {}


def _group(rules: Sequence["DeltaRule"], ops: "NumpyForm") -> _Group:
    """The :class:`_Group` of ``rules`` (cached by their ids, checked against them)."""
    key = tuple(map(id, rules))
    group = _GROUPS.get(key)
    if group is not None and group.ops is ops and all(a is b for a, b in zip(group.rules, rules)):
        return group
    plans = tuple(_plan(rule, ops) for rule in rules)
    n_reads = sum(len(p.reads) for p in plans)
    levels = max(p.levels for p in plans)
    attrs = np.zeros((n_reads, levels), dtype=np.int64)
    rule_rows = np.zeros((len(rules), 11), dtype=np.int64)
    r0 = d0 = e0 = q0 = 0
    for i, (rule, plan) in enumerate(zip(rules, plans)):
        attrs[r0:r0 + len(plan.reads), :plan.levels] = plan.attrs
        rule_rows[i] = (r0, r0 + len(plan.reads), 0, 0, d0, d0 + len(plan.depth_start), e0, e0 + len(plan.ext_read),
                        q0, q0 + len(plan.distinct), rule.seed_width)
        r0, d0 = r0 + len(plan.reads), d0 + len(plan.depth_start)
        e0, q0 = e0 + len(plan.ext_read), q0 + len(plan.distinct)
    group = _Group(tuple(rules), ops, plans, n_reads, levels, max(rule.seed_width for rule in rules), rule_rows, attrs,
                   np.concatenate([p.seed_levels for p in plans]), np.concatenate([p.depth_start for p in plans]),
                   np.concatenate([p.ext_read for p in plans]), np.concatenate([p.ext_depth for p in plans]),
                   np.concatenate([p.distinct for p in plans]))
    if len(_GROUPS) > 4096:  # rules of queries long gone
        _GROUPS.clear()
    _GROUPS[key] = group
    return group


def _read_tables(group: _Group, items, runs, dtype: np.dtype, few: bool, n: int, held: list):
    """The tables of the runs every read of ``group`` reads (:func:`aggregate_rules`), and the seeds'
    nodes in them when there are many seeds (``few``: the loop finds them)."""
    levels = group.levels
    level_at = [0] * (group.n_reads * MAX_RUNS * levels)  # lists, made arrays once: item by item in numpy costs more
    value_at = [-1] * (group.n_reads * MAX_RUNS)
    run_count = [0] * group.n_reads
    seed_nodes = np.full((group.n_reads, MAX_RUNS, n), -1, dtype=np.int64)
    arrays: list[tuple[int, int]] = []  # (address, length) rows: comp and offsets of every level read
    values: list[tuple[int, int]] = []
    g = s0 = 0
    for (_, columns, rule_values, _), plan in zip(items, group.plans):
        size = len(rule_values)
        for r, read in enumerate(plan.reads):
            tries = runs(read)
            run_count[g] = len(tries)
            bound = [columns[p] for p in plan.bound[r]]  # the seed's keys the read holds
            for k, trie in enumerate(tries):
                # Many seeds' keys are found in every run at once in numpy (hashed or sorted searches);
                # a few seeds' by the loop's find_seeds (numpy's calls would cost more).
                if not few and bound:
                    found, nodes = _find_keys(trie, bound)
                    seed_nodes[g, k, s0 + found] = nodes
                elif not few and trie.rows:
                    seed_nodes[g, k, s0:s0 + size] = 0  # the root: the seed binds none of the read's attributes
                rows, value_row = _trie_rows(trie, dtype, held)
                at = (g * MAX_RUNS + k) * levels
                level_at[at:at + len(trie.levels)] = range(len(arrays), len(arrays) + len(rows), 2)
                arrays += rows
                if value_row is not None:
                    value_at[g * MAX_RUNS + k] = len(values)
                    values.append(value_row)
            g += 1
        s0 += size
    return (np.array(level_at, dtype=np.int64).reshape(group.n_reads, MAX_RUNS, levels),
            np.array(value_at, dtype=np.int64).reshape(group.n_reads, MAX_RUNS), np.array(run_count, dtype=np.int64),
            seed_nodes, _table(arrays), _table(values))


# The tables of a run list (the tries one read reads, in order) by the ids of its tries, each entry with
# weak references to them (checked on a hit: an id is reused only once its trie is gone).  A batch's old
# state reads the lists its new state read the batch before: most lists are seen again.
_LISTS: dict[tuple[int, ...], tuple] = {}


def _list_tables(tries: Sequence["Trie"], levels: int, dtype: np.dtype, held: list) -> tuple:
    """(weak references, level rows (``MAX_RUNS * levels`` ints), value rows (``MAX_RUNS`` ints, -1:
    none), the run count, (address, length) rows of the levels and of the values (flat ints), dtype)
    of the tries one read reads, numbered from 0 within the list (:func:`_few_tables` shifts them).
    Python lists: the tables of a batch are a few dozen numbers, which numpy's calls cost more than."""
    key = tuple(map(id, tries))
    kept = _LISTS.get(key)
    if (kept is not None and kept[6] == dtype and len(kept[1]) == MAX_RUNS * levels
            and all(ref() is trie for ref, trie in zip(kept[0], tries))):
        return kept
    copied = len(held)
    level_at = [0] * (MAX_RUNS * levels)
    value_at = [-1] * MAX_RUNS
    rows: list[int] = []
    values: list[int] = []
    for k, trie in enumerate(tries):
        trie_rows, value_row = _trie_rows(trie, dtype, held)
        at = len(rows) // 2
        level_at[k * levels:k * levels + len(trie.levels)] = range(at, at + len(trie_rows), 2)
        for row in trie_rows:
            rows += row
        if value_row is not None:
            value_at[k] = len(values) // 2
            values += value_row
    entry = (tuple(weakref.ref(t) for t in tries), level_at, value_at, len(tries), rows, values, dtype)
    if len(held) == copied:  # rows into the tries' own arrays: valid while they live
        if len(_LISTS) > 64:  # lists of batches long gone
            _LISTS.clear()
        _LISTS[key] = entry
    return entry


def _few_tables(group: _Group, runs, dtype: np.dtype, n: int, held: list):
    """:func:`_read_tables` for a few seeds (the loop finds their nodes): each distinct run list read
    once a batch, its tables taken from :func:`_list_tables` and shifted past the lists before it."""
    lists: dict[tuple, tuple] = {}
    used = []
    for plan in group.plans:
        for read in plan.reads:
            key = (read.relation, read.view, read.state)
            entry = lists.get(key)
            if entry is None:
                tries = runs(read)
                entry = lists[key] = _list_tables(tries, group.levels, dtype, held)
                held.append(tries)  # alive while the loop reads them by address
            used.append(entry)
    shift: dict[int, tuple[int, int]] = {}
    rows: list[int] = []
    values: list[int] = []
    for entry in lists.values():
        shift[id(entry)] = (len(rows) // 2, len(values) // 2)
        rows += entry[4]
        values += entry[5]
    level_at: list[int] = []
    value_at: list[int] = []
    for entry in used:  # a level row past a list's runs or levels is never read: shifting it is harmless
        r, v = shift[id(entry)]
        level_at += [x + r for x in entry[1]]
        value_at += [x + v if x >= 0 else -1 for x in entry[2]]
    return (np.array(level_at, dtype=np.int64).reshape(group.n_reads, MAX_RUNS, group.levels),
            np.array(value_at, dtype=np.int64).reshape(group.n_reads, MAX_RUNS),
            np.array([entry[3] for entry in used], dtype=np.int64),
            np.full((group.n_reads, MAX_RUNS, n), -1, dtype=np.int64),
            np.array(rows, dtype=np.int64).reshape(-1, 2) if rows else _table([]),
            np.array(values, dtype=np.int64).reshape(-1, 2) if values else _table([]))


def aggregate_rules(items: Sequence[tuple["DeltaRule", Sequence[np.ndarray], np.ndarray, Any]],
                    runs: Callable[["Read"], list["Trie"]], ops: "NumpyForm") -> list[tuple[Any, int]]:
    """:func:`aggregate_rule` of each ``(rule, seed_columns, seed_values, factor)`` of ``items``, in one
    call of the compiled loop (:func:`faq.incremental.delta_loop.aggregate_rules`): a batch's Python
    work and numba's argument checks are paid once, not per rule.  Results in the order of ``items``."""
    from faq.incremental.delta_loop import aggregate_rules as loop

    dtype = np.dtype(ops.dtype)
    group = _group([item[0] for item in items], ops)
    sizes = [len(item[2]) for item in items]
    n = sum(sizes)
    few = n <= FEW_SEEDS
    rule_rows = group.rule_rows.copy()
    ends = list(itertools.accumulate(sizes))
    rule_rows[:, 2], rule_rows[:, 3] = [e - size for e, size in zip(ends, sizes)], ends
    if few:  # a few rows: Python ints, one array (numpy's calls per column cost more than the numbers)
        flat: list[int] = []
        for (_, columns, _, _), size in zip(items, sizes):
            listed = [np.asarray(c).tolist() for c in columns[:group.width]]
            listed += [[0] * size] * (group.width - len(listed))  # zeros a narrower rule never reads
            for row in zip(*listed):
                flat += row
        seeds = np.array(flat, dtype=np.int64).reshape(n, group.width)
    else:
        seeds = np.zeros((n, group.width), dtype=np.int64)
        for j in range(group.width):  # a rule narrower than the widest leaves zeros it never reads
            seeds[:, j] = np.concatenate([columns[j] if j < len(columns) else np.zeros(size, dtype=np.int64)
                                          for (_, columns, _, _), size in zip(items, sizes)])
    seed_values = np.concatenate([item[2] for item in items]).astype(dtype, copy=False)
    factors = np.array([item[3] for item in items], dtype=dtype)
    one = np.asarray(ops.one, dtype=dtype)[()]
    held: list[np.ndarray] = []  # copies the rows point into (none for tries as built)
    if few:
        level_at, value_at, run_count, seed_nodes, arrays, values = _few_tables(group, runs, dtype, n, held)
    else:
        level_at, value_at, run_count, seed_nodes, arrays, values = _read_tables(group, items, runs, dtype, few, n,
                                                                                 held)
    guard = bool(ops.integral and ops.add is np.add)
    threads = SEED_THREADS if n >= SPLIT_SEEDS and ops.integral else 1
    if threads > 1:  # each rule's seeds dealt round-robin, so each part gets its share of the hubs' rows
        order, split = _dealt_seeds(rule_rows, threads)
        # (C order, as the loop was compiled for: another layout would be another signature to compile)
        seeds, seed_values = np.ascontiguousarray(seeds[order]), np.ascontiguousarray(seed_values[order])
        seed_nodes = np.ascontiguousarray(seed_nodes[:, :, order])
    arguments = (seeds, seed_values, seed_nodes, arrays, values, level_at, value_at, run_count, group.attrs,
                 group.seed_levels, group.depth_start, group.ext_read, group.ext_depth, group.distinct, np.int64(SPAN),
                 OPERATION_CODES[ops.add], OPERATION_CODES[ops.mul], np.asarray(ops.zero, dtype=dtype)[()], one,
                 factors, factors == one, guard, few)

    def part(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        carry = np.zeros(len(items), dtype=np.int64)
        reached = np.zeros(len(items), dtype=np.int64)
        totals = np.zeros(len(items), dtype=dtype)
        # The loop reads the arrays in place by address (faq.incremental.delta_loop): the tries (``runs``'s,
        # held by the relations) and ``held`` keep them alive while it runs.
        loop(rows, *arguments, carry, reached, totals, np.int64(MERGE_RATIO))
        return carry, reached, totals

    if threads == 1:
        carry, reached, totals = part(rule_rows)
        if guard and carry.any():
            from faq.joins.partial import GUARD_SHIFT

            return [((int(c) << GUARD_SHIFT) + int(t), int(r)) if c else (t, int(r))
                    for c, t, r in zip(carry.tolist(), totals, reached.tolist())]
        return list(zip(totals, reached.tolist()))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:  # the loop releases the GIL: the parts run side by side
        parts = list(pool.map(part, split))
    return _summed_parts(parts, dtype, ops.add)


def _dealt_seeds(rule_rows: np.ndarray, parts: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each rule's seed rows (``rule_rows`` columns 2 and 3) dealt round-robin to ``parts``: the order
    that puts each part's rows together, and ``rule_rows`` once per part with its seed slices.

    A batch's rows come sorted by key: cut in halves, one part would get the hubs' rows (the costly
    seeds of an R-MAT batch) and the other wait.

    >>> rows = np.zeros((2, 11), dtype=np.int64); rows[:, 2], rows[:, 3] = [0, 5], [5, 12]
    >>> order, split = _dealt_seeds(rows, 2)
    >>> order.tolist(), [p[:, 2:4].tolist() for p in split]
    ([0, 2, 4, 1, 3, 5, 7, 9, 11, 6, 8, 10], [[[0, 3], [5, 9]], [[3, 5], [9, 12]]])
    """
    pieces, bounds = [], [[] for _ in range(parts)]
    for start, end in rule_rows[:, 2:4].tolist():
        at = start
        for k in range(parts):
            piece = np.arange(start + k, end, parts, dtype=np.int64)
            pieces.append(piece)
            bounds[k].append((at, at + len(piece)))
            at += len(piece)
    split = []
    for k in range(parts):
        rows = rule_rows.copy()
        rows[:, 2:4] = bounds[k]
        split.append(rows)
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64), split


def _summed_parts(parts: list, dtype: np.dtype, add: Any) -> list[tuple[Any, int]]:
    """Each rule's (total, bindings) from the parts' ``(carry, reached, totals)``, as one part's would be
    returned: with ⊕ = + integer totals summed exactly (a carry is ``2^GUARD_SHIFT`` each), else the
    totals ⊕-ed by ``add`` (min, max, or: exact on integers in any order).

    >>> c, r, int64 = np.zeros(1, dtype=np.int64), np.array([2]), np.dtype(np.int64)
    >>> two = [(c, r, np.array([5])), (c, r, np.array([-7]))]
    >>> [[(int(t), n) for t, n in _summed_parts(two, int64, add)] for add in (np.add, np.minimum)]
    [[(-2, 4)], [(-7, 4)]]
    >>> big = np.array([1 << 60])                  # past 2^61 together: an exact Python int, as a carry gives
    >>> _summed_parts([(c, r, big), (c, r, big), (np.array([1]), r, np.array([0]))], int64, np.add)
    [(4611686018427387904, 6)]
    """
    from faq.joins.partial import GUARD_SHIFT

    out = []
    for i in range(len(parts[0][0])):
        reached = sum(int(r[i]) for _, r, _ in parts)
        if add is not np.add:
            out.append((add.reduce(np.array([totals[i] for _, _, totals in parts], dtype=dtype)), reached))
            continue
        exact = sum((int(carry[i]) << GUARD_SHIFT) + int(totals[i]) for carry, _, totals in parts)
        out.append((dtype.type(exact) if abs(exact) < (1 << GUARD_SHIFT) else exact, reached))
    return out
