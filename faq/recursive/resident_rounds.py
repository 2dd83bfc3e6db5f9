"""A fixpoint's rounds on the executors in one Spark job: its tasks stay, and the rounds come to them.

With the edges held on the executors (:mod:`faq.recursive.executor_edges`)
each round was one Spark job, and a job of Python tasks costs Spark's floor
whatever its frontier: 0.24-0.31 s on ``local-cluster[2,1,2048]`` here for a
round over a handful of nodes.  Single-source shortest paths on R-MAT 18 ran
14 such jobs, 4.8 s of rounds, where the driver placement solves the whole
problem in 3.2 s.  Like an index kept alive across batches (docs/design.md,
"Resident indexes"), the tasks that hold the parts now stay across rounds.

Here one job runs the whole solve.  Its tasks -- one per part, over a range,
as the rounds' jobs ran -- stay until the solve ends; the driver and the
tasks talk through small files in a directory both reach (the parts'
directory, ``spark.faq.indexDir``):

1. Each task writes ``ready-<part>`` for its parts when it starts.  The driver waits for
   every part's (at most :data:`READY_SECONDS`): a task that does not start
   means the cluster has no free core for it, and since every part must
   answer every round, the loop could never run -- the driver then stops the
   tasks that did start and the solve runs a job per round, as before.
2. A round: the driver writes ``round-<n>`` (the frontier and, for hops, the
   values: :func:`~faq.recursive.executor_edges.write_round`, written whole
   and renamed); each task, which polls the directory, answers its part's
   proposals (:func:`~faq.recursive.executor_edges.round_part`, the same
   function a round's job runs) as ``answer-<n>-<part>``; the driver reads
   the answers and removes both.
3. The driver writes ``stop`` when the solve ends (or fails); the tasks drop
   their mappings of the parts (no job to have the workers do it, as after
   rounds run as jobs) and return, and the job ends.  A task that hears nothing for
   :data:`IDLE_SECONDS` returns too, so a driver that died or hung cannot
   hold the cores forever.

A round then costs its work and a few file operations: the floor is paid
once, by the solve, not by each round.  The job is started from a thread of
its own (it returns only when the solve ends), carrying the faq job's
description in the Spark UI (:func:`faq.spark_ui.in_thread`); its failure
(a task that raised) ends the wait of the round in progress with Spark's
error.

Only on a ``local`` or ``local-cluster`` master: the tasks and the driver then
share this machine's file system, where a new file is seen at once.  On a
cluster's shared file system (NFS) a directory's listing may be cached for
seconds, so there a round stays one job (:func:`resident_slots`).  There are as many tasks as the
master runs at once (its cores), each answering its share of the parts, should the parts be more
(``spark.default.parallelism`` above the cores).

Examples
--------
>>> import numpy as np
>>> from faq.spark import get_session
>>> from faq.semirings import MIN_PLUS
>>> from faq.recursive.executor_edges import ExecutorEdges
>>> from faq.recursive.propagate import fixpoint_ops
>>> frame = get_session().createDataFrame([(1, 2, 4.0), (2, 3, 1.0)], "src long, dst long, weight double")
>>> with ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS), parts=1) as edges:
...     with ResidentRounds.start(edges) as rounds:
...         values = np.array([0.0, np.inf, np.inf])      # node 1 (code 0) is the source
...         first = edges.proposals(np.array([0]), values)  # a round answered by the task that stays
...         values[first[1]] = first[2]
...         second = edges.proposals(first[1], values)
...         rounds.rounds, first[2].tolist(), second[2].tolist()
(2, [4.0], [5.0])
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np

from faq.recursive.executor_edges import ExecutorEdges, forget_parts, parts_of, round_part, write_round
from faq.recursive.seminaive import DST, SRC
from faq.scope import Owner
from faq.semirings.numpy_backend import NumpyForm

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ResidentRounds", "resident_slots", "READY_SECONDS", "IDLE_SECONDS"]

#: How long the driver waits for every part's task to start before it gives up on keeping them (step 1).
READY_SECONDS = 10.0
#: A task that hears no round (nor ``stop``) for this long returns: the driver is gone or stuck.
IDLE_SECONDS = 600.0
_STOP, _BEST = "stop", "best"
_POLL_FIRST, _POLL_MOST = 0.0001, 0.002  # seconds between looks at the directory: short at first, then longer
_JOINED_SECONDS = 60.0  # how long close() waits for the job to end after ``stop``


def resident_slots(spark: Any) -> Optional[int]:
    """How many tasks of ``spark`` run at once where the rounds may stay in one job -- the cores of a
    ``local`` or ``local-cluster`` master, divided by ``spark.task.cpus`` -- else None (module notes).

    >>> from faq.spark import get_session
    >>> resident_slots(get_session()) >= 1
    True
    """
    from faq.settings import setting
    from faq.spark import master_cores

    master = setting(spark, "spark.master") or ""
    if not master.startswith("local"):
        return None
    try:
        task_cpus = int(setting(spark, "spark.task.cpus") or 1)
    except ValueError:  # Spark itself refuses such a session; here it only means "one"
        task_cpus = 1
    slots = master_cores(master, task_cpus)
    return slots or None


class ResidentRounds(Owner):
    """The tasks of one job answering every round of a solve over ``edges`` (module notes).

    Made by :meth:`start`, which plugs it into ``edges`` (:attr:`ExecutorEdges.runner`): while it is
    open, :meth:`ExecutorEdges.proposals` sends each round to these tasks instead of running a job.
    :meth:`close` stops the tasks and unplugs it.

    Attributes
    ----------
    rounds : int
        Rounds answered.
    ready_seconds : float
        How long the tasks took to start (the job's share of the solve).
    """

    def __init__(self, edges: ExecutorEdges, directory: str) -> None:
        self.edges, self.directory = edges, directory
        self.rounds = 0
        self.ready_seconds = 0.0
        self._outcome: dict[str, Any] = {}
        self._thread: Optional[threading.Thread] = None

    @classmethod
    def start(cls, edges: ExecutorEdges, *, slots: Optional[int] = None,
              ready_seconds: float = READY_SECONDS) -> Optional["ResidentRounds"]:
        """Start the job whose tasks answer the rounds of ``edges``: one task a part, or ``slots`` tasks (the
        tasks Spark runs at once) sharing the parts; None (after stopping what started) when not every
        part's task started within ``ready_seconds`` or ``edges`` has no parts."""
        from faq.spark_ui import in_thread

        if not edges.parts:
            return None
        directory = os.path.join(os.path.dirname(edges.paths[0]), f"resident-{uuid.uuid4().hex}")
        os.makedirs(directory)
        loop = cls(edges, directory)
        tasks = max(1, min(edges.parts, slots or edges.parts))
        job = edges.spark.range(0, edges.parts, 1, tasks).mapInArrow(
            functools.partial(_resident_task, edges.paths, edges.ops, directory), "part long, rounds long")
        outcome = loop._outcome

        def run() -> None:
            try:
                outcome["table"] = job.toArrow()
            except BaseException as error:  # noqa: BLE001 - handed to the driver's wait (_wait)
                outcome["error"] = error

        loop._thread = threading.Thread(target=in_thread(edges.spark, "fixpoint rounds in tasks that stay", run),
                                        name="faq-resident-rounds", daemon=True)
        t0 = time.perf_counter()
        loop._thread.start()
        try:
            ready = loop._wait([f"ready-{p}" for p in range(edges.parts)], ready_seconds)
        except BaseException:
            loop.close()
            raise
        loop.ready_seconds = time.perf_counter() - t0
        if not ready:
            loop.close(wait=False)  # a task without a core may start much later: it finds no directory and returns
            return None
        edges.runner = loop
        return loop

    def run(self, sent: Any, known: Optional[np.ndarray]) -> "pa.Table":
        """One round: ``sent`` (the frontier's codes and values; None: labels) and ``known`` (every node's
        value, for hops, or None) to the tasks; their answers as one table (``dst``, ``best``, ``src``)."""
        import pyarrow as pa

        from faq.joins.mapped import read_index

        n = self.rounds
        round_file = os.path.join(self.directory, f"round-{n}")
        write_round(round_file, sent, known)
        names = [f"answer-{n}-{p}" for p in range(self.edges.parts)]
        self._wait(names, None, n)
        tables = []
        for name in names:
            path = os.path.join(self.directory, name)
            answer = read_index(path)
            tables.append(pa.table({DST: np.array(answer[DST]), _BEST: np.array(answer[_BEST]),
                                    SRC: np.array(answer[SRC])}))
            os.remove(path)
        os.remove(round_file)
        self.rounds += 1
        return pa.concat_tables(tables, promote_options="default")

    def _wait(self, names: list[str], seconds: Optional[float], round_number: int = -1) -> bool:
        """Wait until every file of ``names`` is in the directory: True; False after ``seconds`` (None: no
        limit).  The job's error, if it failed meanwhile, is raised; a job that ended without them raises
        :class:`~faq.errors.ResidentRoundsError`."""
        from faq.errors import ResidentRoundsError

        deadline = None if seconds is None else time.monotonic() + seconds
        pause = _POLL_FIRST
        while True:
            present = set(os.listdir(self.directory))
            if all(name in present for name in names):
                return True
            if "error" in self._outcome:
                raise self._outcome["error"]
            if self._thread is not None and not self._thread.is_alive():
                raise ResidentRoundsError(round=round_number, reason="its job ended without answering")
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MOST)

    def close(self, wait: bool = True) -> None:
        """Stop the tasks, wait for their job to end (``wait``: at most a minute), remove the files; unplug."""
        import shutil

        if self.edges.runner is self:
            self.edges.runner = None
        try:
            with open(os.path.join(self.directory, _STOP), "wb"):
                pass
        except OSError:  # the directory is gone: the tasks see that as a stop
            pass
        if self._thread is not None and wait:
            self._thread.join(_JOINED_SECONDS)
        shutil.rmtree(self.directory, ignore_errors=True)

    def __repr__(self) -> str:
        return f"ResidentRounds({self.edges.parts} parts, {self.rounds} rounds)"


