"""Deletions in a maintained fixpoint: trim the derivation forest, re-derive from surviving in-edges.

A deletion (or a worse weight) can make values *worse*, which the
semi-naive rounds of :mod:`faq.recursive.propagate` -- they only improve
values -- cannot undo.  Rather than recompute the whole fixpoint, a batch
undoes only what depended on the removed edges (KickStarter-style trimming):

1. every node keeps a *parent*: the node whose edge last strictly improved
   its value (:func:`~faq.recursive.propagate.propagate` records it; the
   source of paths and each component's smallest node have none);
2. the nodes whose parent edge is removed are roots of *trimmed subtrees*;
   :func:`subtrees` collects them whole (a CSR of parent -> children);
3. trimmed nodes are reset (to the zero; for components to their own label);
4. :func:`reseed` gives each trimmed node the best proposal of its in-edges
   from nodes *not* trimmed (the reverse view ``(dst, src)`` of the edges;
   component edges are symmetric already);
5. propagation continues from the re-seeded nodes (and, for components, from
   every trimmed node: its own label may now be its component's smallest).

Why this is exact.  A node outside the trimmed subtrees still has its whole
parent chain up to a root, every edge of it present: its value is the value
of a path that still exists, so it is no better than the new optimum; and
deletions only make the optimum worse, so it *is* the new optimum.  A trimmed
node's best path, in turn, leaves the untrimmed nodes for the last time over
some edge ``u -> x``: re-seeding proposes exactly ``value(u) ⊗ w`` to ``x``,
and the rounds carry it along the trimmed rest of the path.  Proposals never
improve an untrimmed node (it is optimal already).

Why the parents form a forest.  A parent is set only on a *strict*
improvement, from the value the parent had at the start of that round.  In
min_plus with non-negative weights a node's value is then ≥ its parent's
(its parent's value only decreased since), in max_min ≤ (values only
increase, ``min(p, w) ≤ p``), and component labels are min_plus with zero
weights; boolean values are set once, from a node set in an earlier round.
Around a cycle of parents every such inequality would have to be an equality
with no parent changing since the round it was used -- but the node whose
parent was set last strictly improved in that round, after the others had
read its older, worse value.  So parents never form a cycle: a forest rooted
at the nodes without a parent.  With negative weights the argument fails
(it needs values monotone along parent edges), so such a fixpoint
recomputes (:class:`~faq.recursive.maintained.MaintainedFixpoint` does).

A component's tree can be large: deleting one edge near its root trims most
of the component, and the batch then costs about a recomputation of that
component (still not of the others).

Examples
--------
>>> import numpy as np
>>> parents = np.array([-1, 0, 1, 1, 0])        # 0 -> 1 -> {2, 3}; 0 -> 4
>>> subtrees(parents, np.array([1])).tolist()
[1, 2, 3]
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from faq.joins.csr import Trie
from faq.recursive.propagate import NO_NODES, UndoLog, out_edges, relax
from faq.semirings.numpy_backend import NumpyForm

__all__ = ["cut_roots", "subtrees", "reseed", "forest"]


def cut_roots(parents: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Targets of the removed edges ``src -> dst`` that hang from that very edge (sorted, distinct)."""
    inside = dst < len(parents)
    src, dst = src[inside], dst[inside]
    return np.unique(dst[parents[dst] == src])


#: Rounds :func:`subtrees` walks down by marks (one pass over every node a round) before it sorts
#: the forest by parent: a trimmed subtree is most often a few levels deep.
MARK_ROUNDS = 8


