"""A maintained regression over a join (issue #25): batches of inserts and deletes against recomputation.

The data are :mod:`bench.bench_learning`'s TPC-H shaped tables (``lineitem``
of ``L`` rows, ``partsupp`` ``L/8``, ``part`` ``L/30``).  A model
``faq.linear_regression(..., maintained=True)`` of pandas tables is made
once; then ``--batches`` batches of ``--batch`` changes each go into the fact
table ``lineitem``: half deletes of rows present now (drawn uniformly, so
hot keys are hit as often as they occur), half inserts of new rows naming
existing (partkey, suppkey) pairs with fresh feature values.  Each batch is
timed from the call of ``apply`` until the coefficients of the new model are
read (the solve included).

Baselines, from the same run, on the tables as they are after the stream:

* ``recompute_faq``: ``faq.linear_regression`` of the current tables, in-process
  (the fastest static path: one cofactor FAQ, join never listed);
* ``recompute_pandas``: pandas merge of the three tables and
  ``numpy.linalg.lstsq`` on the materialised join.

``speedup_vs_*`` is a baseline's median over the median batch.  Tuples per
second are changed rows over batch seconds (median batch, and all batches
together).  Exactness: every ``--check-every`` batches, and after the last,
the maintained coefficients must equal a recomputation's to 1e-9 relative,
or the run stops.

Run from the repository root::

    python -m bench.bench_learning_maintained --rows 1000000 --batches 200 --out bench/results/learning_maintained.json
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

import numpy as np

from bench.bench_learning import FEATURES, QUERY, TARGET, tables, uptime
from bench.common import commit, load_average, seeded_parser

TOLERANCE = 1e-9


def coefficients(model: Any) -> np.ndarray:
    return np.array([model.intercept, *[model.coefficients[f] for f in FEATURES]])


class Stream:
    """The fact table as growable numpy columns with a live mask: cheap deletes of present rows."""

    def __init__(self, lineitem: Any, partsupp: Any, seed: int) -> None:
        self.columns = {c: lineitem[c].to_numpy().copy() for c in lineitem.columns}
        self.live = np.ones(len(lineitem), dtype=bool)
        self.pairs = (partsupp["partkey"].to_numpy(), partsupp["suppkey"].to_numpy())
        self.orders = int(self.columns["orderkey"].max()) + 1
        self.rng = np.random.default_rng(seed)

    def batch(self, size: int) -> Any:
        import pandas as pd

        deletes = self.rng.choice(np.flatnonzero(self.live), size // 2, replace=False)
        self.live[deletes] = False
        n = size - size // 2
        pick = self.rng.integers(0, len(self.pairs[0]), n)
        inserts = {"orderkey": self.rng.integers(0, self.orders, n).astype(np.int64),
                   "partkey": self.pairs[0][pick], "suppkey": self.pairs[1][pick],
                   "quantity": self.rng.integers(1, 51, n).astype(np.float64),
                   "discount": self.rng.integers(0, 11, n) / 100.0,
                   "extendedprice": self.rng.uniform(100.0, 5000.0, n)}
        for c, values in inserts.items():
            self.columns[c] = np.concatenate([self.columns[c], values])
        self.live = np.concatenate([self.live, np.ones(n, dtype=bool)])
        rows = {c: np.concatenate([self.columns[c][deletes], inserts[c]]) for c in inserts}
        rows["diff"] = np.concatenate([np.full(len(deletes), -1), np.ones(n, dtype=np.int64)])
        return pd.DataFrame(rows)

    def current(self) -> Any:
        import pandas as pd

        return pd.DataFrame({c: v[self.live] for c, v in self.columns.items()})


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(np.ceil(0.99 * len(ordered))) - 1)]
    return {"median": round(statistics.median(times), 5), "p99": round(p99, 5), "min": round(min(times), 5),
            "max": round(max(times), 5), "runs": len(times)}


def recompute(given: dict[str, Any], repeat: int) -> tuple[np.ndarray, list[float], list[float]]:
    import faq

    from bench.bench_learning import with_pandas

    faq_times, pandas_times, answer = [], [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, placement="driver", **given)
        answer = coefficients(model)
        faq_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with_pandas(given)
        pandas_times.append(time.perf_counter() - t0)
    return answer, faq_times, pandas_times


def check(where: str, got: np.ndarray, expected: np.ndarray) -> float:
    error = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)))
    if not error <= TOLERANCE:
        raise SystemExit(f"{where}: maintained {got.tolist()} differs from recomputation {expected.tolist()} "
                         f"by {error:.3g} relative (> {TOLERANCE})")
    return error


def main(argv: list[str] | None = None) -> None:
    parser = seeded_parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="lineitem rows at the start")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1000, help="changed lineitem rows per batch (half deletes)")
    parser.add_argument("--check-every", type=int, default=50, help="batches between exactness checks")
    parser.add_argument("--repeat", type=int, default=3, help="recomputations per baseline")
    args = parser.parse_args(argv)

    import faq

    started_load = load_average()
    t = tables(args.rows, args.seed)
    stream = Stream(t["lineitem"], t["partsupp"], args.seed + 1)
    t0 = time.perf_counter()
    model = faq.linear_regression(QUERY, target=TARGET, features=FEATURES, maintained=True, **t)
    coefficients(model)
    build = time.perf_counter() - t0
    print(f"model of {args.rows} lineitem rows built in {build:.2f} s; {args.batches} batches of {args.batch}",
          flush=True)
    latencies, checks = [], []
    for b in range(1, args.batches + 1):
        delta = stream.batch(args.batch)
        t0 = time.perf_counter()
        model.apply(lineitem=delta)
        got = coefficients(model)
        latencies.append(time.perf_counter() - t0)
        if b % args.check_every == 0 or b == args.batches:
            current = {**t, "lineitem": stream.current()}
            expected, _, _ = recompute(current, 1)
            checks.append({"batch": b, "relative_error": check(f"batch {b}", got, expected)})
            print(f"batch {b}: median so far {statistics.median(latencies) * 1e3:.1f} ms, "
                  f"exact to {checks[-1]['relative_error']:.2g}", flush=True)
    current = {**t, "lineitem": stream.current()}
    _, faq_times, pandas_times = recompute(current, args.repeat)
    batch = summary(latencies)
    result = {
        "command": "python -m bench.bench_learning_maintained " + " ".join(argv if argv is not None else
                                                                          __import__("sys").argv[1:]),
        "commit": commit(),
        "cpus": os.cpu_count(),
        "load_average_start": started_load,
        "uptime_end": uptime(),
        "query": QUERY, "features": FEATURES, "target": TARGET,
        "lineitem_rows_start": args.rows, "lineitem_rows_end": int(stream.live.sum()),
        "batches": args.batches, "changes_per_batch": args.batch,
        "model_build_seconds": round(build, 3),
        "batch_seconds": batch,
        "tuples_per_second_median_batch": round(args.batch / batch["median"]),
        "tuples_per_second_overall": round(args.batch * len(latencies) / sum(latencies)),
        "recompute_faq_seconds": summary(faq_times),
        "recompute_pandas_seconds": summary(pandas_times),
        "speedup_vs_recompute_faq": round(statistics.median(faq_times) / batch["median"], 1),
        "speedup_vs_recompute_pandas": round(statistics.median(pandas_times) / batch["median"], 1),
        "checks": checks,
        "targets": {"tuples_per_second_200k": args.batch / batch["median"] >= 200_000,
                    "speedup_100x_vs_recompute": statistics.median(faq_times) / batch["median"] >= 100},
        "plan": str(model.explain()),
    }
    model.close()
    print(json.dumps({k: v for k, v in result.items() if k != "plan"}, indent=1))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
