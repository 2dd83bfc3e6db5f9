"""InsideOut planning: :func:`plan` makes the value saying how a query will be answered.

:func:`plan` sees only the query's hypergraph and, optionally, factor sizes
(as opt_einsum's path optimisers see only index sets and dimensions); it never
touches Spark.  The executor (:mod:`faq.insideout.executor`) only runs plans.
The values it makes (:class:`Plan`, :class:`Step`, :class:`Relation`,
:class:`Indicator`: printing and ``to_dict`` / ``from_dict``) live in
:mod:`faq.insideout.plans` and are importable from here too.

For each bound variable ``v`` in elimination order, a :class:`Step` joins the
relations that mention ``v`` (∂(v); their variables form the bag U), plus any
other relation whose variables lie inside U (it does not depend on ``v``, so
by distributivity it may be multiplied in here instead of later), semi-joins
with the projections onto U of the other relations touching U (*indicator
projections*: they never change the answer, 0 annihilates, but cap the
intermediate at the AGM bound), and ⊕-aggregates ``v`` away.  A final step
multiplies what is left on the free variables.

Printed, each bag also shows its AGM bound as a formula in the factor sizes,
``Π N_f^x`` over a fractional edge cover ``x`` (``N_edge^(3/2)`` for a triangle):
the cover that gives the estimate for the plan's sizes, or a ρ*-optimal one
without sizes.  The last line is InsideOut's runtime ``Õ(N^faqw + |output|)``,
``N`` the rows of the largest factor.  :meth:`Plan.agm_expression` and
:meth:`Plan.runtime_expression` give them as sympy expressions
(:mod:`faq.hypergraph.symbolic`; sympy is imported only then).

Examples
--------
>>> from faq.language import parse_query
>>> from faq.insideout.planner import plan_query
>>> p = plan_query(parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)"), semiring="real",
...          sizes={"A": 100, "B": 100, "D": 100}, method="exact")
>>> p.order, str(p.faqw)
(('j', 'k'), '2')
>>> print(p)  # doctest: +NORMALIZE_WHITESPACE
plan for C(i, l) := A(i, j), B(j, k), D(k, l)
  semiring real; order j, k (exact); faqw 2; AGM bound of the full join 1e+04
  step 1: eliminate j with ⊕ of real; bag {i, j, k}, ρ* 2, est. ≤ 1e+04 rows
          join A#1(i, j) ⋈ B#2(j, k) [binary: acyclic bag]; indicators π{k} D#3 -> t1(i, k)
          AGM bound N_A*N_B; fractional edge cover A#1 1, B#2 1
  step 2: eliminate k with ⊕ of real; bag {i, k, l}, ρ* 2, est. ≤ 1e+04 rows
          join D#3(k, l) ⋈ t1(i, k) [binary: acyclic bag] -> t2(i, l)
          AGM bound N_A*N_D; fractional edge cover A#1 1, D#3 1
  free bag {i, l}: ρ* 2
          AGM bound N_A*N_D; fractional edge cover A#1 1, D#3 1
  runtime Õ(N^2 + |output|), N = rows of the largest factor (100)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Union

from faq.errors import PlanError
from faq.hypergraph import choose_order_noted
from faq.hypergraph.acyclic import attribute_order, is_acyclic
from faq.hypergraph.statistics import RelationProfile, RelationStatistics, WorkEstimate, estimate_generic_join_work
from faq.insideout.bags import EXACT_COVER_ROWS, MAX_STEP_INDICATORS, Live, bag_facts, fewer_indicators
from faq.insideout.fused_cycle import dense_cycle
from faq.insideout.plan_context import PlanContext
from faq.insideout.physical import (
    BYTES_PER_INDEX_ROW,
    JOIN_METHODS,
    Environment,
    Strategy,
    choose_strategy,
    integral_bag,
    shared_indexes,
    shuffle_batches,
)
from faq.insideout.placement import place_steps, structured_carrier
# The plan values live in faq.insideout.plans; they are named here too (the planner's own imports
# and every `from faq.insideout.planner import Plan` keep working).
from faq.insideout.plans import PLAN_FORMAT, PLAN_VERSION, Indicator, Plan, Relation, Step
from faq.joins.task_aggregation import task_aggregation
from faq.language import FAQ

if TYPE_CHECKING:
    from faq.semirings import Semiring

__all__ = ["plan_query", "Plan", "Step", "Relation", "Indicator", "PLAN_FORMAT", "PLAN_VERSION", "CYCLIC_BAG_METHOD",
           "FORCED_SPARK_JOINS", "EXACT_COVER_ROWS", "MAX_STEP_INDICATORS", "WORK_ESTIMATE_LEVELS"]

#: A generic join's work is estimated (an AGM LP per attribute) for bags of at most this many variables
#: (and EXACT_COVER_ROWS relations and indicators); Plan.limits counts the steps past them.
WORK_ESTIMATE_LEVELS = 32
# What "auto" picks for a cyclic bag; binary joins are optimal on acyclic ones.
CYCLIC_BAG_METHOD = "generic"
# Join methods that name one of Spark's strategies: a step forced to one runs on the executors.
FORCED_SPARK_JOINS = ("generic_broadcast", "generic_partitioned", "generic_shuffle")


def plan_query(
    query: FAQ,
    semiring: Union[str, "Semiring", None] = None,
    sizes: Optional[Mapping[str, int]] = None,
    method: str = "auto",
    order: Optional[Sequence[str]] = None,
    join: str = "auto",
    statistics: Optional[Mapping[str, RelationStatistics]] = None,
    variable_types: Optional[Mapping[str, str]] = None,
    environment: Optional[Environment] = None,
    task_aggregation: bool = True,
    held: Sequence[str] = (),
    degrees: Optional[Mapping[str, Sequence[int]]] = None,
    pair_rows: Optional[Mapping[tuple[int, int], float]] = None,
) -> Plan:
    """Plan ``query`` with InsideOut: the elimination order and every physical choice.

    Parameters
    ----------
    query : FAQ
    semiring : str or Semiring, optional
        The query's semiring (default: ``query.semiring``).
    sizes : mapping factor name -> rows, optional
        Statistics; they weight the order search, give AGM estimates and
        size the generic join's indexes.
    method : {"auto", "exact", "min_fill", "min_degree"}
        How to choose the elimination order (see :func:`faq.hypergraph.choose_order`).
    order : sequence of str, optional
        Use this elimination order instead of searching (checked).
    join : str
        Bag-join method for every step (a name of
        :data:`~faq.insideout.physical.JOIN_METHODS`), or ``"auto"``: binary
        joins for α-acyclic bags, :data:`CYCLIC_BAG_METHOD` for cyclic ones.
    statistics : mapping factor name -> RelationStatistics, optional
        Rows and per-column distinct counts and largest degrees (plain
        numbers, gathered by the caller); they give ``sizes`` when those are
        not given, and the generic join's estimated work per bag
        (:func:`faq.hypergraph.statistics.estimate_generic_join_work`).
    variable_types : mapping variable -> Spark SQL type name, optional
        Key types (the broadcast index needs integers); unknown types are
        taken to be integers.
    environment : Environment, optional
        Where the plan will run (Spark Connect or classic, parallelism,
        index limits); default :class:`~faq.insideout.physical.Environment()`.
    task_aggregation : bool
        Let broadcast joins ⊕-aggregate inside their tasks where they can
        (False lists every binding; to compare both paths).
    held : sequence of str
        Factors whose rows the driver holds (a step over them may run
        in-process without fetching them).
    degrees : mapping factor name -> sequence of int, optional
        Per factor, the most rows sharing one value of each key column
        (factor column order): they bound the rows of a join's product
        (:attr:`Step.product_rows`), which decides where a step runs.
    pair_rows : mapping (atom position, atom position) -> rows, optional
        Exact rows of two atoms joined on their one shared variable
        (:func:`faq.insideout.held_joins.pair_rows`, for held factors): a
        step whose first join is such a pair bounds its product by them.

    Returns
    -------
    Plan
    """
    if join != "auto" and join not in JOIN_METHODS:
        raise PlanError(reason=f"unknown join method {join!r}; known: auto, {', '.join(JOIN_METHODS)}")
    semiring_name = getattr(semiring, "name", semiring) or query.semiring
    if semiring_name is None:
        raise PlanError(reason="the query has no semiring; pass semiring=")
    statistics = dict(statistics or {})
    sizes = dict(sizes or {name: st.rows for name, st in statistics.items()})
    inputs = tuple(
        (Relation(f"{atom.factor}#{i}", tuple(dict.fromkeys(atom.variables))), atom.factor)
        for i, atom in enumerate(query.atoms, start=1)
    )
    edges = [frozenset(r.variables) for r, _ in inputs]
    edge_sizes = [max(1, int(sizes.get(f, 1000))) for _, f in inputs] if sizes else None
    blocks = query.blocks(semiring_name)
    block_vars = [list(vs) for _, vs in blocks]
    fallback = ""  # why the order is greedier than asked, for the plan to say
    if order is None:
        chosen, fallback = choose_order_noted(edges, list(query.bound), block_vars, edge_sizes, method)
        method_used = method
    else:
        chosen = list(order)
        _check_order(chosen, block_vars, query)
        method_used = "given"
    context = PlanContext(
        query=query,
        product=semiring if semiring is not None and not isinstance(semiring, str) else semiring_name,
        inputs=inputs,
        edges=edges,
        edge_sizes=edge_sizes,
        aggregate={v: s for s, vs in blocks for v in vs},
        join=join,
        types=dict(variable_types or {}),
        environment=environment or Environment(),
        task_aggregation=task_aggregation,
        held=frozenset(held),
        degrees={f: tuple(d) for f, d in (degrees or {}).items()},
        pair_rows=dict(pair_rows or {}),
    )
    steps = _planned_steps(context, chosen, sizes, statistics)
    free = bag_facts(context, set(query.free))
    full = bag_facts(context, set(query.variables)) if edge_sizes and query.variables else None
    return Plan(
        query=str(query),
        semiring=semiring_name,
        free=tuple(query.free),
        inputs=inputs,
        atom_columns=tuple(a.variables for a in query.atoms),
        order=tuple(chosen),
        steps=tuple(steps),
        faqw=max([s.rho_star for s in steps] + [free.rho_star]),
        free_rho_star=free.rho_star,
        agm_bound=full.estimate if full else None,
        method=method_used,
        sizes=sizes,
        statistics=statistics,
        variable_types=dict(context.types),
        environment=context.environment,
        task_aggregation=task_aggregation,
        free_cover=free.cover,
        held=tuple(sorted(context.held)),
        degrees=dict(context.degrees),
        limits=tuple(note for note in (
            fallback,
            f"steps {', '.join(str(s.index) for s in steps if s.greedy_cover)}: ρ* and AGM bounds of a greedy "
            "cover (upper bounds)" if any(s.greedy_cover for s in steps) else "",
            f"free bag: {free.greedy}" if free.greedy else "",
            f"indicators cut to the first {MAX_STEP_INDICATORS} in {context.cut_indicators} step(s) (the answer is "
            "the same; an intermediate may exceed its estimate)" if context.cut_indicators else "",
            f"no generic-join work estimate in {context.unestimated} step(s) joining more than {EXACT_COVER_ROWS} "
            f"relations and indicators or over more than {WORK_ESTIMATE_LEVELS} variables" if context.unestimated
            else "",
            f"AGM bound of the full join: {full.greedy} (an upper bound)" if full and full.greedy else "",
        ) if note),
    )


def _planned_steps(context: PlanContext, order: Sequence[str], sizes: Mapping[str, int],
                   statistics: Mapping[str, RelationStatistics]) -> list[Step]:
    """The plan's steps: one fused step for a 4-cycle summed whole on the driver
    (:func:`~faq.insideout.fused_cycle.dense_cycle`),
    else one step per eliminated variable."""
    cycle = dense_cycle(context)
    steps = _placed_steps(context, order, sizes, statistics, whole=bool(cycle))
    if cycle and steps[0].placement == "driver":  # one step on the driver: the 4-cycle's rows, fused
        return [replace(steps[0], strategy=replace(
            steps[0].strategy, dense_rows=True, numpy_kernel=False, sparse_kernel=False,
            aggregation=f"⊕ of {steps[0].aggregate} inside the join onto (); {cycle}"))]
    if cycle:  # the one bag does not fit the driver: the steps of the elimination order
        return _placed_steps(context, order, sizes, statistics, whole=False)
    return steps


def _placed_steps(context: PlanContext, order: Sequence[str], sizes: Mapping[str, int],
                  statistics: Mapping[str, RelationStatistics], whole: bool) -> list[Step]:
    """The plan's steps, physical and placed (``whole``: every variable eliminated in one step)."""
    logical, relations, est_size, bounds = _steps(context, order, sizes, statistics, whole)
    physical_steps = [_physical(context, s, relations, est_size) for s in _fold_aggregations(logical)]
    return place_steps(physical_steps, bounds, held={r.id for r, f in context.inputs if f in context.held},
                       variables={r.id: r.variables for r, _ in context.inputs}, product=context.product,
                       forced_spark=context.join if context.join in (*FORCED_SPARK_JOINS, "binary") else "",
                       types=context.types, environment=context.environment)


