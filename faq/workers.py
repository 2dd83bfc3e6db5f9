"""The Spark workers' Python: a probe that it can run faq's tasks, and an environment to ship where it cannot.

PySpark starts its Python workers with the interpreter that
``PYSPARK_PYTHON`` names when the session's SparkContext starts (default
``python3`` on the PATH), or with ``spark.sql.execution.pyspark.python`` when
that is set (a runtime setting, also on Spark Connect) -- not with the
driver's interpreter.  ``spark.pyspark.python`` given to a session built
from Python is not read by PySpark itself; :func:`faq.spark.get_session`
turns it into ``PYSPARK_PYTHON`` and otherwise sets that to this
interpreter.  A session built elsewhere (a notebook or script run from a
virtual environment that is not activated, a cluster whose executors lack
faq) gets workers without faq, numpy, pyarrow or numba, and a job would fail
deep inside with ``ModuleNotFoundError`` in a Python worker.

So before the first job that runs faq's Python on the workers (the generic
join's ``mapInArrow`` tasks, the partitioned join's ``applyInArrow``, the
executor-resident indexes of maintained queries), :func:`ensure_workers`
runs one tiny job: a task per core of a plain (pickled, not Arrow) Python UDF,
which needs nothing but the standard library and :mod:`pyspark` in the
worker.  Each reports its worker's interpreter and Python version, and for
faq, numpy, pyarrow, pandas and numba the version or the import error, and
whether the module the tasks unpickle (``faq.joins.generic``, which imports the strategies and the kernel, and
needs networkx and scipy) imports.  It imports what the tasks will import
anyway, in the worker that runs them next; pandas, which they do not
import, is only looked up.  Then each worker loads the compiled loop in
the background (:func:`faq.joins.warm.warm_worker`) while the driver plans and indexes, so
the first join's tasks neither import nor load anything (all of that cost
4-8 s a task on a loaded two-core machine: ``bench/executor_breakdown.py``).
:func:`problems` compares the reports with the driver; any problem, or a
probe job that fails itself (a worker Python of another minor version, or
one that does not exist), raises
:class:`~faq.errors.WorkerEnvironmentError` (``WORKER_ENVIRONMENT``) naming
the worker's Python, what is wrong and how to fix it.  A passing answer is
kept per session and worker setting, so the probe runs once, not per job;
``spark.faq.checkWorkers=false`` skips it (read, with the other ``spark.faq`` settings, by
:func:`faq.settings.check_workers`).

Required on the workers: faq of the driver's version, numpy, pyarrow, the
task module's imports, the driver's Python major.minor, and numba when the
driver has it (the driver then plans the compiled loop, which the tasks
run).  pandas is reported, not required (faq's tasks are Arrow functions).

Where the executors lack the packages, :func:`pack_environment` writes an
archive of the packages faq's tasks need (faq's own requirements without
pyspark, which Spark ships itself) as a virtual environment packed by
``venv-pack``; ship it with ``spark.archives=faq_env.tar.gz#environment``
and run the workers on ``./environment/bin/python`` (see the README,
"Workers' Python").  That path is relative to an executor's directory: on
a ``local[*]`` master the workers run in the driver's directory, where it
does not resolve (the probe then says ``Cannot run program``).

Examples
--------
What the driver compares: a worker without pyarrow and numpy, and one with
everything (its versions equal to the driver's).

>>> driver = driver_report()
>>> bare = WorkerReport("/usr/bin/python3", driver.python, versions={"faq": driver.versions["faq"]},
...                     errors={"numpy": "ModuleNotFoundError: No module named 'numpy'",
...                             "pyarrow": "ModuleNotFoundError: No module named 'pyarrow'"})
>>> problems(bare, driver)
["numpy: ModuleNotFoundError: No module named 'numpy'", "pyarrow: ModuleNotFoundError: No module named 'pyarrow'"]
>>> problems(driver, driver)
[]
>>> print(WorkerEnvironmentError(executable=bare.executable, python=bare.python,
...                              problems=problems(bare, driver), driver="/venv/bin/python"))
[WORKER_ENVIRONMENT] the Spark workers' Python (/usr/bin/python3, Python ...) cannot run faq's tasks: numpy: ...
"""

