"""Edges and nodes given to a maintained fixpoint, as numpy arrays or a Spark DataFrame (any input form).

A Spark DataFrame or :class:`~faq.factor.Factor` (collected: one job), pandas,
an Arrow table with ``src``/``dst`` and an optional ``weight`` (or ``value``)
column, or tuples ``(src, dst[, weight])``.  *Change rows* (a stream's, or
``apply({"edge": rows})``) add ``diff`` (+1 insert, -1 delete) and an
optional ``seq``: :func:`split_changes` sorts them into insertions and
deletions.

>>> src, dst, weight = edge_table([(1, 2, 5.0), (2, 3)])
>>> src.tolist(), dst.tolist(), weight.tolist()
([1, 2], [2, 3], [5.0, nan])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional

import numpy as np

from faq.errors import FAQValueError
from faq.factor import Factor
from faq.input_kinds import as_arrow
from faq.recursive.seminaive import DST, SRC, VALUE, WEIGHT, check_binary, edge_frame
from faq.spark import is_dataframe

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from faq.semirings import Semiring

__all__ = ["row_count", "node_array", "edge_table", "edge_dataframe", "split_changes", "checked_edges", "CHANGE_COLUMNS",
           "DIFF", "SEQ"]

DIFF, SEQ = "diff", "seq"
#: The columns change rows are read from: the pair, its weight (either name), the operation and its order.
CHANGE_COLUMNS = (SRC, DST, WEIGHT, VALUE, DIFF, SEQ)


def row_count(data: Any) -> int:
    """Rows of an edges-like input (a count job for Spark data; none for rows the driver holds)."""
    if isinstance(data, Factor):
        return data.count()  # none for rows the driver holds
    if is_dataframe(data):
        return data.count()
    if hasattr(data, "num_rows"):
        return int(data.num_rows)
    try:
        return len(data)
    except TypeError:
        return 0


def node_array(nodes: Any) -> np.ndarray:
    """Extra nodes (components) as int64: a DataFrame's first column, or ints."""
    if nodes is None:
        return np.zeros(0, dtype=np.int64)
    if is_dataframe(nodes):
        column = nodes.select(nodes.columns[0]).toArrow().column(0).drop_null()
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray([int(n) for n in nodes], dtype=np.int64)


