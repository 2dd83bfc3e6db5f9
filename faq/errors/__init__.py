"""Every error faq raises, in one catalog (the habit of ``pyspark.errors``).

An error has an upper-case name, e.g. ``"UNKNOWN_SEMIRING"``, whose entry in
:data:`ERROR_CLASSES` holds a message template (:meth:`str.format` syntax) and
the parameters the template takes.  :class:`FAQError` builds the message
``"[NAME] text"`` from the entry and keyword parameters and keeps the
parameters in :attr:`FAQError.parameters`, so tests and callers can see *what*
went wrong without parsing text.

Every error is an instance of :class:`FAQError` and of the matching built-in
type (``ValueError``, ``TypeError``, ``KeyError``, ``FileNotFoundError``...),
so both ``except FAQError`` and ``except ValueError`` catch it.  A Python class
exists where callers catch an error by class; it only names its entry and its
bases.  Any other entry is raised through the generic class of its kind, e.g.
``FAQRuntimeError(error_class="JAVA_NOT_FOUND", found=None)``.

Computed text in a message (a joined list, a clipped line, a caret under a
position) comes from a format spec on one parameter (``{valid:names}``, see
:data:`FORMAT_SPECS`) or from a ``derived`` field of the entry, never from
code in a class.

The catalog is a package, one idea per module:

:mod:`faq.errors.templates`
    :class:`ErrorClass` (one entry: template and parameters) and the
    format specs a template may use (:data:`FORMAT_SPECS`);
:mod:`faq.errors.catalog`
    :data:`ERROR_CLASSES`, every entry by name;
:mod:`faq.errors.base`
    :class:`FAQError` and the generic class of each kind
    (:class:`FAQValueError`, :class:`FAQKeyError`, :class:`FAQTypeError`,
    :class:`FAQRuntimeError`);
:mod:`faq.errors.classes`
    the classes callers catch by name.

Every name is importable from ``faq.errors`` itself (``from faq.errors
import PlanError``), as it was when the catalog was one module.

Examples
--------
>>> err = UnknownSemiringError(name="tropical", valid=["real", "counting"])
>>> print(err)
[UNKNOWN_SEMIRING] unknown semiring 'tropical'; valid names: counting, real
>>> err.error_class, err.parameters["valid"], isinstance(err, ValueError)
('UNKNOWN_SEMIRING', ['counting', 'real'], True)

An entry without a class of its own, raised through the generic class:

>>> print(FAQRuntimeError(error_class="JAVA_NOT_FOUND", found="Java 11"))
[JAVA_NOT_FOUND] Spark needs Java 17 or newer (found Java 11); install it, e.g. 'apt-get install openjdk-17-jre-headless', or set JAVA_HOME

A template's fields come from the parameters, their format specs and the
entry's derived fields:

>>> ERROR_CLASSES["QUERY_PARSE"].message
'{reason} at position {position}\\n  {shown}\\n  {caret}'
>>> print(QueryParseError(text="q() := e(a b)", position=11, reason="expected ','"))
[QUERY_PARSE] expected ',' at position 11
  q() := e(a b)
             ^
"""

from faq.errors.base import FAQError, FAQKeyError, FAQRuntimeError, FAQTypeError, FAQValueError
from faq.errors.catalog import ERROR_CLASSES
from faq.errors.classes import (  # the classes callers catch by name
    UnknownSemiringError,
    SemiringLawError,
    SemiringMismatchError,
    NotARingError,
    MissingColumnError,
    InputNotFoundError,
    MalformedInputError,
    MatrixTooLargeError,
    NullKeyError,
    InvalidFactorValueError,
    VariableTypeMismatchError,
    ValueTypeMismatchError,
    InvalidArgumentError,
    ResultTooLargeError,
    NotAMatrixError,
    QueryParseError,
    QueryTooLargeError,
    MotifPatternError,
    UnknownFactorError,
    ArityMismatchError,
    UnknownVariableError,
    LPCertificationError,
    PlanError,
    StalePlanError,
    IntegerOverflowError,
    IndexDirectoryError,
    MappedIndexError,
    ScopeClosedError,
    UnreleasableResourceError,
    HeldColumnsError,
    WorkerEnvironmentError,
    TimeTypeError,
    DiffTypeError,
    ColumnTypeMismatchError,
    ColumnRoleError,
    ColumnClashError,
    AlreadyDifferentiatedError,
    NotDifferentiatedError,
    InvalidJoinTypeError,
    NonMonotoneUpdateError,
    NegativeCountError,
    NotMaintainableError,
    BatchAlreadyAppliedError,
    VersionGapError,
    StateDirectoryError,
    StateLockedError,
    StateUntrustedError,
    StateJobMismatchError,
    InvalidDeltaError,
    InvalidBatchError,
    CompactionFailedError,
    NotIdempotentError,
    FixpointNotConvergedError,
    ResidentRoundsError,
    NegativeCycleError,
    MissingDependencyError,
    NonMonotoneDeltaError,
)
from faq.errors.templates import FORMAT_SPECS, ErrorClass, Parameters, template_fields

__all__ = [
    "ERROR_CLASSES", "FORMAT_SPECS", "ErrorClass", "Parameters", "template_fields", "FAQError", "FAQKeyError",
    "FAQRuntimeError", "FAQTypeError", "FAQValueError", "UnknownSemiringError", "SemiringLawError",
    "SemiringMismatchError", "NotARingError", "MissingColumnError", "InputNotFoundError",
    "MalformedInputError", "MatrixTooLargeError", "NullKeyError", "InvalidFactorValueError",
    "VariableTypeMismatchError",
    "ValueTypeMismatchError", "InvalidArgumentError", "ResultTooLargeError", "NotAMatrixError",
    "QueryParseError", "QueryTooLargeError", "MotifPatternError", "UnknownFactorError", "ArityMismatchError",
    "UnknownVariableError", "LPCertificationError", "PlanError", "StalePlanError", "IntegerOverflowError",
    "IndexDirectoryError", "MappedIndexError", "ScopeClosedError",
    "UnreleasableResourceError", "HeldColumnsError", "WorkerEnvironmentError", "TimeTypeError", "DiffTypeError",
    "ColumnTypeMismatchError", "ColumnRoleError", "ColumnClashError", "AlreadyDifferentiatedError",
    "NotDifferentiatedError", "InvalidJoinTypeError", "NonMonotoneUpdateError", "NegativeCountError",
    "NotMaintainableError", "BatchAlreadyAppliedError", "VersionGapError", "StateDirectoryError", "StateLockedError",
    "StateUntrustedError", "StateJobMismatchError",
    "InvalidDeltaError", "InvalidBatchError", "CompactionFailedError", "NotIdempotentError", "FixpointNotConvergedError",
    "ResidentRoundsError", "NegativeCycleError", "MissingDependencyError", "NonMonotoneDeltaError",
]

# Each class keeps the home it had when the catalog was one module: a traceback (and a doctest's
# expected one) names faq.errors.PlanError, and a pickled error refers to that name.
for _name in __all__:
    if isinstance(globals()[_name], type) and globals()[_name].__module__.startswith(f"{__name__}."):
        globals()[_name].__module__ = __name__
del _name
