"""What each way of computing a learning aggregate over Spark inputs costs, in estimated seconds, before it runs.

Three plans compute the cofactor aggregate ``(n, Σx, Σxxᵀ)`` of tables that
are Spark DataFrames (:func:`faq.learning.covariance` and the others):

``driver``
    every table fetched to the driver (one Arrow collect each), lifted into
    the ring there and joined in-process, factorized: the join is never
    listed.  Possible only when every table fits the fetch budget.
``in-tasks``
    the largest table stays in Spark; the others are fetched, lifted and
    shipped to every machine, and each task of the large table lifts its
    rows and runs the in-process plan over them (:mod:`faq.learning.in_tasks`).
    Possible when that table is used by one atom.
``spark-sql``
    Spark joins the tables and takes count, sums and sums of products of the
    joined rows in one aggregation (:mod:`faq.learning.spark_sql`): the join
    is listed, by Spark's code-generated operators, in parallel.

The prices are linear in a few sizes -- rows and columns read, the ring's
width, the keys a factorized plan joins, the flat join's rows
(:func:`join_rows`: the textbook estimate from the tables' rows and their
join keys' distinct counts) -- with constants
measured on a 2-core machine (see each constant), divided by the cores
Spark uses where the work runs in its tasks, and scaled by this machine's
calibration where one is stored (:mod:`faq.calibration`: a Spark job's fixed
cost, Spark's per-value rate, the fetch's and numpy's, each over the rate
measured where the constants were fitted; ``Sizes.scales``).  They are estimates for
choosing, not promises: every plan's price and the choice are written in the
answer's notes (``explain``).

Examples
--------
>>> star = Sizes(tables=(TableSize("lineitem", 2_000_000, 8, 4), TableSize("orders", 200_000, 3, 2),
...                      TableSize("part", 20_000, 3, 2)), join_rows=2_000_000, features=8, parallelism=2,
...              big="lineitem")
>>> prices = priced(star)
>>> [p.plan for p in prices], chosen(prices).plan
(['driver', 'in-tasks', 'spark-sql'], 'spark-sql')
>>> many = Sizes(tables=(TableSize("visits", 100_000, 5, 3, keys=1000), TableSize("stock", 100_000, 6, 4, keys=1000)),
...              join_rows=10_000_000, features=7, parallelism=2, big="visits")
>>> [round(p.seconds, 1) for p in priced(many)], chosen(priced(many)).plan
([1.1, 2.3, 10.5], 'driver')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

__all__ = ["TableSize", "Sizes", "Price", "priced", "chosen", "join_rows", "ring_width", "price_lines",
           "DRIVER_SECONDS", "FETCH_SECONDS_PER_VALUE", "LIFT_SECONDS_PER_VALUE", "JOIN_SECONDS_PER_VALUE",
           "SQL_JOB_SECONDS", "SCAN_SECONDS_PER_VALUE", "SQL_SECONDS_PER_SUM", "TASK_JOB_SECONDS",
           "TASK_LIFT_SECONDS_PER_VALUE", "TASK_JOIN_SECONDS_PER_VALUE", "READ_FIXED_SECONDS",
           "READ_SECONDS_PER_VALUE", "STAR_SECONDS_PER_VALUE", "TASK_READ_SECONDS_PER_VALUE"]

# --- constants, measured on this 2-core machine: local[*], warm JVM, bench/bench_regression_spark.py's tables
# written to Parquet and read with spark.read.parquet, medians (and minima) of 3 warm runs.  Other engineers'
# test runs kept the load average at 5-8 while they were measured: absolute seconds are about 2-3x an idle
# machine's, the ratios between plans (what the choice uses) less so. ---------------------------------------

#: The driver plan's fixed cost: its fetch jobs (run side by side) and planning.  faq ``placement="driver"``
#: on the 20K-row FK star (1.4-2.2 s) and on the 100K x 100K many-to-many join (0.6-0.8 s), less the
#: per-value terms below.
DRIVER_SECONDS = 0.6
#: Seconds per value (row x column) fetched to the driver: a Parquet scan collected through Arrow and made a
#: pandas DataFrame (``df.toArrow().to_pandas()`` of the 2M-row lineitem's 6 columns: 2.9-4.1 s over 12M).
FETCH_SECONDS_PER_VALUE = 3.0e-7
#: The driver plan's fixed cost when every table is read from its own Parquet files by pyarrow
#: (:func:`faq.parquet_scan.read_scan`: each frame's plan asked of Spark, no job).
READ_FIXED_SECONDS = 0.15
#: Seconds per value read by pyarrow from local Parquet files and made a pandas DataFrame: the 2M-row
#: lineitem's 6 columns in 0.15-0.6 s (``pq.read_table(...).to_pandas()``, load 3-6), over 12M values.
READ_SECONDS_PER_VALUE = 2.5e-8
#: Seconds per fact row per column of the in-process foreign-key star (:mod:`faq.learning.star`: its
#: keys looked up, its features gathered, one matrix product): faq ``placement="driver"`` of the 2M-row FK
#: star as pandas, 0.27-0.42 s over 2M rows x (8 features + 2 lookups).
STAR_SECONDS_PER_VALUE = 1.5e-8
#: Seconds per double of the ring per row lifted and ⊕-combined in-process on the driver: faq
#: ``placement="driver"`` of the many-to-many tables as pandas (0.18-0.23 s), over 200K rows x 36 doubles
#: (there, almost nothing is left to join once the private variables are summed out).
LIFT_SECONDS_PER_VALUE = 2.8e-8
#: Seconds per double of the ring per key joined (⊗) in-process: faq ``placement="driver"`` of the 300K-row FK
#: star as pandas (2.5-3.0 s), less its lift, over its 333K keys x 45 doubles.
JOIN_SECONDS_PER_VALUE = 1.4e-7
#: The flat aggregate's fixed cost (:func:`faq.learning.spark_sql.flat_aggregate`: its broadcasts and
#: aggregation stages): its time on the 20K-row FK star (1.6-1.7 s), less the per-value terms.
SQL_JOB_SECONDS = 1.6
#: Seconds per value Spark reads from Parquet, per core: ``agg`` of ``sum`` of the 2M-row lineitem's 6 columns
#: (0.72 s) less one job (0.27 s), times 2 cores, over 12M values.
SCAN_SECONDS_PER_VALUE = 7.5e-8
#: Seconds per sum per joined row of the one aggregation, per core: the flat aggregate of the 2M-row FK star
#: (4.2-4.3 s, 45 sums) less its fixed and scan terms, times 2 cores, over 2M x 45 (the 10M-row many-to-many
#: join, 36 sums: 8.3 s measured against 10.3 s estimated).
SQL_SECONDS_PER_SUM = 4.9e-8
#: The in-tasks plan's fixed cost (the fetch of the other tables, shipping them, the ``mapInArrow`` job and
#: its Python workers): faq in tasks on the 20K-row FK star (1.7-2.0 s) less its per-value terms.
TASK_JOB_SECONDS = 1.4
#: Seconds per double of the ring per row lifted in a task (Arrow to numpy, the lift), per core: in tasks on
#: the many-to-many join (2.2 s: 100K rows x 36 in the tasks, 1,000 keys to join) less the fixed cost.
TASK_LIFT_SECONDS_PER_VALUE = 3.3e-7
#: Seconds per double of the ring per key joined in a task, per core: in tasks on the 300K-row FK star
#: (7.9-8.6 s) less its fixed cost and lifts, times 2 cores, over 300K keys x 45.
TASK_JOIN_SECONDS_PER_VALUE = 6.0e-7
#: Seconds per value (row x column) a task of a foreign-key star receives from Spark and makes a pandas frame
#: (Arrow batches into the Python worker), per core, beside Spark's scan: a first estimate, which priced the
#: 2M-row star and the 6M-row snowflake from ``spark.read.parquet`` at 3.6 and 7.9 s where they took 3.8 and
#: 7.4 s (``local-cluster[2,1,2048]``, ``bench/bench_regression_spark.py``; both now read their files instead).
TASK_READ_SECONDS_PER_VALUE = 1.0e-7


def ring_width(features: int) -> int:
    """Doubles of the degree-2 cofactor ring over ``features`` values: count, sums and products ``i ≤ j``.

    >>> ring_width(8)
    45
    """
    return 1 + features + features * (features + 1) // 2


@dataclass(frozen=True)
class TableSize:
    """One table as the prices see it.

    Attributes
    ----------
    name : str
    rows : int
        Its rows (from its Parquet footers, else counted).
    columns : int
        Columns read: its keys and the features it lifts.
    features : int
        Features it lifts.
    keys : int, optional
        Its rows once ⊕-combined on the variables it shares (its other variables summed out first): the
        values a factorized plan joins (⊗).  Default: its rows.
    fits : bool
        The driver may fetch it (its copy fits ``spark.faq.fetchMemory``).
    files : bool
        A bare scan of local Parquet files (:mod:`faq.parquet_scan`): the driver reads them (no Spark job,
        :data:`READ_SECONDS_PER_VALUE`), and so do a flat star's tasks, each its share.
    """

    name: str
    rows: int
    columns: int
    features: int
    keys: Optional[int] = None
    fits: bool = True
    files: bool = False

    @property
    def joined(self) -> int:
        """:attr:`keys`, or the rows when not known."""
        return self.rows if self.keys is None else min(self.keys, self.rows)


@dataclass(frozen=True)
class Sizes:
    """What the prices depend on.

    Attributes
    ----------
    tables : tuple of TableSize
    join_rows : float
        Rows of the flat join (:func:`join_rows`).
    features : int
        Features of the aggregate (the ring is :func:`ring_width` of them).
    parallelism : int
        Cores Spark's tasks run on.
    big : str or None
        The table the in-tasks plan would keep in Spark (None: that plan is not possible).
    star : str or None
        The fact table when the join is a foreign-key star the driver runs flat
        (:mod:`faq.learning.star`), else None.
    """

    tables: tuple[TableSize, ...]
    join_rows: float
    features: int
    parallelism: int
    big: Optional[str]
    star: Optional[str] = None
    #: This machine's rates over the fitted constants' (:meth:`faq.calibration.Calibration.scales`); a rate
    #: missing is 1 (the constant as fitted).
    scales: Mapping[str, float] = field(default_factory=dict)

    def scale(self, rate: str) -> float:
        """The factor on a constant standing for ``rate`` (:data:`faq.calibration.RATES`)."""
        return self.scales.get(rate, 1.0)


@dataclass(frozen=True)
class Price:
    """One plan's estimated seconds and what they are made of (``inf``: the plan is not possible)."""

    plan: str
    seconds: float
    detail: str

    def describe(self) -> str:
        """``spark-sql: est 2.1 s (join 2.0M rows × 45 sums, ...)``.

        >>> Price("driver", math.inf, "lineitem does not fit the fetch budget").describe()
        'driver: not possible (lineitem does not fit the fetch budget)'
        """
        if math.isinf(self.seconds):
            return f"{self.plan}: not possible ({self.detail})"
        return f"{self.plan}: est {self.seconds:.2g} s ({self.detail})"


