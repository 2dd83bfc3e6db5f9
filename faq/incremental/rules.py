"""Exactly-once delta rules, planned as values: ΔQ = Σ_i Q(R_1′ … R_{i−1}′, ΔR_i, R_{i+1} … R_n).

Number the terms of a query 1..n (a relation used three times, as ``edge``
in a triangle, is three terms).  When several change at once, the change of
the answer is a sum of one *rule* per changed term: term ``i`` takes its
batch, the terms before it their **new** state and the terms after it their
**old** state.  Expanding ``Π_j (R_j ⊕ ΔR_j)`` by distributivity and grouping
the terms by the last one that takes its batch gives exactly these rules,
each term of the expansion once, so updates of one batch that together form
a new triangle produce it once, not three times.  The identity holds per
binding, in any semiring: in a ring ``R′ = R + ΔR`` and the sum is the signed
change; in an idempotent semiring (min, max, ∨) ``R′ = R ⊕ ΔR`` for improving
updates and the new answer is ``old ⊕ ΔQ``.  A negated term (a motif's
missing edge) is the factor ``1 − E``, whose batch is ``−ΔE``.

A query here is a :class:`DeltaQuery`: terms (a relation read with some
variables, maybe negated), free variables, and pairs of variables that must
differ.  :func:`plan_rules` fixes, once and without data, per term: the
attribute order of its rule (the seed's variables first, then each next
variable sharing the most terms with those bound) and, for every other term,
the :class:`~faq.incremental.index.View` (column order) its index must have
and the state it reads.  :func:`plan_maintenance` adds where the indexes live
and how big they are: the :class:`MaintenancePlan` that ``explain`` prints.
The rules run in :mod:`faq.incremental.engine`.

Examples
--------
>>> from faq.incremental.rules import DeltaQuery, Term, plan_rules
>>> q = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("b", "c")), Term("edge", ("a", "c"))), (),
...                columns={"edge": ("src", "dst")})
>>> for rule in plan_rules(q):
...     print(rule.describe(q))
Δedge(a, b); order a, b, c; edge(b, c) old by (src, dst); edge(a, c) old by (src, dst)
Δedge(b, c); order b, c, a; edge(a, b) new by (dst, src); edge(a, c) old by (dst, src)
Δedge(a, c); order a, c, b; edge(a, b) new by (src, dst); edge(b, c) new by (dst, src)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Sequence

from faq.incremental.index import View
from faq.hypergraph.shares import format_bytes

OLD, NEW = "old", "new"


@dataclass(frozen=True)
class Term:
    """A relation read with ``variables`` (repeats allowed: the diagonal); ``negated``: ``1 − relation``."""

    relation: str
    variables: tuple[str, ...]
    negated: bool = False

    def describe(self) -> str:
        return f"{'!' if self.negated else ''}{self.relation}({', '.join(self.variables)})"


@dataclass(frozen=True)
class DeltaQuery:
    """Terms, free variables and pairs of variables that must differ.

    ``columns`` names each relation's columns (for views and ``explain``).
    """

    terms: tuple[Term, ...]
    free: tuple[str, ...]
    distinct: tuple[tuple[str, str], ...] = ()
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Read:
    """How a rule reads term ``term``: through ``view`` of its relation, in state ``state``.

    ``attributes`` are the rule positions of the view's columns, in order.
    """

    term: int
    relation: str
    view: View
    attributes: tuple[int, ...]
    state: str
    negated: bool


@dataclass(frozen=True)
class DeltaRule:
    """The rule of term ``seed``: its batch (through ``seed_view``) extended along ``order``."""

    seed: int
    relation: str
    negated: bool
    seed_view: View
    order: tuple[str, ...]
    reads: tuple[Read, ...]
    distinct: tuple[tuple[int, int], ...]
    outputs: tuple[int, ...]

    @property
    def seed_width(self) -> int:
        return len(self.seed_view.order)

    def describe(self, query: DeltaQuery) -> str:
        columns = query.columns
        parts = [f"Δ{query.terms[self.seed].describe()}", "order " + ", ".join(self.order)]
        for read in self.reads:
            names = columns.get(read.relation) or tuple(f"#{i}" for i in range(max(read.view.order, default=-1) + 1))
            parts.append(f"{query.terms[read.term].describe()} {read.state} by {read.view.describe(names)}")
        return "; ".join(parts)


def _distinct_variables(term: Term) -> tuple[list[str], list[int], tuple[tuple[int, ...], ...]]:
    """A term's distinct variables, the column of each (first occurrence), and its equal groups."""
    first: dict[str, int] = {}
    groups: dict[str, list[int]] = {}
    for i, v in enumerate(term.variables):
        first.setdefault(v, i)
        groups.setdefault(v, []).append(i)
    equal = tuple(tuple(g) for g in groups.values() if len(g) > 1)
    return list(first), list(first.values()), equal


