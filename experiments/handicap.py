"""Handicap by komi and by stones: Figs. 3 and 4 of the SAI 9×9 paper, on 7×7.

    python experiments/handicap.py --outdir=experiments/results/go7_handicap           # zoo nets, 7×7
    python experiments/handicap.py --strong=S=runs/go7/checkpoints/150 \\
        --weak=W=runs/go7/checkpoints/20 --games=20 --visits=32 --outdir=/tmp/handicap

Paper: [SAI-9x9] §3.7 and §4.1 (Figs. 3 and 4), with the extended version's
wording [SAI-ext] §4.1 (references in docs/design.md). Every net plays with
λ = μ = 0 (the plain SAI agent); games are played in lockstep by
:func:`saijax.arena.play_match`. Two experiments:

* **Fig. 3, handicap by komi.** Each strong net plays itself and each weak
  net, colours alternating (half the games as Black), with the komi moved
  ``m`` points against the strong net in colour-relative terms
  (:func:`saijax.arena.colour_relative_komi`): Black's komi is
  ``komi + m`` when the strong net is Black and ``komi − m`` when it is
  White, so either way it must win by m more points than in the even game.
  Plotted: the strong net's win rate against m with 95% Wilson intervals,
  one panel per strong net and colour, one line per opponent.
* **Fig. 4, handicap by stones and komi.** Each strong net plays White
  against the weakest weak net (the last of ``--weak``, the paper's W3).
  Score handicap: H1 (no stones, Black first) at the komis ``--h1_komis``
  (H1 proper is komi 0.5; lower komi is worse for White). Positional
  handicap: H2 (two GTP fixed stones, White first) at the komis
  ``--h2_komis``, in White's favour. Plotted: the strong net's win rate
  against the (absolute) komi, H1 left, H2 right, one line per strong net;
  the komi axis runs from high to low, so the disadvantage grows to the
  right as in the paper.

From 9×9 to 7×7 (the defaults; every one is a flag):

* **Even komi 9.5.** 7×7's fair komi is 9 (perfect play wins B+9,
  [SAI-9x9] §2.4), so 9.5 is to 7×7 what 7.5 is to 9×9 (fair komi 7): the
  fair komi plus the half point that rules out draws. White is favoured by
  half a point, as on 9×9.
* **Maluses 0, 1, ..., 5** (Fig. 3). The paper's 0–8 points (0, 2, 4, 6, 8
  in its text) scaled by the board area, 49/81: 8 × 49/81 ≈ 4.8, so 0..5,
  in steps of one point (the smallest step that keeps the komi a half
  integer).
* **H1 komis 2.5, 1.5, 0.5, −0.5, −1.5** (Fig. 4, left). H1 keeps its
  traditional meaning on both boards: no stones, Black first, komi 0.5, so
  the whole fair komi is taken from White (7 points on 9×9, 9 on 7×7). The
  paper's severe cases are H1 and "H1 with an additional negative malus
  point" (−0.5); the defaults add two milder levels and one more severe,
  one point apart, between Fig. 3's last malus (komi 4.5) and beyond.
* **H2 komis 0.5, 8.5, 10.5, 13.5** (Fig. 4, right). On 7×7, H2 is stones
  on C3 and E5 and White moves first. The paper played H2 at komi 0.5, 6.5,
  8.5 and 10.5 ("with 10.5 the game was again approximately even"). That
  komi pays for tempo (a free stone), and a tempo is worth what the fair
  komi measures, so the non-trivial levels scale with the fair komi, 9/7,
  not with the area: 6.5, 8.5, 10.5 → 8.4, 10.9, 13.5, rounded to 8.5,
  10.5, 13.5. The nets' own view of H2 is in ``start_positions.csv``
  (below): the komi at which each net thinks the H2 start is even.
* **Games and visits.** The paper played 400 games per cell with 1,000
  visits, after a 100-game calibration; the defaults (100 games, 64 visits,
  twice the go7 run's self-play search) fit a CPU. No one resigns by
  default (``--resign_threshold`` to allow it): the games are short on 7×7,
  and a strong net facing a handicap would otherwise resign at once, so the
  win rates measure play, not the resign rule.

Nets (``--strong``, ``--weak``) are comma lists of ``[NAME=]SPEC``, SPEC a
checkpoint (``<workdir>/checkpoints/<gen>``), a workdir or ``zoo:<name>``;
without ``NAME=`` a net is named after its zoo entry or generation. A net
playing itself meets a copy named ``<name>-copy``.

Outputs in ``--outdir``:

* ``games.csv``: every game, the results table of :mod:`saijax.results`
  (Fig. 3 games have handicap 0, Fig. 4 games handicap 1 or 2); a new run
  replaces it.
* ``conditions.csv``: the condition of every game, keyed by
  (black, white, komi, handicap): figure, strong net, opponent, the strong
  net's colour, malus, λ.
* ``fig3_summary.csv``: per strong net, opponent, malus and colour of the
  strong net (``black``, ``white`` and ``both``): Black's komi, games,
  wins, draws, losses, win rate (draws half), 95% Wilson interval, the
  strong net's mean margin and mean winning margin.
* ``fig4_summary.csv``: the same per strong net, handicap (1 or 2) and komi;
  its malus is 0.5 − komi, the points given up against the plain handicap
  (komi 0.5; negative when White gets komi back).
* ``fig3_handicap_by_komi.png``, ``fig4_handicap_by_stones.png``.
* ``start_positions.csv``: each net's α and β on the even and H2 start
  positions, and the komi (Black's) at which it thinks that start is even.

``--plot_only`` redraws the PNGs from the summaries in ``--outdir``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

if __package__ in (None, ""):
    # Run as a script from a checkout: make `saijax` importable without install.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.nets import load_nets, parse_list, parse_nets  # noqa: E402
from saijax import arena, go, players, results  # pylint: disable=g-import-not-at-top

# 7×7 defaults (module docstring, "From 9×9 to 7×7").
EVEN_KOMI = 9.5
MALUSES = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
H1_KOMIS = (2.5, 1.5, 0.5, -0.5, -1.5)
H2_KOMIS = (0.5, 8.5, 10.5, 13.5)
PLAIN_HANDICAP_KOMI = 0.5  # H1, and H2 with no komi in White's favour: the papers' "komi 0.5"
STRONG = "zoo:go7-S1,zoo:go7-S2,zoo:go7-S3"
WEAK = "zoo:go7-W1,zoo:go7-W2,zoo:go7-W3"

# The summary CSVs' columns (one row per cell and colour of the strong net).
SUMMARY_COLUMNS = tuple(
    "figure strong opponent lambda mu handicap malus strong_colour komi "
    "games wins draws losses win_rate wilson_lo wilson_hi mean_margin mean_win_margin".split()
)
# conditions.csv: the condition of the games with these (black, white, komi, handicap).
CONDITION_COLUMNS = tuple("black white komi handicap figure strong opponent strong_colour malus lambda mu".split())


# --------------------------------------------------------------------------
# Nets.


def check_names(nets: Sequence[players.Player]) -> None:
    """Raises ValueError if two nets share a name (the games table tells nets apart by name)."""
    names = [p.name for p in nets]
    for name in names:
        if names.count(name) > 1 or f"{name}-copy" in names:
            raise ValueError(f"two nets are named {name!r} (or its copy's name); name them with NAME=SPEC")


# --------------------------------------------------------------------------
# Conditions and matches.


@dataclasses.dataclass(frozen=True)
class Condition:
    """One cell of a figure: games of a strong net against an opponent under one setting.

    Attributes:
      figure: "fig3", "fig4" or "fig7".
      opponent: the opponent's label in tables and plots ("itself" for a
        net against its copy).
      handicap: 0 (even), 1 (H1) or >= 2 stones, White first.
      malus: points against the strong net relative to the setting's base
        komi: the even komi in Fig. 3, the plain handicap's 0.5 in Fig. 4,
        the recovery experiment's base komis in Fig. 7.
      komi_black: Black's komi when the strong net has Black.
      komi_white: Black's komi when the strong net has White.
    """

    figure: str
    opponent: str
    handicap: int
    malus: float
    komi_black: float
    komi_white: float


def malus_conditions(figure: str, opponent: str, maluses: Sequence[float], komi: float) -> list[Condition]:
    """Even games with ``m`` points against the strong net, colour-relative (Fig. 3)."""
    out = []
    for m in maluses:
        as_black, as_white = arena.colour_relative_komi(komi, m, [True, False])
        out.append(Condition(figure, opponent, 0, float(m), as_black, as_white))
    return out


def white_conditions(figure: str, opponent: str, handicap: int, komis: Sequence[float], *, base: float):
    """The strong net as White at each of ``komis``; its malus is ``base − komi`` (Figs. 4 and 7)."""
    return [Condition(figure, opponent, int(handicap), float(base - k), float(k), float(k)) for k in komis]


@dataclasses.dataclass(frozen=True)
class Played:
    """A played game and its condition."""

    condition: Condition
    strong: str  # the strong player's name in the games table
    game: results.GameResult


def play_conditions(
    strong: players.Player,
    opponent: players.Player,
    conditions: Sequence[Condition],
    *,
    games: int,
    colours: str,
    seed: int,
    max_batch: int = 1024,
    resign_threshold: float | None = None,
    score_visits: int | None = 1000,
    opening_moves: int = 0,
    results_path: str | None = None,
    log: Callable[[str], None] | None = None,
) -> list[Played]:
    """Plays ``games`` games per condition between ``strong`` (side A) and ``opponent``.

    The conditions are batched into lockstep matches of at most
    ``max_batch`` games (whole conditions; at least one per match), with one
    komi and handicap per game. With ``colours="alternate"`` the strong net
    has Black in the even-numbered games of each condition, so ``games``
    must be even; with ``"a_white"`` or ``"a_black"`` it keeps one colour.

    Args:
      strong, opponent: the two players (distinct names).
      conditions: the cells to play.
      games: games per condition.
      colours: :class:`saijax.arena.MatchSettings` colours, side A = strong.
      seed: match seeds are ``seed + k`` for the k-th lockstep match.
      max_batch: most games per lockstep match.
      resign_threshold, score_visits, opening_moves, results_path: as in
        :class:`saijax.arena.MatchSettings`.
      log: called with a line per game.

    Returns:
      One :class:`Played` per game.
    """
    if colours == "alternate" and games % 2:
        raise ValueError(f"--games must be even when colours alternate (half the games as Black), got {games}")
    per_match = max(1, int(max_batch) // int(games))
    out = []
    for k, start in enumerate(range(0, len(conditions), per_match)):
        chunk = conditions[start : start + per_match]
        n = games * len(chunk)
        a_black = arena.MatchSettings(games=n, colours=colours).side_a_black()
        cond = [c for c in chunk for _ in range(games)]
        settings = arena.MatchSettings(
            games=n,
            komi=tuple(c.komi_black if b else c.komi_white for c, b in zip(cond, a_black)),
            handicap=tuple(c.handicap for c in cond),
            colours=colours,
            seed=int(seed) + k,
            resign_threshold=resign_threshold,
            score_visits=score_visits,
            opening_moves=opening_moves,
            results_path=results_path,
        )
        played = arena.play_match(strong, opponent, settings, log=log)
        out.extend(Played(c, strong.name, g) for c, g in zip(cond, played))
    return out


# --------------------------------------------------------------------------
# Tables.


def _strong_colour(p: Played) -> str:
    return "black" if p.game.black == p.strong else "white"


def condition_rows(played: Sequence[Played], agents: dict[str, tuple[float, float]] | None = None) -> list[dict]:
    """One row per distinct (black, white, komi, handicap): the condition of those games."""
    rows: dict[tuple, dict] = {}
    for p in played:
        g = p.game
        key = (g.black, g.white, g.komi, g.handicap)
        lam, mu = (agents or {}).get(p.strong, (0.0, 0.0))
        row = dict(
            black=g.black,
            white=g.white,
            komi=g.komi,
            handicap=g.handicap,
            figure=p.condition.figure,
            strong=p.strong,
            opponent=p.condition.opponent,
            strong_colour=_strong_colour(p),
            malus=p.condition.malus,
            mu=mu,
            **{"lambda": lam},
        )
        if key in rows and rows[key] != row:
            raise ValueError(f"two conditions share the games key {key}: {rows[key]} and {row}")
        rows[key] = row
    return list(rows.values())


def _stats_row(base: dict, colour: str, komi, stats: results.ColourStats) -> dict:
    lo, hi = results.wilson_interval(stats.wins + 0.5 * stats.draws, stats.games)
    return {
        **base,
        "strong_colour": colour,
        "komi": komi,
        "games": stats.games,
        "wins": stats.wins,
        "draws": stats.draws,
        "losses": stats.losses,
        "win_rate": round(stats.win_rate, 4),
        "wilson_lo": round(lo, 4),
        "wilson_hi": round(hi, 4),
        "mean_margin": round(stats.mean_margin, 2),
        "mean_win_margin": round(stats.mean_win_margin, 2),
    }


def summary_rows(played: Sequence[Played], agents: dict[str, tuple[float, float]] | None = None) -> list[dict]:
    """Win rates per condition and strong net, split by the strong net's colour.

    Each (strong net, condition) gives a row per colour the strong net
    played, and a ``both`` row when it played both; columns
    :data:`SUMMARY_COLUMNS`. Draws count half; the intervals are 95% Wilson.
    """
    cells: dict[tuple[str, Condition], list[results.GameResult]] = {}
    for p in played:
        cells.setdefault((p.strong, p.condition), []).append(p.game)
    rows = []
    for (strong, c), games in cells.items():
        lam, mu = (agents or {}).get(strong, (0.0, 0.0))
        s = results.summarize(games, strong)
        base = dict(figure=c.figure, strong=strong, opponent=c.opponent, mu=mu, handicap=c.handicap, malus=c.malus)
        base["lambda"] = lam
        colours = [("black", c.komi_black, s.black), ("white", c.komi_white, s.white)]
        for colour, komi, stats in colours:
            if stats.games:
                rows.append(_stats_row(base, colour, komi, stats))
        if s.black.games and s.white.games:
            rows.append(_stats_row(base, "both", "", s.overall))
    return [{k: r[k] for k in SUMMARY_COLUMNS} for r in rows]


def write_csv(path: str, rows: Sequence[dict], columns: Sequence[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)


def read_summary(path: str) -> list[dict]:
    """A summary CSV written by :func:`write_csv`, numbers as floats."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    text = ("figure", "strong", "opponent", "strong_colour")
    return [{k: (v if k in text or v == "" else float(v)) for k, v in r.items()} for r in rows]


