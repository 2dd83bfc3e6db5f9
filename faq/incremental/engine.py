"""Delta rules run over resident indexes, in numpy: the generic join seeded by a batch.

:func:`run_rules` runs the rules of a batch (:mod:`faq.incremental.rules`
plans them).  Each is the worst-case optimal generic join of
:mod:`faq.joins.extenders` — count / propose / validate, attribute at a
time — whose first prefix is the batch's rows instead of the first
attribute's values.  Relations are :class:`~faq.joins.extenders.RunsExtender`
s over the base and overlay of their resident index (and the batch, when a
rule reads the new state); negated terms and distinct vertices are
:class:`~faq.joins.extenders.FilterExtender` s.  Each binding's value is the
seed's value ⊗ the values of the relations it went through, ⊕-combined per
free-variable key in numpy.  The work of a rule is its seed rows times the
degrees they reach, never the size of a relation.

A rule the plan gives the compiled loop (:mod:`faq.incremental.rule_kernel`:
one ⊕-aggregated value, no negated term, a semiring with a compiled form)
runs there instead, over the same runs; ``kernels`` carries that choice in.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.engine import run_rules
>>> from faq.incremental.index import KeyedRows, ResidentRelation, merge_rows
>>> from faq.incremental.rules import DeltaQuery, Term, plan_rules, views_needed
>>> from faq.semirings.numpy_backend import numpy_ops
>>> from faq.semirings import INTEGER
>>> ops = numpy_ops(INTEGER)
>>> q = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("b", "c")), Term("edge", ("a", "c"))), ())
>>> rules = plan_rules(q)
>>> edge = ResidentRelation.build("edge", ("src", "dst"), KeyedRows((np.array([0, 1]), np.array([1, 2])), None), ops)
>>> for view in views_needed(rules)["edge"]:
...     edge.register(view)
>>> batch = merge_rows([np.array([0]), np.array([2])], np.array([1]), ops)    # insert 0 -> 2
>>> keys, values = run_rules(rules, {"edge": edge}, {"edge": batch}, ops, key_span=3)
>>> values.tolist()                                                           # one new triangle
[1]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.incremental.index import KeyedRows, ResidentRelation, lookup_runs
from faq.incremental.rule_kernel import COMPILED, NUMPY, RuleKernel, aggregate_rules
from faq.incremental.rules import NEW, OLD, DeltaRule, Read
from faq.joins.compiled import int64_parts
from faq.joins.csr import Trie
from faq.joins.extenders import ArrayBackend, Chunk, FilterExtender, RunsExtender, complete
from faq.joins.partial import PartialAggregate
from faq.semirings.numpy_backend import NumpyForm

# Largest number of candidates one piece of prefixes may propose (memory bound per level).
PIECE_ROWS = 1 << 16
_SEED_VALUE = ("s", 0)


@dataclass
class RuleRun:
    """What one rule did in a batch: seed rows, bindings reached, seconds, and the kernel that ran it."""

    rule: int
    seeds: int
    bindings: int
    seconds: float
    kernel: str = NUMPY


def run_rules(
    rules: Sequence[DeltaRule],
    relations: Mapping[str, ResidentRelation],
    batches: Mapping[str, KeyedRows],
    ops: NumpyForm,
    key_span: int,
    stats: Optional[list[RuleRun]] = None,
    part: tuple[int, int] = (0, 1),
    kernels: Optional[Sequence[RuleKernel]] = None,
) -> tuple[list[np.ndarray], np.ndarray]:
    """⊕ over the rules of every changed relation: (free-variable key codes, values), one row per key.

    Parameters
    ----------
    rules : sequence of DeltaRule
        :func:`plan_rules` of the query.
    relations : mapping name -> ResidentRelation
        The old state (base and overlay), indexed in the rules' views.
    batches : mapping name -> KeyedRows
        The batch of each changed relation, one row per key (signed in a
        ring, improved values in an idempotent semiring).
    ops : NumpyForm
        ⊗ and ⊕ of the semiring in numpy (a ring for negated terms).
    key_span : int
        Codes of output keys lie below this (for grouping).
    stats : list, optional
        Receives a :class:`RuleRun` per rule run.
    part : (int, int)
        ``(k, n)``: seed only the batch rows whose position is ``k`` modulo
        ``n`` (task ``k`` of ``n`` runs its share; the parts' results add up).
    """
    import time

    n_keys = len(rules[0].outputs) if rules else 0

    def runs_of(read: Read) -> list[Trie]:
        relation = relations[read.relation]
        batch = batches.get(read.relation)
        if read.state == OLD or batch is None or not len(batch):
            return relation.runs(read.view)
        return relation.new_runs(read.view, batch)  # the batch merged into the recent level, as committed

    def scalar_of(read: Read) -> tuple[bool, object]:
        """A nullary relation's value in the read's state (a constant factor of every binding)."""
        batch = batches.get(read.relation) if read.state == NEW else None
        present, value = relations[read.relation].lookup((), batch)
        return bool(present[0]), value[0]

    seeded = []
    for k, rule in enumerate(rules):
        batch = batches.get(rule.relation)
        if batch is None or not len(batch):
            continue
        if part[1] > 1:
            batch = batch.take(np.arange(part[0], len(batch), part[1]))
        seeded.append((k, rule, batch, kernels is not None and kernels[k].compiled))
    # The compiled rules first, in one call of the loop (one dispatch a batch); their totals are then
    # added in rule order with the numpy rules', as each rule alone would add them.
    compiled = _run_compiled_rules([(k, rule, batch) for k, rule, batch, c in seeded if c], runs_of, scalar_of, ops)
    if n_keys == 0 and all(c for *_, c in seeded):
        return [], _scalar_total(seeded, compiled, ops, stats)
    total = PartialAggregate(ops, n_keys, max(key_span, 1), bound=1)
    for k, rule, batch, is_compiled in seeded:
        started = time.perf_counter()
        if is_compiled:
            seeds, reached, value, seconds = compiled[k]
            if value is not None:
                total.add([], value)
        else:
            seeds, reached = _run_rule(rule, batch, runs_of, scalar_of, ops, total)
            seconds = time.perf_counter() - started
        if stats is not None:
            stats.append(RuleRun(k, seeds, reached, seconds, COMPILED if is_compiled else NUMPY))
    keys, values = total.drain()
    live = ~ops.is_zero(values)
    if not live.all():
        keys, values = [c[live] for c in keys], values[live]
    return keys, values


def _scalar_total(seeded, compiled: dict, ops: NumpyForm, stats: Optional[list[RuleRun]]) -> np.ndarray:
    """The ⊕ of compiled rules' totals of a query without free variables, as :class:`PartialAggregate`
    adds them (each rule's parts ⊕-reduced, then added in rule order), without building one: one value,
    or none when it is the zero."""
    total = None
    for k, _, _, _ in seeded:
        seeds, reached, value, seconds = compiled[k]
        if value is not None and len(value):
            part = ops.add.reduce(value)
            total = part if total is None else ops.add(total, part)
        if stats is not None:
            stats.append(RuleRun(k, seeds, reached, seconds, COMPILED))
    values = ops.zeros(0) if total is None else np.array([total], dtype=ops.dtype)
    return values[:0] if len(values) and ops.is_zero(values)[0] else values


def _seed(rule: DeltaRule, batch: KeyedRows, ops: NumpyForm) -> tuple[Sequence[np.ndarray], np.ndarray]:
    """The batch's rows through the rule's seed view: (columns, values; ones where the batch has none)."""
    columns, values = batch.project(rule.seed_view)
    n = len(columns[0]) if columns else (len(values) if values is not None else 0)
    values = ops.ones(n) if values is None else np.asarray(values, dtype=ops.dtype)
    if rule.negated:  # Δ(1 − E) = −ΔE
        values = -values
    return columns, values


def _constant_factor(rule: DeltaRule, scalar_of, ops: NumpyForm) -> object:
    """⊗ of the rule's relations without variables (each a constant factor of every binding)."""
    factor = ops.one
    for read in rule.reads:
        if not read.attributes:
            present, value = scalar_of(read)
            if read.negated:
                value = ops.one if not present else ops.zero  # 1 − E for a 0/1 relation
            factor = ops.mul(factor, value)
    return factor


def _run_compiled_rules(seeded, runs_of, scalar_of, ops: NumpyForm) -> dict:
    """The compiled rules of a batch (``(index, rule, batch)``) in one call of the loop
    (:func:`~faq.incremental.rule_kernel.aggregate_rules`): per rule index, (seed rows, bindings, the
    value to add to the total or None, seconds: the call's, shared evenly)."""
    import time

    started = time.perf_counter()
    out, items = {}, []
    for k, rule, batch in seeded:
        columns, values = _seed(rule, batch, ops)
        factor = _constant_factor(rule, scalar_of, ops)
        if len(values) == 0 or (factor is not ops.one and ops.is_zero(np.asarray(factor)[None])[0]):
            out[k] = (len(values), 0, None, 0.0)
        else:
            items.append((k, rule, columns, values, factor))
    results = aggregate_rules([item[1:] for item in items], runs_of, ops) if items else []
    seconds = (time.perf_counter() - started) / max(len(items), 1)
    for (k, _, _, values, _), (value, reached) in zip(items, results):
        if isinstance(value, int):  # an int64 sum past int64: exact partial sums (the aggregate guards them)
            added = np.array(int64_parts(value), dtype=np.int64)
        else:
            added = np.asarray(value, dtype=ops.dtype)[None] if reached else None
        out[k] = (len(values), reached, added, seconds)
    return out


def _run_rule(rule: DeltaRule, batch: KeyedRows, runs_of, scalar_of, ops: NumpyForm,
              total: PartialAggregate) -> tuple[int, int]:
    """Add rule ``rule``'s bindings, seeded by ``batch``, into ``total``: (seed rows, bindings)."""
    columns, values = _seed(rule, batch, ops)
    n = len(values)
    if n == 0:
        return 0, 0
    chunk = Chunk({("a", p): np.asarray(c, dtype=np.int64) for p, c in enumerate(columns)}, n)
    chunk.columns[_SEED_VALUE] = values

    runs = {read.term: runs_of(read) for read in rule.reads if read.attributes}
    width = rule.seed_width
    # The seed binds its variables at once: every relation holding some of them validates
    # them now (its leading attributes), the filters among them too.
    for a, b in rule.distinct:
        if b < width:
            chunk = _distinct_filter(a, b).validate(chunk)
    for read in rule.reads:
        if not read.negated:
            for depth, p in enumerate(read.attributes):
                if p >= width:
                    break
                chunk = RunsExtender(read.term, [r.levels[depth] for r in runs[read.term]], SPAN, p, depth).validate(chunk)
    for read in rule.reads:
        if read.attributes and read.negated and max(read.attributes) < width:
            chunk = _negation_filter(read, runs[read.term], ops).validate(chunk)

    levels: list[list] = []
    for p in range(width, len(rule.order)):
        extenders: list = []
        for read in rule.reads:
            if p not in read.attributes:
                continue
            if read.negated:
                if max(read.attributes) == p:
                    extenders.append(_negation_filter(read, runs[read.term], ops))
            else:
                depth = read.attributes.index(p)
                extenders.append(RunsExtender(read.term, [r.levels[depth] for r in runs[read.term]], SPAN, p, depth))
        extenders.sort(key=lambda e: isinstance(e, FilterExtender))  # relations first: one of them proposes
        extenders += [_distinct_filter(a, b) for a, b in rule.distinct if b == p]
        levels.append(extenders)

    factor = _constant_factor(rule, scalar_of, ops)
    if ops.is_zero(np.asarray(factor)[None])[0]:
        return n, 0
    unit = bool(np.all(factor == ops.one))
    valued = [read for read in rule.reads if not read.negated and read.attributes
              and any(r.values is not None for r in runs[read.term])]
    reached = 0
    for leaf in complete(chunk, 0, levels, ArrayBackend(PIECE_ROWS)):
        value = leaf.get(_SEED_VALUE)
        for read in valued:
            value = ops.mul(value, _gather(runs[read.term], leaf.get(("n", read.term)), leaf.get(("r", read.term)), ops))
        if not unit:
            value = ops.mul(value, factor)
        total.add([leaf.get(("a", p)) for p in rule.outputs], value)
        reached += leaf.rows
    return n, reached


def _gather(runs: Sequence[Trie], nodes: np.ndarray, run_ids: np.ndarray, ops: NumpyForm) -> np.ndarray:
    """Each binding's value of one relation: its run's value at its last-level entry."""
    out = ops.ones(len(nodes))
    for r, trie in enumerate(runs):
        if trie.values is None:
            continue
        mine = np.flatnonzero(run_ids == r)
        out[mine] = trie.values[nodes[mine]]
    return out


def _negation_filter(read: Read, runs: Sequence[Trie], ops: NumpyForm) -> FilterExtender:
    """Keeps bindings where the relation does *not* hold the key (its merged value is the zero)."""

    def keep(chunk: Chunk) -> np.ndarray:
        present, _ = lookup_runs(runs, [chunk.get(("a", p)) for p in read.attributes], ops)
        return ~present

    return FilterExtender(keep, f"no {read.relation}")


def _distinct_filter(a: int, b: int) -> FilterExtender:
    def keep(chunk: Chunk) -> np.ndarray:
        return chunk.get(("a", a)) != chunk.get(("a", b))

    return FilterExtender(keep, "distinct")
