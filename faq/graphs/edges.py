"""A graph's edges: from what users hold (DataFrame, GraphFrame, Factor, path) to the relation jobs join.

Every graph job (triangles, motifs, tracking, paths, components) starts here:

* :func:`edge_factor` turns a DataFrame with ``src`` and ``dst`` columns (the
  convention of GraphFrames), an object with such an ``.edges`` DataFrame (a
  GraphFrame, duck-typed: no dependency on the package), a two-variable
  :class:`~faq.factor.Factor`, or an edge-list path into a ``src``/``dst``
  factor, with an optional weight column as its value;
* :func:`simple_directed` cleans it into the simple digraph (no self-loops,
  no repeated edges), and :func:`degree_oriented` into the simple undirected
  graph with each edge pointing from its endpoint of lower (degree, id): an
  acyclic orientation in which every undirected triangle appears once, and
  hubs have few out-edges;
* :func:`prepared_graph` is either of them for any graph, and for an
  edge-list path the driver can read (:mod:`faq.io.local_edges`) computes it
  in numpy straight from the file: no Spark parse, no shuffle.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.graphs.edges import degree_oriented, simple_directed
>>> raw = factor_of([(1, 2, 1), (2, 1, 1), (1, 2, 1), (3, 3, 1), (2, 3, 1)], ["a", "b"])
>>> sorted(map(tuple, simple_directed(raw).df.collect()))
[(1, 2, 1), (2, 1, 1), (2, 3, 1)]
>>> sorted(map(tuple, degree_oriented(raw).df.collect()))   # node 2 has degree 2: it comes last
[(1, 2, 1), (3, 2, 1)]
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Optional, Union

from faq.errors import ArityMismatchError, FAQTypeError, FAQValueError, MissingColumnError, NullKeyError
from faq.factor import VALUE, Factor
from faq.relation import Relation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SRC, DST = "src", "dst"
EDGE = "edge"
DEFAULT_WEIGHT = "weight"  # the path jobs' default weight column: it may be absent (every edge weighs one)

GraphLike = Union[Factor, "DataFrame", str, os.PathLike, "list[tuple]", Any]


def edge_factor(edges: GraphLike, weight: Optional[str] = None, spark=None) -> Factor:
    """The edges of a graph as a two-variable factor (see the module notes).

    Parameters
    ----------
    edges : DataFrame (Spark or pandas), Arrow table, GraphFrame-like, Factor, path or rows
        Rows are tuples ``(src, dst)`` or ``(src, dst, weight)``.  Any table exporting an
        Arrow stream (a polars DataFrame, ...) is read as an Arrow table (:mod:`faq.input_kinds`).
    weight : str, optional
        A DataFrame's column holding each edge's weight: it becomes the
        factor's value (``real``).  Without it every edge counts one; so
        too when it is ``"weight"`` (the path jobs' default) and there is no
        such column.  Any other name must be a column: ``MISSING_COLUMN``.
        Weights on the driver are numbers: NaN or a null is refused.
    spark : SparkSession, optional
        Reads a path with this session.

    Raises
    ------
    ArityMismatchError
        A factor with other than two variables.
    MissingColumnError
        A DataFrame without ``src`` or ``dst`` (or the ``weight`` named).
    NullKeyError, FAQValueError
        Rows, pandas or Arrow ids that are null, NaN, fractional, strings or
        beyond 64 bits (``NULL_KEY``, ``NODE_ID_VALUES``: :mod:`faq.checks`).
    FAQTypeError
        Anything else.

    Returns
    -------
    Factor
        ``src``, ``dst`` and ``value``, named ``edge``.

    Examples
    --------
    >>> f = edge_factor([(1, 2, 0.5), (2, 3, 1.5)], weight="weight")
    >>> f.variables, f.semiring.name
    (('src', 'dst'), 'real')
    """
    from faq.input_kinds import PATH, ROWS, input_kind

    if isinstance(edges, Factor):
        if len(edges.variables) != 2:
            raise ArityMismatchError(factor=edges.name, expected=2, found=len(edges.variables))
        return edges
    kind = input_kind(edges)
    if kind == PATH:
        from faq.io.local_edges import parquet_edge_table

        table = parquet_edge_table(os.fspath(edges))  # a Parquet file (by extension or magic bytes), else None
        if table is None:
            from faq.io import read_edge_list

            return read_edge_list(edges, spark=spark)
        edges = table
    elif kind == ROWS:
        edges = _tuples_table(edges, weight)
    held = _held_edges(edges, weight, spark)
    if held is not None:
        return held
    df = _edges_dataframe(edges)
    for column in (SRC, DST):
        if column not in df.columns:
            raise MissingColumnError(column=column, available=df.columns, source="the edges DataFrame")
    _check_weight_named(weight, df.columns, "the edges DataFrame")
    df = integral_ids(df)
    if weight is not None and weight in df.columns:
        weighted = df.select(SRC, DST, df[weight].cast("double").alias(VALUE))
        return Factor.from_dataframe(weighted, [SRC, DST], "real", value=VALUE, name=EDGE)
    return Factor.from_dataframe(df.select(SRC, DST), [SRC, DST], "counting", value=None, name=EDGE)


def integral_ids(df: "DataFrame") -> "DataFrame":
    """``df`` with ids of a type other than an integer (double, decimal, string) cast to bigint, after one
    aggregate found none null, NaN, fractional or beyond 64 bits (``NULL_KEY``, ``NODE_ID_VALUES``, as
    :mod:`faq.checks` refuses them on the driver).  Integer ids pass without a job."""
    from pyspark.sql import functions as F

    from faq.insideout.physical import INTEGRAL_TYPES

    types = dict(df.dtypes)
    odd = [c for c in (SRC, DST) if types[c] not in INTEGRAL_TYPES]
    if not odd:
        return df
    ids = {c: F.col(c).try_cast("bigint") if types[c] == "string" else F.col(c) for c in odd}
    number = {c: F.col(c).try_cast("double") for c in odd}
    bad = {c: ids[c].isNull() | F.isnan(number[c]) | (number[c] != F.floor(number[c])) | (number[c] >= 2.0**63)
           | (number[c] < -(2.0**63)) for c in odd}
    counts = df.agg(*[F.count_if(F.col(c).isNull()).alias(f"null_{c}") for c in odd],
                    *[F.count_if(bad[c]).alias(f"bad_{c}") for c in odd]).first()
    for c in odd:
        if counts[f"null_{c}"]:
            raise NullKeyError(factor=EDGE, column=c, count=int(counts[f"null_{c}"]))
        if counts[f"bad_{c}"]:  # the error path: a second job for the first bad value
            from faq.checks import id_problem

            value = df.where(bad[c]).select(c).first()[0]
            raise FAQValueError(error_class="NODE_ID_VALUES", source="the edges DataFrame", column=c,
                                count=int(counts[f"bad_{c}"]), value=value,
                                reason=id_problem(value) or "no 64-bit integer")
    return df.select(*[ids[c].cast("bigint").alias(c) if c in odd else F.col(c) for c in df.columns])


def _tuples_table(rows: Any, weight: Optional[str]) -> Any:
    """Edges given as Python rows ``(src, dst)`` or ``(src, dst, weight)``: a pandas table of them.

    >>> _tuples_table([(1, 2, 0.5), (2, 3, 1.5)], "weight").to_dict("list")
    {'src': [1, 2], 'dst': [2, 3], 'weight': [0.5, 1.5]}
    """
    import pandas as pd

    rows = [tuple(row) for row in rows]
    widths = sorted({len(row) for row in rows})
    if len(widths) > 1 or (widths and widths[0] not in (2, 3)):
        raise FAQTypeError(error_class="INPUT_TYPE", what="edges", expected="rows of (src, dst) or "
                           "(src, dst, weight), all of one width", found=f"rows of {widths} values")
    columns = [SRC, DST, weight or "weight"][: widths[0] if widths else 2]
    return pd.DataFrame(rows, columns=columns)  # ids checked by _held_edges (faq.checks), never truncated


def _check_weight_named(weight: Optional[str], columns: Any, source: str) -> None:
    """A weight column named other than the default ``"weight"`` must exist: unit weights would be a silent guess."""
    if weight is not None and weight != DEFAULT_WEIGHT and weight not in columns:
        raise MissingColumnError(column=weight, available=list(columns), source=source)


def _held_edges(edges: Any, weight: Optional[str], spark: Any) -> Optional[Factor]:
    """Edges given as a pandas DataFrame or an Arrow table (or another Arrow stream's table: polars, ...)
    (``src``, ``dst``, optional weight): held on the driver, where the graph jobs clean and count them without
    Spark (None for anything else).

    >>> import pandas as pd
    >>> f = edge_factor(pd.DataFrame({"src": [1, 2], "dst": [2, 3]}))
    >>> f.variables, f.semiring.name, sorted(map(tuple, f.df.collect()))
    (('src', 'dst'), 'counting', [(1, 2, 1), (2, 3, 1)])
    """
    from faq.checks import node_ids, number_weights
    from faq.input_kinds import held_table, is_pandas

    edges = held_table(edges, "edges")
    if edges is None:
        return None
    from faq.relation import Relation
    from faq.semirings import get_semiring

    pandas = is_pandas(edges)
    names = [str(c) for c in (edges.columns if pandas else edges.column_names)]
    for column in (SRC, DST):
        if column not in names:
            raise MissingColumnError(column=column, available=names, source="the edges table")
    _check_weight_named(weight, names, "the edges table")
    if len(set(names)) != len(names):
        raise FAQTypeError(error_class="INPUT_TYPE", what="the edges table", expected="distinct column names",
                           found=names)

    def array(column: str) -> Any:
        return edges[column] if pandas else edges.column(column)

    columns = {SRC: node_ids(array(SRC), "the edges table", SRC), DST: node_ids(array(DST), "the edges table", DST)}
    if weight is not None and weight in names:
        columns[VALUE], semiring = number_weights(array(weight), EDGE, weight), "real"
    else:
        import numpy as np

        columns[VALUE], semiring = np.ones(len(columns[SRC]), dtype=np.int64), "counting"
    rows = Relation.from_arrays(columns, session=spark)  # the session: the running one when the rows go to Spark
    return Factor(relation=rows, variables=(SRC, DST), semiring=get_semiring(semiring), value=VALUE, name=EDGE)


def _edges_dataframe(edges: Any) -> "DataFrame":
    from faq.spark import is_dataframe

    if is_dataframe(edges):
        return edges
    # A GraphFrame, duck-typed.  Checked after the DataFrame test: a Spark Connect DataFrame
    # answers any attribute name (``.edges`` too) with a Column.
    inner = getattr(edges, "edges", None)
    if is_dataframe(inner):
        return inner
    raise FAQTypeError(
        error_class="INPUT_TYPE", what="edges",
        expected="a Spark or pandas DataFrame or an Arrow table (or a table exporting an Arrow stream, e.g. "
        "polars) with src and dst columns, an object with such "
        ".edges (a GraphFrame), a two-variable Factor, an edge-list path or rows of (src, dst[, weight])",
        found=type(edges).__name__,
    )


def simple_directed(edges: Factor) -> Factor:
    """The simple digraph of ``edges``: no self-loops, one row per (src, dst), value 1 (held on the driver,
    with no Spark job, when ``edges`` is)."""
    src, dst = edges.variables
    copy = edges.relation.arrays
    if copy is not None and copy[src].dtype.kind in "iu" and copy[dst].dtype.kind in "iu":
        import numpy as np

        from faq.io.local_edges import unique_pairs, without_self_loops
        from faq.relation import Relation
        from faq.semirings import get_semiring

        u, v = unique_pairs(*without_self_loops(copy[src].astype(np.int64), copy[dst].astype(np.int64)))
        rows = Relation.from_arrays({SRC: u, DST: v, VALUE: np.ones(len(u), dtype=np.int64)},
                                    {SRC: "bigint", DST: "bigint", VALUE: "bigint"}, edges.relation.session)
        return Factor(relation=rows, variables=(SRC, DST), semiring=get_semiring("counting"), value=VALUE, name=EDGE)
    from pyspark.sql import functions as F

    df = (
        edges.df.where(F.col(src) != F.col(dst))
        .select(F.col(src).alias(SRC), F.col(dst).alias(DST))
        .distinct()
        .withColumn(VALUE, F.lit(1).cast("bigint"))
    )
    return Factor.from_dataframe(df, [SRC, DST], "counting", name=EDGE)


def prepared_graph(edges: GraphLike, directed: bool, spark=None) -> Factor:
    """``simple_directed`` (``directed``) or ``degree_oriented`` of a graph, as the triangle and motif jobs use it.

    For an edge-list path that :func:`faq.io.local_edges.read_edge_arrays`
    accepts (local, of modest size and regular shape), and for edges given as
    a DataFrame (or factor) whose ids fit the driver's fetch budget
    (:func:`fetched_edge_arrays`: one Arrow collect), the graph is cleaned and
    oriented in numpy on the driver and handed to Spark only if a job needs
    it; for anything else it is :func:`edge_factor` then the Spark function.
    The edges are the same either way.

    Parameters
    ----------
    edges : DataFrame, GraphFrame-like, Factor or path
    directed : bool
        True: the simple digraph; False: the degree-oriented simple undirected graph.
    spark : SparkSession, optional

    Returns
    -------
    Factor
        ``src``, ``dst`` and ``value`` (1), counting semiring, named ``edge``.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> path = scratch_path("g.txt", "# a b\\n1 2\\n2 1\\n2 2\\n2 3\\n")
    >>> sorted(map(tuple, prepared_graph(path, directed=False).df.collect()))
    [(1, 2, 1), (3, 2, 1)]
    >>> sorted(map(tuple, prepared_graph(path, directed=True).df.collect()))
    [(1, 2, 1), (2, 1, 1), (2, 3, 1)]
    """
    from faq.input_kinds import PATH, SPARK, input_kind

    kind = input_kind(edges)
    if kind == PATH:
        from faq.io.local_edges import read_edge_arrays

        arrays = read_edge_arrays(os.fspath(edges))
        if arrays is not None:
            return _prepared_on_driver(arrays, directed, spark)
    elif kind == SPARK and SRC in edges.columns and DST in edges.columns:
        # The user's own frame fetched as it is (a bare Parquet scan is read by pyarrow): no factor
        # built around it in Spark first, which costs calls to Spark and no rows.
        spark = edges.sparkSession
        arrays = _fetched_ids(Relation.of(edges, [SRC, DST]), EDGE, spark, dict(edges.dtypes), for_index=True)
        if arrays is not None:
            return _prepared_on_driver(arrays, directed, spark)
    raw = edge_factor(edges, spark=spark)
    arrays = fetched_edge_arrays(raw, for_index=True)
    if arrays is not None:
        return _prepared_on_driver(arrays, directed, raw.session)
    return simple_directed(raw) if directed else degree_oriented(raw)


def fetched_edge_arrays(raw: Factor, for_index: bool = False) -> Optional[tuple[Any, Any]]:
    """A graph's (src, dst) ids on the driver -- held already, or one Arrow collect -- or None.

    Fetched when the ids are integers, the session lets steps run in-process
    (``spark.faq.placement`` is not ``executors``) and the copy fits the
    driver's fetch budget (``spark.faq.fetchMemory``,
    :func:`faq.settings.fetch_memory`): moving 16 bytes an edge once
    costs far less than the Spark jobs of a Spark-side clean-up and join.
    A null id is refused (``NULL_KEY``), as for edges given on the driver.
    ``for_index``: the executors asked for, the ids still come within the
    broadcast index's budgets (:func:`faq.placement_policy.index_fetch_limit`),
    since the driver builds that index from every edge anyway.

    >>> from faq.factor import factor_of
    >>> src, dst = fetched_edge_arrays(edge_factor(factor_of([(1, 2, 1), (2, 3, 1)], ["a", "b"])))
    >>> src.tolist(), dst.tolist()
    ([1, 2], [2, 3])
    """
    import numpy as np

    s, d = raw.variables
    edges = Relation.of(raw.relation, [s, d])
    if edges.held:
        copy = edges.arrays
        return np.asarray(copy[s], dtype=np.int64), np.asarray(copy[d], dtype=np.int64)
    return _fetched_ids(edges, raw.name, raw.session, dict(raw.dtypes()), for_index)


def _fetched_ids(edges: Relation, name: str, spark: Any, types: dict[str, str],
                 for_index: bool = False) -> Optional[tuple[Any, Any]]:
    """A distributed relation's two id columns fetched (one Arrow collect, or none for a bare Parquet scan),
    or None: ids not integers, the executors asked for, or more than the fetch budget."""
    from faq.checks import node_ids
    from faq.insideout.physical import INTEGRAL_TYPES
    from faq.placement_policy import fetch_limit, index_fetch_limit

    if any(types.get(c) not in INTEGRAL_TYPES for c in edges.columns):
        return None
    limit = fetch_limit(spark)
    if limit is None and for_index:
        # The executors were asked for, and their broadcast index is built on the driver from every
        # edge (faq.joins.broadcast.index_on_driver): the ids come as they are and are cleaned in
        # numpy where they arrive.  Cleaned in Spark they were shuffled (distinct; undirected also a
        # degree count and two joins) and cached first: on R-MAT 20 (16M edges,
        # local-cluster[2,1,2048]) 31 s of Spark jobs before the same collect, where numpy cleans them
        # in about 3 s (bench/results/executor_breakdown_rmat20.json).
        limit = index_fetch_limit(spark)
    if limit is None:  # the executors were asked for (and build the index themselves)
        return None
    edges = edges.fetched(limit)  # too large: left to Spark
    if not edges.held:
        return None
    return tuple(node_ids(edges.data.column(c), name, c) for c in edges.columns)


def _prepared_on_driver(arrays: tuple[Any, Any], directed: bool, spark: Any) -> Factor:
    """The prepared graph of edge arrays, cleaned and oriented in numpy, held on the driver."""
    import numpy as np

    from faq.io.local_edges import degree_orient, unique_pairs, without_self_loops
    from faq.relation import Relation
    from faq.semirings import get_semiring
    from faq.spark import session_for_driver_data

    src, dst = unique_pairs(*without_self_loops(*arrays)) if directed else degree_orient(*arrays)
    # The driver keeps the arrays: row counts, the broadcast index and in-process steps need no
    # Spark job, and Spark gets the edges (a Parquet file, edges_dataframe) only if a job reads them.
    ones = np.broadcast_to(np.int64(1), src.shape)
    spark = spark if spark is not None else session_for_driver_data()  # Spark starts only if a job needs it
    rows = Relation.from_arrays({SRC: src, DST: dst, VALUE: ones}, {SRC: "bigint", DST: "bigint", VALUE: "bigint"},
                                spark, make=functools.partial(_edges_with_ones, spark, src, dst))
    return Factor(relation=rows, variables=(SRC, DST), semiring=get_semiring("counting"), value=VALUE, name=EDGE)


def _edges_with_ones(spark: Any, src: Any, dst: Any) -> "DataFrame":
    """The edges as Spark reads them best (:func:`faq.io.local_edges.edges_dataframe`), value 1."""
    from pyspark.sql import functions as F

    from faq.io.local_edges import edges_dataframe

    return edges_dataframe(spark, {SRC: src, DST: dst}).withColumn(VALUE, F.lit(1).cast("bigint"))


def degree_oriented(edges: Factor) -> Factor:
    """The simple undirected graph of ``edges``, each edge pointing from lower to higher (degree, id)."""
    from pyspark.sql import functions as F

    src, dst = edges.variables
    pairs = (
        edges.df.where(F.col(src) != F.col(dst))
        .select(F.least(src, dst).alias("u"), F.greatest(src, dst).alias("v"))
        .distinct()
    )
    degree = (
        pairs.select(F.col("u").alias("n"))
        .unionAll(pairs.select(F.col("v").alias("n")))
        .groupBy("n")
        .agg(F.count(F.lit(1)).alias("d"))
    )
    du = degree.select(F.col("n").alias("u"), F.col("d").alias("du"))
    dv = degree.select(F.col("n").alias("v"), F.col("d").alias("dv"))
    with_degrees = pairs.join(du, "u").join(dv, "v")
    u_first = (F.col("du") < F.col("dv")) | ((F.col("du") == F.col("dv")) & (F.col("u") < F.col("v")))
    df = with_degrees.select(
        F.when(u_first, F.col("u")).otherwise(F.col("v")).alias(SRC),
        F.when(u_first, F.col("v")).otherwise(F.col("u")).alias(DST),
        F.lit(1).cast("bigint").alias(VALUE),
    )
    return Factor.from_dataframe(df, [SRC, DST], "counting", name=EDGE)
