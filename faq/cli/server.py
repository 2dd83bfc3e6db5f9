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
(:func:`state_path`): the server's process id, its URL, its log file and its
temporary directory, so :func:`stop` and :func:`status` find it from any shell.

A server is meant to run for days, so what a command leaves on it must go
when the command's Connect session goes (a ``--remote`` command releases it
when it ends; an abandoned one expires).  Spark drops a released session's
cached data itself; the server's housekeeping (:class:`_Housekeeping`, every
second) deletes the files the session shipped (index files), which Spark
keeps, and collects the JVM's garbage between commands so that its heap
shrinks back.  Everything the server writes lives in one directory it owns
(Spark's local directories, the JVM's and the Python workers' temporary
files), removed by :func:`stop`.

Only the CLI (:mod:`faq.cli.serve`) and the tests use this module; the
library connects to a server through :func:`faq.spark.get_session` (``remote=``).
The server process runs ``python -m faq.cli.server PORT MASTER [TMPDIR]``.

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
import re
import shutil
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
# A server's temporary directory is tempdir/faq-serve-PORT-XXXXXXXX.
_TMP_PREFIX = "faq-serve-"

# Settings of the server's session beyond faq's own (faq.spark.DEFAULT_CONFIG).
SERVER_CONFIG: dict[str, str] = {
    "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
    "spark.connect.grpc.maxInboundMessageSize": str(MAX_MESSAGE_BYTES),
    # Artifact isolation stays off (PySpark's classic default; Spark's own local Connect server turns it on):
    # isolated, every Connect session -- every --remote command -- gets Python workers of its own (Spark
    # keys its worker pools by the session), so each command waits for a new worker to start and import
    # faq, and each released session leaves its pyspark.daemon behind (~47 MB resident) until the server
    # stops.  Shared, the workers stay warm across commands; the files commands ship are removed by
    # _drop_released_files below instead.
}
# Housekeeping (_Housekeeping): every this many seconds; garbage collected when idle and the heap grew this much.
HOUSEKEEPING_INTERVAL = 1.0
GC_GROWTH = 64 << 20
IDLE_SECONDS = 30.0


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
    """The recorded server on ``port`` if its process is alive (``{"pid", "url", "log", "port", "master", "tmp"}``),
    else None."""
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
        raise FAQValueError(error_class="PORT_IN_USE", port=port, argument="port")
    log = os.path.join(tempfile.gettempdir(), f"faq-serve-{port}.log")
    # Everything the server writes to disk goes under this directory (see serve_forever); stop() removes it.
    tmp = tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{port}-")
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "faq.cli.server", str(port), master, tmp],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # not killed with the shell that started it
        )
    state = {"pid": process.pid, "url": url_of(port), "log": log, "port": port, "master": master, "tmp": tmp}
    deadline = time.monotonic() + timeout
    while not _listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.kill()
                process.wait()
            _remove_tmp(tmp)
            raise FAQValueError(error_class="SERVER_NOT_STARTED", port=port, log=log, argument="port")
        time.sleep(0.5)
    with open(state_path(port), "w") as f:
        json.dump(state, f)
    return {**state, "started": True}


def stop(port: int = DEFAULT_PORT, timeout: float = 60.0) -> Optional[dict]:
    """Stop the server on ``port``; return what was stopped (None if nothing ran)."""
    running = status(port)
    if running is None:
        try:
            with open(state_path(port)) as f:  # a server that died: its temporary directory goes too
                _remove_tmp(json.load(f).get("tmp") or "")
        except (OSError, ValueError, AttributeError):
            pass
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
    if running.get("tmp"):
        _remove_tmp(running["tmp"])
    try:
        os.unlink(state_path(port))
    except OSError:
        pass
    return running


def _remove_tmp(path: str) -> None:
    """Remove a server's temporary directory (only one start() made: named faq-serve-PORT-...)."""
    if os.path.basename(os.path.normpath(path)).startswith(_TMP_PREFIX) and os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)


def serve_forever(port: int, master: str, tmp: Optional[str] = None) -> None:
    """The server process: a classic session with the Spark Connect plugin, until SIGTERM.

    ``tmp`` (made by :func:`start`, removed by :func:`stop`) holds everything
    the server writes: Spark's local directories (shuffle and spilled blocks,
    the files directory with the sessions' shipped files), the JVM's
    temporary directory (Connect's artifact staging) and, through ``TMPDIR``,
    the Python workers' temporary files.
    """
    from faq.spark import get_session, quiet_log4j_option

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    config = {**SERVER_CONFIG, "spark.connect.grpc.binding.port": str(port)}
    if tmp:
        os.environ["TMPDIR"] = tmp  # the JVM and so its Python workers inherit it
        tempfile.tempdir = None  # this process's tempfile reads TMPDIR again
        config["spark.local.dir"] = tmp
        config["spark.driver.extraJavaOptions"] = f"{quiet_log4j_option()} -Djava.io.tmpdir={tmp}"
    spark = get_session(master=master, app_name="faq-serve", config=config)
    print(f"faq serve: Spark {spark.version} ({master}) listening on {url_of(port)}", flush=True)
    housekeeping = _Housekeeping(spark)
    while not stopping:
        time.sleep(HOUSEKEEPING_INTERVAL)
        housekeeping()
    spark.stop()


