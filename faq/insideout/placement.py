"""Where a step runs, and which kernel an in-process step uses: the placement half of the physical plan.

Every step, whatever its strategy (:mod:`faq.insideout.physical`), also has a
placement (:func:`step_placement`, the one policy of :mod:`faq.placement_policy`): in-process on the driver (no Spark job;
the strategy's kernel run there, :mod:`faq.joins.local`) when its inputs are
held on the driver or small, and its estimated footprint
(:func:`step_footprint`) fits the driver's in-process memory; else on the
executors.  An in-process generic join then runs the compiled loop, the numpy
kernel (:func:`in_process_kernel`: when loading the loop would cost more than
the work) or, for a triangle summed with + and ×, masked sparse products
(:func:`in_process_triangle_kernel`), dense-row sums for large inputs
(:func:`in_process_dense_rows`), and where its three atoms read one factor
(:func:`one_factor`), that relation's triangles oriented by degree first
(:data:`ORIENTED_COUNT`).  Pure functions of the
:class:`~faq.insideout.physical.Environment`: the planner calls them, the
executor carries out what they chose.  An in-process step that runs merges
(a binary step, or a generic one whose keys are not integers) has its kernel
chosen too (:func:`merge_kernel`): a sparse matrix product, sort-merge or
pandas merges.  :func:`place_steps` is the planner's pass that applies them
to its steps, in order.

>>> from faq.insideout.physical import Environment
>>> in_process_kernel(5e7, Environment())       # enough work to pay for loading the compiled loop
(False, '')
"""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from faq.insideout.physical import (
    LOCAL_BYTES_PER_ROW,
    Environment,
    Strategy,
    integral_bag,
)
from faq.settings import LOCAL_MEMORY_CONF, PLACEMENT_CONF
from faq.joins.merges import binary_kernel, without_private
from faq.placement_policy import BYTES_PER_COLUMN, Input, choose

if TYPE_CHECKING:
    from faq.insideout.plans import Step

__all__ = ["Input", "SMALL_KERNEL_WORK", "COMPILED_LOAD_SECONDS", "SPARSE_KERNEL_WORK", "in_process_kernel",
           "stand_in_ran", "compiled_worth_loading",
           "in_process_dense_rows", "ORIENTED_COUNT", "ORIENTED_IN_TASKS", "one_factor",
           "triangle_bag", "in_process_triangle_kernel", "merge_kernel", "step_placement", "step_footprint", "row_bytes",
           "structured_carrier", "place_steps", "array_cells"]


#: Estimated work (Σ of the smallest proposals per attribute, :class:`~faq.hypergraph.statistics.WorkEstimate`)
#: below which an in-process generic join runs the numpy kernel when the compiled loop is not loaded yet.
#: Measured (``python -m bench.bench_fresh``): loading numba and the cached loop takes 0.5-0.8 s in a new
#: process, while the numpy kernel runs about 5e6 proposals a second: email-Eu-core (6.7e5) counts in
#: 0.1 s against 0.9 s, wiki-Vote (1.9e6) in 0.3 s against 0.7 s, R-MAT 14 (5e6) about even.
SMALL_KERNEL_WORK = 3e6
COMPILED_LOAD_SECONDS = 0.6  # what the note says loading costs (see SMALL_KERNEL_WORK)


#: Set once an in-process join of this process ran a kernel in the compiled loop's place for at least the
#: loop's load cost (:func:`stand_in_ran`): a per-process fact, as whether the loop's module is imported.
_STAND_IN_PAID = threading.Event()


