"""Motifs: list and count the bindings of a small directed pattern in a graph.

A pattern is text, GraphFrames-style: terms separated by ``;``::

    (a)->(b); (a)->(c); (b)->(c)          feed-forward triangle
    (a)->(b); (b)->(c); !(a)->(c)         2-path a->b->c with no edge a->c
    (a)-(b); (b)-(c); (a)-(c)             undirected triangle (edges either way)
    (a)->(b); (b)->(c); allow a=c         2-walks: a and c may be one vertex

Terms
-----
``(u)->(v)``
    an edge u→v.  ``(v)<-(u)`` is the same edge; ``(u)-[e]->(v)`` and
    ``(v)<-[e]-(u)`` (GraphFrames) too: edges carry no data, so an edge
    name is accepted and ignored.
``(u)-(v)``
    an edge between u and v in *either* direction (``(u)-[e]-(v)`` too).
``!`` before an edge
    negation: the graph has no such edge (``!(a)->(c)``: no a→c;
    ``!(a)-(c)``: no edge between a and c).  Negations make induced motifs.
    Every vertex of a negated edge must also be on a positive edge.
``allow u=v``
    bindings may map u and v to the same vertex.  ``allow a=b=c`` relaxes
    every pair of a, b, c; ``allow a=b, c=d`` two pairs.

Semantics
---------
The graph is the *simple* digraph of the edges: self-loops dropped, repeated
edges collapsed.  A binding maps each pattern vertex to a graph vertex so
that every positive edge exists and no negated edge does; pattern vertices
map to **distinct** graph vertices unless an ``allow`` says otherwise.
Distinctness is the default because it is what "motif" means in network
science (a 4-cycle is four vertices, not a closed walk of length 4) and what
published motif counts count; GraphFrames' semantics (vertices may repeat)
is one ``allow`` away.  Listings have one column per pattern vertex, in
order of first appearance in the text.
Bindings are not quotiented by symmetry: an undirected triangle
``(a)-(b); (b)-(c); (a)-(c)`` has 3! = 6 bindings per triangle, a directed
3-cycle 3.

How it runs
-----------
The positive edges are one FAQ over the counting semiring, one atom per
edge: ``edge(u, v)`` (the simple digraph) or ``sym(u, v)`` (its symmetric
closure, for undirected edges); InsideOut plans it (binary joins on acyclic
bags, the worst-case optimal join on cyclic ones once it is available).
Distinctness and negation are not semiring products, so:

* **listing** answers the FAQ with every vertex free, then filters
  (``u != v``) and anti-joins (negations) the bindings;
* **counting** adds no filter when none is needed: two vertices joined by a
  positive edge are distinct anyway (no self-loops), so e.g. a triangle or a
  4-clique is one FAQ with no free variable (``direct``).  Otherwise
  counting either counts the filtered listing (``listing``) or uses
  inclusion–exclusion over the filters (``inclusion_exclusion``)::

      #{no bad event} = Σ_{S ⊆ events} (-1)^{|S|} #{every event in S}

  where an event is "u = v" (merge u and v in the pattern) or "the negated
  edge exists" (add it as a positive atom); each term is an FAQ with no free
  variable, and isomorphic terms are evaluated once.  A 4-cycle is then
  hom(C4) − 2·hom(two reciprocal pairs at one vertex) + hom(reciprocal pair),
  all aggregates: no binding is ever materialised.  ``auto`` uses
  inclusion–exclusion when it needs at most :data:`AUTO_MAX_TERMS` FAQs,
  else the listing.

Examples
--------
>>> from faq.graphs.motifs import parse_pattern
>>> p = parse_pattern("(a)->(b); (b)->(c); !(a)->(c)")
>>> p.vertices, p.distinct_pairs
(('a', 'b', 'c'), (('a', 'c'),))
>>> print(p)
(a)->(b); (b)->(c); !(a)->(c)
>>> [(coef, str(q)) for coef, q in inclusion_exclusion(p)]
[(1, 'count() := edge(a, b), edge(b, c)'),
 (-1, 'count() := edge(a, b), edge(b, c), edge(a, c)'),
 (-1, 'count() := edge(a, b), edge(b, a)')]
"""

