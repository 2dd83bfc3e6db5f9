"""The catalog: every error name faq raises, with its message template and parameters.

:data:`ERROR_CLASSES` maps an upper-case name, e.g. ``"UNKNOWN_SEMIRING"``,
to its :class:`~faq.errors.templates.ErrorClass`.  Entries are grouped by
the part of faq that raises them; the Python classes that name them are in
:mod:`faq.errors.classes`.  A new error is a new entry here (and, if callers
catch it by class, a class there), never a message written at the raise.

Examples
--------
>>> ERROR_CLASSES["QUERY_PARSE"].message
'{reason} at position {position}\\n  {shown}\\n  {caret}'
>>> sorted(ERROR_CLASSES["UNKNOWN_SEMIRING"].parameters)
['name', 'valid']
"""

from __future__ import annotations

from typing import Callable

from faq.errors.templates import ErrorClass, Parameters, clip, window


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


def _shown(value: object, width: int = 60) -> str:
    """A value's repr, cut to ``width`` characters (a cell can be a megabyte of text)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _bytes(n: int) -> str:
    """``2,400,000,008 bytes (2.24 GiB)``: exact, and at a glance."""
    return f"{n:,} bytes ({n / 2**30:.3g} GiB)"


def _first_violations(p: Parameters, shown: int = 5) -> str:
    violations = p["violations"]
    more = f" (+{len(violations) - shown} more)" if len(violations) > shown else ""
    return "; ".join(violations[:shown]) + more


_AT_POSITION = "{reason} at position {position}\n  {shown}\n  {caret}"
# The text around the position (a query can be a megabyte: at most WINDOW characters of it), a caret under it.
_WINDOW = {"shown": lambda p: window(p["text"], p["position"])[0],
           "caret": lambda p: " " * window(p["text"], p["position"])[1] + "^"}
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
    # defining a semiring (faq.semirings: Semiring, array rings, operations) or checking its laws
    "UNKNOWN_VALUE_TYPE": ErrorClass(
        "semiring {semiring!r}: value_type must be one of {valid}, not {value_type!r}",
        ("semiring", "value_type", "valid"), convert={"valid": sorted},
    ),
    "IDEMPOTENCE_CONTRADICTION": ErrorClass(
        "semiring {semiring!r}: idempotent={idempotent} contradicts its ⊕ {operation!r}",
        ("semiring", "idempotent", "operation"),
    ),
    "FORMS_OF_OPERATION": ErrorClass(
        "semiring {semiring!r}: {shown} describe(s) a {symbol} given as a function, but {symbol} is "
        "{operation!r}{own}",
        ("semiring", "forms", "symbol", "operation"), convert={"forms": list},
        derived={"shown": lambda p: ", ".join(p["forms"]),
                 "own": lambda p: ", which brings its own forms" if p["operation"] is not None else ""},
    ),
    "UNDEFINED_OPERATION": ErrorClass(
        "operation {operation!r} is not defined on {value_type} values (it is on: {defined})",
        ("operation", "value_type", "domains"), convert={"domains": list},
        derived={"defined": lambda p: ", ".join(p["domains"]) or "none declared"},
    ),
    "NOT_A_UFUNC": ErrorClass(
        "the numpy form of {operation!r} must be a numpy ufunc of {inputs} argument(s) (e.g. np.logaddexp), "
        "not {form}: its reduce/reduceat/at methods are used",
        ("operation", "inputs", "form"),
    ),
    "NO_SPARK_FORM": ErrorClass(
        "operation {form} has no Spark form: give it as a function of Columns "
        "(Semiring(add=..., mul=..., neg=...))",
        ("operation", "form"),
    ),
    "NOT_BILINEAR": ErrorClass(
        "⊗ of {semiring!r} must be bilinear, written with +, −, × of components and numbers "
        "(÷ by numbers): {reason}",
        ("semiring", "reason"), extra=True,
    ),
    "PRODUCT_WIDTH": ErrorClass(
        "⊗ of {semiring!r} gives {components} components, but the ring has {width} ({names:names})",
        ("semiring", "components", "width", "names"), convert={"names": list},
    ),
    "ARRAY_COMPONENTS": ErrorClass(
        "array semiring {semiring!r}: components must be distinct names, at least one; got {components}",
        ("semiring", "components"), convert={"components": list},
    ),
    "FEATURES_WITHOUT_LIFT": ErrorClass(
        "array semiring {semiring!r}: features={features} but no lift", ("semiring", "features")
    ),
    "TUPLE_FORMS": ErrorClass(
        "tuple semiring {semiring!r}: ⊕ and ⊗ need a Spark form (add, mul) and a numpy form (numpy_add, "
        "numpy_mul), and ⊖ both or neither (neg, numpy_neg)", ("semiring",)
    ),
    "ARRAY_ELEMENT": ErrorClass(
        "array semiring {semiring!r}: {what} must be {width} numbers, got {value}",
        ("semiring", "what", "width", "value"),
    ),
    "INVALID_ARRAY_VALUES": ErrorClass(
        "{semiring}: values must be {width} numbers each (no nulls), got {found}", ("semiring", "width", "found")
    ),
    "VALUE_SHAPE": ErrorClass(
        "{semiring}: a value has {width} components, got an array of shape {shape}", ("semiring", "width", "shape")
    ),
    "COFACTOR_SHAPE": ErrorClass(
        "{semiring}: sums must have {features} entries and products be {features}×{features}, got {sums} and "
        "{products}",
        ("semiring", "features", "sums", "products"),
    ),
    "UNKNOWN_BACKEND": ErrorClass(
        "unknown backend {backend!r}; known: {valid:names}", ("backend", "valid"), convert={"valid": list}
    ),
    "NO_NUMPY_FORM": ErrorClass(
        "semiring {semiring!r} has no numpy form to check; use backend='spark'", ("semiring",)
    ),
    # factors and input files
    "MISSING_COLUMN": ErrorClass(
        "{source}: no column {column!r}; the columns are {available:names}", ("column", "available", "source"),
        convert={"available": list},
    ),
    "INPUT_NOT_FOUND": ErrorClass("no such file or directory: {path!r}; check the path", ("path",)),
    "MATRIX_TOO_LARGE": ErrorClass(
        "{path}: the header declares a {rows:count}×{cols:count} matrix with {entries:count} entries, which needs "
        "{needed} in memory ({what}), more than the budget of {budget}; check the header's sizes, or pass a "
        "larger max_bytes= to faq.io.read_matrix_market if the driver has the memory",
        ("path", "rows", "cols", "entries", "needed_bytes", "budget_bytes", "what"),
        derived={"needed": lambda p: _bytes(p["needed_bytes"]), "budget": lambda p: _bytes(p["budget_bytes"])},
    ),
    "MALFORMED_INPUT": ErrorClass(
        "{path}{at_line}: {reason}{shown_line}", ("path", "line_number", "line", "reason"),
        optional={"line_number": None, "line": None},
        derived={
            "at_line": lambda p: f", line {p['line_number']}" if p["line_number"] is not None else "",
            "shown_line": lambda p: f": {clip(p['line'])}" if p["line"] is not None else "",
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
        "{in_file}factor {factor!r}: value column {column!r} has {count} {problem} value(s){first}{advice}",
        ("factor", "column", "problem", "count", "path", "row"), optional={"path": None, "row": None},
        derived={
            "in_file": lambda p: f"{p['path']}: " if p["path"] is not None else "",
            "first": lambda p: f" (the first: {clip(p['row'], 200)})" if p["row"] is not None else "",
            "advice": lambda p: {
                "null": "; a null is no value of a semiring (nor its zero): fill or drop those rows",
                "NaN": "; NaN is no value of a semiring: fill or drop those rows",
                "negative": "; the counting semiring holds counts (0, 1, 2, ...): read signed values with "
                            "semiring='integer'",
            }.get(p["problem"], ""),
        },
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
    "NODE_ID_VALUES": ErrorClass(
        "{source}: column {column!r} has {count} value(s) that are no node id (the first{in_row}: "
        "{shown}, {reason}); node ids are 64-bit integers (a float only when whole, e.g. 2.0): fix or drop "
        "those rows",
        ("source", "column", "count", "row", "value", "reason"), optional={"row": None}, extra=True,
        derived={"shown": lambda p: _shown(p["value"]),
                 "in_row": lambda p: f", in row {p['row']}" if p["row"] is not None else ""},
    ),
    "WRITE_FAILED": ErrorClass(
        "{path}: cannot write ({reason}){advice}",
        ("path", "reason", "errno_name"),
        derived={"advice": lambda p: {
            "ENOSPC": "; free space on that filesystem or write elsewhere",
            "EROFS": "; the filesystem is read-only: write to a writable directory",
            "EACCES": "; you may not write there: choose a directory you own",
            "EDQUOT": "; your disk quota is used up: free space or write elsewhere",
        }.get(p["errno_name"], "")},
    ),
    "MOMENTS_NOT_FINITE": ErrorClass(
        "the {what} overflow double precision ({detail}); scale the features (e.g. divide by their largest "
        "magnitude) before fitting",
        ("what", "detail"),
    ),
    "INPUT_TYPE": ErrorClass("{what} must be {expected}; got {found}", ("what", "expected", "found"), extra=True),
    "MATRIX_COLUMNS": ErrorClass(
        "matrix {index} has columns {columns}; a matrix DataFrame has a row index, a column index and {value!r}",
        ("index", "columns", "value"), extra=True,
    ),
    "EMPTY_MATRIX_CHAIN": ErrorClass("a matrix chain needs at least one matrix", ("count",)),
    "MATRIX_ARITY": ErrorClass(
        "matrix {index} ({name!r}) has {arity} variables; a matrix has 2", ("index", "name", "arity")
    ),
    # queries and plans
    "QUERY_PARSE": ErrorClass(_AT_POSITION, ("text", "position", "reason"), derived=_WINDOW),
    "MOTIF_PATTERN": ErrorClass(_AT_POSITION, ("text", "position", "reason"), derived=_WINDOW),
    "QUERY_TOO_LARGE": ErrorClass(
        "the query has {size:count} {what}; faq plans queries of at most {limit:count} (planning time and memory grow "
        "with the query): split it into smaller queries, e.g. answer a part and use the answer as a factor of the "
        "rest",
        ("what", "size", "limit"),
    ),
    "PATTERN_NOT_TEXT": ErrorClass("a motif pattern is text, got {found}", ("found",)),
    "TOO_MANY_EVENTS": ErrorClass(
        "inclusion–exclusion over {events} events (distinct pairs and negations) needs 2^{events} terms; count "
        "by listing instead (strategy='listing')",
        ("events", "max_events"),
    ),
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
    "NOT_A_MAPPED_INDEX": ErrorClass("{path} is not a faq mapped index (magic {magic!r})", ("path", "magic")),
    # results and the resources they own (faq.scope, faq.relation)
    "SCOPE_CLOSED": ErrorClass(
        "this scope is closed; a closed result cannot take on new resources", ("resource",),
        optional={"resource": None},
    ),
    "UNRELEASABLE_RESOURCE": ErrorClass("do not know how to release a {kind}; pass release=", ("kind",)),
    "HELD_COLUMN_LENGTHS": ErrorClass(
        "the columns of rows the driver holds differ in length: {lengths}", ("lengths",), convert={"lengths": dict},
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
    "CONNECT_CLIENT_MISSING": ErrorClass(
        "connecting to {remote} needs the Spark Connect client: pip install 'pyspark[connect]' ({error})",
        ("remote", "error"), extra=True,
    ),
    "EXECUTOR_INDEXES_ON_CONNECT": ErrorClass(
        "indexes on the executors need broadcast variables, which Spark Connect does not have; use "
        "placement='driver' (raise the budget)",
        (), extra=True,
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
    # the faq command's options and files
    "OUTPUT_FOLDER_MISSING": ErrorClass(
        "--out {path!r}: the folder {folder!r} does not exist; create it first", ("path", "folder")
    ),
    "OUTPUT_SUFFIX": ErrorClass("--out {path!r}: write a .csv, .csv.gz or .parquet file", ("path",)),
    "OUTPUT_NOT_MTX": ErrorClass(
        "--out {path!r}: the product is written as Matrix Market; use a .mtx name", ("path",)
    ),
    "FACTOR_GIVEN_TWICE": ErrorClass(
        "--factor {name} is given twice ({first!r} and {second!r})", ("name", "first", "second")
    ),
    "FACTORS_NOT_GIVEN": ErrorClass(
        "the query uses factor(s) {missing:names} but no --factor NAME=PATH gives them", ("missing",),
        convert={"missing": list},
    ),
    "MATRIX_SHAPES": ErrorClass(
        "matrix {index} ({left}) is {left_shape} but matrix {following} ({right}) is {right_shape}; inner "
        "dimensions must agree",
        ("index", "paths", "shapes"),
        derived={
            "following": lambda p: p["index"] + 1,
            "left": lambda p: p["paths"][p["index"] - 1],
            "right": lambda p: p["paths"][p["index"]],
            "left_shape": lambda p: "{}×{}".format(*p["shapes"][p["index"] - 1]),
            "right_shape": lambda p: "{}×{}".format(*p["shapes"][p["index"]]),
        },
    ),
    "PART_FILES": ErrorClass("Spark wrote {parts} part files for {path!r}, expected 1", ("path", "parts")),
    "NOT_AN_UPDATES_DIRECTORY": ErrorClass("--updates {path!r} is not a directory of batch files", ("path",)),
    "WEIGHT_COLUMN": ErrorClass(
        "--weight-column {value}: columns 1 and 2 hold the node ids; give 3 or more", ("value",), extra=True
    ),
    "FOLLOW_NEEDS_UPDATES": ErrorClass(
        "--follow watches the --updates directory: give --updates DIR", (), extra=True
    ),
    "PORT_IN_USE": ErrorClass(
        "port {port} is already in use by another program; choose one with --port", ("port",), extra=True
    ),
    "SERVER_NOT_STARTED": ErrorClass(
        "the Spark Connect server did not start on port {port}; see {log}", ("port", "log"), extra=True
    ),
    "SERVE_DIRECTORY_UNSAFE": ErrorClass(
        "faq serve's directory {path!r} {reason}: it holds the servers' tokens and must be yours alone "
        "(mode 700); remove it (or 'chmod 700' it if it is yours and holds nothing foreign) and run again",
        ("path", "reason"),
    ),
    "SERVE_FILE_UNSAFE": ErrorClass(
        "{path!r} {reason}: faq serve neither reads nor writes through it; remove it and run again",
        ("path", "reason"),
    ),
    "SERVER_NOT_OURS": ErrorClass(
        "the record {path!r} names process {pid} for port {port}, but that process is not the faq server "
        "it started ({reason}); nothing was signalled or removed. If no faq server runs on port {port}, "
        "delete {path!r}",
        ("port", "pid", "path", "reason"),
    ),
    "SERVE_PEER_UNPROVEN": ErrorClass(
        "the token of the faq server on port {port} was not sent to {address} port {port}: {reason}. "
        "The token goes only to a socket the recorded server holds; see who listens with 'ss -ltnp', "
        "then restart the server ('faq serve --stop', 'faq serve')",
        ("address", "port", "uid", "reason"),
    ),
    # learning over joins
    "EMPTY_JOIN": ErrorClass("the join is empty: no row to {purpose}", ("purpose", "count")),
    "TOO_FEW_ROWS": ErrorClass(
        "a covariance with ddof={ddof} needs more than {ddof} rows; the join has {rows}", ("ddof", "count"),
        derived={"rows": lambda p: f"{p['count']:g}"},
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
    "STATE_UNTRUSTED": ErrorClass(
        "{path}: {reason}; faq uses a state only where no one else can write (whoever can write to a state "
        "can forge it: its checksums detect damage, not forgery): {fix}",
        ("path", "reason", "fix"),
    ),
    "STATE_JOB_MISMATCH": ErrorClass(
        "{path}: this state was made by another job: its {field} was {saved}, now {given}; give the same "
        "{field}, or start again with --restart (which replaces the state), or choose another state directory",
        ("path", "field", "saved", "given"),
    ),
    "UNSUPPORTED_SINK_JOB": ErrorClass(
        "the faq streaming sink does not maintain job={job!r}; it maintains {supported} (a query with "
        "option('query', ...)); keep a {job} current with its own apply() from foreachBatch",
        ("job", "supported"),
    ),
    "STATE_LOCKED": ErrorClass(
        "{path}: another process writes this state ({holder}); one writer at a time: close it (or let it "
        "end) and try again, or reopen the state to read it only",
        ("path", "holder"),
    ),
    "INVALID_DELTA": ErrorClass("delta for factor {factor!r}: {reason}", ("factor", "reason"), extra=True),
    "MULTIPLICITY_COLUMN": ErrorClass(
        "delta for {factor!r}: {target} reads each row's {meaning} from a column {expected!r}, which the delta "
        "lacks; it has {found!r}, which {target} does not read (every row would count as {default}): rename "
        "{found!r} to {expected!r}",
        ("factor", "expected", "found", "target", "meaning", "default"),
        optional={"meaning": "multiplicity (+1 insert, -1 delete)", "default": "an insertion, +1"},
    ),
    "INVALID_BATCH": ErrorClass(
        "{target}, {relation!r}: column {column!r} {what}: {count} row(s), the first row {row} ({shown}); "
        "the batch was refused before anything changed (in memory or on disk){advice}",
        ("target", "relation", "column", "problem", "count", "row", "value", "expected", "found"),
        optional={"found": None},
        derived={
            "shown": lambda p: clip(repr(p["value"]), 60)[1:-1],
            "what": lambda p: {
                "type": f"is {p['found']}, but the state holds {p['expected']}",
                "null": f"has a null {p['column']!r} where {p['expected']} are needed",
                "NaN": f"holds NaN where {p['expected']} are needed",
                "fraction": f"holds a number with a fraction where {p['expected']} are needed",
                "range": f"holds a value out of the range of {p['expected']}",
                "infinite": f"holds an infinite value where {p['expected']} are needed",
                "multiplicity": f"breaks '{p['column']} must be {p['expected']}'",
            }.get(p["problem"], f"holds a value that is not {p['expected']}"),
            "advice": lambda p: {
                "type": "; cast the column to the state's type",
                "null": "; fill or drop those rows",
                "NaN": "; fill or drop those rows",
            }.get(p["problem"], ""),
        },
    ),
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
    "RESIDENT_ROUNDS_ENDED": ErrorClass(
        "the Spark job whose tasks answer a fixpoint's rounds ended before round {round} was answered: {reason}",
        ("round", "reason"),
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
    "SOURCE_OR_COMPONENTS": ErrorClass("give either a source (paths) or components=True", ("argument",)),
    "INVALID_NODE_ID": ErrorClass("{argument} must be an integer node id (64-bit: -9223372036854775808 to "
                                  "9223372036854775807), not {value!r}", ("argument", "value")),
    "MALFORMED_EDGE": ErrorClass("an edge is (src, dst) or (src, dst, weight), not {row!r}", ("row",), extra=True),
    "EDGES_NOT_A_FACTOR": ErrorClass("edges must be a Factor (e.g. from faq.io.read_edge_list), not {type}",
                                     ("type",), extra=True),
    "EDGES_ARITY": ErrorClass("edges {name!r} must have 2 variables (source, target), not {count}", ("name", "count"),
                              extra=True),
    "SEEDS_ARITY": ErrorClass("seeds {name!r} must have 1 variable (the node), not {count}", ("name", "count"),
                              extra=True),
    "MAX_ITERATIONS": ErrorClass("max_iterations must be a positive integer, not {value!r}", ("value",), extra=True),
    "EDGE_CHANGES_TYPE": ErrorClass(
        "edge changes are an Arrow table, pandas or a Spark DataFrame with src, dst and diff columns, not {type}",
        ("type",), extra=True,
    ),
    # maintained queries' inputs and answers
    "SCALAR_OF_FREE_QUERY": ErrorClass("the query has free variables {free}; use answer()", ("free",), extra=True),
    "ROWS_TYPE": ErrorClass("{what} must be a DataFrame, a Factor, pandas, an Arrow table or tuples, not {type}",
                            ("what", "type"), extra=True),
    "INDEX_BUDGET": ErrorClass("index budget {value!r} is not a size; use bytes or e.g. '512m', '4g'", ("value",),
                               extra=True),
    "ROWS_WIDTH": ErrorClass("{what}: rows must have {width} key(s) and an optional value, got lengths {lengths}",
                             ("what", "width", "lengths"), extra=True),
}