def plan_rules(query: DeltaQuery) -> tuple[DeltaRule, ...]:
    """One rule per term (pure Python: no data, no Spark); see the module notes."""
    from faq.hypergraph.acyclic import attribute_order

    rules = []
    positive_edges = [t.variables for t in query.terms if not t.negated and t.variables]
    for i, seed in enumerate(query.terms):
        seed_vars, seed_columns, seed_equal = _distinct_variables(seed)
        edges = [tuple(seed_vars), *positive_edges] if seed_vars else positive_edges
        order = tuple(attribute_order(edges, first=seed_vars)) if edges else ()
        missing = [v for t in query.terms for v in t.variables if v not in order]
        order = order + tuple(dict.fromkeys(missing))
        position = {v: p for p, v in enumerate(order)}
        reads = []
        for j, term in enumerate(query.terms):
            if j == i:
                continue
            names, columns, equal = _distinct_variables(term)
            ranked = sorted(zip(names, columns), key=lambda nc: position[nc[0]])
            view = View(tuple(c for _, c in ranked), equal)
            reads.append(Read(j, term.relation, view, tuple(position[n] for n, _ in ranked),
                              NEW if j < i else OLD, term.negated))
        distinct = tuple(sorted((min(position[a], position[b]), max(position[a], position[b]))
                                for a, b in query.distinct))
        rules.append(DeltaRule(i, seed.relation, seed.negated, View(tuple(seed_columns), seed_equal), order,
                               tuple(reads), distinct, tuple(position[v] for v in query.free)))
    return tuple(rules)


def views_needed(rules: Sequence[DeltaRule]) -> dict[str, list[View]]:
    """Per relation, the views the rules read (the indexes to keep resident)."""
    out: dict[str, list[View]] = {}
    for rule in rules:
        for read in rule.reads:
            views = out.setdefault(read.relation, [])
            if read.view not in views:
                views.append(read.view)
    return out


# --- where the indexes live ------------------------------------------------------------


def estimated_bytes(rows: int, arity: int, views: int) -> int:
    """Memory of a relation's resident rows and ``views`` tries (8-byte keys, values and offsets)."""
    stored = rows * 8 * (arity + 1)
    tries = views * rows * 8 * (2 * max(arity, 1) + 1)
    dictionary = rows * max(arity, 1) * 24
    return stored + tries + dictionary


def budget_bytes(budget: Optional[int | str] = None, session: Any = None) -> int:
    """The driver's index budget: ``budget`` (bytes or text like ``'512m'``), else the memory the
    session lets in-process steps use on the driver.

    That is the setting one-shot queries read (``spark.faq.localMemory``, default a quarter of this
    machine's memory: :func:`faq.settings.local_memory`), so a maintained query and a
    one-shot one decide from the same number; a maintained index on the driver lives in the same
    Python process as an in-process step.  No Spark starts to read it.

    >>> budget_bytes("512m")
    536870912
    >>> budget_bytes(4096)
    4096
    >>> from faq.spark import session_for_driver_data
    >>> from faq.settings import local_memory
    >>> budget_bytes() == local_memory(session_for_driver_data())
    True
    """
    from faq.errors import FAQValueError, InvalidArgumentError
    from faq.settings import parse_size

    if budget is None:
        from faq.settings import local_memory
        from faq.spark import session_for_driver_data

        return local_memory(session if session is not None else session_for_driver_data())
    if isinstance(budget, int):
        return budget
    try:
        return parse_size(budget)  # the sizes every spark.faq.* memory setting takes
    except InvalidArgumentError:
        raise FAQValueError(error_class="INDEX_BUDGET", value=budget, argument="budget") from None