from __future__ import annotations

import fnmatch
import functools
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import threading
import venv
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from faq import settings
from faq.errors import InvalidArgumentError, MissingDependencyError, WorkerEnvironmentError
from faq.spark import WARM_DAEMON

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "WorkerReport",
    "ensure_workers",
    "probe_workers",
    "problems",
    "driver_report",
    "worker_distributions",
    "pack_environment",
]

#: The modules the probe imports in a worker and reports (version or import error).
PROBED_MODULES = ("faq", "numpy", "pyarrow", "pandas", "numba")
#: The module whose functions faq's tasks unpickle: importing it imports what they need.
TASK_MODULE = "faq.joins.generic"
#: Required on the workers whatever the driver has (numba too when the driver has it).
REQUIRED = ("faq", "numpy", "pyarrow")
#: The runtime setting naming the workers' interpreter (classic and Spark Connect).
PYTHON_CONF = settings.PYTHON_CONF
#: Distributions the packed environment leaves out: Spark puts its own pyspark and py4j on the
#: workers' path.
NOT_PACKED = frozenset({"pyspark", "py4j"})


@dataclass(frozen=True)
class WorkerReport:
    """What a Python process has: its interpreter, Python version and the probed modules.

    Parameters
    ----------
    executable : str
        ``sys.executable`` of the process.
    python : str
        Its Python version, ``"3.11.7"``.
    versions : mapping
        Module name to version, for the modules that import.
    errors : mapping
        Module name to the import error (``"ModuleNotFoundError: No module named 'numpy'"``).
    where : str, optional
        The directory faq was imported from.
    """

    executable: str
    python: str
    versions: Mapping[str, str] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    where: Optional[str] = None

    @classmethod
    def from_json(cls, text: str) -> "WorkerReport":
        """The report :func:`_probe` wrote as JSON."""
        found = json.loads(text)
        return cls(found["executable"], found["python"], found["versions"], found["errors"], found.get("where"))

    def describe(self) -> str:
        """One line: the interpreter, then each module's version or ``missing``."""
        shown = [f"{name} {self.versions[name]}" if name in self.versions else f"{name} missing"
                 for name in PROBED_MODULES]
        return f"{self.executable} (Python {self.python}): " + ", ".join(shown)


def _probe(_: Any = None, imported: Sequence[str] = PROBED_MODULES + (TASK_MODULE,),
           looked_up: Sequence[str] = (), warm: str = "") -> str:
    """The probe's body, run in a Python worker: the :class:`WorkerReport` fields as JSON.

    Each module of ``imported`` is imported (its ``__version__``, or the
    error); each of ``looked_up`` only found (its distribution's version, or
    ``ModuleNotFoundError``): the tasks do not import those, so the probe
    does not pay for them.  ``warm`` (``"module:function"``), when every
    module imported: that function is started in a daemon thread of the
    worker, which goes on after the report is returned (:func:`faq.joins.warm.warm_worker`:
    the worker then waits for its next task with the compiled loop loaded).
    Self-contained (standard library only, nothing from this module), so a
    worker can run it before anything is known about what it has; shipped by
    value (:func:`_shipped_probe`), not as a reference to ``faq.workers``.

    >>> report = WorkerReport.from_json(_probe(imported=("faq",), looked_up=("numpy", "no_such_module")))
    >>> sorted(report.versions), report.errors["no_such_module"]
    (['faq', 'numpy'], "ModuleNotFoundError: No module named 'no_such_module'")
    """
    import importlib
    import importlib.metadata
    import importlib.util
    import json
    import os
    import sys

    report: dict = {"executable": sys.executable, "python": "%d.%d.%d" % sys.version_info[:3],
                    "versions": {}, "errors": {}, "where": None}
    for name in (*imported, *looked_up):
        try:
            if name in looked_up:
                if importlib.util.find_spec(name) is None:
                    raise ModuleNotFoundError(f"No module named {name!r}")
                version = importlib.metadata.version(name)
            else:
                module = importlib.import_module(name)
                version = str(getattr(module, "__version__", ""))
                if name == "faq":
                    report["where"] = os.path.dirname(getattr(module, "__file__", "") or "")
        except Exception as error:  # noqa: BLE001 - ImportError, or whatever a broken install raises
            report["errors"][name] = f"{type(error).__name__}: {error}"
        else:
            report["versions"][name] = version
    if warm and not report["errors"]:
        import threading

        module, _, function = warm.partition(":")
        threading.Thread(target=lambda: getattr(importlib.import_module(module), function)(), daemon=True,
                         name="faq-warm").start()
    return json.dumps(report)


