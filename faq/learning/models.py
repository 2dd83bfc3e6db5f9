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
from faq.input_kinds import as_pandas, is_pandas

__all__ = ["Covariance", "Moments", "LinearModel", "LearningPlan", "check_ridge", "fit_linear", "moments_of",
           "ridge_path"]


def _rows(count: Any) -> int:
    """A join's row count, summed by the ring in doubles, as the whole number it is."""
    return int(round(float(count)))


@dataclass(frozen=True)
class Covariance:
    """``(n, Σx, Σxxᵀ)`` over the rows of a join, labelled by feature.

    Attributes
    ----------
    features : tuple of str
        ``"table.column"`` per component, in order.
    count : int
        Rows of the join (``n``; the ring sums it in doubles, exact below 2**53).
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
    count: int
    sums: np.ndarray
    products: np.ndarray
    plan: Any = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", _rows(self.count))

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
        priced = [line for line in self.lifts if line.startswith(("priced: ", "chosen "))]
        lifts = [line for line in self.lifts if line not in priced]
        head = ["the plans, priced before any ran (faq.learning.costs):", *("  " + line for line in priced)]
        # A plan that lifts nothing (faq.learning.star's) names what its per-table lines are.
        lifted = [getattr(self.plan, "notes_header", "lifted into the ring, per table:"), *("  " + line for line in lifts)]
        return "\n".join([*(head if priced else []), *(lifted if lifts else []), str(self.plan)])

    def __repr__(self) -> str:
        """One line (``str`` is the whole plan)."""
        return f"LearningPlan({len(self.lifts)} table(s), {self.plan!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class Moments:
    """Count, sum and sum of squares of one value over the rows of a join."""

    feature: str
    count: int
    sum: float
    sum_sq: float
    plan: Any = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", _rows(self.count))

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
    """Least squares with an intercept over the rows of a join, with scikit-learn's names.

    Everything below comes from the cofactor aggregate ``(n, Σx, Σxxᵀ)`` of
    the features and the target: the fit, its R² on the join and the
    coefficients' standard errors need no row of the join.

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

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [4.0, 3.0], [5.0, 5.0]])
    >>> y = 2.0 + x @ np.array([0.5, -1.0]) + np.array([0.1, -0.1, 0.0, 0.1, -0.1])
    >>> data = np.column_stack([x, y])
    >>> model = fit_linear(Covariance(("t.a", "t.b", "t.y"), 5.0, data.sum(axis=0), data.T @ data), target="t.y")
    >>> model.coef_.round(3).tolist(), round(model.intercept_, 3), model.feature_names_in_.tolist()
    ([0.472, -0.991], 2.052, ['t.a', 't.b'])
    >>> bool(np.allclose(model.predict(x), model.intercept_ + x @ model.coef_)), round(model.score(), 4)
    (True, 0.9952)
    >>> model.rows, sorted(model.standard_errors)
    (5, ['intercept', 't.a', 't.b'])
    """

    intercept: float
    coefficients: dict[str, float]
    target: str
    ridge: float
    covariance: Covariance = field(repr=False)

    # -- scikit-learn's names ------------------------------------------------------------

    @property
    def coef_(self) -> np.ndarray:
        """The coefficients, in the order of :attr:`feature_names_in_`."""
        return np.array(list(self.coefficients.values()), dtype=np.float64)

    @property
    def intercept_(self) -> float:
        return float(self.intercept)

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The features, ``"table.column"``, in the order of :attr:`coef_`."""
        return np.array(list(self.coefficients), dtype=object)

    @property
    def n_features_in_(self) -> int:
        return len(self.coefficients)

    @property
    def plan(self) -> Any:
        return self.covariance.plan

    @property
    def rows(self) -> Any:
        """Rows of the join it was fitted on (an int: a count; a float only for a weighted aggregate)."""
        count = self.covariance.count
        return int(count) if float(count).is_integer() else float(count)

    def explain(self) -> LearningPlan:
        """Where each feature was lifted, then the plan that computed the aggregate."""
        return self.covariance.explain()

    # -- predictions ---------------------------------------------------------------------

    def predict(self, x: Any) -> Any:
        """Predictions for the rows ``x``.

        Parameters
        ----------
        x : 2-D array, pandas DataFrame, Arrow table (any Arrow stream: a polars DataFrame, ...) or Spark DataFrame
            An array's columns are the features in :attr:`feature_names_in_`
            order; a table's are found by name, ``"table.column"`` or the
            bare ``column`` when that names one feature.

        Returns
        -------
        numpy.ndarray, or a Spark DataFrame
            For a Spark DataFrame, the rows with a ``prediction`` column (a
            Column expression: no Python runs on the executors).
        """
        from faq.spark import is_dataframe

        if is_dataframe(x):
            from pyspark.sql import functions as F

            expression = F.lit(self.intercept_)
            for name, weight in zip(self._columns_in(x.columns), self.coef_):
                expression = expression + F.col(f"`{name}`").cast("double") * F.lit(float(weight))
            return x.withColumn("prediction", expression)
        return self.intercept_ + self._matrix(x) @ self.coef_

    def score(self, x: Any = None, y: Any = None) -> float:
        """R², as scikit-learn's ``score``: on the rows ``x`` and targets ``y``, or, without them, on the
        join it was fitted on -- from the aggregate alone, no row listed.

        ``y`` may also be the name of ``x``'s target column (default: the target's name when ``x`` has it);
        on a Spark DataFrame it must be, and R² is one Spark aggregate.
        """
        if x is None:
            return self._in_sample_r2()
        from faq.spark import is_dataframe

        if is_dataframe(x):
            return self._spark_r2(x, y)
        x = as_pandas(x, "x")  # read once: an Arrow stream may be read only once
        truth = self._targets(x, y)
        predicted = np.asarray(self.predict(x), dtype=np.float64)
        residual = float(((truth - predicted) ** 2).sum())
        total = float(((truth - truth.mean()) ** 2).sum())
        return 1.0 - residual / total if total else float("nan")

    def _spark_r2(self, frame: Any, y: Any) -> float:
        """R² on a Spark DataFrame by one aggregate (n, Σy, Σy², Σ(y − ŷ)²): no row comes to the driver."""
        from pyspark.sql import functions as F

        name = y if isinstance(y, str) else self.target
        bare = name.split(".", 1)[-1]
        column = name if name in frame.columns else bare if bare in frame.columns else None
        if column is None:
            raise InvalidArgumentError(argument="y", value=y, reason=f"a Spark DataFrame's targets are a column of "
                                                                     f"it: {self.target!r} or {bare!r}")
        truth = F.col(f"`{column}`").cast("double")
        residual = truth - F.col("prediction")
        row = self.predict(frame).agg(F.count(truth).alias("n"), F.sum(truth).alias("s"),
                                      F.sum(truth * truth).alias("ss"), F.sum(residual * residual).alias("rss")).first()
        total = (row["ss"] or 0.0) - (row["s"] or 0.0) ** 2 / row["n"] if row["n"] else 0.0
        return float(1.0 - row["rss"] / total) if total > 0 else float("nan")

    # -- the fit's statistics, from the aggregate ---------------------------------------

    @property
    def residual_sum_of_squares(self) -> float:
        """Σ (y − ŷ)² over the join: ``y'y − 2 β'X'y + β'X'Xβ`` with the intercept in ``β``."""
        gram, moment, yy = self._normal_equations()
        beta = np.concatenate([[self.intercept_], self.coef_])
        return float(max(yy - 2.0 * beta @ moment + beta @ gram @ beta, 0.0))

    def coefficient_covariance(self) -> Any:
        """The covariance of (intercept, coefficients): ``σ² A⁻¹ G A⁻¹`` with ``G`` the Gram matrix of
        ``(1, x)``, ``A = G + λ`` on the coefficients (``σ² G⁻¹`` without ridge) and
        ``σ² = RSS / (n − p − 1)``; a pandas DataFrame labelled ``intercept`` and the features."""
        import pandas as pd

        gram, _, _ = self._normal_equations()
        dof = self.covariance.count - gram.shape[0]
        if dof <= 0:
            raise FAQValueError(error_class="TOO_FEW_ROWS", ddof=gram.shape[0], count=self.covariance.count)
        sigma2 = self.residual_sum_of_squares / dof
        penalised = gram + np.diag([0.0] + [self.ridge] * (gram.shape[0] - 1))
        inverse = np.linalg.pinv(penalised)
        names = ["intercept", *self.coefficients]
        return pd.DataFrame(sigma2 * inverse @ gram @ inverse, index=names, columns=names)

    @property
    def standard_errors(self) -> dict[str, float]:
        """The standard error of the intercept and of each coefficient (:meth:`coefficient_covariance`)."""
        covariance = self.coefficient_covariance()
        return {name: float(np.sqrt(max(covariance.loc[name, name], 0.0))) for name in covariance.index}

    def _in_sample_r2(self) -> float:
        _, moment, yy = self._normal_equations()
        n = self.covariance.count
        total = yy - moment[0] ** 2 / n
        return float(1.0 - self.residual_sum_of_squares / total) if total > 0 else float("nan")

    def _normal_equations(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(the Gram matrix of (1, x), (Σy, Σxy), Σy²) from the aggregate."""
        aggregate = self.covariance
        t = aggregate.features.index(self.target)
        keep = [aggregate.features.index(name) for name in self.coefficients]
        sums, products = np.asarray(aggregate.sums), np.asarray(aggregate.products)
        gram = np.empty((len(keep) + 1, len(keep) + 1))
        gram[0, 0] = aggregate.count
        gram[0, 1:] = gram[1:, 0] = sums[keep]
        gram[1:, 1:] = products[np.ix_(keep, keep)]
        return gram, np.concatenate([[sums[t]], products[keep, t]]), float(products[t, t])

    # -- reading rows -----------------------------------------------------------------------

    def _columns_in(self, columns: Sequence[str]) -> list[str]:
        """The column of ``columns`` holding each feature: its full name, or its bare column name."""
        found = []
        for name in self.coefficients:
            bare = name.split(".", 1)[-1]
            if name in columns:
                found.append(name)
            elif bare in columns and sum(n.split(".", 1)[-1] == bare for n in self.coefficients) == 1:
                found.append(bare)
            else:
                raise InvalidArgumentError(argument="x", value=list(columns),
                                           reason=f"has no column for the feature {name!r} ({name!r} or {bare!r})")
        return found

    def _matrix(self, x: Any) -> np.ndarray:
        x = as_pandas(x, "x")
        if is_pandas(x):
            return x[self._columns_in(list(x.columns))].to_numpy(dtype=np.float64)
        matrix = np.asarray(x, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[1] != self.n_features_in_:
            raise InvalidArgumentError(argument="x", value=f"shape {matrix.shape}",
                                       reason=f"rows of the {self.n_features_in_} features {list(self.coefficients)}")
        return matrix

    def _targets(self, x: Any, y: Any) -> np.ndarray:
        x = as_pandas(x, "x")
        if y is None or isinstance(y, str):
            name = y or self.target
            columns = list(getattr(x, "columns", []))
            bare = name.split(".", 1)[-1]
            column = name if name in columns else bare if bare in columns else None
            if column is None:
                raise InvalidArgumentError(argument="y", value=y, reason=f"give the targets, or rows with the "
                                                                         f"column {self.target!r}")
            return x[column].to_numpy(dtype=np.float64)
        return np.asarray(y, dtype=np.float64).ravel()


def check_ridge(ridge: float) -> None:
    """A ridge penalty is a finite number λ ≥ 0 (an infinite one leaves nothing to solve), else INVALID_ARGUMENT.

    >>> check_ridge(0.5)
    """
    if not (isinstance(ridge, (int, float, np.number)) and 0 <= ridge < np.inf):
        raise InvalidArgumentError(argument="ridge", value=ridge, reason="the penalty must be a finite number ≥ 0")


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
    check_ridge(ridge)
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
    if not (np.isfinite(gram).all() and np.isfinite(moment).all()):  # LAPACK would fail, printing to stderr
        raise FAQValueError(error_class="MOMENTS_NOT_FINITE", what="sums and products of the features",
                            detail=f"{int((~np.isfinite(gram)).sum() + (~np.isfinite(moment)).sum())} of them are "
                                   "infinite or NaN: a value is infinite, or too large to square")
    solution = np.linalg.lstsq(gram, moment, rcond=None)[0]
    names = [aggregate.features[i] for i in keep]
    return LinearModel(float(solution[0]), dict(zip(names, map(float, solution[1:]))), target, float(ridge), aggregate)


def ridge_path(aggregate: Covariance, target: str, alphas: Sequence[float]) -> list[LinearModel]:
    """One model per penalty in ``alphas``, all from the same aggregate (one FAQ, then a small solve each).

    >>> data = np.array([[1.0, 3.0], [2.0, 5.0], [3.0, 7.5]])
    >>> aggregate = Covariance(("t.x", "t.y"), 3.0, data.sum(axis=0), data.T @ data)
    >>> [round(m.coefficients["t.x"], 3) for m in ridge_path(aggregate, "t.y", [0.0, 1.0, 10.0])]
    [2.25, 1.5, 0.375]
    """
    return [fit_linear(aggregate, target, float(alpha)) for alpha in alphas]
