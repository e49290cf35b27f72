"""A GTP engine as a match opponent, GNU Go in particular (docs/design.md §8).

:class:`GtpOpponent` is the :class:`saijax.play.opponents.Opponent` of an engine
run over pipes (:class:`saijax.play.gtp_client.GtpClient`), for the one match
loop of :mod:`saijax.play.match_loop` (:func:`saijax.play.gtp_match.play_gtp_match`
plays a player against one). It lives apart from :mod:`saijax.play.opponents` so
that net-vs-net matches, training's gating among them, never load the GTP
modules.

One engine process serves the whole match and holds one board, so its games
are played one at a time. Each game sends ``boardsize``, ``clear_board``,
``komi``, ``set_random_seed`` (if the engine has it, so games differ and
reruns repeat), and for a handicap of 2+ ``fixed_handicap``, whose stones
must match saijax's placement. The engine chooses with ``genmove`` and may
answer ``pass`` or ``resign``; it is told the other moves with ``play``. A
counted game's ``final_score`` and ``final_status_list dead`` are its own
count (:class:`saijax.play.opponents.FinalCount`), kept next to saijax's
Tromp–Taylor count so that disagreements are visible.

GNU Go plays under Tromp–Taylor-compatible settings
(:func:`gnugo_arena_argv`): Chinese rules, positional superko, and
``--capture-all-dead``. Strength is measured with GNU Go **not allowed to
resign** (``--never-resign``, the default here): every game is played out
to two passes and counted by saijax, so a match does not look better than
it is because GNU Go gave up a game it could still have won. With
``MatchSettings.engine_opening_moves`` the engine's first moves are drawn at
random among those it rates at least half as high as its best (GNU Go's
``top_moves_<colour>``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

import numpy as np

from saijax.core import go
from saijax.play import gtp_client, opponents

__all__ = ["GtpOpponent", "default_engine_name", "gnugo_arena_argv"]


def gnugo_arena_argv(level: int = 10, *, never_resign: bool = True, extra: Sequence[str] = ()) -> list[str]:
    """GNU Go's command line for arena games under Tromp–Taylor scoring.

    :func:`saijax.play.gtp_client.gnugo_argv` (Chinese rules, positional superko,
    no suicide) plus ``--capture-all-dead``. Without it GNU Go passes as soon
    as it judges the opponent's remaining stones dead, expecting them to be
    removed in the count; Tromp–Taylor removes nothing, so those games would
    be counted with the dead stones alive. With it, GNU Go captures dead
    stones before passing, and the two counts agree whenever GNU Go sees no
    dead stones at the end.

    Args:
      level: GNU Go's ``--level`` (0..10; 10 is its default and strongest
        regular level).
      never_resign: add ``--never-resign`` so that every game is played out.
      extra: more arguments.

    Raises:
      FileNotFoundError: GNU Go is not installed.
    """
    flags = ("--capture-all-dead",) + (("--never-resign",) if never_resign else ())
    return gtp_client.gnugo_argv(level, extra=(*flags, *extra))


def default_engine_name(argv: Sequence[str]) -> str:
    """A short name for an engine's command line, e.g. "gnugo-l10"."""
    base = os.path.basename(str(argv[0]))
    argv = [str(a) for a in argv]
    if "gnugo" in base and "--level" in argv:
        i = argv.index("--level")
        if i + 1 < len(argv):
            return f"gnugo-l{argv[i + 1]}"
    return base


def _random_rated_move(rules: go.GoRules, rated: list[str], rng: np.random.Generator) -> int | None:
    """A uniform draw among the moves of a ``top_moves`` answer ("D4 45.00 E3 23.9 ...")
    rated at least half as valuable as the best one; None if it rates none."""
    pairs = [(go.from_gtp(rules, rated[k]), float(rated[k + 1])) for k in range(0, len(rated) - 1, 2)]
    if not pairs:
        return None
    best = max(v for _, v in pairs)
    candidates = sorted(a for a, v in pairs if (v >= 0.5 * best if best > 0 else v == best))
    return int(candidates[rng.integers(len(candidates))])


def _colour_name(colour: int) -> str:
    return "black" if colour == 1 else "white"


