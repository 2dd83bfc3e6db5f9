"""Structured Streaming as the source of changes: every micro-batch applied once to a maintained state.

:func:`stream` runs a Structured Streaming query over a streaming DataFrame
of changes (files landing in a directory, a Kafka topic, a table's change
feed) with ``foreachBatch``: each micro-batch is collected (one Spark job:
a micro-batch is a batch, and ``apply`` reads a batch on the driver) and
applied to a :class:`~faq.incremental.MaintainedQuery`, a
:class:`~faq.learning.MaintainedModel`, a :class:`~faq.graphs.MotifTracker`
or a :class:`~faq.recursive.MaintainedFixpoint` (everything built on
:class:`~faq.incremental.durable.Maintained`) as *one* batch, making one version.
It returns the running :class:`~pyspark.sql.streaming.StreamingQuery`.

How a micro-batch maps to factors
---------------------------------
One stream feeds one target, and one micro-batch is one ``apply``:

* ``factor="edge"`` -- every row is a change of that factor (of a model:
  that table).  The default when the target has a single factor or table.
* ``factor_column="factor"`` -- a column names each row's factor (table);
  the micro-batch is split by it, the column dropped, and all the parts go
  into the same ``apply``.

Why one stream rather than one per factor: a change that touches several
factors (a row moved between tables, an order and its items) then lands in
one version, atomically, as it does with ``apply``; and the batch functions
of several queries run on Spark's threads concurrently, while a maintained
state takes one batch at a time (several streams into one target would
interleave, serialized by a lock here, with no order between them).  A
target fed by several sources unions them into one stream first.

A row has the factor's variable columns and, optionally, its value column
(in a ring the *signed* change, e.g. ``+1`` / ``-1`` in ``counting``; one
per row when absent); a model's rows have the table's key and feature
columns and an optional ``diff`` (+1 insert, -1 delete).  Other columns are
ignored.  A null in a column the target reads (a file that lacks the column,
a value that does not parse) is an error (:class:`~faq.errors.InvalidDeltaError`
naming the micro-batch and the column) unless ``nulls="drop"``, which leaves
such rows out.

Exactly once
------------
Spark re-delivers a micro-batch whose output it has not committed (after a
crash, a restart from the checkpoint runs it again with the same
``batchId`` and the same rows, for a replayable source).  So each applied
micro-batch is recorded *in the state's own commit*: the batch's label is
``stream <query id> batch <batchId>`` (the query id is the checkpoint's, from
its ``metadata`` file, so a new checkpoint starts a new stream), and labels
are written with the version in the same manifest commit
(:mod:`faq.incremental.store`).  A micro-batch whose ``batchId`` (or a later
one of the same stream) the state holds already is skipped: the target's
``progress`` callback gets a :class:`~faq.incremental.change.BatchEvent` of
kind ``"skip"`` naming it, and nothing changes.  With ``path=`` this holds
across processes: reopen the state (``MaintainedQuery.open(path)``) and
restart the stream from the same checkpoint; without ``path=`` it holds
within the process that holds the target.  An empty micro-batch changes
nothing (no version).

The sink
--------
``sink=DIR`` writes the answer's change of each version to
``DIR/version-<v>.parquet`` (the rows of the :class:`~faq.incremental.change.Change`:
the free variables, ``version`` and ``diff``) with pyarrow, to a temporary
name first and then renamed over, so a file is whole or absent and a
version written twice is the same file.  ``spark.read.parquet(DIR)`` reads
the changes as a table.  The file is written when the change is known and
*before* the state commits it (the target's ``apply(before_commit=)``): a
version the state holds always has its file.  A process killed between the
two leaves a file for a version the state does not hold yet; the restarted
stream applies that micro-batch again, which makes the same version with
the same change and writes the same file over it.  (A state reaching a
version its sink lacks -- a sink directory cleared by hand -- is reported
in the ``"skip"`` event of a re-delivered micro-batch, with a warning.)

Spark Connect
-------------
On Spark Connect the batch function runs in the *server's* Python, not the
client's: it is pickled without the target and reopens the state from its
``path`` there on the first micro-batch (so the target must be durable, its
path -- and the sink's -- one the server reaches, and faq importable by the
server's Python).  The server's batch function becomes the state's one
writer (:mod:`faq.incremental.writer_lock`): the client's target gives up
the writer's lock and is not updated; reopen the path to read the answer.  The target's ``progress`` callback stays on the
client and gets no events.

Examples
--------
>>> import os, tempfile
>>> import pandas as pd
>>> from faq.factor import factor_of
>>> from faq import maintain
>>> from faq.spark import get_session
>>> spark = get_session()
>>> root = tempfile.mkdtemp()
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> triangles = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge}, state=root + "/state")
>>> os.makedirs(root + "/changes")
>>> pd.DataFrame({"src": [1, 2], "dst": [3, 4], "value": [1, 1]}).to_parquet(root + "/changes/1.parquet")
>>> changes = spark.readStream.schema("src bigint, dst bigint, value bigint").parquet(root + "/changes")
>>> query = triangles.stream(changes, checkpoint=root + "/checkpoint", sink=root + "/answer",
...                          trigger={"availableNow": True})
>>> query.awaitTermination()
>>> triangles.scalar(), triangles.version, triangles.state.labels[-1]     # doctest: +ELLIPSIS
(2, 1, 'stream ... batch 0')
>>> spark.read.parquet(root + "/answer").collect()
[Row(version=1, diff=2)]
>>> triangles.close()
"""

