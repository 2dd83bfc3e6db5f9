"""The Spark UI names faq's jobs: every Spark job a public job runs carries a description naming the
job and its step, read back from the UI's REST API of a session with the UI on (Spark Connect's tags:
tests/connect_jobs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faq import spark_ui

ROOT = Path(__file__).parent.parent

CLIENT = r"""
import json, socket, sys, urllib.request
import faq
from faq.spark import get_session

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
spark = get_session(master="local[1]", config={"spark.ui.enabled": "true", "spark.ui.port": str(port)})
spark.sparkContext.setJobDescription("the user's own")
edges = spark.createDataFrame([(1, 2), (2, 3), (1, 3), (3, 4), (4, 1)], ["src", "dst"])
before = len(json.load(urllib.request.urlopen(
    f"http://127.0.0.1:{port}/api/v1/applications/{spark.sparkContext.applicationId}/jobs")))
answers = [faq.query("count() := e(a,b), e(b,c), e(a,c)", e=edges, placement="executors").scalar(),
           faq.count_triangles(edges).count,
           faq.motifs(edges, "(a)->(b); (b)->(c)", count=True).count]
tri = faq.maintain("count() := e(a,b), e(b,c), e(a,c)", e=edges)
tri.apply(e=spark.createDataFrame([(2, 4, 1)], ["src", "dst", "value"]))
answers.append(tri.scalar())
jobs = json.load(urllib.request.urlopen(
    f"http://127.0.0.1:{port}/api/v1/applications/{spark.sparkContext.applicationId}/jobs"))
ours = sorted(jobs, key=lambda job: job["jobId"])[before:]
print(json.dumps({"answers": answers, "descriptions": [job.get("description") for job in ours],
                  "after": spark.sparkContext.getLocalProperty("spark.job.description")}))
"""


def test_every_spark_job_of_a_public_job_is_described_in_the_ui(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", CLIENT], capture_output=True, text=True, env=env, timeout=600,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["answers"] == [1, 2, 6, 2]  # directed: 1→2→3; undirected: also 1-3-4; 2-paths; +2→4
    descriptions = result["descriptions"]
    assert descriptions, "no Spark job ran"
    # every job names the faq job, and the query's steps name the step
    assert all(d is not None and d.startswith("faq ") for d in descriptions), descriptions
    assert any(d.startswith("faq query count() := e(a,b), e(b,c), e(a,c): step 1 of 1, eliminate")
               for d in descriptions), descriptions
    assert any(d.startswith("faq count_triangles") for d in descriptions), descriptions
    assert any(d.startswith("faq maintained query: batch 1") for d in descriptions), descriptions
    assert result["after"] == "the user's own"  # restored after each faq call


def test_descriptions_are_cut_and_nested_jobs_keep_the_outer_name():
    with spark_ui.job("query " + "x" * 300):
        with spark_ui.job("inner"):
            line = spark_ui.description("step 1 of 1")
    assert line.startswith("faq query xxx") and line.endswith("...") and len(line) == spark_ui.MAX_LENGTH
    assert spark_ui.description("step") == "faq: step"


@pytest.mark.parametrize("text", ["a, b", "no comma"])
def test_connect_tags_hold_no_comma(text):
    assert "," not in spark_ui.connect_tag(text)
