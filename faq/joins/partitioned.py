"""The partitioned strategy of the generic join: HyperCube / Shares partitioning, the numpy kernel in each cell.

When a bag's relations are too large for every task to hold the whole index
(the broadcast strategy), the variables of the bag are hashed onto the
dimensions of a grid of ``p = Π share_v`` cells (Afrati & Ullman's Shares;
Beame, Koutris & Suciu's HyperCube; Myria runs a local worst-case optimal
join in each cell).  A row of a relation ``R`` has a coordinate on every
dimension of a variable it holds (``hash_v(value) mod share_v``) and is
replicated along the dimensions of the variables it does not hold; every
binding of the join then lies in exactly one cell, the one of its variables'
hashes, and each cell holds every row that binding needs.  So each cell
joins its own rows as a step placed on the driver joins them
(:func:`faq.joins.local.join_local`: the generic join's kernel and compiled
loop, or the merges the plan names, for scalars and array rings alike), and
the cells' results are disjoint: counts are exact, and each aggregating cell
emits partial aggregates that the caller's group-by ⊕-combines (the
broadcast strategy's contract; none is needed when every split variable is
kept).  Cells that list every binding (a semiring without a numpy ⊕, or
int64 sums that could overflow) run the broadcast strategy's listing kernel
(:func:`faq.joins.kernel.build_kernel`, :func:`faq.joins.kernel.run_kernel`).
One shuffle, no broadcast variable, no collect: it runs on Spark Connect.

A cell holds about ``Σ_R |R| / Π_{v ∈ R} share_v`` rows; the shares (the
plan's grid) are chosen without Spark by :mod:`faq.hypergraph.shares`.

A strategy layer of the generic join (the map is in :mod:`faq.joins.generic`,
which calls :func:`partitioned_join`): above the numpy kernel
(:mod:`faq.joins.kernel`) and the uses' Spark helpers (:mod:`faq.joins.uses`).
:func:`join_cell` and :func:`join_cell_in_process`, which the cells'
``applyInArrow`` bodies call, run in Spark's Python workers: they stay
module-level functions, found by reference to this module.

Examples
--------
>>> from faq.joins.generic import generic_join
>>> from faq.joins import Frame, VALUE_COLUMN
>>> from faq.semirings import COUNTING
>>> from faq.factor import factor_of
>>> edge = factor_of([(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1), (1, 3, 1)], ["s", "t"], "counting").df
>>> ab, ac, bc = (Frame(edge.toDF(x, y, VALUE_COLUMN), (x, y)) for x, y in ("ab", "ac", "bc"))
>>> out = generic_join([ab, ac, bc], [], COUNTING, ["a", "b", "c"],
...                    strategy="partitioned", grid={"a": 2, "b": 2, "c": 2})
>>> out.note
'partitioned grid a=2 × b=2 × c=2 (8 cells)'
>>> sorted(map(tuple, out.df.collect()))
[(0, 1, 2, 1), (1, 2, 3, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from faq.errors import PlanError
from faq.joins.kernel import BATCH_ROWS, build_kernel, run_kernel
from faq.joins.task_index import output_names
from faq.joins.uses import Use, check_integral, normalised, with_product

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.joins.frame import Aggregation
    from faq.semirings import Semiring
    from faq.semirings.numpy_backend import NumpyForm

# Column names of the partitioned rows (internal: query variables never start with "__").
CELL_COLUMN = "__cell"
USE_COLUMN = "__use"
# Cell groups per core of the default parallelism (skewed cells need slack).
PARTITIONS_PER_CORE = 4


# --- on Spark ------------------------------------------------------------------------


def partitioned_join(
    spark: "SparkSession",
    uses: Sequence[Use],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: "Semiring",
    grid: Optional[Mapping[str, int]] = None,
    aggregate: Optional["Aggregation"] = None,
    ops: Optional["NumpyForm"] = None,
    binary_kernel: Optional[str] = None,
    compiled: bool = True,
) -> tuple["DataFrame", tuple[str, ...], str, bool]:
    """The partitioned strategy: (DataFrame, its variables, what it did, whether its rows are final).

    Each use's rows get a cell per grid coordinate (replicated along the
    dimensions it does not hold); the rows of all uses, tagged with the use,
    are grouped by cell and each cell runs the broadcast kernel on its rows
    (``groupBy(cell).applyInArrow``).  With ``ops`` (numpy ⊗/⊕ for
    ``aggregate``) cells emit partial aggregates over ``aggregate.keep``;
    otherwise every binding with each valued use's value, multiplied here
    as Spark Columns (as the broadcast strategy does).  ``grid`` is the
    share per variable (the plan's; None: sized here for the default
    parallelism, every relation taken as equally large).

    Where the cells ⊕-aggregate, or the values are an array ring's, each
    cell runs the in-process join itself (:func:`faq.joins.local.join_local`,
    :func:`join_cell_in_process`): the merges ``binary_kernel`` names, or the
    generic join's kernel (the compiled loop unless ``compiled`` is False),
    exactly as a step placed on the driver runs -- the same kernels, on the
    cell's rows.  The rows are final (one per key, fully ⊕-combined: the
    fourth item) when every split variable is kept, since each kept key then
    lies in one cell.
    """
    from pyspark.sql.types import LongType, StructField, StructType

    from faq.joins.frame import VALUE_COLUMN
    from faq.joins.merges import binary_note
    from faq.spark import default_parallelism
    from faq.workers import ensure_workers

    check_integral(uses)
    ensure_workers(spark)  # the cells run faq's Python on the workers: check once that they can
    if grid is None:
        from faq.hypergraph.shares import shares

        grid = shares(order, [u.attributes for u in uses], [1] * len(uses), default_parallelism(spark))
    share = {v: max(1, int(grid.get(v, 1))) for v in order}
    dims = [v for v in order if share[v] > 1]
    stride, cells = {}, 1
    for v in reversed(dims):  # mixed radix, the first dimension most significant
        stride[v], cells = cells, cells * share[v]
    value_type = spark_value_type(semiring)
    width = max(len(u.attributes) for u in uses)
    valued = [i for i, u in enumerate(uses) if u.valued]

    ops, note = _cell_aggregation(uses, valued, aggregate, ops)
    rows = _cell_rows(uses, order, semiring, share, dims, stride, width, value_type)
    # Several cells per task at most (one group at a time in memory), enough tasks for every core.
    partitions = max(1, min(cells, default_parallelism(spark) * PARTITIONS_PER_CORE))
    split = " × ".join(f"{v}={share[v]}" for v in dims) or "1"
    grid_note = f"partitioned grid {split} ({cells} cells)"
    if ops is not None or semiring.structured:
        if aggregate is not None and ops is None:
            raise PlanError(reason=f"the partitioned strategy cannot ⊕-aggregate {semiring.name} values in its "
                                   "cells without a numpy form, nor list them: join this bag in binary joins")
        out = tuple(aggregate.keep) if ops is not None else tuple(variables)
        spec = _InProcessSpec(
            attributes=[u.attributes for u in uses], valued=valued, order=tuple(order), out=out,
            semiring=semiring, aggregate=aggregate if ops is not None else None,
            binary_kernel=binary_kernel, compiled=compiled)
        schema = StructType([StructField(v, LongType()) for v in out] + [StructField(VALUE_COLUMN, value_type)])
        df = rows.repartition(partitions, CELL_COLUMN).groupBy(CELL_COLUMN).applyInArrow(
            _in_process_function(spec), schema)
        kernel = binary_note(binary_kernel) if binary_kernel else (
            "in-process generic join" + ("" if compiled else ", numpy kernel"))
        final = ops is not None and all(v in out for v in dims)
        how = f"{note}; " if note else ""
        return df, out, f"{grid_note}; {how}each cell runs the {kernel}", final

    # No numpy ⊕ for these cells (or int64 partial sums that could overflow): every binding is listed.
    out, names = output_names(None, variables, valued)
    schema = StructType([StructField(v, LongType()) for v in out] +
                        [StructField(n, value_type) for n in names[len(out):]])
    spec = _CellSpec(
        attributes=[u.attributes for u in uses], valued=valued, order=tuple(order), variables=tuple(variables),
        semiring=semiring, aggregate=None, ops=None, names=names, n_out=len(out),
        value_type=semiring.value_type,
    )
    df = rows.repartition(partitions, CELL_COLUMN).groupBy(CELL_COLUMN).applyInArrow(_cell_function(spec), schema)
    note = grid_note + (f"; {note}" if note else "")
    return with_product(df, out, valued, semiring), out, note, False


def spark_value_type(semiring: "Semiring") -> Any:
    """The Spark type of ``semiring``'s values: bigint, double, boolean, or an array ring's array of doubles.

    >>> from faq.semirings import COUNTING, cofactor
    >>> spark_value_type(COUNTING).simpleString(), spark_value_type(cofactor(1)).simpleString()
    ('bigint', 'array<double>')
    """
    from pyspark.sql.types import ArrayType, BooleanType, DoubleType, LongType

    if semiring.structured:
        return ArrayType(DoubleType(), containsNull=False)
    return {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType()}[semiring.value_type]


def _cell_aggregation(
    uses: Sequence[Use], valued: Sequence[int], aggregate: Optional["Aggregation"], ops: Optional["NumpyForm"]
) -> tuple[Optional["NumpyForm"], str]:
    """``ops`` if every cell may ⊕-aggregate (None: list), and the note saying which.

    Integer partial sums: the driver checks one bound for every cell (from each valued use's
    largest magnitude, one aggregate), so that all cells aggregate or all list (one schema).
    """
    from faq.joins.partial import INT_LIMIT, integer_bound

    if ops is not None and ops.integral and valued:
        maxima = _largest_magnitudes(uses, valued)
        found = integer_bound(ops, [np.array([m], dtype=np.int64) for m in maxima])
        if found is None:
            return None, f"every binding listed: no int64 overflow bound for the ⊗/⊕ of {ops.name}"
        if found > INT_LIMIT // 2:
            return None, f"every binding listed: values up to {found} could overflow int64 partial sums"
    if ops is None:
        return None, ""
    return ops, f"⊕ of {ops.name.split('/')[1]} inside tasks onto ({', '.join(aggregate.keep)})"


def _cell_rows(
    uses: Sequence[Use], order: Sequence[str], semiring: "Semiring", share: Mapping[str, int],
    dims: Sequence[str], stride: Mapping[str, int], width: int, value_type: Any,
) -> "DataFrame":
    """Every use's rows with their cell (replicated along the dimensions the use does not hold), tagged."""
    from pyspark.sql import functions as F

    from faq.joins.frame import VALUE_COLUMN

    parts = []
    for i, use in enumerate(uses):
        df = normalised(use)
        keys = [F.col(f"__k{j}").cast("bigint") for j in range(len(use.attributes))]
        coordinate = F.lit(0).cast("bigint")
        missing = []
        for v in dims:
            if v in use.attributes:
                hashed = F.pmod(F.xxhash64(keys[use.attributes.index(v)], F.lit(order.index(v))), F.lit(share[v]))
                coordinate = coordinate + hashed * F.lit(stride[v])
            else:
                missing.append(v)
        if missing:
            # Replicate along the dimensions the use does not hold: one copy per combination of
            # their coordinates, r in 0 .. Π share - 1 read in mixed radix.
            r = F.col("__r")
            inner = 1
            for v in reversed(missing):
                coordinate = coordinate + F.pmod(F.floor(r / F.lit(inner)), F.lit(share[v])) * F.lit(stride[v])
                inner *= share[v]
            df = df.withColumn("__r", F.explode(F.sequence(F.lit(0), F.lit(inner - 1)).cast("array<bigint>")))
        columns = [coordinate.cast("int").alias(CELL_COLUMN), F.lit(i).alias(USE_COLUMN)]
        columns += [keys[j].alias(f"__k{j}") if j < len(keys) else F.lit(None).cast("bigint").alias(f"__k{j}")
                    for j in range(width)]
        value = F.col(VALUE_COLUMN).cast(semiring.value_type) if use.valued else F.lit(None).cast(value_type)
        parts.append(df.select(*columns, value.alias(VALUE_COLUMN)))
    rows = parts[0]
    for part in parts[1:]:
        rows = rows.unionByName(part)
    return rows


