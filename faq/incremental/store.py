"""Durable state of a maintained query, motif or fixpoint: Parquet files and a manifest.

A state directory holds ``manifest.json`` and ``data/``.  The manifest names
the version, what the state is (its ``kind`` and description) and, for each
relation, the Parquet files whose rows make it up: a *base* and the *deltas*
since (each batch's merged rows), whose values ⊕-combine per key exactly as
the resident index's overlay does (:mod:`faq.incremental.index`).  Saving
version ``v`` writes only the new files (normally each changed relation's
small delta), flushed to disk, then replaces the manifest atomically
(temporary file, ``fsync``, ``os.replace``, ``fsync`` of the directory).
The manifest is the commit point: a process killed at any moment of a save
leaves the previous version in force, and the files it wrote are swept
away when the state is next opened or saved.  Files are written with
pyarrow on the driver: a batch's write needs no Spark job.

A relation's deltas are folded into a new base file once they are many
(:data:`MAX_DELTA_FILES`) or hold a fraction of the base
(:data:`REBASE_FRACTION`), so reopening reads a bounded number of files.

A state that lives on Spark (a maintained fixpoint on the executors) hands
:meth:`Store.save` a :class:`SparkRows` instead of an Arrow table: Spark
writes that relation's file as a Parquet *directory* (its executors write the
parts; no row reaches the driver), which is then flushed and named by the
manifest like any file, and read back with :meth:`Store.files`.  The path
must then be one directory for the driver (which writes the manifest) and
the executors (which write the data): a local path on one machine
(``local[*]``, ``local-cluster``, a Spark Connect server on the same host) or
a shared mount.

Examples
--------
>>> import tempfile
>>> import pyarrow as pa
>>> from faq.incremental.store import Store
>>> store = Store(tempfile.mkdtemp() + "/state")
>>> store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1, 2], "dst": [2, 3]}))})
>>> store.save(1, {"kind": "example"}, {"edge": ("delta", pa.table({"src": [3], "dst": [1]}))})
>>> meta, tables = Store(store.path).load()
>>> meta["version"], [t.num_rows for t in tables["edge"]]
(1, [2, 1])
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Union

from faq.errors import StateDirectoryError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

FORMAT = "faq-maintained/2"
MANIFEST = "manifest.json"
# A relation's deltas are folded into a new base file beyond this many files ...
MAX_DELTA_FILES = 32
# ... or once their rows reach this fraction of the base's.
REBASE_FRACTION = 0.10


@dataclass(frozen=True)
class SparkRows:
    """A relation's rows that Spark writes (a Parquet directory): the frame and its row count, known already."""

    df: "DataFrame"
    rows: int


