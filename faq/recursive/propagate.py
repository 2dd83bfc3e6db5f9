"""The driver's placement of the semi-naive loop: node values in a numpy array, edges in resident CSR tries.

The fixpoint ``value(y) = seed(y) ⊕ ⊕_x value(x) ⊗ edge(x, y)`` over an
idempotent ⊕ (docs/design.md, "Monoid fixpoints") in numpy: one round of the
loop of :mod:`faq.recursive.core` (which :mod:`faq.recursive.rounds` runs on
Spark) is

1. the *frontier* (nodes whose value improved in the last round) reads its
   out-edges from every run of the edge index (:func:`out_edges`: base,
   overlay and the batch of a :class:`~faq.incremental.index.ResidentRelation`,
   view ``(src, dst)``; parallel edges across runs need no merge, since ⊕
   is idempotent);
2. each out-edge proposes ``value(x) ⊗ weight`` to its target, and the
   proposals are ⊕-ed into the value array in place (``ufunc.at``);
3. the targets whose value changed -- strictly improved, ⊕ being
   idempotent -- are the next frontier.

An edge whose weight is the semiring's zero is *dead* (a deletion marked in
an index's base, :mod:`faq.recursive.edges`) and proposes nothing.  Given a
``parents`` array, each strictly improved node records the source of the
proposal that won: the derivation forest :mod:`faq.recursive.trimming`
cuts when edges are deleted (that module argues why it is a forest).

Values are dense over the codes of a :class:`~faq.incremental.domain.KeyDomain`;
a node without a value holds the semiring's zero.  :func:`propagate`
*records* the value every improved node had before (so a caller can report
``old`` and undo the rounds): an exception in any round -- the loop's
:class:`~faq.errors.NegativeCycleError` past the Bellman-Ford bound or
:class:`~faq.errors.FixpointNotConvergedError` past
``max_iterations``, an interrupt -- restores the array as it was.

Rounds are counted as on Spark: a round processes a non-empty frontier (the
first one may instead follow given edges only: an insert batch's effective
edges, from their sources' current values), the last one improves nothing.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.index import KeyedRows, View, build_run
>>> from faq.semirings import MIN_PLUS
>>> ops = fixpoint_ops(MIN_PLUS)
>>> edges = KeyedRows((np.array([0, 1, 0]), np.array([1, 2, 2])), np.array([1.0, 1.0, 5.0]))
>>> run = build_run(edges, View((0, 1)), ops)
>>> values = np.full(3, np.inf)
>>> values[0] = 0.0                                      # the source
>>> result = propagate(values, [run], ops, frontier=np.array([0]))
>>> values.tolist(), result.iterations
([0.0, 1.0, 2.0], 3)
>>> result.nodes.tolist(), result.old.tolist()           # improved nodes and their values before
([1, 2], [inf, inf])
>>> parents = np.full(3, -1)
>>> values[1:] = np.inf
>>> _ = propagate(values, [run], ops, frontier=np.array([0]), parents=parents)
>>> parents.tolist()                                     # 2 is reached through 1 (1 + 1 < 5)
[-1, 0, 1]
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.incremental.state import value_ops
from faq.joins.csr import Trie
from faq.joins.dense import first_positions
from faq.recursive.core import seminaive_rounds
from faq.semirings.numpy_backend import NumpyForm, numpy_ops

_CODE_MASK = np.int64(SPAN - 1)  # a trie level's comp is ``parent * SPAN + code``, SPAN a power of two
NO_NODES = np.zeros(0, dtype=np.int64)


def no_fixpoint_form(semiring: Any) -> str:
    """Why the driver's fixpoint (and the executors' held rounds) cannot take ``semiring``, or "" when they can:
    values of more than one number (a :class:`~faq.semirings.TupleSemiring`'s, whatever numpy forms it
    declares), or no numpy form of ⊕ and ⊗.

    >>> no_fixpoint_form("min_plus")
    ''
    """
    from faq.semirings import get_semiring

    semiring = get_semiring(semiring)
    if getattr(semiring, "structured", False):
        return (f"semiring {semiring.name!r} has values of {semiring.width} numbers: the driver's fixpoint "
                "takes scalar values only")
    return "" if fixpoint_ops(semiring) is not None else f"semiring {semiring.name!r} has no numpy form"


def fixpoint_ops(semiring: Any) -> Optional[NumpyForm]:
    """⊗, ⊕, one and zero of an idempotent semiring in numpy (None when it has no numpy form).

    Built-in operations (:func:`faq.incremental.state.value_ops`), or a
    user-defined semiring's declared ``numpy_add``/``numpy_mul``: a fixpoint
    only ⊕-combines and ⊗-extends values (and assigns them), never subtracts,
    so a user's forms serve as built-in ones do.  Component labels
    (:data:`~faq.semirings.MIN_LABEL`) are min / + on int64.

    >>> import numpy as np
    >>> from faq.semirings import Semiring
    >>> from pyspark.sql import functions as F
    >>> tropical = Semiring("my_min_plus", "double", float("inf"), 0.0, add=lambda a, b: F.least(a, b),
    ...                     mul=lambda a, b: a + b, sum=F.min, idempotent=True, numpy_add=np.minimum, numpy_mul=np.add)
    >>> fixpoint_ops(tropical).add is np.minimum
    True
    """
    if getattr(semiring, "structured", False):
        return None
    ops = value_ops(semiring) if semiring.builtin_operations else numpy_ops(semiring)
    if ops is None or not ops.idempotent:  # no numpy form, or ⊕ is not idempotent (e.g. +)
        return None
    return ops


def better_than_one(weights: np.ndarray, ops: NumpyForm) -> np.ndarray:
    """Which weights are better than ``one`` (``w ⊕ 1 != 1``): only such edges let a cycle improve values."""
    return ops.add(weights, ops.one) != ops.one


def out_edges(runs: Sequence[Trie], frontier: np.ndarray, ops: NumpyForm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every out-edge of the ``frontier`` nodes (codes, distinct) in ``runs``.

    Returns ``(at, dst, weight)``: per edge, the frontier position of its
    source, its target code and its weight (``one`` for a run without values).
    A run is the trie of a view ``(src, dst)``: level 0 holds the sources
    (``comp`` = code), level 1 their targets in CSR segments.
    """
    ats, dsts, weights = [], [], []
    for trie in runs:
        if trie.rows == 0 or len(frontier) == 0:
            continue
        sources, targets = trie.levels
        at = np.searchsorted(sources.comp, frontier)
        np.minimum(at, len(sources.comp) - 1, out=at)
        hit = np.flatnonzero(sources.comp[at] == frontier)
        if len(hit) == 0:
            continue
        entries = at[hit]
        starts = targets.offsets[entries]
        counts = targets.offsets[entries + 1] - starts
        total = int(counts.sum())
        if total == 0:
            continue
        # the CSR segments of the hit sources, concatenated: segment k repeats hit[k]
        owner = np.repeat(np.arange(len(hit), dtype=np.int64), counts)
        ends = np.cumsum(counts)
        index = np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - counts), counts)
        ats.append(hit[owner])
        dsts.append(targets.comp[index] & _CODE_MASK)
        if trie.values is None:
            weights.append(np.full(total, ops.one, dtype=ops.dtype))
        else:
            weight = trie.values[index]
            live = weight != ops.zero  # a dead (deleted) edge of a base proposes nothing
            if not live.all():
                ats[-1], dsts[-1], weight = ats[-1][live], dsts[-1][live], weight[live]
            weights.append(weight)
    if not ats:
        return NO_NODES, NO_NODES, np.zeros(0, dtype=ops.dtype)
    if len(ats) == 1:
        return ats[0], dsts[0], weights[0]
    return np.concatenate(ats), np.concatenate(dsts), np.concatenate(weights)


