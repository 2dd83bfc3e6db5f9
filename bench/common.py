"""What every benchmark shares: where data and results live, timing, the record of a run.

Benchmarks run as modules from the repository root (``python -m bench.bench_cli``),
so they import faq from the checkout without patching ``sys.path``.  Data comes
from the repository (``tests/data``) or is generated (R-MAT graphs by
``tools/gen_rmat.py``, cached in ``bench/data``, which git ignores); nothing is
read from outside the checkout.  Every result file records the command line
that produced it, the machine's load when the run started and when it ended
(the machines are shared: a figure measured under load says so), and the
faq commit.

Examples
--------
>>> from bench.common import median_seconds
>>> value, seconds = median_seconds(lambda: 42, repeat=3)
>>> value, seconds >= 0
(42, True)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"
GENERATED = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results"

T = TypeVar("T")


def rmat_graph(scale: int, edge_factor: int = 16, seed: int = 1) -> Path:
    """An R-MAT edge list of ``2**scale`` nodes (``tools/gen_rmat.py``), generated once and cached."""
    out = GENERATED / f"rmat{scale}-{edge_factor}-seed{seed}.txt"
    if not out.exists():
        GENERATED.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".part")
        subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rmat.py"), str(scale), str(edge_factor),
                        str(partial), "--seed", str(seed)], check=True)
        partial.replace(out)
    return out


def median_seconds(fn: Callable[[], T], repeat: int = 3) -> tuple[T, float]:
    """Run ``fn`` ``repeat`` times; its result (every run must agree) and the median wall seconds."""
    results: list[Any] = []
    times: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        results.append(fn())
        times.append(time.perf_counter() - t0)
    if any(r != results[0] for r in results):
        raise RuntimeError(f"runs disagree: {results}")
    return results[0], statistics.median(times)


def load_average() -> Optional[float]:
    """The 1-minute load average (None where the system does not report it)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover
        return None


def commit() -> Optional[str]:
    """The checkout's commit (with ``+`` when the tree has uncommitted changes)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover
        return None


class Run:
    """The record of one benchmark run, written to ``bench/results/NAME.json`` by :meth:`save`."""

    def __init__(self, name: str, argv: Optional[list[str]] = None) -> None:
        self.name = name
        self.record: dict[str, Any] = {
            "command": "python -m bench." + name + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:])),
            "commit": commit(),
            "cpus": os.cpu_count(),
            "load_average_start": load_average(),
        }

    def __setitem__(self, key: str, value: Any) -> None:
        self.record[key] = value

    def save(self, path: Optional[Path] = None) -> Path:
        """Write the record (with the load average at the end) and return its path."""
        self.record["load_average_end"] = load_average()
        path = path or RESULTS / f"{self.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.record, indent=2, default=str) + "\n")
        return path


def log(message: str) -> None:
    """Progress on stderr (results go to the JSON file and stdout)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)
