"""The Markdown tables of experiments/README.md, written from the shipped CSVs.

    python -m experiments.readme_tables           # rewrites every marked table of the README
    python -m experiments.readme_tables --check   # exit 1, naming them, if marked tables differ from their CSVs

A generated table stands between the lines ``<!-- table: NAME -->`` and
``<!-- /table -->``; :data:`TABLES` ``[NAME]`` makes it from the results
folder (default ``experiments/results``). The tests fail when a marked table
is not what its CSVs give (``tests/readme_tables_test.py``).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
from collections.abc import Callable

from experiments import common, stat_tables

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md")
RESULTS = os.path.join(os.path.dirname(README), "results")
TABLES: dict[str, Callable[[str], str]] = {}
_BLOCK = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def table(name: str):
    """Registers a table maker under ``name``."""

    def register(fn):
        TABLES[name] = fn
        return fn

    return register


def render(text: str, results: str = RESULTS) -> str:
    """``text`` with every marked table made again from the CSVs under ``results``."""

    def make(m):
        if m["name"] not in TABLES:
            raise ValueError(f"no table maker named {m['name']!r}")
        return m.group(1) + TABLES[m["name"]](results) + "\n" + m.group(4)

    return _BLOCK.sub(make, text)


def stale(text: str, results: str = RESULTS) -> list[str]:
    """The names of the marked tables that differ from what their CSVs give."""
    return [m["name"] for m in _BLOCK.finditer(text) if m["body"] != TABLES[m["name"]](results) + "\n"]


# --------------------------------------------------------------------------
# Formats.


def p_text(p) -> str:
    """A p-value as the README writes it: 0.0036, 2·10⁻⁶, < 10⁻⁶."""
    p = float(p) if p not in ("", None) else math.nan
    if not math.isfinite(p):
        return "–"
    if p < 1e-6:
        return "< 10⁻⁶"
    if p < 1e-3:
        exponent = math.floor(math.log10(p))
        mantissa = round(p / 10**exponent)
        if mantissa == 10:
            mantissa, exponent = 1, exponent + 1
        return f"{mantissa}·10{str(exponent).translate(_SUPERSCRIPT)}"
    return f"{p:.2g}" if p < 0.995 else "1"


def _num(x, fmt: str) -> str:
    """A number in ``fmt``, with a minus sign (−); "–" if missing."""
    return "–" if x in ("", None) or not math.isfinite(float(x)) else format(float(x), fmt).replace("-", "−")


def _rate(r) -> str:
    """A win rate with its Wilson interval: ``60.0% [50, 70]``."""
    lo, hi = (100 * float(r[k]) for k in ("wilson_lo", "wilson_hi"))
    return f"{100 * float(r['win_rate']):.1f}% [{lo:.0f}, {hi:.0f}]"


def _rows(results: str, *path: str) -> list[dict]:
    return common.read_csv(os.path.join(results, *path))


def _pick(rows, **where) -> list[dict]:
    return [r for r in rows if all(str(r[k]) == str(v) for k, v in where.items())]


def _ordered(rows: list[dict]) -> list[dict]:
    """Test rows by threshold, opponent (first seen first), λ and μ."""
    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    return sorted(rows, key=lambda r: (float(r["threshold"]), opponents.index(r["opponent"]), float(r["lambda"]),
                                       float(r["mu"])))  # fmt: skip


def _agent(r) -> str:
    return f"({float(r['lambda']):g}, {float(r['mu']):g})"


def _adjusted(r) -> str:
    return f"{p_text(r['p_holm'])} / {p_text(r['p_bh'])}" if r["family"] else "–"


def _nocap(r) -> str:
    """The test without the capped games: ``p (Holm)``."""
    return f"{p_text(r['p_nocap'])} ({p_text(r['p_nocap_holm'])})"


def _count(r, side="") -> str:
    """``wins/games`` of a test row's arm (``side=""``) or baseline (``"base_"``)."""
    n = float(r.get(f"{side}n") or r["n"])
    return f"{round(float(r[f'{side}value']) * n)}/{n:.0f}"


