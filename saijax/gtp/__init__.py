"""A GTP v2 engine for SAI networks, with Leela Zero and KataGo analysis.

Run it with a checkpoint (a workdir, its ``checkpoints`` directory or one
generation's directory), or without one for a random net::

    python -m saijax.gtp --checkpoint=runs/go9 --visits=200
    python -m saijax.gtp --board_size=5 --visits=8

and point Sabaki, Lizzie or GoGui at that command (docs/design.md §8).

The package's layers import downward only:

* :mod:`saijax.gtp.protocol`: GTP v2 parsing and response formatting;
* :mod:`saijax.gtp.analysis`: positions, search rounds and the pooling of
  streaming analysis (``lz-analyze``, ``kata-analyze``, ``*-genmove_analyze``);
* :mod:`saijax.gtp.engine`: :class:`GtpEngine`, its game state, searches,
  options and commands;
* :mod:`saijax.gtp.server`: :func:`serve` (the stdin/stdout loop).

Its command line, ``python -m saijax.gtp``, is :func:`saijax.cli.gtp.main`.

KataGo's JSON analysis protocol (KaTrain), over the same player and search,
is ``python -m saijax.analysis_engine`` (:func:`saijax.cli.analysis_engine.main`):

* :mod:`saijax.gtp.kata_query`: one query read, its positions replayed;
* :mod:`saijax.gtp.kata_engine`: :class:`~saijax.gtp.kata_engine.AnalysisEngine`,
  all pending positions searched in lockstep batches, and its stdin/stdout loop;
* :mod:`saijax.gtp.batch_analysis`: SGF files analysed into CSVs and annotated SGFs.
"""

from saijax.gtp.analysis import Analysis
from saijax.gtp.engine import GtpEngine
from saijax.gtp.server import serve

__all__ = ["GtpEngine", "Analysis", "serve"]
