"""The price of each way to run a one-shot as-of join of Spark DataFrames, in estimated seconds.

Issue 49's rule: for data in Spark, faq's default must never be slower than
the plain Spark a user would write -- for an as-of join, Spark's window
formulation (:mod:`faq.asof.spark_window`).  So :mod:`faq.asof.oneshot`
prices three ways before anything runs and takes the cheapest it may:

``spark-window``
    Spark's own operators: one shuffle and sort of both sides, a running
    window (:func:`faq.asof.spark_window.asof_window`);
``executors``
    the per-partition kernel: the same shuffle, then each partition through
    Arrow into faq's kernel and back (:func:`faq.asof.on_spark.asof_on_spark`);
``driver``
    both sides fetched (Arrow), joined in-process, the result handed back as
    a Spark DataFrame built from driver memory.

Each price is ``fixed + per_cell × cells``: the seconds a job costs before
its first row, and a rate over the cells it moves -- both sides' input cells
(rows × columns) and the result's cells (left's rows × the result's columns).

How the constants were measured (this machine: 2 cores, ``local[2]``, Spark 4
classic session, warm JVM; 1,000 keys, int64 times, both sides read with
``spark.read.parquet``, the result consumed by one aggregate):

* the large point, 1M × 1M rows (10M cells): the calm run of
  ``python -m bench.bench_asof`` committed in ``bench/results/asof.json``
  (commit bc60a11, load average 0.45-1.26), warm medians: Spark's window
  1.68 s, the driver 2.17 s, the per-partition kernel 2.37 s -- the window
  query there has the plan :func:`~faq.asof.spark_window.asof_window` makes
  (the same exchange, sort and window; checked with ``explain``) but one
  struct (a right row whose value is null must still match) and ties
  ordered: faq's form took 10-13% more in interleaved runs, so its rate is
  that query's times 1.12;
* the small point, 10k × 10k: the driver's 0.14 s in the same calm run;
  the window's and the kernel's extra start-up over the driver from
  ``python -m bench.bench_asof_spark --calibrate --calibrate-rows 10000,50000
  --repeat 5`` (the ways taking turns, the fastest of five warm runs: driver
  0.63 s, kernel 1.09 s, window 1.28 s), scaled by the driver's calm/loaded
  ratio (0.14/0.63) -- that run shared the 2 cores with other work (load
  average 6-7), as did every calibration run of this change: at load 6-8 the
  same 1M × 1M runs took 8.8 s (driver), 10.4 s (kernel) and 11.4 s (window),
  the window slowed most, so the loaded runs set no per-cell rate.

They are rough (a per-cell rate, not a model of Spark's plan), but they are
measured, and they order the three ways as the calm run measured them.

The per-partition kernel's constants are newer than the window's: since its
union crosses into the Python workers as flat columns, not a struct a side
(:mod:`faq.asof.on_spark`), it is cheaper than the window at every size
measured.  ``python -m bench.bench_asof_spark --calibrate --repeat 3`` (the
ways alone, the fastest of three warm runs at 100K and 1M rows a side; load
about 1.5, ``bench/results/asof_spark_calibration_flat.json``) fitted the
window at 1.08 s + 2.65e-7 s a cell and the kernel at 0.86 s + 2.05e-7: the
kernel's constants below are the window's calm ones times those ratios (0.79
and 0.77).  Interleaved in one process, answers equal, the kernel took 3.16 /
3.59 s against a plain-Spark window's 3.32 s at 1M × 1M and 27.6 s against
34.6 s at 10M × 10M (the struct form: 4.25 / 3.61 s at 1M; 37.4 s against
38.8 s at 10M in an earlier run).

The driver's rate above is that of its first form: both sides collected by
Spark and the result handed back by ``createDataFrame`` (a local relation,
whose every later query reads JVM rows one by one).  Two changes made it
cheaper where they apply, so its rate is scaled by :data:`DRIVER_FACTORS`: a
side that is a bare local Parquet scan is read by pyarrow
(:mod:`faq.parquet_scan`), and a result Spark can read from a local file is
handed back as one (:mod:`faq.handback`).  The factors are each form's time
over the first form's at 1M × 1M rows, the forms taking turns in one process
(three warm runs each, the median, load average 6-7; a scratch script timing
the join and the caller's aggregate as the benchmark does): first form 10.45 s,
pyarrow reads 6.59 s, the file hand-back 2.08 s, both 1.71 s (Spark's window in
the same rounds: 11.40 s).  At 100K × 100K: 1.90, 1.05, 1.44, 0.68 s (window 2.38 s).

Examples
--------
>>> priced = price(1_000_000, 1_000_000, 3, 3, keys=1)
>>> cheapest(priced)
'executors'
>>> print(describe(priced, cheapest(priced)))  # doctest: +ELLIPSIS
spark-window: est ... s; executors (per-partition kernel): est ... s; driver: est ... s (fetch 2M rows); chosen executors
"""

