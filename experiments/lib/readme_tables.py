"""The Markdown tables of the experiments' READMEs and journals, written from the shipped CSVs.

    python -m experiments.lib.readme_tables           # rewrites every marked table of every document
    python -m experiments.lib.readme_tables --check   # exit 1, naming them, if marked tables differ from their CSVs

The documents are the Markdown files of ``experiments/`` and of its folders
(:func:`documents`: each claim's README.md and journal.md, legs/README.md).
A generated table stands between the lines ``<!-- table: NAME -->`` and
``<!-- /table -->``; :data:`TABLES` ``[NAME]`` makes it from the CSVs under
the results root (default ``experiments/``: ``<claim>/results/...`` and
``legs/<run>/...``). Each name has one place among the documents. A table
whose numbers come from no shipped CSV (a paper's figures, a parameter
list) has instead, on the line just above it, ``<!-- hand-written: REASON -->``
with a non-empty reason. ``--check`` and the tests fail when a marked table
is not what its CSVs give, and when a table with a numeric cell has neither
mark (``tests/readme_tables_test.py``).
"""

from __future__ import annotations

import argparse
import collections
import functools
import math
import os
import re
import statistics
import sys
from collections.abc import Callable

from experiments.lib import common, stat_tables

EXPERIMENTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = EXPERIMENTS  # the table makers read <claim>/results/... and legs/<run>/... under it
TABLES: dict[str, Callable[[str], str]] = {}
_BLOCK = re.compile(r"^(?P<indent>[ \t]*)(?P<open><!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                    r"^(?P=indent)<!-- /table -->",
                    re.S | re.M)  # fmt: skip
