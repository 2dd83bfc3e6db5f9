"""A fixpoint's edges held on the executors, partitioned by source; each round one job over the frontier.

The Spark rounds of :mod:`faq.recursive.rounds` cost about a second each
whatever their frontier: every round builds, analyses and runs a plan of
joins and aggregates over *all* the edges.  Here the edges are moved once and
then stay where they are, as the worst-case optimal join's index does
(:mod:`faq.joins.mapped`):

1. Spark writes the edges ``(src, dst, weight)`` as Parquet, coalesced into
   as many *parts* as the executors have cores (one file each; a task's
   Python costs about 40 ms a wave on this machine, so no more parts than
   cores), under the directory the executors can read (``spark.faq.indexDir``;
   the driver's scratch directory on a local master).  The edges are not
   shuffled by source: every part sees the whole frontier (step 4), so a
   node's out-edges may lie in several parts; ⊕ is idempotent, so their
   proposals merge on the driver like any others.
2. One job of one task per part builds each part's trie -- the same
   :func:`~faq.incremental.rows.build_run` over the same
   :func:`~faq.incremental.rows.merge_rows` the driver placement uses, over
   the part's own dense codes -- and keeps it in the executor's Spark files
   directory, memory-mapped by its Python workers
   (:class:`~faq.joins.mapped.BuiltIndex`).  The job returns each part's node
   ids, from which the driver makes the node domain.  The tasks' frame is a
   cached one-row-per-part frame, so Spark prefers to run part ``p``'s task
   on the executor that ran it first (where its trie is).
3. The node *values* (and the round loop, :mod:`faq.recursive.core`) stay
   on the driver, as in the driver placement: a dense array over node codes.
   Nodes are far fewer than edges (R-MAT 18: 262,144 ids, 3.9M edges), so
   this placement asks the driver for memory per node, not per edge.
4. A round sends the frontier -- its node ids and values, in the task's
   closure (or as a file per machine past :data:`SHIP_BYTES`) -- to every
   part.  Each task follows the frontier's out-edges in its trie with the
   driver's kernel (:func:`~faq.recursive.propagate.out_edges`), ⊗-extends
   the values and ⊕-reduces the proposals per target, keeping the source of
   the winning one (:func:`best_per_target`).  The driver ⊕-merges what the
   tasks return into the values (:func:`~faq.recursive.propagate.relax`).

So a round is one Spark job with one stage and no shuffle; its work and the
data it moves follow the frontier, not the graph.  Its floor is Spark's for a
job of Python tasks: about 0.1 s on this machine (a job of the JVM alone:
0.02 s).  Nothing grows with the
rounds: every round's plan is the same two operators over the cached frame.

Where it applies: an idempotent semiring with a numpy form
(:func:`~faq.recursive.propagate.fixpoint_ops`) and nodes that fit the
driver's budget (:data:`NODE_BYTES` each).  Otherwise
:func:`faq.recursive.placed.solve_placed` runs the Spark SQL rounds.

The parts' Parquet files are removed when the edges' scope closes; each
executor's built tries are removed then by one small job (best effort: a
task may land on an executor that holds none; what is left is removed with
Spark's files directory when the session stops).

Examples
--------
>>> from faq.spark import get_session
>>> from faq.semirings import MIN_PLUS
>>> from faq.recursive.propagate import fixpoint_ops
>>> spark = get_session()
>>> frame = spark.createDataFrame([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0)], "src long, dst long, weight double")
>>> with ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS)) as edges:
...     edges.rows, edges.domain.decode(np.arange(len(edges.domain))).tolist()
...     src, dst, best = edges.proposals(edges.domain.lookup(np.array([1])), np.array([0.0]))
...     sorted(zip(edges.domain.decode(dst).tolist(), best.tolist(), edges.domain.decode(src).tolist()))
(3, [1, 2, 3])
[(2, 4.0, 1), (3, 7.0, 1)]
"""

from __future__ import annotations

import functools
import os
import shutil
import uuid
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np

