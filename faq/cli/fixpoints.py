"""The fixpoint commands: ``faq paths`` and ``faq components``.

::

    faq paths GRAPH --source S [--semiring boolean|min_plus|max_min] [--weight-column N]
              [--updates DIR [--state STATE_DIR] [--follow]] [--out PATH] [--json]
    faq components GRAPH [--updates DIR [--state STATE_DIR] [--follow]] [--out PATH] [--json]

With ``--follow`` the command keeps applying the batch files that land in
``--updates`` after the ones present, each once, until Ctrl-C or
``--idle-exit`` (:mod:`faq.cli.follow`).

:func:`add_commands` adds both to ``faq``'s parser; each sets ``run`` (the
handler) and ``check_early`` (its checks that need no Spark), as
:mod:`faq.cli.entry` describes.

Output: without ``--json``, a summary line for the initial solve, one line per
update batch (values changed, seconds), and a preview of the answer (or where
``--out`` wrote it).  With ``--json``, JSON lines: first the initial solve
(``"batch": null``, with ``deletions``: how a deletion is taken), then one
object per batch (``batch``, ``changed``, ``seconds``, ``iterations``,
``inserted``, ``deleted``, ``trimmed``, ``recomputed``), then, with
``--out``, one object ``{"out": PATH, "rows": N}``.

The answer is kept current by :class:`~faq.recursive.maintained.MaintainedFixpoint`:
edges and answer on the driver, so a batch runs no Spark job; a ``- src dst``
line (or a worse weight) trims the nodes derived through that edge and
derives them again (:mod:`faq.recursive.trimming`), no ``--recompute``
needed.  With
``--state DIR`` (as ``faq track --state``) the state is durable in DIR,
committed after every batch: a run that finds a state in DIR reopens it
instead of solving again, skips the batch files already applied (recorded
by name; they must be the first files of ``--updates`` in name order:
:func:`faq.io.updates.pending`), never applies one twice, and goes
on with the rest; its first output line says how many were skipped.  Only
the same job's state is resumed: GRAPH (by content), and for ``paths`` the
source, semiring and weight column, as when it was made, else the run is
refused (:mod:`faq.cli.resume`; ``--restart`` starts again).

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["paths", "g.txt", "--source", "1", "--semiring", "max_min"])
>>> args.source, args.semiring, args.weight_column, args.run is run_paths
(1, 'max_min', None, True)
"""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Sequence

from faq.cli.follow import add_follow_options, check_follow_options
from faq.cli.inputs import check_table_out, require_file
from faq.cli.output import PREVIEW_ROWS, jsonable, print_json, print_table, resumed_line, write_table
from faq.cli.resume import add_restart_option, check_restart, recording, resume
from faq.errors import FAQKeyError, FAQValueError, StateDirectoryError
from faq.recursive.seminaive import NODE, PATH_SEMIRINGS, VALUE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from faq.io.updates import UpdateBatch
    from faq.progress import Reporter
    from faq.recursive.maintained import MaintainedFixpoint

__all__ = ["add_commands", "check_paths", "check_components", "run_paths", "run_components"]

DEFAULT_WEIGHT_COLUMN = 3


# --- parser -------------------------------------------------------------------------