@dataclass(frozen=True)
class RelationPlan:
    """One resident relation: its rows, and per view the index bytes (estimated, then measured)."""

    name: str
    columns: tuple[str, ...]
    rows: int
    views: tuple[str, ...]
    bytes: int
    measured: bool = False
    overlay: int = 0


#: How ``explain`` says where an index's overlay is folded into its base, per ``spark.faq.compaction``.
COMPACTION_WHERE = {"thread": "in a background thread, between batches",
                    "process": "in a forked background process, between batches",
                    "inline": "inside the batch that fills the overlay (merged views)",
                    "batch": "inside the batch that fills the overlay (views rebuilt when next read)"}


@dataclass(frozen=True)
class MaintenancePlan:
    """How a maintained query keeps its answer: what ``MaintainedQuery.explain()`` prints.

    Attributes
    ----------
    query : str
    semiring : str
    mode : str
        ``signed`` (a ring: batches add), ``monotone`` (idempotent:
        batches improve) or ``recompute`` (only recomputation; ``why`` says why).
    placement : str
        ``driver`` or ``executors``: where the indexes live.
    reason : str
        Why that placement (sizes against the budget).
    budget : int
        The driver's index budget in bytes.
    relations : tuple of RelationPlan
    rules : tuple of str
        One line per delta rule (its attribute order and what each term reads).
    compaction : str
        Where an index folds its overlay into its base (``spark.faq.compaction``:
        :mod:`faq.incremental.compaction`).
    kernels : tuple of str
        Per rule, the kernel that runs it and why (:mod:`faq.incremental.rule_kernel`).
    """

    query: str
    semiring: str
    mode: str
    placement: Literal["driver", "executors"]  # where the indexes live: DRIVER or EXECUTORS
    reason: str
    budget: int
    relations: tuple[RelationPlan, ...]
    rules: tuple[str, ...]
    why: str = ""
    compaction: str = "thread"
    kernels: tuple[str, ...] = ()

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.relations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "semiring": self.semiring, "mode": self.mode, "why": self.why,
            "placement": self.placement, "reason": self.reason, "budget_bytes": self.budget,
            "index_bytes": self.bytes,
            "relations": [{"name": r.name, "columns": list(r.columns), "rows": r.rows, "overlay_rows": r.overlay,
                           "views": list(r.views),
                           "bytes": r.bytes, "measured": r.measured} for r in self.relations],
            "rules": list(self.rules),
            "kernels": list(self.kernels),
            "compaction": self.compaction,
        }

    def __repr__(self) -> str:
        """One line (``str`` is the whole plan)."""
        return f"MaintenancePlan({self.query!r}, mode={self.mode!r}, placement={self.placement!r}, rules={len(self.rules)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("MaintenancePlan(...)" if cycle else str(self))

    def __str__(self) -> str:
        lines = [f"maintained {self.query}",
                 f"  semiring {self.semiring}; deltas {self.mode}" + (f" ({self.why})" if self.why else ""),
                 f"  indexes on the {self.placement}: {self.reason}",
                 f"  overlays folded into the bases {COMPACTION_WHERE.get(self.compaction, self.compaction)} "
                 f"(spark.faq.compaction={self.compaction})"]
        for r in self.relations:
            kind = "" if r.measured else "~"
            overlay = f" + {r.overlay:,} in the overlay" if r.overlay else ""
            lines.append(f"  relation {r.name}({', '.join(r.columns)}): {r.rows:,} rows{overlay}; views "
                         f"{', '.join(r.views) or '-'}; {kind}{_bytes(r.bytes)}")
        for k, rule in enumerate(self.rules, start=1):
            kernel = f"; {self.kernels[k - 1]}" if k <= len(self.kernels) else ""
            lines.append(f"  rule {k}: {rule}{kernel}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return "```\n" + str(self) + "\n```"


def _bytes(n: Optional[int]) -> str:
    return "?" if n is None else format_bytes(n)
