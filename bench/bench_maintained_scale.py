"""A maintained feed-forward triangle count at the seeds' scale: build, memory and batch latency at R-MAT 22.

Run from the repository root::

    .venv/bin/python -m bench.bench_maintained_scale                 # R-MAT 22 (~67M edges): 15-25 minutes
    .venv/bin/python -m bench.bench_maintained_scale --scale 14      # a minute's check of the script

Graph: ``rmatN`` (``tools/gen_rmat.py N 16 OUT --seed 1``, cached in bench/data) as its simple
digraph, read and cleaned on the driver (:func:`faq.graphs.edges.prepared_graph`).  Query:
``count() := edge(a,b), edge(a,c), edge(b,c)`` in the counting semiring, maintained with
``placement="driver"`` (its indexes in this Python process).

Measured, in order, in one process on ``local[2]``:

1. the static count end to end from the file (:func:`faq.count_triangles`, directed): the baseline;
2. the first build of the maintained query from the loaded graph, and the driver's resident memory
   before and after it (the state's footprint) and at its peak;
3. ``--tail-batches`` batches of 100 changes, ``--throughput-batches`` batches of 1,000 and
   ``--singles`` single-edge batches, each ``apply`` timed (median, p99, max): half deletions of
   present edges, half insertions of absent edges between endpoints of random present edges (hubs
   are hit as often as real streams hit them);
4. exactness: after the last batch (compactions settled) the maintained count against the one-shot
   engine's count of the current edges (the static job's plan, run on the edges held in memory).

The change stream keeps the initial edges as one sorted int64 array and the few changed ones in
sets (:class:`ScaleChanges`): a Python set of 67M edges would cost ~5 GB in the process measured.

Results: ``bench/results/maintained_rmat22.json`` (``maintained_rmatN.json``) with the command, the
commit and the load average (:class:`bench.common.Run`); a summary on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bench.bench_tail import QUERY, arrow, rss_gib, static_count, summary
from bench.common import (
    RESULTS, Run, graph_path, held_graph, load_average, log, maintained_session, print_summary, seeded_parser
)


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=22)
    p.add_argument("--tail-batches", type=int, default=200, help="batches of 100 changes")
    p.add_argument("--throughput-batches", type=int, default=50, help="batches of 1,000 changes")
    p.add_argument("--singles", type=int, default=200, help="single-edge batches")
    args = p.parse_args(argv)
    if args.out is None:
        args.out = str(RESULTS / f"maintained_rmat{args.scale}.json")
    return args


class ScaleChanges:
    """Random edge changes over a large graph: deletions of initial edges (each at most once),
    insertions of absent edges between endpoints of random initial edges.

    Membership of the initial edges is a binary search in their sorted packed keys; the edges the
    stream inserted or deleted are kept in sets (they are few).
    """

    def __init__(self, src: np.ndarray, dst: np.ndarray, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.src, self.dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        self.initial = np.sort(self.src << 32 | self.dst)
        self.order = self.rng.permutation(len(self.src))
        self.taken = 0
        self.deleted: set[int] = set()
        self.inserted: set[int] = set()

    def _in_initial(self, keys: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(self.initial, keys), len(self.initial) - 1)
        return self.initial[at] == keys

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` changes (src, dst, +1/-1): ``n // 2`` deletions, the rest insertions (a single change alternates)."""
        deletes = n // 2 if n > 1 else int(self.rng.integers(0, 2))
        inserts = n - deletes
        picked = self.order[self.taken:self.taken + deletes]
        self.taken += deletes
        gone_src, gone_dst = self.src[picked], self.dst[picked]
        self.deleted.update((gone_src << 32 | gone_dst).tolist())
        new: list[int] = []
        while len(new) < inserts:
            s = self.src[self.rng.integers(0, len(self.src), 4 * inserts)]
            d = self.dst[self.rng.integers(0, len(self.dst), 4 * inserts)]
            keys = (s << 32 | d)[s != d]
            absent = ~self._in_initial(keys)
            for key in keys[absent].tolist():
                if key not in self.inserted and len(new) < inserts:
                    self.inserted.add(key)
                    new.append(key)
            # an initial edge deleted earlier may come back too
            for key in keys[~absent].tolist():
                if key in self.deleted and len(new) < inserts:
                    self.deleted.discard(key)
                    new.append(key)
        added = np.array(new, dtype=np.int64)
        src = np.concatenate([added >> 32, gone_src])
        dst = np.concatenate([added & 0xFFFFFFFF, gone_dst])
        values = np.concatenate([np.ones(inserts, dtype=np.int64), -np.ones(deletes, dtype=np.int64)])
        return src, dst, values

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """The current edges: the initial ones not deleted, and the inserted ones (an initial edge
        deleted and inserted again is in neither set)."""
        deleted = np.fromiter(self.deleted, dtype=np.int64, count=len(self.deleted))
        kept = self.initial[~np.isin(self.initial, deleted)] if len(deleted) else self.initial
        keys = np.concatenate([kept, np.fromiter(self.inserted, dtype=np.int64, count=len(self.inserted))])
        return keys >> 32, keys & 0xFFFFFFFF


