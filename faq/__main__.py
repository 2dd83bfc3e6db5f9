"""``python -m faq``: the same as the ``faq`` command (see :mod:`faq.cli`).

The one module outside ``faq/cli/`` that imports the CLI: it is the command's
second entry point, not part of the library.
"""

import sys

from faq.cli import main

if __name__ == "__main__":
    sys.exit(main())
