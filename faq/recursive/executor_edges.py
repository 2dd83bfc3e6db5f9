"""A fixpoint's edges held on the executors in parts; each round over the frontier, in the tasks.

The Spark SQL rounds of :mod:`faq.recursive.rounds` cost 0.3-0.9 s each on
R-MAT 18 here whatever their frontier: every round builds, analyses and runs
a plan of joins and aggregates over *all* the edges.  Here the edges are moved once and
then stay where they are, as the worst-case optimal join's index does
(:mod:`faq.joins.mapped`):

1. One Spark job over the edges ``(src, dst, weight)``, coalesced into as
   many *parts* as the executors have cores (a task's Python costs about
   40 ms a wave on this machine, so no more parts than cores), builds each
   part's trie in its task -- the same :func:`~faq.incremental.rows.build_run`
   over the same :func:`~faq.incremental.rows.merge_rows` the driver placement
   uses, over the part's own dense codes -- and writes it as one file
   (:mod:`faq.joins.mapped`'s layout) under the directory the executors can
   read (``spark.faq.indexDir``; the driver's scratch directory on a local
   master).  The tasks return each part's node ids (the driver makes the node
   domain from them), its rows and its edges better than ``one``.  Edges that
   are a bare scan of local Parquet files (``spark.read.parquet``) do not go
   through Spark: each task of a range reads an equal share of the files' rows
   itself (:mod:`faq.recursive.edge_files`), where ``coalesce`` would hand it
   whole splits (R-MAT 18: 2.49M and 1.45M rows) through the Arrow
   handover.  The edges
   are not shuffled by source: every part sees the whole frontier (step 4),
   so a node's out-edges may lie in several parts; ⊕ is idempotent, so their
   proposals merge on the driver like any others.
2. A round's task maps its part's file (once per Python worker: the pages
   are the machine's file cache, shared by its workers), whichever executor
   runs it: nothing is built twice.
3. The node *values* (and the round loop, :mod:`faq.recursive.core`) stay
   on the driver, as in the driver placement: a dense array over node codes.
   Nodes are far fewer than edges (R-MAT 18: 262,144 ids, 3.9M edges), so
   this placement asks the driver for memory per node, not per edge.
4. A round sends the frontier -- its nodes' codes in the driver's domain
   and their values -- to every part as one file beside the parts
   (``round.bin``, written whole and renamed over the last round's), and
   runs the same DataFrame as every round before it: Spark analyses and
   plans a round's job once, not each round (on ``local-cluster`` a trivial
   job of two Python tasks took 0.27 s run again, 0.35-0.40 s made anew;
   the frontier in the closure also made each round's task bigger).  Each task finds its own nodes
   among them by the part's codes file (written beside the part after step
   1), follows their out-edges in its trie with the driver's kernel
   (:func:`~faq.recursive.propagate.out_edges`), ⊗-extends the values and
   ⊕-reduces the proposals per target, keeping the source of the winning
   one (:func:`best_per_target`), and answers in the domain's codes too.  The
   driver ⊕-merges what the tasks return into the values
   (:func:`~faq.recursive.propagate.relax`) without a lookup.

Hops within a part
------------------
From the :data:`HOPS_AFTER`-th job on, where the driver's values are small
enough to send with a job (:data:`SHIP_BYTES`) and no edge is better than
``one``, a task does not stop after one hop: it compares its proposals with
those values, and from the targets they improve follows its part's
out-edges again, until nothing in the part improves or it has followed
:data:`HOP_EDGES` edges (:func:`hops`; "think like a graph", Tian et al.,
VLDB 2013).  It returns every node it improved, with the value of a path
that exists; each is in the driver's next frontier, so its out-edges in the
other parts are followed there.  A job then does the work of several rounds
(on one executor with one part, all of them).  Hops pay where a part holds
long paths (a grid whose edge list is sorted by source: 399 rounds became 11
jobs); on R-MAT's random parts they save little.

So a round is one Spark job with one stage and no shuffle; its work and the
data it moves follow the frontier, not the graph.  Its floor is Spark's for a
job of Python tasks: about 0.1 s on this machine (a job of the JVM alone:
0.02 s), 0.24-0.31 s on ``local-cluster[2,1,2048]``.  Nothing grows with the
rounds: every round's plan is the same two operators over a range of one row
per part.  A solve pays that floor once instead of each round where the
tasks of one job stay for all its rounds
(:mod:`faq.recursive.resident_rounds`, which plugs itself in as
:attr:`ExecutorEdges.runner`): the same :func:`round_part` then answers each
round, sent to the tasks as a file.

Where it applies: an idempotent semiring with a numpy form
(:func:`~faq.recursive.propagate.fixpoint_ops`) and nodes that fit the
driver's budget (:data:`NODE_BYTES` each).  Otherwise
:func:`faq.recursive.placed.solve_placed` runs the Spark SQL rounds.

The parts' files are removed when the edges' scope closes, after one small
job that has the workers drop their mappings where a round ran as a job
(best effort: a worker that runs none of its tasks keeps at most
:data:`~faq.joins.mapped.KEEP_LOADED` mappings until it maps newer files);
tasks that stayed for the rounds drop theirs as they return.

Examples
--------
>>> from faq.spark import get_session
>>> from faq.semirings import MIN_PLUS
>>> from faq.recursive.propagate import fixpoint_ops
>>> spark = get_session()
>>> frame = spark.createDataFrame([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0)], "src long, dst long, weight double")
>>> with ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS), parts=1) as edges:
...     edges.hops_after = 0                              # hops from the first job on
...     edges.rows, edges.domain.decode(np.arange(len(edges.domain))).tolist()
...     values = np.array([0.0, np.inf, np.inf])          # node 1 (code 0) is the source
...     src, dst, best = edges.proposals(edges.domain.lookup(np.array([1])), values)
...     sorted(zip(edges.domain.decode(dst).tolist(), best.tolist(), edges.domain.decode(src).tolist()))
(3, [1, 2, 3])
[(2, 4.0, 1), (3, 5.0, 2)]

In one job: 1 -> 2 (4.0), then 2 -> 3 (5.0), better than 1 -> 3 (7.0), by hops within the (one) part.
"""

