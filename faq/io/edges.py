"""SNAP-style edge lists: one edge per line, read on the driver or by Spark.

The format: source id, target id, then optional fields (a weight may be one
of them).  Lines starting with ``#`` or ``%`` and blank lines are skipped;
fields are separated by any run of tabs, spaces and commas; CRLF line ends
and ``.gz`` / ``.bz2`` files are fine.  Node ids are 64-bit integers kept as
they are (they need not be contiguous).  A path may also be a directory or a
glob, as for Spark's text reader.

Parsing runs in Spark (no Python row UDF, no collect of the data).  Malformed
lines are found with one Spark job that stops at the first; only when one
exists is the file scanned in Python, for its line number.  The same regular
expressions serve both scans, so they agree on which line is bad.  The Spark
Columns are built once the session exists (reading the file starts it).

A local file of modest size and regular shape, without a weight column, is
read instead on the driver (:mod:`faq.io.local_edges`: pyarrow's CSV reader,
the same id expression, numpy for self-loops and repeats), several times
faster, and without Spark: a line it finds malformed (a field that is no
64-bit integer, a line of one field) raises the same
:class:`~faq.errors.MalformedInputError` as the Spark path, with the line
number, before any session exists.  Whatever else that path does not accept
falls back to Spark.

Node ids are the full 64-bit range, -9223372036854775808 to
9223372036854775807, written as plain integers: ``1e12`` is no id (write
``1000000000000``), and an id beyond the range is a malformed line naming it.
Under the counting semiring a weight is a count: a negative one is malformed
(read signed weights with ``semiring="integer"``).

A Parquet file -- by its extension or, under any name, by its magic bytes
(:func:`faq.io._common.format_of`, the one place a path's format is
recognised) -- is never parsed as text: its columns ``src`` and ``dst`` (else
its first two) are the ids, checked by :mod:`faq.checks` (a whole float is
the id it names; a fraction, NaN, null or string is refused), and
``weight_column`` counts its columns from 1 as in a text file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence, Union

from faq.errors import InvalidArgumentError, MalformedInputError
from faq.factor import VALUE, Factor
from faq.io._common import (
    PathLike,
    check_choice,
    check_variables,
    default_name,
    driver_session,
    drop_zeros,
    is_local,
    malformed_if_unreadable,
    session,
    spark_columns,
    spark_read,
)
from faq.io.local_edges import (
    BOOL_WORDS,
    COMMENT_PREFIXES,
    FLOAT_RE,
    INT_RE,
    SEPARATOR_RE,
    TRIM_RE,
    edges_dataframe,
    first_malformed_line,
    parquet_edge_table,
    line_problem,
    read_edge_arrays,
    unique_pairs,
    without_self_loops,
)
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from faq.relation import Relation
    import numpy as np
    from pyspark.sql import Column, DataFrame, SparkSession

# Column names, named once.
SRC, DST = "src", "dst"
_LINE = "_line"  # the raw text of a line (after trimming), kept for error messages
_FIELDS = "_fields"

SELF_LOOP_OPTIONS = ("drop", "keep")
DUPLICATE_OPTIONS = ("collapse", "sum", "keep")
#: ``engine=``: ``"auto"`` reads a local file of modest size on the driver (:mod:`faq.io.local_edges`)
#: and falls back to Spark for anything else; ``"spark"`` always parses with Spark.
ENGINES = ("auto", "spark")

# Edge-list syntax (faq.io.local_edges).  The same patterns serve Spark (Java regex) and the Python
# error-path scan, so both agree on which line is bad.
_TRIM_RE = TRIM_RE
_SEPARATOR_RE = SEPARATOR_RE
_COMMENT_PREFIXES = COMMENT_PREFIXES
_INT_RE = INT_RE
_FLOAT_RE = FLOAT_RE
_BOOL_WORDS = BOOL_WORDS


def read_edge_list(
    path: PathLike,
    *,
    spark: "SparkSession | None" = None,
    variables: Sequence[str] = (SRC, DST),
    semiring: Union[str, Semiring] = "counting",
    weight_column: int | None = None,
    self_loops: str = "drop",
    duplicates: str = "collapse",
    undirected: bool = False,
    name: str | None = None,
    engine: str = "auto",
) -> Factor:
    """Read a SNAP-style edge list (see the module's docstring) into a binary factor.

    Parameters
    ----------
    path : str or path-like
    spark : SparkSession, optional
        Defaults to :func:`faq.spark.get_session`.
    variables : pair of str
        Names of the source and target columns (``bigint``).
    semiring : str or Semiring
    weight_column : int, optional
        1-based column holding each edge's value (e.g. 3 for ``src,dst,rating``); without it
        every edge has the semiring's one.  Integers for counting/integer (not negative for
        counting: a count), numbers (``inf`` allowed) for double semirings, ``true``/``false``
        or a number (non-zero is true) for boolean.  Edges whose value is the semiring's zero
        are dropped.
    self_loops : {"drop", "keep"}
        ``"drop"`` (default) removes edges ``u -> u``: triangle and motif counts are defined
        on simple graphs, and SNAP's published counts ignore loops too.
    duplicates : {"collapse", "sum", "keep"}
        ``"collapse"`` (default): one row per (src, dst) with value one, a simple graph; with
        ``weight_column`` the weights of a repeated pair are ⊕-merged, as by ``"sum"``, which
        ⊕-merges the values of equal pairs.  ``"keep"``: rows as read.
    undirected : bool
        Add the reverse of every edge (not of self-loops) before duplicates are handled.
    name : str, optional
        Factor name; default is the file name without extensions.
    engine : {"auto", "spark"}
        ``"auto"`` (default): a local file up to :data:`faq.io.local_edges.MAX_BYTES`, without
        ``weight_column``, of the regular shape (comments and blank lines first, then one
        separator character between fields) is read and cleaned on the driver with pyarrow and
        numpy (:mod:`faq.io.local_edges`; several times faster), and handed to Spark as a
        DataFrame; every other input, and any file that path does not accept (a malformed line
        among them), is parsed by Spark.  ``"spark"``: always Spark.  The rows are the same.

    Returns
    -------
    Factor
        Columns ``(*variables, "value")``.

    Raises
    ------
    InputNotFoundError
    MalformedInputError
        A line has fewer than 2 fields, an id that is no 64-bit integer, or a missing or
        unparsable weight (a negative one under counting); ``path``, ``line_number``
        (1-based) and ``line`` name it.  Or the file is corrupt (a truncated ``.gz``).
        On the driver path it is raised without Spark.
    InvalidArgumentError

    Notes
    -----
    The Spark path runs one Spark job (the scan for malformed lines); the Factor's DataFrame
    itself is lazy.  A ``.gz`` file is read by one task (gzip cannot be split).  The driver
    path reads and cleans the file eagerly; the DataFrame reads the cleaned edges.

    Examples
    --------
    >>> from faq.io import scratch_path
    >>> path = scratch_path("g.txt", "1 2\\n2 1\\n2 2\\n2 3\\n")
    >>> read_edge_list(path).count()
    3
    >>> sorted(tuple(r) for r in read_edge_list(path, undirected=True).df.collect())
    [(1, 2, 1), (2, 1, 1), (2, 3, 1), (3, 2, 1)]
    """
    path = os.fspath(path)
    semiring = get_semiring(semiring)
    variables = check_variables(variables, arity=2)
    _check_options(self_loops, duplicates, weight_column)
    check_choice("engine", engine, ENGINES)
    table = parquet_edge_table(path)  # a Parquet file (by extension or magic bytes) is never parsed as text
    if table is not None:
        edges = _parquet_edges(table, path, variables, semiring, weight_column, spark)
        edges = _shape_graph(edges, variables, semiring, weight_column is not None, self_loops, duplicates, undirected)
        return Factor(df=edges, variables=variables, semiring=semiring, value=VALUE,
                      name=name or default_name(path))
    if engine == "auto" and weight_column is None:
        arrays = read_edge_arrays(path)  # None: not a local file of the regular shape (a bad line raises)
        if arrays is not None:
            from faq.relation import Relation

            edges = _local_edges(arrays, variables, semiring, self_loops, duplicates, undirected, spark)
            return Factor(relation=Relation.of(edges, (*variables, VALUE)), variables=variables, semiring=semiring,
                          value=VALUE, name=name or default_name(path))
    with malformed_if_unreadable(path):  # Spark reads the file in the scan: a truncated .gz fails there
        lines = _data_lines(spark_read(path, session(spark).read.text))  # Spark's text reader handles .gz
        # Columns only now: a classic Column needs a running SparkContext, which the read above starts.
        src, dst, value = _edge_columns(semiring, weight_column)
        _raise_on_first_malformed(lines, src.isNull() | dst.isNull() | value.isNull(), path, weight_column, semiring)
    u, v = variables
    edges = lines.select(src.alias(u), dst.alias(v), value.alias(VALUE))
    edges = _shape_graph(edges, variables, semiring, weight_column is not None, self_loops, duplicates, undirected)
    return Factor(df=edges, variables=variables, semiring=semiring, value=VALUE, name=name or default_name(path))


# --- the steps of read_edge_list -------------------------------------------------------------


def _check_options(self_loops: str, duplicates: str, weight_column: int | None) -> None:
    check_choice("self_loops", self_loops, SELF_LOOP_OPTIONS)
    check_choice("duplicates", duplicates, DUPLICATE_OPTIONS)
    is_column_number = isinstance(weight_column, int) and not isinstance(weight_column, bool)
    if weight_column is not None and (not is_column_number or weight_column < 3):
        raise InvalidArgumentError(
            "weight_column", weight_column, "must be a 1-based column number >= 3 (columns 1 and 2 hold the node ids)"
        )


def _data_lines(text: "DataFrame") -> "DataFrame":
    """The trimmed, non-blank, non-comment lines (``_LINE``) and their fields (``_FIELDS``)."""
    from pyspark.sql import functions as F

    lines = text.select(F.regexp_replace(F.col("value"), _TRIM_RE, "").alias(_LINE))
    is_data = (F.col(_LINE) != F.lit("")) & ~F.col(_LINE).rlike("^[" + "".join(_COMMENT_PREFIXES) + "]")
    return lines.where(is_data).select(_LINE, F.split(F.col(_LINE), _SEPARATOR_RE).alias(_FIELDS))


def _edge_columns(semiring: Semiring, weight_column: int | None) -> tuple["Column", "Column", "Column"]:
    """Source, target and value of a line's fields; each null where its field is missing or malformed."""
    from pyspark.sql import functions as F

    def node(i: int) -> "Column":
        token = F.get(F.col(_FIELDS), i)  # null when the line is shorter (no ANSI error)
        return F.when(token.rlike(f"^{_INT_RE}$"), token.try_cast("bigint"))

    if weight_column is None:
        return node(0), node(1), spark_columns(semiring).one()
    return node(0), node(1), _value_of_token(F.get(F.col(_FIELDS), weight_column - 1), semiring)


