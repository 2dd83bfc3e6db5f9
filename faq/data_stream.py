"""A maintained answer's changes through the ``faq`` data source: ``option("changes", "true")``, batch or stream.

A state that keeps a change log (:func:`faq.keep_changes`, or a sink's
``option("keepChanges", N)``: :mod:`faq.incremental.change_log`) is read as its change
stream, the rows of each committed version's change -- the answer's columns,
``version`` and ``diff`` (:func:`~faq.incremental.change.change_stream`)::

    spark.read.format("faq").option("changes", "true").load(STATE)          # every version kept
    spark.read.format("faq").option("changes", "true")
         .option("startingVersion", 3).option("endingVersion", 5).load(STATE)
    spark.readStream.format("faq").option("changes", "true").load(STATE)    # as versions commit

``option("changes", "true")`` is needed for a stream too: Spark asks a
Python data source for its schema without saying whether a batch or a
stream reads it, and without ``changes`` the schema is the answer's
(:mod:`faq.data_source`); a stream without it is refused with that reason.

The stream's offsets are the state's versions (``{"version": v}``: changes up
to ``v`` read).  ``startingVersion`` is the first version whose change is
read: a number, ``"earliest"`` (the default: the oldest the log keeps, so a
state a sink made with its log from version 0 streams its whole history,
whose sum is the answer) or ``"latest"`` (versions committed after the
stream starts).  Each micro-batch reads the versions committed since the
last one, one partition a version, each read where Spark runs it from the
version's Parquet file (the path must be one the workers reach).  A version
the log no longer keeps when it is read (the retention moved past a stream
that fell behind) stops the query with a :class:`~faq.errors.StateDirectoryError`
saying which versions are kept: raise the retention, or restart from
``"earliest"``.

Examples
--------
>>> change_options({"path": "/tmp/s", "changes": "true", "startingVersion": "2"})
ChangeSpec(path='/tmp/s', first=2, last=None)
>>> wants_changes({"changes": "TRUE"}), wants_changes({})
(True, False)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Union

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from faq.errors import InvalidArgumentError, StateDirectoryError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["ChangeReader", "ChangeSpec", "ChangeStreamReader", "change_options", "change_schema", "wants_changes"]

#: The options of a read of changes.
OPTIONS = ("path", "changes", "startingversion", "endingversion")
STARTS = ("earliest", "latest")


@dataclass(frozen=True)
class ChangeSpec:
    """A read of changes: the state, the first version (a number, ``earliest``, ``latest``) and the last (None: now)."""

    path: str
    first: Union[int, str] = "earliest"
    last: Optional[int] = None


def wants_changes(options: Mapping[str, Any]) -> bool:
    """True when ``option("changes", ...)`` asks for the change stream."""
    value = {str(k).lower(): v for k, v in options.items()}.get("changes", "false")
    return str(value).strip().lower() in ("true", "1", "yes")


def change_options(options: Mapping[str, Any]) -> ChangeSpec:
    """The :class:`ChangeSpec` of a read's options, checked.

    Raises
    ------
    InvalidArgumentError
        No path, an unknown option, a version that is not a number (or
        ``earliest`` / ``latest`` for the first).
    """
    options = {str(k).lower(): v for k, v in options.items()}
    for key, value in options.items():
        if key not in OPTIONS:
            raise InvalidArgumentError(key, value, f"a read of changes takes the options {', '.join(OPTIONS)} "
                                                   "(the version option is for a read of the answer)")
    path = options.get("path")
    if not path:
        raise InvalidArgumentError("path", path, 'give the state directory: .load(STATE)')
    first = str(options.get("startingversion", "earliest")).strip().lower()
    last = options.get("endingversion")
    return ChangeSpec(str(path), first if first in STARTS else _version("startingVersion", first),
                      None if last is None else _version("endingVersion", last))


def _version(name: str, value: Any) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidArgumentError(name, value, "must be a version number (0 or more)"
                                   + (", 'earliest' or 'latest'" if name == "startingVersion" else ""))
    return number


def change_schema(path: str) -> str:
    """The change stream's schema (DDL): the answer's columns, ``version`` and ``diff``.

    Raises
    ------
    StateDirectoryError
        No state, or one that keeps no change log.
    """
    from faq.incremental.change_log import keeps_changes
    from faq.reopened import open_state

    target = open_state(path)
    try:
        if keeps_changes(path) is None:
            raise StateDirectoryError(path, "keeps no change log, so there are no changes to read: "
                                            "faq.keep_changes(path, retain=N) keeps the change of each next version "
                                            '(a sink: .option("keepChanges", N))')
        return _schema_of(target, path)
    finally:
        target.close()


def _schema_of(target: Any, path: str) -> str:
    """DDL of the change rows of ``target``: from its own types (query, motif), else from a kept file."""
    if target.KIND == "query":
        from faq.incremental.state import ANSWER

        types = target.state.key_types.get(ANSWER, {})
        keys = [f"`{v}` {types.get(v, 'bigint')}" for v in target.query.free]
        diff = target.state_semiring.value_type if target.semiring.counts else target.semiring.value_type
        return ", ".join([*keys, "`version` bigint", f"`diff` {diff}"])
    if target.KIND == "motif":
        return ", ".join([*(f"`{v}` bigint" for v in target.pattern.vertices), "`version` bigint", "`diff` bigint"])
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import from_arrow_schema

    from faq.incremental.change_log import CHANGES, kept_versions

    kept = kept_versions(path)
    if not kept:
        raise StateDirectoryError(path, f"holds a {target.KIND} state whose change rows take their columns from "
                                        "its first kept change, and none is kept yet: read once a version committed")
    schema = pq.read_schema(os.path.join(path, CHANGES, f"version-{kept[0]:010d}.parquet"))
    return ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in from_arrow_schema(schema).fields)


def _committed(path: str) -> int:
    from faq.incremental.store import Store

    return int(Store(path).manifest()["version"])


class _Version(InputPartition):
    """One partition of a read of changes: one version's file."""

    def __init__(self, path: str, version: int) -> None:
        super().__init__((path, version))
        self.path, self.version = path, version


