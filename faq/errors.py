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
'{reason} at position {position}\\n  {text}\\n  {position:caret}'
>>> print(QueryParseError(text="q() := e(a b)", position=11, reason="expected ','"))
[QUERY_PARSE] expected ',' at position 11
  q() := e(a b)
             ^
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

Parameters = Mapping[str, Any]


# --- the formatters a template may use ----------------------------------------------------


def _names(values: Sequence[Any]) -> str:
    """``a, b, c``, or ``(none)`` for an empty list."""
    return ", ".join(str(v) for v in values) or "(none)"


def _caret(position: int) -> str:
    """A ``^`` under the 0-based ``position`` of the text on the line above."""
    return " " * position + "^"


def _clip(text: str, width: int = 80) -> str:
    """The text quoted, cut to ``width`` characters (an input line can be huge)."""
    return repr(text if len(text) <= width else text[: width - 3] + "...")


#: Format specs a template may put on one parameter: ``{valid:names}``.
FORMAT_SPECS: dict[str, Callable[[Any], str]] = {"names": _names, "caret": _caret, "clip": _clip}


class _TemplateFormatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in FORMAT_SPECS:
            return FORMAT_SPECS[format_spec](value)
        return super().format_field(value, format_spec)


_FORMATTER = _TemplateFormatter()


def template_fields(message: str) -> list[tuple[str, str]]:
    """The ``(field name, format spec)`` pairs of a template, in order.

    >>> template_fields("{path}, line {line_number}: {line:clip}")
    [('path', ''), ('line_number', ''), ('line', 'clip')]
    """
    return [(name.split(".")[0].split("[")[0], spec or "")
            for _, name, spec, _ in _FORMATTER.parse(message) if name is not None]


# --- one entry of the catalog -------------------------------------------------------------


