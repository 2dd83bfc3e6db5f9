"""The built-in array rings: :data:`MOMENTS` and :func:`cofactor` (the degree-2 cofactor ring of F-IVM).

The cofactor ring over ``m`` features has elements ``(c, s, Q)``: a count
``c``, a vector ``s ∈ ℝ^m`` of sums and a matrix ``Q ∈ ℝ^{m×m}`` of sums of
products, with ⊕ componentwise and

    (c1, s1, Q1) ⊗ (c2, s2, Q2) = (c1c2, c2s1 + c1s2, c2Q1 + c1Q2 + s1s2ᵀ + s2s1ᵀ),

zero ``(0, 0, 0)``, one ``(1, 0, 0)``, ``−(c, s, Q) = (−c, −s, −Q)``.  A value
``x`` of feature ``j`` lifts to ``(1, x·e_j, x²·e_je_jᵀ)``.  Lifting each
feature once, in the factor that holds it, and ⊕-aggregating the ⊗ of the
lifts over a join gives ``(|join|, Σx, Σxxᵀ)`` -- what least squares needs --
without listing the join (Nikolic & Olteanu, SIGMOD 2018).

Why it is a ring: it is the truncated polynomial ring ℝ[ε_1..ε_m]/(ε)³ in
disguise -- ``(c, s, Q)`` stands for ``c + sᵀε + ½ εᵀQε`` -- so ⊗ is
associative, commutative and distributes over +; ``(1, x e_j, x² e_je_jᵀ)``
is ``exp(x ε_j)`` truncated, so the ⊗ of the lifts of a row is
``(1, v, vvᵀ)``.

``Q`` is symmetric (each summand of ⊗ and every lift keeps it so), so it is
stored as its upper triangle, row by row: ``w = 1 + m + m(m+1)/2`` doubles
per value instead of ``1 + m + m²``.  That is nearly half of every shuffle,
index and aggregate for many features, and ⊗ computes each off-diagonal sum
of products once instead of twice.  :meth:`CofactorRing.unpack` restores
the full matrix.

(count, sum, sum of squares) of one value is the case ``m = 1``:
:data:`MOMENTS`, whose components are named ``count``, ``sum``, ``sum_sq``.

Examples
--------
>>> import numpy as np
>>> from faq.semirings import MOMENTS, cofactor
>>> from faq.semirings.numpy_backend import numpy_ops
>>> ops = numpy_ops(MOMENTS, arrays=True)
>>> rows = MOMENTS.lift(0, [1.0, 2.0, 3.0])          # (1, x, x²) per value
>>> ops.sum(rows).tolist()                            # count 3, sum 6, sum of squares 14
[3.0, 6.0, 14.0]
>>> ring = cofactor(2)
>>> ring.width, ring.components
(6, ('count', 's[0]', 's[1]', 'Q[0,0]', 'Q[0,1]', 'Q[1,1]'))
>>> x = np.array([[1.0, 2.0], [3.0, 5.0]])            # two rows of two features
>>> ops = numpy_ops(ring, arrays=True)
>>> c, s, Q = ring.unpack(ops.sum(ops.mul(ring.lift(0, x[:, 0]), ring.lift(1, x[:, 1]))))
>>> c, s.tolist(), Q.tolist()                         # (n, Σx, XᵀX)
(2.0, [4.0, 7.0], [[10.0, 17.0], [17.0, 29.0]])
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Optional, Sequence

import numpy as np

from faq.errors import FAQValueError, InvalidArgumentError
from faq.semirings.structured import ArraySemiring


class CofactorProduct:
    """⊗ of the cofactor ring over ``m`` features, as a formula on components (upper-triangle ``Q``).

    A class rather than a closure so that the ring pickles.

    Examples
    --------
    >>> CofactorProduct(1)((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    [4.0, 13.0, 38.0]
    """

    def __init__(self, features: int) -> None:
        self.features = features
        self.pairs = list(zip(*(ix.tolist() for ix in np.triu_indices(features))))

    def __call__(self, a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        m = self.features
        c1, s1, q1 = a[0], a[1:1 + m], a[1 + m:]
        c2, s2, q2 = b[0], b[1:1 + m], b[1 + m:]
        return (
            [c1 * c2]
            + [c2 * s1[i] + c1 * s2[i] for i in range(m)]
            + [c2 * q1[k] + c1 * q2[k] + s1[i] * s2[j] + s2[i] * s1[j] for k, (i, j) in enumerate(self.pairs)]
        )


class CofactorLift:
    """The lift of the cofactor ring: feature ``j`` with value ``x`` -> ``(1, x·e_j, x²·e_je_jᵀ)``.

    Examples
    --------
    >>> CofactorLift(2)(1, 3.0)
    [1.0, 0.0, 3.0, 0.0, 0.0, 9.0]
    """

    def __init__(self, features: int) -> None:
        self.features = features

    def __call__(self, feature: int, x: Any) -> list[Any]:
        m = self.features
        parts: list[Any] = [1.0] + [0.0] * (m + m * (m + 1) // 2)
        parts[1 + feature] = x
        parts[1 + m + _triangle_index(m, feature, feature)] = x * x
        return parts


class CofactorRing(ArraySemiring):
    """The degree-2 cofactor ring over ``m`` features; get one with :func:`cofactor` (or :data:`MOMENTS`).

    Parameters
    ----------
    features : int
        ``m`` ≥ 1.
    name : str, optional
        Default ``"cofactor(m)"``.
    components : sequence of str, optional
        Default ``count``, ``s[j]``, ``Q[i,j]`` (``i ≤ j``).
    description : str, optional
    """

    def __init__(self, features: int, name: Optional[str] = None, components: Optional[Sequence[str]] = None,
                 description: str = "") -> None:
        if isinstance(features, bool) or not isinstance(features, numbers.Integral) or features < 1:
            raise InvalidArgumentError(argument="m", value=features, reason="the number of features must be ≥ 1")
        m = int(features)
        names = components if components is not None else _component_names(m)
        super().__init__(
            name or f"cofactor({m})", names, one=(1.0,) + (0.0,) * (len(names) - 1), mul=CofactorProduct(m),
            lift=CofactorLift(m), features=m,
            description=description or f"degree-2 cofactor ring over {m} features: (count, Σx, Σxxᵀ)",
        )

    def unpack(self, value: Any) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(c, s, Q)`` of a value, ``Q`` the full symmetric ``m × m`` matrix.

        ``value`` is one value (``w`` numbers: ``c`` a float, ``s`` shape
        ``(m,)``, ``Q`` ``(m, m)``) or rows of them (``(n, w)``: ``c`` shape
        ``(n,)``, ``s`` ``(n, m)``, ``Q`` ``(n, m, m)``).

        Examples
        --------
        >>> from faq.semirings import cofactor
        >>> c, s, Q = cofactor(2).unpack([2.0, 1.0, 3.0, 4.0, 5.0, 6.0])
        >>> c, s.tolist(), Q.tolist()
        (2.0, [1.0, 3.0], [[4.0, 5.0], [5.0, 6.0]])
        """
        v = np.asarray(value, dtype=np.float64)
        if v.ndim not in (1, 2) or v.shape[-1] != self.width:
            raise FAQValueError(error_class="VALUE_SHAPE", semiring=self.name, width=self.width, shape=v.shape)
        m = self.features
        rows, cols = np.triu_indices(m)
        q = v[..., 1 + m:]
        Q = np.zeros(v.shape[:-1] + (m, m))
        Q[..., rows, cols] = q
        Q[..., cols, rows] = q
        c = v[..., 0]
        return (float(c) if v.ndim == 1 else c.copy()), v[..., 1:1 + m].copy(), Q

    def pack(self, count: Any, sums: Any, products: Any) -> np.ndarray:
        """The value of ``(c, s, Q)`` (``Q`` full and symmetric): the inverse of :meth:`unpack`.

        Examples
        --------
        >>> from faq.semirings import cofactor
        >>> cofactor(2).pack(2.0, [1.0, 3.0], [[4.0, 5.0], [5.0, 6.0]]).tolist()
        [2.0, 1.0, 3.0, 4.0, 5.0, 6.0]
        """
        m = self.features
        c = np.asarray(count, dtype=np.float64)
        s = np.asarray(sums, dtype=np.float64)
        Q = np.asarray(products, dtype=np.float64)
        if s.shape[-1:] != (m,) or Q.shape[-2:] != (m, m):
            raise FAQValueError(error_class="COFACTOR_SHAPE", semiring=self.name, features=m, sums=s.shape,
                                products=Q.shape)
        rows, cols = np.triu_indices(m)
        return np.concatenate([c[..., None], s, Q[..., rows, cols]], axis=-1)

    def __reduce__(self) -> tuple:
        # The built-ins unpickle (e.g. on an executor) as the cached objects, so they stay equal (==).
        return _rebuild, (self.features, self.name, self.component_names, self.description)


def _rebuild(features: int, name: str, components: tuple[str, ...], description: str) -> CofactorRing:
    if name == MOMENTS.name and components == MOMENTS.component_names:
        return MOMENTS
    if name == f"cofactor({features})" and components == tuple(_component_names(features)):
        return cofactor(features)
    return CofactorRing(features, name, components, description)


@functools.lru_cache(maxsize=None)
def _cofactor(m: int) -> CofactorRing:
    return CofactorRing(m)


def cofactor(m: int) -> CofactorRing:
    """The degree-2 cofactor (covariance) ring over ``m`` features, one object per ``m``.

    Parameters
    ----------
    m : int
        Number of features, ≥ 1.

    Returns
    -------
    CofactorRing
        ``w = 1 + m + m(m+1)/2`` components: ``count``, ``s[j]``, ``Q[i,j]``
        for ``i ≤ j``.

    Examples
    --------
    >>> from faq.semirings import cofactor
    >>> cofactor(3) is cofactor(3), cofactor(3).width, cofactor(3).components[-1]
    (True, 10, 'Q[2,2]')
    >>> cofactor(0)
    Traceback (most recent call last):
    ...
    faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] m=0: the number of features must be ≥ 1
    """
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise InvalidArgumentError(argument="m", value=m, reason="the number of features must be ≥ 1")
    return _cofactor(int(m))


def _component_names(m: int) -> list[str]:
    rows, cols = np.triu_indices(m)
    return ["count", *(f"s[{j}]" for j in range(m)), *(f"Q[{i},{j}]" for i, j in zip(rows.tolist(), cols.tolist()))]


def _triangle_index(m: int, i: int, j: int) -> int:
    """Position of ``Q[i, j]`` (``i ≤ j``) in the row-by-row upper triangle (``np.triu_indices`` order)."""
    return i * m - i * (i - 1) // 2 + (j - i)


#: (count, sum, sum of squares) of one value: averages and variances over joins (``cofactor`` with m = 1).
MOMENTS = CofactorRing(
    1, "moments", ("count", "sum", "sum_sq"),
    description="(count, sum, sum of squares) of a value, a ring: averages and variances over joins",
)