def _steps(
    context: PlanContext, order: Sequence[str], sizes: Mapping[str, int], statistics: Mapping[str, RelationStatistics],
    whole: bool = False,
) -> tuple[list[Step], dict[str, Relation], dict[str, float], dict[str, float]]:
    """One step per eliminated variable, then the product on the free variables if one is needed
    (``whole``: one step eliminating every variable of ``order``).

    The steps are logical (join method and attribute order; no strategy yet,
    :func:`_physical` chooses it once folding has fixed what each step
    keeps); returned with every relation by id, its estimated rows and a bound on its rows
    (the estimate tightened by degrees, :func:`_product_bound`).
    """
    query, inputs = context.query, context.inputs
    position = {v: i for i, v in enumerate(query.variables)}
    current = Live(r for r, _ in inputs)
    relations = dict(current.by_id)
    est_size: dict[str, float] = {r.id: float(sizes.get(f, 0)) or float("inf") for r, f in inputs}
    bounds = dict(est_size)  # rows bounds: est_size, tightened by degrees (_product_bound)
    profiles: dict[str, RelationProfile] = {}
    if sizes:
        for (r, f), atom in zip(inputs, query.atoms):
            known = statistics.get(f) or (RelationStatistics(int(sizes[f])) if f in sizes else None)
            profiles[r.id] = RelationProfile.of(r.id, atom.variables, known)
    steps: list[Step] = []
    for k, group in enumerate([tuple(order)] if whole else [(v,) for v in order], start=1):
        v = group[0]
        touching = current.holding(set(group))
        bag = set().union(*(r.variables for r in touching)) if touching else set(group)
        near = current.holding(bag, scalars=True)  # the only relations that can be absorbed or indicators
        absorbed = [r for r in near if not set(group) & set(r.variables) and set(r.variables) <= bag]
        joined = {r.id for r in touching} | {r.id for r in absorbed}
        indicators = fewer_indicators(context, tuple(
            Indicator(r.id, tuple(sorted(set(r.variables) & bag, key=position.get)))
            for r in near
            if r.id not in joined and set(r.variables) & bag
        ))
        participants = _join_order(touching + absorbed, est_size)
        bag_t = tuple(sorted(bag, key=position.get))
        out = Relation(f"t{k}", tuple(x for x in bag_t if x not in group))
        estimate = bag_facts(context, bag).estimate
        bound = _product_bound(context, participants, estimate, bounds)
        steps.append(
            replace(_step(context, k, group, context.aggregate[v], bag_t, participants, indicators, out, estimate,
                          est_size, profiles), product_rows=bound)
        )
        for r in participants:
            current.remove(r)
        current.add(out)
        relations[out.id] = out
        # The output's values of each variable lie in every relation holding it (joined or a semi-join):
        # its rows are at most the product of those smallest domains, often far below the bag's AGM bound
        # (a 2-path summed onto its ends on a graph with few sources and sinks).
        domains = _domains(profiles, [r.id for r in participants] + [i.relation for i in indicators], out.variables)
        within = math.prod(domains.values()) if len(domains) == len(out.variables) else math.inf
        # ... and at most the product's rows, which ⊕ only merges.
        est_size[out.id] = min(estimate if estimate is not None else math.inf, within,
                               bound if bound is not None else math.inf)
        bounds[out.id] = 1.0 if not out.variables else min(bound if bound is not None else math.inf, within)
        if profiles:
            profiles[out.id] = RelationProfile(out.id, out.variables, est_size[out.id], domains)

    free_set = set(query.free)
    remaining = list(current.by_id.values())
    if len(remaining) > 1 or set(remaining[0].variables) != free_set or not steps:
        k = len(steps) + 1
        estimate = bag_facts(context, free_set).estimate if free_set else None
        participants = _join_order(remaining, est_size)
        bound = _product_bound(context, participants, estimate, bounds)
        steps.append(
            replace(_step(context, k, (), None, tuple(query.free), participants, (),
                          Relation(f"t{k}", tuple(query.free)), estimate, est_size, profiles), product_rows=bound)
        )
    return steps, relations, est_size, bounds


