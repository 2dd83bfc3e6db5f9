"""Plan values: what a plan says, printed (``explain``) and kept (``to_dict`` / ``from_dict``).

A :class:`Plan` is made by :func:`faq.insideout.planner.plan_query` (or
:func:`faq.insideout.binding.plan_for`, from the factors' facts) and run by
:func:`faq.insideout.executor.execute`, which decides nothing of its own.  It
is a value: frozen, compared by its fields, printed, and written as a JSON
dictionary that reads back to an equal plan, so a plan can be made once,
inspected, saved (``faq explain --json > plan.json``) and run later
(``faq query --plan plan.json``, ``faq.query(text, plan=...)``); a saved plan
is checked against the query and factors it is given before it runs
(:mod:`faq.insideout.staleness`).

Examples
--------
>>> import json
>>> from faq.language import parse_query
>>> from faq.insideout.planner import plan_query
>>> p = plan_query(parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)"), semiring="real", sizes={"A": 10, "B": 20, "D": 30})
>>> text = json.dumps(p.to_dict())
>>> kept = Plan.from_dict(json.loads(text))
>>> kept == p, kept.steps[0].rho_star, str(kept) == str(p)
(True, Fraction(2, 1), True)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from faq.errors import PlanError
from faq.hypergraph import draw_hypergraph, symbolic
from faq.hypergraph.statistics import ColumnStatistics, LevelWork, RelationStatistics, WorkEstimate
from faq.insideout import pipelining
from faq.insideout.physical import Environment, Strategy
from faq.insideout.pieces_plan import Pieces

if TYPE_CHECKING:
    import sympy
    from matplotlib.axes import Axes

#: The ``format`` and ``version`` of :meth:`Plan.to_dict`'s dictionary; :meth:`Plan.from_dict`
#: reads this version only (a plan is cheap to make again: ``faq explain --json``).
PLAN_FORMAT = "faq.plan"
PLAN_VERSION = 1


@dataclass(frozen=True)
class Relation:
    """A relation of the plan: an input atom or a step's output."""

    id: str
    variables: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.id}({', '.join(self.variables)})"


@dataclass(frozen=True)
class Indicator:
    """Semi-join with the projection of ``relation`` onto ``variables``."""

    relation: str
    variables: tuple[str, ...]


#: How the reason of a step placed "driver" begins when the plan is run in-process by every task of a Spark
#: job over its own rows (:mod:`faq.learning.in_tasks`), not by the driver: ``explain`` then says so.
IN_TASKS = "in the tasks of "


@dataclass(frozen=True)
class Step:
    """One step: join a bag, ⊕-aggregate ``eliminated`` away (none: the final product)."""

    index: int
    eliminated: tuple[str, ...]
    aggregate: Optional[str]
    bag: tuple[str, ...]
    inputs: tuple[str, ...]
    indicators: tuple[Indicator, ...]
    output: Relation
    rho_star: Fraction
    estimated_rows: Optional[float]
    join_method: str = "binary"
    join_reason: str = ""
    attribute_order: tuple[str, ...] = ()
    work: Optional[WorkEstimate] = None  # generic joins: estimated proposals per attribute
    strategy: Strategy = Strategy("binary", "")  # what runs: binary, broadcast, partitioned or shuffle, and why
    # The bag's AGM bound as exponents: (input relation, weight > 0) of the fractional edge cover
    # that gives estimated_rows (the ρ*-optimal cover when the plan has no sizes).
    cover: tuple[tuple[str, Fraction], ...] = ()
    # Where the step runs: "driver" (in-process, no Spark job: faq.joins.local) or "executors",
    # and why (faq.placement_policy.choose, through placement.step_placement).
    placement: str = "executors"
    placement_reason: str = ""
    # A bound on the rows of the bag's product before ⊕: the AGM bound, tightened by the largest
    # degrees of the inputs the driver holds (Plan.degrees); None without sizes.
    product_rows: Optional[float] = None
    # Why the bag's cover is a greedy integral one (its rho_star and AGM bound then upper bounds):
    # the bag is over the exact LP's limit (faq.insideout.bags.EXACT_COVER_ROWS); "" when exact.
    greedy_cover: str = ""


