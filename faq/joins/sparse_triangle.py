"""A triangle-shaped bag summed to one value by masked sparse products (:mod:`scipy.sparse`).

The bag ``a(x, y), b(y, z), c(x, z)``, ⊗ = × and ⊕ = + over int64 or
float64, every variable summed away, is

    Σ_{x,y,z} a(x, y) · b(y, z) · c(x, z).

The keys of all three relations are nodes of one graph, ranked by degree
(fewest first).  A term whose three nodes are distinct has them in one rank
order p < q < r, and each of the six ways x, y, z can take p, q, r is a sum
over paths p → q → r of the *upper* (rank-increasing) parts of the
relations or of their transposes, masked by the third relation on (p, r):
``Σ (L @ R) ∘ M``.  Upper parts of a degree ranking have few entries per row
(the orientation that makes undirected triangle listing fast), so the
products are small where ``a @ b`` would hold every 2-path through the hubs.
Uses of the same relation share matrices, and products with the same two
factors share one multiplication; three uses of one relation whose entries
are all one (a triangle count) take one product, the four path kinds
encoded as digits of its values (:func:`_one_relation_count`).  Terms with a repeated node (relations with
``(v, v)`` rows) are added by inclusion–exclusion over the diagonals.

Rows are multiplied in blocks of bounded work (:data:`BLOCK_FLOPS`), so the
memory stays bounded whatever the graph.  Repeated rows of a relation are
summed into one entry, as ⊕ = + distributes over them.

int64 sums are exact in scipy unless they wrap: the kernel runs only when a
bound on every partial sum (:func:`_int64_safe`) is below 2^62, and answers
None otherwise, for the caller's exact checked path.

Examples
--------
>>> import numpy as np
>>> src, dst = np.array([0, 0, 1, 2, 0]), np.array([1, 2, 2, 3, 3])   # 0→1→2, 0→2; 0→2→3, 0→3
>>> edge = (src, dst, None)
>>> int(triangle_total(edge, edge, edge, np.int64))
2
"""

from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

import numpy as np

#: Most multiply-adds (entries of ``L``'s rows times the rows of ``R`` they reach) in one block of rows:
#: bounds the product's entries held at once (about 12 bytes each).
BLOCK_FLOPS = 1 << 22

#: int64 partial sums are trusted below this bound (:func:`_int64_safe`).
INT64_SAFE = 1 << 62

# A relation as (row keys, column keys, values or None for all ones).
Relation = tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]


def triangle_total(a: Relation, b: Relation, c: Relation, dtype: Any) -> Optional[Any]:
    """``Σ a(x, y)·b(y, z)·c(x, z)`` over all x, y, z, exactly; None if an int64 sum might overflow.

    Parameters
    ----------
    a, b, c : (numpy.ndarray, numpy.ndarray, numpy.ndarray or None)
        Each relation's integer keys, first variable then second (a over
        (x, y), b over (y, z), c over (x, z)), and its values (None: all
        one).  Pass the same arrays for uses of one relation: they share
        matrices.
    dtype : numpy dtype
        int64 or float64: the values' and the sum's type.

    Returns
    -------
    numpy scalar or None
        The sum; None when int64 values are large enough that a partial
        sum could wrap (nothing is computed then).

    Examples
    --------
    >>> import numpy as np
    >>> k4 = np.array([(i, j) for i in range(4) for j in range(4) if i != j]).T
    >>> edge = (k4[0], k4[1], None)
    >>> int(triangle_total(edge, edge, edge, np.int64))       # 4 node triples x 3! orderings
    24
    >>> loop = (np.array([0, 0]), np.array([0, 1]), np.array([2.0, 3.0]))   # a(0,0)=2, a(0,1)=3
    >>> float(triangle_total(loop, loop, loop, np.float64))   # x=y=z=0: 8; x=y=0, z=1: 2·3·3
    26.0
    """
    import scipy.sparse as sp

    dtype = np.dtype(dtype)
    relations = [a, b, c]
    if any(len(r[0]) == 0 for r in relations):
        return dtype.type(0)
    nodes, keys = node_ids([k for r in relations for k in r[:2]])
    rank = _degree_rank(keys, nodes)
    parts = _Parts(rank, nodes, dtype, sp)
    (au, at, ad), (bu, bt, bd), (cu, ct, cd) = (parts.of(r, keys[2 * i], keys[2 * i + 1])
                                                 for i, r in enumerate(relations))
    if dtype.kind == "i" and not _int64_safe([au, at, bu, bt, cu, ct], [ad, bd, cd], nodes):
        return None
    if au is bu is cu and _unit(au, at) and dtype.kind == "i" and _pair_bound(au, at) < ENCODED_LIMIT:
        total = _one_relation_count(au, at, dtype)
    else:
        total = _six_orders(((au, at), (bu, bt), (cu, ct)), dtype)
    if ad.any() or bd.any() or cd.any():
        total += _repeated_nodes(parts, relations, keys, (ad, bd, cd))
    return total


