"""Streaming analysis for the GTP engine: positions, search rounds and their pooling.

``lz-analyze``, ``kata-analyze`` and their ``genmove_analyze`` forms. Each
analysis round is one search of ``visits`` simulations with a fresh PRNG key,
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
* ``ownership true`` (kata-analyze): when the net has the ownership head
  (``network.ownership_head``), each line ends with KataGo's ``ownership``
  field: N² floats in [−1, 1], the net's predicted final ownership at the
  analysed position, row-major from the top-left point (A19 on 19×19) to
  the bottom-right, from the view of the player to move (KataGo's
  default). It is the raw net at the root, not a search average. Without
  the head the request is accepted and ignored (as are ownershipStdev and
  movesOwnership).

Pooling needs searches that differ. The engine's analysis rounds use Gumbel
search with root noise even when its moves are deterministic
(``gumbel_scale`` 0, :mod:`saijax.gtp.engine`), so every round draws new
noise. With ``--algorithm=puct`` (no root noise) every round repeats the
same search, so the numbers sharpen only in visit counts.

This module knows nothing of the engine: :class:`Analysis` is given the
functions that search a position and play the chosen move.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

from saijax.core import go, search

__all__ = [
    "Analysis",
    "Position",
    "Round",
    "RoundPool",
    "MoveStats",
    "finite",
    "search_round",
    "to_move",
    "score_stdev",
]


@dataclasses.dataclass(frozen=True)
class Position:
    """One entry of the engine's undo list: the state and the game record leading to it."""

    state: go.GoState
    setup_black: tuple[int, ...] = ()
    setup_white: tuple[int, ...] = ()
    first_player: int = 1
    handicap: int = 0
    moves: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Round:
    """What one search says about the root and its visited children."""

    action: int
    best_value: float
    winrate: float
    alpha: float
    beta: float
    visits: int
    moves: tuple[dict[str, Any], ...]


@dataclasses.dataclass
class MoveStats:
    """One root move's statistics pooled over analysis rounds."""

    visits: int = 0
    winrate_sum: float = 0.0  # Σ visits · winrate
    score_sum: float = 0.0  # Σ visits · score lead
    stdev_sum: float = 0.0  # Σ visits · score stdev
    prior: float = 0.0
    pv: tuple[int, ...] = ()
    pv_visits: tuple[int, ...] = ()  # visits of each node of ``pv``, in the round it comes from
    pv_round_visits: int = -1  # visits of the move in the round its PV comes from
    chosen: int = 0  # rounds whose search chose this move

    @property
    def winrate(self) -> float:
        return self.winrate_sum / max(self.visits, 1)

    @property
    def score_lead(self) -> float:
        return self.score_sum / max(self.visits, 1)

    @property
    def score_stdev(self) -> float:
        return self.stdev_sum / max(self.visits, 1)

    @property
    def lcb(self) -> float:
        w = self.winrate
        return min(1.0, max(0.0, w - math.sqrt(max(w * (1.0 - w), 0.0) / max(self.visits, 1))))


class RoundPool:
    """Analysis rounds of one position pooled per root move (the module docstring's rules).

    The GTP engine's streaming analysis and the analysis engine
    (:mod:`saijax.gtp.kata_engine`) pool their rounds here, so the same
    rounds give the same numbers in both.
    """

    def __init__(self):
        self.stats: dict[int, MoveStats] = {}
        self.rounds = 0
        self.last: Round | None = None

    def add(self, result: Round) -> None:
        """Adds one round's moves."""
        self.rounds += 1
        self.last = result
        for move in result.moves:
            stats = self.stats.setdefault(move["move"], MoveStats())
            stats.chosen += int(move["move"] == result.action)
            n = move["visits"]
            stats.visits += n
            stats.winrate_sum += n * move["winrate"]
            stats.score_sum += n * move["score_lead"]
            stats.stdev_sum += n * score_stdev(move["beta"])
            stats.prior = move["prior"]
            if n >= stats.pv_round_visits:
                stats.pv, stats.pv_round_visits = tuple(move["pv"]), n
                stats.pv_visits = tuple(move.get("pv_visits", ()))

    def ranked(self) -> list[tuple[int, MoveStats]]:
        """The moves, most visits first; ties go to the higher winrate, then the move the
        rounds' searches chose more often, then the higher prior, then the lower action."""
        return sorted(
            self.stats.items(),
            key=lambda kv: (-kv[1].visits, -kv[1].winrate, -kv[1].chosen, -kv[1].prior, kv[0]),
        )

    @property
    def visits(self) -> int:
        """Visits of all root moves together."""
        return sum(st.visits for st in self.stats.values())