from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Optional

__all__ = ["WAYS", "LABELS", "FIXED_SECONDS", "SECONDS_PER_CELL", "DRIVER_FACTORS", "Priced", "cells", "price",
           "cheapest", "describe"]

#: The ways, in the order a plan lists them.
WAYS = ("spark-window", "executors", "driver")
LABELS = {"spark-window": "spark-window", "executors": "executors (per-partition kernel)", "driver": "driver"}

#: Seconds a way costs before its first row (see the module notes for the measurements).
FIXED_SECONDS = {
    # the driver's calm 10k x 10k (0.14 s) plus the window's loaded start-up over the driver (1.28 - 0.63 s)
    # scaled by the driver's calm/loaded ratio (0.14 / 0.63): its plan's codegen, the sort, the window stage
    "spark-window": 0.28,
    # the window's times the kernel's ratio to it in one calibration run (0.86 / 1.08 s; module notes):
    # mapInArrow's Python workers, Arrow batches
    "executors": 0.22,
    # calm 10k x 10k (0.14 s) less its cells: two collect jobs side by side, the in-process join, createDataFrame
    "driver": 0.13,
}

#: Seconds a cell (a row × a column, inputs plus result) costs each way: (the calm 1M × 1M warm median
#: - fixed) / 10M cells (1M + 1M rows of 3 columns, 1M result rows of 4).
SECONDS_PER_CELL = {
    # (1.68 s x 1.12 - 0.28) / 10M cells: faq's window form (null values carried, ties ordered) took 10-13%
    # more than that plain query (interleaved, 8 warm runs each, load 3-4: medians 5.82 / 5.27 s)
    "spark-window": 1.60e-7,
    "executors": 1.24e-7,  # the window's times 2.05e-7 / 2.65e-7, one calibration run's ratio (module notes)
    "driver": 2.04e-7,  # (2.17 - 0.13) s / 10M cells
}


#: The driver's per-cell rate over its first form's, by how the sides are read (``"spark"``: collected;
#: ``"pyarrow"``: bare local Parquet scans) and how the result goes back (``"local relation"``:
#: ``createDataFrame``; ``"file"``: :func:`faq.handback.spark_frame`'s Parquet file) -- module notes.
DRIVER_FACTORS = {
    ("spark", "local relation"): 1.0,
    ("pyarrow", "local relation"): 0.63,  # 6.59 / 10.45 s
    ("spark", "file"): 0.20,  # 2.08 / 10.45 s
    ("pyarrow", "file"): 0.16,  # 1.71 / 10.45 s
}

#: The rate of :mod:`faq.calibration` that each way's per-cell constant stands for.
CELL_RATES = {"spark-window": "spark_scan", "executors": "in_process", "driver": "fetch"}


class Priced(NamedTuple):
    """One way's price: estimated ``seconds`` (``inf`` when a size is unknown), ``refused`` (why it may
    not run, "" when it may) and ``detail`` (what the plan says beside the price)."""

    seconds: float
    refused: str = ""
    detail: str = ""


def cells(left_rows: float, right_rows: float, left_columns: int, right_columns: int, keys: int) -> float:
    """The cells a join moves: both inputs' and the result's (left's rows, left's columns plus right's
    columns other than its time and keys).

    >>> cells(10, 20, 3, 3, 1)          # 30 + 60 read, 10 rows of 4 columns written
    130
    """
    result_columns = left_columns + max(right_columns - keys - 1, 0)
    return left_rows * left_columns + right_rows * right_columns + left_rows * result_columns


