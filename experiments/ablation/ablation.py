"""The 7×7 self-play ablation: variants of a config compared at equal self-play evaluations.

    python -m experiments.run --config=experiments/ablation/config.py  # the shipped round robin (--config.play=True)
    ablation.run(ablation.Settings(arms=("base=runs/base", "noise=runs/noise"), outdir="/tmp/ablation"))

Each arm is a run of ``python -m saijax.train`` with one set of switches, all
trained for about the same number of self-play network evaluations (the
``selfplay_evaluations`` metric; about 10 M for 36 generations of
``configs/go7_base.py``), e.g.

    python -m saijax.train --config=configs/go7_base.py --workdir=runs/noise \\
        --config.generations=36 --config.selfplay.noise_moves=8

For every arm of ``arms``, ``NAME=WORKDIR`` (or ``NAME=WORKDIR@G``: the
run's first generations up to G and its kept checkpoint G, e.g. the first
10 M evaluations of a longer run) this script

* copies its learning curve from ``metrics.jsonl`` into ``curves.csv``
  (generation, cumulative evaluations and minutes, α_∅, β_∅, score error,
  first move, losses), so the curve outlives the workdir;
* exports its newest checkpoint into ``<outdir>/nets/`` (a zoo directory:
  ``index.json`` and the net's variables, :func:`saijax.zoo.export`), so a
  later arm can be rated against it without the workdir.

Then every net in ``<outdir>/nets/`` (this run's arms and earlier ones)
plays every other net ``games`` games (``games=0`` plays nothing and
rates the arms from the games already played, so an arm can be added in
one session and rated in the next): deterministic search by default
(the player fields: ``visits``, ``gumbel_scale`` 0), colours alternating,
komi ``komi`` (9.5: 7×7's fair komi is 9, so a perfect game is a White
win), the first ``opening_moves`` moves of each game pair random, so
that deterministic players still play different games. The pairings resume
(``games.csv``); the Elo fit (:func:`saijax.analysis.elo.fit_elo`, anchored at
``anchor``, default the first arm; no first-move term, since colours
alternate in every pairing) goes to ``elo.csv``.

Outputs: ``pairings.csv`` (head to head: each pairing's games, the first
arm's wins and rate, the two-sided exact binomial p against ½, Holm's and
BH's corrections over all pairings), ``arms.csv`` (one row per arm:
evaluations, minutes, generations,
α_∅, β_∅ and score error averaged over the last ``last`` generations, the
first generation from which the first move stays D4, Elo with its 95%
interval), ``curves.csv``, ``games.csv``, ``elo.csv`` and ``ablation.png``
(α_∅, β_∅ and score error against evaluations, one line per arm).
``plot_only`` redraws the figure from the tables.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics

from experiments.lib import common, matches
from experiments.lib.common import setting
from experiments.lib.curves import d4_from, learning_curve, parse_arms
from saijax import zoo
from saijax.analysis import elo, results, stats
from saijax.cli import player as player_cli


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring)."""

    games: int = setting(20, "games per pairing of arms")
    visits: int = 64
    arms: tuple[str, ...] = setting((), "NAME=WORKDIR[@G] of each run to add (its curve and final net)")
    last: int = setting(10, "α_∅, β_∅ and score error averaged over the last k generations")
    anchor: str = setting("", "the arm rated 0 (default: the first arm of curves.csv)")
    komi: float = setting(9.5, "the pairings' komi (7×7's fair komi is 9)")
    opening_moves: int = 4
    restart: bool = setting(False, "replay every pairing (default: resume games.csv)")
    plot_only: bool = setting(False, "redraw ablation.png from outdir's tables")


def _mean(rows: list[dict], key: str) -> float:
    values = [float(r[key]) for r in rows if r.get(key, "") != ""]
    return statistics.fmean(values) if values else math.nan


def _sd(rows: list[dict], key: str) -> float:
    values = [float(r[key]) for r in rows if r.get(key, "") != ""]
    return statistics.stdev(values) if len(values) > 1 else math.nan


