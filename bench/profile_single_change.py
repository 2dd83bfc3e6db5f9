"""Where a single-change ``apply`` spends its time: cProfile over maintained R-MAT 17 feed-forward triangles.

Issue 50, item 1 ("measure where today's 4 ms goes first").  Run from the repository root::

    .venv/bin/python -m bench.profile_single_change
    .venv/bin/python -m bench.profile_single_change --compare /tmp/old.json   # and list what grew

The query and the stream are :mod:`bench.bench_tail`'s (``count() := edge(a,b), edge(a,c), edge(b,c)``
maintained with ``placement="driver"``, background compaction; changes alternating deletions of
present edges and insertions between hub-weighted endpoints, each a one-tuple batch).  After
``--warmup`` untimed single changes, ``--timed`` single changes are timed without the profiler
(median, p99: the figure the profile explains), then ``--changes`` more run under :mod:`cProfile`,
each ``mq.apply(edge=[(src, dst, ±1)])`` followed by ``mq.scalar()`` as bench_tail times them
(the change tuples are drawn before profiling starts).

Reported: the top ``--top`` functions by cumulative and by own time (``file:line:function``, calls,
seconds, µs a call and µs an apply), the steps of ``apply`` (:data:`PHASES`: the batch read, the
lookup, the checks, the delta rules, the commit...), own time summed by area (Spark and py4j, locks
and threads, Arrow, numpy, numba, each faq module, the rest of Python) and a short text summary.
Time spent in a compiled numba kernel or a Cython function (most of pyarrow) is not a cProfile entry
of its own: it shows as own time of the Python function calling it.  cProfile's own cost inflates
every call (the profiled apply is a few times the timed one): compare its figures with each other.  With ``--compare OLD.json`` (this
script's output on another commit: run it with that checkout's faq first on ``PYTHONPATH``, see
docs/benchmarks.md) the functions that appeared or grew by more than ``--grew`` µs an apply are listed,
and those called a different number of times (the structural change, whatever the machine's load).

Results: ``bench/results/profile_single_change.json`` (``--out``) with the command, the commit, the
faq checkout profiled (its ``__file__`` and commit) and the load averages at start and end.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench.common import RESULTS, Run, held_graph, log, maintained_session, seeded_parser

AREAS = (  # (area, test on a pstats key's file and function name), first match wins
    ("Spark (pyspark, py4j)", lambda f, n: "pyspark" in f or "py4j" in f or "pyspark" in n or "py4j" in n),
    ("locks and threads", lambda f, n: f.endswith("threading.py") or "_thread." in n),
    ("Arrow (pyarrow)", lambda f, n: "pyarrow" in f or "pyarrow" in n),
    ("numpy", lambda f, n: "numpy" in f or "numpy" in n),
    ("numba (dispatch)", lambda f, n: "numba" in f or "numba" in n),
)

#: The steps of ``MaintainedQuery.apply`` and the scalar read, by the function each is (file and name; one
#: missing on a commit is left out).  Cumulative µs an apply; "the rest of apply" is what none holds.
PHASES = (
    ("Spark UI description (the decorator around apply)", "faq/spark_ui.py:wrapper"),
    ("the batch read: tuples to Arrow to codes (_batch)", "faq/incremental/maintained.py:_batch"),
    # (the lookup of the changed keys is inside: in counting, of the deletions only)
    ("multiplicity checks and their lookup (_checked_here)", "faq/incremental/modes.py:_checked_here"),
    ("the delta rules (run_rules: tries, seeds, kernel)", "faq/incremental/engine.py:run_rules"),
    ("the change returned (_change)", "faq/incremental/maintained.py:_change"),
    ("the commit (merge into the indexes)", "faq/incremental/durable.py:_commit"),
    ("the scalar read", "faq/incremental/maintained.py:scalar"),
)
APPLY = "faq/incremental/maintained.py:apply"


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                      out=str(RESULTS / "profile_single_change.json"))
    p.add_argument("--scale", type=int, default=17)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--timed", type=int, default=300, help="single changes timed without the profiler")
    p.add_argument("--changes", type=int, default=500, help="single changes under the profiler")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--compare", help="this script's JSON from another commit")
    p.add_argument("--grew", type=float, default=20.0, help="µs an apply a function must grow by to be listed")
    return p.parse_args(argv)


def faq_checkout() -> dict:
    """The faq package profiled: its file and its checkout's commit (``+``: uncommitted changes)."""
    import faq

    where = Path(faq.__file__).resolve().parent.parent
    done = subprocess.run(["git", "-C", str(where), "describe", "--always", "--abbrev=7", "--dirty=+"],
                          capture_output=True, text=True)
    return {"file": faq.__file__, "commit": done.stdout.strip() or None}


