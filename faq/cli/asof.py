"""The ``faq asof`` command: the as-of join of two tables, on the driver, without Spark.

::

    faq asof LEFT RIGHT --on time [--by sym ...] [--direction backward|forward|nearest]
             [--tolerance T] [--no-exact] [--how left|inner] [--out PATH.csv|.csv.gz|.parquet] [--json]
             [--updates DIR [--mode view|locked] [--lateness L] [--state STATE_DIR] [--changes DIR]
              [--follow [--poll S] [--idle-exit S]]]

LEFT and RIGHT are Parquet files or CSV files with a header.  Each left row
gets the right row valid at its time (:func:`faq.asof_join`, as
``pandas.merge_asof``).  ``--out`` writes every row (a file written under a
temporary name and renamed into place: a failure leaves nothing
half-written); without it the command prints the row count and the first
rows.  The join runs in-process on the driver: no Spark starts.

With ``--updates DIR`` the join is kept current
(:class:`~faq.asof.maintained.MaintainedAsof`, ``--mode locked``:
:class:`~faq.asof.locked.LockedAsof`) through the batch files of DIR in name
order: Parquet or CSV files with a ``side`` column (``left`` or ``right``),
the columns of that side (a column of the other side may be there, empty)
and an optional ``diff`` (+1 insert, -1 delete).  One line per batch: the
joined rows retracted and added.  ``--changes CHANGES_DIR`` writes each
batch's change rows to ``CHANGES_DIR/version-<v>.parquet``; ``--state``
keeps the join durable and resumes it (files applied already are skipped,
never applied twice) -- only for the same job: LEFT and RIGHT (by content),
``--on``, ``--by``, ``--direction``, ``--tolerance``, ``--no-exact``,
``--how``, ``--mode`` and ``--lateness`` as when it was made, else the run is
refused (:mod:`faq.cli.resume`; ``--restart`` starts again); ``--follow``
keeps applying files as they land (:mod:`faq.cli.follow`; the issue's
``--follow DIR`` is ``--updates DIR --follow`` here, as for ``faq track``
and ``faq truss``).

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["asof", "t.csv", "q.csv", "--on", "time", "--by", "sym", "--tolerance", "5"])
>>> args.by, args.direction, args.tolerance
(['sym'], 'backward', 5.0)
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

from faq.cli.follow import add_follow_options, check_follow_options
from faq.cli.inputs import check_table_out, require_file
from faq.cli.output import PREVIEW_ROWS, plural, print_json, print_table, resumed_line, write_arrow
from faq.cli.resume import add_restart_option, check_restart, recording, resume

__all__ = ["add_commands", "check_asof", "run_asof"]

DIRECTIONS = ("backward", "forward", "nearest")  # faq.asof.kernel.DIRECTIONS, written here (no import at parse)

_DESCRIPTION = """\
Join each row of LEFT with the row of RIGHT valid at its time: with equal --by keys, the last RIGHT
row at or before the LEFT row's time (backward), the first at or after it (forward), or the closer
(nearest). LEFT and RIGHT are Parquet files or CSV files with a header; neither needs sorting.
Runs on the driver, without Spark."""
_EPILOG = """examples:
  faq asof trades.parquet quotes.parquet --on time --by sym                 first rows and the count
  faq asof trades.csv quotes.csv --on time --by sym --tolerance 5 --out joined.parquet
  faq asof trades.parquet quotes.parquet --on time --by sym --updates batches/ --state st/ --follow
