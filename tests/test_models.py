"""A regression over a join answers as scikit-learn's models do: coef_, intercept_, predict, score (R²),
the coefficients' standard errors, ridge -- checked against scikit-learn and numpy on the join listed
with pandas (the Housing sample, in-process: no Spark), and predict on a Spark DataFrame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import faq
from faq.errors import InvalidArgumentError
from faq.learning.datasets import housing_task, materialise, read_tables
from faq.learning.models import ridge_path

sklearn = pytest.importorskip("sklearn.linear_model")

SAMPLE = Path(__file__).resolve().parent / "data" / "housing-sample"


@pytest.fixture(scope="module")
def fitted():
    """The Housing sample's regression (in-process) and its join listed: rows, X (bare column names), y."""
    tables = read_tables(SAMPLE)
    task = housing_task()
    model = faq.linear_regression(task.query, target=task.target, features=list(task.features), placement="driver",
                                  **tables)
    rows = materialise(tables)
    x = rows[[f.split(".")[1] for f in task.features]]
    return tables, task, model, rows, x, rows[task.target.split(".")[1]].to_numpy()


def test_the_model_is_scikit_learns_least_squares_on_the_listed_join(fitted):
    _, task, model, rows, x, y = fitted
    reference = sklearn.LinearRegression().fit(x.to_numpy(), y)
    assert model.feature_names_in_.tolist() == list(task.features)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-8)
    assert model.intercept_ == pytest.approx(reference.intercept_, rel=1e-8)
    np.testing.assert_allclose(model.predict(x), reference.predict(x.to_numpy()), rtol=1e-8)
    np.testing.assert_allclose(model.predict(x.to_numpy()), reference.predict(x.to_numpy()), rtol=1e-8)
    # R² on the join from the aggregate alone, and on rows given
    assert model.score() == pytest.approx(reference.score(x.to_numpy(), y), rel=1e-9)
    assert model.score(rows) == pytest.approx(reference.score(x.to_numpy(), y), rel=1e-9)
    assert model.score(x, y) == pytest.approx(reference.score(x.to_numpy(), y), rel=1e-9)
    assert model.rows == len(rows) and isinstance(model.rows, int)


def test_standard_errors_are_the_textbook_ones_on_the_listed_join(fitted):
    _, task, model, rows, x, y = fitted
    design = np.column_stack([np.ones(len(rows)), x.to_numpy()])
    beta = np.linalg.lstsq(design, y, rcond=None)[0]
    residuals = y - design @ beta
    sigma2 = residuals @ residuals / (len(rows) - design.shape[1])
    expected = np.sqrt(np.diag(sigma2 * np.linalg.inv(design.T @ design)))
    got = model.standard_errors
    np.testing.assert_allclose([got["intercept"], *[got[f] for f in task.features]], expected, rtol=1e-6)
    assert model.residual_sum_of_squares == pytest.approx(residuals @ residuals, rel=1e-6)


def test_ridge_and_its_path_are_scikit_learns_ridge(fitted):
    tables, task, _, _, x, y = fitted
    alphas = [0.1, 10.0, 1000.0]
    for alpha in alphas:
        model = faq.linear_regression(task.query, target=task.target, features=list(task.features), ridge=alpha,
                                      placement="driver", **tables)
        reference = sklearn.Ridge(alpha=alpha).fit(x.to_numpy(), y)
        np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-6)
        assert model.intercept_ == pytest.approx(reference.intercept_, rel=1e-6)
    path = ridge_path(model.covariance, task.target, alphas)
    for alpha, fitted_alpha in zip(alphas, path):
        np.testing.assert_allclose(fitted_alpha.coef_, sklearn.Ridge(alpha=alpha).fit(x.to_numpy(), y).coef_,
                                   rtol=1e-6)


def test_predict_on_a_spark_dataframe_adds_a_column(fitted, spark):
    _, task, model, rows, x, _ = fitted
    frame = spark.createDataFrame(x.head(50))
    predicted = model.predict(frame).toPandas()["prediction"].to_numpy()
    np.testing.assert_allclose(predicted, model.predict(x.head(50)), rtol=1e-9)
    sample = rows.sample(300, random_state=0)  # (the join's first rows share one house: one price)
    score = model.score(spark.createDataFrame(sample))  # one Spark aggregate
    assert np.isfinite(score) and score == pytest.approx(model.score(sample), rel=1e-9)


def test_rows_without_a_feature_or_of_the_wrong_width_are_refused_by_name(fitted):
    _, task, model, _, x, y = fitted
    with pytest.raises(InvalidArgumentError, match="no column for the feature"):
        model.predict(x.drop(columns=x.columns[0]))
    with pytest.raises(InvalidArgumentError, match="rows of the"):
        model.predict(np.ones((3, 1)))
    with pytest.raises(InvalidArgumentError, match="y=None"):
        model.score(x)  # no target column, no targets given
    with pytest.raises(InvalidArgumentError) as bad:
        faq.linear_regression(task.query, target="house.nothing", features=list(task.features),
                              placement="driver", **read_tables(SAMPLE))
    assert "target='house.nothing'" in str(bad.value)
    with pytest.raises(InvalidArgumentError, match="target='price': a feature is named table.column"):
        faq.linear_regression(task.query, target="price", features=list(task.features), placement="driver",
                              **read_tables(SAMPLE))
    with pytest.raises(InvalidArgumentError, match="is also among the features"):
        faq.linear_regression(task.query, target=task.features[0], features=list(task.features),
                              placement="driver", **read_tables(SAMPLE))
