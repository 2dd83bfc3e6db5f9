"""``python -m faq``: the same as the ``faq`` command (see :mod:`faq.cli`)."""

import sys

from faq.cli import main

if __name__ == "__main__":
    sys.exit(main())
