"""Compile the as-of join's numba searches into numba's on-disk cache, once, at setup (``make`` runs
``python -m faq.asof.warm``): the one-shot search (:mod:`faq.asof.kernel`), the one-shot merge of integer
times and its digit sort (:mod:`faq.asof.merge_match`) and the maintained join's search over live rows
(:mod:`faq.asof.side`), for int64 and float64 times.  Without it the first large join or
the first batch of a maintained one in a process compiles them (about 0.5 s).

>>> warm_up() in ([], ["float64", "int64"])
True
"""

from __future__ import annotations

import sys

__all__ = ["warm_up", "main"]


def warm_up() -> list[str]:
    """Both searches and the one-shot merge compiled (and checked); the time types, or [] without numba."""
    from faq.asof import kernel, merge_match, side

    side.warm_up()
    merge_match.warm_up()
    return kernel.warm_up()


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
