"""Whether a generic join's tasks ⊕-aggregate the product, in which kernel, and why not.

When the caller ⊕-aggregates the product right after the join (an
:class:`~faq.joins.frame.Aggregation`), the broadcast tasks and the
partitioned cells may multiply and ⊕-combine in numpy themselves
(:mod:`faq.joins.partial`) and emit partial aggregates instead of every
binding.  That is decided twice, each time from what is known then:

* :func:`task_aggregation`, without data: the semirings have numpy forms,
  the kept variables are join variables; and whether the compiled loop
  (:mod:`faq.joins.compiled`) can run the tasks.  The planner decides with it
  (:mod:`faq.insideout.planner` imports it from here: the plan may import the
  joins, never the reverse), and :func:`faq.joins.generic.generic_join` when
  its caller left the decision to it.
* :func:`kernel_values`, from the values (their minimum and maximum suffice):
  which relations' values are gathered, and whether int64 partial sums have a
  bound (:func:`~faq.joins.partial.integer_bound`); without one every binding
  is listed.

A layer of the generic join (the map is in :mod:`faq.joins.generic`), beneath
the kernel builders (:mod:`faq.joins.kernel`, :mod:`faq.joins.executor_index`);
nothing here imports Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional, Sequence

import numpy as np

if TYPE_CHECKING:
    from faq.joins.frame import Aggregation
    from faq.semirings import Semiring
    from faq.semirings.numpy_backend import NumpyForm

__all__ = ["TaskAggregation", "task_aggregation", "kernel_values"]


class TaskAggregation(NamedTuple):
    """What a broadcast or partitioned join's tasks do with the product (:func:`task_aggregation`).

    Attributes
    ----------
    in_tasks : bool
        The tasks multiply and ⊕-combine (else they list every binding).
    note : str
        What they do, or why they list, in words (shown by ``explain``).
    compiled : bool
        The compiled loop (:mod:`faq.joins.compiled_loop`) runs them.
    """

    in_tasks: bool
    note: str
    compiled: bool = False

    @property
    def bytes_per_row(self) -> float:
        """The index's estimated bytes per row in this kernel: the compiled loop builds no hash tables."""
        from faq.hypergraph.shares import BYTES_PER_INDEX_ROW, COMPILED_BYTES_PER_INDEX_ROW

        return COMPILED_BYTES_PER_INDEX_ROW if self.compiled else BYTES_PER_INDEX_ROW


def task_aggregation(
    product: str, aggregate: Optional[str], keep: Sequence[str], variables: Sequence[str], enabled: bool = True
) -> TaskAggregation:
    """Whether a broadcast join ⊕-aggregates inside its tasks, in which kernel, and what it does (or why not).

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
    >>> counted = task_aggregation("counting", "counting", (), ("a", "b", "c"))  # numba is a core dependency
    >>> counted.note, counted.compiled, counted.bytes_per_row
    ('⊕ of counting inside tasks onto (); compiled loop (numba)', True, 32)
    >>> by_a = task_aggregation("counting", "counting", ("a",), ("a", "b", "c"))
    >>> by_a.note, by_a.bytes_per_row
    ('⊕ of counting inside tasks onto (a); numpy kernel: the tasks do not ⊕-aggregate to one value', 64)
    >>> task_aggregation("counting", "counting", (), ("a", "b"), enabled=False)
    TaskAggregation(in_tasks=False, note='every binding listed: task aggregation is off', compiled=False)
    """
    # Imported here: the planner imports this module, and planning stays free of numba's lookup
    # and the numpy forms until a step aggregates.
    from faq.joins.compiled import compiled_form
    from faq.semirings import get_semiring
    from faq.semirings.numpy_backend import numpy_ops

    if aggregate is None:
        return TaskAggregation(False, "")
    if not enabled:
        return TaskAggregation(False, "every binding listed: task aggregation is off")
    if not set(keep) <= set(variables) or len(set(keep)) != len(keep):
        return TaskAggregation(
            False, f"every binding listed: kept variables {list(keep)} are not distinct join variables")
    times = get_semiring(product)
    plus = times if aggregate in (times, times.name) else get_semiring(aggregate)  # the query's own ⊕ need not be registered
    ops = numpy_ops(times, plus)
    if ops is None:
        return TaskAggregation(False, (
            f"every binding listed: no numpy ⊗/⊕ for {times.name}/{plus.name} "
            "(a user-defined operation needs numpy_add=/numpy_mul=)"
        ))
    compiled, why = compiled_form(ops, keep)
    how = "compiled loop (numba)" if compiled else f"numpy kernel: {why}"
    return TaskAggregation(True, f"⊕ of {plus.name} inside tasks onto ({', '.join(keep)}); {how}", bool(compiled))


def kernel_values(
    values: Sequence[Optional[np.ndarray]],
    groups: Sequence[Sequence[int]],
    semiring: "Semiring",
    aggregate: Optional["Aggregation"],
    ops: Optional["NumpyForm"],
) -> tuple[list[bool], Optional["NumpyForm"], int, str]:
    """What the kernel does with values: (gathered per group, ops, bound, note).

    A group's values are gathered unless it has none or all are one (⊗ by
    one).  ``ops`` (⊕ inside the tasks) is kept when integer partial sums
    have a bound (:func:`~faq.joins.partial.integer_bound`), else None (every
    binding listed, ``note`` says why).  Only each array's minimum and
    maximum matter, so ``[min, max]`` arrays decide exactly as the full
    ones: the index built on the executors is planned from them
    (:mod:`faq.joins.executor_index`).

    >>> from faq.semirings import get_semiring
    >>> kept, ops, bound, note = kernel_values([np.array([1, 1]), np.array([2, 5])], [[0], [1, 2]],
    ...                                        get_semiring("counting"), None, None)
    >>> kept, ops, bound
    ([False, True], None, 1)
    """
    from faq.joins.partial import INT_LIMIT, integer_bound

    kept = [v is not None and not _all_one(v, semiring) for v in values]
    group_of = {i: n for n, g in enumerate(groups) for i in g}
    per_use = [values[group_of[i]] for i in sorted(group_of) if kept[group_of[i]]]
    note, bound = "", 1
    if ops is not None and ops.integral:
        found = integer_bound(ops, per_use)
        if found is None:
            ops, note = None, f"every binding listed: no int64 overflow bound for the ⊗/⊕ of {ops.name}"
        elif found > INT_LIMIT // 2:
            ops, note = None, f"every binding listed: values up to {found} could overflow int64 partial sums"
        else:
            bound = found
    if ops is not None:
        note = f"⊕ of {ops.name.split('/')[1]} inside tasks onto ({', '.join(aggregate.keep)})"
    return kept, ops, bound, note


def _all_one(values: np.ndarray, semiring: "Semiring") -> bool:
    one = semiring.python_value(semiring.one)
    return bool(len(values) == 0 or np.all(values == one))
