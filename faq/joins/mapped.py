"""An index as one file per machine, memory-mapped by every Python worker there.

A broadcast variable is unpickled by each Python worker into its own memory,
so a machine running 16 tasks holds 16 copies of the generic join's index.
Here the index object is pickled once on the driver (protocol 5) with its
numpy arrays as *out-of-band* buffers, laid end to end in one file after the
pickle stream.  Spark ships the file once to each executor
(``SparkSession.addArtifacts(path, file=True)``: ``SparkContext.addFile`` on
classic Spark, the session's artifacts on Spark Connect), and every worker
that needs the index maps the file read-only and unpickles the stream with
the buffers as views of the mapping: the arrays are pages of the operating
system's file cache, shared by every process on the machine, read from disk
at most once, and never copied into a worker's heap.

An index can also be built where it is used (:class:`BuiltIndex`, made by
:mod:`faq.joins.executor_index`): the first worker of an executor that needs
it builds it and writes the same file layout into Spark's files directory
there; the executor's other workers wait on a lock and map that file
(:func:`build_once`).

File layout (little-endian)::

    b"FAQIDX01"                       magic
    u64 n, u64 pickle_bytes           number of buffers, pickle stream length
    n x (u64 offset, u64 length)      each buffer's place in the file
    pickle stream
    buffers, each starting at a multiple of 64 bytes

Arrays read back are read-only (the mapping is); the join kernels only read
their indexes.  A worker keeps the last :data:`KEEP_LOADED` indexes it has
mapped, so the tasks of one join map the file once per worker process.

Examples
--------
>>> import numpy as np
>>> from faq.io import scratch_path
>>> path = scratch_path("index.faq")
>>> written = write_index({"comp": np.arange(5, dtype=np.int64), "name": "t"}, path)
>>> back = read_index(path)
>>> back["comp"].tolist(), back["name"], back["comp"].flags.writeable
([0, 1, 2, 3, 4], 't', False)
>>> written == os.path.getsize(path)
True
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import struct
import uuid
from collections import OrderedDict
from typing import Any, Callable, Iterator, Optional

from faq.errors import MappedIndexError
from faq.huge_pages import plain_pages

MAGIC = b"FAQIDX01"
ALIGN = 64  # each buffer starts at a multiple of this (cache lines; any numpy dtype's alignment)
KEEP_LOADED = 4  # indexes a worker keeps mapped (the newest)

_HEADER = struct.Struct("<8sQQ")
_ENTRY = struct.Struct("<QQ")
# name -> index object, the newest last (per process: in a worker, the indexes its tasks mapped).
_LOADED: "OrderedDict[str, Any]" = OrderedDict()


def write_index(value: Any, path: str) -> int:
    """Write ``value`` to ``path`` in the mapped-index layout; the file's size in bytes.

    Pickled with protocol 5 (pyspark's cloudpickle, so functions defined in
    a notebook travel as they do in a broadcast); contiguous numpy arrays
    become out-of-band buffers, everything else stays in the stream.
    """
    from pyspark import cloudpickle

    buffers: list[pickle.PickleBuffer] = []
    stream = cloudpickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    at = _HEADER.size + _ENTRY.size * len(views) + len(stream)
    places = []
    for view in views:
        at = -(-at // ALIGN) * ALIGN
        places.append((at, view.nbytes))
        at += view.nbytes
    with open(path, "wb") as f:
        f.write(_HEADER.pack(MAGIC, len(views), len(stream)))
        for place in places:
            f.write(_ENTRY.pack(*place))
        f.write(stream)
        for (offset, _), view in zip(places, views):
            f.seek(offset)
            f.write(view)
        f.truncate(at)
    return at


def read_index(path: str) -> Any:
    """The object :func:`write_index` wrote to ``path``, its arrays views of a read-only mapping."""
    with open(path, "rb") as f:
        mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    whole = memoryview(mapping)
    magic, n, stream_bytes = _HEADER.unpack_from(whole, 0)
    if magic != MAGIC:
        raise MappedIndexError(path=path, magic=magic)
    places = [_ENTRY.unpack_from(whole, _HEADER.size + _ENTRY.size * i) for i in range(n)]
    start = _HEADER.size + _ENTRY.size * n
    buffers = [whole[offset: offset + length] for offset, length in places]
    # The buffers keep the mapping alive as long as an array uses them.
    return pickle.loads(whole[start: start + stream_bytes], buffers=buffers)


class MappedIndex:
    """A handle on an index shipped as a file: pickles as its file name; ``.value`` maps the file.

    Read like a broadcast variable (``handle.value``) inside a task: the file
    is found with ``SparkFiles.get`` and mapped on first use in each worker
    process.  Made by :func:`ship`.
    """

    def __init__(self, name: str, nbytes: int) -> None:
        self.name = name
        self.nbytes = nbytes

    @property
    def value(self) -> Any:
        from pyspark import SparkFiles

        return _loaded(self.name, lambda: read_index(SparkFiles.get(self.name)))

    def __repr__(self) -> str:
        return f"MappedIndex({self.name!r}, {self.nbytes} bytes)"


class BuiltIndex:
    """A handle on an index built where it is used: pickles as its name and ``build``; ``.value``
    maps this machine's copy, built by the first worker that needs it (:func:`build_once`).

    ``build`` (a picklable function of no arguments, e.g. a :func:`functools.partial`)
    returns the index object; ``nbytes`` is the driver's estimate, for messages.
    Made by :mod:`faq.joins.executor_index`.
    """

    def __init__(self, name: str, build: Callable[[], Any], nbytes: Optional[float] = None) -> None:
        self.name = name
        self.build = build
        self.nbytes = nbytes

    @property
    def value(self) -> Any:
        from pyspark import SparkFiles

        return _loaded(self.name, lambda: build_once(SparkFiles.getRootDirectory(), self.name, self.build))

    def __repr__(self) -> str:
        return f"BuiltIndex({self.name!r})"


def build_once(directory: str, name: str, build: Callable[[], Any]) -> Any:
    """The index ``name`` in ``directory``, mapped: built by ``build()`` and written there unless it is there.

    Workers sharing ``directory`` (Spark's files directory of one executor)
    take a lock first, so one of them builds and writes (to a temporary
    name, renamed when complete) while the others wait, then all map the
    one file.  A worker that dies while building leaves no file under
    ``name``: the next one builds it.

    >>> from faq.io import scratch_path
    >>> where, calls = os.path.dirname(scratch_path("x")), []
    >>> first = build_once(where, "i.bin", lambda: calls.append(1) or {"n": 1})
    >>> again = build_once(where, "i.bin", lambda: calls.append(2) or {"n": 2})
    >>> first, again, calls
    ({'n': 1}, {'n': 1}, [1])
    """
    path = os.path.join(directory, name)
    with _locked(path + ".lock"):
        if not os.path.exists(path):
            partial = f"{path}.{os.getpid()}.partial"
            with plain_pages():  # the build's arrays are fresh and freed once written (faq.huge_pages)
                write_index(build(), partial)
            os.replace(partial, path)
    return read_index(path)


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on ``path`` among processes (``flock``; none where it does not exist:
    then each worker may build its own copy, and the last rename wins -- the same index)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _loaded(name: str, load: Callable[[], Any]) -> Any:
    """The index ``name`` this process mapped, else ``load()`` (kept among the newest :data:`KEEP_LOADED`)."""
    found = _LOADED.get(name)
    if found is None:
        found = _LOADED[name] = load()
        while len(_LOADED) > KEEP_LOADED:
            _LOADED.popitem(last=False)
    else:
        _LOADED.move_to_end(name)
    return found


def mapped_file(path: str) -> Any:
    """The index in the file ``path`` (in a directory every executor reads), mapped once per worker process
    (kept among the newest :data:`KEEP_LOADED`, as shipped and built indexes are)."""
    return _loaded(path, lambda: read_index(path))


def forget(name: str) -> bool:
    """Drop this process's mapping of the index ``name`` (a handle's name, or a :func:`mapped_file` path):
    its file is about to go.  Whether it held one."""
    return _LOADED.pop(name, None) is not None


def ship(spark: Any, value: Any) -> MappedIndex:
    """Write ``value`` to a file and add it to ``spark``'s session files; its handle for the tasks.

    The file goes to every executor once (``addArtifacts(file=True)``), under
    a fresh name.  Spark keeps the executors' copies until the session
    stops.  On Spark Connect the driver's own file is removed once uploaded;
    on classic Spark each executor (the driver's own one on a local master
    too) fetches it from the driver when its first task needing it starts, so
    the file stays in this process's scratch directory until the interpreter
    exits: an index costs its size twice on the driver's disk meanwhile.
    """
    from faq.scratch import scratch_path
    from faq.spark import is_connect
    from faq.workers import ensure_workers

    ensure_workers(spark)  # the tasks that map the file run faq's Python on the workers: check once that they can
    name = f"faq-index-{uuid.uuid4().hex}.bin"
    path = scratch_path(name)
    nbytes = write_index(value, path)
    spark.addArtifacts(path, file=True)
    if is_connect(spark):
        os.remove(path)
    return MappedIndex(name, nbytes)
