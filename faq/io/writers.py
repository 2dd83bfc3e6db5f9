"""Writers of factors: Matrix Market files and tables (CSV, Parquet), never half-written.

Each writer puts its output under a temporary name beside the target and
renames it into place only when it is complete, so a failure (bad input, a
full disk, an interrupt) leaves the target as it was and no temporary file
behind.  Paths are local to the driver.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from faq.errors import FAQValueError, InvalidArgumentError
from faq.factor import Factor
from faq.io._common import PathLike, format_of
from faq.io.convert import to_scipy

def write_matrix_market(factor: Factor, path: PathLike, shape: tuple[int, int] | None = None) -> None:
    """Write a 2-variable factor as a Matrix Market file (for small results only).

    Uses :func:`to_scipy` and :func:`scipy.io.mmwrite` (general symmetry;
    a boolean factor is written as a ``pattern`` matrix).  The file is
    written to a temporary name in the same folder, then renamed, so a
    failure leaves nothing half-written.

    Parameters
    ----------
    factor : Factor
        Two variables holding non-negative integer indices (0-based; the file
        is 1-based, as the format requires).
    path : str or path-like
        Written as given (no ``.mtx`` is added).
    shape : (int, int), optional
        Default: max index + 1 per variable.

    Raises
    ------
    NotAMatrixError, ResultTooLargeError
        As :func:`to_scipy`, which collects the factor (before anything is written).

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> from faq.io import matrix_shape, scratch_path
    >>> p = scratch_path("a.mtx")
    >>> write_matrix_market(factor_of([(0, 1, 2.0)], ["i", "j"], "real"), p, shape=(2, 2))
    >>> matrix_shape(p)
    (2, 2)
    """
    import scipy.io

    path = os.fspath(path)
    matrix = to_scipy(factor, shape=shape)
    field = "pattern" if factor.semiring.value_type == "boolean" else None
    if factor.semiring.value_type == "bigint":
        field = "integer"
    tmp = _temp_beside(path)
    try:
        with open(tmp, "wb") as handle:  # a file object: mmwrite does not rename or add ".mtx"
            scipy.io.mmwrite(
                handle, matrix, comment=f" factor {factor.name!r} written by faq", field=field, symmetry="general"
            )
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_table(factor: Factor, path: PathLike) -> None:
    """Write a factor as one CSV file (with header) or a Parquet directory.

    ``.csv`` (or ``.csv.gz``): Spark writes a single part file
    (``coalesce(1)``, so for small results only) into a temporary directory
    beside the target; the part file is then moved to ``path``.
    ``.parquet``: Spark writes a directory under a temporary name, which is
    then renamed to ``path``.  Columns: variables, then the value.  An
    existing target is replaced; on any failure it is left as it was and
    temporary files are removed.  Paths are local to the driver.

    Parameters
    ----------
    factor : Factor
    path : str or path-like

    Raises
    ------
    InvalidArgumentError
        ``path`` ends neither in ``.csv``/``.csv.gz`` nor ``.parquet``.

    Examples
    --------
    >>> from faq.factor import factor_of
    >>> from faq.io import scratch_path
    >>> p = scratch_path("t.csv")
    >>> write_table(factor_of([(1, 2, 5)], ["a", "b"]), p)
    >>> open(p).read()
    'a,b,value\\n1,2,5\\n'
    """
    path = os.fspath(path)
    fmt = format_of(path)
    if fmt not in ("csv", "parquet") or path.lower().endswith(".bz2"):
        raise InvalidArgumentError("path", path, "write_table writes .csv, .csv.gz or .parquet")
    df = factor.df.select(*factor.columns())
    folder = os.path.dirname(os.path.abspath(path))
    tmp_dir = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        out = os.path.join(tmp_dir, "out")
        if fmt == "csv":
            gz = path.lower().endswith(".gz")
            writer = df.coalesce(1).write.option("header", True)
            if gz:
                writer = writer.option("compression", "gzip")
            writer.csv(out)
            parts = sorted(p for p in os.listdir(out) if p.startswith("part-"))
            if len(parts) != 1:  # coalesce(1) gives one; never guess among several
                raise FAQValueError(error_class="PART_FILES", path=path, parts=len(parts))
            os.replace(os.path.join(out, parts[0]), path)
        else:
            df.write.parquet(out)
            if os.path.lexists(path):
                # A rename cannot replace a non-empty directory: move the old target aside,
                # move the new one in, and put the old one back if that fails.
                old = os.path.join(tmp_dir, "old")
                os.replace(path, old)
                try:
                    os.replace(out, path)
                except BaseException:
                    os.replace(old, path)
                    raise
            else:
                os.replace(out, path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


# --- helpers -------------------------------------------------------------------------------


def _temp_beside(path: str, suffix: str = ".tmp") -> str:
    """A fresh name in the target's folder (so the final move is an atomic rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=suffix, dir=folder)
    os.close(fd)
    return tmp
