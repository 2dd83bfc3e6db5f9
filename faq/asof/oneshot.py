"""``faq.asof_join``: the one-shot as-of join for every input kind, placed by the one policy.

* pandas frames, Arrow tables and paths (Parquet, or CSV with a header) are
  joined in-process (:func:`faq.asof.tables.asof_tables`): the driver holds
  them, or reads them as the CLI does;
* Spark DataFrames run the cheapest of three ways, priced before anything
  runs (:mod:`faq.asof.costs`, estimated seconds from their rows and
  columns): Spark's own sort and running window
  (:mod:`faq.asof.spark_window`), faq's kernel per key partition on the
  executors (:mod:`faq.asof.on_spark`), or both sides collected side by side
  (Arrow), joined in-process and handed back as a Spark DataFrame -- the
  driver only where :func:`faq.placement_policy.choose` lets it hold them
  (their rows, from Parquet footers, else one count job for both, against
  the fetch budget and the driver's in-process memory).  ``placement="driver"``
  forces the driver; ``placement="executors"`` takes the cheaper of the
  other two; options the window form does not do (:func:`faq.asof.spark_window.unsupported`)
  run the kernel.

The result has the kind of the left input (a path gives pandas).  A
``progress`` callable receives one note: where the join ran and why -- for
Spark DataFrames the three prices and the choice.

Examples
--------
>>> import pandas as pd
>>> trades = pd.DataFrame({"time": [1, 4, 0], "sym": ["a", "a", "b"], "qty": [5, 7, 1]})
>>> quotes = pd.DataFrame({"time": [1, 3, 2], "sym": ["a", "a", "b"], "px": [10.0, 11.0, 20.0]})
>>> asof_join(trades, quotes, on="time", by="sym")
   time sym  qty    px
0     1   a    5  10.0
1     4   a    7  11.0
2     0   b    1   NaN
"""

from __future__ import annotations

import math
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from faq.asof.tables import SUFFIXES, Keys, asof_tables, check_arguments, key_list, read_table
from faq.errors import InvalidArgumentError
from faq.events import Progress, notes_to
from faq.placement_policy import DRIVER, BYTES_PER_COLUMN, Input, choose
from faq.spark_ui import described

__all__ = ["asof_join", "open_join"]

#: The in-process join's footprint as a multiple of its inputs' bytes: the inputs, their codes, times and
#: sort orders, and the gathered output.  An estimate from what the join allocates, not a measured peak.
WORKING_FACTOR = 3


