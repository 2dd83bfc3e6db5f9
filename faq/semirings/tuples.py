"""Semirings over tuples of numbers that a user declares: any ⊕ and ⊗, given on numpy rows and Spark arrays.

Some semirings need more than one number a value and a ⊕ that is not
addition: Viterbi with ties keeps (best probability, how many paths reach
it), shortest paths with their count keep (distance, count), and a
lexicographic (distance, hops) finds the shortest paths with fewest hops.
:class:`~faq.semirings.structured.ArraySemiring` covers rings whose ⊕ is
componentwise ``+`` and whose ⊗ is bilinear; a :class:`TupleSemiring` is
the general case: its values are ``w`` doubles (``array<double>`` in
Spark, ``(n, w)`` float64 arrays in numpy) and the user gives

* ``add`` and ``mul`` -- ⊕ and ⊗ on Spark Columns holding arrays (index
  components with ``a[0]``, build values with ``F.array``);
* ``numpy_add`` and ``numpy_mul`` -- the same on ``(n, w)`` arrays, row by
  row (``a[:, 0]``, ``np.stack([...], axis=1)``);
* ``neg`` and ``numpy_neg`` for a ring (then maintained queries take
  deletions), ``idempotent=True`` when ⊕ is (then fixpoints may use it).

The engine needs nothing else: ⊕ over a group is folded with ``add`` in
Spark (``aggregate`` over the group's values) and by a pairwise tree of
``numpy_add`` calls in numpy (:class:`RowUfunc`: ``reduce``, ``reduceat``
and ``at`` as numpy's ufuncs have them).  :func:`~faq.semirings.check_laws`
checks both forms on ``samples``.

Examples
--------
>>> import numpy as np
>>> from pyspark.sql import functions as F
>>> def best(a, b):            # (probability, paths): the larger probability, paths added on a tie
...     return F.when(a[0] > b[0], a).when(a[0] < b[0], b).otherwise(F.array(a[0], a[1] + b[1]))
>>> def numpy_best(a, b):
...     out = np.where((a[:, 0] >= b[:, 0])[:, None], a, b)
...     out[:, 1] = np.where(a[:, 0] == b[:, 0], a[:, 1] + b[:, 1], out[:, 1])
...     return out
>>> viterbi = TupleSemiring(
...     "viterbi_ties", ("probability", "paths"), zero=(0.0, 0.0), one=(1.0, 1.0),
...     add=best, mul=lambda a, b: F.array(a[0] * b[0], a[1] * b[1]),
...     numpy_add=numpy_best, numpy_mul=lambda a, b: a * b,
...     samples=((0.5, 1.0), (0.5, 2.0), (0.25, 3.0)))
>>> viterbi.carrier, viterbi.is_ring, viterbi.idempotent
('double[2]', False, False)
>>> from faq.semirings import check_laws
>>> check_laws(viterbi)
[]
>>> RowUfunc(numpy_best).reduce(np.array([[0.5, 1.0], [0.25, 4.0], [0.5, 2.0]])).tolist()
[0.5, 3.0]
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from faq.errors import FAQValueError, InvalidArgumentError
from faq.semirings.base import Semiring
from faq.semirings.operations import Operation, UnaryOperation
from faq.semirings.structured import ARRAY_DOUBLE, DoublesValues, array_element

__all__ = ["TupleSemiring", "RowUfunc", "RowMap"]

RowFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


class RowUfunc:
    """A binary function on ``(n, w)`` rows, with the ufunc methods the engine calls.

    ``reduce`` (all rows to one), ``reduceat`` (each run of rows to one)
    and ``at`` (``values[index] ⊕= proposals``, repeated indices
    accumulating) combine rows pairwise, in ``O(log n)`` vectorised calls of
    the function: it must be associative and commutative, as a semiring's ⊕
    is.

    Parameters
    ----------
    function : callable
        ``(a, b) -> c`` on ``(n, w)`` float64 arrays.

    Examples
    --------
    >>> add = RowUfunc(lambda a, b: a + b)
    >>> rows = np.arange(10.0).reshape(5, 2)
    >>> add.reduceat(rows, np.array([0, 2])).tolist() == np.add.reduceat(rows, [0, 2], axis=0).tolist()
    True
    >>> values = np.zeros((2, 2)); add.at(values, np.array([1, 1, 0]), rows[:3]); values.tolist()
    [[4.0, 5.0], [2.0, 4.0]]
    """

    nin = 2  # as a ufunc says: two inputs
    row_form = True  # accepted where a ufunc is asked for (faq.semirings.operations)

    def __init__(self, function: RowFunction) -> None:
        self.function = function

    def __call__(self, a: Any, b: Any) -> np.ndarray:
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        lead = a.shape[:-1]
        width = a.shape[-1]
        out = np.asarray(self.function(a.reshape(-1, width).copy(), b.reshape(-1, width).copy()), dtype=np.float64)
        return out.reshape(*lead, width)

    def reduceat(self, values: Any, starts: Any, axis: int = 0) -> np.ndarray:
        """⊕ of each run ``values[starts[i]:starts[i+1]]`` (increasing starts from 0, runs non-empty)."""
        values = np.asarray(values, dtype=np.float64)
        starts = np.asarray(starts, dtype=np.intp)
        if len(starts) == 0:
            return values[:0].copy()
        run = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(values))))
        rows = values.copy()
        while len(rows) > len(starts):
            # pair each row with the next one of its run: keep every first of a pair, ⊕ its partner into it
            first = np.concatenate(([True], run[1:] != run[:-1]))
            rank = np.arange(len(run)) - np.maximum.accumulate(np.where(first, np.arange(len(run)), 0))
            keep = rank % 2 == 0
            kept = np.flatnonzero(keep)
            partner = kept + 1
            paired = partner < len(run)
            paired[paired] = run[partner[paired]] == run[kept[paired]]
            combined = rows[kept]
            if paired.any():
                combined[paired] = self(rows[kept[paired]], rows[partner[paired]])
            rows, run = combined, run[kept]
        return rows

    def reduce(self, values: Any, axis: int = 0, initial: Any = None) -> np.ndarray:
        """⊕ of all rows (``initial`` ⊕ them, when given; ``initial`` alone for no rows)."""
        values = np.asarray(values, dtype=np.float64)
        if initial is not None:
            values = np.vstack([np.broadcast_to(np.asarray(initial, dtype=np.float64), values.shape[1:]), values])
        if len(values) == 0:  # numpy's ufuncs without an identity refuse this too
            raise InvalidArgumentError(argument="values", value="no rows", reason="⊕ of no rows needs initial=")
        return self.reduceat(values, np.array([0]))[0]

    def at(self, values: np.ndarray, index: Any, proposals: Any) -> None:
        """In place: ``values[index[i]] ⊕= proposals[i]`` for every ``i``."""
        index = np.asarray(index, dtype=np.intp)
        if len(index) == 0:
            return
        order = np.argsort(index, kind="stable")
        sorted_index = index[order]
        targets, starts = np.unique(sorted_index, return_index=True)
        merged = self.reduceat(np.asarray(proposals, dtype=np.float64)[order], starts)
        values[targets] = self(values[targets], merged)


class RowMap:
    """A unary function on ``(n, w)`` rows (a tuple ring's ⊖), where a one-input ufunc is asked for."""

    nin = 1
    row_form = True

    def __init__(self, function: Callable[[np.ndarray], np.ndarray]) -> None:
        self.function = function

    def __call__(self, a: Any) -> np.ndarray:
        a = np.asarray(a, dtype=np.float64)
        return np.asarray(self.function(a.reshape(-1, a.shape[-1]).copy()), dtype=np.float64).reshape(a.shape)


class TupleSemiring(DoublesValues, Semiring):
    """A semiring whose values are ``w`` doubles, with ⊕ and ⊗ its declarer gives (module notes).

    Parameters
    ----------
    name : str
    components : sequence of str
        One name per component; the width is their number.
    zero, one : sequence of float
        ⊕'s and ⊗'s identities.
    add, mul : callable
        ⊕ and ⊗ on Spark Columns of ``array<double>``: ``(a, b) -> Column``.
    numpy_add, numpy_mul : callable
        ⊕ and ⊗ on ``(n, w)`` float64 arrays: ``(a, b) -> (n, w)``.
    neg, numpy_neg : callable, optional
        ⊖ (``a -> Column``, ``a -> (n, w)``): the semiring is then a ring.
    idempotent : bool
        ⊕ is idempotent (``a ⊕ a = a``): fixpoints may use it.
    samples : sequence of sequences
        Elements :func:`~faq.semirings.check_laws` tries.
    description : str

    Raises
    ------
    FAQValueError
        No components, repeated names, an identity or sample of another
        width, no numpy form of ⊕ or ⊗, or ⊖ in one form only.  (A missing
        Spark form is refused when a job needs Spark.)

    Notes
    -----
    Spark ships the forms to its Python workers as it ships any function:
    defined in a notebook or script they travel by value; defined in a
    module of yours, the workers must be able to import it.

    Examples
    --------
    >>> import faq
    >>> from pyspark.sql import functions as F
    >>> def shorter(a, b):                          # (distance, hops): shorter, then fewer hops
    ...     return F.when((a[0] < b[0]) | ((a[0] == b[0]) & (a[1] <= b[1])), a).otherwise(b)
    >>> def numpy_shorter(a, b):
    ...     first = (a[:, 0] < b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] <= b[:, 1]))
    ...     return np.where(first[:, None], a, b)
    >>> hops = faq.TupleSemiring("fewest_hops", ("distance", "hops"), zero=(np.inf, np.inf), one=(0.0, 0.0),
    ...                          add=shorter, mul=lambda a, b: F.array(a[0] + b[0], a[1] + b[1]),
    ...                          numpy_add=numpy_shorter, numpy_mul=lambda a, b: a + b, idempotent=True)
    >>> edges = faq.factor_of([(1, 2, (1.0, 1.0)), (2, 3, (1.0, 1.0)), (1, 3, (2.0, 1.0))], ["src", "dst"], hops)
    >>> faq.query("d(c) := e(a, b), e(b, c)", e=edges, semiring=hops).df.collect()
    [Row(c=3, value=[2.0, 2.0])]
    """

    component_names: tuple[str, ...]

    def __init__(self, name: str, components: Sequence[str], zero: Sequence[float], one: Sequence[float],
                 add: Callable[[Any, Any], Any], mul: Callable[[Any, Any], Any], *, numpy_add: RowFunction,
                 numpy_mul: RowFunction, neg: Optional[Callable[[Any], Any]] = None,
                 numpy_neg: Optional[Callable[[np.ndarray], np.ndarray]] = None, idempotent: bool = False,
                 samples: Sequence[Sequence[float]] = (), description: str = "") -> None:
        names = tuple(str(c) for c in components)
        if not names or len(set(names)) != len(names):
            raise FAQValueError(error_class="ARRAY_COMPONENTS", semiring=name, components=names)
        if numpy_add is None or numpy_mul is None or (neg is None) != (numpy_neg is None):
            raise FAQValueError(error_class="TUPLE_FORMS", semiring=name)
        width = len(names)
        zero, one = array_element(name, "zero", zero, width), array_element(name, "one", one, width)
        fields = dict(
            name=name, value_type=ARRAY_DOUBLE, zero=zero, one=one,
            add=Operation(f"{name}.add", "⊕", {ARRAY_DOUBLE: zero}, bool(idempotent), add, None,
                          RowUfunc(numpy_add)),
            mul=Operation(f"{name}.mul", "⊗", {ARRAY_DOUBLE: one}, False, mul, None, RowUfunc(numpy_mul)),
            neg=None if neg is None else UnaryOperation(f"{name}.neg", "⊖", neg, RowMap(numpy_neg)),
            idempotent=bool(idempotent), samples=tuple(array_element(name, "sample", s, width) for s in samples),
            description=description, component_names=names,
        )
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        flags = [f for f, on in (("ring", self.is_ring), ("idempotent", self.idempotent)) if on]
        return f"TupleSemiring({self.name!r}, {self.carrier}: {', '.join(self.component_names)}" + (
            f"; {'/'.join(flags)})" if flags else ")")

