"""``python -m saijax.elo``: the command's entry point (:mod:`saijax.cli.elo`).

The library is :mod:`saijax.analysis.elo`.
"""

import sys

from saijax.cli.elo import main

if __name__ == "__main__":
    sys.exit(main())