def _held_columns(edges: Factor) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(src, dst, weight)`` of a binary factor whose rows the driver holds (scalar values), else None."""
    copy = edges.relation.arrays
    if copy is None or len(edges.variables) != 2 or edges.value not in copy or np.ndim(copy[edges.value]) != 1:
        return None
    u, v = edges.variables
    if copy[u].dtype.kind not in "iu" or copy[v].dtype.kind not in "iu":
        return None
    return (np.asarray(copy[u], dtype=np.int64), np.asarray(copy[v], dtype=np.int64),
            np.asarray(copy[edges.value], dtype=np.float64))


def edge_table(edges: Any, valued: bool = False, scan: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, weight)``: int64, int64, float64 (NaN where no weight was given); null ends dropped.

    ``scan``: the factor's :class:`~faq.recursive.edge_files.EdgeScan` when the caller found it already
    (else it is looked for here).

    ``valued``: a :class:`~faq.factor.Factor`'s rows with a null value are no edges and dropped too, as its
    Spark frame for paths drops them (:func:`~faq.recursive.seminaive.edge_frame`); otherwise a null value
    is a weight not given (a maintained fixpoint's default weight; ignored by components).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(edges, Factor) and _held_columns(edges) is not None:  # the driver has the rows: no Spark
        return _held_columns(edges)
    if isinstance(edges, Factor):
        from pyspark.sql import functions as F

        from faq.recursive.edge_files import edge_scan

        check_binary(edges)
        u, v = edges.variables
        scan = scan if scan is not None else edge_scan(edges)
        if scan is not None:  # Parquet files read by pyarrow, not collected through Spark
            table = scan.read()
            table = table.set_column(2, WEIGHT, table.column(2).cast(pa.float64()))
        else:
            table = edges.df.select(F.col(u).cast("bigint").alias(SRC), F.col(v).cast("bigint").alias(DST),
                                    F.col(edges.value).cast("double").alias(WEIGHT)).toArrow()
    elif is_dataframe(edges):  # a DataFrame
        from pyspark.sql import functions as F

        cols = edges.columns
        for c in (SRC, DST):
            if c not in cols:
                from faq.errors import MissingColumnError

                raise MissingColumnError(column=c, available=cols, source="edges")
        wcol = WEIGHT if WEIGHT in cols else (VALUE if VALUE in cols else None)
        weight = F.col(wcol).cast("double") if wcol else F.lit(None).cast("double")
        table = edges.select(F.col(SRC).cast("bigint").alias(SRC), F.col(DST).cast("bigint").alias(DST),
                             weight.alias(WEIGHT)).toArrow()
    elif _is_table(edges):
        table = as_arrow(edges, "edges")
        for c in (SRC, DST):
            if c not in table.column_names:
                from faq.errors import MissingColumnError

                raise MissingColumnError(column=c, available=table.column_names, source="edges")
        wcol = WEIGHT if WEIGHT in table.column_names else (VALUE if VALUE in table.column_names else None)
        weight = table.column(wcol).cast(pa.float64()) if wcol else pa.nulls(table.num_rows, pa.float64())
        table = pa.table({SRC: table.column(SRC).cast(pa.int64()), DST: table.column(DST).cast(pa.int64()),
                          WEIGHT: weight})
    else:
        return _tuples(edges)
    valid = pc.and_(pc.is_valid(table.column(SRC)), pc.is_valid(table.column(DST)))
    if valued and isinstance(edges, Factor):  # a factor's row without a value is no edge (edge_frame)
        valid = pc.and_(valid, pc.is_valid(table.column(WEIGHT)))
    if not pc.all(valid).as_py():
        table = table.filter(valid)
    src = np.asarray(table.column(SRC).to_numpy(zero_copy_only=False), dtype=np.int64)
    dst = np.asarray(table.column(DST).to_numpy(zero_copy_only=False), dtype=np.int64)
    weight = np.asarray(pc.fill_null(table.column(WEIGHT), np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    return src, dst, weight


def _tuples(edges: Iterable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(edges, (list, tuple)) and edges:
        fast = _uniform_tuples(edges)
        if fast is not None:
            return fast
    src, dst, weight = [], [], []
    for s, d, w in _edge_tuples(edges):
        src.append(s)
        dst.append(d)
        weight.append(float("nan") if w is None else w)
    return (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), np.asarray(weight, dtype=np.float64))


def _uniform_tuples(rows: "list | tuple") -> "tuple[np.ndarray, np.ndarray, np.ndarray] | None":
    """A batch of tuples all ``(int, int)`` or all ``(int, int, number)``, column by column (None: another shape).

    A thousand-row batch is read in a fraction of the row-by-row loop's time.
    """
    width = len(rows[0]) if isinstance(rows[0], tuple) else 0
    if width not in (2, 3):
        return None
    try:
        if any(not isinstance(r, tuple) or len(r) != width for r in rows):
            return None
        n = len(rows)
        src = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        dst = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
        if width == 2:
            return src, dst, np.full(n, np.nan)
        return src, dst, np.fromiter((r[2] for r in rows), dtype=np.float64, count=n)
    except (TypeError, ValueError, OverflowError):  # e.g. a None weight or a non-integer id: the general loop
        return None


def _spec(changes: bool) -> dict:
    """What a fixpoint's batch columns hold: integer ends, weights (a null one is the default: NaN is refused),
    and for change rows a whole-number ``diff`` (null: insert) and a ``seq``."""
    from dataclasses import replace

    from faq.incremental.batch_check import COUNT, ID, Expect, edge_spec

    weight = Expect("real", "weights (null: the default weight)", nulls=True)
    if changes:
        return edge_spec(replace(COUNT, nulls=True, what="whole numbers (>0 insert, <0 delete; null: insert)"),
                         **{WEIGHT: weight, VALUE: weight})
    return {SRC: ID, DST: ID, WEIGHT: weight, VALUE: weight}


def checked_edges(edges: Any, *, target: str, changes: bool = False) -> Any:
    """Edges (or, with ``changes``, change rows) checked before a batch touches a fixpoint's state.

    Tuples and pandas become an Arrow table, checked
    (:func:`faq.incremental.batch_check.check_batch`); an Arrow table is
    checked; a Spark DataFrame or Factor by its column types (no job:
    :func:`~faq.incremental.batch_check.check_spark_types`).  Anything else
    (rows of another width) is left to :func:`edge_table`'s own refusal.

    >>> checked_edges([(1, 2), (2, 3, 5.0)], target="a fixpoint").column("weight").to_pylist()
    [None, 5.0]
    >>> checked_edges([(1, 2.5)], target="a fixpoint")
    Traceback (most recent call last):
    ...
    faq.errors.InvalidBatchError: [INVALID_BATCH] a fixpoint, 'edge': column 'dst' holds a number with a fraction ...
    """
    from faq.incremental import batch_check

    spec = _spec(changes)
    if edges is None:
        return None
    if isinstance(edges, Factor) and len(edges.variables) == 2:  # by its column types; the Factor goes on
        df = edges.df.select(*[edges.df[v].alias(c) for v, c in zip(edges.variables, (SRC, DST))],
                             edges.df[edges.value].alias(WEIGHT))
        batch_check.check_spark_types(df, spec, relation="edge", target=target)
        return edges
    if is_dataframe(edges):
        if changes:  # collected by split_changes anyway: checked as the Arrow table
            return batch_check.check_batch(edges.toArrow(), spec, relation="edge", target=target)
        batch_check.check_spark_types(edges, spec, relation="edge", target=target)
        return edges
    if not _is_table(edges):
        if changes:
            return edges  # change rows are tables: split_changes refuses anything else
        rows = list(edges)
        if not all(isinstance(r, (tuple, list)) and len(r) in (2, 3) for r in rows):
            return rows  # edge_table says which row is malformed
        edges = batch_check.arrow_table(rows, [SRC, DST, WEIGHT], relation="edge", target=target)
    else:
        edges = as_arrow(edges, "edges")
    return batch_check.check_batch(edges, spec, relation="edge", target=target)


def split_changes(rows: Any) -> "tuple[pa.Table | None, pa.Table | None]":
    """Change rows as ``(insertions, deletions)`` Arrow tables (None when a kind has no row).

    ``diff`` > 0 inserts the pair (with its ``weight`` or ``value``, the
    default weight when absent or null), < 0 deletes it, 0 does nothing; a
    null or missing ``diff`` inserts.  With a ``seq`` column the last
    operation on a pair (by ``seq``) is the one taken; without it the batch
    is an update file's: deletions first, then insertions.  Rows with a null
    end are left out.

    >>> import pyarrow as pa
    >>> rows = pa.table({"src": [1, 1, 2], "dst": [2, 2, 3], "diff": [1, -1, 1], "seq": [0, 1, 2]})
    >>> inserts, deletes = split_changes(rows)
    >>> inserts.to_pylist(), deletes.to_pylist()
    ([{'src': 2, 'dst': 3}], [{'src': 1, 'dst': 2}])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _arrow(rows)
    for c in (SRC, DST):
        if c not in table.column_names:
            from faq.errors import MissingColumnError

            raise MissingColumnError(column=c, available=table.column_names, source="the edge changes")
    if table.column(SRC).null_count or table.column(DST).null_count:
        table = table.filter(pc.and_(pc.is_valid(table.column(SRC)), pc.is_valid(table.column(DST))))
    if SEQ in table.column_names and table.num_rows:
        table = table.take(pa.array(_last_per_pair(table)))
    diff = pc.fill_null(table.column(DIFF), 1) if DIFF in table.column_names else pa.repeat(1, table.num_rows)
    weight = [c for c in (WEIGHT, VALUE) if c in table.column_names][:1]
    inserts = table.filter(pc.greater(diff, 0)).select([SRC, DST, *weight])
    deletes = table.filter(pc.less(diff, 0)).select([SRC, DST])
    return (inserts if inserts.num_rows else None), (deletes if deletes.num_rows else None)