@described("asof_join")
def asof_join(
    left: Any,
    right: Any,
    on: str = "time",
    by: Keys = None,
    *,
    direction: str = "backward",
    allow_exact_matches: bool = True,
    tolerance: Any = None,
    how: str = "left",
    suffixes: tuple[Optional[str], Optional[str]] = SUFFIXES,
    right_time: Optional[str] = None,
    placement: Optional[str] = None,
    progress: Progress = None,
    maintained: bool = False,
    mode: str = "view",
    watermark: Any = None,
    lateness: Any = 0,
    state: Optional[str] = None,
    path: Optional[str] = None,
) -> Any:
    """Join each left row with the right row valid at its time, as ``pandas.merge_asof`` does.

    Parameters
    ----------
    left, right : pandas.DataFrame, pyarrow.Table, Spark DataFrame or path
        Both have the ``on`` and ``by`` columns; neither needs sorting.
    on : str
        The time column (numbers, dates, timestamps; strings by their order).
    by : str or sequence of str, optional
        Key columns: rows match only with equal keys; a null key matches
        nothing (pandas pairs nulls; SQL and Spark do not).
    direction : {"backward", "forward", "nearest"}
        The last right row at or before the left time (the price at the time
        of the order), the first at or after it, or the closer of the two.
    allow_exact_matches : bool
        Whether a right row at exactly the left time matches.
    tolerance : number or timedelta, optional
        The largest distance in time of a match.
    how : {"left", "inner"}
        Keep left rows without a match (nulls on the right), or drop them.
    suffixes : pair of str
        For a column on both sides other than ``on`` and ``by`` (pandas' ``_x``, ``_y``).
    right_time : str, optional
        Add the matched right row's time as this column.
    placement : {"auto", "driver", "executors"}, optional
        For Spark inputs (default: the session's ``spark.faq.placement``):
        ``auto`` the cheapest priced way, ``driver`` the in-process kernel,
        ``executors`` the cheaper of Spark's window and the per-partition kernel.
    progress : callable, optional
        Receives one :class:`~faq.events.NoteEvent`: where the join ran, and why
        (for Spark inputs, each way's estimated seconds and the one chosen).
    maintained : bool
        Return a :class:`~faq.asof.maintained.MaintainedAsof`: the join kept
        current as batches of inserts and deletes arrive on either side
        (``.apply(left=..., right=...)``), held on the driver (Spark
        DataFrames are collected once).
    mode : {"view", "locked"}
        With ``maintained=True``: ``"view"``, the answer always equals the
        join of the rows present (late rows revise it); ``"locked"``, a left
        row is joined with the right side as it stands when the watermark
        passes its time and never revised (:mod:`faq.asof.locked`, Flink's
        temporal join; backward only).
    watermark, lateness
        ``mode="locked"``: the first watermark (default: the largest time
        given minus ``lateness``), and how far behind the data it follows.
    state : str, optional
        With ``maintained=True``: keep the join in this new or empty
        directory, committed after every batch (:mod:`faq.asof.state`);
        ``faq.asof.open_join(state)`` reopens it.
    path : str, optional
        Deprecated name of ``state``.

    Returns
    -------
    The kind of ``left``: a pandas DataFrame (also for a path), an Arrow table
    or a Spark DataFrame; left's rows in left's order (``how="left"``).  With
    ``maintained=True``, a :class:`~faq.asof.maintained.MaintainedAsof`.

    Raises
    ------
    MissingColumnError, ColumnRoleError, ColumnTypeMismatchError, TimeTypeError,
    ColumnClashError, InvalidJoinTypeError, InvalidArgumentError
        Bad arguments, named.

    Notes
    -----
    Among right rows with the same key and time, backward takes the last in
    the right side's order and forward the first, as pandas does.  Spark
    DataFrames have no row order: the per-partition kernel takes Spark's order
    of arrival, Spark's window the row that sorts last (backward) or first
    (forward) by right's other columns (:mod:`faq.asof.spark_window`); make
    right times distinct per key where the choice matters.

    Examples
    --------
    >>> import faq, pandas as pd
    >>> trades = pd.DataFrame({"time": [2, 5, 9], "sym": ["a", "a", "b"], "qty": [10, 20, 5]})
    >>> quotes = pd.DataFrame({"time": [1, 4, 8], "sym": ["a", "a", "b"], "px": [100.0, 101.5, 50.0]})
    >>> faq.asof_join(trades, quotes, on="time", by="sym")["px"].tolist()   # the quote in force at each trade
    [100.0, 101.5, 50.0]
    >>> with faq.asof_join(trades, quotes, on="time", by="sym", maintained=True) as view:
    ...     change = view.apply(right=pd.DataFrame({"time": [5], "sym": ["a"], "px": [100.7], "diff": [1]}))
    ...     sorted(view.table().to_pandas()["px"].tolist())            # a late quote revises the view
    [50.0, 100.0, 100.7]
    """
    from faq.spark import is_dataframe

    from faq.inputs import state_directory

    path = state_directory(state, path, "faq.asof_join")
    keys = key_list(by)
    note = notes_to(progress)  # lines to a reporter, NoteEvents to a plain callable
    options = dict(on=on, by=keys, direction=direction, allow_exact_matches=allow_exact_matches,
                   tolerance=tolerance, how=how, suffixes=suffixes, right_time=right_time)
    if path is not None and not maintained:
        raise InvalidArgumentError(argument="state", value=path, reason="a state directory is for a maintained "
                                                                        "join (maintained=True)")
    if maintained:
        if placement not in (None, "auto", DRIVER):
            raise InvalidArgumentError(argument="placement", value=placement,
                                       reason="a maintained as-of join is held on the driver (Spark DataFrames are "
                                              "collected once); one on the executors is not built")
        note(f"maintained as-of join ({mode}) on the driver")
        if mode == "locked":
            from faq.asof.locked import LockedAsof

            return LockedAsof(left, right, watermark=watermark, lateness=lateness, path=path, **options)
        from faq.asof.maintained import MaintainedAsof

        return MaintainedAsof(left, right, mode=mode, path=path, **options)
    if not (is_dataframe(left) or is_dataframe(right)):
        if placement not in (None, "auto", DRIVER):
            raise InvalidArgumentError(argument="placement", value=placement,
                                       reason="pandas, Arrow and path inputs are joined on the driver")
        kind = _kind(left)
        joined = asof_tables(read_table(left), read_table(right), **options)
        note(f"as-of join in-process on the driver: {kind} inputs")
        return joined if kind == "arrow" else joined.to_pandas()
    spark = (left if is_dataframe(left) else right).sparkSession
    left_df, right_df = (_as_spark(side, spark) for side in (left, right))
    check_arguments(left_df.columns, right_df.columns, on, keys, direction, how)
    way, plan, rows = _priced_plan(left_df, right_df, placement, spark, options)
    note(plan)
    return run_way(way, left_df, right_df, options, rows)


