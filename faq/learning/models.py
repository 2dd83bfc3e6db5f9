"""What the cofactor aggregate of a join answers: moments, covariance, least squares.

One FAQ over the degree-2 cofactor ring (:func:`faq.semirings.cofactor`)
gives ``(n, Σx, Σxxᵀ)`` of the feature vectors of every row of a join,
without listing the join (:mod:`faq.learning.features` lifts each feature in
its own table; InsideOut ⊕-aggregates the variables away).  This module
turns that aggregate into answers:

* :class:`Covariance`: the aggregate, labelled, with means and the
  covariance matrix;
* :class:`Moments`: count, mean and variance of one value;
* :class:`LinearModel`: least squares with an intercept (and an optional
  ridge penalty on the coefficients), from the normal equations

      [[n, Σxᵀ], [Σx, Σxxᵀ + λI]] · (b, w) = (Σy, Σxy)

  solved by :func:`numpy.linalg.lstsq` -- the minimum-norm solution when
  features are collinear, as least squares on the materialised join gives.

Examples
--------
>>> import numpy as np
>>> from faq.learning.models import Covariance, fit_linear
>>> x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [4.0, 3.0]])
>>> y = 2.0 + x @ np.array([0.5, -1.0])
>>> data = np.column_stack([x, y])
>>> aggregate = Covariance(("a", "b", "y"), float(len(data)), data.sum(axis=0), data.T @ data)
>>> model = fit_linear(aggregate, target="y")
>>> round(model.intercept, 9), {k: round(v, 9) for k, v in model.coefficients.items()}
(2.0, {'a': 0.5, 'b': -1.0})
>>> aggregate.mean().tolist(), float(aggregate.covariance()[0, 0])
([2.5, 2.75, 0.5], 1.25)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from faq.errors import FAQValueError, InvalidArgumentError

__all__ = ["Covariance", "Moments", "LinearModel", "LearningPlan", "fit_linear", "moments_of"]


@dataclass(frozen=True)
class Covariance:
    """``(n, Σx, Σxxᵀ)`` over the rows of a join, labelled by feature.

    Attributes
    ----------
    features : tuple of str
        ``"table.column"`` per component, in order.
    count : float
        Rows of the join (``n``).
    sums : numpy.ndarray
        ``Σx``, shape ``(m,)``.
    products : numpy.ndarray
        ``Σxxᵀ``, shape ``(m, m)``, symmetric.
    plan : Plan or None
        The plan that computed it (``explain`` it).
    notes : tuple of str
        Where each feature was lifted and how each step ran.
    """

    features: tuple[str, ...]
    count: float
    sums: np.ndarray
    products: np.ndarray
    plan: Any = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def mean(self) -> np.ndarray:
        """The mean of each feature over the join's rows."""
        self._nonempty()
        return np.asarray(self.sums) / self.count

    def covariance(self, ddof: int = 0) -> np.ndarray:
        """The covariance matrix of the features over the join's rows (``ddof=1``: the sample one)."""
        self._nonempty()
        if self.count - ddof <= 0:
            raise FAQValueError(error_class="TOO_FEW_ROWS", ddof=ddof, count=self.count)
        mean = self.mean()
        return (np.asarray(self.products) - self.count * np.outer(mean, mean)) / (self.count - ddof)

    def to_pandas(self) -> Any:
        """``Σxxᵀ`` as a pandas DataFrame labelled by feature."""
        import pandas as pd

        return pd.DataFrame(self.products, index=list(self.features), columns=list(self.features))

    def explain(self) -> "LearningPlan":
        """Where each feature was lifted (rows -> keys, the ring's width per row), then the plan that ran."""
        return LearningPlan(self.notes, self.plan)

    def _nonempty(self) -> None:
        if self.count <= 0:
            raise FAQValueError(error_class="EMPTY_JOIN", purpose="average over", count=self.count)

    def _repr_html_(self) -> str:
        """``Σxxᵀ`` labelled by feature, for notebooks (:mod:`faq.display`)."""
        from faq.display import to_html

        return to_html(self)


