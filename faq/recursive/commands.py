"""The ``faq paths`` and ``faq components`` commands.

::

    faq paths GRAPH --source S [--semiring boolean|min_plus|max_min] [--weight-column N]
              [--updates DIR [--state STATE_DIR]] [--out PATH] [--json]
    faq components GRAPH [--updates DIR [--state STATE_DIR]] [--out PATH] [--json]

``faq.cli.build_parser`` adds them with :func:`add_commands`.  Each handler
is ``(args, spark, reporter) -> exit code``, as the other commands of
:mod:`faq.cli`; errors propagate (``faq.cli.main`` turns them into one line).

Output: without ``--json``, a summary line for the initial solve, one line per
update batch (values changed, seconds), and a preview of the answer (or where
``--out`` wrote it).  With ``--json``, JSON lines: first the initial solve
(``"batch": null``), then one object per batch (``batch``, ``changed``,
``seconds``, ``iterations``, ``inserted``), then, with ``--out``, one object
``{"out": PATH, "rows": N}``.

The answer is kept current by :class:`~faq.recursive.maintained.MaintainedFixpoint`:
edges and answer on the driver, so a batch runs no Spark job.  With
``--state DIR`` (as ``faq track --state``) the state is durable in DIR,
committed after every batch: a run that finds a state in DIR reopens it
instead of solving again, skips the batch files already applied (recorded
by name; they must be the first files of ``--updates`` in name order:
:func:`faq.io.updates.pending`), never applies one twice, and goes
on with the rest; its first output line says how many were skipped.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="faq")
>>> add_commands(parser.add_subparsers(dest="command"), lambda p: p.add_argument("--json", action="store_true"))
>>> args = parser.parse_args(["paths", "g.txt", "--source", "1", "--semiring", "max_min"])
>>> args.source, args.semiring, args.weight_column, args.run is run_paths
(1, 'max_min', None, True)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any, Callable, Optional, Sequence, Union

from faq.errors import FAQKeyError, FAQValueError, InputNotFoundError, NonMonotoneUpdateError, StateDirectoryError
from faq.recursive.seminaive import NODE, PATH_SEMIRINGS, VALUE

PREVIEW_ROWS = 20
OUT_SUFFIXES = (".csv", ".csv.gz", ".parquet")
DEFAULT_WEIGHT_COLUMN = 3

Common = Union[argparse.ArgumentParser, Callable[[argparse.ArgumentParser], Any]]


# --- parser -------------------------------------------------------------------------


def add_commands(commands: "argparse._SubParsersAction", add_common: Common) -> None:
    """Add the ``paths`` and ``components`` subcommands to ``commands``.

    ``add_common`` is either a parent parser holding the common options
    (``--master``, ``--quiet``, ``--json``), or a function that adds them to
    a parser.  Each subcommand sets ``run`` (the handler) and ``check_early``
    (checks that need no Spark, for the CLI to call before starting it).
    """

    def new_parser(name: str, **kw: Any) -> argparse.ArgumentParser:
        if isinstance(add_common, argparse.ArgumentParser):
            return commands.add_parser(name, parents=[add_common], **kw)
        parser = commands.add_parser(name, **kw)
        add_common(parser)
        return parser

    updates_help = (
        "a directory of update batches, applied in file-name order after the first answer: "
        "lines '+ src dst [weight]' insert an edge or improve its weight (blank lines and '#' comments "
        "are skipped); a deletion ('- src dst') or a worse weight is an error (insert-only maintenance)"
    )
    state_help = (
        "keep the maintained state (edges and answer) in STATE_DIR, committed after every batch; run again "
        "with it to resume after an interruption (batch files already applied are skipped, never applied twice)"
    )
    paths = new_parser(
        "paths",
        help="reachability, shortest or widest paths from a source (a semiring fixpoint)",
        description=(
            "Single-source paths over an edge list (SNAP format: 'src dst [weight ...]' per line, '#' comments, "
            "tabs/spaces/commas, .gz ok), by semi-naive evaluation on Spark: boolean = reachable nodes, "
            "min_plus = shortest-path lengths, max_min = widest-path (bottleneck) capacities. "
            "Update batches are applied on a resident index on the driver (no Spark job per batch). "
            "Progress per iteration and per batch goes to stderr."
        ),
        epilog=(
            "Without --json: a summary, one line per update batch and a preview of the answer. With --json: "
            "JSON lines, first the initial solve ('batch': null), then one object per batch (batch, changed, "
            "seconds, ...), then {'out': PATH, 'rows': N} when --out is given."
        ),
    )
    paths.add_argument("graph", metavar="GRAPH", help="edge list file (.txt, .csv, .gz, ...)")
    paths.add_argument("--source", required=True, type=int, metavar="S", help="the source node id")
    paths.add_argument(
        "--semiring",
        choices=PATH_SEMIRINGS,
        default="min_plus",
        help="boolean (reachability), min_plus (shortest paths) or max_min (widest paths); default: %(default)s",
    )
    paths.add_argument(
        "--weight-column",
        type=int,
        metavar="N",
        help=(
            "1-based column of the edge file holding the weight (length for min_plus, capacity for max_min), "
            f"default {DEFAULT_WEIGHT_COLUMN}; a file without a third column gives every edge weight 1 "
            "(hop counts); ignored for boolean"
        ),
    )
    paths.add_argument("--updates", metavar="DIR", help=updates_help)
    paths.add_argument("--state", metavar="STATE_DIR", help=state_help)
    paths.add_argument(
        "--out", metavar="PATH", help="write the answer as CSV with the header 'node,value' (reachable nodes only)"
    )
    paths.set_defaults(run=run_paths, check_early=check_paths)

    comps = new_parser(
        "components",
        help="connected components of a graph (minimum label propagation)",
        description=(
            "Connected components of the undirected graph of an edge list (directions and weights ignored), "
            "by min-label propagation as a semiring fixpoint on Spark. The value of a node is the smallest "
            "node id of its component; a node with only a self-loop is a component of its own."
        ),
        epilog=(
            "Without --json: a summary, one line per update batch and a preview. With --json: JSON lines, "
            "first the initial solve ('batch': null), then one object per batch, then {'out': PATH, 'rows': N} "
            "when --out is given."
        ),
    )
    comps.add_argument("graph", metavar="GRAPH", help="edge list file (.txt, .csv, .gz, ...)")
    comps.add_argument("--updates", metavar="DIR", help=updates_help.replace(" [weight]", ""))
    comps.add_argument("--state", metavar="STATE_DIR", help=state_help)
    comps.add_argument(
        "--out", metavar="PATH", help="write CSV with the header 'node,value' (value: smallest node id of the component)"
    )
    comps.set_defaults(run=run_components, check_early=check_components)


# --- checks before Spark -------------------------------------------------------------


def _require_file(path: str) -> None:
    if "://" not in path and not any(c in path for c in "*?[") and not os.path.exists(path):
        raise InputNotFoundError(path=path)


def _check_out(out: Optional[str]) -> None:
    if not out:
        return
    if not out.lower().rstrip("/").endswith(OUT_SUFFIXES):
        raise FAQValueError(f"--out {out!r}: write a .csv (or .csv.gz, .parquet) file", path=out)
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise FAQValueError(f"--out {out!r}: the folder {folder!r} does not exist; create it first", path=out)


def _check_updates(updates: Optional[str], semiring: str) -> None:
    """Read every batch file once (syntax, deletions) so bad updates fail before Spark starts.

    Whether a ``+`` line must carry a weight depends on the graph file, which
    the handler checks when it reads the batches again.
    """
    if updates:
        from faq.io.updates import read_updates

        _refuse_deletions(read_updates(updates, weighted=False), semiring)


def _refuse_deletions(batches: Sequence, semiring: str) -> None:
    for batch in batches:
        if batch.deletes:
            raise NonMonotoneUpdateError(
                kind="deletion",
                count=len(batch.deletes),
                example=batch.deletes[0],
                semiring=semiring,
                where=batch.where("deletion"),
            )


def check_paths(args: argparse.Namespace) -> None:
    """Checks of ``faq paths`` that need no Spark."""
    _require_file(args.graph)
    if args.weight_column is not None and args.weight_column < 3:
        raise FAQValueError(
            f"--weight-column {args.weight_column}: columns 1 and 2 hold the node ids; give 3 or more",
            argument="--weight-column",
            value=args.weight_column,
        )
    _check_updates(args.updates, args.semiring)
    _check_out(args.out)


def check_components(args: argparse.Namespace) -> None:
    """Checks of ``faq components`` that need no Spark."""
    _require_file(args.graph)
    _check_updates(args.updates, "components")
    _check_out(args.out)


# --- helpers -------------------------------------------------------------------------


def _first_data_fields(path: str, spark) -> Optional[list]:
    """The fields of the first data line of an edge list (None when it has none)."""
    import re

    separator = re.compile(r"[ \t\r\f\v,]+")
    if os.path.isfile(path):
        if path.endswith(".gz"):
            import gzip

            opener: Any = gzip.open
        elif path.endswith(".bz2"):
            import bz2

            opener = bz2.open
        else:
            opener = open
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                line = raw.strip()
                if line and not line.startswith(("#", "%")):
                    return separator.split(line)
        return None
    from pyspark.sql import functions as F

    text = spark.read.text(path)
    line = F.trim(F.col("value"))
    row = text.select(line.alias("l")).where((F.col("l") != "") & ~F.col("l").rlike("^[#%]")).first()  # one row
    return None if row is None else separator.split(row[0])


def _weight_column(args: argparse.Namespace, spark, reporter) -> Optional[int]:
    if args.semiring == "boolean":
        if args.weight_column is not None:
            reporter.note("--weight-column is ignored for boolean reachability")
        return None
    if args.weight_column is not None:
        return args.weight_column
    fields = _first_data_fields(args.graph, spark)
    if fields is not None and len(fields) >= DEFAULT_WEIGHT_COLUMN:
        return DEFAULT_WEIGHT_COLUMN
    reporter.note(f"{args.graph} has no column {DEFAULT_WEIGHT_COLUMN}: every edge has weight 1 (hop counts)")
    return None


def _read_batches(args: argparse.Namespace, weighted: bool, semiring: str) -> list:
    """Every batch file, read before any Spark work; deletions are refused here (no recomputation in the CLI)."""
    if not args.updates:
        return []
    from faq.io.updates import read_updates

    batches = read_updates(args.updates, weighted=weighted)
    _refuse_deletions(batches, semiring)
    return batches


def _reopen(args: argparse.Namespace, reporter, problem: str, semiring: str, source: Optional[int]):
    """The state in ``--state`` when it holds one (checked against the command), else None."""
    if not args.state:
        return None
    from faq.incremental.store import Store
    from faq.recursive.maintained import MaintainedFixpoint

    store = Store(args.state)
    if not store.exists():
        return None
    reporter.note(f"reopening the state in {args.state}")
    maintained = MaintainedFixpoint.open(args.state, progress=reporter)
    held = "components" if maintained.components else \
        f"paths from {maintained.source} ({maintained.semiring.name})"
    wanted = "components" if problem == "components" else f"paths from {source} ({semiring})"
    if held != wanted:
        maintained.close()
        raise StateDirectoryError(store.path, f"it holds {held}, not {wanted}; use another --state directory")
    return maintained


def _todo(maintained, batches: Sequence, resumed: bool, state: Optional[str]) -> list:
    """(version, batch) still to apply: all of them, or after a resume those the state has not applied."""
    if not resumed:
        return [(k, b) for k, b in enumerate(batches, start=1)]
    from faq.io.updates import pending

    by_file = {b.path: b for b in batches}
    return [(v, by_file[f]) for v, f in pending([b.path for b in batches], maintained.labels, state or "")]


def _first_line(maintained, args: argparse.Namespace, first: dict, resumed: bool, skipped: int, todo: int,
                summary: str) -> None:
    """The initial solve (or the reopened state): JSON, or one line of text."""
    first["version"] = maintained.version
    if args.state:
        first.update(state=args.state, resumed=resumed, skipped=skipped)
    if args.json:
        _print_json(first)
    elif resumed:
        print(f"{args.state}: resumed at version {maintained.version}, {summary}; {skipped} batch file(s) "
              f"applied already, {todo} to go", flush=True)
    else:
        print(f"{args.graph}: {summary}; {maintained.initial_iterations} iteration(s); "
              f"{maintained.initial_seconds:.1f} s", flush=True)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _print_json(obj: dict) -> None:
    print(json.dumps({k: _jsonable(v) for k, v in obj.items()}, default=str, ensure_ascii=False), flush=True)


def _preview(maintained) -> list:
    return [{NODE: n, VALUE: _jsonable(v)} for n, v in maintained.head(PREVIEW_ROWS)]


def _print_preview(rows: list, total: int) -> None:
    cells = [[str(r[NODE]), str(r[VALUE])] for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate((NODE, VALUE))]
    print("  ".join(h.rjust(w) for h, w in zip((NODE, VALUE), widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))
    more = f", first {len(rows)} shown" if len(rows) < total else ""
    print(f"({total} rows{more})")


def _run_batches(maintained, todo: Sequence, args: argparse.Namespace, reporter) -> None:
    for k, (version, batch) in enumerate(todo, start=1):
        reporter.note(f"batch {k}/{len(todo)} {batch.name}: {len(batch.inserts)} insertion(s)")
        change = maintained.apply(batch, version=version, label=batch.name)
        info = change.info
        if args.json:
            _print_json({"batch": batch.name, **change.to_dict()})
        else:
            print(
                f"batch {batch.name}: {len(change)} value(s) changed in {change.seconds:.2f} s "
                f"({info['iterations']} iteration(s), {info['inserted']} effective insertion(s)), "
                f"version {change.version}",
                flush=True,
            )


def _finish(maintained, args: argparse.Namespace, reporter, show_preview: bool) -> None:
    rows = maintained.size
    if args.out:
        from faq.factor import Factor
        from faq.io import write_table

        state = maintained.state
        reporter.note(f"writing {args.out}")
        write_table(Factor(df=state.df.orderBy(NODE), variables=(NODE,), semiring=state.semiring, value=VALUE,
                           name=state.name), args.out)
        if args.json:
            _print_json({"out": args.out, "rows": rows})
        else:
            print(f"wrote {rows} rows to {args.out}")
    elif show_preview and not args.json:
        _print_preview(_preview(maintained), rows)


# --- handlers -----------------------------------------------------------------------


def run_paths(args: argparse.Namespace, spark, reporter) -> int:
    """``faq paths``: single-source paths, then the update batches (resumed from ``--state`` if it holds one)."""
    from pyspark.sql import functions as F

    from faq.io import read_edge_list
    from faq.recursive.maintained import MaintainedFixpoint
    from faq.semirings import get_semiring

    check_paths(args)
    semiring = get_semiring(args.semiring)
    weight_column = _weight_column(args, spark, reporter)
    batches = _read_batches(args, weighted=weight_column is not None, semiring=semiring.name)
    started = time.perf_counter()
    maintained = _reopen(args, reporter, "paths", semiring.name, args.source)
    resumed = maintained is not None
    source = args.source
    if not resumed:
        reporter.note(f"reading {args.graph}")
        edges = read_edge_list(
            args.graph,
            spark=spark,
            semiring=semiring if weight_column is not None else "counting",
            weight_column=weight_column,
            self_loops="keep",  # harmless, and a negative loop is a negative cycle
            duplicates="keep",  # parallel edges: ⊕-merged in the index
        )
        in_batches = any(source in (s, d) for b in batches for (s, d, _) in b.inserts)
        if not in_batches:
            u, v = edges.variables
            found = edges.df.where((F.col(u) == source) | (F.col(v) == source)).limit(1).count()  # at most 1
            if not found:
                raise FAQKeyError(error_class="UNKNOWN_NODE", node=source, graph=args.graph)
        what = {"boolean": "reachable", "min_plus": "shortest paths", "max_min": "widest paths"}[semiring.name]
        reporter.note(f"{what} from {source} ({semiring.name})")
        maintained = MaintainedFixpoint.paths(edges, source, semiring, progress=reporter, path=args.state)
    with maintained:
        todo = _todo(maintained, batches, resumed, args.state)
        rows = maintained.size
        first = {
            "batch": None,
            "graph": args.graph,
            "semiring": semiring.name,
            "source": source,
            "weight_column": weight_column,
            "rows": rows,
            "iterations": maintained.initial_iterations,
            "seconds": round(maintained.initial_seconds if not resumed else time.perf_counter() - started, 3),
            "placement": maintained.placement,
        }
        if args.json and not todo and not args.out:
            first["preview"] = _preview(maintained)
        noun = "node(s) reachable" if semiring.name == "boolean" else "node(s) reached"
        _first_line(maintained, args, first, resumed, len(batches) - len(todo), len(todo),
                    f"{rows} {noun} from {source} ({semiring.name})")
        _run_batches(maintained, todo, args, reporter)
        _finish(maintained, args, reporter, show_preview=True)
    return 0


def run_components(args: argparse.Namespace, spark, reporter) -> int:
    """``faq components``: connected components, then the update batches (resumed from ``--state``)."""
    from faq.io import read_edge_list
    from faq.recursive.maintained import MaintainedFixpoint

    check_components(args)
    batches = _read_batches(args, weighted=False, semiring="components")
    started = time.perf_counter()
    maintained = _reopen(args, reporter, "components", "min_label", None)
    resumed = maintained is not None
    if not resumed:
        reporter.note(f"reading {args.graph}")
        edges = read_edge_list(args.graph, spark=spark, self_loops="keep")  # a loop-only node is a component
        reporter.note("connected components (min label propagation)")
        maintained = MaintainedFixpoint.components(edges, progress=reporter, path=args.state)
    with maintained:
        todo = _todo(maintained, batches, resumed, args.state)
        rows, components = maintained.size, _component_count(maintained)
        first = {
            "batch": None,
            "graph": args.graph,
            "nodes": rows,
            "components": components,
            "iterations": maintained.initial_iterations,
            "seconds": round(maintained.initial_seconds if not resumed else time.perf_counter() - started, 3),
            "placement": maintained.placement,
        }
        if args.json and not todo and not args.out:
            first["preview"] = _preview(maintained)
        _first_line(maintained, args, first, resumed, len(batches) - len(todo), len(todo),
                    f"{rows} node(s) in {components} connected component(s)")
        _run_batches(maintained, todo, args, reporter)
        _finish(maintained, args, reporter, show_preview=True)
    return 0


def _component_count(maintained) -> int:
    """Distinct labels: on the driver, or one aggregate when the answer lives on Spark."""
    if maintained.placement == "driver":
        import numpy as np

        return int(len(np.unique(maintained.table().column(VALUE).to_numpy())))
    from pyspark.sql import functions as F

    return int(maintained.state.df.agg(F.count_distinct(F.col(VALUE))).first()[0])
