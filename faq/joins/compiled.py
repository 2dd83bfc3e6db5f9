"""The broadcast task's ⊕ of every binding to one value, compiled with numba.

The numpy kernel (:func:`faq.joins.kernel.run_kernel` over
:mod:`faq.joins.extenders`) extends whole arrays of prefixes one attribute at
a time: each level allocates its candidates, gathers parent columns and
probes a hash table, so a triangle costs a dozen array passes per edge.
When the task only ⊕-aggregates the product to a single value (``keep``
empty: a triangle or clique count, a partition function), the same
count / propose / validate runs here as one compiled depth-first loop: per
prefix the extender with the fewest entries proposes, the others validate
each candidate inside the prefix's segment of their trie level by a
galloping search that resumes where the previous candidate's ended (the
candidates come sorted), and the leaf multiplies the
relations' values and ⊕-adds them to a running total.  No array is
allocated per prefix.

Semirings: ⊗ and ⊕ among +, ×, min, max over int64 or float64 (counting,
sum-product, the tropical and bottleneck semirings).  :func:`compilable`
says whether a kernel qualifies; it does not when numba is missing or the
aggregate keeps variables, and the plan knows both before running.  A
relation with repeated rows qualifies too: the kernel's build ⊕-combines them
first (:func:`faq.joins.csr.combine_repeated_rows`), so no trie level the loop
searches repeats an entry -- unless their ⊕ would pass the int64 bound, when
every row is kept and numpy runs.  The join's note says which kernel ran.
int64 sums of valued bindings are kept exact past int64 by a carry
(:func:`guarded`), as the numpy path guards them per flush.

A layer of the generic join (the map is in :mod:`faq.joins.generic`): it reads
the :class:`~faq.joins.task_index.Kernel` value, and the kernel
(:mod:`faq.joins.kernel`) calls it.

Examples
--------
>>> import numpy as np
>>> from faq.joins import Aggregation
>>> from faq.joins.kernel import build_kernel
>>> from faq.semirings import COUNTING
>>> from faq.semirings.numpy_backend import numpy_ops
>>> src, dst = np.array([0, 1, 0, 2]), np.array([1, 2, 2, 3])     # one triangle 0→1→2, 0→2
>>> ones = np.ones(4, dtype=np.int64)
>>> kernel, seeds, _ = build_kernel([("a", "b"), ("b", "c"), ("a", "c")], [[0, 1, 2]], [([src, dst], ones)],
...                                 ["a", "b", "c"], ["a", "b", "c"], COUNTING, Aggregation((), COUNTING),
...                                 numpy_ops(COUNTING))
>>> compilable(kernel) == (AVAILABLE, "" if AVAILABLE else "numba is not installed")
True
>>> int(aggregate_seeds(kernel, np.arange(seeds)))
1
"""

from __future__ import annotations

import importlib.util
import weakref
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from faq.joins.partial import GUARD_SHIFT

# numba is a core dependency; without it the numpy kernel runs (the plan and the join's note say
# so).  Looked up, not imported: planning stays free of numba's import time.
AVAILABLE = importlib.util.find_spec("numba") is not None

if TYPE_CHECKING:
    from faq.joins.csr import TrieLevel
    from faq.joins.task_index import Kernel
    from faq.semirings.numpy_backend import NumpyForm

# Flat forms of the kernels this process has run, by id (kept beside the kernel, so a kernel
# pickled to the tasks never carries one).
_FLAT: dict[int, "_Flat"] = {}

#: Largest key span whose bitmaps (a bit a key, two per task: 8 MiB at this span) the compiled
#: loop's last depth uses; a wider span (sparse keys) validates by search alone.
MARK_MAX_SPAN = 1 << 25

#: Pairs of segments the compiled loop's last depth defers before it counts them (int64 each:
#: 512 KiB a task): where the staying segment is the smaller, it is looked up in the other's bitmap
#: later, the pairs grouped by the other segment (:func:`faq.joins.compiled_loop._settle`).
DEFER_PAIRS = 1 << 16

# Operation codes of the compiled loop.
_ADD, _MUL, _MIN, _MAX = 0, 1, 2, 3
#: The compiled loops' code of each numpy ⊕/⊗ they run (the delta rules' loop uses the same codes).
OPERATION_CODES = {np.add: _ADD, np.multiply: _MUL, np.minimum: _MIN, np.fmin: _MIN, np.maximum: _MAX, np.fmax: _MAX}


def compiled_form(ops: Optional["NumpyForm"], keep: Sequence[str]) -> tuple[bool, str]:
    """Whether tasks ⊕-aggregating ``ops`` onto ``keep`` can run compiled, and why not (no data needed).

    >>> from faq.semirings import COUNTING
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> compiled_form(numpy_ops(COUNTING), ["a"])
    (False, 'the tasks do not ⊕-aggregate to one value')
    """
    if not AVAILABLE:
        return False, "numba is not installed"
    if ops is None or keep:
        return False, "the tasks do not ⊕-aggregate to one value"
    if ops.add not in OPERATION_CODES or ops.mul not in OPERATION_CODES or np.dtype(ops.dtype).kind not in "if":
        return False, f"no compiled form of {ops.name}"
    return True, ""


