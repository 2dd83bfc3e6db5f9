"""The fast load path of edge lists: a columnar read on the driver, cleaning in numpy.

:func:`~faq.io.read_edge_list` parses with Spark's text reader and Column
regular expressions, which costs two passes over the file (the malformed-line
check, then the load) and a shuffle for the repeated edges.  For a local file
of modest size (:data:`MAX_BYTES`) the same work is faster on the driver:

* :func:`read_edge_arrays` reads the (decompressed) file with ``pyarrow.csv``
  (multi-threaded), every field as a string, checks the node ids with the very
  regular expression the Spark path uses, and casts them: exactly the lines
  the Spark path accepts.  It accepts only the regular shape of an edge list
  -- comment and blank lines before the data, then one edge per line with one
  separator character (a tab, a space or a comma) -- and returns ``None`` for
  anything else (a comment in the middle, runs of separators, a truncated
  ``.gz``), so the caller falls back to the Spark path, which handles every
  case.  A line the Spark path would surely reject too (a field that is no
  64-bit integer, such as ``foo``, ``1e12`` or ``9223372036854775808``, or a
  line of one field) raises :class:`~faq.errors.MalformedInputError` naming the
  file, the line number and the line (:func:`first_malformed_line`, the
  Python twin of the Spark path's checks): bad input is reported without
  Spark, before any session exists;
* :func:`unique_pairs`, :func:`without_self_loops` and :func:`degree_orient`
  clean and orient in numpy (sorting packed 64-bit keys);
* :func:`edges_dataframe` hands the result to Spark: on a classic session with
  a local master as a Parquet file in a per-process temporary directory (Spark
  reads it with its vectorised reader; ``createDataFrame`` of an Arrow table
  measured several times slower there), otherwise -- Spark Connect, a cluster
  -- with ``createDataFrame`` of the Arrow table.

The data passes through the driver, as the broadcast join's index does anyway;
files over :data:`MAX_BYTES`, globs, directories and URIs (``hdfs://``,
``s3://``) always take the Spark path.  On Spark Connect the file is the
*client's* (the Spark path reads the server's): the same file when the server
runs on the client's machine.  The spilled Parquet files stay until the
process exits (a few bytes per edge).

Examples
--------
>>> import numpy as np
>>> from faq.io import scratch_path
>>> path = scratch_path("g.txt", "# from, to\\n1\\t2\\r\\n2\\t1\\r\\n2\\t2\\r\\n1\\t2\\r\\n")
>>> src, dst = read_edge_arrays(path)
>>> src.tolist(), dst.tolist()
([1, 2, 2, 1], [2, 1, 2, 2])
>>> [a.tolist() for a in unique_pairs(*without_self_loops(src, dst))]
[[1, 2], [2, 1]]
>>> read_edge_arrays(scratch_path("odd.txt", "1 2\\n2  3\\n")) is None   # a run of blanks: for Spark
True
>>> read_edge_arrays(scratch_path("bad.txt", "1 2\\n2 x\\n"))
Traceback (most recent call last):
...
faq.errors.MalformedInputError: [MALFORMED_INPUT] ...bad.txt, line 2: node id 'x' is not a 64-bit integer: '2 x'
"""

from __future__ import annotations

import os
import re
from typing import IO, TYPE_CHECKING, Mapping, Optional

import numpy as np

from faq.errors import MalformedInputError
from faq.errors.templates import clip

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "MAX_BYTES",
    "read_edge_arrays",
    "parquet_edge_table",
    "local_file",
    "line_problem",
    "first_malformed_line",
    "without_self_loops",
    "unique_pairs",
    "degree_orient",
    "edges_dataframe",
]

#: Largest file (bytes on disk; compressed files count :data:`COMPRESSION_RATIO` times) read on the
#: driver.  1 GiB of text is about 80M edges: 1.3 GB of int64 pairs, sorted once more to dedupe.
MAX_BYTES = 1 << 30
COMPRESSION_RATIO = 4

