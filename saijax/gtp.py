"""A GTP v2 engine for SAI networks, with Leela Zero and KataGo analysis.

Run it with a checkpoint (a workdir, its ``checkpoints`` directory or one
generation's directory), or without one for a random net::

    python -m saijax.gtp --checkpoint=runs/go9 --visits=200
    python -m saijax.gtp --board_size=5 --visits=8

and point Sabaki, Lizzie or GoGui at that command (docs/design.md §8).

Protocol (GTP v2, §2.2 and §3 of the specification). Each input line has its
control characters removed except HT and LF, HT becomes a space, and
everything from ``#`` on is a comment; empty lines get no response. Every
other line gets exactly one response: ``=`` or ``?``, the command's id if it
had one, the text, and an empty line. Any failure inside a command becomes
a ``?`` response and leaves the engine's state as it was before the command.

Game state. The engine keeps a list of positions for ``undo``; each holds a
:class:`saijax.go.GoState` and what is needed to write the game as SGF. The
rules are saijax's (docs/design.md §1): positional superko, no suicide, the game
ends after two passes or at the move cap (2·N² moves), after which moves are
illegal. GTP lets a controller play either colour at any time; a move by the
player not to move is recorded as a pass by the player to move followed by
the move, which keeps the superko history. When that pass would end the
game (the previous move was a pass, or the move cap), the position is
instead restarted as a setup position with the requested player to move,
which forgets the superko history and the move count.

Analysis (``lz-analyze``, ``kata-analyze`` and their ``genmove_analyze``
forms). Each analysis round is one search of ``visits`` simulations with a
fresh PRNG key (so one compiled search serves genmove and analysis alike),
and the rounds are pooled per root move, like a root-parallel search:

* visits add up; winrate (the λ/μ agent value of the move for the player to
  move, in [0, 1]) and scoreLead are visit-weighted means; the prior is the
  net's; the PV is the one from the round that visited the move most;
* lcb is ``winrate − sqrt(winrate·(1 − winrate) / visits)``, one standard
  error of a Bernoulli mean at that winrate, clipped to [0, 1]: a lower
  bound that orders moves with few visits below well-explored ones. It is
  a heuristic: a move that gets one visit per round is valued by the same
  net evaluation every round, so pooled visits overstate the evidence;
* scoreLead (and its alias scoreMean) is the player to move's α + k from the
  move's child evaluation (the Agent's ``score_lead``); scoreStdev is the
  standard deviation of the logistic distribution that SAI's sigmoid defines
  over the final margin, π / (√3 · β), with the child's β;
* utility is ``2 · winrate − 1`` (the value scale of the search);
* ownership is not available (the net has no ownership head), so a request
  for it is accepted and ignored.

Pooling needs searches that differ: Gumbel search (the default) draws new
Gumbel noise every round. With ``--algorithm=puct`` (no root noise) every
round repeats the same search, so the numbers sharpen only in visit counts.

Position control (docs/design.md §8, :mod:`saijax.control`). An agent
setting like λ and μ: with a method on (``--control=C``, or ``lz-setoption
name control value C``), every search uses the method's own search
(:meth:`saijax.control.ControlConfig.search_config`: PUCT with c_puct 10 for
naive, A, B and C; the engine's search for the endgame method), and
``genmove`` and the ``genmove_analyze`` commands play the move
:func:`saijax.control.select` picks from the search's output, given the
opponent's last move(s) from the game record (a pass, or none before a
setup position, counts as no move). Analysis lines still show the search's
statistics. Options:

* ``lz-setoption name control value off|naive|A|B|C|endgame``;
* ``lz-setoption name control <field> value <v>`` for every field of
  :class:`saijax.control.ControlConfig` (``gentleness``, ``gamma``,
  ``min_visit_share``, ``naturalness_weight``, ``lead_band`` as
  ``-10,-4``, ...). The settings are kept while control is off, and apply
  when a method is turned on;
* on the command line, ``--control=<method>`` and repeated
  ``--control_option field=value``.

Playing style (docs/design.md §8, :mod:`saijax.styles`): the online method,
a root prior reweighted by line and by Method B's distance to the opponent's
last move: ``lz-setoption name style value centre|edge|off`` or
``--style=centre``.

A bad option or value is a GTP error naming it, and changes nothing.

``python -m saijax.gtp`` streams analysis until the next input line arrives:
a reader thread queues stdin lines, and the engine checks the queue between
rounds. In process, :meth:`GtpEngine.analysis_rounds` runs a fixed number of
rounds, so tests are deterministic.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import saijax
from saijax import cli, control, go, players, search, sgf, styles

__all__ = ["GtpEngine", "Analysis", "serve", "main"]

_ENGINE_NAME = "saijax"
_MAX_KOMI = 10_000.0  # |komi| beyond this is not a Go game (and loses float32 precision)
_MAX_VISITS = 100_000
_MAX_SGF_BYTES = 10 * 1024 * 1024
_PV_LENGTH = 32

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # C0 and DEL except HT (LF is replaced first)
_OUTPUT_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # the same, but keeping LF
_ID = re.compile(r"[0-9]+")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_VERTEX = re.compile(r"[A-HJ-Za-hj-z][0-9]{1,2}")
_COLOURS = {"b": 1, "black": 1, "w": -1, "white": -1}
_BOOLS = {"true": True, "false": False}


class _Failure(Exception):
    """A command failed; the message is the text after ``?``."""


def _syntax_error() -> _Failure:
    return _Failure("syntax error")


# ---------------------------------------------------------------------------
# Argument parsing (ASCII only: Python's int()/float() accept other digits,
# underscores, "nan" and "inf", none of which GTP allows).


def _parse_int(text: str, lo: int | None = None, hi: int | None = None) -> int:
    if not _INT.fullmatch(text):
        raise _syntax_error()
    value = int(text)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise _syntax_error()
    return value


def _parse_float(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise _syntax_error()
    value = float(text)
    if not math.isfinite(value):
        raise _syntax_error()
    return value


def _parse_colour(text: str) -> int:
    colour = _COLOURS.get(text.lower())
    if colour is None:
        raise _syntax_error()
    return colour


def _parse_vertex(rules: go.GoRules, text: str) -> int:
    """A GTP vertex ("D4", "pass"); malformed is a syntax error, off-board illegal."""
    if text.lower() == "pass":
        return rules.pass_action
    if not _VERTEX.fullmatch(text):
        raise _syntax_error()
    try:
        return go.from_gtp(rules, text)
    except ValueError:
        raise _Failure("illegal move") from None


def _expect(args: Sequence[str], count: int) -> None:
    if len(args) != count:
        raise _syntax_error()


def _clean_input(line: str) -> str:
    """GTP §2.2 preprocessing of one line (without its newline)."""
    line = line.replace("\n", " ")
    line = _CONTROL.sub("", line)
    line = line.split("#", 1)[0]
    return line.replace("\t", " ")


def _format(cmd_id: str, ok: bool, text: str = "") -> str:
    """One complete response, ending with the empty line."""
    text = _OUTPUT_CONTROL.sub("", text.replace("\t", " "))
    if not ok:
        text = " ".join(text.split())
    # An empty line would end the response early.
    text = re.sub(r"\n\s*\n", "\n", text.rstrip())
    head = ("=" if ok else "?") + cmd_id
    return f"{head} {text}\n\n" if text else f"{head}\n\n"


# ---------------------------------------------------------------------------
# Positions and search rounds.


@dataclasses.dataclass(frozen=True)
class _Position:
    """One entry of the undo list: the state and the game record leading to it."""

    state: go.GoState
    setup_black: tuple[int, ...] = ()
    setup_white: tuple[int, ...] = ()
    first_player: int = 1
    handicap: int = 0
    moves: tuple[int, ...] = ()


@dataclasses.dataclass
class _MoveStats:
    """One root move's statistics pooled over analysis rounds."""

    visits: int = 0
    winrate_sum: float = 0.0  # Σ visits · winrate
    score_sum: float = 0.0  # Σ visits · score lead
    stdev_sum: float = 0.0  # Σ visits · score stdev
    prior: float = 0.0
    pv: tuple[int, ...] = ()
    pv_visits: int = -1  # visits of the move in the round its PV comes from

    @property
    def winrate(self) -> float:
        return self.winrate_sum / max(self.visits, 1)

    @property
    def lcb(self) -> float:
        w = self.winrate
        return min(1.0, max(0.0, w - math.sqrt(max(w * (1.0 - w), 0.0) / max(self.visits, 1))))