def stand_in_ran(seconds: float, strategy: Any) -> bool:
    """After an in-process step: whether it ran a kernel in the compiled loop's place (the numpy kernel,
    masked sparse products) for at least what loading the loop costs (:data:`COMPILED_LOAD_SECONDS`);
    if so, the joins this process plans from now on take the loop (:func:`compiled_worth_loading`).

    The rules above choose for one join in a new process.  A process that joins again (a notebook, a
    service) would pay the stand-in's price every time: R-MAT 16's undirected triangles took 0.96 s a count
    as sparse products and 0.47 s with the loop loaded (``python -m bench.bench_peers``).  Once one join
    has spent the load's cost, loading is at most that cost again and every later join gets the loop (the
    rent-or-buy rule: never more than about twice the best choice in hindsight).  Nothing is loaded here:
    a command that ends after its one join pays nothing more; the next join loads the loop where it runs.

    >>> from faq.joins.strategy import NamedStrategy
    >>> stand_in_ran(0.1, NamedStrategy("broadcast", sparse_kernel=True))       # cheaper than the load
    False
    >>> stand_in_ran(5.0, NamedStrategy("broadcast"))                           # the loop itself ran
    False
    """
    from faq.compiled import COMPILED

    if not COMPILED or seconds < COMPILED_LOAD_SECONDS:
        return False
    if not (strategy.numpy_kernel or strategy.sparse_kernel):
        return False
    _STAND_IN_PAID.set()
    return True


def compiled_worth_loading() -> bool:
    """Whether the compiled loop is loaded in this process, or a stand-in has already cost as much as
    loading it (:func:`stand_in_ran`): :class:`~faq.insideout.physical.Environment` ``compiled_loaded``."""
    import sys

    return "faq.joins.compiled_loop" in sys.modules or _STAND_IN_PAID.is_set()


def in_process_kernel(work: Optional[float], environment: Environment) -> tuple[bool, str]:
    """Whether an in-process step that may run the compiled loop runs the numpy kernel instead, and why.

    The compiled loop is much faster per proposal, but a process pays to load
    it once; a small join is done before that (:data:`SMALL_KERNEL_WORK`).
    Steps on the executors keep the compiled loop: their workers load it once
    and serve many tasks.

    Examples
    --------
    >>> in_process_kernel(6.7e5, Environment())
    (True, 'numpy kernel: est. work 6.7e+05 below 3e+06, less than loading the compiled loop (~0.6 s)')
    >>> in_process_kernel(5e7, Environment())
    (False, '')
    >>> in_process_kernel(6.7e5, Environment(compiled_loaded=True))   # a warm process has it loaded
    (False, '')
    >>> in_process_kernel(None, Environment())                          # no estimate: keep the loop
    (False, '')
    """
    if environment.compiled_loaded or work is None or not math.isfinite(work) or work >= SMALL_KERNEL_WORK:
        return False, ""
    return True, (f"numpy kernel: est. work {work:.2g} below {SMALL_KERNEL_WORK:.0e}, less than loading the "
                  f"compiled loop (~{COMPILED_LOAD_SECONDS:g} s)")


#: Estimated work below which an in-process triangle-shaped bag (:func:`triangle_bag`) summed with + and ×
#: runs as masked sparse products (:mod:`faq.joins.sparse_triangle`) when the compiled loop is not loaded
#: yet, from :data:`SMALL_KERNEL_WORK` up (below it the numpy kernel runs).  Measured
#: (``python -m bench.bench_fresh``, 2 busy cores): R-MAT 14 (est. 5e6) counts in 0.3-0.4 s against
#: 0.7-0.9 s for loading and running the loop in a new process; at R-MAT 17 (5e7) the products take
#: 6.6 s against 5 s for the loaded loop on two threads, so the loop keeps the larger sizes.
SPARSE_KERNEL_WORK = 2e7


def triangle_bag(uses: Sequence[Sequence[str]], indicators: int, keep: Sequence[str]) -> bool:
    """Whether a bag is three relations over the three pairs of three variables, all summed away.

    ``uses`` are the relations' variables, ``indicators`` how many
    semi-joins the step has, ``keep`` its output variables.

    Examples
    --------
    >>> triangle_bag([("a", "b"), ("a", "c"), ("b", "c")], 0, ())
    True
    >>> triangle_bag([("a", "b"), ("b", "a"), ("b", "c")], 0, ())   # two uses of one pair
    False
    >>> triangle_bag([("a", "b"), ("a", "c"), ("b", "c")], 0, ("a",))
    False
    """
    pairs = {frozenset(u) for u in uses if len(u) == 2 and u[0] != u[1]}
    return (len(uses) == 3 and len(pairs) == 3 and indicators == 0 and not keep
            and len(frozenset().union(*pairs)) == 3)


