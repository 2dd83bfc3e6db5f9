"""The ``faq`` command: triangle counts, matrix chains and general queries on Spark.

::

    faq triangles PATH [--directed | --undirected] [--json]
    faq matrix-chain A.mtx B.mtx [C.mtx ...] --out OUT.mtx [--semiring real|boolean|min_plus ...]
    faq query 'TEXT' --factor NAME=PATH ... [--semiring NAME] [--out PATH.csv|.parquet] [--json]
    faq explain 'TEXT' --factor NAME=PATH ... [--maintained [--budget SIZE]] [--json]

More subcommands come from the modules in :data:`PLUGIN_COMMANDS` (``motif``,
``paths``, ``components``, ``track``).  Every command takes ``--master URL`` (default ``local[*]``) and ``--quiet``.
Results go to stdout; progress (``[faq] ...`` lines) to stderr.  Errors print
one line, ``faq: error: ...``, and exit non-zero: 2 for bad input or usage
(an :class:`~faq.errors.FAQError`), 1 when Spark or the system fails, 130 on
Ctrl-C.  Set ``FAQ_DEBUG=1`` to get the Python traceback instead.

Examples
--------
>>> build_parser().parse_args(["triangles", "g.txt"]).directed
False
>>> main(["query", "count() := edge(a,b)", "--factor", "edge"])  # usage error: exit code 2
2
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from contextlib import ExitStack
from typing import Any, Optional, Sequence

import faq
from faq.errors import FAQError, FAQValueError
from faq.progress import Reporter
from faq.spark import REMOTE_ENV

PROG = "faq"
DEFAULT_MASTER = "local[*]"
PREVIEW_ROWS = 20
METHODS = ("auto", "exact", "min_fill", "min_degree")
TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")

# Modules adding more subcommands: each has add_commands(subparsers, common_parent_parser);
# a subcommand sets ``run`` (args, spark, reporter) -> exit code, and may set ``check_early``
# (or ``check``): (args) -> None, the checks that need no Spark.
PLUGIN_COMMANDS = ("faq.graphs.motif_commands", "faq.recursive.commands", "faq.incremental.commands")

# Exit codes.
EXIT_OK = 0
EXIT_FAILURE = 1  # Spark, Java or the operating system failed
EXIT_USAGE = 2  # bad input: argparse usage errors and every FAQError
EXIT_INTERRUPTED = 130


# --- argument parsing -----------------------------------------------------------


def _factor_spec(text: str) -> tuple[str, str]:
    """``NAME=PATH`` -> (name, path)."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {text!r}")
    return name.strip(), path.strip()


