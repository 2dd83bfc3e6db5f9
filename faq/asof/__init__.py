"""As-of joins: each left row with the right row valid at its time.

* :mod:`faq.asof.kernel` -- the match: sorted runs per key, a binary search per left row (numba, numpy;
  one row's step in :mod:`faq.asof.search_step`, its compiled loop in :mod:`faq.asof.search_loop`);
* :mod:`faq.asof.merge_match` -- the same match for integer times as one merge of both sides sorted by
  (key, time) with the stable digit sort of :mod:`faq.radix` (large one-shot joins);
* :mod:`faq.asof.tables` -- a one-shot join of two Arrow tables in-process, as ``pandas.merge_asof``;
* :mod:`faq.asof.on_spark` -- the same per key partition on the executors (``mapInArrow``);
* :mod:`faq.asof.spark_window` -- the match as Spark's own sort and running window (no Python on the executors);
* :mod:`faq.asof.costs` -- the price of each way for Spark DataFrames, the cheapest taken;
* :mod:`faq.asof.oneshot` -- ``faq.asof_join``: every input kind, placed by the one placement policy and the
  prices of :mod:`faq.asof.costs`, and
  ``open_join``, which reopens a saved maintained join of either mode;
* kept current: :mod:`faq.asof.side` (one side's rows), :mod:`faq.asof.maintained` (the view),
  :mod:`faq.asof.locked` (the locked mode), :mod:`faq.asof.state` (their state directory).
"""

from faq._lazy import lazy_exports

_EXPORTS = {"asof_join": "faq.asof.oneshot", "open_join": "faq.asof.oneshot", "asof_tables": "faq.asof.tables",
            "asof_on_spark": "faq.asof.on_spark", "asof_window": "faq.asof.spark_window"}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
