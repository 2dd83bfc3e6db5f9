"""Progress reports for long jobs, written to stderr.

Two sources, one output stream:

* :class:`StepPrinter` turns the executor's :class:`~faq.insideout.executor.StepEvent`
  s into lines such as ``[faq] step 1/3: eliminate a (...) ...`` and
  ``[faq] step 1/3 done: 10806 rows in 2.1 s``, and the
  :class:`~faq.incremental.change.BatchEvent` s of maintained answers into
  ``[faq] batch 4 (004.txt) done: 12 changed row(s) in 0.012 s``.
* :class:`StageMonitor` is a background thread that reports how many tasks
  of the running Spark stages are done: it polls the ``statusTracker()`` of
  a classic session, and on Spark Connect reads what the session's progress
  handler last received (Connect reports progress with each response).  On a terminal it redraws one line (``\\r``) twice a second;
  on a pipe or file it writes a plain line at most every ``interval`` seconds,
  and only when something changed.

:class:`Reporter` ties both to one stream and one lock, so a step line never
lands in the middle of a task-progress line.  ``Reporter(enabled=False)``
prints nothing (the CLI's ``--quiet``).

Examples
--------
>>> import io
>>> from faq.insideout.executor import StepEvent
>>> out = io.StringIO()
>>> report = Reporter(stream=out)
>>> report.note("reading edges.txt")
>>> report(StepEvent("load", 0, 0, "edges", rows=42, seconds=0.5))
>>> report(StepEvent("start", 1, 2, "eliminate a (bag {a, b})"))
>>> report(StepEvent("done", 1, 2, "eliminate a (bag {a, b})", rows=42, seconds=1.25))
>>> print(out.getvalue(), end="")
[faq] reading edges.txt
[faq] loaded 42 edges in 0.5 s
[faq] step 1/2: eliminate a (bag {a, b}) ...
[faq] step 1/2 done: 42 rows in 1.2 s
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any, Optional

PREFIX = "[faq]"

__all__ = ["Reporter", "StepPrinter", "StageMonitor", "ClassicStages", "ConnectStages", "stage_source", "PREFIX"]


def _is_tty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class StepPrinter:
    """Print :class:`~faq.insideout.executor.StepEvent` s as one line each.

    Parameters
    ----------
    stream : text stream, optional
        Default ``sys.stderr`` (looked up at each call, so pytest's capture works).
    lock : threading.Lock, optional
        Shared with a :class:`StageMonitor` writing to the same stream.
    """

    def __init__(self, stream: Optional[IO[str]] = None, lock: Optional[threading.Lock] = None) -> None:
        self._stream = stream
        self.lock = lock or threading.Lock()
        self.monitor: Optional["StageMonitor"] = None

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stderr

    def write_line(self, text: str) -> None:
        """Write one whole line (clearing a task-progress line first)."""
        with self.lock:
            if self.monitor is not None:
                self.monitor.clear_line()
            self.stream.write(f"{PREFIX} {text}\n")
            self.stream.flush()

    def __call__(self, event: Any) -> None:
        if event.kind == "note":  # a NoteEvent: a line about what runs
            self.write_line(event.description)
            return
        if hasattr(event, "version"):  # a BatchEvent of a maintained query, motif or fixpoint
            name = f" ({event.label})" if event.label else ""
            if event.kind == "start":
                self.write_line(f"batch {event.version}{name}: {event.description} ...")
            else:
                secs = "" if event.seconds is None else f" in {event.seconds:.3f} s"
                self.write_line(f"batch {event.version}{name} done: {event.rows} changed row(s){secs}")
            return
        if event.kind == "load":  # the input of a job read and prepared, before its steps
            secs = "" if event.seconds is None else f" in {event.seconds:.1f} s"
            self.write_line(f"loaded {event.rows} {event.description}{secs}")
            return
        where = f"step {event.step}/{event.total}"
        if event.kind == "start":
            self.write_line(f"{where}: {event.description} ...")
        elif event.kind == "done":
            rows = f"{event.rows} rows" if event.rows is not None else event.note or "? rows"  # (pipelined: why)
            secs = "" if event.seconds is None else f" in {event.seconds:.1f} s"
            self.write_line(f"{where} done: {rows}{secs}")
        else:  # an event kind this printer does not know: show it plainly
            self.write_line(f"{where} {event.kind}: {event.description}")


class ClassicStages:
    """The running stages of a classic session: ``[(stage id, tasks done, tasks)]``, from its status tracker."""

    def __init__(self, session: Any) -> None:
        self._tracker = session.sparkContext.statusTracker()

    def __call__(self) -> list[tuple[int, int, int]]:
        out = []
        for stage_id in sorted(self._tracker.getActiveStageIds()):
            info = self._tracker.getStageInfo(stage_id)
            if info is not None:
                out.append((stage_id, info.numCompletedTasks, info.numTasks))
        return out

    def close(self) -> None:
        pass


class ConnectStages:
    """The running stages of a Spark Connect session, as its progress handler last reported them."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._stages: list[tuple[int, int, int]] = []
        session.registerProgressHandler(self._handle)

    def _handle(self, stages: Any, inflight_tasks: int, operation_id: Any, done: bool) -> None:
        self._stages = [] if done else [(s.stage_id, s.num_completed_tasks, s.num_tasks)
                                        for s in stages or () if not s.done]

    def __call__(self) -> list[tuple[int, int, int]]:
        return list(self._stages)

    def close(self) -> None:
        try:
            self._session.removeProgressHandler(self._handle)
        except Exception:  # noqa: BLE001 - the session is closing; nothing left to report
            pass


def stage_source(session: Any) -> Any:
    """A callable listing the running stages of ``session`` (classic or Spark Connect)."""
    from faq.spark import is_connect

    return ConnectStages(session) if is_connect(session) else ClassicStages(session)


class StageMonitor:
    """Background thread reporting the running Spark stages' task progress.

    Parameters
    ----------
    stages : callable
        Returns the running stages as ``(stage id, tasks done, tasks)``
        (:func:`stage_source`).
    printer : StepPrinter
        Gives the stream and the lock.
    interval : float
        Seconds between lines when the stream is not a terminal.
    tty_interval : float
        Seconds between redraws on a terminal.
    delay : float
        A stage is reported only once it has run this long (short stages are
        noise).
    """

    def __init__(
        self,
        stages: Any,
        printer: StepPrinter,
        interval: float = 5.0,
        tty_interval: float = 0.5,
        delay: float = 2.0,
    ) -> None:
        self._stages = stages
        self._printer = printer
        self._tty = _is_tty(printer.stream)
        self._interval = tty_interval if self._tty else interval
        self._delay = delay
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._line_len = 0  # length of the line drawn on the terminal, 0 when none
        self._last_text = ""
        self._seen: dict[int, float] = {}  # stage id -> when first seen
        printer.monitor = self

    def start(self) -> "StageMonitor":
        self._thread = threading.Thread(target=self._run, name="faq-progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._printer.lock:
            self.clear_line()
        self._printer.monitor = None
        close = getattr(self._stages, "close", None)
        if close is not None:
            close()

    def clear_line(self) -> None:
        """Erase the terminal progress line (caller holds the lock)."""
        if self._tty and self._line_len:
            self._printer.stream.write("\r" + " " * self._line_len + "\r")
            self._printer.stream.flush()
            self._line_len = 0

    def status(self) -> Optional[str]:
        """One line describing the running stages, or None when there is nothing to say."""
        now = time.monotonic()
        parts = []
        for stage_id, done, total in self._stages():
            first = self._seen.setdefault(stage_id, now)
            if now - first < self._delay:
                continue
            parts.append(f"stage {stage_id}: {done}/{total} tasks")
        if not parts:
            return None
        return "spark " + ", ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                text = self.status()
            except Exception:  # the context is stopping; progress is best effort
                return
            with self._printer.lock:
                if self._stop.is_set():
                    return
                if text is None:
                    self.clear_line()
                    continue
                if self._tty:
                    line = f"{PREFIX}   {text}"
                    pad = max(0, self._line_len - len(line))
                    self._printer.stream.write("\r" + line + " " * pad)
                    self._printer.stream.flush()
                    self._line_len = len(line)
                elif text != self._last_text:
                    self._printer.stream.write(f"{PREFIX}   {text}\n")
                    self._printer.stream.flush()
                self._last_text = text


class Reporter:
    """What a command uses to report progress: notes, step events and task progress.

    Call it with step events (it is a valid ``progress=`` callback), use
    :meth:`note` for free-form lines, and :meth:`watch` to start the stage
    monitor on a session.  Use it as a context manager (or call
    :meth:`close`) so the monitor thread stops.

    Parameters
    ----------
    enabled : bool
        False prints nothing at all.
    stream : text stream, optional
        Default ``sys.stderr``.
    interval : float
        Seconds between task-progress lines when the stream is not a terminal.
    """

    def __init__(self, enabled: bool = True, stream: Optional[IO[str]] = None, interval: float = 5.0) -> None:
        self.enabled = enabled
        self.printer = StepPrinter(stream)
        self.interval = interval
        self._monitor: Optional[StageMonitor] = None

    def note(self, text: str) -> None:
        """Print ``[faq] text`` (unless disabled)."""
        if self.enabled:
            self.printer.write_line(text)

    def __call__(self, event: Any) -> None:
        if self.enabled:
            self.printer(event)

    def watch(self, session: Any) -> None:
        """Start reporting the task progress of ``session``'s stages (classic or Spark Connect)."""
        if self.enabled and self._monitor is None:
            self._monitor = StageMonitor(stage_source(session), self.printer, interval=self.interval).start()

    def close(self) -> None:
        """Stop the stage monitor, if running."""
        if self._monitor is not None:
            self._monitor.stop()
            self._monitor = None

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
