"""How many self-play evaluations does a run need to match a reference net?

    python experiments/ablation/catch_up.py --workdir=runs/ablation/rest --reference=zoo:base \\
        --zoo_dir=experiments/ablation/results/main/nets --generations=5,10,15,20 --games=200 \\
        --outdir=experiments/ablation/results/main/catch_up

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
(``experiments/<claim>/config.py``): it rates the kept checkpoints of ``--workdir``,
which the repository does not ship, and its one shipped result is part of
the ablation's claim (``ablation/results/main/catch_up/``, beside that
claim's round robin).
"""

from __future__ import annotations

import dataclasses
import os

from experiments.lib import common, matches
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.play import arena


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(200, "games per generation")
    visits: int = 64
    workdir: str = setting(help="the run whose kept generations play")
    reference: str = setting(help="the reference net: a checkpoint or zoo:<name>")
    generations: tuple[int, ...] = setting((), "kept generations (default: all kept)")
    zoo_dir: str = ""
    komi: float = setting(9.5, "the games' komi (7×7's fair komi is 9)")
    opening_moves: int = 4
    restart: bool = setting(False, "replay every generation (default: resume games.csv)")


def run(settings: Settings) -> dict:
    """Plays every kept generation against the reference and writes the table and the PNG; returns them."""
    metrics = common.read_metrics(settings.workdir)
    curve = {r["generation"]: r["evaluations_m"] for r in common.learning_curve(metrics, ())}
    kept = common.kept_generations(settings.workdir)
    generations = list(settings.generations) or kept
    missing = [g for g in generations if g not in kept or g not in curve]
    if missing:
        raise ValueError(
            f"--generations: {settings.workdir} keeps no checkpoint (or metrics) for {missing}; kept: {kept}"
        )
    options = settings.player_options()
    (reference,) = common.load_nets(
        [("reference", settings.reference)], board_size=settings.board_size, options=options, zoo_dir=settings.zoo_dir
    )
    path = common.games_path(settings.outdir)
    nets = {g: f"gen{g}" for g in generations}

    def play(g, results_path):
        spec = os.path.join(settings.workdir, "checkpoints", str(g))
        (player,) = common.load_nets([(nets[g], spec)], board_size=settings.board_size, options=options)
        return arena.play_match(player, reference, matches.pairing_settings(settings, g, results_path))

    games = common.play_cells(
        generations,
        play,
        path=path,
        games=settings.games,
        key=lambda g: g,
        game_key=lambda game: int((game.black if game.black != "reference" else game.white)[3:]),
        resume=not settings.restart,
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
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), rows, digits=4)
    plot(rows, os.path.join(settings.outdir, "catch_up.png"))
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


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
