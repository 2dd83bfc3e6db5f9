"""The records ``faq serve`` keeps of its servers, as its clients read them: where, who may read, the token.

``faq serve`` (:mod:`faq.cli.server`) starts a Spark Connect server that only
its owner can use: it listens on 127.0.0.1 and requires a random token.  The
token and the server's record live in a per-user directory
(:func:`serve_directory`: ``$XDG_RUNTIME_DIR/faq`` or ``~/.cache/faq/serve``,
mode 700, one 600 file per port), and a client of this machine finds the
token there for a local URL (:func:`with_served_token`), which
:func:`faq.spark.get_session` and every ``--remote`` command use.

The token goes only to a proven peer (SSH's rule: prove the host before
sending a credential).  The client dials the literal address the server
bound (never ``localhost``: gRPC tries ``::1`` first, where any local user
may listen), and first checks in ``/proc/net/tcp{,6}`` that every socket
listening there is its own user's and held by the recorded server's process
group (:func:`prove_peer`); otherwise it refuses (``SERVE_PEER_UNPROVEN``)
and sends nothing.  Without ``/proc`` (not Linux) it refuses too.  Nothing
here starts Spark; the server's own side (start, stop, proof of identity) is
:mod:`faq.cli.server`.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import os
import shutil  # noqa: F401 - the doctests use it
import socket  # noqa: F401 - the doctests use it
import sys
from typing import Mapping, Optional, Union

from faq.errors import FAQRuntimeError

__all__ = ["LOCAL_HOSTS", "serve_directory", "serve_file_problem", "serve_state_path", "read_serve_record",
           "process_identity", "served_address", "listening_sockets", "prove_peer", "with_served_token"]

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


#: Hosts of a Spark Connect URL that name this machine (a ``faq serve`` server's token may be looked up).
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def serve_directory(create: bool = False, environ: Optional[Mapping[str, str]] = None) -> str:
    """The per-user directory of ``faq serve``'s records (with the servers' tokens) and logs.

    ``$XDG_RUNTIME_DIR/faq`` when that variable names a directory of ours, else ``~/.cache/faq/serve``;
    ``create`` makes it (mode 700) when missing.  One that is a symbolic link, someone else's, or open to
    the group or others is refused (``SERVE_DIRECTORY_UNSAFE``).

    >>> import tempfile; runtime = tempfile.mkdtemp()
    >>> path = serve_directory(create=True, environ={"XDG_RUNTIME_DIR": runtime})
    >>> path == os.path.join(runtime, "faq"), oct(os.stat(path).st_mode & 0o777)
    (True, '0o700')
    >>> os.chmod(path, 0o777)
    >>> serve_directory(environ={"XDG_RUNTIME_DIR": runtime})
    Traceback (most recent call last):
    ...
    faq.errors.FAQRuntimeError: [SERVE_DIRECTORY_UNSAFE] faq serve's directory '...' is open to others (mode 777): ...
    >>> shutil.rmtree(runtime)
    """
    environ = os.environ if environ is None else environ
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and os.path.isdir(runtime) and os.stat(runtime).st_uid == os.getuid():
        path = os.path.join(runtime, "faq")
    else:
        path = os.path.join(os.path.expanduser("~"), ".cache", "faq", "serve")
    if create and not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made by another faq serve meanwhile: checked below
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700)  # exactly 700, whatever the umask
    if problem := os.path.lexists(path) and serve_file_problem(os.lstat(path), directory=True):
        raise FAQRuntimeError(error_class="SERVE_DIRECTORY_UNSAFE", path=path, reason=problem)
    return path


def serve_file_problem(info: os.stat_result, directory: bool = False) -> Optional[str]:
    """Why a file of ``faq serve``'s (``os.lstat``/``os.fstat``) cannot be trusted, or None: it must be a
    directory (or regular file) of this user's, closed to the group and others.

    >>> serve_file_problem(os.lstat("/"))
    'is not a regular file'
    """
    from faq.ownership import file_problem  # one check for every file faq trusts (state directories too)

    return file_problem(info, directory)


def serve_state_path(port: int, environ: Optional[Mapping[str, str]] = None, create: bool = False) -> str:
    """The record (and token) file of the ``faq serve`` server on ``port``, in :func:`serve_directory`."""
    return os.path.join(serve_directory(create, environ), f"serve-{port}.json")


def read_serve_record(port: int, environ: Optional[Mapping[str, str]] = None) -> Optional[dict]:
    """The record ``faq serve`` keeps of its server on ``port`` -- token included -- or None without one.

    Opened without following a symbolic link (or waiting on a pipe), and refused (``SERVE_FILE_UNSAFE``)
    unless it is a regular file only we can read; one that is no JSON object counts as none.

    >>> read_serve_record(1) is None  # no server recorded on port 1
    True
    """
    path = serve_state_path(port, environ)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        reason = "is a symbolic link" if error.errno == errno.ELOOP else f"cannot be read ({error.strerror})"
        raise FAQRuntimeError(error_class="SERVE_FILE_UNSAFE", path=path, reason=reason) from None
    with os.fdopen(fd) as handle:
        if problem := serve_file_problem(os.fstat(fd)):
            raise FAQRuntimeError(error_class="SERVE_FILE_UNSAFE", path=path, reason=problem)
        try:
            record = json.load(handle)
        except ValueError:
            return None
    return record if isinstance(record, dict) else None


def process_identity(pid: int) -> Optional[tuple[int, list[str]]]:
    """The start time (clock ticks after boot: ``/proc/PID/stat`` field 22) and command line of ``pid``,
    or None when it cannot be read (no such process, no ``/proc``).

    >>> started, command = process_identity(os.getpid())
    >>> isinstance(started, int) and command == open("/proc/self/cmdline", "rb").read().decode().split("\\0")[:-1]
    True
    >>> process_identity(-1) is None
    True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read()
        fields = line[line.rindex(b")") + 2:].split()  # from field 3 on: the name (field 2) may hold spaces
        started = int(fields[22 - 3])
    except (OSError, ValueError, IndexError):
        return None
    return started, [os.fsdecode(arg) for arg in command.split(b"\0")[:-1]]


