"""A warm ``faq serve``: warm commands against it, GraphBLAS in the same run, and a soak of many commands.

One server (``faq serve --port P --master local[*]`` on a free port, stopped
at the end even on failure) answers everything:

* **warm commands** (after one unmeasured run of each): ``faq explain`` of the
  triangle query over email-Eu-core, ``faq triangles`` of email-Eu-core
  (``--undirected``), ``faq triangles --directed`` of R-MAT 17 with the
  placement faq chooses and with ``--placement executors`` (the server runs
  the jobs and ships index files).  Per command: wall seconds (the whole
  process, Python's start included) and faq's own clock (``seconds`` of the
  ``--json`` result, as :mod:`bench.bench_fresh` reads it; ``explain`` prints
  none, so only its wall time and the ``connected ... in X s`` note count);
* **GraphBLAS**: :func:`bench.bench_fresh.graphblas_command` (a new Python
  process: load + count of the same R-MAT 17 file), interleaved with the
  R-MAT 17 commands;
* **soak**: ``--soak`` commands in a fixed mix (per 10: 6 email-Eu-core
  triangles with ``--placement executors``, 2 explains, 2 R-MAT 14 directed
  triangles with ``--placement executors``).  ``--settle`` seconds after each
  one ends (the server's housekeeping runs every second: the series shows
  the server at rest between commands): resident memory of the server's
  processes (its Python process, the JVM, the JVM's Python workers:
  ``/proc``), bytes under the server's temporary directories (``os.walk``),
  files the processes hold open or mapped after deletion (disk no directory
  walk sees), and every ``--heap-every`` commands the JVM's heap (``jcmd
  GC.heap_info``).  The figures after the 10th and the last command and
  their ratio are the result; the JSON keeps the whole series.

The server's temporary directories are the ``tmp`` of its state file
(:func:`faq.cli.server.state_path`) when it records one; for a server that
does not, the ``spark-*``, ``blockmgr-*`` and ``artifacts-*`` directories that
appeared in the system's temporary directory between the server's start and
the end of the warm-up (a guess on a shared machine: ``tmp_source`` says which).

Run from the repository root::

    python -m bench.bench_server --repeat 5 --soak 100 --out bench/results/server_soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from bench.bench_fresh import graphblas_command, summary as fresh_summary
from bench.common import ROOT, TEST_DATA, Run, descendants, log, proc_mb, rmat_graph

FAQ = str(Path(sys.executable).parent / "faq")
EMAIL = TEST_DATA / "email-Eu-core.txt.gz"
TRIANGLE_QUERY = "count() := E(a,b), E(b,c), E(a,c)"
# Soak mix, one letter per command, repeated: e = email-Eu-core triangles on the executors, x = explain,
# r = R-MAT 14 triangles on the executors.
SOAK_PATTERN = "eexeereexr"
CONNECTED = re.compile(r"connected to Spark \S+ at \S+ in ([0-9.]+) s")
HEAP = re.compile(r"heap\s+total (\d+)K, used (\d+)K")
METASPACE = re.compile(r"Metaspace\s+used (\d+)K, committed (\d+)K")


# --- figures ---------------------------------------------------------------------------------------


def summary(values: list[float]) -> Optional[dict]:
    """bench_fresh's median/min/max/runs, with the 99th percentile (inclusive; the max below 100 runs)."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    p99 = statistics.quantiles(values, n=100, method="inclusive")[98] if len(values) > 1 else values[0]
    return {**fresh_summary(values), "p99": round(p99, 3)}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


