"""The ``faq`` command's entry: the parser, :func:`main`, exit codes, and Spark's start and stop.

``faq COMMAND ...`` parses its arguments (:func:`build_parser`, assembled
from the command modules), runs the command's checks that need no Spark,
starts Spark (or connects to ``--remote``, or finds the active session),
runs the command, and stops Spark if it started it.  Results go to stdout;
progress (``[faq] ...`` lines) to stderr.

Errors print one line, ``faq: error: ...``, and set the exit code:

* :data:`EXIT_USAGE` (2) -- bad input or usage: argparse's usage errors and
  every :class:`~faq.errors.FAQError`, raised before anything is written; and
  a write the system refuses (disk full, read-only filesystem, permission
  denied), as ``WRITE_FAILED`` naming the path;
* :data:`EXIT_FAILURE` (1) -- Spark, Java or the operating system failed;
* :data:`EXIT_INTERRUPTED` (130) -- Ctrl-C.

``FAQ_DEBUG=1`` lets the Python traceback through instead;
``FAQ_SPARK_VERBOSE=1`` keeps PySpark's own error logs.

A command module has ``add_commands(commands, common)``, which adds its
subparsers to ``commands`` (``common`` is the parent parser of ``--master``,
``--remote``, ``--quiet`` and ``--json``: :func:`faq.cli.inputs.common_options`)
and sets on each:

* ``run(args, spark, reporter) -> None`` -- the handler: prints the result,
  raises on failure (:func:`main` maps exceptions to exit codes);
* ``check_early(args) -> None`` (optional) -- the checks that need no Spark;
* or ``local(args) -> None`` instead of ``run`` -- a command that starts no
  Spark in this process (``faq serve``).

Examples
--------
>>> command_names(build_parser())
['triangles', 'matrix-chain', 'query', 'explain', 'serve', 'motif', 'paths', 'components', 'track', 'asof', 'truss']
>>> main(["query", "count() := edge(a,b)", "--factor", "edge"])  # usage error: not NAME=PATH
2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import faq
from faq.cli import asof, fixpoints, motifs, queries, serve, tracking, truss
from faq.cli.inputs import common_options
from faq.errors import FAQError
from faq.progress import Reporter
from faq.spark import DeferredSession

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PROG", "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_INTERRUPTED", "build_parser", "command_names",
           "main"]

PROG = "faq"

EXIT_OK = 0
EXIT_FAILURE = 1  # Spark, Java or the operating system failed
EXIT_USAGE = 2  # bad input: argparse usage errors and every FAQError
EXIT_INTERRUPTED = 130

# In the order `faq --help` lists the commands.
COMMAND_MODULES = (queries, serve, motifs, fixpoints, tracking, asof, truss)


# --- the parser -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``faq`` command: every command module's subcommands."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Functional Aggregate Queries (semiring aggregates over joins) on Apache Spark.",
        epilog="Results go to stdout, progress to stderr. Run 'faq COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {faq.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_options()
    for module in COMMAND_MODULES:
        module.add_commands(commands, common)
    return parser


def command_names(parser: argparse.ArgumentParser) -> list[str]:
    """The subcommands of ``parser``, in order."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(subparsers.choices)


# --- the entry point ----------------------------------------------------------------------------


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
        print(f"{PROG}: error: a command is required ({', '.join(command_names(parser))})", file=sys.stderr)
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
    except OSError as exc:  # a full disk, a read-only filesystem, a denied write: the catalog's WRITE_FAILED
        from faq.io._common import write_error

        mapped = write_error(exc)
        _error(str(mapped) if mapped is not None else _describe(exc))
        return EXIT_USAGE if mapped is not None else EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 - the one place that turns failures into one line
        _error(_describe(exc))
        return EXIT_FAILURE


