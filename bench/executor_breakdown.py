"""Where the executors' extra time goes: a feed-forward triangle count placed on the driver and on the executors.

For R-MAT graphs read by ``spark.read.parquet`` (the input users have), each
round runs ``faq.count_triangles(df, directed=True, placement=...)`` with
``placement="driver"`` and ``placement="executors"``, and splits the
executors' time into phases:

* driver side (timed by wrapping faq's functions in this process, the same calls):
  the load (read, clean, orient, cache and count: the ``load`` progress event),
  the worker probe (``ensure_workers``), the index inputs written by Spark
  (``write_inputs``) or collected (``_collect``), the driver's kernel build and
  its shipping (``ship``: bytes and seconds), the rest of planning;
* per task (a bench-only copy of :func:`faq.joins.broadcast.expand_partition`
  doing the same work with clocks between the steps, pickled by value, its
  timings appended to a file the driver reads): importing faq's task modules
  (a fresh worker pays it; ``fresh_worker``: it had not imported them --
  under ``--daemon`` every worker is forked holding them), the index (read the Parquet inputs, build the
  kernel, write the index file, map it; or only map it, or find it already
  mapped), numba (import and the compiled loop's first call on no seeds: an
  on-disk cache hit or a compile), the kernel on the task's seeds, and handing
  the Arrow batches back; and what Spark's task took outside that body (the
  worker's start: a fork of the executor's Python daemon, or the daemon's own
  start on the executor's first Python task; the command; the input);
* Spark (its REST API, the UI enabled for this run): each job's wall time,
  its stages' longest tasks, and the gap (job wall time minus the sum of its
  stages' longest tasks: scheduling, task start, result return).

Usage (from the repository root)::

    .venv/bin/python -m bench.executor_breakdown                  # both masters, scales 16 and 18
    .venv/bin/python -m bench.executor_breakdown --masters "local[*]" --scales 16 --rounds 2
    .venv/bin/python -m bench.executor_breakdown --daemon      # the executors' Python daemon as faq.workers
    .venv/bin/python -m bench.executor_breakdown --summarize bench/results/executor_breakdown.json

Writes ``bench/results/executor_breakdown.json`` (:class:`bench.common.Run`): one record
per master, round, scale and placement, each with the load average beside it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from bench.common import GENERATED, RESULTS, ROOT, Run, log, rmat_graph

MASTERS = ("local-cluster[2,1,2048]", "local[*]")


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--masters", nargs="+", default=list(MASTERS))
    p.add_argument("--scales", nargs="+", type=int, default=[16, 18])
    p.add_argument("--rounds", type=int, default=3, help="rounds per scale (the first is cold)")
    p.add_argument("--out", default=str(RESULTS / "executor_breakdown.json"))
    p.add_argument("--daemon", action="store_true",
                   help="start the executors' Python daemon as faq.workers (faq.workers.serve_daemon: workers forked warm)")
    p.add_argument("--one-master", default=None, help=argparse.SUPPRESS)  # a child run: one master
    p.add_argument("--summarize", default=None, metavar="JSON", help="only recompute the summary of a results file")
    return p.parse_args(argv)


def edges_parquet(scale: int) -> str:
    """The R-MAT graph's edge list (``tools/gen_rmat.py``, cached) as Parquet ``src, dst`` (written once)."""
    out = GENERATED / f"rmat{scale}-16-seed1.parquet"
    if not out.exists():
        import pyarrow as pa
        import pyarrow.parquet as pq

        from faq.io.local_edges import read_edge_arrays

        src, dst = read_edge_arrays(str(rmat_graph(scale)))
        partial = out.with_suffix(".part")
        pq.write_table(pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64())}), str(partial))
        partial.replace(out)
    return str(out)


# --- the task body, instrumented (pickled by value: nothing of faq is imported before its clock starts) ---