def in_process_triangle_kernel(work: Optional[float], environment: Environment,
                               input_rows: float = 0.0) -> tuple[bool, str]:
    """Whether an in-process triangle-shaped bag that may run the compiled loop runs masked sparse products
    instead, and why (:data:`SPARSE_KERNEL_WORK`; the caller checks the shape, :func:`triangle_bag`, and
    that ⊗ and ⊕ are × and +).

    The products' cost follows the inputs' rows, not the generic join's work: a bag whose inputs hold
    more rows than :data:`SPARSE_KERNEL_WORK` keeps the loop (a 4-cycle's second step over 5e7 2-paths,
    est. work 1e7, took 13-32 s as products, their masks that large).

    Examples
    --------
    >>> in_process_triangle_kernel(5e6, Environment())[1]
    'masked sparse products (scipy): est. work 5e+06 below 2e+07, less than loading the compiled loop (~0.6 s)'
    >>> in_process_triangle_kernel(5e7, Environment())
    (False, '')
    >>> in_process_triangle_kernel(5e6, Environment(compiled_loaded=True))   # a warm process has the loop
    (False, '')
    >>> in_process_triangle_kernel(1e6, Environment())                        # the numpy kernel's size
    (False, '')
    >>> in_process_triangle_kernel(1e7, Environment(), input_rows=5e7)          # inputs larger than the work
    (False, '')
    """
    if (environment.compiled_loaded or work is None or not math.isfinite(work)
            or not SMALL_KERNEL_WORK <= work < SPARSE_KERNEL_WORK or input_rows > SPARSE_KERNEL_WORK):
        return False, ""
    return True, (f"masked sparse products (scipy): est. work {work:.2g} below {SPARSE_KERNEL_WORK:.0e}, less "
                  f"than loading the compiled loop (~{COMPILED_LOAD_SECONDS:g} s)")


#: What a plan's note says of :mod:`faq.joins.oriented_triangle`, chosen for an in-process triangle the loop would run.
ORIENTED_COUNT = ("one relation's triangles oriented by degree (compiled) where the atoms read one set of pairs "
                  "without loops")


def in_process_dense_rows(input_rows: float, one_relation: bool = False) -> tuple[bool, str]:
    """Whether an in-process triangle-shaped bag summed with + and × runs the triangle kernels -- the count
    over one relation's triangles oriented by degree (:mod:`faq.joins.oriented_triangle`: a graph's
    triangles, any direction), else dense-row sums (:mod:`faq.joins.dense_rows`) -- rather than the
    compiled loop, and the rule it runs by.

    Inputs of more than :data:`SPARSE_KERNEL_WORK` rows: the loop would first sort them into an index
    (a 4-cycle's second step in pieces: 3-9 s a piece at R-MAT 16), where the sums read them once,
    if their wedges are few -- counted from the inputs' degrees when the step runs (a fact of the data
    the plan does not have: an intermediate's degrees), the loop running where they are not.

    Examples
    --------
    >>> in_process_dense_rows(3.1e7)[1]
    'dense-row sums (compiled) where their wedges are at most 64 a row of the inputs (est. 3.1e+07 rows), checked when the step runs; else the compiled loop (numba)'
    >>> in_process_dense_rows(3.1e7, one_relation=True)[1]  # doctest: +NORMALIZE_WHITESPACE
    "one relation's triangles oriented by degree (compiled) where the atoms read one set of pairs without loops,
    else dense-row sums (compiled) where their wedges are at most 64 a row of the inputs (est. 3.1e+07 rows),
    both checked when the step runs; else the compiled loop (numba)"
    >>> in_process_dense_rows(1e6)
    (False, '')
    """
    from faq.joins.dense_rows import WEDGES_PER_ROW

    if not (math.isfinite(input_rows) and input_rows > SPARSE_KERNEL_WORK):
        return False, ""
    dense = (f"dense-row sums (compiled) where their wedges are at most {WEDGES_PER_ROW:g} a row of the inputs "
             f"(est. {input_rows:.2g} rows)")
    if not one_relation:
        return True, f"{dense}, checked when the step runs; else the compiled loop (numba)"
    return True, f"{ORIENTED_COUNT}, else {dense}, both checked when the step runs; else the compiled loop (numba)"


