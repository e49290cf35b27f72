"""``python -m saijax.compact_leg``: the command's entry point (:mod:`saijax.cli.compact_leg`).

The library is :mod:`saijax.learn.compact_leg`; its old import path, ``saijax.compact_leg.<name>``,
still works and names the new one.
"""

import sys

from saijax import _moved
from saijax.cli.compact_leg import main

__getattr__ = _moved.forward_module(__name__, "saijax.learn.compact_leg")

if __name__ == "__main__":
    sys.exit(main())