def _count(n: float) -> str:
    """``2.0M``, ``45K``, ``300``."""
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.0f}K"
    return f"{n:.0f}"


def driver_price(sizes: Sizes) -> Price:
    """Fetch every table (one collect each, side by side), lift every row into the ring, join the keys in-process."""
    too_big = [t.name for t in sizes.tables if not t.fits]
    if too_big:
        return Price("driver", math.inf, f"{', '.join(too_big)} does not fit the fetch budget")
    collected = [t for t in sizes.tables if not t.files]
    values = sum(t.rows * t.columns for t in collected)
    read = sum(t.rows * t.columns for t in sizes.tables if t.files)
    rows = sum(t.rows for t in sizes.tables)
    in_process = sizes.scale("in_process")
    seconds = ((DRIVER_SECONDS * sizes.scale("spark_job") if collected else READ_FIXED_SECONDS)
               + values * FETCH_SECONDS_PER_VALUE * sizes.scale("fetch") + read * READ_SECONDS_PER_VALUE * in_process)
    moved = ", ".join(x for x in (f"fetch {_count(values)} values" if values else "",
                                  f"read {_count(read)} values from Parquet" if read else "") if x)
    fact = next((t for t in sizes.tables if t.name == sizes.star), None)
    if fact is not None:
        gathered = fact.rows * (sizes.features + len(sizes.tables) - 1)
        seconds += gathered * STAR_SECONDS_PER_VALUE * in_process
        return Price("driver", seconds, f"{moved}; {fact.name}'s {_count(fact.rows)} rows looked up and summed flat "
                                        f"(foreign-key star)")
    keys = sum(t.joined for t in sizes.tables)
    w = ring_width(sizes.features)
    seconds += (rows * w * LIFT_SECONDS_PER_VALUE + keys * w * JOIN_SECONDS_PER_VALUE) * in_process
    return Price("driver", seconds, f"{moved}; lift {_count(rows)} rows × {w} doubles; join {_count(keys)} keys")