def merge_kernel(
    strategy: Strategy,
    relations: Sequence[Sequence[str]],
    indicators: Sequence[Sequence[str]],
    keep: Sequence[str],
    rows: Sequence[float],
    integral: Optional[bool],
    arrays: bool,
    form: Any,
    aggregates: bool,
) -> Strategy:
    """``strategy`` of a step placed on the driver, naming the merges it runs there
    (:attr:`~faq.insideout.physical.Strategy.binary_kernel`; unchanged when it runs the generic join's kernel).

    A binary step runs merges, and so does a generic one whose keys are not
    integers (``integral`` False; None: unknown, taken to be integers, as the
    strategy took them).  The kernel is :func:`faq.joins.merges.binary_kernel`'s,
    from facts known before running: the ``relations``' and ``indicators``'
    variables (the relations' without the private variables an aggregating
    binary step sums out first, when ``form``'s values are not integers, as
    :mod:`faq.joins.local` does), ``keep`` (the step's output), the estimated
    ``rows`` of every relation and indicator, the key types, whether the
    values are an array ring's (``arrays``), and ``form`` (the step's
    :class:`~faq.semirings.numpy_backend.NumpyForm`: a sparse product needs
    × and + over int64 or float64).  ``aggregates``: the step ⊕-aggregates.

    One fact is the data's: whether a sparse product's int64 sums stay
    below 2^62 (and key dtypes where the types are unknown).  Where the
    chosen kernel cannot run, :func:`faq.joins.local.join_local` runs another
    and its note says so ("plan said ...; ran ... because ...").

    Examples
    --------
    >>> from faq.semirings import COUNTING, REAL
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> chain = [("i", "j"), ("j", "k")]
    >>> s = merge_kernel(Strategy("binary", ""), chain, [], ("i", "k"), [100, 100], True, False, numpy_ops(REAL), True)
    >>> s.binary_kernel, s.describe()
    ('sparse-product', 'in-process binary join (sparse product, scipy): (i, j)·(j, k) ⊕-summed over j with + and ×, integer keys')
    >>> merge_kernel(Strategy("binary", ""), chain, [], ("i",), [100, 100], True, False, numpy_ops(COUNTING),
    ...              True).binary_kernel
    'sort-merge'
    >>> merge_kernel(Strategy("shuffle", "keys are not all integers"), chain, [], (), [10, 10], False, False,
    ...              numpy_ops(COUNTING), True).binary_kernel
    'pandas-merge'
    >>> merge_kernel(Strategy("broadcast", ""), chain, [], (), [10, 10], True, False, numpy_ops(COUNTING),
    ...              True).binary_kernel is None
    True
    """
    if strategy.name != "binary" and integral is not False:
        return strategy  # the generic join's kernel runs (strategy.numpy_kernel / sparse_kernel say which)
    sums_products = form is not None and form.sums_products
    if strategy.name == "binary" and aggregates and form is not None and not form.integral:
        relations = without_private(relations, indicators, keep)
    kernel, why = binary_kernel(relations, indicators, keep, rows, integral, arrays, sums_products)
    return replace(strategy, binary_kernel=kernel, binary_reason=why)


