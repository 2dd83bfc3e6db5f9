"""The one owner of the Spark resources a result holds.

Every faq result that keeps something alive on Spark — a persisted
DataFrame, a local checkpoint, a broadcast index, a resident state — holds a
:class:`Scope`, and its ``close()`` (or ``with result:``) releases exactly
what it owns, once.  A scope works like :class:`contextlib.ExitStack`:
resources are *entered* as they are made (:meth:`Scope.persist`,
:meth:`Scope.checkpoint`, :meth:`Scope.adopt`), released early when no longer
needed (:meth:`Scope.release`), *handed over* to whoever takes them on
(:meth:`Scope.hand_over` for one, :meth:`Scope.take_over` for all of a part's
scope), and all released, newest first, by :meth:`Scope.close`.  :meth:`Scope.closing_on_error` replaces the
``try: ... except BaseException: release(...); raise`` blocks of code that
builds a result: if building fails, nothing stays cached.

Releasing a DataFrame is :func:`faq.spark.release` (its cache and, for a
local checkpoint, the checkpoint's blocks); any other resource is released
by its ``close()`` or ``unpersist()`` method, or by the function given to
:meth:`Scope.adopt`.

Examples
--------
>>> from faq.scope import Scope
>>> from faq.spark import get_session
>>> df = get_session().range(10)
>>> with Scope() as scope:
...     kept = scope.persist(df)
...     kept.count(), scope.owns(kept), len(scope)
(10, True, 1)
>>> kept.storageLevel.useMemory  # released when the scope closed
False
>>> scope = Scope()
>>> try:
...     with scope.closing_on_error():
...         _ = scope.persist(df)
...         raise ValueError("building the result failed")
... except ValueError:
...     len(scope)
0
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, TypeVar

from faq.errors import ScopeClosedError, UnreleasableResourceError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

T = TypeVar("T")


class Scope:
    """Spark resources owned together and released together (see the module notes)."""

    def __init__(self) -> None:
        # id -> (resource, how to release it), in the order they were entered.
        self._held: dict[int, tuple[Any, Callable[[], None]]] = {}
        self._closed = False

    # --- entering ------------------------------------------------------------------

    def persist(self, df: "DataFrame", level: Any = None) -> "DataFrame":
        """``df.persist(level)`` (memory and disk by default), owned by this scope."""
        from pyspark import StorageLevel

        return self.adopt(df.persist(level or StorageLevel.MEMORY_AND_DISK))

    def checkpoint(self, df: "DataFrame", eager: bool = True) -> "DataFrame":
        """:func:`faq.spark.checkpoint` of ``df`` (lineage cut), owned by this scope."""
        from faq.spark import checkpoint

        return self.adopt(checkpoint(df, eager=eager))

    def checkpoint_observed(self, df: "DataFrame", metrics: Mapping[str, "Column"]) -> tuple["DataFrame", dict]:
        """:func:`faq.spark.checkpoint_observed`; the checkpoint is owned by this scope."""
        from faq.spark import checkpoint_observed

        kept, values = checkpoint_observed(df, metrics)
        return self.adopt(kept), values

    def adopt(self, resource: T, release: Optional[Callable[[], None]] = None) -> T:
        """Own ``resource`` (None passes through); ``release`` frees it (default: see the module notes)."""
        if resource is None:
            return resource
        if self._closed:
            raise ScopeClosedError(resource=type(resource).__name__)
        self._held[id(resource)] = (resource, release or _default_release(resource))
        return resource

    def callback(self, release: Callable[[], None]) -> None:
        """Run ``release`` when the scope closes (for resources that are not objects of their own)."""
        self.adopt(release, release)

    # --- leaving -------------------------------------------------------------------

    def owns(self, resource: Any) -> bool:
        """True while ``resource`` is held by this scope."""
        return id(resource) in self._held

    def release(self, resource: Any) -> None:
        """Free ``resource`` now if this scope owns it (anything else, None included, is left alone)."""
        held = self._held.pop(id(resource), None)
        if held is not None:
            held[1]()

    def hand_over(self, resource: T) -> T:
        """Stop owning ``resource`` without freeing it: the caller (or another scope) takes it on."""
        self._held.pop(id(resource), None)
        return resource

    def take_over(self, other: "Scope") -> None:
        """Own everything ``other`` owns (``other`` is left empty): a part's resources join the whole's."""
        if other is self:
            return
        if self._closed:
            raise ScopeClosedError(resource=type(other).__name__)
        self._held.update(other._held)
        other._held.clear()

    def close(self) -> None:
        """Free everything still owned, newest first; a second call does nothing."""
        self._closed = True
        while self._held:
            _, (_, release) = self._held.popitem()
            release()

    @contextlib.contextmanager
    def closing_on_error(self) -> Iterator["Scope"]:
        """Close the scope if the block raises (building a result failed), then re-raise."""
        try:
            yield self
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (what it held is released)."""
        return self._closed

    def __len__(self) -> int:
        return len(self._held)

    def __enter__(self) -> "Scope":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Scope({len(self._held)} resource(s){', closed' if self._closed else ''})"


class Owner:
    """Mixin for results that hold a :class:`Scope` as ``self.scope``: ``close()`` and ``with``."""

    scope: Scope

    def close(self) -> None:
        """Release every Spark resource this result holds."""
        self.scope.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _default_release(resource: Any) -> Callable[[], None]:
    from faq.spark import is_dataframe, release

    if is_dataframe(resource):  # before the method probes below, which any Connect DataFrame passes
        return lambda: release(resource)  # its cache and checkpoint blocks
    for name in ("close", "unpersist"):
        method = getattr(resource, name, None)
        if callable(method):
            return method
    if callable(resource):
        return resource
    raise UnreleasableResourceError(kind=type(resource).__name__)