def in_tasks_price(sizes: Sizes) -> Price:
    """The largest table lifted and joined in its own tasks, the others fetched, lifted and shipped."""
    big = next((t for t in sizes.tables if t.name == sizes.big), None)
    if big is None:
        return Price("in-tasks", math.inf, "the largest table is used twice, or the others are too large to ship")
    others = [t for t in sizes.tables if t is not big]
    w = ring_width(sizes.features)
    shipped = sum(t.rows for t in others)
    in_process = sizes.scale("in_process")
    if sizes.star == big.name:  # a foreign-key star: the driver's flat plan in the tasks (faq.learning.in_tasks)
        # The fact's rows: its files read in shares by the tasks (a bare scan), else Spark's scan handed over.
        per_value = (READ_SECONDS_PER_VALUE * in_process if big.files else
                     SCAN_SECONDS_PER_VALUE * sizes.scale("spark_scan") + TASK_READ_SECONDS_PER_VALUE * in_process)
        seconds = (TASK_JOB_SECONDS * sizes.scale("spark_job")
                   + sum(t.rows * t.columns * (READ_SECONDS_PER_VALUE * in_process if t.files else
                                               FETCH_SECONDS_PER_VALUE * sizes.scale("fetch")) for t in others)
                   + (big.rows * big.columns * per_value
                      + big.rows * (sizes.features + len(others)) * STAR_SECONDS_PER_VALUE * in_process)
                   / max(1, sizes.parallelism))
        read = "its files read in shares" if big.files else "its rows handed over by Spark"
        return Price("in-tasks", seconds, f"{big.name}'s {_count(big.rows)} rows looked up and summed flat in its "
                                          f"tasks ({read}; foreign-key star); {_count(shipped)} rows of the others "
                                          "shipped")
    seconds = (TASK_JOB_SECONDS * sizes.scale("spark_job")
               + sum(t.rows * t.columns for t in others) * FETCH_SECONDS_PER_VALUE * sizes.scale("fetch")
               + (shipped * w * LIFT_SECONDS_PER_VALUE + sum(t.joined for t in others) * w * JOIN_SECONDS_PER_VALUE
                  ) * in_process
               + (big.rows * big.columns * SCAN_SECONDS_PER_VALUE * sizes.scale("spark_scan")
                  + (big.rows * w * TASK_LIFT_SECONDS_PER_VALUE + big.joined * w * TASK_JOIN_SECONDS_PER_VALUE)
                  * in_process) / max(1, sizes.parallelism))
    return Price("in-tasks", seconds, f"{big.name}'s {_count(big.rows)} rows × {w} doubles lifted in its tasks, "
                                      f"{_count(big.joined)} keys joined; {_count(shipped)} rows of the others shipped")