def _collected(df: Any, rows: float = math.inf) -> Any:
    """``df`` as one Arrow table: read from its files when it is a bare local Parquet scan (no job), else
    collected (:func:`faq.parquet_scan.read_scan`; ``rows``: its rows when the pricing read them already,
    so the footers are read once)."""
    from faq.parquet_scan import read_scan

    table = read_scan(df, df.columns, sys.maxsize, rows=int(rows) if math.isfinite(rows) else None)
    return df.toArrow() if table is None else table


def run_way(way: str, left: Any, right: Any, options: dict, rows: Optional[dict[str, float]] = None) -> Any:
    """Run one of the priced ways on two Spark DataFrames, whatever its price (benchmarks calibrate with it).

    Parameters
    ----------
    way : {"spark-window", "executors", "driver"}
        One of :data:`faq.asof.costs.WAYS`.
    left, right : pyspark.sql.DataFrame
    options : dict
        :func:`asof_join`'s join options: ``on``, ``by`` (a list), ``direction``, ``allow_exact_matches``,
        ``tolerance``, ``how``, ``suffixes``, ``right_time``.
    rows : dict, optional
        ``{"left": n, "right": n}`` as the pricing found them (``inf``: unknown), for the driver's read.

    Returns
    -------
    pyspark.sql.DataFrame

    Examples
    --------
    >>> from faq.spark import get_session
    >>> spark = get_session()
    >>> options = dict(on="t", by=[], direction="backward", allow_exact_matches=True, tolerance=None,
    ...                how="left", suffixes=("_x", "_y"), right_time=None)
    >>> left, right = spark.range(3).withColumnRenamed("id", "t"), spark.range(2).withColumnRenamed("id", "t")
    >>> run_way("spark-window", left, right, options).count()
    3
    """
    if way == DRIVER:
        known = rows or {}
        with ThreadPoolExecutor(2) as pool:  # both collects at once: two jobs side by side
            tables = list(pool.map(_collected, (left, right),
                                   (known.get(side, math.inf) for side in ("left", "right"))))
        joined = asof_tables(tables[0], tables[1], **options)
        from faq.handback import spark_frame

        return spark_frame(left.sparkSession, joined)  # a local Parquet file where Spark reads one
    if way == "executors":
        from faq.asof.on_spark import asof_on_spark

        return asof_on_spark(left, right, **options)
    from faq.asof.spark_window import asof_window

    return asof_window(left, right, **options)


def _kind(data: Any) -> str:
    """The kind of table the answer is given as: Arrow for Arrow (any Arrow stream's), pandas for the rest."""
    from faq.input_kinds import ARROW, PATH, input_kind

    kind = input_kind(data)
    return "arrow" if kind == ARROW else "path" if kind == PATH else "pandas"


def _as_spark(data: Any, spark: Any) -> Any:
    """A Spark DataFrame of either side (the other side of a Spark input is made one)."""
    from faq.spark import is_dataframe

    if is_dataframe(data):
        return data
    return spark.createDataFrame(read_table(data))


