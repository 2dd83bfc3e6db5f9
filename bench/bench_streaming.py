"""Structured Streaming into a maintained query: seconds per micro-batch, source to sink.

The feed-forward triangle count ``count() := edge(a,b), edge(a,c), edge(b,c)``
of R-MAT ``--scale`` (default 17, its simple digraph) is maintained on the
driver (:func:`faq.maintain`) and fed by a Structured Streaming
query (:meth:`~faq.incremental.MaintainedQuery.stream`) reading Parquet
files of changes, one file a micro-batch (``maxFilesPerTrigger=1``): each
``--batch-size`` rows (default 10,000), half deletions of present edges and
half insertions of absent pairs whose endpoints are drawn from existing
edges' endpoints (so hubs are hit), as ``src, dst, value`` (value +1 / -1).
The answer's change of every version goes to a Parquet sink.

Measured per micro-batch, from Spark's own progress reports
(``StreamingQuery.recentProgress``): ``triggerExecution`` -- listing the
source, reading the file, the batch function (collect, apply, sink write)
and the checkpoint's commit; median, p95 and max.  Baseline in the same
run: the same batches applied directly (``apply`` of the rows as numpy,
no streaming), the engine's share of the time.  Exactness: after the stream,
the count equals the static job's recount (:func:`faq.graphs.triangles.triangle_count`)
of the current graph, which the bench keeps apart from faq.

Run from the repository root::

    python -m bench.bench_streaming --out bench/results/streaming.json
    python -m bench.bench_streaming --scale 12 --batches 5 --batch-size 500   # a quick check
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, graph_path, log, seeded_parser

QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"


class Changes:
    """The current simple digraph (kept apart from faq) and batches of changes to it."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.edges = list(zip(src.tolist(), dst.tolist()))
        self.position = {e: i for i, e in enumerate(self.edges)}
        self.endpoints = np.concatenate([src, dst])

    def batch(self, size: int) -> np.ndarray:
        """``size`` rows (src, dst, value): half deletions of present edges, half insertions."""
        rows: dict[tuple[int, int], int] = {}
        while len(rows) < size // 2:
            edge = self.edges[int(self.rng.integers(len(self.edges)))]
            rows[edge] = -1
        while len(rows) < size:
            a, b = (int(x) for x in self.rng.choice(self.endpoints, 2))
            if a != b and (a, b) not in self.position and (a, b) not in rows:
                rows[(a, b)] = 1
        for edge, value in rows.items():
            self._delete(edge) if value < 0 else self._insert(edge)
        return np.array([(a, b, v) for (a, b), v in rows.items()], dtype=np.int64)

    def _insert(self, edge: tuple[int, int]) -> None:
        self.position[edge] = len(self.edges)
        self.edges.append(edge)

    def _delete(self, edge: tuple[int, int]) -> None:
        at = self.position.pop(edge)
        last = self.edges.pop()
        if at < len(self.edges):
            self.edges[at] = last
            self.position[last] = at

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = np.array(self.edges, dtype=np.int64)
        return pairs[:, 0], pairs[:, 1]


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(np.ceil(0.95 * len(ordered))) - 1)]
    return {"median": round(statistics.median(times), 4), "p95": round(p95, 4), "max": round(max(times), 4),
            "min": round(min(times), 4), "batches": len(times)}


def edges_of(scale: int) -> tuple[np.ndarray, np.ndarray]:
    """R-MAT ``scale``'s simple digraph: no self loops, no repeated edges."""
    pairs = np.loadtxt(graph_path(f"rmat{scale}"), dtype=np.int64, comments="#")
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.unique(pairs, axis=0)
    return pairs[:, 0], pairs[:, 1]


def maintained(src: np.ndarray, dst: np.ndarray, path: str):
    import pandas as pd

    from faq import maintain
    from faq.io.convert import from_pandas

    edge = from_pandas(pd.DataFrame({"src": src, "dst": dst}), ["src", "dst"], None, "counting", name="edge")
    return maintain(QUERY, {"edge": edge}, placement="driver", state=path)


