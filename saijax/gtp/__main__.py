"""``python -m saijax.gtp``: the GTP engine on stdin/stdout (:func:`saijax.gtp.server.main`)."""

import sys

from saijax.gtp.server import main

if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
