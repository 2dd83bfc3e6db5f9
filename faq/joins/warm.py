"""Compile the numba loop of :mod:`faq.joins.compiled` into numba's on-disk cache, once, at setup.

numba compiles :func:`faq.joins.compiled_loop.aggregate` on its first call
for each type signature of its arguments: 3 to 14 s a signature on two
cores, which a fresh install would otherwise pay inside its first triangle
count (in a Spark worker, where it looks like a slow join).  ``make venv``
(hence ``make demo`` and ``make test``) runs ``python -m faq.joins.warm``
after installing the package, so the jobs load the compiled code instead:
about 0.5 s in each new process on an idle machine (numba's import and its
own start-up, most of it the first call's registry loading), not a compile.

The signatures the package's jobs can hit are four: the values' dtype,
int64 or float64 (a ``bigint`` or a ``double`` semiring; zero and one come
with it), times the dtype of the trie levels' local keys, int32 or int64
(:func:`faq.joins.compiled.local_keys`: int64 only when the key span passes
2^31).  Every other argument has one type: the seeds are int64, the
⊕ and ⊗ are operation codes (values, not types: min and max run the code
compiled for + and ×), and the flat arrays are always read-only (the
tasks' are views of a read-only mapping, :mod:`faq.joins.mapped`, and
:func:`faq.joins.compiled._flatten` freezes the driver's to match, else
each of the four would come twice).  :func:`warm_up` runs the package's own
path: a triangle over every built-in semiring with a compiled form, on
dense and on wide (past 2^31) node ids, as the driver runs it and as a
task does from a mapped index file.  A job that still meets another
signature compiles it once at first use, and caches it too.

Where numba keeps the cache (its locators, tried in order):

* ``$NUMBA_CACHE_DIR``, if set (the Spark workers inherit the driver's
  environment on a local master; on a cluster each executor's own);
* else ``__pycache__`` beside ``compiled_loop.py`` if writable: in an
  editable install (``make venv``) the clone's ``faq/joins/__pycache__``,
  from a wheel in a virtual environment
  ``site-packages/faq/joins/__pycache__``; every process importing that
  ``faq`` (the Spark workers too) finds it;
* else, when site-packages is not writable (a system or shared install), the
  user's cache (``~/.cache/numba`` on Linux): run the warm-up as the user
  who runs the jobs, or each user's first job compiles (once, then cached).

Entries are keyed by the content hash of ``compiled_loop.py``, the Python
version, the signature and the CPU (numba's target triple, CPU name and
features): an edit of the loop, another Python, or executors on machines
with another CPU compile once more at first use and cache that.

Examples
--------
>>> warm_up()                                     # loads from the cache when make venv warmed it
['float64 values, int32 keys', 'float64 values, int64 keys', 'int64 values, int32 keys', 'int64 values, int64 keys']
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["warm_up", "warm_worker", "main"]

# A triangle 0→1→2, 0→2 and one more edge: with node 2^33 + 5 the key span passes 2^31 and the local
# keys are int64 (faq.joins.compiled.local_keys), otherwise int32.
_DENSE = (np.array([0, 1, 0, 2]), np.array([1, 2, 2, 3]))
_WIDE = (np.array([0, 1, 0, 2]), np.array([1, 2, 2, 2**33 + 5]))


def _triangle_kernels() -> list[Any]:
    """The compiled kernels of a triangle count over every semiring with a compiled form, on dense
    and on wide node ids (built as :func:`faq.joins.kernel.build_kernel` builds them for a generic join)."""
    from faq.joins import Aggregation
    from faq.joins.kernel import build_kernel
    from faq.semirings.builtins import BUILTINS, MIN_LABEL
    from faq.semirings.numpy_backend import NUMPY_DTYPES, numpy_ops

    kernels = []
    for semiring in (*BUILTINS, MIN_LABEL):
        for src, dst in (_DENSE, _WIDE):
            values = np.full(len(src), semiring.one, dtype=NUMPY_DTYPES[semiring.value_type])
            kernel, _, _ = build_kernel(
                [("a", "b"), ("b", "c"), ("a", "c")], [[0, 1, 2]], [([src, dst], values)],
                ["a", "b", "c"], ["a", "b", "c"], semiring, Aggregation((), semiring), numpy_ops(semiring),
            )
            if kernel.compiled:  # boolean has no compiled form: its tasks run the numpy kernel
                kernels.append(kernel)
    return kernels


def warm_up() -> list[str]:
    """Compile every signature of the compiled loop the package's jobs can hit, or load it from the cache.

    Runs a triangle count through :func:`faq.joins.compiled.aggregate_seeds`
    for each kernel, once as the driver holds it and once read back from a
    mapped index file as a Spark task reads it, so numba's on-disk cache
    holds every signature a later job asks for (see the module's text for
    where that cache lives).

    Returns
    -------
    list of str
        The compiled signatures, as ``'<values dtype> values, <keys dtype>
        keys'``, sorted; empty without numba (the numpy kernel runs then).

    Raises
    ------
    AssertionError
        If the kernel read back from the file counts otherwise than the
        driver's (a broken cache entry would show here, not in a job).

    Examples
    --------
    >>> sorted({s.split(",")[0] for s in warm_up()})
    ['float64 values', 'int64 values']
    """
    from faq.joins.compiled import AVAILABLE, aggregate_seeds, for_tasks

    if not AVAILABLE:
        return []
    from faq.joins.compiled_loop import aggregate
    from faq.joins.task_index import seed_count
    from faq.joins.mapped import read_index, write_index

    with tempfile.TemporaryDirectory(prefix="faq-warm-") as scratch:
        for n, kernel in enumerate(_triangle_kernels()):
            seeds = np.arange(seed_count(kernel), dtype=np.int64)
            here = aggregate_seeds(kernel, seeds)  # the driver's kernel (flat form built here)
            path = os.path.join(scratch, f"{n}.faq")
            write_index(for_tasks(kernel), path)  # ... and a task's, its arrays views of a read-only mapping
            there = aggregate_seeds(read_index(path), seeds)
            assert here == there, f"{kernel.ops.name}: {here} on the driver, {there} from the mapped index"
    # One entry a signature, not a set: were the driver's arrays typed apart from the tasks' (writable
    # against read-only), each pair of dtypes would be listed twice.
    return sorted(f"{_dtype(sig[9])} values, {_dtype(sig[4])} keys" for sig in aggregate.signatures)


_WARM_LOCK = threading.Lock()
_WARMED: list = []  # [True] once this process started warming (a worker's: at most once)


def warm_worker() -> None:
    """Load the compiled loop in this process (a Spark worker, after :func:`faq.workers.probe_workers`): numba's import and
    start-up and the commonest signature (int64 values, int32 keys: a count), read from numba's cache.

    What a task's first call of the loop costs otherwise (0.5-1.5 s on two
    idle cores, several seconds on a loaded machine), paid while the worker
    waits for its next task.  Once per process; other signatures load at
    first use.  A failure is left to the task that needs the loop (it meets
    it again and reports it there).
    """
    with _WARM_LOCK:
        if _WARMED:
            return
        _WARMED.append(True)
        try:
            import numpy as np

            from faq.joins import Aggregation
            from faq.joins.compiled import aggregate_seeds, for_tasks
            from faq.joins.kernel import build_kernel
            from faq.semirings import COUNTING
            from faq.semirings.numpy_backend import numpy_ops

            src, dst = np.array([0, 1, 0, 2]), np.array([1, 2, 2, 3])  # one triangle 0→1→2, 0→2
            kernel, seeds, _ = build_kernel([("a", "b"), ("b", "c"), ("a", "c")], [[0, 1, 2]], [([src, dst], None)],
                                            ["a", "b", "c"], ["a", "b", "c"], COUNTING, Aggregation((), COUNTING),
                                            numpy_ops(COUNTING))
            if kernel.compiled:
                aggregate_seeds(for_tasks(kernel), np.arange(seeds, dtype=np.int64))
        except Exception:  # noqa: BLE001 - a warm-up only: the task that runs the loop reports its failure
            pass


def _dtype(array_type: Any) -> str:
    """The element type of a numba array type, as numpy names it (``int32``, ``float64``)."""
    return str(array_type.dtype)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m faq.joins.warm``: warm the cache and say where it is and what it took; exit status 0.

    A failure to compile is reported and exits 0 too: the jobs still run
    (compiling at first use), so setup should not stop on it.
    """
    started = time.perf_counter()
    try:
        signatures = warm_up()
    except Exception as error:  # noqa: BLE001 - setup goes on; the first job compiles instead
        print(f"faq: could not compile the numba kernels ahead of use ({type(error).__name__}: {error}); "
              "the first job compiles them", file=sys.stderr)
        return 0
    if not signatures:
        print("faq: numba is not installed; the numpy kernels run, nothing to compile")
        return 0
    from faq.joins.compiled_loop import aggregate

    stats = aggregate.stats
    compiled, loaded = sum(stats.cache_misses.values()), sum(stats.cache_hits.values())
    print(f"faq: {len(signatures)} numba kernel signatures ready in {stats.cache_path} "
          f"({compiled} compiled, {loaded} loaded from the cache; {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
