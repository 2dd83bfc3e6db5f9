"""The jobs users run: triangle counting and matrix chains.

Examples
--------
>>> from faq.graphs import TRIANGLE_QUERY
>>> TRIANGLE_QUERY
'count() := edge(a,b), edge(a,c), edge(b,c)'
"""

from faq.graphs.matrix_chain import chain_query, matrix_chain
from faq.graphs.triangles import TRIANGLE_QUERY, TriangleCount, count_triangles

__all__ = ["count_triangles", "TriangleCount", "TRIANGLE_QUERY", "matrix_chain", "chain_query"]
from faq.graphs.motifs import MotifCount, Pattern, count_motifs, list_motifs, motifs, parse_pattern

__all__ += ["motifs", "count_motifs", "list_motifs", "parse_pattern", "Pattern", "MotifCount"]
