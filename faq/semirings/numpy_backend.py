"""A semiring's operations as numpy ufuncs, for work done in arrays.

Inside the broadcast generic join's tasks (:mod:`faq.joins.partial`), in the
resident indexes of maintained queries (:mod:`faq.incremental`) and in the
driver-side fixpoints (:mod:`faq.recursive.propagate`), values are numpy
arrays.  :func:`numpy_ops` derives their ⊗, ⊕ (a ufunc, so ``reduce``,
``reduceat`` and ``at`` ⊕-combine), dtype, zero and one from the
semiring's algebra.  Those paths are exact only where numpy computes what
the Spark forms (:mod:`faq.semirings.spark_backend`) compute:

=========  ======================  ==========
operation  ufunc                   value type
=========  ======================  ==========
PLUS       ``np.add``              int64, float64
TIMES      ``np.multiply``         int64, float64
MIN        ``np.fmin``             int64, float64
MAX        ``np.maximum``          int64, float64
OR         ``np.logical_or``       bool
AND        ``np.logical_and``      bool
NEGATE     ``np.negative``         int64, float64
=========  ======================  ==========

so, for the built-in semirings:

==============  ===================  ====================  =====================
semiring        ⊗                    ⊕ (as aggregate)      value dtype
==============  ===================  ====================  =====================
counting        ``np.multiply``      ``np.add``            int64
integer         ``np.multiply``      ``np.add``            int64
real            ``np.multiply``      ``np.add``            float64
boolean         ``np.logical_and``   ``np.logical_or``     bool
min_plus        ``np.add``           ``np.fmin``           float64
max_plus        ``np.add``           ``np.maximum``        float64
max_product     ``np.multiply``      ``np.maximum``        float64
max_min         ``np.fmin``          ``np.maximum``        float64
min_max         ``np.maximum``       ``np.fmin``           float64
==============  ===================  ====================  =====================

``fmin`` / ``maximum`` follow Spark's ordering, in which NaN is the largest
double (``min`` skips it, ``max`` returns it).

A user-defined operation has a numpy form only where its semiring declares
one (``Semiring(..., numpy_add=np.logaddexp, numpy_mul=np.add)``); without
it :func:`numpy_ops` returns None and those paths use Spark (or list rows)
instead.

Examples
--------
>>> import numpy as np
>>> from faq.semirings import COUNTING, MIN_PLUS, REAL, MAX_PRODUCT
>>> ops = numpy_ops(MIN_PLUS)
>>> ops.add.__name__, ops.mul.__name__, ops.zero.item(), ops.one.item(), ops.dtype.__name__
('fmin', 'add', inf, 0.0, 'float64')
>>> ops.add.reduce(np.array([3.0, np.nan, 1.0])).item()       # Spark's min skips NaN too
1.0
>>> numpy_ops(REAL, MAX_PRODUCT).name                           # ⊗ of real, ⊕ of max_product
'real/max_product'
>>> numpy_ops(REAL, MIN_PLUS) is None                            # ⊗ differs: not one query's
True
>>> numpy_ops(COUNTING).repeated_one(np.array([1, 3])).tolist()  # ⊕ of k ones
[1, 3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from faq.semirings.base import Semiring
from faq.semirings.operations import AND, MAX, MIN, NEGATE, OR, PLUS, TIMES

#: numpy dtype of each value type.
NUMPY_DTYPES = {"bigint": np.int64, "double": np.float64, "boolean": np.bool_}

_UFUNCS: dict[Any, np.ufunc] = {
    PLUS: np.add,
    TIMES: np.multiply,
    MIN: np.fmin,
    MAX: np.maximum,
    OR: np.logical_or,
    AND: np.logical_and,
    NEGATE: np.negative,
}


@dataclass(frozen=True)
class NumpyForm:
    """A semiring's ⊗ and an aggregate's ⊕ as numpy ufuncs, with dtype, zero and one.

    Attributes
    ----------
    name : str
        ``"<semiring>/<aggregate>"``.
    mul, add : numpy.ufunc
        ⊗ of the semiring, ⊕ of the aggregate.
    dtype : numpy dtype
    one, zero : numpy scalars
        ⊗'s identity, ⊕'s identity.
    counts : bool
        ⊕ is addition, so ``k`` copies of ``one`` sum to ``k · one``.
    idempotent : bool
        ⊕ is idempotent, so ``k`` copies of ``one`` give ``one``.
    neg : numpy.ufunc or None
        ⊖ of a ring.
    """

    name: str
    mul: np.ufunc
    add: np.ufunc
    dtype: Any
    one: Any
    zero: Any
    counts: bool
    idempotent: bool
    neg: Optional[np.ufunc] = None

    @property
    def integral(self) -> bool:
        return np.dtype(self.dtype).kind == "i"

    def repeated_one(self, sizes: np.ndarray) -> np.ndarray:
        """⊕ of ``k`` copies of ``one`` for each ``k`` (≥ 1) in ``sizes``: the value of ``k`` unvalued rows."""
        sizes = np.asarray(sizes, dtype=np.int64)
        if self.counts:
            return (sizes * self.one).astype(self.dtype, copy=False)
        if self.idempotent or len(sizes) == 0:
            return np.full(len(sizes), self.one, dtype=self.dtype)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        return self.add.reduceat(np.full(int(sizes.sum()), self.one, dtype=self.dtype), starts)


def ufunc(operation: Any) -> Optional[np.ufunc]:
    """The ufunc of a built-in operation, or a user-defined one's declared form (None without)."""
    form = _UFUNCS.get(operation)
    return form if form is not None else operation.numpy


def numpy_ops(semiring: Semiring, aggregate: Optional[Semiring] = None) -> Optional[NumpyForm]:
    """numpy ⊗ of ``semiring`` and ⊕ of ``aggregate`` (default: ``semiring``'s own).

    None when one of them has no numpy form, or when ``aggregate`` does not
    share ``semiring``'s ⊗ (they would not be aggregates of one query).
    """
    aggregate = semiring if aggregate is None else aggregate
    if not aggregate.shares_product_with(semiring):
        return None
    mul, add = ufunc(semiring.mul), ufunc(aggregate.add)
    if mul is None or add is None:
        return None
    neg = ufunc(semiring.neg) if semiring.neg is not None and aggregate is semiring else None
    dtype = NUMPY_DTYPES[semiring.value_type]
    return NumpyForm(
        name=f"{semiring.name}/{aggregate.name}",
        mul=mul,
        add=add,
        dtype=dtype,
        one=np.asarray(semiring.one, dtype=dtype)[()],
        zero=np.asarray(aggregate.zero, dtype=dtype)[()],
        counts=add is np.add,
        idempotent=aggregate.idempotent,
        neg=neg,
    )
