"""The query hypergraph: normalising hyperedges, its variables and primal graph.

A hypergraph is given as a sequence of hyperedges, one per factor occurrence; each
hyperedge is an iterable of variable names (strings).  The same set may appear twice
(a relation used twice), so edges keep their position and are never deduplicated here.

The primal graph is a :class:`networkx.Graph`, so everything networkx offers on graphs
(components, cliques, treewidth heuristics, drawing) applies to a query as it is.
Planning reads the same graph as a dict of sets (:func:`primal_adjacency`), so
networkx (0.2-0.4 s to import) is loaded only when :func:`primal_graph` is called,
not by ``faq explain`` or a query's plan.

Pure Python: nothing in :mod:`faq.hypergraph` imports Spark.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Iterable, Sequence

from faq.errors import PlanError

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["normalize_edges", "normalize_bag", "hypergraph_variables", "primal_graph", "primal_adjacency"]


def _as_vertex_set(items: Iterable[str], what: str) -> frozenset[str]:
    # A bare string is iterable too; treating "ab" as {"a", "b"} would silently plan
    # the wrong query, so reject it outright.
    if isinstance(items, (str, bytes)):
        raise PlanError(
            reason=f"{what} must be a collection of variable names, not the string {items!r}"
        )
    try:
        out = frozenset(items)
    except TypeError as exc:
        raise PlanError(reason=f"{what} is not a collection of variable names: {items!r}") from exc
    for name in out:
        if not isinstance(name, str):
            raise PlanError(reason=f"{what} holds {name!r}; variable names must be strings")
    return out


def normalize_edges(edges: Sequence[Iterable[str]]) -> tuple[frozenset[str], ...]:
    """Turn hyperedges into a tuple of frozensets, checking they hold variable names.

    Parameters
    ----------
    edges : sequence of iterables of str
        One hyperedge per factor occurrence; repeated edges are kept.

    Returns
    -------
    tuple of frozenset of str
        The hyperedges, in input order.

    Raises
    ------
    PlanError
        If an edge is a bare string or holds something other than strings.

    Examples
    --------
    >>> [sorted(e) for e in normalize_edges([("a", "b"), ["b", "a"], {"c"}])]
    [['a', 'b'], ['a', 'b'], ['c']]
    """
    if isinstance(edges, (str, bytes)):
        raise PlanError(reason=f"edges must be a sequence of hyperedges, not the string {edges!r}")
    return tuple(_as_vertex_set(e, f"hyperedge {i}") for i, e in enumerate(edges))


def normalize_bag(bag: Iterable[str], what: str = "bag") -> frozenset[str]:
    """Turn a bag (a set of variable names) into a frozenset, checking its names.

    Parameters
    ----------
    bag : iterable of str
        Variable names.
    what : str, optional
        How to name the bag in error messages.

    Returns
    -------
    frozenset of str

    Examples
    --------
    >>> sorted(normalize_bag(["b", "a", "b"]))
    ['a', 'b']
    """
    return _as_vertex_set(bag, what)


def hypergraph_variables(edges: Sequence[Iterable[str]]) -> list[str]:
    """All variables mentioned by the hyperedges, sorted by name.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges, checked as :func:`normalize_edges` checks them (PlanError).

    Returns
    -------
    list of str

    Examples
    --------
    >>> hypergraph_variables([{"b", "a"}, {"c", "b"}])
    ['a', 'b', 'c']
    """
    out: set[str] = set()
    for e in normalize_edges(edges):
        out |= e
    return sorted(out)


def primal_graph(edges: Sequence[Iterable[str]]) -> "nx.Graph":
    """The primal (Gaifman) graph: variables adjacent when they share a hyperedge.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges, as :func:`normalize_edges` takes them; each becomes a clique.

    Returns
    -------
    networkx.Graph
        One node per variable (a variable alone in its edge is an isolated node), an
        edge between every two variables of a hyperedge, no self-loops. Nodes are
        inserted in name order, so iterating the graph is deterministic.

    Examples
    --------
    >>> g = primal_graph([{"a", "b"}, {"b", "c"}, {"d"}])
    >>> list(g), sorted(g["b"]), g.number_of_edges()
    (['a', 'b', 'c', 'd'], ['a', 'c'], 2)
    """
    import networkx as nx

    es = normalize_edges(edges)
    graph = nx.Graph()
    graph.add_nodes_from(sorted(set().union(*es)))
    for e in es:
        graph.add_edges_from(itertools.combinations(sorted(e), 2))
    return graph


def primal_adjacency(edges: Sequence[Iterable[str]]) -> dict[str, set[str]]:
    """The primal graph as a dict of neighbour sets, without networkx (what the planner reads).

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges, as :func:`normalize_edges` takes them.

    Returns
    -------
    dict of str to set of str
        Every variable (in name order, as :func:`primal_graph` inserts them)
        to the variables it shares a hyperedge with; no variable is its own
        neighbour.

    Examples
    --------
    >>> {v: sorted(n) for v, n in primal_adjacency([{"a", "b"}, {"b", "c"}, {"d"}]).items()}
    {'a': ['b'], 'b': ['a', 'c'], 'c': ['b'], 'd': []}
    >>> edges = [{"a", "b", "c"}, {"c", "d"}]
    >>> primal_adjacency(edges) == {v: set(n) for v, n in primal_graph(edges).adjacency()}
    True
    """
    es = normalize_edges(edges)
    graph: dict[str, set[str]] = {v: set() for v in sorted(set().union(*es))}
    for e in es:
        for v in e:
            graph[v] |= e - {v}
    return graph