def step_placement(
    inputs: Sequence[Input], footprint: Optional[float], in_numpy: str, environment: Environment
) -> tuple[str, str]:
    """Where a step runs, ``("driver", why)`` or ``("executors", why)``: the one policy
    (:func:`faq.placement_policy.choose`) with the session's facts (:class:`Environment`).

    ``in_numpy`` is "" when the step's work has a numpy form, else why not;
    ``footprint`` its estimated bytes (:func:`step_footprint`).

    Examples
    --------
    >>> env = Environment(placement="auto", local_memory=1 << 30, fetch_memory=24_000)
    >>> step_placement([Input(50, False), Input(80, False)], 8e3, "", env)
    ('driver', 'inputs of 130 rows, est. 7.81 KiB within the in-process memory 1 GiB')
    >>> step_placement([Input(2e8, True)], 1.3e10, "", env)[1]
    'est. 12.1 GiB exceeds the in-process memory 1 GiB (spark.faq.localMemory)'
    >>> step_placement([Input(5, False)], 1e3, "no numpy ⊗/⊕ for log/log", env)
    ('executors', 'no numpy ⊗/⊕ for log/log')
    >>> step_placement([Input(5, False)], None, "", Environment(placement="executors"))
    ('executors', 'spark.faq.placement=executors')
    >>> step_placement([Input(5, False)], 1e3, "", Environment())    # no session's facts: as before
    ('executors', '')
    """
    env = environment
    return tuple(choose(env.placement, footprint, env.local_memory, inputs=inputs, fetch_budget=env.fetch_memory,
                        local_rows=env.local_rows, no_numpy=in_numpy if env.placement else "",
                        budget_setting=LOCAL_MEMORY_CONF, requested_by=f"{PLACEMENT_CONF}={env.placement}"))


def step_footprint(
    strategy: "Strategy", input_rows: float, product_rows: Optional[float], aggregated_in_kernel: bool,
    width: int = 1,
) -> Optional[float]:
    """Estimated bytes an in-process step holds at once (None: unknown).

    A generic join with integer keys holds its index
    (:attr:`Strategy.index_bytes`) and, unless its kernel ⊕-aggregates, the
    listed product; merges hold their inputs and the product
    (``product_rows``, a bound), :func:`row_bytes` a row -- more for an array
    ring's values of ``width`` doubles (a regression's cofactor ring: 45).

    >>> step_footprint(Strategy("binary", ""), 100, 1000, False)
    70400
    >>> step_footprint(Strategy("binary", ""), 100, 1000, False, width=45)   # 45 doubles a value
    844800
    >>> step_footprint(Strategy("broadcast", "", 300, index_bytes=9600), 300, 1e9, True)
    9600
    """
    per_row = row_bytes(width)
    if strategy.name in ("broadcast", "partitioned") and strategy.index_bytes is not None:
        listed = 0 if aggregated_in_kernel else product_rows
        return None if listed is None else strategy.index_bytes + listed * per_row
    if product_rows is None or not math.isfinite(input_rows):
        return None
    return (input_rows + product_rows) * per_row


def row_bytes(width: int) -> int:
    """Bytes a row of an in-process step takes at most: :data:`LOCAL_BYTES_PER_ROW` for a scalar value,
    and for an array value its ``width - 1`` further doubles twice (held, and the ⊗'s working copy).

    The placement once counted 64 bytes a row whatever the value, so a regression's ring join (45
    doubles a row) was admitted to the driver at a sixth of its size: the scale-factor-1 TPC-H
    regression grew the driver past 21 GB.

    >>> row_bytes(1), row_bytes(45)
    (64, 768)
    """
    return LOCAL_BYTES_PER_ROW + 2 * BYTES_PER_COLUMN * (max(1, width) - 1)


# --- the planner's placement pass -----------------------------------------------------------

def structured_carrier(product: Any) -> str:
    """The carrier of ``product`` (a semiring or its name) when its values are arrays, else ""."""
    from faq.semirings import get_semiring

    ring = get_semiring(product)
    return ring.carrier if getattr(ring, "structured", False) else ""


