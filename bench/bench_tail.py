"""The tail of a maintained query's batch latencies: compaction off the batch path, against the old way.

Run from the repository root::

    .venv/bin/python -m bench.bench_tail            # R-MAT 17: the issue's run (about half an hour)
    .venv/bin/python -m bench.bench_tail --quick    # R-MAT 14, fewer changes: a few minutes' check

Graph: ``rmat17`` (``tools/gen_rmat.py 17 16 OUT --seed 1``, cached in bench/data) as its simple
digraph, read and cleaned on the driver (:func:`faq.graphs.edges.prepared_graph`).  Query:
``count() := edge(a,b), edge(a,c), edge(b,c)`` (feed-forward triangles) in the counting semiring,
maintained with ``placement="driver"``; batches are Arrow tables made from numpy arrays (single
changes: a tuple).  Changes: half deletions of present edges (a random order of the initial
edges), half insertions of absent edges whose source and destination are the endpoints of random
present edges -- so high-degree nodes are hit as often as real streams hit them.

Measured, in order, in one process on ``local[2]``:

1. the static count of the graph (:func:`faq.count_triangles`, directed) and the first build of
   the maintained query;
2. **tail**: ``--tail-changes`` changes in batches of ``--tail-batch``, each ``apply`` timed
   (median, p99, max; batches while a compaction was in flight counted apart) -- first with
   compaction inside the batch that fills the overlay (``spark.faq.compaction=batch``: the code
   path before background compaction, the baseline), then with the same stream on a fresh
   maintained query with compaction in the background;
3. **throughput**: ``--throughput-changes`` changes in batches of ``--throughput-batch``: changed
   edges per second of ``apply`` time, the same batches on two queries built from the tail's end
   state (in-batch compaction, the baseline; then background compaction);
4. **single changes**: ``--singles`` batches of one edge: median and p99;
5. **exactness**: the maintained count against a recount by the static job of the current edges
   (written to a file and read back as step 1 reads the graph) after the tail runs, halfway
   through the throughput runs and at the end; both tail runs must agree after every batch.

Results: ``bench/results/tail.json`` (``tail_quick.json`` with ``--quick``) with the command, the
commit and the load average (:class:`bench.common.Run`); a summary on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import (
    RESULTS,
    Run,
    graph_path,
    held_graph,
    load_average,
    log,
    maintained_session,
    print_summary,
    proc_mb,
    seeded_parser,
)

QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"
TARGETS = {"p99_over_median": 3.0, "max_over_median": 10.0, "changes_per_second": 100_000,
           "single_change_median_seconds": 0.00025}


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=17)
    p.add_argument("--tail-changes", type=int, default=100_000)
    p.add_argument("--tail-batch", type=int, default=100)
    p.add_argument("--throughput-changes", type=int, default=1_000_000)
    p.add_argument("--throughput-batch", type=int, default=1000)
    p.add_argument("--singles", type=int, default=2000)
    p.add_argument("--settle-singles", action="store_true",
                   help="wait for a background fold in flight before the single changes (their latency alone, "
                        "not shared with a fold)")
    p.add_argument("--no-baseline", action="store_true", help="skip the tail run with in-batch compaction")
    p.add_argument("--quick", action="store_true", help="R-MAT 14, 30,000 tail changes, 100,000 throughput changes")
    args = p.parse_args(argv)
    if args.quick:
        args.scale, args.tail_changes, args.throughput_changes, args.singles = 14, 30_000, 100_000, 300
    if args.out is None:
        args.out = str(RESULTS / ("tail_quick.json" if args.quick else "tail.json"))
    return args


class Changes:
    """Random edge changes: deletions of present edges, insertions of absent ones between hub-weighted endpoints."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.src, self.dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        self.present = set((self.src << 32 | self.dst).tolist())
        self.order = self.rng.permutation(len(self.src))  # deletion order: each initial edge at most once
        self.taken = 0

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` changes (src, dst, +1/-1): ``n // 2`` deletions, the rest insertions (one single change
        alternates)."""
        deletes = n // 2 if n > 1 else int(self.rng.integers(0, 2))
        inserts = n - deletes
        if self.taken + deletes > len(self.order):
            raise SystemExit("the stream ran out of initial edges to delete; ask for fewer changes")
        picked = self.order[self.taken:self.taken + deletes]
        self.taken += deletes
        gone_src, gone_dst = self.src[picked], self.dst[picked]
        for key in (gone_src << 32 | gone_dst).tolist():
            self.present.discard(key)
        new_src: list[int] = []
        new_dst: list[int] = []
        while len(new_src) < inserts:
            a = self.src[self.rng.integers(0, len(self.src), 2 * inserts)].tolist()
            b = self.dst[self.rng.integers(0, len(self.dst), 2 * inserts)].tolist()
            for s, d in zip(a, b):
                key = s << 32 | d
                if s != d and key not in self.present:
                    self.present.add(key)
                    new_src.append(s)
                    new_dst.append(d)
                    if len(new_src) == inserts:
                        break
        src = np.concatenate([np.array(new_src, dtype=np.int64), gone_src])
        dst = np.concatenate([np.array(new_dst, dtype=np.int64), gone_dst])
        values = np.concatenate([np.ones(inserts, dtype=np.int64), -np.ones(deletes, dtype=np.int64)])
        return src, dst, values

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        keys = np.fromiter(self.present, dtype=np.int64, count=len(self.present))
        return keys >> 32, keys & 0xFFFFFFFF


def arrow(src, dst, values):
    import pyarrow as pa

    return pa.table({"src": src, "dst": dst, "value": values})


def static_count(path) -> tuple[int, float]:
    """The static job (:func:`faq.count_triangles`, feed-forward) on an edge-list file: (count, seconds)."""
    from faq.graphs.triangles import triangle_count

    t0 = time.perf_counter()
    count = int(triangle_count(str(path), directed=True).count)
    return count, time.perf_counter() - t0


def recount(changes: Changes, directory: str) -> tuple[int, float]:
    """The static job on the stream's current edges (written to a file as the graph was)."""
    return recount_edges(changes.edges(), directory)


def recount_edges(edges: tuple[np.ndarray, np.ndarray], directory: str) -> tuple[int, float]:
    """The static job on the edges ``(src, dst)`` (written to a file as the graph was)."""
    import pandas as pd

    src, dst = edges
    path = Path(directory) / "current.txt"
    pd.DataFrame({"s": src, "d": dst}).to_csv(path, sep=" ", header=False, index=False)
    return static_count(path)


def build(graph):
    from faq import maintain

    t0 = time.perf_counter()
    mq = maintain(QUERY, {"edge": graph}, placement="driver")
    return mq, time.perf_counter() - t0


def compaction(background: bool) -> None:
    """Maintained queries built from now on fold their overlays in a background thread, or (the
    baseline) inside the batch that fills them: the session's ``spark.faq.compaction``."""
    from faq.spark import get_session

    get_session().conf.set("spark.faq.compaction", "thread" if background else "batch")


def rebuilt(edges: tuple[np.ndarray, np.ndarray], background: bool):
    """A maintained query built from the edges ``(src, dst)`` held on the driver: (query, seconds, edge relation)."""
    from faq.factor import Factor
    from faq.relation import Relation
    from faq.semirings import get_semiring

    compaction(background)
    src, dst = edges
    ones = np.ones(len(src), dtype=np.int64)
    rows = Relation.from_arrays({"src": src, "dst": dst, "value": ones},
                                {"src": "bigint", "dst": "bigint", "value": "bigint"})
    mq, seconds = build(Factor(relation=rows, variables=("src", "dst"), semiring=get_semiring("counting"), value="value",
                               name="edge"))
    return mq, seconds, mq.state.relations["edge"]


def rss_gib() -> dict:
    """This process's resident memory now and at its peak (GiB; Linux ``/proc``): the maintained
    query's indexes live in this (the driver's Python) process with ``placement="driver"``."""
    mib = proc_mb(os.getpid(), "status", ("VmRSS", "VmHWM"))
    return {"rss_gib": round(mib.get("VmRSS", 0.0) / 1024, 2), "peak_rss_gib": round(mib.get("VmHWM", 0.0) / 1024, 2)}


def summary(seconds: list[float], compacting: list[bool]) -> dict:
    a = np.asarray(seconds)
    flags = np.asarray(compacting, dtype=bool)
    median = float(np.median(a))
    out = {"batches": len(a), "median_seconds": round(median, 6), "p99_seconds": round(float(np.percentile(a, 99)), 6),
           "max_seconds": round(float(a.max()), 6), "mean_seconds": round(float(a.mean()), 6),
           "p99_over_median": round(float(np.percentile(a, 99)) / median, 2),
           "max_over_median": round(float(a.max()) / median, 2),
           "largest_ten_seconds": [round(float(x), 4) for x in np.sort(a)[-10:][::-1]]}
    if flags.any():
        out["batches_during_compaction"] = int(flags.sum())
        out["median_seconds_during_compaction"] = round(float(np.median(a[flags])), 6)
    return out


def timed_apply(mq, relation, change, seconds: list[float], flags: list[bool]) -> int:
    """Apply ``change`` and read the new count (returned); its seconds go to ``seconds``, and whether
    ``relation`` was compacting then to ``flags``."""
    t0 = time.perf_counter()
    mq.apply(edge=change)
    count = mq.scalar()
    seconds.append(time.perf_counter() - t0)
    flags.append(relation.compacting)
    return count


def tail_run(graph, stream: list, background: bool) -> tuple[dict, list[int]]:
    """The tail batches on a fresh maintained query; the count after every batch."""
    compaction(background)
    try:
        before = rss_gib()
        mq, build_seconds = build(graph)
        after = rss_gib()
        relation = mq.state.relations["edge"]
        seconds, flags, counts = [], [], []
        for k, batch in enumerate(stream):
            counts.append(timed_apply(mq, relation, arrow(*batch), seconds, flags))
            if (k + 1) % 250 == 0:
                log(f"  {'background' if background else 'in-batch'}: {k + 1} batches, median so far "
                    f"{statistics.median(seconds) * 1e3:.2f} ms, max {max(seconds) * 1e3:.0f} ms")
        result = summary(seconds, flags)
        result.update({"build_seconds": round(build_seconds, 2), "compactions": relation.compactions,
                       "driver_rss_gib_before_build": before["rss_gib"], "driver_rss_gib_after_build": after["rss_gib"],
                       "driver_rss_gib_after_batches": rss_gib()["rss_gib"],
                       "compaction": "background" if background else "in the batch (baseline)"})
        mq.settle()
        mq.close()
        return result, counts
    finally:
        compaction(True)


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    run = Run("bench_tail", argv)
    maintained_session()
    graph, held = held_graph(f"rmat{args.scale}")
    n_edges = len(held["src"])
    static, static_seconds = static_count(graph_path(f"rmat{args.scale}"))
    log(f"rmat{args.scale}: {n_edges} edges, {static} feed-forward triangles; static count {static_seconds:.1f} s")
    run["graph"] = {"scale": args.scale, "edges": n_edges, "feed_forward_triangles": static}
    run["targets"] = TARGETS

    # One stream for everything (the tail runs replay the same batches).
    changes = Changes(held["src"], held["dst"], args.seed)
    tail = [changes.batch(args.tail_batch) for _ in range(args.tail_changes // args.tail_batch)]
    after_tail = changes.edges()
    checks = []
    with tempfile.TemporaryDirectory() as tmp:
        tail_count, tail_recount_seconds = recount(changes, tmp)
        runs = {}
        counts = {}
        if not args.no_baseline:
            log(f"tail, compaction in the batch (baseline): {len(tail)} batches of {args.tail_batch}")
            runs["baseline"], counts["baseline"] = tail_run(graph, tail, background=False)
        log(f"tail, compaction in the background: {len(tail)} batches of {args.tail_batch}")
        runs["background"], counts["background"] = tail_run(graph, tail, background=True)
        if "baseline" in counts:
            assert counts["baseline"] == counts["background"], "the two tail runs disagree"
        assert counts["background"][-1] == tail_count, (counts["background"][-1], tail_count)
        checks.append({"after": "tail", "maintained": counts["background"][-1], "recount": tail_count,
                       "recount_seconds": round(tail_recount_seconds, 1)})
        new = runs["background"]
        log(f"tail: median {new['median_seconds'] * 1e3:.2f} ms, p99 {new['p99_seconds'] * 1e3:.2f} ms, "
            f"max {new['max_seconds'] * 1e3:.1f} ms" + (f"; baseline max {runs['baseline']['max_seconds'] * 1e3:.0f} ms"
                                                         if "baseline" in runs else ""))

        # Throughput: the same batches on two maintained queries built from the tail's end state (the
        # baseline compacts in the batch); single changes then continue the background one.
        n_batches = args.throughput_changes // args.throughput_batch
        stream = [changes.batch(args.throughput_batch) for _ in range(n_batches // 2)]
        middle_edges = changes.edges()
        stream += [changes.batch(args.throughput_batch) for _ in range(n_batches - n_batches // 2)]
        middle, middle_seconds = recount_edges(middle_edges, tmp)
        throughputs = {}
        for name in (["baseline"] if not args.no_baseline else []) + ["background"]:
            mq, rebuild_seconds, relation = rebuilt(after_tail, name == "background")
            assert mq.scalar() == tail_count
            log(f"throughput ({name}): {args.throughput_changes} changes in batches of {args.throughput_batch}")
            spent, flags, total = [], [], 0
            for k, batch in enumerate(stream):
                if k == n_batches // 2:  # a checkpoint halfway (not timed)
                    assert mq.scalar() == middle, (name, mq.scalar(), middle)
                table = arrow(*batch)
                timed_apply(mq, relation, table, spent, flags)
                total += table.num_rows
            result = summary(spent, flags)
            result.update({"changes": total, "apply_seconds": round(sum(spent), 2), "rebuild_seconds":
                           round(rebuild_seconds, 2), "changes_per_second": round(total / sum(spent)),
                           "compactions": relation.compactions})
            throughputs[name] = result
            log(f"throughput ({name}): {result['changes_per_second']:,} changed edges/s "
                f"(median batch {result['median_seconds'] * 1e3:.1f} ms, max {result['max_seconds'] * 1e3:.0f} ms)")
            if name == "baseline":
                mq.settle()
                mq.close()
        checks.append({"after": f"{n_batches // 2} throughput batches", "maintained": middle, "recount": middle,
                       "recount_seconds": round(middle_seconds, 1), "both runs": not args.no_baseline})
        throughput = throughputs["background"]
        compaction(True)

        if args.settle_singles:
            mq.settle()
        log(f"single changes: {args.singles}")
        singles, flags = [], []
        for _ in range(args.singles):
            s, d, v = changes.batch(1)
            timed_apply(mq, relation, [(int(s[0]), int(d[0]), int(v[0]))], singles, flags)
        single = summary(singles, flags)
        log(f"single changes: median {single['median_seconds'] * 1e3:.3f} ms")
        mq.settle()
        final = mq.scalar()
        final_count, final_seconds = recount(changes, tmp)
        assert final == final_count, (final, final_count)
        checks.append({"after": "throughput and single changes", "maintained": final, "recount": final_count,
                       "recount_seconds": round(final_seconds, 1)})
        mq.close()

    base = runs.get("baseline")
    run["static_count_seconds"] = round(static_seconds, 2)
    run["first_build_seconds"] = runs["background"]["build_seconds"]
    run["first_build_over_static"] = round(runs["background"]["build_seconds"] / static_seconds, 2)
    run["tail"] = {"changes": args.tail_changes, "batch": args.tail_batch, **runs}
    if base:
        run.record["tail"]["baseline_max_over_background_max"] = round(base["max_seconds"] / new["max_seconds"], 1)
        run.record["tail"]["baseline_p99_over_background_p99"] = round(base["p99_seconds"] / new["p99_seconds"], 2)
    run["throughput"] = {"batch": args.throughput_batch, **throughputs}
    run["single_changes"] = single
    run["exactness"] = {"checks": checks, "tail_runs_agree_after_every_batch": base is not None}
    run["targets_met"] = {
        "p99_over_median": new["p99_over_median"] <= TARGETS["p99_over_median"],
        "max_over_median": new["max_over_median"] <= TARGETS["max_over_median"],
        "changes_per_second": throughput["changes_per_second"] >= TARGETS["changes_per_second"],
        "single_change_median_seconds": single["median_seconds"] <= TARGETS["single_change_median_seconds"],
    }
    run["driver_memory"] = {**rss_gib(), "note": "the driver's Python process (indexes live here with "
                            "placement='driver'); the peak includes the static counts' in-process join"}
    run["load_average_during"] = load_average()
    run["total_seconds"] = round(time.perf_counter() - started, 1)
    out = run.save(Path(args.out))

    rows = [("graph", f"rmat{args.scale}: {n_edges:,} edges"),
            ("static count / first build", f"{static_seconds:.1f} s / {runs['background']['build_seconds']:.1f} s")]
    for name, r in runs.items():
        rows.append((f"tail ({name}): median / p99 / max",
                     f"{r['median_seconds'] * 1e3:.2f} / {r['p99_seconds'] * 1e3:.2f} / {r['max_seconds'] * 1e3:.1f} ms"))
    rows += [(f"throughput ({name}), batches of {args.throughput_batch}", f"{r['changes_per_second']:,} changes/s, "
              f"max batch {r['max_seconds'] * 1e3:.0f} ms") for name, r in throughputs.items()]
    rows += [
             ("single change, median", f"{single['median_seconds'] * 1e3:.3f} ms"),
             ("exact", "yes (recounts agree)")]
    print_summary(rows, run.record["targets_met"], out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
