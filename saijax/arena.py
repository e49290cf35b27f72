"""``python -m saijax.arena``: lockstep matches between two players (:mod:`saijax.cli.arena`).

The command's entry point. The library that plays the matches is
:mod:`saijax.play.arena`.
"""

import sys

from saijax.cli.arena import main

if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