def one_shot_count(src: np.ndarray, dst: np.ndarray) -> tuple[int, float]:
    """The one-shot engine's feed-forward count of the edges ``(src, dst)`` held in memory: (count, seconds)."""
    from faq.factor import Factor
    from faq.insideout import evaluate
    from faq.relation import Relation
    from faq.semirings import get_semiring

    t0 = time.perf_counter()
    rows = Relation.from_arrays({"src": src, "dst": dst, "value": np.ones(len(src), dtype=np.int64)},
                                {"src": "bigint", "dst": "bigint", "value": "bigint"})
    edge = Factor(relation=rows, variables=("src", "dst"), semiring=get_semiring("counting"), value="value", name="edge")
    with evaluate(QUERY, {"edge": edge}) as result:
        count = int(result.scalar())
    return count, time.perf_counter() - t0


def timed_batches(mq, relation, batches: list, single: bool = False) -> dict:
    """Apply each batch (a tuple list for a single change, else Arrow), timing ``apply`` and the count."""
    seconds, flags = [], []
    for src, dst, values in batches:
        change = [(int(src[0]), int(dst[0]), int(values[0]))] if single else arrow(src, dst, values)
        t0 = time.perf_counter()
        mq.apply(edge=change)
        mq.scalar()
        seconds.append(time.perf_counter() - t0)
        flags.append(relation.compacting)
    result = summary(seconds, flags)
    result["changes_per_second"] = round(sum(len(b[0]) for b in batches) / sum(seconds))
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    run = Run("bench_maintained_scale", argv)
    from faq import maintain

    maintained_session()
    path = graph_path(f"rmat{args.scale}")
    static, static_seconds = static_count(path)
    log(f"rmat{args.scale}: static count {static:,} in {static_seconds:.1f} s (end to end from the file)")

    t0 = time.perf_counter()
    graph, held = held_graph(f"rmat{args.scale}")
    load_seconds = time.perf_counter() - t0
    n_edges = len(held["src"])
    changes = ScaleChanges(held["src"], held["dst"], args.seed)
    stream = {"tail": [changes.batch(100) for _ in range(args.tail_batches)],
              "throughput": [changes.batch(1000) for _ in range(args.throughput_batches)],
              "singles": [changes.batch(1) for _ in range(args.singles)]}
    log(f"loaded {n_edges:,} edges in {load_seconds:.1f} s; stream of "
        f"{sum(len(b[0]) for part in stream.values() for b in part):,} changes made")

    before = rss_gib()
    t0 = time.perf_counter()
    mq = maintain(QUERY, {"edge": graph}, placement="driver")
    build_seconds = time.perf_counter() - t0
    after = rss_gib()
    built = mq.scalar()
    assert built == static, (built, static)
    log(f"first build {build_seconds:.1f} s (static {static_seconds:.1f} s); driver RSS {before['rss_gib']} -> "
        f"{after['rss_gib']} GiB")
    relation = mq.state.relations["edge"]

    runs = {}
    for name, batches in stream.items():
        log(f"{name}: {len(batches)} batches")
        runs[name] = timed_batches(mq, relation, batches, single=name == "singles")
        log(f"{name}: median {runs[name]['median_seconds'] * 1e3:.2f} ms, p99 {runs[name]['p99_seconds'] * 1e3:.2f} ms, "
            f"max {runs[name]['max_seconds'] * 1e3:.1f} ms")
    mq.settle()
    final = mq.scalar()
    steady = rss_gib()
    recount, recount_seconds = one_shot_count(*changes.edges())
    assert final == recount, (final, recount)
    log(f"exact: maintained {final:,} = one-shot recount ({recount_seconds:.1f} s)")
    mq.close()

    run["graph"] = {"scale": args.scale, "edges": n_edges, "feed_forward_triangles": static}
    run["static_count_seconds"] = round(static_seconds, 2)
    run["load_seconds"] = round(load_seconds, 2)
    run["first_build_seconds"] = round(build_seconds, 2)
    run["first_build_over_static"] = round(build_seconds / static_seconds, 2)
    run["driver_memory_gib"] = {"before_build": before["rss_gib"], "after_build": after["rss_gib"],
                                "state_footprint": round(after["rss_gib"] - before["rss_gib"], 2),
                                "after_batches": steady["rss_gib"], "peak": rss_gib()["peak_rss_gib"],
                                "note": "the driver's Python process, where placement='driver' keeps the indexes; "
                                        "the peak includes the static count's own in-process join"}
    run["batches"] = {"tail (100 changes)": runs["tail"], "throughput (1,000 changes)": runs["throughput"],
                      "single changes": runs["singles"]}
    run["exactness"] = {"maintained": final, "one_shot_recount": recount, "recount_seconds": round(recount_seconds, 1),
                        "build_equals_static": True}
    run["load_average_during"] = load_average()
    run["total_seconds"] = round(time.perf_counter() - started, 1)
    out = run.save(Path(args.out))

    rows = [("graph", f"rmat{args.scale}: {n_edges:,} edges, {static:,} feed-forward triangles"),
            ("static count / first build", f"{static_seconds:.1f} s / {build_seconds:.1f} s"),
            ("driver RSS before / after build / peak",
             f"{before['rss_gib']} / {after['rss_gib']} / {run.record['driver_memory_gib']['peak']} GiB")]
    rows += [(f"{name}: median / p99 / max", f"{r['median_seconds'] * 1e3:.2f} / {r['p99_seconds'] * 1e3:.2f} / "
              f"{r['max_seconds'] * 1e3:.1f} ms ({r['changes_per_second']:,} changes/s)") for name, r in runs.items()]
    rows.append(("exact", f"yes: {final:,} = one-shot recount"))
    print_summary(rows, {"first_build_no_slower_than_static": build_seconds <= static_seconds}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
