"""Re-analyses the shipped result tables with two-sample tests, corrections and power.

    python -m experiments.run --config=experiments/reanalysis/config.py --config.redraw=True

Reads the tables the experiment scripts wrote (nothing is played; it runs in
seconds) and writes one CSV per table into ``--outdir``, then prints a
summary. What changes against the scripts' own tests:

* **Win rates, two samples.** A condition's wins are compared with the
  baseline's wins in the same cell (same net, opponent and colour) by
  Fisher's exact test (:func:`saijax.analysis.stats.fisher_win_test`), one-sided in
  the claimed direction and two-sided. The score-targeting script, as the
  paper, used a one-sided binomial test with the λ = 0 rate taken as known;
  that p is kept beside it (``p_binom_known``) for comparison.
* **Margins.** Welch's t-test and the Mann–Whitney U test, one-sided in the
  claimed direction (larger margins for λ > 0).
* **Corrections.** Holm (family-wise) and Benjamini–Hochberg (false
  discovery rate) adjusted p-values over each table, per column of raw p
  (each kind of test is its own family), side by side with the raw ones
  (``<p>_holm``, ``<p>_bh``).
* **Power.** For each figure, the win rate another condition must reach to
  be told from the baseline with α = 0.05 (two-sided, and one-sided) and
  power 0.8, by the arcsine approximation
  (:func:`saijax.analysis.stats.detectable_win_rate`), the games per arm a
  10-point loss would need, and for margins the smallest detectable
  difference (normal approximation; Student t with 2 degrees of freedom for
  the 5×5 baselines' two seeds per arm).

Inputs (each table is skipped with a note when its files are missing):
``score_targeting/earlier/go7_score_targeting/games.csv`` (Fig. 5, Table 1; ``cells.csv`` is checked
against it), ``handicap/earlier/go7_handicap/fig3_summary.csv`` and ``fig4_summary.csv``,
``recovery/earlier/go7_recovery/fig7_summary.csv`` with ``conditions.csv`` and ``games.csv``
(margins), ``suboptimal_moves/earlier/go7_suboptimal`` and ``suboptimal_moves/go5`` (``games.csv``,
``moves.csv``), ``baselines/main/summary.csv``, ``styles/main/summary.csv``,
``position_control/earlier/go7_position_control/summary.csv``, ``go7b/h2h_vs_S1.csv``.

Outputs: ``fig5_score_targeting.csv``, ``table1_variable_agents.csv``,
``fig3_handicap.csv``, ``fig4_handicap.csv``, ``fig7_recovery.csv``,
``suboptimal.csv``, ``baselines_5x5.csv``, ``styles.csv``,
``position_control.csv``, ``head_to_head.csv``, ``power.csv``. Uses
``experiments/lib/common.py`` for the flags, CSV reading and writing and the
one-line error exit.

A tool over the shipped results, not a claim with a config
(``experiments/<claim>/config.py``): it plays nothing and claims nothing of its own;
it re-tests other claims' shipped tables (the folders above, most in
``results/<claim>/earlier/`` and the training runs' folders); its
output keeps its folder, ``reanalysis/results/``.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import re
import statistics
import sys

import scipy.stats

from experiments.lib import common  # an installed package (pyproject.toml): no sys.path needed
from experiments.lib.common import setting
from experiments.lib.stat_tables import (  # noqa: F401  (names kept for reanalysis.<name> users)
    ALPHA,
    POINT_LOSING_TESTS,
    POWER,
    compare_margins,
    compare_point_losing,
    compare_wins,
    correct,
    margin_power,
    power_row,
    sd,
)
from saijax.analysis import stats

_AGENT = re.compile(r"^(?P<net>.+)\[l=(?P<l>[^,\]]+),m=(?P<m>[^,\]]+)(?:,t=(?P<t>[^\]]+))?\]$")


# ---------------------------------------------------------------------------
# Helpers.


def _read(results_dir: str, *parts: str) -> list[dict] | None:
    path = os.path.join(results_dir, *parts)
    return common.read_csv(path) if os.path.exists(path) else None


def mark(p: float) -> str:
    """The papers' marks: ``**`` p < 0.001, ``*`` p < 0.05, else ""."""
    if p is None or not math.isfinite(p):
        return ""
    return "**" if p < 0.001 else "*" if p < 0.05 else ""