def arm_rows(curves: list[dict], last: int, fit: elo.EloFit | None) -> list[dict]:
    """One summary row per arm of ``curves``."""
    out = []
    for name in dict.fromkeys(r["arm"] for r in curves):
        curve = [r for r in curves if r["arm"] == name]
        tail = curve[-last:]
        row = {
            "arm": name,
            "generations": len(curve),
            "evaluations_m": float(curve[-1]["evaluations_m"]),
            "minutes": float(curve[-1]["minutes"]),
            "alpha_empty": _mean(tail, "alpha_empty"),
            "alpha_empty_sd": _sd(tail, "alpha_empty"),
            "beta_empty": _mean(tail, "beta_empty"),
            "score_error": _mean(tail, "score_error"),
            "score_error_late": _mean(tail, "score_error_late"),
            "beta_late": _mean(tail, "beta_late"),
            "first_move": curve[-1]["first_move"],
            "d4_from": d4_from(curve),
        }
        if fit is not None and name in fit.ratings:
            lo, hi = fit.ci[name]
            row |= {"elo": fit.ratings[name], "elo_lo": lo, "elo_hi": hi, "elo_games": fit.n_games[name]}
        out.append(row)
    return out


def export_arm(name: str, workdir: str, nets_dir: str, generation: int | None = None) -> zoo.ZooEntry:
    """The arm's checkpoint ``generation`` (default its newest) into the private zoo ``nets_dir``
    (replacing an older export)."""
    kept = common.kept_generations(workdir)
    if generation is None:
        generation = kept[-1]
    elif generation not in kept:
        raise ValueError(f"arm {name!r}: {workdir} keeps no checkpoint {generation} (kept: {kept})")
    step = os.path.join(workdir, "checkpoints", str(generation))
    config = os.path.join(workdir, "config.json")
    return zoo.export(step, name, directory=nets_dir, run=os.path.basename(os.path.normpath(workdir)), notes=config)


def load_arms(nets_dir: str, options: player_cli.PlayerOptions):
    """Every net of the private zoo ``nets_dir`` as a player named after its arm."""
    names = sorted(zoo.entries(nets_dir))
    return {n: player_cli.with_options(zoo.load(n, directory=nets_dir), options, name=n) for n in names}


def merge_curves(path: str, new: list[dict]) -> list[dict]:
    """The curves table with ``new``'s arms replaced and the other arms kept (earlier runs' arms)."""
    fresh = {r["arm"] for r in new}
    kept = [r for r in common.read_csv(path) if r["arm"] not in fresh] if os.path.exists(path) else []
    return kept + new


def play_round_robin(nets: dict, settings: Settings) -> list[results.GameResult]:
    """Every pair of nets, ``settings.games`` games each, resuming ``games.csv``."""
    names = sorted(nets)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    return matches.play_pairings(nets, pairs, settings)


def pairing_rows(games: list[results.GameResult]) -> list[dict]:
    """Head to head: per pairing the first arm's wins (draws count ½), its rate, the
    two-sided exact binomial p against ½, and Holm and BH over the table."""
    by_pair: dict[tuple[str, str], list[results.GameResult]] = {}
    for g in games:
        by_pair.setdefault(tuple(sorted((g.black, g.white))), []).append(g)
    rows = []
    for (a, b), played in sorted(by_pair.items()):
        overall = results.summarize(played, a).overall
        wins = overall.wins + 0.5 * overall.draws
        rows.append(
            {
                "first": a,
                "second": b,
                "games": overall.games,
                "first_wins": wins,
                "first_rate": wins / overall.games,
                "p": stats.binomial_test(wins, overall.games),
            }
        )
    for row, holm, bh in zip(
        rows, stats.holm_correction(r["p"] for r in rows), stats.benjamini_hochberg(r["p"] for r in rows)
    ):
        row |= {"p_holm": holm, "p_bh": bh}
    return rows