# The syntax, shared with the Spark path (faq.io.edges imports these, not the reverse).  Whitespace is
# ASCII whitespace only (Java's \s; Python's \s with re.ASCII).
INT_RE = r"[+-]?[0-9]{1,19}"
FLOAT_RE = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity)"
BOOL_WORDS = ("true", "false")
WS = r"[ \t\r\f\x0B]"
TRIM_RE = rf"^{WS}+|{WS}+$"
SEPARATOR_RE = r"[ \t\r\f\x0B,]+"  # any run of tabs, spaces and commas
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SEPARATORS = " \t,"
COMMENT_PREFIXES = ("#", "%")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
# What an edge list of plain integer ids is made of, besides its separator; and the longest line in
# which no field can reach 20 characters (the other field and the separator take at least 2).
_PLAIN_BYTES = b"0123456789-\r\n"
_PLAIN_LINE_MAX = 21
_SCAN_BYTES = 1 << 24
_BOM = b"\xef\xbb\xbf"
_NAMES = ("src", "dst")


#: Bytes of an edge list's body above which Arrow reads it with its thread pool.
THREADED_READ_BYTES = 1 << 20

def local_file(path: str) -> Optional[str]:
    """The local file behind ``path`` when the driver may read it itself, else None.

    None for URIs other than ``file:``, globs, directories, missing files and
    files over :data:`MAX_BYTES`.
    """
    import glob

    from faq.io._common import is_local, local_path

    if not is_local(path) or glob.has_magic(path):
        return None
    local = local_path(path)
    if not os.path.isfile(local):
        return None
    size = os.path.getsize(local) * (COMPRESSION_RATIO if local.endswith((".gz", ".bz2")) else 1)
    return local if size <= MAX_BYTES else None


