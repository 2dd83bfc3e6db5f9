"""What Spark's UI shows of faq's jobs: a description naming the job and its step.

Without this, the Spark UI lists faq's jobs by their call sites
(``count at executor.py:231``).  Two context managers put a readable line
there instead:

* :func:`job` names the faq job running in this thread (``count_triangles``,
  ``query count() := e(a,b), ...``, ``maintained query batch 4``); it touches
  no Spark, so the front door can call it before it knows whether a session
  will be needed.
* :func:`step` describes the Spark jobs run inside it: ``faq query
  count() := e(a,b), e(b,c): step 2 of 3, join of e, e on b``.  On a
  classic session that is the job description
  (``SparkContext.setJobDescription``, shown in the Jobs and SQL tabs); on
  Spark Connect, which has no job description on the client, it is a tag of
  the session (``SparkSession.addTag``, shown as the jobs' tags), with the
  commas Spark refuses in a tag written as ``;``.

Both restore what was there before, so a user's own description survives a
faq call, and both do nothing when there is no session yet (a job run
in-process starts none).

A third, :func:`without_call_sites`, runs around every job (:func:`job` enters
it): classic PySpark 4 records, for each Column and function it builds, the
Python line that called it (for its error messages; the setting
``spark.python.sql.dataFrameDebugging.enabled``), five more py4j round trips
and a walk of the stack each.  Inside faq that line is faq's own, no help to
the user, and it was most of the planning of some jobs: an as-of join on the
executors made 1,024 round trips, 314 without.  It is switched off for the
job and restored after.  This module is the third marked classic-only use of
``sparkContext`` (see :mod:`faq.spark`): a local property of the driver
thread, nothing the executors or Spark Connect need.

Examples
--------
>>> with job("count_triangles"):
...     description("loading edges"), description("")
('faq count_triangles: loading edges', 'faq count_triangles')
>>> description("step 1 of 2, join of e, e on b")
'faq: step 1 of 2, join of e, e on b'
>>> connect_tag("faq query count() := e(a,b), e(b,c): step 1 of 1")
'faq query count() := e(a;b); e(b;c): step 1 of 1'
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
from typing import Any, Callable, Iterator, Mapping, Optional, TypeVar, Union

from faq.process_switch import ProcessSwitch
from faq.settings import requested

__all__ = ["job", "step", "in_thread", "described", "batch_runs_spark", "description", "connect_tag",
           "without_call_sites", "MAX_LENGTH"]

F = TypeVar("F", bound=Callable[..., Any])

MAX_LENGTH = 200  # a description longer than this (a long query's text) is cut, with "..."

_JOB_DESCRIPTION = "spark.job.description"  # the local property setJobDescription sets
_names = threading.local()  # the stack of faq job names of this thread


@contextlib.contextmanager
def job(name: str, session: Any = None, *, spark: bool = True) -> Iterator[None]:
    """Name the faq job this thread runs until the block ends (the outermost name wins).

    The outermost name is kept because a public function calls others
    (``motifs`` counts through ``query``): the UI should name what the user
    called.  Spark jobs inside that no :func:`step` describes carry the
    job's name alone, on ``session`` or else the session that exists now
    (:func:`faq.spark.existing_session`; none is started).  ``spark=False``
    only names the job (no call to Spark: about 0.5 ms saved where the
    caller knows no Spark job runs).
    """
    from faq.spark import existing_session

    stack = getattr(_names, "stack", None)
    if stack is None:
        stack = _names.stack = []
    stack.append(" ".join(name.split()))
    try:
        if not spark:
            yield
            return
        with without_call_sites(), step(session if session is not None else existing_session(), ""):
            yield
    finally:
        stack.pop()


_RECORDING = "pyspark.errors.utils"  # PySpark's module holding its cache of the setting
_ABSENT = object()  # no such module or name (not imported yet: no Column built, as in a job run in-process)


def _recording() -> Any:
    return getattr(sys.modules.get(_RECORDING), "_enable_debugging_cache", _ABSENT)


def _record(value: Any) -> None:
    module = sys.modules.get(_RECORDING)
    if value is not _ABSENT and hasattr(module, "_enable_debugging_cache"):
        module._enable_debugging_cache = value


_call_sites = ProcessSwitch(_recording, _record, off=False)


@contextlib.contextmanager
def without_call_sites() -> Iterator[None]:
    """PySpark's recording of call sites off inside the block (module notes), restored when the last
    block of any thread ends (:class:`~faq.process_switch.ProcessSwitch`).

    The switch is PySpark's own cache of ``spark.python.sql.dataFrameDebugging.enabled``
    (``pyspark.errors.utils._enable_debugging_cache``), a private name: where a release has none the
    block changes nothing.  A user's Column built in another thread meanwhile has no call site in
    its error messages either.

    >>> import pyspark.errors.utils as recording
    >>> before = getattr(recording, "_enable_debugging_cache", None)
    >>> with without_call_sites():
    ...     recording._enable_debugging_cache
    False
    >>> getattr(recording, "_enable_debugging_cache", None) == before
    True
    """
    with _call_sites.off():
        yield


def described(name: Union[str, Callable[[Mapping[str, Any]], str]]) -> Callable[[F], F]:
    """The one wrapper of faq's public jobs: the Spark jobs of a call carry ``faq <name>`` (:func:`job`),
    and a function with a ``placement=`` parameter runs under it (:func:`faq.settings.requested`: it wins
    over ``spark.faq.placement`` wherever that is read), so no entry point does either by hand.

    ``name`` may name the call's arguments (``"query {text}"``), or be a function of them
    (``lambda a: f"matrix_chain of {len(a['matrices'])}"``).  For a method of an object with a
    ``version`` property (a batch of a maintained answer), ``name`` is followed by the batch the call
    makes (``maintained query: batch 4``), and Spark is told only when the batch may run a Spark job
    (:func:`batch_runs_spark`): most batches run on the driver alone, and setting and restoring a
    description costs about 0.5 ms of Spark calls, a third of a small as-of batch.

    >>> from faq.settings import placement_setting
    >>> from faq.spark import session_for_driver_data
    >>> @described("demo {x}")
    ... def demo(x, *, placement=None):
    ...     return description(""), placement_setting(session_for_driver_data())
    >>> demo(3, placement="driver")
    ('faq demo 3', 'driver')
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        placed = "placement" in signature.parameters
        named = callable(name) or "{" in name

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # a property of the object's class only: a Spark Connect DataFrame answers any attribute
            version = args[0].version if args and isinstance(getattr(type(args[0]), "version", None),
                                                              property) else None
            if isinstance(version, int):
                with job(f"{name}: batch {version + 1}", spark=batch_runs_spark(args[0], args[1:], kwargs)):
                    return function(*args, **kwargs)
            arguments = signature.bind_partial(*args, **kwargs).arguments if named or placed else {}
            title = name if not named else name(arguments) if callable(name) else name.format_map(arguments)
            with job(title), requested(arguments.get("placement")):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def batch_runs_spark(target: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a batch of ``target`` may run Spark jobs: it is given a Spark DataFrame (directly or in a
    mapping), its state is on the executors, or it is recomputed.

    >>> class Held:
    ...     placement = "driver"
    >>> batch_runs_spark(Held(), ([(1, 2, 1)],), {}), batch_runs_spark(Held(), (), {"recompute": True})
    (False, True)
    """
    from faq.spark import is_dataframe

    if getattr(target, "placement", None) == "executors" or kwargs.get("recompute"):
        return True
    given = [*args, *kwargs.values()]
    given += [value for item in given if isinstance(item, dict) for value in item.values()]
    return any(is_dataframe(item) for item in given)


def in_thread(session: Any, text: str, function: Callable[[], Any]) -> Callable[[], None]:
    """``function`` made to run in another thread as part of this thread's faq job: its Spark jobs carry
    ``faq <job>: <text>`` (a description, like a Spark tag, belongs to the thread that sets it).

    >>> import threading
    >>> seen = []
    >>> with job("paths", spark=False):
    ...     worker = threading.Thread(target=in_thread(None, "rounds", lambda: seen.append(description("rounds"))))
    ...     worker.start(); worker.join()
    >>> seen
    ['faq paths: rounds']
    """
    stack = list(getattr(_names, "stack", None) or [])

    def run() -> None:
        _names.stack = list(stack)
        with step(session, text):
            function()

    return run


def description(text: str) -> str:
    """The line for a step ``text`` of the current job (see the module's examples)."""
    stack = getattr(_names, "stack", None)
    head = f"faq {stack[0]}" if stack else "faq"
    text = " ".join(text.split())
    line = f"{head}: {text}" if text else head
    return line if len(line) <= MAX_LENGTH else line[: MAX_LENGTH - 3] + "..."


def connect_tag(text: str) -> str:
    """``text`` as a Spark Connect tag: Spark refuses commas in a tag."""
    return text.replace(",", ";")


@contextlib.contextmanager
def step(session: Any, text: str) -> Iterator[None]:
    """Spark jobs run inside carry ``faq <job>: <text>`` in the Spark UI.

    Parameters
    ----------
    session : SparkSession, DeferredSession or None
        The session the jobs run on; nothing is set when it is None or a
        deferred session that has not started (no job can have run on it).
    text : str
        What the step does (``"step 2 of 3, join of e, e on b"``).
    """
    from faq.spark import DeferredSession, is_connect

    if isinstance(session, DeferredSession):
        session = session.session() if session.started else None
    if session is None:
        yield
        return
    line = description(text)
    if is_connect(session):
        tag = connect_tag(line)
        already = tag in session.getTags()
        if not already:
            session.addTag(tag)
        try:
            yield
        finally:
            if not already:
                session.removeTag(tag)
        return
    context = session.sparkContext  # classic only: the job description is a local property of this thread
    previous: Optional[str] = context.getLocalProperty(_JOB_DESCRIPTION)
    context.setJobDescription(line)
    try:
        yield
    finally:
        context.setLocalProperty(_JOB_DESCRIPTION, previous)  # None removes it
