"""Worst-case optimal join seeded by a small relation: the delta rules' join.

A delta rule ``ΔR_i ⋈ R_1' ⋈ … ⋈ R_n`` (:mod:`faq.incremental.rules`) starts
from a handful of changed rows.  :func:`seeded_join` binds the seed's
variables first (every seed row is a prefix), then the remaining variables
one at a time, as the generic join (:mod:`faq.joins.generic`) does: for each
prefix every relation holding the next attribute *counts* its candidates, the
one with the fewest *proposes*, the others *validate*.

What makes it cheap for a small seed is how the relations are looked up.
Instead of a degree table of a whole relation (one aggregation over all of
it, as the shuffle strategy does), each relation is first restricted to the
keys the current prefixes carry: one scan of the (cached) relation with a
broadcast semi-join.  Counts, proposals and validations then run on those
restricted rows only, so the work per attribute is one scan per relation plus
Σ over prefixes of the smallest candidate list, and the state a maintained
query keeps is just its input relations: no intermediate views.

Examples
--------
>>> from faq.factor import factor_of
>>> from faq.joins import Frame, VALUE_COLUMN
>>> from faq.joins.seeded import seeded_join
>>> from faq.semirings import COUNTING
>>> edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (2, 3, 1), (1, 3, 1)]
>>> def use(rows, a, b):
...     f = factor_of(rows, ["s", "t"], "counting")
...     return Frame(f.df.selectExpr(f"s AS {a}", f"t AS {b}", f"value AS {VALUE_COLUMN}"), (a, b))
>>> seed = use([(1, 2, 1)], "a", "b")            # the changed edge 1 -> 2 as (a, b)
>>> out = seeded_join(seed, [use(edges, "b", "c"), use(edges, "a", "c")], COUNTING)
>>> sorted(map(tuple, out.df.collect()))          # 1->2, 2->3, 1->3
[(1, 2, 3, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from faq.joins.frame import VALUE_COLUMN, Frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.semirings import Semiring

SEEDED_STRATEGIES = ("auto", "local", "spark")
# "auto" extends on the driver while the seed and each fetched relation part stay within this many rows.
LOCAL_MAX_ROWS = 2_000_000
# Keys up to this many are sent as an IN list (no broadcast job); more go through a broadcast semi-join.
IN_LIST_MAX = 20_000

_CHOICE = "__choice"
_COUNT = "__count"
_RIGHT_VALUE = "__w"


@dataclass(frozen=True)
class _Lookup:
    """One relation constraining ``attribute`` given ``key`` (its attributes bound earlier)."""

    relation: "DataFrame"
    key: tuple[str, ...]
    attribute: str
    valued: bool


def seeded_join(
    seed: Frame,
    relations: Sequence[Frame],
    semiring: "Semiring",
    keep: Optional[list] = None,
    strategy: str = "auto",
) -> Frame:
    """⊗-product of ``seed`` and ``relations``, binding the seed's variables first.

    Parameters
    ----------
    seed : Frame
        The small relation every binding extends (a delta).  Its value is
        multiplied in.
    relations : sequence of Frame
        The other relations (any arity, repeats allowed); each one's value is
        multiplied in once per binding and row, as in binary joins.  Every
        variable must be reachable from the seed's through them.
    semiring : Semiring
        Supplies ⊗.
    keep : list, optional
        Receives the DataFrames this call materialised (local checkpoints);
        the caller releases them (:func:`faq.spark.release`) once the result
        has been consumed.  Without it they are released before returning,
        and the result must be used at once.
    strategy : {"auto", "local", "spark"}
        ``"local"`` fetches, per attribute, the rows of each relation at the
        prefixes' keys (one Spark job per relation) and extends the prefixes
        on the driver with pandas; ``"spark"`` keeps everything in
        DataFrames.  ``"auto"`` runs locally while the seed and every fetch
        stay within :data:`LOCAL_MAX_ROWS` rows, and switches to ``"spark"``
        otherwise.

    Returns
    -------
    Frame
        Columns: the seed's variables, then the others in binding order, and
        :data:`VALUE_COLUMN`.
    """
    from faq.hypergraph.acyclic import attribute_order as connected_order
    from faq.spark import checkpoint, release

    if strategy not in SEEDED_STRATEGIES:
        from faq.errors import PlanError

        raise PlanError(reason=f"unknown seeded-join strategy {strategy!r}; known: {', '.join(SEEDED_STRATEGIES)}")
    persisted: list = [] if keep is None else keep
    bound: list[str] = list(seed.variables)
    edges = [seed.variables, *[r.variables for r in relations if r.variables]]
    # After the seed, each next attribute shares most relations with those bound.
    order = connected_order(edges, first=bound)
    if strategy != "spark":
        local = _local_join(seed, relations, semiring, order, forced=strategy == "local")
        if local is not None:
            return local
    prefix = _without_nulls(seed.df.select(*seed.variables, VALUE_COLUMN), seed.variables)

    # Relations lying inside the seed's variables only validate the seeds.
    inside = [r for r in relations if set(r.variables) <= set(bound)]
    outside = [r for r in relations if not set(r.variables) <= set(bound)]
    for r in inside:
        prefix = _multiply(prefix, r.df, list(r.variables), semiring)
    try:
        for x in order:
            if x in bound:
                continue
            lookups = _lookups(outside, order, x)
            # Lineage cut (lazily: materialised by the first job reading it): each level's plan
            # would otherwise hold the previous level several times over, growing geometrically.
            prefix = checkpoint(prefix, eager=False)
            persisted.append(prefix)
            prefix = _extend(prefix, lookups, semiring, persisted)
            bound.append(x)
        columns = [*bound, VALUE_COLUMN]
        return Frame(prefix.select(*columns), tuple(bound))
    finally:
        if keep is None:
            for df in persisted:
                release(df)


def seeded_joins(
    joins: Sequence[tuple[Frame, Sequence[Frame]]],
    semiring: "Semiring",
    keep: list,
    strategy: str = "auto",
) -> list[Frame]:
    """:func:`seeded_join` for several (seed, relations) pairs at once.

    With the local strategy they run in lockstep, so each round of fetches
    (the first attribute of every join, then the second ...) is one Spark
    job for all of them: the delta rules of one batch share their jobs.
    Joins too big for the driver run in Spark, one by one.
    """
    from faq.hypergraph.acyclic import attribute_order as connected_order

    orders = [connected_order([seed.variables, *[r.variables for r in rels if r.variables]], first=list(seed.variables))
              for seed, rels in joins]
    done: list[Optional[Frame]] = [None] * len(joins)
    if strategy != "spark":
        limit = None if strategy == "local" else LOCAL_MAX_ROWS
        done = _run_local([(seed, rels, order) for (seed, rels), order in zip(joins, orders)], semiring, limit)
    return [frame if frame is not None else seeded_join(seed, rels, semiring, keep=keep, strategy="spark")
            for frame, (seed, rels) in zip(done, joins)]


def _lookups(relations: Sequence[Frame], order: Sequence[str], x: str) -> list[_Lookup]:
    """Every relation holding ``x``: its columns up to ``x`` (with its value if ``x`` is its last attribute)."""
    lookups = []
    for r in relations:
        if x not in r.variables:
            continue
        attrs = [v for v in order if v in r.variables]
        at = attrs.index(x)
        key = tuple(attrs[:at])
        last = at == len(attrs) - 1
        columns = [*key, x]
        rel = r.df.select(*columns, VALUE_COLUMN) if last else r.df.select(*columns).distinct()
        lookups.append(_Lookup(_without_nulls(rel, columns), key, x, last))
    return lookups


def _extend(prefix: "DataFrame", lookups: Sequence[_Lookup], semiring: "Semiring",
            persisted: list) -> "DataFrame":
    """Bind one more attribute: restrict, count, propose from the smallest, validate."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    restricted = []
    for lk in lookups:
        if lk.key:
            # The prefixes' distinct keys are at most the relation's: broadcast them to its scan.
            keys = F.broadcast(prefix.select(*lk.key).distinct())
            rel = lk.relation.join(keys, list(lk.key), "left_semi")
        else:  # the attribute's first appearance in this relation: all its values
            rel = lk.relation
        restricted.append(rel)
    if len(lookups) == 1:
        lk = lookups[0]
        return _multiply(prefix, restricted[0], [*lk.key, lk.attribute], semiring, valued=lk.valued, propose=True)

    # Each restricted relation is read three times (count, propose, validate): cached by the first.
    restricted = [r.persist(StorageLevel.MEMORY_AND_DISK) for r in restricted]
    persisted.extend(restricted)
    # count: candidates per prefix in each relation; the smallest proposes
    counted = prefix
    names = []
    for i, (lk, rel) in enumerate(zip(lookups, restricted)):
        name = f"{_COUNT}{i}"
        pairs = rel.select(*lk.key, lk.attribute).distinct() if lk.valued else rel
        degrees = (pairs.groupBy(*lk.key) if lk.key else pairs.groupBy()).agg(F.count(F.lit(1)).alias(name))
        counted = counted.join(degrees, list(lk.key), "inner") if lk.key else counted.crossJoin(degrees)
        names.append(name)
    smallest = F.least(*[F.col(n) for n in names])
    choice = F.when(F.col(names[0]) == smallest, F.lit(0))
    for i, n in enumerate(names[1:], start=1):
        choice = choice.when(F.col(n) == smallest, F.lit(i))
    counted = counted.withColumn(_CHOICE, choice).drop(*names)
    # propose: each prefix takes the distinct candidates of its chosen relation
    parts = []
    for i, (lk, rel) in enumerate(zip(lookups, restricted)):
        chosen = counted.where(F.col(_CHOICE) == i).drop(_CHOICE)
        candidates = rel.select(*lk.key, lk.attribute).distinct()
        parts.append(chosen.join(candidates, list(lk.key), "inner") if lk.key else chosen.crossJoin(candidates))
    proposals = reduce(lambda a, b: a.unionByName(b), parts)
    # validate: every relation holds the candidate (and multiplies its value in)
    for lk, rel in zip(lookups, restricted):
        proposals = _multiply(proposals, rel, [*lk.key, lk.attribute], semiring, valued=lk.valued)
    return proposals


