"""A relation as the generic join's strategies read it: its :class:`Use`, and the Spark Columns around it.

:func:`faq.joins.generic.generic_join` turns each relation and indicator of
the bag into a :class:`Use` (its attributes sorted in the attribute order)
and hands the uses to the strategy the plan chose
(:mod:`faq.joins.broadcast`, :mod:`faq.joins.partitioned`,
:mod:`faq.joins.shuffle`).  What more than one strategy does with a use lives
here: its rows with keys renamed by position (:func:`normalised`), the
integer-key check of the numpy strategies (:func:`check_integral`), and the ⊗
of the values a task gathered, as Spark expressions (:func:`with_product`).

A layer of the generic join (the map is in :mod:`faq.joins.generic`), beneath
the strategies and beside the numpy kernel (:mod:`faq.joins.kernel`), which
never sees a DataFrame.  Spark is imported inside the functions: the tasks
import this module too, and need none of it.

Examples
--------
>>> index_groups([[0, 1], [2, 3]], kept=[0, 1, 3])
[[0, 1], [2]]
>>> index_groups(None, kept=[0, 2])
[[0], [1]]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from faq.errors import PlanError
from faq.joins.frame import VALUE_COLUMN, Frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring

__all__ = ["Use", "index_groups", "normalised", "non_null", "check_integral", "with_product", "product_of"]


@dataclass(frozen=True)
class Use:
    """One relation of the join: its attributes in attribute order; ``valued`` False for indicators."""

    frame: Frame
    attributes: tuple[str, ...]
    valued: bool


def index_groups(shared: Optional[Sequence[Sequence[int]]], kept: Sequence[int]) -> list[list[int]]:
    """``shared`` (positions among all relations and indicators) as groups of use indexes.

    ``kept`` are the positions that became uses (those with variables);
    None for ``shared`` gives every use an index of its own.
    """
    use_of = {k: i for i, k in enumerate(kept)}
    if shared is None:
        return [[i] for i in range(len(kept))]
    groups = [[use_of[k] for k in g if k in use_of] for g in shared]
    groups = [g for g in groups if g]
    if sorted(i for g in groups for i in g) != list(range(len(kept))):
        raise PlanError(reason=f"shared index groups {list(map(list, shared))} do not cover the join's "
                               f"{len(kept)} relations exactly once")
    return groups


def non_null(df: "DataFrame", columns: Sequence[str]) -> "DataFrame":
    """``df`` without the rows that have a null in one of ``columns`` (SQL text: one call into Spark)."""
    from faq.relation import sql_name

    return df.where(" AND ".join(f"{sql_name(c)} IS NOT NULL" for c in columns)) if columns else df


def normalised(use: Use) -> "DataFrame":
    """The use's rows with keys renamed by position in attribute order (``__k0``...)."""
    from faq.relation import sql_name

    names = [f"__k{i}" for i in range(len(use.attributes))] + ([VALUE_COLUMN] if use.valued else [])
    sources = [*use.attributes, *([VALUE_COLUMN] if use.valued else [])]
    return non_null(use.frame.df.selectExpr(*(f"{sql_name(a)} AS {sql_name(n)}" for a, n in zip(sources, names))),
                    names)


def check_integral(uses: Sequence[Use]) -> None:
    """The broadcast index encodes keys as int64: refuse other key types with a clear error."""
    from pyspark.sql.types import IntegralType

    for use in uses:
        schema = use.frame.relation.schema()  # held rows answer without Spark
        for a in use.attributes:
            if not isinstance(schema[a].dataType, IntegralType):
                raise PlanError(
                    reason=f"the broadcast strategy needs integer keys, but {a!r} has type "
                    f"{schema[a].dataType.simpleString()}; plan with the factors' key types "
                    "(evaluate does) or use the shuffle strategy"
                )


def with_product(df: "DataFrame", out: Sequence[str], gathered: Sequence[int], semiring: "Semiring") -> "DataFrame":
    """Listed bindings: ``out`` and the ⊗ of the gathered values ``__g<i>`` as :data:`VALUE_COLUMN`
    (:func:`product_of`)."""
    return product_of(df, out, [f"__g{i}" for i in gathered], semiring)


def product_of(df: "DataFrame", keep: Sequence[str], values: Sequence[str], semiring: "Semiring") -> "DataFrame":
    """``df``'s columns ``keep`` and the ⊗ of its columns ``values`` (the one when there are none) as
    :data:`VALUE_COLUMN`: SQL text for a built-in semiring (one call into Spark where Columns make dozens:
    :func:`faq.semirings.spark_backend.sql_forms`), else its Columns."""
    from pyspark.sql import functions as F

    from faq.relation import sql_name
    from faq.semirings.spark_backend import columns as spark_columns, sql_forms

    forms = sql_forms(semiring)
    if forms is not None:
        terms = [sql_name(v) for v in values]
        text = functools.reduce(forms.mul, terms) if terms else forms.one
        return df.selectExpr(*map(sql_name, keep), f"{text} AS {sql_name(VALUE_COLUMN)}")
    ops = spark_columns(semiring)
    product = functools.reduce(ops.mul, [F.col(v) for v in values]) if values else ops.one()
    return df.select(*keep, product.alias(VALUE_COLUMN))
