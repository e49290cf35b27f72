"""Recovering from severe handicap with λ > 0: Fig. 7 of the SAI 9×9 paper, on 7×7.

    python -m experiments.run --config=experiments/recovery/config.py  # the shipped run (--config.play=True)
    python experiments/recovery/recovery.py --outdir=runs/recovery          # zoo nets, 7×7, the defaults
    python experiments/recovery/recovery.py --strong=S=runs/go7/checkpoints/150 \\
        --opponent=W=runs/go7/checkpoints/20 --games=20 --visits=32 --outdir=/tmp/recovery

Paper: [SAI-9x9] §4.3 (Fig. 7; references in docs/design.md). The strong
nets play White against the weakest net (W3) in the situations where the
plain agent rarely wins: score handicap H1 (no stones, Black first, komi
0.5) and H1 with one more malus point, and positional handicap H2 (two
stones, White first) with too small a komi. Each strong net plays them with
λ ∈ {0, 0.5, 1} and μ = 0: an agent with λ > 0 over-estimates its chances
when losing, so it keeps the game solid and waits for the weak net's
mistakes instead of gambling; the paper found λ = 0.5 raised S1's and S3's
win rate in H2 at the hardest level (from under 5% to 12% and 22.5%), and
λ = 1 never helped further. W3 plays λ = μ = 0.

The strong nets' μ and threshold are the player flags ``--mu`` and
``--threshold``. Each situation is a handicap kind and a malus m: White's komi is
``--h1_komi − m`` in H1 and ``--h2_komi − m`` in H2. Plotted: the strong
net's win rate against m, one panel per handicap kind and strong net, one
line per λ, with 95% Wilson intervals.

From 9×9 to 7×7 (the defaults; every one is a flag; see
experiments/handicap/handicap.py for the whole translation):

* **H1: base komi 0.5, maluses 0 and 1** (komi 0.5 and −0.5): the paper's
  "H1 and H1 with an additional negative malus point". H1 takes the whole
  fair komi from White on both boards (7 points on 9×9, 9 on 7×7); one
  malus point scaled by the area (49/81) is still the smallest step, 1.
* **H2: base komi 13.5, maluses 3 and 5** (komi 10.5 and 8.5). The paper's
  severe H2 levels are komi 6.5 and 8.5 ("H2 with 6 or even 8 bonus
  points"), below the 10.5 at which H2 was about even. Komi given against
  stones pays for tempo, which the fair komi measures, so those levels scale
  by the fair komis' ratio 9/7 (as handicap.py's Fig. 4 levels): 10.5 →
  13.5 (the base), 8.5 → 10.5 and 6.5 → 8.5, maluses 3 and 5.
* **Calibrated situations** (``--situations_from``). The fixed maluses
  above are the paper's levels translated; whether the plain agent really
  "rarely wins" there depends on the nets. The paper found its situations
  by a calibration run; here that run is ``experiments/handicap/handicap.py``
  played down to hard komis: its Fig. 4 (``fig4_summary.csv``, H1 and H2)
  and its Fig. 3 (``fig3_summary.csv``: the even game as White at komi
  9.5 − malus is H1 at that komi). Per handicap kind the komi at which the
  strong nets (pooled, λ = 0, as White against ``--opponent``) won 3–10%
  (nearest ``--target_rate``, default 6.5%), or, if no measured komi did,
  the komi interpolated between the two that bracket it. The choice is
  written to ``situations.csv``; the λ = 0 games measure it again. On the
  second zoo W3 is too weak for this (the strong nets still win a fifth of
  the games at any komi, by taking the whole board), so the calibrated
  run plays W1.
* **Games and visits.** The paper: 400 games per cell at 1,000 visits; the
  defaults (100 games, 64 visits) fit a CPU. Nobody resigns by default: the
  resign rule reads the agent's own value, which λ > 0 lifts, so resigning
  would mix the agent's play with when it gives up.

Before playing, the script prints the smallest rise in win rate its cells
can detect (two samples, one-sided α 0.05, power 0.8) and the games the
paper's rise from 5% to 12% would need.

Outputs in ``--outdir``: ``games.csv`` (every game, the results table; the
strong net is named ``<name>[l=λ,m=μ]`` for λ > 0; a rerun resumes it,
``--restart`` replays everything), ``sgf/`` (one SGF per game; packed into ``sgf.tar.xz``),
``conditions.csv`` (the condition of every game, keyed by (black, white,
komi, handicap)), ``fig7_summary.csv`` (per strong net, λ, handicap and
malus: komi, games, wins, draws, losses, win rate, 95% Wilson interval, the
strong net's mean margin and mean winning margin, distinct games; with
several strong nets also their pooled rows, strong ``S1-S3``),
``fig7_tests.csv`` (each λ > 0 cell against the same net's λ = 0 cell and
pooled: Fisher's exact test one-sided (higher) and two-sided, Welch and
Mann–Whitney on the margins, Holm and BH adjusted p over the pooled and over
the per-net rows), ``situations.csv`` (with ``--situations_from``) and
``fig7_recovery.png``. ``--plot_only`` redraws the PNG from
``fig7_summary.csv``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence

import numpy as np

from experiments.lib import common, matches, paired, stat_tables
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.cli import player as player_cli
from saijax.core import search

# 7×7 defaults (module docstring).
LAMBDAS = (0.0, 0.5, 1.0)
H1_KOMI, H1_MALUSES = 0.5, (0.0, 1.0)
H2_KOMI, H2_MALUSES = 13.5, (3.0, 5.0)
OPPONENT = "zoo:go7-W3"
POOLED = "S1-S3"  # the pooled strong nets' rows (as in experiments/handicap/handicap.py)
TARGET_RATE, TARGET_BAND = 0.065, (0.03, 0.10)  # the calibrated situations: λ = 0 wins 3-10%


def conditions(opponent: str, h1_komi: float, h1_maluses, h2_komi: float, h2_maluses) -> list[matches.Condition]:
    """The situations of Fig. 7, the strong net as White: H1 and H2, each made worse by maluses."""
    return [
        *matches.white_conditions("fig7", opponent, 1, [h1_komi - m for m in h1_maluses], base=h1_komi),
        *matches.white_conditions("fig7", opponent, 2, [h2_komi - m for m in h2_maluses], base=h2_komi),
    ]


def choose_situations(
    rows: Sequence[dict], target: float, band: tuple[float, float], opponent: str | None = None
) -> list[dict]:
    """Per handicap kind, the komi at which the strong nets (λ = 0, as White) win about ``target``.

    ``rows`` are summary rows of ``experiments/handicap/handicap.py``: the calibration
    run. Fig. 4 rows as White give H1 and H2 at their komis; Fig. 3 rows as
    White (the even game, Black first, at komi 9.5 − malus) are H1 at that
    komi, the same game (no stones, Black first). With ``opponent`` only that
    opponent's rows count (a calibration against several weak nets). The
    pooled rows (strong ``S1-S3``) are used when there are any, else every
    row of the one strong net. Where two rows give the same handicap and
    komi, the one with more games is kept. A measured komi whose rate lies
    in ``band`` is taken (the one nearest ``target``); else the komi is
    interpolated linearly between the two measured komis whose rates
    bracket ``target`` and rounded to a half point (its rate is then only
    predicted; the λ = 0 games measure it).

    Returns:
      Per handicap: ``handicap``, ``komi``, ``calibration_rate`` (measured
      or interpolated), ``calibration_games`` (at that komi, 0 if
      interpolated), ``how`` ("measured" or "interpolated") and ``figure``
      (the calibration figure of the chosen or bracketing rows).

    Raises:
      ValueError: no rows, or a handicap whose measured rates never reach
        ``target`` (the calibration needs harder komis).
    """

    def kind(r: dict) -> int | None:
        if r.get("strong_colour") != "white" or (opponent is not None and r.get("opponent") != opponent):
            return None
        h = int(float(r["handicap"]))
        if r["figure"] == "fig4":
            return h
        return 1 if r["figure"] == "fig3" and h == 0 else None  # Fig. 3's even game as White = H1 at its komi

    rows = [(kind(r), r) for r in rows]
    rows = [(h, r) for h, r in rows if h is not None]
    pooled = [(h, r) for h, r in rows if r["strong"] == POOLED]
    rows = pooled or rows
    if len({r["strong"] for _, r in rows}) > 1:
        raise ValueError("the calibration has several strong nets and no pooled rows (strong S1-S3)")
    out = []
    for h in sorted({h for h, _ in rows}):
        by_komi: dict[float, dict] = {}
        for hh, r in rows:
            k = float(r["komi"])
            if hh == h and (k not in by_komi or float(r["games"]) > float(by_komi[k]["games"])):
                by_komi[k] = r
        cell = [by_komi[k] for k in sorted(by_komi)]
        komis = [float(r["komi"]) for r in cell]
        rates = [float(r["win_rate"]) for r in cell]
        inside = [r for r in cell if band[0] <= float(r["win_rate"]) <= band[1]]
        if inside:
            r = min(inside, key=lambda r: abs(float(r["win_rate"]) - target))
            out.append(dict(handicap=h, komi=float(r["komi"]), calibration_rate=float(r["win_rate"]),
                            calibration_games=int(float(r["games"])), how="measured", figure=r["figure"]))  # fmt: skip
            continue
        for (k1, r1, c1), (k2, r2, c2) in zip(zip(komis, rates, cell), zip(komis[1:], rates[1:], cell[1:])):
            if r1 <= target <= r2 and r2 > r1:
                k = k1 + (target - r1) * (k2 - k1) / (r2 - r1)
                komi = math.floor(k) + 0.5  # the half point below: komi k lies in [floor, floor + 1)
                figure = "+".join(dict.fromkeys([c1["figure"], c2["figure"]]))
                out.append(dict(handicap=h, komi=komi, calibration_rate=target, calibration_games=0,
                                how="interpolated", figure=figure))  # fmt: skip
                break
        else:
            measured = ", ".join(f"komi {k:g}: {100 * r:.0f}%" for k, r in zip(komis, rates))
            raise ValueError(f"H{h}: the calibration's win rates ({measured}) never reach {100 * target:g}%; "
                             "play it at harder komis")  # fmt: skip
    if not out:
        against = f" against {opponent}" if opponent is not None else ""
        raise ValueError(f"no Fig. 3 or Fig. 4 rows of the strong nets as White{against} in the calibration")
    return out


def plot_fig7(rows: Sequence[dict], title: str = ""):
    """Fig. 7: the strong net's win rate as White against the malus, one line per λ.

    Panels: H1 (top) and H2 (bottom), one column per strong net. Returns the
    matplotlib Figure.
    """
    plt = common.pyplot()

    rows = [r for r in rows if r["figure"] == "fig7" and r["strong_colour"] == "white"]
    strong = list(dict.fromkeys(r["strong"] for r in rows))
    lambdas = sorted({float(r["lambda"]) for r in rows})
    kinds = sorted({int(float(r["handicap"])) for r in rows})
    ncols = max(1, len(strong))
    fig, axes = plt.subplots(
        max(1, len(kinds)), ncols, figsize=(3.6 * ncols + 1, 3.2 * max(1, len(kinds)) + 0.5), squeeze=False, sharey=True
    )
    for i, h in enumerate(kinds):
        for j, s in enumerate(strong):
            ax = axes[i, j]
            cell = [r for r in rows if r["strong"] == s and int(float(r["handicap"])) == h]
            for k, lam in enumerate(lambdas):
                sel = sorted((r for r in cell if float(r["lambda"]) == lam), key=lambda r: float(r["malus"]))
                if sel:
                    x = np.array([float(r["malus"]) for r in sel]) + 0.04 * (k - (len(lambdas) - 1) / 2)
                    matches.plot_win_rates(ax, x, sel, fmt="o-", label=f"λ = {lam:g}")
            maluses = sorted({float(r["malus"]) for r in cell})
            komis = {float(r["malus"]): float(r["komi"]) for r in cell}
            ax.set_xticks(maluses, [f"{m:g}\n(komi {komis[m]:g})" for m in maluses])
            if maluses:
                ax.set_xlim(maluses[0] - 0.5, maluses[-1] + 0.5)
            ax.set_ylim(-0.03, 1.03)
            ax.axhline(0.5, color="0.7", lw=0.8, ls=":")
            ax.set_title(f"{s} as White, H{h}")
            ax.set_xlabel("malus (points against White)")
            if j == 0:
                ax.set_ylabel("win rate (95% Wilson)")
    axes[0, -1].legend(fontsize=8)
    opponents = sorted({r["opponent"] for r in rows})
    fig.suptitle(title or f"Fig. 7: recovering from handicap against {', '.join(opponents)}, μ = 0")
    fig.tight_layout()
    return fig


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """Fig. 7's settings (the module docstring). ``mu`` and ``threshold`` are the strong nets' agents' (with
    each of ``lambdas``); every other net plays λ = μ = 0. ``h2_komi`` has a default for 7×7 only (None:
    :data:`H2_KOMI`)."""

    outdir: str = "runs/recovery"
    games: int = setting(100, "games per cell (the paper: 400)")
    visits: int = 64
    strong: tuple[str, ...] = matches.STRONG
    opponent: str = setting(OPPONENT, "the weak net, [NAME=]SPEC (the paper's W3)")
    lambdas: tuple[float, ...] = LAMBDAS
    h1_komi: float = setting(H1_KOMI, "H1's komi at malus 0")
    h1_maluses: tuple[float, ...] = setting(H1_MALUSES, "'' skips H1")
    h2_komi: float | None = setting(None, "H2's komi at malus 0 (7x7: 13.5)")
    h2_maluses: tuple[float, ...] = setting(H2_MALUSES, "'' skips H2")
    situations_from: tuple[str, ...] = setting(
        (),
        "calibration summaries of experiments/handicap/handicap.py (fig4_summary.csv: H1 and H2; fig3_summary.csv: its "
        "even game as White is H1): play, per handicap, the komi where the strong nets at λ = 0 win "
        "--target_rate against --opponent, instead of the --h1/--h2 maluses",
    )
    target_rate: float = setting(TARGET_RATE, "with --situations_from: λ = 0's win rate")
    resign_threshold: float | None = None
    score_visits: int = 1000
    opening_moves: int = 0
    restart: bool = setting(False, "replay every cell (default: resume games.csv)")
    plot_only: bool = setting(False, "redraw the PNG from --outdir's fig7_summary.csv")
    max_batch: int = 1024
    verbose: bool = False

    def check(self) -> None:
        super().check()
        n = self.board_size
        if self.h2_komi is None and n != 7 and self.h2_maluses and not self.plot_only:
            raise self.error("h2_komi", f"has a default for 7x7 only; give it for {n}x{n}")
        for lam in self.lambdas:
            try:
                search.Agent(lam, self.mu, self.threshold)
            except ValueError as e:
                raise self.error("lambdas", f"with mu={self.mu:g}, threshold={self.threshold:g}: {e}") from None

    def player_options(self, **changes) -> player_cli.PlayerOptions:
        """How the nets play: the player fields at λ = μ = 0 (the strong nets' agents are set per λ)."""
        return super().player_options(**{"lambda_": 0.0, "mu": 0.0, "threshold": 0.0, **changes})


def run(settings: Settings) -> list[dict]:
    """Plays Fig. 7's games and writes the tables and the PNG (with ``plot_only``: redraws the PNG from
    ``fig7_summary.csv``); returns the summary rows."""
    if settings.plot_only:
        rows = matches.read_summary(os.path.join(settings.outdir, "fig7_summary.csv"))
        draw(settings.outdir, rows)
        return rows
    rows = play(settings)
    print()
    print(matches.format_table(rows))
    return rows


def play(settings: Settings) -> list[dict]:
    """Plays Fig. 7's games and writes the tables and the PNG; returns the summary rows."""
    plain = settings.player_options()  # λ = μ = 0: the strong nets' agents are set below
    strong = common.load_nets(settings.strong, board_size=settings.board_size, options=plain, seed=settings.seed)
    opponent = common.load_nets(settings.opponent, board_size=settings.board_size, options=plain, seed=settings.seed)
    if not strong or len(opponent) != 1:
        raise ValueError("need at least one strong net and exactly one --opponent")
    opponent = opponent[0]
    matches.check_names([*strong, opponent])
    h2_komi = H2_KOMI if settings.h2_komi is None else settings.h2_komi
    lambdas = list(settings.lambdas)
    if settings.situations_from:
        if not 0 < settings.target_rate < 1:
            raise ValueError(f"--target_rate is a win rate in (0, 1), not {settings.target_rate}")
        calibration = [r for path in settings.situations_from for r in matches.read_summary(path)]
        chosen = choose_situations(calibration, settings.target_rate, TARGET_BAND, opponent=opponent.name)
        common.write_csv(common.games_path(settings.outdir, "situations.csv"),
                         [{**r, "source": ",".join(settings.situations_from)} for r in chosen])  # fmt: skip
        print("situations:", "; ".join(f"H{r['handicap']} komi {r['komi']:g} ({r['how']}, "
                                       f"{100 * r['calibration_rate']:.0f}%)" for r in chosen))  # fmt: skip
        h1 = [settings.h1_komi - r["komi"] for r in chosen if r["handicap"] == 1]
        h2 = [h2_komi - r["komi"] for r in chosen if r["handicap"] == 2]
    else:
        h1, h2 = list(settings.h1_maluses), list(settings.h2_maluses)
    cells = conditions(opponent.name, settings.h1_komi, h1, h2_komi, h2)
    if not cells or not lambdas:
        raise ValueError("no situations or no λ values to play")
    games_path = common.games_path(settings.outdir)
    if settings.restart:
        common.reset_games(games_path)
    per_net = settings.games
    lines = [f"Fig. 7 power (a λ > 0 cell against λ = 0, one-sided α {stat_tables.ALPHA}, power {stat_tables.POWER}):"]
    for n, label in ((per_net, "per net"), (per_net * len(strong), f"pooled over {len(strong)} strong nets")):
        lines.append("  " + stat_tables.detectable_line(n, label, (0.03, 0.065, 0.1), "higher"))
    needed = stats.games_per_arm_needed(0.05, 0.12, stat_tables.ALPHA, stat_tables.POWER, "less")
    lines.append(f"  the paper's rise from 5% to 12% needs {needed} games per arm")
    print("\n".join(lines), flush=True)
    t0 = time.time()
    played, agents, base_name = [], {}, {}
    for i, s in enumerate(strong):
        for lam in lambdas:
            player = s.with_agent(lambda_=lam, mu=settings.mu, threshold=settings.threshold, rename=True)
            agents[player.name] = (player.agent.lambda_, player.agent.mu)
            base_name[player.name] = s.name
            t = time.time()
            new = matches.play_conditions(
                player,
                opponent,
                cells,
                games=settings.games,
                colours="a_white",
                seed=(settings.seed * 1009 + i) * len(cells),  # common to the λ values: common random numbers
                max_batch=settings.max_batch,
                resign_threshold=settings.resign_threshold,
                score_visits=settings.score_visits,
                opening_moves=settings.opening_moves,
                results_path=games_path,
                sgf_dir=os.path.join(settings.outdir, "sgf"),
                resume=True,
                log=common.log_lines(settings.verbose),
            )
            played.extend(new)
            rates = " ".join(
                f"H{r['handicap']}-{r['malus']:g}:{100 * r['win_rate']:.0f}%" for r in matches.summary_rows(new)
            )
            print(f"fig7 {player.name} (W) vs {opponent.name}: {len(new)} games, {time.time() - t:.0f}s; {rates}")
    common.write_csv(
        os.path.join(settings.outdir, "conditions.csv"),
        matches.condition_rows(played, agents),
        matches.CONDITION_COLUMNS,
    )
    rows = matches.summary_rows(played, agents)
    for r in rows:
        r["strong"] = base_name[r["strong"]]  # the λ column tells the agents apart
    if len(strong) > 1:
        rows += matches.pooled_rows(rows, POOLED)
    common.write_csv(os.path.join(settings.outdir, "fig7_summary.csv"), rows, matches.SUMMARY_COLUMNS)
    common.write_csv(os.path.join(settings.outdir, "fig7_tests.csv"), lambda_tests(played, agents, base_name))
    draw(settings.outdir, rows)
    print(f"{len(played)} games in {time.time() - t0:.0f}s; wrote {settings.outdir}", flush=True)
    return rows


def lambda_tests(
    played: Sequence[matches.Played], agents: dict[str, tuple[float, float]], base_name: dict[str, str]
) -> list[dict]:
    """Each λ > 0 cell against the same net's λ = 0 games in the same situation (and pooled over the nets).

    Win rates: Fisher's exact test, one-sided (higher: the paper's
    recovery) and two-sided. The strong net's margins: Welch and
    Mann–Whitney, one-sided (larger). Holm and BH adjusted p over the pooled
    rows and over the per-net rows, each a family.
    """
    cells: dict[tuple, list[tuple[int, float]]] = {}
    nets = {base_name[p.strong] for p in played}
    for p in played:
        won = int(p.game.winner == ("black" if p.game.black == p.strong else "white"))
        margin = float(p.game.margin) if p.game.margin is not None else math.nan
        margin = margin if p.game.black == p.strong else -margin
        lam = agents[p.strong][0]
        c = p.condition
        for strong in [base_name[p.strong], *([POOLED] if len(nets) > 1 else [])]:
            cells.setdefault((strong, c.handicap, c.malus, c.komi_white, lam), []).append((won, margin))
    pooled, per_net = [], []
    for (strong, h, malus, komi, lam), games in cells.items():
        base = cells.get((strong, h, malus, komi, 0.0))
        if lam == 0.0 or base is None:
            continue
        row = {"strong": strong, "handicap": h, "malus": malus, "komi": komi, "lambda": lam}
        row.update(stat_tables.compare_wins(sum(w for w, _ in games), len(games), sum(w for w, _ in base), len(base),
                                            "greater"))  # fmt: skip
        row.update(stat_tables.compare_margins([m for _, m in games], [m for _, m in base], "margin_"))
        (pooled if strong == POOLED else per_net).append(row)
    columns = ("p_fisher_greater", "p_fisher_two", "margin_p_welch_greater", "margin_p_mw_greater")
    return [*stat_tables.correct(pooled, *columns), *stat_tables.correct(per_net, *columns)]


TEST_KEYS = ("run", "strong", "handicap", "komi", "lambda", "baseline_lambda", "measure")


def paired_tests(games: Sequence, conditions: Sequence[dict], run: str = "main") -> list[dict]:
    """Each λ > 0 against λ = 0, and each λ against the next smaller λ > 0, paired by opening.

    The λ values of a net share their match seeds, so game i of one is
    game i of another (the same random opening, komi and handicap): wins by
    the exact McNemar test, the strong net's margins by the Wilcoxon
    signed-rank test, one-sided (higher, larger) against λ = 0 and two-sided
    between two λ > 0. Per net and pooled (``S1-S3``). ``games`` are the
    GameResults, ``conditions`` the rows of conditions.csv.
    """
    cond = {(c["black"], c["white"], float(c["komi"]), int(float(c["handicap"]))): c for c in conditions}
    cells: dict[tuple, dict] = {}
    for g in games:
        c = cond[(g.black, g.white, float(g.komi), int(g.handicap))]
        strong, colour = c["strong"], c["strong_colour"]
        sign = 1.0 if colour == "black" else -1.0
        key = (strong.split("[", 1)[0], int(g.handicap), float(g.komi), float(c["lambda"]))
        unit = (key[0], g.seed, g.game)
        won, margin = float(g.winner == colour), sign * float(g.margin)
        cell = cells.setdefault(key, {"wins": {}, "margin": {}})
        cell["wins"][unit], cell["margin"][unit] = (won, g.end == "cap"), (margin, g.end == "cap")
    nets = sorted({k[0] for k in cells})
    rows = []
    for strong in [*nets, *([POOLED] if len(nets) > 1 else [])]:
        pooled: dict[tuple, dict] = {}
        for (net, h, komi, lam), cell in cells.items():
            if strong in (net, POOLED):
                for measure, sample in cell.items():
                    pooled.setdefault((h, komi, lam), {}).setdefault(measure, {}).update(sample)
        for (h, komi, lam), cell in sorted(pooled.items()):
            smaller = sorted(x for hh, kk, x in pooled if (hh, kk) == (h, komi) and x < lam)
            for base in dict.fromkeys(smaller[:1] + smaller[-1:]):  # λ = 0 and the next smaller λ
                alternative = "greater" if base == 0 else "two-sided"
                key = dict(run=run, strong=strong, handicap=h, komi=komi, baseline_lambda=base, **{"lambda": lam})
                other = pooled[(h, komi, base)]
                rows.append(dict(key, measure="wins", **paired.mcnemar(cell["wins"], other["wins"], alternative)))
                rows.append(dict(key, measure="margin",
                                 **paired.wilcoxon(cell["margin"], other["margin"], alternative)))  # fmt: skip
    return rows


def claim_tests(dirs: dict[str, str], config) -> list[dict]:
    """experiments/run.py's tests: :func:`paired_tests` of each run's games.csv and conditions.csv."""
    return [
        row
        for run, d in dirs.items()
        for row in paired_tests(
            results.read_results(os.path.join(d, "games.csv")), common.read_csv(os.path.join(d, "conditions.csv")), run
        )  # fmt: skip
    ]


def draw(outdir: str, rows: Sequence[dict]) -> str:
    """Writes fig7_recovery.png; returns its path."""
    return common.save_figure(plot_fig7(rows), os.path.join(outdir, "fig7_recovery.png"))


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
