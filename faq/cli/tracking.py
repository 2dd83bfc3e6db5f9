"""The ``faq track`` command: follow a motif through batches of edge changes.

::

    faq track 'PATTERN' INITIAL_EDGES UPDATES_DIR [--state DIR] [--count-only] [--show N] [--json]
              [--follow [--poll SECONDS] [--idle-exit SECONDS]]

``UPDATES_DIR`` holds batch files of ``+ src dst`` / ``- src dst`` lines
(blank lines and ``#`` comments skipped), applied in file-name order; within
a file the last line about an edge wins.  Per batch it prints the change in
the number of bindings and the running count; without ``--count-only`` also
the first ``--show`` bindings that appeared (``+``) and disappeared (``-``).
With ``--json``: JSON lines, first the initial count (``"batch": null``),
then one object per batch with ``batch``, ``version``, ``delta``, ``count``,
``seconds``, ``appeared``, ``disappeared`` and ``edges_changed``.

With ``--state DIR`` the tracker's state is durable in DIR (Parquet files and
a manifest committed per batch, :mod:`faq.incremental.store`).  Run again
with the same DIR after an interruption, it reopens the state instead of
recounting, skips the batch files already applied (they are recorded by
name and must be the directory's first files in name order: a batch never
counts twice) and goes on with the rest.  Only the same job's state is
resumed: INITIAL_EDGES (by content) and the pattern as when it was made,
else the run is refused (:mod:`faq.cli.resume`; ``--restart`` starts again).

With ``--follow`` it then keeps watching UPDATES_DIR and applies each batch
file that lands there, in name order, once (:mod:`faq.cli.follow`: write a
file under a ``.`` name and rename it into place); Ctrl-C stops after the
batch in hand, and a rerun with the same ``--state`` goes on where it stopped.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["track", "(a)->(b); (b)->(a)", "g.txt", "updates", "--count-only"])
>>> args.pattern.vertices, args.count_only, args.show
(('a', 'b'), True, 20)
"""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

from faq.cli.follow import add_follow_options, check_follow_options
from faq.cli.inputs import add_pattern_command, require_file
from faq.cli.output import PREVIEW_ROWS, plural, print_json, resumed_line
from faq.cli.resume import add_restart_option, check_restart, recording, resume

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from faq.incremental.change import Change
    from faq.graphs.track import MotifTracker
    from faq.io.updates import UpdateBatch
    from faq.progress import Reporter

__all__ = ["add_commands", "check_track", "run_track"]

_DESCRIPTION = """\
Count a motif pattern in a graph (an edge list, SNAP format; self-loops and repeated edges ignored),
then apply batches of edge changes and report, per batch, the bindings that appeared and disappeared
and the running count. Patterns as for 'faq motif': (a)->(b), (a)-(b), !(a)->(c), allow a=c.
Each batch is evaluated by exactly-once delta rules seeded by the changed edges."""
_EPILOG = """examples:
  faq track '(a)->(b); (a)->(c); (b)->(c)' graph.txt updates/ --count-only
  faq track '(a)->(b); (b)->(c); !(a)->(c)' graph.txt updates/ --json
  faq track '(a)->(b); (a)->(c); (b)->(c)' graph.txt updates/ --state st/ --follow   # apply files as they land
batch files (applied in name order): lines '+ src dst' insert, '- src dst' delete an edge."""


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``track`` to ``commands``; ``common`` is the parent parser of the shared options."""
    help_line = "follow a motif through batches of edge inserts and deletes"
    sub = add_pattern_command(commands, common, "track", help=help_line, description=_DESCRIPTION, epilog=_EPILOG)
    sub.add_argument("path", metavar="INITIAL_EDGES", help="edge list file of the initial graph")
    sub.add_argument("updates", metavar="UPDATES_DIR", help="directory of batch files, applied in name order")
    sub.add_argument("--state", metavar="STATE_DIR",
                     help="keep the state in STATE_DIR; run again with it to resume after an interruption "
                          "(batch files already applied are skipped)")
    sub.add_argument("--count-only", action="store_true", help="print only the counts, not the bindings")
    sub.add_argument("--show", type=int, default=PREVIEW_ROWS, metavar="N",
                     help="bindings shown per batch (appeared and disappeared; default %(default)s)")
    add_restart_option(sub)
    add_follow_options(sub)
    sub.set_defaults(run=run_track, check_early=check_track)


def check_track(args: argparse.Namespace) -> None:
    """Checks that need no Spark: the graph and the update folder exist, its batch files parse, ``--show`` is
    not negative."""
    from faq.io.updates import read_batch, update_files
    from faq.errors import InvalidArgumentError

    require_file(args.path)
    for file in update_files(args.updates):  # a missing or non-directory UPDATES_DIR is a one-line error
        read_batch(file)  # a bad line (or a file cut short) fails before Spark starts
    if args.show < 0:
        raise InvalidArgumentError("--show", args.show, "must be 0 or more")
    check_follow_options(args)
    check_restart(args)


def run_track(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq track``: the initial count (or the reopened state), then one report per batch."""
    from faq.cli.follow import follow
    from faq.io.updates import pending, read_batch, update_files

    check_track(args)  # also when called without faq.cli.main
    files = update_files(args.updates)
    parsed = {f: read_batch(f) for f in files}  # every file parsed before any work
    started = time.perf_counter()
    tracker, resumed = _tracker(args, spark, reporter)
    with tracker:
        todo = pending(files, tracker.state.labels, args.state or "") if resumed else \
            [(k, f) for k, f in enumerate(files, start=1)]
        skipped = len(files) - len(todo)
        first = {"batch": None, "version": tracker.version, "count": tracker.count,
                 "seconds": round(time.perf_counter() - started, 3)}
        if args.state:
            first.update(resumed=resumed, skipped=skipped)
        if args.json:
            print_json(first)
        elif resumed:
            summary = f"{plural(tracker.count, 'binding')} of {args.pattern}"
            print(resumed_line(args.state, tracker.version, summary, skipped, len(todo)), flush=True)
        else:
            print(f"{args.path}: {plural(tracker.count, 'binding')} of {args.pattern} ({first['seconds']:.1f} s)",
                  flush=True)
        for k, (version, file) in enumerate(todo, start=1):
            reporter.note(f"batch {k}/{len(todo)} {os.path.basename(file)}")
            _apply_file(args, tracker, parsed[file], version)
        if args.follow:
            follow(args.updates, lambda: tracker.labels,
                   lambda version, file: _apply_file(args, tracker, read_batch(file), version),
                   poll=args.poll, idle_exit=args.idle_exit, state=args.state or "the tracker", note=reporter.note)


