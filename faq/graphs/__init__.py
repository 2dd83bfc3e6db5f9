"""The jobs users run: triangles, motifs, matrix chains; and the graph inputs they share.

==================  ======================================================================
:mod:`.edges`       a graph's edges from a DataFrame, a GraphFrame, a Factor or a path; cleaning
:mod:`.triangles`   triangle counting (undirected, or feed-forward)
:mod:`.pattern`     motif patterns: text form, parser, inclusion–exclusion (the module is pure Python)
:mod:`.motifs`      listing and counting a pattern's bindings
:mod:`.matrix_chain`  matrix-chain products in any semiring
==================  ======================================================================

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

__all__ = [
    "triangle_count", "TriangleCount", "TRIANGLE_QUERY", "chain_product", "chain_query",
    "motifs", "count_motifs", "list_motifs", "parse_pattern", "Pattern", "MotifCount",
]
