"""What every benchmark shares: where data and results live, timing, the record of a run.

Benchmarks run as modules from the repository root (``python -m bench.bench_cli``),
so they import faq from the checkout without patching ``sys.path``.  Data comes
from the repository (``tests/data``) or is generated (R-MAT graphs by
``tools/gen_rmat.py``, cached in ``bench/data``, which git ignores); nothing is
read from outside the checkout.  Every result file records the command line
that produced it, the machine's load when the run started and when it ended
(the machines are shared: a figure measured under load says so), and the
faq commit.  Also here: graphs by name (:func:`graph_path`; loaded onto the driver by
:func:`held_graph`), the median of timed
runs (:func:`median_seconds`), a cold run and warm ones (:func:`cold_and_warm`),
the summary table (:func:`print_summary`), peak memory of Spark's processes
(:class:`Memory`), progress lines (:func:`log`) and the command line of a benchmark
that draws random data (:func:`seeded_parser`).

Examples
--------
>>> from bench.common import median_seconds
>>> value, seconds = median_seconds(lambda: 42, repeat=3)
>>> value, seconds >= 0
(42, True)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"
GENERATED = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results"

T = TypeVar("T")


# The largest real graph in tests/data (SNAP email-Enron: 36,692 nodes, 367,662 directed edge records,
# 727,044 undirected triangles): the benchmarks' real-world graph, in place of soc-Slashdot0902, which
# lived outside the checkout.
SNAP_GRAPH = "Email-Enron"


def rmat_graph(scale: int, edge_factor: int = 16, seed: int = 1, directory: Path = GENERATED) -> Path:
    """An R-MAT edge list of ``2**scale`` nodes (``tools/gen_rmat.py``), generated once and cached."""
    out = Path(directory) / f"rmat{scale}-{edge_factor}-seed{seed}.txt"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".part")
        subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rmat.py"), str(scale), str(edge_factor),
                        str(partial), "--seed", str(seed)], check=True)
        partial.replace(out)
    return out


def graph_path(name: str) -> Path:
    """The edge list of a named graph: ``rmatN`` (generated, edge factor 16, seed 1) or a graph of
    tests/data by its file name without suffixes (``Email-Enron``, ``wiki-Vote``, ...)."""
    if name.startswith("rmat") and name[4:].isdigit():
        return rmat_graph(int(name[4:]))
    found = sorted(p for p in TEST_DATA.iterdir() if p.name.split(".")[0] == name and "MANIFEST" not in p.name)
    if not found:
        known = sorted({p.name.split(".")[0] for p in TEST_DATA.glob("*.txt*")})
        raise SystemExit(f"unknown graph {name!r}: use rmatN (generated) or one of tests/data: {', '.join(known)}")
    return found[0]


def held_graph(name: str) -> tuple[Any, dict[str, Any]]:
    """A named graph (:func:`graph_path`) as the maintained-query benchmarks load it: its simple digraph
    read and cleaned on the driver (:func:`faq.graphs.edges.prepared_graph`), and the edge arrays the
    driver holds (the factor's :attr:`~faq.factor.Factor.relation`: ``"src"``, ``"dst"``).

    Returns
    -------
    (Factor, dict of str to numpy.ndarray)
    """
    from faq.graphs.edges import prepared_graph

    graph = prepared_graph(str(graph_path(name)), directed=True)
    return graph, graph.relation.arrays


#: Spark settings of the maintained-query benchmarks: few shuffle partitions for two cores, a driver
#: with room for the indexes it holds.
MAINTAINED_SPARK = {"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "8g"}


def maintained_session(master: Optional[str] = None) -> Any:
    """The Spark session of the maintained-query benchmarks (settings :data:`MAINTAINED_SPARK`).

    Parameters
    ----------
    master : str, optional
        Spark master URL; default faq's (:func:`faq.spark.get_session`).

    Examples
    --------
    >>> MAINTAINED_SPARK["spark.sql.shuffle.partitions"]
    '4'
    >>> spark = maintained_session("local[2]")  # doctest: +SKIP
    """
    from faq.spark import get_session

    return get_session(master=master, config=MAINTAINED_SPARK)


def seeded_parser(seed: int = 7, out: Optional[str] = None, **options: Any) -> argparse.ArgumentParser:
    """The command line of a benchmark that draws random data: ``--seed`` and ``--out`` there already.

    Parameters
    ----------
    seed : int
        Default of ``--seed``, the seed of the random data.
    out : str, optional
        Default of ``--out``, the file the results are written to (None: the
        benchmark decides, or writes none).
    **options
        Passed to :class:`argparse.ArgumentParser` (``description``, ``formatter_class``).

    Returns
    -------
    argparse.ArgumentParser
        To add the benchmark's own options to.

    Examples
    --------
    >>> parser = seeded_parser(description="a benchmark")
    >>> args = parser.parse_args(["--seed", "3"])
    >>> args.seed, args.out
    (3, None)
    """
    parser = argparse.ArgumentParser(**options)
    parser.add_argument("--seed", type=int, default=seed, help="seed of the random data (default: %(default)s)")
    parser.add_argument("--out", default=out, help="file the results are written to (JSON)")
    return parser


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


def cold_and_warm(
    fn: Callable[[], T], repeat: int, each: Optional[Callable[[T, T], None]] = None
) -> tuple[T, float, list[float]]:
    """Run ``fn`` once cold, then ``repeat`` times warm: (the cold run's result, its seconds, the warm runs' seconds).

    ``each(warm_result, cold_result)`` sees every warm run's result after its
    timing stopped: to check it against the cold one, or to release it.

    Examples
    --------
    >>> seen = []
    >>> value, cold, warm = cold_and_warm(lambda: 42, repeat=2, each=lambda again, first: seen.append(again))
    >>> value, cold >= 0, len(warm), seen
    (42, True, 2, [42, 42])
    """
    t0 = time.perf_counter()
    value = fn()
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        again = fn()
        warm.append(time.perf_counter() - t0)
        if each is not None:
            each(again, value)
    return value, cold, warm


def timed_checked(fn: Callable[[], T], repeat: int, check: Callable[[T], None], name: str) -> dict[str, Any]:
    """The cold run and ``repeat`` warm runs of ``fn`` (:func:`cold_and_warm`), ``check`` called on every
    result: seconds as a record (cold apart; median, min and max of the warm runs), logged under ``name``.

    >>> record = timed_checked(lambda: 3, 2, lambda got: None, "three")
    >>> sorted(record), record["runs"]
    (['cold_seconds', 'max_seconds', 'median_seconds', 'min_seconds', 'runs'], 2)
    """
    value, cold, warm = cold_and_warm(fn, repeat, lambda again, first: check(again))
    check(value)
    out = {"cold_seconds": round(cold, 4), "median_seconds": round(statistics.median(warm), 4),
           "min_seconds": round(min(warm), 4), "max_seconds": round(max(warm), 4), "runs": len(warm)}
    log(f"  {name}: {out['median_seconds']} s (min {out['min_seconds']}, max {out['max_seconds']})")
    return out


def turn_order(ways: Iterable[str], round_: int) -> list[str]:
    """The ways' order in round ``round_`` of a bench where they take turns: one further on each round.

    >>> turn_order(["a", "b", "c"], 0), turn_order(["a", "b", "c"], 4)
    (['a', 'b', 'c'], ['b', 'c', 'a'])
    """
    names = list(ways)
    start = round_ % len(names) if names else 0
    return names[start:] + names[:start]


def interleaved_rounds(ways: dict[str, Callable[[], T]],
                       repeat: int) -> tuple[dict[str, list[float]], dict[str, float], T]:
    """Each of ``ways`` once a round, one cold round then ``repeat`` warm ones (a shared machine's load falls
    on every way alike): (the warm seconds by way, the cold seconds by way, the one answer they all gave).
    Each round starts one way further on (round ``r`` runs them from the ``r``-th): what a way leaves behind
    (the JVM's garbage after a large collect, memory the process must touch again) falls on each of the
    others in turn, not always on the one after it.  Raises AssertionError when two answers differ.

    >>> runs, cold, answer = interleaved_rounds({"a": lambda: 7, "b": lambda: 7}, 2)
    >>> {name: len(seconds) for name, seconds in runs.items()}, sorted(cold), answer
    ({'a': 2, 'b': 2}, ['a', 'b'], 7)
    """
    runs: dict[str, list[float]] = {name: [] for name in ways}
    answers = set()
    for round_ in range(repeat + 1):
        for name in turn_order(ways, round_):
            way = ways[name]
            started = time.perf_counter()
            answers.add(way())
            runs[name].append(round(time.perf_counter() - started, 3))
    if len(answers) != 1:
        raise AssertionError(f"the ways disagree: {answers}")
    cold = {name: values.pop(0) for name, values in runs.items()}
    return runs, cold, answers.pop()


def print_summary(rows: Sequence[tuple[str, str]], targets_met: dict, out: Path) -> None:
    """The summary on stdout: a ``name  value`` line a row (names aligned), the targets met, the results' path.

    Examples
    --------
    >>> print_summary([("a", "1 s"), ("longer", "2 s")], {"fast": True}, Path("r.json"))
    a       1 s
    longer  2 s
    targets met: {'fast': True}
    results in r.json
    """
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"targets met: {targets_met}")
    print(f"results in {out}")


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


# --- memory (Linux /proc; elsewhere the peaks are NaN) ----------------------------------------


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


def proc_mb(pid: int, name: str, fields: Sequence[str]) -> dict[str, float]:
    """The ``fields`` of ``/proc/PID/NAME`` (``status``, ``smaps_rollup``: lines ``Field: N kB``) in MiB;
    a field not found (or a process gone) is left out."""
    found: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/{name}") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in fields:
                    found[key] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return found


def _hwm_mb(pid: int) -> float:
    return proc_mb(pid, "status", ("VmHWM",)).get("VmHWM", float("nan"))


def _reset_hwm(pid: int) -> None:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


class Memory:
    """Peak RSS (VmHWM) of the driver JVM, its Python workers and this process, resettable."""

    def __init__(self, spark) -> None:
        self.jvm = spark.sparkContext._gateway.proc.pid  # classic Spark: the JVM this process started

    def reset(self) -> None:
        for pid in [self.jvm, os.getpid(), *descendants(self.jvm)]:
            _reset_hwm(pid)

    def peaks(self) -> dict:
        workers = [_hwm_mb(p) for p in descendants(self.jvm)]
        workers = [w for w in workers if not math.isnan(w)]
        return {
            "jvm_peak_mb": round(_hwm_mb(self.jvm)),
            "python_workers_peak_mb": round(max(workers)) if workers else None,
            "python_workers_sum_peak_mb": round(sum(workers)) if workers else None,
            "driver_python_peak_mb": round(_hwm_mb(os.getpid())),
        }


def machine_pss_mb(jvm: int) -> float:
    """Summed proportional set size (private pages plus a 1/n share of pages n processes map) of the
    driver JVM, the Python workers below it and this process: the machine's memory for a job, a file
    every worker maps counted once (VmHWM counts it in each)."""
    return sum(proc_mb(p, "smaps_rollup", ("Pss",)).get("Pss", 0.0) for p in [jvm, os.getpid(), *descendants(jvm)])


class PeakSampler:
    """Peaks of ``measure()`` (a dict of numbers) while a ``with`` block runs, sampled by a thread.

    ``before`` holds the levels at entry, ``peaks`` the highest seen per key
    (every ``interval`` seconds, and once more at exit).
    """

    def __init__(self, measure: Callable[[], dict], interval: float = 0.2) -> None:
        self.measure = measure
        self.interval = interval
        self.before: dict = {}
        self.peaks: dict = {}
        self._done = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _sample(self) -> None:
        for key, value in self.measure().items():
            self.peaks[key] = max(self.peaks.get(key, value), value)

    def __enter__(self) -> "PeakSampler":
        self.before = self.measure()
        self.peaks = dict(self.before)
        self._done.clear()

        def loop() -> None:
            while not self._done.wait(self.interval):
                self._sample()

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()


def log(message: str) -> None:
    """Progress on stderr (results go to the JSON file and stdout)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)
