"""The ``faq`` streaming sink: ``df.writeStream.format("faq")`` keeps a maintained answer current.

A stream of change rows (files landing in a folder, a Kafka topic, a table's
change feed) maintains a durable state (:mod:`faq.incremental.store`)
through Spark's Python Data Source API (``DataSourceStreamWriter``)::

    (changes.writeStream.format("faq")
        .option("state", STATE)                                      # the state directory
        .option("query", "count() := edge(a,b), edge(b,c), edge(a,c)")  # or .option("job", "motif") ...
        .option("checkpointLocation", CHECKPOINT)
        .start())

and ``spark.read.format("faq").load(STATE)`` reads the answer
(:mod:`faq.data_source`).  Each micro-batch is one ``apply``: one version.

What a stream maintains (:data:`JOBS`)
--------------------------------------
``option("query", TEXT)``
    A maintained query (:class:`~faq.incremental.MaintainedQuery`).  A row
    is a change of a factor as ``apply`` takes it: the factor's variable
    columns and ``value`` (in a ring the *signed* change, e.g. ``+1`` /
    ``-1`` in ``counting``; one when absent).  A ``diff`` column instead of
    ``value`` is refused (:class:`~faq.errors.MultiplicityColumnError`), as
    ``apply`` refuses it.  ``option("factor", NAME)`` names the factor every
    row changes (default: the only one), or ``option("factor_column", COL)``
    a column naming each row's.
``option("job", "motif")`` with ``option("pattern", PATTERN)``, ``option("job", "triangles")``
    A tracked motif (:class:`~faq.graphs.MotifTracker`): rows ``src``,
    ``dst`` and optionally ``diff`` (+1 insert, -1 delete; +1 when absent)
    and ``seq``, as ``MotifTracker.apply`` takes them.  ``triangles`` is the
    motif :data:`TRIANGLES` (the undirected triangle: 6 bindings a
    triangle; a read of the state has a ``triangles`` column besides
    ``count``).
``option("job", "truss")``
    A maintained truss decomposition (:class:`~faq.graphs.MaintainedTruss`):
    the same edge rows; a read is every edge's ``trussness``.
Any other job (``asof``, ``regression``, ...)
    Refused (:class:`~faq.errors.UnsupportedSinkJobError`): keep those
    current with their own ``apply`` from ``foreachBatch``.

A state directory that holds no state yet is made at the first micro-batch
with rows, with empty factors (a query's factor variables are the stream's
columns but ``value`` and the factor column, their types the stream's); one
that holds a state is reopened and must hold this query or pattern
(:class:`~faq.errors.StateJobMismatchError` otherwise).  A state made by
:func:`faq.maintain` or :func:`faq.track` with initial data can be fed by a
sink: close it first (the sink takes the writer's lock for each batch).

``option("keepChanges", N)`` makes the state keep the change of each
version, the last ``N`` (:func:`faq.keep_changes`, :mod:`faq.incremental.change_log`),
from the next micro-batch on: ``spark.read.format("faq").option("changes",
"true")`` and ``spark.readStream`` read them (:mod:`faq.data_stream`).  A
state the sink makes with it keeps its whole history from the empty answer.

Where the code runs, and why
----------------------------
Spark calls a stream writer's ``write`` in its tasks (executor Python
workers), and ``commit`` once per micro-batch in a Python worker of the
*driver*, after every task succeeded.  A maintained state is applied on one
machine by one writer (:mod:`faq.incremental.writer_lock`), and a batch must
be one version or none.  So ``write`` does nothing but hand its rows on: its
commit message is the task's rows as Arrow IPC bytes (:class:`ChangeRows`);
``commit`` joins the messages into the micro-batch and applies it in one
``apply``.  The micro-batch's rows thus reach the driver (as they do in
``foreachBatch``, where ``apply`` reads a batch on the driver); the state's
rows never leave it.  No Spark job is run: the driver's Python worker has no
session, and applies with faq's in-process code (placement ``driver``).

The commit worker reopens the state from its path at the first batch and
keeps it open between batches (Spark reuses the worker), releasing the
writer's lock after each commit; a state that another writer moved on in
the meantime is reopened.

Exactly once
------------
Each micro-batch is applied under the label :func:`~faq.incremental.streaming.stream_label`
of the stream's key and Spark's ``batchId``, written with the version in
the state's own commit, exactly as ``stream()`` (``foreachBatch``) does:
the key is the streaming query's id from ``<checkpoint>/metadata``, so
``option("checkpointLocation", ...)`` is required (a new checkpoint starts a
new stream).  A batch Spark re-delivers after a crash (its commit was not
recorded in the checkpoint) is recognized by
:func:`~faq.incremental.streaming.applied_batch` and skipped.  A batch with a
bad row raises in ``apply`` before anything is saved: the state stays at
its version and the streaming query stops with faq's error in its
``exception()``.

Examples
--------
>>> sorted(JOBS)
['motif', 'query', 'triangles', 'truss']
>>> spec = sink_options({"state": "/tmp/s", "query": "deg(a) := edge(a,b)", "checkpointLocation": "/tmp/c"})
>>> spec.job, spec.text, spec.checkpoint
('query', 'deg(a) := edge(a,b)', '/tmp/c')
>>> sink_options({"state": "/tmp/s", "job": "asof", "checkpointLocation": "/tmp/c"})
Traceback (most recent call last):
...
faq.errors.classes.UnsupportedSinkJobError: [UNSUPPORTED_SINK_JOB] the faq streaming sink does not maintain job='asof'; ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from faq.errors import InvalidArgumentError, InvalidDeltaError, MissingColumnError, StateJobMismatchError
from faq.errors.classes import UnsupportedSinkJobError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["ChangeRows", "FaqStreamWriter", "JOBS", "SinkSpec", "TRIANGLES", "apply_batch", "close_all", "sink_options"]

#: The undirected triangle, the motif ``job="triangles"`` tracks (6 bindings a triangle).
TRIANGLES = "(a)-(b); (b)-(c); (a)-(c)"
#: The jobs the sink maintains, by ``option("job", ...)``, and the state kind each makes.
JOBS = {"query": "query", "motif": "motif", "triangles": "motif", "truss": "truss"}
#: The options a sink takes (Spark lower-cases them; ``path`` is ``start(path)``'s; ``queryname`` is the
#: streaming query's name, which a declarative pipeline's sink flow passes, unused).
OPTIONS = ("state", "path", "query", "job", "pattern", "factor", "factor_column", "semiring", "keepchanges",
           "checkpointlocation", "queryname")


@dataclass(frozen=True)
class SinkSpec:
    """A sink's options, checked: the state, what it maintains, how rows map to factors, the checkpoint."""

    state: str
    job: str  # a key of JOBS
    text: str  # the query, or the motif's pattern
    checkpoint: str
    factor: Optional[str] = None
    factor_column: Optional[str] = None
    semiring: Optional[str] = None
    keep: Optional[int] = None  # versions whose change the state's log keeps (faq.incremental.change_log), None: no log


