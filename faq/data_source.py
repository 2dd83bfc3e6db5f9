"""The ``faq`` Spark data source: ``spark.read.format("faq").load(STATE)`` reads a maintained answer.

A durable state (``state=`` of :func:`faq.maintain`, :func:`faq.track`, a
maintained truss or as-of join, :func:`faq.linear_regression` maintained, a
maintained fixpoint) is a directory only faq can read.  :func:`register_data_source` registers
:class:`FaqDataSource` (Spark's Python Data Source API,
``spark.dataSource.register``) with a session, classic or Spark Connect;
then::

    spark.read.format("faq").load(STATE)                          # the answer now
    spark.read.format("faq").option("version", 3).load(STATE)     # ... and it must be version 3
    spark.read.format("faq").option("changes", "true").load(STATE)       # its kept changes (faq.data_stream)
    spark.readStream.format("faq").option("changes", "true").load(STATE) # ... as versions commit
    df.writeStream.format("faq").option("state", STATE).option("query", TEXT) ...  # the sink (faq.data_sink)

How it reads
------------
Nothing here reads the state's relations: the object is reopened with its own
``open`` classmethod (which takes no writer's lock: a reader never blocks
the writer, :mod:`faq.incremental.writer_lock`), its answer taken as Arrow
by its own code, and it is closed again.  One exception: a tracked motif's
answer at its committed version is its count, which its manifest holds, so
it is read from the manifest alone (reopening a tracker loads and indexes
every edge: seconds for millions).  The manifest's ``kind`` says which
object it is (:data:`KINDS`):

==========  ===============================================  ====================================
kind        reopened with                                    rows
==========  ===============================================  ====================================
query       :meth:`~faq.incremental.MaintainedQuery.open`    the free variables and ``value``
            (a maintained model is one: its aggregate)
motif       :meth:`~faq.graphs.MotifTracker.open`       one row: ``count`` (and ``triangles``
                                                             for the sink's ``job="triangles"``)
truss       :meth:`~faq.graphs.MaintainedTruss.open`         ``src``, ``dst``, ``trussness``
asof        :func:`faq.asof.open_join` (view or locked)      the joined rows
fixpoint    :meth:`~faq.recursive.MaintainedFixpoint.open`   ``node``, ``value``
            (kept on the driver; one kept on the executors
            is refused: Spark reads it back itself)
==========  ===============================================  ====================================

The schema is derived on the driver (``schema()``: the state is reopened
there once); the rows are read again where Spark runs the partition (a
Python worker), as one partition of Arrow record batches: a maintained
answer lives on one machine's memory and is read there whole, so it is
small enough for one task.  The path must be one the driver and the
workers both reach (a local path with ``local[*]`` or a Spark Connect
server on the same host, or a shared mount).

Versions
--------
A state keeps its committed version only: each commit replaces the one
before (:mod:`faq.incremental.store`).  Without ``version`` the read
returns the version committed when the partition is read (a writer may
commit between ``schema()`` and the read; the schema does not change with
versions).  ``option("version", V)`` asks for version ``V``: it is read
when the state is at ``V``, and any other version is a
:class:`~faq.errors.StateDirectoryError` saying which version the state
holds.  The changes between versions are kept only by a state with a
change log (:func:`faq.keep_changes`, :mod:`faq.incremental.change_log`), read with
``option("changes", "true")`` (:mod:`faq.data_stream`); otherwise they are
what ``apply`` returns and what ``stream(..., sink=)`` and
``before_commit`` hand on as each batch commits.

Examples
--------
>>> sorted(KINDS)
['asof', 'fixpoint', 'motif', 'query', 'truss']
>>> read_options({"path": "/tmp/s", "version": "2"})
('/tmp/s', 2)
>>> read_options({"path": "/tmp/s", "changes": "true"})
Traceback (most recent call last):
...
faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] changes='true': ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from faq.data_stream import ChangeReader, ChangeStreamReader, change_options, change_schema, wants_changes
from faq.errors import InvalidArgumentError, StateDirectoryError
from faq.reopened import KINDS, open_state

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from faq.data_sink import FaqStreamWriter

__all__ = ["FaqDataSource", "KINDS", "NAME", "answer_table", "open_state", "read_options", "register_data_source"]

#: The format name: ``spark.read.format(NAME)``.
NAME = "faq"
#: The kinds of state the data source reads (the manifest's ``kind``).
#: The options a read takes (``path`` is what ``load(path)`` sets).
OPTIONS = ("path", "version", "changes")


def register_data_source(spark: "SparkSession") -> None:
    """Register the ``faq`` data source with ``spark`` (classic or Spark Connect); idempotent.

    Parameters
    ----------
    spark : SparkSession
        The session to read states with (``spark.dataSource.register``).

    Examples
    --------
    >>> import faq, tempfile
    >>> spark = faq.get_session()
    >>> triangles = faq.maintain("count() := edge(a,b), edge(b,c), edge(a,c)",
    ...                          edge=[(1, 2), (2, 3), (1, 3)], state=tempfile.mkdtemp() + "/t")
    >>> faq.register_data_source(spark)
    >>> spark.read.format("faq").load(triangles.path).collect()
    [Row(value=1)]
    >>> triangles.close()
    """
    spark.dataSource.register(FaqDataSource)


def read_options(options: Mapping[str, Any]) -> tuple[str, Optional[int]]:
    """``(path, version or None)`` of a read's options, checked.

    Raises
    ------
    InvalidArgumentError
        No path, an option the source does not take, a version that is not
        a non-negative integer, or ``changes`` (a state keeps no changes:
        the module notes).
    """
    options = {str(k).lower(): v for k, v in options.items()}
    for key, value in options.items():
        if key not in OPTIONS:
            raise InvalidArgumentError(key, value, f"the faq data source takes the options {', '.join(OPTIONS)}")
    if wants_changes(options):
        raise InvalidArgumentError("changes", options["changes"],
                                   "a read of changes takes faq.data_stream.change_options (startingVersion, "
                                   "endingVersion); these are the options of a read of the answer")
    path = options.get("path")
    if not path:
        raise InvalidArgumentError("path", path, 'give the state directory: spark.read.format("faq").load(STATE)')
    version = options.get("version")
    if version is None:
        return str(path), None
    try:
        number = int(str(version).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidArgumentError("version", version, "must be a version number (0 or more)")
    return str(path), number


def answer_table(path: str, version: Optional[int] = None) -> "pa.Table":
    """The answer of the state in ``path`` as Arrow, through the object's own ``open`` -- a tracked motif's at
    its committed version from its manifest (module notes).

    Parameters
    ----------
    path : str
        A state directory.
    version : int, optional
        The version the state must be at.

    Raises
    ------
    StateDirectoryError
        No faq state in ``path``, one of a kind the source does not read, or
        one at another version than ``version``.

    Examples
    --------
    >>> import faq, tempfile
    >>> t = faq.maintain("count() := edge(a,b), edge(b,c), edge(a,c)",
    ...                  edge=[(1, 2), (2, 3), (1, 3)], state=tempfile.mkdtemp() + "/t")
    >>> answer_table(t.path).to_pydict()
    {'value': [1]}
    >>> answer_table(t.path, version=4)
    Traceback (most recent call last):
    ...
    faq.errors.StateDirectoryError: [STATE_DIRECTORY] ...: has no version 4 yet: it is at version 0
    >>> t.close()
    """
    counted = _counted_answer(path, version)
    if counted is not None:
        return counted
    target = open_state(path)
    try:
        _check_version(target, version)
        if version is not None and version < target.version:  # kept by the change log: undone from now
            from faq.data_stream import answer_at

            return answer_at(target, _table_of(target), version)
        return _table_of(target)
    finally:
        target.close()


def _check_version(target: Any, version: Optional[int]) -> None:
    if version is None or version == target.version:
        return
    if version > target.version:
        raise StateDirectoryError(target.path, f"has no version {version} yet: it is at version {target.version}")
    from faq.data_stream import undoable

    if undoable(target, version):
        return
    raise StateDirectoryError(target.path, f"holds version {target.version} only: version {version} is no longer "
                                           "kept (a state keeps its committed version, and earlier ones only as far "
                                           "back as its change log undoes exactly: faq.keep_changes)")


def _table_of(target: Any) -> "pa.Table":
    """The answer of a reopened object as Arrow, by its own code."""
    kind = target.KIND
    if kind == "query":
        from faq.factor import VALUE
        from faq.incremental.state import ANSWER

        value = VALUE if VALUE not in target.query.free else "__value"  # as MaintainedQuery.answer names it
        return target.state.table(ANSWER, value=value)
    if kind == "motif":
        return _count_table(target.count, str(target.pattern))
    return target.table()


def _count_table(count: int, pattern: str) -> "pa.Table":
    """A tracked motif's answer: its count, and its triangles where it is the sink's ``job="triangles"``."""
    import pyarrow as pa

    from faq.data_sink import TRIANGLES
    from faq.graphs.pattern import parse_pattern

    columns = {"count": pa.array([count], pa.int64())}
    if pattern == str(parse_pattern(TRIANGLES)):  # 6 bindings a triangle
        columns["triangles"] = pa.array([count // 6], pa.int64())
    return pa.table(columns)


def _counted_answer(path: str, version: Optional[int]) -> "Optional[pa.Table]":
    """A tracked motif's answer at its committed version read from its manifest, which holds the count: no edge
    loaded or indexed (reopening a 3.5M-edge tracker takes seconds, and a read asks twice: schema and rows).
    None for another kind or version (those reopen the state: their answer is in its rows, or undone)."""
    from faq.incremental.store import Store

    meta = Store(path).manifest()
    if meta.get("kind") != "motif" or (version is not None and version != int(meta["version"])):
        return None
    return _count_table(int(meta["count"]), str(meta["pattern"]))


def _spark_schema(target: Any, table: "pa.Table") -> "StructType | str":
    """The Spark schema of a reopened object's answer: the types it declares (DDL), else Arrow's.

    (``schema()`` runs in a Python process without a Spark context: DDL is
    handed to Spark to parse, not parsed here.)
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    if target.KIND == "query":
        from faq.incremental.state import ANSWER

        types = target.state.key_types.get(ANSWER, {})
        columns = [f"`{v}` {types.get(v, 'bigint')}" for v in target.query.free]
        return ", ".join([*columns, f"`{table.column_names[-1]}` {target.semiring.value_type}"])
    return from_arrow_schema(table.schema)


