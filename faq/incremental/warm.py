"""Compile the delta rules' numba loop into numba's on-disk cache, once, at setup.

The loop of :mod:`faq.incremental.delta_loop` has one signature per value
type: int64 (counting, the integer ring) and float64 (the real ring, the
tropical and bottleneck semirings); every other argument has one type (the
arrays come as address tables, not as tuples whose lengths would each be a
signature).  Compiling one takes about 20 s on two cores, which a
maintained query's first batch would otherwise pay; ``make venv`` runs
``python -m faq.incremental.warm`` after :mod:`faq.joins.warm`, and the
cache lives where that module says (``__pycache__`` beside the loop, or
``$NUMBA_CACHE_DIR``).

Examples
--------
>>> warm_up()                                     # loads from the cache when make venv warmed it
['float64', 'int64']
"""

from __future__ import annotations

import sys
import time
from typing import Optional, Sequence

import numpy as np

__all__ = ["warm_up", "main"]


def warm_up() -> list[str]:
    """Run a triangle's delta rules compiled in each value type; the compiled value types, sorted.

    Each is checked against the numpy join of the same rules (a broken cache
    entry shows here, not in a maintained query).  Empty without numba.
    """
    from faq.incremental.engine import run_rules
    from faq.incremental.index import KeyedRows, ResidentRelation, merge_rows
    from faq.incremental.rule_kernel import rule_kernels
    from faq.incremental.rules import DeltaQuery, Term, plan_rules, views_needed
    from faq.joins.compiled import AVAILABLE
    from faq.semirings import get_semiring
    from faq.semirings.numpy_backend import numpy_ops

    if not AVAILABLE:
        return []
    triangle = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("b", "c")), Term("edge", ("a", "c"))), ())
    rules = plan_rules(triangle)
    for name in ("integer", "real"):
        ops = numpy_ops(get_semiring(name))
        kernels = rule_kernels(rules, ops)
        assert all(k.compiled for k in kernels), kernels
        edge = ResidentRelation.build("edge", ("src", "dst"),
                                      KeyedRows((np.array([0, 1]), np.array([1, 2])), ops.ones(2)), ops)
        for view in views_needed(rules)["edge"]:
            edge.register(view)
        batch = merge_rows([np.array([0]), np.array([2])], ops.ones(1), ops)  # closes the triangle 0 -> 1 -> 2
        compiled = run_rules(rules, {"edge": edge}, {"edge": batch}, ops, 3, kernels=kernels)[1]
        expected = run_rules(rules, {"edge": edge}, {"edge": batch}, ops, 3)[1]
        assert compiled.tolist() == expected.tolist() == [1], (name, compiled, expected)
        _warm_small_runs(ops)
    from faq.incremental.delta_loop import aggregate_rules

    # A batch's rules run in one call (aggregate_rules); a value type shows as its seed values' (3rd argument).
    return sorted(str(signature[2].dtype) for signature in aggregate_rules.signatures)


def _warm_small_runs(ops: "object") -> None:
    """The compiled merge of a batch into a recent level, the compiled two-column trie and the merge of a
    batch into a level's tries (:func:`faq.incremental.rows.combined`, :func:`~faq.incremental.rows.build_run`,
    :func:`faq.incremental.level_merge.merged_level`), in ``ops``' value type, each checked."""
    from faq.incremental.level_merge import merged_level
    from faq.incremental.rows import View, build_run, combined, merge_rows

    recent = merge_rows([np.array([0, 1, 2]), np.array([1, 2, 0])], ops.ones(3), ops)
    batch = merge_rows([np.array([0, 3]), np.array([1, 0])], ops.ones(2), ops)
    merged = combined(recent, batch, ops)
    assert [k.tolist() for k in merged.keys] == [[0, 1, 2, 3], [1, 2, 0, 0]], merged
    assert merged.values_or_ones(ops).tolist() == [2, 1, 1, 1], merged
    trie = build_run(merged, View((1, 0)), ops)  # by dst, then src
    assert trie.levels[0].comp.tolist() == [0, 1, 2], trie  # the dst values, in order
    # The batch merged into each view's trie of the level (faq.incremental.level_merge): the same rows.
    tries, rows = merged_level(recent, {}, batch, [View((0, 1)), View((1, 0))], ops)
    assert [k.tolist() for k in rows.keys] == [k.tolist() for k in merged.keys], rows
    assert tries[View((1, 0))].levels[0].comp.tolist() == [0, 1, 2], tries


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m faq.incremental.warm``: warm the cache and say what it took; exit status 0 even on a
    failure (the first maintained query compiles then)."""
    started = time.perf_counter()
    try:
        signatures = warm_up()
    except Exception as error:  # noqa: BLE001 - setup goes on; the first batch compiles instead
        print(f"faq: could not compile the delta rules' numba loop ahead of use ({type(error).__name__}: "
              f"{error}); the first maintained batch compiles it", file=sys.stderr)
        return 0
    if not signatures:
        print("faq: numba is not installed; delta rules run in numpy, nothing to compile")
        return 0
    from faq.incremental.delta_loop import aggregate_rules

    stats = aggregate_rules.stats
    print(f"faq: delta-rule loop ready for {', '.join(signatures)} values in {stats.cache_path} "
          f"({sum(stats.cache_misses.values())} compiled, {sum(stats.cache_hits.values())} loaded; "
          f"{time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
