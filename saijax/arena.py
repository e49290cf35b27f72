"""Matches between networks, and between a network and a GTP engine (DESIGN.md §8).

Two ways to play:

* :func:`play_match` plays two networks (:class:`ArenaPlayer`) against each
  other, all games in lockstep on device. The games are split into two fixed
  groups by colour: group 0 holds the games where side A has Black, group 1
  those where side B has Black. Every game still running has played the same
  number of moves (each ply moves every unfinished game once), so within a
  group the same side is to move in every game. A ply is therefore two
  batched searches, each by the player to move in that group, over all of
  the group's games with that player's (λ, μ, threshold), then one jitted,
  vmapped ``go.step``. No game is searched by the wrong player, no search is
  wasted, and finished games stay finished (their step is a no-op).
* :func:`play_gtp_match` plays a network against any GTP engine over pipes
  (:class:`saijax.gtp_client.GtpClient`), GNU Go in particular
  (``gnugo --mode gtp --chinese-rules --positional-superko --capture-all-dead
  --level L``, see :func:`gnugo_arena_argv`).

Conventions, shared by both:

* **Colours.** With ``alternate_colours`` side A has Black in even-numbered
  games and White in odd ones; otherwise A always has Black. In handicap
  games Black is the side receiving the handicap.
* **Komi and handicap.** ``handicap=0`` is an even game (default komi 7.5).
  ``handicap=1`` is the papers' H1: no stones, Black moves first, and the
  default komi is 0.5. ``handicap>=2`` places GTP fixed-handicap stones and
  White moves first (default komi 0.5; the papers add komi points to White
  to make H2 less prohibitive, which is just an explicit ``komi``).
* **Game end.** Two consecutive passes or the move cap (both scored
  Tromp–Taylor by saijax, komi included), or resignation.
* **Resignation** (DESIGN §6). A network resigns when its search's best child
  agent value (``max child_q``, the root player's λ/μ value of the best
  visited move) is below ``resign_threshold``, once at least
  ``resign_after`` moves (default N²/4, rounded down) have been played.
  ``resign_threshold=None`` disables it. A GTP engine resigns by answering
  ``genmove`` with ``resign``.
* **Margin at resignation.** As in the extended SAI paper (§3.6–3.7), the
  score of a resigned game is the median of the root player's margin
  (α + k) over the nodes of a search tree of ``score_visits`` visits (1000
  in the paper) from the position where the resignation happened. The extra
  search is run only for the games that just resigned, with the resigning
  network's own evaluator and agent (in a GTP match, always the network's).
  ``score_visits=None`` reuses the move search's own tree instead. The raw
  estimate is kept in ``GameResult.score_estimate``; ``margin`` is that
  estimate, except that a resignation always decides the winner, so an
  estimate on the wrong side of zero (the resigning side's tree still thinks
  it leads) is recorded as the smallest possible win, ±0.5.
* **Margin sign.** Always Black minus White, komi included.
* **Noise.** Games differ only through the search's randomness (Gumbel noise,
  or PUCT's Dirichlet noise and temperature) and the opponent's. Each game
  and ply has its own PRNG key, ``fold_in(fold_in(PRNGKey(seed), game),
  2·ply)``, so a game's moves do not depend on the other games in the batch.
  A deterministic search (PUCT, temperature 0, no noise) plays the same game
  every time with the same colours.

Results are one :class:`GameResult` per game, appended to a JSONL or CSV
table (by extension) as each game ends, one line per game with a single
``write`` on a file opened for appending. :mod:`saijax.elo` reads that table.
Each game can also be saved as SGF (:mod:`saijax.sgf`), with per-move
``alpha``, ``beta``, ``winrate`` and ``visits`` comments on the network's
moves (α is the lead of the player to move before komi, winrate the agent
value of the chosen move).

:func:`summarize` and :func:`format_report` turn a table into win rates with
Wilson and Clopper–Pearson 95% intervals, split by colour.

CLI::

    python -m saijax.arena --player=random --opponent=gnugo:1 --games=20 \\
        --board_size=5 --komi=7.5 --visits=8 --results=/tmp/r.jsonl \\
        --sgf_dir=/tmp/sgf

``--player``/``--opponent`` take ``random``, a checkpoint (via
:mod:`saijax.players`), and the opponent also ``gnugo:LEVEL`` or
``gtp:<command line>``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import io
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from saijax import cli, go, gtp_client, networks, search, sgf

__all__ = [
    "ArenaPlayer",
    "GameResult",
    "ColourStats",
    "Summary",
    "play_match",
    "play_gtp_match",
    "gnugo_arena_argv",
    "uniform_player",
    "append_results",
    "wilson_interval",
    "clopper_pearson_interval",
    "summarize",
    "format_report",
    "format_games",
    "main",
]

_DEFAULT_KOMI = 7.5
_HANDICAP_KOMI = 0.5
_Z95 = 1.959963984540054
# Salt for score-estimate keys, so they never coincide with move keys.
_SCORE_SALT = 1


# ---------------------------------------------------------------------------
# Players and results.


@dataclasses.dataclass(frozen=True, eq=False)
class ArenaPlayer:
    """A network with its search settings and λ/μ agent.

    Attributes:
      name: the name in the results table (must differ from the opponent's).
      evaluator: ``(params, states) -> (policy_logits, alpha, beta)``.
      params: the evaluator's parameters (``{"params", "batch_stats"}`` for a
        network).
      config: static search settings (visits, algorithm, ...).
      lambda_, mu, threshold: the agent (1 ≥ λ ≥ μ ≥ 0; the variable agent's
        τ threshold). None takes the config's value. They are traced, so two
        players that differ only here share compiled searches.
    """

    name: str
    evaluator: search.Evaluator
    params: Any
    config: search.SearchConfig
    lambda_: float | None = None
    mu: float | None = None
    threshold: float | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"ArenaPlayer.name must be a non-empty string, got {self.name!r}")
        lam = self.config.lambda_ if self.lambda_ is None else float(self.lambda_)
        mu = self.config.mu if self.mu is None else float(self.mu)
        threshold = self.config.threshold if self.threshold is None else float(self.threshold)
        if not 0.0 <= mu <= lam <= 1.0:
            raise ValueError(f"player {self.name!r}: need 1 >= lambda_ >= mu >= 0, got lambda_={lam}, mu={mu}")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"player {self.name!r}: threshold must be in [0, 1], got {threshold}")
        object.__setattr__(self, "lambda_", lam)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "threshold", threshold)

    @classmethod
    def from_network(
        cls,
        name: str,
        net: networks.SaiNet,
        variables: Any,
        rules: go.GoRules,
        config: search.SearchConfig | None = None,
        *,
        lambda_: float | None = None,
        mu: float | None = None,
        threshold: float | None = None,
    ) -> ArenaPlayer:
        """A player from a flax network and its ``{"params", "batch_stats"}``.

        The evaluator is cached per (network, rules), so players built from
        equal networks share compiled searches. Without a config, the
        default one is used, with ``value_mode="score"`` for a ``score`` head.
        """
        if net.board_size != rules.size:
            raise ValueError(
                f"player {name!r}: the network is for {net.board_size}x{net.board_size}, "
                f"the rules for {rules.size}x{rules.size}"
            )
        if config is None:
            config = search.SearchConfig(value_mode="score" if net.value_head == "score" else "sigmoid")
        return cls(
            name=name,
            evaluator=_network_evaluator(net, rules),
            params=variables,
            config=config,
            lambda_=lambda_,
            mu=mu,
            threshold=threshold,
        )

    def agent_params(self) -> search.AgentParams:
        return search.AgentParams(jnp.float32(self.lambda_), jnp.float32(self.mu), jnp.float32(self.threshold))

    def describe(self) -> str:
        cfg = self.config
        return (
            f"{self.name}: {cfg.algorithm} {cfg.num_simulations} visits, "
            f"lambda={self.lambda_:g} mu={self.mu:g} threshold={self.threshold:g}"
        )


@dataclasses.dataclass(frozen=True)
class GameResult:
    """One game of a match: a row of the results table.

    Attributes:
      black, white: player names.
      winner: "black", "white" or "draw".
      margin: Black minus White in points, komi included: the Tromp–Taylor
        count, or at resignation the score estimate (see the module
        docstring for the ±0.5 rule).
      resigned: the loser resigned.
      moves: moves played, passes included (a resignation is not a move).
      komi: Black's komi.
      handicap: handicap stones (0/1: none).
      end: "passes", "resign" or "cap" (the move cap).
      score_estimate: the raw score estimate at resignation (Black minus
        White), else None.
      engine_score: the GTP engine's ``final_score`` answer when the game
        was counted ("" for net-vs-net games and resignations).
      engine_dead: the stones the engine calls dead at that point (its
        ``final_status_list dead``, space-separated vertices), "" if none or
        not asked. Tromp–Taylor removes no dead stones, so the two counts
        can only agree when this is empty.
      sgf: the SGF path, or "".
      game: the game's index in the match.
      seed: the match seed.
    """

    black: str
    white: str
    winner: str
    margin: float
    resigned: bool
    moves: int
    komi: float
    handicap: int
    end: str
    score_estimate: float | None
    engine_score: str
    engine_dead: str
    sgf: str
    game: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_FIELDS = [f.name for f in dataclasses.fields(GameResult)]


def append_results(path: str | os.PathLike, results: Iterable[GameResult]) -> None:
    """Appends rows to a results table: CSV if the name ends in .csv, else JSONL.

    Each row is written with one ``write`` call on a file opened in append
    mode and flushed, so concurrent or interrupted writers leave whole lines.
    A CSV gets a header when it is new or empty; appending to a CSV whose
    header differs raises ValueError.
    """
    path = os.fspath(path)
    rows = [r.to_dict() for r in results]
    if not rows:
        return
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    is_csv = path.lower().endswith(".csv")
    with open(path, "a", encoding="utf-8", newline="") as f:
        if is_csv:
            if f.tell() == 0:
                f.write(",".join(_FIELDS) + "\r\n")
            else:
                with open(path, encoding="utf-8", newline="") as existing:
                    header = next(csv.reader(existing), None)
                if header != _FIELDS:
                    raise ValueError(f"{path}: existing CSV header {header} differs from the arena's columns {_FIELDS}")
        for row in rows:
            if is_csv:
                buf = io.StringIO()
                csv.DictWriter(buf, fieldnames=_FIELDS).writerow({k: "" if v is None else v for k, v in row.items()})
                line = buf.getvalue()
            else:
                line = json.dumps(row, allow_nan=False) + "\n"
            f.write(line)
            f.flush()


# ---------------------------------------------------------------------------
# Compiled pieces, cached so matches and tests share them.


@functools.cache
def _network_evaluator(net: networks.SaiNet, rules: go.GoRules) -> search.Evaluator:
    return search.make_network_evaluator(net, rules)


@functools.cache
def _search_fn(evaluator, rules: go.GoRules, config: search.SearchConfig):
    return search.make_search_fn(evaluator, rules, config)


@functools.cache
def _advance_fn(rules: go.GoRules):
    """jit((states [B], action [B], child_q [B, A], threshold, resign_after) -> (states, resigned [B]))."""

    def advance(states, action, child_q, threshold, resign_after):
        best = jnp.nanmax(child_q, axis=-1)  # NaN when nothing was visited: never resigns
        resigned = ~states.terminated & (states.move_count >= resign_after) & (best < threshold)
        stepped = jax.vmap(lambda s, a: go.step(rules, s, a))(states, action)
        gave_up = jax.vmap(go.resign)(states)
        new = jax.tree_util.tree_map(
            lambda g, s: jnp.where(resigned.reshape(resigned.shape + (1,) * (s.ndim - 1)), g, s), gave_up, stepped
        )
        return new, resigned

    return jax.jit(advance)


@functools.cache
def _margin_fn(rules: go.GoRules):
    """jit(states [B] -> Black-minus-White Tromp–Taylor margin, komi included [B])."""
    return jax.jit(lambda states: jax.vmap(lambda s: go.area_score(rules, s))(states) - states.komi)


@functools.cache
def _init_fn(rules: go.GoRules, handicap: int):
    return jax.jit(jax.vmap(lambda k: go.init(rules, k, handicap)))


@jax.jit
def _game_keys(base, games, salt):
    """[B, 2] keys: fold_in(fold_in(base, game), salt) per game."""
    return jax.vmap(lambda g: jax.random.fold_in(jax.random.fold_in(base, g), salt))(games)


# ---------------------------------------------------------------------------
# Shared match logic.


def _check_common(rules, games, komi, handicap, resign_threshold, resign_after, score_visits, max_moves):
    """Validates match settings; returns (rules, komis, handicap, threshold, resign_after)."""
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games must be an int >= 1, got {games!r}")
    games = int(games)
    if isinstance(handicap, bool) or not isinstance(handicap, (int, np.integer)) or handicap < 0:
        raise ValueError(f"handicap must be an int >= 0, got {handicap!r}")
    handicap = int(handicap)
    if handicap >= 2:
        go.handicap_points(rules, handicap)  # raises if the board has no such handicap
    if max_moves is not None:
        rules = go.GoRules(rules.size, int(max_moves))
    if komi is None:
        komi = _DEFAULT_KOMI if handicap == 0 else _HANDICAP_KOMI
    if np.ndim(komi) == 0:
        komis = [float(komi)] * games
    else:
        komis = [float(k) for k in komi]
        if len(komis) != games:
            raise ValueError(f"komi has {len(komis)} values for {games} games")
    for k in komis:
        if not math.isfinite(k) or k * 2 != round(k * 2):
            raise ValueError(f"komi must be a finite multiple of 0.5, got {k}")
    if resign_threshold is not None and not 0.0 < float(resign_threshold) < 1.0:
        raise ValueError(f"resign_threshold must be None or in (0, 1), got {resign_threshold}")
    if resign_after is None:
        resign_after = rules.num_points // 4
    if score_visits is not None and int(score_visits) < 1:
        raise ValueError(f"score_visits must be None or >= 1, got {score_visits}")
    threshold = -1.0 if resign_threshold is None else float(resign_threshold)
    return rules, komis, handicap, threshold, int(resign_after)


def _winner_and_margin(margin: float, resign_winner: int, estimate: float | None):
    """(winner name, recorded margin) from a count or a resignation."""
    if resign_winner != 0:
        sign = float(resign_winner)
        margin = float(estimate) if estimate is not None and math.isfinite(estimate) else math.nan
        if not margin * sign > 0:  # NaN, zero or the wrong side: the smallest win
            margin = 0.5 * sign
        return ("black" if resign_winner == 1 else "white"), margin
    margin = float(margin)
    if margin > 0:
        return "black", margin
    if margin < 0:
        return "white", margin
    return "draw", 0.0


def _finish(
    *,
    game: int,
    seed: int,
    rules: go.GoRules,
    black: str,
    white: str,
    komi: float,
    handicap: int,
    moves: Sequence[int],
    comments: Sequence[str | None],
    passes: int,
    count_margin: float,
    resign_winner: int,
    estimate: float | None,
    engine_score: str,
    sgf_dir: str | os.PathLike | None,
    root_comment: str,
    engine_dead: str = "",
) -> GameResult:
    """Builds a game's result row and writes its SGF."""
    winner, margin = _winner_and_margin(count_margin, resign_winner, estimate)
    resigned = resign_winner != 0
    end = "resign" if resigned else ("passes" if passes >= 2 else "cap")
    path = ""
    if sgf_dir is not None:
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
        path = os.path.join(os.fspath(sgf_dir), f"game_s{seed}_{game:04d}.sgf")
        sgf.write_sgf(record, path)
    return GameResult(
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
        seed=int(seed),
    )


