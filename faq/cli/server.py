"""The local Spark Connect server behind ``faq serve``: start, stop, status, and the server process.

Every ``faq`` command that starts its own Spark spends about 15 s before any
work.  :func:`start` runs Spark once, in a background process, with the
Spark Connect plugin listening on ``sc://127.0.0.1:PORT``; commands given
``--remote sc://127.0.0.1:PORT`` (or ``$FAQ_REMOTE``; ``sc://localhost:PORT``
means the same) then connect to it in about a second.  The server is a
classic session started by :func:`faq.spark.get_session` (faq's settings,
quiet logs, this interpreter for the Python workers) with ``spark.plugins``
set to Spark's ``SparkConnectPlugin``.

The server is its owner's alone, for whoever reaches it runs code as its
user (Python UDFs):

* It listens on 127.0.0.1 only (``spark.connect.grpc.binding.address``;
  ``host`` picks another address on purpose), and holds ::1:PORT bound but
  not listening for its life (:func:`_reserve`): Spark binds a Connect
  server to one address, and any local user could otherwise listen on the
  other loopback address, where a client resolving ``localhost`` may go
  first.  :func:`start` refuses (``PORT_IN_USE``) while the port is held on
  any address a client may dial: ``host``, 127.0.0.1 or ::1, a wildcard
  listener included.
* It demands a random token of every client (Spark's pre-shared key,
  ``SPARK_CONNECT_AUTHENTICATE_TOKEN`` in the server's environment, never on
  its command line, which ``ps`` shows to everyone).
* The token goes only to a proven peer: a faq client dials the literal
  address the server bound, never ``localhost``, and first checks in
  ``/proc/net/tcp{,6}`` that the socket listening there is this user's and
  held by the recorded server's process group
  (:func:`faq.served.prove_peer`; ``SERVE_PEER_UNPROVEN`` otherwise, and
  nothing is sent).
* Spark's own ports in the server's JVM (the driver's RPC and block
  manager) demand Spark's authentication (``spark.authenticate``, a secret
  the JVM makes for itself) and listen on 127.0.0.1, for a ``local``
  master (:func:`internal_network_config`); a cluster's are its own
  configuration's.
* The server runs in its own temporary directory: a relative path a client
  sends names nothing beside wherever ``faq serve`` was run (faq's clients
  send absolute paths: :func:`faq.io._common.client_path`).
* The token and the server's record -- process id, its start time (field 22
  of ``/proc/PID/stat``) and command line, URL, master, temporary directory
  -- are one 0600 file (:func:`state_path`) in the per-user 0700 directory
  :func:`faq.served.serve_directory`, beside the server's log.  Clients find
  the token there for a local URL (:func:`faq.served.with_served_token`).
* Files are created without following symbolic links and never over an
  existing file.  A record is believed only while its process has the
  recorded start time and command line (``python -m faq.cli.server PORT
  ...``): :func:`stop` signals no other process, and deletes only what
  :func:`start` made.

Not protected: processes of the owner's own user id (they can read the token
file, as they can the owner's other files) and root; a client session that
outlives its server (the peer is proven when a session is made; gRPC would
reconnect to whatever listens at the address later -- faq's commands end
with their session); a token given in the URL by hand (used as given, no
proof); a server started with ``host`` off loopback, whose token crosses the
network as plain text unless a TLS proxy fronts it.  Without ``/proc``
(not Linux) a client cannot prove the peer and refuses to send the token.

A server is meant to run for days, so what a command leaves on it must go
when the command's Connect session goes (a ``--remote`` command releases it
when it ends; an abandoned one expires).  Spark drops a released session's
cached data itself; the server's housekeeping (:class:`faq.cli.server_housekeeping.Housekeeping`, every
second) deletes the files the session shipped (index files), which Spark
keeps, and collects the JVM's garbage between commands so that its heap
shrinks back.  Everything the server writes lives in one directory it owns
(Spark's local directories, the JVM's and the Python workers' temporary
files), removed by :func:`stop`.

Only the CLI (:mod:`faq.cli.serve`) and the tests use this module; the
library connects to a server through :func:`faq.spark.get_session` (``remote=``).
The server process runs ``python -m faq.cli.server PORT MASTER TMPDIR HOST``.

Examples
--------
>>> url_of(15002), url_of(15002, "::1"), url_of(15002, "10.0.0.7")
('sc://127.0.0.1:15002', 'sc://[::1]:15002', 'sc://10.0.0.7:15002')
>>> state_path(15002).endswith("serve-15002.json")
True
>>> status(1) is None          # nothing serves on port 1
True
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from typing import Iterator, Optional

from faq.cli.inputs import DEFAULT_HOST, DEFAULT_MASTER, DEFAULT_PORT
from faq.errors import FAQRuntimeError, FAQValueError, InvalidArgumentError
from faq.served import process_identity, read_serve_record, serve_directory, serve_state_path

__all__ = ["DEFAULT_PORT", "DEFAULT_HOST", "url_of", "state_path", "log_path", "status", "start", "stop",
           "serve_forever"]

# Seconds to wait for a new server to accept connections (a cold JVM on a small machine takes ~20 s).
START_TIMEOUT = 180.0
# Connect messages carry plans and local data (createDataFrame of a driver-side load); generous limit, 1 GiB.
MAX_MESSAGE_BYTES = 1 << 30
# A server's temporary directory is tempdir/faq-serve-PORT-XXXXXXXX.
_TMP_PREFIX = "faq-serve-"
# Spark's: a Connect server with this variable in its environment demands it of every client as a bearer token.
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
# The pipe on which the server process says it listens (a port that merely answers could be anyone's).
_READY_FD_ENV = "FAQ_SERVE_READY_FD"
# The socket the server holds bound on the loopback address it does not listen on (see _reserve).
_RESERVED_FD_ENV = "FAQ_SERVE_RESERVED_FD"
_SERVER_MODULE = "faq.cli.server"

# Settings of the server's session beyond faq's own (faq.spark.DEFAULT_CONFIG).
SERVER_CONFIG: dict[str, str] = {
    "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
    "spark.connect.grpc.maxInboundMessageSize": str(MAX_MESSAGE_BYTES),
    # Artifact isolation stays off (PySpark's classic default; Spark's own local Connect server turns it on):
    # isolated, every Connect session -- every --remote command -- gets Python workers of its own (Spark
    # keys its worker pools by the session), so each command waits for a new worker to start and import
    # faq, and each released session leaves its pyspark.daemon behind (~47 MB resident) until the server
    # stops.  Shared, the workers stay warm across commands; the files commands ship are removed by
    # faq.cli.server_housekeeping's _drop_released_files instead.
}


def url_of(port: int, host: str = DEFAULT_HOST) -> str:
    """The Spark Connect URL of a server listening on ``host``: that very address, never ``localhost``
    (which a client may resolve to ``::1`` first, where another user can listen)."""
    return f"sc://[{host}]:{port}" if ":" in host else f"sc://{host}:{port}"


def state_path(port: int) -> str:
    """The record of the server on ``port``, its token included (mode 600, in :func:`faq.served.serve_directory`)."""
    return serve_state_path(port)


def log_path(port: int) -> str:
    """The log of the server on ``port`` (mode 600, beside its record; removed by :func:`stop`).

    >>> os.path.dirname(log_path(15002)) == os.path.dirname(state_path(15002))
    True
    """
    return os.path.join(serve_directory(), f"serve-{port}.log")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive (and never proven ours, see _not_ours)
        return True
    # A server started by this very process (a test, a notebook) stays a zombie once it exits until
    # it is reaped; reap it here, or stop() would wait out its whole timeout.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: the signal test above is the answer
        return True
    return done == 0


def _listening(port: int, host: str = DEFAULT_HOST) -> bool:
    """Whether something accepts connections on ``host``:``port`` (for a wildcard address: on loopback)."""
    target = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    try:
        with socket.create_connection((target, port), timeout=0.5):
            return True
    except OSError:
        return False


def _gone(record: dict) -> bool:
    """Whether the process ``record`` names has ended (or it names none)."""
    pid = record.get("pid")
    return not isinstance(pid, int) or pid <= 0 or not _alive(pid)  # never 0 or -1: groups, everyone


def _not_ours(record: dict, port: int) -> Optional[str]:
    """Why the live process ``record`` names is not the server :func:`start` made on ``port`` (None: it is)."""
    command = record.get("cmdline")
    if not (isinstance(command, list) and len(command) == 7 and isinstance(command[0], str)
            and os.path.basename(command[0]).startswith("python") and command[1:4] == ["-m", _SERVER_MODULE, str(port)]):
        return f"the record's command line is not 'python -m {_SERVER_MODULE} {port} ...'"
    found = process_identity(record["pid"])
    if found is None or found[1] != command:
        running = " ".join(found[1]) if found else "unreadable"
        return f"its command line is {running[:80]!r}"
    if found[0] != record.get("start_time"):
        return "it started at another time than the recorded server: its process id was reused"
    master, tmp, host = command[4:]
    urls = (url_of(port, host), f"sc://localhost:{port}")  # the second: a record of an older faq serve
    if record.get("url") not in urls or (record.get("master"), record.get("tmp")) != (master, tmp):
        return "the record's URL, master or temporary directory are not the process's"
    return None


def status(port: int = DEFAULT_PORT) -> Optional[dict]:
    """The server on ``port`` if its record is proven (see the module notes), else None.

    Returns ``{"pid", "url", "host", "port", "master", "tmp", "log", "token_file"}``:
    never the token, only the file that holds it.

    Raises
    ------
    faq.errors.FAQRuntimeError
        ``SERVE_DIRECTORY_UNSAFE`` or ``SERVE_FILE_UNSAFE``: the per-user
        directory or the record is not this user's alone.
    """
    record = read_serve_record(port)
    if record is None or _gone(record) or _not_ours(record, port) is not None:
        return None
    return _public(record, port)


def _public(record: dict, port: int) -> dict:
    """What may be shown of a proven record (from its command line, which /proc vouched for)."""
    master, tmp, host = record["cmdline"][4:]
    return {"pid": record["pid"], "url": url_of(port, host), "host": host, "port": port, "master": master,
            "tmp": tmp, "log": log_path(port), "token_file": state_path(port)}


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One start or stop at a time: an exclusive ``flock`` on the per-user directory (made 0700 if missing)."""
    fd = os.open(serve_directory(create=True), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _create_private(path: str) -> int:
    """A new file only this user can read, opened for writing: never through a symbolic link, never over a file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise FAQRuntimeError(error_class="SERVE_FILE_UNSAFE", path=path, reason="appeared meanwhile") from None
    os.fchmod(fd, 0o600)  # exactly 600, whatever the umask
    return fd


def _remove_own_file(path: str, refuse: bool = False) -> None:
    """Delete ``path`` if it is a regular file of ours (a link is not followed); anything else stays,
    and with ``refuse`` is an error (``SERVE_FILE_UNSAFE``)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
        os.unlink(path)
    elif refuse:
        what = "is a symbolic link" if stat.S_ISLNK(info.st_mode) else "is not a regular file of yours"
        raise FAQRuntimeError(error_class="SERVE_FILE_UNSAFE", path=path, reason=what)


def _remove_tmp(path: object, port: int) -> None:
    """Remove a server's temporary directory: only one :func:`start` can have made -- named
    ``faq-serve-PORT-*`` right in the temporary directory, a directory (not a link) of ours."""
    if not isinstance(path, str) or os.path.normpath(path) != path:
        return
    if os.path.dirname(path) != os.path.abspath(tempfile.gettempdir()):
        return
    if not os.path.basename(path).startswith(f"{_TMP_PREFIX}{port}-"):
        return
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
        shutil.rmtree(path, ignore_errors=True)  # fd-based on Linux: no link inside is followed out


def start(port: int = DEFAULT_PORT, master: str = DEFAULT_MASTER, timeout: float = START_TIMEOUT,
          host: str = DEFAULT_HOST) -> dict:
    """Start a server on ``host``:``port`` in the background (or find the running one); return its state.

    Parameters
    ----------
    port, master : int, str
        The server's port and Spark master.
    timeout : float
        Seconds to wait for the server to listen.
    host : str
        The address it listens on (default loopback: this machine only).
        Any other still demands the token (see ``faq serve --help``).

    Returns
    -------
    dict
        :func:`status`'s keys, and ``started`` (False: it was running).

    Raises
    ------
    faq.errors.FAQValueError
        ``PORT_IN_USE``: another program listens on (or holds) the port on an
        address a client may dial: ``host``, 127.0.0.1 or ::1 (a wildcard
        listener counts).  ``INVALID_ARGUMENT``: ``host`` is no IP address.
        ``SERVER_NOT_STARTED``: the server did not come up within ``timeout``
        seconds (its log is kept and named).
    faq.errors.FAQRuntimeError
        ``SERVE_DIRECTORY_UNSAFE`` or ``SERVE_FILE_UNSAFE``: the per-user
        directory, or what lies where the record or log goes, is not this
        user's alone (nothing is started or removed).

    Examples
    --------
    >>> with socket.socket() as taken:  # a port another program listens on: refused before anything starts
    ...     taken.bind(("127.0.0.1", 0)); taken.listen()
    ...     start(taken.getsockname()[1])
    Traceback (most recent call last):
    ...
    faq.errors.FAQValueError: [PORT_IN_USE] port ... is already in use by another program; choose one with --port
    """
    _check_host(host)
    with _locked():
        running = status(port)
        if running is None:
            _clear_stale(port)
            reserved = _reserve(port, host)
            try:
                process, ready, record = _spawn(port, master, host, reserved)
            finally:
                if reserved is not None:
                    reserved.close()  # the server process holds its own copy
    if running is not None:  # maybe still starting (another faq serve's): wait until it listens
        deadline = time.monotonic() + timeout
        while not _listening(port, running["host"]) and time.monotonic() < deadline and status(port):
            time.sleep(0.5)
        return {**running, "started": False}
    try:
        up = _wait_ready(ready, timeout)
    finally:
        os.close(ready)
    if not up:
        _abandon(process, port)
        raise FAQValueError(error_class="SERVER_NOT_STARTED", port=port, log=log_path(port), argument="port")
    return {**_public(record, port), "started": True}


def _check_host(host: str) -> None:
    """``host`` must be an IP address: the client dials the very address the server listens on (a name
    may resolve to several)."""
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise InvalidArgumentError("host", host, "must be an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0): clients "
                                   "dial the very address the server listens on") from None


def _reserve(port: int, host: str) -> Optional[socket.socket]:
    """Refuse (``PORT_IN_USE``) while anyone holds ``port`` on an address a client may dial; return a
    socket bound (not listening) to the loopback address the server leaves free, or None.

    A probe bind fails while a socket listens on the same address or a wildcard covering it, whoever owns
    it.  The server keeps the returned socket for its life: no other user can then bind that address and
    port (Linux lets a second socket share an address only when both set SO_REUSEPORT under one user id,
    or SO_REUSEADDR with neither listening; it sets neither), so a client that resolves ``localhost`` to
    the other loopback address first gets "connection refused", never a squatter.  Bound, not listening:
    a connection is refused at once instead of waiting in a backlog nobody accepts.  The address the
    server listens on stays free until its JVM binds it (seconds later): one taken meanwhile fails the
    start, or fails the clients' proof (:func:`faq.served.prove_peer`) -- the token is never sent to it.
    """
    spare = {"127.0.0.1": "::1", "0.0.0.0": "::1", "::1": "127.0.0.1"}.get(host)
    for address in dict.fromkeys([host, "127.0.0.1", "::1"]):
        if address != spare and (probe := _bind(port, address, reuse=True)):
            probe.close()  # SO_REUSEADDR: a closed connection's TIME_WAIT is no owner
    return _bind(port, spare, reuse=False) if spare else None


def _bind(port: int, address: str, reuse: bool) -> Optional[socket.socket]:
    """A socket bound to ``address``:``port``, or ``PORT_IN_USE``; None where this machine has no such
    address (no IPv6): no one can listen there either."""
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
    except OSError as error:
        sock.close()
        if error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            return None
        raise FAQValueError(error_class="PORT_IN_USE", port=port, address=address, argument="port") from None
    return sock


def _clear_stale(port: int) -> None:
    """Before a start (no proven server): drop the record and the old log.  A dead server's temporary
    directory goes too; a record naming a live process that is not ours goes alone, what it names untouched."""
    record = read_serve_record(port)
    if record is not None and _gone(record):
        _remove_tmp(record.get("tmp"), port)
    _remove_own_file(state_path(port), refuse=True)
    _remove_own_file(log_path(port), refuse=True)


def _spawn(port: int, master: str, host: str, reserved: Optional[socket.socket] = None
           ) -> tuple[subprocess.Popen, int, dict]:
    """Start the server process with a new token, its log and record made first-hand (under the lock);
    it inherits ``reserved`` (see :func:`_reserve`) and holds it for its life.

    Returns the process, the read end of its readiness pipe, and the record written.
    """
    token = secrets.token_urlsafe(32)
    # Everything the server writes to disk goes under this directory (see serve_forever); stop() removes it.
    tmp = tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{port}-")
    try:
        log = _create_private(log_path(port))
    except BaseException:
        _remove_tmp(tmp, port)
        raise
    command = [sys.executable, "-m", _SERVER_MODULE, str(port), master, tmp, host]
    ready, ready_end = os.pipe()
    held = [reserved.fileno()] if reserved is not None else []
    try:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, pass_fds=(ready_end, *held),
            env={**os.environ, TOKEN_ENV: token, _READY_FD_ENV: str(ready_end),  # the token: not on the command line
                 **{_RESERVED_FD_ENV: str(fd) for fd in held}},
            start_new_session=True,  # not killed with the shell that started it
        )
    except BaseException:
        os.close(ready)
        _remove_tmp(tmp, port)
        raise
    finally:
        os.close(log)
        os.close(ready_end)
    # Popen returns once the child has exec'd: /proc shows the server's own command line already.
    found = process_identity(process.pid)
    record = {"pid": process.pid, "start_time": found[0] if found else None, "cmdline": command,
              "url": url_of(port, host), "port": port, "host": host, "master": master, "tmp": tmp,
              "log": log_path(port), "token": token}
    try:
        fd = _create_private(state_path(port))
        with os.fdopen(fd, "w") as out:
            json.dump(record, out)
    except BaseException:
        _abandon(process, port, locked=True)
        _remove_tmp(tmp, port)
        os.close(ready)
        raise
    return process, ready, record


