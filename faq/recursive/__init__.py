"""Recursive semiring queries: semi-naive fixpoints, kept current under insertions and deletions.

* :func:`fixpoint` -- the least fixpoint of ``value(y) = seed(y) ⊕ ⊕_x value(x) ⊗ edge(x, y)``
  in an idempotent semiring, evaluated semi-naively on Spark;
* :func:`reachability_on_spark`, :func:`shortest_paths_on_spark`, :func:`widest_paths_on_spark`, :func:`paths_on_spark`
  (single source; boolean, min_plus, max_min) and :func:`components_on_spark`;
* :class:`MaintainedFixpoint` -- such an answer kept current as batches of edges
  arrive (deletions and worse weights trim the derivation forest and derive the trimmed
  nodes again: :mod:`faq.recursive.trimming`): edges and
  answer are a resident index on the driver, so a batch runs no Spark job
  (:mod:`faq.recursive.propagate`), optionally durable and resumable (``path=``,
  :meth:`MaintainedFixpoint.open`); each batch returns a
  :class:`~faq.incremental.change.Change`;
* :func:`read_batch` / :func:`read_updates` -- ``+ src dst [weight]`` / ``- src dst`` update files.

See docs/design.md, "Monoid fixpoints".
"""

from faq._lazy import lazy_exports

# name -> the module that defines it, imported on first use: the maintained fixpoints pull in
# the incremental engine and pandas, which a semi-naive run or the CLI's parser does not need.
_EXPORTS = {
    "DEFAULT_MAX_ITERATIONS": "faq.recursive.seminaive",
    "MIN_LABEL": "faq.recursive.seminaive",
    "PATH_SEMIRINGS": "faq.recursive.seminaive",
    "FixpointResult": "faq.recursive.seminaive",
    "abs_weights": "faq.recursive.seminaive",
    "components_on_spark": "faq.recursive.seminaive",
    "fixpoint": "faq.recursive.seminaive",
    "paths_on_spark": "faq.recursive.seminaive",
    "reachability_on_spark": "faq.recursive.seminaive",
    "shortest_paths_on_spark": "faq.recursive.seminaive",
    "widest_paths_on_spark": "faq.recursive.seminaive",
    "Changes": "faq.recursive.maintained",
    "MaintainedFixpoint": "faq.recursive.maintained",
    "UpdateBatch": "faq.recursive.maintained",
    "maintain_components": "faq.recursive.maintained",
    "maintain_paths": "faq.recursive.maintained",
    "read_batch": "faq.recursive.maintained",
    "read_updates": "faq.recursive.maintained",
    "update_files": "faq.recursive.maintained",
}

__all__ = [
    "fixpoint",
    "paths_on_spark",
    "reachability_on_spark",
    "shortest_paths_on_spark",
    "widest_paths_on_spark",
    "components_on_spark",
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

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
