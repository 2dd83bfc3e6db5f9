"""State directories keep their promises (issue 38 item 2): one writer, readers that delete nothing,
nothing outside the directory touched, a user's files never swept, damage and forgery detected.

Most tests work on the Store directly or on a small saved maintained query
copied per test (reopening needs no Spark); the fault-injection test kills a
writer process at random moments while this process reopens the state, and
checks every reopen against an independent count (scipy).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faq.errors import StateDirectoryError, StateLockedError
from faq.incremental import MaintainedQuery
from faq.incremental.store import MANIFEST, Store, _manifest_checksum
from tests.helpers import change_files, feed_forward

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parent.parent
QUERY = "count() := edge(a,b), edge(a,c), edge(b,c)"
SMALL = [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (3, 4)]


@pytest.fixture(scope="module")
def saved(spark, tmp_path_factory) -> Path:
    """A small maintained triangle count saved at version 0 (copied by each test that changes it)."""
    from faq.factor import Factor

    folder = tmp_path_factory.mktemp("saved") / "state"
    df = spark.createDataFrame(SMALL, "src bigint, dst bigint")
    factor = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    with MaintainedQuery(QUERY, {"edge": factor}, path=str(folder)):
        pass
    return folder


@pytest.fixture
def state(saved, tmp_path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(saved, copy)
    return copy


def batch(*rows: tuple[int, int, int]) -> dict:
    return {"edge": pa.table({"src": [r[0] for r in rows], "dst": [r[1] for r in rows],
                              "value": [r[2] for r in rows]})}


def rewrite_manifest(path: Path, change) -> None:
    """Edit a manifest the way a forger would: change it, then recompute its checksum."""
    meta = json.loads((path / MANIFEST).read_text())
    change(meta)
    meta["checksum"] = _manifest_checksum(meta)
    (path / MANIFEST).write_text(json.dumps(meta))


# --- one writer at a time ------------------------------------------------------------------


def test_a_second_writer_in_another_process_is_refused_naming_the_holder(state):
    with MaintainedQuery.open(str(state)) as writer:
        writer.apply(batch((4, 0, 1)), version=1)  # the first batch takes the lock
        child = subprocess.run(
            [sys.executable, "-c",
             "import sys, pyarrow as pa\n"
             "from faq.incremental import MaintainedQuery\n"
             "from faq.errors import StateLockedError\n"
             "q = MaintainedQuery.open(sys.argv[1])\n"           # reading is allowed while another writes
             "print('read', q.version, q.scalar())\n"
             "try:\n"
             "    q.apply({'edge': pa.table({'src': [5], 'dst': [6], 'value': [1]})})\n"
             "except StateLockedError as e:\n"
             "    print('refused', e.parameters['holder'])\n",
             str(state)], capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert child.returncode == 0, child.stderr
        lines = child.stdout.splitlines()
        assert lines[0] == f"read 1 {feed_forward(set(SMALL) | {(4, 0)}, 7)}"
        assert lines[1].startswith(f"refused pid {os.getpid()} on ")
        assert writer.version == 1
    # the writer closed: the lock is free, and the state is exactly the writer's
    with MaintainedQuery.open(str(state)) as again:
        again.apply(batch((5, 6, 1)), version=2)
        assert again.scalar() == feed_forward(set(SMALL) | {(4, 0), (5, 6)}, 7)


def test_a_writer_that_fell_behind_is_refused_not_overwriting(state):
    first = MaintainedQuery.open(str(state))
    second = MaintainedQuery.open(str(state))
    second.apply(batch((4, 0, 1)), version=1)
    with pytest.raises(StateLockedError) as err:  # second holds the lock
        first.apply(batch((5, 6, 1)))
    assert err.value.parameters["path"] == str(state)
    second.close()
    with pytest.raises(StateDirectoryError, match="another writer committed version 1"):
        first.apply(batch((5, 6, 1)))  # first read version 0: it must not write version 1 over the other's
    first.close()
    with MaintainedQuery.open(str(state)) as reopened:
        assert (reopened.version, reopened.scalar()) == (1, feed_forward(set(SMALL) | {(4, 0)}, 7))


def test_reading_deletes_nothing_and_the_writer_sweeps_only_its_own_files(state):
    orphan = state / "data" / "edge-v9-delta-0123abcd.parquet"  # what an interrupted save leaves
    orphan.write_bytes(b"partial")
    stray = state / ".manifest.json.89abcdef"
    stray.write_text("{")
    foreign = state / "data" / "notes.txt"  # not a name faq gives: never faq's to delete
    foreign.write_text("mine")
    with MaintainedQuery.open(str(state)) as reader:
        assert reader.scalar() == feed_forward(set(SMALL), 5)
    assert orphan.exists() and stray.exists()  # a reader deletes nothing
    with MaintainedQuery.open(str(state)) as writer:
        writer.apply(batch((4, 0, 1)), version=1)
    assert not orphan.exists() and not stray.exists()  # the writer's recovery, under the lock
    assert foreign.read_text() == "mine"


# --- a user's files are never touched ----------------------------------------------------


def test_a_directory_of_the_users_files_is_refused_before_any_work(spark, tmp_path):
    from faq.factor import Factor

    project = tmp_path / "proj"
    (project / "data" / "sub").mkdir(parents=True)
    (project / "data" / "results-2024.csv").write_text("a,b\n1,2\n")
    (project / "data" / "sub" / "x.txt").write_text("x")
    factor = Factor.from_dataframe(spark.createDataFrame(SMALL, "src bigint, dst bigint"), ["src", "dst"],
                                   "counting", value=None, name="edge")
    with pytest.raises(StateDirectoryError, match="is not empty and holds no faq state") as err:
        MaintainedQuery(QUERY, {"edge": factor}, path=str(project))
    assert "data/results-2024.csv" in err.value.parameters["reason"]
    assert (project / "data" / "results-2024.csv").read_text() == "a,b\n1,2\n"
    assert (project / "data" / "sub" / "x.txt").read_text() == "x"
    assert sorted(os.listdir(project)) == ["data"]  # not even a lock file left behind


def test_a_cli_state_in_a_folder_of_the_users_files_exits_2_and_keeps_them(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{u} {v}\n" for u, v in SMALL))
    updates = tmp_path / "updates"
    updates.mkdir()
    (updates / "001.txt").write_text("+ 4 0\n")
    project = tmp_path / "proj"
    (project / "data").mkdir(parents=True)
    (project / "data" / "results-2024.csv").write_text("kept\n")
    done = subprocess.run([sys.executable, "-m", "faq", "track", "(a)->(b); (b)->(c); (a)->(c)", str(graph),
                           str(updates), "--state", str(project), "-q"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2, done.stderr
    assert "[STATE_DIRECTORY]" in done.stderr and "holds no faq state" in done.stderr
    assert (project / "data" / "results-2024.csv").read_text() == "kept\n"


def test_a_symlinked_data_directory_is_refused_and_its_target_untouched(state, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(state / "data"), elsewhere)
    (elsewhere / "edge-v7-base-00000000.parquet").write_bytes(b"user bytes")  # a name faq would sweep
    os.symlink(elsewhere, state / "data")
    before = sorted(os.listdir(elsewhere))
    with pytest.raises(StateDirectoryError, match="data/ is a symbolic link"):
        MaintainedQuery.open(str(state))
    with pytest.raises(StateDirectoryError, match="data/ is a symbolic link"):
        Store(state).lock()
    assert sorted(os.listdir(elsewhere)) == before


def test_a_planted_lock_link_is_not_followed(state, tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("untouched")
    (state / "writer.lock").unlink()
    os.symlink(target, state / "writer.lock")
    with MaintainedQuery.open(str(state)) as q:  # reading needs no lock
        with pytest.raises(StateDirectoryError, match="writer.lock is a symbolic link"):
            q.apply(batch((4, 0, 1)))
    assert target.read_text() == "untouched"


# --- damaged and forged states ------------------------------------------------------------


def test_a_damaged_manifest_is_named(state):
    text = (state / MANIFEST).read_text()
    (state / MANIFEST).write_text(text.replace('"version": 0', '"version": 3'))
    with pytest.raises(StateDirectoryError, match="does not match its checksum") as err:
        MaintainedQuery.open(str(state))
    assert err.value.parameters["path"] == str(state)
    (state / MANIFEST).write_text("{not json")
    with pytest.raises(StateDirectoryError, match="is not JSON"):
        MaintainedQuery.open(str(state))


def test_a_damaged_data_file_is_named(state):
    meta = json.loads((state / MANIFEST).read_text())
    file = meta["relations"]["edge"]["files"][0]
    content = bytearray((state / "data" / file).read_bytes())
    content[len(content) // 2] ^= 0xFF
    (state / "data" / file).write_bytes(bytes(content))
    with pytest.raises(StateDirectoryError, match=f"data file {file} does not match its checksum"):
        MaintainedQuery.open(str(state))


def test_a_forged_manifest_cannot_reach_outside_the_state(state, tmp_path):
    outside = tmp_path / "other" / "data"
    outside.mkdir(parents=True)
    meta = json.loads((state / MANIFEST).read_text())
    file = meta["relations"]["edge"]["files"][0]
    shutil.copy(state / "data" / file, outside / file)
    rewrite_manifest(state, lambda m: m["relations"]["edge"]["files"].__setitem__(0, f"../../other/data/{file}"))
    with pytest.raises(StateDirectoryError, match="that is not of faq's form"):
        MaintainedQuery.open(str(state))


@pytest.mark.parametrize("forgery, words", [
    (lambda m: m.pop("columns"), "a field is missing or malformed (KeyError: 'columns')"),
    (lambda m: m.__setitem__("key_types", "x"), "a field is missing or malformed (AttributeError"),
    (lambda m: m["relations"]["edge"]["rows"].__setitem__(0, 99), "holds 6 rows, the manifest says 99"),
    (lambda m: m["relations"]["edge"]["sha256"].__setitem__(0, "0" * 64), "does not match its checksum"),
    (lambda m: m.__setitem__("version", -1), "has no valid version"),
    (lambda m: m.__setitem__("labels", [1]), "labels that are not a list of strings"),
])
def test_a_forged_manifest_is_a_state_directory_error(state, forgery, words):
    rewrite_manifest(state, forgery)
    with pytest.raises(StateDirectoryError) as err:
        MaintainedQuery.open(str(state))
    assert words in err.value.parameters["reason"]


def test_a_trackers_count_is_covered_by_the_checksum(spark, tmp_path):
    from faq import track
    from faq.graphs.track import MotifTracker

    edges = spark.createDataFrame(SMALL, "src bigint, dst bigint")
    with track(edges, "(a)->(b); (b)->(c); (a)->(c)", state=str(tmp_path / "t")) as tracker:
        count = tracker.count
    text = (tmp_path / "t" / MANIFEST).read_text()
    (tmp_path / "t" / MANIFEST).write_text(text.replace(f'"count": {count}', '"count": 5000'))
    with pytest.raises(StateDirectoryError, match="does not match its checksum"):
        MotifTracker.open(str(tmp_path / "t"))


# --- fault injection: a writer killed at random moments, reopened by another process --------


WRITER = r"""
import os, sys
import pyarrow.parquet as pq
from faq.incremental import MaintainedQuery
state, mode, files = sys.argv[1], sys.argv[2], sys.argv[3:]
mq = MaintainedQuery.open(state)
mq.state.compaction = mode
for relation in mq.state.relations.values():
    relation.compaction = mode
print("open", mq.version, flush=True)
for version, path in enumerate(files, start=1):
    if version > mq.version:
        mq.apply({"edge": pq.read_table(path)}, version=version, label=os.path.basename(path))
        print("applied", version, flush=True)
"""

TRIALS = 20
BATCHES = 8
BATCH_ROWS = 4_000


def read_edges(path: Path) -> set:
    with gzip.open(path, "rt") as handle:
        pairs = np.loadtxt((line for line in handle if not line.startswith("#")), dtype=np.int64, ndmin=2)
    return {(int(u), int(v)) for u, v in pairs if u != v}


def _progress(writer: subprocess.Popen) -> list:
    """The writer's "applied N" lines as they come (a thread reads its output; the list grows)."""
    import threading

    lines: list = []
    threading.Thread(target=lambda: lines.extend(writer.stdout), daemon=True).start()
    return lines


def test_a_writer_killed_at_random_moments_leaves_a_state_every_reader_reopens_exactly(spark, tmp_path):
    from faq.factor import Factor

    initial = read_edges(DATA / "email-Eu-core.txt.gz")
    # half deletions of present edges, half new ones: compactions happen
    files, counts = change_files(initial, tmp_path, BATCHES, BATCH_ROWS, deleted=0.5, seed=38)
    rng = random.Random(38)

    base = tmp_path / "initial"
    df = spark.createDataFrame(sorted(initial), "src bigint, dst bigint")
    factor = Factor.from_dataframe(df, ["src", "dst"], "counting", value=None, name="edge")
    MaintainedQuery(QUERY, {"edge": factor}, path=str(base)).close()

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    reopened, kill_versions = 0, set()
    for trial in range(TRIALS):
        mode = ("thread", "process", "inline")[trial % 3]
        state = tmp_path / f"trial-{trial}"
        shutil.copytree(base, state)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(state), mode, *map(str, files)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert writer.stdout.readline().startswith("open"), writer.stderr.read()
        # The kill point follows the writer's progress, not the clock (a loaded machine slows the writer):
        # after it reports batch `after` applied (0: right away), a random moment into the next batch.
        applied = _progress(writer)
        after, into = rng.randrange(BATCHES), rng.uniform(0.0, 0.3)
        reached = time.monotonic() + 300 if after else time.monotonic()
        while writer.poll() is None and time.monotonic() < reached + into:  # read while the writer writes
            if after and len(applied) >= after and reached > time.monotonic():
                reached = time.monotonic()
            with MaintainedQuery.open(str(state)) as reader:
                assert reader.scalar() == counts[reader.version], (trial, mode, reader.version)
                reopened += 1
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
        with MaintainedQuery.open(str(state)) as after:  # a committed version, its exact answer
            version = after.version
            assert after.scalar() == counts[version], (trial, mode, version)
            kill_versions.add(version)
            if version < BATCHES:  # the next writer recovers (the lock died with the killed one) and goes on
                after.apply({"edge": pq.read_table(files[version])}, version=version + 1)
                assert after.scalar() == counts[version + 1]
            named = {f for e in after.store.manifest()["relations"].values() for f in e["files"]}
            if after.store.is_writer:
                assert set(os.listdir(state / "data")) == named  # what the killed writer left is swept
    assert len(kill_versions) >= 3, kill_versions  # the kills landed at different points of the run
    assert reopened >= TRIALS  # readers really did reopen during the writes


