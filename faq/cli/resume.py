"""``--state`` and ``--restart``: a command resumes only the state of its own job.

Every command that keeps a state (``faq truss``, ``faq asof``, ``faq track``,
``faq paths``, ``faq components`` with ``--updates``) names its job -- its
input files and the options that decide its answer
(:func:`faq.incremental.job.job_identity`) -- and:

* with no state in ``--state``, makes one that records the job
  (:func:`recording`);
* with one, compares the recorded job with the given one
  (:func:`resume`): another input file (by content), another direction,
  ``k``, pattern or source is a :class:`~faq.errors.StateJobMismatchError`
  (exit 2) naming the difference, never the old answer under the new
  command; a missing input file is refused too, as on a first run;
* with ``--restart``, discards the old state (under the writer's lock: not
  while another process writes it) and makes a new one.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = parser.add_argument("--state")
>>> add_restart_option(parser)
>>> args = parser.parse_args(["--restart"])
>>> check_restart(args)
Traceback (most recent call last):
...
faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] --restart=True: applies with --state STATE_DIR only
>>> resume(parser.parse_args([]), None, print)     # no --state: nothing to resume
False
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Callable, Iterator, Mapping, Optional

__all__ = ["add_restart_option", "check_restart", "resume", "recording"]


def add_restart_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--restart`` to a command that takes ``--state``."""
    parser.add_argument("--restart", action="store_true",
                        help="with --state: discard the state there and start again (a state of another job, "
                             "inputs or options, is refused otherwise)")


def check_restart(args: argparse.Namespace) -> None:
    """``--restart`` only with ``--state``."""
    from faq.errors import InvalidArgumentError

    if getattr(args, "restart", False) and not args.state:
        raise InvalidArgumentError(argument="--restart", value=True, reason="applies with --state STATE_DIR only")


def resume(args: argparse.Namespace, job: Optional[Mapping[str, Any]], note: Callable[[str], None]) -> bool:
    """True when ``--state`` holds a state of ``job`` to go on with; False when a new one is to be made
    (none there, or ``--restart`` discarded it).

    Raises
    ------
    StateJobMismatchError
        The state there was made by another job.
    StateLockedError
        ``--restart`` while another process writes the state.
    """
    if not args.state:
        return False
    from faq.incremental.store import Store

    store = Store(args.state)
    if not store.exists():
        return False
    if getattr(args, "restart", False):
        store.discard()
        note(f"--restart: the state in {args.state} was discarded; starting again")
        return False
    from faq.incremental.job import check_job

    check_job(store.path, store.manifest(), job or {}, note)
    return True


@contextlib.contextmanager
def recording(job: Optional[Mapping[str, Any]]) -> Iterator[None]:
    """A state made inside records ``job`` (:func:`faq.incremental.job.recording`, imported only when a command
    runs: ``faq.incremental`` is not a cost of ``faq --help``)."""
    from faq.incremental.job import recording as record

    with record(job):
        yield
