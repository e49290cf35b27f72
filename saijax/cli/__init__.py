"""The command lines: one module per command, over the layers below (README, "How the pieces fit").

``python -m saijax.train`` is :mod:`saijax.cli.train`, ``saijax.arena``
:mod:`saijax.cli.arena`, ``saijax.gtp`` :mod:`saijax.cli.gtp`,
``saijax.zoo`` :mod:`saijax.cli.zoo`, ``saijax.elo`` :mod:`saijax.cli.elo`,
``saijax.compact_leg`` :mod:`saijax.cli.compact_leg`; :mod:`saijax.cli.player`
is the player specs and flags they share, :mod:`saijax.cli.common` their one-line
error exit (re-exported here). Nothing outside this package imports it but
the commands' entry points.
"""

from saijax.cli.common import exit_with_error, report_error

__all__ = ["exit_with_error", "report_error"]