def finite(x: float, default: float = 0.0) -> float:
    """``x`` as a float, or ``default`` if it is not finite."""
    x = float(x)
    return x if math.isfinite(x) else default


def score_stdev(beta: float) -> float:
    """Standard deviation of the margin under the sigmoid σ(β(α + x)): π/(√3 β) (0 if β ≤ 0)."""
    beta = float(beta)
    if not (math.isfinite(beta) and beta > 0):
        return 0.0
    return math.pi / (math.sqrt(3.0) * beta)


def search_round(out: search.SearchOutput, game: int = 0) -> Round:
    """Game ``game`` of a search's output as one analysis round (the search's own move)."""
    moves = tuple(
        {
            "move": m.action,
            "visits": m.visits,
            "winrate": finite(m.value, 0.5),
            "prior": finite(m.prior),
            "score_lead": finite(m.score_lead),
            "beta": finite(m.beta),
            "pv": list(m.pv),
            "pv_visits": list(m.pv_visits),
        }
        for m in search.root_moves(out, game)
    )
    action, best, winrate, alpha, beta, visits = jax.device_get(
        (
            out.action[game],
            out.best_value[game],
            out.root_winrate[game],
            out.root_alpha[game],
            out.root_beta[game],
            out.visit_counts[game],
        )
    )
    return Round(
        action=int(action),
        best_value=float(best),
        winrate=float(winrate),
        alpha=float(alpha),
        beta=float(beta),
        visits=int(np.sum(visits)),
        moves=moves,
    )


def to_move(rules: go.GoRules, position: Position, colour: int, komi: float) -> Position:
    """The position with ``colour`` to move (:mod:`saijax.gtp.engine`'s rule).

    Already ``colour`` to move: unchanged. Else a pass by the player to move,
    when that pass would not end the game (the last move was no pass, and the
    move cap is not reached); else the board restarted as a setup position
    with ``colour`` to move (forgetting the superko history and move count).
    """
    state = position.state
    if int(state.to_play) == colour:
        return position
    if not bool(state.terminated) and int(state.passes) == 0 and int(state.move_count) + 1 < rules.max_moves:
        passed = go.play(rules, state, rules.pass_action)
        return dataclasses.replace(position, state=passed, moves=position.moves + (rules.pass_action,))
    board = np.asarray(state.board)
    black = tuple(int(p) for p in np.flatnonzero(board == 1))
    white = tuple(int(p) for p in np.flatnonzero(board == -1))
    fresh = go.setup(rules, komi, black=black, white=white, to_play=colour)
    return Position(fresh, black, white, first_player=colour)