def _step(
    context: PlanContext,
    index: int,
    eliminated: tuple[str, ...],
    aggregate: Optional[str],
    bag: tuple[str, ...],
    participants: Sequence[Relation],
    indicators: tuple[Indicator, ...],
    out: Relation,
    estimate: Optional[float],
    est_size: Mapping[str, float],
    profiles: Mapping[str, RelationProfile],
) -> Step:
    """A step with its logical join method and attribute order (its strategy: :func:`_physical`)."""
    method, reason, attributes = _choose_join(context.join, participants, indicators, est_size,
                                              structured_carrier(context.product))
    work = None
    if len(participants) + len(indicators) <= EXACT_COVER_ROWS and len(attributes) <= WORK_ESTIMATE_LEVELS:
        work = _work(participants, indicators, attributes, profiles)
    elif attributes and profiles:  # each level solves an AGM LP over all of them: past the exact LPs' limits
        context.unestimated += 1
    facts = bag_facts(context, set(bag))
    return Step(
        index, eliminated, aggregate, bag, tuple(r.id for r in participants), indicators, out,
        facts.rho_star, estimate, method, reason, attributes,
        work, Strategy("binary", ""), facts.cover, greedy_cover=facts.greedy,
    )


def _strategy(
    context: PlanContext,
    method: str,
    participants: Sequence[Relation],
    indicators: Sequence[Indicator],
    attributes: Sequence[str],
    est_size: Mapping[str, float],
    largest: Optional[float] = None,
    bytes_per_row: float = BYTES_PER_INDEX_ROW,
) -> Strategy:
    """The physical strategy of a step: binary, or the generic join broadcast, partitioned or shuffled
    (in batches sized from ``largest``, the estimated rows of its largest table); an index is
    ``bytes_per_row`` a row in the kernel its tasks run."""
    if method == "binary":
        return Strategy("binary", "")
    position = {a: i for i, a in enumerate(attributes)}
    uses = [(r.id, r.variables) for r in participants] + [(i.relation, i.variables) for i in indicators]
    keys = [
        context.index_key(rid, sorted(vs, key=position.__getitem__)) if n < len(participants) else None
        for n, (rid, vs) in enumerate(uses)
    ]
    shared = shared_indexes(keys)
    # Rows of the index: one per group (an indicator is a projection: at most its relation's rows).
    rows = [est_size.get(uses[g[0]][0], math.inf) for g in shared if uses[g[0]][1]]
    index_rows = None if any(math.isinf(r) for r in rows) else float(sum(rows))
    variables = list(dict.fromkeys(v for _, vs in uses for v in vs))
    # Each use with its rows, for a partitioned join's grid (each use is hashed apart: no sharing).
    per_use = [(vs, est_size.get(rid, math.inf)) for rid, vs in uses]
    chosen = choose_strategy(method, index_rows, integral_bag(variables, context.types), context.environment,
                             uses=per_use, bytes_per_row=bytes_per_row)
    if chosen.name == "shuffle":
        sized = shuffle_batches(largest, context.environment)
        chosen = replace(chosen, batches=sized.batches, task_rows=sized.task_rows, task_bytes=sized.task_bytes)
    return replace(chosen, shared=shared)