@dataclass(frozen=True)
class LearningPlan:
    """What a learning answer ran: each table's lifts into the ring, then the FAQ's plan.

    ``lifts`` are one line per atom -- the features it lifts, its rows and
    the keys they ⊕-combine to, the ring's width per row -- and then how
    the steps ran; ``plan`` is the InsideOut plan (or a maintained query's
    :class:`~faq.incremental.rules.MaintenancePlan`).

    >>> print(LearningPlan(("t(x): lifts t.y; 3 rows -> 2 keys of 6 doubles",), "plan ..."))
    lifted into the ring, per table:
      t(x): lifts t.y; 3 rows -> 2 keys of 6 doubles
    plan ...
    """

    lifts: tuple[str, ...]
    plan: Any

    def __str__(self) -> str:
        return "\n".join(["lifted into the ring, per table:", *("  " + line for line in self.lifts), str(self.plan)])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class Moments:
    """Count, sum and sum of squares of one value over the rows of a join."""

    feature: str
    count: float
    sum: float
    sum_sq: float
    plan: Any = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def mean(self) -> float:
        """The average (NaN over an empty join)."""
        return self.sum / self.count if self.count else float("nan")

    def variance(self, ddof: int = 0) -> float:
        """The variance (``ddof=1``: the sample variance; NaN with too few rows)."""
        if self.count - ddof <= 0:
            return float("nan")
        return max(0.0, (self.sum_sq - self.sum * self.sum / self.count) / (self.count - ddof))


def moments_of(feature: str, value: Sequence[float], plan: Any = None, notes: Sequence[str] = ()) -> Moments:
    """A :class:`Moments` from a value of the moments ring ``(count, sum, sum_sq)``.

    >>> m = moments_of("t.x", [4.0, 10.0, 30.0])
    >>> m.mean, m.variance()
    (2.5, 1.25)
    """
    count, total, squares = (float(v) for v in value)
    return Moments(feature, count, total, squares, plan, tuple(notes))


@dataclass(frozen=True)
class LinearModel:
    """Least squares with an intercept over the rows of a join.

    Attributes
    ----------
    intercept : float
    coefficients : dict
        Feature name -> coefficient.
    target : str
    ridge : float
        The penalty λ on the coefficients' squares (not the intercept's).
    covariance : Covariance
        The aggregate it was solved from (features, then the target).
    """

    intercept: float
    coefficients: dict[str, float]
    target: str
    ridge: float
    covariance: Covariance = field(repr=False)

    @property
    def plan(self) -> Any:
        return self.covariance.plan

    @property
    def rows(self) -> float:
        """Rows of the join it was fitted on."""
        return self.covariance.count

    def explain(self) -> LearningPlan:
        """Where each feature was lifted, then the plan that computed the aggregate."""
        return self.covariance.explain()

    def predict(self, x: Any) -> np.ndarray:
        """Predictions for rows ``x`` (a 2-D array whose columns are the features, in order)."""
        x = np.asarray(x, dtype=np.float64)
        return self.intercept + x @ np.array(list(self.coefficients.values()))


def fit_linear(aggregate: Covariance, target: str, ridge: float = 0.0) -> LinearModel:
    """Least squares of ``target`` on the other features of ``aggregate``, with an intercept.

    Parameters
    ----------
    aggregate : Covariance
        Over the features and the target.
    target : str
        One of ``aggregate.features``.
    ridge : float
        λ ≥ 0 added to the diagonal of the coefficients' block.
    """
    if target not in aggregate.features:
        raise InvalidArgumentError(argument="target", value=target,
                                   reason=f"not one of the aggregate's features {list(aggregate.features)}")
    if not ridge >= 0:
        raise InvalidArgumentError(argument="ridge", value=ridge, reason="the penalty must be ≥ 0")
    if aggregate.count <= 0:
        raise FAQValueError(error_class="EMPTY_JOIN", purpose="fit a model on", count=aggregate.count)
    t = aggregate.features.index(target)
    keep = [i for i in range(len(aggregate.features)) if i != t]
    sums, products = np.asarray(aggregate.sums), np.asarray(aggregate.products)
    p = len(keep)
    gram = np.empty((p + 1, p + 1))
    gram[0, 0] = aggregate.count
    gram[0, 1:] = gram[1:, 0] = sums[keep]
    gram[1:, 1:] = products[np.ix_(keep, keep)] + ridge * np.eye(p)
    moment = np.concatenate([[sums[t]], products[keep, t]])
    solution = np.linalg.lstsq(gram, moment, rcond=None)[0]
    names = [aggregate.features[i] for i in keep]
    return LinearModel(float(solution[0]), dict(zip(names, map(float, solution[1:]))), target, float(ridge), aggregate)
