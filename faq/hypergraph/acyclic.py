"""α-acyclicity (GYO reduction) and attribute orders for multiway joins.

The planner uses :func:`is_acyclic` to choose, per bag, between binary joins
(optimal on acyclic bags, by Yannakakis) and the worst-case optimal generic
join (cyclic bags, e.g. a triangle), and :func:`attribute_order` to give the
generic join an order in which every attribute after the first is
constrained by a relation that also holds an earlier one.

Examples
--------
>>> from faq.hypergraph.acyclic import is_acyclic, attribute_order
>>> is_acyclic([{"a", "b"}, {"b", "c"}, {"c", "d"}])
True
>>> is_acyclic([{"a", "b"}, {"a", "c"}, {"b", "c"}])
False
>>> attribute_order([{"a", "b"}, {"a", "c"}, {"b", "c"}], sizes=[10, 10, 10])
['a', 'b', 'c']
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence


def is_acyclic(edges: Sequence[Iterable[str]]) -> bool:
    """True when the hypergraph is α-acyclic (the GYO reduction empties it).

    GYO repeatedly removes a vertex that lies in one edge only, and an edge
    contained in another edge; the hypergraph is α-acyclic exactly when this
    ends with at most one (empty) edge.
    """
    current = [set(e) for e in edges if e]
    changed = True
    while changed:
        changed = False
        # Vertices in exactly one edge ("ears") go.
        count: dict[str, int] = {}
        for e in current:
            for v in e:
                count[v] = count.get(v, 0) + 1
        for e in current:
            lonely = {v for v in e if count[v] == 1}
            if lonely:
                e -= lonely
                changed = True
        # Edges inside another edge (or empty) go.
        kept: list[set[str]] = []
        for i, e in enumerate(current):
            inside = not e or any(
                (e < f) or (e == f and j < i) for j, f in enumerate(current) if j != i
            )
            if inside:
                changed = True
            else:
                kept.append(e)
        current = kept
    return len(current) == 0


def attribute_order(
    edges: Sequence[Iterable[str]],
    sizes: Optional[Sequence[int]] = None,
    first: Optional[Sequence[str]] = None,
) -> list[str]:
    """An order of the edges' vertices for attribute-at-a-time joins.

    Starts with ``first`` (if given) or the vertex in most edges (ties: the
    one in the smallest edge, then name), then repeatedly takes the vertex
    sharing most edges with the vertices already ordered (so each new
    attribute is constrained by earlier ones), ties by smallest relation then
    name.
    """
    sets = [frozenset(e) for e in edges]
    size = list(sizes) if sizes is not None else [1] * len(sets)
    vertices = sorted(set().union(*sets)) if sets else []
    order: list[str] = list(first or [])
    remaining = [v for v in vertices if v not in order]

    def smallest(v: str) -> int:
        return min((size[i] for i, e in enumerate(sets) if v in e), default=0)

    if not order and remaining:
        best = min(remaining, key=lambda v: (-sum(v in e for e in sets), smallest(v), v))
        order.append(best)
        remaining.remove(best)
    while remaining:
        chosen = set(order)
        best = min(
            remaining,
            key=lambda v: (-sum(1 for e in sets if v in e and e & chosen), smallest(v), v),
        )
        order.append(best)
        remaining.remove(best)
    return order