from __future__ import annotations

import functools
import os
import shutil
import uuid
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np

from faq.errors import IndexDirectoryError
from faq.huge_pages import plain_pages
from faq.incremental.domain import KeyDomain
from faq.incremental.rows import View, build_run, merge_rows
from faq.joins.dense import dense_span
from faq.recursive.edge_files import EdgeScan, fixpoint_rows
from faq.recursive.propagate import NO_NODES, better_than_one, out_edges
from faq.recursive.seminaive import DST, SRC, WEIGHT
from faq.scope import Owner, Scope
from faq.semirings.numpy_backend import NumpyForm

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["ExecutorEdges", "best_per_target", "build_part", "codes_path", "forget_parts", "hops", "parts_of",
           "round_part", "write_round", "HOP_EDGES", "HOPS_AFTER", "NODE_BYTES", "SHIP_BYTES"]

#: The driver's memory per node in this placement: the value, the parent, the domain's id and its hash.
NODE_BYTES = 48
#: Jobs of one hop before the tasks hop within their parts: a graph of few rounds (a small diameter: R-MAT 18
#: has 15) pays more for sending the values with every job than hops save (on R-MAT 18 every job of
#: hops took 0.05-0.1 s longer and saved 2 of 15); a long one (a grid, a road network) saves most of its rounds.
HOPS_AFTER = 8
#: Edges a task follows in one job before it stops hopping (:func:`hops`): about a job's fixed cost in work.
HOP_EDGES = 250_000
#: Every node's value goes with a job of hops only up to this size (the tasks each read it whole).
SHIP_BYTES = 16 << 20
_PART, _NODE, _IMPROVING, _ROWS, _BEST = "part", "node", "improving", "rows", "best"
_BUILT = f"{_PART} long, {_NODE} long, {_IMPROVING} long, {_ROWS} long"


