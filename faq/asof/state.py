"""A maintained as-of join's durable state: a snapshot, and the batches applied since, in a state directory.

``faq.asof_join(..., maintained=True, path=DIR)`` keeps the join in DIR with
the store every maintained object uses (:mod:`faq.incremental.store`: Parquet
files, a manifest replaced atomically as the commit point, one writer).
What is saved:

* the **snapshot** -- the rows the join holds, one relation each, written
  whole: for the view mode the alive rows of ``left`` and ``right``; for the
  locked mode the ``pending`` left rows, the ``right`` rows kept, and the
  sealed rows (``sealed_left`` and the right values they were sealed with,
  ``sealed_right``), with the watermark, the latest time seen and the
  counters in the manifest.  Rows keep their arrival order, which decides
  ties;
* the **batches since** -- each batch's change rows as given
  (``left_changes``, ``right_changes``: the side's columns, ``diff`` and the
  version), one delta file each, and for the locked mode the watermark a
  batch was given (in the manifest).

Reopening (:func:`reopen`) builds the join from the snapshot and applies the
batches since, in version order, as they were applied: the join is a
function of its rows and batches, so it is the join that was saved.  Once
the batches since hold a tenth of the snapshot's rows (or 32 files), a
commit writes a new snapshot instead, so reopening replays a bounded part
of the history and a batch's commit writes only its own rows otherwise.

Examples
--------
>>> import tempfile, pandas as pd
>>> from faq.asof.maintained import MaintainedAsof
>>> trades = pd.DataFrame({"time": [1, 2], "sym": ["a", "a"], "qty": [5, 7]})
>>> quotes = pd.DataFrame({"time": [0], "sym": ["a"], "px": [10.0]})
>>> path = tempfile.mkdtemp() + "/join"
>>> view = MaintainedAsof(trades, quotes, on="time", by="sym", path=path)
>>> change = view.apply(right=pd.DataFrame({"time": [2], "sym": ["a"], "px": [12.0]}), label="q1")
>>> view.close()
>>> again = MaintainedAsof.open(path)          # a locked join: LockedAsof.open; either: faq.asof.open_join
>>> again.to_pandas()["px"].tolist(), again.version, again.labels
([10.0, 12.0], 1, ['q1'])
>>> again.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from faq.events import Progress


if TYPE_CHECKING:
    import pyarrow as pa


#: A maintained as-of join of either mode (:class:`~faq.asof.maintained.MaintainedAsof`, its subclass
#: :class:`~faq.asof.locked.LockedAsof`); named, not imported, as they import this module.
Join = Any

__all__ = ["attach", "save_batch", "reopen", "saved_mode", "plain", "from_plain", "VERSION_COLUMN"]

#: The column of a saved change row naming the version that applied it.
VERSION_COLUMN = "__version"
VIEW_SNAPSHOT = ("left", "right")
LOCKED_SNAPSHOT = ("pending", "right", "sealed_left", "sealed_right")
CHANGES = ("left_changes", "right_changes")


def attach(join: Join, path: str) -> None:
    """Start keeping ``join`` in ``path`` (new or empty): its snapshot at the current version."""
    from faq.incremental.store import Store

    store = Store(path)
    store.create()
    try:
        writes = _snapshot_writes(join)  # first: it sets the snapshot's scalars the manifest holds
        store.save(join.version, _meta(join, join.labels, {}), writes)
    except BaseException:
        store.release()
        raise
    join.record.store = store
    join.watermarks_since_snapshot = {}


def save_batch(join: Join, target: int, labels: list[str], given: list[tuple[Any, Any]],
               watermark: Any) -> None:
    """Commit version ``target``: the batch's change rows as deltas, or (when they grew) a new snapshot."""
    store = join.record.store
    if store is None:
        return
    rows = {name: _change_rows(join, inserts, deletes, target) for name, (inserts, deletes) in zip(CHANGES, given)}
    added = sum(t.num_rows for t in rows.values() if t is not None)
    if _wants_snapshot(store, join, added):
        writes = _snapshot_writes(join)
        store.save(target, _meta(join, labels, {}), writes)
        join.watermarks_since_snapshot = {}
        return
    watermarks = dict(join.watermarks_since_snapshot)
    if watermark is not None:
        watermarks[str(target)] = plain(join.watermark_number(watermark))
    writes = {name: ("delta", table) for name, table in rows.items() if table is not None and table.num_rows}
    store.save(target, _meta(join, labels, watermarks), writes)
    join.watermarks_since_snapshot = watermarks


def reopen(join_class: Any, path: str, progress: Progress = None) -> Join:
    """The join saved in ``path`` at its last committed version: the snapshot, then the batches since.

    ``join_class`` is the class whose :meth:`~faq.asof.maintained.MaintainedAsof.open` was called: it
    must be the saved join's mode (a view is not reopened as a locked join, nor the reverse).
    """
    from faq.errors import StateDirectoryError
    from faq.incremental.store import Store, restoring

    store = Store(path)
    with restoring(store.path):
        meta, tables = store.load()
        store.committed()
        if meta["mode"] != join_class.MODE:
            raise StateDirectoryError(store.path, f"it holds a {meta['mode']} as-of join, not a {join_class.MODE} "
                                                  "one; faq.asof.open_join(path) reopens either")
        options = {name: from_plain(value) for name, value in meta["options"].items()}
        options["suffixes"] = tuple(options["suffixes"])
        snapshot = {name: _one(tables.get(name, [])) for name in meta["snapshot"]}
        join = join_class.from_snapshot(snapshot, options, meta, store, progress)
        _replay(join, tables, meta.get("watermarks", {}))
        join.watermarks_since_snapshot = dict(meta.get("watermarks", {}))
    return join


