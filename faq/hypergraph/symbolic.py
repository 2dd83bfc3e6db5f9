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

Examples
--------
>>> from fractions import Fraction
>>> from faq.hypergraph.symbolic import agm_expression, show, runtime
>>> half = Fraction(1, 2)
>>> show(agm_expression([("edge", half), ("edge", half), ("edge", half)]))
'N_edge^(3/2)'
>>> runtime(Fraction(3, 2))
'Õ(N^(3/2) + |output|)'
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import sympy

__all__ = ["size_symbol", "agm_expression", "runtime_expression", "show", "runtime"]

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


def runtime(width: Fraction) -> str:
    """``Õ(N^width + |output|)`` as text (see :func:`runtime_expression`).

    Examples
    --------
    >>> from fractions import Fraction
    >>> runtime(Fraction(1)), runtime(Fraction(5, 2))
    ('Õ(N + |output|)', 'Õ(N^(5/2) + |output|)')
    """
    return f"Õ({show(runtime_expression(width))})"


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
