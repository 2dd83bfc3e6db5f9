"""A resume proves it is the same job (issue 48 item 3): a state records its job's inputs and options when
made, a resume with another input (by content), option or a missing input is refused naming the difference,
and ``--restart`` replaces the state, under the writer's lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pytest

from faq.errors import InputNotFoundError, StateDirectoryError, StateJobMismatchError, StateLockedError
from faq.incremental.job import JOB, check_job, job_identity, recording
from faq.incremental.store import MANIFEST, Store


def faq(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "faq", *map(str, argv)], capture_output=True, text=True,
                          timeout=120)


def saved_job(state) -> dict:
    with open(os.path.join(state, MANIFEST)) as f:
        return json.load(f)[JOB]


def test_faq_truss_resumes_only_its_own_graph_and_k(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n1 3\n3 4\n")
    updates = tmp_path / "upd"
    updates.mkdir()
    (updates / "001.txt").write_text("+ 1 4\n")
    state = tmp_path / "S"
    assert faq("truss", graph, "--updates", updates, "--state", state).returncode == 0
    assert saved_job(state)["inputs"]["graph"]["path"] == str(graph)

    missing = faq("truss", "/nonexistent.txt", "--updates", updates, "--state", state)  # the reproduction
    assert missing.returncode == 2 and "[INPUT_NOT_FOUND]" in missing.stderr and "resumed" not in missing.stdout
    other_k = faq("truss", graph, "--updates", updates, "--state", state, "--k", 3)
    assert other_k.returncode == 2 and "[STATE_JOB_MISMATCH]" in other_k.stderr
    assert "its k was null, now 3" in other_k.stderr and "--restart" in other_k.stderr

    info = os.stat(graph)
    graph.write_text("1 2\n2 3\n1 3\n3 5\n")  # same size, and the same time put back: the content decides
    os.utime(graph, ns=(info.st_atime_ns, info.st_mtime_ns))
    changed = faq("truss", graph, "--updates", updates, "--state", state)
    assert changed.returncode == 2 and f"its graph was {graph} (16 bytes, sha256" in changed.stderr

    graph.write_text("1 2\n2 3\n1 3\n3 4\n")
    moved = tmp_path / "elsewhere.txt"
    shutil.copy(graph, moved)  # the same content under another name and time: the same job
    again = faq("truss", moved, "--updates", updates, "--state", state)
    assert again.returncode == 0 and "resumed at version 1" in again.stdout, again.stderr

    other = tmp_path / "other.txt"
    other.write_text("1 2\n2 3\n1 3\n3 5\n5 1\n")
    restarted = faq("truss", other, "--updates", updates, "--state", state, "--restart", "--json")
    assert restarted.returncode == 0, restarted.stderr
    first = json.loads(restarted.stdout.splitlines()[0])
    assert first["resumed"] is False and first["edges"] == 5 and "discarded" in restarted.stderr
    assert saved_job(state)["inputs"]["graph"]["path"] == str(other)
    alone = faq("truss", graph, "--updates", updates, "--restart")
    assert alone.returncode == 2 and "--restart" in alone.stderr and "--state" in alone.stderr


def test_faq_asof_resumes_only_its_own_direction_tolerance_how_and_mode(tmp_path):
    pd.DataFrame({"time": [1, 4], "sym": ["a", "a"], "qty": [5, 7]}).to_csv(tmp_path / "t.csv", index=False)
    pd.DataFrame({"time": [1, 3], "sym": ["a", "a"], "px": [10.0, 11.0]}).to_csv(tmp_path / "q.csv", index=False)
    updates, state = tmp_path / "upd", tmp_path / "A"
    updates.mkdir()
    (updates / "001.csv").write_text("side,time,sym,qty,px,diff\nright,4,a,,12.0,1\n")
    base = ["asof", tmp_path / "t.csv", tmp_path / "q.csv", "--on", "time", "--by", "sym", "--updates", updates,
            "--state", state]
    assert faq(*base).returncode == 0

    forward = faq(*base, "--direction", "forward", "--tolerance", 5, "--how", "inner")  # the reproduction
    assert forward.returncode == 2 and '[STATE_JOB_MISMATCH]' in forward.stderr
    assert 'its direction was "backward", now "forward"' in forward.stderr
    locked = faq(*base, "--mode", "locked")
    assert locked.returncode == 2 and 'its mode was "view", now "locked"' in locked.stderr
    tolerance = faq(*base, "--tolerance", 5)
    assert tolerance.returncode == 2 and "its tolerance was null, now 5.0" in tolerance.stderr
    same = faq(*base)
    assert same.returncode == 0 and "resumed at version 1" in same.stdout, same.stderr


def test_a_state_records_its_job_once_and_every_commit_keeps_it(tmp_path):
    source = tmp_path / "edges.txt"
    source.write_text("1 2\n")
    job = job_identity("example", {"edges": source, "frame": pd.DataFrame({"a": [1]})}, k=3, by=["s"])
    store = Store(tmp_path / "st")
    with recording(job):
        store.create()
    store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1]}))})
    store.save(1, {"kind": "example"}, {"edge": ("delta", pa.table({"src": [2]}))})
    store.release()
    store.lock()  # a later writer (reads the manifest again) keeps it too
    store.save(2, {"kind": "example"}, {})
    store.release()
    meta = Store(store.path).manifest()
    assert meta[JOB] == json.loads(json.dumps(job)) and meta[JOB]["inputs"]["frame"] == {"schema": "{'a': 'int64'}"}
    check_job(store.path, meta, job)  # the same job: nothing said

    with pytest.raises(StateJobMismatchError) as refused:
        check_job(store.path, meta, job_identity("example", {"edges": source, "frame": pd.DataFrame({"b": [1]})},
                                                 k=3, by=["s"]))
    assert refused.value.parameters == {"path": store.path, "field": "frame",
                                        "saved": "a table of schema {'a': 'int64'}",
                                        "given": "a table of schema {'b': 'int64'}"}
    with pytest.raises(StateJobMismatchError) as refused:
        check_job(store.path, meta, {**job, "options": {"k": 3, "by": ["s", "t"]}})
    assert (refused.value.parameters["field"], refused.value.parameters["saved"],
            refused.value.parameters["given"]) == ("by", '["s"]', '["s", "t"]')
    assert isinstance(refused.value, StateDirectoryError)
    with pytest.raises(InputNotFoundError):  # a missing input is not a job
        job_identity("example", {"edges": tmp_path / "gone.txt"})
    with pytest.raises(StateDirectoryError, match="job record faq did not write"):
        check_job(store.path, {JOB: {"inputs": []}}, job)


def test_a_state_saved_before_jobs_were_recorded_is_resumed_with_a_note(tmp_path):
    store = Store(tmp_path / "old")
    store.create()  # not under recording(): as every state before
    store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1]}))})
    store.release()
    notes = []
    check_job(store.path, Store(store.path).manifest(), job_identity("example", {}, k=1), notes.append)
    assert len(notes) == 1 and "without checking" in notes[0]


def test_a_restart_discards_only_faq_files_and_never_under_another_writer(tmp_path):
    store = Store(tmp_path / "st")
    store.create()
    store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1]}))})
    with pytest.raises(StateLockedError):  # the writer still holds it: not discarded under it
        Store(store.path).discard()
    assert Store(store.path).load()[0]["version"] == 0
    store.release()
    Store(store.path).discard()
    assert not Store(store.path).exists() and os.listdir(os.path.join(store.path, "data")) == []
    Store(store.path).create()  # what is left counts as empty: a new state can be made


def test_a_directory_of_parts_is_hashed_whole_and_a_url_is_compared_by_its_text(tmp_path):
    from faq.incremental.job import difference

    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "part-0.txt").write_text("1 2\n")
    (parts / "part-1.txt").write_text("2 3\n")
    saved = job_identity("track", {"edges": parts})
    assert saved["inputs"]["edges"]["size"] == 8 and difference(saved, job_identity("track", {"edges": parts})) is None
    (parts / "part-1.txt").write_text("2 4\n")
    assert difference(saved, job_identity("track", {"edges": parts}))[0] == "edges"
    url = job_identity("track", {"edges": "hdfs://host/graph/part-*.txt"})  # Spark reads it: not hashed here
    assert url["inputs"]["edges"] == {"url": "hdfs://host/graph/part-*.txt"}
    assert difference(url, job_identity("track", {"edges": "hdfs://host/other"})) == (
        "edges", "hdfs://host/graph/part-*.txt", "hdfs://host/other")