from __future__ import annotations

import itertools
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from faq.errors import FAQTypeError, FAQValueError, InvalidArgumentError, MotifPatternError
from faq.factor import VALUE, Factor
from faq.language import FAQ, Atom

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from faq.insideout.executor import Progress
    from faq.insideout.planner import Plan

__all__ = [
    "motifs",
    "count_motifs",
    "list_motifs",
    "parse_pattern",
    "inclusion_exclusion",
    "Pattern",
    "MotifEdge",
    "MotifCount",
    "STRATEGIES",
    "AUTO_MAX_TERMS",
]

# Factor names of the two relations motif FAQs use.
EDGE = "edge"  # the simple digraph: (src, dst), no self-loops, value 1
SYM = "sym"  # its symmetric closure: (u, v) when u->v or v->u
SRC, DST = "src", "dst"

STRATEGIES = ("auto", "direct", "inclusion_exclusion", "listing")
# ``auto`` counts by inclusion–exclusion when it needs at most this many FAQs.
AUTO_MAX_TERMS = 8
# Inclusion–exclusion enumerates 2^events subsets; beyond this it is not tried.
MAX_EVENTS = 12
# Terms on at most this many vertices are identified up to isomorphism.
_CANONICAL_MAX_VERTICES = 6

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- patterns -------------------------------------------------------------------


@dataclass(frozen=True)
class MotifEdge:
    """One edge term, normalised to point ``src -> dst`` (``(b)<-(a)`` is a->b).

    ``directed=False`` means an edge either way.  ``position`` is where the
    term starts in the pattern text.
    """

    src: str
    dst: str
    directed: bool = True
    negated: bool = False
    position: int = 0

    def __str__(self) -> str:
        arrow = "->" if self.directed else "-"
        return f"{'!' if self.negated else ''}({self.src}){arrow}({self.dst})"


@dataclass(frozen=True)
class Pattern:
    """A parsed motif pattern (see :func:`parse_pattern`).

    Attributes
    ----------
    text : str
        The text it was parsed from.
    vertices : tuple of str
        Pattern vertices, in order of first appearance: the columns of a listing.
    edges : tuple of MotifEdge
        Every edge term, positive and negated, in text order.
    allowed : frozenset of frozenset
        Pairs of vertices that may be bound to the same graph vertex.
    """

    text: str
    vertices: tuple[str, ...]
    edges: tuple[MotifEdge, ...]
    allowed: frozenset = field(default_factory=frozenset)

    @property
    def positive(self) -> tuple[MotifEdge, ...]:
        return tuple(e for e in self.edges if not e.negated)

    @property
    def negated(self) -> tuple[MotifEdge, ...]:
        return tuple(e for e in self.edges if e.negated)

    @property
    def distinct_pairs(self) -> tuple[tuple[str, str], ...]:
        """Pairs that must differ and that no positive edge already keeps apart.

        A positive edge joins two different graph vertices (the graph has no
        self-loops), so only the other pairs need a filter.
        """
        adjacent = {frozenset((e.src, e.dst)) for e in self.positive}
        return tuple(
            (u, v)
            for u, v in itertools.combinations(self.vertices, 2)
            if frozenset((u, v)) not in adjacent and frozenset((u, v)) not in self.allowed
        )

    @property
    def needs_filters(self) -> bool:
        """Whether bindings of the positive FAQ need filtering (distinctness or negation)."""
        return bool(self.negated or self.distinct_pairs)

    def query(self, free: bool = True) -> FAQ:
        """The positive part as an FAQ: free = all vertices (listing) or none (counting).

        Examples
        --------
        >>> print(parse_pattern("(a)-(b); (b)->(a); (b)-(c)").query())
        motif(a, b, c) := edge(b, a), sym(b, c)
        """
        atoms = _atoms([(e.directed, e.src, e.dst) for e in self.positive], self.vertices)
        return FAQ(
            tuple(Atom(f, vs) for f, vs in atoms),
            self.vertices if free else (),
            "motif" if free else "count",
            "counting",
        )

    def __str__(self) -> str:
        terms = [str(e) for e in self.edges]
        if self.allowed:
            order = {v: i for i, v in enumerate(self.vertices)}
            pairs = sorted(
                (tuple(sorted(p, key=order.get)) for p in self.allowed), key=lambda p: (order[p[0]], order[p[1]])
            )
            terms.append("allow " + ", ".join(f"{u}={v}" for u, v in pairs))
        return "; ".join(terms)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, reason: str, position: Optional[int] = None) -> MotifPatternError:
        return MotifPatternError(self.text, self.pos if position is None else position, reason)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    def peek(self, token: str, skip: bool = True) -> bool:
        if skip:
            self.skip()
        return self.text.startswith(token, self.pos)

    def take(self, token: str, skip: bool = True) -> bool:
        if self.peek(token, skip):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str) -> None:
        if not self.take(token):
            raise self.error(f"expected {what}")

    def name(self, what: str) -> tuple[str, int]:
        self.skip()
        m = _NAME_RE.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected {what}")
        if m.group(0).startswith("__"):
            raise self.error(f"names starting with '__' are reserved: {m.group(0)!r}")
        self.pos = m.end()
        return m.group(0), m.start()