def served_address(host: str) -> str:
    """The address a client dials for a server bound to ``host``: the address itself, loopback for a wildcard.

    >>> served_address("127.0.0.1"), served_address("::1"), served_address("0.0.0.0"), served_address("::")
    ('127.0.0.1', '::1', '127.0.0.1', '::1')
    """
    return _WILDCARD_DIALS.get(host, host)


# A server bound to every address of a family is dialled on that family's loopback address.
_WILDCARD_DIALS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}
# The state of a listening socket in /proc/net/tcp and tcp6.
_LISTEN = "0A"


def listening_sockets(port: int) -> Optional[list[tuple[IPAddress, int, int]]]:
    """Every TCP socket of this machine listening on ``port``: its local address, owner's user id and inode,
    from ``/proc/net/tcp`` and ``tcp6``; None where there is no ``/proc/net/tcp`` (not Linux).

    >>> with socket.socket() as s:
    ...     s.bind(("127.0.0.1", 0)); s.listen()
    ...     [(str(a), uid == os.getuid()) for a, uid, _ in listening_sockets(s.getsockname()[1])]
    [('127.0.0.1', True)]
    """
    found = []
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/net/{name}") as table:
                rows = table.readlines()[1:]
        except FileNotFoundError:
            if name == "tcp":
                return None
            continue  # a kernel without IPv6
        for row in rows:
            fields = row.split()
            address, hexport = fields[1].split(":")
            if fields[3] != _LISTEN or int(hexport, 16) != port:
                continue
            raw = bytes.fromhex(address)  # 32-bit words, each in the machine's byte order
            if sys.byteorder == "little":
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.append((ipaddress.ip_address(raw), int(fields[7]), int(fields[9])))
    return found


def _may_take(bound: IPAddress, dialled: IPAddress) -> bool:
    """Whether a socket listening on ``bound`` may be handed a connection to ``dialled``: the same address,
    or a wildcard of its family -- or ``[::]``, which takes IPv4 too unless IPV6_V6ONLY (not shown in /proc)."""
    if isinstance(bound, ipaddress.IPv6Address) and bound.ipv4_mapped is not None:
        bound = bound.ipv4_mapped
    if bound == dialled:
        return True
    return bound.is_unspecified and (bound.version == dialled.version or bound.version == 6)


def prove_peer(address: str, port: int, record: Mapping) -> None:
    """Raise ``SERVE_PEER_UNPROVEN`` unless every socket that a connection to ``address``:``port`` may reach
    is ours and, when the recorded server runs on this machine, held by its processes (its process group:
    its Python and its JVM).

    What a client checks before it sends a ``faq serve`` token; see :func:`with_served_token`.  The user id
    is what keeps the token from other users; the process check keeps it from our own other programs.  A
    record of a server elsewhere (its file copied here to reach it through an SSH tunnel) names no process
    here: the tunnel's socket is then checked by its user id alone.

    >>> prove_peer("127.0.0.1", 1, {"pid": os.getpid()})
    Traceback (most recent call last):
    ...
    faq.errors.FAQRuntimeError: [SERVE_PEER_UNPROVEN] the token of the faq server on port 1 was not sent to 127.0.0.1 port 1: nothing listens there (has the server stopped?)...
    """
    def refuse(reason: str, uid: Optional[int] = None) -> None:
        raise FAQRuntimeError(error_class="SERVE_PEER_UNPROVEN", address=address, port=port, uid=uid, reason=reason)

    try:
        dialled = ipaddress.ip_address(address)
    except ValueError:
        refuse(f"the server was started with the host name {address!r}, which may name several addresses; "
               "start it with --host ADDRESS (e.g. 127.0.0.1)")
    sockets = listening_sockets(port)
    if sockets is None:
        refuse("this system has no /proc/net/tcp to tell who listens there (faq proves a local server's socket "
               "on Linux only)")
    takers = [(uid, inode) for bound, uid, inode in sockets if _may_take(bound, dialled)]
    if not takers:
        refuse("nothing listens there (has the server stopped?)")
    for uid, _ in takers:
        if uid != os.getuid():
            refuse(f"user id {uid} listens there, not you ({os.getuid()})", uid)
    inodes = {inode for _, inode in takers}
    held = _held_by_server(record, inodes)
    if held is not None and held != inodes:
        refuse(f"a process of yours that is not the recorded server (pid {record.get('pid')}) listens there",
               os.getuid())


