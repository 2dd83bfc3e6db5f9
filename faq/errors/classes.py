"""The error classes callers catch by name: each only names its catalog entry and its bases.

A class holds no code: its message comes from its entry in
:data:`~faq.errors.catalog.ERROR_CLASSES`, its parameters are checked
there, and its bases (:mod:`faq.errors.base`) say which built-in type it
also is.  They follow the catalog's order: semirings, factors and input
files, queries and plans, the environment, change streams, maintained
queries, fixpoints.

Examples
--------
>>> err = UnknownSemiringError(name="tropical", valid=["real", "counting"])
>>> err.parameters["valid"], isinstance(err, KeyError), isinstance(err, ValueError)
(['counting', 'real'], True, True)
"""

from __future__ import annotations

from faq.errors.base import FAQError, FAQKeyError, FAQRuntimeError, FAQTypeError, FAQValueError


class UnknownSemiringError(FAQKeyError):
    """A semiring name is not in the registry."""

    error_class = "UNKNOWN_SEMIRING"


class SemiringLawError(FAQValueError):
    """A semiring law does not hold on the sample values."""

    error_class = "SEMIRING_LAW"


class SemiringMismatchError(FAQTypeError):
    """Factors or aggregates of one query use incompatible semirings."""

    error_class = "SEMIRING_MISMATCH"


class NotARingError(FAQTypeError):
    """An operation needs additive inverses the semiring does not have."""

    error_class = "NOT_A_RING"


class MissingColumnError(FAQKeyError):
    """A column the caller named is not in the data."""

    error_class = "MISSING_COLUMN"


class InputNotFoundError(FAQValueError, FileNotFoundError):
    """An input path does not exist (raised instead of Spark's Java trace)."""

    error_class = "INPUT_NOT_FOUND"


class MalformedInputError(FAQValueError):
    """An input file cannot be read: a bad line (``line_number``, ``line``), or a corrupt or truncated file."""

    error_class = "MALFORMED_INPUT"


class MatrixTooLargeError(MalformedInputError):
    """A Matrix Market header declares a matrix whose arrays would not fit the memory budget."""

    error_class = "MATRIX_TOO_LARGE"


class NullKeyError(FAQValueError):
    """A variable column of a factor holds a null (from a file: ``path``, and the first such ``row``)."""

    error_class = "NULL_KEY"


class InvalidFactorValueError(FAQValueError):
    """A value column holds something its semiring cannot take (null, NaN)."""

    error_class = "INVALID_FACTOR_VALUE"


class VariableTypeMismatchError(FAQTypeError):
    """One variable is bound to columns of different types in different factors."""

    error_class = "VARIABLE_TYPE_MISMATCH"


class ValueTypeMismatchError(FAQTypeError):
    """A value column's type does not fit the semiring."""

    error_class = "VALUE_TYPE_MISMATCH"


class InvalidArgumentError(FAQValueError):
    """An argument of a loader, exporter or job has a value it does not accept."""

    error_class = "INVALID_ARGUMENT"


class ResultTooLargeError(FAQValueError):
    """A factor has more rows than an exporter was allowed to bring to the driver."""

    error_class = "RESULT_TOO_LARGE"


class NotAMatrixError(FAQValueError):
    """A factor cannot be exported as a sparse matrix."""

    error_class = "NOT_A_MATRIX"


class QueryParseError(FAQValueError):
    """The text form of a query cannot be parsed."""

    error_class = "QUERY_PARSE"


class QueryTooLargeError(FAQValueError):
    """A query is over a size faq plans (``what``: characters, atoms, variables ...; ``size``, ``limit``)."""

    error_class = "QUERY_TOO_LARGE"


class MotifPatternError(FAQValueError):
    """A motif pattern cannot be parsed or makes no sense (``position``: 0-based offset in ``text``)."""

    error_class = "MOTIF_PATTERN"


class UnknownFactorError(FAQKeyError):
    """A query names a factor that was not given."""

    error_class = "UNKNOWN_FACTOR"


class ArityMismatchError(FAQValueError):
    """An atom has a different number of variables than its factor."""

    error_class = "ARITY_MISMATCH"


