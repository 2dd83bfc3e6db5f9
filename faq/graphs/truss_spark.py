"""Truss decomposition on the executors: every edge's trussness computed by Spark, for edges the driver cannot hold.

:mod:`faq.graphs.truss` peels on the driver (compiled loops over numpy);
this module computes the same answer with Spark Column expressions alone
(no Python UDF, no RDD: it runs on Spark Connect), and brings back only
scalars (counts, the largest trussness):

1. **clean** -- as the driver does (:func:`faq.graphs.truss.undirected_edges`):
   a null id is refused (``NULL_KEY``), each edge becomes
   ``(least, greatest)``, self-loops and repeats are dropped; each edge gets
   an id (a local checkpoint fixes them);
2. **triangles** -- each edge points from its endpoint of lower
   (degree, id); a triangle ``a ≺ b ≺ c`` is the wedge of ``a``'s out-edges
   to ``b`` and ``c`` closed by ``b → c``: listed once, by two joins, and
   the wedges are few (hubs have few out-edges);
3. **trussness** by the local h-index iteration of Sariyüce, Seshadhri and
   Pinar ("Local algorithms for hierarchical dense subgraph discovery",
   VLDB 2018): ``τ₀(e)`` is ``e``'s support (its triangles) and
   ``τᵢ₊₁(e)`` the h-index of ``{min(τᵢ(e'), τᵢ(e'')) : triangles {e, e', e''}}``.
   The values never increase and stop at ``trussness(e) − 2``; a round is
   three joins of the triangles with ``τ`` (broadcast when small) and a
   group-by; Spark's array functions take each h-index (the values sorted
   descending, ``h = max min(rank, value)``).
   Each round's ``τ`` is a local checkpoint (the lineage stays one round
   long) and the round's only result on the driver is how many values changed:
   the iteration stops when none did.  An edge in no triangle has trussness 2.

Examples
--------
>>> from faq.spark import get_session
>>> df = get_session().createDataFrame([(1, 2), (2, 3), (3, 1), (3, 4), (4, 4), (2, 1)], "src long, dst long")
>>> with spark_truss(df) as t:
...     sorted(map(tuple, t.table().collect())), t.counts, t.max_k, t.table(k=3).count()
([(1, 2, 3), (1, 3, 3), (2, 3, 3), (3, 4, 2)], {2: 1, 3: 3}, 3, 3)
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any, Optional

from faq.events import Progress, notes_to
from faq.results import Answer, Explanation
from faq.scope import Owner, Scope

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["spark_truss", "SparkTrussResult", "clean_edges", "triangle_edges", "h_index_round"]

SRC, DST, TRUSSNESS = "src", "dst", "trussness"  # the result's columns, as the driver's TrussResult names them
EDGE, LOW, HIGH = "e", "u", "v"  # an edge: its id and its ends (u < v)
E1, E2, E3 = "e1", "e2", "e3"  # a triangle's edges: a-b, a-c, b-c
TAU, CHANGED = "tau", "changed"  # an edge's current value (trussness - 2) and whether the last round lowered it
VALUE, OWN, COUNT = "value", "own", "n"  # a value an edge is given, its own value, rows a pair stands for
SOURCE = "truss edges"  # what errors call the input
# Up to this many edges, the sides of the joins that hold a row an edge (a round's values: two longs; the
# oriented edges: four; the degrees: two a node) are broadcast, 32 MiB at most, faq's session's broadcast
# threshold: a checkpoint carries no size Spark could judge by, and without the hint each round shuffles the
# triangles three times.
BROADCAST_EDGES = 1 << 20


class SparkTrussResult(Owner, Answer):
    """Every edge's trussness, computed on the executors (:func:`spark_truss`): ``table(k=None)`` (a Spark
    DataFrame), ``to_pandas``, ``df``, ``max_k``, ``counts``, ``plan`` / ``explain()``, ``close()``.

    It owns the checkpoints its table is made of (the edges, their values): ``close()`` (or ``with``)
    releases them.
    """

    def __init__(self, frame: "DataFrame", k: Optional[int], facts: dict[str, Any], seconds: dict[str, float],
                 scope: Scope, reason: str = "") -> None:
        self.frame, self.k, self.facts, self.seconds, self.scope, self.reason = frame, k, facts, seconds, scope, reason

    @property
    def max_k(self) -> int:
        """The largest trussness (2 when there is no triangle, 0 for no edge)."""
        return int(self.facts["max_k"])

    @functools.cached_property
    def counts(self) -> dict[int, int]:
        """Edges per trussness (one Spark job, a row per trussness)."""
        rows = self.frame.groupBy(TRUSSNESS).count().collect()
        return {int(r[TRUSSNESS]): int(r["count"]) for r in sorted(rows, key=lambda r: r[TRUSSNESS])}

    def table(self, k: Optional[int] = None) -> "DataFrame":
        """``(src, dst, trussness)`` as a Spark DataFrame, ``src < dst``; with ``k`` (default the one given to
        :func:`spark_truss`) only the k-truss's edges."""
        from pyspark.sql import functions as F

        k = self.k if k is None else k
        return self.frame if k is None else self.frame.where(F.col(TRUSSNESS) >= int(k))

    def to_pandas(self, k: Optional[int] = None) -> Any:
        """:meth:`table` collected as pandas (it moves every row of the table to the driver)."""
        return self.table(k).toPandas()

    @property
    def df(self) -> "DataFrame":
        """:meth:`table`, as :attr:`faq.graphs.truss.TrussResult.df` is."""
        return self.table()

    @property
    def plan(self) -> Explanation:
        """What ran: where and why, edges, triangles, rounds, the largest k, and each phase's seconds."""
        phases = tuple(f"{name}: {value:.3g} s" for name, value in self.seconds.items())
        why = f" ({self.reason})" if self.reason else ""
        return Explanation("truss decomposition on the executors: triangles listed by Spark joins, then the "
                           "local h-index iteration (Sariyüce et al.) to its fixpoint",
                           (f"placement: executors{why}", f"edges: {self.facts['edges']}",
                            f"triangles: {self.facts['triangles']}", f"rounds: {self.facts['rounds']}",
                            f"largest k: {self.max_k}", f"k: {self.k}", *phases))

    def summary(self) -> str:
        """Edges, the largest k and k (the one-line ``repr``)."""
        return f"edges={self.facts['edges']}, max_k={self.max_k}, k={self.k}, placement=executors"