@dataclasses.dataclass(frozen=True)
class _Round:
    """What one search says about the root and its visited children."""

    action: int
    best_value: float
    winrate: float
    alpha: float
    beta: float
    visits: int
    moves: tuple[dict[str, Any], ...]


def _finite(x: float, default: float = 0.0) -> float:
    x = float(x)
    return x if math.isfinite(x) else default


def _score_stdev(beta: float) -> float:
    """Standard deviation of the margin under the sigmoid σ(β(α + x)): π/(√3 β)."""
    beta = float(beta)
    if not (math.isfinite(beta) and beta > 0):
        return 0.0
    return math.pi / (math.sqrt(3.0) * beta)


# ---------------------------------------------------------------------------
# Streaming analysis.


class Analysis:
    """A streaming response (lz-analyze, kata-analyze, *-genmove_analyze).

    Write :attr:`head` first, then each text :meth:`rounds` yields (an ``info``
    line, or "" when a round produced nothing to show), and finally
    :meth:`finish`, which ends the response (and for genmove_analyze plays
    the move and writes ``play <vertex>``).
    """

    def __init__(
        self,
        engine: GtpEngine,
        cmd_id: str,
        *,
        kata: bool,
        position: _Position,
        interval: float,
        max_moves: int | None,
        genmove_colour: int | None,
    ):
        self._engine = engine
        self._kata = kata
        self._position = position
        self._interval = interval
        self._max_moves = max_moves
        self._genmove_colour = genmove_colour
        self._stats: dict[int, _MoveStats] = {}
        self._last_round: _Round | None = None
        self._finished = False
        self.head = f"={cmd_id}\n"

    @property
    def is_genmove(self) -> bool:
        return self._genmove_colour is not None

    def rounds(self, *, max_rounds: int | None = None, throttle: bool = False) -> Iterator[str]:
        """Runs analysis rounds, yielding the text to write after each.

        Args:
          max_rounds: stop after this many rounds; None means forever for
            analysis, one round for genmove_analyze (a genmove's search).
          throttle: emit an info line only when ``interval`` has passed since
            the last one (the streaming mode of ``main``); otherwise every
            round emits one.
        """
        if self.is_genmove and max_rounds is None:
            max_rounds = 1
        state = self._position.state
        last_emit = None
        count = 0
        while max_rounds is None or count < max_rounds:
            count += 1
            if bool(state.terminated):
                # Nothing to analyse; keep the stream alive without spinning.
                if throttle:
                    time.sleep(0.05)
                yield ""
                continue
            try:
                result = self._engine._search_round(self._position)
            except Exception as e:  # pylint: disable=broad-except
                # The "=" line is already out: end the stream, keep the engine.
                print(f"saijax.gtp: analysis stopped: {type(e).__name__}: {e}", file=sys.stderr)
                return
            self._last_round = result
            self._accumulate(result)
            now = time.monotonic()
            if throttle and last_emit is not None and now - last_emit < self._interval:
                yield ""
                continue
            last_emit = now
            yield self.info_line()

    def _accumulate(self, result: _Round) -> None:
        for move in result.moves:
            stats = self._stats.setdefault(move["move"], _MoveStats())
            n = move["visits"]
            stats.visits += n
            stats.winrate_sum += n * move["winrate"]
            stats.score_sum += n * move["score_lead"]
            stats.stdev_sum += n * _score_stdev(move["beta"])
            stats.prior = move["prior"]
            if n >= stats.pv_visits:
                stats.pv, stats.pv_visits = tuple(move["pv"]), n

    def info_line(self) -> str:
        """The pooled statistics as one line of ``info move ...`` entries."""
        rules = self._engine.rules
        ranked = sorted(self._stats.items(), key=lambda kv: (-kv[1].visits, -kv[1].winrate, kv[0]))
        if self._max_moves:
            ranked = ranked[: self._max_moves]
        parts = []
        for order, (move, st) in enumerate(ranked):
            pv = " ".join(go.to_gtp(rules, a) for a in st.pv)
            vertex = go.to_gtp(rules, move)
            if self._kata:
                w = st.winrate
                score = st.score_sum / max(st.visits, 1)
                stdev = st.stdev_sum / max(st.visits, 1)
                parts.append(
                    f"info move {vertex} visits {st.visits} utility {_finite(2 * w - 1):.6f} "
                    f"winrate {_finite(w):.6f} scoreMean {_finite(score):.6f} "
                    f"scoreStdev {_finite(stdev):.6f} scoreLead {_finite(score):.6f} "
                    f"prior {_finite(st.prior):.6f} lcb {_finite(st.lcb):.6f} order {order} pv {pv}"
                )
            else:
                parts.append(
                    f"info move {vertex} visits {st.visits} winrate {round(_finite(st.winrate) * 10000)} "
                    f"prior {round(_finite(st.prior) * 10000)} lcb {round(_finite(st.lcb) * 10000)} "
                    f"order {order} pv {pv}"
                )
        return " ".join(parts) + "\n" if parts else ""

    def finish(self) -> str:
        """Ends the response; genmove_analyze plays its move here."""
        if self._finished:
            return ""
        self._finished = True
        if not self.is_genmove:
            return "\n"
        try:
            vertex = self._engine._commit_genmove(self._position, self._genmove_colour, self._last_round)
        except Exception as e:  # pylint: disable=broad-except
            # The "=" line is already out; report on stderr and end the response.
            print(f"saijax.gtp: genmove_analyze failed: {type(e).__name__}: {e}", file=sys.stderr)
            return "\n"
        return f"play {vertex}\n\n"


