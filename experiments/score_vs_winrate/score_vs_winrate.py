"""Score vs. winrate, §IV: Proposition 1 and Figs. 3 and 4, computed exactly.

    python -m experiments.run --config=experiments/score_vs_winrate/config.py  # the shipped run (--config.redraw=True)
    score_vs_winrate.run(score_vs_winrate.Settings(outdir="runs/score_vs_winrate"))

Paper: [SvW], Pasqualini et al., "Score vs. Winrate in Score-Based Games" (2022;
references in docs/design.md). The library code is `saijax.analysis.theory`; this
script only chooses parameters, prints, writes CSV files and draws. The
drawing helpers are importable, so colab/score_vs_winrate.ipynb uses them.

Outputs in ``outdir``:

* prop1_check.csv: the closed-form condition against brute force on the
  4-D grid (grid points, matches, conflicts);
* prop1_bandit.png / .csv: where score and outcome prefer different arms
  of a two-armed Gaussian bandit, for a winning and a losing second arm,
  with Proposition 1's boundary; the CSV holds the plotted grid, the
  condition and the brute-force comparison of E[score] and Phi(mu/sigma).
* fig3_outcome_loss_by_level.png / .csv: the mean over all states of a
  level and all MDPs of v_outcome^pi_outcome - v_outcome^pi_score.
* fig4_variance_log_ratio.png / .csv: the median log-ratio of score variances
  of the chosen and the discarded action where the policies disagree,
  binned by v_outcome^pi_outcome, from both policies' points of view.

Defaults. The paper fixes only 2,000 MDPs and the Fig. 4 binning (100 bins);
the one MDP it shows (Fig. 2) has state branch b = 2 and 2 actions per state,
so those are the defaults. It does not give the depth used for Figs. 3 and 4.
d = 8 (255 decision states, 256 leaves, scores in [-256, 256]) gives Fig. 3 a
curve over 9 levels and Fig. 4 about 40,000 disagreeing states, some hundreds
per bin, in under a second; Fig. 2's own d = 3 leaves Fig. 4 with fewer than
ten states per bin. Other b, d and action counts change the magnitudes but
not the signs (try ``branch=3, depth=5, num_actions=3``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Literal

import numpy as np

from experiments.lib import common
from experiments.lib.common import setting
from saijax.analysis import theory

OUTCOME_COLOUR = "tab:red"  # the paper draws pi_outcome in red
SCORE_COLOUR = "tab:blue"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """The computation's settings (the module docstring, "Defaults")."""

    outdir: str = "runs/score_vs_winrate"
    seed: int = 0
    num_mdps: int = setting(2000, "random MDPs (the paper's 2,000 runs)")
    branch: int = setting(2, "state branch b (Fig. 2 uses 2)")
    depth: int = setting(8, "depth d; leaves are level d (see module docstring)")
    num_actions: int = setting(2, "actions per state (Fig. 2 uses 2)")
    num_bins: int = setting(100, "Fig. 4 bins over the winrate [0, 1]")
    tie_break: Literal["lexicographic", "first"] = setting(
        "lexicographic", "how optimal policies break exact ties (saijax.analysis.theory docstring)"
    )


# --------------------------------------------------------------------------
# Proposition 1.


def bandit_grid_check(mu_values, sigma_values):
    """Compares Proposition 1's condition with E[score] and Phi(mu/sigma).

    Args:
      mu_values: 1-D grid of means, used for both arms.
      sigma_values: 1-D grid of standard deviations, used for both arms.

    Returns:
      ``(condition, brute_force)``: boolean arrays over the 4-D grid
      ``[mu1, mu2, sigma1, sigma2]``.
    """
    mu1, mu2, sigma1, sigma2 = np.meshgrid(mu_values, mu_values, sigma_values, sigma_values, indexing="ij")
    condition = theory.bandit_conflict(mu1, mu2, sigma1, sigma2)
    brute_force = (mu1 > mu2) & (theory.bandit_outcome_value(mu1, sigma1) < theory.bandit_outcome_value(mu2, sigma2))
    return condition, brute_force


def bandit_panels(mu2_values=(1.0, -1.0), sigma2=1.0, num=241):
    """The (mu1, sigma1) maps drawn by :func:`plot_bandit`, one per mu2."""
    panels = []
    for mu2 in mu2_values:
        mu1 = np.linspace(-3.0, 3.0, num)
        sigma1 = np.linspace(0.02, 3.0, num)
        grid_mu1, grid_sigma1 = np.meshgrid(mu1, sigma1, indexing="xy")
        condition = theory.bandit_conflict(grid_mu1, mu2, grid_sigma1, sigma2)
        brute = (grid_mu1 > mu2) & (
            theory.bandit_outcome_value(grid_mu1, grid_sigma1) < theory.bandit_outcome_value(mu2, sigma2)
        )
        panels.append(
            dict(mu2=mu2, sigma2=sigma2, mu1=grid_mu1, sigma1=grid_sigma1, condition=condition, brute_force=brute)
        )
    return panels


