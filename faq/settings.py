"""faq's settings: every ``spark.faq.*`` key, its default, and the one reader of each.

A setting is read here and nowhere else: the placement policy
(:mod:`faq.placement_policy`), the planner's environment
(:func:`faq.insideout.binding.session_environment`), the workers' probe and
the loaders ask these functions.  A job's ``placement=`` argument
(:func:`requested`) wins over the session's ``spark.faq.placement`` wherever
it is read.  Nothing here starts Spark on its own: a deferred session
(:func:`faq.spark.session_for_driver_data`) answers ``conf.get`` from the
settings it was given.

==============================  ==========================================================
``spark.faq.placement``         where work runs: "auto", "driver", "executors" (:func:`placement_setting`)
``spark.faq.localMemory``       bytes an in-process step may use (:func:`local_memory`)
``spark.faq.fetchMemory``       bytes of an input worth fetching to the driver (:func:`fetch_memory`)
``spark.faq.localRows``         a cap on a fetched input's rows, when set (:func:`local_rows`)
``spark.faq.indexMemory``       bytes one index may use on an executor (:func:`index_memory`)
``spark.faq.driverIndexMemory`` bytes the driver may give one broadcast index (:func:`driver_index_memory`)
``spark.faq.indexDir``          a directory the executors can read (:func:`index_dir`)
``spark.faq.indexBuild``        where broadcast indexes are built (:func:`index_build`)
``spark.faq.inTasks``           when a plan may run in the tasks of its one large input (:func:`in_tasks`)
``spark.faq.compaction``        where a maintained index folds its overlay (:func:`compaction_mode`)
``spark.faq.checkWorkers``      probe the workers' Python first (:func:`check_workers`)
``$FAQ_CALIBRATION``            where this machine's calibration is stored (:func:`calibration_path`)
==============================  ==========================================================

Examples
--------
>>> from faq.spark import session_for_driver_data
>>> spark = session_for_driver_data()
>>> placement_setting(spark), in_tasks(spark), local_rows(spark)
('auto', 'auto', 0)
>>> with requested("driver"):
...     placement_setting(spark)
'driver'
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

from faq.errors import InvalidArgumentError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "PLACEMENTS", "AUTO", "DRIVER", "EXECUTORS", "checked", "requested", "requested_placement",
    "parse_size", "setting", "placement_setting", "local_memory", "fetch_memory", "local_rows", "index_memory",
    "machine_index_memory", "machine_memory", "driver_index_memory", "index_dir", "index_build", "in_tasks",
    "compaction_mode", "check_workers", "worker_python", "shuffle_partitions", "calibration_path",
]

#: The placements a user may ask for: ``auto`` (by :func:`choose`), ``driver``, ``executors``.
PLACEMENTS = ("auto", "driver", "executors")
AUTO, DRIVER, EXECUTORS = PLACEMENTS

# The memory one index may use on an executor, unless the session sets INDEX_MEMORY_CONF: this
# fraction of the executor's memory (spark.executor.memory, default 1g; on a local master, where the
# executor is the driver, spark.driver.memory).  A quarter, because the index is not in the JVM heap
# that setting sizes but beside it: one mapped copy per machine (faq.joins.mapped), plus what each
# Python worker adds on its own (hash tables of validated levels, the task's working arrays, about
# as large again per worker), while the heap itself stays in use by Spark.
INDEX_MEMORY_FRACTION = 0.25
# Where the executors run on this machine (a local or local-cluster master), the index's budget comes
# from the memory that holds it instead (machine_index_memory): this fraction of
# the machine's memory the JVM heaps leave, shared by the mapped copy and one addition per worker. Half,
# so the driver's own Python (the edges it loaded, the plan's inputs) keeps the other half.
INDEX_MACHINE_FRACTION = 0.5
# Session conf key (bytes, or a Spark size string: "256m", "4g") that sets the budget directly.
INDEX_MEMORY_CONF = "spark.faq.indexMemory"
DEFAULT_EXECUTOR_MEMORY = 1 << 30  # Spark's default spark.executor.memory, 1g
DEFAULT_INDEX_MEMORY = int(INDEX_MEMORY_FRACTION * DEFAULT_EXECUTOR_MEMORY)
# Session conf keys for where a broadcast index is built (faq.joins.executor_index): the driver's
# budget for building one (bytes or a Spark size; default the driver's local memory: it is built in the
# driver's Python, beside the JVM heap),
# a directory the executors can read for the index's inputs, and "auto" / "driver" / "executors".
DRIVER_INDEX_MEMORY_CONF = "spark.faq.driverIndexMemory"
INDEX_DIR_CONF = "spark.faq.indexDir"
INDEX_BUILD_CONF = "spark.faq.indexBuild"
INDEX_BUILDS = ("auto", "driver", "executors")
# Session conf keys for where work runs (faq.placement_policy.choose): "auto" (by size), "driver"
# (in-process, no Spark job) or "executors"; the bytes an in-process step may use on the driver
# (default LOCAL_MEMORY_FRACTION of this machine's memory: the driver's Python process is not in the
# JVM heap spark.driver.memory sizes); the bytes of an input the driver fetches (one job, through Arrow)
# to run steps in-process when it does not hold them already (default FETCH_MEMORY_FRACTION of the local
# memory); and, only when set, a cap on the rows of such an input (the byte budget decides otherwise).
PLACEMENT_CONF = "spark.faq.placement"
LOCAL_MEMORY_CONF = "spark.faq.localMemory"
LOCAL_ROWS_CONF = "spark.faq.localRows"
FETCH_MEMORY_CONF = "spark.faq.fetchMemory"
LOCAL_MEMORY_FRACTION = 0.25
DEFAULT_LOCAL_MEMORY = 1 << 30
# Moving an input to the driver costs one Arrow collect (measured here: ~10^7 rows of two bigints a
# second on local[2]), and saves a Spark job per step over it (a second or more each, whatever the size):
# worth it for any input whose copy fits a share of the driver's in-process memory.
FETCH_MEMORY_FRACTION = 0.25
DEFAULT_FETCH_MEMORY = DEFAULT_LOCAL_MEMORY // 4
DEFAULT_LOCAL_ROWS = 0  # no row cap: the fetch budget (bytes) decides
# Session conf key for where a maintained index folds its overlay into its base (faq.incremental.compaction):
# "thread" (default: in the background, between batches), "process" (a forked, niced child), "inline"
# (the same fold, run in the batch's thread) or "batch" (the whole base rebuilt inside the batch that fills
# the overlay: the old stop-the-world way, the benchmarks' baseline).
#: Whether a plan whose every factor but one is on the driver runs in the tasks of that one
#: (faq.insideout.in_tasks): "auto" where it measured faster than Spark's operators (an array ring:
#: Spark SQL multiplies and sums arrays of doubles a row at a time), "always" for any semiring with a
#: numpy form, "never".
IN_TASKS_CONF = "spark.faq.inTasks"
IN_TASKS_CHOICES = ("auto", "always", "never")
COMPACTION_CONF = "spark.faq.compaction"
COMPACTIONS = ("thread", "process", "inline", "batch")
# Session conf key: "false" skips probing the workers' Python before faq's first job there
# (faq.workers.ensure_workers); "true" (default) probes.
CHECK_CONF = "spark.faq.checkWorkers"

def checked(value: str, argument: str = "placement") -> str:
    """``value`` when it is one of :data:`PLACEMENTS`, else an :class:`~faq.errors.InvalidArgumentError`.

    >>> checked("driver")
    'driver'
    >>> checked("gpu")
    Traceback (most recent call last):
    ...
    faq.errors.InvalidArgumentError: [INVALID_ARGUMENT] placement='gpu': expected one of auto, driver, executors
    """
    if value not in PLACEMENTS:
        raise InvalidArgumentError(argument=argument, value=value, reason=f"expected one of {', '.join(PLACEMENTS)}")
    return value


_request = threading.local()  # the placement= of the public job running in this thread


@contextlib.contextmanager
def requested(placement: Optional[str]) -> Iterator[None]:
    """Where this thread's work runs until the block ends: a job's ``placement=`` argument.

    It wins over the session's ``spark.faq.placement`` wherever that setting
    is read (:func:`requested_placement`); ``None`` leaves the setting in
    charge.  A thread's own: two jobs in two threads may ask differently.

    >>> with requested("driver"):
    ...     requested_placement()
    'driver'
    >>> requested_placement() is None
    True
    """
    previous = getattr(_request, "placement", None)
    _request.placement = previous if placement is None else checked(placement)
    try:
        yield
    finally:
        _request.placement = previous


def requested_placement() -> Optional[str]:
    """The placement the running job asked for (:func:`requested`), or None."""
    return getattr(_request, "placement", None)


def parse_size(text: Any, default_unit: str = "b") -> int:
    """Bytes of a Spark size string: ``"256m"``, ``"4g"``, ``"1536k"``, ``"65536"``.

    A bare number is in ``default_unit`` (Spark reads ``spark.executor.memory
    = 1024`` as MiB: ``default_unit="m"``).

    Raises
    ------
    InvalidArgumentError
        Not a size.

    Examples
    --------
    >>> parse_size("256m"), parse_size("4k"), parse_size("1g"), parse_size(100), parse_size("2", "m")
    (268435456, 4096, 1073741824, 100, 2097152)
    """
    units = {"b": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgtp]?)(?:i?b)?\s*", str(text).lower())
    if not found:
        raise InvalidArgumentError(argument="size", value=text,
                                   reason="not a size: a number of bytes or a Spark size such as 256m or 4g")
    number, unit = found.groups()
    return int(float(number) * 1024 ** units[unit or default_unit.lower()])


def setting(spark: "SparkSession", key: str) -> Optional[str]:
    """The session's value of ``key``, or None (unset, or a Connect server that will not show it)."""
    try:
        return spark.conf.get(key, None)
    except Exception:  # noqa: BLE001 - a Connect server may refuse to show a static setting
        return None


