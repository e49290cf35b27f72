"""Handicap by komi and by stones: Figs. 3 and 4 of the SAI 9×9 paper, on 7×7.

    python -m experiments.run --config=experiments/handicap/config.py  # the shipped runs (--config.play=True)
    python experiments/handicap/handicap.py --outdir=runs/handicap           # zoo nets, 7×7, the defaults
    python experiments/handicap/handicap.py --strong=S=runs/go7/checkpoints/150 \\
        --weak=W=runs/go7/checkpoints/20 --games=20 --visits=32 --outdir=/tmp/handicap

Paper: [SAI-9x9] §3.7 and §4.1 (Figs. 3 and 4), with the extended version's
wording [SAI-ext] §4.1 (references in docs/design.md). Every net plays with
λ = μ = 0 (the plain SAI agent); games are played in lockstep by
:func:`saijax.play.arena.play_match`. Two experiments:

* **Fig. 3, handicap by komi.** Each strong net plays itself and each weak
  net, colours alternating (half the games as Black), with the komi moved
  ``m`` points against the strong net in colour-relative terms
  (:func:`saijax.play.match.colour_relative_komi`): Black's komi is
  ``komi + m`` when the strong net is Black and ``komi − m`` when it is
  White, so either way it must win by m more points than in the even game.
  Plotted: the strong net's win rate against m with 95% Wilson intervals,
  one panel per strong net and colour, one line per opponent.
  ``--no-itself`` leaves out the games against the net's own copy (e.g. a
  second process that plays only some weak nets, sharing ``--outdir``).
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
* **Calibrated maluses** (Fig. 3, ``--target_rates``, default 50%, 25%, 10%
  and 3%). A few points of komi mean little where games are won by 30, so
  besides ``--maluses`` each opponent also gets the maluses at which the
  strong nets' malus-0 margins against it (pooled over the strong nets)
  predict those win rates: the share of margins above m (a net that wins
  the even game by x points still wins at malus m < x if its play does not
  change). They are chosen after the malus-0 games (``--maluses`` must hold
  0), written to ``maluses.csv`` with the predicted rate, then played like
  the others; the games measure the real rate.
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
  twice the go7 run's self-play search) fit a CPU. Play is deterministic
  (the search's best move, the player defaults); ``--opening_moves`` random
  moves per game pair give variety. No one resigns by default
  (``--resign_threshold`` to allow it): the games are short on 7×7, and a
  strong net facing a handicap would otherwise resign at once, so the win
  rates measure play, not the resign rule. Before each figure the script
  prints the smallest fall in win rate its cells can detect (two-sample,
  one-sided α 0.05, power 0.8), per net and pooled over the strong nets.

Nets (``--strong``, ``--weak``) are comma lists of ``[NAME=]SPEC``, SPEC a
checkpoint (``<workdir>/checkpoints/<gen>``), a workdir or ``zoo:<name>``;
without ``NAME=`` a net is named after its zoo entry or generation. A net
playing itself meets a copy named ``<name>-copy``.

Outputs in ``--outdir``:

* ``games.csv``: every game, the results table of :mod:`saijax.analysis.results`
  (Fig. 3 games have handicap 0, Fig. 4 games handicap 1 or 2). A rerun
  resumes it: cells already played in full are kept (a cut-short cell is
  played again whole); ``--restart`` replays everything.
* ``sgf/<strong>-<opponent>/``: one SGF per game (the distinct-game counts),
  packed into ``sgf.tar.xz``.
* ``conditions.csv``: the condition of every game, keyed by
  (black, white, komi, handicap): figure, strong net, opponent, the strong
  net's colour, malus, λ.
* ``fig3_summary.csv``: per strong net, opponent, malus and colour of the
  strong net (``black``, ``white`` and ``both``): Black's komi, games,
  wins, draws, losses, win rate (draws half), 95% Wilson interval, the
  strong net's mean margin and mean winning margin, distinct games; with
  several strong nets also their pooled rows (``strong`` = ``S1-S3``, the
  paper's average).
* ``fig4_summary.csv``: the same per strong net, handicap (1 or 2) and komi;
  its malus is 0.5 − komi, the points given up against the plain handicap
  (komi 0.5; negative when White gets komi back). ``--fig4_games`` sets
  its games per cell.
* ``maluses.csv``: the calibrated maluses per opponent and target rate. A
  rerun keeps them (unless ``--restart``) when they cover its opponents and
  targets, so runs that share an ``--outdir`` but play different
  ``--strong`` nets (one process per core) play the same maluses.
* ``fig3_tests.csv``: each malus against malus 0 (same strong net or the
  pooled nets, opponent and colour): the two win rates and Fisher's exact
  test, one-sided (lower) and two-sided, with Holm and BH adjusted p over
  the pooled rows and over the per-net rows. ``fig4_tests.csv``: the same
  for each komi against the highest komi of its handicap.
* ``fig3_handicap_by_komi.png``, ``fig4_handicap_by_stones.png``.
* ``start_positions.csv``: each net's α and β on the even and H2 start
  positions, and the komi (Black's) at which it thinks that start is even.

``--plot_only`` redraws the PNGs from the summaries in ``--outdir``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence

import numpy as np

from experiments.lib import common, matches, stat_tables
from experiments.lib.common import setting
from saijax.analysis import stats

# 7×7 defaults (module docstring, "From 9×9 to 7×7").
EVEN_KOMI = 9.5
MALUSES = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
H1_KOMIS = (2.5, 1.5, 0.5, -0.5, -1.5)
H2_KOMIS = (0.5, 8.5, 10.5, 13.5)
TARGET_RATES = (0.5, 0.25, 0.1, 0.03)  # Fig. 3's calibrated maluses: the λ = 0 win rates they aim at
POOLED = "S1-S3"  # the strong column of the rows pooled over the strong nets (the paper's average)
PLAIN_HANDICAP_KOMI = 0.5  # H1, and H2 with no komi in White's favour: the papers' "komi 0.5"
STRONG, WEAK = matches.STRONG, matches.WEAK
FIGURES = (("fig3", "fig3_handicap_by_komi.png"), ("fig4", "fig4_handicap_by_stones.png"))


# --------------------------------------------------------------------------
# Figures.


def plot_fig3(rows: Sequence[dict], title: str = ""):
    """Fig. 3: the strong net's win rate against the malus, one line per opponent.

    Panels: one column per strong net, the strong net as White (top) and as
    Black (bottom). Returns the matplotlib Figure.
    """
    plt = common.pyplot()

    rows = matches.select(rows, figure="fig3")
    strong = list(dict.fromkeys(r["strong"] for r in rows))
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    fig, axes = plt.subplots(
        2, max(1, len(strong)), figsize=(3.6 * max(1, len(strong)) + 1, 6.5), squeeze=False, sharex=True, sharey=True
    )
    for j, s in enumerate(strong):
        for i, colour in enumerate(("white", "black")):
            ax = axes[i, j]
            for k, opp in enumerate(opponents):
                sel = sorted(
                    matches.select(rows, strong=s, opponent=opp, strong_colour=colour), key=lambda r: r["malus"]
                )
                if sel:
                    x = np.array([float(r["malus"]) for r in sel]) + 0.1 * (k - (len(opponents) - 1) / 2)
                    matches.plot_win_rates(ax, x, sel, fmt="o-", label=opp)
            ticks = sorted({float(r["malus"]) for r in rows})
            if len(ticks) <= 8:  # the calibrated maluses spread far: then matplotlib's own ticks
                ax.set_xticks(ticks)
            pad = 0.5 + 0.02 * (ticks[-1] - ticks[0])
            ax.set_xlim(ticks[0] - pad, ticks[-1] + pad)
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
    plt = common.pyplot()

    rows = matches.select(rows, figure="fig4", strong_colour="white")
    strong = list(dict.fromkeys(r["strong"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for ax, h, label in ((axes[0], 1, "score handicap: H1, komi below 0.5 = malus"), (axes[1], 2, "H2: two stones")):
        for k, s in enumerate(strong):
            sel = sorted(matches.select(rows, strong=s, handicap=h), key=lambda r: -float(r["komi"]))
            if sel:
                x = np.array([float(r["komi"]) for r in sel]) + 0.06 * (k - (len(strong) - 1) / 2)
                matches.plot_win_rates(ax, x, sel, fmt="o-", label=s)
        ticks = sorted({float(r["komi"]) for r in rows if float(r["handicap"]) == h})
        if ticks:
            ax.set_xticks(ticks)
            ax.set_xlim(ticks[-1] + 0.5, ticks[0] - 0.5)  # high komi on the left
        else:
            ax.set_xticks([])
            ax.text(0.5, 0.5, "not played", transform=ax.transAxes, ha="center", va="center", color="0.5")
        ax.set_ylim(-0.03, 1.03)
        ax.axhline(0.5, color="0.7", lw=0.8, ls=":")
        ax.set_xlabel("komi (to the right: worse for White)")
        ax.set_title(label)
    axes[0].set_ylabel("strong net's win rate as White (95% Wilson)")
    opponents = sorted({r["opponent"] for r in rows})
    if axes[1].get_legend_handles_labels()[0]:  # no H2 games, no legend
        axes[1].legend(title="strong net", fontsize=8)
    fig.suptitle(title or f"Fig. 4: strong nets as White vs {', '.join(opponents)}")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------
# The experiment.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """Figs. 3 and 4's settings (the module docstring); ``komi``, ``maluses``, ``h1_komis`` and ``h2_komis``
    have defaults for 7×7 only (None: 7×7's, :data:`EVEN_KOMI` ...)."""

    outdir: str = "runs/handicap"
    games: int = setting(100, "games per cell (the paper: 400); even for Fig. 3")
    visits: int = 64
    strong: tuple[str, ...] = STRONG
    weak: tuple[str, ...] = setting(WEAK, "weak nets, strongest first (the last plays Fig. 4)")
    komi: float | None = setting(None, "the even game's komi (7x7: 9.5)")
    figures: tuple[str, ...] = ("3", "4")
    maluses: tuple[float, ...] | None = setting(None, "Fig. 3 maluses (7x7: 0,1,2,3,4,5)")
    h1_komis: tuple[float, ...] | None = setting(None, "Fig. 4 H1 komis (7x7: 2.5,1.5,0.5,-0.5,-1.5); '' skips")
    h2_komis: tuple[float, ...] | None = setting(None, "Fig. 4 H2 komis (7x7: 0.5,8.5,10.5,13.5); '' skips")
    target_rates: tuple[float, ...] = setting(
        TARGET_RATES,
        "Fig. 3: also the maluses at which the malus-0 margins predict these win rates, per opponent; '' none",
    )
    fig4_games: int | None = setting(None, "games per Fig. 4 cell (default: --games)")
    itself: bool = setting(True, "Fig. 3: each strong net also plays its own copy (--no-itself: only the weak nets)")
    resign_threshold: float | None = None
    score_visits: int = 1000
    opening_moves: int = 0
    restart: bool = setting(False, "replay every cell (default: resume games.csv)")
    plot_only: bool = setting(False, "redraw the PNGs from --outdir's summaries")
    max_batch: int = 1024
    verbose: bool = False

    def check(self) -> None:
        super().check()
        if self.board_size != 7 and not self.plot_only:
            for field in ("komi", "maluses", "h1_komis", "h2_komis"):
                if getattr(self, field) is None:
                    raise self.error(
                        field, f"has a default for 7x7 only; give it for {self.board_size}x{self.board_size}"
                    )

    def seven(self, field: str):
        """The value of ``field`` (komi, maluses, h1_komis, h2_komis): its own, else the 7×7 default."""
        value = getattr(self, field)
        defaults = dict(komi=EVEN_KOMI, maluses=MALUSES, h1_komis=H1_KOMIS, h2_komis=H2_KOMIS)
        return defaults[field] if value is None else value


def strong_margins(played: Sequence[matches.Played], opponent: str, malus: float = 0.0) -> list[float]:
    """The strong nets' margins (their own point of view, komi included) against ``opponent`` at ``malus``."""
    out = []
    for p in played:
        c = p.condition
        if c.figure == "fig3" and c.opponent == opponent and c.malus == malus and p.game.margin is not None:
            out.append(float(p.game.margin) if p.game.black == p.strong else -float(p.game.margin))
    return out


def choose_maluses(margins: Sequence[float], targets: Sequence[float]) -> list[dict]:
    """The maluses at which even-game margins predict the target win rates.

    A net that wins an even game by ``x`` points still wins with a malus of
    ``m < x`` if its play does not change, so the malus-0 margins predict
    the win rate at malus ``m`` as the share of margins above ``m``. For
    each target the whole-point malus ``m ≥ 0`` (the komi stays a half
    point) whose predicted rate is nearest is chosen, among the maluses
    below the largest margin (beyond it no game could be won). Where many
    maluses predict the same rate (the margins have gaps: on 7×7 a third of
    the games may end with the whole board), the largest is taken if that
    rate is above the target (the hardest malus that still predicts it),
    else the smallest.
    The prediction ignores that a SAI net sees the komi and plays
    differently; the games at that malus measure the real rate.

    Returns:
      Per target: ``target_rate``, ``malus``, ``predicted_rate`` and
      ``margins`` (the sample size).
    """
    x = np.asarray(margins, float)
    if not len(x):
        raise ValueError("no malus-0 games to choose maluses from")
    # Only maluses some game still beat: at or above the largest margin (on 7×7 often the whole
    # board) a net cannot win whatever it plays, and the cell would only confirm 0%.
    candidates = np.arange(0, max(1.0, np.ceil(x.max())))
    predicted = np.array([np.mean(x > m) for m in candidates])
    out = []
    for t in targets:
        if not 0 < t < 1:
            raise ValueError(f"--target_rates: a win rate is in (0, 1), not {t}")
        # Nearest rate; among equal rates above the target the largest malus (the hardest), else the smallest.
        k = min(range(len(candidates)), key=lambda i: (abs(predicted[i] - t), -i if predicted[i] > t else i))
        out.append(dict(target_rate=t, malus=float(candidates[k]), predicted_rate=float(predicted[k]), margins=len(x)))
    return out


def measured_maluses(chosen: Sequence[dict], played: Sequence[matches.Played]) -> list[dict]:
    """The calibrated maluses with the win rates measured there, against the rates the even games predicted.

    The prediction assumes a net plays the same whatever the komi; a SAI net
    sees the komi and may do better (it plays for the points it needs) or
    worse. Per row: the strong nets' games and wins at that malus (pooled,
    both colours, draws ½ rounded down), and Fisher's exact test (two-sided)
    of those wins against the malus-0 games whose margin exceeded the
    malus, i.e. the prediction's own sample.
    """
    out = []
    for r in chosen:
        opponent, malus = r["opponent"], float(r["malus"])
        games = [p for p in played if p.condition.figure == "fig3" and p.condition.opponent == opponent
                 and p.condition.malus == malus]  # fmt: skip
        wins = sum(
            1.0
            if p.game.winner == ("black" if p.game.black == p.strong else "white")
            else 0.5 * (p.game.winner == "draw")
            for p in games
        )
        margins = strong_margins(played, opponent)
        above = sum(m > malus for m in margins)
        row = {k: r[k] for k in ("opponent", "target_rate", "malus", "predicted_rate", "margins")}
        row.update(measured_games=len(games), measured_wins=wins,
                   measured_rate=wins / len(games) if games else float("nan"))  # fmt: skip
        row["p_fisher_vs_predicted"] = (
            stats.fisher_win_test(int(wins), len(games), above, len(margins)) if games and margins else float("nan")
        )
        out.append(row)
    return out


def kept_maluses(path: str, opponents: set[str], targets: Sequence[float]) -> list[dict] | None:
    """The calibrated maluses of an earlier run in ``path``, if they cover these opponents and targets.

    A rerun (a resumed run, or one that plays only some strong nets, e.g.
    one process per core) keeps the first calibration, so every strong net
    plays the same maluses; None when there is none to keep.
    """
    if not os.path.exists(path):
        return None
    rows = [{k: r[k] for k in ("opponent", "target_rate", "malus", "predicted_rate", "margins")}
            for r in common.read_csv(path, text=("opponent",))]  # fmt: skip
    have = {(r["opponent"], float(r["target_rate"])) for r in rows}
    if not all((o, float(t)) in have for o in opponents for t in targets):
        return None
    return [r for r in rows if r["opponent"] in opponents and float(r["target_rate"]) in set(map(float, targets))]


def print_power(figure: str, per_net: int, nets: int, what: str) -> None:
    """Prints the smallest fall in win rate a figure's cells can detect (two samples, one-sided)."""
    lines = [f"{figure} power (Fisher/arcsine, one-sided α {stat_tables.ALPHA}, power {stat_tables.POWER}):"]
    for n, label in ((per_net, f"{what}, per net"), (per_net * nets, f"{what}, pooled over {nets} strong nets")):
        lines.append("  " + stat_tables.detectable_line(n, label, (0.5, 0.75, 0.95)))
    print("\n".join(lines), flush=True)


def decline_tests(rows: Sequence[dict], group: Sequence[str], order: str, *, highest_first: bool = False) -> list[dict]:
    """Each cell against its group's baseline cell: Fisher's exact test for a lower win rate.

    Rows (summary rows) are grouped by the ``group`` columns; the baseline
    is the group's row with the smallest ``order`` value (the largest with
    ``highest_first``): malus 0 in Fig. 3, the highest komi in Fig. 4. Holm
    and BH corrections are over the pooled rows (``strong`` =
    :data:`POOLED`) and over the per-net rows separately, each family one
    table of the README.
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in group), []).append(r)
    pooled, per_net = [], []
    for key, cells in groups.items():
        cells = sorted(cells, key=lambda r: float(r[order]), reverse=highest_first)
        base = cells[0]
        for r in cells[1:]:
            row = dict(zip(group, key))
            row[order] = r[order]
            row["base_" + order] = base[order]
            if "komi" not in row:
                row["komi"] = r["komi"]
            row.update(
                stat_tables.compare_wins(
                    round(float(r["wins"]) + 0.5 * float(r["draws"])),
                    int(r["games"]),
                    round(float(base["wins"]) + 0.5 * float(base["draws"])),
                    int(base["games"]),
                    "less",
                )
            )
            (pooled if row.get("strong") == POOLED else per_net).append(row)
    return [*stat_tables.correct(pooled, "p_fisher_less", "p_fisher_two"),
            *stat_tables.correct(per_net, "p_fisher_less", "p_fisher_two")]  # fmt: skip


def run(settings: Settings) -> dict[str, list[dict]]:
    """Plays the figures' games and writes the tables and PNGs (with ``plot_only``: redraws the PNGs from the
    summaries in ``outdir``); returns the summary rows by figure."""
    if settings.plot_only:
        summaries = read_summaries(settings.outdir)
        draw(settings.outdir, summaries)
        return summaries
    out = play(settings)
    for fig, rows in out.items():
        print(f"\n{fig}:")
        print(matches.format_table(rows))
    return out


def play(settings: Settings) -> dict[str, list[dict]]:
    """Plays the figures' games and writes the tables and PNGs; returns the summary rows by figure."""
    figures = set(settings.figures)
    nets = dict(board_size=settings.board_size, options=settings.player_options(), seed=settings.seed)
    strong = common.load_nets(settings.strong, **nets)
    weak = common.load_nets(settings.weak, **nets)
    if not strong or not weak:
        raise ValueError("need at least one strong and one weak net")
    matches.check_names([*strong, *weak])
    games_path = common.games_path(settings.outdir)
    if settings.restart:
        common.reset_games(games_path)
    match_kw = dict(
        games=settings.games,
        max_batch=settings.max_batch,
        resign_threshold=settings.resign_threshold,
        score_visits=settings.score_visits,
        opening_moves=settings.opening_moves,
        results_path=games_path,
        sgf_dir=os.path.join(settings.outdir, "sgf"),
        resume=True,
        log=common.log_lines(settings.verbose),
    )
    t0 = time.time()
    played: list[matches.Played] = []
    chosen: list[dict] = []
    if "3" in figures:
        maluses = list(dict.fromkeys(settings.seven("maluses")))
        targets = list(settings.target_rates)
        if targets and 0.0 not in maluses:
            raise ValueError("--target_rates chooses maluses from the malus-0 games: put 0 in --maluses")
        copies = {s.name: [s.replace(name=f"{s.name}-copy")] if settings.itself else [] for s in strong}
        pairs = [(s, opp) for s in strong for opp in [*copies[s.name], *weak]]
        label = {(s.name, opp.name): "itself" if opp.name == f"{s.name}-copy" else opp.name for s, opp in pairs}
        print_power("Fig. 3", settings.games // 2, len(strong), "one colour, a malus against malus 0")

        def play_fig3(s, opp, ms, seed):
            t = time.time()
            conditions = matches.malus_conditions("fig3", label[s.name, opp.name], ms, settings.seven("komi"))
            new = matches.play_conditions(s, opp, conditions, colours="alternate", seed=seed, **match_kw)
            played.extend(new)
            rates = " ".join(
                f"m={r['malus']:g}:{100 * r['win_rate']:.0f}%"
                for r in matches.summary_rows(new)
                if r["strong_colour"] == "both"
            )
            print(f"fig3 {s.name} vs {label[s.name, opp.name]}: {len(new)} games, {time.time() - t:.0f}s; {rates}",
                  flush=True)  # fmt: skip

        for k, (s, opp) in enumerate(pairs):
            play_fig3(s, opp, maluses, settings.seed * 100_003 + k * 1_000)
        if targets:
            chosen = kept_maluses(os.path.join(settings.outdir, "maluses.csv"), set(label.values()), targets)
            if settings.restart or chosen is None:
                chosen = []
                for opponent in dict.fromkeys(label.values()):
                    for row in choose_maluses(strong_margins(played, opponent), targets):
                        chosen.append({"opponent": opponent, **row})
                common.write_csv(os.path.join(settings.outdir, "maluses.csv"), chosen)
            print("calibrated maluses:", "; ".join(
                f"{r['opponent']} {100 * r['target_rate']:g}% -> {r['malus']:g} ({100 * r['predicted_rate']:.0f}%)"
                for r in chosen), flush=True)  # fmt: skip
            for k, (s, opp) in enumerate(pairs):
                extra = [r["malus"] for r in chosen if r["opponent"] == label[s.name, opp.name]]
                extra = [m for m in dict.fromkeys(extra) if m not in maluses]
                if extra:
                    play_fig3(s, opp, extra, settings.seed * 100_003 + k * 1_000 + 500)
    if "4" in figures:
        w3 = weak[-1]
        h1, h2 = settings.seven("h1_komis"), settings.seven("h2_komis")
        fig4_games = settings.fig4_games or settings.games
        print_power("Fig. 4", fig4_games, len(strong), "a komi against the highest komi of its handicap")
        for k, s in enumerate(strong):
            t = time.time()
            conditions = [
                *matches.white_conditions("fig4", w3.name, 1, h1, base=PLAIN_HANDICAP_KOMI),
                *matches.white_conditions("fig4", w3.name, 2, h2, base=PLAIN_HANDICAP_KOMI),
            ]
            if not conditions:
                continue
            new = matches.play_conditions(
                s, w3, conditions, colours="a_white", seed=settings.seed * 100_003 + 90_000 + k * 1_000,
                **{**match_kw, "games": fig4_games},
            )  # fmt: skip
            played.extend(new)
            rates = " ".join(
                f"H{r['handicap']}@{r['komi']:g}:{100 * r['win_rate']:.0f}%" for r in matches.summary_rows(new)
            )
            print(f"fig4 {s.name} (W) vs {w3.name}: {len(new)} games, {time.time() - t:.0f}s; {rates}", flush=True)
    outdir = settings.outdir
    common.write_csv(os.path.join(outdir, "conditions.csv"), matches.condition_rows(played), matches.CONDITION_COLUMNS)
    summary = matches.summary_rows(played)
    if len(strong) > 1:
        summary += matches.pooled_rows(summary, POOLED)
    out = {}
    for fig, _ in FIGURES:
        rows = [r for r in summary if r["figure"] == fig]
        if rows:
            common.write_csv(os.path.join(outdir, f"{fig}_summary.csv"), rows, matches.SUMMARY_COLUMNS)
            out[fig] = rows
    if out.get("fig3"):
        tests = decline_tests(out["fig3"], ("strong", "opponent", "strong_colour"), "malus")
        common.write_csv(os.path.join(outdir, "fig3_tests.csv"), tests)
        if chosen:
            common.write_csv(os.path.join(outdir, "maluses.csv"), measured_maluses(chosen, played))
    if out.get("fig4"):
        tests = decline_tests(out["fig4"], ("strong", "handicap"), "komi", highest_first=True)
        common.write_csv(os.path.join(outdir, "fig4_tests.csv"), tests)
    handicaps = [0] + ([2] if "4" in figures and settings.seven("h2_komis") else [])
    common.write_csv(os.path.join(outdir, "start_positions.csv"), matches.start_positions([*strong, *weak], handicaps))
    draw(outdir, out)
    print(f"{len(played)} games in {time.time() - t0:.0f}s; wrote {outdir}", flush=True)
    return out


def draw(outdir: str, summaries: dict[str, list[dict]]) -> list[str]:
    """Writes the PNGs of the figures in ``summaries`` (figure -> summary rows); returns their paths."""
    plots = {"fig3": plot_fig3, "fig4": plot_fig4}
    return [
        common.save_figure(plots[fig](summaries[fig]), os.path.join(outdir, png))
        for fig, png in FIGURES
        if summaries.get(fig)
    ]


def read_summaries(outdir: str) -> dict[str, list[dict]]:
    """The summaries in ``outdir`` by figure."""
    summaries = {}
    for fig, _ in FIGURES:
        path = os.path.join(outdir, f"{fig}_summary.csv")
        if os.path.exists(path):
            summaries[fig] = matches.read_summary(path)
    if not summaries:
        raise FileNotFoundError(f"no fig3_summary.csv or fig4_summary.csv in {outdir}")
    return summaries


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