def _value_of_token(token: "Column", semiring: Semiring) -> "Column":
    """Parse a weight token as the semiring's value type; null when it is not one."""
    from pyspark.sql import functions as F

    if semiring.value_type == "bigint":
        count = token.try_cast("bigint")
        valid = token.rlike(f"^{_INT_RE}$")
        return F.when(valid & (count >= 0) if _counts(semiring) else valid, count)  # a count is never negative
    number = F.when(token.rlike(f"^(?:{_FLOAT_RE})$"), token.try_cast("double"))
    if semiring.value_type == "double":
        return number
    word = F.lower(token)
    return F.when(word.isin(*_BOOL_WORDS), word == F.lit("true")).otherwise(number != F.lit(0.0))


def _raise_on_first_malformed(
    lines: "DataFrame", bad: "Column", path: str, weight_column: int | None, semiring: Semiring
) -> None:
    """The one validation job: it stops at the first bad line, else scans the input once."""
    first_bad = lines.where(bad).select(_LINE).limit(1).collect()  # at most 1 row
    if first_bad:
        raise _find_malformed_line(path, weight_column, semiring, first_bad[0][0])


def _counts(semiring: Semiring) -> bool:
    """Whether the semiring's values are counts (0, 1, 2, ...): a negative weight is malformed."""
    return semiring.counts