def _multiply(left: "DataFrame", right: "DataFrame", on: list[str], semiring: "Semiring", *,
              valued: bool = True, propose: bool = False) -> "DataFrame":
    """``left`` joined with ``right`` on ``on``, ⊗-multiplying right's value when ``valued``.

    ``propose`` marks a join that adds right's last ``on`` column (the new
    attribute) to ``left``, joining on the others.
    """
    from pyspark.sql import functions as F

    keys = on[:-1] if propose else on
    lhs = left  # Spark sizes both sides (checkpoints carry statistics) and picks the join
    if not valued:
        if propose:
            return lhs.join(right.select(*on), keys, "inner") if keys else lhs.crossJoin(right.select(*on))
        return left.join(right.select(*on).distinct(), on, "left_semi")
    r = right.select(*on, F.col(VALUE_COLUMN).alias(_RIGHT_VALUE))
    joined = lhs.join(r, keys, "inner") if keys else lhs.crossJoin(r)
    columns = [c for c in left.columns if c != VALUE_COLUMN]
    columns += [c for c in on if c not in columns]
    return joined.select(*columns, semiring.mul(F.col(VALUE_COLUMN), F.col(_RIGHT_VALUE)).alias(VALUE_COLUMN))


def _without_nulls(df: "DataFrame", columns: Sequence[str]) -> "DataFrame":
    from pyspark.sql import functions as F

    condition = reduce(lambda a, b: a & b, [F.col(c).isNotNull() for c in columns], F.lit(True))
    return df.where(condition)


