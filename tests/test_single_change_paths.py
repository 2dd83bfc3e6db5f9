"""The single-change paths (issue 50, item 1): each against the general path or a recount.

A batch merged into each view's trie of the recent level in one linear pass
(:mod:`faq.incremental.level_merge`), the loop's tables of a read's run list kept between batches
(:func:`faq.incremental.rule_kernel._few_tables`), a few keys looked up one by one
(:func:`faq.incremental.rows.lookup_runs`), a scalar answer read without a merge, the key columns of a
small batch encoded in one call, and the labels of an in-memory target appended in place.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from faq.incremental.domain import SPAN
from faq.incremental.level_merge import merged_level
from faq.incremental.rows import View, build_run, combined, lookup_runs, merge_rows
from faq.joins.csr import build_trie
from faq.semirings import INTEGER, REAL
from faq.semirings.numpy_backend import numpy_ops
from tests.conftest import search_settings

VIEWS = [View((0, 1)), View((1, 0))]


def _rows(rng, k, ops, values=True):
    keys = [rng.integers(0, 9, k), rng.integers(0, 9, k)]
    return merge_rows(keys, rng.choice([-1, 1, 2], k).astype(ops.dtype) if values else None, ops)


def _same_trie(mine, theirs):
    assert mine.rows == theirs.rows
    for a, b in zip(mine.levels, theirs.levels):
        assert a.comp.tolist() == b.comp.tolist() and a.offsets.tolist() == b.offsets.tolist()
    ones = [1] * mine.rows
    assert (ones if mine.values is None else mine.values.tolist()) == \
        (ones if theirs.values is None else theirs.values.tolist())


@given(seed=st.integers(0, 10_000), n=st.integers(0, 60), m=st.integers(1, 12), real=st.booleans(),
       valued=st.booleans(), built=st.booleans())
@search_settings(80)
def test_a_level_merged_trie_by_trie_equals_the_merge_then_the_tries(seed, n, m, real, valued, built):
    """Rows, every view's levels and values as :func:`combined` then :func:`build_run` give them (keys
    cancelled, a level of ones, a view whose trie was not built yet)."""
    ops = numpy_ops(REAL if real else INTEGER)
    rng = np.random.default_rng(seed)
    level, batch = _rows(rng, n, ops, valued), _rows(rng, m, ops)
    if not len(batch):
        return
    tries = {view: build_run(level, view, ops) for view in VIEWS if built and len(level)}
    merged_tries, rows = merged_level(level, tries, batch, VIEWS, ops)
    expected = combined(level, batch, ops) if len(level) else batch
    assert [k.tolist() for k in rows.keys] == [k.tolist() for k in expected.keys]
    assert rows.values_or_ones(ops).tolist() == expected.values_or_ones(ops).tolist()
    for view in VIEWS:
        if len(expected) > 1:
            _same_trie(merged_tries[view], build_run(expected, view, ops))
        else:
            assert merged_tries[view].rows == len(expected)


def test_the_loop_reads_a_merged_trie_s_rows_as_it_would_find_them():
    """The (address, length) rows a merged trie is made with are those read from its arrays."""
    from faq.incremental import rule_kernel, trie_rows

    ops = numpy_ops(REAL)
    rng = np.random.default_rng(4)
    level, batch = _rows(rng, 30, ops), _rows(rng, 3, ops)
    tries, _ = merged_level(level, {}, batch, VIEWS, ops)
    for trie in tries.values():
        kept = trie_rows.forget(trie)
        assert kept is not None and kept == rule_kernel._trie_rows(trie, np.dtype(np.float64), [])


@pytest.mark.parametrize("seed", range(12))
def test_a_few_keys_are_looked_up_as_many_are(seed):
    """:func:`lookup_runs` of up to four keys (one by one) equals the vectorized lookup of the same keys."""
    ops = numpy_ops(INTEGER)
    rng = np.random.default_rng(seed)
    runs = []
    for k in (40, 9, 3):
        rows = _rows(rng, k, ops)
        runs.append(build_trie(list(rows.keys), SPAN, rows.values, hashable=False))
    keys = [rng.integers(0, 10, 4), rng.integers(0, 10, 4)]
    padded = [np.concatenate([k, np.arange(10)]) for k in keys]  # ten more keys: the vectorized path
    for n in (1, 2, 4):
        present, values = lookup_runs(runs, [k[:n] for k in keys], ops)
        many_present, many_values = lookup_runs(runs, padded, ops)
        assert present.tolist() == many_present[:n].tolist() and values.tolist() == many_values[:n].tolist()


def test_a_scalar_answer_is_the_sum_of_its_levels():
    """:meth:`scalar_total` of a relation without columns is the value :meth:`current` merges."""
    from faq.incremental.index import KeyedRows, ResidentRelation

    ops = numpy_ops(INTEGER)
    answer = ResidentRelation.build("answer", (), KeyedRows((), np.array([5])), ops)
    assert answer.scalar_total() == 5
    for delta, expected in ((3, 8), (-8, None), (2, 2)):
        answer.commit(KeyedRows((), np.array([delta])))
        current = answer.current()
        assert answer.scalar_total() == (current.values[0] if len(current) else None) == expected


def test_small_batch_keys_are_encoded_as_column_by_column():
    """New key values get codes in the order column by column gives them, in one call or many."""
    from faq.incremental.state import ResidentState

    one_call, by_column = ResidentState(INTEGER), ResidentState(INTEGER)
    raw = [np.array([7, 3, 9]), np.array([3, 11, 7])]
    rows = one_call.coded(raw, np.array([1, 1, 1]), merge=False)
    expected = [by_column.domain.encode(c) for c in raw]
    assert [k.tolist() for k in rows.keys] == [k.tolist() for k in expected]


def test_in_memory_labels_grow_in_place_and_a_failed_merge_takes_its_label_back():
    from faq.incremental.durable import Maintained, Versions

    class Counter(Maintained):
        def __init__(self):
            self.record, self.progress, self.total = Versions(), None, 0

        def _versions(self):
            return self.record

        def apply(self, n, label=None):
            target = self._next_version(None)

            def merge():
                if n < 0:
                    raise ValueError("no")
                self.total += n

            self._commit(target, label, change=n, before_commit=None, save=lambda labels: None, merge=merge)

    c = Counter()
    for k in range(5):
        c.apply(k)
    with pytest.raises(ValueError):
        c.apply(-1, label="bad")
    c.apply(10, label="last")
    assert (c.version, c.total) == (6, 20)
    assert c.labels == [f"batch {k}" for k in range(1, 6)] + ["last"]


@pytest.mark.usefixtures("spark")
def test_a_growing_recent_level_stays_exact_over_hundreds_of_single_changes():
    """With the default limits the recent level grows batch after batch (merged trie by trie, its tables
    kept between batches): the count equals a recount throughout."""
    from faq import maintain
    from faq.factor import factor_of
    from tests.test_apply_fast import TRIANGLE, recount

    rng = random.Random(11)
    present = {(rng.randrange(40), rng.randrange(40)): 1 for _ in range(200)}
    present = {e: 1 for e in present if e[0] != e[1]}
    edge = factor_of([(u, v, 1) for u, v in sorted(present)], ["src", "dst"], "counting")
    with maintain(TRIANGLE, {"edge": edge}, placement="driver") as mq:
        relation = mq.state.relations["edge"]
        for k in range(400):
            e = (rng.randrange(40), rng.randrange(40))
            if e[0] == e[1]:
                continue
            change = -1 if e in present else 1
            if change < 0:
                del present[e]
            else:
                present[e] = 1
            mq.apply(edge=[(*e, change)])
            if k % 40 == 0:
                assert mq.scalar() == recount(TRIANGLE, present)
        assert len(relation.recent) > 100  # grown, not moved to the older level
        assert mq.scalar() == recount(TRIANGLE, present)
        assert len(mq.labels) == mq.version