@dataclass
class ChangeRows(WriterCommitMessage):
    """A task's rows of a micro-batch, as Arrow IPC stream bytes (empty: no rows)."""

    data: bytes = b""
    rows: int = 0
    columns: list = field(default_factory=list)


def sink_options(options: Mapping[str, Any]) -> SinkSpec:
    """The :class:`SinkSpec` of a ``writeStream``'s options, checked (module notes).

    Raises
    ------
    InvalidArgumentError
        No state, no checkpoint location, both or neither of ``query`` and
        ``job``, a motif without its pattern, an unknown option.
    UnsupportedSinkJobError
        A job the sink does not maintain.
    """
    options = {str(k).lower(): v for k, v in options.items()}
    for key, value in options.items():
        if key not in OPTIONS:
            raise InvalidArgumentError(key, value, f"the faq sink takes the options {', '.join(OPTIONS)}")
    state = options.get("state") or options.get("path")
    if not state:
        raise InvalidArgumentError("state", state, 'give the state directory: .option("state", DIR)')
    checkpoint = options.get("checkpointlocation")
    if not checkpoint:
        raise InvalidArgumentError("checkpointLocation", checkpoint,
                                   "the faq sink records each micro-batch under the streaming query's id, read from "
                                   'its checkpoint: give .option("checkpointLocation", DIR)')
    query = options.get("query")
    job = str(options.get("job") or "query").strip().lower()
    if (job == "query") != bool(query):
        raise InvalidArgumentError("job", options.get("job"),
                                   'give .option("query", TEXT) (a maintained query) or .option("job", NAME), one')
    if job not in JOBS:
        raise UnsupportedSinkJobError(job=job, supported=", ".join(sorted(JOBS)))
    text = {"query": query, "motif": options.get("pattern"), "triangles": TRIANGLES, "truss": "truss"}[job]
    if not text:
        raise InvalidArgumentError("pattern", text, 'a motif needs its pattern: .option("pattern", "(a)->(b); ...")')
    if options.get("factor") and options.get("factor_column"):
        raise InvalidArgumentError("factor_column", options["factor_column"],
                                   "give factor (every row changes it) or factor_column, not both")
    keep = options.get("keepchanges")
    if keep is not None:
        try:
            keep = int(str(keep).strip())
        except ValueError:
            keep = 0
        if keep < 1:
            raise InvalidArgumentError("keepChanges", options["keepchanges"], "must be a number of versions, 1 or more")
    return SinkSpec(str(state), job, str(text), str(checkpoint), options.get("factor"), options.get("factor_column"),
                    options.get("semiring"), keep)


class FaqStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("faq")``: tasks hand their rows on; the driver's commit applies them (module notes).

    Parameters
    ----------
    spec : SinkSpec
    schema : StructType
        The stream's schema (a new state's key types).
    """

    def __init__(self, spec: SinkSpec, schema: "StructType") -> None:
        self.spec, self.schema = spec, schema

    def write(self, iterator: Iterator["pa.RecordBatch"]) -> ChangeRows:
        """A task's rows as one commit message (Arrow IPC): nothing is applied on the executors."""
        import pyarrow as pa

        batches = [b for b in iterator if b.num_rows]
        if not batches:
            return ChangeRows()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batches[0].schema) as stream:
            for batch in batches:
                stream.write_batch(batch)
        return ChangeRows(sink.getvalue().to_pybytes(), sum(b.num_rows for b in batches), batches[0].schema.names)

    def commit(self, messages: list[Optional[WriterCommitMessage]], batchId: int) -> None:  # noqa: N803 (Spark's name)
        """Apply the micro-batch ``batchId`` (every task's rows) in one ``apply``, once (on the driver)."""
        apply_batch(self.spec, self.schema, _rows_of(messages), batchId)

    def abort(self, messages: list[Optional[WriterCommitMessage]], batchId: int) -> None:  # noqa: N803
        """A task failed: nothing was applied (tasks write nothing), so nothing to undo."""


def _rows_of(messages: list[Optional[WriterCommitMessage]]) -> Optional["pa.Table"]:
    """The micro-batch's rows: every task's message joined (None when no task had rows)."""
    import pyarrow as pa

    tables = [pa.ipc.open_stream(m.data).read_all() for m in messages if isinstance(m, ChangeRows) and m.rows]
    if not tables:
        return None
    return pa.concat_tables(tables, promote_options="default")


# --- the driver's side: one state per process, one apply per micro-batch ------------------

# The targets this process holds open between micro-batches (Spark reuses the commit worker), by path.
_OPEN: dict[str, Any] = {}


def apply_batch(spec: SinkSpec, schema: "StructType", table: Optional["pa.Table"], batch_id: int) -> Optional[int]:
    """Apply micro-batch ``batch_id``'s rows to the state of ``spec``, once; the version it made (else None).

    A batch applied already (the same stream's ``batchId`` in the state's
    labels) and an empty batch change nothing.  The writer's lock is
    released afterwards, whatever happened.

    Examples
    --------
    >>> import tempfile, pyarrow as pa
    >>> from pyspark.sql.types import StructType, StructField, LongType
    >>> root = tempfile.mkdtemp()
    >>> spec = sink_options({"state": root + "/s", "job": "triangles", "checkpointLocation": root + "/c"})
    >>> schema = StructType([StructField("src", LongType()), StructField("dst", LongType())])
    >>> apply_batch(spec, schema, pa.table({"src": [1, 2, 1], "dst": [2, 3, 3]}), 0)
    1
    >>> apply_batch(spec, schema, pa.table({"src": [1, 2, 1], "dst": [2, 3, 3]}), 0) is None  # re-delivered
    True
    >>> from faq.data_source import answer_table
    >>> answer_table(root + "/s").to_pydict()
    {'count': [6], 'triangles': [1]}
    >>> close_all()
    """
    from faq.incremental.change_log import keep_changes, keeps_changes
    from faq.incremental.streaming import applied_batch, checkpoint_id, stream_label

    target = _target(spec, schema, table)
    if target is None:  # no state yet and nothing to make one with
        return None
    try:
        if spec.keep is not None and keeps_changes(target.path) != spec.keep:
            keep_changes(target.path, spec.keep)  # before this batch: its version's change is logged
        key = checkpoint_id(spec.checkpoint) or spec.checkpoint
        if applied_batch(target.labels, key, batch_id) is not None or table is None or table.num_rows == 0:
            return None
        target.apply(_deltas(spec, target, table, batch_id), label=stream_label(key, batch_id))
        return target.version
    finally:
        target._release_store()  # not held between micro-batches: a restarted query's worker may write next


