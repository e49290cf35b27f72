"""Tables of two-sample tests for the experiments: win rates, margins, corrections and power.

The experiment scripts and :mod:`experiments.reanalysis` build their test
tables from these rows:

* :func:`compare_wins`: a condition's wins against its baseline's, Fisher's
  exact test one-sided in the claimed direction and two-sided;
* :func:`compare_margins`: Welch's t-test and the Mann–Whitney U test of
  margins, one-sided (larger);
* :func:`correct`: Holm and Benjamini–Hochberg adjusted p-values beside each
  raw p column, over a whole table;
* :func:`power_row`, :func:`margin_power`: the smallest effect a cell's size
  can detect (α = :data:`ALPHA`, power :data:`POWER`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from saijax import stats

ALPHA, POWER = 0.05, 0.8


def correct(rows: list[dict], *columns: str) -> list[dict]:
    """Adds ``<column>_holm`` and ``<column>_bh`` beside each p column, over all ``rows`` (one family per column)."""
    for col in columns:
        raw = [r.get(col, math.nan) for r in rows]
        raw = [math.nan if v is None or v == "" else float(v) for v in raw]
        for suffix, adjusted in (("holm", stats.holm_correction(raw)), ("bh", stats.benjamini_hochberg(raw))):
            for r, a in zip(rows, adjusted):
                r[f"{col}_{suffix}"] = a
    return rows


def compare_wins(wins: int, games: int, base_wins: int, base_games: int, direction: str) -> dict:
    """Two-sample Fisher tests of a condition against its baseline; ``direction`` is "less" or "greater"."""
    return {
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else math.nan,
        "base_games": base_games,
        "base_wins": base_wins,
        "base_win_rate": base_wins / base_games if base_games else math.nan,
        "d_win_pts": 100 * (wins / games - base_wins / base_games) if games and base_games else math.nan,
        f"p_fisher_{direction}": stats.fisher_win_test(wins, games, base_wins, base_games, direction),
        "p_fisher_two": stats.fisher_win_test(wins, games, base_wins, base_games),
    }


def compare_margins(values: list[float], base: list[float], prefix: str = "") -> dict:
    """Welch and Mann–Whitney tests, one-sided: ``values`` larger than ``base``."""
    _, p_welch = stats.welch_t_test(values, base, "greater")
    _, p_mw = stats.mann_whitney_test(values, base, "greater")
    mean = statistics.fmean(values) if values else math.nan
    base_mean = statistics.fmean(base) if base else math.nan
    return {
        f"{prefix}n": len(values),
        f"{prefix}mean": mean,
        f"{prefix}base_n": len(base),
        f"{prefix}base_mean": base_mean,
        f"{prefix}diff": mean - base_mean,
        f"{prefix}p_welch_greater": p_welch,
        f"{prefix}p_mw_greater": p_mw,
    }


def sd(values: list[float]) -> float:
    """The sample standard deviation; NaN below two values."""
    return statistics.stdev(values) if len(values) > 1 else math.nan


def power_row(figure: str, cell: str, games: int, base_rate: float, base_games: int | None = None, **extra) -> dict:
    """The detectable win rates (two- and one-sided, lower and higher) for a figure's cell size and baseline."""
    row = {"figure": figure, "cell": cell, "games_per_arm": games, "base_games": base_games or games}
    row["base_win_rate"] = base_rate
    for alt, name in (("two-sided", "two"), ("less", "one")):
        for direction in ("lower", "higher"):
            rate = stats.detectable_win_rate(games, base_rate, ALPHA, POWER, alt, direction, base_games)
            row[f"detectable_{direction}_{name}_sided"] = rate
            row[f"detectable_d_{direction}_{name}_sided_pts"] = 100 * (rate - base_rate)
    target = base_rate - 0.10 if base_rate >= 0.10 else base_rate + 0.10
    row["games_per_arm_for_10pt_one_sided"] = stats.games_per_arm_needed(base_rate, target, ALPHA, POWER, "less")
    row.update(extra)
    return row


def margin_power(figure: str, cell: str, a: list[float], b: list[float]) -> dict:
    """The smallest detectable difference of mean margins between two samples like ``a`` and ``b``."""
    return {
        "figure": figure,
        "cell": cell,
        "margin_n": len(a),
        "margin_base_n": len(b),
        "margin_sd": sd(a),
        "margin_base_sd": sd(b),
        "detectable_margin_diff_one_sided": stats.detectable_mean_difference(
            sd(a), len(a), sd(b), len(b), ALPHA, POWER, "greater"
        )
        if len(a) > 1 and len(b) > 1
        else math.nan,
    }


def detectable_line(games: int, label: str, baselines: Sequence[float], direction: str = "lower") -> str:
    """One line of a figure's power report: the rates ``games`` per arm tell from each baseline.

    Two samples of ``games`` each, one-sided at :data:`ALPHA` with power
    :data:`POWER` (arcsine approximation, :func:`saijax.stats.detectable_win_rate`),
    e.g. "90 games per arm (pooled) detect falls of 50% → 32%, 75% → 58%".
    """
    steps = []
    for base in baselines:
        rate = stats.detectable_win_rate(games, base, ALPHA, POWER, "less", direction)
        steps.append(f"{100 * base:g}% → {100 * rate:.0f}%" if math.isfinite(rate) else f"{100 * base:g}% → none")
    kind = "falls" if direction == "lower" else "rises"
    return f"{games} games per arm ({label}) detect {kind} of {', '.join(steps)}"
