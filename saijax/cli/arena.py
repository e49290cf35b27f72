"""The arena's command line: ``python -m saijax.arena`` (docs/design.md §8).

Plays a player against another player (lockstep, :func:`saijax.play.arena.play_match`)
or against a GTP engine (:func:`saijax.play.gtp_match.play_gtp_match`) and prints
the games and a report. It lives apart from :mod:`saijax.play.arena` because it
loads the front door of every player kind (:mod:`saijax.cli.player`, the
model zoo) and the GTP modules, which the arena library (training's gating)
does without; ``python -m saijax.arena`` runs :func:`main` here.

::

    python -m saijax.arena --player=runs/go7 --opponent=gnugo:10 --games=20 \\
        --board_size=7 --komi=9.5 --visits=64 --results=/tmp/r.csv

``--player`` and ``--opponent`` take a player spec of
:mod:`saijax.cli.player` (``random``, ``uniform``, ``zoo:NAME``, a
checkpoint), the opponent also ``gnugo:LEVEL`` (GNU Go may not resign unless
``--gnugo_may_resign``) or ``gtp:<command line>``. The player flags
(``--visits``, ``--lambda_``, ``--gumbel_scale``, ``--control`` ...) and
their ``--opponent_`` twins are :func:`saijax.cli.player.add_player_flags`'.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from saijax import cli
from saijax.analysis import results
from saijax.cli import player as player_cli
from saijax.play import arena, gtp_match, match

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m saijax.arena",
        description="Play a network against another network or a GTP engine; print a report.",
    )
    p.add_argument("--player", required=True, help="a player spec: random, uniform, zoo:NAME or a checkpoint")
    p.add_argument(
        "--opponent",
        required=True,
        help="a player spec (random, uniform, zoo:NAME, a checkpoint) or an engine: gnugo:LEVEL or gtp:<command>",
    )
    player_cli.add_player_flags(p)
    player_cli.add_player_flags(p, prefix="opponent_")
    m = p.add_argument_group("match")
    m.add_argument("--games", type=int, default=20)
    m.add_argument("--board_size", type=int, default=9)
    m.add_argument("--komi", type=float, default=None, help="default 7.5 (0.5 with handicap)")
    m.add_argument("--handicap", type=int, default=0)
    m.add_argument(
        "--colours",
        choices=match.COLOURS,
        default="alternate",
        help="the player's colour: alternating (Black in even games), always Black, or always White",
    )
    m.add_argument(
        "--opening_moves",
        type=int,
        default=4,
        help=(
            "random moves (pass excluded) that open each game, the same for both games of a colour pair "
            "(default 4, as gating: deterministic players, gumbel_scale 0, would otherwise repeat the same two games)"
        ),
    )
    m.add_argument("--seed", type=int, default=0, help="match seed (the random net's is this, the opponent's +1)")
    m.add_argument("--max_moves", type=int, default=None, help="move cap (default 2*N^2)")
    m.add_argument("--resign_threshold", type=float, default=None, help="off by default")
    m.add_argument("--resign_after", type=int, default=None, help="default N^2/4")
    m.add_argument("--score_visits", type=int, default=1000, help="0: reuse the move search's tree")
    m.add_argument("--name", default=None)
    m.add_argument("--opponent_name", default=None)
    m.add_argument("--results", default=None, help="results table (.jsonl or .csv), appended")
    m.add_argument("--sgf_dir", default=None)
    m.add_argument("--gtp_timeout", type=float, default=120.0)
    m.add_argument(
        "--gnugo_may_resign",
        action="store_true",
        help="let GNU Go resign (by default it plays every game out: --never-resign)",
    )
    m.add_argument("--quiet", action="store_true", help="no per-game lines")
    return p


def main(argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """``python -m saijax.arena``: plays the match and prints the report; returns the exit code.

    A player that cannot be loaded (missing or corrupt checkpoint, bad
    option) is one ``saijax.arena: error:`` line on stderr and exit code 2.
    With ``exit_on_error`` (the command line) the process ends right there,
    so that line is the last one on stderr.
    """
    args = _build_parser().parse_args(argv)

    def fail(e):
        return cli.report_error(f"saijax.arena: error: {e}", 2, exit_now=exit_on_error)

    log = None if args.quiet else (lambda line: print(line, flush=True))
    opp = args.opponent
    try:
        settings = match.MatchSettings(
            games=args.games,
            komi=args.komi,
            handicap=args.handicap,
            colours=args.colours,
            seed=args.seed,
            max_moves=args.max_moves,
            resign_threshold=args.resign_threshold,
            resign_after=args.resign_after,
            score_visits=args.score_visits or None,
            opening_moves=args.opening_moves,
            sgf_dir=args.sgf_dir,
            results_path=args.results,
        )
        settings.rules(args.board_size)
        if player_cli.is_engine(args.player):
            raise ValueError(f"--player={args.player}: an engine can only be the opponent")
        mine = player_cli.options_from_args(args)
        theirs = player_cli.options_from_args(args, "opponent_", fallback=mine)
        me = player_cli.load_player(
            args.player, board_size=args.board_size, options=mine, name=args.name, seed=args.seed
        )
        if theirs.control_config() is not None and (opp == "uniform" or player_cli.is_engine(opp)):
            raise ValueError(f"--opponent_control needs a net opponent, not {opp!r}")
        if player_cli.is_engine(opp):
            engine = player_cli.engine_argv(opp, never_resign=not args.gnugo_may_resign)
        else:
            them = player_cli.load_player(
                opp, board_size=args.board_size, options=theirs, name=args.opponent_name, seed=args.seed + 1
            )
    except (ValueError, OSError) as e:  # a missing or corrupt checkpoint, a bad option
        return fail(e)
    if player_cli.is_engine(opp):
        games = gtp_match.play_gtp_match(
            me,
            engine,
            settings,
            engine_name=args.opponent_name,
            timeout=args.gtp_timeout,
            log=log,
        )
    else:
        if them.name == me.name:
            them = them.replace(name=them.name + "-2")
        games = arena.play_match(me, them, settings, log=log)
    print()
    print(results.format_games(games))
    print()
    print(results.format_report(results.summarize(games, me.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