def compilable(kernel: "Kernel") -> tuple[bool, str]:
    """Whether the compiled loop can run ``kernel``'s tasks, and why not (the index decides the rest)."""
    ops = kernel.ops
    ok, why = compiled_form(ops, kernel.outputs)
    if not ok:
        return ok, why
    if any(e.level.duplicates for level in kernel.extenders for e in level):
        return False, "a relation repeats rows whose ⊕ would pass the int64 bound"
    if not kernel.extenders:
        return False, "a single attribute"
    return True, ""


@dataclass(frozen=True)
class _Flat:
    """A kernel's tries and extenders as flat arrays (what the compiled loop reads)."""

    slots: int
    depth_start: np.ndarray  # extenders of depth d (1-based) are depth_start[d-1]:depth_start[d]
    ext_slot: np.ndarray
    ext_level: np.ndarray
    comp: np.ndarray  # every level's values within their parent's segment (local_keys), one after another
    comp_start: np.ndarray
    offsets: np.ndarray
    offsets_start: np.ndarray
    values: np.ndarray
    values_start: np.ndarray
    value_slot: np.ndarray
    mark_ext: int  # the last depth's extender whose parent stays while the depth before varies, or -1


def _flatten(kernel: "Kernel") -> _Flat:
    levels: dict[int, int] = {}
    trie_levels, ext_slot, ext_level, depth_start = [], [], [], [0]
    for extenders in kernel.extenders:
        for e in extenders:
            if id(e.level) not in levels:
                levels[id(e.level)] = len(trie_levels)
                trie_levels.append(e.level)
            ext_slot.append(e.slot)
            ext_level.append(levels[id(e.level)])
        depth_start.append(len(ext_slot))
    slots = 1 + max([*ext_slot, *(k[1] for k in kernel.seeds if k[0] == "n"), *(i for i, _ in kernel.values)])
    dtype = kernel.ops.dtype
    values = [np.asarray(v, dtype=dtype) for _, v in kernel.values]

    def starts(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(([0], np.cumsum([len(p) for p in parts]))).astype(np.int64)

    def joined(parts: list[np.ndarray], kind) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0, dtype=kind), dtype=kind)

    offsets = [level.offsets for level in trie_levels]
    flat = _Flat(
        slots, np.array(depth_start, dtype=np.int64), np.array(ext_slot, dtype=np.int64),
        np.array(ext_level, dtype=np.int64), local_keys(trie_levels, kernel.encoding.span),
        starts([level.comp for level in trie_levels]),
        joined(offsets, np.int64), starts(offsets), joined(values, dtype), starts(values),
        np.array([i for i, _ in kernel.values], dtype=np.int64), _staying(kernel, ext_slot, depth_start),
    )
    # Read-only, as the tasks' copies are (views of a read-only mapping, faq.joins.mapped): numba types
    # a read-only array apart from a writable one, so otherwise the driver's call (a kernel run
    # in-process) would compile the loop a second time per signature, and the warm-up
    # (faq.joins.warm) would have twice as many to compile.  Every array here is a fresh copy.
    for field in fields(flat):
        array = getattr(flat, field.name)
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    return flat


def local_keys(levels: Sequence["TrieLevel"], span: int) -> np.ndarray:
    """The levels' entries without their parents, one level after another: ``comp - parent * span``.

    Within a parent's segment the values are as sorted as the composites, so
    the compiled loop searches and marks them directly; int32 (half the bytes
    to ship, map and stream through the cache) when every value fits,
    that is when ``span`` does.

    >>> from faq.joins.csr import build_trie
    >>> trie = build_trie([np.array([0, 0, 2]), np.array([1, 2, 1])], span=3)
    >>> [level.comp.tolist() for level in trie.levels]
    [[0, 2], [1, 2, 4]]
    >>> local = local_keys(trie.levels, span=3)
    >>> local.tolist(), local.dtype.name
    ([0, 2, 1, 2, 1], 'int32')
    """
    dtype = np.int32 if span <= np.iinfo(np.int32).max + 1 else np.int64
    out = np.empty(sum(len(level.comp) for level in levels), dtype=dtype)
    at = 0
    for level in levels:
        counts = np.diff(level.offsets)
        parents = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        np.subtract(level.comp, parents * np.int64(span), out=out[at:at + len(level.comp)], casting="unsafe")
        at += len(level.comp)
    return out


