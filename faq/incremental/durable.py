"""One maintenance protocol: versions, the commit sequence, resuming, batch events, streaming.

Everything kept current under batches -- a maintained query
(:class:`~faq.incremental.MaintainedQuery`), a tracked motif
(:class:`~faq.graphs.MotifTracker`), a maintained fixpoint
(:class:`~faq.recursive.MaintainedFixpoint`) and a maintained model
(:class:`~faq.learning.MaintainedModel`) -- answers the same questions and
commits a batch the same way.  :class:`Maintained` is that one base:

* the **versions**: :attr:`~Maintained.version` (batches applied),
  :attr:`~Maintained.labels` (one per version: a batch file's name, a stream's
  micro-batch) and :attr:`~Maintained.path` (the durable state's directory),
  read from the target's :class:`Versions` record (a
  :class:`~faq.incremental.state.ResidentState` is one);
* the **version check** of ``apply(..., version=v)``
  (:meth:`~Maintained._next_version`): a version applied already is refused
  (:class:`~faq.errors.BatchAlreadyAppliedError`), one beyond the next too
  (:class:`~faq.errors.VersionGapError`), so a batch never counts twice;
* the **commit sequence** (:meth:`~Maintained._commit`): the change is handed
  to ``before_commit`` (a stream's sink), then the durable save -- the commit
  point --, then the in-memory merge, then the version and its label.  An
  error before the save leaves the target as it was; a process killed after
  ``before_commit`` applies the batch again and makes the same change;
* the **change log** of a state that keeps one (:mod:`faq.incremental.change_log`): the
  change written with each version, before the save;
* **batch events** (:meth:`~Maintained._emit`) to the ``progress`` callback;
* **resuming** (:meth:`~Maintained._saved_manifest`): the manifest of a saved
  state, refused when it holds another kind of target;
* **streaming** (:meth:`~Maintained.stream`): each micro-batch of a
  Structured Streaming DataFrame applied once
  (:func:`faq.incremental.streaming.stream`), for which a target names what a
  batch may change (:attr:`~Maintained.delta_names`) and the columns of its
  rows (:meth:`~Maintained.delta_columns`).

Examples
--------
>>> class Counter(Maintained):
...     KIND, WHAT = "counter", "a counter"
...     def __init__(self):
...         self.record, self.progress, self.total = Versions(), None, 0
...     def _versions(self):
...         return self.record
...     def apply(self, n, *, version=None, label=None, before_commit=None):
...         target = self._next_version(version)
...         def merge():
...             self.total += n
...         self._commit(target, label, change=n, before_commit=before_commit, save=lambda labels: None,
...                      merge=merge)
...         return n
>>> c = Counter()
>>> c.apply(3), c.apply(4, version=2, label="file b"), c.version, c.labels, c.total
(3, 4, 2, ['batch 1', 'file b'], 7)
>>> c.apply(5, version=2)
Traceback (most recent call last):
...
faq.errors.BatchAlreadyAppliedError: [BATCH_ALREADY_APPLIED] ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from faq.incremental.change_log import keeps_changes, log_change
from faq.errors import BatchAlreadyAppliedError, StateDirectoryError, VersionGapError
from faq.events import Progress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

    from faq.incremental.change import BatchEvent
    from faq.incremental.store import Store

__all__ = ["Maintained", "Versions", "default_label"]


def default_label(version: int) -> str:
    """The label of a batch applied without one.

    >>> default_label(3)
    'batch 3'
    """
    return f"batch {version}"


class Versions:
    """The versions of a target: how many were applied, a label per version, and the store (None: in memory).

    ``labels[v - 1]`` is the label of version ``v``.
    """

    def __init__(self) -> None:
        self.version = 0
        self.labels: list[str] = []
        self.store: Optional["Store"] = None


class Maintained:
    """The one base of everything maintained under batches (see the module notes).

    A subclass sets :attr:`KIND` (the manifest's kind) and :attr:`WHAT` (for
    messages), holds ``progress`` (a callable taking
    :class:`~faq.incremental.change.BatchEvent`, or None), answers
    :meth:`_versions` (default: ``self.state``), :attr:`delta_names` and
    :meth:`delta_columns`, and implements ``apply(deltas, *, version=, label=,
    before_commit=)`` and the classmethod ``open(path, progress=)``.
    """

    #: The ``kind`` written in (and expected of) a saved manifest.
    KIND = ""
    #: The target in words, for messages ("a maintained query").
    WHAT = "a maintained state"

    progress: Progress = None

    # -- versions -------------------------------------------------------------------

    def _versions(self) -> Versions:
        """The record of versions, labels and store (a :class:`~faq.incremental.state.ResidentState` is one)."""
        return self.state  # type: ignore[attr-defined]

    @property
    def version(self) -> int:
        """The versions applied (0 for the initial state)."""
        return self._versions().version

    @property
    def path(self) -> Optional[str]:
        """The directory of the durable state (None without one: ``state=``)."""
        store = self._versions().store
        return None if store is None else store.path

    @property
    def labels(self) -> list[str]:
        """One label per version applied (``labels[v - 1]`` for version ``v``): batch files, stream batches."""
        return list(self._versions().labels)

    # -- the shape of every answer (faq.results) ---------------------------------------

    @property
    def plan(self) -> Any:
        """How the answer is kept: what ``explain()`` returns (a subclass implements ``explain``)."""
        return self.explain()  # type: ignore[attr-defined]

    @property
    def df(self) -> "DataFrame":
        """The current answer as a Spark DataFrame, made from the driver's rows (``table()``) when asked."""
        from faq.handback import spark_frame
        from faq.spark import get_session, real_session

        return spark_frame(real_session(get_session()), self.table())  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(version={self.version}, state={self.path!r})"

    # -- what a batch changes (the stream's view) ------------------------------------

    @property
    def delta_names(self) -> list[str]:
        """What a batch may change (factors, tables, the edges)."""
        raise NotImplementedError

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns a batch's rows of ``name`` are read from, those they must have)."""
        raise NotImplementedError

    # -- one batch ------------------------------------------------------------------

    def _next_version(self, version: Optional[int]) -> int:
        """The version the next batch makes; ``version`` (if given) must be it.

        Raises
        ------
        BatchAlreadyAppliedError
            ``version`` was reached already: the batch is not applied twice.
        VersionGapError
            ``version`` is beyond the next one.
        """
        current = self.version
        if version is not None and version != current + 1:
            if version <= current:
                raise BatchAlreadyAppliedError(version=version, current=current)
            raise VersionGapError(version=version, current=current)
        return current + 1

    def _commit(self, target: int, label: Optional[str], *, change: Any,
                before_commit: Optional[Callable[[Any], None]], save: Callable[[list[str]], None],
                merge: Optional[Callable[[], None]] = None) -> list[str]:
        """Commit version ``target``: ``before_commit(change)``, ``save(labels)`` (durable), ``merge()``, the version.

        ``save`` writes the version with its labels (the commit point; a
        target without a store saves nothing there) and ``merge`` changes the
        target in memory.  Returns the labels after the commit.
        """
        if before_commit is not None:  # a sink written before the commit holds every committed version
            before_commit(change)
        record = self._versions()
        if record.store is not None and keeps_changes(record.store.path):
            record.store.lock()  # the change log is the writer's: a writer whose state moved on is refused first
            log_change(record.store.path, target, change)  # before the commit point, as before_commit
        if record.store is not None:
            labels = [*record.labels, label or default_label(target)]
            save(labels)
            if merge is not None:
                merge()
            record.version, record.labels = target, labels
            return labels
        # In memory: the label appended in place (a copy of every label per batch would cost O(versions)),
        # taken back if the merge fails.
        labels = record.labels
        labels.append(label or default_label(target))
        try:
            save(labels)
            if merge is not None:
                merge()
        except BaseException:
            labels.pop()
            raise
        record.version = target
        return labels

    def _release_store(self) -> None:
        """Stop being the writer of the durable state (its lock is released; the state stays on disk).

        Every ``close()`` calls it; a later batch takes the lock again (and is
        refused if another writer committed meanwhile).
        """
        store = self._versions().store
        if store is not None:
            store.release()

    def _emit(self, event: "BatchEvent") -> None:
        """Hand a batch event to the ``progress`` callback (if any)."""
        if self.progress:
            self.progress(event)

    # -- resuming -------------------------------------------------------------------

    @classmethod
    def _saved_manifest(cls, path: str) -> dict[str, Any]:
        """The manifest saved in ``path``, which must hold a state of this kind.

        Raises
        ------
        StateDirectoryError
            No saved state there, or one of another kind.
        """
        from faq.incremental.store import Store

        store = Store(path)
        meta = store.manifest()
        if meta.get("kind") != cls.KIND:
            raise StateDirectoryError(store.path, f"it holds a {meta.get('kind')!r} state, not {cls.WHAT}")
        return meta

    # -- streaming ------------------------------------------------------------------

    def stream(self, changes: "DataFrame", *, checkpoint: str, **options: Any) -> "StreamingQuery":
        """Apply each micro-batch of a streaming DataFrame of changes, once (:func:`faq.incremental.streaming.stream`).

        Parameters
        ----------
        changes : DataFrame
            A streaming DataFrame (``spark.readStream...``) of changed rows,
            with the columns :meth:`delta_columns` names.
        checkpoint : str
            The streaming query's checkpoint location; restart from it to resume.
        **options
            ``factor``, ``factor_column``, ``sink``, ``trigger``, ``nulls``, ``name``.

        Returns
        -------
        StreamingQuery
            Each micro-batch makes one version labelled with its ``batchId``;
            a re-delivered one is skipped.  On Spark Connect the state must be
            durable (``state=``) on a path the server reaches.
        """
        from faq.incremental.streaming import stream

        return stream(self, changes, checkpoint=checkpoint, **options)
