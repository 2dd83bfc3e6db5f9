"""The ``faq`` Spark data source: ``spark.read.format("faq").load(STATE)`` reads a maintained answer.

A durable state (``state=`` of :func:`faq.maintain`, :func:`faq.track`, a
maintained truss or as-of join, :func:`faq.linear_regression` maintained, a
maintained fixpoint) is a directory only faq can read.  :func:`register_data_source` registers
:class:`FaqDataSource` (Spark's Python Data Source API,
``spark.dataSource.register``) with a session, classic or Spark Connect;
then::

    spark.read.format("faq").load(STATE)                          # the answer now
    spark.read.format("faq").option("version", 3).load(STATE)     # ... and it must be version 3

How it reads
------------
Nothing here reads the state's files: the object is reopened with its own
``open`` classmethod (which takes no writer's lock: a reader never blocks
the writer, :mod:`faq.incremental.writer_lock`), its answer taken as Arrow
by its own code, and it is closed again.  The manifest's ``kind`` says
which object it is (:data:`KINDS`):

==========  ===============================================  ====================================
kind        reopened with                                    rows
==========  ===============================================  ====================================
query       :meth:`~faq.incremental.MaintainedQuery.open`    the free variables and ``value``
            (a maintained model is one: its aggregate)
motif       :meth:`~faq.graphs.MotifTracker.open`       one row: ``count``
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
holds.  ``option("changes", "true")`` is refused
(:class:`~faq.errors.InvalidArgumentError`): the changes between versions
are not kept in a state; they are what ``apply`` returns and what
``stream(..., sink=)`` and ``before_commit`` hand on as each batch commits.

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

from faq.errors import InvalidArgumentError, StateDirectoryError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["FaqDataSource", "KINDS", "NAME", "answer_table", "read_options", "register_data_source"]

#: The format name: ``spark.read.format(NAME)``.
NAME = "faq"
#: The kinds of state the data source reads (the manifest's ``kind``).
KINDS = ("query", "motif", "truss", "asof", "fixpoint")
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
    changes = str(options.get("changes", "false")).strip().lower()
    if changes not in ("false", "0", ""):
        raise InvalidArgumentError("changes", options["changes"],
                                   "a state keeps its committed version only, not the changes between versions; "
                                   "take them from apply(), stream(..., sink=) or before_commit as batches commit")
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
    """The answer of the state in ``path`` as Arrow, through the object's own ``open`` (module notes).

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
    target = _open(path)
    try:
        _check_version(target, version)
        return _table_of(target)
    finally:
        target.close()


def _open(path: str) -> Any:
    """The maintained object saved in ``path``, reopened by its own class (no lock taken)."""
    from faq.incremental.store import Store

    meta = Store(path).manifest()
    kind = meta.get("kind")
    if kind == "query":
        from faq.incremental.maintained import MaintainedQuery

        return MaintainedQuery.open(path)
    if kind == "motif":
        from faq.graphs.track import MotifTracker

        return MotifTracker.open(path)
    if kind == "truss":
        from faq.graphs.maintained_truss import MaintainedTruss

        return MaintainedTruss.open(path)
    if kind == "asof":  # a view or a locked join, as it was saved
        from faq.asof.oneshot import open_join

        return open_join(path)
    if kind == "fixpoint":
        from faq.placement_policy import EXECUTORS
        from faq.recursive.maintained import MaintainedFixpoint

        if meta.get("placement") == EXECUTORS:  # its data is read back by Spark: not from inside a task
            raise StateDirectoryError(path, "it holds a fixpoint kept on the executors, which Spark reads back itself: "
                                            "use MaintainedFixpoint.open(path).df")
        return MaintainedFixpoint.open(path)
    raise StateDirectoryError(path, f"it holds a {kind!r} state; the faq data source reads {', '.join(KINDS)} "
                                    "states (reopen this one with its own open())")


def _check_version(target: Any, version: Optional[int]) -> None:
    if version is None or version == target.version:
        return
    if version > target.version:
        raise StateDirectoryError(target.path, f"has no version {version} yet: it is at version {target.version}")
    raise StateDirectoryError(target.path, f"holds version {target.version} only: version {version} is no longer "
                                           "kept (a state keeps its committed version)")


def _table_of(target: Any) -> "pa.Table":
    """The answer of a reopened object as Arrow, by its own code."""
    import pyarrow as pa

    kind = target.KIND
    if kind == "query":
        from faq.factor import VALUE
        from faq.incremental.state import ANSWER

        value = VALUE if VALUE not in target.query.free else "__value"  # as MaintainedQuery.answer names it
        return target.state.table(ANSWER, value=value)
    if kind == "motif":
        return pa.table({"count": pa.array([target.count], pa.int64())})
    return target.table()


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
        """The answer's schema, from the state reopened on the driver (its version checked)."""
        path, version = read_options(self.options)
        target = _open(path)
        try:
            _check_version(target, version)
            return _spark_schema(target, _table_of(target))
        finally:
            target.close()

    def reader(self, schema: "StructType") -> "FaqReader":
        path, version = read_options(self.options)
        return FaqReader(path, version, schema)


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