_UPDATES_HELP = (
    "a directory of update batches, applied in file-name order after the first answer: "
    "lines '+ src dst [weight]' insert an edge or set its weight, lines '- src dst' delete one (blank lines "
    "and '#' comments are skipped); deletions and worse weights are incremental too (the nodes derived "
    "through a removed edge are reset and derived again)"
)
_STATE_HELP = (
    "keep the maintained state (edges and answer) in STATE_DIR, committed after every batch; run again "
    "with it to resume after an interruption (batch files already applied are skipped, never applied twice)"
)


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``paths`` and ``components`` to ``commands``; ``common`` is the parent parser of the shared options."""
    _add_paths(commands, common)
    _add_components(commands, common)


_EPILOG = (
    "Without --json: a summary, one line per update batch and a preview of the answer. With --json: "
    "JSON lines, first the initial solve ('batch': null), then one object per batch (batch, changed, "
    "seconds, ...), then {'out': PATH, 'rows': N} when --out is given."
)


class _CommandText(NamedTuple):
    """The help texts of one fixpoint command (everything else about their parsers is shared)."""

    help: str
    description: str
    updates: str
    out: str


_COMMAND_TEXTS = {
    "paths": _CommandText(
        help="reachability, shortest or widest paths from a source (a semiring fixpoint)",
        description=(
            "Single-source paths over an edge list (SNAP format: 'src dst [weight ...]' per line, '#' comments, "
            "tabs/spaces/commas, .gz ok), by semi-naive evaluation on Spark: boolean = reachable nodes, "
            "min_plus = shortest-path lengths, max_min = widest-path (bottleneck) capacities. "
            "Update batches are applied on a resident index on the driver (no Spark job per batch). "
            "Progress per iteration and per batch goes to stderr."
        ),
        updates=_UPDATES_HELP,
        out="write the answer to PATH (.csv, .csv.gz or .parquet) with the columns node, value (reachable nodes only)",
    ),
    "components": _CommandText(
        help="connected components of a graph (minimum label propagation)",
        description=(
            "Connected components of the undirected graph of an edge list (directions and weights ignored), "
            "by min-label propagation as a semiring fixpoint on Spark. The value of a node is the smallest "
            "node id of its component; a node with only a self-loop is a component of its own."
        ),
        updates=_UPDATES_HELP.replace(" [weight]", ""),
        out=(
            "write the answer to PATH (.csv, .csv.gz or .parquet) with the columns node, value (value: smallest "
            "node id of the component)"
        ),
    ),
}


def _add_fixpoint_command(
    commands: "argparse._SubParsersAction",
    common: argparse.ArgumentParser,
    name: str,
    add_own_options: Callable[[argparse.ArgumentParser], None],
) -> argparse.ArgumentParser:
    """Command ``name``: GRAPH, then its own options, then --updates, --state and --out."""
    text = _COMMAND_TEXTS[name]
    parser = commands.add_parser(
        name, parents=[common], help=text.help, description=text.description, epilog=_EPILOG
    )
    parser.add_argument("graph", metavar="GRAPH", help="edge list file (.txt, .csv, .gz, ...)")
    add_own_options(parser)
    parser.add_argument("--updates", metavar="DIR", help=text.updates)
    parser.add_argument("--state", metavar="STATE_DIR", help=_STATE_HELP)
    parser.add_argument("--out", metavar="PATH", help=text.out)
    add_restart_option(parser)
    add_follow_options(parser)  # --follow watches the --updates directory
    return parser


def _add_paths(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    paths = _add_fixpoint_command(commands, common, "paths", _add_path_options)
    paths.set_defaults(run=run_paths, check_early=check_paths)


def _add_path_options(paths: argparse.ArgumentParser) -> None:
    """The options of ``faq paths`` alone: the source, the semiring and the weight column."""
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


def _add_components(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    comps = _add_fixpoint_command(commands, common, "components", lambda parser: None)  # no options of its own
    comps.set_defaults(run=run_components, check_early=check_components)


# --- checks before Spark -------------------------------------------------------------


def check_paths(args: argparse.Namespace) -> None:
    """Checks of ``faq paths`` that need no Spark."""
    from faq.checks import node_id

    node_id(args.source, "--source")  # beyond 64 bits: a catalog error, not Spark's
    require_file(args.graph)
    if args.weight_column is not None and args.weight_column < 3:
        raise FAQValueError(error_class="WEIGHT_COLUMN", value=args.weight_column, argument="--weight-column")
    # Whether a + line must carry a weight depends on the graph file: the handler reads the batches again.
    _batches(args.updates, weighted=False)
    check_table_out(args.out)
    _check_follow(args)


def check_components(args: argparse.Namespace) -> None:
    """Checks of ``faq components`` that need no Spark."""
    require_file(args.graph)
    _batches(args.updates, weighted=False)
    check_table_out(args.out)
    _check_follow(args)


def _check_follow(args: argparse.Namespace) -> None:
    """``--follow`` watches ``--updates``: it needs one; ``--restart`` needs ``--state``."""
    check_follow_options(args)
    check_restart(args)
    if args.follow and not args.updates:
        raise FAQValueError(error_class="FOLLOW_NEEDS_UPDATES", argument="--follow", value=True)


# --- helpers -------------------------------------------------------------------------


def _batches(folder: Optional[str], *, weighted: bool) -> list["UpdateBatch"]:
    """Every batch of ``folder`` (none without one); ``weighted``: a ``+`` line must carry a weight."""
    if not folder:
        return []
    from faq.io.updates import read_updates

    return read_updates(folder, weighted=weighted)


def _first_data_fields(path: str, spark: "SparkSession") -> Optional[list[str]]:
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

    from faq.io._common import client_path

    text = spark.read.text(client_path(path))  # the client's file, not one beside a Connect server
    line = F.trim(F.col("value"))
    row = text.select(line.alias("l")).where((F.col("l") != "") & ~F.col("l").rlike("^[#%]")).first()  # one row
    return None if row is None else separator.split(row[0])


def _weight_column(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> Optional[int]:
    """The 1-based weight column to read: ``--weight-column``, else 3 when the file has one, else None (hops)."""
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


def _job(args: argparse.Namespace, problem: str, **options: Any) -> Optional[dict]:
    """The job a ``--state`` records and a resume compares (:mod:`faq.cli.resume`); None without ``--state``."""
    from faq.incremental.job import job_identity

    return job_identity(problem, {"graph": args.graph}, **options) if args.state else None


def _reopen(args: argparse.Namespace, reporter: "Reporter", problem: str, semiring: str,
            source: Optional[int], job: Optional[dict]) -> Optional["MaintainedFixpoint"]:
    """The state in ``--state`` when it holds one of ``job`` (checked against the command), else None."""
    if not resume(args, job, reporter.note):
        return None
    from faq.incremental.store import Store
    from faq.recursive.maintained import MaintainedFixpoint

    store = Store(args.state)
    reporter.note(f"reopening the state in {args.state}")
    maintained = MaintainedFixpoint.open(args.state, progress=reporter)
    held = "components" if maintained.components else \
        f"paths from {maintained.source} ({maintained.semiring.name})"
    wanted = "components" if problem == "components" else f"paths from {source} ({semiring})"
    if held != wanted:
        maintained.close()
        raise StateDirectoryError(store.path, f"it holds {held}, not {wanted}; use another --state directory")
    return maintained


def _todo(maintained: "MaintainedFixpoint", batches: Sequence["UpdateBatch"], resumed: bool,
          state: Optional[str]) -> list[tuple[int, "UpdateBatch"]]:
    """(version, batch) still to apply: all of them, or after a resume those the state has not applied."""
    if not resumed:
        return [(k, b) for k, b in enumerate(batches, start=1)]
    from faq.io.updates import pending

    by_file = {b.path: b for b in batches}
    return [(v, by_file[f]) for v, f in pending([b.path for b in batches], maintained.labels, state or "")]


def _preview(maintained: "MaintainedFixpoint") -> list[dict]:
    """The first :data:`~faq.cli.output.PREVIEW_ROWS` rows of the answer, by node."""
    return [{NODE: n, VALUE: jsonable(v)} for n, v in maintained.head(PREVIEW_ROWS)]


def _print_preview(rows: list[dict], total: int) -> None:
    """The preview table and a line with the answer's size."""
    print_table(rows, (NODE, VALUE))
    more = f", first {len(rows)} shown" if len(rows) < total else ""
    print(f"({total} rows{more})")