def _timed_task(batches: Iterator[Any], handle: bytes, log_path: str, body: Callable) -> Iterator[Any]:
    """A task body with clocks: faq's import, the index's map (``handle``: the pickled handle), then
    ``body(batches, handle_object, index_value, lap, record)`` (the kernel's rows, timed by its own laps), the rows
    handed back; appends one JSON line to ``log_path``."""
    import json as json_
    import os as os_
    import pickle
    import sys as sys_
    import time as time_

    record: dict = {"pid": os_.getpid(), "start": time_.time(), "fresh_worker": "faq.joins.broadcast" not in sys_.modules}
    clock = [time_.perf_counter(), time_.process_time()]

    def lap(name: str) -> None:
        now, cpu = time_.perf_counter(), time_.process_time()
        record[name], record[f"{name}_cpu"] = round(now - clock[0], 4), round(cpu - clock[1], 4)
        clock[:] = [now, cpu]

    import faq.joins.broadcast  # noqa: F401 - what unpickling the real body imports
    from faq.joins import mapped

    lap("import")
    index = pickle.loads(handle)
    record["already_mapped"] = index.name in mapped._LOADED
    parts: dict = {}
    with _worker_clocks(parts):
        value = index.value
    lap("index")
    record["index_parts"] = {k: round(v, 4) for k, v in parts.items()}
    out = body(batches, index, value, lap, record)
    lap("kernel")
    yield from out
    lap("emit")
    record["end"] = time_.time()
    with open(log_path, "a") as f:
        f.write(json_.dumps(record) + "\n")


def timed_expand(batches: Iterator[Any], handle: bytes, seeds: Optional[int], tasks: int, log_path: str) -> Iterator[Any]:
    """:func:`faq.joins.broadcast.expand_partition`'s work with clocks (:func:`_timed_task`)."""

    def body(batches: Iterator[Any], index: Any, kernel: Any, lap: Callable, record: dict) -> list:
        import numpy as np

        import faq.joins.broadcast as broadcast

        if kernel.compiled:
            from faq.joins.compiled import aggregate_seeds

            import faq.joins.compiled_loop  # noqa: F401 - numba's import and the loop's decoration
            lap("numba_import")
            aggregate_seeds(kernel, np.zeros(0, dtype=np.int64))  # the first call: numba's cache load (or a compile)
            lap("numba_first_call")
        count = broadcast.seed_count(kernel) if seeds is None else seeds
        return list(broadcast.run_kernel(broadcast._dealt_seeds(batches, count, tasks), kernel))

    yield from _timed_task(batches, handle, log_path, body)


def timed_oriented(batches: Iterator[Any], handle: bytes, tasks: int, log_path: str, double: bool = False) -> Iterator[Any]:
    """:func:`faq.joins.broadcast.oriented_partition`'s work with clocks (:func:`_timed_task`; no numba rows: the
    count's first call is inside ``kernel``)."""

    def body(batches: Iterator[Any], index: Any, value: Any, lap: Callable, record: dict) -> list:
        import time as time_

        import faq.joins.broadcast as broadcast
        import faq.joins.oriented_triangle as oriented

        original = getattr(oriented, "lower_neighbours", None)
        if original is None:  # a tree that ships the transpose: nothing made in the task
            return list(broadcast.oriented_partition(batches, index, tasks, double))

        def clocked(*a: Any, **k: Any) -> Any:  # the task's share of the transpose, inside ``kernel``
            t = time_.perf_counter()
            try:
                return original(*a, **k)
            finally:
                record["kernel_transpose"] = record.get("kernel_transpose", 0.0) + time_.perf_counter() - t

        oriented.lower_neighbours = clocked
        try:
            return list(broadcast.oriented_partition(batches, index, tasks, double))
        finally:
            oriented.lower_neighbours = original

    yield from _timed_task(batches, handle, log_path, body)


@contextmanager
def _worker_clocks(parts: dict) -> Iterator[None]:
    """Clocks around the steps of an index's load in this worker (the module functions it calls, restored after)."""
    import time as time_

    from faq.joins import executor_index, kernel, mapped

    def wrap(owner: Any, name: str, label: str) -> Callable[[], None]:
        original = getattr(owner, name)

        @functools.wraps(original)
        def clocked(*a: Any, **k: Any) -> Any:
            t = time_.perf_counter()
            try:
                return original(*a, **k)
            finally:
                parts[label] = parts.get(label, 0.0) + time_.perf_counter() - t

        setattr(owner, name, clocked)
        return lambda: setattr(owner, name, original)

    undo = [wrap(executor_index, "read_group", "read_parquet"), wrap(kernel.KernelSpec, "build", "build_kernel"),
            wrap(executor_index, "for_tasks", "flatten"), wrap(mapped, "write_index", "write_file"),
            wrap(mapped, "read_index", "map_file"), wrap(mapped, "build_once", "build_once_total")]
    try:
        yield
    finally:
        for u in undo:
            u()