def _staying(kernel: "Kernel", ext_slot: list[int], depth_start: list[int]) -> int:
    """The last depth's extender whose parent was fixed earliest, before the depth above it, or -1.

    Its segment is the same for every candidate of the depth above (a
    triangle's ``edge(a, c)`` while ``b`` varies; a 4-clique's ``edge(a, d)``
    while ``b`` and ``c`` vary), so the compiled loop marks it once and looks
    the other extenders' entries up.
    """
    last = len(depth_start) - 1
    if last < 2 or depth_start[last] - depth_start[last - 1] < 2 or kernel.encoding.span > MARK_MAX_SPAN:
        return -1
    fixed_at = {key[1]: 0 for key in kernel.seeds if key[0] == "n"}  # the depth that last set each slot
    for depth in range(1, last):
        for e in range(depth_start[depth - 1], depth_start[depth]):
            fixed_at[ext_slot[e]] = depth
    fixed = {e: fixed_at.get(ext_slot[e], 0) for e in range(depth_start[last - 1], depth_start[last])}
    earliest = min(fixed.values())
    staying = [e for e, depth in fixed.items() if depth == earliest]
    return staying[0] if earliest < last - 1 and len(staying) == 1 else -1


def for_tasks(kernel: "Kernel") -> "Kernel":
    """``kernel`` as its tasks need it: a compiled kernel carries its flat form, not the tries.

    The flat form concatenates the trie levels; built here on the driver, it
    is the only copy shipped (and mapped once per machine, :mod:`faq.joins.mapped`)
    instead of one built by every worker beside the tries it came from.
    """
    if not kernel.compiled:
        return kernel
    return replace(kernel, extenders=[], values=[], flat=_flatten(kernel))


def aggregate_seeds(kernel: "Kernel", seed_ids: np.ndarray) -> Any:
    """⊕ over every binding extending the seeds ``seed_ids`` of the ⊗ of its values (numpy scalar).

    ``kernel`` must be :func:`compilable`.  Its flat form is the one it
    carries (:func:`for_tasks`), else built once per kernel object.
    """
    flat = kernel.flat if kernel.flat is not None else _FLAT.get(id(kernel))
    if flat is None:
        flat = _FLAT[id(kernel)] = _flatten(kernel)
        weakref.finalize(kernel, _FLAT.pop, id(kernel), None)
    ops = kernel.ops
    ids = np.asarray(seed_ids, dtype=np.int64)
    seed_nodes = np.zeros((len(ids), flat.slots), dtype=np.int64)
    for key, column in kernel.seeds.items():
        if key[0] == "n":
            seed_nodes[:, key[1]] = column[ids]
    zero = np.asarray(ops.zero, dtype=ops.dtype)[()]
    one = np.asarray(ops.one, dtype=ops.dtype)[()]
    from faq.joins.compiled_loop import aggregate

    guard = guarded(kernel)
    carry = np.zeros(1, dtype=np.int64)
    total = aggregate(seed_nodes, flat.depth_start, flat.ext_slot, flat.ext_level, flat.comp, flat.comp_start,
                      flat.offsets, flat.offsets_start, np.int64(kernel.encoding.span), flat.values,
                      flat.values_start, flat.value_slot, OPERATION_CODES[ops.add], OPERATION_CODES[ops.mul], zero, one,
                      np.int64(flat.mark_ext), np.int64(DEFER_PAIRS), guard, carry)
    if guard:  # exact: carry · 2^61 + total (a Python int, perhaps beyond int64)
        return (int(carry[0]) << GUARD_SHIFT) + int(total)
    return np.asarray(total, dtype=ops.dtype)[()]


def guarded(kernel: "Kernel") -> bool:
    """Whether the compiled loop keeps ``kernel``'s total exact past int64 (:func:`aggregate_seeds`
    then returns a Python int): int64 ⊕ = + of valued bindings, each at most ``kernel.bound`` in
    magnitude (at most 2^61, or the tasks would list bindings instead).

    An unvalued count adds at most one per binding: it cannot reach 2^63 in any run that ends.
    """
    ops = kernel.ops
    return bool(ops.integral and ops.add is np.add and kernel.values and kernel.bound > 1)


def int64_parts(total: int, limit: int = 1 << 62) -> list[int]:
    """An exact integer total as int64 partial sums, each at most ``limit`` in magnitude (the
    numpy kernel emits its partials the same way: Spark's ``sum`` then sees what it would have
    summed row by row, and raises where that would overflow).

    >>> int64_parts(5)
    [5]
    >>> int64_parts(-(1 << 63) - 7, limit=1 << 62)
    [-4611686018427387904, -4611686018427387904, -7]
    >>> sum(int64_parts(10 ** 20)) == 10 ** 20
    True
    """
    total = int(total)
    sign = 1 if total >= 0 else -1
    whole, rest = divmod(abs(total), limit)
    if rest == 0 and whole:
        whole, rest = whole - 1, limit
    return [sign * limit] * whole + [sign * rest]