def index_memory(spark: "SparkSession") -> int:
    """Bytes one index may use on an executor of ``spark`` (see :func:`faq.insideout.binding.session_environment`).

    ``spark.faq.indexMemory`` when set. Else, where the executors run on this
    machine (a ``local`` or ``local-cluster`` master), from the memory that
    really holds an index: the machine's, less the JVM heaps
    (:func:`machine_index_memory`) -- the index is a mapped file in the page
    cache plus what each Python worker adds, none of it in a heap; never less
    than the heap-based figure. On a cluster,
    :data:`INDEX_MEMORY_FRACTION` of
    ``spark.executor.memory`` (default 1g), this machine telling nothing of
    the executors'.
    """
    given = setting(spark, INDEX_MEMORY_CONF)
    if given:
        return parse_size(given)
    master = setting(spark, "spark.master") or ""
    key = "spark.driver.memory" if master.startswith("local[") or master == "local" else "spark.executor.memory"
    memory = parse_size(setting(spark, key) or "1g", default_unit="m")  # Spark reads a bare number as MiB
    by_heap = int(INDEX_MEMORY_FRACTION * memory)
    if not master.startswith("local"):
        return by_heap
    from faq.spark import default_parallelism

    heaps = _heap_bytes(spark, master)
    return max(by_heap, machine_index_memory(machine_memory(), heaps, default_parallelism(spark)))


