"""Errors of maintained queries, tracked motifs and maintained fixpoints: bad deltas, versions, saved state.

Each class keeps what went wrong in :attr:`~faq.errors.FAQError.parameters`.

Examples
--------
>>> err = NonMonotoneUpdateError(factor="dist", kind="worsening", count=1, example=(3, 4), semiring="min_plus")
>>> err.parameters["kind"], isinstance(err, ValueError)
('worsening', True)
>>> print(BatchAlreadyAppliedError(version=3, current=5))
[BATCH_ALREADY_APPLIED] the batch for version 3 was applied already (the state is at version 5); it is not applied twice
"""

from __future__ import annotations

from typing import Any, Optional

from faq.errors import FAQRuntimeError, FAQTypeError, FAQValueError


class NonMonotoneUpdateError(FAQValueError):
    """An update that an insert-only (monotone) maintained answer cannot take.

    In an idempotent semiring (min, max, ∨) an update sets a key's value
    and must improve it (``new ⊕ old = new``): an insertion, a shorter
    weight, a wider capacity.  ``kind`` is ``"deletion"`` (the key or edge
    goes away) or ``"worsening"``.  Maintained queries, tracked motifs and
    maintained fixpoints all raise this one class; pass ``recompute=True``
    to recompute from scratch instead.

    Parameters
    ----------
    kind : {"deletion", "worsening"}
    count : int
        How many updates of that kind the batch holds.
    example : tuple, optional
        One of them: a key, an edge ``(src, dst)``, or ``(src, dst, old, new)``.
    semiring : str
    factor : str
        The factor (or graph) updated.
    where : str
        The batch file and line, when the batch came from a file.
    """

    error_class = "NON_MONOTONE_UPDATE"

    def __init__(self, kind: str, count: int, example: Optional[tuple] = None, semiring: str = "",
                 factor: str = "", where: str = "") -> None:
        shown = ""
        if example is not None:
            if kind == "worsening" and len(example) >= 4:
                shown = f" (e.g. edge {example[0]} -> {example[1]}: {example[2]} to {example[3]})"
            elif factor:
                shown = f" (e.g. key {example})"
            else:
                shown = f" (e.g. edge {example[0]} -> {example[1]})"
        what = "deletion(s)" if kind == "deletion" else "update(s) that make a value worse"
        place = f"{where}: " if where else ""
        of = f"factor {factor!r}: " if factor else ""
        super().__init__(
            f"{place}{of}{count} {what}{shown}; a maintained {semiring or 'answer'} answer only takes "
            "insertions and improvements; recompute from scratch (recompute=True) instead",
            kind=kind, count=count, example=example, semiring=semiring, factor=factor, where=where,
        )


# The name maintained queries used before the classes were merged.
NonMonotoneDeltaError = NonMonotoneUpdateError


class NegativeCountError(FAQValueError):
    """A delta would leave a counting factor with a negative multiplicity (deleting a missing row)."""

    error_class = "NEGATIVE_COUNT"

    def __init__(self, factor: str, count: int, example: Optional[tuple] = None) -> None:
        shown = f" (e.g. key {example})" if example is not None else ""
        super().__init__(
            f"factor {factor!r}: {count} key(s){shown} would get a negative count; "
            "a deletion must remove a row that is there",
            factor=factor, count=count, example=example,
        )


class NotMaintainableError(FAQTypeError):
    """The query cannot be maintained by delta rules (say why); it can still be recomputed."""

    error_class = "NOT_MAINTAINABLE"

    def __init__(self, reason: str) -> None:
        super().__init__(f"this query cannot be maintained incrementally: {reason}", reason=reason)


class BatchAlreadyAppliedError(FAQValueError):
    """A batch names a version the state has reached already: it is refused, not counted twice."""

    error_class = "BATCH_ALREADY_APPLIED"

    def __init__(self, version: int, current: int) -> None:
        super().__init__(
            f"the batch for version {version} was applied already (the state is at version {current}); "
            "it is not applied twice",
            version=version, current=current,
        )


class VersionGapError(FAQValueError):
    """A batch names a version beyond the next one: an earlier batch is missing."""

    error_class = "VERSION_GAP"

    def __init__(self, version: int, current: int) -> None:
        super().__init__(
            f"the batch is for version {version} but the state is at version {current}; "
            f"apply the batch for version {current + 1} first",
            version=version, current=current,
        )


class StateDirectoryError(FAQRuntimeError):
    """A directory does not hold a saved maintained state (or holds a different kind)."""

    error_class = "STATE_DIRECTORY"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}", path=path, reason=reason)


class InvalidDeltaError(FAQValueError):
    """A delta does not fit its factor (columns, types, or an unknown factor name)."""

    error_class = "INVALID_DELTA"

    def __init__(self, factor: str, reason: str, **extra: Any) -> None:
        super().__init__(f"delta for factor {factor!r}: {reason}", factor=factor, reason=reason, **extra)