def _wait_ready(ready: int, timeout: float) -> bool:
    """Whether the server process says it listens (on its pipe) within ``timeout`` seconds; False when it
    ends first (the pipe closes) or the time is up."""
    deadline = time.monotonic() + timeout
    said = b""
    while (left := deadline - time.monotonic()) > 0:
        if select.select([ready], [], [], min(left, 1.0))[0]:
            chunk = os.read(ready, 64)
            if not chunk:
                return False
            said += chunk
            if b"ready" in said:
                return True
    return False


def _abandon(process: subprocess.Popen, port: int, locked: bool = False) -> None:
    """A server that did not come up: kill it, and remove its record and temporary directory (the log stays)."""
    with contextlib.nullcontext() if locked else _locked():
        # The whole process group (start_new_session: the server's own): a JVM still starting when its
        # Python dies was seen to live on.  The group id stays taken while any member lives, so no
        # other process gets the signal even after the server's Python was reaped.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        record = read_serve_record(port)
        if record is not None and record.get("pid") == process.pid:
            _remove_tmp(record.get("tmp"), port)
            _remove_own_file(state_path(port))


def stop(port: int = DEFAULT_PORT, timeout: float = 60.0) -> Optional[dict]:
    """Stop the server on ``port``; remove its record, log and temporary directory; return what was stopped.

    Returns None when no server ran (a dead server's files are removed then).

    Raises
    ------
    faq.errors.FAQRuntimeError
        ``SERVER_NOT_OURS``: the record names a live process that is not the
        server :func:`start` made (another start time or command line);
        nothing is signalled or removed.  ``SERVE_DIRECTORY_UNSAFE`` or
        ``SERVE_FILE_UNSAFE`` as for :func:`status`.

    Examples
    --------
    >>> stop(1) is None  # no server on port 1
    True
    """
    with _locked():
        record = read_serve_record(port)
        if record is None or _gone(record):
            _remove_made(port, record)
            return None
        reason = _not_ours(record, port)
        if reason is not None:
            raise FAQRuntimeError(error_class="SERVER_NOT_OURS", port=port, pid=record["pid"], path=state_path(port),
                                  reason=reason)
        stopped = _public(record, port)
        _terminate(record, port, timeout)
        _remove_made(port, record)
    return stopped


