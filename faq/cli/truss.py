"""The ``faq truss`` command: every edge's trussness, or the k-truss, of a graph, on the driver without Spark.

::

    faq truss GRAPH [--k K] [--out PATH.csv|.csv.gz|.parquet] [--json]

GRAPH is an edge list (SNAP format; direction, self-loops and repeated edges
ignored).  The command prints the edges per trussness and the largest; with
``--k`` the k-truss's size; ``--out`` writes ``src, dst, trussness`` (the
k-truss's edges with ``--k``) under a temporary name, renamed into place.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["truss", "g.txt", "--k", "4"])
>>> args.k, args.out
(4, None)
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from faq.cli.inputs import check_table_out, require_file
from faq.cli.output import plural, print_json, write_arrow
from faq.errors import InvalidArgumentError

__all__ = ["add_commands", "check_truss", "run_truss"]


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``truss`` to ``commands``; ``common`` is the parent parser of the shared options."""
    sub = commands.add_parser(
        "truss", parents=[common], help="every edge's trussness (the largest k-truss holding it), or the k-truss",
        description="Truss decomposition of a graph given as an edge list: an edge's trussness is the largest k "
                    "such that it lies in a subgraph whose every edge is in at least k-2 of its triangles. "
                    "Runs on the driver, without Spark.",
        epilog="examples:\n  faq truss graph.txt\n  faq truss graph.txt --k 5 --out truss5.parquet",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("graph", metavar="GRAPH", help="edge list file (.txt, .tsv, .gz, ...)")
    sub.add_argument("--k", type=int, metavar="K", help="only the k-truss (k >= 2)")
    sub.add_argument("--out", metavar="PATH", help="write src, dst, trussness to PATH (.csv, .csv.gz or .parquet)")
    sub.set_defaults(local=run_truss, check_early=check_truss)


def check_truss(args: argparse.Namespace) -> None:
    """Checks before any edge is read: the graph exists, ``--k`` ≥ 2, ``--out`` a .csv or .parquet in a folder."""
    require_file(args.graph)
    if args.k is not None and args.k < 2:
        raise InvalidArgumentError(argument="--k", value=args.k, reason="a truss has k >= 2")
    check_table_out(args.out)


def run_truss(args: argparse.Namespace) -> None:
    """``faq truss``: decompose, then print the edges per trussness (and write ``--out``)."""
    from faq.graphs.truss import truss

    check_truss(args)
    started = time.perf_counter()
    result = truss(args.graph, k=args.k)
    table = result.table()
    summary: dict[str, Any] = {"graph": args.graph, "edges": len(result.src), "max_k": result.max_k,
                               "edges_per_trussness": result.counts}
    if args.k is not None:
        summary.update(k=args.k, truss_edges=table.num_rows,
                       truss_nodes=len(set(table.column("src").to_pylist()) | set(table.column("dst").to_pylist())))
    if args.out:
        write_arrow(table, args.out)
        summary["out"] = args.out
    summary["seconds"] = round(time.perf_counter() - started, 3)
    summary["step_seconds"] = {k: round(v, 3) for k, v in result.seconds.items()}
    if args.json:
        print_json(summary)
        return
    print(f"{args.graph}: {plural(summary['edges'], 'edge')}, largest trussness {result.max_k}; "
          f"{summary['seconds']:.2f} s")
    pairs = [f"{k}: {n}" for k, n in sorted(result.counts.items())]
    print("  edges per trussness (k: edges):")
    for start in range(0, len(pairs), 10):
        print("    " + ", ".join(pairs[start:start + 10]))
    if args.k is not None:
        print(f"  {args.k}-truss: {plural(summary['truss_edges'], 'edge')} on {plural(summary['truss_nodes'], 'node')}")
    if args.out:
        print(f"  written to {args.out}")
