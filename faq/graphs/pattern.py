"""Motif patterns: the text form, its parser, and the FAQs that count a pattern (no Spark).

Running them (listing and counting bindings in a graph) is :mod:`faq.graphs.motifs`.

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

Examples
--------
>>> from faq.graphs.pattern import inclusion_exclusion, parse_pattern
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
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from faq.errors import FAQTypeError, FAQValueError, MotifPatternError
from faq.language import FAQ, Atom

__all__ = ["parse_pattern", "inclusion_exclusion", "Pattern", "MotifEdge", "EDGE", "SYM", "MAX_EVENTS"]

# Factor names of the two relations motif FAQs use.
EDGE = "edge"  # the simple digraph: (src, dst), no self-loops, value 1
SYM = "sym"  # its symmetric closure: (u, v) when u->v or v->u

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
        raise FAQTypeError(error_class="PATTERN_NOT_TEXT", found=type(text).__name__)
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
        raise FAQValueError(error_class="TOO_MANY_EVENTS", events=len(events), max_events=max_events)
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
