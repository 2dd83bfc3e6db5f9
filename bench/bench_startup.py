"""The first job of a fresh process: wall time of ``python -c ...`` for three jobs whose steps run in-process.

Each run is a new interpreter (that is the point: what a user waits for
from ``python script.py``), so the figure includes importing faq, reading
or converting the input, planning and running the job, and -- before
issue 51 item 4 -- starting a Spark session that nothing needed.  The
child prints its answer and whether PySpark was loaded; every answer is
checked.

* ``maintain``: ``faq.maintain`` of a triangle count over two tuples;
* ``count_triangles``: ``faq.count_triangles`` of tests/data/email-Eu-core.txt.gz;
* ``query``: ``faq.query`` of a triangle count over three tuples.

Run from the repository root (``--label`` names the entry, e.g. ``before``/``after``)::

    python -m bench.bench_startup --repeat 3 --label after --out bench/results/startup.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, commit, load_average, log

#: Each job's child program: runs the job, prints ``ANSWER <value> <pyspark loaded>``.
JOBS = {
    "maintain": ("import sys, faq; m = faq.maintain('count() := edge(a,b), edge(b,c), edge(a,c)', "
                 "edge=[(1,2),(2,3)]); print('ANSWER', m.scalar(), 'pyspark' in sys.modules)", 0),
    "count_triangles": ("import sys, faq; r = faq.count_triangles('tests/data/email-Eu-core.txt.gz'); "
                        "print('ANSWER', r.count, 'pyspark' in sys.modules)", 105461),
    "query": ("import sys, faq; r = faq.query('count() := edge(a,b), edge(b,c), edge(a,c)', "
              "edge=[(1,2),(2,3),(1,3)]); print('ANSWER', r.scalar(), 'pyspark' in sys.modules)", 1),
}


def run_once(program: str, expected: int) -> dict:
    """One fresh interpreter running ``program``: its wall time, answer and whether it loaded PySpark."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    line = [x for x in done.stdout.splitlines() if x.startswith("ANSWER ")][-1].split()
    answer = int(float(line[1]))
    if answer != expected:
        raise AssertionError(f"answer {answer}, expected {expected}")
    return {"seconds": round(seconds, 3), "answer": answer, "pyspark_loaded": line[2] == "True"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "startup.json"))
    args = parser.parse_args(argv)
    entry = {"commit": commit(), "load_average_before": load_average(), "jobs": {}}
    for name, (program, expected) in JOBS.items():
        runs = []
        for _ in range(args.repeat):
            runs.append(run_once(program, expected))
            log(f"{args.label} {name}: {runs[-1]}")
        entry["jobs"][name] = {"command": f"{sys.executable} -c {program!r}", "runs": runs,
                               "seconds": [r["seconds"] for r in runs]}
    entry["load_average_after"] = load_average()
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    results[args.label] = entry
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