def machine_index_memory(machine: int, heaps: int, workers: int) -> int:
    """Bytes one index may use when it lives on this machine beside JVM heaps of ``heaps`` bytes.

    :data:`INDEX_MACHINE_FRACTION` of the memory
    the heaps leave, shared by the index's one mapped copy and the
    ``workers`` Python workers that each add about as much again while
    they run (validated levels' hash tables, a task's arrays).

    >>> GiB = 1 << 30
    >>> round(machine_index_memory(24 * GiB, 4 * GiB, 2) / GiB, 2)    # 24 GiB, a 4g driver, 2 workers
    3.33
    >>> machine_index_memory(8 * GiB, 10 * GiB, 4)          # heaps larger than the machine
    0
    """
    return int(INDEX_MACHINE_FRACTION * max(0, machine - heaps) / (1 + max(1, workers)))


def machine_memory() -> int:
    """This machine's physical memory in bytes (4 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return 4 << 30


def _heap_bytes(spark: "SparkSession", master: str) -> int:
    """The JVM heaps a local master runs on this machine: the driver's, and a ``local-cluster``'s executors'."""
    heaps = parse_size(setting(spark, "spark.driver.memory") or "1g", default_unit="m")
    cluster = re.match(r"local-cluster\[\s*(\d+)\s*,\s*\d+\s*,\s*(\d+)\s*\]", master)
    if cluster:
        heaps += int(cluster.group(1)) * int(cluster.group(2)) << 20
    return heaps


