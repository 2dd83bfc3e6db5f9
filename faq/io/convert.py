"""Factors to and from the driver's objects: pandas DataFrames, numpy arrays, scipy sparse matrices.

Objects on the driver are small: they are converted with numpy and shipped to
Spark as one pandas DataFrame (Arrow).  The exporters collect a factor to the
driver, so they are for small results only; they count the rows first and
refuse more than ``max_rows``.

Examples
--------
>>> import numpy as np
>>> f = from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]))
>>> to_pandas(f).values.tolist()
[[0.0, 1.0, 2.0], [1.0, 0.0, 3.0]]
>>> to_scipy(f).toarray().tolist()
[[0.0, 2.0], [3.0, 0.0]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from faq.errors import (
    InvalidArgumentError,
    InvalidFactorValueError,
    MissingColumnError,
    NotAMatrixError,
    NullKeyError,
    ResultTooLargeError,
    ValueTypeMismatchError,
)
from faq.factor import VALUE, Factor
from faq.io._common import COL, ROW, check_variables, driver_session, resolve_value
from faq.semirings import Semiring, get_semiring

if TYPE_CHECKING:
    from faq.relation import Relation
    import pandas as pd
    from pyspark.sql import SparkSession


# --- into factors ----------------------------------------------------------------------------


def from_numpy(
    array: Any,
    variables: Sequence[str] | None = None,
    semiring: Union[str, Semiring] = "real",
    spark: "SparkSession | None" = None,
    name: str | None = None,
) -> Factor:
    """A dense n-d array as a factor: one row per entry that is not the semiring's zero.

    Parameters
    ----------
    array : array-like
        Its entries are semiring values; entries equal to the semiring's zero
        (0 for real/counting, +inf for min_plus, ...) are left out.
    variables : sequence of str, optional
        One name per axis; default ``i, j, k, ...``.
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"array"``.

    Returns
    -------
    Factor
        The array's variables and ``value``, held on the driver.

    Raises
    ------
    InvalidFactorValueError
        A NaN entry, or (``counting``) a negative one.
    ValueTypeMismatchError
        Non-integer entries for a bigint semiring, or a non-numeric array.

    Examples
    --------
    >>> import numpy as np
    >>> f = from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> f.variables, sorted(tuple(r) for r in f.df.collect())
    (('i', 'j'), [(0, 1, 2.0), (1, 0, 3.0)])
    """
    import pandas as pd

    array = np.asarray(array)
    semiring = get_semiring(semiring)
    if variables is None:
        if array.ndim > 18:
            raise InvalidArgumentError("array", f"{array.ndim}-d array", "name the variables of arrays over 18-d")
        variables = tuple(chr(ord("i") + k) for k in range(array.ndim))
    variables = check_variables(variables, arity=array.ndim)
    name = name or "array"
    values = _coerce_values(array, semiring, name)
    mask = _nonzero_mask(values, semiring)
    if array.ndim == 0:  # a scalar: a factor with no variables (numpy refuses nonzero() on 0-d)
        columns = {VALUE: values.reshape(1)[mask.reshape(1)]}
    else:
        index = np.nonzero(mask)
        columns = {v: idx.astype(np.int64) for v, idx in zip(variables, index)}
        columns[VALUE] = values[mask]
    return _ship(pd.DataFrame(columns), variables, semiring, spark, name)


def from_scipy(
    matrix: Any,
    variables: Sequence[str] = (ROW, COL),
    semiring: Union[str, Semiring] = "real",
    spark: "SparkSession | None" = None,
    name: str | None = None,
    pattern: bool = False,
) -> Factor:
    """A scipy sparse matrix (or array) as a factor over its stored entries.

    Stored entries equal to the semiring's zero (explicit zeros, for
    real/counting) are dropped; repeated (i, j) entries are ⊕-merged (in
    Spark, with the semiring's ⊕: scipy's ``sum_duplicates`` would add them
    whatever the semiring).

    Parameters
    ----------
    matrix : scipy.sparse matrix or array (any format), 2-d
    variables : pair of str
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"matrix"``.
    pattern : bool
        Only the positions count (a Matrix Market ``pattern`` matrix): every
        stored entry gets the semiring's one, whatever its value.

    Returns
    -------
    Factor
        Two variables and ``value``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.coo_matrix(([5.0, 0.0], ([0, 1], [1, 0])), shape=(2, 2))  # one explicit zero
    >>> sorted(tuple(r) for r in from_scipy(m).df.collect())
    [(0, 1, 5.0)]
    >>> sorted(tuple(r) for r in from_scipy(m, semiring="min_plus", pattern=True).df.collect())
    [(0, 1, 0.0), (1, 0, 0.0)]
    """
    import pandas as pd
    import scipy.sparse

    semiring = get_semiring(semiring)
    variables = check_variables(variables, arity=2)
    name = name or "matrix"
    coo = scipy.sparse.coo_matrix(matrix)
    rows, cols = np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64)
    if pattern:
        values = np.full(rows.shape, semiring.one, dtype=_numpy_type(semiring))
    else:
        values = _coerce_values(coo.data, semiring, name)
    keep = _nonzero_mask(values, semiring)
    rows, cols, values = rows[keep], cols[keep], values[keep]
    pdf = pd.DataFrame({variables[0]: rows, variables[1]: cols, VALUE: values})
    factor = _ship(pdf, variables, semiring, spark, name)
    # Repeated (i, j) entries are rare; merge them only when there are some.
    n_cols = int(cols.max()) + 1 if cols.size else 1
    codes = np.sort(rows * n_cols + cols)  # a sort and a look at neighbours: np.unique costs 20x more here
    if rows.size and bool(np.any(codes[1:] == codes[:-1])):
        factor = factor.normalize()
    return factor


def from_pandas(
    pdf: "pd.DataFrame",
    variables: Sequence[str] | None = None,
    value: str | None = VALUE,
    semiring: Union[str, Semiring] = "counting",
    spark: "SparkSession | None" = None,
    name: str | None = None,
) -> Factor:
    """A pandas DataFrame (small, on the driver) as a factor.

    Parameters
    ----------
    pdf : pandas.DataFrame
    variables : sequence of str, optional
        Default: every column but the value column.
    value : str or None
        Value column.  ``None``, or a missing column named exactly
        ``"value"``, makes every row one (a relation).
    semiring : str or Semiring
    spark : SparkSession, optional
    name : str, optional
        Default ``"pandas"``.

    Returns
    -------
    Factor
        Held on the driver: steps over it run in-process.

    Notes
    -----
    Nulls are checked on the driver (the data is there already); integer
    variable columns become ``bigint``; rows whose value is the semiring's
    zero are dropped; repeated keys are kept (``Factor.normalize`` merges).

    Raises
    ------
    MissingColumnError, NullKeyError, ValueTypeMismatchError
    InvalidFactorValueError
        A null or NaN value, or (``counting``) a negative one.

    Examples
    --------
    >>> import pandas as pd
    >>> f = from_pandas(pd.DataFrame({"a": [1, 2], "b": [3, 4], "value": [2, 0]}))
    >>> f.variables, [tuple(r) for r in f.df.collect()]
    (('a', 'b'), [(1, 3, 2)])
    """
    semiring = get_semiring(semiring)
    name = name or "pandas"
    source = f"factor {name!r}"
    columns = [str(c) for c in pdf.columns]
    pdf = pdf.set_axis(columns, axis=1)
    value = resolve_value(value, columns, source)
    if variables is None:
        variables = [c for c in columns if c != value]
    variables = check_variables(variables)
    for v in variables:
        if v not in columns:
            raise MissingColumnError(column=v, available=columns, source=source)
        nulls = int(pdf[v].isna().sum())
        if nulls:
            raise NullKeyError(factor=name, column=v, count=nulls)
    out = {v: (pdf[v].astype(np.int64) if pdf[v].dtype.kind in "iu" else pdf[v]) for v in variables}
    if value is None:
        values = np.full(len(pdf), semiring.one, dtype=_numpy_type(semiring))
    else:
        raw = pdf[value]
        nulls = int(raw.isna().sum())
        if nulls:
            problem = "NaN" if raw.dtype.kind == "f" else "null"
            raise InvalidFactorValueError(factor=name, column=value, problem=problem, count=nulls)
        values = _coerce_values(raw.to_numpy(), semiring, name, column=value)
    import pandas as pd

    frame = pd.DataFrame(out).reset_index(drop=True)
    frame[VALUE] = values
    frame = frame[_nonzero_mask(values, semiring)]
    return Factor(df=_held(spark, frame, variables, semiring), variables=variables, semiring=semiring, value=VALUE,
                  name=name)


# --- out of factors (small results only) ----------------------------------------------------


def to_pandas(factor: Factor, max_rows: int = 10_000_000) -> "pd.DataFrame":
    """Collect a factor to a pandas DataFrame (for small results only).

    Counts the rows first (one Spark job) and refuses more than
    ``max_rows``.  Columns: variables, then the value; rows sorted by the
    variables, so the output is deterministic.

    Parameters
    ----------
    factor : Factor
    max_rows : int
        Largest number of rows to bring to the driver.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ResultTooLargeError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> to_pandas(factor_of([(2, 1.5), (1, 3.0)], ["x"], "real")).values.tolist()
    [[1.0, 3.0], [2.0, 1.5]]
    """
    rows = factor.count()
    if rows > max_rows:
        raise ResultTooLargeError(factor=factor.name, rows=rows, max_rows=max_rows)
    pdf = factor.df.select(*factor.columns()).toPandas()  # bounded by max_rows
    if factor.variables and len(pdf):
        pdf = pdf.sort_values(list(factor.variables), kind="stable").reset_index(drop=True)
    return pdf


def to_scipy(factor: Factor, shape: tuple[int, int] | None = None, max_rows: int = 10_000_000):
    """A 2-variable factor as a ``scipy.sparse.csr_array`` (for small results only).

    Repeated keys are ⊕-merged first (:meth:`Factor.normalize`, in Spark),
    since scipy would add them whatever the semiring.  Boolean factors give
    a bool matrix.  Mind that scipy reads absent entries as 0, which is the
    semiring's zero only for +/× semirings.

    Parameters
    ----------
    factor : Factor
        Two variables holding non-negative integers (row, column).
    shape : (int, int), optional
        Default: (max row index + 1, max column index + 1).
    max_rows : int
        As in :func:`to_pandas`.

    Returns
    -------
    scipy.sparse.csr_array

    Raises
    ------
    NotAMatrixError, ResultTooLargeError

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> to_scipy(factor_of([(0, 1, 2.0), (1, 0, 3.0)], ["i", "j"], "real")).toarray().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    import scipy.sparse

    if len(factor.variables) != 2:
        raise NotAMatrixError(factor=factor.name, reason=f"it has {len(factor.variables)} variable(s)")
    for v in factor.variables:
        kind = dict(factor.dtypes())[v]
        if kind not in ("tinyint", "smallint", "int", "bigint"):
            raise NotAMatrixError(factor=factor.name, reason=f"variable {v!r} is {kind}, not an integer")
    held = _held_entries(factor)
    if held is not None:  # the driver holds the rows, one per (i, j): no Spark job
        i, j, values = held
    else:
        pdf = to_pandas(factor.normalize(), max_rows=max_rows)
        i, j = (pdf[v].to_numpy(dtype=np.int64) for v in factor.variables)
        values = pdf[factor.value].to_numpy(dtype=_numpy_type(factor.semiring))
    if i.size and (i.min() < 0 or j.min() < 0):
        raise NotAMatrixError(factor=factor.name, reason="it has negative indices")
    if shape is None:
        shape = (int(i.max()) + 1 if i.size else 0, int(j.max()) + 1 if j.size else 0)
    elif i.size and (i.max() >= shape[0] or j.max() >= shape[1]):
        raise NotAMatrixError(
            factor=factor.name, reason=f"index ({int(i.max())}, {int(j.max())}) is outside shape {tuple(shape)}"
        )
    return scipy.sparse.csr_array((values, (i, j)), shape=tuple(shape))


