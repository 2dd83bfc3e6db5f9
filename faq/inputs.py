"""What the jobs accept: any input kind a user holds, as the Factor the engine joins.

Every public job takes its tables in the forms a PySpark, pandas or Arrow
user has at hand, the same everywhere:

* a **factor** (an argument of :func:`faq.query`, :func:`faq.plan`,
  :func:`faq.explain`, :func:`faq.maintain`) is a :class:`~faq.factor.Factor`;
  a Spark or pandas DataFrame or an Arrow table whose columns are the
  variables (or any table exporting an Arrow stream, e.g. a polars
  DataFrame: :mod:`faq.input_kinds` tells the kinds apart, once, for every
  job), and whose column named ``value`` (if any) holds the values
  (without one every row counts one); rows of Python tuples (keys only,
  each row counting one); or a path read by :func:`faq.io.read_factor`
  (``.csv``, ``.parquet``, ``.mtx``, edge lists).  Factors come as keyword
  arguments (``e=edges``) or, where a name would collide with a keyword
  (``plan``, ``semiring``, ``progress``, ``placement``, ``state``), in a
  mapping given after the query text;
* a **graph** is what :func:`faq.graphs.edges.edge_factor` takes;
* a **matrix** (:func:`faq.matrix_chain`) is a table of row index, column
  index and ``value``, a Factor, or a Matrix Market path.

pandas, Arrow and tuple inputs stay held on the driver, where steps over
them run in-process.

Examples
--------
>>> import pandas as pd
>>> f = as_factor(pd.DataFrame({"a": [1, 2], "b": [2, 3], "value": [0.5, 1.5]}), "w")
>>> f.variables, f.semiring.name
(('a', 'b'), 'real')
>>> sorted(factors_of({"plan": [(1, 2)]}, {"e": [(2, 3)]}, None))
['e', 'plan']
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from faq.errors import FAQTypeError, InvalidArgumentError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.factor import Factor
    from faq.semirings import Semiring

__all__ = ["FactorLike", "SemiringLike", "as_factor", "factors_of", "matrix_factor", "query_text", "state_directory",
           "VALUE"]

FactorLike = Union["Factor", "DataFrame", Any, str, os.PathLike]
SemiringLike = Union[str, "Semiring", None]

VALUE = "value"  # the value column of a factor given as a table
_VALUE_SEMIRINGS = {"double": "real", "float": "real", "boolean": "boolean"}  # default: counting


def as_factor(value: FactorLike, name: str = "factor", semiring: SemiringLike = None) -> "Factor":
    """A :class:`~faq.factor.Factor` from any input kind (see the module notes).

    Parameters
    ----------
    value : Factor, Spark or pandas DataFrame, Arrow table, rows of tuples, or path
        A table's ``value`` column (if any) holds the values.
    name : str
        The factor's name (what errors and plans call it).
    semiring : str or Semiring, optional
        Default: ``real`` for double values, ``boolean`` for booleans,
        ``counting`` otherwise (and without a value column).

    Returns
    -------
    Factor

    Raises
    ------
    FAQTypeError
        Anything else, naming the factor and what it was.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> df = get_session().createDataFrame([(1, 2, 0.5)], ["a", "b", "value"])
    >>> f = as_factor(df, "w")
    >>> f.variables, f.semiring.name, f.name
    (('a', 'b'), 'real', 'w')
    >>> as_factor([(1, 2), (2, 3)], "e").semiring.name   # rows of keys: each counts one
    'counting'
    """
    from faq.factor import Factor
    from faq.input_kinds import PATH, ROWS, as_pandas, input_kind, is_pandas

    if isinstance(value, Factor):
        return value if semiring is None else value.with_semiring(semiring)
    kind = input_kind(value)
    if kind == PATH:
        from faq.io import read_factor

        extra = {} if semiring is None else {"semiring": semiring}
        return read_factor(value, name=name, **extra)
    value = _rows_table(value, name) if kind == ROWS else as_pandas(value, f"factor {name!r}")
    if is_pandas(value):
        # A table on the driver already: it stays held there (steps over it run in-process).
        from faq.io.convert import from_pandas

        kind = value[VALUE].dtype.kind if VALUE in value.columns else None
        from faq.semirings import get_semiring

        if kind == "O" and semiring is not None and get_semiring(semiring).structured:  # a tuple a row
            return tuple_rows_factor(value, [str(c) for c in value.columns if c != VALUE], VALUE, semiring, name)
        ring = semiring or {"f": "real", "b": "boolean"}.get(kind, "counting")
        return from_pandas(value, value=VALUE if kind else None, semiring=ring, name=name)
    df = spark_dataframe(value, "factor " + repr(name))
    columns = list(df.columns)
    if VALUE in columns:
        kind = dict(df.dtypes)[VALUE]
        ring = semiring or _VALUE_SEMIRINGS.get(kind, "counting")
        return Factor.from_dataframe(df, [c for c in columns if c != VALUE], ring, value=VALUE, name=name)
    return Factor.from_dataframe(df, columns, semiring or "counting", value=None, name=name)


def tuple_rows_factor(frame: Any, variables: Sequence[str], value: str, semiring: SemiringLike,
                      name: str) -> "Factor":
    """A pandas table whose column ``value`` holds one tuple (or list) of numbers a row, as a Factor of
    ``semiring``'s values held on the driver (:func:`faq.factor.factor_of` checks each against its width)."""
    from faq.factor import factor_of

    rows = zip(*(frame[v].tolist() for v in variables), (tuple(x) for x in frame[value].tolist()))
    return factor_of(list(rows), list(variables), semiring, name=name)