def format_table(rows: Sequence[dict]) -> str:
    """The summary as text: one line per cell, win rate and Wilson interval in %."""
    lines = [
        f"{'strong':>14s} {'opponent':>10s} {'lambda':>6s} {'H':>2s} {'malus':>6s} {'colour':>6s} {'komi':>5s} "
        f"{'games':>5s} {'win %':>6s} {'95% Wilson':>13s} {'margin':>7s}"
    ]
    for r in rows:
        komi = "" if r["komi"] == "" else f"{float(r['komi']):g}"
        margin = float(r["mean_margin"])
        lines.append(
            f"{r['strong']:>14s} {r['opponent']:>10s} {float(r['lambda']):6g} {int(r['handicap']):2d} "
            f"{float(r['malus']):6g} {r['strong_colour']:>6s} {komi:>5s} {int(r['games']):5d} "
            f"{100 * float(r['win_rate']):6.1f} [{100 * float(r['wilson_lo']):4.1f}, "
            f"{100 * float(r['wilson_hi']):5.1f}] {'' if math.isnan(margin) else f'{margin:+7.1f}'}"
        )
    return "\n".join(lines)


def start_positions(nets: Sequence[players.Player], handicaps: Sequence[int]) -> list[dict]:
    """Each net's α, β on the start positions, and the komi at which it thinks them even.

    α is the lead of the player to move, before komi (docs/design.md §4):
    Black's with no stones or H1, White's with H >= 2 stones. The even komi
    (Black's) is α when Black is to move and −α when White is.
    """
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    rows = []
    for net in nets:
        rules = go.GoRules(net.board_size)
        for h in handicaps:
            state = jax.vmap(lambda k: go.init(rules, k, h))(jnp.zeros(1, jnp.float32))
            _, alpha, beta = net.evaluator(net.variables, state)
            alpha, beta, to_play = (float(np.asarray(v)[0]) for v in (alpha, beta, state.to_play))
            rows.append(
                dict(
                    net=net.name,
                    handicap=h,
                    to_play="black" if to_play > 0 else "white",
                    alpha=round(alpha, 3),
                    beta=round(beta, 4),
                    even_komi=round(alpha if to_play > 0 else -alpha, 2),
                )
            )
    return rows