def _run(args: argparse.Namespace) -> int:
    """Check the input, start (or find) Spark, run the command, stop Spark if this call started it."""
    if getattr(args, "local", None) is not None:  # a command that needs no Spark here (faq serve, faq asof, faq truss)
        args.local(args)
        return EXIT_OK
    reporter = Reporter(enabled=not args.quiet)
    with ExitStack() as stack:
        stack.enter_context(reporter)
        check = getattr(args, "check_early", None)
        if check is not None:
            check(args)  # fail on bad input before the (slow) start of Spark
        spark = _session(args.master, args.remote, reporter)
        if not os.environ.get("FAQ_SPARK_VERBOSE"):  # PySpark's loggers are muted once it is used
            if isinstance(spark, DeferredSession):
                spark.when_started(lambda _: stack.callback(_quiet_pyspark_loggers()))
            else:
                stack.callback(_quiet_pyspark_loggers())
        if isinstance(spark, DeferredSession) and not getattr(args, "in_process", False):
            spark.session()  # a command whose steps always use Spark (fixpoints, tracking, motifs) starts it now
        if isinstance(spark, DeferredSession):
            from faq.spark import use_session

            # Every get_session() of this command answers this session; it starts (or connects) only
            # when a step needs Spark, so a command whose steps all run in-process starts nothing.
            stack.callback(use_session, use_session(spark))
            stack.callback(_stop, spark)  # a Connect client releases its server-side session there
            spark.when_started(reporter.watch)
        else:
            reporter.watch(spark)
        stack.callback(reporter.close)  # stop the monitor before Spark stops
        if getattr(args, "placement", None):
            from faq.settings import requested

            # --placement is the command's placement= argument: it wins over spark.faq.placement
            # wherever faq.settings reads it, for this command only; the session is left as it was.
            stack.enter_context(requested(args.placement))
        args.run(args, spark, reporter)
    return EXIT_OK


def _session(master: str, remote: Optional[str], reporter: Reporter) -> "SparkSession | DeferredSession":
    """The session to run on: the active one if any, else a :class:`~faq.spark.DeferredSession`.

    The deferred session starts Spark on ``master`` -- or connects to
    ``remote`` (a Spark Connect URL, which wins) -- on its first real use, and
    the command stops it (a Connect client releases its session on the
    server: the files and cached data of the command).  A remote server whose
    master is not known here (not a ``faq serve`` on this machine) is
    connected to at once: the plan needs its cores.
    """
    from faq.spark import DEFAULT_CONFIG, connect_session, get_session, master_cores

    if remote:
        def connect() -> "SparkSession":
            t0 = time.perf_counter()
            session = connect_session(remote, None)
            reporter.note(f"connected to Spark {session.version} at {remote} in {time.perf_counter() - t0:.1f} s")
            return session

        served = _served_master(remote)
        if served is None or master_cores(served) is None:
            connected = DeferredSession(connect, master=served or "", remote=remote, settings=DEFAULT_CONFIG)
            connected.session()
            return connected
        return DeferredSession(connect, master=served, remote=remote, settings=DEFAULT_CONFIG)
    if "pyspark" in sys.modules:  # a session can exist only if pyspark is loaded (main() called from Python)
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        if SparkContext._active_spark_context is not None:  # a context without an active session
            return get_session(master=master)

    def start() -> "SparkSession":
        reporter.note(f"starting Spark ({master}) ...")
        t0 = time.perf_counter()
        session = get_session(master=master)
        reporter.note(f"Spark {session.version} ready in {time.perf_counter() - t0:.1f} s")
        return session

    return DeferredSession(start, master=master, settings=DEFAULT_CONFIG)


def _served_master(remote: str) -> Optional[str]:
    """The master of the ``faq serve`` server behind ``remote`` when it runs on this machine, else None."""
    from urllib.parse import urlparse

    from faq.cli.server import status

    try:
        url = urlparse(remote.replace("sc://", "http://", 1))
        port = url.port
    except ValueError:
        return None
    if url.hostname not in ("localhost", "127.0.0.1") or port is None:
        return None
    state = status(port)
    return None if state is None else state.get("master")


def _quiet_pyspark_loggers() -> Callable[[], None]:
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


def _stop(spark: "SparkSession | DeferredSession") -> None:
    if isinstance(spark, DeferredSession) and not spark.started:
        return
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - shutting down; nothing useful to report
        pass


# --- one-line errors ----------------------------------------------------------------------------


def _error(message: str) -> None:
    sys.stdout.flush()  # what the command printed before the error comes first
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
