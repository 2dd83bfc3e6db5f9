"""The partitioned generic join: HyperCube / Shares partitioning, the numpy kernel inside each cell.

When a bag's relations are too large for every task to hold the whole index
(the broadcast strategy), the variables of the bag are hashed onto the
dimensions of a grid of ``p = Π share_v`` cells (Afrati & Ullman's Shares;
Beame, Koutris & Suciu's HyperCube; Myria runs a local worst-case optimal
join in each cell).  A row of a relation ``R`` has a coordinate on every
dimension of a variable it holds (``hash_v(value) mod share_v``) and is
replicated along the dimensions of the variables it does not hold; every
binding of the join then lies in exactly one cell, the one of its variables'
hashes, and each cell holds every row that binding needs.  So each cell runs
the broadcast strategy's kernel (:func:`faq.joins.generic.build_kernel`,
:func:`faq.joins.generic.run_kernel`) on its own rows, and the cells' results
are disjoint: counts are exact, and with in-task aggregation each cell emits
partial aggregates that the caller's group-by ⊕-combines (the broadcast
strategy's contract).  One shuffle, no broadcast variable, no collect: it
runs on Spark Connect.

A cell holds about ``Σ_R |R| / Π_{v ∈ R} share_v`` rows; :func:`shares`
picks the shares that minimise it for a number of cells, and :func:`grid_for`
the number of cells whose estimated index fits a memory budget.  For a
triangle on ``p`` cells each relation is cut into ``p^(2/3)`` pieces (and
replicated ``p^(1/3)`` times); patterns with many variables replicate more,
degrading toward broadcast.

Examples
--------
>>> s = shares(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [100, 100, 100], tasks=8)
>>> s
{'a': 2, 'b': 2, 'c': 2}
>>> task_rows([("a", "b"), ("a", "c"), ("b", "c")], [100, 100, 100], s)
75.0
>>> g = grid_for(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [1000] * 3,
...              budget_bytes=40_000, parallelism=2)
>>> g.cells, g.describe()
(16, 'grid a=4 × b=2 × c=2 (16 cells), est. 500 rows / 31.2 KiB per task')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

import numpy as np

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.joins.frame import Aggregation
    from faq.joins.generic import _Use
    from faq.semirings import Semiring
    from faq.semirings.numpy_backend import NumpyForm

# Bytes of the in-memory index per input row (the broadcast index, or a cell's): for a binary
# relation its two trie levels' entries and CSR offsets as int64 (~24 B), the value (8 B), and the
# hash table a level builds once it is validated against often enough (about four 8-byte slots per
# entry, 32 B; faq.joins.csr.HASH_SLOTS_PER_ENTRY).  Keys are int64 (faq.joins.csr.Encoding).
BYTES_PER_INDEX_ROW = 64
# Most cells a grid may have (each cell is one group of a Spark group-by, run as one kernel).
MAX_CELLS = 1024
# Share vectors enumerated exhaustively up to this many; beyond, shares grow greedily.
EXHAUSTIVE_LIMIT = 200_000
# Column names of the partitioned rows (internal: query variables never start with "__").
CELL_COLUMN = "__cell"
USE_COLUMN = "__use"


def task_rows(
    relation_variables: Sequence[Sequence[str]], relation_rows: Sequence[float], share: Mapping[str, int]
) -> float:
    """Estimated rows one cell holds: ``Σ_R |R| / Π_{v ∈ R} share_v``.

    >>> task_rows([("a", "b"), ("c",)], [80, 10], {"a": 4, "b": 2})
    20.0
    """
    total = 0.0
    for variables, rows in zip(relation_variables, relation_rows):
        total += float(rows) / math.prod(share.get(v, 1) for v in set(variables))
    return total


def shares(
    variables: Sequence[str],
    relation_variables: Sequence[Sequence[str]],
    relation_rows: Sequence[float],
    tasks: int,
) -> dict[str, int]:
    """Integer share per variable, product at most ``tasks``, minimising the rows per cell.

    Parameters
    ----------
    variables : sequence of str
        The bag's variables (the grid's dimensions, in this order).
    relation_variables : sequence of sequence of str
        The variables of each relation (and indicator) of the bag.
    relation_rows : sequence of float
        Their rows (estimates are fine).
    tasks : int
        Most cells (``Π share_v ≤ tasks``).

    Returns
    -------
    dict
        ``{variable: share}``; a variable no relation holds gets 1 (splitting
        it would only replicate).  Among equal estimates the grid with fewer
        cells wins, then the most even one, then the earliest variables get
        the larger shares.  An
        exhaustive search over share vectors (at most
        :data:`EXHAUSTIVE_LIMIT` of them), else a greedy one doubling the
        share that lowers the estimate most.

    Examples
    --------
    >>> shares(["a", "b", "c"], [("a", "b"), ("a", "c"), ("b", "c")], [1, 1, 1], tasks=27)
    {'a': 3, 'b': 3, 'c': 3}
    >>> shares(["a", "b", "z"], [("a", "b")], [10], tasks=4)   # z is in no relation
    {'a': 2, 'b': 2, 'z': 1}
    >>> shares(["a", "b"], [("a", "b")], [10], tasks=1)
    {'a': 1, 'b': 1}
    """
    tasks = max(1, int(tasks))
    held = {v for vs in relation_variables for v in vs}
    dims = [v for v in dict.fromkeys(variables) if v in held]
    ones = {v: 1 for v in dict.fromkeys(variables)}
    if tasks == 1 or not dims:
        return ones

    def cost(vector: Sequence[int]) -> float:
        return task_rows(relation_variables, relation_rows, dict(zip(dims, vector)))

    if _vectors_at_most(len(dims), tasks, EXHAUSTIVE_LIMIT):
        best: Optional[tuple] = None
        for vector in _vectors(len(dims), tasks):
            # Smallest estimate, then fewest cells, then the most even (skew: a heavy value of one
            # variable is still spread by the others), then larger shares on earlier variables.
            key = (cost(vector), math.prod(vector), max(vector), tuple(-s for s in vector))
            if best is None or key < best[0]:
                best = (key, vector)
        chosen = best[1]
    else:
        chosen = [1] * len(dims)
        while True:
            options = [
                (cost(chosen[:i] + [2 * chosen[i]] + chosen[i + 1:]), i)
                for i in range(len(dims)) if math.prod(chosen) * 2 <= tasks
            ]
            if not options or min(options)[0] >= cost(chosen):
                break
            chosen[min(options)[1]] *= 2
    return {**ones, **dict(zip(dims, chosen))}


def _vectors(k: int, bound: int, prefix: tuple = ()) -> Iterator[tuple[int, ...]]:
    """Every vector of ``k`` positive integers whose product is at most ``bound``."""
    if k == 0:
        yield prefix
        return
    for s in range(1, bound + 1):
        yield from _vectors(k - 1, bound // s, prefix + (s,))


def _vectors_at_most(k: int, bound: int, limit: int) -> bool:
    """Whether :func:`_vectors` yields at most ``limit`` vectors (counted without listing them)."""
    counts: dict[tuple[int, int], int] = {}

    def count(k: int, bound: int) -> int:
        if k == 0:
            return 1
        if (k, bound) not in counts:
            total, s = 0, 1
            while s <= bound and total <= limit:
                total += count(k - 1, bound // s)
                s += 1
            counts[k, bound] = total
        return counts[k, bound]

    return count(k, bound) <= limit


@dataclass(frozen=True)
class Grid:
    """A HyperCube grid and what it costs per task (a cell).

    Attributes
    ----------
    shares : tuple of (str, int)
        Share per variable, in the bag's order (1: not split).
    cells : int
        ``Π shares``.
    rows_per_task : float
        Estimated input rows of one cell (:func:`task_rows`).
    bytes_per_task : float
        Their index's estimated bytes (:data:`BYTES_PER_INDEX_ROW` per row).
    """

    shares: tuple[tuple[str, int], ...]
    cells: int
    rows_per_task: float
    bytes_per_task: float

    def describe(self) -> str:
        split = [f"{v}={s}" for v, s in self.shares if s > 1] or ["1"]
        return (f"grid {' × '.join(split)} ({self.cells} cells), est. {self.rows_per_task:.3g} rows / "
                f"{format_bytes(self.bytes_per_task)} per task")


def grid_for(
    variables: Sequence[str],
    relation_variables: Sequence[Sequence[str]],
    relation_rows: Sequence[float],
    budget_bytes: float,
    parallelism: int,
    max_cells: int = MAX_CELLS,
) -> Grid:
    """The grid of fewest cells (at least ``parallelism``) whose estimated cell index fits ``budget_bytes``.

    The number of cells tried doubles from ``parallelism`` (every core busy)
    up to ``max_cells``; more cells replicate more rows, so the first that
    fits is taken (the last one when none does: the plan then says the
    budget is exceeded).

    >>> grid_for(["a", "b"], [("a", "b")], [100], budget_bytes=1e9, parallelism=4).describe()
    'grid a=2 × b=2 (4 cells), est. 25 rows / 1.56 KiB per task'
    """
    tasks = max(1, int(parallelism))
    while True:
        share = shares(variables, relation_variables, relation_rows, tasks)
        rows = task_rows(relation_variables, relation_rows, share)
        if rows * BYTES_PER_INDEX_ROW <= budget_bytes or tasks * 2 > max_cells:
            break
        tasks *= 2
    return Grid(tuple(share.items()), math.prod(share.values()), rows, rows * BYTES_PER_INDEX_ROW)


def format_bytes(n: float) -> str:
    """``n`` bytes for people, three digits at most: ``format_bytes(3 * 2**20)`` is ``'3 MiB'``.

    >>> format_bytes(512), format_bytes(1536), format_bytes(1_028_096), format_bytes(3 * 2**30)
    ('512 B', '1.5 KiB', '0.98 MiB', '3 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1000 or unit == "GiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"  # pragma: no cover


# --- on Spark ------------------------------------------------------------------------


def partitioned_join(
    spark: "SparkSession",
    uses: Sequence["_Use"],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: "Semiring",
    grid: Mapping[str, int],
    aggregate: Optional["Aggregation"] = None,
    ops: Optional["NumpyForm"] = None,
) -> tuple["DataFrame", tuple[str, ...], str]:
    """The partitioned strategy: (DataFrame, its variables, what it did).

    Each use's rows get a cell per grid coordinate (replicated along the
    dimensions it does not hold); the rows of all uses, tagged with the use,
    are grouped by cell and each cell runs the broadcast kernel on its rows
    (``groupBy(cell).applyInArrow``).  With ``ops`` (numpy ⊗/⊕ for
    ``aggregate``) cells emit partial aggregates over ``aggregate.keep``;
    otherwise every binding with each valued use's value, multiplied here
    as Spark Columns (as the broadcast strategy does).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    from faq.joins.frame import VALUE_COLUMN
    from faq.joins.generic import PARTITIONS_PER_CORE, _check_integral, _normalised
    from faq.joins.partial import INT_LIMIT, integer_bound
    from faq.semirings.spark_backend import columns as spark_columns
    from faq.spark import default_parallelism

    _check_integral(uses)
    share = {v: max(1, int(grid.get(v, 1))) for v in order}
    dims = [v for v in order if share[v] > 1]
    stride, cells = {}, 1
    for v in reversed(dims):  # mixed radix, the first dimension most significant
        stride[v], cells = cells, cells * share[v]
    value_type = {"bigint": LongType(), "double": DoubleType(), "boolean": BooleanType()}[semiring.value_type]
    width = max(len(u.attributes) for u in uses)
    valued = [i for i, u in enumerate(uses) if u.valued]

    # Integer partial sums: the driver checks one bound for every cell (from each valued use's
    # largest magnitude, one aggregate), so that all cells aggregate or all list (one schema).
    note = ""
    if ops is not None and ops.integral and valued:
        maxima = _largest_magnitudes(uses, valued)
        found = integer_bound(ops, [np.array([m], dtype=np.int64) for m in maxima])
        if found is None:
            ops, note = None, f"every binding listed: no int64 overflow bound for the ⊗/⊕ of {ops.name}"
        elif found > INT_LIMIT // 2:
            ops, note = None, f"every binding listed: values up to {found} could overflow int64 partial sums"
    if ops is not None:
        note = f"⊕ of {ops.name.split('/')[1]} inside tasks onto ({', '.join(aggregate.keep)})"

    parts = []
    for i, use in enumerate(uses):
        df = _normalised(use)
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

    if ops is not None:
        out = tuple(aggregate.keep)
        names = [*out, VALUE_COLUMN]
    else:
        out = tuple(variables)
        names = [*out, *(f"__g{i}" for i in valued)]
    schema = StructType([StructField(v, LongType()) for v in out] +
                        [StructField(n, value_type) for n in names[len(out):]])
    spec = _CellSpec(
        attributes=[u.attributes for u in uses], valued=valued, order=tuple(order), variables=tuple(variables),
        semiring=semiring, aggregate=aggregate, ops=ops, names=names, n_out=len(out),
        value_type=semiring.value_type,
    )
    # Several cells per task at most (one group at a time in memory), enough tasks for every core.
    partitions = max(1, min(cells, default_parallelism(spark) * PARTITIONS_PER_CORE))
    df = rows.repartition(partitions, CELL_COLUMN).groupBy(CELL_COLUMN).applyInArrow(_cell_function(spec), schema)
    split = " × ".join(f"{v}={share[v]}" for v in dims) or "1"
    note = f"partitioned grid {split} ({cells} cells)" + (f"; {note}" if note else "")
    if ops is not None:
        return df.select(*out, F.col(VALUE_COLUMN)), out, note
    columns = spark_columns(semiring)
    product = columns.one()
    for k, i in enumerate(valued):
        product = F.col(f"__g{i}") if k == 0 else columns.mul(product, F.col(f"__g{i}"))
    return df.select(*out, product.alias(VALUE_COLUMN)), out, note


def _largest_magnitudes(uses: Sequence["_Use"], valued: Sequence[int]) -> list[int]:
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

    from faq.joins.generic import BATCH_ROWS, build_kernel, run_kernel

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