def read_edge_arrays(path: str) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """The (source, target) ids of every data line of a local edge list, or None to use the Spark path.

    Parameters
    ----------
    path : str
        A local file (``.gz`` and ``.bz2`` are decompressed by extension, as Hadoop does).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray) or None
        ``int64`` arrays in file order, self-loops and repeats included; None when
        the file is not local, too large, or not of the regular shape (the Spark
        path then reads it, and reports a bad line it may have).

    Raises
    ------
    MalformedInputError
        A line the Spark path would reject as well: a field that is no 64-bit
        integer (``foo``, ``1.5``, ``1e12``, ``0x1F``, ``9223372036854775808``) or a
        line of one field.  ``path``, ``line_number`` (1-based) and ``line`` name it.
        Only the error path reads the file line by line, up to that line.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from faq.arrow_arrays import to_numpy

    table = parquet_edge_table(path)
    if table is not None:  # a Parquet edge list: its src and dst columns, checked (faq.checks)
        from faq.checks import node_ids

        return node_ids(table.column(0), path, table.column_names[0]), node_ids(table.column(1), path,
                                                                                 table.column_names[1])
    local = local_file(path)
    if local is None:
        return None
    # The codecs Hadoop's text reader picks by these extensions; any other file is read as it is
    # (Arrow would also decompress .zst, .lz4, .br, whose Hadoop formats or codecs differ).
    compression = "gzip" if local.endswith(".gz") else "bz2" if local.endswith(".bz2") else None
    try:
        data = pa.input_stream(local, compression=compression).read_buffer()
    except (OSError, pa.ArrowException):  # unreadable or corrupt: the Spark path says why
        return None
    start = _first_data_line(data)
    if start is None:
        return None
    offset, delimiter, fields = start
    if offset == len(data):  # no data line at all
        return np.empty(0, np.int64), np.empty(0, np.int64)
    body = data.slice(offset)
    from faq.io.int_pairs import int_pairs

    pairs = int_pairs(np.frombuffer(body, dtype=np.uint8), delimiter, fields)  # a large plain text, compiled
    if pairs is not None:
        return pairs
    names = [f"f{i}" for i in range(fields)]
    parse = pcsv.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True)
    # Arrow's threads only for a body worth splitting: a small file gains nothing from them.  (Suspected,
    # not proven: a threaded read failing on a malformed line, then the CLI's exit 2, aborted once at
    # interpreter exit -- "terminate called without an active exception" -- in a loaded test run.)
    read = pcsv.ReadOptions(column_names=names, use_threads=len(body) > THREADED_READ_BYTES)
    if _plain_integers(body, delimiter):
        # Only digits, '-', the separator and line breaks, no line long enough for a 20-digit id:
        # Arrow's integer parser then accepts exactly what INT_RE does, so no string pass is needed.
        try:
            table = pcsv.read_csv(pa.BufferReader(body), read_options=read, parse_options=parse,
                                  convert_options=pcsv.ConvertOptions(
                                      include_columns=names[:2], column_types={n: pa.int64() for n in names[:2]}))
            if not any(column.null_count for column in table.columns):  # an empty field is null here
                return tuple(to_numpy(column) for column in table.columns)  # type: ignore[return-value]
        except pa.ArrowException:  # a stray '-' or a line of another shape: the checked pass decides
            pass
    import pyarrow.compute as pc  # (here: its import costs a plain file's read 0.1 s)

    bad_lines = _BadLines(delimiter)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(body),
            read_options=read,
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True,
                                            invalid_row_handler=bad_lines),
            # Strings, not int64: Arrow's integer parser also takes "0x1F", " 7" and zero-padded
            # 20-digit ids, which the Spark path rejects; the ids are checked with its regular expression.
            convert_options=pcsv.ConvertOptions(
                include_columns=names[:2], column_types={n: pa.string() for n in names[:2]}, strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, ValueError):  # a line of another shape (or not UTF-8)
        return _report_malformed(local) if bad_lines.seen else None
    if table.num_rows == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    first, second = table.columns
    is_int = [pc.match_substring_regex(column, f"^(?:{INT_RE})$") for column in (first, second)]
    if not all(pc.all(ok).as_py() for ok in is_int):
        return _report_malformed(local) if _surely_malformed(first, second, *is_int) else None
    try:
        return to_numpy(pc.cast(first, pa.int64())), to_numpy(pc.cast(second, pa.int64()))
    except (pa.ArrowException, ValueError):  # a sign '+' (which Arrow's cast refuses), or beyond int64
        if any(pc.any(pc.starts_with(column, "+")).as_py() for column in (first, second)):
            return None  # valid for the Spark path, which reads it
        return _report_malformed(local)


def parquet_edge_table(path: str) -> Optional["pa.Table"]:
    """A local Parquet edge list (by extension or magic bytes: :func:`faq.io._common.format_of`) as an Arrow
    table whose first two columns are ``src`` and ``dst``, or None for any other path.

    The columns ``src`` and ``dst`` (GraphFrames' names) if present, else the first two columns, are the
    source and target ids; the other columns follow (a weight among them).

    Raises
    ------
    MalformedInputError
        A corrupt or truncated file, or one of fewer than two columns.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from faq.io._common import format_of

    local = local_file(path)
    if local is None or format_of(path) != "parquet":
        return None
    try:
        table = pq.read_table(local)
    except (OSError, pa.ArrowException) as exc:
        raise MalformedInputError(path=path, reason=f"the file is corrupt or truncated ({clip(str(exc), 200)}); "
                                                    "replace it with a complete copy") from None
    names = table.column_names
    if len(names) < 2:
        raise MalformedInputError(path=path, reason=f"a Parquet edge list has columns src and dst (or two columns: "
                                                    f"source, target); this one has {names}")
    first = ["src", "dst"] if {"src", "dst"} <= set(names) else names[:2]
    rest = [n for n in names if n not in first and n not in ("src", "dst")]  # no second src or dst
    return table.select([*first, *rest]).rename_columns(["src", "dst", *rest])


class _BadLines:
    """Arrow's ``invalid_row_handler`` (lines with another number of fields than the first): notes whether
    one of them is a line the Spark path rejects too -- one field (no separator at all, no comment), or
    first two fields split alike by both (see :func:`_surely_malformed`) of which one is no integer.

    Called only for such lines, so a regular file pays nothing; every such line still fails the read.
    """

    def __init__(self, delimiter: str) -> None:
        self.delimiter = delimiter
        self.seen = False

    def __call__(self, row) -> str:
        text = re.sub(TRIM_RE, "", row.text)
        plain = text and not text.startswith(COMMENT_PREFIXES)
        if plain and row.actual_columns < 2:
            self.seen = self.seen or not re.search(SEPARATOR_RE, text)
        elif plain and text == row.text:
            fields = text.split(self.delimiter)[:2]
            alike = all(f and not re.search(SEPARATOR_RE, f) for f in fields)
            self.seen = self.seen or (alike and any(_integer_problem(f) is not None for f in fields))
        return "error"


def _surely_malformed(first, second, first_is_int, second_is_int) -> bool:
    """Whether a row whose two fields Arrow split as the Spark path splits them holds a field that is no
    integer: then the Spark path rejects that line too (vectorised; run only when some field is no integer).

    Arrow splits at one separator character, the Spark path at runs of blanks and commas after trimming
    the line: they agree on a row whose two fields are non-empty and hold no blank or comma, and whose
    line is no comment.  Rows of other shapes (``1\t2 3`` in a tab-separated file) are left to Spark.
    """
    import pyarrow.compute as pc

    plain = r"^[^ \t\r\f\x0B,]+$"
    alike = pc.and_(pc.and_(pc.match_substring_regex(first, plain), pc.match_substring_regex(second, plain)),
                    pc.invert(pc.match_substring_regex(first, "^[#%]")))
    return bool(pc.any(pc.and_(alike, pc.invert(pc.and_(first_is_int, second_is_int)))).as_py())


def _report_malformed(local: str) -> None:
    """Raise the first malformed line of ``local`` (the error path: a Python scan up to that line); None
    when the scan finds none (the scans disagree: the Spark path decides)."""
    error = first_malformed_line(local)
    if error is not None:
        raise error
    return None


# --- the malformed-line checks: the Python twin of the Spark path's -----------------------------


def line_problem(line: str, weight_column: Optional[int] = None, value_type: str = "bigint",
                 counts: bool = False) -> Optional[str]:
    """Why a (trimmed, non-comment) data line is malformed, or None: the Python twin of the Spark checks.

    ``weight_column`` (1-based) and ``value_type`` (bigint, double or boolean) check the weight;
    ``counts``: the weight is a count (the counting semiring), never negative.

    >>> line_problem("1 2"), line_problem("1 1e12"), line_problem("9223372036854775808 1")
    (None, "node id '1e12' is not a 64-bit integer", "node id '9223372036854775808' is not a 64-bit integer \
(64-bit integers run from -9223372036854775808 to 9223372036854775807)")
    >>> line_problem("1 2 -5", 3, counts=True)
    "weight '-5' in column 3 is negative: the counting semiring holds counts (0, 1, 2, ...); read signed \
weights with semiring='integer'"
    """
    fields = re.split(SEPARATOR_RE, line)
    if len(fields) < 2:
        return f"expected at least 2 fields (source and target node ids), found {len(fields)}"
    for token in fields[:2]:
        problem = _integer_problem(token)
        if problem is not None:
            return f"node id {_quoted(token)} is not a 64-bit integer{problem}"
    if weight_column is None:
        return None
    if len(fields) < weight_column:
        return f"no weight in column {weight_column} (the line has {len(fields)} fields)"
    token = fields[weight_column - 1]
    if value_type == "bigint":
        problem = _integer_problem(token)
        if problem is not None:
            return f"weight {_quoted(token)} in column {weight_column} is not a 64-bit integer{problem}"
        if counts and int(token) < 0:
            return (f"weight {_quoted(token)} in column {weight_column} is negative: the counting semiring holds "
                    "counts (0, 1, 2, ...); read signed weights with semiring='integer'")
        return None
    if value_type == "double":
        ok, kind = bool(re.fullmatch(FLOAT_RE, token)), "number"
    else:
        ok = token.lower() in BOOL_WORDS or bool(re.fullmatch(FLOAT_RE, token))
        kind = "boolean (true/false) or number"
    return None if ok else f"weight {_quoted(token)} in column {weight_column} is not a {kind}"


def _quoted(token: str) -> str:
    """A field as a message quotes it: clipped, since a malformed line can be huge."""
    return clip(token, 40)


def _integer_problem(token: str) -> Optional[str]:
    """None for a 64-bit integer token; else what to add to "is not a 64-bit integer" ("" or its range)."""
    if re.fullmatch(r"[+-]?[0-9]+", token) is None:
        return ""
    digits = token.lstrip("+-").lstrip("0")
    if len(digits) > 19 or not INT64_MIN <= int(token) <= INT64_MAX:
        return f" (64-bit integers run from {INT64_MIN} to {INT64_MAX})"
    return None if re.fullmatch(INT_RE, token) else " (at most 19 digits)"


def open_text(path: str) -> IO[str]:
    """Open a local text file the way Hadoop's codecs pick it: by extension."""
    import bz2
    import gzip

    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def local_files(path: str) -> list[str]:
    """The data files Spark would read for a local path, glob or directory, in name order."""
    import glob

    from faq.io._common import local_path

    local = local_path(path)
    matches = sorted(glob.glob(local)) if glob.has_magic(local) else [local]
    files: list[str] = []
    for m in matches:
        if os.path.isdir(m):
            for root, dirs, names in os.walk(m):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                files += [os.path.join(root, n) for n in sorted(names) if not n.startswith((".", "_"))]
        else:
            files.append(m)
    return files


def first_malformed_line(path: str, weight_column: Optional[int] = None, value_type: str = "bigint",
                         counts: bool = False) -> Optional[MalformedInputError]:
    """The error naming the first malformed line of a local edge list (path, glob or directory), or None.

    The error path only: a Python scan, line by line, that stops at the first bad line
    (:func:`line_problem` decides, with the same options).
    """
    for file in local_files(path):
        with open_text(file) as handle:
            # Universal newlines split on \n, \r\n and \r, as Hadoop's line reader does.
            for number, raw in enumerate(handle, start=1):
                line = re.sub(TRIM_RE, "", raw.rstrip("\r\n"))
                if not line or line.startswith(COMMENT_PREFIXES):
                    continue
                problem = line_problem(line, weight_column, value_type, counts)
                if problem:
                    return MalformedInputError(path=file, line_number=number, line=raw.rstrip("\r\n"), reason=problem)
    return None


def _plain_integers(body, delimiter: str) -> bool:
    """Whether ``body`` holds only digits, ``-``, ``delimiter`` and line breaks, in lines of at most
    :data:`_PLAIN_LINE_MAX` bytes (so no field reaches 20 digits; INT_RE allows 19).

    Scanned :data:`_SCAN_BYTES` at a time: a copy of one piece, not of the file.

    >>> import pyarrow as pa
    >>> _plain_integers(pa.py_buffer(b"1 2\\n-3 4\\n"), " "), _plain_integers(pa.py_buffer(b"0x1 2\\n"), " ")
    (True, False)
    """
    view = memoryview(body)
    other = _PLAIN_BYTES + delimiter.encode()
    line_start = 0  # where the line being scanned began
    for low in range(0, len(view), _SCAN_BYTES):
        piece = view[low:low + _SCAN_BYTES]
        if bytes(piece).translate(None, delete=other):  # a byte of another kind
            return False
        breaks = np.flatnonzero(np.frombuffer(piece, dtype=np.uint8) == ord("\n")) + low
        if len(breaks):
            starts = np.concatenate(([line_start], breaks[:-1] + 1))
            if int((breaks - starts).max()) > _PLAIN_LINE_MAX:
                return False
            line_start = int(breaks[-1]) + 1
    return len(view) - line_start <= _PLAIN_LINE_MAX


def _first_data_line(data) -> Optional[tuple[int, str, int]]:
    """(byte offset, separator, fields) of the first data line; None when it is not of the regular shape.

    Comment and blank lines may come first (they are skipped here, in Python);
    the first data line must have one separator character between fields and
    no leading or trailing blanks, so that Arrow splits every line as the
    Spark path does -- or fails, and the Spark path takes over.
    """
    view = memoryview(data)
    if bytes(view[:3]) == _BOM:  # the Spark path reads a BOM as part of the first id: malformed
        return None
    offset = 0
    end = len(view)
    while offset < end:
        chunk = bytes(view[offset:offset + 4096])
        match = _LINE_BREAK.search(chunk)
        if match is None and offset + len(chunk) < end:
            return None  # a header line over 4 KiB: leave it to Spark
        line_end = match.start() if match else len(chunk)
        line = chunk[:line_end].decode("utf-8", errors="replace")
        stripped = line.strip(" \t\r\f\x0b")
        if stripped and not stripped.startswith(COMMENT_PREFIXES):
            separators = {c for c in line if c in _SEPARATORS}
            if len(separators) != 1 or stripped != line:
                return None
            delimiter = separators.pop()
            tokens = line.split(delimiter)
            if any(not t for t in tokens) or any(c in line for c in "\f\x0b\r"):
                return None
            return offset, delimiter, len(tokens)
        offset += match.end() if match else len(chunk)
    return end, " ", 2


# --- cleaning in numpy -------------------------------------------------------------------------


def without_self_loops(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges ``u -> v`` with ``u != v``."""
    keep = src != dst
    return src[keep], dst[keep]


def unique_pairs(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (src, dst) pairs, sorted.

    Ids spanning less than 2**32 are packed into one ``uint64`` key and sorted
    unless already in order (``np.sort`` and a run mask: ``np.unique`` measured
    15x slower on numpy 2.4 for 2M keys); wider ids are ordered with ``np.lexsort``.

    >>> [a.tolist() for a in unique_pairs(np.array([3, 1, 3, -5]), np.array([4, 2, 4, 9]))]
    [[-5, 1, 3], [9, 2, 4]]
    """
    if len(src) == 0:
        return src, dst
    low = min(int(src.min()), int(dst.min()))
    high = max(int(src.max()), int(dst.max()))
    if high - low < 2**32:
        base = np.int64(low)
        key = ((src - base).astype(np.uint64) << np.uint64(32)) | (dst - base).astype(np.uint64)
        if not (key[1:] >= key[:-1]).all():  # edge lists often come sorted: one pass, not a sort
            key.sort()
        key = key[_run_starts(key)]
        return (key >> np.uint64(32)).astype(np.int64) + base, (key & np.uint64(0xFFFFFFFF)).astype(np.int64) + base
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    first = np.ones(len(src), dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[first], dst[first]


def _run_starts(sorted_values: np.ndarray) -> np.ndarray:
    first = np.ones(len(sorted_values), dtype=bool)
    first[1:] = sorted_values[1:] != sorted_values[:-1]
    return first


def degree_orient(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The simple undirected graph, each edge from its endpoint of lower (degree, id): as
    :func:`faq.graphs.edges.degree_oriented`, in numpy.

    >>> [a.tolist() for a in degree_orient(np.array([1, 2, 1, 3, 2]), np.array([2, 1, 2, 3, 3]))]
    [[1, 3], [2, 2]]
    >>> [a.tolist() for a in degree_orient(np.array([1, 2, 10**12]), np.array([2, 10**12, 1]))]   # sparse ids
    [[1, 1, 2], [2, 1000000000000, 1000000000000]]
    """
    low, high = without_self_loops(np.minimum(src, dst), np.maximum(src, dst))
    u, v = unique_pairs(low, high)
    if len(u) == 0:
        return u, v
    if int(u.min()) >= 0 and int(v.max()) < 4 * len(u) + 1024:  # ids a count can index: no sort, no search
        degree = np.bincount(u, minlength=int(v.max()) + 1) + np.bincount(v, minlength=int(v.max()) + 1)
        du, dv = degree[u], degree[v]
    else:
        nodes = np.sort(np.concatenate([u, v]))
        starts = np.flatnonzero(_run_starts(nodes))
        ids = nodes[starts]
        degree = np.diff(np.append(starts, len(nodes)))
        du, dv = degree[np.searchsorted(ids, u)], degree[np.searchsorted(ids, v)]
    u_first = (du < dv) | ((du == dv) & (u < v))  # u < v always: ties go to the smaller id
    return np.where(u_first, u, v), np.where(u_first, v, u)


# --- to Spark ----------------------------------------------------------------------------------


def edges_dataframe(spark: "SparkSession", columns: Mapping[str, np.ndarray]) -> "DataFrame":
    """A DataFrame of ``bigint`` columns from numpy arrays of equal length.

    On a classic session whose master is local (``local[*]``, ``local-cluster``)
    the arrays are written to a Parquet file in a temporary directory of this
    process (removed at exit; the DataFrame reads it whenever it is evaluated)
    and read back: Spark's vectorised Parquet reader (:func:`faq.handback.spark_frame`,
    every size).  Elsewhere (Spark Connect, a cluster) the Arrow table goes through
    ``createDataFrame``.

    >>> from faq.spark import get_session
    >>> df = edges_dataframe(get_session(), {"src": np.array([1, 2]), "dst": np.array([2, 3])})
    >>> df.dtypes, sorted(map(tuple, df.collect()))
    ([('src', 'bigint'), ('dst', 'bigint')], [(1, 2), (2, 3)])
    """
    import pyarrow as pa

    from faq.handback import spark_frame

    table = pa.table({name: pa.array(np.asarray(values, dtype=np.int64)) for name, values in columns.items()})
    return spark_frame(spark, table, min_cells=0)
