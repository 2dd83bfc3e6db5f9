"""Execute notebooks/quickstart.ipynb top to bottom and check what it prints.

The notebook runs in its own kernel (this interpreter, so the venv's faq and
pyspark) with its own SparkSession, from the notebooks/ folder like a user's.
"""

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
TIMEOUT = 600  # seconds per cell


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


def test_quickstart_notebook_runs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit it without outputs"
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        allow_errors=True,  # report every failing cell below, not only the first
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    # The kernel imports faq from this checkout even when it is not installed, and
    # Spark's Python workers use this interpreter.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    client.execute(env=env)

    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    errors = [
        f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
        for i, c in enumerate(code_cells)
        for out in c.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors, "notebook cells failed:\n" + "\n".join(errors)
    triangle_cells = [c for c in code_cells if "count_triangles(" in c.source]
    assert triangle_cells and "105461" in _outputs_text(triangle_cells[0])
