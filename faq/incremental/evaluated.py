"""The answer evaluated by Spark: a maintained query's first answer, and a recomputed batch.

A maintained query computes its first answer with InsideOut
(:func:`~faq.insideout.executor.evaluate`) and keeps it as a resident
relation; a batch it cannot take by delta rules (``apply(...,
recompute=True)``: deletions in an idempotent semiring, a semiring without a
numpy form) is applied by evaluating the query again over the new factors
and taking the :func:`difference` to the current answer.  Factors' rows come
to the driver as Arrow tables (:func:`factor_table`), from the driver's own
copy when it holds one (:func:`held_table`: no Spark job).

:class:`EvaluatedAnswer` is that part of :class:`~faq.incremental.MaintainedQuery`
(a mixin: it reads ``query``, ``semiring``, ``mode``, ``state`` and ``_meta``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import numpy as np

from faq.factor import VALUE, Factor
from faq.incremental.change import Change
from faq.incremental.index import KeyedRows, merge_rows
from faq.incremental.modes import SIGNED
from faq.incremental.state import ANSWER, arrow_values

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EvaluatedAnswer", "factor_table", "held_table", "difference"]


class EvaluatedAnswer:
    """Methods of :class:`~faq.incremental.MaintainedQuery` that evaluate the answer with Spark (a mixin)."""

    def _recomputed(self, batches: Mapping[str, KeyedRows], target: int, label: Optional[str],
                    started: float, before_commit: Optional[Callable[[Change], None]] = None) -> Change:
        """The answer from the new factors (evaluated by Spark), and its difference to the current one."""
        from faq.incremental.index import assigned

        new_rows = {}
        for name, batch in batches.items():
            if self.mode == SIGNED:
                new_rows[name] = self.state.after(name, batch)
            else:  # a delta row sets the value
                new_rows[name] = assigned(self.state.current(name), batch, self.state.ops)
        factors = {name: self._factor_of(name, new_rows.get(name)) for name in self.query.factor_names}
        answer_table = self._evaluate(factors)
        ops = self.state.ops
        new_answer = self.state.rows(ANSWER, answer_table, VALUE, self.query.free) if self.query.free else \
            merge_rows((), arrow_values(answer_table, ops), ops)
        old = self.state.current(ANSWER)
        keys, diff = difference(old, new_answer, ops, signed=self.mode == SIGNED)
        change = self._change(keys, diff, target, time.perf_counter() - started, batches, [])
        replaced = {**new_rows, ANSWER: new_answer}

        def merge() -> None:  # the relations' rows replaced, in memory
            for name, new in replaced.items():
                self.state.replace(name, new)

        self._commit(target, label, change=change, before_commit=before_commit, merge=merge,
                     save=lambda labels: self.state.save(target, self._manifest(), {}, labels, replaced=replaced))
        change.seconds = time.perf_counter() - started
        return change

    def _factor_of(self, name: str, rows: Optional[KeyedRows]) -> Factor:
        from faq.handback import spark_frame
        from faq.spark import get_session

        meta = self._meta[name]
        table = self.state.table(name, rows, value=meta["value"])
        schema = ", ".join([*(f"`{c}` {self.state.key_types[name].get(c, 'bigint')}" for c in meta["variables"]),
                            f"`{meta['value']}` {self.semiring.value_type}"])
        df = spark_frame(get_session(), table, schema)
        return Factor(df=df, variables=tuple(meta["variables"]), semiring=self.semiring, value=meta["value"],
                      name=name)

    def _evaluate(self, factors: Mapping[str, Factor]) -> "pa.Table":
        """The answer over ``factors`` computed by Spark (InsideOut), as an Arrow table (keys, ``value``)."""
        from faq.insideout.executor import evaluate

        with evaluate(self.query, factors, semiring=self.semiring) as result:
            f = result.factor
            held = held_table(f, self.state.semiring.value_type)  # computed in-process: no Spark job
            if held is not None:
                return held
            from pyspark.sql import functions as F

            df = f.df.select(*f.variables, F.col(f.value).cast(self.state.semiring.value_type).alias(VALUE))
            table = df.toArrow()
        return table

    def _set_answer(self, table: "pa.Table") -> None:
        free = self.query.free
        if free:
            self.state.add(ANSWER, free, table, VALUE)
        else:
            from faq.incremental.index import ResidentRelation

            values = arrow_values(table, self.state.ops)
            self.state.hold(ANSWER, ResidentRelation(ANSWER, (), merge_rows((), values, self.state.ops), self.state.ops))
            self.state.key_types[ANSWER] = {}


def factor_table(f: Factor, value_type: str) -> "pa.Table":
    """A factor's rows with a non-null key, values cast to ``value_type`` (one Spark job).

    A factor whose rows the driver holds (made from pandas, numpy or an edge
    list read on the driver) is read from that copy: no Spark job.
    """
    held = held_table(f, value_type)
    if held is not None:
        return held
    from pyspark.sql import functions as F

    condition = F.lit(True)
    for v in f.variables:
        condition = condition & F.col(v).isNotNull()
    df = f.df.where(condition).select(*f.variables, F.col(f.value).cast(value_type).alias(VALUE))
    return df.toArrow()


def held_table(f: Factor, value_type: str) -> Optional["pa.Table"]:
    """The driver's copy of factor ``f`` as :func:`factor_table` gives it (keys non-null by construction),
    or None when the driver holds no copy of its rows."""
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy
    from faq.semirings.numpy_backend import NUMPY_DTYPES

    relation = f.relation
    if not relation.held:
        return None
    held = relation.arrays
    values = np.asarray(held[f.value])
    if values.ndim == 1:
        values = values.astype(NUMPY_DTYPES.get(value_type, values.dtype), copy=False)
    return pa.table({**{v: arrow_from_numpy(np.asarray(held[v])) for v in f.variables}, VALUE: arrow_from_numpy(values)})


def difference(old: KeyedRows, new: KeyedRows, ops, signed: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """Keys whose value differs between ``old`` and ``new``: new − old (signed), else the new value
    (the zero where a key went away)."""
    from faq.incremental.index import lookup_runs
    from faq.incremental.domain import SPAN
    from faq.joins.csr import build_trie

    if not (old.keys or new.keys):  # scalars
        before = old.values_or_ones(ops)[0] if len(old) else ops.zeros(1)[0]
        after = new.values_or_ones(ops)[0] if len(new) else ops.zeros(1)[0]
        if np.array_equal(after, before):
            return [], ops.zeros(0)
        return [], np.array([after - before if signed else after], dtype=ops.dtype)

    def index(rows: KeyedRows):
        return build_trie(list(rows.keys), SPAN, rows.values_or_ones(ops), hashable=False)

    _, before = lookup_runs([index(old)], list(new.keys), ops)   # old value at each new key
    after = new.values_or_ones(ops)
    changed = np.flatnonzero(~ops.is_zero(after - before) if signed else (after != before))
    kept, _ = lookup_runs([index(new)], list(old.keys), ops)     # old keys still there
    gone = np.flatnonzero(~kept)
    keys = [np.concatenate([n[changed], o[gone]]) for n, o in zip(new.keys, old.keys)]
    old_values = old.values_or_ones(ops)
    if signed:
        values = np.concatenate([after[changed] - before[changed], -old_values[gone]])
    else:
        values = np.concatenate([after[changed], ops.zeros(len(gone))])
    return keys, values