from faq.errors import IndexDirectoryError
from faq.incremental.domain import KeyDomain
from faq.incremental.rows import View, build_run, merge_rows
from faq.recursive.propagate import NO_NODES, better_than_one, out_edges
from faq.recursive.seminaive import DST, SRC, WEIGHT
from faq.scope import Owner, Scope
from faq.semirings.numpy_backend import NumpyForm

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["ExecutorEdges", "best_per_target", "NODE_BYTES", "SHIP_BYTES"]

#: The driver's memory per node in this placement: the value, the parent, the domain's id and its hash.
NODE_BYTES = 48
#: A frontier larger than this (ids and values) goes to the tasks as a file per machine, not in the closure.
SHIP_BYTES = 16 << 20
_PART = "part"
_BEST = "best"


class ExecutorEdges(Owner):
    """The edges on the executors (module notes); made by :meth:`write`, released by :meth:`close`.

    Attributes
    ----------
    domain : KeyDomain
        The node ids, sorted (code ``i`` is the ``i``-th smallest id).
    rows : int
        Edges written (before parallel edges are ⊕-merged in the parts).
    improving : int
        Edges better than ``one`` (only those let a cycle improve values), counted as the parts are built.
    parts : int
        Parts (tasks of a round).
    """

    def __init__(self, spark: Any, ops: NumpyForm, files: list[str], token: str, rows: int, value_type: str,
                 scope: Scope) -> None:
        self.spark, self.ops, self.files, self.token = spark, ops, files, token
        self.rows, self.value_type = rows, value_type
        self.improving = 0
        self.parts = len(files)
        self.scope = scope
        self.domain = KeyDomain(np.zeros(0, dtype=np.int64))
        self.rounds = 0
        self._tasks: Optional["DataFrame"] = None

    @classmethod
    def write(cls, frame: "DataFrame", ops: NumpyForm, *, value_type: str = "double", parts: Optional[int] = None,
              directory: Optional[str] = None) -> "ExecutorEdges":
        """Write ``frame`` (``src``, ``dst``, ``weight``) partitioned by source, build the parts' tries on
        the executors and learn the node ids (two jobs; module notes, steps 1-2).

        ``directory`` defaults to the session's index directory (``spark.faq.indexDir``); without one
        (a Spark Connect server or a cluster and no setting) :class:`~faq.errors.IndexDirectoryError`.
        """
        from pyspark.sql import functions as F

        from faq.insideout.binding import index_dir
        from faq.joins.executor_index import local_path, write_observed
        from faq.spark import default_parallelism, is_connect
        from faq.workers import ensure_workers

        spark = frame.sparkSession
        directory = directory or index_dir(spark, is_connect(spark))
        if directory is None:
            raise IndexDirectoryError(path="(none)", reason="the executors need a directory they can read for the "
                                                           "edges' parts: set spark.faq.indexDir")
        ensure_workers(spark)  # the parts are built by faq's Python in the workers: check once that they can
        token = f"faq-fixpoint-{uuid.uuid4().hex}"
        root = f"{directory.rstrip('/')}/{token}"
        scope = Scope()
        local = local_path(root)
        if local is not None:
            scope.callback(functools.partial(shutil.rmtree, local, ignore_errors=True))
        try:
            metrics = {"rows": F.count(F.lit(1))}
            # coalesced, not shuffled by source: every part sees the whole frontier, so a node's out-edges
            # may lie in several parts (their proposals ⊕-merge on the driver); no shuffle of the edges.
            seen = write_observed(frame.select(SRC, DST, WEIGHT).coalesce(parts or default_parallelism(spark)),
                                  metrics, root)
            files = sorted(spark.read.parquet(root).inputFiles()) if int(seen["rows"]) else []
            edges = cls(spark, ops, files, token, int(seen["rows"]), value_type, scope)
            edges._start()
        except BaseException:
            scope.close()
            raise
        return edges

    def _start(self) -> None:
        """Cache the tasks' frame (one row per part) and build every part on the executors; learn the nodes."""
        import pyarrow.compute as pc

        if not self.parts:
            return
        tasks = self.spark.range(0, self.parts, 1, self.parts).withColumnRenamed("id", _PART)
        self._tasks = self.scope.persist(tasks)
        self._tasks.count()  # the cached blocks: where part p's task ran first, Spark prefers it again
        schema = "node long, improving long"
        table = self._tasks.mapInArrow(functools.partial(_nodes_task, self._spec()), schema).toArrow()
        self.scope.callback(self._forget_parts)
        nodes = table.column(0).drop_null().to_numpy()
        self.domain = KeyDomain(np.unique(nodes) if len(nodes) else NO_NODES)
        self.improving = int(pc.sum(table.column(1)).as_py() or 0)

    def _spec(self) -> "_PartSpec":
        return _PartSpec(tuple(self.files), self.token, self.ops, self.value_type)

    def proposals(self, frontier: np.ndarray, values: np.ndarray, *, labels: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One round on the executors: the best proposal per target from the ``frontier`` (codes) with
        ``values``; returns ``(source, target, proposal)`` as codes and values (module notes, step 4).

        ``labels=True`` ignores the frontier: every node proposes its own id (components' first round).
        """
        from faq.joins.mapped import ship

        dtype = np.dtype(self.ops.dtype)
        if self._tasks is None or (not labels and len(frontier) == 0):
            return NO_NODES, NO_NODES, np.zeros(0, dtype=dtype)
        sent: Any = None  # labels: nothing to send
        if not labels:
            ids = self.domain.decode(np.asarray(frontier, dtype=np.int64)).astype(np.int64, copy=False)
            sent = (ids, np.asarray(values, dtype=dtype))
        if sent is not None and sent[0].nbytes + sent[1].nbytes > SHIP_BYTES:
            sent = ship(self.spark, sent)  # a file per machine; the closure would carry it to every task
        schema = f"{DST} long, {_BEST} {self.value_type}, {SRC} long"
        table = self._tasks.mapInArrow(functools.partial(_round_task, self._spec(), sent), schema).toArrow()
        self.rounds += 1
        if table.num_rows == 0:
            return NO_NODES, NO_NODES, np.zeros(0, dtype=dtype)
        dst = self.domain.lookup(table.column(DST).to_numpy())
        best = np.asarray(table.column(_BEST).to_numpy(zero_copy_only=False), dtype=dtype)
        src = self.domain.lookup(table.column(SRC).to_numpy())
        return src, dst, best

    def _forget_parts(self) -> None:
        """Remove the parts' built tries from the executors' files directories (one small job, best effort)."""
        if self._tasks is None:
            return
        try:
            self._tasks.mapInArrow(functools.partial(_forget_task, self.token), "removed long").toArrow()
        except Exception:  # noqa: BLE001 - a stopped session: its files directories went with it
            pass

    def close(self) -> None:
        self.scope.close()

    def __repr__(self) -> str:
        return f"ExecutorEdges({self.rows} edges, {self.parts} parts, {len(self.domain)} nodes)"


# --- in the tasks -----------------------------------------------------------------------------------------


class _PartSpec:
    """What a task needs to build and name a part: the files, the edges' token, the semiring's ops."""

    def __init__(self, files: tuple[str, ...], token: str, ops: NumpyForm, value_type: str) -> None:
        self.files, self.token, self.ops, self.value_type = files, token, ops, value_type

    def part(self, p: int) -> dict:
        """Part ``p``'s trie and sorted node ids, built by the first worker of this executor that needs it."""
        from faq.joins.mapped import BuiltIndex

        return BuiltIndex(f"{self.token}-{p}.bin", functools.partial(build_part, self.files[p], self.ops)).value


def build_part(path: str, ops: NumpyForm) -> dict:
    """A part's index from its Parquet file: ``nodes`` (sorted ids; codes are positions), ``trie`` (view
    ``(src, dst)``, parallel edges ⊕-merged), as the driver placement builds its edges, and how many of
    its edges are ``improving`` (better than ``one``: only they let a cycle improve values)."""
    import pyarrow.parquet as pq

    from faq.joins.executor_index import local_path

    table = pq.read_table(local_path(path) or path, columns=[SRC, DST, WEIGHT])
    src = table.column(SRC).to_numpy().astype(np.int64, copy=False)
    dst = table.column(DST).to_numpy().astype(np.int64, copy=False)
    weight = np.asarray(table.column(WEIGHT).to_numpy(zero_copy_only=False), dtype=ops.dtype)
    nodes = np.unique(np.concatenate([src, dst]))
    rows = merge_rows([np.searchsorted(nodes, src), np.searchsorted(nodes, dst)], weight, ops)
    return {"nodes": nodes, "trie": build_run(rows, View((0, 1)), ops),
            "improving": int(np.count_nonzero(better_than_one(rows.values_or_ones(ops), ops)))}


def _parts_of(batches: Iterator["pa.RecordBatch"]) -> Iterator[int]:
    for batch in batches:
        yield from (int(p) for p in batch.column(0).to_numpy())


def _nodes_task(spec: _PartSpec, batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """Build this task's parts; yield their node ids, then a row (null node) with their improving edges."""
    import pyarrow as pa

    for p in _parts_of(batches):
        part = spec.part(p)
        nodes = part["nodes"]
        yield pa.RecordBatch.from_arrays([pa.array(nodes), pa.array(np.zeros(len(nodes), dtype=np.int64))],
                                         ["node", "improving"])
        yield pa.RecordBatch.from_arrays([pa.array([None], pa.int64()), pa.array([part["improving"]], pa.int64())],
                                         ["node", "improving"])


def _round_task(spec: _PartSpec, sent: Any, batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """One round in a task: the frontier's best proposal per target in each of its parts (module notes)."""
    import pyarrow as pa

    ops = spec.ops
    if sent is not None and not isinstance(sent, tuple):
        sent = sent.value  # shipped as a file
    for p in _parts_of(batches):
        part = spec.part(p)
        nodes, trie = part["nodes"], part["trie"]
        if sent is None:  # labels: every source proposes its own id
            codes = trie.levels[0].comp if trie.rows else NO_NODES
            ids, values = nodes[codes], nodes[codes].astype(ops.dtype)
        else:
            ids, values = sent
            codes = np.searchsorted(nodes, ids)
            np.minimum(codes, max(len(nodes) - 1, 0), out=codes)
            hit = np.flatnonzero(nodes[codes] == ids) if len(nodes) else NO_NODES
            codes, ids, values = codes[hit], ids[hit], values[hit]
        at, dst, weight = out_edges([trie], codes, ops)
        target, best, source = best_per_target(dst, ops.mul(values[at], weight), ids[at], ops)
        yield pa.RecordBatch.from_arrays([pa.array(nodes[target]), pa.array(best), pa.array(source)],
                                         [DST, _BEST, SRC])


def _forget_task(token: str, batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """Remove this executor's built parts of ``token`` (and forget the mappings this worker holds)."""
    import pyarrow as pa
    from pyspark import SparkFiles

    from faq.joins.mapped import forget

    for _ in batches:
        pass
    root = SparkFiles.getRootDirectory()
    removed = 0
    for name in os.listdir(root):
        if name.startswith(token):
            forget(name)
            try:
                os.remove(os.path.join(root, name))
                removed += 1
            except OSError:
                pass
    yield pa.RecordBatch.from_arrays([pa.array([removed], pa.int64())], ["removed"])


def best_per_target(targets: np.ndarray, proposals: np.ndarray, sources: np.ndarray, ops: NumpyForm
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct target, the ⊕ of its proposals and the source of one equal to it (-1: none is, as with
    a ⊕ that is not a choice); targets sorted.

    >>> from faq.semirings import MIN_PLUS
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> t, best, src = best_per_target(np.array([5, 3, 5]), np.array([2.0, 9.0, 1.0]), np.array([10, 11, 12]),
    ...                                fixpoint_ops(MIN_PLUS))
    >>> t.tolist(), best.tolist(), src.tolist()
    ([3, 5], [9.0, 1.0], [11, 12])
    """
    if len(targets) == 0:
        return NO_NODES, np.zeros(0, dtype=ops.dtype), NO_NODES
    order = np.argsort(targets, kind="stable")
    targets, proposals, sources = targets[order], proposals[order], sources[order]
    starts = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1]])
    best = ops.add.reduceat(proposals, starts)
    counts = np.diff(np.r_[starts, len(targets)])
    won = np.flatnonzero(proposals == np.repeat(best, counts))
    segment = np.repeat(np.arange(len(starts)), counts)[won]
    winners = np.full(len(starts), -1, dtype=np.int64)
    first, at = np.unique(segment, return_index=True)
    winners[first] = sources[won[at]]
    return targets[starts], best, winners