def plot_bandit(axes, panels):
    """Draws Proposition 1's conflict region, one panel per second arm."""
    for ax, panel in zip(axes, panels):
        mu2, sigma2 = panel["mu2"], panel["sigma2"]
        mu1, sigma1 = panel["mu1"], panel["sigma1"]
        ax.contourf(mu1, sigma1, panel["condition"].astype(float), levels=[0.5, 1.5], colors=["#f4a582"])
        line_mu1 = mu1[0]
        boundary = sigma2 * line_mu1 / mu2
        side = (line_mu1 > mu2) if mu2 > 0 else ((line_mu1 > mu2) & (line_mu1 < 0))
        ax.plot(line_mu1[side], boundary[side], "k-", lw=1.5, label=r"$\sigma_1 = \sigma_2\,\mu_1/\mu_2$")
        ax.plot([mu2], [sigma2], "ko", ms=7, label=r"arm 2 $(\mu_2, \sigma_2)$")
        ax.axvline(0.0, color="0.6", lw=0.8)
        ax.set_ylim(0.0, sigma1.max())
        ax.set_xlim(mu1.min(), mu1.max())
        state = "winning" if mu2 > 0 else "losing"
        prefers = "lower" if mu2 > 0 else "higher"
        ax.set_title(f"{state}: arm 2 = N({mu2:g}, {sigma2:g}²)\nshaded: outcome picks the {prefers}-variance arm 2")
        ax.set_xlabel(r"$\mu_1$ (score prefers arm 1 iff $\mu_1 > \mu_2$)")
        ax.set_ylabel(r"$\sigma_1$")
        ax.legend(loc="upper left", fontsize=8)


# --------------------------------------------------------------------------
# Figs. 3 and 4.


def plot_level_loss(ax, level_loss: theory.LevelLoss, title=""):
    """Fig. 3: mean winrate lost by the score-optimal policy, per level."""
    levels = np.arange(level_loss.mean.size)
    ax.plot(levels, level_loss.mean, "o-", color=OUTCOME_COLOUR)
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.set_xticks(levels)
    ax.set_xlabel("level of the state (0 = root, d = leaves)")
    ax.set_ylabel(
        r"mean $v^{outcome}_{\pi_{outcome}}(s) - "
        r"v^{outcome}_{\pi_{score}}(s)$"
    )
    ax.set_title(title or "Fig. 3: average outcome loss of the score policy")


def plot_variance_preference(ax, centers, median_outcome, median_score, title=""):
    """Fig. 4: median log variance ratio (chosen / discarded) per winrate bin."""
    ax.plot(centers, median_outcome, ".-", color=OUTCOME_COLOUR, lw=1, label=r"$\pi^+ = \pi_{outcome}$")
    ax.plot(centers, median_score, ".-", color=SCORE_COLOUR, lw=1, label=r"$\pi^+ = \pi_{score}$")
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.axvline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(r"best winrate $v^{outcome}_{\pi_{outcome}}(s)$")
    ax.set_ylabel(
        r"median $\log Var_{\pi^+}(r|s,\pi^+(s)) - "
        r"\log Var_{\pi^+}(r|s,\pi^-(s))$"
    )
    ax.set_title(title or "Fig. 4: score-variance preference where the policies disagree")
    ax.legend()


