"""Matches between a player and a GTP engine, GNU Go in particular (docs/design.md §8).

:func:`play_gtp_match` plays a :class:`saijax.players.Player` against any
GTP engine over pipes (:class:`saijax.gtp_client.GtpClient`), one game at a
time, with the same :class:`saijax.match.MatchSettings` and conventions (:mod:`saijax.match`) as
the lockstep net-vs-net matches of :mod:`saijax.arena` (colours, per-game
komi and handicap, the shared resign rule, score estimates at resignation,
the results table of :mod:`saijax.results`, given start positions).

GNU Go plays under Tromp–Taylor-compatible settings
(:func:`gnugo_arena_argv`): Chinese rules, positional superko, and
``--capture-all-dead``. Strength is measured with GNU Go **not allowed to
resign** (``--never-resign``, the default here): every game is played out
to two passes and counted by saijax, so a match does not look better than
it is because GNU Go gave up a game it could still have won.

A player with position control (``player.control``, :mod:`saijax.control`)
picks its move from its search's output with :func:`saijax.control.select`,
given the engine's last move(s), and a player with the mixed style
(``player.mixed``, :mod:`saijax.styles`) also searches with its biased net,
as in the lockstep arena (:func:`saijax.match.choose_moves`); its search is
the player's own (give it ``control.search_config(config)``, e.g. Method A's
PUCT with c_puct 10).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from saijax import go, gtp_client, match, players, results, search

__all__ = ["gnugo_arena_argv", "default_engine_name", "play_gtp_match"]


def gnugo_arena_argv(level: int = 10, *, never_resign: bool = True, extra: Sequence[str] = ()) -> list[str]:
    """GNU Go's command line for arena games under Tromp–Taylor scoring.

    :func:`saijax.gtp_client.gnugo_argv` (Chinese rules, positional superko,
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


def _random_rated_move(rules: go.GoRules, rated: list[str], rng: np.random.Generator) -> int | None:
    """A uniform draw among the moves of a ``top_moves`` answer ("D4 45.00 E3 23.9 ...")
    rated at least half as valuable as the best one; None if it rates none."""
    pairs = [(go.from_gtp(rules, rated[k]), float(rated[k + 1])) for k in range(0, len(rated) - 1, 2)]
    if not pairs:
        return None
    best = max(v for _, v in pairs)
    candidates = sorted(a for a, v in pairs if (v >= 0.5 * best if best > 0 else v == best))
    return int(candidates[rng.integers(len(candidates))])


def play_gtp_match(
    player: players.Player,
    engine_argv: Sequence[str],
    settings: match.MatchSettings,
    *,
    engine_name: str | None = None,
    scorer: players.Player | None = None,
    timeout: float | None = 120.0,
    engine_stderr: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> list[results.GameResult]:
    """Plays a player against a GTP engine (e.g. GNU Go), one game at a time.

    One engine process serves the whole match. Each game sends ``boardsize``,
    ``clear_board``, ``komi``, ``set_random_seed`` (if the engine has it, so
    games differ and reruns repeat), and for a handicap of 2+
    ``fixed_handicap``, whose stones must match saijax's placement. Then
    ``genmove``/``play`` alternate. The engine may answer ``pass`` or
    ``resign``. A counted game (two passes or the move cap) is scored
    Tromp–Taylor by saijax, and the engine's ``final_score`` is stored next
    to it in ``engine_score`` so that disagreements are visible, with the
    stones the engine calls dead in ``engine_dead``. In handicap games GNU
    Go's Chinese count gives White one point per handicap stone, which
    Tromp–Taylor does not, so there its score is H points more for White.

    Args:
      player: the saijax side ("side A": Black in even games).
      engine_argv: the engine's command line, e.g. ``gnugo_arena_argv(10)``.
      settings: the match settings. Only the player resigns by threshold; a
        resignation by either side is scored by ``scorer``'s estimate.
      engine_name: the engine's name in the table (default e.g. "gnugo-l10").
      scorer: the player whose search estimates resigned games' scores
        (default ``player``).
      timeout: seconds per GTP command.
      engine_stderr: file to append the engine's stderr to.
      log: called with a line of text as each game ends.

    Returns:
      The games' :class:`saijax.results.GameResult` rows, in order.

    Raises:
      GtpError: the engine failed or rejected a command.
      ValueError: the engine played a move that is illegal under saijax's
        rules, or placed different handicap stones.
    """
    rules = settings.rules(player.board_size)
    threshold, resign_after = settings.resign_rule(rules)
    name = engine_name or default_engine_name(engine_argv)
    if name == player.name:
        raise ValueError(f"the player and the engine are both named {name!r}")
    if player.control is not None:
        player.control.check_search(player.config, player.name)
    scorer = scorer or player
    komis, handicaps, a_black = settings.komis(), settings.handicaps(), settings.side_a_black()
    base = jax.random.PRNGKey(settings.seed)
    search_fn = match.search_fn(player.evaluator, rules, player.config)
    agent = player.agent.params()
    rows: list[results.GameResult] = []

    def estimate_at(batched, game_id, ply, move_estimate) -> float:
        """Black-minus-White score estimate of a one-game batch at a resignation."""
        if settings.score_visits is None:
            return float(move_estimate) * float(batched.to_play[0])
        keys = match.score_keys(base, game_id, ply)
        est = match.score_estimates(scorer, rules, batched, np.array([0]), keys, settings.score_visits, 1)
        return float(est[0])

    with gtp_client.GtpClient(engine_argv, timeout=timeout, stderr=engine_stderr) as engine:
        has_seed = engine.known_command("set_random_seed")
        has_score = engine.known_command("final_score")
        has_status = engine.known_command("final_status_list")
        has_top = {c: engine.known_command(f"top_moves_{c}") for c in ("black", "white")}
        if settings.engine_opening_moves and not all(has_top.values()):
            raise ValueError(
                f"engine_opening_moves={settings.engine_opening_moves}: the engine {name!r} has no "
                "top_moves_black/top_moves_white command to rate its moves"
            )
        for i in range(settings.games):
            net_colour = 1 if a_black[i] else -1
            black, white = (player.name, name) if net_colour == 1 else (name, player.name)
            handicap = handicaps[i]
            engine.send(f"boardsize {rules.size}")
            engine.send("clear_board")
            engine.send(f"komi {komis[i]:g}")
            if has_seed:
                engine.send(f"set_random_seed {(int(settings.seed) * 1_000_003 + i) % (2**31 - 1) + 1}")
            if handicap >= 2:
                reply = engine.send(f"fixed_handicap {handicap}")
                placed = sorted(go.from_gtp(rules, v) for v in reply.split())
                expected = sorted(go.handicap_points(rules, handicap))
                if placed != expected:
                    raise ValueError(
                        f"engine placed handicap stones {reply!r}, saijax expects "
                        f"{' '.join(go.to_gtp(rules, p) for p in expected)}"
                    )
            state = go.init(rules, jnp.float32(komis[i]), handicap)
            game_id = jnp.asarray([i], jnp.int32)
            moves: list[int] = []
            comments: list[str | None] = []
            resign_winner, estimate = 0, None
            engine_moves = 0
            while not bool(state.terminated):
                ply = int(state.move_count)
                colour = int(state.to_play)
                colour_name = "black" if colour == 1 else "white"
                batched = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
                if ply < settings.start_length():
                    # The given start position, move by move.
                    action = settings.start_moves[i][ply]
                    engine.send(f"play {colour_name} {go.to_gtp(rules, action)}")
                    moves.append(action)
                    comments.append("start position move")
                elif ply < settings.opening_moves:
                    # A random opening move, the same for both games of a colour pair.
                    _, action = match.random_move_fn(rules)(
                        batched, match.opening_keys(base, game_id, ply, paired=settings.colours == "alternate")
                    )
                    action = int(action[0])
                    engine.send(f"play {colour_name} {go.to_gtp(rules, action)}")
                    moves.append(action)
                    comments.append("random opening move")
                elif colour == net_colour:
                    keys = match.game_keys(base, game_id, jnp.int32(2 * ply))
                    # The search's move, or position control's, or the mixed style's.
                    history = np.asarray([moves], np.int32).reshape(1, len(moves))
                    out, action = match.choose_moves(player, rules, batched, keys, history, len(moves))
                    action, alpha, beta, child_q, visits, best, est = jax.device_get(
                        (
                            action[0],
                            out.root_alpha[0],
                            out.root_beta[0],
                            out.child_q[0],
                            out.visit_counts[0],
                            out.best_value[0],
                            out.score_estimate[0],
                        )
                    )
                    if search.should_resign(best, ply, threshold=threshold, resign_after=resign_after):
                        resign_winner = -colour
                        estimate = estimate_at(batched, game_id, ply, est)
                        break
                    action = int(action)
                    engine.send(f"play {colour_name} {go.to_gtp(rules, action)}")
                    moves.append(action)
                    comments.append(match.move_comment(alpha, beta, child_q[action], visits.sum()))
                elif engine_moves < settings.engine_opening_moves and has_top[colour_name]:
                    # A random opening move of the engine's, among those it rates
                    # at least half as valuable as its best.
                    engine_moves += 1
                    rated = engine.send(f"top_moves_{colour_name}").split()
                    action = _random_rated_move(rules, rated, np.random.default_rng([settings.seed, i, ply]))
                    if action is None:
                        reply = engine.send(f"genmove {colour_name}").strip()
                        if reply.lower() == "resign":
                            raise ValueError(f"game {i}: the engine resigned its opening move {ply + 1}")
                        action = go.from_gtp(rules, reply)
                        comments.append(None)
                    else:
                        engine.send(f"play {colour_name} {go.to_gtp(rules, action)}")
                        comments.append("engine's random opening move")
                    moves.append(action)
                else:
                    engine_moves += int(colour != net_colour)
                    reply = engine.send(f"genmove {colour_name}").strip()
                    if reply.lower() == "resign":
                        resign_winner = -colour
                        est = np.nan
                        if settings.score_visits is None:
                            keys = match.game_keys(base, game_id, jnp.int32(2 * ply))
                            out = search_fn(player.variables, keys, batched, agent)
                            est = float(jax.device_get(out.score_estimate[0]))
                        estimate = estimate_at(batched, game_id, ply, est)
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
            margin = float(jax.device_get(match.margin_fn(rules)(final))[0])
            result = match.record_game(
                game=i,
                settings=settings,
                rules=rules,
                black=black,
                white=white,
                black_player=player if net_colour == 1 else None,
                white_player=None if net_colour == 1 else player,
                moves=moves,
                comments=comments,
                passes=int(state.passes),
                count_margin=margin,
                resign_winner=resign_winner,
                estimate=estimate,
                root_comment=(
                    f"saijax arena game {i} (seed {settings.seed}). {player.describe()}. "
                    f"Engine: {' '.join(shlex.quote(str(a)) for a in engine_argv)}."
                ),
                engine_score=engine_score,
                engine_dead=engine_dead,
            )
            rows.append(result)
            if log is not None:
                log(results.game_line(result))
            if settings.results_path is not None:
                results.append_results(settings.results_path, [result])
    return rows
