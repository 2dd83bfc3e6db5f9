"""Symbolic worst-case costs: AGM bounds and InsideOut's runtime as sympy expressions.

A bag's AGM bound is ``prod_S N_S^{x_S}`` for a fractional edge cover ``x`` of the bag
(Atserias, Grohe and Marx): the bag's join has at most that many rows whatever the data.
With the cover that :func:`~faq.hypergraph.agm_cover` picks for the factor sizes (or the
ρ*-optimal one of :func:`~faq.hypergraph.fractional_edge_cover` without sizes), it is the
bound ``explain`` prints as a number, written in the sizes: a triangle over one relation
``edge`` is ``N_edge^(3/2)``. InsideOut runs in ``Õ(N^faqw + |output|)`` with ``N`` the
rows of the largest factor.

The exponents are exact rationals from the certified cover LP; sympy multiplies the
powers (a relation used twice adds its exponents: three halves of ``N_edge`` make
``N_edge^(3/2)``) and prints them. The widths themselves stay :class:`fractions.Fraction`:
the solver produces them, and importing sympy (0.5-0.9 s here) for every plan would buy
no exactness. sympy is imported when an expression is built, never when this module is.

The one-line texts a printed plan shows (:func:`agm_text`, :func:`runtime`) need no
sympy: a product of powers of distinct positive symbols and ``N^w + |output|`` are
written here with :class:`~fractions.Fraction` arithmetic, character for character as
:func:`show` prints the sympy expressions (tests/test_symbolic.py compares the two on
random covers and widths), so ``faq explain`` does not pay sympy's import.

Examples
--------
>>> from fractions import Fraction
>>> from faq.hypergraph.symbolic import agm_expression, agm_text, show, runtime
>>> half = Fraction(1, 2)
>>> show(agm_expression([("edge", half), ("edge", half), ("edge", half)]))
'N_edge^(3/2)'
>>> agm_text([("edge", half), ("edge", half), ("edge", half)])
'N_edge^(3/2)'
>>> runtime(Fraction(3, 2))
'Õ(N^(3/2) + |output|)'
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import sympy

__all__ = ["size_symbol", "agm_expression", "runtime_expression", "show", "agm_text", "runtime"]

#: The name of the symbol for the rows of the largest factor, in :func:`runtime_expression`.
LARGEST = "N"
#: The name of the symbol for the output's rows.
OUTPUT = "|output|"


def size_symbol(relation: str) -> "sympy.Symbol":
    """The symbol ``N_<relation>`` for the rows of a relation (a positive number).

    Parameters
    ----------
    relation : str
        The relation's (factor's) name.

    Returns
    -------
    sympy.Symbol

    Examples
    --------
    >>> size_symbol("edge")
    N_edge
    >>> size_symbol("edge").is_positive
    True
    """
    import sympy

    return sympy.Symbol(f"N_{relation}", positive=True)


def agm_expression(cover: Iterable[tuple[str, Fraction]]) -> "sympy.Expr":
    """The AGM bound ``prod N_name^x`` of a fractional edge cover, as a sympy expression.

    Parameters
    ----------
    cover : iterable of (str, Fraction)
        ``(relation name, weight)`` per hyperedge of the cover; a relation that covers
        several hyperedges (used twice) appears once per use and its exponents add.

    Returns
    -------
    sympy.Expr
        ``1`` for an empty cover (an empty bag).

    Examples
    --------
    >>> from fractions import Fraction
    >>> e = agm_expression([("A", Fraction(1)), ("D", Fraction(1)), ("B", Fraction(0))])
    >>> e, e.subs({size_symbol("A"): 10, size_symbol("D"): 100})
    (N_A*N_D, 1000)
    >>> agm_expression([])
    1
    """
    import sympy

    expr = sympy.Integer(1)
    for name, weight in cover:
        w = Fraction(weight)
        expr *= size_symbol(name) ** sympy.Rational(w.numerator, w.denominator)
    return expr


def runtime_expression(width: Fraction) -> "sympy.Expr":
    """InsideOut's runtime ``N^width + |output|`` (up to log factors), as a sympy expression.

    ``N`` (positive) is the rows of the largest factor, ``|output|`` (non-negative) the
    rows of the answer; ``width`` is the plan's faqw.

    Parameters
    ----------
    width : Fraction
        The FAQ-width of the elimination order.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> from fractions import Fraction
    >>> e = runtime_expression(Fraction(2))
    >>> e, sorted(map(str, e.free_symbols))
    (N**2 + |output|, ['N', '|output|'])
    """
    import sympy

    w = Fraction(width)
    largest = sympy.Symbol(LARGEST, positive=True)
    output = sympy.Symbol(OUTPUT, nonnegative=True)
    return largest ** sympy.Rational(w.numerator, w.denominator) + output


def show(expr: "sympy.Expr") -> str:
    """An expression as one readable line: ``^`` for powers, exponents as fractions.

    sympy's own ``sstr`` would print ``N**(3/2)`` but ``sqrt(N)`` for an exponent of one
    half; here every power reads ``N^(p/q)``.

    Parameters
    ----------
    expr : sympy.Expr

    Returns
    -------
    str

    Examples
    --------
    >>> from fractions import Fraction
    >>> half = Fraction(1, 2)
    >>> show(agm_expression([("R", half), ("S", half), ("T", Fraction(2))]))
    'N_R^(1/2)*N_S^(1/2)*N_T^2'
    """
    return _printer().doprint(expr).replace("**", "^")


def agm_text(cover: Iterable[tuple[str, Fraction]]) -> str:
    """``show(agm_expression(cover))`` without sympy: the AGM bound of a cover as one line.

    The powers of each relation's size, its weights added, in the order sympy
    prints a product of symbols (by name, as Python compares strings); a
    weight of 0 drops the factor, 1 prints the bare symbol.  A negative weight
    (no fractional edge cover has one) is left to sympy.

    Parameters
    ----------
    cover : iterable of (str, Fraction)
        ``(relation name, weight)`` per hyperedge, as :func:`agm_expression` takes it.

    Returns
    -------
    str
        ``'1'`` for an empty cover.

    Examples
    --------
    >>> from fractions import Fraction
    >>> agm_text([("S", Fraction(1, 2)), ("R", Fraction(1, 2)), ("T", Fraction(2)), ("U", Fraction(0))])
    'N_R^(1/2)*N_S^(1/2)*N_T^2'
    >>> agm_text([("A", Fraction(1)), ("D", Fraction(1))]), agm_text([])
    ('N_A*N_D', '1')
    """
    cover = list(cover)
    powers: dict[str, Fraction] = {}
    for name, weight in cover:
        powers[name] = powers.get(name, Fraction(0)) + Fraction(weight)
    if any(w < 0 for w in powers.values()):  # a quotient: sympy's layout of it is not reproduced here
        return show(agm_expression(cover))
    factors = [_power(f"N_{name}", w) for name, w in sorted(powers.items()) if w != 0]
    return "*".join(factors) or "1"


def runtime(width: Fraction) -> str:
    """``Õ(N^width + |output|)`` as text (see :func:`runtime_expression`), without sympy.

    Examples
    --------
    >>> from fractions import Fraction
    >>> runtime(Fraction(1)), runtime(Fraction(5, 2))
    ('Õ(N + |output|)', 'Õ(N^(5/2) + |output|)')
    >>> runtime(Fraction(0))            # N^0 = 1, which sympy prints after the symbol
    'Õ(|output| + 1)'
    """
    w = Fraction(width)
    if w < 0:  # no FAQ-width is negative; sympy's order of N^-w and |output| is not reproduced here
        return f"Õ({show(runtime_expression(w))})"
    if w == 0:
        return f"Õ({OUTPUT} + 1)"
    return f"Õ({_power(LARGEST, w)} + {OUTPUT})"


def _power(base: str, exponent: Fraction) -> str:
    """``base^exponent`` as :func:`show` prints a positive rational power: ``N``, ``N^2``, ``N^(3/2)``."""
    if exponent == 1:
        return base
    if exponent.denominator == 1:
        return f"{base}^{exponent.numerator}"
    return f"{base}^({exponent.numerator}/{exponent.denominator})"


_PRINTER = None


def _printer():
    """A sympy StrPrinter that never prints ``sqrt`` (made once, on first use)."""
    global _PRINTER
    if _PRINTER is None:
        from sympy.printing.str import StrPrinter

        class _RationalPowers(StrPrinter):
            def _print_Pow(self, expr, rational=False):  # noqa: ARG002 - always rational
                return super()._print_Pow(expr, rational=True)

        _PRINTER = _RationalPowers()
    return _PRINTER