def _physical(context: PlanContext, step: Step, relations: Mapping[str, Relation], est_size: Mapping[str, float]) -> Step:
    """The step with its strategy and what its tasks do, chosen once folding has fixed its output.

    The kernel comes first: whether the tasks ⊕-aggregate, and whether the
    compiled loop runs them, sets the index's bytes per row, which decides
    broadcast against partitioned and sizes a grid.  A relation with
    repeated rows runs compiled too: the kernel's build ⊕-combines them
    (:func:`faq.joins.csr.combine_repeated_rows`).
    """
    if step.join_method == "binary":
        return step
    kernel = task_aggregation(context.product, step.aggregate, step.output.variables, step.bag,
                              context.task_aggregation)
    # The shuffle strategy's largest table: the most proposals of any attribute, else the bag's size.
    work = step.work
    largest = max(level.work for level in work.levels) if work and work.levels else step.estimated_rows
    strategy = _strategy(context, step.join_method, [relations[r] for r in step.inputs], step.indicators,
                         step.attribute_order, est_size, largest, kernel.bytes_per_row)
    if step.aggregate is None:
        return replace(step, strategy=strategy)
    if strategy.name == "shuffle" and strategy.batches > 1:  # each batch is ⊕-aggregated as it is materialised
        note = f"⊕ of {step.aggregate} per batch onto ({', '.join(step.output.variables)})"
        strategy = replace(strategy, aggregate_in_tasks=True, aggregation=note)
    elif strategy.name == "shuffle":
        strategy = replace(strategy, aggregation="every binding listed: the shuffle strategy does not aggregate")
    else:
        strategy = replace(strategy, aggregate_in_tasks=kernel.in_tasks, aggregation=kernel.note)
    return replace(step, strategy=strategy)


