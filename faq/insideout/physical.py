"""The physical half of a plan: how each bag is joined, where its index lives, what runs in tasks.

The planner (:mod:`faq.insideout.planner`) calls :func:`choose_strategy` for
every step, so a :class:`~faq.insideout.planner.Plan` holds every decision
the executor will carry out: nothing is decided again at run time, and
``explain`` prints exactly what will run.  Pure Python: the facts come in as
values (factor sizes and key types from the caller, the session's kind and
parallelism as an :class:`Environment`), so plans can be made, printed and
tested without Spark.

A bag joined by the generic (worst-case optimal) join runs one of two
strategies:

``broadcast``
    each relation becomes a CSR trie collected to the driver and sent to
    every task once (a broadcast variable on classic Spark, inside the
    function on Spark Connect); tasks extend seeds in numpy.  Needs integer
    keys and an index small enough to ship: at most
    :attr:`Environment.broadcast_max_rows` rows when chosen automatically,
    never more than :attr:`Environment.broadcast_hard_max_rows` (or
    :attr:`Environment.connect_ship_max_rows` on Connect).
``shuffle``
    DataFrame joins, attribute at a time (count / propose / validate as
    joins); any key type, any size (Spark spills).

Uses of one factor in the same column order share one index
(:func:`shared_indexes`), and a broadcast join that is ⊕-aggregated right
after it multiplies and ⊕-combines inside its tasks when numpy computes the
semirings exactly (:func:`task_aggregation`).

Examples
--------
>>> env = Environment(parallelism=2)
>>> choose_strategy("generic", index_rows=3000, integral=True, environment=env).name
'broadcast'
>>> s = choose_strategy("generic", index_rows=3e7, integral=True, environment=env)
>>> s.name, s.reason
('shuffle', 'index of 3e+07 rows exceeds the automatic broadcast limit 2e+07')
>>> choose_strategy("generic_broadcast", index_rows=10, integral=False, environment=env).reason
'forced broadcast needs integer keys: shuffle instead'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

# Requested bag-join methods: the planner's "auto" picks binary joins for acyclic bags and
# "generic" for cyclic ones; "generic_shuffle" / "generic_broadcast" force a strategy.
JOIN_METHODS = ("binary", "generic", "generic_shuffle", "generic_broadcast")
# What a step runs.
STRATEGIES = ("binary", "broadcast", "shuffle")

# Index limits (rows of all relations of one bag).  The automatic choice broadcasts up to
# AUTO_BROADCAST_MAX_ROWS: every executor's Python worker holds the whole index.
AUTO_BROADCAST_MAX_ROWS = 20_000_000
# A forced broadcast is refused above this many rows.
BROADCAST_MAX_ROWS = 50_000_000
# On Spark Connect the index is pickled into the mapInArrow function's payload (no broadcast
# variables), and a Connect message is bounded.
CONNECT_SHIP_MAX_ROWS = 8_000_000


@dataclass(frozen=True)
class Environment:
    """Where a plan will run, as far as its physical choices depend on it.

    Attributes
    ----------
    connect : bool
        A Spark Connect session (the broadcast index travels inside the
        function, up to ``connect_ship_max_rows``).
    parallelism : int
        Tasks that keep every core busy.
    broadcast_max_rows, broadcast_hard_max_rows, connect_ship_max_rows : int
        Index limits in rows (module constants by default; tests lower them).
    """

    connect: bool = False
    parallelism: int = 2
    broadcast_max_rows: int = AUTO_BROADCAST_MAX_ROWS
    broadcast_hard_max_rows: int = BROADCAST_MAX_ROWS
    connect_ship_max_rows: int = CONNECT_SHIP_MAX_ROWS

    def to_dict(self) -> dict[str, Any]:
        return {
            "connect": self.connect,
            "parallelism": self.parallelism,
            "broadcast_max_rows": self.broadcast_max_rows,
            "broadcast_hard_max_rows": self.broadcast_hard_max_rows,
            "connect_ship_max_rows": self.connect_ship_max_rows,
        }


@dataclass(frozen=True)
class Strategy:
    """How one step's bag is joined (a field of :class:`~faq.insideout.planner.Step`).

    Attributes
    ----------
    name : {"binary", "broadcast", "shuffle"}
    reason : str
        Why, in words (shown by ``explain``).
    index_rows : float or None
        Rows of all relations of the bag, the broadcast index's size
        (estimated for intermediate relations; None when sizes are unknown).
    shared : tuple of tuple of int
        Generic joins: groups of uses (relations, then indicators, in the
        step's order) that read one index.
    aggregate_in_tasks : bool
        Broadcast joins: multiply and ⊕-combine inside the tasks, returning
        partial aggregates (the executor's group-by combines them).
    aggregation : str
        What the tasks do with the product, or why they list every binding.
    """

    name: str
    reason: str
    index_rows: Optional[float] = None
    shared: tuple[tuple[int, ...], ...] = ()
    aggregate_in_tasks: bool = False
    aggregation: str = ""

    def describe(self) -> str:
        """One line for ``explain``."""
        parts = [f"strategy {self.name} ({self.reason})"]
        if self.shared and any(len(g) > 1 for g in self.shared):
            parts.append(f"{sum(map(len, self.shared))} uses read {len(self.shared)} index(es)")
        if self.aggregation:
            parts.append(self.aggregation)
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reason": self.reason,
            "index_rows": _finite(self.index_rows),
            "shared_indexes": [list(g) for g in self.shared],
            "aggregate_in_tasks": self.aggregate_in_tasks,
            "aggregation": self.aggregation,
        }


def choose_strategy(
    method: str,
    index_rows: Optional[float],
    integral: Optional[bool],
    environment: Environment,
) -> Strategy:
    """The strategy of a bag joined with ``method`` (a :data:`JOIN_METHODS` name).

    Parameters
    ----------
    method : str
        ``"binary"``, ``"generic"`` (broadcast when the index fits, else
        shuffle), ``"generic_broadcast"`` or ``"generic_shuffle"`` (forced;
        a forced broadcast still falls back to shuffle where it cannot run,
        and says so).
    index_rows : float or None
        Rows of the bag's relations (None: unknown, taken to fit).
    integral : bool or None
        Every key of the bag is an integer (None: unknown, taken to be).
    environment : Environment
    """
    if method == "binary":
        return Strategy("binary", "")
    if method == "generic_shuffle":
        return Strategy("shuffle", "forced")
    forced = method == "generic_broadcast"
    refusal = _broadcast_refusal(index_rows, integral, environment, forced)
    if refusal:
        return Strategy("shuffle", f"forced broadcast {refusal}: shuffle instead" if forced else refusal, index_rows)
    size = "sizes unknown" if index_rows is None else f"index of {index_rows:.3g} rows"
    return Strategy("broadcast", "forced, " + size if forced else size, index_rows)


def _broadcast_refusal(
    rows: Optional[float], integral: Optional[bool], env: Environment, forced: bool
) -> Optional[str]:
    """Why the broadcast strategy cannot (or, unforced, should not) run; None if it can."""
    if integral is False:
        return "needs integer keys" if forced else "keys are not all integers"
    if rows is None:
        return None
    if env.connect and rows > env.connect_ship_max_rows:
        return f"index of {rows:.3g} rows exceeds the Spark Connect shipping limit {env.connect_ship_max_rows:.3g}"
    if rows > env.broadcast_hard_max_rows:
        return f"index of {rows:.3g} rows exceeds the broadcast limit {env.broadcast_hard_max_rows:.3g}"
    if not forced and rows > env.broadcast_max_rows:
        return f"index of {rows:.3g} rows exceeds the automatic broadcast limit {env.broadcast_max_rows:.3g}"
    return None


def task_aggregation(
    product: str, aggregate: Optional[str], keep: Sequence[str], variables: Sequence[str], enabled: bool = True
) -> tuple[bool, str]:
    """Whether a broadcast join ⊕-aggregates inside its tasks, and what it does (or why not).

    Parameters
    ----------
    product, aggregate : str or Semiring
        The query's semiring (⊗) and the step's aggregate (⊕); None: the
        step does not aggregate (a final product).
    keep : sequence of str
        The variables that survive the aggregation.
    variables : sequence of str
        The bag's variables.
    enabled : bool
        False lists every binding (to compare both paths).

    Examples
    --------
    >>> task_aggregation("counting", "counting", (), ("a", "b", "c"))[1]   # numba is a core dependency
    '⊕ of counting inside tasks onto (); compiled loop (numba)'
    >>> task_aggregation("counting", "counting", ("a",), ("a", "b", "c"))[1]
    '⊕ of counting inside tasks onto (a); numpy kernel: the tasks do not ⊕-aggregate to one value'
    >>> task_aggregation("counting", "counting", (), ("a", "b"), enabled=False)
    (False, 'every binding listed: task aggregation is off')
    """
    from faq.joins.compiled import compiled_form
    from faq.semirings.numpy_backend import numpy_ops
    from faq.semirings import get_semiring

    if aggregate is None:
        return False, ""
    if not enabled:
        return False, "every binding listed: task aggregation is off"
    if not set(keep) <= set(variables) or len(set(keep)) != len(keep):
        return False, f"every binding listed: kept variables {list(keep)} are not distinct join variables"
    times = get_semiring(product)
    plus = times if aggregate in (times, times.name) else get_semiring(aggregate)  # the query's own ⊕ need not be registered
    if numpy_ops(times, plus) is None:
        return False, (
            f"every binding listed: no numpy ⊗/⊕ for {times.name}/{plus.name} "
            "(a user-defined operation needs numpy_add=/numpy_mul=)"
        )
    ops = numpy_ops(times, plus)
    compiled, why = compiled_form(ops, keep)
    how = "compiled loop (numba)" if compiled else f"numpy kernel: {why}"
    return True, f"⊕ of {plus.name} inside tasks onto ({', '.join(keep)}); {how}"


def shared_indexes(keys: Sequence[Optional[Any]]) -> tuple[tuple[int, ...], ...]:
    """Group uses whose data and column order are the same (equal, non-None ``keys``).

    Examples
    --------
    >>> shared_indexes([("edge", (0, 1)), ("edge", (0, 1)), ("edge", (1, 0)), None])
    ((0, 1), (2,), (3,))
    """
    groups: dict[Any, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(("use", i) if key is None else key, []).append(i)
    return tuple(tuple(g) for g in sorted(groups.values()))


def _finite(value: Optional[float]) -> Optional[float]:
    return value if value is None or math.isfinite(value) else None


def integral_bag(variables: Sequence[str], types: Mapping[str, str]) -> Optional[bool]:
    """True when every variable's type is an integer type, None when a type is unknown.

    >>> integral_bag(["a", "b"], {"a": "bigint", "b": "int"}), integral_bag(["a"], {"a": "string"})
    (True, False)
    """
    if any(v not in types for v in variables):
        return None
    return all(types[v] in INTEGRAL_TYPES for v in variables)


# Spark SQL type names of integer key columns (the broadcast index encodes them as int64).
INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
