"""Durable state of a maintained query, motif or fixpoint: Parquet files and a manifest.

A state directory holds ``manifest.json``, ``data/`` and ``writer.lock``.
The manifest names the version, what the state is (its ``kind`` and
description) and, for each relation, the Parquet files whose rows make it
up, with each file's row count and SHA-256: a *base* and the *deltas* since
(each batch's merged rows), whose values ⊕-combine per key exactly as the
resident index's overlay does (:mod:`faq.incremental.index`).  Saving
version ``v`` writes only the new files (normally each changed relation's
small delta), flushed to disk, then replaces the manifest atomically
(temporary file, ``fsync``, ``os.replace``, ``fsync`` of the directory).
The manifest is the commit point: a process killed at any moment of a save
leaves the previous version in force.  Files are written with pyarrow on the
driver: a batch's write needs no Spark job.

**One writer, any readers.**  Saving takes the writer's lock first
(:class:`~faq.incremental.writer_lock.WriterLock`, held until
:meth:`Store.release`): a second writer is refused with
:class:`~faq.errors.StateLockedError`.  Only the writer, under its lock,
deletes anything: the files of versions before and what an interrupted save
left (files no manifest names).  Reading deletes nothing; a reader that
finds a file gone because the writer moved on in the meantime reads the new
manifest and starts again.  A store opened at version ``v`` that later
becomes the writer checks that the state is still at ``v`` (another writer
may have committed since): otherwise it is refused, never overwritten.

**Nothing outside the directory.**  A state is made only in a new or empty
directory (or one holding only what an interrupted first save left): a
folder of the user's files is refused, not swept.  File names in the
manifest must have the form faq gives them (``NAME-vN-base|delta-HEX.parquet``,
no separators), ``data`` must be a real directory, and no symbolic link
inside the state is followed: a damaged or forged state can make faq refuse
to open it, never read or delete elsewhere.

**Damage is detected, not forgery.**  The manifest carries the SHA-256 of its
own content and of every data file; a mismatch, a field missing or of the
wrong type, is a :class:`~faq.errors.StateDirectoryError` naming it.  But
whoever can write to the directory can forge a state, checksums and all; so
a state is used only when it is **ours** (:mod:`faq.ownership`, checked once
per store): the directory and ``data/`` the running user's and not writable
by the group or others, no directory above it another user's (root aside) or
writable by everyone without the sticky bit
(:class:`~faq.errors.StateUntrustedError` otherwise, with the fix).  Files
are opened ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO cannot block) and must be
regular files of the user's; a manifest is at most :data:`MAX_MANIFEST_BYTES`
and :data:`MAX_MANIFEST_DEPTH` deep.  It records the job that made the
state (:mod:`faq.incremental.job`), which a resume compares.

A relation's deltas are folded into a new base file once they are many
(:data:`MAX_DELTA_FILES`) or hold a fraction of the base
(:data:`REBASE_FRACTION`), so reopening reads a bounded number of files.

A state that lives on Spark (a maintained fixpoint on the executors) hands
:meth:`Store.save` a :class:`SparkRows` instead of an Arrow table: Spark
writes that relation's file as a Parquet *directory* (its executors write the
parts; no row reaches the driver), which is then flushed, hashed (its files
in name order) and named by the manifest like any file, and read back with
:meth:`Store.files`.  The path must then be one directory for the driver
(which writes the manifest) and the executors (which write the data): a
local path on one machine (``local[*]``, ``local-cluster``, a Spark Connect
server on the same host) or a shared mount.

Examples
--------
>>> import tempfile
>>> import pyarrow as pa
>>> from faq.incremental.store import Store
>>> store = Store(tempfile.mkdtemp() + "/state")
>>> store.create()
>>> store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1, 2], "dst": [2, 3]}))})
>>> store.save(1, {"kind": "example"}, {"edge": ("delta", pa.table({"src": [3], "dst": [1]}))})
>>> meta, tables = Store(store.path).load()          # a reader, while the writer holds the lock
>>> meta["version"], [t.num_rows for t in tables["edge"]]
(1, [2, 1])
>>> Store(store.path).save(2, {"kind": "example"}, {})
Traceback (most recent call last):
...
faq.errors.StateLockedError: [STATE_LOCKED] ...
>>> store.release()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Union

from faq.errors import StateDirectoryError, StateUntrustedError
from faq.incremental.job import JOB, recorded_job
from faq.incremental.writer_lock import LOCK_FILE, WriterLock
from faq.ownership import WRITE_BY_OTHERS, file_problem, parent_problem, problem_fix

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

FORMAT = "faq-maintained/3"
MANIFEST = "manifest.json"
DATA = "data"
# A relation's deltas are folded into a new base file beyond this many files ...
MAX_DELTA_FILES = 32
# ... or once their rows reach this fraction of the base's.
REBASE_FRACTION = 0.10
# A manifest beyond this size is not a manifest faq wrote (it is read whole).
MAX_MANIFEST_BYTES = 64 << 20
# ... or nesting deeper than this (faq's nest 6 deep): parsing it could exhaust the stack.
MAX_MANIFEST_DEPTH = 32
# A reader retries this many times when the writer replaces files under it.
READ_ATTEMPTS = 8

# What faq writes, and so all it ever reads or deletes, in a state directory.
_DATA_FILE = re.compile(r"[A-Za-z0-9_]{1,100}-v[0-9]{1,18}-(base|delta)-[0-9a-f]{8}\.parquet")
_TEMP_MANIFEST = re.compile(r"\.manifest\.json\.[0-9a-f]{8}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class SparkRows:
    """A relation's rows that Spark writes (a Parquet directory): the frame and its row count, known already."""

    df: "DataFrame"
    rows: int