# ---------------------------------------------------------------------------
# Score targeting: Fig. 5 and Table 1.


def _num(text: str) -> float:
    return float(text) if text not in (None, "") else 0.0


def score_targeting_cells(games: list[dict]) -> dict:
    """(threshold, opponent, colour, λ, μ) -> {"games", "wins", "win_margins"} from the games table."""
    cells: dict = collections.defaultdict(lambda: {"games": 0, "wins": 0, "win_margins": []})
    for g in games:
        for colour, other in (("black", "white"), ("white", "black")):
            m = _AGENT.match(g[colour])
            if not m:
                continue
            opponent = "itself" if g[other] == m["net"] else g[other]
            key = (_num(m["t"]), opponent, colour, float(m["l"]), float(m["m"]))
            cell = cells[key]
            cell["games"] += 1
            if g["winner"] == colour:
                cell["wins"] += 1
                margin = float(g["margin"])
                cell["win_margins"].append(margin if colour == "black" else -margin)
    return dict(cells)


def check_cells(cells: dict, cells_csv: list[dict] | None) -> list[str]:
    """Disagreements between the games table and the script's ``cells.csv`` (none expected)."""
    problems = []
    for r in cells_csv or []:
        if r["strong_colour"] == "both":
            continue
        key = (float(r["threshold"]), r["opponent"], r["strong_colour"], float(r["lambda"]), float(r["mu"]))
        got = cells.get(key)
        if got is None or got["games"] != int(r["games"]) or got["wins"] != int(r["wins"]):
            problems.append(
                f"cells.csv {key}: {r['wins']}/{r['games']}, games.csv {got and (got['wins'], got['games'])}"
            )
    return problems


def score_targeting(results_dir: str) -> tuple[list[dict], list[dict], list[str]] | None:
    games = _read(results_dir, "score_targeting/results/earlier/go7_score_targeting", "games.csv")
    if games is None:
        return None
    cells = score_targeting_cells(games)
    notes = check_cells(cells, _read(results_dir, "score_targeting/results/earlier/go7_score_targeting", "cells.csv"))
    fig5, table1 = [], []
    for key in sorted(cells):
        threshold, opponent, colour, lam, mu = key
        if lam == 0 and mu == 0:
            continue
        base = cells.get((0.0, opponent, colour, 0.0, 0.0))
        if base is None:
            notes.append(f"no λ = μ = 0 baseline for {key}")
            continue
        c = cells[key]
        row = {"threshold": threshold, "opponent": opponent, "colour": colour, "lambda": lam, "mu": mu}
        row.update(compare_wins(c["wins"], c["games"], base["wins"], base["games"], "less"))
        base_rate = base["wins"] / base["games"]
        row["p_binom_known"] = float(scipy.stats.binomtest(c["wins"], c["games"], base_rate, alternative="less").pvalue)
        row["mark_binom_known"] = mark(row["p_binom_known"])
        row.update(compare_margins(c["win_margins"], base["win_margins"], prefix="win_margin_"))
        (fig5 if threshold == 0 else table1).append(row)
    p_columns = (
        "p_binom_known",
        "p_fisher_less",
        "p_fisher_two",
        "win_margin_p_welch_greater",
        "win_margin_p_mw_greater",
    )
    for rows in (fig5, table1):
        correct(rows, *p_columns)
        for r in rows:
            r["mark_fisher_less"] = mark(r["p_fisher_less"])
            r["mark_welch"] = mark(r["win_margin_p_welch_greater"])
    return fig5, table1, notes


def score_targeting_power(cells_rows: list[dict]) -> list[dict]:
    out = []
    seen = set()
    for r in cells_rows:
        key = (r["opponent"], r["colour"])
        if key in seen or r["threshold"] != 0:
            continue
        seen.add(key)
        out.append(
            power_row(
                "fig5",
                f"{r['opponent']} {r['colour']}",
                r["games"],
                r["base_win_rate"],
                r["base_games"],
            )
        )
    return out


# ---------------------------------------------------------------------------
# Handicap (Figs. 3, 4) and recovery (Fig. 7).