class _Housekeeping:
    """What the server does every :data:`HOUSEKEEPING_INTERVAL` so that a long run leaves nothing behind.

    * Delete the files of Connect sessions that have ended (:func:`_drop_released_files`).
    * Collect the JVM's garbage when the server is idle -- no Spark job runs, and no Connect session is
      open or none ran a job for :data:`IDLE_SECONDS` -- and the heap grew by :data:`GC_GROWTH` bytes since
      the last collection.  Without it, G1 grows the committed heap towards ``-Xmx``
      (``spark.driver.memory``) with the garbage of each command and rarely returns it: the heap's live
      data after a command is ~65 MB and grows by ~50 KB a command (bounded status records), yet the
      JVM's resident memory went from 0.8 to 1.5 GB over 40 small commands (to 4.1 GB over six R-MAT 17
      ones).  A full collection (~0.1-0.3 s, between commands) shrinks the heap back (G1 gives memory
      above ``MaxHeapFreeRatio`` back to the system), and lets Spark's ContextCleaner remove the shuffle
      files of the commands' queries; nothing happens while the server stays idle.
    """

    def __init__(self, spark) -> None:
        self.spark = spark
        jvm = spark.sparkContext._jvm
        self.system = jvm.java.lang.System
        self.runtime = jvm.java.lang.Runtime.getRuntime()
        self.tracker = spark.sparkContext._jsc.sc().statusTracker()
        # Spark Connect's session manager (a Scala object: its MODULE$).
        self.sessions = getattr(getattr(jvm.org.apache.spark.sql.connect.service, "SparkConnectService$"),
                                "MODULE$").sessionManager()
        self.collected = self._used()
        self.last_job = time.monotonic()
        self.reported: set[str] = set()

    def _used(self) -> int:
        return self.runtime.totalMemory() - self.runtime.freeMemory()

    def __call__(self) -> None:
        for name, task in (("delete released sessions' files", lambda: _drop_released_files(self.spark)),
                           ("collect garbage", self._collect_when_idle)):
            try:
                task()
            except Exception as error:  # noqa: BLE001 - housekeeping must not stop the server
                if name not in self.reported:  # once in the log, not every second
                    self.reported.add(name)
                    print(f"faq serve: could not {name}: {error}", flush=True)

    def _collect_when_idle(self) -> None:
        now = time.monotonic()
        if len(self.tracker.getActiveJobIds()):
            self.last_job = now
            return
        if self.sessions.listActiveSessions().size() and now - self.last_job < IDLE_SECONDS:
            return
        if self._used() - self.collected > GC_GROWTH:
            self.system.gc()
            self.collected = self._used()


# A file a Connect session shipped (SparkSession.addArtifacts(file=True)), as the SparkContext lists it:
# spark://HOST:PORT/artifacts/SESSION/files/NAME.
_SESSION_FILE = re.compile(r"/artifacts/([0-9a-fA-F-]{36})/files/([^/]+)$")


def _drop_released_files(spark) -> list[str]:
    """Delete the files shipped by Connect sessions that have ended; return their names.

    With artifact isolation off (see :data:`SERVER_CONFIG`), a file a session
    ships is added to the SparkContext's one list of files (which every task
    carries) and copied into Spark's files directory (``SparkFiles``: on a
    local master the executor reads that copy), and Spark removes neither
    when the session ends: only the session's own artifact directory
    (``artifacts-*/SESSION`` in the JVM's temporary directory), which it
    deletes when the session is released or expires.  So a listed file whose
    session directory is gone belongs to a session that can run no more tasks:
    it leaves the list and its copy is deleted (a Python worker that still
    maps it keeps its pages until it unmaps them).
    """
    import glob
    from urllib.parse import unquote

    jvm = spark.sparkContext._jvm
    listed = spark.sparkContext._jsc.sc().addedFiles().get("default")  # a Scala Option of a concurrent Map
    if listed.isEmpty():
        return []
    files = listed.get()
    keys = []
    it = files.keysIterator()
    while it.hasNext():
        keys.append(it.next())
    java_tmp = jvm.java.lang.System.getProperty("java.io.tmpdir")
    root = jvm.org.apache.spark.SparkFiles.getRootDirectory()
    alive: dict[str, bool] = {}
    dropped = []
    for key in keys:
        found = _SESSION_FILE.search(key)
        if found is None:
            continue
        session, name = found.group(1), unquote(found.group(2))
        if session not in alive:
            alive[session] = bool(glob.glob(os.path.join(glob.escape(java_tmp), "artifacts-*", session)))
        if alive[session]:
            continue
        files.remove(key)
        try:
            os.unlink(os.path.join(root, name))
        except OSError:
            pass
        dropped.append(name)
    return dropped


if __name__ == "__main__":  # python -m faq.cli.server PORT MASTER [TMPDIR] (what start() runs)
    serve_forever(int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