@dataclass(frozen=True)
class ErrorClass:
    """The message template of one error name and the parameters it takes.

    Parameters
    ----------
    message : str
        :meth:`str.format` template.  Its fields are parameters (with a spec
        from :data:`FORMAT_SPECS` or a conversion such as ``!r``) or
        ``derived`` fields.
    parameters : tuple of str
        Every parameter, in the order positional arguments bind to them.
    optional : mapping
        Parameters a raiser may leave out, with the value the message uses
        then.  One left out is absent from :attr:`FAQError.parameters`.
    convert : mapping
        How a parameter is stored, e.g. ``sorted`` (any iterable becomes a
        sorted list) or ``list``.
    derived : mapping
        Text fields computed from all parameters (defaults filled in), for
        wording that depends on several of them.
    extra : bool
        Keyword parameters beyond ``parameters`` are kept (not shown).
    """

    message: str
    parameters: tuple[str, ...]
    optional: Mapping[str, Any] = field(default_factory=dict)
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    derived: Mapping[str, Callable[[Parameters], str]] = field(default_factory=dict)
    extra: bool = False

    def bind(self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters of one error: ``args`` bound in order, then ``kwargs``, converted.

        A wrong call is a bug in faq, so it raises ``TypeError`` naming the error.
        """
        if len(args) > len(self.parameters):
            raise TypeError(f"{name} takes at most {len(self.parameters)} parameters, got {len(args)}")
        given = dict(zip(self.parameters, args))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"{name}: parameter {key!r} given twice")
            if key not in self.parameters and not self.extra:
                raise TypeError(f"{name} has no parameter {key!r}; it takes {', '.join(self.parameters)}")
            given[key] = value
        missing = [p for p in self.parameters if p not in given and p not in self.optional]
        if missing:
            raise TypeError(f"{name} needs the parameter(s) {', '.join(missing)}")
        return {key: self.convert[key](value) if key in self.convert else value for key, value in given.items()}

    def render(self, parameters: Parameters) -> str:
        """The message text for these parameters (left-out optional ones take their default)."""
        values = {**self.optional, **parameters}
        values.update({key: make(values) for key, make in self.derived.items()})
        return _FORMATTER.format(self.message, **values)


# --- the catalog --------------------------------------------------------------------------


def _example(label: str) -> Callable[[Parameters], str]:
    """`` (e.g. <label> <example>)`` when an example was given."""
    return lambda p: f" (e.g. {label} {p['example']})" if p["example"] is not None else ""


def _non_monotone_example(p: Parameters) -> str:
    example, kind = p["example"], p["kind"]
    if example is None:
        return ""
    if kind == "worsening" and len(example) >= 4:
        return f" (e.g. edge {example[0]} -> {example[1]}: {example[2]} to {example[3]})"
    if p["factor"]:
        return f" (e.g. key {example})"
    return f" (e.g. edge {example[0]} -> {example[1]})"


def _first_violations(p: Parameters, shown: int = 5) -> str:
    violations = p["violations"]
    more = f" (+{len(violations) - shown} more)" if len(violations) > shown else ""
    return "; ".join(violations[:shown]) + more


_AT_POSITION = "{reason} at position {position}\n  {text}\n  {position:caret}"
_GENERIC = ErrorClass("{message}", ("message",), extra=True)

#: Every error name and its :class:`ErrorClass`.
ERROR_CLASSES: dict[str, ErrorClass] = {
    # generic: a message written by the raiser (prefer an entry of its own)
    "FAQ_ERROR": _GENERIC,
    "INVALID_VALUE": _GENERIC,
    "TYPE_MISMATCH": _GENERIC,
    "RUNTIME": _GENERIC,
    # semirings
    "UNKNOWN_SEMIRING": ErrorClass(
        "unknown semiring {name!r}; valid names: {valid:names}", ("name", "valid"), convert={"valid": sorted}
    ),
    "SEMIRING_LAW": ErrorClass(
        "semiring {semiring!r} breaks its laws: {shown}", ("semiring", "violations"),
        convert={"violations": list}, derived={"shown": _first_violations},
    ),
    "SEMIRING_MISMATCH": ErrorClass(
        "{what} uses semiring {found!r} but the query uses {expected!r}; convert the factor "
        "(Factor.with_semiring) or pick one semiring",
        ("what", "expected", "found"),
    ),
    "NOT_A_RING": ErrorClass(
        "{operation} needs a ring (additive inverses), but {semiring!r} is not one", ("semiring", "operation")
    ),
    # factors and input files
    "MISSING_COLUMN": ErrorClass(
        "{source}: no column {column!r}; the columns are {available:names}", ("column", "available", "source"),
        convert={"available": list},
    ),
    "INPUT_NOT_FOUND": ErrorClass("no such file or directory: {path!r}; check the path", ("path",)),
    "MALFORMED_INPUT": ErrorClass(
        "{path}{at_line}: {reason}{shown_line}", ("path", "line_number", "line", "reason"),
        optional={"line_number": None, "line": None},
        derived={
            "at_line": lambda p: f", line {p['line_number']}" if p["line_number"] is not None else "",
            "shown_line": lambda p: f": {_clip(p['line'])}" if p["line"] is not None else "",
        },
    ),
    "NULL_KEY": ErrorClass(
        "{in_file}factor {factor!r}: variable column {column!r} has {count} null value(s){first}; "
        "drop or fill them before building the factor",
        ("factor", "column", "count", "path", "row"), optional={"path": None, "row": None},
        derived={
            "in_file": lambda p: f"{p['path']}: " if p["path"] is not None else "",
            "first": lambda p: f" (the first: {p['row']})" if p["row"] is not None else "",
        },
    ),
    "INVALID_FACTOR_VALUE": ErrorClass(
        "factor {factor!r}: value column {column!r} has {count} {problem} value(s)",
        ("factor", "column", "problem", "count"),
    ),
    "VARIABLE_TYPE_MISMATCH": ErrorClass(
        "variable {variable!r} has different column types in its factors ({shown}); cast the columns to one type",
        ("variable", "types"), convert={"types": dict},
        derived={"shown": lambda p: ", ".join(f"{f}: {t}" for f, t in p["types"].items())},
    ),
    "VALUE_TYPE_MISMATCH": ErrorClass(
        "factor {factor!r}: value column {column!r} is {found}, but semiring {semiring!r} holds {expected} values",
        ("factor", "column", "found", "semiring", "expected"),
    ),
    "INVALID_ARGUMENT": ErrorClass("{argument}={value!r}: {reason}", ("argument", "value", "reason")),
    "RESULT_TOO_LARGE": ErrorClass(
        "factor {factor!r} has {rows} rows, more than max_rows={max_rows}; aggregate it further, write it "
        "with write_table (Parquet), or raise max_rows if the driver has the memory",
        ("factor", "rows", "max_rows"),
    ),
    "NOT_A_MATRIX": ErrorClass(
        "factor {factor!r} is not a matrix: {reason}; a matrix needs exactly 2 variables holding "
        "non-negative integer indices",
        ("factor", "reason"),
    ),
    # queries and plans
    "QUERY_PARSE": ErrorClass(_AT_POSITION, ("text", "position", "reason")),
    "MOTIF_PATTERN": ErrorClass(_AT_POSITION, ("text", "position", "reason")),
    "UNKNOWN_FACTOR": ErrorClass(
        "the query uses factor {name!r}, which was not given; given: {known:names}", ("name", "known"),
        convert={"known": sorted},
    ),
    "ARITY_MISMATCH": ErrorClass(
        "factor {factor!r} has {expected} variable column(s) but the query gives it {found}",
        ("factor", "expected", "found"),
    ),
    "UNKNOWN_VARIABLE": ErrorClass(
        "{role} variable {variable!r} appears in no factor; the variables are {known:names}",
        ("variable", "role", "known"), convert={"known": sorted},
    ),
    "LP_NOT_CERTIFIED": ErrorClass("{problem}: {detail}", ("problem", "detail")),
    "INVALID_PLAN": ErrorClass("{reason}", ("reason",)),
    "STALE_PLAN": ErrorClass(
        "stale plan: {what}: the plan is for {planned!r}, not for "
        "{found!r}{beyond}; re-run faq explain --json (or faq.plan) for this query and these factors, or run "
        "without a plan",
        ("what", "planned", "found", "margin"), optional={"margin": None},
        derived={"beyond": lambda p: "" if p["margin"] is None else f" (beyond its margin of ×{p['margin']:g})"},
    ),
    "INTEGER_OVERFLOW": ErrorClass(
        "{operation} of {semiring} values overflows 64-bit integers in an in-process {where} (Spark's ANSI "
        "arithmetic fails such a job the same way); use the 'real' semiring for values this large",
        ("operation", "semiring", "where"),
    ),
    "INDEX_DIRECTORY": ErrorClass(
        "cannot write the inputs of an index built on the executors under {path!r}: {reason}; set "
        "spark.faq.indexDir to a directory the driver's Spark can write and the executors can read, or "
        "spark.faq.indexBuild=driver",
        ("path", "reason"),
    ),
    # environment
    "MISSING_DEPENDENCY": ErrorClass(
        "{feature} needs {package}, which is not installed; install faq's {extra!r} extra: "
        "pip install 'faq[{extra}]' (or pip install {package})",
        ("package", "extra", "feature"),
    ),
    "JAVA_NOT_FOUND": ErrorClass(
        "Spark needs Java 17 or newer ({what}); install it, e.g. 'apt-get install openjdk-17-jre-headless', "
        "or set JAVA_HOME",
        ("found",),
        derived={"what": lambda p: f"found {p['found']}" if p["found"] else "no 'java' on PATH and no JAVA_HOME"},
    ),
    "WORKER_ENVIRONMENT": ErrorClass(
        "the Spark workers' Python ({executable}, Python {python}) cannot run faq's tasks: {shown}. "
        "Locally, run the workers on this driver's interpreter: PYSPARK_PYTHON={driver} before the session "
        "starts, or spark.conf.set('spark.sql.execution.pyspark.python', '{driver}'). On a cluster, ship an "
        "environment: faq.workers.pack_environment('faq_env.tar.gz'), then spark.archives="
        "faq_env.tar.gz#environment with PYSPARK_PYTHON=./environment/bin/python (or "
        "spark.sql.execution.pyspark.python=./environment/bin/python); on Spark Connect "
        "spark.addArtifacts('faq_env.tar.gz#environment', archive=True) and that setting. "
        "See README.md, \"Workers' Python\"",
        ("executable", "python", "problems", "driver"), convert={"problems": list},
        derived={"shown": lambda p: "; ".join(p["problems"])}, extra=True,
    ),
    # change streams (differentiate, integrate, asof_join)
    "INVALID_TIME_TYPE": ErrorClass(
        "{source}: time column {column!r} is {found}; a time must be an orderable scalar "
        "(number, date, timestamp, string, boolean, binary or interval)",
        ("source", "column", "found"),
    ),
    "INVALID_DIFF_TYPE": ErrorClass(
        "{source}: diff column {column!r} is {found}; differentiation negates diffs and needs a numeric column",
        ("source", "column", "found"),
    ),
    "ASOF_TYPE_MISMATCH": ErrorClass(
        "asof_join: {role} column {column!r} is {left} on the left but {right} on the right; cast one side "
        "so both are numbers, both dates/timestamps, or the same type",
        ("column", "role", "left", "right"),
    ),
    "COLUMN_ROLE": ErrorClass(
        "{source}: column {column!r} cannot be both {both}", ("source", "column", "roles"),
        convert={"roles": list}, derived={"both": lambda p: " and ".join(p["roles"])},
    ),
    "COLUMN_CLASH": ErrorClass(
        "asof_join: the result would have two columns named {column!r} (suffixes {suffixes!r}); pick other "
        "suffixes or rename a column",
        ("column", "suffixes"), convert={"suffixes": tuple},
    ),
    "ALREADY_DIFFERENTIATED": ErrorClass(
        "differentiate: the stream already has a tick column {column!r}; it is differentiated already "
        "(integrate it first, or pass another tick= name)",
        ("column",),
    ),
    "NOT_DIFFERENTIATED": ErrorClass(
        "integrate: the stream has no tick column {column!r} (its columns are {available:names}); integrate "
        "takes the output of differentiate",
        ("column", "available"), convert={"available": list},
    ),
    "INVALID_JOIN_TYPE": ErrorClass(
        "asof_join: how={how!r} is not supported; valid: {valid:names}", ("how", "valid"), convert={"valid": list}
    ),
    # maintained queries, tracked motifs, maintained fixpoints
    "NON_MONOTONE_UPDATE": ErrorClass(
        "{place}{of}{count} {what}{shown}; a maintained {answer} answer only takes insertions and improvements; "
        "recompute from scratch (recompute=True) instead",
        ("kind", "count", "example", "semiring", "factor", "where"),
        optional={"example": None, "semiring": "", "factor": "", "where": ""},
        derived={
            "place": lambda p: f"{p['where']}: " if p["where"] else "",
            "of": lambda p: f"factor {p['factor']!r}: " if p["factor"] else "",
            "what": lambda p: "deletion(s)" if p["kind"] == "deletion" else "update(s) that make a value worse",
            "shown": _non_monotone_example,
            "answer": lambda p: p["semiring"] or "answer",
        },
    ),
    "NEGATIVE_COUNT": ErrorClass(
        "factor {factor!r}: {count} key(s){shown} would get a negative count; a deletion must remove a row "
        "that is there",
        ("factor", "count", "example"), optional={"example": None}, derived={"shown": _example("key")},
    ),
    "NOT_MAINTAINABLE": ErrorClass("this query cannot be maintained incrementally: {reason}", ("reason",)),
    "BATCH_ALREADY_APPLIED": ErrorClass(
        "the batch for version {version} was applied already (the state is at version {current}); "
        "it is not applied twice",
        ("version", "current"),
    ),
    "VERSION_GAP": ErrorClass(
        "the batch is for version {version} but the state is at version {current}; apply the batch for "
        "version {next} first",
        ("version", "current"), derived={"next": lambda p: p["current"] + 1},
    ),
    "STATE_DIRECTORY": ErrorClass("{path}: {reason}", ("path", "reason")),
    "INVALID_DELTA": ErrorClass("delta for factor {factor!r}: {reason}", ("factor", "reason"), extra=True),
    "COMPACTION_FAILED": ErrorClass(
        "the background compaction of relation {relation!r} failed ({reason}); its rows are unchanged",
        ("relation", "reason"),
    ),
    # fixpoints
    "NOT_IDEMPOTENT": ErrorClass(
        "semi-naive fixpoints keep one value per node and need an idempotent ⊕ (e.g. boolean, min_plus, "
        "max_min); {semiring!r} is not idempotent",
        ("semiring",),
    ),
    "FIXPOINT_NOT_CONVERGED": ErrorClass(
        "the fixpoint did not converge in {iterations} iterations (max_iterations={max_iterations}); "
        "{frontier} value(s) still improved in the last one; raise max_iterations",
        ("iterations", "frontier", "max_iterations"),
    ),
    "NEGATIVE_CYCLE": ErrorClass(
        "{what} is reachable: {frontier} value(s){shown} still improved after {iterations} iterations on a "
        "graph of {nodes} nodes, where shortest paths need at most {bound}; remove the cycle or make its "
        "weights non-negative",
        ("semiring", "iterations", "nodes", "frontier", "example"), optional={"example": None},
        derived={
            "what": lambda p: "a negative cycle" if p["semiring"] == "min_plus"
            else "a cycle that improves values without end",
            "shown": _example("node"),
            "bound": lambda p: max(p["nodes"] - 1, 0),
        },
    ),
    "UNKNOWN_NODE": ErrorClass(
        "{role} node {node} does not occur in {graph}; check the node id", ("node", "graph", "role"),
        optional={"role": "source"},
    ),
}


# --- the classes --------------------------------------------------------------------------


class FAQError(Exception):
    """Base class of every faq error: a catalog entry and its parameters.

    Parameters
    ----------
    *args
        Parameters of the entry, in its order (keywords are clearer).
    error_class : str, optional
        The entry's name; default the class's own :attr:`error_class`.
    **parameters
        Parameters of the entry by name.

    Attributes
    ----------
    error_class : str
        The upper-case name of the entry in :data:`ERROR_CLASSES`.
    parameters : dict
        What went wrong, by name (as given, optional ones only when given).
    message : str
        The message without the ``[NAME]`` prefix.
    """

    error_class: str = "FAQ_ERROR"

    def __init__(self, *args: Any, error_class: str | None = None, **parameters: Any) -> None:
        if error_class is not None:
            self.error_class = error_class
        entry = ERROR_CLASSES[self.error_class]
        self.parameters: dict[str, Any] = entry.bind(self.error_class, args, parameters)
        self.message: str = entry.render(self.parameters)
        super().__init__(f"[{self.error_class}] {self.message}")

    # KeyError would repr() the message and OSError format its own; the text is what we want.
    __str__ = Exception.__str__


class FAQValueError(FAQError, ValueError):
    """A value given to faq is not acceptable."""

    error_class = "INVALID_VALUE"


class FAQKeyError(FAQValueError, KeyError):
    """A name (semiring, column, factor, variable, node) that is not there."""


class FAQTypeError(FAQError, TypeError):
    """Types do not fit together."""

    error_class = "TYPE_MISMATCH"


class FAQRuntimeError(FAQError, RuntimeError):
    """Something faq relies on failed at run time."""

    error_class = "RUNTIME"


# Classes callers catch by name: each only names its entry and its bases.


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
    """An in-process step's int64 ⊗ or ⊕ overflowed (a Spark step fails the same way)."""

    error_class = "INTEGER_OVERFLOW"


class IndexDirectoryError(FAQRuntimeError):
    """The directory for an executor-built index's inputs cannot be written (``spark.faq.indexDir``)."""

    error_class = "INDEX_DIRECTORY"


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


class InvalidDeltaError(FAQValueError):
    """A delta does not fit its factor (columns, types, or an unknown factor name)."""

    error_class = "INVALID_DELTA"


class CompactionFailedError(FAQRuntimeError):
    """Folding a resident relation's overlay into a new base failed in the background (e.g. out of memory)."""

    error_class = "COMPACTION_FAILED"


class NotIdempotentError(FAQTypeError):
    """A fixpoint needs a semiring whose ⊕ is idempotent (min, max, ∨)."""

    error_class = "NOT_IDEMPOTENT"


class FixpointNotConvergedError(FAQRuntimeError):
    """Values still improved after ``max_iterations`` iterations."""

    error_class = "FIXPOINT_NOT_CONVERGED"


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