class ExecutorEdges(Owner):
    """The edges on the executors (module notes); made by :meth:`write`, released by :meth:`close`.

    Attributes
    ----------
    domain : KeyDomain
        The node ids, sorted (code ``i`` is the ``i``-th smallest id).
    rows : int
        Edges given (before parallel edges are ⊕-merged in the parts).
    improving : int
        Edges better than ``one`` (only those let a cycle improve values), counted as the parts are built.
    parts : int
        Parts (tasks of a round).
    paths : tuple of str
        The parts' files.
    """

    def __init__(self, spark: Any, ops: NumpyForm, value_type: str, scope: Scope) -> None:
        self.spark, self.ops, self.value_type, self.scope = spark, ops, value_type, scope
        self.paths: tuple[str, ...] = ()
        self.rows = self.improving = self.parts = self.rounds = 0
        #: Jobs of one hop before the tasks hop within their parts (None: never; see :meth:`proposals`).
        self.hops_after: Optional[int] = HOPS_AFTER
        self.domain = KeyDomain(np.zeros(0, dtype=np.int64))
        self._tasks: Optional["DataFrame"] = None
        self._rounds: Optional["DataFrame"] = None  # a round's job: the same DataFrame each time
        self._round_path = ""  # the round's frontier and values, written before its job (module notes, step 4)
        #: What answers a round instead of a job of its own: tasks that stay for every round of a solve
        #: (:class:`~faq.recursive.resident_rounds.ResidentRounds` plugs itself in here while it runs).
        self.runner: Any = None
        self._round_jobs = 0  # rounds run as jobs of their own: their workers map the parts (see _forget_parts)

    @classmethod
    def write(cls, frame: "DataFrame", ops: NumpyForm, *, value_type: str = "double", parts: Optional[int] = None,
              directory: Optional[str] = None, scan: Optional[EdgeScan] = None,
              symmetric: bool = False) -> "ExecutorEdges":
        """Build the parts of ``frame`` (``src``, ``dst``, ``weight``) on the executors and learn the node
        ids (one job; module notes, step 1).

        ``directory`` defaults to the session's index directory (``spark.faq.indexDir``); a directory
        the driver cannot reach, or none (a Spark Connect server or a cluster and no setting), is refused
        with :class:`~faq.errors.IndexDirectoryError`.  ``scan``: the same rows in local Parquet files, which the
        tasks read themselves; with ``symmetric``, ``frame`` is their symmetric edges (components) and the
        tasks take each row of the files both ways (:func:`~faq.recursive.edge_files.fixpoint_rows`).
        """
        import pyarrow.compute as pc

        from faq.settings import index_dir
        from faq.joins.executor_index import local_path
        from faq.spark import default_parallelism, is_connect
        from faq.workers import ensure_workers

        spark = frame.sparkSession
        directory = directory or index_dir(spark, is_connect(spark))
        root = local_path(f"{directory.rstrip('/')}/faq-fixpoint-{uuid.uuid4().hex}") if directory else None
        if root is None:
            raise IndexDirectoryError(path=str(directory), reason="the executors write the edges' parts to a "
                                                                  "directory the driver reaches: set spark.faq.indexDir")
        try:
            os.makedirs(root)
        except OSError as error:
            raise IndexDirectoryError(path=str(directory), reason=f"{error.strerror or error}") from error
        scope = Scope()
        scope.callback(functools.partial(shutil.rmtree, root, ignore_errors=True))
        edges = cls(spark, ops, value_type, scope)
        try:
            ensure_workers(spark)  # the parts are built by faq's Python in the workers: check once that they can
            count = parts or default_parallelism(spark)
            if scan is None:
                built = frame.select(SRC, DST, WEIGHT).coalesce(count).mapInArrow(
                    functools.partial(_build_task, root, ops), _BUILT).toArrow()
            else:  # the tasks read equal shares of the files themselves (faq.recursive.edge_files)
                built = spark.range(0, count, 1, count).mapInArrow(
                    functools.partial(_build_files_task, root, ops, scan, scan.shares(count), symmetric),
                    _BUILT).toArrow()
            marks = built.filter(pc.is_null(built.column(_NODE)))  # a row per part: its rows and improving edges
            ids = sorted(int(p) for p in marks.column(_PART).to_numpy())
            edges.paths = tuple(f"{root}/part-{p}.bin" for p in ids)
            edges.parts = len(ids)
            edges.rows = int(pc.sum(marks.column(_ROWS)).as_py() or 0)
            edges.improving = int(pc.sum(marks.column(_IMPROVING)).as_py() or 0)
            nodes = built.column(_NODE).drop_null().to_numpy()
            edges.domain = KeyDomain(np.unique(nodes) if len(nodes) else NO_NODES)
            edges._write_codes(built, ids)
            if edges.parts:
                # One row per part, not cached: a range costs nothing to compute, while caching it cost a
                # job here and tied each part's task to the executor that held its block.
                edges._tasks = spark.range(0, edges.parts, 1, edges.parts).withColumnRenamed("id", _PART)
                edges._round_path = f"{root}/round.bin"
                schema = f"{DST} long, {_BEST} {value_type}, {SRC} long"
                edges._rounds = edges._tasks.mapInArrow(
                    functools.partial(_round_task, edges.paths, ops, edges._round_path), schema)
                scope.callback(edges._forget_parts)
        except BaseException:
            scope.close()
            raise
        return edges

    def _write_codes(self, built: "pa.Table", ids: list[int]) -> None:
        """Beside each part (``ids``, in :attr:`paths` order), its nodes' codes in the domain (the tasks read
        the values they are sent by them)."""
        import pyarrow.compute as pc

        from faq.joins.mapped import write_index

        rows = built.filter(pc.is_valid(built.column(_NODE)))
        parts, nodes = rows.column(_PART).to_numpy(), rows.column(_NODE).to_numpy()
        for p, path in zip(ids, self.paths):
            write_index(self.domain.lookup(np.sort(nodes[parts == p])), codes_path(path))

    def proposals(self, frontier: np.ndarray, values: np.ndarray, *, labels: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One job on the executors: proposals from the ``frontier`` (codes), ``values`` being every node's
        value (dense over codes); returns ``(source, target, proposal)`` as codes and values, one per
        target (module notes, step 4).

        ``labels=True`` ignores the frontier: every node proposes its own id (components' first round).
        From job :attr:`hops_after` on (:data:`HOPS_AFTER`), where the values fit :data:`SHIP_BYTES` and
        no edge is better than ``one`` (no cycle can improve values), each task goes on from the targets
        its proposals improve, hop after hop within its part, and returns every node it improved
        (module notes, "Hops within a part").
        """
        dtype = np.dtype(self.ops.dtype)
        if self._rounds is None or (not labels and not len(frontier)):
            return NO_NODES, NO_NODES, np.zeros(0, dtype=dtype)
        values = np.asarray(values, dtype=dtype)
        sent: Any = None  # labels: nothing to send
        if not labels:  # the frontier's codes in the domain: each part finds its own among its nodes' codes
            frontier = np.asarray(frontier, dtype=np.int64)
            sent = (frontier, values[frontier])
        hopping = self.hops_after is not None and self.rounds >= self.hops_after
        known = values if hopping and values.nbytes <= SHIP_BYTES and not self.improving else None
        if self.runner is not None:  # tasks that stay for every round (faq.recursive.resident_rounds)
            table = self.runner.run(sent, known)
        else:
            write_round(self._round_path, sent, known)
            table = self._rounds.toArrow()  # the same DataFrame every round: Spark analysed and planned it once
            self._round_jobs += 1
        self.rounds += 1
        if table.num_rows == 0:
            return NO_NODES, NO_NODES, np.zeros(0, dtype=dtype)
        # the tasks answer in the domain's codes (each part's codes file), so nothing is looked up here
        dst = table.column(DST).to_numpy()
        best = np.asarray(table.column(_BEST).to_numpy(zero_copy_only=False), dtype=dtype)
        src = table.column(SRC).to_numpy()
        return src, dst, best

    def _forget_parts(self) -> None:
        """Have the workers drop their mappings of the parts' files before they go (one small job, best effort;
        none when no round ran as a job: tasks that stayed for the rounds dropped theirs as they returned)."""
        if self._tasks is None or not self._round_jobs:
            return
        try:
            self._tasks.mapInArrow(functools.partial(_forget_task, self.paths), "forgotten long").toArrow()
        except Exception:  # noqa: BLE001 - a stopped session: its files directories went with it
            pass

    def close(self) -> None:
        self.scope.close()

    def __repr__(self) -> str:
        return f"ExecutorEdges({self.rows} edges, {self.parts} parts, {len(self.domain)} nodes)"


# --- in the tasks -----------------------------------------------------------------------------------------


def build_part(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, ops: NumpyForm) -> dict:
    """A part's index: ``nodes`` (sorted ids; codes are positions), ``trie`` (view ``(src, dst)``, parallel
    edges ⊕-merged, as the driver placement builds its edges) and how many of its edges are
    ``improving`` (better than ``one``: only they let a cycle improve values).

    >>> from faq.semirings import MIN_PLUS
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> part = build_part(np.array([7, 7, 3]), np.array([3, 3, 9]), np.array([2.0, 1.0, -1.0]), fixpoint_ops(MIN_PLUS))
    >>> part["nodes"].tolist(), part["trie"].rows, part["improving"]
    ([3, 7, 9], 2, 1)
    """
    span = dense_span(src, dst)
    if span is not None:  # ids spanning not much more than the rows (a graph's, mostly): a mask, not a sort
        seen = np.zeros(span, dtype=bool)
        seen[src] = True
        seen[dst] = True
        nodes = np.flatnonzero(seen)
        code = np.cumsum(seen, dtype=np.int64) - 1  # an id's position among the nodes
        src_codes, dst_codes = code[src], code[dst]
    else:
        nodes = np.unique(np.concatenate([src, dst]))
        src_codes, dst_codes = np.searchsorted(nodes, src), np.searchsorted(nodes, dst)
    rows = merge_rows([src_codes, dst_codes], weight, ops)
    return {"nodes": nodes, "trie": build_run(rows, View((0, 1)), ops),
            "improving": int(np.count_nonzero(better_than_one(rows.values_or_ones(ops), ops)))}


def _build_task(root: str, ops: NumpyForm, batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """Build this task's part from its edges and write it under ``root``; yield its node ids, then one row
    (null node) with its rows and improving edges.  A task without edges writes nothing."""
    from pyspark import TaskContext

    columns: dict[str, list] = {SRC: [], DST: [], WEIGHT: []}
    for batch in batches:
        for name in columns:
            columns[name].append(batch.column(name).to_numpy(zero_copy_only=False))
    if not columns[SRC] or not sum(len(c) for c in columns[SRC]):
        return
    with plain_pages():  # fresh arrays built once: no wait for huge pages (faq.huge_pages)
        src, dst = (np.concatenate(columns[n]).astype(np.int64, copy=False) for n in (SRC, DST))
        weight = np.asarray(np.concatenate(columns[WEIGHT]), dtype=ops.dtype)
    yield from _built_part(root, ops, TaskContext.get().partitionId(), src, dst, weight)


def _build_files_task(root: str, ops: NumpyForm, scan: EdgeScan, shares: tuple, symmetric: bool,
                      batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """:func:`_build_task` for the parts this task is given (a range's rows), each read from its share of the
    edges' Parquet files (:mod:`faq.recursive.edge_files`), not handed over by Spark; ``symmetric``: both
    directions of each, weighing ``one`` (components)."""
    for p in parts_of(batches):
        with plain_pages():
            src, dst, weight = fixpoint_rows(scan.read_share(shares[p]), ops, symmetric)
        if len(src):
            yield from _built_part(root, ops, p, src, dst, weight)


def _built_part(root: str, ops: NumpyForm, p: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray
                ) -> Iterator["pa.RecordBatch"]:
    """Part ``p`` of the edges built and written under ``root``; its node ids, then one row (null node) with
    its rows and improving edges."""
    import pyarrow as pa

    from faq.joins.mapped import write_index

    path = f"{root}/part-{p}.bin"
    with plain_pages():  # fresh arrays built once: no wait for huge pages (faq.huge_pages)
        part = build_part(src, dst, weight, ops)
        write_index(part, f"{path}.{os.getpid()}.partial")
    os.replace(f"{path}.{os.getpid()}.partial", path)  # complete or absent, should the task be retried
    nodes = part["nodes"]
    none = np.zeros(len(nodes), dtype=np.int64)
    yield pa.RecordBatch.from_arrays([pa.array(np.full(len(nodes), p, dtype=np.int64)), pa.array(nodes),
                                      pa.array(none), pa.array(none)], [_PART, _NODE, _IMPROVING, _ROWS])
    yield pa.RecordBatch.from_arrays([pa.array([p], pa.int64()), pa.array([None], pa.int64()),
                                      pa.array([part["improving"]], pa.int64()), pa.array([len(src)], pa.int64())],
                                     [_PART, _NODE, _IMPROVING, _ROWS])


def parts_of(batches: Iterator["pa.RecordBatch"]) -> Iterator[int]:
    """The part numbers a task of a range over the parts is given (its rows' first column)."""
    for batch in batches:
        yield from (int(p) for p in batch.column(0).to_numpy())


def codes_path(path: str) -> str:
    """Where part ``path``'s nodes' codes in the driver's domain are written."""
    return path[: -len(".bin")] + ".codes.bin"


def write_round(path: str, sent: Optional[tuple], known: Optional[np.ndarray]) -> None:
    """The next round's frontier (codes and values; None: labels) and ``known`` values, for its tasks to read
    from ``path``: written whole under another name, then renamed over the last round's."""
    from faq.joins.mapped import write_index

    partial = f"{path}.{os.getpid()}.partial"
    write_index({"sent": sent, "known": known}, partial)
    os.replace(partial, path)


def _round_task(paths: tuple[str, ...], ops: NumpyForm, round_path: str,
                batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """One job in a task: per part, the frontier's best proposal per target, or -- given ``known``, every
    node's value -- every node the part's hops improve (module notes)."""
    from faq.joins.mapped import read_index

    this_round = read_index(round_path)  # this round's file, read by each task anew (never kept mapped)
    sent, known = this_round["sent"], this_round["known"]
    for p in parts_of(batches):
        with plain_pages():  # a round's arrays are fresh and short-lived (faq.huge_pages)
            batch = round_part(paths[p], ops, sent, known)
        yield batch


def round_part(path: str, ops: NumpyForm, sent: Any, known: Optional[np.ndarray]) -> "pa.RecordBatch":
    """:func:`_round_task`'s answer for the part in ``path``."""
    import pyarrow as pa

    from faq.joins.mapped import mapped_file

    part = mapped_file(path)
    nodes, trie = part["nodes"], part["trie"]
    domain = mapped_file(codes_path(path))  # the part's nodes' codes in the driver's domain, sorted
    if sent is None:  # labels: every source proposes its own id
        codes = trie.levels[0].comp if trie.rows else NO_NODES
        values = nodes[codes].astype(ops.dtype)
    else:
        frontier, values = sent
        codes = np.searchsorted(domain, frontier)
        np.minimum(codes, max(len(domain) - 1, 0), out=codes)
        hit = np.flatnonzero(domain[codes] == frontier) if len(domain) else NO_NODES
        codes, values = codes[hit], values[hit]
    if known is None:
        at, dst, weight = out_edges([trie], codes, ops)
        target, best, source = best_per_target(dst, ops.mul(values[at], weight), codes[at], ops, len(nodes))
    else:
        local = known[domain]  # the driver's values, by this part's codes
        target, best, source = hops(trie, codes, values, local, ops)
    # -1: no proposal equals the ⊕ (a ⊕ that is not a choice); only parents read it
    source = np.where(source >= 0, domain[np.maximum(source, 0)], -1) if len(domain) else source
    return pa.RecordBatch.from_arrays([pa.array(domain[target]), pa.array(best), pa.array(source)],
                                      [DST, _BEST, SRC])


def hops(trie: Any, frontier: np.ndarray, values: np.ndarray, local: np.ndarray, ops: NumpyForm,
         edges: int = HOP_EDGES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Semi-naive rounds within one part: from ``frontier`` (its codes) with ``values``, over ``local``
    (every node's value as the driver holds it, by the part's codes; updated in place), until no
    proposal improves on ``local``, or after the hop that followed the ``edges``-th edge.  Returns the
    improved nodes, their values and the node whose edge last improved each (codes of the part).

    The cap keeps a job's speculative work near its fixed cost: far from the driver's frontier the
    part's values are often improved later from elsewhere (on R-MAT, where parts have no locality,
    uncapped hops made a job 0.95 s), while a long path through one part is followed in few jobs.

    Every value returned is a path's (sound); every node it improved is in the driver's next frontier,
    so its out-edges in the other parts are followed there (complete).

    >>> from faq.incremental.rows import KeyedRows, View, build_run
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> from faq.semirings import MIN_PLUS
    >>> ops = fixpoint_ops(MIN_PLUS)
    >>> trie = build_run(KeyedRows((np.array([0, 1, 2]), np.array([1, 2, 3])), np.array([1.0, 1.0, 1.0])),
    ...                  View((0, 1)), ops)
    >>> local = np.array([0.0, np.inf, np.inf, np.inf])
    >>> nodes, best, parent = hops(trie, np.array([0]), np.array([0.0]), local.copy(), ops)
    >>> nodes.tolist(), best.tolist(), parent.tolist()   # the chain 0 -> 1 -> 2 -> 3 in one call
    ([1, 2, 3], [1.0, 2.0, 3.0], [0, 1, 2])
    >>> local[2] = 1.5                                   # the driver knows 2 at 1.5 already: the hops stop
    >>> hops(trie, np.array([0]), np.array([0.0]), local, ops)[0].tolist()
    [1]
    """
    improved = np.zeros(len(local), dtype=bool)
    parent = np.full(len(local), -1, dtype=np.int64)
    codes, current = frontier, values
    followed = 0
    while len(codes) and followed < edges:
        at, dst, weight = out_edges([trie], codes, ops)
        followed += len(at)
        target, best, source = best_per_target(dst, ops.mul(current[at], weight), codes[at], ops, len(local))
        better = np.flatnonzero(ops.add(best, local[target]) != local[target])
        codes, current = target[better], best[better]
        local[codes] = current
        parent[codes] = source[better]
        improved[codes] = True
    found = np.flatnonzero(improved)
    return found, local[found], parent[found]


def _forget_task(paths: tuple[str, ...], batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """Drop this worker's mappings of ``paths`` (their files are about to be removed)."""
    import pyarrow as pa

    for _ in batches:
        pass
    yield pa.RecordBatch.from_arrays([pa.array([forget_parts(paths)], pa.int64())], ["forgotten"])


def forget_parts(paths: tuple[str, ...]) -> int:
    """Drop this process's mappings of the parts in ``paths`` and of their codes files; how many it held."""
    from faq.joins.mapped import forget

    return sum(forget(path) + forget(codes_path(path)) for path in paths)


def best_per_target(targets: np.ndarray, proposals: np.ndarray, sources: np.ndarray, ops: NumpyForm,
                    size: Optional[int] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct target, the ⊕ of its proposals and the source of its first proposal equal to it (-1: none
    is, as with a ⊕ that is not a choice); targets sorted.

    Dense over the codes below ``size`` (default: the largest target + 1): one ``⊕.at`` into an array of
    zeros and one pass to find the winners, no sort of the proposals (on R-MAT 18 a part's 1.46M
    proposals took 0.2 s by a stable argsort, ~0.02 s so).

    >>> from faq.semirings import MIN_PLUS
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> t, best, src = best_per_target(np.array([5, 3, 5]), np.array([2.0, 9.0, 1.0]), np.array([10, 11, 12]),
    ...                                fixpoint_ops(MIN_PLUS))
    >>> t.tolist(), best.tolist(), src.tolist()
    ([3, 5], [9.0, 1.0], [11, 12])
    >>> best_per_target(np.array([4, 4]), np.array([1.0, 1.0]), np.array([8, 7]), fixpoint_ops(MIN_PLUS))[2].tolist()
    [8]
    """
    if len(targets) == 0:
        return NO_NODES, np.zeros(0, dtype=ops.dtype), NO_NODES
    size = int(targets.max()) + 1 if size is None else size
    best = np.full(size, ops.zero, dtype=proposals.dtype)
    ops.add.at(best, targets, proposals)
    seen = np.zeros(size, dtype=bool)
    seen[targets] = True
    found = np.flatnonzero(seen)
    won = np.flatnonzero(proposals == best[targets])
    first = np.full(size, len(proposals), dtype=np.int64)  # the first winning proposal of each target
    np.minimum.at(first, targets[won], won)
    at = first[found]
    winners = np.where(at < len(proposals), sources[np.minimum(at, len(proposals) - 1)], -1)
    return found, best[found], winners.astype(np.int64, copy=False)
