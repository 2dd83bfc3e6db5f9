"""The query language: Functional Aggregate Queries as values, and their Datalog-like text form.

(``faq.query`` is the front door's function that answers a query; this module
holds what a query *is*.)

An :class:`FAQ` names the factors it multiplies (as :class:`Atom` s, one per
use, so a factor used three times appears three times), its free variables,
and the ⊕ of each bound variable::

    φ(x_F) = ⊕_{x_{f+1}} … ⊕_{x_n}  ⊗_{atoms} ψ(x_atom)

The text form is ``head := atom, atom, ...`` where the head lists the free
variables: ``count() := edge(a,b), edge(a,c), edge(b,c)`` or
``C(i,l) := A(i,j), B(j,k), D(k,l)``.  Every variable not in the head is
bound.

Nothing here touches Spark: a query is plain data.

Examples
--------
>>> from faq.language import parse_query
>>> q = parse_query("C(i,l) := A(i,j), B(j,k), D(k,l)")
>>> q.free, q.bound
(('i', 'l'), ('j', 'k'))
>>> print(q)
C(i, l) := A(i, j), B(j, k), D(k, l)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence, Union

from faq.errors import PlanError, QueryParseError, QueryTooLargeError, UnknownVariableError

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(_NAME)

# Limits on a query's size, refused with QueryTooLargeError before anything else is done.  Planning
# grows with the query (per step, with the atoms and relations its bag meets); within these sizes its
# inexact fallbacks keep it to seconds (measured at 2,000 atoms: a chain 0.6 s, a star 6 s, a grid
# 7 s, random ternary atoms over 666 variables 17 s, the worst found; see the limits in
# faq.hypergraph.orders and faq.insideout.bags).  The text limit bounds the parser's own time and
# memory (1 MB: 0.2 s, about 55,000 atoms, refused after).
#: Most characters :func:`parse_query` reads.
MAX_QUERY_CHARS = 1_000_000
#: Most atoms a query may have.
MAX_ATOMS = 2_000
#: Most distinct variables a query may have (the elimination graph is at most their square; a chain
#: or star of MAX_ATOMS binary atoms has one more than MAX_ATOMS).
MAX_VARIABLES = 4_000
#: Most variables one atom may have (its atom makes a clique of them in the primal graph).
MAX_ARITY = 64


@dataclass(frozen=True)
class Atom:
    """One use of a factor: its name and the query variables of its columns."""

    factor: str
    variables: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.factor}({', '.join(self.variables)})"


@dataclass(frozen=True)
class FAQ:
    """A Functional Aggregate Query.

    Parameters
    ----------
    atoms : tuple of Atom
        The factors multiplied, one atom per use.
    free : tuple of str
        Free (output) variables, in output column order.
    name : str
        The head's name (``count``, ``C`` ...).
    semiring : str or None
        The query's semiring; ``None`` means "the factors' semiring".
    aggregates : tuple of (variable, semiring name)
        The ⊕ of particular bound variables, outermost first, for queries
        mixing aggregates (marginal-MAP: ``(("y", "max_product"),)`` with
        semiring ``"real"`` is max_y Σ_rest).  Bound variables not listed use
        the query semiring's ⊕ and are innermost (eliminated first).
        Different ⊕s do not commute, so elimination keeps their order.

    Examples
    --------
    >>> q = parse_query("paths(a) := e(a,b), e(b,c)")
    >>> q.free, q.bound, [atom.factor for atom in q.atoms]
    (('a',), ('b', 'c'), ['e', 'e'])
    """

    atoms: tuple[Atom, ...]
    free: tuple[str, ...] = ()
    name: str = "q"
    semiring: Union[str, None] = None
    aggregates: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "atoms", tuple(self.atoms))
        object.__setattr__(self, "free", tuple(self.free))
        object.__setattr__(self, "aggregates", tuple((v, s) for v, s in self.aggregates))
        self._check_size()
        known = self.variables
        for v in self.free:
            if v not in known:
                raise UnknownVariableError(variable=v, role="free", known=known)
        if len(set(self.free)) != len(self.free):
            seen: set[str] = set()
            repeated = sorted({v for v in self.free if v in seen or seen.add(v)})
            raise PlanError(reason=f"free variables repeat: {', '.join(repeated)}")
        for v, _ in self.aggregates:
            if v not in known:
                raise UnknownVariableError(variable=v, role="aggregated", known=known)
            if v in self.free:
                raise PlanError(reason=f"variable {v!r} is free; it cannot also have an aggregate")
        for v in known:
            if v.startswith("__"):
                raise PlanError(reason=f"variable names may not start with '__' (reserved): {v!r}")

    def _check_size(self) -> None:
        """QueryTooLargeError unless the query is within :data:`MAX_ATOMS`, :data:`MAX_ARITY` and
        :data:`MAX_VARIABLES` (checked first: every other check and all planning grow with them)."""
        if len(self.atoms) > MAX_ATOMS:
            raise QueryTooLargeError(what="atoms", size=len(self.atoms), limit=MAX_ATOMS)
        for k, atom in enumerate(self.atoms, start=1):
            if len(atom.variables) > MAX_ARITY:
                raise QueryTooLargeError(what=f"variables in its atom {k} ({atom.factor})",
                                         size=len(atom.variables), limit=MAX_ARITY)
        n_variables = len(self.variables)
        if n_variables > MAX_VARIABLES:
            raise QueryTooLargeError(what="distinct variables", size=n_variables, limit=MAX_VARIABLES)

    @property
    def variables(self) -> tuple[str, ...]:
        """All variables, in order of first appearance."""
        seen: dict[str, None] = {}
        for atom in self.atoms:
            for v in atom.variables:
                seen.setdefault(v, None)
        return tuple(seen)

    @property
    def bound(self) -> tuple[str, ...]:
        """Variables aggregated away, in order of first appearance."""
        return tuple(v for v in self.variables if v not in self.free)

    @property
    def factor_names(self) -> tuple[str, ...]:
        """Distinct factor names, in order of first use."""
        return tuple(dict.fromkeys(a.factor for a in self.atoms))

    def aggregate_of(self, variable: str, default: str) -> str:
        """The semiring name whose ⊕ eliminates ``variable``."""
        return dict(self.aggregates).get(variable, default)

    def blocks(self, default: str) -> list[tuple[str, tuple[str, ...]]]:
        """Bound variables grouped by aggregate, in elimination order.

        Returns ``[(semiring name, variables), ...]``: the first block is
        eliminated first (innermost).  Adjacent variables with the same ⊕
        share a block, inside which any order is allowed.
        """
        listed = [v for v, _ in self.aggregates]
        inner = tuple(v for v in self.bound if v not in listed)
        # Outermost first as given; elimination goes innermost first.
        chain: list[tuple[str, list[str]]] = []
        for v, s in self.aggregates:
            if chain and chain[-1][0] == s:
                chain[-1][1].append(v)
            else:
                chain.append((s, [v]))
        if inner:
            if chain and chain[-1][0] == default:
                chain[-1][1].extend(inner)
            else:
                chain.append((default, list(inner)))
        return [(s, tuple(vs)) for s, vs in reversed(chain)]

    def with_semiring(self, semiring: str | None) -> "FAQ":
        """The same query with another semiring name."""
        return FAQ(self.atoms, self.free, self.name, semiring, self.aggregates)

    def __str__(self) -> str:
        head = f"{self.name}({', '.join(self.free)})"
        return f"{head} := {', '.join(str(a) for a in self.atoms)}"


def make_query(
    atoms: Iterable[Union[Atom, tuple[str, Sequence[str]]]],
    free: Sequence[str] = (),
    *,
    name: str = "q",
    semiring: str | None = None,
    aggregates: Mapping[str, str] | Sequence[tuple[str, str]] = (),
) -> FAQ:
    """Build an :class:`FAQ` from ``(factor, variables)`` pairs.

    Examples
    --------
    >>> from faq.language import make_query
    >>> q = make_query([("f", "xy"), ("g", "yz")], free=["x"], aggregates={"y": "max_product"},
    ...                semiring="real")
    >>> q.blocks("real")
    [('real', ('z',)), ('max_product', ('y',))]
    """
    built = tuple(a if isinstance(a, Atom) else Atom(a[0], tuple(a[1])) for a in atoms)
    aggs = tuple(aggregates.items()) if isinstance(aggregates, Mapping) else tuple(aggregates)
    return FAQ(built, tuple(free), name, semiring, aggs)


class _Scanner:
    """Tokeniser for the text form; positions feed :class:`QueryParseError`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.skip()
        return self.text.startswith(token, self.pos)

    def expect(self, token: str, what: str) -> None:
        if not self.peek(token):
            raise QueryParseError(text=self.text, position=self.pos, reason=f"expected {what}")
        self.pos += len(token)

    def name(self, what: str) -> str:
        self.skip()
        m = _NAME_RE.match(self.text, self.pos)
        if not m:
            raise QueryParseError(text=self.text, position=self.pos, reason=f"expected {what}")
        self.pos = m.end()
        return m.group(0)

    def names_in_parens(self, what: str) -> tuple[str, ...]:
        self.expect("(", "'('")
        names: list[str] = []
        if self.peek(")"):
            self.pos += 1
            return ()
        while True:
            names.append(self.name(what))
            if self.peek(","):
                self.pos += 1
                continue
            self.expect(")", "',' or ')'")
            return tuple(names)

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)