batch files (applied in name order): Parquet or CSV with a 'side' column (left/right), that side's columns
and an optional 'diff' (+1 insert, -1 delete)."""


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
    sub.add_argument("--updates", metavar="DIR", help="a directory of batch files (a 'side' column, the side's "
                                                     "columns, 'diff') applied in name order, the join kept current")
    sub.add_argument("--mode", choices=("view", "locked"), default="view",
                     help="with --updates: view (late rows revise the answer) or locked (a left row is joined once "
                          "the watermark passes it, never revised; backward only); default: %(default)s")
    sub.add_argument("--lateness", type=float, default=0, metavar="L",
                     help="--mode locked: how far behind the latest time seen the watermark follows")
    sub.add_argument("--state", metavar="STATE_DIR",
                     help="with --updates: keep the join in STATE_DIR, committed after every batch; run again with "
                          "it to resume (batch files applied already are skipped)")
    sub.add_argument("--changes", metavar="CHANGES_DIR",
                     help="with --updates: write each batch's change rows to CHANGES_DIR/version-<v>.parquet")
    add_restart_option(sub)
    add_follow_options(sub)
    sub.set_defaults(local=run_asof, check_early=check_asof)


def check_asof(args: argparse.Namespace) -> None:
    """Checks before any row is read: both inputs exist (a reopened state's too: they are compared), ``--out``
    is a .csv or .parquet file in a folder, the update options come with ``--updates``."""
    from faq.errors import InvalidArgumentError

    require_file(args.left)
    require_file(args.right)
    check_table_out(args.out)
    for option in ("state", "follow", "changes"):
        if getattr(args, option) and not args.updates:
            raise InvalidArgumentError(argument=f"--{option}", value=getattr(args, option),
                                       reason="applies with --updates DIR only")
    if args.mode == "locked" and not args.updates:
        raise InvalidArgumentError(argument="--mode", value=args.mode, reason="applies with --updates DIR only")
    if args.updates:
        from faq.io.updates import update_files

        update_files(args.updates)  # a missing or non-directory DIR is a one-line error
    check_follow_options(args)
    check_restart(args)


def _report(args: argparse.Namespace, joined: Any, summary: dict[str, Any], started: float,
            line: Callable[[float], str]) -> None:
    """Write the joined rows to ``--out`` if given, then the summary (``--json``) or its one ``line``."""
    if args.out:
        write_arrow(joined, args.out)
        summary["out"] = args.out
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        print_json(summary)
    else:
        print(line(summary["seconds"]))


def run_asof(args: argparse.Namespace) -> None:
    """``faq asof``: join in-process, then write ``--out`` or print the count and the first rows."""
    from faq.asof.oneshot import asof_join
    from faq.asof.tables import read_table
    from faq.asof.warm import merge_in_background

    check_asof(args)
    if args.updates:
        _run_maintained(args)
        return
    started = time.perf_counter()
    merge_in_background([args.left, args.right])  # the merge's kernels load while the files are read
    left, right = read_table(args.left), read_table(args.right)
    joined = asof_join(left, right, on=args.on, by=args.by, direction=args.direction, allow_exact_matches=args.exact,
                       tolerance=args.tolerance, how=args.how)
    matched = joined.num_rows - _unmatched(joined, right, args)
    _report(args, joined, {"left": args.left, "right": args.right, "rows": joined.num_rows, "matched": matched,
                           "columns": joined.column_names}, started,
            lambda seconds: f"{args.left} as of {args.right}: {plural(joined.num_rows, 'row')}, {matched} matched "
                            f"({args.direction}); {seconds:.2f} s")
    if args.json:
        return
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


# --- kept current through batch files ------------------------------------------------------


def _run_maintained(args: argparse.Namespace) -> None:
    """``faq asof --updates``: build (or reopen) the maintained join, apply the batch files, report each."""
    from faq.asof.oneshot import asof_join, open_join
    from faq.cli.follow import follow
    from faq.incremental.job import job_identity
    from faq.io.updates import pending, update_files

    files = update_files(args.updates)
    parsed = {f: _batch_file(f) for f in files}  # every file read and checked before any work
    started = time.perf_counter()
    extra = {"lateness": args.lateness} if args.mode == "locked" else {}
    options = dict(on=args.on, by=args.by, direction=args.direction, allow_exact_matches=args.exact,
                   tolerance=args.tolerance, how=args.how, mode=args.mode, **extra)
    job = job_identity("asof", {"left": args.left, "right": args.right}, **options) if args.state else None
    resumed = resume(args, job, lambda text: print(f"faq: {text}", file=sys.stderr, flush=True))
    if resumed:
        join = open_join(args.state)
    else:
        with recording(job):
            join = asof_join(args.left, args.right, maintained=True, path=args.state, **options)
    with join:
        todo = pending(files, join.labels, args.state) if resumed else [(k, f) for k, f in enumerate(files, start=1)]
        rows = join.table().num_rows
        first = {"batch": None, "version": join.version, "rows": rows,
                 "seconds": round(time.perf_counter() - started, 3)}
        if args.state:
            first.update(resumed=resumed, skipped=len(files) - len(todo))
        if args.json:
            print_json(first)
        elif resumed:
            print(resumed_line(args.state, join.version, plural(rows, "joined row"), len(files) - len(todo),
                               len(todo)), flush=True)
        else:
            print(f"{args.left} as of {args.right}: {plural(rows, 'joined row')} ({args.mode}); "
                  f"{first['seconds']:.2f} s", flush=True)
        for version, file in todo:
            _apply_file(args, join, file, parsed[file], version)
        if args.follow:
            follow(args.updates, lambda: join.labels,
                   lambda version, file: _apply_file(args, join, file, _batch_file(file), version),
                   poll=args.poll, idle_exit=args.idle_exit, state=args.state or "the join",
                   note=lambda text: print(f"faq: {text}", file=sys.stderr, flush=True))
        answer = join.table()
        _report(args, answer, {"rows": answer.num_rows, "version": join.version}, started,
                lambda seconds: f"  {plural(answer.num_rows, 'joined row')} at version {join.version}"
                                + (f"; written to {args.out}" if args.out else ""))


def _batch_file(path: str) -> dict[str, Any]:
    """A batch file's rows per side (``{"left": table, "right": table}``), the ``side`` column checked."""
    import pyarrow.compute as pc

    from faq.asof.tables import read_table
    from faq.errors import InvalidDeltaError, MissingColumnError

    table = read_table(path)
    if "side" not in table.column_names:
        raise MissingColumnError(column="side", available=table.column_names, source=path)
    sides = table.column("side")
    wrong = [v for v in pc.unique(sides).to_pylist() if v not in ("left", "right")]
    if wrong:
        raise InvalidDeltaError("side", f"{path}: 'side' must be 'left' or 'right', not {wrong[0]!r}",
                                known=["left", "right"])
    rest = table.drop_columns(["side"])
    return {name: rest.filter(pc.equal(sides, name)) for name in ("left", "right")
            if rest.filter(pc.equal(sides, name)).num_rows}


def _apply_file(args: argparse.Namespace, join: Any, file: str, batch: dict[str, Any], version: int) -> None:
    """One batch file as version ``version``: applied, its change written (``--changes``) and reported."""
    import os

    change = join.apply(batch, version=version, label=os.path.basename(file))
    rows = change.table()
    diff = rows.column("diff").to_numpy() if rows.num_rows else []
    added, retracted = int((diff > 0).sum()) if len(diff) else 0, int((diff < 0).sum()) if len(diff) else 0
    if args.changes:
        os.makedirs(args.changes, exist_ok=True)
        write_arrow(rows, os.path.join(args.changes, f"version-{change.version}.parquet"))
    out = {"batch": os.path.basename(file), "version": change.version, "added": added, "retracted": retracted,
           "change_rows": {side: t.num_rows for side, t in batch.items()}, "seconds": round(change.seconds, 4)}
    if args.json:
        print_json(out)
        return
    given = ", ".join(f"{n} {side}" for side, n in out["change_rows"].items()) or "no rows"
    print(f"batch {out['batch']}: +{added} -{retracted} joined rows ({given} change rows), "
          f"{change.seconds:.3f} s", flush=True)