def _wins_cell(r) -> str:
    if r["test"].startswith("sign"):
        return f"won twice {r['up']}, lost twice {r['down']} of {r['n']} pairs"
    if r["test"] == "McNemar":
        return f"{_count(r)} vs {_count(r, 'base_')}; discordant {r['up']} / {r['down']}"
    return f"{_count(r)} vs {_count(r, 'base_')}"


# --------------------------------------------------------------------------
# Figs. 5, 6 and Table 1 (experiments/configs/score_targeting.py).

ST, ST_TESTS = "go7_score_targeting2", ("score_targeting", "paired_tests.csv")
_FIG5_AGENTS = ((0, 0), (0.5, 0), (1, 0), (1, 0.5), (1, 1))
_OPPONENTS = ("itself", "go7-W1", "go7-W3")


def _fig5(results: str, colour: str) -> str:
    cells = _pick(_rows(results, ST, "cells.csv"), strong="all", threshold=0.0, strong_colour=colour)
    body = []
    for lam, mu in _FIG5_AGENTS:
        row = [f"{lam:g}", f"{mu:g}"]
        for opp in _OPPONENTS:
            (r,) = _pick(cells, opponent=opp, **{"lambda": float(lam), "mu": float(mu)})
            row.append(f"{_rate(r)}; {_num(r['mean_win_margin'], '.1f')} ± {_num(r['win_margin_se'], '.1f')}")
        body.append(row)
    return common.markdown_table(("λ", "μ", *_OPPONENTS), body)


table("fig5_white")(lambda results: _fig5(results, "white"))
table("fig5_black")(lambda results: _fig5(results, "black"))


def _wins_table(results: str, run: str, thresholds) -> str:
    tests = _pick(_rows(results, *ST_TESTS), run=run, strong="all")
    body = []
    for r in _ordered(_pick(tests, measure="wins", colour="both")):
        if float(r["threshold"]) not in thresholds:
            continue
        parts = [_pick(tests, measure="wins", colour=c, opponent=r["opponent"], threshold=r["threshold"],
                       mu=r["mu"], **{"lambda": r["lambda"]})[0] for c in ("white", "black")]  # fmt: skip
        body.append((r["opponent"], f"{float(r['threshold']):g}", _agent(r), r["test"], _wins_cell(r), p_text(r["p"]),
                     _adjusted(r), _nocap(r),
                     *(f"{_count(x)} vs {_count(x, 'base_')}, {p_text(x['p'])}" for x in parts)))  # fmt: skip
    header = ("opponent", "threshold", "(λ, μ)", "test", "both colours: λ > 0 vs λ = μ = 0", "p (lower)", "Holm / BH",
              "without capped: p (Holm)", "as White (Fisher p)", "as Black (Fisher p)")  # fmt: skip
    return common.markdown_table(header, body)


def _scores_table(results: str, run: str, thresholds) -> str:
    body = []
    for r in _ordered(_pick(_rows(results, *ST_TESTS), run=run, strong="all", measure="win_margin")):
        if float(r["threshold"]) in thresholds:
            body.append((r["opponent"], f"{float(r['threshold']):g}", _agent(r), r["colour"],
                         f"{_num(r['value'], '.1f')} ({r['n']}) vs {_num(r['base_value'], '.1f')} ({r['base_n']})",
                         _num(float(r["value"]) - float(r["base_value"]), "+.1f"), p_text(r["p"]),
                         _adjusted(r)))  # fmt: skip
    header = ("opponent", "threshold", "(λ, μ)", "colour", "winning score (wins) vs λ = μ = 0", "Δ", "Welch p (larger)",
              "Holm / BH")  # fmt: skip
    return common.markdown_table(header, body)


table("fig5_wins")(lambda results: _wins_table(results, "main", (0.0,)))
table("fig5_scores")(lambda results: _scores_table(results, "main", (0.0,)))
table("table1_wins")(lambda results: _wins_table(results, "main", (0.5, 0.7)))
table("v1000_wins")(lambda results: _wins_table(results, "v1000", (0.0,)))
table("v1000_scores")(lambda results: _scores_table(results, "v1000", (0.0,)))