def _summary_rows(rows: list[dict]) -> list[dict]:
    for r in rows:
        r["games"], r["wins"] = int(float(r["games"])), int(float(r["wins"]))
    return rows


def handicap_fig3(results_dir: str) -> list[dict] | None:
    rows = _read(results_dir, "handicap/results/earlier/go7_handicap", "fig3_summary.csv")
    if rows is None:
        return None
    rows = _summary_rows(rows)
    by = {(r["opponent"], r["strong_colour"], float(r["malus"])): r for r in rows}
    out = []
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    maluses = sorted({float(r["malus"]) for r in rows})
    for opponent in opponents:
        for colour in ("white", "black", "both"):
            base = by.get((opponent, colour, 0.0))
            for malus in maluses:
                r = by.get((opponent, colour, malus))
                if malus == 0 or r is None or base is None:
                    continue
                row = {"opponent": opponent, "colour": colour, "malus": malus}
                row.update(compare_wins(r["wins"], r["games"], base["wins"], base["games"], "less"))
                out.append(row)
    # Every opponent pooled, both colours: malus 0 against each malus.
    for malus in maluses[1:]:
        pooled = [by[(o, "both", malus)] for o in opponents if (o, "both", malus) in by]
        base = [by[(o, "both", 0.0)] for o in opponents if (o, "both", 0.0) in by]
        row = {"opponent": "all", "colour": "both", "malus": malus}
        row.update(
            compare_wins(
                sum(r["wins"] for r in pooled),
                sum(r["games"] for r in pooled),
                sum(r["wins"] for r in base),
                sum(r["games"] for r in base),
                "less",
            )
        )
        out.append(row)
    return correct(out, "p_fisher_less", "p_fisher_two")


def handicap_fig4(results_dir: str) -> list[dict] | None:
    rows = _read(results_dir, "handicap/results/earlier/go7_handicap", "fig4_summary.csv")
    if rows is None or not rows:
        return None
    rows = _summary_rows(rows)
    base = rows[0]  # H1 at komi 0.5, no malus: the even-strength reference
    out = []
    for r in rows[1:]:
        row = {"handicap": r["handicap"], "komi": r["komi"], "malus": r["malus"]}
        row["base"] = f"H{base['handicap']} komi {base['komi']}"
        row.update(compare_wins(r["wins"], r["games"], base["wins"], base["games"], "less"))
        out.append(row)
    return correct(out, "p_fisher_less", "p_fisher_two")


def _condition_margins(results_dir: str, subdir: str) -> dict:
    """(strong name, komi, handicap) -> the strong player's margins, from conditions.csv and games.csv."""
    conditions = _read(results_dir, subdir, "conditions.csv")
    games = _read(results_dir, subdir, "games.csv")
    if conditions is None or games is None:
        return {}
    colour_of = {
        (c["black"], c["white"], float(c["komi"]), int(float(c["handicap"]))): c["strong_colour"] for c in conditions
    }
    out: dict = collections.defaultdict(list)
    for g in games:
        key = (g["black"], g["white"], float(g["komi"]), int(float(g["handicap"] or 0)))
        colour = colour_of.get(key)
        if colour is None:
            continue
        margin = float(g["margin"])
        strong = g[colour]
        out[(strong, key[2], key[3])].append(margin if colour == "black" else -margin)
    return dict(out)


def recovery_fig7(results_dir: str) -> list[dict] | None:
    rows = _read(results_dir, "recovery/results/earlier/go7_recovery", "fig7_summary.csv")
    if rows is None:
        return None
    rows = _summary_rows(rows)
    margins = _condition_margins(results_dir, "recovery/results/earlier/go7_recovery")
    conditions = _read(results_dir, "recovery/results/earlier/go7_recovery", "conditions.csv") or []
    strong_of = {(float(c["lambda"]), float(c["komi"]), int(float(c["handicap"]))): c["strong"] for c in conditions}
    by = {(float(r["lambda"]), float(r["komi"]), int(float(r["handicap"]))): r for r in rows}
    out = []
    for (lam, komi, handicap), r in sorted(by.items()):
        base = by.get((0.0, komi, handicap))
        if lam == 0 or base is None:
            continue
        row = {"handicap": handicap, "komi": komi, "malus": r["malus"], "lambda": lam}
        row.update(compare_wins(r["wins"], r["games"], base["wins"], base["games"], "greater"))
        a = margins.get((strong_of.get((lam, komi, handicap)), komi, handicap), [])
        b = margins.get((strong_of.get((0.0, komi, handicap)), komi, handicap), [])
        row.update(compare_margins(a, b, prefix="margin_"))
        out.append(row)
    return correct(out, "p_fisher_greater", "p_fisher_two", "margin_p_welch_greater", "margin_p_mw_greater")