def run(settings: Settings) -> None:
    """Computes, prints, and writes the PNG and CSV files."""
    plt = common.pyplot()
    os.makedirs(settings.outdir, exist_ok=True)
    start = time.perf_counter()

    # Proposition 1 on a 4-D grid: |mu / sigma| <= 6, so Phi never rounds to 1.
    condition, brute = bandit_grid_check(np.arange(-3.0, 3.01, 0.25), np.arange(0.5, 3.01, 0.25))
    mismatches = int((condition != brute).sum())
    print(
        f"Proposition 1: the condition matches E[score] vs Phi(mu/sigma) on "
        f"{condition.size - mismatches}/{condition.size} grid points "
        f"({int(brute.sum())} conflicts)"
    )
    common.write_csv(
        os.path.join(settings.outdir, "prop1_check.csv"),
        [{"grid_points": condition.size, "matches": condition.size - mismatches, "conflicts": int(brute.sum())}],
    )
    panels = bandit_panels()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    plot_bandit(axes, panels)
    common.save_figure(fig, os.path.join(settings.outdir, "prop1_bandit.png"))
    rows = []
    for panel in panels:
        for m1, s1, c, b in zip(
            panel["mu1"].ravel(), panel["sigma1"].ravel(), panel["condition"].ravel(), panel["brute_force"].ravel()
        ):
            rows.append((f"{m1:.6g}", f"{s1:.6g}", panel["mu2"], panel["sigma2"], int(c), int(b)))
    common.write_csv(
        os.path.join(settings.outdir, "prop1_bandit.csv"),
        rows,
        ("mu1", "sigma1", "mu2", "sigma2", "condition", "brute_force"),
    )

    # Figs. 3 and 4.
    mdp_start = time.perf_counter()
    rng = np.random.default_rng(settings.seed)
    mdp = theory.random_tree_mdps(
        rng, settings.num_mdps, branch=settings.branch, depth=settings.depth, num_actions=settings.num_actions
    )
    solution = theory.solve_tree_mdps(mdp, tie_break=settings.tie_break)
    level_loss = theory.outcome_loss_by_level(solution)
    preference = theory.variance_preference(solution)
    solve_seconds = time.perf_counter() - mdp_start

    print(
        f"\n{settings.num_mdps} action-shared tree MDPs, b={settings.branch}, "
        f"d={settings.depth}, {settings.num_actions} actions, seed {settings.seed}, "
        f"tie-break {settings.tie_break}"
    )
    print("Fig. 3: v_outcome^pi_outcome - v_outcome^pi_score by level")
    print(f"{'level':>5} {'states':>9} {'mean loss':>11} {'P(loss>0)':>10} {'max loss':>9}")
    for level in range(level_loss.mean.size):
        print(
            f"{level:5d} {level_loss.num_states[level]:9d} "
            f"{level_loss.mean[level]:11.6f} "
            f"{level_loss.fraction_positive[level]:10.4f} "
            f"{level_loss.max[level]:9.4f}"
        )
    common.write_csv(
        os.path.join(settings.outdir, "fig3_outcome_loss_by_level.csv"),
        [
            (
                level,
                level_loss.num_states[level],
                f"{level_loss.mean[level]:.8g}",
                f"{level_loss.fraction_positive[level]:.8g}",
                f"{level_loss.max[level]:.8g}",
            )
            for level in range(level_loss.mean.size)
        ],
        ("level", "num_states", "mean_loss", "fraction_positive", "max_loss"),
    )
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    plot_level_loss(
        ax,
        level_loss,
        title=(
            f"Fig. 3: {settings.num_mdps} MDPs, b={settings.branch}, d={settings.depth}, {settings.num_actions} actions"
        ),
    )
    common.save_figure(fig, os.path.join(settings.outdir, "fig3_outcome_loss_by_level.png"))

    winrate = preference.winrate
    centers, med_outcome, counts = theory.binned_median(
        winrate, preference.log_ratio_outcome, num_bins=settings.num_bins
    )
    _, med_score, _ = theory.binned_median(winrate, preference.log_ratio_score, num_bins=settings.num_bins)
    _, med_printed, _ = theory.binned_median(winrate, preference.log_ratio_printed, num_bins=settings.num_bins)
    common.write_csv(
        os.path.join(settings.outdir, "fig4_variance_log_ratio.csv"),
        [
            (f"{c:.4f}", n, f"{o:.6g}", f"{s:.6g}", f"{p:.6g}")
            for c, n, o, s, p in zip(centers, counts, med_outcome, med_score, med_printed)
        ],
        ("bin_center", "count", "median_outcome_pov", "median_score_pov", "median_printed_formula"),
    )
    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    plot_variance_preference(ax, centers, med_outcome, med_score)
    common.save_figure(fig, os.path.join(settings.outdir, "fig4_variance_log_ratio.png"))

    decision_states = int(level_loss.num_states[:-1].sum())
    print(
        f"\nFig. 4: the policies disagree in {preference.num_disagreements} "
        f"of {decision_states} decision states "
        f"({preference.num_zero_variance} dropped for a zero variance)"
    )
    for name, y in (("pi+ = pi_outcome", preference.log_ratio_outcome), ("pi+ = pi_score", preference.log_ratio_score)):
        for label, mask in (("losing (winrate < 0.5)", winrate < 0.5), ("winning (winrate > 0.5)", winrate > 0.5)):
            if mask.any():
                print(
                    f"  {name:17s} {label:24s} median y = "
                    f"{np.median(y[mask]):+.4f}, P(y > 0) = "
                    f"{np.mean(y[mask] > 0):.3f}  ({int(mask.sum())} states)"
                )
    print(
        f"\nwrote PNG and CSV files to {settings.outdir}; "
        f"{time.perf_counter() - start:.2f} s in all "
        f"({solve_seconds:.2f} s to draw and solve the MDPs)"
    )