def _priced_plan(left: Any, right: Any, requested: Optional[str], spark: Any,
                 options: dict) -> tuple[str, str, dict[str, float]]:
    """Which way a join of two Spark DataFrames runs (:mod:`faq.asof.costs`), the plan's note, and both
    sides' rows as found (``inf``: unknown).

    The one policy decides whether the driver may hold the join (rows from Parquet footers, else one count
    job for both under ``auto``; the fetch budget and the in-process memory); then every way is priced
    and the cheapest allowed one taken: ``driver`` forces the driver, ``executors`` takes the cheaper of
    the per-partition kernel and Spark's window, options the window form does not do go to the kernel.
    """
    from faq.asof import costs
    from faq.asof.spark_window import unsupported
    from faq.calibration import current as current_calibration
    from faq.calibration import describe as describe_calibration
    from faq.settings import placement_setting

    requested = requested or placement_setting(spark)
    rows = _rows(left, right, count=requested == "auto")
    where, why = _placement(left, right, requested, spark, rows)
    window = unsupported(options["direction"], options["allow_exact_matches"], options["tolerance"],
                         left.schema[options["on"]].dataType, right.schema[options["on"]].dataType) or ""
    refused_driver = "" if where == DRIVER else ("placement=executors" if requested == "executors" else why)
    calibration = current_calibration()
    read, hand_back = _driver_form(left, right, rows, options, spark) if not refused_driver else ("spark", "")
    priced = costs.price(rows["left"], rows["right"], len(left.columns), len(right.columns), len(options["by"]),
                         driver=refused_driver, window=window, scales=calibration.scales(), read=read,
                         hand_back=hand_back or "local relation")
    way = DRIVER if requested == DRIVER else costs.cheapest(priced)
    where = DRIVER if way == DRIVER else "executors"
    return way, (f"as-of join on the {where} ({costs.LABELS[way]}): {why}; priced with "
                 f"{describe_calibration(calibration)}: {costs.describe(priced, way)}"), rows


def _driver_form(left: Any, right: Any, rows: dict[str, float], options: dict, spark: Any) -> tuple[str, str]:
    """How the driver way would read the sides and hand the result back (:data:`faq.asof.costs.DRIVER_FACTORS`'s
    keys): pyarrow when both are bare local Parquet scans, a Parquet file when Spark can read the result's
    types from one -- asked of the plans and the schemas, nothing read."""
    from faq.handback import hands_back_as_file
    from faq.parquet_scan import bare_scan

    read = "pyarrow" if all(bare_scan(df, df.columns) for df in (left, right)) else "spark"
    # (a name on both sides comes back twice, suffixed: counted once here, its type is what matters)
    taken = {options["on"], *options["by"], *([options["right_time"]] if options["right_time"] else []),
             *left.columns}
    result = [*left.dtypes, *((name, kind) for name, kind in right.dtypes if name not in taken)]
    return read, "file" if hands_back_as_file(spark, result, rows["left"]) else "local relation"


def _rows(left: Any, right: Any, count: bool) -> dict[str, float]:
    """Both sides' rows: from Parquet footers (no job), else, with ``count``, one count job for both; else
    unknown (``inf``)."""
    from faq.insideout.binding import row_counts
    from faq.relation import file_rows

    sides = {"left": left, "right": right}
    found = {name: file_rows(df) for name, df in sides.items()}
    unknown = {name: df for name, df in sides.items() if found[name] is None}
    if unknown and count:
        found.update(row_counts(unknown))  # one job for both
    return {name: float("inf") if n is None else float(n) for name, n in found.items()}


def _placement(left: Any, right: Any, requested: str, spark: Any, rows: dict[str, float]) -> tuple[str, str]:
    """Whether the driver may hold the join: the one policy over the rows and the driver's budgets."""
    from faq.settings import fetch_memory, local_memory

    inputs = [Input(rows["left"], False, len(left.columns)), Input(rows["right"], False, len(right.columns))]
    footprint = None if requested != "auto" else WORKING_FACTOR * sum(
        i.rows * i.columns * BYTES_PER_COLUMN for i in inputs)
    return choose(requested, footprint, local_memory(spark), inputs=inputs, fetch_budget=fetch_memory(spark),
                  budget_setting="spark.faq.localMemory")


def open_join(path: str, *, progress: Progress = None) -> Any:
    """Reopen a maintained as-of join saved with ``state=``, of either mode, at its last committed version.

    Returns a :class:`~faq.asof.maintained.MaintainedAsof` (view) or a
    :class:`~faq.asof.locked.LockedAsof`, as was saved (no Spark).

    Raises
    ------
    StateDirectoryError
        No saved as-of join in ``path``.
    """
    from faq.asof.locked import LockedAsof
    from faq.asof.maintained import MaintainedAsof
    from faq.asof.state import saved_mode

    MaintainedAsof._saved_manifest(path)  # a state of this kind, checked before its mode is read
    kind = LockedAsof if saved_mode(path) == "locked" else MaintainedAsof
    return kind.open(path, progress=progress)