def _shape_graph(
    edges: "DataFrame",
    variables: tuple[str, ...],
    semiring: Semiring,
    weighted: bool,
    self_loops: str,
    duplicates: str,
    undirected: bool,
) -> "DataFrame":
    """Apply the self-loop, direction and duplicate options to ``(u, v, value)`` rows."""
    from pyspark.sql import functions as F

    u, v = variables
    if self_loops == "drop":
        edges = edges.where(F.col(u) != F.col(v))
    if weighted:
        edges = drop_zeros(edges, semiring)
    if undirected:
        reverse = edges.where(F.col(u) != F.col(v)).select(F.col(v).alias(u), F.col(u).alias(v), F.col(VALUE))
        edges = edges.unionByName(reverse)
    if duplicates == "collapse" and not weighted:
        return edges.select(u, v).distinct().select(u, v, spark_columns(semiring).one().alias(VALUE))
    if duplicates in ("collapse", "sum"):
        edges = edges.groupBy(u, v).agg(spark_columns(semiring).sum(F.col(VALUE)).alias(VALUE))
        return drop_zeros(edges, semiring)  # e.g. +3 and -3 in the integer ring
    return edges


def _local_edges(
    arrays: tuple["np.ndarray", "np.ndarray"],
    variables: tuple[str, ...],
    semiring: Semiring,
    self_loops: str,
    duplicates: str,
    undirected: bool,
    spark: "SparkSession | None",
) -> "DataFrame | Relation":
    """:func:`_shape_graph` of unweighted edges read on the driver: the same options, in numpy (the rows held,
    their DataFrame made only if a step needs Spark; with ``duplicates="sum"``, Spark's aggregate)."""
    import numpy as np

    src, dst = arrays
    if self_loops == "drop":
        src, dst = without_self_loops(src, dst)
    if undirected:
        loop = src == dst
        src, dst = np.concatenate([src, dst[~loop]]), np.concatenate([dst, src[~loop]])
    if duplicates == "collapse":
        src, dst = unique_pairs(src, dst)
    from faq.spark import real_session

    u, v = variables
    spark = driver_session(spark)  # deferred: Spark starts only if a step needs the DataFrame

    def dataframe() -> "DataFrame":
        return edges_dataframe(real_session(spark), {u: src, v: dst}).withColumn(VALUE, spark_columns(semiring).one())

    if duplicates == "sum":  # the semiring's ⊕ of its ones: Spark's aggregate, as on the Spark path
        return _shape_graph(dataframe(), variables, semiring, False, "keep", "sum", False)
    # The driver has the rows: statistics and in-process steps read them without a Spark job, and the
    # DataFrame (a Parquet file for Spark to read) is made only if a step on the executors needs it.
    from faq.relation import Relation
    from faq.semirings.numpy_backend import NUMPY_DTYPES

    one = np.full(len(src), semiring.one, dtype=NUMPY_DTYPES[semiring.value_type])
    return Relation.from_arrays({u: src, v: dst, VALUE: one}, {u: "bigint", v: "bigint", VALUE: semiring.value_type},
                                spark, make=dataframe)