def _arrow(rows: Any) -> "pa.Table":
    """Rows as an Arrow table: Arrow as it is (another Arrow stream read), pandas converted, a Spark DataFrame
    collected (one job)."""
    if is_dataframe(rows):
        return rows.toArrow()
    table = as_arrow(rows, "the edge changes")
    if table is not None:
        return table
    raise FAQValueError(error_class="EDGE_CHANGES_TYPE", type=type(rows).__name__, argument="changes")


def _last_per_pair(table: "pa.Table") -> np.ndarray:
    """Row positions of the last operation (by ``seq``, then position) on each pair."""
    src = np.asarray(table.column(SRC).to_numpy(zero_copy_only=False), dtype=np.int64)
    dst = np.asarray(table.column(DST).to_numpy(zero_copy_only=False), dtype=np.int64)
    seq = np.asarray(table.column(SEQ).to_numpy(zero_copy_only=False), dtype=np.float64)
    order = np.lexsort((np.arange(len(src)), np.nan_to_num(seq, nan=-np.inf), dst, src))
    s, d = src[order], dst[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    return np.sort(order[last])


def edge_dataframe(edges: Any, semiring: "Semiring", components: bool,
                   spark: "SparkSession") -> tuple["DataFrame", Optional[list[int]]]:
    """Any edges-like input as a Spark DataFrame ``(src, dst, weight)`` in ``semiring`` (weight null
    where a row has none; for ``components`` the weight is one), and, for tuples (a batch given on the
    driver), the nodes whose edges it holds -- sources, and targets too for ``components`` -- else None.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    if isinstance(edges, Factor):
        check_binary(edges)
        if components:
            return edges.df.select(
                F.col(edges.variables[0]).cast("bigint").alias(SRC),
                F.col(edges.variables[1]).cast("bigint").alias(DST),
                spark_columns(semiring).one().alias(WEIGHT),
            ), None
        return edge_frame(edges, semiring), None
    if isinstance(edges, DataFrame):  # classic or Spark Connect (whose DataFrames answer any attribute)
        cols = edges.columns
        for c in (SRC, DST):
            if c not in cols:
                from faq.errors import MissingColumnError

                raise MissingColumnError(column=c, available=cols, source="edge updates")
        wcol = WEIGHT if WEIGHT in cols else (VALUE if VALUE in cols else None)
        weight = F.col(wcol).cast(semiring.value_type) if wcol else F.lit(None).cast(semiring.value_type)
        return edges.select(
            F.col(SRC).cast("bigint").alias(SRC), F.col(DST).cast("bigint").alias(DST), weight.alias(WEIGHT)
        ), None
    if _is_table(edges):  # Arrow or pandas (a stream's micro-batch): read as the driver placement reads it
        src, dst, weight = edge_table(edges)
        edges = zip(src.tolist(), dst.tolist(), [None if w != w else w for w in weight.tolist()])
    rows = list(_edge_tuples(edges))
    ends = {r[0] for r in rows} | ({r[1] for r in rows} if components else set())
    df = spark.createDataFrame(rows, f"{SRC} bigint, {DST} bigint, {WEIGHT} double").select(
        SRC, DST, F.col(WEIGHT).cast(semiring.value_type).alias(WEIGHT))
    return df, sorted(ends)  # the batch is on the driver: its sources can filter the lookup


def _is_table(edges: Any) -> bool:
    """An Arrow table (or another Arrow stream) or a pandas DataFrame (columns ``src``, ``dst``, optional weight):
    :mod:`faq.input_kinds`."""
    from faq.input_kinds import ARROW, PANDAS, input_kind

    return input_kind(edges) in (PANDAS, ARROW)


def _edge_tuples(edges: Iterable) -> Iterator[tuple[int, int, Optional[float]]]:
    """Tuples ``(src, dst[, weight])`` checked and converted: ``(int, int, float or None)``."""
    for row in edges:
        row = tuple(row)
        if len(row) not in (2, 3):
            raise FAQValueError(error_class="MALFORMED_EDGE", row=row, argument="edges")
        yield int(row[0]), int(row[1]), None if len(row) == 2 or row[2] is None else float(row[2])
