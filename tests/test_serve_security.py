"""``faq serve`` for its owner only: loopback, a token, private files, and nothing done on a record's word.

One server (a JVM, ~20 s) is shared by the module; every other test needs
none.  The module points ``$XDG_RUNTIME_DIR`` at a directory of its own, so
the per-user directory (``$XDG_RUNTIME_DIR/faq``) holds only what these
tests put there, and a real ``~/.cache/faq/serve`` is never touched.

Clients run in child processes: this one may hold the suite's classic
session, and a Python process runs either classic or Connect PySpark.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import os
import pwd
import secrets
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from faq.cli import server
from faq.errors import FAQRuntimeError, FAQValueError
from faq.served import process_identity, read_serve_record, serve_directory, with_served_token

ROOT = Path(__file__).resolve().parent.parent
LISTEN = "0A"  # the TCP state of a listening socket in /proc/net/tcp*


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("SPARK_CONNECT_AUTHENTICATE_TOKEN", "SPARK_REMOTE", "FAQ_REMOTE"):
        env.pop(name, None)  # the clients' only way to the token is the one under test
    return env


def _write_record(port: int, record: dict) -> str:
    """Plant a record for ``port`` as another program (or a stale file) would leave it."""
    path = server.state_path(port)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(record, out)
    return path


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    """This module's ``$XDG_RUNTIME_DIR`` (a directory of ours, mode 700)."""
    path = tmp_path_factory.mktemp("runtime")
    path.chmod(0o700)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(path)
    try:
        yield path
    finally:
        if saved is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved


@pytest.fixture(scope="module")
def foreign():
    """A process that is not a faq server (``sleep 300``): what a planted record names; killed at the end."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def served(runtime, foreign):
    """The module's server, started over a planted record naming ``foreign`` (a foreign URL, a planted
    temporary directory): what start() made of it is kept for the tests to look at."""
    port = _free_port()
    serve_directory(create=True)
    planted_tmp = runtime / "planted-tmp"
    planted_tmp.mkdir()
    (planted_tmp / "keep.txt").write_text("not faq's")
    _write_record(port, {"pid": foreign.pid, "url": "sc://attacker.example:15002", "port": port,
                         "master": "local[1]", "tmp": str(planted_tmp), "token": "planted",
                         "cmdline": [sys.executable, "-m", "faq.cli.server", str(port), "local[1]",
                                     str(planted_tmp), "attacker.example"]})
    status_before = server.status(port)
    state = server.start(port, master="local[1]")
    try:
        yield {"port": port, "state": state, "status_before": status_before, "planted_tmp": planted_tmp,
               "token": read_serve_record(port)["token"]}
    finally:
        server.stop(port)
    assert server.status(port) is None


CLIENT = r"""
import json, sys
from faq.spark import get_session, stop_session
results = []
for url in sys.argv[1:]:
    try:
        results.append(["ok", get_session(remote=url).range(3).count()])
    except Exception as error:
        results.append([type(error).__name__, str(error)])
    stop_session()
print(json.dumps(results))
"""

RAW_CLIENT = r"""
import json, sys
from pyspark.sql import SparkSession
try:
    result = ["ok", SparkSession.builder.remote(sys.argv[1]).getOrCreate().range(3).count()]
except Exception as error:
    result = [type(error).__name__, str(error)]
print(json.dumps(result))
"""


def _run(code: str, *args: str) -> list:
    run = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env(),
                         cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


# --- the shared server ---------------------------------------------------------------------------------


def test_a_client_without_the_token_is_refused(served):
    """PySpark's own client, given the URL and no token, gets UNAUTHENTICATED from the server."""
    kind, message = _run(RAW_CLIENT, served["state"]["url"])
    assert kind == "SparkConnectGrpcException"
    assert "UNAUTHENTICATED" in message and "No authentication token provided" in message


def test_faq_clients_find_the_token_and_a_given_token_is_used_as_given(served):
    """get_session(remote=) on the served URL, and on 127.0.0.1 and ::1, finds the token; a URL with a
    token of its own (a wrong one) keeps it and is refused."""
    port = served["port"]
    urls = [f"sc://localhost:{port}", f"sc://127.0.0.1:{port}", f"sc://[::1]:{port}/;user_id=me",
            f"sc://localhost:{port}/;token=wrong"]
    results = _run(CLIENT, *urls)
    assert results[:3] == [["ok", 3]] * 3
    kind, message = results[3]
    assert kind == "SparkConnectGrpcException" and "Invalid authentication token" in message


