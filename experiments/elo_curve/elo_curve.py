"""Fig. 2 of the SAI paper on a saijax run: Elo by generation, and α_∅ below it.

    python -m experiments.run --config=experiments/elo_curve/config.py  # the shipped curve (--config.play=True)
    python experiments/elo_curve/elo_curve.py --workdir=runs/go7 --outdir=/tmp/go7_elo

The SAI papers rate every network of a run by maximum likelihood over a
graph of matches: each net against nets a few generations apart, and the
random net as the anchor (Elo 0). This script does the same for the
generations whose checkpoints a run kept (``config.keep_checkpoint_every``),
in its workdir or, for a run in legs whose workdirs do not last, archived
(``--archive``, ``python -m saijax.zoo archive``; an archived generation is
rated from its archived bytes):

* nets: the random net (same shape as generation 0's) and every kept
  generation (optionally only every ``--every``-th of them);
* pairings: each net against the next ``--neighbours`` nets of the list, and
  the random net against the first ``--random_pairings`` nets;
* each pairing: ``--games`` lockstep games (colours alternating, komi
  ``--komi``, the first ``--opening_moves`` moves of each game pair drawn at
  random so that deterministic searches still play different games), each
  side with ``--visits`` simulations and λ = μ = 0;
* the fit: :func:`saijax.analysis.elo.fit_elo` (Rao–Kupper with draws, first-move
  advantage, Wald 95% intervals).

A rerun resumes ``games.csv``: pairings already played in full are kept
(rating more generations of a longer run plays only the new pairings);
``--restart`` plays everything again.

Outputs in ``--outdir``: ``games.csv`` (every game, the results table),
``elo.csv`` (generation, Elo, interval, α_∅, β_∅ of each rated net, from the
run's ``metrics.jsonl``), ``learning_curve.csv`` (every generation: wall
time since the start, α_∅, β_∅, first move, score error, losses) and
``elo_curve.png`` (upper panel Elo with intervals, lower panel α_∅ of every
generation, as in the paper's Fig. 2). ``--plot_only`` redraws the figure
from an existing ``elo.csv`` and ``learning_curve.csv``.
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np

from experiments.lib import common, matches
from experiments.lib.common import setting
from saijax.analysis import elo

kept_generations = common.kept_generations
read_metrics = common.read_metrics
read_csv = common.read_csv


def pairings(names: list[str], neighbours: int, random_pairings: int) -> list[tuple[str, str]]:
    """The pairing graph: each net against the next ``neighbours`` nets, and random against the first few."""
    nets = names[1:]
    pairs = [(nets[i], nets[j]) for i in range(len(nets)) for j in range(i + 1, min(i + 1 + neighbours, len(nets)))]
    pairs += [(names[0], nets[i]) for i in range(min(random_pairings, len(nets)))]
    return pairs


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(40, "games per pairing")
    visits: int = 32
    board_size: int | None = setting(None, "the checkpoints' board size (default: theirs)")
    workdir: str = setting("", "a run's workdir (its kept checkpoints are rated; its metrics.jsonl read)")
    archive: str = setting("", "a zoo directory of the run's generations (python -m saijax.zoo archive), rated too")
    every: int = setting(1, "rate every k-th kept generation")
    generations: tuple[int, ...] = setting((), "generations to rate (default: all kept)")
    neighbours: int = 2
    random_pairings: int = 2
    opening_moves: int = 2
    komi: float = 9.5
    restart: bool = setting(False, "replay every pairing (default: resume games.csv)")
    plot_only: bool = setting(False, "redraw from --outdir's elo.csv and learning_curve.csv")
    title: str = setting("", "the figure's title (default: the workdir's name)")


def run(settings: Settings) -> dict:
    """Rates the run's kept generations and writes the tables and the PNG (with ``plot_only``: redraws the PNG
    from ``outdir``'s elo.csv and learning_curve.csv); returns the Elo rows (and the fit, when rated)."""
    if settings.plot_only:
        rows = read_csv(os.path.join(settings.outdir, "elo.csv"))
        curve = read_csv(os.path.join(settings.outdir, "learning_curve.csv"))
        plot(rows, curve, os.path.join(settings.outdir, "elo_curve.png"), title=settings.title)
        return {"rows": rows, "curve": curve}
    specs = common.run_nets(settings.workdir, settings.archive)
    gens = list(specs)
    if settings.generations:
        wanted = set(settings.generations)
        gens = [g for g in gens if g in wanted]
    gens = gens[:: settings.every]
    if len(gens) < 2:
        raise ValueError(f"{settings.workdir or settings.archive}: need at least 2 kept checkpoints, found {gens}")
    options = settings.player_options()
    checkpoints = [(f"gen{g}", specs[g]) for g in gens]
    loaded = common.load_nets(
        checkpoints,
        board_size=settings.board_size,
        options=options,
        seed=settings.seed,
        zoo_dir=settings.archive or None,
    )
    spec = loaded[0].net.spec
    shape = settings.player_options(blocks=spec.blocks, filters=spec.filters, value_head=spec.value_head)
    (random,) = common.load_nets("random", board_size=spec.board_size, options=shape, seed=settings.seed)
    nets = {p.name: p for p in [random, *loaded]}
    names = list(nets)
    t0 = time.time()
    pairs = pairings(names, settings.neighbours, settings.random_pairings)

    all_games = matches.play_pairings(nets, pairs, settings)
    fit = elo.fit_elo(all_games, anchor="random")
    metrics = read_metrics(settings.workdir)
    rows = []
    for name in names:
        g = None if name == "random" else int(name[3:])
        m = metrics.get(g, {}) if g is not None else {}
        lo, hi = fit.ci[name]
        rows.append(
            {
                "net": name,
                "generation": "" if g is None else g,
                "elo": round(fit.ratings[name], 1),
                "elo_lo": round(lo, 1),
                "elo_hi": round(hi, 1),
                "games": fit.n_games[name],
                "alpha_empty": m.get("alpha_empty", ""),
                "beta_empty": m.get("beta_empty", ""),
            }
        )
    common.write_csv(os.path.join(settings.outdir, "elo.csv"), rows)
    curve = learning_curve(metrics)
    common.write_csv(os.path.join(settings.outdir, "learning_curve.csv"), curve)
    plot(
        rows,
        curve,
        os.path.join(settings.outdir, "elo_curve.png"),
        title=settings.title or os.path.basename(settings.workdir),
    )
    print(elo.format_table(fit))
    print(
        f"{len(all_games)} games in {time.time() - t0:.0f}s; wrote {settings.outdir}/elo.csv, games.csv, elo_curve.png"
    )
    return {"fit": fit, "rows": rows}


