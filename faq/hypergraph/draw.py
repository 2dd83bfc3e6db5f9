"""Drawing a query: its primal graph, the elimination order and the free variables.

For notebooks. networkx lays out and draws the primal graph
(:func:`~faq.hypergraph.primal_graph`) on matplotlib Axes; each variable is one node,
numbered by its step in the elimination order, and free variables (never eliminated)
are grey squares. matplotlib is optional (the ``notebook`` extra): it is imported when
a drawing is asked for, never when this module is, and a missing matplotlib raises
:class:`~faq.errors.MissingDependencyError` naming the extra.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from faq.hypergraph import draw_hypergraph
>>> ax = draw_hypergraph([{"a", "b"}, {"a", "c"}, {"b", "c"}], order=["a", "b", "c"])
>>> sorted(t.get_text() for t in ax.texts)
['a\\n1', 'b\\n2', 'c\\n3']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from faq.errors import MissingDependencyError, PlanError
from faq.hypergraph.hypergraph import normalize_bag, normalize_edges, primal_graph
from faq.hypergraph.orders import checked_order

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["draw_hypergraph"]

#: Fill colours of eliminated variables (circles), free ones (squares) and the rest (circles).
ELIMINATED_COLOR = "#fdd49e"
FREE_COLOR = "#d9d9d9"
OTHER_COLOR = "#c6dbef"


def _pyplot() -> Any:
    """matplotlib.pyplot, or MissingDependencyError naming the extra to install."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MissingDependencyError(
            package="matplotlib", extra="notebook", feature="drawing a query"
        ) from error
    return plt


def draw_hypergraph(
    edges: Sequence[Iterable[str]],
    order: Optional[Sequence[str]] = None,
    free: Iterable[str] = (),
    names: Optional[Sequence[str]] = None,
    ax: Optional["Axes"] = None,
    title: Optional[str] = None,
) -> "Axes":
    """Draw the primal graph of a query with its elimination order and free variables.

    Parameters
    ----------
    edges : sequence of iterables of str
        The hyperedges (one per factor occurrence).
    order : sequence of str, optional
        The elimination order; each variable in it is labelled with its step (1 first).
    free : iterable of str, optional
        Free variables, drawn as grey squares labelled ``free``.
    names : sequence of str, optional
        A name per hyperedge (e.g. ``edge#1``); each graph edge is then labelled with
        the names of the hyperedges holding both its ends.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure's Axes).
    title : str, optional
        The Axes' title.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on. Its node collections have gid ``"eliminated"``, ``"free"``
        and ``"other"``; together they hold one point per variable.

    Raises
    ------
    PlanError
        If ``order`` repeats a variable or holds a free one, or ``names`` does not
        match ``edges``.
    MissingDependencyError
        If matplotlib is not installed (``pip install 'faq[notebook]'``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> chain = [{"i", "j"}, {"j", "k"}, {"k", "l"}]
    >>> ax = draw_hypergraph(chain, order=["j", "k"], free=["i", "l"], names=["A", "B", "D"])
    >>> sorted(t.get_text() for t in ax.texts)
    ['A', 'B', 'D', 'i\\nfree', 'j\\n1', 'k\\n2', 'l\\nfree']
    >>> {c.get_gid(): len(c.get_offsets()) for c in ax.collections if c.get_gid()}
    {'eliminated': 2, 'free': 2}
    """
    es = normalize_edges(edges)
    free_set = normalize_bag(free, "free variables")
    position = {v: k for k, v in enumerate(checked_order(order if order is not None else []), start=1)}
    clash = free_set & set(position)
    if clash:
        raise PlanError(
            reason=f"free variable(s) {', '.join(map(repr, sorted(clash)))} are in the elimination "
            "order; free variables are never eliminated"
        )
    if names is not None and len(names) != len(es):
        raise PlanError(reason=f"{len(names)} names given for {len(es)} hyperedges")
    plt = _pyplot()
    import networkx as nx  # here, not at the top: planning imports this package and needs no networkx

    graph = primal_graph(es)
    graph.add_nodes_from(sorted((set(position) | free_set) - set(graph)))  # in no hyperedge: isolated
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    pos = nx.spring_layout(graph, seed=0)  # seeded: the same query is drawn the same way

    eliminated = sorted(position, key=position.__getitem__)
    free_nodes = [v for v in graph if v in free_set]
    others = [v for v in graph if v not in free_set and v not in position]
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#636363")
    groups = [
        ("eliminated", eliminated, "o", ELIMINATED_COLOR),
        ("free", free_nodes, "s", FREE_COLOR),
        ("other", others, "o", OTHER_COLOR),
    ]
    for gid, nodes, shape, color in groups:
        if nodes:
            drawn = nx.draw_networkx_nodes(graph, pos, nodelist=nodes, node_shape=shape, node_color=color,
                                           node_size=900, edgecolors="black", ax=ax)
            drawn.set_gid(gid)  # lets tests and callers find each kind of node
    labels = {v: f"{v}\n{position[v]}" for v in eliminated}
    labels.update({v: f"{v}\nfree" for v in free_nodes})
    labels.update({v: v for v in others})
    nx.draw_networkx_labels(graph, pos, labels=labels, font_size=9, ax=ax)
    if names is not None:
        held: dict[tuple[str, str], list[str]] = {}
        for name, e in zip(names, es):
            for u, v in graph.subgraph(e).edges:
                held.setdefault(tuple(sorted((u, v))), []).append(name)
        nx.draw_networkx_edge_labels(
            graph, pos, edge_labels={uv: ", ".join(ns) for uv, ns in held.items()}, font_size=8, ax=ax
        )
    if title is not None:
        ax.set_title(title)
    ax.set_axis_off()
    return ax
