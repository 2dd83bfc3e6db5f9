"""Running a kept plan: read it back, and refuse it where it no longer fits.

A plan is a value (:mod:`faq.insideout.plans`): ``faq explain --json`` prints
it, and ``faq query --plan plan.json`` or ``faq.query(text, plan=...)`` runs it
as it is, without planning again.  :func:`load_plan` reads what may be given
(a :class:`~faq.insideout.plans.Plan`, its dictionary, the JSON ``faq query
--json`` prints with the plan inside, a path or JSON text).  Before it runs,
the executor checks it against what it is given, and a plan that does not fit
raises :class:`~faq.errors.StalePlanError` (``STALE_PLAN``, exit code 2 on the
command line), naming what differs:

* the query (:func:`check_query`): its normalised text (free variables and
  atoms), the aggregate of each bound variable and the semiring; the factors'
  names and arities are the atoms', which binding checks against the factors;
* the variables' key types (:func:`check_types`): the broadcast and
  partitioned joins need integer keys;
* the factors' rows (:func:`check_rows`), within :data:`SIZE_MARGIN` of the
  sizes the plan was made with, both ways.

Why a factor of 2 each way: every estimate the plan's choices compare with a
threshold scales with the rows (an index's bytes linearly, a bag's AGM bound
as ``Π N^x`` with cover weights ``x`` of at most 1 per factor, the placement's
footprint linearly), so within a factor of 2 of each size an estimate moves by
at most a factor of 2 per factor; the thresholds leave that much room (a
quarter of an executor's memory for an index, a quarter of the machine's for
an in-process step), and the elimination order, from the hypergraph, does
not depend on sizes at all.  Beyond it the plan may place on the driver what
no longer fits there, or broadcast an index that no longer fits the executors:
make it again (``faq explain --json``; it costs the statistics jobs only).  A
plan made without sizes made no choice from them and fits any.

The rows are counted where it is cheap (:func:`factor_rows`): a factor the
driver holds (a pandas or in-process table, an edge list read on the driver,
or a small factor fetched for the plan's in-process steps, as a run that plans
fetches it) costs nothing; a factor in Spark costs one job that stops counting
past the margin (``limit`` then ``count``) -- the job planning afresh would
run too.

Examples
--------
>>> from faq.language import parse_query
>>> from faq.insideout.planner import plan_query
>>> p = plan_query(parse_query("count() := edge(a,b), edge(b,c)"), semiring="counting", sizes={"edge": 100})
>>> check_query(p, parse_query("count() := edge(a,b), edge(b,c)"), "counting")
>>> check_rows(p, {"edge": 150})
>>> check_rows(p, {"edge": 1000})
Traceback (most recent call last):
...
faq.errors.StalePlanError: [STALE_PLAN] stale plan: rows of factor 'edge': the plan is for 100, not for 1000 (beyond its margin of ×2); re-run faq explain --json (or faq.plan) for this query and these factors, or run without a plan
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from faq.errors import InputNotFoundError, PlanError, StalePlanError
from faq.insideout.plans import Plan
from faq.language import FAQ

if TYPE_CHECKING:
    from faq.factor import Factor

#: How far a factor's rows may be from the size the plan was made with, either way (module notes).
SIZE_MARGIN = 2.0

PlanLike = Union[Plan, Mapping[str, Any], str, "os.PathLike[str]"]


def load_plan(value: PlanLike) -> Plan:
    """A :class:`~faq.insideout.plans.Plan` from what a caller may give for one.

    Parameters
    ----------
    value : Plan, mapping, str or path
        A plan; its :meth:`~faq.insideout.plans.Plan.to_dict` (what ``faq
        explain --json`` prints), or a dictionary holding one under
        ``"plan"`` (what ``faq query --json`` prints); JSON text of either;
        or the path of a file holding it.

    Raises
    ------
    InputNotFoundError
        No such file.
    PlanError
        Not a plan (or not JSON).

    Examples
    --------
    >>> from faq.language import parse_query
    >>> from faq.insideout.planner import plan_query
    >>> p = plan_query(parse_query("q(a) := e(a,b)"), semiring="counting")
    >>> load_plan(p) is p, load_plan(p.to_dict()) == p, load_plan({"rows": 3, "plan": p.to_dict()}) == p
    (True, True, True)
    >>> load_plan('{"rows": 3}')
    Traceback (most recent call last):
    ...
    faq.errors.PlanError: [INVALID_PLAN] not a plan this faq can read: format None (it reads faq.plan version 1); re-run faq explain --json
    """
    if isinstance(value, Plan):
        return value
    if isinstance(value, (str, os.PathLike)):
        value = _read_json(value)
    if isinstance(value, Mapping) and "format" not in value and isinstance(value.get("plan"), Mapping):
        value = value["plan"]  # `faq query --json`: the answer, with the plan it ran
    return Plan.from_dict(value)


def _read_json(source: Union[str, "os.PathLike[str]"]) -> Any:
    """The JSON of a file, or of ``source`` itself when it is JSON text (starts with ``{``)."""
    text = os.fspath(source)
    where = "the plan text"
    if not text.lstrip().startswith("{"):
        if not os.path.isfile(text):
            raise InputNotFoundError(path=text)
        where = text
        with open(text, encoding="utf-8") as f:
            text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(reason=f"{where} is not a plan: not JSON ({exc.msg} at line {exc.lineno}); "
                               "save the output of faq explain --json") from None


def check_query(plan: Plan, query: FAQ, semiring: Optional[str] = None) -> None:
    """Refuse ``plan`` unless it was made for ``query`` (and, when given, ``semiring``, a name).

    The atoms name the factors and their arities, so a plan that passes was
    made for factors of the same names and arities (binding checks them
    against the factors given).

    Raises
    ------
    StalePlanError
        The query's text, its aggregates or its semiring differ from the plan's.

    Examples
    --------
    >>> from faq.language import parse_query
    >>> from faq.insideout.planner import plan_query
    >>> p = plan_query(parse_query("q(a) := e(a,b), e(b,c)"), semiring="counting")
    >>> check_query(p, parse_query("q(a) := e(a,b), e(b,c)"), "counting")
    >>> check_query(p, parse_query("q(a,c) := e(a,b), e(b,c)"))
    Traceback (most recent call last):
    ...
    faq.errors.StalePlanError: [STALE_PLAN] stale plan: free variables: the plan is for 'q(a) := e(a, b), e(b, c)', not for 'q(a, c) := e(a, b), e(b, c)'; re-run faq explain --json (or faq.plan) for this query and these factors, or run without a plan
    >>> check_query(p, parse_query("q(a) := e(a,b), e(b,c)"), "boolean")
    Traceback (most recent call last):
    ...
    faq.errors.StalePlanError: [STALE_PLAN] stale plan: semiring: the plan is for 'counting', not for 'boolean'; re-run faq explain --json (or faq.plan) for this query and these factors, or run without a plan
    """
    text = str(query)
    if plan.query != text:
        atoms = tuple((a.factor, tuple(a.variables)) for a in query.atoms)
        planned = tuple((f, cols) for (_, f), cols in zip(plan.inputs, plan.atom_columns))
        what = ("atoms" if atoms != planned else "free variables" if tuple(query.free) != plan.free else "query")
        raise StalePlanError(what=what, planned=plan.query, found=text)
    if semiring is None:
        return
    if plan.semiring != semiring:
        raise StalePlanError(what="semiring", planned=plan.semiring, found=semiring)
    wanted = {v: s for s, vs in query.blocks(semiring) for v in vs}
    made = {v: s.aggregate for s in plan.steps for v in s.eliminated}
    if wanted != made:
        raise StalePlanError(what="aggregates", planned=dict(sorted(made.items())), found=dict(sorted(wanted.items())))


def check_types(plan: Plan, types: Mapping[str, str]) -> None:
    """Refuse ``plan`` when a variable's key type differs from the one it was made with (its join
    strategies may need integer keys).

    >>> from faq.language import parse_query
    >>> from faq.insideout.planner import plan_query
    >>> p = plan_query(parse_query("q(a) := e(a,b)"), semiring="counting", variable_types={"a": "bigint", "b": "bigint"})
    >>> check_types(p, {"a": "bigint", "b": "bigint"})
    >>> check_types(p, {"a": "bigint", "b": "string"})
    Traceback (most recent call last):
    ...
    faq.errors.StalePlanError: [STALE_PLAN] stale plan: key type of variable 'b': the plan is for 'bigint', not for 'string'; re-run faq explain --json (or faq.plan) for this query and these factors, or run without a plan
    """
    for v, planned in plan.variable_types.items():
        if v in types and types[v] != planned:
            raise StalePlanError(what=f"key type of variable {v!r}", planned=planned, found=types[v])


def check_rows(plan: Plan, rows: Mapping[str, int], capped: frozenset = frozenset(),
               margin: float = SIZE_MARGIN) -> None:
    """Refuse ``plan`` when a factor's ``rows`` lie beyond ``margin`` times (or below ``1 / margin`` of)
    the size it was made with.

    Parameters
    ----------
    rows : mapping factor name -> rows
        The factors' rows now (a factor left out is not checked).
    capped : set of str
        Factors whose count stopped at its cap (:func:`factor_rows`): they
        have at least ``rows``.
    margin : float
        :data:`SIZE_MARGIN` unless given.

    Examples
    --------
    >>> from faq.language import parse_query
    >>> from faq.insideout.planner import plan_query
    >>> p = plan_query(parse_query("q(a) := e(a,b)"), semiring="counting", sizes={"e": 1000})
    >>> check_rows(p, {"e": 600}), check_rows(p, {"e": 2000}), check_rows(p, {"other": 1})
    (None, None, None)
    >>> check_rows(p, {"e": 2001}, capped=frozenset({"e"}))
    Traceback (most recent call last):
    ...
    faq.errors.StalePlanError: [STALE_PLAN] stale plan: rows of factor 'e': the plan is for 1000, not for 'more than 2000' (beyond its margin of ×2); re-run faq explain --json (or faq.plan) for this query and these factors, or run without a plan
    """
    for name, planned in plan.sizes.items():
        if name not in rows:
            continue
        # An empty factor counts as one row: the planner weighs sizes as at least 1.
        low, high = max(1, planned) / margin, max(1, planned) * margin
        found = max(1, rows[name])
        if name in capped and found > high:
            raise StalePlanError(what=f"rows of factor {name!r}", planned=planned, found=f"more than {rows[name] - 1}",
                                 margin=margin)
        if not low <= found <= high:
            raise StalePlanError(what=f"rows of factor {name!r}", planned=planned, found=rows[name], margin=margin)


def factor_rows(plan: Plan, factors: Mapping[str, "Factor"], margin: float = SIZE_MARGIN
                ) -> tuple[dict[str, int], frozenset]:
    """The rows of the factors the plan has sizes for, as cheaply as they are known, and which of
    them were counted only up to a cap.

    A factor the driver holds is counted for nothing; one in Spark by one job
    that stops past the plan's margin (``limit(cap).count()``, the cap one
    more than ``margin`` times its size): it is refused either way once it
    holds more (module notes).
    """

    rows: dict[str, int] = {}
    capped = set()
    for name, planned in plan.sizes.items():
        if name not in factors:
            continue
        relation = factors[name].relation
        if relation.held:
            rows[name] = int(relation.rows)
            continue
        cap = int(max(1, planned) * margin) + 1
        rows[name] = factors[name].df.limit(cap).count()
        if rows[name] >= cap:
            capped.add(name)
    return rows, frozenset(capped)
