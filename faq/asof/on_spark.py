"""A one-shot as-of join on the executors: both sides partitioned by key, the in-process join per partition.

Spark moves the data, our kernel computes (the one physical layer of issue
39): both sides go into one union of flat columns -- a side flag, left's
columns, then right's, each side's null on the other's rows --
repartitioned by the ``by`` keys (left's key on a left row, right's on a
right row), so every row of a key lands in one partition; each task
(``mapInArrow``) splits its partition back into the two sides and runs
:func:`faq.asof.tables.asof_tables` on them, the same code the driver runs.
One shuffle, no Python per row, nothing collected.  Without keys every row
is in one partition (one task), as any as-of join without keys must order
all rows together.

Why flat columns: what the tasks cost is mostly the crossing of the
partitions into the Python workers and back, and a struct column a row
crosses slower than plain ones.  An empty task over the union of 1M × 1M
rows (3 columns a side, ``local[2]``, scratch, three warm runs): 4.6-5.2 s
with a struct a side, 3.0-3.4 s flat; the shuffle alone 0.8-1.1 s flat.

A limit, plainly: a task holds its partition whole in the Python worker
(both sides' rows of its keys, then the joined rows), so a key holding most
of the rows makes one task hold most of the join, where Spark's window sorts
it spilling to disk.  The price (:mod:`faq.asof.costs`) does not know how
the keys are skewed: for such data, refuse this way by asking for Spark's
window (:func:`faq.asof.spark_window.asof_window`) directly.

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

from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Optional, Sequence

from faq.asof.tables import check_arguments, result_names
from faq.relation import sql_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["asof_on_spark"]

_SIDE = "__faq_asof_side"


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

    sides = _FlatSides(list(left.columns), list(right.columns))
    union = left.select(F.lit(0).alias(_SIDE), *sides.flat("left"), *sides.nulls(right_fields, "right")) \
        .unionByName(right.select(F.lit(1).alias(_SIDE), *sides.nulls(left_fields, "left"), *sides.flat("right")))
    if keys:
        # The key of each row's own side (the other side's is null there): a key's rows meet in one partition.
        spread_by = [F.coalesce(F.col(sides.left_name(k)), F.col(sides.right_name(k))) for k in keys]
        spread = union.repartition(partitions, *spread_by) if partitions else union.repartition(*spread_by)
    else:
        spread = union.repartition(1)
    options = dict(on=on, by=keys, direction=direction, allow_exact_matches=allow_exact_matches, tolerance=tolerance,
                   how=how, suffixes=suffixes, right_time=right_time)
    return spread.mapInArrow(_PartitionJoin(options, [f.name for f in schema.fields], sides), schema)


class _FlatSides(NamedTuple):
    """Where each side's columns sit in the flat union: left's column ``i`` as ``__faq_asof_l<i>``, right's
    column ``j`` as ``__faq_asof_r<j>`` (positions, so any names -- the two sides' alike -- are kept apart).

    >>> sides = _FlatSides(["time", "sym", "qty"], ["time", "sym", "px"])
    >>> sides.left_name("sym"), sides.right_name("px")
    ('__faq_asof_l1', '__faq_asof_r2')
    """

    left: list[str]
    right: list[str]

    def left_name(self, column: str) -> str:
        return f"__faq_asof_l{self.left.index(column)}"

    def right_name(self, column: str) -> str:
        return f"__faq_asof_r{self.right.index(column)}"

    def _of(self, side: str) -> tuple[list[str], Any]:
        return (self.left, self.left_name) if side == "left" else (self.right, self.right_name)

    def flat(self, side: str) -> list:
        """``side``'s columns under their places' names (on its own rows)."""
        from pyspark.sql import functions as F

        names, name_of = self._of(side)
        return [F.col(sql_name(c)).alias(name_of(c)) for c in names]

    def nulls(self, fields: dict, side: str) -> list:
        """``side``'s columns as typed nulls (on the other side's rows)."""
        from pyspark.sql import functions as F

        names, name_of = self._of(side)
        return [F.lit(None).cast(fields[c].dataType).alias(name_of(c)) for c in names]

    def split(self, table: Any) -> tuple[Any, Any]:
        """A partition's Arrow table as the two sides' tables, each with its own column names."""
        import pyarrow.compute as pc

        side = table.column(_SIDE)
        left = table.filter(pc.equal(side, 0)).select([self.left_name(c) for c in self.left])
        right = table.filter(pc.equal(side, 1)).select([self.right_name(c) for c in self.right])
        return left.rename_columns(self.left), right.rename_columns(self.right)


class _PartitionJoin:
    """The task: a partition's two sides out of the union, joined in-process (a picklable callable)."""

    def __init__(self, options: dict, names: list[str], sides: _FlatSides) -> None:
        self.options, self.names, self.sides = options, names, sides

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from faq.asof.tables import asof_tables

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        left, right = self.sides.split(pa.Table.from_batches(batches))
        if left.num_rows == 0:
            return
        joined = asof_tables(left, right, **self.options)
        yield from joined.rename_columns(self.names).to_batches()
