"""``python -m saijax.gtp``: the GTP engine's command line (docs/design.md §8).

The command line is parsed by one function, :func:`_parse_args`: the net
(``--player``, or its old name ``--checkpoint``: any player spec of
:mod:`saijax.cli.player`) and the player flags of
:func:`saijax.cli.player.add_player_flags` (their defaults, e.g. λ = 0 and
``--gumbel_scale 0``, are the arena's too), plus the engine's own komi,
resign threshold, seed and verbosity. A flag that cannot be used (a bad
checkpoint, ``--komi 6.3``, ``--gumbel_scale -1``) is one ``saijax.gtp:
error:`` line on stderr and exit code 2. The engine then serves GTP on
stdin/stdout (:func:`saijax.gtp.server.serve`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence

from saijax.cli import common
from saijax.cli import player as player_cli
from saijax.core import go
from saijax.gtp import server
from saijax.gtp.engine import GtpEngine

__all__ = ["main", "add_net_flags", "build_engine"]


def add_net_flags(parser: argparse.ArgumentParser) -> None:
    """The net's flags (``--player``/``--checkpoint``, ``--board_size``) and the player flags."""
    parser.add_argument(
        "--player",
        "--checkpoint",
        dest="player",
        default="random",
        help="the net: a workdir, its checkpoints dir, a generation dir, zoo:<name>, or random (the default)",
    )
    parser.add_argument(
        "--board_size",
        type=int,
        default=None,
        help="board size of a random net (default 9); with a checkpoint, must match it",
    )
    player_cli.add_player_flags(parser)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m saijax.gtp",
        description="GTP v2 engine for saijax networks (Sabaki, Lizzie, GoGui).",
    )
    add_net_flags(parser)
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--resign_threshold",
        type=float,
        default=0.05,
        help="resign when the best move's value is below this (negative: never)",
    )
    engine.add_argument("--komi", type=float, default=7.5, help="initial komi, a multiple of 0.5")
    engine.add_argument("--seed", type=int, default=0, help="PRNG seed (random net and searches)")
    engine.add_argument("--verbose", action="store_true", help="one line per genmove on stderr")
    return parser.parse_args(argv)


def build_engine(args: argparse.Namespace) -> GtpEngine:
    """The GTP engine of parsed flags (:func:`add_net_flags`' and ``--seed``; ``--komi``,
    ``--resign_threshold`` and ``--verbose`` where the namespace has them).

    Raises:
      ValueError, OSError: a flag that cannot be used (a bad checkpoint, ``--komi 6.3``, ...).
    """
    board_size = args.board_size or (9 if args.player in ("random", "uniform") else None)
    komi = go.check_komi(getattr(args, "komi", 7.5), "--komi")
    options = player_cli.options_from_args(args)
    # The engine derives a controlled search from the plain one (and
    # keeps the plain one for lz-setoption name control value off).
    plain = dataclasses.replace(options, control="off", control_options=())
    player = player_cli.load_player(args.player, board_size=board_size, options=plain, seed=args.seed)
    player = player.replace(control=options.control_config())
    return GtpEngine(
        player,
        visits=options.visits,
        lambda_=options.lambda_,
        mu=options.mu,
        threshold=options.threshold,
        resign_threshold=getattr(args, "resign_threshold", 0.05),
        komi=komi,
        seed=args.seed,
        verbose=getattr(args, "verbose", False),
        search_config=player.config,
        gumbel_scale=options.gumbel_scale,
    )


def main(argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """``python -m saijax.gtp``: serves GTP on stdin/stdout; returns the exit code.

    A checkpoint or option that cannot be loaded is one ``saijax.gtp: error:``
    line on stderr and exit code 2. With ``exit_on_error`` (the command line)
    the process ends right there, so that line is the last one on stderr.
    """
    args = _parse_args(argv)
    gtp_out = getattr(sys.stdout, "buffer", sys.stdout)
    # Only GTP responses go to the real stdout; stray prints go to stderr.
    saved_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        try:
            engine = build_engine(args)
        except (ValueError, OSError) as e:
            return common.report_error(f"saijax.gtp: error: {e}", 2, exit_now=exit_on_error)
        print(f"saijax.gtp: {engine.player.description}", file=sys.stderr)
        server.serve(engine, sys.stdin.buffer, gtp_out)
        return 0
    finally:
        sys.stdout = saved_stdout
