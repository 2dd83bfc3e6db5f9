"""What checking a batch before it touches a state costs: 1,000-change batches, with and without the check.

Run from the repository root::

    .venv/bin/python -m bench.batch_check                       # 40 batches per target, both targets
    .venv/bin/python -m bench.batch_check --batches 40 --out bench/results/batch_check_before.json

Graph: SNAP email-Eu-core (tests/data), loaded in this process as its simple
digraph (no self-loops).  Targets: the issue's query, ``count() :=
edge(a,b), edge(b,c), edge(a,c)`` maintained by :func:`faq.maintain`
(batches as Arrow tables ``(src, dst, value)``), and the same triangles
tracked by :func:`faq.track` (batches ``(src, dst, diff)``).  Each batch holds
1,000 changes: 500 deletions of present edges and 500 insertions of absent
ones, so the graph keeps its size.

When :mod:`faq.incremental.batch_check` exists, every batch is applied to two
identical targets, one with the check and one with the check replaced by a
pass-through, in alternating order (the pair shares the shared machine's
load), and the check alone is timed on every batch; without the module (the
code before the check) to one target, as ``before``.  Reported: median and
p99 of ``apply`` per mode, the median of the paired ratios, and the check's
own median, with the command, the commit and the load average
(:class:`bench.common.Run`).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import RESULTS, ROOT, TEST_DATA, Run, log, maintained_session, seeded_parser

QUERY = "count() := edge(a,b), edge(b,c), edge(a,c)"


def simple_digraph() -> np.ndarray:
    """email-Eu-core's distinct directed pairs without self-loops, as an ``(m, 2)`` int64 array."""
    with gzip.open(TEST_DATA / "email-Eu-core.txt.gz", "rt") as f:
        pairs = np.loadtxt(f, dtype=np.int64, comments="#").reshape(-1, 2)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0)