HOLDING_CLIENT = r"""
import sys
from faq.spark import get_session
kept = get_session(remote=sys.argv[1]).range(3).localCheckpoint()  # still held when the interpreter exits
print(kept.count())
"""


def test_a_client_holding_a_checkpoint_at_exit_ends(served):
    """A client that exits holding a checkpoint (whose finaliser releases it on the server) ends at once.

    With PySpark's own ``;token=`` (gRPC call credentials) it hung forever: the credentials' callback
    thread cannot start while the interpreter finalises (PySpark 4.3, grpcio).  faq sends the token as
    a header instead (:func:`faq.served.with_served_token`).
    """
    run = subprocess.run([sys.executable, "-c", HOLDING_CLIENT, served["state"]["url"]], capture_output=True,
                         text=True, env=_env(), cwd=ROOT, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "3", run.stderr[-3000:]


def _listening_sockets() -> list[tuple[int, ipaddress._BaseAddress, int]]:
    """(port, local address, socket inode) of every listening TCP socket, from /proc/net/tcp and tcp6."""
    found = []
    for name in ("tcp", "tcp6"):
        with open(f"/proc/net/{name}") as table:
            next(table)
            for line in table:
                fields = line.split()
                address, port = fields[1].split(":")
                if fields[3] != LISTEN:
                    continue
                raw = bytes.fromhex(address)  # 32-bit words in the kernel's (little-endian) order
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.append((int(port, 16), ipaddress.ip_address(raw), int(fields[9])))
    return found


def _loopback(address: ipaddress._BaseAddress) -> bool:
    """127.0.0.1, ::1, or 127.0.0.1 on an IPv6 socket (::ffff:127.0.0.1, as the JVM binds it)."""
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address) in ("127.0.0.1", "::1")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (the server's Python, its JVM, the JVM's Python workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        tree.append(todo.pop())
        todo.extend(children.get(tree[-1], []))
    return tree


def test_the_server_listens_on_loopback_only(served):
    """The Connect port's LISTEN entry -- and every listening socket the server's processes hold --
    has a loopback local address.

    Read from /proc/net/tcp and tcp6 (state 0A): no connection to any other address of this machine is
    tried.  A socket bound to 127.0.0.1 (or ::1) only accepts connections addressed to it, and the
    kernel routes those only from this machine: a client reaching the machine through a non-loopback
    address finds nothing listening on the port (before, the server listened on every interface,
    ``*:PORT``).
    """
    port = served["port"]
    entries = [(address, inode) for p, address, inode in _listening_sockets() if p == port]
    assert entries and all(_loopback(address) for address, _ in entries), entries
    inodes = set()
    for pid in _tree(served["state"]["pid"]):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
        except OSError:
            continue
    held = [(p, address) for p, address, inode in _listening_sockets() if inode in inodes]
    assert port in [p for p, _ in held]  # the server's own processes hold the Connect port
    assert all(_loopback(address) for _, address in held), held


def test_files_are_private_and_the_token_is_never_shown(served):
    """Directory 700, record (with the token) and log 600; the token is on no command line, in no log,
    in no output of faq serve (which names the token file)."""
    port, token, state = served["port"], served["token"], served["state"]
    directory = serve_directory()
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(server.state_path(port)).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(server.log_path(port)).st_mode) == 0o600
    assert state["log"] == server.log_path(port) and state["token_file"] == server.state_path(port)
    assert len(token) >= 40 and token not in json.dumps(state) and token not in repr(state)
    assert token not in Path(server.log_path(port)).read_text()
    for pid in _tree(state["pid"]):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert token.encode() not in f.read()
    for extra in (["--status", "--json"], ["--status"], ["--json"], []):
        run = subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(port), *extra],
                             capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
        assert run.returncode == 0, run.stderr
        assert token not in run.stdout + run.stderr
        if extra == ["--status", "--json"]:
            shown = json.loads(run.stdout)
            assert shown["running"] is True and shown["token_file"] == server.state_path(port)
            assert "token" not in shown
        if not extra:
            assert run.stdout.startswith(f"already running at sc://127.0.0.1:{port}")


