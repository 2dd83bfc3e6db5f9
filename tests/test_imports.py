"""The planning half of faq imports no pyspark: semirings, hypergraphs, the planner, queries.

Checked in a fresh interpreter (this test process has pyspark loaded already
by conftest's session).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPARK_FREE = ("faq.semirings", "faq.hypergraph", "faq.insideout.planner", "faq.language")


def run_fresh(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter that imports faq from this checkout."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + code
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_planning_modules_load_no_pyspark():
    code = (
        "; ".join(f"import {m}" for m in SPARK_FREE)
        + "; loaded = sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('pyspark.'))"
        + "; print(loaded); sys.exit(1 if loaded else 0)"
    )
    run = run_fresh(code)
    assert run.returncode == 0, f"pyspark loaded by {SPARK_FREE}: {run.stdout.strip()} {run.stderr[-2000:]}"


def test_semirings_and_their_numpy_backend_work_without_pyspark():
    """Laws checked on the numpy form, and the numpy backend itself, with pyspark still unloaded."""
    run = run_fresh(
        "from faq.semirings import builtin_semirings, check_laws; "
        "from faq.semirings.numpy_backend import numpy_ops; "
        "assert all(check_laws(s) == [] and numpy_ops(s) is not None for s in builtin_semirings()); "
        "sys.exit(1 if 'pyspark' in sys.modules else 0)"
    )
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_explain_path_loads_no_heavy_module():
    """``faq explain`` parses, plans and prints: none of that needs networkx (the planner reads the
    primal graph as a dict of sets), numba, matplotlib, scipy, pandas, pyspark, nor the executor and
    job modules behind ``faq.graphs`` (the CLI writes the motif strategies out).  Each cost the
    command 0.2-0.8 s of imports before it did anything."""
    run = run_fresh(
        "import faq.cli\n"
        "from faq.insideout import plan_query\n"
        "from faq.language import parse_query\n"
        "p = plan_query(parse_query('count() := e(a,b), e(a,c), e(b,c)'), semiring='counting', sizes={'e': 100})\n"
        "assert 'N_e^(3/2)' in str(p)\n"
        "heavy = ('sympy', 'networkx', 'numba', 'matplotlib', 'scipy', 'pandas', 'pyspark', 'faq.graphs',\n"
        "         'faq.insideout.executor', 'faq.joins.generic')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]"