def spark_sql_price(sizes: Sizes) -> Price:
    """Spark reads every table, joins them and sums the products of every joined row, on every core."""
    cores = max(1, sizes.parallelism)
    scanned = sum(t.rows * t.columns for t in sizes.tables)
    sums = ring_width(sizes.features)
    seconds = SQL_JOB_SECONDS * sizes.scale("spark_job") + (
        scanned * SCAN_SECONDS_PER_VALUE + sizes.join_rows * sums * SQL_SECONDS_PER_SUM) * sizes.scale("spark_scan") / cores
    return Price("spark-sql", seconds, f"join {_count(sizes.join_rows)} rows × {sums} sums; scan {_count(scanned)} values")


def priced(sizes: Sizes) -> list[Price]:
    """Every plan's price, in the order driver, in-tasks, spark-sql."""
    return [driver_price(sizes), in_tasks_price(sizes), spark_sql_price(sizes)]


def chosen(prices: Sequence[Price], allowed: Optional[Sequence[str]] = None) -> Price:
    """The cheapest of ``prices`` among the ``allowed`` plans (default all); on a tie, the first listed.

    >>> chosen([Price("driver", 2.0, ""), Price("spark-sql", 1.0, "")], allowed=["driver"]).plan
    'driver'
    """
    pool = [p for p in prices if allowed is None or p.plan in allowed]
    return min(pool, key=lambda p: p.seconds)


