"""A process-wide setting turned off for blocks of work, restored when the last block of any thread ends.

Some settings faq changes around its work belong to the whole process, not
to a thread: PySpark's recording of call sites (:func:`faq.spark_ui.without_call_sites`)
and numpy's huge-page advice (:func:`faq.huge_pages.plain_pages`).  Blocks
nest and run on several threads at once, so each such setting keeps a count
of the blocks open: the first to open reads the setting and turns it off,
the last to close puts back what the first found.  Between them a user's
work on another thread sees the setting off too -- which each use states.

Examples
--------
>>> setting = {"on": True}
>>> switch = ProcessSwitch(lambda: setting["on"], lambda value: setting.update(on=value), off=False)
>>> with switch.off():
...     with switch.off():
...         inner = setting["on"]
...     after_inner = setting["on"]
>>> inner, after_inner, setting["on"]
(False, False, True)
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["ProcessSwitch"]


class ProcessSwitch:
    """A process-wide setting read by ``read``, written by ``write``, set to ``off`` inside :meth:`off` blocks."""

    def __init__(self, read: Callable[[], Any], write: Callable[[Any], None], *, off: Any) -> None:
        self._read, self._write, self._off = read, write, off
        self._lock = threading.Lock()
        self._open = 0  # blocks open, on any thread
        self._found: Any = None  # the setting the first of them found

    @contextmanager
    def off(self) -> Iterator[None]:
        """The setting off inside the block; restored when the last open block (of any thread) ends."""
        with self._lock:
            if self._open == 0:
                self._found = self._read()
                self._write(self._off)
            self._open += 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                if self._open == 0:
                    self._write(self._found)
