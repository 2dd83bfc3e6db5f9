"""Rich notebook display: compact HTML for plans and results (Jupyter's ``_repr_html_``).

Jupyter shows an object by calling its ``_repr_html_`` (and, for the plain-text
view, IPython's ``_repr_pretty_``).  The classes users meet in a notebook
delegate both here, so the rendering lives in one place and stays plain
Python:

* :class:`~faq.insideout.planner.Plan`: a header (query, semiring, order,
  faqw, AGM bound, runtime) and one table row per step — what it eliminates
  and with which ⊕, the bag, ρ*, the join and the strategy that runs it (its
  reason as a tooltip), the estimated rows and the step's output;
* :class:`~faq.insideout.executor.QueryResult`: the value of a query without
  free variables, else its measured rows and a preview of at most
  :data:`PREVIEW_ROWS` rows, the time and the plan's order and faqw;
* :class:`~faq.graphs.triangles.TriangleCount` and
  :class:`~faq.graphs.motifs.MotifCount`: the count, the edges, the time, the
  plan's order and faqw;
* :class:`~faq.incremental.change.Change`: version, rows changed, Σ diff, the
  running count when there is one, the time, and at most
  :data:`PREVIEW_ROWS` changed rows;
* :class:`~faq.learning.models.Covariance`: ``Σxxᵀ`` as pandas shows it.

Every ``_repr_html_`` is one line, ``return to_html(self)``: :func:`to_html`
picks the renderer by the class's name (:data:`RENDERERS`), so this module
imports none of the classes it shows and they all import it (no circle).

A repr never collects a large DataFrame: a query result's preview is one
``limit(PREVIEW_ROWS)`` job on its *cached* answer, and only while the result
is open (a closed result shows no preview rather than recomputing the query);
its row count is the one the executor measured.  A change is already on the
driver (numpy columns); the counts hold no DataFrame at all.  Nothing here
imports Spark.

Examples
--------
>>> from faq.language import parse_query
>>> from faq.insideout.planner import plan_query
>>> p = plan_query(parse_query("count() := edge(a,b), edge(a,c), edge(b,c)"), semiring="counting")
>>> html = p._repr_html_()
>>> "<table" in html and "ρ*" in html and "3/2" in html
True
"""

from __future__ import annotations

import html
from typing import Any, Callable, Iterable, Sequence

# The classes shown are annotated ``Any``: importing them here, even for type checking, would close
# a circle (each of them imports this module for its ``_repr_html_``).

__all__ = ["PREVIEW_ROWS", "RENDERERS", "to_html", "plan_html", "result_html", "triangles_html", "motifs_html",
           "change_html", "covariance_html", "pretty", "summary"]

#: The most rows a repr shows (a query result's preview, a change's rows).
PREVIEW_ROWS = 10



def _e(value: Any) -> str:
    return html.escape(str(value))


