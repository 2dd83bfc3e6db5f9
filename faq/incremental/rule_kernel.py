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

:func:`aggregate_rule` prepares the compiled loop's call: the seeds' keys
found in every run (by the loop itself for a few seeds, else in numpy, a
large first level through a direct index), and every trie level as an
(address, length) row the loop reads in place.

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

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.incremental.rows import find_rows
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


# Per trie level, the (address, length) rows of its comp and offsets: levels are immutable, and a
# base's are read by every batch until its next compaction.
_ROWS: "weakref.WeakKeyDictionary[TrieLevel, list[tuple[int, int]]]" = weakref.WeakKeyDictionary()


def _address(array: np.ndarray) -> tuple[int, int]:
    return array.__array_interface__["data"][0], len(array)


def _level_rows(level: "TrieLevel", held: list) -> list[tuple[int, int]]:
    """(address, length) of ``level``'s comp and offsets for the loop; arrays not already int64 and
    C-contiguous are copied into ``held`` (which the caller keeps until the loop returns)."""
    rows = _ROWS.get(level)
    if rows is None:
        arrays = [level.comp, level.offsets]
        if all(a.dtype == np.int64 and a.flags.c_contiguous for a in arrays):
            rows = _ROWS[level] = [_address(a) for a in arrays]
        else:  # not how resident tries are built; read a copy
            copies = [np.ascontiguousarray(a, dtype=np.int64) for a in arrays]
            held += copies
            rows = [_address(a) for a in copies]
    return rows


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
    rule must run compiled (:func:`rule_kernel`).
    """
    from faq.incremental.delta_loop import aggregate_rule as loop
    from faq.incremental.delta_loop import find_seeds

    dtype = np.dtype(ops.dtype)
    plan = _plan(rule, ops)
    reads = plan.reads
    width = rule.seed_width
    n = len(seed_values)
    level_at = np.zeros((len(reads), MAX_RUNS, plan.levels), dtype=np.int64)
    value_at = np.full((len(reads), MAX_RUNS), -1, dtype=np.int64)
    run_count = np.zeros(len(reads), dtype=np.int64)
    seed_nodes = np.full((len(reads), MAX_RUNS, n), -1, dtype=np.int64)
    arrays: list[tuple[int, int]] = []  # (address, length) rows: comp and offsets of every level read
    values: list[tuple[int, int]] = []
    held: list[np.ndarray] = []  # copies the rows point into (none for tries as built)
    few = n <= FEW_SEEDS
    for r, read in enumerate(reads):
        tries = runs(read)
        run_count[r] = len(tries)
        bound = [seed_columns[p] for p in plan.bound[r]]  # the seed's keys the read holds
        for k, trie in enumerate(tries):
            # Many seeds' keys are found in every run at once in numpy (hashed or sorted searches);
            # a few seeds' by the loop's find_seeds below (numpy's calls would cost more).
            if not few and bound:
                found, nodes = _find_keys(trie, bound)
                seed_nodes[r, k, found] = nodes
            elif not few and trie.rows:
                seed_nodes[r, k, :] = 0  # the root: the seed binds none of the read's attributes
            for j, level in enumerate(trie.levels):
                level_at[r, k, j] = len(arrays)
                arrays += _level_rows(level, held)
            if trie.values is not None:
                value_at[r, k] = len(values)
                held.append(np.ascontiguousarray(trie.values, dtype=dtype))
                values.append(_address(held[-1]))
    seeds = np.ascontiguousarray(np.stack([np.asarray(c, dtype=np.int64) for c in seed_columns], axis=1)
                                 if width else np.zeros((len(seed_values), 0), dtype=np.int64))
    factor = np.asarray(factor, dtype=dtype)[()]
    one = np.asarray(ops.one, dtype=dtype)[()]
    guard = bool(ops.integral and ops.add is np.add)
    carry = np.zeros(1, dtype=np.int64)
    reached = np.zeros(1, dtype=np.int64)
    table = _table(arrays)
    if few:
        find_seeds(seeds, table, level_at, run_count, plan.attrs, plan.seed_levels, np.int64(SPAN), seed_nodes)
    # The loop reads the arrays in place by address (faq.incremental.delta_loop): the tries (``runs``'s,
    # held by the relations) and ``held`` keep them alive while it runs.
    total = loop(seeds, np.ascontiguousarray(seed_values, dtype=dtype), seed_nodes, table,
                 _table(values), level_at, value_at, run_count, plan.depth_start, plan.ext_read,
                 plan.ext_depth, plan.distinct, np.int64(SPAN),
                 OPERATION_CODES[ops.add], OPERATION_CODES[ops.mul],
                 np.asarray(ops.zero, dtype=dtype)[()], one, factor, bool(factor == one), guard, carry, reached,
                 np.int64(MERGE_RATIO))
    if guard and carry[0]:
        from faq.joins.partial import GUARD_SHIFT

        return (int(carry[0]) << GUARD_SHIFT) + int(total), int(reached[0])
    return np.asarray(total, dtype=dtype)[()], int(reached[0])
