"""The one way faq compiles a loop: numba's ``njit``, cached on disk, the GIL released.

Every compiled kernel of faq (the joins' loop, the delta rules' loop, the
as-of search, the truss's counting, peeling and repair) goes through
:func:`compiled`, so they share one set of options:

* ``cache=True`` -- a fresh process (a CLI command, a Spark worker) loads the
  machine code from ``__pycache__`` instead of compiling it again
  (``python -m faq.warm`` fills that cache once);
* ``nogil=True`` -- a kernel runs while other Python threads (a background
  compaction, Spark's progress reporter, a second driver thread) go on;
* ``inline=True`` only for small helpers called per element from another
  kernel, where a call's overhead would show.

Modules whose import must stay cheap (numba takes ~0.4 s to import) ask for
their kernels on first use with :func:`kernels`: compiled once per process,
the tuple kept by :func:`functools.cache` (no module state of ours).

Where numba is missing (it is a dependency; a worker image may lack it),
:data:`COMPILED` is False and the functions run as plain Python: right, slow.

Examples
--------
The joins' loop is made with :func:`compiled`; the truss's loops with :func:`kernels`:

>>> from faq.joins.compiled_loop import apply_operation      # code 1: multiply
>>> int(apply_operation(1, 6, 7)), COMPILED
(42, True)
>>> from faq.graphs import truss
>>> truss._kernels() is truss._kernels()                     # compiled once a process
True
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Callable, TypeVar

__all__ = ["COMPILED", "compiled", "kernels", "start_numba", "warm_main"]

#: Whether numba is importable here (else every kernel runs as plain Python).
COMPILED = importlib.util.find_spec("numba") is not None

F = TypeVar("F", bound=Callable)


def compiled(function: F, *, inline: bool = False) -> F:
    """``function`` compiled by numba with faq's options (see the module); itself without numba.

    Parameters
    ----------
    function : callable
        A function numba's nopython mode accepts.
    inline : bool
        Compile it into each caller (numba inlines it before LLVM sees it): for
        per-element helpers of other kernels.
    """
    if not COMPILED:  # pragma: no cover - numba is a dependency
        return function
    import numba

    if inline:
        return numba.njit(cache=True, nogil=True, inline="always")(function)
    return numba.njit(cache=True, nogil=True)(function)


@functools.cache
def kernels(*functions: Callable) -> tuple:
    """``functions`` compiled (:func:`compiled`) on the first call, the same tuple every later call.

    For modules that must not import numba when they are imported: they
    call ``kernels(loop_a, loop_b)`` where the loops run.
    """
    return tuple(compiled(f) for f in functions)


def _next(value):  # pragma: no cover - compiled
    return value + 1


def start_numba() -> bool:
    """numba imported and its CPU target made ready, as the first kernel of a process would; False without numba.

    The first kernel a process loads, even from numba's cache, first initialises numba's target: 1-3 s
    on this machine, most of it numba importing scipy.linalg to find BLAS (``numba.np.linalg.ensure_blas``).
    Loading the smallest kernel here lets a caller start that on a thread of its own
    (:func:`faq.prefetch.run_in_background`) while it reads files, before its own kernels are needed.

    >>> start_numba() == COMPILED
    True
    """
    if not COMPILED:  # pragma: no cover - numba is a dependency
        return False
    return kernels(_next)[0](1) == 2


def warm_main(module: str, compiled_text: str, plain_text: str, what: str) -> None:
    """What ``python -m MODULE`` does for a module with kernels (``python -m faq.warm`` runs them in turn):
    its ``warm_up()`` run under the package's name (which later imports use, so numba's cache is theirs), one
    line said, and exit status 0 even when compiling failed -- setup goes on and the first job compiles.

    ``compiled_text`` is said when ``warm_up()`` is true, ``plain_text`` when false (no numba), and on an
    error ``faq: could not compile <what> ahead of use (<error>)`` on stderr.

    >>> try:
    ...     warm_main("faq.io.int_pairs", "compiled", "no numba", "the edge-list parser")
    ... except SystemExit as done:
    ...     print("exit status", done.code)
    compiled
    exit status 0
    """
    import importlib
    import sys

    try:
        print(compiled_text if importlib.import_module(module).warm_up() else plain_text)
    except Exception as error:  # noqa: BLE001 - see above
        print(f"faq: could not compile {what} ahead of use ({error})", file=sys.stderr)
    sys.exit(0)
