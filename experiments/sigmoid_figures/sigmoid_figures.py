"""SAI's explanatory sigmoid figures, drawn with `saijax.core.sigmoid`.

    python -m experiments.run --config=experiments/sigmoid_figures/config.py  # the shipped run (--config.redraw=True)
    sigmoid_figures.run(sigmoid_figures.Settings(outdir="runs/sigmoid_figures"))

Two figures (docs/design.md §4):

* fig1_sigmoids.png: the winrate model tau_s(x) = sigma(beta_s (alpha_s + x))
  of the extended SAI paper's Fig. 1 ([SAI-ext], arXiv:1905.10863,
  §2.1) for several positions. Each curve marks the signed komi k_s, the win
  probability tau_s(k_s) there, and -alpha_s, where tau_s = 1/2.
* ecai_fig1_interval_average.png: the ECAI paper's Fig. 1
  ([SAI-9x9] §2.3). Left: how x_mu and x_lambda come from
  the root's sigmoid, as pre-images of theta/2 + (1 - theta) tau_s(k_s).
  Right: a position r below the root; its value nu_r^{lambda,mu}(s) is the
  average of tau_r over [x_mu, x_lambda], the height of the rectangle with
  the same area as the shaded one.

Every number comes from `saijax.core.sigmoid` (`winrate`, `signed_komi`,
`bonus_for`, `agent_interval`, `interval_average`); this script only picks
example positions and draws. A CSV of the plotted numbers goes next to each
PNG. The drawing helpers are importable (colab/sigmoid.ipynb uses them).
"""

from __future__ import annotations

import dataclasses
import os
from typing import NamedTuple

import numpy as np

from experiments.lib import common
from experiments.lib.common import setting
from saijax.core import sigmoid

BLACK, WHITE = 1, -1  # `to_play` convention of saijax.core.sigmoid.signed_komi


class Position(NamedTuple):
    """A network evaluation of a position, for drawing."""

    alpha: float  # lead of the player to move, before komi, in points
    beta: float  # steepness (confidence in alpha)
    to_play: int  # BLACK (+1) or WHITE (-1)
    label: str


# Fig. 1 examples, komi 7.5: balanced, ahead but unsure, ahead and sure,
# behind. alpha is the board lead of the player to move, before komi.
EXAMPLES = (
    Position(7.5, 0.25, BLACK, "Black to move, balanced"),
    Position(15.0, 0.1, BLACK, "Black to move, ahead, unsure"),
    Position(15.0, 0.5, BLACK, "Black to move, ahead, sure"),
    Position(-12.0, 0.3, WHITE, "White to move, behind"),
)
# ECAI Fig. 1: a root s where Black leads, and a position r in its subtree.
ROOT = Position(20.0, 0.12, BLACK, "root s")
LEAF = Position(13.0, 0.2, BLACK, "position r")


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """The figures' settings: the examples' komi and the ECAI Fig. 1 agent."""

    outdir: str = "runs/sigmoid_figures"
    komi: float = setting(7.5, "the examples' komi")
    lambda_: float = setting(0.8, "lambda of the ECAI Fig. 1 agent")
    mu: float = setting(0.3, "mu of the ECAI Fig. 1 agent, <= lambda")

    def check(self) -> None:
        super().check()
        if not 0.0 <= self.mu <= self.lambda_ <= 1.0:
            raise self.error("mu", f"needs 0 <= mu <= lambda_ <= 1 (lambda_ is {self.lambda_:g})")


# --------------------------------------------------------------------------
# Fig. 1: sigmoids.


def sigmoid_curves(positions, komi, x):
    """tau_s over x and the komi point of each position.

    Returns:
      One dict per position: ``tau`` [len(x)], ``signed_komi``,
      ``winrate_at_komi`` and ``balance`` (= -alpha, where tau = 1/2).
    """
    curves = []
    for p in positions:
        k = float(sigmoid.signed_komi(komi, p.to_play))
        curves.append(
            dict(
                position=p,
                tau=_f(sigmoid.winrate(p.alpha, p.beta, x)),
                signed_komi=k,
                winrate_at_komi=float(sigmoid.winrate(p.alpha, p.beta, k)),
                balance=-p.alpha,
            )
        )
    return curves


