"""``python -m saijax.gtp``: the GTP engine on stdin/stdout (:func:`saijax.cli.gtp.main`)."""

import sys

from saijax.cli.gtp import main

if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
