"""``python -m saijax.arena``: lockstep matches between two players (:mod:`saijax.cli.arena`).

The command's entry point. The library that plays the matches is
:mod:`saijax.play.arena`; its old import path, ``saijax.arena.play_match``,
still works and names the new one.
"""

import sys

from saijax import _moved
from saijax.cli.arena import main

__getattr__ = _moved.forward_module(__name__, "saijax.play.arena")

if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
