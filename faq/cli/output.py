"""What the ``faq`` commands print and write: JSON lines, tables, previews, ``--out`` files.

Every command prints its result on stdout (progress goes to stderr through
:class:`faq.progress.Reporter`).  The pieces they share live here:

* :func:`print_json` -- one JSON object on one line, flushed at once (commands
  that run update batches print a line per batch, which must not wait for the
  next batch);
* :func:`jsonable` -- a plain JSON value for a Spark or numpy value;
* :func:`print_table` -- rows as right-aligned columns;
* :func:`preview` -- the first :data:`PREVIEW_ROWS` rows of a DataFrame, in order;
* :func:`write_table` and :func:`write_columns` -- a ``--out`` file (CSV or
  Parquet, by suffix) via :func:`faq.io.write_table`; the suffix and folder are
  checked before Spark starts (:func:`faq.cli.inputs.check_table_out`).

Examples
--------
>>> print_json({"count": 3, "value": float("inf"), "rows": [{"a": 1, "w": float("nan")}]})
{"count": 3, "value": "inf", "rows": [{"a": 1, "w": "nan"}]}
>>> print_table([{"node": 1, "value": 0.0}, {"node": 12, "value": 2.5}], ["node", "value"])
node  value
   1    0.0
  12    2.5
>>> plural(1, "binding"), plural(2, "binding")
('1 binding', '2 bindings')
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # annotations only: the CLI imports Spark when a command runs, not on --help
    from pyspark.sql import DataFrame

    from faq.factor import Factor
    from faq.progress import Reporter

__all__ = ["DICTIONARY_SAMPLE", "PREVIEW_ROWS", "dictionary_columns", "jsonable", "print_json", "print_table",
           "preview", "write_table", "write_columns", "resumed_line", "plural"]

PREVIEW_ROWS = 20
"""Rows a command prints (or puts in its JSON ``preview``) when it does not write ``--out``."""


def jsonable(value: Any) -> Any:
    """A plain JSON value: numpy scalars become Python numbers, non-finite floats strings ("inf", "nan").

    Anything else that JSON cannot hold (a date, a Decimal) becomes its ``str``.

    >>> import numpy as np
    >>> jsonable(np.int64(7)), jsonable(float("-inf")), jsonable(None)
    (7, '-inf', None)
    """
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _plain(value: Any) -> Any:
    """``value`` with every non-finite float (at any depth) as a string: json.dumps would write
    ``Infinity``, which is not JSON, and never asks ``default`` about floats."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def print_json(obj: Mapping[str, Any]) -> None:
    """Print ``obj`` as one JSON line on stdout and flush it."""
    print(json.dumps(_plain(obj), default=jsonable, ensure_ascii=False), flush=True)


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """Print ``rows`` under a header of ``columns``, each column right-aligned to its widest cell."""
    cells = [[str(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


def preview(df: "DataFrame", order: Sequence[str], columns: Sequence[str] | None = None) -> list[dict]:
    """The first :data:`PREVIEW_ROWS` rows of ``df`` ordered by ``order``, as dicts of plain values.

    Only those rows reach the driver (``limit`` before ``collect``).
    """
    selected = df.select(*columns) if columns is not None else df
    rows = selected.orderBy(*order).limit(PREVIEW_ROWS).collect()
    return [{k: jsonable(v) for k, v in r.asDict().items()} for r in rows]


def write_table(factor: "Factor", out: str, reporter: "Reporter") -> None:
    """Write ``factor`` to ``out`` (``.csv``, ``.csv.gz`` or ``.parquet``), saying so on stderr."""
    # faq.io is looked up at each call: tests replace faq.io.write_table to simulate a failing disk.
    import faq.io

    reporter.note(f"writing {out}")
    faq.io.write_table(factor, out)


def write_columns(df: "DataFrame", columns: Sequence[str], out: str, reporter: "Reporter", name: str = "out") -> None:
    """Write the ``columns`` of ``df`` (no value column) to ``out``, as :func:`write_table` does."""
    from faq.factor import Factor
    from faq.semirings import get_semiring

    # write_table writes a factor's variables then its value column: naming the last column as
    # the "value" writes exactly ``columns``, in order.
    *first, last = columns
    write_table(Factor(df, tuple(first), get_semiring("counting"), value=last, name=name), out, reporter)


def resumed_line(state: str, version: int, summary: str, skipped: int, to_go: int) -> str:
    """The first line of a run that reopened its ``--state`` (``faq track``, ``paths``, ``components``).

    >>> resumed_line("st", 3, "7 node(s) reached from 0 (min_plus)", 3, 0)
    'st: resumed at version 3, 7 node(s) reached from 0 (min_plus); 3 batch file(s) applied already, 0 to go'
    """
    return f"{state}: resumed at version {version}, {summary}; {skipped} batch file(s) applied already, {to_go} to go"


def plural(count: int, noun: str) -> str:
    """``"1 binding"``, ``"2 bindings"``."""
    return f"{count} {noun}{'s' if count != 1 else ''}"


#: Rows at the start of a column whose distinct values decide whether its Parquet pages use a dictionary.
DICTIONARY_SAMPLE = 4096


def dictionary_columns(table: Any) -> list[str]:
    """The columns of ``table`` worth a dictionary in Parquet: every column but numbers whose first
    :data:`DICTIONARY_SAMPLE` rows are more than half distinct.

    The writer tries a dictionary on every column and gives up on a column of mostly distinct values
    only when the dictionary outgrows its page: on a 5M-row as-of join's output that cost 0.88 s of
    writing against 0.63 s with a dictionary for the key column alone, for a file 5% larger (scratch).

    >>> import pyarrow as pa
    >>> dictionary_columns(pa.table({"time": list(range(100)), "key": [1, 2] * 50, "name": ["a"] * 100}))
    ['key', 'name']
    """
    import numpy as np
    import pyarrow as pa

    from faq.arrow_arrays import to_numpy

    kept = []
    for name, column in zip(table.column_names, table.columns):
        kind = column.type
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            head = to_numpy(column.slice(0, DICTIONARY_SAMPLE), fill=0)
            if len(head) and 2 * len(np.unique(head)) > len(head):
                continue  # mostly distinct: plain pages
        kept.append(name)
    return kept


def write_arrow(table: Any, out: str) -> None:
    """Write an Arrow table to ``out`` (``.csv``, ``.csv.gz`` or ``.parquet``, one file) under a temporary
    name beside it, then rename it into place: a failure leaves nothing half-written."""
    import os

    folder = os.path.dirname(os.path.abspath(out))
    temporary = os.path.join(folder, f".{os.path.basename(out)}.{os.getpid()}.tmp")
    try:
        if out.lower().endswith(".parquet"):
            import pyarrow.parquet as pq

            pq.write_table(table, temporary, use_dictionary=dictionary_columns(table))
        else:
            import pyarrow as pa
            import pyarrow.csv as pcsv

            gzip = out.lower().endswith(".gz")
            with (pa.CompressedOutputStream(temporary, "gzip") if gzip else pa.OSFile(temporary, "wb")) as sink:
                pcsv.write_csv(table, sink)
        os.replace(temporary, out)
    except OSError as exc:  # a full disk, a read-only folder: WRITE_FAILED naming --out
        from faq.io._common import write_error

        mapped = write_error(exc, out)
        if mapped is None:
            raise
        raise mapped from exc
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)