def plot_sigmoids(ax, x, curves, komi):
    """Draws Fig. 1: one sigmoid per position, with its komi point."""
    for i, c in enumerate(curves):
        p = c["position"]
        colour = f"C{i}"
        ax.plot(
            x,
            c["tau"],
            color=colour,
            label=(f"{p.label}: α={p.alpha:g}, β={p.beta:g}, τ(k)={c['winrate_at_komi']:.2f}"),
        )
        ax.plot([c["signed_komi"]], [c["winrate_at_komi"]], "o", color=colour)
        ax.plot([c["balance"]], [0.5], "x", color=colour, ms=7)
    for k, name in ((-komi, "Black"), (komi, "White")):
        ax.axvline(k, color="0.5", lw=0.8, ls="--")
        ax.annotate(f"k = {k:+g}\n({name} to move)", (k, 0.02), xytext=(3, 0), textcoords="offset points", fontsize=8)
    ax.axhline(0.5, color="0.7", lw=0.8)
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("bonus points x for the player to move")
    ax.set_ylabel(r"$\tau_s(x) = \sigma(\beta_s(\alpha_s + x))$")
    ax.set_title(
        f"Winrate as a sigmoid of bonus points (komi {komi:g}):\no = win probability at the signed komi, x = −α (τ = ½)"
    )
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)


# --------------------------------------------------------------------------
# ECAI Fig. 1: x_lambda, x_mu and the interval average nu.


def interval_example(root, leaf, komi, lambda_, mu):
    """The numbers of ECAI Fig. 1 for a root s and a position r below it."""
    k = float(sigmoid.signed_komi(komi, root.to_play))
    x_lambda, x_mu = (float(v) for v in sigmoid.agent_interval(root.alpha, root.beta, k, lambda_, mu, 0.0))
    tau_k = float(sigmoid.winrate(root.alpha, root.beta, k))
    # The two ends of the family, x_0 = k_s and x_1 = -alpha_s.
    x_zero, x_one = (float(sigmoid.bonus_for(theta, root.alpha, root.beta, k)) for theta in (0.0, 1.0))
    same_player = leaf.to_play == root.to_play
    nu = float(sigmoid.interval_average(leaf.alpha, leaf.beta, x_mu, x_lambda, same_player))
    return dict(
        signed_komi=k,
        winrate_at_komi=tau_k,
        lambda_=lambda_,
        mu=mu,
        x_lambda=x_lambda,
        x_mu=x_mu,
        x_zero=x_zero,
        x_one=x_one,
        level_lambda=lambda_ / 2 + (1 - lambda_) * tau_k,
        level_mu=mu / 2 + (1 - mu) * tau_k,
        nu=nu,
        leaf_winrate_at_komi=float(sigmoid.winrate(leaf.alpha, leaf.beta, k)),
        same_player=same_player,
    )


