"""Match conventions shared by every kind of match (docs/design.md §8).

Every match is played by the one loop of :mod:`saijax.play.match_loop`, between
two opponents (:mod:`saijax.play.opponents`): net against net in lockstep
(:mod:`saijax.arena`), a player against a GTP engine
(:mod:`saijax.play.gtp_match`). It takes one :class:`MatchSettings` and builds
its games from the pieces here: the per-game keys, the random opening moves,
the choice of a player's move (:func:`choose_moves`: its search's, position
control's or the mixed style's), the score estimate at a resignation, and
the result row and SGF of a finished game (:func:`record_game`). The
results table, summaries and intervals are in :mod:`saijax.analysis.results`.

Conventions:

* **Colours.** With ``colours="alternate"`` side A has Black in even-numbered
  games and White in odd ones; ``"a_black"`` and ``"a_white"`` fix A's colour.
* **Komi and handicap, per game.** ``handicap`` 0 is an even game (default
  komi 7.5); 1 is the papers' H1: no stones, Black first, default komi 0.5;
  ``>= 2`` places GTP fixed-handicap stones and White moves first (default
  komi 0.5). Both may be one value or one per game. Komi is always Black's;
  :func:`colour_relative_komi` turns "m points against side A" into
  per-game komi (``base + m`` where A is Black, ``base − m`` where A is
  White), as the handicap and score-targeting experiments need.
* **Game end.** Two consecutive passes or the move cap (scored Tromp–Taylor
  by saijax, komi included), or resignation.
* **Resignation** follows :func:`saijax.core.search.should_resign`, the rule
  self-play and GTP use: a player resigns when its best visited move's agent
  value is below ``resign_threshold``, from move ``resign_after`` (default
  N²/4) on. ``resign_threshold=None`` disables it.
* **Margin at resignation** (SAI extended paper §3.6–3.7): the median of the
  root player's α + k over the nodes of a search of ``score_visits`` visits
  (1000 in the paper) from the position where the resignation happened, by
  the ``scorer`` player (default: the resigning player itself).
  ``score_visits=None`` reuses the move search's own tree. The raw estimate
  is kept in ``GameResult.score_estimate``; the recorded margin follows
  :func:`saijax.analysis.results.winner_and_margin`.
* **Noise.** Games differ through the search's randomness (Gumbel noise, or
  PUCT's Dirichlet noise and temperature) and through random openings: with
  ``opening_moves = m``, the first m moves of a game are drawn uniformly from
  the legal moves other than pass, the same for the two games of a colour
  pair (games 2j and 2j + 1) when colours alternate, so deterministic
  players still play different games and each opening is played with both
  colours. Game i, ply t uses the
  key ``fold_in(fold_in(PRNGKey(seed), i), 2t)`` and its opening the key of
  its pair, so a game's moves do not depend on the other games in the batch.
  The result row records the opening and a short id of it
  (``GameResult.opening``, ``opening_id``) beside the players' visits,
  Gumbel scale and precision.
* **Start positions.** ``start_moves`` gives each game the moves that open
  it (after any handicap stones): chosen positions, e.g. the near-even
  endgame positions from which [PosCtl] §7 starts its Algorithm 1. They are
  played before anything else, so random opening moves only fill the plies
  from the end of the start to ``opening_moves``; every game's start has
  the same length, so that lockstep games keep moving together.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saijax.analysis import results
from saijax.core import checks, go, search, sgf
from saijax.play import control, players, styles

__all__ = [
    "COLOURS",
    "EVEN_KOMI",
    "HANDICAP_KOMI",
    "MatchSettings",
    "choose_moves",
    "colour_relative_komi",
    "game_keys",
    "margin_fn",
    "move_comment",
    "opening_id",
    "opening_keys",
    "player_settings",
    "random_move_fn",
    "record_game",
    "score_estimates",
    "score_keys",
    "search_fn",
]

COLOURS = ("alternate", "a_black", "a_white")  # MatchSettings.colours
EVEN_KOMI = 7.5  # default komi of an even game
HANDICAP_KOMI = 0.5  # default komi of a handicap game (H1 included)
# Salt for score-estimate keys, so they never coincide with move keys.
_SCORE_SALT = 1


# ---------------------------------------------------------------------------
# Settings.


def _per_game(name: str, value: Any, games: int) -> tuple | None:
    """``value`` as a tuple of one entry per game, or None for a scalar."""
    if value is None or np.ndim(value) == 0:
        return None
    values = tuple(value.tolist() if isinstance(value, np.ndarray) else value)
    if len(values) != games:
        raise ValueError(f"MatchSettings.{name} has {len(values)} values for {games} games")
    return values


@dataclasses.dataclass(frozen=True)
class MatchSettings:
    """How a match is played: the same settings for net-vs-net and net-vs-engine.

    Attributes:
      games: number of games (>= 1).
      komi: Black's komi: one value, one per game, or None for the default
        (7.5 in even games, 0.5 with handicap). Multiples of 0.5.
      handicap: 0 (even), 1 (the papers' H1: no stones) or >= 2 fixed stones
        with White first; one value or one per game.
      colours: "alternate" (side A has Black in even games, White in odd
        ones), "a_black" (A always Black) or "a_white" (A always White).
      seed: the match seed (see the module docstring for the keys).
      max_moves: move cap (default the rules', 2·N²).
      resign_threshold: resign when the best move's agent value is below
        this, in (0, 1); None never resigns.
      resign_after: moves played before resignation is allowed (default
        N²/4, rounded down).
      score_visits: visits of the score-estimate search at a resignation;
        None reuses the move search's tree.
      opening_moves: the first moves of each game, drawn uniformly at random
        (pass excluded), the same for both games of a colour pair.
      start_moves: None, or one tuple of actions per game (``row · N +
        col``, pass N²), all of the same length: the moves that open each
        game, played as given (an illegal one is an error) and recorded
        in its SGF with the comment "start position move".
      engine_opening_moves: against a GTP engine only: the engine's first
        this-many moves of each game are drawn at random among the moves it
        rates at least half as valuable as its best (GNU Go's
        ``top_moves_<colour>``), so that a deterministic net meets different
        games while its own moves stay its search's best; a move the engine
        cannot rate is its ``genmove``.
      play_out: the resign rule never ends a game; where it first fires, the
        ply and the score estimates (the scorer's and the player's own) are
        recorded (``GameResult.resign_ply``, ``resign_estimate``,
        ``resign_own_estimate``) and the game goes on to the count: the
        validation of the score estimator (SAI §3.6). A GTP engine may
        still resign by itself.
      sgf_dir: write one SGF per game there.
      results_path: append each finished game to this table (.csv or .jsonl).
    """

    games: int
    komi: float | tuple[float, ...] | None = None
    handicap: int | tuple[int, ...] = 0
    colours: str = "alternate"
    seed: int = 0
    max_moves: int | None = None
    resign_threshold: float | None = None
    resign_after: int | None = None
    score_visits: int | None = 1000
    opening_moves: int = 0
    start_moves: tuple[tuple[int, ...], ...] | None = None
    engine_opening_moves: int = 0
    play_out: bool = False
    sgf_dir: str | os.PathLike | None = None
    results_path: str | os.PathLike | None = None

    def __post_init__(self):
        if not checks.is_int(self.games) or self.games < 1:
            raise ValueError(f"MatchSettings.games must be an int >= 1, got {self.games!r}")
        handicaps = _per_game("handicap", self.handicap, self.games)
        for h in handicaps or (self.handicap,):
            if not checks.is_int(h) or h < 0:
                raise ValueError(f"MatchSettings.handicap must be an int >= 0 (or one per game), got {h!r}")
        if handicaps is not None:
            object.__setattr__(self, "handicap", tuple(int(h) for h in handicaps))
        komis = _per_game("komi", self.komi, self.games)
        for k in komis or (() if self.komi is None else (self.komi,)):
            go.check_komi(k, "MatchSettings.komi")
        if komis is not None:
            object.__setattr__(self, "komi", tuple(float(k) for k in komis))
        if self.colours not in COLOURS:
            raise ValueError(f"MatchSettings.colours must be one of {COLOURS}, got {self.colours!r}")
        if not checks.is_int(self.seed):
            raise ValueError(f"MatchSettings.seed must be an int, got {self.seed!r}")
        if self.max_moves is not None and (not checks.is_int(self.max_moves) or self.max_moves < 1):
            raise ValueError(f"MatchSettings.max_moves must be None or an int >= 1, got {self.max_moves!r}")
        if self.resign_threshold is not None and not 0.0 < float(self.resign_threshold) < 1.0:
            raise ValueError(f"MatchSettings.resign_threshold must be None or in (0, 1), got {self.resign_threshold}")
        if self.resign_after is not None and (not checks.is_int(self.resign_after) or self.resign_after < 0):
            raise ValueError(f"MatchSettings.resign_after must be None or an int >= 0, got {self.resign_after!r}")
        if not checks.is_int(self.opening_moves) or self.opening_moves < 0:
            raise ValueError(f"MatchSettings.opening_moves must be an int >= 0, got {self.opening_moves!r}")
        if self.start_moves is not None:
            starts = tuple(tuple(self.start_moves[i]) for i in range(len(self.start_moves)))
            if len(starts) != self.games:
                raise ValueError(f"MatchSettings.start_moves has {len(starts)} starts for {self.games} games")
            if len({len(s) for s in starts}) > 1:
                raise ValueError("MatchSettings.start_moves must all have the same length (games move in lockstep)")
            for a in (a for s in starts for a in s):
                if not checks.is_int(a) or a < 0:
                    raise ValueError(f"MatchSettings.start_moves holds {a!r}, not an action (an int >= 0)")
            object.__setattr__(self, "start_moves", tuple(tuple(int(a) for a in s) for s in starts))
        if not checks.is_int(self.engine_opening_moves) or self.engine_opening_moves < 0:
            raise ValueError(
                f"MatchSettings.engine_opening_moves must be an int >= 0, got {self.engine_opening_moves!r}"
            )
        if not isinstance(self.play_out, bool):
            raise ValueError(f"MatchSettings.play_out must be True or False, got {self.play_out!r}")
        if self.play_out and self.resign_threshold is None:
            raise ValueError("MatchSettings.play_out records where the resign rule fires: give a resign_threshold")
        if self.score_visits is not None and (not checks.is_int(self.score_visits) or self.score_visits < 1):
            raise ValueError(f"MatchSettings.score_visits must be None or an int >= 1, got {self.score_visits!r}")

    def handicaps(self) -> tuple[int, ...]:
        """The handicap of each game."""
        return self.handicap if isinstance(self.handicap, tuple) else (int(self.handicap),) * self.games

    def komis(self) -> tuple[float, ...]:
        """Black's komi in each game (defaults filled in)."""
        if isinstance(self.komi, tuple):
            return self.komi
        if self.komi is not None:
            return (float(self.komi),) * self.games
        return tuple(EVEN_KOMI if h == 0 else HANDICAP_KOMI for h in self.handicaps())

    def start_length(self) -> int:
        """The plies of every game's start position (0 without ``start_moves``)."""
        return len(self.start_moves[0]) if self.start_moves else 0

    def side_a_black(self) -> np.ndarray:
        """bool[games]: side A has Black."""
        games = np.arange(self.games)
        if self.colours == "alternate":
            return games % 2 == 0
        return np.full(self.games, self.colours == "a_black")

    def rules(self, board_size: int) -> go.GoRules:
        """The rules of the match on an N×N board (checks the handicaps fit the board)."""
        rules = go.GoRules(board_size) if self.max_moves is None else go.GoRules(board_size, int(self.max_moves))
        for h in sorted(set(self.handicaps())):
            if h >= 2:
                try:
                    go.handicap_points(rules, h)
                except ValueError as e:
                    raise ValueError(f"MatchSettings.handicap: {e}") from e
        return rules

    def resign_rule(self, rules: go.GoRules) -> tuple[float, int]:
        """(threshold, resign_after) for :func:`saijax.core.search.should_resign`; threshold -1 never resigns."""
        threshold = -1.0 if self.resign_threshold is None else float(self.resign_threshold)
        after = search.default_resign_after(rules) if self.resign_after is None else int(self.resign_after)
        return threshold, after


def colour_relative_komi(base: float, malus: float, side_a_black: Sequence[bool]) -> tuple[float, ...]:
    """Per-game komi with ``malus`` points against side A.

    Side A gets ``base + malus`` komi to give as Black and ``base − malus`` to
    receive as White: either way A must win by ``malus`` more points than at
    komi ``base``. The handicap-by-komi and score-targeting experiments use
    this with A the strong net (SAI paper, §4.1).

    Args:
      base: the even game's komi (Black's).
      malus: points against side A (multiple of 0.5; may be negative).
      side_a_black: per game, whether A has Black (``MatchSettings.side_a_black()``).
    """
    return tuple(float(base + malus) if a else float(base - malus) for a in side_a_black)


# ---------------------------------------------------------------------------
# Pieces of a match, compiled once per shape (so players and matches share them).


@functools.cache
def search_fn(evaluator, rules: go.GoRules, config: search.SearchConfig):
    """The jitted search of a player on these rules (cached, so players share it)."""
    return search.make_search_fn(evaluator, rules, config)


@functools.cache
def margin_fn(rules: go.GoRules):
    """jit(states [B] -> Black-minus-White Tromp–Taylor margin, komi included [B])."""
    return jax.jit(lambda states: jax.vmap(lambda s: go.area_score(rules, s))(states) - states.komi)


@functools.cache
def random_move_fn(rules: go.GoRules):
    """jit((states [B], keys [B, 2]) -> (states, action [B])): a uniform legal move other than pass."""

    def random_move(states, keys):
        legal = states.legal.at[:, rules.pass_action].set(False)
        logits = jnp.where(legal, 0.0, -jnp.inf)
        action = jax.vmap(jax.random.categorical)(keys, logits)
        action = jnp.where(jnp.any(legal, axis=-1), action, rules.pass_action).astype(jnp.int32)
        return jax.vmap(lambda s, a: go.step(rules, s, a))(states, action), action

    return jax.jit(random_move)


def opening_keys(base, games, ply: int, *, paired: bool):
    """The keys of the random opening move at ``ply``: one per colour pair (games 2j, 2j + 1) if
    ``paired`` (alternating colours), else one per game."""
    return game_keys(jax.random.fold_in(base, 0x0FE1), games // 2 if paired else games, jnp.int32(ply))


@jax.jit
def game_keys(base, games, salt):
    """[B, 2] keys: fold_in(fold_in(base, game), salt) per game."""
    return jax.vmap(lambda g: jax.random.fold_in(jax.random.fold_in(base, g), salt))(games)


def score_keys(base, games, ply: int):
    """The keys of the score-estimate search of ``games`` resigning at ``ply``."""
    return game_keys(base, games, jnp.int32(2 * ply + _SCORE_SALT))


def score_estimates(scorer: players.Player, rules, states, rows: np.ndarray, keys, score_visits: int, group_size: int):
    """Black-minus-White score estimates of ``states[rows]`` by ``scorer``, batched.

    The batch is padded (repeating the first row) to the next power of two,
    capped at ``group_size``, so a match compiles at most log2(group) + 1
    shapes for this search.
    """
    k = len(rows)
    size = min(1 << (k - 1).bit_length(), group_size)
    padded = np.concatenate([rows, np.full(size - k, rows[0])]).astype(np.int32)
    sub = jax.tree_util.tree_map(lambda x: x[padded], states)
    cfg = dataclasses.replace(scorer.config, num_simulations=int(score_visits))
    out = search_fn(scorer.evaluator, rules, cfg)(scorer.variables, keys[padded], sub, scorer.agent.params())
    est, to_play = jax.device_get((out.score_estimate, sub.to_play))
    return (np.asarray(est) * np.asarray(to_play, np.float32))[:k]


def move_comment(alpha, beta, winrate, visits) -> str:
    """The SGF comment of a network's move."""
    winrate = None if not np.isfinite(winrate) else float(winrate)
    return sgf.move_comment(alpha=float(alpha), beta=float(beta), winrate=winrate, visits=int(visits))


def player_settings(black: players.Player | None, white: players.Player | None) -> dict[str, str]:
    """The ``visits``, ``gumbel_scale`` and ``precision`` columns of a game (:mod:`saijax.analysis.results`).

    Args:
      black, white: the players; None for a GTP engine.

    Returns:
      Each column's value: the one both players share, else Black's and
      White's joined by ``/``; ``-`` where it does not apply (an engine's
      side, a search other than Gumbel's, a player without a network).
    """

    def own(p):
        if p is None:
            return {"visits": "-", "gumbel_scale": "-", "precision": "-"}
        cfg = p.config
        return {
            "visits": str(cfg.num_simulations),
            "gumbel_scale": f"{cfg.gumbel_scale:g}" if cfg.algorithm == "gumbel" else "-",
            "precision": p.precision or "-",
        }

    b, w = own(black), own(white)
    return {k: b[k] if b[k] == w[k] else f"{b[k]}/{w[k]}" for k in b}


def opening_id(rules: go.GoRules, handicap: int, opening: str) -> str:
    """A short, stable id of an opening (GTP vertices) on these rules after ``handicap`` stones; "" for none."""
    if not opening:
        return ""
    return hashlib.sha1(f"{rules.size}x{rules.size} H{handicap}: {opening}".encode()).hexdigest()[:12]


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def record_game(
    *,
    game: int,
    settings: MatchSettings,
    rules: go.GoRules,
    black: str,
    white: str,
    black_player: players.Player | None,
    white_player: players.Player | None,
    moves: Sequence[int],
    comments: Sequence[str | None],
    passes: int,
    count_margin: float,
    resign_winner: int,
    estimate: float | None,
    root_comment: str,
    engine_score: str = "",
    engine_dead: str = "",
    resign_ply: int | None = None,
    resign_estimate: float | None = None,
    resign_own_estimate: float | None = None,
) -> results.GameResult:
    """A finished game's result row; writes its SGF (if ``settings.sgf_dir``).

    ``black_player`` and ``white_player`` are the players who searched (None:
    an opponent without one, such as a GTP engine); their settings fill the
    row's ``visits``, ``gumbel_scale`` and ``precision``. The opening is the
    plies before any player chose a move: the start position's and the random
    opening moves.
    """
    komi, handicap, seed = settings.komis()[game], settings.handicaps()[game], settings.seed
    opening = " ".join(go.to_gtp(rules, int(a)) for a in moves[: max(settings.start_length(), settings.opening_moves)])
    winner, margin = results.winner_and_margin(count_margin, resign_winner, estimate)
    resigned = resign_winner != 0
    end = "resign" if resigned else ("passes" if passes >= 2 else "cap")
    path = ""
    if settings.sgf_dir is not None:
        win_sign = {"black": 1, "white": -1, "draw": 0}[winner]
        result = sgf.game_result_string(win_sign, margin if not resigned else None, resigned)
        notes = [root_comment, f"end={end}"]
        if resigned:
            notes.append(f"score_estimate={estimate if estimate is not None else float('nan'):.2f}")
        if engine_score:
            notes.append(f"engine_final_score={engine_score}")
        if engine_dead:
            notes.append(f"engine_dead={engine_dead.replace(' ', ',')}")
        record = sgf.GameRecord(
            size=rules.size,
            komi=komi,
            moves=tuple(int(m) for m in moves),
            handicap=handicap,
            result=result,
            black_name=black,
            white_name=white,
            comments=tuple(comments),
            root_comment="\n".join(notes),
        )
        path = os.path.join(os.fspath(settings.sgf_dir), f"game_s{seed}_{game:04d}.sgf")
        sgf.write_sgf(record, path)
    return results.GameResult(
        black=black,
        white=white,
        winner=winner,
        margin=float(margin),
        resigned=resigned,
        moves=len(moves),
        komi=float(komi),
        handicap=handicap,
        end=end,
        score_estimate=None if estimate is None or not math.isfinite(estimate) else float(estimate),
        engine_score=engine_score,
        engine_dead=engine_dead,
        sgf=path,
        game=game,
        resign_ply=resign_ply,
        resign_estimate=_finite_or_none(resign_estimate),
        resign_own_estimate=_finite_or_none(resign_own_estimate),
        seed=int(seed),
        **player_settings(black_player, white_player),
        opening=opening,
        opening_id=opening_id(rules, handicap, opening),
    )


def choose_moves(player: players.Player, rules: go.GoRules, states: go.GoState, keys, history, ply: int):
    """The player's search of a batch of positions and the move it plays in each.

    The search's own move, unless the player has position control (the
    method picks among the searched moves) or the mixed style (the biased
    net searches the same positions; its move is played where acceptable).

    Args:
      player: the player to move in every game of the batch.
      rules: the match's rules.
      states: the positions [B].
      keys: one search key per game [B, 2].
      history: [B, T] the games' actions so far (−1 where none), for the
        opponent's last moves (Method B and C).
      ply: the ply about to be played.

    Returns:
      (the player's :class:`saijax.core.search.SearchOutput`, int32 [B] actions).
    """
    out = search_fn(player.evaluator, rules, player.config)(player.variables, keys, states, player.agent.params())
    action = out.action
    if player.control is not None:
        last = control.last_opponent_moves(np.asarray(history), ply, player.control.opponent_moves)
        action = control.select_fn(player.control)(out, states, jnp.asarray(last), keys)
    elif player.mixed is not None:
        biased = player.mixed.biased
        fn = search_fn(biased.evaluator, rules, biased.config)
        biased_out = fn(biased.variables, keys, states, player.agent.params())
        action = styles.mixed_select_fn(player.mixed.w_diff, player.mixed.p_th)(out, biased_out)
    return out, action
