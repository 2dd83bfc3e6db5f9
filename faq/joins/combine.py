"""Partial aggregates combined per key by a semiring's numpy ⊕, a partition at a time, on Arrow batches.

Spark SQL adds arrays of doubles one row at a time; an array ring's partial
aggregates (the partitioned cells', a plan's tasks') are combined here
instead: hash-partitioned by their keys and each partition reduced in one
numpy pass (:func:`faq.joins.row_arithmetic.aggregate_rows`).
:func:`combine_batches`, the ``mapInArrow`` body, runs in Spark's Python
workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

from faq.joins.frame import VALUE_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring

__all__ = ["combined_in_arrow", "combine_batches"]


def combined_in_arrow(df: "DataFrame", keep: Sequence[str], semiring: "Semiring") -> Optional["DataFrame"]:
    """``df``'s rows ⊕-combined per ``keep`` key by ``semiring``'s numpy ⊕, partition by partition.

    The rows are hash-partitioned by ``keep`` (all into one partition when
    ``keep`` is empty) and each partition is combined at once
    (``mapInArrow``, :func:`faq.joins.row_arithmetic.aggregate_rows`): one
    numpy pass per partition, not a Python call per key, nor Spark SQL's
    row-at-a-time sums of arrays.  None when the semiring has no numpy form
    (the caller then groups in Spark SQL).  Keys must be integers or strings
    (what Arrow and numpy compare).
    """
    from faq.semirings.numpy_backend import numpy_ops
    from faq.spark import default_parallelism

    arrays = bool(semiring.structured)
    ops = numpy_ops(semiring, semiring, arrays=arrays) if arrays else numpy_ops(semiring)
    if ops is None:
        return None
    from faq.workers import ensure_workers

    ensure_workers(df.sparkSession)  # the partitions run faq's Python: check once that the workers can
    rows = df.select(*keep, VALUE_COLUMN)
    spread = rows.repartition(default_parallelism(df.sparkSession), *keep) if keep else rows.coalesce(1)
    return spread.mapInArrow(_partition_combiner(tuple(keep), semiring, ops), rows.schema)


def _partition_combiner(keep: tuple[str, ...], semiring: "Semiring", ops: Any) -> Any:
    """The ``mapInArrow`` body of :func:`combined_in_arrow`: a partition's batches in, its ⊕ per key out."""
    import pyarrow as pa

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from combine_batches(list(batches), keep, semiring, ops)

    run.__annotations__ = {"batches": Iterator[pa.RecordBatch], "return": Iterator[pa.RecordBatch]}
    return run


def combine_batches(batches: Sequence[Any], keep: Sequence[str], semiring: "Semiring", ops: Any) -> Iterator[Any]:
    """Arrow batches of ``keep`` and :data:`VALUE_COLUMN` ⊕-combined per key into one batch (no Spark).

    >>> import pyarrow as pa
    >>> from faq.semirings import MOMENTS
    >>> from faq.semirings.numpy_backend import numpy_ops
    >>> rows = pa.record_batch({"a": [1, 2, 1], "__v": [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0], [1.0, 1.0, 1.0]]})
    >>> [b.to_pydict() for b in combine_batches([rows], ("a",), MOMENTS, numpy_ops(MOMENTS, MOMENTS, arrays=True))]
    [{'a': [1, 2], '__v': [[2.0, 3.0, 5.0], [1.0, 3.0, 9.0]]}]
    """
    import numpy as np
    import pyarrow as pa

    from faq.arrow_arrays import arrow_from_numpy, spark_arrays, to_numpy
    from faq.joins.row_arithmetic import aggregate_rows
    from faq.semirings.numpy_backend import as_values

    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    keys = [to_numpy(table.column(k)) for k in keep]
    values = as_values(semiring, table.column(VALUE_COLUMN))
    keys, values = aggregate_rows(keys, values, ops)
    column = spark_arrays(values) if semiring.structured else arrow_from_numpy(np.asarray(values))
    yield pa.RecordBatch.from_arrays([*(pa.array(k) for k in keys), column], names=[*keep, VALUE_COLUMN])
