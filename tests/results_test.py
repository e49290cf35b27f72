"""Tests for saijax.analysis.results: the table's writer and reader, intervals, summaries, reports."""

import csv
import dataclasses
import json
import math
import re

import numpy as np
import pytest
import scipy.stats

from saijax.analysis import results, stats


def _game(i=0, **changes):
    row = results.GameResult(
        black="x",
        white="y",
        winner="black",
        margin=2.5,
        resigned=False,
        moves=12,
        komi=7.5,
        handicap=0,
        end="passes",
        score_estimate=None,
        engine_score="",
        engine_dead="",
        sgf="",
        game=i,
        seed=0,
    )
    return dataclasses.replace(row, **changes)


def _row(black, white, winner, margin, resigned=False):
    return {"black": black, "white": white, "winner": winner, "margin": margin, "resigned": resigned, "moves": 30}


# ---------------------------------------------------------------------------
# Writing and reading.


def test_columns_are_the_fields_in_order():
    assert results.COLUMNS == tuple(f.name for f in dataclasses.fields(results.GameResult))
    assert results.COLUMNS[:4] == ("black", "white", "winner", "margin")
    assert list(_game().to_dict()) == list(results.COLUMNS)


def test_results_table_csv_roundtrip_and_header_check(tmp_path):
    rows = [_game(i, winner=w, margin=m) for i, (w, m) in enumerate([("black", 2.5), ("white", -0.5), ("draw", 0.0)])]
    path = tmp_path / "t.csv"
    results.append_results(path, rows[:2])
    results.append_results(path, rows[2:])
    assert path.read_text().splitlines()[0] == ",".join(results.COLUMNS)
    back = results.read_results(path)
    assert [r.winner for r in back] == ["black", "white", "draw"]
    assert [r.margin for r in back] == [2.5, -0.5, 0.0] and back[0].score_estimate is None
    assert results.summarize(back, "x").overall.win_rate == pytest.approx(0.5)
    bad = tmp_path / "bad.csv"
    bad.write_text("black,white,winner\nx,y,black\n")
    with pytest.raises(ValueError, match="header"):
        results.append_results(bad, rows)


@pytest.mark.parametrize("name", ["t.jsonl", "t.csv", "sub/dir/T.CSV"])
def test_read_results_round_trips_append_results(tmp_path, name):
    rows = [
        _game(0),
        _game(
            1,
            winner="white",
            margin=-0.5,
            resigned=True,
            end="resign",
            score_estimate=3.25,  # the wrong side of zero: recorded as -0.5
            komi=-2.5,
            handicap=2,
            sgf="games/game_s0_0001.sgf",
        ),
        _game(2, black="007", white="1.5", winner="draw", margin=0.0, komi=7.0, moves=0, end="cap", seed=123),
        _game(3, winner="white", margin=-6.0, engine_score="W+6.0", engine_dead="A1 B2", score_estimate=None),
        _game(4, margin=None, moves=None, komi=None, game=None, seed=None),
    ]
    path = tmp_path / name
    for row in rows:
        results.append_results(path, [row])
    back = results.read_results(path)
    assert back == rows
    assert [type(r.komi) for r in back[:4]] == [float] * 4 and type(back[2].moves) is int
    assert back[1].resigned is True and back[0].resigned is False
    assert back[2].black == "007" and back[2].white == "1.5"  # names stay strings
    with open(path) as f:
        assert len([line for line in f if line.strip()]) == len(rows) + name.lower().endswith(".csv")


def test_jsonl_keys_are_the_columns(tmp_path):
    path = tmp_path / "t.jsonl"
    results.append_results(path, [_game(0), _game(1, score_estimate=1.5)])
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    assert [list(r) for r in raw] == [list(results.COLUMNS)] * 2
    assert raw[0]["score_estimate"] is None and raw[1]["score_estimate"] == 1.5


