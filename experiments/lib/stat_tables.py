"""Tables of two-sample tests for the experiments: win rates, margins, corrections and power.

The experiment scripts and :mod:`experiments.reanalysis.reanalysis` build their test
tables from these rows:

* :func:`compare_wins`: a condition's wins against its baseline's, Fisher's
  exact test one-sided in the claimed direction and two-sided;
* :func:`compare_margins`: Welch's t-test and the Mann–Whitney U test of
  margins, one-sided (larger);
* :func:`correct`: Holm and Benjamini–Hochberg adjusted p-values beside each
  raw p column, over a whole table;
* :func:`power_row`, :func:`margin_power`: the smallest effect a cell's size
  can detect (α = :data:`ALPHA`, power :data:`POWER`);
* :func:`point_losing_outcomes`, :func:`compare_point_losing`: §4.4's
  winning margins and point-losing moves of a condition, and the tests of
  one condition against another (``experiments/suboptimal_moves/suboptimal_moves.py`` and
  :mod:`experiments.reanalysis.reanalysis`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from saijax.analysis import stats

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
    :data:`POWER` (arcsine approximation, :func:`saijax.analysis.stats.detectable_win_rate`),
    e.g. "90 games per arm (pooled) detect falls of 50% → 32%, 75% → 58%".
    """
    steps = []
    for base in baselines:
        rate = stats.detectable_win_rate(games, base, ALPHA, POWER, "less", direction)
        steps.append(f"{100 * base:g}% → {100 * rate:.0f}%" if math.isfinite(rate) else f"{100 * base:g}% → none")
    kind = "falls" if direction == "lower" else "rises"
    return f"{games} games per arm ({label}) detect {kind} of {', '.join(steps)}"


def point_losing_by_game(
    game_rows: Sequence[dict], move_rows: Sequence[dict], name: str, *, loss: float = 1.0, decided_only: bool = False
) -> tuple[int, dict[int, dict]]:
    """(games played, won game -> its ``margin``, ``colour``, point-losing ``moves`` and ``end``) of condition ``name``.

    ``game_rows`` and ``move_rows`` are the rows of ``suboptimal_moves.py``'s
    ``games.csv`` and ``moves.csv`` (strings or numbers). A won game counts
    its winner's moves whose ``loss`` exceeds ``loss`` (only those marked
    ``decided`` with ``decided_only``).
    """
    played, won = 0, {}
    for g in game_rows:
        if g["condition"] != name:
            continue
        played += 1
        colour = "black" if g["black"] == name else "white"
        if g["winner"] == colour:
            margin = float(g["margin"]) * (1 if colour == "black" else -1)
            won[int(float(g["game"]))] = dict(margin=margin, colour=colour, moves=0, end=g.get("end", ""))
    for m in move_rows:
        key = int(float(m["game"]))
        if m["condition"] != name or key not in won or float(m["loss"]) <= loss:
            continue
        if not decided_only or m["decided"] in (True, "True"):
            won[key]["moves"] += 1
    return played, won


def point_losing_outcomes(
    game_rows: Sequence[dict],
    move_rows: Sequence[dict],
    name: str,
    *,
    loss: float = 1.0,
    white_only: bool = False,
    decided_only: bool = False,
) -> tuple[int, list[float], list[int]]:
    """(games played, winning margins, point-losing moves per won game) of condition ``name``
    (:func:`point_losing_by_game`); ``white_only`` keeps the margins of wins as White (where komi makes
    Black's wins all small)."""
    played, won = point_losing_by_game(game_rows, move_rows, name, loss=loss, decided_only=decided_only)
    margins = [w["margin"] for w in won.values() if w["colour"] == "white" or not white_only]
    return played, margins, [w["moves"] for w in won.values()]


def compare_point_losing(
    game_rows: Sequence[dict],
    move_rows: Sequence[dict],
    name: str,
    base: str,
    *,
    loss: float = 1.0,
    white_only: bool = False,
) -> dict:
    """§4.4's tests of condition ``name`` against ``base`` (e.g. SAI against a winrate-head net).

    Wins (Fisher, higher and two-sided: similar strength), winning margins
    (Welch and Mann–Whitney, larger; with the smallest difference the wins
    can detect), point-losing moves per won game (Mann–Whitney, fewer) and
    won games with none (Fisher, more).
    """
    games, margins, counts = point_losing_outcomes(game_rows, move_rows, name, loss=loss, white_only=white_only)
    base_games, base_margins, base_counts = point_losing_outcomes(
        game_rows, move_rows, base, loss=loss, white_only=white_only
    )
    row = {"condition": name, "baseline": base}
    row.update(compare_wins(len(counts), games, len(base_counts), base_games, "greater"))
    row.update(compare_margins(margins, base_margins, prefix="margin_"))
    enough = len(margins) > 1 and len(base_margins) > 1
    row["margin_detectable_diff"] = (
        stats.detectable_mean_difference(sd(margins), len(margins), sd(base_margins), len(base_margins),
                                         ALPHA, POWER, "greater") if enough else math.nan
    )  # fmt: skip
    row["losing_moves_per_win"] = statistics.fmean(counts) if counts else math.nan
    row["base_losing_moves_per_win"] = statistics.fmean(base_counts) if base_counts else math.nan
    row["p_losing_moves_fewer"] = (
        stats.mann_whitney_test(counts, base_counts, "less")[1] if counts and base_counts else math.nan
    )
    none, base_none = sum(c == 0 for c in counts), sum(c == 0 for c in base_counts)
    row.update(won_with_none=none, won=len(counts), base_won_with_none=base_none, base_won=len(base_counts))
    row["p_with_none_more"] = (
        stats.fisher_win_test(none, len(counts), base_none, len(base_counts), "greater")
        if counts and base_counts
        else math.nan
    )
    return row


POINT_LOSING_TESTS = ("margin_p_welch_greater", "margin_p_mw_greater", "p_losing_moves_fewer", "p_with_none_more")
