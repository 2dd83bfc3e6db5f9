"""A Spark DataFrame that only scans local Parquet files: its files, their rows, and its rows read by pyarrow.

A user's data in Spark most often *is* ``spark.read.parquet(PATH)``, perhaps with
columns selected.  Fetching it to the driver through Spark (``toArrow``) costs a
job: 0.3 s warm and 2 s in a fresh session for wiki-Vote's 103,689 edges
(``bench/bench_triangles.py``), where pyarrow reads the same file in 0.04 s.  So a
fetch (:func:`faq.relation.collect_within`) asks :func:`read_scan` first, which
reads the files itself when, and only when, Spark would return exactly their
rows:

* the DataFrame's physical plan (``explain()``: planning, no job) is a bare
  ``FileScan parquet`` of the columns asked, perhaps picked in another order, perhaps
  beside constant numbers or booleans (the ``1 AS value`` a factor without values
  adds: made on the driver, not read) -- no filter, pushed filter, partition filter,
  computed column, join or limit (:func:`scan_columns`);
* every file is a local path the driver can open (:func:`local_files`, from
  ``inputFiles()``, no job);
* every column read is of a type whose values pyarrow and Spark read alike
  (integers, floating point, booleans, strings: :data:`PLAIN_TYPES`), the same
  type Spark reports, and the rows are within the limit (footers, :func:`file_rows`).

Anything else returns None and the fetch collects through Spark as before;
the check needs no JVM access of ours, so it runs on Spark Connect too
(where a server's files are read only if this process can open them).

Examples
--------
>>> scan_columns('''== Physical Plan ==
... *(1) ColumnarToRow
... +- FileScan parquet [src#0L,dst#1L] Batched: true, DataFilters: [], Format: Parquet, \
Location: InMemoryFileIndex(1 paths)[file:/d/e.parquet], PartitionFilters: [], PushedFilters: [], \
ReadSchema: struct<src:bigint,dst:bigint>
... ''')
{'src': None, 'dst': None}
>>> scan_columns('''== Physical Plan ==
... *(1) Filter (isnotnull(src#0L) AND (src#0L > 3))
... +- *(1) ColumnarToRow
...    +- FileScan parquet [src#0L,dst#1L] Batched: true, DataFilters: [isnotnull(src#0L)], Format: Parquet, \
Location: InMemoryFileIndex(1 paths)[file:/d/e.parquet], PartitionFilters: [], PushedFilters: [], \
ReadSchema: struct<src:bigint,dst:bigint>
... ''') is None
True
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Sequence

__all__ = ["PLAIN_TYPES", "scan_columns", "bare_scan", "scanned_constants", "read_scan", "file_rows", "local_files",
           "FileShares", "file_shares", "row_shares", "read_pieces"]

#: Spark SQL types whose Parquet values pyarrow reads as Spark does, with the Arrow type each must have.
PLAIN_TYPES = {"bigint": "int64", "int": "int32", "smallint": "int16", "tinyint": "int8", "double": "double",
               "float": "float", "boolean": "bool", "string": "string"}

#: The one line a bare scan's plan may have besides the scan (the vectorised reader's conversion to rows).
_TO_ROWS = re.compile(r"^(\*\(\d+\) )?ColumnarToRow$")
_SCAN = re.compile(r"^(\+- )?(\*\(\d+\) )?FileScan parquet (?:\S+ )?\[(?P<columns>[^\]]*)\] (?P<rest>.*)$")
_REORDER = re.compile(r"^(\*\(\d+\) )?Project \[(?P<columns>[^\]]*)\]$")
_ATTRIBUTE = re.compile(r"^(?P<name>\w+)#\d+L?$")  # a column as Spark prints it: name#id, L for a long
#: A constant column as Spark prints it: a number or boolean literal, named (what a factor without values adds).
_CONSTANT = re.compile(r"^(?P<literal>-?\d+(\.\d+)?(E-?\d+)?|-?Infinity|true|false) AS (?P<name>\w+)#\d+L?$")
_NOTHING_PUSHED = ("DataFilters: [],", "PartitionFilters: [],", "PushedFilters: [],")


def scan_columns(plan: str) -> Optional[dict[str, Optional[str]]]:
    """The columns a physical plan (``explain()``'s text) returns when it is a bare Parquet scan, else None:
    each column's name and, for a constant (Spark's text of a number or boolean, such as the ``1 AS value``
    of a factor without values), its literal; None for a column read from the files.

    >>> scan_columns("== Physical Plan ==\\n*(2) HashAggregate(keys=[], functions=[count(1)])\\n") is None
    True
    >>> scan_columns("*(1) Project [x#5, k#4L]\\n+- *(1) ColumnarToRow\\n   +- FileScan parquet [k#4L,x#5] "
    ...              "DataFilters: [], PartitionFilters: [], PushedFilters: [], ReadSchema: struct<k:bigint,x:double>")
    {'x': None, 'k': None}
    >>> scan_columns("*(1) Project [k#4L, 1.0 AS value#6]\\n+- *(1) ColumnarToRow\\n   +- FileScan parquet [k#4L] "
    ...              "DataFilters: [], PartitionFilters: [], PushedFilters: [], ReadSchema: struct<k:bigint>")
    {'k': None, 'value': '1.0'}
    >>> scan_columns("*(1) Project [(k#4L + 1) AS k#9L]\\n+- *(1) ColumnarToRow\\n   +- FileScan parquet [k#4L] "
    ...              "DataFilters: [], PartitionFilters: [], PushedFilters: [], ReadSchema: struct<k:bigint>") is None
    True
    """
    lines = [line.strip() for line in plan.splitlines() if line.strip() and not line.startswith("==")]
    order = _REORDER.match(lines[0]) if lines else None
    if order is not None:  # the columns picked from the scan as they are, or constants: nothing computed
        lines = [re.sub(r"^\+- ", "", line) for line in lines[1:]]
    if len(lines) == 2 and _TO_ROWS.match(lines[0]):
        lines = lines[1:]
    found = _SCAN.match(lines[0]) if len(lines) == 1 else None
    if found is None or not all(part in found["rest"] for part in _NOTHING_PUSHED):
        return None
    scanned = [name for name in found["columns"].split(",") if name]
    picked = [name.strip() for name in order["columns"].split(",")] if order is not None else scanned
    columns: dict[str, Optional[str]] = {}
    for name in picked:
        attribute, constant = _ATTRIBUTE.match(name), _CONSTANT.match(name)
        if attribute is not None and name in scanned:
            columns[attribute["name"]] = None
        elif constant is not None:
            columns[constant["name"]] = constant["literal"]
        else:
            return None
    return columns if len(columns) == len(picked) else None


#: ``explain`` prints; its text is caught by swapping ``sys.stdout``, which is one for the process: one
#: swap at a time (fetches run side by side in threads).  A line another thread prints meanwhile lands in
#: the plan's text, which then does not parse: the fetch goes through Spark, and that line is lost.
_EXPLAINING = threading.Lock()


def physical_plan(df: Any) -> str:
    """``df.explain()``'s text (the physical plan): planned by Spark, no job run; public API on classic and
    Connect sessions alike, which print it."""
    buffer = io.StringIO()
    with _EXPLAINING, contextlib.redirect_stdout(buffer):
        df.explain()
    return buffer.getvalue()


def bare_scan(df: Any, columns: Sequence[str], files: Optional[Sequence[str]] = None) -> bool:
    """Whether ``df``'s ``columns`` are a bare scan of local Parquet files of plain types, perhaps with
    constant columns (module notes), so that :func:`read_scan` reads them (within its limit); asked of
    Spark's plan, no job, nothing read.

    >>> bare_scan(type("Frame", (), {"inputFiles": lambda self: []})(), ["k"])   # no files
    False
    """
    return _scanned(df, columns, files) is not None


def scanned_constants(df: Any, columns: Sequence[str], files: Optional[Sequence[str]] = None) -> Optional[dict[str, Any]]:
    """:func:`bare_scan`'s finding, for a reader of the files of its own (:mod:`faq.recursive.edge_files`): each
    of ``columns`` with its constant value (None: read from the files), or None when ``df`` is no bare scan.

    >>> scanned_constants(type("Frame", (), {"inputFiles": lambda self: []})(), ["k"]) is None
    True
    """
    return _scanned(df, columns, files)


def _scanned(df: Any, columns: Sequence[str], files: Optional[Sequence[str]]) -> Optional[dict[str, Any]]:
    """:func:`bare_scan`'s finding: each column's constant value (None: read from the files), or None."""
    try:
        known = _BARE.setdefault(df, {})
    except TypeError:  # a frame that takes no weak reference: asked each time
        known = {}
    key = tuple(columns)
    if key not in known:
        files = local_files(df) if files is None else files
        types = dict(df.dtypes) if files and all(path.endswith(".parquet") for path in files) else {}
        found = (scan_columns(physical_plan(df.select(*columns)))
                 if all(types.get(c) in PLAIN_TYPES for c in columns) else None)
        constants = {c: _constant(literal, types[c]) for c, literal in (found or {}).items()}
        known[key] = (constants if found is not None and list(found) == list(columns)
                      and all(value is not _NOT_CONSTANT for value in constants.values()) else None)
    return known[key]


_NOT_CONSTANT = object()


def _constant(literal: Optional[str], spark_type: str) -> Any:
    """The value of a constant column of ``spark_type`` printed as ``literal`` (None: no constant, a column
    read from the files), or ``_NOT_CONSTANT`` when the text may mean another value (a string's literal is
    printed without quotes; only numbers and booleans are taken).

    >>> _constant("1", "bigint"), _constant("-Infinity", "double"), _constant("true", "boolean")
    (1, -inf, True)
    >>> _constant("1.5", "bigint") is _NOT_CONSTANT, _constant("1", "string") is _NOT_CONSTANT
    (True, True)
    """
    if literal is None:
        return None
    kind = PLAIN_TYPES[spark_type]
    if kind == "bool":
        return literal == "true" if literal in ("true", "false") else _NOT_CONSTANT
    if kind.startswith("int"):
        return int(literal) if literal.lstrip("-").isdigit() else _NOT_CONSTANT
    if kind in ("double", "float") and literal not in ("true", "false"):
        return float(literal)
    return _NOT_CONSTANT


#: What :func:`bare_scan` found, by frame and columns: pricing asks before the fetch asks again.  A
#: DataFrame's plan never changes (it is immutable); the entry goes with the frame.
_BARE: "weakref.WeakKeyDictionary[Any, dict[tuple, Optional[dict[str, Any]]]]" = weakref.WeakKeyDictionary()


def read_scan(df: Any, columns: Sequence[str], limit: int, files: Optional[Sequence[str]] = None,
              rows: Optional[int] = None) -> Optional[Any]:
    """``df``'s ``columns`` as an Arrow table read by pyarrow from its Parquet files, when ``df`` is a bare
    scan of local files of plain types holding at most ``limit`` rows (module notes); else None, and
    nothing read.  A constant column (a factor's ``1 AS value``) is made here, not read.  ``files`` and
    ``rows``: :func:`local_files` and :func:`file_rows` of ``df`` when the caller has asked already (the
    footers are read once).

    >>> read_scan(type("Frame", (), {"inputFiles": lambda self: []})(), ["k"], 10) is None   # no files
    True
    """
    files = local_files(df) if files is None else files
    rows = (file_rows(df, files) if files else None) if rows is None else rows
    constants = _scanned(df, columns, files) if rows is not None and rows <= limit else None
    if constants is None:
        return None
    types = dict(df.dtypes)  # the frame's schema, kept by pyspark once asked (bare_scan did)
    import pyarrow as pa
    import pyarrow.parquet as pq

    read = [c for c in columns if constants[c] is None]
    try:
        table = pq.read_table(files, columns=read)
    except (OSError, ValueError, pa.ArrowException):
        return None  # a file unreadable here, a column missing or named otherwise (Spark ignores case)
    if [str(t) for t in table.schema.types] != [PLAIN_TYPES[types[c]] for c in read] or table.num_rows > limit:
        return None
    if len(read) < len(columns):  # the constants beside the columns read, in the order asked
        import numpy as np

        n = table.num_rows if read else rows
        numpy_type = {"double": "float64", "float": "float32"}
        arrays = [table.column(c) if constants[c] is None else
                  pa.array(np.full(n, constants[c], dtype=numpy_type.get(PLAIN_TYPES[types[c]], PLAIN_TYPES[types[c]])))
                  for c in columns]
        return pa.table(arrays, names=list(columns))
    return table.replace_schema_metadata(None)


def file_rows(df: Any, files: Optional[Sequence[str]] = None) -> Optional[int]:
    """The rows in the local Parquet files ``df`` reads (or ``files``), from their footers (no Spark job);
    None when it reads anything else (or nothing: a frame made in memory).

    An upper bound on ``df``'s rows only where ``df`` is a scan of them, perhaps filtered: so
    :func:`faq.relation.collect_within` takes a count (one job, no rows moved) before collecting from a
    frame whose files hold more rows than its budget, instead of collecting ``limit + 1`` rows to learn it.

    >>> file_rows(type("Frame", (), {"inputFiles": lambda self: []})()) is None
    True
    """
    files = local_files(df) if files is None else files
    if not files or not all(path.endswith(".parquet") for path in files):
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.read_metadata(path).num_rows for path in files)
    except (OSError, ValueError):
        return None


def local_files(df: Any) -> Optional[list[str]]:
    """The local paths of the files ``df`` reads (``inputFiles``: no Spark job); None when it reads none
    (a frame made in memory), or a file that is not local.

    >>> local_files(type("Frame", (), {"inputFiles": lambda self: ["file:///data/a%20b.parquet"]})())
    ['/data/a b.parquet']
    """
    from urllib.parse import unquote, urlparse

    try:
        files = df.inputFiles()
    except Exception:  # noqa: BLE001 - a source that cannot list its files: no estimate
        return None
    paths = []
    for uri in files:
        parsed = urlparse(uri)
        if parsed.scheme not in ("", "file"):
            return None
        paths.append(unquote(parsed.path))
    return paths or None


#: A piece of a share of a scan's rows: (file's index, row group, first row, end row) in that group.
Piece = tuple[int, int, int, int]


def row_shares(groups: Sequence[Sequence[int]], n: int) -> tuple[tuple[Piece, ...], ...]:
    """Rows held by files of row groups (``groups``: per file, each group's rows) cut into ``n`` ranges of equal
    size (within one row), each as the pieces of row groups it covers: what one of ``n`` tasks reads.

    >>> row_shares([(2, 2, 1)], 2)     # 5 rows in two: 2 and 3 (pieces: file, row group, first row, end row)
    (((0, 0, 0, 2),), ((0, 1, 0, 2), (0, 2, 0, 1)))
    >>> row_shares([(2,), (2, 1)], 3)  # across files: row 0; rows 1-2; rows 3-4
    (((0, 0, 0, 1),), ((0, 0, 1, 2), (1, 0, 0, 1)), ((1, 0, 1, 2), (1, 1, 0, 1)))
    """
    total = sum(sum(rows) for rows in groups)
    bounds = [total * i // n for i in range(n + 1)]
    shares: list[list[Piece]] = [[] for _ in range(n)]
    start = 0  # the first row of the current group among all rows
    for f, rows in enumerate(groups):
        for g, count in enumerate(rows):
            for i in range(n):
                lo, hi = max(bounds[i], start), min(bounds[i + 1], start + count)
                if lo < hi:
                    shares[i].append((f, g, lo - start, hi - start))
            start += count
    return tuple(tuple(s) for s in shares)


def read_pieces(files: Sequence[str], share: Sequence[Piece], columns: Sequence[str]) -> Any:
    """The rows of one share (:func:`row_shares`) of ``files``, ``columns`` only, as one Arrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    opened: dict[int, Any] = {}
    tables = []
    for f, g, lo, hi in share:
        if f not in opened:
            opened[f] = pq.ParquetFile(files[f])
        tables.append(opened[f].read_row_group(g, columns=list(columns)).slice(lo, hi - lo))
    if not tables:  # an empty share: the columns with no row
        tables.append(pq.read_schema(files[0]).empty_table().select(list(columns)))
    return pa.concat_tables(tables)


@dataclass(frozen=True)
class FileShares:
    """A bare scan's local Parquet files read by tasks of their own, each an equal share of the rows, rather
    than through Spark (its rows converted into Arrow batches for the Python workers): picklable.

    Made by :func:`file_shares`; the columns are read as Spark would read them (:data:`PLAIN_TYPES`).
    """

    files: tuple[str, ...]
    columns: tuple[str, ...]
    groups: tuple[tuple[int, ...], ...]  # per file, each row group's rows (the footers)

    @property
    def rows(self) -> int:
        return sum(sum(rows) for rows in self.groups)

    def read_share(self, share: int, shares: int) -> Any:
        """Share ``share`` of ``shares`` (:func:`row_shares`) as one Arrow table of :attr:`columns`."""
        return read_pieces(self.files, row_shares(self.groups, shares)[share], self.columns)


def file_shares(df: Any, columns: Sequence[str]) -> Optional[FileShares]:
    """:class:`FileShares` of ``df``'s ``columns`` when ``df`` is a bare scan of local Parquet files of plain
    types reading every one of them (no constant column); else None (the rows go through Spark).  Asks Spark
    for the plan and the files (no job) and reads the footers.

    >>> file_shares(type("Frame", (), {"inputFiles": lambda self: []})(), ["k"]) is None   # no files
    True
    """
    import pyarrow.parquet as pq

    files = local_files(df)
    constants = _scanned(df, columns, files) if files else None
    if constants is None or any(value is not None for value in constants.values()):
        return None
    types = dict(df.dtypes)
    groups = []
    try:
        for path in files:
            meta = pq.read_metadata(path)
            schema = meta.schema.to_arrow_schema()
            if any(schema.get_field_index(c) < 0 or str(schema.field(c).type) != PLAIN_TYPES[types[c]]
                   for c in columns):
                return None  # a column missing from a file (a partition column), or of another type
            groups.append(tuple(meta.row_group(g).num_rows for g in range(meta.num_row_groups)))
    except (OSError, ValueError, KeyError):
        return None
    return FileShares(tuple(files), tuple(columns), tuple(groups))