# --- the local strategy -------------------------------------------------------------


def _local_join(seed: Frame, relations: Sequence[Frame], semiring: "Semiring", order: Sequence[str],
                forced: bool) -> Optional[Frame]:
    """The join extended on the driver (pandas), or None when a part exceeds :data:`LOCAL_MAX_ROWS`."""
    return _run_local([(seed, relations, order)], semiring, None if forced else LOCAL_MAX_ROWS)[0]


def _run_local(joins: Sequence[tuple], semiring: "Semiring", limit: Optional[int]) -> list[Optional[Frame]]:
    """Several local joins in lockstep: each round's fetches of all of them run as one Spark job.

    ``joins`` holds (seed, relations, attribute order).  A join whose fetch
    is over ``limit`` rows gets None (its caller runs it in Spark instead).
    """
    steps = [_local_steps(seed, relations, semiring, order) for seed, relations, order in joins]
    results: list[Optional[Frame]] = [None] * len(steps)
    requests = {i: next(step) for i, step in enumerate(steps)}
    while requests:
        ids = list(requests)
        fetched = _fetch_all([df for i in ids for df in requests[i]], limit)
        if fetched is None:  # too big for the driver: these joins run in Spark
            return results
        following, at = {}, 0
        for i in ids:
            mine, at = fetched[at:at + len(requests[i])], at + len(requests[i])
            try:
                following[i] = steps[i].send(mine)
            except StopIteration as done:
                results[i] = done.value
        requests = following
    return results


