"""A maintained truss under 1,000-edge batches (half deletions) against decomposing from scratch after each.

For each graph (SNAP graphs of tests/data, R-MAT ``--scale``): 10% of its edges are held out, the rest
given to ``faq.truss(..., maintained=True)`` (a path's arrays, no Spark), then ``--batches`` batches of
``--batch-size`` changes, as tuples ``(src, dst, diff)``, in two workloads:

* **churn**: half deletions of present edges, half insertions of held-out edges (the graph's own edges
  coming back: they close many triangles, the hard case for insertion);
* **uniform**: the same deletions, insertions of node pairs drawn uniformly (few triangles closed).

After every batch the baseline decomposes the current edges from scratch (``faq.graphs.truss.decompose``
on the arrays, the same compiled loops), timed in the same run, and the maintained trussness is checked
equal to it.  Reported per graph and workload: the batch's median, p99 and max seconds, the baseline's
median, their ratio, and how many batches fell back to recomputing (their work budget ran out).

    python -m bench.bench_truss_maintained                   # SNAP graphs and R-MAT 18, 10 batches each
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench.common import RESULTS, Run, log, print_summary, rmat_graph

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SNAP = ("email-Eu-core.txt.gz", "ca-GrQc.txt", "wiki-Vote.txt.gz", "p2p-Gnutella31.txt.gz", "facebook_combined.txt.gz",
        "Email-Enron.txt.gz")
WORKLOADS = ("churn", "uniform")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=18, help="R-MAT scale (0 skips)")
    p.add_argument("--graphs", nargs="*", default=list(SNAP))
    p.add_argument("--batches", type=int, default=10)
    p.add_argument("--rmat-batches", type=int, default=4, help="batches on R-MAT (each baseline takes ~30 s)")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--workloads", nargs="*", default=list(WORKLOADS), choices=WORKLOADS)
    p.add_argument("--out", default=str(RESULTS / "truss_maintained.json"))
    return p.parse_args(argv)


def tail(values: list[float]) -> dict[str, float]:
    a = np.asarray(values)
    return {"median": round(float(np.median(a)), 5), "p99": round(float(np.percentile(a, 99)), 5),
            "max": round(float(a.max()), 5)}


def one(path: Path, workload: str, batches: int, size: int, seed: int = 0) -> dict:
    from faq.graphs.maintained_truss import MaintainedTruss
    from faq.graphs.truss import decompose, undirected_edges

    rng = np.random.default_rng(seed)
    src, dst = undirected_edges(str(path))
    held = rng.random(len(src)) < 0.10
    present = {(int(a), int(b)) for a, b in zip(src[~held], dst[~held])}
    out = list(zip(src[held].tolist(), dst[held].tolist()))
    nodes = np.unique(np.concatenate([src, dst]))
    t0 = time.perf_counter()
    maintained = MaintainedTruss(pa.table({"src": src[~held], "dst": dst[~held]}))
    build = time.perf_counter() - t0
    seconds, baseline, recomputed, changed, work = [], [], 0, [], []
    for _ in range(batches):
        listed = list(present)
        deletes = [listed[i] for i in rng.choice(len(listed), size // 2, replace=False)]
        if workload == "churn":
            picks = rng.choice(len(out), size // 2, replace=False)
            inserts = [out[i] for i in picks]
            keep = np.ones(len(out), dtype=bool)
            keep[picks] = False
            out = [out[i] for i in np.flatnonzero(keep)] + deletes
        else:
            inserts = []
            while len(inserts) < size // 2:
                a, b = (int(v) for v in rng.choice(nodes, 2))
                if a != b and (min(a, b), max(a, b)) not in present:
                    inserts.append((min(a, b), max(a, b)))
        batch = [(a, b, -1) for a, b in deletes] + [(a, b, 1) for a, b in inserts]
        t0 = time.perf_counter()
        change = maintained.apply(batch)
        seconds.append(time.perf_counter() - t0)
        recomputed += bool(change.info["recomputed"])
        changed.append(change.info["changed"])
        work.append(change.info["work"])
        present = (present - set(deletes)) | set(inserts)
        pairs = np.array(sorted(present), dtype=np.int64)
        t0 = time.perf_counter()
        expected = decompose(pairs[:, 0], pairs[:, 1])
        baseline.append(time.perf_counter() - t0)
        table = maintained.table()
        assert np.array_equal(table.column("trussness").to_numpy(), expected.trussness), f"{path.name}: differs"
    entry = {"edges": len(present), "build_seconds": round(build, 3), "batches": batches, "batch_size": size,
             "batch_seconds": tail(seconds), "recompute_seconds": tail(baseline),
             "recompute_over_batch_median": round(float(np.median(baseline) / np.median(seconds)), 1),
             "recomputed_batches": recomputed, "changed_edges_median": int(np.median(changed)),
             "work_median": int(np.median(work)), "checked": True}
    log(f"{path.name} {workload}: batch median {entry['batch_seconds']['median']} s, recompute "
        f"{entry['recompute_seconds']['median']} s ({entry['recompute_over_batch_median']}x), "
        f"{recomputed}/{batches} fell back")
    return entry


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_truss_maintained", argv)
    paths = [(DATA / g, args.batches) for g in args.graphs]
    if args.scale:
        paths.append((rmat_graph(args.scale), args.rmat_batches))
    graphs = run.record.setdefault("graphs", {})
    for path, batches in paths:
        for workload in args.workloads:
            graphs.setdefault(path.name, {})[workload] = one(path, workload, batches, args.batch_size)
            run.save(Path(args.out))
    ratios = [w["recompute_over_batch_median"] for g in graphs.values() for w in g.values()]
    run["targets_met"] = {"at_least_100x_recompute_everywhere": all(r >= 100 for r in ratios),
                          "at_least_100x_recompute_somewhere": any(r >= 100 for r in ratios)}
    out = run.save(Path(args.out))
    print_summary([(f"{name} {w}", f"batch {e['batch_seconds']['median']} s, recompute "
                                   f"{e['recompute_seconds']['median']} s ({e['recompute_over_batch_median']}x)")
                   for name, g in graphs.items() for w, e in g.items()], run.record["targets_met"], out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
