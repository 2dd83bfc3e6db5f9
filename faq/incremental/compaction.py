"""Compaction in the background: a resident relation's new base and its view tries, built off the batch path.

Folding a relation's overlay into its base (:mod:`faq.incremental.index`)
costs O(base): a merge of the sorted rows, then one CSR trie per view (a
sort of every row for every view but the identity).  Done inside a batch,
that batch takes a hundred times the median.  A :class:`Compaction` does it
in a thread instead: it is given the *frozen* inputs (the old base's rows
and the overlay levels as they were when the compaction was due -- arrays
nobody writes to again) and builds the new base's rows and tries; the
relation keeps serving batches from ``[old base, frozen levels, new
levels]`` and swaps the result in between two batches.

Where it runs (the relation's ``compaction``: the session's ``spark.faq.compaction``, read by
:func:`faq.settings.compaction_mode`, printed by a maintained query's ``explain``): in a
**thread** by default.  numpy releases
the GIL in its searches and copies, and :func:`fold` does no big sort (it
merges the overlay into each view's old trie rows), so the job holds the
GIL in short stretches only -- but often: on R-MAT 17 (``bench/bench_tail.py``,
batches of 100) the ~26 batches a compaction overlaps took ~2.5x the median
(30 ms against 12), where the in-batch fold made one batch of ~490 ms.  A
forked **process** shares no GIL and runs niced; its result comes back
through a pipe into ordinary numpy arrays (read by a thread: the reads
release the GIL).  On a quiet machine the batches it overlapped took
1.2-1.4x the median, but the fork stalls the batch that starts it (30 ms
and more: page tables of the whole process), and on a loaded one the niced
child starves, stretching a compaction over hundreds of batches (one batch
of 1.7 s was seen then), so it is not the default.  **inline** folds in the
calling thread (the batch that fills the overlay waits for the merge); **batch**
is the old way, no :class:`Compaction` at all: the base is replaced inside the
batch and every view rebuilt when next read (the benchmarks' baseline).

The job touches nothing but its inputs and its own result, so no lock is
needed: the relation polls :meth:`Compaction.done` and reads
:meth:`Compaction.result` once, in the thread that runs the batches.
:meth:`Compaction.result` waits; an error in the thread is raised there as
:class:`~faq.errors.CompactionFailedError` (the relation is unchanged: its
runs still hold every row).

Tests hold a job in flight deterministically with :data:`HOLD`: a held job
starts its work only when its result is asked for.

Examples
--------
>>> import numpy as np
>>> from faq.incremental.compaction import Compaction
>>> from faq.incremental.rows import KeyedRows, View, merge_rows
>>> from faq.semirings import INTEGER
>>> from faq.semirings.numpy_backend import numpy_ops
>>> ops = numpy_ops(INTEGER)
>>> base = merge_rows([np.array([0, 1, 2]), np.array([1, 2, 0])], None, ops)
>>> change = merge_rows([np.array([1, 0]), np.array([2, 2])], np.array([-1, 1]), ops)  # delete 1->2, add 0->2
>>> job = Compaction("edge", base, [change], [View((0, 1)), View((1, 0))], ops)
>>> rows, tries = job.result()
>>> list(zip(*[k.tolist() for k in rows.keys])), sorted(v.order for v in tries)
([(0, 1), (0, 2), (2, 0)], [(0, 1), (1, 0)])
"""

from __future__ import annotations

import gc
import os
import pickle
import threading
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from faq.incremental.domain import SPAN
from faq.joins.csr import Trie
from faq.semirings.numpy_backend import NumpyForm

#: Where a compaction runs unless its relation says otherwise (module notes).
DEFAULT_MODE = "thread"
# The compaction process's niceness (added to ours): it yields a shared core to the batches.
NICE = 19
# Tests set this to True (monkeypatch): a job then starts only when its result is asked for, so a
# compaction stays in flight across as many batches as a test wants.
HOLD = False