def parse_query(text: str, semiring: str | None = None) -> FAQ:
    """Parse ``head(free...) := factor(vars...), ...``.

    ``:-`` is accepted for ``:=``.  A variable of the head must appear in
    the body.

    Parameters
    ----------
    text : str
        The query: a head naming the free variables, ``:=``, and atoms.
    semiring : str, optional
        The semiring the query is meant for (kept on the FAQ; the factors'
        own is used when None).

    Returns
    -------
    FAQ

    Raises
    ------
    QueryParseError
        With the position of the problem (the message quotes at most 200
        characters around it).
    QueryTooLargeError
        The text is longer than :data:`MAX_QUERY_CHARS` characters (refused
        before it is read), or the query has more than :data:`MAX_ATOMS`
        atoms, :data:`MAX_VARIABLES` variables or :data:`MAX_ARITY`
        variables in one atom.
    UnknownVariableError
        A head variable appears in no atom.

    Examples
    --------
    >>> parse_query("count() := edge(a,b), edge(a,c), edge(b,c)").bound
    ('a', 'b', 'c')
    >>> parse_query("count() := edge(a,b) edge(b,c)")
    Traceback (most recent call last):
    ...
    faq.errors.QueryParseError: [QUERY_PARSE] expected ',' between atoms at position 21
      count() := edge(a,b) edge(b,c)
                           ^
    """
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLargeError(what="characters", size=len(text), limit=MAX_QUERY_CHARS)
    scanner = _Scanner(text)
    head = scanner.name("the query's name")
    free = scanner.names_in_parens("a free variable")
    if scanner.peek(":-"):
        scanner.pos += 2
    else:
        scanner.expect(":=", "':=' after the head")
    atoms: list[Atom] = []
    while True:
        factor = scanner.name("a factor name")
        atoms.append(Atom(factor, scanner.names_in_parens("a variable")))
        if scanner.at_end():
            break
        if scanner.peek(","):
            scanner.pos += 1
            continue
        raise QueryParseError(text=text, position=scanner.pos, reason="expected ',' between atoms")
    return FAQ(tuple(atoms), free, head, semiring)
