"""A fixpoint's edges read from their Parquet files by pyarrow: on the driver whole, on the executors in shares.

A user's graph in Spark most often *is* ``spark.read.parquet(PATH)``.  Moving its
rows through Spark to Python -- a ``toArrow`` collect for the driver placement,
the Arrow batches of a ``mapInArrow`` task for the executors' parts
(:mod:`faq.recursive.executor_edges`) -- costs more than reading the files: on
R-MAT 18 (3.9M edges, ``local-cluster[2,1,2048]``) the parts' build job spent
about 2.2 of its 3-3.75 s reading the rows and handing them to the Python
workers, and ``coalesce`` dealt them 2.49M and 1.45M rows.  When the edges'
factor is a bare scan of local Parquet files (:func:`faq.parquet_scan.bare_scan`:
no filter, nothing computed; its ends of integer types), :func:`edge_scan`
describes the files and their row groups, and

* the driver reads the three columns whole (:meth:`EdgeScan.read`);
* the executors' build tasks each read one *share* (:meth:`EdgeScan.shares`:
  the rows cut into equal ranges across row groups and files; a task reads the
  row groups its range touches and slices them), so the parts are equal
  whatever Spark's splits would have been.

The rows are those the Spark path gives (:func:`faq.recursive.seminaive.edge_frame`):
rows with a null end or a null value dropped, the value cast to the
semiring's numpy type, rows whose value is the semiring's zero dropped
(:func:`fixpoint_rows`).  The driver keeps what :func:`~faq.recursive.edge_input.edge_table`
keeps (null values as NaN) and applies its own rules after.

Examples
--------
>>> import os, tempfile
>>> import pyarrow as pa, pyarrow.parquet as pq
>>> path = os.path.join(tempfile.mkdtemp(), "e.parquet")
>>> pq.write_table(pa.table({"a": [1, 2, 3, 4, 5], "b": [2, 3, 4, 5, 1], "w": [1.0, None, 2.0, 3.0, 4.0]}), path,
...                row_group_size=2)
>>> scan = EdgeScan((path,), ("a", "b", "w"), {}, ((path, (2, 2, 1)),))
>>> scan.rows, scan.shares(2)     # 5 rows in two: 2 and 3 (pieces: file, row group, first row, end row)
(5, (((0, 0, 0, 2),), ((0, 1, 0, 2), (0, 2, 0, 1))))
>>> scan.shares(3)                # row 0; rows 1-2, across two groups; rows 3-4
(((0, 0, 0, 1),), ((0, 0, 1, 2), (0, 1, 0, 1)), ((0, 1, 1, 2), (0, 2, 0, 1)))
>>> [t.column("src").to_pylist() for t in (scan.read_share(s) for s in scan.shares(3))]
[[1], [2, 3], [4, 5]]
>>> from faq.recursive.propagate import fixpoint_ops
>>> from faq.semirings import MIN_PLUS
>>> src, dst, weight = fixpoint_rows(scan.read_share(scan.shares(1)[0]), fixpoint_ops(MIN_PLUS))
>>> src.tolist(), dst.tolist(), weight.tolist()     # the row with no weight dropped, as Spark's frame drops it
([1, 3, 4, 5], [2, 4, 5, 1], [1.0, 2.0, 3.0, 4.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.factor import Factor
    from faq.semirings.numpy_backend import NumpyForm

__all__ = ["EdgeScan", "edge_scan", "fixpoint_rows"]

#: Arrow types an end may have to be read from the files (Spark's ``cast("bigint")`` keeps their values).
INTEGER_TYPES = frozenset({"int64", "int32", "int16", "int8"})
#: Arrow types a value may have (cast to the semiring's numpy type as Spark's cast would).
VALUE_TYPES = INTEGER_TYPES | {"double", "float", "bool"}

#: A piece of a share: (file's index in :attr:`EdgeScan.files`, row group, first row, end row) in that group.
Piece = tuple[int, int, int, int]  # as faq.parquet_scan.Piece


@dataclass(frozen=True)
class EdgeScan:
    """Local Parquet files holding an edge factor's rows (module notes): what a reader needs, picklable.

    ``columns`` are the factor's two ends and its value as the files name them; ``constants`` the columns
    Spark makes rather than reads (a factor without values: ``1 AS value``), with their values;
    ``groups`` each file's rows by row group, from the footers.
    """

    files: tuple[str, ...]
    columns: tuple[str, str, str]
    constants: Mapping[str, Any]
    groups: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def rows(self) -> int:
        """The rows in the files (the factor's rows: a bare scan)."""
        return sum(sum(rows) for _, rows in self.groups)

    def shares(self, n: int) -> tuple[tuple[Piece, ...], ...]:
        """The rows cut into ``n`` ranges of equal size (within one row), each as the pieces of row groups it covers."""
        from faq.parquet_scan import row_shares

        return row_shares([rows for _, rows in self.groups], n)

    def read_share(self, share: tuple[Piece, ...]) -> "pa.Table":
        """The rows of one share (:meth:`shares`), the three columns in :attr:`columns` order."""
        from faq.parquet_scan import read_pieces

        read = [c for c in self.columns if c not in self.constants]
        return self._with_constants(read_pieces(self.files, share, read) if read else None, read,
                                    sum(hi - lo for _, _, lo, hi in share))

    def read(self) -> "pa.Table":
        """Every row, the three columns in :attr:`columns` order (the driver's read)."""
        import pyarrow.parquet as pq

        read = [c for c in self.columns if c not in self.constants]
        return self._with_constants(pq.read_table(list(self.files), columns=read) if read else None, read, self.rows)

    def _with_constants(self, table: Optional["pa.Table"], read: list[str], rows: int) -> "pa.Table":
        import pyarrow as pa

        arrays = [table.column(c).combine_chunks() if c not in self.constants else pa.array(np.full(rows, self.constants[c]))
                  for c in self.columns]
        return pa.table(arrays, names=["src", "dst", "weight"])


def edge_scan(edges: "Factor") -> Optional[EdgeScan]:
    """An :class:`EdgeScan` of ``edges``' Parquet files when its DataFrame is a bare scan of local files whose
    ends are integers and whose value is a number or boolean; else None (the rows go through Spark).

    Asks Spark for the plan and the files (no job) and reads the footers.
    """
    import pyarrow.parquet as pq

    from faq.parquet_scan import local_files, scanned_constants

    if len(edges.variables) != 2 or edges.relation.held:
        return None
    columns = (*edges.variables, edges.value)
    df = edges.df
    files = local_files(df)
    constants = scanned_constants(df, columns, files) if files else None
    if constants is None or any(constants.get(end) is not None for end in columns[:2]):
        return None
    groups, types = [], None
    try:
        for path in files:
            meta = pq.read_metadata(path)
            schema = meta.schema.to_arrow_schema()
            read = [c for c in columns if constants.get(c) is None]
            if any(schema.get_field_index(c) < 0 for c in read):
                return None  # a column missing from a file (a partition column)
            found = [str(schema.field(c).type) for c in read]
            if types is not None and found != types:
                return None  # files of different types: Spark reconciles them, a concatenation would not
            types = found
            if any(t not in (INTEGER_TYPES if c in columns[:2] else VALUE_TYPES) for c, t in zip(read, found)):
                return None
            groups.append((path, tuple(meta.row_group(g).num_rows for g in range(meta.num_row_groups))))
    except (OSError, ValueError, KeyError):
        return None
    return EdgeScan(tuple(files), columns, {c: v for c, v in constants.items() if v is not None}, tuple(groups))


def fixpoint_rows(table: "pa.Table", ops: "NumpyForm", symmetric: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, weight)`` of a share as Spark's edge frame has them: rows with a null end or value dropped,
    the value in ``ops``' type, rows whose value is ``ops``' zero dropped.

    ``symmetric`` (components, :func:`faq.recursive.seminaive.symmetric_edges`): every row with both ends,
    whatever its value, in both directions, each weighing ``ops.one``.

    >>> import pyarrow as pa
    >>> from faq.recursive.propagate import fixpoint_ops
    >>> from faq.semirings import MIN_LABEL
    >>> rows = pa.table({"a": [1, 2, None], "b": [2, 2, 3], "w": [None, 0.0, 1.0]})
    >>> [x.tolist() for x in fixpoint_rows(rows, fixpoint_ops(MIN_LABEL), symmetric=True)]
    [[1, 2, 2, 2], [2, 2, 1, 2], [0, 0, 0, 0]]
    """
    import pyarrow.compute as pc

    valid = pc.and_(pc.is_valid(table.column(0)), pc.is_valid(table.column(1)))
    if not symmetric:
        valid = pc.and_(valid, pc.is_valid(table.column(2)))
    if not pc.all(valid).as_py():
        table = table.filter(valid)
    src, dst = (np.asarray(table.column(i).to_numpy(), dtype=np.int64) for i in (0, 1))
    if symmetric:
        both = np.concatenate([src, dst]), np.concatenate([dst, src])
        return both[0], both[1], np.full(len(both[0]), ops.one, dtype=ops.dtype)
    weight = np.asarray(table.column(2).to_numpy(zero_copy_only=False), dtype=ops.dtype)
    keep = weight != ops.zero
    if not keep.all():
        src, dst, weight = src[keep], dst[keep], weight[keep]
    return src, dst, weight
