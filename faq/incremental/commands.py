"""The ``faq track`` command: follow a motif through batches of edge changes.

::

    faq track 'PATTERN' INITIAL_EDGES UPDATES_DIR [--count-only] [--show N] [--json]

``UPDATES_DIR`` holds batch files of ``+ src dst`` / ``- src dst`` lines
(blank lines and ``#`` comments skipped), applied in file-name order; within
a file the last line about an edge wins.  Per batch it prints the change in
the number of bindings and the running count; without ``--count-only`` also
the first ``--show`` bindings that appeared (``+``) and disappeared (``-``).
With ``--json``: JSON lines, first the initial count (``"batch": null``),
then one object per batch with ``batch``, ``version``, ``delta``, ``count``,
``seconds``, ``appeared``, ``disappeared`` and ``edges_changed``.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="faq")
>>> add_commands(parser.add_subparsers(dest="command"), argparse.ArgumentParser(add_help=False))
>>> args = parser.parse_args(["track", "(a)->(b); (b)->(a)", "g.txt", "updates", "--count-only"])
>>> args.pattern.vertices, args.count_only, args.show
(('a', 'b'), True, 20)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from faq.graphs.motif_commands import _pattern

PREVIEW_ROWS = 20

_DESCRIPTION = """\
Count a motif pattern in a graph (an edge list, SNAP format; self-loops and repeated edges ignored),
then apply batches of edge changes and report, per batch, the bindings that appeared and disappeared
and the running count. Patterns as for 'faq motif': (a)->(b), (a)-(b), !(a)->(c), allow a=c.
Each batch is evaluated by exactly-once delta rules seeded by the changed edges."""
_EPILOG = """examples:
  faq track '(a)->(b); (a)->(c); (b)->(c)' graph.txt updates/ --count-only
  faq track '(a)->(b); (b)->(c); !(a)->(c)' graph.txt updates/ --json
batch files (applied in name order): lines '+ src dst' insert, '- src dst' delete an edge."""


def add_commands(commands: Any, add_common: Any) -> None:
    """Add ``track`` to the sub-command set ``commands`` (see :mod:`faq.graphs.motif_commands`)."""
    parents = [add_common] if isinstance(add_common, argparse.ArgumentParser) else []
    sub = commands.add_parser(
        "track",
        parents=parents,
        help="follow a motif through batches of edge inserts and deletes",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if not parents and callable(add_common):
        add_common(sub)
    sub.add_argument("pattern", metavar="PATTERN", type=_pattern, help="the motif, e.g. '(a)->(b); (b)->(c)'")
    sub.add_argument("path", metavar="INITIAL_EDGES", help="edge list file of the initial graph")
    sub.add_argument("updates", metavar="UPDATES_DIR", help="directory of batch files, applied in name order")
    sub.add_argument("--count-only", action="store_true", help="print only the counts, not the bindings")
    sub.add_argument("--show", type=int, default=PREVIEW_ROWS, metavar="N",
                     help="bindings shown per batch (appeared and disappeared; default %(default)s)")
    sub.set_defaults(run=run_track, check_early=check_track)


def check_track(args: argparse.Namespace) -> None:
    """Checks that need no Spark: the inputs exist and every batch file parses."""
    from faq.io import InputNotFoundError
    from faq.incremental.updates import update_files

    if not os.path.exists(args.path):
        raise InputNotFoundError(path=args.path)
    update_files(args.updates)  # a missing or non-directory UPDATES_DIR is a one-line error
    if args.show < 0:
        from faq.io import InvalidArgumentError

        raise InvalidArgumentError("--show", args.show, "must be 0 or more")


def run_track(args: argparse.Namespace, spark, reporter) -> int:
    """Handler of ``faq track``."""
    from faq.incremental.track import track
    from faq.io import read_edge_list
    from faq.incremental.updates import read_updates

    check_track(args)
    batches = read_updates(args.updates)  # every file parsed before any Spark work
    started = time.perf_counter()
    reporter.note(f"reading {args.path}")
    edges = read_edge_list(args.path, spark=spark)
    reporter.note(f"counting {args.pattern}")
    with track(edges, args.pattern, progress=reporter) as tracker:
        first = {"batch": None, "version": 0, "count": tracker.count,
                 "seconds": round(time.perf_counter() - started, 3)}
        if args.json:
            _print_json(first)
        else:
            print(f"{args.path}: {tracker.count} binding{'s' if tracker.count != 1 else ''} of {args.pattern} "
                  f"({first['seconds']:.1f} s)", flush=True)
        for k, batch in enumerate(batches, start=1):
            reporter.note(f"batch {k}/{len(batches)} {batch.name}: {len(batch.inserts)} insert(s), "
                          f"{len(batch.deletes)} delete(s)")
            rows = [(s, d, 1, line) for (s, d, _), line in zip(batch.inserts, batch.insert_lines)]
            rows += [(s, d, -1, line) for (s, d), line in zip(batch.deletes, batch.delete_lines)]
            change = tracker.apply(rows)  # (src, dst, diff, seq): the batch never goes through Spark
            shown = [] if args.count_only or args.show == 0 else change.sorted_rows(args.show)
            appeared = (change.delta + len(change)) // 2
            out = {"batch": batch.name, **change.to_dict(), "appeared": appeared,
                   "disappeared": appeared - change.delta}
            if args.json:
                if shown:
                    out["bindings"] = shown
                _print_json(out)
            else:
                sign = "+" if change.delta >= 0 else ""
                print(f"batch {batch.name}: {sign}{change.delta} (+{out['appeared']} -{out['disappeared']}), "
                      f"count {change.count}, {change.seconds:.2f} s", flush=True)
                for b in shown:
                    print(f"  {'+' if b['diff'] > 0 else '-'} " +
                          " ".join(f"{v}={b[v]}" for v in args.pattern.vertices), flush=True)
    return 0


def _print_json(obj: dict) -> None:
    """One JSON line, flushed at once: a batch's line must not wait for the next batch."""
    from faq.cli import _print_json as print_json

    print_json(obj)
    sys.stdout.flush()
