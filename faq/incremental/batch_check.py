"""The one check of a batch before it touches a maintained state: types, nulls, NaN, fractions, range, multiplicities.

Everything maintained (queries, tracked motifs, models, fixpoints, trusses,
as-of joins) takes a batch of rows, and a batch that does not fit its state
must be refused *before* anything changes: a string id merged into an
integer domain, or a NaN key, would be saved and make the state unreadable,
or silently give a wrong answer.  Each target describes the columns of its
batches once (a *spec*: column -> :class:`Expect`) and calls
:func:`check_batch` on the batch as an Arrow table, right after reading it.
The check is vectorised (pyarrow compute, no loop over rows); a column that
already has the state's type and needs no value check costs nothing.  A
Spark DataFrame is checked as the Arrow table its ``apply`` fetches anyway,
so the check adds no Spark job.

What a column may hold (:class:`Expect`):

* ``integer`` -- ids, integer values, multiplicities: integer columns, or
  floating ones whose values are whole numbers; within the range of the
  state's type (``bigint``: int64); cast to int64.  Strings, booleans and
  other types are refused;
* ``real`` -- floating or integer columns (an integer beyond 2^53 would not
  stay exact as a double: refused); NaN refused unless allowed;
* ``string``, ``boolean``; or any Arrow type, cast losslessly (``exact``);
* ``values`` -- the only values allowed (``diff`` of +1 / -1);
* ``nulls`` -- whether a null is allowed (a fixpoint's missing weight).

A refusal is :class:`~faq.errors.InvalidBatchError` (entry
``INVALID_BATCH``): the target, the relation, the column, the ``problem``
(``type``, ``null``, ``NaN``, ``infinite``, ``fraction``, ``range``,
``multiplicity``), how
many rows and the first offending row and value.

Examples
--------
>>> import pyarrow as pa
>>> spec = {"src": ID, "dst": ID, "diff": SIGN}
>>> check_batch(pa.table({"src": [1.0, 2.0], "dst": [2, 3], "diff": [1, -1]}), spec,
...             relation="edge", target="a tracked motif").column("src").to_pylist()
[1, 2]
>>> check_batch(pa.table({"src": [1.5], "dst": [2], "diff": [1]}), spec, relation="edge", target="a tracked motif")
Traceback (most recent call last):
...
faq.errors.InvalidBatchError: [INVALID_BATCH] a tracked motif, 'edge': column 'src' holds a number with a fraction ...
>>> try:
...     check_batch(pa.table({"src": [1, 2], "dst": [2, 3], "diff": [1, 2]}), spec, relation="edge", target="a truss")
... except InvalidBatchError as error:
...     print(error.parameters["problem"], error.parameters["row"], error.parameters["value"])
multiplicity 1 2
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from faq.errors import InvalidBatchError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Expect", "ID", "SIGN", "COUNT", "ORDER", "check_batch", "key_expect", "value_expect", "factor_spec",
           "edge_spec", "schema_spec", "arrow_table", "arrow_column", "check_spark_types", "small_int_rows"]

#: Integer ranges of Spark's integer types (a key column of a state keeps its type).
INTEGER_RANGES = {"bigint": (-(2**63), 2**63 - 1), "int": (-(2**31), 2**31 - 1), "smallint": (-(2**15), 2**15 - 1),
                  "tinyint": (-(2**7), 2**7 - 1)}
#: Integers a double holds exactly: beyond them an integer column cast to double would change values.
EXACT_IN_DOUBLE = 2**53


@dataclass(frozen=True)
class Expect:
    """What one column of a batch must hold (see the module notes).

    Parameters
    ----------
    kind : {"integer", "real", "string", "boolean", "exact"}
        ``exact``: any column Arrow casts to ``arrow`` without loss.
    what : str
        The column's values in words, for the message ("bigint ids").
    low, high : int
        The range of an ``integer`` column.
    nulls, nan : bool
        Whether nulls (NaN) are allowed.
    finite : bool
        Whether infinities are refused (a model's features: ``inf - inf`` is NaN).
    values : tuple
        The only values allowed (empty: any).
    arrow : pyarrow.DataType, optional
        The type the column is cast to once checked (None: kept).
    """

    kind: str
    what: str
    low: int = -(2**63)
    high: int = 2**63 - 1
    nulls: bool = False
    nan: bool = False
    finite: bool = False
    values: tuple = ()
    arrow: Any = None


def _int64() -> Any:
    import pyarrow as pa

    return pa.int64()


#: Node ids, keys of an integer state.
ID = Expect("integer", "int64 ids")
#: An insert (+1) or a delete (-1).
SIGN = Expect("integer", "+1 (insert) or -1 (delete)", values=(1, -1))
#: A whole number of copies (a model's row, a fixpoint's change: a null inserts there).
COUNT = Expect("integer", "integer multiplicities (1 insert, -1 delete)")
#: The order of operations on one key (the last wins).
ORDER = Expect("real", "numbers (the order of operations)")


def key_expect(spark_type: str) -> Expect:
    """What a batch's key column must hold for a state whose column has ``spark_type`` (as it came in).

    >>> key_expect("int").high, key_expect("string").kind, key_expect("date").kind
    (2147483647, 'string', 'exact')
    """
    if spark_type in INTEGER_RANGES:
        low, high = INTEGER_RANGES[spark_type]
        return Expect("integer", f"{spark_type} ids", low, high)
    if spark_type in ("double", "float"):
        return Expect("real", f"{spark_type} keys")
    if spark_type in ("string", "boolean"):
        return Expect(spark_type, f"{spark_type} keys")
    return Expect("exact", f"{spark_type} keys")


def value_expect(value_type: str, *, what: str = "values") -> Expect:
    """What a value column of a semiring whose values are ``value_type`` must hold (array rings: no null).

    >>> value_expect("bigint").kind, value_expect("double").kind, value_expect("array<double>").kind
    ('integer', 'real', 'exact')
    """
    if value_type == "bigint":
        return Expect("integer", f"bigint {what}")
    if value_type in ("double", "boolean"):
        return Expect("real" if value_type == "double" else "boolean", f"{value_type} {what}")
    return Expect("exact", f"{value_type} {what}")


def factor_spec(columns: Sequence[str], key_types: Mapping[str, str], value_type: str,
                value: str = "value") -> dict[str, Expect]:
    """The spec of a factor's delta: its key columns as the state holds them, its ``value`` column.

    >>> sorted(factor_spec(["a"], {"a": "bigint"}, "double"))
    ['a', 'value']
    """
    key = (tuple(columns), tuple(key_types.get(c, "bigint") for c in columns), value_type, value)
    spec = _FACTOR_SPECS.get(key)
    if spec is None:  # built once per factor's types (Expects are immutable): a batch of one row pays a probe
        spec = {c: key_expect(t) for c, t in zip(columns, key[1])}
        spec[value] = value_expect(value_type)
        if len(_FACTOR_SPECS) < 1024:
            _FACTOR_SPECS[key] = spec
    return dict(spec)


_FACTOR_SPECS: dict[tuple, dict[str, Expect]] = {}


def edge_spec(diff: Expect = SIGN, **more: Expect) -> dict[str, Expect]:
    """The spec of edge change rows ``src``, ``dst``, ``diff``, ``seq`` (and ``more`` columns).

    >>> sorted(edge_spec(weight=Expect("real", "weights", nulls=True)))
    ['diff', 'dst', 'seq', 'src', 'weight']
    """
    return {"src": ID, "dst": ID, "diff": diff, "seq": ORDER, **more}


def schema_spec(schema: "pa.Schema", *, ordered: Sequence[str] = ()) -> dict[str, Expect]:
    """The spec of rows of a table with ``schema``: nulls allowed, NaN too but in ``ordered`` columns (times).

    >>> import pyarrow as pa
    >>> spec = schema_spec(pa.schema([("t", pa.float32()), ("n", pa.int32())]), ordered=["t"])
    >>> spec["t"].nan, spec["n"].high, spec["n"].nulls
    (False, 2147483647, True)
    """
    import pyarrow as pa

    spec = {}
    for field in schema:
        t = field.type
        if pa.types.is_integer(t):
            bits = t.bit_width - (0 if pa.types.is_unsigned_integer(t) else 1)
            low = 0 if pa.types.is_unsigned_integer(t) else -(2**bits)
            expect = Expect("integer", f"{t} values", low, min(2**bits - 1, 2**63 - 1))
        elif pa.types.is_floating(t):
            expect = Expect("real", f"{t} values", nan=field.name not in ordered)
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            expect = Expect("string", f"{t} values")
        else:
            expect = Expect("boolean" if pa.types.is_boolean(t) else "exact", f"{t} values")
        spec[field.name] = replace(expect, nulls=True, arrow=t)
    return spec


def arrow_table(rows: Sequence[Sequence[Any]], columns: Sequence[str], *, relation: str, target: str) -> "pa.Table":
    """Tuples as an Arrow table of ``columns`` (by position; a short row's missing value is null).

    A column Arrow cannot type -- ``1`` and ``"a"`` in one column, an int
    beyond int64 -- is refused (:class:`~faq.errors.InvalidBatchError`); the
    first offending row is looked for only then.

    >>> arrow_table([(1, 2), (3, 4)], ["src", "dst"], relation="edge", target="a truss").num_rows
    2
    >>> arrow_table([(1, 2), (3, 2**64)], ["src", "dst"], relation="edge", target="a truss")
    Traceback (most recent call last):
    ...
    faq.errors.InvalidBatchError: [INVALID_BATCH] a truss, 'edge': column 'dst' holds a value out of the range ...
    """
    import pyarrow as pa

    return pa.table({name: arrow_column([r[i] if len(r) > i else None for r in rows], name, relation=relation,
                                        target=target) for i, name in enumerate(columns)})


def arrow_column(values: Any, name: str, *, relation: str, target: str) -> "pa.Array":
    """Values (a list, or a numpy array of objects) as one Arrow array; refused if Arrow cannot type them.

    >>> arrow_column([1, None], "src", relation="edge", target="a truss").to_pylist()
    [1, None]
    """
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
        values = list(values)
        where = {"target": target, "relation": relation, "column": name, "count": len(values)}
        if isinstance(error, OverflowError):
            row = next(k for k, v in enumerate(values) if isinstance(v, int) and not -(2**63) <= v < 2**63)
            raise InvalidBatchError(problem="range", row=row, value=values[row], expected="int64", **where) from None
        first = type(next(v for v in values if v is not None))
        row = next(k for k, v in enumerate(values) if v is not None and type(v) is not first)
        raise InvalidBatchError(problem="type", row=row, value=values[row], expected=f"{first.__name__} values",
                                found=f"{type(values[row]).__name__} among them", **where) from None


#: Up to this many tuples, a batch of plain ints is checked and read in Python (:func:`small_int_rows`):
#: Arrow's table, its check and the numpy conversion cost ~0.4 ms, most of a single change's read.
SMALL_ROWS = 256


def small_int_rows(rows: Any, spec: Mapping[str, Expect]) -> Optional[np.ndarray]:
    """A few tuples of Python ints, one per column of ``spec`` (in its order), each within its column's range.

    The fast path of :func:`check_batch` for a tiny batch of the state's types: every value here is one
    the full check lets through unchanged (an ``integer`` column without a value list or a cast).

    Parameters
    ----------
    rows : Any
        The batch as given (tuples are read by position).
    spec : mapping of str to Expect
        What each column must hold.

    Returns
    -------
    numpy.ndarray or None
        The rows as an ``(n, len(spec))`` int64 array; None for anything else -- more than
        :data:`SMALL_ROWS` rows, another row width, a non-int, a value out of range, another kind of
        column -- which the Arrow path then reads and checks (and refuses as it does).

    Examples
    --------
    >>> spec = factor_spec(["a", "b"], {"b": "int"}, "bigint")
    >>> small_int_rows([(1, 2, -1)], spec).tolist()
    [[1, 2, -1]]
    >>> small_int_rows([(1, 2**40, 1)], spec) is None, small_int_rows([(1, 2.0, 1)], spec) is None
    (True, True)
    """
    expects = list(spec.values())
    if type(rows) not in (list, tuple) or not 0 < len(rows) <= SMALL_ROWS \
            or any(e.kind != "integer" or e.values or e.arrow is not None for e in expects):
        return None
    width = len(expects)
    bounds = [(e.low, e.high) for e in expects]
    for row in rows:
        if type(row) is not tuple or len(row) != width:
            return None
        for x, (low, high) in zip(row, bounds):
            if type(x) is not int or not low <= x <= high:  # bool, numpy ints, None: the full check
                return None
    return np.array(rows, dtype=np.int64)


def check_batch(table: "pa.Table", spec: Mapping[str, Expect], *, relation: str, target: str) -> "pa.Table":
    """``table`` checked against ``spec`` (columns it lacks are not checked here), cast as the spec says.

    Parameters
    ----------
    table : pyarrow.Table
        The batch as its target reads it.
    spec : mapping of str to Expect
        What each column must hold.
    relation, target : str
        The factor, table or side the batch changes, and the target in words (for the message).

    Returns
    -------
    pyarrow.Table
        The same rows, checked columns cast to their ``arrow`` types.

    Raises
    ------
    InvalidBatchError
        The first column (in ``spec``'s order) holding something it must not.
    """
    names = table.column_names
    for name, expect in spec.items():
        if name not in names:
            continue
        column = table.column(name)
        checked = _checked(column, expect, _Refusal(target, relation, name, expect, column))
        if checked is not column:
            table = table.set_column(names.index(name), name, checked)
    return table


class _Refusal:
    """Raises the error of one column: counts the offending rows and finds the first (only when refusing)."""

    def __init__(self, target: str, relation: str, column: str, expect: Expect, values: Any) -> None:
        self.where = {"target": target, "relation": relation, "column": column, "expected": expect.what}
        self.values = values

    def __call__(self, problem: str, mask: Any = None, found: Optional[str] = None) -> None:
        import pyarrow.compute as pc

        if mask is None:
            count, row = len(self.values), 0
        elif isinstance(mask, np.ndarray):
            count, row = int(mask.sum()), int(np.argmax(mask))
        else:
            mask = pc.fill_null(mask, False)
            count, row = int(pc.sum(mask).as_py() or 0), int(pc.index(mask, True).as_py())
        extra = {} if found is None else {"found": found}
        raise InvalidBatchError(problem=problem, count=count, row=row, value=self.values[row].as_py(),
                                **self.where, **extra)

    def unless(self, problem: str, mask: Any) -> None:
        """Refuse when any row of ``mask`` (numpy, or Arrow booleans) is true."""
        import pyarrow.compute as pc

        if mask.any() if isinstance(mask, np.ndarray) else pc.any(mask).as_py():
            self(problem, mask)


def _checked(column: Any, expect: Expect, refuse: _Refusal) -> Any:
    """One column checked (module notes) and cast; ``refuse`` raises."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if column.null_count and not expect.nulls:
        refuse("null", pc.is_null(column))
    if pa.types.is_null(t) or len(column) == column.null_count:
        return column.cast(expect.arrow or (_int64() if expect.kind == "integer" else t))
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t)
    if expect.kind == "exact":
        return _exact(column, expect, refuse)
    if expect.kind == "string" and not (pa.types.is_string(t) or pa.types.is_large_string(t)) \
            or expect.kind == "boolean" and not (numeric or pa.types.is_boolean(t)) \
            or expect.kind in ("integer", "real") and not numeric:
        refuse("type", found=str(t))
    if pa.types.is_floating(t) and not expect.nan:
        refuse.unless("NaN", pc.is_nan(column))
    if pa.types.is_floating(t) and expect.finite:
        refuse.unless("infinite", pc.is_inf(column))
    if expect.kind == "integer":
        column = _integral(column, expect, refuse)
    elif expect.kind == "real" and pa.types.is_integer(t) and t.bit_width == 64:
        low, high = pc.min_max(column).values()
        if max(abs(low.as_py()), abs(high.as_py())) > EXACT_IN_DOUBLE:
            refuse.unless("range", pc.greater(pc.abs(column), EXACT_IN_DOUBLE))
    if expect.values:
        refuse.unless("multiplicity", _outside_values(column, expect.values))
    if expect.arrow is not None and column.type != expect.arrow:
        column = column.cast(expect.arrow, safe=False)  # checked above: nothing is lost
    return column


def _outside_values(column: Any, values: tuple) -> Any:
    """Where a non-null value of ``column`` is none of ``values`` (numpy for a column without nulls: a
    multiplicity of every batch row, checked in microseconds rather than a few Arrow kernel calls)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not column.null_count:
        array = column.to_numpy()
        return ~np.isin(array, values) if len(values) > 2 else np.all([array != v for v in values], axis=0)
    allowed = pc.is_in(column, value_set=pa.array(values, column.type))
    return pc.and_(pc.invert(allowed), pc.is_valid(column))


def _integral(column: Any, expect: Expect, refuse: _Refusal) -> Any:
    """An integer or floating column checked for fractions and range, as int64."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if pa.types.is_floating(t):
        refuse.unless("fraction", pc.and_(pc.not_equal(column, pc.floor(column)), pc.is_finite(column)))
        # as doubles: below low, or at high + 1 and above (2^63 - 1 is no double; 2^63 is)
        refuse.unless("range", pc.or_(pc.less(column, float(expect.low)),
                                      pc.greater_equal(column, float(expect.high) + 1)))
    else:
        bits = t.bit_width - (0 if pa.types.is_unsigned_integer(t) else 1)
        floor = 0 if pa.types.is_unsigned_integer(t) else -(2**bits)
        # only a type that holds more than the state does needs a look at the values
        outside = ([pc.less(column, pa.scalar(expect.low, t))] if floor < expect.low else []) + \
                  ([pc.greater(column, pa.scalar(expect.high, t))] if 2**bits - 1 > expect.high else [])
        if outside:
            refuse.unless("range", outside[0] if len(outside) == 1 else pc.or_(*outside))
    return column if t == pa.int64() else column.cast(pa.int64(), safe=False)


def _exact(column: Any, expect: Expect, refuse: _Refusal) -> Any:
    """A column of any type, cast to ``expect.arrow`` only if Arrow can do it without loss."""
    import pyarrow as pa

    if expect.arrow is None or column.type == expect.arrow:
        return column
    try:
        return column.cast(expect.arrow)  # safe: a lossy cast raises
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        refuse("type", found=str(column.type))


#: Spark's simple type names by the kind of column they make (a Spark DataFrame is checked by its schema).
SPARK_KINDS = {"integer": ("tinyint", "smallint", "int", "bigint"), "real": ("float", "double"),
               "string": ("string",), "boolean": ("boolean",)}


def check_spark_types(df: Any, spec: Mapping[str, Expect], *, relation: str, target: str) -> None:
    """Refuse a Spark DataFrame batch whose column types do not fit ``spec`` -- read from its schema, no job.

    For a batch that is not collected on the driver (a state on the executors):
    an ``integer`` column must have an integer type (a double column of ids is
    refused: its values would need a job to check), a ``real`` one a number
    type, ``string`` and ``boolean`` their own.  Only a refusal runs a job,
    to show the first value.
    """
    for name, expect in spec.items():
        if name not in df.columns or expect.kind == "exact":
            continue
        found = df.schema[name].dataType.simpleString()
        allowed = SPARK_KINDS[expect.kind] + (SPARK_KINDS["integer"] if expect.kind == "real" else ())
        if found not in allowed and not (expect.kind == "real" and found.startswith("decimal")):
            first = df.select(name).first()
            raise InvalidBatchError(target=target, relation=relation, column=name, problem="type",
                                    count=df.count(), row=0,
                                    value=None if first is None else first[0], expected=expect.what,
                                    found=found)