def parse_pattern(text: Union[str, Pattern]) -> Pattern:
    """Parse a motif pattern (grammar in the module docstring).

    Raises
    ------
    MotifPatternError
        With the position of the problem: bad syntax, an empty pattern or one
        without positive edges, an edge from a vertex to itself, a vertex of
        a negation or ``allow`` that no positive edge binds, an anonymous
        vertex ``()``.

    Examples
    --------
    >>> for e in parse_pattern("(b)<-[e]-(a); (b)-(c)").edges:
    ...     print(e, e.position)
    (a)->(b) 0
    (b)-(c) 14
    >>> parse_pattern("(a)->(b); !(a)->(c)")
    Traceback (most recent call last):
    ...
    faq.errors.MotifPatternError: [MOTIF_PATTERN] vertex 'c' is on no positive edge (only negated
    ones); bind it with a positive edge at position 17
      (a)->(b); !(a)->(c)
                       ^
    """
    if isinstance(text, Pattern):
        return text
    if not isinstance(text, str):
        raise FAQTypeError(f"a motif pattern is text, got {type(text).__name__}", found=type(text).__name__)
    s = _Scanner(text)
    if not text.strip(" \t\r\n;"):
        raise s.error("empty pattern; write edges such as '(a)->(b); (b)->(c)'", 0)
    edges: list[MotifEdge] = []
    seen: list[tuple[str, int]] = []  # vertex occurrences on edges, with positions
    negated_at: list[tuple[str, int]] = []
    allow_groups: list[list[tuple[str, int]]] = []
    while True:
        _term(s, edges, seen, negated_at, allow_groups)
        if s.at_end():
            break
        if s.take(";"):
            if s.at_end():
                break  # a trailing ';' is fine
            continue
        raise s.error("expected ';' between terms")

    positive_vertices = {e.src for e in edges if not e.negated} | {e.dst for e in edges if not e.negated}
    if not positive_vertices:
        raise s.error("the pattern has no positive edge; add one such as '(a)->(b)'", 0)
    for name, position in negated_at:
        if name not in positive_vertices:
            raise s.error(f"vertex {name!r} is on no positive edge (only negated ones); bind it with a positive edge",
                          position)
    allowed: set[frozenset] = set()
    for group in allow_groups:
        for name, position in group:
            if name not in positive_vertices:
                raise s.error(f"'allow' names vertex {name!r}, which is on no edge of the pattern", position)
        names = list(dict.fromkeys(n for n, _ in group))
        allowed.update(frozenset(p) for p in itertools.combinations(names, 2))
    vertices = tuple(dict.fromkeys(n for n, _ in seen))
    return Pattern(text, vertices, tuple(edges), frozenset(allowed))