def _terminate(record: dict, port: int, timeout: float) -> None:
    """SIGTERM the proven server; SIGKILL it after ``timeout`` seconds (if it is still the same process);
    then wait for the rest of its process group (its JVM), killed too if it outlives the server."""
    pid = record["pid"]
    try:  # start() makes the server a group leader (start_new_session); one started otherwise has no group of its own
        group = pid if os.getpgid(pid) == pid else None
    except ProcessLookupError:
        group = None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)  # the server stops Spark, and its JVM ends with it
    deadline = time.monotonic() + timeout
    while not _gone(record) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not _gone(record) and _not_ours(record, port) is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL) if group else os.kill(pid, signal.SIGKILL)
    # A group id stays taken while any member lives: what the signal reaches is the server's own.
    while group and _group_alive(group) and time.monotonic() < deadline + 10:
        time.sleep(0.2)
    if group and _group_alive(group):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _remove_made(port: int, record: Optional[dict]) -> None:
    """Remove what start() made for ``port``: the recorded temporary directory (if it is one start() makes),
    the log and the record."""
    if record is not None:
        _remove_tmp(record.get("tmp"), port)
    _remove_own_file(log_path(port))
    _remove_own_file(state_path(port))


def _keep_importable() -> None:
    """Put the directory faq is imported from on ``$PYTHONPATH`` (the JVM's Python workers inherit it), so
    that faq stays importable once the server leaves the directory it was started in (which ``python -m``
    puts on the path)."""
    import faq

    root = os.path.dirname(os.path.dirname(os.path.abspath(faq.__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


# A master whose executors run in the server's own JVM.
_IN_PROCESS_MASTER = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?$")


def internal_network_config(master: str) -> dict[str, str]:
    """Settings that close Spark's own ports (the driver's RPC and block manager) to other users.

    For a master whose executors run in the server's JVM (``local``, ``local[N]``, ``local[N,F]``):
    ``spark.authenticate`` -- Spark then makes a random secret in the JVM for itself (``SecurityManager``:
    nothing to pass, on no command line) and every connection to those ports must prove it -- and those
    ports bound to 127.0.0.1 only.  Any other master's executors must reach the driver over the network
    with a secret the cluster shares: that is the cluster's own configuration, so nothing is set here.

    >>> internal_network_config("local[2]")["spark.authenticate"], internal_network_config("spark://h:7077")
    ('true', {})
    """
    if not _IN_PROCESS_MASTER.match(master.strip()):
        return {}
    return {"spark.authenticate": "true", "spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}


def serve_forever(port: int, master: str, tmp: Optional[str] = None, host: str = DEFAULT_HOST) -> None:
    """The server process: a classic session with the Spark Connect plugin, until SIGTERM.

    It listens on ``host`` only and demands the token in ``$SPARK_CONNECT_AUTHENTICATE_TOKEN`` (set by
    :func:`start`; without one it refuses to run).  ``tmp`` (made by :func:`start`, removed by
    :func:`stop`) holds everything the server writes: Spark's local directories (shuffle and spilled
    blocks, the files directory with the sessions' shipped files), the JVM's temporary directory
    (Connect's artifact staging) and, through ``TMPDIR``, the Python workers' temporary files.
    """
    from faq.spark import get_session, quiet_log4j_option

    if not os.environ.get(TOKEN_ENV):
        raise SystemExit(f"faq serve: no ${TOKEN_ENV}: a server without a token would run anyone's code; "
                         "start it with 'faq serve'")
    ready = os.environ.pop(_READY_FD_ENV, None)
    reserved = os.environ.pop(_RESERVED_FD_ENV, None)  # held open, unused, until this process ends
    for fd in filter(None, (ready, reserved)):
        os.set_inheritable(int(fd), False)  # neither the JVM nor the Python workers keep it open
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    config = {**SERVER_CONFIG, **internal_network_config(master),
              "spark.connect.grpc.binding.address": host, "spark.connect.grpc.binding.port": str(port)}
    if tmp:
        _keep_importable()
        os.chdir(tmp)  # a client's relative path never names a file beside wherever 'faq serve' was run
        os.environ["TMPDIR"] = tmp  # the JVM and so its Python workers inherit it
        tempfile.tempdir = None  # this process's tempfile reads TMPDIR again
        config["spark.local.dir"] = tmp
        config["spark.driver.extraJavaOptions"] = f"{quiet_log4j_option()} -Djava.io.tmpdir={tmp}"
    spark = get_session(master=master, app_name="faq-serve", config=config)
    conf = spark.sparkContext.getConf()
    print(f"faq serve: Spark {spark.version} ({master}) listening on {url_of(port, host)}; Spark's own ports: "
          f"spark.authenticate={conf.get('spark.authenticate', 'false')}, "
          f"spark.driver.bindAddress={conf.get('spark.driver.bindAddress', '')}", flush=True)
    if ready:
        with contextlib.suppress(OSError):  # start() gave up waiting: it no longer reads
            os.write(int(ready), b"ready\n")
        os.close(int(ready))
    from faq.cli.server_housekeeping import HOUSEKEEPING_INTERVAL, Housekeeping

    housekeeping = Housekeeping(spark)
    while not stopping:
        time.sleep(HOUSEKEEPING_INTERVAL)
        housekeeping()
    spark.stop()


if __name__ == "__main__":  # python -m faq.cli.server PORT MASTER TMPDIR HOST (what start() runs)
    serve_forever(int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None,
                  sys.argv[4] if len(sys.argv) > 4 else DEFAULT_HOST)
