"""A fixpoint's rounds answered by the tasks of one Spark job that stay (faq.recursive.resident_rounds).

The same answers as one job a round and as networkx; the round reaches the tasks and their answers
come back; a task that cannot start leaves the rounds to a job each; a task that fails ends the round
with its error instead of a wait; closing stops the tasks and leaves no file.
"""

from __future__ import annotations

import os
import time

import networkx as nx
import numpy as np
import pytest

from faq.factor import factor_of
from faq.recursive.executor_edges import ExecutorEdges
from faq.recursive.placed import solve_placed
from faq.recursive.propagate import fixpoint_ops
from faq.recursive.resident_rounds import ResidentRounds
from faq.semirings import MIN_PLUS

pytestmark = pytest.mark.usefixtures("spark")


def _random_graph(seed: int, nodes: int = 300, edges: int = 1200) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, nodes, edges), rng.integers(0, nodes, edges)
    weight = rng.integers(1, 20, edges).astype(float)
    return [(int(s), int(d), float(w)) for s, d, w in zip(src, dst, weight)]


def _solved(edges, rounds: str, **kw) -> tuple[dict, str]:
    with solve_placed(edges, "min_plus", placement="executors", rounds=rounds, **kw) as result:
        return {int(n): v for n, v in result.df.collect()}, result.placement_reason


@pytest.mark.parametrize("seed", [1, 2])
def test_paths_and_components_in_one_job_equal_a_job_a_round_and_networkx(spark, seed):
    rows = _random_graph(seed)
    edges = factor_of(rows, ["src", "dst"], "min_plus", spark=spark)
    g = nx.DiGraph()
    for s, d, w in rows:  # parallel edges: the lightest counts
        if not g.has_edge(s, d) or g[s][d]["weight"] > w:
            g.add_edge(s, d, weight=w)
    source = rows[0][0]
    expected = {n: float(v) for n, v in nx.single_source_dijkstra_path_length(g, source).items()}
    staying, how = _solved(edges, "auto", source=source)
    a_job_each, how_jobs = _solved(edges, "job-per-round", source=source)
    assert staying == a_job_each == expected
    assert "answered by the tasks of one job" in how, how
    assert "job(s) over the frontier" in how_jobs, how_jobs
    components, how = _solved(edges, "auto", components=True)
    labels = {n: min(c) for c in nx.weakly_connected_components(g) for n in c}
    assert components == labels and "answered by the tasks of one job" in how, how


def _edges(spark):
    frame = spark.createDataFrame([(1, 2, 4.0), (2, 3, 1.0), (1, 3, 7.0), (3, 4, 2.0)],
                                  "src long, dst long, weight double")
    return ExecutorEdges.write(frame, fixpoint_ops(MIN_PLUS), parts=2)


def test_a_round_goes_to_the_tasks_and_their_answers_come_back(spark):
    with _edges(spark) as edges:
        values = np.full(len(edges.domain), np.inf)
        source = edges.domain.lookup(np.array([1]))
        values[source] = 0.0
        by_job = edges.proposals(source, values)
        with ResidentRounds.start(edges, slots=2) as staying:
            assert staying is not None and edges.runner is staying
            directory = staying.directory
            by_tasks = edges.proposals(source, values)
            assert staying.rounds == 1
            # the round's files are gone: only each part's mark that its task started
            assert sorted(os.listdir(directory)) == [f"ready-{p}" for p in range(edges.parts)]
        assert edges.runner is None and not os.path.exists(directory)
        assert not staying._thread.is_alive()  # stop: the tasks returned and their job ended
        ordered = [sorted(zip(*(a.tolist() for a in found))) for found in (by_job, by_tasks)]
        assert ordered[0] == ordered[1] == [(0, 1, 4.0), (0, 2, 7.0)]  # (source, target, value) in codes


def test_tasks_that_cannot_all_start_leave_the_rounds_to_a_job_each(spark):
    with _edges(spark) as edges:
        assert ResidentRounds.start(edges, slots=2, ready_seconds=0.0) is None  # no wait at all: never all ready
        assert edges.runner is None
        values = np.full(len(edges.domain), np.inf)
        values[0] = 0.0
        found = edges.proposals(np.array([0]), values)  # a job of its own, as before
        assert sorted(found[2].tolist()) == [4.0, 7.0]


class _Conf:
    def __init__(self, values: dict) -> None:
        self.values = values

    def get(self, key, default=None):
        return self.values.get(key, default)


class _Session:
    def __init__(self, **values) -> None:
        self.conf = _Conf({k.replace("_", "."): v for k, v in values.items()})


def test_as_many_tasks_stay_as_run_at_once_where_each_asks_several_cores():
    from faq.recursive.resident_rounds import resident_slots

    assert resident_slots(_Session(spark_master="local[4]")) == 4
    assert resident_slots(_Session(spark_master="local[4]", spark_task_cpus="2")) == 2  # not 4 waiting for 2 cores
    assert resident_slots(_Session(spark_master="local-cluster[2,3,1024]", spark_task_cpus="2")) == 2
    assert resident_slots(_Session(spark_master="local-cluster[2,1,1024]", spark_task_cpus="2")) is None
    assert resident_slots(_Session(spark_master="yarn")) is None  # a cluster: a job a round (module notes)


def test_a_task_that_fails_ends_the_round_with_its_error(spark):
    with _edges(spark) as edges:
        with ResidentRounds.start(edges, slots=2) as staying:
            started = time.perf_counter()
            with pytest.raises(Exception) as failed:
                staying.run((np.array([0, 1, 2]), np.array([])), None)  # no value for the frontier's nodes
            assert time.perf_counter() - started < 120
        assert "ResidentRoundsError" not in type(failed.value).__name__  # Spark's error, not a timeout of ours
        assert not staying._thread.is_alive()
