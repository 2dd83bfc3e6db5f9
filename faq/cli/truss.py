"""The ``faq truss`` command: every edge's trussness, or the k-truss, of a graph, on the driver without Spark.

::

    faq truss GRAPH [--k K] [--out PATH.csv|.csv.gz|.parquet] [--json]
                    [--updates DIR [--state STATE_DIR] [--follow [--poll S] [--idle-exit S]]]

GRAPH is an edge list (SNAP format; direction, self-loops and repeated edges
ignored).  The command prints the edges per trussness and the largest; with
``--k`` the k-truss's size; ``--out`` writes ``src, dst, trussness`` (the
k-truss's edges with ``--k``) under a temporary name, renamed into place.

With ``--updates DIR`` the trussness is kept current
(:class:`~faq.graphs.maintained_truss.MaintainedTruss`) through the batch
files of DIR in name order (lines ``+ src dst`` insert, ``- src dst`` delete
an edge; :mod:`faq.io.updates`), one line per batch: edges inserted and
deleted, edges whose trussness changed, the largest trussness, and whether
the batch was repaired or recomputed.  ``--state`` keeps the state durable,
committed after every batch: a run that finds a state there reopens it
(GRAPH is not decomposed again) and applies only the files after the last
one it applied, never one twice.  The state must be this job's: GRAPH (by
content) and ``--k`` as when it was made, else the run is refused
(:mod:`faq.cli.resume`; ``--restart`` starts again).  ``--follow`` then keeps applying files as they
land (:mod:`faq.cli.follow`).  ``--out`` is written after the last batch.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["truss", "g.txt", "--k", "4"])
>>> args.k, args.out, args.updates
(4, None, None)
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from faq.cli.follow import add_follow_options, check_follow_options
from faq.cli.inputs import check_table_out, require_file
from faq.cli.output import plural, print_json, resumed_line, write_arrow
from faq.cli.resume import add_restart_option, check_restart, recording, resume
from faq.errors import InvalidArgumentError

__all__ = ["add_commands", "check_truss", "run_truss"]


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``truss`` to ``commands``; ``common`` is the parent parser of the shared options."""
    sub = commands.add_parser(
        "truss", parents=[common], help="every edge's trussness (the largest k-truss holding it), or the k-truss",
        description="Truss decomposition of a graph given as an edge list: an edge's trussness is the largest k "
                    "such that it lies in a subgraph whose every edge is in at least k-2 of its triangles. "
                    "With --updates, kept current through batches of edge inserts and deletes. "
                    "Runs on the driver, without Spark.",
        epilog="examples:\n  faq truss graph.txt\n  faq truss graph.txt --k 5 --out truss5.parquet\n"
               "  faq truss graph.txt --updates batches/ --state st/ --follow     # apply files as they land\n"
               "batch files (applied in name order): lines '+ src dst' insert, '- src dst' delete an edge.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("graph", metavar="GRAPH", help="edge list file (.txt, .tsv, .gz, ...)")
    sub.add_argument("--k", type=int, metavar="K", help="only the k-truss (k >= 2)")
    sub.add_argument("--out", metavar="PATH", help="write src, dst, trussness to PATH (.csv, .csv.gz or .parquet)")
    sub.add_argument("--updates", metavar="DIR", help="a directory of batch files applied in name order after the "
                                                     "decomposition, the trussness kept current")
    sub.add_argument("--state", metavar="STATE_DIR",
                     help="with --updates: keep the state in STATE_DIR, committed after every batch; run again with "
                          "it to resume (batch files applied already are skipped)")
    add_restart_option(sub)
    add_follow_options(sub)
    sub.set_defaults(local=run_truss, check_early=check_truss)


def check_truss(args: argparse.Namespace) -> None:
    """Checks before any edge is read: the graph exists (a reopened state's too: it is compared), ``--k`` ≥ 2,
    ``--out`` a .csv or .parquet in a folder, the updates folder exists, ``--state`` and ``--follow`` only with
    ``--updates``, ``--restart`` only with ``--state``."""
    require_file(args.graph)
    if args.k is not None and args.k < 2:
        raise InvalidArgumentError(argument="--k", value=args.k, reason="a truss has k >= 2")
    check_table_out(args.out)
    for option in ("state", "follow"):
        if getattr(args, option) and not args.updates:
            raise InvalidArgumentError(argument=f"--{option}", value=getattr(args, option),
                                       reason="applies with --updates DIR only")
    if args.updates:
        from faq.io.updates import update_files

        update_files(args.updates)  # a missing or non-directory DIR is a one-line error (files: parsed by the run)
    check_follow_options(args)
    check_restart(args)


def run_truss(args: argparse.Namespace) -> None:
    """``faq truss``: decompose (or reopen the state), apply the batch files, print, write ``--out``."""
    check_truss(args)
    if args.updates:
        _run_maintained(args)
        return
    from faq.graphs.truss import truss_decomposition

    started = time.perf_counter()
    result = truss_decomposition(args.graph, k=args.k)
    summary: dict[str, Any] = {"graph": args.graph, "edges": len(result.src), "max_k": result.max_k,
                               "edges_per_trussness": result.counts}
    _finish(args, summary, result.table(), result.counts, result.max_k, started,
            {k: round(v, 3) for k, v in result.seconds.items()})


def _run_maintained(args: argparse.Namespace) -> None:
    from faq.cli.follow import follow
    from faq.graphs.maintained_truss import MaintainedTruss
    from faq.incremental.job import job_identity
    from faq.io.updates import pending, read_batch, update_files

    files = update_files(args.updates)
    parsed = {f: read_batch(f) for f in files}  # every file parsed before any work: a bad line exits 2 first
    started = time.perf_counter()
    job = job_identity("truss", {"graph": args.graph}, k=args.k) if args.state else None
    resumed = resume(args, job, lambda text: print(f"faq: {text}", file=sys.stderr, flush=True))
    if resumed:
        maintained = MaintainedTruss.open(args.state)
    else:
        with recording(job):
            maintained = MaintainedTruss(args.graph, args.k, path=args.state)
    with maintained:
        todo = pending(files, maintained.labels, args.state) if resumed else \
            [(k, f) for k, f in enumerate(files, start=1)]
        first = {"batch": None, "version": maintained.version, "edges": maintained.edges,
                 "max_k": maintained.max_k, "seconds": round(time.perf_counter() - started, 3)}
        if args.state:
            first.update(resumed=resumed, skipped=len(files) - len(todo))
        if args.json:
            print_json(first)
        elif resumed:
            summary = f"{plural(maintained.edges, 'edge')}, largest trussness {maintained.max_k}"
            print(resumed_line(args.state, maintained.version, summary, len(files) - len(todo), len(todo)),
                  flush=True)
        else:
            print(f"{args.graph}: {plural(maintained.edges, 'edge')}, largest trussness {maintained.max_k}; "
                  f"{first['seconds']:.2f} s", flush=True)
        for version, file in todo:
            _apply_file(args, maintained, parsed[file], version)
        if args.follow:
            follow(args.updates, lambda: maintained.labels,
                   lambda version, file: _apply_file(args, maintained, read_batch(file), version),
                   poll=args.poll, idle_exit=args.idle_exit, state=args.state or "the truss",
                   note=lambda text: print(f"faq: {text}", file=sys.stderr, flush=True))
        summary: dict[str, Any] = {"graph": args.graph, "edges": maintained.edges, "max_k": maintained.max_k,
                                   "edges_per_trussness": maintained.counts, "version": maintained.version}
        _finish(args, summary, maintained.table(args.k), maintained.counts, maintained.max_k, started, None)


def _apply_file(args: argparse.Namespace, maintained: Any, batch: Any, version: int) -> None:
    """One batch file as version ``version``, reported."""
    rows = [(s, d, 1, line) for (s, d, _), line in zip(batch.inserts, batch.insert_lines)]
    rows += [(s, d, -1, line) for (s, d), line in zip(batch.deletes, batch.delete_lines)]
    change = maintained.apply(rows, version=version, label=batch.name)  # (src, dst, diff, seq): line order wins
    info = change.info
    out = {"batch": batch.name, "version": change.version, "inserted": info["inserted"],
           "deleted": info["deleted"], "changed": info["changed"], "max_k": maintained.max_k,
           "recomputed": info["recomputed"], "seconds": round(change.seconds, 3)}
    if args.json:
        print_json(out)
        return
    how = "recomputed" if info["recomputed"] else "repaired"
    print(f"batch {batch.name}: +{info['inserted']} -{info['deleted']} edges, {plural(info['changed'], 'edge')} "
          f"changed trussness, largest {maintained.max_k} ({how}, {change.seconds:.3f} s)", flush=True)


def _finish(args: argparse.Namespace, summary: dict[str, Any], table: Any, counts: dict, max_k: int,
            started: float, steps: Any) -> None:
    """The final answer: ``--k``'s truss size, ``--out``, and the summary (text or one JSON line)."""
    if args.k is not None:  # the table holds the k-truss's edges already
        summary.update(k=args.k, truss_edges=table.num_rows,
                       truss_nodes=len(set(table.column("src").to_pylist()) | set(table.column("dst").to_pylist())))
    if args.out:
        write_arrow(table, args.out)
        summary["out"] = args.out
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if steps is not None:
        summary["step_seconds"] = steps
    if args.json:
        print_json(summary)
        return
    if args.updates is None:
        print(f"{args.graph}: {plural(summary['edges'], 'edge')}, largest trussness {max_k}; "
              f"{summary['seconds']:.2f} s")
    pairs = [f"{k}: {n}" for k, n in sorted(counts.items())]
    print("  edges per trussness (k: edges):")
    for start in range(0, len(pairs), 10):
        print("    " + ", ".join(pairs[start:start + 10]))
    if args.k is not None:
        print(f"  {args.k}-truss: {plural(summary['truss_edges'], 'edge')} on {plural(summary['truss_nodes'], 'node')}")
    if args.out:
        print(f"  written to {args.out}")

