"""Recursive semiring queries: semi-naive fixpoints, kept current under insert-only updates.

* :func:`fixpoint` -- the least fixpoint of ``value(y) = seed(y) ⊕ ⊕_x value(x) ⊗ edge(x, y)``
  in an idempotent semiring, evaluated semi-naively on Spark;
* :func:`reachability`, :func:`shortest_paths`, :func:`widest_paths`, :func:`paths`
  (single source; boolean, min_plus, max_min) and :func:`connected_components`;
* :class:`MaintainedFixpoint` -- such an answer kept current as batches of edges
  arrive (insert-only; deletions and worsening updates raise
  :class:`~faq.errors.NonMonotoneUpdateError` unless recomputation is asked for): edges and
  answer are a resident index on the driver, so a batch runs no Spark job
  (:mod:`faq.recursive.propagate`), optionally durable and resumable (``path=``,
  :meth:`MaintainedFixpoint.open`); each batch returns a
  :class:`~faq.incremental.change.Change`;
* :func:`read_batch` / :func:`read_updates` -- ``+ src dst [weight]`` update files.

See DESIGN.md §3 ("Monoid fixpoints").
"""

from faq.recursive.seminaive import (
    DEFAULT_MAX_ITERATIONS,
    MIN_LABEL,
    PATH_SEMIRINGS,
    FixpointResult,
    abs_weights,
    connected_components,
    fixpoint,
    paths,
    reachability,
    shortest_paths,
    widest_paths,
)
from faq.recursive.maintained import (
    Changes,
    MaintainedFixpoint,
    UpdateBatch,
    maintain_components,
    maintain_paths,
    read_batch,
    read_updates,
    update_files,
)

__all__ = [
    "fixpoint",
    "paths",
    "reachability",
    "shortest_paths",
    "widest_paths",
    "connected_components",
    "abs_weights",
    "FixpointResult",
    "MaintainedFixpoint",
    "Changes",
    "maintain_paths",
    "maintain_components",
    "UpdateBatch",
    "read_batch",
    "read_updates",
    "update_files",
    "MIN_LABEL",
    "PATH_SEMIRINGS",
    "DEFAULT_MAX_ITERATIONS",
]