def _read_version(partition: _Version, schema: "StructType") -> Iterator["pa.RecordBatch"]:
    from pyspark.sql.pandas.types import to_arrow_schema

    from faq.incremental.change_log import read_changes

    yield from read_changes(partition.path, partition.version, partition.version,
                            to_arrow_schema(schema)).to_batches()


class ChangeReader(DataSourceReader):
    """``spark.read.format("faq").option("changes", "true")``: the kept changes of a range of versions."""

    def __init__(self, spec: ChangeSpec, schema: "StructType") -> None:
        self.spec, self.schema = spec, schema

    def partitions(self) -> list[InputPartition]:
        """One partition a version, the range checked against what the log keeps (on the driver's side)."""
        from faq.incremental.change_log import kept_versions

        path, committed = self.spec.path, _committed(self.spec.path)
        kept = kept_versions(path, committed)
        first = self.spec.first
        if first == "earliest":
            first = kept[0] if kept else committed + 1
        elif first == "latest":
            first = committed + 1
        last = committed if self.spec.last is None else self.spec.last
        if last > committed:
            raise StateDirectoryError(path, f"has no version {last} yet: it is at version {committed}")
        held = set(kept)
        missing = [v for v in range(first, last + 1) if v not in held]
        if missing:
            what = f"versions {kept[0]} to {kept[-1]}" if kept else "no version"
            raise StateDirectoryError(path, f"the change of version {missing[0]} is not kept (the change log holds "
                                            f"{what})")
        return [_Version(path, v) for v in range(first, last + 1)]

    def read(self, partition: InputPartition) -> Iterator["pa.RecordBatch"]:
        return _read_version(partition, self.schema)