def _local_steps(seed: Frame, relations: Sequence[Frame], semiring: "Semiring", order: Sequence[str]):
    """One local join as a generator: yields the DataFrames to fetch, receives them as pandas.

    Values are not multiplied here: each valued relation's value travels as
    its own column and the ⊗ is a Spark Column expression at the end, so
    every semiring gives what the Spark strategy gives.
    """
    import pandas as pd

    spark = seed.df.sparkSession
    (prefix,) = yield [seed.df.select(*seed.variables, VALUE_COLUMN)]
    prefix = prefix.rename(columns={VALUE_COLUMN: "__v0"}).dropna()
    values = ["__v0"]
    types = {v: seed.df.schema[v].dataType for v in seed.variables}
    bound = list(seed.variables)
    inside = [r for r in relations if set(r.variables) <= set(bound)]
    outside = [r for r in relations if not set(r.variables) <= set(bound)]
    if inside:  # relations inside the seed's variables validate the seeds
        fetched = yield [_restricted(r.df.select(*r.variables, VALUE_COLUMN), prefix, r.variables[:1])
                         for r in inside]
        for r, rows in zip(inside, fetched):
            name = f"__v{len(values)}"
            values.append(name)
            prefix = prefix.merge(rows.rename(columns={VALUE_COLUMN: name}), on=list(r.variables), how="inner")
    for x in order:
        if x in bound:
            continue
        lookups = _lookups(outside, order, x)
        types[x] = lookups[0].relation.schema[x].dataType
        fetched = yield [_restricted(lk.relation, prefix, lk.key[:1]) for lk in lookups]
        parts = [(list(lk.key), lk.valued, rows) for lk, rows in zip(lookups, fetched)]
        prefix, values = _extend_local(prefix, values, parts, x, pd)
        bound.append(x)
    return _to_frame(spark, prefix, bound, values, types, semiring)


def _fetch(df: "DataFrame", limit: Optional[int]):
    """``df`` as pandas, or None when it has more than ``limit`` rows (one Spark job)."""
    rows = df.limit(limit + 1).toPandas() if limit is not None else df.toPandas()
    return None if limit is not None and len(rows) > limit else rows


def _restricted(df: "DataFrame", prefix, key: Sequence[str]) -> "DataFrame":
    """``df``'s rows whose first ``key`` column holds one of the prefixes' values (all rows without a key)."""
    from pyspark.sql import functions as F

    if not key:
        return df
    column = key[0]
    wanted = prefix[column].drop_duplicates()
    if len(wanted) <= IN_LIST_MAX:
        return df.where(F.col(column).isin([v.item() if hasattr(v, "item") else v for v in wanted]))
    keys = df.sparkSession.createDataFrame(wanted.to_frame(), schema=df.select(column).schema)
    return df.join(F.broadcast(keys), [column], "left_semi")


