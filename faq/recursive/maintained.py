"""Fixpoints kept current under insertions and deletions, on a resident index on the driver.

:class:`MaintainedFixpoint` keeps single-source paths (reachability,
shortest paths, widest paths) or connected components current as batches of
edges arrive.  With an idempotent ⊕ an inserted edge -- or a shorter weight
in min_plus, a wider capacity in max_min -- can only *improve* values
(docs/design.md, "Monoid fixpoints"), so an insertion restarts the semi-naive
iteration from the delta alone.  A deletion or a worse weight can make values
worse: only the nodes whose derivation used a removed edge are reset and
derived again (:mod:`faq.recursive.trimming`).

Where the state lives
---------------------
The current edges are a :class:`~faq.recursive.edges.EdgeRelation` on the
driver (a resident index, views ``(src, dst)`` and, once a deletion needs it,
``(dst, src)``; the weights as values; for components both directions of
every edge), keyed by the dense codes of a
:class:`~faq.incremental.domain.KeyDomain`; the answer is a numpy array of
values over the same codes, with a *parent* per code (the node whose edge
last strictly improved it).  This is the placement ``"driver"``: a batch runs
*no Spark job at all* (docs/design.md, "Resident indexes").  Creating the maintained fixpoint reads
the edges once (a count, to check the budget, and one collect) and solves the
first answer on the driver by the same propagation; edges given as tuples,
pandas or Arrow need no Spark at all.

When the edges' estimated index size is above the driver's budget
(:func:`faq.incremental.rules.budget_bytes`: ``budget=``, else the
session's ``spark.faq.localMemory``), or the semiring has no numpy form, the
placement is ``"executors"``: edges and answer stay cached on Spark and every
batch runs as Spark jobs (:mod:`faq.recursive.spark_placement`); there,
deletions and worse weights are *recomputed* (no trimming on Spark).  Both
placements are held the same way: the maintained fixpoint holds one
:class:`~faq.recursive.holders.FixpointHolder` (:attr:`MaintainedFixpoint.holder`)
and asks it everything that depends on where the state is.
:attr:`MaintainedFixpoint.placement`, :attr:`~MaintainedFixpoint.placement_reason`
and :meth:`~MaintainedFixpoint.explain` say which and why.

How a batch runs
----------------
1. the batch's insertions are ⊕-merged per pair and compared with the
   current weights (looked up in the index); its deletions are the pairs
   present of its ``-`` lines; a pair whose new value is *worse* (a longer
   weight, a narrower capacity) is removed and inserted again;
2. deletions (trimming, when there are any): the removed edges leave the
   index; the nodes whose parent edge was removed and their whole subtrees
   of the derivation forest are reset (to the zero; components: their own
   label), re-seeded from their in-edges from nodes not reset, and
   propagation runs from there.  Why the result is exact, and why parents set
   on strict improvement form a forest: :mod:`faq.recursive.trimming`;
3. insertions: the *effective* edges (new pairs and strict improvements) are
   a round of their own: their sources' current values ⊗ their weights,
   ⊕-ed into the targets (older edges have propagated those values already);
4. rounds follow from the nodes that improved, reading their out-edges from
   the index's base, overlay and the batch
   (:func:`~faq.recursive.propagate.propagate`), until nothing improves.
   More rounds than nodes means a value-improving cycle
   (:class:`~faq.errors.NegativeCycleError`; only checked when an
   edge is better than ``one``, e.g. negative in min_plus), more than
   ``max_iterations`` raises :class:`~faq.errors.FixpointNotConvergedError`;
5. only then is anything committed: the durable state first (if any), then
   the index and the answer in memory.  An error leaves edges and answer as
   they were.

Trimming is the choice for deletions because it costs what the removed edges
supported, not the graph: a deleted edge nobody's best path uses resets
nothing.  It needs values monotone along parent edges; with an edge better
than ``one`` (a negative weight in min_plus) a batch that removes or worsens
an edge is recomputed instead, as it is with ``recompute=True``: the batch's
deletions remove pairs, its insertions *set* their pair's value, and the
answer is solved from scratch on the driver.

What a batch returns
--------------------
The one :class:`~faq.incremental.change.Change` type: key column ``node``,
``extra`` column ``old`` (the value before; NaN for min_plus/max_min and
None for reachability/components when the node had none), ``diff`` (the new
value; the zero when a node is no longer reached), ``version``, ``seconds``,
``count`` (nodes with a value after the batch) and ``info`` (``batch``,
``iterations``, ``inserted``, ``deleted`` (pairs removed), ``trimmed`` (nodes
reset), ``recomputed``).

Durability
----------
With ``path=DIR`` the state (edges and answer) is kept in DIR through
:class:`~faq.recursive.fixpoint_state.FixpointState`: every batch commits a
version (its edges and values set or removed, as delta files, then the
manifest), :meth:`MaintainedFixpoint.open` reopens it without Spark (the
parents are rebuilt from the answer), and ``apply(batch, version=v)``
refuses a version applied already (:class:`~faq.errors.BatchAlreadyAppliedError`)
or beyond the next (:class:`~faq.errors.VersionGapError`).  The labels of the
batches applied (their file names) are kept, so a rerun can skip them
(:func:`faq.io.updates.pending`).  On the executors placement Spark writes
the edges and the answer into DIR, and :meth:`MaintainedFixpoint.open` reads
them back with Spark (:mod:`faq.recursive.spark_placement`, "Durable state
on the executors"): DIR must then be a path both the driver and the
executors reach.

A maintained fixpoint is a stream target
(:class:`~faq.incremental.durable.Maintained`, :func:`faq.incremental.streaming.stream`):
``m.stream(changes, checkpoint=..., sink=...)`` applies each micro-batch of
change rows (``src, dst[, weight], diff[, seq]``: :meth:`MaintainedFixpoint.apply`)
once, as one version labelled with its ``batchId``; the sink gets each
version's changed nodes.  Exactly once across processes needs ``path=``.

Examples
--------
>>> m = MaintainedFixpoint.paths([(1, 2, 5.0), (2, 3, 1.0)], source=1)   # tuples: no Spark job
>>> change = m.insert([(1, 3, 2.0), (3, 4, 1.0)])
>>> change.rows()                                                         # (node, old, version, diff)
[(3, 6.0, 1, 2.0), (4, nan, 1, 3.0)]
>>> m.placement, m.version, len(change), change.info["iterations"]
('driver', 1, 2, 3)
>>> change = m.delete([(1, 3)])                                          # trimmed: 3 and 4 reset, re-derived
>>> change.rows(), change.info["trimmed"], change.info["recomputed"]
([(3, 2.0, 2, 6.0), (4, 3.0, 2, 7.0)], 2, False)
>>> sorted(m.to_pandas().itertuples(index=False, name=None))
[(1, 0.0), (2, 5.0), (3, 6.0), (4, 7.0)]
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Union

import numpy as np

from faq.errors import InvalidDeltaError
from faq.factor import Factor
from faq.incremental.change import Change
from faq.incremental.durable import Maintained, Versions
from faq.incremental.rules import budget_bytes, estimated_bytes
from faq.incremental.store import Store, restoring
from faq.io.updates import UpdateBatch, read_batch, read_updates, update_files  # re-exported (__all__)
from faq.placement_policy import EXECUTORS, for_indexes
from faq.recursive.edge_input import CHANGE_COLUMNS, checked_edges, edge_table, row_count, split_changes
from faq.recursive.fixpoint_state import EDGE, FixpointState
from faq.recursive.problem import FixpointProblem
from faq.recursive.propagate import fixpoint_ops, no_fixpoint_form
from faq.recursive.seminaive import DEFAULT_MAX_ITERATIONS, DST, MIN_LABEL, SRC, VALUE, WEIGHT, check_semiring
from faq.recursive.driver_placement import DriverFixpoint
from faq.recursive.holders import FixpointHolder
from faq.recursive.spark_placement import ExecutorsFixpoint
from faq.scope import Owner, Scope
from faq.results import Explanation
from faq.spark_ui import described

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["MaintainedFixpoint", "Changes", "maintain_paths", "maintain_components", "fixpoint_index_bytes",
           "UpdateBatch", "read_batch", "read_updates", "update_files"]

KIND = "fixpoint"  # the manifest's kind

EdgesLike = Union[Factor, "DataFrame", Iterable[tuple], Any]
Progress = Callable[[Any], None]

#: What :meth:`MaintainedFixpoint.insert` returned before the one change type (kept as a name).
Changes = Change


# --- the maintained fixpoint ---------------------------------------------------------------


class MaintainedFixpoint(FixpointProblem, Maintained, Owner):
    """A fixpoint answer (paths from a source, or connected components) kept current (module notes).

    Build one with :meth:`paths` or :meth:`components` (or reopen a saved one
    with :meth:`open`); feed it batches with :meth:`insert`, :meth:`delete`
    or :meth:`apply`; read the answer with :meth:`table`, :meth:`to_pandas`,
    :meth:`value` or :attr:`state` (a Spark factor); :meth:`explain` says
    where the state lives and how deletions run.

    Parameters
    ----------
    edges : Factor, DataFrame, pandas, Arrow table or tuples
        The initial edges: a factor with two variables, or ``src``/``dst``
        columns and an optional ``weight`` (or ``value``) column, or tuples
        ``(src, dst[, weight])``.
    semiring : str or Semiring
        Idempotent; ``boolean``, ``min_plus`` or ``max_min`` for paths.
    source : int, optional
        Paths from this node (``None`` with ``components=True``).
    components : bool
        Connected components (min labels on the symmetric graph).
    nodes : iterable of int or DataFrame, optional
        Extra (isolated) nodes, for components.
    default_weight : float, optional
        Value of an edge given without one (default 1.0 -- the hop count an
        unweighted edge list gives -- for min_plus and max_min; ignored for
        boolean and components).
    max_iterations : int
        Rounds per batch (and for the first answer) before
        :class:`FixpointNotConvergedError`.
    progress : callable or Reporter, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` when a batch
        starts and ends, and short notes (strings) while the first answer is
        computed -- through its ``note`` method when it has one (a
        :class:`faq.progress.Reporter`), else as plain calls.
    path : str, optional
        Keep the state durable in this directory (it must not hold one yet:
        reopen that with :meth:`open`).
    placement : {"auto", "driver", "executors"}
        Where edges and answer live; ``auto``: the driver while they fit
        ``budget``.
    budget : int or str, optional
        The driver's index budget (bytes, or e.g. ``'512m'``).

    Attributes
    ----------
    placement, placement_reason : str
        ``"driver"`` (resident index, no Spark job per batch) or
        ``"executors"`` (Spark path), and why.
    holder : FixpointHolder
        What holds the edges and the answer there
        (:class:`~faq.recursive.driver_placement.DriverFixpoint` or
        :class:`~faq.recursive.spark_placement.ExecutorsFixpoint`).
    version : int
        Batches applied (0 after the first answer).
    initial_iterations, initial_seconds
        Of the first answer.
    """

    KIND, WHAT = KIND, "a maintained fixpoint"

    def __init__(
        self,
        edges: EdgesLike,
        semiring: Any = "min_plus",
        *,
        source: Optional[int] = None,
        components: bool = False,
        nodes: Any = None,
        default_weight: Optional[float] = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        progress: Optional[Progress] = None,
        path: Optional[str] = None,
        placement: str = "auto",
        budget: Optional[Union[int, str]] = None,
        _restored: Optional[tuple[FixpointState, dict]] = None,
    ) -> None:
        self._define(semiring, source, components, default_weight, max_iterations)
        started = time.perf_counter()
        self.progress = progress
        self._note = _notes(progress)
        self.ops = fixpoint_ops(self.semiring)
        self.budget = budget_bytes(budget)
        self.scope = Scope()  # the holder
        self.holder: FixpointHolder
        if _restored is not None:
            state, meta = _restored
            self.name, self.placement_reason = meta.get("name", "edges"), ""
            kind = ExecutorsFixpoint if isinstance(state, Store) else DriverFixpoint
            self._hold(kind(self, restored=(state, meta)))
            self.initial_seconds = 0.0
            return
        if path is not None:
            Store(path).check_new()  # a path that cannot hold the state is refused before any work
        self.name = edges.name if isinstance(edges, Factor) else "edges"
        rows = row_count(edges)
        size = fixpoint_index_bytes(rows, components)
        no_numpy = no_fixpoint_form(self.semiring) if self.ops is None else ""
        self.placement, self.placement_reason = for_indexes(placement, size, self.budget, no_numpy)
        self._note(f"{rows} edge(s); answer kept on the {self.placement}: {self.placement_reason}")
        self._hold((ExecutorsFixpoint if self.placement == EXECUTORS else DriverFixpoint)(self, edges, nodes))
        self.initial_seconds = time.perf_counter() - started
        if path is not None:
            self.holder.attach(path)

    def _hold(self, holder: FixpointHolder) -> None:
        """Hold the state through ``holder`` (its placement, reason and reopened name are the fixpoint's)."""
        self.holder = self.scope.adopt(holder)
        self.placement, self.placement_reason, self.name = holder.where, holder.reason, holder.name
        if holder.where != EXECUTORS:
            self.ops = holder.ops  # a reopened state's

    # -- constructors: paths() and components() (FixpointProblem), open() ----------------

    @classmethod
    def open(cls, path: str, *, progress: Optional[Progress] = None,
             max_iterations: Optional[int] = None) -> "MaintainedFixpoint":
        """Reopen a state saved with ``path=`` at its last committed version.

        A state saved on the driver placement reopens there with no Spark
        job; one saved on the executors is read back by Spark and stays there.

        Raises
        ------
        StateDirectoryError
            No saved state in ``path``, or one of another kind.
        """
        meta = cls._saved_manifest(path)
        with restoring(path):
            components = meta["problem"] == "components"
            semiring = MIN_LABEL if components else check_semiring(meta["semiring"])
            if meta.get("placement") == EXECUTORS:
                store = Store(path)
                state, meta = store, store.committed()
            else:
                state, meta = FixpointState.load(path, semiring)
            return cls(None, semiring, source=meta.get("source"), components=components,
                       default_weight=meta.get("default_weight"),
                       max_iterations=int(max_iterations or meta.get("max_iterations", DEFAULT_MAX_ITERATIONS)),
                       progress=progress, _restored=(state, meta))

    # -- reading ------------------------------------------------------------------------

    def _versions(self) -> Versions:
        """Versions and labels: the holder's (saved with its state, or in memory)."""
        return self.holder.versions

    batches = Maintained.version  # the name before versions

    @property
    def initial_iterations(self) -> int:
        """Rounds of the first answer."""
        return self.holder.initial_iterations

    @property
    def size(self) -> int:
        """Nodes with a value (reachable nodes; every node for components)."""
        return self.holder.size

    @property
    def edge_rows(self) -> int:
        """Edges in the index (for components: both directions)."""
        return self.holder.edge_rows

    def table(self) -> "pa.Table":
        """The answer ``(node, value)`` as an Arrow table, sorted by node (on the driver placement: no Spark job)."""
        return self.holder.table()

    def to_pandas(self):
        """The answer as a pandas DataFrame ``(node, value)``, sorted by node."""
        return self.table().to_pandas()

    def head(self, n: int = 20) -> list[tuple]:
        """The first ``n`` rows ``(node, value)`` by node."""
        return self.holder.head(n)

    def value(self, node: int) -> Any:
        """The value of ``node`` (None when it has none)."""
        return self.holder.value(node)

    @property
    def state(self) -> Factor:
        """The current answer as a factor ``(node) -> value`` on Spark (made on first use after a change)."""
        return self.holder.state

    @property
    def edges(self) -> Factor:
        """The current edges ``(src, dst) -> weight`` on Spark (for components: both directions)."""
        return self.holder.edges

    # -- updates ------------------------------------------------------------------------

    def insert(self, edges: EdgesLike, *, recompute: bool = False, version: Optional[int] = None,
               label: Optional[str] = None, name: str = "") -> Change:
        """Insert edges (new pairs, or new weights for existing ones); return the change of the answer.

        ``edges`` as for the constructor.  A better weight (shorter, wider)
        improves values incrementally; a worse one is taken as a deletion of
        the pair and an insertion of its new weight (module notes).
        ``recompute=True`` solves the answer from scratch instead whenever
        the batch removes or worsens an edge.  ``version`` (the version this
        batch makes) and ``label`` (a name kept with the state; ``name`` is
        the older spelling) as for :meth:`apply`.

        Raises
        ------
        NegativeCycleError, FixpointNotConvergedError
            The answer and the edges stay as they were.
        """
        return self._batch(edges, None, recompute=recompute, version=version, label=label or name or None)

    def delete(self, edges: EdgesLike, *, recompute: bool = False, version: Optional[int] = None,
               label: Optional[str] = None, name: str = "") -> Change:
        """Delete edges (pairs ``(src, dst)``; a weight given is ignored, absent pairs are skipped).

        On the driver the nodes derived through a deleted edge are trimmed and
        derived again (module notes); ``recompute=True`` solves from scratch.
        """
        return self._batch(None, edges, recompute=recompute, version=version, label=label or name or None)

    @described("maintained fixpoint")
    def apply(self, batch: Union[UpdateBatch, Mapping[str, Any], Any], *, recompute: bool = False,
              version: Optional[int] = None, label: Optional[str] = None,
              before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """Apply an :class:`UpdateBatch` (e.g. from :func:`read_batch`): its deletions, then its insertions.

        Parameters
        ----------
        batch : UpdateBatch, or change rows
            Its label defaults to its name.  Or change rows (an Arrow table,
            pandas or a Spark DataFrame; also as ``{"edge": rows}``, as a
            stream gives them): ``src``, ``dst``, optional ``weight`` (or
            ``value``), ``diff`` (+1 insert, -1 delete; +1 when absent) and
            ``seq`` (the last operation on a pair wins; without it deletions
            come first): :func:`~faq.recursive.edge_input.split_changes`.
            Ids that are not whole int64 numbers, a null end, a NaN weight
            or a fractional ``diff`` refuse the batch before anything changes
            (:class:`~faq.errors.InvalidBatchError`; so do bad ids or weights
            given to :meth:`insert` and :meth:`delete`).
        recompute : bool
            Take deletions and worsening updates by recomputing from scratch
            (default: trimming, on the driver).
        version : int, optional
            The version this batch makes (``self.version + 1``): a version
            applied already raises :class:`BatchAlreadyAppliedError`, a later
            one :class:`VersionGapError` -- a batch never counts twice.
        label : str, optional
        before_commit : callable, optional
            Called with the batch's :class:`~faq.incremental.change.Change`
            once it is known and before the state commits it (a stream's
            sink); an error it raises leaves the state as it was (on the
            driver placement).
        """
        if isinstance(batch, UpdateBatch):
            return self._batch(batch.inserts or None, batch.deletes or None, recompute=recompute, version=version,
                               label=label or batch.name, batch=batch, before_commit=before_commit)
        if isinstance(batch, Mapping):
            batch = _edge_rows_of(batch)
        checked = checked_edges(batch, target=self.WHAT, changes=True)  # before split_changes drops or merges a row
        inserts, deletes = split_changes(checked) if batch is not None else (None, None)
        return self._batch(inserts, deletes, recompute=recompute, version=version, label=label,
                           before_commit=before_commit)

    # -- the stream's view -----------------------------------------------------------------

    @property
    def delta_names(self) -> list[str]:
        """What a batch changes: the one relation ``edge``."""
        return [EDGE]

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns of change rows that must not be null, those they must have): see :meth:`apply`.

        A null weight is no error: a deletion has none, an insertion without
        one takes the default weight.
        """
        return [c for c in CHANGE_COLUMNS if c not in (WEIGHT, VALUE)], [SRC, DST]

    def stream(self, changes: "DataFrame", *, checkpoint: str, **options: Any) -> "StreamingQuery":
        """Apply each micro-batch of a streaming DataFrame of edge changes, once.

        The rows are change rows (:meth:`apply`): ``src``, ``dst``, optional
        ``weight``, ``diff`` (+1 insert, -1 delete) and ``seq``.  A sink
        (``sink=DIR``) receives each version's changed nodes (``node``,
        ``old``, ``version``, ``diff`` = the new value).  Options and
        exactly-once as for :func:`faq.incremental.streaming.stream`; durable
        across processes with ``path=`` (on either placement).
        """
        return super().stream(changes, checkpoint=checkpoint, **options)

    def recompute(self) -> Change:
        """Recompute the answer from scratch on the current edges; returns what differed (normally nothing).

        Not a batch: the version stays.
        """
        return self.holder.recompute(time.perf_counter())

    @property
    def deletions(self) -> str:
        """How a deletion or a worse weight is taken now: trimming, or recomputation (and why)."""
        return self.holder.deletions

    def explain(self) -> Explanation:
        """Where the state lives and how insertions and deletions run, one line each."""
        where = (f"{self.describe()}: {self.edge_rows} edge row(s), answer on the {self.placement} "
                 f"({self.placement_reason})")
        kept = "in memory only" if self.path is None else f"saved in {self.path} ({self.holder.writer})"
        return Explanation(where, (f"insertions: {self.holder.inserts}", f"deletions: {self.deletions}",
                                   f"state: {kept}"))

    # -- one batch ------------------------------------------------------------------------

    def _batch(self, inserts: Any, deletes: Any, *, recompute: bool, version: Optional[int],
               label: Optional[str], batch: Optional[UpdateBatch] = None,
               before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        started = time.perf_counter()
        target = self._next_version(version)
        label = label or f"batch {target}"
        if isinstance(deletes, (list, tuple)) and not deletes:
            deletes = None
        # ids integral, weights not NaN: checked before the holder touches edges or answer (in memory or on disk)
        inserts, deletes = (checked_edges(e, target=self.WHAT) for e in (inserts, deletes))
        return self.holder.batch(inserts, deletes, recompute=recompute, target=target, label=label, update=batch,
                                 started=started, before_commit=before_commit)

    # -- inputs ----------------------------------------------------------------------------

    def _arrays(self, edges: EdgesLike, *, weights: bool = True, initial: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, weight)`` numpy arrays of any edges-like input.

        Rows with a null end are dropped; a missing weight is the default
        weight; weights are in the semiring (for boolean and components: one).
        A Spark DataFrame or Factor is collected (one job; the initial edges
        are the resident index by design, a batch is small).
        """
        ops = self.ops or fixpoint_ops(MIN_LABEL)
        src, dst, weight = edge_table(edges)
        if not weights or self.components or self.semiring.value_type == "boolean":
            return src, dst, np.full(len(src), ops.one, dtype=ops.dtype)
        weight = np.where(np.isnan(weight), self.default_weight, weight).astype(ops.dtype, copy=False)
        return src, dst, weight

    def _manifest(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "placement": self.placement,
            "problem": "components" if self.components else "paths",
            "semiring": self.semiring.name,
            "source": self.source,
            "default_weight": None if self.components else _python(self.default_weight),
            "max_iterations": self.max_iterations,
            "name": self.name,
            "initial_iterations": self.initial_iterations,
        }

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Release what the holder holds (Spark caches, or the resident index); a saved state stays on disk."""
        if getattr(self, "holder", None) is not None:
            self._release_store()
        self.scope.close()

    def __repr__(self) -> str:
        return (f"MaintainedFixpoint({self.name!r}, {self.describe()}, version={self.version}, "
                f"placement={self.placement!r})")


def fixpoint_index_bytes(rows: int, components: bool) -> int:
    """The estimated driver memory of a fixpoint over ``rows`` edges: the edge index and the answer.

    Components keep both directions of every edge.

    >>> fixpoint_index_bytes(1000, False) < fixpoint_index_bytes(1000, True)
    True
    """
    return estimated_bytes(rows * (2 if components else 1), 2, 1) + estimated_bytes(rows, 1, 1)


def maintain_paths(edges: EdgesLike, source: int, semiring: Any = "min_plus", **kw: Any) -> MaintainedFixpoint:
    """Shorthand for :meth:`MaintainedFixpoint.paths`."""
    return MaintainedFixpoint.paths(edges, source, semiring, **kw)


def maintain_components(edges: EdgesLike, nodes: Any = None, **kw: Any) -> MaintainedFixpoint:
    """Shorthand for :meth:`MaintainedFixpoint.components`."""
    return MaintainedFixpoint.components(edges, nodes=nodes, **kw)


# --- helpers -----------------------------------------------------------------------------

def _notes(progress: Any) -> Callable[[str], None]:
    """Where notes go: a Reporter takes them through ``note``; a plain callable gets :class:`~faq.events.NoteEvent` s."""
    from faq.events import notes_to

    return notes_to(progress)


def _edge_rows_of(deltas: Mapping[str, Any]) -> Any:
    """The edge rows of a batch given by relation (``{"edge": rows}``, as a stream gives it)."""
    unknown = [name for name in deltas if name != EDGE]
    if unknown:
        raise InvalidDeltaError(unknown[0], f"a maintained fixpoint changes only {EDGE!r}, not {unknown[0]!r}",
                                known=[EDGE])
    return deltas.get(EDGE)


def _python(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