def spark_truss(edges: "DataFrame", k: Optional[int] = None, *, progress: Progress = None,
                reason: str = "") -> SparkTrussResult:
    """Every edge's trussness of a Spark DataFrame of edges (``src``, ``dst``: integer ids), computed by Spark
    (module notes): a job for the edges, one for the triangles, one a round.

    Parameters
    ----------
    edges : Spark DataFrame
        With integer columns ``src`` and ``dst``; direction, self-loops and repeats are ignored.
    k : int, optional
        At least 2: the k-truss's edges are what ``table()`` gives by default.
    progress : callable, optional
        Receives a note after each phase and each round.
    reason : str
        Why the executors run it (the plan says so).

    Returns
    -------
    SparkTrussResult
        Holding the checkpoints its table is made of until ``close()``.
    """
    from faq.graphs.truss import checked_k

    k = checked_k(k)
    note = notes_to(progress)  # lines to a reporter, NoteEvents to a plain callable
    seconds: dict[str, float] = {}
    scope = Scope()
    with scope.closing_on_error():
        t0 = time.perf_counter()
        numbered, facts = _checked_edges(edges, scope)
        triangles, seen = scope.checkpoint_observed(triangle_edges(numbered, facts["edges"] <= BROADCAST_EDGES),
                                                  {"triangles": _rows()})
        facts.update(seen)
        seconds["triangles"] = time.perf_counter() - t0
        note(f"{facts['edges']:,} edges, {facts['triangles']:,} triangles on the executors "
             f"({seconds['triangles']:.2f} s)")
        t0 = time.perf_counter()
        tau, facts["rounds"], top = _fixpoint(triangles, scope, note, facts["edges"])
        scope.release(triangles)  # the result is made of the edges and the last values, which it owns
        seconds["h-index rounds"] = time.perf_counter() - t0
        facts["max_k"] = 0 if not facts["edges"] else 2 + int(top or 0)
        note(f"trussness: largest {facts['max_k']} after {facts['rounds']} rounds")
    return SparkTrussResult(_trussness(numbered, tau), k, facts, seconds, scope, reason)


def _rows() -> "Column":
    """The metric of a checkpoint's rows."""
    from pyspark.sql import functions as F

    return F.count(F.lit(1))