def short(path: str) -> str:
    """A profiled file as ``faq/...``, ``site-packages/...`` or ``stdlib/...`` (built-ins stay ``~``)."""
    import faq

    if "site-packages" + os.sep in path:
        return "site-packages/" + path.split("site-packages" + os.sep, 1)[1]
    faq_root = os.path.dirname(os.path.dirname(faq.__file__)) + os.sep  # as imported: the profile's paths
    if path.startswith(faq_root):
        return path[len(faq_root):]
    if os.sep + "python3" in path:
        return "stdlib/" + path.split(os.sep + "python3", 1)[1].split(os.sep, 1)[-1]
    return path


def area(file: str, name: str) -> str:
    for label, test in AREAS:
        if test(file, name):
            return label
    if file.startswith("faq/"):
        return file.rsplit(".", 1)[0].replace("/", ".")
    return "other Python"


def rows_of(stats: pstats.Stats, applies: int) -> list[dict]:
    """Every profiled function: where, calls, own and cumulative seconds, µs a call and an apply.  Its
    ``key`` (to compare commits by) is file and name, and the rank among the file's functions of that
    name (``<dictcomp>#2``): line numbers move from commit to commit."""
    out = []
    for (file, line, name), (_, calls, own, cumulative, _) in sorted(stats.stats.items()):  # type: ignore
        where = short(file)
        out.append({"function": f"{where}:{line}:{name}", "key": f"{where}:{name}", "area": area(where, name),
                    "calls": calls, "own_seconds": round(own, 6), "cumulative_seconds": round(cumulative, 6),
                    "cumulative_us_per_call": round(cumulative / calls * 1e6, 2) if calls else None,
                    "own_us_per_apply": round(own / applies * 1e6, 2),
                    "cumulative_us_per_apply": round(cumulative / applies * 1e6, 2)})
    names = Counter(r["key"] for r in out)
    seen: Counter = Counter()
    for r in out:  # sorted by file, then line
        if names[r["key"]] > 1:
            seen[r["key"]] += 1
            r["key"] += f"#{seen[r['key']]}"
    return out


def by_area(rows: list[dict], applies: int) -> dict[str, float]:
    """Own time summed by area, µs an apply, largest first."""
    sums: dict[str, float] = {}
    for r in rows:
        sums[r["area"]] = sums.get(r["area"], 0.0) + r["own_seconds"]
    return {k: round(v / applies * 1e6, 1) for k, v in sorted(sums.items(), key=lambda kv: -kv[1])}


def phases(rows: list[dict]) -> dict[str, float]:
    """Cumulative µs an apply of each of :data:`PHASES` found, and of the rest of apply."""
    cumulative = {r["key"].split("#")[0]: r["cumulative_us_per_apply"] for r in rows}
    out = {label: cumulative[key] for label, key in PHASES if key in cumulative}
    if APPLY in cumulative:
        if PHASES[0][1] in cumulative:
            out[PHASES[0][0]] = round(cumulative[PHASES[0][1]] - cumulative[APPLY], 1)
        inside = sum(cumulative[key] for _, key in PHASES[1:-1] if key in cumulative)
        out["the rest of apply"] = round(cumulative[APPLY] - inside, 1)
    return out


def measured(args) -> tuple[list[float], cProfile.Profile, float]:
    """Build, warm up, time ``--timed`` single changes, profile ``--changes`` more: (seconds, profile,
    profiled wall seconds)."""
    from bench.bench_tail import QUERY, Changes, compaction, timed_apply
    from faq.incremental.maintained import MaintainedQuery  # the class: its front door moved since 1a55434

    maintained_session()
    graph, held = held_graph(f"rmat{args.scale}")
    compaction(True)
    started = time.perf_counter()
    mq = MaintainedQuery(QUERY, {"edge": graph}, placement="driver")
    build_seconds = time.perf_counter() - started
    log(f"rmat{args.scale}: built in {build_seconds:.1f} s, {mq.scalar():,} triangles")
    relation = mq.state.relations["edge"]
    changes = Changes(held["src"], held["dst"], args.seed)

    def single() -> list[tuple[int, int, int]]:
        s, d, v = changes.batch(1)
        return [(int(s[0]), int(d[0]), int(v[0]))]

    seconds: list[float] = []
    for _ in range(args.warmup + args.timed):
        timed_apply(mq, relation, single(), seconds, [])
    seconds = seconds[args.warmup:]
    stream = [single() for _ in range(args.changes)]
    mq.settle()
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for change in stream:
        mq.apply(edge=change)
        mq.scalar()
    profile.disable()
    wall = time.perf_counter() - started
    mq.close()
    return seconds, profile, wall