def price(left_rows: float, right_rows: float, left_columns: int, right_columns: int, keys: int = 1, *,
          driver: str = "", executors: str = "", window: str = "",
          scales: Optional[Mapping[str, float]] = None, read: str = "spark",
          hand_back: str = "local relation") -> dict[str, Priced]:
    """Each way's estimated seconds for inputs of these sizes; ``driver``, ``executors``, ``window``: why
    that way may not run ("" when it may); ``scales``: this machine's calibration
    (:meth:`faq.calibration.Calibration.scales`; default: the constants as fitted).

    Parameters
    ----------
    left_rows, right_rows : float
        Rows of each side (``math.inf`` when unknown).
    left_columns, right_columns : int
        Columns of each side.
    keys : int
        Key columns (``by``).
    driver, executors, window : str
        Why that way is refused ("" when it may run).
    scales : mapping of str to float, optional
        Each way's fixed cost is a Spark job's (``spark_job``); its per-cell rate Spark's operators'
        (``spark_scan``, the window), faq's kernels' (``in_process``, the per-partition kernel) or the
        fetch's (``fetch``, the driver: mostly moving the rows).
    read, hand_back : str
        How the driver way reads the sides (``"spark"``, ``"pyarrow"``) and hands the result back
        (``"local relation"``, ``"file"``): a key of :data:`DRIVER_FACTORS`.

    Returns
    -------
    dict
        ``{way: Priced}`` in the order of :data:`WAYS`.

    Examples
    --------
    >>> p = price(1_000, 1_000, 3, 3)
    >>> p["driver"].seconds < p["executors"].seconds            # small: no Python workers to start
    True
    >>> price(1_000, 1_000, 3, 3, window="a distance of string times")["spark-window"].refused
    'a distance of string times'
    >>> fast = price(1e6, 1e6, 3, 3, read="pyarrow", hand_back="file")
    >>> cheapest(fast), fast["driver"].detail
    ('driver', 'fetch 2M rows by pyarrow, hand back a Parquet file')
    """
    n = cells(left_rows, right_rows, left_columns, right_columns, keys)
    refusals = {"spark-window": window, "executors": executors, "driver": driver}
    scale = dict(scales or {})
    out = {}
    for way in WAYS:
        fixed = FIXED_SECONDS[way] * scale.get("spark_job", 1.0)
        per_cell = SECONDS_PER_CELL[way] * scale.get(CELL_RATES[way], 1.0)
        if way == "driver":
            per_cell *= DRIVER_FACTORS[(read, hand_back)]
        seconds = fixed + per_cell * n if math.isfinite(n) else math.inf
        detail = "" if way != "driver" else (
            f"fetch {_count(left_rows + right_rows)} rows" + (" by pyarrow" if read == "pyarrow" else "")
            + (", hand back a Parquet file" if hand_back == "file" else ""))
        out[way] = Priced(seconds, refusals[way], detail)
    return out


def cheapest(priced: dict[str, Priced]) -> str:
    """The allowed way of least estimated seconds; with sizes unknown, the least per cell (the cheapest
    at scale).  At least one way must be allowed.

    >>> cheapest(price(5e6, 5e6, 3, 3))
    'executors'
    >>> cheapest(price(5e6, 5e6, 3, 3, executors="refused", driver="exceeds the fetch budget"))
    'spark-window'
    """
    allowed = [w for w in WAYS if not priced[w].refused]
    return min(allowed, key=lambda w: (priced[w].seconds, SECONDS_PER_CELL[w]))


def describe(priced: dict[str, Priced], chosen: str) -> str:
    """The plan's line: each way's price (or why it was not run), then the choice.

    >>> describe(price(math.inf, 10, 2, 2, driver="sizes unknown"), "spark-window")
    'spark-window: est ? s (sizes unknown); executors (per-partition kernel): est ? s (sizes unknown); driver: not run (sizes unknown); chosen spark-window'
    """
    parts = []
    for way in WAYS:
        p = priced[way]
        if p.refused:
            parts.append(f"{LABELS[way]}: not run ({p.refused})")
        elif math.isfinite(p.seconds):
            parts.append(f"{LABELS[way]}: est {p.seconds:.2g} s" + (f" ({p.detail})" if p.detail else ""))
        else:
            parts.append(f"{LABELS[way]}: est ? s (sizes unknown)")
    return "; ".join(parts) + f"; chosen {chosen}"


def _count(rows: float) -> str:
    """Rows in short: ``2M``, ``350k``, ``12``.

    >>> _count(2_000_000), _count(350_000), _count(12), _count(math.inf)
    ('2M', '350k', '12', '?')
    """
    if not math.isfinite(rows):
        return "?"
    if rows >= 1e6:
        return f"{rows / 1e6:.3g}M"
    if rows >= 1e3:
        return f"{rows / 1e3:.3g}k"
    return f"{int(rows)}"
