"""``faq triangles --directed`` as a fresh command against SuiteSparse:GraphBLAS's load + count, same run.

Each round starts a new process for each side, interleaved:

* **faq**: ``faq triangles PATH --directed --json -q`` (Spark started by the
  command; the figure is faq's own clock, ``seconds`` of its JSON: reading
  and cleaning the edge list, planning and the join, placed where the plan
  says — in-process on the driver for graphs the driver holds and that fit
  its memory);
* **GraphBLAS**: a new Python process running
  :func:`bench.bench_wcoj.graphblas_count` (pyarrow's CSV reader, the simple
  digraph, the masked ``plus_pair`` product), its load + count.

Every count is checked against every other (with ``--no-graphblas``, against ``--expect``: a count an
oracle gave for the same graph, e.g. GraphBLAS's in an earlier result).  R-MAT graphs from
``tools/gen_rmat.py`` (edge factor 16, seed 1), cached in ``bench/data``.

Run from the repository root::

    python -m bench.bench_fresh --scales 14 17 20 --repeat 3 --out bench/results/fresh_triangles.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from bench.common import ROOT, Run, log, rmat_graph

GRAPHBLAS = (
    "import json, sys; from pathlib import Path; from bench.bench_wcoj import graphblas_count, PATTERNS; "
    "c, load, count, note = graphblas_count(Path(sys.argv[1]), PATTERNS['triangles']); "
    "print(json.dumps({'count': c, 'load': load, 'count_seconds': count, 'note': note}))"
)


def faq_command(path: Path, placement: str | None) -> dict:
    extra = [] if placement is None else ["--placement", placement]
    done = subprocess.run([str(Path(sys.executable).parent / "faq"), "triangles", str(path), "--directed", "--json",
                           "-q", *extra], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def graphblas_command(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", GRAPHBLAS, str(path)], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3),
            "runs": [round(v, 3) for v in values]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[14, 17, 20])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--placements", nargs="+", default=["auto"], choices=["auto", "executors"])
    parser.add_argument("--no-graphblas", dest="graphblas", action="store_false",
                        help="faq only (GraphBLAS takes ~14 min at R-MAT 22): the count is checked against --expect")
    parser.add_argument("--expect", type=int, default=None, help="the count every run must give (with --no-graphblas)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if not args.graphblas and args.expect is None:
        parser.error("--no-graphblas needs --expect COUNT (an oracle's count of the same graph)")
    run = Run("bench_fresh", argv)
    rows = []
    for scale in args.scales:
        path = rmat_graph(scale)
        seen: dict[str, list[float]] = {}
        counts = set()
        loads: list[float] = []
        for _ in range(args.repeat):
            for placement in args.placements:
                out = faq_command(path, None if placement == "auto" else placement)
                counts.add(out["count"])
                seen.setdefault(f"faq_{placement}", []).append(out["seconds"])
                seen.setdefault(f"faq_{placement}_load", []).append(out["load_seconds"])
            if args.graphblas:
                gb = graphblas_command(path)
                counts.add(gb["count"])
                seen.setdefault("graphblas", []).append(gb["load"] + gb["count_seconds"])
                loads.append(gb["load"])
        if args.expect is not None:
            counts.add(args.expect)
        if len(counts) != 1:
            raise SystemExit(f"rmat{scale}: counts disagree: {sorted(counts)}")
        row = {"scale": scale, "edges_file": path.name, "count": counts.pop(),
               **{k: summary(v) for k, v in seen.items()}}
        if args.graphblas:
            row["graphblas_load"] = summary(loads)
            for placement in args.placements:
                row[f"ratio_faq_{placement}_to_graphblas"] = round(
                    statistics.median(seen[f"faq_{placement}"]) / statistics.median(seen["graphblas"]), 2)
        else:
            row["count_checked_against"] = f"--expect {args.expect} (no GraphBLAS run)"
        log(f"rmat{scale}: " + ", ".join(f"{k} {v['median']} s" for k, v in row.items() if isinstance(v, dict)))
        rows.append(row)
    run["rows"] = rows
    path = run.save(None if args.out is None else Path(args.out))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
