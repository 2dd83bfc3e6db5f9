"""Import a module, or load compiled kernels, in a background thread while the caller does other work.

A fresh ``faq`` command pays for the imports its kernels need inside its
own clock; some of that (scipy.sparse: 0.1-0.2 s, most of it cloning numpy
for scipy's array API layer) can overlap reading an edge file, which spends
its time in pyarrow's reader and numpy sorts.  The thread is a daemon and
only imports: a later ``import`` of the same module in any thread waits for
it (Python's per-module import lock) and then finds it loaded; an import
that fails in the background fails again, with its traceback, where the
module is really imported.

Examples
--------
>>> import sys
>>> _ = sys.modules.pop("colorsys", None)     # (a small module, as if never imported)
>>> thread = import_in_background("colorsys")
>>> thread.join()
>>> "colorsys" in sys.modules
True
>>> import_in_background("colorsys") is None   # loaded already: nothing to do
True
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Callable, Optional

__all__ = ["import_in_background", "run_in_background"]


def import_in_background(name: str) -> Optional[threading.Thread]:
    """Start importing module ``name`` in a daemon thread; None when it is loaded already.

    Parameters
    ----------
    name : str
        A dotted module name, such as ``"scipy.sparse"``.

    Returns
    -------
    threading.Thread or None
        The started thread (joining it is optional).
    """
    if name in sys.modules:
        return None
    return run_in_background(importlib.import_module, name, label=f"import-{name}")


def run_in_background(function: Callable[..., object], *arguments: object, label: str) -> threading.Thread:
    """Start ``function(*arguments)`` in a daemon thread named ``faq-<label>``, its result and any error dropped.

    For work whose only effect is a cache warmed (a module imported, numba kernels loaded): the caller
    does the same work later and meets a failure there, with its message.

    >>> run_in_background(int, "x", label="fails quietly").join()
    """
    thread = threading.Thread(target=_quietly, args=(function, arguments), name=f"faq-{label}", daemon=True)
    thread.start()
    return thread


def _quietly(function: Callable[..., object], arguments: tuple) -> None:
    try:
        function(*arguments)
    except Exception:  # noqa: BLE001 - the real call, later, raises it where it matters
        pass
