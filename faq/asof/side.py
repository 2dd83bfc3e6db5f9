"""One side of a maintained as-of join: its rows, which are alive, and searches by (key, time).

A :class:`Side` holds every row it was given, append-only: the columns (an
Arrow table per batch), and per row id its key code, its time (a number) and
whether it is alive.  Searching by (key, time) reads two sorted parts:

* the **base**: the rows alive at the last compaction, sorted by
  (code, time) (:class:`~faq.asof.kernel.Runs`); a row deleted since stays
  there, marked dead, and searches step over it;
* the **overlay**: the rows inserted since, sorted again at each batch (a
  batch is small; :data:`OVERLAY_MAX_ROWS` bounds it, then the base is
  rebuilt from the alive rows: :meth:`Side.compact`).

Order among rows of equal key and time is arrival order (row ids), the order
a recomputation over the alive rows in id order sees: backward takes the
last, forward the first -- ``pandas.merge_asof``'s rule.

Examples
--------
>>> import numpy as np, pyarrow as pa
>>> side = Side(pa.table({"t": [1, 5]}), np.array([0, 0]), np.array([1, 5]))
>>> side.insert(pa.table({"t": [3]}), np.array([0]), np.array([3])).tolist()     # new row ids
[2]
>>> side.kill(np.array([1]))
>>> side.matches(np.array([0, 0]), np.array([4, 9]), "backward").tolist()       # row 1 (t=5) is dead
[2, 2]
>>> side.in_window(np.array([0]), np.array([2]), np.array([9])).tolist()         # alive rows, key 0, 2 <= t <= 9
[2]
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from faq.asof.kernel import DIRECTION_CODES, COMPILED, Runs, compiled_search, one_match, sorted_runs

__all__ = ["Side", "OVERLAY_MAX_ROWS", "warm_up"]

#: Rows inserted since the last compaction above which the base is rebuilt from the alive rows.
OVERLAY_MAX_ROWS = 1 << 16


class Side:
    """The rows of one side (module notes); ``table`` the first rows, ``codes`` and ``times`` theirs."""

    def __init__(self, table: Any, codes: np.ndarray, times: np.ndarray) -> None:
        self.tables = [table]
        self.rows = n = len(codes)
        # room for an eighth more rows at once: the first batches append without copying the history
        room = n + max(1024, n // 8)
        self.codes = np.zeros(room, dtype=np.int64)
        self.codes[:n] = codes
        self.times = np.zeros(room, dtype=np.asarray(times).dtype)
        self.times[:n] = times
        self.alive = np.zeros(room, dtype=bool)
        self.alive[:n] = True
        self.compact()

    # -- changes ----------------------------------------------------------------------------

    def insert(self, table: Any, codes: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Append rows (alive); their ids."""
        n = len(codes)
        ids = np.arange(self.rows, self.rows + n, dtype=np.int64)
        if not n:
            return ids
        self._room(self.rows + n)
        self.codes[self.rows:self.rows + n] = codes
        self.times[self.rows:self.rows + n] = np.asarray(times, dtype=self.times.dtype)
        self.alive[self.rows:self.rows + n] = True
        self.tables.append(table)
        self.rows += n
        self.overlay = np.concatenate([self.overlay, ids])
        self._overlay_runs = None
        return ids

    def kill(self, ids: np.ndarray) -> None:
        """Mark rows dead (deleted): searches step over them until the next compaction drops them."""
        self.alive[ids] = False
        if len(self.overlay) and np.isin(ids, self.overlay).any():
            self.overlay = self.overlay[self.alive[self.overlay]]
            self._overlay_runs = None

    def compact(self) -> None:
        """The base rebuilt from every alive row (sorted by code and time); the overlay emptied."""
        ids = np.flatnonzero(self.alive[:self.rows])
        n_codes = int(self.codes[ids].max(initial=-1)) + 1
        runs = sorted_runs(self.codes[ids], self.times[ids], max(n_codes, 1))
        self.base = Runs(ids[runs.order], runs.times, runs.starts)
        self.overlay = np.zeros(0, dtype=np.int64)
        self._overlay_runs: Optional[Runs] = None

    def purge(self) -> None:
        """Forget the dead rows for good: the alive rows renumbered ``0, 1, ...`` in their order (their
        columns copied once), the base rebuilt.  Ids given out before are void: only a holder that keeps no
        ids (the locked join's right side) purges."""
        ids = self.alive_ids()
        self.tables = [self.take(ids) if len(self.tables) > 1 or len(ids) < self.rows else self.tables[0]]
        self.codes, self.times = self.codes[ids].copy(), self.times[ids].copy()
        self.alive = np.ones(len(ids), dtype=bool)
        self.rows = len(ids)
        self.compact()

    def compact_if_needed(self) -> bool:
        if len(self.overlay) <= OVERLAY_MAX_ROWS:
            return False
        self.compact()
        return True

    # -- searches ---------------------------------------------------------------------------

    def matches(self, codes: np.ndarray, times: np.ndarray, direction: str, exact: bool = True,
                tolerance: Optional[float] = None) -> np.ndarray:
        """For each (code, time), the alive row an as-of join matches (``direction`` as the kernel's), or -1.

        The base's candidate (stepping over dead rows) and the overlay's are
        combined by the same rule: the later (backward) or earlier (forward)
        time, arrival order on a tie, the closer for nearest.
        """
        codes = np.asarray(codes, dtype=np.int64)
        times = np.asarray(times, dtype=self.times.dtype)
        kind = DIRECTION_CODES[direction]
        limit = -1.0 if tolerance is None else float(tolerance)
        base = _alive_search(self.base, self.alive, codes, times, kind, exact, limit)
        if not len(self.overlay):
            return base
        overlay = _alive_search(self._overlay(), self.alive, codes, times, kind, exact, limit)
        return _combined(base, overlay, self.times, times, kind)

    def in_window(self, codes: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The alive row ids with code ``codes[i]`` and ``low[i] <= time <= high[i]`` for some ``i``, sorted."""
        found = [_window(self.base, codes, low, high), _window(self._overlay(), codes, low, high)]
        ids = np.unique(np.concatenate(found))
        return ids[self.alive[ids]]

    def at(self, code: int, time: Any) -> np.ndarray:
        """The alive row ids with this code and exactly this time (candidates of a deletion)."""
        return self.in_window(np.array([code]), np.array([time], dtype=self.times.dtype),
                              np.array([time], dtype=self.times.dtype))

    # -- rows ---------------------------------------------------------------------------------

    def take(self, ids: np.ndarray) -> Any:
        """The rows ``ids`` (any order, repeats allowed; -1: a row of nulls) as one Arrow table.

        Each batch's table is taken from where it lies (the first table is the
        history: it is never copied whole for a batch's few rows).
        """
        import pyarrow as pa

        ids = np.asarray(ids, dtype=np.int64)
        if len(self.tables) == 1:
            return self.tables[0].take(pa.array(ids, mask=ids < 0))
        self._merge_small_tables()
        offsets = np.cumsum([0] + [t.num_rows for t in self.tables])
        which = np.searchsorted(offsets, ids, side="right") - 1
        parts, places = [], []
        for k in np.unique(which[ids >= 0]):
            mine = np.flatnonzero(which == k)
            parts.append(self.tables[k].take(pa.array(ids[mine] - offsets[k])))
            places.append(mine)
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            parts.append(self.tables[0].take(pa.array(np.zeros(len(missing), dtype=np.int64), mask=np.ones(
                len(missing), dtype=bool))))
            places.append(missing)
        if not parts:
            return self.tables[0].slice(0, 0)
        joined = pa.concat_tables(parts)
        inverse = np.empty(len(ids), dtype=np.int64)
        inverse[np.concatenate(places)] = np.arange(len(ids))
        return joined.take(pa.array(inverse))

    def table(self) -> Any:
        """Every row given so far, alive or not, in id order (one table; for whole-answer reads)."""
        import pyarrow as pa

        if len(self.tables) > 1:
            self.tables = [pa.concat_tables(self.tables).combine_chunks()]
        return self.tables[0]

    def _merge_small_tables(self) -> None:
        """The batches' tables after the first merged into one when there are many (a take stays cheap)."""
        import pyarrow as pa

        if len(self.tables) > 32:
            self.tables = [self.tables[0], pa.concat_tables(self.tables[1:]).combine_chunks()]

    def alive_ids(self) -> np.ndarray:
        return np.flatnonzero(self.alive[:self.rows])

    # -- room -----------------------------------------------------------------------------------

    def _overlay(self) -> Runs:
        if self._overlay_runs is None:
            ids = self.overlay
            n_codes = int(self.codes[ids].max(initial=-1)) + 1
            runs = sorted_runs(self.codes[ids], self.times[ids], max(n_codes, 1))
            self._overlay_runs = Runs(ids[runs.order], runs.times, runs.starts)
        return self._overlay_runs

    def _room(self, n: int) -> None:
        if len(self.codes) >= n:
            return
        size = max(n, 2 * len(self.codes), 1024)
        self.codes = np.concatenate([self.codes, np.zeros(size - len(self.codes), dtype=np.int64)])
        self.times = np.concatenate([self.times, np.zeros(size - len(self.times), dtype=self.times.dtype)])
        self.alive = np.concatenate([self.alive, np.zeros(size - len(self.alive), dtype=bool)])


def _combined(base: np.ndarray, overlay: np.ndarray, row_times: np.ndarray, times: np.ndarray,
              kind: int) -> np.ndarray:
    """The match of two candidates (row ids, -1: none): backward the later (time, id), forward the earlier,
    nearest the closer (the backward one on a tie, as the kernel)."""
    has_b, has_o = base >= 0, overlay >= 0
    tb, to = row_times[np.maximum(base, 0)], row_times[np.maximum(overlay, 0)]
    if kind == 0:
        take_o = has_o & (~has_b | (to > tb) | ((to == tb) & (overlay > base)))
    elif kind == 1:
        take_o = has_o & (~has_b | (to < tb) | ((to == tb) & (overlay < base)))
    else:
        gap_b, gap_o = np.abs(tb - times), np.abs(to - times)
        back_b, back_o = tb <= times, to <= times
        # the closer; at equal distance the backward one; two backward (or two forward) ones: as above
        closer = gap_o < gap_b
        same = gap_o == gap_b
        tie_o = same & ((back_o & ~back_b) | ((back_o == back_b) & np.where(back_o, overlay > base, overlay < base)))
        take_o = has_o & (~has_b | closer | tie_o)
    return np.where(take_o, overlay, base)


def _window(runs: Runs, codes: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Row ids of ``runs`` (alive or not) with code ``codes[i]`` and time in ``[low[i], high[i]]``."""
    n_codes = len(runs.starts) - 1
    out = []
    for c, a, b in zip(codes.tolist(), low.tolist(), high.tolist()):
        if c < 0 or c >= n_codes:
            continue
        lo, hi = runs.starts[c], runs.starts[c + 1]
        segment = runs.times[lo:hi]
        i, j = np.searchsorted(segment, a, side="left"), np.searchsorted(segment, b, side="right")
        if j > i:
            out.append(runs.order[lo + i:lo + j])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _alive_search(runs: Runs, alive: np.ndarray, codes: np.ndarray, times: np.ndarray, kind: int, exact: bool,
                  limit: float) -> np.ndarray:
    """The kernel's search over ``runs`` (whose ``order`` holds row ids), stepping over dead rows."""
    out = np.empty(len(codes), dtype=np.int64)
    if COMPILED:
        # writable, C-contiguous arrays only: numba compiles one signature per layout and read-only flag
        # (Arrow's arrays are read-only), and one per time type is what the setup warms (warm_up)
        arrays = [np.require(a, requirements=["C", "W"]) for a in
                  (runs.starts, runs.times, runs.order, alive, codes, times.astype(runs.times.dtype, copy=False))]
        starts, rtimes, order, alive, codes, times = arrays
        compiled_search()(starts, rtimes, order, alive, True, codes, times, int(kind), bool(exact), float(limit), out)
        return out
    n_codes = len(runs.starts) - 1  # pragma: no cover - numba is a dependency
    for i in range(len(codes)):  # pragma: no cover
        out[i] = one_match(runs.starts, runs.times, runs.order, alive, True, n_codes, codes[i], times[i], kind, exact,
                           limit)
    return out  # pragma: no cover


def warm_up() -> list[str]:
    """Compile the search over live rows for int64 and float64 times (``make`` runs it once, through
    ``python -m faq.asof.warm``); the time types compiled.

    >>> warm_up() in ([], ["float64", "int64"])
    True
    """
    if not COMPILED:
        return []
    for dtype in (np.float64, np.int64):
        side = Side(None, np.array([0, 0]), np.array([1, 5], dtype=dtype))
        side.kill(np.array([1]))
        if side.matches(np.array([0]), np.array([7], dtype=dtype), "backward").tolist() != [0]:
            raise AssertionError("the compiled search over live rows is wrong")
    return ["float64", "int64"]