def _apply_file(args: argparse.Namespace, tracker: "MotifTracker", batch: "UpdateBatch", version: int) -> None:
    """One batch file as version ``version``, reported."""
    rows = [(s, d, 1, line) for (s, d, _), line in zip(batch.inserts, batch.insert_lines)]
    rows += [(s, d, -1, line) for (s, d), line in zip(batch.deletes, batch.delete_lines)]
    # (src, dst, diff, seq): the batch never goes through Spark
    change = tracker.apply(rows, version=version, label=batch.name)
    _report_batch(args, batch.name, change)


def _tracker(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> tuple["MotifTracker", bool]:
    """The tracker: reopened from ``--state`` when it holds this job's state, else counted from the graph."""
    from faq.incremental.job import job_identity
    from faq.incremental.store import Store
    from faq import track
    from faq.graphs.track import MotifTracker
    from faq.io import read_edge_list

    job = job_identity("track", {"edges": args.path}, pattern=str(args.pattern)) if args.state else None
    if resume(args, job, reporter.note):
        reporter.note(f"reopening the state in {args.state}")
        tracker = MotifTracker.open(args.state, progress=reporter)
        if str(tracker.pattern) != str(args.pattern):
            from faq.errors import StateDirectoryError

            tracker.close()
            raise StateDirectoryError(Store(args.state).path, f"it tracks '{tracker.pattern}', not "
                                                              f"'{args.pattern}'; use another --state directory")
        return tracker, True
    reporter.note(f"reading {args.path}")
    edges = read_edge_list(args.path, spark=spark)
    reporter.note(f"counting {args.pattern}")
    with recording(job):
        return track(edges, args.pattern, progress=reporter, state=args.state), False


def _report_batch(args: argparse.Namespace, name: str, change: "Change") -> None:
    """One batch: its delta, appeared and disappeared counts, the running count and (some) bindings."""
    shown = [] if args.count_only or args.show == 0 else change.sorted_rows(args.show)
    appeared = (change.delta + len(change)) // 2
    out = {"batch": name, **change.to_dict(), "appeared": appeared, "disappeared": appeared - change.delta}
    if args.json:
        if shown:
            out["bindings"] = shown
        print_json(out)
        return
    sign = "+" if change.delta >= 0 else ""
    print(f"batch {name}: {sign}{change.delta} (+{out['appeared']} -{out['disappeared']}), "
          f"count {change.count}, {change.seconds:.2f} s", flush=True)
    for b in shown:
        print(f"  {'+' if b['diff'] > 0 else '-'} " + " ".join(f"{v}={b[v]}" for v in args.pattern.vertices),
              flush=True)

