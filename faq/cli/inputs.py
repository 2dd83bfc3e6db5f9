"""What the ``faq`` commands read from the command line, and the checks that need no Spark.

Starting Spark takes seconds, so every command checks its input first and
fails with one line (exit code 2) before Spark starts and before anything is
written.  The options and checks more than one command uses live here:

* :func:`common_options` -- the parent parser of ``--master``, ``--remote``,
  ``--quiet`` and ``--json``, which every command except ``serve`` takes;
* argparse types, which make a bad value a usage error: :func:`factor_spec`
  (``--factor NAME=PATH``) and :func:`motif_pattern` (with
  :func:`add_pattern_command`, the subparser of a command over a pattern);
* checks raising :class:`~faq.errors.FAQError` s: :func:`require_file`,
  :func:`require_folder`, :func:`check_table_out` (an ``--out`` table's suffix
  and folder), :func:`check_semiring` and :func:`insert_only_batches` (an
  update folder for ``paths`` and ``components``).

Examples
--------
>>> factor_spec("edge=graph.txt")
('edge', 'graph.txt')
>>> check_table_out("answer.parquet")          # a known suffix, and the folder exists
>>> check_table_out("answer.txt")
Traceback (most recent call last):
...
faq.errors.FAQValueError: [OUTPUT_SUFFIX] --out 'answer.txt': write a .csv, .csv.gz or .parquet file
>>> common_options().parse_args(["--quiet"]).master
'local[*]'
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Optional

from faq.errors import FAQValueError, InputNotFoundError, MotifPatternError, NonMonotoneUpdateError
from faq.spark import REMOTE_ENV

if TYPE_CHECKING:
    from faq.graphs.pattern import Pattern
    from faq.io.updates import UpdateBatch

__all__ = ["DEFAULT_MASTER", "DEFAULT_PORT", "DEFAULT_HOST", "METHODS", "TABLE_SUFFIXES", "common_options", "factor_spec",
           "add_pattern_command", "motif_pattern", "require_file", "require_folder", "check_table_out",
           "check_semiring", "insert_only_batches"]

DEFAULT_MASTER = "local[*]"
DEFAULT_PORT = 15002
"""Port of the Spark Connect server ``faq serve`` starts (Spark Connect's own default)."""
DEFAULT_HOST = "127.0.0.1"
"""Address the ``faq serve`` server listens on unless told otherwise: loopback, which no other machine reaches."""
METHODS = ("auto", "exact", "min_fill", "min_degree")
"""Elimination-order searches (``--method``) of the planner."""
TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")
"""Suffixes :func:`faq.io.write_table` writes (``--out`` of query, motif, paths, components)."""


def common_options() -> argparse.ArgumentParser:
    """The parent parser of the options every Spark command takes (``parents=[common_options()]``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--master",
        default=DEFAULT_MASTER,
        metavar="URL",
        help="Spark master URL (default: %(default)s; e.g. local[4], local-cluster[2,1,1024], spark://host:7077)",
    )
    common.add_argument(
        "--remote",
        default=os.environ.get(REMOTE_ENV) or None,
        metavar="URL",
        help="a Spark Connect server to run on instead of starting Spark, e.g. sc://127.0.0.1:15002 "
             f"(started by 'faq serve'; default ${REMOTE_ENV}); a relative input path means the file here, "
             "sent to the server as an absolute path",
    )
    common.add_argument(
        "--placement",
        choices=("auto", "driver", "executors"),
        default=None,
        help="where the steps run: auto (the default: small steps in-process on the driver, no Spark job), "
             "driver, or executors (Spark jobs); sets spark.faq.placement",
    )
    common.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    common.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return common


# --- argparse types: a bad value is a usage error, before Spark starts ------------------------


def factor_spec(text: str) -> tuple[str, str]:
    """``--factor NAME=PATH`` -> ``(name, path)``."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {text!r}")
    return name.strip(), path.strip()


def add_pattern_command(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser, name: str, *,
                        help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A subcommand whose first argument is a motif PATTERN (``faq motif``, ``faq track``).

    The help texts are shown as written (line breaks kept): they list the pattern syntax.
    """
    sub = commands.add_parser(name, parents=[common], help=help, description=description, epilog=epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("pattern", metavar="PATTERN", type=motif_pattern, help="the motif, e.g. '(a)->(b); (b)->(c)'")
    return sub


def motif_pattern(text: str) -> "Pattern":
    """A motif pattern (``faq motif``, ``faq track``), parsed by :func:`faq.graphs.pattern.parse_pattern`."""
    from faq.graphs.pattern import parse_pattern

    try:
        return parse_pattern(text)
    except MotifPatternError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# --- checks ------------------------------------------------------------------------------------


def require_file(path: str) -> None:
    """Raise :class:`~faq.errors.InputNotFoundError` unless ``path`` exists.

    URLs (``hdfs://...``) and globs (``part-*.txt``) are left to Spark.
    """
    if "://" not in path and not any(c in path for c in "*?[") and not os.path.exists(path):
        raise InputNotFoundError(path=path)


def require_folder(out: str) -> None:
    """The folder ``--out`` writes into must exist: a typo should not cost a whole run."""
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise FAQValueError(error_class="OUTPUT_FOLDER_MISSING", path=out, folder=folder)


def check_table_out(out: Optional[str]) -> None:
    """An ``--out`` table (if given) has a suffix of :data:`TABLE_SUFFIXES` and an existing folder."""
    if not out:
        return
    if not out.lower().rstrip("/").endswith(TABLE_SUFFIXES):
        raise FAQValueError(error_class="OUTPUT_SUFFIX", path=out)
    require_folder(out)


def check_semiring(name: Optional[str]) -> None:
    """Raise :class:`~faq.errors.UnknownSemiringError` (naming the valid ones) for an unknown ``name``."""
    from faq.semirings import get_semiring

    if name:
        get_semiring(name)


def insert_only_batches(folder: Optional[str], *, weighted: bool, semiring: str) -> list["UpdateBatch"]:
    """Every batch of ``folder`` (none without one), refusing deletions: an insert-only answer cannot take them.

    ``weighted``: a ``+`` line must carry a weight.  Raises
    :class:`~faq.errors.NonMonotoneUpdateError` naming the file and line of the first deletion.
    """
    if not folder:
        return []
    from faq.io.updates import read_updates

    batches = read_updates(folder, weighted=weighted)
    for batch in batches:
        if batch.deletes:
            raise NonMonotoneUpdateError(
                kind="deletion",
                count=len(batch.deletes),
                example=batch.deletes[0],
                semiring=semiring,
                where=batch.where("deletion"),
            )
    return batches