class _Vanished(Exception):
    """A data file named by the manifest read a moment ago is gone (the writer may have moved on)."""


class Store:
    """A state directory (see the module notes).

    Parameters
    ----------
    path : str or path-like
        The directory.  Nothing is read or written until asked.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self._manifest: dict[str, Any] | None = None
        self._lock: Optional[WriterLock] = None
        self._trusted = False  # the ownership check passed (made once: module notes)
        self._job: Optional[dict] = None  # the job a state made here records (faq.incremental.job)

    def __repr__(self) -> str:
        return f"Store({self.path!r}, writer={self.is_writer})"

    # -- reading ------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the directory holds a manifest (a regular file, not a link)."""
        try:
            return stat.S_ISREG(os.lstat(os.path.join(self.path, MANIFEST)).st_mode)
        except OSError:
            return False

    def manifest(self) -> dict[str, Any]:
        """The manifest of the committed version, checked (see the module notes).

        Raises
        ------
        StateDirectoryError
            There is none, or it is damaged, forged or of another format.
        """
        self._check_directory()
        file = os.path.join(self.path, MANIFEST)
        try:
            text = _read_bytes(file, MAX_MANIFEST_BYTES)
        except FileNotFoundError:
            raise StateDirectoryError(self.path, "no saved state here (manifest.json is missing)") from None
        except OSError as exc:
            raise StateDirectoryError(self.path, f"manifest.json cannot be read: {_os_reason(exc)}") from exc
        try:
            meta = json.loads(text)
        except RecursionError:
            meta = None  # nested too deep to parse: refused below as too deep
        except ValueError as exc:
            raise StateDirectoryError(self.path, f"manifest.json is not JSON ({exc})") from exc
        if meta is None or _too_deep(meta, MAX_MANIFEST_DEPTH):
            raise StateDirectoryError(self.path, f"manifest.json nests deeper than {MAX_MANIFEST_DEPTH} levels; "
                                                 "it is not a manifest faq wrote")
        _check_manifest(self.path, meta)
        return meta

    def load(self) -> tuple[dict[str, Any], dict[str, list["pa.Table"]]]:
        """The manifest and, per relation, its tables (base first, then deltas in order), checked.

        Deletes nothing.  If the writer replaces files while they are read,
        the new committed version is read instead.
        """
        return self._consistently(self._read_tables)

    def committed(self) -> dict[str, Any]:
        """The committed manifest, made this store's current one (nothing is read but the manifest)."""
        meta = self.manifest()
        self._manifest = meta
        return meta

    def files(self, name: str) -> list[str]:
        """The full paths of relation ``name``'s files (base first) in the current manifest, checked (none: empty).

        For a state Spark reads back (its files are Parquet directories Spark
        wrote): each path is checked against its checksum first.
        """
        meta = self._manifest or self.committed()
        entry = meta["relations"].get(name)
        if entry is None:
            return []
        paths = []
        for file, digest in zip(entry["files"], entry["sha256"]):
            full = self._data_path(file)
            try:
                found = _digest(full)
            except (FileNotFoundError, _Vanished):
                raise StateDirectoryError(self.path, f"data file {file} named by the manifest is missing") from None
            except OSError as exc:  # e.g. a link inside a directory Spark wrote: not followed
                raise StateDirectoryError(self.path, f"data file {file} cannot be read: {_os_reason(exc)}") from exc
            if found != digest:
                raise StateDirectoryError(self.path, f"data file {file} does not match its checksum in the manifest "
                                                     "(damaged or replaced)")
            paths.append(full)
        return paths

    def delta_rows(self, name: str) -> tuple[int, int, int]:
        """(base rows, delta rows, delta files) of relation ``name`` in the current manifest."""
        entry = (self._manifest or {}).get("relations", {}).get(name)
        if entry is None:
            return 0, 0, 0
        rows = entry["rows"]
        return rows[0], sum(rows[1:]), len(rows) - 1

    def wants_rebase(self, name: str, added: int) -> bool:
        """True when relation ``name`` should get a new base file instead of one more delta of ``added`` rows."""
        base, deltas, files = self.delta_rows(name)
        return files + 1 > MAX_DELTA_FILES or deltas + added > max(REBASE_FRACTION * base, 1024)

    # -- becoming the writer ----------------------------------------------------------

    @property
    def is_writer(self) -> bool:
        """True while this store holds the writer's lock."""
        return self._lock is not None and self._lock.held

    def check_new(self) -> None:
        """Refuse, before any work, a path a new state cannot be made in (see :meth:`create`)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self._check_trusted()  # its parents: a new directory under another user's is not ours either
            return
        except OSError as exc:
            raise StateDirectoryError(self.path, f"cannot be used: {_os_reason(exc)}") from exc
        if not stat.S_ISDIR(info.st_mode):
            raise StateDirectoryError(self.path, "is a file, not a directory; choose a new or empty directory")
        self._check_trusted()
        if self.exists():
            raise StateDirectoryError(self.path, "a saved state is here already; reopen it or choose another "
                                                 "directory")
        foreign = self._foreign_entries()
        if foreign:
            raise StateDirectoryError(self.path, f"is not empty and holds no faq state (it holds {foreign[0]!r}"
                                                 f"{' and more' if len(foreign) > 1 else ''}); faq makes a state "
                                                 "only in a new or empty directory, so no file of yours is touched")

    def create(self) -> None:
        """Make a new state here and become its writer: the directory must be new or empty.

        A directory holding only what an interrupted first save left (the
        lock, temporary manifests, ``data/`` with faq's own file names) counts
        as empty; those leftovers are swept under the lock.

        Raises
        ------
        StateDirectoryError
            A state is here already, or the directory holds files of its own.
        """
        self.check_new()
        os.makedirs(self.path, mode=0o755, exist_ok=True)  # never writable by others, whatever the umask
        self._trusted = False  # made now: checked again
        self._check_directory()
        self._lock = WriterLock.acquire(self.path)
        try:
            self.check_new()  # again under the lock: another process may have made a state meanwhile
            data = os.path.join(self.path, DATA)
            if not os.path.lexists(data):
                os.mkdir(data, 0o755)
            self._job = recorded_job()
            self._check_directory()
            self._sweep({"relations": {}})
        except BaseException:
            self.release()
            raise

    def lock(self) -> None:
        """Become the writer of this existing state (done by :meth:`save`); idempotent.

        Sweeps what versions before and interrupted saves left, under the lock.

        Raises
        ------
        StateLockedError
            Another process (or another object of this one) writes it.
        StateDirectoryError
            The state on disk moved on since this store read it.
        """
        if self.is_writer:
            return
        self._check_directory()
        self._lock = WriterLock.acquire(self.path)
        try:
            on_disk = self.manifest()
            if self._manifest is not None and on_disk["checksum"] != self._manifest["checksum"]:
                raise StateDirectoryError(
                    self.path, f"another writer committed version {on_disk['version']} since this state was read at "
                               f"version {self._manifest['version']}; reopen it to go on from there")
            self._manifest = on_disk
            self._sweep(on_disk)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Stop being the writer (the state stays on disk); the next :meth:`save` takes the lock again."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # -- writing ------------------------------------------------------------------

    def save(self, version: int, meta: Mapping[str, Any],
             writes: Mapping[str, tuple[str, Union["pa.Table", SparkRows]]]) -> None:
        """Commit ``version``: ``writes`` maps a relation to ``("base", rows)`` or ``("delta", rows)``.

        ``rows`` is an Arrow table, or :class:`SparkRows` that Spark writes.
        Relations not in ``writes`` keep their files.  Atomic (see the module
        notes); takes the writer's lock first (:meth:`lock`).
        """
        if not self.is_writer:
            self.lock()
        data = os.path.join(self.path, DATA)
        previous = (self._manifest or {}).get("relations", {})
        entries = {name: {key: list(e[key]) for key in ("files", "rows", "sha256")} for name, e in previous.items()}
        for name, (kind, table) in writes.items():
            file = f"{_file_stem(name)}-v{version}-{kind}-{uuid.uuid4().hex[:8]}.parquet"
            rows = _write(table, os.path.join(data, file))
            digest = _digest(os.path.join(data, file))
            if kind == "base" or name not in entries:
                entries[name] = {"files": [file], "rows": [rows], "sha256": [digest]}
            else:
                for key, value in (("files", file), ("rows", rows), ("sha256", digest)):
                    entries[name][key].append(value)
        job = meta.get(JOB, self._job or (self._manifest or {}).get(JOB))  # recorded once, kept by every commit
        extra = {JOB: job} if job is not None else {}
        body = json.loads(json.dumps({"format": FORMAT, **meta, **extra, "version": version, "relations": entries},
                                     default=str))  # what a reader will see, so the checksum is of that
        manifest = {**body, "checksum": _manifest_checksum(body)}
        temporary = os.path.join(self.path, f".{MANIFEST}.{uuid.uuid4().hex[:8]}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(self.path, MANIFEST))  # the commit point
        _fsync(self.path)
        self._manifest = manifest
        self._sweep(manifest)  # files of versions before are no longer needed

    def discard(self) -> None:
        """Delete the state saved here, under the writer's lock, to make a new one (a restart).

        The manifest goes first: an interruption leaves what an interrupted
        first save leaves (:meth:`create` sweeps it).  Only faq's files go.

        Raises
        ------
        StateLockedError
            Another process writes the state: it is not discarded under it.
        """
        self._check_directory()
        self._lock = WriterLock.acquire(self.path)
        try:
            if self.exists():
                _unlink(os.path.join(self.path, MANIFEST))
                _fsync(self.path)
            self._manifest = None
            self._sweep({"relations": {}})
        finally:
            self.release()

    # -- internals ----------------------------------------------------------------

    def _check_directory(self) -> None:
        """The directory must be ours (:meth:`_check_trusted`), ``data`` (if there) a real directory of ours: a
        link could lead reads and deletions elsewhere."""
        self._check_trusted()
        data = os.path.join(self.path, DATA)
        try:
            info = os.lstat(data)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StateDirectoryError(self.path, f"data/ cannot be read: {_os_reason(exc)}") from exc
        if stat.S_ISLNK(info.st_mode):
            raise StateDirectoryError(self.path, "data/ is a symbolic link; faq does not follow links inside a "
                                                 "state directory (a state is never read or changed elsewhere)")
        if not stat.S_ISDIR(info.st_mode):
            raise StateDirectoryError(self.path, "data is not a directory")
        if problem := file_problem(info, directory=True, closed=WRITE_BY_OTHERS):
            raise _untrusted(data, f"its data/ {problem}")

    def _check_trusted(self) -> None:
        """Refuse a directory another user could write to or replace (checked once: a batch pays nothing)."""
        if self._trusted:
            return
        real = os.path.realpath(self.path)
        try:
            info = os.lstat(real)
        except FileNotFoundError:
            info = None  # not made yet: only its parents decide
        if info is not None and not stat.S_ISDIR(info.st_mode):
            return  # not a directory: the caller says so in its own words
        problem = info and file_problem(info, directory=True, closed=WRITE_BY_OTHERS)
        problem = problem and f"the state directory {problem}"
        if problem := problem or parent_problem(real):
            raise _untrusted(self.path, problem)
        self._trusted = os.path.isdir(real)

    def _foreign_entries(self) -> list[str]:
        """What in the directory faq did not write (a new state may be made only where this is empty)."""
        foreign = []
        for entry in sorted(os.listdir(self.path)):
            full = os.path.join(self.path, entry)
            if entry == DATA and os.path.isdir(full) and not os.path.islink(full):
                foreign += [f"{DATA}/{name}" for name in sorted(os.listdir(full)) if not _DATA_FILE.fullmatch(name)]
            elif entry != LOCK_FILE and not _TEMP_MANIFEST.fullmatch(entry):
                foreign.append(entry)
        return foreign

    def _data_path(self, file: str) -> str:
        # the name was checked with the manifest (_check_manifest): a plain name of faq's form
        return os.path.join(self.path, DATA, file)

    def _consistently(self, read: Callable[[dict[str, Any]], Any]) -> tuple[dict[str, Any], Any]:
        """``read(manifest)`` on a committed manifest, again on the new one if the writer moved on meanwhile."""
        for _ in range(READ_ATTEMPTS):
            meta = self.manifest()
            try:
                result = read(meta)
            except _Vanished as gone:
                if self.manifest()["checksum"] != meta["checksum"]:
                    continue  # a new version was committed and the old files swept: read that one
                raise StateDirectoryError(self.path, f"data file {gone} named by the manifest is missing") from None
            self._manifest = meta
            return meta, result
        raise StateDirectoryError(self.path, f"the state changed under {READ_ATTEMPTS} reads in a row; try again")

    def _read_tables(self, meta: Mapping[str, Any]) -> dict[str, list["pa.Table"]]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables: dict[str, list] = {}
        for name, entry in meta["relations"].items():
            tables[name] = []
            for file, digest in zip(entry["files"], entry["sha256"]):
                full = self._data_path(file)
                try:
                    content = _read_bytes(full)
                except FileNotFoundError:
                    raise _Vanished(file) from None
                except OSError as exc:
                    raise StateDirectoryError(self.path, f"data file {file} cannot be read: {_os_reason(exc)}") from exc
                if hashlib.sha256(content).hexdigest() != digest:
                    raise StateDirectoryError(self.path, f"data file {file} does not match its checksum in the "
                                                         "manifest (damaged or replaced)")
                try:
                    table = pq.read_table(pa.BufferReader(content))
                except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
                    raise StateDirectoryError(self.path, f"data file {file} cannot be read: {exc}") from exc
                if table.num_rows != entry["rows"][len(tables[name])]:
                    raise StateDirectoryError(self.path, f"data file {file} holds {table.num_rows} rows, the manifest "
                                                         f"says {entry['rows'][len(tables[name])]}")
                tables[name].append(table)
        return tables

    def _sweep(self, meta: Mapping[str, Any]) -> None:
        """Delete faq's own data files and temporary manifests that ``meta`` does not name (writer only)."""
        assert self.is_writer, "only the writer deletes"
        named = {file for entry in meta["relations"].values() for file in entry["files"]}
        data = os.path.join(self.path, DATA)
        if os.path.isdir(data) and not os.path.islink(data):
            for entry in os.scandir(data):
                if entry.name in named or not _DATA_FILE.fullmatch(entry.name):
                    continue  # named, or not a name faq gives: not faq's to delete
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)  # fd-based: follows no link inside
                else:
                    _unlink(entry.path)
        for entry in os.scandir(self.path):
            if _TEMP_MANIFEST.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False):
                _unlink(entry.path)