class GtpOpponent(opponents.Opponent):
    """A GTP engine over pipes, one game at a time (the module docstring).

    The engine process starts with the match (:meth:`start_match`) and is
    closed at its end, also after an error.

    Args:
      argv: the engine's command line, e.g. ``gnugo_arena_argv(10)``.
      name: its name in the results table (default e.g. "gnugo-l10",
        :func:`default_engine_name`).
      timeout: seconds per GTP command.
      stderr: file to append the engine's stderr to.
    """

    lockstep = False

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str | None = None,
        timeout: float | None = 120.0,
        stderr: str | os.PathLike | None = None,
    ):
        self.argv = [str(a) for a in argv]
        self.name = name or default_engine_name(argv)
        self.timeout = timeout
        self.stderr = stderr
        self.client: gtp_client.GtpClient | None = None
        self._info: opponents.MatchInfo | None = None
        self._game = -1
        self._chosen = 0  # moves the engine has chosen in the current game

    def command_line(self) -> str:
        """The engine's command line, shell-quoted."""
        return " ".join(shlex.quote(a) for a in self.argv)

    def describe(self) -> str:
        return f"{self.name}: GTP engine {self.command_line()}"

    def start_match(self, info: opponents.MatchInfo) -> None:
        """Starts the engine and asks which optional commands it has.

        Raises:
          ValueError: ``engine_opening_moves`` with an engine that cannot rate
            its moves (no ``top_moves_black``/``top_moves_white``).
        """
        self._info = info
        self.client = gtp_client.GtpClient(self.argv, timeout=self.timeout, stderr=self.stderr)
        known = self.client.known_command
        self._has_seed = known("set_random_seed")
        self._has_score = known("final_score")
        self._has_status = known("final_status_list")
        has_top = all(known(f"top_moves_{c}") for c in ("black", "white"))
        if info.settings.engine_opening_moves and not has_top:
            raise ValueError(
                f"engine_opening_moves={info.settings.engine_opening_moves}: the engine {self.name!r} has no "
                "top_moves_black/top_moves_white command to rate its moves"
            )

    def start_game(self, setup: opponents.GameSetup) -> None:
        """Sets up the engine's board.

        Raises:
          ValueError: the engine placed other handicap stones than saijax.
        """
        rules, seed = self._info.rules, self._info.settings.seed
        send = self.client.send
        send(f"boardsize {rules.size}")
        send("clear_board")
        send(f"komi {setup.komi:g}")
        if self._has_seed:
            send(f"set_random_seed {(int(seed) * 1_000_003 + setup.game) % (2**31 - 1) + 1}")
        if setup.handicap >= 2:
            reply = send(f"fixed_handicap {setup.handicap}")
            placed = sorted(go.from_gtp(rules, v) for v in reply.split())
            expected = sorted(setup.handicap_stones)
            if placed != expected:
                raise ValueError(
                    f"engine placed handicap stones {reply!r}, saijax expects "
                    f"{' '.join(go.to_gtp(rules, p) for p in expected)}"
                )
        self._game, self._chosen = setup.game, 0

    def choose(self, turn: opponents.Turn) -> opponents.Choice:
        """The engine's ``genmove`` (or a random opening move among those it rates highly).

        Raises:
          ValueError: the engine answered something that is not a move, or
            resigned one of its random opening moves.
        """
        if len(turn.games) != 1 or int(turn.games[0]) != self._game:
            raise ValueError(f"the engine {self.name!r} plays one game at a time (game {self._game})")
        rules, settings = self._info.rules, self._info.settings
        i, ply, colour = self._game, turn.ply, _colour_name(turn.colour)
        send = self.client.send
        self._chosen += 1
        if self._chosen <= settings.engine_opening_moves:
            # A random opening move of the engine's, among those it rates
            # at least half as valuable as its best.
            rated = send(f"top_moves_{colour}").split()
            action = _random_rated_move(rules, rated, np.random.default_rng([settings.seed, i, ply]))
            comment = "engine's random opening move"
            if action is None:
                reply = send(f"genmove {colour}").strip()
                if reply.lower() == "resign":
                    raise ValueError(f"game {i}: the engine resigned its opening move {ply + 1}")
                action, comment = go.from_gtp(rules, reply), None
            else:
                send(f"play {colour} {go.to_gtp(rules, action)}")
            return opponents.Choice(actions=np.array([action], np.int32), comments=[comment])
        reply = send(f"genmove {colour}").strip()
        if reply.lower() == "resign":
            return opponents.Choice(
                actions=np.array([rules.pass_action], np.int32), comments=[None], resigns=np.array([True])
            )
        try:
            action = go.from_gtp(rules, reply)
        except ValueError as e:
            raise ValueError(f"game {i}: engine answered genmove with {reply!r}") from e
        return opponents.Choice(actions=np.array([action], np.int32), comments=[None])

    def play(self, games: np.ndarray, colour: int, actions: np.ndarray) -> None:
        for game, action in zip(games, actions):
            if int(game) != self._game:
                raise ValueError(f"the engine {self.name!r} plays one game at a time (game {self._game}, not {game})")
            self.client.send(f"play {_colour_name(colour)} {go.to_gtp(self._info.rules, int(action))}")

    def end_game(self, game: int, resigned: bool) -> opponents.FinalCount:
        """The engine's ``final_score`` and dead stones of a counted game; failures become "?<message>"."""
        if resigned:
            return opponents.FinalCount()

        def ask(command):
            try:
                return " ".join(self.client.send(command).split())
            except gtp_client.GtpError as e:
                return "?" + " ".join(e.message.split())

        score = ask("final_score") if self._has_score else ""
        dead = ask("final_status_list dead") if self._has_status else ""
        return opponents.FinalCount(score=score, dead=dead)

    def end_match(self) -> None:
        """Quits the engine (idempotent)."""
        if self.client is not None:
            self.client.close()
