"""The ``faq asof`` command: the as-of join of two tables, on the driver, without Spark.

::

    faq asof LEFT RIGHT --on time [--by sym ...] [--direction backward|forward|nearest]
             [--tolerance T] [--no-exact] [--how left|inner] [--out PATH.csv|.csv.gz|.parquet] [--json]

LEFT and RIGHT are Parquet files or CSV files with a header.  Each left row
gets the right row valid at its time (:func:`faq.asof_join`, as
``pandas.merge_asof``).  ``--out`` writes every row (a file written under a
temporary name and renamed into place: a failure leaves nothing
half-written); without it the command prints the row count and the first
rows.  The join runs in-process on the driver: no Spark starts.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["asof", "t.csv", "q.csv", "--on", "time", "--by", "sym", "--tolerance", "5"])
>>> args.by, args.direction, args.tolerance
(['sym'], 'backward', 5.0)
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from faq.cli.inputs import check_table_out, require_file
from faq.cli.output import PREVIEW_ROWS, plural, print_json, print_table, write_arrow

__all__ = ["add_commands", "check_asof", "run_asof"]

DIRECTIONS = ("backward", "forward", "nearest")  # faq.asof.kernel.DIRECTIONS, written here (no import at parse)

_DESCRIPTION = """\
Join each row of LEFT with the row of RIGHT valid at its time: with equal --by keys, the last RIGHT
row at or before the LEFT row's time (backward), the first at or after it (forward), or the closer
(nearest). LEFT and RIGHT are Parquet files or CSV files with a header; neither needs sorting.
Runs on the driver, without Spark."""
_EPILOG = """examples:
  faq asof trades.parquet quotes.parquet --on time --by sym                 first rows and the count
  faq asof trades.csv quotes.csv --on time --by sym --tolerance 5 --out joined.parquet"""


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``asof`` to ``commands``; ``common`` is the parent parser of the shared options."""
    sub = commands.add_parser("asof", parents=[common], help="as-of join of two tables (the row valid at each time)",
                              description=_DESCRIPTION, epilog=_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("left", metavar="LEFT", help="the table whose rows are kept (.parquet, or .csv with a header)")
    sub.add_argument("right", metavar="RIGHT", help="the table whose valid row each LEFT row gets")
    sub.add_argument("--on", required=True, metavar="COLUMN", help="the time column of both tables")
    sub.add_argument("--by", nargs="+", default=[], metavar="COLUMN", help="key columns of both tables")
    sub.add_argument("--direction", choices=DIRECTIONS, default="backward", help="default: %(default)s")
    sub.add_argument("--tolerance", type=float, metavar="T", help="the largest distance in time of a match")
    sub.add_argument("--no-exact", dest="exact", action="store_false",
                     help="a RIGHT row at exactly the LEFT time does not match")
    sub.add_argument("--how", choices=("left", "inner"), default="left",
                     help="keep LEFT rows without a match (left) or drop them (inner); default: %(default)s")
    sub.add_argument("--out", metavar="PATH", help="write every row to PATH (.csv, .csv.gz or .parquet)")
    sub.set_defaults(local=run_asof, check_early=check_asof)


def check_asof(args: argparse.Namespace) -> None:
    """Checks before any row is read: both inputs exist, ``--out`` is a .csv or .parquet file in a folder."""
    require_file(args.left)
    require_file(args.right)
    check_table_out(args.out)


def run_asof(args: argparse.Namespace) -> None:
    """``faq asof``: join in-process, then write ``--out`` or print the count and the first rows."""
    from faq.asof.oneshot import asof_join
    from faq.asof.tables import read_table

    check_asof(args)
    started = time.perf_counter()
    left, right = read_table(args.left), read_table(args.right)
    joined = asof_join(left, right, on=args.on, by=args.by, direction=args.direction, allow_exact_matches=args.exact,
                       tolerance=args.tolerance, how=args.how)
    matched = joined.num_rows - _unmatched(joined, right, args)
    summary: dict[str, Any] = {"left": args.left, "right": args.right, "rows": joined.num_rows, "matched": matched,
                               "columns": joined.column_names}
    if args.out:
        write_arrow(joined, args.out)
        summary["out"] = args.out
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        print_json(summary)
        return
    print(f"{args.left} as of {args.right}: {plural(joined.num_rows, 'row')}, {matched} matched "
          f"({args.direction}); {summary['seconds']:.2f} s")
    if args.out:
        print(f"  written to {args.out}")
    else:
        print_table(joined.slice(0, PREVIEW_ROWS).to_pylist(), joined.column_names)
        if joined.num_rows > PREVIEW_ROWS:
            print(f"(first {PREVIEW_ROWS} shown)")


def _unmatched(joined: Any, right: Any, args: argparse.Namespace) -> int:
    """Rows without a match: nulls in every right column (0 for an inner join, or no right columns)."""
    if args.how == "inner":
        return 0
    added = joined.column_names[len(joined.column_names) - (right.num_columns - len(args.by) - 1):]
    if not added:
        return 0
    import pyarrow.compute as pc

    missing = None
    for name in added:
        nulls = pc.is_null(joined.column(name))
        missing = nulls if missing is None else pc.and_(missing, nulls)
    return int(pc.sum(pc.cast(missing, "int64")).as_py() or 0)