# --- the driver's clocks ---


class DriverClocks:
    """Wraps faq's driver-side steps of a broadcast join with clocks, and swaps the task body for :func:`timed_expand`."""

    def __init__(self, log_path: str) -> None:
        self.log_path = log_path
        self.seconds: dict[str, float] = {}
        self.shipped_bytes = 0

    def _wrap(self, stack: ExitStack, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:  # faq moved it: that phase is not timed (its row stays 0)
            return

        @functools.wraps(original)
        def clocked(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                out = original(*a, **k)
            finally:  # the driver's own thread only: what the join waited for (the workers' check runs beside it)
                if threading.current_thread() is threading.main_thread():
                    self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - t
            if label == "ship":
                self.shipped_bytes += out.nbytes
            return out

        setattr(owner, name, clocked)
        stack.callback(setattr, owner, name, original)

    @contextmanager
    def installed(self) -> Iterator["DriverClocks"]:
        from pyspark import cloudpickle

        import faq.workers
        from faq.joins import broadcast, executor_index, generic, kernel, mapped, oriented_triangle

        log_path = self.log_path

        class Partial:  # broadcast's functools: each task body's partial becomes the instrumented body's
            @staticmethod
            def partial(fn: Callable, *, index: Any, **k: Any) -> Any:
                timed = timed_oriented if fn is broadcast.oriented_partition else timed_expand
                return functools.partial(timed, handle=cloudpickle.dumps(index), log_path=log_path, **k)

        with ExitStack() as stack:
            for owner, name, label in [
                (faq.workers, "ensure_workers", "ensure_workers"), (broadcast, "index_on_driver", "index_on_driver"),
                (broadcast, "_collect", "collect"), (executor_index, "index_on_executors", "index_on_executors"),
                (executor_index, "write_inputs", "write_inputs"), (mapped, "ship", "ship"),
                (kernel.KernelSpec, "build", "driver_build_kernel"), (broadcast, "for_tasks", "driver_flatten"),
                (generic, "broadcast_join", "broadcast_join"),
                (oriented_triangle, "oriented_index", "driver_oriented_index"),
                (oriented_triangle, "oriented_rows", "driver_oriented_rows"),
            ]:
                self._wrap(stack, owner, name, label)
            stack.callback(setattr, broadcast, "functools", broadcast.functools)
            broadcast.functools = Partial
            yield self


# --- Spark's view: jobs and tasks (REST API of the driver's UI) ---


def _rest(spark: Any, path: str) -> Any:
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def _epoch(stamp: Optional[str]) -> Optional[float]:
    """Seconds since the epoch of the REST API's ``2026-11-29T12:35:17.123GMT``."""
    if not stamp:
        return None
    import calendar

    whole, _, millis = stamp.replace("GMT", "").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(millis or 0) / 1000


def spark_jobs(spark: Any, since: float, until: float) -> list[dict[str, Any]]:
    """The jobs submitted in [since, until] (epoch seconds): wall time, stages' longest tasks, the gap."""
    time.sleep(0.5)  # the listener bus delivers the last events asynchronously
    jobs = []
    for job in sorted(_rest(spark, "jobs"), key=lambda j: j["jobId"]):
        submitted, completed = _epoch(job.get("submissionTime")), _epoch(job.get("completionTime"))
        if submitted is None or completed is None or not since <= submitted < until:
            continue
        stages, longest_sum = [], 0.0
        for stage_id in job["stageIds"]:
            try:
                attempts = _rest(spark, f"stages/{stage_id}")
            except OSError:
                continue  # skipped stage (AQE reused its output)
            for attempt in attempts:
                if attempt.get("status") == "SKIPPED":
                    continue
                tasks = _rest(spark, f"stages/{stage_id}/{attempt['attemptId']}/taskList?length=10000")
                durations = [t.get("duration", 0) / 1000 for t in tasks]
                longest = max(durations, default=0.0)
                longest_sum += longest
                metrics = [t.get("taskMetrics", {}) for t in tasks]
                stages.append({"stage": stage_id, "tasks": len(tasks), "longest_task": round(longest, 3),
                               "deserialize_max": max((m.get("executorDeserializeTime", 0) / 1000 for m in metrics), default=0),
                               "scheduler_delay_max": max((t.get("schedulerDelay", 0) / 1000 for t in tasks), default=0),
                               "name": attempt.get("name", "")[:80]})
        wall = completed - submitted
        jobs.append({"job": job["jobId"], "description": (job.get("description") or job.get("name", ""))[:100],
                     "wall": round(wall, 3), "longest_tasks": round(longest_sum, 3),
                     "gap": round(wall - longest_sum, 3), "stages": stages})
    return jobs


# --- one run ---


def one_run(spark: Any, path: str, placement: str, log_path: str) -> dict[str, Any]:
    """``faq.count_triangles`` of the Parquet edges at ``placement``: totals, driver clocks, task clocks, jobs."""
    import faq

    open(log_path, "w").close()
    clocks = DriverClocks(log_path)
    events: list = []
    load = os.getloadavg()[0]
    since = time.time()
    t = time.perf_counter()
    with clocks.installed():
        result = faq.count_triangles(spark.read.parquet(path), directed=True, placement=placement,
                                     progress=lambda e: events.append((time.time(), e)))
    total = time.perf_counter() - t
    until = time.time()
    with open(log_path) as f:
        tasks = [json.loads(line) for line in f if line.strip()]
    for task in tasks:
        task["since_run_start"] = round(task.pop("start") - since, 3)
        task["until_run_end"] = round(until - task.pop("end"), 3)
    steps = [{"what": str(e)[:120], "seconds": getattr(e, "seconds", None), "at": round(at - since, 3)}
             for at, e in events]
    loaded = next((at for at, e in events if getattr(e, "kind", "") == "load"), since)
    note = " | ".join(e.note for _, e in events if getattr(e, "kind", "") == "done")
    return {"placement": placement, "count": result.count, "total": round(total, 3),
            "load": round(result.load_seconds or 0.0, 3), "join": round(result.join_seconds or 0.0, 3),
            "driver": {k: round(v, 4) for k, v in clocks.seconds.items()}, "shipped_bytes": clocks.shipped_bytes,
            "tasks": tasks,
            "load_jobs": spark_jobs(spark, since, loaded), "join_jobs": spark_jobs(spark, loaded, until), "steps": steps, "plan": note[:400],
            "load_average": [round(x, 2) for x in os.getloadavg()], "load_average_before": round(load, 2)}


def run_master(master: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every scale and round on one master (one session): driver and executors placements alternating."""
    from pyspark import cloudpickle

    from faq.spark import get_session

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the task body travels by value
    config = {"spark.ui.enabled": "true", "spark.ui.port": "0"}
    if args.daemon:
        from faq.workers import DAEMON_CONF

        config[DAEMON_CONF[0]] = DAEMON_CONF[1]
    spark = get_session(master=master, config=config)
    log_path = tempfile.mktemp(prefix="faq-executor-breakdown-", suffix=".jsonl")
    rows = []
    for scale in args.scales:
        path = edges_parquet(scale)
        for round_ in range(1, args.rounds + 1):
            for placement in ("driver", "executors"):
                row = one_run(spark, path, placement, log_path)
                row.update(master=master, scale=scale, round=round_, daemon=args.daemon)
                rows.append(row)
                log(f"{master} R-MAT {scale} round {round_} {placement}: {row['total']:.2f} s (load {row['load']:.2f}, "
                    f"join {row['join']:.2f}), load average {row['load_average'][0]}")
        counts = {r["count"] for r in rows if r["scale"] == scale}
        if len(counts) != 1:
            raise SystemExit(f"R-MAT {scale}: the placements disagree: {counts}")
    spark.stop()
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    if args.summarize:
        record = json.loads(Path(args.summarize).read_text())
        record["summary"] = summary(record["runs"])
        Path(args.summarize).write_text(json.dumps(record, indent=2, default=str) + "\n")
        return 0
    if args.one_master:
        rows = run_master(args.one_master, args)
        Path(args.out).write_text(json.dumps(rows, default=str))
        return 0
    run = Run("executor_breakdown", argv)
    rows: list = []
    for master in args.masters:
        part = tempfile.mktemp(prefix="faq-executor-breakdown-", suffix=".json")
        command = [sys.executable, "-m", "bench.executor_breakdown", "--one-master", master, "--out", part,
                   "--scales", *map(str, args.scales), "--rounds", str(args.rounds), *(["--daemon"] if args.daemon else [])]
        subprocess.run(command, check=True, cwd=ROOT)
        rows += json.loads(Path(part).read_text())
        os.remove(part)
    run["runs"] = rows
    run["summary"] = summary(rows)
    print(json.dumps(run.record["summary"], indent=1))
    log(f"wrote {run.save(Path(args.out))}")
    return 0


# --- the table ---

TASK_PHASES = ("import", "index", "numba_import", "numba_first_call", "kernel", "emit")


# Stage names of the jobs broadcast_join runs itself (the worker probe, the index's collect).
DRIVER_JOB_MARKS = ("faq/workers.py", "faq/joins/broadcast")


def _named(job: dict[str, Any], mark: str) -> bool:
    return any(mark in stage["name"] for stage in job["stages"])


def phases(row: dict[str, Any]) -> dict[str, float]:
    """One run's seconds per phase (tasks: the longest task's phases; the index's parts summed over tasks)."""
    d, out = row["driver"], {"total": row["total"], "load": row["load"], "join": row["join"]}
    out["join_driver_broadcast_join"] = d.get("broadcast_join", 0.0)
    for key in ("ensure_workers", "collect", "write_inputs", "driver_build_kernel", "driver_oriented_index",
                "driver_oriented_rows", "driver_flatten", "ship"):
        out[f"  of which {key}"] = d.get(key, 0.0)
    # The join's jobs: the probe and the index's collect (inside broadcast_join), then the tasks' job.
    inside = [j for j in row["join_jobs"] if any(m in st["name"] for st in j["stages"] for m in DRIVER_JOB_MARKS)]
    task_jobs = [j for j in row["join_jobs"] if j not in inside]
    out["  of which probe job wall"] = sum(j["wall"] for j in inside if _named(j, "workers.py"))
    out["  of which collect job wall"] = sum(j["wall"] for j in inside if _named(j, "broadcast"))
    out["join_task_job_wall"] = sum(j["wall"] for j in task_jobs)
    out["  of which longest task"] = sum(j["longest_tasks"] for j in task_jobs)
    out["  of which gap (wall - longest task)"] = sum(j["gap"] for j in task_jobs)
    out["join_rest_on_driver"] = out["join"] - out["join_driver_broadcast_join"] - out["join_task_job_wall"]
    tasks = row["tasks"]
    if tasks:
        slowest = max(tasks, key=lambda t: sum(t.get(p, 0.0) for p in TASK_PHASES))
        for p in TASK_PHASES:
            out[f"task {p}"] = slowest.get(p, 0.0)
        out["task kernel cpu"] = slowest.get("kernel_cpu", 0.0)
        out["task kernel: of which transpose"] = round(slowest.get("kernel_transpose", 0.0), 4)
        body = max(sum(t.get(p, 0.0) for p in TASK_PHASES) for t in tasks)
        # Spark's longest task less the longest body: the worker's start (fork, or the daemon's own start on
        # an executor's first Python task), the command's unpickling, the input, the executor's side.
        out["task outside the body"] = out["  of which longest task"] - body
        for part, seconds in slowest.get("index_parts", {}).items():
            out[f"task index: {part}"] = seconds
        out["tasks"] = len(tasks)
        out["fresh_workers"] = sum(1 for t in tasks if t["fresh_worker"])
    out["shipped_bytes"] = row["shipped_bytes"]
    out["load_average"] = row["load_average"][0]
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per master, scale and round: the driver's total and join, the executors' phases, and their ratio."""
    out = []
    for row in rows:
        if row["placement"] != "executors":
            continue
        driver = next(r for r in rows if r["placement"] == "driver" and r["master"] == row["master"]
                      and r["scale"] == row["scale"] and r["round"] == row["round"])
        out.append({"master": row["master"], "scale": row["scale"], "round": row["round"],
                    "driver_total": driver["total"], "driver_join": driver["join"],
                    "driver_load_average": driver["load_average"][0],
                    "ratio_total": round(row["total"] / driver["total"], 2),
                    "ratio_join": round(row["join"] / max(driver["join"], 1e-9), 2), "executors": phases(row)})
    return out


if __name__ == "__main__":
    sys.exit(main())
