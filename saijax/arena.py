"""Lockstep matches between two players, the match settings, and the arena CLI (docs/design.md §8).

:func:`play_match` plays two :class:`saijax.players.Player` against each
other, all games in lockstep on device. Matches against a GTP engine (GNU Go)
are in :mod:`saijax.gtp_match`; the results table, summaries and intervals in
:mod:`saijax.results`. Both kinds of match take one :class:`MatchSettings`.

How a lockstep match runs. The games are split into fixed groups by who has
Black and who moves first (White first in handicap games of 2+ stones).
Every game still running has played the same number of moves (each ply moves
every unfinished game once), so within a group the same side is to move in
every game. A ply is one batched search per group, by the player to move
there, with that player's own λ/μ agent, then one jitted, vmapped
``go.step``. No game is searched by the wrong player, and finished games
stay finished (their step is a no-op).

Conventions, shared with :mod:`saijax.gtp_match`:

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
* **Resignation** follows :func:`saijax.search.should_resign`, the rule
  self-play and GTP use: a player resigns when its best visited move's agent
  value is below ``resign_threshold``, from move ``resign_after`` (default
  N²/4) on. ``resign_threshold=None`` disables it.
* **Margin at resignation** (SAI extended paper §3.6–3.7): the median of the
  root player's α + k over the nodes of a search of ``score_visits`` visits
  (1000 in the paper) from the position where the resignation happened, by
  the ``scorer`` player (default: the resigning player itself).
  ``score_visits=None`` reuses the move search's own tree. The raw estimate
  is kept in ``GameResult.score_estimate``; the recorded margin follows
  :func:`saijax.results.winner_and_margin`.
* **Noise.** Games differ through the search's randomness (Gumbel noise, or
  PUCT's Dirichlet noise and temperature) and through random openings: with
  ``opening_moves = m``, the first m moves of a game are drawn uniformly from
  the legal moves other than pass, the same for the two games of a colour
  pair (games 2j and 2j + 1) when colours alternate, so deterministic
  players still play different games and each opening is played with both
  colours. Game i, ply t uses the
  key ``fold_in(fold_in(PRNGKey(seed), i), 2t)`` and its opening the key of
  its pair, so a game's moves do not depend on the other games in the batch.

CLI::

    python -m saijax.arena --player=runs/go7 --opponent=gnugo:10 --games=20 \\
        --board_size=7 --komi=9.5 --visits=64 --results=/tmp/r.csv

``--player`` and ``--opponent`` take ``random``, a checkpoint, and the
opponent also ``uniform``, ``gnugo:LEVEL`` (GNU Go may not resign unless
``--gnugo_may_resign``) or ``gtp:<command line>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saijax import cli, control, go, players, results, search, sgf, styles

__all__ = [
    "MatchSettings",
    "colour_relative_komi",
    "play_match",
    "main",
]

_COLOURS = ("alternate", "a_black", "a_white")
EVEN_KOMI = 7.5  # default komi of an even game
HANDICAP_KOMI = 0.5  # default komi of a handicap game (H1 included)
# Salt for score-estimate keys, so they never coincide with move keys.
_SCORE_SALT = 1


# ---------------------------------------------------------------------------
# Settings.


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


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
      play_out: the resign rule never ends a game; where it first fires, the
        ply and the score estimates (the scorer's and the player's own) are
        recorded (``GameResult.resign_ply``, ``resign_estimate``,
        ``resign_own_estimate``) and the game goes on to the count: the
        validation of the score estimator (SAI §3.6). Net vs net only.
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
    play_out: bool = False
    sgf_dir: str | os.PathLike | None = None
    results_path: str | os.PathLike | None = None

    def __post_init__(self):
        if not _is_int(self.games) or self.games < 1:
            raise ValueError(f"MatchSettings.games must be an int >= 1, got {self.games!r}")
        handicaps = _per_game("handicap", self.handicap, self.games)
        for h in handicaps or (self.handicap,):
            if not _is_int(h) or h < 0:
                raise ValueError(f"MatchSettings.handicap must be an int >= 0 (or one per game), got {h!r}")
        if handicaps is not None:
            object.__setattr__(self, "handicap", tuple(int(h) for h in handicaps))
        komis = _per_game("komi", self.komi, self.games)
        for k in komis or (() if self.komi is None else (self.komi,)):
            if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
                raise ValueError(f"MatchSettings.komi must be a number (or one per game), got {k!r}")
            if not math.isfinite(float(k)) or float(k) * 2 != round(float(k) * 2):
                raise ValueError(f"MatchSettings.komi must be a finite multiple of 0.5, got {k}")
        if komis is not None:
            object.__setattr__(self, "komi", tuple(float(k) for k in komis))
        if self.colours not in _COLOURS:
            raise ValueError(f"MatchSettings.colours must be one of {_COLOURS}, got {self.colours!r}")
        if not _is_int(self.seed):
            raise ValueError(f"MatchSettings.seed must be an int, got {self.seed!r}")
        if self.max_moves is not None and (not _is_int(self.max_moves) or self.max_moves < 1):
            raise ValueError(f"MatchSettings.max_moves must be None or an int >= 1, got {self.max_moves!r}")
        if self.resign_threshold is not None and not 0.0 < float(self.resign_threshold) < 1.0:
            raise ValueError(f"MatchSettings.resign_threshold must be None or in (0, 1), got {self.resign_threshold}")
        if self.resign_after is not None and (not _is_int(self.resign_after) or self.resign_after < 0):
            raise ValueError(f"MatchSettings.resign_after must be None or an int >= 0, got {self.resign_after!r}")
        if not _is_int(self.opening_moves) or self.opening_moves < 0:
            raise ValueError(f"MatchSettings.opening_moves must be an int >= 0, got {self.opening_moves!r}")
        if not isinstance(self.play_out, bool):
            raise ValueError(f"MatchSettings.play_out must be True or False, got {self.play_out!r}")
        if self.play_out and self.resign_threshold is None:
            raise ValueError("MatchSettings.play_out records where the resign rule fires: give a resign_threshold")
        if self.score_visits is not None and (not _is_int(self.score_visits) or self.score_visits < 1):
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
        """(threshold, resign_after) for :func:`saijax.search.should_resign`; threshold -1 never resigns."""
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
# Pieces shared with saijax.gtp_match, compiled once per shape.


@functools.cache
def search_fn(evaluator, rules: go.GoRules, config: search.SearchConfig):
    """The jitted search of a player on these rules (cached, so players share it)."""
    return search.make_search_fn(evaluator, rules, config)


@functools.cache
def _advance_fn(rules: go.GoRules):
    """jit((states [B], action [B], best_value [B], threshold, resign_after) -> (states, resigned [B]))."""

    def advance(states, action, best_value, threshold, resign_after):
        resigned = ~states.terminated & search.should_resign(
            best_value, states.move_count, threshold=threshold, resign_after=resign_after
        )
        stepped = jax.vmap(lambda s, a: go.step(rules, s, a))(states, action)
        gave_up = jax.vmap(go.resign)(states)
        new = jax.tree_util.tree_map(
            lambda g, s: jnp.where(resigned.reshape(resigned.shape + (1,) * (s.ndim - 1)), g, s), gave_up, stepped
        )
        return new, resigned

    return jax.jit(advance)


@functools.cache
def margin_fn(rules: go.GoRules):
    """jit(states [B] -> Black-minus-White Tromp–Taylor margin, komi included [B])."""
    return jax.jit(lambda states: jax.vmap(lambda s: go.area_score(rules, s))(states) - states.komi)


@functools.cache
def _init_fn(rules: go.GoRules, handicap: int):
    return jax.jit(jax.vmap(lambda k: go.init(rules, k, handicap)))


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


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def record_game(
    *,
    game: int,
    settings: MatchSettings,
    rules: go.GoRules,
    black: str,
    white: str,
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
    """A finished game's result row; writes its SGF (if ``settings.sgf_dir``)."""
    komi, handicap, seed = settings.komis()[game], settings.handicaps()[game], settings.seed
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
    )


