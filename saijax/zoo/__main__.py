"""``python -m saijax.zoo list|add`` (:func:`saijax.cli.zoo.main`)."""

import sys

from saijax.cli.zoo import main

sys.exit(main(exit_on_error=True))
