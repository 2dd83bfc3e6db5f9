"""The resident index without Spark: base, two overlay levels and compaction equal a dict model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import faq.incremental.index as index_module
from faq.incremental.index import KeyedRows, ResidentRelation, View, merge_rows
from faq.semirings.numpy_backend import numpy_ops
from faq.semirings import INTEGER, MIN_PLUS

KEYS = st.tuples(st.integers(0, 6), st.integers(0, 6))


def rows_of(pairs: dict, dtype) -> KeyedRows:
    keys = sorted(pairs)
    return KeyedRows((np.array([k[0] for k in keys], dtype=np.int64), np.array([k[1] for k in keys], dtype=np.int64)),
                     np.array([pairs[k] for k in keys], dtype=dtype))


@pytest.mark.parametrize("semiring", [INTEGER, MIN_PLUS], ids=["integer", "min_plus"])
def test_commits_across_levels_and_compactions_equal_a_dict(semiring, monkeypatch):
    # Tiny limits, so that a short stream crosses the recent -> older merge and the compaction many times.
    monkeypatch.setattr(index_module, "RECENT_MAX_ROWS", 3)
    monkeypatch.setattr(index_module, "OVERLAY_MIN_ROWS", 7)
    ops = numpy_ops(semiring, semiring)
    ring = semiring is INTEGER
    values = st.integers(-3, 3).filter(bool) if ring else st.integers(0, 20).map(float)

    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(st.dictionaries(KEYS, values, max_size=10), st.lists(st.dictionaries(KEYS, values, max_size=5), max_size=12))
    def check(start, batches):
        model = dict(start)
        relation = ResidentRelation.build("r", ("a", "b"), rows_of(start, ops.dtype), ops)
        relation.register(View((1, 0)))
        for batch in batches:
            merged = merge_rows(rows_of(batch, ops.dtype).keys, rows_of(batch, ops.dtype).values, ops)
            relation.commit(merged)
            for key, value in batch.items():
                model[key] = model.get(key, 0) + value if ring else min(model.get(key, np.inf), value)
            model = {k: v for k, v in model.items() if not ring or v != 0}
            current = relation.current()
            got = dict(zip(zip(*[c.tolist() for c in current.keys]), current.values_or_ones(ops).tolist()))
            assert got == model
            probe = sorted(set(model) | {(0, 0), (6, 6)})
            present, found = relation.lookup((np.array([k[0] for k in probe]), np.array([k[1] for k in probe])))
            assert {k: v for k, p, v in zip(probe, present.tolist(), found.tolist()) if p} == model
            # The overlay stays bounded: the compaction limit, plus one batch (twice while one is in flight).
            assert relation.overlay_rows <= (2 if relation.compacting else 1) * (7 + 5 + 3)

    check()
