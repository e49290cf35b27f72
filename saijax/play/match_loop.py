"""The one match loop: two opponents, many games (docs/design.md §8).

Every match of saijax is :func:`play_games` between two
:class:`saijax.play.opponents.Opponent` objects: net against net in the arena
(:func:`saijax.play.arena.play_match`) and in training's gating, a net against
GNU Go or another GTP engine (:func:`saijax.play.gtp_match.play_gtp_match`), and
the experiments' matches through either. The settings and conventions
(:class:`saijax.play.match.MatchSettings`: colours, komi and handicap, keys,
random openings, resignation and its score estimates) are
:mod:`saijax.play.match`'s; the results table is :mod:`saijax.analysis.results`'.

How a match runs. The games are split into fixed groups by who has Black
and who moves first (White first in handicap games of 2+ stones), sorted by
handicap then game. Every game still running in a group has played the same
number of moves (each ply moves every unfinished game once), so within a
group the same side is to move in every game. A ply of a group is: the
given start position's move (``MatchSettings.start_moves``), else a random
opening move, else one :meth:`~saijax.play.opponents.Opponent.choose` by the
side to move over the whole group; then one jitted, vmapped ``go.step``
(finished games stay finished: their step is a no-op). When both opponents
are ``lockstep`` every group plays at once, ply by ply, all on device; when
one is not (a GTP engine holds one board), each game is a group of its own
and the games are played one after another, in order. Either way game i,
ply t searches with the same keys, so a game's moves do not depend on the
other games.

The loop checks every chosen move's legality, tells the other side
(:meth:`~saijax.play.opponents.Opponent.play`), applies the shared resign rule
to an opponent that reports its best move's value (and takes an engine's
own resignations), estimates the score of a resigned game, and writes each
game's row and SGF as it ends (:func:`saijax.play.match.record_game`), with an
engine's own count of it (:meth:`~saijax.play.opponents.Opponent.end_game`).

Score estimates at a resignation: with ``score_visits`` a search of that
many visits by ``scorer``, else by the resigning side's player, else (an
engine resigned) by the other side's; without it the resigning side's own
move search's estimate, or, for an engine, that of the other side's move
search of the position (with the move key of that game and ply). With
``MatchSettings.play_out`` the rule ends no game; where it first fires, the
ply and the estimates are kept for the game's row.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from saijax.analysis import results
from saijax.core import go, search
from saijax.play import match, opponents, players

__all__ = ["advance_fn", "default_root_comment", "initial_states", "lockstep_groups", "play_games"]

Opponent = opponents.Opponent


@functools.cache
def advance_fn(rules: go.GoRules):
    """jit((states [B], action [B], resigned [B]) -> states): each game plays its action, or resigns."""

    def advance(states, action, resigned):
        stepped = jax.vmap(lambda s, a: go.step(rules, s, a))(states, action)
        gave_up = jax.vmap(go.resign)(states)
        return jax.tree_util.tree_map(
            lambda g, s: jnp.where(resigned.reshape(resigned.shape + (1,) * (s.ndim - 1)), g, s), gave_up, stepped
        )

    return jax.jit(advance)


@functools.cache
def _init_fn(rules: go.GoRules, handicap: int):
    return jax.jit(jax.vmap(lambda k: go.init(rules, k, handicap)))


def lockstep_groups(settings: match.MatchSettings) -> list[np.ndarray]:
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


def initial_states(rules: go.GoRules, settings: match.MatchSettings, idx: np.ndarray) -> go.GoState:
    """The start positions of games ``idx`` (in that order), batched."""
    komis, handicaps = np.asarray(settings.komis(), np.float32), np.asarray(settings.handicaps())
    parts = []
    for h in sorted(set(handicaps[idx].tolist())):
        rows = idx[handicaps[idx] == h]
        parts.append(_init_fn(rules, int(h))(jnp.asarray(komis[rows])))
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs), *parts)


def _board_size(side_a: Opponent, side_b: Opponent, board_size: int | None) -> int:
    """The match's board size: the opponents' (they must agree), else ``board_size``."""
    a, b = side_a.board_size, side_b.board_size
    if a is not None and b is not None and a != b:
        raise ValueError(f"{side_a.name!r} plays on {a}x{a}, {side_b.name!r} on {b}x{b}")
    size = a if a is not None else b
    if size is None:
        if board_size is None:
            raise ValueError("play_games: neither opponent fixes the board size; give board_size")
        return int(board_size)
    if board_size is not None and int(board_size) != size:
        raise ValueError(f"the opponents play on {size}x{size}, not the requested {board_size}x{board_size}")
    return size


def _search_estimates(player: players.Player, rules: go.GoRules, states, keys) -> np.ndarray:
    """The player's move search's score estimates of ``states`` (the player to move's view)."""
    out = match.search_fn(player.evaluator, rules, player.config)(player.variables, keys, states, player.agent.params())
    return np.asarray(jax.device_get(out.score_estimate))


def default_root_comment(settings: match.MatchSettings) -> Callable[[int, Opponent, Opponent], str]:
    """The SGF root comment of game i: the match seed and what plays Black and White."""

    def comment(game: int, black: Opponent, white: Opponent) -> str:
        return f"saijax arena game {game} (seed {settings.seed}). Black {black.describe()}. White {white.describe()}."

    return comment


def play_games(
    side_a: Opponent,
    side_b: Opponent,
    settings: match.MatchSettings,
    *,
    board_size: int | None = None,
    scorer: players.Player | None = None,
    log: Callable[[str], None] | None = None,
    root_comment: Callable[[int, Opponent, Opponent], str] | None = None,
    resign_points: bool = True,
) -> list[results.GameResult]:
    """Plays ``settings.games`` games between two opponents (the module docstring says how).

    Args:
      side_a, side_b: the opponents (distinct names); side A has Black in
        even games with alternating colours.
      settings: games, komi and handicap (per game or not), colours, seed,
        resignation, openings, SGF and results paths.
      board_size: the board size, needed only when neither opponent fixes it.
      scorer: the player whose search estimates the score of resigned games
        (a fixed strong net, as in the papers); default the resigning side's
        player (the module docstring).
      log: called with a line of text as each game ends.
      root_comment: ``(game, black, white) -> str``, each SGF's root comment
        (default :func:`default_root_comment`).
      resign_points: record where the resign rule fired
        (``GameResult.resign_ply``, ``resign_estimate``,
        ``resign_own_estimate``) at every resignation; False records them
        only with ``settings.play_out`` (rows of matches against engines
        have always left them empty).

    Returns:
      The games' :class:`saijax.analysis.results.GameResult` rows, ordered by game index.

    Raises:
      ValueError: bad opponents or settings, an illegal move (a given start
        position's, or an opponent's), or an opponent's own refusal.
    """
    if side_a.name == side_b.name:
        raise ValueError(f"both players are named {side_a.name!r}; give them distinct names for the results table")
    size = _board_size(side_a, side_b, board_size)
    if scorer is not None and scorer.board_size != size:
        raise ValueError(f"the scorer {scorer.name!r} plays on {scorer.board_size}x{scorer.board_size}")
    rules = settings.rules(size)
    games = _Games(side_a, side_b, settings, rules, scorer, log, root_comment, resign_points)
    if side_a.lockstep and side_b.lockstep:
        rounds = [lockstep_groups(settings)]
    else:
        rounds = [[np.array([i])] for i in range(settings.games)]
    info = opponents.MatchInfo(rules=rules, settings=settings, base_key=games.base)
    started: list[Opponent] = []
    try:
        for side in (side_a, side_b):
            started.append(side)
            side.start_match(info)
        for groups in rounds:
            games.play_round(groups)
    finally:
        for side in reversed(started):
            side.end_match()
    return [games.finished[i] for i in range(settings.games)]


class _Games:
    """The games of one :func:`play_games` call: their records, and the loop over plies."""

    def __init__(self, side_a, side_b, settings, rules, scorer, log, root_comment, resign_points):
        self.side_a, self.side_b, self.settings, self.rules = side_a, side_b, settings, rules
        self.scorer, self.log, self.resign_points = scorer, log, resign_points
        self.root_comment = root_comment or default_root_comment(settings)
        games = settings.games
        self.threshold, self.resign_after = settings.resign_rule(rules)
        self.a_black = settings.side_a_black()
        self.base = jax.random.PRNGKey(settings.seed)
        self.advance = advance_fn(rules)
        self.start_length = settings.start_length()
        starts = np.asarray(settings.start_moves or np.zeros((games, 0)), np.int32)
        self.starts = starts.reshape(games, self.start_length)
        if self.starts.size and self.starts.max() >= rules.num_actions:
            raise ValueError(
                f"MatchSettings.start_moves holds {self.starts.max()}, not an action of {rules.size}x{rules.size}"
            )
        self.moves = np.full((games, rules.max_moves), -1, np.int32)
        self.comments: list[list[str | None]] = [[] for _ in range(games)]
        self.estimates = np.full(games, np.nan)
        # Where the resign rule first fired: ply, the scorer's and the player's own estimate.
        self.resign_ply = np.full(games, -1)
        self.resign_est = np.full((games, 2), np.nan)
        self.done = np.zeros(games, bool)
        self.finished: dict[int, results.GameResult] = {}

    def sides(self, i: int) -> tuple[Opponent, Opponent]:
        """(Black, White) of game i."""
        return (self.side_a, self.side_b) if self.a_black[i] else (self.side_b, self.side_a)

    def play_round(self, groups: list[np.ndarray]):
        """Plays the games of ``groups`` to their end, every group one ply at a time."""
        komis, handicaps = self.settings.komis(), self.settings.handicaps()
        for i in (int(i) for idx in groups for i in idx):
            h = handicaps[i]
            stones = tuple(go.handicap_points(self.rules, h)) if h >= 2 else ()
            for side, colour in zip(self.sides(i), (1, -1)):
                side.start_game(
                    opponents.GameSetup(game=i, komi=komis[i], handicap=h, colour=colour, handicap_stones=stones)
                )
        states = [initial_states(self.rules, self.settings, idx) for idx in groups]
        # The colour to move at ply 0 of each group.
        first = [-1 if handicaps[idx[0]] >= 2 else 1 for idx in groups]
        for ply in range(self.rules.max_moves):
            any_active = False
            for g, idx in enumerate(groups):
                active = ~np.asarray(states[g].terminated)
                if not active.any():
                    continue
                any_active = True
                colour = first[g] if ply % 2 == 0 else -first[g]
                states[g] = self.play_ply(states[g], idx, active, ply, colour)
                self.report_finished(states[g], idx)
            if not any_active:
                break

    def play_ply(self, st: go.GoState, idx: np.ndarray, active: np.ndarray, ply: int, colour: int) -> go.GoState:
        """One move in every game of a group (or a resignation); the new states."""
        rules, settings = self.rules, self.settings
        game_ids = jnp.asarray(idx, jnp.int32)
        if ply < self.start_length or ply < settings.opening_moves:
            if ply < self.start_length:
                # The given start position, move by move (never a resignation).
                action = self.starts[idx, ply]
                legal = np.asarray(jax.device_get(st.legal))[np.arange(len(idx)), action]
                if (active & ~legal).any():
                    j = int(np.flatnonzero(active & ~legal)[0])
                    raise ValueError(
                        f"game {idx[j]}: start move {ply + 1} ({go.to_gtp(rules, int(action[j]))}) is illegal"
                    )
                new = self.advance(st, jnp.asarray(action), jnp.zeros(len(idx), bool))
                comment = "start position move"
            else:
                keys = match.opening_keys(self.base, game_ids, ply, paired=settings.colours == "alternate")
                new, action = match.random_move_fn(rules)(st, keys)
                action = np.asarray(jax.device_get(action))
                comment = "random opening move"
            self.moves[idx[active], ply] = action[active]
            for i in idx[active]:
                self.comments[i].append(comment)
            for side in (self.side_a, self.side_b):
                side.play(idx[active], colour, action[active])
            return new

        # A moves when its colour is to move.
        a_moves = (colour == 1) == bool(self.a_black[idx[0]])
        mover, other = (self.side_a, self.side_b) if a_moves else (self.side_b, self.side_a)
        turn = opponents.Turn(games=idx, ply=ply, colour=colour, states=st, history=self.moves[idx], active=active)
        choice = mover.choose(turn)
        actions = np.asarray(choice.actions, np.int32).reshape(len(idx))
        best = None if choice.best_value is None else np.asarray(choice.best_value, np.float32)
        own = None if choice.score_estimate is None else np.asarray(choice.score_estimate)
        resigned = np.zeros(len(idx), bool)
        if best is not None:
            # In play-out mode nobody resigns by the rule; it is only checked (fires).
            cut = np.float32(-1.0 if settings.play_out else self.threshold)
            resigned |= active & np.asarray(
                search.should_resign(best, ply, threshold=cut, resign_after=self.resign_after)
            )
        if choice.resigns is not None:
            resigned |= active & np.asarray(choice.resigns, bool)
        moved = active & ~resigned
        self.check_legal(st, idx, moved, actions, ply)
        new = self.advance(st, jnp.asarray(actions), jnp.asarray(resigned))

        fires = resigned.copy()
        if settings.play_out and best is not None:
            rule = search.should_resign(best, ply, threshold=np.float32(self.threshold), resign_after=self.resign_after)
            fires |= active & np.asarray(rule, bool) & (self.resign_ply[idx] < 0)
        if fires.any():
            self.estimate(st, idx, np.flatnonzero(fires), ply, colour, mover, other, own)

        rows = idx[moved]
        self.moves[rows, ply] = actions[moved]
        for j in np.flatnonzero(moved):
            self.comments[idx[j]].append(choice.comments[j] if choice.comments is not None else None)
        if moved.any():
            other.play(rows, colour, actions[moved])
        return new

    def check_legal(self, st: go.GoState, idx: np.ndarray, moved: np.ndarray, actions: np.ndarray, ply: int):
        """Raises ValueError if a move of a game in ``moved`` is not legal (go.play's message)."""
        rules = self.rules
        legal = np.asarray(jax.device_get(st.legal))
        ok = (actions >= 0) & (actions <= rules.pass_action)
        ok &= legal[np.arange(len(idx)), np.clip(actions, 0, rules.pass_action)]
        bad = np.flatnonzero(moved & ~ok)
        if not len(bad):
            return
        j = int(bad[0])
        game = jax.tree_util.tree_map(lambda x: x[j], st)
        try:
            go.play(rules, game, int(actions[j]))
        except ValueError as e:
            raise ValueError(f"game {idx[j]}, move {ply + 1}: {e}") from e
        raise ValueError(f"game {idx[j]}, move {ply + 1}: illegal move {int(actions[j])}")

    def estimate(self, st, idx, local, ply, colour, mover: Opponent, other: Opponent, own):
        """Score estimates of games ``idx[local]``, where the mover resigned or the resign rule fired."""
        settings, rules = self.settings, self.rules
        game_ids = jnp.asarray(idx, jnp.int32)
        own = None if own is None else own[local] * colour
        if settings.score_visits is None:
            if own is not None:
                est = own
            elif other.player is not None:
                keys = match.game_keys(self.base, game_ids, jnp.int32(2 * ply))
                est = _search_estimates(other.player, rules, st, keys)[local] * colour
            else:
                est = np.full(len(local), np.nan)
        else:
            who = self.scorer or mover.player or other.player
            if who is None:
                est = np.full(len(local), np.nan)
            else:
                keys = match.score_keys(self.base, game_ids, ply)
                est = match.score_estimates(who, rules, st, local, keys, settings.score_visits, len(idx))
        rows = idx[local]
        fresh = self.resign_ply[rows] < 0
        self.resign_ply[rows[fresh]] = ply
        own_est = np.full(len(local), np.nan) if own is None else own
        self.resign_est[rows[fresh]] = np.stack([np.asarray(est, float), own_est], axis=1)[fresh]
        self.estimates[rows] = est

    def report_finished(self, group: go.GoState, idx: np.ndarray):
        """Writes the rows (and SGFs) of the group's games that have just ended."""
        settings, rules = self.settings, self.rules
        terminated, winner, passes = jax.device_get((group.terminated, group.winner, group.passes))
        fresh = np.flatnonzero(np.asarray(terminated) & ~self.done[idx])
        if not len(fresh):
            return
        margins = np.asarray(jax.device_get(match.margin_fn(rules)(group)))
        record_points = self.resign_points or settings.play_out
        rows = []
        for j in fresh:
            i = int(idx[j])
            black, white = self.sides(i)
            resign_winner = int(winner[j])
            counts = [side.end_game(i, resign_winner != 0) for side in (black, white)]
            played = self.moves[i][self.moves[i] >= 0]
            fired = record_points and self.resign_ply[i] >= 0
            result = match.record_game(
                game=i,
                settings=settings,
                rules=rules,
                black=black.name,
                white=white.name,
                black_player=black.player,
                white_player=white.player,
                moves=played,
                comments=self.comments[i],
                passes=int(passes[j]),
                count_margin=float(margins[j]),
                resign_winner=resign_winner,
                estimate=float(self.estimates[i]) if resign_winner else None,
                resign_ply=int(self.resign_ply[i]) if fired else None,
                resign_estimate=float(self.resign_est[i, 0]) if fired else None,
                resign_own_estimate=float(self.resign_est[i, 1]) if fired else None,
                root_comment=self.root_comment(i, black, white),
                engine_score="; ".join(c.score for c in counts if c.score),
                engine_dead="; ".join(c.dead for c in counts if c.dead),
            )
            self.finished[i] = result
            self.done[i] = True
            rows.append(result)
            if self.log is not None:
                self.log(results.game_line(result))
        if settings.results_path is not None:
            results.append_results(settings.results_path, rows)