def recount(spark, src: np.ndarray, dst: np.ndarray) -> int:
    import pandas as pd

    from faq.graphs.triangles import triangle_count
    from faq.io.convert import from_pandas

    edge = from_pandas(pd.DataFrame({"src": src, "dst": dst}), ["src", "dst"], None, "counting", spark=spark,
                       name="edge")
    return int(triangle_count(edge, directed=True).count)


def main(argv: list[str] | None = None) -> None:
    parser = seeded_parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=17)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args(argv)

    import pandas as pd

    from faq.spark import get_session

    run = Run("bench_streaming", argv)
    spark = get_session()
    src, dst = edges_of(args.scale)
    log(f"rmat{args.scale}: {len(src)} edges")
    work = tempfile.mkdtemp(prefix="faq-bench-streaming-")
    changes = Changes(src, dst, args.seed)
    batches = [changes.batch(args.batch_size) for _ in range(args.batches)]
    folder = os.path.join(work, "changes")
    os.makedirs(folder)
    for k, rows in enumerate(batches):
        pd.DataFrame(rows, columns=["src", "dst", "value"]).to_parquet(os.path.join(folder, f"part-{k:05d}.parquet"))

    t0 = time.perf_counter()
    mq = maintained(src, dst, os.path.join(work, "state"))
    build = time.perf_counter() - t0
    log(f"maintained query built in {build:.1f} s: {mq.scalar()} feed-forward triangles")
    stream = (spark.readStream.schema("src bigint, dst bigint, value bigint").option("maxFilesPerTrigger", 1)
              .parquet(folder))
    t0 = time.perf_counter()
    query = mq.stream(stream, checkpoint=os.path.join(work, "checkpoint"), sink=os.path.join(work, "sink"),
                      trigger={"availableNow": True})
    query.awaitTermination()
    wall = time.perf_counter() - t0
    if query.exception() is not None:
        raise SystemExit(f"the stream failed: {query.exception()}")
    progress = [p for p in query.recentProgress if p.get("numInputRows", 0) > 0]
    per_batch = [p["durationMs"]["triggerExecution"] / 1000 for p in progress]
    streamed = mq.scalar()
    log(f"{len(per_batch)} micro-batches in {wall:.1f} s: {summary(per_batch)}")
    if mq.version != args.batches:
        raise SystemExit(f"{mq.version} versions after {args.batches} micro-batches")
    mq.close()

    # Baseline: the same batches applied directly to a fresh maintained query.
    direct = maintained(src, dst, None)
    applied = []
    for rows in batches:
        t0 = time.perf_counter()
        direct.apply(edge=rows)
        direct.scalar()
        applied.append(time.perf_counter() - t0)
    direct_count = direct.scalar()
    direct.close()
    log(f"direct apply: {summary(applied)}")

    expected = recount(spark, *changes.arrays())
    log(f"recount: {expected}; streamed {streamed}; direct {direct_count}")
    if streamed != expected or direct_count != expected:
        raise SystemExit(f"inexact: streamed {streamed}, direct {direct_count}, recount {expected}")
    run["graph"] = {"scale": args.scale, "edges": int(len(src))}
    run["batch_size"] = args.batch_size
    run["build_seconds"] = round(build, 3)
    run["micro_batch_seconds"] = summary(per_batch)
    run["micro_batch_rows_per_second"] = round(args.batch_size / statistics.median(per_batch))
    run["stream_wall_seconds"] = round(wall, 3)
    run["direct_apply_seconds"] = summary(applied)
    run["streaming_overhead_median_seconds"] = round(statistics.median(per_batch) - statistics.median(applied), 4)
    run["count"] = {"streamed": streamed, "recount": expected}
    run["target"] = {"p95_seconds": 2.0, "met": summary(per_batch)["p95"] <= 2.0}
    print(run.save(Path(args.out) if args.out else RESULTS / "streaming.json"))


if __name__ == "__main__":
    main()
