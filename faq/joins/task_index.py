"""What a generic-join task holds: the :class:`Kernel` value, and the :class:`TaskIndex` that hands it over.

The bottom of the generic join's layers (the map is in :mod:`faq.joins.generic`).
A :class:`Kernel` is plain numpy data: the relations' tries (inside their
extenders, :mod:`faq.joins.extenders`), the seeds, and what the task emits.
It is built by :func:`faq.joins.kernel.build_kernel`, read by the compiled
loop (:mod:`faq.joins.compiled`) and run by :func:`faq.joins.kernel.run_kernel`;
the broadcast strategy ships it to its tasks behind a :class:`TaskIndex`,
which also says what they emit (so the driver can give Spark the schema
before any task ran).  Nothing here imports Spark.

Examples
--------
>>> from faq.joins import Aggregation
>>> from faq.semirings import COUNTING
>>> output_names(None, ["a", "b"], [0, 2])
(('a', 'b'), ['a', 'b', '__g0', '__g2'])
>>> output_names(Aggregation(("a",), COUNTING), ["a", "b"], [0, 2])
(('a',), ['a', '__v'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from faq.joins import partial as partial_aggregates
from faq.joins.frame import VALUE_COLUMN, Aggregation

if TYPE_CHECKING:
    from faq.joins.csr import Encoding
    from faq.joins.extenders import TrieExtender
    from faq.semirings.numpy_backend import NumpyForm

__all__ = ["Kernel", "TaskIndex", "output_names", "seed_count"]


@dataclass
class Kernel:
    """Everything a task needs, shipped once: tries (inside the extenders) and seeds."""

    extenders: list[list["TrieExtender"]]  # per attribute after the first
    seeds: dict  # Chunk columns of the seeds (first attribute and trie entries)
    encoding: "Encoding"
    outputs: list[int]  # attribute position of each output variable
    values: list[tuple[int, np.ndarray]]  # (use, values aligned with its last level)
    names: list[str]  # output columns
    batch_rows: int
    ops: Optional["NumpyForm"] = None  # aggregate inside the task (outputs: the kept variables)
    bound: int = 1  # magnitude bound of one binding's integer value (PartialAggregate)
    flush_rows: int = partial_aggregates.FLUSH_ROWS  # PartialAggregate's buffer (set on the driver)
    compiled: bool = False  # ⊕ to one value by the compiled loop (faq.joins.compiled)
    flat: Any = None  # the compiled loop's flat arrays, in place of the tries (compiled.for_tasks)


@dataclass
class TaskIndex:
    """What the broadcast tasks read, and the shape of what they emit.

    ``handle.value`` is the kernel in a task (:class:`~faq.joins.mapped.MappedIndex`
    when built on the driver, :class:`~faq.joins.mapped.BuiltIndex` when built on
    the executors); ``seeds`` the number of seeds (None: counted where it is
    built); ``rows`` the index's input rows; ``names`` the emitted columns, the
    first ``keys`` of them keys; ``gathered`` the uses whose values are
    gathered (listing); ``aggregated`` whether tasks emit partial aggregates.
    """

    handle: Any
    seeds: Optional[int]
    rows: int
    names: list[str]
    keys: int
    gathered: list[int]
    aggregated: bool
    note: str


def output_names(
    aggregate: Optional[Aggregation], variables: Sequence[str], gathered: Sequence[int]
) -> tuple[tuple[str, ...], list[str]]:
    """(key columns, all columns) a task emits: the kept keys and the ⊕ (``aggregate``: partial
    aggregates), or every variable and the gathered values ``__g<i>`` (listing)."""
    if aggregate is not None:
        return tuple(aggregate.keep), [*aggregate.keep, VALUE_COLUMN]
    return tuple(variables), [*variables, *(f"__g{i}" for i in gathered)]


def seed_count(kernel: Kernel) -> int:
    """The number of seeds of ``kernel`` (first-attribute values)."""
    return len(next(iter(kernel.seeds.values()))) if kernel.seeds else 0
