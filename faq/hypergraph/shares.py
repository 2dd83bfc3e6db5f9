"""HyperCube / Shares: how a bag's variables are split over a grid of tasks (pure Python).

The partitioned generic join (:mod:`faq.joins.partitioned`) hashes each variable
``v`` of a bag onto one dimension of a grid of ``Π share_v`` cells and sends
each row of a relation ``R`` to every cell consistent with its keys: to one
coordinate on the dimensions of ``R``'s variables, to all of them on the
others (Afrati & Ullman's Shares; Beame, Koutris & Suciu's HyperCube).  A cell
then holds about ``Σ_R |R| / Π_{v ∈ R} share_v`` rows.  This module chooses
the shares from the bag's hypergraph and sizes only, as the planner's other
estimates are made: :func:`shares` for a number of cells, :func:`grid_for`
for a memory budget (:data:`BYTES_PER_INDEX_ROW` per indexed row).  For a
triangle on ``p`` cells each relation is cut into ``p^(2/3)`` pieces
(replicated ``p^(1/3)`` times); patterns with many variables replicate more.

Examples
--------
>>> s = shares(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [100, 100, 100], tasks=8)
>>> s
{'a': 2, 'b': 2, 'c': 2}
>>> task_rows([("a", "b"), ("a", "c"), ("b", "c")], [100, 100, 100], s)
75.0
>>> g = grid_for(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [1000] * 3,
...              budget_bytes=40_000, parallelism=2)
>>> g.cells, g.describe()
(16, 'grid a=4 × b=2 × c=2 (16 cells), est. 500 rows / 31.2 KiB per task')
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    import numpy

# Bytes of the in-memory index per input row (the broadcast index, or a cell's): for a binary
# relation its two trie levels' entries and CSR offsets as int64 (~24 B), the value (8 B), and the
# hash table a level builds once it is validated against often enough (about four 8-byte slots per
# entry, 32 B; faq.joins.csr.HASH_SLOTS_PER_ENTRY).  Keys are int64 (faq.joins.csr.Encoding).
# This is the numpy kernel's footprint.
BYTES_PER_INDEX_ROW = 64
# The same for the compiled loop (faq.joins.compiled_loop), which validates by search in the sorted
# levels and builds no hash table: a binary relation's levels (at most 24 B a row when every first
# key is distinct and keys are int64; int32 where the key span allows, about 5 B a row shipped for
# R-MAT graphs) and its value (8 B).  Its per-task bitmaps (two, a bit a key, up to
# faq.joins.compiled.MARK_MAX_SPAN keys) and deferred pairs (faq.joins.compiled.DEFER_PAIRS)
# are bounded apart, not per row.
COMPILED_BYTES_PER_INDEX_ROW = 32
# Most cells a grid may have (each cell is one group of a Spark group-by, run as one kernel).
MAX_CELLS = 1024
# Share vectors enumerated exhaustively up to this many; beyond, shares grow greedily.
EXHAUSTIVE_LIMIT = 200_000
# ... and up to this many (vector, relation) estimates and (vector, variable) shares: a bag of many
# relations or variables (a large query's greedy order makes some) is searched greedily too, so
# planning it stays within about a second and 16 MB.
EXHAUSTIVE_WORK = 2_000_000


def task_rows(
    relation_variables: Sequence[Sequence[str]], relation_rows: Sequence[float], share: Mapping[str, int]
) -> float:
    """Estimated rows one cell holds: ``Σ_R |R| / Π_{v ∈ R} share_v``.

    >>> task_rows([("a", "b"), ("c",)], [80, 10], {"a": 4, "b": 2})
    20.0
    """
    total = 0.0
    for variables, rows in zip(relation_variables, relation_rows):
        total += float(rows) / math.prod(share.get(v, 1) for v in set(variables))
    return total


def shares(
    variables: Sequence[str],
    relation_variables: Sequence[Sequence[str]],
    relation_rows: Sequence[float],
    tasks: int,
) -> dict[str, int]:
    """Integer share per variable, product at most ``tasks``, minimising the rows per cell.

    Parameters
    ----------
    variables : sequence of str
        The bag's variables (the grid's dimensions, in this order).
    relation_variables : sequence of sequence of str
        The variables of each relation (and indicator) of the bag.
    relation_rows : sequence of float
        Their rows (estimates are fine).
    tasks : int
        Most cells (``Π share_v ≤ tasks``).

    Returns
    -------
    dict
        ``{variable: share}``; a variable no relation holds gets 1 (splitting
        it would only replicate).  Among equal estimates the grid with fewer
        cells wins, then the most even one, then the earliest variables get
        the larger shares.  An
        exhaustive search over share vectors (at most
        :data:`EXHAUSTIVE_LIMIT` of them, and :data:`EXHAUSTIVE_WORK`
        estimates of a relation's rows), else a greedy one doubling the
        share that lowers the estimate most.

    Examples
    --------
    >>> shares(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [1, 1, 1], tasks=27)
    {'a': 3, 'b': 3, 'c': 3}
    >>> shares(["a", "b", "z"], [("a", "b")], [10], tasks=4)   # z is in no relation
    {'a': 2, 'b': 2, 'z': 1}
    >>> shares(["a", "b"], [("a", "b")], [10], tasks=1)
    {'a': 1, 'b': 1}
    """
    tasks = max(1, int(tasks))
    held = {v for vs in relation_variables for v in vs}
    dims = [v for v in dict.fromkeys(variables) if v in held]
    ones = {v: 1 for v in dict.fromkeys(variables)}
    if tasks == 1 or not dims:
        return ones
    exhaustive = min(EXHAUSTIVE_LIMIT, EXHAUSTIVE_WORK // max(len(relation_variables), len(dims)))
    if _vectors_at_most(len(dims), tasks, exhaustive):
        chosen = _best_vector(dims, relation_variables, relation_rows, tasks)
    else:
        chosen = _greedy_vector(dims, relation_variables, relation_rows, tasks)
    return {**ones, **dict(zip(dims, chosen))}


def _greedy_vector(
    dims: Sequence[str], relation_variables: Sequence[Sequence[str]], relation_rows: Sequence[float], tasks: int
) -> list[int]:
    """The greedy search: from all shares 1, double the share that lowers the estimate most (the
    first such variable on ties) while the product stays within ``tasks`` and the estimate falls.

    Each round weighs every variable's doubling at once in numpy (a bag of dozens of variables and
    relations took seconds evaluated one by one), with the same floats summed in the same order.

    >>> _greedy_vector(["a", "b"], [("a", "b"), ("a",)], [100, 100], 4)
    [4, 1]
    """
    import numpy as np

    position = {v: i for i, v in enumerate(dims)}
    holds = [sorted({position[v] for v in variables if v in position}) for variables in relation_variables]
    chosen = [1] * len(dims)
    while math.prod(chosen) * 2 <= tasks:
        current, options = 0.0, np.zeros(len(dims))
        for held, rows in zip(holds, relation_rows):
            product = math.prod(chosen[i] for i in held)
            current += float(rows) / product
            doubled = np.full(len(dims), product, dtype=np.int64)
            doubled[held] *= 2  # doubling a share this relation holds halves its rows per cell
            options += float(rows) / doubled
        best = int(np.argmin(options))  # the first of the least
        if options[best] >= current:
            break
        chosen[best] *= 2
    return chosen


def _best_vector(
    dims: Sequence[str], relation_variables: Sequence[Sequence[str]], relation_rows: Sequence[float], tasks: int
) -> list[int]:
    """The exhaustive search: of every share vector with product at most ``tasks``, the one of
    smallest estimate, then fewest cells, then the most even (skew: a heavy value of one variable
    is still spread by the others), then with larger shares on earlier variables.

    In numpy, over all vectors at once: a loop in Python evaluating :func:`task_rows` per vector
    took seconds per bag of a dozen relations (up to :data:`EXHAUSTIVE_LIMIT` vectors, for each
    grid size :func:`grid_for` tries).  The estimates are the same floats, summed in the same
    order, so the choice is the one that loop made.

    >>> _best_vector(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [1000] * 3, 16)
    [4, 2, 2]
    """
    import numpy as np

    vectors = _vector_array(len(dims), tasks)
    position = {v: i for i, v in enumerate(dims)}
    cost = np.zeros(len(vectors))
    for variables, rows in zip(relation_variables, relation_rows):
        product = np.ones(len(vectors), dtype=np.int64)
        for v in set(variables):
            if v in position:
                product *= vectors[:, position[v]]
        cost += float(rows) / product  # as task_rows: rows / Π shares, added relation by relation
    tied = np.flatnonzero(cost == cost.min())  # the least estimate first; the rest only break its ties
    if len(tied):  # (none only if an estimate is NaN: then sort them all)
        vectors, cost = vectors[tied], cost[tied]
    # np.lexsort sorts by its last key first: estimate, cells, largest share, then -share per variable.
    keys = [-vectors[:, i] for i in reversed(range(len(dims)))]
    best = np.lexsort(keys + [vectors.max(axis=1), vectors.prod(axis=1), cost])[0]
    return [int(x) for x in vectors[best]]


# _vector_array's answers, kept while they hold at most _VECTORS_KEPT numbers in all (32 MB): every bag of
# as many variables, and every grid size grid_for tries, asks for the same ones again.
_VECTORS: dict[tuple[int, int], "numpy.ndarray"] = {}
_VECTORS_KEPT = 4_000_000


def _vector_array(k: int, bound: int) -> "numpy.ndarray":
    """Every vector of ``k`` positive integers whose product is at most ``bound``, as the rows of a
    read-only int64 array.

    >>> _vector_array(2, 3).tolist()
    [[1, 1], [1, 2], [1, 3], [2, 1], [3, 1]]
    """
    if (k, bound) not in _VECTORS:
        vectors = _make_vectors(k, bound)
        if sum(v.size for v in _VECTORS.values()) + vectors.size > _VECTORS_KEPT:
            _VECTORS.clear()
        _VECTORS[k, bound] = vectors
    return _VECTORS[k, bound]


def _make_vectors(k: int, bound: int) -> "numpy.ndarray":
    import numpy as np

    # Level by level, each vector so far extended by every share that keeps the product within the
    # bound; each level keeps only its new shares and their parents, joined up once at the end.
    room = np.array([bound], dtype=np.int64)  # the most the next share may be, per vector so far
    levels = []
    for _ in range(k):
        parent = np.repeat(np.arange(len(room)), room)
        share = np.arange(len(parent)) - np.repeat(np.cumsum(room) - room, room) + 1  # 1..room per parent
        levels.append((parent, share))
        room = room[parent] // share
    vectors = np.ones((len(room), k), dtype=np.int64)
    at = np.arange(len(room))
    for column in range(k - 1, -1, -1):
        parent, share = levels[column]
        vectors[:, column] = share[at]
        at = parent[at]
    vectors.setflags(write=False)
    return vectors


@functools.lru_cache(maxsize=256)
def _vectors_at_most(k: int, bound: int, limit: int) -> bool:
    """Whether :func:`_vector_array` has at most ``limit`` vectors (counted without listing them)."""
    counts: dict[tuple[int, int], int] = {}

    def count(k: int, bound: int) -> int:
        if k == 0:
            return 1
        if (k, bound) not in counts:
            total, s = 0, 1
            while s <= bound and total <= limit:
                total += count(k - 1, bound // s)
                s += 1
            counts[k, bound] = total
        return counts[k, bound]

    return count(k, bound) <= limit


@dataclass(frozen=True)
class Grid:
    """A HyperCube grid and what it costs per task (a cell).

    Attributes
    ----------
    shares : tuple of (str, int)
        Share per variable, in the bag's order (1: not split).
    cells : int
        ``Π shares``.
    rows_per_task : float
        Estimated input rows of one cell (:func:`task_rows`).
    bytes_per_task : float
        Their index's estimated bytes (the kernel's bytes per row, :func:`grid_for`).
    """

    shares: tuple[tuple[str, int], ...]
    cells: int
    rows_per_task: float
    bytes_per_task: float

    def describe(self) -> str:
        split = [f"{v}={s}" for v, s in self.shares if s > 1] or ["1"]
        return (f"grid {' × '.join(split)} ({self.cells} cells), est. {self.rows_per_task:.3g} rows / "
                f"{format_bytes(self.bytes_per_task)} per task")


def grid_for(
    variables: Sequence[str],
    relation_variables: Sequence[Sequence[str]],
    relation_rows: Sequence[float],
    budget_bytes: float,
    parallelism: int,
    max_cells: int = MAX_CELLS,
    bytes_per_row: float = BYTES_PER_INDEX_ROW,
) -> Grid:
    """The grid of fewest cells (at least ``parallelism``) whose estimated cell index fits ``budget_bytes``.

    The number of cells tried doubles from ``parallelism`` (every core busy)
    up to ``max_cells``; more cells replicate more rows, so the first that
    fits is taken (the last one when none does: the plan then says the
    budget is exceeded).  A cell's index is ``bytes_per_row`` a row: the
    kernel's (:data:`BYTES_PER_INDEX_ROW`, :data:`COMPILED_BYTES_PER_INDEX_ROW`).

    >>> grid_for(["a", "b"], [("a", "b")], [100], budget_bytes=1e9, parallelism=4).describe()
    'grid a=2 × b=2 (4 cells), est. 25 rows / 1.56 KiB per task'
    >>> grid_for(["a", "b"], [("a", "b")], [100], 1e9, 4, bytes_per_row=32).describe()
    'grid a=2 × b=2 (4 cells), est. 25 rows / 800 B per task'
    """
    tasks = max(1, int(parallelism))
    while True:
        share = shares(variables, relation_variables, relation_rows, tasks)
        rows = task_rows(relation_variables, relation_rows, share)
        if rows * bytes_per_row <= budget_bytes or tasks * 2 > max_cells:
            break
        tasks *= 2
    return Grid(tuple(share.items()), math.prod(share.values()), rows, rows * bytes_per_row)


def format_bytes(n: float) -> str:
    """``n`` bytes for people, three digits at most: ``format_bytes(3 * 2**20)`` is ``'3 MiB'``.

    >>> format_bytes(512), format_bytes(1536), format_bytes(1_028_096), format_bytes(3 * 2**30)
    ('512 B', '1.5 KiB', '0.98 MiB', '3 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1000 or unit == "GiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"  # pragma: no cover