def place_steps(steps: Sequence["Step"], bounds: Mapping[str, float], *, held: set[str],
                variables: Mapping[str, tuple[str, ...]], product: Any, forced_spark: str,
                types: Mapping[str, str], environment: Environment) -> list["Step"]:
    """The planner's steps with where each runs (:func:`step_placement`), in order.

    A step's output is held on the driver when the step ran there.  ``held``
    are the ids of the inputs the driver holds, ``variables`` each input's
    variables, ``forced_spark`` the Spark join method the query forced (or
    "": ``"binary"`` keeps an array ring's steps on the executors in Spark's
    binary joins rather than :func:`array_cells`).  An in-process generic step gets its kernel
    (:func:`in_process_kernel`,
    :func:`in_process_triangle_kernel`); one that runs merges gets theirs
    (:func:`merge_kernel`).  One fact of the data is not known here, whether
    a sparse product's int64 sums stay below 2^62: where not, other merges run
    and the note says so.
    """
    from faq.semirings import get_semiring
    from faq.semirings.numpy_backend import numpy_ops

    held, variables = set(held), dict(variables)
    times = get_semiring(product)
    arrays = bool(structured_carrier(times))
    placed = []
    for step in steps:
        plus = times if step.aggregate in (None, times.name) else get_semiring(step.aggregate)
        form = numpy_ops(times, plus, arrays=True) if arrays else numpy_ops(times, plus)
        in_numpy = "" if form is not None else (
            f"no numpy ⊗/⊕ for {times.name}/{plus.name} (a user-defined operation needs numpy_add=/numpy_mul=)")
        if forced_spark and step.join_method != "binary":
            in_numpy = f"join method {forced_spark} forced (a Spark strategy)"
        uses = [(r, bounds.get(r, math.inf)) for r in step.inputs] + [
            (i.relation, bounds.get(i.relation, math.inf)) for i in step.indicators]
        # a fetch moves the keys and the value's numbers (an array ring's value is `width` doubles)
        inputs = [Input(rows, r in held, len(variables.get(r, ())) + times.width) for r, rows in uses]
        input_rows = sum(rows for _, rows in uses)
        kernel_aggregates = step.strategy.aggregate_in_tasks and step.strategy.name in ("broadcast", "partitioned")
        held_rows = step.product_rows
        if held_rows is not None and _sparse_product_step(step, variables, [rows for _, rows in uses], types, form,
                                                          arrays):
            held_rows = min(held_rows, bounds.get(step.output.id, math.inf))
        footprint = step_footprint(step.strategy, input_rows, held_rows, kernel_aggregates, times.width)
        where, why = step_placement(inputs, footprint, in_numpy, environment)
        if where == "driver":
            held.add(step.output.id)
            triangle = _summed_triangle(step, variables, form, arrays)
            step = _kernel_in_process(step, environment, triangle, input_rows, triangle and one_factor(step.inputs))
            step = replace(step, strategy=merge_kernel(  # the merges it runs, if it runs merges
                step.strategy, [variables.get(r, ()) for r in step.inputs], [i.variables for i in step.indicators],
                step.output.variables, [rows for _, rows in uses], integral_bag(step.bag, types),
                arrays, form, bool(step.eliminated)))
        elif arrays and form is not None and not forced_spark and step.strategy.name == "binary" and step.bag \
                and integral_bag(step.bag, types) is not False:
            step = replace(step, strategy=array_cells(
                step, [variables.get(r, ()) for r in step.inputs], [rows for _, rows in uses], times.width,
                arrays, form, environment))
        else:
            step, why = _spared_indicators(step, why)
            if kernel_aggregates and _summed_triangle(step, variables, form, arrays):
                step = _oriented_in_tasks(step, one_factor(step.inputs))
        variables[step.output.id] = step.output.variables
        placed.append(replace(step, placement=where, placement_reason=why))
    return placed


def _summed_triangle(step: "Step", variables: Mapping[str, tuple[str, ...]], form: Any, arrays: bool) -> bool:
    """Whether ``step`` is a triangle bag (:func:`triangle_bag`) summed with + and × over plain numbers: the bags
    the triangle kernels serve, in-process and in the tasks."""
    return (form is not None and form.sums_products and not arrays and triangle_bag(
        [variables.get(r, ()) for r in step.inputs], len(step.indicators), step.output.variables))