# --- the manifest ----------------------------------------------------------------------


def _manifest_checksum(body: Mapping[str, Any]) -> str:
    """SHA-256 of the manifest's content without its checksum (canonical JSON: sorted keys)."""
    text = json.dumps({k: v for k, v in body.items() if k != "checksum"}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_manifest(path: str, meta: Any) -> None:
    """Raise :class:`StateDirectoryError` naming the first thing wrong with a loaded manifest."""

    def wrong(reason: str) -> StateDirectoryError:
        return StateDirectoryError(path, f"manifest.json {reason}")

    if not isinstance(meta, dict):
        raise wrong("is not a JSON object")
    if meta.get("format") != FORMAT:
        raise StateDirectoryError(path, f"format {str(meta.get('format'))[:40]!r} is not {FORMAT!r}; it was saved "
                                        "by another version of faq (or is not a faq state)")
    if not isinstance(meta.get("checksum"), str) or meta["checksum"] != _manifest_checksum(meta):
        raise wrong("does not match its checksum (damaged, or edited by hand)")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise wrong(f"has no valid version (found {str(version)[:40]!r})")
    labels = meta.get("labels")
    if labels is not None and (not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)):
        raise wrong("has labels that are not a list of strings")
    relations = meta.get("relations")
    if not isinstance(relations, dict):
        raise wrong("has no relations")
    for name, entry in relations.items():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), list) for k in ("files", "rows", "sha256")):
            raise wrong(f"has no files, rows and checksums for relation {name[:60]!r}")
        files, rows, digests = entry["files"], entry["rows"], entry["sha256"]
        if not files or not len(files) == len(rows) == len(digests):
            raise wrong(f"lists {len(files)} files, {len(rows)} row counts and {len(digests)} checksums for relation "
                        f"{name[:60]!r}")
        for file in files:
            if not isinstance(file, str) or not _DATA_FILE.fullmatch(file):
                raise wrong(f"names a data file {str(file)[:80]!r} of relation {name[:60]!r} that is not of faq's "
                            "form (NAME-vN-base|delta-HEX.parquet, inside data/); nothing outside the state is read")
        if not all(isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in rows):
            raise wrong(f"has row counts of relation {name[:60]!r} that are not counts")
        if not all(isinstance(d, str) and _SHA256.fullmatch(d) for d in digests):
            raise wrong(f"has checksums of relation {name[:60]!r} that are not SHA-256 digests")