class Compaction:
    """Fold ``frozen`` (overlay levels, oldest first) into ``base`` and index the result in ``views``.

    Parameters
    ----------
    name : str
        The relation's name (for messages).
    base : KeyedRows
        The base's rows, one per key, sorted.
    frozen : sequence of KeyedRows
        The overlay levels, each one row per key, sorted; never written again.
    views : sequence of View
        The views whose tries the new base gets now (others are built when first read).
    ops : NumpyForm
    base_tries : mapping View -> Trie, optional
        The old base's tries: a view found here is merged, not sorted again (:func:`fold`).
    mode : {"process", "thread", "inline"}, optional
        Where the work runs (default :data:`DEFAULT_MODE`; see the module notes).
    """

    def __init__(self, name: str, base, frozen: Sequence, views: Sequence, ops: NumpyForm,
                 base_tries: Optional[Mapping] = None, mode: Optional[str] = None) -> None:
        self.name = name
        self.mode = mode or DEFAULT_MODE
        if self.mode == "process" and not hasattr(os, "fork"):
            self.mode = "thread"
        self._inputs = (base, list(frozen), list(views), ops, dict(base_tries or {}))
        self._result: Optional[tuple] = None
        self._error: Optional[BaseException] = None
        self._started = False
        self._thread: Optional[threading.Thread] = None
        self._child: Optional[_Child] = None
        if not HOLD or self.mode == "inline":
            self._start()

    def _start(self) -> None:
        self._started = True
        if self.mode == "process":
            try:
                self._child = _Child(self._inputs)
                self._inputs = None
                return
            except OSError:  # no process to fork (or no pipe): a thread does it
                self.mode = "thread"
        if self.mode == "thread":
            self._thread = threading.Thread(target=self._run, name=f"faq-compaction-{self.name}", daemon=True)
            self._thread.start()
        else:
            self._run()

    def _run(self) -> None:
        try:
            self._result = warmed(fold(*self._inputs))
        except BaseException as error:  # raised in the batches' thread by result()
            self._error = error
        finally:
            self._inputs = None  # the old base's arrays go as soon as the relation lets them go

    def done(self) -> bool:
        """Whether the result is ready (never waits; a held job is never done)."""
        if not self._started:
            return False
        if self._child is not None:
            return self._child.done()
        return self._thread is None or not self._thread.is_alive()

    def result(self) -> tuple:
        """(the new base's rows, its tries per view): waits for the job (a held one runs now)."""
        from faq.errors import CompactionFailedError

        if not self._started:
            self._start()
        if self._child is not None:
            try:
                self._result = self._child.result()
            except BaseException as error:
                self._error = error
            self._child = None
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise CompactionFailedError(relation=self.name, reason=repr(self._error)) from self._error
        return self._result


class _Child:
    """:func:`fold` in a forked process, its result read back through a pipe into private arrays.

    The child reads the inputs where they are (the fork shares them, copy on
    write), folds, and writes the result's layout then its arrays' bytes to a
    pipe; a thread here reads them into arrays allocated by numpy (so they
    get huge pages as any large array does) -- the read syscalls release the
    GIL, so the batches barely notice.  A separate process holds no GIL of
    ours while it works.
    """

    def __init__(self, inputs: tuple) -> None:
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: fold, write, leave without running any of the parent's cleanup
            status = 2
            try:
                os.close(read)
                gc.disable()  # touching every object would copy the parent's pages
                os.nice(NICE)  # the batches first: this one takes the CPU time they leave
                try:
                    result = fold(*inputs)
                except BaseException as error:  # reported through the pipe
                    _send(write, ("error", repr(error)), [])
                else:
                    _send(write, *_layout(result))
                    status = 0
            finally:
                os._exit(status)
        os.close(write)
        self.status: Optional[int] = None
        self._received: Optional[tuple] = None
        self._failure: Optional[BaseException] = None
        self._reader = threading.Thread(target=self._receive, args=(read,), name="faq-compaction-reader",
                                        daemon=True)
        self._reader.start()

    def _receive(self, read: int) -> None:
        try:
            kind, layout, arrays = _receive(read)
            # assembled and hashed here, in the reader's thread, not by the batch that swaps it in
            self._received = (kind, warmed(_assemble(layout, arrays)) if kind == "ok" else layout, None)
        except BaseException as error:  # reported by result()
            self._failure = error
        finally:
            os.close(read)

    def __del__(self) -> None:
        if getattr(self, "pid", 0) and getattr(self, "status", 0) is None:
            try:  # a relation dropped without settling: reap the child if it is done (no zombie)
                os.waitpid(self.pid, os.WNOHANG)
            except OSError:
                pass

    def done(self) -> bool:
        if self._reader.is_alive():
            return False
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
        return self.status is not None

    def result(self) -> tuple:
        self._reader.join()
        if self.status is None:
            _, self.status = os.waitpid(self.pid, 0)
        if self._failure is not None:
            raise ChildProcessError(f"reading the compaction's result failed: {self._failure!r}")
        kind, result, _ = self._received
        if kind != "ok":
            raise ChildProcessError(f"the compaction process failed: {result}")
        return result


def _layout(result: tuple) -> tuple:
    """("ok", the result's structure with arrays replaced by their numbers, the arrays)."""
    rows, tries = result
    arrays: list[np.ndarray] = []

    def put(array: Optional[np.ndarray]) -> Optional[int]:
        if array is None:
            return None
        arrays.append(np.ascontiguousarray(array))
        return len(arrays) - 1

    layout = {"keys": [put(k) for k in rows.keys], "values": put(rows.values),
              "tries": [(view, [(put(level.comp), put(level.offsets), level.duplicates, level.hashable)
                                for level in trie.levels], put(trie.values), trie.rows, trie.nbytes)
                        for view, trie in tries.items()]}
    layout["arrays"] = [(array.dtype.str, array.shape) for array in arrays]
    return ("ok", layout), arrays


