"""faq as users install it: a wheel built from the repository, installed into a clean virtual environment.

Once for the module (25 s on two idle cores with pip's cache warm, up to 45 s
beside the rest of the suite: the build 2-3 s, the install 13-25 s, the checks
5-15 s, most of it a Spark session):

* the wheel is built with ``pip wheel`` (build isolation: pip fetches the
  setuptools ``pyproject.toml`` asks for) from a copy of what a build reads
  -- ``pyproject.toml``, ``README.md``, ``LICENSE`` and ``faq/`` -- so the
  build writes no ``build/`` or ``*.egg-info`` into the clone, and a stale
  ``build/lib`` cannot slip a deleted module into the wheel;
* a fresh virtual environment (:func:`tests.helpers.bare_python`: no pip, no
  system site-packages) gets it with ``pip --python ... install``, its
  dependencies resolved from the package index (or pip's cache), with
  ``--no-compile``: Python compiles what the checks import when they import
  it, instead of pip compiling all of pyspark, scipy, ... ahead (13 s for
  the install instead of 37 s, measured on a loaded machine); the
  environment (1.3 GB) is deleted afterwards;
* from a folder outside the repository (the source tree is not importable
  there), the installed ``faq`` command counts the triangles of SNAP's
  email-Eu-core (what ``make demo`` prints first), and the installed
  interpreter imports faq from the new environment and answers a triangle
  count and a query (a Spark job, with the installed pyspark and JVM).

A test here is skipped only when the package index cannot be reached (pip
says so, or its page of pip cannot be read); any other failure of the build
or the install fails it.
Nothing is written inside the repository, so the module runs beside any other
(``pytest -n 2 --dist loadfile``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import urllib.request
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import pytest

from tests.helpers import bare_python

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
#: What a build of the wheel and the sdist reads (the rest, if present, is copied too).
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "faq")
OPTIONAL_BUILD_INPUTS = ("setup.py", "setup.cfg", "MANIFEST.in")
#: SNAP's published count of email-Eu-core's undirected triangles (make demo's first line).
EMAIL_EU_CORE_TRIANGLES = 105461
#: pip's words when the package index cannot be reached (then the tests skip, not fail).
UNREACHABLE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
               "Name or service not known", "Network is unreachable", "ConnectTimeoutError", "ProxyError",
               "Max retries exceeded")
DEFAULT_INDEX = "https://pypi.org/simple"

# The environment of everything run in the new virtual environment: nothing that points back at the
# repository's Python or Spark (faq.spark sets PYSPARK_PYTHON in a process that started a session).
_LEAKS = ("PYTHON", "PYSPARK_", "SPARK_", "FAQ_", "NUMBA_", "VIRTUAL_ENV", "CONDA_")


def clean_environment(venv: Path) -> dict[str, str]:
    """This process's environment without Python, Spark, faq or numba settings, the venv's bin first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LEAKS)}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def index_url() -> str:
    """The package index pip reads first: ``$PIP_INDEX_URL``, an ``index-url`` of pip's configuration, or PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"].split()[0]
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            timeout=60).stdout
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url") and value.strip("'\""):
            return value.strip("'\"").split()[0]
    return DEFAULT_INDEX


def index_unreachable() -> str:
    """Why the package index cannot be read (its page of pip), or "" if it can."""
    url = index_url().rstrip("/") + "/pip/"
    try:
        with urllib.request.urlopen(url, timeout=20):
            return ""
    except (OSError, ValueError) as error:  # URLError and socket errors are OSErrors
        return f"{url}: {error}"


def pip(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """This interpreter's pip with ``args``; a skip if it failed and the package index is unreachable (pip's
    connection errors, or the index's page of pip cannot be read), an assertion error with pip's output if it
    failed otherwise."""
    run = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                         capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        output = run.stdout + run.stderr
        why = next((sign for sign in UNREACHABLE if sign in output), "") or index_unreachable()
        if why:
            verb = next((a for a in args if a in ("wheel", "install")), args[0])
            pytest.skip(f"the package index is unreachable (pip {verb}: {why}): {output.strip().splitlines()[-1]}")
        raise AssertionError(f"pip {' '.join(args)} failed ({run.returncode}):\n{output}")
    return run


def build_wheel(folder: Path) -> Path:
    """The wheel of the repository as it is now, built from a copy of its build inputs in ``folder``."""
    source = folder / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in (*BUILD_INPUTS, *OPTIONAL_BUILD_INPUTS):
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        elif path.exists() or name in BUILD_INPUTS:
            shutil.copy2(path, source / name)
    pip("wheel", "--no-deps", "--wheel-dir", str(folder / "dist"), str(source))
    (wheel,) = (folder / "dist").glob("faq-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The wheel, and a fresh virtual environment with it installed: ``wheel``, ``venv``, ``python``, ``env``,
    ``outside`` (a working folder outside the repository).  All deleted after the module's tests."""
    folder = tmp_path_factory.mktemp("wheel")
    try:
        wheel = build_wheel(folder)
        venv = folder / "venv"
        python = bare_python(venv)
        pip("--python", python, "install", "--quiet", "--no-compile", str(wheel))
        outside = folder / "elsewhere"
        outside.mkdir()
        yield SimpleNamespace(wheel=wheel, venv=venv, python=python, env=clean_environment(venv), outside=outside)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_installed(installed: SimpleNamespace, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``argv`` run in the working folder outside the repository, in the clean environment; it must succeed."""
    run = subprocess.run(list(argv), cwd=installed.outside, env=installed.env, capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0, f"{' '.join(argv)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    return run


def test_the_project_urls_are_paths_in_the_repository():
    """No public host yet: each project URL is a path in the repository (pyproject.toml says so), and it exists."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert {"Homepage", "Documentation", "Source"} <= set(urls)
    for label, url in urls.items():
        if "://" not in url:
            assert (ROOT / url).exists(), f"project URL {label} = {url!r} is no path in the repository"


def test_the_wheel_holds_every_subpackage_its_data_and_licence_and_nothing_else(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "faq").rglob("__init__.py")
                if "__pycache__" not in p.parts}
    in_wheel = {n.rpartition("/")[0] for n in names if n.endswith("/__init__.py")}
    assert packages == in_wheel, f"subpackages missing from the wheel: {sorted(packages - in_wheel)}"
    assert {"faq/py.typed", "faq/log4j2-quiet.properties", "faq/warm.py"} <= names
    stray = sorted(n for n in names if n.split("/")[0] in ("tests", "bench", "docs", "notebooks", "tools")
                   or "__pycache__" in n or n.endswith((".pyc", ".nbi", ".nbc")))
    assert not stray, f"the wheel holds what is not the package: {stray[:10]}"
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(installed.wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata


def test_the_installed_command_counts_snap_triangles_outside_the_repository(installed):
    run = run_installed(installed, str(installed.venv / "bin" / "faq"), "triangles",
                        str(DATA / "email-Eu-core.txt.gz"), "--undirected", "--quiet")
    assert f"{EMAIL_EU_CORE_TRIANGLES} undirected triangles" in run.stdout, run.stdout


SMOKE = r"""
import importlib.util, json, sys
from importlib.metadata import metadata
from pathlib import Path

import pandas as pd

import faq
from faq.warm import ENTRY_POINTS

edges = pd.DataFrame({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 4]})          # one triangle 1-2-3, and 3-4
triangles = faq.count_triangles(edges).count
paths = pd.DataFrame({"src": [1, 2, 1, 3], "dst": [2, 3, 3, 4]})          # 1->2->3, 1->3->4, 2->3->4
with faq.query("count() := e(a,b), e(b,c)", e=paths) as answer:
    two_paths = answer.scalar()
package = Path(faq.__file__).resolve().parent
print(json.dumps({
    "file": str(Path(faq.__file__).resolve()),
    "prefix": str(Path(sys.prefix).resolve()),
    "typed": (package / "py.typed").is_file(),
    "log4j": (package / "log4j2-quiet.properties").is_file(),
    "licence": metadata("faq")["License-Expression"],
    "warm": {m: importlib.util.find_spec(m) is not None for m in ENTRY_POINTS},
    "triangles": int(triangles),
    "two_paths": int(two_paths),
}))
"""


def test_the_installed_library_answers_from_the_new_environment(installed):
    run = run_installed(installed, installed.python, "-c", SMOKE)
    found = json.loads(run.stdout.strip().splitlines()[-1])
    venv = installed.venv.resolve()
    assert Path(found["file"]).is_relative_to(venv), f"faq imported from {found['file']}, not from {venv}"
    assert not Path(found["file"]).is_relative_to(ROOT), found["file"]
    assert Path(found["prefix"]) == venv
    assert found["typed"] and found["log4j"], found
    assert found["licence"] == "Apache-2.0"
    assert all(found["warm"].values()), f"warm-up modules missing from the install: {found['warm']}"
    assert (found["triangles"], found["two_paths"]) == (1, 3), found


def test_the_installed_warm_up_command_lists_its_modules(installed):
    run = run_installed(installed, installed.python, "-m", "faq.warm", "--list")
    from faq.warm import ENTRY_POINTS

    assert tuple(run.stdout.split()) == ENTRY_POINTS
