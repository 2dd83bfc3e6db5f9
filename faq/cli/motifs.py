"""The ``faq motif`` command: list or count the bindings of a motif pattern.

::

    faq motif 'PATTERN' PATH [--count] [--strategy S] [--out PATH.csv|.parquet] [--json]

* ``--count``: print the number of bindings (``--json``: one object with
  ``count``, ``seconds``, ``strategy``, ``terms``, ``edges`` ...).
* ``--out PATH``: write every binding (one column per pattern vertex) to a
  ``.csv``, ``.csv.gz`` or ``.parquet`` file.
* neither: print the count and the first :data:`~faq.cli.output.PREVIEW_ROWS`
  (20) bindings, ordered.

The pattern is parsed by argparse (:func:`faq.cli.inputs.motif_pattern`), so a
bad one is a usage error before Spark starts.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["motif", "(a)->(b); (b)->(a)", "g.txt", "--count"])
>>> args.pattern.vertices, args.count, args.strategy
(('a', 'b'), True, 'auto')
>>> import importlib
>>> STRATEGIES == importlib.import_module("faq.graphs.motifs").STRATEGIES   # the job's names, written here
True
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from faq.cli.inputs import add_pattern_command, check_table_out, require_file
from faq.cli.output import plural, preview, print_json, print_table, write_columns

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from faq.progress import Reporter

__all__ = ["add_commands", "check_motif", "run_motif"]

# faq.graphs.motifs.STRATEGIES, written out: importing it would load faq.graphs and with it the
# executor and the join layers (about 0.8 s) in every faq command, since the parser is built whole
# before any command runs (faq explain needs none of them).  The module's doctest checks they agree.
STRATEGIES = ("auto", "direct", "inclusion_exclusion", "listing")

_DESCRIPTION = """\
List or count the bindings of a motif pattern in a graph given as an edge list (SNAP format;
self-loops and repeated edges are ignored). Terms are separated by ';':
  (a)->(b)     an edge a->b; also (b)<-(a), (a)-[e]->(b), (a)-[]->(b)
  (a)-(b)      an edge between a and b, either way
  !(a)->(c)    no edge a->c (negation, for induced motifs); !(a)-(c): none either way
  allow a=c    a and c may be bound to one vertex (otherwise a binding's vertices are distinct)
A binding has one column per pattern vertex, in order of first appearance."""
_EPILOG = """examples:
  faq motif '(a)->(b); (a)->(c); (b)->(c)' graph.txt --count          feed-forward triangles
  faq motif '(a)->(b); (b)->(c); (c)->(d); (d)->(a)' graph.txt --count --json
  faq motif '(a)->(b); (b)->(c); !(a)->(c); !(c)->(a)' graph.txt --out paths.parquet
"""


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``motif`` to ``commands``; ``common`` is the parent parser of the shared options."""
    help_line = "list or count the bindings of a motif pattern, e.g. '(a)->(b); (b)->(c); !(a)->(c)'"
    sub = add_pattern_command(commands, common, "motif", help=help_line, description=_DESCRIPTION, epilog=_EPILOG)
    sub.add_argument("path", metavar="PATH", help="edge list file (.txt, .tsv, .gz, ...)")
    sub.add_argument(
        "--count", action="store_true", help="only count the bindings (no listing is built when avoidable)"
    )
    sub.add_argument(
        "--out", metavar="PATH", help="write every binding to PATH (.csv, .csv.gz or .parquet) instead of printing"
    )
    sub.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="auto",
        help="how --count counts: one aggregate (direct), inclusion-exclusion over distinctness and negation "
        "(several aggregates), or the filtered listing (default: %(default)s)",
    )
    sub.set_defaults(run=run_motif, check_early=check_motif)


def check_motif(args: argparse.Namespace) -> None:
    """Checks that need no Spark: the input exists, ``--out`` has a known suffix and folder."""
    require_file(args.path)
    check_table_out(args.out)


def run_motif(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq motif``: count, write ``--out``, or print the count and a preview of the bindings."""
    from faq.graphs.motifs import count_motifs, list_motifs

    check_motif(args)  # also when called without faq.cli.main
    pattern = args.pattern
    started = time.perf_counter()
    reporter.note(f"reading {args.path}")
    edges = args.path  # the job reads it (on the driver when it can) and reports "loaded N edges"
    summary: dict[str, Any] = {"pattern": str(pattern), "path": args.path, "vertices": list(pattern.vertices)}
    rows: list[dict] = []
    if args.count and not args.out:
        reporter.note(f"counting bindings of {pattern}")
        result = count_motifs(edges, pattern, strategy=args.strategy, progress=reporter, spark=spark)
        summary.update(result.to_dict())
    else:
        reporter.note(f"listing bindings of {pattern}")
        listing = list_motifs(edges, pattern, progress=reporter, spark=spark)
        try:
            summary["count"] = listing.count()  # cached: no recomputation
            if args.out:
                write_columns(listing, pattern.vertices, args.out, reporter, name="motif")
                summary["out"] = args.out
            else:
                rows = summary["preview"] = preview(listing, pattern.vertices)  # at most PREVIEW_ROWS rows
        finally:
            listing.unpersist()
    summary["seconds"] = round(time.perf_counter() - started, 3)

    if args.json:
        print_json(summary)
        return
    count = summary["count"]
    print(f"{args.path}: {plural(count, 'binding')} of {pattern}")
    if args.out:
        print(f"  written to {args.out}; {summary['seconds']:.1f} s")
    elif args.count:
        print(f"  {summary['edges']} edges after cleaning; {summary['strategy']} "
              f"({plural(summary['terms'], 'aggregate')}); {summary['seconds']:.1f} s "
              f"(load {summary['load_seconds']:.1f} s)")
    else:
        if rows:
            print_table(rows, pattern.vertices)
        if len(rows) < count:
            print(f"(first {len(rows)} shown)")

