"""Rings whose values are fixed-width arrays of doubles: :class:`ArraySemiring`.

A value of an array ring is ``w`` doubles with a name each (``count``,
``sum``, ``sum_sq``).  The ring is declared once, as algebra:

* ⊕ is componentwise ``+`` and ⊖ componentwise negation, so zero is all
  zeros and every array ring is a ring (deletes work);
* ⊗ is written once, as a Python function of the two elements' components
  using ``+``, ``−``, ``×`` (and ``÷`` by numbers) -- the formula a paper
  gives.  Since ⊗ distributes over componentwise ``+``, it is *bilinear*:
  each output component is a sum of ``coef · a[i] · b[j]``.  The formula is
  evaluated once on symbols, which reads those terms off it exactly
  (:class:`BilinearProduct`); a formula that is not bilinear is refused
  when the ring is defined;
* one is given; an optional *lift* says how a plain number ``x`` of feature
  ``j`` becomes a ring value (``(1, x, x²)`` for moments).

The backends derive their forms from the terms, as they do from the
operation values of scalar semirings:
:func:`faq.semirings.numpy_backend.numpy_ops` (``arrays=True``: values are
``(rows, w)`` float64 arrays) and :func:`faq.semirings.spark_backend.columns`
(values are ``array<double>`` columns).  Arrays rather than structs keep one
code path for every width, and Arrow hands an ``array<double>`` column to
numpy as one flat buffer.

Examples
--------
The (count, sum, sum of squares) ring, declared from scratch (the built-in
one is :data:`faq.semirings.MOMENTS`):

>>> import numpy as np
>>> def product(a, b):
...     (c1, s1, q1), (c2, s2, q2) = a, b
...     return c1 * c2, c2 * s1 + c1 * s2, c2 * q1 + c1 * q2 + 2 * s1 * s2
>>> ring = ArraySemiring("my_moments", ("count", "sum", "sum_sq"), one=(1.0, 0.0, 0.0), mul=product,
...                      lift=lambda feature, x: (1.0, x, x * x), features=1)
>>> ring.width, ring.components, ring.value_type, ring.carrier, ring.is_ring
(3, ('count', 'sum', 'sum_sq'), 'array<double>', 'double[3]', True)
>>> ring.lift(0, np.array([2.0, 3.0])).tolist()
[[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
>>> ring.product.describe(ring.components)[-1]
'sum_sq = count·sum_sq + 2·sum·sum + sum_sq·count'
>>> from faq.semirings import check_laws
>>> check_laws(ring)
[]
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Optional, Sequence

import numpy as np

from faq.errors import FAQValueError, InvalidArgumentError
from faq.semirings.base import Semiring
from faq.semirings.operations import Operation, UnaryOperation

#: Spark SQL type of an array ring's value column (the DDL string Spark casts and schemas accept).
ARRAY_DOUBLE = "array<double>"
#: Type of one component.
ELEMENT_TYPE = "double"

# A ⊗ formula: (components of a, components of b) -> components of a ⊗ b.
ProductFormula = Callable[[Sequence[Any], Sequence[Any]], Sequence[Any]]
# A lift: (feature index, x) -> components of x lifted (x: a numpy array or a Spark Column).
LiftFormula = Callable[[int, Any], Sequence[Any]]


@dataclass(frozen=True)
class BilinearProduct:
    """⊗ of an array ring as terms: component ``out[t]`` of ``a ⊗ b`` gets ``coef[t] · a[left[t]] · b[right[t]]``.

    Terms are sorted by output component, then by ``left`` and ``right``.
    Tuples, so the value compares and hashes; the backends build their
    forms from it.

    Parameters
    ----------
    width : int
    out, left, right : tuple of int
    coef : tuple of float

    Examples
    --------
    >>> p = BilinearProduct.trace(lambda a, b: (a[0] * b[0], a[0] * b[1] + a[1] * b[0]), 2)
    >>> p.out, p.left, p.right, p.coef
    ((0, 1, 1), (0, 0, 1), (0, 1, 0), (1.0, 1.0, 1.0))
    >>> p.terms_of(1)
    [(0, 1, 1.0), (1, 0, 1.0)]
    """

    width: int
    out: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    coef: tuple[float, ...]

    @classmethod
    def trace(cls, formula: ProductFormula, width: int, name: str = "array ring",
              components: Optional[Sequence[str]] = None) -> "BilinearProduct":
        """Read the terms off ``formula`` by evaluating it once on symbolic components.

        Raises :class:`~faq.errors.FAQValueError` when the formula gives the
        wrong number of components, or is not bilinear (a constant or
        single-factor term, ``a[i]·a[k]``, or an operation other than
        ``+ − ×`` and ``÷`` by a number).

        Examples
        --------
        >>> BilinearProduct.trace(lambda a, b: (a[0] * b[0] - 0.5 * b[0] * a[0],), 1).coef
        (0.5,)
        >>> BilinearProduct.trace(lambda a, b: (a[0] * b[0] + 1,), 1)
        Traceback (most recent call last):
        ...
        faq.errors.FAQValueError: [NOT_BILINEAR] ⊗ of 'array ring' must be bilinear...
        """
        names = tuple(components) if components is not None else tuple(f"x[{i}]" for i in range(width))
        a = tuple(_Symbolic({(i, _NONE): 1.0}) for i in range(width))
        b = tuple(_Symbolic({(_NONE, j): 1.0}) for j in range(width))
        try:
            result = list(formula(a, b))
        except (_NotBilinear, TypeError, ZeroDivisionError) as error:
            raise FAQValueError(error_class="NOT_BILINEAR", semiring=name, reason=error) from None
        if len(result) != width:
            raise FAQValueError(error_class="PRODUCT_WIDTH", semiring=name, components=len(result), width=width,
                                names=names)
        rows = []
        for k, value in enumerate(result):
            symbolic = _Symbolic.of(value)
            if symbolic is NotImplemented:
                raise FAQValueError(error_class="NOT_BILINEAR", semiring=name,
                                    reason=f"component {names[k]} is {value!r}")
            for (i, j), coef in sorted(symbolic.terms.items()):
                if i == _NONE or j == _NONE:
                    reason = f"component {names[k]} has the term {_Symbolic({(i, j): coef}).show(names)}, " \
                             "which is not (number)·a[i]·b[j], so a⊗0 ≠ 0"
                    raise FAQValueError(error_class="NOT_BILINEAR", semiring=name, reason=reason, component=names[k])
                rows.append((k, i, j, float(coef)))
        out, left, right, coef = (tuple(column) for column in zip(*rows)) if rows else ((),) * 4
        return cls(width, out, left, right, coef)

    def terms_of(self, component: int) -> list[tuple[int, int, float]]:
        """The ``(left, right, coef)`` terms of one output component.

        >>> BilinearProduct(2, (1, 1), (0, 1), (1, 0), (1.0, 1.0)).terms_of(1)
        [(0, 1, 1.0), (1, 0, 1.0)]
        """
        return [(i, j, c) for k, i, j, c in zip(self.out, self.left, self.right, self.coef) if k == component]

    @cached_property
    def by_component(self) -> tuple[tuple[tuple[int, int, float], ...], ...]:
        """The terms of every component, in component order (what per-component forms loop over)."""
        grouped: list[list] = [[] for _ in range(self.width)]
        for k, i, j, c in zip(self.out, self.left, self.right, self.coef):
            grouped[k].append((i, j, c))
        return tuple(tuple(g) for g in grouped)

    def describe(self, components: Sequence[str]) -> list[str]:
        """One line per component, ``name = coef·a_name·b_name + ...`` (for listings and plans).

        >>> BilinearProduct(1, (0,), (0,), (0,), (2.0,)).describe(["c"])
        ['c = 2·c·c']
        """
        lines = []
        for k, terms in enumerate(self.by_component):
            shown = " + ".join(f"{_coef(c)}{components[i]}·{components[j]}" for i, j, c in terms)
            lines.append(f"{components[k]} = {shown or '0'}")
        return lines


class DoublesValues:
    """Values of ``w`` doubles named by component: what array rings and tuple semirings share.

    A semiring class mixing it in (before :class:`~faq.semirings.base.Semiring`)
    sets ``component_names``; the engine then takes its values as ``(n, w)``
    float64 arrays and ``array<double>`` Columns (:attr:`structured`).
    """

    name: str
    component_names: tuple[str, ...]

    @property
    def width(self) -> int:
        """Doubles per value."""
        return len(self.component_names)

    @property
    def components(self) -> tuple[str, ...]:
        """Component names, in storage order."""
        return self.component_names

    @property
    def structured(self) -> bool:
        return True

    @property
    def element_type(self) -> str:
        return ELEMENT_TYPE

    @property
    def carrier(self) -> str:
        return f"{ELEMENT_TYPE}[{self.width}]"

    def python_value(self, value: Any) -> tuple[float, ...]:
        """A value as a tuple of ``w`` floats (for results and checks).

        >>> from faq.semirings import MOMENTS
        >>> MOMENTS.python_value([2, 3.5, 7])
        (2.0, 3.5, 7.0)
        """
        return array_element(self.name, "value", value, self.width)

    def named(self, value: Any) -> dict[str, float]:
        """A value as ``{component name: number}``, for display.

        >>> from faq.semirings import MOMENTS
        >>> MOMENTS.named((2.0, 3.0, 5.0))
        {'count': 2.0, 'sum': 3.0, 'sum_sq': 5.0}
        """
        return dict(zip(self.component_names, self.python_value(value)))


@dataclass(frozen=True, init=False, repr=False)
class ArraySemiring(DoublesValues, Semiring):
    """A ring whose values are ``w`` doubles: ⊕ componentwise ``+``, ⊗ a bilinear formula.

    Parameters
    ----------
    name : str
        What it is called (``"moments"``).
    components : sequence of str
        One name per component, in storage order; the width is their number.
    one : sequence of float
        The multiplicative identity (zero is all zeros: ⊕ is ``+``).
    mul : (a, b) -> sequence
        ⊗ as a formula over the components of ``a`` and ``b`` (sequences of
        length ``w``), with ``+``, ``−``, ``×`` and ``÷`` by numbers; it must
        be bilinear (see the module notes).  Evaluated once, on symbols.
    lift : (feature, x) -> sequence, optional
        How a number ``x`` of feature ``feature`` becomes a value: ``w``
        items, each a number or an expression in ``x`` that numpy arrays and
        Spark Columns both evaluate (``x``, ``x * x``).
    features : int
        How many features ``lift`` takes (feature indices ``0 .. features−1``).
    samples : sequence of sequences, optional
        Elements the law checker tries; by default a few reproducible random
        elements and lifts.
    description : str
        One line for listings.

    Attributes
    ----------
    product : BilinearProduct
        ⊗ as terms, from which the backends build their forms.
    add, mul : Operation
        ``"<name>.add"`` / ``"<name>.mul"``: named, with no scalar forms (the
        backends recognise the ring by :attr:`structured`).
    neg : UnaryOperation
        ``"<name>.neg"``: componentwise negation.
    """

    component_names: tuple[str, ...]
    product: BilinearProduct
    lifting: Optional[LiftFormula]
    features: int

    def __init__(
        self,
        name: str,
        components: Sequence[str],
        one: Sequence[float],
        mul: ProductFormula,
        *,
        lift: Optional[LiftFormula] = None,
        features: int = 0,
        samples: Optional[Sequence[Sequence[float]]] = None,
        description: str = "",
    ) -> None:
        names = tuple(str(c) for c in components)
        if not names or len(set(names)) != len(names):
            raise FAQValueError(error_class="ARRAY_COMPONENTS", semiring=name, components=names)
        width = len(names)
        one = array_element(name, "one", one, width)
        zero = (0.0,) * width
        product = BilinearProduct.trace(mul, width, name, names)
        if lift is None and features:
            raise FAQValueError(error_class="FEATURES_WITHOUT_LIFT", semiring=name, features=features)
        fields = dict(
            name=name, value_type=ARRAY_DOUBLE, zero=zero, one=one,
            add=Operation(f"{name}.add", "+", {ARRAY_DOUBLE: zero}),
            mul=Operation(f"{name}.mul", "⊗", {ARRAY_DOUBLE: one}),
            neg=UnaryOperation(f"{name}.neg", "−"),
            idempotent=False, samples=(), description=description,
            component_names=names, product=product, lifting=lift, features=int(features),
        )
        for key, value in fields.items():
            object.__setattr__(self, key, value)
        if samples is None:
            samples = _default_samples(self)
        object.__setattr__(self, "samples", tuple(array_element(name, "sample", s, width) for s in samples))

    def lift(self, feature: int, values: Any) -> np.ndarray:
        """Numbers of feature ``feature`` as ring values: ``(n,)`` -> ``(n, w)`` float64 (a scalar -> ``(w,)``).

        The numpy form of the declared lift; ``columns(ring).lift`` is the
        Spark form (:mod:`faq.semirings.spark_backend`).

        Examples
        --------
        >>> from faq.semirings import MOMENTS
        >>> MOMENTS.lift(0, [1.0, -2.0]).tolist()
        [[1.0, 1.0, 1.0], [1.0, -2.0, 4.0]]
        """
        self.check_feature(feature)
        x = np.asarray(values, dtype=np.float64)
        parts = [np.asarray(p, dtype=np.float64) for p in self.lifting(feature, x)]
        return np.stack(np.broadcast_arrays(x, *parts)[1:], axis=-1)

    def check_feature(self, feature: int) -> None:
        """Raise :class:`~faq.errors.InvalidArgumentError` unless ``feature`` is a feature index of the lift.

        >>> from faq.semirings import cofactor
        >>> cofactor(2).check_feature(2)
        Traceback (most recent call last):
        ...
        faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] feature=2: cofactor(2) lifts features 0..1
        """
        if self.lifting is None:
            raise InvalidArgumentError(argument="feature", value=feature, reason=f"{self.name} declares no lift")
        if isinstance(feature, bool) or not isinstance(feature, numbers.Integral) or not 0 <= feature < self.features:
            raise InvalidArgumentError(
                argument="feature", value=feature, reason=f"{self.name} lifts features 0..{self.features - 1}"
            )

    def __repr__(self) -> str:
        return f"ArraySemiring({self.name!r}, {self.carrier}: {', '.join(self.component_names[:6])}" + (
            ", ...)" if self.width > 6 else ")"
        )


# --- tracing a formula on symbols ------------------------------------------------------------

_NONE = -1  # "no factor from this element" in a monomial (i, j)


class _NotBilinear(Exception):
    pass


class _Symbolic:
    """A polynomial in the components of two elements ``a``, ``b`` of degree ≤ 1 in each.

    ``terms`` maps a monomial ``(i, j)`` -- ``a[i]·b[j]``, with ``_NONE`` for
    a missing factor -- to its coefficient.  Arithmetic that would leave
    that shape (``a[i]·a[k]``, ÷ by a symbol) raises :class:`_NotBilinear`.
    """

    __slots__ = ("terms",)
    __array_ufunc__ = None  # numpy scalars defer to our __radd__ / __rmul__

    def __init__(self, terms: dict[tuple[int, int], float]) -> None:
        self.terms = {key: c for key, c in terms.items() if c != 0.0}

    @staticmethod
    def of(value: Any) -> Any:
        if isinstance(value, _Symbolic):
            return value
        if isinstance(value, numbers.Real):
            return _Symbolic({(_NONE, _NONE): float(value)})
        return NotImplemented

    def __add__(self, other: Any) -> Any:
        other = _Symbolic.of(other)
        if other is NotImplemented:
            return other
        terms = dict(self.terms)
        for key, c in other.terms.items():
            terms[key] = terms.get(key, 0.0) + c
        return _Symbolic(terms)

    __radd__ = __add__

    def __neg__(self) -> "_Symbolic":
        return _Symbolic({key: -c for key, c in self.terms.items()})

    def __pos__(self) -> "_Symbolic":
        return self

    def __sub__(self, other: Any) -> Any:
        other = _Symbolic.of(other)
        return other if other is NotImplemented else self + (-other)

    def __rsub__(self, other: Any) -> Any:
        other = _Symbolic.of(other)
        return other if other is NotImplemented else other + (-self)

    def __mul__(self, other: Any) -> Any:
        other = _Symbolic.of(other)
        if other is NotImplemented:
            return other
        terms: dict[tuple[int, int], float] = {}
        for (i1, j1), c1 in self.terms.items():
            for (i2, j2), c2 in other.terms.items():
                if (i1 != _NONE and i2 != _NONE) or (j1 != _NONE and j2 != _NONE):
                    raise _NotBilinear("a product of two components of the same element")
                key = (max(i1, i2), max(j1, j2))
                terms[key] = terms.get(key, 0.0) + c1 * c2
        return _Symbolic(terms)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, _Symbolic):
            raise _NotBilinear("a division by a component")
        if not isinstance(other, numbers.Real):
            return NotImplemented
        return self * (1.0 / float(other))

    def show(self, names: Sequence[str]) -> str:
        parts = []
        for (i, j), c in sorted(self.terms.items()):
            factors = [f"a.{names[i]}"] * (i != _NONE) + [f"b.{names[j]}"] * (j != _NONE)
            parts.append(f"{_coef(c) if factors else c}{'·'.join(factors)}")
        return " + ".join(parts) or "0"


def _coef(c: float) -> str:
    """``2·`` for a coefficient 2, nothing for 1."""
    return "" if c == 1.0 else f"{c:g}·"


def array_element(name: str, what: str, value: Any, width: int) -> tuple[float, ...]:
    """``value`` as ``width`` floats, or a :class:`~faq.errors.FAQValueError` saying what was wrong."""
    try:
        numbers_ = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        numbers_ = None
    if numbers_ is None or numbers_.shape != (width,):
        raise FAQValueError(error_class="ARRAY_ELEMENT", semiring=name, what=what, width=width, value=repr(value))
    return tuple(float(x) for x in numbers_)


def _default_samples(ring: ArraySemiring, seed: int = 20180610) -> list[tuple[float, ...]]:
    """Reproducible elements for the law checker: three random ones and, with a lift, two lifts.

    Random components are multiples of 1/4 in [−4, 4]: exact in binary, so
    most laws hold to the last bit and the tolerance is rarely needed.
    """
    rng = np.random.default_rng(seed)
    samples = [tuple(rng.integers(-16, 17, ring.width) / 4.0) for _ in range(3)]
    if ring.lifting is not None and ring.features:
        for feature, x in ((0, 1.5), (ring.features - 1, -2.25)):
            samples.append(tuple(ring.lift(feature, x).tolist()))
    return samples