def _report(maintained: "MaintainedFixpoint", args: argparse.Namespace, reporter: "Reporter", *,
            todo: list[tuple[int, "UpdateBatch"]], skipped: int, resumed: bool, started: float,
            facts: dict[str, Any], summary: str, weighted: bool = False) -> None:
    """Print the first line (initial solve or reopened state), apply the batches ``todo``, write or preview.

    ``facts`` are the command's own fields of the first JSON line; ``summary`` its text (``"7 node(s) ..."``);
    ``skipped`` the batch files a reopened state had applied; ``started`` when the command began (a resumed
    run reports the seconds since then, a new one the initial solve's).
    """
    seconds = maintained.initial_seconds if not resumed else time.perf_counter() - started
    first = {"batch": None, **facts, "iterations": maintained.initial_iterations, "seconds": round(seconds, 3),
             "placement": maintained.placement, "deletions": maintained.deletions}
    if args.json and not todo and not args.out:
        first["preview"] = _preview(maintained)
    first["version"] = maintained.version
    if args.state:
        first.update(state=args.state, resumed=resumed, skipped=skipped)
    if args.json:
        print_json(first)
    elif resumed:
        print(resumed_line(args.state, maintained.version, summary, skipped, len(todo)), flush=True)
    else:
        print(f"{args.graph}: {summary}; {maintained.initial_iterations} iteration(s); "
              f"{maintained.initial_seconds:.1f} s", flush=True)
    _run_batches(maintained, todo, args, reporter)
    if args.follow:  # then the files that land in --updates, each once (faq.cli.follow)
        from faq.cli.follow import follow
        from faq.io.updates import read_batch

        follow(args.updates, lambda: maintained.labels,
               lambda version, file: _run_batches(maintained, [(version, read_batch(file, weighted=weighted))],
                                                  args, reporter),
               poll=args.poll, idle_exit=args.idle_exit, state=args.state or "the fixpoint", note=reporter.note)
    _finish(maintained, args, reporter)


