"""Execute every notebook in notebooks/ top to bottom; check no cell raised and each draws a plot.

Each notebook runs in its own kernel (this interpreter, so the venv's faq and
pyspark, with this checkout first on ``PYTHONPATH``), from the notebooks/
folder like a user's; the notebooks that use Spark start one session each.
The notebooks are committed *with* their outputs; to refresh them after a
change, run (one at a time, it starts a JVM per notebook)::

    python tests/test_notebook.py notebooks/semirings.ipynb [more.ipynb ...]

which executes each notebook and saves it in place, without the volatile
metadata (execution timings; the kernel's Python version).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
TIMEOUT = 600  # seconds per cell
PNG = "image/png"


def execute(path: Path):
    """Run the notebook at ``path`` in a fresh kernel; return it with its outputs (errors kept)."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        allow_errors=True,  # report every failing cell below, not only the first
        record_timing=False,  # no per-cell timestamps in the saved notebook
        resources={"metadata": {"path": str(path.parent)}},
    )
    # The kernel imports faq from this checkout even when it is not installed, and
    # Spark's Python workers use this interpreter.  Plots are drawn on the Agg backend.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    client.execute(env=env)
    return nb


def clean(nb) -> None:
    """Drop the metadata that changes from run to run (the kernel's Python version)."""
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def errors_of(nb) -> list[str]:
    return [
        f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for out in c.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def images_of(nb) -> int:
    return sum(
        PNG in out.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for out in c.get("outputs", [])
    )


def _outputs_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
        elif out.get("output_type") == "error":
            parts.append("\n".join(out.get("traceback", [])))
    return "".join(parts)


@pytest.fixture(scope="module")
def spark():
    """No SparkSession in this process: each notebook's kernel starts its own.

    (Overrides the suite's autouse session fixture for this module, so running the notebook
    tests alone does not start a JVM that nothing here uses.)
    """
    yield None


# What a notebook must print somewhere (beyond its own asserts): a published figure.
EXPECTED_TEXT = {
    "quickstart": ["105461"],  # SNAP's triangle count of email-Eu-core
}


def test_every_notebook_is_tested():
    assert {p.stem for p in NOTEBOOKS} >= {
        "quickstart", "motif_tracking", "semirings", "matrix_chains_and_plans", "performance"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_with_outputs(path):
    """The stored notebook was executed top to bottom and saved with its plots, no volatile metadata."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "save it executed, in order"
    assert not errors_of(nb), "saved with a failing cell"
    assert images_of(nb) >= 1, "saved without a plot"
    assert not any("execution" in c.metadata for c in nb.cells), "strip execution timings (tests/test_notebook.py)"
    assert os.path.getsize(path) < 400_000, "keep outputs small"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path):
    nb = execute(path)
    errors = errors_of(nb)
    assert not errors, "notebook cells failed:\n" + "\n".join(errors)
    assert images_of(nb) >= 1, "a notebook draws at least one plot (image/png)"
    text = "".join(_outputs_text(c) for c in nb.cells if c.cell_type == "code")
    for expected in EXPECTED_TEXT.get(path.stem, []):
        assert expected in text


def main(paths: list[str]) -> int:
    """Execute each notebook and save it in place with its outputs; non-zero if a cell failed."""
    failed = 0
    for p in paths:
        path = Path(p).resolve()
        started = time.perf_counter()
        nb = execute(path)
        clean(nb)
        errors = errors_of(nb)
        nbformat.write(nb, path)
        print(f"{path.name}: {time.perf_counter() - started:.1f} s, {images_of(nb)} plot(s)"
              + ("".join("\n  " + e for e in errors) if errors else ""))
        failed += bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
