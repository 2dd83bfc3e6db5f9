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

import math
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional, Sequence

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
        :data:`EXHAUSTIVE_LIMIT` of them), else a greedy one doubling the
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

    def cost(vector: Sequence[int]) -> float:
        return task_rows(relation_variables, relation_rows, dict(zip(dims, vector)))

    if _vectors_at_most(len(dims), tasks, EXHAUSTIVE_LIMIT):
        best: Optional[tuple] = None
        for vector in _vectors(len(dims), tasks):
            # Smallest estimate, then fewest cells, then the most even (skew: a heavy value of one
            # variable is still spread by the others), then larger shares on earlier variables.
            key = (cost(vector), math.prod(vector), max(vector), tuple(-s for s in vector))
            if best is None or key < best[0]:
                best = (key, vector)
        chosen = best[1]
    else:
        chosen = [1] * len(dims)
        while True:
            options = [
                (cost(chosen[:i] + [2 * chosen[i]] + chosen[i + 1:]), i)
                for i in range(len(dims)) if math.prod(chosen) * 2 <= tasks
            ]
            if not options or min(options)[0] >= cost(chosen):
                break
            chosen[min(options)[1]] *= 2
    return {**ones, **dict(zip(dims, chosen))}


def _vectors(k: int, bound: int, prefix: tuple = ()) -> Iterator[tuple[int, ...]]:
    """Every vector of ``k`` positive integers whose product is at most ``bound``."""
    if k == 0:
        yield prefix
        return
    for s in range(1, bound + 1):
        yield from _vectors(k - 1, bound // s, prefix + (s,))


def _vectors_at_most(k: int, bound: int, limit: int) -> bool:
    """Whether :func:`_vectors` yields at most ``limit`` vectors (counted without listing them)."""
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