def _six_orders(parts: tuple, dtype: np.dtype) -> Any:
    """The terms with three distinct nodes: for each of the six ways x, y, z take the ranks p < q < r,
    ``Σ (L @ R) ∘ M`` over upper parts (``parts``: (upper, transposed lower) of a, b and c)."""
    (au, at), (bu, bt), (cu, ct) = parts
    cases = [(au, bu, cu), (cu, bt, au), (at, cu, bu), (ct, au, bt), (bu, ct, at), (bt, at, ct)]
    masks: dict[tuple[int, int], list] = {}
    factors: dict[tuple[int, int], tuple] = {}
    for left, right, mask in cases:  # products with the same two factors are one product, masks summed
        factors[(id(left), id(right))] = (left, right)
        masks.setdefault((id(left), id(right)), []).append(mask)
    total = dtype.type(0)
    for key, (left, right) in factors.items():
        mask = masks[key][0]
        for more in masks[key][1:]:
            mask = mask + more
        total += _masked_product_sum(left, right, mask, dtype)
    return total


def _unit(*matrices: Any) -> bool:
    """Whether every entry is one (a relation's repeated rows are summed into its entries)."""
    return all(bool((m.data == 1).all()) for m in matrices)


def _pair_bound(upper: Any, lower_t: Any) -> int:
    """The base :func:`_one_relation_count` encodes with: above twice the most entries of a row of both."""
    most = int(np.diff(upper.indptr).max(initial=0)) + int(np.diff(lower_t.indptr).max(initial=0))
    return 1 << (2 * most + 1).bit_length()


#: :func:`_one_relation_count` runs while its base cubed stays in int64.
ENCODED_LIMIT = 1 << 20


