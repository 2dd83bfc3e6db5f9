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

**Array rings** (:class:`~faq.semirings.structured.ArraySemiring`: moments,
cofactor) have values of ``w`` doubles, held as ``(rows, w)`` float64 arrays.
Their form, :class:`ArrayNumpyForm`, is returned only to a caller that asks
with ``numpy_ops(ring, arrays=True)`` -- one that uses the shape-generic
methods below rather than 1-D ufunc idioms -- so every other caller gets None
and takes its Spark path, as for a semiring without a numpy form.  Both forms
answer the same generic calls, so a caller written against them runs scalar
semirings unchanged:

=============================  ===============================  ===============================
call                           scalar semiring (values ``(n,)``)  array ring (values ``(n, w)``)
=============================  ===============================  ===============================
``ops.mul(a, b)``              the ⊗ ufunc                       the bilinear terms, vectorised
``ops.add(a, b)``              the ⊕ ufunc                       ``np.add`` (componentwise)
``ops.neg(a)``                 ``np.negative`` (rings)           ``np.negative``
``ops.sum(values)``            ⊕ of all rows (zero if none)      the same, shape ``(w,)``
``ops.segment_sum(v, starts)``  ``add.reduceat(v, starts)``       ``np.add.reduceat(v, starts, axis=0)``
``ops.add_at(v, index, p)``    ``add.at(v, index, p)``           ``np.add.at`` on rows
``ops.is_zero(values)``        ``values == zero``                all components zero, shape ``(n,)``
``ops.ones(n)``, ``zeros(n)``  ``(n,)``                          ``(n, w)``
``ops.width``, ``value_shape``  ``1``, ``()``                     ``w``, ``(w,)``
=============================  ===============================  ===============================

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
>>> numpy_ops(MIN_PLUS).segment_sum(np.array([3.0, 1.0, 2.0]), np.array([0, 2])).tolist()
[1.0, 2.0]

An array ring, for a caller that asks for it:

>>> from faq.semirings import MOMENTS
>>> numpy_ops(MOMENTS) is None, type(numpy_ops(MOMENTS, arrays=True)).__name__
(True, 'ArrayNumpyForm')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from faq.semirings.base import Semiring
from faq.semirings.operations import AND, MAX, MIN, NEGATE, OR, PLUS, TIMES

