"""An independent brute-force FAQ evaluator for the tests.

It shares nothing with the library but the query value: semiring operations
are plain Python here, and it enumerates every assignment of every variable.
:func:`same_value` and :func:`assert_same_answer` compare an answer with it.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable, Mapping, Sequence

INF = math.inf

# name -> (add, mul, zero, one), in plain Python.
PY_SEMIRINGS: dict[str, tuple[Callable, Callable, object, object]] = {
    "counting": (lambda a, b: a + b, lambda a, b: a * b, 0, 1),
    "integer": (lambda a, b: a + b, lambda a, b: a * b, 0, 1),
    "real": (lambda a, b: a + b, lambda a, b: a * b, 0.0, 1.0),
    "boolean": (lambda a, b: a or b, lambda a, b: a and b, False, True),
    "min_plus": (min, lambda a, b: a + b, INF, 0.0),
    "max_plus": (max, lambda a, b: a + b, -INF, 0.0),
    "max_product": (max, lambda a, b: a * b, 0.0, 1.0),
    "max_min": (max, min, -INF, INF),
    "min_max": (min, max, INF, -INF),
}


def brute_force(
    atoms: Sequence[tuple[str, Sequence[str]]],
    data: Mapping[str, Sequence[tuple]],
    free: Sequence[str],
    semiring: str,
    domain: Sequence,
    aggregates: Sequence[tuple[str, str]] = (),
) -> dict[tuple, object]:
    """Evaluate the FAQ by enumeration; return {free assignment: value}, zeros left out.

    ``data[name]`` holds rows ``(*key, value)``; repeated keys are ⊕-merged
    (a factor's value at a key is the ⊕ of its rows there).  ``aggregates``
    lists (variable, semiring) outermost first; other bound variables use
    ``semiring`` and are innermost.
    """
    add, mul, zero, one = PY_SEMIRINGS[semiring]
    tables: dict[str, dict[tuple, object]] = {}
    for name, rows in data.items():
        table: dict[tuple, object] = {}
        for *key, value in rows:
            key = tuple(key)
            table[key] = add(table[key], value) if key in table else value
        tables[name] = table

    variables = list(dict.fromkeys(v for _, vs in atoms for v in vs))
    listed = [v for v, _ in aggregates]
    bound_order = listed + [v for v in variables if v not in free and v not in listed]
    agg_of = dict(aggregates)

    def product(assignment: Mapping[str, object]) -> object:
        value = one
        for name, vs in atoms:
            value = mul(value, tables[name].get(tuple(assignment[v] for v in vs), zero))
        return value

    def aggregate(assignment: dict, remaining: list[str]) -> object:
        if not remaining:
            return product(assignment)
        v, rest = remaining[0], remaining[1:]
        add_v = PY_SEMIRINGS[agg_of.get(v, semiring)][0]
        total = PY_SEMIRINGS[agg_of.get(v, semiring)][2]
        for x in domain:
            assignment[v] = x
            total = add_v(total, aggregate(assignment, rest))
        del assignment[v]
        return total

    out: dict[tuple, object] = {}
    for values in itertools.product(domain, repeat=len(free)):
        assignment = dict(zip(free, values))
        value = aggregate(assignment, bound_order)
        if value != zero:
            out[tuple(values)] = value
    return out


def same_value(a, b, rel: float = 1e-9) -> bool:
    """Equal, or within ``rel`` for floats (infinities must match exactly)."""
    if isinstance(a, float) or isinstance(b, float):
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
    return a == b


def assert_same_answer(got: Mapping[tuple, object], expected: Mapping[tuple, object], *context) -> None:
    """``got`` has ``expected``'s keys and, key by key, the same value (:func:`same_value`).

    ``context`` leads the assertion messages (the query, the join, ...).
    """
    assert set(got) == set(expected), (*context, got, expected)
    for key, value in expected.items():
        assert same_value(got[key], value), (*context, key, got[key], value)
