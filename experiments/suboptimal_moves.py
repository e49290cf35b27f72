"""Fewer point-losing moves when winning (SAI 9×9 paper, §4.4), automated.

    python experiments/suboptimal_moves.py --strong=zoo:go7-S1 --opponent=zoo:go7-W3 \\
        --agents=0:0,1:0 --games=100 --visits=32 --score_visits=64 \\
        --outdir=experiments/results/go7_suboptimal
    # with a winrate-head (AlphaZero-config) net of similar strength:
    python experiments/suboptimal_moves.py ... --winrate_net=AZ=runs/go7-az

AlphaGo-style nets, trained only to win, play "suboptimal moves in the
endgame" once the game is won: moves that give away points without risking
the win. The paper shows SAI with λ > 0 keeps its winning margins high
(Table 1, Fig. 5) and an expert judged its won games. Here both are
measured, on games played out to the count (nobody resigns):

* **Winning margins.** The strong net with each ``--agents`` (λ:μ) pair, and
  optionally a winrate-head net (λ = 0 by nature), each play ``--opponent``
  (the paper's W3) with colours alternating at komi 9.5. The final
  Tromp–Taylor margins of their wins are compared with Welch's t-test
  against the first condition (one-sided: larger margins), scipy.stats.
* **Point-losing moves.** In every won game, every position is scored by a
  fixed judge (``--scorer``, at λ = μ = 0; the median of α + k over a
  ``--score_visits`` search, the papers' estimator). The judge must not be
  one of the compared nets (a net judging its own moves agrees with
  itself): by default another strong net of the zoo, go7-S2. A move of
  the winner "loses points" when the scorer's estimate from the winner's
  side drops by more than ``--loss`` (1) point over that move (the final
  position is scored by its count); the ``--opening_moves`` random opening
  moves are not the winner's choice and are not counted. Reported: such
  moves per won game, and the share after the game was decided (the
  scorer's estimate for the winner already above ``--decided`` points),
  with a Mann–Whitney U test against the first condition.

7×7 translation: komi 9.5 (7.5 on 9×9, fair komi 9 against 7), the papers'
W3 is the zoo's go7-W3, and 1,000 visits become ``--visits``.

Outputs in ``--outdir``: ``games.csv`` (every game), ``moves.csv`` (every
move of every won game: the scorer's estimate before and after, the loss),
``summary.csv`` and ``suboptimal_moves.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from experiments import common
from saijax import arena, go, match, players, search, sgf, stats


def parse_args(argv=None) -> argparse.Namespace:
    p = common.make_parser(__file__, __doc__, games=100, games_help="games per condition, colours alternating",
                           visits=32)  # fmt: skip
    p.add_argument("--strong", default="zoo:go7-S1", help="[NAME=]SPEC of the SAI net")
    p.add_argument("--agents", default="0:0,1:0", help="comma list of lambda:mu for the SAI net")
    p.add_argument("--winrate_net", default="", help="[NAME=]SPEC of a winrate-head net of similar strength")
    p.add_argument("--opponent", default="zoo:go7-W3", help="[NAME=]SPEC of the weak opponent")
    p.add_argument(
        "--scorer", default="zoo:go7-S2", help="the fixed judge (λ = μ = 0): a net that is not one of the compared"
    )
    p.add_argument("--komi", type=float, default=9.5)
    p.add_argument("--score_visits", type=int, default=64)
    p.add_argument("--loss", type=float, default=1.0, help="points a move must lose to count")
    p.add_argument("--decided", type=float, default=5.0, help="the winner's estimated lead that decides a game")
    p.add_argument("--opening_moves", type=int, default=2)
    args = p.parse_args(argv)
    if args.games < 1 or args.visits < 1 or args.score_visits < 1:
        p.error("--games, --visits and --score_visits must be >= 1")
    scorer = common.parse_nets(args.scorer)[0][1] if args.scorer else ""
    compared = {spec for _, spec in common.parse_nets(",".join(x for x in (args.strong, args.winrate_net) if x))}
    if scorer in compared:
        p.error(f"--scorer {args.scorer!r} is one of the compared nets; the judge of point-losing moves must be "
                "independent of them (another net, e.g. zoo:go7-S2)")  # fmt: skip
    for item in common.parse_list(args.agents, str):
        lam, sep, mu = item.partition(":")
        try:
            search.Agent(float(lam), float(mu) if sep else 0.0)
        except ValueError as e:
            p.error(f"--agents: {item!r}: {e}")
    return args


MOVE_COLUMNS = ("condition", "game", "ply", "move", "before", "after", "loss", "decided")


def conditions(args) -> list[players.Player]:
    """The players compared: the SAI net with each agent, then the winrate net."""
    nets = dict(board_size=args.board_size, options=common.player_options(args), seed=args.seed)
    (strong,) = common.load_nets(args.strong, **nets)
    out = []
    for item in common.parse_list(args.agents, str):
        lam, _, mu = item.partition(":")
        out.append(strong.with_agent(lambda_=float(lam), mu=float(mu or 0.0), rename=True))
    if args.winrate_net:
        (az,) = common.load_nets(args.winrate_net, **nets)
        if az.value_head != "winrate":
            print(f"note: --winrate_net {az.name} has a {az.value_head!r} head", flush=True)
        out.append(az)
    return out


def _scorer_fn(scorer: players.Player, rules: go.GoRules, visits: int):
    config = dataclasses.replace(scorer.config, num_simulations=int(visits))
    return match.search_fn(scorer.evaluator, rules, config)


def score_positions(scorer: players.Player, rules: go.GoRules, states: list[go.GoState], visits: int, seed: int):
    """Black-minus-White estimates of positions (a finished one: its count), batched by 64."""
    fn = _scorer_fn(scorer, rules, visits)
    margin = match.margin_fn(rules)
    out = np.zeros(len(states))
    batch = 64
    for start in range(0, len(states), batch):
        chunk = states[start : start + batch]
        pad = chunk + [chunk[0]] * (batch - len(chunk))
        stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *pad)
        keys = match.game_keys(jax.random.PRNGKey(seed), jnp.arange(start, start + batch), jnp.int32(0))
        res = fn(scorer.variables, keys, stacked, scorer.agent.params())
        est, to_play, done, final = jax.device_get(
            (res.score_estimate, stacked.to_play, stacked.terminated, margin(stacked))
        )
        values = np.where(done, final, np.asarray(est) * np.asarray(to_play, np.float32))
        out[start : start + len(chunk)] = values[: len(chunk)]
    return out


def winner_plies(num_moves: int, moves_first: bool, opening_moves: int) -> range:
    """The plies of the winner's own moves: its parity, after the random opening.

    The first ``opening_moves`` moves of a game are drawn at random by the
    arena (:class:`saijax.match.MatchSettings`), not chosen by the players,
    so they are not the winner's to count.
    """
    start = 0 if moves_first else 1
    if start < opening_moves:
        start += 2 * ((opening_moves - start + 1) // 2)
    return range(start, num_moves, 2)


def run(args) -> dict[str, list[dict]]:
    rules = go.GoRules(args.board_size)
    plain = common.player_options(args, lambda_=0.0, mu=0.0, threshold=0.0)
    (opponent,) = common.load_nets(args.opponent, board_size=args.board_size, options=plain, seed=args.seed)
    (scorer,) = common.load_nets([("scorer", args.scorer)], board_size=args.board_size, options=plain)
    game_rows, move_rows = [], []
    for player in conditions(args):
        t0 = time.time()
        settings = match.MatchSettings(
            games=args.games,
            komi=args.komi,
            seed=args.seed,
            opening_moves=args.opening_moves,
            sgf_dir=os.path.join(args.outdir, "sgf", player.name),
        )
        games = arena.play_match(player, opponent, settings)
        for g in games:
            game_rows.append({"condition": player.name, **dataclasses.asdict(g)})
        won = [g for g in games if (g.winner == "black") == (g.black == player.name) and g.winner != "draw"]
        for g in won:
            record = sgf.read_sgf(g.sgf)
            states = sgf.replay(record, rules=rules)
            est = score_positions(scorer, rules, states, args.score_visits, args.seed + g.game)
            sign = 1.0 if g.black == player.name else -1.0
            moves_first = (g.black == player.name) == (record.first_player == 1)
            for ply in winner_plies(len(record.moves), moves_first, args.opening_moves):
                before, after = sign * est[ply], sign * est[ply + 1]
                move_rows.append(
                    {
                        "condition": player.name,
                        "game": g.game,
                        "ply": ply,
                        "move": go.to_gtp(rules, record.moves[ply]),
                        "before": round(float(before), 3),
                        "after": round(float(after), 3),
                        "loss": round(float(before - after), 3),
                        "decided": bool(before > args.decided),
                    }
                )
        print(f"{player.name}: {len(won)}/{len(games)} won vs {opponent.name} ({time.time() - t0:.0f}s)", flush=True)
    common.write_csv(os.path.join(args.outdir, "games.csv"), game_rows)
    common.write_csv(os.path.join(args.outdir, "moves.csv"), move_rows, MOVE_COLUMNS)
    summary = summarize(game_rows, move_rows, args)
    common.write_csv(os.path.join(args.outdir, "summary.csv"), summary)
    print(format_table(summary))
    plot(game_rows, summary, os.path.join(args.outdir, "suboptimal_moves.png"))
    return {"games": game_rows, "moves": move_rows, "summary": summary}


def _win_margins(game_rows: list[dict], name: str) -> np.ndarray:
    out = []
    for g in game_rows:
        if g["condition"] != name or g["winner"] == "draw":
            continue
        side = 1.0 if g["black"] == name else -1.0
        if side * g["margin"] > 0:
            out.append(side * g["margin"])
    return np.asarray(out, float)


def _losing_counts(move_rows: list[dict], name: str, loss: float, decided_only: bool) -> np.ndarray:
    counts: dict[int, int] = {}
    for m in move_rows:
        if m["condition"] != name:
            continue
        counts.setdefault(m["game"], 0)
        if m["loss"] > loss and (m["decided"] or not decided_only):
            counts[m["game"]] += 1
    return np.asarray(list(counts.values()), float)


def summarize(game_rows: list[dict], move_rows: list[dict], args) -> list[dict]:
    names = list(dict.fromkeys(g["condition"] for g in game_rows))
    ref = names[0]
    ref_margins = _win_margins(game_rows, ref)
    ref_counts = _losing_counts(move_rows, ref, args.loss, False)
    out = []
    for name in names:
        games = [g for g in game_rows if g["condition"] == name]
        margins = _win_margins(game_rows, name)
        counts = _losing_counts(move_rows, name, args.loss, False)
        decided = _losing_counts(move_rows, name, args.loss, True)
        row = {
            "condition": name,
            "games": len(games),
            "wins": len(margins),
            "mean_win_margin": round(float(np.mean(margins)), 2) if len(margins) else "",
            "sd_win_margin": round(float(np.std(margins, ddof=1)), 2) if len(margins) > 1 else "",
            "p_margin_gt_ref": "",
            "losing_moves_per_win": round(float(np.mean(counts)), 3) if len(counts) else "",
            "losing_moves_when_decided": round(float(np.mean(decided)), 3) if len(decided) else "",
            "p_losing_moves_vs_ref": "",
        }
        if name != ref and len(margins) > 1 and len(ref_margins) > 1:
            row["p_margin_gt_ref"] = round(stats.welch_t_test(margins, ref_margins, alternative="greater")[1], 5)
        if name != ref and len(counts) and len(ref_counts):
            row["p_losing_moves_vs_ref"] = round(stats.mann_whitney_test(counts, ref_counts)[1], 5)
        out.append(row)
    return out


def format_table(summary: list[dict]) -> str:
    """The summary as a Markdown table."""
    header = ("condition", "wins/games", "mean win margin (sd)", "p (margin > first, Welch)",
              "point-losing moves per win", "of them once decided", "p (Mann–Whitney)")  # fmt: skip
    return common.markdown_table(
        header,
        (
            (r["condition"], f"{r['wins']}/{r['games']}", f"{r['mean_win_margin']} ({r['sd_win_margin']})",
             r["p_margin_gt_ref"], r["losing_moves_per_win"], r["losing_moves_when_decided"],
             r["p_losing_moves_vs_ref"])
            for r in summary
        ),
    )  # fmt: skip


def plot(game_rows: list[dict], summary: list[dict], path: str) -> str:
    """Winning margins and point-losing moves per condition; returns the PNG's path."""
    plt = common.pyplot()
    names = [r["condition"] for r in summary]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
    data = [_win_margins(game_rows, n) for n in names]
    ax1.boxplot([d if len(d) else [np.nan] for d in data], showmeans=True)
    ax1.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right")
    ax1.set_ylabel("final margin of wins (points)")
    y = [r["losing_moves_per_win"] or 0 for r in summary]
    z = [r["losing_moves_when_decided"] or 0 for r in summary]
    x = np.arange(len(names))
    ax2.bar(x - 0.2, y, 0.4, label="all moves")
    ax2.bar(x + 0.2, z, 0.4, label="once decided")
    ax2.set_xticks(x, names, rotation=30, ha="right")
    ax2.set_ylabel("point-losing moves per won game")
    ax2.legend()
    fig.tight_layout()
    return common.save_figure(fig, path)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    return common.run_script(__file__, parse_args, run, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