def test_start_trusts_no_planted_record(served, foreign):
    """The record planted before start() named a live foreign process and sc://attacker.example: status
    did not believe it, start started a server of its own (not "already running at sc://attacker..."),
    and neither killed the foreign process nor touched the planted temporary directory."""
    assert served["status_before"] is None
    state = served["state"]
    assert state["started"] is True and state["url"] == f"sc://127.0.0.1:{served['port']}"
    assert state["pid"] != foreign.pid and state["host"] == "127.0.0.1"
    assert foreign.poll() is None
    assert (served["planted_tmp"] / "keep.txt").read_text() == "not faq's"
    assert read_serve_record(served["port"])["token"] != "planted"


# --- planted files: no server needed -------------------------------------------------------------------


def test_stop_refuses_a_record_naming_another_process(runtime, foreign, tmp_path):
    """A record naming a live process that is not the server (``sleep 300``) and a foreign URL: status
    says none runs, --stop refuses with SERVER_NOT_OURS and touches nothing: the process lives on, the
    planted temporary directory and the record stay."""
    serve_directory(create=True)
    planted_tmp = tmp_path / "planted-tmp"
    planted_tmp.mkdir()
    port = _free_port()
    path = _write_record(port, {"pid": foreign.pid, "url": "sc://attacker.example:15002", "tmp": str(planted_tmp),
                                "cmdline": ["sleep", "300"], "start_time": 0, "master": "local[1]"})
    assert server.status(port) is None
    with pytest.raises(FAQRuntimeError) as raised:
        server.stop(port)
    assert raised.value.error_class == "SERVER_NOT_OURS"
    assert raised.value.parameters == {"port": port, "pid": foreign.pid, "path": path,
                                       "reason": f"the record's command line is not 'python -m faq.cli.server {port} ...'"}
    assert foreign.poll() is None and planted_tmp.is_dir() and os.path.exists(path)
    for args in (["--status"], ["--stop"]):
        cli = subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(port), *args],
                             capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
        assert "attacker" not in cli.stdout
        if args == ["--status"]:
            assert cli.returncode == 0 and cli.stdout.strip() == f"no faq server on port {port}"
        else:
            assert cli.returncode == 2 and "[SERVER_NOT_OURS]" in cli.stderr
    assert foreign.poll() is None and planted_tmp.is_dir() and os.path.exists(path)
    os.unlink(path)


@pytest.fixture
def impostor(tmp_path):
    """A process whose command line is a faq server's -- ``python -m faq.cli.server PORT ...``, run from a
    fake ``faq`` package that only sleeps -- as a process that took a dead server's pid could look."""
    package = tmp_path / "fake" / "faq" / "cli"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text("import time\ntime.sleep(300)\n")
    port = _free_port()
    command = [sys.executable, "-m", "faq.cli.server", str(port), "local[1]", str(tmp_path / "tmp"), "127.0.0.1"]
    process = subprocess.Popen(command, cwd=package.parent.parent, env={**_env(), "PYTHONPATH": ""})
    try:
        yield process, port, command
    finally:
        process.kill()
        process.wait()


