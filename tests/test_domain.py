"""KeyDomain: the few-values lookup (one hash probe each) agrees with the vectorised one.

No Spark: :class:`faq.incremental.domain.KeyDomain` is pure numpy/pandas.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import faq.incremental.domain as domain
from faq.incremental.domain import KeyDomain

keys = st.lists(st.integers(-50, 50), max_size=30)


@settings(max_examples=60, deadline=None)
@given(start=keys, added=keys, probe=st.lists(st.integers(-60, 60), min_size=1, max_size=domain.FEW_VALUES))
def test_few_values_lookup_agrees_with_vectorised(start, added, probe):
    d = KeyDomain.of([np.array(start, dtype=np.int64)])
    d.encode(np.array(added, dtype=np.int64))  # values past the folded ones live in the added dict
    values = np.array(probe, dtype=np.int64)
    few = d.lookup(values)
    saved, domain.FEW_VALUES = domain.FEW_VALUES, 0  # force the vectorised path
    try:
        vectorised = d.lookup(values)
    finally:
        domain.FEW_VALUES = saved
    assert few.tolist() == vectorised.tolist()
    known = set(start) | set(added)
    assert [c >= 0 for c in few.tolist()] == [v in known for v in probe]
    assert d.decode(few[few >= 0]).tolist() == [v for v in probe if v in known]
