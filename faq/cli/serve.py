"""The ``faq serve`` command: start, stop or report the background Spark Connect server.

::

    faq serve [--port 15002] [--master URL] [--host 127.0.0.1] [--stop | --status] [--json]

It runs no Spark in this process (it sets ``local``, not ``run``: see
:mod:`faq.cli.entry`); the server itself is :mod:`faq.cli.server`.  Nothing
it prints holds the server's token; ``--json`` names the file that does
(``token_file``).

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["serve", "--status"])
>>> args.port, args.host, args.status, args.local is run_serve
(15002, '127.0.0.1', True, True)
"""

from __future__ import annotations

import argparse
import sys

from faq.cli.inputs import DEFAULT_HOST, DEFAULT_MASTER, DEFAULT_PORT
from faq.cli.output import print_json
from faq.served import LOCAL_HOSTS
from faq.spark import REMOTE_ENV

__all__ = ["add_commands", "run_serve"]


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``serve`` to ``commands``.

    ``common`` is not its parent: ``serve`` has no ``--remote`` or ``--quiet``,
    and its ``--master`` is the server's.
    """
    serve = commands.add_parser(
        "serve",
        help="start (or stop) a local Spark Connect server that later commands use with --remote",
        description=("Start Spark once, in the background, as a Spark Connect server on 127.0.0.1:PORT; "
                     "commands given --remote sc://127.0.0.1:PORT (or sc://localhost:PORT, or $FAQ_REMOTE) then "
                     "skip Spark's start. The server is yours alone: it demands a random token, kept in a file "
                     "only you can read (in $XDG_RUNTIME_DIR/faq, else ~/.cache/faq/serve), where faq's commands "
                     "and faq.spark.get_session find it for a URL of this machine, and send it only after "
                     "checking that the socket listening on the server's address is the server's. It refuses to "
                     "start while the port is taken on 127.0.0.1, ::1 or a wildcard address. "
                     "Prints the URL (never the token); --stop stops it, --status tells whether it runs."),
    )
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on (default: %(default)s)")
    serve.add_argument("--master", default=DEFAULT_MASTER, metavar="URL", help="the server's Spark master")
    serve.add_argument(
        "--host", default=DEFAULT_HOST, metavar="HOST",
        help="IP address to listen on (default: %(default)s, this machine only); another one (e.g. 0.0.0.0) lets "
             "other machines reach the server, which still demands its token: copy the token file "
             "(--status --json names it) into the client's faq serve directory and connect through an SSH "
             "tunnel to sc://127.0.0.1:PORT, or give the token (the file's \"token\") yourself as sc://HOST:PORT/;token=TOKEN "
             "(PySpark then sends it only over TLS, which needs a TLS proxy in front of the server)",
    )
    action = serve.add_mutually_exclusive_group()
    action.add_argument("--stop", action="store_true", help="stop the server on --port")
    action.add_argument("--status", action="store_true", help="say whether a server runs on --port")
    serve.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    serve.set_defaults(local=run_serve, quiet=True)


def run_serve(args: argparse.Namespace) -> None:
    """``faq serve``: start (or find), stop, or report the server on ``--port``."""
    # Imported here, not at the top: the server process runs `python -m faq.cli.server`, and runpy warns
    # when the package's own imports (faq.cli -> entry -> this module) have already loaded that module.
    from faq.cli import server

    if args.stop:
        stopped = server.stop(args.port)
        result = {"stopped": stopped is not None, "port": args.port, **(stopped or {})}
        text = f"stopped the server at {stopped['url']}" if stopped else f"no faq server on port {args.port}"
    elif args.status:
        running = server.status(args.port)
        result = {"running": running is not None, "port": args.port, **(running or {})}
        text = f"running at {running['url']} (pid {running['pid']}; token in {running['token_file']})" if running \
            else f"no faq server on port {args.port}"
    else:
        if not args.json:
            print(f"[faq] starting a Spark Connect server on port {args.port} ...", file=sys.stderr)
        result = server.start(args.port, args.master, host=args.host)
        state = "started" if result["started"] else "already running"
        text = f"{state} at {result['url']}; use it with: export {REMOTE_ENV}={result['url']}"
        if result["host"] not in LOCAL_HOSTS:
            text += f"\nclients need the token in {result['token_file']} (see faq serve --help, --host)"
    if args.json:
        print_json(result)
    else:
        print(text)
