"""How one catalog entry becomes a message: :class:`ErrorClass` and the format specs its template may use.

An entry holds a :meth:`str.format` template and the parameters it takes.
Computed text in a message (a joined list, a clipped line, a caret under a
position) comes from a format spec on one parameter (``{valid:names}``, see
:data:`FORMAT_SPECS`) or from a ``derived`` field of the entry, never from
code in an error class.  The entries themselves are in
:mod:`faq.errors.catalog`.

Examples
--------
>>> entry = ErrorClass("unknown {what} {name!r}; valid: {valid:names}", ("what", "name", "valid"))
>>> entry.render(entry.bind("DEMO", ("semiring", "tropical", ["real"]), {}))
"unknown semiring 'tropical'; valid: real"
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

#: The parameters of one error, by name.
Parameters = Mapping[str, Any]


# --- the formatters a template may use ----------------------------------------------------


#: Most names a ``{...:names}`` field lists (a query can have thousands of variables).
NAMES_SHOWN = 20


def _names(values: Sequence[Any]) -> str:
    """``a, b, c``, or ``(none)`` for an empty list; the first :data:`NAMES_SHOWN` of a long one.

    >>> _names(range(25))
    '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, … (+5 more)'
    """
    values = list(values)
    more = f", … (+{len(values) - NAMES_SHOWN} more)" if len(values) > NAMES_SHOWN else ""
    return ", ".join(str(v) for v in values[:NAMES_SHOWN]) + more or "(none)"


def _caret(position: int) -> str:
    """A ``^`` under the 0-based ``position`` of the text on the line above."""
    return " " * position + "^"


def clip(text: str, width: int = 80) -> str:
    """The text quoted, cut to ``width`` characters (an input line can be huge).

    >>> clip("x" * 100, width=10)
    "'xxxxxxx...'"
    """
    return repr(text if len(text) <= width else text[: width - 3] + "...")


#: Most characters of an input a message quotes around a position (:func:`window`).
WINDOW = 200


def window(text: str, position: int, width: int = WINDOW) -> tuple[str, int]:
    """At most ``width`` characters of ``text`` around ``position``, and the column of ``position`` in them.

    A long text (a query of a megabyte) is cut to a window centred on the position, marked with
    ``…`` where it was cut; tabs and line breaks show as spaces, so that a caret written that many
    columns in stands under the character at ``position``.

    >>> window("abc", 1)
    ('abc', 1)
    >>> shown, column = window("x" * 1000 + "!" + "y" * 1000, 1000, width=20)
    >>> shown, column, shown[column]
    ('…xxxxxxxxxx!yyyyyyyyy…', 11, '!')
    """
    start = max(0, min(position - width // 2, len(text) - width))
    end = min(len(text), start + width)
    shown = text[start:end].translate(_ONE_COLUMN)
    head = "…" if start > 0 else ""
    return head + shown + ("…" if end < len(text) else ""), position - start + len(head)


_ONE_COLUMN = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


#: Format specs a template may put on one parameter: ``{valid:names}``.
FORMAT_SPECS: dict[str, Callable[[Any], str]] = {"names": _names, "caret": _caret, "clip": clip,
                                                 "count": "{:,}".format}  # 2,000,000


class _TemplateFormatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in FORMAT_SPECS:
            return FORMAT_SPECS[format_spec](value)
        return super().format_field(value, format_spec)


_FORMATTER = _TemplateFormatter()


def template_fields(message: str) -> list[tuple[str, str]]:
    """The ``(field name, format spec)`` pairs of a template, in order.

    >>> template_fields("{path}, line {line_number}: {line:clip}")
    [('path', ''), ('line_number', ''), ('line', 'clip')]
    """
    return [(name.split(".")[0].split("[")[0], spec or "")
            for _, name, spec, _ in _FORMATTER.parse(message) if name is not None]


# --- one entry of the catalog -------------------------------------------------------------


@dataclass(frozen=True)
class ErrorClass:
    """The message template of one error name and the parameters it takes.

    Parameters
    ----------
    message : str
        :meth:`str.format` template.  Its fields are parameters (with a spec
        from :data:`FORMAT_SPECS` or a conversion such as ``!r``) or
        ``derived`` fields.
    parameters : tuple of str
        Every parameter, in the order positional arguments bind to them.
    optional : mapping
        Parameters a raiser may leave out, with the value the message uses
        then.  One left out is absent from :attr:`FAQError.parameters`.
    convert : mapping
        How a parameter is stored, e.g. ``sorted`` (any iterable becomes a
        sorted list) or ``list``.
    derived : mapping
        Text fields computed from all parameters (defaults filled in), for
        wording that depends on several of them.
    extra : bool
        Keyword parameters beyond ``parameters`` are kept (not shown).
    """

    message: str
    parameters: tuple[str, ...]
    optional: Mapping[str, Any] = field(default_factory=dict)
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    derived: Mapping[str, Callable[[Parameters], str]] = field(default_factory=dict)
    extra: bool = False

    def bind(self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters of one error: ``args`` bound in order, then ``kwargs``, converted.

        A wrong call is a bug in faq, so it raises ``TypeError`` naming the error.
        """
        if len(args) > len(self.parameters):
            raise TypeError(f"{name} takes at most {len(self.parameters)} parameters, got {len(args)}")
        given = dict(zip(self.parameters, args))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"{name}: parameter {key!r} given twice")
            if key not in self.parameters and not self.extra:
                raise TypeError(f"{name} has no parameter {key!r}; it takes {', '.join(self.parameters)}")
            given[key] = value
        missing = [p for p in self.parameters if p not in given and p not in self.optional]
        if missing:
            raise TypeError(f"{name} needs the parameter(s) {', '.join(missing)}")
        return {key: self.convert[key](value) if key in self.convert else value for key, value in given.items()}

    def render(self, parameters: Parameters) -> str:
        """The message text for these parameters (left-out optional ones take their default)."""
        values = {**self.optional, **parameters}
        values.update({key: make(values) for key, make in self.derived.items()})
        return _FORMATTER.format(self.message, **values)