from __future__ import annotations

import json
import os
import threading
import uuid
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional

from faq.errors import InvalidArgumentError, InvalidDeltaError, MissingColumnError
from faq.incremental.change import BatchEvent
from faq.spark_ui import job as spark_job

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

    from faq.incremental.change import Change

Target = Any  # a faq.incremental.durable.Maintained, or anything else answering TARGET_PROTOCOL

#: What a target of :func:`stream` answers -- a maintained query, a maintained model, a tracked motif
#: and a maintained fixpoint do (faq.incremental.durable.Maintained): ``apply(deltas, label=,
#: before_commit=)``, ``open(path)`` (a classmethod), ``path`` (its
#: durable state's directory or None), ``labels`` (one per version), ``progress`` (its batch-event
#: callback or None), ``delta_names`` (what a delta may change) and ``delta_columns(name)`` ((columns
#: read, columns required) of a delta).
TARGET_PROTOCOL = ("apply", "open", "path", "labels", "progress", "delta_names", "delta_columns")

__all__ = ["stream", "stream_label", "applied_batch"]

#: The label prefix of a micro-batch applied from a stream (see the module notes).
LABEL = "stream {key} batch {batch}"
NULLS = ("error", "drop")


def stream(
    target: "Target",
    changes: "DataFrame",
    *,
    checkpoint: str,
    factor: Optional[str] = None,
    factor_column: Optional[str] = None,
    sink: Optional[str] = None,
    trigger: Optional[Mapping[str, Any]] = None,
    nulls: str = "error",
    name: Optional[str] = None,
) -> "StreamingQuery":
    """Apply every micro-batch of the streaming DataFrame ``changes`` to ``target``, once.

    Parameters
    ----------
    target : MaintainedQuery, MaintainedModel, MotifTracker or MaintainedFixpoint
        What the changes update (durable with ``path=`` for exactly-once
        across processes, and always on Spark Connect).
    changes : DataFrame
        A streaming DataFrame (``spark.readStream...``) of changed rows.
    checkpoint : str
        The query's checkpoint location; restart from the same one to resume.
    factor : str, optional
        The factor (a model's table) every row changes; default the only one.
    factor_column : str, optional
        Instead of ``factor``: a column naming each row's factor (or table).
    sink : str, optional
        A directory receiving each version's change as ``version-<v>.parquet``.
    trigger : mapping, optional
        Keywords of ``DataStreamWriter.trigger``, e.g. ``{"availableNow": True}``
        or ``{"processingTime": "10 seconds"}``; default Spark's.
    nulls : {"error", "drop"}
        A row with a null in a column the target reads raises (the default) or is left out.
    name : str, optional
        The streaming query's name (``queryName``).

    Returns
    -------
    StreamingQuery
        Running; ``awaitTermination()``, ``processAllAvailable()``, ``stop()``.
        An error in a micro-batch stops it, with faq's message in its
        ``exception()``; the state stays at the last committed version.

    Raises
    ------
    InvalidArgumentError
        ``changes`` is not streaming, ``factor`` and ``factor_column`` both
        given, or no factor named for a target with several; on Spark Connect,
        a target without ``path=``.
    MissingColumnError, InvalidDeltaError
        The stream lacks a column of the factor, or names no factor of the target.
    """
    _check_target(target)
    if not getattr(changes, "isStreaming", False):
        raise InvalidArgumentError(argument="changes", value=type(changes).__name__,
                                   reason="must be a streaming DataFrame (spark.readStream...); apply a static "
                                          "batch with apply()")
    if nulls not in NULLS:
        raise InvalidArgumentError(argument="nulls", value=nulls, reason=f"must be one of {', '.join(NULLS)}")
    factor = _check_factor(target, changes, factor, factor_column)
    apply = _ApplyBatch(target, checkpoint, factor, factor_column, sink, nulls)
    if _on_connect(changes) and apply.path is None:
        raise InvalidArgumentError(argument="target", value=repr(target),
                                   reason="on Spark Connect the batch function runs in the server's Python and "
                                          "reopens the state there: make the target durable (path=) on a path "
                                          "the server reaches")
    if _on_connect(changes):
        target._release_store()  # the server's batch function becomes the state's one writer
    writer = changes.writeStream.foreachBatch(apply).option("checkpointLocation", checkpoint)
    if trigger:
        writer = writer.trigger(**trigger)
    if name:
        writer = writer.queryName(name)
    return writer.start()