class Analysis:
    """A streaming response (lz-analyze, kata-analyze, *-genmove_analyze).

    Write :attr:`head` first, then each text :meth:`rounds` yields (an ``info``
    line, or "" when a round produced nothing to show), and finally
    :meth:`finish`, which ends the response (and for genmove_analyze plays
    the move and writes ``play <vertex>``).
    """

    def __init__(
        self,
        cmd_id: str,
        *,
        rules: go.GoRules,
        search_round: Callable[[Position], Round],
        commit_genmove: Callable[[Position, int, Round | None], str],
        kata: bool,
        position: Position,
        interval: float,
        max_moves: int | None,
        genmove_colour: int | None,
        ownership: Callable[[Position], Any] | None = None,
    ):
        """Starts the response.

        Args:
          cmd_id: the command's id ("" if none).
          rules: the engine's rules (for the vertices).
          search_round: one search of a position.
          commit_genmove: plays the move of a round (None: search first) for
            a colour and returns its vertex or "resign" (genmove_analyze).
          kata: KataGo's info format, else Leela Zero's.
          position: the position to analyse.
          interval: seconds between info lines when throttled.
          max_moves: show at most this many moves (None: all).
          genmove_colour: the colour to play at the end, or None for analysis.
          ownership: for kata-analyze's ``ownership true``, the position's N²
            ownership values (player to move's view) or None when the net
            has no ownership head; None: not requested.
        """
        self._rules = rules
        self._search_round = search_round
        self._commit_genmove = commit_genmove
        self._kata = kata
        self._position = position
        self._interval = interval
        self._max_moves = max_moves
        self._genmove_colour = genmove_colour
        self._ownership = ownership
        self._ownership_values: Any = None
        self._pool = RoundPool()
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
                result = self._search_round(self._position)
            except Exception as e:  # pylint: disable=broad-except
                # The "=" line is already out: end the stream, keep the engine.
                print(f"saijax.gtp: analysis stopped: {type(e).__name__}: {e}", file=sys.stderr)
                return
            self._pool.add(result)
            now = time.monotonic()
            if throttle and last_emit is not None and now - last_emit < self._interval:
                yield ""
                continue
            last_emit = now
            yield self.info_line()

    def info_line(self) -> str:
        """The pooled statistics as one line of ``info move ...`` entries."""
        rules = self._rules
        ranked = self._pool.ranked()
        if self._max_moves:
            ranked = ranked[: self._max_moves]
        parts = []
        for order, (move, st) in enumerate(ranked):
            pv = " ".join(go.to_gtp(rules, a) for a in st.pv)
            vertex = go.to_gtp(rules, move)
            if self._kata:
                w = st.winrate
                score = st.score_lead
                stdev = st.score_stdev
                parts.append(
                    f"info move {vertex} visits {st.visits} utility {finite(2 * w - 1):.6f} "
                    f"winrate {finite(w):.6f} scoreMean {finite(score):.6f} "
                    f"scoreStdev {finite(stdev):.6f} scoreLead {finite(score):.6f} "
                    f"prior {finite(st.prior):.6f} lcb {finite(st.lcb):.6f} order {order} pv {pv}"
                )
            else:
                parts.append(
                    f"info move {vertex} visits {st.visits} winrate {round(finite(st.winrate) * 10000)} "
                    f"prior {round(finite(st.prior) * 10000)} lcb {round(finite(st.lcb) * 10000)} "
                    f"order {order} pv {pv}"
                )
        if parts and self._kata and self._ownership is not None:
            if self._ownership_values is None:  # the root does not change between rounds
                self._ownership_values = self._ownership(self._position) or ()
            if self._ownership_values:
                parts.append("ownership " + " ".join(f"{finite(v):.6f}" for v in self._ownership_values))
        return " ".join(parts) + "\n" if parts else ""

    def finish(self) -> str:
        """Ends the response; genmove_analyze plays its move here."""
        if self._finished:
            return ""
        self._finished = True
        if not self.is_genmove:
            return "\n"
        try:
            vertex = self._commit_genmove(self._position, self._genmove_colour, self._pool.last)
        except Exception as e:  # pylint: disable=broad-except
            # The "=" line is already out; report on stderr and end the response.
            print(f"saijax.gtp: genmove_analyze failed: {type(e).__name__}: {e}", file=sys.stderr)
            return "\n"
        return f"play {vertex}\n\n"
