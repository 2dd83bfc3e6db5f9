"""Loaders and exporters: SNAP edge lists, Matrix Market, CSV, Parquet, pandas, numpy, scipy.

Every loader returns a :class:`~faq.factor.Factor` in listing representation:
variable columns, then one value column, one row per entry whose value is not
the semiring's zero.  Graph and matrix variables are ``bigint``.  One module
per topic; this package re-exports their public names:

* :mod:`faq.io.edges` -- SNAP edge lists (comments, CRLF, tabs, ``.gz``), parsed by Spark;
* :mod:`faq.io.matrix_market` -- Matrix Market files, read with :mod:`scipy.io`;
* :mod:`faq.io.tables` -- CSV and Parquet, and :func:`read_factor` by file extension;
* :mod:`faq.io.convert` -- pandas, numpy and scipy objects to and from factors (small data);
* :mod:`faq.io.writers` -- :func:`write_matrix_market` and :func:`write_table`, atomic;
* :mod:`faq.io.updates` -- update-batch files (``+ src dst [weight]`` / ``- src dst``);
* :mod:`faq.scratch` -- :func:`scratch_path`, files for examples removed at exit.

Examples
--------
>>> from faq import io
>>> path = io.scratch_path("g.txt", "# a comment\\n1\\t2\\r\\n2 3\\n3,1\\n")  # a file to read
>>> edges = io.read_edge_list(path)
>>> edges.variables, edges.semiring.name
(('src', 'dst'), 'counting')
>>> io.to_pandas(edges).values.tolist()
[[1, 2, 1], [2, 3, 1], [3, 1, 1]]
"""

from faq.io.convert import from_numpy, from_pandas, from_scipy, to_pandas, to_scipy
from faq.io.edges import read_edge_list
from faq.io.matrix_market import matrix_shape, read_matrix_market
from faq.io.tables import read_csv, read_factor, read_parquet
from faq.scratch import scratch_path
from faq.io.updates import UpdateBatch, pending, read_batch, read_updates, update_files
from faq.io.writers import write_matrix_market, write_table

__all__ = [
    "read_edge_list",
    "read_matrix_market",
    "matrix_shape",
    "read_csv",
    "read_parquet",
    "read_factor",
    "from_pandas",
    "from_numpy",
    "from_scipy",
    "to_pandas",
    "to_scipy",
    "write_matrix_market",
    "write_table",
    "UpdateBatch",
    "read_batch",
    "read_updates",
    "update_files",
    "pending",
    "scratch_path",
]
