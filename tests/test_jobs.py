"""The jobs on real data, against independent oracles.

* undirected triangles: SNAP's published counts (tests/data/graphs-MANIFEST.tsv);
* feed-forward triangles: scipy, sum((A·A)∘A) on the simple digraph;
* matrix chains: scipy products, and SuiteSparse's nnz of P² and P³.
"""

from __future__ import annotations

import csv
import gzip
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from faq.graphs import triangle_count, chain_product
from faq.io import read_edge_list, read_matrix_market, to_scipy

pytestmark = pytest.mark.usefixtures("spark")

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


def manifest(name: str) -> dict[str, dict[str, str]]:
    with open(DATA / name, newline="") as f:
        rows = [line for line in f if not line.startswith("#") or line.startswith("# file")]
    rows[0] = rows[0].lstrip("# ")
    return {r["file"]: r for r in csv.DictReader(rows, delimiter="\t")}


GRAPHS = manifest("graphs-MANIFEST.tsv")
MATRICES = manifest("matrices-MANIFEST.tsv")
SNAP_FILES = [
    "email-Eu-core.txt.gz",
    "ca-GrQc.txt",
    "wiki-Vote.txt.gz",
    "facebook_combined.txt.gz",
    "Email-Enron.txt.gz",
    "p2p-Gnutella31.txt.gz",
]


def scipy_feed_forward(path: Path) -> int:
    """sum((A·A)∘A) for the simple digraph of an edge list, read with numpy (not faq)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        edges = np.loadtxt(f, comments=("#", "%"), dtype=np.int64, ndmin=2)[:, :2]
    edges = edges[edges[:, 0] != edges[:, 1]]
    n = int(edges.max()) + 1
    a = sp.csr_matrix((np.ones(len(edges), dtype=np.int64), (edges[:, 0], edges[:, 1])), shape=(n, n))
    a.data[:] = 1  # duplicates summed by the constructor: back to a 0/1 matrix
    return int((a @ a).multiply(a).sum())


@pytest.mark.parametrize("name", SNAP_FILES)
def test_triangles_equal_snap_and_scipy(name):
    edges = read_edge_list(str(DATA / name))
    undirected = triangle_count(edges, directed=False)
    assert undirected.count == int(GRAPHS[name]["undirected_triangles"])
    assert undirected.edges == int(GRAPHS[name]["undirected_edges_no_loops"])
    directed = triangle_count(edges, directed=True)
    assert directed.count == scipy_feed_forward(DATA / name)


def test_feed_forward_on_rmat_scale_14(tmp_path):
    out = tmp_path / "rmat14.txt"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_rmat.py"), "14", "16", str(out), "--seed", "1"],
        check=True,
        capture_output=True,
    )
    result = triangle_count(str(out), directed=True)
    assert result.edges == 228_220
    expected = scipy_feed_forward(out)
    assert result.count == expected
    # Also the figure scipy, DuckDB and Kùzu agreed on (quoted in the issue).
    assert expected == 4_492_450


def scipy_matrix(name: str) -> sp.csr_matrix:
    m = sp.csr_matrix(scipy.io.mmread(str(DATA / name)))
    m.eliminate_zeros()
    return m


def test_real_matrix_chain_equals_scipy():
    k, m = scipy_matrix("bcsstk21.mtx"), scipy_matrix("bcsstm21.mtx")
    expected = (k @ m @ k).toarray()
    chain = [read_matrix_market(str(DATA / f)) for f in ("bcsstk21.mtx", "bcsstm21.mtx", "bcsstk21.mtx")]
    with chain_product(chain, "real") as result:
        got = to_scipy(result.factor, shape=(3600, 3600)).toarray()
        # The order's width counts the free bag {i0, i3}: covering it needs two factors.
        assert result.plan.faqw == Fraction(2)
        assert result.plan.free_rho_star == Fraction(2)
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-6 * np.abs(expected).max())
    # Same pattern, up to entries that cancel to rounding noise in one order of summation.
    noise = 1e-12 * np.abs(expected).max()
    assert np.array_equal(np.abs(got) > noise, np.abs(expected) > noise)


@pytest.mark.parametrize("power, column", [(2, "nnz(P^2)"), (3, "nnz(P^3)")])
def test_boolean_powers_of_dwt_2680(power, column):
    p = scipy_matrix("dwt_2680.mtx")
    p.data[:] = 1
    expected = p
    for _ in range(power - 1):
        expected = expected @ p
    chain = [read_matrix_market(str(DATA / "dwt_2680.mtx"), semiring="boolean") for _ in range(power)]
    with chain_product(chain, "boolean") as result:
        got = to_scipy(result.factor, shape=(2680, 2680))
    assert got.nnz == expected.nnz == int(MATRICES["dwt_2680.mtx"][column])
    assert (got.astype(bool) != expected.astype(bool)).nnz == 0


def test_min_plus_chain_equals_numpy():
    rng = np.random.default_rng(3)
    mats = []
    for _ in range(3):
        m = np.where(rng.random((6, 6)) < 0.4, rng.integers(1, 9, (6, 6)).astype(float), np.inf)
        mats.append(m)
    from faq.io import from_scipy

    factors = []
    for m in mats:
        r, c = np.nonzero(np.isfinite(m))
        factors.append(
            from_scipy(sp.coo_matrix((m[r, c], (r, c)), shape=m.shape), semiring="min_plus")
        )
    expected = mats[0]
    for m in mats[1:]:
        expected = np.min(expected[:, :, None] + m[None, :, :], axis=1)
    with chain_product(factors, "min_plus") as result:
        rows = result.factor.df.collect()
    got = np.full((6, 6), np.inf)
    for i, j, v in rows:
        got[i, j] = v
    assert np.array_equal(got, expected)
