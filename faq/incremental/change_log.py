"""A state's change log: the answer's change of each committed version, kept for a bounded number of versions.

A state directory (:mod:`faq.incremental.store`) keeps its committed
version only.  :func:`keep_changes` makes it keep the *changes* too: from
then on every commit writes the answer's change of the version it makes
(:func:`~faq.incremental.change.change_stream`'s rows: the answer's columns,
``version`` and ``diff``) to ``changes/version-<v>.parquet`` inside the
state directory, and removes the files of versions ``retain`` or more
before it.  The ``faq`` data source reads them
(``spark.read.format("faq").option("changes", "true")``,
``spark.readStream.format("faq")``: :mod:`faq.data_stream`).

When a file is written
----------------------
By the writer (it takes the writer's lock first: a writer whose state moved
on is refused before it writes anything), once the change is known and
*before* the manifest commits the version (:meth:`faq.incremental.durable.Maintained._commit`),
under a temporary name renamed over: a committed version always has its
file, whole.  A process killed in between leaves the file of a version the
state does not hold; a reader never reads beyond the manifest's version,
and the next commit of that version writes its own file over it.  Versions
committed before :func:`keep_changes` (or by a faq without it) have no file:
a read that needs one says which versions are kept.

``changes/keep.json`` holds the retention (``{"retain": N}``); removing the
directory stops the log.

Examples
--------
>>> import tempfile, faq
>>> q = faq.maintain("count() := e(a,b), e(b,c)", e=[(1, 2)], state=tempfile.mkdtemp() + "/q")
>>> keep_changes(q.path, retain=2)
>>> for v in range(1, 5):
...     _ = q.apply(e=[(2, 10 + v, 1)])
>>> kept_versions(q.path)
[3, 4]
>>> read_changes(q.path, 3, 4).to_pydict()
{'version': [3, 4], 'diff': [1, 1]}
>>> q.close()
"""

from __future__ import annotations

import json
import os
import re
import stat
import uuid
from typing import TYPE_CHECKING, Any, Optional

from faq.errors import InvalidArgumentError, StateDirectoryError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CHANGES", "keep_changes", "keeps_changes", "log_change", "kept_versions", "read_changes"]

#: The change log's folder inside a state directory.
CHANGES = "changes"
KEEP = "keep.json"
_FILE = re.compile(r"version-([0-9]{10,18})\.parquet")


def keep_changes(state: str, retain: int = 100) -> None:
    """Make the state in ``state`` keep the changes of its next versions, the last ``retain`` of them.

    Parameters
    ----------
    state : str
        A state directory holding a state.
    retain : int
        Versions whose change is kept (at least 1); older files are removed
        as versions commit.  Calling again changes it.

    Raises
    ------
    InvalidArgumentError
        ``retain`` below 1.
    StateDirectoryError
        No state in ``state`` (a new state is made in an empty directory only:
        make it, then keep its changes).

    Examples
    --------
    >>> import tempfile, faq
    >>> degrees = faq.maintain("deg(a) := e(a,b)", e=[(1, 2)], state=tempfile.mkdtemp() + "/deg")
    >>> faq.keep_changes(degrees.path, retain=10)
    >>> _ = degrees.apply(e=[(1, 3, 1), (2, 3, 1)])
    >>> read_changes(degrees.path, 1, 1).to_pydict()      # spark.read.format("faq").option("changes", "true")
    {'a': [1, 2], 'version': [1, 1], 'diff': [1, 1]}
    >>> degrees.close()
    """
    from faq.incremental.store import Store

    if not isinstance(retain, int) or isinstance(retain, bool) or retain < 1:
        raise InvalidArgumentError("retain", retain, "must be a whole number of versions, 1 or more")
    Store(state).manifest()  # a state is here (else: no saved state here)
    folder = _folder(state, make=True)
    temporary = os.path.join(folder, f".{KEEP}.{uuid.uuid4().hex[:8]}")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"retain": retain}, handle)
    os.replace(temporary, os.path.join(folder, KEEP))


def keeps_changes(path: str) -> Optional[int]:
    """The retention of the state's change log (versions kept), or None when it keeps none."""
    folder = _folder(path)
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, KEEP), encoding="utf-8") as handle:
            retain = json.load(handle).get("retain")
    except (OSError, ValueError, AttributeError):
        return None
    return retain if isinstance(retain, int) and retain >= 1 else None


def log_change(path: str, version: int, change: Any) -> None:
    """Write ``change`` as version ``version``'s file and drop files ``retain`` versions older (writer only).

    Nothing happens unless the state keeps changes (:func:`keep_changes`).
    """
    retain = keeps_changes(path)
    if retain is None:
        return
    import pyarrow.parquet as pq

    from faq.incremental.change import change_stream

    folder = _folder(path)
    final = os.path.join(folder, _name(version))
    temporary = os.path.join(folder, f".{_name(version)}.{uuid.uuid4().hex[:8]}")
    pq.write_table(change_stream(change), temporary)
    os.replace(temporary, final)
    for old in _files(folder):
        if old <= version - retain:
            os.unlink(os.path.join(folder, _name(old)))


def kept_versions(path: str, upto: Optional[int] = None) -> list[int]:
    """The versions whose change the log holds (at most ``upto``: the committed version), ascending."""
    folder = _folder(path)
    versions = [] if folder is None else _files(folder)
    return [v for v in versions if upto is None or v <= upto]


def read_changes(path: str, first: int, last: int, schema: Optional["pa.Schema"] = None) -> "pa.Table":
    """The changes of versions ``first`` to ``last`` (both included) as one table, in version order.

    Raises
    ------
    StateDirectoryError
        A version in the range whose change is not kept (before the log was
        started, removed by the retention, or not committed yet).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _folder(path)
    kept = set(kept_versions(path))
    missing = [v for v in range(first, last + 1) if v not in kept]
    if missing:
        held = sorted(kept)
        what = f"versions {held[0]} to {held[-1]}" if held else "no version"
        raise StateDirectoryError(path, f"the change of version {missing[0]} is not kept (the change log holds "
                                        f"{what}; faq.keep_changes(path, retain=N) keeps the last N)")
    tables = [pq.read_table(os.path.join(folder, _name(v))) for v in range(first, last + 1)]
    if schema is not None:
        tables = [t.select(schema.names).cast(schema) for t in tables]
    if not tables:
        return schema.empty_table() if schema is not None else pa.table({})
    return pa.concat_tables(tables, promote_options="default")


def _name(version: int) -> str:
    return f"version-{version:010d}.parquet"


def _files(folder: str) -> list[int]:
    return sorted(int(m.group(1)) for name in os.listdir(folder) if (m := _FILE.fullmatch(name)))


def _folder(path: str, make: bool = False) -> Optional[str]:
    """``path/changes`` (made if ``make``), a real directory of this user's closed to others, or None."""
    from faq.ownership import WRITE_BY_OTHERS, file_problem

    folder = os.path.join(os.path.abspath(path), CHANGES)
    if make:
        os.makedirs(os.path.dirname(folder), mode=0o755, exist_ok=True)
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    problem = file_problem(info, directory=True, closed=WRITE_BY_OTHERS) if stat.S_ISDIR(info.st_mode) or \
        stat.S_ISLNK(info.st_mode) else "is not a directory"
    if problem:  # a link or another user's folder could lead writes and deletions elsewhere
        raise StateDirectoryError(path, f"its {CHANGES}/ {problem}; faq keeps a change log only in a folder of yours")
    return folder
