"""The jobs users run on graphs: triangles, motifs, trusses, matrix chains; and the graph inputs they share.

========================  ================================================================
:mod:`.edges`             a graph's edges from a DataFrame, a GraphFrame, a Factor or a path; cleaning
:mod:`.triangles`         triangle counting (undirected, or feed-forward)
:mod:`.pattern`           motif patterns: text form, parser, inclusion–exclusion (pure Python)
:mod:`.motifs`            listing and counting a pattern's bindings
:mod:`.track`             a motif count kept current as edges change (:class:`MotifTracker`)
:mod:`.truss`             the k-truss decomposition (supports by triangles, then peeling)
:mod:`.truss_spark`       the same on the executors, in Spark (triangles by joins, a local h-index iteration)
:mod:`.truss_index`       a truss's adjacency and edge ids, for peeling and repair
:mod:`.truss_repair`      the compiled repair of trussness after inserted and deleted edges
:mod:`.maintained_truss`  a truss decomposition kept current (:class:`MaintainedTruss`)
:mod:`.trusses`           ``faq.truss``: the one entry point over both
:mod:`.matrix_chain`      matrix-chain products in any semiring
========================  ================================================================

Examples
--------
>>> from faq.graphs import TRIANGLE_QUERY
>>> TRIANGLE_QUERY
'count() := edge(a,b), edge(a,c), edge(b,c)'
"""

# The submodules are imported before the functions of the same name (matrix_chain, motifs),
# so the package's attributes are the functions.
from faq.graphs.matrix_chain import chain_query, chain_product
from faq.graphs.motifs import MotifCount, count_motifs, list_motifs, motifs
from faq.graphs.pattern import Pattern, parse_pattern
from faq.graphs.triangles import TRIANGLE_QUERY, TriangleCount, triangle_count

_MAINTAINED = {"MotifTracker": "faq.graphs.track", "MotifChange": "faq.graphs.track",
               "MaintainedTruss": "faq.graphs.maintained_truss"}


def __getattr__(name: str):  # noqa: ANN202 - PEP 562: the maintained objects load the incremental engine on use
    if name not in _MAINTAINED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_MAINTAINED[name]), name)


__all__ = [
    "triangle_count", "TriangleCount", "TRIANGLE_QUERY", "chain_product", "chain_query",
    "motifs", "count_motifs", "list_motifs", "parse_pattern", "Pattern", "MotifCount",
    "MotifTracker", "MotifChange", "MaintainedTruss",
]
