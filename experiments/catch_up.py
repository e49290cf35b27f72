"""How many self-play evaluations does a run need to match a reference net?

    python experiments/catch_up.py --workdir=runs/ablation/rest --reference=zoo:base \\
        --zoo_dir=experiments/results/ablation/main/nets --generations=5,10,15,20 --games=200 \\
        --outdir=experiments/results/ablation/main/catch_up

The ablation compares arms at equal evaluations; its other headline is the
reverse: at how many evaluations does the better arm's run reach the
strength the reference arm has at the full budget? Each chosen kept
generation of ``--workdir`` plays the reference ``--games`` games
(deterministic search at ``--visits``, colours alternating, komi
``--komi``, the first ``--opening_moves`` moves of each game pair random,
as the ablation's round robin). The generation's cumulative evaluations come
from the run's ``metrics.jsonl``; the crossing is interpolated linearly
between the last generation scoring below ½ and the first at or above it.

Outputs in ``--outdir``: ``games.csv``, ``summary.csv`` (generation,
evaluations (M), games, wins, score with its Wilson interval, two-sided
binomial p against ½) and ``catch_up.png`` (score against evaluations);
the crossing is printed.

A tool over one training run, not a claim with a config
(``experiments/configs/``): it rates the kept checkpoints of ``--workdir``,
which the repository does not ship, and its one shipped result is part of
the ablation's claim (``results/ablation/main/catch_up/``, beside that
claim's round robin).
"""

from __future__ import annotations

import argparse
import os

from experiments import common, matches
from saijax import arena, results, stats


def crossing(rows: list[dict]) -> float | None:
    """Evaluations (M) where the score first reaches ½, linearly interpolated; None if never."""
    previous = None
    for r in rows:
        if r["score"] >= 0.5:
            if previous is None:
                return r["evaluations_m"]
            (x0, y0), (x1, y1) = (previous["evaluations_m"], previous["score"]), (r["evaluations_m"], r["score"])
            return x0 + (0.5 - y0) * (x1 - x0) / (y1 - y0)
        previous = r
    return None


def run(args) -> dict:
    metrics = common.read_metrics(args.workdir)
    curve = {r["generation"]: r["evaluations_m"] for r in common.learning_curve(metrics, ())}
    kept = common.kept_generations(args.workdir)
    generations = common.parse_list(args.generations, int) if args.generations else kept
    missing = [g for g in generations if g not in kept or g not in curve]
    if missing:
        raise ValueError(f"--generations: {args.workdir} keeps no checkpoint (or metrics) for {missing}; kept: {kept}")
    options = common.player_options(args)
    (reference,) = common.load_nets(
        [("reference", args.reference)], board_size=args.board_size, options=options, zoo_dir=args.zoo_dir
    )
    path = common.games_path(args.outdir)
    nets = {g: f"gen{g}" for g in generations}

    def play(g, results_path):
        spec = os.path.join(args.workdir, "checkpoints", str(g))
        (player,) = common.load_nets([(nets[g], spec)], board_size=args.board_size, options=options)
        return arena.play_match(player, reference, matches.pairing_settings(args, g, results_path))

    games = common.play_cells(
        generations,
        play,
        path=path,
        games=args.games,
        key=lambda g: g,
        game_key=lambda game: int((game.black if game.black != "reference" else game.white)[3:]),
        resume=not args.restart,
    )
    rows = []
    for g in generations:
        played = [x for x in games if nets[g] in (x.black, x.white)]
        overall = results.summarize(played, nets[g]).overall
        wins = overall.wins + 0.5 * overall.draws
        lo, hi = stats.wilson_interval(wins, overall.games)
        rows.append(
            {
                "generation": g,
                "evaluations_m": curve[g],
                "games": overall.games,
                "wins": wins,
                "score": wins / overall.games,
                "score_lo": lo,
                "score_hi": hi,
                "p": stats.binomial_test(wins, overall.games),
            }
        )
        print(f"generation {g} ({curve[g]:.2f} M evaluations): {wins:g}/{overall.games} against the reference")
    common.write_csv(os.path.join(args.outdir, "summary.csv"), rows, digits=4)
    plot(rows, os.path.join(args.outdir, "catch_up.png"))
    at = crossing(rows)
    print("never reaches ½ of the games" if at is None else f"reaches ½ at about {at:.2f} M evaluations")
    return {"rows": rows, "crossing": at}


def plot(rows: list[dict], path: str) -> str:
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    x = [r["evaluations_m"] for r in rows]
    y = [r["score"] for r in rows]
    err = [[r["score"] - r["score_lo"] for r in rows], [r["score_hi"] - r["score"] for r in rows]]
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3)
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_ylim(0, 1)
    ax.set_xlabel("the run's self-play evaluations (M)")
    ax.set_ylabel("score against the reference")
    fig.tight_layout()
    return common.save_figure(fig, path)


def parse_args(argv=None) -> argparse.Namespace:
    p = common.make_parser(__file__, __doc__, games=200, games_help="games per generation", visits=64,
                           workdir=common.Default.REQUIRED, zoo_dir="", komi=9.5, opening_moves=4, restart="generation",
                           helps={"workdir": "the run whose kept generations play",
                                  "komi": "the games' komi (7×7's fair komi is 9)"})  # fmt: skip
    p.add_argument("--reference", required=True, help="the reference net: a checkpoint or zoo:<name>")
    p.add_argument("--generations", default="", help="comma-separated kept generations (default: all kept)")
    return p.parse_args(argv)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    return common.run_script(__file__, parse_args, run, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