def _held_by_server(record: Mapping, wanted: set[int]) -> Optional[set[int]]:
    """Which socket inodes of ``wanted`` the processes of the recorded server's process group hold (its
    Python leads the group; its JVM and Python workers are members); None when the recorded process does
    not run here (a record copied from another machine, or the server ended: then nothing holds them)."""
    pid = record.get("pid")
    found = process_identity(pid) if isinstance(pid, int) and pid > 0 else None
    if found is None:
        return None
    if found[0] != record.get("start_time"):  # another process took the pid
        return set()
    held: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                line = f.read()
            if int(line[line.rindex(b")") + 2:].split()[5 - 3]) != pid:  # field 5: the process group
                continue
            for fd in os.listdir(f"/proc/{entry}/fd"):
                link = os.readlink(f"/proc/{entry}/fd/{fd}")
                if link.startswith("socket:[") and int(link[8:-1]) in wanted:
                    held.add(int(link[8:-1]))
        except (OSError, ValueError, IndexError):  # a process that ended meanwhile
            continue
        if held == wanted:
            break
    return held


def with_served_token(remote: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """``remote`` with the token of the ``faq serve`` server it names on this machine, unless it gives one.

    A URL of this machine (:data:`LOCAL_HOSTS`) without a ``token`` (or ``authorization``) parameter, on a
    port with a recorded server, becomes a URL of the very address that server bound (never ``localhost``,
    which a client may resolve to ``::1`` first, where another user can listen) with the recorded token
    as an ``authorization: Bearer`` header -- once :func:`prove_peer` has shown that the socket listening
    there is the recorded server's.  The header is a parameter PySpark sends as gRPC metadata on a plain
    channel: PySpark's ``;token=`` takes gRPC call credentials, whose callback thread cannot start at
    interpreter exit, so a client still holding a checkpoint then hung forever in its finaliser.  Any other
    URL is returned as given.  The result may hold a secret: never show it.

    Raises
    ------
    faq.errors.FAQRuntimeError
        ``SERVE_PEER_UNPROVEN``: the socket at the recorded address is not the server's (or cannot be
        checked); the token is not sent.  ``SERVE_DIRECTORY_UNSAFE`` or ``SERVE_FILE_UNSAFE``: see
        :func:`read_serve_record`.

    Examples
    --------
    >>> with_served_token("sc://example.org:15002"), with_served_token("sc://localhost:15002/;token=mine")
    ('sc://example.org:15002', 'sc://localhost:15002/;token=mine')
    >>> import tempfile; env = {"XDG_RUNTIME_DIR": tempfile.mkdtemp()}
    >>> with os.fdopen(os.open(serve_state_path(1, env, True), os.O_WRONLY | os.O_CREAT, 0o600), "w") as record:
    ...     _ = record.write('{"token": "s3cret", "host": "127.0.0.1", "pid": 1}')
    >>> with_served_token("sc://localhost:1/;user_id=me", env)  # nothing of the server's listens on port 1
    Traceback (most recent call last):
    ...
    faq.errors.FAQRuntimeError: [SERVE_PEER_UNPROVEN] the token of the faq server on port 1 was not sent to 127.0.0.1 port 1: ...
    >>> shutil.rmtree(env["XDG_RUNTIME_DIR"])
    """
    from urllib.parse import quote, urlparse

    try:
        url = urlparse("http" + remote[2:]) if remote.startswith("sc://") else None
        port = (url.port or 15002) if url else None  # Spark Connect's default port
    except ValueError:  # no valid port: PySpark says what is wrong with it
        return remote
    params = [p for p in url.params.split(";") if p] if url else []
    if url is None or url.hostname not in LOCAL_HOSTS or url.path not in ("", "/") or \
            any(p.split("=", 1)[0].lower() in ("token", "authorization") for p in params):
        return remote
    record = read_serve_record(port, environ)
    token = record.get("token") if record else None
    if not isinstance(token, str) or not token:
        return remote
    host = record.get("host")
    address = served_address(host if isinstance(host, str) else "")
    prove_peer(address, port, record)
    shown = f"[{address}]" if ":" in address else address
    return f"sc://{shown}:{port}/;" + ";".join([*params, "authorization=" + quote(f"Bearer {token}", safe="")])
