"""Compile every numba kernel of faq into numba's on-disk cache: ``python -m faq.warm``, once after installing.

faq's compiled loops (the broadcast task's join, the delta rules' join,
the as-of searches, the truss peeling and its repair) are compiled by numba
on first use and cached on disk.  Compiling them all takes about half a
minute to a minute on two cores; without this command the first job that
meets a kernel pays for it, inside that job (in a Spark worker it looks
like a slow join: the first triangle count placed on the executors took
about 15 s instead of 9 s after a clean install).  Jobs that stay on the
driver with numpy (small inputs, ``--placement auto``) compile nothing.

Each module of :data:`ENTRY_POINTS` warms its own kernels when run with
``python -m`` (and says where the cache went); this module runs them in
turn, each in a fresh interpreter as ``make venv`` runs it, and exits
non-zero only if one of them crashed (a kernel that fails to compile is
reported by its module and left to the first job).

``pip install`` cannot run anything after installing a wheel, so a user who
installs faq that way runs ``python -m faq.warm`` once, as the user who runs
the jobs; ``make venv`` runs it for the repository's ``.venv``.  Where the
cache lives (``__pycache__`` beside each kernel's module when writable,
else the user's ``~/.cache/numba``, or ``$NUMBA_CACHE_DIR``) and what makes
an entry stale is in :mod:`faq.joins.warm`.  One subtlety stays with ``make``:
the delta loop inlines the static loop's helpers, but numba keys an entry by
the kernel's own file only, so in a clone where
``faq/joins/compiled_loop.py`` was edited, ``make`` first deletes
``faq/incremental/__pycache__/delta_loop.*`` (an install from a wheel
writes every file anew, which numba notices).

Then it measures this machine's rates for the cost models that choose
where a step on Spark data runs (:mod:`faq.calibration`; skipped with
``--no-calibrate``): it starts Spark, so it takes 20-40 s more.

Examples
--------
>>> from faq.warm import ENTRY_POINTS
>>> type(ENTRY_POINTS).__name__, ENTRY_POINTS[0]
('tuple', 'faq.joins.warm')
>>> command("faq.graphs.truss")[1:]
['-m', 'faq.graphs.truss']
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Optional, Sequence

__all__ = ["ENTRY_POINTS", "command", "warm_all", "calibrate", "main"]

#: The modules that compile faq's numba kernels when run with ``python -m``, in the order they run:
#: the broadcast task's loop first (the delta loop calls its helpers), the triangle kernels (dense-row sums, then
#: one relation's oriented count), then the delta rules' loop,
#: the as-of searches, the truss peeling and the maintained truss's repair, the edge-list parser.
ENTRY_POINTS: tuple[str, ...] = (
    "faq.joins.warm",
    "faq.joins.dense_rows",
    "faq.incremental.warm",
    "faq.asof.warm",
    "faq.graphs.truss",
    "faq.graphs.truss_index",
    "faq.io.int_pairs",
)


def command(module: str) -> list[str]:
    """The command that warms ``module``'s kernels: this interpreter, ``-m``, the module."""
    return [sys.executable, "-m", module]


def warm_all(modules: Sequence[str] = ENTRY_POINTS) -> dict[str, int]:
    """Run each of ``modules`` with ``python -m`` in a fresh interpreter, in turn; their exit statuses.

    Each prints its own report (stdout and stderr are this process's).  A
    fresh interpreter each, as ``make`` ran them: a kernel is compiled under
    its module's name and cached as the jobs will load it, and one module's
    failure cannot leave another half-imported.

    Parameters
    ----------
    modules : sequence of str
        Module names, :data:`ENTRY_POINTS` by default.

    Returns
    -------
    dict of str to int
        Each module's exit status, in the order run (0: warmed, or a compile
        failure it reported and left to the first job).
    """
    statuses = {}
    for module in modules:
        sys.stdout.flush()
        statuses[module] = subprocess.run(command(module), check=False).returncode
    return statuses


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m faq.warm``: warm every kernel; exit status 0 unless a module crashed."""
    parser = argparse.ArgumentParser(
        prog="python -m faq.warm",
        description="Compile faq's numba kernels into numba's on-disk cache (once after installing; "
                    "about half a minute to a minute on two cores), so that no job compiles them.")
    parser.add_argument("--list", action="store_true", help="print the modules run, one a line, and exit")
    parser.add_argument("--no-calibrate", action="store_true",
                        help="skip measuring this machine's rates for the cost models (python -m faq.calibration, "
                             "which starts Spark: 20-40 s)")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(ENTRY_POINTS))
        return 0
    started = time.perf_counter()
    statuses = warm_all()
    failed = [module for module, status in statuses.items() if status != 0]
    if failed:
        print(f"faq: warming failed in {', '.join(failed)} (see above); those kernels compile in the first job "
              "that needs them", file=sys.stderr)
        return 1
    print(f"faq: numba kernels of {len(statuses)} modules ready ({time.perf_counter() - started:.1f} s)")
    if not args.no_calibrate:
        calibrate()
    return 0


def calibrate() -> int:
    """Measure and store this machine's rates (:mod:`faq.calibration`) in a fresh interpreter; its exit status.

    A failure (no Java, a session that cannot start) is reported and leaves the cost models' constants as
    fitted: it fails nothing else.
    """
    started = time.perf_counter()
    sys.stdout.flush()
    status = subprocess.run([*command("faq.calibration"), "--repeat", "5"], check=False,
                            stdout=subprocess.DEVNULL).returncode
    if status != 0:
        print("faq: calibrating this machine failed (see above); plans are priced with the constants as fitted",
              file=sys.stderr)
    else:
        print(f"faq: this machine's rates measured for the cost models ({time.perf_counter() - started:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
