"""Compile the as-of join's numba searches into numba's on-disk cache, once, at setup (``make`` runs
``python -m faq.asof.warm``): the one-shot search (:mod:`faq.asof.kernel`), the one-shot merge of integer
times and its digit sort (:mod:`faq.asof.merge_match`) and the maintained join's search over live rows
(:mod:`faq.asof.side`), for int64 and float64 times.  Without it the first large join or
the first batch of a maintained one in a process compiles them (about 0.5 s).

Even compiled, a process's first merge loads its kernels from that cache (with numba's import, about
1 s of a fresh ``faq asof`` on 5M-row files).  :func:`merge_in_background` loads them on a thread of
their own while the command reads its files, when the files' sizes say the join will merge.

>>> warm_up() in ([], ["float64", "int64"])
True
>>> merge_in_background(["no/such/file.parquet"]) is None    # too small to merge (here: no file at all)
True
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Optional, Sequence

__all__ = ["warm_up", "main", "merge_in_background", "likely_rows"]

#: Bytes a row of a text file takes at least, to guess a CSV's rows from its size (a key and a time).
TEXT_ROW_BYTES = 16


def warm_up() -> list[str]:
    """Both searches and the one-shot merge compiled (and checked); the time types, or [] without numba."""
    from faq.asof import kernel, merge_match, side

    side.warm_up()
    merge_match.warm_up()
    return kernel.warm_up()


def likely_rows(path: str) -> int:
    """The rows a file holds: a Parquet file's footer says; a text file's size over :data:`TEXT_ROW_BYTES`
    (a guess that errs high); 0 for what cannot be opened.

    >>> likely_rows("no/such/file.csv")
    0
    """
    from faq.io._common import format_of  # (the one place a path's format is recognised, as the read asks it)

    try:
        if format_of(path) == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows
        return os.path.getsize(path) // TEXT_ROW_BYTES
    except Exception:  # noqa: BLE001 - unreadable or a damaged footer: the read says so, with its own message
        return 0


def merge_in_background(paths: Sequence[str]) -> Optional[threading.Thread]:
    """Load the one-shot merge's kernels (numba, then its cache) on a daemon thread when the files' rows
    (:func:`likely_rows`) reach :data:`faq.asof.tables.MERGE_FROM`; None otherwise, or without numba.

    The join that follows waits for the load if it is not done (numba's compiler lock); a failure here is
    silent, and the join meets it again where it is raised with its message.
    """
    from faq.asof.tables import MERGE_FROM
    from faq.compiled import COMPILED
    from faq.prefetch import run_in_background

    if not COMPILED or sum(likely_rows(p) for p in paths) < MERGE_FROM:
        return None
    return run_in_background(_merge_warm_up, label="asof-merge-warm-up")


def _merge_warm_up() -> None:
    from faq.asof import merge_match  # (numba's import, then the kernels from its cache)

    merge_match.warm_up()


def main() -> int:
    """``python -m faq.asof.warm``: exit status 0 even on a failure (the first join compiles then)."""
    try:
        print(f"faq: as-of searches compiled for {', '.join(warm_up()) or 'nothing (no numba)'} times")
    except Exception as error:  # noqa: BLE001 - setup goes on
        print(f"faq: could not compile the as-of searches ahead of use ({error}); the first join compiles them",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
