"""Undirected triangles against the in-memory graph libraries igraph and networkit, same run, same edges.

Run from the repository root (after ``make bench-deps``, which installs the peers)::

    .venv/bin/python -m bench.bench_peers                        # R-MAT 16 and 20
    .venv/bin/python -m bench.bench_peers --scales 16 --repeat 5 --out /tmp/peers.json

Issue 50 asks faq to be ahead of every in-memory peer on R-MAT 16 and 20 (``tools/gen_rmat.py N 16
--seed 1``, cached in bench/data).  Every side starts from the same edge arrays in memory (``src``,
``dst`` int64, every record of the file: self-loops and repeats included, as read by pyarrow), and
every count must equal every other:

* ``faq``: ``faq.count_triangles(table)`` on the Arrow table of the two columns: faq cleans (drops
  self-loops, folds both directions and repeats), orients and counts (no Spark: the rows are held);
* ``igraph``: ``igraph.Graph(n, edges)`` and ``simplify()`` (the cleaning faq does), then the count
  from ``transitivity_undirected()`` and the connected triples (Σ C(deg, 2)), as the issue measured
  it; timed built and counted (``igraph_total``) and the count alone on the graph built
  (``igraph_count``);
* ``networkit``: ``networkit.Graph`` from the arrays (``GraphFromCoo``), ``removeSelfLoops`` and
  ``removeMultiEdges``, then ``sum(TriangleEdgeScore) / 3``; timed the same two ways.

One cold run of each side, then ``--repeat`` warm runs interleaved (faq, igraph, networkit); medians,
p99 and max of the warm runs.  Results: JSON in ``--out`` with the command, the commit and the load.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import RESULTS, Run, log, rmat_graph


def read_edges(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every edge record of a generated edge list (one ``src dst`` pair a line, no comments) as int64 arrays."""
    from pyarrow import csv

    table = csv.read_csv(path, read_options=csv.ReadOptions(column_names=["src", "dst"]),
                         parse_options=csv.ParseOptions(delimiter=" "),
                         convert_options=csv.ConvertOptions(column_types={"src": "int64", "dst": "int64"}))
    return table.column("src").to_numpy(), table.column("dst").to_numpy()


def igraph_sides(src: np.ndarray, dst: np.ndarray) -> dict[str, Callable[[], int]]:
    import igraph as ig

    n = int(max(src.max(), dst.max())) + 1

    def built():
        g = ig.Graph(n=n, edges=np.column_stack([src, dst]).tolist(), directed=False)
        g.simplify()
        return g

    def count(g) -> int:
        degrees = np.asarray(g.degree(), dtype=np.float64)
        triples = float((degrees * (degrees - 1) / 2).sum())
        return int(round(g.transitivity_undirected() * triples / 3))

    graph = built()
    return {"igraph_total": lambda: count(built()), "igraph_count": lambda: count(graph)}


def networkit_sides(src: np.ndarray, dst: np.ndarray) -> dict[str, Callable[[], int]]:
    import networkit as nk

    n = int(max(src.max(), dst.max())) + 1

    def built():
        g = nk.GraphFromCoo((np.ones(len(src), dtype=np.float64), (src.astype(np.uint64), dst.astype(np.uint64))),
                            n=n, directed=False, weighted=False)
        g.removeSelfLoops()
        g.removeMultiEdges()
        return g

    def count(g) -> int:
        g.indexEdges()
        return int(round(sum(nk.sparsification.TriangleEdgeScore(g).run().scores()) / 3))

    graph = built()
    return {"networkit_total": lambda: count(built()), "networkit_count": lambda: count(graph)}


def _stats(seconds: list[float]) -> dict[str, Any]:
    warm = np.array(seconds[1:]) if len(seconds) > 1 else np.array(seconds)
    return {"cold": round(seconds[0], 4), "median": round(float(np.median(warm)), 4),
            "p99": round(float(np.percentile(warm, 99)), 4), "max": round(float(warm.max()), 4),
            "runs": len(warm)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[16, 20])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS / "peers.json"))
    args = parser.parse_args(argv)
    import pyarrow as pa

    import faq

    run = Run("peers", argv)
    rows = []
    for scale in args.scales:
        src, dst = read_edges(rmat_graph(scale))
        table = pa.table({"src": src, "dst": dst})
        sides: dict[str, Callable[[], int]] = {"faq": lambda: faq.count_triangles(table).count}
        for name, make in (("igraph", igraph_sides), ("networkit", networkit_sides)):
            try:
                sides.update(make(src, dst))
            except ImportError:
                log(f"{name} is not installed (make bench-deps): left out")
        times: dict[str, list[float]] = {name: [] for name in sides}
        counts = set()
        for _ in range(args.repeat + 1):  # the first round cold, the rest warm, every side in turn
            for name, fn in sides.items():
                started = time.perf_counter()
                counts.add(fn())
                times[name].append(time.perf_counter() - started)
        if len(counts) != 1:
            raise AssertionError(f"R-MAT {scale}: the counts differ: {counts}")
        row: dict[str, Any] = {"graph": f"rmat{scale}", "edge_records": len(src), "triangles": counts.pop(),
                               **{name: _stats(values) for name, values in times.items()}}
        for name in sides:
            if name != "faq":
                row[f"faq_over_{name}"] = round(row["faq"]["median"] / row[name]["median"], 3)
        log(f"R-MAT {scale}: " + ", ".join(f"{name} {row[name]['median']} s" for name in sides))
        rows.append(row)
    run["rows"] = rows
    run["faq_ahead_of_every_peer"] = all(value <= 1.0 for row in rows for key, value in row.items()
                                         if key.startswith("faq_over_"))
    log(f"wrote {run.save(Path(args.out))}")


if __name__ == "__main__":
    main()
