"""Compaction off the batch path stays exact: random batch streams, compaction forced often, no Spark.

A feed-forward triangle count is kept by the delta rules over a resident
``edge`` relation (:mod:`faq.incremental.engine`), the relation given as an
Arrow table of tuples, with thresholds so small that almost every few
batches start a compaction (:mod:`faq.incremental.compaction`).  After every
batch the maintained count must equal a brute-force recount of the current
edge set, and the relation's rows and lookups a Python dict -- whether the
compaction runs in a forked process, a thread or inline, whether it finishes
at once or is held in flight across many batches (the rules then read the
frozen levels), and across a save and a reopen while one is in flight.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq.incremental.compaction as compaction_module
import faq.joins.csr as csr
import faq.incremental.index as index_module
from faq.errors import CompactionFailedError
from faq.incremental.compaction import fold, trie_rows
from faq.incremental.engine import run_rules
from faq.incremental.index import View, build_run, merge_rows
from faq.incremental.rules import DeltaQuery, Term, plan_rules, views_needed
from faq.incremental.state import ResidentState
from faq.semirings import INTEGER, MIN_PLUS
from faq.semirings.numpy_backend import numpy_ops

NODES = 7
EDGE = st.tuples(st.integers(0, NODES - 1), st.integers(0, NODES - 1)).filter(lambda e: e[0] != e[1])
QUERY = DeltaQuery((Term("edge", ("a", "b")), Term("edge", ("a", "c")), Term("edge", ("b", "c"))), (),
                   columns={"edge": ("src", "dst")})
RULES = plan_rules(QUERY)
META = {"kind": "test"}


def recount(edges: set) -> int:
    """Feed-forward triangles a->b, a->c, b->c by brute force."""
    return sum(1 for a, b in edges for c in range(NODES) if (a, c) in edges and (b, c) in edges)


def table(rows) -> pa.Table:
    rows = list(rows)
    return pa.table({"src": pa.array([r[0] for r in rows], pa.int64()), "dst": pa.array([r[1] for r in rows], pa.int64()),
                     "value": pa.array([r[2] for r in rows], pa.int64())})


def start(edges: set, compaction: str = "thread") -> ResidentState:
    state = ResidentState(INTEGER, compaction)
    state.add("edge", ("src", "dst"), table((a, b, 1) for a, b in sorted(edges)), "value")
    for view in views_needed(RULES)["edge"]:
        state.relations["edge"].register(view)
    return state


def step(state: ResidentState, rows: list) -> int:
    """One batch as a maintained query runs it: the rules on the old state, then the commit; the count's change."""
    batch = state.rows("edge", table(rows), "value")
    _, values = run_rules(RULES, state.relations, {"edge": batch}, state.ops, len(state.domain))
    state.relations["edge"].commit(batch)
    return int(values.sum()) if len(values) else 0


def current_edges(state: ResidentState) -> set:
    rows = state.relations["edge"].current()
    keys = [state.domain.decode(k).tolist() for k in rows.keys]
    assert (rows.values_or_ones(state.ops) == 1).all()
    return set(zip(*keys))


@pytest.fixture
def tiny(monkeypatch):
    """Thresholds that make a few changed rows a compaction."""
    monkeypatch.setattr(index_module, "OVERLAY_MIN_ROWS", 3)
    monkeypatch.setattr(index_module, "RECENT_MAX_ROWS", 2)
    monkeypatch.setattr(index_module, "RECENT_BATCHES", 1)


def changes(edges: set, picks: list) -> list:
    """Each picked pair toggled: deleted if present, inserted if not (each pair once per batch)."""
    rows = []
    for e in dict.fromkeys(picks):
        rows.append((*e, -1 if e in edges else 1))
    return rows


STREAM = st.tuples(st.sets(EDGE, max_size=18),
                   st.lists(st.tuples(st.lists(EDGE, min_size=1, max_size=5), st.booleans()), min_size=1, max_size=14))


@pytest.mark.parametrize("mode,hold,hashed", [("process", False, False), ("thread", False, False),
                                              ("inline", False, False), ("process", True, False),
                                              ("thread", True, False), ("thread", False, True),
                                              ("process", False, True), ("batch", False, False)])
def test_random_streams_stay_exact_after_every_batch(tiny, monkeypatch, mode, hold, hashed):
    monkeypatch.setattr(compaction_module, "HOLD", hold)
    if hashed:  # every base level hashed (first build and each fold) and probed from the first key
        monkeypatch.setattr(csr, "WARM_MIN_ENTRIES", 1)
        monkeypatch.setattr(csr, "HASH_MIN_KEYS", 1)
        monkeypatch.setattr(index_module, "WARM_ROWS", 1)

    @settings(max_examples=30, deadline=None, derandomize=True)
    @given(STREAM)
    def check(stream):
        initial, batches = stream
        edges = set(initial)
        state = start(edges, mode)
        relation = state.relations["edge"]
        assert relation.compaction == mode
        count = recount(edges)
        flights = 0
        for picks, settle in batches:
            rows = changes(edges, picks)
            count += step(state, rows)
            for a, b, v in rows:
                (edges.add if v > 0 else edges.discard)((a, b))
            flights += relation.compacting
            assert count == recount(edges)
            assert current_edges(state) == edges
            probe = [(a, b) for a in range(NODES) for b in range(NODES)]
            codes = [state.domain.lookup(np.array([p[i] for p in probe])) for i in (0, 1)]
            known = (codes[0] >= 0) & (codes[1] >= 0)
            present, _ = relation.lookup([c[known] for c in codes])
            assert {p for p, hit in zip([p for p, k in zip(probe, known) if k], present.tolist()) if hit} == edges
            if settle:
                relation.settle()
                assert not relation.frozen and not relation.compacting
                for view, trie in relation._runs["base"].items():  # merged tries equal tries built afresh
                    if hashed and relation.compactions:  # a fold's tries come hashed
                        assert all(level.hashed for level in trie.levels if not level.duplicates)
                    fresh = build_run(relation.base, view, relation.ops)
                    assert [c.tolist() for c in trie_rows(trie)] == [c.tolist() for c in trie_rows(fresh)]
        relation.settle()
        assert current_edges(state) == edges and count == recount(edges)
        if hold and len(batches) > 6:
            assert flights or relation.compactions  # held jobs were read in flight or folded

    check()


