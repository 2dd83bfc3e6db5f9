"""Error classes of faq.

Every error raised on bad input is an instance of :class:`FAQError` and of the
matching built-in type (``ValueError``, ``TypeError``, ``KeyError``...), so both
``except FAQError`` and ``except ValueError`` catch it.  Each class keeps the
parameters that describe the problem in :attr:`FAQError.parameters`, so tests
and callers can inspect *what* went wrong without parsing the message
(the habit of ``pyspark.errors``).

Examples
--------
>>> from faq.errors import UnknownSemiringError
>>> err = UnknownSemiringError(name="tropical", valid=["counting", "real"])
>>> err.parameters["name"]
'tropical'
>>> print(err)
[UNKNOWN_SEMIRING] unknown semiring 'tropical'; valid names: counting, real
>>> isinstance(err, ValueError)
True
"""

from __future__ import annotations

from typing import Any, Sequence


class FAQError(Exception):
    """Base class of every faq error.

    Subclasses set :attr:`error_class` (a stable upper-case identifier) and
    build their message from keyword parameters.
    """

    error_class: str = "FAQ_ERROR"

    def __init__(self, message: str, **parameters: Any) -> None:
        self.parameters: dict[str, Any] = parameters
        self.message = message
        super().__init__(f"[{self.error_class}] {message}")


class FAQValueError(FAQError, ValueError):
    """A value given to faq is not acceptable."""

    error_class = "INVALID_VALUE"


class FAQTypeError(FAQError, TypeError):
    """Types do not fit together."""

    error_class = "TYPE_MISMATCH"


class FAQRuntimeError(FAQError, RuntimeError):
    """Something faq relies on failed at run time."""

    error_class = "RUNTIME"


# --- semirings -------------------------------------------------------------


class UnknownSemiringError(FAQValueError, KeyError):
    """A semiring name is not in the registry."""

    error_class = "UNKNOWN_SEMIRING"

    def __init__(self, name: str, valid: Sequence[str]) -> None:
        super().__init__(
            f"unknown semiring {name!r}; valid names: {', '.join(sorted(valid))}",
            name=name,
            valid=sorted(valid),
        )

    __str__ = Exception.__str__  # KeyError would otherwise repr() the message


class SemiringLawError(FAQValueError):
    """A semiring law does not hold on the sample values."""

    error_class = "SEMIRING_LAW"

    def __init__(self, semiring: str, violations: Sequence[str]) -> None:
        shown = "; ".join(violations[:5])
        more = f" (+{len(violations) - 5} more)" if len(violations) > 5 else ""
        super().__init__(
            f"semiring {semiring!r} breaks its laws: {shown}{more}",
            semiring=semiring,
            violations=list(violations),
        )


class SemiringMismatchError(FAQTypeError):
    """Factors or aggregates of one query use incompatible semirings."""

    error_class = "SEMIRING_MISMATCH"

    def __init__(self, what: str, expected: str, found: str) -> None:
        super().__init__(
            f"{what} uses semiring {found!r} but the query uses {expected!r}; "
            "convert the factor (Factor.with_semiring) or pick one semiring",
            what=what,
            expected=expected,
            found=found,
        )


class NotARingError(FAQTypeError):
    """An operation needs additive inverses the semiring does not have."""

    error_class = "NOT_A_RING"

    def __init__(self, semiring: str, operation: str) -> None:
        super().__init__(
            f"{operation} needs a ring (additive inverses), but {semiring!r} is not one",
            semiring=semiring,
            operation=operation,
        )


# --- factors and input -----------------------------------------------------


class MissingColumnError(FAQValueError, KeyError):
    """A column the caller named is not in the data."""

    error_class = "MISSING_COLUMN"

    def __init__(self, column: str, available: Sequence[str], source: str) -> None:
        super().__init__(
            f"{source}: no column {column!r}; the columns are {', '.join(available) or '(none)'}",
            column=column,
            available=list(available),
            source=source,
        )

    __str__ = Exception.__str__


class MalformedInputError(FAQValueError):
    """A line of an input file cannot be read."""

    error_class = "MALFORMED_INPUT"

    def __init__(self, path: str, line_number: int, line: str, reason: str) -> None:
        shown = line if len(line) <= 80 else line[:77] + "..."
        super().__init__(
            f"{path}, line {line_number}: {reason}: {shown!r}",
            path=path,
            line_number=line_number,
            line=line,
            reason=reason,
        )


class NullKeyError(FAQValueError):
    """A variable column of a factor holds a null."""

    error_class = "NULL_KEY"

    def __init__(self, factor: str, column: str, count: int) -> None:
        super().__init__(
            f"factor {factor!r}: variable column {column!r} has {count} null value(s); "
            "drop or fill them before building the factor",
            factor=factor,
            column=column,
            count=count,
        )


