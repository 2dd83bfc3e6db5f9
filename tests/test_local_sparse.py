"""The in-process sparse-product path (:func:`faq.joins.local.sparse_product`) against the merges and scipy.

A binary step A(i, j) ⊗ B(j, k) ⊕-summed over j, in (+, ×) over float64 or
int64, runs as a scipy sparse matrix product.  Here it must give what the
merge path gives (the same join with the sparse path switched off) and what a
dense numpy product gives: random matrices, empty results, repeated keys,
keys far from 0..n-1, the shared variable in either column, indicators,
int64 overflow (refused as before), and steps that are not such a product.
Pure: no Spark, except the last test, which runs ``faq.matrix_chain``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import faq.joins.local as local
from faq.errors import IntegerOverflowError
from faq.joins.frame import Aggregation
from faq.joins.local import Table, join_local
from faq.semirings import BOOLEAN, COUNTING, INTEGER, MIN_PLUS, REAL, Semiring

DATA = Path(__file__).parent / "data"
SPARSE = "in-process binary join (sparse product, scipy)"


def matrix(rows: str, cols: str, i, j, values=None) -> Table:
    """A two-variable table (keys as int64 arrays; ``values`` None: unvalued)."""
    keys = {rows: np.asarray(i, dtype=np.int64), cols: np.asarray(j, dtype=np.int64)}
    return Table((rows, cols), keys, None if values is None else np.asarray(values))


def step(relations, keep, semiring: Semiring = REAL, indicators=(), strategy="binary"):
    """``join_local`` of a binary step ⊕-summing onto ``keep``: ({key: value}, note)."""
    out, note = join_local(strategy, relations, list(indicators), semiring, (), Aggregation(tuple(keep), semiring))
    keys = zip(*(out.keys[v].tolist() for v in keep))
    return dict(zip(keys, out.values.tolist())), note


def merged(monkeypatch, relations, keep, semiring: Semiring = REAL, indicators=()):
    """The same step with the sparse path switched off (the merges)."""
    with monkeypatch.context() as patch:
        patch.setattr(local, "sparse_product", lambda *args: None)
        got, note = step(relations, keep, semiring, indicators)
    assert note != SPARSE
    return got


def dense_product(a: Table, b: Table, keep) -> dict:
    """``a ⊗ b`` summed over their shared variable, by a dense numpy product over the keys present."""
    (j,) = set(a.variables) & set(b.variables)
    first, last = keep
    if first not in a.variables:
        a, b = b, a
    ids = {v: np.unique(np.concatenate([t.keys[v] for t in (a, b) if v in t.variables])) for v in (first, j, last)}

    def dense(t: Table, r: str, c: str) -> np.ndarray:
        out = np.zeros((len(ids[r]), len(ids[c])), dtype=t.values.dtype if t.values is not None else np.int64)
        values = t.values if t.values is not None else np.ones(t.rows, dtype=np.int64)
        np.add.at(out, (np.searchsorted(ids[r], t.keys[r]), np.searchsorted(ids[c], t.keys[c])), values)
        return out

    c = dense(a, first, j) @ dense(b, j, last)
    r, k = np.nonzero(c)
    return {(int(ids[first][x]), int(ids[last][y])): c[x, y].item() for x, y in zip(r, k)}


def close(got: dict, expected: dict) -> bool:
    if got.keys() != expected.keys():
        return False
    scale = max([1.0] + [abs(v) for v in expected.values()])
    return all(abs(got[k] - expected[k]) <= 1e-12 * scale for k in expected)


def random_matrix(rng, rows: str, cols: str, n: int, density: float, integer: bool, ids=None, swap=False) -> Table:
    """A random n×n sparse matrix over keys ``ids`` (default 0..n-1), columns in either order."""
    m = sp.random(n, n, density=density, random_state=rng, format="coo")
    ids = np.arange(n) if ids is None else np.asarray(ids)
    values = rng.integers(-9, 10, m.nnz) if integer else m.data * rng.choice([-1.0, 1.0], m.nnz)
    if swap:
        return matrix(cols, rows, ids[m.col], ids[m.row], values)
    return matrix(rows, cols, ids[m.row], ids[m.col], values)


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("swap_a, swap_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_products_equal_the_merges_and_numpy(monkeypatch, seed, swap_a, swap_b, integer):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    a = random_matrix(rng, "i", "j", n, 0.2, integer, swap=swap_a)
    b = random_matrix(rng, "j", "k", n, 0.2, integer, swap=swap_b)
    semiring = INTEGER if integer else REAL
    for relations, keep in [([a, b], ("i", "k")), ([b, a], ("i", "k")), ([a, b], ("k", "i"))]:
        got, note = step(relations, keep, semiring)
        assert note == SPARSE
        expected = dense_product(a, b, keep)
        if integer:  # exact
            assert got == expected == merged(monkeypatch, relations, keep, semiring)
            assert all(type(v) is int for v in got.values())
        else:
            assert close(got, expected) and close(got, merged(monkeypatch, relations, keep, semiring))


def test_the_shared_variable_is_the_first_column_of_one_and_the_second_of_the_other(monkeypatch):
    # The second step of a chain: M3(i2, i3) ⋈ t1(i0, i2), i2 summed away, kept (i0, i3).
    m3 = matrix("i2", "i3", [0, 0, 1, 2], [5, 6, 5, 7], [1.0, 2.0, 3.0, 4.0])
    t1 = matrix("i0", "i2", [9, 9, 8], [0, 1, 2], [10.0, 100.0, 1000.0])
    got, note = step([m3, t1], ("i0", "i3"))
    assert note == SPARSE
    assert got == {(9, 5): 310.0, (9, 6): 20.0, (8, 7): 4000.0} == merged(monkeypatch, [m3, t1], ("i0", "i3"))
    got, _ = step([m3, t1], ("i3", "i0"))
    assert got == {(5, 9): 310.0, (6, 9): 20.0, (7, 8): 4000.0}


def test_empty_results(monkeypatch):
    a = matrix("i", "j", [0, 1], [1, 2], [1.0, 2.0])
    disjoint = matrix("j", "k", [7, 8], [0, 0], [1.0, 1.0])
    empty = matrix("j", "k", [], [], np.array([], dtype=np.float64))
    cancels = matrix("j", "k", [1, 2], [0, 0], [2.0, -1.0])
    for b in (disjoint, empty):
        out, note = join_local("binary", [a, b], [], REAL, (), Aggregation(("i", "k"), REAL))
        assert note == SPARSE and out.rows == 0 and out.variables == ("i", "k")
        assert out.keys["i"].dtype == out.keys["k"].dtype == np.int64 and out.values.dtype == np.float64
    # Terms that cancel to an exact zero (1·2 + 2·-1) leave no row, as the merges leave none.
    a2 = matrix("i", "j", [0, 0], [1, 2], [1.0, 2.0])
    got, note = step([a2, cancels], ("i", "k"))
    assert note == SPARSE and got == {} == merged(monkeypatch, [a2, cancels], ("i", "k"))


def test_repeated_keys_are_separate_terms(monkeypatch):
    # (0, 1) twice in A and (1, 3) twice in B: each pair of rows is a term, as in the merges.
    a = matrix("i", "j", [0, 0, 0, 2], [1, 1, 4, 4], [1, 2, 5, 7])
    b = matrix("j", "k", [1, 1, 4], [3, 3, 3], [10, 100, 1000])
    for semiring in (INTEGER, COUNTING):
        got, note = step([a, b], ("i", "k"), semiring)
        assert note == SPARSE
        assert got == {(0, 3): 3 * 110 + 5000, (2, 3): 7000} == merged(monkeypatch, [a, b], ("i", "k"), semiring)
    floats = [Table(t.variables, t.keys, t.values.astype(float)) for t in (a, b)]
    got, _ = step(floats, ("i", "k"))
    assert got == {(0, 3): 5330.0, (2, 3): 7000.0}


def test_inputs_are_left_as_they_were():
    # Repeated entries, rows already in order (no reordering copy) and the int64 bound (|A|, |B|):
    # some scipy methods merge repeats in place; held inputs are shared by queries and must not change.
    a = matrix("i", "j", [0, 0, 0, 2], [1, 1, 4, 4], [1, 2, 5, 7])
    b = matrix("j", "k", [1, 1, 4], [3, 3, 3], [10, 100, 1000])
    before = [({v: k.copy() for v, k in t.keys.items()}, t.values.copy()) for t in (a, b)]
    for _ in range(2):
        got, note = step([a, b], ("i", "k"), INTEGER)
        assert note == SPARSE and got == {(0, 3): 5330, (2, 3): 7000}
    for t, (keys, values) in zip((a, b), before):
        assert np.array_equal(t.values, values) and all(np.array_equal(t.keys[v], keys[v]) for v in keys)


@pytest.mark.parametrize("ids", [
    [-3, 1000, 1003, 1010, 5000],                     # a small span: numbered through a lookup table
    [-(2**62), -7, 3 * 10**9, 10**15, 2**62],         # a wide span: numbered by sorting
])
def test_keys_far_from_0_to_n_are_numbered_not_used_as_indices(monkeypatch, ids):
    rng = np.random.default_rng(7)
    a = random_matrix(rng, "i", "j", 5, 0.6, integer=True, ids=ids)
    b = random_matrix(rng, "j", "k", 5, 0.6, integer=True, ids=ids[::-1])
    got, note = step([a, b], ("i", "k"), INTEGER)
    assert note == SPARSE
    assert got == dense_product(a, b, ("i", "k")) == merged(monkeypatch, [a, b], ("i", "k"), INTEGER)
    assert set(k for key in got for k in key) <= set(ids)


def test_indicators_filter_as_in_the_merges(monkeypatch):
    rng = np.random.default_rng(11)
    a = random_matrix(rng, "i", "j", 12, 0.4, integer=False)
    b = random_matrix(rng, "j", "k", 12, 0.4, integer=False)
    on = {v: Table((v,), {v: np.array([1, 3, 4, 8, 9, 11])}, None) for v in "ijk"}
    pairs = a.projection(["i", "j"])  # within A: every row held
    some_ik = Table(("i", "k"), {"i": np.array([1, 3, 3, 8]), "k": np.array([2, 5, 7, 1])}, None)
    some_jk = Table(("k", "j"), {"k": np.array([2, 5, 7, 1, 0]), "j": np.array([1, 1, 3, 4, 9])}, None)
    cases = [[on["i"]], [on["j"]], [on["k"]], [on["i"], on["k"]], [pairs], [some_ik], [some_jk, on["j"]],
             [Table((), {}, None)]]
    for indicators in cases:
        got, note = step([a, b], ("i", "k"), REAL, indicators)
        assert note == SPARSE
        assert close(got, merged(monkeypatch, [a, b], ("i", "k"), REAL, indicators))


def test_an_indicator_over_all_three_variables_goes_to_the_merges():
    a = matrix("i", "j", [0, 1], [1, 1], [1.0, 2.0])
    b = matrix("j", "k", [1], [5], [3.0])
    every = Table(("i", "j", "k"), {"i": np.array([1]), "j": np.array([1]), "k": np.array([5])}, None)
    got, note = step([a, b], ("i", "k"), REAL, [every])
    assert note == "in-process binary join (sort-merge)" and got == {(1, 5): 6.0}


def test_int64_overflow_is_refused_as_before():
    a = matrix("i", "j", [0], [1], [2**40])
    with pytest.raises(IntegerOverflowError) as product:  # one ⊗ wraps
        step([a, matrix("j", "k", [1], [2], [2**40])], ("i", "k"), INTEGER)
    assert product.value.error_class == "INTEGER_OVERFLOW"
    two = matrix("i", "j", [0, 0], [1, 2], [2**62, 2**62])
    with pytest.raises(IntegerOverflowError):  # each ⊗ fits, their ⊕ does not
        step([two, matrix("j", "k", [1, 2], [5, 5], [1, 1])], ("i", "k"), INTEGER)


def test_int64_near_the_limit_is_exact():
    # |a|·|b| summed reaches 2^62: the sparse path declines and the merges give the exact 2^62.
    got, note = step([matrix("i", "j", [0], [1], [2**61]), matrix("j", "k", [1], [2], [2])], ("i", "k"), INTEGER)
    assert note == "in-process binary join (sort-merge)" and got == {(0, 2): 2**62}
    # Below the bound, large products stay on the sparse path, exactly.
    a = matrix("i", "j", [0, 0, 1], [1, 2, 2], [3 * 10**9, -(10**9), 7])
    b = matrix("j", "k", [1, 2], [2, 2], [10**9, 4 * 10**8])
    got, note = step([a, b], ("i", "k"), INTEGER)
    assert note == SPARSE and got == {(0, 2): 3 * 10**18 - 4 * 10**17, (1, 2): 28 * 10**8}
    # A row's |a| sums to 2^62 but each result is 2^61: the product of |A|·|B| shows it fits.
    got, note = step([matrix("i", "j", [0, 0], [1, 2], [2**61, 2**61]), matrix("j", "k", [1, 2], [5, 6], [1, -1])],
                     ("i", "k"), INTEGER)
    assert note == SPARSE and got == {(0, 5): 2**61, (0, 6): -(2**61)}


def test_steps_that_are_not_a_sparse_product_go_to_the_merges():
    a = matrix("i", "j", [0, 1], [1, 1], [1.0, 2.0])
    b = matrix("j", "k", [1], [5], [3.0])
    c = Table(("j", "k", "l"), {"j": np.array([1]), "k": np.array([5]), "l": np.array([0])}, np.array([3.0]))
    tropical = [Table(t.variables, t.keys, t.values) for t in (a, b)]
    truth = [Table(t.variables, t.keys, t.values > 0) for t in (a, b)]
    for relations, keep, semiring in [
        ([a, b], ("i",), REAL),                  # j and k both summed away
        ([a, b], ("i", "j", "k"), REAL),         # nothing summed away
        ([a, c], ("i", "k", "l"), REAL),         # a relation over three variables
        ([a, a], ("i",), REAL),                  # two shared variables
        (tropical, ("i", "k"), MIN_PLUS),        # ⊕ is min
        (truth, ("i", "k"), BOOLEAN),            # ∨, ∧
    ]:
        _, note = step(relations, keep, semiring)
        assert note != SPARSE
    _, note = step([a, b], ("i", "k"), REAL, strategy="broadcast")  # the plan chose the generic join
    assert note.startswith("in-process generic join")
    strings = [Table(t.variables, {v: t.keys[v].astype(str) for v in t.variables}, t.values) for t in (a, b)]
    got, note = step(strings, ("i", "k"))
    assert note == "in-process binary join (pandas merges)" and got == {("0", "5"): 3.0, ("1", "5"): 6.0}


@pytest.mark.usefixtures("spark")
def test_matrix_chains_run_as_sparse_products(monkeypatch):
    import scipy.io

    import faq
    import faq.io
    from faq.io import from_scipy, to_scipy

    paths = [str(DATA / f) for f in ("bcsstk21.mtx", "bcsstm21.mtx", "bcsstk21.mtx")]
    k, m = (sp.csr_matrix(scipy.io.mmread(p)) for p in paths[:2])
    expected = k @ m @ k
    read, reader = [], faq.io.read_factor
    monkeypatch.setattr(faq.io, "read_factor", lambda path, **kw: read.append(path) or reader(path, **kw))
    with faq.matrix_chain(paths) as result:
        got = to_scipy(result.factor, shape=expected.shape)
        assert result.notes == [SPARSE, SPARSE]
    assert read == paths[:2]  # a path given twice is read once
    assert abs(got - expected).max() <= 1e-12 * abs(expected).max()
    rng = np.random.default_rng(5)
    ints = [sp.random(30, 30, density=0.1, random_state=rng, format="csr",
                      data_rvs=lambda n: rng.integers(-5, 6, n)).astype(np.int64) for _ in range(4)]
    with faq.matrix_chain([from_scipy(x, semiring="integer") for x in ints], semiring="integer") as result:
        got = to_scipy(result.factor, shape=(30, 30))
        assert set(result.notes) == {SPARSE}
    expected = ints[0] @ ints[1] @ ints[2] @ ints[3]
    expected.eliminate_zeros()
    assert (got != expected).nnz == 0