def driver_index_memory(spark: "SparkSession") -> int:
    """Bytes the driver of ``spark`` may give to building one broadcast index (see :func:`faq.insideout.binding.session_environment`).

    ``spark.faq.driverIndexMemory`` when set, else :func:`local_memory`: the
    index is built by the driver's Python process, beside the JVM's heap, not
    in it.
    """
    given = setting(spark, DRIVER_INDEX_MEMORY_CONF)
    if given:
        return parse_size(given)
    return local_memory(spark)


def index_dir(spark: "SparkSession", connect: bool) -> Optional[str]:
    """A directory the executors of ``spark`` can read, for the inputs of an index built there.

    ``spark.faq.indexDir`` when set; else, for a classic session on a
    ``local`` or ``local-cluster`` master (executors on this machine), the
    driver's scratch directory; else None (a Connect server or a cluster
    may not see this machine's files).
    """
    given = setting(spark, INDEX_DIR_CONF)
    if given:
        # A relative path would be read against each worker's own directory: make it the driver's.
        return given if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", given) else os.path.abspath(given)
    if not connect and (setting(spark, "spark.master") or "").startswith("local"):
        from faq.scratch import scratch_directory  # stdlib only: no arrow up

        return scratch_directory()
    return None


def _choice(spark: "SparkSession", key: str, choices: Sequence[str]) -> str:
    """A setting that names one of ``choices`` (the first is the default); anything else is refused.

    ``spark.faq.indexBuild`` ("auto", "driver" or "executors") and
    ``spark.faq.placement`` (the same names) are read this way.
    """
    # a job's placement= argument wins over the session's setting
    given = (key == PLACEMENT_CONF and requested_placement()) or (setting(spark, key) or choices[0]).strip().lower()
    if given not in choices:
        raise InvalidArgumentError(argument=key, value=given, reason=f"expected one of {', '.join(choices)}")
    return given


def placement_setting(spark: "SparkSession") -> str:
    """``spark.faq.placement``: "auto" (default: by size and budgets), "driver" or "executors".

    >>> from faq.spark import session_for_driver_data
    >>> placement_setting(session_for_driver_data())
    'auto'
    """
    return _choice(spark, PLACEMENT_CONF, PLACEMENTS)


def index_build(spark: "SparkSession") -> str:
    """``spark.faq.indexBuild``: "auto" (default), "driver" or "executors"; anything else is refused."""
    return _choice(spark, INDEX_BUILD_CONF, INDEX_BUILDS)