class InvalidFactorValueError(FAQValueError):
    """A value column holds something its semiring cannot take (null, NaN)."""

    error_class = "INVALID_FACTOR_VALUE"

    def __init__(self, factor: str, column: str, problem: str, count: int) -> None:
        super().__init__(
            f"factor {factor!r}: value column {column!r} has {count} {problem} value(s)",
            factor=factor,
            column=column,
            problem=problem,
            count=count,
        )


class VariableTypeMismatchError(FAQTypeError):
    """One variable is bound to columns of different types in different factors."""

    error_class = "VARIABLE_TYPE_MISMATCH"

    def __init__(self, variable: str, types: dict[str, str]) -> None:
        shown = ", ".join(f"{f}: {t}" for f, t in types.items())
        super().__init__(
            f"variable {variable!r} has different column types in its factors ({shown}); "
            "cast the columns to one type",
            variable=variable,
            types=dict(types),
        )


class ValueTypeMismatchError(FAQTypeError):
    """A value column's type does not fit the semiring."""

    error_class = "VALUE_TYPE_MISMATCH"

    def __init__(self, factor: str, column: str, found: str, semiring: str, expected: str) -> None:
        super().__init__(
            f"factor {factor!r}: value column {column!r} is {found}, but semiring "
            f"{semiring!r} holds {expected} values",
            factor=factor,
            column=column,
            found=found,
            semiring=semiring,
            expected=expected,
        )


# --- queries ---------------------------------------------------------------


class QueryParseError(FAQValueError):
    """The text form of a query cannot be parsed."""

    error_class = "QUERY_PARSE"

    def __init__(self, text: str, position: int, reason: str) -> None:
        pointer = " " * position + "^"
        super().__init__(
            f"{reason} at position {position}\n  {text}\n  {pointer}",
            text=text,
            position=position,
            reason=reason,
        )


class UnknownFactorError(FAQValueError, KeyError):
    """A query names a factor that was not given."""

    error_class = "UNKNOWN_FACTOR"

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"the query uses factor {name!r}, which was not given; given: "
            f"{', '.join(sorted(known)) or '(none)'}",
            name=name,
            known=sorted(known),
        )

    __str__ = Exception.__str__


class ArityMismatchError(FAQValueError):
    """An atom has a different number of variables than its factor."""

    error_class = "ARITY_MISMATCH"

    def __init__(self, factor: str, expected: int, found: int) -> None:
        super().__init__(
            f"factor {factor!r} has {expected} variable column(s) but the query gives it {found}",
            factor=factor,
            expected=expected,
            found=found,
        )


class UnknownVariableError(FAQValueError, KeyError):
    """A variable is named (free, or with an aggregate) that no factor mentions."""

    error_class = "UNKNOWN_VARIABLE"

    def __init__(self, variable: str, role: str, known: Sequence[str]) -> None:
        super().__init__(
            f"{role} variable {variable!r} appears in no factor; the variables are "
            f"{', '.join(sorted(known)) or '(none)'}",
            variable=variable,
            role=role,
            known=sorted(known),
        )

    __str__ = Exception.__str__


# --- planner ---------------------------------------------------------------


class LPCertificationError(FAQRuntimeError):
    """An LP answer could not be certified optimal (primal/dual check failed)."""

    error_class = "LP_NOT_CERTIFIED"

    def __init__(self, problem: str, detail: str) -> None:
        super().__init__(f"{problem}: {detail}", problem=problem, detail=detail)


class PlanError(FAQValueError):
    """A plan or elimination order is not valid for its query."""

    error_class = "INVALID_PLAN"

    def __init__(self, reason: str) -> None:
        super().__init__(reason, reason=reason)


# --- environment -----------------------------------------------------------


class JavaNotFoundError(FAQRuntimeError):
    """No Java 17+ runtime, which Spark needs."""

    error_class = "JAVA_NOT_FOUND"

    def __init__(self, found: str | None) -> None:
        what = f"found {found}" if found else "no 'java' on PATH and no JAVA_HOME"
        super().__init__(
            f"Spark needs Java 17 or newer ({what}); install it, e.g. "
            "'apt-get install openjdk-17-jre-headless', or set JAVA_HOME",
            found=found,
        )


class MissingDependencyError(FAQError, ImportError):
    """An optional package that a feature needs is not installed."""

    error_class = "MISSING_DEPENDENCY"

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs {package}, which is not installed; install faq's {extra!r} extra: "
            f"pip install 'faq[{extra}]' (or pip install {package})",
            package=package,
            extra=extra,
            feature=feature,
        )
        self.name = package  # ImportError's attribute: the module that could not be imported