_HAND = re.compile(r"^\s*<!-- hand-written(?::(?P<reason>.*?))? -->\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def table(name: str):
    """Registers a table maker under ``name``."""

    def register(fn):
        TABLES[name] = fn
        return fn

    return register


def render(text: str, results: str = RESULTS) -> str:
    """``text`` with every marked table made again from the CSVs under ``results``."""
    return _BLOCK.sub(lambda m: m["indent"] + m["open"] + _made(m, results) + m["indent"] + "<!-- /table -->", text)


def _made(m: re.Match, results: str) -> str:
    """The table of a marked block, indented as its markers are (a table in a list item)."""
    if m["name"] not in TABLES:
        raise ValueError(f"no table maker named {m['name']!r}")
    return "".join(m["indent"] + line for line in (TABLES[m["name"]](results) + "\n").splitlines(True))


def stale(text: str, results: str = RESULTS) -> list[str]:
    """The names of the marked tables that differ from what their CSVs give."""
    return [m["name"] for m in _BLOCK.finditer(text) if m["body"] != _made(m, results)]


def _cells(line: str) -> list[str]:
    return [c.strip(" *`") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def numeric(cell: str) -> bool:
    """Whether a table cell is a number rather than words: it has digits, and no more letters than digits.

    ``12``, ``60.0% [50, 70]``, ``−3.1 ± 0.4``, ``< 10⁻⁶``, ``35/90 vs 40/90``, ``H1`` are numbers;
    ``go7-W1``, ``generation 169``, ``won 48% against Ray`` are not.
    """
    digits = sum(c.isdigit() for c in cell)
    return digits > 0 and sum(c.isalpha() for c in cell) <= digits


def unmarked(text: str) -> list[str]:
    """``line N: | first header |`` for each numeric table neither generated nor marked hand-written.

    A table is a line starting ``|`` followed by its rule (``|---|---|``); it is numeric when a
    cell below the rule is :func:`numeric`. A ``<!-- hand-written -->`` mark without a reason
    counts as none.
    """
    lines, out, fenced = text.split("\n"), [], False
    generated = {text.count("\n", 0, i) for m in _BLOCK.finditer(text) for i in range(m.start("body"), m.end("body"))
                 if i == m.start("body") or text[i - 1] == "\n"}  # fmt: skip
    i = 0
    while i < len(lines):
        fenced ^= lines[i].lstrip().startswith("```")
        if fenced or not lines[i].lstrip().startswith("|") or i + 1 >= len(lines) or not _RULE.match(lines[i + 1]):
            i += 1
            continue
        end = i + 2
        while end < len(lines) and lines[end].lstrip().startswith("|"):
            end += 1
        mark = _HAND.match(lines[i - 1]) if i else None
        if i not in generated and any(numeric(c) for line in lines[i + 2 : end] for c in _cells(line)):
            if mark is None or not (mark["reason"] or "").strip():
                why = "hand-written without a reason" if mark else "neither generated nor marked hand-written"
                out.append(f"line {i + 1}: | {_cells(lines[i])[0]} | ({why})")
        i = end
    return out


# --------------------------------------------------------------------------
# Formats.


def p_text(p, places: int = 6) -> str:
    """A p-value as the README writes it, to two significant digits: 0.0036, 1.3·10⁻⁴, 2·10⁻⁶, < 10⁻⁶.

    ``places``: the decimals the CSV rounded p to, so that its 0 reads ``< 10⁻⁴`` for 4.
    """
    p = float(p) if p not in ("", None) else math.nan
    if not math.isfinite(p):
        return "–"
    if p < 10.0**-places:
        return f"< 10{str(-places).translate(_SUPERSCRIPT)}"
    if p < 1e-3:
        exponent = math.floor(math.log10(p))
        mantissa = f"{p / 10**exponent:.2g}"  # two significant digits, as above 10⁻³
        if float(mantissa) >= 10:
            mantissa, exponent = "1", exponent + 1
        return f"{mantissa}·10{str(exponent).translate(_SUPERSCRIPT)}"
    return f"{p:.2g}" if p < 0.995 else "1"


def _num(x, fmt: str) -> str:
    """A number in ``fmt``, with a minus sign (−); "–" if missing."""
    return "–" if x in ("", None) or not math.isfinite(float(x)) else format(float(x), fmt).replace("-", "−")


def _rate(r, digits: int = 1, rate: str = "win_rate") -> str:
    """A win rate with its Wilson interval: ``60.0% [50, 70]``."""
    lo, hi = (100 * float(r[k]) for k in ("wilson_lo", "wilson_hi"))
    return f"{100 * float(r[rate]):.{digits}f}% [{lo:.0f}, {hi:.0f}]"


def _tally(r, digits: int = 0) -> str:
    """Wins, games and :func:`_rate`: ``14/20, 70% [48, 85]``."""
    return f"{float(r['wins']):.0f}/{r['games']}, {_rate(r, digits)}"


def _ph(r, key: str, places: int = 6) -> str:
    """``p (Holm p)`` of the fields ``key`` and ``key_holm`` (``p`` alone where the Holm p is missing)."""
    holm = r.get(f"{key}_holm", "")
    return p_text(r.get(key, ""), places) + (f" ({p_text(holm, places)})" if holm else "")


def _p_is(p) -> str:
    """``= 0.03`` or ``< 10⁻⁶``: :func:`p_text` after ``p``."""
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def _pm(mean: str, spread: str, fmt: str = ".1f"):
    """A cell ``mean ± spread`` of two fields: ``+35.0 ± 26.1``."""
    return lambda r: f"{_num(r[mean], fmt)} ± {_num(r[spread], fmt.lstrip('+'))}"


def _ci(mean: str, lo: str, hi: str, fmt: str = ".1f"):
    """A cell ``mean [lo, hi]`` of three fields: ``22.5 [19.4, 25.7]``."""
    return lambda r: f"{_num(r[mean], fmt)} [{_num(r[lo], fmt)}, {_num(r[hi], fmt)}]"


def _percent(field: str, digits: int = 1):
    """A cell of a share as a percentage: ``97.5%``; "–" if missing."""
    return lambda r: "–" if r.get(field, "") in ("", None) else f"{100 * float(r[field]):.{digits}f}%"


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
# Figs. 5, 6 and Table 1 (experiments/score_targeting/config.py).

ST, ST_TESTS = "score_targeting/results/main", ("score_targeting/results", "paired_tests.csv")
ST_V1 = "score_targeting/results/earlier/go7_score_targeting"  # the first round
_FIG5_AGENTS = ((0, 0), (0.5, 0), (1, 0), (1, 0.5), (1, 1))
_OPPONENTS = ("itself", "go7-W1", "go7-W3")


def _fig5(results: str, colour: str, run: str = ST, strong: str = "all", agents=_FIG5_AGENTS) -> str:
    cells = _pick(_rows(results, run, "cells.csv"), strong=strong, threshold=0.0, strong_colour=colour)
    body = []
    for lam, mu in agents or sorted({(float(r["lambda"]), float(r["mu"])) for r in cells}):
        row = [f"{lam:g}", f"{mu:g}"]
        for opp in _OPPONENTS:
            (r,) = _pick(cells, opponent=opp, **{"lambda": float(lam), "mu": float(mu)})
            row.append(f"{_rate(r)}; {_num(r['mean_win_margin'], '.1f')} ± {_num(r['win_margin_se'], '.1f')}")
        body.append(row)
    return common.markdown_table(("λ", "μ", *_OPPONENTS), body)


table("fig5_white")(lambda results: _fig5(results, "white"))
table("fig5_black")(lambda results: _fig5(results, "black"))
table("fig5_v1_white")(lambda results: _fig5(results, "white", ST_V1, "go7-S1", ()))
table("fig5_v1_black")(lambda results: _fig5(results, "black", ST_V1, "go7-S1", ()))


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


def _table1_v1(results: str, threshold: float, opponent: str) -> str:
    """The first run's Table 1 (``ST_V1``: go7-S1 alone, 40 games a row)."""
    run = ST_V1
    cells, body = _pick(_rows(results, run, "cells.csv"), strong="go7-S1", opponent=opponent), []
    for r in _pick(_rows(results, run, "table1.csv"), threshold=threshold, opponent=opponent):
        lam, mu, base = float(r["lambda"]), float(r["mu"]), r["d_win_rate"] == ""
        (c,) = _pick(cells, threshold=0.0 if base else threshold, strong_colour=r["strong_colour"], mu=mu,
                     **{"lambda": lam})  # fmt: skip
        body.append((r["strong_colour"], f"{lam:g}", f"{mu:g}", r["games"], _rate(c),
                     "–" if base else f"{float(r['d_win_rate']):+.1f}", r["wins"],
                     f"{float(r['score']):.1f} ± {float(r['score_se']):.1f}",
                     "–" if base else f"{float(r['d_score']):+.1f}{r['mark_score']}", r["paper9x9_win_rate"],
                     r["paper9x9_d_win_rate"], r["paper9x9_score"], r["paper9x9_d_score"]))  # fmt: skip
    header = ("colour", "λ", "μ", "games", "win % [95% Wilson]", "Δ win", "wins", "score ± se", "Δ score",
              "9×9: win %", "Δ win", "score", "Δ score")  # fmt: skip
    return common.markdown_table(header, body)


for _t in (0.5, 0.7):
    for _opp, _label in (("itself", "itself"), ("go7-W3", "w3")):
        table(f"table1_v1_{_t * 100:.0f}_{_label}")(lambda results, t=_t, o=_opp: _table1_v1(results, t, o))


# --------------------------------------------------------------------------
# The first 7×7 runs (configs/go7_base.py).

_CURVE = (("generation", "generation", ""), ("minutes", "minutes", ".1f"), ("α_∅", "alpha_empty", "+.2f"),
          ("first move", "first_move", ""), ("mean \\|α + k − margin\\|", "score_error", ".1f"))  # fmt: skip
for _run, _last in (("go7", 75), ("go7b", 70)):
    table(f"{_run}_curve")(lambda results, run=_run, last=_last: _summary(
        results, (f"elo_curve/results/earlier/{run}", "learning_curve.csv"), _CURVE,
        lambda r: int(r["generation"]) % 10 == 0 or
        int(r["generation"]) == last))  # fmt: skip


def _share(field: str, p: str):
    """A share as a whole percentage, with its p-value (two significant digits) if any: ``36% (0.79)``."""
    return lambda r: f"{100 * float(r[field]):.0f}%" + (f" ({float(r[p]):#.2g})" if r[p] else "")


_STYLES = (("player", "player", ""),
           ("wins/games [95% Wilson]", lambda r: f"{r['wins']}/{r['games']} [{100 * float(r['wilson_lo']):.0f}, "
                                                 f"{100 * float(r['wilson_hi']):.0f}]"),
           ("mean margin", "mean_margin", ".1f"),
           ("lines 1–2, first 12 plies (Fisher p vs plain)", _share("opening_lines_1_2", "p_opening_lines")),
           ("lines 1–2, all moves (p)", _share("lines_1_2", "p_all_lines")),
           ("p (wins vs plain)", lambda r: r["p_wins"] and f"{float(r['p_wins']):#.2g}"))  # fmt: skip
table("styles")(lambda results: _summary(results, ("styles/results/main", "summary.csv"), _STYLES))


# --------------------------------------------------------------------------
# Figs. 3 and 4 (experiments/handicap/config.py).


def _malus(results: str, opponent: str) -> str:
    """Fig. 3's pooled rows against one opponent: win rates by malus, targets and Holm p against malus 0."""
    run = "handicap/results/main"
    rows = _pick(_rows(results, run, "fig3_summary.csv"), strong="S1-S3", opponent=opponent)
    tests = _pick(_rows(results, run, "fig3_tests.csv"), strong="S1-S3", opponent=opponent)
    targets = _pick(_rows(results, run, "maluses.csv"), opponent=opponent)
    body = []
    for malus in sorted({float(r["malus"]) for r in rows}):
        colour = {r["strong_colour"]: r for r in _pick(rows, malus=malus)}
        aims = [f"{100 * float(t['target_rate']):.0f}% ({100 * float(t['predicted_rate']):.0f}%)"
                for t in _pick(targets, malus=malus)]  # fmt: skip
        holm = [_pick(tests, malus=malus, strong_colour=c) for c in ("white", "black")]
        both = colour["both"]
        body.append((f"{malus:g}", ", ".join(aims) or "paper", _rate(colour["white"]), _rate(colour["black"]),
                     f"{_rate(both)} ({both['games']}, {both['distinct_games']})",
                     f"{float(both['mean_margin']):+.1f}",
                     *(f"{float(t[0]['p_fisher_less_holm']):.2g}" if t else "-" for t in holm)))  # fmt: skip
    header = ("malus", "target (predicted)", "as White", "as Black", "both (games, distinct)", "mean margin",
              "Holm p, White", "Holm p, Black")  # fmt: skip
    return common.markdown_table(header, body)


for _opp in ("itself", "go7-W1", "go7-W2", "go7-W3"):
    table(f"fig3_{_opp.replace('go7-', '').lower()}")(lambda results, o=_opp: _malus(results, o))


# Columns of a summary CSV's rows (``fig*_summary.csv``): header and cell.
_COLUMNS = {
    "handicap": ("handicap", lambda r: f"H{r['handicap']}"),
    "komi": ("komi", lambda r: f"{float(r['komi']):g}"),
    "malus": ("malus", lambda r: f"{float(r['malus']):g}"),
    "lambda": ("λ", lambda r: f"{float(r['lambda']):g}"),
    "games": ("games", lambda r: r["games"]),
    "rate": ("win % [95% Wilson]", _rate),
    "margin": ("mean margin", lambda r: f"{float(r['mean_margin']):+.1f}"),
    "win_margin": ("mean winning margin", lambda r: f"{float(r['mean_win_margin']):.1f}"),
}


def _summary(results: str, path: tuple[str, ...], columns, keep=lambda r: True, **where) -> str:
    """The rows of a CSV (those matching ``where`` and ``keep``, in its order), a cell per column (:func:`_grid`)."""
    return _grid([r for r in _pick(_rows(results, *path), **where) if keep(r)], columns)


def _grid(rows, columns) -> str:
    """A table of ``rows``, a cell per column.

    A column is a name of :data:`_COLUMNS`, ``(header, cell of a row)``, or ``(header, field, format)``
    with ``format`` a format spec for the field's number ("" to copy the field's text).
    """
    cells = [_COLUMNS[c] if isinstance(c, str) else c if len(c) == 2 else (
        c[0], lambda r, k=c[1], f=c[2]: _num(r[k], f) if f else r[k]) for c in columns]  # fmt: skip
    return common.markdown_table([h for h, _ in cells], [[f(r) for _, f in cells] for r in rows])


_HANDICAP = ("handicap", "komi", "malus", "lambda", "games", "rate", "margin", "win_margin")
table("fig4_v1")(
    lambda results: _summary(results, ("handicap/results/earlier/go7_handicap", "fig4_summary.csv"), _HANDICAP)
)
table("fig7_v1")(
    lambda results: _summary(results, ("recovery/results/earlier/go7_recovery", "fig7_summary.csv"), _HANDICAP)
)


def _fig3_v1(results: str, colour: str) -> str:
    """The first run's Fig. 3 (go7-S1): win rate (and mean margin) by opponent and malus."""
    rows = _pick(_rows(results, "handicap/results/earlier/go7_handicap", "fig3_summary.csv"), strong_colour=colour)
    maluses = sorted({float(r["malus"]) for r in rows})
    body = []
    for opp in dict.fromkeys(r["opponent"] for r in rows):
        cells = [_pick(rows, opponent=opp, malus=m)[0] for m in maluses]
        body.append(
            (opp, *(_rate(c) + ("" if colour == "both" else f" ({float(c['mean_margin']):+.0f})") for c in cells))
        )
    return common.markdown_table(("against", *(f"malus {m:g}" for m in maluses)), body)


@table("h2_w1_calibration")
def _h2_w1_calibration(results: str) -> str:
    """H2 against W1 by komi (``handicap/w1``), S1–S3 pooled, a column per komi."""
    rows = _pick(_rows(results, "handicap/results/w1", "fig4_summary.csv"), strong="S1-S3")
    games = "/".join(dict.fromkeys(r["games"] for r in rows))
    return common.markdown_table(
        ("H2 komi", *(_num(r["komi"], "g") for r in rows)),
        [(f"S1–S3 as White, win rate [95% Wilson] ({games} games)", *map(_rate, rows)),
         ("mean margin", *(_num(r["mean_margin"], ".1f") for r in rows))])  # fmt: skip


for _colour in ("white", "black", "both"):
    table(f"fig3_v1_{_colour}")(lambda results, c=_colour: _fig3_v1(results, c))


# --------------------------------------------------------------------------
# The ablation (experiments/ablation/config.py).


@table("ablation_pairings")
def _ablation_pairings(results: str) -> str:
    """Each arm against every earlier one (``arms.csv``'s order), the later arm's wins first."""
    arms = [r["arm"] for r in _rows(results, "ablation/results/main", "arms.csv")]
    pairs = {frozenset((r["first"], r["second"])): r for r in _rows(results, "ablation/results/main", "pairings.csv")}
    body = []
    for i, arm in enumerate(arms):
        for other in arms[:i]:
            r = pairs[frozenset((arm, other))]
            wins = float(r["first_wins"]) if r["first"] == arm else float(r["games"]) - float(r["first_wins"])
            body.append((f"{arm} vs {other}", f"{wins:.0f}/{r['games']}", f"{100 * wins / float(r['games']):.0f}%",
                         *(_p4(r[k]) for k in ("p", "p_holm", "p_bh"))))  # fmt: skip
    return common.markdown_table(("pairing", "first arm's wins", "rate", "p", "Holm", "BH"), body)


def _p4(p) -> str:
    """A p-value to two decimals, or four below 0.01, or ``< 10⁻⁴``."""
    p = float(p)
    return "< 10⁻⁴" if p < 1e-4 else f"{p:.4f}" if p < 0.01 else f"{p:.2f}"


# --------------------------------------------------------------------------
# Fig. 7 (experiments/recovery/config.py).


def _fig7(results: str, handicap: int) -> str:
    rows = _pick(_rows(results, "recovery/results/main", "fig7_summary.csv"), handicap=handicap, strong_colour="white")
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
    for r in _pick(_rows(results, "recovery/results", "paired_tests.csv"), strong="S1-S3"):
        what = f"{_count(r)} vs {_count(r, 'base_')}" if r["measure"] == "wins" else (
            f"{_num(r['value'], '.1f')} vs {_num(r['base_value'], '.1f')}")  # fmt: skip
        body.append((f"H{r['handicap']}, komi {_num(r['komi'], 'g')}", f"{float(r['lambda']):g}",
                     f"{float(r['baseline_lambda']):g}", r["measure"], r["test"], what, f"{r['up']} / {r['down']}",
                     p_text(r["p"]), _adjusted(r), _nocap(r)))  # fmt: skip
    header = ("situation", "λ", "against λ", "measure", "test", "S1–S3 (180 games each)", "higher / lower", "p",
              "Holm / BH", "without capped: p (Holm)")  # fmt: skip
    return common.markdown_table(header, body)


# --------------------------------------------------------------------------
# §4.4 (experiments/suboptimal_moves/config.py).

_S44 = {
    "go7-S1": "go7-S1, λ = μ = 0",
    "go7-S1[l=1,m=0]": "go7-S1, (λ, μ) = (1, 0)",
    "go7-az": "go7-az (winrate head)",
    "go5-sai": "go5-sai, λ = μ = 0",
    "go5-sai[l=1,m=0]": "go5-sai, (λ, μ) = (1, 0)",
    "go5-az": "go5-az (winrate head)",
    "wins": "wins against W3",
    "win_margin": "winning margin",
    "losing_moves": "point-losing moves per win",
    "won_with_none": "won without one",
}


def _s44_summary(results: str, run: str = "main") -> str:
    """A run's conditions (``suboptimal_moves/<run>/summary.csv``), with the margins by colour from its games."""
    games, body = _rows(results, f"suboptimal_moves/results/{run}", "games.csv"), []
    for r in _rows(results, f"suboptimal_moves/results/{run}", "summary.csv"):
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


def _s44_tests(results: str, run: str = "main") -> str:
    """A run's rows of ``suboptimal_moves/paired_tests.csv`` (go5's are in the CSV only)."""
    body = []
    for r in _pick(_rows(results, "suboptimal_moves/results", "paired_tests.csv"), run=run):
        names = (_S44.get(r["condition"], r["condition"]), _S44.get(r["baseline"], r["baseline"]), _S44[r["measure"]])
        body.append((*names, r["test"], r["n"], f"{_num(r['value'], '.2f')} vs {_num(r['base_value'], '.2f')}",
                     f"{r['up']} / {r['down']}", p_text(r["p"]), _adjusted(r)))  # fmt: skip
    header = ("condition", "against", "measure", "test", "paired games", "mean, condition vs baseline",
              "higher / lower", "p", "Holm / BH")  # fmt: skip
    return common.markdown_table(header, body)


# judge_gpu: main's games played again and judged by go7-gpu-G46, a net of another run.
for _run, _name in (("main", "s44"), ("judge_gpu", "s44_judge_gpu")):
    table(f"{_name}_summary")(functools.partial(_s44_summary, run=_run))
    table(f"{_name}_tests")(functools.partial(_s44_tests, run=_run))


# --------------------------------------------------------------------------
# GNU Go, the zoos and the learning curves (configs/go7.py, ablation.py; saijax/zoo).


def _gnugo(results: str, paths, net=None, extra=lambda r: "") -> str:
    """Wins against GNU Go, a row per net (``net`` names it; none: no net column), a column per colour."""
    rows = sorted((r for path in paths for r in _rows(results, *path)), key=lambda r: int(r["generation"]))
    komi = {r["colour"]: _num(r["komi"], "g") for r in rows}
    body = [([net(r)] if net else []) + [_tally(c) + extra(c) for colour in ("black", "white")
                                         for c in _pick(rows, net=r["net"], colour=colour)]
            for r in _pick(rows, colour="black")]  # fmt: skip
    return common.markdown_table(
        (["net"] if net else []) + [f"as {c.title()}, komi {komi[c]}" for c in ("black", "white")], body
    )


table("go5_gnugo")(
    lambda results: _gnugo(
        results,
        [("gnugo_strength/results/go5", "summary.csv")],
        extra=lambda r: f", mean margin {_num(r['mean_margin'], '+.1f')}",
    )
)
table("go7_gnugo")(lambda results: _gnugo(results, [("gnugo_strength/results/earlier/go7_gnugo", f)
                                                    for f in ("summary.csv", "summary_gen30.csv")],
                                          lambda r: f"generation {r['generation']}"))  # fmt: skip
table("ablation_gnugo")(lambda results: _gnugo(results, [("ablation/results/main/gnugo", "summary.csv")],
                                               lambda r: r["net"],
                                               lambda r: f", {r['distinct_games']} distinct games"))  # fmt: skip

_ELO = ("Elo [95%]", lambda r: f"{float(r['elo']):.0f} [{float(r['elo_lo']):.0f}, {float(r['elo_hi']):.0f}]")
_ALPHA, _BETA = ("α_∅", "alpha_empty", "+.2f"), ("β_∅", "beta_empty", ".3f")
_MILLIONS = ("evaluations", lambda r: f"{float(r['evaluations_m']):.1f} M")


def _zoo(results: str, picks: tuple[str, ...], elo: tuple[str, ...], columns, curve=()) -> str:
    """A zoo's entries (``picks``), each with its net's row of the Elo table and learning curve."""
    curve_rows = {r["generation"]: r for r in _rows(results, *curve)} if curve else {}
    elo_rows = {r["generation"]: r for r in _rows(results, *elo)}
    rows = [curve_rows.get(r["generation"], {}) | elo_rows[r["generation"]] | r for r in _rows(results, *picks)]
    return _grid(rows, columns)


table("go7_zoo")(lambda results: _zoo(
    results, ("elo_curve/results/earlier/go7", "zoo_picks.csv"), ("elo_curve/results/earlier/go7", "elo.csv"),
    (("entry", "name", ""), ("generation", "generation", ""), _ELO, _ALPHA)))  # fmt: skip
table("go7_run_zoo")(lambda results: _zoo(
    results, ("elo_curve/results/zoo", "selection.csv"), ("elo_curve/results/main", "elo.csv"),
    (("entry", lambda r: f"go7-{r['role']}"), ("generation", "generation", ""), _MILLIONS, _ELO, _ALPHA, _BETA),
    ("legs/go7_run", "learning_curve.csv")))  # fmt: skip


@table("go7_run_zoo_calibration")
def _go7_run_zoo_calibration(results: str) -> str:
    """The weak candidates against S1–S3, newest first, and the roles they were chosen for."""
    rows = sorted(_rows(results, "elo_curve/results/zoo", "calibration.csv"), key=lambda r: -int(r["generation"]))
    chosen = {r["generation"]: r for r in _rows(results, "elo_curve/results/zoo", "selection.csv") if r["target"]}
    games = "/".join(dict.fromkeys(r["games"] for r in rows))
    return _grid(rows, (
        ("candidate", lambda r: f"generation {r['generation']}"), ("Elo gap", "elo_gap", ".0f"),
        (f"S1–S3 win rate [95% Wilson] ({games} games)", lambda r: _rate(r, rate="strong_rate")),
        ("chosen", lambda r: f"**{c['role']}** (target {100 * float(c['target']):.0f}%)"
         if (c := chosen.get(r["generation"])) else "")))  # fmt: skip


@table("go7_run_curve")
def _go7_run_curve(results: str) -> str:
    """The run's learning curve in blocks of 10 generations: means, the block's end, its last rated net."""
    rows, body = _rows(results, "legs/go7_run", "learning_curve.csv"), []
    elo_rows = _rows(results, "elo_curve/results/main", "elo.csv")
    elo = {int(r["generation"]): r["elo"] for r in elo_rows if r["generation"]}
    for start in range(0, len(rows), 10):
        block, last = rows[start : start + 10], max(g for g in elo if start <= g < start + 10)

        def mean(field, fmt, average=statistics.fmean):
            values = [float(r[field]) for r in block if r[field]]
            return _num(average(values), fmt) if values else ""

        body.append((f"{block[0]['generation']}–{block[-1]['generation']}", _MILLIONS[1](block[-1]),
                     f"{float(block[-1]['minutes']):.0f}", mean("alpha_empty", ".2f"), mean("beta_empty", ".3f"),
                     mean("score_error", ".1f"), mean("score_error_late", ".1f"),
                     mean("beta_late", ".2f", statistics.median), ", ".join(sorted({r["first_move"] for r in block})),
                     f"{float(elo[last]):.0f} (gen {last})"))  # fmt: skip
    header = ("generations", "evaluations (end)", "minutes", "α_∅", "β_∅", "score error", "late error",
              "late β (median)", "first move", "Elo (last of block)")  # fmt: skip
    return common.markdown_table(header, body)


@table("go7_gpu_leg1")
def _go7_gpu_leg1(results: str) -> str:
    """go7_gpu's run so far in blocks of 10 generations (its learning_curve.csv, written by gpu_leg.py unpack)."""
    rows, body = _rows(results, "legs/go7_gpu_run", "learning_curve.csv"), []
    for start in range(0, len(rows), 10):
        block = rows[start : start + 10]

        def mean(field, fmt, average=statistics.fmean, block=block):
            return _num(average([float(r[field]) for r in block]), fmt)

        moves = collections.Counter(r["first_move"] for r in block)
        resigned = sum(int(r["resignations"]) for r in block) / sum(int(r["games"]) for r in block)
        body.append((f"{block[0]['generation']}–{block[-1]['generation']}", _MILLIONS[1](block[-1]),
                     f"{float(block[-1]['minutes']):.1f}", mean("alpha_empty", ".2f"), mean("beta_empty", ".3f"),
                     mean("score_error", ".1f"), mean("score_error_late", ".1f"),
                     mean("beta_late", ".2f", statistics.median),
                     ", ".join(f"{m} ×{n}" if n > 1 else m for m, n in moves.items()),
                     mean("avg_game_length", ".1f"), f"{resigned:.0%}"))  # fmt: skip
    header = ("generations", "evaluations (end)", "minutes (end, generations' own)", "α_∅", "β_∅", "score error",
              "late error", "late β (median)", "first move", "mean length", "resigned")  # fmt: skip
    return common.markdown_table(header, body)


# --------------------------------------------------------------------------
# The ablation's arms and catch-up (experiments/ablation/config.py).


@table("ablation_arms")
def _ablation_arms(results: str) -> str:
    """Each arm (a seed-1 rerun after its seed 0), its last 10 generations, and its Elo; the best in bold."""
    curves = _rows(results, "ablation/results/main", "curves.csv")
    order = [r["arm"] for r in _rows(results, "ablation/results/main", "arms.csv")]
    rows = sorted(_rows(results, "ablation/results/main", "arms.csv"),
                  key=lambda r: (order.index(r["arm"].removesuffix("_s1")),
                                                                               r["arm"]))  # fmt: skip
    best = max(rows, key=lambda r: float(r["elo"]))

    def settled(r):
        if r["d4_from"]:
            return f"generation {r['d4_from']}"
        last = [c["first_move"] for c in _pick(curves, arm=r["arm"])][-10:]
        return f"not settled ({', '.join(m for m, _ in collections.Counter(last).most_common(3))})"

    def elo(r):
        if r["elo_lo"] == r["elo_hi"]:
            return _num(r["elo"], ".0f")  # the anchor
        return f"{_num(r['elo'], '+.0f')} [{_num(r['elo_lo'], '+.0f')}, {_num(r['elo_hi'], '+.0f')}]"

    def bold(cell):
        return lambda r: f"**{cell(r)}**" if r is best else cell(r)

    return _grid(rows, (
        ("arm", bold(lambda r: r["arm"] + (" (seed 1)" if r["arm"].endswith("_s1") else ""))),
        ("evaluations", lambda r: f"{float(r['evaluations_m']):.2f} M"), ("minutes", "minutes", ".0f"),
        ("α_∅ (last 10)", _pm("alpha_empty", "alpha_empty_sd", ".2f")), _BETA,
        ("score error", "score_error", ".1f"),
        ("late error (β)", lambda r: r["score_error_late"] and
         f"{float(r['score_error_late']):.1f} ({float(r['beta_late']):.2f})"),
        ("first move D4 from", settled), ("Elo [95%]", bold(elo))))  # fmt: skip


# --------------------------------------------------------------------------
# SAI's sharp value on 7×7 (experiments/sharp_value/sharp_value.py): what each arm's net learned at the empty board
# beside
# what its self-play data teach (the logistic fit of its complete games' results on their komi).


@table("sharp_value_arms")
def _sharp_value_arms(results: str) -> str:
    """Each arm over its last generations, against the targets (α_∅ 9 ± 0.5, β_∅ ≥ 2, data/net within 1.5)."""

    def beta_path(r):
        return (f"{_num(r['beta_empty_first'], '.2f')} → {_num(r['beta_empty_peak'], '.2f')} "
                f"(gen {r['beta_empty_peak_generation']}) → {_num(r['beta_empty'], '.2f')}")  # fmt: skip

    return _summary(results, ("sharp_value/results/main", "arms.csv"), (
        ("arm", "arm", ""), ("generations", lambda r: f"{r['first_generation']}–{r['last_generation']}"),
        ("evaluations", lambda r: f"{float(r['evaluations_m']):.1f} M"), ("minutes", "minutes", ".0f"),
        ("α_∅ (last 10)", _pm("alpha_empty", "alpha_empty_sd", ".2f")),
        ("β_∅: first → peak → last 10", beta_path), ("data's β (last 10)", "data_beta", ".2f"),
        ("data / net", "data_over_learned_beta", ".2f"),
        ("pooled games: β, all / within 1.5 of 9", lambda r: r["pooled_games"] not in ("", "0") and
         f"{_num(r['pooled_beta'], '.2f')} / {_num(r['pooled_beta_near_fair'], '.2f')} "
         f"± {_num(r['pooled_beta_near_fair_se'], '.2f')} ({r['pooled_games']} games, "
         f"gen {r['pooled_generations']})" or "–"),
        ("β within openings", lambda r: r.get("within_beta", "") not in ("", "nan") and
         f"{_num(r['within_beta'], '.2f')} ± {_num(r['within_beta_se'], '.2f')} ({r['within_openings']} "
         f"openings after {r['within_plies']} moves, {r['within_games']} games)" or "–"),
        ("β within opening and net", lambda r: r.get("within_net_beta", "") not in ("", "nan") and
         f"{_num(r['within_net_beta'], '.2f')} ± {_num(r['within_net_beta_se'], '.2f')} "
         f"({r['within_net_groups']} groups, {r['within_net_games']} games)" or "–"),
        ("D4's share", _percent("centre_share", 0)),
        ("resigned rows", _percent("resigned_row_share", 0)), ("komi sd", "komi_sd", ".1f"),
        ("score error", "score_error", ".1f")))  # fmt: skip


@table("sharp_value_pairs")
def _sharp_value_pairs(results: str) -> str:
    """Pairs of games one net played from one position at two komis: how often the result turns the wrong way."""
    return _summary(results, ("sharp_value/results/main", "komi_pairs.csv"), (
        ("arm", "arm", ""), ("generations", "generations", ""),
        ("komi gap", lambda r: "same komi" if r["komi_gap"] == "0" else f"{r['komi_gap']} points"),
        ("pairs", "pairs", ""), ("same game", "identical", ""), ("same result", "same", ""),
        ("Black better at the lower komi", lambda r: r["proper"] or "–"),
        ("at the higher (wrong way)", lambda r: r["inverted"] or "–"),
        ("wrong way, of those that turned", "inverted_share", ".2f"),
        ("games part at move (median)", "divergence_median", ".0f")))  # fmt: skip


@table("sharp_value_margins")
def _sharp_value_margins(results: str) -> str:
    """The final margins the score target on α is trained toward, beside the net's late β and error."""
    return _summary(results, ("sharp_value/results/main", "margins.csv"), (
        ("arm", "arm", ""), ("generations", "generations", ""), ("played-out rows (games)",
         lambda r: f"{r['rows']} ({r['games']})"), ("size of the margin: mean", "margin_mean_abs", ".1f"),
        ("median", "margin_median_abs", ".1f"),
        ("winner's margin: mean / median", lambda r: f"{_num(r['winner_margin_mean'], '.1f')} / "
         f"{_num(r['winner_margin_median'], '.1f')}"),
        ("over half the board", _percent("collapsed_share", 0)), ("within 3 points", _percent("within_3_share", 0)),
        ("net's late β (error)", lambda r: r.get("beta_late", "") not in ("", "nan") and
         f"{_num(r['beta_late'], '.2f')} ({_num(r['score_error_late'], '.1f')})" or "–")))  # fmt: skip


@table("sharp_value_levers")
def _sharp_value_levers(results: str) -> str:
    """The rounds' families: each lever arm's data's β per generation against its parent's (Welch; Holm
    and BH within the family)."""
    return _summary(results, ("sharp_value/results/main", "lever_tests.csv"), (
        ("family", lambda r: f"{r.get('family') or '–'} ({r.get('family_size') or '?'} "
         f"test{'' if r.get('family_size') == '1' else 's'})"), ("arm", "arm", ""),
        ("its generations", "arm_generations", ""), ("quantity", lambda r: r.get("quantity") or "data_beta"),
        ("arm", _pm("arm_mean", "arm_sd", ".2f")), ("parent (generations)",
         lambda r: f"{r['parent']} ({r['parent_generations']})"),
        ("parent", _pm("parent_mean", "parent_sd", ".2f")), ("difference", "difference", "+.2f"),
        ("detectable at 80%", "detectable", ".2f"), ("Welch p", "p", ".3f"), ("Holm", "holm_p", ".3f"),
        ("BH", "bh_p", ".3f"), ("verdict", "verdict", "")))  # fmt: skip


@table("sharp_value_boards")
def _sharp_value_boards(results: str) -> str:
    """How the played-out complete games ended on the board, by the komi's distance from the fair 9: at
    perfect play's B+9, or moved toward the komi (board_bands.csv)."""
    rows = _rows(results, "sharp_value/results/main", "board_bands.csv")
    body = []
    for arm in dict.fromkeys(r["arm"] for r in rows):
        near, mid, far = (_pick(rows, arm=arm, band=b)[0] for b in ("0-1", "1.5-3", "3.5-inf"))
        share = lambda r, k: _percent(k, 0)(r) if int(r["games"]) else "–"  # noqa: E731
        body.append((arm, near["generations"], f"{near['games']}: {share(near, 'perfect_share')}",
                     f"{mid['games']}: {share(mid, 'perfect_share')} / {share(mid, 'toward_komi_share')}",
                     f"{far['games']}: {share(far, 'perfect_share')} / {share(far, 'toward_komi_share')}"))  # fmt: skip
    header = (
        "arm",
        "generations",
        "komi within 1 of 9: games: at B+9",
        "1.5 to 3 away: games: at B+9 / toward the komi",
        "3.5 or more away: games: at B+9 / toward the komi",
    )
    return common.markdown_table(list(header), body)


@table("sharp_value_decided")
def _sharp_value_decided(results: str) -> str:
    """When the complete games were decided, read by the nets that played them (decided_bands.csv): the
    komi's favourite's score, and when its upsets were decided (the random opening or a later ply)."""
    rows = _rows(results, "sharp_value/results/main", "decided_bands.csv")
    body = []
    for arm in dict.fromkeys(r["arm"] for r in rows):
        cells = [arm, ",".join(sorted({g for r in _pick(rows, arm=arm) for g in r["generations"].split(",")}, key=int))]
        for band in ("0-1", "1.5-3"):
            won = sum(int(r["games"]) for r in _pick(rows, arm=arm, band=band, result="favourite"))
            upsets = _pick(rows, arm=arm, band=band, result="upset")
            lost = sum(int(r["games"]) for r in upsets)
            when = [
                sum(int(r["games"]) * float(r[f"decided_{k}_share"]) for r in upsets) / lost if lost else math.nan
                for k in ("in_opening", "to_15", "16_25", "26_on")
            ]  # fmt: skip
            score = f"{won + lost}: {won / (won + lost):.2f}" if won + lost else "–"
            cells += [score, f"{lost}: " + " / ".join(f"{100 * w:.0f}%" for w in when) if lost else "–"]
        body.append(tuple(cells))
    header = (
        "arm",
        "generations read",
        "komi within 1 of 9 (not 9): games: the favourite's score",
        "its upsets: decided in the opening / by move 15 / 16–25 / 26 on",
        "1.5 to 3 away: games: the favourite's score",
        "its upsets: decided in the opening / by move 15 / 16–25 / 26 on",
    )
    return common.markdown_table(list(header), body)


@table("sharp_value_legs")
def _sharp_value_legs(results: str) -> str:
    """The end-state run's legs against issue 43's stopping rule (three consecutive legs moving β_∅ < 0.1)."""
    return _summary(results, ("sharp_value/results/main", "legs.csv"), (
        ("run", "arm", ""), ("leg", "leg", ""), ("generations", lambda r: r["generations"] + (
            "" if r["complete"] == "True" else " (under way)")),
        ("evaluations (M)", "evaluations_m", ".1f"), ("β_∅: from", "start", ".2f"), ("to", "end", ".2f"),
        ("moved", "move", "+.2f"), ("leg's mean", "mean", ".2f"), ("sd, last 5", "tail_sd", ".2f"),
        ("data's β, mean", "data_beta_mean", ".2f"), ("α_∅, mean", "alpha_empty_mean", ".2f"),
        ("consecutive legs under 0.1", "small_run", ""),
        ("stop", lambda r: "yes" if r["stop"] == "True" else "no")))  # fmt: skip


@table("sharp_value_end")
def _sharp_value_end(results: str) -> str:
    """Each net's end-of-round checks: GTP at 8.5 / 9.5, and Δ from self-play games played at each komi."""
    return _summary(results, ("sharp_value/results/main", "end.csv"), (
        ("net", "net", ""), ("GTP: Black at 8.5", "gtp_black_8.5", ".3f"), ("at 9.5", "gtp_black_9.5", ".3f"),
        ("games at 8.5 / 9.5 (visits)", lambda r: r.get("games_8.5", "") != "" and
         f"{r['games_8.5']} / {r['games_9.5']} ({r['visits']})" or "–"),
        ("Black wins at 8.5", _percent("black_rate_8.5", 1)), ("at 9.5", _percent("black_rate_9.5", 1)),
        ("distinct openings", lambda r: r.get("distinct_openings_8.5", "") != "" and
         f"{r['distinct_openings_8.5']} / {r['distinct_openings_9.5']}" or "–"),
        ("Δ", "delta", ".3f"), ("4·atanh Δ", "delta_beta", ".2f"),
        ("GNU Go level 10: as Black at 8.5 / as White at 9.5", lambda r: r.get("gnugo_black_wins", "") != "" and
         f"{r['gnugo_black_wins']}/{r['gnugo_black_games']} / {r['gnugo_white_wins']}/{r['gnugo_white_games']} "
         f"({r['gnugo_visits']} visits)" or "–")))  # fmt: skip


table("ablation_catch_up")(lambda results: _summary(results, ("ablation/results/main", "catch_up", "summary.csv"), (
    ("rest generation", "generation", ""), ("evaluations", lambda r: f"{float(r['evaluations_m']):.2f} M"),
    ("score against base [95%]", lambda r: "{:.0f}% [{:.0f}%, {:.0f}%]".format(
        *(100 * float(r[k]) for k in ("score", "score_lo", "score_hi")))),
    ("p (vs ½)", lambda r: p_text(r["p"], 4)))))  # fmt: skip


# --------------------------------------------------------------------------
# How self-play's results depend on komi (experiments/opening_spread/opening_spread.py): Δ, Black's win rate
# half a point
# below the fair komi less that half a point above, and 4·atanh Δ, the β it gives; the margins' spread beside
# them, with π / (√3 · sd), the β a logistic spread of the margins would give (not what the net learns).


def _delta_beta(r) -> str:
    """4·atanh Δ; ∞ where Δ is ±1 (the CSV's empty cell)."""
    if r["delta_beta"] == "" and r["delta"] != "" and abs(float(r["delta"])) >= 1:
        return "∞" if float(r["delta"]) > 0 else "−∞"
    return _num(r["delta_beta"], ".2f")


def _spread_columns(komis: str = "8.5 → 9.5"):
    return (("games", "games", ""), ("Black's board margin", "mean_board_margin", "+.1f"),
            ("sd", "sd_board_margin", ".1f"), ("π / (√3 · sd)", "implied_beta", ".3f"),
            (f"Δ ({komis})", "delta", ".3f"), ("4·atanh Δ", _delta_beta))  # fmt: skip


_DRAWN = {"visits": "visits", "improved": "improved policy"}
_SPREAD_HOW = (("random moves", "random_moves", ""), ("drawn ∝", lambda r: _DRAWN[r["opening_policy"]]),
               ("visits", "visits", ""))  # fmt: skip
_SPREAD = _spread_columns()
_DISTINCT = ("distinct openings", "distinct_openings", "")


def _spread(results: str, run: str, folders, columns) -> str:
    """The summary rows of ``run``'s ``folders`` (each row knowing its ``folder``), in that order."""
    return _grid([r | {"folder": f} for f in folders for r in _rows(results, run, f, "summary.csv")], columns)


table("spread")(lambda results: _spread(
    results, "opening_spread/results", ("caps_r8_v32", "caps_r4_v32", "caps_r4_v128", "caps_r2_v32", "rest_r8_v32"),
    (("net", lambda r: r["folder"].split("_")[0]), *_SPREAD_HOW, *_SPREAD, _DISTINCT)))  # fmt: skip
table("spread_s1")(lambda results: _spread(results, "opening_spread/results", ("S1_r8_v64", "S1_r2_v256"), (
    ("net", lambda r: "go7-S1 (generation 169)"), *_SPREAD_HOW, *_SPREAD,
    ("Black wins at 9.5", _percent("black_rate_9.5", 0)), _DISTINCT)))  # fmt: skip
table("spread_gpu")(lambda results: _spread(results, "opening_spread/results", ("S1_r8_v64", "G46_r8_v64"), (
    ("net", lambda r: {"S1_r8_v64": "go7-S1 (CPU run, 3×32, generation 169, 51.8 M evaluations)",
                       "G46_r8_v64": "go7_gpu (H200 run, 4×64, generation 46, 151.2 M evaluations)"}[r["folder"]]),
    *_SPREAD_HOW, *_SPREAD, ("Black wins at 8.5", _percent("black_rate_8.5", 0)),
    ("Black wins at 9.5", _percent("black_rate_9.5", 0)), _DISTINCT)))  # fmt: skip


@table("spread_go5")
def _spread_go5(results: str) -> str:
    """5×5 (perfect play: Black by 25), with how many games end with the whole board either way."""

    def whole_board(r):
        margins = [float(g["board_margin"]) for g in _rows(results, "opening_spread/results", r["folder"], "games.csv")]
        return f"{margins.count(25)} / {margins.count(-25)}"

    return _spread(results, "opening_spread/results", ("go5_r4_v64", "go5_r2_v64"), (
        ("net", lambda r: "go5 (2×32, generation 50)"), _SPREAD_HOW[0], _SPREAD_HOW[2], *_spread_columns("24.5 → 25.5"),
        ("games ending +25 / −25", whole_board), _DISTINCT))  # fmt: skip


# --------------------------------------------------------------------------
# Fig. 4 (experiments/handicap/config.py), S1–S3 pooled.


@table("fig4")
def _fig4(results: str) -> str:
    """Pooled win rates by komi (highest first), a column per handicap, with each test's Holm p."""
    rows = _pick(_rows(results, "handicap/results/main", "fig4_summary.csv"), strong="S1-S3")
    tests = _pick(_rows(results, "handicap/results/main", "fig4_tests.csv"), strong="S1-S3")
    handicaps = list(dict.fromkeys(r["handicap"] for r in rows))

    def cell(komi, handicap):
        rate = [_rate(r) for r in _pick(rows, komi=komi, handicap=handicap)]
        holm = [t["p_fisher_less_holm"] for t in _pick(tests, komi=komi, handicap=handicap)]
        return "".join(rate + [f" (Holm p {_p_is(p)})" for p in holm])

    komis = sorted(dict.fromkeys(r["komi"] for r in rows), key=lambda k: -float(k))
    return common.markdown_table(("komi", *(f"H{h}" for h in handicaps)),
                                 [(_num(k, "g"), *(cell(k, h) for h in handicaps)) for k in komis])  # fmt: skip


# --------------------------------------------------------------------------
# Position control (experiments/position_control/position_control.py).

_CONTROL = {"none": "none (Gumbel)", "B:2.5": "B, c = 2.5", "C:1": "C, c = 1", "C:2.5": "C, c = 2.5 (ABC25)"}
_MARGIN = _pm("mean_margin", "sd_margin", "+.1f")


def _unnatural(r) -> str:
    return _pm("unnatural_per_game", "unnatural_ci", ".2f")(r)


@table("position_control_w3")
def _position_control_w3(results: str) -> str:
    names = _CONTROL | {"naive": "naive (Method A at ½)", "none@starts": "none, from the starts",
                        "C:2.5@starts": "C, c = 2.5, from the starts (Leela+)",
                        "endgame:2@starts": "Algorithm 1, γ = 2, from the starts",
                        "endgame:5@starts": "Algorithm 1, γ = 5, from the starts (KataGo+)"}  # fmt: skip
    return _summary(results, ("position_control/results/main", "summary.csv"), (
        ("condition", lambda r: names[r["condition"]]), ("go7-S1's wins [95% Wilson]", lambda r: _tally(r, 1)),
        ("its margin, mean ± sd", _MARGIN),
        ("unnatural moves / game (share of its moves)",
         lambda r: f"{_unnatural(r)} ({100 * float(r['unnatural_share']):.1f}%)"),
        ("distance to W3's last move", _pm("distance", "distance_ci", ".2f")),
        *((header, lambda r, k=key: _ph(r, k)) for header, key in (
            ("TOST ½ ± 10: p (Holm)", "p_tost"), ("fewer wins than its baseline: Fisher p (Holm)", "p_fewer_wins"),
            ("nearer than naive: Welch p (Holm)", "p_nearer_last_move"),
            ("fewer unnatural than naive: Mann–Whitney p (Holm)", "p_fewer_unnatural_than_naive")))))  # fmt: skip


_PC_V1 = ("position_control/results/earlier/go7_position_control", "summary.csv")
table("position_control")(lambda results: _summary(results, _PC_V1, (
    ("condition", lambda r: _CONTROL.get(r["condition"], r["condition"].replace(":", ", γ = "))),
    ("net's win rate [95% Wilson]", _tally), ("net's margin (mean ± sd)", _MARGIN),
    ("unnatural moves / game", _unnatural), ("distance to GNU Go's last move", _pm("distance", "distance_ci", ".2f")),
    ("p (fewer wins than none)", lambda r: p_text(r["p_fewer_wins"], 4)),
    ("p (closer to ½ than none)", lambda r: p_text(r["p_closer_to_half"], 4)))))  # fmt: skip


# --------------------------------------------------------------------------
# Score estimates (experiments/score_stability/score_stability.py, score_estimation.py).

_ERRORS = (("mean \\|error\\| [95% t]", _ci("mean_abs_error", "mae_lo", "mae_hi")),
           ("on the reference's winning side", _percent("winner_side")))  # fmt: skip


@table("score_stability")
def _score_stability(results: str) -> str:
    names = {
        "root α": "root α + k (no search)",
        "median 1": "median, 1 visit",
        "median 100": "median, 100 visits",
        "median 400": "median, 400 visits",
        "median 1000": "median, 1,000 visits",
    }
    tests = {r["estimator"]: r for r in _rows(results, "score_stability/results/main", "tests.csv")}
    rows = [tests.get(r["estimator"], {}) | r for r in _rows(results, "score_stability/results/main", "summary.csv")]
    return _grid(rows, (
        ("estimator", lambda r: names[r["estimator"]]), ("games", "games", ""),
        ("neighbour change (mean, median)", lambda r: f"{float(r['neighbour_change']):.2f}, "
                                                      f"{float(r['neighbour_change_median']):.2f}"),
        ("visit change at the resign point", "visit_change", ".2f"),
        ("error at the resign point, mean ± sd", _pm("mean_error", "sd_error", "+.1f")), *_ERRORS,
        *((header, lambda r, k=key: _ph(r, k)) for header, key in (
            ("more neighbour change than the 1,000-visit median: p (Holm)", "p_neighbour_greater"),
            ("less: p (Holm)", "p_neighbour_less"),
            ("larger \\|error\\|: p (Holm)", "p_abs_error_greater")))))  # fmt: skip


_ESTIMATORS = {"scorer 1 visits": "scorer, 1 visit (≈ α_s + k)", "scorer 100 visits": "scorer, 100 visits",
               "scorer 400 visits": "scorer, 400 visits", "own search": "own move search (32 visits)"}  # fmt: skip
table("score_estimation")(lambda results: _summary(results, ("score_stability/results/earlier/go7_score_estimation",
                                                              "summary.csv"), (
    ("estimator", lambda r: _ESTIMATORS[r["estimator"]]), ("games", "games", ""),
    ("mean error (estimate − final, B−W)", "mean_error", "+.1f"), ("sd", "sd_error", ".1f"),
    (_ERRORS[0][0], _ci("mean_abs_error", "mae_ci_lo", "mae_ci_hi")),
    ("estimate on the winner's side", _percent("winner_side")),
    ("paired t p vs 400 visits", lambda r: p_text(r["p_vs_reference"])))))  # fmt: skip


# --------------------------------------------------------------------------
# Fig. 5's strength losses, re-analysed (experiments/reanalysis/reanalysis.py).


@table("fig5_losses")
def _fig5_losses(results: str) -> str:
    """The cells the paper's binomial test marks, by opponent, colour (White first) and agent."""
    rows = [r for r in _rows(results, "reanalysis/results", "fig5_score_targeting.csv") if r["mark_binom_known"]]
    rows.sort(key=lambda r: (r["opponent"], r["colour"] != "white", float(r["lambda"]), float(r["mu"])))
    return _grid(rows, (
        ("opponent", lambda r: r["opponent"].replace("go7-", "")), ("colour", "colour", ""), ("(λ, μ)", _agent),
        ("wins vs λ = 0", lambda r: f"{r['wins']}/{r['games']} vs {r['base_wins']}/{r['base_games']}"),
        ("Δ win", "d_win_pts", "+.1f"),
        ("binomial, rate known", lambda r: f"{p_text(r['p_binom_known'])} {r['mark_binom_known']}"),
        ("Fisher", lambda r: p_text(r["p_fisher_less"])),
        ("Fisher, Holm / BH", lambda r: f"{p_text(r['p_fisher_less_holm'])} / {p_text(r['p_fisher_less_bh'])}"),
        ("Fisher, two-sided", lambda r: p_text(r["p_fisher_two"]))))  # fmt: skip


# --------------------------------------------------------------------------
# §4.4's first rounds (experiments/suboptimal_moves/suboptimal_moves.py).


def _suboptimal(results: str, run: str, board: str, margins, tests=()) -> str:
    """``summary.csv``'s conditions, each with its ``won`` games (:func:`stat_tables.point_losing_by_game`)
    and its row (if any) of ``reanalysis/suboptimal.csv`` (for ``board``, ``go7`` or ``go5``)."""
    games, moves = _rows(results, run, "games.csv"), _rows(results, run, "moves.csv")
    reanalysed = {(r["board"], r["condition"]): r for r in _rows(results, "reanalysis/results", "suboptimal.csv")
             if r["baseline"] == r["condition"].split("[")[0]}  # fmt: skip
    rows = [reanalysed.get((board, r["condition"]), {}) | r |
            {"won": list(stat_tables.point_losing_by_game(games, moves, r["condition"])[1].values())}
            for r in _rows(results, run, "summary.csv")]  # fmt: skip
    return _grid(rows, (("condition", lambda r: _S44[r["condition"]]),
                        ("wins/games", lambda r: f"{r['wins']}/{r['games']}"), *margins,
                        ("point-losing moves per won game", "losing_moves_per_win", ".2f"),
                        ("of them once decided (lead > 5)", "losing_moves_when_decided", ".2f"), *tests,
                        ("won games with none", _won_with_none)))  # fmt: skip


def _won_with_none(r) -> str:
    none = sum(w["moves"] == 0 for w in r["won"])
    return f"{none}/{len(r['won'])} ({100 * none / len(r['won']):.1f}%)"


def _as_white(r) -> str:
    """The mean (sd) winning margin of the wins as White, and their number."""
    margins = [w["margin"] for w in r["won"] if w["colour"] == "white"]
    return f"{statistics.fmean(margins):.1f} ({statistics.stdev(margins):.1f}), {len(margins)}"


table("suboptimal_go7")(lambda results: _suboptimal(results, "suboptimal_moves/results/earlier/go7_suboptimal", "go7", (
    ("mean winning margin (sd)", lambda r: f"{float(r['mean_win_margin']):.1f} ({float(r['sd_win_margin']):.1f})"),
    ("Welch one-sided p (margin > λ = 0)", lambda r: p_text(r.get("margin_p_welch_greater", "")))),
    [("Mann–Whitney one-sided p", lambda r: p_text(r.get("p_losing_moves_fewer", "")))]))  # fmt: skip
table("suboptimal_go5")(lambda results: _suboptimal(results, "suboptimal_moves/results/go5", "go5", (
    ("winning margin as White, mean (sd), wins", _as_white),)))  # fmt: skip


# --------------------------------------------------------------------------
# The 5×5 baselines (experiments/baselines/baselines.py).


def _seeds(field: str, fmt: str = "", scale: float = 1.0):
    """A cell of a field holding a value per seed (``741;1043``): ``741; 1043``."""
    return lambda r: "; ".join(_num(float(x) / scale, fmt) if fmt else x for x in r[field].split(";"))


@table("go5_baselines")
def _go5_baselines(results: str) -> str:
    rows = _rows(results, "baselines/results/main", "summary.csv")
    return _grid(rows, (
        ("arm", lambda r: r["arm"] + (" (gated)" if r["arm"] == "LZS" else "")),
        ("Elo at equal compute, seeds 0; 1", _seeds("equal_compute_elo_per_seed")),
        ("mean ± s.e.", _pm("equal_compute_elo", "equal_compute_elo_se", ".0f")),
        ("vs SAI: z test p (nets) / Welch t on seeds p", lambda r: r["elo_vs_sai"] and (
            f"{_num(r['elo_vs_sai'], '+.0f')}: p {_p_is(r['elo_vs_sai_p'])} / {p_text(r['elo_vs_sai_seed_p'])}")),
        (f"final Elo (gen {rows[0]['generations'].split(';')[0]}), seeds", _seeds("final_elo_per_seed")),
        ("evaluations per run (M)", lambda r: _seeds("evaluations_total", ".2f", 1e6)(r) + (
            f" (+{int(r['gating_games'].split(';')[0]):,} gate games each)" if r["gating_games"].strip("0;") else "")),
        ("wall minutes per run", _seeds("minutes", ".1f")),
        ("GNU Go L10, as B / as W (komi 24.5)", lambda r: f"{r['gnugo_black']}; {r['gnugo_white']}")))  # fmt: skip


@table("go5_calibration")
def _go5_calibration(results: str) -> str:
    """SAI's and NoBranch's score error and mean β by move, ± their standard errors."""
    rows, arms = _rows(results, "baselines/results/main", "calibration.csv"), ("SAI", "NoBranch")
    cells = (_pm("mean_abs_error", "error_se"), _pm("mean_beta", "beta_se", ".2f"))
    body = [(moves.replace("-", "–"), *(cell(_pick(rows, arm=a, moves=moves)[0]) for cell in cells for a in arms))
            for moves in dict.fromkeys(r["moves"] for r in rows)]  # fmt: skip
    return common.markdown_table(("moves", *(f"{a} {what} ± s.e." for what in ("error", "β") for a in arms)), body)


def documents(root: str = EXPERIMENTS) -> list[str]:
    """The Markdown files of ``root`` and of its folders (not deeper: a results folder's reports are data)."""
    found = [os.path.join(root, n) for n in os.listdir(root) if n.endswith(".md")]
    for d in os.listdir(root):
        if os.path.isdir(os.path.join(root, d)):
            found += [os.path.join(root, d, n) for n in os.listdir(os.path.join(root, d)) if n.endswith(".md")]
    return sorted(found)


@table("sharp_recipe_targets")
def _sharp_recipe_targets(results: str) -> str:
    """Each seed's targets of issue 63: the figure, its spread and whether it is met."""
    rows = _rows(results, "sharp_recipe/results/main", "targets.csv")
    met = ("met", lambda r: "**yes**" if r["met"] == "True" else "no")
    return _grid(rows, (("seed", "seed", ""), ("target", "target", ""), ("figure", "figure", ""),
                        ("spread", "spread", ""), met))  # fmt: skip


@table("sharp_recipe_timing")
def _sharp_recipe_timing(results: str) -> str:
    """Where each seed's wall time went."""
    rows = _rows(results, "sharp_recipe/results/main", "timing.csv")
    return _grid(rows, (("seed", "seed", ""), ("generations", "generations", ""),
                        ("evaluations (M)", "evaluations_m", ".2f"), ("wall hours", "wall_hours", ".2f"),
                        ("self-play evaluations/s", "selfplay_evaluations_per_s", ".0f"),
                        ("self-play share", "selfplay_share", ".2f"), ("training share", "train_share", ".2f"),
                        ("rest", "other_share", ".2f")))  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="experiments.lib.readme_tables", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="only check: exit 1 naming the tables that differ")
    p.add_argument("--readme", action="append", help="a document (repeatable; default: documents())")
    p.add_argument("--results", default=RESULTS)
    args = p.parse_args(argv)
    failed = False
    for path in args.readme or documents():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if args.check:
            names, loose = stale(text, args.results), unmarked(text)
            if names:
                print(f"{path}: these tables differ from their CSVs: {', '.join(names)}", file=sys.stderr)
            for where in loose:
                print(f"{path}: numeric table not generated: {where}", file=sys.stderr)
            failed |= bool(names or loose)
            continue
        new = render(text, args.results)  # before opening the document for writing: a failing maker leaves it whole
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    return int(failed)


if __name__ == "__main__":
    raise SystemExit(main())
