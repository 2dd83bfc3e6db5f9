"""The as-of join in locked mode: differentiate the left side, join, integrate -- rows fixed as time passes.

``faq.asof_join(..., maintained=True, mode="locked")`` is the calculus of
:mod:`faq.incremental.calculus` kept current, with Apache Flink's event-time
temporal join semantics (``FOR SYSTEM_TIME AS OF``):

* a left row waits (it is *pending*) until the **watermark** passes its time;
  it is then joined with the right side as it stands at that moment and
  emitted (``diff = +1``) -- *sealed*;
* later right changes never revise a sealed row: that is the point (an order
  is locked to the price at its time; a late quote reprices nothing that was
  sealed, where the view mode, :mod:`faq.asof.maintained`, would);
* the watermark is given to :meth:`LockedAsof.apply` (``watermark=``) or
  follows the data: the largest time seen on either side minus ``lateness``;
  it never goes back;
* a left row arriving at or behind the watermark is **late**: it is dropped
  and counted (``late_rows``), as Flink drops late rows -- the right side as
  of its time may be gone;
* **a left deletion**: a pending row is dropped (nothing was emitted); a
  sealed row's emitted joined row is retracted (``diff = -1``), with the
  right values it was sealed with;
* right rows no pending or future left row can reach are dropped: for each
  key, those older than the last right row at or before the watermark
  (:meth:`LockedAsof.drop_unreachable`, run as the right side grows), so the
  right side's memory is bounded by what is newer than the watermark;
* so the right side's history at or behind the watermark is sealed too: a
  right deletion there is skipped and counted (``ignored_deletions``) -- it
  could make dropped rows reachable again.  A right insertion there still
  counts for the pending rows (it may be the newest at or before them).

Only ``direction="backward"``: a forward or nearest match would need right
rows that have not arrived when the watermark passes.

Examples
--------
>>> import pandas as pd
>>> trades = pd.DataFrame({"time": [1, 5], "sym": ["a", "a"], "qty": [10, 20]})
>>> quotes = pd.DataFrame({"time": [0], "sym": ["a"], "px": [100.0]})
>>> locked = LockedAsof(trades, quotes, on="time", by="sym", watermark=2)   # the trade at 1 is sealed
>>> locked.table().to_pydict()
{'time': [1], 'sym': ['a'], 'qty': [10], 'px': [100.0]}
>>> late = pd.DataFrame({"time": [1, 4], "sym": ["a", "a"], "px": [99.0, 101.0]})
>>> change = locked.apply(right=late, watermark=6)       # the quote at 1 comes late: the trade at 1 keeps 100
>>> change.table().to_pydict()
{'time': [5], 'sym': ['a'], 'qty': [20], 'px': [101.0], 'diff': [1]}
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from faq.asof.maintained import AsofChange, MaintainedAsof
from faq.asof.tables import DIFF
from faq.asof.side import Side
from faq.errors import InvalidArgumentError
from faq.events import Progress
from faq.results import Explanation
from faq.spark_ui import described

__all__ = ["LockedAsof", "DROP_EVERY"]

#: Right rows inserted since the last drop of unreachable ones after which the next batch drops them.
DROP_EVERY = 1 << 16


class LockedAsof(MaintainedAsof):
    """An as-of join whose left rows are sealed as the watermark passes them (module notes).

    Parameters
    ----------
    left, right, on, by, allow_exact_matches, tolerance, how, suffixes, right_time
        As :class:`~faq.asof.maintained.MaintainedAsof` (``direction`` is backward).
    watermark : number or timestamp, optional
        The first watermark (default: the largest time given minus ``lateness``).
    lateness : number or timedelta
        How far behind the largest time seen the watermark follows the data.
    """

    MODE = "locked"

    def __init__(self, left: Any, right: Any, on: str = "time", by: Any = None, *, direction: str = "backward",
                 watermark: Any = None, lateness: Any = 0, path: Optional[str] = None,
                 _restored: Optional[tuple[Any, dict]] = None, **options: Any) -> None:
        if direction != "backward":
            raise InvalidArgumentError(argument="direction", value=direction,
                                       reason="mode='locked' joins backward only: a forward or nearest match needs "
                                              "right rows that have not arrived when the watermark passes")
        if path is not None and _restored is None:
            from faq.incremental.store import Store

            Store(path).check_new()  # a path that cannot hold the state is refused before any work
        options.pop("mode", None)
        super().__init__(left, right, on, by, direction="backward", mode="view", **options)  # saved below
        self.mode = "locked"
        self.options["lateness"] = lateness
        self.broken: Optional[str] = None  # why a batch that failed half way left this object unusable
        self.lateness = self._number(lateness, "lateness", duration=True)
        self.watermark = self.left.times.dtype.type(np.iinfo(np.int64).min) if self.left.times.dtype.kind in "iu" \
            else self.left.times.dtype.type(-np.inf)
        self.sealed = Side(self.left.take(np.zeros(0, dtype=np.int64)), np.zeros(0, np.int64),
                           np.zeros(0, self.left.times.dtype))
        self.sealed_right = Side(self.right.take(np.zeros(0, dtype=np.int64)), np.zeros(0, np.int64),
                                 np.zeros(0, self.left.times.dtype))
        self._right_since_drop = 0
        self.late_rows = 0  # left rows that came at or behind the watermark, dropped
        self.ignored_deletions = 0  # right deletions at or behind the watermark, skipped
        given = [side.times[side.alive_ids()] for side in (self.left, self.right)]
        self._latest = max((t.max() for t in given if len(t)), default=None)  # the latest time seen
        self._advance(watermark)
        self._seal()
        self._attach_or_restore(path, _restored)

    # -- the answer -------------------------------------------------------------------------------

    def table(self) -> Any:
        """The sealed joined rows (pending left rows are not in the answer yet), in the order sealed."""
        ids = self.sealed.alive_ids()
        return self._joined(self.sealed.take(ids), self.sealed_right.take(ids), self._matched_mask(ids))

    def explain(self) -> Explanation:
        """What is kept and how a batch runs, one line each."""
        return Explanation(f"maintained as-of join (backward, locked) on {self.on}" + (
            f" by {', '.join(self.keys)}" if self.keys else ""), (
            f"watermark {self.watermark}; lateness {self.lateness}; late left rows dropped: {self.late_rows:,}",
            f"sealed: {len(self.sealed.alive_ids()):,} rows; pending: {len(self.left.alive_ids()):,}; "
            f"right rows kept: {len(self.right.alive_ids()):,}",
            "a batch: right changes applied (never revising sealed rows); left rows pending until the watermark "
            "passes them, then joined with the right side as it stands and sealed",
            f"version {self.version}; " + ("in memory only" if self.path is None else f"saved in {self.path}"),
        ))

    # -- a batch ------------------------------------------------------------------------------------

    @described("locked as-of join")
    def apply(self, changes: Any = None, *, left: Any = None, right: Any = None, watermark: Any = None,
              version: Optional[int] = None, label: Optional[str] = None, before_commit: Any = None) -> AsofChange:
        """Apply change rows of either side, move the watermark, and seal what it passed.

        ``changes``, ``left``, ``right``, ``version``, ``label`` and
        ``before_commit`` as for :meth:`MaintainedAsof.apply`; ``watermark``
        moves it (default: the latest time seen minus the lateness).

        Returns the sealed rows added (+1) and those retracted by left deletions (-1).
        A batch that fails before it commits is taken back by reopening the
        durable state (with ``state=``); without one the object refuses further
        batches (:attr:`broken`) -- the locked join keeps no undo log.
        """
        if self.broken:
            raise InvalidArgumentError(argument="apply", value=self.broken,
                                       reason="an earlier batch failed half way and this locked join holds no "
                                              "saved state to go back to; build it again")
        return self._apply(changes, left, right, watermark, version, label, before_commit)

    def _undo(self, undo: dict) -> None:
        """Go back to the last committed version: reopened from the state directory, or marked broken."""
        if self.path is None:
            self.broken = "a batch failed before it committed"
            return
        self._release_store()
        again = type(self).open(self.path, progress=self.progress)
        self.__dict__.update(again.__dict__)

    def _batch(self, left_ins: Any, left_del: Any, right_ins: Any, right_del: Any, undo: dict,
               watermark: Any) -> Any:
        """The batch's changes (module notes); its rows."""
        gone_pending, gone_sealed = self._find_left(left_del)
        ignored = 0
        if right_del is not None and right_del.num_rows:
            import pyarrow as pa

            ahead = self._times(right_del, self.right) > self.watermark
            ignored = int((~ahead).sum())
            right_del = right_del.filter(pa.array(ahead))  # behind the watermark the history is sealed
        dead_right = self._find(self.right, right_del, "right")  # refused here: nothing has changed yet
        self.ignored_deletions += ignored
        out = []
        if len(dead_right):
            self.right.kill(dead_right)
        if right_ins is not None and right_ins.num_rows:
            times = self._times(right_ins, self.right)
            self.right.insert(right_ins, self._codes(right_ins), times)
            self._right_since_drop += right_ins.num_rows
            self._seen(times)
        if len(gone_pending):
            self.left.kill(gone_pending)
        if len(gone_sealed):
            out.append(self._joined(self.sealed.take(gone_sealed), self.sealed_right.take(gone_sealed),
                                    self._matched_mask(gone_sealed), -1))
            self.sealed.kill(gone_sealed)
            self.sealed_right.kill(gone_sealed)
        if left_ins is not None and left_ins.num_rows:
            times = self._times(left_ins, self.left)
            on_time = times > self.watermark
            self.late_rows += int((~on_time).sum())
            if not on_time.all():
                import pyarrow as pa

                left_ins, times = left_ins.filter(pa.array(on_time)), times[on_time]
            ids = self.left.insert(left_ins, self._codes(left_ins), times)
            self._grow(self.left.rows)
            self.matched[ids] = -1
            self._seen(times)
        self._advance(watermark)
        sealed = self._seal()
        if sealed is not None:
            out.append(sealed)
        if self._right_since_drop > DROP_EVERY:
            self.drop_unreachable()
        self.right.compact_if_needed()
        self.sealed.compact_if_needed()  # its searches (a sealed row's deletion) read a bounded overlay
        import pyarrow as pa

        return pa.concat_tables(out) if out else self._joined(self.left.take(np.zeros(0, dtype=np.int64)),
                                                             self.right.take(np.zeros(0, dtype=np.int64)),
                                                             np.zeros(0, dtype=bool), 1)

    def watermark_number(self, value: Any) -> Any:
        """A watermark given to :meth:`apply` in the times' numbers (as saved)."""
        return self._number(value, "watermark")

    def scalars(self) -> dict[str, Any]:
        """The watermark, the latest time seen and the counters, as a saved state holds them."""
        from faq.asof.state import plain

        return {"watermark": plain(self.watermark), "latest": plain(self._latest), "late_rows": self.late_rows,
                "ignored_deletions": self.ignored_deletions, "right_since_drop": self._right_since_drop}

    @classmethod
    def from_snapshot(cls, snapshot: dict, options: dict, meta: dict, store: Any, progress: Progress) -> "LockedAsof":
        """The locked join a saved snapshot holds: pending and right rows, sealed rows, watermark and counters."""
        from faq.asof.state import from_plain

        scalars = meta["scalars"]
        join = cls(snapshot["pending"], snapshot["right"], watermark=from_plain(scalars["watermark"]),
                   progress=progress, _restored=(store, meta), **options)
        join.restore_sealed(snapshot["sealed_left"], snapshot["sealed_right"], scalars)
        join.snapshot_scalars = dict(scalars)
        return join

    def restore_sealed(self, left_rows: Any, right_rows: Any, scalars: dict[str, Any]) -> None:
        """A reopened state's sealed rows (in the order sealed) and :meth:`scalars`."""
        from faq.asof.state import from_plain

        if left_rows is not None and left_rows.num_rows:
            codes, times = self._codes(left_rows), self._times(left_rows, self.left)
            self.sealed.insert(left_rows.cast(self.schemas[0]), codes, times)
            self.sealed_right.insert(right_rows.cast(self.schemas[1]), codes, times)
        self._latest = from_plain(scalars["latest"])
        self.late_rows, self.ignored_deletions = int(scalars["late_rows"]), int(scalars["ignored_deletions"])
        self._right_since_drop = int(scalars["right_since_drop"])

    def drop_unreachable(self) -> int:
        """Drop the right rows no pending or future left row can match (module notes); how many went."""
        ids = self.right.alive_ids()
        codes, times = self.right.codes[ids], self.right.times[ids]
        behind = np.flatnonzero((times <= self.watermark) & (codes >= 0))
        self._right_since_drop = 0
        if not len(behind):
            return 0
        order = behind[np.lexsort((times[behind], codes[behind]))]
        last = np.ones(len(order), dtype=bool)  # the last row of each code among those behind the watermark
        last[:-1] = codes[order][1:] != codes[order][:-1]
        newest = np.full(int(codes.max()) + 1, times.dtype.type(0), dtype=times.dtype)
        newest[codes[order][last]] = times[order][last]
        stale = behind[times[behind] < newest[codes[behind]]]  # rows at the newest time stay (ties)
        if len(stale):
            self.right.kill(ids[stale])
            self.right.purge()
        return int(len(stale))

    # -- helpers ------------------------------------------------------------------------------------

    def _seal(self) -> Optional[Any]:
        """Join the pending left rows the watermark passed, move them to the sealed rows; their rows (+1)."""
        pending = self.left.alive_ids()
        ready = pending[self.left.times[pending] <= self.watermark]
        if not len(ready):
            return None
        codes, times = self.left.codes[ready], self.left.times[ready]
        matched = self.right.matches(codes, times, "backward", self.exact, self.tolerance)
        left_rows = self.left.take(ready)
        right_rows = self.right.take(matched)  # -1: a row of nulls
        self.sealed.insert(left_rows, codes, times)
        self.sealed_right.insert(right_rows, codes, times)
        self.left.kill(ready)
        self.left.purge()  # pending rows keep no id anywhere else: forget the sealed ones
        self.matched = np.full(self.left.rows, -1, dtype=np.int64)
        return self._joined(left_rows, right_rows, matched >= 0, 1)

    def _joined(self, left_rows: Any, right_rows: Any, matched: np.ndarray, diff: Optional[int] = None) -> Any:
        """Joined rows of left rows and the right rows taken for them (``matched``: whether there was a match)."""
        import pyarrow as pa

        from faq.asof.tables import joined_rows

        positions = np.where(np.asarray(matched, dtype=bool), np.arange(len(matched)), -1)
        if self.how == "inner":
            keep = pa.array(positions >= 0)
            left_rows, right_rows = left_rows.filter(keep), right_rows.filter(keep)
            positions = np.arange(left_rows.num_rows)
        rows = joined_rows(left_rows, right_rows, positions, self.names, self.on, self.right_time)
        if diff is not None:
            rows = rows.append_column(DIFF, pa.array(np.full(rows.num_rows, diff, dtype=np.int64)))
        return rows

    def _matched_mask(self, sealed_ids: np.ndarray) -> np.ndarray:
        """Whether each sealed row had a match (its right time is not null)."""
        column = self.sealed_right.take(sealed_ids).column(self.on)
        return ~np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)

    def _find_left(self, deletes: Any) -> tuple[np.ndarray, np.ndarray]:
        """Left deletions: among the pending rows first, the rest among the sealed ones."""
        if deletes is None or not deletes.num_rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        import pyarrow as pa

        times = self._times(deletes, self.left)
        pending_mask = times > self.watermark
        pending = deletes.filter(pa.array(pending_mask))
        sealed = deletes.filter(pa.array(~pending_mask))
        return self._find(self.left, pending, "left"), self._find(self.sealed, sealed, "left")

    def _seen(self, times: np.ndarray) -> None:
        if len(times):
            self._latest = times.max() if self._latest is None else max(self._latest, times.max())

    def _advance(self, watermark: Any) -> None:
        """The watermark: the one given, else the latest time seen minus the lateness; never back."""
        if watermark is not None:
            candidate = self._number(watermark, "watermark")
        elif self._latest is None:
            return  # no time seen yet
        else:
            candidate = self._latest - self.lateness
        self.watermark = max(self.watermark, self.left.times.dtype.type(candidate))

    def _number(self, value: Any, name: str, duration: bool = False) -> Any:
        """A watermark or lateness in the times' numbers (timestamps and timedeltas in nanoseconds)."""
        import datetime

        import pandas as pd

        if isinstance(value, (datetime.timedelta, np.timedelta64, pd.Timedelta)):
            return int(pd.Timedelta(value).value)
        if isinstance(value, (datetime.datetime, datetime.date, np.datetime64, pd.Timestamp)) and not duration:
            return int(pd.Timestamp(value).value)
        try:
            return self.left.times.dtype.type(value)
        except (TypeError, ValueError):
            raise InvalidArgumentError(argument=name, value=value, reason="a number, a timestamp or a timedelta, "
                                       "in the units of the time column") from None
