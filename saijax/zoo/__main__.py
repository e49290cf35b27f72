import sys

from saijax.zoo import main

sys.exit(main(exit_on_error=True))
