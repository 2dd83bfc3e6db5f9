"""One writer at a time on a state directory: an advisory lock held for the writer's life.

Every embedded store has the rule (SQLite's lock file, LMDB's writer mutex,
Delta's optimistic commit): two processes committing versions of one state
would replace each other's manifests and sweep each other's files.  A
:class:`WriterLock` is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the file
``writer.lock`` inside the state directory, taken before the first write and
held until :meth:`WriterLock.release` (or the process ends: the kernel drops
a dead process's locks, so a crashed writer never blocks the next one).  The
holder writes who it is into the file (process id, host, start, command), so
a second writer is refused with :class:`~faq.errors.StateLockedError` naming
the holder.  Readers take no lock: a committed manifest and the files it
names are never changed in place, only replaced (:mod:`faq.incremental.store`).

``flock`` locks belong to the open file, which a ``fork`` shares: a forked
child (a background compaction) would keep the lock after its parent
released it or died.  Children close their copies at once
(:func:`os.register_at_fork`).

The lock file is opened without following a symbolic link or waiting on a
FIFO (``O_NOFOLLOW | O_NONBLOCK``): a planted link cannot make the writer
open, let alone write, another file.  It must be a regular file of the
running user's, not writable by others: a lock file another user made (and
holds) would let them lock the owner out of the state, or name a holder
that is not one (:class:`~faq.errors.StateUntrustedError`).

Examples
--------
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> first = WriterLock.acquire(folder)
>>> WriterLock.acquire(folder)
Traceback (most recent call last):
...
faq.errors.StateLockedError: [STATE_LOCKED] ...
>>> first.release()
>>> WriterLock.acquire(folder).release()   # free again
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import time
import weakref
from typing import Optional

from faq.errors import StateDirectoryError, StateLockedError, StateUntrustedError
from faq.ownership import WRITE_BY_OTHERS, file_problem, problem_fix

__all__ = ["LOCK_FILE", "WriterLock"]

#: The lock file's name inside a state directory.
LOCK_FILE = "writer.lock"

# Locks this process holds, closed in forked children (module notes).
_HELD: "weakref.WeakSet[WriterLock]" = weakref.WeakSet()


class WriterLock:
    """The writer's lock on one state directory (see the module notes); made by :meth:`acquire`."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: Optional[int] = fd

    @classmethod
    def acquire(cls, directory: str) -> "WriterLock":
        """Take the writer's lock of ``directory`` (which must exist), or raise.

        Raises
        ------
        StateLockedError
            Another process -- or another open object of this one -- holds it.
        StateDirectoryError
            The lock file is a symbolic link or cannot be opened.
        StateUntrustedError
            The lock file is not a regular file of this user's, closed to others' writes.
        """
        path = os.path.join(directory, LOCK_FILE)
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StateDirectoryError(directory, f"{LOCK_FILE} is a symbolic link; faq does not follow links "
                                                     "inside a state directory") from exc
            raise StateDirectoryError(directory, f"the writer's lock file cannot be opened: {exc}") from exc
        if problem := file_problem(os.fstat(fd), closed=WRITE_BY_OTHERS):
            os.close(fd)
            fix = f"remove {path} if no process of yours writes this state; {problem_fix(directory, problem)}"
            raise StateUntrustedError(path=directory, reason=f"{LOCK_FILE} {problem}", fix=fix)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StateLockedError(path=directory, holder=holder) from None
            raise StateDirectoryError(directory, f"the writer's lock cannot be taken: {exc}") from exc
        lock = cls(path, fd)
        lock._record_holder()
        _HELD.add(lock)
        return lock

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up (closing the file releases it); a second call does nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            _HELD.discard(self)
            os.close(fd)

    def __del__(self) -> None:  # an object dropped without close() still lets the next writer in
        try:
            self.release()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def _record_holder(self) -> None:
        """Write who holds the lock (for the message a refused writer gets)."""
        command = " ".join(sys.argv)[:200] or sys.executable
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": time.strftime("%Y-%m-%d %H:%M:%S"), "command": command})
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, record.encode(), 0)

    def _forget_in_child(self) -> None:
        """In a forked child: close the inherited descriptor (the parent keeps the lock)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _read_holder(fd: int) -> str:
    """The holder's record as words ("pid 123 on host, since ..., running ..."); a short note if unreadable."""
    try:
        record = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return (f"pid {int(record['pid'])} on {str(record['host'])[:64]}, since {str(record['since'])[:32]}, "
                f"running {str(record['command'])[:120]!r}")
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return "a process that did not record itself"


def _after_fork_in_child() -> None:
    for lock in list(_HELD):
        lock._forget_in_child()
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