# --- a state is trusted only if ours (issue 48 item 4) --------------------------------------------------


def small_store(folder: Path) -> Store:
    """A new state with one relation of two files (a base and a delta), released."""
    store = Store(folder)
    store.create()
    store.save(0, {"kind": "example"}, {"edge": ("base", pa.table({"src": [1, 2], "dst": [2, 3]}))})
    store.save(1, {"kind": "example"}, {"edge": ("delta", pa.table({"src": [3], "dst": [1]}))})
    store.release()
    return store


@pytest.fixture
def other_user():
    """The uid of a throw-away system user, removed after (root only: others cannot make one)."""
    import pwd

    if os.getuid() != 0:
        pytest.skip("making a second OS user needs root")
    name = f"faqtrust{os.getpid() % 100000}"
    subprocess.run(["useradd", "--system", "--no-create-home", name], check=True, capture_output=True)
    try:
        yield pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def within(seconds: float, call):
    """``call()``'s result or exception, or a failure if it has not returned after ``seconds`` (a FIFO hang)."""
    import threading

    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_a_state_directory_writable_by_others_is_refused_with_the_fix(tmp_path):
    from faq.errors import StateUntrustedError

    store = small_store(tmp_path / "st")
    os.chmod(store.path, 0o777)
    with pytest.raises(StateUntrustedError) as refused:
        Store(store.path).load()
    assert refused.value.parameters["path"] == store.path
    assert "writable by the group or others (mode 777)" in refused.value.parameters["reason"]
    assert f"chmod go-w {store.path}" in refused.value.parameters["fix"]
    assert isinstance(refused.value, StateDirectoryError)  # callers catching the old class still do
    for mode in (0o775, 0o757):  # the group's write, or others'
        os.chmod(store.path, mode)
        with pytest.raises(StateUntrustedError):
            Store(store.path).manifest()
    os.chmod(store.path, 0o755)
    os.chmod(os.path.join(store.path, "data"), 0o777)
    with pytest.raises(StateUntrustedError, match="data/ is writable"):
        Store(store.path).load()
    os.chmod(os.path.join(store.path, "data"), 0o755)
    assert Store(store.path).load()[0]["version"] == 1
    os.chmod(store.path, 0o777)
    with pytest.raises(StateUntrustedError):  # nor made there
        Store(tmp_path / "st").check_new()
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o777)
    os.chmod(open_dir, 0o777)
    with pytest.raises(StateUntrustedError):
        Store(open_dir).create()
    assert os.listdir(open_dir) == []  # refused before anything was written


