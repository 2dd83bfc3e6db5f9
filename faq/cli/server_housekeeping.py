"""What a long-running ``faq serve`` server does every second so that it leaves nothing behind.

The server process (:func:`faq.cli.server.serve_forever`) calls a :class:`Housekeeping` every
:data:`HOUSEKEEPING_INTERVAL` seconds: it deletes the files of Connect sessions that have ended
(:func:`_drop_released_files`) and collects the JVM's garbage between commands.  This is the
optional JVM fast path of the server only (``sparkContext``, ``_jvm``): it runs inside the classic
session the server owns, never in a client, so the library stays usable on Spark Connect.

Examples
--------
>>> HOUSEKEEPING_INTERVAL, IDLE_SECONDS
(1.0, 30.0)
"""

from __future__ import annotations

import os
import re
import time

__all__ = ["HOUSEKEEPING_INTERVAL", "GC_GROWTH", "IDLE_SECONDS", "Housekeeping"]

# Housekeeping: every this many seconds; garbage collected when idle and the heap grew this much.
HOUSEKEEPING_INTERVAL = 1.0
GC_GROWTH = 64 << 20
IDLE_SECONDS = 30.0


class Housekeeping:
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

    With artifact isolation off (see :data:`faq.cli.server.SERVER_CONFIG`), a file a session
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
