"""Features named by factor columns, lifted into an array ring in the factor that holds them.

A user passes whole tables and names features as ``"table.column"``.  For a
query ``lineitem(orderkey, partkey), part(partkey)``:

* a table's columns named like its atom's variables are the atom's keys
  (the join is natural, by name); every other column is ignored unless it
  is a feature;
* a feature's values are *lifted* into the ring in the factor they come
  from, and the factor's value per row is the ⊗ of its features' lifts (the
  ring's one where a factor has none) -- for the cofactor ring
  ``(1, x, xxᵀ)`` of the row's feature vector ``x``;
* rows sharing a key are ⊕-combined (the factor is a function of its keys,
  as FAQ wants), so a factor has one row per key;
* a feature that is also a join key (``part.partkey``) is lifted once, in
  the factor named; a table used by several atoms (a self-join) is keyed by
  its first atom's variables, the others taking the same columns in order,
  and lifts its features in the first atom only, so each feature counts
  once per row of the join.

Rows with a null key never join and are dropped, as are rows with a null
feature value (a regression cannot use them); how many is reported.

Examples
--------
>>> import pandas as pd
>>> from faq.learning.features import parse_features
>>> [str(f) for f in parse_features(["l.qty", "p.size"], {"l": ("o", "p"), "p": ("p",)})]
['l.qty', 'p.size']
>>> parse_features(["qty"], {"l": ("o",)})
Traceback (most recent call last):
...
faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] features='qty': a feature is named table.column, e.g. 'l.qty'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from faq.errors import InvalidArgumentError, UnknownFactorError
from faq.input_kinds import is_pandas

if TYPE_CHECKING:
    from faq.factor import Factor
    from faq.language import FAQ
    from faq.semirings.structured import ArraySemiring

__all__ = ["Feature", "LiftedFactor", "parse_features", "lifted_factors", "lifted_name"]


@dataclass(frozen=True)
class Feature:
    """A feature: column ``column`` of table ``table``, component ``index`` of the ring's features."""

    table: str
    column: str
    index: int = 0
    role: str = field(default="features", compare=False)  # the argument it was given as, for messages

    def __str__(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class LiftedFactor:
    """One atom's factor over the ring, and what was lifted into it (for the plan and the notes).

    Attributes
    ----------
    factor : Factor
        Keys named as the atom's variables; its value the ⊗ of the lifts.
    atom : str
        The atom, e.g. ``lineitem(orderkey, partkey)``.
    features : tuple of Feature
        Lifted here (none: every row is the ring's one).
    rows, keys, dropped : int
        The table's rows, the factor's distinct keys after ⊕-combining, and
        the rows left out for a null key or feature.
    """

    factor: "Factor"
    atom: str
    features: tuple[Feature, ...]
    rows: int
    keys: int
    dropped: int

    def describe(self, width: int) -> str:
        """One line for the plan: where features are lifted and the ring's width per row."""
        lifted = ", ".join(str(f) for f in self.features) if self.features else "nothing (the ring's one)"
        sizes = f"{self.rows} rows -> {self.keys} keys" if self.rows >= 0 else "a Spark table, rows per key"
        return (f"{self.atom}: lifts {lifted}; {sizes} of {width} doubles"
                + (f" ({self.dropped} rows with a null key or feature dropped)" if self.dropped else ""))


def parse_features(names: Sequence[str], atoms: Mapping[str, Sequence[str]],
                   roles: Optional[Sequence[str]] = None) -> list[Feature]:
    """``"table.column"`` names as :class:`Feature` values, numbered in the order given.

    ``atoms`` maps each table of the query to its variables (the first
    atom's, for a table used twice).  A table must be one of the query's.
    ``roles`` names the argument each name came from (default
    ``"features"``; a regression's target is ``"target"``), which errors name.
    """
    if isinstance(names, str):
        names = [names]
    roles = list(roles) if roles is not None else ["features"] * len(names)
    out = []
    for i, (name, role) in enumerate(zip(names, roles)):
        table, dot, column = str(name).partition(".")
        if not dot or not table or not column:
            raise InvalidArgumentError(argument=role, value=name,
                                       reason="a feature is named table.column, e.g. "
                                       f"'{next(iter(atoms), 'table')}.{name}'")
        if table not in atoms:
            raise UnknownFactorError(name=table, known=list(atoms))
        out.append(Feature(table, column, i, role))
    seen: dict[str, Feature] = {}
    for f in out:
        if str(f) in seen:
            reason = "named twice" if f.role == seen[str(f)].role else f"is also among the {seen[str(f)].role}"
            raise InvalidArgumentError(argument=f.role, value=str(f), reason=reason)
        seen[str(f)] = f
    return out


def lifted_factors(query: "FAQ", features: Sequence[Feature], ring: "ArraySemiring", tables: Mapping[str, Any],
                   spark: Any = None, skip: Sequence[int] = ()) -> tuple["FAQ", dict[str, "Factor"], list[LiftedFactor]]:
    """The query over ``ring`` with one factor per atom, each lifting its table's features.

    Parameters
    ----------
    query : FAQ
        The join (its atoms name the tables; its head is ignored: every
        variable is ⊕-aggregated).
    features : sequence of Feature
        Numbered ``0 .. m-1``; ``ring`` has ``m`` features.
    ring : ArraySemiring
        An array ring with a lift (:func:`faq.semirings.cofactor`, :data:`~faq.semirings.MOMENTS`).
    tables : mapping
        Table name -> a pandas DataFrame or a Spark DataFrame with the
        atom's key columns and the feature columns.
    skip : sequence of int
        Positions of atoms whose table is lifted elsewhere
        (:mod:`faq.learning.in_tasks`): named in the query, no factor made,
        ``None`` in the list.

    Returns
    -------
    (FAQ, dict, list)
        ``count() := ...`` over fresh factor names (one per atom), the
        factors by those names, and per atom what was lifted.
    """
    from faq.language import FAQ, Atom

    missing = [a.factor for a in query.atoms if a.factor not in tables]
    if missing:
        raise UnknownFactorError(name=missing[0], known=list(tables))
    lifted_in: dict[str, int] = {}  # table -> the atom (position) lifting its features: the first one
    for k, atom in enumerate(query.atoms):
        lifted_in.setdefault(atom.factor, k)
    keyed_by = {table: query.atoms[k].variables for table, k in lifted_in.items()}
    atoms, factors, lifted = [], {}, []
    for k, atom in enumerate(query.atoms):
        own = [f for f in features if f.table == atom.factor] if lifted_in[atom.factor] == k else []
        name = lifted_name([a.factor for a in query.atoms], k)
        table = tables[atom.factor]
        if len(keyed_by[atom.factor]) != len(atom.variables):
            raise InvalidArgumentError(argument=atom.factor, value=str(atom),
                                       reason=f"the table's first atom has {len(keyed_by[atom.factor])} variables")
        keys = dict(zip(atom.variables, keyed_by[atom.factor]))  # variable -> the table's column
        atoms.append(Atom(name, atom.variables))
        if k in skip:
            _check_columns(table, atom, keys, own)
            lifted.append(None)
            continue
        made = _lifted(table, atom, keys, own, ring, name, spark)
        factors[name] = made.factor
        lifted.append(made)
    return FAQ(atoms=tuple(atoms), free=(), name="count"), factors, lifted


def lifted_name(tables: Sequence[str], position: int) -> str:
    """The name of atom ``position``'s lifted factor: its table's, numbered when the query uses the table twice.

    >>> lifted_name(["edges", "edges", "nodes"], 1), lifted_name(["edges", "edges", "nodes"], 2)
    ('edges_2', 'nodes')
    """
    table = tables[position]
    return f"{table}_{position + 1}" if list(tables).count(table) > 1 else table


def _columns_of(table: Any) -> list[str]:
    return [str(c) for c in table.columns]


def _check_columns(table: Any, atom: Any, keys: Mapping[str, str], features: Sequence[Feature]) -> None:
    check_columns(_columns_of(table), atom, keys.values(), features)


def check_columns(columns: Sequence[str], atom: Any, keys: Iterable[str], features: Sequence[Feature]) -> None:
    """Every key and feature column is among a table's ``columns``, else an
    :class:`~faq.errors.InvalidArgumentError` naming the missing one and the columns there are.

    >>> from faq.language import parse_query
    >>> check_columns(["o", "q"], parse_query("count() := l(o)").atoms[0], ["o"], [Feature("l", "x", 0)])
    Traceback (most recent call last):
    ...
    faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] features='l.x': table 'l' has no column 'x' (its columns: o, q)
    """
    for v in keys:
        if v not in columns:
            raise InvalidArgumentError(argument=atom.factor, value=v,
                                       reason=f"the table has no column named like the atom's variable {v!r} "
                                       f"(its columns: {', '.join(columns)})")
    for f in features:
        if f.column not in columns:
            raise InvalidArgumentError(argument=f.role, value=str(f),
                                       reason=f"table {f.table!r} has no column {f.column!r} "
                                       f"(its columns: {', '.join(columns)})")


def _lifted(table: Any, atom: Any, keys: Mapping[str, str], features: Sequence[Feature], ring: "ArraySemiring",
            name: str, spark: Any) -> LiftedFactor:
    from faq.spark import is_dataframe

    _check_columns(table, atom, keys, features)
    if is_dataframe(table):
        return _lifted_spark(table, atom, keys, features, ring, name)
    if is_pandas(table):
        return _lifted_pandas(table, atom, keys, features, ring, name, spark)
    raise InvalidArgumentError(argument=atom.factor, value=type(table).__name__,
                               reason="a table is a pandas or Spark DataFrame")


def row_values(ring: "ArraySemiring", features: Sequence[Feature], columns: Mapping[str, np.ndarray],
               rows: int) -> np.ndarray:
    """Per row, the ⊗ of the lifts of ``features`` (``columns[f.column]``): an ``(rows, w)`` array.

    >>> from faq.semirings import cofactor
    >>> ring = cofactor(2)
    >>> row_values(ring, [Feature("t", "x", 0), Feature("t", "y", 1)],
    ...            {"x": np.array([2.0]), "y": np.array([3.0])}, 1).tolist()   # (1, (2, 3), [[4, 6], [6, 9]])
    [[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]
    """
    from faq.semirings.numpy_backend import numpy_ops
    from faq.semirings.rings import CofactorRing

    if isinstance(ring, CofactorRing):  # in closed form: (1, x, xxᵀ), not one general ⊗ per feature
        x = {f.index: np.asarray(columns[f.column], dtype=np.float64) for f in features}
        m = ring.features
        values = np.zeros((rows, ring.width))
        values[:, 0] = 1.0
        for j, column in x.items():
            values[:, 1 + j] = column
        for k, (i, j) in enumerate(zip(*np.triu_indices(m))):
            if int(i) in x and int(j) in x:
                with np.errstate(over="ignore"):  # an overflow is inf: fit_linear refuses it (MOMENTS_NOT_FINITE)
                    values[:, 1 + m + k] = x[int(i)] * x[int(j)]
        return values
    ops = numpy_ops(ring, arrays=True)
    values = ops.ones(rows)
    for f in features:
        values = ops.mul(values, ring.lift(f.index, np.asarray(columns[f.column], dtype=np.float64)))
    return np.ascontiguousarray(values)


def _lifted_pandas(table: Any, atom: Any, keys: Mapping[str, str], features: Sequence[Feature],
                   ring: "ArraySemiring", name: str, spark: Any) -> LiftedFactor:
    from faq.factor import VALUE, Factor
    from faq.relation import Relation
    from faq.joins.local import aggregate_rows
    from faq.semirings.numpy_backend import numpy_ops
    from faq.spark import session_for_driver_data

    used = list(dict.fromkeys([*keys.values(), *(f.column for f in features)]))
    frame = table[used]
    rows = len(frame)
    complete = ~frame.isna().any(axis=1).to_numpy()
    if not complete.all():  # a copy only when some row has a null
        frame = frame[complete]
    key_columns = []
    for v, column in keys.items():
        k = frame[column].to_numpy()
        if k.dtype.kind not in "iu" and not (k.dtype == object and all(isinstance(x, (int, np.integer)) for x in k)):
            raise InvalidArgumentError(argument=atom.factor, value=column,
                                       reason=f"a join key must be an integer column (found {k.dtype})")
        key_columns.append(np.asarray(k, dtype=np.int64))
    values = row_values(ring, features, {f.column: frame[f.column].to_numpy() for f in features}, len(frame))
    key_arrays, combined = aggregate_rows(key_columns, values, numpy_ops(ring, arrays=True))
    columns = {**dict(zip(atom.variables, key_arrays)), VALUE: combined}
    types = {**{v: "bigint" for v in atom.variables}, VALUE: ring.value_type}
    session = spark if spark is not None else session_for_driver_data()  # Spark starts only if a step needs it

    def make() -> Any:
        import pandas as pd

        from faq.spark import real_session

        data = pd.DataFrame({**{v: columns[v] for v in atom.variables}, VALUE: list(columns[VALUE])})
        ddl = ", ".join(f"`{c}` {t}" for c, t in types.items())
        return real_session(session).createDataFrame(data, ddl)

    held = Relation.from_arrays(columns, types, session, make=make)
    factor = Factor(relation=held, variables=tuple(atom.variables), semiring=ring, value=VALUE, name=name)
    return LiftedFactor(factor, str(atom), tuple(features), rows, len(combined), int(rows - len(frame)))


def _lifted_spark(table: Any, atom: Any, keys: Mapping[str, str], features: Sequence[Feature],
                  ring: "ArraySemiring", name: str) -> LiftedFactor:
    from pyspark.sql import functions as F

    from faq.factor import VALUE, Factor
    from faq.semirings.spark_backend import columns as spark_columns

    forms = spark_columns(ring)
    kept = table
    for column in [*keys.values(), *(f.column for f in features)]:
        kept = kept.where(F.col(column).isNotNull())
    lifted = kept.select(*[F.col(column).cast("bigint").alias(v) for v, column in keys.items()],
                         _row_value_column(ring, features).alias(VALUE))
    combined = lifted.groupBy(*atom.variables).agg(forms.sum(F.col(VALUE)).alias(VALUE))
    factor = Factor(df=combined, variables=tuple(atom.variables), semiring=ring, value=VALUE, name=name)
    # Sizes of a Spark table are not counted here (a job each): the plan's statistics say them.
    return LiftedFactor(factor, str(atom), tuple(features), -1, -1, 0)


def _row_value_column(ring: "ArraySemiring", features: Sequence[Feature]) -> Any:
    """The Spark Column of a row's value: ``(1, x, xxᵀ)`` of its features, built component by component.

    Not as a chain of ⊗s of lifts: each ⊗ builds every component from every
    component of its operands, so the nested expression grows with the
    product of the widths (three features of cofactor(5) exhausted the
    driver's heap while Spark analysed the plan).  The row's value is known
    in closed form: count 1, ``s[j] = x_j`` for the features of this table
    (0 for the others), ``Q[i, j] = x_i x_j`` where both are here.
    """
    from pyspark.sql import functions as F

    from faq.semirings.rings import CofactorRing

    if not isinstance(ring, CofactorRing):
        raise InvalidArgumentError(argument="ring", value=ring.name,
                                   reason="features are lifted into a cofactor ring (faq.semirings.cofactor)")
    x = {f.index: F.col(f.column).cast("double") for f in features}
    m = ring.features
    zero = F.lit(0.0)
    parts = [F.lit(1.0)] + [x.get(j, zero) for j in range(m)]
    rows, cols = np.triu_indices(m)
    parts += [x[i] * x[j] if i in x and j in x else zero for i, j in zip(rows.tolist(), cols.tolist())]
    return F.array(*parts)