# --- the server ----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, master: str) -> tuple[dict, float]:
    t0 = time.perf_counter()
    done = subprocess.run([FAQ, "serve", "--port", str(port), "--master", master, "--json"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"faq serve failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout), time.perf_counter() - t0


def stop_server(port: int) -> None:
    done = subprocess.run([FAQ, "serve", "--stop", "--port", str(port), "--json"], cwd=ROOT, capture_output=True,
                          text=True)
    log(f"stopped the server on port {port}: {done.stdout.strip() or done.stderr.strip()}")


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class Server:
    """The processes and temporary directories of one ``faq serve``, measured on demand."""

    TMP_PATTERNS = ("spark-", "blockmgr-", "artifacts-")

    def __init__(self, state: dict, tmp_before: set[str]) -> None:
        self.state = state
        self.pid = int(state["pid"])
        self.tmp_before = tmp_before
        self.tmp_dirs: list[str] = [state["tmp"]] if state.get("tmp") else []
        self.tmp_source = "state file" if self.tmp_dirs else None

    def discover_tmp(self) -> None:
        """For a server whose state names no temporary directory: the Spark directories that appeared since."""
        if self.tmp_dirs:
            return
        root = tempfile.gettempdir()
        self.tmp_dirs = sorted(os.path.join(root, n) for n in set(os.listdir(root)) - self.tmp_before
                               if n.startswith(self.TMP_PATTERNS))
        self.tmp_source = "discovered (new spark-/blockmgr-/artifacts- dirs in the temp dir)"

    def processes(self) -> dict[str, list[int]]:
        below = descendants(self.pid)
        jvms = [p for p in below if comm(p) == "java"]
        workers = [p for j in jvms for p in descendants(j)]
        return {"server_python": [self.pid], "jvm": jvms, "workers": workers}

    def measure(self, heap: bool = False) -> dict:
        procs = self.processes()
        rss = {k: sum(proc_mb(p, "status", ("VmRSS",)).get("VmRSS", 0.0) for p in ps) for k, ps in procs.items()}
        pss = sum(proc_mb(p, "smaps_rollup", ("Pss",)).get("Pss", 0.0) for ps in procs.values() for p in ps)
        files = count = 0
        for top in self.tmp_dirs:
            for folder, _, names in os.walk(top):
                for name in names:
                    try:
                        files += os.lstat(os.path.join(folder, name)).st_size
                        count += 1
                    except OSError:
                        pass
        out = {
            "t": round(time.time(), 1),
            "jvm_rss_mb": round(rss["jvm"], 1),
            "workers_rss_mb": round(rss["workers"], 1),
            "server_python_rss_mb": round(rss["server_python"], 1),
            "rss_mb": round(rss["jvm"] + rss["workers"] + rss["server_python"], 1),
            "pss_mb": round(pss, 1),
            "workers": len(procs["workers"]),
            "tmp_mb": round(files / 2**20, 2),
            "tmp_files": count,
            "deleted_held_mb": round(deleted_held(sum(procs.values(), [])) / 2**20, 2),
            "log_mb": (round(os.path.getsize(self.state["log"]) / 2**20, 3) if os.path.exists(self.state["log"])
                       else None),
        }
        if heap and procs["jvm"]:
            out.update(heap_info(procs["jvm"][0]))
        return out


def deleted_held(pids: list[int]) -> int:
    """Bytes of deleted files the processes still hold open or mapped (each file once)."""
    seen: dict[tuple[int, int], int] = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = f"/proc/{pid}/fd/{fd}"
                try:
                    if os.readlink(link).endswith(" (deleted)"):
                        st = os.stat(link)
                        seen[(-1, st.st_ino)] = st.st_size
                except OSError:
                    pass
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].rstrip().endswith("(deleted)") and parts[4] != "0":
                        lo, hi = (int(x, 16) for x in parts[0].split("-"))
                        key = (-1, int(parts[4]))  # by inode (maps prints the device in another form than st_dev)
                        seen[key] = max(seen.get(key, 0), hi - lo)
        except OSError:
            pass
    return sum(seen.values())


def heap_info(jvm: int) -> dict:
    """The JVM's heap and metaspace (``jcmd PID GC.heap_info``), MiB."""
    jcmd = Path(os.environ.get("JAVA_HOME", "")) / "bin" / "jcmd"
    try:
        text = subprocess.run([str(jcmd) if jcmd.exists() else "jcmd", str(jvm), "GC.heap_info"],
                              capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out = {}
    found = HEAP.search(text)
    if found:
        out["heap_committed_mb"] = round(int(found.group(1)) / 1024)
        out["heap_used_mb"] = round(int(found.group(2)) / 1024)
    found = METASPACE.search(text)
    if found:
        out["metaspace_used_mb"] = round(int(found.group(1)) / 1024)
    return out


# --- commands ------------------------------------------------------------------------------------------


def commands(remote: str, rmat17: Path, rmat14: Path) -> dict[str, list[str]]:
    on = ["--remote", remote, "--json"]
    return {
        "explain": ["explain", TRIANGLE_QUERY, "--factor", f"E={EMAIL.relative_to(ROOT)}", *on],
        "email_triangles": ["triangles", str(EMAIL.relative_to(ROOT)), "--undirected", *on],
        "email_triangles_executors": ["triangles", str(EMAIL.relative_to(ROOT)), "--undirected", *on,
                                      "--placement", "executors"],
        "rmat17_triangles": ["triangles", str(rmat17.relative_to(ROOT)), "--directed", *on],
        "rmat17_triangles_executors": ["triangles", str(rmat17.relative_to(ROOT)), "--directed", *on,
                                       "--placement", "executors"],
        "rmat14_triangles_executors": ["triangles", str(rmat14.relative_to(ROOT)), "--directed", *on,
                                       "--placement", "executors"],
    }


def run_faq(args: list[str]) -> dict:
    """One ``faq`` command: wall seconds, faq's own clock, the connect note, the count."""
    t0 = time.perf_counter()
    done = subprocess.run([FAQ, *args], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"faq {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    out = json.loads(done.stdout)
    connected = CONNECTED.search(done.stderr)
    return {"wall": round(wall, 3), "own": out.get("seconds"), "count": out.get("count"),
            "connected": connected is not None,
            "connect_seconds": float(connected.group(1)) if connected else None}


# --- the run -------------------------------------------------------------------------------------------


def warm(cmds: dict[str, list[str]], rmat17: Path, repeat: int) -> dict:
    """Each warm command ``repeat`` times (after one unmeasured run), GraphBLAS on R-MAT 17 interleaved."""
    kinds = ["explain", "email_triangles", "rmat17_triangles", "rmat17_triangles_executors"]
    first = {}
    for kind in kinds:
        first[kind] = run_faq(cmds[kind])
        log(f"warm-up {kind}: wall {first[kind]['wall']} s, own {first[kind]['own']} s")
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    graphblas: list[dict] = []
    for i in range(repeat):
        for kind in kinds:
            runs[kind].append(run_faq(cmds[kind]))
        gb = graphblas_command(rmat17)
        graphblas.append({"total": gb["load"] + gb["count_seconds"], "load": gb["load"], "count": gb["count"]})
        log(f"round {i + 1}/{repeat}: " + ", ".join(f"{k} {runs[k][-1]['wall']}/{runs[k][-1]['own']} s" for k in kinds)
            + f", graphblas {graphblas[-1]['total']:.3f} s")
    out: dict = {"first_run": first}
    for kind in kinds:
        rs = runs[kind]
        counts = {r["count"] for r in rs} | {first[kind]["count"]}
        if len(counts) != 1:
            raise SystemExit(f"{kind}: counts disagree: {sorted(counts, key=str)}")
        out[kind] = {"command": "faq " + " ".join(cmds[kind]), "count": counts.pop(),
                     "connected": all(r["connected"] for r in rs), "wall": summary([r["wall"] for r in rs]),
                     "own": summary([r["own"] for r in rs]), "connect": summary([r["connect_seconds"] for r in rs])}
    gb_counts = {g["count"] for g in graphblas}
    if gb_counts != {out["rmat17_triangles"]["count"]}:
        raise SystemExit(f"rmat17: GraphBLAS {sorted(gb_counts)} vs faq {out['rmat17_triangles']['count']}")
    out["graphblas_rmat17"] = {"load_plus_count": summary([g["total"] for g in graphblas]),
                               "load": summary([g["load"] for g in graphblas]), "count": gb_counts.pop()}
    gb_median = out["graphblas_rmat17"]["load_plus_count"]["median"]
    for kind in ("rmat17_triangles", "rmat17_triangles_executors"):
        out[f"ratio_{kind}_own_to_graphblas"] = round(out[kind]["own"]["median"] / gb_median, 2)
        out[f"ratio_{kind}_wall_to_graphblas"] = round(out[kind]["wall"]["median"] / gb_median, 2)
    return out


def soak(server: Server, cmds: dict[str, list[str]], n: int, heap_every: int, settle: float) -> dict:
    kinds = {"e": "email_triangles_executors", "x": "explain", "r": "rmat14_triangles_executors"}
    series = []
    before = server.measure(heap=True)
    t0 = time.perf_counter()
    for i in range(n):
        kind = kinds[SOAK_PATTERN[i % len(SOAK_PATTERN)]]
        result = run_faq(cmds[kind])
        time.sleep(settle)
        point = {"i": i + 1, "kind": kind, "wall": result["wall"], "own": result["own"],
                 **server.measure(heap=(i + 1) % heap_every == 0 or i + 1 in (1, 10, n))}
        series.append(point)
        if (i + 1) % 10 == 0 or i == 0:
            log(f"soak {i + 1}/{n}: rss {point['rss_mb']} MB (jvm {point['jvm_rss_mb']}, workers "
                f"{point['workers_rss_mb']} in {point['workers']}), tmp {point['tmp_mb']} MB in "
                f"{point['tmp_files']} files, deleted-held {point['deleted_held_mb']} MB"
                + (f", heap {point['heap_used_mb']}/{point['heap_committed_mb']} MB" if "heap_used_mb" in point
                   else ""))
    out: dict = {"commands": n, "pattern": SOAK_PATTERN, "settle_seconds": settle,
                 "mix": {k: sum(1 for p in series if p["kind"] == k) for k in kinds.values()},
                 "seconds": round(time.perf_counter() - t0, 1), "before": before, "series": series}
    if n >= 10:
        tenth, last = series[9], series[-1]
        keys = ("rss_mb", "jvm_rss_mb", "workers_rss_mb", "pss_mb", "tmp_mb", "deleted_held_mb", "heap_committed_mb",
                "heap_used_mb")
        out["after_10th"] = {k: tenth.get(k) for k in keys}
        out[f"after_{n}th"] = {k: last.get(k) for k in keys}
        out["ratio_last_to_10th"] = {k: (round(last[k] / tenth[k], 3) if tenth.get(k) and last.get(k) is not None
                                         else None) for k in keys}
        # Less sensitive to one command: the means of commands 10-19 and of the last 10, and the least-squares
        # slope from the 10th on (MB per command).
        if n >= 20:
            for k in ("rss_mb", "jvm_rss_mb", "workers_rss_mb", "tmp_mb"):
                early = statistics.mean(p[k] for p in series[9:19])
                late = statistics.mean(p[k] for p in series[-10:])
                xs, ys = [p["i"] for p in series[9:]], [p[k] for p in series[9:]]
                slope = statistics.linear_regression(xs, ys).slope
                out.setdefault("windows", {})[k] = {"mean_10_19": round(early, 2), f"mean_last_10": round(late, 2),
                                                    "ratio": round(late / early, 3) if early else None,
                                                    "slope_per_command": round(slope, 3)}
    for kind in kinds.values():
        done = [p for p in series if p["kind"] == kind]
        if done:
            out[f"{kind}_wall"] = summary([p["wall"] for p in done])
            out[f"{kind}_own"] = summary([p["own"] for p in done])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="measured runs of each warm command (0: no warm part)")
    parser.add_argument("--soak", type=int, default=100, help="commands of the soak run (0: none)")
    parser.add_argument("--heap-every", type=int, default=10, help="jcmd GC.heap_info every N soak commands")
    parser.add_argument("--settle", type=float, default=1.5,
                        help="seconds between a soak command's end and the measurement (the server's housekeeping "
                             "runs every second)")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    run = Run("bench_server", argv)
    run["git_head"] = git("log", "-1", "--format=%h")
    run["entry_py_status"] = git("status", "--short", "faq/cli/entry.py") or "clean"
    run["server_py_status"] = git("status", "--short", "faq/cli/server.py") or "clean"
    rmat17, rmat14 = rmat_graph(17), rmat_graph(14)
    port = args.port or free_port()
    remote = f"sc://localhost:{port}"
    cmds = commands(remote, rmat17, rmat14)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below on kill too
    tmp_before = set(os.listdir(tempfile.gettempdir()))
    state, start_seconds = start_server(port, args.master)
    log(f"server on port {port} (pid {state['pid']}) started in {start_seconds:.1f} s")
    try:
        server = Server(state, tmp_before)
        run["server"] = {"port": port, "master": args.master, "start_seconds": round(start_seconds, 1),
                         "state": {k: v for k, v in state.items() if k != "started"}}
        from faq.cli import server as server_module

        run.record["server"]["settings"] = {k: getattr(server_module, k) for k in (
            "SERVER_CONFIG", "HOUSEKEEPING_INTERVAL", "GC_GROWTH", "IDLE_SECONDS") if hasattr(server_module, k)}
        run["after_start"] = server.measure(heap=True)
        if args.repeat:
            run["warm"] = warm(cmds, rmat17, args.repeat)
        server.discover_tmp()
        run.record["server"]["tmp_dirs"], run.record["server"]["tmp_source"] = server.tmp_dirs, server.tmp_source
        time.sleep(args.settle)
        run["after_warm"] = server.measure(heap=True)
        if args.soak:
            run["soak"] = soak(server, cmds, args.soak, args.heap_every, args.settle)
        targets: dict = {}
        run["targets"] = targets
        if args.repeat:
            w = run.record["warm"]
            targets.update({
                "explain_wall_le_1s": w["explain"]["wall"]["median"] <= 1.0,
                "email_triangles_wall_le_1s": w["email_triangles"]["wall"]["median"] <= 1.0,
                "email_triangles_own_le_1s": w["email_triangles"]["own"]["median"] <= 1.0,
                "rmat17_own_le_graphblas": w["ratio_rmat17_triangles_own_to_graphblas"] <= 1.0,
                "rmat17_executors_own_le_graphblas": w["ratio_rmat17_triangles_executors_own_to_graphblas"] <= 1.0,
            })
        if args.soak >= 10:
            ratio = run.record["soak"]["ratio_last_to_10th"]
            targets["soak_rss_within_10pct"] = ratio["rss_mb"] is not None and ratio["rss_mb"] <= 1.10
            tmp10 = run.record["soak"]["after_10th"]["tmp_mb"]
            tmpn = run.record["soak"][f"after_{args.soak}th"]["tmp_mb"]
            targets["soak_tmp_within_10pct"] = tmpn <= 1.10 * tmp10 if tmp10 else tmpn == 0
        log("targets: " + json.dumps(targets))
    finally:
        stop_server(port)
        run["entry_py_status_end"] = git("status", "--short", "faq/cli/entry.py") or "clean"
        path = run.save(None if args.out is None else Path(args.out))
        log(f"wrote {path}")


if __name__ == "__main__":
    main()
