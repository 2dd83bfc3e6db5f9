"""Incremental views in Spark Declarative Pipelines: a ``faq`` sink declared in one call.

A pipeline (``spark-pipelines run --spec spark-pipeline.yml``, Spark 4.1+)
is declared in Python definitions files with :mod:`pyspark.pipelines`.  Its
materialized views are recomputed in full on every run; a ``faq`` sink
(:mod:`faq.data_sink`) keeps an answer current from a stream of changes
instead, by delta rules, so that a run costs the changes, not the history.
:func:`maintained_sink` declares one, inside a definitions file::

    from pyspark import pipelines as dp
    from faq.pipelines import maintained_sink

    @dp.table
    def edge_changes():                      # rows src, dst, diff (+1 insert, -1 delete)
        return spark.readStream.schema("src bigint, dst bigint, diff bigint").json(CHANGES)

    maintained_sink("triangle_count", source="edge_changes", job="triangles", state=STATE)

    @dp.materialized_view
    def triangles():                         # the answer, as a table of the pipeline
        return spark.read.format("faq").load(STATE)

It registers the ``faq`` data source with the pipeline's session (Spark
Connect: a Python data source is registered per session, and the sink's flow
runs in this one), makes the state when there is none (so that a view reading
it can be analysed when the graph is registered, before any run), declares
``dp.create_sink(name, format="faq", options=...)`` and an
``@dp.append_flow`` from ``source`` into it.  The sink's checkpoint is the
pipeline's own (under its ``storage``): exactly once across runs, as
``df.writeStream.format("faq")`` is.

What Spark's pipelines do not do (as of pyspark 4.3.0)
------------------------------------------------------
*No dependency on a sink.*  A pipeline orders its flows by the datasets
they read, and nothing reads a sink: a view that reads the ``faq`` state
may run before, during or after the sink's flow in the same run.  Refresh
it after the run (``spark-pipelines run --refresh triangles``, which runs
that view's flow only) to read the answer the run committed.

*The run's event stream ends in an error.*  A Python data source's
workers send accumulator updates (``__python_accumulator__``) with the
command's results, which the CLI's event loop refuses: ``[UNKNOWN_RESPONSE]
Unknown response: Plan observed(__python_accumulator__=...)`` after ``Run
is COMPLETED``, and the command exits 1 (SPARK-59135; apache/spark#58435
lets the command stream carry them).  :func:`tolerate_accumulator_updates`
(called by :func:`maintained_sink`) makes the CLI's client skip those
updates, which its own fetch loop has already applied; any other unexpected
response is still refused.

Examples
--------
>>> sink_options_of("triangles", state="/tmp/t")
{'state': '/tmp/t', 'job': 'triangles'}
>>> sink_options_of("motif", state="/tmp/m", pattern="(a)->(b); (b)->(c)", keep_changes=10)
{'state': '/tmp/m', 'job': 'motif', 'pattern': '(a)->(b); (b)->(c)', 'keepChanges': '10'}
>>> sink_options_of(None, state="/tmp/q", query="deg(a) := edge(a,b)")
{'state': '/tmp/q', 'query': 'deg(a) := edge(a,b)'}
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Mapping, Optional

from faq.data_sink import JOBS, sink_options
from faq.data_source import register_data_source

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["maintained_sink", "sink_options_of", "tolerate_accumulator_updates"]

#: The observed-metrics name under which Python workers send their accumulator updates.
ACCUMULATOR_METRICS = "__python_accumulator__"


def sink_options_of(job: Optional[str], *, state: str, query: Optional[str] = None, pattern: Optional[str] = None,
                    keep_changes: Optional[int] = None, options: Optional[Mapping[str, Any]] = None
                    ) -> dict[str, str]:
    """The ``faq`` sink's options (strings, as a pipeline's sink takes them), checked as the sink checks them.

    Parameters
    ----------
    job : str, optional
        ``"triangles"``, ``"motif"`` (with ``pattern``) or ``"truss"``; None
        for a maintained ``query``.
    state : str
        The state directory.
    query, pattern : str, optional
        The maintained query's text, or the motif's pattern.
    keep_changes : int, optional
        Keep the change of each version, the last ``keep_changes``
        (``keepChanges``): a ``spark.read(Stream).format("faq").option("changes",
        "true")`` reads them.
    options : mapping, optional
        Further sink options (``factor``, ``factor_column``, ``semiring``).

    Raises
    ------
    InvalidArgumentError, UnsupportedSinkJobError
        As :func:`faq.data_sink.sink_options` (no query nor job, a motif
        without its pattern, an unknown option, a job the sink does not keep).
    """
    out = {"state": str(state)}
    if job is not None:
        out["job"] = str(job)
    for key, value in (("query", query), ("pattern", pattern), ("keepChanges", keep_changes)):
        if value is not None:
            out[key] = str(value)
    out.update({str(k): str(v) for k, v in (options or {}).items()})
    sink_options({**out, "checkpointLocation": "(the pipeline's)"})  # the pipeline gives the checkpoint
    return out


def maintained_sink(name: str, *, source: str, state: str, job: Optional[str] = None, query: Optional[str] = None,
                    pattern: Optional[str] = None, keep_changes: Optional[int] = None,
                    options: Optional[Mapping[str, Any]] = None, spark: Optional["SparkSession"] = None) -> str:
    """Declare a ``faq`` sink ``name`` kept current from the streaming dataset ``source`` (in a definitions file).

    Parameters
    ----------
    name : str
        The sink's name in the pipeline; its flow is ``<name>_flow``.
    source : str
        A streaming table or view of the pipeline whose rows are changes as
        the sink takes them (:mod:`faq.data_sink`): for the graph jobs
        ``src``, ``dst`` and an optional ``diff`` (+1/-1); for a query the
        factor's columns and ``value``.
    state : str
        The state directory (one the pipeline's server reaches).  Made now
        when there is none and ``job`` is a graph job (an empty graph, made
        without Spark); a query's state is made at its first micro-batch.
        With ``keep_changes``, a state that keeps no change log starts one
        now (from its next version).
    job, query, pattern, keep_changes, options
        What the sink maintains: :func:`sink_options_of`.
    spark : SparkSession, optional
        The pipeline's session (a definitions file's ``spark``); default the
        active one.

    Returns
    -------
    str
        ``state``, to read the answer with ``spark.read.format("faq").load(state)``.

    Examples
    --------
    A definitions file of a pipeline (``spark-pipelines run`` imports it, with
    ``spark`` set; the suite runs one in tests/test_pipelines.py)::

        maintained_sink("triangle_count", source="edge_changes", job="triangles", state="/data/triangles")

        @dp.materialized_view
        def triangles():
            return spark.read.format("faq").load("/data/triangles")
    """
    from pyspark import pipelines as dp
    from pyspark.sql import SparkSession

    session = spark if spark is not None else SparkSession.active()
    options = sink_options_of(job, state=state, query=query, pattern=pattern, keep_changes=keep_changes,
                              options=options)
    register_data_source(session)
    tolerate_accumulator_updates()
    _make_empty_state(sink_options({**options, "checkpointLocation": "(the pipeline's)"}))
    dp.create_sink(name, format="faq", options=options)

    @dp.append_flow(target=name, name=f"{name}_flow")
    def _changes() -> Any:
        return session.readStream.table(source)

    return state


def _make_empty_state(spec: Any) -> None:
    """A graph job's state over the empty graph when ``spec.state`` holds none, keeping its changes if asked.

    Its readers can then be analysed when the graph is registered: the
    answer's schema, and a read of changes, which needs the log to exist.
    """
    from faq.data_sink_start import empty_tracker, empty_truss
    from faq.incremental.change_log import keep_changes, keeps_changes
    from faq.incremental.store import Store

    if JOBS[spec.job] != "query" and not Store(spec.state).exists():
        made = empty_truss(spec.state) if JOBS[spec.job] == "truss" else empty_tracker(spec.text, spec.state)
        made.close()
    if spec.keep is not None and Store(spec.state).exists() and keeps_changes(spec.state) is None:
        keep_changes(spec.state, spec.keep)  # from the next version on (the sink would, before its next batch)


def tolerate_accumulator_updates() -> bool:
    """Let a Spark Connect command stream carry Python accumulator updates (SPARK-59135); True if it was needed.

    pyspark 4.1-4.3's ``SparkConnectClient.execute_command_as_iterator``
    raises ``UNKNOWN_RESPONSE`` on any response that is not a command
    result, and a Python data source's workers send their accumulator
    updates as observed metrics named ``__python_accumulator__`` -- so a
    pipeline with a Python sink or source ends, after ``Run is COMPLETED``,
    with that error and exit status 1.  This replaces the method with one
    that skips exactly those updates (the fetch loop beneath has applied
    them already) and refuses anything else as before.  A pyspark whose
    method no longer refuses them is left alone.  Idempotent.
    """
    from pyspark.errors import PySparkValueError
    from pyspark.sql.connect.client.core import PlanObservedMetrics, SparkConnectClient

    current = SparkConnectClient.execute_command_as_iterator
    if getattr(current, "_faq_tolerant", False):
        return True
    try:
        source = inspect.getsource(current)
    except (OSError, TypeError):
        return False
    if "UNKNOWN_RESPONSE" not in source or "isinstance(response, dict)" not in source or "ObservedMetrics" in source:
        return False  # not the method that refuses them (a pyspark with the fix, or one unknown here)

    def execute_command_as_iterator(self: Any, command: Any, observations: Optional[dict] = None) -> Any:
        request = self._execute_plan_request_with_metadata()
        self._set_command_in_plan(request.plan, command)
        for response in self._execute_and_fetch_as_iterator(request, observations or {}):
            if isinstance(response, dict):
                yield response
            elif not (isinstance(response, PlanObservedMetrics) and response.name == ACCUMULATOR_METRICS):
                raise PySparkValueError(errorClass="UNKNOWN_RESPONSE", messageParameters={"response": str(response)})

    execute_command_as_iterator._faq_tolerant = True  # type: ignore[attr-defined]
    execute_command_as_iterator.__doc__ = current.__doc__
    SparkConnectClient.execute_command_as_iterator = execute_command_as_iterator
    return True