def _work(
    participants: Sequence[Relation],
    indicators: Sequence[Indicator],
    attributes: Sequence[str],
    profiles: Mapping[str, RelationProfile],
) -> Optional[WorkEstimate]:
    """The generic join's estimated work for a step (None: binary join, or no statistics).

    A level whose relations' sizes are unknown estimates ``inf / inf``: its
    NaNs are kept as ``inf`` (unknown, unbounded), so the plan equals itself
    read back from JSON (NaN equals nothing) and orders as unknown sizes do.
    """
    if not attributes or not profiles:
        return None
    bag = [profiles[r.id] for r in participants]
    bag += [profiles[i.relation].projection(i.variables) for i in indicators]
    work = estimate_generic_join_work(bag, attributes)
    if not any(math.isnan(x) for lv in work.levels for x in (lv.prefixes, lv.work, lv.bound, lv.agm)):
        return work
    unknown = [replace(lv, **{k: math.inf for k in ("prefixes", "work", "bound", "agm") if math.isnan(getattr(lv, k))})
               for lv in work.levels]
    return replace(work, levels=tuple(unknown))


def _choose_join(
    join: str,
    participants: Sequence[Relation],
    indicators: Sequence[Indicator],
    est_size: Mapping[str, float],
    structured: str = "",
) -> tuple[str, str, tuple[str, ...]]:
    """The bag-join method of a step, why, and the attribute order it needs.

    ``structured`` names the carrier of a ring whose values are arrays: the
    generic join's kernels hold one number per binding, so such a ring's
    bags are joined by binary joins (cyclic ones too: exact, though not
    worst-case optimal).
    """
    edges = [r.variables for r in participants] + [i.variables for i in indicators]
    acyclic = is_acyclic(edges)
    shape = "acyclic bag" if acyclic else "cyclic bag"
    if structured:
        return "binary", f"{shape}; values are {structured} arrays (the generic join holds one number a row)", ()
    if join == "auto":
        method = "binary" if acyclic else CYCLIC_BAG_METHOD
        reason = shape
    else:
        method, reason = join, f"{shape}, method forced"
    if method == "binary":
        return method, reason, ()
    sizes = [int(min(est_size.get(r.id, 1e18), 1e18)) for r in participants] + [0] * len(indicators)
    return method, reason, tuple(attribute_order(edges, sizes))


