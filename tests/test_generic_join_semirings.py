"""The generic join in every semiring on random FAQs: the slow, per-semiring half of
tests/test_generic_join.py (apart so the suite's workers share it out: ``--dist loadfile``
runs one file per worker).

Every strategy against brute force: ``broadcast`` on each example, ``shuffle``
and ``partitioned`` on the first example of each kind for the semirings of
:data:`MULTI_STAGE` (they run many Spark stages even on tiny inputs); and the
broadcast join ⊕-aggregating inside its tasks against listing every binding.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from faq.joins import Aggregation
from faq.joins.generic import generic_join
from faq.language import make_query
from faq.scope import Scope
from faq.semirings import get_semiring
from tests.brute_force import PY_SEMIRINGS, assert_same_answer, brute_force
from tests.conftest import examples as scaled_examples
from tests.strategies import DOMAIN, cyclic_faq, factors_of, nontrivial_faq
from tests.test_generic_join import FEW, ONE, aggregated_rows, check_faq

pytestmark = pytest.mark.usefixtures("spark")

#: Semirings whose random FAQs also run the shuffle and partitioned strategies (10-20 s of Spark stages
#: a semiring): one of each value type and kind of ⊕ -- integer sums, booleans, idempotent doubles,
#: double products.  Those strategies' code is the same for every semiring, and what differs -- the
#: semiring's Spark ⊗ (listing) and ⊕ (aggregating) -- the broadcast strategy runs for every semiring
#: here.  Under the ``thorough`` hypothesis profile (``make thorough``) every semiring runs them.
MULTI_STAGE = frozenset(PY_SEMIRINGS) if scaled_examples(1) > 1 else frozenset({"counting", "boolean", "min_plus",
                                                                                "max_product"})


@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
def test_random_faqs_agree_with_brute_force(semiring):
    """Random FAQs (tests/strategies.py) and random cyclic ones, with
    every InsideOut step joined by the generic join (acyclic bags too): the broadcast
    strategy on each example, the shuffle and partitioned strategies on one of each kind
    in the semirings of :data:`MULTI_STAGE` (they run several Spark stages even on tiny inputs)."""
    for strategy in (nontrivial_faq(semiring), cyclic_faq(semiring)):
        seen = []

        @FEW
        @given(strategy)
        def check(case):
            every = not seen and semiring in MULTI_STAGE
            joins = ("generic_broadcast", "generic_shuffle", "generic_partitioned") if every else ("generic_broadcast",)
            seen.append(case)
            check_faq(case, semiring, joins)

        check()


@pytest.mark.parametrize("semiring", sorted(PY_SEMIRINGS))
def test_aggregated_join_equals_listing_and_brute_force(semiring):
    """All atoms of a random FAQ as one bag, ⊕-aggregated onto its free variables: the
    broadcast join aggregating inside its tasks (numpy ⊗/⊕, partial aggregates) gives what
    listing every binding then aggregating gives, and what brute force gives — random cyclic
    FAQs (triangle, 4-cycle, ternary; up to two free variables) and a random FAQ with both
    free and bound variables.  The partitioned join aggregating in its cells (on a grid
    splitting every variable in two) and the shuffle join in batches give the same, on the
    first example of each kind in the semirings of :data:`MULTI_STAGE` (they run many Spark
    stages even on tiny inputs: about 2 and 10 s an example)."""
    from faq.insideout.binding import bind

    ring = get_semiring(semiring)
    partly_free = nontrivial_faq(semiring).filter(
        lambda case: 0 < len(case[2]) < len({v for _, vs in case[0] for v in vs})
    )
    for strategy, examples in ((cyclic_faq(semiring), FEW), (partly_free, ONE)):
        seen = []

        @examples
        @given(strategy)
        def check(case):
            seen.append(case)
            atoms, data, free = case
            expected = brute_force(atoms, data, free, semiring, DOMAIN)
            factors = factors_of(atoms, data, semiring)
            frames = list(bind(make_query(atoms, free, semiring=semiring), factors, ring).values())
            keep = tuple(free)
            aggregated = generic_join(frames, [], ring, (), strategy="broadcast", aggregate=Aggregation(keep, ring))
            assert aggregated.note.startswith("broadcast") and "; ⊕" in aggregated.note, aggregated.note
            assert aggregated.variables == keep
            listing = generic_join(frames, [], ring, (), strategy="broadcast")
            assert "⊕" not in listing.note
            assert_same_answer(aggregated_rows(aggregated, keep, ring), expected, "aggregated")
            assert_same_answer(aggregated_rows(listing, keep, ring), expected, "listing")
            if len(seen) > 1 or semiring not in MULTI_STAGE:
                return
            grid = {v: 2 for f in frames for v in f.variables}
            cells = generic_join(frames, [], ring, (), strategy="partitioned", aggregate=Aggregation(keep, ring),
                                 grid=grid)
            assert cells.note.startswith("partitioned grid") and "; ⊕" in cells.note, cells.note
            assert_same_answer(aggregated_rows(cells, keep, ring), expected, "partitioned")
            with Scope() as scope:  # owns each batch's checkpoint
                batched = generic_join(frames, [], ring, (), strategy="shuffle", aggregate=Aggregation(keep, ring),
                                       scope=scope, batches=3)
                assert "seeds in 3 batches" in batched.note and "per batch" in batched.note, batched.note
                assert batched.variables == keep
                assert_same_answer(aggregated_rows(batched, keep, ring), expected, "shuffle in batches")

        check()
