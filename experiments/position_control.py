"""Position control against GNU Go: win rate, margin and naturalness per method ([PosCtl] §5, §7).

    python experiments/position_control.py --outdir=experiments/results/go7_position_control
    python experiments/position_control.py --net=zoo:go7-S1 --level=10 --games=16 --visits=128 \\
        --methods=none,naive,A,B,C:1,C:2.5,endgame:2,endgame:5 --outdir=/tmp/position_control
    python experiments/position_control.py --outdir=/tmp/position_control --summarize_only

Paper: Shi, Fan, Li, Hsueh and Ikeda, "Position control and production of
various strategies for game of Go using deep learning methods" (JISE 37(3),
2021) [PosCtl] (docs/design.md §8). A strong zero-style engine should let a
weaker opponent win about half its games, with small margins and natural
moves. The paper's Leela (16,000 simulations per move, 13×13) against Ray:
normal Leela won every game; with position control Ray won 37% (Leela_A15)
and 48% (Leela_ABC25, c = 2.5, α = 0.25) of 500 games; human reviewers
counted 2.29 unnatural moves per game for Leela_naive, 1.27 and 1.22 for
A15 and ABC25 (Table 1); the mean Euclidean distance from Leela's moves to
Ray's last move was 2.33 ± 0.06 for ABC25 against 3.16 ± 0.10 for A15
(§5.2). KataGo+ (Algorithm 1, γ = 5) won 37% against Ray from 100 endgame
starts, with 8.5% of its moves below prior 0.05 (Table 7).

Here the strong engine is the zoo's strongest 7×7 net (``zoo:go7-S1``) and
the weaker player GNU Go 3.8 at ``--level`` (10 by default, which the
uncontrolled net beats clearly at these settings), never resigning: every
game is played out and counted Tromp–Taylor, colours alternating (the net is
Black in even-numbered games). Each condition of ``--methods`` is a method of
:mod:`saijax.control` and its parameter:

* ``none``: the net's own move (its default Gumbel search);
* ``naive``: Method A's candidates, the win rate nearest ½ (Leela_naive);
* ``A``: the same with ``target_winrate`` (0.5 here, so A = naive unless
  ``--target_winrate`` moves it);
* ``B[:c]``, ``C[:c]``: Ikeda and Viennot's procedure with Method B's
  distance weights (and for C Method C's naturalness term, α = 0.25), the
  gentleness c after the colon (default 2.5; C:2.5 is Leela_ABC25);
* ``endgame[:γ]``: Algorithm 1 with SAI's score lead α + k, γ after the colon
  (default 5), applied from the first move (the paper starts it from chosen
  endgame positions; a 7×7 game is short, all middle game and endgame).

**From 13×13 and 16,000 simulations to 7×7.** The paper's Leela searched
16,000 simulations over 13×13's 170 actions, about 94 per action, and
Method A kept moves with at least 100 visits, about one uniform share.
saijax keeps the share, not the count: a candidate needs
``min_visit_share · S / (N² + 1)`` visits (1.0625 shares, exactly 100 in the
paper's setting), so with ``--visits=128`` on 7×7 (50 actions) it is ⌈2.7⌉ =
3 visits. The visit budget itself is not scaled up: 128 simulations (4 times
the go7 run's self-play search) on 50 actions is 2.6 per action, a thirty-
sixth of the paper's density; the exploration constant stays 10 (§4.1), so
PUCT still spreads visits widely enough for the candidates' win rates, but
those win rates are noisier than Leela's. Distances shrink with the board:
on 7×7 two random points are on average 3.3 apart (5.9 on 13×13), so the
paper's numbers are compared by their order (controlled B/C nearer the
opponent's last move than the uncontrolled net or Method A), not their
values. The paper's "2nd–60th moves" window is a whole 7×7 game (about 45
moves), so every move is counted. Komi is 9.5 (fair komi 9 plus the half
point that rules out draws); ``--black_komi``/``--white_komi`` set it per
colour of the net. Human reviewers are replaced by the automated count of
Table 7: moves whose prior under the uncontrolled net is below 0.05.

Outputs in ``--outdir``:

* ``conditions/<label>.csv``: one row per game of a condition (colour, komi,
  winner, the net's margin, its moves, unnatural moves, its mean distance to
  GNU Go's last move, GNU Go's to the net's, the SGF path); a condition
  whose file exists is skipped, so a killed run resumes and shards with
  disjoint ``--methods`` can share an outdir;
* ``games.csv``: all conditions' game rows together;
* ``summary.csv``: per condition: games, wins, win rate with its 95% Wilson
  interval, mean and standard deviation of the net's margin, mean |margin|,
  unnatural moves per game and the mean distance (each with a 95% normal
  interval over games), and two tests from ``scipy.stats`` against the
  uncontrolled condition: Fisher's exact test that the condition wins less
  often (one-sided), and whether its win rate is closer to ½ (a one-sided
  test on |rate − ½|, by a normal approximation to the difference of the
  two distances from ½), with the exact binomial test of the rate against ½;
* ``position_control.png``: win rate, margin, unnatural moves and distance
  per condition.

``--summarize_only`` rebuilds ``games.csv``, the summary and the PNG from the
condition files.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time

import numpy as np

from experiments import common
from saijax import control, gtp_match, match, player_cli, players, results, sgf, stats

METHODS = "none,naive,A,B,C:1,C:2.5,endgame:2,endgame:5"
GAME_COLUMNS = tuple(
    "condition method param game net_colour komi winner net_result net_margin moves net_moves "
    "unnatural mean_distance distance_moves gnugo_mean_distance gnugo_distance_moves sgf".split()
)
SUMMARY_COLUMNS = tuple(
    "condition method param games wins draws win_rate wilson_lo wilson_hi mean_margin sd_margin "
    "mean_abs_margin unnatural_per_game unnatural_ci distance distance_ci gnugo_distance "
    "p_fewer_wins p_closer_to_half p_rate_is_half".split()
)


@dataclasses.dataclass(frozen=True)
class Condition:
    """One row of the table: a method and its parameter."""

    label: str  # e.g. "C:2.5"
    method: str  # "none" or one of control.METHODS
    param: float | None  # gentleness c (B, C) or γ (endgame)
    config: control.ControlConfig | None


def parse_conditions(text: str, *, target_winrate: float = 0.5) -> list[Condition]:
    """``"none,naive,A,B,C:1,C:2.5,endgame:2"`` as conditions (module docstring)."""
    out = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, _, param = item.partition(":")
        if name.lower() == "none":
            if param:
                raise ValueError(f"condition {item!r}: 'none' takes no parameter")
            out.append(Condition("none", "none", None, None))
            continue
        method = control.parse_method(name)
        if method is None:
            raise ValueError(f"condition {item!r}: use 'none' for the uncontrolled net")
        value = float(param) if param else None
        if method in ("B", "C"):
            config = control.ControlConfig(method=method, gentleness=2.5 if value is None else value)
            value = config.gentleness
        elif method == "endgame":
            config = control.ControlConfig(method=method, gamma=5.0 if value is None else value)
            value = config.gamma
        elif value is not None:
            raise ValueError(f"condition {item!r}: {method} takes no parameter")
        else:
            config = control.ControlConfig(method=method, target_winrate=0.5 if method == "naive" else target_winrate)
        label = method if value is None else f"{method}:{value:g}"
        out.append(Condition(label, method, value, config))
    labels = [c.label for c in out]
    if len(set(labels)) != len(labels):
        raise ValueError(f"a condition is listed twice: {labels}")
    return out


def controlled_player(base: players.Player, condition: Condition) -> players.Player:
    """The net with the condition's method and the search it wants.

    The endgame method reads its top 20 moves' score leads, so its Gumbel
    search considers 20 moves (module docstring of :mod:`saijax.control`).
    """
    name = f"{base.name}[{condition.label}]" if condition.config is not None else base.name
    if condition.config is None:
        return base.replace(name=name)
    config = base.config
    if condition.method == "endgame":
        actions = base.board_size**2 + 1
        width = min(condition.config.top_moves, actions)
        config = dataclasses.replace(config, max_num_considered_actions=max(config.max_num_considered_actions, width))
    return base.replace(name=name, control=condition.config, config=condition.config.search_config(config))


# --------------------------------------------------------------------------
# Measuring one game.


def game_row(condition: Condition, player: players.Player, base: players.Player, game: results.GameResult) -> dict:
    """The per-game measures: outcome from the net's side and naturalness (§5.2, Table 7)."""
    record = sgf.read_sgf(game.sgf)
    colour = 1 if game.black == player.name else -1
    moves = list(record.moves)
    colours = np.asarray(record.colours)
    mine = colours == colour
    states = sgf.replay(record)[:-1]
    priors = control.move_priors(base.evaluator, base.variables, states, moves) if moves else np.zeros(0)
    net = control.naturalness(moves, mine, priors, board_size=record.size)
    gnugo = control.naturalness(moves, ~mine, board_size=record.size)
    margin = float(game.margin) * colour if game.margin is not None else math.nan
    result = 0.5 if game.winner == "draw" else float(game.winner == ("black" if colour == 1 else "white"))
    return {
        "condition": condition.label,
        "method": condition.method,
        "param": "" if condition.param is None else condition.param,
        "game": game.game,
        "net_colour": "black" if colour == 1 else "white",
        "komi": game.komi,
        "winner": game.winner,
        "net_result": result,
        "net_margin": margin,
        "moves": game.moves,
        "net_moves": net.moves,
        "unnatural": net.unnatural,
        "mean_distance": round(net.mean_distance, 4),
        "distance_moves": net.distance_moves,
        "gnugo_mean_distance": round(gnugo.mean_distance, 4),
        "gnugo_distance_moves": gnugo.distance_moves,
        "sgf": game.sgf,
    }


