"""Where a maintained fixpoint's edges and answer are held: the one interface of its two placements.

:class:`~faq.recursive.maintained.MaintainedFixpoint` decides where its state
lives (:func:`faq.placement_policy.for_indexes`) and then holds one
:class:`FixpointHolder`, asking it everything that depends on that place:

* :class:`~faq.recursive.driver_placement.DriverFixpoint` -- a resident index
  and a value array on the driver; a batch runs no Spark job, deletions trim;
* :class:`~faq.recursive.spark_placement.ExecutorsFixpoint` -- edges and answer
  cached on Spark; a batch runs Spark jobs, deletions recompute.

The maintained fixpoint itself keeps what does not depend on the place: the
problem (semiring, source or components, default weight, rounds), version
checks and commits (:class:`~faq.incremental.durable.Maintained`), inputs,
streams and the manifest.  A holder calls back to it for those (its
``owner``, a :class:`FixpointOwner`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.factor import Factor
    from faq.incremental.change import Change
    from faq.incremental.durable import Versions
    from faq.io.updates import UpdateBatch
    from faq.semirings.numpy_backend import NumpyForm
    from faq.semirings import Semiring

__all__ = ["FixpointHolder", "FixpointOwner", "OLD"]

OLD = "old"  # the column of a change with a node's value before the batch


class FixpointOwner(Protocol):
    """What a holder reads of the maintained fixpoint that holds it, and the hooks it calls back."""

    semiring: "Semiring"
    ops: Optional["NumpyForm"]
    components: bool
    source: Optional[int]
    default_weight: Any
    max_iterations: int
    budget: int
    name: str
    placement_reason: str

    @property
    def version(self) -> int:
        """The versions applied."""

    def _note(self, text: str) -> None:
        """A progress note."""

    def _emit(self, event: Any) -> None:
        """A batch event, to the progress callback."""

    def _commit(self, target: int, label: Optional[str], *, change: Any,
                before_commit: Optional[Callable[[Any], None]], save: Callable[[list[str]], None],
                merge: Optional[Callable[[], None]] = None) -> list[str]:
        """Commit version ``target`` (:meth:`faq.incremental.durable.Maintained._commit`)."""

    def _manifest(self) -> dict[str, Any]:
        """What a saved state's manifest says of the problem."""

    def _arrays(self, edges: Any, *, weights: bool = True, initial: bool = False) -> tuple:
        """``(src, dst, weight)`` numpy arrays of any edges-like input."""


class FixpointHolder(Protocol):
    """What a maintained fixpoint asks of the place that holds its edges and answer."""

    #: ``"driver"`` or ``"executors"``, and why the state is there.
    where: str
    reason: str
    #: How a batch's insertions and deletions run there, and who writes a durable state (for ``explain``).
    inserts: str
    deletions: str
    writer: str
    #: Rounds of the first answer (as saved, for a reopened state).
    initial_iterations: int
    #: The name of the edges (a reopened state's, as saved).
    name: str

    @property
    def versions(self) -> "Versions":
        """Versions, labels and the durable store of this state."""

    @property
    def size(self) -> int:
        """Nodes with a value."""

    @property
    def edge_rows(self) -> int:
        """Edges held (for components: both directions)."""

    def table(self) -> "pa.Table":
        """The answer ``(node, value)``, sorted by node."""

    def head(self, n: int) -> list[tuple]:
        """The first ``n`` rows of the answer by node."""

    def value(self, node: int) -> Any:
        """The value of ``node`` (None when it has none)."""

    @property
    def state(self) -> "Factor":
        """The answer as a Spark factor ``(node) -> value``."""

    @property
    def edges(self) -> "Factor":
        """The current edges as a Spark factor ``(src, dst) -> weight``."""

    def batch(self, inserts: Any, deletes: Any, *, recompute: bool, target: int, label: str,
              update: Optional["UpdateBatch"], started: float,
              before_commit: Optional[Callable[["Change"], None]]) -> "Change":
        """Apply one batch as version ``target`` (committed through the owner); return the answer's change."""

    def recompute(self, started: float) -> "Change":
        """Solve again on the current edges (not a batch: the version stays)."""

    def attach(self, path: str) -> None:
        """Keep the state durable in ``path`` from now on (version 0 written)."""

    def close(self) -> None:
        """Free what the state holds (a saved state stays on disk)."""
