"""faq: Functional Aggregate Queries on Apache Spark.

The front door.  ``import faq`` gives every job and the types and readers
they take, loaded on first use (so ``import faq.semirings`` or
``import faq.hypergraph`` stays free of Spark):

=============================  ===========================================================
answering                      :func:`query`, :func:`plan`, :func:`explain`, :func:`maintain`
learning over joins            :func:`linear_regression`, :func:`covariance`, :func:`moments`
graphs and matrices            :func:`count_triangles`, :func:`motifs`, :func:`track`,
                               :func:`matrix_chain`, :func:`shortest_paths`,
                               :func:`widest_paths`, :func:`reachability`, :func:`paths`,
                               :func:`connected_components`
values                         :class:`Factor`, :class:`Semiring`, :class:`TupleSemiring`, :class:`Plan`,
                               :func:`get_semiring`, :func:`register`, :func:`check_laws`,
                               :func:`parse_query`, :func:`as_factor`, :func:`edge_factor`
input and output               ``read_edge_list``, ``read_matrix_market``, ``read_csv``,
                               ``read_parquet``, ``read_factor``, ``from_pandas``,
                               ``from_numpy``, ``from_scipy``, ``to_pandas``, ``to_scipy``
Spark                          :func:`get_session`, :func:`use_session`,
                               :func:`register_data_source` (``spark.read.format("faq")``,
                               ``df.writeStream.format("faq")``), :func:`keep_changes`
=============================  ===========================================================

Every job takes Spark DataFrames (a graph's edges as ``src``/``dst``, the
convention of GraphFrames), Factors or paths, and returns DataFrames or plain
values (see :mod:`faq.api`).

Examples
--------
>>> import faq
>>> edges = faq.get_session().createDataFrame([(1, 2), (2, 3), (1, 3), (3, 4)], ["src", "dst"])
>>> faq.count_triangles(edges).count
1
>>> with faq.query("count() := e(a,b), e(b,c)", e=edges) as two_paths:   # 1→2→3, 1→3→4, 2→3→4
...     two_paths.scalar()
3
"""

from __future__ import annotations

from faq._lazy import lazy_exports

__version__ = "0.1.0"

# name -> the module that defines it (imported when the name is first used)
_EXPORTS = {
    **dict.fromkeys(
        ("query", "plan", "explain", "maintain", "count_triangles", "track", "matrix_chain",
         "shortest_paths", "widest_paths", "reachability", "paths", "connected_components"),
        "faq.api",
    ),
    "as_factor": "faq.inputs",
    "edge_factor": "faq.graphs.edges",
    "motifs": "faq.graphs.motifs",
    **dict.fromkeys(("Factor", "factor_of"), "faq.factor"),
    **dict.fromkeys(("Semiring", "TupleSemiring", "get_semiring", "register", "semiring_names", "check_laws"),
                    "faq.semirings"),
    **dict.fromkeys(
        ("read_edge_list", "read_matrix_market", "read_csv", "read_parquet", "read_factor", "from_pandas",
         "from_numpy", "from_scipy", "to_pandas", "to_scipy"),
        "faq.io",
    ),
    **dict.fromkeys(("get_session", "use_session"), "faq.spark"),
    "register_data_source": "faq.data_source",
    "keep_changes": "faq.incremental.change_log",
    **dict.fromkeys(("parse_query", "FAQ"), "faq.language"),
    **dict.fromkeys(("covariance", "moments", "linear_regression"), "faq.learning"),
    "asof_join": "faq.asof.oneshot",
    "truss": "faq.graphs.trusses",
    "Plan": "faq.insideout.planner",
    "FAQError": "faq.errors",
    "ProgressEvent": "faq.events",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