def plot(curves: list[dict], arms: list[dict], path: str) -> str:
    """α_∅, β_∅ and score error against self-play evaluations, one line per arm; returns the PNG's path."""
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    elo_of = {r["arm"]: r.get("elo", "") for r in arms}
    for name in dict.fromkeys(r["arm"] for r in curves):
        curve = [r for r in curves if r["arm"] == name]
        x = [float(r["evaluations_m"]) for r in curve]
        rating = elo_of.get(name, "")
        label = name if rating in ("", None) else f"{name} ({float(rating):+.0f} Elo)"
        for ax, key in zip(axes, ("alpha_empty", "beta_empty", "score_error")):
            y = [float(r[key]) if r[key] != "" else math.nan for r in curve]
            ax.plot(x, y, lw=1.2, label=label)
    axes[0].axhline(9.0, color="grey", ls=":", lw=0.8)
    axes[0].set_ylabel("α_∅ (fair komi; 7×7: 9)")
    axes[1].axhline(2.0, color="grey", ls=":", lw=0.8)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("β_∅ (SAI's 7×7: > 2)")
    axes[2].set_ylabel("mean |α + k − final margin|")
    for ax in axes:
        ax.set_xlabel("self-play evaluations (M)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return common.save_figure(fig, path)


def run(settings: Settings) -> None:
    """Adds the arms, plays the round robin and writes the tables and the PNG (with ``plot_only``: redraws the
    PNG from ``outdir``'s tables)."""
    if settings.plot_only:
        replot(settings)
        return
    nets_dir = os.path.join(settings.outdir, "nets")
    curves_path = os.path.join(settings.outdir, "curves.csv")
    new_curves = []
    for name, workdir, generation in parse_arms(settings.arms):
        new_curves += learning_curve(name, workdir, generation)
        entry = export_arm(name, workdir, nets_dir, generation)
        alpha, beta = entry.alpha_empty, entry.beta_empty
        print(f"{name}: generation {entry.generation} exported (α_∅ {alpha:+.2f}, β_∅ {beta:.3f})")
    curves = merge_curves(curves_path, new_curves)
    if not curves:
        raise ValueError("no arms: give arms NAME=WORKDIR,... (or run once with them)")
    common.write_csv(curves_path, curves, digits=4)
    fit = None
    names = sorted(zoo.entries(nets_dir)) if os.path.isdir(nets_dir) else []
    games_csv = common.games_path(settings.outdir)
    if settings.anchor and len(names) >= 2 and settings.anchor not in names:
        raise ValueError(f"anchor {settings.anchor!r} is not an arm; arms: {', '.join(names)}")
    if settings.games > 0 and len(names) >= 2:
        nets = load_arms(nets_dir, settings.player_options())
        games = play_round_robin(nets, settings)
    else:
        # games=0 plays nothing: the ratings come from the games already
        # played (an arm added without games is listed unrated until a
        # later run plays its pairings).
        games = results.read_results(games_csv) if os.path.exists(games_csv) else []
    rated = sorted({p for g in games for p in (g.black, g.white)} & set(names))
    if len(rated) >= 2:
        anchor = settings.anchor or curves[0]["arm"]
        if anchor not in rated:
            raise ValueError(f"anchor {anchor!r} is not a rated arm; rated arms: {', '.join(rated)}")
        games = [g for g in games if g.black in rated and g.white in rated]
        # Colours alternate within every pairing, so Black's advantage cancels
        # out of the ratings; not fitting it keeps small tables estimable.
        fit = elo.fit_elo(games, anchor=anchor, first_move_advantage=False)
        rows = [
            {"arm": n, "elo": fit.ratings[n], "elo_lo": fit.ci[n][0], "elo_hi": fit.ci[n][1], "games": fit.n_games[n]}
            for n in rated
        ]
        common.write_csv(os.path.join(settings.outdir, "elo.csv"), rows, digits=1)
        common.write_csv(os.path.join(settings.outdir, "pairings.csv"), pairing_rows(games), digits=4)
        print(elo.format_table(fit))
    arms = arm_rows(curves, settings.last, fit)
    common.write_csv(os.path.join(settings.outdir, "arms.csv"), arms, digits=4)
    plot(curves, arms, os.path.join(settings.outdir, "ablation.png"))
    header = ["arm", "evals (M)", "min", "α_∅", "β_∅", "score err", "late err", "late β", "D4 from", "Elo"]
    print(
        common.markdown_table(
            header,
            [
                [
                    r["arm"],
                    f"{r['evaluations_m']:.2f}",
                    f"{r['minutes']:.0f}",
                    f"{r['alpha_empty']:+.2f} ± {r['alpha_empty_sd']:.2f}",
                    f"{r['beta_empty']:.3f}",
                    f"{r['score_error']:.1f}",
                    f"{r['score_error_late']:.1f}",
                    f"{r['beta_late']:.2f}",
                    r["d4_from"],
                    f"{r['elo']:+.0f} [{r['elo_lo']:+.0f}, {r['elo_hi']:+.0f}]" if "elo" in r else "",
                ]
                for r in arms
            ],
        )
    )


def replot(settings: Settings) -> None:
    curves = common.read_csv(os.path.join(settings.outdir, "curves.csv"))
    arms = common.read_csv(os.path.join(settings.outdir, "arms.csv"))
    plot(curves, arms, os.path.join(settings.outdir, "ablation.png"))