def _checked_edges(edges: "DataFrame", scope: Scope) -> tuple["DataFrame", dict[str, Any]]:
    """The cleaned edges with their ids, ``(e, u, v)``, checkpointed (owned by ``scope``), and their count; a
    null id refused (``NULL_KEY``) with the count of the rows holding one, learnt in the same job."""
    from pyspark.sql import functions as F

    from faq.errors import NullKeyError

    nulls = {c: F.sum(F.when(F.col(f"null_{c}"), F.col(COUNT))) for c in (SRC, DST)}
    clean = ~F.col(f"null_{SRC}") & ~F.col(f"null_{DST}")
    kept, seen = scope.checkpoint_observed(_numbered(clean_edges(edges)),
                                           {"edges": F.count(F.when(clean, 1)), **nulls})
    for c in (SRC, DST):
        if seen[c]:
            raise NullKeyError(factor=SOURCE, column=c, count=int(seen[c]))
    return kept.where(clean).select(EDGE, LOW, HIGH), {"edges": int(seen["edges"])}


def clean_edges(edges: "DataFrame") -> "DataFrame":
    """The simple undirected graph of ``edges``: ``(u, v)`` with ``u < v``, no self-loop, no repeat; beside
    each pair, whether its ``src`` or ``dst`` was null, and how many rows it stands for (``n``).

    Refused as the driver refuses them: a missing ``src`` or ``dst`` (``MISSING_COLUMN``), ids that are not
    integers (``INVALID_ARGUMENT``).
    """
    from pyspark.sql import functions as F

    from faq.errors import InvalidArgumentError, MissingColumnError
    from faq.insideout.physical import INTEGRAL_TYPES

    types = dict(edges.dtypes)
    names = list(edges.columns)
    for c in (SRC, DST):
        if names.count(c) != 1:
            raise MissingColumnError(column=c, available=names, source=f"{SOURCE} (one column of each name)")
        if types[c] not in INTEGRAL_TYPES:
            raise InvalidArgumentError(argument="edges", value=f"{c} {types[c]}",
                                       reason="a truss's node ids are integers (tinyint to bigint)")
    src, dst = F.col(SRC).cast("bigint"), F.col(DST).cast("bigint")
    missing = src.isNull() | dst.isNull()  # kept, to be counted: the driver refuses a null id
    return (edges.where(missing | (src != dst))
            .groupBy(F.least(src, dst).alias(LOW), F.greatest(src, dst).alias(HIGH),
                     src.isNull().alias(f"null_{SRC}"), dst.isNull().alias(f"null_{DST}"))
            .agg(F.count(F.lit(1)).alias(COUNT)))


def _numbered(pairs: "DataFrame") -> "DataFrame":
    """``pairs`` with an id each (fixed once checkpointed: the ids are not recomputed)."""
    from pyspark.sql import functions as F

    return pairs.select(F.monotonically_increasing_id().alias(EDGE), *pairs.columns)


def triangle_edges(edges: "DataFrame", broadcast: bool = False) -> "DataFrame":
    """Each triangle once, as its three edge ids ``(e1, e2, e3)``: ``a-b``, ``a-c``, ``b-c`` for ``a ≺ b ≺ c``
    in (degree, id) order (module notes, step 2); ``edges`` is ``(e, u, v)``; ``broadcast``: few enough to
    send the degrees and the edges to every task (:data:`BROADCAST_EDGES`)."""
    from pyspark.sql import functions as F

    sent = F.broadcast if broadcast else (lambda df: df)
    ends = edges.select(F.col(LOW).alias("n")).unionAll(edges.select(F.col(HIGH).alias("n")))
    degree = sent(ends.groupBy("n").agg(F.count(F.lit(1)).alias("d")))
    placed = (edges.join(degree.select(F.col("n").alias(LOW), F.col("d").alias("du")), LOW)
              .join(degree.select(F.col("n").alias(HIGH), F.col("d").alias("dv")), HIGH))
    u_first = (F.col("du") < F.col("dv")) | ((F.col("du") == F.col("dv")) & (F.col(LOW) < F.col(HIGH)))
    oriented = placed.select(EDGE, F.when(u_first, F.col(LOW)).otherwise(F.col(HIGH)).alias("a"),
                             F.when(u_first, F.col(HIGH)).otherwise(F.col(LOW)).alias("b"),
                             F.when(u_first, F.col("dv")).otherwise(F.col("du")).alias("db"))
    left = oriented.select("a", F.col(EDGE).alias(E1), "b", "db")
    right = sent(oriented.select("a", F.col(EDGE).alias(E2), F.col("b").alias("c"), F.col("db").alias("dc")))
    b_first = (F.col("db") < F.col("dc")) | ((F.col("db") == F.col("dc")) & (F.col("b") < F.col("c")))
    wedges = left.join(right, "a").where(b_first)  # a's out-edges to b ≺ c: half the pairs
    closing = sent(oriented.select(F.col("a").alias("b"), F.col("b").alias("c"), F.col(EDGE).alias(E3)))
    return wedges.join(closing, ["b", "c"]).select(E1, E2, E3)


