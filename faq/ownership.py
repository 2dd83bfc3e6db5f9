"""Whether a file or directory is ours alone: what faq checks before it trusts what it reads there.

A checksum proves a file is what its writer wrote, not who the writer was:
whoever can write to a directory can replace a file in it and its checksum
too.  So faq trusts a directory it keeps secrets or state in (``faq
serve``'s records, :mod:`faq.served`; a maintained state,
:mod:`faq.incremental.store`) only when no other user can write there:

* :func:`file_problem`: the file itself is a real directory (or regular
  file), is this user's, and is closed to the group and others (to their
  writes, or to everything);
* :func:`parent_problem`: no directory above it lets another user rename
  or replace it -- each belongs to this user or to root, and none is
  writable by everyone without the sticky bit (``/tmp`` has it: there only
  an entry's owner may rename or delete it).

A group-writable parent is accepted (user-private groups make home
directories so); the file itself must not be group-writable.

Examples
--------
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()                 # mode 700, in /tmp (sticky)
>>> file_problem(os.lstat(folder), directory=True), parent_problem(folder)
(None, None)
>>> os.chmod(folder, 0o777)
>>> file_problem(os.lstat(folder), directory=True, closed=WRITE_BY_OTHERS)
'is writable by the group or others (mode 777)'
>>> os.rmdir(folder)
"""

from __future__ import annotations

import os
import stat
from typing import Optional

__all__ = ["OPEN_TO_OTHERS", "WRITE_BY_OTHERS", "file_problem", "parent_problem", "problem_fix"]

#: Permission bits of a file closed to the group and others entirely (a secret's directory).
OPEN_TO_OTHERS = 0o077
#: Permission bits of a file closed to the group's and others' writes (a state directory).
WRITE_BY_OTHERS = 0o022


def file_problem(info: os.stat_result, directory: bool = False, closed: int = OPEN_TO_OTHERS) -> Optional[str]:
    """Why a file (``os.lstat``/``os.fstat``) cannot be trusted, or None: it must be a directory (or regular
    file) of this user's whose ``closed`` permission bits are all clear.

    >>> file_problem(os.lstat("/"))
    'is not a regular file'
    """
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if not (stat.S_ISDIR(info.st_mode) if directory else stat.S_ISREG(info.st_mode)):
        return "is not a directory" if directory else "is not a regular file"
    if info.st_uid != os.getuid():
        return f"belongs to user id {info.st_uid}, not to you ({os.getuid()})"
    if info.st_mode & closed:
        what = "open to others" if closed == OPEN_TO_OTHERS else "writable by the group or others"
        return f"is {what} (mode {info.st_mode & 0o777:o})"
    return None


def parent_problem(path: str) -> Optional[str]:
    """Why a directory above ``path`` (links resolved) would let another user replace it, or None.

    >>> parent_problem("/")
    """
    here = os.path.dirname(os.path.realpath(path))
    while True:
        try:
            problem = _parent_problem(here, os.stat(here))
        except FileNotFoundError:  # to be made (by this user): what is above it decides
            problem = None
        except OSError as exc:
            problem = f"its parent directory {here} cannot be checked ({exc.strerror})"
        if problem or os.path.dirname(here) == here:
            return problem
        here = os.path.dirname(here)


def _parent_problem(here: str, info: os.stat_result) -> Optional[str]:
    if info.st_uid not in (0, os.getuid()):
        return f"its parent directory {here} belongs to user id {info.st_uid}, who could replace it"
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        return f"its parent directory {here} is writable by everyone (mode {info.st_mode & 0o7777:o}, no sticky bit)"
    return None


def problem_fix(path: str, problem: str) -> str:
    """What to do about ``problem`` (:func:`file_problem`, :func:`parent_problem`) with ``path``.

    >>> problem_fix("/st", "is writable by the group or others (mode 777)")
    "run 'chmod go-w /st' (and keep it so), or choose a directory of yours"
    """
    if "writable by the group or others" in problem or "open to others" in problem:
        bits = "go-w" if "writable" in problem else "go-rwx"
        return f"run 'chmod {bits} {path}' (and keep it so), or choose a directory of yours"
    if "belongs to user id" in problem and "parent" not in problem:
        return "choose a directory of yours (what another user made is not used; copy it if you trust it)"
    return ("keep it under directories only you (or root) can change, e.g. in your home directory, or give a "
            "directory everyone may write to the sticky bit (chmod +t)")
