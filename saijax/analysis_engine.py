"""``python -m saijax.analysis_engine``: KataGo's analysis protocol, or SGF batch analysis.

The command's entry point; its command line is :mod:`saijax.cli.analysis_engine`.
"""

import sys

from saijax.cli.analysis_engine import main

if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