def _run_batches(maintained: "MaintainedFixpoint", todo: Sequence[tuple[int, "UpdateBatch"]],
                 args: argparse.Namespace, reporter: "Reporter") -> None:
    """Apply each batch, printing one line (or JSON object) per batch as soon as it is done."""
    for k, (version, batch) in enumerate(todo, start=1):
        reporter.note(f"batch {k}/{len(todo)} {batch.name}: {len(batch.inserts)} insertion(s), "
                      f"{len(batch.deletes)} deletion(s)")
        change = maintained.apply(batch, version=version, label=batch.name)
        info = change.info
        if args.json:
            print_json({"batch": batch.name, **change.to_dict()})
        else:
            print(
                f"batch {batch.name}: {len(change)} value(s) changed in {change.seconds:.2f} s "
                f"({info['iterations']} iteration(s), {info['inserted']} effective insertion(s), "
                f"{info['deleted']} deletion(s), {info['trimmed']} node(s) trimmed"
                f"{', recomputed' if info['recomputed'] else ''}), version {change.version}",
                flush=True,
            )


def _finish(maintained: "MaintainedFixpoint", args: argparse.Namespace, reporter: "Reporter") -> None:
    """Write ``--out`` (ordered by node), or print a preview of the answer (text output only)."""
    rows = maintained.size
    if args.out:
        from faq.factor import Factor

        state = maintained.state
        write_table(Factor(df=state.df.orderBy(NODE), variables=(NODE,), semiring=state.semiring, value=VALUE,
                           name=state.name), args.out, reporter)
        if args.json:
            print_json({"out": args.out, "rows": rows})
        else:
            print(f"wrote {rows} rows to {args.out}")
    elif not args.json:
        _print_preview(_preview(maintained), rows)


# --- handlers -----------------------------------------------------------------------


