"""``python -m saijax.compact_leg``: the command's entry point (:mod:`saijax.cli.compact_leg`).

The library is :mod:`saijax.learn.compact_leg`.
"""

import sys

from saijax.cli.compact_leg import main

if __name__ == "__main__":
    sys.exit(main())
