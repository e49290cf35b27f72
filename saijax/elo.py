"""``python -m saijax.elo``: the command's entry point (:mod:`saijax.cli.elo`).

The library is :mod:`saijax.analysis.elo`; its old import path, ``saijax.elo.<name>``,
still works and names the new one.
"""

import sys

from saijax import _moved
from saijax.cli.elo import main

__getattr__ = _moved.forward_module(__name__, "saijax.analysis.elo")

if __name__ == "__main__":
    sys.exit(main())