def _send(fd: int, head: tuple, arrays: Sequence[np.ndarray]) -> None:
    header = pickle.dumps(head)
    _write_all(fd, memoryview(len(header).to_bytes(8, "little") + header))
    for array in arrays:
        if array.nbytes:
            _write_all(fd, memoryview(array.reshape(-1)).cast("B"))


def _write_all(fd: int, data: memoryview) -> None:
    while len(data):
        data = data[os.write(fd, data):]


def _receive(fd: int) -> tuple:
    size = int.from_bytes(_read_exactly(fd, 8), "little")
    kind, layout = pickle.loads(_read_exactly(fd, size))
    arrays = []
    if kind == "ok":
        for dtype, shape in layout["arrays"]:
            array = np.empty(shape, dtype=np.dtype(dtype))
            if array.nbytes:
                _read_into(fd, memoryview(array.reshape(-1)).cast("B"))
            arrays.append(array)
    return kind, layout, arrays


def _read_exactly(fd: int, n: int) -> bytes:
    buffer = bytearray(n)
    _read_into(fd, memoryview(buffer))
    return bytes(buffer)


def _read_into(fd: int, target: memoryview) -> None:
    while len(target):
        got = os.readv(fd, [target])
        if got == 0:
            raise EOFError("the compaction process ended before its result was written")
        target = target[got:]


def _assemble(layout: dict, arrays: list) -> tuple:
    from faq.incremental.rows import KeyedRows
    from faq.joins.csr import TrieLevel

    def get(k: Optional[int]) -> Optional[np.ndarray]:
        return None if k is None else arrays[k]

    rows = KeyedRows(tuple(get(k) for k in layout["keys"]), get(layout["values"]))
    tries = {view: Trie(tuple(TrieLevel(get(c), get(o), duplicates, hashable) for c, o, duplicates, hashable in levels),
                        get(values), n, nbytes)
             for view, levels, values, n, nbytes in layout["tries"]}
    return rows, tries


def warmed(result: tuple) -> tuple:
    """A fold's ``(rows, tries)`` with the tries' levels hashed (:func:`faq.joins.csr.warm_hash`):
    done here, off the batch path, so the batches after the swap probe hashes, not binary searches."""
    warm_tries(result[1].values())
    return result


def warm_tries(tries: Iterable[Trie]) -> None:
    """Hash every level of ``tries`` that qualifies (:func:`faq.joins.csr.warm_hash`)."""
    from faq.joins.csr import warm_hash

    for trie in tries:
        for level in trie.levels:
            warm_hash(level)


def fold(base, frozen: Sequence, views: Sequence, ops: NumpyForm, base_tries: Optional[Mapping] = None) -> tuple:
    """The new base (``base`` ⊕ every frozen level, one row per key) and its trie in each of ``views``.

    A view whose old trie is in ``base_tries`` is not sorted again: the old
    trie's rows (already in the view's order, :func:`trie_rows`) take the
    overlay's rows, sorted in that order, by the binary-search merge of
    :func:`~faq.incremental.index.combined` -- a few copies of the base
    instead of a sort of it.
    """
    from faq.incremental.rows import KeyedRows, View, build_run, combined, merge_rows

    overlay = None
    for level in frozen:
        if len(level):
            overlay = level if overlay is None else combined(overlay, level, ops)
    if overlay is None or not len(overlay):
        overlay = None
    rows = base if overlay is None else combined(base, overlay, ops)
    tries: dict = {}
    for view in views:
        old = (base_tries or {}).get(view)
        identity = view.order == tuple(range(len(rows.keys))) and not view.equal
        if identity or old is None or overlay is None or not old.rows:
            tries[view] = build_run(rows, view, ops)  # the identity view's rows are sorted: no sort either
            continue
        changes = merge_rows(*overlay.project(view), ops, drop_zeros=False)  # the overlay in the view's order
        ordered = combined(KeyedRows(tuple(trie_rows(old)), old.values), changes, ops)
        tries[view] = build_run(ordered, View(tuple(range(len(view.order)))), ops)
    return rows, tries


def trie_rows(trie: Trie, span: int = SPAN) -> list[np.ndarray]:
    """The rows a trie holds, one column per level, in its (sorted) order: the inverse of ``build_trie``.

    >>> from faq.joins.csr import build_trie
    >>> trie = build_trie([np.array([2, 1, 1]), np.array([0, 5, 3])], 8)
    >>> [c.tolist() for c in trie_rows(trie, span=8)]
    [[1, 1, 2], [3, 5, 0]]
    """
    levels = trie.levels
    columns: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(levels)
    entries = None  # each row's entry at the level below the one being read (None: the rows themselves)
    for j in range(len(levels) - 1, -1, -1):
        level = levels[j]
        parents = np.repeat(np.arange(len(level.offsets) - 1, dtype=np.int64), np.diff(level.offsets))
        values = level.comp - parents * np.int64(span)
        columns[j] = values if entries is None else values[entries]
        entries = parents if entries is None else parents[entries]
    return columns