def play_condition(condition: Condition, base: players.Player, args) -> list[dict]:
    """Plays one condition's games against GNU Go and measures them."""
    player = controlled_player(base, condition)
    settings = match.MatchSettings(games=args.games, seed=args.seed, score_visits=None)
    a_black = settings.side_a_black()
    settings = dataclasses.replace(
        settings,
        komi=tuple(args.black_komi if b else args.white_komi for b in a_black),
        sgf_dir=os.path.join(args.outdir, "sgf", condition.label.replace(":", "_")),
    )
    argv = player_cli.engine_argv(f"gnugo:{args.level}", never_resign=True)
    games = gtp_match.play_gtp_match(player, argv, settings, engine_name=f"gnugo-l{args.level}", timeout=args.timeout)
    return [game_row(condition, player, base, g) for g in games]


# --------------------------------------------------------------------------
# Summaries.


def summarize(rows: list[dict], order: list[str]) -> list[dict]:
    """One summary row per condition (module docstring), tests against ``none`` if it was played."""
    by = {}
    for r in rows:
        by.setdefault(r["condition"], []).append(r)
    base = by.get("none")
    out = []
    for label in order:
        games = by.get(label)
        if not games:
            continue
        n = len(games)
        res = np.array([float(g["net_result"]) for g in games])
        wins, draws = int(np.sum(res == 1)), int(np.sum(res == 0.5))
        rate = float(np.mean(res))
        lo, hi = results.wilson_interval(wins + 0.5 * draws, n)
        margins = np.array([float(g["net_margin"]) for g in games])
        unnatural, unnatural_ci = stats.mean_interval(g["unnatural"] for g in games)
        distance, distance_ci = stats.mean_interval(g["mean_distance"] for g in games)
        gnugo_distance, _ = stats.mean_interval(g["gnugo_mean_distance"] for g in games)
        p_fewer = p_closer = math.nan
        if base is not None and label != "none":
            b = np.array([float(g["net_result"]) for g in base])
            p_fewer = stats.fisher_win_test(wins, n, int(np.sum(b == 1)), len(b), alternative="less")
            p_closer = stats.closer_to_half_test(rate, n, float(np.mean(b)), len(b))
        p_half = stats.binomial_test(wins, n, 0.5)
        method, param = games[0]["method"], games[0]["param"]
        out.append(
            {
                "condition": label,
                "method": method,
                "param": param,
                "games": n,
                "wins": wins,
                "draws": draws,
                "win_rate": round(rate, 4),
                "wilson_lo": round(lo, 4),
                "wilson_hi": round(hi, 4),
                "mean_margin": round(float(np.nanmean(margins)), 2),
                "sd_margin": round(float(np.nanstd(margins, ddof=1)), 2) if n > 1 else "",
                "mean_abs_margin": round(float(np.nanmean(np.abs(margins))), 2),
                "unnatural_per_game": round(unnatural, 3),
                "unnatural_ci": round(unnatural_ci, 3),
                "distance": round(distance, 3),
                "distance_ci": round(distance_ci, 3),
                "gnugo_distance": round(gnugo_distance, 3),
                "p_fewer_wins": "" if math.isnan(p_fewer) else round(p_fewer, 4),
                "p_closer_to_half": "" if math.isnan(p_closer) else round(p_closer, 4),
                "p_rate_is_half": round(p_half, 4),
            }
        )
    return out


