"""``python -m faq.cli``: the ``faq`` command (the same as ``python -m faq``)."""

import sys

from faq.cli import main

if __name__ == "__main__":
    sys.exit(main())