def _spared_indicators(step: "Step", why: str) -> tuple["Step", str]:
    """A step on the executors that only ⊕-aggregates one input (no join) without its indicators, and the
    reason saying so; else the step as it is.

    An indicator keeps a bag's intermediate within its AGM bound; it never changes the answer.  A step over
    one input has no intermediate to bound -- its output is a group-by of that input -- so in Spark the
    indicator only costs a distinct and a join of its relation, which the step reading the output joins
    anyway (measured on R-MAT 18's per-node 2-paths from Parquet on the executors: 4.1-5.5 s with the
    indicator, 3.0-3.8 s without).  Where the step joins several inputs the indicator may cut their product
    before it is made, and stays.
    """
    if not why or not step.indicators or len(step.inputs) != 1 or step.strategy.name != "binary" \
            or not step.eliminated:  # (no reason: a plan made without a session's facts, kept as planned)
        return step, why
    left_out = ", ".join(f"π{{{', '.join(i.variables)}}} {i.relation}" for i in step.indicators)
    return replace(step, indicators=()), f"{why}; indicators {left_out} left out: a group-by of {step.inputs[0]} alone"


def _sparse_product_step(step: "Step", variables: Mapping[str, tuple[str, ...]], rows: Sequence[float],
                         types: Mapping[str, str], form: Any, arrays: bool) -> bool:
    """Whether an in-process run of ``step`` would be a sparse matrix product
    (:func:`faq.joins.merges.binary_kernel`): it holds its inputs and its output, never the product
    before ⊕ (scipy's SpGEMM sums each row as it goes), so its footprint counts the output's bound
    (the product of its variables' domains, the planner's ``bounds``).  One
    piece of R-MAT 18's 4-cycle holding a hub ``b`` joins 1e9 2-paths onto at most 2.6e5 keys ``(b, d)``."""
    if step.strategy.name != "binary" or not step.eliminated or form is None or not form.sums_products or arrays:
        return False
    kernel, _ = binary_kernel([variables.get(r, ()) for r in step.inputs], [i.variables for i in step.indicators],
                              step.output.variables, rows, integral_bag(step.bag, types), arrays, True)
    return kernel == "sparse-product"


def array_cells(step: "Step", relations: Sequence[Sequence[str]], rows: Sequence[float], width: int, arrays: bool,
                form: Any, environment: Environment) -> Strategy:
    """The strategy of an array ring's step on the executors: partitioned cells, each running in-process merges.

    Spark shuffles the step's rows into the cells of a HyperCube grid over
    its bag (:func:`~faq.insideout.physical.partitioned_strategy`; a
    variable every relation holds is split without copying a row), and each
    cell joins and ⊕-aggregates them as a step on the driver would -- the
    merges :func:`merge_kernel` names, the values ``(n, w)`` numpy arrays --
    instead of Spark SQL joins whose arrays of doubles are multiplied and
    summed a row at a time.  Keys must be integers (the cells hash them).

    >>> from faq.insideout.plans import Relation, Step
    >>> from faq.semirings import cofactor
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> ring = cofactor(1)
    >>> step = Step(1, ("b",), ring.name, ("b", "c"), ("r#1", "s#2"), (), Relation("t", ("c",)), 1, 1e6)
    >>> s = array_cells(step, [("b", "c"), ("b",)], [1e6, 1e3], ring.width, True,
    ...                 numpy_ops(ring, ring, arrays=True), Environment(parallelism=2, index_memory=1 << 30))
    >>> s.name, s.shares, s.binary_kernel, s.aggregate_in_tasks
    ('partitioned', (('b', 2), ('c', 1)), 'sort-merge', True)
    >>> s.describe()
    'strategy partitioned (values are double[3] arrays: each cell joins them in-process); grid b=2 (2 cells), est. 5e+05 rows / 19.1 MiB per task; ⊕ of cofactor(1) inside the cells onto (c); in-process binary join (sort-merge): array values (a pandas column holds one number a row)'
    """
    from faq.insideout.physical import partitioned_strategy

    aggregates = bool(step.eliminated)
    keep = step.output.variables
    bytes_per_row = (max((len(r) for r in relations), default=0) + width) * BYTES_PER_COLUMN
    index_rows = sum(rows) if all(math.isfinite(r) for r in rows) else None
    reason = f"values are double[{width}] arrays: each cell joins them in-process"
    strategy = partitioned_strategy(reason, index_rows, None if index_rows is None else index_rows * bytes_per_row,
                                    environment, list(zip(relations, rows)), bytes_per_row)
    merges = merge_kernel(Strategy("binary", ""), relations, [i.variables for i in step.indicators], keep,
                          [*rows, *(math.inf for _ in step.indicators)], True, arrays, form, aggregates)
    note = (f"⊕ of {step.aggregate} inside the cells onto ({', '.join(keep)})" if aggregates
            else "every binding listed by the cells")
    return replace(strategy, aggregate_in_tasks=aggregates, aggregation=note, binary_kernel=merges.binary_kernel,
                   binary_reason=merges.binary_reason)