@table("v1000_vs_128")
def _v1000_vs_128(results: str) -> str:
    body = []
    for r in _pick(_rows(results, *ST_TESTS), run="v1000 vs main", strong="all"):
        what = f"{_count(r)} vs {_count(r, 'base_')}" if r["measure"] == "wins" else (
            f"{_num(r['value'], '+.1f')} vs {_num(r['base_value'], '+.1f')}")  # fmt: skip
        body.append((r["opponent"], _agent(r), r["colour"], r["measure"], r["test"], r["n"], what,
                     f"{r['up']} / {r['down']}", p_text(r["p"]), _adjusted(r)))  # fmt: skip
    header = ("opponent", "(λ, μ)", "colour", "measure", "test", "games", "1,000 vs 128 visits", "higher / lower",
              "p (two-sided)", "Holm / BH")  # fmt: skip
    return common.markdown_table(header, body)


def _table1(results: str, threshold: float, opponent: str) -> str:
    cells = _pick(_rows(results, ST, "cells.csv"), strong="all", opponent=opponent)
    scores = _pick(_rows(results, *ST_TESTS), run="main", strong="all", measure="win_margin", opponent=opponent)
    body = []
    for colour in ("white", "black"):
        for r in _pick(_rows(results, ST, "table1.csv"), threshold=threshold, opponent=opponent, strong_colour=colour):
            lam, mu = float(r["lambda"]), float(r["mu"])
            base = (lam, mu) == (0.0, 0.0)
            (c,) = _pick(cells, threshold=0.0 if base else threshold, strong_colour=colour, mu=mu, **{"lambda": lam})
            s = [] if base else _pick(scores, threshold=threshold, colour=colour, mu=mu, **{"lambda": lam})
            body.append((colour, f"{lam:g}", f"{mu:g}", _rate(c), "–" if base else _num(r["d_win_rate"], "+.1f"),
                         "" if base else p_text(r["p_win_rate"]),
                         f"{_num(r['score'], '.1f')} ± {_num(r['score_se'], '.1f')}",
                         "–" if base else _num(r["d_score"], "+.1f"), "" if base else p_text(s[0]["p"]),
                         "" if base else _adjusted(s[0]), r["paper9x9_win_rate"], r["paper9x9_d_win_rate"],
                         r["paper9x9_score"], r["paper9x9_d_score"]))  # fmt: skip
    header = ("colour", "λ", "μ", "win % [95% Wilson]", "Δ win", "Fisher p (lower)", "winning score ± se", "Δ score",
              "Welch p (larger)", "Holm / BH", "9×9: win %", "Δ win", "score", "Δ score")  # fmt: skip
    return common.markdown_table(header, body)


for _t in (0.5, 0.7):
    for _opp, _label in (("itself", "itself"), ("go7-W3", "w3")):
        table(f"table1_{_t * 100:.0f}_{_label}")(lambda results, t=_t, o=_opp: _table1(results, t, o))


# --------------------------------------------------------------------------
# Fig. 7 (experiments/configs/recovery.py).


def _fig7(results: str, handicap: int) -> str:
    rows = _pick(_rows(results, "go7_recovery2", "fig7_summary.csv"), handicap=handicap, strong_colour="white")
    body = []
    for strong in dict.fromkeys(r["strong"] for r in rows):
        sel = sorted(_pick(rows, strong=strong), key=lambda r: float(r["lambda"]))
        cells = [f"{r['wins']}/{r['games']}, {_rate(r)}" for r in sel]
        body.append((strong.replace("go7-", ""), *cells, " / ".join(_num(r["mean_margin"], ".1f") for r in sel)))
    return common.markdown_table(("strong", "λ = 0", "λ = 0.5", "λ = 1", "mean margin (λ = 0 / 0.5 / 1)"), body)


table("fig7_h1")(lambda results: _fig7(results, 1))
table("fig7_h2")(lambda results: _fig7(results, 2))