class Store:
    """A state directory (see the module notes)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self._manifest: dict[str, Any] | None = None

    # -- reading ------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the directory holds a manifest."""
        return os.path.isfile(os.path.join(self.path, MANIFEST))

    def manifest(self) -> dict[str, Any]:
        """The manifest of the committed version (raises :class:`StateDirectoryError` when there is none)."""
        file = os.path.join(self.path, MANIFEST)
        if not os.path.isfile(file):
            raise StateDirectoryError(self.path, "no saved state here (manifest.json is missing)")
        try:
            with open(file, encoding="utf-8") as f:
                meta = json.load(f)
        except (OSError, ValueError) as exc:
            raise StateDirectoryError(self.path, f"manifest.json cannot be read: {exc}") from exc
        if meta.get("format") != FORMAT:
            raise StateDirectoryError(self.path, f"format {meta.get('format')!r} is not {FORMAT!r}; "
                                                 "it was saved by another version of faq")
        return meta

    def load(self) -> tuple[dict[str, Any], dict[str, list["pa.Table"]]]:
        """The manifest and, per relation, its tables (base first, then deltas in order).

        Files no manifest names (left by an interrupted save) are deleted.
        """
        import pyarrow.parquet as pq

        meta = self.committed()
        tables: dict[str, list] = {}
        for name, entry in meta["relations"].items():
            tables[name] = []
            for file in entry["files"]:
                full = os.path.join(self.path, "data", file)
                if not os.path.isfile(full):
                    raise StateDirectoryError(self.path, f"data file {file} named by the manifest is missing")
                try:
                    tables[name].append(pq.read_table(full))
                except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
                    raise StateDirectoryError(self.path, f"data file {file} cannot be read: {exc}") from exc
        return meta, tables

    def committed(self) -> dict[str, Any]:
        """The committed manifest, made this store's current one; files it does not name are deleted."""
        meta = self.manifest()
        self._manifest = meta
        self._sweep(meta)
        return meta

    def files(self, name: str) -> list[str]:
        """The full paths of relation ``name``'s files (base first) in the committed manifest (none: empty)."""
        entry = (self._manifest or self.manifest()).get("relations", {}).get(name)
        paths = [os.path.join(self.path, "data", file) for file in (entry or {}).get("files", [])]
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            raise StateDirectoryError(self.path, f"data file {os.path.basename(missing[0])} named by the manifest "
                                                 "is missing")
        return paths

    def delta_rows(self, name: str) -> tuple[int, int, int]:
        """(base rows, delta rows, delta files) of relation ``name`` in the committed manifest."""
        entry = (self._manifest or {}).get("relations", {}).get(name)
        if entry is None:
            return 0, 0, 0
        rows = entry["rows"]
        return rows[0], sum(rows[1:]), len(rows) - 1

    def wants_rebase(self, name: str, added: int) -> bool:
        """True when relation ``name`` should get a new base file instead of one more delta of ``added`` rows."""
        base, deltas, files = self.delta_rows(name)
        return files + 1 > MAX_DELTA_FILES or deltas + added > max(REBASE_FRACTION * base, 1024)

    # -- writing ------------------------------------------------------------------

    def save(self, version: int, meta: Mapping[str, Any],
             writes: Mapping[str, tuple[str, Union["pa.Table", SparkRows]]]) -> None:
        """Commit ``version``: ``writes`` maps a relation to ``("base", rows)`` or ``("delta", rows)``.

        ``rows`` is an Arrow table, or :class:`SparkRows` that Spark writes.
        Relations not in ``writes`` keep their files.  Atomic (see the module notes).
        """
        data = os.path.join(self.path, "data")
        os.makedirs(data, exist_ok=True)
        previous = (self._manifest or {}).get("relations", {})
        entries = {name: {"files": list(e["files"]), "rows": list(e["rows"])} for name, e in previous.items()}
        for name, (kind, table) in writes.items():
            file = f"{name}-v{version}-{kind}-{uuid.uuid4().hex[:8]}.parquet"
            rows = _write(table, os.path.join(data, file))
            if kind == "base" or name not in entries:
                entries[name] = {"files": [file], "rows": [rows]}
            else:
                entries[name]["files"].append(file)
                entries[name]["rows"].append(rows)
        manifest = {"format": FORMAT, **meta, "version": version, "relations": entries}
        temporary = os.path.join(self.path, f".{MANIFEST}.{uuid.uuid4().hex[:8]}")
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(self.path, MANIFEST))  # the commit point
        _fsync(self.path)
        self._manifest = manifest
        self._sweep(manifest)  # files of versions before are no longer needed

    def _sweep(self, meta: Mapping[str, Any]) -> None:
        """Delete data files and temporary manifests the committed manifest does not name."""
        named = {file for entry in meta["relations"].values() for file in entry["files"]}
        data = os.path.join(self.path, "data")
        for file in os.listdir(data) if os.path.isdir(data) else ():
            if file not in named:
                full = os.path.join(data, file)
                if os.path.isdir(full):
                    shutil.rmtree(full, ignore_errors=True)
                else:
                    os.remove(full)
        for file in os.listdir(self.path):
            if file.startswith(f".{MANIFEST}."):
                os.remove(os.path.join(self.path, file))


def _write(table: Union["pa.Table", SparkRows], full: str) -> int:
    """Write one relation's rows at ``full`` and flush them to disk; returns the rows written."""
    if isinstance(table, SparkRows):
        table.df.write.parquet(full)  # the executors write the parts (a directory)
        for root, _, names in os.walk(full):
            for name in names:
                _fsync(os.path.join(root, name))
        _fsync(full)
        return table.rows
    import pyarrow.parquet as pq

    pq.write_table(table, full)
    _fsync(full)
    return table.num_rows


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