def _records():
    return [
        {
            "black": "random",
            "white": "gen1",
            "winner": "white",
            "margin": -12.5,
            "moves": 61,
            "komi": 7.5,
            "handicap": 0,
            "sgf": "games/0.sgf",
            "resigned": False,
        },
        {
            "black": "gen1",
            "white": "random",
            "winner": "black",
            "margin": None,
            "moves": 40,
            "komi": 7.5,
            "handicap": 0,
            "sgf": "games/1.sgf",
            "resigned": True,
        },
        {
            "black": "gen1",
            "white": "007",
            "winner": "draw",
            "margin": 0.0,
            "moves": 80,
            "komi": 7.0,
            "handicap": 2,
            "sgf": "games/2.sgf",
            "resigned": False,
        },
    ]


def _columns(rows, names):
    return [{name: getattr(r, name) for name in names} for r in rows]


def test_read_results_reads_hand_written_jsonl_and_csv(tmp_path):
    records = _records()
    jsonl = tmp_path / "results.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n")
    path_csv = tmp_path / "results.csv"
    with open(path_csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    assert _columns(results.read_results(jsonl), records[0]) == records
    assert _columns(results.read_results(path_csv), records[0]) == records
    assert results.read_results(str(path_csv))[2].white == "007"  # stays a name
    # The columns the tables lack take their defaults.
    for row in results.read_results(jsonl):
        assert (row.end, row.score_estimate, row.engine_score, row.game, row.seed) == ("", None, "", None, None)


def test_minimal_table_defaults_and_ignored_columns(tmp_path):
    path = tmp_path / "min.csv"
    path.write_text("black,white,winner,note\n7,b,Black,hello\na,b,draw,\n")
    rows = results.read_results(path)
    assert rows[0] == results.GameResult(black="7", white="b", winner="black")
    assert (rows[0].margin, rows[0].resigned, rows[0].moves, rows[0].handicap) == (None, False, None, 0)
    jsonl = tmp_path / "min.jsonl"
    jsonl.write_text('{"black": 7, "white": "b", "winner": "WHITE", "margin": null, "extra": [1]}\n')
    assert results.read_results(jsonl) == [results.GameResult(black="7", white="b", winner="white")]
    # Summaries and listings cope with the missing columns.
    assert results.summarize(rows, "b").overall.draws == 1
    assert "black" in results.format_games(rows).splitlines()[1]


def test_read_results_reports_bad_rows(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"black": "a", "white": "b", "winner": "black"}\n{"black": "a", "white": "b", "winner": "B+R"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: winner"):
        results.read_results(bad)
    missing = tmp_path / "missing.csv"
    missing.write_text("black,winner\na,black\n")
    with pytest.raises(ValueError, match=r"missing.csv:2: missing column.*white"):
        results.read_results(missing)
    itself = tmp_path / "itself.jsonl"
    itself.write_text('{"black": "a", "white": "a", "winner": "draw"}\n')
    with pytest.raises(ValueError, match=r"itself.jsonl:1: player 'a' plays itself"):
        results.read_results(itself)
    not_json = tmp_path / "broken.jsonl"
    not_json.write_text('{"black": "a", "white": "b", "winner": "black"}\n\n{"black": "a",\n')
    with pytest.raises(ValueError, match=r"broken.jsonl:3: bad JSON"):
        results.read_results(not_json)
    not_object = tmp_path / "list.jsonl"
    not_object.write_text('["a", "b", "black"]\n')
    with pytest.raises(ValueError, match=r"list.jsonl:1: expected an object per game, got list"):
        results.read_results(not_object)


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("margin", "abc", "margin must be a number, got 'abc'"),
        ("moves", "2.5", "moves must be an integer, got '2.5'"),
        ("resigned", "maybe", "resigned must be true or false, got 'maybe'"),
        ("komi", "True", "komi must be a number, got 'True'"),
    ],
)
def test_read_results_names_the_file_line_and_bad_value(tmp_path, column, value, message):
    path = tmp_path / "t.csv"
    results.append_results(path, [_game(0), _game(1), _game(2)])
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    cells[results.COLUMNS.index(column)] = value
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as info:
        results.read_results(path)
    assert str(info.value) == f"{path}:3: {message}"
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps(_game(0).to_dict()) + "\n" + json.dumps({**_game(1).to_dict(), "moves": 2.5}) + "\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(jsonl))}:2: moves must be an integer, got 2.5$"):
        results.read_results(jsonl)


