"""The limits past which planning is greedy, and what each step's bag costs: ρ*, AGM bound, cover.

:func:`faq.insideout.planner.plan_query` asks, for every step, for its bag's ρ*,
AGM estimate and fractional edge cover (:func:`bag_facts`), for the relations
its bag meets (:class:`Live`) and for its indicators (:func:`fewer_indicators`).
Each of them grew with the whole query (a scan of every atom or relation per
step, an exact LP over every atom meeting a bag, a semi-join with every atom
sharing a variable): a 1,000-atom chain took 34 s to ``faq explain``.  Here
they look only at what a bag meets, and past documented limits
(:data:`EXACT_COVER_ROWS`, :data:`MAX_STEP_INDICATORS`) they take cheaper
answers that the plan names (``Step.greedy_cover``, ``Plan.limits``); below
the limits they give exactly what they gave before.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from faq.hypergraph import agm_bound, agm_cover, bound_of_log, fractional_edge_cover, greedy_cover, rho_star
from faq.insideout.plans import Indicator, Relation

if TYPE_CHECKING:
    from faq.insideout.plan_context import PlanContext

__all__ = ["EXACT_COVER_ROWS", "MAX_STEP_INDICATORS", "BagFacts", "bag_facts", "fewer_indicators", "Live"]

#: A bag's ρ*, AGM bound and cover are exact LPs up to this many distinct intersections of atoms with
#: the bag (the LP's rows): the exact simplex grows super-linearly (100 rows took 0.1 s, 300 rows 20 s,
#: on random 3-uniform hypergraphs with log-size costs).  Above it they come from a greedy integral
#: cover, upper bounds the plan names (Step.greedy_cover, Plan.limits).
EXACT_COVER_ROWS = 64
#: A step keeps every indicator up to this many; above, repeated ones (one factor, the same columns) are
#: kept once and the rest cut to this many (:func:`fewer_indicators`; Plan.limits says so).
MAX_STEP_INDICATORS = 64


def fewer_indicators(context: "PlanContext", indicators: tuple[Indicator, ...]) -> tuple[Indicator, ...]:
    """A step's indicators, at most :data:`MAX_STEP_INDICATORS` of them.

    Up to the limit they are all kept, as they are.  Above it (a variable shared by thousands of
    atoms makes every step semi-join with all of them: a plan quadratic in the atoms), uses of
    one factor projected onto the same columns and variables are one semi-join, kept once; if
    more remain, the first ones are kept and :attr:`PlanContext.cut_indicators` counts the step.
    Indicators never change the answer (they only keep a bag's intermediate within its AGM
    bound), so either way the answer is the same.
    """
    if len(indicators) <= MAX_STEP_INDICATORS:
        return indicators
    kept: list[Indicator] = []
    seen: set[tuple] = set()
    for i in indicators:
        key = context.index_key(i.relation, i.variables)  # None: a step's output, unlike any other
        if key is not None:
            if (key, i.variables) in seen:
                continue
            seen.add((key, i.variables))
        kept.append(i)
    if len(kept) > MAX_STEP_INDICATORS:
        context.cut_indicators += 1
        kept = kept[:MAX_STEP_INDICATORS]
    return tuple(kept)


class Live:
    """The relations not joined yet, in the order they were made, indexed by variable.

    A step looks only at the relations holding a variable of its bag (a scan of every
    relation per step made planning quadratic in the atoms).
    """

    def __init__(self, relations: Iterable[Relation]) -> None:
        self.by_id: dict[str, Relation] = {}  # insertion order: the order the relations were made
        self._made: dict[str, int] = {}
        self._holding: dict[str, set[str]] = {}
        self._scalars: set[str] = set()  # relations over no variable: absorbed by the next step
        for r in relations:
            self.add(r)

    def add(self, r: Relation) -> None:
        self.by_id[r.id] = r
        self._made[r.id] = len(self._made)
        for v in r.variables:
            self._holding.setdefault(v, set()).add(r.id)
        if not r.variables:
            self._scalars.add(r.id)

    def remove(self, r: Relation) -> None:
        del self.by_id[r.id]
        for v in r.variables:
            self._holding[v].discard(r.id)
        self._scalars.discard(r.id)

    def holding(self, variables: Iterable[str], scalars: bool = False) -> list[Relation]:
        """The relations holding any of ``variables`` (and those over none, if ``scalars``), in order."""
        ids = set(self._scalars) if scalars else set()
        for v in variables:
            ids |= self._holding.get(v, set())
        return [self.by_id[i] for i in sorted(ids, key=self._made.__getitem__)]


def one_per_row(context: "PlanContext", atoms: Sequence[int], bag: frozenset, by_size: bool) -> list[int]:
    """Of ``atoms`` (ascending), the first of each distinct intersection with ``bag`` (with
    ``by_size``, the first of the fewest rows: the cheapest in the AGM LP, whose costs grow with
    the rows): the atoms the exact LP keeps of them (:func:`~faq.hypergraph.cover.solve_cover`)."""
    best: dict[frozenset, int] = {}
    for k in atoms:
        row = context.edges[k] & bag
        if row not in best or (by_size and context.edge_sizes[k] < context.edge_sizes[best[row]]):
            best[row] = k
    return sorted(best.values())


@dataclass(frozen=True)
class BagFacts:
    """A bag's ρ*, AGM estimate and the cover behind it, and why they are greedy ("": exact)."""

    rho_star: Fraction
    estimate: Optional[float]  # None without sizes
    cover: tuple[tuple[str, Fraction], ...]  # (input relation id, weight > 0)
    greedy: str