def test_a_parent_writable_by_everyone_counts_unless_sticky(tmp_path):
    from faq.errors import StateUntrustedError

    parent = tmp_path / "shared"
    parent.mkdir()
    store = small_store(parent / "st")
    os.chmod(parent, 0o777)  # another user could rename st away and put a forged one in its place
    with pytest.raises(StateUntrustedError) as refused:
        Store(store.path).load()
    assert f"parent directory {parent}" in refused.value.parameters["reason"]
    assert "sticky" in refused.value.parameters["fix"]
    with pytest.raises(StateUntrustedError):  # a new state beneath it too (its own parents not made yet)
        Store(parent / "new" / "deeper").check_new()
    os.chmod(parent, 0o1777)  # as /tmp: only an entry's owner renames or deletes it
    assert Store(store.path).load()[0]["version"] == 1


def test_a_state_or_parent_of_another_user_is_refused(tmp_path, other_user):
    from faq.errors import StateUntrustedError

    store = small_store(tmp_path / "st")
    os.chown(store.path, other_user, -1)
    with pytest.raises(StateUntrustedError) as refused:
        Store(store.path).load()
    assert f"belongs to user id {other_user}" in refused.value.parameters["reason"]
    assert "choose a directory of yours" in refused.value.parameters["fix"]
    os.chown(store.path, 0, -1)
    parent = tmp_path / "theirs"
    parent.mkdir()
    os.chown(parent, other_user, -1)
    with pytest.raises(StateUntrustedError, match=f"parent directory {parent} belongs to user id {other_user}"):
        Store(parent / "st").create()
    file = os.path.join(store.path, "data", sorted(os.listdir(os.path.join(store.path, "data")))[0])
    os.chown(file, other_user, -1)  # a data file of theirs in a directory of ours: not read
    with pytest.raises(StateDirectoryError, match="belongs to user id"):
        Store(store.path).load()


