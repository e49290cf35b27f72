"""Matches between a player and a GTP engine, GNU Go in particular (docs/design.md §8).

:func:`play_gtp_match` plays a :class:`saijax.play.players.Player` against any
GTP engine over pipes: a :class:`saijax.play.opponents.NetOpponent` against a
:class:`saijax.play.gtp_opponent.GtpOpponent` in the one match loop
(:func:`saijax.play.match_loop.play_games`), one game at a time, with the same
:class:`saijax.play.match.MatchSettings` and conventions (:mod:`saijax.play.match`) as
the lockstep net-vs-net matches of :mod:`saijax.arena` (colours, per-game
komi and handicap, the shared resign rule, score estimates at resignation,
the results table of :mod:`saijax.analysis.results`, given start positions).
GNU Go's settings (:func:`gnugo_arena_argv`: Tromp–Taylor-compatible, and by
default never resigning) and the engine's side of a game are
:mod:`saijax.play.gtp_opponent`'s.

A player with position control (``player.control``, :mod:`saijax.play.control`)
picks its move from its search's output with :func:`saijax.play.control.select`,
given the engine's last move(s), and a player with the mixed style
(``player.mixed``, :mod:`saijax.play.styles`) also searches with its biased net,
as in the lockstep arena (:func:`saijax.play.match.choose_moves`); its search is
the player's own (give it ``control.search_config(config)``, e.g. Method A's
PUCT with c_puct 10).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from saijax.analysis import results
from saijax.play import gtp_opponent, match, match_loop, opponents, players
from saijax.play.gtp_opponent import default_engine_name, gnugo_arena_argv

__all__ = ["gnugo_arena_argv", "default_engine_name", "play_gtp_match"]


def play_gtp_match(
    player: players.Player,
    engine_argv: Sequence[str],
    settings: match.MatchSettings,
    *,
    engine_name: str | None = None,
    scorer: players.Player | None = None,
    timeout: float | None = 120.0,
    engine_stderr: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> list[results.GameResult]:
    """Plays a player against a GTP engine (e.g. GNU Go), one game at a time.

    One engine process serves the whole match. Each game sends ``boardsize``,
    ``clear_board``, ``komi``, ``set_random_seed`` (if the engine has it, so
    games differ and reruns repeat), and for a handicap of 2+
    ``fixed_handicap``, whose stones must match saijax's placement. Then
    ``genmove``/``play`` alternate. The engine may answer ``pass`` or
    ``resign``. A counted game (two passes or the move cap) is scored
    Tromp–Taylor by saijax, and the engine's ``final_score`` is stored next
    to it in ``engine_score`` so that disagreements are visible, with the
    stones the engine calls dead in ``engine_dead``. In handicap games GNU
    Go's Chinese count gives White one point per handicap stone, which
    Tromp–Taylor does not, so there its score is H points more for White.
    The rows leave ``resign_ply`` and its estimates empty unless
    ``settings.play_out``.

    Args:
      player: the saijax side ("side A": Black in even games).
      engine_argv: the engine's command line, e.g. ``gnugo_arena_argv(10)``.
      settings: the match settings. Only the player resigns by threshold; a
        resignation by either side is scored by ``scorer``'s estimate.
      engine_name: the engine's name in the table (default e.g. "gnugo-l10").
      scorer: the player whose search estimates resigned games' scores
        (default ``player``).
      timeout: seconds per GTP command.
      engine_stderr: file to append the engine's stderr to.
      log: called with a line of text as each game ends.

    Returns:
      The games' :class:`saijax.analysis.results.GameResult` rows, in order.

    Raises:
      GtpError: the engine failed or rejected a command.
      ValueError: the engine played a move that is illegal under saijax's
        rules, or placed different handicap stones.
    """
    settings.rules(player.board_size)
    engine = gtp_opponent.GtpOpponent(engine_argv, name=engine_name, timeout=timeout, stderr=engine_stderr)
    if engine.name == player.name:
        raise ValueError(f"the player and the engine are both named {engine.name!r}")
    # The SGF names the player and the engine's command line, whatever the colours.
    header = f"{player.describe()}. Engine: {engine.command_line()}."

    def root_comment(game, black, white):
        del black, white
        return f"saijax arena game {game} (seed {settings.seed}). {header}"

    return match_loop.play_games(
        opponents.NetOpponent(player),
        engine,
        settings,
        scorer=scorer,
        log=log,
        root_comment=root_comment,
        resign_points=False,
    )