def bag_facts(context: "PlanContext", bag: set[str]) -> BagFacts:
    """ρ*, the AGM estimate and the cover of ``bag``, from the atoms meeting it.

    The cover behind the estimate is weighted by log sizes when the plan has sizes (so
    ``Π N^x`` at those sizes is the estimate), else it is the ρ*-optimal one.  Up to
    :data:`EXACT_COVER_ROWS` distinct atom intersections with the bag they are the exact
    LPs; above, a greedy integral cover (:func:`~faq.hypergraph.cover.greedy_cover`)
    gives upper bounds, in time linear in the atoms, and ``greedy`` says so.
    """
    key = frozenset(bag)
    if key in context.facts:
        return context.facts[key]
    meeting, edges, sizes = context.local(bag)
    weighed = bool(context.edge_sizes)  # the plan has sizes (an empty bag meets no atom, so test the plan's)
    rows = len({e & key for e in edges})  # the rows of the bag's cover LP
    greedy = ""
    if rows <= EXACT_COVER_ROWS:
        unit = weighted = meeting
        if len(meeting) > EXACT_COVER_ROWS:
            # Many atoms but few distinct rows (a variable held by thousands of atoms): the LPs keep only
            # the first cheapest atom of each row, as they would anyway, without paying for the others.
            unit = one_per_row(context, meeting, key, by_size=False)
            weighted = one_per_row(context, meeting, key, by_size=True) if weighed else unit
        rho = rho_star([context.edges[k] for k in unit], bag)
        if weighed:
            meeting, edges = weighted, [context.edges[k] for k in weighted]
            sizes = [context.edge_sizes[k] for k in weighted]
            estimate, cover = agm_bound(edges, sizes, bag), agm_cover(edges, sizes, bag)
        else:
            meeting, estimate = unit, None
            cover = fractional_edge_cover([context.edges[k] for k in unit], bag)
    else:
        greedy = f"greedy cover: {rows} distinct atom intersections > {EXACT_COVER_ROWS}"
        rho = greedy_cover(edges, bag).value
        cover = greedy_cover(edges, bag, sizes)  # unit costs without sizes: the same cover as rho's
        estimate = bound_of_log(cover.value) if weighed else None
    weights = tuple((context.inputs[k][0].id, w) for k, w in zip(meeting, cover.weights) if w)
    context.facts[key] = BagFacts(rho, estimate, weights, greedy)
    return context.facts[key]