def format_summary(summary: list[dict]) -> str:
    lines = [
        f"{'condition':>11s} {'games':>5s} {'win rate [95% Wilson]':>24s} {'margin':>13s} "
        f"{'unnatural/game':>15s} {'distance':>14s} {'p(fewer)':>8s} {'p(closer)':>9s}"
    ]
    for s in summary:
        lines.append(
            f"{s['condition']:>11s} {s['games']:>5d} "
            f"{100 * s['win_rate']:>7.0f}% [{100 * s['wilson_lo']:3.0f}%, {100 * s['wilson_hi']:3.0f}%]   "
            f"{s['mean_margin']:+6.1f} ± {s['sd_margin'] if s['sd_margin'] != '' else float('nan'):4.1f} "
            f"{s['unnatural_per_game']:8.2f} ± {s['unnatural_ci']:4.2f} "
            f"{s['distance']:7.2f} ± {s['distance_ci']:4.2f} "
            f"{str(s['p_fewer_wins']):>8s} {str(s['p_closer_to_half']):>9s}"
        )
    return "\n".join(lines)


def plot(summary: list[dict], path: str, title: str) -> None:
    plt = common.pyplot()
    labels = [s["condition"] for s in summary]
    x = np.arange(len(labels))
    fig, axes = plt.subplots(1, 4, figsize=(max(12, 1.4 * len(labels) * 2), 3.8))

    def f(key):
        return np.array([float(s[key]) if s[key] != "" else np.nan for s in summary])

    ax = axes[0]
    y = f("win_rate")
    ax.errorbar(x, y, yerr=[y - f("wilson_lo"), f("wilson_hi") - y], fmt="o", capsize=3)
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("net's win rate (95% Wilson)")
    ax = axes[1]
    ax.errorbar(x, f("mean_margin"), yerr=f("sd_margin"), fmt="s", capsize=3)
    ax.axhline(0, color="grey", ls=":", lw=0.8)
    ax.set_title("net's final margin (mean ± sd)")
    ax = axes[2]
    ax.bar(x, f("unnatural_per_game"), yerr=f("unnatural_ci"), capsize=3, color="tab:orange")
    ax.set_title("moves with prior < 0.05 per game")
    ax = axes[3]
    ax.errorbar(x, f("distance"), yerr=f("distance_ci"), fmt="o", capsize=3, label="net to GNU Go's last move")
    ax.plot(x, f("gnugo_distance"), "x", color="grey", label="GNU Go to the net's last move")
    ax.set_title("mean distance to the last move")
    ax.legend(fontsize=7)
    for ax in axes:
        ax.set_xticks(x, labels, rotation=45, ha="right")
    fig.suptitle(title)
    fig.tight_layout()
    common.save_figure(fig, path)