def _term(s: _Scanner, edges, seen, negated_at, allow_groups) -> None:
    s.skip()
    start = s.pos
    negated = s.take("!")
    if s.peek("("):
        first = _vertex(s)
        directed, reverse = _arrow(s)
        second = _vertex(s)
        if first[0] == second[0]:
            raise s.error(
                f"edge from vertex {first[0]!r} to itself: the graph has no self-loops, so it never matches", start
            )
        u, v = (second[0], first[0]) if reverse else (first[0], second[0])
        edges.append(MotifEdge(u, v, directed, negated, start))
        seen.extend([first, second])
        if negated:
            negated_at.extend([first, second])
        return
    m = _NAME_RE.match(s.text, s.pos)
    if not negated and m and m.group(0) == "allow":
        s.pos = m.end()
        while True:
            group = [s.name("a vertex name after 'allow'")]
            if not s.peek("="):
                raise s.error("expected '=' (write 'allow a=b')")
            while s.take("="):
                group.append(s.name("a vertex name after '='"))
            allow_groups.append(group)
            if not s.take(","):
                return
    raise s.error("expected an edge such as '(a)->(b)', a negated edge '!(a)->(b)' or 'allow a=b'"
                  if not negated else "expected '(' after '!'")


def _vertex(s: _Scanner) -> tuple[str, int]:
    s.expect("(", "'(' (a vertex such as '(a)')")
    if s.peek(")"):
        raise s.error("anonymous vertex '()': name every vertex, e.g. '(x)'")
    name = s.name("a vertex name")
    s.expect(")", "')'")
    return name


def _arrow(s: _Scanner) -> tuple[bool, bool]:
    """Parse an edge between two vertices: (directed, reversed)."""
    s.skip()
    if s.take("<-", skip=False):
        if s.peek("["):
            _edge_name(s)
            s.expect("-", "'-' after ']' (write '<-[e]-')")
        return True, True
    if s.take("-", skip=False):
        if s.peek("["):
            _edge_name(s)
            if s.take("->"):
                return True, False
            s.expect("-", "'->' or '-' after ']'")
            return False, False
        if s.take(">", skip=False):
            return True, False
        return False, False
    raise s.error("expected an edge: '->', '<-' or '-'")


def _edge_name(s: _Scanner) -> None:
    """``[name]`` or ``[]``: accepted for GraphFrames patterns; edges carry no data here."""
    s.expect("[", "'['")
    if not s.peek("]"):
        s.name("an edge name or ']'")
    s.expect("]", "']'")


# --- FAQs of a pattern ------------------------------------------------------------


def _atoms(edges: Sequence[tuple[bool, str, str]], order: Sequence[str]) -> list[tuple[str, tuple[str, str]]]:
    """One atom per distinct edge; ``sym(u, v)`` is dropped when ``edge`` already joins u and v.

    The relations are 0/1 and sym ⊇ edge in both directions, so a repeated or
    implied atom multiplies by 1: dropping it changes no value.
    """
    rank = {v: i for i, v in enumerate(order)}
    directed = list(dict.fromkeys((u, v) for d, u, v in edges if d))
    joined = {frozenset(p) for p in directed}
    undirected = list(
        dict.fromkeys(
            tuple(sorted((u, v), key=rank.get)) for d, u, v in edges if not d and frozenset((u, v)) not in joined
        )
    )
    return [(EDGE, p) for p in directed] + [(SYM, p) for p in undirected]


