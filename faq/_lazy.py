"""A package's public names, imported on first use (PEP 562 module ``__getattr__``).

``import faq`` and ``import faq.recursive`` stay cheap this way: the CLI, for
one, imports a command family's constants without loading every engine
behind the package (``faq.recursive`` alone pulls in pandas and the
incremental engine when loaded eagerly).

Examples
--------
>>> import types
>>> package = types.ModuleType("demo")
>>> package.__getattr__, package.__dir__ = lazy_exports("json", vars(package), {"dumps": "json"})
>>> package.dumps([1])
'[1]'
>>> "dumps" in dir(package)
True
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, MutableMapping


def lazy_exports(
    package: str, namespace: MutableMapping[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose names live in other modules.

    Parameters
    ----------
    package : str
        The package's name (``__name__``): its submodules are found too.
    namespace : mutable mapping
        The package's ``globals()``: a name, once imported, is stored there so
        later lookups skip ``__getattr__``.
    exports : mapping of str to str
        Public name -> the module that defines it.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            try:  # a submodule, as ``import package`` used to load them all
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as missing:
                if missing.name != f"{package}.{name}":  # the submodule exists; something it imports does not
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        else:
            value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        # the public names and the submodules loaded, not the package's own helpers (``annotations``,
        # ``lazy_exports``, private names): what ``dir(faq)`` shows is what a user may use
        public = {name for name, value in namespace.items() if not name.startswith("_")
                  and (name in exports or getattr(value, "__name__", "").startswith(f"{package}."))}
        return sorted(public | set(exports))

    return __getattr__, __dir__