def _shipped_probe(imported: Sequence[str], looked_up: Sequence[str], warm: str = "") -> Any:
    """:func:`_probe` for ``imported``, ``looked_up`` and ``warm``, as a function cloudpickle pickles by value.

    A module-level function pickles as a reference to its module, which a
    worker without faq could not import: this copy has no module that
    cloudpickle can find and only the builtins as globals.
    """
    import builtins
    import types

    probe = types.FunctionType(_probe.__code__, {"__builtins__": builtins}, "faq_worker_probe",
                               (None, tuple(imported), tuple(looked_up), warm))
    probe.__module__ = "__faq_worker_probe__"  # not in sys.modules: pickled by value
    probe.__qualname__ = "faq_worker_probe"
    return probe


@functools.lru_cache(maxsize=1)
def driver_report() -> WorkerReport:
    """This process's own report, what the workers' is compared with (nothing imported for it).

    >>> driver_report().versions["faq"] == __import__("faq").__version__
    True
    """
    import faq

    versions, errors = {"faq": faq.__version__}, {}
    for name in PROBED_MODULES[1:]:
        if importlib.util.find_spec(name) is None:
            errors[name] = f"ModuleNotFoundError: No module named {name!r}"
            continue
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = ""
    return WorkerReport(sys.executable, platform.python_version(), versions, errors, os.path.dirname(faq.__file__))


def problems(report: WorkerReport, driver: Optional[WorkerReport] = None) -> list[str]:
    """What keeps the workers of ``report`` from running faq's tasks for ``driver``; empty when nothing.

    Parameters
    ----------
    report : WorkerReport
        A worker's (:func:`probe_workers`).
    driver : WorkerReport, optional
        The driver's; default :func:`driver_report`.

    Returns
    -------
    list of str
        One line per problem: another Python major.minor, a required module
        that does not import, faq's task module that does not import, or
        another faq version.

    Examples
    --------
    >>> driver = WorkerReport("/venv/bin/python", "3.11.7", {"faq": "0.1.0", "numpy": "2.4", "pyarrow": "26",
    ...                       "numba": "0.68"})
    >>> worker = WorkerReport("/opt/python", "3.10.13", {"faq": "0.0.9", "numpy": "2.4", "pyarrow": "26"},
    ...                       {"numba": "ModuleNotFoundError: No module named 'numba'"})
    >>> for line in problems(worker, driver):
    ...     print(line)
    Python 3.10 on the workers, 3.11 on the driver (PySpark needs the same major.minor)
    numba: ModuleNotFoundError: No module named 'numba'
    faq 0.0.9 on the workers, 0.1.0 on the driver
    """
    driver = driver or driver_report()
    found = []
    major_minor = [".".join(r.python.split(".")[:2]) for r in (report, driver)]
    if major_minor[0] != major_minor[1]:
        found.append(f"Python {major_minor[0]} on the workers, {major_minor[1]} on the driver "
                     "(PySpark needs the same major.minor)")
    required = REQUIRED + (("numba",) if "numba" in driver.versions else ())
    found += [f"{name}: {report.errors[name]}" for name in required if name in report.errors]
    if "faq" in report.versions:
        if TASK_MODULE in report.errors:
            found.append(f"faq's task module {TASK_MODULE}: {report.errors[TASK_MODULE]}")
        if report.versions["faq"] != driver.versions.get("faq"):
            found.append(f"faq {report.versions['faq']} on the workers, {driver.versions.get('faq')} on the driver")
    return found


