"""Fresh memory without waiting for huge pages: numpy's huge-page advice off around allocation-heavy work.

numpy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``)
on every array of 4 MiB or more.  Where the kernel's ``defrag`` setting is
``madvise`` -- the default of common distributions, and this machine's --
the first touch of such an array's pages waits while the kernel compacts
memory into 2 MiB pages; on a machine whose memory is fragmented by the page
cache that wait is most of the work.  Measured here (2 cores, 24 GiB,
numpy 2.4): building one part of a fixpoint's edges on the executors
(:func:`faq.recursive.executor_edges.build_part`, 2.49M edges of R-MAT 18:
a unique, two searches, a sort) took 2.4 s in a Spark task and 3.1 s as the
first build of a fresh process, 1.0 s and 1.2 s with the advice off; the
next five builds of one process, whose allocator hands back pages already
touched, took 0.84-1.53 s with the advice (median 0.90 s) and 1.1-1.83 s
without it (median 1.20 s).

Huge pages pay back where a kernel reads large arrays at random (the
worst-case optimal join's probes: in-process triangles on R-MAT 18 ran ~30%
slower with the advice off for the whole process), so the advice is not
switched off globally: :func:`plain_pages` turns it off for a block whose
work is building fresh arrays once -- the executor tasks that build and
walk a fixpoint's edge parts, which run in short-lived Python workers that
touch fresh memory every job, and an index a worker builds for its machine
(:func:`faq.joins.mapped.build_once`: the arrays are written to a file,
freed, and the file is mapped; the probes read the mapping, to which the
advice does not apply) -- and restores it after.  Feed-forward triangles on
R-MAT 18 from Parquet, index built on the executors
(``spark.faq.indexBuild=executors``, ``local-cluster[2,1,2048]``), warm
median of 3, taking turns with the tree before: 13.54 / 12.33 s before,
11.84 / 10.42 s with the build in :func:`plain_pages`.  On the driver it
was tried around the fixpoint's index build and left out: a fresh process's
first build gains, but a process that builds again reuses pages its
allocator already holds, and there the advice pays (the medians above).  The setting is the
process's (numpy has no per-thread advice): a block on one thread changes
the advice for arrays other threads allocate meanwhile, which costs time,
never correctness.

Examples
--------
>>> with plain_pages():
...     advised_inside = huge_page_advice()
>>> advised_inside, huge_page_advice() == ADVICE_AT_IMPORT
(False, True)
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from faq.process_switch import ProcessSwitch

__all__ = ["plain_pages", "huge_page_advice", "ADVICE_AT_IMPORT"]


def _setter() -> Optional[Callable[[bool], bool]]:
    """numpy's switch of its huge-page advice (returns the previous setting), or None where it has none.

    A private name of numpy's (its own tests use it), looked up, not imported: a numpy without it
    leaves the advice alone.
    """
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):  # numpy 2, numpy 1
        try:
            switch = getattr(importlib.import_module(module), "_set_madvise_hugepage", None)
        except ImportError:
            continue
        if switch is not None:
            return switch
    return None


_SET = _setter()


def huge_page_advice() -> bool:
    """Whether numpy advises huge pages for large arrays now (False where it cannot).

    >>> isinstance(huge_page_advice(), bool)
    True
    """
    if _SET is None:
        return False
    current = _SET(True)
    _SET(current)
    return bool(current)


def _advise(value: bool) -> None:
    if _SET is not None:
        _SET(value)


#: The advice when faq was imported (numpy's default, or ``NUMPY_MADVISE_HUGEPAGE`` from the environment).
ADVICE_AT_IMPORT = huge_page_advice()
_advice = ProcessSwitch(huge_page_advice, _advise, off=False)


@contextmanager
def plain_pages() -> Iterator[None]:
    """numpy's huge-page advice off inside the block; as it was when the last block of any thread ends."""
    with _advice.off():
        yield
