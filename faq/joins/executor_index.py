"""The broadcast strategy's index built on the executors: the driver never holds the relations.

On the driver path (:func:`faq.joins.broadcast.index_on_driver`) the driver
collects each relation (or takes the rows it read itself), builds the index
and ships it as one file per machine (:mod:`faq.joins.mapped`).  A driver
sized for planning, not data, cannot hold a large index, so here:

1. Spark writes each index group's rows (keys in attribute order, the value
   cast to the semiring's type) as Parquet under a directory the executors
   can read, observing on the way each group's rows and, for a valued
   relation, the least and greatest value.  The driver receives those few
   numbers, never a row.
2. From them the driver decides what the tasks emit exactly as a driver
   build would (:func:`faq.joins.task_aggregation.kernel_values` needs only each
   value array's minimum and maximum): which values are gathered, whether
   the tasks ⊕-aggregate, the output columns.
3. The first task on each executor reads the Parquet files (pyarrow), builds
   the same kernel :func:`~faq.joins.kernel.build_kernel` builds on the
   driver, writes it into Spark's files directory there and maps it; the
   executor's other Python workers wait on a lock and map that one file
   (:class:`~faq.joins.mapped.BuiltIndex`).  Every executor reads the same
   files, so every executor builds the same index.

The directory is the plan's (``spark.faq.indexDir``; on a ``local`` or
``local-cluster`` master, whose executors share the driver's file system,
the driver's scratch directory by default: see
:func:`faq.insideout.binding.session_environment`).  The files live until
the join's scope closes (they are read whenever the result is computed);
a directory given as a URI (``hdfs://``, ``s3://``) is not removed by faq,
nor one the driver cannot reach (a Spark Connect server's own disk).  The
index each executor built stays in its Spark files directory until the
session stops, as a shipped index does.

A layer of the generic join (the map is in :mod:`faq.joins.generic`):
:func:`faq.joins.broadcast.broadcast_join` calls :func:`index_on_executors`;
this module stands on the kernel (:mod:`faq.joins.kernel`, built from the
:class:`~faq.joins.kernel.KernelSpec` the driver's build also uses), its value
(:mod:`faq.joins.task_index`) and the uses' Spark helpers
(:mod:`faq.joins.uses`).

Examples
--------
>>> from faq.spark import get_session
>>> from faq.semirings import get_semiring
>>> rows = get_session().createDataFrame([(1, 2, 5), (1, 3, 7), (2, 3, 1)], "__k0 long, __k1 long, __v long")
>>> written = write_inputs([rows], [True], get_semiring("counting"), scratch_directory())
>>> written.rows, written.value_ranges[0].tolist()
((3,), [1, 7])
>>> keys, values = read_group(written.paths[0], 3, 2, True, get_semiring("counting"))
>>> sorted(zip(keys[0].tolist(), keys[1].tolist(), values.tolist()))
[(1, 2, 5), (1, 3, 7), (2, 3, 1)]
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from faq.errors import IndexDirectoryError, PlanError
from faq.scratch import scratch_directory
from faq.joins.kernel import KernelSpec
from faq.joins.compiled import for_tasks
from faq.joins.frame import VALUE_COLUMN
from faq.joins.task_aggregation import kernel_values
from faq.joins.task_index import TaskIndex, output_names
from faq.joins.uses import Use, normalised
from faq.semirings import Semiring
from faq.semirings.numpy_backend import NUMPY_DTYPES

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from faq.scope import Scope


@dataclass(frozen=True)
class WrittenInputs:
    """Each index group's rows as Parquet: where, how many, and [min, max] of its values (None: unvalued)."""

    root: str
    paths: tuple[str, ...]
    rows: tuple[int, ...]
    value_ranges: tuple[Optional[np.ndarray], ...]


def index_on_executors(uses: Sequence[Use], spec: KernelSpec, directory: str,
                       scope: Optional["Scope"] = None) -> TaskIndex:
    """The broadcast tasks' index, built on the executors from Parquet written under ``directory``.

    ``scope`` removes the files when it closes (None: they stay, in the
    driver's scratch directory until the interpreter exits).
    """
    from faq.joins.mapped import BuiltIndex
    from faq.workers import ensure_workers

    groups = spec.groups
    frames = [normalised(uses[g[0]]) for g in groups]
    ensure_workers(frames[0].sparkSession)  # the workers build the index in Python: check once that they can
    valued = [uses[g[0]].valued for g in groups]
    written = write_inputs(frames, valued, spec.semiring, directory)
    local = local_path(written.root)
    if scope is not None and local is not None:
        scope.callback(functools.partial(shutil.rmtree, local, ignore_errors=True))
    kept, ops, _, note = kernel_values(list(written.value_ranges), groups, spec.semiring, spec.aggregate, spec.ops)
    gathered = sorted(i for g, keep in zip(groups, kept) if keep for i in g)
    out, names = output_names(spec.aggregate if ops is not None else None, spec.variables, gathered)
    attributes = [u.attributes for u in uses]
    # Values all one (or of an unvalued relation) are not gathered: the builder does not read them.
    # Plain lists and the ops decided from the value ranges, for the tasks' pickle.
    shipped = replace(spec, groups=[list(g) for g in groups], order=list(spec.order),
                      variables=list(spec.variables), ops=ops)
    build = functools.partial(build_from_inputs, written.paths, written.rows, kept, attributes, shipped, names)
    rows = sum(written.rows)
    handle = BuiltIndex(f"faq-index-{uuid.uuid4().hex}.bin", build)
    where = "the driver's scratch directory" if directory == scratch_directory() else directory
    note = (f"broadcast index of {rows} rows, built on the executors from Parquet in {where} (one file per "
            f"machine, mapped by its workers)" + (f"; {note}" if note else ""))
    if ops is not None:
        note += "; compiled loop or numpy kernel: decided where the index is built"
    return TaskIndex(handle, None, rows, names, len(out), [] if ops is not None else gathered, ops is not None, note)