# --- the probe job ------------------------------------------------------------------------

# The line of a failed probe job that says why, for a worker Python that could not run it at all.
_FAILURE_LINES = (
    re.compile(r"\[PYTHON_VERSION_MISMATCH\][^\n]*"),
    re.compile(r'Cannot run program "[^"]*"[^\n]*'),
    re.compile(r"(?:ModuleNotFoundError|ImportError): [^\n]*"),
    re.compile(r"Python worker exited unexpectedly[^\n]*"),
)
_WORKER_VERSION = re.compile(r"Python in worker has different version:? (\d+\.\d+)")
_CHECKED: dict[tuple, WorkerReport] = {}
_LOCK = threading.Lock()
#: The probe's tasks at most (one per core up to this: each starts a worker the next job reuses).
PROBE_TASKS = 256
#: What a probed worker runs in the background once its report is returned
#: (:func:`faq.joins.warm.warm_worker`; named, not imported: this module sits below faq.joins).
WARM = "faq.joins.warm:warm_worker"
#: The static Spark setting that makes the executors' Python daemon :func:`serve_daemon`, and its value
#: (:data:`faq.spark.WARM_DAEMON`, on by default on a local master).
DAEMON_CONF = WARM_DAEMON


def failure_reason(text: str) -> Optional[str]:
    """The line of a failed probe job's error saying why the worker's Python could not run it, or None.

    >>> failure_reason('java.io.IOException: Cannot run program "/opt/py": error=2, No such file or directory')
    'Cannot run program "/opt/py": error=2, No such file or directory'
    >>> failure_reason("Job aborted: executor lost") is None
    True
    """
    for pattern in _FAILURE_LINES:
        found = pattern.findall(text)
        if found:
            return found[-1].strip()
    return None


def _configured_python(spark: "SparkSession") -> str:
    """The workers' interpreter as this driver sets it (the setting, not what it resolves to)."""
    from faq.spark import is_connect

    chosen = settings.worker_python(spark)
    if chosen:
        return chosen
    if is_connect(spark):
        return "the Spark Connect server's PYSPARK_PYTHON"
    return os.environ.get("PYSPARK_PYTHON", "python3")


def probe_workers(spark: "SparkSession", warm: str = WARM) -> WorkerReport:
    """Run the probe: one job of a plain Python UDF, a task per core; the first worker's :class:`WorkerReport`
    with a problem, else the first one's.  ``warm`` ("module:function") is what each probed worker then runs in
    the background: by default the compiled loop's load (:data:`WARM`).

    A task per core (at most :data:`PROBE_TASKS`) starts every Python worker
    the next job's tasks will run in, at once, and each imports the task
    modules and, when the driver has numba, loads the compiled loop in the
    background (:func:`faq.joins.warm.warm_worker`) while the driver goes on planning and
    indexing: a broadcast join's tasks then start with nothing to import or
    load.  (Spark stops a worker idle for a minute: one started later pays
    its imports in its first task.)

    Raises
    ------
    WorkerEnvironmentError
        When the job fails because the worker's Python could not run it
        (another minor version, an interpreter that does not exist); any
        other failure is raised as Spark raised it.
    """
    from pyspark.sql import functions as F

    from faq.spark import default_parallelism

    needs_numba = "numba" in driver_report().versions  # the driver plans the compiled loop: the tasks import it
    imported = [*REQUIRED, *(["numba"] if needs_numba else []), TASK_MODULE]
    looked_up = [m for m in PROBED_MODULES if m not in imported]
    probe = F.udf(_shipped_probe(imported, looked_up, warm if needs_numba else ""), "string", useArrow=False)
    tasks = max(1, min(PROBE_TASKS, default_parallelism(spark)))
    try:
        rows = spark.range(0, tasks, 1, tasks).select(probe(F.col("id")).alias("report")).collect()
    except Exception as error:  # noqa: BLE001 - classic (py4j, captured) and Connect errors alike
        reason = failure_reason(str(error))
        if reason is None:
            raise
        version = _WORKER_VERSION.search(str(error))
        raise WorkerEnvironmentError(
            executable=_configured_python(spark), python=version.group(1) if version else "unknown",
            problems=[reason], driver=sys.executable,
        ) from error
    reports = [WorkerReport.from_json(row["report"]) for row in rows]
    return next((r for r in reports if problems(r)), reports[0])