class UnknownVariableError(FAQKeyError):
    """A variable is named (free, or with an aggregate) that no factor mentions."""

    error_class = "UNKNOWN_VARIABLE"


class LPCertificationError(FAQRuntimeError):
    """An LP answer could not be certified optimal (primal/dual check failed)."""

    error_class = "LP_NOT_CERTIFIED"


class PlanError(FAQValueError):
    """A plan or elimination order is not valid for its query."""

    error_class = "INVALID_PLAN"


class StalePlanError(PlanError):
    """A saved plan does not fit what it is given: another query or semiring, other factor key types, or
    factor sizes beyond its margin (``what`` names it, ``planned`` and ``found`` the two values; see
    :mod:`faq.insideout.staleness`)."""

    error_class = "STALE_PLAN"


class IntegerOverflowError(FAQRuntimeError, ArithmeticError):
    """An in-process step's int64 ⊗ or ⊕ overflowed.

    ``operation``, ``semiring`` and ``where`` (a join or an aggregation) say
    which; a Spark step fails the same way (Spark's ANSI arithmetic).
    """

    error_class = "INTEGER_OVERFLOW"


class IndexDirectoryError(FAQRuntimeError):
    """The directory for an executor-built index's inputs cannot be written (``spark.faq.indexDir``)."""

    error_class = "INDEX_DIRECTORY"


class MappedIndexError(FAQValueError):
    """A file read as a mapped index (:mod:`faq.joins.mapped`) is not one: ``magic`` is what it starts with."""

    error_class = "NOT_A_MAPPED_INDEX"


class ScopeClosedError(FAQRuntimeError):
    """A closed result's :class:`~faq.scope.Scope` was asked to own another resource (``resource``: its type)."""

    error_class = "SCOPE_CLOSED"


class UnreleasableResourceError(FAQTypeError):
    """A :class:`~faq.scope.Scope` was given a resource it cannot release, without ``release=``."""

    error_class = "UNRELEASABLE_RESOURCE"


class HeldColumnsError(FAQValueError):
    """Rows the driver holds (:meth:`faq.relation.Relation.from_arrays`) given as columns of different
    lengths."""

    error_class = "HELD_COLUMN_LENGTHS"


class WorkerEnvironmentError(FAQRuntimeError):
    """The Spark workers' Python cannot run faq's tasks (:mod:`faq.workers`): ``problems`` says why.

    ``executable`` and ``python`` are the worker's interpreter and version
    (when the probe could not run at all: the interpreter as set, and
    ``"unknown"`` or the version Spark names); ``report``, when the probe
    ran, the worker's full :class:`faq.workers.WorkerReport`.
    """

    error_class = "WORKER_ENVIRONMENT"


class TimeTypeError(FAQTypeError):
    """A time column's type is not an orderable scalar (number, date, timestamp, string...)."""

    error_class = "INVALID_TIME_TYPE"


class DiffTypeError(FAQTypeError):
    """A diff column is not numeric, so its retraction (−diff) cannot be formed."""

    error_class = "INVALID_DIFF_TYPE"


class ColumnTypeMismatchError(FAQTypeError):
    """A key or time column has incompatible types on the two sides of an as-of join."""

    error_class = "ASOF_TYPE_MISMATCH"


class ColumnRoleError(FAQValueError):
    """One column is given two roles (e.g. both time and diff, or both key and time)."""

    error_class = "COLUMN_ROLE"


class ColumnClashError(FAQValueError):
    """The result of an as-of join would have two columns of the same name."""

    error_class = "COLUMN_CLASH"


class AlreadyDifferentiatedError(FAQValueError):
    """``differentiate`` was given a stream that already has a tick column."""

    error_class = "ALREADY_DIFFERENTIATED"


class NotDifferentiatedError(FAQValueError):
    """``integrate`` was given a stream without a tick column."""

    error_class = "NOT_DIFFERENTIATED"


class InvalidJoinTypeError(FAQValueError):
    """``how`` is not a join type ``asof_join`` supports."""

    error_class = "INVALID_JOIN_TYPE"