def test_read_results_rejects_ragged_csv(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("black,white,winner\na,b,black,extra\n")
    with pytest.raises(ValueError, match="ragged.csv:2: more cells"):
        results.read_results(ragged)


# ---------------------------------------------------------------------------
# Winner and margin.


def test_winner_and_margin():
    assert results.winner_and_margin(3.5, 0, None) == ("black", 3.5)
    assert results.winner_and_margin(-0.5, 0, None) == ("white", -0.5)
    assert results.winner_and_margin(0.0, 0, None) == ("draw", 0.0)
    # A resignation decides the winner; the estimate gives the margin...
    assert results.winner_and_margin(99.0, 1, 12.25) == ("black", 12.25)
    assert results.winner_and_margin(99.0, -1, -4.0) == ("white", -4.0)
    # ...unless it is on the wrong side of zero, zero, missing or not finite.
    assert results.winner_and_margin(0.0, 1, -3.0) == ("black", 0.5)
    assert results.winner_and_margin(0.0, -1, 3.0) == ("white", -0.5)
    assert results.winner_and_margin(0.0, -1, 0.0) == ("white", -0.5)
    assert results.winner_and_margin(0.0, 1, None) == ("black", 0.5)
    assert results.winner_and_margin(0.0, 1, math.nan) == ("black", 0.5)


# ---------------------------------------------------------------------------
# Intervals and summaries.


def test_intervals_known_values():
    assert results.wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert results.clopper_pearson_interval(5, 10) == pytest.approx((0.1871, 0.8129), abs=1e-4)
    lo, hi = results.clopper_pearson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    lo, hi = results.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert results.wilson_interval(0, 0) == (0.0, 1.0)


def test_summarize_hand_made_table():
    games = [
        # A as black: 4 wins (by 3.5, 5.5, 0.5, R 2.0), 1 loss.
        _row("A", "B", "black", 3.5),
        _row("A", "B", "black", 5.5),
        _row("A", "B", "black", 0.5),
        _row("A", "B", "black", 2.0, resigned=True),
        _row("A", "B", "white", -1.5),
        # A as white: 2 wins (by 4.5, 6.5), 1 draw, 2 losses.
        _row("B", "A", "white", -4.5),
        _row("B", "A", "white", -6.5),
        _row("B", "A", "draw", 0.0),
        _row("B", "A", "black", 2.5),
        _row("B", "A", "black", 10.5, resigned=True),
        # Not A's games.
        _row("B", "C", "black", 1.5),
    ]
    s = results.summarize(games, "A")
    assert s.opponents == ("B",)
    assert (s.overall.games, s.overall.wins, s.overall.draws, s.overall.losses) == (10, 6, 1, 3)
    assert s.overall.win_rate == pytest.approx(0.65)
    assert (s.black.wins, s.black.losses, s.black.win_rate) == (4, 1, pytest.approx(0.8))
    assert (s.white.wins, s.white.draws, s.white.losses, s.white.win_rate) == (2, 1, 2, pytest.approx(0.5))
    assert s.black.mean_win_margin == pytest.approx((3.5 + 5.5 + 0.5 + 2.0) / 4)
    assert s.white.mean_win_margin == pytest.approx((4.5 + 6.5) / 2)
    assert s.white.mean_margin == pytest.approx((4.5 + 6.5 + 0 - 2.5 - 10.5) / 5)
    assert s.wilson == pytest.approx(results.wilson_interval(6.5, 10))
    assert s.wilson[0] < 0.65 < s.wilson[1] and s.clopper_pearson[0] < 0.65 < s.clopper_pearson[1]
    assert (s.resignations, s.counted) == (2, 8)
    b = results.summarize(games, "B")
    assert b.overall.wins == 3 + 1 and b.overall.losses == 6
    report = results.format_report(s)
    assert "A vs B: 10 games" in report and "65.0%" in report and "80.0%" in report
    with pytest.raises(ValueError, match="none of the games"):
        results.summarize(games, "nobody")
    # GameResult rows give the same summary as dicts.
    rows = [results.GameResult.from_dict(g) for g in games]
    assert results.summarize(rows, "A") == s


def test_game_line_and_format_games():
    resigned = _game(3, winner="white", margin=-0.5, resigned=True, end="resign", moves=7)
    counted = _game(12, engine_score="B+2.5")
    assert results.game_line(resigned) == "game   3: B x vs W y: white wins, margin -0.5 (resignation, 7 moves)"
    assert results.game_line(counted) == (
        "game  12: B x vs W y: black wins, margin +2.5 (two passes, 12 moves, engine B+2.5)"
    )
    table = results.format_games([resigned, counted.to_dict()]).splitlines()
    assert table[0].split() == ["game", "black", "white", "winner", "margin", "end", "moves", "engine"]
    assert table[1].split() == ["3", "x", "y", "white", "-0.5", "resign", "7"]
    assert table[2].split() == ["12", "x", "y", "black", "+2.5", "passes", "12", "B+2.5"]


# ---------------------------------------------------------------------------
# Tests between conditions, corrections, power.


def test_fisher_win_test_hand_values_and_direction():
    # [[1, 9], [5, 5]]: P(X <= 1), X ~ hypergeometric(20 games, 6 wins, 10 drawn) = (210 + 10 * 252) / C(20, 6).
    assert stats.fisher_win_test(1, 10, 5, 10, "less") == pytest.approx(2730 / 38760)
    assert stats.fisher_win_test(5, 10, 1, 10, "greater") == pytest.approx(2730 / 38760)
    two = stats.fisher_win_test(1, 10, 5, 10)
    assert two == pytest.approx(2 * 2730 / 38760)  # symmetric margins: twice the tail
    assert stats.fisher_win_test(5, 10, 1, 10, "less") > 0.9
    assert stats.fisher_win_test(0, 0, 3, 10) == 1.0
    with pytest.raises(ValueError):
        stats.fisher_win_test(11, 10, 3, 10)
    with pytest.raises(ValueError):
        stats.fisher_win_test(1, 10, 3, 10, "lower")


def test_margin_tests_match_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [30.5, 41.5, 12.5, 55.5, 38.5], [20.5, 18.5, 33.5, 9.5, float("nan")]
    t, p = stats.welch_t_test(a, b, "greater")
    ref = scipy_stats.ttest_ind(a, b[:4], equal_var=False, alternative="greater")
    assert (t, p) == pytest.approx((ref.statistic, ref.pvalue))
    u, p = stats.mann_whitney_test(a, b, "greater")
    ref = scipy_stats.mannwhitneyu(a, b[:4], alternative="greater", method="asymptotic")
    assert (u, p) == pytest.approx((ref.statistic, ref.pvalue))
    assert u == 16  # pairs with a_i > b_j, by hand: 3 + 4 + 1 + 4 + 4
    assert all(math.isnan(v) for v in stats.welch_t_test([1.0], b))
    assert all(math.isnan(v) for v in stats.mann_whitney_test([], b))


def test_holm_and_benjamini_hochberg_hand_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, max(0.06, 0.04).
    assert stats.holm_correction(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: 4p/rank = 0.02, 0.02, 0.04, 0.04, then running minimum from the top.
    assert stats.benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    holm = stats.holm_correction([0.5, float("nan"), 0.4])
    assert holm[0] == pytest.approx(0.8) and math.isnan(holm[1]) and holm[2] == pytest.approx(0.8)
    assert stats.benjamini_hochberg([0.5, float("nan"), 0.4]) == pytest.approx([0.5, math.nan, 0.5], nan_ok=True)
    assert stats.holm_correction([0.9, 0.8]) == [1.0, 1.0]
    assert stats.holm_correction([]) == [] and stats.benjamini_hochberg([]) == []


def test_power_arcsine_known_values():
    # Cohen's table: h = 0.2, two-sided alpha 0.05, power 0.8 -> 392 per group (393 rounded up).
    rate = math.sin(math.asin(math.sqrt(0.5)) - 0.1) ** 2  # 2 asin sqrt(0.5) - 2 asin sqrt(rate) = 0.2
    assert stats.games_per_arm_needed(0.5, rate) == 393
    assert stats.games_per_arm_needed(0.5, rate, alternative="less") == math.ceil(2 * (1.6449 + 0.8416) ** 2 / 0.04)
    # The inverse: with 393 games per arm the detectable rate is just beyond `rate`.
    assert stats.detectable_win_rate(392.4, 0.5) == pytest.approx(rate, abs=1e-4)
    # 40 games per arm at a 42.5% baseline: h = 2.8016 * sqrt(2/40) = 0.6265.
    lower = stats.detectable_win_rate(40, 0.425)
    assert lower == pytest.approx(math.sin(math.asin(math.sqrt(0.425)) - 0.6265 / 2) ** 2, abs=1e-4)
    assert 0.14 < lower < 0.16  # a 27.6-point loss from 42.5%
    assert math.isnan(stats.detectable_win_rate(40, 0.975, direction="higher"))
    assert stats.detectable_win_rate(40, 0.975) < 0.975
    with pytest.raises(ValueError):
        stats.games_per_arm_needed(0.3, 0.3)


def test_detectable_paired_shift_has_its_power_by_simulation():
    n = 120
    shift = stats.detectable_paired_shift(n, alternative="greater")
    assert shift == pytest.approx(0.232, abs=0.002)
    assert stats.detectable_paired_shift(n, sd=10.0, alternative="greater") == pytest.approx(10 * shift)
    assert stats.detectable_paired_shift(n) > shift  # two-sided asks for more
    rng = np.random.default_rng(0)
    diffs = rng.normal(shift, 1.0, size=(800, n))
    power = np.mean(scipy.stats.wilcoxon(diffs, axis=1, alternative="greater").pvalue < 0.05)
    assert 0.75 < power < 0.85
    with pytest.raises(ValueError, match="n=1"):
        stats.detectable_paired_shift(1)


def test_detectable_mean_difference():
    d = stats.detectable_mean_difference(20.0, 40, 20.0, 40)
    assert d == pytest.approx(2.8016 * 20 * math.sqrt(2 / 40), rel=1e-4)
    assert stats.detectable_mean_difference(20.0, 40, 20.0, 40, alternative="greater") < d
    t = stats.detectable_mean_difference(100.0, 2, 100.0, 2, df=2)  # (t_.975 + t_.8 at 2 df) * 100
    assert t == pytest.approx((4.3027 + 1.0607) * 100, rel=1e-3)


def test_equivalence_to_half():
    scipy_stats = pytest.importorskip("scipy.stats")
    p = stats.equivalence_to_half(28, 64, 0.1)
    lo = scipy_stats.binomtest(28, 64, 0.4, alternative="greater").pvalue
    hi = scipy_stats.binomtest(28, 64, 0.6, alternative="less").pvalue
    assert p == pytest.approx(max(lo, hi)) and p > 0.05
    assert stats.equivalence_to_half(500, 1000, 0.05) < 0.001
    assert stats.equivalence_to_half(8, 16, 0.1) > 0.25  # 16 games at exactly 50% show nothing
    with pytest.raises(ValueError):
        stats.equivalence_to_half(5, 10, 0.5)
