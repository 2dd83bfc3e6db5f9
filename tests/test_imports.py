"""The planning half of faq imports no pyspark: semirings, hypergraphs, the planner, queries.

Checked in a fresh interpreter (this test process has pyspark loaded already
by conftest's session).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPARK_FREE = ("faq.semirings", "faq.hypergraph", "faq.insideout.planner", "faq.language")


def test_planning_modules_load_no_pyspark():
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        + "; ".join(f"import {m}" for m in SPARK_FREE)
        + "; loaded = sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('pyspark.'))"
        + "; print(loaded); sys.exit(1 if loaded else 0)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"pyspark loaded by {SPARK_FREE}: {run.stdout.strip()} {run.stderr[-2000:]}"


def test_semirings_and_their_numpy_backend_work_without_pyspark():
    """Laws checked on the numpy form, and the numpy backend itself, with pyspark still unloaded."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from faq.semirings import builtin_semirings, check_laws; "
        "from faq.semirings.numpy_backend import numpy_ops; "
        "assert all(check_laws(s) == [] and numpy_ops(s) is not None for s in builtin_semirings()); "
        "sys.exit(1 if 'pyspark' in sys.modules else 0)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