def _domains(profiles: Mapping[str, RelationProfile], sources: Sequence[str], variables: Sequence[str]) -> dict[str, float]:
    """Each variable's smallest number of distinct values among the ``sources``' profiles that know it.

    A relation made by joining the sources (and semi-joining with them) holds only values every
    one of them holds, so these are its distinct counts; a variable none of them knows is left out.

    >>> from faq.hypergraph.statistics import RelationProfile
    >>> p = {"R": RelationProfile("R", ("a", "b"), 10, {"a": 4, "b": 9}), "S": RelationProfile("S", ("b",), 3, {"b": 3})}
    >>> _domains(p, ["R", "S"], ("a", "b", "c"))
    {'a': 4, 'b': 3}
    """
    found: dict[str, float] = {}
    for name in sources:
        profile = profiles.get(name)
        for v, d in (profile.distinct.items() if profile is not None else ()):
            if v in variables:
                found[v] = min(found.get(v, d), d)
    return {v: found[v] for v in variables if v in found}


def _product_bound(
    context: PlanContext, participants: Sequence[Relation], estimate: Optional[float], bounds: Mapping[str, float]
) -> Optional[float]:
    """A bound on the rows of the participants' product: the AGM ``estimate``, and the rows of the
    joins in their order, each at most the rows before times the largest degree of the joined
    relation on a shared variable (its factor's degrees) or its rows; None without sizes.

    The largest bound along the way is returned (merges hold every
    intermediate), capped by ``estimate``.  A product of relations over no
    variable (scalars) has at most one row.
    """
    if not participants:
        return estimate
    if not any(r.variables for r in participants):
        return 1.0
    rows = [bounds.get(r.id, math.inf) for r in participants]
    if any(math.isinf(r) for r in rows):
        return estimate
    # Rows so far, and the most of them sharing one value of each variable (inf: unknown):
    # joining r on a shared variable v matches a row with at most deg_r(v) rows of r, and a row
    # of r with at most deg_so_far(v) rows so far.
    running = peak = rows[0]
    degree: dict[str, float] = {v: context.degree_of(participants[0].id).get(v, math.inf)
                                for v in participants[0].variables}
    exact = context.joined_rows(participants[0].id, participants[1].id) if len(participants) > 1 else None
    for r, n in zip(participants[1:], rows[1:]):
        theirs = {v: context.degree_of(r.id).get(v, math.inf) for v in r.variables}
        shared = [v for v in r.variables if v in degree]
        if shared:
            fan_out = min(min(theirs[v] for v in shared), n)  # rows of r per row so far
            fan_in = min(min(degree[v] for v in shared), running)  # rows so far per row of r
        else:
            fan_out, fan_in = n, running
        running = min(running * fan_out, n * fan_in)
        if exact is not None:  # the first join's rows, counted (held_joins): the later ones bounded from them
            running, exact = min(running, exact), None
        degree = {v: d * fan_out for v, d in degree.items()}
        for v, d in theirs.items():
            degree[v] = min(degree.get(v, math.inf), d * fan_in)
        peak = max(peak, running)
    return peak if estimate is None else min(peak, max(estimate, max(rows)))