def test_a_writer_lock_another_user_made_is_refused_not_taken_as_a_holder(tmp_path, other_user):
    from faq.errors import StateUntrustedError
    from faq.incremental.writer_lock import LOCK_FILE, WriterLock

    store = small_store(tmp_path / "st")
    lock = os.path.join(store.path, LOCK_FILE)
    os.chown(lock, other_user, -1)
    with pytest.raises(StateUntrustedError) as refused:
        WriterLock.acquire(store.path)
    assert refused.value.parameters["reason"] == f"{LOCK_FILE} belongs to user id {other_user}, not to you (0)"
    assert f"remove {lock}" in refused.value.parameters["fix"]
    os.unlink(lock)
    os.mkfifo(lock, 0o644)  # a FIFO: refused at once, not an open that waits for a writer
    with pytest.raises(StateUntrustedError, match="is not a regular file"):
        within(10, lambda: WriterLock.acquire(store.path))


def test_a_fifo_in_place_of_a_manifest_or_data_file_is_refused_without_blocking(tmp_path):
    store = small_store(tmp_path / "st")
    data = os.path.join(store.path, "data")
    named = Store(store.path).manifest()["relations"]["edge"]["files"][1]
    os.unlink(os.path.join(data, named))
    os.mkfifo(os.path.join(data, named), 0o644)
    with pytest.raises(StateDirectoryError, match=f"data file {named} cannot be read: .*not a regular file"):
        within(10, lambda: Store(store.path).load())
    with pytest.raises(StateDirectoryError, match="not a regular file"):
        within(10, lambda: Store(store.path).files("edge"))
    manifest = os.path.join(store.path, MANIFEST)
    os.unlink(manifest)
    os.mkfifo(manifest, 0o644)
    with pytest.raises(StateDirectoryError, match="manifest.json cannot be read: .*not a regular file"):
        within(10, lambda: Store(store.path).manifest())
    assert not Store(store.path).exists()


