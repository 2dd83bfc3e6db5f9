"""The workers' Python: the probe before faq's first Python job, its catalog error, a packed environment.

Pure tests check what the driver concludes from a report and from a failed
probe's text.  Spark tests point the suite's session at other worker
interpreters through ``spark.sql.execution.pyspark.python`` (a runtime
setting) and restore it: a fresh virtual environment without pip (the
driver's Python, no numpy, pyarrow or numba), a path that does not exist.
tests/test_workers_cluster.py packs faq's worker environment and ships it
to a ``local-cluster`` executor whose default Python lacks faq.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import faq
from faq.errors import FAQRuntimeError, InvalidArgumentError, WorkerEnvironmentError
from faq.settings import CHECK_CONF
from faq.workers import (
    PYTHON_CONF,
    TASK_MODULE,
    WorkerReport,
    _probe,
    _shipped_probe,
    driver_report,
    ensure_workers,
    failure_reason,
    pack_environment,
    problems,
    worker_distributions,
)
from tests.helpers import bare_python as make_bare_python

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """The driver's Python without faq's dependencies: a fresh virtual environment without pip."""
    return make_bare_python(tmp_path_factory.mktemp("bare") / "env")


@pytest.fixture
def worker_python(spark):
    """Sets the session's workers' interpreter for one test; unset afterwards."""
    def use(path: str) -> None:
        spark.conf.set(PYTHON_CONF, path)

    yield use
    spark.conf.unset(PYTHON_CONF)


# --- what the driver concludes (no Spark) ---------------------------------------------------


def test_problems_name_each_missing_or_mismatched_piece():
    driver = WorkerReport("/venv/bin/python", "3.11.7", {"faq": "0.1.0", "numpy": "2.4", "pyarrow": "26",
                                                         "pandas": "2.3", "numba": "0.68"})
    assert problems(driver, driver) == []
    bare = WorkerReport("/usr/bin/python3", "3.11.2", {"faq": "0.1.0"},
                        {"numpy": "ModuleNotFoundError: No module named 'numpy'",
                         "pyarrow": "ModuleNotFoundError: No module named 'pyarrow'",
                         "pandas": "ModuleNotFoundError: No module named 'pandas'",
                         TASK_MODULE: "ModuleNotFoundError: No module named 'numpy'"})
    found = problems(bare, driver)
    assert found[:2] == ["numpy: ModuleNotFoundError: No module named 'numpy'",
                         "pyarrow: ModuleNotFoundError: No module named 'pyarrow'"]
    assert any(TASK_MODULE in line for line in found)
    assert not any(line.startswith("pandas") for line in found)  # reported, not required: the tasks are Arrow
    # numba is required exactly when the driver has it (its plans then run the compiled loop)
    no_numba = WorkerReport("/w/python", "3.11.7", {"faq": "0.1.0", "numpy": "2", "pyarrow": "26"},
                            {"numba": "ModuleNotFoundError: No module named 'numba'"})
    assert problems(no_numba, driver) == ["numba: ModuleNotFoundError: No module named 'numba'"]
    assert problems(no_numba, WorkerReport("/venv/bin/python", "3.11.1", {"faq": "0.1.0"})) == []
    other = WorkerReport("/w/python", "3.12.1", {"faq": "0.0.9", "numpy": "2", "pyarrow": "26", "numba": "0.6"})
    assert problems(other, driver) == [
        "Python 3.12 on the workers, 3.11 on the driver (PySpark needs the same major.minor)",
        "faq 0.0.9 on the workers, 0.1.0 on the driver",
    ]


def test_a_failed_probe_job_is_read_for_its_reason():
    mismatch = ("pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in worker "
                "has different version: 3.10 than that in driver: 3.11, PySpark cannot run with different minor "
                "versions.\nPlease check environment variables PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON")
    assert failure_reason(mismatch).startswith("[PYTHON_VERSION_MISMATCH] Python in worker has different version")
    arrow = ('  File "pyspark.zip/pyspark/worker.py", line 1920, in read_udfs\n    import pyarrow as pa\n'
             "ModuleNotFoundError: No module named 'pyarrow'\n SQLSTATE: 38000")
    assert failure_reason(arrow) == "ModuleNotFoundError: No module named 'pyarrow'"
    assert failure_reason("org.apache.spark.SparkException: Job aborted due to stage failure: lost") is None


def test_the_probe_travels_by_value_and_runs_without_faq(bare_python, tmp_path):
    """Unpickled and run by a Python without faq, numpy or pyarrow, with only pyspark's own zips on its path
    (what a Spark worker has), the probe reports that Python and what it lacks."""
    import pyspark
    from pyspark import cloudpickle

    zips = sorted((Path(pyspark.__file__).parent / "python" / "lib").glob("*.zip"))
    if not zips:
        pytest.skip("this pyspark has no python/lib zips")
    (tmp_path / "probe.pkl").write_bytes(cloudpickle.dumps(_shipped_probe(["faq", "numpy"], ["pandas"])))
    code = "import sys; from pyspark import cloudpickle; print(cloudpickle.loads(open('probe.pkl', 'rb').read())(0))"
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": os.pathsep.join(map(str, zips))}
    run = subprocess.run([bare_python, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    report = WorkerReport.from_json(run.stdout)
    assert report.executable == bare_python and report.versions == {} and report.where is None
    assert report.errors == {name: f"ModuleNotFoundError: No module named {name!r}" for name in ("faq", "numpy", "pandas")}
    # in this process, with everything
    here = WorkerReport.from_json(_probe(imported=("faq", "numpy"), looked_up=("pandas",)))
    assert here.executable == sys.executable and here.versions["faq"] == faq.__version__
    assert set(here.versions) == {"faq", "numpy", "pandas"} and here.where == str(Path(faq.__file__).parent)


def test_the_error_says_what_is_wrong_and_how_to_fix_it():
    err = WorkerEnvironmentError(executable="/usr/bin/python3", python="3.11.2",
                                 problems=["pyarrow: ModuleNotFoundError: No module named 'pyarrow'"],
                                 driver="/home/me/venv/bin/python")
    assert isinstance(err, FAQRuntimeError) and isinstance(err, RuntimeError)
    text = str(err)
    assert text.startswith("[WORKER_ENVIRONMENT] the Spark workers' Python (/usr/bin/python3, Python 3.11.2)")
    for fix in ("PYSPARK_PYTHON=/home/me/venv/bin/python", "spark.sql.execution.pyspark.python",
                "spark.archives=faq_env.tar.gz#environment", "./environment/bin/python", "addArtifacts"):
        assert fix in text
    assert err.parameters["problems"] == ["pyarrow: ModuleNotFoundError: No module named 'pyarrow'"]


def test_pack_environment_refuses_what_spark_cannot_unpack(tmp_path):
    with pytest.raises(InvalidArgumentError) as info:
        pack_environment(str(tmp_path / "env.tar.bz2"))
    assert info.value.parameters["argument"] == "output"
    names = worker_distributions()
    assert {"faq", "numpy", "pyarrow", "numba", "scipy", "networkx"} <= set(names)
    assert not {"pyspark", "py4j"} & set(names)  # Spark puts its own on the workers' path


def test_sessions_faq_starts_run_their_workers_on_the_chosen_python(monkeypatch):
    """PySpark reads only $PYSPARK_PYTHON (at the SparkContext's start): get_session sets it to this
    interpreter, keeps one the user set, and makes a spark.pyspark.python given in config= the variable."""
    from faq.spark import _worker_environment

    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    _worker_environment(None)
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/team/bin/python")
    _worker_environment({"spark.sql.shuffle.partitions": "4"})
    assert os.environ["PYSPARK_PYTHON"] == "/opt/team/bin/python"
    _worker_environment({"spark.pyspark.python": "./environment/bin/python"})
    assert os.environ["PYSPARK_PYTHON"] == "./environment/bin/python"


# --- the probe on the suite's session -----------------------------------------------------


def test_the_session_workers_pass_and_the_answer_is_kept(spark, monkeypatch):
    report = ensure_workers(spark)
    assert problems(report) == [] and report.versions["faq"] == faq.__version__
    assert report.python.split(".")[:2] == driver_report().python.split(".")[:2]

    def no_second_job(_):
        raise AssertionError("the probe ran again")

    monkeypatch.setattr("faq.workers.probe_workers", no_second_job)
    assert ensure_workers(spark) is report


def test_workers_without_the_packages_fail_before_the_job(spark, bare_python, worker_python):
    worker_python(bare_python)
    spark.conf.set("spark.faq.placement", "executors")  # the join would run in the workers' Python
    edges = spark.createDataFrame([(1, 2), (2, 3), (1, 3), (3, 4)], ["src", "dst"])
    try:
        with pytest.raises(WorkerEnvironmentError) as info:
            faq.count_triangles(edges)
    finally:
        spark.conf.unset("spark.faq.placement")
    err = info.value
    assert err.parameters["executable"] == bare_python and err.parameters["python"] == driver_report().python
    shown = "; ".join(err.parameters["problems"])
    assert "No module named 'numpy'" in shown and "No module named 'pyarrow'" in shown
    assert f"PYSPARK_PYTHON={sys.executable}" in str(err)
    # turned off, the probe is not run (the job would then fail inside the workers)
    spark.conf.set(CHECK_CONF, "false")
    try:
        assert ensure_workers(spark) is None
    finally:
        spark.conf.unset(CHECK_CONF)


def test_a_worker_python_that_cannot_start_is_named(spark, tmp_path, worker_python):
    missing = str(tmp_path / "no-such-env" / "bin" / "python")
    worker_python(missing)
    with pytest.raises(WorkerEnvironmentError) as info:
        ensure_workers(spark)
    assert info.value.parameters["executable"] == missing and info.value.parameters["python"] == "unknown"
    assert info.value.parameters["problems"][0].startswith(f'Cannot run program "{missing}"')


def test_a_local_session_forks_its_workers_from_faqs_warm_daemon(spark):
    """faq.get_session on a local master whose workers run this interpreter sets faq's daemon
    (faq.spark.warm_daemon_config): a task's worker is a child of `python -m faq.workers`, and it holds
    faq's task module before the task imports anything."""
    from faq.spark import WARM_DAEMON, warm_daemon_config

    assert warm_daemon_config("local[2]") == {WARM_DAEMON[0]: WARM_DAEMON[1]}
    assert warm_daemon_config("spark://host:7077") == {}
    if spark.conf.get(WARM_DAEMON[0], None) != WARM_DAEMON[1]:
        pytest.skip("this run's session was started with another daemon (FAQ_TEST_MASTER or config)")

    def parent(batches):
        import os as worker_os
        import sys as worker_sys

        import pyarrow as worker_pa

        with open(f"/proc/{worker_os.getppid()}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode()
        held = TASK_MODULE in worker_sys.modules
        for _ in batches:
            pass
        yield worker_pa.RecordBatch.from_pydict({"command": [command], "held": [held]})

    rows = spark.range(1, numPartitions=1).mapInArrow(parent, "command string, held boolean").collect()
    assert "-m faq.workers" in rows[0]["command"] and rows[0]["held"], rows