# ---------------------------------------------------------------------------
# §4.4 point-losing moves, 7×7 and 5×5.


def _suboptimal(results_dir: str, subdir: str, comparisons, white_only: bool) -> list[dict]:
    games = _read(results_dir, subdir, "games.csv")
    if games is None:
        return []
    moves = _read(results_dir, subdir, "moves.csv") or []
    names = {g["condition"] for g in games}
    head = {"board": os.path.basename(subdir).split("_")[0], "margins": "wins as White" if white_only else "all wins"}
    return [
        {**head, **compare_point_losing(games, moves, cond, ref, white_only=white_only)}
        for cond, ref in comparisons
        if cond in names and ref in names
    ]


def suboptimal(results_dir: str) -> list[dict] | None:
    rows = _suboptimal(
        results_dir,
        "suboptimal_moves/results/earlier/go7_suboptimal",
        [("go7-S1[l=1,m=0]", "go7-S1")],
        white_only=False,
    )
    rows += _suboptimal(
        results_dir,
        "suboptimal_moves/results/go5",
        [("go5-sai[l=1,m=0]", "go5-az"), ("go5-sai", "go5-az"), ("go5-sai[l=1,m=0]", "go5-sai")],
        white_only=True,
    )
    if not rows:
        return None
    return correct(rows, *POINT_LOSING_TESTS)


# ---------------------------------------------------------------------------
# 5×5 baselines, styles, position control, head to head.


def _record(text: str) -> tuple[int, int]:
    wins, games = text.split("/")
    return int(wins), int(games)


def baselines(results_dir: str) -> tuple[list[dict], list[dict]] | None:
    rows = _read(results_dir, "baselines/results/main", "summary.csv")
    if rows is None:
        return None
    arms = {r["arm"]: r for r in rows}
    sai = arms.get("SAI")
    if sai is None:
        return None
    sai_elo = [float(x) for x in sai["equal_compute_elo_per_seed"].split(";")]
    sai_b, sai_w = _record(sai["gnugo_black"]), _record(sai["gnugo_white"])
    out, power = [], []
    for arm, r in arms.items():
        if arm == "SAI":
            continue
        elo = [float(x) for x in r["equal_compute_elo_per_seed"].split(";")]
        b, w = _record(r["gnugo_black"]), _record(r["gnugo_white"])
        row = {"arm": arm, "seeds": len(elo), "elo_per_seed": r["equal_compute_elo_per_seed"]}
        row["sai_elo_per_seed"] = sai["equal_compute_elo_per_seed"]
        row["d_elo"] = statistics.fmean(elo) - statistics.fmean(sai_elo)
        row["p_welch_seeds_two"] = stats.welch_t_test(elo, sai_elo)[1]
        row["p_z_nets_two"] = float(r["elo_vs_sai_p"]) if r.get("elo_vs_sai_p") not in (None, "") else math.nan
        row["gnugo"] = f"{b[0] + w[0]}/{b[1] + w[1]}"
        row["sai_gnugo"] = f"{sai_b[0] + sai_w[0]}/{sai_b[1] + sai_w[1]}"
        row["p_gnugo_fisher_two"] = stats.fisher_win_test(
            b[0] + w[0], b[1] + w[1], sai_b[0] + sai_w[0], sai_b[1] + sai_w[1]
        )
        out.append(row)
        if len(elo) > 1:
            elo_sd, sai_sd = sd(elo), sd(sai_elo)
            df = len(elo) + len(sai_elo) - 2
            power.append(
                {
                    "figure": "go5 baselines",
                    "cell": f"{arm} vs SAI, Elo at equal compute, seeds",
                    "games_per_arm": len(elo),
                    "margin_sd": elo_sd,
                    "margin_base_sd": sai_sd,
                    "detectable_margin_diff_two_sided": stats.detectable_mean_difference(
                        elo_sd, len(elo), sai_sd, len(sai_elo), ALPHA, POWER, "two-sided", df=df
                    ),
                    "note": f"Elo; Student t quantiles, {df} df",
                }
            )
    correct(out, "p_welch_seeds_two", "p_z_nets_two", "p_gnugo_fisher_two")
    return out, power