def price_lines(prices: Sequence[Price], choice: Price, why: str = "") -> tuple[str, ...]:
    """The notes: one line per plan, then the choice.

    >>> price_lines([Price("driver", 1.0, "fetch 10 rows"), Price("spark-sql", 2.0, "join 10 rows × 6 sums")],
    ...             Price("driver", 1.0, ""))
    ('priced: driver: est 1 s (fetch 10 rows)', 'priced: spark-sql: est 2 s (join 10 rows × 6 sums)', 'chosen driver')
    """
    return (*(f"priced: {p.describe()}" for p in prices), f"chosen {choice.plan}" + (f" ({why})" if why else ""))


def join_rows(atoms: Sequence[tuple[str, Sequence[str]]], rows: Mapping[str, int],
              distinct: Mapping[tuple[str, str], int]) -> float:
    """The flat join's rows, by the textbook estimate: the product of the tables' rows, divided, for each
    variable shared by ``k`` atoms, by the ``k - 1`` largest of its distinct counts in them.

    ``distinct[(table, variable)]`` is the distinct values of the variable's column in the table; a
    missing one is taken as ``min(rows, the largest other count)`` (the values of the table with fewer
    distinct keys are among the other's: "containment").  Exact for a foreign-key join (it has the
    fact table's rows) and for uniform many-to-many ones.

    Parameters
    ----------
    atoms : sequence of (str, sequence of str)
        Each atom's table and variables.
    rows : mapping
        Rows per table.
    distinct : mapping
        Distinct values per (table, variable), where known.

    Examples
    --------
    >>> star = [("l", ("o", "p")), ("o", ("o",)), ("p", ("p",))]
    >>> join_rows(star, {"l": 2_000_000, "o": 200_000, "p": 20_000}, {("o", "o"): 200_000, ("p", "p"): 20_000})
    2000000.0
    >>> join_rows([("r", ("a", "b")), ("s", ("b", "c"))], {"r": 1000, "s": 500}, {("s", "b"): 10})
    50000.0
    """
    estimate = 1.0
    for table, _ in atoms:
        estimate *= rows[table]
    variables = dict.fromkeys(v for _, vs in atoms for v in vs)
    for v in variables:
        holding = [table for table, vs in atoms if v in vs]
        if len(holding) < 2:
            continue
        known = [distinct[(t, v)] for t in holding if (t, v) in distinct]
        most = max(known, default=0)
        counts = sorted(distinct.get((t, v), min(rows[t], most) if most else rows[t]) for t in holding)
        for d in counts[1:]:
            estimate /= max(1, d)
    return estimate
