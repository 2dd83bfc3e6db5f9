"""A one-shot as-of join on the executors: both sides partitioned by key, the in-process join per partition.

Spark moves the data, our kernel computes (the one physical layer of issue
39): both sides go into one union -- each row as a struct of its side's
columns, beside its key columns and a side flag -- repartitioned by the
``by`` keys, so every row of a key lands in one partition; each task
(``mapInArrow``) splits its partition back into the two sides and runs
:func:`faq.asof.tables.asof_tables` on them, the same code the driver runs.
One shuffle, no Python per row, nothing collected.  Without keys every row
is in one partition (one task), as any as-of join without keys must order
all rows together.

Spark's own way, :func:`faq.asof.spark_window.asof_window` (a sort and a
running ``last``/``first`` window), does every direction but ``nearest``
without exact matches, and tolerance for numeric, date and timestamp times;
:mod:`faq.asof.oneshot` prices both (:mod:`faq.asof.costs`) and runs the
cheaper.  This path does every option, and ties as pandas does (the last
right row in the input's order among equal times -- within a partition,
Spark's order of arrival, which a shuffle does not fix: give right rows
distinct times per key where that matters; the window form breaks such ties
by right's values instead, the same every run).

Examples
--------
>>> from faq.spark import get_session
>>> spark = get_session()
>>> trades = spark.createDataFrame([(1, "a", 5), (4, "a", 7), (0, "b", 1)], ["time", "sym", "qty"])
>>> quotes = spark.createDataFrame([(1, "a", 10.0), (3, "a", 11.0), (2, "b", 20.0)], ["time", "sym", "px"])
>>> sorted(map(tuple, asof_on_spark(trades, quotes, "time", ["sym"], direction="nearest").collect()))
[(0, 'b', 1, 20.0), (1, 'a', 5, 10.0), (4, 'a', 7, 11.0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

from faq.asof.tables import check_arguments, result_names
from faq.relation import sql_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["asof_on_spark"]

_SIDE, _LEFT, _RIGHT = "__faq_asof_side", "__faq_asof_left", "__faq_asof_right"


def asof_on_spark(
    left: "DataFrame",
    right: "DataFrame",
    on: str,
    by: Sequence[str],
    *,
    direction: str = "backward",
    allow_exact_matches: bool = True,
    tolerance: Any = None,
    how: str = "left",
    suffixes: tuple[Optional[str], Optional[str]] = ("_x", "_y"),
    right_time: Optional[str] = None,
    partitions: Optional[int] = None,
) -> "DataFrame":
    """The as-of join of two Spark DataFrames, per key partition on the executors (module notes).

    Arguments as :func:`faq.asof.tables.asof_tables`; ``partitions`` (default
    the session's ``spark.sql.shuffle.partitions``) is the number of key
    partitions.  Returns a DataFrame (nothing runs until it is used).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    keys = list(by)
    check_arguments(left.columns, right.columns, on, keys, direction, how)
    left_names, right_values, right_names = result_names(left.columns, right.columns, on, keys, suffixes, right_time)
    left_fields = {f.name: f for f in left.schema.fields}
    right_fields = {f.name: f for f in right.schema.fields}
    out = [StructField(n, left_fields[c].dataType, True) for c, n in zip(left.columns, left_names)]
    out += [StructField(n, right_fields[c].dataType, True) for c, n in zip(right_values, right_names)]
    if right_time is not None:
        out.append(StructField(right_time, right_fields[on].dataType, True))
    schema = StructType(out)

    left_row = F.struct(*[F.col(sql_name(c)) for c in left.columns])
    right_row = F.struct(*[F.col(sql_name(c)) for c in right.columns])
    left_type = left.select(left_row.alias(_LEFT)).schema[_LEFT].dataType
    right_type = right.select(right_row.alias(_RIGHT)).schema[_RIGHT].dataType
    key_columns = [F.col(sql_name(k)).alias(f"__k{i}") for i, k in enumerate(keys)]
    union = left.select(*key_columns, F.lit(0).alias(_SIDE), left_row.alias(_LEFT),
                        F.lit(None).cast(right_type).alias(_RIGHT)).unionByName(
        right.select(*key_columns, F.lit(1).alias(_SIDE), F.lit(None).cast(left_type).alias(_LEFT),
                     right_row.alias(_RIGHT)))
    if keys:
        spread = union.repartition(partitions, *[f"__k{i}" for i in range(len(keys))]) if partitions else \
            union.repartition(*[f"__k{i}" for i in range(len(keys))])
    else:
        spread = union.repartition(1)
    options = dict(on=on, by=keys, direction=direction, allow_exact_matches=allow_exact_matches, tolerance=tolerance,
                   how=how, suffixes=suffixes, right_time=right_time)
    return spread.mapInArrow(_PartitionJoin(options, [f.name for f in schema.fields]), schema)


class _PartitionJoin:
    """The task: a partition's two sides out of the union, joined in-process (a picklable callable)."""

    def __init__(self, options: dict, names: list[str]) -> None:
        self.options, self.names = options, names

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        from faq.asof.tables import asof_tables

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        table = pa.Table.from_batches(batches)
        side = table.column(_SIDE)
        left = _side_table(table.filter(pc.equal(side, 0)).column(_LEFT))
        right = _side_table(table.filter(pc.equal(side, 1)).column(_RIGHT))
        if left.num_rows == 0:
            return
        joined = asof_tables(left, right, **self.options)
        yield from joined.rename_columns(self.names).to_batches()


def _side_table(column: Any) -> Any:
    """The struct column of one side as a table of its own columns."""
    import pyarrow as pa

    array = column.combine_chunks()
    return pa.Table.from_struct_array(array) if len(array) else pa.Table.from_batches(
        [], schema=pa.schema(list(array.type)))