# ---------------------------------------------------------------------------
# The engine.


class GtpEngine:
    """A GTP v2 engine over one :class:`saijax.players.Player`.

    Use :meth:`handle` for one complete response per line, :meth:`begin` for
    a response that may stream (the main loop), and :meth:`analysis_rounds`
    to drive streaming analysis deterministically in tests.
    """

    def __init__(
        self,
        player: players.Player,
        *,
        visits: int = 100,
        lambda_: float = 0.5,
        mu: float = 0.0,
        threshold: float = 0.0,
        resign_threshold: float = 0.05,
        komi: float = 7.5,
        seed: int = 0,
        verbose: bool = False,
        search_config: search.SearchConfig | None = None,
    ):
        """Builds the engine.

        Args:
          player: the network.
          visits: simulations per genmove and per analysis round.
          lambda_, mu, threshold: the λ/μ agent (1 ≥ λ ≥ μ ≥ 0; the agent
            applies while the root winrate is at least ``threshold``).
          resign_threshold: genmove resigns when the best move's agent value
            is below this, from move N²/4 on; negative never resigns.
          komi: the initial komi.
          seed: PRNG seed of the searches.
          verbose: print a line per genmove on stderr.
          search_config: other search settings (default the player's); its
            simulations are replaced by ``visits``. With position control
            (``player.control``) the searches use the method's own
            settings derived from it (module docstring).
        """
        self.rules = go.GoRules(player.board_size)
        if not 1 <= int(visits) <= _MAX_VISITS:
            raise ValueError(f"visits must be in 1..{_MAX_VISITS}, got {visits}")
        if not math.isfinite(komi) or abs(komi) > _MAX_KOMI:
            raise ValueError(f"komi must be finite with |komi| <= {_MAX_KOMI:g}, got {komi}")
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
        self._history: list[_Position] = [_Position(self._empty)]
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

    def search_config(self, visits: int | None = None) -> search.SearchConfig:
        """The settings of the engine's searches: the position-control method's own, if any."""
        config = self.player.config
        if self.player.control is not None:
            config = self.player.control.search_config(config)
        return dataclasses.replace(config, num_simulations=int(visits or self.visits))

    def search(self, state: go.GoState, visits: int | None = None) -> search.SearchOutput:
        """One search of ``state`` with a fresh key; the output for a batch of one.

        Jitted searches are cached per search configuration (visits, and the
        position-control method's algorithm and c_puct); the agent is traced,
        so ``lz-setoption`` of λ, μ or a control parameter never recompiles.
        """
        config = self.search_config(visits)
        if config not in self._search_fns:
            self._search_fns[config] = search.make_search_fn(self.player.evaluator, self.rules, config)
        self._key, key = jax.random.split(self._key)
        batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
        return self._search_fns[config](self.player.variables, key, batched, self.player.agent.params())

    def controlled_move(self, out: search.SearchOutput, state: go.GoState, moves: Sequence[int]) -> int:
        """The position-controlled move of a one-game search output (:func:`saijax.control.select`).

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
        text = _clean_input(line)
        tokens = text.split()
        if not tokens:
            return None
        cmd_id = ""
        if _ID.fullmatch(tokens[0]):
            cmd_id, tokens = tokens[0], tokens[1:]
        if not tokens:
            return _format(cmd_id, False, "missing command")
        name, args = tokens[0], tokens[1:]
        handler = self._handlers.get(name)
        if handler is None:
            return _format(cmd_id, False, "unknown command")
        snapshot = self._snapshot()
        try:
            result = handler(args, cmd_id)
        except _Failure as e:
            self._restore(snapshot)
            return _format(cmd_id, False, str(e))
        except Exception as e:  # pylint: disable=broad-except
            # A bug or a library error must not kill or desync the engine.
            self._restore(snapshot)
            message = str(e) or type(e).__name__
            return _format(cmd_id, False, message)
        if isinstance(result, Analysis):
            return result
        return _format(cmd_id, True, "" if result is None else str(result))

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
            self.resign_threshold,
            self.player,
            self._control_settings,
        )

    def _restore(self, snapshot) -> None:
        (
            self._history,
            self._komi,
            self.visits,
            self.resign_threshold,
            self.player,
            self._control_settings,
        ) = snapshot

    def _board_is_empty(self) -> bool:
        state = self.state
        return int(state.move_count) == 0 and not np.any(np.asarray(state.board))

    def _reset(self, position: _Position | None = None) -> None:
        self._history = [position or _Position(self._empty.replace(komi=jnp.float32(self._komi)))]

    def _to_move(self, position: _Position, colour: int) -> _Position:
        """The position with ``colour`` to move (see the module docstring)."""
        state = position.state
        if int(state.to_play) == colour:
            return position
        if not bool(state.terminated) and int(state.passes) == 0 and int(state.move_count) + 1 < self.rules.max_moves:
            passed = go.play(self.rules, state, self.rules.pass_action)
            return dataclasses.replace(position, state=passed, moves=position.moves + (self.rules.pass_action,))
        board = np.asarray(state.board)
        black = tuple(int(p) for p in np.flatnonzero(board == 1))
        white = tuple(int(p) for p in np.flatnonzero(board == -1))
        fresh = go.setup(self.rules, self._komi, black=black, white=white, to_play=colour)
        return _Position(fresh, black, white, first_player=colour)

    def _play_move(self, position: _Position, action: int) -> _Position:
        state = position.state
        if bool(state.terminated) or not bool(state.legal[action]):
            raise _Failure("illegal move")
        return dataclasses.replace(position, state=go.play(self.rules, state, action), moves=position.moves + (action,))

    def _search_round(self, position: _Position) -> _Round:
        """One search from ``position``: the chosen move and per-child statistics.

        The chosen move is the search's own, or with position control the
        move :meth:`controlled_move` picks.
        """
        state = position.state
        out = self.search(state)
        moves = tuple(
            {
                "move": m.action,
                "visits": m.visits,
                "winrate": _finite(m.value, 0.5),
                "prior": _finite(m.prior),
                "score_lead": _finite(m.score_lead),
                "beta": _finite(m.beta),
                "pv": list(m.pv),
            }
            for m in search.root_moves(out)
        )
        action, best, winrate, alpha, beta, visits = jax.device_get(
            (
                out.action[0],
                out.best_value[0],
                out.root_winrate[0],
                out.root_alpha[0],
                out.root_beta[0],
                out.visit_counts[0],
            )
        )
        if self.player.control is not None:
            action = self.controlled_move(out, state, position.moves)
        return _Round(
            action=int(action),
            best_value=float(best),
            winrate=float(winrate),
            alpha=float(alpha),
            beta=float(beta),
            visits=int(np.sum(visits)),
            moves=moves,
        )

    def _should_resign(self, state: go.GoState, result: _Round) -> bool:
        return bool(
            search.should_resign(
                result.best_value,
                int(state.move_count),
                threshold=self.resign_threshold,
                resign_after=search.default_resign_after(self.rules),
            )
        )

    def _commit_genmove(self, position: _Position, colour: int, result: _Round | None) -> str:
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
        _expect(args, 0)
        return "2"

    def _name(self, args, cmd_id):
        _expect(args, 0)
        return _ENGINE_NAME

    def _version(self, args, cmd_id):
        _expect(args, 0)
        return saijax.__version__

    def _known_command(self, args, cmd_id):
        _expect(args, 1)
        return "true" if args[0] in self._handlers else "false"

    def _list_commands(self, args, cmd_id):
        _expect(args, 0)
        return "\n".join(self._handlers)

    def _quit(self, args, cmd_id):
        self.quit_requested = True
        return ""

    def _boardsize(self, args, cmd_id):
        _expect(args, 1)
        size = _parse_int(args[0])
        if size not in self.player.board_sizes:
            raise _Failure("unacceptable size")
        self._reset()
        return ""

    def _clear_board(self, args, cmd_id):
        _expect(args, 0)
        self._reset()
        return ""

    def _komi_cmd(self, args, cmd_id):
        _expect(args, 1)
        komi = _parse_float(args[0])
        if abs(komi) > _MAX_KOMI:
            raise _syntax_error()
        self._komi = komi
        k = jnp.float32(komi)
        self._history = [dataclasses.replace(p, state=p.state.replace(komi=k)) for p in self._history]
        return ""

    def _play(self, args, cmd_id):
        _expect(args, 2)
        colour = _parse_colour(args[0])
        action = _parse_vertex(self.rules, args[1])
        if bool(self.state.terminated):
            raise _Failure("illegal move")
        position = self._to_move(self._history[-1], colour)
        self._history.append(self._play_move(position, action))
        return ""

    def _genmove(self, args, cmd_id):
        _expect(args, 1)
        colour = _parse_colour(args[0])
        if bool(self.state.terminated):
            return "pass"
        position = self._to_move(self._history[-1], colour)
        return self._commit_genmove(position, colour, None)

    def _undo(self, args, cmd_id):
        _expect(args, 0)
        if len(self._history) < 2:
            raise _Failure("cannot undo")
        self._history.pop()
        return ""

    def _showboard(self, args, cmd_id):
        _expect(args, 0)
        return "\n" + go.to_string(self.rules, self.state)

    def _final_score(self, args, cmd_id):
        _expect(args, 0)
        area = float(_area_score_fn(self.rules)(self.state))
        margin = area - self._komi
        winner = (margin > 0) - (margin < 0)
        return sgf.game_result_string(winner, margin if winner else None)

    def _final_status_list(self, args, cmd_id):
        _expect(args, 1)
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise _syntax_error()
        if status != "alive":
            return ""  # Tromp–Taylor: no stone is dead, and seki is not distinguished
        state = self.state
        board, chain = np.asarray(state.board), np.asarray(state.chain)
        groups: dict[int, list[str]] = {}
        for p in np.flatnonzero(board):
            groups.setdefault(int(chain[p]), []).append(go.to_gtp(self.rules, int(p)))
        return "\n".join(" ".join(g) for g in groups.values())

    def _handicap_count(self, args) -> int:
        _expect(args, 1)
        count = _parse_int(args[0])
        if not 2 <= count <= self.rules.num_points - 1:
            raise _Failure("invalid handicap")
        if not self._board_is_empty():
            raise _Failure("board not empty")
        return count

    def _set_handicap(self, stones: Sequence[int], handicap: int) -> str:
        stones = tuple(sorted(int(p) for p in stones))
        state = go.setup(self.rules, self._komi, black=stones, to_play=-1)
        self._reset(_Position(state, setup_black=stones, first_player=-1, handicap=handicap))
        return " ".join(go.to_gtp(self.rules, p) for p in stones)

    def _fixed_handicap(self, args, cmd_id):
        count = self._handicap_count(args)
        try:
            stones = go.handicap_points(self.rules, count)
        except ValueError:
            raise _Failure("invalid handicap") from None
        return self._set_handicap(stones, count)

    def _place_free_handicap(self, args, cmd_id):
        count = self._handicap_count(args)
        try:
            stones = go.handicap_points(self.rules, count)
        except ValueError:
            stones = _spread_points(self.rules.size, count)
        return self._set_handicap(stones, count)

    def _set_free_handicap(self, args, cmd_id):
        if not args:
            raise _syntax_error()
        try:
            stones = [_parse_vertex(self.rules, a) for a in args]
        except _Failure as e:
            if str(e) == "illegal move":  # a well-formed vertex off the board
                raise _Failure("bad vertex list") from None
            raise
        if (
            len(stones) < 2
            or len(set(stones)) != len(stones)
            or self.rules.pass_action in stones
            or len(stones) > self.rules.num_points - 1
        ):
            raise _Failure("bad vertex list")
        if not self._board_is_empty():
            raise _Failure("board not empty")
        self._set_handicap(stones, len(stones))
        return ""

    def _loadsgf(self, args, cmd_id):
        if len(args) not in (1, 2):
            raise _syntax_error()
        move_number = _parse_int(args[1], lo=1) if len(args) == 2 else None
        path = args[0]
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_SGF_BYTES:
            raise _Failure("cannot load file")
        try:
            record = sgf.read_sgf(path, check=False)  # replayed below with the engine's rules
        except (ValueError, OSError) as e:
            raise _Failure(f"cannot load file: {e}") from None
        if record.size not in self.player.board_sizes:
            raise _Failure("unacceptable size")
        if not math.isfinite(record.komi) or abs(record.komi) > _MAX_KOMI:
            raise _Failure("cannot load file: unusable komi")
        states = self._replay(record)
        keep = len(states) if move_number is None else min(move_number, len(states))
        self._komi = float(record.komi)
        self._history = [
            _Position(
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
                raise _Failure(f"cannot load file: move {i + 1} ({label}) is illegal: {e}") from None
            states.append(state)
        return states

    def _printsgf(self, args, cmd_id):
        if len(args) > 1:
            raise _syntax_error()
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
            root_comment=f"{_ENGINE_NAME} {saijax.__version__}: {self.player.description}",
        )
        if args:
            try:
                sgf.write_sgf(record, args[0])
            except OSError as e:
                raise _Failure(f"cannot write file: {e}") from None
            return ""
        return sgf.write_sgf(record).decode("utf-8", errors="replace")

    def _time_settings(self, args, cmd_id):
        _expect(args, 3)
        for a in args:
            _parse_int(a, lo=0)
        return ""

    def _time_left(self, args, cmd_id):
        _expect(args, 3)
        _parse_colour(args[0])
        _parse_int(args[1], lo=0)
        _parse_int(args[2], lo=0)
        return ""

    def _setoption(self, args, cmd_id):
        # lz-setoption name <name words> value <value words>
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise _syntax_error()
        split = args.index("value", 2)
        name = " ".join(args[1:split]).lower()
        value_text = " ".join(args[split + 1 :])
        if not value_text or " " in value_text:
            raise _syntax_error()
        if name in ("lambda", "lambda_", "mu", "threshold"):
            value = _parse_float(value_text)
            key = {"lambda": "lambda_"}.get(name, name)
            try:
                self.player = self.player.with_agent(**{key: value})
            except ValueError as e:
                raise _Failure(str(e)) from None
        elif name in ("visits", "playouts"):
            self.visits = _parse_int(value_text)
            if not 1 <= self.visits <= _MAX_VISITS:
                raise _Failure(f"visits must be in 1..{_MAX_VISITS}")
        elif name == "resign_threshold":
            value = _parse_float(value_text)
            if value > 1:
                raise _Failure("resign_threshold must be <= 1 (negative: never resign)")
            self.resign_threshold = value
        elif name == "control" or name.startswith("control "):
            self._set_control(name.split()[1:], value_text)
        elif name == "style":
            try:
                root_prior = _online_style(value_text)
            except ValueError as e:
                raise _Failure(str(e)) from None
            self.player = self.player.replace(config=dataclasses.replace(self.player.config, root_prior=root_prior))
        else:
            raise _Failure(f"unknown option {name}")
        return ""

    def _set_control(self, field: list[str], value_text: str) -> None:
        """``control value <method|off>`` or ``control <field> value <v>`` (module docstring)."""
        if len(field) > 1:
            raise _Failure(f"unknown option control {' '.join(field)}")
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
            raise _Failure(str(e)) from None
        self._control_settings = settings
        self.player = self.player.replace(control=settings if enabled else None)

    def _analyze(self, args, cmd_id, *, kata: bool, genmove: bool):
        colour = None
        i = 0
        if args and args[0].lower() in _COLOURS:
            colour, i = _COLOURS[args[0].lower()], 1
        interval_cs = 0
        max_moves = None
        seen_bare_interval = False
        while i < len(args):
            token = args[i]
            if _ID.fullmatch(token) and not seen_bare_interval:
                interval_cs, seen_bare_interval = _parse_int(token), True
                i += 1
            elif token in ("interval", "maxmoves", "minmoves") and i + 1 < len(args):
                value = _parse_int(args[i + 1], lo=0)
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
                and args[i + 1].lower() in _BOOLS
            ):
                i += 2  # accepted; ownership is not available (module docstring)
            else:
                raise _syntax_error()
        if genmove and colour is None:
            colour = int(self.state.to_play)
        position = self._history[-1]
        if colour is not None and not bool(position.state.terminated):
            position = self._to_move(position, colour)
        return Analysis(
            self,
            cmd_id,
            kata=kata,
            position=position,
            interval=min(interval_cs, 10**8) / 100.0,
            max_moves=max_moves,
            genmove_colour=colour if genmove else None,
        )


def _online_style(text: str) -> styles.OnlineStyle | None:
    """``--style`` / ``lz-setoption name style``: centre (or center), edge, or off/none."""
    word = text.strip().lower()
    if word in ("off", "none"):
        return None
    word = {"center": "centre"}.get(word, word)
    if word not in styles.STYLES:
        raise ValueError(f"unknown style {text!r}: use off, {', '.join(styles.STYLES)}")
    return styles.OnlineStyle(word)


@functools.cache
def _init_fn(rules: go.GoRules):
    # Jitted: one compile is much faster than running go.init op by op.
    return jax.jit(functools.partial(go.init, rules))


@functools.cache
def _area_score_fn(rules: go.GoRules):
    return jax.jit(functools.partial(go.area_score, rules))


def _spread_points(size: int, count: int) -> list[int]:
    """Free handicap where the GTP fixed table has none: spread-out points.

    Greedy: each stone goes where it is farthest (Chebyshev distance) from the
    stones already placed, preferring the third line (or the centre on small
    boards), then the lowest index. Deterministic.
    """
    line = 2 if size >= 7 else (size - 1) // 2
    chosen: list[tuple[int, int]] = []
    for _ in range(count):
        best, best_key = None, None
        for r in range(size):
            for c in range(size):
                if (r, c) in chosen:
                    continue
                spread = min((max(abs(r - r2), abs(c - c2)) for r2, c2 in chosen), default=size)
                edge = min(r, c, size - 1 - r, size - 1 - c)
                key = (-spread, abs(edge - line), r * size + c)
                if best_key is None or key < best_key:
                    best, best_key = (r, c), key
        chosen.append(best)
    return [r * size + c for r, c in chosen]


# ---------------------------------------------------------------------------
# The stdin/stdout loop.


def serve(engine: GtpEngine, stdin, stdout) -> None:
    """Runs the engine over binary streams until ``quit`` or end of input.

    A reader thread queues input lines, so streaming analysis can check for
    the next command between rounds and stop as soon as one arrives.
    """
    inbox: queue.Queue = queue.Queue()

    def reader():
        try:
            for raw in iter(stdin.readline, b""):
                inbox.put(raw)
        finally:
            inbox.put(None)

    threading.Thread(target=reader, name="gtp-stdin", daemon=True).start()

    def write(text: str) -> None:
        if text:
            stdout.write(text.encode("utf-8", errors="replace"))
            stdout.flush()

    while not engine.quit_requested:
        raw = inbox.get()
        if raw is None:
            break
        result = engine.begin(raw.decode("utf-8", errors="replace").rstrip("\n"))
        if result is None:
            continue
        if isinstance(result, str):
            write(result)
            continue
        write(result.head)
        for text in result.rounds(throttle=True):
            write(text)
            if not inbox.empty():
                break
        write(result.finish())


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m saijax.gtp",
        description="GTP v2 engine for saijax networks (Sabaki, Lizzie, GoGui).",
    )
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="workdir, its checkpoints dir, a generation dir, or zoo:<name>; omit for a random net",
    )
    parser.add_argument(
        "--board_size",
        type=int,
        default=None,
        help="board size of a random net (default 9); with a checkpoint, must match it",
    )
    parser.add_argument("--blocks", type=int, default=2, help="random net: residual blocks")
    parser.add_argument("--filters", type=int, default=16, help="random net: filters")
    parser.add_argument("--value_head", default="sai", help="random net: sai, winrate or score")
    parser.add_argument("--visits", type=int, default=100, help="simulations per move / analysis round")
    parser.add_argument("--lambda_", type=float, default=0.5, help="agent λ (upper end of the bonus interval)")
    parser.add_argument("--mu", type=float, default=0.0, help="agent μ (lower end), 0 <= μ <= λ <= 1")
    parser.add_argument(
        "--threshold", type=float, default=0.0, help="use (λ, μ) only while the root winrate is at least this"
    )
    parser.add_argument(
        "--resign_threshold",
        type=float,
        default=0.05,
        help="resign when the best move's value is below this (negative: never)",
    )
    parser.add_argument("--komi", type=float, default=7.5, help="initial komi")
    parser.add_argument("--algorithm", default="gumbel", choices=search.ALGORITHMS, help="search algorithm")
    parser.add_argument(
        "--control",
        default="off",
        help="position control: off, naive, A, B, C or endgame (docs/design.md §8)",
    )
    parser.add_argument(
        "--control_option",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a position-control setting, e.g. gentleness=2.5 or gamma=2; repeat for more",
    )
    parser.add_argument("--style", default="off", help="online playing style: off, centre or edge (docs/design.md §8)")
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed (random net and searches)")
    parser.add_argument("--verbose", action="store_true", help="one line per genmove on stderr")
    return parser.parse_args(argv)


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
        board_size = args.board_size if args.checkpoint or args.board_size else 9
        try:
            controlled = control.from_options(args.control, args.control_option)
            player = players.load_player(
                args.checkpoint,
                board_size=board_size,
                blocks=args.blocks,
                filters=args.filters,
                value_head=args.value_head,
                seed=args.seed,
            ).replace(control=controlled)
            config = dataclasses.replace(player.config, algorithm=args.algorithm, root_prior=_online_style(args.style))
            engine = GtpEngine(
                player,
                visits=args.visits,
                lambda_=args.lambda_,
                mu=args.mu,
                threshold=args.threshold,
                resign_threshold=args.resign_threshold,
                komi=args.komi,
                seed=args.seed,
                verbose=args.verbose,
                search_config=config,
            )
        except (ValueError, OSError) as e:
            return cli.report_error(f"saijax.gtp: error: {e}", 2, exit_now=exit_on_error)
        print(f"saijax.gtp: {player.description}", file=sys.stderr)
        serve(engine, sys.stdin.buffer, gtp_out)
        return 0
    finally:
        sys.stdout = saved_stdout


if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