# --- in the tasks -----------------------------------------------------------------------------------------


def _resident_task(paths: tuple[str, ...], ops: NumpyForm, directory: str,
                   batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
    """The loop of one task (module notes): say it is ready, then answer each round for its parts until
    ``stop``; yields how many rounds it answered per part."""
    import pyarrow as pa

    from faq.huge_pages import plain_pages
    from faq.joins.mapped import read_index, write_index

    parts = list(parts_of(batches))
    if not os.path.isdir(directory):  # started after the driver stopped waiting and cleaned up
        return
    for p in parts:
        _touch(os.path.join(directory, f"ready-{p}"))
    answered = 0
    while True:
        found = _next_round(directory, answered)
        if found is None:
            break
        number, path = found
        try:
            message = read_index(path)
        except FileNotFoundError:  # answered by a task this one replaces, and removed meanwhile
            answered = number + 1
            continue
        for p in parts:
            with plain_pages():  # a round's arrays are fresh and short-lived (faq.huge_pages)
                batch = round_part(paths[p], ops, message["sent"], message["known"])
            answer = {name: batch.column(name).to_numpy(zero_copy_only=False) for name in (DST, _BEST, SRC)}
            target = os.path.join(directory, f"answer-{number}-{p}")
            write_index(answer, f"{target}.{os.getpid()}.partial")
            os.replace(f"{target}.{os.getpid()}.partial", target)
        answered = number + 1
    forget_parts(paths)  # the parts' files go next: no job is run to have this worker drop its mappings
    yield pa.RecordBatch.from_arrays([pa.array(parts, pa.int64()), pa.array([answered] * len(parts), pa.int64())],
                                     ["part", "rounds"])


def _next_round(directory: str, number: int) -> Optional[tuple[int, str]]:
    """The first round file numbered ``number`` or later (a task restarted by Spark catches up on the one
    the driver waits for), or None on ``stop``, a removed directory, or :data:`IDLE_SECONDS` of silence."""
    deadline = time.monotonic() + IDLE_SECONDS
    pause = _POLL_FIRST
    while time.monotonic() < deadline:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            return None
        if _STOP in names:
            return None
        waiting = [int(name[len("round-"):]) for name in names
                   if name.startswith("round-") and name[len("round-"):].isdigit()]
        waiting = [n for n in waiting if n >= number]
        if waiting:
            first = min(waiting)
            return first, os.path.join(directory, f"round-{first}")
        time.sleep(pause)
        pause = min(pause * 2, _POLL_MOST)
    return None


def _touch(path: str) -> None:
    with open(path, "wb"):
        pass