def _supports(triangles: "DataFrame") -> "DataFrame":
    """``τ₀``: each edge in a triangle with its support, as ``(e, tau)``."""
    from pyspark.sql import functions as F

    ids = triangles.select(F.explode(F.array(E1, E2, E3)).alias(EDGE))
    return ids.groupBy(EDGE).agg(F.count(F.lit(1)).alias(TAU))


def h_index_round(triangles: "DataFrame", tau: "DataFrame", broadcast: bool = False) -> "DataFrame":
    """``τᵢ₊₁`` from ``τᵢ`` (module notes, step 3), as ``(e, tau, changed)``: each triangle gives each of its
    edges the least value of the other two; an edge's new value is the h-index of what it is given.

    The h-index of values sorted descending is ``max min(rank, value)``: each edge's values are gathered,
    sorted and ranked by Spark's array functions (one shuffle, no window, no UDF).  ``broadcast``: ``tau``
    is small enough to send to every task (:data:`BROADCAST_EDGES`).
    """
    from pyspark.sql import functions as F

    tau = F.broadcast(tau) if broadcast else tau
    joined = triangles
    for edge, value in ((E1, "t1"), (E2, "t2"), (E3, "t3")):
        joined = joined.join(tau.select(F.col(EDGE).alias(edge), F.col(TAU).alias(value)), edge)

    def given(edge: str, own: str, a: str, b: str) -> "Column":
        return F.struct(F.col(edge).alias(EDGE), F.least(a, b).alias(VALUE), F.col(own).alias(OWN))

    offers = joined.select(F.inline(F.array(given(E1, "t1", "t2", "t3"), given(E2, "t2", "t1", "t3"),
                                            given(E3, "t3", "t1", "t2"))))
    gathered = offers.groupBy(EDGE).agg(F.sort_array(F.collect_list(VALUE), asc=False).alias(VALUE),
                                        F.max(OWN).alias(OWN))
    h = F.array_max(F.transform(VALUE, lambda value, i: F.least(value, i + 1)))
    return gathered.select(EDGE, h.cast("bigint").alias(TAU), (h != F.col(OWN)).alias(CHANGED))


def _fixpoint(triangles: "DataFrame", scope: Scope, note: Any,
              edges: int) -> tuple["DataFrame", int, Optional[int]]:
    """``τ`` iterated from the supports until no value changes: the last ``τ`` (owned by ``scope``), the
    rounds, and the largest value (None without a triangle).

    Each round's ``τ`` is checkpointed (the lineage is one round long) and the previous one released; how
    many values changed, and the largest, are the round's only numbers on the driver.
    """
    from pyspark.sql import functions as F

    metrics = {"changed": F.count(F.when(F.col(CHANGED), 1)), "top": F.max(TAU)}
    tau, rounds = _supports(triangles), 0  # the first round reads the supports, made in its own job
    while True:
        t0 = time.perf_counter()
        new, seen = scope.checkpoint_observed(h_index_round(triangles, tau, edges <= BROADCAST_EDGES), metrics)
        scope.release(tau)  # (the supports are no checkpoint: nothing to release)
        tau, rounds = new, rounds + 1
        note(f"h-index round {rounds}: {int(seen['changed']):,} values lowered ({time.perf_counter() - t0:.2f} s)")
        if not seen["changed"]:
            return tau, rounds, seen["top"]


def _trussness(edges: "DataFrame", tau: "DataFrame") -> "DataFrame":
    """``(src, dst, trussness)``: ``τ + 2``, and 2 for an edge in no triangle (a join of two checkpoints)."""
    from pyspark.sql import functions as F

    joined = edges.join(tau.select(EDGE, TAU), EDGE, "left")
    return joined.select(F.col(LOW).alias(SRC), F.col(HIGH).alias(DST),
                         (F.coalesce(F.col(TAU), F.lit(0)) + 2).cast("bigint").alias(TRUSSNESS))