_CURVE_KEYS = (
    "alpha_empty",
    "beta_empty",
    "first_move",
    "selfplay_alpha_empty",
    "score_error",
    "score_error_late",
    "beta_late",
    "sharp_late_fraction",
    "score_error_sharp_late",
    "resign_score_estimate",
    "black_winrate",
    "avg_game_length",
    "train_policy_loss",
    "train_value_loss",
)


def learning_curve(metrics: dict[int, dict]) -> list[dict]:
    """One row per generation: cumulative self-play evaluations (M) and wall time (minutes), and the curve's metrics."""
    return common.learning_curve(metrics, _CURVE_KEYS)


def plot(rows: list[dict], curve: list[dict], path: str, title: str = "") -> str:
    """The paper's Fig. 2 layout: Elo with 95% intervals above, α_∅ below, by generation; returns the PNG's path."""
    plt = common.pyplot()
    nets = [r for r in rows if str(r["generation"]) != ""]
    gen = np.array([r["generation"] for r in nets], float)
    rating = np.array([r["elo"] for r in nets], float)
    lo = np.array([r["elo_lo"] for r in nets], float)
    hi = np.array([r["elo_hi"] for r in nets], float)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    top.errorbar(gen, rating, yerr=[rating - lo, hi - rating], fmt="o-", ms=3, capsize=2)
    top.axhline(0, color="grey", lw=0.8, ls=":")
    top.set_ylabel("Elo (random net = 0)")
    top.set_title(f"{title}: Elo by generation" if title else "Elo by generation")
    alpha = [(float(r["generation"]), float(r["alpha_empty"])) for r in curve if str(r["alpha_empty"]) != ""]
    if alpha:
        bottom.plot([a[0] for a in alpha], [a[1] for a in alpha], "-", lw=1, color="tab:red")
    bottom.set_ylabel("α_∅ (fair komi)")
    bottom.set_xlabel("generation")
    fig.tight_layout()
    return common.save_figure(fig, path)


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