class NonMonotoneUpdateError(FAQValueError):
    """An update that an insert-only (monotone) maintained answer cannot take.

    In an idempotent semiring (min, max, ∨) an update sets a key's value and
    must improve it (``new ⊕ old = new``).  ``kind`` is ``"deletion"`` or
    ``"worsening"``; ``example`` a key, an edge ``(src, dst)`` or
    ``(src, dst, old, new)``; ``where`` the batch file and line.  Maintained
    queries, tracked motifs and maintained fixpoints all raise this class;
    ``recompute=True`` recomputes from scratch instead.
    """

    error_class = "NON_MONOTONE_UPDATE"


#: The name maintained queries used before the classes were merged.
NonMonotoneDeltaError = NonMonotoneUpdateError


class NegativeCountError(FAQValueError):
    """A delta would leave a counting factor with a negative multiplicity (deleting a missing row)."""

    error_class = "NEGATIVE_COUNT"


class NotMaintainableError(FAQTypeError):
    """The query cannot be maintained by delta rules (``reason`` says why); it can still be recomputed."""

    error_class = "NOT_MAINTAINABLE"


class BatchAlreadyAppliedError(FAQValueError):
    """A batch names a version the state has reached already: it is refused, not counted twice."""

    error_class = "BATCH_ALREADY_APPLIED"


class VersionGapError(FAQValueError):
    """A batch names a version beyond the next one: an earlier batch is missing."""

    error_class = "VERSION_GAP"


class StateDirectoryError(FAQRuntimeError):
    """A directory does not hold a saved maintained state (or holds a different kind)."""

    error_class = "STATE_DIRECTORY"


class StateUntrustedError(StateDirectoryError):
    """A state directory (or one of its parents, or a file in it) another user could write; ``fix`` says what to do."""

    error_class = "STATE_UNTRUSTED"


class StateJobMismatchError(StateDirectoryError):
    """A resumed state was made by another job: ``field`` differs (``saved`` then, ``given`` now)."""

    error_class = "STATE_JOB_MISMATCH"


class StateLockedError(StateDirectoryError):
    """Another process (or another object of this one) is the writer of a state directory; ``holder`` says who."""

    error_class = "STATE_LOCKED"


class UnsupportedSinkJobError(FAQValueError):
    """``df.writeStream.format("faq").option("job", ...)`` names a job the sink does not maintain
    (``supported`` lists those it does)."""

    error_class = "UNSUPPORTED_SINK_JOB"


class InvalidDeltaError(FAQValueError):
    """A delta does not fit its factor (columns, types, or an unknown factor name)."""

    error_class = "INVALID_DELTA"


class InvalidBatchError(InvalidDeltaError):
    """A batch refused before it touched a maintained state: a column's type, a null, NaN, a fraction,
    a value out of range or a multiplicity (``problem``) in ``column`` of ``relation``, first at ``row``."""

    error_class = "INVALID_BATCH"


class CompactionFailedError(FAQRuntimeError):
    """Folding a resident relation's overlay into a new base failed in the background (e.g. out of memory)."""

    error_class = "COMPACTION_FAILED"


class NotIdempotentError(FAQTypeError):
    """A fixpoint needs a semiring whose ⊕ is idempotent (min, max, ∨)."""

    error_class = "NOT_IDEMPOTENT"


class FixpointNotConvergedError(FAQRuntimeError):
    """Values still improved after ``max_iterations`` iterations."""

    error_class = "FIXPOINT_NOT_CONVERGED"


class ResidentRoundsError(FAQRuntimeError):
    """The job whose tasks stay for a fixpoint's rounds (:mod:`faq.recursive.resident_rounds`) ended early."""

    error_class = "RESIDENT_ROUNDS_ENDED"


class NegativeCycleError(FAQValueError):
    """Values kept improving past the Bellman-Ford bound: a cycle that improves them forever.

    In ``min_plus`` that is a cycle of negative total weight reachable from
    the seeds; ``example`` is a node whose value was still improving.
    """

    error_class = "NEGATIVE_CYCLE"


class MissingDependencyError(FAQError, ImportError):
    """An optional package that a feature needs is not installed."""

    error_class = "MISSING_DEPENDENCY"

    @property
    def name(self) -> str:
        """ImportError's attribute: the module that could not be imported."""
        return self.parameters["package"]
