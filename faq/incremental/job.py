"""What job a state belongs to: recorded when the state is made, compared when it is resumed.

A state directory holds the answer of one job: these inputs, this query or
pattern, these options.  Resumed with other ones (another graph, another
direction of an as-of join, another ``k``), it would answer the old job under
the new one's name.  So a state made under :func:`recording` keeps the job's
identity in its manifest (the ``job`` field, carried by every later commit),
and a resume compares it (:func:`check_job`); a difference is a
:class:`~faq.errors.StateJobMismatchError` naming the field, its saved value
and the given one.

The identity (:func:`job_identity`) is the job's ``kind``, its ``inputs``
and its ``options``.  An input given as a path is its absolute path, size,
modification time and SHA-256 (a directory's: of its files' names and
contents, in name order); one given as a table, its schema; a URL or a glob
(read by Spark), its text only.  **The
rule for a path**: its content decides.  A resume hashes the file again
(one sequential read, cheaper than the resume itself) and compares the
digest: an equal size and time do not prove equal content (``cp -p``,
``touch -r`` and an edit within the clock's resolution keep them), and a
copy elsewhere, or a ``touch``, with equal content is the same input.  A
state saved before faq recorded jobs has no identity: it is resumed as
before, with a note that it was not checked.

Examples
--------
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> graph = os.path.join(folder, "g.txt")
>>> with open(graph, "w") as f:
...     _ = f.write("1 2\\n2 3\\n")
>>> saved = job_identity("truss", {"graph": graph}, k=None)
>>> difference(saved, job_identity("truss", {"graph": graph}, k=None)) is None
True
>>> difference(saved, job_identity("truss", {"graph": graph}, k=4))
('k', 'null', '4')
>>> with open(graph, "a") as f:
...     _ = f.write("3 1\\n")
>>> difference(saved, job_identity("truss", {"graph": graph}, k=None))[0]
'graph'
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import stat
from typing import Any, Callable, Iterator, Mapping, Optional

from faq.errors import InputNotFoundError, StateDirectoryError, StateJobMismatchError

__all__ = ["JOB", "job_identity", "input_identity", "difference", "check_job", "recording", "recorded_job"]

#: The manifest's field holding the job's identity.
JOB = "job"

# The identity the state being made now records (set by ``recording``; read by Store.create).
_RECORDING: contextvars.ContextVar[Optional[dict]] = contextvars.ContextVar("faq_job", default=None)


def job_identity(kind: str, inputs: Mapping[str, Any], **options: Any) -> dict[str, Any]:
    """The identity of a job: its ``kind``, each input's identity (:func:`input_identity`) and its options."""
    return {"kind": kind, "inputs": {name: input_identity(value) for name, value in inputs.items()},
            "options": {name: _plain(value) for name, value in options.items()}}


def input_identity(value: Any) -> dict[str, Any]:
    """A path's absolute path, size, modification time and SHA-256 (a URL's or glob's text); a table's (or
    DataFrame's) schema.

    Raises
    ------
    InputNotFoundError
        A path that does not exist, or is (or holds) no regular file (a FIFO, a device).
    """
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if "://" in text or any(c in text for c in "*?["):  # Spark reads it: only its text can be compared
            return {"url": text}
        path = os.path.abspath(text)
        if not os.path.exists(path):
            raise InputNotFoundError(path=text)
        digest, info, size = hashlib.sha256(), os.stat(path), 0
        if os.path.isdir(path):  # a directory of parts: its files' names and contents, in name order
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    digest.update(os.path.relpath(os.path.join(root, name), path).encode() + b"\0")
                    size += _hash_file(os.path.join(root, name), digest)
        else:
            size = _hash_file(path, digest)
        return {"path": path, "size": size, "mtime_ns": info.st_mtime_ns, "sha256": digest.hexdigest()}
    schema = getattr(value, "schema", None)
    if schema is None and hasattr(value, "dtypes"):  # pandas
        schema = {str(name): str(dtype) for name, dtype in value.dtypes.items()}
    return {"schema": str(schema) if schema is not None else type(value).__name__}