def test_a_reused_pid_is_not_the_server(runtime, impostor):
    """The recorded command line but another start time (/proc/PID/stat field 22): the pid was reused by
    another process, which is not signalled; with the right start time the record is believed."""
    process, port, command = impostor
    serve_directory(create=True)
    for _ in range(50):  # until the child has exec'd
        if Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[:-1] == [a.encode() for a in command]:
            break
        time.sleep(0.1)
    started = int(Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    record = {"pid": process.pid, "start_time": started + 1, "cmdline": command, "url": f"sc://localhost:{port}",
              "master": "local[1]", "tmp": command[5]}
    path = _write_record(port, record)
    assert server.status(port) is None
    with pytest.raises(FAQRuntimeError) as raised:
        server.stop(port)
    assert raised.value.error_class == "SERVER_NOT_OURS" and "reused" in raised.value.parameters["reason"]
    assert process.poll() is None and os.path.exists(path)
    os.unlink(path)
    _write_record(port, {**record, "start_time": started})
    assert server.status(port)["pid"] == process.pid  # what proves the server: start time and command line
    os.unlink(path)


def test_stop_deletes_only_what_start_makes(runtime, tmp_path):
    """A dead server's record: --stop removes the record and the log, and the temporary directory only
    when it is one start() makes (tempdir/faq-serve-PORT-*, a directory of ours, not a link)."""
    serve_directory(create=True)
    port = _free_port()
    dead = subprocess.Popen(["true"])
    dead.wait()
    base = tempfile.gettempdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    link = os.path.join(base, f"faq-serve-{port}-link{os.getpid()}")
    os.symlink(target, link)
    other_port = tempfile.mkdtemp(prefix=f"faq-serve-{port + 1}-")
    made = tempfile.mkdtemp(prefix=f"faq-serve-{port}-")
    try:
        for planted in (str(target), link, other_port, os.path.join(made, "..", os.path.basename(other_port)), made):
            _write_record(port, {"pid": dead.pid, "tmp": planted})
            Path(server.log_path(port)).write_text("old log")
            assert server.stop(port) is None
            assert not os.path.lexists(server.state_path(port)) and not os.path.lexists(server.log_path(port))
            assert (target / "keep.txt").read_text() == "keep" and os.path.islink(link) and os.path.isdir(other_port)
        assert not os.path.exists(made)
    finally:
        os.unlink(link)
        os.rmdir(other_port)


@pytest.mark.parametrize("which", ["log", "state"])
def test_a_symbolic_link_where_a_file_goes_is_refused(runtime, tmp_path, which):
    """A link planted at the log's (or the record's) name: start refuses before starting anything, and
    the file it points to is unchanged (nothing is written through it, the link stays)."""
    serve_directory(create=True)
    port = _free_port()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    planted = server.log_path(port) if which == "log" else server.state_path(port)
    os.symlink(victim, planted)
    try:
        with pytest.raises(FAQRuntimeError) as raised:
            server.start(port, master="local[1]", timeout=5)
        assert raised.value.error_class == "SERVE_FILE_UNSAFE"
        assert raised.value.parameters == {"path": planted, "reason": "is a symbolic link"}
        assert victim.read_text() == "precious" and os.path.islink(planted)
        assert not any(name.startswith(f"faq-serve-{port}-") for name in os.listdir(tempfile.gettempdir()))
        other = server.state_path(port) if which == "log" else server.log_path(port)
        assert not os.path.lexists(other)
    finally:
        os.unlink(planted)


def test_a_directory_open_to_others_or_not_ours_is_refused(monkeypatch, tmp_path):
    """The per-user directory with mode 777 -- or owned by another user -- is refused by start, status
    and the client's token lookup alike, naming the directory; 700 and ours is accepted."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    directory = tmp_path / "faq"
    directory.mkdir()
    directory.chmod(0o777)
    port = _free_port()
    for call in (lambda: server.start(port, master="local[1]", timeout=5), lambda: server.status(port),
                 lambda: server.stop(port), lambda: with_served_token(f"sc://localhost:{port}")):
        with pytest.raises(FAQRuntimeError) as raised:
            call()
        assert raised.value.error_class == "SERVE_DIRECTORY_UNSAFE"
        assert raised.value.parameters == {"path": str(directory), "reason": "is open to others (mode 777)"}
    directory.chmod(0o700)
    assert server.status(port) is None and serve_directory() == str(directory)
    if os.getuid() == 0:  # root can make it someone else's
        os.chown(directory, 65534, 65534)
        with pytest.raises(FAQRuntimeError) as raised:
            server.status(port)
        assert raised.value.parameters["reason"] == "belongs to user id 65534, not to you (0)"


def test_the_directory_is_made_private_and_xdg_is_used_only_when_ours(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert serve_directory(create=True) == str(tmp_path / "home" / ".cache" / "faq" / "serve")
    assert stat.S_IMODE(os.stat(tmp_path / "home" / ".cache" / "faq" / "serve").st_mode) == 0o700
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert serve_directory(create=True) == str(tmp_path / "faq")
    if os.getuid() == 0:
        os.chown(tmp_path, 65534, 65534)  # someone else's runtime directory: not used
        try:
            assert serve_directory() == str(tmp_path / "home" / ".cache" / "faq" / "serve")
        finally:
            os.chown(tmp_path, 0, 0)


def test_host_names_the_url_and_the_help_says_how_clients_get_the_token():
    from faq.cli import build_parser

    args = build_parser().parse_args(["serve", "--host", "0.0.0.0", "--port", "15010"])
    assert (args.host, args.port) == ("0.0.0.0", 15010)
    assert server.url_of(15010, "10.1.2.3") == "sc://10.1.2.3:15010"
    assert server.url_of(15010, "fe80::1") == "sc://[fe80::1]:15010"
    assert server.url_of(15010) == "sc://127.0.0.1:15010" and server.url_of(15010, "::1") == "sc://[::1]:15010"
    assert with_served_token("sc://10.1.2.3:15010") == "sc://10.1.2.3:15010"  # no token sent elsewhere
    run = subprocess.run([sys.executable, "-m", "faq", "serve", "--help"], capture_output=True, text=True,
                         env=_env(), cwd=ROOT, timeout=120)
    assert "copy the token file" in " ".join(run.stdout.split()) and ";token=TOKEN" in run.stdout


def test_port_in_use_is_refused_before_anything_starts(runtime):
    serve_directory(create=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(FAQValueError) as raised:
            server.start(port, master="local[1]", timeout=5)
    assert raised.value.error_class == "PORT_IN_USE" and raised.value.parameters["port"] == port
    assert not os.path.lexists(server.state_path(port)) and not os.path.lexists(server.log_path(port))


def _processes_naming(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if text.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_server_that_does_not_come_up_is_killed_and_only_its_log_stays(runtime):
    """A start that times out: SERVER_NOT_STARTED naming the log, which stays (0600); the process, the
    record and the temporary directory are gone; --stop then removes the log."""
    serve_directory(create=True)
    port = _free_port()
    with pytest.raises(FAQValueError) as raised:
        server.start(port, master="local[1]", timeout=0.5)
    assert raised.value.error_class == "SERVER_NOT_STARTED"
    assert (raised.value.parameters["port"], raised.value.parameters["log"]) == (port, server.log_path(port))
    assert stat.S_IMODE(os.lstat(server.log_path(port)).st_mode) == 0o600
    assert not os.path.lexists(server.state_path(port))
    assert not any(name.startswith(f"faq-serve-{port}-") for name in os.listdir(tempfile.gettempdir()))
    marker = f"faq.cli.server\0{port}\0"
    for _ in range(100):  # the server's Python is killed; a JVM it may have started follows it
        if not _processes_naming(marker) and not _processes_naming(f"faq-serve-{port}-"):
            break
        time.sleep(0.2)
    assert not _processes_naming(marker) and not _processes_naming(f"faq-serve-{port}-")
    assert server.stop(port) is None and not os.path.lexists(server.log_path(port))


# --- the token goes only to the recorded server (issue 48, item 1) -------------------------------------

# A listener that records every byte sent to it; stops (and prints what it got) when its stdin closes.
# Given a user id (argv[3]), it becomes that user before it makes its socket: the socket is that user's.
SQUATTER = r"""
import json, os, pwd, select, socket, sys
address, port = sys.argv[1], int(sys.argv[2])
if len(sys.argv) > 3:
    os.setgroups([])
    os.setgid(pwd.getpwuid(int(sys.argv[3])).pw_gid)
    os.setuid(int(sys.argv[3]))
listener = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
if address == "::":
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # dual stack: takes IPv4 too
try:
    listener.bind((address, port))
    listener.listen()
except OSError as error:
    print(json.dumps({"error": error.errno}), flush=True)
    sys.exit()
print(json.dumps({"listening": True}), flush=True)
received, connections, open_ = b"", 0, []
while True:
    ready = select.select([listener, sys.stdin, *open_], [], [], 300)[0]
    if not ready or sys.stdin in ready:
        break
    for conn in ready:
        if conn is listener:
            open_.append(listener.accept()[0])
            connections += 1
        elif chunk := conn.recv(65536):
            received += chunk
        else:
            open_.remove(conn)
print(json.dumps({"connections": connections, "received": received.decode("latin-1")}), flush=True)
"""


class _Squatter:
    """A :data:`SQUATTER` process on ``address``:``port`` as user ``uid`` (None: ours); ``.seen`` after ``stop``."""

    def __init__(self, address: str, port: int, uid=None) -> None:
        # Started as us, it drops to ``uid`` itself: the interpreter may lie where only we can read.
        user = [] if uid is None else [str(uid)]
        self.process = subprocess.Popen([sys.executable, "-I", "-S", "-c", SQUATTER, address, str(port), *user],
                                        cwd="/", env={}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.started = json.loads(self.process.stdout.readline() or "{}")
        self.seen: dict = {}

    def stop(self) -> dict:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.seen = json.loads(self.process.stdout.readline() or "{}")
        self.process.wait(timeout=30)
        return self.seen


@contextlib.contextmanager
def squatting(address: str, port: int, uid=None):
    squatter = _Squatter(address, port, uid)
    assert squatter.started == {"listening": True}, squatter.started
    try:
        yield squatter
    finally:
        squatter.stop()


@pytest.fixture(scope="module")
def other_user():
    """The user id of a throw-away OS user (made with useradd, removed after the module): the squatter's."""
    if os.getuid() != 0:
        pytest.skip("a second OS user is made only when the tests run as root (useradd); not root here")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd on this machine to make a second OS user")
    name = f"faqsquatter{secrets.randbelow(10**6)}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True,
                   capture_output=True)
    try:
        yield pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def _free_everywhere() -> int:
    """A port free on 127.0.0.1 and on ::1."""
    for _ in range(50):
        port = _free_port()
        with socket.socket(socket.AF_INET6) as s:
            try:
                s.bind(("::1", port))
            except OSError:
                continue
        return port
    raise AssertionError("no port free on both loopback addresses")


