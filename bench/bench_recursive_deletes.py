"""Maintained fixpoints under mixed insert / delete batches: trimming vs recomputation.

An R-MAT graph (default scale 16, edge factor 18: about 1.07M edges after
duplicates and loops are dropped; edge factor 16 gives 0.95M), weights random
1..100, and a stream of batches of ``--batch-size`` changes (half deletions of
existing edges, half insertions of new pairs), for shortest paths
(``min_plus``), widest paths (``max_min``), reachability (``boolean``) and
connected components.  Per batch, the maintained fixpoint's incremental
``apply`` (trimming, on the driver) is timed; on every ``--baseline-every``-th
batch, in the same run and on the same current graph, so are

* a full driver recomputation (:meth:`MaintainedFixpoint.recompute`: the
  fixpoint solved from scratch on the resident edges, as ``recompute=True``
  does), and
* scipy.sparse.csgraph's recomputation from the current edge list (CSR built,
  then ``dijkstra`` / ``breadth_first_order`` / ``connected_components``;
  scipy has no widest-path routine, so widest paths have no scipy baseline).

Exactness: on every baseline batch the maintained answer is compared with
scipy's (distances, reachable set, component labels as smallest ids) and the
driver recomputation must change nothing.  Results: medians, p99 and max per
problem, in ``bench/results/recursive_deletes.json``.

``--placement executors`` keeps the fixpoint on Spark instead (there a batch
with a deletion is a recomputation on Spark, and the baseline recomputation
is Spark's too); ``--delete-fraction 0`` makes the batches insertions only.

Run from the repository root::

    python -m bench.bench_recursive_deletes                 # the full run (~1M edges)
    python -m bench.bench_recursive_deletes --scale 12 --batches 5 --out /tmp/x.json   # a quick check
    python -m bench.bench_recursive_deletes --placement executors --scale 14 --batch-size 100 \
        --batches 6 --baseline-every 2 --problems min_plus --out bench/results/recursive_executors.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, log, rmat_graph, seeded_parser

PROBLEMS = ("min_plus", "max_min", "boolean", "components")


def parse_args(argv=None) -> argparse.Namespace:
    parser = seeded_parser(seed=1, out=str(RESULTS / "recursive_deletes.json"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--edge-factor", type=int, default=18)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--baseline-every", type=int, default=4, help="time the baselines on every k-th batch")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--placement", choices=("driver", "executors"), default="driver")
    parser.add_argument("--delete-fraction", type=float, default=0.5, help="of each batch's changes")
    return parser.parse_args(argv)


def stats(seconds: list[float]) -> dict:
    if not seconds:
        return {}
    a = np.asarray(seconds)
    return {"n": len(a), "median": round(float(np.median(a)), 5), "p99": round(float(np.percentile(a, 99)), 5),
            "max": round(float(a.max()), 5), "mean": round(float(a.mean()), 5)}


class Graph:
    """The current edge list as numpy arrays with an alive mask (for scipy), and its pairs in a dict (to draw)."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, nodes: int, undirected: bool):
        self.nodes = nodes
        self.undirected = undirected
        if undirected:  # one row per undirected pair (a pair may come both ways)
            pairs, first = np.unique(np.stack([np.minimum(src, dst), np.maximum(src, dst)], axis=1), axis=0,
                                     return_index=True)
            src, dst, weight = pairs[:, 0], pairs[:, 1], weight[first]
        self.src, self.dst, self.weight = src.copy(), dst.copy(), weight.copy()
        self.alive = np.ones(len(src), dtype=bool)
        self.index = {self._key(u, v): i for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist()))}

    def _key(self, u: int, v: int) -> tuple:
        return (min(u, v), max(u, v)) if self.undirected else (u, v)

    def batch(self, rng: np.random.Generator, size: int, delete_fraction: float = 0.5) -> tuple[list, list]:
        """Deletions of existing edges (half by default), the rest insertions of new pairs (weights 1..100)."""
        live = np.flatnonzero(self.alive)
        deleted = int(size * delete_fraction)
        chosen = live[rng.choice(len(live), size=deleted, replace=False)]
        deletes = [(int(self.src[i]), int(self.dst[i])) for i in chosen]
        self.alive[chosen] = False
        for u, v in deletes:
            del self.index[self._key(u, v)]
        inserts = []
        while len(inserts) < size - deleted:
            u, v = (int(x) for x in rng.integers(0, self.nodes, size=2))
            k = self._key(u, v)
            if u != v and k not in self.index:
                self.index[k] = len(self.src) + len(inserts)
                inserts.append((u, v, float(rng.integers(1, 101))))
        self.src = np.concatenate([self.src, [u for u, _, _ in inserts]])
        self.dst = np.concatenate([self.dst, [v for _, v, _ in inserts]])
        self.weight = np.concatenate([self.weight, [w for _, _, w in inserts]])
        self.alive = np.concatenate([self.alive, np.ones(len(inserts), dtype=bool)])
        return inserts, deletes

    def csr(self):
        """The current graph as scipy's CSR matrix (what a scipy recomputation starts from)."""
        from scipy.sparse import csr_matrix

        a = self.alive
        return csr_matrix((self.weight[a], (self.src[a], self.dst[a])), shape=(self.nodes, self.nodes))