class Changes:
    """Batches of half deletions of present edges, half insertions of absent ones (the graph kept in step)."""

    def __init__(self, pairs: np.ndarray, nodes: int, seed: int) -> None:
        self.present = {(int(a), int(b)) for a, b in pairs}
        self.nodes = nodes
        self.rng = np.random.default_rng(seed)

    def next(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        listed = list(self.present)
        gone = [listed[i] for i in self.rng.choice(len(listed), size // 2, replace=False)]
        new: set[tuple[int, int]] = set()
        while len(new) < size - size // 2:
            a, b = (int(x) for x in self.rng.integers(0, self.nodes, 2))
            if a != b and (a, b) not in self.present:
                new.add((a, b))
        self.present.difference_update(gone)
        self.present.update(new)
        rows = gone + sorted(new)
        diff = np.array([-1] * len(gone) + [1] * len(new), dtype=np.int64)
        src = np.array([r[0] for r in rows], dtype=np.int64)
        dst = np.array([r[1] for r in rows], dtype=np.int64)
        return src, dst, diff


def checker_switch() -> tuple[Any, Callable[[bool], None]]:
    """The check module (None before it existed) and a function turning its check on or off."""
    try:
        from faq.incremental import batch_check
    except ImportError:
        return None, lambda on: None
    original = batch_check.check_batch

    def switch(on: bool) -> None:
        batch_check.check_batch = original if on else (lambda table, *args, **kwargs: table)

    return batch_check, switch


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {"batches": len(seconds), "median_ms": 1e3 * statistics.median(seconds), "p99_ms": 1e3 * p99,
            "mean_ms": 1e3 * statistics.fmean(seconds)}


def run_target(name: str, make: Callable[[], Any], table_of: Callable[..., Any], spec: Callable[[Any], Any],
               pairs: np.ndarray, nodes: int, args: Any) -> dict[str, Any]:
    """Time ``args.batches`` batches of one kind of target (:func:`_timed`)."""
    return _timed(name, make, table_of, spec, pairs, nodes, args,
                  (lambda t, table: t.apply({"edge": table})) if name == "maintain" else (lambda t, table: t.apply(table)))


def _timed(name: str, make: Callable[[], Any], table_of: Callable[..., Any], spec: Callable[[Any], Any],
           pairs: np.ndarray, nodes: int, args: Any, apply: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """Each batch applied to two identical targets, one with the check and one without, in alternating
    order (a pair shares the machine's load); before the check existed, to one target."""
    module, switch = checker_switch()
    modes = ("with_check", "without_check") if module else ("before",)
    targets = {mode: make() for mode in modes}
    changes = Changes(pairs, nodes, args.seed)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    check_alone: list[float] = []
    for i in range(args.warmup + args.batches):
        table = table_of(*changes.next(args.size))
        for mode in (modes if i % 2 == 0 else modes[::-1]):
            switch(mode != "without_check")
            started = time.perf_counter()
            apply(targets[mode], table)
            seconds = time.perf_counter() - started
            switch(True)
            if i >= args.warmup:
                times[mode].append(seconds)
        if i >= args.warmup and module is not None:
            check_alone.append(spec(table))
    for target in targets.values():
        target.close()
    out: dict[str, Any] = {mode: summary(s) for mode, s in times.items()}
    if module is not None:
        out["check_alone"] = summary(check_alone)
        ratios = [a / b for a, b in zip(times["with_check"], times["without_check"])]
        out["paired_ratio_median"] = statistics.median(ratios)
        out["overhead_median_percent"] = 100 * (out["with_check"]["median_ms"] / out["without_check"]["median_ms"] - 1)
    log(f"{name}: {out}")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = seeded_parser(out="bench/results/batch_check.json", description=__doc__)
    parser.add_argument("--batches", type=int, default=40, help="timed batches (each to both targets)")
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--size", type=int, default=1000, help="changes per batch (half deletions)")
    parser.add_argument("--targets", default="maintain,track")
    args = parser.parse_args(argv)
    import pyarrow as pa

    import faq

    run = Run("batch_check", argv)
    spark = maintained_session("local[2]")
    pairs = simple_digraph()
    nodes = int(pairs.max()) + 1
    edges = [(int(a), int(b)) for a, b in pairs]
    run["graph"] = {"name": "email-Eu-core", "edges": len(pairs), "nodes": nodes}
    run["batch"] = {"size": args.size, "deletions": args.size // 2, "batches": args.batches, "warmup": args.warmup}

    def timed_check(kind: str) -> Callable[[Any], float]:
        def check(table: Any) -> float:
            from faq.incremental.batch_check import check_batch, edge_spec, factor_spec

            spec = factor_spec(["x1", "x2"], {}, "bigint") if kind == "maintain" else edge_spec()
            started = time.perf_counter()
            check_batch(table, spec, relation="edge", target="bench")
            return time.perf_counter() - started
        return check

    results = {}
    if "maintain" in args.targets:
        results["maintain"] = run_target(
            "maintain", lambda: faq.maintain(QUERY, edge=edges),
            lambda s, d, v: pa.table({"x1": s, "x2": d, "value": v}), timed_check("maintain"), pairs, nodes, args)
    if "track" in args.targets:
        graph = spark.createDataFrame(edges, "src bigint, dst bigint")
        results["track"] = run_target(
            "track", lambda: faq.track(graph, "(a)->(b); (b)->(c); (a)->(c)"),
            lambda s, d, v: pa.table({"src": s, "dst": d, "diff": v}), timed_check("track"), pairs, nodes, args)
    run["results"] = results
    run["head"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    before = RESULTS / "batch_check_before.json"
    if before.exists() and Path(args.out).resolve() != before.resolve():  # the run before the check existed
        earlier = json.loads(before.read_text())
        run["before_the_check"] = {k: earlier.get(k) for k in ("command", "commit", "load_average_start",
                                                                 "load_average_end", "results")}
    log(f"wrote {run.save(Path(args.out))}")


if __name__ == "__main__":
    main()