def query_text(text: Any) -> Any:
    """``text`` when it is a query's text or a parsed query (:class:`~faq.language.FAQ`), else ``INPUT_TYPE``.

    >>> query_text(123)
    Traceback (most recent call last):
    ...
    faq.errors.FAQTypeError: [INPUT_TYPE] the query must be its text, e.g. ...; got int
    """
    from faq.language import FAQ

    if isinstance(text, (str, FAQ)):
        return text
    raise FAQTypeError(error_class="INPUT_TYPE", what="the query", expected="its text, e.g. 'count() := e(a,b)', or "
                       "a parsed query (faq.parse_query)", found=type(text).__name__, argument="text")


def factors_of(given: Optional[Mapping[str, FactorLike]], named: Mapping[str, FactorLike],
               semiring: SemiringLike) -> dict[str, "Factor"]:
    """The factors of a query: those in the mapping ``given`` and those passed by name, as Factors.

    A name in both is refused (which one was meant?).
    """
    if given is not None and not isinstance(given, Mapping):
        raise FAQTypeError(error_class="INPUT_TYPE", what="the factors after the query text",
                           expected="a mapping of factor names to tables", found=type(given).__name__,
                           argument="factors")
    both = sorted(set(given or {}) & set(named))
    if both:
        raise InvalidArgumentError(argument="factors", value=both, reason="given both in the mapping and by name")
    return {name: as_factor(value, name, semiring) for name, value in {**(given or {}), **named}.items()}


def matrix_factor(value: FactorLike, k: int) -> "Factor":
    """The ``k``-th matrix of a chain: a table of row index, column index and ``value``, a Factor or a path.

    >>> import pandas as pd
    >>> matrix_factor(pd.DataFrame({"i": [0], "j": [1], "value": [2.0]}), 1).variables
    ('i', 'j')
    """
    from faq.factor import Factor
    from faq.input_kinds import ARROW, PANDAS, PATH, ROWS, arrow_table, input_kind

    kind = input_kind(value)
    if isinstance(value, Factor) or kind == PATH:
        return as_factor(value, f"M{k}")
    if kind == ROWS:
        raise FAQTypeError(error_class="INPUT_TYPE", what=f"matrix {k}", expected="a table of row index, column "
                           "index and value, a Factor or a Matrix Market path", found="rows of tuples",
                           argument=f"matrix {k}")
    if kind in (PANDAS, ARROW):
        value = value if kind == PANDAS else arrow_table(value, f"matrix {k}")
        columns = [str(c) for c in (value.columns if kind == PANDAS else value.column_names)]
    else:
        value = spark_dataframe(value, f"matrix {k}")
        columns = list(value.columns)
    keys = [c for c in columns if c != VALUE]
    if len(keys) != 2:
        raise FAQTypeError(error_class="MATRIX_COLUMNS", index=k, columns=columns, value=VALUE,
                           argument=f"matrix {k}", found=columns)
    return as_factor(value, f"M{k}", None if VALUE in columns else "real")


def state_directory(state: Optional[str], path: Optional[str], where: str) -> Optional[str]:
    """The state directory a maintained job was given: ``state=``, or ``path=``, its old name (warned).

    ``path=`` now means an input file everywhere; a state directory is
    ``state=``.  Both at once is refused.

    >>> state_directory("st", None, "faq.maintain")
    'st'
    """
    if path is None:
        return state
    if state is not None:
        raise InvalidArgumentError(argument="path", value=path, reason=f"{where} was given state= too; path= is "
                                   "the old name of state=")
    warnings.warn(f"{where}(path=...) is deprecated: the state directory is state=", DeprecationWarning,
                  stacklevel=3)
    return os.fspath(path)


def spark_dataframe(value: Any, what: str) -> "DataFrame":
    """``value`` if it is a Spark DataFrame, else an error naming what it should have been."""
    from faq.spark import is_dataframe

    if is_dataframe(value):
        return value
    raise FAQTypeError(error_class="INPUT_TYPE", what=what, expected="a Spark or pandas DataFrame, an Arrow "
                       "table (or a table exporting an Arrow stream, e.g. polars), rows of tuples, a Factor or a "
                       "path", found=type(value).__name__, argument=what)


def _rows_table(rows: Any, name: str) -> Any:
    """Rows of Python tuples as a pandas table of keys ``x1 … xk`` (each row counts one)."""
    import pandas as pd

    rows = [tuple(row) for row in rows]
    widths = sorted({len(row) for row in rows})
    if len(widths) != 1:
        raise FAQTypeError(error_class="INPUT_TYPE", what=f"factor {name!r}", expected="rows of tuples, all of "
                           "one width (keys only: each row counts one)", found=f"rows of {widths} values",
                           argument=name)
    return pd.DataFrame(rows, columns=[f"x{i}" for i in range(1, widths[0] + 1)])
