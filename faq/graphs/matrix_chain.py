"""Matrix-chain products as an FAQ: ``C(i0,in) := M1(i0,i1), M2(i1,i2), …``.

The planner picks the elimination order of the inner indices (which is the
parenthesisation); any semiring works (real products, boolean reachability
in k steps, min-plus shortest k-hop paths).

Examples
--------
>>> import numpy as np
>>> from faq.io import from_numpy, to_scipy
>>> from faq.graphs.matrix_chain import chain_product
>>> a = np.array([[1.0, 2.0], [0.0, 1.0]])
>>> with chain_product([from_numpy(a), from_numpy(a), from_numpy(a)], "real") as result:
...     to_scipy(result.factor, shape=(2, 2)).toarray().tolist()
[[1.0, 6.0], [0.0, 1.0]]
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

from faq.errors import FAQValueError
from faq.factor import Factor
from faq.insideout.executor import Progress, QueryResult, evaluate
from faq.language import Atom, FAQ
from faq.semirings import Semiring, get_semiring

ROW, COL = "row", "col"  # the product's index columns


def chain_query(n: int, semiring: str) -> FAQ:
    """The FAQ of a chain of ``n`` matrices named ``M1`` … ``Mn``.

    Examples
    --------
    >>> print(chain_query(3, "real"))
    C(i0, i3) := M1(i0, i1), M2(i1, i2), M3(i2, i3)
    """
    atoms = tuple(Atom(f"M{k}", (f"i{k - 1}", f"i{k}")) for k in range(1, n + 1))
    return FAQ(atoms, ("i0", f"i{n}"), "C", semiring)


def chain_product(
    matrices: Sequence[Factor],
    semiring: Union[str, Semiring] = "real",
    *,
    method: str = "auto",
    progress: Optional[Progress] = None,
) -> QueryResult:
    """Multiply ``matrices`` (two-variable factors: row, column) in ``semiring``.

    Every factor is converted to ``semiring`` (a cast of its values) so that,
    e.g., real matrices can be multiplied as boolean patterns.

    Returns
    -------
    QueryResult
        Its factor (and ``.df``) has columns ``row``, ``col`` and ``value``;
        release it with ``close()``.
    """
    semiring = get_semiring(semiring)
    if len(matrices) < 1:
        raise FAQValueError(error_class="EMPTY_MATRIX_CHAIN", count=len(matrices))
    factors = {}
    for k, m in enumerate(matrices, start=1):
        if len(m.variables) != 2:
            raise FAQValueError(error_class="MATRIX_ARITY", index=k, name=m.name, arity=len(m.variables))
        converted = m if m.semiring.name == semiring.name else _convert(m, semiring)
        factors[f"M{k}"] = converted
    result = evaluate(chain_query(len(matrices), semiring.name), factors, method=method, progress=progress)
    result.factor = _as_matrix(result.factor)
    return result


def _as_matrix(product: Factor) -> Factor:
    """The product's index columns named ``row`` and ``col`` (the chain's ``i0`` and ``in``)."""
    return product.rename((ROW, COL))  # held rows stay held


def _convert(matrix: Factor, semiring: Semiring) -> Factor:
    from pyspark.sql import functions as F

    if semiring.value_type == "boolean":
        # A stored entry is a non-zero (zeros are dropped by the loaders).
        return matrix.with_semiring(semiring, convert=lambda v: F.lit(True))
    return matrix.with_semiring(semiring)