if TYPE_CHECKING:
    from faq.semirings.structured import ArraySemiring, BilinearProduct

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

    @property
    def sums_products(self) -> bool:
        """⊗ is × and ⊕ is + over int64 or float64: what scipy's sparse products compute.

        >>> from faq.semirings import COUNTING, MIN_PLUS
        >>> numpy_ops(COUNTING).sums_products, numpy_ops(MIN_PLUS).sums_products
        (True, False)
        """
        return (self.mul is np.multiply and self.add is np.add
                and np.dtype(self.dtype) in (np.dtype(np.int64), np.dtype(np.float64)))

    def repeated_one(self, sizes: np.ndarray) -> np.ndarray:
        """⊕ of ``k`` copies of ``one`` for each ``k`` (≥ 1) in ``sizes``: the value of ``k`` unvalued rows."""
        sizes = np.asarray(sizes, dtype=np.int64)
        if self.counts:
            # (n,) sizes times a scalar one, or (n, 1) times an array ring's (w,) one.
            return (sizes.reshape(-1, *(1,) * len(self.value_shape)) * self.one).astype(self.dtype, copy=False)
        if self.idempotent or len(sizes) == 0:
            return self.full(len(sizes), self.one)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        return self.add.reduceat(self.full(int(sizes.sum()), self.one), starts)

    # --- shape-generic calls: the same on scalar semirings and array rings (see the module notes) ---

    @property
    def width(self) -> int:
        """Numbers per value: 1."""
        return 1

    @property
    def value_shape(self) -> tuple[int, ...]:
        """Shape of one value: ``()`` (an array ring's is ``(w,)``); values arrays are ``(n, *value_shape)``."""
        return ()

    def full(self, n: int, value: Any) -> np.ndarray:
        """``n`` copies of ``value``.

        >>> from faq.semirings import REAL
        >>> numpy_ops(REAL).full(2, 0.5).tolist()
        [0.5, 0.5]
        """
        return np.full((n, *self.value_shape), value, dtype=self.dtype)

    def ones(self, n: int) -> np.ndarray:
        """``n`` copies of ⊗'s identity.

        >>> from faq.semirings import COUNTING
        >>> numpy_ops(COUNTING).ones(3).tolist()
        [1, 1, 1]
        """
        return self.full(n, self.one)

    def zeros(self, n: int) -> np.ndarray:
        """``n`` copies of ⊕'s identity.

        >>> from faq.semirings import MIN_PLUS
        >>> numpy_ops(MIN_PLUS).zeros(2).tolist()
        [inf, inf]
        """
        return self.full(n, self.zero)

    def sum(self, values: np.ndarray) -> Any:
        """⊕ of all rows of ``values``: one value (zero when there are none).

        >>> from faq.semirings import MAX_PLUS
        >>> numpy_ops(MAX_PLUS).sum(np.array([1.0, 4.0])).item(), numpy_ops(MAX_PLUS).sum(np.array([])).item()
        (4.0, -inf)
        """
        values = np.asarray(values, dtype=self.dtype)
        return self.add.reduce(values, axis=0) if len(values) else self.zero.copy()

    def segment_sum(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """⊕ of each run of rows ``values[starts[i]:starts[i+1]]`` (the last to the end).

        ``starts`` is increasing, from 0, every run non-empty (rows sorted by
        group, ``starts`` their first rows): numpy's ``reduceat`` contract.

        >>> from faq.semirings import COUNTING
        >>> numpy_ops(COUNTING).segment_sum(np.array([1, 2, 3, 4]), np.array([0, 1])).tolist()
        [1, 9]
        """
        values = np.asarray(values, dtype=self.dtype)
        if len(starts) == 0:
            return np.empty((0, *self.value_shape), dtype=self.dtype)
        return self.add.reduceat(values, np.asarray(starts, dtype=np.intp), axis=0)

    def add_at(self, values: np.ndarray, index: np.ndarray, proposals: np.ndarray) -> None:
        """In place: ``values[index[i]] ⊕= proposals[i]`` for every ``i`` (repeated indices accumulate).

        >>> from faq.semirings import MIN_PLUS
        >>> v = np.array([5.0, 5.0])
        >>> numpy_ops(MIN_PLUS).add_at(v, np.array([1, 1]), np.array([3.0, 4.0])); v.tolist()
        [5.0, 3.0]
        """
        self.add.at(values, index, proposals)

    def is_zero(self, values: np.ndarray) -> np.ndarray:
        """One boolean per row: the value is ⊕'s identity (rows the engine drops).

        >>> from faq.semirings import INTEGER
        >>> numpy_ops(INTEGER).is_zero(np.array([0, 3])).tolist()
        [True, False]
        """
        values = np.asarray(values)
        return np.all(values == self.zero, axis=tuple(range(1, values.ndim)))


@dataclass(frozen=True, eq=False)
class ArrayNumpyForm(NumpyForm):
    """The numpy form of an array ring: values are ``(n, w)`` float64 arrays.

    ``add`` is ``np.add`` (⊕ is componentwise, so its ufunc methods work on
    rows: ``reduce``/``reduceat``/``at`` along axis 0), ``neg`` is
    ``np.negative`` and ``mul`` an :class:`ArrayProduct` (not a ufunc: it
    has no ``reduce``).  ``zero`` and ``one`` are read-only ``(w,)`` arrays.
    Get one with ``numpy_ops(ring, arrays=True)``.

    Examples
    --------
    >>> from faq.semirings import MOMENTS
    >>> ops = numpy_ops(MOMENTS, arrays=True)
    >>> a = MOMENTS.lift(0, np.array([1.0, 2.0, 3.0]))
    >>> ops.mul(a, ops.ones(3)).tolist() == a.tolist(), ops.width, ops.value_shape
    (True, 3, (3,))
    >>> ops.segment_sum(a, np.array([0, 2])).tolist()        # rows 0-1 and row 2
    [[2.0, 3.0, 5.0], [1.0, 3.0, 9.0]]
    >>> ops.is_zero(np.vstack([ops.zeros(1), a[:1], -ops.zeros(1)])).tolist()
    [True, False, True]
    >>> ops.repeated_one(np.array([2, 1])).tolist()
    [[2.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    """

    components: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        return len(self.components)

    @property
    def value_shape(self) -> tuple[int, ...]:
        return (len(self.components),)

    def segment_sum(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """⊕ of each run of rows ``values[starts[i]:starts[i+1]]``, as one sparse product.

        Same contract as :meth:`NumpyForm.segment_sum`.  A 0/1 matrix (runs ×
        rows, one 1 per row) times the ``(n, w)`` rows reads each row once;
        ``np.add.reduceat`` along axis 0 of such rows costs ~15 ns a number
        here, 6-12× the product at widths 20-50 (bench/bench_learning.py
        --dataset housing spent most of its lifting time in it).  A handful of
        rows keep ``reduceat`` (the matrix costs tens of µs to build).

        >>> from faq.semirings import cofactor
        >>> ops = numpy_ops(cofactor(2), arrays=True)
        >>> rows = np.arange(600.0).reshape(100, 6)
        >>> np.array_equal(ops.segment_sum(rows, np.array([0, 3, 50])), np.add.reduceat(rows, [0, 3, 50], axis=0))
        True
        """
        values = np.asarray(values, dtype=self.dtype)
        if len(starts) == 0 or values.ndim != 2 or len(values) < 32:
            return super().segment_sum(values, starts)
        from scipy import sparse

        n = len(values)
        bounds = np.append(np.asarray(starts, dtype=np.int64), n)
        runs = sparse.csr_matrix((np.ones(n), np.arange(n), bounds), shape=(len(bounds) - 1, n))
        return np.ascontiguousarray(runs @ values)

    def _key(self) -> tuple:
        return (self.name, self.components, self.mul, self.one.tobytes())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class ArrayProduct:
    """⊗ of an array ring on ``(n, w)`` arrays, from its :class:`~faq.semirings.structured.BilinearProduct`.

    Every term ``coef · a[:, left] · b[:, right]`` at once (one gather per
    side, one multiply), then a ``reduceat`` over each component's run of
    terms: a handful of numpy calls whatever the width, so small batches
    do not pay a Python loop per component.  Inputs broadcast (a ``(w,)``
    value against ``(n, w)`` rows).  Many rows (``MANY`` or more) take the
    same terms laid out term by term instead (:meth:`_many`), about twice
    as fast at cofactor widths.

    Examples
    --------
    >>> from faq.semirings import MOMENTS
    >>> ArrayProduct(MOMENTS.product)(np.array([[1.0, 2.0, 3.0]]), np.array([4.0, 5.0, 6.0])).tolist()
    [[4.0, 13.0, 38.0]]
    """

    def __init__(self, product: "BilinearProduct") -> None:
        self.product = product
        self.width = product.width
        self.left = np.asarray(product.left, dtype=np.intp)
        self.right = np.asarray(product.right, dtype=np.intp)
        self.coef = np.asarray(product.coef, dtype=np.float64)
        self.unit = bool(np.all(self.coef == 1.0))
        out = np.asarray(product.out, dtype=np.intp)
        # Terms are sorted by component: each component's terms are one run, starting at its first term.
        self.filled, self.starts = np.unique(out, return_index=True)
        self.dense = len(self.filled) == self.width
        self.out = out
        self._summing: Any = None  # (w, terms) sparse: coef where a term adds to a component; made on first use

    MANY = 64

    def _many(self, a2: np.ndarray, b2: np.ndarray) -> np.ndarray:
        """⊗ of ``(n, w)`` rows through ``(terms, n)`` arrays and one sparse product.

        Gathering whole rows of the transposed values is a copy per term,
        and the ``(w, terms)`` 0/coef matrix sums each component's terms in
        one pass; ``reduceat`` along axis 1 of ``(n, terms)`` rows and the
        column gathers it needs cost about twice as much (cofactor(8),
        153 terms, 1,000-10,000 rows).
        """
        if self._summing is None:
            from scipy import sparse

            self._summing = sparse.csr_matrix((self.coef, (self.out, np.arange(len(self.out)))),
                                              shape=(self.width, len(self.out)))
        terms = np.ascontiguousarray(a2.T)[self.left]
        terms *= np.ascontiguousarray(b2.T)[self.right]
        return np.ascontiguousarray((self._summing @ terms).T)

    def __call__(self, a: Any, b: Any) -> np.ndarray:
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        lead = a.shape[:-1]
        a2, b2 = a.reshape(-1, self.width), b.reshape(-1, self.width)
        if len(a2) == 0 or len(self.starts) == 0:
            return np.zeros((*lead, self.width))
        if len(a2) >= self.MANY:
            return self._many(a2, b2).reshape(*lead, self.width)
        terms = a2[:, self.left] * b2[:, self.right]
        if not self.unit:
            terms *= self.coef
        summed = np.add.reduceat(terms, self.starts, axis=1)
        if not self.dense:
            full = np.zeros((len(a2), self.width))
            full[:, self.filled] = summed
            summed = full
        return summed.reshape(*lead, self.width)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.product == other.product

    def __hash__(self) -> int:
        return hash(self.product)

    def __reduce__(self) -> tuple:
        return ArrayProduct, (self.product,)


def ufunc(operation: Any) -> Optional[np.ufunc]:
    """The ufunc of a built-in operation, or a user-defined one's declared form (None without)."""
    form = _UFUNCS.get(operation)
    return form if form is not None else operation.numpy


def numpy_ops(semiring: Semiring, aggregate: Optional[Semiring] = None, *, arrays: bool = False) -> Optional[NumpyForm]:
    """numpy ⊗ of ``semiring`` and ⊕ of ``aggregate`` (default: ``semiring``'s own).

    None when one of them has no numpy form, or when ``aggregate`` does not
    share ``semiring``'s ⊗ (they would not be aggregates of one query).  An
    array ring's form (:class:`ArrayNumpyForm`) only with ``arrays=True``:
    the caller says it uses the shape-generic calls (module notes), not 1-D
    idioms; without it an array ring has no numpy form, as before.
    """
    aggregate = semiring if aggregate is None else aggregate
    if not aggregate.shares_product_with(semiring):
        return None
    if semiring.structured or aggregate.structured:
        return array_ops(semiring) if arrays and aggregate is semiring else None
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


def as_values(semiring: Semiring, values: Any) -> np.ndarray:
    """``values`` as the numpy forms take them: ``(n,)`` of the value dtype, ``(n, w)`` float64 for an array ring.

    For a scalar semiring this is ``np.asarray(values, dtype=NUMPY_DTYPES[value_type])``.
    An array ring's values may come as an ``(n, w)`` array, a sequence of
    ``w``-long lists or tuples (as Spark rows hold them), an object array of
    them, or an Arrow list array (read without a Python loop).  Raises
    :class:`~faq.errors.FAQValueError` on a null value or one of another width.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from faq.semirings import MOMENTS, REAL
    >>> as_values(REAL, [1, 2]).tolist(), as_values(MOMENTS, [[1, 2, 4], (1, 3, 9)]).tolist()
    ([1.0, 2.0], [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]])
    >>> as_values(MOMENTS, pa.array([[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]])).shape
    (2, 3)
    >>> as_values(MOMENTS, []).shape
    (0, 3)
    """
    if not semiring.structured:
        return np.asarray(values, dtype=NUMPY_DTYPES[semiring.value_type])
    width = semiring.width
    if type(values).__module__.startswith("pyarrow"):
        if hasattr(values, "combine_chunks"):  # a ChunkedArray
            values = values.combine_chunks()
        lengths = np.asarray(values.value_lengths()) if hasattr(values, "value_lengths") else None
        if values.null_count or (lengths is not None and np.any(lengths != width)):
            found = f"an Arrow array with {values.null_count} null(s) or lists not {width} long"
            raise _bad_values(semiring, found)
        array = np.asarray(values.flatten(), dtype=np.float64)  # the list items, offsets and slicing applied
    else:
        raw = np.asarray(values) if isinstance(values, np.ndarray) else None
        if raw is not None and raw.dtype != object:
            array = raw.astype(np.float64, copy=False)
        else:
            items = list(values)
            if any(v is None for v in items):
                raise _bad_values(semiring, "a null value")
            try:
                array = np.array(items, dtype=np.float64)
            except ValueError:  # rows of different lengths
                raise _bad_values(semiring, "rows of different lengths") from None
            if not items:
                array = array.reshape(0, width)
    if array.ndim == 1 and array.size % width == 0 and type(values).__module__.startswith("pyarrow"):
        array = array.reshape(-1, width)
    if array.ndim != 2 or array.shape[1] != width:
        raise _bad_values(semiring, f"an array of shape {array.shape}")
    return array


def _bad_values(semiring: Semiring, found: str) -> Exception:
    from faq.errors import FAQValueError

    return FAQValueError(error_class="INVALID_ARRAY_VALUES", semiring=semiring.name, width=semiring.width, found=found)


@dataclass(frozen=True, eq=False)
class TupleNumpyForm(ArrayNumpyForm):
    """The numpy form of a :class:`~faq.semirings.tuples.TupleSemiring`: its own row functions.

    ``add`` and ``mul`` are :class:`~faq.semirings.tuples.RowUfunc` s (⊕ of a
    group: pairwise calls of the user's ⊕, never a sum), ``neg`` the user's ⊖.
    """

    def segment_sum(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """⊕ of each run of rows with the declared ⊕ (not the sparse sum of an array ring)."""
        return NumpyForm.segment_sum(self, values, starts)

    def _key(self) -> tuple:
        return (self.name, self.components, id(self.add), id(self.mul))


def array_ops(ring: "ArraySemiring") -> ArrayNumpyForm:
    """The numpy form of an array ring (``numpy_ops(ring, arrays=True)`` calls this).

    >>> from faq.semirings import cofactor
    >>> ops = array_ops(cofactor(2))
    >>> ops.one.tolist(), ops.dtype.__name__, ops.counts, ops.idempotent
    ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 'float64', True, False)
    """
    zero, one = np.array(ring.zero, dtype=np.float64), np.array(ring.one, dtype=np.float64)
    zero.flags.writeable = one.flags.writeable = False  # shared by every caller of the form
    if getattr(ring, "product", None) is None:  # a TupleSemiring: ⊕ and ⊗ as declared, on rows
        return TupleNumpyForm(name=f"{ring.name}/{ring.name}", mul=ring.mul.numpy, add=ring.add.numpy,
                              dtype=np.float64, one=one, zero=zero, counts=False, idempotent=ring.idempotent,
                              neg=None if ring.neg is None else ring.neg.numpy, components=ring.components)
    return ArrayNumpyForm(
        name=f"{ring.name}/{ring.name}",
        mul=ArrayProduct(ring.product),
        add=np.add,
        dtype=np.float64,
        one=one,
        zero=zero,
        counts=True,
        idempotent=False,
        neg=np.negative,
        components=ring.components,
    )
