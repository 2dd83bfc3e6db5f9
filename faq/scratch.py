"""Scratch files for examples, notebooks and quick experiments.

The loaders read files and the writers write them, so every example of :mod:`faq.io` needs
a file somewhere. :func:`scratch_path` is that somewhere: a fresh path in one temporary
directory of the process, removed when the interpreter exits, optionally holding a text.
"""

from __future__ import annotations

import os
import tempfile
from typing import Optional

__all__ = ["scratch_directory", "scratch_path"]

_root: Optional[tempfile.TemporaryDirectory] = None  # made on first use, removed at exit


def scratch_path(name: str, text: Optional[str] = None) -> str:
    """A fresh path ending in ``name`` in this process's scratch directory, holding ``text`` if given.

    Every call gets a directory of its own, so a name never meets an earlier file of the
    same name; all of them live in one :class:`tempfile.TemporaryDirectory`, removed when
    the interpreter exits. Without ``text`` nothing is written: the path is free for a
    writer such as :func:`~faq.io.write_table`.

    Parameters
    ----------
    name : str
        The file name; its extension is what :func:`~faq.io.read_factor` goes by.
    text : str, optional
        The file's contents, written as UTF-8 exactly as given (``\\r\\n`` stays ``\\r\\n``).

    Returns
    -------
    str
        The path.

    Examples
    --------
    >>> p = scratch_path("g.txt", "1 2\\n2 3\\n")
    >>> os.path.basename(p), open(p).read()
    ('g.txt', '1 2\\n2 3\\n')
    >>> scratch_path("g.txt") != p, os.path.exists(scratch_path("out.csv"))
    (True, False)
    """
    path = os.path.join(tempfile.mkdtemp(dir=scratch_directory()), name)
    if text is not None:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return path


def scratch_directory() -> str:
    """This process's scratch directory (made on first use, removed when the interpreter exits).

    >>> os.path.dirname(os.path.dirname(scratch_path("a.txt"))) == scratch_directory()
    True
    """
    global _root
    if _root is None:
        _root = tempfile.TemporaryDirectory(prefix="faq-scratch-")
    return _root.name