def compared(rows: list[dict], areas: dict, old: dict, grew: float) -> dict:
    """Functions (by file and name: line numbers move) that appeared or grew by more than ``grew`` µs an
    apply against ``old``'s (this script's record of another commit), those gone, and the areas."""
    before = {r["key"]: r for r in old["functions"]}
    now = {r["key"] for r in rows}
    appeared, grown = [], []
    for r in rows:
        was = before.get(r["key"])
        if was is None and r["cumulative_us_per_apply"] >= grew:
            appeared.append({"function": r["function"], "cumulative_us_per_apply": r["cumulative_us_per_apply"],
                             "own_us_per_apply": r["own_us_per_apply"], "calls": r["calls"]})
        elif was is not None and r["cumulative_us_per_apply"] - was["cumulative_us_per_apply"] >= grew:
            grown.append({"function": r["function"],
                          "cumulative_us_per_apply": [was["cumulative_us_per_apply"], r["cumulative_us_per_apply"]],
                          "own_us_per_apply": [was["own_us_per_apply"], r["own_us_per_apply"]],
                          "calls": [was["calls"], r["calls"]]})
    gone = [r["function"] for k, r in before.items() if r["cumulative_us_per_apply"] >= grew and k not in now]
    calls = [{"function": r["function"], "calls": [before[r["key"]]["calls"], r["calls"]]} for r in rows
             if r["key"] in before and before[r["key"]]["calls"] != r["calls"]]
    return {"commit": old["faq"]["commit"], "load_averages": [old["load_averages_start"], old["load_averages_end"]],
            "single_change_median_ms": old["single_change_median_ms"],
            "profiled_us_per_apply": old["profiled_us_per_apply"],
            "areas_own_us_per_apply": {k: [old["areas_own_us_per_apply"].get(k), v] for k, v in areas.items()},
            "phases_us_per_apply": {k: [old.get("phases_us_per_apply", {}).get(k), v]
                                    for k, v in phases(rows).items()},
            "appeared": sorted(appeared, key=lambda a: -a["cumulative_us_per_apply"]),
            "grew": sorted(grown, key=lambda g: g["cumulative_us_per_apply"][0] - g["cumulative_us_per_apply"][1]),
            "gone": gone, "calls_changed": calls}


def summary(record: dict) -> str:
    """A few sentences: the apply's time, its steps, own time by area and the areas not called at all."""
    areas = record["areas_own_us_per_apply"]
    top = ", ".join(f"{k} {v:.0f}" for k, v in list(areas.items())[:8])
    steps = ", ".join(f"{k} {v:.0f}" for k, v in record["phases_us_per_apply"].items())
    absent = [label for label, _ in AREAS[:3] if areas.get(label, 0.0) < 1.0]
    return (f"A single-change apply (and the scalar read) took {record['single_change_median_ms']:.3f} ms at the "
            f"median without the profiler, {record['profiled_us_per_apply'] / 1e3:.3f} ms under it. "
            f"Its steps, cumulative µs an apply under the profiler: {steps}. "
            f"Own time by area, µs an apply: {top}"
            + (f"; under 1 µs an apply in: {', '.join(absent)}" if absent else "") +
            ". Time in a numba kernel or a Cython (pyarrow) function counts as own time of its Python caller.")


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run("profile_single_change", argv)
    run["faq"] = faq_checkout()
    run["load_averages_start"] = [round(x, 2) for x in os.getloadavg()]
    log(f"profiling faq from {run.record['faq']['file']} ({run.record['faq']['commit']})")
    seconds, profile, wall = measured(args)
    stats = pstats.Stats(profile)
    rows = rows_of(stats, args.changes)
    areas = by_area(rows, args.changes)
    keep = 1.0  # functions kept for a later --compare: those of at least 1 µs an apply
    run["graph"] = f"rmat{args.scale}"
    run["changes"] = args.changes
    run["single_change_median_ms"] = round(float(np.median(seconds)) * 1e3, 3)
    run["single_change_p99_ms"] = round(float(np.percentile(seconds, 99)) * 1e3, 3)
    run["timed_changes"] = len(seconds)
    run["profiled_us_per_apply"] = round(wall / args.changes * 1e6, 1)
    run["areas_own_us_per_apply"] = areas
    run["phases_us_per_apply"] = phases(rows)
    run["top_cumulative"] = sorted(rows, key=lambda r: -r["cumulative_seconds"])[:args.top]
    run["top_own"] = sorted(rows, key=lambda r: -r["own_seconds"])[:args.top]
    run["functions"] = [r for r in rows if r["cumulative_us_per_apply"] >= keep]
    if args.compare:
        run["compared_with"] = compared(rows, areas, json.loads(Path(args.compare).read_text()), args.grew)
    run["summary"] = summary(run.record)
    run["load_averages_end"] = [round(x, 2) for x in os.getloadavg()]
    out = run.save(Path(args.out))
    print(run.record["summary"])
    for r in run.record["top_cumulative"]:
        print(f"{r['cumulative_us_per_apply']:>9.1f} µs  {r['own_us_per_apply']:>8.1f} own  {r['calls']:>7}  "
              f"{r['function']}")
    print(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