def _one_relation_count(up: Any, down: Any, dtype: np.dtype) -> Any:
    """The six orders' sum for one relation of unit values, in one product.

    With F = ``up`` and G = ``down`` (0/1), the six orders are
    ``(FF)∘F + (FG + GF)∘(F + G) + (GG)∘G``.  One product ``V @ V`` of
    ``V = F + s·G`` holds ``FF + s·(FG + GF) + s²·GG`` in base-s digits,
    each below ``s`` (:func:`_pair_bound`: a digit counts the paths through
    one row's entries, at most twice); read on F's entries and on G's.
    """
    s = _pair_bound(up, down)
    v = (up + down * s).tocsr()
    total = dtype.type(0)
    for low, high in _row_blocks(v, v):
        product = v[low:high] @ v
        f = product.multiply(up[low:high]).tocsr().data   # on F: FF + (FG + GF)
        g = product.multiply(down[low:high]).tocsr().data  # on G: (FG + GF) + GG
        total += (f % s).sum(dtype=dtype) + ((f // s) % s).sum(dtype=dtype)
        total += ((g // s) % s).sum(dtype=dtype) + (g // (s * s)).sum(dtype=dtype)
    return total


def bag_total(relations: Sequence[Any], dtype: Any) -> Optional[Any]:
    """:func:`triangle_total` of a step's three relations (tables with ``variables``, ``keys``, ``values``).

    The relations must cover the three pairs of three variables, one pair
    each (:func:`faq.insideout.placement.triangle_bag`); each is read in the
    orientation the sum needs, whatever its column order.

    Examples
    --------
    >>> import numpy as np
    >>> from faq.joins.local import Table
    >>> src, dst = np.array([0, 0, 1]), np.array([1, 2, 2])
    >>> e = lambda u, v: Table((u, v), {u: src, v: dst}, None)
    >>> int(bag_total([e("a", "b"), e("a", "c"), e("b", "c")], np.int64))   # 0→1, 0→2, 1→2
    1
    >>> int(bag_total([e("a", "b"), e("c", "a"), e("b", "c")], np.int64))   # a→b, c→a, b→c: a cycle
    0
    """
    names = sorted(set().union(*(t.variables for t in relations)))
    by_pair = {frozenset(t.variables): t for t in relations}

    def natural(order: tuple) -> int:  # relations read in their own column order (uses then share matrices)
        x, y, z = order
        return sum(tuple(by_pair[frozenset(p)].variables) == p for p in ((x, y), (y, z), (x, z)))

    x, y, z = max(itertools.permutations(names), key=natural)

    def read(u: str, v: str) -> Relation:
        table = by_pair[frozenset((u, v))]
        return np.asarray(table.keys[u]), np.asarray(table.keys[v]), table.values

    return triangle_total(read(x, y), read(y, z), read(x, z), dtype)


def node_ids(keys: list[np.ndarray]) -> tuple[int, list[np.ndarray]]:
    """The number of nodes and each key array as node ids ``0 .. n-1`` (renumbered when sparse or negative).

    >>> n, ids = node_ids([np.array([5, -1]), np.array([5, 10**12])])
    >>> n, [i.tolist() for i in ids]
    (3, [[1, 0], [1, 2]])
    """
    rows = sum(len(k) for k in keys)
    distinct_arrays = list({id(k): k for k in keys}.values())  # uses of one relation pass the same arrays
    low = min(int(k.min()) for k in distinct_arrays)
    high = max(int(k.max()) for k in distinct_arrays)
    if low >= 0 and high < 4 * rows + 1024:
        return high + 1, [np.asarray(k, dtype=np.int64) for k in keys]
    distinct, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    out, start = [], 0
    for k in keys:
        out.append(inverse[start:start + len(k)].astype(np.int64))
        start += len(k)
    return len(distinct), out


def _degree_rank(keys: list[np.ndarray], nodes: int) -> np.ndarray:
    """Each node's position when nodes are ordered by degree (entries of all relations), then id."""
    degree = np.zeros(nodes, dtype=np.int64)
    seen: set[int] = set()
    for k in keys:
        if id(k) not in seen:  # a relation used twice counts once
            seen.add(id(k))
            degree += np.bincount(k, minlength=nodes)
    rank = np.empty(nodes, dtype=np.int64)
    rank[np.argsort(degree, kind="stable")] = np.arange(nodes, dtype=np.int64)
    return rank


class _Parts:
    """Upper part, transposed upper part and diagonal of each relation, shared by uses of one relation."""

    def __init__(self, rank: np.ndarray, nodes: int, dtype: np.dtype, sp: Any) -> None:
        self.rank, self.nodes, self.dtype, self.sp = rank, nodes, dtype, sp
        self._made: list[tuple[Relation, tuple]] = []

    def values(self, relation: Relation) -> np.ndarray:
        v = relation[2]
        return np.ones(len(relation[0]), dtype=self.dtype) if v is None else np.asarray(v, dtype=self.dtype)

    def of(self, relation: Relation, rows: np.ndarray, cols: np.ndarray) -> tuple:
        for other, made in self._made:
            if _same(relation, other):
                return made
        v = self.values(relation)
        rr, rc = self.rank[rows], self.rank[cols]
        up, down, loop = rr < rc, rr > rc, rows == cols
        upper = self.matrix(rr[up], rc[up], v[up])
        lower_t = self.matrix(rc[down], rr[down], v[down])  # X(q, p) at (p, q), rank p < q
        diagonal = np.zeros(self.nodes, dtype=self.dtype)
        if loop.any():
            np.add.at(diagonal, rr[loop], v[loop])
        made = (upper, lower_t, diagonal)
        self._made.append((relation, made))
        return made

    def matrix(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> Any:
        """CSR of the entries, repeated entries summed, columns sorted."""
        m = self.sp.csr_matrix((values, (rows, cols)), shape=(self.nodes, self.nodes), dtype=self.dtype)
        m.sum_duplicates()
        return m


def _same(x: Relation, y: Relation) -> bool:
    """Whether two relations are the same rows (the same arrays, or equal ones)."""
    if x is y:
        return True
    for p, q in zip(x, y):
        if p is q:
            continue
        if p is None or q is None or len(p) != len(q) or not np.array_equal(p, q):
            return False
    return True


def _masked_product_sum(left: Any, right: Any, mask: Any, dtype: np.dtype) -> Any:
    """``Σ (left @ right) ∘ mask``, as that or as ``Σ (leftᵀ @ mask) ∘ right`` (the same sum), whichever
    multiplies less; rows in blocks of at most about :data:`BLOCK_FLOPS` multiply-adds."""
    if left.nnz == 0 or right.nnz == 0 or mask.nnz == 0:
        return dtype.type(0)
    reach = np.diff(right.indptr)[left.indices]  # per entry of left: the entries of right it meets
    through_mask = np.diff(left.indptr) * np.diff(mask.indptr)  # per row p: entries of leftᵀ @ mask it makes
    if through_mask.sum() < reach.sum():
        left_t = left.T.tocsr()
        return _blocked(left_t, mask, right, np.diff(mask.indptr)[left_t.indices], dtype)
    return _blocked(left, right, mask, reach, dtype)


def _blocked(left: Any, right: Any, mask: Any, reach: np.ndarray, dtype: np.dtype) -> Any:
    """``Σ (left @ right) ∘ mask`` in blocks of rows; ``reach``: the multiply-adds of each entry of left."""
    total = dtype.type(0)
    for low, high in _row_blocks(left, reach):
        block = left[low:high] @ right
        total += block.multiply(mask[low:high]).sum(dtype=dtype)
    return total


def _row_blocks(left: Any, reach: Any):
    """(low, high) row ranges of ``left`` of at most about :data:`BLOCK_FLOPS` multiply-adds each (at least
    one row); ``reach``: the multiply-adds of each entry of left, or the right factor to count them in."""
    if not isinstance(reach, np.ndarray):
        reach = np.diff(reach.indptr)[left.indices]
    flops = np.concatenate(([0], np.cumsum(reach)))[left.indptr]  # cumulative, at each row's start
    n = left.shape[0]
    low = 0
    while low < n:
        high = int(np.searchsorted(flops, flops[low] + BLOCK_FLOPS, side="right")) - 1
        high = min(n, max(high, low + 1))
        yield low, high
        low = high


def _repeated_nodes(parts: _Parts, relations: list[Relation], keys: list[np.ndarray], diagonals: tuple) -> Any:
    """The terms with x = y, y = z or x = z (inclusion–exclusion: the x = y = z terms counted once)."""
    full = []
    for i, r in enumerate(relations):
        full.append(parts.matrix(parts.rank[keys[2 * i]], parts.rank[keys[2 * i + 1]], parts.values(r)))
    a, b, c = full
    ad, bd, cd = diagonals
    xy = _row_sums(b.multiply(c), parts.dtype) @ ad          # a(x,x) b(x,z) c(x,z)
    yz = _row_sums(a.multiply(c).T, parts.dtype) @ bd        # a(x,y) b(y,y) c(x,y)
    xz = _row_sums(a.multiply(b.T), parts.dtype) @ cd        # a(x,y) b(y,x) c(x,x)
    xyz = (ad * bd * cd).sum(dtype=parts.dtype)
    return xy + yz + xz - 2 * xyz


def _row_sums(m: Any, dtype: np.dtype) -> np.ndarray:
    """Each row's sum, in ``dtype``."""
    return np.asarray(m.sum(axis=1, dtype=dtype)).ravel()


def _int64_safe(matrices: list, diagonals: list, nodes: int) -> bool:
    """Whether every int64 partial sum stays below :data:`INT64_SAFE`.

    A product entry sums at most ``nodes`` terms; the masked sums and the
    total at most the number of triples over the relations' entries, which
    the AGM bound ``sqrt(|a|·|b|·|c|)`` caps, and the terms with a repeated
    node (one relation's entries each) three times the most entries.  Each
    term is at most the product of the largest magnitudes.
    """
    def largest(*arrays) -> int:
        return max([1] + [int(np.abs(x).max()) for x in arrays if x.size])

    ma, mb, mc = (largest(matrices[i].data, matrices[i + 1].data, diagonals[i // 2]) for i in (0, 2, 4))
    entries = [max(1, matrices[i].nnz + matrices[i + 1].nnz + int(np.count_nonzero(diagonals[i // 2])))
               for i in (0, 2, 4)]
    triples = int((entries[0] * entries[1] * entries[2]) ** 0.5) + 1
    bound = ma * mb * mc * (6 * max(triples, nodes) + 3 * max(entries))
    return bound < INT64_SAFE
