"""The one place that makes or finds the SparkSession.

Everything in faq that needs Spark calls :func:`get_session` (or takes the
session of a DataFrame it was given).  The session is, in this order: the one
set with :func:`use_session`; an active Spark Connect session; an active
classic session; or a new one -- a Spark Connect client when a remote URL is
given (``remote=``, ``$FAQ_REMOTE``, or Spark's own ``$SPARK_REMOTE``), else
a classic session on ``master``.  Starting a classic session checks that a
Java 17+ runtime exists (Spark's own error for a missing JVM is a long stack
trace), silences Spark's start-up chatter (set ``FAQ_SPARK_VERBOSE=1`` to
see it), and applies the settings faq relies on: few shuffle partitions on
small machines, no UI, Arrow for pandas conversion.

faq runs on Spark Connect: nothing outside this module touches
``sparkContext``, RDDs or the JVM except three marked classic-only paths:
the status tracker behind progress reports (:mod:`faq.progress`; Connect
reports through its progress handler), the job descriptions the Spark UI
shows (:mod:`faq.spark_ui`; Connect gets session tags) and the executor
placement of resident indexes (broadcast variables, refused on Connect).  The generic
join ships its index as a session file (:mod:`faq.joins.mapped`), the same
on both.

Examples
--------
>>> from faq.spark import java_version
>>> java_version() is None or java_version() >= 17
True
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

from faq.errors import FAQRuntimeError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

DEFAULT_MASTER = "local[*]"
# A Spark Connect URL (sc://host:port) faq uses instead of starting Spark.
REMOTE_ENV = "FAQ_REMOTE"

# Settings faq applies unless the caller overrides them.
DEFAULT_CONFIG: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "4g",
    # Joins in a plan are planned by faq, not by Spark's broadcast heuristics on
    # estimated sizes that can be far off after aggregation; AQE still converts
    # a join to broadcast when the measured side is small.
    "spark.sql.autoBroadcastJoinThreshold": str(32 * 1024 * 1024),
}

_JAVA_VERSION_RE = re.compile(r'version "(\d+)(?:\.(\d+))?')


def java_version() -> int | None:
    """Return the major version of the Java runtime Spark would use, or None.

    Looks at ``$JAVA_HOME/bin/java`` first, then ``java`` on ``PATH``.
    """
    java_home = os.environ.get("JAVA_HOME")
    candidates = []
    if java_home:
        candidates.append(os.path.join(java_home, "bin", "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for exe in candidates:
        if not os.path.exists(exe):
            continue
        try:
            out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = _JAVA_VERSION_RE.search(out.stderr + out.stdout)
        if m:
            major = int(m.group(1))
            # Java 8 reports itself as "1.8".
            return int(m.group(2)) if major == 1 and m.group(2) else major
    return None


def check_java(minimum: int = 17) -> int:
    """Raise a ``JAVA_NOT_FOUND`` :class:`~faq.errors.FAQRuntimeError` unless Java ``minimum``+ exists."""
    version = java_version()
    if version is None:
        raise FAQRuntimeError(error_class="JAVA_NOT_FOUND", found=None)
    if version < minimum:
        raise FAQRuntimeError(error_class="JAVA_NOT_FOUND", found=f"Java {version}")
    return version


#: The static setting that makes the executors' Python daemon faq's warm one (:func:`faq.workers.serve_daemon`:
#: faq's task modules and the compiled loop loaded once, before each worker is forked), and its value.  Set
#: by default on a local master whose workers run this interpreter (:func:`warm_daemon_config`).
WARM_DAEMON = ("spark.python.daemon.module", "faq.workers")

# Settings of DEFAULT_CONFIG a Spark Connect client may set on its session (the others are static).
_RUNTIME_SETTINGS = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled",
                     "spark.sql.execution.arrow.pyspark.enabled", "spark.sql.autoBroadcastJoinThreshold")

_chosen = None  # the session set by use_session


def use_session(session):
    """Make ``session`` the one faq uses (e.g. a Spark Connect session); returns the previous choice.

    Parameters
    ----------
    session : SparkSession or None
        ``None`` goes back to finding the active session.

    Returns
    -------
    SparkSession or None
        The previous choice, to restore it.

    Examples
    --------
    >>> previous = use_session("a session")      # any object: faq returns what it was given
    >>> get_session() == "a session"
    True
    >>> use_session(previous)
    'a session'
    """
    global _chosen
    previous, _chosen = _chosen, session
    return previous


def is_dataframe(value) -> bool:
    """True for a Spark DataFrame, classic or Spark Connect (not an attribute probe: a Connect
    DataFrame answers any attribute name with a Column, so ``hasattr`` tells nothing)."""
    if "pyspark" not in sys.modules:  # nothing else can be a DataFrame before pyspark is loaded
        return False
    from pyspark.sql import DataFrame  # the parent class of both kinds

    return isinstance(value, DataFrame)


def is_connect(session) -> bool:
    """True for a Spark Connect session (no ``sparkContext``, RDD or JVM on the client)."""
    if isinstance(session, DeferredSession):
        return session.remote is not None
    return type(session).__module__.startswith("pyspark.sql.connect")


def _active_connect_session():
    # No Connect session can exist unless its module was loaded; importing it (grpcio ...) costs ~1 s.
    module = sys.modules.get("pyspark.sql.connect.session")
    return None if module is None else module.SparkSession.getActiveSession()


def get_session(
    master: str | None = None,
    app_name: str = "faq",
    config: Mapping[str, str] | None = None,
    remote: str | None = None,
):
    """Return the session faq uses, or start one (see the module notes for the order).

    Parameters
    ----------
    master : str, optional
        Spark master URL (``local[*]``, ``local-cluster[2,1,1024]``,
        ``spark://host:7077`` ...).  Ignored when a session is already active.
    app_name : str
        Application name shown by the cluster manager.
    config : mapping, optional
        Extra Spark settings; they override :data:`DEFAULT_CONFIG`.
    remote : str, optional
        A Spark Connect URL (``sc://host:port``; a local ``faq serve``'s token is found, and sent only to
        the socket its server holds: :func:`faq.served.with_served_token`) to connect to instead of
        starting Spark.  Default ``$FAQ_REMOTE``, then ``$SPARK_REMOTE``.

    Returns
    -------
    pyspark.sql.SparkSession
        A classic session or a Spark Connect one (:func:`is_connect`).

    Examples
    --------
    >>> spark = get_session()                      # the active session, or local[*]
    >>> spark.createDataFrame([(1, 2)], ["src", "dst"]).count()
    1
    """
    from pyspark.sql import SparkSession

    if _chosen is not None:
        return _chosen
    active = _active_connect_session() or SparkSession.getActiveSession()
    if active is not None:
        return active
    remote = remote or os.environ.get(REMOTE_ENV) or os.environ.get("SPARK_REMOTE")
    if remote:
        return connect_session(remote, config)
    check_java()
    _worker_environment(config)
    settings = dict(DEFAULT_CONFIG)
    settings["spark.driver.extraJavaOptions"] = quiet_log4j_option()
    settings.update(warm_daemon_config(master or DEFAULT_MASTER))
    settings.update(config or {})
    builder = SparkSession.builder.master(master or DEFAULT_MASTER).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if os.environ.get("FAQ_SPARK_VERBOSE"):
        session = builder.getOrCreate()
    else:
        # The JVM inherits our stderr when it starts and prints banners there
        # ("Using incubator modules", "Setting default log level") before any
        # log4j setting applies; start it with stderr pointed at /dev/null.
        # Failures still reach us as Python exceptions through py4j.
        with _stderr_silenced():
            session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def existing_session():
    """The session :func:`get_session` would return if one exists now, else None: starts nothing."""
    if _chosen is not None:
        return _chosen
    if "pyspark.sql" not in sys.modules:  # no session can exist before pyspark is loaded
        return None
    from pyspark.sql import SparkSession

    return _active_connect_session() or SparkSession.getActiveSession()


def session_for_driver_data():
    """The session for data the driver holds: the running (or chosen) one, else a :class:`DeferredSession`.

    A factor made from pandas or numpy in this process needs a session only
    if a step ends up on the executors; planning and in-process steps ask a
    deferred session what they need without starting Spark.  Nothing is
    imported to find out: without PySpark loaded no session can be running.
    Called where faq makes such factors on the user's behalf (the learning
    functions' lifted tables).

    >>> session = session_for_driver_data()
    >>> type(session).__name__ in ("DeferredSession", "SparkSession")
    True
    """
    if _chosen is not None:
        return _chosen
    if "pyspark.sql" in sys.modules:
        from pyspark.sql import SparkSession

        active = _active_connect_session() or SparkSession.getActiveSession()
        if active is not None:
            return active
    remote = os.environ.get(REMOTE_ENV) or os.environ.get("SPARK_REMOTE")
    return DeferredSession(get_session, master="" if remote else DEFAULT_MASTER, remote=remote,
                           settings=DEFAULT_CONFIG)


def _worker_environment(config: Mapping[str, str] | None = None) -> None:
    """Set the environment a classic session's JVM and Python workers start with.

    PySpark starts its Python workers with ``$PYSPARK_PYTHON`` as it is when
    the SparkContext starts (default ``python3`` on PATH), and reads no
    ``spark.pyspark.python`` given to a session built from Python: so that
    setting, when given, becomes ``PYSPARK_PYTHON``; else ``PYSPARK_PYTHON``
    is kept when set, and is this interpreter (which has faq and its
    dependencies) otherwise.  :mod:`faq.workers` checks the result before
    the first job that runs faq's Python on the workers.
    """
    # Keep Spark's "WARN Utils: hostname resolves to loopback" lines out of the output.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    chosen = (config or {}).get("spark.pyspark.python")
    if chosen:
        os.environ["PYSPARK_PYTHON"] = chosen
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def warm_daemon_config(master: str) -> dict[str, str]:
    """:data:`WARM_DAEMON` when the master is local (``local[*]``, ``local-cluster``) and its Python
    workers run this interpreter (``$PYSPARK_PYTHON``, set by :func:`_worker_environment`), which has faq;
    else nothing (a cluster's workers may lack faq: Spark's own daemon).

    Each worker is forked holding faq's task modules and the compiled loop, instead of importing and
    loading them in its first task.  R-MAT 16 and 18 feed-forward triangles forced onto the executors
    (``python -m bench.executor_breakdown --rounds 2 [--daemon]``, ``local[*]`` and ``local-cluster``,
    load 9-24): the executors' time over the driver's, median of eight runs, 1.76× with this daemon
    (``bench/results/executor_breakdown.json``) against 2.02× with Spark's (``..._before.json``).  A
    session's config may still set ``spark.python.daemon.module`` (``pyspark.daemon``: Spark's own) --
    needed where the workers are switched at run time (``spark.sql.execution.pyspark.python``) to a
    Python without faq: there no Python worker starts (faq's probe names the missing module).

    >>> warm_daemon_config("yarn")
    {}
    """
    if not master.strip().startswith("local") or os.environ.get("PYSPARK_PYTHON") != sys.executable:
        return {}
    return {WARM_DAEMON[0]: WARM_DAEMON[1]}


def connect_session(remote: str, config: Mapping[str, str] | None):
    """A Spark Connect client session on ``remote`` (a local faq serve's with its token, once its socket is
    proven the server's: else ``SERVE_PEER_UNPROVEN``), with faq's settings."""
    from pyspark.sql import SparkSession

    from faq import served

    try:
        import pyspark.sql.connect.session  # noqa: F401 - fails without grpcio & co.
    except ImportError as error:
        from faq.errors import FAQValueError

        raise FAQValueError(error_class="CONNECT_CLIENT_MISSING", remote=remote, error=error,
                            argument="remote") from error
    # PySpark's own builder, not the Connect class's: it also switches pyspark.sql.functions to
    # Connect Columns for this process (a process runs either classic or Connect PySpark).
    session = SparkSession.builder.remote(served.with_served_token(remote)).getOrCreate()  # never shown: a secret
    settings = {k: v for k, v in DEFAULT_CONFIG.items() if k in _RUNTIME_SETTINGS}
    settings.update(config or {})
    for key, value in settings.items():
        try:
            session.conf.set(key, value)
        except Exception:  # noqa: BLE001 - a static setting of the server's; it keeps its own
            pass
    return session


class DeferredSession:
    """A session made only when something needs Spark: what a command whose steps all run in-process never pays.

    It answers, without starting anything, what planning asks of a session --
    its settings (``conf.get``: those set on it, else the ones the session
    will start with), whether it is Spark Connect (:func:`is_connect`), its
    cores (:func:`default_parallelism`) -- and starts (or connects to) the
    real session, once, on any other use; settings set before that are
    applied to it, and ``on_start`` callbacks run with it.

    Parameters
    ----------
    open_session : callable
        Makes the real session (e.g. ``lambda: get_session(master=...)``).
    master : str
        The master the real session runs on (its server's, for Spark Connect):
        ``local[N]``, ``local[*]`` and ``local-cluster[n,c,m]`` give the cores
        without starting; other masters start the session when asked.
    remote : str, optional
        The Spark Connect URL, if the real session is a Connect client.
    settings : mapping, optional
        The settings the real session will have (e.g. :data:`DEFAULT_CONFIG`).

    Examples
    --------
    >>> opened = []
    >>> lazy = DeferredSession(lambda: opened.append(1) or "a session", master="local[3]",
    ...                        settings={"spark.driver.memory": "4g"})
    >>> lazy.conf.set("spark.faq.placement", "driver")
    >>> lazy.conf.get("spark.faq.placement"), lazy.conf.get("spark.driver.memory"), lazy.conf.get("x", None)
    ('driver', '4g', None)
    >>> default_parallelism(lazy), is_connect(lazy), lazy.started, opened
    (3, False, False, [])
    """

    def __init__(self, open_session, *, master: str, remote: Optional[str] = None,
                 settings: Optional[Mapping[str, str]] = None, on_start=()) -> None:
        self._open = open_session
        self._session = None
        self.master = master
        self.remote = remote
        self._settings = {"spark.master": master, **(settings or {})}
        self._changed: dict[str, Optional[str]] = {}  # set (a value) or unset (None) before the start
        self._on_start = list(on_start)
        self.conf = _DeferredConf(self)
        if remote:
            # PySpark builds Connect Columns once a remote session was asked for; Columns made before
            # the connection (planning) must be of that kind too.
            os.environ.setdefault("SPARK_CONNECT_MODE_ENABLED", "1")

    @property
    def started(self) -> bool:
        """Whether the real session exists (this object started it)."""
        return self._session is not None

    @property
    def cores(self) -> Optional[int]:
        """The cores of :attr:`master` when its URL says them, else None."""
        return master_cores(self.master)

    def session(self):
        """The real session, started (or connected) now if it was not yet."""
        if self._session is None:
            global _chosen
            chosen, _chosen = _chosen, None  # get_session() inside open_session must not answer this object
            try:
                session = self._open()
            finally:
                _chosen = chosen
            for key, value in self._changed.items():
                if value is None:
                    session.conf.unset(key)
                else:
                    session.conf.set(key, value)
            self._session = session
            for callback in self._on_start:
                callback(session)
        return self._session

    def when_started(self, callback) -> None:
        """Call ``callback(session)`` when the real session starts (now, if it has)."""
        if self._session is not None:
            callback(self._session)
        else:
            self._on_start.append(callback)

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and the like ask for dunders: not a use of Spark
            raise AttributeError(name)
        return getattr(self.session(), name)

    def __repr__(self) -> str:
        state = "started" if self.started else "not started"
        return f"DeferredSession({self.remote or self.master}, {state})"


class _DeferredConf:
    """``conf`` of a :class:`DeferredSession`: answered from its settings until the session starts."""

    def __init__(self, owner: DeferredSession) -> None:
        self._owner = owner

    def get(self, key: str, default=None):
        owner = self._owner
        if owner.started:
            return owner.session().conf.get(key, default)
        if key in owner._changed:
            value = owner._changed[key]
            return default if value is None else value
        return owner._settings.get(key, default)

    def set(self, key: str, value) -> None:
        if self._owner.started:
            self._owner.session().conf.set(key, value)
        else:
            self._owner._changed[key] = str(value)

    def unset(self, key: str) -> None:
        if self._owner.started:
            self._owner.session().conf.unset(key)
        else:
            self._owner._changed[key] = None


def real_session(session):
    """``session`` itself, or the real session of a :class:`DeferredSession` (started now if it was not).

    Call it before building Column expressions for a session that may be
    deferred: classic PySpark builds a Column only once a SparkContext runs.
    """
    return session.session() if isinstance(session, DeferredSession) else session


_LOCAL_MASTER = re.compile(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")
_CLUSTER_MASTER = re.compile(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]$")


def master_cores(master: str, task_cpus: int = 1) -> Optional[int]:
    """The cores a local master's URL gives its tasks, or None for a cluster manager's; with
    ``task_cpus`` (Spark's ``spark.task.cpus``) above 1, how many tasks run at once (each worker of a
    ``local-cluster`` fits its own cores' share).

    >>> [master_cores(m) for m in ("local", "local[4]", "local[4,2]", "local-cluster[2,1,1024]", "yarn")]
    [1, 4, 4, 2, None]
    >>> master_cores("local[*]") == (os.cpu_count() or 1)
    True
    >>> [master_cores(m, task_cpus=2) for m in ("local[4]", "local[3]", "local-cluster[2,1,1024]", "local-cluster[2,3,1024]")]
    [2, 1, 0, 2]
    """
    task_cpus = max(int(task_cpus), 1)
    found = _LOCAL_MASTER.match(master.strip())
    if found:
        given = found.group(1)
        cores = 1 if given is None else (os.cpu_count() or 1) if given == "*" else int(given)
        return max(cores // task_cpus, 1)
    found = _CLUSTER_MASTER.match(master.strip())
    return int(found.group(1)) * (int(found.group(2)) // task_cpus) if found else None


def default_parallelism(session) -> int:
    """How many tasks keep every core busy: Spark's default parallelism (classic), else the shuffle partitions.

    A :class:`DeferredSession` not started yet answers its master's cores, when the URL says them.
    """
    if isinstance(session, DeferredSession) and not session.started:
        if session.remote is None:  # classic: the master's cores, as Spark's default parallelism is locally
            return session.cores if session.cores is not None else default_parallelism(session.session())
        # Connect: its settings answer the same as the server's would (it starts with faq's settings)
    elif not is_connect(session):
        return int(session.sparkContext.defaultParallelism)
    value = session.conf.get("spark.default.parallelism", None) or session.conf.get("spark.sql.shuffle.partitions")
    return max(1, int(value))


def stop_session() -> None:
    """Stop the session faq uses, if any (a Spark Connect client only disconnects)."""
    from pyspark.sql import SparkSession

    global _chosen
    active = _chosen or _active_connect_session() or SparkSession.getActiveSession()
    _chosen = None
    if active is not None:
        active.stop()


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Point file descriptor 2 at /dev/null for the duration of the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def quiet_log4j_option() -> str:
    """A ``-Dlog4j2.configurationFile`` option pointing at faq's quiet log4j2 config."""
    path = os.path.join(os.path.dirname(__file__), "log4j2-quiet.properties")
    return f"-Dlog4j2.configurationFile=file:{path}"


# --- caches and lineage -------------------------------------------------------

_CONSTRAINTS = "spark.sql.constraintPropagation.enabled"


def checkpoint(df: "DataFrame", eager: bool = True) -> "DataFrame":
    """``df.localCheckpoint(eager)``, keeping no inferred constraints in the checkpoint.

    ``eager=False`` cuts the plan now and materialises the rows in the first
    job that reads them (no job of its own).

    A local checkpoint cuts the lineage but its plan (``LogicalRDD``) keeps the
    *constraints* Spark inferred for the original plan.  Across iterations and
    update batches those constraints nest (a union combines its inputs'
    constraints with ``Or``, and each checkpoint carries the previous ones), so
    their size -- and the optimiser's time -- doubled with every batch of a
    maintained fixpoint.  Constraint propagation is therefore switched off for
    the optimisation and execution of the checkpointed query (it only infers
    extra ``isnotnull`` filters), and the previous setting restored.
    """
    spark = df.sparkSession
    before = spark.conf.get(_CONSTRAINTS, None)
    spark.conf.set(_CONSTRAINTS, "false")
    try:
        return df.localCheckpoint(eager=eager)
    finally:
        if before is None:
            spark.conf.unset(_CONSTRAINTS)
        else:
            spark.conf.set(_CONSTRAINTS, before)


def checkpoint_observed(df: "DataFrame", metrics: Mapping[str, "Column"]) -> tuple["DataFrame", dict]:
    """``checkpoint(df)`` and aggregate ``metrics`` (name -> Column) over its rows: (checkpoint, values).

    A classic session computes the metrics on the way (``observe``: one job);
    Spark Connect does not return a checkpoint's observed metrics, so they are
    aggregated over the materialised checkpoint (a second, cheap job).

    >>> from pyspark.sql import functions as F
    >>> kept, seen = checkpoint_observed(get_session().range(5), {"odd": F.count(F.when(F.col("id") % 2 == 1, 1))})
    >>> seen, kept.count()
    ({'odd': 2}, 5)
    >>> release(kept)
    """
    from pyspark.sql import Observation

    if is_connect(df.sparkSession):
        kept = checkpoint(df)
        row = kept.agg(*[column.alias(name) for name, column in metrics.items()]).first()
        return kept, {name: row[name] for name in metrics}
    observation = Observation()
    kept = checkpoint(df.observe(observation, *[column.alias(name) for name, column in metrics.items()]))
    return kept, dict(observation.get)


def release(df: Optional["DataFrame"]) -> None:
    """Free what ``df`` holds: its cache, and the blocks of a local checkpoint.

    ``DataFrame.unpersist`` does not free a local checkpoint; its blocks
    belong to the RDD under the checkpoint's ``LogicalRDD`` plan, which is
    unpersisted here (without that they would wait for the JVM's garbage
    collector).  Best effort: a stopping session has nothing left to free.
    """
    if df is None:
        return
    try:
        df.unpersist()
        if is_connect(df.sparkSession):
            # A Connect checkpoint's blocks are released by the server when the client drops the DataFrame.
            return
        plan = df._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() == "LogicalRDD":
            plan.rdd().unpersist(False)
    except Exception:  # noqa: BLE001
        pass