def _session_key(spark: "SparkSession") -> Optional[tuple]:
    """What a probe's answer holds for: the application, the Connect session, the workers' setting.

    None when ``spark.faq.checkWorkers`` is false (read by :func:`faq.settings.check_workers`).
    """
    if not settings.check_workers(spark):
        return None
    return settings.setting(spark, "spark.app.id"), getattr(spark, "session_id", None), settings.worker_python(spark)


def ensure_workers(spark: "SparkSession", warm: str = WARM) -> Optional[WorkerReport]:
    """Check once per session and worker setting that the workers' Python can run faq's tasks.

    Call it before a job that runs faq's functions in Python workers; the
    first call runs :func:`probe_workers` (0.3-1 s on running workers; on
    a fresh session it starts the workers the job's tasks then
    reuse), later ones read the kept answer (milliseconds: ``spark.conf``
    reads).  Thread-safe: a caller may start it in the background while it
    prepares the job; a later call waits for that probe.

    Parameters
    ----------
    spark : SparkSession
        Classic or Spark Connect (only the DataFrame API and ``spark.conf``
        are used).
    warm : str
        What the first probe's workers load in the background ("module:function"): what the job's tasks
        will run (default :data:`WARM`, the compiled loop).

    Returns
    -------
    WorkerReport or None
        The worker's report; None when ``spark.faq.checkWorkers`` is false.

    Raises
    ------
    WorkerEnvironmentError
        The worker's Python lacks what the tasks need, or could not run the probe.

    Examples
    --------
    >>> from faq.spark import get_session
    >>> report = ensure_workers(get_session())
    >>> report.versions["faq"] == driver_report().versions["faq"], problems(report)
    (True, [])
    """
    key = _session_key(spark)
    if key is None:
        return None
    with _LOCK:
        report = _CHECKED.get(key)
        if report is None:
            report = probe_workers(spark, warm)
            found = problems(report)
            if found:
                raise WorkerEnvironmentError(executable=report.executable, python=report.python,
                                             problems=found, driver=sys.executable, report=report)
            _CHECKED[key] = report
    return report


# --- the warm daemon ------------------------------------------------------------------------


def serve_daemon() -> None:
    """Spark's Python daemon, with faq's task modules imported and the compiled loop loaded before it forks.

    ``spark.python.daemon.module=faq.workers`` (static: set when the
    SparkContext starts, see :data:`DAEMON_CONF`) has every executor start
    its Python daemon as ``python -m faq.workers``; the daemon forks each
    Python worker, which so starts holding what the daemon imported and
    loaded: :mod:`pyspark.worker` (which pyspark's own daemon imports in each
    worker after the fork), faq's task modules (:data:`TASK_MODULE`), numpy,
    numba with its start-up (its first call imports ``scipy.linalg`` and
    every typing registry) and the compiled loop's commonest signature
    (:func:`faq.joins.warm.warm_worker`).  A worker Spark starts later (it stops one idle
    for a minute) starts warm too: the daemon lives as long as its executor.
    Nothing that starts a thread is imported (the daemon forks; pyarrow and
    pandas stay out), and nothing is written to standard output (the daemon
    tells Spark its port there).  A failure to import is left to the tasks,
    which meet it again and report it (the probe names it first).
    """
    import contextlib
    import importlib

    with contextlib.redirect_stdout(sys.stderr):
        try:
            importlib.import_module("pyspark.worker")  # what each worker imports first (no thread, no pyarrow)
            importlib.import_module(TASK_MODULE)
            module, _, function = WARM.partition(":")
            getattr(importlib.import_module(module), function)()
        except Exception as error:  # noqa: BLE001 - the tasks report what is wrong
            print(f"faq: the Python daemon did not load faq's task modules ({type(error).__name__}: {error})",
                  file=sys.stderr)
    from pyspark.daemon import manager

    manager()