def proposed(runs: Sequence[Any], frontier: np.ndarray, values: np.ndarray, ops: NumpyForm
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``frontier``'s proposals ``(source, target, value ⊗ weight)`` (codes) over ``runs``.

    A run is a trie on the driver (:func:`out_edges`), or edges held elsewhere: an object whose
    ``proposals(frontier, values)`` (``values`` of every node) returns the same three arrays, perhaps
    ⊕-reduced per target already, perhaps with proposals further along paths from the frontier
    (:class:`~faq.recursive.executor_edges.ExecutorEdges`, one Spark job).  Both may be mixed: ⊕ is
    idempotent, so a pair proposed twice changes nothing, and every proposal is a path's value.
    """
    tries = [run for run in runs if isinstance(run, Trie)]
    at, dst, weight = out_edges(tries, frontier, ops)
    found = [(frontier[at], dst, ops.mul(values[frontier][at], weight))]
    for run in runs:
        if not isinstance(run, Trie):
            found.append(run.proposals(frontier, values))
    if len(found) == 1:
        return found[0]
    return tuple(np.concatenate(arrays) for arrays in zip(*found))  # type: ignore[return-value]


@dataclass
class Propagation:
    """What :func:`propagate` changed: the improved ``nodes`` (sorted codes), their ``old`` values and parents."""

    nodes: np.ndarray
    old: np.ndarray
    iterations: int
    seconds: float = 0.0
    old_parents: Optional[np.ndarray] = None


class UndoLog:
    """The (node, value before, parent before) of every round, to report ``old`` and to undo."""

    def __init__(self, record: bool, parents: Optional[np.ndarray] = None) -> None:
        self.record = record
        self.parents = parents
        self.nodes: list[np.ndarray] = []
        self.old: list[np.ndarray] = []
        self.old_parents: list[np.ndarray] = []

    def add(self, nodes: np.ndarray, old: np.ndarray) -> None:
        if self.record:
            self.nodes.append(nodes)
            self.old.append(old)
            if self.parents is not None:
                self.old_parents.append(self.parents[nodes])

    def undo(self, values: np.ndarray) -> None:
        for nodes, old in zip(reversed(self.nodes), reversed(self.old)):
            values[nodes] = old
        for nodes, old in zip(reversed(self.nodes), reversed(self.old_parents)):
            self.parents[nodes] = old

    def result(self, dtype: Any) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        if not self.nodes:
            return NO_NODES, np.zeros(0, dtype=dtype), (None if self.parents is None else NO_NODES)
        nodes = np.concatenate(self.nodes)
        old = np.concatenate(self.old)
        # a node's value before the batch is the one logged the first time it improved
        first_nodes, first = np.unique(nodes, return_index=True)
        parents = None if self.parents is None else np.concatenate(self.old_parents)[first]
        return first_nodes, old[first], parents


def relax(values: np.ndarray, targets: np.ndarray, proposals: np.ndarray, ops: NumpyForm,
          log: Optional[UndoLog] = None, parents: Optional[np.ndarray] = None,
          sources: Optional[np.ndarray] = None) -> np.ndarray:
    """⊕ ``proposals`` into ``values[targets]`` in place; the targets that improved (sorted, distinct).

    With ``parents``, an improved target's parent becomes the ``sources``
    entry of a proposal equal to its new value (one exists: ⊕ is min, max
    or or, so the new value is one of the proposals).
    """
    if len(targets) == 0:
        return NO_NODES
    before = values[targets]
    ops.add.at(values, targets, proposals)
    after = values[targets]
    moved = np.flatnonzero(after != before)
    if len(moved) == 0:
        return NO_NODES
    # many proposals (a large round) are dense codes: positions by a table, not a sort (faq.joins.dense)
    nodes, first = first_positions(targets[moved])
    if log is not None:
        log.add(nodes, before[moved][first])
    if parents is not None:
        won = moved[proposals[moved] == after[moved]]
        winners, at = first_positions(targets[won])
        parents[winners] = sources[won[at]]
    return nodes


def propagate(
    values: np.ndarray,
    runs: Sequence[Trie],
    ops: NumpyForm,
    *,
    frontier: Optional[np.ndarray] = None,
    first: Optional[tuple[np.ndarray, np.ndarray, np.ndarray]] = None,
    max_iterations: int = 10_000,
    nodes: Optional[int] = None,
    semiring: str = "",
    record: bool = True,
    example: Callable[[int], Any] = int,
    progress: Optional[Callable[[str], None]] = None,
    parents: Optional[np.ndarray] = None,
) -> Propagation:
    """Semi-naive rounds until nothing improves; ``values`` is updated in place (see the module notes).

    Parameters
    ----------
    values : np.ndarray
        Dense values over node codes (the zero: no value).
    runs : sequence of Trie (or edges held elsewhere)
        The edges, view ``(src, dst)``, as several runs (:func:`proposed`).
    frontier : np.ndarray, optional
        Codes whose values are new (round 1 follows all their out-edges).
    first : (src, dst, weight) arrays, optional
        Instead of ``frontier``: round 1 follows these edges only (an insert
        batch's effective edges; older edges have propagated their sources'
        values already).
    max_iterations : int
        :class:`FixpointNotConvergedError` before a round beyond it.
    nodes : int, optional
        The Bellman-Ford bound: values still improving in round ``nodes``
        raise :class:`NegativeCycleError` (None: no cycle can improve values).
    record : bool
        Log the old values (needed for :attr:`Propagation.old` and to undo
        on an error); a from-scratch solve on a fresh array does without.
    example : callable
        Code -> node id, for the error's example.
    progress : callable, optional
        Gets ``"iteration k: n value(s) improved (s)"`` per round.
    parents : np.ndarray, optional
        Per code, the code whose edge last strictly improved it (-1: none),
        updated in place (and undone with the values on an error).
    """
    started = time.perf_counter()
    log = UndoLog(record, parents if record else None)
    current = NO_NODES if frontier is None else np.asarray(frontier, dtype=np.int64)
    follow_first = first is not None and len(first[0]) > 0

    def one_round(k: int) -> int:
        """Round ``k`` on the driver: the frontier's out-edges (round 0 of an insert batch: its edges)."""
        nonlocal current
        if k == 0 and follow_first:
            src, dst, weight = first
            valued = np.flatnonzero(values[src] != ops.zero)
            src, dst, proposals = src[valued], dst[valued], ops.mul(values[src[valued]], weight[valued])
        else:
            src, dst, proposals = proposed(runs, current, values, ops)
        current = relax(values, dst, proposals, ops, log, parents, src)
        return len(current)

    try:
        rounds = seminaive_rounds(one_round, frontier=None if follow_first else len(current),
                                  max_iterations=max_iterations, node_count=None if nodes is None else lambda: nodes,
                                  semiring=semiring, example=lambda: example(int(current[0])), progress=progress)
    except BaseException:
        log.undo(values)  # nothing is committed until the batch completes
        raise
    changed, old, old_parents = log.result(values.dtype)
    return Propagation(changed, old, rounds.iterations, time.perf_counter() - started, old_parents)

