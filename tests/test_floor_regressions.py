"""bench.floor's same-run A/B: where a figure has one, it decides the flag, not the committed seconds.

The as-of and truss references were measured once, on another day; on this shared machine the reference
commits' own code measured beside this tree's was as slow as it (bench/floor.py notes).  No benchmark runs
here: the figures are made up and the committed files are not read.
"""

from __future__ import annotations

import pytest

floor = pytest.importorskip("bench.floor")

NAME = "asof_batch_median_seconds"
COMMITTED = {"asof_maintained.json": {"commit": "cdb25d0", "load_average_start": 0.7,
                                      "maintained": {"median_seconds": 0.00742, "recompute_over_median": 207.8}}}


@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setattr(floor, "committed", lambda name: COMMITTED.get(name))


def figure(value, same_run_slower=None):
    f = {"value": value, "recompute_over_median": 110.0}
    if same_run_slower is not None:
        f["same_run"] = {"reference_commit": "cdb25d0", "reference": [0.025], "this_tree": [0.025],
                         "load_averages": [], "slower": same_run_slower}
    return f


def test_the_committed_seconds_flag_a_figure_without_an_ab(committed):
    figures = {NAME: figure(0.0246)}
    assert floor.compared(figures, 1.2) == [NAME]
    assert figures[NAME]["slower"] == pytest.approx(3.315, abs=1e-3)


def test_a_same_run_ab_decides_the_flag(committed, capsys):
    figures = {NAME: figure(0.0246, same_run_slower=1.02)}
    assert floor.compared(figures, 1.2) == []
    assert figures[NAME]["slower"] == pytest.approx(3.315, abs=1e-3)  # still shown against the committed figure
    floor.table(figures, [], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 1.2)
    assert "1.02" in capsys.readouterr().out


def test_a_slower_tree_in_the_same_run_is_flagged(committed, capsys):
    figures = {NAME: figure(0.0050, same_run_slower=1.5)}  # faster than committed, slower than its reference code
    assert floor.compared(figures, 1.2) == [NAME]
    floor.table(figures, [NAME], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 1.2)
    assert "1.5x cdb25d0's code in this run" in capsys.readouterr().out


@pytest.mark.parametrize("step, module, function, commit", [("asof", "bench_asof", "maintained", "cdb25d0"),
                                                          ("truss", "bench_truss_maintained", "one", "1d073ff")])
def test_every_ab_step_calls_a_function_its_reference_commit_has(step, module, function, commit):
    import subprocess

    code = floor.AB_STEPS[step]
    compile(code, f"<{step}>", "exec")
    assert f"import bench.{module} as b" in code and f"b.{function}(" in code
    assert "b.time = types.SimpleNamespace(perf_counter=time.thread_time)" in code
    done = subprocess.run(["git", "show", f"{commit}:bench/{module}.py"], cwd=floor.ROOT, capture_output=True,
                          text=True)
    if done.returncode:
        pytest.skip(f"no {commit} in this clone")
    assert f"def {function}(" in done.stdout and "\nimport time\n" in done.stdout