@dataclass(frozen=True)
class Plan:
    """How a query is answered; print it, compare it, keep it (:meth:`to_dict`, :meth:`from_dict`).

    Attributes
    ----------
    query : str
        The query's text form.
    semiring : str
        The query's semiring (its ⊗ is used throughout).
    free : tuple of str
        Output variables, in output order.
    inputs : tuple of (Relation, factor name)
        One relation per atom: ``edge#2`` is the second atom, a use of ``edge``.
    atom_columns : tuple of tuple of str
        Per atom, its variables as written (repeats allowed: ``f(x, x)``).
    order : tuple of str
        Elimination order of the bound variables, first eliminated first.
    steps : tuple of Step
    faqw : Fraction
        max over bags (and the free bag) of ρ*.
    free_rho_star : Fraction
    agm_bound : float or None
        AGM bound of the full join from the factor sizes.
    method : str
        How the order was chosen.
    sizes : dict
        Factor sizes the plan was made with (may be empty).
    statistics : dict
        Factor statistics the plan was made with (rows and, per key column,
        distinct values and largest degree; may be empty).
    variable_types : dict
        Key type of each variable the plan was made with (may be empty).
    environment : Environment
        Where the plan was made to run (Spark Connect or not, parallelism,
        index limits).
    task_aggregation : bool
        Whether broadcast joins may ⊕-aggregate inside their tasks.
    free_cover : tuple of (str, Fraction)
        The free bag's fractional edge cover, as :attr:`Step.cover`.
    held : tuple of str
        Factors whose rows the driver held when the plan was made (steps over
        them may run in-process without fetching them).
    degrees : dict
        Per held factor, the most rows sharing one value of each key column
        (they bound the rows of in-process joins).
    limits : tuple of str
        What planning did less exactly than it could because the query is
        over a limit (a greedy elimination order, greedy covers), and which
        limit; empty for a query within them.  ``explain`` prints them.
    in_tasks : str
        The relation (``factor#k``) whose factor stays in Spark: every step
        runs in-process inside each task of its scan, over the task's rows
        and the other atoms shipped to it (:mod:`faq.insideout.in_tasks`);
        ``""``: the steps run where their placements say.
    pieces : Pieces, optional
        The plan runs in pieces (:mod:`faq.insideout.pieces_plan`): one
        variable's values split into ranges, each piece's own plan run
        in-process; :attr:`steps` are then the unsplit plan's, for reference.

    Examples
    --------
    >>> from faq.insideout.planner import plan_query
    >>> from faq.language import parse_query
    >>> p = plan_query(parse_query("count() := e(a,b), e(b,c), e(a,c)"), semiring="counting")
    >>> p, str(p.faqw), [step.eliminated for step in p.steps]
    (Plan('count() := e(a, b), e(b, c), e(a, c)', semiring='counting', steps=1), '3/2', [('a', 'b', 'c')])
    >>> Plan.from_dict(p.to_dict()) == p        # kept as JSON, read back the same
    True
    """

    query: str
    semiring: str
    free: tuple[str, ...]
    inputs: tuple[tuple[Relation, str], ...]
    atom_columns: tuple[tuple[str, ...], ...]
    order: tuple[str, ...]
    steps: tuple[Step, ...]
    faqw: Fraction
    free_rho_star: Fraction
    agm_bound: Optional[float]
    method: str
    sizes: Mapping[str, int] = field(default_factory=dict)
    statistics: Mapping[str, RelationStatistics] = field(default_factory=dict)
    variable_types: Mapping[str, str] = field(default_factory=dict)
    environment: Environment = field(default_factory=Environment)
    task_aggregation: bool = True
    free_cover: tuple[tuple[str, Fraction], ...] = ()
    held: tuple[str, ...] = ()
    degrees: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    limits: tuple[str, ...] = ()
    in_tasks: str = ""
    pieces: Optional[Pieces] = None

    @property
    def result(self) -> Relation:
        """The relation holding the answer."""
        return self.steps[-1].output if self.steps else self.inputs[0][0]

    def agm_expression(self, step: Optional[Step] = None) -> "sympy.Expr":
        """A bag's AGM bound ``Π N_f^x`` in the factors' sizes, as a sympy expression.

        ``N_f`` is the rows of factor ``f`` and ``x`` the weights of the bag's cover
        (:attr:`Step.cover`); a factor used by several atoms adds their weights.

        Parameters
        ----------
        step : Step, optional
            One of this plan's steps (default: the free bag).

        Returns
        -------
        sympy.Expr

        Examples
        --------
        >>> from faq.language import parse_query
        >>> from faq.insideout.planner import plan_query
        >>> p = plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting")
        >>> p.agm_expression(p.steps[0])
        N_edge**(3/2)
        """
        return symbolic.agm_expression(self._factor_weights(step))

    def agm_text(self, step: Optional[Step] = None) -> str:
        """:meth:`agm_expression` as the one line a printed plan shows (``N_edge^(3/2)``), without sympy.

        The text :func:`faq.hypergraph.symbolic.show` prints for :meth:`agm_expression`,
        written from the cover's fractions (:func:`faq.hypergraph.symbolic.agm_text`):
        printing a plan (``faq explain``) then never imports sympy.

        Examples
        --------
        >>> from faq.language import parse_query
        >>> from faq.insideout.planner import plan_query
        >>> p = plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting")
        >>> p.agm_text(p.steps[0])
        'N_edge^(3/2)'
        """
        return symbolic.agm_text(self._factor_weights(step))

    def _cover(self, step: Optional[Step]) -> tuple[tuple[str, Fraction], ...]:
        """The fractional edge cover of ``step``'s bag (None: the free bag), by input relation."""
        return self.free_cover if step is None else step.cover

    def _factor_weights(self, step: Optional[Step]) -> list[tuple[str, Fraction]]:
        """The cover of ``step``'s bag (None: the free bag) by factor name: what its AGM bound multiplies."""
        factor = self._factor_of
        return [(factor[r], w) for r, w in self._cover(step)]

    @functools.cached_property
    def _factor_of(self) -> dict[str, str]:
        """The factor of each input relation, made once: a printed plan asks for it at every step."""
        return {r.id: f for r, f in self.inputs}

    def runtime_expression(self) -> "sympy.Expr":
        """``N^faqw + |output|``: the plan's runtime up to log factors, as a sympy expression.

        Examples
        --------
        >>> from faq.language import parse_query
        >>> from faq.insideout.planner import plan_query
        >>> plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting").runtime_expression()
        N**(3/2) + |output|
        """
        return symbolic.runtime_expression(self.faqw)

    def draw(self, ax: Optional["Axes"] = None) -> "Axes":
        """Draw the query's primal graph, numbered by this plan's elimination order.

        Free variables are grey squares; each graph edge is labelled with the atoms
        (``edge#1``...) holding it. Needs matplotlib (``pip install 'faq[notebook]'``).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from faq.language import parse_query
        >>> from faq.insideout.planner import plan_query
        >>> ax = plan_query(parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)"), semiring="real").draw()
        >>> sorted(t.get_text() for t in ax.texts if "\\n" in t.get_text())
        ['i\\nfree', 'j\\n1', 'k\\n2', 'l\\nfree']
        """
        return draw_hypergraph(
            [r.variables for r, _ in self.inputs],
            order=self.order,
            free=self.free,
            names=[r.id for r, _ in self.inputs],
            ax=ax,
            title=self.query,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary holding everything the plan says; :meth:`from_dict` reads it back.

        Fractions are written as ``"3/2"`` strings, infinite estimates as
        ``"inf"`` (plain JSON has no infinity), tuples as lists.  ``format``
        and ``version`` name the layout (:data:`PLAN_FORMAT`,
        :data:`PLAN_VERSION`); ``agm_expression``, ``free_agm_expression``
        and ``runtime`` are derived, for readers, and not read back.

        Examples
        --------
        >>> import json
        >>> from faq.language import parse_query
        >>> from faq.insideout.planner import plan_query
        >>> p = plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting")
        >>> d = p.to_dict()
        >>> d["format"], d["version"], d["faqw"], d["bags"][0]["cover"]
        ('faq.plan', 1, '3/2', {'edge#1': '1/2', 'edge#2': '1/2', 'edge#3': '1/2'})
        >>> Plan.from_dict(json.loads(json.dumps(d))) == p
        True
        """
        return {
            "format": PLAN_FORMAT,
            "version": PLAN_VERSION,
            "query": self.query,
            "semiring": self.semiring,
            "free": list(self.free),
            "order": list(self.order),
            "method": self.method,
            "faqw": str(self.faqw),
            "free_rho_star": str(self.free_rho_star),
            "agm_bound": _number(self.agm_bound),
            "sizes": dict(self.sizes),
            "statistics": {name: st.to_dict() for name, st in self.statistics.items()},
            "variable_types": dict(self.variable_types),
            "environment": self.environment.to_dict(),
            "task_aggregation": self.task_aggregation,
            "held": list(self.held),
            "degrees": {name: list(d) for name, d in self.degrees.items()},
            "limits": list(self.limits),
            "in_tasks": self.in_tasks,
            "pieces": None if self.pieces is None else self.pieces.to_dict(),
            "inputs": [{"relation": r.id, "factor": f, "variables": list(r.variables)} for r, f in self.inputs],
            "atom_columns": [list(columns) for columns in self.atom_columns],
            "bags": [self._step_dict(s) for s in self.steps],
            "free_cover": {r: str(w) for r, w in self.free_cover},
            "free_agm_expression": self.agm_text(),
            "runtime": symbolic.runtime(self.faqw),
        }

    def _step_dict(self, s: Step) -> dict[str, Any]:
        """One step of :meth:`to_dict` (a "bag")."""
        return {
            "step": s.index,
            "eliminate": list(s.eliminated),
            "aggregate": s.aggregate,
            "bag": list(s.bag),
            "rho_star": str(s.rho_star),
            "estimated_rows": _number(s.estimated_rows),
            "join": list(s.inputs),
            "join_method": s.join_method,
            "join_reason": s.join_reason,
            "attribute_order": list(s.attribute_order),
            "strategy": strategy_dict(s.strategy),
            "placement": s.placement,
            "placement_reason": s.placement_reason,
            "product_rows": _number(s.product_rows),
            "greedy_cover": s.greedy_cover,
            "generic_join_work": work_dict(s.work),
            "indicators": [{"relation": i.relation, "variables": list(i.variables)} for i in s.indicators],
            "output": {"relation": s.output.id, "variables": list(s.output.variables)},
            "cover": {r: str(w) for r, w in s.cover},
            "agm_expression": self.agm_text(s),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Plan":
        """The plan :meth:`to_dict` wrote (also after a trip through JSON): ``Plan.from_dict(p.to_dict()) == p``.

        Raises
        ------
        PlanError
            ``d`` is not a plan of a format and version this faq reads.

        Examples
        --------
        >>> Plan.from_dict({"format": "faq.plan", "version": 99})
        Traceback (most recent call last):
        ...
        faq.errors.PlanError: [INVALID_PLAN] not a plan this faq can read: version 99 (it reads faq.plan version 1); re-run faq explain --json
        """
        if not isinstance(d, Mapping) or d.get("format") != PLAN_FORMAT or d.get("version") != PLAN_VERSION:
            found = (f"format {d.get('format')!r}" if isinstance(d, Mapping) and d.get("format") != PLAN_FORMAT
                     else f"version {d.get('version')!r}" if isinstance(d, Mapping) else type(d).__name__)
            raise PlanError(reason=f"not a plan this faq can read: {found} (it reads {PLAN_FORMAT} version "
                                   f"{PLAN_VERSION}); re-run faq explain --json")
        try:
            return cls(
                query=d["query"],
                semiring=d["semiring"],
                free=tuple(d["free"]),
                inputs=tuple((Relation(i["relation"], tuple(i["variables"])), i["factor"]) for i in d["inputs"]),
                atom_columns=tuple(tuple(c) for c in d["atom_columns"]),
                order=tuple(d["order"]),
                steps=tuple(_step_of(s) for s in d["bags"]),
                faqw=Fraction(d["faqw"]),
                free_rho_star=Fraction(d["free_rho_star"]),
                agm_bound=_float(d["agm_bound"]),
                method=d["method"],
                sizes=dict(d["sizes"]),
                statistics={name: statistics_of(st) for name, st in d["statistics"].items()},
                variable_types=dict(d["variable_types"]),
                environment=environment_of(d["environment"]),
                task_aggregation=bool(d["task_aggregation"]),
                free_cover=_cover_of(d["free_cover"]),
                held=tuple(d["held"]),
                degrees={name: tuple(v) for name, v in d["degrees"].items()},
                limits=tuple(d.get("limits", ())),  # absent from plans written before limits were shown
                in_tasks=str(d.get("in_tasks", "")),  # absent from plans written before it was a choice
                pieces=None if not d.get("pieces") else Pieces.from_dict(d["pieces"], cls.from_dict),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PlanError(reason=f"not a plan this faq can read: {type(exc).__name__} {exc}; "
                                   "re-run faq explain --json") from None

    def __str__(self) -> str:
        variables = {r.id: r for r, _ in self.inputs}
        variables.update({s.output.id: s.output for s in self.steps})
        agm = "unknown" if self.agm_bound is None else f"{self.agm_bound:.3g}"
        lines = [
            f"plan for {self.query}",
            f"  semiring {self.semiring}; order {', '.join(self.order) or '(none)'} ({self.method}); "
            f"faqw {self.faqw}; AGM bound of the full join {agm}",
        ]
        lines += [f"  limit: {note}" for note in self.limits]
        if self.pieces is not None:  # what runs is the pieces' plans; the first shows their shape
            lines += self.pieces.lines()
            if self.pieces.plans:
                lines.append("  piece 1's plan (the others differ in sizes):")
                lines += ["    " + line for line in str(self.pieces.plans[0]).splitlines()[1:]]
            return "\n".join(lines)
        if self.in_tasks:
            lines.append(f"  runs in the tasks of {self.in_tasks}: its rows stay in Spark; each task runs every step "
                         "below in-process with the other atoms shipped to it; partial answers ⊕-combined")
        handed = pipelining.pipelined(self)  # as the executor reads it
        for s in self.steps:
            est = "" if s.estimated_rows is None else f", est. ≤ {s.estimated_rows:.3g} rows"
            rho = f"ρ* {s.rho_star}" if not s.greedy_cover else f"ρ* ≤ {s.rho_star} ({s.greedy_cover})"
            what = (
                f"eliminate {', '.join(s.eliminated)} with ⊕ of {s.aggregate}"
                if s.eliminated
                else "multiply on the free variables"
            )
            lines.append(f"  step {s.index}: {what}; bag {_set(s.bag)}, {rho}{est}")
            join = " ⋈ ".join(str(variables[r]) for r in s.inputs)
            ind = ""
            if s.indicators:
                ind = "; indicators " + ", ".join(f"π{_set(i.variables)} {i.relation}" for i in s.indicators)
            how = f"{s.join_method}: {s.join_reason}" if s.join_reason else s.join_method
            if s.attribute_order:
                how += f"; attributes {', '.join(s.attribute_order)}"
            lines.append(f"          join {join} [{how}]{ind} -> {s.output}")
            if s.strategy.name != "binary" or s.strategy.binary_kernel is not None:
                lines.append(f"          {s.strategy.describe(in_process=s.placement == 'driver')}")
            if s.placement_reason:
                where = "in-process on the driver" if s.placement == "driver" else "on the executors"
                if s.placement == "driver" and s.placement_reason.startswith(IN_TASKS):
                    where = "in-process"  # a plan each Spark task runs on its own rows (faq.learning.in_tasks)
                lines.append(f"          runs {where} ({s.placement_reason})")
            if s.index in handed:
                lines.append(f"          {pipelining.note(handed[s.index])}")
            if s.work is not None and s.work.levels:
                lines.append(f"          generic-join work (est.): {s.work}")
            lines.append(f"          {self._agm_line(s)}")
        lines.append(f"  free bag {_set(self.free)}: ρ* {self.free_rho_star}")
        if self.free:
            lines.append(f"          {self._agm_line(None)}")
        lines.append(f"  runtime {symbolic.runtime(self.faqw)}, N = rows of the largest factor{self._largest()}")
        return "\n".join(lines)

    def _agm_line(self, step: Optional[Step]) -> str:
        """``AGM bound N_edge^(3/2); cover edge#1 1/2, ...`` for a step (None: the free bag)."""
        weights = ", ".join(f"{r} {w}" for r, w in self._cover(step)) or "none (empty bag)"
        return f"AGM bound {self.agm_text(step)}; fractional edge cover {weights}"

    def _largest(self) -> str:
        """`` (1e+03)``: N, when every factor of the plan has a size."""
        names = {f for _, f in self.inputs}
        if not names or not names <= set(self.sizes):
            return ""
        return f" ({max(self.sizes[f] for f in names):.3g})"

    def _repr_html_(self) -> str:
        """The plan as a table of steps, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text view: the printed plan, not the dataclass fields."""
        printer.text("Plan(...)" if cycle else str(self))

    def __repr__(self) -> str:
        """One line (``str`` is the whole plan): the query, semiring and steps."""
        return f"Plan({self.query!r}, semiring={self.semiring!r}, steps={len(self.steps)})"


def _set(names: Sequence[str]) -> str:
    return "{" + ", ".join(names) + "}"


# --- the JSON form of the parts of a plan -------------------------------------------------------


def _number(value: Optional[float]) -> Union[float, str, None]:
    """A number for JSON: an infinite (or NaN) float as its text, ``"inf"``, which :func:`_float` reads back."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _float(value: Union[float, int, str, None]) -> Optional[float]:
    """A number :func:`_number` wrote (also ``"Infinity"``, as ``json.dumps`` writes it); None stays None."""
    return float(value) if isinstance(value, str) else value


def _cover_of(d: Mapping[str, str]) -> tuple[tuple[str, Fraction], ...]:
    return tuple((r, Fraction(w)) for r, w in d.items())


def _step_of(d: Mapping[str, Any]) -> Step:
    """A :class:`Step` from its dictionary in :meth:`Plan.to_dict`."""
    return Step(
        index=d["step"],
        eliminated=tuple(d["eliminate"]),
        aggregate=d["aggregate"],
        bag=tuple(d["bag"]),
        inputs=tuple(d["join"]),
        indicators=tuple(Indicator(i["relation"], tuple(i["variables"])) for i in d["indicators"]),
        output=Relation(d["output"]["relation"], tuple(d["output"]["variables"])),
        rho_star=Fraction(d["rho_star"]),
        estimated_rows=_float(d["estimated_rows"]),
        join_method=d["join_method"],
        join_reason=d["join_reason"],
        attribute_order=tuple(d["attribute_order"]),
        work=work_of(d["generic_join_work"]),
        strategy=strategy_of(d["strategy"]),
        cover=_cover_of(d["cover"]),
        placement=d["placement"],
        placement_reason=d["placement_reason"],
        product_rows=_float(d["product_rows"]),
        greedy_cover=d.get("greedy_cover", ""),
    )


def strategy_dict(strategy: Strategy) -> dict[str, Any]:
    """:meth:`Strategy.to_dict <faq.insideout.physical.Strategy.to_dict>` with what running it needs
    too (the in-process kernel chosen) and its numbers exact (:func:`strategy_of` reads it back)."""
    return {
        **strategy.to_dict(),
        "index_rows": _number(strategy.index_rows),
        "index_bytes": _number(strategy.index_bytes),
        "task_rows": _number(strategy.task_rows),
        "task_bytes": _number(strategy.task_bytes),
        "numpy_kernel": strategy.numpy_kernel,
        "sparse_kernel": strategy.sparse_kernel,
        "dense_rows": strategy.dense_rows,
        "oriented_count": strategy.oriented_count,
        "binary_kernel": strategy.binary_kernel,
        "binary_reason": strategy.binary_reason,
    }


def strategy_of(d: Mapping[str, Any]) -> Strategy:
    """The :class:`~faq.insideout.physical.Strategy` :func:`strategy_dict` wrote.

    >>> s = Strategy("partitioned", "forced", 300.0, shares=(("a", 2), ("b", 1)), cells=2, numpy_kernel=True)
    >>> strategy_of(strategy_dict(s)) == s
    True
    >>> b = Strategy("binary", "", binary_kernel="sort-merge", binary_reason="integer keys")
    >>> strategy_of(strategy_dict(b)) == b
    True
    """
    return Strategy(
        name=d["name"],
        reason=d["reason"],
        index_rows=_float(d["index_rows"]),
        shared=tuple(tuple(g) for g in d["shared_indexes"]),
        aggregate_in_tasks=bool(d["aggregate_in_tasks"]),
        aggregation=d["aggregation"],
        index_bytes=_float(d["index_bytes"]),
        shares=tuple((v, s) for v, s in d["grid"].items()),
        cells=d["cells"],
        task_rows=_float(d["task_rows"]),
        task_bytes=_float(d["task_bytes"]),
        batches=d["batches"],
        index_dir=d["index_dir"],
        numpy_kernel=bool(d.get("numpy_kernel", False)),
        sparse_kernel=bool(d.get("sparse_kernel", False)),
        dense_rows=bool(d.get("dense_rows", False)),
        oriented_count=bool(d.get("oriented_count", False)),
        binary_kernel=d.get("binary_kernel"),
        binary_reason=d.get("binary_reason", ""),
    )


def environment_of(d: Mapping[str, Any]) -> Environment:
    """The :class:`~faq.insideout.physical.Environment` its ``to_dict`` wrote (unknown keys ignored)."""
    known = {f.name for f in fields(Environment)}
    return Environment(**{k: v for k, v in d.items() if k in known})


def statistics_of(d: Mapping[str, Any]) -> RelationStatistics:
    """The :class:`~faq.hypergraph.statistics.RelationStatistics` its ``to_dict`` wrote."""
    columns = d["columns"]
    return RelationStatistics(d["rows"], None if columns is None else tuple(
        ColumnStatistics(c["distinct"], c["max_degree"]) for c in columns))


def work_dict(work: Optional[WorkEstimate]) -> Optional[dict[str, Any]]:
    """A generic join's estimated work for JSON: its ``to_dict`` (totals rounded, for reading), with
    each level's numbers exact, so that :func:`work_of` reads the estimate back unchanged."""
    if work is None:
        return None
    levels = [
        {"attribute": lv.attribute, "relations": list(lv.relations), "proposer": lv.proposer,
         "prefixes": _number(lv.prefixes), "work": _number(lv.work), "bound": _number(lv.bound),
         "agm": _number(lv.agm)}
        for lv in work.levels
    ]
    summary = work.to_dict()
    return {**summary, "total": _number(summary["total"]), "bound": _number(summary["bound"]), "levels": levels}


def work_of(d: Optional[Mapping[str, Any]]) -> Optional[WorkEstimate]:
    """The :class:`~faq.hypergraph.statistics.WorkEstimate` :func:`work_dict` wrote."""
    if d is None:
        return None
    return WorkEstimate(tuple(d["order"]), tuple(
        LevelWork(lv["attribute"], tuple(lv["relations"]), lv["proposer"], _float(lv["prefixes"]),
                  _float(lv["work"]), _float(lv["bound"]), _float(lv["agm"]))
        for lv in d["levels"]))
