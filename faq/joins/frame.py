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
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.relation import Relation

    from faq.semirings import Semiring

# The value column of every frame. Query variables may not start with "__",
# so it never collides with a variable column.
VALUE_COLUMN = "__v"


@dataclass(frozen=True, init=False)
class Frame:
    """Rows whose columns are ``variables`` (named as query variables) and :data:`VALUE_COLUMN`.

    The rows are a :class:`~faq.relation.Relation` (``relation``): a Spark
    DataFrame, or numpy columns the driver holds (an input factor's, an
    in-process step's output) whose DataFrame (:attr:`df`) is made only when
    a step on the executors reads it.  ``note`` is a join's account of how it
    made the frame (strategy, index size, whether it aggregated inside its
    tasks); empty for inputs.
    """

    relation: "Relation"
    variables: tuple[str, ...]
    note: str = ""
    #: Partial aggregates onto no variable: a row per task (more only where an int64 sum nears
    #: overflow and the task flushes early), few enough to ⊕ on the driver.
    task_partials: bool = False
    #: The rows are one per key of ``variables``, fully ⊕-combined (the partitioned strategy's cells
    #: when every split variable is kept): the caller's group-by would change nothing.
    combined: bool = False

    def __init__(self, df: Any = None, variables: Sequence[str] = (), note: str = "", task_partials: bool = False,
                 combined: bool = False, *, relation: "Relation | None" = None) -> None:
        from faq.relation import Relation

        variables = tuple(variables)
        if df is not None or relation is None:  # dataclasses.replace(frame, df=...) passes the old relation too
            relation = Relation.of(df, (*variables, VALUE_COLUMN))
        for attribute, given in (("relation", relation), ("variables", variables), ("note", note),
                                 ("task_partials", task_partials), ("combined", combined)):
            object.__setattr__(self, attribute, given)

    @property
    def df(self) -> "DataFrame":
        """The rows as a Spark DataFrame (held rows: made on the first call)."""
        return self.relation.frame

    @property
    def held(self) -> "Optional[Mapping[str, Any]]":
        """The driver's numpy columns of the rows (variables and :data:`VALUE_COLUMN`), or None."""
        return self.relation.arrays


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

        A Spark group-by (one row when ``keep`` is empty) with the semiring's ⊕ as a Column expression
        (an array ring's rows are better combined by its numpy ⊕: :func:`faq.joins.combine.combined_in_arrow`).
        """
        from pyspark.sql import functions as F

        from faq.relation import sql_name
        from faq.semirings.spark_backend import columns, sql_forms

        grouped = df.groupBy(*self.keep) if self.keep else df.groupBy()
        forms = sql_forms(self.semiring)
        if forms is not None:  # SQL text: a few calls into Spark where the Columns make dozens
            value = sql_name(VALUE_COLUMN)
            return grouped.agg(F.expr(f"{forms.sum(value)} AS {value}"))
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