# ---------------------------------------------------------------------------
# Net vs net, lockstep.


def _groups(settings: MatchSettings) -> list[np.ndarray]:
    """Game indices grouped by (A has Black, White moves first), sorted by handicap then game."""
    a_black = settings.side_a_black()
    handicaps = np.asarray(settings.handicaps())
    white_first = handicaps >= 2
    groups = []
    for a in (True, False):
        for w in (False, True):
            idx = np.flatnonzero((a_black == a) & (white_first == w))
            if len(idx):
                groups.append(idx[np.lexsort((idx, handicaps[idx]))])
    return groups


def _initial_states(rules: go.GoRules, settings: MatchSettings, idx: np.ndarray) -> go.GoState:
    """The start positions of games ``idx`` (in that order), batched."""
    komis, handicaps = np.asarray(settings.komis(), np.float32), np.asarray(settings.handicaps())
    parts = []
    for h in sorted(set(handicaps[idx].tolist())):
        rows = idx[handicaps[idx] == h]
        parts.append(_init_fn(rules, int(h))(jnp.asarray(komis[rows])))
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs), *parts)


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
      (the player's :class:`saijax.search.SearchOutput`, int32 [B] actions).
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


def play_match(
    side_a: players.Player,
    side_b: players.Player,
    settings: MatchSettings,
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
      The games' :class:`saijax.results.GameResult` rows, ordered by game index.
    """
    if side_a.name == side_b.name:
        raise ValueError(f"both players are named {side_a.name!r}; give them distinct names for the results table")
    if side_a.board_size != side_b.board_size:
        raise ValueError(
            f"{side_a.name!r} plays on {side_a.board_size}x{side_a.board_size}, "
            f"{side_b.name!r} on {side_b.board_size}x{side_b.board_size}"
        )
    if scorer is not None and scorer.board_size != side_a.board_size:
        raise ValueError(f"the scorer {scorer.name!r} plays on {scorer.board_size}x{scorer.board_size}")
    for side in (side_a, side_b):
        if side.control is not None:
            side.control.check_search(side.config, side.name)
    rules = settings.rules(side_a.board_size)
    games = settings.games
    threshold, resign_after = settings.resign_rule(rules)
    a_black = settings.side_a_black()
    groups = _groups(settings)
    base = jax.random.PRNGKey(settings.seed)
    advance = _advance_fn(rules)

    moves = np.full((games, rules.max_moves), -1, np.int32)
    stats = np.full((games, rules.max_moves, 4), np.nan, np.float32)  # alpha, beta, winrate, visits
    estimates = np.full(games, np.nan)
    # Where the resign rule first fired: ply, the scorer's and the player's own estimate.
    resign_ply = np.full(games, -1)
    resign_est = np.full((games, 2), np.nan)
    done_reported = np.zeros(games, bool)
    finished: dict[int, results.GameResult] = {}
    states = [_initial_states(rules, settings, idx) for idx in groups]
    # The colour to move at ply 0 of each group.
    first = [-1 if settings.handicaps()[idx[0]] >= 2 else 1 for idx in groups]

    def names(i):
        return (side_a.name, side_b.name) if a_black[i] else (side_b.name, side_a.name)

    def describe(name):
        return side_a.describe() if name == side_a.name else side_b.describe()

    def report_finished(group, idx):
        """Writes the rows (and SGFs) of the group's games that have just ended."""
        terminated, winner, passes = jax.device_get((group.terminated, group.winner, group.passes))
        fresh = np.flatnonzero(np.asarray(terminated) & ~done_reported[idx])
        if not len(fresh):
            return
        margins = np.asarray(jax.device_get(margin_fn(rules)(group)))
        rows = []
        for j in fresh:
            i = int(idx[j])
            black, white = names(i)
            played = moves[i][moves[i] >= 0]
            resign_winner = int(winner[j])
            result = record_game(
                game=i,
                settings=settings,
                rules=rules,
                black=black,
                white=white,
                moves=played,
                comments=[
                    move_comment(*stats[i, t]) if np.isfinite(stats[i, t, 3]) else "random opening move"
                    for t in range(len(played))
                ],
                passes=int(passes[j]),
                count_margin=float(margins[j]),
                resign_winner=resign_winner,
                estimate=float(estimates[i]) if resign_winner else None,
                resign_ply=int(resign_ply[i]) if resign_ply[i] >= 0 else None,
                resign_estimate=float(resign_est[i, 0]),
                resign_own_estimate=float(resign_est[i, 1]),
                root_comment=(
                    f"saijax arena game {i} (seed {settings.seed}). Black {describe(black)}. White {describe(white)}."
                ),
            )
            finished[i] = result
            done_reported[i] = True
            rows.append(result)
            if log is not None:
                log(results.game_line(result))
        if settings.results_path is not None:
            results.append_results(settings.results_path, rows)

    for ply in range(rules.max_moves):
        any_active = False
        for g, idx in enumerate(groups):
            st = states[g]
            active = ~np.asarray(st.terminated)
            if not active.any():
                continue
            any_active = True
            game_ids = jnp.asarray(idx, jnp.int32)
            if ply < settings.opening_moves:
                new, action = random_move_fn(rules)(
                    st, opening_keys(base, game_ids, ply, paired=settings.colours == "alternate")
                )
                action = np.asarray(jax.device_get(action))
                moves[idx[active], ply] = action[active]
                states[g] = new
                report_finished(new, idx)
                continue
            colour = first[g] if ply % 2 == 0 else -first[g]
            # A moves when its colour is to move.
            mover = side_a if (colour == 1) == bool(a_black[idx[0]]) else side_b
            keys = game_keys(base, game_ids, jnp.int32(2 * ply))
            out, action = choose_moves(mover, rules, st, keys, moves[idx], ply)
            # In play-out mode nobody resigns; the rule is only checked (fires).
            cut = -1.0 if settings.play_out else threshold
            new, resigned = advance(st, action, out.best_value, jnp.float32(cut), jnp.int32(resign_after))
            action, alpha, beta, child_q, visits, resigned, best, own = jax.device_get(
                (
                    action,
                    out.root_alpha,
                    out.root_beta,
                    out.child_q,
                    out.visit_counts,
                    resigned,
                    out.best_value,
                    out.score_estimate,
                )
            )
            moved = active & ~resigned
            rows = idx[moved]
            moves[rows, ply] = action[moved]
            chosen_q = np.take_along_axis(child_q, action[:, None], axis=1)[:, 0]
            stats[rows, ply] = np.stack([alpha, beta, chosen_q, visits.sum(axis=1)], axis=1)[moved]
            fires = resigned
            if settings.play_out:
                count = np.asarray(jax.device_get(st.move_count))
                rule = search.should_resign(best, count, threshold=threshold, resign_after=resign_after)
                fires = active & np.asarray(rule, bool) & (resign_ply[idx] < 0)
            if fires.any():
                local = np.flatnonzero(fires)
                if settings.score_visits is None:
                    est = own[local] * colour
                else:
                    est = score_estimates(
                        scorer or mover,
                        rules,
                        st,
                        local,
                        score_keys(base, game_ids, ply),
                        settings.score_visits,
                        len(idx),
                    )
                resign_ply[idx[local]] = ply
                resign_est[idx[local]] = np.stack([np.asarray(est, float), own[local] * colour], axis=1)
                estimates[idx[local]] = est
            states[g] = new
            report_finished(new, idx)
        if not any_active:
            break
    return [finished[i] for i in range(games)]


# ---------------------------------------------------------------------------
# CLI.


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m saijax.arena",
        description="Play a network against another network or a GTP engine; print a report.",
    )
    p.add_argument("--player", required=True, help="'random', a checkpoint (workdir or step directory) or zoo:<name>")
    p.add_argument(
        "--opponent",
        required=True,
        help=(
            "'random' (random net), 'uniform' (uniformly random legal moves), a checkpoint, zoo:<name>, "
            "'gnugo:LEVEL' or 'gtp:<command>'"
        ),
    )
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--board_size", type=int, default=9)
    p.add_argument("--komi", type=float, default=None, help="default 7.5 (0.5 with handicap)")
    p.add_argument("--handicap", type=int, default=0)
    p.add_argument(
        "--colours",
        choices=_COLOURS,
        default="alternate",
        help="the player's colour: alternating (Black in even games), always Black, or always White",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max_moves", type=int, default=None, help="move cap (default 2*N^2)")
    p.add_argument("--algorithm", choices=search.ALGORITHMS, default="gumbel")
    p.add_argument("--visits", type=int, default=64)
    p.add_argument("--opponent_visits", type=int, default=None, help="default --visits")
    p.add_argument("--lambda_", type=float, default=0.0)
    p.add_argument("--mu", type=float, default=0.0)
    p.add_argument("--threshold", type=float, default=0.0)
    p.add_argument("--opponent_lambda_", type=float, default=None)
    p.add_argument("--opponent_mu", type=float, default=None)
    p.add_argument("--opponent_threshold", type=float, default=None)
    p.add_argument(
        "--control",
        default="off",
        help="the player's position control: off, naive, A, B, C or endgame (docs/design.md §8)",
    )
    p.add_argument(
        "--control_option",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a position-control setting of the player, e.g. gentleness=2.5; repeat for more",
    )
    p.add_argument("--opponent_control", default="off", help="the opponent net's position control")
    p.add_argument("--opponent_control_option", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--resign_threshold", type=float, default=None, help="off by default")
    p.add_argument("--resign_after", type=int, default=None, help="default N^2/4")
    p.add_argument("--score_visits", type=int, default=1000, help="0: reuse the move search's tree")
    p.add_argument("--blocks", type=int, default=1, help="random nets only")
    p.add_argument("--filters", type=int, default=8, help="random nets only")
    p.add_argument("--name", default=None)
    p.add_argument("--opponent_name", default=None)
    p.add_argument("--results", default=None, help="results table (.jsonl or .csv), appended")
    p.add_argument("--sgf_dir", default=None)
    p.add_argument("--gtp_timeout", type=float, default=120.0)
    p.add_argument(
        "--gnugo_may_resign",
        action="store_true",
        help="let GNU Go resign (by default it plays every game out: --never-resign)",
    )
    p.add_argument("--quiet", action="store_true", help="no per-game lines")
    return p


def _load(
    spec: str,
    args,
    *,
    visits: int,
    agent: search.Agent,
    name: str | None,
    seed: int,
    controlled: control.ControlConfig | None = None,
) -> players.Player:
    """A player for "random" or a checkpoint, with the CLI's search settings.

    A random net is named "random" (the name :mod:`saijax.elo` anchors at
    0), a checkpoint "gen<generation>"; a non-trivial agent adds its label,
    and position control its method (``gen75[C]``). A controlled player
    searches as its method asks (:meth:`saijax.control.ControlConfig.search_config`).
    """
    if spec == "random":
        loaded = players.random_player(
            args.board_size, blocks=args.blocks, filters=args.filters, seed=seed, name="random"
        )
    else:
        loaded = players.load_player(spec, board_size=args.board_size)
    config = search.SearchConfig(
        algorithm=args.algorithm,
        num_simulations=visits,
        value_mode="score" if loaded.value_head == "score" else "sigmoid",
    )
    player = loaded.replace(config=config).with_agent(agent, rename=name is None)
    if controlled is not None:
        player = player.replace(
            control=controlled,
            config=controlled.search_config(config),
            name=player.name if name is not None else f"{player.name}[{controlled.method}]",
        )
    return player if name is None else player.replace(name=name)


def main(argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """``python -m saijax.arena``: plays the match and prints the report; returns the exit code.

    A player that cannot be loaded (missing or corrupt checkpoint, bad
    option) is one ``saijax.arena: error:`` line on stderr and exit code 2.
    With ``exit_on_error`` (the command line) the process ends right there,
    so that line is the last one on stderr.
    """
    from saijax import gtp_match  # here, since gtp_match builds on this module

    args = _build_parser().parse_args(argv)

    def fail(e):
        return cli.report_error(f"saijax.arena: error: {e}", 2, exit_now=exit_on_error)

    log = None if args.quiet else (lambda line: print(line, flush=True))
    try:
        settings = MatchSettings(
            games=args.games,
            komi=args.komi,
            handicap=args.handicap,
            colours=args.colours,
            seed=args.seed,
            max_moves=args.max_moves,
            resign_threshold=args.resign_threshold,
            resign_after=args.resign_after,
            score_visits=args.score_visits or None,
            sgf_dir=args.sgf_dir,
            results_path=args.results,
        )
        settings.rules(args.board_size)
        agent = search.Agent(args.lambda_, args.mu, args.threshold)
        mine = control.from_options(args.control, args.control_option)
        theirs = control.from_options(args.opponent_control, args.opponent_control_option)
        me = _load(args.player, args, visits=args.visits, agent=agent, name=args.name, seed=args.seed, controlled=mine)
    except (ValueError, OSError) as e:  # a missing or corrupt checkpoint, a bad option
        return fail(e)
    opp = args.opponent
    if theirs is not None and (opp in ("uniform",) or opp.startswith(("gnugo:", "gtp:"))):
        return fail(f"--opponent_control needs a net opponent, not {opp!r}")
    if opp.startswith("gnugo:") or opp.startswith("gtp:"):
        try:
            if opp.startswith("gnugo:"):
                level = opp.split(":", 1)[1]
                if not level.isdigit():
                    raise ValueError(f"--opponent=gnugo:LEVEL needs an integer level, got {level!r}")
                argv_engine = gtp_match.gnugo_arena_argv(int(level), never_resign=not args.gnugo_may_resign)
            else:
                argv_engine = shlex.split(opp.split(":", 1)[1])
                if not argv_engine:
                    raise ValueError("--opponent=gtp:<command> needs a command")
        except (ValueError, OSError) as e:
            return fail(e)
        games = gtp_match.play_gtp_match(
            me,
            argv_engine,
            settings,
            engine_name=args.opponent_name,
            timeout=args.gtp_timeout,
            log=log,
        )
    else:
        try:
            if opp == "uniform":
                them = players.uniform_player(args.board_size, args.opponent_name or "uniform")
            else:
                agent = search.Agent(
                    args.lambda_ if args.opponent_lambda_ is None else args.opponent_lambda_,
                    args.mu if args.opponent_mu is None else args.opponent_mu,
                    args.threshold if args.opponent_threshold is None else args.opponent_threshold,
                )
                them = _load(
                    opp,
                    args,
                    visits=args.opponent_visits or args.visits,
                    agent=agent,
                    name=args.opponent_name,
                    seed=args.seed + 1,
                    controlled=theirs,
                )
        except (ValueError, OSError) as e:
            return fail(e)
        if them.name == me.name:
            them = them.replace(name=them.name + "-2")
        games = play_match(me, them, settings, log=log)
    print()
    print(results.format_games(games))
    print()
    print(results.format_report(results.summarize(games, me.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