def _wants_snapshot(store: Any, join: Join, added: int) -> bool:
    """A new snapshot instead of deltas once the batches since hold a tenth of the snapshot's rows (at least
    1,024) or as many files as the store keeps deltas (the change logs' own base is empty: the store's rule
    per relation would rewrite the snapshot every thousand rows)."""
    from faq.incremental.store import MAX_DELTA_FILES, REBASE_FRACTION

    snapshot = sum(store.delta_rows(name)[0] for name in (LOCKED_SNAPSHOT if _locked(join) else VIEW_SNAPSHOT))
    since = [store.delta_rows(name) for name in CHANGES]
    rows, files = sum(r[1] for r in since), max(r[2] for r in since)
    return files + 1 > MAX_DELTA_FILES or rows + added > max(REBASE_FRACTION * snapshot, 1024)


def _locked(join: Join) -> bool:
    return getattr(join, "mode", "view") == "locked"


def saved_mode(path: str) -> str:
    """The mode (``"view"`` or ``"locked"``) of the join saved in ``path`` (its manifest, checked)."""
    from faq.incremental.store import Store

    return str(Store(path).manifest().get("mode", "view"))


# --- helpers -------------------------------------------------------------------------------


def _snapshot_writes(join: Join) -> dict[str, tuple[str, Any]]:
    """Every relation written whole: the snapshot's rows, and empty change logs."""
    if _locked(join):
        join.snapshot_scalars = join.scalars()  # the snapshot's, kept in the manifest until the next one
        left, sealed = join.left.alive_ids(), join.sealed.alive_ids()
        tables = {"pending": join.left.take(left), "right": join.right.take(join.right.alive_ids()),
                  "sealed_left": join.sealed.take(sealed), "sealed_right": join.sealed_right.take(sealed)}
    else:
        tables = {"left": join.left.take(join.left.alive_ids()), "right": join.right.take(join.right.alive_ids())}
    for name, schema in zip(CHANGES, join.schemas):
        tables[name] = _empty_changes(schema)
    return {name: ("base", table) for name, table in tables.items()}


def _meta(join: Join, labels: list[str], watermarks: dict) -> dict[str, Any]:
    locked = _locked(join)
    meta = {"kind": join.KIND, "mode": "locked" if locked else "view", "labels": list(labels),
            "options": {k: plain(v) for k, v in join.options.items()},
            "snapshot": list(LOCKED_SNAPSHOT if locked else VIEW_SNAPSHOT), "watermarks": watermarks}
    if locked:
        meta["scalars"] = join.snapshot_scalars
    return meta


def _change_rows(join: Join, inserts: Any, deletes: Any, version: int) -> Optional["pa.Table"]:
    """A side's batch as saved: inserts (+1) then deletes (-1), with the version."""
    import pyarrow as pa

    from faq.asof.tables import DIFF

    parts = []
    for table, diff in ((inserts, 1), (deletes, -1)):
        if table is not None and table.num_rows:
            n = table.num_rows
            parts.append(table.append_column(DIFF, pa.array(np.full(n, diff, dtype=np.int64)))
                         .append_column(VERSION_COLUMN, pa.array(np.full(n, version, dtype=np.int64))))
    return pa.concat_tables(parts) if parts else None


def _empty_changes(schema: Any) -> "pa.Table":
    import pyarrow as pa

    from faq.asof.tables import DIFF

    fields = [*schema, pa.field(DIFF, pa.int64()), pa.field(VERSION_COLUMN, pa.int64())]
    return pa.schema(fields).empty_table()


def _replay(join: Join, tables: dict[str, list], watermarks: dict) -> None:
    """The saved batches since the snapshot, in version order (each side's rows of a version together)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    changes = {name: _one(tables.get(name, [])) for name in CHANGES}
    versions = sorted({int(v) for t in changes.values() if t is not None and t.num_rows
                       for v in pc.unique(t.column(VERSION_COLUMN)).to_pylist()} | {int(v) for v in watermarks})
    for version in versions:
        sides = []
        for table in changes.values():
            if table is None or not table.num_rows:
                sides.append(None)
                continue
            mine = table.filter(pc.equal(table.column(VERSION_COLUMN), pa.scalar(version, pa.int64())))
            sides.append(mine.drop_columns([VERSION_COLUMN]) if mine.num_rows else None)
        mark = watermarks.get(str(version))
        join._replay(sides[0], sides[1], None if mark is None else from_plain(mark))


def _one(parts: list) -> Optional["pa.Table"]:
    import pyarrow as pa

    if not parts:
        return None
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def plain(value: Any) -> Any:
    """A value as JSON holds it (numpy scalars as Python's, a timedelta or timestamp as nanoseconds)."""
    import datetime

    import pandas as pd

    if isinstance(value, (datetime.timedelta, np.timedelta64, pd.Timedelta)):
        return {"nanoseconds": int(pd.Timedelta(value).value)}
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return {"float": str(value)}
    return list(value) if isinstance(value, tuple) else value


def from_plain(value: Any) -> Any:
    """:func:`plain`'s value back."""
    import pandas as pd

    if isinstance(value, dict):
        return pd.Timedelta(value["nanoseconds"], unit="ns") if "nanoseconds" in value else float(value["float"])
    return value
