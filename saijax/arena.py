"""Lockstep matches between two players, and the arena CLI (docs/design.md §8).

:func:`play_match` plays two :class:`saijax.players.Player` against each
other, all games in lockstep on device. Matches against a GTP engine (GNU Go)
are in :mod:`saijax.gtp_match`; the settings and conventions both kinds of
match share (:class:`saijax.match.MatchSettings`: colours, komi and handicap,
resignation, score estimates, random openings, keys) in :mod:`saijax.match`;
the results table, summaries and intervals in :mod:`saijax.results`.

How a lockstep match runs. The games are split into fixed groups by who has
Black and who moves first (White first in handicap games of 2+ stones).
Every game still running has played the same number of moves (each ply moves
every unfinished game once), so within a group the same side is to move in
every game. A ply is one batched search per group, by the player to move
there, with that player's own λ/μ agent, then one jitted, vmapped
``go.step``. No game is searched by the wrong player, and finished games
stay finished (their step is a no-op). Given start positions
(``MatchSettings.start_moves``) are the first plies of every game, then the
random opening moves, if any are left, then the players' searches.

CLI::

    python -m saijax.arena --player=runs/go7 --opponent=gnugo:10 --games=20 \\
        --board_size=7 --komi=9.5 --visits=64 --results=/tmp/r.csv

``--player`` and ``--opponent`` take a player spec of
:mod:`saijax.player_cli` (``random``, ``uniform``, ``zoo:NAME``, a
checkpoint), the opponent also ``gnugo:LEVEL`` (GNU Go may not resign unless
``--gnugo_may_resign``) or ``gtp:<command line>``. The player flags
(``--visits``, ``--lambda_``, ``--gumbel_scale``, ``--control`` ...) and
their ``--opponent_`` twins are :func:`saijax.player_cli.add_player_flags`'.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from saijax import cli, go, gtp_match, match, player_cli, players, results, search

__all__ = ["play_match", "main"]


# ---------------------------------------------------------------------------
# Net vs net, lockstep.


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
def _init_fn(rules: go.GoRules, handicap: int):
    return jax.jit(jax.vmap(lambda k: go.init(rules, k, handicap)))


def _groups(settings: match.MatchSettings) -> list[np.ndarray]:
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


def _initial_states(rules: go.GoRules, settings: match.MatchSettings, idx: np.ndarray) -> go.GoState:
    """The start positions of games ``idx`` (in that order), batched."""
    komis, handicaps = np.asarray(settings.komis(), np.float32), np.asarray(settings.handicaps())
    parts = []
    for h in sorted(set(handicaps[idx].tolist())):
        rows = idx[handicaps[idx] == h]
        parts.append(_init_fn(rules, int(h))(jnp.asarray(komis[rows])))
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs), *parts)


def play_match(
    side_a: players.Player,
    side_b: players.Player,
    settings: match.MatchSettings,
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
    start_length = settings.start_length()
    starts = np.asarray(settings.start_moves or np.zeros((games, 0)), np.int32).reshape(games, start_length)
    if starts.size and starts.max() >= rules.num_actions:
        raise ValueError(f"MatchSettings.start_moves holds {starts.max()}, not an action of {rules.size}x{rules.size}")

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

    def sides(i):
        """(Black, White) of game i."""
        return (side_a, side_b) if a_black[i] else (side_b, side_a)

    def describe(name):
        return side_a.describe() if name == side_a.name else side_b.describe()

    def report_finished(group, idx):
        """Writes the rows (and SGFs) of the group's games that have just ended."""
        terminated, winner, passes = jax.device_get((group.terminated, group.winner, group.passes))
        fresh = np.flatnonzero(np.asarray(terminated) & ~done_reported[idx])
        if not len(fresh):
            return
        margins = np.asarray(jax.device_get(match.margin_fn(rules)(group)))
        rows = []
        for j in fresh:
            i = int(idx[j])
            black_player, white_player = sides(i)
            black, white = black_player.name, white_player.name
            played = moves[i][moves[i] >= 0]
            resign_winner = int(winner[j])
            result = match.record_game(
                game=i,
                settings=settings,
                rules=rules,
                black=black,
                white=white,
                black_player=black_player,
                white_player=white_player,
                moves=played,
                comments=[
                    match.move_comment(*stats[i, t])
                    if np.isfinite(stats[i, t, 3])
                    else ("start position move" if t < start_length else "random opening move")
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
            if ply < start_length:
                # The given start position, move by move (never a resignation).
                action = starts[idx, ply]
                legal = np.asarray(jax.device_get(st.legal))[np.arange(len(idx)), action]
                if (active & ~legal).any():
                    j = int(np.flatnonzero(active & ~legal)[0])
                    raise ValueError(
                        f"game {idx[j]}: start move {ply + 1} ({go.to_gtp(rules, int(action[j]))}) is illegal"
                    )
                new, _ = advance(
                    st, jnp.asarray(action), jnp.zeros(len(idx), jnp.float32), jnp.float32(-1.0), jnp.int32(0)
                )
                moves[idx[active], ply] = action[active]
                states[g] = new
                report_finished(new, idx)
                continue
            if ply < settings.opening_moves:
                new, action = match.random_move_fn(rules)(
                    st, match.opening_keys(base, game_ids, ply, paired=settings.colours == "alternate")
                )
                action = np.asarray(jax.device_get(action))
                moves[idx[active], ply] = action[active]
                states[g] = new
                report_finished(new, idx)
                continue
            colour = first[g] if ply % 2 == 0 else -first[g]
            # A moves when its colour is to move.
            mover = side_a if (colour == 1) == bool(a_black[idx[0]]) else side_b
            keys = match.game_keys(base, game_ids, jnp.int32(2 * ply))
            out, action = match.choose_moves(mover, rules, st, keys, moves[idx], ply)
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
                    est = match.score_estimates(
                        scorer or mover,
                        rules,
                        st,
                        local,
                        match.score_keys(base, game_ids, ply),
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
    p.add_argument("--player", required=True, help="a player spec: random, uniform, zoo:NAME or a checkpoint")
    p.add_argument(
        "--opponent",
        required=True,
        help="a player spec (random, uniform, zoo:NAME, a checkpoint) or an engine: gnugo:LEVEL or gtp:<command>",
    )
    player_cli.add_player_flags(p)
    player_cli.add_player_flags(p, prefix="opponent_")
    m = p.add_argument_group("match")
    m.add_argument("--games", type=int, default=20)
    m.add_argument("--board_size", type=int, default=9)
    m.add_argument("--komi", type=float, default=None, help="default 7.5 (0.5 with handicap)")
    m.add_argument("--handicap", type=int, default=0)
    m.add_argument(
        "--colours",
        choices=match.COLOURS,
        default="alternate",
        help="the player's colour: alternating (Black in even games), always Black, or always White",
    )
    m.add_argument(
        "--opening_moves",
        type=int,
        default=4,
        help=(
            "random moves (pass excluded) that open each game, the same for both games of a colour pair "
            "(default 4, as gating: deterministic players, gumbel_scale 0, would otherwise repeat the same two games)"
        ),
    )
    m.add_argument("--seed", type=int, default=0, help="match seed (the random net's is this, the opponent's +1)")
    m.add_argument("--max_moves", type=int, default=None, help="move cap (default 2*N^2)")
    m.add_argument("--resign_threshold", type=float, default=None, help="off by default")
    m.add_argument("--resign_after", type=int, default=None, help="default N^2/4")
    m.add_argument("--score_visits", type=int, default=1000, help="0: reuse the move search's tree")
    m.add_argument("--name", default=None)
    m.add_argument("--opponent_name", default=None)
    m.add_argument("--results", default=None, help="results table (.jsonl or .csv), appended")
    m.add_argument("--sgf_dir", default=None)
    m.add_argument("--gtp_timeout", type=float, default=120.0)
    m.add_argument(
        "--gnugo_may_resign",
        action="store_true",
        help="let GNU Go resign (by default it plays every game out: --never-resign)",
    )
    m.add_argument("--quiet", action="store_true", help="no per-game lines")
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

    log = None if args.quiet else (lambda line: print(line, flush=True))
    opp = args.opponent
    try:
        settings = match.MatchSettings(
            games=args.games,
            komi=args.komi,
            handicap=args.handicap,
            colours=args.colours,
            seed=args.seed,
            max_moves=args.max_moves,
            resign_threshold=args.resign_threshold,
            resign_after=args.resign_after,
            score_visits=args.score_visits or None,
            opening_moves=args.opening_moves,
            sgf_dir=args.sgf_dir,
            results_path=args.results,
        )
        settings.rules(args.board_size)
        if player_cli.is_engine(args.player):
            raise ValueError(f"--player={args.player}: an engine can only be the opponent")
        mine = player_cli.options_from_args(args)
        theirs = player_cli.options_from_args(args, "opponent_", fallback=mine)
        me = player_cli.load_player(
            args.player, board_size=args.board_size, options=mine, name=args.name, seed=args.seed
        )
        if theirs.control_config() is not None and (opp == "uniform" or player_cli.is_engine(opp)):
            raise ValueError(f"--opponent_control needs a net opponent, not {opp!r}")
        if player_cli.is_engine(opp):
            engine = player_cli.engine_argv(opp, never_resign=not args.gnugo_may_resign)
        else:
            them = player_cli.load_player(
                opp, board_size=args.board_size, options=theirs, name=args.opponent_name, seed=args.seed + 1
            )
    except (ValueError, OSError) as e:  # a missing or corrupt checkpoint, a bad option
        return fail(e)
    if player_cli.is_engine(opp):
        games = gtp_match.play_gtp_match(
            me,
            engine,
            settings,
            engine_name=args.opponent_name,
            timeout=args.gtp_timeout,
            log=log,
        )
    else:
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