def check_workers(spark: "SparkSession") -> bool:
    """``spark.faq.checkWorkers``: "true" (default) probes the workers' Python before faq's first job
    there (:func:`faq.workers.ensure_workers`), "false" does not; anything else is refused."""
    return _choice(spark, CHECK_CONF, ("true", "false")) == "true"


def compaction_mode(spark: "SparkSession") -> str:
    """``spark.faq.compaction``: where a maintained index folds its overlay into its base -- "thread"
    (default), "process", "inline" or "batch" (:data:`COMPACTIONS`); anything
    else is refused.  Read without starting Spark from a deferred session.

    >>> from faq.spark import session_for_driver_data
    >>> compaction_mode(session_for_driver_data())
    'thread'
    """
    return _choice(spark, COMPACTION_CONF, COMPACTIONS)


def fetch_memory(spark: "SparkSession", in_process: Optional[int] = None) -> int:
    """Bytes of an input the driver fetches to run steps in-process: ``spark.faq.fetchMemory`` when set,
    else :data:`FETCH_MEMORY_FRACTION` of the in-process memory (``in_process``,
    default :func:`local_memory`).

    >>> from faq.spark import session_for_driver_data
    >>> spark = session_for_driver_data()
    >>> fetch_memory(spark, 4 << 30) == 1 << 30
    True
    """
    given = setting(spark, FETCH_MEMORY_CONF)
    if given:
        return parse_size(given)
    return int(FETCH_MEMORY_FRACTION * (local_memory(spark) if in_process is None else in_process))


def local_memory(spark: "SparkSession") -> int:
    """Bytes an in-process step may use on the driver: ``spark.faq.localMemory`` when set, else
    :data:`LOCAL_MEMORY_FRACTION` of this machine's memory (the driver's
    Python process, where in-process steps run, lives beside the JVM, not in its heap)."""
    given = setting(spark, LOCAL_MEMORY_CONF)
    if given:
        return parse_size(given)
    return int(LOCAL_MEMORY_FRACTION * machine_memory())


def _rows(key: str, text: str) -> int:
    try:
        rows = int(float(text))
    except ValueError:
        rows = -1
    if rows < 0:
        raise InvalidArgumentError(argument=key, value=text, reason="expected a number of rows (0 or more)")
    return rows


def local_rows(spark: "SparkSession") -> int:
    """``spark.faq.localRows``: the most rows of an input the driver fetches; 0 (default) for no cap."""
    given = setting(spark, LOCAL_ROWS_CONF)
    return DEFAULT_LOCAL_ROWS if not given else _rows(LOCAL_ROWS_CONF, given)


def in_tasks(spark: "SparkSession") -> str:
    """``spark.faq.inTasks``: "auto" (default), "always" or "never"; anything else is refused."""
    return _choice(spark, IN_TASKS_CONF, IN_TASKS_CHOICES)


#: Spark's own setting for the Python the workers run (:mod:`faq.workers` checks it).
PYTHON_CONF = "spark.sql.execution.pyspark.python"


def worker_python(spark: "SparkSession") -> Optional[str]:
    """The workers' Python as the session sets it (``spark.sql.execution.pyspark.python``), or None."""
    return setting(spark, PYTHON_CONF)


def shuffle_partitions(spark: "SparkSession") -> int:
    """``spark.sql.shuffle.partitions`` (at least 1): the tasks one shuffle makes."""
    return max(1, int(setting(spark, "spark.sql.shuffle.partitions") or 200))


def calibration_path() -> str:
    """Where :mod:`faq.calibration` stores this machine's rates: ``$FAQ_CALIBRATION`` when set (empty: no
    calibration is read or written), else ``calibration.json`` in the user's cache directory
    (``$XDG_CACHE_HOME/faq``, default ``~/.cache/faq``).

    >>> calibration_path().endswith("calibration.json") or calibration_path() == ""
    True
    """
    given = os.environ.get("FAQ_CALIBRATION")
    if given is not None:
        return given
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "faq", "calibration.json")
