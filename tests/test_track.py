"""Motif tracking: per batch, the bindings that appear and disappear, against brute force.

The random streams run two ways: a few per pattern as Spark sees them (the start
counts the pattern with Spark jobs, batches come as DataFrames), and more
in-process -- a tracker of the empty graph, saved once per pattern, reopened
from a copy for each example (no Spark), the initial graph its first batch
of inserts and the batches tuples.  The counts scale with the hypothesis
profile (tests/conftest.py).
"""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faq.errors import InvalidDeltaError
from faq.graphs.motifs import count_motifs
from faq import track
from faq.graphs.track import MotifTracker
from tests.conftest import examples, search_settings
from tests.helpers import NODES, bindings

PATTERNS = [
    "(a)->(b); (a)->(c); (b)->(c)",                          # feed-forward triangle
    "(a)->(b); (b)->(c); (c)->(a)",                          # 3-cycle
    "(a)->(b); (b)->(c); (c)->(d); (d)->(a)",                # directed 4-cycle
    "(a)->(b); (b)->(c); !(a)->(c)",                         # induced 2-path (negation)
    "(a)-(b); (b)-(c); (a)-(c)",                             # undirected triangle
    "(a)->(b); (a)->(c); (b)->(d); (c)->(d); !(b)-(c)",      # diamond, b and c not adjacent
]

# Examples per pattern in the suite: trackers started with Spark jobs, and in-process ones.
SPARK = 2
IN_PROCESS = 10

# No shrinking: each example runs Spark jobs, and a shrink can take many minutes.
TRACK = search_settings(SPARK, HealthCheck.function_scoped_fixture)


edge_st = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES))
initial_st = st.sets(edge_st, max_size=14)
batches_st = st.lists(st.lists(st.tuples(edge_st, st.sampled_from([1, -1])), min_size=1, max_size=6),
                      min_size=2, max_size=2)


def check_batches(tracker, pattern, graph, batches, apply):
    """Apply each batch (``apply(rows)`` -> (change, its binding rows)) to a tracker of ``graph``; after
    each, the bindings that appeared and disappeared, the delta and the count are the enumerator's."""
    before = bindings(graph, pattern)
    for batch in batches:
        rows = [(u, v, d, k) for k, ((u, v), d) in enumerate(batch)]
        change, changed = apply(rows)
        for u, v, d, _ in rows:  # the last operation on an edge wins
            if u != v:
                (graph.add if d > 0 else graph.discard)((u, v))
        after = bindings(graph, pattern)
        got = {tuple(r[:-2]): r[-1] for r in changed}
        expected = {b: 1 for b in after - before} | {b: -1 for b in before - after}
        assert got == expected, (pattern, batch)
        assert change.delta == len(after) - len(before)
        assert change.count == tracker.count == len(after)
        before = after


@pytest.mark.parametrize("pattern", PATTERNS)
def test_tracked_changes_equal_brute_force(spark, pattern):
    """Started on Spark (the initial count is a Spark job), batches given as DataFrames."""
    schema = "src bigint, dst bigint, diff int, seq int"

    @TRACK
    @given(initial_st, batches_st)
    def check(initial, batches):
        graph = {(u, v) for u, v in initial if u != v}
        df = spark.createDataFrame([(u, v) for u, v in initial] or [(0, 0)], "src bigint, dst bigint")
        with track(df, pattern) as tracker:
            assert tracker.count == len(bindings(graph, pattern))

            def apply(rows):
                change = tracker.apply(spark.createDataFrame(rows, schema))
                return change, change.bindings.collect()

            check_batches(tracker, pattern, graph, batches, apply)

    check()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_tracked_changes_in_process_equal_brute_force(spark, tmp_path, pattern):
    """No Spark per example: each reopens a copy of a saved tracker of the empty graph; the initial
    graph is its first batch (every binding appears, +1), then the random batches, all as tuples."""
    empty = tmp_path / "empty"
    track(spark.createDataFrame([(0, 0)], "src bigint, dst bigint"), pattern, state=str(empty)).close()
    copies = []

    @settings(TRACK, max_examples=examples(IN_PROCESS))
    @given(initial_st, batches_st)
    def check(initial, batches):
        copy = tmp_path / f"example{len(copies)}"
        copies.append(shutil.copytree(empty, copy))
        with MotifTracker.open(str(copy)) as tracker:
            assert tracker.count == 0

            def apply(rows):
                change = tracker.apply(rows)
                return change, change.rows()

            inserts = [((u, v), 1) for u, v in sorted(initial)]
            check_batches(tracker, pattern, set(), [inserts] + batches, apply)
        shutil.rmtree(copy)

    check()


def test_batch_updates_forming_one_triangle_report_it_once(spark):
    with track(spark.createDataFrame([(5, 6)], ["src", "dst"]), PATTERNS[0]) as tracker:
        change = tracker.apply(spark.createDataFrame([(1, 2, 1), (1, 3, 1), (2, 3, 1)], ["src", "dst", "diff"]))
        assert [tuple(r) for r in change.bindings.collect()] == [(1, 2, 3, 1, 1)]
        assert (change.delta, change.count) == (1, 1)


def test_ambiguous_batch_without_seq_is_refused(spark):
    with track(spark.createDataFrame([(1, 2)], ["src", "dst"]), PATTERNS[0]) as tracker:
        with pytest.raises(InvalidDeltaError) as err:
            tracker.apply(spark.createDataFrame([(2, 3, 1), (2, 3, -1)], ["src", "dst", "diff"]))
        assert err.value.parameters["edge"] == (2, 3)
        assert tracker.version == 0 and tracker.count == 0


def test_triangle_tracking_on_email_eu_core(spark):
    """Feed-forward triangles of a real graph under inserts and deletes, against the static count."""
    import random
    from pathlib import Path

    from faq.io import read_edge_list

    path = str(Path(__file__).parent / "data" / "email-Eu-core.txt.gz")
    edges = read_edge_list(path)
    present = sorted({(r[0], r[1]) for r in edges.df.select(*edges.variables).collect() if r[0] != r[1]})
    rng = random.Random(7)
    with track(edges, PATTERNS[0]) as tracker:
        assert tracker.count == 373386
        graph = set(present)
        for _ in range(2):
            deletes = rng.sample(sorted(graph), 30)
            inserts = [(rng.randrange(1005), rng.randrange(1005)) for _ in range(30)]
            rows = [(u, v, -1, k) for k, (u, v) in enumerate(deletes)]
            rows += [(u, v, 1, 100 + k) for k, (u, v) in enumerate(inserts)]
            change = tracker.apply(spark.createDataFrame(rows, "src bigint, dst bigint, diff int, seq int"))
            for u, v, d, _ in rows:
                if u != v:
                    (graph.add if d > 0 else graph.discard)((u, v))
            static = count_motifs(spark.createDataFrame(sorted(graph), "src bigint, dst bigint"), PATTERNS[0])
            assert change.count == static.count


def test_a_tracker_over_no_edges_counts_nothing_without_a_spark_job(monkeypatch):
    import pyarrow as pa

    import faq.graphs.track as tracking

    def no_count(*args, **kwargs):
        raise AssertionError("counted over no edges")

    monkeypatch.setattr(tracking, "count_motifs", no_count)
    empty = pa.table({"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64())})
    with MotifTracker(empty, "(a)-(b); (b)-(c); (a)-(c)") as tracker:
        assert tracker.count == 0
        change = tracker.apply([(1, 2, 1), (2, 3, 1), (3, 1, 1)])
        assert (change.delta, tracker.count) == (6, 6)   # one triangle, 6 bindings of the undirected pattern
