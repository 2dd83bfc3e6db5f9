"""The records ``faq serve`` keeps of its servers, as its clients read them: where, who may read, the token.

``faq serve`` (:mod:`faq.cli.server`) starts a Spark Connect server that only
its owner can use: it listens on 127.0.0.1 and requires a random token.  The
token and the server's record live in a per-user directory
(:func:`serve_directory`: ``$XDG_RUNTIME_DIR/faq`` or ``~/.cache/faq/serve``,
mode 700, one 600 file per port), and a client of this machine finds the
token there for a local URL (:func:`with_served_token`), which
:func:`faq.spark.get_session` and every ``--remote`` command use.  Nothing
here starts Spark; the server's own side (start, stop, proof of identity) is
:mod:`faq.cli.server`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil  # noqa: F401 - the doctests use it
import stat
from typing import Mapping, Optional

from faq.errors import FAQRuntimeError

__all__ = ["LOCAL_HOSTS", "serve_directory", "serve_file_problem", "serve_state_path", "read_serve_record",
           "with_served_token"]


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
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if not (stat.S_ISDIR(info.st_mode) if directory else stat.S_ISREG(info.st_mode)):
        return "is not a directory" if directory else "is not a regular file"
    if info.st_uid != os.getuid():
        return f"belongs to user id {info.st_uid}, not to you ({os.getuid()})"
    if info.st_mode & 0o077:
        return f"is open to others (mode {info.st_mode & 0o777:o})"
    return None


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


def with_served_token(remote: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """``remote`` with the token of the ``faq serve`` server it names on this machine, unless it gives one.

    A URL of this machine (:data:`LOCAL_HOSTS`) without a ``token`` (or ``authorization``) parameter gets
    the token recorded for its port as an ``authorization: Bearer`` header (a parameter PySpark sends as
    gRPC metadata) on a plain channel: PySpark's ``;token=`` takes gRPC call credentials, whose callback
    thread cannot start at interpreter exit, so a client still holding a checkpoint then hung forever in
    its finaliser.  Any other URL is returned as given.  The result may hold a secret: never show it.

    >>> with_served_token("sc://example.org:15002"), with_served_token("sc://localhost:15002/;token=mine")
    ('sc://example.org:15002', 'sc://localhost:15002/;token=mine')
    >>> import tempfile; env = {"XDG_RUNTIME_DIR": tempfile.mkdtemp()}
    >>> with os.fdopen(os.open(serve_state_path(15002, env, True), os.O_WRONLY | os.O_CREAT, 0o600), "w") as record:
    ...     _ = record.write('{"token": "s3cret"}')
    >>> with_served_token("sc://127.0.0.1:15002/;user_id=me", env)
    'sc://localhost:15002/;user_id=me;authorization=Bearer%20s3cret'
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
    # localhost, not the address given: the server listens on 127.0.0.1, which a ::1 URL would miss.
    return f"sc://localhost:{port}/;" + ";".join([*params, "authorization=" + quote(f"Bearer {token}", safe="")])
