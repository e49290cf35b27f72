"""Opponents: whatever plays one side of a match (docs/design.md §8).

The one match loop (:func:`saijax.play.match_loop.play_games`) plays two
:class:`Opponent` objects against each other. It owns the games: their
positions (on device, batched), the keys, the given start positions and
random openings, the shared resign rule, the score estimates at a
resignation and the result rows and SGFs. An opponent only decides moves and
keeps whatever private state it needs:

* :meth:`Opponent.start_match` tells it the rules, the match settings and
  the match's base key before the first game (an engine opens its process
  here and checks its commands);
* :meth:`Opponent.start_game` gives it each game's set-up: index, komi,
  handicap stones and its own colour;
* :meth:`Opponent.choose` asks for its moves in a :class:`Turn`: one batch
  of games in which it is to move, with their positions and move histories;
  it answers with a :class:`Choice` (the moves, their SGF comments, and
  optionally its best move's agent value, for the shared resign rule, its
  own score estimate, or its own resignations);
* :meth:`Opponent.play` tells it the moves it did not choose (the other
  side's, the start positions' and the random openings');
* :meth:`Opponent.end_game` asks for its own count of a finished game, if it
  has one (:class:`FinalCount`); :meth:`Opponent.end_match` ends it.

``lockstep`` says whether it can hold many games at once. Two such opponents
play every game together, in lockstep batches; otherwise (a GTP engine has
one board) the games are played one at a time. ``player`` is the
:class:`saijax.play.players.Player` behind it, if any: its search settings fill
the result rows, and it can estimate the score of a resigned game.

A new kind of opponent subclasses :class:`Opponent`, sets ``name`` and
implements :meth:`~Opponent.choose` (the other hooks default to doing
nothing). :class:`NetOpponent` is a player searching with the per-game keys
of :mod:`saijax.play.match`; the GTP engine (GNU Go) is
:class:`saijax.play.gtp_opponent.GtpOpponent`, in a module of its own so that
nets' matches (training's gating among them) never load the GTP modules.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import go
from saijax.play import match, players

__all__ = ["Choice", "FinalCount", "GameSetup", "MatchInfo", "NetOpponent", "Opponent", "Turn"]


@dataclasses.dataclass(frozen=True)
class MatchInfo:
    """What every opponent is told before the first game.

    Attributes:
      rules: the match's rules (board size, move cap).
      settings: the match's settings.
      base_key: ``PRNGKey(settings.seed)``, from which every key of the match
        is folded (:mod:`saijax.play.match`).
    """

    rules: go.GoRules
    settings: match.MatchSettings
    base_key: Any


@dataclasses.dataclass(frozen=True)
class GameSetup:
    """One game's set-up, told to each opponent before its first move.

    Attributes:
      game: the game's index in the match.
      komi: Black's komi.
      handicap: the handicap (0 and 1: no stones; the papers' H1 is 1).
      colour: this opponent's colour, +1 Black or −1 White.
      handicap_stones: the points of the handicap stones saijax places
        (actions, GTP fixed placement); empty below 2.
    """

    game: int
    komi: float
    handicap: int
    colour: int
    handicap_stones: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Turn:
    """A batch of games in which the opponent is to move, all at the same ply.

    Attributes:
      games: int [B], the games' indices.
      ply: the ply about to be played (0-based; handicap stones are not plies).
      colour: the colour to move in every game, +1 Black or −1 White.
      states: the positions, a batched :class:`saijax.core.go.GoState` [B] on device.
      history: int32 [B, T], each game's moves so far (−1 where none).
      active: bool [B], the games still going; the moves chosen for the
        others are ignored.
    """

    games: np.ndarray
    ply: int
    colour: int
    states: go.GoState
    history: np.ndarray
    active: np.ndarray


@dataclasses.dataclass(frozen=True)
class Choice:
    """An opponent's answer to a :class:`Turn`: one entry per game of the batch.

    Attributes:
      actions: int [B], the moves (``row · N + col``, pass N²). The loop
        checks that each is legal.
      comments: each move's SGF comment (None: no comment), or None for none.
      best_value: float32 [B], the agent value of the best move of a search,
        for the shared resign rule (:func:`saijax.core.search.should_resign`);
        None: the rule does not apply to this opponent.
      score_estimate: float32 [B], its own score estimate, from the view of
        the player to move; None if it has none.
      resigns: bool [B], the games it resigns by itself (a GTP engine's
        ``resign``; their action is ignored), or None.
    """

    actions: np.ndarray
    comments: Sequence[str | None] | None = None
    best_value: np.ndarray | None = None
    score_estimate: np.ndarray | None = None
    resigns: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class FinalCount:
    """An opponent's own count of a counted game (a GTP engine's).

    Attributes:
      score: its result, e.g. ``final_score``'s "B+3.5" ("" for none).
      dead: the stones it calls dead, space-separated vertices.
    """

    score: str = ""
    dead: str = ""


class Opponent(abc.ABC):
    """One side of a match (the module docstring describes the protocol).

    Attributes:
      name: the name in result rows and SGFs (the two sides' must differ).
      player: the :class:`saijax.play.players.Player` behind it, or None (an engine).
      lockstep: whether it can hold many games at once and choose their
        moves in one batch.
      board_size: the one board size it plays, or None for any.
    """

    name: str
    player: players.Player | None = None
    lockstep: bool = False
    board_size: int | None = None

    def describe(self) -> str:
        """One line saying what plays (in each SGF's root comment)."""
        return self.name

    def start_match(self, info: MatchInfo) -> None:  # noqa: B027 (an optional hook)
        """Called once, before the first game (may raise to refuse the match)."""

    def start_game(self, setup: GameSetup) -> None:  # noqa: B027 (an optional hook)
        """Called once per game, before its first move."""

    @abc.abstractmethod
    def choose(self, turn: Turn) -> Choice:
        """The moves of the games of ``turn``, in which this opponent is to move."""

    def play(self, games: np.ndarray, colour: int, actions: np.ndarray) -> None:  # noqa: B027 (an optional hook)
        """Tells it moves it did not choose: ``actions[k]`` by ``colour`` in game ``games[k]``."""

    def end_game(self, game: int, resigned: bool) -> FinalCount:
        """Called as a game ends; its own count of it (default: none)."""
        del game, resigned
        return FinalCount()

    def end_match(self) -> None:  # noqa: B027 (an optional hook)
        """Called once at the end, also after an error (idempotent)."""


class NetOpponent(Opponent):
    """A :class:`saijax.play.players.Player`: one batched search over all its games.

    The search of game i at ply t uses the key ``fold_in(fold_in(base, i),
    2t)`` (:func:`saijax.play.match.game_keys`), so a game's moves do not depend
    on the other games of its batch. The move is the search's, position
    control's or the mixed style's (:func:`saijax.play.match.choose_moves`); the
    search's best value and score estimate go with it, for the resign rule
    and the estimates at a resignation.
    """

    lockstep = True

    def __init__(self, player: players.Player):
        self.player = player
        self.name = player.name
        self.board_size = player.board_size
        self._info: MatchInfo | None = None

    def describe(self) -> str:
        return self.player.describe()

    def start_match(self, info: MatchInfo) -> None:
        if self.player.control is not None:
            self.player.control.check_search(self.player.config, self.player.name)
        self._info = info

    def choose(self, turn: Turn) -> Choice:
        info = self._info
        keys = match.game_keys(info.base_key, jnp.asarray(turn.games, jnp.int32), jnp.int32(2 * turn.ply))
        out, action = match.choose_moves(self.player, info.rules, turn.states, keys, turn.history, turn.ply)
        action, alpha, beta, child_q, visits, best, own = jax.device_get(
            (
                action,
                out.root_alpha,
                out.root_beta,
                out.child_q,
                out.visit_counts,
                out.best_value,
                out.score_estimate,
            )
        )
        action = np.asarray(action, np.int32)
        chosen_q = np.take_along_axis(child_q, action[:, None], axis=1)[:, 0]
        total = visits.sum(axis=1)
        comments = [
            match.move_comment(alpha[j], beta[j], chosen_q[j], total[j]) if turn.active[j] else None
            for j in range(len(action))
        ]
        return Choice(actions=action, comments=comments, best_value=best, score_estimate=own)
