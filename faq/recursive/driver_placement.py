"""The driver placement of a maintained fixpoint: its first answer, its reopening, and how a batch runs.

:class:`DriverFixpoint` is the :class:`~faq.recursive.holders.FixpointHolder`
that keeps a :class:`~faq.recursive.maintained.MaintainedFixpoint`'s edges in
a resident index and its answer in a value array on the driver (as
:mod:`faq.recursive.spark_placement` keeps them on Spark): it solves the
first answer (:meth:`~DriverFixpoint._start`), takes a reopened state
(:meth:`~DriverFixpoint._restore`: parents rebuilt from the answer), and
runs a batch (the module notes of :mod:`faq.recursive.maintained`, "How a
batch runs"):

* :meth:`~DriverFixpoint._update` sorts the batch into insertions, worse
  weights and deletions (pairs present in the index);
* an insert-only batch propagates from its effective edges
  (:meth:`~DriverFixpoint._insert`);
* a batch that removes or worsens an edge trims the derivation forest,
  re-seeds the trimmed nodes from their surviving in-edges and propagates,
  then inserts (:meth:`~DriverFixpoint._trim`, :mod:`faq.recursive.trimming`);
* with an edge better than ``one`` (a negative weight), or ``recompute=True``,
  such a batch is solved from scratch instead (:meth:`~DriverFixpoint._recompute`).

Each saves first (the durable commit point, as *assignments*:
:mod:`faq.recursive.fixpoint_state`), then changes the index in memory; an
error on the way leaves edges, values and parents as they were.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from faq.factor import Factor
from faq.incremental.change import BatchEvent, Change
from faq.incremental.domain import KeyDomain
from faq.incremental.index import KeyedRows, ResidentRelation, assigned, build_run, merge_rows
from faq.placement_policy import DRIVER
from faq.recursive.edge_input import node_array
from faq.recursive.edges import FORWARD, REVERSE, EdgeRelation
from faq.recursive.fixpoint_state import ANSWER, EDGE, FixpointState, last_per_key, save_replaced
from faq.recursive.holders import OLD, FixpointOwner
from faq.recursive.propagate import better_than_one, propagate
from faq.recursive.seminaive import DST, NODE, SRC, VALUE, WEIGHT
from faq.recursive.trimming import cut_roots, forest, reseed, subtrees

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.io.updates import UpdateBatch

__all__ = ["DriverFixpoint"]

NO_CODES = np.zeros(0, dtype=np.int64)

Hook = Optional[Callable[[Change], None]]  # ``before_commit``: called with the change before the commit


class DriverFixpoint:
    """A maintained fixpoint's edges and answer held on the driver (module notes).

    Parameters
    ----------
    owner : FixpointOwner
        The problem, and the hooks a batch calls back (commit, events, manifest, inputs).
    edges, nodes
        The initial edges and extra nodes (as for the owner); or
    restored : (FixpointState, dict), optional
        A state saved on the driver placement and its manifest.
    """

    where = DRIVER
    inserts = "semi-naive rounds from the delta on the resident index (no Spark job)"
    writer = "from the driver"

    def __init__(self, owner: FixpointOwner, edges: Any = None, nodes: Any = None, *,
                 restored: Optional[tuple[FixpointState, dict]] = None) -> None:
        self.owner = owner
        self.semiring, self.ops, self.components = owner.semiring, owner.ops, owner.components
        self.source, self.max_iterations, self._note = owner.source, owner.max_iterations, owner._note
        self.name, self.reason = owner.name, owner.placement_reason
        self._factor: Optional[Factor] = None  # the answer as a Spark factor, made on first use
        if restored is not None:
            self._restore(*restored)
        else:
            self._start(edges, nodes)

    def _start(self, edges: Any, nodes: Any) -> None:
        """Collect the edges into the resident index and solve the first answer on the driver."""
        src, dst, weight = self.owner._arrays(edges, initial=True)
        extra = node_array(nodes) if self.components else np.zeros(0, dtype=np.int64)
        ends = [src, dst, extra] + ([] if self.components else [np.array([self.source], dtype=np.int64)])
        state = FixpointState(self.semiring)
        state.domain = KeyDomain.of(ends)
        s, d = state.domain.encode(src), state.domain.encode(dst)
        edge = EdgeRelation.build(EDGE, (SRC, DST), self._edge_rows(s, d, weight), self.ops)
        state.relations[EDGE] = edge
        state.key_types[EDGE] = {SRC: "bigint", DST: "bigint"}
        self.resident = state
        self._edges = len(edge.base)
        self._may_cycle = self._edges_may_cycle(edge.base)
        # components: every node known is a node of the answer
        seeds = np.arange(len(state.domain), dtype=np.int64) if self.components else None
        self._values, self._parent, self.initial_iterations = self._solve(edge.runs(FORWARD), seeds)
        self._adopt_answer()

    # -- the holder's interface (faq.recursive.holders) -----------------------------------

    @property
    def versions(self) -> FixpointState:
        """The resident state records its versions (and its store, with ``path=``)."""
        return self.resident

    @property
    def size(self) -> int:
        return self._count

    @property
    def edge_rows(self) -> int:
        return self._edges

    def table(self) -> "pa.Table":
        """The answer from the value array: no Spark job."""
        import pyarrow as pa

        codes = np.flatnonzero(self._values[: len(self.resident.domain)] != self.ops.zero)
        nodes = self.resident.domain.decode(codes).astype(np.int64, copy=False)
        order = np.argsort(nodes, kind="stable")
        return pa.table({NODE: nodes[order], VALUE: self._values[codes][order]})

    def head(self, n: int) -> list[tuple]:
        table = self.table().slice(0, n)
        return list(zip(table.column(NODE).to_pylist(), table.column(VALUE).to_pylist()))

    def value(self, node: int) -> Any:
        code = self.resident.domain.lookup(np.array([int(node)], dtype=np.int64))[0]
        if code < 0 or self._values[code] == self.ops.zero:
            return None
        return self._values[code].item()

    @property
    def state(self) -> Factor:
        """The answer on Spark, made on first use after a change (one DataFrame from the driver's rows)."""
        if self._factor is None:
            from faq.relation import Relation

            table = self.table()  # held: Spark makes the DataFrame only when a job needs it
            rows = Relation.from_arrays({c: table.column(c).to_numpy() for c in (NODE, VALUE)},
                                        {NODE: "bigint", VALUE: self.semiring.value_type})
            self._factor = Factor(relation=rows, variables=(NODE,), semiring=self.semiring, value=VALUE,
                                  name=f"{self.name}*")
        return self._factor

    @property
    def edges(self) -> Factor:
        from faq.handback import spark_frame
        from faq.spark import get_session

        table = self.resident.table(EDGE, value=WEIGHT)
        schema = f"{SRC} bigint, {DST} bigint, {WEIGHT} {self.semiring.value_type}"
        df = spark_frame(get_session(), table, schema)
        return Factor(df=df, variables=(SRC, DST), semiring=self.semiring, value=WEIGHT, name=self.name)

    @property
    def deletions(self) -> str:
        if self._may_cycle:
            return ("recompute (an edge is better than one, e.g. a negative weight in min_plus: "
                    "parents need not form a forest)")
        return "trimming of the derivation forest, re-derive from surviving in-edges"

    def batch(self, inserts: Any, deletes: Any, *, recompute: bool, target: int, label: str,
              update: Optional["UpdateBatch"], started: float, before_commit: Hook) -> Change:
        """The batch's rows as arrays, then :meth:`_update` between its two events."""
        ins = self.owner._arrays(inserts) if inserts is not None else None
        dels = self.owner._arrays(deletes, weights=False) if deletes is not None else None
        what = _describe(ins, dels)
        self.owner._emit(BatchEvent("start", target, what, label=label))
        change = self._update(ins, dels, recompute, target, label, started, before_commit)
        self.owner._emit(BatchEvent("done", target, what, len(change), change.seconds, label))
        return change

    def recompute(self, started: float) -> Change:
        return self._recompute(None, None, self.owner.version, "recompute", started, new_version=False)

    def attach(self, path: str) -> None:
        self.resident.attach(path, self.owner._manifest())

    def close(self) -> None:
        """Drop the index and the values (a saved state stays on disk)."""
        self.resident.relations = {}
        self._values = np.zeros(0, dtype=self.ops.dtype)
        self._parent = np.zeros(0, dtype=np.int64)
        self._factor = None

    # -- the answer relation ----------------------------------------------------------------

    def _adopt_answer(self) -> None:
        """The answer relation of the state: read from the value array (it changes in place)."""
        state = self.resident
        state.relations[ANSWER] = ResidentRelation(ANSWER, (NODE,), KeyedRows((NO_CODES,), None), self.ops)
        state.key_types[ANSWER] = {NODE: "bigint"}
        state.answer_rows = self._answer_rows
        self._count = int(np.count_nonzero(self._values[: len(state.domain)] != self.ops.zero))

    def _answer_rows(self) -> KeyedRows:
        codes = np.flatnonzero(self._values[: len(self.resident.domain)] != self.ops.zero)
        return KeyedRows((codes,), self._values[codes])

    def _restore(self, state: FixpointState, meta: dict) -> None:
        """A reopened state: the answer as saved, the parents rebuilt from it (or all solved again)."""
        self.reason = "reopened from a saved state"
        self.name = meta.get("name", "edges")
        self.resident = state
        self.ops = ops = state.ops
        answer = state.relations[ANSWER].current()
        n = len(state.domain)
        self._values = np.full(n, ops.zero, dtype=ops.dtype)
        if len(answer):
            self._values[answer.keys[0]] = answer.values_or_ones(ops)
        edge = state.relations[EDGE]
        self._edges = len(edge.current())
        self._may_cycle = self._edges_may_cycle(edge.current())
        codes = np.arange(n, dtype=np.int64)
        roots = codes[self._values == state.domain.decode(codes)] if self.components else \
            state.domain.lookup(np.array([self.source], dtype=np.int64))
        roots = roots[roots >= 0]
        self._parent, complete = forest(self._values, edge.runs(FORWARD), ops, roots)
        if not complete:  # the answer does not derive from the edges (it always should): solve again
            self._note("the saved answer does not derive from the saved edges: solving again")
            seeds = np.flatnonzero(self._values != ops.zero) if self.components else None
            self._values, self._parent, _ = self._solve(edge.runs(FORWARD), seeds)
        self._adopt_answer()
        self.initial_iterations = int(meta.get("initial_iterations", 0))

    # -- batches ----------------------------------------------------------------------

    def _update(self, ins: Optional[tuple], dels: Optional[tuple], recompute: bool, target: int, label: str,
                started: float, before_commit: Hook = None) -> Change:
        """Sort the batch into insertions, worse weights and deletions; run the way it needs."""
        state, ops = self.resident, self.ops
        edge = state.relations[EDGE]
        new_nodes = NO_CODES
        rows = KeyedRows((NO_CODES, NO_CODES), np.zeros(0, ops.dtype))
        if ins is not None and len(ins[0]):
            src, dst, weight = ins
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
        worse = present & (ops.add(before, new) != new)
        gone = self._present_pairs(dels)
        if not worse.any() and not len(gone):
            return self._insert(rows, present, before, new_nodes, target, label, started, before_commit)
        if recompute or self._may_cycle or bool(better_than_one(new, ops).any()):
            return self._recompute(ins, dels, target, label, started, before_commit=before_commit)
        return self._trim(rows, worse, gone, new_nodes, target, label, started, before_commit)

    def _present_pairs(self, dels: Optional[tuple]) -> KeyedRows:
        """The pairs of ``dels`` in the index (codes, sorted; both directions for components)."""
        ops, domain = self.ops, self.resident.domain
        if dels is None or not len(dels[0]):
            return KeyedRows((NO_CODES, NO_CODES), None)
        a, b = domain.lookup(dels[0]), domain.lookup(dels[1])
        known = (a >= 0) & (b >= 0) & (a != b if self.components else True)
        a, b = a[known], b[known]
        if self.components:
            a, b = np.concatenate([a, b]), np.concatenate([b, a])
        pairs = merge_rows([a, b], None, ops)
        present, _ = self.resident.relations[EDGE].lookup(pairs.keys)
        return pairs.take(np.flatnonzero(present))

    def _insert(self, rows: KeyedRows, present: np.ndarray, before: np.ndarray, new_nodes: np.ndarray,
                target: int, label: str, started: float, before_commit: Hook = None) -> Change:
        """An insert-only batch (module notes, steps 3-5): rounds from the effective edges."""
        state, ops = self.resident, self.ops
        edge = state.relations[EDGE]
        new = rows.values_or_ones(ops)
        effective = rows.take(np.flatnonzero(~present | (new != before)))
        added = int(np.count_nonzero(~present))
        s, d = effective.keys
        w = effective.values_or_ones(ops)
        may_cycle = self._may_cycle or bool(better_than_one(w, ops).any())
        values = self._values
        try:
            if len(new_nodes):  # a node of its own: labelled with its id
                values[new_nodes] = state.domain.decode(new_nodes)
            result = propagate(values, edge.runs(FORWARD, build_run(effective, FORWARD, ops)), ops,
                               first=(s, d, w), max_iterations=self.max_iterations,
                               nodes=len(state.domain) if may_cycle else None, semiring=self.semiring.name,
                               example=self._decode_one, parents=self._parent)
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
        info = self._info(label, result.iterations, effective, 0, 0, False)
        change = self._change(nodes, old, values[nodes], target, time.perf_counter() - started, info,
                              self._live_count())
        try:
            self._save(target, label, effective, nodes, change, before_commit)
        except BaseException:
            values[nodes] = old
            self._parent[result.nodes] = result.old_parents
            raise
        edge.commit(effective)
        self._may_cycle = may_cycle
        self._edges += added
        change.seconds = time.perf_counter() - started
        return change

    def _trim(self, rows: KeyedRows, worse: np.ndarray, gone: KeyedRows, new_nodes: np.ndarray, target: int,
              label: str, started: float, before_commit: Hook = None) -> Change:
        """A batch that removes or worsens edges: trim, re-seed, propagate; then its insertions (module notes)."""
        state, ops, domain = self.resident, self.ops, self.resident.domain
        edge = state.relations[EDGE]
        values, parents = self._values, self._parent
        saved_values, saved_parents = values.copy(), parents.copy()  # O(nodes): the undo of a failed batch
        w = np.flatnonzero(worse)
        removed = merge_rows([np.concatenate([g, r[w]]) for g, r in zip(gone.keys, rows.keys)], None, ops)
        undo = edge.remove(removed.keys)
        try:
            if len(new_nodes):
                values[new_nodes] = domain.decode(new_nodes)
            trimmed = subtrees(parents, cut_roots(parents, *removed.keys))
            values[trimmed] = domain.decode(trimmed) if self.components else ops.zero
            parents[trimmed] = -1
            seeded = reseed(values, parents, trimmed, edge.runs(FORWARD if self.components else REVERSE), ops)
            again = propagate(values, edge.runs(FORWARD), ops, frontier=trimmed if self.components else seeded,
                              max_iterations=self.max_iterations, record=False, parents=parents)
            iterations = int(len(trimmed) > 0) + again.iterations
            # the insertions: a worsened pair is absent now, so it is new again
            present, before = edge.lookup(rows.keys)
            new = rows.values_or_ones(ops)
            effective = rows.take(np.flatnonzero(~present | (new != before)))
            if len(effective):
                more = propagate(values, edge.runs(FORWARD, build_run(effective, FORWARD, ops)), ops,
                                 first=(*effective.keys, effective.values_or_ones(ops)),
                                 max_iterations=self.max_iterations, record=False, parents=parents)
                iterations += more.iterations
            changed = np.flatnonzero(values != saved_values)
            deleted = len(gone) // 2 if self.components else len(gone)
            info = self._info(label, iterations, effective, deleted, len(trimmed), False)
            change = self._change(changed, saved_values[changed], values[changed], target,
                                  time.perf_counter() - started, info, self._live_count())
            # saved as assignments: a removed pair gets the zero, an inserted one its weight
            zeros = KeyedRows(removed.keys, np.full(len(removed), ops.zero, dtype=ops.dtype))
            self._save(target, label, last_per_key([zeros, KeyedRows(effective.keys, effective.values_or_ones(ops))],
                                                   ops), changed, change, before_commit)
        except BaseException:
            values[:], parents[:] = saved_values, saved_parents
            edge.restore(undo)
            raise
        edge.commit(effective)
        edge.compact_if_needed()
        self._edges += int(np.count_nonzero(~present)) - len(removed)
        change.seconds = time.perf_counter() - started
        return change

    def _save(self, target: int, label: str, edges: KeyedRows, nodes: np.ndarray, change: Change,
              before_commit: Hook) -> None:
        """``before_commit``, then durable (the commit point): the batch's edges and the changed nodes' values, set."""
        state = self.resident
        answer = KeyedRows((nodes,), self._values[nodes])

        def save(labels: list[str]) -> None:
            state.save(target, self.owner._manifest(), {EDGE: edges, ANSWER: answer}, labels)

        self.owner._commit(target, label, change=change, before_commit=before_commit, save=save)
        self._factor = None
        self._count = change.count

    def _live_count(self) -> int:
        """Nodes with a value now (the values as a batch left them, before its commit)."""
        return int(np.count_nonzero(self._values[: len(self.resident.domain)] != self.ops.zero))

    def _info(self, label: str, iterations: int, effective: KeyedRows, deleted: int, trimmed: int,
              recomputed: bool) -> dict:
        inserted = len(effective) // 2 if self.components else len(effective)
        return {"batch": label, "iterations": iterations, "inserted": inserted, "deleted": deleted,
                "trimmed": trimmed, "recomputed": recomputed}

    def _recompute(self, ins: Optional[tuple], dels: Optional[tuple], target: int, label: str, started: float,
                   new_version: bool = True, before_commit: Hook = None) -> Change:
        """Deletions remove pairs, insertions set them; then the answer from scratch on the driver."""
        state, ops = self.resident, self.ops
        domain = state.domain
        extra_nodes = NO_CODES
        set_rows = KeyedRows((NO_CODES, NO_CODES), np.zeros(0, ops.dtype))
        if ins is not None and len(ins[0]):
            src, dst, weight = ins
            if self.components:
                extra_nodes = domain.encode(np.concatenate([src, dst]))
                loop = src == dst
                src, dst, weight = src[~loop], dst[~loop], weight[~loop]
            set_rows = self._edge_rows(domain.encode(src), domain.encode(dst), weight)
        gone = self._present_pairs(dels)
        self._grow(len(domain))
        zeros = KeyedRows(gone.keys, np.full(len(gone), ops.zero, dtype=ops.dtype))
        changes = last_per_key([zeros, KeyedRows(set_rows.keys, set_rows.values_or_ones(ops))], ops)
        if len(changes):
            merged = assigned(state.relations[EDGE].current(), changes, ops)
            new_edge = EdgeRelation(EDGE, (SRC, DST), merged, ops)
        else:  # the same edges (recompute()): keep the index and the views built on it
            new_edge = state.relations[EDGE]
            merged = new_edge.current()
        n = len(domain)
        old_values = self._values[:n]
        seeds = None
        if self.components:  # nodes stay nodes when their edges go
            seeds = np.union1d(np.flatnonzero(old_values != ops.zero), extra_nodes)
        may_cycle = self._edges_may_cycle(merged)
        self._note(f"recomputing from scratch on {len(merged)} edge(s)")
        values, parents, iterations = self._solve(new_edge.runs(FORWARD), seeds, may_cycle)
        changed = np.flatnonzero(values != old_values)
        answer = np.flatnonzero(values != ops.zero)
        info = self._info(label, iterations, set_rows, len(gone) // 2 if self.components else len(gone), 0, True)
        change = self._change(changed, old_values[changed].copy(), values[changed], target,
                              time.perf_counter() - started, info, len(answer))
        rows = {EDGE: merged, ANSWER: KeyedRows((answer,), values[answer])}
        # Durable first: the relations are replaced (saved whole), restored if the save fails.
        before = state.relations[EDGE]
        state.relations[EDGE] = new_edge
        try:
            if new_version:
                self.owner._commit(target, label, change=change, before_commit=before_commit,
                             save=lambda labels: save_replaced(state, target, self.owner._manifest(), rows, labels))
            elif len(changed):  # recompute(): the same version, saved again
                save_replaced(state, target, self.owner._manifest(), rows, list(state.labels))
        except BaseException:
            state.relations[EDGE] = before
            raise
        self._values, self._parent = values, parents
        self._count = len(answer)
        self._edges = len(merged)
        self._may_cycle = may_cycle
        self._factor = None
        change.seconds = time.perf_counter() - started
        return change

    def _solve(self, runs: list, seeds: Optional[np.ndarray], may_cycle: Optional[bool] = None
               ) -> tuple[np.ndarray, np.ndarray, int]:
        """The answer from scratch: ``seeds`` labelled with their ids (components) or the source with one.

        Returns values, parents and the rounds run.
        """
        ops, domain = self.ops, self.resident.domain
        frontier = seeds if self.components else domain.encode(np.array([self.source], dtype=np.int64))
        values = np.full(len(domain), ops.zero, dtype=ops.dtype)
        parents = np.full(len(domain), -1, dtype=np.int64)
        values[frontier] = domain.decode(frontier) if self.components else ops.one
        may_cycle = self._may_cycle if may_cycle is None else may_cycle
        result = propagate(values, runs, ops, frontier=frontier, max_iterations=self.max_iterations,
                           nodes=len(domain) if may_cycle else None, semiring=self.semiring.name, record=False,
                           example=self._decode_one, progress=self._note, parents=parents)
        return values, parents, result.iterations

    def _change(self, nodes: np.ndarray, old: np.ndarray, new: np.ndarray, target: int, seconds: float,
                info: dict, count: int) -> Change:
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
        return Change((NODE,), (keys,), new, target, seconds, extra={OLD: old_column}, count=count, info=info,
                      types=types)

    # -- rows and room --------------------------------------------------------------------

    def _decode_one(self, code: int) -> Any:
        value = self.resident.domain.decode(np.array([code]))[0]
        return value.item() if hasattr(value, "item") else value

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
            self._parent = np.concatenate([self._parent, np.full(more, -1, dtype=np.int64)])


def _describe(ins: Optional[tuple], dels: Optional[tuple]) -> str:
    """A batch in words, for its events."""
    parts = []
    if ins is not None:
        parts.append(f"{len(ins[0])} insertion(s)")
    if dels is not None:
        parts.append(f"{len(dels[0])} deletion(s)")
    return (", ".join(parts) or "nothing") + " on the resident index"