@pytest.mark.parametrize("address, named", [("::1", "::1"), ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"),
                                            ("::", "127.0.0.1")])
def test_serve_refuses_to_start_while_another_user_holds_the_port(runtime, other_user, address, named):
    """The issue's first reproduction: another user listening on [::1]:PORT (or 127.0.0.1, or a wildcard
    covering them) before the server starts.  start() refuses with PORT_IN_USE naming the address, before
    anything is made; ``faq serve`` exits 2; the squatter is never even connected to."""
    serve_directory(create=True)
    port = _free_everywhere()
    with squatting(address, port, other_user) as squatter:
        with pytest.raises(FAQValueError) as raised:
            server.start(port, master="local[1]", timeout=5)
        assert raised.value.error_class == "PORT_IN_USE"
        assert raised.value.parameters["port"] == port and raised.value.parameters["address"] == named
        assert not os.path.lexists(server.state_path(port)) and not os.path.lexists(server.log_path(port))
        if address == "::1":
            cli = subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(port)], capture_output=True,
                                 text=True, env=_env(), cwd=ROOT, timeout=120)
            assert cli.returncode == 2 and f"[PORT_IN_USE] port {port} is already in use" in cli.stderr, cli.stderr
    assert squatter.seen == {"connections": 0, "received": ""}
    assert not any(name.startswith(f"faq-serve-{port}-") for name in os.listdir(tempfile.gettempdir()))


