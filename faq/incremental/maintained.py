"""Maintained queries: an FAQ whose answer is kept current as its factors change.

:func:`maintain` answers a query once and then takes *delta factors*:
``apply({"edge": delta})`` returns the :class:`~faq.incremental.change.Change`
of the answer (one row per output key: the key, the new ``version`` and the
``diff``) and advances the answer.  What a delta means depends on the
query's semiring:

rings (``integer``, ``real``) and ``counting``
    A delta row adds its (signed) value to the factor at its key: inserts are
    positive, deletes negative, a changed value is the difference.  The
    ``diff`` of the answer is the signed change.  ``counting`` factors are
    maintained in ℤ, which holds ℕ: a delete of a row that is not there
    raises :class:`~faq.errors.NegativeCountError`.
idempotent semirings (``min_plus``, ``max_plus``, ``boolean``, ``max_min``, …)
    A delta row sets the value at its key and must *improve* it
    (``new ⊕ old = new``): inserts, shorter distances, wider capacities.
    A deletion (the value zero) or a worsening raises
    :class:`~faq.errors.NonMonotoneUpdateError` unless
    ``recompute=True``.  The ``diff`` of an answer row is its new value.
anything else, or mixed aggregates
    Only ``recompute=True`` (the answer is recomputed from the new factors).

How a batch runs
----------------
The factors and the answer are *resident*: each factor is kept as a sorted
base plus a small overlay, indexed in the column orders its delta rules read
(:mod:`faq.incremental.index`), keyed by dense codes
(:mod:`faq.incremental.domain`).  A batch is checked against the current
values, then the exactly-once delta rules (:mod:`faq.incremental.rules`)
run as generic joins seeded by the batch (:mod:`faq.incremental.engine`),
in numpy, in the process that holds the indexes; the batch is merged into
the overlays and the answer.  With the indexes on the driver (the default
while they fit ``budget``: :meth:`MaintainedQuery.explain` shows the
decision) a batch runs no Spark job at all: deltas given as pandas, Arrow or
tuples never touch Spark, a Spark DataFrame delta costs the one job that
collects it.  Creating the maintained query reads the factors and computes
the first answer with Spark.

With ``path=`` the state is durable (:mod:`faq.incremental.store`): every
apply commits a new version (Parquet files written with pyarrow, then an
atomic manifest), a process killed at any moment of an apply reopens at the
previous version, :meth:`MaintainedQuery.open` reopens it without Spark, and
``apply(..., version=v)`` refuses a batch whose version was applied already.
Versions, the commit sequence and streaming are the one protocol of
everything maintained (:class:`~faq.incremental.durable.Maintained`); how a
semiring takes deltas is :mod:`faq.incremental.modes`, and the answer
evaluated by Spark (the first one, a recomputed batch)
:mod:`faq.incremental.evaluated`.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq import maintain
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> triangles = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge})
>>> triangles.scalar()
0
>>> triangles.apply({"edge": [(1, 3, 1), (2, 4, 1)]}).collect()     # closes 1-2-3 and 2-3-4
[Row(version=1, diff=2)]
>>> triangles.scalar(), triangles.version
(2, 1)
>>> triangles.apply({"edge": [(2, 3, -1)]}).collect()
[Row(version=2, diff=-2)]
>>> print(triangles.explain())                                        # doctest: +ELLIPSIS
maintained count() := edge(a, b), edge(b, c), edge(a, c)
  semiring counting; deltas signed (kept in integer)
  indexes on the driver: indexes ... within the driver budget of ... GiB
  overlays folded into the bases in a background thread, between batches (spark.faq.compaction=thread)
  relation edge(src, dst): 3 rows + 3 in the overlay; views (src, dst), (dst, src); ...
  rule 1: Δedge(a, b); order a, b, c; edge(b, c) old by (src, dst); edge(a, c) old by (src, dst); compiled loop
  rule 2: Δedge(b, c); order b, c, a; edge(a, b) new by (dst, src); edge(a, c) old by (dst, src); compiled loop
  rule 3: Δedge(a, c); order a, c, b; edge(a, b) new by (src, dst); edge(b, c) new by (dst, src); compiled loop
>>> triangles.close()
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

import numpy as np

from faq.errors import InvalidDeltaError, NotMaintainableError
from faq.factor import VALUE, Factor
from faq.incremental.change import BatchEvent, Change
from faq.incremental.durable import Maintained
from faq.incremental.engine import RuleRun, run_rules
from faq.incremental.index import KeyedRows
from faq.incremental.rule_kernel import rule_kernels
from faq.incremental.rules import (
    DeltaQuery,
    MaintenancePlan,
    RelationPlan,
    Term,
    budget_bytes,
    estimated_bytes,
    plan_rules,
    views_needed,
)
from faq.incremental.evaluated import EvaluatedAnswer, factor_table
from faq.incremental.modes import MONOTONE, RECOMPUTE, SIGNED, DeltaChecks, delta_mode, state_semiring
from faq.incremental.state import ANSWER, ResidentState, cast_arrow_values, to_arrow, value_ops
from faq.incremental.store import Store, restoring
from faq.language import FAQ, Atom, parse_query
from faq.placement_policy import EXECUTORS, for_indexes
from faq.scope import Owner, Scope
from faq.semirings import Semiring, get_semiring
from faq.spark_ui import described

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

Progress = Callable[[BatchEvent], None]

VERSION, DIFF = "version", "diff"

#: Names other modules read from here (the delta modes live in :mod:`faq.incremental.modes`).
__all__ = ["MaintainedQuery", "delta_mode", "ANSWER", "SIGNED", "MONOTONE", "RECOMPUTE", "DeltaLike"]

DeltaLike = Union[Factor, "DataFrame", "pa.Table", Any]


class MaintainedQuery(DeltaChecks, EvaluatedAnswer, Maintained, Owner):
    """An FAQ, its current factors and its current answer, at a version.

    Parameters
    ----------
    query : FAQ or str
    factors : mapping name -> Factor
        The initial factors (read once; later changes come as deltas).
    semiring : str or Semiring, optional
        Defaults to the query's, else its factors'.
    path : str, optional
        A directory to keep the state in (created; must not hold a state
        already: reopen that with :meth:`open`).
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` when a batch
        starts and ends.
    placement : {"auto", "driver", "executors"}
        Where the indexes live; ``auto`` keeps them on the driver while they
        fit ``budget``, else ships them to the executors
        (:mod:`faq.incremental.executors`: one Spark job per batch, classic
        Spark only).
    budget : int or str, optional
        The driver's index budget (bytes, or ``'512m'``, ``'4g'``); default
        the session's ``spark.faq.localMemory`` (:func:`faq.incremental.rules.budget_bytes`).

    Raises
    ------
    UnknownFactorError, ArityMismatchError, SemiringMismatchError
        As :func:`~faq.insideout.evaluate` does.
    """

    KIND, WHAT = "query", "a maintained query"

    def __init__(
        self,
        query: Union[FAQ, str],
        factors: Mapping[str, Factor],
        *,
        semiring: Union[str, Semiring, None] = None,
        path: Optional[str] = None,
        progress: Optional[Progress] = None,
        placement: str = "auto",
        budget: Optional[Union[int, str]] = None,
        _restored: Optional[tuple[ResidentState, dict]] = None,
        _annex: Optional[Mapping[str, Any]] = None,
    ) -> None:
        from faq.insideout.binding import query_semiring, variable_types

        self.query: FAQ = parse_query(query) if isinstance(query, str) else query
        self.progress = progress
        self.last_rules: list[RuleRun] = []
        self.remote = None
        self.scope = Scope()  # the executor indexes, when the placement is the executors
        # What a target built on this query keeps in the same manifest (a model's features), saved with every version.
        self.annex: dict[str, Any] = dict(_annex or {})
        if _restored is not None:
            self.state, meta = _restored
            self.annex = dict(meta.get("annex") or {})
            self.semiring = get_semiring(meta["semiring"])
            self._meta = meta["factors"]
            self._setup(meta.get("placement", "auto"), meta.get("budget"))
            self._register_views()
            self._place(self._make_plan(measured=True))
            return
        if path is not None:
            Store(path).check_new()  # a path that cannot hold the state is refused before any work
        self.semiring = query_semiring(self.query, factors, semiring)
        variable_types(self.query, factors, self.semiring)  # every check before any work (no Spark job)
        self._meta = {name: {"variables": list(factors[name].variables), "value": factors[name].value,
                             "semiring": factors[name].semiring.name} for name in self.query.factor_names}
        self._setup(placement, budget)
        if self.ops is None:
            raise NotMaintainableError(reason=self.why)
        rows = {name: factors[name].count() for name in self.query.factor_names}
        planned = self._make_plan(rows=rows)
        self.state = ResidentState(self.state_semiring, self.compaction)
        for name in self.query.factor_names:
            f = factors[name]
            table = factor_table(f, self.state_semiring.value_type)
            self.state.add(name, tuple(f.variables), table, VALUE, key_types=_key_types(f))
        self._register_views()
        self._set_answer(self._evaluate(factors))
        self._place(planned)
        if path is not None:
            self.state.attach(path, self._manifest())

    def _place(self, plan: MaintenancePlan) -> None:
        """Keep the indexes where ``plan`` says: on the driver, or shipped to the executors."""
        # where the indexes are and why: the names every result uses (FixpointResult's, MaintainedFixpoint's)
        self.placement, self.placement_reason = plan.placement, plan.reason
        if plan.placement == EXECUTORS and self.mode != RECOMPUTE:
            from faq.incremental.executors import ExecutorIndexes
            from faq.spark import get_session

            self.remote = self.scope.adopt(ExecutorIndexes(get_session(), self.state, list(self.query.factor_names)))
            self.state.remote = self.remote

    def _setup(self, placement: str, budget: Optional[Union[int, str]]) -> None:
        """Decide how deltas are taken, plan the rules and the views they read."""
        self.mode, self.why = delta_mode(self.query, self.semiring)
        # counting (ℕ) is maintained inside ℤ, which has the same + and × (Semiring.completion)
        self.state_semiring = state_semiring(self.semiring)
        self.ops = value_ops(self.state_semiring)  # None only for semirings without a numpy form
        self.requested_placement = placement
        self.budget = budget_bytes(budget)
        from faq.settings import compaction_mode
        from faq.spark import session_for_driver_data

        self.compaction = compaction_mode(session_for_driver_data())  # the setting ResidentState reads
        columns = {name: tuple(m["variables"]) for name, m in self._meta.items()}
        self.delta_query = DeltaQuery(tuple(Term(a.factor, a.variables) for a in self.query.atoms),
                                      self.query.free, columns=columns)
        self.rules = plan_rules(self.delta_query) if self.mode != RECOMPUTE else ()
        self.kernels = rule_kernels(self.rules, self.ops)  # per rule: the compiled loop or the numpy join

    def _register_views(self) -> None:
        for name, views in views_needed(self.rules).items():
            for view in views:
                self.state.relations[name].register(view)

    def _make_plan(self, rows: Optional[Mapping[str, int]] = None, measured: bool = False) -> MaintenancePlan:
        views = views_needed(self.rules)
        relations = []
        for name in self.query.factor_names:
            columns = tuple(self._meta[name]["variables"])
            mine = views.get(name, [])
            overlay = 0
            if measured:
                relation = self.state.relations[name]
                n, overlay, size = relation.base_rows, relation.overlay_rows, relation.nbytes
                if self.remote is not None:
                    size += self.remote.bytes.get(name, 0)
            else:
                n = int(rows[name])
                size = estimated_bytes(n, len(columns), max(len(mine), 1))
            relations.append(RelationPlan(name, columns, n, tuple(v.describe(columns) for v in mine), size, measured,
                                          overlay))
        total = sum(r.bytes for r in relations)
        if getattr(self, "placement_reason", None) is not None:  # decided when the indexes were built
            where, reason = self.placement, self.placement_reason
        else:
            where, reason = for_indexes(self.requested_placement, total, self.budget)
        kept = self.state_semiring.name
        mode = self.mode + (f" (kept in {kept})" if self.semiring.counts and self.mode == SIGNED else "")
        return MaintenancePlan(str(self.query), self.semiring.name, mode, where, reason, self.budget,
                               tuple(relations), tuple(r.describe(self.delta_query) for r in self.rules), self.why,
                               self.compaction, tuple(str(k) for k in self.kernels))

    def explain(self) -> MaintenancePlan:
        """Where the indexes live and why, their views and sizes, and every delta rule's order."""
        return self._make_plan(measured=True)

    @classmethod
    def plan_for(
        cls,
        query: Union[FAQ, str],
        factors: Mapping[str, Factor],
        *,
        semiring: Union[str, Semiring, None] = None,
        placement: str = "auto",
        budget: Optional[Union[int, str]] = None,
    ) -> MaintenancePlan:
        """The plan :func:`maintain` would follow, without building anything (one count job per factor).

        Index sizes are estimated from the factors' row counts (``~`` in the
        printout); :meth:`explain` of a built maintained query measures them.
        """
        from faq.insideout.binding import bind, query_semiring

        self = cls.__new__(cls)  # the planning half of __init__ only: no indexes, no answer
        self.query = parse_query(query) if isinstance(query, str) else query
        self.semiring = query_semiring(self.query, factors, semiring)
        bind(self.query, factors, self.semiring)
        self._meta = {name: {"variables": list(factors[name].variables), "value": factors[name].value,
                             "semiring": factors[name].semiring.name} for name in self.query.factor_names}
        self._setup(placement, budget)
        return self._make_plan(rows={name: factors[name].count() for name in self.query.factor_names})

    @property
    def store(self):
        return self.state.store

    @property
    def delta_names(self) -> list[str]:
        """The factors a batch may change."""
        return list(self.query.factor_names)

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns a delta of factor ``name`` is read from, those it must have): keys, then values."""
        meta = self._meta[name]
        return [*meta["variables"], meta["value"], VALUE], list(meta["variables"])

    # -- reading ------------------------------------------------------------------

    def factor(self, name: str) -> Factor:
        """The current value of factor ``name`` (a Spark DataFrame of its current rows)."""
        from faq.handback import spark_frame
        from faq.spark import get_session

        meta = self._meta[name]
        table = self.state.table(name, value=meta["value"])
        schema = self.state.spark_schema(name, value=meta["value"])
        df = spark_frame(get_session(), table, schema)
        return Factor(df=df, variables=tuple(meta["variables"]), semiring=get_semiring(meta["semiring"]),
                      value=meta["value"], name=name)

    @property
    def df(self) -> "DataFrame":
        """The current answer as a Spark DataFrame: the free variables and ``value`` (:meth:`answer`'s)."""
        return self.answer().df

    def answer(self) -> Factor:
        """The current answer: the free variables and a ``value`` column (a Spark DataFrame)."""
        from faq.handback import spark_frame
        from faq.spark import get_session

        value = VALUE if VALUE not in self.query.free else "__value"
        table = self.state.table(ANSWER, value=value)
        types = self.state.key_types.get(ANSWER, {})
        schema = ", ".join([*(f"`{v}` {types.get(v, 'bigint')}" for v in self.query.free),
                            f"`{value}` {self.semiring.value_type}"])
        df = spark_frame(get_session(), table, schema)
        return Factor(df=df, variables=self.query.free, semiring=self.semiring, value=value, name="answer")

    def scalar(self) -> Any:
        """The current value of a query without free variables (from the driver: no Spark job)."""
        answer = self.state.relations[ANSWER]
        if answer.arity:
            from faq.errors import FAQValueError

            raise FAQValueError(error_class="SCALAR_OF_FREE_QUERY", free=list(self.query.free), argument="scalar")
        total = answer.scalar_total()  # the levels' values summed, as current() sums them, without a merge
        value = total if total is not None else self.semiring.zero
        return self.semiring.python_value(value)

    # -- changing -----------------------------------------------------------------

    @described("maintained query")
    def apply(
        self,
        deltas: Optional[Mapping[str, DeltaLike]] = None,
        *,
        version: Optional[int] = None,
        recompute: bool = False,
        label: Optional[str] = None,
        before_commit: Optional[Callable[[Change], None]] = None,
        **named: DeltaLike,
    ) -> Change:
        """Apply one batch of delta factors; return the change of the answer.

        Parameters
        ----------
        deltas : mapping factor name -> delta
            A delta is a Factor, a Spark DataFrame (the factor's variable
            columns and its value column; a missing value column means "one"
            per row), pandas, an Arrow table, or tuples ``(keys..., value)``.
            A delta without its value column but with a ``diff`` column (the
            name of models' and trackers' deltas) is refused
            (:mod:`faq.incremental.multiplicity`).  Factors can also be given
            as keywords: ``apply(edge=rows)``.
        version : int, optional
            The version this batch makes (``self.version + 1``); a batch for
            a version reached already is refused, not counted twice.
        recompute : bool
            Recompute the answer from the new factors instead of by delta
            rules: the way to take deletions and worsening updates in a
            semiring without inverses (a delta row then *sets* the value).
        label : str, optional
            A name for the batch (e.g. its file), kept with the state.
        before_commit : callable, optional
            Called with the batch's :class:`~faq.incremental.change.Change`
            once it is known and before the state commits it: a sink of
            changes written there holds every committed version (a process
            that dies before the commit applies the batch again and gets the
            same change). An error it raises leaves the state as it was.

        Returns
        -------
        Change
            The free variables, ``version`` and ``diff``, one row per output
            key that changed (the signed change in a ring, the new value
            otherwise).

        Raises
        ------
        BatchAlreadyAppliedError, VersionGapError, InvalidDeltaError,
        NegativeCountError, NonMonotoneUpdateError, NotMaintainableError
            Before anything changes: the state stays at its version.
        InvalidBatchError
            A key column of another type than the state's (a string id into
            an integer factor), a null, NaN, a fraction or a value beyond the
            column's range, in a key or the value: refused before any key is
            encoded (:mod:`faq.incremental.batch_check`).
        """
        started = time.perf_counter()
        deltas = {**(deltas or {}), **named}
        target = self._next_version(version)
        if self.mode == RECOMPUTE and not recompute:
            raise NotMaintainableError(reason=f"{self.why}; pass recompute=True")
        batches = {name: self._batch(name, delta) for name, delta in deltas.items()}
        if recompute:
            return self._recomputed(batches, target, label, started, before_commit)
        batches = {name: b for name, b in batches.items() if len(b)}
        if self.mode == MONOTONE:
            for name, batch in batches.items():
                self._refuse_deletions(name, batch)
        description = ""
        if self.progress:  # the events' text only for a callback to read
            description = f"{sum(len(b) for b in batches.values())} changed row(s) through " \
                          f"{sum(1 for r in self.rules if r.relation in batches)} delta rule(s)" + \
                          (" on the executors" if self.remote is not None else "")
            self._emit(BatchEvent("start", target, description, label=label or ""))
        stats: list[RuleRun] = []
        if self.remote is None:
            batches = {name: self._checked_here(name, b) for name, b in batches.items()}
            keys, values = run_rules(self.rules, self.state.relations, batches, self.ops, len(self.state.domain),
                                     stats, kernels=self.kernels)
        else:  # one Spark job: the tasks look the batch up and run the rules; checked here before any commit
            keys, values, looked = self.remote.run(self.rules, batches, self.mode == MONOTONE,
                                                   len(self.query.free), self.kernels)
            batches = {name: self._checked(name, b, looked[name] if self._looks_up else None)
                       for name, b in batches.items()}
        self.last_rules = stats
        answer = self.state.relations[ANSWER]
        if self.mode == MONOTONE and len(values):
            present, before = answer.lookup(keys)
            after = np.where(present, self.ops.add(before, values), values)
            changed = ~present | (after != before)
            keys, values = [k[changed] for k in keys], after[changed]
        answer_batch = KeyedRows(tuple(keys), values)
        change = self._change(keys, values, target, time.perf_counter() - started, batches, stats)

        def merge() -> None:
            for name, batch in batches.items():
                self.state.commit(name, batch)
            answer.commit(answer_batch)

        # Durable first (the commit point), then in memory: a failure before leaves both as they were.
        self._commit(target, label, change=change, before_commit=before_commit, merge=merge,
                     save=lambda labels: None if self.state.store is None else  # in memory: no manifest built
                     self.state.save(target, self._manifest(), {**batches, ANSWER: answer_batch}, labels))
        change.seconds = time.perf_counter() - started
        if self.progress:
            self._emit(BatchEvent("done", target, description, len(values), change.seconds, label or ""))
        return change

    def _change(self, keys, values, target: int, seconds: float, batches, stats) -> Change:
        decoded = tuple(self.state.domain.decode(k) for k in keys)
        diff = np.asarray(values)
        if self.semiring.counts:
            diff = diff.astype(np.int64)
        types = {**self.state.key_types.get(ANSWER, {}), DIFF: self.semiring.value_type
                 if self.mode != SIGNED or not self.semiring.counts else self.state_semiring.value_type}
        info = {"rows": sum(len(b) for b in batches.values()), "rules": len(stats),
                "bindings": sum(s.bindings for s in stats)}
        return Change(tuple(self.query.free), decoded, diff, target, seconds, info=info, types=types)

    def _batch(self, name: str, delta: DeltaLike) -> KeyedRows:
        """A delta as rows of codes, merged per key (zeros kept where a zero means "delete")."""
        if name not in self.state.relations or name == ANSWER:
            known = [n for n in self.state.relations if n != ANSWER]
            raise InvalidDeltaError(name, f"the query has no factor {name!r} (it has {', '.join(known)})",
                                    known=known)
        meta = self._meta[name]
        columns = list(meta["variables"])
        from faq.incremental import batch_check  # (the module, not the name: a benchmark swaps the check out)

        spec = batch_check.factor_spec(columns, self.state.key_types.get(name, {}), self.state.semiring.value_type)
        small = None if self.state.semiring.structured else batch_check.small_int_rows(delta, spec)
        if small is not None:  # a few tuples of the state's types, checked: numpy directly, no Arrow
            raw = list(np.ascontiguousarray(small.T))
            return self.state.coded(raw[:-1], raw[-1].astype(self.state.ops.dtype, copy=False),
                                    keep_zeros=self.mode != SIGNED)
        if isinstance(delta, Factor):
            if len(delta.variables) != len(columns):
                raise InvalidDeltaError(name, f"it has {len(delta.variables)} variables, the factor "
                                              f"{len(columns)}", expected=len(columns), found=len(delta.variables))
            df = delta.df.select(*[delta.df[v].alias(c) for v, c in zip(delta.variables, columns)],
                                 delta.df[delta.value].alias(VALUE))
            table = to_arrow(df, columns, what=f"the delta of {name!r}")
        else:
            table = to_arrow(delta, columns, what=f"the delta of {name!r}", relation=name, target=self.WHAT)
            for c in columns:
                if c not in table.column_names:
                    from faq.errors import MissingColumnError

                    raise MissingColumnError(column=c, available=table.column_names, source=f"the delta of {name!r}")
            if VALUE not in table.column_names:  # a 'diff' column instead (a model's or a stream's name) is refused
                from faq.incremental.multiplicity import check_multiplicity

                check_multiplicity(table.column_names, meta["value"], factor=name, target="a maintained query",
                                   data=columns, meaning="value (in a ring its signed change, e.g. +1 / -1)",
                                   default="the semiring's one")
            value = meta["value"] if meta["value"] in table.column_names else VALUE
            if value != VALUE and value in table.column_names:
                table = table.rename_columns([VALUE if c == value else c for c in table.column_names])
        # before any key is encoded: a string id, a NaN or a null saved into an integer state breaks it
        table = batch_check.check_batch(table, spec, relation=name, target=self.WHAT)
        if VALUE in table.column_names:
            table = cast_arrow_values(table, self.state.semiring.value_type)
        return self.state.rows(name, table, VALUE, columns, keep_zeros=self.mode != SIGNED)

    # -- saving -------------------------------------------------------------------

    @classmethod
    def open(cls, path: str, *, progress: Optional[Progress] = None) -> "MaintainedQuery":
        """Reopen a state saved with ``state=`` at its last committed version (no Spark needed)."""
        meta = cls._saved_manifest(path)
        with restoring(path):
            state, meta = ResidentState.load(path, get_semiring(meta["semiring_state"]))
            q = meta["query"]
            query = FAQ(tuple(Atom(f, tuple(vs)) for f, vs in q["atoms"]), tuple(q["free"]), q["name"],
                        q["semiring"], tuple(tuple(a) for a in q["aggregates"]))
            return cls(query, {}, progress=progress, _restored=(state, meta))

    def save(self, path: str) -> None:
        """Start keeping the state in ``path`` (an empty directory) from the current version on."""
        self.state.attach(path, self._manifest())

    def _manifest(self) -> dict[str, Any]:
        q = self.query
        return {
            "kind": self.KIND,
            "semiring": self.semiring.name,
            "query": {"atoms": [[a.factor, list(a.variables)] for a in q.atoms], "free": list(q.free),
                      "name": q.name, "semiring": q.semiring, "aggregates": [list(a) for a in q.aggregates],
                      "text": str(q)},
            "factors": self._meta,
            "placement": self.requested_placement,
            "budget": self.budget,
            "annex": self.annex,
        }

    # -- releasing ----------------------------------------------------------------

    def settle(self) -> None:
        """Wait for the compactions running in the background and swap their results in (answers never wait)."""
        self.state.settle()

    def close(self) -> None:
        """Drop the resident indexes, on the driver or the executors (:attr:`scope`); a saved state stays on disk."""
        self.state.settle(report=False)  # no compaction process outlives the query
        self._release_store()
        self.scope.close()
        self.remote = self.state.remote = None
        self.state.relations = {n: r for n, r in self.state.relations.items() if n == ANSWER}

    def __repr__(self) -> str:
        return f"MaintainedQuery({str(self.query)!r}, semiring={self.semiring.name!r}, version={self.version})"


# --- helpers ---------------------------------------------------------------------------


def _key_types(f: Factor) -> dict[str, str]:
    types = dict(f.dtypes())  # Spark's simple type strings; held rows answer without Spark
    return {v: types[v] for v in f.variables}