def _largest_magnitudes(uses: Sequence[Use], valued: Sequence[int]) -> list[int]:
    """max |value| of each valued use (one Spark job; one scalar per use comes back, not data)."""
    from pyspark.sql import functions as F

    from faq.joins.frame import VALUE_COLUMN

    per_use = [
        uses[i].frame.df.agg(F.max(F.abs(F.col(VALUE_COLUMN).cast("bigint"))).alias("m")).select(
            F.lit(i).alias("i"), "m")
        for i in valued
    ]
    union = per_use[0]
    for part in per_use[1:]:
        union = union.unionByName(part)
    found = {r["i"]: int(r["m"] or 0) for r in union.collect()}
    return [found.get(i, 0) for i in valued]


@dataclass(frozen=True)
class _CellSpec:
    """What every cell's kernel needs besides its rows (pickled into the function)."""

    attributes: list[tuple[str, ...]]
    valued: list[int]
    order: tuple[str, ...]
    variables: tuple[str, ...]
    semiring: Any
    aggregate: Any
    ops: Any
    names: list[str]
    n_out: int
    value_type: str = "bigint"  # the semiring's (Spark SQL name), for values put back in a cell


def _cell_function(spec: _CellSpec) -> Any:
    """The ``applyInArrow`` body for ``spec``: Arrow batches of one cell in, bindings or partials out.

    Type hints (as objects: pyspark reads them to pick its iterator form)
    make it stream its output batches.
    """
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from join_cell(list(batches), spec)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def join_cell(batches: Sequence[Any], spec: _CellSpec) -> Iterator[Any]:
    """The local join of one cell (no Spark): its rows as Arrow batches in, Arrow batches out."""
    import pyarrow as pa

    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    use = table.column(USE_COLUMN).to_numpy()
    collected = []
    for i, attributes in enumerate(spec.attributes):
        mine = np.flatnonzero(use == i)
        if not len(mine):
            return  # a relation with no row in this cell: no binding lies here
        keys = [table.column(f"__k{j}").take(mine).to_numpy().astype(np.int64, copy=False)
                for j in range(len(attributes))]
        values = table.column("__v").take(mine).to_numpy(zero_copy_only=False) if i in spec.valued else None
        collected.append((keys, values))
    kernel, n_seeds, _ = build_kernel(spec.attributes, [[i] for i in range(len(collected))], collected,
                                      spec.order, spec.variables, spec.semiring, spec.aggregate, spec.ops)
    if n_seeds == 0:
        return
    seeds = (pa.record_batch([pa.array(np.arange(low, min(low + BATCH_ROWS, n_seeds)))], names=["id"])
             for low in range(0, n_seeds, BATCH_ROWS))
    for batch in run_kernel(seeds, kernel):
        if spec.ops is not None or list(batch.schema.names) == spec.names:
            yield batch
            continue
        # The kernel drops the values of a use that are all one in this cell: put the one back.
        one = spec.semiring.python_value(spec.semiring.one)
        kind = {"bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}[spec.value_type]
        arrays = [batch.column(n) if n in batch.schema.names else pa.array([one] * batch.num_rows, type=kind)
                  for n in spec.names]
        yield pa.RecordBatch.from_arrays(arrays, names=spec.names)


# --- in each cell: the in-process join ---------------------------------------------------------


@dataclass(frozen=True)
class _InProcessSpec:
    """What every cell's in-process join needs besides its rows (pickled into the function).

    ``out`` are the output's variables (the kept ones when ``aggregate`` is
    given, else every variable); ``binary_kernel`` the merges to run (None:
    the generic join's kernel, compiled unless ``compiled`` is False).
    """

    attributes: list[tuple[str, ...]]
    valued: list[int]
    order: tuple[str, ...]
    out: tuple[str, ...]
    semiring: Any
    aggregate: Any
    binary_kernel: Optional[str]
    compiled: bool


def _in_process_function(spec: _InProcessSpec) -> Any:
    """The ``applyInArrow`` body for ``spec``: the cell's rows in, its output as one Arrow batch."""
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from join_cell_in_process(list(batches), spec)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def join_cell_in_process(batches: Sequence[Any], spec: _InProcessSpec) -> Iterator[Any]:
    """One cell joined by :func:`faq.joins.local.join_local` (no Spark): Arrow batches in, one batch out.

    The rows of each use become a :class:`~faq.joins.table.Table` (its keys as
    int64, its values in the semiring's numpy form: an array ring's as
    ``(n, w)``), and the cell's tables are joined as a step on the driver
    joins them, on one thread (the tasks are the parallelism here).

    >>> import pyarrow as pa
    >>> from faq.joins.frame import Aggregation
    >>> from faq.semirings import COUNTING
    >>> rows = pa.record_batch({"__use": [0, 0, 1], "__k0": [1, 2, 2], "__k1": [5, 6, 7],
    ...                         "__v": [1, 1, 1]})
    >>> spec = _InProcessSpec([("a", "b"), ("a", "c")], [0, 1], ("a", "b", "c"), ("a",), COUNTING,
    ...                       Aggregation(("a",), COUNTING), "sort-merge", True)
    >>> [b.to_pydict() for b in join_cell_in_process([rows], spec)]
    [{'a': [2], '__v': [1]}]
    """
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy, int64_array, spark_arrays, to_numpy
    from faq.joins.frame import VALUE_COLUMN
    from faq.joins.local import join_local
    from faq.joins.strategy import NamedStrategy
    from faq.joins.table import Table
    from faq.semirings.numpy_backend import as_values

    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    use = to_numpy(table.column(USE_COLUMN))
    relations, indicators = [], []
    for i, attributes in enumerate(spec.attributes):
        mine = np.flatnonzero(use == i)
        if not len(mine):
            return  # a relation with no row in this cell: no binding lies here
        rows = table.take(pa.array(mine))
        keys = {a: np.asarray(to_numpy(rows.column(f"__k{j}")), dtype=np.int64) for j, a in enumerate(attributes)}
        if i in spec.valued:
            relations.append(Table(attributes, keys, as_values(spec.semiring, rows.column(VALUE_COLUMN))))
        else:
            indicators.append(Table(attributes, keys, None))
    strategy = NamedStrategy("binary" if spec.binary_kernel else "partitioned", binary_kernel=spec.binary_kernel,
                             numpy_kernel=not spec.compiled)
    out, _ = join_local(strategy, relations, indicators, spec.semiring, spec.order, spec.aggregate, threads=1)
    if not out.rows:
        return
    columns = [int64_array(out.keys[v]) for v in spec.out]
    values = spark_arrays(out.values) if spec.semiring.structured else arrow_from_numpy(np.asarray(out.values))
    yield pa.RecordBatch.from_arrays([*columns, values], names=[*spec.out, VALUE_COLUMN])