# --- helpers -------------------------------------------------------------------------------


def _coerce_values(values: np.ndarray, semiring: Semiring, factor: str, column: str = VALUE) -> np.ndarray:
    """Convert a numpy array of values to the semiring's type, or raise ValueTypeMismatchError."""
    values = np.asarray(values)
    kind = values.dtype.kind
    found = str(values.dtype)
    if kind not in "biuf":
        raise ValueTypeMismatchError(
            factor=factor, column=column, found=found, semiring=semiring.name, expected=semiring.value_type
        )
    if semiring.value_type == "boolean":
        if kind == "f" and np.isnan(values).any():
            nans = int(np.isnan(values).sum())
            raise InvalidFactorValueError(factor=factor, column=column, problem="NaN", count=nans)
        return values != 0  # non-zero means true
    if semiring.value_type == "bigint":
        if kind == "f":
            finite = np.isfinite(values)
            if not finite.all() or not np.array_equal(values, np.round(values)):
                raise ValueTypeMismatchError(
                    factor=factor,
                    column=column,
                    found=f"{found} with non-integer values",
                    semiring=semiring.name,
                    expected="bigint",
                )
        values = values.astype(np.int64)
        if semiring.counts and kind != "b":  # a count is never negative (a signed one: "integer")
            negative = int(np.count_nonzero(values < 0))
            if negative:
                raise InvalidFactorValueError(factor=factor, column=column, problem="negative", count=negative)
        return values
    values = values.astype(np.float64)
    nans = int(np.isnan(values).sum())
    if nans:
        raise InvalidFactorValueError(factor=factor, column=column, problem="NaN", count=nans)
    return values