def _number(value: Any) -> str:
    """Integers with thousands separators, floats with 4 significant digits, the rest as text."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if hasattr(value, "item"):  # numpy scalar
        return _number(value.item())
    return str(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], escaped: bool = False) -> str:
    """An HTML table; cells are escaped unless ``escaped`` (they hold markup already)."""
    cell = (lambda v: v) if escaped else _e
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _facts(title: str, facts: Sequence[tuple[str, Any]]) -> str:
    """``<b>title</b>`` and a line of ``name: value`` facts."""
    line = " · ".join(f"{_e(name)} <b>{_e(value)}</b>" for name, value in facts)
    return f"<div><b>{_e(title)}</b><br>{line}</div>"


def _set(names: Sequence[str]) -> str:
    return "{" + ", ".join(names) + "}"


def _seconds(seconds: float) -> str:
    return f"{seconds:.3g} s"


# --- plans ---------------------------------------------------------------------------


def plan_html(plan: Any) -> str:
    """A :class:`~faq.insideout.plans.Plan` as a header and one table row per step (see the module notes)."""
    from faq.hypergraph import symbolic

    pieces = getattr(plan, "pieces", None)
    if pieces is not None and pieces.plans:  # what runs is the pieces' plans: their shape, then the first
        facts = [(f"piece {i}", f"{text}, est. {share:.0%} of the split rows")
                 for i, (text, share) in enumerate(zip(pieces.ranges(), pieces.shares), start=1)]
        runs = f"in {len(pieces.plans)} pieces over {pieces.variable} ({pieces.reason})"
        return _facts(f"plan for {plan.query}", [("runs", runs), *facts]) + plan_html(pieces.plans[0])
    relations = {r.id: r for r, _ in plan.inputs}
    relations.update({s.output.id: s.output for s in plan.steps})
    rows = []
    for s in plan.steps:
        what = f"{', '.join(s.eliminated)} (⊕ {s.aggregate})" if s.eliminated else "— (product on the free variables)"
        join = " ⋈ ".join(str(relations.get(r, r)) for r in s.inputs)
        if s.indicators:
            join += "; semi-joins " + ", ".join(f"π{_set(i.variables)} {i.relation}" for i in s.indicators)
        method = s.join_method + (f" ({s.join_reason})" if s.join_reason else "")
        strategy = _e(s.strategy.name)
        if s.strategy.reason:  # why, as a tooltip
            strategy = f'<span title="{_e(s.strategy.describe())}">{strategy}</span>'
        est = "" if s.estimated_rows is None else f"≤ {s.estimated_rows:.3g}"
        rows.append([_e(s.index), _e(what), _e(_set(s.bag)), _e(s.rho_star), _e(method), strategy, _e(est),
                     _e(join), _e(s.output), _e(symbolic.show(plan.agm_expression(s)))])
    rows.append(["free", "—", _e(_set(plan.free)), _e(plan.free_rho_star), "", "", "", "", "",
                 _e(symbolic.show(plan.agm_expression()))])
    agm = "unknown" if plan.agm_bound is None else f"{plan.agm_bound:.3g}"
    facts = [
        ("semiring", plan.semiring),
        ("order", f"{', '.join(plan.order) or '(none)'} ({plan.method})"),
        ("faqw", plan.faqw),
        ("AGM bound of the full join", agm),
        ("runtime", symbolic.runtime(plan.faqw)),
    ]
    header = ["step", "eliminates", "bag", "ρ*", "join", "strategy", "est. rows", "joins", "output", "AGM bound"]
    return _facts(f"plan for {plan.query}", facts) + _table(header, rows, escaped=True)


# --- results ------------------------------------------------------------------------


def result_html(result: Any) -> str:
    """A :class:`~faq.insideout.executor.QueryResult`: its value (no free variables) or its rows and a bounded preview."""
    plan = result.plan
    facts: list[tuple[str, Any]] = []
    preview = ""
    is_open = not result.scope.closed  # the answer is cached or held; closed results are not recomputed
    rows = result.rows_known  # (None: the answer is not counted yet; the preview below runs no count)
    if not plan.free:
        if is_open:
            facts.append(("value", _number(result.scalar())))  # one row
        else:
            facts.append(("value", "(closed)"))
    else:
        facts.append(("rows", "?" if rows is None else _number(rows)))
        if is_open:
            df = result.df
            head = df.limit(PREVIEW_ROWS).collect()  # a bounded job on the cached answer
            more = rows is not None and rows > len(head)
            preview = _table(df.columns, ([_number(v) for v in r] for r in head)) + (
                f"<div>first {len(head)} of {_number(rows)} rows</div>" if more else "")
        else:
            preview = "<div>(closed: no preview)</div>"
    facts += [("semiring", plan.semiring), ("time", _seconds(result.seconds)),
              ("order", ", ".join(plan.order) or "(none)"), ("faqw", plan.faqw)]
    return _facts(f"{plan.query}", facts) + preview


def triangles_html(result: Any) -> str:
    """A :class:`~faq.graphs.triangles.TriangleCount`: the count, edges, time and the plan's width."""
    kind = "feed-forward (directed)" if result.directed else "undirected"
    facts = [("triangles", _number(result.count)), ("edges", _number(result.edges)),
             ("time", _seconds(result.seconds)), ("order", ", ".join(result.plan.order)),
             ("faqw", result.plan.faqw)]
    return _facts(f"{kind} triangle count", facts)