def stream_label(key: str, batch_id: int) -> str:
    """The label a micro-batch is applied under (its stream's key and ``batchId``).

    >>> stream_label("4f0c", 7)
    'stream 4f0c batch 7'
    """
    return LABEL.format(key=key, batch=batch_id)


def applied_batch(labels: list[str], key: str, batch_id: int) -> Optional[int]:
    """The version that applied micro-batch ``batch_id`` of stream ``key`` (or a later one), else None.

    ``labels[i]`` is the label of version ``i + 1``.

    >>> labels = ["file a", "stream q batch 0", "stream q batch 1"]
    >>> applied_batch(labels, "q", 1), applied_batch(labels, "q", 0), applied_batch(labels, "q", 2)
    (3, 2, None)
    """
    prefix = LABEL.format(key=key, batch="")
    for position in range(len(labels) - 1, -1, -1):
        label = labels[position]
        if not label.startswith(prefix):
            continue
        last = int(label[len(prefix):])
        if last < batch_id:
            return None
        exact = stream_label(key, batch_id)
        return next((i + 1 for i in range(position, -1, -1) if labels[i] == exact), position + 1)
    return None


# --- the batch function --------------------------------------------------------------------


class _ApplyBatch:
    """``foreachBatch``'s function: skip a micro-batch applied already, else split it and apply it.

    Pickled (Spark Connect) without the live target, which the server reopens from ``path``.
    """

    def __init__(self, target: "Target", checkpoint: str, factor: Optional[str],
                 factor_column: Optional[str], sink: Optional[str], nulls: str) -> None:
        self.target: Optional["Target"] = target
        self.opener = type(target)  # its ``open(path)`` reopens the state (pickled by reference)
        self.path = target.path
        self.checkpoint = checkpoint
        self.factor, self.factor_column = factor, factor_column
        self.sink = os.path.abspath(sink) if sink is not None and "://" not in sink else sink
        self.nulls = nulls
        self.key: Optional[str] = None
        self.reopened = False  # True where this function reopened the state (a Connect server)
        self.lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "target": None, "lock": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()

    def __call__(self, batch: "DataFrame", batch_id: int) -> None:
        with self.lock:
            try:
                self._apply(batch, batch_id)
            finally:
                if self.reopened and self.target is not None:
                    # On a Connect server the Python process running this function may outlive its query;
                    # holding the writer's lock between micro-batches would lock out the next query's.
                    self.target._release_store()

    def _apply(self, batch: "DataFrame", batch_id: int) -> None:
        target = self._target()
        key = self._stream_key()
        label = stream_label(key, batch_id)
        version = applied_batch(target.labels, key, batch_id)
        if version is not None:
            self._skipped(target, label, batch_id, version)
            return
        with spark_job(f"stream micro-batch {batch_id}", batch.sparkSession):
            table = batch.toArrow()  # the micro-batch: one Spark job (apply reads a batch on the driver)
            if table.num_rows == 0:
                return
            # The sink's file is written before the state commits: a version the state holds has its file.
            sink = None if self.sink is None else (lambda change: _write_change(self.sink, change))
            target.apply(self._deltas(target, table, batch_id), label=label, before_commit=sink)

    def _target(self) -> "Target":
        if self.target is None:  # on the server of Spark Connect: reopen the durable state
            self.target = self.opener.open(self.path)
            self.reopened = True
        return self.target

    def _stream_key(self) -> str:
        """The streaming query's id, from the checkpoint's ``metadata`` (the checkpoint path if unreadable)."""
        if self.key is None:
            self.key = checkpoint_id(self.checkpoint) or self.checkpoint
        return self.key

    def _skipped(self, target: "Target", label: str, batch_id: int, version: int) -> None:
        missing = self.sink is not None and not os.path.exists(_sink_file(self.sink, version))
        text = f"micro-batch {batch_id} was applied already (version {version}); skipped"
        if missing:
            text += f"; its sink file {_sink_file(self.sink, version)} is missing (written before every commit: " \
                    "removed since, or the sink directory changed)"
            warnings.warn(text, RuntimeWarning, stacklevel=2)
        if target.progress:
            target.progress(BatchEvent("skip", version, text, rows=0, seconds=0.0, label=label))

    def _deltas(self, target: "Target", table: "pa.Table", batch_id: int) -> dict[str, "pa.Table"]:
        """The micro-batch as one delta per factor (split by ``factor_column``), nulls checked."""
        import pyarrow.compute as pc

        if self.factor_column is None:
            parts = {self.factor: table}
        else:
            names = table.column(self.factor_column)
            if names.null_count:
                raise InvalidDeltaError("(none)", f"micro-batch {batch_id}: {names.null_count} row(s) name no "
                                                  f"factor (null {self.factor_column!r})", batch=batch_id)
            rest = table.drop_columns([self.factor_column])
            parts = {str(n): rest.filter(pc.equal(names, n)) for n in pc.unique(names).to_pylist()}
        return {name: self._without_nulls(name, rows, target.delta_columns(name)[0], batch_id)
                for name, rows in parts.items()}

    def _without_nulls(self, name: str, rows: "pa.Table", columns: list[str], batch_id: int) -> "pa.Table":
        import pyarrow.compute as pc

        for column in (c for c in columns if c in rows.column_names):
            nulls = rows.column(column).null_count
            if not nulls:
                continue
            if self.nulls == "error":
                raise InvalidDeltaError(name, f"micro-batch {batch_id} has {nulls} row(s) with a null {column!r} "
                                              "(a file without the column, or a value that does not parse); "
                                              "stream(..., nulls='drop') leaves such rows out",
                                        column=column, batch=batch_id, rows=nulls)
            rows = rows.filter(pc.is_valid(rows.column(column)))
        return rows


