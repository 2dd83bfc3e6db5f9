"""Spark Connect: the public jobs and the CLI against a local server started by ``faq serve``.

The jobs run in a child pytest (tests/connect_jobs.py) with ``FAQ_TEST_REMOTE``
pointing at the server: a Python process runs either classic or Connect
PySpark, and this one holds the suite's classic session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from faq.cli import server as serve

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """A Spark Connect server in a background process (faq serve), stopped at the end."""
    port = _free_port()
    state = serve.start(port, master="local[2]")
    try:
        yield state
    finally:
        serve.stop(port)
    assert serve.status(port) is None


def _env(**extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def test_public_jobs_as_a_connect_client(server):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/connect_jobs.py"],
                         cwd=ROOT, capture_output=True, text=True, env=_env(FAQ_TEST_REMOTE=server["url"]), timeout=1200)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in summary and "skipped" not in summary, summary


def test_cli_runs_on_the_server(server):
    """faq triangles --remote: no Spark of its own, the same count (the token found in faq serve's
    directory); faq serve --status sees the server."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "faq", "triangles", str(DATA / "email-Eu-core.txt.gz"),
                          "--remote", server["url"], "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["count"] == 105461
    status = subprocess.run([sys.executable, "-m", "faq", "serve", "--port", str(server["port"]), "--status", "--json"],
                            capture_output=True, text=True, env=env, timeout=60)
    shown = json.loads(status.stdout)
    assert shown["running"] is True and "token" not in shown  # the file holding it is named, never the token
    assert shown["token_file"] == serve.state_path(server["port"])