# --------------------------------------------------------------------------
# Figures.


def plot_win_rates(ax, x, rows, **kwargs):
    """Win rates of summary ``rows`` at ``x`` with their Wilson intervals as error bars."""
    y = np.array([float(r["win_rate"]) for r in rows])
    lo = np.array([float(r["wilson_lo"]) for r in rows])
    hi = np.array([float(r["wilson_hi"]) for r in rows])
    ax.errorbar(x, y, yerr=[y - lo, hi - y], capsize=3, ms=4, **kwargs)


def _select(rows, **where):
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def plot_fig3(rows: Sequence[dict], title: str = ""):
    """Fig. 3: the strong net's win rate against the malus, one line per opponent.

    Panels: one column per strong net, the strong net as White (top) and as
    Black (bottom). Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    rows = _select(rows, figure="fig3")
    strong = list(dict.fromkeys(r["strong"] for r in rows))
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    fig, axes = plt.subplots(
        2, max(1, len(strong)), figsize=(3.6 * max(1, len(strong)) + 1, 6.5), squeeze=False, sharex=True, sharey=True
    )
    for j, s in enumerate(strong):
        for i, colour in enumerate(("white", "black")):
            ax = axes[i, j]
            for k, opp in enumerate(opponents):
                sel = sorted(_select(rows, strong=s, opponent=opp, strong_colour=colour), key=lambda r: r["malus"])
                if sel:
                    x = np.array([float(r["malus"]) for r in sel]) + 0.06 * (k - (len(opponents) - 1) / 2)
                    plot_win_rates(ax, x, sel, fmt="o-", label=opp)
            ticks = sorted({float(r["malus"]) for r in rows})
            ax.set_xticks(ticks)
            ax.set_xlim(ticks[0] - 0.5, ticks[-1] + 0.5)
            ax.set_ylim(-0.03, 1.03)
            ax.axhline(0.5, color="0.7", lw=0.8, ls=":")
            ax.set_title(f"{s} as {colour}")
            if i == 1:
                ax.set_xlabel("malus (points against the strong net)")
            if j == 0:
                ax.set_ylabel("strong net's win rate (95% Wilson)")
    axes[0, -1].legend(title="opponent", fontsize=8)
    fig.suptitle(title or "Fig. 3: handicap by komi")
    fig.tight_layout()
    return fig


def plot_fig4(rows: Sequence[dict], title: str = ""):
    """Fig. 4: the strong nets' win rate as White against the komi, H1 (left) and H2 (right).

    The komi axis decreases to the right (more disadvantage), as in the
    paper. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    rows = _select(rows, figure="fig4", strong_colour="white")
    strong = list(dict.fromkeys(r["strong"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for ax, h, label in ((axes[0], 1, "score handicap: H1, komi below 0.5 = malus"), (axes[1], 2, "H2: two stones")):
        for k, s in enumerate(strong):
            sel = sorted(_select(rows, strong=s, handicap=h), key=lambda r: -float(r["komi"]))
            if sel:
                x = np.array([float(r["komi"]) for r in sel]) + 0.06 * (k - (len(strong) - 1) / 2)
                plot_win_rates(ax, x, sel, fmt="o-", label=s)
        ticks = sorted({float(r["komi"]) for r in rows if float(r["handicap"]) == h})
        if ticks:
            ax.set_xticks(ticks)
            ax.set_xlim(ticks[-1] + 0.5, ticks[0] - 0.5)  # high komi on the left
        ax.set_ylim(-0.03, 1.03)
        ax.axhline(0.5, color="0.7", lw=0.8, ls=":")
        ax.set_xlabel("komi (to the right: worse for White)")
        ax.set_title(label)
    axes[0].set_ylabel("strong net's win rate as White (95% Wilson)")
    opponents = sorted({r["opponent"] for r in rows})
    axes[1].legend(title="strong net", fontsize=8)
    fig.suptitle(title or f"Fig. 4: strong nets as White vs {', '.join(opponents)}")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------
# The experiment.


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--strong", default=STRONG, help="strong nets: comma list of [NAME=]SPEC")
    p.add_argument("--weak", default=WEAK, help="weak nets, strongest first (the last plays Fig. 4)")
    p.add_argument("--board_size", type=int, default=7)
    p.add_argument("--games", type=int, default=100, help="games per cell (the paper: 400); even for Fig. 3")
    p.add_argument("--visits", type=int, default=64, help="simulations per move, every net (the paper: 1,000)")
    p.add_argument("--gumbel_scale", type=float, default=1.0, help="search noise (0: deterministic)")
    p.add_argument("--komi", type=float, default=None, help="the even game's komi (7x7: 9.5)")
    p.add_argument("--maluses", default=None, help="Fig. 3 maluses (7x7: 0,1,2,3,4,5)")
    p.add_argument("--h1_komis", default=None, help="Fig. 4 H1 komis (7x7: 2.5,1.5,0.5,-0.5,-1.5); '' skips")
    p.add_argument("--h2_komis", default=None, help="Fig. 4 H2 komis (7x7: 0.5,8.5,10.5,13.5); '' skips")
    p.add_argument("--figures", default="3,4", help="which figures to play")
    p.add_argument("--resign_threshold", type=float, default=None, help="let nets resign (default: never)")
    p.add_argument("--score_visits", type=int, default=1000, help="score-estimate search at a resignation")
    p.add_argument("--opening_moves", type=int, default=0, help="random opening moves per game pair")
    p.add_argument("--max_batch", type=int, default=1024, help="most games per lockstep match")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--outdir", default="runs/handicap")
    p.add_argument("--plot_only", action="store_true", help="redraw the PNGs from --outdir's summaries")
    p.add_argument("--verbose", action="store_true", help="a line per game")
    args = p.parse_args(argv)
    seven = args.board_size == 7
    for flag, default in (("komi", EVEN_KOMI), ("maluses", MALUSES), ("h1_komis", H1_KOMIS), ("h2_komis", H2_KOMIS)):
        if getattr(args, flag) is None:
            if not seven and not args.plot_only:
                p.error(f"--{flag} has a default for 7x7 only; give it for {args.board_size}x{args.board_size}")
            setattr(args, flag, default if flag == "komi" else ",".join(f"{v:g}" for v in default))
    return args


def run(args: argparse.Namespace) -> dict[str, list[dict]]:
    """Plays the figures' games and writes the tables and PNGs; returns the summary rows by figure."""
    figures = set(parse_list(args.figures, str))
    nets = dict(board_size=args.board_size, visits=args.visits, gumbel_scale=args.gumbel_scale)
    strong = load_nets(parse_nets(args.strong), **nets)
    weak = load_nets(parse_nets(args.weak), **nets)
    if not strong or not weak:
        raise ValueError("need at least one strong and one weak net")
    check_names([*strong, *weak])
    os.makedirs(args.outdir, exist_ok=True)
    games_path = os.path.join(args.outdir, "games.csv")
    if os.path.exists(games_path):
        os.remove(games_path)
    log = (lambda line: print(line, flush=True)) if args.verbose else None
    common = dict(
        games=args.games,
        max_batch=args.max_batch,
        resign_threshold=args.resign_threshold,
        score_visits=args.score_visits,
        opening_moves=args.opening_moves,
        results_path=games_path,
        log=log,
    )
    t0 = time.time()
    played: list[Played] = []
    match = 0
    if "3" in figures:
        maluses = parse_list(args.maluses)
        for s in strong:
            for opp in [s.replace(name=f"{s.name}-copy"), *weak]:
                label = "itself" if opp.name == f"{s.name}-copy" else opp.name
                t = time.time()
                conditions = malus_conditions("fig3", label, maluses, args.komi)
                new = play_conditions(
                    s, opp, conditions, colours="alternate", seed=args.seed * 100_003 + match, **common
                )
                match += len(conditions)
                played.extend(new)
                rates = " ".join(
                    f"m={r['malus']:g}:{100 * r['win_rate']:.0f}%"
                    for r in summary_rows(new)
                    if r["strong_colour"] == "both"
                )
                print(f"fig3 {s.name} vs {label}: {len(new)} games, {time.time() - t:.0f}s; {rates}", flush=True)
    if "4" in figures:
        w3 = weak[-1]
        h1, h2 = parse_list(args.h1_komis), parse_list(args.h2_komis)
        for s in strong:
            t = time.time()
            conditions = [
                *white_conditions("fig4", w3.name, 1, h1, base=PLAIN_HANDICAP_KOMI),
                *white_conditions("fig4", w3.name, 2, h2, base=PLAIN_HANDICAP_KOMI),
            ]
            if not conditions:
                continue
            new = play_conditions(s, w3, conditions, colours="a_white", seed=args.seed * 100_003 + match, **common)
            match += len(conditions)
            played.extend(new)
            rates = " ".join(f"H{r['handicap']}@{r['komi']:g}:{100 * r['win_rate']:.0f}%" for r in summary_rows(new))
            print(f"fig4 {s.name} (W) vs {w3.name}: {len(new)} games, {time.time() - t:.0f}s; {rates}", flush=True)
    write_csv(os.path.join(args.outdir, "conditions.csv"), condition_rows(played), CONDITION_COLUMNS)
    summary = summary_rows(played)
    out = {}
    for fig in ("fig3", "fig4"):
        rows = [r for r in summary if r["figure"] == fig]
        if rows:
            write_csv(os.path.join(args.outdir, f"{fig}_summary.csv"), rows, SUMMARY_COLUMNS)
            out[fig] = rows
    handicaps = [0] + ([2] if "4" in figures and parse_list(args.h2_komis) else [])
    write_csv(
        os.path.join(args.outdir, "start_positions.csv"),
        start_positions([*strong, *weak], handicaps),
        ("net", "handicap", "to_play", "alpha", "beta", "even_komi"),
    )
    draw(args.outdir, out)
    print(f"{len(played)} games in {time.time() - t0:.0f}s; wrote {args.outdir}", flush=True)
    return out


def draw(outdir: str, summaries: dict[str, list[dict]]) -> None:
    """Writes the PNGs of the figures in ``summaries`` (figure -> summary rows)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    for fig_name, plot, png in (
        ("fig3", plot_fig3, "fig3_handicap_by_komi.png"),
        ("fig4", plot_fig4, "fig4_handicap_by_stones.png"),
    ):
        if summaries.get(fig_name):
            fig = plot(summaries[fig_name])
            fig.savefig(os.path.join(outdir, png), dpi=120)
            plt.close(fig)


def main(argv=None) -> int:
    args = parse_args(argv)
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    try:
        if args.plot_only:
            summaries = {}
            for fig in ("fig3", "fig4"):
                path = os.path.join(args.outdir, f"{fig}_summary.csv")
                if os.path.exists(path):
                    summaries[fig] = read_summary(path)
            if not summaries:
                raise FileNotFoundError(f"no fig3_summary.csv or fig4_summary.csv in {args.outdir}")
            draw(args.outdir, summaries)
            return 0
        summaries = run(args)
    except (ValueError, OSError) as e:
        print(f"handicap: error: {e}", file=sys.stderr)
        return 2
    for fig, rows in summaries.items():
        print(f"\n{fig}:")
        print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