def _too_deep(value: Any, limit: int) -> bool:
    """True when ``value`` (parsed JSON) nests more than ``limit`` lists or objects deep."""
    level = [value]
    for _ in range(limit):
        level = [v for item in level if isinstance(item, (list, dict))
                 for v in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return any(isinstance(item, (list, dict)) for item in level)


def _untrusted(path: str, problem: str) -> StateUntrustedError:
    return StateUntrustedError(path=path, reason=problem, fix=problem_fix(path, problem))


def _file_stem(name: str) -> str:
    """A relation's name as it may appear in a file name (letters, digits, ``_``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)[:100] or "relation"


# --- files ---------------------------------------------------------------------------


@contextlib.contextmanager
def _regular_file(path: str, limit: Optional[int] = None) -> Iterator[Any]:
    """A regular file of ours opened for reading without following a link or waiting on a FIFO
    (``O_NOFOLLOW | O_NONBLOCK``), at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if problem := file_problem(info, closed=WRITE_BY_OTHERS):
            raise OSError(f"{os.path.basename(path)} {problem}")
        if limit is not None and info.st_size > limit:
            raise OSError(f"{os.path.basename(path)} is larger than {limit} bytes")
        yield f


def _read_bytes(path: str, limit: Optional[int] = None) -> bytes:
    """A regular file's content (:func:`_regular_file`)."""
    with _regular_file(path, limit) as f:
        content = f.read() if limit is None else f.read(limit + 1)  # it may have grown since its size was read
    if limit is not None and len(content) > limit:
        raise OSError(f"{os.path.basename(path)} is larger than {limit} bytes")
    return content


def _chunks(path: str) -> Iterator[bytes]:
    with _regular_file(path) as f:
        while chunk := f.read(1 << 22):
            yield chunk


def _digest(path: str) -> str:
    """SHA-256 of a data file, or of a Parquet directory: its files' names and contents in name order."""
    digest = hashlib.sha256()
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise _Vanished(os.path.basename(path)) from None
    if stat.S_ISDIR(mode):
        for root, dirs, names in os.walk(path):  # os.walk does not descend into linked directories
            dirs.sort()
            for name in sorted(names):
                full = os.path.join(root, name)
                digest.update(os.path.relpath(full, path).encode() + b"\0")
                for chunk in _chunks(full):
                    digest.update(chunk)
    else:
        for chunk in _chunks(path):
            digest.update(chunk)
    return digest.hexdigest()


def _write(table: Union["pa.Table", SparkRows], full: str) -> int:
    """Write one relation's rows at ``full`` (a new name) and flush them to disk; returns the rows written."""
    if isinstance(table, SparkRows):
        table.df.write.parquet(full)  # the executors write the parts (a directory)
        for root, _, names in os.walk(full):
            for name in names:
                _fsync(os.path.join(root, name))
        _fsync(full)
        return table.rows
    import pyarrow.parquet as pq

    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    return table.num_rows


def _unlink(path: str) -> None:
    try:
        os.unlink(path)  # a link is removed itself, never what it points to
    except FileNotFoundError:
        pass


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _fsync(path: str) -> None:
    """Flush a file (or a directory entry) to disk; best effort where the platform refuses."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - e.g. directories on some file systems
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def restoring(path: str) -> Iterator[None]:
    """Turn a missing or ill-typed manifest field, met while a state is rebuilt from it, into a clear error.

    The manifest's checksum catches damage; a manifest forged with a valid
    checksum but missing fields would otherwise surface as a raw
    ``KeyError``, ``TypeError`` or ``ValueError`` from deep in the restore.

    >>> with restoring("/some/state"):
    ...     {}["columns"]
    Traceback (most recent call last):
    ...
    faq.errors.StateDirectoryError: [STATE_DIRECTORY] /some/state: cannot be restored from its manifest: ...
    """
    from faq.errors import FAQError

    try:
        yield
    except FAQError:  # faq's own errors say what they mean already
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"{type(exc).__name__}: {str(exc)[:120]}"
        raise StateDirectoryError(path, f"cannot be restored from its manifest: a field is missing or malformed "
                                        f"({what})") from exc
