"""The relation form the executor works on: variable columns plus one value column.

Examples
--------
>>> from faq.joins.frame import Frame, VALUE_COLUMN
>>> VALUE_COLUMN
'__v'
>>> from faq.semirings import COUNTING
>>> Aggregation(("a",), COUNTING).keep
('a',)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring

# The value column of every frame. Query variables may not start with "__",
# so it never collides with a variable column.
VALUE_COLUMN = "__v"


@dataclass(frozen=True)
class Frame:
    """A DataFrame whose columns are ``variables`` (named as query variables) and :data:`VALUE_COLUMN`.

    ``note`` is a join's account of how it made the frame (strategy, index
    size, whether it aggregated inside its tasks); empty for inputs.
    """

    df: "DataFrame"
    variables: tuple[str, ...]
    note: str = ""
    #: Partial aggregates onto no variable: a row per task (more only where an int64 sum nears
    #: overflow and the task flushes early), few enough to ⊕ on the driver.
    task_partials: bool = False
    #: The rows are one per key of ``variables``, fully ⊕-combined (the partitioned strategy's cells
    #: when every split variable is kept): the caller's group-by would change nothing.
    combined: bool = False


@dataclass(frozen=True)
class Aggregation:
    """What happens to a bag join's product right after it: ⊕-aggregated onto ``keep``.

    The executor tells the bag join (:func:`faq.joins.join_bag`) so that a
    join able to aggregate while it enumerates may return *partial*
    aggregates instead of every binding: a Frame over ``keep`` (in that
    order) whose rows, ⊕-combined per key (``columns(semiring).sum``), give the
    ⊕ of the product over the other variables.  Several rows per key are
    allowed.  A join may ignore it and return the full product; the
    executor's group-by gives the same answer either way.

    Attributes
    ----------
    keep : tuple of str
        The variables that survive (the step's output variables); ``()`` for
        a scalar.
    semiring : Semiring
        Whose ⊕ aggregates the others away (the step's aggregate, which
        shares ⊗ with the query's semiring).
    """

    keep: tuple[str, ...]
    semiring: "Semiring"

    def combine(self, df: "DataFrame") -> "DataFrame":
        """``df``'s rows ⊕-combined per ``keep`` key: columns ``keep`` and :data:`VALUE_COLUMN`.

        A Spark group-by (one row when ``keep`` is empty) with the semiring's ⊕ as a Column expression;
        an array ring's rows are combined by its numpy ⊕ instead (:func:`combined_in_arrow`), since
        Spark SQL adds arrays of doubles one row at a time.
        """
        from pyspark.sql import functions as F

        from faq.semirings.spark_backend import columns

        if self.semiring.structured:
            combined = combined_in_arrow(df, self.keep, self.semiring)
            if combined is not None:
                return combined
        grouped = df.groupBy(*self.keep) if self.keep else df.groupBy()
        return grouped.agg(columns(self.semiring).sum(F.col(VALUE_COLUMN)).alias(VALUE_COLUMN))

    def combine_values(self, values: Sequence[Any], product: "Semiring") -> Optional[Any]:
        """The ⊕ of a few ``values`` (nulls skipped) on the driver, for ``keep`` empty; None when
        there is no exact numpy form (the caller then combines in Spark).

        Integer sums are exact Python sums, None past int64 (where Spark's sum would overflow).

        >>> from faq.semirings import COUNTING, get_semiring
        >>> Aggregation((), COUNTING).combine_values([3, None, 4], COUNTING)
        7
        >>> Aggregation((), get_semiring("min_plus")).combine_values([], get_semiring("min_plus"))
        inf
        >>> from faq.semirings import MOMENTS
        >>> Aggregation((), MOMENTS).combine_values([[1, 2, 4], [1, 3, 9]], MOMENTS)
        [2.0, 5.0, 13.0]
        """
        import numpy as np

        from faq.semirings.numpy_backend import numpy_ops

        arrays = bool(self.semiring.structured)
        ops = numpy_ops(product, self.semiring, arrays=arrays) if arrays else numpy_ops(product, self.semiring)
        if ops is None or self.keep:
            return None
        values = [v for v in values if v is not None]
        if arrays:  # an array ring's values: lists of its width, summed componentwise
            stacked = np.asarray(values, dtype=np.float64).reshape(-1, self.semiring.width)
            return ops.sum(stacked).tolist()
        if ops.add is np.add and np.dtype(ops.dtype).kind == "i":
            total = sum(int(v) for v in values)
            return total if -(2**63) <= total < 2**63 else None
        return ops.add.reduce(np.array(values, dtype=ops.dtype), initial=ops.zero).item()


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

    from faq.arrow_arrays import from_numpy, spark_arrays, to_numpy
    from faq.joins.row_arithmetic import aggregate_rows
    from faq.semirings.numpy_backend import as_values

    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    keys = [to_numpy(table.column(k)) for k in keep]
    values = as_values(semiring, table.column(VALUE_COLUMN))
    keys, values = aggregate_rows(keys, values, ops)
    column = spark_arrays(values) if semiring.structured else from_numpy(np.asarray(values))
    yield pa.RecordBatch.from_arrays([*(pa.array(k) for k in keys), column], names=[*keep, VALUE_COLUMN])