def test_no_other_user_can_take_the_port_while_the_server_runs(served, other_user):
    """The server listens on 127.0.0.1:PORT and holds [::1]:PORT bound: another user can listen on neither
    (nor on a wildcard), so a client resolving ``localhost`` to ::1 first is refused, never served by a squatter."""
    port = served["port"]
    for address in ("::1", "127.0.0.1", "::", "0.0.0.0"):
        squatter = _Squatter(address, port, other_user)
        squatter.stop()
        assert squatter.started == {"error": errno.EADDRINUSE}, (address, squatter.started)
    with socket.socket(socket.AF_INET6) as s, pytest.raises(ConnectionRefusedError):
        s.connect(("::1", port))  # bound, not listening: refused at once, no backlog that nobody accepts


def _plant(port: int, pid: int, host: str, token: str) -> str:
    """A record of a server on ``port`` bound to ``host``, naming the live process ``pid`` (its start time)."""
    return _write_record(port, {"pid": pid, "start_time": process_identity(pid)[0], "host": host, "token": token,
                                "port": port, "url": server.url_of(port, host)})


@pytest.mark.parametrize("address", ["127.0.0.1", "::1"])
def test_a_client_never_sends_the_token_to_another_users_socket(runtime, other_user, foreign, address):
    """A recorded server whose address another user now listens on (the server died and a squatter took
    its address; or the record is old): the client refuses with SERVE_PEER_UNPROVEN naming the address,
    the port and the squatter's user id, for every local spelling of the URL, in the library and on the
    command line (exit 2) -- and the squatter receives nothing at all, let alone a token."""
    serve_directory(create=True)
    port = _free_everywhere()
    token = "planted-" + secrets.token_urlsafe(16)
    path = _plant(port, foreign.pid, address, token)
    try:
        with squatting(address, port, other_user) as squatter:
            for url in (f"sc://localhost:{port}", f"sc://127.0.0.1:{port}", f"sc://[::1]:{port}/;user_id=me"):
                with pytest.raises(FAQRuntimeError) as raised:
                    with_served_token(url)
                assert raised.value.error_class == "SERVE_PEER_UNPROVEN"
                assert raised.value.parameters == {"address": address, "port": port, "uid": other_user,
                                                   "reason": f"user id {other_user} listens there, not you (0)"}
            results = _run(CLIENT, f"sc://localhost:{port}", server.url_of(port, address))
            assert [kind for kind, _ in results] == ["FAQRuntimeError"] * 2 and "[SERVE_PEER_UNPROVEN]" in results[0][1]
            cli = subprocess.run([sys.executable, "-m", "faq", "triangles", "tests/data/email-Eu-core.txt.gz",
                                  "--placement", "executors", "--remote", f"sc://localhost:{port}"],
                                 capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
            assert cli.returncode == 2 and "[SERVE_PEER_UNPROVEN]" in cli.stderr, cli.stderr[-2000:]
            assert f"user id {other_user} listens there" in cli.stderr and token not in cli.stderr + cli.stdout
        assert squatter.seen == {"connections": 0, "received": ""}
    finally:
        os.unlink(path)


# A TCP relay from 127.0.0.1:PORT (argv[1]) to the real server's port (argv[2]) that records what passes
# towards the server: the "server" of a planted record (its process group leads the relay: it is ours).
RELAY = r"""
import socket, sys, threading
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
log = open(sys.argv[3], "ab", buffering=0)
def pump(src, dst, record):
    while chunk := src.recv(65536):
        if record:
            log.write(chunk)
        dst.sendall(chunk)
    dst.shutdown(socket.SHUT_WR)
while True:
    client = listener.accept()[0]
    upstream = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    threading.Thread(target=pump, args=(client, upstream, True), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client, False), daemon=True).start()
"""


def test_a_squatter_on_the_other_loopback_address_gets_nothing(served, runtime, other_user, tmp_path):
    """The issue's main reproduction: another user listens on [::1]:PORT while the server listens on
    127.0.0.1:PORT, and faq clients connect with sc://localhost, sc://127.0.0.1 and sc://[::1] (gRPC tries
    [::1] first for localhost).  (The real server holds [::1]:PORT itself, so the server here is a relay
    of ours on a new port to the module's server.)  Every call answers; the squatter gets no connection
    and no byte; the token reached the relay, i.e. the address the record names."""
    port = _free_everywhere()
    seen_by_relay = tmp_path / "relay.bin"
    relay = subprocess.Popen([sys.executable, "-c", RELAY, str(port), str(served["port"]), str(seen_by_relay)],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert relay.stdout.readline().strip() == "listening"
        path = _plant(port, relay.pid, "127.0.0.1", served["token"])
        with squatting("::1", port, other_user) as squatter:
            urls = [f"sc://localhost:{port}", f"sc://127.0.0.1:{port}", f"sc://[::1]:{port}/;user_id=me"] * 2
            assert _run(CLIENT, *urls) == [["ok", 3]] * 6
        assert squatter.seen == {"connections": 0, "received": ""}
        assert b"Bearer " + served["token"].encode() in seen_by_relay.read_bytes()
        os.unlink(path)
    finally:
        relay.kill()
        relay.wait()


def test_a_process_of_ours_that_is_not_the_server_gets_no_token(runtime, foreign):
    """Our own user id is not enough: a socket the recorded server's processes do not hold (here: this
    test's) is refused, naming the recorded pid; so is a record whose process is gone or was replaced."""
    serve_directory(create=True)
    with socket.socket() as ours:
        ours.bind(("127.0.0.1", 0))
        ours.listen()
        port = ours.getsockname()[1]
        path = _plant(port, foreign.pid, "127.0.0.1", "planted")
        try:
            with pytest.raises(FAQRuntimeError) as raised:
                with_served_token(f"sc://localhost:{port}")
            assert raised.value.parameters == {
                "address": "127.0.0.1", "port": port, "uid": os.getuid(),
                "reason": f"a process of yours that is not the recorded server (pid {foreign.pid}) listens there"}
        finally:
            os.unlink(path)


def test_a_record_of_a_server_elsewhere_is_checked_by_user_id(runtime):
    """A record copied from another machine to reach its server through an SSH tunnel (``--host 0.0.0.0``
    there; the tunnel listens here on 127.0.0.1, as us) names no process here: the socket's user id is
    the proof, and the token goes to the recorded address."""
    serve_directory(create=True)
    with socket.socket() as tunnel:
        tunnel.bind(("127.0.0.1", 0))
        tunnel.listen()
        port = tunnel.getsockname()[1]
        elsewhere = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1  # no process here has this id
        path = _write_record(port, {"pid": elsewhere, "start_time": 1, "host": "0.0.0.0", "token": "t0ken"})
        try:
            assert with_served_token(f"sc://localhost:{port}") == f"sc://127.0.0.1:{port}/;authorization=Bearer%20t0ken"
        finally:
            os.unlink(path)


def test_without_proc_net_tcp_the_client_refuses(monkeypatch):
    """Where no /proc/net/tcp tells who listens (not Linux), the token is not sent: the error says why."""
    from faq import served as served_module

    monkeypatch.setattr(served_module, "listening_sockets", lambda port: None)
    with pytest.raises(FAQRuntimeError) as raised:
        served_module.prove_peer("127.0.0.1", 15002, {"pid": os.getpid()})
    assert raised.value.error_class == "SERVE_PEER_UNPROVEN" and raised.value.parameters["uid"] is None
    assert "no /proc/net/tcp" in raised.value.parameters["reason"]


def test_a_host_name_is_refused_as_host(runtime):
    """``--host`` must be an address: clients dial exactly what the server bound, and a name may be several."""
    with pytest.raises(FAQValueError) as raised:
        server.start(_free_port(), master="local[1]", timeout=5, host="localhost")
    assert raised.value.error_class == "INVALID_ARGUMENT" and raised.value.parameters["argument"] == "host"


def test_sparks_own_ports_are_authenticated_and_on_loopback(served):
    """The server's SparkContext runs with spark.authenticate (a secret the JVM makes itself: on no command
    line) and its driver bound to 127.0.0.1, as its log reports from the running context; every listening
    socket of the server's processes is on loopback (test_the_server_listens_on_loopback_only)."""
    log = Path(server.log_path(served["port"])).read_text()
    assert "spark.authenticate=true, spark.driver.bindAddress=127.0.0.1" in log, log[-2000:]
    for pid in _tree(served["state"]["pid"]):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert b"spark.authenticate.secret" not in f.read()
    assert server.internal_network_config("spark://cluster:7077") == {}  # a cluster's own configuration


def test_sparks_own_ports_refuse_an_unauthenticated_request(served):
    """An RPC request without Spark's authentication to each listening port of the server's processes
    (other than Connect's): the two Spark transport ports (RPC, block manager) answer with the failure of
    their authentication handler; the others (py4j's gateway, PySpark's own servers) answer nothing."""
    inodes = set()
    for pid in _tree(served["state"]["pid"]):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        inodes.add(int(target[8:-1]))
    ports = {port for port, _, inode in _listening_sockets() if inode in inodes} - {served["port"]}
    body = b"not authenticated"
    message = struct.pack(">bqi", 3, 42, len(body))  # Spark's RpcRequest: type 3, request id, body size
    answers = []
    for port in ports:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            conn.sendall(struct.pack(">q", 8 + len(message) + len(body)) + message + body)
            data = b""
            with contextlib.suppress(socket.timeout, ConnectionError):
                while chunk := conn.recv(65536):
                    data += chunk
        if data:
            answers.append(data)
    assert len(answers) == 2, answers
    assert all(b"AbstractAuthRpcHandler" in answer for answer in answers), answers


# --- paths mean the client's files (issue 48, item 5) --------------------------------------------------


@pytest.mark.parametrize("given", ["signs.txt", "sign?.txt"])
def test_a_relative_path_names_the_clients_file(served, tmp_path, given):
    """The issue's reproduction: ``faq triangles signs.txt --remote ...`` -- a file the driver hands to
    Spark (ids written ``+1``; or a glob) -- with a file of that name beside the server too.  The
    client's file (no triangle) is counted, not the server's (one triangle).  Without the fix the server's
    was (checked by hand: count 1, edges 3, for both).  The server also runs in its own directory."""
    server_cwd = os.readlink(f"/proc/{served['state']['pid']}/cwd")
    assert server_cwd == served["state"]["tmp"]
    beside_server = Path(server_cwd) / "signs.txt"
    beside_server.write_text("+1 2\n2 3\n1 3\n")
    (tmp_path / "signs.txt").write_text("+1 2\n2 3\n")
    try:
        run = subprocess.run([sys.executable, "-m", "faq", "triangles", given, "--json", "--quiet", "--remote",
                              served["state"]["url"]], capture_output=True, text=True, env=_env(), cwd=tmp_path,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        answer = json.loads(run.stdout)
        assert (answer["count"], answer["edges"]) == (0, 2), answer
    finally:
        beside_server.unlink()