def _semiring_choices() -> str:
    from faq.semirings import semiring_names

    return ", ".join(semiring_names())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``faq`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--master",
        default=DEFAULT_MASTER,
        metavar="URL",
        help="Spark master URL (default: %(default)s; e.g. local[4], local-cluster[2,1,1024], spark://host:7077)",
    )
    common.add_argument(
        "--remote",
        default=os.environ.get(REMOTE_ENV) or None,
        metavar="URL",
        help="a Spark Connect server to run on instead of starting Spark, e.g. sc://localhost:15002 "
             f"(started by 'faq serve'; default ${REMOTE_ENV})",
    )
    common.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    common.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Functional Aggregate Queries (semiring aggregates over joins) on Apache Spark.",
        epilog="Results go to stdout, progress to stderr. Run 'faq COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {faq.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    tri = commands.add_parser(
        "triangles",
        parents=[common],
        help="count the triangles of a graph (SNAP edge list)",
        description=(
            "Count triangles of a graph given as an edge list (SNAP format: one 'src dst' pair per line, "
            "'#' comments, tabs/spaces/commas, .gz ok). Self-loops and repeated edges are ignored."
        ),
    )
    tri.add_argument("path", metavar="PATH", help="edge list file (.txt, .tsv, .gz, ...)")
    mode = tri.add_mutually_exclusive_group()
    mode.add_argument(
        "--undirected",
        dest="directed",
        action="store_false",
        help="count each triangle of the simple undirected graph once (the default)",
    )
    mode.add_argument(
        "--directed",
        dest="directed",
        action="store_true",
        help="count feed-forward triangles: ordered triples a, b, c with edges a->b, a->c, b->c",
    )
    tri.set_defaults(directed=False, run=_cmd_triangles, check_early=_check_triangles)

    chain = commands.add_parser(
        "matrix-chain",
        parents=[common],
        help="multiply a chain of Matrix Market matrices",
        description=(
            "Multiply matrices A·B·C·... read from Matrix Market files, in a semiring; the planner "
            "chooses the order of the products. The product is written as Matrix Market."
        ),
    )
    chain.add_argument("matrices", nargs="+", metavar="MATRIX.mtx", help="the matrices, in product order")
    chain.add_argument("--out", required=True, metavar="OUT.mtx", help="where to write the product")
    chain.add_argument(
        "--semiring", default="real", metavar="NAME", help="semiring of the product (default: %(default)s)"
    )
    chain.add_argument("--method", choices=METHODS, default="auto", help="order search (default: %(default)s)")
    chain.set_defaults(run=_cmd_matrix_chain, check_early=_check_matrix_chain)

    for name, run, what, description in (
        ("query", _cmd_query, "answer a query over factors read from files", "Answer a query"),
        (
            "explain",
            _cmd_explain,
            "show a query's plan (order, bags, widths) without running it",
            "Show the InsideOut plan of a query (elimination order, bags, ρ* per bag, faqw, AGM bound, "
            "join method per bag and, for bags joined by the generic join, the attribute order and the "
            "estimated work: Σ of smallest proposals per attribute, with an upper bound) without running it; "
            "the factors are read only to gather statistics (rows, and per key column distinct values and "
            "largest degree: one Spark job per factor)",
        ),
    ):
        sub = commands.add_parser(
            name,
            parents=[common],
            help=what,
            description=(
                f"{description}. The query is written as 'head(free vars) := factor(vars), ...', e.g. "
                "\"count() := edge(a,b), edge(a,c), edge(b,c)\". Variables not in the head are aggregated "
                "with the semiring's ⊕. Factors are read by file extension: .csv (header row; the column "
                "'value' holds values, if present), .parquet, .mtx, anything else as an edge list."
            ),
        )
        sub.add_argument("text", metavar="TEXT", help="the query")
        sub.add_argument(
            "--factor",
            "-f",
            dest="factors",
            action="append",
            type=_factor_spec,
            default=[],
            metavar="NAME=PATH",
            help="a factor the query names, and its file (repeat for each factor)",
        )
        sub.add_argument(
            "--semiring",
            metavar="NAME",
            help="semiring of the factors and the query (default: each file loader's own: "
            "counting for edge lists and tables, real for .mtx)",
        )
        sub.add_argument("--method", choices=METHODS, default="auto", help="order search (default: %(default)s)")
        if name == "query":
            sub.add_argument(
                "--out", metavar="PATH", help="write the result to PATH (.csv or .parquet) instead of printing it"
            )
        else:
            sub.add_argument(
                "--maintained", action="store_true",
                help="show how a maintained query would keep the answer current: where its indexes live "
                "(driver or executors, against the budget), their views and estimated sizes, and the "
                "attribute order of every delta rule",
            )
            sub.add_argument("--budget", metavar="SIZE",
                             help="the driver's index budget for --maintained (e.g. 512m, 4g; default "
                                  "$FAQ_INDEX_BUDGET or 2g)")
        sub.set_defaults(run=run, check_early=_check_query)
    serve = commands.add_parser(
        "serve",
        help="start (or stop) a local Spark Connect server that later commands use with --remote",
        description=("Start Spark once, in the background, as a Spark Connect server on localhost:PORT; "
                     "commands given --remote sc://localhost:PORT (or $FAQ_REMOTE) then skip Spark's start. "
                     "Prints the URL; --stop stops it, --status tells whether it runs."),
    )
    serve.add_argument("--port", type=int, default=15002, help="port to listen on (default: %(default)s)")
    serve.add_argument("--master", default=DEFAULT_MASTER, metavar="URL", help="the server's Spark master")
    action = serve.add_mutually_exclusive_group()
    action.add_argument("--stop", action="store_true", help="stop the server on --port")
    action.add_argument("--status", action="store_true", help="say whether a server runs on --port")
    serve.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    serve.set_defaults(local=_cmd_serve, quiet=True)
    for module_name in PLUGIN_COMMANDS:
        _add_plugin_commands(module_name, commands, common)
    return parser


def _cmd_serve(args: argparse.Namespace) -> int:
    """faq serve: start, stop or report the background Spark Connect server (no Spark in this process)."""
    from faq import serve

    if args.stop:
        stopped = serve.stop(args.port)
        result = {"stopped": stopped is not None, "port": args.port, **(stopped or {})}
        text = f"stopped the server at {stopped['url']}" if stopped else f"no faq server on port {args.port}"
    elif args.status:
        running = serve.status(args.port)
        result = {"running": running is not None, "port": args.port, **(running or {})}
        text = f"running at {running['url']} (pid {running['pid']})" if running else \
            f"no faq server on port {args.port}"
    else:
        if not args.json:
            print(f"[faq] starting a Spark Connect server on port {args.port} ...", file=sys.stderr)
        result = serve.start(args.port, args.master)
        state = "started" if result["started"] else "already running"
        text = f"{state} at {result['url']}; use it with: export {REMOTE_ENV}={result['url']}"
    print(json.dumps(result) if args.json else text)
    return 0


def _add_plugin_commands(module_name: str, commands, common: argparse.ArgumentParser) -> None:
    """Add the subcommands of ``module_name`` (its ``add_commands(commands, common)``), if it exists."""
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # not part of this installation
            return
        raise
    module.add_commands(commands, common)


# --- entry point ------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``faq`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (argparse printed the message)
        if argv is None:
            raise
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    if args.command is None:
        parser.print_usage(sys.stderr)
        names = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        print(f"{PROG}: error: a command is required ({', '.join(names)})", file=sys.stderr)
        return EXIT_USAGE
    if os.environ.get("FAQ_DEBUG"):
        return _run(args)
    try:
        return _run(args)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except FAQError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the one place that turns failures into one line
        _error(_describe(exc))
        return EXIT_FAILURE