def test_a_manifest_too_deep_or_too_large_is_a_state_error(tmp_path, monkeypatch):
    import faq.incremental.store as store_module

    store = small_store(tmp_path / "st")
    manifest = os.path.join(store.path, MANIFEST)
    with open(manifest, "w") as f:
        f.write("[" * 200_000)
    with pytest.raises(StateDirectoryError, match="nests deeper than 32 levels"):
        Store(store.path).manifest()
    with open(manifest, "w") as f:
        f.write("[" * 40 + "]" * 40)  # parses, but deeper than faq's manifests
    with pytest.raises(StateDirectoryError, match="nests deeper"):
        Store(store.path).manifest()
    monkeypatch.setattr(store_module, "MAX_MANIFEST_BYTES", 16)
    with open(manifest, "w") as f:
        f.write('{"format": "' + "x" * 64 + '"}')
    with pytest.raises(StateDirectoryError, match="larger than 16 bytes"):
        Store(store.path).manifest()


def test_the_ownership_check_is_made_once_per_store_not_per_batch(tmp_path, monkeypatch):
    import faq.incremental.store as store_module

    store = small_store(tmp_path / "st")
    calls = []
    real = store_module.parent_problem
    monkeypatch.setattr(store_module, "parent_problem", lambda path: calls.append(path) or real(path))
    writer = Store(store.path)
    writer.load()
    for version in range(2, 12):
        writer.save(version, {"kind": "example"}, {"edge": ("delta", pa.table({"src": [version], "dst": [1]}))})
    writer.release()
    assert len(calls) == 1


def test_the_command_refuses_a_state_directory_others_can_write(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n1 3\n")
    updates = tmp_path / "updates"
    updates.mkdir()
    state = tmp_path / "st"
    state.mkdir()
    os.chmod(state, 0o777)
    done = subprocess.run([sys.executable, "-m", "faq", "truss", str(graph), "--updates", str(updates), "--state",
                           str(state)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "[STATE_UNTRUSTED]" in done.stderr and "chmod go-w" in done.stderr
    assert os.listdir(state) == []


def test_a_holder_record_nested_too_deep_is_no_holder_not_a_recursion_error(tmp_path):
    from faq.incremental.writer_lock import LOCK_FILE, WriterLock

    first = WriterLock.acquire(str(tmp_path))
    with open(tmp_path / LOCK_FILE, "r+") as f:  # what the holder wrote, replaced by a deep JSON
        f.write("[" * 4096)
    with pytest.raises(StateLockedError) as refused:
        WriterLock.acquire(str(tmp_path))
    assert refused.value.parameters["holder"] == "a process that did not record itself"
    first.release()