class ChangeStreamReader(DataSourceStreamReader):
    """``spark.readStream.format("faq").option("changes", "true")``: offsets are versions (module notes)."""

    def __init__(self, spec: ChangeSpec, schema: "StructType") -> None:
        self.spec, self.schema = spec, schema

    def initialOffset(self) -> dict:  # noqa: N802 (Spark's name)
        """Just before the first version read: the oldest kept (``earliest``), the next (``latest``), or given."""
        from faq.incremental.change_log import kept_versions

        first = self.spec.first
        committed = _committed(self.spec.path)
        if first == "earliest":
            kept = kept_versions(self.spec.path, committed)
            first = kept[0] if kept else committed + 1
        elif first == "latest":
            first = committed + 1
        return {"version": int(first) - 1}

    def latestOffset(self, start: dict, limit: Any) -> dict:  # noqa: N802
        """The state's committed version (every version since ``start`` is read in one micro-batch)."""
        return {"version": max(int(start["version"]), _committed(self.spec.path))}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [_Version(self.spec.path, v) for v in range(int(start["version"]) + 1, int(end["version"]) + 1)]

    def read(self, partition: InputPartition) -> Iterator["pa.RecordBatch"]:
        return _read_version(partition, self.schema)

    def commit(self, end: dict) -> None:
        """Nothing to release: the log's retention, not the reader, decides what is kept."""


# --- an earlier version: the answer now, its kept changes since undone ------------------------

#: Value types whose changes undo exactly (a double's sum of differences is not its earlier value, bit for bit).
EXACT_TYPES = ("bigint", "int", "smallint", "tinyint")


def undoable(target: Any, version: int) -> bool:
    """True when the answer of ``version`` (before the current one) is the current answer minus kept changes.

    That needs the change of every version after ``version`` kept, and
    changes that are *differences* in exact arithmetic: a maintained query
    in a ring with integer values (``counting``, ``integer``: its ``diff``
    is the signed change) or a tracked motif (the change of its count).
    """
    from faq.incremental.change_log import kept_versions

    if target.path is None or version >= target.version:
        return False
    if target.KIND == "query":
        from faq.incremental.modes import SIGNED

        if target.mode != SIGNED or target.semiring.value_type not in EXACT_TYPES:
            return False
    elif target.KIND != "motif":
        return False
    kept = set(kept_versions(target.path, target.version))
    return all(v in kept for v in range(version + 1, target.version + 1))


def answer_at(target: Any, table: "pa.Table", version: int) -> "pa.Table":
    """The answer of ``version``: ``table`` (the current answer of ``target``) minus the changes since.

    Only where :func:`undoable` says so.

    Examples
    --------
    >>> import tempfile, faq
    >>> from faq.incremental.change_log import keep_changes
    >>> from faq.data_source import answer_table
    >>> d = faq.maintain("deg(a) := e(a,b)", e=[(1, 2)], state=tempfile.mkdtemp() + "/d")
    >>> keep_changes(d.path, retain=5)
    >>> _ = d.apply(e=[(1, 3, 1), (2, 3, 1)]); _ = d.apply(e=[(1, 2, -1), (1, 3, -1)])
    >>> answer_table(d.path).to_pydict(), answer_table(d.path, version=1).to_pydict()
    ({'a': [2], 'value': [1]}, {'a': [1, 2], 'value': [2, 1]})
    >>> answer_table(d.path, version=0).to_pydict()
    {'a': [1], 'value': [1]}
    >>> d.close()
    """
    import pyarrow as pa

    from faq.incremental.change_log import read_changes

    changes = read_changes(target.path, version + 1, target.version).to_pandas()
    if target.KIND == "motif":
        count = int(table.column("count")[0].as_py()) - int(changes["diff"].sum())
        columns = {"count": [count], **({"triangles": [count // 6]} if "triangles" in table.column_names else {})}
        return pa.table(columns, schema=table.schema)
    keys, value = list(target.query.free), table.column_names[-1]
    now = table.to_pandas()
    if not keys:
        total = (int(now[value].sum()) if len(now) else 0) - int(changes["diff"].sum())
        return pa.table({value: [total] if total else []}, schema=table.schema)
    undone = now.set_index(keys)[value].sub(changes.groupby(keys)["diff"].sum(), fill_value=0)
    undone = undone[undone != 0].astype("int64").rename(value).reset_index().sort_values(keys, kind="stable")
    return pa.Table.from_pandas(undone[[*keys, value]], preserve_index=False).cast(table.schema)