# --- the packed environment ---------------------------------------------------------------


def _normal(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normal(re.split(r"[\s;<>=!~\[(@]", requirement.strip(), maxsplit=1)[0])


def worker_distributions(root: str = "faq") -> list[str]:
    """``root`` and every installed distribution it needs, without pyspark and py4j (Spark ships those).

    Requirements of extras are left out, and so are requirements not
    installed here (another platform's).

    >>> names = worker_distributions()
    >>> {"faq", "numpy", "pyarrow"} <= set(names), "pyspark" in names
    (True, False)
    """
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [_normal(root)]
    while pending:
        name = pending.pop()
        if name in found or name in NOT_PACKED:
            continue
        try:
            found[name] = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        pending += [_requirement_name(r) for r in found[name].requires or () if "extra ==" not in r]
    return sorted(found)


def _is_editable(dist: importlib.metadata.Distribution) -> bool:
    """An install that points at a source tree (``pip install -e``)."""
    direct = dist.read_text("direct_url.json")
    return bool(direct) and bool(json.loads(direct).get("dir_info", {}).get("editable"))


def _place(source: Path, target: Path) -> None:
    """``target`` becomes ``source``'s content: a hard link where the file system allows, else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _place_distribution(dist: importlib.metadata.Distribution, site: Path, exclude: Sequence[str]) -> int:
    """Put an installed distribution's files into ``site`` (its site-packages); the files placed.

    Files outside site-packages (console scripts) are left out, and files
    matching ``exclude``.  faq installed editable (``pip install -e .``, as
    ``make venv`` does) is placed from its source tree: the package
    directory and its metadata, not the link to the tree.
    """
    placed = 0
    if _is_editable(dist):
        import faq

        if _normal(dist.metadata["Name"]) != "faq":
            raise InvalidArgumentError(argument="distributions", value=dist.metadata["Name"],
                                       reason="installed editable (pip install -e): install it from a wheel "
                                              "to pack it")
        package = Path(faq.__file__).parent
        files = [(p, Path("faq") / p.relative_to(package)) for p in package.rglob("*") if p.is_file()]
        info = Path(str(dist.locate_file(f"faq-{dist.version}.dist-info")))
        files += [(p, Path(info.name) / p.name) for p in info.iterdir()
                  if p.is_file() and p.name not in ("RECORD", "direct_url.json")]
    else:
        files = [(Path(str(dist.locate_file(f))), Path(str(f))) for f in dist.files or ()
                 if not str(f).startswith("..")]
    for source, relative in files:
        if any(fnmatch.fnmatch(relative.as_posix(), p) for p in exclude) or not source.is_file():
            continue
        _place(source, site / relative)
        placed += 1
    return placed


def pack_environment(
    output: str,
    distributions: Optional[Sequence[str]] = None,
    exclude: Sequence[str] = ("*/tests/*",),
    compress_level: int = 1,
    python_prefix: Optional[str] = None,
    force: bool = False,
) -> str:
    """Pack the packages faq's tasks need, as installed here, into a virtual environment archive.

    A fresh virtual environment (no pip) gets each distribution's installed
    files (hard links where possible), then ``venv-pack`` writes it to
    ``output``: ship it with ``spark.archives=OUTPUT#environment`` and run the
    workers on ``./environment/bin/python`` (``PYSPARK_PYTHON`` before the
    session starts, or ``spark.sql.execution.pyspark.python``; on Spark
    Connect ``spark.addArtifacts("OUTPUT#environment", archive=True)``).
    The archive holds packages, not the interpreter: its ``bin/python``
    links to this environment's base interpreter (``sys._base_executable``),
    which the executors need at the same path, with the same Python version
    (the same image); ``python_prefix`` names another prefix there.

    Parameters
    ----------
    output : str
        The archive: ``.tar.gz``, ``.tgz`` or ``.zip`` (what ``spark.archives`` unpacks).
    distributions : sequence of str, optional
        What to pack; default :func:`worker_distributions` (faq and its
        requirements but pyspark: about 650 MB unpacked).
    exclude : sequence of str
        Glob patterns of site-packages paths left out (default the packages' tests).
    compress_level : int
        gzip level, 0-9 (1: about a third of level 4's time for a few per cent more bytes).
    python_prefix : str, optional
        The executors' prefix of the same Python, when it is not this one's.
    force : bool
        Overwrite an existing ``output``.

    Returns
    -------
    str
        The archive's absolute path.

    Raises
    ------
    MissingDependencyError
        ``venv-pack`` is not installed (``pip install 'faq[workers]'``).
    InvalidArgumentError
        Another archive format, an ``output`` that exists (without ``force``),
        or a distribution that is not installed or is editable.

    Examples
    --------
    A small one (``pack_environment("faq_env.tar.gz")`` packs all faq's tasks need):

    >>> import tarfile
    >>> from faq.io import scratch_path
    >>> archive = pack_environment(scratch_path("tz.tar.gz"), distributions=["tzdata"])
    >>> names = tarfile.open(archive).getnames()
    >>> "bin/python" in names, "lib/python%d.%d/site-packages/tzdata/__init__.py" % sys.version_info[:2] in names
    (True, True)
    """
    try:
        import venv_pack
    except ImportError as error:
        raise MissingDependencyError(package="venv-pack", extra="workers",
                                     feature="faq.workers.pack_environment") from error
    output = os.path.abspath(output)
    if not output.endswith((".tar.gz", ".tgz", ".zip")):
        raise InvalidArgumentError(argument="output", value=output,
                                   reason="spark.archives unpacks .tar.gz, .tgz and .zip archives")
    if os.path.exists(output) and not force:
        raise InvalidArgumentError(argument="output", value=output, reason="exists already; force=True replaces it")
    names = list(distributions) if distributions is not None else worker_distributions()
    found = []
    for name in names:
        candidates = list(importlib.metadata.distributions(name=name))
        if not candidates:
            raise InvalidArgumentError(argument="distributions", value=name, reason="not installed here")
        # A source tree on sys.path may hold an old egg-info of its own (setuptools leaves one beside
        # pyproject.toml), found before the installed metadata; its file list dates from when it was
        # written.  The editable install's metadata is the one that says where the package lives.
        found.append(next((d for d in candidates if _is_editable(d)), candidates[0]))
    os.makedirs(os.path.dirname(output), exist_ok=True)
    work = tempfile.mkdtemp(prefix=".faq-pack-", dir=os.path.dirname(output))  # beside it: hard links work
    try:
        prefix = Path(work) / "environment"
        venv.EnvBuilder(symlinks=True, with_pip=False).create(prefix)
        site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
        for dist in found:
            _place_distribution(dist, site, exclude)
        venv_pack.pack(prefix=str(prefix), output=output, compress_level=compress_level,
                       python_prefix=python_prefix, force=force)
        os.chmod(output, 0o644)  # venv-pack writes through mkstemp (0600); executors may run as another user
        return output
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":  # spark.python.daemon.module=faq.workers: Spark's Python daemon, warm (serve_daemon)
    serve_daemon()