class _Partition(InputPartition):
    """The one partition of a read: the state's path and the version asked for (or None)."""

    def __init__(self, path: str, version: Optional[int]) -> None:
        super().__init__((path, version))
        self.path, self.version = path, version


class FaqDataSource(DataSource):
    """``spark.read.format("faq")``: a maintained object's answer (see the module notes).

    Examples
    --------
    >>> FaqDataSource.name()
    'faq'
    """

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> "StructType | str":
        """The answer's schema, from the state reopened on the driver (its version checked); or the changes'."""
        if wants_changes(self.options):
            return change_schema(change_options(self.options).path)
        path, version = read_options(self.options)
        counted = _counted_answer(path, version)
        if counted is not None:
            from pyspark.sql.pandas.types import from_arrow_schema

            return from_arrow_schema(counted.schema)
        target = open_state(path)
        try:
            _check_version(target, version)
            return _spark_schema(target, _table_of(target))
        finally:
            target.close()

    def reader(self, schema: "StructType") -> "FaqReader | ChangeReader":
        if wants_changes(self.options):
            return ChangeReader(change_options(self.options), schema)
        path, version = read_options(self.options)
        return FaqReader(path, version, schema)

    def streamReader(self, schema: "StructType") -> "ChangeStreamReader":  # noqa: N802 (Spark's name)
        """``spark.readStream.format("faq").option("changes", "true")``: the changes as versions commit."""
        if not wants_changes(self.options):  # Spark asked schema() without saying a stream reads it: the answer's
            raise InvalidArgumentError("changes", self.options.get("changes"),
                                       "a stream of a state is its changes, and Spark gives a data source no way to "
                                       'tell a stream from a batch read: spark.readStream.format("faq")'
                                       '.option("changes", "true").load(STATE)')
        return ChangeStreamReader(change_options(self.options), schema)

    def streamWriter(self, schema: "StructType", overwrite: bool) -> "FaqStreamWriter":  # noqa: N802 (Spark's name)
        """``df.writeStream.format("faq")``: the sink maintaining a state from change rows (:mod:`faq.data_sink`)."""
        from faq.data_sink import FaqStreamWriter, sink_options

        if overwrite:  # each micro-batch is a change of the answer: only appending changes means anything
            raise InvalidArgumentError("outputMode", "complete", 'the faq sink takes changes: outputMode("append")')
        return FaqStreamWriter(sink_options(self.options), schema)


class FaqReader(DataSourceReader):
    """Reads the answer as one partition of Arrow record batches, on the Python worker."""

    def __init__(self, path: str, version: Optional[int], schema: "StructType") -> None:
        self.path, self.version, self.schema = path, version, schema

    def partitions(self) -> list[InputPartition]:
        return [_Partition(self.path, self.version)]

    def read(self, partition: InputPartition) -> Iterator["pa.RecordBatch"]:
        from pyspark.sql.pandas.types import to_arrow_schema

        table = answer_table(partition.path, partition.version)
        table = table.select(self.schema.names).cast(to_arrow_schema(self.schema))
        yield from table.to_batches()