def _nonzero_mask(values: np.ndarray, semiring: Semiring) -> np.ndarray:
    """Entries that are not the semiring's zero (0 for +/×, +inf for min_plus, False for ∨/∧)."""
    return values != np.asarray(semiring.zero, dtype=values.dtype)


def _numpy_type(semiring: Semiring):
    return {"bigint": np.int64, "double": np.float64, "boolean": np.bool_}[semiring.value_type]


def _ship(pdf: "pd.DataFrame", variables: Sequence[str], semiring: Semiring, spark, name: str) -> Factor:
    """Driver-side index/value columns as a factor (its DataFrame made when Spark needs it)."""
    return Factor(relation=_held(spark, pdf, variables, semiring), variables=tuple(variables), semiring=semiring,
                  value=VALUE, name=name)


def _held(spark, frame: "pd.DataFrame", variables: Sequence[str], semiring: Semiring) -> "Relation":
    """``frame``'s columns ``variables`` and ``value`` as rows the driver holds
    (:meth:`faq.relation.Relation.from_arrays`): steps over the factor run in-process without fetching
    it, and Spark gets the rows (Arrow) only when a job needs them."""
    from faq.relation import Relation

    columns = {v: frame[v].to_numpy() for v in variables}
    columns[VALUE] = frame[VALUE].to_numpy().astype(_numpy_type(semiring), copy=False)
    return Relation.from_arrays(columns, {VALUE: semiring.value_type}, driver_session(spark))


def _held_entries(factor: Factor) -> "tuple[np.ndarray, np.ndarray, np.ndarray] | None":
    """(rows, columns, values) of a 2-variable factor the driver holds, zeros left out, when no
    (i, j) repeats (else None: :meth:`Factor.normalize` merges repeats with the semiring's ⊕)."""
    relation = factor.relation
    if not relation.held:
        return None
    copy = relation.arrays
    i, j = (np.asarray(copy[v], dtype=np.int64) for v in factor.variables)
    values = np.asarray(copy[factor.value], dtype=_numpy_type(factor.semiring))
    if len(i) and len(np.unique(np.stack([i, j], axis=1), axis=0)) < len(i):
        return None
    keep = _nonzero_mask(values, factor.semiring)
    return i[keep], j[keep], values[keep]