#: What a plan's note says of the oriented count run in a broadcast step's tasks.
ORIENTED_IN_TASKS = ("one relation's triangles oriented by degree on the driver, counted in the tasks (compiled) "
                     "where the atoms read one set of pairs without loops")


def _oriented_in_tasks(step: "Step", one_relation: bool) -> "Step":
    """``step`` (a triangle bag placed on the executors) with the oriented count in its tasks, where it is a
    broadcast step whose index the driver builds, over ``one_relation``, that would run the compiled loop."""
    strategy = step.strategy
    if not (one_relation and strategy.name == "broadcast" and not strategy.index_dir
            and "compiled loop (numba)" in strategy.aggregation):
        return step
    note = strategy.aggregation.replace("compiled loop (numba)", f"{ORIENTED_IN_TASKS}; else the compiled loop (numba)")
    return replace(step, strategy=replace(strategy, oriented_count=True, aggregation=note))


def one_factor(inputs: Sequence[str]) -> bool:
    """Whether a step's inputs are all atoms of one factor (``"edge#1"``, ``"edge#2"``: no intermediate ``t1``).

    >>> one_factor(["edge#1", "edge#2", "edge#3"]), one_factor(["edge#1", "edge#2", "t1"])
    (True, False)
    """
    return all("#" in r for r in inputs) and len({r.rsplit("#", 1)[0] for r in inputs}) == 1


def _kernel_in_process(step: "Step", environment: Environment, triangle: bool = False,
                       input_rows: float = 0.0, one_relation: bool = False) -> "Step":
    """``step`` (placed on the driver) with the numpy kernel, or for a ``triangle`` bag summed with + and ×
    dense-row sums (large inputs) or masked sparse products, where the compiled loop would cost more; a
    ``triangle`` over ``one_relation`` (three atoms of one factor) the loop or dense-row sums would run tries
    that relation's oriented count first."""
    strategy = step.strategy
    if not (strategy.aggregate_in_tasks and "compiled loop (numba)" in strategy.aggregation):
        return step
    work = step.work.total if step.work else None
    dense, why = in_process_dense_rows(input_rows, one_relation) if triangle else (False, "")
    if dense:
        note = strategy.aggregation.replace("compiled loop (numba)", why)
        return replace(step, strategy=replace(strategy, dense_rows=True, oriented_count=one_relation,
                                              aggregation=note))
    sparse, why = in_process_triangle_kernel(work, environment, input_rows) if triangle else (False, "")
    if sparse:
        note = strategy.aggregation.replace("compiled loop (numba)", why)
        return replace(step, strategy=replace(strategy, sparse_kernel=True, aggregation=note))
    numpy_kernel, why = in_process_kernel(work, environment)
    if numpy_kernel:
        note = strategy.aggregation.replace("compiled loop (numba)", why)
        return replace(step, strategy=replace(strategy, numpy_kernel=True, aggregation=note))
    if triangle and one_relation:  # the loop would run: the relation's triangles counted by orientation first
        note = strategy.aggregation.replace("compiled loop (numba)",
                                            f"{ORIENTED_COUNT}; else the compiled loop (numba)")
        return replace(step, strategy=replace(strategy, oriented_count=True, aggregation=note))
    return step