def _fetch_all(parts: Sequence["DataFrame"], limit: Optional[int]) -> Optional[list]:
    """Several small DataFrames as pandas in as few Spark jobs as their column types allow.

    Parts whose columns have the same types (by position) are unioned with a
    tag column and collected together: one job instead of one per part.
    """
    from pyspark.sql import functions as F

    groups: dict[tuple, list[int]] = {}
    for i, df in enumerate(parts):
        groups.setdefault(tuple(f.dataType.simpleString() for f in df.schema.fields), []).append(i)
    out: list = [None] * len(parts)
    for members in groups.values():
        tagged = [parts[i].select(F.lit(i).alias("__part"), *[F.col(c).alias(f"__c{k}")
                                                             for k, c in enumerate(parts[i].columns)])
                  for i in members]
        rows = _fetch(reduce(lambda a, b: a.unionByName(b), tagged), None if limit is None else limit * len(members))
        if rows is None:
            return None
        for i in members:
            mine = rows[rows["__part"] == i].drop(columns="__part")
            if limit is not None and len(mine) > limit:
                return None
            mine.columns = parts[i].columns
            out[i] = mine.reset_index(drop=True)
    return out


def _extend_local(prefix, values: list, parts: list, x: str, pd) -> tuple:
    """Count, propose from the smallest, validate: ``parts`` holds (key, valued, rows) per relation."""
    def value_of(rows, valued: bool):
        name = f"__v{len(values)}"
        return rows.rename(columns={VALUE_COLUMN: name}), name

    if len(parts) == 1:
        key, valued, rows = parts[0]
        if valued:
            rows, name = value_of(rows, valued)
            values = [*values, name]
        out = prefix.merge(rows, on=key, how="inner") if key else prefix.merge(rows, how="cross")
        return out, values
    # count: distinct candidates per key, each prefix gets every relation's count
    counted = prefix.copy()
    names = []
    for i, (key, _, rows) in enumerate(parts):
        pairs = rows[[*key, x]].drop_duplicates()
        name = f"__count{i}"
        names.append(name)
        if key:
            degrees = pairs.groupby(key).size().rename(name).reset_index()
            counted = counted.merge(degrees, on=key, how="inner")
        else:
            counted[name] = len(pairs)
    choice = counted[names].to_numpy().argmin(axis=1) if len(counted) else np.zeros(0, dtype=int)
    pieces = []
    for i, (key, _, rows) in enumerate(parts):
        chosen = counted[choice == i].drop(columns=names)
        pairs = rows[[*key, x]].drop_duplicates()
        if len(chosen):
            pieces.append(chosen.merge(pairs, on=key, how="inner") if key else chosen.merge(pairs, how="cross"))
    proposals = pd.concat(pieces, ignore_index=True) if pieces else \
        counted.drop(columns=names).assign(**{x: parts[0][2][x].iloc[:0]})
    # validate: each relation holds the candidate; valued ones bring their value (one row per match)
    for key, valued, rows in parts:
        if valued:
            rows, name = value_of(rows, valued)
            values = [*values, name]
            proposals = proposals.merge(rows, on=[*key, x], how="inner")
        else:
            proposals = proposals.merge(rows[[*key, x]].drop_duplicates(), on=[*key, x], how="inner")
    return proposals, values


def _to_frame(spark, prefix, bound: list, values: list, types: dict, semiring: "Semiring") -> Frame:
    """The driver's bindings back as a Spark :class:`Frame`, values multiplied by the semiring's ⊗."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    value_type = _parse_datatype_string(semiring.value_type)
    schema = StructType([StructField(v, types[v]) for v in bound] + [StructField(n, value_type) for n in values])
    table = prefix[[*bound, *values]]
    df = spark.createDataFrame(table if len(table) else [], schema=schema)
    product = reduce(semiring.mul, [F.col(n) for n in values])
    return Frame(df.select(*bound, product.alias(VALUE_COLUMN)), tuple(bound))