def plot_interval_average(axes, x, root, leaf, example):
    """Draws ECAI Fig. 1 on two axes: the root's construction, then nu_r."""
    k = example["signed_komi"]
    x_lambda, x_mu = example["x_lambda"], example["x_mu"]
    tau_root = _f(sigmoid.winrate(root.alpha, root.beta, x))
    tau_leaf = _f(sigmoid.winrate(leaf.alpha, leaf.beta, x))

    ax = axes[0]
    ax.plot(
        x,
        tau_root,
        "k",
        label=rf"root $\tau_s$: α={root.alpha:g}, "
        rf"β={root.beta:g}",
    )
    ax.axhline(0.5, color="0.7", lw=0.8)
    for name, xv, level, colour in (
        ("0", example["x_zero"], example["winrate_at_komi"], "0.3"),
        (rf"\mu={example['mu']:g}", x_mu, example["level_mu"], "tab:blue"),
        (rf"\lambda={example['lambda_']:g}", x_lambda, example["level_lambda"], "tab:red"),
        ("1", example["x_one"], 0.5, "0.3"),
    ):
        ax.plot([x.min(), xv], [level, level], ls=":", color=colour)
        ax.plot([xv, xv], [0.0, level], ls=":", color=colour)
        ax.plot([xv], [level], "o", color=colour)
        # Left of and above the dot: the rising curve is below there.
        ax.annotate(
            rf"$x_{{{name}}}$ = {xv:.2f}",
            (xv, level),
            xytext=(-6, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            color=colour,
            fontsize=9,
        )
    ax.set_title(
        r"$x_\theta = \tau_s^{-1}(\theta/2 + (1-\theta)\,"
        r"\tau_s(k_s))$: $x_0 = k_s$, $x_1 = -\alpha_s$",
        fontsize=10,
    )

    ax = axes[1]
    ax.plot(x, tau_root, color="0.7", lw=1, label=r"root $\tau_s$")
    ax.plot(x, tau_leaf, "tab:green", label=rf"$\tau_r$: α={leaf.alpha:g}, β={leaf.beta:g}")
    lo, hi = min(x_mu, x_lambda), max(x_mu, x_lambda)
    inside = (x >= lo) & (x <= hi)
    ax.fill_between(
        x[inside], 0.0, tau_leaf[inside], color="tab:green", alpha=0.25, label=r"$\int_{x_\mu}^{x_\lambda}\tau_r$"
    )
    ax.plot(
        [lo, hi, hi, lo, lo],
        [0, 0, example["nu"], example["nu"], 0],
        color="tab:purple",
        lw=1.5,
        label=rf"$\nu_r^{{\lambda,\mu}}(s)$ = {example['nu']:.3f}",
    )
    ax.axvline(k, color="0.5", lw=0.8, ls="--")
    ax.plot([k], [example["leaf_winrate_at_komi"]], "o", color="tab:green")
    ax.annotate(
        rf"$\tau_r(k_s)$ = {example['leaf_winrate_at_komi']:.3f}",
        (k, example["leaf_winrate_at_komi"]),
        xytext=(6, -12),
        textcoords="offset points",
        fontsize=8,
    )
    for xv, name in ((x_mu, r"$x_\mu$"), (x_lambda, r"$x_\lambda$")):
        ax.annotate(name, (xv, 0.0), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=9)
    ax.set_title(
        r"$\nu_r^{\lambda,\mu}(s)$ = average of $\tau_r$ over "
        r"$[x_\mu, x_\lambda]$ (rectangle area = shaded area)",
        fontsize=10,
    )
    for ax in axes:
        ax.set_xlim(x.min(), x.max())
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("bonus points x for the root player")
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("win probability")


def run(settings: Settings) -> None:
    """Computes, prints, and writes the PNG and CSV files."""
    plt = common.pyplot()
    os.makedirs(settings.outdir, exist_ok=True)
    x = np.linspace(-40.0, 30.0, 561)

    curves = sigmoid_curves(EXAMPLES, settings.komi, x)
    fig, ax = plt.subplots(figsize=(8, 5.8), constrained_layout=True)
    plot_sigmoids(ax, x, curves, settings.komi)
    common.save_figure(fig, os.path.join(settings.outdir, "fig1_sigmoids.png"))
    rows = []
    for c in curves:
        p = c["position"]
        rows += [(p.label, p.alpha, p.beta, "curve", f"{xv:g}", f"{t:.6f}") for xv, t in zip(x, c["tau"])]
        rows.append((p.label, p.alpha, p.beta, "signed_komi", f"{c['signed_komi']:g}", f"{c['winrate_at_komi']:.6f}"))
        rows.append((p.label, p.alpha, p.beta, "minus_alpha", f"{-p.alpha:g}", "0.5"))
    common.write_csv(
        os.path.join(settings.outdir, "fig1_sigmoids.csv"), rows, ("position", "alpha", "beta", "kind", "x", "winrate")
    )
    print(f"Fig. 1 (komi {settings.komi:g}):")
    for c in curves:
        p = c["position"]
        print(
            f"  {p.label:30s} alpha={p.alpha:6g} beta={p.beta:5g} "
            f"k_s={c['signed_komi']:+g} tau(k_s)={c['winrate_at_komi']:.4f}"
        )

    example = interval_example(ROOT, LEAF, settings.komi, settings.lambda_, settings.mu)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    plot_interval_average(axes, x, ROOT, LEAF, example)
    common.save_figure(fig, os.path.join(settings.outdir, "ecai_fig1_interval_average.png"))
    common.write_csv(
        os.path.join(settings.outdir, "ecai_fig1_interval_average.csv"),
        [("root_alpha", ROOT.alpha), ("root_beta", ROOT.beta), ("leaf_alpha", LEAF.alpha), ("leaf_beta", LEAF.beta)]
        + [(name, f"{value:.6g}") for name, value in example.items()],
        ("quantity", "value"),
    )
    print(
        f"ECAI Fig. 1 (lambda={settings.lambda_:g}, mu={settings.mu:g}): "
        f"tau_s(k_s)={example['winrate_at_komi']:.4f}, "
        f"x_mu={example['x_mu']:.3f}, x_lambda={example['x_lambda']:.3f}, "
        f"nu_r={example['nu']:.4f} "
        f"(tau_r(k_s)={example['leaf_winrate_at_komi']:.4f})"
    )
    print(f"wrote PNG and CSV files to {settings.outdir}")
