"""Run a plan too large for the driver in pieces, each piece in-process, instead of as Spark steps.

The choice (:func:`split_plan`, called by
:func:`~faq.insideout.binding.plan_for` on every plan it makes) applies when
the placement is ``auto``, every factor of the query is held on the driver,
and a step is placed on the executors.  It picks a variable ``v`` of the
bag of the first such step (:func:`_candidates` says in which order), free
or summed by the query's one ⊕ (with mixed aggregates only a free one:
different ⊕s do not commute), with integer keys, and cuts its values into
``k`` ranges of equal weight, a value weighing the rows joined through it
(the product of its degrees in the atoms holding it: for ``b`` of the
4-cycle ``edge(a,b), edge(b,c), ...``, the 2-paths through ``b``).  ``k``
starts at 2 and doubles (to :data:`MAX_PIECES`) until every piece's own
plan -- the query with each atom holding ``v`` restricted to the range,
planned from the restricted rows' statistics in the whole plan's
elimination order -- runs wholly on the driver (the heaviest piece is
planned first, so a ``k`` too small costs one plan).  If none does, the
plan is left as it was.  The value it adds is
:class:`~faq.insideout.pieces_plan.Pieces`; ``explain`` prints it.

The run (:func:`run_pieces`, called by
:func:`~faq.insideout.executor.execute`) restricts each held atom's table to
a piece's range, runs the piece's steps in-process and ⊕-combines the
answers by the free variables (concatenates them when ``v`` is free).

Examples
--------
>>> import numpy as np
>>> cut_points(np.array([1, 2, 3, 4]), np.array([1.0, 1.0, 1.0, 1.0]), 2)
(3,)
>>> cut_points(np.array([1, 2, 3, 4]), np.array([6.0, 1.0, 1.0, 1.0]), 3)   # a heavy value is a piece alone
(2,)
>>> in_range(np.array([1, 5, 9]), (5,), 1).tolist(), in_range(np.array([1, 5, 9]), (5,), 0).tolist()
([False, True, True], [True, False, False])
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import numpy as np

from faq.insideout.held_joins import atom_column, column_histogram
from faq.insideout.in_process import StepEvent, as_table, run_step
from faq.insideout.pieces_plan import Pieces
from faq.joins.table import Table
from faq.joins.row_arithmetic import aggregate_rows, check_sums
from faq.language import Atom
from faq.semirings.numpy_backend import numpy_ops

if TYPE_CHECKING:
    from faq.factor import Factor
    from faq.insideout.plans import Plan, Step
    from faq.language import FAQ
    from faq.semirings import Semiring

__all__ = ["MAX_PIECES", "split_plan", "run_pieces", "cut_points", "in_range"]

#: Most pieces a plan is split into: past it the planning and the per-piece work on the atoms a piece does
#: not restrict (their copies, counting sorts or indexes) would pass what the pieces save.  Measured at
#: R-MAT 17's 4-cycle (31 pieces): planning them ~3 s, a piece 0.7-4 s of which that work is a small part.
MAX_PIECES = 256


def split_plan(plan: "Plan", query: "FAQ", factors: Mapping[str, "Factor"], semiring: "Semiring", environment: Any,
               plan_piece: Callable[["FAQ", Mapping[str, "Factor"]], "Plan"]) -> "Plan":
    """``plan`` run in pieces when it must be (see the module), else ``plan`` itself.

    ``plan_piece`` plans a restricted query from its factors (the caller's
    planner, with splitting off).  A semiring with no numpy form cannot run
    in-process at all, so it is not split.
    """
    if not _splittable(plan, query, factors, environment) or _numpy_form(semiring) is None:
        return plan
    for step, variable, atoms in _candidates(plan, query):
        weights = _weights(query, factors, atoms, variable)
        k = 2
        while weights is not None and k <= MAX_PIECES:
            pieces = _planned(plan, query, factors, variable, atoms, weights, k, plan_piece)
            if pieces is not None:
                return replace(plan, pieces=replace(pieces, reason=_reason(step)))
            k *= 2
    return plan


def _splittable(plan: "Plan", query: "FAQ", factors: Mapping[str, "Factor"], environment: Any) -> bool:
    """Whether splitting may help: auto placement, every factor held, a step on the executors."""
    return (environment is not None and environment.placement == "auto" and not plan.in_tasks
            and plan.pieces is None and any(s.placement == "executors" for s in plan.steps)
            and all(n in factors and factors[n].relation.held for n in query.factor_names))


def _candidates(plan: "Plan", query: "FAQ") -> list[tuple["Step", str, tuple[int, ...]]]:
    """Variables to split on, best first: (the step that chose it, the variable, the atoms (1-based)
    holding it).

    The bags of the steps on the executors in plan order (the first that cannot run in-process
    bounds all that follow); in each, the variables in the most bags of the plan first -- one the
    step keeps splits the steps after it too, where one it sums away leaves each piece a partial
    sum over all the later keys (R-MAT 16's 4-cycle in 8 pieces: 60 s over ``b``, kept by its first
    step, against 155 s over ``a``, summed there) -- then those held by most of the step's input
    atoms (splitting them shrinks its join most).  A summed variable only when every bound variable
    has the query's one ⊕.
    """
    inputs = {rel.id for rel, _ in plan.inputs}
    found: list[tuple["Step", str, tuple[int, ...]]] = []
    for step in (s for s in plan.steps if s.placement == "executors"):
        step_atoms = {int(r.rsplit("#", 1)[1]) for r in step.inputs if r in inputs}
        ranked = []
        for v in step.bag:
            if (v not in query.free and query.aggregates) or any(v == seen for _, seen, _ in found):
                continue
            atoms = tuple(k for k, atom in enumerate(query.atoms, start=1) if v in atom.variables)
            in_step = sum(1 for k in atoms if k in step_atoms)
            if in_step:
                bags = sum(1 for other in plan.steps if v in other.bag)
                ranked.append((-bags, -in_step, -len(atoms), v, atoms))
        found += [(step, v, atoms) for *_, v, atoms in sorted(ranked)]
    return found


def _weights(query: "FAQ", factors: Mapping[str, "Factor"], atoms: Sequence[int], variable: str
             ) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """The values of ``variable`` and their weights: the product of their degrees in ``atoms``
    (None: a key column is not integers)."""
    values: Optional[np.ndarray] = None
    weights: Optional[np.ndarray] = None
    for k in atoms:
        factor = factors[query.atoms[k - 1].factor]
        histogram = column_histogram(factor.relation, atom_column(factor, query.atoms[k - 1], variable))
        if histogram is None:  # not integer keys
            return None
        distinct, counts = histogram
        if values is None:
            values, weights = distinct, counts.astype(np.float64)
            continue
        values, i, j = np.intersect1d(values, distinct, assume_unique=True, return_indices=True)
        weights = weights[i] * counts[j]
    return None if values is None else (values, weights)


def cut_points(values: np.ndarray, weights: np.ndarray, k: int) -> tuple[int, ...]:
    """At most ``k - 1`` ascending cuts of sorted ``values`` into ranges of about equal total ``weights``
    (a value heavier than a share is a range of its own)."""
    total = float(weights.sum())
    if total <= 0 or len(values) < 2:
        return ()
    ends = np.cumsum(weights)
    targets = total * np.arange(1, k) / k
    positions = np.unique(np.searchsorted(ends, targets, side="left") + 1)  # a cut after the value passing it
    positions = positions[(positions > 0) & (positions < len(values))]
    return tuple(int(values[p]) for p in positions)


def in_range(keys: np.ndarray, cuts: Sequence[int], piece: int) -> np.ndarray:
    """Rows of ``keys`` in piece ``piece`` (0-based) of ``cuts`` (:attr:`Pieces.cuts`)."""
    keep = np.ones(len(keys), dtype=bool)
    if piece > 0:
        keep &= keys >= cuts[piece - 1]
    if piece < len(cuts):
        keep &= keys < cuts[piece]
    return keep


def _planned(plan: "Plan", query: "FAQ", factors: Mapping[str, "Factor"], variable: str, atoms: Sequence[int],
             weights: tuple[np.ndarray, np.ndarray], k: int, plan_piece: Callable) -> Optional[Pieces]:
    """The pieces of ``k`` ranges and their plans, or None when a piece's plan leaves the driver
    (the heaviest piece is planned first: if it cannot stay in-process, no more are planned)."""
    values, weight = weights
    cuts = cut_points(values, weight, k)
    if not cuts:
        return None
    piece_of = np.searchsorted(np.asarray(cuts), values, side="right")
    shares = np.bincount(piece_of, weights=weight, minlength=len(cuts) + 1) / max(1.0, float(weight.sum()))
    plans: list[Any] = [None] * len(shares)
    for piece in np.argsort(-shares, kind="stable"):
        piece_query, piece_factors = _restricted(query, factors, atoms, variable, cuts, int(piece))
        planned = plan_piece(piece_query, piece_factors)
        if planned.in_tasks or any(s.placement != "driver" for s in planned.steps):
            return None
        plans[piece] = planned
    return Pieces(variable, cuts, tuple(atoms), tuple(plans), tuple(float(s) for s in shares), "",
                  variable in query.free)


def _restricted(query: "FAQ", factors: Mapping[str, "Factor"], atoms: Sequence[int], variable: str,
                cuts: Sequence[int], piece: int) -> tuple["FAQ", dict[str, "Factor"]]:
    """The query with each atom of ``atoms`` over its factor restricted to the piece's range
    (``factor__column``: one restricted factor per column a range applies to), and the factors."""
    from faq.relation import Relation

    used = dict(factors)
    renamed = list(query.atoms)
    for k in atoms:
        atom = query.atoms[k - 1]
        column = atom_column(factors[atom.factor], atom, variable)
        name = f"{atom.factor}__{column}"
        while name in factors:  # never a name the caller's factors use
            name += "_"
        if name not in used:
            factor = factors[atom.factor]
            arrays = factor.relation.arrays
            keep = in_range(np.asarray(arrays[column]), cuts, piece)
            rows = Relation.from_arrays({c: np.asarray(a)[keep] for c, a in arrays.items()}, factor.relation.types)
            used[name] = replace(factor, relation=rows, name=name)
        renamed[k - 1] = Atom(name, atom.variables)
    return replace(query, atoms=tuple(renamed)), used


def _reason(step: "Step") -> str:
    rows = step.product_rows or 0
    return f"step {step.index} of the unsplit plan: est. {rows:.3g} rows, {step.placement_reason or 'on the executors'}"


def run_pieces(plan: "Plan", frames: Mapping[str, Any], semiring: "Semiring", progress: Any
               ) -> tuple[Table, list[str]]:
    """The answer of a plan in pieces (:attr:`Plan.pieces`), from the atoms' held tables ``frames``
    (``factor#k``, held frames: :func:`~faq.insideout.in_process.held_frame`), and a note per piece."""
    pieces = plan.pieces
    answers: list[Table] = []
    notes: list[str] = []
    for piece, piece_plan in enumerate(pieces.plans):
        description = f"piece {piece + 1} of {len(pieces.plans)}: {pieces.ranges()[piece]}"
        if progress:
            progress(StepEvent("start", piece + 1, len(pieces.plans), description))
        started = time.perf_counter()
        relations: dict[str, Any] = {}
        for k, (relation, _) in enumerate(piece_plan.inputs, start=1):
            table = as_table(frames[plan.inputs[k - 1][0].id], semiring)
            if k in pieces.atoms:
                keep = in_range(np.asarray(table.keys[pieces.variable]), pieces.cuts, piece)
                table = Table(table.variables, {v: np.asarray(c)[keep] for v, c in table.keys.items()},
                              None if table.values is None else table.values[keep])
            relations[relation.id] = table
        for step in piece_plan.steps:
            held, _ = run_step(step, len(piece_plan.steps), relations, semiring, piece_plan.environment, None)
            relations[step.output.id] = held
            for r in step.inputs:
                relations.pop(r)
        answer = relations[piece_plan.result.id]
        answers.append(as_table(answer, semiring))
        notes.append(description)
        if progress:
            progress(StepEvent("done", piece + 1, len(pieces.plans), description, answers[-1].rows,
                               time.perf_counter() - started))
    return _combined(answers, plan, semiring), notes


def _numpy_form(semiring: "Semiring") -> Any:
    """The numpy ⊗/⊕ the pieces' in-process steps and their ⊕-combination use (None: none)."""
    return numpy_ops(semiring, arrays=True) if getattr(semiring, "structured", False) else numpy_ops(semiring)


def _combined(answers: Sequence[Table], plan: "Plan", semiring: "Semiring") -> Table:
    """The pieces' answers as one: concatenated, then ⊕-combined per key unless the split variable is free."""
    variables = tuple(plan.free)
    keys = {v: np.concatenate([np.asarray(a.keys[v]) for a in answers]) for v in variables}
    values = np.concatenate([np.asarray(a.values) for a in answers])
    if plan.pieces.free:
        return Table(variables, keys, values)
    ops = _numpy_form(semiring)
    merged_keys, merged = aggregate_rows([keys[v] for v in variables], values, ops)
    if ops.integral and ops.add is np.add:  # int64 sums across pieces may wrap, as a step's may
        check_sums(Table(variables, keys, values), variables, merged, semiring)
    nonzero = ~ops.is_zero(merged)
    return Table(variables, {v: k[nonzero] for v, k in zip(variables, merged_keys)}, merged[nonzero])
