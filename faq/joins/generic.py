"""Worst-case optimal bag join: attribute at a time, count / propose / validate.

:func:`generic_join` has the contract of :func:`~faq.joins.binary.binary_join`
(the ⊗-product of the relations over the union of their variables, one row
per binding and per combination of rows, semi-joined with the indicators) but
binds one attribute at a time, in the planner's ``attribute_order``.  For each
attribute every relation holding it is an extender
(:mod:`faq.joins.extenders`): for each prefix binding all of them *count*
their candidates, the one with the fewest *proposes*, the others *validate*.
A relation's value is multiplied in (⊗) when its last attribute is bound;
indicators take part as relations whose value is one.  Work is Σ over
prefixes of the smallest proposal, never the Σ deg² of a chain of binary
joins, so a triangle costs O(N^1.5) (Ngo, Porat, Ré, Rudra; Veldhuizen;
BiGJoin, Ammar et al. VLDB 2018).

Three physical strategies; which one a step runs is the plan's decision
(:func:`faq.insideout.physical.choose_strategy`), carried out here as given:

``"shuffle"``
    DataFrames only, as in BiGJoin: count is a join of the prefixes with each
    relation's per-key degree table, the proposer is picked by a Column
    expression (``least`` / ``when``), propose is a join and validate a
    semi-join (an inner join carrying ⊗ when the relation becomes fully
    bound).  The counted prefixes of each attribute are materialised
    (``localCheckpoint``) so branches share them and lineage stays short.
    Any key type; memory is Spark's (shuffles spill).
``"broadcast"``
    Each relation becomes a CSR trie of numpy arrays (:mod:`faq.joins.csr`),
    written once to a file that Spark ships to each executor and every
    Python worker there memory-maps (:mod:`faq.joins.mapped`: one copy per
    machine, on classic Spark and Spark Connect alike) -- or, given
    ``index_dir``, built by the first worker of each executor from Parquet
    inputs Spark writes there (:mod:`faq.joins.executor_index`: the driver
    holds no row); the first attribute's values (seeds) are
    enumerated from the tries and dealt round-robin to one task
    per core (an even share of heavy seeds each), and each task's seeds are
    extended to full bindings in vectorised numpy inside ``mapInArrow``
    (validation looks candidates up in a trie level: binary search, then a
    hash index built once per worker when the level is used enough —
    :meth:`faq.joins.csr.TrieLevel.find`), in pieces of at most
    :data:`BATCH_ROWS` candidates, depth first, so memory per task is
    bounded whatever the output size.  Integer keys only.  Uses the plan
    found to read the same data in the same column order (``shared``) are
    indexed once.
``"partitioned"``
    HyperCube / Shares (:mod:`faq.joins.hypercube`): the variables are
    hashed onto a grid of cells, each row sent to every cell consistent with
    its keys, and each cell runs the broadcast strategy's numpy kernel on its
    own rows (``groupBy(cell).applyInArrow``).  Memory per task is a
    fraction of the input; one shuffle; no index shipped (each cell builds
    its own from its rows).  Integer keys only.

When listing bindings, the ⊗ of the values is a Spark Column expression of
the semiring (the broadcast strategy gathers each relation's value per output
row and multiplies in Spark), so every semiring, built in or user defined,
gives exactly what binary joins give.

When the caller ⊕-aggregates the product right away (``aggregate=``, an
:class:`~faq.joins.frame.Aggregation`: the InsideOut executor passes the
step's output variables and aggregate), the broadcast strategy does not list
bindings at all for semirings with numpy forms (every built-in; a user-defined
one that declares them): each task multiplies the values
in numpy and ⊕-combines them per kept key (:mod:`faq.joins.partial`), so a
triangle count ships one number per task instead of every triangle.  The
result is then partial aggregates over the kept variables, which the caller's
group-by combines.  When nothing is kept (a count), the task runs the compiled
loop of :mod:`faq.joins.compiled` instead of the numpy extenders, where it can.  User-defined semirings without a numpy form, and the
shuffle strategy, list bindings as before.  The returned Frame's ``note``
says which happened (int64 partial sums that could overflow are listed
instead, a guard only the data can decide).

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.joins import Frame, VALUE_COLUMN
>>> from faq.joins.generic import generic_join
>>> from faq.semirings import COUNTING
>>> edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1)]
>>> def use(a, b):
...     f = factor_of(edges, ["s", "t"], "counting")
...     return Frame(f.df.selectExpr(f"s AS {a}", f"t AS {b}", f"value AS {VALUE_COLUMN}"), (a, b))
>>> out = generic_join([use("a", "b"), use("a", "c"), use("b", "c")], [], COUNTING, ["a", "b", "c"],
...                    strategy="broadcast")
>>> sorted(map(tuple, out.df.collect()))
[(0, 1, 2, 1)]
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from faq.driver_copy import driver_copy
from faq.errors import PlanError
from faq.hypergraph.shares import format_bytes
from faq.joins.compiled import aggregate_seeds, compilable, for_tasks
from faq.joins.csr import Encoding, Trie, build_encoding, build_trie
from faq.joins.extenders import ArrayBackend, Chunk, FrameBackend, FrameExtender, TrieExtender, complete, extend
from faq.joins.frame import VALUE_COLUMN, Aggregation, Frame
from faq.joins import partial as partial_aggregates
from faq.joins.partial import INT_LIMIT, PartialAggregate, integer_bound
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NUMPY_DTYPES, NumpyForm, numpy_ops

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.scope import Scope

log = logging.getLogger(__name__)

STRATEGIES = ("shuffle", "broadcast", "partitioned")
# Largest number of candidates a piece of prefixes may propose (per task, per level).
BATCH_ROWS = 1 << 16
# A broadcast join's tasks per core.  Its seeds are dealt round-robin (task p of P runs seeds p,
# p + P, ...), so every task gets an even share of light and heavy seeds however the key order
# clusters them: SNAP graphs number their hubs together, and contiguous seed ranges gave the
# heaviest of 8 tasks 4.4x the mean work on soc-Slashdot0902 (dealt: 1.03x).  One task per core
# then suffices, and pays Spark's start of a Python task (about 0.1 s here) once.
SEED_TASKS_PER_CORE = 1
# ... but at most one task per this many index rows (tiny joins run as one task).
ROWS_PER_PARTITION = 50_000


@dataclass(frozen=True)
class _Use:
    """One relation of the join: its attributes in attribute order; ``valued`` False for indicators."""

    frame: Frame
    attributes: tuple[str, ...]
    valued: bool


def generic_join(
    relations: Sequence[Frame],
    indicators: Sequence[Frame],
    semiring: Semiring,
    attribute_order: Sequence[str] = (),
    strategy: str = "broadcast",
    aggregate: Optional[Aggregation] = None,
    aggregate_in_tasks: Optional[bool] = None,
    shared: Optional[Sequence[Sequence[int]]] = None,
    scope: Optional["Scope"] = None,
    grid: Optional[Mapping[str, int]] = None,
    batches: int = 1,
    index_dir: Optional[str] = None,
) -> Frame:
    """⊗-product of ``relations``, semi-joined with ``indicators``, attribute at a time.

    Parameters
    ----------
    relations : sequence of Frame
        Any arities; a relation may appear several times (its value is then
        multiplied in several times, as in binary joins).
    indicators : sequence of Frame
        De-duplicated projections (variable columns only) to semi-join with.
    semiring : Semiring
        Supplies ⊗ (as Column expressions) and its one.
    attribute_order : sequence of str
        Order in which attributes are bound (the plan's: each attribute after
        the first shares a relation with an earlier one).  Variables it
        misses are appended in a connected order; unknown ones are ignored.
    strategy : {"broadcast", "shuffle", "partitioned"}
        See the module notes; the broadcast and partitioned strategies need
        integer keys (a :class:`~faq.errors.PlanError` otherwise).
    aggregate : Aggregation, optional
        The caller ⊕-aggregates the product onto ``aggregate.keep`` right away.
    aggregate_in_tasks : bool, optional
        Broadcast strategy: ⊕-aggregate inside the tasks and return partial
        aggregates over ``aggregate.keep``.  The plan decides it
        (:func:`faq.insideout.physical.task_aggregation`); None decides it
        here the same way.
    shared : sequence of sequence of int, optional
        Groups of positions in ``relations + indicators`` that hold the same
        data in the same column order (the plan's
        :attr:`~faq.insideout.physical.Strategy.shared`): one index each.
        None: one index per use.
    scope : Scope, optional
        Owns what the result reads and the join had to materialise (the
        shuffle strategy's checkpoints); the caller closes it once it has
        materialised the result.  None: nothing is released.
    grid : mapping of str to int, optional
        The partitioned strategy's shares per variable (None: sized here).
    batches : int
        The shuffle strategy: run the seeds (values of the first attribute)
        in this many batches, hashed apart, each materialised before the
        next -- and ⊕-aggregated onto ``aggregate.keep`` when ``aggregate`` is
        given and ``aggregate_in_tasks`` is not False.  Needs ``scope``.
    index_dir : str, optional
        The broadcast strategy: build the index on the executors, from
        Parquet files Spark writes under this directory (which the executors
        must be able to read; ``scope``, when given, removes them), not on
        the driver (:mod:`faq.joins.executor_index`).  None: on the driver.

    Returns
    -------
    Frame
        Columns: the relations' variables (first appearance order) and
        :data:`VALUE_COLUMN` — or, when aggregated, ``aggregate.keep`` and
        :data:`VALUE_COLUMN` holding partial ⊕-aggregates (several rows per
        key possible: ⊕-combine them).  Rows with a null key or value are
        left out.  ``note`` says how the product was made.
    """
    from pyspark.sql import functions as F

    from faq.hypergraph.acyclic import attribute_order as connected_order
    from faq.semirings.spark_backend import columns as spark_columns

    if strategy not in STRATEGIES:
        raise PlanError(reason=f"unknown generic-join strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    everything = (*relations, *indicators)
    variables = tuple(dict.fromkeys(v for r in everything for v in r.variables))
    edges = [r.variables for r in everything if r.variables]
    given = [v for v in dict.fromkeys(attribute_order) if v in variables]
    order = tuple(given) if set(given) == set(variables) else tuple(connected_order(edges, first=given))
    position = {v: i for i, v in enumerate(order)}
    kept = [k for k, r in enumerate(everything) if r.variables]
    uses = [
        _Use(everything[k], tuple(sorted(everything[k].variables, key=position.__getitem__)), k < len(relations))
        for k in kept
    ]
    spark = _spark_of(relations, indicators)
    out, ops = variables, None
    if not uses:
        df, note = spark.range(1).select(spark_columns(semiring).one().alias(VALUE_COLUMN)), "no variables"
    elif strategy in ("broadcast", "partitioned"):
        in_tasks, why = aggregate_in_tasks, "every binding listed: the plan says so"
        if in_tasks is None:
            from faq.insideout.physical import task_aggregation

            in_tasks, why, _ = task_aggregation(semiring, aggregate and aggregate.semiring,
                                                aggregate.keep if aggregate else (), variables)
        ops = numpy_ops(semiring, aggregate.semiring) if in_tasks and aggregate is not None else None
        if strategy == "broadcast":
            df, out, note = _broadcast_join(spark, uses, index_groups(shared, kept), order, variables, semiring,
                                            aggregate, ops, index_dir, scope)
        else:
            from faq.hypergraph.shares import shares
            from faq.joins.hypercube import partitioned_join
            from faq.spark import default_parallelism

            if grid is None:
                grid = shares(order, [u.attributes for u in uses], [1] * len(uses), default_parallelism(spark))
            df, out, note = partitioned_join(spark, uses, order, variables, semiring, grid, aggregate, ops)
        if aggregate is not None and ops is None:
            note += f"; {why}"
    elif batches > 1:
        per_batch = aggregate if aggregate_in_tasks is not False else None
        df, out, note = _shuffle_in_batches(spark, uses, order, variables, semiring, scope, batches, per_batch)
    else:
        df, note = _shuffle_join(spark, uses, order, variables, semiring, scope), "shuffle"
    log.info("generic join: %s, attributes %s", note, ", ".join(order))
    variables = out

    # Relations and indicators without variables: a constant factor, a non-emptiness test.
    for r in relations:
        if not r.variables:
            other = r.df.select(F.col(VALUE_COLUMN).alias("__z"))
            df = df.crossJoin(other).select(
                *variables, spark_columns(semiring).mul(F.col(VALUE_COLUMN), F.col("__z")).alias(VALUE_COLUMN)
            )
    for ind in indicators:
        if not ind.variables:
            df = df.crossJoin(ind.df.limit(1).select(F.lit(1).alias("__one"))).drop("__one")
    # Partial aggregates onto no variable: about one row per task (Frame.task_partials).
    task_partials = ops is not None and not out
    return Frame(df.select(*variables, VALUE_COLUMN), variables, note, task_partials)


def index_groups(shared: Optional[Sequence[Sequence[int]]], kept: Sequence[int]) -> list[list[int]]:
    """``shared`` (positions among all relations and indicators) as groups of use indexes."""
    use_of = {k: i for i, k in enumerate(kept)}
    if shared is None:
        return [[i] for i in range(len(kept))]
    groups = [[use_of[k] for k in g if k in use_of] for g in shared]
    groups = [g for g in groups if g]
    if sorted(i for g in groups for i in g) != list(range(len(kept))):
        raise PlanError(reason=f"shared index groups {list(map(list, shared))} do not cover the join's "
                               f"{len(kept)} relations exactly once")
    return groups


def _spark_of(relations: Sequence[Frame], indicators: Sequence[Frame]) -> "SparkSession":
    for r in (*relations, *indicators):
        return r.df.sparkSession
    from faq.spark import get_session

    return get_session()


def _non_null(df: "DataFrame", columns: Sequence[str]) -> "DataFrame":
    from pyspark.sql import functions as F

    condition = None
    for c in columns:
        test = F.col(c).isNotNull()
        condition = test if condition is None else condition & test
    return df if condition is None else df.where(condition)


# --- the broadcast index's inputs ---------------------------------------------------


def _normalised(use: _Use) -> "DataFrame":
    """The use's rows with keys renamed by position in attribute order (``__k0``...)."""
    from pyspark.sql import functions as F

    columns = [F.col(a).alias(f"__k{i}") for i, a in enumerate(use.attributes)]
    if use.valued:
        columns.append(F.col(VALUE_COLUMN))
    names = [f"__k{i}" for i in range(len(use.attributes))] + ([VALUE_COLUMN] if use.valued else [])
    return _non_null(use.frame.df.select(*columns), names)


def _check_integral(uses: Sequence[_Use]) -> None:
    """The broadcast index encodes keys as int64: refuse other key types with a clear error."""
    from pyspark.sql.types import IntegralType

    for use in uses:
        schema = use.frame.df.schema
        for a in use.attributes:
            if not isinstance(schema[a].dataType, IntegralType):
                raise PlanError(
                    reason=f"the broadcast strategy needs integer keys, but {a!r} has type "
                    f"{schema[a].dataType.simpleString()}; plan with the factors' key types "
                    "(evaluate does) or use the shuffle strategy"
                )


# --- broadcast strategy ------------------------------------------------------------


@dataclass
class _Kernel:
    """Everything a task needs, broadcast once: tries (inside the extenders) and seeds."""

    extenders: list[list[TrieExtender]]  # per attribute after the first
    seeds: dict  # Chunk columns of the seeds (first attribute and trie entries)
    encoding: Encoding
    outputs: list[int]  # attribute position of each output variable
    values: list[tuple[int, np.ndarray]]  # (use, values aligned with its last level)
    names: list[str]  # output columns
    batch_rows: int
    ops: Optional[NumpyForm] = None  # aggregate inside the task (outputs: the kept variables)
    bound: int = 1  # magnitude bound of one binding's integer value (PartialAggregate)
    flush_rows: int = partial_aggregates.FLUSH_ROWS  # PartialAggregate's buffer (set on the driver)
    compiled: bool = False  # ⊕ to one value by the compiled loop (faq.joins.compiled)
    flat: Any = None  # the compiled loop's flat arrays, in place of the tries (compiled.for_tasks)


def _collect(df: "DataFrame", arity: int, valued: bool, semiring: Semiring) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """The rows of a normalised relation as numpy columns.

    This collects the relation to the driver: it *is* the index to be
    broadcast (the plan bounded its size), nothing else is collected.
    """
    from pyspark.sql import functions as F

    if valued:
        df = df.withColumn(VALUE_COLUMN, F.col(VALUE_COLUMN).cast(semiring.value_type))
    table = df.toArrow()
    keys = [table.column(i).to_numpy().astype(np.int64, copy=False) for i in range(arity)]
    values = table.column(arity).to_numpy() if valued else None
    return keys, values


def _gathered(use: _Use, semiring: Semiring) -> tuple[tuple[list[np.ndarray], Optional[np.ndarray]], bool]:
    """(the use's key columns in attribute order and values, whether the driver held them).

    Rows the driver already holds (:mod:`faq.driver_copy`: an edge list
    read and cleaned there) are taken as they are; others are collected.
    """
    copy = driver_copy(use.frame.df)
    if copy is None:
        return _collect(_normalised(use), len(use.attributes), use.valued, semiring), False
    keys = [np.asarray(copy[a], dtype=np.int64) for a in use.attributes]
    dtype = NUMPY_DTYPES[semiring.value_type]
    values = np.asarray(copy[VALUE_COLUMN], dtype=dtype) if use.valued else None
    return (keys, values), True


def _all_one(values: np.ndarray, semiring: Semiring) -> bool:
    one = semiring.python_value(semiring.one)
    return bool(len(values) == 0 or np.all(values == one))


def kernel_values(
    values: Sequence[Optional[np.ndarray]],
    groups: Sequence[Sequence[int]],
    semiring: Semiring,
    aggregate: Optional[Aggregation],
    ops: Optional[NumpyForm],
) -> tuple[list[bool], Optional[NumpyForm], int, str]:
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


def build_kernel(
    attributes: Sequence[tuple[str, ...]],
    groups: Sequence[Sequence[int]],
    collected: Sequence[tuple[list[np.ndarray], Optional[np.ndarray]]],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    aggregate: Optional[Aggregation] = None,
    ops: Optional[NumpyForm] = None,
    compiled: bool = True,
) -> tuple["_Kernel", int, str]:
    """The broadcast strategy's index, seeds and plan, in numpy (no Spark): (kernel, seeds, note).

    Parameters
    ----------
    attributes : sequence of tuple of str
        Per use (relation or indicator), its attributes in ``order``.
    groups, collected :
        Uses sharing one index, and each group's key columns (in its
        attribute order) and values (None for indicators).
    order : sequence of str
        The attribute order.
    variables : sequence of str
        The product's variables (output columns when listing).
    semiring : Semiring
    aggregate, ops :
        With ``ops`` (numpy ⊗/⊕ for ``aggregate``), the kernel's tasks
        ⊕-combine per ``aggregate.keep`` instead of listing bindings.
    compiled : bool
        False: the numpy extenders even where the compiled loop qualifies
        (the plan chose them; its note says why).

    Returns
    -------
    (kernel, seeds, note)
        ``kernel.ops`` is None when listing (``note`` says why when an
        aggregation was asked for), ``seeds`` the number of first-attribute
        values; run :func:`run_kernel` on seed ids ``0 .. seeds - 1``.
    """
    encoding = build_encoding([c for keys, _ in collected for c in keys], max(len(k[0]) for k, _ in collected))
    kept_values, ops, bound, note = kernel_values([v for _, v in collected], groups, semiring, aggregate, ops)
    tries: dict[int, Trie] = {}
    value_of: dict[int, np.ndarray] = {}
    for g, (keys, values), kept in zip(groups, collected, kept_values):
        trie = build_trie([encoding.encode(k) for k in keys], encoding.span, values if kept else None)
        for i in g:
            tries[i] = trie
            if trie.values is not None:
                value_of[i] = trie.values
    value_uses = sorted(value_of)

    # One list of extenders per attribute: every use holding it, at its level for it.  A use's
    # trie entry is read later only at its next attribute, or to gather its values at the end.
    levels = [
        [
            TrieExtender(
                i,
                tries[i].levels[attrs.index(x)],
                encoding.span,
                position,
                keeps_node=x != attrs[-1] or i in value_of,
            )
            for i, attrs in enumerate(attributes)
            if x in attrs
        ]
        for position, x in enumerate(order)
    ]
    # Seeds: the first attribute's values, enumerated on the driver from the tries.
    root = Chunk({}, 1)
    pieces = [p for p in extend(root, levels[0], ArrayBackend(max_rows=1 << 62)) if p.rows]
    n_seeds = sum(p.rows for p in pieces)
    # Hubs spread over the tasks: seeds in a fixed random order.
    permutation = np.random.default_rng(0).permutation(n_seeds)
    seed_columns = {
        key: np.ascontiguousarray(np.concatenate([p.columns[key] for p in pieces])[permutation])
        for key in (pieces[0].columns if pieces else {})
        if key == ("a", 0) or key[0] == "n"
    }
    out, names = output_names(aggregate if ops is not None else None, variables, value_uses)
    kernel = _Kernel(
        extenders=levels[1:],
        seeds=seed_columns,
        encoding=encoding,
        outputs=[list(order).index(v) for v in out],
        values=[(i, value_of[i]) for i in value_uses],
        names=names,
        batch_rows=BATCH_ROWS,
        ops=ops,
        bound=bound,
        flush_rows=partial_aggregates.FLUSH_ROWS,
    )
    if ops is not None and not compiled:
        note += "; numpy kernel (the plan's choice)"
    elif ops is not None:
        kernel.compiled, why = compilable(kernel)
        note += "; compiled loop (numba)" if kernel.compiled else f"; numpy kernel: {why}"
    return kernel, n_seeds, note


@dataclass
class TaskIndex:
    """What the broadcast tasks read, and the shape of what they emit.

    ``handle.value`` is the kernel in a task (:class:`~faq.joins.mapped.MappedIndex`
    when built on the driver, :class:`~faq.joins.mapped.BuiltIndex` when built on
    the executors); ``seeds`` the number of seeds (None: counted where it is
    built); ``rows`` the index's input rows; ``names`` the emitted columns, the
    first ``keys`` of them keys; ``gathered`` the uses whose values are
    gathered (listing); ``aggregated`` whether tasks emit partial aggregates.
    """

    handle: Any
    seeds: Optional[int]
    rows: int
    names: list[str]
    keys: int
    gathered: list[int]
    aggregated: bool
    note: str


def _broadcast_join(
    spark: "SparkSession",
    uses: Sequence[_Use],
    groups: list[list[int]],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    aggregate: Optional[Aggregation] = None,
    ops: Optional[NumpyForm] = None,
    index_dir: Optional[str] = None,
    scope: Optional["Scope"] = None,
) -> tuple["DataFrame", tuple[str, ...], str]:
    """The broadcast strategy: (DataFrame, its variables, what it did).

    Each group of uses sharing data is indexed once: on the driver, from
    rows it collects or holds (:func:`_index_on_driver`), or, given
    ``index_dir``, on the executors from Parquet files Spark writes there
    (:func:`faq.joins.executor_index.index_on_executors`; ``scope`` removes
    them).  The plan bounded the index's size.

    With ``ops`` (numpy ⊗/⊕ for ``aggregate``), each task multiplies the
    values of its bindings and ⊕-combines them per kept key
    (:class:`~faq.joins.partial.PartialAggregate`): the result is partial
    aggregates over ``aggregate.keep``.  Without, every binding is listed
    with each relation's value gathered, and ⊗ is a Spark Column expression.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    from faq.spark import default_parallelism

    _check_integral(uses)
    from faq.workers import ensure_workers

    ensure_workers(spark)  # the tasks below run Python: check once per session that the workers can
    if index_dir is None:
        index = _index_on_driver(spark, uses, groups, order, variables, semiring, aggregate, ops)
    else:
        from faq.joins.executor_index import index_on_executors

        index = index_on_executors(uses, groups, order, variables, semiring, aggregate, ops, index_dir, scope)
    value_type = {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType()}[semiring.value_type]
    out = tuple(index.names[: index.keys])
    schema = StructType(
        [StructField(v, LongType()) for v in out] + [StructField(n, value_type) for n in index.names[index.keys:]]
    )
    if index.seeds == 0 or index.rows == 0:
        df = spark.createDataFrame([], schema)
    else:
        seeds = index.rows if index.seeds is None else index.seeds  # the rows bound the seeds
        tasks = max(1, min(seeds, default_parallelism(spark) * SEED_TASKS_PER_CORE,
                           -(-index.rows // ROWS_PER_PARTITION)))
        # One row per task, its number: the task deals itself its seeds (_dealt_seeds).
        df = spark.range(0, tasks, 1, tasks).mapInArrow(
            functools.partial(_expand_partition, index=index.handle, seeds=index.seeds, tasks=tasks), schema
        )
    if index.aggregated:
        return df.select(*out, F.col(VALUE_COLUMN)), out, index.note
    return with_product(df, out, index.gathered, semiring), out, index.note


def _index_on_driver(
    spark: "SparkSession",
    uses: Sequence[_Use],
    groups: list[list[int]],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    aggregate: Optional[Aggregation],
    ops: Optional[NumpyForm],
) -> TaskIndex:
    """The index built on the driver from rows it collects or holds, shipped as one file per machine."""
    gathered = [_gathered(uses[g[0]], semiring) for g in groups]
    collected = [columns for columns, _ in gathered]
    index_rows = sum(len(keys[0]) for keys, _ in collected)
    kernel, n_seeds, note = build_kernel(
        [u.attributes for u in uses], groups, collected, order, variables, semiring, aggregate, ops
    )
    shipped = None
    if n_seeds:
        from faq.joins.mapped import ship

        # One file per machine, mapped by every worker (faq.joins.mapped): not one copy per worker
        # as a broadcast variable would be; the same on classic Spark and on Spark Connect.
        shipped = ship(spark, for_tasks(kernel))
    shipped_as = f"{format_bytes(shipped.nbytes)} file, mapped once per machine" if shipped else (
        "no seeds: nothing shipped")
    held = sum(from_driver for _, from_driver in gathered)
    source = "" if not held else "; rows held on the driver, not collected" if held == len(gathered) else (
        f"; {held} of {len(gathered)} relations held on the driver")
    note = f"broadcast index of {index_rows} rows ({shipped_as}{source})" + (f"; {note}" if note else "")
    return TaskIndex(shipped, n_seeds, index_rows, kernel.names, len(kernel.outputs), [i for i, _ in kernel.values],
                     kernel.ops is not None, note)


def output_names(
    aggregate: Optional[Aggregation], variables: Sequence[str], gathered: Sequence[int]
) -> tuple[tuple[str, ...], list[str]]:
    """(key columns, all columns) a task emits: the kept keys and the ⊕ (``aggregate``: partial
    aggregates), or every variable and the gathered values ``__g<i>`` (listing)."""
    if aggregate is not None:
        return tuple(aggregate.keep), [*aggregate.keep, VALUE_COLUMN]
    return tuple(variables), [*variables, *(f"__g{i}" for i in gathered)]


def with_product(df: "DataFrame", out: Sequence[str], gathered: Sequence[int], semiring: Semiring) -> "DataFrame":
    """Listed bindings: ``out`` and the ⊗ of the gathered values ``__g<i>`` as :data:`VALUE_COLUMN` (Columns)."""
    from pyspark.sql import functions as F

    from faq.semirings.spark_backend import columns as spark_columns

    ops = spark_columns(semiring)
    product = ops.one()
    for k, i in enumerate(gathered):
        product = F.col(f"__g{i}") if k == 0 else ops.mul(product, F.col(f"__g{i}"))
    return df.select(*out, product.alias(VALUE_COLUMN))


def _expand_partition(batches: Iterator[Any], index: Any, seeds: Optional[int], tasks: int) -> Iterator[Any]:
    """mapInArrow body: task numbers in; full bindings, or partial aggregates (``kernel.ops``), of the
    seeds dealt to those tasks out (``seeds`` None: the kernel's own count)."""
    kernel = index.value
    yield from run_kernel(_dealt_seeds(batches, seed_count(kernel) if seeds is None else seeds, tasks), kernel)


def seed_count(kernel: "_Kernel") -> int:
    """The number of seeds of ``kernel`` (first-attribute values)."""
    return len(next(iter(kernel.seeds.values()))) if kernel.seeds else 0


def _dealt_seeds(batches: Iterator[Any], seeds: int, tasks: int) -> Iterator[Any]:
    """Arrow batches of the seed ids dealt to the task numbers in ``batches``: task ``p`` of ``tasks``
    gets ``p, p + tasks, p + 2 * tasks, ...`` below ``seeds``, :data:`BATCH_ROWS` at a time.

    >>> import pyarrow as pa
    >>> numbers = [pa.record_batch([pa.array([1])], names=["id"])]
    >>> [b.column(0).to_pylist() for b in _dealt_seeds(iter(numbers), seeds=10, tasks=4)]
    [[1, 5, 9]]
    """
    import pyarrow as pa

    for batch in batches:
        for task in batch.column(0).to_numpy():
            ids = np.arange(task, seeds, tasks, dtype=np.int64)
            for low in range(0, len(ids), BATCH_ROWS):
                yield pa.record_batch([pa.array(ids[low:low + BATCH_ROWS])], names=["id"])


def run_kernel(batches: Iterator[Any], kernel: "_Kernel") -> Iterator[Any]:
    """Arrow batches of seed ids (column 0) in; Arrow batches of bindings or partial aggregates out.

    What each broadcast task runs (also callable without Spark, e.g. by a benchmark).
    """
    if kernel.compiled:
        yield from _compiled_partition(batches, kernel)
        return
    if kernel.ops is not None:
        yield from _aggregate_partition(batches, kernel)
        return
    backend = ArrayBackend(kernel.batch_rows)
    buffered: list[list[np.ndarray]] = []
    rows = 0
    for seeds in _seed_chunks(batches, kernel):
        for leaf in complete(seeds, 0, kernel.extenders, backend):
            buffered.append(_output_columns(leaf, kernel))
            rows += leaf.rows
            if rows >= kernel.batch_rows:
                yield _to_arrow(buffered, kernel)
                buffered, rows = [], 0
    if buffered:
        yield _to_arrow(buffered, kernel)


def _seed_chunks(batches: Iterator[Any], kernel: _Kernel) -> Iterator[Chunk]:
    from faq.arrow_arrays import to_numpy

    for batch in batches:
        ids = to_numpy(batch.column(0))  # not Arrow's to_numpy: that imports pandas (0.5 s in a new process)
        if len(ids):
            yield Chunk({key: column[ids] for key, column in kernel.seeds.items()}, len(ids))


def _aggregate_partition(batches: Iterator[Any], kernel: _Kernel) -> Iterator[Any]:
    """Bindings ⊗-multiplied and ⊕-combined per kept key in numpy; partial aggregates out."""
    ops = kernel.ops
    backend = ArrayBackend(kernel.batch_rows)
    partial = PartialAggregate(ops, len(kernel.outputs), kernel.encoding.span, kernel.bound, kernel.flush_rows)
    step = partial.safe_rows()
    for seeds in _seed_chunks(batches, kernel):
        for leaf in complete(seeds, 0, kernel.extenders, backend):
            keys = [leaf.get(("a", p)) for p in kernel.outputs]
            values = None
            for i, gathered in kernel.values:
                v = gathered[leaf.get(("n", i))]
                values = v if values is None else ops.mul(values, v)
            for low in range(0, leaf.rows, step):
                high = min(low + step, leaf.rows)
                whole = low == 0 and high == leaf.rows
                partial.add(
                    [k if whole else k[low:high] for k in keys],
                    None if values is None else (values if whole else values[low:high]),
                    high - low,
                )
                if partial.ready():
                    yield _partial_batch(partial, kernel)
    if not partial.empty():
        yield _partial_batch(partial, kernel)


def _compiled_partition(batches: Iterator[Any], kernel: _Kernel) -> Iterator[Any]:
    """The partition's seeds ⊕-aggregated to one value by the compiled loop; one row out (none without seeds)."""
    import pyarrow as pa

    ops, total = kernel.ops, None
    from faq.arrow_arrays import to_numpy

    for batch in batches:
        ids = to_numpy(batch.column(0))  # not Arrow's to_numpy: that imports pandas (0.5 s in a new process)
        if len(ids):
            part = aggregate_seeds(kernel, ids)
            total = part if total is None else ops.add(total, part)
    if total is not None:
        yield pa.RecordBatch.from_arrays([pa.array([total])], names=kernel.names)


def _partial_batch(partial: PartialAggregate, kernel: _Kernel) -> Any:
    import pyarrow as pa

    from faq.arrow_arrays import from_numpy

    keys, values = partial.drain()
    columns = [from_numpy(kernel.encoding.decode(k)) for k in keys] + [from_numpy(values)]
    return pa.RecordBatch.from_arrays(columns, names=kernel.names)


def _output_columns(leaf: Chunk, kernel: _Kernel) -> list[np.ndarray]:
    """Decoded keys of the output variables and gathered values, for the rows of ``leaf``."""
    columns = [kernel.encoding.decode(leaf.get(("a", p))) for p in kernel.outputs]
    columns += [values[leaf.get(("n", i))] for i, values in kernel.values]
    return columns


def _to_arrow(parts: list[list[np.ndarray]], kernel: _Kernel) -> Any:
    import pyarrow as pa

    columns = parts[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*parts)]
    return pa.RecordBatch.from_arrays([pa.array(c) for c in columns], names=kernel.names)


# --- shuffle strategy ------------------------------------------------------------


def _shuffle_join(
    spark: "SparkSession",
    uses: Sequence[_Use],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    scope: Optional["Scope"] = None,
) -> "DataFrame":
    from faq.semirings.spark_backend import columns as spark_columns

    prefix = spark.range(1).select(spark_columns(semiring).one().alias(VALUE_COLUMN))
    backend = FrameBackend(scope)
    for x in order:
        extenders = []
        for use in uses:
            if x not in use.attributes:
                continue
            at = use.attributes.index(x)
            last = at == len(use.attributes) - 1
            columns = list(use.attributes[: at + 1])
            if last and use.valued:
                relation = use.frame.df.select(*columns, VALUE_COLUMN)
            elif last:  # an indicator: de-duplicated already
                relation = use.frame.df.select(*columns)
            else:
                relation = use.frame.df.select(*columns).distinct()
            relation = _non_null(relation, columns)
            counted = None if last else _non_null(use.frame.df.select(*columns), columns)
            extenders.append(FrameExtender(relation, columns[:-1], x, last and use.valued, semiring, counted))
        (prefix,) = list(extend(prefix, extenders, backend))
    return prefix.select(*variables, VALUE_COLUMN)


def _shuffle_in_batches(
    spark: "SparkSession",
    uses: Sequence[_Use],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    scope: Optional["Scope"],
    batches: int,
    aggregate: Optional[Aggregation],
) -> tuple["DataFrame", tuple[str, ...], str]:
    """The shuffle strategy over the seeds in ``batches`` parts: (DataFrame, its variables, what it did).

    A seed (a value of the first attribute) goes to batch
    ``pmod(xxhash64(seed), batches)``, any key type; every use holding the
    first attribute keeps that batch's rows.  Each batch is checkpointed in
    ``scope`` (⊕-aggregated onto ``aggregate.keep`` first, when given), so
    its intermediate tables are gone before the next batch runs; the result
    is the union of the batches.
    """
    from pyspark.sql import functions as F

    if scope is None:
        raise PlanError(reason="the shuffle strategy in batches needs a scope to own each batch's checkpoint")
    first = order[0]
    out = tuple(aggregate.keep) if aggregate is not None else tuple(variables)
    done = None
    for batch in range(batches):
        in_batch = F.pmod(F.xxhash64(F.col(first)), F.lit(batches)) == batch
        part = [
            _Use(Frame(u.frame.df.where(in_batch), u.frame.variables), u.attributes, u.valued)
            if first in u.attributes else u
            for u in uses
        ]
        product = _shuffle_join(spark, part, order, variables, semiring, scope)
        if aggregate is not None:
            product = aggregate.combine(product)
        product = scope.checkpoint(product.select(*out, VALUE_COLUMN))
        done = product if done is None else done.unionByName(product)
    how = f"⊕ onto ({', '.join(out)}) per batch" if aggregate is not None else "every binding listed"
    return done, out, f"shuffle, seeds in {batches} batches by hash of {first}; {how}"