def _run(args: argparse.Namespace) -> int:
    """Start (or find) Spark, run the command, stop Spark if this call started it."""
    if getattr(args, "local", None) is not None:  # a command that needs no Spark here (faq serve)
        return args.local(args)
    reporter = Reporter(enabled=not args.quiet)
    with ExitStack() as stack:
        stack.enter_context(reporter)
        if not os.environ.get("FAQ_SPARK_VERBOSE"):
            stack.callback(_quiet_pyspark_loggers())
        check = getattr(args, "check_early", None) or getattr(args, "check", None)
        if check is not None:
            check(args)  # fail on bad input before the (slow) start of Spark
        spark, started = _session(args.master, getattr(args, "remote", None), reporter)
        if getattr(args, "remote", None):  # every get_session() of this command answers the remote session
            from faq.spark import use_session

            stack.callback(use_session, use_session(spark))
        if started:
            stack.callback(_stop, spark)
        reporter.watch(spark)
        stack.callback(reporter.close)  # stop the monitor before Spark stops
        return args.run(args, spark, reporter)


def _session(master: str, remote: Optional[str], reporter: Reporter):
    """The session to run on, and whether this call started it (and must stop it).

    ``remote`` (a Spark Connect URL) wins; else the active session; else a new one on ``master``.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from faq.spark import get_session

    if remote:
        from faq.spark import _connect

        t0 = time.perf_counter()
        spark = _connect(remote, None)
        reporter.note(f"connected to Spark {spark.version} at {remote} in {time.perf_counter() - t0:.1f} s")
        return spark, False  # the server stays up for the next command
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    if SparkContext._active_spark_context is not None:  # a context without an active session
        return get_session(master=master), False
    reporter.note(f"starting Spark ({master}) ...")
    t0 = time.perf_counter()
    spark = get_session(master=master)
    reporter.note(f"Spark {spark.version} ready in {time.perf_counter() - t0:.1f} s")
    return spark, True



def _quiet_pyspark_loggers():
    """Mute PySpark's own error loggers, which print a failed query's JVM stack trace as JSON.

    The error still reaches :func:`main` as an exception and is printed as one line.
    Returns a function restoring the previous levels.
    """
    import logging

    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # an older PySpark without structured loggers
        return lambda: None
    loggers = [PySparkLogger.getLogger(n) for n in ("DataFrameQueryContextLogger", "SQLQueryContextLogger")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)

    def restore() -> None:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)

    return restore


def _stop(spark) -> None:
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - shutting down; nothing useful to report
        pass


def _check_semiring(args: argparse.Namespace) -> None:
    from faq.semirings import get_semiring

    if getattr(args, "semiring", None):
        get_semiring(args.semiring)


def _check_triangles(args: argparse.Namespace) -> None:
    _require_file(args.path)


def _check_matrix_chain(args: argparse.Namespace) -> None:
    _check_semiring(args)
    if not args.out.lower().endswith((".mtx", ".mtx.gz")):
        raise FAQValueError(
            f"--out {args.out!r}: the product is written as Matrix Market; use a .mtx name", path=args.out
        )
    for path in args.matrices:
        _require_file(path)
    _require_folder(args.out)


def _check_query(args: argparse.Namespace) -> None:
    """query and explain: the text parses, every factor is given and exists, --out is writable."""
    from faq.query import parse_query

    _check_semiring(args)
    query = parse_query(args.text)
    given: dict[str, str] = {}
    for name, path in args.factors:
        if name in given:
            raise FAQValueError(f"--factor {name} is given twice ({given[name]!r} and {path!r})", name=name)
        given[name] = path
        _require_file(path)
    missing = [n for n in query.factor_names if n not in given]
    if missing:
        raise FAQValueError(
            f"the query uses factor(s) {', '.join(missing)} but no --factor NAME=PATH gives them",
            missing=missing,
        )
    out = getattr(args, "out", None)
    if out:
        if not out.lower().rstrip("/").endswith(TABLE_SUFFIXES):
            raise FAQValueError(f"--out {out!r}: write a .csv, .csv.gz or .parquet file", path=out)
        _require_folder(out)


def _require_file(path: str) -> None:
    from faq.errors import InputNotFoundError

    if "://" not in path and not any(c in path for c in "*?[") and not os.path.exists(path):
        raise InputNotFoundError(path=path)


def _require_folder(out: str) -> None:
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise FAQValueError(f"--out {out!r}: the folder {folder!r} does not exist; create it first", path=out)


def _error(message: str) -> None:
    sys.stdout.flush()
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.stderr.flush()


def _describe(exc: BaseException) -> str:
    """One line for an exception from Spark, Java or the system."""
    java = getattr(exc, "java_exception", None)
    if java is not None:  # py4j.protocol.Py4JJavaError: the Java exception's own message
        try:
            text = str(java.toString())
        except Exception:  # noqa: BLE001 - the JVM may be gone
            text = str(exc)
    elif isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(":")]
    first = lines[0] if lines else type(exc).__name__
    if len(first) > 300:
        first = first[:297] + "..."
    kind = type(exc).__name__
    return first if first.startswith(kind) or first.startswith("[") else f"{kind}: {first}"


# --- commands -------------------------------------------------------------------


def _cmd_triangles(args: argparse.Namespace, spark, reporter: Reporter) -> int:
    from faq.graphs import count_triangles
    from faq.io import read_edge_list

    kind = "feed-forward (directed)" if args.directed else "undirected"
    reporter.note(f"reading {args.path}")
    edges = read_edge_list(args.path, spark=spark)
    reporter.note(f"counting {kind} triangles")
    result = count_triangles(edges, directed=args.directed, progress=reporter)
    if args.json:
        _print_json({"path": args.path, **result.to_dict()})
    else:
        print(f"{args.path}: {result.count} {kind} triangles")
        print(
            f"  {result.edges} edges after cleaning; order {', '.join(result.plan.order)}; "
            f"faqw {result.plan.faqw}; {result.seconds:.1f} s"
        )
    return EXIT_OK


def _cmd_matrix_chain(args: argparse.Namespace, spark, reporter: Reporter) -> int:
    from faq.graphs import matrix_chain
    from faq.io import matrix_shape, read_matrix_market, write_matrix_market
    from faq.semirings import get_semiring

    semiring = get_semiring(args.semiring)
    shapes = [matrix_shape(p) for p in args.matrices]
    for k in range(1, len(shapes)):
        if shapes[k - 1][1] != shapes[k][0]:
            raise FAQValueError(
                f"matrix {k} ({args.matrices[k - 1]}) is {shapes[k - 1][0]}×{shapes[k - 1][1]} but matrix "
                f"{k + 1} ({args.matrices[k]}) is {shapes[k][0]}×{shapes[k][1]}; inner dimensions must agree",
                index=k,
                shapes=shapes,
            )
    shape = (shapes[0][0], shapes[-1][1])
    started = time.perf_counter()
    matrices = []
    for path in args.matrices:
        reporter.note(f"reading {path}")
        matrices.append(read_matrix_market(path, spark=spark, semiring=semiring))
    with matrix_chain(matrices, semiring, method=args.method, progress=reporter) as result:
        nnz = result.factor.count()
        reporter.note(f"writing {args.out}")
        write_matrix_market(result.factor, args.out, shape=shape)
        the_plan = result.plan
    seconds = time.perf_counter() - started
    estimates = [s.estimated_rows for s in the_plan.steps]
    estimated = None if any(e is None for e in estimates) else float(sum(estimates))
    summary = {
        "matrices": list(args.matrices),
        "semiring": semiring.name,
        "shape": list(shape),
        "order": list(the_plan.order),
        "parenthesization": _parenthesization(the_plan),
        "estimated_rows": estimated,
        "faqw": str(the_plan.faqw),
        "nnz": nnz,
        "out": args.out,
        "seconds": round(seconds, 3),
    }
    if args.json:
        _print_json(summary)
    else:
        print(f"product {summary['parenthesization']} ({semiring.name}), {shape[0]}×{shape[1]}: nnz {nnz}")
        est = "unknown" if estimated is None else f"{estimated:.3g}"
        print(
            f"  order {', '.join(the_plan.order) or '(none)'}; estimated intermediate rows {est}; "
            f"faqw {the_plan.faqw}; written to {args.out}; {seconds:.1f} s"
        )
    return EXIT_OK


def _parenthesization(the_plan) -> str:
    """``(M1·M2)·M3`` from a chain plan's steps (``Mk`` is the k-th matrix).

    Each step multiplies its inputs; they are shown in chain order (by the
    first matrix each covers), not in the step's join order.
    """
    expr = {rel.id: (k, factor) for k, (rel, factor) in enumerate(the_plan.inputs)}
    for step in the_plan.steps:
        parts = sorted(expr.get(r, (len(expr), r)) for r in step.inputs)
        text = "·".join(t for _, t in parts)
        expr[step.output.id] = (parts[0][0], f"({text})" if len(parts) > 1 else text)
    text = expr.get(the_plan.result.id, (0, ""))[1]
    return text[1:-1] if text.startswith("(") and _balanced(text[1:-1]) else text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _read_factors(args: argparse.Namespace, spark, reporter: Reporter) -> dict:
    from faq.io import read_factor

    factors = {}
    for name, path in args.factors:
        reporter.note(f"reading {name} from {path}")
        kw: dict[str, Any] = {"spark": spark, "name": name}
        if args.semiring:
            kw["semiring"] = args.semiring
        factors[name] = read_factor(path, **kw)
    return factors


def _cmd_query(args: argparse.Namespace, spark, reporter: Reporter) -> int:
    from faq.insideout import evaluate
    from faq.query import parse_query

    query = parse_query(args.text)
    factors = _read_factors(args, spark, reporter)
    with evaluate(query, factors, semiring=args.semiring, method=args.method, progress=reporter) as result:
        factor = result.factor
        out: dict[str, Any] = {}
        if args.out:
            rows = factor.count()
            reporter.note(f"writing {args.out}")
            from faq.io import write_table

            write_table(factor, args.out)
            out = {"rows": rows, "out": args.out}
        elif not factor.variables:
            out = {"rows": 1, "value": _jsonable(result.scalar())}
        else:
            rows = factor.count()
            order = list(factor.variables)
            preview = factor.df.select(*factor.columns()).orderBy(*order).limit(PREVIEW_ROWS).collect()
            out = {"rows": rows, "preview": [{k: _jsonable(v) for k, v in r.asDict().items()} for r in preview]}
        seconds = result.seconds
        the_plan = result.plan
    if args.json:
        _print_json({**out, "seconds": round(seconds, 3), "plan": the_plan.to_dict()})
        return EXIT_OK
    if args.out:
        print(f"wrote {out['rows']} rows to {args.out}")
    elif "value" in out:
        print(out["value"])
    else:
        _print_table(out["preview"], factor.columns())
        shown = len(out["preview"])
        more = f" (first {shown} shown)" if shown < out["rows"] else ""
        print(f"({out['rows']} rows{more})")
    if not args.quiet:
        reporter.note(f"order {', '.join(the_plan.order) or '(none)'}; faqw {the_plan.faqw}; {seconds:.1f} s")
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace, spark, reporter: Reporter) -> int:
    from faq.insideout import plan
    from faq.insideout.executor import bind, factor_statistics, query_semiring
    from faq.query import parse_query

    query = parse_query(args.text)
    factors = _read_factors(args, spark, reporter)
    if args.maintained:  # how `maintain` would keep the answer: placement, index views and sizes, delta rules
        from faq.incremental.maintained import MaintainedQuery

        reporter.note("counting the factors' rows (index sizes are estimated from them)")
        maintenance = MaintainedQuery.plan_for(query, factors, semiring=args.semiring, budget=args.budget)
        if args.json:
            _print_json(maintenance.to_dict())
        else:
            print(maintenance)
        return EXIT_OK
    semiring = query_semiring(query, factors, args.semiring)
    bind(query, factors, semiring)  # the same checks a run would make (no Spark job)
    reporter.note("gathering factor statistics (rows, distinct values and largest degree per column)")
    stats = factor_statistics(query, factors)
    # The plan shows, per bag joined by the generic join, its estimated work from these statistics.
    the_plan = plan(query, semiring=semiring.name, statistics=stats, method=args.method)
    if args.json:
        _print_json(the_plan.to_dict())
    else:
        print(the_plan)
    return EXIT_OK


# --- output helpers ---------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """Plain JSON values: non-finite floats become strings ("inf", "-inf", "nan")."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _print_json(obj: dict) -> None:
    print(json.dumps(obj, default=_jsonable, ensure_ascii=False))


def _print_table(rows: list[dict], columns: Sequence[str]) -> None:
    cells = [[str(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


if __name__ == "__main__":  # pragma: no cover - `python -m faq.cli`
    sys.exit(main())