def subtrees(parents: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """``roots`` and all their descendants in the forest ``parents`` (code -> parent, -1: none); sorted.

    A round marks the nodes whose parent is marked (no sort: a batch's few
    shallow subtrees cost a few passes); past :data:`MARK_ROUNDS` rounds, the
    rest is found through the children sorted by parent.

    >>> parents = np.array([-1, 0, 1, 2, 3, 0, -1])          # a chain 0-1-2-3-4, 5 under 0; 6 alone
    >>> subtrees(parents, np.array([1])).tolist()
    [1, 2, 3, 4]
    >>> import faq.recursive.trimming as trimming
    >>> trimming.MARK_ROUNDS, saved = 1, trimming.MARK_ROUNDS   # the deep way
    >>> subtrees(parents, np.array([0, 6])).tolist()
    [0, 1, 2, 3, 4, 5, 6]
    >>> trimming.MARK_ROUNDS = saved
    """
    roots = np.unique(np.asarray(roots, dtype=np.int64))
    if not len(roots) or not len(parents):
        return roots
    n = len(parents)
    marked = np.zeros(n + 1, dtype=bool)  # slot n: the parent of a root of the forest
    marked[roots] = True
    up = np.where(parents >= 0, parents, n)
    frontier = roots
    for _ in range(MARK_ROUNDS):
        new = marked[up]
        new[marked[:n]] = False
        frontier = np.flatnonzero(new)
        if not len(frontier):
            return np.flatnonzero(marked[:n])
        marked[frontier] = True
    return _descendants(parents, frontier, np.flatnonzero(marked[:n]))


def _descendants(parents: np.ndarray, frontier: np.ndarray, found: np.ndarray) -> np.ndarray:
    """``found`` and every descendant of ``frontier`` (in ``found``), through the children sorted by parent."""
    children = np.flatnonzero(parents >= 0)
    by_parent = children[np.argsort(parents[children])]  # any order of siblings will do
    keys = parents[by_parent]
    parts = [found]
    while len(frontier):
        starts = np.searchsorted(keys, frontier, side="left")
        counts = np.searchsorted(keys, frontier, side="right") - starts
        total = int(counts.sum())
        if total == 0:
            break
        ends = np.cumsum(counts)
        frontier = by_parent[np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - counts), counts)]
        parts.append(frontier)
    return np.unique(np.concatenate(parts))


def reseed(values: np.ndarray, parents: np.ndarray, trimmed: np.ndarray, reverse: Sequence[Trie],
           ops: NumpyForm, log: Optional[UndoLog] = None) -> np.ndarray:
    """Each trimmed node gets the ⊕ of ``value(u) ⊗ w`` over its in-edges from untrimmed ``u``.

    ``reverse``: the runs of the edges' ``(dst, src)`` view.  Returns the
    trimmed nodes that improved (their parent set to the winning ``u``).
    """
    if not len(trimmed):
        return NO_NODES
    at, src, weight = out_edges(reverse, trimmed, ops)
    cut = np.zeros(len(values), dtype=bool)
    cut[trimmed] = True
    keep = np.flatnonzero(~cut[src] & (values[src] != ops.zero))
    src = src[keep]
    proposals = ops.mul(values[src], weight[keep])
    return relax(values, trimmed[at[keep]], proposals, ops, log, parents, src)


def forest(values: np.ndarray, runs: Sequence[Trie], ops: NumpyForm, roots: np.ndarray
           ) -> tuple[np.ndarray, bool]:
    """Parents rebuilt from an answer: a breadth-first forest over *tight* edges from ``roots``.

    An edge ``u -> v`` is tight when ``value(u) ⊗ w == value(v)``; each
    node is attached once, to a node attached before it, so the result is a
    forest whose every chain is a path of the answer's value.  Returns
    ``(parents, complete)``: ``complete`` is False when some node with a value
    was not reached (the answer does not match the edges; recompute then).
    (Used on reopening a saved state, which keeps no parents.)

    >>> from faq.incremental.index import KeyedRows, View, build_run
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> from faq.semirings import MIN_PLUS
    >>> ops = fixpoint_ops(MIN_PLUS)
    >>> run = build_run(KeyedRows((np.array([0, 0, 1, 2]), np.array([1, 2, 2, 1])),
    ...                           np.array([1.0, 1.0, 0.0, 0.0])), View((0, 1)), ops)
    >>> parents, complete = forest(np.array([0.0, 1.0, 1.0]), [run], ops, np.array([0]))
    >>> parents.tolist(), complete                  # 1 <-> 2 are tied at 0: no cycle
    ([-1, 0, 0], True)
    """
    n = len(values)
    parents = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    frontier = np.unique(np.asarray(roots, dtype=np.int64))
    seen[frontier] = True
    while len(frontier):
        at, dst, weight = out_edges(runs, frontier, ops)
        proposed = ops.mul(values[frontier][at], weight)
        tight = np.flatnonzero((proposed == values[dst]) & ~seen[dst])
        reached, first = np.unique(dst[tight], return_index=True)
        parents[reached] = frontier[at[tight][first]]
        seen[reached] = True
        frontier = reached
    complete = bool(np.all(seen | (values == ops.zero)))
    return parents, complete