def against_reference(rows: list[dict], name: str, ref: str) -> list[dict]:
    """Fisher tests of every player's wins against ``ref``'s (two-sided and one-sided "less")."""
    by = {r[name]: r for r in rows}
    base = by[ref]
    out = []
    for r in rows:
        if r[name] == ref:
            continue
        row = {name: r[name], "reference": ref}
        row.update(compare_wins(int(r["wins"]), int(r["games"]), int(base["wins"]), int(base["games"]), "less"))
        row["p_tost_half_15pts"] = stats.equivalence_to_half(int(r["wins"]), int(r["games"]), 0.15)
        out.append(row)
    return correct(out, "p_fisher_less", "p_fisher_two")


def head_to_head(results_dir: str, fig3: list[dict] | None, fig5_games: dict | None) -> list[dict]:
    out = []
    games = _read(results_dir, "elo_curve/results/earlier/go7b", "h2h_vs_S1.csv")
    if games:
        player = "go7b-gen70"
        n = sum(1 for g in games if player in (g["black"], g["white"]))
        wins = sum(1 for g in games if g[g["winner"]] == player) if n else 0
        out.append(
            {
                "comparison": "go7b generation 70 vs go7-S1, komi 9.5",
                "games": n,
                "wins": wins,
                "win_rate": wins / n if n else math.nan,
                "p_binom_half_two": float(scipy.stats.binomtest(wins, n, 0.5).pvalue) if n else math.nan,
                "p_tost_half_10pts": stats.equivalence_to_half(wins, n, 0.10),
                "p_tost_half_15pts": stats.equivalence_to_half(wins, n, 0.15),
            }
        )
    if fig3 is not None and fig5_games is not None:
        base = fig5_games.get((0.0, "go7-W1", "white")), fig5_games.get((0.0, "go7-W1", "black"))
        rows = _read(results_dir, "handicap/results/earlier/go7_handicap", "fig3_summary.csv") or []
        h = [r for r in rows if r["opponent"] == "go7-W1" and r["strong_colour"] == "both" and float(r["malus"]) == 0]
        if all(base) and h:
            w1, n1 = sum(b["wins"] for b in base), sum(b["games"] for b in base)
            w2, n2 = int(float(h[0]["wins"])), int(float(h[0]["games"]))
            out.append(
                {
                    "comparison": "go7-S1 vs go7-W1 at λ = 0, komi 9.5: handicap run (malus 0) vs score-targeting run",
                    "games": n2,
                    "wins": w2,
                    "win_rate": w2 / n2,
                    "base_games": n1,
                    "base_wins": w1,
                    "base_win_rate": w1 / n1,
                    "p_fisher_two": stats.fisher_win_test(w2, n2, w1, n1),
                }
            )
    return out


# ---------------------------------------------------------------------------
# The run.