def write_outputs(args, order: list[str]) -> list[dict]:
    """games.csv, summary.csv and the PNG from the condition files in ``--outdir``."""
    directory = os.path.join(args.outdir, "conditions")
    rows = []
    found = []
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if name.endswith(".csv"):
            part = common.read_csv(os.path.join(directory, name))
            rows.extend(part)
            if part:
                found.append(part[0]["condition"])
    order = [c for c in order if c in found] + [c for c in found if c not in order]
    if not rows:
        raise ValueError(f"no condition files in {directory}")
    common.write_csv(os.path.join(args.outdir, "games.csv"), rows, GAME_COLUMNS)
    summary = summarize(rows, order)
    common.write_csv(os.path.join(args.outdir, "summary.csv"), summary, SUMMARY_COLUMNS)
    plot(
        summary,
        os.path.join(args.outdir, "position_control.png"),
        f"{args.net} vs GNU Go level {args.level} (never resigns), {args.visits} visits, colours alternating",
    )
    return summary


def run(args) -> list[dict]:
    conditions = parse_conditions(args.methods, target_winrate=args.target_winrate)
    order = [c.label for c in conditions]
    if not args.summarize_only:
        os.makedirs(os.path.join(args.outdir, "conditions"), exist_ok=True)
        options = common.player_options(args)
        (base,) = common.load_nets([(None, args.net)], board_size=args.board_size, options=options, seed=args.seed)
        for condition in conditions:
            path = os.path.join(args.outdir, "conditions", condition.label.replace(":", "_") + ".csv")
            if os.path.exists(path) and not args.overwrite:
                print(f"{condition.label:>11s}: already played ({path})", flush=True)
                continue
            t0 = time.time()
            rows = play_condition(condition, base, args)
            common.write_csv(path, rows, GAME_COLUMNS)
            s = summarize(rows, [condition.label])[0]
            print(
                f"{condition.label:>11s}: {s['wins']}/{s['games']} wins, {100 * s['win_rate']:.0f}% "
                f"[{100 * s['wilson_lo']:.0f}%, {100 * s['wilson_hi']:.0f}%], margin {s['mean_margin']:+.1f} "
                f"(sd {s['sd_margin']}), unnatural {s['unnatural_per_game']:.2f}/game, "
                f"distance {s['distance']:.2f} ({time.time() - t0:.0f}s)",
                flush=True,
            )
    summary = write_outputs(args, order)
    print(format_summary(summary))
    return summary


def parse_args(argv=None) -> argparse.Namespace:
    p = common.make_parser(__file__, __doc__, games=16, games_help="games per condition, colours alternating",
                           visits=128)  # fmt: skip
    p.add_argument("--net", default="zoo:go7-S1", help="the strong net: a checkpoint or zoo:<name>")
    p.add_argument("--level", type=int, default=10, help="GNU Go's level (it never resigns)")
    p.add_argument("--methods", default=METHODS, help="comma list: none, naive, A, B[:c], C[:c], endgame[:gamma]")
    p.add_argument("--target_winrate", type=float, default=0.5, help="Method A's target")
    p.add_argument("--black_komi", type=float, default=9.5, help="komi when the net is Black")
    p.add_argument("--white_komi", type=float, default=9.5, help="komi when the net is White")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per GTP command")
    p.add_argument("--overwrite", action="store_true", help="replay conditions already in --outdir")
    p.add_argument("--summarize_only", action="store_true", help="only rebuild the tables and the PNG")
    return p.parse_args(argv)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    # A condition already written stays: rerunning the same command resumes after it.
    return common.run_script(__file__, parse_args, run, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