def motifs_html(result: Any) -> str:
    """A :class:`~faq.graphs.motifs.MotifCount`: pattern, count, strategy, FAQs evaluated, edges, time."""
    widths = ", ".join(str(p.faqw) for p in result.plans) or "—"
    facts = [("count", _number(result.count)), ("strategy", result.strategy), ("FAQs", result.terms),
             ("edges", _number(result.edges)), ("time", _seconds(result.seconds)), ("faqw", widths)]
    return _facts(f"motif {result.pattern}", facts)


def change_html(change: Any) -> str:
    """A batch's :class:`~faq.incremental.change.Change`: version, rows changed, Σ diff, running count, time and a few rows."""
    facts: list[tuple[str, Any]] = [("version", change.version), ("rows changed", _number(len(change))),
                                    ("Σ diff", _number(change.total))]
    if change.count is not None:
        facts.append(("count", _number(change.count)))
    facts.append(("time", _seconds(change.seconds)))
    shown = change.sorted_rows(limit=PREVIEW_ROWS) if len(change) else []  # on the driver already
    table = _table(change.names, ([_number(v) for v in row.values()] for row in shown)) if shown else ""
    more = f"<div>first {len(shown)} of {_number(len(change))} rows (disappeared first)</div>" \
        if len(change) > len(shown) else ""
    return _facts("change", facts) + table + more


def covariance_html(covariance: Any) -> str:
    """A :class:`~faq.learning.models.Covariance`: ``Σxxᵀ`` labelled by feature, as pandas shows a frame."""
    return covariance.to_pandas()._repr_html_()


#: The renderer of each class shown, by class name (a subclass takes its nearest base's).
RENDERERS: dict[str, Callable[[Any], str]] = {
    "Plan": plan_html,
    "QueryResult": result_html,
    "TriangleCount": triangles_html,
    "MotifCount": motifs_html,
    "Change": change_html,
    "Covariance": covariance_html,
}


def to_html(obj: Any) -> str:
    """The notebook HTML of ``obj``: the one body of every ``_repr_html_`` in faq.

    Parameters
    ----------
    obj : Plan, QueryResult, TriangleCount, MotifCount, Change or Covariance
        The value to show; a subclass is shown as its nearest base in :data:`RENDERERS`.

    Returns
    -------
    str
        HTML for Jupyter; an object of no known class, its escaped ``repr`` (never an error, so a
        notebook cell always shows something).

    Examples
    --------
    >>> to_html(3)
    '<pre>3</pre>'
    """
    for cls in type(obj).__mro__:
        render = RENDERERS.get(cls.__name__)
        if render is not None:
            return render(obj)
    return f"<pre>{_e(repr(obj))}</pre>"


# --- plain text (IPython's pretty printer) ----------------------------------------------


def pretty(text: str, printer: Any, cycle: bool) -> None:
    """``_repr_pretty_`` body: print ``text`` (short summaries instead of long dataclass reprs)."""
    printer.text("..." if cycle else text)


def summary(obj: Any) -> str:
    """One line for a result (the plain-text view in a notebook)."""
    name = type(obj).__name__
    if name == "Change":
        count = "" if obj.count is None else f", count={obj.count}"
        return f"Change(version={obj.version}, rows={len(obj)}, total={obj.total}{count}, seconds={obj.seconds:.3g})"
    return repr(obj)  # the answers of jobs: one line (faq.results.Answer)