def difference(saved: Mapping[str, Any], given: Mapping[str, Any]) -> Optional[tuple[str, str, str]]:
    """The first field in which two identities differ, as (field, saved, given) in words; None: the same job."""
    if saved.get("kind") != given.get("kind"):
        return "kind", _shown(saved.get("kind")), _shown(given.get("kind"))
    saved_inputs, given_inputs = saved.get("inputs") or {}, given.get("inputs") or {}
    for name in _names(given_inputs, saved_inputs):
        was, now = saved_inputs.get(name) or {}, given_inputs.get(name) or {}
        if _content(was) != _content(now):  # a path's content decides, not its name or time (module notes)
            return name, _input_words(was), _input_words(now)
    saved_options, given_options = saved.get("options") or {}, given.get("options") or {}
    for name in _names(given_options, saved_options):
        if saved_options.get(name) != given_options.get(name):
            return name, _shown(saved_options.get(name)), _shown(given_options.get(name))
    return None


def check_job(path: str, meta: Mapping[str, Any], given: Mapping[str, Any],
              note: Optional[Callable[[str], None]] = None) -> None:
    """Refuse to resume the state in ``path`` (its manifest ``meta``) for a job other than ``given``.

    A state without a recorded job (saved before faq recorded jobs) is
    resumed unchecked; ``note`` is told so.

    Raises
    ------
    StateJobMismatchError
        The job differs: ``field``, ``saved`` and ``given`` say how.
    StateDirectoryError
        The recorded job is not an identity faq wrote.
    """
    saved = meta.get(JOB)
    if saved is None:
        if note is not None:
            note(f"the state in {path} was saved before faq recorded the job it belongs to; resumed without "
                 "checking its inputs and options")
        return
    parts = [saved.get(k, {}) for k in ("inputs", "options")] if isinstance(saved, dict) else [None]
    if not all(isinstance(p, dict) for p in parts) or not all(isinstance(v, dict) for v in parts[0].values()):
        raise StateDirectoryError(path, "manifest.json has a job record faq did not write")
    found = difference(saved, given)
    if found is not None:
        field, was, now = found
        raise StateJobMismatchError(path=path, field=field, saved=was, given=now)


@contextlib.contextmanager
def recording(job: Optional[Mapping[str, Any]]) -> Iterator[None]:
    """A state made inside records ``job`` (:meth:`~faq.incremental.store.Store.create` reads it)."""
    token = _RECORDING.set(None if job is None else dict(job))
    try:
        yield
    finally:
        _RECORDING.reset(token)


def recorded_job() -> Optional[dict]:
    """The job a state made now records (:func:`recording`), or None."""
    return _RECORDING.get()


def _plain(value: Any) -> Any:
    """An option as JSON holds it (what a manifest gives back), so saved and given compare equal."""
    return json.loads(json.dumps(value, default=str))


def _names(given: Mapping[str, Any], saved: Mapping[str, Any]) -> list[str]:
    """The fields in the order the job names them (its main ones first), then those only the saved one has."""
    return [*given, *(name for name in saved if name not in given)]


def _hash_file(path: str, digest: Any) -> int:
    """Add a regular file's content to ``digest``; its size (a FIFO is not waited on: refused as no input)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    size = 0
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputNotFoundError(path=path)
        while chunk := f.read(1 << 22):
            digest.update(chunk)
            size += len(chunk)
    return size


def _content(identity: Mapping[str, Any]) -> Any:
    return identity.get("sha256", identity.get("schema", identity.get("url")))


def _input_words(identity: Mapping[str, Any]) -> str:
    if not identity:
        return "none"
    if "url" in identity:
        return str(identity["url"])
    if "sha256" in identity:
        return (f"{identity.get('path')} ({identity.get('size')} bytes, sha256 "
                f"{str(identity.get('sha256'))[:12]}...)")
    return f"a table of schema {str(identity.get('schema'))[:200]}"


def _shown(value: Any) -> str:
    return json.dumps(value, default=str)[:200]