def _fmt(p: float) -> str:
    if p is None or not math.isfinite(p):
        return "-"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def summarize(tables: dict[str, list[dict]]) -> list[str]:
    """The printed summary: for each table, what the honest tests keep."""
    lines = []
    fig5 = tables.get("fig5_score_targeting")
    if fig5:
        marked = [r for r in fig5 if r["p_binom_known"] < 0.05]
        strong = [r for r in marked if r["p_binom_known"] < 0.001]
        lines.append(
            f"Fig. 5 strength losses: {len(marked)} cells significant by the known-rate binomial test "
            f"({len(strong)} at p < 0.001); with two-sample Fisher {sum(r['p_fisher_less'] < 0.05 for r in marked)} "
            f"stay < 0.05 one-sided, {sum(r['p_fisher_two'] < 0.05 for r in marked)} two-sided, "
            f"{sum(r['p_fisher_less'] < 0.001 for r in strong)} of the {len(strong)} stay < 0.001; "
            f"after Holm {sum(r['p_fisher_less_holm'] < 0.05 for r in fig5)}, "
            f"after BH {sum(r['p_fisher_less_bh'] < 0.05 for r in fig5)} of {len(fig5)} cells < 0.05."
        )
        for r in marked:
            lines.append(
                f"  {r['opponent']:7s} {r['colour']:5s} ({r['lambda']:g}, {r['mu']:g}): {r['wins']}/{r['games']} vs "
                f"{r['base_wins']}/{r['base_games']} ({r['d_win_pts']:+.1f}): binomial {_fmt(r['p_binom_known'])}, "
                f"Fisher one-sided {_fmt(r['p_fisher_less'])} (Holm {_fmt(r['p_fisher_less_holm'])}, "
                f"BH {_fmt(r['p_fisher_less_bh'])}), two-sided {_fmt(r['p_fisher_two'])}"
            )
        welch = [r for r in fig5 if r["win_margin_p_welch_greater"] < 0.05]
        lines.append(
            f"Fig. 5 score gains: Welch one-sided < 0.05 in {len(welch)} of {len(fig5)} cells; "
            f"after Holm {sum(r['win_margin_p_welch_greater_holm'] < 0.05 for r in fig5)}, "
            f"after BH {sum(r['win_margin_p_welch_greater_bh'] < 0.05 for r in fig5)}; "
            f"Mann–Whitney < 0.05 in {sum(r['win_margin_p_mw_greater'] < 0.05 for r in fig5)}."
        )
        for opp in dict.fromkeys(r["opponent"] for r in fig5):
            sub = [r for r in fig5 if r["opponent"] == opp]
            lines.append(
                f"  against {opp}: Welch < 0.05 in {sum(r['win_margin_p_welch_greater'] < 0.05 for r in sub)} of "
                f"{len(sub)}, BH {sum(r['win_margin_p_welch_greater_bh'] < 0.05 for r in sub)}, "
                f"Holm {sum(r['win_margin_p_welch_greater_holm'] < 0.05 for r in sub)}"
            )
    t1 = tables.get("table1_variable_agents")
    if t1:
        lines.append(
            f"Table 1: win-rate losses Fisher one-sided < 0.05 in {sum(r['p_fisher_less'] < 0.05 for r in t1)} of "
            f"{len(t1)} rows; score gains Welch < 0.05 in {sum(r['win_margin_p_welch_greater'] < 0.05 for r in t1)} "
            f"(Holm {sum(r['win_margin_p_welch_greater_holm'] < 0.05 for r in t1)}, "
            f"BH {sum(r['win_margin_p_welch_greater_bh'] < 0.05 for r in t1)})."
        )
        for opp in dict.fromkeys(r["opponent"] for r in t1):
            sub = [r for r in t1 if r["opponent"] == opp]
            lines.append(
                f"  against {opp}: Welch < 0.05 in {sum(r['win_margin_p_welch_greater'] < 0.05 for r in sub)} of "
                f"{len(sub)}, BH {sum(r['win_margin_p_welch_greater_bh'] < 0.05 for r in sub)}, "
                f"Holm {sum(r['win_margin_p_welch_greater_holm'] < 0.05 for r in sub)}"
            )
    for name, col in (("fig3_handicap", "p_fisher_less"), ("fig4_handicap", "p_fisher_less")):
        rows = tables.get(name)
        if rows:
            best = min(rows, key=lambda r: r[col])
            lines.append(
                f"{name}: smallest one-sided Fisher p {_fmt(best[col])} (Holm {_fmt(best[col + '_holm'])}, "
                f"BH {_fmt(best[col + '_bh'])}); < 0.05 in {sum(r[col] < 0.05 for r in rows)} of {len(rows)} rows."
            )
    rows = tables.get("fig7_recovery")
    if rows:
        lines.append(
            f"fig7_recovery: win rate up (Fisher one-sided) < 0.05 in "
            f"{sum(r['p_fisher_greater'] < 0.05 for r in rows)} "
            f"of {len(rows)}; margins up (Welch) < 0.05 in {sum(r['margin_p_welch_greater'] < 0.05 for r in rows)}, "
            f"after Holm {sum(r['margin_p_welch_greater_holm'] < 0.05 for r in rows)}, "
            f"BH {sum(r['margin_p_welch_greater_bh'] < 0.05 for r in rows)}."
        )
    for r in tables.get("suboptimal") or []:
        lines.append(
            f"suboptimal {r['board']} {r['condition']} vs {r['baseline']}: margin {r['margin_mean']:.1f} vs "
            f"{r['margin_base_mean']:.1f} Welch {_fmt(r['margin_p_welch_greater'])} "
            f"(Holm {_fmt(r['margin_p_welch_greater_holm'])}); losing moves {r['losing_moves_per_win']:.2f} vs "
            f"{r['base_losing_moves_per_win']:.2f} MW {_fmt(r['p_losing_moves_fewer'])} "
            f"(Holm {_fmt(r['p_losing_moves_fewer_holm'])}); no losing move {r['won_with_none']} vs "
            f"{r['base_won_with_none']} Fisher {_fmt(r['p_with_none_more'])}"
        )
    for r in tables.get("baselines_5x5") or []:
        lines.append(
            f"go5 {r['arm']:10s} vs SAI: {r['d_elo']:+.0f} Elo, Welch on seeds p {_fmt(r['p_welch_seeds_two'])}, "
            f"z on nets p {_fmt(r['p_z_nets_two'])} (Holm {_fmt(r['p_z_nets_two_holm'])}); GNU Go {r['gnugo']} vs "
            f"{r['sai_gnugo']}, Fisher p {_fmt(r['p_gnugo_fisher_two'])} (Holm {_fmt(r['p_gnugo_fisher_two_holm'])})"
        )
    for name, key in (("styles", "player"), ("position_control", "condition")):
        rows = tables.get(name)
        if rows:
            sig = [
                f"{r[key]} {_fmt(r['p_fisher_less'])} (Holm {_fmt(r['p_fisher_less_holm'])})"
                for r in rows
                if r["p_fisher_less"] < 0.05
            ]
            lines.append(
                f"{name}: fewer wins than {rows[0]['reference']}, Fisher one-sided < 0.05: {', '.join(sig) or 'none'}"
            )
    for r in tables.get("head_to_head") or []:
        extra = (
            f"binomial vs ½ p {_fmt(r['p_binom_half_two'])}, TOST ±10 pts p {_fmt(r['p_tost_half_10pts'])}"
            if "p_tost_half_10pts" in r
            else f"Fisher two-sided p {_fmt(r['p_fisher_two'])} against {r['base_wins']}/{r['base_games']}"
        )
        lines.append(f"{r['comparison']}: {r['wins']}/{r['games']}; {extra}")
    for r in tables.get("power") or []:
        if "detectable_lower_two_sided" in r:
            lo = r["detectable_d_lower_two_sided_pts"]
            lines.append(
                f"power {r['figure']} {r['cell']}: {r['games_per_arm']} games per arm "
                f"at {100 * r['base_win_rate']:.1f}% "
                f"detect a loss of {-lo:.1f} pts two-sided ({-r['detectable_d_lower_one_sided_pts']:.1f} one-sided)"
                if math.isfinite(lo)
                else f"power {r['figure']} {r['cell']}: no loss detectable"
            )
        elif "detectable_margin_diff_one_sided" in r:
            lines.append(
                f"power {r['figure']} {r['cell']}: {r['margin_n']} wins per arm, sd {r['margin_sd']:.1f}: "
                f"a gain of {r['detectable_margin_diff_one_sided']:.1f} points (Welch one-sided)"
            )
        elif "detectable_margin_diff_two_sided" in r:
            lines.append(f"power {r['figure']} {r['cell']}: {r['detectable_margin_diff_two_sided']:.0f} ({r['note']})")
    return lines


