"""A packed environment shipped to executors whose Python lacks faq (``spark.archives``).

:func:`faq.workers.pack_environment` packs faq's worker environment with
venv-pack; a child process (tests/workers_cluster_job.py) starts
``local-cluster[1,1,1024]`` with ``PYSPARK_PYTHON`` a Python without faq and
the archive in ``spark.archives``: the probe's error first, then, with the
workers on ``./environment/bin/python``, SNAP's triangle count of
email-Eu-core.  A file of its own so that ``--dist loadfile`` can run it
beside tests/test_workers.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from faq.workers import pack_environment
from tests.helpers import bare_python

ROOT = Path(__file__).resolve().parent.parent
EMAIL_EU_CORE = ROOT / "tests" / "data" / "email-Eu-core.txt.gz"
EMAIL_EU_CORE_TRIANGLES = 105461  # SNAP's published count (tests/data/graphs-MANIFEST.tsv)
HAS_VENV_PACK = importlib.util.find_spec("venv_pack") is not None


@pytest.mark.skipif(not HAS_VENV_PACK, reason="venv-pack is not installed (pip install 'faq[workers]')")
def test_a_packed_environment_runs_the_job_on_executors_without_faq(tmp_path):
    """local-cluster[1,1,1024] with PYSPARK_PYTHON a Python without faq: the count fails with the probe's
    error; with spark.archives=<packed>#environment and the workers on ./environment/bin/python, the
    count is SNAP's.  Measured on two cores shared with other work: 3-5 s of packing (level 0: no
    compression) and 85-135 s in the child, most of it the cluster's start and the archive (about
    650 MB) copied and unpacked by the driver and by the executor."""
    bare = bare_python(tmp_path / "bare")
    began = time.perf_counter()
    archive = pack_environment(str(tmp_path / "faq_env.tar.gz"), compress_level=0)
    packed = time.perf_counter() - began
    try:
        names = tarfile.open(archive).getnames()
        site = "lib/python%d.%d/site-packages" % sys.version_info[:2]
        assert {"bin/python", f"{site}/faq/__init__.py", f"{site}/numpy/__init__.py"} <= set(names)
        assert not any("__editable__" in n for n in names)  # faq's files, not a link to this checkout
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # executors find faq only in the archive
        run = subprocess.run([sys.executable, str(ROOT / "tests" / "workers_cluster_job.py"), archive, bare,
                              str(EMAIL_EU_CORE)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    finally:
        os.remove(archive)  # about 650 MB; pytest keeps the temporary directories of its last runs
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["master"] == "local-cluster[1,1,1024]"
    error = found["error"]
    assert error["class"] == "WorkerEnvironmentError" and error["error_class"] == "WORKER_ENVIRONMENT"
    assert error["executable"] == bare and "No module named 'pyarrow'" in "; ".join(error["problems"])
    shipped = found["shipped"]
    assert shipped["executable"].endswith("/environment/bin/python") and shipped["errors"] == {}
    assert "/environment/lib/" in shipped["where"]  # faq imported from the archive on the executor
    assert found["placements"] == ["executors"] and found["count"] == EMAIL_EU_CORE_TRIANGLES
    print(f"packed in {packed:.1f} s; child: {found}")
