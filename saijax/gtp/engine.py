"""The GTP engine: game state, the search, and the commands.

Game state. The engine keeps a list of positions for ``undo``; each holds a
:class:`saijax.core.go.GoState` and what is needed to write the game as SGF. The
rules are saijax's (docs/design.md §1): positional superko, no suicide, the game
ends after two passes or at the move cap (2·N² moves), after which moves are
illegal. GTP lets a controller play either colour at any time; a move by the
player not to move is recorded as a pass by the player to move followed by
the move, which keeps the superko history. When that pass would end the
game (the previous move was a pass, or the move cap), the position is
instead restarted as a setup position with the requested player to move,
which forgets the superko history and the move count. Komi follows the one
rule of :func:`saijax.core.go.check_komi` (a multiple of ½): ``komi 6.3`` is a
GTP error naming the value, and the komi stays as it was.

Any failure inside a command becomes a ``?`` response and leaves the
engine's state as it was before the command.

Moves. ``genmove`` plays the search's best move: by default the searches
that choose moves (``genmove``, ``kgs-genmove_cleanup``, the
``genmove_analyze`` commands) run Gumbel search without root noise
(``gumbel_scale`` 0), so a position gets the same move whatever the seed.
``gumbel_scale`` > 0 (``--gumbel_scale``, or ``lz-setoption name
gumbel_scale value X``) samples the root with Gumbel noise of that scale,
for variety. Analysis rounds (``lz-analyze``, ``kata-analyze``) always draw
noise, at that scale or at 1 when it is 0, so that pooled rounds differ
(:mod:`saijax.gtp.analysis`). Compiled searches are cached per search
configuration (visits, noise scale, the control method's algorithm), so
switching back and forth compiles each at most once; the λ/μ agent is
traced and never recompiles.

Position control (docs/design.md §8, :mod:`saijax.play.control`). An agent
setting like λ and μ: with a method on (``--control=C``, or ``lz-setoption
name control value C``), every search uses the method's own search
(:meth:`saijax.play.control.ControlConfig.search_config`: PUCT with c_puct 10 for
naive, A, B and C; the engine's search for the endgame method), and
``genmove`` and the ``genmove_analyze`` commands play the move
:func:`saijax.play.control.select` picks from the search's output, given the
opponent's last move(s) from the game record (a pass, or none before a
setup position, counts as no move). Analysis lines still show the search's
statistics.

Options (``lz-setoption name <name> value <value>``):

* ``lambda``, ``mu``, ``threshold``: the λ/μ agent;
* ``visits`` (or ``playouts``), ``resign_threshold``, ``gumbel_scale``;
* ``control value off|naive|A|B|C|endgame``, and ``control <field> value
  <v>`` for every field of :class:`saijax.play.control.ControlConfig`
  (``gentleness``, ``gamma``, ``min_visit_share``, ``naturalness_weight``,
  ``lead_band`` as ``-10,-4``, ...). The settings are kept while control is
  off, and apply when a method is turned on; on the command line,
  ``--control=<method>`` and repeated ``--control_option field=value``;
* ``style value centre|edge|off``: the online playing style
  (docs/design.md §8, :func:`saijax.play.styles.online_style`), a root prior
  reweighted by line and by Method B's distance to the opponent's last move;
  on the command line ``--style=centre``.

A bad option or value is a GTP error naming it, and changes nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import saijax
from saijax.core import go, search, sgf
from saijax.gtp.analysis import Analysis, Position, Round, search_round, to_move
from saijax.gtp.protocol import (
    BOOLS,
    COLOURS,
    Failure,
    clean_input,
    expect,
    format_response,
    is_id,
    number_or_text,
    parse_colour,
    parse_float,
    parse_int,
    parse_vertex,
    syntax_error,
)
from saijax.play import control, players, styles
from saijax.play.options import PlayerOptions

__all__ = ["GtpEngine", "ENGINE_NAME", "MAX_VISITS", "check_gumbel_scale"]

ENGINE_NAME = "saijax"
MAX_VISITS = 100_000
_MAX_SGF_BYTES = 10 * 1024 * 1024
_PV_LENGTH = 32
_ANALYSIS_GUMBEL_SCALE = search.SearchConfig.gumbel_scale  # analysis noise when moves are deterministic: self-play's


def check_gumbel_scale(value, name: str = "gumbel_scale") -> float:
    """A root Gumbel noise scale: a finite number >= 0 (0: the search's best move)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    scale = float(value)
    if not (math.isfinite(scale) and scale >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {scale!r}")
    return scale


@functools.cache
def _init_fn(rules: go.GoRules):
    # Jitted: one compile is much faster than running go.init op by op.
    return jax.jit(functools.partial(go.init, rules))


@functools.cache
def _area_score_fn(rules: go.GoRules):
    return jax.jit(functools.partial(go.area_score, rules))


class GtpEngine:
    """A GTP v2 engine over one :class:`saijax.play.players.Player`.

    Use :meth:`handle` for one complete response per line, :meth:`begin` for
    a response that may stream (the main loop), and :meth:`analysis_rounds`
    to drive streaming analysis deterministically in tests.
    """

    def __init__(
        self,
        player: players.Player,
        *,
        visits: int = PlayerOptions.visits,
        lambda_: float = PlayerOptions.lambda_,
        mu: float = PlayerOptions.mu,
        threshold: float = PlayerOptions.threshold,
        resign_threshold: float = 0.05,
        komi: float = 7.5,
        seed: int = 0,
        verbose: bool = False,
        search_config: search.SearchConfig | None = None,
        gumbel_scale: float = PlayerOptions.gumbel_scale,
    ):
        """Builds the engine.

        Args:
          player: the network.
          visits: simulations per genmove and per analysis round.
          lambda_, mu, threshold: the λ/μ agent (1 ≥ λ ≥ μ ≥ 0; the agent
            applies while the root winrate is at least ``threshold``).
            The defaults of visits, the agent and ``gumbel_scale`` are the
            command line's (:class:`saijax.play.options.PlayerOptions`).
          resign_threshold: genmove resigns when the best move's agent value
            is below this, from move N²/4 on; negative never resigns.
          komi: the initial komi (:func:`saijax.core.go.check_komi`).
          seed: PRNG seed of the searches.
          verbose: print a line per genmove on stderr.
          search_config: other search settings (default the player's); its
            simulations are replaced by ``visits``. With position control
            (``player.control``) the searches use the method's own
            settings derived from it (module docstring).
          gumbel_scale: root Gumbel noise of the searches that choose moves
            (the Gumbel algorithm only): 0 plays the search's best move,
            > 0 samples for variety (module docstring).
        """
        self.rules = go.GoRules(player.board_size)
        if not 1 <= int(visits) <= MAX_VISITS:
            raise ValueError(f"visits must be in 1..{MAX_VISITS}, got {visits}")
        komi = go.check_komi(komi)
        self.gumbel_scale = check_gumbel_scale(gumbel_scale)
        self.visits = int(visits)
        self.resign_threshold = float(resign_threshold)
        self.verbose = verbose
        config = dataclasses.replace(search_config or player.config, pv_length=_PV_LENGTH)
        # The session's player: replaced (it is frozen) when lz-setoption changes it.
        self.player = player.replace(config=config, agent=search.Agent(lambda_, mu, threshold))
        if player.control is not None:
            player.control.search_config(config)  # raises if the search cannot feed the method
        # Position-control settings, kept while control is off (lz-setoption).
        self._control_settings = player.control or control.ControlConfig()
        self._key = jax.random.PRNGKey(seed)
        self._search_fns: dict[search.SearchConfig, Callable] = {}
        self._komi = float(komi)
        self._empty = _init_fn(self.rules)(jnp.float32(self._komi))
        self._history: list[Position] = [Position(self._empty)]
        self.quit_requested = False
        self._handlers: dict[str, Callable[[list[str], str], Any]] = {
            "protocol_version": self._protocol_version,
            "name": self._name,
            "version": self._version,
            "known_command": self._known_command,
            "list_commands": self._list_commands,
            "quit": self._quit,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "komi": self._komi_cmd,
            "play": self._play,
            "genmove": self._genmove,
            "kgs-genmove_cleanup": self._genmove,
            "undo": self._undo,
            "showboard": self._showboard,
            "final_score": self._final_score,
            "final_status_list": self._final_status_list,
            "fixed_handicap": self._fixed_handicap,
            "place_free_handicap": self._place_free_handicap,
            "set_free_handicap": self._set_free_handicap,
            "loadsgf": self._loadsgf,
            "printsgf": self._printsgf,
            "time_settings": self._time_settings,
            "time_left": self._time_left,
            "lz-analyze": functools.partial(self._analyze, kata=False, genmove=False),
            "kata-analyze": functools.partial(self._analyze, kata=True, genmove=False),
            "lz-genmove_analyze": functools.partial(self._analyze, kata=False, genmove=True),
            "kata-genmove_analyze": functools.partial(self._analyze, kata=True, genmove=True),
            "lz-setoption": self._setoption,
        }

    # -- public API ---------------------------------------------------------

    @property
    def state(self) -> go.GoState:
        """The current position."""
        return self._history[-1].state

    @property
    def komi(self) -> float:
        return self._komi

    @property
    def agent(self) -> search.Agent:
        """The λ/μ agent in use."""
        return self.player.agent

    @property
    def control(self) -> control.ControlConfig | None:
        """The position-control method in use, or None."""
        return self.player.control

    def search_config(self, visits: int | None = None, *, analysis: bool = False) -> search.SearchConfig:
        """The settings of the engine's searches: the position-control method's own, if any.

        Args:
          visits: simulations (default the engine's ``visits``).
          analysis: the search of an analysis round, which draws root noise
            even when the engine's moves are deterministic (module docstring).
        """
        scale = self.gumbel_scale
        if analysis and scale == 0:
            scale = _ANALYSIS_GUMBEL_SCALE
        config = dataclasses.replace(self.player.config, gumbel_scale=scale)
        if self.player.control is not None:
            config = self.player.control.search_config(config)
        if config.algorithm != "gumbel":
            config = dataclasses.replace(config, gumbel_scale=self.gumbel_scale)  # unused: one compile
        return dataclasses.replace(config, num_simulations=int(visits or self.visits))

    def search(self, state: go.GoState, visits: int | None = None, *, analysis: bool = False) -> search.SearchOutput:
        """One search of ``state`` with a fresh key; the output for a batch of one.

        Jitted searches are cached per search configuration (visits, the
        noise scale, and the position-control method's algorithm and
        c_puct); the agent is traced, so ``lz-setoption`` of λ, μ or a
        control parameter never recompiles.
        """
        config = self.search_config(visits, analysis=analysis)
        if config not in self._search_fns:
            self._search_fns[config] = search.make_search_fn(self.player.evaluator, self.rules, config)
        self._key, key = jax.random.split(self._key)
        batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
        return self._search_fns[config](self.player.variables, key, batched, self.player.agent.params())

    def controlled_move(self, out: search.SearchOutput, state: go.GoState, moves: Sequence[int]) -> int:
        """The position-controlled move of a one-game search output (:func:`saijax.play.control.select`).

        Args:
          out: the search of ``state`` (a batch of one).
          state: the position searched.
          moves: the actions played since the game's start or setup, in
            order (passes included); the opponent's last moves are read
            from them.
        """
        config = self.player.control
        history = np.asarray([tuple(moves)], np.int32).reshape(1, len(moves))
        last = control.last_opponent_moves(history, len(moves), config.opponent_moves)
        batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
        self._key, key = jax.random.split(self._key)
        return int(control.select_fn(config)(out, batched, jnp.asarray(last), key)[0])

    def commands(self) -> list[str]:
        """The supported command names."""
        return list(self._handlers)

    def begin(self, line: str) -> str | Analysis | None:
        """Starts answering one input line.

        Returns:
          None for an empty or comment-only line; a complete response string;
          or an :class:`Analysis` for a streaming command that was accepted.
        """
        text = clean_input(line)
        tokens = text.split()
        if not tokens:
            return None
        cmd_id = ""
        if is_id(tokens[0]):
            cmd_id, tokens = tokens[0], tokens[1:]
        if not tokens:
            return format_response(cmd_id, False, "missing command")
        name, args = tokens[0], tokens[1:]
        handler = self._handlers.get(name)
        if handler is None:
            return format_response(cmd_id, False, "unknown command")
        snapshot = self._snapshot()
        try:
            result = handler(args, cmd_id)
        except Failure as e:
            self._restore(snapshot)
            return format_response(cmd_id, False, str(e))
        except Exception as e:  # pylint: disable=broad-except
            # A bug or a library error must not kill or desync the engine.
            self._restore(snapshot)
            message = str(e) or type(e).__name__
            return format_response(cmd_id, False, message)
        if isinstance(result, Analysis):
            return result
        return format_response(cmd_id, True, "" if result is None else str(result))

    def handle(self, line: str, *, max_rounds: int = 1) -> str | None:
        """The complete response to one line (None for empty/comment lines).

        A streaming analysis command runs ``max_rounds`` rounds and is then
        ended, as if the next command had arrived.
        """
        chunks = self.analysis_rounds(line, max_rounds=max_rounds)
        return None if chunks is None else "".join(chunks)

    def analysis_rounds(self, line: str, *, max_rounds: int = 2) -> list[str] | None:
        """Runs one line and returns the response as written chunks.

        For an analysis command: ``[head, round 1 text, ..., tail]`` with
        exactly ``max_rounds`` rounds (each round's text is one ``info`` line,
        or "" if there was nothing to analyse); otherwise ``[response]``.
        """
        result = self.begin(line)
        if result is None:
            return None
        if isinstance(result, str):
            return [result]
        chunks = [result.head]
        try:
            chunks.extend(result.rounds(max_rounds=max_rounds))
        finally:
            chunks.append(result.finish())
        return chunks

    # -- state helpers ------------------------------------------------------

    def _snapshot(self):
        return (
            list(self._history),
            self._komi,
            self.visits,
            self.gumbel_scale,
            self.resign_threshold,
            self.player,
            self._control_settings,
        )

    def _restore(self, snapshot) -> None:
        (
            self._history,
            self._komi,
            self.visits,
            self.gumbel_scale,
            self.resign_threshold,
            self.player,
            self._control_settings,
        ) = snapshot

    def _board_is_empty(self) -> bool:
        state = self.state
        return int(state.move_count) == 0 and not np.any(np.asarray(state.board))

    def _reset(self, position: Position | None = None) -> None:
        self._history = [position or Position(self._empty.replace(komi=jnp.float32(self._komi)))]

    def _to_move(self, position: Position, colour: int) -> Position:
        """The position with ``colour`` to move (see the module docstring)."""
        return to_move(self.rules, position, colour, self._komi)

    def _play_move(self, position: Position, action: int) -> Position:
        state = position.state
        if bool(state.terminated) or not bool(state.legal[action]):
            raise Failure("illegal move")
        return dataclasses.replace(position, state=go.play(self.rules, state, action), moves=position.moves + (action,))

    def _search_round(self, position: Position, *, analysis: bool = False) -> Round:
        """One search from ``position``: the chosen move and per-child statistics.

        The chosen move is the search's own, or with position control the
        move :meth:`controlled_move` picks. ``analysis``: a round of
        lz-analyze or kata-analyze (:meth:`search_config`).
        """
        state = position.state
        out = self.search(state, analysis=analysis)
        result = search_round(out)
        if self.player.control is not None:
            result = dataclasses.replace(result, action=self.controlled_move(out, state, position.moves))
        return result

    def _should_resign(self, state: go.GoState, result: Round) -> bool:
        return bool(
            search.should_resign(
                result.best_value,
                int(state.move_count),
                threshold=self.resign_threshold,
                resign_after=search.default_resign_after(self.rules),
            )
        )

    def _commit_genmove(self, position: Position, colour: int, result: Round | None) -> str:
        """Plays the searched move for ``colour``; returns its vertex or "resign"."""
        state = position.state
        if bool(state.terminated):
            return "pass"
        if result is None:
            result = self._search_round(position)
        if self.verbose:
            method = "" if self.player.control is None else f" control {self.player.control.method}"
            print(
                f"saijax.gtp: {'B' if colour == 1 else 'W'} {go.to_gtp(self.rules, result.action)} "
                f"best_value {result.best_value:.3f} winrate {result.winrate:.3f} "
                f"alpha {result.alpha:+.2f} beta {result.beta:.3f} visits {result.visits}{method}",
                file=sys.stderr,
            )
        if self._should_resign(state, result):
            return "resign"
        self._history.append(self._play_move(position, result.action))
        return go.to_gtp(self.rules, result.action)

    # -- commands -----------------------------------------------------------

    def _protocol_version(self, args, cmd_id):
        expect(args, 0)
        return "2"

    def _name(self, args, cmd_id):
        expect(args, 0)
        return ENGINE_NAME

    def _version(self, args, cmd_id):
        expect(args, 0)
        return saijax.__version__

    def _known_command(self, args, cmd_id):
        expect(args, 1)
        return "true" if args[0] in self._handlers else "false"

    def _list_commands(self, args, cmd_id):
        expect(args, 0)
        return "\n".join(self._handlers)

    def _quit(self, args, cmd_id):
        self.quit_requested = True
        return ""

    def _boardsize(self, args, cmd_id):
        expect(args, 1)
        size = parse_int(args[0])
        if size not in self.player.board_sizes:
            raise Failure("unacceptable size")
        self._reset()
        return ""

    def _clear_board(self, args, cmd_id):
        expect(args, 0)
        self._reset()
        return ""

    def _komi_cmd(self, args, cmd_id):
        expect(args, 1)
        try:
            komi = go.check_komi(number_or_text(args[0]))
        except ValueError as e:
            raise Failure(str(e)) from None
        self._komi = komi
        k = jnp.float32(komi)
        self._history = [dataclasses.replace(p, state=p.state.replace(komi=k)) for p in self._history]
        return ""

    def _play(self, args, cmd_id):
        expect(args, 2)
        colour = parse_colour(args[0])
        action = parse_vertex(self.rules, args[1])
        if bool(self.state.terminated):
            raise Failure("illegal move")
        position = self._to_move(self._history[-1], colour)
        self._history.append(self._play_move(position, action))
        return ""

    def _genmove(self, args, cmd_id):
        expect(args, 1)
        colour = parse_colour(args[0])
        if bool(self.state.terminated):
            return "pass"
        position = self._to_move(self._history[-1], colour)
        return self._commit_genmove(position, colour, None)

    def _undo(self, args, cmd_id):
        expect(args, 0)
        if len(self._history) < 2:
            raise Failure("cannot undo")
        self._history.pop()
        return ""

    def _showboard(self, args, cmd_id):
        expect(args, 0)
        return "\n" + go.to_string(self.rules, self.state)

    def _final_score(self, args, cmd_id):
        expect(args, 0)
        area = float(_area_score_fn(self.rules)(self.state))
        margin = area - self._komi
        winner = (margin > 0) - (margin < 0)
        return sgf.game_result_string(winner, margin if winner else None)

    def _final_status_list(self, args, cmd_id):
        expect(args, 1)
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise syntax_error()
        if status != "alive":
            return ""  # Tromp–Taylor: no stone is dead, and seki is not distinguished
        state = self.state
        board, chain = np.asarray(state.board), np.asarray(state.chain)
        groups: dict[int, list[str]] = {}
        for p in np.flatnonzero(board):
            groups.setdefault(int(chain[p]), []).append(go.to_gtp(self.rules, int(p)))
        return "\n".join(" ".join(g) for g in groups.values())

    def _handicap_count(self, args) -> int:
        expect(args, 1)
        count = parse_int(args[0])
        if not 2 <= count <= self.rules.num_points - 1:
            raise Failure("invalid handicap")
        if not self._board_is_empty():
            raise Failure("board not empty")
        return count

    def _set_handicap(self, stones: Sequence[int], handicap: int) -> str:
        stones = tuple(sorted(int(p) for p in stones))
        state = go.setup(self.rules, self._komi, black=stones, to_play=-1)
        self._reset(Position(state, setup_black=stones, first_player=-1, handicap=handicap))
        return " ".join(go.to_gtp(self.rules, p) for p in stones)

    def _fixed_handicap(self, args, cmd_id):
        count = self._handicap_count(args)
        try:
            stones = go.handicap_points(self.rules, count)
        except ValueError:
            raise Failure("invalid handicap") from None
        return self._set_handicap(stones, count)

    def _place_free_handicap(self, args, cmd_id):
        count = self._handicap_count(args)
        try:
            stones = go.handicap_points(self.rules, count)
        except ValueError:
            stones = go.spread_points(self.rules, count)
        return self._set_handicap(stones, count)

    def _set_free_handicap(self, args, cmd_id):
        if not args:
            raise syntax_error()
        try:
            stones = [parse_vertex(self.rules, a) for a in args]
        except Failure as e:
            if str(e) == "illegal move":  # a well-formed vertex off the board
                raise Failure("bad vertex list") from None
            raise
        if (
            len(stones) < 2
            or len(set(stones)) != len(stones)
            or self.rules.pass_action in stones
            or len(stones) > self.rules.num_points - 1
        ):
            raise Failure("bad vertex list")
        if not self._board_is_empty():
            raise Failure("board not empty")
        self._set_handicap(stones, len(stones))
        return ""

    def _loadsgf(self, args, cmd_id):
        if len(args) not in (1, 2):
            raise syntax_error()
        move_number = parse_int(args[1], lo=1) if len(args) == 2 else None
        path = args[0]
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_SGF_BYTES:
            raise Failure("cannot load file")
        try:
            record = sgf.read_sgf(path, check=False)  # replayed below with the engine's rules
        except (ValueError, OSError) as e:
            raise Failure(f"cannot load file: {e}") from None
        if record.size not in self.player.board_sizes:
            raise Failure("unacceptable size")
        try:
            go.check_komi(record.komi)
        except ValueError as e:
            raise Failure(f"cannot load file: {e}") from None
        states = self._replay(record)
        keep = len(states) if move_number is None else min(move_number, len(states))
        self._komi = float(record.komi)
        self._history = [
            Position(
                states[i],
                setup_black=record.setup_black,
                setup_white=record.setup_white,
                first_player=record.first_player,
                handicap=record.handicap,
                moves=record.moves[:i],
            )
            for i in range(keep)
        ]
        return ""

    def _replay(self, record: sgf.GameRecord) -> list[go.GoState]:
        """The record's positions, like ``sgf.replay`` but starting from the
        engine's compiled empty position (go.init op by op is slow)."""
        if not record.setup_black and not record.setup_white and record.first_player == 1:
            state = self._empty.replace(komi=jnp.float32(record.komi))
        else:
            state = go.setup(
                self.rules,
                record.komi,
                black=record.setup_black,
                white=record.setup_white,
                to_play=record.first_player,
            )
        states = [state]
        for i, (colour, action) in enumerate(zip(record.colours, record.moves)):
            try:
                state = go.play(self.rules, state, action)
            except ValueError as e:
                label = f"{'B' if colour == 1 else 'W'} {go.to_gtp(self.rules, action)}"
                raise Failure(f"cannot load file: move {i + 1} ({label}) is illegal: {e}") from None
            states.append(state)
        return states

    def _printsgf(self, args, cmd_id):
        if len(args) > 1:
            raise syntax_error()
        position = self._history[-1]
        state = position.state
        result = None
        if bool(state.terminated):
            result = self._final_score([], cmd_id)
        record = sgf.GameRecord(
            size=self.rules.size,
            komi=self._komi,
            moves=position.moves,
            handicap=position.handicap,
            setup_black=position.setup_black,
            setup_white=position.setup_white,
            first_player=position.first_player,
            result=result,
            black_name=None,
            white_name=None,
            root_comment=f"{ENGINE_NAME} {saijax.__version__}: {self.player.description}",
        )
        if args:
            try:
                sgf.write_sgf(record, args[0])
            except OSError as e:
                raise Failure(f"cannot write file: {e}") from None
            return ""
        return sgf.write_sgf(record).decode("utf-8", errors="replace")

    def _time_settings(self, args, cmd_id):
        expect(args, 3)
        for a in args:
            parse_int(a, lo=0)
        return ""

    def _time_left(self, args, cmd_id):
        expect(args, 3)
        parse_colour(args[0])
        parse_int(args[1], lo=0)
        parse_int(args[2], lo=0)
        return ""

    def _setoption(self, args, cmd_id):
        # lz-setoption name <name words> value <value words>
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise syntax_error()
        split = args.index("value", 2)
        name = " ".join(args[1:split]).lower()
        value_text = " ".join(args[split + 1 :])
        if not value_text or " " in value_text:
            raise syntax_error()
        if name in ("lambda", "lambda_", "mu", "threshold"):
            value = parse_float(value_text)
            key = {"lambda": "lambda_"}.get(name, name)
            try:
                self.player = self.player.with_agent(**{key: value})
            except ValueError as e:
                raise Failure(str(e)) from None
        elif name in ("visits", "playouts"):
            self.visits = parse_int(value_text)
            if not 1 <= self.visits <= MAX_VISITS:
                raise Failure(f"visits must be in 1..{MAX_VISITS}")
        elif name == "gumbel_scale":
            try:
                self.gumbel_scale = check_gumbel_scale(number_or_text(value_text))
            except ValueError as e:
                raise Failure(str(e)) from None
        elif name == "resign_threshold":
            value = parse_float(value_text)
            if value > 1:
                raise Failure("resign_threshold must be <= 1 (negative: never resign)")
            self.resign_threshold = value
        elif name == "control" or name.startswith("control "):
            self._set_control(name.split()[1:], value_text)
        elif name == "style":
            try:
                root_prior = styles.online_style(value_text)
            except ValueError as e:
                raise Failure(str(e)) from None
            self.player = self.player.replace(config=dataclasses.replace(self.player.config, root_prior=root_prior))
        else:
            raise Failure(f"unknown option {name}")
        return ""

    def _set_control(self, field: list[str], value_text: str) -> None:
        """``control value <method|off>`` or ``control <field> value <v>`` (module docstring)."""
        if len(field) > 1:
            raise Failure(f"unknown option control {' '.join(field)}")
        try:
            if not field:
                method = control.parse_method(value_text)
                settings = self._control_settings if method is None else self._control_settings.replace(method=method)
                enabled = method is not None
            else:
                settings = control.set_option(self._control_settings, field[0], value_text)
                enabled = self.player.control is not None
            if enabled:
                settings.search_config(self.player.config)  # e.g. a score-valued net cannot run win-rate methods
        except ValueError as e:
            raise Failure(str(e)) from None
        self._control_settings = settings
        self.player = self.player.replace(control=settings if enabled else None)

    def _analyze(self, args, cmd_id, *, kata: bool, genmove: bool):
        colour = None
        i = 0
        if args and args[0].lower() in COLOURS:
            colour, i = COLOURS[args[0].lower()], 1
        interval_cs = 0
        max_moves = None
        want_ownership = False
        seen_bare_interval = False
        while i < len(args):
            token = args[i]
            if is_id(token) and not seen_bare_interval:
                interval_cs, seen_bare_interval = parse_int(token), True
                i += 1
            elif token in ("interval", "maxmoves", "minmoves") and i + 1 < len(args):
                value = parse_int(args[i + 1], lo=0)
                if token == "interval":
                    interval_cs = value
                elif token == "maxmoves":
                    max_moves = value or None
                i += 2
            elif (
                kata
                and token
                in (
                    "ownership",
                    "ownershipStdev",
                    "movesOwnership",
                    "movesOwnershipStdev",
                    "pvVisits",
                    "pvEdgeVisits",
                    "rootInfo",
                )
                and i + 1 < len(args)
                and args[i + 1].lower() in BOOLS
            ):
                if token == "ownership":
                    want_ownership = BOOLS[args[i + 1].lower()]
                i += 2  # the others are accepted and ignored (saijax.gtp.analysis)
            else:
                raise syntax_error()
        if genmove and colour is None:
            colour = int(self.state.to_play)
        position = self._history[-1]
        if colour is not None and not bool(position.state.terminated):
            position = self._to_move(position, colour)
        return Analysis(
            cmd_id,
            rules=self.rules,
            search_round=functools.partial(self._search_round, analysis=not genmove),
            commit_genmove=self._commit_genmove,
            kata=kata,
            position=position,
            interval=min(interval_cs, 10**8) / 100.0,
            max_moves=max_moves,
            genmove_colour=colour if genmove else None,
            ownership=(lambda p: players.root_ownership(self.player, self.rules, p.state)) if want_ownership else None,
        )
