"""The shuffle strategy of the generic join: DataFrames only, any key type, as in BiGJoin.

For each attribute in the order, count is a join of the prefixes with each
relation's per-key degree table, the proposer is picked by a Column
expression (``least`` / ``when``), propose is a join and validate a
semi-join (an inner join carrying ⊗ when the relation becomes fully bound):
the :class:`~faq.joins.extenders.FrameExtender` s of
:mod:`faq.joins.extenders`.  The counted prefixes of each attribute are
materialised (``localCheckpoint``) so branches share them and lineage stays
short.  Any key type; memory is Spark's (shuffles spill).  In batches
(:func:`shuffle_in_batches`) the seeds are hashed apart and each batch
materialised before the next, so one batch's intermediate tables are gone
before the next one's are made.

A strategy layer of the generic join (the map is in :mod:`faq.joins.generic`,
which calls these functions): above the uses' Spark helpers
(:mod:`faq.joins.uses`); no Python runs in Spark's workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from faq.errors import PlanError
from faq.joins.extenders import FrameBackend, FrameExtender, extend
from faq.joins.frame import VALUE_COLUMN, Aggregation, Frame
from faq.joins.uses import Use, non_null
from faq.semirings import Semiring

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from faq.scope import Scope

__all__ = ["shuffle_join", "shuffle_in_batches"]


def shuffle_join(
    spark: "SparkSession",
    uses: Sequence[Use],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    scope: Optional["Scope"] = None,
) -> "DataFrame":
    """The shuffle strategy: the product over ``variables`` and :data:`VALUE_COLUMN`, a DataFrame.

    ``scope`` owns each attribute's checkpointed prefixes (None: nothing is released).
    """
    from faq.semirings.spark_backend import columns as spark_columns

    prefix = spark.range(1).select(spark_columns(semiring).one().alias(VALUE_COLUMN))
    backend = FrameBackend(scope)
    for x in order:
        extenders = []
        for use in uses:
            if x not in use.attributes:
                continue
            at = use.attributes.index(x)
            last = at == len(use.attributes) - 1
            columns = list(use.attributes[: at + 1])
            if last and use.valued:
                relation = use.frame.df.select(*columns, VALUE_COLUMN)
            elif last:  # an indicator: de-duplicated already
                relation = use.frame.df.select(*columns)
            else:
                relation = use.frame.df.select(*columns).distinct()
            relation = non_null(relation, columns)
            counted = None if last else non_null(use.frame.df.select(*columns), columns)
            extenders.append(FrameExtender(relation, columns[:-1], x, last and use.valued, semiring, counted))
        (prefix,) = list(extend(prefix, extenders, backend))
    return prefix.select(*variables, VALUE_COLUMN)


def shuffle_in_batches(
    spark: "SparkSession",
    uses: Sequence[Use],
    order: Sequence[str],
    variables: Sequence[str],
    semiring: Semiring,
    scope: Optional["Scope"],
    batches: int,
    aggregate: Optional[Aggregation],
) -> tuple["DataFrame", tuple[str, ...], str]:
    """The shuffle strategy over the seeds in ``batches`` parts: (DataFrame, its variables, what it did).

    A seed (a value of the first attribute) goes to batch
    ``pmod(xxhash64(seed), batches)``, any key type; every use holding the
    first attribute keeps that batch's rows.  Each batch is checkpointed in
    ``scope`` (⊕-aggregated onto ``aggregate.keep`` first, when given), so
    its intermediate tables are gone before the next batch runs; the result
    is the union of the batches.
    """
    from pyspark.sql import functions as F

    if scope is None:
        raise PlanError(reason="the shuffle strategy in batches needs a scope to own each batch's checkpoint")
    first = order[0]
    out = tuple(aggregate.keep) if aggregate is not None else tuple(variables)
    done = None
    for batch in range(batches):
        in_batch = F.pmod(F.xxhash64(F.col(first)), F.lit(batches)) == batch
        part = [
            Use(Frame(u.frame.df.where(in_batch), u.frame.variables), u.attributes, u.valued)
            if first in u.attributes else u
            for u in uses
        ]
        product = shuffle_join(spark, part, order, variables, semiring, scope)
        if aggregate is not None:
            product = aggregate.combine(product)
        product = scope.checkpoint(product.select(*out, VALUE_COLUMN))
        done = product if done is None else done.unionByName(product)
    how = f"⊕ onto ({', '.join(out)}) per batch" if aggregate is not None else "every binding listed"
    return done, out, f"shuffle, seeds in {batches} batches by hash of {first}; {how}"