def _comment(alpha, beta, winrate, visits) -> str:
    winrate = None if not np.isfinite(winrate) else float(winrate)
    return sgf.move_comment(alpha=float(alpha), beta=float(beta), winrate=winrate, visits=int(visits))


def _score_estimates(player: ArenaPlayer, rules, states, rows: np.ndarray, keys, score_visits, group_size: int):
    """Black-minus-White score estimates for ``states[rows]``, batched.

    The batch is padded (repeating the first row) to the next power of two,
    capped at ``group_size``, so a match compiles at most log2(group) + 1
    shapes for this search.
    """
    k = len(rows)
    size = min(1 << (k - 1).bit_length(), group_size)
    padded = np.concatenate([rows, np.full(size - k, rows[0])]).astype(np.int32)
    sub = jax.tree_util.tree_map(lambda x: x[padded], states)
    cfg = dataclasses.replace(player.config, num_simulations=int(score_visits))
    out = _search_fn(player.evaluator, rules, cfg)(player.params, keys[padded], sub, player.agent_params())
    est, to_play = jax.device_get((out.score_estimate, sub.to_play))
    return (np.asarray(est) * np.asarray(to_play, np.float32))[:k]


# ---------------------------------------------------------------------------
# Net vs net, lockstep.


def play_match(
    rules: go.GoRules,
    side_a: ArenaPlayer,
    side_b: ArenaPlayer,
    *,
    games: int,
    komi: float | Sequence[float] | None = None,
    handicap: int = 0,
    alternate_colours: bool = True,
    seed: int = 0,
    max_moves: int | None = None,
    resign_threshold: float | None = None,
    resign_after: int | None = None,
    score_visits: int | None = 1000,
    sgf_dir: str | os.PathLike | None = None,
    results_path: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> list[GameResult]:
    """Plays ``games`` games between two networks, all in lockstep.

    Args:
      rules: the rules (board size; the move cap unless ``max_moves``).
      side_a, side_b: the players; their names must differ.
      games: number of games.
      komi: Black's komi, one value or one per game; default 7.5 for
        ``handicap=0``, else 0.5.
      handicap: 0 even, 1 the papers' H1 (no stones), >= 2 fixed stones with
        White first.
      alternate_colours: A has Black in even games, White in odd ones;
        False: A always has Black.
      seed: match seed; game i, ply t uses
        ``fold_in(fold_in(PRNGKey(seed), i), 2t)``.
      max_moves: move cap (default the rules', 2·N²).
      resign_threshold: resign when the best child's agent value is below
        this; None never resigns.
      resign_after: moves played before resignation is allowed (default
        N²/4 rounded down).
      score_visits: visits of the score-estimate search run for games that
        just resigned (the papers use 1000); None uses the move search's tree.
      sgf_dir: write one SGF per game there.
      results_path: append each finished game to this JSONL/CSV table.
      log: called with a line of text as each game ends.

    Returns:
      The games' :class:`GameResult` rows, ordered by game index.
    """
    if side_a.name == side_b.name:
        raise ValueError(f"both players are named {side_a.name!r}; give them distinct names for the results table")
    rules, komis, handicap, threshold, resign_after = _check_common(
        rules, games, komi, handicap, resign_threshold, resign_after, score_visits, max_moves
    )
    a_black = np.array([(i % 2 == 0) or not alternate_colours for i in range(games)])
    groups = [np.flatnonzero(a_black), np.flatnonzero(~a_black)]  # group 0: A is Black
    first = -1 if handicap >= 2 else 1
    base = jax.random.PRNGKey(seed)
    advance = _advance_fn(rules)

    moves = np.full((games, rules.max_moves), -1, np.int32)
    stats = np.full((games, rules.max_moves, 4), np.nan, np.float32)  # alpha, beta, winrate, visits
    estimates = np.full(games, np.nan)
    done_reported = np.zeros(games, bool)
    results: dict[int, GameResult] = {}
    init = _init_fn(rules, handicap)
    states = [init(jnp.asarray([komis[i] for i in idx], jnp.float32)) if len(idx) else None for idx in groups]

    def names(i):
        return (side_a.name, side_b.name) if a_black[i] else (side_b.name, side_a.name)

    def report_finished(group, idx):
        """Writes the rows (and SGFs) of the group's games that have just ended."""
        terminated, winner, passes = jax.device_get((group.terminated, group.winner, group.passes))
        fresh = np.flatnonzero(np.asarray(terminated) & ~done_reported[idx])
        if not len(fresh):
            return
        margins = np.asarray(jax.device_get(_margin_fn(rules)(group)))
        rows = []
        for j in fresh:
            i = int(idx[j])
            black, white = names(i)
            played = moves[i][moves[i] >= 0]
            comments = [_comment(*stats[i, t]) for t in range(len(played))]
            resign_winner = int(winner[j])
            est = float(estimates[i]) if resign_winner else None
            root = (
                f"saijax arena game {i} (seed {seed}). "
                f"Black {side_a.describe() if black == side_a.name else side_b.describe()}. "
                f"White {side_a.describe() if white == side_a.name else side_b.describe()}."
            )
            result = _finish(
                game=i,
                seed=seed,
                rules=rules,
                black=black,
                white=white,
                komi=komis[i],
                handicap=handicap,
                moves=played,
                comments=comments,
                passes=int(passes[j]),
                count_margin=float(margins[j]),
                resign_winner=resign_winner,
                estimate=est,
                engine_score="",
                sgf_dir=sgf_dir,
                root_comment=root,
            )
            results[i] = result
            done_reported[i] = True
            rows.append(result)
            if log is not None:
                log(_game_line(result))
        if results_path is not None:
            append_results(results_path, rows)

    for ply in range(rules.max_moves):
        colour = first if ply % 2 == 0 else -first
        any_active = False
        for g, idx in enumerate(groups):
            if not len(idx):
                continue
            st = states[g]
            active = ~np.asarray(st.terminated)
            if not active.any():
                continue
            any_active = True
            # Group 0 has A as Black: A moves there when Black is to move.
            mover = side_a if (colour == 1) == (g == 0) else side_b
            game_ids = jnp.asarray(idx, jnp.int32)
            keys = _game_keys(base, game_ids, jnp.int32(2 * ply))
            out = _search_fn(mover.evaluator, rules, mover.config)(mover.params, keys, st, mover.agent_params())
            new, resigned = advance(st, out.action, out.child_q, jnp.float32(threshold), jnp.int32(resign_after))
            action, alpha, beta, child_q, visits, resigned = jax.device_get(
                (out.action, out.root_alpha, out.root_beta, out.child_q, out.visit_counts, resigned)
            )
            moved = active & ~resigned
            rows = idx[moved]
            moves[rows, ply] = action[moved]
            chosen_q = np.take_along_axis(child_q, action[:, None], axis=1)[:, 0]
            stats[rows, ply] = np.stack([alpha, beta, chosen_q, visits.sum(axis=1)], axis=1)[moved]
            if resigned.any():
                local = np.flatnonzero(resigned)
                if score_visits is None:
                    est = jax.device_get(out.score_estimate)[local] * colour
                else:
                    score_keys = _game_keys(base, game_ids, jnp.int32(2 * ply + _SCORE_SALT))
                    est = _score_estimates(mover, rules, st, local, score_keys, score_visits, len(idx))
                estimates[idx[local]] = est
            states[g] = new
            report_finished(new, idx)
        if not any_active:
            break
    return [results[i] for i in range(games)]


def _game_line(r: GameResult) -> str:
    how = {"resign": "resignation", "passes": "two passes", "cap": "move cap"}[r.end]
    return (
        f"game {r.game:3d}: B {r.black} vs W {r.white}: {r.winner} wins, margin {r.margin:+.1f} "
        f"({how}, {r.moves} moves{', engine ' + r.engine_score if r.engine_score else ''})"
    )


# ---------------------------------------------------------------------------
# Net vs GTP engine.


def gnugo_arena_argv(level: int = 1, *, extra: Sequence[str] = ()) -> list[str]:
    """GNU Go's command line for arena games under Tromp–Taylor scoring.

    :func:`saijax.gtp_client.gnugo_argv` (Chinese rules, positional superko,
    no suicide) plus ``--capture-all-dead``. Without it GNU Go passes as soon
    as it judges the opponent's remaining stones dead, expecting them to be
    removed in the count; Tromp–Taylor removes nothing, so those games would
    be counted with the dead stones alive (in a test on 5×5, every game
    between GNU Go level 1 and a random net ended that way, with the counts
    far apart). With it, GNU Go captures dead stones before passing, and the
    two counts agree whenever GNU Go sees no dead stones at the end.

    Raises:
      FileNotFoundError: GNU Go is not installed.
    """
    return gtp_client.gnugo_argv(level, extra=("--capture-all-dead", *extra))


def _engine_name(argv: Sequence[str]) -> str:
    base = os.path.basename(str(argv[0]))
    argv = [str(a) for a in argv]
    if "gnugo" in base and "--level" in argv:
        i = argv.index("--level")
        if i + 1 < len(argv):
            return f"gnugo-l{argv[i + 1]}"
    return base


def play_gtp_match(
    rules: go.GoRules,
    net_player: ArenaPlayer,
    engine_argv: Sequence[str],
    *,
    games: int,
    komi: float | Sequence[float] | None = None,
    handicap: int = 0,
    alternate_colours: bool = True,
    seed: int = 0,
    max_moves: int | None = None,
    resign_threshold: float | None = None,
    resign_after: int | None = None,
    score_visits: int | None = 1000,
    engine_name: str | None = None,
    sgf_dir: str | os.PathLike | None = None,
    results_path: str | os.PathLike | None = None,
    timeout: float | None = 120.0,
    engine_stderr: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> list[GameResult]:
    """Plays a network against a GTP engine (e.g. GNU Go), one game at a time.

    One engine process serves the whole match. Each game sends ``boardsize``,
    ``clear_board``, ``komi``, ``set_random_seed`` (if the engine has it, so
    games differ and reruns repeat), and for ``handicap >= 2``
    ``fixed_handicap``, whose stones must match saijax's placement. Then
    ``genmove``/``play`` alternate. The engine may answer ``pass`` or
    ``resign``. A counted game (two passes or the move cap) is scored
    Tromp–Taylor by saijax, and the engine's ``final_score`` is stored next
    to it in ``engine_score`` so that disagreements are visible, with the
    stones the engine calls dead in ``engine_dead``. With GNU Go
    (:func:`gnugo_arena_argv`) the two agree in even games whenever
    ``engine_dead`` is empty. In handicap games GNU Go's Chinese count gives
    White one point per handicap stone (the Chinese compensation), which
    Tromp–Taylor does not, so there its score is H points more for White.

    Args:
      rules: the rules (board size; the move cap unless ``max_moves``).
      net_player: the network side ("side A": Black in even games).
      engine_argv: the engine's command line, e.g. ``gnugo_arena_argv(1)``.
      games, komi, handicap, alternate_colours, seed, max_moves,
      resign_threshold, resign_after, score_visits, sgf_dir, results_path,
      log: as in :func:`play_match`. Only the network resigns by threshold;
        a resignation by either side is scored with the network's estimate.
      engine_name: the engine's name in the table (default e.g. "gnugo-l1").
      timeout: seconds per GTP command.
      engine_stderr: file to append the engine's stderr to.

    Returns:
      The games' :class:`GameResult` rows, in order.

    Raises:
      GtpError: the engine failed or rejected a command.
      ValueError: the engine played a move that is illegal under saijax's
        rules, or placed different handicap stones.
    """
    rules, komis, handicap, threshold, resign_after = _check_common(
        rules, games, komi, handicap, resign_threshold, resign_after, score_visits, max_moves
    )
    engine_name = engine_name or _engine_name(engine_argv)
    if engine_name == net_player.name:
        raise ValueError(f"the network and the engine are both named {engine_name!r}")
    n = rules.size
    base = jax.random.PRNGKey(seed)
    search_fn = _search_fn(net_player.evaluator, rules, net_player.config)
    agent = net_player.agent_params()
    results = []
    with gtp_client.GtpClient(engine_argv, timeout=timeout, stderr=engine_stderr) as engine:
        has_seed = engine.known_command("set_random_seed")
        has_score = engine.known_command("final_score")
        has_status = engine.known_command("final_status_list")
        for i in range(games):
            net_colour = 1 if (i % 2 == 0 or not alternate_colours) else -1
            black, white = (net_player.name, engine_name) if net_colour == 1 else (engine_name, net_player.name)
            komi_i = komis[i]
            engine.send(f"boardsize {n}")
            engine.send("clear_board")
            engine.send(f"komi {komi_i:g}")
            if has_seed:
                engine.send(f"set_random_seed {(int(seed) * 1_000_003 + i) % (2**31 - 1) + 1}")
            if handicap >= 2:
                reply = engine.send(f"fixed_handicap {handicap}")
                placed = sorted(go.from_gtp(rules, v) for v in reply.split())
                expected = sorted(go.handicap_points(rules, handicap))
                if placed != expected:
                    raise ValueError(
                        f"engine placed handicap stones {reply!r}, saijax expects "
                        f"{' '.join(go.to_gtp(rules, p) for p in expected)}"
                    )
            state = go.init(rules, jnp.float32(komi_i), handicap)
            game_id = jnp.asarray([i], jnp.int32)
            moves: list[int] = []
            comments: list[str | None] = []
            resign_winner, estimate = 0, None
            while not bool(state.terminated):
                ply = int(state.move_count)
                colour = int(state.to_play)
                name = "black" if colour == 1 else "white"
                batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
                if colour == net_colour:
                    keys = _game_keys(base, game_id, jnp.int32(2 * ply))
                    out = search_fn(net_player.params, keys, batched, agent)
                    action, alpha, beta, child_q, visits, est = jax.device_get(
                        (
                            out.action[0],
                            out.root_alpha[0],
                            out.root_beta[0],
                            out.child_q[0],
                            out.visit_counts[0],
                            out.score_estimate[0],
                        )
                    )
                    best = np.nanmax(child_q) if np.isfinite(child_q).any() else np.nan
                    if ply >= resign_after and best < threshold:
                        resign_winner = -colour
                        estimate = _gtp_estimate(net_player, rules, batched, base, game_id, ply, score_visits, est)
                        break
                    action = int(action)
                    engine.send(f"play {name} {go.to_gtp(rules, action)}")
                    moves.append(action)
                    comments.append(_comment(alpha, beta, child_q[action], visits.sum()))
                else:
                    reply = engine.send(f"genmove {name}").strip()
                    if reply.lower() == "resign":
                        resign_winner = -colour
                        keys = _game_keys(base, game_id, jnp.int32(2 * ply))
                        out = search_fn(net_player.params, keys, batched, agent)
                        est = float(jax.device_get(out.score_estimate[0]))
                        estimate = _gtp_estimate(net_player, rules, batched, base, game_id, ply, score_visits, est)
                        break
                    try:
                        action = go.from_gtp(rules, reply)
                    except ValueError as e:
                        raise ValueError(f"game {i}: engine answered genmove with {reply!r}") from e
                    moves.append(action)
                    comments.append(None)
                try:
                    state = go.play(rules, state, action)
                except ValueError as e:
                    raise ValueError(f"game {i}, move {ply + 1}: {e}") from e
            engine_score = engine_dead = ""
            if not resign_winner:
                engine_score, engine_dead = _engine_count(engine, has_score, has_status)
            final = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
            margin = float(jax.device_get(_margin_fn(rules)(final))[0])
            root = (
                f"saijax arena game {i} (seed {seed}). {net_player.describe()}. "
                f"Engine: {' '.join(shlex.quote(str(a)) for a in engine_argv)}."
            )
            result = _finish(
                game=i,
                seed=seed,
                rules=rules,
                black=black,
                white=white,
                komi=komi_i,
                handicap=handicap,
                moves=moves,
                comments=comments,
                passes=int(state.passes),
                count_margin=margin,
                resign_winner=resign_winner,
                estimate=estimate,
                engine_score=engine_score,
                sgf_dir=sgf_dir,
                root_comment=root,
                engine_dead=engine_dead,
            )
            results.append(result)
            if log is not None:
                log(_game_line(result))
            if results_path is not None:
                append_results(results_path, [result])
    return results


def _engine_count(engine: gtp_client.GtpClient, has_score: bool, has_status: bool) -> tuple[str, str]:
    """The engine's (final_score, dead stones) for a counted game; failures become "?<message>"."""

    def ask(command):
        try:
            return " ".join(engine.send(command).split())
        except gtp_client.GtpError as e:
            return "?" + " ".join(e.message.split())

    score = ask("final_score") if has_score else ""
    dead = ask("final_status_list dead") if has_status else ""
    return score, dead


def _gtp_estimate(player, rules, batched, base, game_id, ply, score_visits, move_estimate) -> float:
    """Black-minus-White score estimate of a one-game batch at a resignation."""
    if score_visits is None:
        return float(move_estimate) * float(batched.to_play[0])
    keys = _game_keys(base, game_id, jnp.int32(2 * ply + _SCORE_SALT))
    return float(_score_estimates(player, rules, batched, np.array([0]), keys, score_visits, 1)[0])


# ---------------------------------------------------------------------------
# Reports.


def wilson_interval(successes: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (default 95%).

    ``successes`` may be fractional (draws counted as half a win). With no
    games the interval is (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def clopper_pearson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson ("exact") interval from beta quantiles (scipy.stats.beta).

    Fractional ``successes`` (half draws) are used as-is in the beta
    parameters. With no games the interval is (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    a = 1.0 - confidence
    lo = 0.0 if successes <= 0 else float(scipy.stats.beta.ppf(a / 2, successes, n - successes + 1))
    hi = 1.0 if successes >= n else float(scipy.stats.beta.ppf(1 - a / 2, successes + 1, n - successes))
    return (lo, hi)


@dataclasses.dataclass(frozen=True)
class ColourStats:
    """A player's games with one colour (or all games).

    Attributes:
      games, wins, draws, losses: counts.
      win_rate: (wins + draws/2) / games; NaN without games.
      mean_margin: the player's average margin (own points minus the
        opponent's, komi included); NaN without games.
      mean_win_margin: average margin of the games won; NaN if none.
    """

    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    mean_margin: float
    mean_win_margin: float


@dataclasses.dataclass(frozen=True)
class Summary:
    """A player's record over a results table (see :func:`summarize`)."""

    player: str
    opponents: tuple[str, ...]
    overall: ColourStats
    black: ColourStats
    white: ColourStats
    wilson: tuple[float, float]  # 95% Wilson interval of the win rate
    clopper_pearson: tuple[float, float]  # 95% Clopper–Pearson interval
    resignations: int  # games (of this player) ended by resignation
    counted: int  # games ended by two passes or the move cap
    mean_moves: float


def _field(row, name, default=None):
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)


def _colour_stats(outcomes: list[tuple[int, float | None]]) -> ColourStats:
    wins = sum(1 for o, _ in outcomes if o == 1)
    draws = sum(1 for o, _ in outcomes if o == 0)
    losses = sum(1 for o, _ in outcomes if o == -1)
    n = len(outcomes)
    margins = [m for _, m in outcomes if m is not None]
    win_margins = [m for o, m in outcomes if o == 1 and m is not None]
    return ColourStats(
        games=n,
        wins=wins,
        draws=draws,
        losses=losses,
        win_rate=(wins + 0.5 * draws) / n if n else math.nan,
        mean_margin=float(np.mean(margins)) if margins else math.nan,
        mean_win_margin=float(np.mean(win_margins)) if win_margins else math.nan,
    )


def summarize(results: Iterable[GameResult | Mapping[str, Any]], player: str) -> Summary:
    """One player's record: win rate with 95% intervals, split by colour.

    Draws count as half a win in the win rate and its intervals. Margins are
    turned to the player's point of view (Black's margin as Black, minus it
    as White).

    Args:
      results: :class:`GameResult` rows or dicts (e.g. ``elo.load_results``).
      player: the player's name.

    Raises:
      ValueError: the player played none of the games.
    """
    by_colour: dict[str, list[tuple[int, float | None]]] = {"black": [], "white": []}
    opponents = set()
    resignations = counted = 0
    moves = []
    for row in results:
        black, white, winner = _field(row, "black"), _field(row, "white"), str(_field(row, "winner")).lower()
        if player not in (black, white):
            continue
        colour = "black" if player == black else "white"
        opponents.add(white if colour == "black" else black)
        sign = 1 if colour == "black" else -1
        outcome = 0 if winner == "draw" else (1 if winner == colour else -1)
        margin = _field(row, "margin")
        margin = None if margin in (None, "") or not math.isfinite(float(margin)) else sign * float(margin)
        by_colour[colour].append((outcome, margin))
        if _field(row, "resigned") in (True, "True", "true"):
            resignations += 1
        else:
            counted += 1
        if _field(row, "moves") not in (None, ""):
            moves.append(int(_field(row, "moves")))
    overall = _colour_stats(by_colour["black"] + by_colour["white"])
    if not overall.games:
        raise ValueError(f"player {player!r} played none of the games")
    points = overall.wins + 0.5 * overall.draws
    return Summary(
        player=player,
        opponents=tuple(sorted(opponents)),
        overall=overall,
        black=_colour_stats(by_colour["black"]),
        white=_colour_stats(by_colour["white"]),
        wilson=wilson_interval(points, overall.games),
        clopper_pearson=clopper_pearson_interval(points, overall.games),
        resignations=resignations,
        counted=counted,
        mean_moves=float(np.mean(moves)) if moves else math.nan,
    )


def _pct(x: float) -> str:
    return "   -  " if not math.isfinite(x) else f"{100 * x:5.1f}%"


def _pts(x: float) -> str:
    return "    -" if not math.isfinite(x) else f"{x:+5.1f}"


def format_report(summary: Summary) -> str:
    """A text table of a :class:`Summary`: overall and per-colour records."""
    lines = [
        f"{summary.player} vs {', '.join(summary.opponents)}: {summary.overall.games} games "
        f"({summary.counted} counted, {summary.resignations} by resignation, "
        f"{summary.mean_moves:.1f} moves on average)",
        f"{'':8s} {'games':>5s} {'wins':>5s} {'draws':>5s} {'losses':>6s} {'win rate':>8s} "
        f"{'mean margin':>11s} {'mean win margin':>15s}",
    ]
    for label, s in (("all", summary.overall), ("as black", summary.black), ("as white", summary.white)):
        lines.append(
            f"{label:8s} {s.games:5d} {s.wins:5d} {s.draws:5d} {s.losses:6d} {_pct(s.win_rate):>8s} "
            f"{_pts(s.mean_margin):>11s} {_pts(s.mean_win_margin):>15s}"
        )
    lo, hi = summary.wilson
    clo, chi = summary.clopper_pearson
    lines.append(
        f"win rate {_pct(summary.overall.win_rate).strip()}: 95% Wilson [{_pct(lo).strip()}, {_pct(hi).strip()}], "
        f"95% Clopper-Pearson [{_pct(clo).strip()}, {_pct(chi).strip()}] (draws count half)"
    )
    return "\n".join(lines)


def format_games(results: Iterable[GameResult | Mapping[str, Any]]) -> str:
    """One line per game: colours, winner, margin, how it ended."""
    lines = [f"{'game':>4s}  {'black':16s} {'white':16s} {'winner':6s} {'margin':>7s} {'end':7s} {'moves':>5s}  engine"]
    for r in results:
        lines.append(
            f"{_field(r, 'game', ''):>4}  {str(_field(r, 'black')):16s} {str(_field(r, 'white')):16s} "
            f"{_field(r, 'winner'):6s} {float(_field(r, 'margin')):+7.1f} {_field(r, 'end', ''):7s} "
            f"{_field(r, 'moves', ''):>5}  {_field(r, 'engine_score', '') or ''}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# CLI.


def _load_network(spec: str, board_size: int, args, seed: int):
    """(net, variables, default name) for "random" or a checkpoint, via saijax.players.

    A random net is named "random", the name :mod:`saijax.elo` anchors at 0;
    a checkpoint keeps the player's name (e.g. "gen12").
    """
    from saijax import players  # noqa: PLC0415 (keeps orbax out of library imports)

    if spec == "random":
        loaded = players.load_player(None, board_size=board_size, blocks=args.blocks, filters=args.filters, seed=seed)
        return loaded.net, loaded.variables, "random"
    loaded = players.load_player(spec, board_size=board_size)
    return loaded.net, loaded.variables, loaded.name


def uniform_player(rules: go.GoRules, name: str = "uniform") -> ArenaPlayer:
    """A player that picks uniformly among legal moves (pass included).

    One Gumbel simulation with a flat prior: the move is the argmax of i.i.d.
    Gumbel noise over the legal actions, i.e. a uniform draw. Its value head
    says "even" (α = 0), so it never resigns.
    """

    def evaluate(params, states):
        del params
        zeros = jnp.zeros(states.board.shape[0], jnp.float32)
        return jnp.zeros(states.legal.shape, jnp.float32), zeros, jnp.ones_like(zeros)

    config = search.SearchConfig(num_simulations=1, max_num_considered_actions=rules.num_actions)
    return ArenaPlayer(name=name, evaluator=evaluate, params=None, config=config)


def _agent_suffix(lam: float, mu: float) -> str:
    return "" if lam == 0 and mu == 0 else f"[l={lam:g},m={mu:g}]"


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m saijax.arena",
        description="Play a network against another network or a GTP engine; print a report.",
    )
    p.add_argument("--player", required=True, help="'random' or a checkpoint (workdir or step directory)")
    p.add_argument(
        "--opponent",
        required=True,
        help=(
            "'random' (random net), 'uniform' (uniformly random legal moves), a checkpoint, "
            "'gnugo:LEVEL' or 'gtp:<command>'"
        ),
    )
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--board_size", type=int, default=9)
    p.add_argument("--komi", type=float, default=None, help="default 7.5 (0.5 with handicap)")
    p.add_argument("--handicap", type=int, default=0)
    p.add_argument("--no_alternate", action="store_true", help="the player always takes Black")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max_moves", type=int, default=None, help="move cap (default 2*N^2)")
    p.add_argument("--algorithm", choices=["gumbel", "puct"], default="gumbel")
    p.add_argument("--visits", type=int, default=64)
    p.add_argument("--opponent_visits", type=int, default=None, help="default --visits")
    p.add_argument("--lambda_", type=float, default=0.0)
    p.add_argument("--mu", type=float, default=0.0)
    p.add_argument("--threshold", type=float, default=0.0)
    p.add_argument("--opponent_lambda_", type=float, default=None)
    p.add_argument("--opponent_mu", type=float, default=None)
    p.add_argument("--opponent_threshold", type=float, default=None)
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
    p.add_argument("--quiet", action="store_true", help="no per-game lines")
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

    rules = go.GoRules(args.board_size)
    log = None if args.quiet else (lambda line: print(line, flush=True))
    score_visits = args.score_visits or None

    def player(spec, visits, lam, mu, threshold, name, seed):
        net, variables, default = _load_network(spec, rules.size, args, seed)
        config = search.SearchConfig(
            algorithm=args.algorithm,
            num_simulations=visits,
            value_mode="score" if net.value_head == "score" else "sigmoid",
        )
        return ArenaPlayer.from_network(
            name or default + _agent_suffix(lam, mu),
            net,
            variables,
            rules,
            config,
            lambda_=lam,
            mu=mu,
            threshold=threshold,
        )

    try:
        me = player(args.player, args.visits, args.lambda_, args.mu, args.threshold, args.name, args.seed)
    except (ValueError, OSError) as e:  # a missing or corrupt checkpoint, a bad option
        return fail(e)
    common = dict(
        games=args.games,
        komi=args.komi,
        handicap=args.handicap,
        alternate_colours=not args.no_alternate,
        seed=args.seed,
        max_moves=args.max_moves,
        resign_threshold=args.resign_threshold,
        resign_after=args.resign_after,
        score_visits=score_visits,
        sgf_dir=args.sgf_dir,
        results_path=args.results,
        log=log,
    )
    opp = args.opponent
    if opp.startswith("gnugo:") or opp.startswith("gtp:"):
        if opp.startswith("gnugo:"):
            level = int(opp.split(":", 1)[1])
            argv_engine = gnugo_arena_argv(level)
            engine_name = args.opponent_name or f"gnugo-l{level}"
        else:
            argv_engine = shlex.split(opp.split(":", 1)[1])
            engine_name = args.opponent_name or _engine_name(argv_engine)
        results = play_gtp_match(rules, me, argv_engine, engine_name=engine_name, timeout=args.gtp_timeout, **common)
    elif opp == "uniform":
        results = play_match(rules, me, uniform_player(rules, args.opponent_name or "uniform"), **common)
    else:
        lam = args.lambda_ if args.opponent_lambda_ is None else args.opponent_lambda_
        mu = args.mu if args.opponent_mu is None else args.opponent_mu
        threshold = args.threshold if args.opponent_threshold is None else args.opponent_threshold
        try:
            them = player(
                opp, args.opponent_visits or args.visits, lam, mu, threshold, args.opponent_name, args.seed + 1
            )
        except (ValueError, OSError) as e:
            return fail(e)
        if them.name == me.name:
            them = dataclasses.replace(them, name=them.name + "-2")
        results = play_match(rules, me, them, **common)
    print()
    print(format_games(results))
    print()
    print(format_report(summarize(results, me.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(exit_on_error=True))