def _parquet_edges(table, path: str, variables: tuple[str, ...], semiring: Semiring, weight_column: int | None,
                   spark: "SparkSession | None") -> "DataFrame":
    """A Parquet edge list's ``(u, v, value)`` rows: ids checked (:mod:`faq.checks`); the value is column
    ``weight_column`` (1-based, as in a text file), a number, else the semiring's one."""
    import pyarrow as pa

    from faq.checks import node_ids, number_weights

    u, v = variables
    columns = {u: node_ids(table.column(0), path, table.column_names[0]),
               v: node_ids(table.column(1), path, table.column_names[1])}
    spark = session(spark)
    if weight_column is None:
        return edges_dataframe(spark, columns).withColumn(VALUE, spark_columns(semiring).one())
    if weight_column > table.num_columns:
        raise MalformedInputError(path=path, reason=f"no weight in column {weight_column}: the file has "
                                                    f"{table.num_columns} columns {table.column_names}")
    weights = number_weights(table.column(weight_column - 1), default_name(path), table.column_names[weight_column - 1])
    kind = {"bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}[semiring.value_type]
    try:
        values = pa.array(weights).cast(kind)  # a safe cast: 1.5 is no count
    except pa.ArrowInvalid:
        raise MalformedInputError(path=path, reason=f"the weights in column {weight_column} are not all "
                                  f"{semiring.value_type} values of semiring {semiring.name!r}") from None
    if _counts(semiring) and len(weights) and weights.min() < 0:
        raise MalformedInputError(path=path, reason=f"a weight in column {weight_column} is negative: the counting "
                                  "semiring holds counts; read signed weights with semiring='integer'")
    from faq.handback import spark_frame

    return spark_frame(spark, pa.table({u: columns[u], v: columns[v], VALUE: values}))


# --- the error path: the first bad line and its number ------------------------------------------


def _find_malformed_line(
    path: str, weight_column: int | None, semiring: Semiring, spark_line: str
) -> MalformedInputError:
    """Error path only: scan the file in Python for the first bad line and its 1-based number."""
    counts = _counts(semiring)
    if is_local(path):
        error = first_malformed_line(path, weight_column, semiring.value_type, counts)
        if error is not None:
            return error
    # Remote input (or a disagreement between the scans): report the line Spark found, number unknown (0).
    problem = line_problem(spark_line, weight_column, semiring.value_type, counts) or "cannot parse the line"
    return MalformedInputError(path=path, line_number=0, line=spark_line, reason=problem + " (line number unknown)")