def _fold_aggregations(steps: list[Step]) -> list[Step]:
    """Merge a step into the one before when it only ⊕-aggregates that step's output.

    Eliminating b then c from t(b, c) with the same ⊕ is one group-by on ()
    instead of two; folding saves a shuffle and a materialisation per step.
    """
    folded: list[Step] = []
    for step in steps:
        prev = folded[-1] if folded else None
        if (
            prev is not None
            and step.eliminated
            and step.inputs == (prev.output.id,)
            and not step.indicators
            and step.aggregate == prev.aggregate
        ):
            folded[-1] = replace(
                prev,
                eliminated=prev.eliminated + step.eliminated,
                output=step.output,
                rho_star=max(prev.rho_star, step.rho_star),
            )
        else:
            folded.append(replace(step, index=len(folded) + 1))
    return folded


def _join_order(relations: list[Relation], est_size: Mapping[str, float]) -> list[Relation]:
    """Greedy binary join order: start small, then always join a connected relation.

    Among relations sharing variables with what is joined so far, take the one
    sharing most, then the smallest; cross products only when nothing connects.
    """
    if not relations:
        return []
    pending = sorted(relations, key=lambda r: (est_size.get(r.id, float("inf")), r.id))
    ordered = [pending.pop(0)]
    seen = set(ordered[0].variables)
    while pending:
        best = max(
            pending,
            key=lambda r: (len(seen & set(r.variables)), -est_size.get(r.id, float("inf"))),
        )
        pending.remove(best)
        ordered.append(best)
        seen |= set(best.variables)
    return ordered


def _check_order(order: Sequence[str], blocks: Sequence[Sequence[str]], query: FAQ) -> None:
    bound = set(query.bound)
    if sorted(order) != sorted(bound):
        raise PlanError(reason=f"order {list(order)} must list each bound variable once: {sorted(bound)}")
    position = {v: i for i, v in enumerate(order)}
    for earlier, later in zip(blocks, blocks[1:]):
        if earlier and later and max(position[v] for v in earlier) > min(position[v] for v in later):
            raise PlanError(
                reason=f"order {list(order)} mixes aggregates: {list(earlier)} must all be eliminated "
                f"before {list(later)}"
            )