def inclusion_exclusion(pattern: Union[str, Pattern], max_events: int = MAX_EVENTS) -> list[tuple[int, FAQ]]:
    """The count of ``pattern`` as Σ coefficient × (an FAQ with no free variable).

    Events are the distinctness pairs (merge the two vertices) and the
    negated edges (add them as positive atoms).  Terms with an edge from a
    vertex to itself are zero and left out; isomorphic terms (up to
    :data:`_CANONICAL_MAX_VERTICES` vertices) are merged and terms whose
    coefficients cancel are dropped.  The first term is the positive
    pattern's own count.

    Raises
    ------
    FAQValueError
        More than ``max_events`` events (2^events subsets).

    Examples
    --------
    >>> [(c, str(q)) for c, q in inclusion_exclusion("(a)->(b); (b)->(c); (c)->(d); (d)->(a)")]
    [(1, 'count() := edge(a, b), edge(b, c), edge(c, d), edge(d, a)'),
     (-2, 'count() := edge(a, b), edge(b, c), edge(c, b), edge(b, a)'),
     (1, 'count() := edge(a, b), edge(b, a)')]
    """
    pattern = parse_pattern(pattern)
    events: list[tuple[str, Any]] = [("same", p) for p in pattern.distinct_pairs]
    events += [("edge", (e.directed, e.src, e.dst)) for e in pattern.negated]
    if len(events) > max_events:
        raise FAQValueError(
            f"inclusion–exclusion over {len(events)} events (distinct pairs and negations) needs "
            f"2^{len(events)} terms; count by listing instead (strategy='listing')",
            events=len(events),
            max_events=max_events,
        )
    base = [(e.directed, e.src, e.dst) for e in pattern.positive]
    rank = {v: i for i, v in enumerate(pattern.vertices)}
    totals: dict[tuple, list] = {}
    canonical_cache: dict[tuple, tuple] = {}
    for chosen in itertools.product((False, True), repeat=len(events)):
        parent = {v: v for v in pattern.vertices}

        def find(v: str) -> str:
            while parent[v] != v:
                v = parent[v]
            return v

        edges = list(base)
        for (kind, what), on in zip(events, chosen):
            if not on:
                continue
            if kind == "same":
                a, b = sorted((find(what[0]), find(what[1])), key=rank.get)
                parent[b] = a  # the earlier vertex names the class
            else:
                edges.append(what)
        mapped = [(d, find(u), find(v)) for d, u, v in edges]
        if any(u == v for _, u, v in mapped):
            continue  # an edge from a vertex to itself: no binding in a simple graph
        atoms = tuple(_atoms(mapped, pattern.vertices))
        key = canonical_cache.get(atoms)
        if key is None:
            key = canonical_cache[atoms] = _canonical(atoms)
        sign = -1 if sum(chosen) % 2 else 1
        if key in totals:
            totals[key][0] += sign
        else:
            totals[key] = [sign, atoms]
    return [
        (coef, FAQ(tuple(Atom(f, vs) for f, vs in atoms), (), "count", "counting"))
        for coef, atoms in totals.values()
        if coef != 0
    ]


def _canonical(atoms: tuple[tuple[str, tuple[str, str]], ...]) -> tuple:
    """A key equal for isomorphic atom sets (exactly, on few vertices; by names otherwise)."""
    names = list(dict.fromkeys(v for _, vs in atoms for v in vs))

    def relabel(index: dict[str, int]) -> tuple:
        out = []
        for f, (u, v) in atoms:
            i, j = index[u], index[v]
            out.append((f, (min(i, j), max(i, j)) if f == SYM else (i, j)))
        return tuple(sorted(out))

    if len(names) > _CANONICAL_MAX_VERTICES:
        return relabel({v: i for i, v in enumerate(names)})
    return min(relabel(dict(zip(names, perm))) for perm in itertools.permutations(range(len(names))))


# --- running ------------------------------------------------------------------------


