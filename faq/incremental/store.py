"""Durable state of a maintained query: Parquet files and a versioned manifest.

A state directory holds ``manifest.json`` and ``data/``.  The manifest names
the version, what the state is (its ``kind`` and description) and, for each
relation, the Parquet files whose rows make it up (a base and the deltas
since, as in :mod:`faq.incremental.state`).  Saving version ``v`` writes only
the files that are new since the last save (normally the batch's small
deltas), then replaces the manifest atomically (write a temporary file,
``os.replace``).  The manifest is the commit point: a save that fails or is
interrupted before it leaves the previous version in force, and the files it
wrote are swept away when the state is next opened or saved.

Examples
--------
>>> import tempfile
>>> from faq.factor import factor_of
>>> from faq.incremental.state import RelationState
>>> from faq.incremental.store import Store
>>> from faq.semirings import INTEGER
>>> edge = factor_of([(1, 2, 1), (2, 3, 1)], ["src", "dst"], "integer")
>>> state = RelationState.of(edge.df, ("src", "dst"), "value", INTEGER)
>>> store = Store(tempfile.mkdtemp() + "/state")
>>> store.save(0, {"kind": "example"}, {"edge": state})
>>> meta, states = Store(store.path).load({"edge": INTEGER})
>>> meta["version"], sorted(map(tuple, states["edge"].merged().collect()))
(0, [(1, 2, 1), (2, 3, 1)])
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from typing import TYPE_CHECKING, Any, Mapping

from faq.incremental.errors import StateDirectoryError
from faq.incremental.state import RelationState

if TYPE_CHECKING:
    from faq.semirings import Semiring

FORMAT = "faq-maintained/1"
MANIFEST = "manifest.json"


class Store:
    """A state directory (see the module notes); remembers which DataFrames it has written."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self._written: list[tuple[Any, str]] = []  # (DataFrame, file name): identity, not equality

    # -- reading ------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the directory holds a manifest."""
        return os.path.isfile(os.path.join(self.path, MANIFEST))

    def manifest(self) -> dict[str, Any]:
        """The manifest of the saved version (raises :class:`StateDirectoryError` when there is none)."""
        file = os.path.join(self.path, MANIFEST)
        if not os.path.isfile(file):
            raise StateDirectoryError(self.path, "no saved state here (manifest.json is missing)")
        try:
            with open(file, encoding="utf-8") as f:
                meta = json.load(f)
        except (OSError, ValueError) as exc:
            raise StateDirectoryError(self.path, f"manifest.json cannot be read: {exc}") from exc
        if meta.get("format") != FORMAT:
            raise StateDirectoryError(self.path, f"format {meta.get('format')!r} is not {FORMAT!r}")
        return meta

    def load(self, semirings: Mapping[str, "Semiring"]) -> tuple[dict[str, Any], dict[str, RelationState]]:
        """The manifest and every relation of the saved version, read and materialised.

        ``semirings`` maps each relation name to the semiring its rows combine in.
        Files no manifest names (left by an interrupted save) are deleted.
        """
        from faq.spark import checkpoint, get_session

        meta = self.manifest()
        spark = get_session()
        states: dict[str, RelationState] = {}
        for name, entry in meta["relations"].items():
            frames = []
            for file in entry["files"]:
                full = os.path.join(self.path, "data", file)
                if not os.path.isdir(full):
                    raise StateDirectoryError(self.path, f"data file {file} named by the manifest is missing")
                df = checkpoint(spark.read.parquet(full))
                frames.append(df)
                self._written.append((df, file))
            base, log = frames[0], tuple(frames[1:])
            states[name] = RelationState(tuple(entry["variables"]), semirings[name], base, entry["rows"][0], log,
                                         tuple(entry["rows"][1:]), tuple(frames))
        self._sweep(meta)
        return meta, states

    # -- writing ------------------------------------------------------------------

    def save(self, version: int, meta: Mapping[str, Any], relations: Mapping[str, RelationState]) -> None:
        """Write what is new in ``relations`` and commit ``version`` (atomically, by the manifest)."""
        os.makedirs(os.path.join(self.path, "data"), exist_ok=True)
        entries = {}
        written = []
        for name, state in relations.items():
            files = []
            for df in (state.base, *state.log):
                file = self._file_of(df)
                if file is None:
                    file = f"{name}-v{version}-{uuid.uuid4().hex[:8]}.parquet"
                    df.write.parquet(os.path.join(self.path, "data", file))
                    written.append((df, file))
                files.append(file)
            entries[name] = {"variables": list(state.variables), "files": files,
                             "rows": [state.base_rows, *state.log_rows]}
        manifest = {"format": FORMAT, **meta, "version": version, "relations": entries}
        temporary = os.path.join(self.path, f".{MANIFEST}.{uuid.uuid4().hex[:8]}")
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(self.path, MANIFEST))  # the commit point
        self._written.extend(written)
        kept = {file for entry in entries.values() for file in entry["files"]}
        self._written = [(df, file) for df, file in self._written if file in kept]
        self._sweep(manifest)  # files of versions before are no longer needed

    def _file_of(self, df: Any) -> str | None:
        for known, file in self._written:
            if known is df:
                return file
        return None

    def _sweep(self, meta: Mapping[str, Any]) -> None:
        """Delete data files and temporary manifests the committed manifest does not name."""
        named = {file for entry in meta["relations"].values() for file in entry["files"]}
        data = os.path.join(self.path, "data")
        for file in os.listdir(data) if os.path.isdir(data) else ():
            if file not in named:
                shutil.rmtree(os.path.join(data, file), ignore_errors=True)
        for file in os.listdir(self.path):
            if file.startswith(f".{MANIFEST}."):
                os.remove(os.path.join(self.path, file))