def _occurs(graph: str, node: int, spark: "SparkSession") -> bool:
    """Whether ``node`` is an end of an edge of ``graph`` read without weights (the error path only)."""
    from pyspark.sql import functions as F

    from faq.io import read_edge_list

    edges = read_edge_list(graph, spark=spark, self_loops="keep", duplicates="keep")
    u, v = edges.variables
    return bool(edges.df.where((F.col(u) == node) | (F.col(v) == node)).limit(1).count())


def run_paths(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq paths``: single-source paths, then the update batches (resumed from ``--state`` if it holds one)."""
    from pyspark.sql import functions as F

    from faq.io import read_edge_list
    from faq.recursive.maintained import MaintainedFixpoint
    from faq.semirings import get_semiring

    check_paths(args)  # also when called without faq.cli.main
    semiring = get_semiring(args.semiring)
    weight_column = _weight_column(args, spark, reporter)
    batches = _batches(args.updates, weighted=weight_column is not None)
    started = time.perf_counter()
    job = _job(args, "paths", source=args.source, semiring=semiring.name, weight_column=weight_column)
    maintained = _reopen(args, reporter, "paths", semiring.name, args.source, job)
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
            if not found and weight_column is not None:  # its edges may weigh the semiring's zero (inf): no edge
                found = _occurs(args.graph, source, spark)
            if not found:
                raise FAQKeyError(error_class="UNKNOWN_NODE", node=source, graph=args.graph)
        what = {"boolean": "reachable", "min_plus": "shortest paths", "max_min": "widest paths"}[semiring.name]
        reporter.note(f"{what} from {source} ({semiring.name})")
        with recording(job):
            maintained = MaintainedFixpoint.paths(edges, source, semiring, progress=reporter, path=args.state)
    with maintained:
        todo = _todo(maintained, batches, resumed, args.state)
        rows = maintained.size
        noun = "node(s) reachable" if semiring.name == "boolean" else "node(s) reached"
        facts = {"graph": args.graph, "semiring": semiring.name, "source": source, "weight_column": weight_column,
                 "rows": rows}
        _report(maintained, args, reporter, todo=todo, skipped=len(batches) - len(todo), resumed=resumed,
                started=started, facts=facts, summary=f"{rows} {noun} from {source} ({semiring.name})",
                weighted=weight_column is not None)


def run_components(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq components``: connected components, then the update batches (resumed from ``--state``)."""
    from faq.io import read_edge_list
    from faq.recursive.maintained import MaintainedFixpoint

    check_components(args)  # also when called without faq.cli.main
    batches = _batches(args.updates, weighted=False)
    started = time.perf_counter()
    job = _job(args, "components")
    maintained = _reopen(args, reporter, "components", "min_label", None, job)
    resumed = maintained is not None
    if not resumed:
        reporter.note(f"reading {args.graph}")
        edges = read_edge_list(args.graph, spark=spark, self_loops="keep")  # a loop-only node is a component
        reporter.note("connected components (min label propagation)")
        with recording(job):
            maintained = MaintainedFixpoint.components(edges, progress=reporter, path=args.state)
    with maintained:
        todo = _todo(maintained, batches, resumed, args.state)
        rows, components = maintained.size, _component_count(maintained)
        facts = {"graph": args.graph, "nodes": rows, "components": components}
        _report(maintained, args, reporter, todo=todo, skipped=len(batches) - len(todo), resumed=resumed,
                started=started, facts=facts, summary=f"{rows} node(s) in {components} connected component(s)")


def _component_count(maintained: "MaintainedFixpoint") -> int:
    """Distinct labels: on the driver, or one aggregate when the answer lives on Spark."""
    if maintained.placement == "driver":
        import numpy as np

        return int(len(np.unique(maintained.table().column(VALUE).to_numpy())))
    from pyspark.sql import functions as F

    return int(maintained.state.df.agg(F.count_distinct(F.col(VALUE))).first()[0])