def write_inputs(frames: Sequence["DataFrame"], valued: Sequence[bool], semiring: Semiring,
                 directory: str) -> WrittenInputs:
    """Write each of ``frames`` (columns ``__k0``... and, if valued, the value) as Parquet under
    ``directory``; observe each one's rows and value range on the way."""
    from pyspark.sql import functions as F

    root = f"{directory.rstrip('/')}/faq-index-inputs-{uuid.uuid4().hex}"
    local = local_path(root)
    if local is not None:  # the driver sees a local directory: refuse one it cannot write before Spark tries
        try:
            os.makedirs(local)
        except OSError as error:
            raise IndexDirectoryError(path=directory, reason=f"{error.strerror or error}") from error
    paths, rows, ranges = [], [], []
    dtype = NUMPY_DTYPES[semiring.value_type]
    try:
        for k, (df, has_values) in enumerate(zip(frames, valued)):
            metrics = {"rows": F.count(F.lit(1))}
            if has_values:
                df = df.withColumn(VALUE_COLUMN, F.col(VALUE_COLUMN).cast(semiring.value_type))
                metrics.update(low=F.min(VALUE_COLUMN), high=F.max(VALUE_COLUMN))
            paths.append(f"{root}/group{k}")
            seen = _write_observed(df, metrics, paths[-1])
            rows.append(int(seen["rows"]))
            span = np.array([seen["low"], seen["high"]], dtype=dtype) if has_values and seen["rows"] else (
                np.zeros(0, dtype=dtype))
            ranges.append(span if has_values else None)
    except BaseException:
        if local is not None:  # leave nothing half-written
            shutil.rmtree(local, ignore_errors=True)
        raise
    return WrittenInputs(root, tuple(paths), tuple(rows), tuple(ranges))


def _write_observed(df: "DataFrame", metrics: dict[str, "Column"], path: str) -> dict[str, Any]:
    """Write ``df`` as Parquet to ``path`` and aggregate ``metrics`` over its rows.

    A classic session observes them during the write (one job); Spark
    Connect does not return a write's observed metrics, so they are
    aggregated over the written files (a second job).
    """
    from pyspark.sql import Observation

    from faq.spark import is_connect

    if is_connect(df.sparkSession):
        df.write.mode("error").parquet(path)
        row = df.sparkSession.read.parquet(path).agg(*[c.alias(n) for n, c in metrics.items()]).first()
        return {name: row[name] for name in metrics}
    observation = Observation()
    df.observe(observation, *[c.alias(n) for n, c in metrics.items()]).write.mode("error").parquet(path)
    return dict(observation.get)


def read_group(path: str, rows: int, arity: int, valued: bool,
               semiring: Semiring) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """One group's key columns (int64) and values (``valued``), read back from its Parquet files (in a task).

    A column at a time, so the builder holds one column's Arrow copy beside
    the numpy arrays, not the whole table's.
    """
    dtype = NUMPY_DTYPES[semiring.value_type]
    if rows == 0:  # Spark may write no data file for no rows
        return [np.zeros(0, dtype=np.int64) for _ in range(arity)], np.zeros(0, dtype=dtype) if valued else None
    import pyarrow.parquet as pq

    def column(name: str, kind: Any) -> np.ndarray:
        found = pq.read_table(path, columns=[name]).column(0).to_numpy().astype(kind, copy=False)
        if len(found) != rows:
            raise PlanError(reason=f"the index input {path} has {len(found)} rows, but {rows} were written: "
                                   "was it changed or removed while the join ran?")
        return found

    keys = [column(f"__k{j}", np.int64) for j in range(arity)]
    return keys, column(VALUE_COLUMN, dtype) if valued else None


def build_from_inputs(
    paths: Sequence[str],
    rows: Sequence[int],
    valued: Sequence[bool],
    attributes: Sequence[tuple[str, ...]],
    spec: KernelSpec,
    names: Sequence[str],
) -> Any:
    """The kernel a task runs, built from the written inputs (what :class:`~faq.joins.mapped.BuiltIndex` builds).

    ``valued`` says per group whether its values are read (the driver's
    :func:`~faq.joins.task_aggregation.kernel_values` decided which are gathered).
    """
    collected = [
        read_group(path, n, len(attributes[g[0]]), has_values, spec.semiring)
        for path, n, has_values, g in zip(paths, rows, valued, spec.groups)
    ]
    kernel, _, _ = spec.build(attributes, collected)
    if list(kernel.names) != list(names):  # the driver planned from the observed ranges: the same by construction
        raise PlanError(reason=f"the index built on an executor emits {kernel.names}, the driver expected "
                               f"{list(names)}")
    return for_tasks(kernel)


def local_path(path: str) -> Optional[str]:
    """``path`` as a path of this machine's file system (a ``file:`` URI's path), or None for another URI.

    >>> local_path("/tmp/x"), local_path("file:///tmp/x"), local_path("file:/tmp/x"), local_path("s3://b/x")
    ('/tmp/x', '/tmp/x', '/tmp/x', None)
    """
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", path)
    if scheme is None:
        return path
    if scheme.group().lower() != "file:":
        return None
    rest = path[len("file:"):]
    return "/" + rest.lstrip("/") if rest.startswith("//") else rest
