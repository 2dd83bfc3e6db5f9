"""The ``faq`` command (``faq = "faq.cli:main"``; also ``python -m faq`` and ``python -m faq.cli``).

One module per concern; the library (everything outside ``faq/cli/``) imports
nothing from here (``tests/test_cli_imports.py`` checks it).

=====================  =====================================================================
:mod:`.entry`          the parser (assembled from the command modules), :func:`main`, the
                       exit codes, one-line errors, Spark's start and stop
:mod:`.inputs`         options every command takes, argparse types, checks that need no Spark
:mod:`.output`         JSON lines, tables, previews (``PREVIEW_ROWS``), ``--out`` files
:mod:`.queries`        ``triangles``, ``matrix-chain``, ``query``, ``explain``
:mod:`.motifs`         ``motif``
:mod:`.fixpoints`      ``paths``, ``components``
:mod:`.tracking`       ``track``
:mod:`.serve`          ``serve`` (the command)
:mod:`.server`         the background Spark Connect server ``faq serve`` starts and stops
=====================  =====================================================================

To add a command: a module with ``add_commands(commands, common)`` (see
:mod:`faq.cli.entry` for what it sets), listed in ``entry.COMMAND_MODULES``.

Examples
--------
>>> main(["--version"])  # doctest: +ELLIPSIS
faq ...
0
"""

from faq.cli.entry import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, build_parser, main

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_INTERRUPTED"]