def test_a_held_compaction_is_read_in_flight_then_swapped_between_batches(tiny, monkeypatch):
    monkeypatch.setattr(compaction_module, "HOLD", True)
    edges = {(0, 1), (1, 2), (0, 2), (2, 3), (3, 4)}
    state = start(edges)
    relation = state.relations["edge"]
    count = recount(edges)
    rng = np.random.default_rng(3)
    in_flight = 0
    for _ in range(40):
        picks = [tuple(int(x) for x in rng.choice(NODES, 2, replace=False)) for _ in range(3)]
        rows = changes(edges, picks)
        count += step(state, rows)
        for a, b, v in rows:
            (edges.add if v > 0 else edges.discard)((a, b))
        in_flight += bool(relation.frozen)
        assert count == recount(edges)
    assert in_flight > 10 and relation.compactions >= 2  # batches ran over frozen levels; later due ones settled
    relation.settle()
    assert current_edges(state) == edges


def test_a_save_and_reopen_during_a_compaction_restore_the_same_rows(tiny, monkeypatch):
    monkeypatch.setattr(compaction_module, "HOLD", True)
    rng = np.random.default_rng(5)
    edges = {(0, 1), (1, 2), (0, 2), (2, 3)}
    state = start(edges)
    relation = state.relations["edge"]
    with tempfile.TemporaryDirectory() as path:
        state.attach(path, META)
        reopened_in_flight = 0
        for version in range(1, 30):
            picks = [tuple(int(x) for x in rng.choice(NODES, 2, replace=False)) for _ in range(3)]
            rows = changes(edges, picks)
            batch = state.rows("edge", table(rows), "value")
            run_rules(RULES, state.relations, {"edge": batch}, state.ops, len(state.domain))
            state.save(version, META, {"edge": batch}, [f"b{version}"])  # durable first, as apply does
            relation.commit(batch)
            state.version = version
            for a, b, v in rows:
                (edges.add if v > 0 else edges.discard)((a, b))
            if relation.compacting:
                reopened, meta = ResidentState.load(path, INTEGER)
                assert int(meta["version"]) == version
                assert current_edges(reopened) == edges
                reopened.settle()
                assert current_edges(reopened) == edges
                reopened_in_flight += 1
        assert reopened_in_flight >= 2
        assert relation.compacting or relation.compactions
        relation.settle()
        assert current_edges(state) == edges


def test_a_failed_compaction_keeps_every_row_and_is_reported_by_settle(tiny, monkeypatch):
    def broken(*args, **kwargs):
        raise MemoryError("no room")

    monkeypatch.setattr(compaction_module, "fold", broken)
    edges = {(0, 1), (1, 2)}
    state = start(edges)
    relation = state.relations["edge"]
    for picks in ([(0, 2), (2, 3)], [(3, 4), (4, 5)], [(5, 6), (1, 3)], [(2, 4)]):
        rows = changes(edges, picks)
        step(state, rows)
        for a, b, v in rows:
            (edges.add if v > 0 else edges.discard)((a, b))
        assert current_edges(state) == edges
    with pytest.raises(CompactionFailedError):
        relation.settle()
        relation.settle()  # one may be in flight still: its failure is reported by the second
    assert current_edges(state) == edges and not relation.frozen


@pytest.mark.parametrize("semiring", [INTEGER, MIN_PLUS], ids=["integer", "min_plus"])
def test_the_merged_view_tries_equal_sorting_afresh(semiring):
    ops = numpy_ops(semiring)
    rng = np.random.default_rng(7)
    for n, m in ((500, 60), (60, 500), (1, 3), (300, 1)):
        values = None if semiring is INTEGER else rng.integers(0, 9, n).astype(float)
        base = merge_rows([rng.integers(0, 30, n), rng.integers(0, 30, n)], values, ops)
        changes_ = rng.choice([-1, 1], m) if semiring is INTEGER else rng.integers(0, 9, m).astype(float)
        overlay = merge_rows([rng.integers(0, 30, m), rng.integers(0, 30, m)], changes_, ops)
        views = [View((0, 1)), View((1, 0))]
        old = {view: build_run(base, view, ops) for view in views}
        rows, tries = fold(base, [overlay], views, ops, old)
        for view in views:
            fresh = build_run(rows, view, ops)
            got = tries[view]
            assert [c.tolist() for c in trie_rows(got)] == [c.tolist() for c in trie_rows(fresh)]
            assert [lv.offsets.tolist() for lv in got.levels] == [lv.offsets.tolist() for lv in fresh.levels]
            assert (got.values is None) == (fresh.values is None)
            if got.values is not None:
                assert got.values.tolist() == fresh.values.tolist()