def scipy_answer(problem: str, matrix, source: int):
    """scipy's recomputation: {node: value} as the maintained fixpoint reports it (None: no routine)."""
    from scipy.sparse.csgraph import breadth_first_order, connected_components, dijkstra

    if problem == "min_plus":
        dist = dijkstra(matrix, directed=True, indices=source)
        reached = np.flatnonzero(np.isfinite(dist))
        return dict(zip(reached.tolist(), dist[reached].tolist()))
    if problem == "boolean":
        order = breadth_first_order(matrix, source, directed=True, return_predecessors=False)
        return {int(n): True for n in order}
    if problem == "components":
        _, labels = connected_components(matrix, directed=False)
        smallest = np.full(labels.max() + 1, np.iinfo(np.int64).max)
        np.minimum.at(smallest, labels, np.arange(len(labels)))
        return {n: int(smallest[labels[n]]) for n in range(len(labels))}
    return None


def run_problem(problem: str, src, dst, weight, nodes: int, args, rng) -> dict:
    import os

    from faq.io.updates import UpdateBatch
    from faq.recursive import MaintainedFixpoint

    import pandas as pd

    components = problem == "components"
    degree = np.bincount(src, minlength=nodes)
    source = int(np.argmax(degree))
    edges = pd.DataFrame({"src": src, "dst": dst, "weight": weight})
    t0 = time.perf_counter()
    if components:
        m = MaintainedFixpoint.components(edges, placement=args.placement)
    else:
        m = MaintainedFixpoint.paths(edges, source, problem, placement=args.placement)
    build = time.perf_counter() - t0
    graph = Graph(src, dst, weight, nodes, components)
    log(f"{problem}: built in {build:.2f} s, {m.size} node(s) with a value, {m.edge_rows} edge row(s); "
        f"{m.explain().splitlines()[-1]}")
    incremental, trimmed, changed, driver, scipy_total, scipy_solve, checks = [], [], [], [], [], [], []
    recomputed = 0
    for k in range(1, args.batches + 1):
        inserts, deletes = graph.batch(rng, args.batch_size, args.delete_fraction)
        batch = UpdateBatch(f"batch {k}", inserts=tuple(inserts), deletes=tuple(deletes))
        t0 = time.perf_counter()
        change = m.apply(batch)
        incremental.append(time.perf_counter() - t0)
        trimmed.append(change.info["trimmed"])
        changed.append(len(change))
        recomputed += bool(change.info["recomputed"])
        if k % args.baseline_every:
            continue
        t0 = time.perf_counter()
        again = m.recompute()
        driver.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        matrix = graph.csr()
        t1 = time.perf_counter()
        expected = scipy_answer(problem, matrix, source)
        t2 = time.perf_counter()
        if expected is not None:
            scipy_total.append(t2 - t0)
            scipy_solve.append(t2 - t1)
        table = m.table()
        got = dict(zip(table.column("node").to_pylist(), table.column("value").to_pylist()))
        if components:  # scipy's matrix holds every id below 2^scale; the fixpoint only those seen
            expected = {n: expected[n] for n in got}
        ok = len(again) == 0 and (expected is None or got == expected)
        checks.append(ok)
        log(f"{problem} batch {k}: {incremental[-1] * 1000:.1f} ms incremental ({trimmed[-1]} trimmed, "
            f"{changed[-1]} changed), {driver[-1]:.2f} s recompute on the {m.placement}, "
            f"{(scipy_total[-1] if expected is not None else float('nan')):.2f} s scipy; exact: {ok}")
        if not ok:
            raise SystemExit(f"{problem}: the maintained answer differs after batch {k}")
    speedup = float(np.median(driver) / np.median(incremental)) if driver else None
    result = {
        "source": None if components else source,
        "placement": m.placement,
        "build_seconds": round(build, 3),
        "nodes_with_value": m.size,
        "edge_rows": m.edge_rows,
        "deletions": m.deletions,
        "incremental_batch_seconds": stats(incremental),
        # the first batch with a deletion also builds the reverse view (dst, src) of the edge index
        "incremental_first_batch_seconds": round(incremental[0], 4),
        "incremental_after_first_seconds": stats(incremental[1:]),
        "incremental_each_ms": [round(x * 1000, 1) for x in incremental],
        "driver_recompute_seconds": stats(driver),  # m.recompute(): on Spark when the placement is the executors
        "recompute_placement": m.placement,
        "scipy_recompute_seconds": stats(scipy_total) or "scipy has no widest-path routine",
        "scipy_solve_only_seconds": stats(scipy_solve) or None,
        "trimmed_nodes_per_batch": {"median": float(np.median(trimmed)), "max": int(max(trimmed)),
                                    "mean": round(float(np.mean(trimmed)), 1)},
        "changed_nodes_per_batch": {"median": float(np.median(changed)), "max": int(max(changed))},
        "batches_recomputed": recomputed,
        "exact_checks": f"{sum(checks)}/{len(checks)} batches equal to scipy and to a recomputation "
                        f"on the {m.placement}",
        "speedup_vs_driver_recompute_median": round(speedup, 1) if speedup else None,
        "speedup_vs_scipy_median": round(float(np.median(scipy_total) / np.median(incremental)), 1)
        if scipy_total else None,
        "meets_10x_vs_full_fixpoint": bool(speedup and speedup >= 10),
    }
    result["load_average_after"] = round(os.getloadavg()[0], 2)
    m.close()
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("bench_recursive_deletes", argv)
    path = rmat_graph(args.scale, args.edge_factor, args.seed)
    import pandas as pd

    table = pd.read_csv(path, sep=" ", header=None, names=["src", "dst"], dtype=np.int64, comment="#")
    src, dst = table["src"].to_numpy(), table["dst"].to_numpy()
    nodes = 1 << args.scale
    rng = np.random.default_rng(args.seed)
    weight = rng.integers(1, 101, size=len(src)).astype(np.float64)
    log(f"{path.name}: {len(src)} edges over {nodes} node ids")
    run["graph"] = {"file": path.name, "scale": args.scale, "edge_factor": args.edge_factor, "edges": len(src),
                    "weights": "uniform integers 1..100"}
    deleted = int(args.batch_size * args.delete_fraction)
    run["batch"] = {"size": args.batch_size, "deletions": deleted,
                    "insertions": args.batch_size - deleted, "batches": args.batches,
                    "baseline_every": args.baseline_every}
    results = {}
    for problem in args.problems.split(","):
        results[problem] = run_problem(problem, src, dst, weight, nodes, args, np.random.default_rng(args.seed + 7))
        run["problems"] = results
        run.save(Path(args.out))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
