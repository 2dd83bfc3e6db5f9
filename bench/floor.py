"""The maintenance floor in one command, each figure against the one committed in bench/results.

A guard against slipping back (issue 50, item 6): run it before each stop and say what it printed.

Run from the repository root::

    .venv/bin/python -m bench.floor            # a few minutes
    .venv/bin/python -m bench.floor --quick    # about a minute: fewer changes, no R-MAT 20

Measured, in one process on ``local[2]`` (the fresh commands in processes of their own):

1. **fresh commands**: ``faq triangles PATH --directed`` on R-MAT 17 and 20
   (:func:`bench.bench_fresh.faq_command`; faq's own clock, ``seconds`` of its JSON), the median of
   ``--fresh`` runs a scale, each count exact against the known one;
2. **maintained truss**: ``--truss-batches`` uniform 1,000-edge batches (half deletions) on the SNAP
   graphs ``--truss-graphs`` of tests/data (:func:`bench.bench_truss_maintained.one`), every batch
   exact against a decomposition, which is timed too;
3. **maintained as-of join**: ``--asof-batches`` 1,000-change batches over a 10M-row history
   (:func:`bench.bench_asof.maintained`), the answer after the last batch exact against a
   recomputation;
4. **maintained feed-forward triangles** on R-MAT 17 (``placement="driver"``, background compaction;
   the stream of :class:`bench.bench_tail.Changes`): after ``--warmup`` untimed single changes,
   ``--singles`` single changes (median, p99), then ``--batches`` batches of 1,000 changes, half
   deletions (changes a second of ``apply`` time, median batch); the count exact against the known
   one after the build and against a recount by the static job after the last batch.

Each figure is compared with the figure committed (``git show HEAD:bench/results/FILE``) in the file
that measured it last: single changes and throughput in ``tail.json``, fresh commands in
``fresh_triangles.json``, the as-of batch in ``asof_maintained.json``, truss batches in
``truss_maintained.json``; a figure no such file holds is compared with the committed ``floor.json``,
and where that holds none either, this run records the reference.  Every figure more than
``--threshold`` (20%) slower is printed, with the load averages (1, 5, 15 minutes) at start and end
and each reference's own load at its start: a busy machine, now or then, is told apart.  The as-of and
truss figures also show how many times faster than a recomputation of the same run they were, beside
the reference run's ratio ("vs own baseline"): a ratio moves less with the machine's load than seconds.

**Same-run A/B** (``--ab ROUNDS``, default 3; ``--quick`` and ``--ab 0`` skip it): the as-of and truss
references were measured once, on another day, and this 2-core machine is shared -- its speed varies
2-3x with work that the load averages do not show: the five floor runs committed up to dd1fcf3 measured
the as-of batch at 24-28 ms against its 7.42 ms reference (their recomputations 1.6-1.75x slower than the
reference run's too), and cdb25d0's own code, run beside this tree at load 1.1, took 24.8 ms.  So each of
those figures is also measured for the code of its reference commit (``git archive COMMIT faq bench``,
kept in the temporary directory; its kernels compiled by an untimed run first, two on a new copy) and
for this tree, each in a fresh process running the reference benchmark's own function
(:func:`bench.bench_asof.maintained`, :func:`bench.bench_truss_maintained.one`, its batches timed by the
thread's CPU clock), alternating reference, this tree, reference, ... so that load falls on both.
Where there is such an A/B, it decides the flag (``same_run``: this tree's fastest run's median batch
over the reference code's; a run is only slowed by load); the committed seconds are still shown beside it.

Results: ``bench/results/floor.json`` (``floor_quick.json`` with ``--quick``): the command, the commit
(``+`` when the tree is dirty), the load averages, each figure with its reference, the reference's
source and the ratio (:class:`bench.common.Run`); the table on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from bench.common import RESULTS, ROOT, TEST_DATA, Run, held_graph, log, maintained_session, rmat_graph, \
    seeded_parser

#: Feed-forward triangle counts of the R-MAT graphs (edge factor 16, seed 1), as bench_fresh found them.
KNOWN_TRIANGLES = {14: 4_492_450, 17: 52_346_596, 20: 570_803_403}

#: Where each figure was measured last: (file of bench/results, path of keys in it; a dict picks the
#: element of a list that holds its items), and whether lower is better.
REFERENCES: dict[str, tuple[str, tuple, bool]] = {
    "single_change_median_seconds": ("tail.json", ("single_changes", "median_seconds"), True),
    "single_change_p99_seconds": ("tail.json", ("single_changes", "p99_seconds"), True),
    "throughput_changes_per_second": ("tail.json", ("throughput", "background", "changes_per_second"), False),
    "throughput_batch_median_seconds": ("tail.json", ("throughput", "background", "median_seconds"), True),
    "asof_batch_median_seconds": ("asof_maintained.json", ("maintained", "median_seconds"), True),
}
for _scale in KNOWN_TRIANGLES:
    REFERENCES[f"fresh_rmat{_scale}_seconds"] = ("fresh_triangles.json", ("rows", {"scale": _scale}, "faq_auto",
                                                                          "median"), True)
#: Figures measured against a baseline of the same run (a recomputation): the field of the figure holding
#: how many times faster than its baseline it was, and where the reference run's ratio is.  The ratio
#: moves less with the machine's load than the seconds do.
SAME_RUN: dict[str, tuple[str, str, tuple]] = {
    "asof_batch_median_seconds": ("recompute_over_median", "asof_maintained.json",
                                  ("maintained", "recompute_over_median")),
}
for _graph in ("p2p-Gnutella31", "Email-Enron", "email-Eu-core", "wiki-Vote", "ca-GrQc", "facebook_combined"):
    REFERENCES[f"truss_{_graph}_batch_median_seconds"] = (
        "truss_maintained.json", ("graphs", {"": _graph}, "uniform", "batch_seconds", "median"), True)
    SAME_RUN[f"truss_{_graph}_batch_median_seconds"] = (
        "recompute_over_batch_median", "truss_maintained.json",
        ("graphs", {"": _graph}, "uniform", "recompute_over_batch_median"))


def parse_args(argv=None):
    p = seeded_parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warmup", type=int, default=30, help="untimed single changes first")
    p.add_argument("--singles", type=int, default=300)
    p.add_argument("--batches", type=int, default=30, help="batches of 1,000 changes (at least 20)")
    p.add_argument("--fresh", nargs="*", default=["17x3", "20x1"],
                   help="fresh commands, SCALExRUNS each (default: %(default)s)")
    p.add_argument("--asof-batches", type=int, default=50)
    p.add_argument("--truss-graphs", nargs="*", default=["p2p-Gnutella31", "Email-Enron"])
    p.add_argument("--truss-batches", type=int, default=10)
    p.add_argument("--threshold", type=float, default=1.2, help="slower than this ratio is printed")
    p.add_argument("--ab", type=int, default=3, help="rounds of the same-run A/B of the as-of and truss figures "
                                                     "against their reference commits' code (0 skips)")
    p.add_argument("--quick", action="store_true", help="100 single changes, 20 batches, R-MAT 17 fresh once, "
                                                         "20 as-of batches, p2p-Gnutella31 only")
    args = p.parse_args(argv)
    if args.quick:
        args.singles, args.batches, args.fresh, args.asof_batches = 100, 20, ["17x1"], 20
        args.truss_graphs, args.truss_batches, args.ab = ["p2p-Gnutella31"], 5, 0
    if args.out is None:
        args.out = str(RESULTS / ("floor_quick.json" if args.quick else "floor.json"))
    return args


def load_averages() -> Optional[list[float]]:
    """The 1, 5 and 15 minute load averages (None where the system does not report them)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def committed(name: str) -> Optional[dict]:
    """A results file as committed (``git show HEAD:bench/results/NAME``; the file itself without git)."""
    done = subprocess.run(["git", "show", f"HEAD:bench/results/{name}"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode == 0:
        return json.loads(done.stdout)
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def dig(record: Any, keys: tuple) -> Any:
    """The value at ``keys`` in a results record (a dict key picks the list element whose field holds
    the value; the key ``""`` picks the dict entry whose name starts with it), or None."""
    for key in keys:
        if isinstance(key, dict) and isinstance(record, list):
            record = next((e for e in record if all(e.get(k) == v for k, v in key.items())), None)
        elif isinstance(key, dict) and isinstance(record, dict):
            record = next((v for k, v in record.items() if k.split(".")[0] == key[""]), None)
        elif isinstance(record, dict):
            record = record.get(key)
        else:
            return None
    return record


def keys_text(keys: tuple) -> str:
    """A path of :func:`dig` as text: ``rows[scale=17].faq_auto.median``, ``graphs[p2p-Gnutella31*].uniform``."""
    parts = []
    for key in keys:
        if isinstance(key, dict):
            parts[-1] += "[" + ",".join(f"{k}={v}" if k else f"{v}*" for k, v in key.items()) + "]"
        else:
            parts.append(str(key))
    return ".".join(parts)


def reference(name: str, floor: Optional[dict]) -> dict:
    """The committed figure ``name`` is compared with: value, source, commit and load of its run."""
    file, keys, lower = REFERENCES.get(name, ("floor.json", (), True))
    record = committed(file) if file != "floor.json" else None
    value = dig(record, keys) if record else None
    if value is None and floor:  # no other file holds it: the committed floor run's own figure
        record, file = floor, "floor.json"
        value = dig(floor, ("figures", name, "value"))
        lower = dig(floor, ("figures", name, "lower_is_better"))
    if value is None:
        return {"value": None, "source": "none: this run records it"}
    return {"value": value, "source": f"{file}: {keys_text(keys) or name}",
            "commit": record.get("commit"), "load_average_start": record.get("load_average_start"),
            "lower_is_better": lower if lower is not None else True}


def fresh(specs: list[str]) -> dict[str, dict]:
    """Fresh ``faq triangles --directed`` commands: each scale's median seconds, counts exact."""
    from bench.bench_fresh import faq_command

    figures = {}
    for spec in specs:
        scale, runs = (int(x) for x in spec.split("x"))
        seconds, loads = [], []
        for _ in range(runs):
            out = faq_command(rmat_graph(scale), None)
            assert out["count"] == KNOWN_TRIANGLES[scale], (scale, out["count"])
            seconds.append(out["seconds"])
            loads.append(out["load_seconds"])
        figures[f"fresh_rmat{scale}_seconds"] = {
            "value": round(statistics.median(seconds), 3), "runs": seconds, "load_seconds": loads,
            "exact": f"{KNOWN_TRIANGLES[scale]:,} feed-forward triangles every run"}
        log(f"fresh rmat{scale}: {seconds} s")
    return figures


def truss_graph_path(graph: str) -> Path:
    """The file of tests/data named ``graph`` (its name before the first dot); an unknown name ends the run
    with the names there are."""
    path = next((p for p in sorted(TEST_DATA.iterdir()) if p.name.split(".")[0] == graph), None)
    if path is None:
        known = sorted({p.name.split(".")[0] for p in TEST_DATA.iterdir() if ".txt" in p.name})
        raise SystemExit(f"--truss-graphs: no graph {graph!r} in {TEST_DATA} (there are: {', '.join(known)})")
    return path


def truss(graphs: list[str], batches: int) -> dict[str, dict]:
    """Uniform 1,000-edge batches on a maintained truss, each exact against a timed decomposition."""
    from bench.bench_truss_maintained import one

    figures = {}
    for graph in graphs:
        path = truss_graph_path(graph)
        entry = one(path, "uniform", batches, 1000)
        figures[f"truss_{graph}_batch_median_seconds"] = {
            "value": entry["batch_seconds"]["median"], "p99": entry["batch_seconds"]["p99"],
            "recompute_median_seconds": entry["recompute_seconds"]["median"],
            "recompute_over_batch_median": entry["recompute_over_batch_median"],
            "recomputed_batches": entry["recomputed_batches"], "batches": batches,
            "exact": "every batch equal to a decomposition"}
    return figures


def asof(batches: int, seed: int) -> dict[str, dict]:
    """1,000-change batches on a maintained as-of join over a 10M-row history (bench_asof's)."""
    from bench.bench_asof import maintained

    record: dict = {}
    maintained(argparse.Namespace(maintained_rows=5_000_000, keys=1000, seed=seed, batches=batches), record)
    m = record["maintained"]
    return {"asof_batch_median_seconds": {
        "value": m["median_seconds"], "p99": m["p99_seconds"], "changes_per_second": m["changes_per_second"],
        "recompute_seconds": m["recompute_seconds"], "recompute_over_median": m["recompute_over_median"],
        "batches": batches, "exact": "the answer after the last batch equal to a recomputation"}}


#: The steps of the same-run A/B, each run in a fresh process by the tree first on its path: the reference
#: benchmark's own function (the reference commits have it too), its batches timed by the thread's CPU
#: clock (``time.thread_time`` for the module's ``perf_counter``: a batch runs in the calling thread, and
#: the time other processes take the core is left out); the median batch seconds on the last line.
AB_CLOCK = "import time, types\n"
AB_STEPS = {
    "asof": (AB_CLOCK + "import argparse, json, sys\n"
             "import bench.bench_asof as b\n"
             "b.time = types.SimpleNamespace(perf_counter=time.thread_time)\n"
             "r = {}\n"
             "b.maintained(argparse.Namespace(maintained_rows=int(sys.argv[1]), keys=1000, seed=int(sys.argv[2]), "
             "batches=int(sys.argv[3])), r)\n"
             "print(json.dumps(r['maintained']['median_seconds']))\n"),
    "truss": (AB_CLOCK + "import json, sys\n"
              "from pathlib import Path\n"
              "import bench.bench_truss_maintained as b\n"
              "b.time = types.SimpleNamespace(perf_counter=time.thread_time)\n"
              "print(json.dumps(b.one(Path(sys.argv[1]), 'uniform', int(sys.argv[2]), 1000)['batch_seconds']"
              "['median']))\n"),
}


def reference_tree(commit: str) -> tuple[Path, bool]:
    """The ``faq`` and ``bench`` of ``commit`` (``git archive``), kept in the temporary directory so that its
    numba cache serves the next floor runs too; and whether it was made just now (nothing compiled yet)."""
    tree = Path(tempfile.gettempdir()) / f"faq-floor-{commit}"
    fresh = not (tree / "faq").is_dir()
    if fresh:
        part = Path(tempfile.mkdtemp(prefix=f"faq-floor-{commit}-"))
        archive = subprocess.run(["git", "archive", commit, "faq", "bench"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive.stdout, check=True)
        try:
            part.rename(tree)  # whole or not at all
        except OSError:  # another floor run put it there first
            shutil.rmtree(part, ignore_errors=True)
    return tree, fresh


def step_seconds(tree: Path, step: str, arguments: list) -> float:
    """One run of an A/B step in a fresh process, ``tree``'s ``faq`` and ``bench`` imported: median batch seconds."""
    path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "-c", AB_STEPS[step], *map(str, arguments)], cwd=tree,
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def same_run(figures: dict[str, dict], args) -> None:
    """The same-run A/B (module notes): each as-of and truss figure gets ``same_run``, the runs of its
    reference commit's code and of this tree, alternating, with the load at each, and the ratio of each
    side's fastest run (``slower``)."""
    # the untimed warm-up: the as-of kernels compile on a small join; a truss batch whose repair ran out of
    # time compiling falls back, and the kernels it did not reach compile in the next run: the whole step
    steps = {"asof_batch_median_seconds": ("asof", [5_000_000, args.seed, args.asof_batches], [100_000, args.seed, 2])}
    for graph in args.truss_graphs:
        path = truss_graph_path(graph)
        steps[f"truss_{graph}_batch_median_seconds"] = ("truss", [path, args.truss_batches], [path, args.truss_batches])
    for name, (step, arguments, warm) in steps.items():
        commit = dig(committed(REFERENCES[name][0]), ("commit",))
        if name not in figures or not commit or commit.endswith("+"):
            continue  # a figure measured on a dirty tree has no code to run again
        old, fresh = reference_tree(commit)
        for _ in range(2 if fresh else 1):  # untimed: the reference code's kernels compiled (a new tree: twice)
            step_seconds(old, step, warm)
        runs: dict[str, list] = {"reference": [], "this_tree": [], "load_averages": []}
        for _ in range(args.ab):
            for side, tree in (("reference", old), ("this_tree", ROOT)):
                runs["load_averages"].append(load_averages())
                runs[side].append(round(step_seconds(tree, step, arguments), 5))
        ratio = min(runs["this_tree"]) / min(runs["reference"])  # load only slows a run: each side's fastest
        figures[name]["same_run"] = {"reference_commit": commit, **runs, "slower": round(ratio, 3)}
        log(f"{name}: this tree {runs['this_tree']} s, {commit}'s code {runs['reference']} s: {ratio:.2f}x")


def triangles(args) -> dict[str, dict]:
    """Single changes and 1,000-change batches on maintained R-MAT 17 feed-forward triangles."""
    from bench.bench_tail import Changes, arrow, build, compaction, recount, summary, timed_apply

    maintained_session()
    graph, held = held_graph("rmat17")
    compaction(True)
    mq, build_seconds = build(graph)
    assert mq.scalar() == KNOWN_TRIANGLES[17], mq.scalar()
    relation = mq.state.relations["edge"]
    changes = Changes(held["src"], held["dst"], args.seed)
    single, flags = [], []
    for _ in range(args.warmup + args.singles):
        s, d, v = changes.batch(1)
        timed_apply(mq, relation, [(int(s[0]), int(d[0]), int(v[0]))], single, flags)
    singles = summary(single[args.warmup:], flags[args.warmup:])
    log(f"single changes: median {singles['median_seconds'] * 1e3:.3f} ms, p99 {singles['p99_seconds'] * 1e3:.3f} ms")
    spent, flags, total = [], [], 0
    for _ in range(args.batches):
        table = arrow(*changes.batch(1000))
        timed_apply(mq, relation, table, spent, flags)
        total += table.num_rows
    batches = summary(spent, flags)
    rate = round(total / sum(spent))
    log(f"throughput: {rate:,} changes/s (median batch {batches['median_seconds'] * 1e3:.1f} ms)")
    mq.settle()
    with tempfile.TemporaryDirectory() as tmp:
        expected, recount_seconds = recount(changes, tmp)
    final = mq.scalar()
    assert final == expected, (final, expected)
    mq.close()
    exact = f"built count {KNOWN_TRIANGLES[17]:,} (known); {final:,} after the last batch = the static job's recount"
    context = {"build_seconds": round(build_seconds, 2), "recount_seconds": round(recount_seconds, 2), "exact": exact}
    return {
        "single_change_median_seconds": {"value": singles["median_seconds"], "changes": args.singles,
                                         "warmup": args.warmup, **context},
        "single_change_p99_seconds": {"value": singles["p99_seconds"], "max": singles["max_seconds"], **context},
        "throughput_changes_per_second": {"value": rate, "batches": args.batches, "changes": total,
                                          "deletions": "half of each batch", **context},
        "throughput_batch_median_seconds": {"value": batches["median_seconds"], "p99": batches["p99_seconds"],
                                            "during_compaction": batches.get("batches_during_compaction", 0),
                                            **context},
    }


def compared(figures: dict[str, dict], threshold: float) -> list[str]:
    """Each figure with its reference and ratio (``slower``: how many times slower than the reference, a
    rate's inverse ratio); the names of those more than ``threshold`` slower (by the same-run A/B where a
    figure has one)."""
    floor = committed("floor.json")
    slower = []
    for name, figure in figures.items():
        ref = reference(name, floor)
        lower = ref.pop("lower_is_better", REFERENCES.get(name, (None, None, True))[2])
        figure["lower_is_better"] = lower
        figure["reference"] = ref
        if ref["value"]:
            figure["ratio"] = round(figure["value"] / ref["value"], 3)
            figure["slower"] = round(figure["ratio"] if lower else 1 / figure["ratio"], 3)
        ab = figure.get("same_run")
        if (ab["slower"] if ab else figure.get("slower", 0)) > threshold:  # an A/B decides where there is one
            slower.append(name)
        if name in SAME_RUN:
            field, file, keys = SAME_RUN[name]
            then = dig(committed(file), keys)
            if then:
                figure["over_own_baseline"] = {"now": figure[field], "reference": then,
                                               "slower": round(then / figure[field], 3)}
    return slower


def table(figures: dict[str, dict], slower: list[str], start, end, threshold: float) -> None:
    """The floor on stdout: a line a figure, then every figure more than ``threshold`` slower."""
    width = max(len(n) for n in figures)
    print(f"{'figure':<{width}}  {'now':>12}  {'reference':>12}  {'slower':>7}  {'vs own baseline':>15}  "
          f"{'same-run A/B':>12}  reference from (its load at start)")
    for name, f in figures.items():
        ref, own, ab = f["reference"], f.get("over_own_baseline"), f.get("same_run")
        shown = "-" if ref["value"] is None else f"{ref['value']:,}"
        baseline = f"{own['now']}x/{own['reference']}x" if own else "-"
        print(f"{name:<{width}}  {f['value']:>12,}  {shown:>12}  {f.get('slower', '-'):>7}  {baseline:>15}  "
              f"{ab['slower'] if ab else '-':>12}  {ref['source']}"
              + (f" @ {ref.get('commit')} (load {ref.get('load_average_start')})" if ref["value"] else ""))
    print(f"load average (1, 5, 15 min): {start} at start, {end} at end ({os.cpu_count()} cores); 'vs own "
          f"baseline': times faster than a recomputation in the same run, now/reference; 'same-run A/B': this "
          f"tree's median batch over the reference commit's code's (fastest of alternating runs in this run, thread "
          f"CPU time; it decides the flag)")
    if slower:
        print(f"more than {round((threshold - 1) * 100)}% slower:")
        for name in slower:
            f = figures[name]
            own, ab = f.get("over_own_baseline"), f.get("same_run")
            print(f"  {name}: {f['value']:,} against {f['reference']['value']:,} ({f.get('slower')}x slower"
                  + (f"; {own['slower']}x against its own baseline" if own else "")
                  + (f"; {ab['slower']}x {ab['reference_commit']}'s code in this run" if ab else "") + ")")
    else:
        print(f"no figure more than {round((threshold - 1) * 100)}% slower (the as-of and truss figures by "
              f"their same-run A/B where they have one)")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.batches < 20:
        raise SystemExit("--batches: at least 20")
    started = time.perf_counter()
    run = Run("floor", argv)
    start = load_averages()
    run["load_averages_start"] = start
    maintained_session()  # before anything in-process might start Spark with other settings
    figures: dict[str, dict] = {}
    figures.update(fresh(args.fresh))
    figures.update(truss(args.truss_graphs, args.truss_batches))
    figures.update(asof(args.asof_batches, args.seed))
    figures.update(triangles(args))
    if args.ab:
        same_run(figures, args)
    slower = compared(figures, args.threshold)
    end = load_averages()
    run["load_averages_end"] = end
    run["threshold"] = args.threshold
    run["figures"] = figures
    run["slower"] = slower
    run["total_seconds"] = round(time.perf_counter() - started, 1)
    out = run.save(Path(args.out))
    table(figures, slower, start, end, args.threshold)
    print(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
