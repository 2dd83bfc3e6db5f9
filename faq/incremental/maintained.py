"""Maintained queries: an FAQ whose answer is kept current as its factors change.

:func:`maintain` answers a query once and then takes *delta factors*:
``apply({"edge": delta})`` returns the change of the answer (one row per
output key: the key, the new ``version`` and the ``diff``) and advances the
answer.  What a delta means depends on the query's semiring:

rings (``integer``, ``real``) and ``counting``
    A delta row adds its (signed) value to the factor at its key: inserts are
    positive, deletes negative, a changed value is the difference.  The
    ``diff`` of the answer is the signed change.  ``counting`` factors are
    maintained in ℤ, which holds ℕ: a delete of a row that is not there
    raises :class:`~faq.incremental.errors.NegativeCountError`.
idempotent semirings (``min_plus``, ``max_plus``, ``boolean``, ``max_min``, …)
    A delta row sets the value at its key and must *improve* it
    (``new ⊕ old = new``): inserts, shorter distances, wider capacities.
    A deletion (the value zero) or a worsening raises
    :class:`~faq.incremental.errors.NonMonotoneDeltaError` unless
    ``recompute=True``.  The ``diff`` of an answer row is its new value.
anything else, or mixed aggregates
    Only ``recompute=True`` (the answer is recomputed from the new factors).

The change is computed by the exactly-once delta rules of
:mod:`faq.incremental.rules`, each a join seeded by one delta; the state is
only the input factors (:mod:`faq.incremental.state`) and the answer.

With ``path=`` the state is durable (:mod:`faq.incremental.store`): every
apply commits a new version, an apply that fails leaves the previous one,
:meth:`MaintainedQuery.open` reopens it, and ``apply(..., version=v)``
refuses a batch whose version was applied already.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.incremental import maintain
>>> edge = factor_of([(1, 2, 1), (2, 3, 1), (3, 4, 1)], ["src", "dst"], "counting")
>>> triangles = maintain("count() := edge(a,b), edge(b,c), edge(a,c)", {"edge": edge})
>>> triangles.scalar()
0
>>> add = factor_of([(1, 3, 1), (2, 4, 1)], ["src", "dst"], "counting")   # closes 1-2-3 and 2-3-4
>>> triangles.apply({"edge": add}).collect()
[Row(version=1, diff=2)]
>>> triangles.scalar(), triangles.version
(2, 1)
>>> triangles.apply({"edge": factor_of([(2, 3, -1)], ["src", "dst"], "integer")}).collect()
[Row(version=2, diff=-2)]
>>> triangles.close()
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

from faq.errors import MissingColumnError
from faq.factor import VALUE, Factor
from faq.incremental.errors import (
    BatchAlreadyAppliedError,
    InvalidDeltaError,
    NegativeCountError,
    NonMonotoneDeltaError,
    NotMaintainableError,
    VersionGapError,
)
from faq.incremental.rules import aggregate_rules, atom_frame, rule_plan, seed_frame, sum_contributions
from faq.incremental.state import RelationState, release
from faq.incremental.store import Store
from faq.insideout.executor import StepEvent
from faq.joins.frame import VALUE_COLUMN
from faq.query import FAQ, Atom, parse_query
from faq.semirings import INTEGER, Semiring, get_semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

Progress = Callable[[StepEvent], None]

VERSION = "version"
DIFF = "diff"
ANSWER = "__answer"

# How a semiring's deltas are taken (see the module notes).
SIGNED, MONOTONE, RECOMPUTE = "signed", "monotone", "recompute"


def maintain(
    query: Union[FAQ, str],
    factors: Mapping[str, Factor],
    *,
    semiring: Union[str, Semiring, None] = None,
    path: Optional[str] = None,
    progress: Optional[Progress] = None,
) -> "MaintainedQuery":
    """Answer ``query`` over ``factors`` and keep the answer current (see :class:`MaintainedQuery`)."""
    return MaintainedQuery(query, factors, semiring=semiring, path=path, progress=progress)


class MaintainedQuery:
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
        Receives a :class:`~faq.insideout.executor.StepEvent` per delta rule.

    Raises
    ------
    UnknownFactorError, ArityMismatchError, SemiringMismatchError
        As :func:`~faq.insideout.evaluate` does.
    """

    def __init__(
        self,
        query: Union[FAQ, str],
        factors: Mapping[str, Factor],
        *,
        semiring: Union[str, Semiring, None] = None,
        path: Optional[str] = None,
        progress: Optional[Progress] = None,
        _restored: Optional[tuple[dict[str, Any], dict[str, RelationState], Store]] = None,
    ) -> None:
        from faq.insideout.executor import bind, evaluate, query_semiring

        self.query: FAQ = parse_query(query) if isinstance(query, str) else query
        self.progress = progress
        self._change_frames: list = []  # the last change returned, kept until the next apply
        if _restored is not None:
            meta, states, store = _restored
            self.semiring = get_semiring(meta["semiring"])
            self._setup()
            self.version = int(meta["version"])
            self._meta = meta["factors"]
            self.answer_state = states.pop(ANSWER)
            self.states = states
            self.store: Optional[Store] = store
            return
        self.semiring = query_semiring(self.query, factors, semiring)
        bind(self.query, factors, self.semiring)  # every check before any work
        self._setup()
        self.version = 0
        self._meta = {name: {"variables": list(factors[name].variables), "value": factors[name].value,
                             "semiring": factors[name].semiring.name} for name in self.query.factor_names}
        self.states = {name: RelationState.of(factors[name].df, factors[name].variables, factors[name].value,
                                              self.state_semiring)
                       for name in self.query.factor_names}
        with evaluate(self.query, {n: self.factor(n) for n in self.states}, semiring=self.semiring) as result:
            self.answer_state = RelationState.of(result.factor.df, self.query.free, result.factor.value,
                                                 self.state_semiring)
        self.store = None
        if path is not None:
            store = Store(path)
            if store.exists():
                from faq.incremental.errors import StateDirectoryError

                raise StateDirectoryError(store.path, "a saved state is here already; reopen it with "
                                                      "MaintainedQuery.open or choose another directory")
            store.save(0, self._manifest(), self._all_states())
            self.store = store

    def _setup(self) -> None:
        """Decide how deltas are taken, and whether rules use the worst-case optimal join."""
        from faq.hypergraph.acyclic import is_acyclic

        ring = self.semiring
        mixed = any(get_semiring(s).name != ring.name for _, s in self.query.aggregates)
        if mixed:
            self.mode, self.why = RECOMPUTE, "its aggregates mix several ⊕ (they do not commute with deltas)"
        elif ring.is_ring or ring.name == "counting":
            self.mode, self.why = SIGNED, ""
        elif ring.idempotent:
            self.mode, self.why = MONOTONE, ""
        else:
            self.mode, self.why = RECOMPUTE, f"semiring {ring.name!r} has neither inverses nor an idempotent ⊕"
        # counting (ℕ) is maintained inside ℤ, which has the same + and ×
        self.state_semiring = INTEGER if ring.name == "counting" else ring
        self.cyclic = not is_acyclic([a.variables for a in self.query.atoms])

    # -- reading ------------------------------------------------------------------

    def factor(self, name: str) -> Factor:
        """The current value of factor ``name`` (merged per key: an aggregation, lazily)."""
        meta = self._meta[name]
        df = self.states[name].merged()
        columns = [*meta["variables"]]
        df = df.select(*columns, df[VALUE_COLUMN].cast(self.semiring.value_type).alias(meta["value"]))
        return Factor(df=df, variables=tuple(columns), semiring=get_semiring(meta["semiring"]),
                      value=meta["value"], name=name)

    def answer(self) -> Factor:
        """The current answer: the free variables and a ``value`` column."""
        value = VALUE if VALUE not in self.query.free else "__value"
        df = self.answer_state.merged()
        df = df.select(*self.query.free, df[VALUE_COLUMN].cast(self.semiring.value_type).alias(value))
        return Factor(df=df, variables=self.query.free, semiring=self.semiring, value=value, name="answer")

    def scalar(self) -> Any:
        """The current value of a query without free variables."""
        return self.answer().scalar()

    # -- changing -----------------------------------------------------------------

    def apply(
        self,
        deltas: Mapping[str, Union[Factor, "DataFrame"]],
        *,
        version: Optional[int] = None,
        recompute: bool = False,
    ) -> "DataFrame":
        """Apply one batch of delta factors; return the change of the answer.

        Parameters
        ----------
        deltas : mapping factor name -> Factor or DataFrame
            A DataFrame has the factor's variable columns and its value
            column (a missing value column means "one" per row); a Factor
            of the same arity is taken column by column.
        version : int, optional
            The version this batch makes (``self.version + 1``); a batch for
            a version reached already is refused, not counted twice.
        recompute : bool
            Recompute the answer from the new factors instead of by delta
            rules: the way to take deletions and worsening updates in a
            semiring without inverses (a delta row then *sets* the value).

        Returns
        -------
        DataFrame
            The free variables, ``version`` and ``diff``, one row per output
            key that changed (the signed change in a ring, the new value
            otherwise).  It stays cached until the next apply.

        Raises
        ------
        BatchAlreadyAppliedError, VersionGapError, InvalidDeltaError,
        NegativeCountError, NonMonotoneDeltaError, NotMaintainableError
            Before anything changes: the state stays at its version.
        """
        target = self.version + 1
        if version is not None and version != target:
            if version <= self.version:
                raise BatchAlreadyAppliedError(version=version, current=self.version)
            raise VersionGapError(version=version, current=self.version)
        if self.mode == RECOMPUTE and not recompute:
            raise NotMaintainableError(reason=f"{self.why}; pass recompute=True")
        made: list[RelationState] = []
        scratch: list = []  # caches of this apply, released at its end
        try:
            # name -> (materialised rows, their number)
            normalised = {name: self._normalised(name, delta) for name, delta in deltas.items()}
            scratch.extend(d for d, _ in normalised.values())
            if recompute:
                new_states = {name: self.states[name].assigned(d) if self.mode != SIGNED
                              else self.states[name].with_delta(d, n) for name, (d, n) in normalised.items()}
            else:
                normalised = {name: self._checked(name, *d) for name, d in normalised.items()}
                scratch.extend(d for d, _ in normalised.values())
                new_states = {name: self.states[name].with_delta(d, n) for name, (d, n) in normalised.items()}
            made.extend(new_states.values())
            states = {**self.states, **new_states}
            # sources: what the change reads, kept until the next apply
            if recompute:
                change, answer, sources = self._recomputed(states, target)
            else:
                change, answer, sources = self._by_rules(normalised, states, target, scratch)
            made.append(answer)
            if self.store is not None:
                self.store.save(target, self._manifest(), {**states, ANSWER: answer})
        except BaseException:
            release(made, [*self.states.values(), self.answer_state])
            _release_all(scratch)  # nothing of this apply is kept
            raise
        old = [*self.states.values(), self.answer_state]
        self.states, self.answer_state, self.version = states, answer, target
        kept = [*self.states.values(), self.answer_state]
        release(old, kept)
        owned = [f for state in kept for f in state.frames()]
        _release_all([d for d in scratch if not any(d is f for f in owned)])
        # The previous change is released now; so is what it read, unless a state keeps it.
        _release_all([d for d in self._change_frames if not any(d is f for f in owned)])
        self._change_frames = [change, *sources]
        return change

    def _normalised(self, name: str, delta: Union[Factor, "DataFrame"]) -> tuple["DataFrame", int]:
        """The delta as materialised rows of the state's columns, merged per key, and their number."""
        from pyspark.sql import functions as F

        if name not in self.states:
            raise InvalidDeltaError(name, f"the query has no factor {name!r} (it has {', '.join(self.states)})",
                                    known=list(self.states))
        meta = self._meta[name]
        columns = list(meta["variables"])
        if isinstance(delta, Factor):
            if len(delta.variables) != len(columns):
                raise InvalidDeltaError(name, f"it has {len(delta.variables)} variables, the factor "
                                              f"{len(columns)}", expected=len(columns), found=len(delta.variables))
            df = delta.df.select(*[F.col(v).alias(c) for v, c in zip(delta.variables, columns)],
                                 F.col(delta.value).alias(VALUE_COLUMN))
        else:
            for c in columns:
                if c not in delta.columns:
                    raise MissingColumnError(column=c, available=delta.columns, source=f"the delta of {name!r}")
            value = meta["value"] if meta["value"] in delta.columns else VALUE if VALUE in delta.columns else None
            one = self.state_semiring.one_col()
            df = delta.select(*columns, (F.col(value) if value else one).alias(VALUE_COLUMN))
        return self.states[name].normalise(df, VALUE_COLUMN, keep_zeros=self.mode != SIGNED)

    def _checked(self, name: str, delta: "DataFrame", rows: int) -> tuple["DataFrame", int]:
        """Refuse what the mode cannot take; in monotone mode drop rows that change nothing.

        The delta is joined with the current values at its keys and each row
        flagged by Column expressions of the semiring; one aggregate counts
        the flags (an example row is fetched only for an error).
        """
        from pyspark.sql import functions as F

        from faq.spark import materialise_small

        state = self.states[name]
        ring = self.semiring
        if self.mode == SIGNED and ring.name != "counting":
            return delta, rows
        keys = list(state.variables)
        new_value, old_value = F.col(VALUE_COLUMN), F.col("__old")
        if self.mode == SIGNED:  # counting: multiplicities stay >= 0; only deletions can break that
            delta_all, delta = delta, delta.where(new_value < 0)
            if not delta.limit(1).collect():  # a small delta is a local relation: no Spark job
                return delta_all, rows
        old = state.lookup(delta).withColumnRenamed(VALUE_COLUMN, "__old")
        if self.mode == SIGNED:
            flags = {"negative": F.coalesce(old_value, F.lit(0)) + new_value < 0}
        else:
            flags = {"deletion": ring.is_zero(new_value),
                     "worsening": old_value.isNotNull() & (ring.add(old_value, new_value) != new_value),
                     "changes": old_value.isNull() | (new_value != old_value)}
        both = delta.join(old, keys, "left").select(*keys, VALUE_COLUMN, *[c.alias(f"__{n}") for n, c in
                                                                              flags.items()])
        both = both.persist()  # read by the tally, an example and the kept rows
        try:
            tally = both.agg(*[F.sum(F.col(f"__{n}").cast("int")).alias(n) for n in flags]).first()
            for kind in ("negative", "deletion", "worsening"):
                if kind in flags and tally[kind]:
                    first = both.where(F.col(f"__{kind}")).select(*keys).first()
                    example = tuple(first) if first is not None else None
                    if kind == "negative":
                        raise NegativeCountError(factor=name, count=tally[kind], example=example)
                    raise NonMonotoneDeltaError(factor=name, kind=kind, count=tally[kind], example=example,
                                                semiring=ring.name)
            if self.mode == SIGNED:
                return delta_all, rows
            return materialise_small(both.where(F.col("__changes")).select(*keys, VALUE_COLUMN))
        finally:
            both.unpersist()

    def _by_rules(self, deltas: Mapping[str, tuple["DataFrame", int]], states: Mapping[str, RelationState], target: int,
                  scratch: list) -> tuple["DataFrame", RelationState, list]:
        from pyspark.sql import functions as F

        from faq.spark import materialise_small

        atoms = self.query.atoms
        changed = [a.factor in deltas and deltas[a.factor][1] > 0 for a in atoms]
        ring = self.state_semiring
        rules = rule_plan(changed)
        started = time.perf_counter()
        description = f"{len(rules)} delta rule(s): " + "; ".join(str(r) for r in rules)
        if self.progress:
            self.progress(StepEvent("start", 1, 1, description))
        pairs = []
        for rule in rules:
            columns = self._meta[atoms[rule.seed].factor]["variables"]
            seed = seed_frame(deltas[atoms[rule.seed].factor][0], columns, atoms[rule.seed].variables)
            others = [self._frame(atoms[j], states if j in rule.new else self.states) for j in rule.new + rule.old]
            pairs.append((seed, others))
        parts = aggregate_rules(self.query, pairs, ring, self.cyclic, scratch)
        if self.progress:
            self.progress(StepEvent("done", 1, 1, description, None, time.perf_counter() - started))
        free = list(self.query.free)
        if not parts:
            spark = self.answer_state.base.sparkSession
            empty = spark.createDataFrame([], self.answer_state.base.schema)
            change = empty.select(*free, F.lit(target).alias(VERSION), F.col(VALUE_COLUMN).alias(DIFF))
            return change, self.answer_state, []
        summed = sum_contributions(parts, free, ring)
        if self.mode == MONOTONE:
            old = self.answer_state.lookup(summed) if free else self.answer_state.merged()
            old = old.withColumnRenamed(VALUE_COLUMN, "__old")
            joined = summed.join(old, free, "left") if free else _scalar_join(summed, old)
            value, before = F.col(VALUE_COLUMN), F.col("__old")
            after = F.when(before.isNull(), value).otherwise(ring.add(before, value))
            summed = joined.where(before.isNull() | (after != before)).select(*free, after.alias(VALUE_COLUMN))
        delta_q, rows = materialise_small(summed)
        answer = self.answer_state.with_delta(delta_q, rows)
        change = delta_q.select(*free, F.lit(target).alias(VERSION), F.col(VALUE_COLUMN).alias(DIFF))
        return change, answer, [delta_q]

    def _frame(self, atom: Atom, states: Mapping[str, RelationState]):
        return atom_frame(states[atom.factor].rows(), self._meta[atom.factor]["variables"], atom.variables)

    def _recomputed(self, states: Mapping[str, RelationState],
                    target: int) -> tuple["DataFrame", RelationState, list]:
        """The answer from the new factors, and its difference to the current one."""
        from pyspark.sql import functions as F

        from faq.insideout.executor import evaluate
        from faq.spark import checkpoint

        factors = {}
        for name, state in states.items():
            meta = self._meta[name]
            df = state.merged().select(*meta["variables"], F.col(VALUE_COLUMN).alias(meta["value"]))
            factors[name] = Factor(df=df, variables=tuple(meta["variables"]),
                                   semiring=self.semiring, value=meta["value"], name=name)
        with evaluate(self.query, factors, semiring=self.semiring) as result:
            answer = RelationState.of(result.factor.df, self.query.free, result.factor.value, self.state_semiring)
        free = list(self.query.free)
        ring = self.state_semiring
        new = answer.base.withColumnRenamed(VALUE_COLUMN, "__new")
        old = self.answer_state.merged().withColumnRenamed(VALUE_COLUMN, "__old")
        joined = new.join(old, free, "full_outer") if free else _scalar_join(new, old, outer=True)
        before = F.coalesce(F.col("__old"), ring.zero_col())
        after = F.coalesce(F.col("__new"), ring.zero_col())
        diff = after - before if self.mode == SIGNED else after
        change = checkpoint(joined.where(after != before).select(*free, F.lit(target).alias(VERSION),
                                                                 diff.alias(DIFF)))
        return change, answer, []

    # -- saving -------------------------------------------------------------------

    @classmethod
    def open(cls, path: str, *, progress: Optional[Progress] = None) -> "MaintainedQuery":
        """Reopen a state saved with ``path=`` at its last committed version."""
        store = Store(path)
        meta = store.manifest()
        if meta.get("kind") != "query":
            from faq.incremental.errors import StateDirectoryError

            raise StateDirectoryError(store.path, f"it holds a {meta.get('kind')!r} state, not a maintained query")
        semiring = get_semiring(meta["semiring"])
        inner = INTEGER if semiring.name == "counting" else semiring
        _, states = store.load({name: inner for name in meta["relations"]})
        q = meta["query"]
        query = FAQ(tuple(Atom(f, tuple(vs)) for f, vs in q["atoms"]), tuple(q["free"]), q["name"],
                    q["semiring"], tuple(tuple(a) for a in q["aggregates"]))
        return cls(query, {}, progress=progress, _restored=(meta, states, store))

    def save(self, path: str) -> None:
        """Start keeping the state in ``path`` (an empty directory) from the current version on."""
        store = Store(path)
        store.save(self.version, self._manifest(), self._all_states())
        self.store = store

    def _manifest(self) -> dict[str, Any]:
        q = self.query
        return {
            "kind": "query",
            "semiring": self.semiring.name,
            "query": {"atoms": [[a.factor, list(a.variables)] for a in q.atoms], "free": list(q.free),
                      "name": q.name, "semiring": q.semiring, "aggregates": [list(a) for a in q.aggregates],
                      "text": str(q)},
            "factors": self._meta,
        }

    def _all_states(self) -> dict[str, RelationState]:
        return {**self.states, ANSWER: self.answer_state}

    # -- releasing ----------------------------------------------------------------

    def close(self) -> None:
        """Release every cache the maintained query holds (its saved state, if any, stays)."""
        release([*self.states.values(), self.answer_state], [])
        _release_all(self._change_frames)

    def __enter__(self) -> "MaintainedQuery":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MaintainedQuery({str(self.query)!r}, semiring={self.semiring.name!r}, version={self.version})"


def _scalar_join(left: "DataFrame", right: "DataFrame", outer: bool = False) -> "DataFrame":
    """Join two DataFrames of at most one row each (no key): a cross join that keeps a lone side."""
    from pyspark.sql import functions as F

    key = "__one"
    how = "full_outer" if outer else "left"
    return left.withColumn(key, F.lit(1)).join(right.withColumn(key, F.lit(1)), key, how).drop(key)


def _release_all(frames: list) -> None:
    from faq.spark import release as release_frame

    for df in frames:
        release_frame(df)
    frames.clear()
