"""Update files: batches of edge changes, one file per batch, read on the driver.

Everything maintained over a graph takes its batches in the same form: a
directory of files applied in name order (:func:`update_files`), each of
lines ``+ src dst [weight]`` (insert, or set a weight) and ``- src dst``
(delete); blank lines and ``#`` comments are skipped.  :func:`read_batch`
parses one file into an :class:`UpdateBatch`, keeping each line's number so
that an error names the file and the line.  Files are parsed before any
work starts, so a bad line fails fast.

Every line ends with a line break, the last one too: a file whose last data
line has none may be a write cut short -- ``+ 123 45`` cut to ``+ 123 4``
still parses, as another edge -- so it is refused, naming that line.  There
is no exception for files written without a final newline: a batch applied
wrong cannot be taken back, and adding the newline is the writer's one-line
fix.  (A last line that is blank or a comment needs none: it holds no data.)
Write a batch file whole: under a name starting with ``.``, then rename it.

Examples
--------
>>> from faq.io import scratch_path
>>> from faq.io.updates import read_batch
>>> batch = read_batch(scratch_path("001.txt", "# one batch\\n+ 1 2\\n+ 2 3 0.5\\n- 4 5\\n"))
>>> batch.inserts, batch.deletes, batch.insert_lines
(((1, 2, None), (2, 3, 0.5)), ((4, 5),), (2, 3))
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional, Union

from faq.errors import FAQValueError, InputNotFoundError, MalformedInputError, StateDirectoryError
from faq.errors.templates import clip
from faq.io._common import CUT_LAST_LINE

_SEPARATOR = re.compile(r"[ \t\r\f\v,]+")
_INT = re.compile(r"^[+-]?[0-9]{1,19}$")
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class UpdateBatch:
    """One batch of edge updates, as read by :func:`read_batch`.

    ``inserts`` holds ``(src, dst, weight or None)``, ``deletes`` holds
    ``(src, dst)``; ``insert_lines`` / ``delete_lines`` the 1-based line
    number of each, for messages.
    """

    name: str
    inserts: tuple = ()
    deletes: tuple = ()
    path: str = ""
    insert_lines: tuple = ()
    delete_lines: tuple = ()

    def __len__(self) -> int:
        return len(self.inserts) + len(self.deletes)

    def where(self, kind: str, pair: Optional[tuple] = None) -> str:
        """``path, line N`` of the first line of ``kind`` (for ``pair``, if given)."""
        rows, lines = (self.deletes, self.delete_lines) if kind == "deletion" else (self.inserts, self.insert_lines)
        for row, line in zip(rows, lines):
            if pair is None or (row[0], row[1]) == tuple(pair[:2]):
                return f"{self.path or self.name}, line {line}"
        return self.path or self.name


def _parse_node(token: str, path: str, number: int, line: str) -> int:
    value = int(token) if _INT.match(token) else None
    if value is None or not _INT64[0] <= value <= _INT64[1]:
        limit = f" (64-bit integers run from {_INT64[0]} to {_INT64[1]})" if value is not None else ""
        raise MalformedInputError(path=path, line_number=number, line=line,
                                  reason=f"node id {clip(token, 40)} is not a 64-bit integer{limit}")
    return value


def read_batch(path: Union[str, os.PathLike], *, weighted: bool = False) -> UpdateBatch:
    """Read one update file: ``+ src dst [weight]`` and ``- src dst`` lines.

    Fields are separated by spaces, tabs or commas; blank lines and lines
    starting with ``#`` are skipped.  A weight is a number (``inf`` allowed,
    not ``nan``).  With ``weighted=True`` (the graph has weights) a ``+`` line
    must give one; otherwise it may (the graph's default is used when absent).
    A ``-`` line may carry a weight, which is ignored.  The file is read on
    the driver: update batches are meant to be small.  The last data line must
    end with a line break (see the module notes: without one it may be cut).

    Raises
    ------
    MalformedInputError
        With the file and the 1-based line number: a line of another form, an
        id that is no 64-bit integer, a weight that is no number, or a last
        line without a line break.
    """
    path = os.fspath(path)
    name = os.path.basename(path)
    inserts, deletes, insert_lines, delete_lines = [], [], [], []
    opener = open
    if path.endswith(".gz"):
        import gzip

        opener = gzip.open  # type: ignore[assignment]
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if not raw.endswith("\n"):  # the last line, without a line break: perhaps a write cut short
                raise MalformedInputError(path=path, line_number=number, line=line, reason=CUT_LAST_LINE)
            tokens = _SEPARATOR.split(line)
            op = tokens[0]
            if op not in ("+", "-") or len(tokens) not in (3, 4):
                raise MalformedInputError(
                    path=path, line_number=number, line=line, reason="expected '+ src dst [weight]' or '- src dst'"
                )
            src = _parse_node(tokens[1], path, number, line)
            dst = _parse_node(tokens[2], path, number, line)
            weight = None
            if len(tokens) == 4:
                try:
                    weight = float(tokens[3])
                except ValueError:
                    weight = float("nan")
                if weight != weight:  # nan
                    raise MalformedInputError(
                        path=path, line_number=number, line=line,
                        reason=f"weight {clip(tokens[3], 40)} is not a number",
                    )
            if op == "+":
                if weight is None and weighted:
                    raise MalformedInputError(
                        path=path, line_number=number, line=line, reason="missing weight (the graph has weights)"
                    )
                inserts.append((src, dst, weight))
                insert_lines.append(number)
            else:
                deletes.append((src, dst))
                delete_lines.append(number)
    return UpdateBatch(
        name=name,
        inserts=tuple(inserts),
        deletes=tuple(deletes),
        path=path,
        insert_lines=tuple(insert_lines),
        delete_lines=tuple(delete_lines),
    )


def update_files(folder: Union[str, os.PathLike]) -> list[str]:
    """The batch files of ``folder`` in name order (regular files; names starting with '.' skipped)."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        if not os.path.exists(folder):
            raise InputNotFoundError(path=folder)
        raise FAQValueError(error_class="NOT_AN_UPDATES_DIRECTORY", path=folder)
    names = sorted(n for n in os.listdir(folder) if not n.startswith(".") and os.path.isfile(os.path.join(folder, n)))
    return [os.path.join(folder, n) for n in names]


def read_updates(folder: Union[str, os.PathLike], *, weighted: bool = False) -> list[UpdateBatch]:
    """Every batch file of ``folder`` (see :func:`update_files`), read with :func:`read_batch`."""
    return [read_batch(p, weighted=weighted) for p in update_files(folder)]


def pending(files: list[str], applied: list[str], state: str = "the state") -> list[tuple[int, str]]:
    """The batch files still to apply after ``applied`` (labels of the versions a state reached), with
    the version each makes.

    A state records the name of every batch file it applied (version ``k``
    is ``applied[k - 1]``).  Resuming, the directory's first files must be
    exactly those, in order; the rest are applied from version
    ``len(applied) + 1`` on.  Anything else (a file renamed, removed or
    inserted before the last applied one) is refused rather than guessed:
    a batch must never count twice or be skipped.

    >>> pending(["u/001.txt", "u/002.txt", "u/003.txt"], ["001.txt"])
    [(2, 'u/002.txt'), (3, 'u/003.txt')]
    """
    names = [os.path.basename(f) for f in files]
    done = len(applied)
    if names[:done] != list(applied):
        seen = ", ".join(applied[-3:]) if applied else "none"
        raise StateDirectoryError(state, f"it has applied {done} batch(es) (last: {seen}), which are not the first "
                                         f"{done} file(s) of the update directory in name order; use the directory "
                                         "the state was made with, or a new state")
    return [(done + k + 1, f) for k, f in enumerate(files[done:])]
