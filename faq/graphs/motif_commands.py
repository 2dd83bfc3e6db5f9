"""The ``faq motif`` command: list or count the bindings of a motif pattern.

::

    faq motif 'PATTERN' PATH [--count] [--strategy S] [--out PATH.csv|.parquet] [--json]

* ``--count``: print the number of bindings (``--json``: one object with
  ``count``, ``seconds``, ``strategy``, ``terms``, ``edges`` ...).
* ``--out PATH``: write every binding (one column per pattern vertex) to a
  ``.csv``, ``.csv.gz`` or ``.parquet`` file.
* neither: print the count and the first 20 bindings (ordered).

:func:`add_commands` adds the sub-command to ``faq``'s parser; the handler
follows the CLI's convention ``(args, spark, reporter) -> exit code`` and
``args.check(args)`` runs the checks that need no Spark (the pattern is
already parsed by argparse, so a bad one fails before Spark starts).

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="faq")
>>> add_commands(parser.add_subparsers(dest="command"), argparse.ArgumentParser(add_help=False))
>>> args = parser.parse_args(["motif", "(a)->(b); (b)->(a)", "g.txt", "--count"])
>>> args.pattern.vertices, args.count, args.strategy
(('a', 'b'), True, 'auto')
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from faq.errors import MotifPatternError
from faq.graphs.motifs import STRATEGIES, Pattern, count_motifs, list_motifs, parse_pattern

PREVIEW_ROWS = 20
TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")

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


def _pattern(text: str) -> Pattern:
    """argparse type: parse the pattern, so a bad one is a usage error before Spark starts."""
    try:
        return parse_pattern(text)
    except MotifPatternError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_commands(commands: Any, add_common: Any) -> None:
    """Add ``motif`` to the sub-command set ``commands`` (from ``add_subparsers``).

    ``add_common`` gives the options every command takes (``--master``,
    ``--quiet``, ``--json``): either the parent parser holding them (as
    ``faq.cli.build_parser`` makes it) or a function that adds them to a
    parser.
    """
    parents = [add_common] if isinstance(add_common, argparse.ArgumentParser) else []
    sub = commands.add_parser(
        "motif",
        parents=parents,
        help="list or count the bindings of a motif pattern, e.g. '(a)->(b); (b)->(c); !(a)->(c)'",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if not parents and callable(add_common):
        add_common(sub)
    sub.add_argument("pattern", metavar="PATTERN", type=_pattern, help="the motif, e.g. '(a)->(b); (b)->(c)'")
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
    sub.set_defaults(run=run_motif, check=check_motif)


def check_motif(args: argparse.Namespace) -> None:
    """Checks that need no Spark: the input exists, ``--out`` has a known suffix and folder."""
    from faq.errors import FAQValueError, InputNotFoundError

    path = args.path
    if "://" not in path and not any(c in path for c in "*?[") and not os.path.exists(path):
        raise InputNotFoundError(path=path)
    if args.out:
        if not args.out.lower().rstrip("/").endswith(TABLE_SUFFIXES):
            raise FAQValueError(f"--out {args.out!r}: write a .csv, .csv.gz or .parquet file", path=args.out)
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise FAQValueError(
                f"--out {args.out!r}: the folder {folder!r} does not exist; create it first", path=args.out
            )


def run_motif(args: argparse.Namespace, spark, reporter) -> int:
    """Handler of ``faq motif`` (``(args, spark, reporter) -> exit code``)."""
    from faq.io import read_edge_list

    check_motif(args)
    pattern: Pattern = args.pattern if isinstance(args.pattern, Pattern) else parse_pattern(args.pattern)
    started = time.perf_counter()
    reporter.note(f"reading {args.path}")
    edges = read_edge_list(args.path, spark=spark)
    summary: dict[str, Any] = {"pattern": str(pattern), "path": args.path, "vertices": list(pattern.vertices)}
    preview: list[dict] = []
    if args.count and not args.out:
        reporter.note(f"counting bindings of {pattern}")
        result = count_motifs(edges, pattern, strategy=args.strategy, progress=reporter)
        summary.update(result.to_dict())
    else:
        reporter.note(f"listing bindings of {pattern}")
        listing = list_motifs(edges, pattern, progress=reporter)
        try:
            summary["count"] = listing.count()  # cached: no recomputation
            if args.out:
                reporter.note(f"writing {args.out}")
                _write(listing, pattern, args.out)
                summary["out"] = args.out
            else:
                rows = listing.orderBy(*pattern.vertices).limit(PREVIEW_ROWS).collect()  # at most 20 rows
                preview = [r.asDict() for r in rows]
                summary["preview"] = preview
        finally:
            listing.unpersist()
    summary["seconds"] = round(time.perf_counter() - started, 3)

    if args.json:
        from faq.cli import _print_json

        _print_json(summary)
        return 0
    count = summary["count"]
    print(f"{args.path}: {count} binding{'s' if count != 1 else ''} of {pattern}")
    if args.out:
        print(f"  written to {args.out}; {summary['seconds']:.1f} s")
    elif args.count:
        print(f"  {summary['edges']} edges after cleaning; {summary['strategy']} ({summary['terms']} "
              f"aggregate{'s' if summary['terms'] != 1 else ''}); {summary['seconds']:.1f} s")
    else:
        if preview:
            from faq.cli import _print_table

            _print_table(preview, pattern.vertices)
        if len(preview) < count:
            print(f"(first {len(preview)} shown)")
    return 0


def _write(listing, pattern: Pattern, out: str) -> None:
    """Write the bindings' vertex columns (no value column) with :func:`faq.io.write_table`."""
    from faq.factor import Factor
    from faq.io import write_table
    from faq.semirings import get_semiring

    # write_table writes a factor's variables then its value column: naming the last vertex
    # as the "value" writes exactly the vertex columns, in pattern order.
    *first, last = pattern.vertices
    write_table(Factor(listing, tuple(first), get_semiring("counting"), value=last, name="motif"), out)