# --- helpers -------------------------------------------------------------------------------


def _check_target(target: Any) -> None:
    """A target answers the protocol this module uses (see :data:`TARGET_PROTOCOL`)."""
    missing = [name for name in TARGET_PROTOCOL if not hasattr(target, name)]
    if missing:
        raise InvalidArgumentError(argument="target", value=type(target).__name__,
                                   reason="stream() feeds a maintained query, model, tracked motif or fixpoint "
                                          f"(it lacks {', '.join(missing)})")


def _check_factor(target: "Target", changes: "DataFrame", factor: Optional[str],
                  factor_column: Optional[str]) -> Optional[str]:
    """The factor every row changes (None with ``factor_column``), the stream's columns checked."""
    names = target.delta_names
    columns = list(changes.columns)
    if factor is not None and factor_column is not None:
        raise InvalidArgumentError(argument="factor_column", value=factor_column,
                                   reason=f"give factor= (every row changes {factor!r}) or factor_column=, not both")
    if factor_column is not None:
        if factor_column not in columns:
            raise MissingColumnError(column=factor_column, available=columns, source="the stream of changes")
        return None
    if factor is None:
        if len(names) != 1:
            raise InvalidArgumentError(argument="factor", value=None,
                                       reason=f"the target has several factors ({', '.join(names)}): name the one "
                                              "the stream changes, or a column naming each row's (factor_column=)")
        factor = names[0]
    if factor not in names:
        raise InvalidDeltaError(factor, f"the target has no factor {factor!r} (it has {', '.join(names)})",
                                known=names)
    for column in target.delta_columns(factor)[1]:
        if column not in columns:
            raise MissingColumnError(column=column, available=columns, source=f"the stream of changes of {factor!r}")
    return factor


def _on_connect(changes: "DataFrame") -> bool:
    from faq.spark import is_connect

    return is_connect(changes.sparkSession)


def checkpoint_id(checkpoint: str) -> Optional[str]:
    """The streaming query's id Spark wrote in ``<checkpoint>/metadata`` (a local path), or None: the key a
    stream's batches are recorded under (here, and by the ``faq`` sink, :mod:`faq.data_sink`)."""
    from urllib.parse import urlparse

    parsed = urlparse(checkpoint)
    if parsed.scheme not in ("", "file"):
        return None
    path = parsed.path if parsed.scheme else checkpoint
    try:
        with open(os.path.join(path, "metadata"), encoding="utf-8") as handle:
            return str(json.loads(handle.readline())["id"])
    except (OSError, ValueError, KeyError):
        return None


def _sink_file(sink: str, version: int) -> str:
    return os.path.join(sink, f"version-{version:010d}.parquet")


def _write_change(sink: str, change: "Change") -> None:
    """``change`` as ``sink/version-<v>.parquet``: written under a hidden name, then renamed over."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(sink, exist_ok=True)
    final = _sink_file(sink, change.version)
    temporary = os.path.join(sink, f".{os.path.basename(final)}.{uuid.uuid4().hex[:8]}")
    pq.write_table(pa.Table.from_pandas(change.to_pandas(), preserve_index=False), temporary)
    os.replace(temporary, final)