@dataclass(frozen=True)
class MotifCount:
    """The answer of :func:`count_motifs`."""

    count: int
    pattern: str
    strategy: str  # "direct", "inclusion_exclusion" or "listing"
    terms: int  # FAQs evaluated
    edges: int  # edges of the simple digraph
    seconds: float
    plans: tuple = field(default=(), repr=False)  # the Plan of each FAQ evaluated

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``faq motif --count --json`` prints)."""
        return {
            "pattern": self.pattern,
            "count": self.count,
            "strategy": self.strategy,
            "terms": self.terms,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "faqw": [str(p.faqw) for p in self.plans],
        }

    def _repr_html_(self) -> str:
        """The count, strategy, edges and time, for notebooks (:mod:`faq.display`)."""
        from faq.display import motifs_html

        return motifs_html(self)


class _Graph:
    """The simple digraph (and, on demand, its symmetric closure), cached while a job runs."""

    def __init__(self, edges: Union[Factor, "DataFrame", str, os.PathLike], spark=None) -> None:
        from pyspark import StorageLevel

        from faq.graphs.edges import edge_factor, simple_directed

        factor = edge_factor(edges, spark=spark)
        self.edge = _persist(simple_directed(factor), StorageLevel.MEMORY_AND_DISK)
        self._sym: Optional[Factor] = None
        self._rows: Optional[int] = None

    @property
    def rows(self) -> int:
        if self._rows is None:
            self._rows = self.edge.count()
        return self._rows

    @property
    def sym(self) -> Factor:
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        if self._sym is None:
            df = self.edge.df
            both = df.select(SRC, DST).unionByName(df.select(F.col(DST).alias(SRC), F.col(SRC).alias(DST)))
            sym = both.distinct().withColumn(VALUE, F.lit(1).cast("bigint"))
            self._sym = _persist(Factor.from_dataframe(sym, [SRC, DST], "counting", name=SYM),
                                 StorageLevel.MEMORY_AND_DISK)
        return self._sym

    def factors(self, query: FAQ) -> dict[str, Factor]:
        return {name: (self.edge if name == EDGE else self.sym) for name in query.factor_names}

    def relation(self, directed: bool) -> Factor:
        return self.edge if directed else self.sym

    def close(self) -> None:
        for f in (self.edge, self._sym):
            if f is not None:
                f.df.unpersist()

    def __enter__(self) -> "_Graph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _persist(factor: Factor, level) -> Factor:
    from dataclasses import replace

    return replace(factor, df=factor.df.persist(level))


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise InvalidArgumentError("strategy", strategy, f"must be one of {', '.join(STRATEGIES)}")


def _bindings(graph: _Graph, pattern: Pattern, progress) -> tuple["DataFrame", Any]:
    """The filtered bindings (lazy) and the QueryResult whose cache they read."""
    from pyspark.sql import functions as F

    from faq.insideout.executor import evaluate

    query = pattern.query(free=True)
    result = evaluate(query, graph.factors(query), progress=progress)
    try:
        df = result.factor.df.select(*pattern.vertices)
        condition = None
        for u, v in pattern.distinct_pairs:
            differ = F.col(u) != F.col(v)
            condition = differ if condition is None else condition & differ
        if condition is not None:
            df = df.where(condition)
        for e in pattern.negated:
            rel = graph.relation(e.directed).df
            df = df.join(rel.select(F.col(SRC).alias(e.src), F.col(DST).alias(e.dst)), [e.src, e.dst], "left_anti")
        return df.select(*pattern.vertices), result
    except BaseException:
        result.close()
        raise


def list_motifs(
    edges: Union[Factor, "DataFrame", str, os.PathLike],
    pattern: Union[str, Pattern],
    *,
    progress: Optional["Progress"] = None,
    spark=None,
) -> "DataFrame":
    """Every binding of ``pattern`` in the graph, one row each, one column per pattern vertex.

    Parameters
    ----------
    edges : Factor, DataFrame or path
        A two-variable factor (values ignored), a DataFrame with ``src`` and
        ``dst`` columns (GraphFrames' convention), or an edge-list file read
        with :func:`faq.io.read_edge_list`.  Self-loops and repeated edges
        are ignored.
    pattern : str or Pattern
    progress : callable, optional
        Receives the executor's step events.

    Returns
    -------
    DataFrame
        Columns ``pattern.vertices``; no duplicate rows.  It is computed once
        and **cached** (memory and disk), never collected: call
        ``.unpersist()`` when done with it.
    """
    from pyspark import StorageLevel

    pattern = parse_pattern(pattern)
    with _Graph(edges, spark) as graph:
        df, result = _bindings(graph, pattern, progress)
        with result:
            df = df.persist(StorageLevel.MEMORY_AND_DISK)
            try:
                df.count()  # materialise before the caches it reads are released
            except BaseException:
                df.unpersist()
                raise
    return df


def count_motifs(
    edges: Union[Factor, "DataFrame", str, os.PathLike],
    pattern: Union[str, Pattern],
    *,
    strategy: str = "auto",
    progress: Optional["Progress"] = None,
    spark=None,
) -> MotifCount:
    """Count the bindings of ``pattern`` (the rows :func:`list_motifs` would return).

    Parameters
    ----------
    edges, pattern, progress
        As for :func:`list_motifs`.
    strategy : {"auto", "direct", "inclusion_exclusion", "listing"}
        ``direct``: one FAQ with no free variable (only when the pattern needs
        no filter: no negation, every non-allowed pair joined by a positive
        edge).  ``inclusion_exclusion``: a signed sum of such FAQs.
        ``listing``: count the filtered listing.  ``auto``: ``direct`` when
        possible, else inclusion–exclusion if it needs at most
        :data:`AUTO_MAX_TERMS` FAQs, else listing.

    Returns
    -------
    MotifCount
    """
    from faq.insideout.executor import evaluate

    _check_strategy(strategy)
    started = time.perf_counter()
    pattern = parse_pattern(pattern)
    terms: Optional[list[tuple[int, FAQ]]] = None
    if strategy == "direct" and pattern.needs_filters:
        raise InvalidArgumentError(
            "strategy", strategy,
            "the pattern needs distinctness or negation filters; use 'inclusion_exclusion' or 'listing'",
        )
    if strategy in ("auto", "direct", "inclusion_exclusion"):
        events = len(pattern.distinct_pairs) + len(pattern.negated)
        if strategy == "inclusion_exclusion" or events <= MAX_EVENTS:
            terms = inclusion_exclusion(pattern)
        if strategy == "auto" and terms is not None and len(terms) > AUTO_MAX_TERMS:
            terms = None
    with _Graph(edges, spark) as graph:
        plans: list = []
        if terms is None:
            used = "listing"
            df, result = _bindings(graph, pattern, progress)
            with result:
                total = df.count()  # an aggregate; nothing is collected
                plans.append(result.plan)
            n_terms = 1
        else:
            used = "direct" if not pattern.needs_filters else "inclusion_exclusion"
            total = 0
            for coef, query in terms:
                with evaluate(query, graph.factors(query), progress=progress) as result:
                    total += coef * int(result.scalar())
                    plans.append(result.plan)
            n_terms = len(terms)
        # The planner's statistics counted the edges already (when a query used them).
        n_edges = next((p.sizes[EDGE] for p in plans if EDGE in p.sizes), None)
        if n_edges is None:
            n_edges = graph.rows
    return MotifCount(int(total), str(pattern), used, n_terms, n_edges, time.perf_counter() - started, tuple(plans))


def motifs(
    edges: Union[Factor, "DataFrame", str, os.PathLike],
    pattern: Union[str, Pattern],
    *,
    count: bool = False,
    strategy: str = "auto",
    progress: Optional["Progress"] = None,
    spark=None,
) -> Union["DataFrame", int]:
    """List (default) or count (``count=True``) the bindings of a motif pattern.

    Listing returns :func:`list_motifs`' cached DataFrame (unpersist it when
    done); counting returns :func:`count_motifs`' number.  ``strategy`` is
    for counting only.

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> g = factor_of([(1, 2, 1), (2, 3, 1), (1, 3, 1), (3, 1, 1)], ["src", "dst"])
    >>> motifs(g, "(a)->(b); (a)->(c); (b)->(c)", count=True)
    1
    >>> found = motifs(g, "(a)->(b); (b)->(c); !(a)->(c)")
    >>> sorted(map(tuple, found.collect()))
    [(2, 3, 1), (3, 1, 2)]
    >>> _ = found.unpersist()
    """
    if count:
        return count_motifs(edges, pattern, strategy=strategy, progress=progress, spark=spark).count
    _check_strategy(strategy)
    return list_motifs(edges, pattern, progress=progress, spark=spark)
