"""Fixpoints kept current under insert-only (monotone) updates, on a resident index on the driver.

:class:`MaintainedFixpoint` keeps single-source paths (reachability,
shortest paths, widest paths) or connected components current as batches of
edges arrive.  With an idempotent ⊕ an inserted edge -- or a shorter weight
in min_plus, a wider capacity in max_min -- can only *improve* values
(DESIGN.md §3, "Monoid fixpoints"), so a batch restarts the semi-naive
iteration from the delta alone.

Where the state lives
---------------------
The current edges are a :class:`~faq.incremental.index.ResidentRelation` on
the driver (view ``(src, dst)``, the weights as values; for components both
directions of every edge), keyed by the dense codes of a
:class:`~faq.incremental.domain.KeyDomain`; the answer is a numpy array of
values over the same codes (and, for durability, a relation ``answer(node)``
of the same state).  This is the placement ``"driver"``: an insert batch
runs *no Spark job at all* (DESIGN.md §7).  Creating the maintained fixpoint
reads the edges once (a count, to check the budget, and one collect) and
solves the first answer on the driver by the same propagation; edges given
as tuples, pandas or Arrow need no Spark at all.

When the edges' estimated index size is above the driver's budget
(:func:`faq.incremental.rules.budget_bytes`: ``budget=``,
``$FAQ_INDEX_BUDGET`` or 2 GiB), or the semiring has no numpy form, the
placement is ``"executors"``: edges and answer stay cached on Spark and every
batch runs as Spark jobs, as before the resident index
(:class:`~faq.recursive.spark_maintained.SparkFixpoint`, about 17 jobs per
batch); :attr:`MaintainedFixpoint.placement` and
:attr:`~MaintainedFixpoint.placement_reason` say which and why.  That
placement keeps no durable state.

How an insert batch runs
------------------------
1. the batch is ⊕-merged per pair and compared with the current weights
   (looked up in the index): a pair whose new value is *worse* (a longer
   weight, a narrower capacity) is a *worsening update*, a ``-`` line a
   *deletion*; both raise :class:`~faq.errors.NonMonotoneUpdateError`
   unless ``recompute=True``;
2. the *effective* edges (new pairs and strict improvements) are the first
   round: their sources' current values ⊗ their weights, ⊕-ed into the
   targets (older edges have propagated those values already);
3. rounds follow from the nodes that improved, reading their out-edges from
   the index's base, overlay and the batch
   (:func:`~faq.recursive.propagate.propagate`), until nothing improves.
   More rounds than nodes means a value-improving cycle
   (:class:`~faq.errors.NegativeCycleError`; only checked when an
   edge is better than ``one``, e.g. negative in min_plus), more than
   ``max_iterations`` raises :class:`~faq.errors.FixpointNotConvergedError`;
4. only then is anything committed: the durable state first (if any), then
   the effective edges into the index's overlay and the improved values into
   the answer.  An error leaves edges and answer as they were.

``recompute=True`` takes deletions and worsening updates: the batch's
deletions remove pairs, its insertions *set* their pair's value, and the
answer is recomputed from scratch by the same propagation on the driver (the
edges are there already: shipping them to Spark and the answer back would
cost more than the solve), and the nodes whose value differs are reported (a
node no longer reached gets the semiring's zero as its ``diff``).

What a batch returns
--------------------
The one :class:`~faq.incremental.change.Change` type: key column ``node``,
``extra`` column ``old`` (the value before; NaN for min_plus/max_min and
None for reachability/components when the node had none), ``diff`` (the new
value), ``version``, ``seconds``, ``count`` (nodes with a value after the
batch) and ``info`` (``batch``, ``iterations``, ``inserted``, ``deleted``,
``recomputed``).

Durability
----------
With ``path=DIR`` the state (edges and answer) is kept in DIR through
:class:`~faq.incremental.state.ResidentState`: every batch commits a version
(its effective edges and improved values as delta files, then the manifest),
:meth:`MaintainedFixpoint.open` reopens it without Spark, and
``apply(batch, version=v)`` refuses a version applied already
(:class:`~faq.errors.BatchAlreadyAppliedError`) or beyond the next
(:class:`~faq.errors.VersionGapError`).  The labels of the
batches applied (their file names) are kept, so a rerun can skip them
(:func:`faq.io.updates.pending`).

Examples
--------
>>> m = MaintainedFixpoint.paths([(1, 2, 5.0), (2, 3, 1.0)], source=1)   # tuples: no Spark job
>>> change = m.insert([(1, 3, 2.0), (3, 4, 1.0)])
>>> change.rows()                                                         # (node, old, version, diff)
[(3, 6.0, 1, 2.0), (4, nan, 1, 3.0)]
>>> m.placement, m.version, len(change), change.info["iterations"]
('driver', 1, 2, 3)
>>> sorted(m.to_pandas().itertuples(index=False, name=None))
[(1, 0.0), (2, 5.0), (3, 2.0), (4, 3.0)]
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union

import numpy as np

from faq.errors import (
    BatchAlreadyAppliedError,
    FAQValueError,
    NonMonotoneUpdateError,
    StateDirectoryError,
    VersionGapError,
)
from faq.factor import Factor
from faq.incremental.change import BatchEvent, Change
from faq.incremental.domain import SPAN, KeyDomain
from faq.incremental.index import KeyedRows, ResidentRelation, View, build_run, find_rows, merge_rows
from faq.incremental.rules import DRIVER, EXECUTORS, budget_bytes, choose_placement, estimated_bytes
from faq.incremental.state import ResidentState
from faq.io.updates import UpdateBatch, read_batch, read_updates, update_files  # noqa: F401 - re-exported
from faq.joins.csr import build_trie
from faq.recursive.problem import FixpointProblem
from faq.recursive.propagate import better_than_one, fixpoint_ops, propagate
from faq.recursive.seminaive import (
    DEFAULT_MAX_ITERATIONS,
    DST,
    MIN_LABEL,
    NODE,
    SRC,
    VALUE,
    WEIGHT,
    _check_binary,
    _check_semiring,
)
from faq.scope import Owner, Scope
from faq.spark import is_dataframe

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from faq.recursive.spark_maintained import SparkChanges, SparkFixpoint

OLD = "old"
EDGE, ANSWER = "edge", "answer"  # the state's relations
KIND = "fixpoint"  # the manifest's kind
FORWARD = View((0, 1))  # the one view the propagation reads: (src, dst)
# Above this many unknown key values, new codes are added in one vectorised step (KeyDomain.encode
# adds them one by one: right for a batch, slow for reopening a state of millions of edges).
_BULK_CODES = 4096

EdgesLike = Union[Factor, "DataFrame", Iterable[tuple], Any]
Progress = Callable[[Any], None]

#: What :meth:`MaintainedFixpoint.insert` returned before the one change type (kept as a name).
Changes = Change


# --- the resident state -----------------------------------------------------------------


class _FixpointState(ResidentState):
    """A :class:`ResidentState` that adds unknown key values to the domain in bulk.

    (Reopening a state encodes every edge.)  Its semiring may be
    :data:`MIN_LABEL`, component labels, like any semiring with a numpy form.
    """

    def rows(self, name: str, table: "pa.Table", value: Optional[str] = "value", columns: Any = None,
             merge: bool = True, keep_zeros: bool = False) -> KeyedRows:
        columns = list(columns if columns is not None else self.relations[name].columns)
        if all(table.column(c).null_count == 0 for c in columns):
            self.domain = _with_values(self.domain, [np.asarray(table.column(c).to_numpy()) for c in columns])
        return super().rows(name, table, value, columns, merge, keep_zeros)


def _with_values(domain: KeyDomain, columns: list[np.ndarray]) -> KeyDomain:
    """``domain`` with the unknown values of ``columns`` appended when they are many (codes kept)."""
    import pandas as pd

    parts = [np.asarray(c) for c in columns if len(c)]
    if not parts:
        return domain
    values = np.concatenate(parts)
    domain.fold()  # lookups below are then one vectorised hash probe
    unknown = values[domain.lookup(values) < 0]
    if len(unknown) < _BULK_CODES:
        return domain
    known = domain.values()
    added = np.asarray(pd.unique(unknown))
    if len(known) + len(added) >= SPAN:  # pragma: no cover - 2^31 distinct nodes
        raise OverflowError("more than 2^31 distinct node ids in one maintained fixpoint")
    return KeyDomain(np.concatenate([known, added.astype(known.dtype, copy=False)]) if len(known) else added)


# --- the maintained fixpoint ---------------------------------------------------------------


class MaintainedFixpoint(FixpointProblem, Owner):
    """A fixpoint answer (paths from a source, or connected components) kept current (module notes).

    Build one with :meth:`paths` or :meth:`components` (or reopen a saved one
    with :meth:`open`); feed it batches with :meth:`insert`, :meth:`delete`
    (``recompute=True`` only) or :meth:`apply`; read the answer with
    :meth:`table`, :meth:`to_pandas`, :meth:`value` or :attr:`state` (a Spark
    factor).

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
    version : int
        Batches applied (0 after the first answer).
    initial_iterations, initial_seconds
        Of the first answer.
    """

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
        _restored: Optional[tuple[ResidentState, dict]] = None,
    ) -> None:
        self._define(semiring, source, components, default_weight, max_iterations)
        started = time.perf_counter()
        self.progress = progress
        self._note, self._event = _channels(progress)
        self.ops = fixpoint_ops(self.semiring)
        self.budget = budget_bytes(budget)
        self.scope = Scope()  # the Spark fixpoint when the answer lives on the executors
        self._spark: Optional["SparkFixpoint"] = None
        self._spark_version = 0
        self._spark_labels: list[str] = []
        self._factor: Optional[Factor] = None  # the answer as a Spark factor, made on first use
        if _restored is not None:
            self._restore(*_restored)
            return
        self.name = edges.name if isinstance(edges, Factor) else "edges"
        rows = _row_count(edges)
        size = estimated_bytes(rows * (2 if components else 1), 2, 1) + estimated_bytes(rows, 1, 1)
        if self.ops is None:
            self.placement, self.placement_reason = EXECUTORS, f"semiring {self.semiring.name!r} has no numpy form"
        else:
            self.placement, self.placement_reason = choose_placement(size, self.budget, placement)
        self._note(f"{rows} edge(s); answer kept on the {self.placement}: {self.placement_reason}")
        if self.placement == EXECUTORS:
            if path is not None:
                raise FAQValueError("a durable state (path=) needs the answer on the driver: "
                                    f"{self.placement_reason}; raise the budget (budget=, $FAQ_INDEX_BUDGET)",
                                    argument="path")
            self._start_spark(edges, nodes)
        else:
            self._start_driver(edges, nodes)
        self.initial_seconds = time.perf_counter() - started
        if path is not None:
            self.resident.attach(path, self._manifest())

    # -- constructors: paths() and components() (FixpointProblem), open() ----------------

    @classmethod
    def open(cls, path: str, *, progress: Optional[Progress] = None,
             max_iterations: Optional[int] = None) -> "MaintainedFixpoint":
        """Reopen a state saved with ``path=`` at its last committed version (no Spark needed).

        Raises
        ------
        StateDirectoryError
            No saved state in ``path``, or one of another kind.
        """
        from faq.incremental.store import Store

        store = Store(path)
        meta = store.manifest()
        if meta.get("kind") != KIND:
            raise StateDirectoryError(store.path, f"it holds a {meta.get('kind')!r} state, not a maintained fixpoint")
        components = meta["problem"] == "components"
        semiring = MIN_LABEL if components else _check_semiring(meta["semiring"])
        state, meta = _FixpointState.load(path, semiring)
        return cls(None, semiring, source=meta.get("source"), components=components,
                   default_weight=meta.get("default_weight"),
                   max_iterations=int(max_iterations or meta.get("max_iterations", DEFAULT_MAX_ITERATIONS)),
                   progress=progress, _restored=(state, meta))

    def _start_driver(self, edges: EdgesLike, nodes: Any) -> None:
        """Collect the edges into the resident index and solve the first answer on the driver."""
        src, dst, weight = self._arrays(edges, initial=True)
        extra = _node_array(nodes) if self.components else np.zeros(0, dtype=np.int64)
        ends = [src, dst, extra] + ([] if self.components else [np.array([self.source], dtype=np.int64)])
        state = _FixpointState(self.semiring)
        state.domain = KeyDomain.of(ends)
        s, d = state.domain.encode(src), state.domain.encode(dst)
        state.relations[EDGE] = ResidentRelation.build(EDGE, (SRC, DST), self._edge_rows(s, d, weight), self.ops)
        state.key_types[EDGE] = {SRC: "bigint", DST: "bigint"}
        self.resident = state
        self._values = np.full(len(state.domain), self.ops.zero, dtype=self.ops.dtype)
        self._edges = len(state.relations[EDGE].base)
        self._may_cycle = self._edges_may_cycle(state.relations[EDGE].base)
        # components: every node known is a node of the answer
        seeds = np.arange(len(state.domain), dtype=np.int64) if self.components else None
        values, iterations = self._solve(state.relations[EDGE].runs(FORWARD), seeds)
        self._values = values
        self.initial_iterations = iterations
        answer = np.flatnonzero(values != self.ops.zero)
        state.relations[ANSWER] = ResidentRelation(ANSWER, (NODE,), KeyedRows((answer,), values[answer]), self.ops)
        state.key_types[ANSWER] = {NODE: "bigint"}
        self._count = len(answer)

    def _start_spark(self, edges: EdgesLike, nodes: Any) -> None:
        from faq.recursive.spark_maintained import SparkFixpoint

        factor = self._spark_factor(edges)
        self._spark = self.scope.adopt(SparkFixpoint(
            factor, self.semiring, source=self.source, components=self.components, nodes=nodes,
            default_weight=None if self.components else self.default_weight,
            max_iterations=self.max_iterations, progress=self._note,
        ))
        self.initial_iterations = self._spark.initial_iterations
        self.resident = None

    def _restore(self, state: ResidentState, meta: dict) -> None:
        self.placement, self.placement_reason = DRIVER, "reopened from a saved state"
        self.name = meta.get("name", "edges")
        self.resident = state
        self.ops = state.ops
        answer = state.relations[ANSWER].current()
        self._values = np.full(len(state.domain), self.ops.zero, dtype=self.ops.dtype)
        if len(answer):
            self._values[answer.keys[0]] = answer.values_or_ones(self.ops)
        self._count = len(answer)
        edges = state.relations[EDGE].current()
        self._edges = len(edges)
        self._may_cycle = self._edges_may_cycle(edges)
        self.initial_iterations = int(meta.get("initial_iterations", 0))
        self.initial_seconds = 0.0

    # -- reading ------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The number of batches applied (each :meth:`apply` / :meth:`insert` makes one version)."""
        return self._spark_version if self._spark is not None else self.resident.version

    batches = version  # the name before versions

    @property
    def labels(self) -> list[str]:
        """The label (e.g. the file name) of each batch applied, version 1 first."""
        return list(self._spark_labels if self._spark is not None else self.resident.labels)

    @property
    def path(self) -> Optional[str]:
        """The directory of the durable state (None when there is none)."""
        store = None if self.resident is None else self.resident.store
        return None if store is None else store.path

    @property
    def size(self) -> int:
        """Nodes with a value (reachable nodes; every node for components)."""
        if self._spark is not None:
            return self._spark.state.df.count()
        return self._count

    @property
    def edge_rows(self) -> int:
        """Edges in the index (for components: both directions)."""
        if self._spark is not None:
            return self._spark.edge_rows
        return self._edges

    def table(self) -> "pa.Table":
        """The answer ``(node, value)`` as an Arrow table, sorted by node (from the driver: no Spark job)."""
        import pyarrow as pa

        if self._spark is not None:
            return self._spark.state.df.orderBy(NODE).toArrow()
        codes = np.flatnonzero(self._values[: len(self.resident.domain)] != self.ops.zero)
        nodes = self.resident.domain.decode(codes).astype(np.int64, copy=False)
        order = np.argsort(nodes, kind="stable")
        return pa.table({NODE: nodes[order], VALUE: self._values[codes][order]})

    def to_pandas(self):
        """The answer as a pandas DataFrame ``(node, value)``, sorted by node."""
        return self.table().to_pandas()

    def head(self, n: int = 20) -> list[tuple]:
        """The first ``n`` rows ``(node, value)`` by node."""
        if self._spark is not None:
            return [tuple(r) for r in self._spark.state.df.orderBy(NODE).limit(n).collect()]  # at most n rows
        table = self.table().slice(0, n)
        return list(zip(table.column(NODE).to_pylist(), table.column(VALUE).to_pylist()))

    def value(self, node: int) -> Any:
        """The value of ``node`` (None when it has none)."""
        if self._spark is not None:
            from pyspark.sql import functions as F

            row = self._spark.state.df.where(F.col(NODE) == int(node)).first()  # one row
            return None if row is None else row[VALUE]
        code = self.resident.domain.lookup(np.array([int(node)], dtype=np.int64))[0]
        if code < 0 or self._values[code] == self.ops.zero:
            return None
        return self._values[code].item()

    @property
    def state(self) -> Factor:
        """The current answer as a factor ``(node) -> value`` on Spark (made on first use after a change)."""
        if self._spark is not None:
            return self._spark.state
        if self._factor is None:
            from faq.spark import get_session

            table = self.table()
            schema = f"{NODE} bigint, {VALUE} {self.semiring.value_type}"
            df = get_session().createDataFrame(table.to_pandas() if table.num_rows else [], schema)
            self._factor = Factor(df=df, variables=(NODE,), semiring=self.semiring, value=VALUE, name=f"{self.name}*")
        return self._factor

    @property
    def edges(self) -> Factor:
        """The current edges ``(src, dst) -> weight`` on Spark (for components: both directions)."""
        if self._spark is not None:
            return self._spark.edges
        from faq.spark import get_session

        table = self.resident.table(EDGE, value=WEIGHT)
        schema = f"{SRC} bigint, {DST} bigint, {WEIGHT} {self.semiring.value_type}"
        df = get_session().createDataFrame(table.to_pandas() if table.num_rows else [], schema)
        return Factor(df=df, variables=(SRC, DST), semiring=self.semiring, value=WEIGHT, name=self.name)

    # -- updates ------------------------------------------------------------------------

    def insert(self, edges: EdgesLike, *, recompute: bool = False, version: Optional[int] = None,
               label: Optional[str] = None, name: str = "") -> Change:
        """Insert edges (new pairs, shorter weights, wider capacities); return the change of the answer.

        ``edges`` as for the constructor.  ``version`` (the version this batch
        makes) and ``label`` (a name kept with the state; ``name`` is the older
        spelling) as for :meth:`apply`.

        Raises
        ------
        NonMonotoneUpdateError
            (kind ``"worsening"``) when an existing edge would get a worse
            value, unless ``recompute=True``.
        NegativeCycleError, FixpointNotConvergedError
            The answer and the edges stay as they were.
        """
        return self._batch(edges, None, recompute=recompute, version=version, label=label or name or None)

    def delete(self, edges: EdgesLike, *, recompute: bool = False, version: Optional[int] = None,
               label: Optional[str] = None, name: str = "") -> Change:
        """Delete edges: raises :class:`NonMonotoneUpdateError` (kind ``"deletion"``) unless ``recompute=True``."""
        return self._batch(None, edges, recompute=recompute, version=version, label=label or name or None)

    def apply(self, batch: UpdateBatch, *, recompute: bool = False, version: Optional[int] = None,
              label: Optional[str] = None) -> Change:
        """Apply an :class:`UpdateBatch` (e.g. from :func:`read_batch`); its label defaults to its name.

        Parameters
        ----------
        batch : UpdateBatch
        recompute : bool
            Take deletions and worsening updates by recomputing from scratch.
        version : int, optional
            The version this batch makes (``self.version + 1``): a version
            applied already raises :class:`BatchAlreadyAppliedError`, a later
            one :class:`VersionGapError` -- a batch never counts twice.
        label : str, optional

        Raises
        ------
        NonMonotoneUpdateError
            A deletion (naming its file and line) or a worsening update,
            before anything changes, unless ``recompute=True``.
        """
        return self._batch(batch.inserts or None, batch.deletes or None, recompute=recompute, version=version,
                           label=label or batch.name, batch=batch)

    def recompute(self) -> Change:
        """Recompute the answer from scratch on the current edges; returns what differed (normally nothing).

        Not a batch: the version stays.
        """
        started = time.perf_counter()
        if self._spark is not None:
            return self._from_spark(self._spark.recompute(), self.version, "recompute", started)
        return self._recompute(None, None, None, self.version, "recompute", started, new_version=False)

    # -- one batch ------------------------------------------------------------------------

    def _target(self, version: Optional[int]) -> int:
        target = self.version + 1
        if version is not None and version != target:
            if version <= self.version:
                raise BatchAlreadyAppliedError(version=version, current=self.version)
            raise VersionGapError(version=version, current=self.version)
        return target

    def _batch(self, inserts: Any, deletes: Any, *, recompute: bool, version: Optional[int],
               label: Optional[str], batch: Optional[UpdateBatch] = None) -> Change:
        started = time.perf_counter()
        target = self._target(version)
        label = label or f"batch {target}"
        if deletes is not None and not recompute:
            pairs = deletes if isinstance(deletes, (list, tuple)) else None
            count = len(pairs) if pairs is not None else _row_count(deletes)
            if count:
                example = tuple(pairs[0][:2]) if pairs is not None else None
                raise NonMonotoneUpdateError(kind="deletion", count=count, example=example,
                                             semiring=self.semiring.name,
                                             where=batch.where("deletion") if batch is not None else "")
            deletes = None
        if self._spark is not None:
            return self._spark_batch(inserts, deletes, recompute, target, label, batch, started)
        ins = self._arrays(inserts) if inserts is not None else None
        dels = self._arrays(deletes, weights=False) if deletes is not None else None
        self._event(BatchEvent("start", target, self._describe(ins, dels), label=label))
        if dels is not None:
            change = self._recompute(ins, dels, batch, target, label, started)
        else:
            change = self._insert(ins, recompute, batch, target, label, started)
        self._event(BatchEvent("done", target, self._describe(ins, dels), len(change), change.seconds, label))
        return change

    def _describe(self, ins: Any, dels: Any) -> str:
        parts = []
        if ins is not None:
            parts.append(f"{len(ins[0])} insertion(s)")
        if dels is not None:
            parts.append(f"{len(dels[0])} deletion(s), recomputed")
        return (", ".join(parts) or "nothing") + " on the resident index"

    def _insert(self, ins: Optional[tuple], recompute: bool, batch: Optional[UpdateBatch], target: int,
                label: str, started: float) -> Change:
        state, ops = self.resident, self.ops
        edge = state.relations[EDGE]
        if ins is None or not len(ins[0]):
            return self._commit(KeyedRows((np.zeros(0, np.int64),) * 2, np.zeros(0, ops.dtype)), _EMPTY_CODES,
                                np.zeros(0, ops.dtype), 0, target, label, started)
        src, dst, weight = ins
        new_nodes = _EMPTY_CODES
        if self.components:  # a self-loop adds its node (a component of its own), not an edge
            ends = state.domain.encode(np.concatenate([src, dst]))
            self._grow(len(state.domain))
            new_nodes = np.unique(ends[self._values[ends] == ops.zero])
            loop = src == dst
            src, dst, weight = src[~loop], dst[~loop], weight[~loop]
        rows = self._edge_rows(state.domain.encode(src), state.domain.encode(dst), weight)
        self._grow(len(state.domain))
        present, before = edge.lookup(rows.keys)
        new = rows.values_or_ones(ops)
        worse = np.flatnonzero(present & (ops.add(before, new) != new))
        if len(worse):
            if not recompute:
                k = worse[0]
                example = (*(_python(state.domain.decode(c[k:k + 1])[0]) for c in rows.keys),
                           _python(before[k]), _python(new[k]))
                raise NonMonotoneUpdateError(kind="worsening", count=len(worse), example=example,
                                             semiring=self.semiring.name,
                                             where=batch.where("insertion", example) if batch is not None else "")
            return self._recompute(ins, None, batch, target, label, started)
        effective = rows.take(np.flatnonzero(~present | (new != before)))
        added = int(np.count_nonzero(~present))
        s, d = effective.keys
        w = effective.values_or_ones(ops)
        may_cycle = self._may_cycle or bool(better_than_one(w, ops).any())
        batch_run = build_run(effective, FORWARD, ops)
        values = self._values
        try:
            if len(new_nodes):  # a node of its own: labelled with its id
                values[new_nodes] = state.domain.decode(new_nodes)
            result = propagate(values, edge.runs(FORWARD, batch_run), ops, first=(s, d, w),
                               max_iterations=self.max_iterations,
                               nodes=len(state.domain) if may_cycle else None, semiring=self.semiring.name,
                               example=self._decode_one)
        except BaseException:
            values[new_nodes] = ops.zero
            raise
        nodes, old = result.nodes, result.old
        if len(new_nodes):  # they changed too (from no value); propagate may have improved them again
            nodes = np.union1d(nodes, new_nodes)
            old = np.full(len(nodes), ops.zero, dtype=ops.dtype)
            logged = np.searchsorted(nodes, result.nodes)
            old[logged] = result.old
            old[np.searchsorted(nodes, new_nodes)] = ops.zero
        try:
            change = self._commit(effective, nodes, old, result.iterations, target, label, started)
        except BaseException:
            values[nodes] = old
            raise
        self._may_cycle = may_cycle
        self._edges += added
        return change

    def _commit(self, effective: KeyedRows, nodes: np.ndarray, old: np.ndarray, iterations: int, target: int,
                label: str, started: float) -> Change:
        """Durable first (the commit point), then the index and the answer in memory."""
        state, ops = self.resident, self.ops
        answer_batch = KeyedRows((nodes,), self._values[nodes])
        labels = [*state.labels, label]
        state.save(target, self._manifest(), {EDGE: effective, ANSWER: answer_batch}, labels)
        state.relations[EDGE].commit(effective)
        state.relations[ANSWER].commit(answer_batch)
        state.version = target
        state.labels = labels
        self._count += int(np.count_nonzero(old == ops.zero))
        self._factor = None
        inserted = len(effective) // 2 if self.components else len(effective)
        info = {"batch": label, "iterations": iterations, "inserted": inserted, "deleted": 0, "recomputed": False}
        return self._change(nodes, old, self._values[nodes], target, time.perf_counter() - started, info)

    def _recompute(self, ins: Optional[tuple], dels: Optional[tuple], batch: Optional[UpdateBatch], target: int,
                   label: str, started: float, new_version: bool = True) -> Change:
        """Deletions remove pairs, insertions set them; then the answer from scratch on the driver."""
        state, ops = self.resident, self.ops
        domain = state.domain
        edge = state.relations[EDGE]
        extra_nodes = _EMPTY_CODES
        set_rows = KeyedRows((_EMPTY_CODES, _EMPTY_CODES), np.zeros(0, ops.dtype))
        if ins is not None and len(ins[0]):
            src, dst, weight = ins
            if self.components:
                extra_nodes = domain.encode(np.concatenate([src, dst]))
                loop = src == dst
                src, dst, weight = src[~loop], dst[~loop], weight[~loop]
            set_rows = self._edge_rows(domain.encode(src), domain.encode(dst), weight)
        removed = [k for k in set_rows.keys]
        deleted = 0
        if dels is not None and len(dels[0]):
            a, b = domain.encode(dels[0]), domain.encode(dels[1])
            pairs = merge_rows([a, b], None, ops)
            deleted = len(pairs)
            if self.components:
                a, b = np.concatenate([a, b]), np.concatenate([b, a])
            removed = [np.concatenate([removed[0], a]), np.concatenate([removed[1], b])]
        self._grow(len(domain))
        current = edge.current()
        keep = np.ones(len(current), dtype=bool)
        if len(removed[0]):
            hit, _ = find_rows(build_trie(removed, SPAN, None, hashable=False), list(current.keys))
            keep[hit] = False
        kept = current.take(np.flatnonzero(keep))
        merged = merge_rows([np.concatenate([k, r]) for k, r in zip(kept.keys, set_rows.keys)],
                            np.concatenate([kept.values_or_ones(ops), set_rows.values_or_ones(ops)]), ops)
        new_edge = ResidentRelation(EDGE, (SRC, DST), merged, ops)
        n = len(domain)
        old_values = self._values[:n]
        seeds = None
        if self.components:  # nodes stay nodes when their edges go
            seeds = np.union1d(np.flatnonzero(old_values != ops.zero), extra_nodes)
        may_cycle = self._edges_may_cycle(merged)
        self._note(f"recomputing from scratch on {len(merged)} edge(s)")
        values, iterations = self._solve(new_edge.runs(FORWARD), seeds, may_cycle)
        changed = np.flatnonzero(values != old_values)
        answer = np.flatnonzero(values != ops.zero)
        new_answer = ResidentRelation(ANSWER, (NODE,), KeyedRows((answer,), values[answer]), ops)
        # Durable first: the relations are replaced (saved whole), restored if the save fails.
        before = dict(state.relations)
        state.relations[EDGE], state.relations[ANSWER] = new_edge, new_answer
        labels = [*state.labels, label] if new_version else list(state.labels)
        try:
            if new_version or len(changed):
                _save_replaced(state, target, self._manifest(), {EDGE: merged, ANSWER: new_answer.base}, labels)
        except BaseException:
            state.relations.update(before)
            raise
        old = old_values[changed].copy()
        self._values = values
        self._count = len(answer)
        self._edges = len(merged)
        self._may_cycle = may_cycle
        self._factor = None
        state.version, state.labels = target, labels
        inserted = len(set_rows) // 2 if self.components else len(set_rows)
        info = {"batch": label, "iterations": iterations, "inserted": inserted, "deleted": deleted,
                "recomputed": True}
        return self._change(changed, old, values[changed], target, time.perf_counter() - started, info)

    def _solve(self, runs: list, seeds: Optional[np.ndarray], may_cycle: Optional[bool] = None) -> tuple[np.ndarray, int]:
        """The answer from scratch: ``seeds`` labelled with their ids (components) or the source with one."""
        ops, domain = self.ops, self.resident.domain
        frontier = seeds if self.components else domain.encode(np.array([self.source], dtype=np.int64))
        values = np.full(len(domain), ops.zero, dtype=ops.dtype)
        values[frontier] = domain.decode(frontier) if self.components else ops.one
        may_cycle = self._may_cycle if may_cycle is None else may_cycle
        result = propagate(values, runs, ops, frontier=frontier, max_iterations=self.max_iterations,
                           nodes=len(domain) if may_cycle else None, semiring=self.semiring.name, record=False,
                           example=self._decode_one, progress=self._note)
        return values, result.iterations

    def _change(self, nodes: np.ndarray, old: np.ndarray, new: np.ndarray, target: int, seconds: float,
                info: dict) -> Change:
        ops = self.ops
        keys = self.resident.domain.decode(nodes).astype(np.int64, copy=False)
        order = np.argsort(keys, kind="stable")
        keys, old, new = keys[order], old[order], new[order]
        missing = old == ops.zero
        if np.dtype(ops.dtype).kind == "f":
            old_column: np.ndarray = np.where(missing, np.nan, old)
        else:  # no NaN in booleans and labels: None
            old_column = old.astype(object)
            old_column[missing] = None
        types = {NODE: "bigint", OLD: self.semiring.value_type, "diff": self.semiring.value_type}
        return Change((NODE,), (keys,), new, target, seconds, extra={OLD: old_column}, count=self._count, info=info,
                      types=types)

    # -- the Spark placement -------------------------------------------------------------

    def _spark_batch(self, inserts: Any, deletes: Any, recompute: bool, target: int, label: str,
                     batch: Optional[UpdateBatch], started: float) -> Change:
        spark = self._spark
        self._event(BatchEvent("start", target, "on Spark", label=label))
        if batch is not None:
            changes = spark.apply(batch, recompute=recompute)
        elif deletes is not None:
            changes = spark.delete(deletes, recompute=recompute, name=label)
            if inserts is not None:  # pragma: no cover - delete() takes no insertions
                raise FAQValueError("one batch of deletions at a time", argument="edges")
        else:
            changes = spark.insert(inserts if inserts is not None else [], recompute=recompute, name=label)
        change = self._from_spark(changes, target, label, started)
        self._spark_version = target
        self._spark_labels.append(label)
        self._event(BatchEvent("done", target, "on Spark", len(change), change.seconds, label))
        return change

    def _from_spark(self, changes: "SparkChanges", target: int, label: str, started: float) -> Change:
        """A Spark batch's changed rows, collected (they are the batch's output), as a :class:`Change`."""
        import pyarrow as pa
        from pyspark.sql import functions as F

        with changes:
            table = changes.df.select(NODE, OLD, "new").orderBy(NODE).toArrow()
            count = self._spark.state.df.agg(F.count(F.lit(1))).first()[0]
        keys = np.asarray(table.column(NODE).to_numpy(zero_copy_only=False), dtype=np.int64)
        old = table.column(OLD)
        # NaN stands for "no value" in a float column only; booleans and labels get None
        old = np.asarray(old.to_numpy(zero_copy_only=False)) if old.type.equals(pa.float64()) or not old.null_count \
            else np.array(old.to_pylist(), dtype=object)
        new = table.column("new")
        if new.null_count:  # a node no longer reached: the zero
            import pyarrow.compute as pc

            new = pc.fill_null(new, self.semiring.zero)
        new = np.asarray(new.to_numpy(zero_copy_only=False))
        info = {"batch": label, "iterations": changes.iterations, "inserted": changes.inserted,
                "deleted": changes.deleted, "recomputed": changes.recomputed}
        types = {NODE: "bigint", OLD: self.semiring.value_type, "diff": self.semiring.value_type}
        self._factor = None
        return Change((NODE,), (keys,), new, target, time.perf_counter() - started, extra={OLD: old},
                      count=int(count), info=info, types=types)

    def _spark_factor(self, edges: EdgesLike) -> Factor:
        if isinstance(edges, Factor):
            _check_binary(edges)
            return edges
        from faq.spark import get_session

        if is_dataframe(edges):
            df = edges
        else:
            src, dst, weight = self._arrays(edges, initial=True)
            import pandas as pd

            df = get_session().createDataFrame(pd.DataFrame({SRC: src, DST: dst, WEIGHT: weight}))
        wcol = WEIGHT if WEIGHT in df.columns else (VALUE if VALUE in df.columns else None)
        if wcol is None:
            from pyspark.sql import functions as F

            df = df.withColumn(WEIGHT, F.lit(self.default_weight).cast(self.semiring.value_type))
            wcol = WEIGHT
        return Factor(df=df, variables=(SRC, DST), semiring=self.semiring, value=wcol, name=self.name)

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
        src, dst, weight = _edge_table(edges)
        if not weights or self.components or self.semiring.value_type == "boolean":
            return src, dst, np.full(len(src), ops.one, dtype=ops.dtype)
        weight = np.where(np.isnan(weight), self.default_weight, weight).astype(ops.dtype, copy=False)
        return src, dst, weight

    def _edge_rows(self, s: np.ndarray, d: np.ndarray, weight: np.ndarray) -> KeyedRows:
        """Edges as rows of the index: ⊕-merged per pair, zeros dropped; for components both ways, no loops."""
        ops = self.ops
        if self.components:
            loop = s == d
            s, d = s[~loop], d[~loop]
            both = merge_rows([np.concatenate([s, d]), np.concatenate([d, s])], None, ops)
            return KeyedRows(both.keys, None)
        return merge_rows([s, d], weight, ops)

    def _edges_may_cycle(self, rows: KeyedRows) -> bool:
        """Some edge better than one: only then can a cycle improve values (the Bellman-Ford check)."""
        return rows.values is not None and bool(better_than_one(rows.values, self.ops).any())

    def _grow(self, n: int) -> None:
        """Room in the value array for codes up to ``n`` (new nodes of a batch have no value)."""
        if len(self._values) < n:
            more = max(n - len(self._values), len(self._values) // 4, 16)
            self._values = np.concatenate([self._values, np.full(more, self.ops.zero, dtype=self.ops.dtype)])

    def _decode_one(self, code: int) -> Any:
        return _python(self.resident.domain.decode(np.array([code]))[0])

    def _manifest(self) -> dict[str, Any]:
        return {
            "kind": KIND,
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
        """Release the Spark caches (:attr:`scope`) and the resident index; a saved state stays on disk."""
        self.scope.close()
        if self.resident is not None:
            self.resident.relations = {}
            self._values = np.zeros(0, dtype=self.ops.dtype)
        self._factor = None

    def __repr__(self) -> str:
        return (f"MaintainedFixpoint({self.name!r}, {self.describe()}, version={self.version}, "
                f"placement={self.placement!r})")


def maintain_paths(edges: EdgesLike, source: int, semiring: Any = "min_plus", **kw: Any) -> MaintainedFixpoint:
    """Shorthand for :meth:`MaintainedFixpoint.paths`."""
    return MaintainedFixpoint.paths(edges, source, semiring, **kw)


def maintain_components(edges: EdgesLike, nodes: Any = None, **kw: Any) -> MaintainedFixpoint:
    """Shorthand for :meth:`MaintainedFixpoint.components`."""
    return MaintainedFixpoint.components(edges, nodes=nodes, **kw)


# --- helpers -----------------------------------------------------------------------------

_EMPTY_CODES = np.zeros(0, dtype=np.int64)


def _save_replaced(state: ResidentState, version: int, meta: dict, rows: dict, labels: list) -> None:
    """Commit ``version`` with relations whose rows were replaced (a recomputation): whole new bases."""
    import inspect

    if "replaced" in inspect.signature(state.save).parameters:
        state.save(version, meta, {}, labels, replaced=rows)
    else:  # the older signature: None marks a relation replaced in memory already
        state.save(version, meta, {name: None for name in rows}, labels)


def _channels(progress: Any) -> tuple[Callable[[str], None], Callable[[BatchEvent], None]]:
    """(notes, events): a Reporter takes notes through ``note``; a plain callable gets both."""
    if progress is None:
        return (lambda text: None), (lambda event: None)
    note = getattr(progress, "note", None)
    return (note if callable(note) else progress), progress


def _python(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _row_count(data: Any) -> int:
    """Rows of an edges-like input (a count job for Spark data)."""
    if isinstance(data, Factor):
        return data.df.count()
    if is_dataframe(data):
        return data.count()
    if hasattr(data, "num_rows"):
        return int(data.num_rows)
    try:
        return len(data)
    except TypeError:
        return 0


def _node_array(nodes: Any) -> np.ndarray:
    """Extra nodes (components) as int64: a DataFrame's first column, or ints."""
    if nodes is None:
        return np.zeros(0, dtype=np.int64)
    if is_dataframe(nodes):
        column = nodes.select(nodes.columns[0]).toArrow().column(0).drop_null()
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray([int(n) for n in nodes], dtype=np.int64)


def _edge_table(edges: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, weight)``: int64, int64, float64 (NaN where no weight was given); null ends dropped."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(edges, Factor):
        from pyspark.sql import functions as F

        _check_binary(edges)
        u, v = edges.variables
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
    elif isinstance(edges, pa.Table) or (hasattr(edges, "to_numpy") and hasattr(edges, "columns")):
        table = edges if isinstance(edges, pa.Table) else pa.Table.from_pandas(edges, preserve_index=False)
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
    if table.column(SRC).null_count or table.column(DST).null_count:
        table = table.filter(valid)
    src = np.asarray(table.column(SRC).to_numpy(zero_copy_only=False), dtype=np.int64)
    dst = np.asarray(table.column(DST).to_numpy(zero_copy_only=False), dtype=np.int64)
    weight = np.asarray(pc.fill_null(table.column(WEIGHT), np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    return src, dst, weight


def _tuples(edges: Iterable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    src, dst, weight = [], [], []
    for row in edges:
        row = tuple(row)
        if len(row) not in (2, 3):
            raise FAQValueError(f"an edge is (src, dst) or (src, dst, weight), not {row!r}", argument="edges")
        src.append(int(row[0]))
        dst.append(int(row[1]))
        weight.append(float("nan") if len(row) == 2 or row[2] is None else float(row[2]))
    return (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), np.asarray(weight, dtype=np.float64))
