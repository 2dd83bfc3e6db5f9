"""``--follow``: apply batch files as they land in a directory, each once, until stopped.

The commands that read a directory of update files (``faq track``, and the
fixpoints') apply the files present when they start and, with ``--follow``,
keep watching the directory: every ``--poll`` seconds the files that landed
since are applied in name order, one version each.  This is the command
line's streaming source; a program feeds a Structured Streaming DataFrame
to ``stream()`` instead (:mod:`faq.incremental.streaming`).  A directory
watcher runs no Spark job per batch: a file is a batch, read and applied on
the driver as the files present at the start are.

Exactly once is the state's, as for a resumed run: every applied file's
name is the label of its version (with ``--state``, committed in the same
manifest write as the version), and :func:`faq.io.updates.pending` applies
only the files after the last applied one.  So files must land in name
order (numbered or timestamped names), and whole: write a file under a
name starting with ``.`` and rename it into place (names starting with
``.`` are not read).  A file that lands with a name before the last
applied one is refused (:class:`~faq.errors.StateDirectoryError`) rather
than applied out of order or skipped.

Following stops on Ctrl-C or SIGTERM (after the batch in hand: the state
stays at a committed version, and a rerun with the same ``--state`` goes on
from there), or after ``--idle-exit`` seconds without a new file.

Examples
--------
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> open(os.path.join(folder, "001.txt"), "w").close()
>>> applied = []
>>> follow(folder, lambda: [os.path.basename(f) for _, f in applied],
...        lambda version, file: applied.append((version, file)), poll=0.01, idle_exit=0.05)
1
>>> [(v, os.path.basename(f)) for v, f in applied]
[(1, '001.txt')]
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable, Optional

__all__ = ["follow", "add_follow_options"]

#: Seconds between two looks at the directory (``--poll``).
DEFAULT_POLL = 1.0


def add_follow_options(parser) -> None:
    """Add ``--follow``, ``--poll`` and ``--idle-exit`` to a command's ``parser``."""
    parser.add_argument("--follow", action="store_true",
                        help="after the files present, keep applying batch files as they land in the directory "
                             "(in name order, each once; write a file under a '.' name and rename it into place); "
                             "stop with Ctrl-C")
    parser.add_argument("--poll", type=float, default=DEFAULT_POLL, metavar="SECONDS",
                        help="with --follow: seconds between looks at the directory (default %(default)s)")
    parser.add_argument("--idle-exit", type=float, default=None, metavar="SECONDS",
                        help="with --follow: stop after SECONDS without a new batch file")


def check_follow_options(args) -> None:
    """``--poll`` positive, ``--idle-exit`` not negative, both only with ``--follow``."""
    from faq.errors import InvalidArgumentError

    if args.poll <= 0:
        raise InvalidArgumentError("--poll", args.poll, "must be more than 0 seconds")
    if args.idle_exit is not None and args.idle_exit < 0:
        raise InvalidArgumentError("--idle-exit", args.idle_exit, "must be 0 or more seconds")
    if args.idle_exit is not None and not args.follow:
        raise InvalidArgumentError("--idle-exit", args.idle_exit, "only applies with --follow")


def follow(
    folder: str,
    applied: Callable[[], list[str]],
    apply: Callable[[int, str], None],
    *,
    poll: float = DEFAULT_POLL,
    idle_exit: Optional[float] = None,
    state: str = "the state",
    note: Callable[[str], None] = lambda text: None,
) -> int:
    """Apply the batch files of ``folder`` as they land, in name order, each once; the number applied.

    Parameters
    ----------
    folder : str
        The directory of batch files (:func:`faq.io.updates.update_files`).
    applied : callable
        The labels (file names) of the versions applied so far, oldest first.
    apply : callable
        ``apply(version, file)`` applies one file as that version.
    poll : float
        Seconds between looks at the directory.
    idle_exit : float, optional
        Stop after this many seconds without a new file; None follows until stopped.
    state : str
        How errors name the state (its directory).
    note : callable
        Receives a line when following starts and stops.

    Raises
    ------
    StateDirectoryError
        A file landed with a name before the last applied one.
    """
    from faq.io.updates import pending, update_files

    stop = threading.Event()
    restore = _stop_on_signals(stop)
    count = 0
    last = time.monotonic()
    note(f"following {folder} (every {poll:g} s" + (f", stopping after {idle_exit:g} s idle)" if idle_exit is not None
                                                    else "; Ctrl-C stops)"))
    try:
        while not stop.is_set():
            todo = pending(update_files(folder), applied(), state)
            for version, file in todo:
                apply(version, file)
                count += 1
                if stop.is_set():
                    break
            if todo:
                last = time.monotonic()
            elif idle_exit is not None and time.monotonic() - last >= idle_exit:
                break
            stop.wait(poll)
    finally:
        restore()
    note(f"stopped following {folder}: {count} batch file(s) applied")
    return count


def _stop_on_signals(stop: threading.Event) -> Callable[[], None]:
    """Make SIGINT and SIGTERM set ``stop`` (in the main thread only); returns what puts the handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        previous[number] = signal.signal(number, lambda *_: stop.set())

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore
