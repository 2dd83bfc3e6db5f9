"""An as-of join kept current as a view: inserts and deletes on either side, at any times, late rows included.

:class:`MaintainedAsof` holds both sides (:class:`~faq.asof.side.Side`: rows
append-only, a sorted base and a small sorted overlay, deleted rows marked
dead) and, per left row, the right row it matches now.  After any batch the
answer equals a recomputation of the one-shot join over the alive rows
(:func:`faq.asof.tables.asof_tables`, rows in arrival order), and the batch's
change says which joined rows were retracted (``diff = -1``) and added
(``diff = +1``).

How a batch runs (``mode="view"``, Feldera's and RisingWave's incremental
as-of join):

1. the deletions of either side are matched to alive rows (equal in every
   column; a deletion that matches none is refused before anything changes);
2. the right side's changes are applied; for each changed right row (key
   ``k``, time ``t``) the left rows whose match can have changed are those of
   key ``k`` between the alive right times just before and just after ``t``
   -- for every direction and tolerance, a left row's match only depends on
   its neighbours in time;
3. those left rows are matched again; where the match differs, the old
   joined row is retracted and the new one added;
4. deleted left rows retract their joined row; inserted ones are matched and
   added.

The work of a batch follows what it touches: a search per changed row and
per left row in the windows, not the history.  Whole-table passes happen
only when the overlay outgrows :data:`~faq.asof.side.OVERLAY_MAX_ROWS` (the
base is rebuilt then).

``mode="locked"`` (differentiate, join, integrate: rows fixed when the
watermark passes) is :mod:`faq.asof.locked`.

Both modes are maintained objects like every other
(:class:`~faq.incremental.durable.Maintained`): ``apply(..., version=,
label=, before_commit=)`` makes one version, ``path=`` keeps the state in a
directory (:mod:`faq.asof.state`: a snapshot and the batches since;
:func:`faq.asof.open_join` reopens it), and :meth:`~MaintainedAsof.stream`
applies each micro-batch of a Structured Streaming source, exactly once,
whose ``side`` column (``factor_column="side"``) says which side a row
changes.  A batch that fails before it commits (a sink that raises, a full
disk) is taken back.  Not built: Spark inputs beyond collecting them once.

Examples
--------
>>> import pandas as pd
>>> trades = pd.DataFrame({"time": [1, 2], "sym": ["a", "a"], "qty": [5, 7]})
>>> quotes = pd.DataFrame({"time": [0, 3], "sym": ["a", "a"], "px": [10.0, 11.0]})
>>> view = MaintainedAsof(trades, quotes, on="time", by="sym")
>>> view.to_pandas()["px"].tolist()
[10.0, 10.0]
>>> late = pd.DataFrame({"time": [2], "sym": ["a"], "px": [12.0], "diff": [1]})   # a late quote at t=2
>>> change = view.apply(right=late)                                              # the trade at 2 is repriced
>>> list(zip(*(change.table().column(c).to_pylist() for c in ("time", "px", "diff"))))
[(2, 10.0, -1), (2, 12.0, 1)]
>>> view.to_pandas()["px"].tolist(), view.version
([10.0, 12.0], 1)
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from faq.asof.side import Side
from faq.asof.tables import (
    DIFF,
    SUFFIXES,
    Keys,
    check_compatible,
    check_arguments,
    joined_rows,
    key_list,
    read_table,
    result_names,
    time_numbers,
    tolerance_number,
)
from faq.errors import InvalidArgumentError, InvalidDeltaError, TimeTypeError
from faq.events import Progress
from faq.incremental.change import BatchEvent
from faq.incremental.durable import Maintained, Versions
from faq.scope import Owner, Scope
from faq.results import Explanation
from faq.spark_ui import described

__all__ = ["MaintainedAsof", "AsofChange", "DIFF", "MODES", "SIDES"]  # DIFF: faq.asof.tables

MODES = ("view", "locked")  # "locked": faq.asof.locked.LockedAsof
SIDES = ("left", "right")


class MaintainedAsof(Maintained, Owner):
    """An as-of join kept current under batches of inserts and deletes on both sides (module notes).

    Parameters
    ----------
    left, right : pandas.DataFrame, pyarrow.Table or path
        The initial rows of each side (Spark DataFrames are collected once).
    on, by, direction, allow_exact_matches, tolerance, how, suffixes, right_time
        As :func:`faq.asof_join`.  The time must be a number, a date or a
        timestamp (a string's order is not kept as rows arrive).
    mode : {"view"}
        ``"view"``: after every batch the answer is the as-of join of the
        rows present.
    progress : callable, optional
        Receives a :class:`~faq.incremental.change.BatchEvent` per batch.
    path : str, optional
        Keep the state in this new or empty directory (:mod:`faq.asof.state`).

    Attributes
    ----------
    version : int
        Batches applied.
    columns : list of str
        The answer's columns.
    """

    KIND, WHAT = "asof", "a maintained as-of join"
    #: The mode a saved state of this class has (:meth:`open` reopens that one).
    MODE = "view"

    def __init__(self, left: Any, right: Any, on: str = "time", by: Keys = None, *, direction: str = "backward",
                 allow_exact_matches: bool = True, tolerance: Any = None, how: str = "left",
                 suffixes: tuple[Optional[str], Optional[str]] = SUFFIXES, right_time: Optional[str] = None,
                 mode: str = "view", progress: Progress = None, path: Optional[str] = None,
                 _restored: Optional[tuple[Any, dict]] = None) -> None:
        if mode != "view":
            raise InvalidArgumentError(argument="mode", value=mode, reason="MaintainedAsof is the view mode; "
                                       "mode='locked' is faq.asof.locked.LockedAsof (faq.asof_join picks it)")
        if path is not None and _restored is None:
            from faq.incremental.store import Store

            Store(path).check_new()  # a path that cannot hold the state is refused before any work
        self.progress = progress
        self.record = Versions()
        self.watermarks_since_snapshot: dict[str, Any] = {}  # the locked mode's, saved (faq.asof.state)
        self.scope = Scope()  # the join lives on the driver: nothing on Spark to release
        self.options = {"on": on, "by": key_list(by), "direction": direction,
                        "allow_exact_matches": bool(allow_exact_matches), "tolerance": tolerance, "how": how,
                        "suffixes": list(suffixes), "right_time": right_time}
        left_table, right_table = read_table(left), read_table(right)  # Spark DataFrames collected once
        self.on, self.keys = on, key_list(by)
        check_arguments(left_table.column_names, right_table.column_names, on, self.keys, direction, how)
        for c in [*self.keys, on]:
            check_compatible(c, "key" if c != on else "time", left_table.schema.field(c).type,
                              right_table.schema.field(c).type)
        self.direction, self.exact, self.how, self.right_time = direction, bool(allow_exact_matches), how, right_time
        self.names = result_names(left_table.column_names, right_table.column_names, on, self.keys, suffixes,
                                  right_time)
        self.schemas = (left_table.schema, right_table.schema)
        left_times, right_times, unit = time_numbers(left_table.column(on), right_table.column(on), on)
        if unit is None and not _numeric(left_table.schema.field(on).type):
            raise TimeTypeError(source="asof_join(maintained=True)", column=on,
                                found=f"{left_table.schema.field(on).type} (a maintained join needs numbers, dates "
                                      "or timestamps)")
        self.tolerance = tolerance_number(tolerance, unit, on)
        self._index: dict[tuple, int] = {}
        left_codes, right_codes = self._first_codes(left_table, right_table)
        self.left = Side(left_table, left_codes, left_times)
        self.right = Side(right_table, right_codes, right_times)
        self.matched = np.full(len(self.left.codes), -1, dtype=np.int64)  # as much room as the left side
        self.matched[:len(left_codes)] = self.right.matches(left_codes, left_times, direction, self.exact,
                                                            self.tolerance)
        self.columns = [*self.names[0], *self.names[2], *([right_time] if right_time else [])]
        self._attach_or_restore(path, _restored)

    def _attach_or_restore(self, path: Optional[str], restored: Optional[tuple[Any, dict]]) -> None:
        """A reopened state's store, version and labels; or, with ``path``, a new state saved at version 0."""
        from faq.asof.state import attach

        if restored is not None:
            store, meta = restored
            self.record.store, self.record.version = store, int(meta["version"])
            self.record.labels = list(meta.get("labels", []))
        elif path is not None:
            attach(self, path)

    def _versions(self) -> Versions:
        return self.record

    @classmethod
    def open(cls, path: str, *, progress: Progress = None) -> "MaintainedAsof":
        """Reopen a join of this class's mode saved with ``state=`` at its last committed version (no Spark);
        :func:`faq.asof.open_join` reopens either mode.

        Raises
        ------
        StateDirectoryError
            No saved state in ``path``, one of another kind, or a join of the other mode.
        """
        from faq.asof.state import reopen

        cls._saved_manifest(path)
        return reopen(cls, path, progress)

    @classmethod
    def from_snapshot(cls, snapshot: dict, options: dict, meta: dict, store: Any, progress: Progress) -> "MaintainedAsof":
        """The join a saved snapshot holds (:mod:`faq.asof.state` replays the batches since)."""
        options = {k: v for k, v in options.items() if k != "lateness"}
        return cls(snapshot["left"], snapshot["right"], progress=progress, _restored=(store, meta), **options)

    def close(self) -> None:
        """Release the writer's lock of a durable state (the join lives on the driver: nothing on Spark)."""
        self._release_store()
        super().close()

    # -- what a batch changes (the stream's view) ---------------------------------------------

    @property
    def delta_names(self) -> list[str]:
        """What a batch changes: the sides ``left`` and ``right``."""
        return list(SIDES)

    def delta_columns(self, name: str) -> tuple[list[str], list[str]]:
        """(the columns of a side's change rows that must not be null, those they must have).

        Keys and times may be null (such a row matches nothing); ``diff`` may not.
        """
        schema = self.schemas[SIDES.index(name)]
        return [DIFF], list(schema.names)

    # -- the answer -------------------------------------------------------------------------------

    def table(self) -> Any:
        """The answer now: alive left rows in arrival order with their matches (Arrow)."""
        ids = self.left.alive_ids()
        matched = self.matched[ids]
        if self.how == "inner":
            ids, matched = ids[matched >= 0], matched[matched >= 0]
        return joined_rows(self.left.take(ids), self.right.table(), matched, self.names, self.on, self.right_time)

    def to_pandas(self) -> Any:
        return self.table().to_pandas()

    def explain(self) -> Explanation:
        """What is kept and how a batch runs, one line each."""
        return Explanation(f"maintained as-of join ({self.direction}, view) on {self.on}" + (
            f" by {', '.join(self.keys)}" if self.keys else ""), (
            f"left: {len(self.left.alive_ids()):,} rows alive ({len(self.left.overlay):,} in the overlay); "
            f"right: {len(self.right.alive_ids()):,} ({len(self.right.overlay):,} in the overlay)",
            "a batch: deletions matched to alive rows; each changed right row re-matches the left rows between "
            "its neighbours in time; changed matches retracted and added",
            f"version {self.version}; " + ("in memory only" if self.path is None else f"saved in {self.path}"),
        ))

    # -- a batch ------------------------------------------------------------------------------------

    @described("as-of view")
    def apply(self, changes: Any = None, *, left: Any = None, right: Any = None, version: Optional[int] = None,
              label: Optional[str] = None, before_commit: Any = None) -> "AsofChange":
        """Apply change rows of either side (its columns and ``diff``: +1 insert, -1 delete; +1 when absent).

        Parameters
        ----------
        changes : mapping, optional
            ``{"left": rows, "right": rows}`` (as a stream gives them), instead of ``left=`` and ``right=``.
        left, right : pandas, Arrow, Spark DataFrame or path, optional
            Change rows of each side.
        version, label, before_commit
            As for every maintained object (:class:`~faq.incremental.durable.Maintained`).

        Returns
        -------
        AsofChange
            The change of the answer: joined rows with ``diff``.

        Raises
        ------
        InvalidDeltaError
            Rows with other columns, or a deletion of a row that is not
            there; nothing changes then.
        InvalidBatchError
            A column that does not fit the side's type (a string or a float
            with a fraction into an int column, NaN in the time column), or
            a ``diff`` other than ±1 (:mod:`faq.incremental.batch_check`).
        """
        return self._apply(changes, left, right, None, version, label, before_commit)

    def _apply(self, changes: Any, left: Any, right: Any, watermark: Any, version: Optional[int],
               label: Optional[str], before_commit: Any) -> "AsofChange":
        """One batch: the change, then the commit (the batch taken back if the commit fails)."""
        from faq.asof.state import save_batch

        started = time.perf_counter()
        left, right = _sides(changes, left, right)
        target = self._next_version(version)
        given = [self._split(rows, self.schemas[i], SIDES[i]) for i, rows in enumerate((left, right))]
        undo: dict[str, Any] = {}
        rows = self._batch(*given[0], *given[1], undo, watermark)
        change = AsofChange(rows, target, time.perf_counter() - started)
        try:
            self._commit(target, label, change=change, before_commit=before_commit,
                         save=lambda labels: save_batch(self, target, labels, given, watermark))
        except BaseException:
            self._undo(undo)
            raise
        change.seconds = time.perf_counter() - started
        self._emit(BatchEvent("done", target, f"{_count(given[0])} left and {_count(given[1])} right change row(s)",
                              len(change), change.seconds, label or ""))
        return change

    def _replay(self, left: Any, right: Any, watermark: Any) -> None:
        """A saved batch applied again on reopening (no commit, no version)."""
        given = [self._split(rows, self.schemas[i], SIDES[i]) for i, rows in enumerate((left, right))]
        self._batch(*given[0], *given[1], {}, watermark)

    def _batch(self, left_ins: Any, left_del: Any, right_ins: Any, right_del: Any, undo: dict,
               watermark: Any) -> Any:
        """The batch's changes to the sides and matches (``undo`` records how to take them back); its rows."""
        dead_left = self._find(self.left, left_del, "left")
        dead_right = self._find(self.right, right_del, "right")
        out: list[tuple[np.ndarray, np.ndarray, int]] = []  # (left ids, right ids, diff)
        # 1. right changes, then the left rows whose neighbours in time changed
        changed_codes, changed_times = [], []
        undo.update(killed_left=dead_left, killed_right=dead_right, matched=[])
        if len(dead_right):
            changed_codes.append(self.right.codes[dead_right])
            changed_times.append(self.right.times[dead_right])
            self.right.kill(dead_right)
        if right_ins is not None and right_ins.num_rows:
            codes, times = self._codes(right_ins), self._times(right_ins, self.right)
            undo["inserted_right"] = self.right.insert(right_ins, codes, times)
            changed_codes.append(codes)
            changed_times.append(times)
        if len(dead_left):
            keep = self.matched[dead_left]
            out.append((dead_left, keep, -1))
            self.left.kill(dead_left)
        if changed_codes:
            codes, times = np.concatenate(changed_codes), np.concatenate(changed_times)
            usable = codes >= 0
            codes, times = codes[usable], times[usable]
            low = self._neighbour(codes, times, "backward")
            high = self._neighbour(codes, times, "forward")
            touched = self.left.in_window(codes, low, high)
            if len(touched):
                new = self.right.matches(self.left.codes[touched], self.left.times[touched], self.direction,
                                         self.exact, self.tolerance)
                moved = np.flatnonzero(new != self.matched[touched])
                ids = touched[moved]
                out.append((ids, self.matched[ids].copy(), -1))
                out.append((ids, new[moved], 1))
                undo["matched"].append((ids, self.matched[ids].copy()))
                self.matched[ids] = new[moved]
        # 2. left insertions, matched against the right side as it is now
        if left_ins is not None and left_ins.num_rows:
            codes, times = self._codes(left_ins), self._times(left_ins, self.left)
            ids = self.left.insert(left_ins, codes, times)
            undo["inserted_left"] = ids
            self._grow(self.left.rows)
            self.matched[ids] = self.right.matches(codes, times, self.direction, self.exact, self.tolerance)
            out.append((ids, self.matched[ids], 1))
        self.left.compact_if_needed()
        self.right.compact_if_needed()
        return self._rows(out)

    def _undo(self, undo: dict) -> None:
        """Take back a batch that did not commit: rows it killed alive again, rows it added dead, matches back."""
        for ids, old in reversed(undo.get("matched", [])):
            self.matched[ids] = old
        for side, name in ((self.left, "left"), (self.right, "right")):
            inserted = undo.get(f"inserted_{name}")
            if inserted is not None and len(inserted):
                side.kill(inserted)
            killed = undo.get(f"killed_{name}")
            if killed is not None and len(killed):
                side.alive[killed] = True
            side.compact()  # the base rebuilt from the alive rows as they were

    # -- helpers ------------------------------------------------------------------------------------

    def _rows(self, parts: list[tuple[np.ndarray, np.ndarray, int]]) -> Any:
        if self.how == "inner":
            parts = [(l[r >= 0], r[r >= 0], d) for l, r, d in parts]
        left_ids = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        right_ids = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        diffs = np.concatenate([np.full(len(p[0]), p[2], dtype=np.int64) for p in parts]) if parts else \
            np.zeros(0, dtype=np.int64)
        positions = np.where(right_ids >= 0, np.arange(len(right_ids)), -1)  # the right rows, taken in order
        rows = joined_rows(self.left.take(left_ids), self.right.take(right_ids), positions, self.names, self.on,
                           self.right_time)
        import pyarrow as pa

        return rows.append_column(DIFF, pa.array(diffs))

    def _neighbour(self, codes: np.ndarray, times: np.ndarray, direction: str) -> np.ndarray:
        """The alive right time just before (backward) or after (forward) each time, strictly; where there is
        none, the smallest (largest) value of the times' type: the window reaches the end of the key."""
        found = self.right.matches(codes, times, direction, exact=False)
        dtype = self.right.times.dtype
        limits = np.iinfo(dtype) if dtype.kind in "iu" else None
        none = (limits.min if direction == "backward" else limits.max) if limits is not None else (
            -np.inf if direction == "backward" else np.inf)
        return np.where(found >= 0, self.right.times[np.maximum(found, 0)], np.array(none, dtype=dtype))

    def _first_codes(self, left: Any, right: Any) -> tuple[np.ndarray, np.ndarray]:
        """The initial rows' key codes (Arrow's hash, no Python per row), and the key -> code index from them."""
        import pyarrow as pa

        from faq.asof.tables import key_codes

        left_codes, right_codes, n_codes = key_codes([left.column(k) for k in self.keys],
                                                     [right.column(k) for k in self.keys], left.num_rows,
                                                     right.num_rows)
        if self.keys:
            for table, codes in ((left, left_codes), (right, right_codes)):
                first = np.full(n_codes, -1, dtype=np.int64)
                usable = np.flatnonzero(codes >= 0)
                first[codes[usable]] = usable  # a row of each code (the last one)
                have = np.flatnonzero(first >= 0)
                rows = table.select(self.keys).take(pa.array(first[have]))
                for code, key in zip(have.tolist(), zip(*(rows.column(k).to_pylist() for k in self.keys))):
                    self._index.setdefault(key, int(code))
        for table, codes in ((left, left_codes), (right, right_codes)):
            codes[np.asarray(table.column(self.on).is_null().to_numpy(zero_copy_only=False), dtype=bool)] = -1
        return left_codes, right_codes

    def _codes(self, table: Any) -> np.ndarray:
        """Each row's key code (new keys get new codes; a null in the key or the time: -1)."""
        n = table.num_rows
        if self.keys:
            columns = [table.column(k).to_pylist() for k in self.keys]
            index = self._index
            fresh = max(index.values(), default=-1) + 1 if index else 0

            def code(key: tuple) -> int:
                nonlocal fresh
                if None in key:
                    return -1
                found = index.get(key)
                if found is None:
                    found = index[key] = fresh
                    fresh += 1
                return found

            codes = np.fromiter((code(key) for key in zip(*columns)), dtype=np.int64, count=n)
        else:
            codes = np.zeros(n, dtype=np.int64)
        nulls = np.asarray(table.column(self.on).is_null().to_numpy(zero_copy_only=False), dtype=bool)
        codes[nulls] = -1
        return codes

    def _times(self, table: Any, side: Side) -> np.ndarray:
        """The rows' times as ``side`` holds them (its type and unit; ``table`` has its schema)."""
        import pyarrow as pa

        column = table.column(self.on)
        times, _, _ = time_numbers(column, pa.chunked_array([], type=column.type), self.on)
        return times.astype(side.times.dtype, copy=False)

    def _split(self, rows: Any, schema: Any, side: str) -> tuple[Any, Any]:
        """Change rows as (insertions, deletions), each an Arrow table of the side's columns.

        A column the side lacks is refused unless it is null in every row (a
        stream's row of this side carries the other side's columns empty).
        """
        if rows is None:
            return None, None
        import pyarrow as pa

        table = read_table(rows)
        missing = [c for c in schema.names if c not in table.column_names]
        # a column of the other side, null throughout, is a stream's row of this side: left out
        extra = [c for c in table.column_names if c not in schema.names and c != DIFF
                 and table.column(c).null_count < table.num_rows]
        if missing or extra:
            raise InvalidDeltaError(side, f"change rows of the {side} side need its columns {schema.names} and "
                                          f"'{DIFF}'; missing {missing}, unknown {extra}", known=list(schema.names))
        from faq.incremental import batch_check

        # each column as the side holds it (a float time into an int one only if whole), diff +1 / -1
        spec = {**batch_check.schema_spec(schema, ordered=[self.on]), DIFF: batch_check.SIGN}
        table = batch_check.check_batch(table, spec, relation=side, target=self.WHAT)
        diff = table.column(DIFF) if DIFF in table.column_names else pa.chunked_array([np.ones(table.num_rows,
                                                                                              dtype=np.int64)])
        values = np.asarray(diff.to_numpy(zero_copy_only=False))
        body = table.select(schema.names).cast(schema)
        inserts = body.filter(pa.array(values == 1))
        deletes = body.filter(pa.array(values == -1))
        return inserts, deletes

    def _find(self, side: Side, deletes: Any, name: str) -> np.ndarray:
        """The alive rows the deletions name (equal in every column), one each; refused if one is missing."""
        if deletes is None or not deletes.num_rows:
            return np.zeros(0, dtype=np.int64)
        codes, times = self._codes(deletes), self._times(deletes, side)
        wanted = deletes.to_pylist()
        taken: set[int] = set()
        found = np.empty(len(wanted), dtype=np.int64)
        for i, row in enumerate(wanted):
            candidates = [int(c) for c in side.at(int(codes[i]), times[i]) if int(c) not in taken] \
                if codes[i] >= 0 else [int(c) for c in side.alive_ids()]  # a null key: compare every row
            rows = side.take(np.array(candidates, dtype=np.int64)).to_pylist() if candidates else []
            hit = next((c for c, r in zip(reversed(candidates), reversed(rows)) if r == row and c not in taken), None)
            if hit is None:
                raise InvalidDeltaError(name, f"a deletion of the {name} side matches no row present: {row}",
                                        known=list(row))
            taken.add(hit)
            found[i] = hit
        return found

    def _grow(self, n: int) -> None:
        if len(self.matched) < n:
            more = np.full(max(n, 2 * len(self.matched)) - len(self.matched), -1, dtype=np.int64)
            self.matched = np.concatenate([self.matched, more])


class AsofChange:
    """What a batch changed in the answer: the retracted (``diff = -1``) and added (+1) joined rows."""

    def __init__(self, rows: Any, version: int, seconds: float) -> None:
        self.rows, self.version, self.seconds = rows, version, seconds

    def __len__(self) -> int:
        return self.rows.num_rows

    def table(self) -> Any:
        return self.rows

    def to_pandas(self) -> Any:
        return self.rows.to_pandas()

    def __repr__(self) -> str:
        return f"AsofChange(version={self.version}, rows={len(self)}, seconds={self.seconds:.4f})"


def _sides(changes: Any, left: Any, right: Any) -> tuple[Any, Any]:
    """A batch's rows per side, given as ``{"left": ..., "right": ...}`` or as the two keywords."""
    if changes is None:
        return left, right
    from collections.abc import Mapping

    if not isinstance(changes, Mapping) or left is not None or right is not None:
        raise InvalidArgumentError(argument="changes", value=type(changes).__name__,
                                   reason="give {'left': rows, 'right': rows}, or left= and right=, not both")
    unknown = [name for name in changes if name not in SIDES]
    if unknown:
        raise InvalidDeltaError(str(unknown[0]), f"an as-of join has the sides {list(SIDES)}, not {unknown[0]!r}",
                                known=list(SIDES))
    return changes.get("left"), changes.get("right")


def _count(given: tuple[Any, Any]) -> int:
    return sum(t.num_rows for t in given if t is not None)


def _numeric(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