@table("fig7_tests")
def _fig7_tests(results: str) -> str:
    body = []
    for r in _pick(_rows(results, "recovery", "paired_tests.csv"), strong="S1-S3"):
        what = f"{_count(r)} vs {_count(r, 'base_')}" if r["measure"] == "wins" else (
            f"{_num(r['value'], '.1f')} vs {_num(r['base_value'], '.1f')}")  # fmt: skip
        body.append((f"H{r['handicap']}, komi {_num(r['komi'], 'g')}", f"{float(r['lambda']):g}",
                     f"{float(r['baseline_lambda']):g}", r["measure"], r["test"], what, f"{r['up']} / {r['down']}",
                     p_text(r["p"]), _adjusted(r), _nocap(r)))  # fmt: skip
    header = ("situation", "λ", "against λ", "measure", "test", "S1–S3 (180 games each)", "higher / lower", "p",
              "Holm / BH", "without capped: p (Holm)")  # fmt: skip
    return common.markdown_table(header, body)


# --------------------------------------------------------------------------
# §4.4 (experiments/configs/suboptimal_moves.py).

_S44 = {
    "go7-S1": "go7-S1, λ = μ = 0",
    "go7-S1[l=1,m=0]": "go7-S1, (λ, μ) = (1, 0)",
    "go7-az": "go7-az (winrate head)",
    "wins": "wins against W3",
    "win_margin": "winning margin",
    "losing_moves": "point-losing moves per win",
    "won_with_none": "won without one",
}


@table("s44_summary")
def _s44_summary(results: str) -> str:
    games, body = _rows(results, "go7_suboptimal2", "games.csv"), []
    for r in _rows(results, "go7_suboptimal2", "summary.csv"):
        wins, none = int(r["wins"]), int(r["won_games_with_none"])
        won = stat_tables.point_losing_by_game(games, [], r["condition"])[1].values()
        by_colour = (statistics.fmean(w["margin"] for w in won if w["colour"] == c) for c in ("black", "white"))
        body.append((_S44.get(r["condition"], r["condition"]), f"{wins}/{r['games']}",
                     f"{float(r['mean_win_margin']):.1f} ({float(r['sd_win_margin']):.1f})",
                     " / ".join(f"{m:.1f}" for m in by_colour),
                     f"{float(r['losing_moves_per_win']):.2f}", f"{float(r['losing_moves_when_decided']):.2f}",
                     f"{none}/{wins} ({100 * none / wins:.1f}%)", r["distinct_games"] or "no SGFs"))  # fmt: skip
    header = ("condition", "wins/games", "winning margin, mean (sd)", "as Black / as White",
              "point-losing moves per won game", "of them once decided (lead > 5)", "won games with none",
              "distinct games")  # fmt: skip
    return common.markdown_table(header, body)


@table("s44_tests")
def _s44_tests(results: str) -> str:
    body = []
    for r in _rows(results, "suboptimal_moves", "paired_tests.csv"):
        names = (_S44.get(r["condition"], r["condition"]), _S44.get(r["baseline"], r["baseline"]), _S44[r["measure"]])
        body.append((*names, r["test"], r["n"], f"{_num(r['value'], '.2f')} vs {_num(r['base_value'], '.2f')}",
                     f"{r['up']} / {r['down']}", p_text(r["p"]), _adjusted(r)))  # fmt: skip
    header = ("condition", "against", "measure", "test", "paired games", "mean, condition vs baseline",
              "higher / lower", "p", "Holm / BH")  # fmt: skip
    return common.markdown_table(header, body)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="experiments.readme_tables", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="only check: exit 1 naming the tables that differ")
    p.add_argument("--readme", default=README)
    p.add_argument("--results", default=RESULTS)
    args = p.parse_args(argv)
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    if args.check:
        names = stale(text, args.results)
        if names:
            print(f"{args.readme}: these tables differ from their CSVs: {', '.join(names)}", file=sys.stderr)
        return int(bool(names))
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write(render(text, args.results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
