"""The public API as a new user meets it (docs/design.md, "One API"): every name in ``faq.__all__``
documented with parameters, returns and a runnable example; the same keywords for the same things;
one public function per name."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import faq

#: The jobs: each takes placement= and progress= (where it runs, what it reports).
JOBS = ("query", "plan", "explain", "maintain", "count_triangles", "motifs", "track", "matrix_chain",
        "shortest_paths", "widest_paths", "reachability", "paths", "connected_components", "truss", "asof_join",
        "linear_regression", "covariance", "moments")
#: Jobs keeping an answer current in a directory: state= (path=, the old name, only beside it).
STATEFUL = ("maintain", "track", "truss", "asof_join", "linear_regression", "covariance")


def _doc(name: str):
    obj = getattr(faq, name)
    return obj, (ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj))


@pytest.mark.parametrize("name", faq.__all__)
def test_every_public_name_has_a_numpydoc_docstring_with_an_example(name):
    obj, doc = _doc(name)
    assert doc["Summary"] and doc["Summary"][0].strip(), f"faq.{name}: no summary line"
    assert any(">>>" in line for line in doc["Examples"]), f"faq.{name}: no Examples section with >>>"
    if inspect.isclass(obj):
        return
    parameters = [p for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("self", "cls")]
    documented = {n.strip() for item in doc["Parameters"] for n in item.name.replace("*", "").split(",")}
    missing = [p.name for p in parameters if p.name not in documented]
    assert not missing, f"faq.{name}: parameters without a line in Parameters: {missing}"
    assert doc["Returns"] or doc["Yields"] or inspect.signature(obj).return_annotation in (None, "None"), \
        f"faq.{name}: no Returns section"


@pytest.mark.parametrize("name", JOBS)
def test_every_job_takes_placement_and_progress(name):
    parameters = inspect.signature(getattr(faq, name)).parameters
    assert "placement" in parameters, f"faq.{name} has no placement="
    assert "progress" in parameters or name in ("plan", "explain"), f"faq.{name} has no progress="


def test_a_state_directory_is_state_everywhere_and_path_only_its_deprecated_name():
    for name in faq.__all__:
        obj = getattr(faq, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        parameters = inspect.signature(obj).parameters
        if name in STATEFUL:
            assert "state" in parameters, f"faq.{name} has no state="
        elif "path" in parameters:  # an input file: the readers
            assert name.startswith("read_") or name in ("register",), f"faq.{name} has path= but reads nothing"


def test_one_public_function_per_name():
    """No module of faq defines a public function named like one of faq's that is another object: the
    subpackages' same-named functions were renamed (``plan_query``, ``triangle_count`` ...) or removed."""
    names = set(faq.__all__)
    clashes = {}
    for info in pkgutil.walk_packages(faq.__path__, "faq."):
        module = importlib.import_module(info.name)
        for name in names & set(vars(module)):
            obj = vars(module)[name]
            if callable(obj) and getattr(obj, "__module__", "") == info.name and obj is not getattr(faq, name):
                clashes.setdefault(name, []).append(info.name)
    assert not clashes, f"same-named public functions that are other objects: {clashes}"
