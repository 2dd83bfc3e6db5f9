"""The plan's one-line cost texts are written without sympy, exactly as sympy prints the expressions.

``faq explain`` prints each bag's AGM bound and the runtime; building them as
sympy expressions only to print them cost the command sympy's import (about
0.5-1 s).  :func:`faq.hypergraph.symbolic.agm_text` and
:func:`~faq.hypergraph.symbolic.runtime` write the same text from fractions:
checked here against sympy on random covers and widths.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from faq.hypergraph.symbolic import agm_expression, agm_text, runtime, runtime_expression, show

ROOT = Path(__file__).resolve().parent.parent

# Exponents as the cover LP gives them: non-negative, small denominators.
weights = st.builds(Fraction, st.integers(0, 12), st.sampled_from([1, 2, 3, 4, 6]))
# Relation names that sort in interesting ways: case, digits, underscores, non-ASCII.
names = st.sampled_from(["e", "edge", "E", "A", "B", "a", "b", "b1", "b10", "b9", "a_1", "R2", "é", "x y", "N"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(names, weights), max_size=7))
def test_agm_text_is_what_sympy_prints(cover):
    assert agm_text(cover) == show(agm_expression(cover))


@settings(max_examples=200, deadline=None)
@given(weights)
def test_runtime_text_is_what_sympy_prints(width):
    assert runtime(width) == f"Õ({show(runtime_expression(width))})"


def test_a_negative_weight_is_left_to_sympy():
    cover = [("R", Fraction(-1, 2)), ("S", Fraction(1))]
    assert agm_text(cover) == show(agm_expression(cover))


def test_the_texts_import_no_sympy():
    code = (
        "import sys\n"
        "from fractions import Fraction\n"
        "from faq.hypergraph.symbolic import agm_text, runtime\n"
        "text = agm_text([('e', Fraction(1, 2))] * 3), runtime(Fraction(3, 2))\n"
        "assert text == ('N_e^(3/2)', 'Õ(N^(3/2) + |output|)'), text\n"
        "assert 'sympy' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
