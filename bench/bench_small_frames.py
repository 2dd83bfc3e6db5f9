"""Small answers handed to Spark: an empty answer's ``.df``, a batch's change as a DataFrame, a count's ``.df``.

Run from the repository root (one process, ``local[*]``)::

    .venv/bin/python -m bench.bench_small_frames
    .venv/bin/python -m bench.bench_small_frames --repeat 20 --out bench/results/small_frames.json

What a user does with a small answer held by the driver, timed from the call to the rows back
(median, p99 and max of ``--repeat`` warm runs after one cold):

* ``empty answer``: ``faq.query("q(a) := r(a,b), s(b)")`` over pandas factors that share no ``b``,
  then ``result.df.collect()``;
* ``change``: ``faq.maintain`` of a 2-path count per node, ``apply`` of a one-edge batch, then
  ``change.df.collect()`` (a change of a few rows);
* ``no change``: the same with a batch that changes no answer (an edge inserted and deleted), then
  ``change.df.collect()`` (no rows);
* ``count``: ``faq.count_triangles`` of a 4-edge graph, then ``result.df.collect()`` (one row).

The baseline in the same run is the plain PySpark a user would write for the same rows:
``spark.createDataFrame(rows, ddl).collect()`` with the rows as a Python list (``rows_list``) and
the same through Arrow (``rows_arrow``).  Classic PySpark makes a DataFrame of a Python list from
an RDD, so reading it starts Python workers; an Arrow table becomes a local relation.
Every answer is checked (the rows each job must give).

Results: JSON in ``--out`` with the command, the commit and the load average.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.common import RESULTS, Run, log


def _timed(fn: Callable[[], Any], repeat: int, expected: Any) -> dict[str, Any]:
    """One cold run and ``repeat`` warm ones of ``fn``, each result compared with ``expected``."""
    seconds = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        got = fn()
        seconds.append(time.perf_counter() - started)
        if got != expected:
            raise AssertionError(f"got {got!r}, expected {expected!r}")
    warm = np.array(seconds[1:])
    return {"cold": round(seconds[0], 4), "median": round(float(np.median(warm)), 4),
            "p99": round(float(np.percentile(warm, 99)), 4), "max": round(float(warm.max()), 4), "runs": repeat}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", default=str(RESULTS / "small_frames.json"))
    args = parser.parse_args(argv)
    import pandas as pd
    import pyarrow as pa

    import faq
    from faq.spark import get_session

    run = Run("small_frames", argv)
    spark = get_session()
    r = pd.DataFrame({"a": [1, 2, 3], "b": [10, 11, 12]})
    s = pd.DataFrame({"b": [20, 21]})

    def empty_answer() -> list:
        with faq.query("q(a) := r(a,b), s(b)", r=r, s=s) as result:
            return result.df.collect()

    paths = faq.maintain("q(a) := e(a,b), e(b,c)", e=[(1, 2), (2, 3), (3, 4)])
    present = [False]

    def change() -> int:  # the edge 1->3 in, then out: each batch changes q(1) (by the path 1->3->4) alone
        diff = -1 if present[0] else 1
        present[0] = not present[0]
        return len(paths.apply(e=[(1, 3, diff)]).df.collect())

    def no_change() -> int:
        return len(paths.apply(e=[(7, 8, 1), (7, 8, -1)]).df.collect())

    def count() -> list:
        with faq.count_triangles([(1, 2), (2, 3), (1, 3), (3, 4)]) as result:
            return [tuple(row) for row in result.df.collect()]

    ddl = "a bigint, value bigint"
    rows = [(1, 2), (3, 4)]
    arrow = pa.table({"a": pa.array([1, 3], pa.int64()), "value": pa.array([2, 4], pa.int64())})
    jobs = {
        "empty answer": (empty_answer, []),
        "change": (change, 1),
        "no change": (no_change, 0),
        "count": (count, [(1,)]),
        "rows_list (plain PySpark)": (lambda: len(spark.createDataFrame(rows, ddl).collect()), 2),
        "rows_arrow (plain PySpark)": (lambda: len(spark.createDataFrame(arrow).collect()), 2),
        "empty_list (plain PySpark)": (lambda: len(spark.createDataFrame([], ddl).collect()), 0),
    }
    results = {}
    for name, (fn, expected) in jobs.items():
        results[name] = _timed(fn, args.repeat, expected)
        log(f"{name}: {results[name]}")
    paths.close()
    run["jobs"] = results
    log(f"wrote {run.save(Path(args.out))}")


if __name__ == "__main__":
    main()
