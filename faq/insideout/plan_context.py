"""The context of one planning call: the query, its inputs and the facts every step looks up.

:func:`faq.insideout.planner.plan_query` makes one :class:`PlanContext` and
hands it to every step it plans; :mod:`faq.insideout.bags` reads a bag's
facts from it (kept by bag in :attr:`PlanContext.facts`).  Kept apart from both so
neither imports the other.

Examples
--------
>>> from faq.insideout.physical import Environment
>>> from faq.insideout.plans import Relation
>>> from faq.language import parse_query
>>> q = parse_query("count() := e(a,b), e(b,c)")
>>> inputs = tuple((Relation(f"R{k}", a.variables), a.factor) for k, a in enumerate(q.atoms))
>>> c = PlanContext(q, "counting", inputs, [frozenset(a.variables) for a in q.atoms], None, {}, "auto", {},
...                 Environment(), True)
>>> c.atoms_with["b"], c.local({"c"})[0]
([0, 1], [1])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from faq.insideout.physical import Environment
from faq.insideout.plans import Relation
from faq.language import FAQ

__all__ = ["PlanContext"]


@dataclass
class PlanContext:
    """What every step of one :func:`plan` call needs to know."""

    query: FAQ
    product: Any  # the query's semiring (name, or the Semiring given)
    inputs: tuple[tuple[Relation, str], ...]
    edges: list[frozenset]
    edge_sizes: Optional[list[int]]
    aggregate: dict[str, str]  # bound variable -> its aggregate's semiring name
    join: str
    types: dict[str, str]
    environment: Environment
    task_aggregation: bool
    held: frozenset = frozenset()
    degrees: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # Exact rows of two input atoms joined on their one shared variable, by atom positions (i < j):
    # the held factors' degree histograms (faq.insideout.held_joins.pair_rows).
    pair_rows: Mapping[tuple[int, int], float] = field(default_factory=dict)
    # Looked up once per step and relation: indexes, so planning stays linear in the atoms.
    atom_of: dict[str, int] = field(init=False)  # input relation id -> its atom's position
    atoms_with: dict[str, list[int]] = field(init=False)  # variable -> positions of the atoms holding it
    facts: dict[frozenset, Any] = field(init=False)  # by bag: a bag recurs (a step, the free bag)
    cut_indicators: int = field(init=False, default=0)  # steps whose indicators were cut (bags.py)
    unestimated: int = field(init=False, default=0)  # generic-join steps too large for a work estimate
    _columns: dict[int, tuple[dict[str, int], tuple[int, ...]]] = field(init=False)  # for index_key

    def __post_init__(self) -> None:
        self.facts = {}
        self._columns = {}
        self.atom_of = {r.id: k for k, (r, _) in enumerate(self.inputs)}
        self.atoms_with = {}
        for k, edge in enumerate(self.edges):
            for v in edge:
                self.atoms_with.setdefault(v, []).append(k)

    def local(self, bag: set[str]) -> tuple[list[int], list[frozenset], Optional[list[int]]]:
        """The atoms meeting ``bag`` (positions, ascending), their edges and sizes.

        A bag's cover LP and AGM bound depend only on these (an edge missing the bag gets
        weight 0, and the LP's rows keep their order), so solving them on these alone gives
        the same answers as on every edge, at a cost that does not grow with the query.
        """
        meeting = sorted({k for v in bag for k in self.atoms_with.get(v, ())})
        sizes = None if self.edge_sizes is None else [self.edge_sizes[k] for k in meeting]
        return meeting, [self.edges[k] for k in meeting], sizes

    def degree_of(self, relation_id: str) -> dict[str, int]:
        """An input relation's largest degree per variable, where its factor's degrees are known."""
        k = self.atom_of.get(relation_id)
        if k is not None and self.inputs[k][1] in self.degrees:
            found: dict[str, int] = {}
            for v, d in zip(self.query.atoms[k].variables, self.degrees[self.inputs[k][1]]):
                found[v] = min(found.get(v, d), d)
            return found
        return {}

    def joined_rows(self, first_id: str, second_id: str) -> Optional[float]:
        """Exact rows of two input relations joined on their one shared variable, where known."""
        i, j = self.atom_of.get(first_id), self.atom_of.get(second_id)
        if i is None or j is None:
            return None
        return self.pair_rows.get((min(i, j), max(i, j)))

    def index_key(self, relation_id: str, attributes: Sequence[str]) -> Optional[tuple]:
        """Equal for uses that read the same data in the same column order (None: unique)."""
        k = self.atom_of.get(relation_id)
        if k is None:
            return None
        if k not in self._columns:  # asked at every step that semi-joins with the atom: made once
            written = self.query.atoms[k].variables
            self._columns[k] = ({v: written.index(v) for v in written},
                                tuple(written.index(v) for v in written))  # repeated variables: a diagonal
        column, pattern = self._columns[k]
        return self.inputs[k][1], pattern, tuple(column[a] for a in attributes)

