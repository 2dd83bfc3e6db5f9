"""The base of every faq error, :class:`FAQError`, and the generic class of each kind.

:class:`FAQError` builds the message ``"[NAME] text"`` from its catalog entry
(:mod:`faq.errors.catalog`) and keyword parameters, and keeps the parameters
in :attr:`FAQError.parameters`, so tests and callers can see *what* went
wrong without parsing text.  Each kind pairs it with a built-in type
(``ValueError``, ``KeyError``, ``TypeError``, ``RuntimeError``), so both
``except FAQError`` and ``except ValueError`` catch an error.  An entry
without a class of its own is raised through the generic class of its kind:

>>> err = FAQRuntimeError(error_class="JAVA_NOT_FOUND", found=None)
>>> err.error_class, isinstance(err, RuntimeError)
('JAVA_NOT_FOUND', True)
"""

from __future__ import annotations

from typing import Any

from faq.errors.catalog import ERROR_CLASSES


class FAQError(Exception):
    """Base class of every faq error: a catalog entry and its parameters.

    Parameters
    ----------
    *args
        Parameters of the entry, in its order (keywords are clearer).
    error_class : str, optional
        The entry's name; default the class's own :attr:`error_class`.
    **parameters
        Parameters of the entry by name.

    Attributes
    ----------
    error_class : str
        The upper-case name of the entry in :data:`ERROR_CLASSES`.
    parameters : dict
        What went wrong, by name (as given, optional ones only when given).
    message : str
        The message without the ``[NAME]`` prefix.

    Examples
    --------
    >>> import faq
    >>> try:
    ...     faq.get_semiring("no_such_ring")
    ... except faq.FAQError as error:                # every faq error is one
    ...     print(error.error_class, sorted(error.parameters))
    UNKNOWN_SEMIRING ['name', 'valid']
    """

    error_class: str = "FAQ_ERROR"

    def __init__(self, *args: Any, error_class: str | None = None, **parameters: Any) -> None:
        if error_class is not None:
            self.error_class = error_class
        entry = ERROR_CLASSES[self.error_class]
        self.parameters: dict[str, Any] = entry.bind(self.error_class, args, parameters)
        self.message: str = entry.render(self.parameters)
        super().__init__(f"[{self.error_class}] {self.message}")

    # KeyError would repr() the message and OSError format its own; the text is what we want.
    __str__ = Exception.__str__


class FAQValueError(FAQError, ValueError):
    """A value given to faq is not acceptable."""

    error_class = "INVALID_VALUE"


class FAQKeyError(FAQValueError, KeyError):
    """A name (semiring, column, factor, variable, node) that is not there."""


class FAQTypeError(FAQError, TypeError):
    """Types do not fit together."""

    error_class = "TYPE_MISMATCH"


class FAQRuntimeError(FAQError, RuntimeError):
    """Something faq relies on failed at run time."""

