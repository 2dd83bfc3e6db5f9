"""The local Spark Connect server behind ``faq serve``: start, stop, status, and the server process.

Every ``faq`` command that starts its own Spark spends about 15 s before any
work.  :func:`start` runs Spark once, in a background process, with the
Spark Connect plugin listening on ``sc://localhost:PORT``; commands given
``--remote sc://localhost:PORT`` (or ``$FAQ_REMOTE``) then connect to it in
about a second.  The server is a classic session started by
:func:`faq.spark.get_session` (faq's settings, quiet logs, this interpreter
for the Python workers) with ``spark.plugins`` set to Spark's
``SparkConnectPlugin``.

What runs where is written to a small JSON file per port
(:func:`state_path`): the server's process id, its URL and its log file, so
:func:`stop` and :func:`status` find it from any shell.

Only the CLI (:mod:`faq.cli.serve`) and the tests use this module; the
library connects to a server through :func:`faq.spark.get_session` (``remote=``).
The server process runs ``python -m faq.cli.server PORT MASTER``.

Examples
--------
>>> from faq.cli.server import url_of, state_path
>>> url_of(15002)
'sc://localhost:15002'
>>> state_path(15002).endswith("faq-serve-15002.json")
True
>>> status(1) is None          # nothing serves on port 1
True
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Optional

from faq.cli.inputs import DEFAULT_MASTER, DEFAULT_PORT

__all__ = ["DEFAULT_PORT", "url_of", "state_path", "status", "start", "stop", "serve_forever"]

# Seconds to wait for a new server to accept connections (a cold JVM on a small machine takes ~20 s).
START_TIMEOUT = 180.0
# Connect messages carry plans and local data (createDataFrame of a driver-side load); generous limit, 1 GiB.
MAX_MESSAGE_BYTES = 1 << 30


def url_of(port: int) -> str:
    """The Spark Connect URL of a local server on ``port``."""
    return f"sc://localhost:{port}"


def state_path(port: int) -> str:
    """The file recording the server on ``port`` (process id, URL, log file)."""
    return os.path.join(tempfile.gettempdir(), f"faq-serve-{port}.json")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive, but not ours to stop
        return True
    # A server started by this very process (a test, a notebook) stays a zombie once it exits until
    # it is reaped; reap it here, or stop() would wait out its whole timeout.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: the signal test above is the answer
        return True
    return done == 0


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def status(port: int = DEFAULT_PORT) -> Optional[dict]:
    """The recorded server on ``port`` if its process is alive (``{"pid", "url", "log", "port"}``), else None."""
    path = state_path(port)
    try:
        with open(path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return None
    if not _alive(int(state.get("pid", -1))):
        return None
    return state


def start(port: int = DEFAULT_PORT, master: str = DEFAULT_MASTER, timeout: float = START_TIMEOUT) -> dict:
    """Start a server on ``port`` in the background (or find the running one); return its state.

    Raises
    ------
    faq.errors.FAQValueError
        The port is taken by something else, or the server did not come up
        within ``timeout`` seconds (its log file is named).
    """
    from faq.errors import FAQValueError

    running = status(port)
    if running is not None:
        return {**running, "started": False}
    if _listening(port):
        raise FAQValueError(f"port {port} is already in use by another program; choose one with --port",
                            argument="port")
    log = os.path.join(tempfile.gettempdir(), f"faq-serve-{port}.log")
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "faq.cli.server", str(port), master],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # not killed with the shell that started it
        )
    state = {"pid": process.pid, "url": url_of(port), "log": log, "port": port, "master": master}
    deadline = time.monotonic() + timeout
    while not _listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.kill()
            raise FAQValueError(f"the Spark Connect server did not start on port {port}; see {log}",
                                argument="port")
        time.sleep(0.5)
    with open(state_path(port), "w") as f:
        json.dump(state, f)
    return {**state, "started": True}


def stop(port: int = DEFAULT_PORT, timeout: float = 60.0) -> Optional[dict]:
    """Stop the server on ``port``; return what was stopped (None if nothing ran)."""
    running = status(port)
    if running is None:
        try:
            os.unlink(state_path(port))
        except OSError:
            pass
        return None
    pid = int(running["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    try:
        os.unlink(state_path(port))
    except OSError:
        pass
    return running


def serve_forever(port: int, master: str) -> None:
    """The server process: a classic session with the Spark Connect plugin, until SIGTERM."""
    from faq.spark import get_session

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    spark = get_session(master=master, app_name="faq-serve", config={
        "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.maxInboundMessageSize": str(MAX_MESSAGE_BYTES),
    })
    print(f"faq serve: Spark {spark.version} ({master}) listening on {url_of(port)}", flush=True)
    while not stopping:
        time.sleep(0.5)
    spark.stop()


if __name__ == "__main__":  # python -m faq.cli.server PORT MASTER (what start() runs)
    serve_forever(int(sys.argv[1]), sys.argv[2])