def _significant(value, digits: int = 6):
    """Floats to ``digits`` significant digits (small p-values keep their exponent)."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{digits}g}")
    return value


def analyse(results_dir: str) -> tuple[dict[str, list[dict]], list[str]]:
    """Every table's re-analysis (name -> rows) and notes on what was skipped or disagreed."""
    if not os.path.isdir(results_dir):
        raise FileNotFoundError(f"--results_dir {results_dir} is not a directory")
    tables: dict[str, list[dict]] = {}
    notes: list[str] = []
    power: list[dict] = []
    st = score_targeting(results_dir)
    fig5_cells = None
    if st is None:
        notes.append(
            "score_targeting/results/earlier/go7_score_targeting/games.csv missing: Fig. 5 and Table 1 skipped"
        )
    else:
        fig5, table1, problems = st
        tables["fig5_score_targeting"], tables["table1_variable_agents"] = fig5, table1
        notes += problems
        power += score_targeting_power(fig5)
        games = _read(results_dir, "score_targeting/results/earlier/go7_score_targeting", "games.csv")
        cells = score_targeting_cells(games)
        fig5_cells = {(k[0], k[1], k[2]): v for k, v in cells.items() if k[3] == 0 and k[4] == 0}
        for opp in dict.fromkeys(r["opponent"] for r in fig5):
            for colour in ("white", "black"):
                base = cells.get((0.0, opp, colour, 0.0, 0.0))
                if base:
                    power.append(
                        margin_power(
                            "fig5 winning margins", f"{opp} {colour}", base["win_margins"], base["win_margins"]
                        )
                    )
    fig3 = handicap_fig3(results_dir)
    for name, rows, figure in (
        ("fig3_handicap", fig3, "fig3"),
        ("fig4_handicap", handicap_fig4(results_dir), "fig4"),
        ("fig7_recovery", recovery_fig7(results_dir), "fig7"),
    ):
        if rows is None:
            notes.append(f"{name}: inputs missing, skipped")
            continue
        tables[name] = rows
        seen = set()
        for r in rows:
            cell = r.get("opponent", f"H{r.get('handicap')}") + " " + str(r.get("colour", ""))
            if figure == "fig7":
                cell = f"H{r['handicap']} komi {r['komi']}"
            elif figure == "fig4":
                cell = "vs " + r["base"]
            if cell in seen:
                continue
            seen.add(cell)
            power.append(power_row(figure, cell.strip(), r["games"], r["base_win_rate"], r["base_games"]))
    sub = suboptimal(results_dir)
    if sub is None:
        notes.append("suboptimal: inputs missing, skipped")
    else:
        tables["suboptimal"] = sub
    bl = baselines(results_dir)
    if bl is None:
        notes.append("baselines/results/main/summary.csv missing, skipped")
    else:
        tables["baselines_5x5"] = bl[0]
        power += bl[1]
    for name, subdir, key, ref in (
        ("styles", "styles/results/main", "player", "plain"),
        ("position_control", "position_control/results/earlier/go7_position_control", "condition", "none"),
    ):
        rows = _read(results_dir, subdir, "summary.csv")
        if rows is None or not any(r[key] == ref for r in rows):
            notes.append(f"{subdir}/summary.csv missing, skipped")
            continue
        tables[name] = against_reference(rows, key, ref)
        base = next(r for r in rows if r[key] == ref)
        power.append(power_row(name, f"vs {ref}", int(base["games"]), int(base["wins"]) / int(base["games"])))
    h2h = head_to_head(results_dir, fig3, fig5_cells)
    if h2h:
        tables["head_to_head"] = h2h
    tables["power"] = power
    return tables, notes


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """Where the shipped tables are read from and the re-analysis goes."""

    outdir: str = "experiments/reanalysis/results"
    results_dir: str = setting("experiments", "the folder of the claims' folders, whose results/ it reads")


def run(settings: Settings) -> dict[str, list[dict]]:
    """Re-analyses ``results_dir``'s tables into ``outdir`` (a CSV each) and prints the summary; returns them."""
    tables, notes = analyse(settings.results_dir)
    for name, rows in tables.items():
        rows = [{k: _significant(v) for k, v in r.items()} for r in rows]
        common.write_csv(os.path.join(settings.outdir, f"{name}.csv"), rows)
    for line in summarize(tables):
        print(line)
    for note in notes:
        print("note:", note)
    print(f"wrote {len(tables)} tables to {settings.outdir}")
    return tables


def main(argv=None) -> int:
    """The command line: a flag per field of :class:`Settings`."""
    return common.main(__name__, argv, exit_on_error=argv is None)


if __name__ == "__main__":
    sys.exit(main())