def close_all() -> None:
    """Close the targets this process holds open (their states stay on disk)."""
    while _OPEN:
        _OPEN.popitem()[1].close()


def _target(spec: SinkSpec, schema: "StructType", table: Optional["pa.Table"]) -> Any:
    """The state of ``spec``: held open, reopened (another writer moved it on), or made (first rows)."""
    from faq.incremental.store import Store

    path = os.path.abspath(spec.state)
    store = Store(path)
    held = _OPEN.get(path)
    if not store.exists():
        if held is not None:  # the state was removed under us: start again
            _OPEN.pop(path).close()
        if table is None or table.num_rows == 0:
            return None
        _OPEN[path] = _new_target(spec, schema, table, path)
        return _OPEN[path]
    if held is not None and held.version == store.manifest().get("version"):
        return held
    if held is not None:
        _OPEN.pop(path).close()
    target = _reopen(spec, path)
    _OPEN[path] = target
    return target


def _reopen(spec: SinkSpec, path: str) -> Any:
    """The saved state in ``path``, which must hold what ``spec`` maintains."""
    from faq.incremental.store import Store

    kind = Store(path).manifest().get("kind")
    if kind != JOBS[spec.job]:
        raise StateJobMismatchError(path, "kind", repr(kind), repr(JOBS[spec.job]))
    if kind == "truss":  # no query nor pattern: the kind is the job
        from faq.graphs.maintained_truss import MaintainedTruss

        return MaintainedTruss.open(path)
    if kind == "motif":
        from faq.graphs.pattern import parse_pattern
        from faq.graphs.track import MotifTracker

        target = MotifTracker.open(path)
        saved, given = str(target.pattern), str(parse_pattern(spec.text))
    else:
        from faq.incremental.maintained import MaintainedQuery
        from faq.language import parse_query

        target = MaintainedQuery.open(path)
        saved, given = str(target.query), str(parse_query(spec.text))
    if saved != given:
        target.close()
        raise StateJobMismatchError(path, "query" if kind == "query" else "pattern", repr(saved), repr(given))
    return target


def _new_target(spec: SinkSpec, schema: "StructType", table: "pa.Table", path: str) -> Any:
    from faq.data_sink_start import empty_query, empty_tracker, empty_truss

    if JOBS[spec.job] == "truss":
        return empty_truss(path)
    if JOBS[spec.job] == "motif":
        return empty_tracker(spec.text, path)
    return empty_query(spec.text, _factor_columns(spec, schema), spec.semiring, path)


def _factor_columns(spec: SinkSpec, schema: "StructType") -> "pa.Schema":
    """The key columns a new state's factors take from the stream: its columns but ``value`` and the factor column."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from faq.factor import VALUE

    return pa.schema([f for f in to_arrow_schema(schema) if f.name not in (VALUE, spec.factor_column)])


def _deltas(spec: SinkSpec, target: Any, table: "pa.Table", batch_id: int) -> dict[str, "pa.Table"]:
    """The micro-batch as one delta per factor (split by ``factor_column``), as ``apply`` takes it."""
    import pyarrow.compute as pc

    names = target.delta_names
    if spec.factor_column is None:
        factor = spec.factor or (names[0] if len(names) == 1 else None)
        if factor is None:
            raise InvalidArgumentError("factor", None, f"the state has several factors ({', '.join(names)}): name "
                                                       'the one the stream changes (.option("factor", NAME)) or a '
                                                       'column naming each row\'s (.option("factor_column", COL))')
        if factor not in names:
            raise InvalidDeltaError(factor, f"the state has no factor {factor!r} (it has {', '.join(names)})",
                                    known=names)
        return {factor: table}
    if spec.factor_column not in table.column_names:
        raise MissingColumnError(column=spec.factor_column, available=table.column_names,
                                 source=f"micro-batch {batch_id}")
    column = table.column(spec.factor_column)
    if column.null_count:
        raise InvalidDeltaError("(none)", f"micro-batch {batch_id}: {column.null_count} row(s) name no factor "
                                          f"(null {spec.factor_column!r})", batch=batch_id)
    rest = table.drop_columns([spec.factor_column])
    return {str(n): rest.filter(pc.equal(column, n)) for n in pc.unique(column).to_pylist()}
