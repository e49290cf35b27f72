"""Lockstep matches between two players (docs/design.md §8).

:func:`play_match` plays two :class:`saijax.play.players.Player` against each
other, all games in lockstep on device: two
:class:`saijax.play.opponents.NetOpponent` in the one match loop of
:mod:`saijax.play.match_loop`, which says how the games are grouped and played.
Matches against a GTP engine (GNU Go) are :mod:`saijax.play.gtp_match`'s; the
settings and conventions every match shares
(:class:`saijax.play.match.MatchSettings`: colours, komi and handicap,
resignation, score estimates, random openings, keys) are in
:mod:`saijax.play.match`; the results table, summaries and intervals in
:mod:`saijax.analysis.results`.

This is the library that training's gating and the experiments use: it
loads no GTP module and not the command-line front door of players. The
command line, ``python -m saijax.arena --player=SPEC --opponent=SPEC``, is
:mod:`saijax.cli.arena`.
"""

from __future__ import annotations

from collections.abc import Callable

from saijax.analysis import results
from saijax.play import match, match_loop, opponents, players

__all__ = ["play_match"]


def play_match(
    side_a: players.Player,
    side_b: players.Player,
    settings: match.MatchSettings,
    *,
    scorer: players.Player | None = None,
    log: Callable[[str], None] | None = None,
) -> list[results.GameResult]:
    """Plays ``settings.games`` games between two players, all in lockstep.

    Args:
      side_a, side_b: the players (same board size, distinct names), each
        with its own search settings and λ/μ agent.
      settings: games, komi and handicap (per game or not), colours, seed,
        resignation, SGF and results paths.
      scorer: the player whose search estimates the score of resigned games
        (a fixed strong net, as in the papers); default the resigning player.
      log: called with a line of text as each game ends.

    Returns:
      The games' :class:`saijax.analysis.results.GameResult` rows, ordered by game index.
    """
    return match_loop.play_games(
        opponents.NetOpponent(side_a), opponents.NetOpponent(side_b), settings, scorer=scorer, log=log
    )
